#!/usr/bin/python3
"""Write the hostile models that try to hang graphlab or exhaust memory.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/data/make_hostile_exec.py
The outputs are committed, so the test suite does not need python. tests/bounds.sh
expects each to end with exit 2 and one stderr line, in bounded time and memory. The
file names say what each tries; the comments say how.
"""
import os

from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")
INT64_MAX = 2**63 - 1


def model(nodes, inputs, outputs, inits=(), opset=13, functions=()):
    g = helper.make_graph(nodes, "hostile", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="graphlab-tests")
    m.ir_version = 8
    if functions:
        m.opset_import.append(helper.make_opsetid("graphlab.test", 1))
        m.functions.extend(functions)
    return m


def save(m, fname):
    with open(os.path.join(OUT, fname), "wb") as f:
        f.write(m.SerializeToString())


def f32(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def i64(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)] if len(values) != 1
                              else [], values)


def scalar_i64(name, v):
    return helper.make_tensor(name, TensorProto.INT64, [], [v])


def scalar_bool(name, v):
    return helper.make_tensor(name, TensorProto.BOOL, [], [v])


def loop_body(carried, scan_out=None, cond_forever=True):
    """A Loop body (iter, cond, x) -> (cond, x + 1[, scan piece]). The cond output is
    the constant true, so only the trip count can stop it."""
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going")]
    if cond_forever:
        nodes = [helper.make_node("Constant", [], ["cond_out"], name="always",
                                  value=scalar_bool("t", True))]
    nodes.append(helper.make_node("Add", [carried + "_in", "one"], [carried + "_out"],
                                  name="step"))
    outs = [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            f32(carried + "_out", [1])]
    if scan_out:
        # Each iteration emits a fresh 64 Ki-float piece (256 KiB): x expanded.
        nodes.append(helper.make_node("Expand", [carried + "_out", "piece_shape"],
                                      [scan_out], name="piece"))
        outs.append(f32(scan_out, [65536]))
    return helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         f32(carried + "_in", [1])],
        outs,
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]),
         i64("piece_shape", [65536])])


def loop_model(trips, scan, fname, constant=False):
    """x -> Loop(M = trips or none, cond = true) -> (x after the loop[, stacked pieces]).
    With `constant`, x is an initializer: optimizing folds the Loop, so the optimizer
    runs it."""
    inits = [scalar_bool("cond", True)]
    ins = ["", "cond", "x"]
    if trips is not None:
        inits.append(scalar_i64("M", trips))
        ins[0] = "M"
    outs = ["y"] + (["ys"] if scan else [])
    node = helper.make_node("Loop", ins, outs, name="forever",
                            body=loop_body("x", "piece_out" if scan else None))
    outputs = [f32("y", [1])] + ([f32("ys", ["n", 65536])] if scan else [])
    inputs = [f32("x", [1])]
    if constant:
        inits.append(helper.make_tensor("x", TensorProto.FLOAT, [1], [0.0]))
        inputs = []
    save(model([node], inputs, outputs, inits), fname)


def main():
    os.makedirs(OUT, exist_ok=True)

    # A function that calls itself twice: without a bound on recursion every expansion
    # of it doubles until something gives (and ONNX forbids recursive functions).
    rec = helper.make_function(
        "graphlab.test", "twice", ["i"], ["o"],
        [helper.make_node("twice", ["i"], ["a"], domain="graphlab.test"),
         helper.make_node("twice", ["a"], ["o"], domain="graphlab.test")],
        [helper.make_opsetid("graphlab.test", 1)])
    save(model([helper.make_node("twice", ["x"], ["y"], name="call", domain="graphlab.test")],
               [f32("x", [1])], [f32("y", [1])], functions=[rec]),
         "function_recursive.onnx")

    # Loops that never end by themselves: a trip count of 2^63-1 with a condition that
    # stays true, and a while-loop (no trip count) whose condition never turns false.
    loop_model(INT64_MAX, False, "loop_huge_trip.onnx")
    loop_model(None, False, "loop_while_forever.onnx")
    loop_model(INT64_MAX, False, "loop_huge_trip_const.onnx", constant=True)
    # The same with a scan output: every iteration adds a 256 KiB piece to keep.
    loop_model(INT64_MAX, True, "loop_scan_huge_trip.onnx")
    loop_model(None, True, "loop_scan_growing.onnx")

    # 77 bytes that declare a 1 GiB input: `run` without --data fills it at random.
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [f32("x", [16384, 16384])], [f32("y", [16384, 16384])]), "huge_input.onnx")

    # An intermediate of 16 GiB from a 4-element shape: ConstantOfShape allocates what the
    # shape input asks for.
    save(model([helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill"),
                helper.make_node("Add", ["x", "big"], ["y"], name="use")],
               [f32("x", [1])], [f32("y", [65536, 65536])],
               [i64("shape", [65536, 65536])]), "huge_intermediate.onnx")

    # A graph with no nodes at all: the output is the input.
    save(model([], [f32("x", [1])], [f32("x", [1])]), "no_nodes.onnx")


if __name__ == "__main__":
    main()
