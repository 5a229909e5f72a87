#!/usr/bin/python3
"""Write QDQ models whose quantization parameters are hostile (issue 21) into bad/.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/data/make_qdq_hostile.py
The outputs are committed. Each is a valid ONNX model (a float input quantized, a
DequantizeLinear -> Conv -> QuantizeLinear unit, the output dequantized) whose scales
are what no quantizer writes: zero, negative, NaN, infinite. tests/hostile.sh runs each
(exit 0 everywhere): the qdq pass refuses the unit (a scale that is not a finite positive
number), oneDNN's Q/DQ refuse the scale, and the reference kernels compute what ONNX
says (x / 0 saturates, NaN quantizes to the zero point).
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from make_hostile_exec import f32, model, save


def arr(name, a, dtype):
    return numpy_helper.from_array(np.asarray(a, dtype=dtype), name)


def qdq_conv(x_scale, w_scales, y_scale):
    rng = np.random.default_rng(21)
    inits = [
        arr("xs", x_scale, np.float32), arr("xz", 128, np.uint8),
        arr("wq", rng.integers(-127, 128, (4, 3, 3, 3)), np.int8),
        arr("ws", w_scales, np.float32), arr("wz", [0, 0, 0, 0], np.int8),
        arr("ys", y_scale, np.float32), arr("yz", 128, np.uint8),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant_x"),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dequant_x"),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], name="dequant_w",
                         axis=0),
        helper.make_node("Conv", ["xd", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"], name="quant_y"),
        helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["y"], name="dequant_y"),
    ]
    return model(nodes, [f32("x", [1, 3, 8, 8])], [f32("y", [1, 4, 8, 8])], inits)


save(qdq_conv(0.0, [0.01, 0.02, 0.015, 0.005], 0.05), "qdq_scale_zero.onnx")
save(qdq_conv(0.02, [0.01, -0.02, float("nan"), 0.005], 0.05), "qdq_scale_nan.onnx")
save(qdq_conv(0.02, [0.01, 0.02, 0.015, 0.005], float("inf")), "qdq_scale_inf.onnx")
