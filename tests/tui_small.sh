#!/bin/sh
# tui_small.sh — the small fixes of issue 24 through a real terminal (tmux, as tui.sh), at
# 80x24 and 200x60, with colours and with NO_COLOR: X keeps the decisions view on the record
# selected before it (so "X j x" acts on the right one); the memory plan's step says the graph
# is unchanged and what it planned; a forced refusal says what was done; the op counts group
# fused groups by kind; a random run names the symbolic dims it took as 1.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"

export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh" # TIMEOUT, work, golden

CONV="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
BLOCK="$GL_SRCDIR/examples/transformer_block/model.onnx"

for size in "80 24" "200 60"; do
    set -- $size
    cols=$1 rows=$2
    for color in "" NO_COLOR=1; do
        at="${cols}x$rows${color:+ $color}"
        start "$cols" "$rows" GRAPHLAB_STABLE_TIMES=1 $color -- "$CONV"
        check "$at: opens" wait_for "step 0/16"
        # x on #3 (third row of the first transpose-push's decisions), then j: #4; X swaps
        # branches and the pane under the list still shows #4
        keys 6 c j j x
        check "$at: x vetoes #3" wait_for "what-if: #3 vetoed"
        keys j X
        check "$at: X shows the other branch" wait_for "branch as run shown"
        check "$at: ...with #4 still selected" wait_for "#4 transpose-push cancel applied"
        [ "$color" ] || golden "small-X-$cols"
        keys 1 6
        check "$at: the memory plan's step says the graph is unchanged" \
            wait_for "16-memory-plan: graph unchanged; 3 outputs in"
        keys l 1 5
        check "$at: the node list counts the groups by kind" \
            wait_for "6 nodes: FusedNhwcConvRelu 2,"
        # (at 80 columns the status line's time is cut, "29.89 …": no golden there)
        [ "$color" ] || [ "$cols" = 80 ] || golden "small-kinds-$cols"
        check "$at: nothing runs past the edge" fits "$cols" "$rows"
        keys q
        check "$at: q quits with 0" [ "$(wait_rc)" = 0 ]
    done
    # a symbolic dim: r names what the random inputs took
    start "$cols" "$rows" GRAPHLAB_STABLE_TIMES=1 -- "$BLOCK"
    check "${cols}x$rows: the transformer block opens" wait_for "step 0/"
    keys r
    check "${cols}x$rows: r says seq took 1" wait_for "seeded random inputs; seq=1"
    keys q
    check "${cols}x$rows: q quits with 0" [ "$(wait_rc)" = 0 ]
done

# a forced refusal says what it did (layout's region on the NCHW Conv of a small model)
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ]; then
    "$GL_PYTHON" - "$work/nchw.onnx" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
w = numpy_helper.from_array(np.full((3, 4, 3, 3), 0.1, np.float32), "w")
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
     helper.make_node("Relu", ["c"], ["y"], name="relu")],
    "nchw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 6])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
EOF
    start 200 60 -- "$work/nchw.onnx"
    check "the NCHW model opens" wait_for "step 0/16"
    keys 1 1 c
    check "layout refuses the region on cost" wait_for "stays channels-first"
    keys x
    check "x forces it" wait_for "what-if: #"
    check "...and the record says what was done" \
        wait_for "forced (--set layout.force="
    check "...not what the refusal would have left" sh -c "! $T capture-pane -p -t t | grep -q 'stays channels-first'"
    keys q
    check "q quits with 0" [ "$(wait_rc)" = 0 ]
fi
tap_done
