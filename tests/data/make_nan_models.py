#!/usr/bin/python3
"""Write the NaN and infinity fixtures of issue 26 ("NaN and Inf mean something") into nan/.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/data/make_nan_models.py
The outputs are committed. Each model comes with test_data_set_0/: an input holding NaN,
+Inf, -Inf and -0 among ordinary values, and the output ONNX defines for it, computed here
with numpy (np.maximum and np.clip keep a NaN, as ONNX's Relu, Clip and Max do; a max
pooling window that holds a NaN is NaN, as numpy.max and PyTorch's max_pool2d make it).
tests/run.sh runs each on every backend with --data: oneDNN's relu, clip and max pooling
turned the NaN into a number.

The tensors are large enough (4096 elements and more) for the dnnl backend to run even
its elementwise ops on oneDNN rather than on the reference kernels.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nan")
C, H, W = 16, 16, 16


def f32(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def init(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def with_specials(rng):
    """Random values in [-2, 2) with NaN, +Inf, -Inf and -0 planted in channel 0 only (a
    1x1 convolution then spreads them over the channels of their pixel, no further)."""
    x = rng.uniform(-2, 2, (1, C, H, W)).astype(np.float32)
    x[0, 0, 0, 0:4] = [np.nan, np.inf, -np.inf, -0.0]
    x[0, 0, 5, 7] = np.nan
    x[0, 0, 9, 2] = -np.inf
    x[0, 0, 12, 12] = np.inf
    return x


def conv1x1(x, w, b):
    """ONNX Conv with a 1x1 kernel in float64: every output channel a weighted sum of the
    input channels at its pixel (NaN and infinities propagate as IEEE says)."""
    with np.errstate(invalid="ignore"):
        return (np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64),
                          x.astype(np.float64)) + b[None, :, None, None])


def maxpool2x2(x):
    """2x2 windows, stride 2; a window with a NaN is NaN."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def save(name, nodes, inits, x, y, out_dims):
    g = helper.make_graph(nodes, name, [f32("x", x.shape)], [f32("y", out_dims)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="graphlab-tests")
    m.ir_version = 8
    folder = os.path.join(OUT, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for fname, t in (("input_0.pb", numpy_helper.from_array(x, "x")),
                     ("output_0.pb", numpy_helper.from_array(y.astype(np.float32), "y"))):
        with open(os.path.join(data, fname), "wb") as f:
            f.write(t.SerializeToString())


rng = np.random.default_rng(26)
w = rng.uniform(-0.5, 0.5, (C, C, 1, 1)).astype(np.float32)
b = rng.uniform(-0.5, 0.5, C).astype(np.float32)
conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv")

# Conv + Relu: oneDNN's relu post-op (and its relu primitive) made NaN a 0.
x = with_specials(rng)
save("conv_relu", [conv, helper.make_node("Relu", ["c"], ["y"], name="relu")],
     [init("w", w), init("b", b)], x, np.maximum(conv1x1(x, w, b), 0), x.shape)

# Conv + Clip(0, 6): oneDNN's clip made NaN its lower bound.
x = with_specials(rng)
save("conv_clip", [conv, helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip")],
     [init("w", w), init("b", b), init("lo", 0.0), init("hi", 6.0)], x,
     np.clip(conv1x1(x, w, b), 0, 6), x.shape)

# MaxPool 2x2: oneDNN's max pooling skipped a NaN.
x = with_specials(rng)
save("maxpool", [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                                  strides=[2, 2])],
     [], x, maxpool2x2(x), (1, C, H // 2, W // 2))
