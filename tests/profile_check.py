#!/usr/bin/env python3
"""profile_check.py — validate `graphlab profile` output against its contracts.

  profile_check.py json FILE BACKEND,...     the --json shape of issues 10 and 11 / DESIGN.md
                                             (runs fused and unfused: groups, members)
  profile_check.py trace FILE [REFERENCE]    --trace against ONNX Runtime's profile format:
                                             with REFERENCE (an ORT profile), every key and
                                             event kind we write must be one ORT writes
                                             (but the track names, "ph": "M": see
                                             trace_check.py)

Prints one line per problem and exits 1 when there is any; standard library only.
"""
import json
import sys

problems = []


def want(cond, what):
    if not cond:
        problems.append(what)
    return cond


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_json(path, backends):
    with open(path) as f:
        doc = json.load(f)
    for key, kind in (("model", str), ("threads", int), ("reps", int), ("runs", dict),
                      ("nodes", list)):
        want(isinstance(doc.get(key), kind), f"top-level '{key}' is a {kind.__name__}")
    runs = doc.get("runs", {})
    want(sorted(runs) == sorted(backends), f"runs has {sorted(runs)}, expected {backends}")
    for b, r in runs.items():
        for k in ("median_ms", "min_ms", "max_ms"):
            want(is_num(r.get(k)) and r[k] >= 0, f"runs.{b}.{k} is a number >= 0")
        if all(is_num(r.get(k)) for k in ("median_ms", "min_ms", "max_ms")):
            want(r["min_ms"] <= r["median_ms"] <= r["max_ms"], f"runs.{b}: min <= median <= max")
        for k in ("node_ms", "node_min_ms", "node_max_ms"):
            want(is_num(r.get(k)) and r[k] >= 0, f"runs.{b}.{k} is a number >= 0")
        if all(is_num(r.get(k)) for k in ("node_min_ms", "node_max_ms")):
            want(r["node_min_ms"] <= r["node_max_ms"], f"runs.{b}: node_min_ms <= node_max_ms")
        if "expected" in r:
            want(isinstance(r.get("expected_ok"), bool), f"runs.{b}.expected_ok is a bool")
            for e in r["expected"]:
                want(isinstance(e.get("output"), str) and isinstance(e.get("ok"), bool) and
                     is_num(e.get("max_abs")), f"runs.{b}.expected: {{output, ok, max_abs}}")
    nodes = doc.get("nodes", [])
    want(len(nodes) > 0, "nodes is not empty")
    for n in nodes:
        name = n.get("name")
        for key in ("name", "op", "backend", "impl"):
            want(isinstance(n.get(key), str), f"node {name}: '{key}' is a string")
        ms = n.get("ms")
        if want(isinstance(ms, dict), f"node {name}: 'ms' is an object"):
            want(sorted(ms) == sorted(backends), f"node {name}: ms has {sorted(ms)}")
            for b, v in ms.items():
                want(v is None or (is_num(v) and v >= 0), f"node {name}: ms.{b} >= 0 or null")
        over = n.get("written_over", "absent")
        want(over is None or (isinstance(over, str) and over != ""),
             f"node {name}: 'written_over' a value name or null")
        for key in ("flops", "bytes"):
            v = n.get(key, "absent")
            want(v is None or (isinstance(v, int) and v >= 0), f"node {name}: '{key}' int or null")
        if n.get("op") in ("Conv", "MatMul", "Gemm") and n.get("depth", 0) == 0:
            want(isinstance(n.get("flops"), int) and n["flops"] > 0, f"node {name}: flops counted")
        check_group(n, nodes, backends)
        check_ratios(n, backends)
        cmp = n.get("compare", "absent")
        compared = len(backends) > 1 and "ref" in backends
        if cmp is None:
            want(not compared or n.get("depth", 0) > 0 or n.get("ms", {}).get(backends[-1]) is None,
                 f"node {name}: compared with the reference")
        elif want(isinstance(cmp, dict), f"node {name}: compare is an object or null"):
            for key in ("max_abs", "max_rel", "nmse"):
                want(key in cmp and (cmp[key] is None or is_num(cmp[key])),
                     f"node {name}: compare.{key}")


def check_group(n, nodes, backends):
    """A fused group's row: its members, each a row under it, and its unfused time the
    sum of theirs; a member's row names its group."""
    name, ms = n.get("name"), n.get("ms") or {}
    members = n.get("members", "absent")
    if members != "absent" and want(isinstance(members, list) and members and
                                    all(isinstance(m, str) for m in members),
                                    f"group {name}: members is a list of names"):
        rows = [r for r in nodes if r.get("group") == name]
        want(sorted(r.get("name") for r in rows) == sorted(members) or "unfused" not in backends,
             f"group {name}: a row per member under it")
        if "unfused" in backends and ms.get("fused") is not None:
            total = sum((r.get("ms") or {}).get("unfused") or 0 for r in rows)
            u = ms.get("unfused")
            want(is_num(u) and abs(u - total) <= 1e-5 + 1e-4 * total,
                 f"group {name}: ms.unfused {u} is its members' sum {total}")
    group = n.get("group")
    if group is not None:
        g = [r for r in nodes if r.get("name") == group and "members" in r]
        want(len(g) == 1 and name in g[0]["members"], f"member {name}: group {group} lists it")
        want(n.get("depth") == g[0].get("depth", 0) + 1 if g else False,
             f"member {name}: one deeper than its group")


def check_ratios(n, backends):
    """speedup and fusion: {value, approx, same_kernel}; same_kernel implies approx (shown
    as ≈, never as a speedup)."""
    name = n.get("name")
    fusion = "fused" in backends and "unfused" in backends
    want(("fusion" in n) == fusion, f"node {name}: a fusion ratio exactly when fused and unfused ran")
    for key in ("speedup", "fusion"):
        r = n.get(key)
        if r is None:
            continue
        if want(isinstance(r, dict), f"node {name}: {key} is an object"):
            want(r.get("value") is None or (is_num(r["value"]) and r["value"] > 0),
                 f"node {name}: {key}.value > 0 or null")
            want(isinstance(r.get("approx"), bool) and isinstance(r.get("same_kernel"), bool),
                 f"node {name}: {key}.approx, same_kernel are bools")
            want(not r.get("same_kernel") or r.get("approx"), f"node {name}: {key}: same kernel is approx")
    if fusion and "members" in n:
        want(n.get("decision") is None or (isinstance(n["decision"], int) and n["decision"] >= 0),
             f"group {name}: decision is an id or null")
        want(is_num(n.get("lost_ms")) and n["lost_ms"] >= 0, f"group {name}: lost_ms >= 0")


def kinds(events):
    """(cat, name pattern) of each event, and the keys used per cat and in Node args."""
    out = set()
    for e in events:
        name = e.get("name", "")
        out.add((e.get("cat"), "*_kernel_time" if name.endswith("_kernel_time") else name))
    return out


def check_trace(path, reference):
    with open(path) as f:
        events = json.load(f)
    if not want(isinstance(events, list) and events, "the trace is a non-empty JSON array"):
        return
    # ORT writes no metadata events (track names, tests/trace_check.py checks them): the
    # rest must read as ORT's, but for times in microseconds with nanosecond decimals
    events = [e for e in events if e.get("ph") != "M"]
    for e in events:
        for key, kind in (("cat", str), ("name", str), ("ph", str), ("pid", int), ("tid", int),
                          ("ts", (int, float)), ("dur", (int, float)), ("args", dict)):
            want(isinstance(e.get(key), kind), f"event {e.get('name')}: '{key}' is a {kind}")
        want(e.get("ph") == "X", f"event {e.get('name')}: ph is X")
        want(e.get("ts", -1) >= 0 and e.get("dur", -1) >= 0, f"event {e.get('name')}: ts, dur >= 0")
        if e.get("cat") == "Node":
            a = e.get("args", {})
            want(e["name"].endswith("_kernel_time"), f"node event {e['name']}: <node>_kernel_time")
            for key in ("op_name", "provider", "node_index"):
                want(isinstance(a.get(key), str), f"node event {e['name']}: args.{key} is a string")
            for key in ("input_type_shape", "output_type_shape"):
                ok = isinstance(a.get(key), list) and all(
                    isinstance(t, dict) and len(t) == 1 and
                    all(isinstance(d, int) for d in list(t.values())[0]) for t in a[key])
                want(ok, f"node event {e['name']}: args.{key} is [{{dtype: [dims]}}]")
    ours = kinds(events)
    want(("Node", "*_kernel_time") in ours, "node events present")
    want(("Session", "model_run") in ours, "model_run events present")
    if not reference:
        return
    with open(reference) as f:
        ref = json.load(f)
    theirs = kinds(ref)
    want(ours <= theirs, f"event kinds ORT does not write: {sorted(map(str, ours - theirs))}")
    for cat in ("Session", "Node"):
        ref_keys = set().union(*(e.keys() for e in ref if e.get("cat") == cat))
        our_keys = set().union(*(e.keys() for e in events if e.get("cat") == cat))
        want(our_keys == ref_keys, f"{cat} event keys {sorted(our_keys)} != ORT's {sorted(ref_keys)}")
    ref_args = set().union(*(e["args"].keys() for e in ref if e.get("cat") == "Node"))
    our_args = set().union(*(e["args"].keys() for e in events if e.get("cat") == "Node"))
    want(our_args <= ref_args, f"Node args ORT does not write: {sorted(our_args - ref_args)}")
    for key in ("op_name", "provider", "input_type_shape", "output_type_shape"):
        want(key in our_args, f"Node args have {key}")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("json", "trace"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "json":
        check_json(sys.argv[2], sys.argv[3].split(",") if len(sys.argv) > 3 else ["ref"])
    else:
        check_trace(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
