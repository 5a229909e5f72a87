#!/usr/bin/env python3
"""trace_check.py — is a Chrome-trace JSON file one that Perfetto opens cleanly?

  trace_check.py FILE [RUN,...]

FILE is a JSON array of trace events or an object with "traceEvents" (both forms of the
Chrome trace format). Checked (issue 24):
  - every event has a "ph", an integer "pid" and "tid";
  - every "X" (complete) event has a "name", numbers "ts" >= 0 and "dur" >= 0, and a node
    slice ("cat": "Node") lasts: dur > 0;
  - on each track (pid, tid) slices nest: a slice that starts inside another ends inside
    it too, and every node slice lies inside a "model_run" of its track;
  - "M" (metadata) events name every process ("process_name") and every track
    ("thread_name", one name per track, no two tracks of a process with the same name) that
    an event uses, with a "thread_sort_index" per track;
  - with RUN,...: each run has a track named for it ("fused" or "fused (dnnl)"); the node
    slices of the track named "ref" say provider "CPUExecutionProvider", those of a track
    on oneDNN ("dnnl", "fused (dnnl)") that or "DnnlExecutionProvider".

Prints one line per problem and exits 1 when there is any; standard library only (and
profile_check.py beside it).
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_check import is_num, problems, want  # noqa: E402 (the checkers' one record)

# Times are microseconds written with at most 3 decimals (nanoseconds): sums of two of
# them read as doubles are off by far less than this.
EPS = 1e-6
MAX_REPORTED = 20

def load(path):
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        doc = doc.get("traceEvents")
    want(isinstance(doc, list) and doc, "the trace is a non-empty array of events "
         "(or an object with traceEvents)")
    return doc if isinstance(doc, list) else []


def label(e):
    return f"{e.get('name')!r} (tid {e.get('tid')}, ts {e.get('ts')}, dur {e.get('dur')})"


def check_event(e):
    """The fields of one event; False when it cannot be checked further."""
    if not want(isinstance(e, dict) and isinstance(e.get("ph"), str), f"event {e!r}: no ph"):
        return False
    ok = want(isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int),
              f"event {label(e)}: integer pid and tid")
    if e["ph"] != "X":
        return ok
    ok = want(isinstance(e.get("name"), str), f"event {label(e)}: a name") and ok
    ok = want(is_num(e.get("ts")) and e["ts"] >= 0, f"event {label(e)}: ts is a number >= 0") and ok
    ok = want(is_num(e.get("dur")) and e["dur"] >= 0,
              f"event {label(e)}: dur is a number >= 0") and ok
    if ok and e.get("cat") == "Node":
        ok = want(e["dur"] > 0, f"node slice {label(e)}: dur is 0") and ok
    return ok


def check_nesting(slices):
    """Slices of one track: sorted by start (the longer first on a tie), each must end
    within every slice still open when it starts."""
    open_ = []
    bad = 0
    for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
        end = e["ts"] + e["dur"]
        while open_ and open_[-1]["ts"] + open_[-1]["dur"] <= e["ts"] + EPS:
            open_.pop()
        if open_:
            parent = open_[-1]
            over = end - (parent["ts"] + parent["dur"])
            if over > EPS:
                bad += 1
                if bad <= MAX_REPORTED:
                    want(False, f"slice {label(e)} ends {over:.3f} us after its parent "
                         f"{label(parent)}")
        if e.get("cat") == "Node":
            want(any(p.get("name") == "model_run" for p in open_),
                 f"node slice {label(e)}: inside no model_run of its track")
        open_.append(e)
    want(bad <= MAX_REPORTED, f"... {bad - MAX_REPORTED} more slices end after their parents")


def check_names(events, runs):
    """Metadata: a process_name per pid, a thread_name and a thread_sort_index per track."""
    used = {(e["pid"], e["tid"]) for e in events if e["ph"] != "M"}
    meta = [e for e in events if e["ph"] == "M"]
    processes = {e["pid"] for e in meta if e.get("name") == "process_name" and
                 isinstance(e.get("args", {}).get("name"), str)}
    threads, sort_index = {}, set()
    for e in meta:
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if e.get("name") == "thread_name":
            if want(isinstance(args.get("name"), str) and args["name"],
                    f"thread_name of tid {e['tid']}: args.name is a string"):
                want((e["pid"], e["tid"]) not in threads, f"tid {e['tid']}: named twice")
                threads[(e["pid"], e["tid"])] = args["name"]
        elif e.get("name") == "thread_sort_index":
            want(isinstance(args.get("sort_index"), int), f"thread_sort_index of tid {e['tid']}: "
                 "args.sort_index is an integer")
            sort_index.add((e["pid"], e["tid"]))
    for pid in sorted({pid for pid, _ in used}):
        want(pid in processes, f"pid {pid}: no process_name metadata event")
    for pid, tid in sorted(used):
        want((pid, tid) in threads, f"tid {tid}: no thread_name metadata event")
        want((pid, tid) in sort_index, f"tid {tid}: no thread_sort_index metadata event")
    names = list(threads.values())
    want(len(names) == len(set(names)), f"two tracks with one name: {sorted(names)}")
    for run in runs:
        want(any(n == run or n.startswith(run + " (") for n in names),
             f"run {run}: no track named for it (tracks: {sorted(names)})")
    if runs:
        check_providers(events, threads)


def check_providers(events, threads):
    """What ran a node, as ORT names it, against the backend its track names."""
    providers = {}
    for e in events:
        if e["ph"] == "X" and e.get("cat") == "Node":
            track = threads.get((e["pid"], e["tid"]))
            providers.setdefault(track, set()).add((e.get("args") or {}).get("provider"))
    for track, seen in providers.items():
        if track == "ref":
            want(seen == {"CPUExecutionProvider"}, f"track ref: providers {sorted(map(str, seen))}")
        elif track == "dnnl" or (track or "").endswith("(dnnl)"):
            # a node oneDNN does not run falls to the reference kernels
            want(seen <= {"CPUExecutionProvider", "DnnlExecutionProvider"},
                 f"track {track}: providers {sorted(map(str, seen))}")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    events = load(sys.argv[1])
    runs = sys.argv[2].split(",") if len(sys.argv) == 3 else []
    good = [e for e in events if check_event(e)]
    tracks = {}
    for e in good:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for slices in tracks.values():
        check_nesting(slices)
    want(any(e.get("cat") == "Node" for e in good), "no node slices")
    check_names(good, runs)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
