#!/bin/sh
# optimize_big.sh — `graphlab optimize --passes all` on a big graph (issue 23's row: the
# 100k-node ladder), one or more graphlab binaries in interleaved rounds (before and
# after a change see the same load), medians of RUNS:
#
#   bench/optimize_big.sh [-n RUNS] [-m MODEL] GRAPHLAB...
#
# Per binary: wall seconds, user+sys CPU seconds (less sensitive to a loaded machine than
# wall), peak RSS, the same for loading and saving alone (--passes none), then per step
# the median of the time optimize prints (wall ms) and that time per node of the step's
# input. MODEL defaults to
# /tmp/graphlab-bench/many_nodes_100k.onnx (bench/make_big_models.py --huge writes it).
# The optimized models go to a temporary folder, removed at the end.
set -eu

runs=3
model=/tmp/graphlab-bench/many_nodes_100k.onnx
while getopts n:m: opt; do
    case $opt in
    n) runs=$OPTARG ;;
    m) model=$OPTARG ;;
    *) echo "usage: $0 [-n RUNS] [-m MODEL] GRAPHLAB..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ] || [ ! -f "$model" ]; then
    echo "usage: $0 [-n RUNS] [-m MODEL] GRAPHLAB... (MODEL: $model, from" \
         "bench/make_big_models.py --huge)" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Round r of binary b: its step lines in $tmp/b.r.steps, "wall user sys kb" in $tmp/b.r.time.
r=1
while [ "$r" -le "$runs" ]; do
    b=1
    for gl in "$@"; do
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/$b.$r.time" \
            "$gl" optimize "$model" --passes all -o "$tmp/out.onnx" >"$tmp/$b.$r.steps"
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/$b.$r.none" \
            "$gl" optimize "$model" --passes none -o "$tmp/out.onnx" >/dev/null
        b=$((b + 1))
    done
    r=$((r + 1))
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

b=1
for gl in "$@"; do
    echo "== $gl on $(basename "$model"), median of $runs"
    wall=$(cat "$tmp"/$b.*.time | awk '{print $1}' | median)
    cpu=$(cat "$tmp"/$b.*.time | awk '{print $2 + $3}' | median)
    kb=$(cat "$tmp"/$b.*.time | awk '{print $4}' | median)
    printf 'wall %.2f s   user+sys %.2f s   peak RSS %.0f MB\n' "$wall" "$cpu" "$((kb / 1024))"
    wall=$(cat "$tmp"/$b.*.none | awk '{print $1}' | median)
    cpu=$(cat "$tmp"/$b.*.none | awk '{print $2 + $3}' | median)
    kb=$(cat "$tmp"/$b.*.none | awk '{print $4}' | median)
    printf 'load + save alone (--passes none): wall %.2f s   user+sys %.2f s   peak RSS %.0f MB\n' \
        "$wall" "$cpu" "$((kb / 1024))"
    printf '%-22s %8s %10s %9s\n' step nodes ms us/node
    # The step lines: "NN-name  nodes  rewrites  T ms ..."; the input's node count is the
    # line before's.
    steps=$(awk '/^[0-9][0-9]-/ && $4 != "" {print $1}' "$tmp/$b.1.steps")
    for s in $steps; do
        ms=$(cat "$tmp"/$b.*.steps | awk -v s="$s" '$1 == s {print $4}' | median)
        nodes=$(awk -v s="$s" '$1 == s {print prev} /^[0-9][0-9]-/ {prev = $2}' "$tmp/$b.1.steps")
        printf '%-22s %8s %10.1f %9.2f\n' "$s" "$nodes" "$ms" "$(echo "$ms $nodes" | awk '{print $1 * 1000 / $2}')"
    done
    b=$((b + 1))
done
