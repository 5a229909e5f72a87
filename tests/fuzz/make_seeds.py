#!/usr/bin/python3
"""Write the seed corpus of the fuzz targets: tests/fuzz/seeds/.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/fuzz/make_seeds.py [SHARED]
SHARED is the shared folder beside the tree (default ../shared), for the ONNX node
conformance models. The output is committed (about 150 KB), so fuzzing needs no python.

The seeds: the bundled examples, tests/data's good and bad models (but the ones listed in
LEFT_OUT), and from the conformance models the smallest one for each set of op types,
so every op the registry knows appears in some seed.
"""
import glob
import os
import shutil
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "seeds")
MAX_SEED = 65536  # fuzz.sh's -max_len: a longer seed would be cut

# Known findings a seed would hit at once: every run would stop on them and find nothing
# else. Put them back when they are fixed (hostile.sh keeps feeding them to every command).
# The reproducers are in tests/data/fuzz-finds/.
LEFT_OUT = {
    "function_fanout.onnx": "optimize never finishes (issue 9: calls expanded without a limit)",
}


def op_types(path):
    """The op types of a model's graph and subgraphs and functions, or None."""
    try:
        m = onnx.load(path, load_external_data=False)
    except Exception:  # noqa: BLE001 - a seed that onnx cannot read is still a seed
        return None
    ops = set()

    def walk(graph):
        for n in graph.node:
            ops.add((n.domain, n.op_type))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for g in a.graphs:
                    walk(g)

    walk(m.graph)
    for f in m.functions:
        for n in f.node:
            ops.add((n.domain, n.op_type))
    return frozenset(ops)


def copy(src, name):
    if os.path.getsize(src) > MAX_SEED:
        print("left out (over %d bytes): %s" % (MAX_SEED, src))
        return
    shutil.copyfile(src, os.path.join(OUT, name))


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "..", "shared")
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for path in sorted(glob.glob(os.path.join(TOP, "examples", "*", "model.onnx"))):
        copy(path, "example-%s.onnx" % os.path.basename(os.path.dirname(path)))
    copy(os.path.join(TOP, "tests", "data", "good_relu.onnx"), "good_relu.onnx")
    for path in sorted(glob.glob(os.path.join(TOP, "tests", "data", "bad", "*.onnx"))):
        name = os.path.basename(path)
        if name in LEFT_OUT:
            print("left out: %s: %s" % (name, LEFT_OUT[name]))
            continue
        copy(path, "bad-" + name)
    best = {}
    node = os.path.join(shared, "conformance", "node")
    for path in sorted(glob.glob(os.path.join(node, "*", "model.onnx"))):
        ops = op_types(path)
        if not ops:
            continue
        size = os.path.getsize(path)
        if ops not in best or size < best[ops][0]:
            best[ops] = (size, path)
    for size, path in sorted(best.values(), key=lambda sp: sp[1]):
        case = os.path.basename(os.path.dirname(path))
        if case in LEFT_OUT:
            print("left out: %s: %s" % (case, LEFT_OUT[case]))
            continue
        copy(path, "conf-%s.onnx" % case)
    files = os.listdir(OUT)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in files)
    print("%d seeds, %d bytes" % (len(files), total))


if __name__ == "__main__":
    main()
