'use strict';
// bench/trace_nodes.js — two profiles in ONNX Runtime's format side by side, node by node.
//
//   node bench/trace_nodes.js A.json [B.json]
//
// Either file may be ONNX Runtime's own (bench/ort_time.js --profile) or graphlab's
// (graphlab profile --trace). Per node: the median over runs of its "<node>_kernel_time"
// events in µs, then the sum of those medians per op type, then per file the median of
// the whole runs ("model_run" events, graphlab's and ORT's alike) next to the sum of the
// node medians: their difference is what is not a kernel (the step loop, allocation).
// Nodes are matched by name; a node only one file has shows "-" in the other's column.
const fs = require('fs');

function median(xs) {
    const s = [...xs].sort((a, b) => a - b), n = s.length;
    return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function load(file) {
    const events = JSON.parse(fs.readFileSync(file, 'utf8'));
    const nodes = new Map(), runs = [];
    for (const e of events) {
        if (e.ph !== 'X')
            continue;
        if (e.cat === 'Session' && e.name === 'model_run')
            runs.push(e.dur);
        if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time'))
            continue;
        const name = e.name.slice(0, -'_kernel_time'.length);
        if (!nodes.has(name))
            nodes.set(name, { op: (e.args && e.args.op_name) || '?', dur: [] });
        nodes.get(name).dur.push(e.dur);
    }
    for (const n of nodes.values())
        n.us = median(n.dur);
    return { file, nodes, run_us: median(runs), runs: runs.length };
}

const files = process.argv.slice(2);
if (files.length < 1 || files.length > 2) {
    console.error('usage: node bench/trace_nodes.js A.json [B.json]');
    process.exit(2);
}
const ps = files.map(load);
const names = [...new Set(ps.flatMap((p) => [...p.nodes.keys()]))];
const us = (p, name) => (p.nodes.has(name) ? p.nodes.get(name).us : NaN);
const fmt = (x) => (Number.isNaN(x) ? '-' : x.toFixed(1)).padStart(9);
names.sort((x, y) => (us(ps[0], y) || 0) - (us(ps[0], x) || 0));

console.log(`${'node'.padEnd(44)} ${'op'.padEnd(20)}` + ps.map((_, i) => fmt(NaN).replace('-', 'ABCD'[i] + ' µs')).join(''));
for (const name of names) {
    const op = (ps.find((p) => p.nodes.has(name)).nodes.get(name)).op;
    console.log(`${name.slice(0, 44).padEnd(44)} ${op.slice(0, 20).padEnd(20)}` +
                ps.map((p) => fmt(us(p, name))).join(''));
}
const ops = new Map();
for (const p of ps)
    for (const n of p.nodes.values())
        ops.set(n.op, 0);
console.log('\nper op type (sum of node medians, µs)');
for (const op of [...ops.keys()].sort())
    console.log(`  ${op.padEnd(62)}` + ps.map((p) => fmt([...p.nodes.values()]
        .filter((n) => n.op === op).reduce((s, n) => s + n.us, 0))).join(''));
ps.forEach((p, i) => {
    const sum = [...p.nodes.values()].reduce((s, n) => s + n.us, 0);
    console.log(`${'ABCD'[i]}: ${p.file}: ${p.nodes.size} nodes, ${p.runs} runs; run median ` +
                `${p.run_us.toFixed(1)} µs, node medians sum to ${sum.toFixed(1)} µs`);
});
