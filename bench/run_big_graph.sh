#!/bin/sh
# bench/run_big_graph.sh — running a 100k-node graph (issue 23): `graphlab run` on the
# 100k Relu chain and the 100k ladder on each backend, and `profile --reps 1` on the
# chain; per command the median of RUNS runs of the wall time, the user+sys CPU time
# (less sensitive than the wall time to other work on the machine) and the peak RSS.
# Rounds are interleaved: round 1 runs every command, then round 2, ... With BEFORE set,
# each command runs on that build too, right before this one, and the table gives
# before -> after: on a shared machine only runs taken side by side compare.
#
#   bench/run_big_graph.sh [BUILDDIR]     BUILDDIR: a build folder with graphlab
#                                         (default: the current folder)
# Environment:
#   GRAPHLAB       the graphlab binary to time (default BUILDDIR/graphlab)
#   BEFORE         another graphlab binary (an older build) to time in the same rounds
#   GL_BENCH_DIR   the generated models (default /tmp/graphlab-bench; made by
#                  bench/make_big_models.py --huge when missing)
#   GL_PYTHON      a python3 with onnx and numpy (default /usr/bin/python3)
#   RUNS           runs per command (default 3)
#   THREADS        --threads of every command (default 2)
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-.}
gl=${GRAPHLAB:-$builddir/graphlab}
before=${BEFORE:-}
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
if [ -n "$before" ] && [ ! -x "$before" ]; then
    echo "run_big_graph.sh: BEFORE is not a program: $before" >&2
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

# One run of graphlab $1 with the arguments $3..., its sample (wall cpu rss) added to
# file $2.
sample() {
    bin=$1 out=$2
    shift 2
    # shellcheck disable=SC2068 # the arguments are words
    if ! /usr/bin/time -o "$tmp/time" -f '%e %U %S %M' "$bin" $@ </dev/null >/dev/null 2>"$tmp/err"; then
        echo "run_big_graph.sh: '$bin $*' failed: $(tail -3 "$tmp/err")" >&2
        exit 1
    fi
    awk '{ printf "%s %.2f %d\n", $1, $2 + $3, $4 }' "$tmp/time" >>"$out"
}

# Interleaved rounds: each command's samples go to $tmp/N (wall cpu rss per line), the
# BEFORE build's to $tmp/bN.
round=0
while [ "$round" -lt "$runs" ]; do
    round=$((round + 1))
    n=0
    while IFS='|' read -r label args; do
        n=$((n + 1))
        # shellcheck disable=SC2086 # the arguments are words
        [ -z "$before" ] || sample "$before" "$tmp/b$n" $args
        # shellcheck disable=SC2086
        sample "$gl" "$tmp/$n" $args
    done <"$tmp/commands"
done

# The median of column $2 of file $1.
median() {
    sort -g -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

# "before -> after" of column $2 for command $1, or the after value alone; $3: a divisor.
cell() {
    a=$(median "$tmp/$1" "$2")
    a=$(awk -v v="$a" -v d="$3" 'BEGIN { printf (d == 1 ? "%s" : "%d"), (d == 1 ? v : v / d) }')
    if [ -n "$before" ]; then
        b=$(median "$tmp/b$1" "$2")
        b=$(awk -v v="$b" -v d="$3" 'BEGIN { printf (d == 1 ? "%s" : "%d"), (d == 1 ? v : v / d) }')
        printf '%s → %s' "$b" "$a"
    else
        printf '%s' "$a"
    fi
}

echo "graphlab: $gl${before:+; before: $before}; models: $models; $runs runs, interleaved, medians; --threads $threads"
echo
echo "| command | wall s | user+sys s | peak RSS MB |"
echo "|---|---|---|---|"
n=0
while IFS='|' read -r label args; do
    n=$((n + 1))
    printf '| %s | %s | %s | %s |\n' "$label" "$(cell "$n" 1 1)" "$(cell "$n" 2 1)" \
        "$(cell "$n" 3 1024)"
done <"$tmp/commands"
