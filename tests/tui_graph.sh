#!/bin/sh
# tui_graph.sh — the graph view on a few-hundred-node model (issue 12), through a real
# 140x45 terminal: the default neighbourhood fits the screen with more than 3 nodes,
# { and } move to the producer / consumer, J reaches the "... N more" box and Enter on it
# draws what it stood for, the input box is a stop that Enter describes. Uses the shared
# shufflenet (skipped without ../shared).
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
MODEL="${GL_SHARED:-$GL_SRCDIR/../shared}/models/shufflenet_v2_x0_5/model.onnx"
if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux not found"
    exit 0
fi
if [ ! -f "$MODEL" ]; then
    echo "1..0 # SKIP no ../shared/models/shufflenet_v2_x0_5"
    exit 0
fi
if [ -n "$GL_SANITIZED" ]; then TIMEOUT=90; else TIMEOUT=20; fi
export LANG=C.UTF-8
work=$(mktemp -d "${TMPDIR:-/tmp}/gltuigraph.XXXXXX")
. "$GL_SRCDIR/tests/tmux.sh"

# node boxes whose top border is on the screen (edge bends end in ┘, box tops in ┐ ┓)
boxes() { screen | grep -o '[┌┏][─━┬┯]*[┐┓]' | wc -l | tr -d ' '; }
# on_screen N: at least N boxes shown
on_screen() { [ "$(boxes)" -ge "$1" ]; }

start 140 45 -- "$MODEL"
check "shufflenet opens" wait_for "nodes | step 0/15"
keys v
check "v: a neighbourhood whose radius fits the screen" wait_for "(fits the screen; < >)"
check "more than 3 node boxes on 140x45" on_screen 4
[ "$(boxes)" -ge 4 ] || screen | sed 's/^/#   /'
check "the selection is drawn with the cursor" wait_for "┃ /conv1/conv1.0/Conv"

keys '}'
check "} moves to the consumer" wait_for "consumer '/conv1/conv1.2/Relu'"
check "} the cursor follows" wait_for "┃ /conv1/conv1.2/Relu"
keys '{'
check "{ moves to the producer" wait_for "producer '/conv1/conv1.0/Conv'"

keys K
check "K reaches the graph input's box" wait_for "┃ input: input"
keys Enter
check "Enter on the input says what it is" wait_for "input: input float[1,3,224,224] (not a node"

keys G J
check "J past the last node reaches the '… N more' box" wait_for "┃ … "
keys Enter
check "Enter on '… N more' widens that side" wait_for "drawing the consumers of"
check "a new layout with the widened side" wait_for "(< >) widened"

keys 9 v
check "step 9: the view follows" wait_for "graph 09-dce:"
check "step 9: more than 3 node boxes" on_screen 4
keys q
check "q exits 0" [ "$(wait_rc)" = 0 ]

tap_done
