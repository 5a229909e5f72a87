#!/usr/bin/python3
"""Write a GPT-like decoder whose weights live in one external-data file (issue 23).

    /usr/bin/python3 bench/make_big_decoder.py [OUTDIR] [--layers 24] [--hidden 1024]
                                               [--seq 16] [--heads 16]

OUTDIR (default /tmp/graphlab-bench/decoder, never inside the source tree) receives:

  model.onnx            the graph (a few hundred kB): LayerNorm, attention with a causal
                        mask (Reshape/Transpose/MatMul/Softmax), an MLP with Gelu written
                        out with Erf, residual Adds; opset 17, IR 8.
  weights.data          every initializer over 1 kB, in one file (ONNX external data,
                        `location` and `offset`): 24 layers of hidden 1024 make 302M
                        parameters, 1.2 GB.
  test_data_set_0/      input_0.pb ([1, seq, hidden] float32) and output_0.pb, the output
                        computed here with numpy in float64 then rounded: what graphlab and
                        ONNX Runtime must both reproduce.

The weights are small (normal, std 0.02, as GPT-2 initialises them) so that 24 residual
layers stay finite. Deterministic: the same arguments give the same bytes. Writing 1.2 GB
takes about a minute. Needs onnx and numpy (Debian: python3-onnx python3-numpy).
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
SEED = 23


class Decoder:
    """Builds the graph and, alongside, the numpy reference of the same computation."""

    def __init__(self, args):
        self.args = args
        self.rng = np.random.RandomState(SEED)
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(f"/{op.lower()}") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=outs[0] + "/" + op,
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, stem, array):
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, stem, shape, std=0.02):
        return self.const(stem, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def layer_norm(self, x, ref):
        h = self.args.hidden
        gamma = (1.0 + self.rng.standard_normal(h) * 0.02).astype(np.float32)
        beta = (self.rng.standard_normal(h) * 0.02).astype(np.float32)
        y = self.node("LayerNormalization", [x, self.const("ln.g", gamma),
                                             self.const("ln.b", beta)], axis=-1,
                      epsilon=1e-5)
        mean = ref.mean(-1, keepdims=True)
        var = ((ref - mean) ** 2).mean(-1, keepdims=True)
        return y, (ref - mean) / np.sqrt(var + 1e-5) * gamma + beta

    def linear(self, x, ref, n_in, n_out):
        w = (self.rng.standard_normal((n_in, n_out)) * 0.02).astype(np.float32)
        b = (self.rng.standard_normal(n_out) * 0.02).astype(np.float32)
        y = self.node("MatMul", [x, self.const("w", w)])
        y = self.node("Add", [y, self.const("b", b)])
        return y, ref @ w.astype(np.float64) + b

    def attention(self, x, ref):
        a = self.args
        s, h, nh = a.seq, a.hidden, a.heads
        dh = h // nh
        qkv, qkv_ref = self.linear(x, ref, h, 3 * h)
        q, k, v = self.node("Split", [qkv, self.const("split", np.array([h, h, h], np.int64))],
                            n_out=3, axis=-1)
        heads = self.const("heads", np.array([1, s, nh, dh], np.int64))
        q = self.node("Transpose", [self.node("Reshape", [q, heads])], perm=[0, 2, 1, 3])
        k = self.node("Transpose", [self.node("Reshape", [k, heads])], perm=[0, 2, 3, 1])
        v = self.node("Transpose", [self.node("Reshape", [v, heads])], perm=[0, 2, 1, 3])
        scores = self.node("MatMul", [q, k])
        scores = self.node("Div", [scores, self.const("scale",
                                                      np.array(np.sqrt(dh), np.float32))])
        mask = np.triu(np.full((s, s), -1e4, np.float32), 1)
        scores = self.node("Add", [scores, self.const("mask", mask)])
        probs = self.node("Softmax", [scores], axis=-1)
        ctx = self.node("MatMul", [probs, v])
        ctx = self.node("Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = self.node("Reshape", [ctx, self.const("merge", np.array([1, s, h], np.int64))])
        # The same computation in float64, for the reference output.
        qr, kr, vr = np.split(qkv_ref, 3, axis=-1)
        qr, kr, vr = (t.reshape(1, s, nh, dh).transpose(0, 2, 1, 3) for t in (qr, kr, vr))
        sr = qr @ kr.transpose(0, 1, 3, 2) / np.float64(np.float32(np.sqrt(dh))) + mask
        sr = np.exp(sr - sr.max(-1, keepdims=True))
        sr /= sr.sum(-1, keepdims=True)
        ctx_ref = (sr @ vr).transpose(0, 2, 1, 3).reshape(1, s, h)
        return self.linear(ctx, ctx_ref, h, h)

    def gelu(self, x, ref):
        from math import erf, sqrt
        t = self.node("Div", [x, self.const("sqrt2", np.array(sqrt(2.0), np.float32))])
        t = self.node("Erf", [t])
        t = self.node("Add", [t, self.const("one", np.array(1.0, np.float32))])
        t = self.node("Mul", [x, t])
        y = self.node("Mul", [t, self.const("half", np.array(0.5, np.float32))])
        return y, 0.5 * ref * (1.0 + np.vectorize(erf)(ref / sqrt(2.0)))

    def build(self):
        a = self.args
        x = "x"
        x_ref = np.random.RandomState(SEED + 1).standard_normal((1, a.seq, a.hidden))
        x_ref = x_ref.astype(np.float32)
        ref = x_ref.astype(np.float64)
        for _ in range(a.layers):
            h, h_ref = self.layer_norm(x, ref)
            h, h_ref = self.attention(h, h_ref)
            x, ref = self.node("Add", [x, h]), ref + h_ref
            h, h_ref = self.layer_norm(x, ref)
            h, h_ref = self.linear(h, h_ref, a.hidden, 4 * a.hidden)
            h, h_ref = self.gelu(h, h_ref)
            h, h_ref = self.linear(h, h_ref, 4 * a.hidden, a.hidden)
            x, ref = self.node("Add", [x, h]), ref + h_ref
        y, ref = self.layer_norm(x, ref)
        self.nodes.append(helper.make_node("Identity", [y], ["y"], name="/output/Identity"))
        shape = [1, a.seq, a.hidden]
        graph = helper.make_graph(
            self.nodes, "gpt_like_decoder",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="graphlab-bench", producer_version="1",
                                  doc_string="GPT-like decoder for issue 23's benchmarks")
        model.ir_version = IR_VERSION
        return model, x_ref, ref.astype(np.float32)


def refuse_source_tree(outdir):
    top = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
    if os.path.realpath(outdir).startswith(top + os.sep):
        sys.exit(f"make_big_decoder.py: {outdir} is inside the source tree; "
                 "write the model elsewhere")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", default="/tmp/graphlab-bench/decoder")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--heads", type=int, default=16)
    args = parser.parse_args()
    if args.hidden % args.heads:
        sys.exit("make_big_decoder.py: --hidden must be a multiple of --heads")
    refuse_source_tree(args.outdir)
    os.makedirs(os.path.join(args.outdir, "test_data_set_0"), exist_ok=True)
    model, x, y = Decoder(args).build()
    onnx.save_model(model, os.path.join(args.outdir, "model.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.data", size_threshold=1024)
    data = os.path.join(args.outdir, "test_data_set_0")
    for name, array, stem in (("x", x, "input_0"), ("y", y, "output_0")):
        with open(os.path.join(data, stem + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    print(f"{args.outdir}/model.onnx: {len(model.graph.node)} nodes, "
          f"{params / 1e6:.0f}M parameters, "
          f"{os.path.getsize(os.path.join(args.outdir, 'weights.data')) / 1e9:.2f} GB of weights")


if __name__ == "__main__":
    main()
