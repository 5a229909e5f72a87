#!/bin/sh
# intermediates.sh — `graphlab run --compare B --intermediates` and `--save-tensors`
# through the real program: ref and dnnl agree tensor by tensor on the examples, the
# report has its summary, divergence line and table, saved tensors read back (through
# `graphlab run --data`, and through python onnx when $GL_PYTHON has it), and misuse
# exits 2. That a divergence is found at the right node is test_intermediates.c's job: the
# command line has no way to corrupt a run.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples"
PY="${GL_PYTHON:-}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glinter.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run ARGS...: sets rc, out (stdout file), err (stderr file)
run() {
    "$GL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# Table rows: a number, then a space or '!'.
rows() { grep -cE '^ +[0-9]+ [ !] ' "$tmp/out"; }

conv="$EX/conv_nhwc/model.onnx"
tb="$EX/transformer_block/model.onnx"
tiny="$EX/tiny_if/model.onnx"

if "$GL" run "$conv" --backend dnnl >/dev/null 2>&1; then
    other=dnnl
else
    other=ref
    diag "built without oneDNN: comparing ref with ref"
fi

# --- two backends agree, tensor by tensor ----------------------------------------------------
run run "$conv" --data "$EX/conv_nhwc/test_data_set_0" --compare $other --intermediates
check "conv_nhwc ref vs $other: exit 0" [ "$rc" -eq 0 ]
summary="^intermediates: $other vs ref: 14 tensors compared (rtol 0.001, atol 0.0001), 0 differ"
check "...the summary line counts every node output" grep -q "$summary" "$tmp/out"
check "...no divergence" grep -qx "no divergence: every tensor within tolerance" "$tmp/out"
check "...a header and 14 rows (at most 30 shown: all of them)" \
    sh -c "grep -q '^ *# .*max_abs .*max_rel .*nmse .*over .*nan/inf .*worst at' '$tmp/out' &&
           [ $(rows) -eq 14 ]"
first="'x_nchw' float\[1,3,32,32\]  Transpose 'input_to_nchw'"
check "...rows in the order the nodes ran" \
    sh -c "grep -E '^ +1 ' '$tmp/out' | grep -q \"$first\" &&
           grep -E '^ +14 ' '$tmp/out' | grep -q \"'features' .*(graph output)\""
check "...the outputs are compared as before" \
    grep -q "^features \[$other vs ref\]: .*: ok" "$tmp/out"
[ "$rc" -eq 0 ] || diag "$(cat "$tmp/err" "$tmp/out")"

# With no tolerance at all, dnnl's Conv rounds differently from ours: the first
# divergence is the first Conv (the Transpose before it moves bytes exactly), and the
# graph output differs too.
if [ "$other" = dnnl ]; then
    run run "$conv" --data "$EX/conv_nhwc/test_data_set_0" --compare dnnl --intermediates \
        --rtol 0 --atol 0
    check "zero tolerance: exit 1 (the graph output differs)" [ "$rc" -eq 1 ]
    first="^first divergence: node 'conv1' \(Conv\) output 0 'conv1_out' float\[1,8,32,32\]: "
    worst=".* over tolerance; worst element \[[0-9,]+\] \(flat [0-9]+\): [-0-9.e]+ \(dnnl\) vs "
    check "...the first divergence is the first Conv, with its worst element" \
        grep -qE "$first$worst" "$tmp/out"
    check "...the rows before it agree, it and the rows after are marked" \
        sh -c "grep -qE '^ +1   .*x_nchw' '$tmp/out' && grep -qE '^ +2 ! .*conv1_out' '$tmp/out'"
else
    skip "no oneDNN: no second implementation to part ways with"
fi

run run "$tb" --data "$EX/transformer_block/test_data_set_0" --compare $other --intermediates
check "transformer_block: exit 0, no divergence" \
    sh -c "[ $rc -eq 0 ] && grep -q '^no divergence' '$tmp/out'"
check "...57 tensors: the first 20 and the 10 worst of the rest" \
    sh -c "grep -q '57 tensors compared' '$tmp/out' && [ $(rows) -eq 30 ] &&
           grep -q '^  \.\.\. 37 more; the 10 worst of them:' '$tmp/out' &&
           grep -q -- '--all-tensors' '$tmp/out'"
run run "$tb" --data "$EX/transformer_block/test_data_set_0" --compare $other --intermediates \
    --all-tensors
check "--all-tensors: all 57 rows" sh -c "[ $rc -eq 0 ] && [ $(rows) -eq 57 ]"

run run "$tiny" --data "$EX/tiny_if/test_data_set_0" --compare $other --intermediates --all-tensors
check "tiny_if: exit 0" [ "$rc" -eq 0 ]
check "...function body tensors keyed by their call" \
    grep -q "'scale_shift::scaled' float\[2,3\]  Mul 'scale_shift::Mul_0'" "$tmp/out"
check "...If and Loop count as one node each, their bodies are not kept" \
    sh -c "grep -q \"'branch_out' .* If 'choose'\" '$tmp/out' && ! grep -q then_out '$tmp/out' &&
           ! grep -q acc_out '$tmp/out'"

# --- saved tensors read back ---------------------------------------------------------------
data="$EX/conv_nhwc/test_data_set_0"
run run "$conv" --data "$data" --save-tensors "$tmp/all"
check "--save-tensors DIR: exit 0" [ "$rc" -eq 0 ]
check "...14 tensor files and index.json" \
    sh -c "[ $(ls "$tmp/all" 2>/dev/null | grep -c '\.pb$') -eq 14 ] &&
           [ -s '$tmp/all/index.json' ]"
# file_of DIR NAME: the file index.json of DIR gives tensor NAME (entries list "name"
# before "file")
file_of() {
    sed -n "/\"name\": \"$2\"/{n;s/.*\"file\": \"\(.*\)\",/\1/p;}" "$1/index.json"
}
f=$(file_of "$tmp/all" conv1_out)
check "...safe file names with the save's id, the index maps names to them" \
    sh -c "[ -s '$tmp/all/$f' ] && echo '$f' | grep -qE '^0002_conv1_out\.[A-Za-z0-9]{6}\.pb\$'"
run run "$conv" --data "$data" --save-tensors "$tmp/new/parents/all"
check "--save-tensors creates the missing parents, as export -d" \
    sh -c "[ $rc -eq 0 ] && [ -s '$tmp/new/parents/all/index.json' ]"
: >"$tmp/plainfile"
run run "$conv" --data "$data" --save-tensors "$tmp/plainfile"
check "--save-tensors onto a file: exit 2, naming it" \
    sh -c "[ $rc -eq 2 ] && grep -q 'plainfile: exists and is not a folder' '$tmp/err'"
# The graph output's file as an expected output: the same run reproduces it exactly.
mkdir -p "$tmp/ds"
cp "$data/input_0.pb" "$tmp/ds/input_0.pb"
cp "$tmp/all/$(file_of "$tmp/all" features)" "$tmp/ds/output_0.pb"
run run "$conv" --data "$tmp/ds" --rtol 0 --atol 0
check "a saved tensor loads as test data (--data) and matches exactly" \
    sh -c "[ $rc -eq 0 ] && grep -q '^features: max_abs 0,' '$tmp/out'"

run run "$conv" --data "$data" --compare $other --intermediates --save-tensors "$tmp/some" \
    conv1_out features
check "--save-tensors DIR NAME...: exit 0, only those" \
    sh -c "[ $rc -eq 0 ] && [ $(ls "$tmp/some" 2>/dev/null | wc -l) -eq 3 ] &&
           [ -s '$tmp/some/$(file_of "$tmp/some" conv1_out)' ] &&
           [ -s '$tmp/some/$(file_of "$tmp/some" features)' ]"
check "...with --intermediates the report is printed too" grep -q "^no divergence" "$tmp/out"

run run "$conv" --data "$data" --save-tensors "$tmp/bad" conv1_out no_such_tensor
check "an unknown NAME: exit 2, one line naming it, nothing written" \
    sh -c "[ $rc -eq 2 ] && [ $(wc -l <"$tmp/err") -eq 1 ] &&
           grep -q \"'no_such_tensor'\" '$tmp/err' &&
           [ \$(ls -A '$tmp/bad' 2>/dev/null | wc -l) -eq 0 ]"

if [ -n "$PY" ] && "$PY" -c 'import onnx, numpy' 2>/dev/null; then
    check "python onnx reads every file; names, dtypes and dims agree with index.json" \
        "$PY" - "$tmp/all" <<'EOF'
import json, os, sys
import onnx
from onnx import numpy_helper
d = sys.argv[1]
index = json.load(open(os.path.join(d, "index.json")))
assert len(index["tensors"]) == 14, len(index["tensors"])
for e in index["tensors"]:
    t = onnx.TensorProto()
    t.ParseFromString(open(os.path.join(d, e["file"]), "rb").read())
    a = numpy_helper.to_array(t)
    assert t.name == e["name"], (t.name, e["name"])
    assert list(a.shape) == e["dims"], (e["name"], a.shape, e["dims"])
    assert str(a.dtype) == {"float": "float32", "int64": "int64"}[e["dtype"]], e
EOF
else
    skip "no python with onnx (GL_PYTHON='$PY')"
fi

# --- fused against unfused, at the fused groups' boundaries ----------------------------------
if [ "$other" = dnnl ]; then
    run run "$conv" --passes all --backend unfused --compare fused --intermediates
    check "conv_nhwc unfused vs fused: exit 0" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err")"
    # two groups: conv1 + relu1 (FusedNhwcConvRelu_1), conv2 + relu2 (FusedNhwcConvRelu_2)
    check "...the runs named fused and unfused" \
        grep -q "^intermediates: fused vs unfused: 6 tensors compared .*, 0 differ" "$tmp/out"
    check "...the members inside the groups (conv1, conv2) are not compared" \
        grep -q "^not compared: 2 tensors kept by unfused only, 0 by fused only" "$tmp/out"
    check "...the boundary rows name their groups" \
        sh -c "grep -q \"'relu1'  (fused group 'FusedNhwcConvRelu_1' in fused)\$\" '$tmp/out' &&
               grep -q \"'relu2'  (fused group 'FusedNhwcConvRelu_2' in fused)\$\" '$tmp/out'"
    check "...no divergence" grep -qx "no divergence: every tensor within tolerance" "$tmp/out"
    run run "$conv" --passes all --backend fused --compare unfused --intermediates
    check "conv_nhwc fused vs unfused: exit 0, the groups in the fused run's rows" \
        sh -c "[ $rc -eq 0 ] && grep -q \"'relu1_out0' .* 'FusedNhwcConvRelu_1'\$\" '$tmp/out' &&
               grep -q \"'relu2_out0' .* 'FusedNhwcConvRelu_2'\$\" '$tmp/out'"
else
    skip "fused and unfused: built without oneDNN"
fi

# --- misuse: exit 2 -------------------------------------------------------------------------
for args in "run $conv --intermediates" "run $conv --compare ref --all-tensors" \
            "run $conv extra_name" "run $conv --save-tensors" "run $conv --passes none --compare unfused" \
            "run $conv --passes all --backend fused --compare fused"; do
    # shellcheck disable=SC2086
    run $args
    check "exit 2: graphlab $args" sh -c "[ $rc -eq 2 ] && [ -s '$tmp/err' ]"
done

# --- the model corpora: in-tree, and shared when there ----------------------------------------
# agree NAME WHAT ARGS...: run --intermediates on model NAME with its data set: exit 0 and no
# divergence (a shared model's absence is no test: the in-tree one stands for it)
agree() {
    d=$(model_dir "$1") || return 0
    what=$2
    shift 2
    if [ "$other" != dnnl ]; then
        skip "$what: no oneDNN"
        return
    fi
    run run "$d/model.onnx" --data "$d/test_data_set_0" "$@" --intermediates
    check "$what: exit 0, no divergence" sh -c "[ $rc -eq 0 ] && grep -q '^no divergence' '$tmp/out'"
    [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err"; head -n 40 "$tmp/out")"
}
agree squeezenet_mini "squeezenet_mini ref vs dnnl" --compare dnnl
agree mobilenet_mini "mobilenet_mini unfused vs fused" --passes all --backend unfused --compare fused
agree squeezenet1_1 "squeezenet1_1 ref vs dnnl" --compare dnnl
agree mobilenet_v2 "mobilenet_v2 unfused vs fused" --passes all --backend unfused --compare fused

tap_done
