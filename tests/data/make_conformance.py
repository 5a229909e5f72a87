#!/usr/bin/python3
"""Write the ONNX node conformance cases of the installed onnx into OUTDIR.

    /usr/bin/python3 tests/data/make_conformance.py OUTDIR

`make check` runs it into the build folder (tests/conformance/node), so that a fresh
clone, which has no ../shared/conformance/node, runs the tests that read the cases. The
cases are onnx's own (onnx.backend.test.case.node, shipped with Debian's python3-onnx):
one folder per case in the layout of onnx/backend/test/data/node,

    CASE/model.onnx                      one operator, or its function expansion
    CASE/test_data_set_<k>/input_<i>.pb  TensorProto (SequenceProto, OptionalProto where
    CASE/test_data_set_<k>/output_<i>.pb the graph I/O is a sequence or an optional)

with the expected outputs from the numpy code of those generators, not from a runtime.
numpy.random is seeded with 0, so the files are the same on every run; with onnx 1.12
they are ../shared/conformance/node's 922 cases (a few outputs differ in the last bit of
float32, from the machine's libm). The folder is written beside OUTDIR and renamed into
place when complete: an interrupted run leaves no half suite.
"""

import os
import shutil
import sys
import warnings

import numpy as np

# onnx 1.12's generators still spell numpy's removed aliases (np.float, np.bool, ...).
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object),
                           ("complex", complex), ("str", str)):
        if not hasattr(np, alias):
            setattr(np, alias, builtin)

from onnx import numpy_helper  # noqa: E402


def proto_of(value, value_info):
    """The serialized proto of one input or output, by the kind of its graph I/O."""
    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name)
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name)
    return numpy_helper.from_array(value, value_info.name)


def write_case(folder, case):
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for k, (inputs, outputs) in enumerate(case.data_sets):
        data = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(data)
        for kind, values, infos in (("input", inputs, graph.input),
                                    ("output", outputs, graph.output)):
            for i, value in enumerate(values):
                with open(os.path.join(data, "%s_%d.pb" % (kind, i)), "wb") as f:
                    f.write(proto_of(value, infos[i]).SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_conformance.py OUTDIR")
    out = sys.argv[1].rstrip("/")
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import onnx.backend.test.case.node as node_cases
        cases = node_cases.collect_testcases(None)
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    for case in cases:
        # A name written twice (onnx 1.12 has two) keeps the last, as onnx's own writer.
        shutil.rmtree(os.path.join(partial, case.name), ignore_errors=True)
        write_case(os.path.join(partial, case.name), case)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(partial, out)
    print("%s: %d cases" % (out, len(os.listdir(out))))


if __name__ == "__main__":
    main()
