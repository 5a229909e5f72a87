#!/usr/bin/python3
"""bench/make_conv_shapes.py — one Conv (+ bias, + Relu) model per resnet18 layer shape.

    /usr/bin/python3 bench/make_conv_shapes.py OUT_DIR [BATCH]

Writes OUT_DIR/<name>/model.onnx and OUT_DIR/<name>/test_data_set_0/input_0.pb for the
3x3 convolutions of resnet18's four stages (stride 1, and the stride-2 one that opens
stages 2-4), its stride-2 1x1 downsamples and vgg11's larger 3x3s, so that graphlab profile and
bench/ort_time.js time the same convolution alone (bench/conv_shapes.sh).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name, input channels, output channels, input H=W, kernel, stride
SHAPES = [
    ("c64_56_s1", 64, 64, 56, 3, 1),
    ("c128_56_s2", 64, 128, 56, 3, 2),
    ("c128_28_s1", 128, 128, 28, 3, 1),
    ("c256_28_s2", 128, 256, 28, 3, 2),
    ("c256_14_s1", 256, 256, 14, 3, 1),
    ("c512_14_s2", 256, 512, 14, 3, 2),
    ("c512_7_s1", 512, 512, 7, 3, 1),
    ("p256_28_s2", 128, 256, 28, 1, 2),
    ("p512_14_s2", 256, 512, 14, 1, 2),
    # vgg11's stride-1 3x3s at 112x112 and 56x56 (unet's and densenet's are alike)
    ("v128_112_s1", 64, 128, 112, 3, 1),
    ("v256_56_s1", 128, 256, 56, 3, 1),
    ("v256b_56_s1", 256, 256, 56, 3, 1),
    ("v512_28_s1", 512, 512, 28, 3, 1),
    ("v512_14_s1", 512, 512, 14, 3, 1),
]


def model(ci, co, hw, k, s, batch):
    rng = np.random.default_rng(22)
    w = (rng.standard_normal((co, ci, k, k)) * (2.0 / (ci * k * k)) ** 0.5).astype(np.float32)
    b = (rng.standard_normal(co) * 0.1).astype(np.float32)
    p = k // 2
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                            strides=[s, s], pads=[p, p, p, p])
    relu = helper.make_node("Relu", ["c"], ["y"])
    oh = (hw + 2 * p - k) // s + 1
    g = helper.make_graph(
        [conv, relu], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, ci, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, co, oh, oh])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    x = rng.standard_normal((batch, ci, hw, hw)).astype(np.float32)
    return m, numpy_helper.from_array(x, "x")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: make_conv_shapes.py OUT_DIR [BATCH]")
    out, batch = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 1
    for name, ci, co, hw, k, s in SHAPES:
        m, x = model(ci, co, hw, k, s, batch)
        d = os.path.join(out, name, "test_data_set_0")
        os.makedirs(d, exist_ok=True)
        onnx.save(m, os.path.join(out, name, "model.onnx"))
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(x.SerializeToString())


if __name__ == "__main__":
    main()
