#!/bin/sh
# bench/weights_held_once.sh — issue 23's weight rows: peak RSS and the time from process
# start to the first result of `graphlab run` on each backend and of `graphlab profile`,
# on a model with big external weights (the GPT-like decoder of bench/make_big_decoder.py),
# next to ONNX Runtime's session creation and first run in the same invocation.
#
#   bench/weights_held_once.sh GRAPHLAB [DIR]
#       GRAPHLAB  the graphlab binary
#       DIR       a folder holding model.onnx and test_data_set_0 (default
#                 /tmp/graphlab-bench/decoder)
# Environment:
#   RUNS      runs per row (default 3; each row's median is printed)
#   THREADS   threads (default 2)
#   ORT_DIR   the folder holding node_modules/onnxruntime-node (default /work/ort; the ORT
#             row is left out when it is missing)
#
# Every row is a whole process measured by /usr/bin/time -v: wall (inflated on a shared
# machine: user+sys CPU is printed too, it suffers less from the load), and the maximum
# resident set size. Every run must also match test_data_set_0 (graphlab's exit status;
# ORT's max_abs_vs_data is printed). The weights are read from the page cache: run it once
# before measuring, or read the first row as cold.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
gl=${1:?usage: bench/weights_held_once.sh GRAPHLAB [DIR]}
dir=${2:-/tmp/graphlab-bench/decoder}
runs=${RUNS:-3}
threads=${THREADS:-2}
ort=${ORT_DIR:-/work/ort}
model=$dir/model.onnx
data=$dir/test_data_set_0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ ! -f "$model" ] || [ ! -d "$data" ]; then
    echo "bench/weights_held_once.sh: no $model or $data; make one with" >&2
    echo "  /usr/bin/python3 bench/make_big_decoder.py $dir" >&2
    exit 2
fi

# median: the middle of the numbers on stdin (the lower middle of an even count)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure LABEL COMMAND...: runs COMMAND $runs times, prints one table row of medians
measure() {
    label=$1
    shift
    : >"$tmp/wall"; : >"$tmp/cpu"; : >"$tmp/rss"
    i=0
    while [ "$i" -lt "$runs" ]; do
        if ! /usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time"; then
            echo "bench/weights_held_once.sh: failed: $*" >&2
            cat "$tmp/out" "$tmp/time" >&2
            exit 1
        fi
        awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
                                                for (i = 1; i <= n; i++) s = s * 60 + p[i];
                                                print s }' "$tmp/time" >>"$tmp/wall"
        awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { print u + s }' \
            "$tmp/time" >>"$tmp/cpu"
        awk -F': ' '/Maximum resident set size/ { print $2 / 1024 }' "$tmp/time" >>"$tmp/rss"
        i=$((i + 1))
    done
    printf '| %-34s | %8.2f s | %8.2f s | %7.0f MB |\n' "$label" "$(median <"$tmp/wall")" \
        "$(median <"$tmp/cpu")" "$(median <"$tmp/rss")"
}

echo "model: $model ($runs runs, $threads threads, medians)"
echo "| what | wall | user+sys | peak RSS |"
echo "|---|---|---|---|"
for backend in ref dnnl fused; do
    measure "run --backend $backend" "$gl" run "$model" --data "$data" --backend "$backend" \
        --threads "$threads"
done
# its default backends (ref, unfused, fused): each must not keep a copy of its own
measure "profile, 1 rep" "$gl" profile "$model" --data "$data" --reps 1 --warmup 0 \
    --threads "$threads"
measure "info" "$gl" info "$model"
if [ -d "$ort/node_modules/onnxruntime-node" ] && command -v node >/dev/null 2>&1; then
    # one warm-up run and no timed ones: the session's creation and its first run
    measure "ONNX Runtime: create + first run" node "$srcdir/bench/ort_time.js" --ort "$ort" \
        --model "$model" --data "$data" --threads "$threads" --warmup 1 --runs 0
    echo "ONNX Runtime's last run: $(cat "$tmp/out")"
else
    echo "(no ONNX Runtime in $ort: its row is left out)"
fi
