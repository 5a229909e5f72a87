#!/bin/sh
# fuzz.sh [-t SECONDS] [-w WORKDIR] [-T TIMEOUT] TARGET... — run each libFuzzer target in
# turn (tests/fuzz/README.md), from the committed seeds and what earlier runs kept, and
# say what each did. `make fuzz-smoke` runs it with -t 60.
#
#   -t SECONDS  each target's time (libFuzzer -max_total_time; default 60)
#   -w WORKDIR  where the grown corpora, the logs and the finds go (default ./fuzz-work):
#               WORKDIR/corpus/NAME/, WORKDIR/NAME.log, WORKDIR/finds/NAME-crash-<sha1>…
#   -T TIMEOUT  seconds one input may take before libFuzzer calls it a hang (default 25:
#               every seed takes well under a second with the sanitizers)
# Environment: GL_SRCDIR (the source tree, for the seeds and the dictionary; default: two
# folders up from this script), FUZZ_FLAGS (more libFuzzer flags, e.g. -jobs=2).
# Exits 1 when any target found something (a crash, a leak, a hang, too much memory).
set -u
secs=60 work=./fuzz-work hang=25
while getopts t:w:T: opt; do
    case $opt in
    t) secs=$OPTARG ;;
    w) work=$OPTARG ;;
    T) hang=$OPTARG ;;
    *) echo "usage: fuzz.sh [-t SECONDS] [-w WORKDIR] [-T TIMEOUT] TARGET..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "fuzz.sh: no target given" >&2; exit 2; }
src=${GL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
seeds=$src/tests/fuzz/seeds
mkdir -p "$work/finds" || exit 2

# The sanitizers' usual reports; leaks of libFuzzer's own are its business (-detect_leaks).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# oneDNN and the reference kernels on one thread: no OpenMP pool per input.
export OMP_NUM_THREADS=1

failed=0
for target in "$@"; do
    name=$(basename "$target")
    mkdir -p "$work/corpus/$name"
    log=$work/$name.log
    # slow-unit-* files (an input over 10 s, libFuzzer's -report_slow_units) are not finds
    before=$(ls "$work/finds" | grep -v -- '-slow-unit-' | grep -c "^$name-")
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
    "$target" "$work/corpus/$name" "$seeds" -dict="$src/tests/fuzz/onnx.dict" \
        -max_total_time="$secs" -timeout="$hang" -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$work/finds/$name-" -print_final_stats=1 ${FUZZ_FLAGS:-} \
        >"$log" 2>&1
    rc=$?
    # the last status line: "#N  cov: C ft: F corp: K/S … exec/s: E" (fork mode: "#N: cov: …
    # exec/s E oom/timeout/crash: …")
    last=$(grep '^#[0-9]*:*[[:space:]]*[A-Z]*[[:space:]]*cov: ' "$log" | tail -n 1)
    runs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    [ -n "$speed" ] || speed=$(echo "$last" | sed -n 's/.*exec\/s:* \([0-9]*\).*/\1/p')
    cov=$(echo "$last" | grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9/a-zA-Z]*')
    finds=$(($(ls "$work/finds" | grep -v -- '-slow-unit-' | grep -c "^$name-") - before))
    slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ] && [ "$finds" -eq 0 ]; then
        verdict=ok
    else
        failed=1
        what=$(grep -m1 -o 'ERROR: libFuzzer: [a-z-]*\|ERROR: [A-Za-z]*Sanitizer: [a-z-]*\|runtime error: .*\|fuzz: .*' "$log")
        file=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
        verdict="FOUND ${what:-exit $rc}: ${file:-$finds new in $work/finds}"
    fi
    echo "$name: ${secs}s, ${runs:-?} runs (${speed:-?}/s), ${cov:-no coverage line}," \
        "slowest input ${slowest:-?} s: $verdict"
done
exit "$failed"
