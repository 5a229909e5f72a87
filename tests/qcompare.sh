#!/bin/sh
# qcompare.sh — a quantized (QDQ) model through the real program (issue 21, points 4 and
# 5), on tests/data/qdq_mlp (make_qdq_mlp.py: its pair on h2 is calibrated 24 times too
# coarse on purpose):
#   - its outputs (a dequantized float and the uint8 integers) are compared in steps of
#     their scale: the data set one step off passes with the default --steps 1, the one
#     two steps off fails, and passes with --steps 2 (a float --atol passed neither);
#   - `--compare float --intermediates` lists each Q/DQ pair's error against the model
#     without its pairs, worst first, and names 'h2' as the pair that loses most and the
#     first whose error jumps; the same on oneDNN; a model without pairs is refused.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
Q="$GL_SRCDIR/tests/data/qdq_mlp"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glqcmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run ARGS...: sets rc; stdout in $tmp/out, stderr in $tmp/err
run() {
    "$GL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# --- tolerances in steps ----------------------------------------------------------------------
run run "$Q/model.onnx" --data "$Q/test_data_set_0"
check "exact outputs: exit 0" [ "$rc" -eq 0 ]
check "...the dequantized output is compared in steps" \
    grep -qx 'y: max_abs 0, max_steps 0, nmse 0, 0 over 1 step: ok' "$tmp/out"

run run "$Q/model.onnx" --data "$Q/test_data_set_1"
check "one step off (a flipped rounding tie): exit 0" [ "$rc" -eq 0 ]
check "...the float output within 1 step" \
    grep -qE '^y: max_abs [0-9.e-]+, max_steps 1, nmse [0-9.e-]+, 0 over 1 step: ok$' "$tmp/out"
check "...the uint8 output within 1 step" \
    grep -qE '^y_q: max_abs [0-9.e-]+, max_steps 1, nmse [0-9.e-]+, 0 over 1 step: ok$' "$tmp/out"

run run "$Q/model.onnx" --data "$Q/test_data_set_2"
check "two steps off: exit 1" [ "$rc" -eq 1 ]
check "...both outputs one element over 1 step" [ "$(grep -c ', 1 over 1 step: MISMATCH$' "$tmp/out")" -eq 2 ]

run run "$Q/model.onnx" --data "$Q/test_data_set_2" --steps 2
check "two steps off with --steps 2: exit 0" [ "$rc" -eq 0 ]
check "...0 over 2 steps" [ "$(grep -c ', 0 over 2 steps: ok$' "$tmp/out")" -eq 2 ]

run run "$Q/model.onnx" --data "$Q/test_data_set_2" --steps 0.5
check "--steps 0.5: one step is over" [ "$rc" -eq 1 ]
run run "$Q/model.onnx" --steps=-1
check "--steps -1: exit 2" [ "$rc" -eq 2 ]
check "...naming the value" grep -q "steps '-1' is not a non-negative number" "$tmp/err"

# profile compares the outputs with the data set by the same rule
run profile "$Q/model.onnx" --data "$Q/test_data_set_1" --backends ref --reps 1 --warmup 0
check "profile, one step off: exit 0" [ "$rc" -eq 0 ]
run profile "$Q/model.onnx" --data "$Q/test_data_set_2" --backends ref --reps 1 --warmup 0
check "profile, two steps off: exit 1" [ "$rc" -eq 1 ]

# --- where the int8 error comes from ---------------------------------------------------------
run run "$Q/model.onnx" --data "$Q/test_data_set_0" --compare float --intermediates
check "--compare float --intermediates: exit 0 (the error is measured, not a failure)" \
    [ "$rc" -eq 0 ]
check "...the outputs against the float run, in steps" \
    grep -qE '^y \[ref vs float\]: max_abs .* max_steps .*: quantization error$' "$tmp/out"
check "...the summary counts the 4 pairs on activations" \
    grep -q '^quantization error: ref vs float (.*): 4 Q/DQ pairs on activations, 4 compared$' "$tmp/out"
check "...h2 loses most" \
    grep -q "^loses most: 'h2' (QuantizeLinear 'quant_h2'): adds nmse" "$tmp/out"
check "...h2 is the first jump, fed by h1" \
    grep -qE "^first jump: 'h2' \(QuantizeLinear 'quant_h2'\): nmse .*x the .* of the pairs feeding it \('h1'\)$" "$tmp/out"
check "...a row per pair" [ "$(grep -cE "^ +[0-9]+ [ !] .*\(QuantizeLinear '" "$tmp/out")" -eq 4 ]
check "...worst first: the output's pair, accumulating every error, first" \
    grep -qE "^ +1   .*'y_mm' \(QuantizeLinear 'quant_y'\)$" "$tmp/out"
check "...only h2 marked as a jump" [ "$(grep -cE '^ +[0-9]+ ! ' "$tmp/out")" -eq 1 ]
check "...x is fed by no pair" grep -qE "^ +4 .* - +'x' \(QuantizeLinear 'quant_x'\)$" "$tmp/out"

if "$GL" run "$Q/model.onnx" --backend dnnl >/dev/null 2>&1; then
    run run "$Q/model.onnx" --data "$Q/test_data_set_0" --backend dnnl --compare float --intermediates
    check "on dnnl: exit 0" [ "$rc" -eq 0 ]
    check "...h2 loses most there too" grep -q "^loses most: 'h2'" "$tmp/out"
else
    skip "built without oneDNN"
fi

run run "$GL_SRCDIR/tests/data/good_relu.onnx" --compare float
check "a float model: exit 2" [ "$rc" -eq 2 ]
check "...one line saying it has no pair" \
    grep -q "no QuantizeLinear -> DequantizeLinear pair on an activation" "$tmp/err"
check "...and nothing else" [ "$(wc -l <"$tmp/err")" -eq 1 ]

tap_done
