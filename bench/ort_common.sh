# bench/ort_common.sh — shell functions vs_ort.sh and sweep_models.sh share (sourced, not
# run): where ONNX Runtime is, installing it, and counting a model's nodes in graphlab and
# in ONNX Runtime. The sourcing script sets
#   gl    the graphlab binary
#   tmp   a scratch folder it removes
# and may set ORT_DIR (default ~/.cache/graphlab-ort: never inside the source tree).

ort_dir=${ORT_DIR:-${HOME:-/tmp}/.cache/graphlab-ort}
ort_version=1.30.0

# ort_installed: onnxruntime-node $ort_version is in $ort_dir (and node runs)
ort_installed() {
    command -v node >/dev/null 2>&1 &&
        node -e "process.exit(require('$ort_dir/node_modules/onnxruntime-node/package.json')
                 .version === '$ort_version' ? 0 : 1)" 2>/dev/null
}

# ort_install: installs onnxruntime-node $ort_version into $ort_dir when missing, with
# `npm install --ignore-scripts` (its install script would fetch CUDA files); fails, with
# the reason on stdout, without node and npm or a registry
ort_install() {
    ort_installed && return 0
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "node and npm are needed to run ONNX Runtime"
        return 1
    fi
    echo "installing onnxruntime-node@$ort_version into $ort_dir ..." >&2
    mkdir -p "$ort_dir"
    if ! (cd "$ort_dir" && npm install --ignore-scripts --no-audit --no-fund --silent \
            "onnxruntime-node@$ort_version" >&2) || ! ort_installed; then
        echo "cannot install onnxruntime-node@$ort_version (no network or registry?)"
        return 1
    fi
}

# nodes FILE: the node count `graphlab info` reports, or nothing
nodes() { "$gl" info "$1" 2>/dev/null | sed -n 's/^graph .*: \([0-9]*\) nodes.*/\1/p'; }

# gl_pipeline_nodes MODEL: the node count after graphlab's default pipeline, or "-"
gl_pipeline_nodes() {
    "$gl" optimize "$1" -o "$tmp/gl_pipeline.onnx" >/dev/null 2>&1 &&
        nodes "$tmp/gl_pipeline.onnx" || echo -
}

# ort_nodes MODEL: the node count of the model ONNX Runtime builds at level extended (its
# optimizedModelFilePath), or "-" without it
ort_nodes() {
    ort_installed || { echo -; return; }
    node -e "
      const ort = require('$ort_dir/node_modules/onnxruntime-node');
      ort.InferenceSession.create('$1', {graphOptimizationLevel: 'extended',
        optimizedModelFilePath: '$tmp/ort_extended.onnx', intraOpNumThreads: 1})
        .catch((e) => { console.error(String(e)); process.exit(1); });" 2>/dev/null &&
        nodes "$tmp/ort_extended.onnx" || echo -
}
