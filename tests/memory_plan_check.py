"""The "memory_plan" object of `graphlab optimize --json` against its contract.

memory_plan_check.py FILE [MAX_RATIO]: FILE holds optimize's JSON. Checks the keys and
types, every tensor's range aligned to 64 and inside the arena, lifetimes inside the
steps, in_place_of/view_of naming a tensor of the plan, naive >= peak >= live_max, and
(with MAX_RATIO) peak_bytes <= live_max_bytes * MAX_RATIO. Prints one line
"peak P live_max L naive N ratio R"; exits 1 on any difference.
"""
import json
import sys

PLAN_KEYS = {"peak_bytes": int, "naive_bytes": int, "live_max_bytes": int,
             "live_max_step": int, "steps": int, "unplanned": int, "tensors": list}
TENSOR_KEYS = {"name": str, "bytes": int, "first": int, "last": int, "offset": int,
               "in_place_of": (str, type(None)), "view_of": (str, type(None))}


def check(doc, max_ratio):
    bad = []
    plan = doc.get("memory_plan")
    if not isinstance(plan, dict):
        return ["no memory_plan object"], None
    for k, t in PLAN_KEYS.items():
        if not isinstance(plan.get(k), t) or isinstance(plan.get(k), bool):
            bad.append(f"memory_plan.{k}: {plan.get(k)!r} is not {t.__name__}")
    if bad:
        return bad, None
    names = {t.get("name") for t in plan["tensors"]}
    for i, t in enumerate(plan["tensors"]):
        for k, ty in TENSOR_KEYS.items():
            if k not in t or not isinstance(t[k], ty):
                bad.append(f"tensors[{i}].{k}: {t.get(k)!r}")
        if bad:
            continue
        if t["offset"] % 64:
            bad.append(f"{t['name']}: offset {t['offset']} is not aligned to 64")
        if t["offset"] + t["bytes"] > plan["peak_bytes"]:
            bad.append(f"{t['name']}: ends at {t['offset'] + t['bytes']}, past the arena")
        if not 0 <= t["first"] <= t["last"] < plan["steps"]:
            bad.append(f"{t['name']}: lives {t['first']}..{t['last']} of {plan['steps']} steps")
        for k in ("in_place_of", "view_of"):
            if t[k] is not None and t[k] not in names:
                bad.append(f"{t['name']}: {k} {t[k]!r} is not a planned tensor")
    peak, live, naive = plan["peak_bytes"], plan["live_max_bytes"], plan["naive_bytes"]
    if not naive >= peak >= live:
        bad.append(f"expected naive {naive} >= peak {peak} >= live max {live}")
    ratio = peak / live if live else 1.0
    if max_ratio is not None and ratio > max_ratio:
        bad.append(f"peak {peak} is {ratio:.3f} of live max {live}, over {max_ratio}")
    return bad, f"peak {peak} live_max {live} naive {naive} ratio {ratio:.3f}"


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    max_ratio = float(sys.argv[2]) if len(sys.argv) > 2 else None
    bad, line = check(doc, max_ratio)
    if line:
        print(line)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
