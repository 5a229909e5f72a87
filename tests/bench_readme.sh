#!/bin/sh
# bench_readme.sh — bench/README.md lists every benchmark in bench/ (bench_*.c, *.sh,
# *.js, *.py) in its table, so none is there without a word on what it measures and
# how to run it; the shell scripts parse, and the usage errors of vs_ort.sh and
# rebatch.py (issue 22) are refused with exit 2 before anything is timed or written.
. "$GL_SRCDIR/tests/tap.sh"
readme="$GL_SRCDIR/bench/README.md"
n=0
for f in "$GL_SRCDIR"/bench/bench_*.c "$GL_SRCDIR"/bench/*.sh "$GL_SRCDIR"/bench/*.js \
         "$GL_SRCDIR"/bench/*.py; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    n=$((n + 1))
    check "bench/README.md lists $name" grep -q "^| .*\`$name\`.* |" "$readme"
done
check "bench/ has benchmarks to list ($n)" [ "$n" -gt 0 ]
for f in "$GL_SRCDIR"/bench/*.sh; do
    check "$(basename "$f") parses (sh -n)" sh -n "$f"
done

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
# exits CODE PATTERN COMMAND...: COMMAND exits with CODE and says PATTERN (stdout+stderr)
exits() {
    code=$1 pattern=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" -eq "$code" ] && grep -q "$pattern" "$tmp/out" ||
        { diag "exit $rc: $(head -3 "$tmp/out")"; return 1; }
}
vs_ort="$GL_SRCDIR/bench/vs_ort.sh"
# environment | exit | what it says; the default corpus is a folder that does not exist,
# so that no row can start a benchmark
while IFS='|' read -r env code pattern; do
    check "vs_ort.sh with $env: exit $code, '$pattern'" \
        exits "$code" "$pattern" env GL_SHARED_MODELS=/nonexistent/shared $env "$vs_ort" \
        "$GL_BUILDDIR"
done <<'ROWS'
BATCH=x|2|BATCH must be a positive number, not 'x'
BATCH=08|2|BATCH must be a positive number
CORPORA=/nonexistent/models|0|skipped: no model corpus at /nonexistent/models
BATCH=8 CORPORA=/nonexistent/models|0|no model corpus at /nonexistent/models_b8
RECHECK=abc|2|RECHECK must be a ratio (1.10) or off, not 'abc'
RECHECK=1.1.0|2|RECHECK must be a ratio
RECHECK_ROUNDS=0|2|RECHECK_ROUNDS must be a positive number, not '0'
ROWS

# The re-check (vs_ort.sh's RECHECK) on two in-tree examples, with ONNX Runtime where it is
# installed: a threshold under every ratio re-measures each model once more and says so,
# and counts them; RECHECK=off re-measures none. One timed run each: nothing is judged
# by its time.
ort="${GL_ORT_NODE:-${HOME:-/tmp}/.cache/graphlab-ort}"
if [ -f "$ort/node_modules/onnxruntime-node/package.json" ] && command -v node >/dev/null; then
    for rc in 0.01 off; do
        env ORT_DIR="$ort" CORPORA="$GL_SRCDIR/examples" MODELS="conv_nhwc transformer_block" \
            FUSED_ONLY=1 ROUNDS=1 RUNS=1 WARMUP=0 RECHECK=$rc RECHECK_ROUNDS=1 "$vs_ort" \
            "$GL_BUILDDIR" >"$tmp/recheck_$rc" 2>&1
        check "vs_ort.sh RECHECK=$rc: exit 0" [ $? -eq 0 ]
    done
    check "RECHECK=0.01: both examples re-checked" \
        [ "$(grep -c "^re-checked at once: \(conv_nhwc\|transformer_block\) [0-9.]*x -> [0-9.]*x (median of 1)$" \
            "$tmp/recheck_0.01")" -eq 2 ]
    check "RECHECK=0.01: both still above it" grep -q "^above 0.01x after the re-check: 2$" \
        "$tmp/recheck_0.01"
    check "RECHECK=off: none re-checked" [ "$(grep -c "re-check" "$tmp/recheck_off")" -eq 0 ]
else
    skip "vs_ort.sh's re-check: no onnxruntime-node in $ort (GL_ORT_NODE)"
fi

rebatch="$GL_SRCDIR/bench/rebatch.py"
if [ -n "${GL_PYTHON:-}" ] && "$GL_PYTHON" -c 'import numpy, onnx' 2>/dev/null; then
    mkdir -p "$tmp/src"
    check "rebatch.py without a corpus: usage, exit 2" exits 2 "SRC \[OUT\]" "$GL_PYTHON" "$rebatch"
    check "rebatch.py --batch 1: usage, exit 2" exits 2 "SRC \[OUT\]" "$GL_PYTHON" "$rebatch" \
        --batch 1 "$tmp/src"
    check "rebatch.py SRC SRC: refused, exit 2" exits 2 "is SRC" "$GL_PYTHON" "$rebatch" \
        "$tmp/src" "$tmp/src/"
else
    skip "rebatch.py: no python3 with numpy and onnx (GL_PYTHON)"
fi
tap_done
