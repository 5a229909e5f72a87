#!/bin/sh
# transpose_counts.sh — transpose-push and layout on the model corpora (tests/corpus.sh:
# in-tree, and shared when there), against ONNX Runtime: after the default pipeline
# (optimize --passes all: transpose-push, then layout and transpose-push again) a model
# has no more Transpose nodes than the graph ONNX Runtime builds at level basic (a shared
# model's M/ort_optimized/basic.txt, one "Op(...)" line per node; an in-tree model's
# info.json gives that count for its shape), exactly as many as the table below says
# where we know better than ORT, and still computes the reference outputs of
# M/test_data_set_0. The counts go to TAP diag lines.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
PASSES=all

# Transposes the default pipeline leaves, per model, where that is fewer than ORT's: the
# layout pass takes nhwc_convnet's four Convs to NHWC and every Transpose cancels (ORT
# basic keeps the two at the ends).
expected() {
    case $1 in
    nhwc_convnet | nhwc_convnet_mini) echo 0 ;;
    esac
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gltcount.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# transposes_in MODEL: the Transpose entry of op_histogram in `graphlab info --json`
# (0 when absent); fails when info does.
transposes_in() {
    "$GL" info --json "$1" >"$tmp/info.json" 2>"$tmp/err" || return 1
    awk '
        /"op_histogram": *\{/ { inside = 1; next }
        inside && /^ *}/ { inside = 0 }
        inside && /^ *"Transpose":/ { gsub(/[^0-9]/, ""); n = $0 }
        END { print n + 0 }' "$tmp/info.json"
}

# ort_transposes DIR: the Transpose nodes of ORT's level-basic listing (anchored: not
# ConvTranspose), else the count an in-tree model's info.json gives.
ort_transposes() {
    if [ -f "$1/ort_optimized/basic.txt" ]; then
        grep -c '^Transpose(' "$1/ort_optimized/basic.txt"
    else
        info_number "$1" max_transposes_after_default_pipeline
    fi
}

check_model() {
    name=$1 dir=$2
    model="$dir/model.onnx" out="$tmp/$name.onnx"
    ort=$(ort_transposes "$dir")
    if [ -z "$ort" ]; then
        not_ok "$name: no ONNX Runtime listing nor info.json count in $dir"
        return
    fi
    if ! before=$(transposes_in "$model"); then
        not_ok "$name: graphlab info reads the model"
        sed 's/^/# /' "$tmp/err"
        return
    fi
    if "$GL" optimize "$model" -o "$out" --passes "$PASSES" >"$tmp/out" 2>"$tmp/err"; then
        ok "$name: optimize with the default pipeline runs"
    else
        not_ok "$name: optimize with the default pipeline runs"
        sed 's/^/# /' "$tmp/err"
        return
    fi
    if ! after=$(transposes_in "$out"); then
        not_ok "$name: graphlab info reads the optimized model"
        sed 's/^/# /' "$tmp/err"
        return
    fi
    diag "$name: Transpose nodes $before in the model, $after after the default pipeline," \
        "$ort in ONNX Runtime's basic level"
    check "$name: no more Transposes than ONNX Runtime ($after <= $ort)" [ "$after" -le "$ort" ]
    want=$(expected "$name")
    if [ -n "$want" ]; then
        check "$name: $want Transposes after the default pipeline (got $after)" [ "$after" -eq "$want" ]
    fi

    data="$dir/test_data_set_0"
    if [ ! -d "$data" ]; then
        skip "$name: no test data"
    elif ! "$GL" run "$model" --data "$data" --rtol 1e-3 --atol 1e-4 >"$tmp/out" 2>"$tmp/err"; then
        skip "$name: the original model does not run yet: $(head -n 1 "$tmp/err")"
    elif "$GL" run "$out" --data "$data" --rtol 1e-3 --atol 1e-4 >"$tmp/out" 2>"$tmp/err"; then
        ok "$name: the optimized model computes the reference outputs"
    else
        not_ok "$name: the optimized model computes the reference outputs"
        head -n 5 "$tmp/err" "$tmp/out" | sed 's/^/# /'
    fi
}

for model in "$TREE_MODELS"/*/model.onnx "$SHARED_MODELS"/*/model.onnx; do
    [ -f "$model" ] || continue
    dir=$(dirname "$model")
    check_model "$(basename "$dir")" "$dir"
done
tap_done
