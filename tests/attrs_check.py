"""Cross-check graphlab's attribute table (src/ops/attrs.def) against onnx's schemas.

Reads lines "OP OPSET ROW_SINCE NAME:TYPE ..." on stdin (tests/test_attrs.c writes one
per registered op and opset: the attributes graphlab's lookup gives that op at that
opset) and compares each with onnx.defs.get_schema(OP, OPSET): the same names, the same
types (tests/schema_check.py reads the lines and reports).
"""
import schema_check


def compare(fields, schema):
    ours = dict(f.split(":", 1) for f in fields)
    theirs = {name: a.type.name.lower() for name, a in schema.attributes.items()}
    return [f"'{name}' is {ours.get(name, 'absent')} in graphlab, "
            f"{theirs.get(name, 'absent')} in onnx"
            for name in sorted(set(ours) | set(theirs)) if ours.get(name) != theirs.get(name)]


schema_check.run(compare)
