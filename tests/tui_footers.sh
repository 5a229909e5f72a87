#!/bin/sh
# tui_footers.sh — the node list, the decisions view and the diff view end, like the run,
# memory and tensor views, with the selected row in full (issue 24): the node's op, full
# name and domain; the record's id, pass, rule, verdict and every node it names; the diff's
# whole line. Names escaped; a text wider than the screen wraps onto up to 3 lines; h/L
# scroll the rows, not the footer; a click on the footer selects nothing. At 80x24 and
# 200x60, with and without NO_COLOR (the text is the same; the colours are not in the
# capture), with goldens.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
ENCODER="$GL_SRCDIR/tests/data/models/encoder_op17_mini/model.onnx"
HOSTILE="$GL_SRCDIR/tests/data/hostile_names.onnx"
export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh" # TIMEOUT, work, golden; skips the whole script without tmux

# open_at SIZE MODEL: graphlab on MODEL in a terminal COLSxROWS, in this pass's $env
open_at() {
    # shellcheck disable=SC2086 # env is a list
    start "${1%x*}" "${1#*x}" $env -- "$2"
    check "$1 $mode: opens ${2#"$GL_SRCDIR"/}" wait_for "nodes | step 0/16 | ? help"
}
# quit SIZE: q leaves with 0
quit() {
    keys q
    check "$1 $mode: q exits 0" [ "$(wait_rc)" = 0 ]
}

# the fusion step's second record and change (attention: four nodes, long names)
DECISION="2/5 #52 fusion attention applied: '/self_attn/Div_1', '/self_attn/MatMul_1', '/self_attn/Softmax', '/self_attn/MatMul_2'"
CHANGE="2/6 > MatMul '/self_attn/MatMul' + Add '/self_attn/Add'  =>  graphlab.fused:FusedMatMulAdd_1 'FusedMatMulAdd_1'   [decision #51]"

for mode in color nocolor; do
    env=GRAPHLAB_STABLE_TIMES=1
    [ "$mode" = nocolor ] && env="$env NO_COLOR=1"

    open_at 80x24 "$ENCODER"
    check "80x24 $mode: nodes: the footer names the first node" \
        wait_for "1/57 Transpose '/self_attn/Transpose' (domain ai.onnx)"
    click 5 23 # the footer's line: below the rows, it selects nothing
    keys j j
    check "80x24 $mode: nodes: j moves the footer with the selection" \
        wait_for "3/57 Add '/self_attn/Add' (domain ai.onnx)"
    golden footers-nodes-80x24
    keys 1 6 G
    check "80x24 $mode: nodes: a fused node's domain" \
        wait_for "20/20 FusedSkipLayerNorm_5 'FusedSkipLayerNorm_5' (domain graphlab.fused)"
    keys c
    check "80x24 $mode: decisions: the record with the node it names" \
        wait_for "1/17 #56 memory-plan in-place-residual refused: 'FusedMatMulAdd_1'"
    golden footers-decisions-80x24
    # (the fusion step's status line holds its time uncut at 80 columns: no golden there)
    keys 1 5 c j
    check "80x24 $mode: decisions: the record in full, wrapped onto a second line" \
        wait_for "2/5 #52 fusion attention applied: '/self_attn/Div_1', '/self_attn/MatMul_1', '/…"
    check "80x24 $mode: ...which goes on where the first ends" \
        wait_for "self_attn/Softmax', '/self_attn/MatMul_2'"
    check "80x24 $mode: decisions: the screen still fits" fits 80 24
    keys d
    check "80x24 $mode: diff: the change's whole line, wrapped" \
        wait_for "edMatMulAdd_1 'FusedMatMulAdd_1'   [decision #51]"
    keys L L L L
    check "80x24 $mode: diff: L scrolled the rows" wait_for "dd '/self_attn/Add'  =>  graphlab"
    check "80x24 $mode: ...not the footer" \
        wait_for "2/6 > MatMul '/self_attn/MatMul' + Add '/self_attn/Add'  =>  graphlab.fused:Fus…"
    keys 3 d j j
    check "80x24 $mode: diff: the selected line of another step" \
        wait_for "4/47 - Gather '/self_attn/Gather'"
    golden footers-diff-80x24
    quit 80x24

    open_at 200x60 "$ENCODER"
    keys 1 5
    check "200x60 $mode: the fusion step" wait_for "step 15/16"
    check "200x60 $mode: nodes: the selected node" \
        wait_for "1/20 Reshape '/self_attn/Transpose/Reshape' (domain ai.onnx)"
    keys j
    check "200x60 $mode: nodes: a fused node's domain" \
        wait_for "2/20 FusedMatMulAdd_1 'FusedMatMulAdd_1' (domain graphlab.fused)"
    golden footers-nodes-200x60
    keys c j
    check "200x60 $mode: decisions: the record on one line" wait_for "$DECISION"
    golden footers-decisions-200x60
    keys d
    check "200x60 $mode: diff: the change's whole line" wait_for "$CHANGE"
    golden footers-diff-200x60
    quit 200x60

    open_at 80x24 "$HOSTILE"
    keys j
    check "hostile $mode: the footer's name escaped" \
        wait_for "2/3 Transpose 'tB\\x0D\\x0AFAKE: all good' (domain ai.onnx)"
    check "hostile $mode: no control or bidi character on the screen" sh -c \
        "! $T capture-pane -p -t t | grep -qP '[\x00-\x08\x0b-\x1f\x7f\x{80}-\x{9f}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}]'"
    quit 80x24
done

tap_done
