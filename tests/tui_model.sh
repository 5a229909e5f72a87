#!/bin/sh
# tui_model.sh — the model view and the search count (issue 24), through a real terminal
# (tmux, as tui.sh), at 80x24 and at 200x60, with colours and with NO_COLOR: `i` shows
# what the file says of itself (IR, opsets, producer, domain, model version, a doc string
# with an escape character shown escaped, metadata_props, functions) and the shown step's
# graph (inputs and outputs with symbolic dims, weights with units, the op histogram); it
# scrolls; Enter on an op lists its nodes. `/` with an attribute or a shape finds nodes and
# the status line says which match of how many, "no match for X" when none.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh" # (skips the script without tmux)
VIEW_MODEL="$SRC/tests/data/model_view.onnx"
TRANSFORMER="$SRC/examples/transformer_block/model.onnx"
# open_at COLS ROWS COLOR MODEL: a fresh session (COLOR "" or NO_COLOR=1); `what` names
# it in the checks
open_at() {
    what="$1x$2${3:+ NO_COLOR}"
    # shellcheck disable=SC2086 # COLOR is no word when empty
    start "$1" "$2" $3 -- "$4"
    check "$what: opens" wait_for "nodes | step 0/16"
}

# --- the model view, both sizes, with and without colours --------------------------------------
for size in "80 24" "200 60"; do
    for color in "" "NO_COLOR=1"; do
        # shellcheck disable=SC2086 # size is two words
        open_at $size "$color" "$VIEW_MODEL"
        set -- $size
        keys i
        check "$what: i shows the model" wait_for "model | step 0/16"
        check "$what: the file and its size" \
            wait_for "model …/data/model_view.onnx (699 B) at step 0/16 (00-input)"
        check "$what: IR and opsets" wait_for "opsets         ai.onnx 17, local 1"
        check "$what: producer name and version" wait_for "producer       pytorch 2.1.0"
        check "$what: model version" wait_for "model version  3"
        check "$what: the doc string's second line, escaped" \
            wait_for '               Second line \x1B[31mred\x1B[0m?'
        check "$what: symbolic dims by name" wait_for "  x            float[N,4,8,8]"
        check "$what: initializers with units" wait_for "4 nodes, 2 initializers (148 B)"
        check "$what: metadata_props" wait_for "  author = graphlab tests"
        check "$what: the function" \
            wait_for "  local:ScaledRelu(X, S) -> (Y), 2 nodes; attributes unused"
        check "$what: the op histogram" wait_for "  local:ScaledRelu 1"
        check "$what: nothing runs past the edge" fits "$1" "$2"
        if [ -n "$color" ]; then
            check "$what: the selection shows without colours" reverse_on "ir version     8"
        fi
        golden "model-$1x$2"
        keys G Enter
        check "$what: Enter on an op lists its nodes" wait_for "/ScaledRelu: 1 of 1"
        check "$what: ...in the node list" wait_for "nodes | step 0/16"
        keys q
        check "$what: q exits 0" [ "$(wait_rc)" = 0 ]
    done
done

# --- it scrolls; the graph part follows the step ------------------------------------------------
open_at 80 24 "" "$TRANSFORMER"
keys i
check "80x24 the ops start on the first page" wait_for "ops (17 kinds, 57 nodes)"
check "80x24: the last op is below the first page" not_on_screen "  Unsqueeze    1"
keys PgDn PgDn
check "80x24 PgDn reaches the last op" wait_for "  Unsqueeze    1"
golden model-scrolled-80x24
keys 2
check "80x24 at step 2 the outputs' inferred shape" wait_for "  hidden       float[1,seq,32]"
keys 1 5
check "80x24 at step 15 the fused ops" wait_for "at step 15/16 (15-fusion)"
keys q
check "80x24 q exits 0" [ "$(wait_rc)" = 0 ]

# --- search: which match of how many ---------------------------------------------------------------
for size in "80 24" "200 60"; do
    for color in "" "NO_COLOR=1"; do
        # shellcheck disable=SC2086 # size is two words
        open_at $size "$color" "$TRANSFORMER"
        set -- $size
        keys 2 / p e r m = 0 , 2 , 1 , 3
        check "$what search: the prompt counts as it goes" wait_for "/perm=0,2,1,3_  (1 of 4)"
        keys Enter
        check "$what search: an attribute's value, 1 of 4" \
            wait_for "/perm=0,2,1,3: 1 of 4 (n/N: next/previous)"
        keys n
        check "$what search: n, 2 of 4" wait_for "/perm=0,2,1,3: 2 of 4"
        keys N N
        check "$what search: N wraps, 4 of 4" wait_for "/perm=0,2,1,3: 4 of 4"
        if [ -n "$color" ]; then
            check "$what search: the match is selected without colours" reverse_on "context_transpose"
        fi
        golden "search-$1x$2"
        keys / '[' 1 , s e q , 4 , 8 ']' Enter
        check "$what search: a shape with a symbolic dim" wait_for "/[1,seq,4,8]: 4 of 4"
        keys / M a t M u l ' ' 1 x s e q Enter
        check "$what search: a name is no dims run" wait_for "no match for 'MatMul 1xseq'"
        keys v
        check "$what search: the graph view" wait_for "boxes, laid out in"
        keys / S o f t m a x Enter
        check "$what search: the graph view counts too" wait_for "/Softmax: 1 of 1"
        check "$what search: ...in the graph view" wait_for "graph | step 2/16"
        keys q
        check "$what search: q exits 0" [ "$(wait_rc)" = 0 ]
    done
done
tap_done
