#!/bin/sh
# tui_lists.sh — the list views use the width they have and scroll sideways (issue 24):
# the run view at 80x24 reaches every column with L (the op and name stay on the left),
# at 200x60 its name column widens to the longest name; every list says the selected
# row's full name on its last line; the memory view gives bytes with units; the tensor
# view pages through every value (PgDn) and steps the slices of a rank-4 tensor (J/K).
# Goldens at 80x24 and 200x60, with and without NO_COLOR (the text is the same; the
# colours are not in the capture), in the stable mode ($GRAPHLAB_STABLE_TIMES) as
# tui_run.sh draws them.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
CONV="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
ENCODER="$GL_SRCDIR/tests/data/models/encoder_op17_mini/model.onnx"

export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh" # TIMEOUT, work, golden

# run_topo: r at the step shown, then the run in topological order (times are '~' in the
# stable mode: ordered by time, the rows would follow the machine's noise)
run_topo() {
    keys r
    wait_for "whole run median:" || return 1
    keys s s
    wait_for "by topological order (s)"
}

for mode in color nocolor; do
    env=GRAPHLAB_STABLE_TIMES=1
    [ "$mode" = nocolor ] && env="$env NO_COLOR=1"
    # shellcheck disable=SC2086 # env is a list
    start 80 24 $env -- "$CONV"
    check "80x24 $mode: opens" wait_for "nodes | step 0/16 | ? help"
    keys 1 5
    check "80x24 $mode: the fusion step" wait_for "step 15/16"
    check "80x24 $mode: r, in topological order" run_topo
    check "80x24 $mode: the footer names the selected row in full" \
        wait_for "1/10 FusedNhwcConvRelu_1 (2) 'FusedNhwcConvRelu_1' on dnnl   (L: more columns)"
    golden run-80x24
    keys L L L
    check "80x24 $mode: L reaches the unfused and reference times" wait_for "unfused ms   ref ms"
    check "80x24 $mode: ...the op and name stay" wait_for "  FusedNhwcConvRelu… FusedNhwcConvRelu_1 "
    golden run-80x24-L3
    keys L L L L L L L L L L
    check "80x24 $mode: max abs and nmse reached" wait_for " max abs     nmse"
    golden run-80x24-end
    keys h h h h h h h h h h h h h
    check "80x24 $mode: h goes back to the first columns" wait_for "name                   backend"
    keys j j j j j j Enter
    check "80x24 $mode: the tensor view" wait_for "values of output 0 'relu2_out0', slice [0, 0, :, :]"
    golden tensor-80x24
    keys PageDown
    check "80x24 $mode: PgDn pages through the values" wait_for "from #70 [0,0,4,6] of 4096 values"
    golden tensor-80x24-paged
    keys J J J
    check "80x24 $mode: J steps the slice" wait_for "from #838 [0,3,4,6] of 4096 values; slice [0, 3, :, :] 4/16 (J/K), 256 values"
    golden tensor-80x24-slice3
    keys K
    check "80x24 $mode: K steps back" wait_for "slice [0, 2, :, :] 3/16 (J/K)"
    keys Escape Escape ] m
    check "80x24 $mode: the memory view" wait_for "memory | step 16/16"
    check "80x24 $mode: bytes with units" wait_for "arena 48 KiB, naive 144 KiB, live max 48 KiB"
    golden memory-80x24
    keys L L
    check "80x24 $mode: L reads the memory view's links" wait_for "<- channel_scale_out0_1"
    keys j
    check "80x24 $mode: the footer says the selected tensor in full" \
        wait_for "2/5 channel_scale_out0_1 (<- relu1_out0): 32 KiB (32768 B) at [0, 32768)"
    keys q
    check "80x24 $mode: q exits 0" [ "$(wait_rc)" = 0 ]

    # shellcheck disable=SC2086
    start 200 60 $env -- "$ENCODER"
    check "200x60 $mode: opens" wait_for "nodes | step 0/16 | ? help"
    keys 1 6
    check "200x60 $mode: the last step" wait_for "step 16/16"
    check "200x60 $mode: r, in topological order" run_topo
    check "200x60 $mode: names wider than 22 columns are whole" \
        wait_for "  Reshape                  /self_attn/Transpose_5/Reshape dnnl"
    golden run-200x60
    keys m
    check "200x60 $mode: the memory view" wait_for "memory | step 16/16"
    golden memory-200x60
    keys Escape Enter
    check "200x60 $mode: the tensor view" wait_for "values of output 0"
    golden tensor-200x60
    keys q
    check "200x60 $mode: q exits 0" [ "$(wait_rc)" = 0 ]
done

tap_done
