#!/usr/bin/python3
"""bench/make_gemm_shapes.py — one Gemm (A [M, K] by constant B [K, N], + C [N]) per shape.

    /usr/bin/python3 bench/make_gemm_shapes.py OUT_DIR

Writes OUT_DIR/g<M>_<K>_<N>/model.onnx and test_data_set_0/input_0.pb for the products of
the transformer blocks and FFNs of the corpora (tokens x hidden, at batch 1 and 8), so that
`graphlab profile --json` times graphlab's many-rows kernel and oneDNN's gemm:jit on the
same node (the per-node minimum: nodes[0].min_ms.fused).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# M, K, N
SHAPES = [(16, 128, 384), (32, 256, 1024), (50, 96, 288), (128, 128, 512), (128, 512, 128),
          (197, 768, 3072), (197, 3072, 768), (256, 256, 1024), (256, 1024, 256),
          (400, 96, 384), (400, 384, 96)]


def main():
    out = sys.argv[1]
    for m, k, n in SHAPES:
        rng = np.random.default_rng(1)
        w = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        g = helper.make_graph(
            [helper.make_node("Gemm", ["x", "w", "b"], ["y"])], "gemm",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
            [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        d = os.path.join(out, "g%d_%d_%d" % (m, k, n))
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        x = rng.standard_normal((m, k)).astype(np.float32)
        with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())


if __name__ == "__main__":
    main()
