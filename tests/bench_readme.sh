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
ROWS

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
