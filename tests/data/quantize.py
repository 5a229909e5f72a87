#!/usr/bin/python3
"""graphlab's own static quantizer: a float ONNX model into the QDQ form (issue 21).

    /usr/bin/python3 tests/data/quantize.py FLOAT.onnx OUT.onnx --calib DATASET [--calib DATASET...]
                     [--per-tensor] [--activations u8|s8] [--matmul-bias] [--graphlab PATH]

The form is the one ONNX Runtime's `quantize_static` writes with QuantFormat.QDQ,
QUInt8 activations and QInt8 per-channel weights, restricted to Conv, MatMul and Gemm
(/work/prompts/qdq_spec.md, "The QDQ form we target"):

- every activation input of a Conv/MatMul/Gemm, and every output of one, gets one
  QuantizeLinear -> DequantizeLinear pair (per tensor, uint8 asymmetric; int8 with
  `--activations s8`); every reader of the tensor then reads the DequantizeLinear's
  output (one pair per tensor however many read it, as ORT shares them). When the op's
  output is read only by a Relu or Clip, the pair goes after that activation instead,
  calibrated on its output (ORT's QDQRemovableActivation: the activation stays in the
  graph here, ORT's own Relu/Clip-into-Q fusion removes it at load);
- constant weights become int8 initializers with a DequantizeLinear: symmetric (zero
  point 0), per output channel (Conv W axis 0; MatMul B [K,N] axis 1; Gemm B axis 0 with
  transB=1, else 1), per tensor with `--per-tensor` or when the weight is not rank 2/4;
- a constant bias (Conv B; Gemm C when 1-D, alpha = beta = 1) becomes int32 with scale
  x_scale * w_scale[c], zero point 0, through a DequantizeLinear;
- a MatMul of two activations (attention's Q.K^T) has both operands quantized as
  activations, per tensor;
- not ORT's form, with --matmul-bias: a MatMul whose output only an Add of a constant
  1-D bias of N reads (torch's Linear on 3-D inputs) gets that bias as int32 through a
  DequantizeLinear (axis 0), and the output pair after the Add (or after a Relu/Clip
  that alone reads it), so that MatMul + bias form one unit as Gemm does.

Calibration is min/max per tensor over the data sets given with --calib (folders of
input_N.pb, the ONNX test layout): graphlab itself runs the float model on each, on the
reference kernels, and saves every tensor (`graphlab run MODEL --data DATASET --backend
ref --save-tensors DIR`); the graph inputs' ranges come from the input files. The range
rules are ORT's (onnxruntime/python/tools/quantization/quant_utils.py): the range always
includes 0; uint8: scale = (max - min) / 255, zero point = round(-min / scale) clamped to
[0, 255]; int8 asymmetric: zero point = round(-128 - min / scale); weights:
scale = max|w| / 127, values round(w / scale) in [-127, 127]; bias: round(b / (x_scale *
w_scale)) as int32. A scale that would be 0 (an all-zero range) is 1.0. Rounding is
numpy's, half to even, as ORT's.

The model's opset must be 13 or later (per-axis DequantizeLinear is opset 13); a model at
11 or 12 is moved to 13 when none of its ops changed meaning between them, else refused.
Exit 2 with one line on bad input; OUT is written only when everything succeeded, never
onto the input.
"""

import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QUANTIZED_OPS = ("Conv", "MatMul", "Gemm")
ABSORBED_ACTIVATIONS = ("Relu", "Clip")
# Ops whose inputs or meaning changed between opsets 11 and 13: a model holding one is
# not moved to opset 13 silently.
CHANGED_BY_OPSET_13 = {"Squeeze", "Unsqueeze", "Split", "ReduceSum", "Softmax",
                       "LogSoftmax", "Hardmax", "Resize", "Upsample", "Scan", "If", "Loop"}


class BadInput(Exception):
    """A model or data set this script cannot quantize: one line, exit 2."""


# ---- quantization parameters (ORT's rules) -----------------------------------------------

def activation_params(rmin, rmax, signed):
    """(scale, zero point) of an asymmetric 8-bit activation over [rmin, rmax]."""
    qmin, qmax = (-128, 127) if signed else (0, 255)
    rmin = min(float(np.float32(rmin)), 0.0)
    rmax = max(float(np.float32(rmax)), 0.0)
    # as ORT: the zero point from the float64 scale, the scale then stored as float32
    scale = (rmax - rmin) / (qmax - qmin)
    if scale < np.finfo(np.float32).tiny or not np.isfinite(scale):
        return np.float32(1.0), 0
    zero = int(np.clip(np.round(qmin - rmin / scale), qmin, qmax))
    return np.float32(scale), zero


def symmetric_scale(w):
    """The int8 symmetric scale of weight values w: max|w| / 127, never 0."""
    absmax = float(np.max(np.abs(w))) if w.size else 0.0
    scale = absmax / 127.0
    if scale < np.finfo(np.float32).tiny or not np.isfinite(scale):
        return np.float32(1.0)
    return np.float32(scale)


def quantize_weight(w, axis):
    """int8 values and float32 scales of w, per slice along axis (None: per tensor)."""
    w = w.astype(np.float32)
    if axis is None:
        scale = symmetric_scale(w)
        return np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale
    moved = np.moveaxis(w, axis, 0)
    scales = np.array([symmetric_scale(moved[c]) for c in range(moved.shape[0])],
                      dtype=np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q, scales


# ---- the model's constants and readers ---------------------------------------------------

class Graph:
    """The float graph with what the rewrite asks of it: constants, producers, readers."""

    def __init__(self, model):
        self.model = model
        g = model.graph
        self.constants = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        for node in g.node:  # Constant nodes and Identity of a constant count as constants
            if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
                self.constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
            elif node.op_type == "Identity" and node.input[0] in self.constants:
                self.constants[node.output[0]] = self.constants[node.input[0]]
        self.readers = collections.defaultdict(list)
        for node in g.node:
            for name in node.input:
                if name:
                    self.readers[name].append(node)
        self.graph_outputs = {o.name for o in g.output}
        self.graph_inputs = [i.name for i in g.input if i.name not in self.constants]
        self.used_names = {n for node in g.node for n in list(node.input) + list(node.output)}
        self.used_names |= set(self.constants) | {i.name for i in g.input}
        self.used_names |= {node.name for node in g.node}

    def unique(self, name):
        """name, or name_1, name_2...: a name no value or node has yet."""
        candidate, k = name, 0
        while candidate in self.used_names:
            k += 1
            candidate = f"{name}_{k}"
        self.used_names.add(candidate)
        return candidate


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def output_tensor(g, node):
    """The tensor whose pair quantizes node's output: its output, or the output of the
    Relu/Clip chain that alone reads it (ORT's QDQRemovableActivation)."""
    name = node.output[0]
    while name not in g.graph_outputs:
        readers = g.readers.get(name, [])
        if len(readers) != 1 or readers[0].op_type not in ABSORBED_ACTIVATIONS:
            break
        name = readers[0].output[0]
    return name


def weight_axis(node, w, per_tensor):
    """The per-channel axis of node's constant input 1, or None for per tensor."""
    if per_tensor:
        return None
    if node.op_type == "Conv" and w.ndim >= 3:
        return 0
    if node.op_type == "MatMul" and w.ndim == 2:
        return 1
    if node.op_type == "Gemm" and w.ndim == 2:
        return 0 if attr(node, "transB", 0) else 1
    return None


# ---- the rewrite --------------------------------------------------------------------------

class Quantizer:
    def __init__(self, model, ranges, per_tensor, signed_activations, matmul_bias=False):
        self.g = Graph(model)
        self.matmul_bias = matmul_bias
        self.ranges = ranges
        self.per_tensor = per_tensor
        self.signed = signed_activations
        self.initializers = []
        self.pairs = {}           # tensor -> (DQ output name, scale) once planned
        self.planned = []         # tensors to quantize, in the order they were planned
        self.weights = {}         # (weight, axis) -> (DQ output, scale)
        self.before = collections.defaultdict(list)  # node index -> DQ nodes to put before it
        self.current = None       # the index of the node being planned

    def add_init(self, name, array):
        self.initializers.append(numpy_helper.from_array(array, name))

    def plan_activation(self, tensor):
        """Plan one Q->DQ pair for tensor (once); its scale."""
        if tensor in self.pairs:
            return self.pairs[tensor][1]
        if tensor not in self.ranges:
            raise BadInput(f"no calibration range for tensor '{tensor}' (did the float run "
                           "save it?)")
        scale, zero = activation_params(*self.ranges[tensor], self.signed)
        self.pairs[tensor] = (None, scale, zero)
        self.planned.append(tensor)
        return scale

    def weight_dq(self, node, name, axis):
        """DequantizeLinear of node's constant weight `name`: its output and scales."""
        key = (name, axis)
        if key not in self.weights:
            q, scale = quantize_weight(self.g.constants[name], axis)
            qn, sn, zn = (self.g.unique(f"{name}_quantized"), self.g.unique(f"{name}_scale"),
                          self.g.unique(f"{name}_zero_point"))
            out = self.g.unique(f"{name}_DequantizeLinear_Output")
            self.add_init(qn, q)
            self.add_init(sn, np.asarray(scale, dtype=np.float32))
            self.add_init(zn, np.zeros(np.shape(scale), dtype=np.int8))
            kw = {} if axis is None else {"axis": axis}
            self.before[self.current].append(helper.make_node(
                "DequantizeLinear", [qn, sn, zn], [out],
                name=self.g.unique(f"{name}_DequantizeLinear"), **kw))
            self.weights[key] = (out, scale)
        return self.weights[key]

    def bias_dq(self, node, name, x_scale, w_scale):
        """DequantizeLinear of node's constant bias as int32, scale x_scale * w_scale."""
        b = self.g.constants[name].astype(np.float64)
        scale = (np.float32(x_scale) * np.asarray(w_scale, dtype=np.float32)).astype(np.float32)
        scale = np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)
        if scale.ndim == 0 and b.ndim == 1:
            scale = np.full(b.shape, scale, dtype=np.float32)  # per channel: axis 0
        q = np.clip(np.round(b / scale.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
        qn, sn, zn = (self.g.unique(f"{name}_quantized"), self.g.unique(f"{name}_scale"),
                      self.g.unique(f"{name}_zero_point"))
        out = self.g.unique(f"{name}_DequantizeLinear_Output")
        self.add_init(qn, q)
        self.add_init(sn, scale)
        self.add_init(zn, np.zeros(scale.shape, dtype=np.int32))
        kw = {"axis": 0} if scale.ndim == 1 else {}
        self.before[self.current].append(helper.make_node(
            "DequantizeLinear", [qn, sn, zn], [out],
            name=self.g.unique(f"{name}_DequantizeLinear"), **kw))
        return out

    def plan_node(self, node):
        """Plan node's pairs and rewrite its constant inputs (in place on the node)."""
        g = self.g
        consts = [n in g.constants for n in node.input]
        if node.op_type == "Conv" and (len(node.input) < 2 or consts[0] or not consts[1]):
            return False
        if node.op_type in ("MatMul", "Gemm") and consts[0]:
            return False  # a constant left operand: left in float (not a form we target)
        x_scale = self.plan_activation(node.input[0])
        if consts[1]:
            w = g.constants[node.input[1]]
            out, w_scale = self.weight_dq(node, node.input[1], weight_axis(node, w,
                                                                        self.per_tensor))
            node.input[1] = out
        else:
            self.plan_activation(node.input[1])  # both operands are activations
            w_scale = None
        if len(node.input) > 2 and node.input[2] and consts[2] and w_scale is not None:
            b = g.constants[node.input[2]]
            n_out = np.size(w_scale)
            plain_gemm = (node.op_type != "Gemm" or
                          (attr(node, "alpha", 1.0) == 1.0 and attr(node, "beta", 1.0) == 1.0))
            if plain_gemm and b.ndim == 1 and (n_out == 1 or b.shape[0] == n_out):
                node.input[2] = self.bias_dq(node, node.input[2], x_scale, w_scale)
        last = node
        if self.matmul_bias and node.op_type == "MatMul" and w_scale is not None:
            last = self.plan_matmul_bias(node, x_scale, w_scale, w.shape[-1])
        self.plan_activation(output_tensor(g, last))
        return True

    def plan_matmul_bias(self, node, x_scale, w_scale, n_cols):
        """--matmul-bias: the Add of a constant 1-D bias of N that alone reads a MatMul's
        output (torch's Linear on 3-D inputs) takes an int32 bias through a
        DequantizeLinear, as Gemm's C, and the output pair goes after it. The node whose
        output the pair quantizes (the Add, else the MatMul)."""
        g = self.g
        readers = g.readers.get(node.output[0], [])
        if node.output[0] in g.graph_outputs or len(readers) != 1 or readers[0].op_type != "Add":
            return node
        add = readers[0]
        k = 1 if add.input[0] == node.output[0] else 0
        b = g.constants.get(add.input[k])
        if b is None or b.ndim != 1 or b.shape[0] != n_cols:
            return node
        add.input[k] = self.bias_dq(node, add.input[k], x_scale, w_scale)
        return add

    def emit_pair(self, tensor, nodes):
        """Append tensor's Q and DQ nodes; returns the name readers must now read."""
        _, scale, zero = self.pairs[tensor]
        g = self.g
        base = tensor
        sn, zn = g.unique(f"{base}_scale"), g.unique(f"{base}_zero_point")
        self.add_init(sn, np.asarray(scale, dtype=np.float32))
        self.add_init(zn, np.asarray(zero, dtype=np.int8 if self.signed else np.uint8))
        qout = g.unique(f"{base}_QuantizeLinear_Output")
        if tensor in g.graph_outputs:
            # the graph output keeps its name on the DQ's output; its producer is renamed
            source, dq_out = self.renamed[tensor], tensor
        else:
            source, dq_out = tensor, g.unique(f"{base}_DequantizeLinear_Output")
        nodes.append(helper.make_node("QuantizeLinear", [source, sn, zn], [qout],
                                      name=g.unique(f"{base}_QuantizeLinear")))
        nodes.append(helper.make_node("DequantizeLinear", [qout, sn, zn], [dq_out],
                                      name=g.unique(f"{base}_DequantizeLinear")))
        return dq_out

    def run(self):
        g = self.g
        graph = g.model.graph
        quantized = []
        for self.current, n in enumerate(graph.node):
            if n.op_type in QUANTIZED_OPS and self.plan_node(n):
                quantized.append(n.name)
        if not quantized:
            raise BadInput("no Conv, MatMul or Gemm with a constant weight or two activations "
                           "to quantize")
        # graph outputs that get a pair: their producers write a renamed tensor
        self.renamed = {t: g.unique(f"{t}_QuantizeInput")
                        for t in self.planned if t in g.graph_outputs}
        replaced = {}   # tensor -> the DQ output its readers read
        nodes = []
        for t in self.planned:
            if t in g.graph_inputs:
                replaced[t] = self.emit_pair(t, nodes)
        for k, original_node in enumerate(graph.node):
            node = onnx.NodeProto()
            node.CopyFrom(original_node)
            nodes.extend(self.before.get(k, []))
            for i, name in enumerate(node.input):
                if name in replaced:
                    node.input[i] = replaced[name]
            for i, name in enumerate(node.output):
                if name in self.renamed:
                    node.output[i] = self.renamed[name]
            nodes.append(node)
            for name in list(node.output):
                original = next((t for t, r in self.renamed.items() if r == name), name)
                if original in self.pairs and original not in replaced:
                    replaced[original] = self.emit_pair(original, nodes)
        del graph.node[:]
        graph.node.extend(nodes)
        self.drop_unread_constants()
        graph.initializer.extend(self.initializers)
        return len(quantized)

    def drop_unread_constants(self):
        """Float weights and biases (initializers, Constant nodes) no node reads any more."""
        graph = self.g.model.graph
        while True:
            read = {n for node in graph.node for n in node.input} | self.g.graph_outputs
            dead = [node for node in graph.node if node.op_type in ("Constant", "Identity")
                    and node.output[0] in self.g.constants and node.output[0] not in read]
            if not dead:
                break
            for node in dead:
                graph.node.remove(node)
        read = {n for node in graph.node for n in node.input} | self.g.graph_outputs
        keep = [t for t in graph.initializer if t.name in read]
        del graph.initializer[:]
        graph.initializer.extend(keep)
        inputs = [i for i in graph.input if i.name in read or i.name not in self.g.constants]
        del graph.input[:]
        graph.input.extend(inputs)


# ---- calibration ---------------------------------------------------------------------------

def read_tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def widen(ranges, name, array):
    if array.dtype.kind != "f" or array.size == 0:
        return
    lo, hi = float(np.min(array)), float(np.max(array))
    if name in ranges:
        lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
    ranges[name] = (lo, hi)


def calibrate(graphlab, model_path, graph_inputs, datasets):
    """min/max of every float tensor of graphlab's reference run on each data set."""
    ranges = {}
    for dataset in datasets:
        files = sorted(glob.glob(os.path.join(dataset, "input_*.pb")),
                       key=lambda p: int(os.path.basename(p)[6:-3]))
        if len(files) != len(graph_inputs):
            raise BadInput(f"{dataset}: {len(files)} input_N.pb files for the model's "
                           f"{len(graph_inputs)} inputs")
        for k, path in enumerate(files):
            name, array = read_tensor(path)
            widen(ranges, name if name in graph_inputs else graph_inputs[k], array)
        with tempfile.TemporaryDirectory(prefix="quantize-calib.") as tmp:
            run = subprocess.run([graphlab, "run", model_path, "--data", dataset, "--backend",
                                  "ref", "--save-tensors", tmp], capture_output=True, text=True)
            if run.returncode not in (0, 1):  # 1: outputs over tolerance, still saved
                last = (run.stderr.strip().splitlines() or ["no message"])[-1]
                raise BadInput(f"{graphlab} run {model_path} on {dataset} failed "
                               f"(exit {run.returncode}): {last}")
            with open(os.path.join(tmp, "index.json")) as f:
                index = json.load(f)
            for entry in index["tensors"]:
                _, array = read_tensor(os.path.join(tmp, entry["file"]))
                widen(ranges, entry["name"], array)
    return ranges


# ---- the command ---------------------------------------------------------------------------

def check_opset(model):
    """The default domain's opset moved to 13 when it is 11 or 12 and safe; else refused."""
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            if imp.version >= 13:
                return
            changed = sorted({n.op_type for n in model.graph.node} & CHANGED_BY_OPSET_13)
            if imp.version < 11 or changed:
                raise BadInput(f"opset {imp.version}: per-axis DequantizeLinear needs 13, and "
                               f"moving there would change {', '.join(changed) or 'older ops'}")
            imp.version = 13
            return
    raise BadInput("the model imports no default-domain opset")


def find_graphlab(given):
    for candidate in (given, os.environ.get("GRAPHLAB"), shutil.which("graphlab")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BadInput("no graphlab to calibrate with: give --graphlab PATH (or GRAPHLAB=PATH)")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--calib", action="append", required=True, metavar="DATASET",
                    help="a folder of input_N.pb (repeatable): min/max over all of them")
    ap.add_argument("--per-tensor", action="store_true", help="weights per tensor")
    ap.add_argument("--activations", choices=("u8", "s8"), default="u8")
    ap.add_argument("--matmul-bias", action="store_true",
                    help="a MatMul's Add of a constant bias takes an int32 bias, the output "
                         "pair after the Add (not ORT's form)")
    ap.add_argument("--graphlab", help="the graphlab binary (default $GRAPHLAB, else PATH)")
    a = ap.parse_args(argv)
    if os.path.exists(a.out) and os.path.samefile(a.out, a.model):
        raise BadInput(f"{a.out}: the output would overwrite the input model")
    try:
        model = onnx.load(a.model)
    except Exception as e:  # noqa: BLE001 - any parse failure is one line
        raise BadInput(f"{a.model}: not an ONNX model ({e})") from None
    check_opset(model)
    graphlab = find_graphlab(a.graphlab)
    g = Graph(model)
    ranges = calibrate(graphlab, a.model, g.graph_inputs, a.calib)
    q = Quantizer(model, ranges, a.per_tensor, a.activations == "s8", a.matmul_bias)
    count = q.run()
    onnx.checker.check_model(model)
    tmp = f"{a.out}.tmp.{os.getpid()}"
    try:
        onnx.save(model, tmp)
        os.replace(tmp, a.out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    pairs = sum(1 for n in model.graph.node if n.op_type == "QuantizeLinear")
    print(f"{a.out}: {count} ops quantized, {pairs} Q/DQ pairs on activations, "
          f"{len(q.weights)} int8 weights")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        print(f"quantize.py: {e}", file=sys.stderr)
        sys.exit(2)
