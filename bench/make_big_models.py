#!/usr/bin/python3
"""Write the large models the benchmarks load (never into the source tree).

    /usr/bin/python3 bench/make_big_models.py [OUTDIR] [--weights-mb MB] [--nodes N] [--huge]

OUTDIR (default /tmp/graphlab-bench) receives:

  big_weights.onnx      ~MB megabytes (default 100) of float32 weights inline, in a few
                        dozen MatMul+Add(+Relu) layers: measures bytes per second.
  many_nodes.onnx       ~N nodes (default 20000) of cheap ops with tiny weights: a ladder
                        of two rails with side branches and Transpose pairs: measures
                        per-node cost (names, attributes, value lookup, edges).
  many_nodes_100k.onnx  with --huge: the same ladder with 100000 nodes.
  chain_100k.onnx       with --huge: 100000 Relu nodes in one chain (names without '/'):
                        what `graphlab export` costs per node and per step.

Deterministic: fixed seeds, pinned IR version; the same arguments give the same bytes.
Needs onnx and numpy (Debian: python3-onnx python3-numpy).
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 7
SEED = 7
HIDDEN = 1024  # width of big_weights' square layers: 4 MiB of float32 per layer


def finish(graph, doc):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="graphlab-bench", producer_version="1",
                              doc_string=doc)
    model.ir_version = IR_VERSION
    return model


def big_weights_model(megabytes):
    """Square MatMul+Add+Relu layers until the weights reach `megabytes` MB."""
    rng = np.random.RandomState(SEED)
    layer_bytes = HIDDEN * HIDDEN * 4
    layers = max(1, int(round(megabytes * 1e6 / layer_bytes)))
    nodes, inits = [], []
    prev = "x"
    bound = 1.0 / math.sqrt(HIDDEN)
    for i in range(layers):
        w = rng.uniform(-bound, bound, size=(HIDDEN, HIDDEN)).astype(np.float32)
        b = rng.uniform(-bound, bound, size=(HIDDEN,)).astype(np.float32)
        inits += [numpy_helper.from_array(w, "layer%d.weight" % i),
                  numpy_helper.from_array(b, "layer%d.bias" % i)]
        last = i == layers - 1
        out = "y" if last else "layer%d_out" % i
        nodes += [
            helper.make_node("MatMul", [prev, "layer%d.weight" % i], ["layer%d_mm" % i],
                             name="layer%d_matmul" % i),
            helper.make_node("Add", ["layer%d_mm" % i, "layer%d.bias" % i],
                             ["layer%d_lin" % i if not last else out],
                             name="layer%d_bias" % i),
        ]
        if not last:
            nodes.append(helper.make_node("Relu", ["layer%d_lin" % i], [out],
                                          name="layer%d_relu" % i))
        prev = out
    graph = helper.make_graph(
        nodes, "big_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, HIDDEN])],
        initializer=inits)
    return finish(graph, "%d MatMul+Add layers of %dx%d float32" % (layers, HIDDEN, HIDDEN))


class Ladder:
    """Two rails `a` and `b` of shape [1,4,4,4] joined by cheap ops at every rung.

    Each rung costs a handful of nodes; every 16th rung opens a side branch that a later
    rung reads back (so values have several consumers and long live ranges), and every
    32nd rung wraps rail `a` in a Transpose pair (perm 0,2,3,1 and back)."""

    SHAPE = [1, 4, 4, 4]
    BRANCH_EVERY, BRANCH_SPAN, TRANSPOSE_EVERY = 16, 8, 32

    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.a, self.b = "a_in", "b_in"
        self.pending = {}  # rung index -> side-branch value to read back there
        self.counter = 0

    def fresh(self, stem):
        self.counter += 1
        return "%s_%d" % (stem, self.counter)

    def node(self, op, inputs, **attrs):
        out = self.fresh(op.lower())
        # every 10th node is unnamed, as converters often leave them
        name = "" if self.counter % 10 == 0 else "n%d_%s" % (self.counter, op)
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def weight(self):
        """A small per-channel constant: 4 floats."""
        name = self.fresh("w")
        data = self.rng.uniform(0.5, 1.0, size=(4,)).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def rung(self, k):
        a = self.node("Add", [self.a, self.b])
        a = self.node("Tanh", [a])
        b = self.node("Mul", [self.b, self.weight()])
        if k in self.pending:
            b = self.node("Add", [b, self.pending.pop(k)])
        b = self.node("Sigmoid", [b])
        if k % self.BRANCH_EVERY == 0:
            self.pending[k + self.BRANCH_SPAN] = self.node("Relu", [a])
        if k % self.TRANSPOSE_EVERY == 0:
            t = self.node("Transpose", [a], perm=[0, 2, 3, 1])
            t = self.node("Neg", [t])
            a = self.node("Transpose", [t], perm=[0, 3, 1, 2])
        self.a, self.b = a, b

    def build(self, target_nodes):
        k = 0
        while len(self.nodes) < target_nodes - 1:
            self.rung(k)
            k += 1
        self.nodes.append(helper.make_node("Add", [self.a, self.b], ["y"], name="join"))
        value = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                           self.SHAPE)
        graph = helper.make_graph(self.nodes, "many_nodes", [value("a_in"), value("b_in")],
                                  [value("y")], initializer=self.inits)
        return finish(graph, "a ladder of %d cheap nodes" % len(self.nodes))


def chain_model(n):
    """n Relu nodes, each reading the one before."""
    nodes, prev = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else "t%d" % i
        nodes.append(helper.make_node("Relu", [prev], [out], name="relu_%d" % i))
        prev = out
    value = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 16])
    graph = helper.make_graph(nodes, "chain", [value("x")], [value("y")])
    return finish(graph, "a chain of %d Relu nodes" % n)


def write(model, path, full_check):
    onnx.checker.check_model(model, full_check=full_check)
    onnx.save_model(model, path)
    print("wrote %s (%.1f MB, %d nodes)" % (path, os.path.getsize(path) / 1e6,
                                           len(model.graph.node)))


def refuse_source_tree(outdir):
    """The models are large: keep them out of the repository."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.abspath(outdir)
    if out == repo or out.startswith(repo + os.sep):
        sys.exit("make_big_models.py: %s is inside the source tree %s; "
                 "choose a folder outside it" % (out, repo))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", default="/tmp/graphlab-bench")
    parser.add_argument("--weights-mb", type=float, default=100.0)
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--huge", action="store_true",
                        help="also write many_nodes_100k.onnx and chain_100k.onnx")
    args = parser.parse_args()
    refuse_source_tree(args.outdir)
    os.makedirs(args.outdir, exist_ok=True)

    write(big_weights_model(args.weights_mb), os.path.join(args.outdir, "big_weights.onnx"),
          full_check=False)  # full_check copies the 100 MB through shape inference
    write(Ladder(np.random.RandomState(SEED + 1)).build(args.nodes),
          os.path.join(args.outdir, "many_nodes.onnx"), full_check=True)
    if args.huge:
        write(Ladder(np.random.RandomState(SEED + 2)).build(100000),
              os.path.join(args.outdir, "many_nodes_100k.onnx"), full_check=True)
        write(chain_model(100000), os.path.join(args.outdir, "chain_100k.onnx"),
              full_check=True)


if __name__ == "__main__":
    main()
