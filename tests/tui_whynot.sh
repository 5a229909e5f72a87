#!/bin/sh
# tui_whynot.sh — "the why not is never silent" (issue 24) through a real terminal (tmux,
# as tui.sh), at 80x24 and 200x60, with and without NO_COLOR: on a GPT-2 MLP in the
# Hugging Face Conv1D form (tests/data/make_gpt2_conv1d.py) the constant-folding diff
# shows each folded constant's values, and the fusion step's decisions say that the Gelu
# moved before the Reshape and fused with its Gemm, and why the projection's Gemm was not
# fused with the residual Add (a near miss naming the Reshape between).
command -v tmux >/dev/null 2>&1 || { echo "1..0 # SKIP tmux not found"; exit 0; }
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab" MODEL="$GL_SRCDIR/tests/data/gpt2_conv1d.onnx" LANG=C.UTF-8
export LANG
. "$GL_SRCDIR/tests/tmux.sh"

# whynot COLS ROWS ENV: the checks at one size; the goldens in colour (capture-pane has
# no colours: NO_COLOR must read the same). fusion.probe=0: the rule table alone, the
# same on every CPU (without AVX-512 the target refuses the GeluTanh as a post-op:
# oneDNN's tanh is slow there, dn_eltwise_post_slow).
whynot() {
    cols=$1 rows=$2 env=$3 at="$1x$2${3:+ $3}"
    start "$cols" "$rows" GRAPHLAB_STABLE_TIMES=1 GRAPHLAB_SET=fusion.probe=0 $env -- "$MODEL"
    check "$at: opens" wait_for "step 0/16"
    keys 3 d
    check "$at: the diff of constant-folding" wait_for "diff: 03-constant-folding"
    check "$at: a folded int64 constant with its values" \
        wait_for "+ init 'flat': int64[2] 16 B = [-1, 8]"
    check "$at: a folded float scalar, bare" \
        wait_for "+ init 'kappa': float[] 4 B = 0.044715"
    [ -z "$env" ] && golden "whynot-diff-${cols}x${rows}"
    check "$at: the diff fits the terminal" fits "$cols" "$rows"
    keys Escape 1 5 c
    check "$at: the decisions of fusion" wait_for "decisions of 15-fusion: 3"
    check "$at: the move before the view" wait_for "move-before-view"
    check "$at: Gemm + Gelu fused" wait_for "gemm-activation"
    check "$at: the near miss, refused" wait_for "refused matmul-post-ops"
    keys f G
    check "$at: f: the near miss alone, its reason in the pane" \
        wait_for "not fused: near miss: Gemm -> Reshape"
    check "$at: ...naming the Reshape between" \
        wait_for "Reshape '/mlp/c_proj/Reshape_1' between Gemm '/mlp/c_proj/Gemm'"
    # (at 80 columns the status line cuts the step's time where no normalising finds it)
    [ -z "$env" ] && [ "$cols" = 200 ] && golden "whynot-decisions-${cols}x${rows}"
    check "$at: the decisions fit the terminal" fits "$cols" "$rows"
    keys q
    check "$at: q exits 0" [ "$(wait_rc)" = 0 ]
}

whynot 80 24 ""
whynot 200 60 ""
whynot 80 24 NO_COLOR=1
whynot 200 60 NO_COLOR=1
tap_done
