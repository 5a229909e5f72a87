"""Cross-check graphlab's arity table (src/ops/arity.def) against onnx's schemas.

Reads lines "OP OPSET ROW_SINCE INPUTS OUTPUTS" on stdin (tests/test_arity.c writes one
per registered op and opset: the parameter strings graphlab's lookup gives that op at
that opset, "-" for none) and compares each with what onnx.defs.get_schema(OP, OPSET)
declares: per formal parameter 1 (single), ? (optional), * or + (variadic of at least
zero or one, from the schema's min count). tests/schema_check.py reads the lines and
reports.
"""
import schema_check  # first: it exits 77 without onnx

import onnx.defs  # noqa: E402

OPTION = onnx.defs.OpSchema.FormalParameterOption


def params(formal, min_count):
    """The parameter string of one side of a schema."""
    out = ""
    for i, p in enumerate(formal):
        if p.option == OPTION.Single:
            out += "1"
        elif p.option == OPTION.Optional:
            out += "?"
        else:
            out += {0: "*", 1: "+"}.get(min_count - i, f"<variadic of {min_count - i}>")
    return out


def compare(fields, schema):
    ours = tuple("" if f == "-" else f for f in fields)
    theirs = (params(schema.inputs, schema.min_input), params(schema.outputs, schema.min_output))
    if ours == theirs:
        return []
    return [f"graphlab \"{ours[0]}\" -> \"{ours[1]}\", onnx \"{theirs[0]}\" -> \"{theirs[1]}\""]


schema_check.run(compare)
