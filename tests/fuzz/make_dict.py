#!/usr/bin/python3
"""Write tests/fuzz/onnx.dict, the libFuzzer dictionary of the fuzz targets.

Run with Debian's python (onnx 1.12): /usr/bin/python3 tests/fuzz/make_dict.py
The output is committed. Entries: the field keys (tag and wire type) of the onnx.proto
messages a model is made of, a few length-prefixed names, the data types, the op types
and attribute names of every ONNX schema, and the domains graphlab knows. libFuzzer
splices them into the seeds; an op name in place of another of the same length gives a
valid model of a new op.
"""
import os

import onnx
from onnx import defs

HERE = os.path.dirname(os.path.abspath(__file__))

VARINT, LEN, I32 = 0, 2, 5
WIRE = {"v": VARINT, "L": LEN, "f": I32}

# Per message, its fields as NAME:NUMBER:WIRE (v varint, L length-delimited, f fixed32),
# from onnx.proto (ONNX 1.12).
FIELDS = {
    "model": "ir_version:1:v opset_import:8:L producer_name:2:L graph:7:L functions:25:L "
             "metadata_props:14:L training_info:20:L",
    "opset": "domain:1:L version:2:v",
    "graph": "node:1:L name:2:L initializer:5:L sparse_initializer:15:L input:11:L "
             "output:12:L value_info:13:L",
    "node": "input:1:L output:2:L name:3:L op_type:4:L attribute:5:L domain:7:L",
    "attr": "name:1:L f:2:f i:3:v s:4:L t:5:L g:6:L floats:7:L ints:8:L ints_unpacked:8:v "
            "strings:9:L tensors:10:L graphs:11:L type:20:v ref_attr_name:21:L "
            "sparse_tensor:22:L tp:14:L",
    "tensor": "dims:1:v dims_packed:1:L data_type:2:v float_data:4:L int32_data:5:L "
              "string_data:6:L int64_data:7:L name:8:L raw_data:9:L double_data:10:L "
              "uint64_data:11:L external_data:13:L data_location:14:v",
    "value_info": "name:1:L type:2:L",
    "type": "tensor_type:1:L sequence_type:4:L map_type:5:L optional_type:9:L "
            "sparse_tensor_type:8:L",
    "tensor_type": "elem_type:1:v shape:2:L",
    "shape": "dim:1:L",
    "dim": "dim_value:1:v dim_param:2:L",
    "function": "name:1:L input:4:L output:5:L attribute:6:L node:7:L opset_import:9:L "
                "domain:10:L",
    "kv": "key:1:L value:2:L",
}

DOMAINS = ["ai.onnx", "ai.onnx.ml", "com.microsoft", "graphlab.fused", "location",
           "offset", "length"]


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def escape(b):
    return "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else "\\x%02x" % c
                   for c in b)


def main():
    lines = ["# libFuzzer dictionary for the graphlab fuzz targets; written by make_dict.py",
             "# from onnx %s. Keys of onnx.proto fields, then names." % onnx.__version__]
    for msg, fields in FIELDS.items():
        for field in fields.split():
            name, number, wire = field.split(":")
            key = varint(int(number) << 3 | WIRE[wire])
            lines.append('%s_%s="%s"' % (msg, name, escape(key)))
    # special values: big and negative varints, IR versions, opsets
    for label, value in (("ir8", 8), ("ir9", 9), ("opset13", 13), ("opset18", 18),
                         ("big", 1 << 31), ("huge", (1 << 63) - 1), ("neg1", (1 << 64) - 1)):
        lines.append('varint_%s="%s"' % (label, escape(varint(value))))
    for name, value in onnx.TensorProto.DataType.items():
        lines.append('dtype_%s="%s"' % (name.lower(), escape(varint(value))))
    names = set(DOMAINS)
    for schema in defs.get_all_schemas_with_history():
        names.add(schema.name)
        names.update(schema.attributes.keys())
    for name in sorted(names):
        lines.append('"%s"' % escape(name.encode()))
        # as a node's op_type field: key, length, name
        if name[:1].isupper():
            lines.append('"%s"' % escape(varint(4 << 3 | LEN) + varint(len(name)) + name.encode()))
    with open(os.path.join(HERE, "onnx.dict"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d entries" % (len(lines) - 2))


if __name__ == "__main__":
    main()
