#!/usr/bin/python3
"""shape_check.py MODEL OURS [-v] — compare our shape inference with onnx's.
   shape_check.py --strip MODEL OUT — write MODEL without value_info (weights inline),
   so that our inference too starts from scratch.

OURS is what `graphlab optimize MODEL -o OURS --passes toposort,shape-inference` wrote.
MODEL's value_info is dropped (in every subgraph too) so that onnx.shape_inference infers
from scratch; then every value onnx gives a type (value_info, graph outputs, in
subgraphs as well) is looked up in OURS (value_info, inputs, outputs, initializers) and
compared:

  - ours must be at least as specific: the same dtype, the same rank, every dim onnx
    knows known and equal, every dim_param onnx has kept or replaced by a number;
  - anything else is reported, one line per value, and the exit status is 1.

Values where ours says more than onnx are counted ("more specific"), and listed with -v.
Needs python3-onnx (/usr/bin/python3).
"""
import sys

import onnx
from onnx import shape_inference


def strip_value_info(graph):
    del graph.value_info[:]
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                strip_value_info(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    strip_value_info(g)


def subgraphs(graph, prefix=""):
    """(key, graph) for the graph and every subgraph; a subgraph's key names the first
    output of the node holding it and the attribute, which survive our passes."""
    yield prefix, graph
    for node in graph.node:
        holder = node.output[0] if node.output else node.name
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from subgraphs(attr.g, f"{prefix}{holder}.{attr.name}/")
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for i, g in enumerate(attr.graphs):
                    yield from subgraphs(g, f"{prefix}{holder}.{attr.name}[{i}]/")


def tensor_type_of_init(t):
    tp = onnx.TypeProto()
    tp.tensor_type.elem_type = t.data_type
    tp.tensor_type.shape.SetInParent()
    for d in t.dims:
        tp.tensor_type.shape.dim.add().dim_value = d
    return tp


def types_of(model, inferred_only):
    """{key/name: TypeProto}. For onnx's side (inferred_only) what inference produced:
    value_info and outputs; for ours everything that carries a type."""
    out = {}
    for prefix, g in subgraphs(model.graph):
        lists = [g.value_info, g.output]
        if not inferred_only:
            lists.append(g.input)
        for lst in lists:
            for vi in lst:
                if vi.HasField("type"):
                    out[prefix + vi.name] = vi.type
        if not inferred_only:
            for t in g.initializer:
                out.setdefault(prefix + t.name, tensor_type_of_init(t))
    return out


def fmt(tp):
    if tp is None:
        return "-"
    if not tp.HasField("tensor_type"):
        return tp.WhichOneof("value") or "?"
    tt = tp.tensor_type
    dt = onnx.TensorProto.DataType.Name(tt.elem_type).lower() if tt.elem_type else "?"
    if not tt.HasField("shape"):
        return dt + "[*]"
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(str(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append("?")
    return dt + "[" + ",".join(dims) + "]"


def compare(theirs, ours):
    """'same', 'more' (ours more specific), or a string saying what is wrong."""
    if ours is None:
        return "missing in ours"
    if not theirs.HasField("tensor_type"):
        kind = theirs.WhichOneof("value")
        return "same" if ours.WhichOneof("value") == kind else f"not a {kind}"
    if not ours.HasField("tensor_type"):
        return "not a tensor in ours"
    t, o = theirs.tensor_type, ours.tensor_type
    more = False
    if t.elem_type and o.elem_type != t.elem_type:
        return "dtype unknown in ours" if not o.elem_type else "dtype differs"
    more |= bool(o.elem_type and not t.elem_type)
    if not t.HasField("shape"):
        return "more" if more or o.HasField("shape") else "same"
    if not o.HasField("shape"):
        return "rank unknown in ours"
    if len(t.shape.dim) != len(o.shape.dim):
        return "rank differs"
    for i, (td, od) in enumerate(zip(t.shape.dim, o.shape.dim)):
        if td.HasField("dim_value"):
            if not od.HasField("dim_value"):
                return f"dim {i} unknown in ours"
            if od.dim_value != td.dim_value:
                return f"dim {i} differs"
        elif td.HasField("dim_param"):
            if od.HasField("dim_value"):
                more = True
            elif not od.HasField("dim_param"):
                return f"dim {i} ({td.dim_param}) unknown in ours"
            elif od.dim_param != td.dim_param:
                return f"dim {i} is {od.dim_param} in ours, {td.dim_param} in onnx"
        else:
            more |= od.HasField("dim_value") or od.HasField("dim_param")
    return "more" if more else "same"


def strip(model_path, out_path):
    model = onnx.load(model_path)  # external data read in: the copy is self-contained
    strip_value_info(model.graph)
    onnx.save(model, out_path)
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--strip":
        return strip(argv[2], argv[3])
    verbose = "-v" in argv
    args = [a for a in argv[1:] if a != "-v"]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    model_path, ours_path = args
    model = onnx.load(model_path, load_external_data=False)
    strip_value_info(model.graph)
    inferred = shape_inference.infer_shapes(model)
    ours = onnx.load(ours_path, load_external_data=False)
    theirs_types = types_of(inferred, inferred_only=True)
    ours_types = types_of(ours, inferred_only=False)
    bad = more = 0
    for key, tp in sorted(theirs_types.items()):
        verdict = compare(tp, ours_types.get(key))
        if verdict == "more":
            more += 1
            if verbose:
                print(f"  more specific: {key}: ours {fmt(ours_types[key])}, onnx {fmt(tp)}")
        elif verdict != "same":
            bad += 1
            print(f"  MISMATCH {key}: {verdict}: ours {fmt(ours_types.get(key))}, onnx {fmt(tp)}")
    print(f"{model_path}: {len(theirs_types)} values compared, {more} more specific in ours, "
          f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
