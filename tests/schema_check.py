"""What tests/attrs_check.py and tests/arity_check.py share: reading graphlab's lookups
and comparing each with onnx's schema of that op at that opset.

Each stdin line is "OP OPSET ROW_SINCE FIELD ..." (ROW_SINCE 0: graphlab has no row).
Opsets newer than the installed onnx knows are skipped (their rows come from the spec
text alone). `compare(fields, schema)` returns the differences as lines (none: they
agree); each is printed after where it is. Exits 1 on any difference, 77 without onnx.
"""
import sys

try:
    import onnx.defs
except ImportError:
    sys.exit(77)


def run(compare):
    newest = onnx.defs.onnx_opset_version()
    bad = checked = 0
    for line in sys.stdin:
        fields = line.split()
        if len(fields) < 3:
            continue
        op, opset, row_since = fields[0], int(fields[1]), fields[2]
        if opset > newest:
            continue
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
        checked += 1
        differences = compare(fields[3:], schema)
        where = (f"{op} at opset {opset} (graphlab {op}-{row_since}, "
                 f"onnx {op}-{schema.since_version})")
        for d in differences:
            print(f"{where}: {d}")
        bad += bool(differences)
    print(f"{checked} (op, opset) pairs checked against onnx {onnx.__version__}, {bad} differ")
    sys.exit(1 if bad else 0)
