#!/usr/bin/python3
"""Write the zero-size models of issue 26 ("empty tensors are tensors") into bad/.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/data/make_zero_models.py
The outputs are committed. tests/hostile.sh runs each (exit 0 everywhere) and compares
every backend, fused and not, with the reference.
"""
import numpy as np
from onnx import helper, numpy_helper

from make_hostile_exec import f32, model, save


def init(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


rng = np.random.default_rng(26)

# A Concat with a 0-channel input read by a 1x1 Conv: the concat-conv unit of the fused
# backend (src/exec/dnnl/dn_catconv.c) sliced the weights of the empty part.
save(model([helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
            helper.make_node("Conv", ["c", "w"], ["y"])],
           [f32("a", [1, 0, 4, 4]), f32("b", [1, 8, 4, 4])], [f32("y", [1, 4, 4, 4])],
           [init("w", rng.standard_normal((4, 8, 1, 1)))]),
     "zero_concat_conv.onnx")

# A Gemm with K = 0: Y = beta * C broadcast.
save(model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=2.0, beta=0.5)],
           [f32("a", [2, 0])], [f32("y", [2, 3])],
           [init("b", np.zeros((0, 3))), init("c", [1.0, -2.0, 3.0])]),
     "zero_gemm_k.onnx")

# MatMul + Add with K = 0: --passes all makes it the Gemm above.
save(model([helper.make_node("MatMul", ["a", "b"], ["m"]),
            helper.make_node("Add", ["m", "c"], ["y"])],
           [f32("a", [2, 0])], [f32("y", [2, 3])],
           [init("b", np.zeros((0, 3))), init("c", [1.0, -2.0, 3.0])]),
     "zero_matmul_add_k.onnx")
