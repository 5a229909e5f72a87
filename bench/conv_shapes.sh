#!/bin/sh
# bench/conv_shapes.sh — resnet18's convolutions one at a time: graphlab's fused run
# against ONNX Runtime, per shape and thread count (issue 22).
#
#   ORT_DIR=/work/ort [BASE=/work/base/build/graphlab] [THREADS="1 2"] [REPS=20] \
#       bench/conv_shapes.sh BUILD_DIR [MODELS_DIR]
#
# MODELS_DIR (default: a temporary folder) is filled by bench/make_conv_shapes.py. For
# each shape and thread count it prints the fused convolution node's median and minimum
# milliseconds (graphlab profile: the conv node alone, its input and output conversions
# excluded), BASE's when given (run interleaved with BUILD's), and ONNX Runtime's whole
# session.run median and minimum (its NCHWc conv plus the reorders around it: an upper
# bound for its convolution). On a shared machine the minimum is the steadier figure.
set -eu
BUILD=${1:?usage: conv_shapes.sh BUILD_DIR [MODELS_DIR]}
HERE=$(cd "$(dirname "$0")" && pwd)
ORT_DIR=${ORT_DIR:?set ORT_DIR to the folder holding node_modules/onnxruntime-node}
THREADS=${THREADS:-1 2}
REPS=${REPS:-20}
BASE=${BASE:-}
MODELS=${2:-$(mktemp -d)}
[ -d "$MODELS/c64_56_s1" ] || /usr/bin/python3 "$HERE/make_conv_shapes.py" "$MODELS"

# The conv node's median and min (ms) from graphlab profile's JSON.
node_ms() {
    "$1" profile "$2/model.onnx" --data "$2/test_data_set_0" --passes all --backends fused \
        --threads "$3" --reps "$REPS" --json 2>/dev/null |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
            const n=JSON.parse(s).nodes.find(n=>/Conv/.test(n.op));
            console.log(`${n.ms.fused.toFixed(3)} ${n.min_ms.fused.toFixed(3)} ${n.impl}`)})'
}

printf '%-12s %3s  %-26s %-26s %s\n' shape thr "graphlab med/min ms" "base med/min ms" \
    "ORT med/min ms"
for dir in "$MODELS"/*/; do
    name=$(basename "$dir")
    for t in $THREADS; do
        base=-
        [ -n "$BASE" ] && base=$(node_ms "$BASE" "$dir" "$t" | cut -d' ' -f1,2)
        ours=$(node_ms "$BUILD/graphlab" "$dir" "$t")
        ort=$(node "$HERE/ort_time.js" --ort "$ORT_DIR" --model "$dir/model.onnx" \
                  --data "$dir/test_data_set_0" --threads "$t" --runs 50 |
              node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
                  const j=JSON.parse(s);console.log(`${j.median_ms.toFixed(3)} ${j.min_ms.toFixed(3)}`)})')
        printf '%-12s %3s  %-26s %-26s %s\n' "$name" "$t" "$ours" "$base" "$ort"
    done
done
