#!/bin/sh
# bench/sweep_models.sh — graphlab on a corpus of models nobody here wrote (made by
# bench/export_torch_models.py, or the shared ones): each model's data set run on every
# backend, before and after the default pipeline, against the outputs the data set holds;
# then the node count after the pipeline next to ONNX Runtime's at level extended.
#
#   bench/sweep_models.sh CORPUS [BUILDDIR] [NAME...]
#
# CORPUS/NAME/model.onnx with CORPUS/NAME/test_data_set_0 (default NAME: every model).
# One line per (model, run): "rc=0" and graphlab's comparison line ("… 0 over tolerance:
# ok"); rc=1 a mismatch, rc=2 a failure. ORT_DIR as for vs_ort.sh; without node or
# onnxruntime-node the ORT column says "-". Tolerances: RTOL, ATOL (default 1e-3).
# Exit status: 0 when every run matched.
set -u
corpus=${1:?usage: bench/sweep_models.sh CORPUS [BUILDDIR] [NAME...]}
builddir=${2:-.}
[ $# -ge 2 ] && shift 2 || shift 1
gl="$builddir/graphlab"
srcdir=$(cd "$(dirname "$0")/.." && pwd)
rtol=${RTOL:-1e-3} atol=${ATOL:-1e-3}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -x "$gl" ] || { echo "bench/sweep_models.sh: no $gl; build first" >&2; exit 2; }
names=${*:-$(cd "$corpus" && for d in */; do [ -d "$d/test_data_set_0" ] && echo "${d%/}"; done)}
. "$srcdir/bench/ort_common.sh"

bad=0
for name in $names; do
    m="$corpus/$name/model.onnx" data="$corpus/$name/test_data_set_0"
    echo "== $name"
    for run in ref:none dnnl:none ref:all unfused:all fused:all; do
        "$gl" run "$m" --data "$data" --backend "${run%%:*}" --passes "${run#*:}" \
            --rtol "$rtol" --atol "$atol" >"$tmp/out" 2>&1
        rc=$?
        [ "$rc" -eq 0 ] || bad=1
        printf '%-12s rc=%d %s\n' "$run" "$rc" \
            "$(grep -v '^graphlab run: \|^# ' "$tmp/out" | tr '\n' ' ' | cut -c1-160)"
    done
    if "$gl" optimize "$m" -o "$tmp/opt.onnx" >"$tmp/out" 2>&1; then
        echo "nodes: loaded $(nodes "$m"), after the pipeline $(nodes "$tmp/opt.onnx")," \
            "ONNX Runtime extended $(ort_nodes "$m")"
    else
        bad=1
        echo "optimize failed: $(tail -1 "$tmp/out")"
    fi
done
exit "$bad"
