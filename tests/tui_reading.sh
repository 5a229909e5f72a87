#!/bin/sh
# tui_reading.sh — what the first users tripped over (issue 12), through a real terminal
# (tmux, as tui.sh): the node detail lists every decision about the node, refusals
# included, and Enter goes to one; the diff inside a pass shows one rewrite alone, D the
# whole step so far; b ends on the bad rewrite replayed, its diff shown and its record
# selected; o says when the opener fails; C-d/C-u, the mouse wheel, h/L across long
# rows, text cut with '…' (or "..." without UTF-8); ? explains the marks.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh"
CONV="$SRC/examples/conv_nhwc/model.onnx"
TRANSFORMER="$SRC/examples/transformer_block/model.onnx"

# --- the node detail: every decision about the node -------------------------------------------
# input_to_nchw's history has no step that changed it before layout removes it; the
# first transpose-push refused to push it through conv1.
start 120 30 -- "$CONV"
check "detail: opens" wait_for "nodes | step 0/16"
keys / i n p u t _ t o Enter Enter
check "detail: the Transpose" wait_for "Transpose 'input_to_nchw'"
check "detail: its decisions, the refusal included" wait_for "decisions (1; Enter goes to one)"
check "detail: step, id, verdict, rule and reason" \
    wait_for "06-transpose-push    #1    refused push-through-Conv: layout-sensitive op: Conv 'conv1'"
keys G Enter
check "detail: Enter on a decision goes to its step" wait_for "decisions of 06-transpose-push: 5"
check "detail: ...with the record selected" wait_for "#1 transpose-push push-through-Conv refused"
check "detail: ...said on the status line" \
    wait_for "#1 transpose-push push-through-Conv (refused) in 06-transpose-push; Esc goes back"
keys Escape
check "detail: Esc comes back to the node" wait_for "Transpose 'input_to_nchw'"
# channel_scale: both pushes, then the memory plan writes it in place of its input (fusion
# leaves it alone: graphlab's NhwcConv head takes no binary post-op)
keys Escape / c h a n n e l _ s c Enter Enter
check "detail: channel_scale's decisions across steps" wait_for "decisions (3; Enter goes to one)"
check "detail: ...the last from the memory plan" \
    wait_for "16-memory-plan       #17   applied in-place: Mul 'channel_scale'"
golden detail-decisions
# the group conv2 + relu2 became: formed by fusion, refused in place by the memory plan
keys Escape 1 5 l / F u s e d N h w c C o n v R e l u _ 2 Enter Enter
check "detail: the group's decisions across steps" wait_for "decisions (2; Enter goes to one)"
check "detail: ...the fusion that formed it" \
    wait_for "15-fusion            #16   applied conv-activation: 2 nodes from NhwcConv 'conv2'"
check "detail: the memory plan's refusal names it too" \
    wait_for "16-memory-plan       #20   refused in-place: FusedNhwcConvRelu_2 'FusedNhwcConvRelu_2'"
keys Escape

# --- the diff inside a pass --------------------------------------------------------------------
keys 6 - - d
check "diff: at tpush 2/4" wait_for "tpush 2/4 rewrites"
check "diff: rewrite 2 alone, the header says so" \
    wait_for "diff: 06-transpose-push rewrite 2 of 4 alone (#3 push-through-Add), against rewrite 1 (D: against 05-dce)"
check "diff: what rewrite 2 did" wait_for "+ Transpose 'channel_shift/Transpose'   [decision #3]"
check "diff: not what rewrite 1 did" not_on_screen "~ Mul 'channel_scale'"
golden diff-rewrite-alone
keys D
check "D: against the step before" \
    wait_for "diff: 06-transpose-push after 2 of 4 rewrites against 05-dce (D: rewrite alone)"
check "D: rewrite 1's change is in it" wait_for "~ Mul 'channel_scale'"
keys D
check "D again: the rewrite alone" wait_for "rewrite 2 of 4 alone"
keys +
check "+: rewrite 3 alone" wait_for "rewrite 3 of 4 alone (#4 cancel), against rewrite 2"
keys + +
check "the whole step: against the step before" wait_for "diff: 06-transpose-push against 05-dce"
keys q
check "diff: q exits 0" [ "$(wait_rc)" = 0 ]

# --- b ends on the bad rewrite itself -------------------------------------------------------------
start 140 30 GRAPHLAB_SET=transpose-push.fault=2 -- "$CONV"
check "bisect: opens with a corrupted rewrite" wait_for "nodes | step 0/16"
keys 1 5
check "bisect: at the last step" wait_for "step 15/16"
keys b
check "bisect: finds #3, rewrite 2 of 4" \
    wait_for "bisect on fused: #3 transpose-push push-through-Add (rewrite 2 of 4) changes the outputs"
check "bisect: the step replayed to PASS:2" wait_for "tpush 2/4 rewrites"
check "bisect: its diff shown" \
    wait_for "diff: 06-transpose-push rewrite 2 of 4 alone (#3 push-through-Add)"
check "bisect: the corruption is in that diff" wait_for "+ init 'fault_half'"
keys Escape
check "bisect: under it, the decisions of the replay" \
    wait_for "decisions of 06-transpose-push: 3 (f: only refused) in the replay"
check "bisect: #3 selected (its record in the pane)" wait_for "#3 transpose-push push-through-Add applied"
keys q
check "bisect: q exits 0" [ "$(wait_rc)" = 0 ]

# --- o says when the opener fails ----------------------------------------------------------------
printf '#!/bin/sh\nexit 3\n' >"$work/failing-browser"
chmod +x "$work/failing-browser"
start 140 30 BROWSER="$work/failing-browser" -- "$CONV"
check "open: opens" wait_for "nodes | step 0/16"
keys o
check "open: the opener's exit status on the status line" \
    wait_for "failing-browser failed (exit status 3): the SVG is ./graphlab-export/conv_nhwc/00-input.svg"
keys q
check "open: q exits 0" [ "$(wait_rc)" = 0 ]
start 140 30 BROWSER="$work/no-such-browser" -- "$CONV"
check "open: opens again" wait_for "nodes | step 0/16"
keys o
check "open: a \$BROWSER that is not there" wait_for "no-such-browser not found (set \$BROWSER)"
keys q
check "open: q exits 0 again" [ "$(wait_rc)" = 0 ]

# --- half pages, the wheel ------------------------------------------------------------------------
# 100x20: the node list shows 16 rows (bar, two header rows, status), half a page is 8.
# name_at ROW: the name in the node list's ROW-th row (0-based)
name_at() { screen | sed -n "$((4 + $1))p" | awk '{ print $2 }'; }
start 100 20 -- "$TRANSFORMER"
check "pages: opens" wait_for "nodes | step 0/16"
settle
first=$(name_at 0) ninth=$(name_at 8) fourth=$(name_at 3)
keys C-d Enter
check "C-d: half a page down ($ninth)" wait_for "'$ninth'"
keys Escape C-u Enter
check "C-u: half a page up ($first)" wait_for "'$first'"
keys Escape
wheel down 10 8
keys Enter
check "the wheel: three rows down ($fourth)" wait_for "'$fourth'"
keys Escape
wheel up 10 8
keys Enter
check "the wheel: three rows up ($first)" wait_for "'$first'"
keys q
check "pages: q exits 0" [ "$(wait_rc)" = 0 ]

# --- long rows: cut with '…', h/L scroll across --------------------------------------------------
start 100 30 -- "$CONV"
check "long rows: opens" wait_for "nodes | step 0/16"
keys 6 c
check "long rows: a reason cut with '…'" \
    wait_for "#1    refused push-through-Conv      layout-sensitive op: Conv 'conv1' computes in its own layout, …"
keys L L L L L
check "L: its end comes into view" wait_for "input_to_nchw' stops above it"
keys h h h h h
check "h: back to the start" wait_for "#1    refused push-through-Conv"
keys q
check "long rows: q exits 0" [ "$(wait_rc)" = 0 ]
start 100 30 LC_ALL=C -- "$CONV"
check "no UTF-8: opens" wait_for "nodes | step 0/16"
keys 6 c
check "no UTF-8: cut with '...'" wait_for "computes in its own layout..."
keys q
check "no UTF-8: q exits 0" [ "$(wait_rc)" = 0 ]

# --- ? explains the marks -------------------------------------------------------------------------
start 100 80 -- "$CONV"
check "marks: opens" wait_for "nodes | step 0/16"
keys '?'
check "marks: a section after the keys" wait_for "marks the views draw"
check "marks: '~'" wait_for "nodes   ~             the step changed the node"
check "marks: '*'" wait_for "nodes   *             a node of the decision opened with Enter"
check "marks: '┆'" wait_for "graph   ┆ ┄           dashed: an edge to what was left out"
check "marks: '… N more'" wait_for "graph   … N more      neighbours, inputs or constants the view leaves out"
check "the keys of this issue are listed" wait_for "C-d         half a page down"
keys q
check "marks: q exits 0" [ "$(wait_rc)" = 0 ]

tap_done
