"""Cross-check graphlab's attribute table (src/ops/attrs.def) against onnx's schemas.

Reads lines "OP OPSET ROW_SINCE NAME:TYPE ..." on stdin (tests/test_attrs.c writes one
per registered op and opset: the attributes graphlab's lookup gives that op at that
opset) and compares each with onnx.defs.get_schema(OP, OPSET): the same names, the same
types. Opsets newer than the installed onnx knows are skipped (their rows come from the
spec text alone). Prints one line per difference; exits 1 on any, 77 without onnx.
"""
import sys

try:
    import onnx.defs
except ImportError:
    sys.exit(77)


def main():
    newest = onnx.defs.onnx_opset_version()
    bad = checked = 0
    for line in sys.stdin:
        fields = line.split()
        if not fields:
            continue
        op, opset, row_since = fields[0], int(fields[1]), fields[2]
        if opset > newest:
            continue
        ours = dict(f.split(":", 1) for f in fields[3:])
        if row_since == "0":
            print(f"{op} at opset {opset}: graphlab has no row")
            bad += 1
            continue
        try:
            schema = onnx.defs.get_schema(op, opset)
        except onnx.defs.SchemaError:
            print(f"{op} at opset {opset}: onnx has no schema, graphlab has {op}-{row_since}")
            bad += 1
            continue
        theirs = {name: a.type.name.lower() for name, a in schema.attributes.items()}
        checked += 1
        if ours != theirs:
            where = (f"{op} at opset {opset} (graphlab {op}-{row_since}, "
                     f"onnx {op}-{schema.since_version})")
            for name in sorted(set(ours) | set(theirs)):
                if ours.get(name) != theirs.get(name):
                    print(f"{where}: '{name}' is {ours.get(name, 'absent')} in graphlab, "
                          f"{theirs.get(name, 'absent')} in onnx")
            bad += 1
    print(f"{checked} (op, opset) pairs checked against onnx {onnx.__version__}, {bad} differ")
    sys.exit(1 if bad else 0)


main()
