#!/bin/sh
# tui_whatif.sh — the workbench's x (what-if) and b (bisect) through a real terminal
# (tmux, as tui.sh): x on transpose-push's applied #3 re-runs the pipeline with it vetoed,
# the bar then shows that branch (the first transpose-push leaves 12 nodes, two
# Transposes more, instead of 10), x again lifts the veto; the bar names the other
# branch, X swaps to it, D diffs the two, r runs both (goldens in the stable mode, as
# tui_run.sh); b from the last step says no
# rewrite changes the outputs on the run view's backend; with $GRAPHLAB_SET's dnnl.fault
# and --data it finds the fusion that formed the faulty group.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"

export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh" # TIMEOUT, work

start 170 30 GRAPHLAB_STABLE_TIMES=1 -- "$GL_SRCDIR/examples/conv_nhwc/model.onnx"
check "opens" wait_for "nodes | step 0/16 | ? help"
keys 6 c
check "the decisions of the first transpose-push" wait_for "decisions of 06-transpose-push: 5"
keys j j x
check "x vetoes #3 and re-runs" wait_for "what-if: #3 vetoed; after step 6 12 nodes (were 10)"
check "the bar shows the new branch" wait_for "tpush 12*"
check "the record says vetoed" wait_for "vetoed (--set transpose-push.veto=3)"
keys x
check "x again lifts the veto" wait_for "what-if: #3 allowed again; after step 6 10 nodes (were 12)"
check "the bar is back" wait_for "tpush 10*"
check "the bar names the other branch" wait_for "[as run │ X: #3 vetoed, 12 nodes]"
keys X
check "X shows the other branch at the same step" \
    wait_for "branch #3 vetoed shown (X: back to as run); step 6: 12 nodes here, 10 there"
check "...and the bar says so" wait_for "[#3 vetoed │ X: as run, 10 nodes]"
check "...with its node counts" wait_for "tpush 12*"
keys D
check "D: the diff against the other branch" \
    wait_for "diff: 06-transpose-push, #3 vetoed (12 nodes), against the other branch, as run (10 nodes; X shows it), by node name"
check "...the two Transposes the veto keeps" wait_for "2 added, 0 removed, 0 replaced, 3 modified"
golden diff-branch
keys r
check "r runs both branches" \
    wait_for "ran 06-transpose-push of both branches on seeded random inputs: here (#3 vetoed) and there (as run) agree"
check "...both whole runs" \
    wait_for "branches: here #3 vetoed, 12 nodes, dnnl ~ ms; there (X) as run, 10 nodes, dnnl ~ ms"
keys s s
check "...in topological order" wait_for "by topological order (s)"
golden run-branches
keys X
check "X again: back to the first branch" wait_for "[as run │ X: #3 vetoed, 12 nodes]"
keys 1 5
check "at the last step" wait_for "step 15/16"
keys b
check "b: nothing breaks, on the run view's backend" \
    wait_for "bisect on fused: no rewrite of steps 1-15 changes the outputs"
keys q
check "q quits with 0" [ "$(wait_rc)" = 0 ]

# b bisects on the run view's backend (fused after the fusion step) with the --data inputs
# and the pipeline's --set: a fault in a fused group is found at the fusion that forms it
# (FusedNhwcConvRelu_1, conv1 + relu1: fusion's first rewrite, #15).
C="$GL_SRCDIR/examples/conv_nhwc"
start 170 30 GRAPHLAB_SET=dnnl.fault=FusedNhwcConvRelu_1 -- "$C/model.onnx" --data "$C/test_data_set_0"
check "opens with --data and a dnnl fault" wait_for "step 0/16"
keys 1 5
check "at the fusion step" wait_for "step 15/16"
keys b
check "b on fused finds the fusion that formed the faulty group" \
    wait_for "bisect on fused: #15 fusion conv-activation (rewrite 1 of 2) changes the outputs"
keys q
check "q quits with 0" [ "$(wait_rc)" = 0 ]
tap_done
