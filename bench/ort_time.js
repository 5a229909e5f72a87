'use strict';
// bench/ort_time.js — time ONNX Runtime (onnxruntime-node) on one model, for vs_ort.sh.
//
//   node bench/ort_time.js --ort DIR --model M [--data DIR] [--threads N] [--warmup N]
//                          [--runs N] [--level disabled|basic|extended|all]
//                          [--profile PREFIX] [--save-outputs DIR]
//
// DIR is the folder holding node_modules/onnxruntime-node. Inputs are the data set's
// input_*.pb (serialized onnx.TensorProto, bound by name, else by position), one for
// every graph input, so both runtimes see the same numbers. Prints one JSON line:
// {"level", "threads", "runs", "median_ms", "min_ms", "max_ms", "max_abs_vs_data"}: wall
// time of each awaited session.run() after `warmup` untimed ones (at least one), and the
// largest difference of the first run's outputs from the data set's output_*.pb.
// --profile: ONNX Runtime writes its own profile of every run (PREFIX_<date>.json, the
// format graphlab profile --trace writes; bench/trace_nodes.js sums either per node);
// its name is the JSON's "profile".
// --save-outputs: the first run's outputs are written to DIR/output_N.pb (serialized
// onnx.TensorProto, named after the graph output, N its position): the expected outputs
// bench/rebatch.py gives a data set.
const fs = require('fs');
const path = require('path');

function args() {
    const a = { threads: 2, warmup: 5, runs: 20, level: 'all', data: '', profile: '',
                'save-outputs': '' };
    const argv = process.argv.slice(2);
    for (let i = 0; i < argv.length; i += 2) {
        const key = argv[i].replace(/^--/, '');
        if (!(key in a) && !['ort', 'model'].includes(key) || argv[i + 1] === undefined)
            throw new Error(`ort_time.js: bad argument ${argv[i]}`);
        a[key] = ['threads', 'warmup', 'runs'].includes(key) ? Number(argv[i + 1]) : argv[i + 1];
    }
    if (!a.ort || !a.model)
        throw new Error('ort_time.js: --ort DIR and --model M are required');
    return a;
}

// ---- a minimal onnx.TensorProto reader (the fields test data sets use) --------------------

function reader(buf) {
    let pos = 0;
    const varint = () => {
        let v = 0n, shift = 0n;
        for (;;) {
            if (pos >= buf.length) throw new Error('truncated TensorProto');
            const b = buf[pos++];
            v |= BigInt(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
            shift += 7n;
        }
    };
    return {
        done: () => pos >= buf.length,
        varint,
        bytes: () => {
            const n = Number(varint());
            const out = buf.subarray(pos, pos + n);
            pos += n;
            return out;
        },
        skip: (wire) => {
            if (wire === 0) varint();
            else if (wire === 1) pos += 8;
            else if (wire === 5) pos += 4;
            else if (wire === 2) pos += Number(varint());
            else throw new Error(`unsupported wire type ${wire}`);
        },
    };
}

const TYPES = { // TensorProto.DataType -> [ort type, typed array, element bytes]
    1: ['float32', Float32Array, 4], 2: ['uint8', Uint8Array, 1], 3: ['int8', Int8Array, 1],
    5: ['int16', Int16Array, 2], 6: ['int32', Int32Array, 4], 7: ['int64', BigInt64Array, 8],
    9: ['bool', Uint8Array, 1], 10: ['float16', Uint16Array, 2], 11: ['float64', Float64Array, 8],
};

function varintBytes(v) { // an unsigned (or two's complement int64) varint
    const out = [];
    let x = BigInt.asUintN(64, BigInt(v));
    do {
        out.push(Number(x & 0x7fn) | (x > 0x7fn ? 0x80 : 0));
        x >>= 7n;
    } while (x > 0n);
    return Buffer.from(out);
}

// an onnx.TensorProto of an ORT tensor: dims (1), data_type (2), name (8), raw_data (9)
function writeTensor(file, name, tensor) {
    const type = Object.keys(TYPES).find((k) => TYPES[k][0] === tensor.type);
    if (!type) throw new Error(`${name}: output type ${tensor.type} is not supported here`);
    const d = tensor.data;
    const raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
    const field = (key, bytes) => [varintBytes(key), varintBytes(bytes.length), bytes];
    fs.writeFileSync(file, Buffer.concat([
        ...tensor.dims.flatMap((n) => [varintBytes(1 << 3), varintBytes(n)]),
        varintBytes(2 << 3), varintBytes(Number(type)),
        ...field(8 << 3 | 2, Buffer.from(name, 'utf8')),
        ...field(9 << 3 | 2, raw),
    ]));
}

function copyOut(bytes, Arr) { // aligned copy of little-endian bytes
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    return new Arr(copy.buffer);
}

function readTensor(file) {
    const r = reader(fs.readFileSync(file));
    const dims = [], f32 = [], i64 = [], i32 = [], f64 = [];
    let type = 0, name = '', raw = null;
    // repeated scalar fields come packed (wire 2) or one by one
    const repeated = (wire, one, out) => {
        if (wire !== 2) { out.push(one()); return; }
        const sub = reader(r.bytes());
        while (!sub.done()) out.push(one(sub));
    };
    while (!r.done()) {
        const key = Number(r.varint()), field = key >> 3, wire = key & 7;
        if (field === 1) repeated(wire, (s = r) => Number(BigInt.asIntN(64, s.varint())), dims);
        else if (field === 2) type = Number(r.varint());
        else if (field === 8) name = r.bytes().toString('utf8');
        else if (field === 9) raw = r.bytes();
        else if (field === 4 && wire === 2) f32.push(...copyOut(r.bytes(), Float32Array));
        else if (field === 10 && wire === 2) f64.push(...copyOut(r.bytes(), Float64Array));
        else if (field === 7) repeated(wire, (s = r) => BigInt.asIntN(64, s.varint()), i64);
        else if (field === 5) repeated(wire, (s = r) => Number(BigInt.asIntN(32, s.varint())), i32);
        else r.skip(wire);
    }
    const t = TYPES[type];
    if (!t) throw new Error(`${file}: data type ${type} is not supported here`);
    const [ortType, Arr] = t;
    let data;
    if (raw) data = copyOut(raw, Arr);
    else if (type === 1) data = Float32Array.from(f32);
    else if (type === 11) data = Float64Array.from(f64);
    else if (type === 7) data = BigInt64Array.from(i64);
    else data = Arr.from(i32);
    return { name, ortType, data, dims };
}

// ---- timing -------------------------------------------------------------------------------

function median(xs) {
    const s = [...xs].sort((a, b) => a - b), n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

async function main() {
    const a = args();
    const ort = require(path.join(a.ort, 'node_modules', 'onnxruntime-node'));
    const session = await ort.InferenceSession.create(a.model, {
        graphOptimizationLevel: a.level, intraOpNumThreads: a.threads, interOpNumThreads: 1,
        executionMode: 'sequential',
        ...(a.profile ? { enableProfiling: true, profileFilePrefix: a.profile } : {}),
    });
    const feeds = {};
    if (a.data) {
        const files = fs.readdirSync(a.data).filter((f) => /^input_\d+\.pb$/.test(f))
            .sort((x, y) => parseInt(x.slice(6)) - parseInt(y.slice(6)));
        files.forEach((f, i) => {
            const t = readTensor(path.join(a.data, f));
            const name = session.inputNames.includes(t.name) ? t.name : session.inputNames[i];
            feeds[name] = new ort.Tensor(t.ortType, t.data, t.dims);
        });
    }
    if (Object.keys(feeds).length !== session.inputNames.length)
        throw new Error(`${a.model}: inputs ${session.inputNames.join(', ')}: give --data DIR ` +
                        'with an input_N.pb for each');
    // The data set's expected outputs tell whether the inputs were read right.
    const first = await session.run(feeds);
    let maxAbs = 0;
    if (a.data)
        session.outputNames.forEach((name, i) => {
            const file = path.join(a.data, `output_${i}.pb`);
            if (!fs.existsSync(file)) return;
            const want = readTensor(file).data, got = first[name].data;
            for (let k = 0; k < want.length && typeof want[k] === 'number'; k++)
                maxAbs = Math.max(maxAbs, Math.abs(got[k] - want[k]));
        });
    session.outputNames.forEach((name, i) => {
        if (a['save-outputs'])
            writeTensor(path.join(a['save-outputs'], `output_${i}.pb`), name, first[name]);
    });
    for (let i = 1; i < a.warmup; i++) await session.run(feeds);
    const ms = [];
    for (let i = 0; i < a.runs; i++) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    console.log(JSON.stringify({
        level: a.level, threads: a.threads, runs: a.runs, median_ms: median(ms),
        min_ms: Math.min(...ms), max_ms: Math.max(...ms), max_abs_vs_data: maxAbs,
        ...(a.profile ? { profile: session.endProfiling() } : {}),
    }));
}

main().catch((e) => {
    console.error(e.message || String(e));
    process.exit(2);
});
