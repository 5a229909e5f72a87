#!/bin/sh
# bench/quantize_corpus.sh — QDQ versions of the benchmark corpus (issue 21), for
# `QDQ_MODELS=DIR bench/vs_ort.sh`: tests/data/make_qdq_models.py (our quantizer,
# tests/data/quantize.py, calibrated min/max on each model's test_data_set_0 by graphlab's
# reference run; expected outputs from ONNX Runtime's int8 kernels) on each model.
#
#   bench/quantize_corpus.sh [BUILDDIR] [OUTDIR]
#     BUILDDIR  a built folder: its graphlab calibrates (default: the current one)
#     OUTDIR    where NAME_qdq/ go (default ~/.cache/graphlab-qdq; never inside the tree)
# Environment:
#   GL_SHARED_MODELS  the shared corpus (default ../shared/models beside the tree)
#   TORCH_MODELS      bench/export_torch_models.py's folder (default ../tv beside the tree)
#   MODELS            names to quantize, looked up in both (default: the list below)
#   ORT_DIR           onnxruntime-node's folder (default ~/.cache/graphlab-ort, which
#                     bench/vs_ort.sh installs)
#   GL_PYTHON         a python3 with onnx and numpy (default /usr/bin/python3)
# A model found in neither folder is named and skipped.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-.}
out=${2:-${HOME:-/tmp}/.cache/graphlab-qdq}
gl="$builddir/graphlab"
shared=${GL_SHARED_MODELS:-$srcdir/../shared/models}
torch=${TORCH_MODELS:-$srcdir/../tv}
ort_dir=${ORT_DIR:-${HOME:-/tmp}/.cache/graphlab-ort}
python=${GL_PYTHON:-/usr/bin/python3}
names=${MODELS:-"mobilenet_v2 squeezenet1_1 shufflenet_v2_x0_5 nhwc_convnet mlp_ffn
transformer_encoder_layer resnet18 resnet50 mobilenet_v3_small efficientnet_b0
bert_layer_op13"}

if [ ! -x "$gl" ]; then
    echo "bench/quantize_corpus.sh: no $gl; build first (make -C BUILDDIR graphlab)" >&2
    exit 2
fi
mkdir -p "$out"
case "$(cd "$out" && pwd)/" in
"$srcdir"/*) echo "bench/quantize_corpus.sh: OUTDIR must be outside the source tree" >&2; exit 2 ;;
esac

dirs=""
for name in $names; do
    found=""
    for d in "$shared/$name" "$torch/$name"; do
        if [ -f "$d/model.onnx" ] && [ -d "$d/test_data_set_0" ]; then
            found=$d
            break
        fi
    done
    if [ -z "$found" ]; then
        echo "bench/quantize_corpus.sh: skipped $name: not in $shared nor $torch" >&2
    else
        dirs="$dirs $found"
    fi
done
[ -n "$dirs" ] || { echo "bench/quantize_corpus.sh: no model to quantize" >&2; exit 2; }
# shellcheck disable=SC2086 # dirs is a list of folders without blanks
"$python" "$srcdir/tests/data/make_qdq_models.py" --graphlab "$gl" --ort "$ort_dir" \
    --out "$out" $dirs
