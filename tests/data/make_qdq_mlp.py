#!/usr/bin/python3
"""Write tests/data/qdq_mlp/: a tiny statically quantized MLP in QDQ form, with data sets
for the quantization-error report (`run --compare float`) and the int8 tolerance in
steps of a scale (`--steps`). Issue 21, points 4 and 5.

Run with a python that has onnx (1.12+) and numpy, e.g. Debian's /usr/bin/python3:

    /usr/bin/python3 tests/data/make_qdq_mlp.py [OUTDIR]

OUTDIR defaults to tests/data/qdq_mlp beside this script; the output is deterministic.

The graph is the QDQ form ONNX Runtime's quantize_static writes: a QuantizeLinear ->
DequantizeLinear pair (uint8, per tensor) on each activation, int8 weights per output
channel (MatMul B [K,N], axis 1, zero point 0) behind a DequantizeLinear:

    x -> Q/DQ -> MatMul(w1) -> Relu -> Q/DQ (h1) -> MatMul(w2) -> Relu -> Q/DQ (h2)
      -> MatMul(w3) -> Q (y_q, graph output) -> DQ (y, graph output)

The pair on h2 is calibrated badly on purpose (its scale 24 times what h2's range
needs): it is where the int8 model loses most, and the first pair whose error jumps.

    model.onnx
    test_data_set_0/   the input and the outputs of the QDQ graph (fake quantization,
                       numpy, float64): what the reference computes
    test_data_set_1/   the same outputs with one element of each one step of its scale
                       off, as a rounding tie flipped by another summation order is
    test_data_set_2/   the same with that element two steps off
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
from make_examples import finish_model, init, save, write_test_data  # noqa: E402

SEED = 21
F32, U8 = TensorProto.FLOAT, TensorProto.UINT8
SIZES = [16, 8, 8, 4]   # x, h1, h2, y widths
BAD_SCALE_FACTOR = 24   # h2's scale, times what its range needs
OFF_ELEMENT = 1         # the element of each output the data sets 1 and 2 move


def quantize(x, scale, zero):
    """QuantizeLinear to uint8: round half to even, saturate."""
    return np.clip(np.round(x / scale) + zero, 0, 255)


def dequantize(q, scale, zero):
    return (q - zero) * scale


def activation_qparams(values, factor=1):
    """uint8 per tensor, asymmetric, over the calibration values' [min(0,lo), max(0,hi)]."""
    lo, hi = min(0.0, float(values.min())), max(0.0, float(values.max()))
    scale = np.float32((hi - lo) / 255 * factor)
    zero = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
    return scale, zero


def weight_qparams(w):
    """int8 per output channel (axis 1 of MatMul's B), symmetric."""
    scale = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale


class QdqNet:
    """Appends nodes and computes each value in float64 as the QDQ graph defines it."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def qdq(self, name, src, x, scale, zero, dq_name):
        """A Q -> DQ pair on activation `src` (its parameters NAME_scale, NAME_zero, the
        Q's output NAME_q); returns the q values and the dq values."""
        self.inits += [init(name + "_scale", np.array(scale, np.float32)),
                       init(name + "_zero", np.array(zero, np.uint8))]
        args = [name + "_scale", name + "_zero"]
        self.nodes += [helper.make_node("QuantizeLinear", [src] + args, [name + "_q"],
                                        name="quant_" + name),
                       helper.make_node("DequantizeLinear", [name + "_q"] + args, [dq_name],
                                        name="dequant_" + name)]
        q = quantize(x, np.float64(scale), np.float64(zero))
        return q, dequantize(q, np.float64(scale), np.float64(zero))

    def matmul(self, name, a_name, a, w):
        wq, wscale = weight_qparams(w)
        self.inits += [init(name + "_wq", wq), init(name + "_wscale", wscale),
                       init(name + "_wzero", np.zeros(wscale.shape, np.int8))]
        self.nodes += [helper.make_node("DequantizeLinear",
                                        [name + "_wq", name + "_wscale", name + "_wzero"],
                                        [name + "_w"], name="dequant_" + name + "_w", axis=1),
                       helper.make_node("MatMul", [a_name, name + "_w"], [name + "_mm"],
                                        name=name)]
        return a @ (wq.astype(np.float64) * wscale.astype(np.float64))

    def relu(self, name, x):
        self.nodes.append(helper.make_node("Relu", [name + "_mm"], [name], name=name + "_relu"))
        return np.maximum(x, 0)


def build(rng):
    weights = [rng.standard_normal((SIZES[k], SIZES[k + 1])) / np.sqrt(SIZES[k])
               for k in range(3)]
    calib = rng.standard_normal((64, SIZES[0]))
    x = rng.standard_normal((1, SIZES[0])).astype(np.float32).astype(np.float64)

    # Calibration: each activation's range over the calibration set, in float.
    c_h1 = np.maximum(calib @ weights[0], 0)
    c_h2 = np.maximum(c_h1 @ weights[1], 0)
    c_y = c_h2 @ weights[2]

    net = QdqNet()
    s, z = activation_qparams(calib)
    _, a = net.qdq("x", "x", x, s, z, "x_dq")
    h1 = net.relu("h1", net.matmul("h1", "x_dq", a, weights[0]))
    s, z = activation_qparams(c_h1)
    _, a = net.qdq("h1", "h1", h1, s, z, "h1_dq")
    h2 = net.relu("h2", net.matmul("h2", "h1_dq", a, weights[1]))
    s, z = activation_qparams(c_h2, BAD_SCALE_FACTOR)
    _, a = net.qdq("h2", "h2", h2, s, z, "h2_dq")
    y = net.matmul("y", "h2_dq", a, weights[2])
    y_scale, y_zero = activation_qparams(c_y)
    y_q, y_dq = net.qdq("y", "y_mm", y, y_scale, y_zero, "y")
    assert 0 < y_q[0, OFF_ELEMENT] < 253, "the moved element must stay in range"

    graph = helper.make_graph(
        net.nodes, "qdq_mlp",
        [helper.make_tensor_value_info("x", F32, [1, SIZES[0]])],
        [helper.make_tensor_value_info("y", F32, [1, SIZES[3]]),
         helper.make_tensor_value_info("y_q", U8, [1, SIZES[3]])],
        net.inits)
    model = finish_model(graph, "a tiny QDQ MLP for run --compare float and --steps")
    return model, x, y_q, y_dq, np.float64(y_scale)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "qdq_mlp")
    model, x, y_q, y_dq, y_scale = build(np.random.default_rng(SEED))
    save(model, outdir)
    for data_set, steps in enumerate((0, 1, 2)):
        q = y_q.copy()
        q[0, OFF_ELEMENT] += steps
        dq = y_dq.copy()
        dq[0, OFF_ELEMENT] += steps * y_scale
        write_test_data(outdir, [("x", x.astype(np.float32))],
                        [("y", dq.astype(np.float32)), ("y_q", q.astype(np.uint8))],
                        data_set)


if __name__ == "__main__":
    main()
