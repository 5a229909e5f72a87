'use strict';
// tests/data/ort_run.js — one run of ONNX Runtime (onnxruntime-node) for make_qdq_models.py:
// the expected outputs of the QDQ test models come from a runtime nobody here wrote, on
// its int8 kernels (graph optimization level `all` fuses the Q/DQ units into QLinearConv,
// QLinearMatMul and the like).
//
//   node tests/data/ort_run.js ORT_DIR < request.json > reply.json
//
// ORT_DIR holds node_modules/onnxruntime-node. The request (the python side reads and
// writes the TensorProto files, so this reads no protobuf):
//   {"model": PATH, "level": "all", "threads": 1,
//    "inputs": [{"name", "type": "float32"|"uint8"|..., "dims": [...], "data": BASE64}]}
// The reply: {"outputs": [{"name", "type", "dims", "data": BASE64}]} in the session's
// output order, data little-endian as in a TensorProto's raw_data.
const path = require('path');

const ARRAYS = {
    float32: Float32Array, float64: Float64Array, uint8: Uint8Array, int8: Int8Array,
    int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
};

function toTensor(ort, t) {
    const Arr = ARRAYS[t.type];
    if (!Arr) throw new Error(`ort_run.js: input ${t.name}: type ${t.type} is not supported`);
    const bytes = Buffer.from(t.data, 'base64');
    const copy = new Uint8Array(bytes.length); // aligned for the typed array
    copy.set(bytes);
    return new ort.Tensor(t.type, new Arr(copy.buffer), t.dims);
}

async function main() {
    const ortDir = process.argv[2];
    if (!ortDir) throw new Error('usage: node tests/data/ort_run.js ORT_DIR < request.json');
    const ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));
    const chunks = [];
    for await (const c of process.stdin) chunks.push(c);
    const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const session = await ort.InferenceSession.create(req.model, {
        graphOptimizationLevel: req.level || 'all', intraOpNumThreads: req.threads || 1,
        interOpNumThreads: 1, executionMode: 'sequential',
    });
    const feeds = {};
    for (const t of req.inputs) feeds[t.name] = toTensor(ort, t);
    const results = await session.run(feeds);
    const outputs = session.outputNames.map((name) => {
        const t = results[name];
        const d = t.data;
        return { name, type: t.type, dims: t.dims,
                 data: Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('base64') };
    });
    process.stdout.write(JSON.stringify({ outputs }) + '\n');
}

main().catch((e) => {
    console.error(e.message || String(e));
    process.exit(2);
});
