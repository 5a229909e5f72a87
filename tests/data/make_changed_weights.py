#!/usr/bin/python3
"""Write a model with external data of which a pass changes one weight (issue 23).

    /usr/bin/python3 tests/data/make_changed_weights.py OUTDIR

OUTDIR receives model.onnx, weights.data (w1 and w2, 16 kB each, ONNX external data) and
test_data_set_0 (x and y = (x @ w1^T) @ w2 computed with numpy). Constant folding turns
Transpose(w1) into a new initializer: `optimize -o` must write that one and keep w2
pointing into weights.data (tests/keep_weights.sh).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data


def main(outdir):
    rng = np.random.default_rng(23)
    w1 = rng.standard_normal((64, 64)).astype(np.float32)
    w2 = rng.standard_normal((64, 64)).astype(np.float32)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["w1"], ["w1t"], perm=[1, 0]),
        helper.make_node("MatMul", ["x", "w1t"], ["h"]),
        helper.make_node("MatMul", ["h", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "changed_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    convert_model_to_external_data(model, all_tensors_to_one_file=True,
                                   location="weights.data", size_threshold=1024)
    os.makedirs(os.path.join(outdir, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(outdir, "model.onnx"))
    y = ((x.astype(np.float64) @ w1.T.astype(np.float64)) @ w2.astype(np.float64))
    for name, arr in (("input_0.pb", x), ("output_0.pb", y.astype(np.float32))):
        t = numpy_helper.from_array(arr, "x" if name.startswith("input") else "y")
        with open(os.path.join(outdir, "test_data_set_0", name), "wb") as f:
            f.write(t.SerializeToString())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_changed_weights.py OUTDIR")
    main(sys.argv[1])
