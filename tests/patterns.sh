#!/bin/sh
# patterns.sh — the `patterns` pass on the model corpora (tests/corpus.sh: the in-tree
# models, and the shared ones when there), through `graphlab optimize` with the default
# pipeline up to fusion (which would hide the ops counted here in its groups; fusion.sh
# tests the whole): what it must find (the decomposed LayerNorms and the erf Gelu that
# torch exports at opset 13, the Mul/Add after nhwc_convnet's Conv, a BatchNormalization
# after a Conv), that the saved model still computes the reference outputs of
# M/test_data_set_0, and, with onnx, that onnx.checker accepts the saved model-local
# functions.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
PASSES=toposort,shape-inference,constant-folding,cse,dce,transpose-push,constant-folding,cse,dce
PASSES=$PASSES,patterns,layout,transpose-push
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glpatterns.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# count OP FILE: the op's entry in `graphlab info --json`'s op_histogram (0 when absent).
count() {
    "$GL" info --json "$2" | awk -v op="\"$1\":" '
        /"op_histogram": *\{/ { inside = 1; next }
        inside && /^ *}/ { inside = 0 }
        inside && index($1, op) == 1 { gsub(/[^0-9]/, "", $2); n = $2 }
        END { print n + 0 }'
}

# expect NAME "OP=N OP=N" RULE...: optimize, then the counts, the decisions, the outputs
# (nothing when the corpora have no model NAME: a shared one is absent).
expect() {
    name=$1 counts=$2
    shift 2
    dir=$(model_dir "$name") || return 0
    out="$tmp/$name.onnx"
    if ! "$GL" optimize "$dir/model.onnx" -o "$out" --passes "$PASSES" --explain \
        >"$tmp/explain" 2>"$tmp/err"; then
        not_ok "$name: optimize"
        sed 's/^/# /' "$tmp/err"
        return
    fi
    sed -n '/^[0-9]*-patterns:/,/^$/p' "$tmp/explain" | cut -c1-200 | sed 's/^/# /'
    for c in $counts; do
        op=${c%=*} want=${c#*=}
        got=$(count "$op" "$out")
        check "$name: $want $op after the pipeline (got $got)" [ "$got" -eq "$want" ]
    done
    for rule in "$@"; do
        check "$name: patterns applied $rule" grep -q "APPLIED  $rule:" "$tmp/explain"
    done
    "$GL" run "$out" --data "$dir/test_data_set_0" --rtol 1e-3 --atol 1e-4 >"$tmp/run" 2>&1
    rc=$?
    check "$name: the optimized model computes the reference outputs" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/run"
    if [ -n "${GL_PYTHON:-}" ] && "$GL_PYTHON" -c 'import onnx' 2>/dev/null; then
        check "$name: onnx.checker accepts the saved model" "$GL_PYTHON" -c '
import onnx, sys
onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "$out"
    else
        skip "$name: no python with onnx"
    fi
}

expect encoder_op13_mini \
    "graphlab:LayerNormalization=2 graphlab:Gelu=1 ReduceMean=0 Erf=0 Sqrt=0" layer-norm gelu-erf
expect mlp_ffn_mini "graphlab:Gelu=1 Erf=0" gelu-erf
expect encoder_op17_mini "graphlab:Gelu=1 LayerNormalization=2 Erf=0" gelu-erf
expect nhwc_convnet_mini "graphlab:NhwcConv=4 Mul=0 Add=0" fold-mul fold-add
expect mobilenet_mini "Conv=22 BatchNormalization=0" fold-batchnorm
# the shared models they stand for
expect transformer_encoder_layer_op13 \
    "graphlab:LayerNormalization=2 graphlab:Gelu=1 ReduceMean=0 Erf=0 Sqrt=0" layer-norm gelu-erf
expect mlp_ffn "graphlab:Gelu=1 Erf=0" gelu-erf
expect transformer_encoder_layer "graphlab:Gelu=1 LayerNormalization=2 Erf=0" gelu-erf
expect nhwc_convnet "graphlab:NhwcConv=4 Mul=0 Add=0" fold-mul fold-add
expect mobilenet_v2 "Conv=52"
tap_done
