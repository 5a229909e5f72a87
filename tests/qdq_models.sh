#!/bin/sh
# qdq_models.sh — the in-tree QDQ test models (tests/data/qdq_models, issue 21): each runs
# on the reference kernels within 3 steps of its output scale of ONNX Runtime's outputs
# (the data set's output_N.pb; ORT ran its int8 kernels), runs on `--passes all --backend
# fused`, and our quantizer (tests/data/quantize.py) makes the same model again from its
# float source: the same node count and the same QuantizeLinear/DequantizeLinear counts.
# The fused run (the qdq pass's groups on oneDNN's int8 kernels) agrees with the reference
# run of the same QDQ graph within one step of each output's scale (README: "Quantized
# models: tolerances"), and its plan runs the groups as int8 kernels: every QDQ unit of
# these models becomes a group oneDNN takes (on a CPU with VNNI; without it the groups run
# their bodies and the plan says why).
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
QDQ="$GL_SRCDIR/tests/data/qdq_models"
FLOAT="$GL_SRCDIR/tests/data/models"
QUANTIZE="$GL_SRCDIR/tests/data/quantize.py"
# the bound against ORT, in steps of the output's scale
STEPS=3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glqdq.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# info_value DIR KEY: the first number after "KEY": in DIR/info.json
info_value() {
    sed -n "s/^ *\"$2\": *\([-0-9.eE+]*\).*/\1/p" "$1/info.json" | head -n 1
}
# max_abs FILE: the max_abs of the first output line of a run
max_abs() {
    sed -n 's/^[^ ]*: max_abs \([^,]*\),.*/\1/p' "$1" | head -n 1
}
# q_count MODEL OP: how many OP nodes MODEL has
q_count() {
    "$GL_PYTHON" -c "import onnx, sys
print(sum(n.op_type == sys.argv[2] for n in onnx.load(sys.argv[1]).graph.node))" "$1" "$2"
}
python_ok() {
    [ -n "${GL_PYTHON:-}" ] && "$GL_PYTHON" -c 'import onnx, numpy' 2>/dev/null
}

# oneDNN 2.6's int8 kernels are exact only with VNNI (src/exec/dnnl/dn_ctx.c)
VNNI=no
grep -qE 'avx512_vnni|avx_vnni' /proc/cpuinfo 2>/dev/null && VNNI=yes
# ...and only when ONEDNN_MAX_CPU_ISA leaves oneDNN an ISA that has them (AVX2 on an
# AVX-512 machine stands in for an AVX2-only one)
case $(printf '%s' "${ONEDNN_MAX_CPU_ISA:-ALL}" | tr '[:lower:]' '[:upper:]') in
ALL | *VNNI* | *BF16* | *AMX* | *FP16*) ;;
*) VNNI=no ;;
esac

count=0
for dir in "$QDQ"/*_qdq/; do
    [ -f "$dir/model.onnx" ] || continue
    count=$((count + 1))
    name=$(basename "$dir")
    data="$dir/test_data_set_0"
    scale=$(info_value "$dir" scale)
    atol=$(awk -v s="$scale" -v k="$STEPS" 'BEGIN { printf "%.9g", s * k }')

    # the reference run against ORT, within STEPS output steps
    "$GL" run "$dir/model.onnx" --data "$data" --backend ref --rtol 0 --atol "$atol" \
        >"$tmp/ref.out" 2>"$tmp/ref.err"
    rc=$?
    check "$name: ref run within $STEPS steps of scale $scale of ORT's outputs (exit $rc)" \
        [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || diag "$(cat "$tmp/ref.out" "$tmp/ref.err")"
    diag "$name: ref vs ORT max_abs $(max_abs "$tmp/ref.out")" \
         "= $(awk -v m="$(max_abs "$tmp/ref.out")" -v s="$scale" \
              'BEGIN { printf "%.2f", m / s }') steps of $scale"

    # the fused run loads and runs (0: within the default tolerance, 1: over it)
    "$GL" run "$dir/model.onnx" --data "$data" --passes all --backend fused \
        >"$tmp/fused.out" 2>"$tmp/fused.err"
    rc=$?
    check "$name: --passes all --backend fused runs (exit $rc)" \
        sh -c "[ $rc -le 1 ] && grep -q ': max_abs ' '$tmp/fused.out'"
    [ "$rc" -le 1 ] || diag "$(cat "$tmp/fused.out" "$tmp/fused.err")"
    diag "$name: fused vs ORT max_abs $(max_abs "$tmp/fused.out")"

    # the int8 run against the reference run of the same graph, in steps (on seeded
    # inputs: --data would also judge the outputs against ORT's, by float tolerances where
    # an output is no quantized value)
    "$GL" run "$dir/model.onnx" --passes all --backend fused --compare ref \
        --plan >"$tmp/vsref.out" 2>"$tmp/vsref.err"
    rc=$?
    check "$name: fused within 1 step of the reference run (exit $rc)" \
        sh -c "[ $rc -eq 0 ] && grep -q 'ref vs fused\]: .*: ok' '$tmp/vsref.out'"
    [ "$rc" -eq 0 ] || diag "$(cat "$tmp/vsref.out" "$tmp/vsref.err")"
    if [ "$VNNI" = yes ]; then
        check "$name: the plan runs QDQ groups on oneDNN's int8 kernels" \
            sh -c "grep -q '^Q[A-Za-z]*_[0-9]* .* int8 ' '$tmp/vsref.out' &&
                   ! grep -q '^Q[A-Za-z]*_[0-9]* .*body' '$tmp/vsref.out'"
    else
        skip "$name: int8 kernels: no VNNI on this CPU"
    fi

    # the quantizer makes the same model from the float one, with the same options
    if ! python_ok; then
        skip "$name: quantizer round trip: no python with onnx and numpy (${GL_PYTHON:-none})"
        continue
    fi
    float="$FLOAT/$(sed -n 's/^ *"source": "\([^"]*\)".*/\1/p' "$dir/info.json")"
    options=$("$GL_PYTHON" -c "import json, sys
print(' '.join(json.load(open(sys.argv[1]))['quantize_options']))" "$dir/info.json")
    # shellcheck disable=SC2086 # options is a list of words
    if "$GL_PYTHON" "$QUANTIZE" "$float/model.onnx" "$tmp/q.onnx" --graphlab "$GL" \
            --calib "$float/test_data_set_0" $options >"$tmp/q.out" 2>&1; then
        for op in QuantizeLinear DequantizeLinear; do
            want=$(info_value "$dir" "$(echo "$op" | sed 's/\([a-z]\)\([A-Z]\)/\1_\2/' |
                                        tr '[:upper:]' '[:lower:]')")
            got=$(q_count "$tmp/q.onnx" "$op")
            check "$name: quantize.py writes $want $op nodes (got $got)" [ "$got" = "$want" ]
        done
        want=$(info_value "$dir" node_count)
        got=$("$GL_PYTHON" -c "import onnx, sys; print(len(onnx.load(sys.argv[1]).graph.node))" \
              "$tmp/q.onnx")
        check "$name: quantize.py writes $want nodes (got $got)" [ "$got" = "$want" ]
    else
        not_ok "$name: quantize.py on $float failed: $(tail -n 1 "$tmp/q.out")"
    fi
done
check "the QDQ models are there ($count)" [ "$count" -ge 6 ]

# --- the quantizer's range rules are ORT's (quant_utils.py) --------------------------------
# each line: what, then the computed values next to the expected ones, "ok" when equal
rules() {
    PYTHONPATH="$GL_SRCDIR/tests/data" "$GL_PYTHON" - <<'PY'
import numpy as np
from quantize import activation_params, quantize_weight
f32 = lambda v: float(np.float32(v))
cases = [  # (what, got, want)
    ("u8 [-1,1]: scale 2/255, zero point round(127.5) = 128 (half to even)",
     activation_params(-1.0, 1.0, False), (f32(2 / 255), 128)),
    ("u8 [0.5,2]: the range takes 0 in: scale 2/255, zero point 0",
     activation_params(0.5, 2.0, False), (f32(2 / 255), 0)),
    ("u8 [-2,-1]: the range takes 0 in: zero point 255",
     activation_params(-2.0, -1.0, False), (f32(2 / 255), 255)),
    ("u8 [0,0]: scale 1, never 0", activation_params(0.0, 0.0, False), (1.0, 0)),
    ("s8 [-1,1]: zero point round(-128 + 127.5) = 0",
     activation_params(-1.0, 1.0, True), (f32(2 / 255), 0)),
    ("s8 [0,1]: zero point -128", activation_params(0.0, 1.0, True), (f32(1 / 255), -128)),
]
q, s = quantize_weight(np.array([[1.0, -4.0], [0.0, 0.0]], np.float32), 0)
cases.append(("int8 weight per row: scales max|w|/127 and 1 for a zero row, values",
              (s.tolist(), q.tolist()), ([f32(4 / 127), 1.0], [[32, -127], [0, 0]])))
q, s = quantize_weight(np.array([[1.0, -4.0], [0.5, 0.0]], np.float32), None)
cases.append(("int8 weight per tensor", (float(s), q.tolist()),
              (f32(4 / 127), [[32, -127], [16, 0]])))
for what, got, want in cases:
    got = tuple(float(g) if isinstance(g, np.floating) else g for g in got)
    print("ok" if got == want else "differ", what, got, want)
PY
}
if python_ok; then
    rules >"$tmp/rules" 2>&1
    while read -r verdict what; do
        check "quantize.py: $what" [ "$verdict" = ok ]
    done <"$tmp/rules"
    check "quantize.py: the rules were checked" [ "$(wc -l <"$tmp/rules")" -eq 8 ]
else
    skip "quantize.py's range rules: no python with onnx and numpy"
fi

# --- the quantizer refuses bad input with one line, exit 2 ---------------------------------
if python_ok; then
    mlp="$FLOAT/mlp_ffn_mini"
    cp "$mlp/model.onnx" "$tmp/same.onnx"
    "$GL_PYTHON" "$QUANTIZE" "$tmp/same.onnx" "$tmp/same.onnx" --calib "$mlp/test_data_set_0" \
        --graphlab "$GL" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "quantize.py onto its input: exit 2 ($rc)" [ "$rc" -eq 2 ]
    check "...one line naming the output" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] &&
        grep -q 'overwrite the input' '$tmp/err'"
    check "...the input unchanged" cmp -s "$tmp/same.onnx" "$mlp/model.onnx"
    "$GL_PYTHON" "$QUANTIZE" "$mlp/model.onnx" "$tmp/x.onnx" --calib "$FLOAT/squeezenet_mini/test_data_set_0" \
        --graphlab "$GL" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "quantize.py with another model's data set: exit 2 ($rc)" [ "$rc" -eq 2 ]
    check "...one line, nothing written" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] &&
        [ ! -e '$tmp/x.onnx' ]"
    [ "$rc" -eq 2 ] || diag "$(cat "$tmp/err")"

    # opset 12: moved to 13 (per-axis DequantizeLinear) when no op changed meaning, else refused
    at_opset_12() {
        "$GL_PYTHON" -c "import onnx, sys
m = onnx.load(sys.argv[1])
m.opset_import[0].version = 12
onnx.save(m, sys.argv[2])" "$1" "$2"
    }
    at_opset_12 "$mlp/model.onnx" "$tmp/mlp12.onnx"
    "$GL_PYTHON" "$QUANTIZE" "$tmp/mlp12.onnx" "$tmp/mlp13.onnx" --calib "$mlp/test_data_set_0" \
        --graphlab "$GL" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "quantize.py on an opset 12 model of unchanged ops: exit 0 ($rc)" [ "$rc" -eq 0 ]
    check "...its output is at opset 13" [ "$("$GL_PYTHON" -c "import onnx, sys
print(onnx.load(sys.argv[1]).opset_import[0].version)" "$tmp/mlp13.onnx")" = 13 ]
    enc="$FLOAT/encoder_op13_mini"
    at_opset_12 "$enc/model.onnx" "$tmp/enc12.onnx"
    "$GL_PYTHON" "$QUANTIZE" "$tmp/enc12.onnx" "$tmp/enc13.onnx" --calib "$enc/test_data_set_0" \
        --graphlab "$GL" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "quantize.py on an opset 12 model with a Softmax: exit 2 ($rc)" [ "$rc" -eq 2 ]
    check "...one line naming Softmax" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] &&
        grep -q 'Softmax' '$tmp/err'"
else
    skip "quantize.py's refusals: no python with onnx and numpy"
fi
tap_done
