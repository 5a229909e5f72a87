#!/usr/bin/python3
"""Write tests/data/model_view.onnx: a small model that fills every part of the
workbench's model view (`i`, tests/tui_model.sh): IR 8, two opset imports (one of a
model-local domain), producer name and version, domain, model version, a doc string of two
lines (one with an escape character, which the terminal must not receive raw),
metadata_props, a model-local function with an attribute, symbolic dims, and the grouped
Conv and Transposes the search tests look for.

    /usr/bin/python3 tests/data/make_model_view.py [OUT]

The output is deterministic: running it again leaves the file byte-identical.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "model_view.onnx")

scaled_relu = helper.make_function(
    "local", "ScaledRelu", ["X", "S"], ["Y"],
    [helper.make_node("Relu", ["X"], ["R"]), helper.make_node("Mul", ["R", "S"], ["Y"])],
    [helper.make_opsetid("", 17)], attributes=["unused"])

w = numpy_helper.from_array(np.linspace(-1, 1, 36, dtype=np.float32).reshape(4, 1, 3, 3), "w")
s = numpy_helper.from_array(np.array([0.5], dtype=np.float32), "s")
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], "dwconv", group=4, kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Transpose", ["c"], ["t"], "to_nhwc", perm=[0, 2, 3, 1]),
    helper.make_node("ScaledRelu", ["t", "s"], ["r"], "act", domain="local"),
    helper.make_node("Transpose", ["r"], ["y"], "to_nchw", perm=[0, 3, 1, 2]),
]
graph = helper.make_graph(
    nodes, "model_view",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 8, 8])], [w, s])
model = helper.make_model(
    graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
    functions=[scaled_relu], producer_name="pytorch", producer_version="2.1.0",
    domain="ai.graphlab.test", model_version=3,
    doc_string="A depthwise Conv between Transposes.\nSecond line \x1b[31mred\x1b[0m?")
model.ir_version = 8
helper.set_model_props(model, {"author": "graphlab tests", "license": "MIT"})
checker.check_model(model, full_check=True)
with open(out, "wb") as f:
    f.write(model.SerializeToString())
