#!/bin/sh
# fusion.sh — the `fusion` pass on the model corpora (tests/corpus.sh: the in-tree models,
# and the shared ones when present), through the default pipeline: the node count is at
# most ONNX Runtime's at level `extended` (a shared model's info.json count; an in-tree
# model's info.json gives the same bound for its shape), the fused model computes the
# reference outputs of M/test_data_set_0 on both backends, every exported step's .onnx
# does too, a saved fused model loaded again is recognized (its groups are not fused
# twice); with onnxruntime-node in $GL_ORT_NODE (default ~/.cache/graphlab-ort) ONNX
# Runtime runs the fused export to the same outputs, with GL_PYTHON's onnx the checker
# accepts it.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
ORT_NODE="${GL_ORT_NODE:-$HOME/.cache/graphlab-ort}"
TOL="--rtol 1e-3 --atol 1e-4"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glfusion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# nodes FILE: the main graph's node count from `graphlab info --json`.
nodes() { "$GL" info --json "$1" | sed -n 's/^ *"node_count": *\([0-9]*\).*/\1/p'; }
# ort_extended DIR: ONNX Runtime's node count at level extended, from DIR/info.json.
ort_extended() {
    tr -d ' \n' <"$1/info.json" |
        sed -n 's/.*"ort_optimized_graph":{.*"extended":{"saved":[a-z]*,"node_count":\([0-9]*\).*/\1/p'
}

# The ORT runner: inputs and outputs as TensorProto files (float), decoded here.
cat >"$tmp/ort.js" <<'EOF'
const fs = require('fs'), path = require('path');
const ort = require(process.argv[4] + '/node_modules/onnxruntime-node');
function varint(b, p) { let v = 0, s = 1; for (;;) { const x = b[p.i++]; v += (x & 127) * s; if (x < 128) return v; s *= 128; } }
function tensor(file) {
  const b = fs.readFileSync(file), p = {i: 0}, dims = [];
  let dt = 1, raw = null, floats = [];
  while (p.i < b.length) {
    const key = varint(b, p), f = Math.floor(key / 8), w = key & 7;
    if (w === 0) { const v = varint(b, p); if (f === 1) dims.push(v); else if (f === 2) dt = v; continue; }
    if (w === 5) { if (f === 4) floats.push(b.readFloatLE(p.i)); p.i += 4; continue; }
    if (w === 1) { p.i += 8; continue; }
    const len = varint(b, p), s = b.subarray(p.i, p.i + len); p.i += len;
    if (f === 1) { const q = {i: 0}; while (q.i < s.length) dims.push(varint(s, q)); }
    else if (f === 9) raw = s;
    else if (f === 4) for (let k = 0; k + 4 <= s.length; k += 4) floats.push(s.readFloatLE(k));
  }
  if (dt !== 1) throw new Error(file + ': dtype ' + dt + ', only float here');
  const n = dims.reduce((a, d) => a * d, 1), data = new Float32Array(n);
  for (let k = 0; k < n; k++) data[k] = raw ? raw.readFloatLE(4 * k) : floats[k];
  return new ort.Tensor('float32', data, dims);
}
(async () => {
  const [model, dir] = process.argv.slice(2);
  /* Optimizations off: ORT runs the graphlab.fused functions as saved. */
  const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'disabled'});
  const files = k => fs.readdirSync(dir).filter(f => f.startsWith(k)).sort();
  const feeds = {};
  files('input_').forEach((f, k) => { feeds[s.inputNames[k]] = tensor(path.join(dir, f)); });
  const out = await s.run(feeds);
  let worst = 0;
  files('output_').forEach((f, k) => {
    const want = tensor(path.join(dir, f)).data, got = out[s.outputNames[k]].data;
    if (got.length !== want.length) throw new Error('output ' + k + ' has ' + got.length + ' elements');
    for (let e = 0; e < got.length; e++)
      worst = Math.max(worst, Math.abs(got[e] - want[e]) / (1e-4 + 1e-3 * Math.abs(want[e])));
  });
  console.log('worst error over tolerance: ' + worst.toFixed(4));
  process.exit(worst <= 1 ? 0 : 1);
})().catch(e => { console.error('ORT: ' + e.message); process.exit(2); });
EOF

have_ort=no
if command -v node >/dev/null 2>&1 && [ -d "$ORT_NODE/node_modules/onnxruntime-node" ]; then
    have_ort=yes
fi
have_onnx=no
if [ -n "${GL_PYTHON:-}" ] && "$GL_PYTHON" -c 'import onnx' 2>/dev/null; then
    have_onnx=yes
fi

for dir in "$TREE_MODELS"/*/ "$SHARED_MODELS"/*/; do
    [ -f "$dir/model.onnx" ] || continue
    name=$(basename "$dir")
    out="$tmp/$name.onnx" data="$dir/test_data_set_0"
    if ! "$GL" optimize "$dir/model.onnx" -o "$out" --explain >"$tmp/explain" 2>"$tmp/err"; then
        not_ok "$name: optimize"
        sed 's/^/# /' "$tmp/err"
        continue
    fi
    # With the defaults (units of several oneDNN primitives grouped too) the node count
    # is at most ONNX Runtime's; fusion.units=0 leaves those units apart.
    got=$(nodes "$out") want=$(ort_extended "$dir")
    if [ -n "$want" ]; then
        check "$name: $got nodes by default, ONNX Runtime extended $want" [ "$got" -le "$want" ]
    else
        want=$(info_number "$dir" max_nodes_after_default_pipeline)
        check "$name: $got nodes by default, at most $want (info.json)" \
            [ "$got" -le "${want:-0}" ]
    fi
    check "$name: fusion applied" grep -q "^  #[0-9]* *APPLIED" "$tmp/explain"
    "$GL" info "$out" >"$tmp/info"
    check "$name: info counts fused groups by kind (no per-group counter)" \
        sh -c "grep -q '^  graphlab.fused:Fused[A-Za-z]* ' '$tmp/info' &&
               ! grep -q '^  graphlab.fused:.*_[0-9]' '$tmp/info'"
    for be in ref dnnl; do
        check "$name: the fused model computes the reference outputs ($be)" \
            "$GL" run "$out" --backend "$be" --data "$data" $TOL
    done
    # Loaded again: the groups are recognized, nothing more is fused.
    "$GL" optimize "$out" -o "$tmp/again.onnx" --passes fusion --explain >"$tmp/again" 2>&1
    check "$name: a reloaded fused model is recognized" grep -q "fused-groups" "$tmp/again"
    check "$name: and fused no further" sh -c "! grep -q 'APPLIED' '$tmp/again'"
    check "$name: with the same node count" [ "$(nodes "$tmp/again.onnx")" = "$got" ]
    # Every step of the export runs to the reference outputs.
    rm -rf "$tmp/export"
    if "$GL" export "$dir/model.onnx" -d "$tmp/export" >/dev/null 2>"$tmp/err"; then
        bad=""
        for step in "$tmp"/export/*.onnx; do
            "$GL" run "$step" --data "$data" $TOL >"$tmp/step.out" 2>&1
            step_rc=$?
            if [ "$step_rc" -ne 0 ]; then
                bad="$bad $(basename "$step")"
                # what the run said (exit code and its last lines), for a failure seen once
                diag "$(basename "$step"): exit $step_rc"
                tail -n 4 "$tmp/step.out" | sed 's/^/# /'
            fi
        done
        check "$name: every exported step computes the reference outputs${bad:+ (not:$bad)}" \
            [ -z "$bad" ]
    else
        not_ok "$name: export"
        sed 's/^/# /' "$tmp/err"
    fi
    if [ "$have_ort" = yes ]; then
        node "$tmp/ort.js" "$out" "$data" "$ORT_NODE" >"$tmp/ort" 2>&1
        rc=$?
        check "$name: ONNX Runtime runs the fused model to the reference outputs" [ "$rc" -eq 0 ]
        sed 's/^/# /' "$tmp/ort"
    else
        skip "$name: no onnxruntime-node in $ORT_NODE"
    fi
    if [ "$have_onnx" = yes ]; then
        check "$name: onnx.checker accepts the fused model" "$GL_PYTHON" -c '
import onnx, sys
onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "$out"
    else
        skip "$name: no python with onnx"
    fi
done

# exact-shapes: the per-channel and scalar operands stay out, the outputs do not change.
for dir in "$TREE_MODELS/mobilenet_mini" "$SHARED_MODELS/mobilenet_v2"; do
    [ -f "$dir/model.onnx" ] || continue
    "$GL" optimize "$dir/model.onnx" -o "$tmp/exact.onnx" --set fusion.exact-shapes=1 \
        >/dev/null 2>&1
    check "exact-shapes: $(basename "$dir") still computes the reference outputs" \
        "$GL" run "$tmp/exact.onnx" --data "$dir/test_data_set_0" $TOL
done
tap_done
