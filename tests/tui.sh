#!/bin/sh
# tui.sh — the workbench driven through a real terminal: tmux on a private server
# (STACK.md), keys sent as a person would, the screen read back with capture-pane and
# polled in 0.1 s steps. Covers the bar, stepping, +/- inside a pass, every view,
# search, a 60x20 resize, export and open, C-c, q, a bad model (exit 2, message on the
# restored terminal) and golden screens (tests/golden/*.txt; timings and paths
# normalised; GL_UPDATE_GOLDEN=1 rewrites them after a deliberate change).
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
SRC="$GL_SRCDIR"
GOLDEN="$SRC/tests/golden"

if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux not found"
    exit 0
fi
if [ -n "$GL_SANITIZED" ]; then
    TIMEOUT=60 # everything runs several times slower under ASan
else
    TIMEOUT=15
fi
export LANG=C.UTF-8
work=$(mktemp -d "${TMPDIR:-/tmp}/gltui.XXXXXX")
. "$GL_SRCDIR/tests/tmux.sh"

# A browser that only writes down what it was asked to open.
cat >"$work/fake-browser" <<EOF
#!/bin/sh
echo "\$@" >>"$work/browser.log"
EOF
chmod +x "$work/fake-browser"
mkdir "$work/emptybin"

CONV="$SRC/examples/conv_nhwc/model.onnx"
TRANSFORMER="$SRC/examples/transformer_block/model.onnx"

# --- open, the bar, stepping -------------------------------------------------------------
start 100 30 BROWSER="$work/fake-browser" -- "$CONV"
check "opens on the loaded model" wait_for "nodes | step 0/16 | ? help"
check "the bar lists the steps with node counts" wait_for "load 14 → toposort 14 → shapes 14"
check "the bar marks a step that changed the graph" wait_for "tpush 10*"
check "the node list has the op counts" wait_for "14 nodes: Transpose 6, Relu 3, Conv 2"
golden nodes-step0
keys ]
check "] steps forward" wait_for "step 1/16"
keys Right
check "Right steps forward" wait_for "step 2/16"
keys [
check "[ steps back" wait_for "step 1/16"
keys Left
check "Left steps back" wait_for "step 0/16"
keys 6
check "a digit jumps to its step" wait_for "06-transpose-push: 4 rewrites, 10 nodes"
check "the list marks what the step changed" wait_for "~ Mul        channel_scale"

# --- the views -------------------------------------------------------------------------------
keys d
check "d shows the diff" wait_for "diff: 06-transpose-push against 05-dce"
check "the diff lists the removed Transposes" wait_for "- Transpose 'Transpose_6'"
golden diff-step6
keys Enter
check "Enter on a change opens its node" wait_for "Mul 'channel_scale'"
check "the detail shows the initializer statistics" wait_for "min 0.553439  max 1.28262"
check "the detail shows the history with the decision" wait_for "(#2 push-through-Mul)"
golden detail-channel-scale
keys Escape
check "Esc goes back to the diff" wait_for "diff | step 6/16"
keys c
check "c shows the decisions" wait_for "decisions of 06-transpose-push: 5"
check "a refused decision carries its numbers" wait_for "decided_by     layout-sensitive"
golden decisions-step6
keys f
check "f keeps only the refused" wait_for "decisions of 06-transpose-push: 1 refused"
keys Enter
check "Enter marks the decision's nodes" wait_for "#1 push-through-Conv: 2 nodes marked"
keys v
check "v shows the graph" wait_for "graph | step 6/16"
keys '?'
check "? shows the keys from the table" wait_for "graphlab keys"
check "the help starts with the first request" wait_for "next step of the pipeline"
golden help
keys G
check "the help scrolls to its last line" wait_for "dropped); q quits at once."
keys Escape
check "Esc backs out of the help" wait_for "graph | step 6/16"
keys l
check "l shows the node list" wait_for "nodes | step 6/16"

# --- search ------------------------------------------------------------------------------------
keys / c o n v 2
check "/ opens an incremental prompt" wait_for "/conv2_"
keys Enter Enter
check "the match is selected (Enter opens it)" wait_for "Conv 'conv2'"
keys Escape / z z z
check "a pattern without a match says so" wait_for "(no match)"
keys Escape

# --- resize -------------------------------------------------------------------------------------
$T resize-window -t t -x 60 -y 20
check "at 60x20 the status line stays" wait_for "nodes | step 6/16"
check "at 60x20 the bar is elided around the step" wait_for "tpush 10* → fold 10"
check "at 60x20 nothing runs past the edge" fits 60 20
golden nodes-60x20
keys d
check "at 60x20 the diff still draws" wait_for "diff | step 6/16"
keys c
# (the status line's right part, " decisions | step 6/16 | ? help", is over half of 60
# columns: the message keeps the line)
check "at 60x20 the decisions still draw" wait_for "decisions of 06-transpose-push"
$T resize-window -t t -x 100 -y 30
keys l
check "back at 100x30" wait_for "nodes | step 6/16"

# --- export, open ----------------------------------------------------------------------------------
keys e
check "e asks where, the default shown" wait_for "export this step to: ./graphlab-export/conv_nhwc_"
keys Enter
check "e exports the step and says where" \
    wait_for "exported 06-transpose-push to ./graphlab-export/conv_nhwc/"
check "the step's files are there" \
    test -s "$work/graphlab-export/conv_nhwc/06-transpose-push.svg" -a \
    -s "$work/graphlab-export/conv_nhwc/06-transpose-push.onnx" -a \
    -f "$work/graphlab-export/conv_nhwc/06-transpose-push.diff.txt"
keys E
check "E asks where, the default shown" wait_for "export every step to: ./graphlab-export/conv_nhwc_"
keys Enter
check "E exports every step" wait_for "exported 17 steps to ./graphlab-export/conv_nhwc/"
check "E writes index.html" test -s "$work/graphlab-export/conv_nhwc/index.html"
keys o
check "o opens the SVG with \$BROWSER" \
    wait_for "opened ./graphlab-export/conv_nhwc/06-transpose-push.svg with"
i=0
while [ ! -s "$work/browser.log" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "the browser got the SVG's path" \
    grep -q "graphlab-export/conv_nhwc/06-transpose-push.svg" "$work/browser.log"
keys C-c
check "C-c with nothing running does not quit" wait_for "nothing is running"
keys q
check "q exits 0" [ "$(wait_rc)" = 0 ]
check "the terminal is restored (cursor, screen, mouse, keypad)" restored
check "the workbench is gone from the screen" sh -c "! $T capture-pane -p -t t | grep -q 'step 6/16'"

# --- + and - inside constant folding --------------------------------------------------------------
start 100 30 -- "$TRANSFORMER"
check "the transformer block opens" wait_for "nodes | step 0/16"
keys 3
check "3 goes to constant folding" wait_for "fold 46*"
keys -
check "- shows one rewrite less" wait_for "fold 10/11 rewrites"
check "the replay has one node more" wait_for "47 nodes"
keys -
check "- again" wait_for "fold 9/11 rewrites"
keys +
check "+ one rewrite more" wait_for "fold 10/11 rewrites"
keys +
check "+ back to the whole step" wait_for "fold 46*"
keys d
check "the diff after all rewrites" wait_for "diff: 03-constant-folding against 02-shape-inference"
keys q
check "q exits 0 again" [ "$(wait_rc)" = 0 ]

# --- no browser ------------------------------------------------------------------------------------
start 100 30 -u BROWSER PATH="$work/emptybin" -- "$CONV"
check "opens without a PATH" wait_for "nodes | step 0/16"
keys o
check "no browser: the status line says so" wait_for "no \$BROWSER and no xdg-open"
keys q
check "q exits 0 without a browser" [ "$(wait_rc)" = 0 ]

# --- colours off, the mouse -----------------------------------------------------------------------
start 100 30 NO_COLOR=1 -- "$CONV"
check "NO_COLOR: still opens" wait_for "nodes | step 0/16"
click 5 8 # the fifth node of the list: Mul 'channel_scale'
keys Enter
check "a click selects a row" wait_for "Mul 'channel_scale'"
keys Escape
click 67 1 # "tpush 10*" on the bar
check "a click on the bar goes to that step" wait_for "step 6/16"
keys q
check "NO_COLOR: q exits 0" [ "$(wait_rc)" = 0 ]

# --- fatal signals restore the terminal ------------------------------------------------------------
for sig in TERM SEGV; do
    start 100 30 -- "$CONV"
    wait_for "nodes | step 0/16" >/dev/null
    kill -"$sig" "$(cat "$work/pid")"
    rc=$(wait_rc)
    check "SIG$sig: dies of the signal (status $rc)" [ "$rc" -gt 128 ]
    check "SIG$sig: the terminal is restored" restored
done

# --- bad models ------------------------------------------------------------------------------------
start 100 30 -- "$SRC/tests/data/bad/truncated.onnx"
check "a bad model exits 2" [ "$(wait_rc)" = 2 ]
check "its message is on the terminal" wait_for "graphlab: "
check "the message names the file" wait_for "truncated.onnx"
check "the terminal is restored after a bad model" restored

start 100 30 -- "$work/no-such-model.onnx"
check "a missing model exits 2" [ "$(wait_rc)" = 2 ]
check "the missing model is named" wait_for "no-such-model.onnx: cannot open"

# A function calling itself used to keep shape inference expanding forever: the pipeline
# now stops with the reason, and the workbench stays usable.
start 240 30 -- "$SRC/tests/data/bad/function_recursive.onnx"
check "a recursive function stops the pipeline, said on screen" \
    wait_for "the pipeline stopped: "
check "...with the reason" wait_for "function 'twice' calls itself"
keys q
check "q exits 0 after the pipeline stopped" [ "$(wait_rc)" = 0 ]

# --- names that are terminal control sequences (tests/data/hostile_names.onnx) ---------------------
# ESC [2J would clear the screen, CR/LF move the cursor, U+202E reverse the row: drawn as
# their escapes, like the command line prints them.
start 100 30 -- "$SRC/tests/data/hostile_names.onnx"
check "hostile names: the nodes show escaped" wait_for 'tA\x1B[2J\x07'
check "hostile names: CR LF escaped" wait_for 'tB\x0D\x0AFAKE: all good'
check "hostile names: a bidi override escaped" wait_for 'relu\u{202E}evil'
check "hostile names: no control or bidi character on the screen" sh -c \
    "! $T capture-pane -p -t t | grep -qP '[\x00-\x08\x0b-\x1f\x7f\x{80}-\x{9f}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}]'"
keys q
check "hostile names: q exits 0" [ "$(wait_rc)" = 0 ]
start 200 30 -- "$SRC/tests/data/bad/hostile_names_attr.onnx"
check "a bad hostile node exits 2" [ "$(wait_rc)" = 2 ]
check "its message names the node, escaped, on one line" \
    wait_for "node 'tr\\x1B[2J\\x0D\\x0A\\u{202E}' (Transpose): attribute 'perm'"

# --- the selection across the fusion step -------------------------------------------------------
# conv_nhwc: the default pipeline's fusion step (14) makes conv1 + relu1 one group
# (FusedNhwcConvRelu_1) and conv2 + relu2 another (FusedNhwcConvRelu_2). A node selected
# before it is followed into its group (the group selected, the member marked in its
# detail); a step back finds the member again.
start 100 30 -- "$CONV"
check "fusion: opens" wait_for "nodes | step 0/16"
keys 9 ] ] ] ]
check "fusion: the step before it" wait_for "step 13/16"
keys / c o n v 2 Enter
check "fusion: conv2 selected before fusion" wait_for "conv2"
keys ] ] Enter
check "fusion: the selection followed conv2 into its group" \
    wait_for "graphlab.fused:FusedNhwcConvRelu_2 'FusedNhwcConvRelu_2'"
check "fusion: the group's detail lists its members" \
    wait_for "fused group: 2 members (the body of graphlab.fused:FusedNhwcConvRelu_2)"
check "fusion: conv2 marked as the node followed" \
    wait_for "> NhwcConv       'conv2'  <- the node followed into the group"
check "fusion: relu2 listed, not marked" wait_for "  Relu           'relu2'"
golden detail-fused-group
keys Escape [ Enter
check "fusion: a step back, the selection is conv2 again" wait_for "NhwcConv 'conv2'"
keys Escape ] l
check "fusion: the node list at the fusion step" wait_for "nodes | step 15/16"
keys g / F u s e d Enter Enter
check "fusion: the group chosen as itself (searched, not followed)" \
    wait_for "fused group: 2 members"
check "fusion: ...marks no member" sh -c "! $T capture-pane -p -t t | grep -q 'followed into'"
keys Escape ] m
check "m: the memory plan at the memory-plan step" wait_for "memory | step 16/16"
# the first group writes relu1_out0; channel_scale writes its output over it
check "m: a tensor in place of its input" wait_for "<- relu1_out0"
golden memory-plan
keys j Enter
check "m: Enter opens the node that writes the tensor" wait_for "Mul 'channel_scale'"
keys Escape [ m
check "m: no plan before the memory-plan step" wait_for "no memory plan at this step"
keys q
check "fusion: q exits 0" [ "$(wait_rc)" = 0 ]

# --- C-c while work runs: only with a big model (bench/make_big_models.py needs onnx) ---------------
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ] &&
    "$GL_PYTHON" "$SRC/bench/make_big_models.py" "$work/big" --weights-mb 1 --nodes 4000 \
        >/dev/null 2>&1; then
    start 100 30 -- "$work/big/many_nodes.onnx"
    check "a big model opens" wait_for "nodes | step 0/16"
    keys E Enter
    check "E on a big model shows progress" wait_for "exporting step"
    keys C-c
    check "C-c stops waiting without quitting" wait_for "stopped waiting for the export"
    keys ]
    check "keys work while the export ends in the background" wait_for "step 1/16"
    keys q
    check "q exits 0 with work still running" [ "$(wait_rc)" = 0 ]
    check "q with the export running leaves no half folder" \
        sh -c "! ls -a '$work/graphlab-export' 2>/dev/null | grep -q 'tmp\\.'"
    # Keys typed before the first screen and while the passes run (issue 23): the ones
    # that need the passes wait for them and act in order, none is lost (before, keys
    # typed while the model loaded did nothing).
    start 100 30 -- "$work/big/many_nodes.onnx"
    keys ] ] d
    check "keys typed at once wait for the passes: ] ] d" wait_for "diff | step 2/16"
    keys q
    check "q exits 0 after the early keys" [ "$(wait_rc)" = 0 ]
else
    skip "C-c during an export: no python with onnx to make a big model"
fi

tap_done
