#!/usr/bin/env python3
"""make_gpt2_conv1d.py — tests/data/gpt2_conv1d.onnx: a GPT-2 MLP block in the Hugging
Face Conv1D form, as transformers exports it (issue 24): x [B,T,C] viewed as [B*T,C],
addmm (Gemm) into [B*T,4C], viewed back as [B,T,4C], NewGELUActivation's tanh Gelu
written out (0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))), the projection the same way,
and the residual Add. The view shapes are Constant nodes (constant folding makes them
initializers: the diff shows their values).

What graphlab does with it: patterns makes the Gelu one node; fusion moves it before the
Reshape (elementwise: the same values) and fuses Gemm + Gelu; the projection's Gemm ->
Reshape -> Add is a near miss (the Add is binary: no move), said as a refusal.

    python3 tests/data/make_gpt2_conv1d.py tests/data/gpt2_conv1d.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

B, S, C = 1, 4, 8


def const(name, value):
    return h.make_node("Constant", [], [name], name="/" + name + "/Constant",
                       value=nh.from_array(np.asarray(value), name + "_value"))


def main(path):
    rng = np.random.default_rng(24)
    weights = [
        nh.from_array((rng.standard_normal((C, 4 * C)) * 0.3).astype(np.float32), "c_fc.weight"),
        nh.from_array((rng.standard_normal(4 * C) * 0.1).astype(np.float32), "c_fc.bias"),
        nh.from_array((rng.standard_normal((4 * C, C)) * 0.3).astype(np.float32), "c_proj.weight"),
        nh.from_array((rng.standard_normal(C) * 0.1).astype(np.float32), "c_proj.bias"),
    ]
    f32 = np.float32
    nodes = [
        const("flat", np.array([-1, C], np.int64)),
        const("view4", np.array([B, S, 4 * C], np.int64)),
        const("flat4", np.array([-1, 4 * C], np.int64)),
        const("view", np.array([B, S, C], np.int64)),
        const("half", f32(0.5)), const("one", f32(1.0)), const("three", f32(3.0)),
        const("kappa", f32(0.044715)), const("s2pi", f32(np.sqrt(2 / np.pi))),
        h.make_node("Reshape", ["x", "flat"], ["x2"], name="/mlp/c_fc/Reshape"),
        h.make_node("Gemm", ["x2", "c_fc.weight", "c_fc.bias"], ["fc"], name="/mlp/c_fc/Gemm"),
        h.make_node("Reshape", ["fc", "view4"], ["hid"], name="/mlp/c_fc/Reshape_1"),
        h.make_node("Mul", ["hid", "half"], ["m0"], name="/mlp/act/Mul"),
        h.make_node("Pow", ["hid", "three"], ["p"], name="/mlp/act/Pow"),
        h.make_node("Mul", ["p", "kappa"], ["m1"], name="/mlp/act/Mul_1"),
        h.make_node("Add", ["hid", "m1"], ["a0"], name="/mlp/act/Add"),
        h.make_node("Mul", ["a0", "s2pi"], ["m2"], name="/mlp/act/Mul_2"),
        h.make_node("Tanh", ["m2"], ["t"], name="/mlp/act/Tanh"),
        h.make_node("Add", ["t", "one"], ["a1"], name="/mlp/act/Add_1"),
        h.make_node("Mul", ["m0", "a1"], ["gelu"], name="/mlp/act/Mul_3"),
        h.make_node("Reshape", ["gelu", "flat4"], ["g2"], name="/mlp/c_proj/Reshape"),
        h.make_node("Gemm", ["g2", "c_proj.weight", "c_proj.bias"], ["proj"],
                    name="/mlp/c_proj/Gemm"),
        h.make_node("Reshape", ["proj", "view"], ["out"], name="/mlp/c_proj/Reshape_1"),
        h.make_node("Add", ["out", "x"], ["y"], name="/residual/Add"),
    ]
    graph = h.make_graph(nodes, "gpt2_conv1d", [h.make_tensor_value_info("x", T.FLOAT, [B, S, C])],
                         [h.make_tensor_value_info("y", T.FLOAT, [B, S, C])], weights)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)],
                         producer_name="make_gpt2_conv1d.py")
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpt2_conv1d.onnx")
