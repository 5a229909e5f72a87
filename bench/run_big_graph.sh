#!/bin/sh
# bench/run_big_graph.sh — running a 100k-node graph (issue 23): `graphlab run` on the
# 100k Relu chain and the 100k ladder on each backend, and `profile --reps 1` on the
# chain; per command the median of RUNS runs of the wall time, the user+sys CPU time
# (less sensitive than the wall time to other work on the machine) and the peak RSS.
# Rounds are interleaved: round 1 runs every command, then round 2, ...
#
#   bench/run_big_graph.sh [BUILDDIR]     BUILDDIR: a build folder with graphlab
#                                         (default: the current folder)
# Environment:
#   GRAPHLAB       the graphlab binary to time (default BUILDDIR/graphlab): time two
#                  builds by running the script twice
#   GL_BENCH_DIR   the generated models (default /tmp/graphlab-bench; made by
#                  bench/make_big_models.py --huge when missing)
#   GL_PYTHON      a python3 with onnx and numpy (default /usr/bin/python3)
#   RUNS           runs per command (default 3)
#   THREADS        --threads of every command (default 2)
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-.}
gl=${GRAPHLAB:-$builddir/graphlab}
models=${GL_BENCH_DIR:-/tmp/graphlab-bench}
python=${GL_PYTHON:-/usr/bin/python3}
runs=${RUNS:-3}
threads=${THREADS:-2}

case $runs in '' | *[!0-9]* | 0*) echo "run_big_graph.sh: RUNS must be a positive number, not '$runs'" >&2; exit 2 ;; esac
case $threads in '' | *[!0-9]*) echo "run_big_graph.sh: THREADS must be a number, not '$threads'" >&2; exit 2 ;; esac
if [ ! -x "$gl" ]; then
    echo "run_big_graph.sh: no graphlab at $gl (give a build folder or GRAPHLAB)" >&2
    exit 2
fi
if [ ! -x /usr/bin/time ]; then
    echo "run_big_graph.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
    exit 2
fi
chain=$models/chain_100k.onnx
ladder=$models/many_nodes_100k.onnx
if [ ! -f "$chain" ] || [ ! -f "$ladder" ]; then
    "$python" "$srcdir/bench/make_big_models.py" "$models" --huge
fi

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# One command per line: a label, then graphlab's arguments.
cat >"$tmp/commands" <<EOF
chain run ref|run $chain --backend ref --threads $threads
chain run dnnl|run $chain --backend dnnl --threads $threads
chain run fused|run $chain --backend fused --threads $threads
chain profile dnnl --reps 1|profile $chain --backends dnnl --reps 1 --threads $threads
ladder run ref|run $ladder --backend ref --threads $threads
ladder run dnnl|run $ladder --backend dnnl --threads $threads
ladder run fused|run $ladder --backend fused --threads $threads
EOF

# Interleaved rounds: each command's samples go to $tmp/N (wall cpu rss per line).
round=0
while [ "$round" -lt "$runs" ]; do
    round=$((round + 1))
    n=0
    while IFS='|' read -r label args; do
        n=$((n + 1))
        # shellcheck disable=SC2086 # the arguments are words
        if ! /usr/bin/time -o "$tmp/time" -f '%e %U %S %M' "$gl" $args </dev/null >/dev/null 2>"$tmp/err"; then
            echo "run_big_graph.sh: '$label' failed: $(tail -3 "$tmp/err")" >&2
            exit 1
        fi
        awk '{ printf "%s %.2f %d\n", $1, $2 + $3, $4 }' "$tmp/time" >>"$tmp/$n"
    done <"$tmp/commands"
done

# The median of column $2 of file $1.
median() {
    sort -g -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

echo "graphlab: $gl; models: $models; $runs runs, interleaved, medians; --threads $threads"
echo
echo "| command | wall s | user+sys s | peak RSS MB |"
echo "|---|---|---|---|"
n=0
while IFS='|' read -r label args; do
    n=$((n + 1))
    rss_kb=$(median "$tmp/$n" 3)
    printf '| %s | %s | %s | %d |\n' "$label" "$(median "$tmp/$n" 1)" "$(median "$tmp/$n" 2)" \
        $((rss_kb / 1024))
done <"$tmp/commands"
