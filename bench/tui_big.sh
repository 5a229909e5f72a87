#!/bin/sh
# bench/tui_big.sh — the workbench on a big model as a person meets it, through tmux
# (issue 23): how long from `graphlab MODEL` to the first screen with the model listed,
# and how long from a key sent to the screen showing its effect, for j/k, G/g and ]/[,
# then -/+ inside step STEP (a replay of its pass to one rewrite less or more: the ms to
# the replay shown, and to its rewrite diff made behind it).
#
#   bench/tui_big.sh [BUILDDIR] [MODEL]
#
# BUILDDIR: a build folder holding `graphlab` (default: the current folder). MODEL: the
# model to open (default /tmp/graphlab-bench/many_nodes_100k.onnx, from
# `bench/make_big_models.py /tmp/graphlab-bench --huge`).
# Environment:
#   RUNS         starts and key presses per key (default 3): medians are printed
#   FIRST_TEXT   the text that says the model is listed (default "nodes:", the node
#                list's header; the old workbench drew it only after every pass had run)
#   READY_TEXT   the text that says the passes are done, waited for before the keys
#                (default "steps: ] and [ step")
#   STEP         the step whose rewrites -/+ walk (default 6: transpose-push, 1482
#                rewrites on the 100k ladder)
# The times include tmux's own: each poll is a `tmux capture-pane` (a few ms), so a key
# that the program handles in 1 ms shows here as several. Wall times: on a shared machine
# they grow with the load, so say the load average with them.
set -eu

builddir=${1:-.}
model=${2:-/tmp/graphlab-bench/many_nodes_100k.onnx}
runs=${RUNS:-3}
first_text=${FIRST_TEXT:-nodes:}
ready_text=${READY_TEXT:-steps: ] and [ step}
step=${STEP:-6}
gl="$(cd "$builddir" && pwd)/graphlab"

command -v tmux >/dev/null 2>&1 || { echo "bench/tui_big.sh: needs tmux" >&2; exit 2; }
[ -x "$gl" ] || { echo "bench/tui_big.sh: no $gl (build first)" >&2; exit 2; }
[ -f "$model" ] || { echo "bench/tui_big.sh: no $model" >&2; exit 2; }

T="tmux -L gl-bench-$$ -f /dev/null"
trap '$T kill-server >/dev/null 2>&1' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
screen() { $T capture-pane -p -t b; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# wait_text TEXT SECONDS: polls until TEXT is on the screen; false after SECONDS
wait_text() {
    limit=$(($(now_ms) + $2 * 1000))
    while ! screen | grep -qF -- "$1"; do
        [ "$(now_ms)" -lt "$limit" ] || return 1
    done
}

# start: a fresh session with the workbench on $model; prints the ms to the first screen
start() {
    $T kill-session -t b >/dev/null 2>&1 || true
    t0=$(now_ms)
    $T new-session -d -s b -x 160 -y 50 "env TERM=tmux-256color LANG=C.UTF-8 $gl $model"
    wait_text "$first_text" 120 || { echo "no '$first_text' on the screen" >&2; exit 1; }
    echo $(($(now_ms) - t0))
}

# press KEY: the ms from sending KEY to the screen changing
press() {
    before=$(screen)
    t0=$(now_ms)
    $T send-keys -t b "$1"
    while [ "$(screen)" = "$before" ]; do
        [ $(($(now_ms) - t0)) -lt 30000 ] || { echo "key $1 changed nothing" >&2; exit 1; }
    done
    echo $(($(now_ms) - t0))
}

echo "model: $model; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
: >/tmp/tui_big.$$.first
for _ in $(seq "$runs"); do
    start >>/tmp/tui_big.$$.first
done
echo "first screen with the model listed: $(median </tmp/tui_big.$$.first) ms (median of $runs: $(tr '\n' ' ' </tmp/tui_big.$$.first))"
rm -f /tmp/tui_big.$$.first

wait_text "$ready_text" 600 || { echo "the passes did not end ('$ready_text')" >&2; exit 1; }
# What one poll costs alone (a key's time is at least one of them): the floor under the
# key times below, larger on a busy machine.
: >/tmp/tui_big.$$.poll
for _ in $(seq 5); do
    t0=$(now_ms)
    screen >/dev/null
    echo $(($(now_ms) - t0)) >>/tmp/tui_big.$$.poll
done
echo "one poll (tmux capture-pane): $(median </tmp/tui_big.$$.poll) ms (median of 5)"
rm -f /tmp/tui_big.$$.poll
# Pairs that undo each other, so every press meets the same screen.
for pair in "j k" "G g" "] ["; do
    set -- $pair
    : >/tmp/tui_big.$$.a
    : >/tmp/tui_big.$$.b
    for _ in $(seq "$runs"); do
        press "$1" >>/tmp/tui_big.$$.a
        press "$2" >>/tmp/tui_big.$$.b
    done
    echo "key $1: $(median </tmp/tui_big.$$.a) ms, key $2: $(median </tmp/tui_big.$$.b) ms (medians of $runs)"
done
rm -f /tmp/tui_big.$$.a /tmp/tui_big.$$.b

# press_rewrite KEY: the ms from sending KEY to the screen above the status line changing
# (the replay shown: the status line says at once that it replays), then to no job
# running any more (its rewrite diff made behind it), as "SHOWN DONE".
body() { screen | sed '$d'; }
press_rewrite() {
    before=$(body)
    t0=$(now_ms)
    $T send-keys -t b "$1"
    while [ "$(body)" = "$before" ]; do
        [ $(($(now_ms) - t0)) -lt 60000 ] || { echo "key $1 showed no replay" >&2; exit 1; }
    done
    shown=$(($(now_ms) - t0))
    while screen | tail -n 1 | grep -qE 'replaying|diffing|indexing'; do
        [ $(($(now_ms) - t0)) -lt 60000 ] || { echo "key $1: its job did not end" >&2; exit 1; }
    done
    echo "$shown $(($(now_ms) - t0))"
}

$T send-keys -t b "$step"
wait_text "$(printf '%02d-' "$step")" 10 || { echo "no step $step" >&2; exit 1; }
for key in - - - + + +; do
    echo "key $key in step $step: $(press_rewrite "$key" | awk '{ printf "shown after %s ms, its rewrite diff after %s ms", $1, $2 }')"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
