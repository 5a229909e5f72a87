#!/usr/bin/python3
"""Write the models tests/attrs.sh feeds to graphlab: wrongly typed and unknown
attributes, and names made of terminal control sequences.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/data/make_hostile_attrs.py
The outputs are committed, so the test suite does not need python.

bad/attr_*.onnx      one defect each: exit 2, one line naming file, node, op, attribute,
                     the type found and the type expected
function_perm.onnx   a call of a model-local function whose Transpose takes its perm from
                     the caller (a good model: loads and runs)
hostile_names.onnx   a good model whose graph, node and value names carry ESC [2J, BEL,
                     CR, LF, U+202E and bytes that are not UTF-8
bad/hostile_names_attr.onnx
                     the same names, and a wrongly typed attribute on such a node
"""
import os

from onnx import AttributeProto, TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")


def vi(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def model(nodes, inputs, outputs, opset=13, functions=(), name="attrs", extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v)
                                                 for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=opsets, producer_name="graphlab-tests",
                          functions=list(functions))
    m.ir_version = 8
    return m


def attr(name, kind, value):
    """An attribute of the given AttributeProto type whatever the value's Python type."""
    a = AttributeProto()
    a.name = name
    a.type = kind
    if kind == AttributeProto.FLOATS:
        a.floats.extend(value)
    elif kind == AttributeProto.INTS:
        a.ints.extend(value)
    elif kind == AttributeProto.STRING:
        a.s = value
    elif kind == AttributeProto.FLOAT:
        a.f = value
    elif kind == AttributeProto.INT:
        a.i = value
    return a


def node(op, inputs, outputs, name, *attrs, domain=""):
    n = helper.make_node(op, inputs, outputs, name=name, domain=domain)
    n.attribute.extend(attrs)
    return n


def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def transpose_model(perm_attr):
    return model([node("Transpose", ["x"], ["y"], "tr", perm_attr)],
                 [vi("x", (2, 3))], [vi("y", (3, 2))])


def perm_function(p_type, p_value):
    """local.Swap(X) = Transpose(X) with perm from the caller's attribute `p`."""
    t = node("Transpose", ["X"], ["Y"], "inner_tr")
    ref = AttributeProto()
    ref.name = "perm"
    ref.ref_attr_name = "p"
    ref.type = AttributeProto.INTS
    t.attribute.append(ref)
    f = helper.make_function("local", "Swap", ["X"], ["Y"], [t],
                             [helper.make_opsetid("", 13)], ["p"])
    call = node("Swap", ["x"], ["y"], "call_swap", attr("p", p_type, p_value), domain="local")
    return model([call], [vi("x", (2, 3))], [vi("y", (3, 2))], functions=[f],
                 extra_opsets=[("local", 1)])


def write_bad():
    os.makedirs(BAD, exist_ok=True)
    # The three reported cases: ignored today, results change silently.
    save(transpose_model(attr("perm", AttributeProto.FLOATS, [1.0, 0.0])),
         os.path.join(BAD, "attr_perm_floats.onnx"))
    save(transpose_model(attr("perm", AttributeProto.STRING, b"1,0")),
         os.path.join(BAD, "attr_perm_string.onnx"))
    save(model([node("Concat", ["a", "b"], ["y"], "cat", attr("axis", AttributeProto.INTS, [1]))],
               [vi("a", (2, 3)), vi("b", (2, 3))], [vi("y", (2, 6))]),
         os.path.join(BAD, "attr_concat_axis_ints.onnx"))
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 3, 3], [0.1] * 9)
    conv = model([node("Conv", ["x", "w"], ["y"], "conv",
                       attr("kernel_shape", AttributeProto.STRING, b"3x3"))],
                 [vi("x", (1, 1, 5, 5))], [vi("y", (1, 1, 3, 3))])
    conv.graph.initializer.append(w)
    save(conv, os.path.join(BAD, "attr_conv_kernel_string.onnx"))

    # An attribute the op does not have (Relu has none).
    save(model([node("Relu", ["x"], ["y"], "relu", attr("alpha", AttributeProto.FLOAT, 0.1))],
               [vi("x", (2,))], [vi("y", (2,))]),
         os.path.join(BAD, "attr_unknown.onnx"))
    # One that a later version dropped: Add lost `broadcast` in opset 7.
    save(model([node("Add", ["a", "b"], ["y"], "add_bc", attr("broadcast", AttributeProto.INT, 1))],
               [vi("a", (2,)), vi("b", (2,))], [vi("y", (2,))]),
         os.path.join(BAD, "attr_removed.onnx"))
    # Inside a subgraph: an If branch's Concat with a FLOAT axis.
    then = helper.make_graph([node("Concat", ["x", "x"], ["t"], "cat_in_then",
                                   attr("axis", AttributeProto.FLOAT, 0.0))],
                             "then_graph", [], [vi("t", (4,))])
    other = helper.make_graph([node("Identity", ["x"], ["e"], "id_in_else")],
                              "else_graph", [], [vi("e", (2,))])
    iff = helper.make_node("If", ["c"], ["y"], name="if1", then_branch=then, else_branch=other)
    save(model([iff], [helper.make_tensor_value_info("c", TensorProto.BOOL, []), vi("x", (2,))],
               [vi("y", (None,))]),
         os.path.join(BAD, "attr_in_subgraph.onnx"))
    # A graph attribute that is not a graph.
    save(model([node("If", ["c"], ["y"], "if_ints",
                     attr("then_branch", AttributeProto.INTS, [1]),
                     attr("else_branch", AttributeProto.INTS, [2]))],
               [helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [vi("y", (2,))]),
         os.path.join(BAD, "attr_graph_ints.onnx"))
    # A function call passing FLOATS where the body's Transpose reads perm as INTS.
    save(perm_function(AttributeProto.FLOATS, [1.0, 0.0]),
         os.path.join(BAD, "attr_function_call.onnx"))
    # A reference to a caller's attribute where there is no caller.
    ref = AttributeProto()
    ref.name = "perm"
    ref.ref_attr_name = "p"
    ref.type = AttributeProto.INTS
    save(transpose_model(ref), os.path.join(BAD, "attr_ref_outside.onnx"))


# ESC [2J clears the screen, BEL rings, CR returns to the line's start, LF ends the line,
# ESC ]0; sets the window title, U+202E (RIGHT-TO-LEFT OVERRIDE) reverses what follows.
# "\xff\xfe" is patched in after serializing (protobuf strings must be UTF-8 when made):
# bytes that are not UTF-8. Two Transposes that cancel make transpose-push decide about
# (and name) the hostile nodes.
GRAPH = "graph\x1b[31mred\n"
VALUE_X = "x\u202eevil"
NODE_A = "tA\x1b[2J\x07"
VALUE_A = "mid\x1b]0;title\x07"
NODE_B = "tB\r\nFAKE: all good"
VALUE_B = "m2\u202e"
NODE_C = "relu\u202eevil"
VALUE_Y = "y_@@"


def write_names():
    def chain(last):
        return [node("Transpose", [VALUE_X], [VALUE_A], NODE_A,
                     attr("perm", AttributeProto.INTS, [1, 0])),
                node("Transpose", [VALUE_A], [VALUE_B], NODE_B,
                     attr("perm", AttributeProto.INTS, [1, 0])),
                last]

    good = model(chain(node("Relu", [VALUE_B], [VALUE_Y], NODE_C)),
                 [vi(VALUE_X, (2, 3))], [vi(VALUE_Y, (2, 3))], name=GRAPH)
    blob = good.SerializeToString().replace(b"y_@@", b"y_\xff\xfe")
    with open(os.path.join(HERE, "hostile_names.onnx"), "wb") as f:
        f.write(blob)
    bad = model(chain(node("Transpose", [VALUE_B], [VALUE_Y], "tr\x1b[2J\r\n\u202e",
                           attr("perm", AttributeProto.FLOATS, [1.0, 0.0]))),
                [vi(VALUE_X, (2, 3))], [vi(VALUE_Y, (3, 2))], name=GRAPH)
    save(bad, os.path.join(BAD, "hostile_names_attr.onnx"))


def main():
    write_bad()
    save(perm_function(AttributeProto.INTS, [1, 0]), os.path.join(HERE, "function_perm.onnx"))
    write_names()


if __name__ == "__main__":
    main()
