#!/usr/bin/python3
"""Write the hostile/broken model files the CLI tests feed to graphlab.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/data/make_bad_models.py
The outputs are committed, so the test suite does not need python. Each file has one
defect; tests/cli.sh expects exit status 2 and a one-line message naming the thing.
"""
import os
import random

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")


def model(nodes, inputs, outputs, inits=(), name="bad"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="graphlab-tests")
    m.ir_version = 8
    return m


def vi(name, dims=(2,)):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def save(m, fname):
    with open(os.path.join(OUT, fname), "wb") as f:
        f.write(m.SerializeToString())


def raw_tensor(name, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external_tensor(name, location):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "8")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def main():
    os.makedirs(OUT, exist_ok=True)
    good = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y")])
    blob = good.SerializeToString()

    with open(os.path.join(OUT, "empty.onnx"), "wb"):
        pass
    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(blob[: len(blob) // 2])
    rng = random.Random(7)
    with open(os.path.join(OUT, "random.onnx"), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(4096)))
    with open(os.path.join(OUT, "text.onnx"), "w") as f:
        f.write("this is not an ONNX model, it is a text file\n")

    # a -> b -> a
    save(model([helper.make_node("Add", ["x", "b_out"], ["a_out"], name="cyc_a"),
                helper.make_node("Relu", ["a_out"], ["b_out"], name="cyc_b"),
                helper.make_node("Neg", ["b_out"], ["y"], name="tail")],
               [vi("x")], [vi("y")]), "cycle.onnx")
    save(model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")],
               [vi("x")], [vi("y")]), "missing_input.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                helper.make_node("Neg", ["x"], ["y"], name="second")],
               [vi("x")], [vi("y")]), "two_producers.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [vi("x")], [vi("y"), vi("nowhere")]), "dangling_output.onnx")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")], [vi("x")], [vi("y")],
               [raw_tensor("w", [1000000, 1000000], b"\0" * 16)]), "huge_dims.onnx")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")], [vi("x")], [vi("y")],
               [raw_tensor("w", [-2], b"\0" * 8)]), "negative_dims.onnx")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")], [vi("x")], [vi("y")],
               [external_tensor("w", "../../../../etc/passwd")]), "external_escape.onnx")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")], [vi("x")], [vi("y")],
               [external_tensor("w", "/etc/passwd")]), "external_absolute.onnx")
    neg = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y")])
    neg.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -5
    save(neg, "negative_type_dim.onnx")
    # 5000 attributes on one node: more than any op has; refused before the quadratic
    # duplicate check.
    relu = helper.make_node("Relu", ["x"], ["y"], name="relu_attrs")
    relu.attribute.extend(helper.make_attribute("a%d" % i, i) for i in range(5000))
    save(model([relu], [vi("x")], [vi("y")]), "many_attributes.onnx")
    # Functions that call the previous one twice, 26 levels deep: 2^26 body plans.
    funcs = [helper.make_function("graphlab.test", "f0", ["i"], ["o"],
                                  [helper.make_node("Relu", ["i"], ["o"])],
                                  [helper.make_opsetid("", 13)])]
    for k in range(1, 26):
        funcs.append(helper.make_function(
            "graphlab.test", "f%d" % k, ["i"], ["o"],
            [helper.make_node("f%d" % (k - 1), ["i"], ["a"], domain="graphlab.test"),
             helper.make_node("f%d" % (k - 1), ["a"], ["o"], domain="graphlab.test")],
            [helper.make_opsetid("", 13), helper.make_opsetid("graphlab.test", 1)]))
    fan = model([helper.make_node("f25", ["x"], ["y"], name="call_f25", domain="graphlab.test")],
                [vi("x")], [vi("y")])
    fan.opset_import.append(helper.make_opsetid("graphlab.test", 1))
    fan.functions.extend(funcs)
    save(fan, "function_fanout.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [vi("x")], [vi("y")], name="ok"), "../good_relu.onnx")


if __name__ == "__main__":
    main()
