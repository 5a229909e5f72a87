#!/bin/sh
# bench/run.sh — generate the big models (if missing), build the benchmarks, run them.
#
#   bench/run.sh [BUILDDIR]      BUILDDIR: a configured build folder (default: the
#                                current folder if it has a Makefile)
# Environment:
#   GL_BENCH_DIR   where the generated models live (default /tmp/graphlab-bench; never
#                  inside the source tree)
#   GL_PYTHON      a python3 with onnx and numpy (default /usr/bin/python3)
#   RUNS           runs per measurement (default 5 for loads, 7 for the toposort, 20 for
#                  model runs)
#   TOPO_NODES     nodes of the toposort graph (default 100000)
#   HUGE=0         skip the 100k-node model
#   GL_SHARED_MODELS  the shared model corpus (default: ../shared/models beside the tree)
#   THREADS        threads of the oneDNN backend in bench_run (default 0: OpenMP's default)
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-.}
models=${GL_BENCH_DIR:-/tmp/graphlab-bench}
python=${GL_PYTHON:-/usr/bin/python3}
huge=${HUGE:-1}

if [ ! -f "$builddir/Makefile" ]; then
    echo "bench/run.sh: $builddir has no Makefile; configure a build folder first:" >&2
    echo "  mkdir -p /tmp/b && cd /tmp/b && $srcdir/configure && $srcdir/bench/run.sh" >&2
    exit 2
fi

want="$models/big_weights.onnx $models/many_nodes.onnx"
[ "$huge" = 1 ] && want="$want $models/many_nodes_100k.onnx $models/chain_100k.onnx"
missing=0
for f in $want; do [ -f "$f" ] || missing=1; done
if [ "$missing" = 1 ]; then
    huge_flag=""
    [ "$huge" = 1 ] && huge_flag="--huge"
    "$python" "$srcdir/bench/make_big_models.py" "$models" $huge_flag
fi

[ -f "$models/densenet121.onnx" ] ||
    "$python" "$srcdir/bench/make_densenet.py" "$models/densenet121.onnx"

make -C "$builddir" -s bench

# The largest models of the shared corpus, when it is there.
corpus=${GL_SHARED_MODELS:-$srcdir/../shared/models}
shared=""
for name in mobilenet_v2 transformer_encoder_layer; do
    f="$corpus/$name/model.onnx"
    [ -f "$f" ] && shared="$shared $f"
done

echo "== load: graphlab vs protobuf-c unpack =="
# shellcheck disable=SC2086 # word splitting of the model lists is wanted
"$builddir/bench/bench_load" -n "${RUNS:-5}" $shared $want
echo
echo "== toposort =="
"$builddir/bench/bench_toposort" -n "${TOPO_NODES:-100000}" -r "${RUNS:-7}"
echo
echo "== pipeline: keeping a snapshot per step vs only the result =="
# shellcheck disable=SC2086
"$builddir/bench/bench_pipeline" -n "${RUNS:-5}" $shared $models/many_nodes.onnx
echo
echo "== run: reference kernels vs oneDNN (Conv/MatMul/Gemm, one primitive per node) =="
# Every shared model and example with a test_data_set_0; THREADS=N for the dnnl backend.
runnable=""
for f in "$corpus"/*/model.onnx "$srcdir"/examples/*/model.onnx; do
    [ -d "$(dirname "$f")/test_data_set_0" ] && runnable="$runnable $f"
done
# shellcheck disable=SC2086
"$builddir/bench/bench_run" -n "${RUNS:-20}" -w 5 -t "${THREADS:-0}" $runnable
echo
echo "== transpose-push: time against graph size, toposort as the baseline =="
# TRANSPOSE_SIZES=N,N,... (default 2500,5000,10000,20000,40000 nodes)
"$builddir/bench/bench_transpose" -r "${RUNS:-5}" ${TRANSPOSE_SIZES:+-n "$TRANSPOSE_SIZES"}
echo
echo "== workbench graph view: neighbourhood layout and drawing latency =="
"$builddir/bench/bench_ui_graph" -r "${RUNS:-5}"
echo
echo "== renders: the drawing each model gets, what its layout costs, what degrading buys =="
# RENDER_TIMEOUT: seconds before a layout is killed (default 60)
all_models=""
for f in "$corpus"/*/model.onnx; do [ -f "$f" ] && all_models="$all_models $f"; done
# shellcheck disable=SC2086
"$builddir/bench/bench_render" -t "${RENDER_TIMEOUT:-60}" $all_models "$models/densenet121.onnx"
"$builddir/bench/bench_render" -v -t "${RENDER_TIMEOUT:-60}" "$models/densenet121.onnx"
echo
echo "== export: every step of a model to files (wall, user+sys with children, peak RSS) =="
out=$(mktemp -d "${TMPDIR:-/tmp}/glbench-export.XXXXXX")
big=""
[ "$huge" = 1 ] && big="$models/chain_100k.onnx"
# shellcheck disable=SC2086
for f in $all_models "$models/densenet121.onnx" $big; do
    rm -rf "$out/x"
    /usr/bin/time -f "%e s wall  %U s user  %S s sys  %M KB  $f" \
        "$builddir/graphlab" export "$f" -d "$out/x" >/dev/null
done
rm -rf "$out"

echo "== workbench keys: what each key costs on the 20k-node ladder =="
"$builddir/bench/bench_ui_keys" -r "${RUNS:-3}" "$models/many_nodes.onnx"
