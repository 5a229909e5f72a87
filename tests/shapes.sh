#!/bin/sh
# shapes.sh — shape inference and constant folding on real models, through the program:
#  - `optimize --passes toposort,shape-inference` agrees with onnx.shape_inference on
#    every value (tests/shape_check.py), for the bundled examples and the model corpora
#    (tests/corpus.sh: in-tree, and shared when there);
#  - constant folding leaves no Shape, Gather or Constant node in the corpora's models
#    (torch exports, or shaped like them: every shape chain starts from static shapes);
#  - the folded models still compute the reference outputs (`graphlab run --data`),
#    where the original model runs at all (ops still missing: skipped).
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
PY="${GL_PYTHON:-}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glshapes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

have_onnx=no
if [ -n "$PY" ] && [ "$PY" != none ] && "$PY" -c 'import onnx' 2>/dev/null; then
    have_onnx=yes
fi

# The op histogram of a model, "Op count" per line (graphlab info --json).
ops_of() {
    "$GL" info --json "$1" | "$PY" -c '
import json, sys
for op, n in json.load(sys.stdin)["op_histogram"].items():
    print(op, n)'
}

# check_model NAME MODEL STATIC: inference agreement, folding (STATIC yes: no shape chain
# left), same outputs.
check_model() {
    name=$1 model=$2 static=$3
    dir=$(dirname "$model")
    mkdir -p "$tmp/$(dirname "$name")"
    typed="$tmp/$name-typed.onnx" folded="$tmp/$name-folded.onnx"

    # Our inference starts from scratch too: the model without its value_info.
    bare=$model
    if [ $have_onnx = yes ]; then
        bare="$tmp/$name-bare.onnx"
        "$PY" "$GL_SRCDIR/tests/shape_check.py" --strip "$model" "$bare"
    fi
    if "$GL" optimize "$bare" -o "$typed" --passes toposort,shape-inference \
        >"$tmp/out" 2>"$tmp/err"; then
        ok "$name: shape inference runs"
        if [ $have_onnx = yes ]; then
            if "$PY" "$GL_SRCDIR/tests/shape_check.py" "$model" "$typed" >"$tmp/cmp" 2>&1; then
                ok "$name: agrees with onnx.shape_inference"
            else
                not_ok "$name: agrees with onnx.shape_inference"
                sed 's/^/# /' "$tmp/cmp"
            fi
            diag "$(tail -n 1 "$tmp/cmp")"
        else
            skip "$name: no python with onnx"
        fi
    else
        not_ok "$name: shape inference runs"
        sed "s/^/# /" "$tmp/err"
        return
    fi

    if "$GL" optimize "$model" -o "$folded" \
        --passes toposort,shape-inference,constant-folding,dce >"$tmp/out" 2>"$tmp/err"; then
        ok "$name: constant folding runs"
    else
        not_ok "$name: constant folding runs"
        sed "s/^/# /" "$tmp/err"
        return
    fi
    if [ "$static" = yes ] && [ $have_onnx = yes ]; then
        left=$(ops_of "$folded" | grep -E '^(Shape|Gather|Constant) ' | tr '\n' ' ')
        check "$name: no Shape, Gather or Constant left${left:+ ($left)}" [ -z "$left" ]
    fi

    data="$dir/test_data_set_0"
    if [ ! -d "$data" ]; then
        skip "$name: no test data"
    elif ! "$GL" run "$model" --data "$data" --rtol 1e-3 --atol 1e-4 >"$tmp/out" 2>"$tmp/err"; then
        skip "$name: the original model does not run yet: $(head -n 1 "$tmp/err")"
    elif "$GL" run "$folded" --data "$data" --rtol 1e-3 --atol 1e-4 >"$tmp/out" 2>"$tmp/err"; then
        ok "$name: the folded model computes the reference outputs"
    else
        not_ok "$name: the folded model computes the reference outputs"
        head -n 5 "$tmp/err" "$tmp/out" | sed "s/^/# /"
    fi
}

for model in "$GL_SRCDIR"/examples/*/model.onnx; do
    check_model "examples/$(basename "$(dirname "$model")")" "$model" no
done
for model in "$TREE_MODELS"/*/model.onnx "$SHARED_MODELS"/*/model.onnx; do
    [ -f "$model" ] || continue
    case $model in "$TREE_MODELS"/*) corpus=tree ;; *) corpus=shared ;; esac
    check_model "$corpus/$(basename "$(dirname "$model")")" "$model" yes
done
tap_done
