#!/bin/sh
# memory_plan.sh — the memory-plan pass through the real program: `optimize --json`'s
# "memory_plan" against its contract (memory_plan_check.py) on the examples and on every
# model of the corpora (tests/corpus.sh: in-tree, and shared when there) with the goal
# planned peak <= live max + 10%;
# `optimize --explain` prints the lifetime table, the summary and the executor measured
# with and without the plan; `run` with the default pipeline (the plan used) still
# computes each example's expected outputs.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples"
CHECK="$GL_SRCDIR/tests/memory_plan_check.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glmemplan.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
py() { [ -n "${GL_PYTHON:-}" ] && "$GL_PYTHON" -c 'import json' 2>/dev/null; }

# plan_json NAME MODEL: optimize --json, its memory_plan checked (ratio at most 1.1)
plan_json() {
    if ! "$GL" optimize "$2" -o "$tmp/out.onnx" --json >"$tmp/plan.json" 2>"$tmp/err"; then
        not_ok "$1: optimize --json"
        sed 's/^/# /' "$tmp/err"
        return
    fi
    if ! py; then
        check "$1: --json has a memory_plan" grep -q '"memory_plan": {' "$tmp/plan.json"
        return
    fi
    if "$GL_PYTHON" "$CHECK" "$tmp/plan.json" 1.1 >"$tmp/check" 2>&1; then
        ok "$1: memory_plan as its contract says, planned peak <= live max + 10% ($(head -1 "$tmp/check"))"
    else
        not_ok "$1: memory_plan"
        sed 's/^/# /' "$tmp/check"
    fi
}

for m in "$EX"/*/model.onnx; do
    plan_json "$(basename "$(dirname "$m")")" "$m"
done

C="$EX/conv_nhwc/model.onnx"
"$GL" optimize "$C" -o "$tmp/c.onnx" --explain >"$tmp/explain" 2>&1
check "--explain: the memory-plan step's decisions" grep -q '^16-memory-plan: ' "$tmp/explain"
check "--explain: an in-place choice with its reason" \
    grep -q "APPLIED  in-place: Mul 'channel_scale' writes 'channel_scale_out0_1' over its input 'relu1_out0'" "$tmp/explain"
check "--explain: a refusal with its reason" \
    grep -q "refused  in-place: .*the fused group has no sum post-op residual" "$tmp/explain"
check "--explain: the lifetime table's header" \
    grep -qE '^  tensor +bytes +first +last +offset +shares$' "$tmp/explain"
check "--explain: a row in place of its input" \
    grep -qE '^  channel_scale_out0_1 +32768 +1 +2 +0  in place of relu1_out0$' "$tmp/explain"
check "--explain: what is not in the arena" \
    grep -q 'graph inputs, outputs and initializers are not in the arena' "$tmp/explain"
check "--explain: planned vs naive vs live max" \
    grep -q '^peak bytes: planned 49152, naive 147456 (every tensor its own buffer), live max 49152' "$tmp/explain"
check "--explain: measured with and without the plan" \
    grep -qE '^measured on the reference executor .*high-water mark [0-9]+ bytes without the plan; with it the arena 49152 bytes, 5 outputs placed in it, 0 allocated apart$' "$tmp/explain"
"$GL" optimize "$C" -o "$tmp/c.onnx" --passes toposort,shape-inference --json >"$tmp/none.json" 2>&1
check "--json without the pass: memory_plan is null" grep -q '"memory_plan": null' "$tmp/none.json"

for d in "$EX"/*/; do
    [ -d "$d/test_data_set_0" ] || continue
    check "run --passes all (the plan used) on $(basename "$d"): expected outputs" \
        "$GL" run "$d/model.onnx" --passes all --data "$d/test_data_set_0" --backend ref
done

for m in "$TREE_MODELS"/*/model.onnx "$SHARED_MODELS"/*/model.onnx; do
    [ -f "$m" ] || continue
    plan_json "$(basename "$(dirname "$m")")" "$m"
done
tap_done
