#!/usr/bin/python3
"""Write the in-tree model corpus, tests/data/models/, with reference test data.

Run with a python that has onnx (1.12+) and numpy, e.g. Debian's /usr/bin/python3:

    /usr/bin/python3 tests/data/make_models.py [OUTDIR]

OUTDIR defaults to tests/data/models beside this script. A fresh clone has no ../shared,
whose models (torch exports, outputs from ONNX Runtime) the tests also run when present;
these are their small in-tree counterparts, so that every path those tests take runs on a
fresh clone too. Each is written the way torch 1.13 exports the shared one (the same ops,
wiring, node and value names, Constant nodes, Shape/Gather/Slice chains), with small
channel counts and inputs. The output is deterministic (a fixed seed per model, pinned IR
version, no timestamps): running the script again leaves the files byte-identical.

    NAME/model.onnx                      the model (weights inline, static shapes, batch 1)
    NAME/test_data_set_0/input_0.pb      onnx.TensorProto named after the graph input
    NAME/test_data_set_0/output_0.pb     onnx.TensorProto named after the graph output
    NAME/info.json                       node count, op histogram, and the bounds the
                                         tests hold the optimizer to (see `Bounds` below)

The expected outputs are computed while the graph is built (class Net below: each op
appends its node and computes its value with numpy, in float64, stored as float32), not
by any runtime, so they can catch a runtime's bug. Every model passes
onnx.checker.check_model(full_check=True) and strict shape inference before it is written.
"""

import collections
import json
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
from make_examples import (_erf, check, const_node, contiguous, finish_model,  # noqa: E402
                           init, ref_softmax, write_test_data)

SEED = 20250125
F32 = TensorProto.FLOAT


# ---- numpy reference kernels (float64) ---------------------------------------------

def ref_conv(x, w, b, stride, pad, group):
    """NCHW convolution with groups, OIHW weights, symmetric padding, no dilation."""
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    assert ci * group == c and o % group == 0
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // group
    for g in range(group):
        xg = xp[:, g * ci:(g + 1) * ci]
        wg = w[g * og:(g + 1) * og]
        for ky in range(kh):
            for kx in range(kw):
                # every output pixel reads xp at (y*stride+ky, x*stride+kx)
                patch = xg[:, :, ky:ky + stride * (oh - 1) + 1:stride,
                           kx:kx + stride * (ow - 1) + 1:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                         wg[:, :, ky, kx])
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out


def ref_maxpool(x, kernel, stride, pad, ceil_mode):
    """Square MaxPool, NCHW, symmetric padding; ceil_mode rounds the output size up (the
    sizes used here never start a window in the padding)."""
    h = x.shape[2]
    span = h + 2 * pad - kernel
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    extra = (out - 1) * stride + kernel - (h + 2 * pad)  # ceil_mode's partial windows
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad + extra), (pad, pad + extra)),
                constant_values=-np.inf)
    y = np.full(x.shape[:2] + (out, out), -np.inf)
    for ky in range(kernel):
        for kx in range(kernel):
            y = np.maximum(y, xp[:, :, ky:ky + stride * (out - 1) + 1:stride,
                                 kx:kx + stride * (out - 1) + 1:stride])
    return y


def ref_layernorm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def ref_div(a, b):
    """ONNX Div: integer division truncates (every value here is positive)."""
    if np.issubdtype(a.dtype, np.integer):
        return a // b
    return a / b


def ref_slice(x, starts, ends, axes):
    index = [slice(None)] * x.ndim
    for s, e, a in zip(starts, ends, axes):
        index[a] = slice(int(s), int(e))
    return x[tuple(index)]


# ---- the builder -------------------------------------------------------------------

def as_value(array):
    """What the reference computes with: floats in float64 (after rounding to the float32
    the model stores), integers as they are."""
    array = np.asarray(array)
    if np.issubdtype(array.dtype, np.floating):
        return array.astype(np.float32).astype(np.float64)
    return array


class Net:
    """An ONNX graph written as torch 1.13 exports a module, evaluated as it is built.

    Node names follow the exporter: "<scope>/<Op>", then "<scope>/<Op>_1", ...; a node's
    output is "<node name>_output_0" unless it is a graph output."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits, self.inputs = [], [], []
        self.value = {}
        self.used = collections.Counter()
        self.next_onnx_id = 100  # the exporter's "onnx::Conv_123" initializer names

    def _node_name(self, scope, op):
        base = "%s/%s" % (scope, op)
        k = self.used[base]
        self.used[base] += 1
        return base if k == 0 else "%s_%d" % (base, k)

    def input(self, name, array):
        self.inputs.append((name, array))
        self.value[name] = as_value(array)
        return name

    def param(self, name, array):
        """An initializer; name None: the exporter's "onnx::<Op>_<id>"."""
        self.inits.append(init(name, np.asarray(array, dtype=np.float32)))
        self.value[name] = as_value(array)
        return name

    def onnx_name(self, op):
        self.next_onnx_id += 1
        return "onnx::%s_%d" % (op, self.next_onnx_id)

    def const(self, scope, array):
        name = self._node_name(scope, "Constant")
        out = name + "_output_0"
        self.nodes.append(const_node(name, out, np.asarray(array)))
        self.value[out] = as_value(array)
        return out

    def op(self, scope, op_type, inputs, fn, out=None, **attrs):
        """Append node op_type(inputs) and compute its value: fn(*input values)."""
        name = self._node_name(scope, op_type)
        out = out or name + "_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        self.value[out] = fn(*[self.value[i] for i in inputs])
        return out

    # the ops, as the exporter writes them

    def conv(self, scope, x, c_out, kernel, stride=1, pad=0, group=1, bias=True, name=None):
        c_in = self.value[x].shape[1]
        fan_in = c_in // group * kernel * kernel
        # He initialisation: activations keep their scale through the ReLUs.
        w = self.rng.normal(0.0, math.sqrt(2.0 / fan_in),
                            size=(c_out, c_in // group, kernel, kernel))
        inputs = [x, self.param(name and name + ".weight" or self.onnx_name("Conv"), w)]
        if bias:
            b = self.rng.uniform(-1, 1, size=(c_out,)) / math.sqrt(fan_in)
            inputs.append(self.param(name and name + ".bias" or self.onnx_name("Conv"), b))
        return self.op(scope, "Conv", inputs,
                       lambda v, w, b=None: ref_conv(v, w, b, stride, pad, group),
                       dilations=[1, 1], group=group, kernel_shape=[kernel, kernel],
                       pads=[pad] * 4, strides=[stride, stride])

    def batchnorm(self, scope, x, prefix, eps=1e-5):
        c = self.value[x].shape[1]
        p = [self.param(prefix + ".weight", self.rng.uniform(0.5, 1.5, size=c)),
             self.param(prefix + ".bias", self.rng.normal(0.0, 0.1, size=c)),
             self.param(prefix + ".running_mean", self.rng.normal(0.0, 0.5, size=c)),
             self.param(prefix + ".running_var", self.rng.uniform(0.5, 2.0, size=c))]

        def bn(v, g, b, m, var):
            r = (1, -1, 1, 1)
            return (v - m.reshape(r)) / np.sqrt(var.reshape(r) + as_value(eps)) * \
                g.reshape(r) + b.reshape(r)
        return self.op(scope, "BatchNormalization", [x] + p, bn, epsilon=eps, momentum=0.9)

    def relu(self, scope, x, out=None):
        return self.op(scope, "Relu", [x], lambda v: np.maximum(v, 0.0), out=out)

    def relu6(self, scope, x):
        """torch's ReLU6: Clip with its bounds as Constant nodes."""
        lo = self.const(scope, np.array(0.0, dtype=np.float32))
        hi = self.const(scope, np.array(6.0, dtype=np.float32))
        return self.op(scope, "Clip", [x, lo, hi], lambda v, a, b: np.clip(v, a, b))

    def maxpool(self, scope, x, kernel, stride, pad=0, ceil_mode=0):
        return self.op(scope, "MaxPool", [x],
                       lambda v: ref_maxpool(v, kernel, stride, pad, ceil_mode),
                       ceil_mode=ceil_mode, kernel_shape=[kernel, kernel],
                       pads=[pad] * 4, strides=[stride, stride])

    def binary(self, scope, op_type, a, b, out=None):
        fn = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": ref_div,
              "Pow": np.power, "MatMul": np.matmul}[op_type]
        return self.op(scope, op_type, [a, b], fn, out=out)

    def unary(self, scope, op_type, x):
        fn = {"Sqrt": np.sqrt, "Erf": _erf}[op_type]
        return self.op(scope, op_type, [x], fn)

    def gemm(self, scope, x, n_out, prefix, out=None):
        """torch's Linear on a matrix: Gemm with transB."""
        n_in = self.value[x].shape[1]
        bound = 1.0 / math.sqrt(n_in)
        w = self.param(prefix + ".weight", self.rng.uniform(-bound, bound, (n_out, n_in)))
        b = self.param(prefix + ".bias", self.rng.uniform(-bound, bound, n_out))
        return self.op(scope, "Gemm", [x, w, b], lambda v, w, b: v @ w.T + b, out=out,
                       alpha=1.0, beta=1.0, transB=1)

    def linear(self, scope, x, n_out, prefix, out=None):
        """torch's Linear on a batch of rows: MatMul by the transposed weight, then Add
        with the bias first."""
        n_in = self.value[x].shape[-1]
        bound = 1.0 / math.sqrt(n_in)
        w = self.param(self.onnx_name("MatMul"), self.rng.uniform(-bound, bound, (n_in, n_out)))
        b = self.param(prefix + ".bias", self.rng.uniform(-bound, bound, n_out))
        mm = self.binary(scope, "MatMul", x, w)
        return self.binary(scope, "Add", b, mm, out=out)

    def reshape(self, scope, x, shape, opset):
        s = self.const(scope, np.array(shape, dtype=np.int64))
        attrs = {"allowzero": 0} if opset >= 14 else {}
        return self.op(scope, "Reshape", [x, s], lambda v, s: v.reshape(s), **attrs)

    def transpose(self, scope, x, perm, out=None):
        return self.op(scope, "Transpose", [x], lambda v: v.transpose(perm), out=out, perm=perm)

    def concat(self, scope, inputs, axis):
        return self.op(scope, "Concat", inputs, lambda *v: np.concatenate(v, axis=axis),
                       axis=axis)

    def chunk(self, scope, x, n, axis):
        """torch's chunk at opset 13: the size of `axis` read through Shape and Gather,
        (size + n - 1) / n per piece, one Slice per piece with bounds k * that."""
        axes = self.const(scope, np.array([axis], dtype=np.int64))
        shape = self.op(scope, "Shape", [x], lambda v: np.array(v.shape, dtype=np.int64))
        size = self.op(scope, "Gather", [shape, axes], lambda s, i: s[i], axis=0)
        start = self.const(scope, np.array([0], dtype=np.int64))
        size = self.binary(scope, "Add", size,
                           self.const(scope, np.array([n - 1], dtype=np.int64)))
        piece = self.binary(scope, "Div", size, self.const(scope, np.array([n], dtype=np.int64)))
        pieces = []
        for k in range(1, n + 1):
            end = self.binary(scope, "Mul", piece,
                              self.const(scope, np.array([k], dtype=np.int64)))
            pieces.append(self.op(scope, "Slice", [x, start, end, axes], ref_slice))
            start = end
        return pieces

    def finish(self, graph_name, outputs, doc, opset):
        """The model, checked, with its outputs' reference values."""
        def info(name):
            v = self.value[name]
            return helper.make_tensor_value_info(name, F32, list(v.shape))
        graph = helper.make_graph(self.nodes, graph_name, [info(n) for n, _ in self.inputs],
                                  [info(n) for n in outputs], initializer=self.inits)
        model = finish_model(graph, doc, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=7 if opset < 15 else 8)
        model.producer_name = "graphlab-tests"
        check(model)
        return model, [(n, self.value[n].astype(np.float32)) for n in outputs]


# ---- bounds ---------------------------------------------------------------------------
# What the tests hold the default pipeline to on each model, where ../shared gives ONNX
# Runtime's counts (its info.json and ort_optimized/ listings): the node count after
# fusion is at most what ONNX Runtime's level `extended` leaves (fusion.sh) and the
# Transpose count at most what its level `basic` leaves (transpose_counts.sh). These
# models repeat the shared exports' structure, so the same fusions apply; each count is
# derived below from the op histogram the way ORT's listing of the shared model shows it.

def bounds(max_nodes, max_transposes, why):
    return {"max_nodes_after_default_pipeline": max_nodes,
            "max_transposes_after_default_pipeline": max_transposes,
            "bounds_derived_from": why}


# ---- the models ------------------------------------------------------------------------

def nhwc_convnet(net):
    """shared nhwc_convnet, 4 convs, 1x32x32x3 -> 1x16x16x4."""
    x = net.input("input_nhwc", net.rng.normal(0.0, 1.0, (1, 32, 32, 3)).astype(np.float32))
    t = net.transpose("", x, [0, 3, 1, 2])
    y = net.conv("/conv1", t, 8, 3, pad=1, name="conv1")
    y = net.relu("", net.transpose("", y, [0, 2, 3, 1]))
    y = net.conv("/conv2", net.transpose("", y, [0, 3, 1, 2]), 16, 3, stride=2, pad=1,
                 bias=False, name="conv2")
    y = net.transpose("", y, [0, 2, 3, 1])
    y = net.binary("", "Mul", y, net.param("scale", net.rng.uniform(0.5, 1.5, 16)))
    y = net.binary("", "Add", y, net.param("shift", net.rng.normal(0.0, 0.1, 16)))
    y = net.transpose("", net.relu("", y), [0, 3, 1, 2])
    y = net.relu("", net.conv("/conv3", y, 16, 3, pad=1, name="conv3"))
    y = net.conv("/conv4", y, 4, 1, name="conv4")
    return [net.transpose("", y, [0, 2, 3, 1], out="output_nhwc")]


def nhwc_convnet_bounds(h):
    # ORT: Conv+Relu fused (4 Convs), the Mul/Add folded into conv2, 2 Transposes at the
    # ends (our layout pass takes all four Convs to NHWC: transpose_counts.sh wants 0).
    return bounds(h["Conv"] + 2, 2, "Conv + the 2 end Transposes (shared nhwc_convnet: 6)")


def mobilenet(net):
    """shared mobilenet_v2 narrowed (inverted residuals with ReLU6 = Clip, depthwise
    3x3, residual Adds, GlobalAveragePool, Flatten, Gemm), one BatchNormalization left
    after the last Conv as an export without constant folding writes it."""
    x = net.input("input", net.rng.normal(0.0, 1.0, (1, 3, 32, 32)).astype(np.float32))
    s = "/features/features.0"
    y = net.relu6(s + "/features.0.2", net.conv(s + "/features.0.0", x, 8, 3, 2, 1))
    c_in, block = 8, 1
    # (expansion, channels, repeats, first stride), as torchvision's table
    for t, c, n, first_stride in ((1, 8, 1, 1), (4, 12, 2, 2), (4, 16, 2, 2), (4, 20, 2, 1)):
        for i in range(n):
            s = "/features/features.%d" % block
            stride = first_stride if i == 0 else 1
            h, k = y, 0
            if t != 1:
                h = net.conv(s + "/conv/conv.0/conv.0.0", h, c_in * t, 1)
                h = net.relu6(s + "/conv/conv.0/conv.0.2", h)
                k = 1
            h = net.conv(s + "/conv/conv.%d/conv.%d.0" % (k, k), h, c_in * t, 3, stride, 1,
                         group=c_in * t)
            h = net.relu6(s + "/conv/conv.%d/conv.%d.2" % (k, k), h)
            h = net.conv(s + "/conv/conv.%d" % (k + 1), h, c, 1)
            y = net.binary(s, "Add", y, h) if stride == 1 and c_in == c else h
            c_in, block = c, block + 1
    s = "/features/features.%d" % block
    y = net.conv(s + "/features.%d.0" % block, y, 64, 1, bias=False,
                 name="features.%d.0" % block)
    y = net.batchnorm(s + "/features.%d.1" % block, y, "features.%d.1" % block)
    y = net.relu6(s + "/features.%d.2" % block, y)
    y = net.op("", "GlobalAveragePool", [y], lambda v: v.mean(axis=(2, 3), keepdims=True))
    y = net.op("", "Flatten", [y], lambda v: v.reshape(v.shape[0], -1), axis=1)
    return [net.gemm("/classifier/classifier.1", y, 10, "classifier.1", out="logits")]


def mobilenet_bounds(h):
    # ORT (shared mobilenet_v2: 52 Conv + 10 Add + 3 = 65): every Clip fused into its
    # Conv, the BatchNormalization folded into its Conv, Constants gone.
    return bounds(h["Conv"] + h["Add"] + 3, 0,
                  "Conv + Add + GlobalAveragePool, Flatten, Gemm (shared mobilenet_v2: 65)")


def squeezenet(net):
    """shared squeezenet1_1 narrowed: Fire modules (squeeze 1x1, expand 1x1 and 3x3,
    Concat), MaxPool 3/2 with ceil_mode where the ceiling matters (34 -> 16 -> 8 -> 4 -> 2),
    a 1x1 Conv classifier, GlobalAveragePool, Flatten."""
    x = net.input("input", net.rng.normal(0.0, 1.0, (1, 3, 34, 34)).astype(np.float32))
    y = net.conv("/features/features.0", x, 16, 3, 2, name="features.0")
    y = net.relu("/features/features.1", y)
    fires = {3: (4, 8), 4: (4, 8), 6: (8, 16), 7: (8, 16), 9: (12, 16), 10: (12, 16),
             11: (12, 20), 12: (12, 20)}
    for i in range(2, 13):
        s = "/features/features.%d" % i
        if i in (2, 5, 8):
            y = net.maxpool(s, y, 3, 2, ceil_mode=1)
            continue
        sq, ex = fires[i]
        p = "features.%d." % i
        y = net.relu(s + "/squeeze_activation", net.conv(s + "/squeeze", y, sq, 1,
                                                          name=p + "squeeze"))
        e1 = net.relu(s + "/expand1x1_activation", net.conv(s + "/expand1x1", y, ex, 1,
                                                            name=p + "expand1x1"))
        e3 = net.relu(s + "/expand3x3_activation", net.conv(s + "/expand3x3", y, ex, 3,
                                                            pad=1, name=p + "expand3x3"))
        y = net.concat(s, [e1, e3], axis=1)
    y = net.conv("/classifier/classifier.1", y, 10, 1, name="classifier.1")
    y = net.relu("/classifier/classifier.2", y)
    y = net.op("/classifier/classifier.3", "GlobalAveragePool", [y],
               lambda v: v.mean(axis=(2, 3), keepdims=True))
    return [net.op("", "Flatten", [y], lambda v: v.reshape(v.shape[0], -1), out="logits",
                   axis=1)]


def squeezenet_bounds(h):
    # ORT (shared squeezenet1_1: 26 + 8 + 3 + 2 = 39): every Relu fused into its Conv.
    return bounds(h["Conv"] + h["Concat"] + h["MaxPool"] + 2, 0,
                  "Conv + Concat + MaxPool + GlobalAveragePool, Flatten "
                  "(shared squeezenet1_1: 39)")


def shufflenet(net):
    """shared shufflenet_v2_x0_5 narrowed (stages of 4, 8, 4 units, channels 8/16/24/32,
    conv5 48): channel shuffle as Reshape/Transpose/Reshape, the split of a stride-1 unit
    as torch's chunk (Shape/Gather/Add/Div/Mul/Slice), depthwise 3x3, Concat; 1x3x64x64."""
    x = net.input("input", net.rng.normal(0.0, 1.0, (1, 3, 64, 64)).astype(np.float32))
    y = net.relu("/conv1/conv1.2", net.conv("/conv1/conv1.0", x, 8, 3, 2, 1))
    y = net.maxpool("/maxpool", y, 3, 2, pad=1)
    c_in = 8
    for stage, (units, c_out) in enumerate(((4, 16), (8, 24), (4, 32)), start=2):
        half = c_out // 2
        for u in range(units):
            s = "/stage%d/stage%d.%d" % (stage, stage, u)
            if u == 0:
                b1 = net.conv(s + "/branch1/branch1.0", y, c_in, 3, 2, 1, group=c_in)
                b1 = net.conv(s + "/branch1/branch1.2", b1, half, 1)
                b1 = net.relu(s + "/branch1/branch1.4", b1)
                b2_in, stride = y, 2
            else:
                b1, b2_in = net.chunk(s, y, 2, axis=1)
                stride = 1
            b2 = net.relu(s + "/branch2/branch2.2", net.conv(s + "/branch2/branch2.0",
                                                             b2_in, half, 1))
            b2 = net.conv(s + "/branch2/branch2.3", b2, half, 3, stride, 1, group=half)
            b2 = net.relu(s + "/branch2/branch2.7", net.conv(s + "/branch2/branch2.5",
                                                             b2, half, 1))
            y = net.concat(s, [b1, b2], axis=1)
            hw = net.value[y].shape[2]
            y = net.reshape(s, y, [1, 2, half, hw, hw], 13)
            y = net.transpose(s, y, [0, 2, 1, 3, 4])
            y = net.reshape(s, y, [1, -1, hw, hw], 13)
        c_in = c_out
    y = net.relu("/conv5/conv5.2", net.conv("/conv5/conv5.0", y, 48, 1))
    y = net.op("", "ReduceMean", [y], lambda v: v.mean(axis=(2, 3)), axes=[2, 3], keepdims=0)
    return [net.gemm("/fc", y, 10, "fc", out="logits")]


def shufflenet_bounds(h):
    # ORT (shared shufflenet_v2_x0_5: 56 + 16 + 32 + 13 + 16 + 3 = 136): Relus fused into
    # their Convs, each chunk's two Slices one Split, the shape arithmetic folded; every
    # channel shuffle keeps its Transpose.
    return bounds(h["Conv"] + h["Concat"] + h["Reshape"] + h["Slice"] // 2 +
                  h["Transpose"] + 3, h["Transpose"],
                  "Conv + Concat + Reshape + Slice/2 + Transpose + MaxPool, ReduceMean, "
                  "Gemm (shared shufflenet_v2_x0_5: 136)")


D, HEADS, FF, SEQ = 32, 4, 64, 8


def encoder(net, opset):
    """shared transformer_encoder_layer(_op13) narrowed: torch.nn.TransformerEncoderLayer
    (d_model 32, 4 heads, feed-forward 64, gelu, batch_first, post-norm), sequence 8.
    At opset 13 LayerNorm is decomposed (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/
    Add); from opset 17 it is LayerNormalization."""
    src = net.input("src", net.rng.normal(0.0, 1.0, (1, SEQ, D)).astype(np.float32))
    a = "/self_attn"
    x = net.transpose(a, src, [1, 0, 2])
    bound = 1.0 / math.sqrt(D)
    w_in = net.param(net.onnx_name("MatMul"), net.rng.uniform(-bound, bound, (D, 3 * D)))
    b_in = net.param("self_attn.in_proj_bias", net.rng.uniform(-bound, bound, 3 * D))
    qkv = net.binary(a, "Add", b_in, net.binary(a, "MatMul", x, w_in))
    # torch splits the packed projection with chunk(3, dim=-1)
    q, k, v = net.chunk(a, qkv, 3, axis=-1)
    dh = D // HEADS
    q = net.transpose(a, net.reshape(a, q, [SEQ, HEADS, dh], opset), [1, 0, 2])
    k = net.reshape(a, k, [SEQ, HEADS, dh], opset)
    v = net.transpose(a, net.reshape(a, v, [SEQ, HEADS, dh], opset), [1, 0, 2])
    q = net.binary(a, "Div", q, net.const(a, np.array(math.sqrt(dh), dtype=np.float32)))
    scores = net.binary(a, "MatMul", q, net.transpose(a, k, [1, 2, 0]))
    probs = net.op(a, "Softmax", [scores], lambda s: ref_softmax(s, -1), axis=-1)
    ctx = net.transpose(a, net.binary(a, "MatMul", probs, v), [1, 0, 2])
    ctx = net.gemm(a, net.reshape(a, ctx, [SEQ, D], opset), D, "self_attn.out_proj")
    ctx = net.transpose(a, net.reshape(a, ctx, [SEQ, 1, D], opset), [1, 0, 2])
    y = net.binary("", "Add", src, ctx)
    y = layernorm(net, "/norm1", y, "norm1", opset)
    h = net.linear("/linear1", y, FF, "linear1")
    g = net.binary("", "Div", h, net.const("", np.array(math.sqrt(2.0), dtype=np.float32)))
    g = net.binary("", "Add", net.unary("", "Erf", g), net.const("", np.array(1.0, np.float32)))
    g = net.binary("", "Mul", net.binary("", "Mul", h, g),
                   net.const("", np.array(0.5, dtype=np.float32)))
    h = net.linear("/linear2", g, D, "linear2")
    y = net.binary("", "Add", y, h)
    return [layernorm(net, "/norm2", y, "norm2", opset, out="out")]


def layernorm(net, scope, x, prefix, opset, eps=1e-5, out=None):
    gamma = net.param(prefix + ".weight", net.rng.uniform(0.5, 1.5, D))
    beta = net.param(prefix + ".bias", net.rng.normal(0.0, 0.1, D))
    if opset >= 17:
        return net.op(scope, "LayerNormalization", [x, gamma, beta],
                      lambda v, g, b: ref_layernorm(v, g, b, as_value(eps)), out=out,
                      axis=-1, epsilon=eps)
    mean = lambda v: v.mean(axis=-1, keepdims=True)  # noqa: E731
    centered = net.binary(scope, "Sub", x, net.op(scope, "ReduceMean", [x], mean, axes=[-1]))
    sq = net.binary(scope, "Pow", centered, net.const(scope, np.array(2.0, np.float32)))
    var = net.op(scope, "ReduceMean", [sq], mean, axes=[-1])
    var = net.binary(scope, "Add", var, net.const(scope, np.array(eps, np.float32)))
    y = net.binary(scope, "Div", centered, net.unary(scope, "Sqrt", var))
    return net.binary(scope, "Add", net.binary(scope, "Mul", y, gamma), beta, out=out)


def encoder_bounds(h):
    # ORT extended (shared transformer_encoder_layer and _op13 alike: 21 nodes): the
    # three Slices one Split, both LayerNorms SkipLayerNormalization with their residual
    # Adds, Gelu with its bias BiasGelu, the scaled Q and K^T MatMul a FusedMatMul;
    # ORT basic keeps 6 Transposes.
    return bounds(21, 6, "the shared transformer_encoder_layer(_op13): 21 nodes, "
                  "6 Transposes")


def mlp_ffn(net):
    """shared mlp_ffn narrowed: on (1, 16, 32) MatMul+Add+Gelu (Erf form), MatMul+Add,
    residual Add, MatMul+Add+Relu twice, a MatMul+Add head to 16."""
    x = net.input("x", net.rng.normal(0.0, 1.0, (1, 16, 32)).astype(np.float32))
    h = net.linear("/fc1", x, 64, "fc1")
    g = net.binary("", "Div", h, net.const("", np.array(math.sqrt(2.0), dtype=np.float32)))
    g = net.binary("", "Add", net.unary("", "Erf", g), net.const("", np.array(1.0, np.float32)))
    g = net.binary("", "Mul", net.binary("", "Mul", h, g),
                   net.const("", np.array(0.5, dtype=np.float32)))
    y = net.binary("", "Add", x, net.linear("/fc2", g, 32, "fc2"))
    y = net.relu("", net.linear("/fc3", y, 64, "fc3"))
    y = net.relu("", net.linear("/fc4", y, 32, "fc4"))
    return [net.linear("/head", y, 16, "head", out="y")]


def mlp_ffn_bounds(h):
    # ORT extended (shared mlp_ffn: 13): MatMul and Add apart, Gelu with its bias one
    # BiasGelu, the Relus apart.
    return bounds(13, 0, "the shared mlp_ffn: 13 nodes")


# name, builder, opset, bounds, what it stands for
MODELS = [
    ("nhwc_convnet_mini", nhwc_convnet, 13, nhwc_convnet_bounds,
     "4-conv CNN with NHWC Transposes at the ends and two Transpose sandwiches inside"),
    ("mobilenet_mini", mobilenet, 13, mobilenet_bounds,
     "MobileNetV2-shaped: depthwise Conv, Clip=ReLU6, residual Add, a BatchNormalization, "
     "Gemm head"),
    ("squeezenet_mini", squeezenet, 13, squeezenet_bounds,
     "SqueezeNet-1.1-shaped: Fire modules (Conv/Relu/Concat), ceil_mode MaxPool"),
    ("shufflenet_mini", shufflenet, 13, shufflenet_bounds,
     "ShuffleNetV2-shaped, 374 nodes: channel shuffle, chunk as Shape/Gather/Slice, Concat"),
    ("encoder_op13_mini", lambda net: encoder(net, 13), 13, encoder_bounds,
     "TransformerEncoderLayer at opset 13: decomposed LayerNorm, Erf Gelu, attention"),
    ("encoder_op17_mini", lambda net: encoder(net, 17), 17, encoder_bounds,
     "TransformerEncoderLayer at opset 17: LayerNormalization, Erf Gelu, attention"),
    ("mlp_ffn_mini", mlp_ffn, 13, mlp_ffn_bounds,
     "FFN stack: MatMul+Add+Gelu(Erf), MatMul+Add+Relu, residual Add"),
]


def write_info(folder, name, what, model, hist, outputs, extra):
    info = {"name": name, "description": what, "opset": model.opset_import[0].version,
            "made_by": "tests/data/make_models.py", "node_count": len(model.graph.node),
            "op_histogram": dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))),
            "outputs": [{"name": n, "shape": list(v.shape),
                         "max_abs": round(float(np.abs(v).max()), 4)} for n, v in outputs]}
    info.update(extra)
    with open(os.path.join(folder, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "models")
    for offset, (name, build, opset, bound, what) in enumerate(MODELS):
        net = Net(np.random.RandomState(SEED + offset))
        outputs = build(net)
        model, values = net.finish(name, outputs, what, opset)
        folder = os.path.join(outdir, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        check(path)
        write_test_data(folder, [(n, contiguous(a)) for n, a in net.inputs], values)
        hist = collections.Counter(n.op_type for n in model.graph.node)
        write_info(folder, name, what, model, hist, values, bound(hist))
        print("wrote", folder, len(model.graph.node), "nodes")


if __name__ == "__main__":
    main()
