#!/usr/bin/python3
"""QDQ versions of float models in the ONNX test layout, expected outputs from ONNX Runtime.

    /usr/bin/python3 tests/data/make_qdq_models.py [--out DIR] [--graphlab PATH] [--ort DIR]
                     [--per-tensor] [--activations u8|s8] [--matmul-bias] [MODEL_DIR...]

With no MODEL_DIR: the in-tree QDQ test models, tests/data/qdq_models/*_qdq/, from
tests/data/models (the table IN_TREE below: model, folder, quantize.py's options).
Each MODEL_DIR holds model.onnx and test_data_set_0/input_N.pb (the ONNX test layout);
for each this writes OUT/NAME_qdq/ (the options go to quantize.py):

    model.onnx                  quantize.py's QDQ form of MODEL_DIR/model.onnx, calibrated
                                (min/max) on MODEL_DIR/test_data_set_0 by graphlab's
                                reference run (--graphlab, default $GRAPHLAB or PATH)
    test_data_set_0/input_N.pb  MODEL_DIR's inputs, unchanged
    test_data_set_0/output_N.pb ONNX Runtime's outputs (onnxruntime-node 1.30 from --ort,
                                default $ORT_DIR or ~/.cache/graphlab-ort; level all, one
                                thread: its int8 kernels), not graphlab's: a test against
                                them checks graphlab against a runtime nobody here wrote
    info.json                   the float model's folder name ("source"), the options
                                given to quantize.py, node count, op histogram, the Q/DQ
                                node counts (what tests/qdq_models.sh holds quantize.py's
                                output to) and per
                                graph output its scale: the DequantizeLinear's that makes it,
                                else (max - min) / 255 of ORT's output ("scale_from")

Node runs tests/data/ort_run.js; the python side reads and writes the TensorProto files.
The same inputs give the same bytes: quantize.py and ORT on one thread are deterministic.
"""

import argparse
import base64
import collections
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quantize  # noqa: E402

# the in-tree QDQ models: (float model in models/, folder name, quantize.py's options)
IN_TREE = (
    ("mobilenet_mini", "mobilenet_mini_qdq", []),
    ("squeezenet_mini", "squeezenet_mini_qdq", []),
    ("mlp_ffn_mini", "mlp_ffn_mini_qdq", []),
    ("encoder_op13_mini", "encoder_op13_mini_qdq", []),
    # the other forms the int8 kernels take: MatMul + Add(int32 bias) as one unit;
    # int8 activations with per-tensor weights
    ("mlp_ffn_mini", "mlp_ffn_mini_bias_qdq", ["--matmul-bias"]),
    ("squeezenet_mini", "squeezenet_mini_s8_qdq", ["--per-tensor", "--activations", "s8"]),
)
ORT_LEVEL = "all"
ORT_THREADS = 1

NP_TO_ORT = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
             np.dtype(np.uint8): "uint8", np.dtype(np.int8): "int8",
             np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
             np.dtype(np.bool_): "bool"}
ORT_TO_NP = {v: k for k, v in NP_TO_ORT.items()}


def input_files(dataset):
    names = [f for f in os.listdir(dataset) if f.startswith("input_") and f.endswith(".pb")]
    return sorted(names, key=lambda f: int(f[6:-3]))


def ort_outputs(ort_dir, model_path, graph_inputs, dataset):
    """ONNX Runtime's outputs of model_path on dataset's inputs: [(name, array)]."""
    inputs = []
    for k, f in enumerate(input_files(dataset)):
        name, array = quantize.read_tensor(os.path.join(dataset, f))
        inputs.append({"name": name if name in graph_inputs else graph_inputs[k],
                       "type": NP_TO_ORT[array.dtype], "dims": list(array.shape),
                       "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()})
    request = {"model": os.path.abspath(model_path), "level": ORT_LEVEL,
               "threads": ORT_THREADS, "inputs": inputs}
    run = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), ort_dir],
                         input=json.dumps(request), capture_output=True, text=True)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise quantize.BadInput(f"ONNX Runtime on {model_path}: {last}")
    outputs = []
    for o in json.loads(run.stdout)["outputs"]:
        array = np.frombuffer(base64.b64decode(o["data"]), dtype=ORT_TO_NP[o["type"]])
        outputs.append((o["name"], array.reshape(o["dims"])))
    return outputs


def output_scale(model, name, array):
    """The scale a graph output is compared in: its DequantizeLinear's, else a u8 step of
    its range."""
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == name:
            return float(consts[node.input[1]]), "DequantizeLinear"
    lo, hi = min(float(array.min()), 0.0), max(float(array.max()), 0.0)
    return (hi - lo) / 255 if hi > lo else 1.0, "range"


def make_one(src, out_root, name, options, graphlab, ort_dir):
    dst = os.path.join(out_root, name)
    dataset = os.path.join(src, "test_data_set_0")
    tmp = dst + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "test_data_set_0"))
    model_path = os.path.join(tmp, "model.onnx")
    argv = [os.path.join(src, "model.onnx"), model_path, "--calib", dataset,
            "--graphlab", graphlab] + options
    with open(os.devnull, "w") as quiet:
        saved, sys.stdout = sys.stdout, quiet
        try:
            quantize.main(argv)
        finally:
            sys.stdout = saved
    model = onnx.load(model_path)
    graph_inputs = [i.name for i in model.graph.input
                    if i.name not in {t.name for t in model.graph.initializer}]
    for f in input_files(dataset):
        shutil.copyfile(os.path.join(dataset, f), os.path.join(tmp, "test_data_set_0", f))
    outputs = ort_outputs(ort_dir, model_path, graph_inputs, dataset)
    info_outputs = []
    for k, (oname, array) in enumerate(outputs):
        t = numpy_helper.from_array(array, oname)
        with open(os.path.join(tmp, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
        scale, scale_from = output_scale(model, oname, array)
        info_outputs.append({"name": oname, "shape": list(array.shape),
                             "scale": float(np.float32(scale)), "scale_from": scale_from})
    histogram = collections.Counter(n.op_type for n in model.graph.node)
    info = {
        "name": name,
        "description": f"{os.path.basename(os.path.normpath(src))} quantized by quantize.py",
        "source": os.path.basename(os.path.normpath(src)),
        "quantize_options": options,
        "opset": max(i.version for i in model.opset_import if i.domain in ("", "ai.onnx")),
        "made_by": "tests/data/make_qdq_models.py",
        "expected_outputs_by": f"onnxruntime-node 1.30, level {ORT_LEVEL}, "
                               f"{ORT_THREADS} thread",
        "node_count": len(model.graph.node),
        "quantize_linear": histogram["QuantizeLinear"],
        "dequantize_linear": histogram["DequantizeLinear"],
        "op_histogram": dict(sorted(histogram.items(), key=lambda kv: (-kv[1], kv[0]))),
        "outputs": info_outputs,
    }
    with open(os.path.join(tmp, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    shutil.rmtree(dst, ignore_errors=True)
    os.rename(tmp, dst)
    print(f"{dst}: {len(model.graph.node)} nodes, {histogram['QuantizeLinear']} Q, "
          f"{histogram['DequantizeLinear']} DQ")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", metavar="MODEL_DIR")
    ap.add_argument("--out", default=os.path.join(HERE, "qdq_models"))
    ap.add_argument("--graphlab", default=os.environ.get("GRAPHLAB") or shutil.which("graphlab"))
    ap.add_argument("--ort", default=os.environ.get("ORT_DIR") or
                    os.path.join(os.path.expanduser("~"), ".cache", "graphlab-ort"))
    ap.add_argument("--per-tensor", action="store_true", help="quantize.py's option")
    ap.add_argument("--activations", choices=("u8", "s8"), help="quantize.py's option")
    ap.add_argument("--matmul-bias", action="store_true", help="quantize.py's option")
    a = ap.parse_args(argv)
    if not a.graphlab:
        raise quantize.BadInput("no graphlab: give --graphlab PATH (or GRAPHLAB=PATH)")
    if not os.path.isdir(os.path.join(a.ort, "node_modules", "onnxruntime-node")):
        raise quantize.BadInput(f"no onnxruntime-node under {a.ort} (give --ort DIR)")
    options = ((["--per-tensor"] if a.per_tensor else []) +
               (["--activations", a.activations] if a.activations else []) +
               (["--matmul-bias"] if a.matmul_bias else []))
    jobs = [(os.path.join(HERE, "models", src), name, opts) for src, name, opts in IN_TREE]
    if a.models:
        jobs = [(m, os.path.basename(os.path.normpath(m)) + "_qdq", options) for m in a.models]
    os.makedirs(a.out, exist_ok=True)
    for src, name, opts in jobs:
        make_one(src, a.out, name, opts, os.path.abspath(a.graphlab), a.ort)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except quantize.BadInput as e:
        print(f"make_qdq_models.py: {e}", file=sys.stderr)
        sys.exit(2)
