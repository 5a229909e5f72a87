#!/usr/bin/python3
"""Build the example models that ship with graphlab, with reference test data.

Run with a python that has onnx (1.12+) and numpy, e.g. Debian's /usr/bin/python3:

    /usr/bin/python3 examples/make_examples.py [OUTDIR]

OUTDIR defaults to the folder of this script. The output is deterministic (fixed seed,
no timestamps), so re-running it leaves the committed files byte-identical. Each model
lands in OUTDIR/NAME/model.onnx with ONNX backend-test data beside it:

    NAME/test_data_set_0/input_<k>.pb    onnx.TensorProto named after graph input k
    NAME/test_data_set_0/output_<k>.pb   onnx.TensorProto named after graph output k

The expected outputs come from the plain numpy reference implementation below (computed
in float64, stored as float32), not from any runtime, so they can catch a runtime's bug.
"""

import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
SEED = 20240601
PRODUCER = "graphlab-examples"

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


# ---- numpy reference kernels (float64) ---------------------------------------------


def contiguous(array):
    """A C-contiguous copy that keeps the rank (np.ascontiguousarray turns 0-d into 1-d)."""
    return np.array(array, order="C", copy=True)

def ref_conv2d(x, w, b, stride=1, pad=0):
    """NCHW convolution, OIHW weights, symmetric padding, no dilation or groups."""
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    assert ci == c
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for ky in range(kh):
        for kx in range(kw):
            # every output pixel reads xp at (y*stride+ky, x*stride+kx)
            patch = xp[:, :, ky:ky + stride * (oh - 1) + 1:stride,
                       kx:kx + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, ky, kx])
    return out + b.reshape(1, o, 1, 1)


def ref_maxpool2x2(x):
    """MaxPool kernel 2x2, stride 2, no padding, NCHW; odd edges are dropped (floor)."""
    n, c, h, w = x.shape
    x = x[:, :, :h // 2 * 2, :w // 2 * 2]
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def ref_relu(x):
    return np.maximum(x, 0.0)


def ref_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ref_layernorm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


_erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_gelu_erf(x):
    return x * 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))


# ---- helpers -----------------------------------------------------------------------

def uniform_fan_in(rng, shape, fan_in):
    """PyTorch's default init for Linear/Conv weights and biases: U(+-1/sqrt(fan_in))."""
    bound = 1.0 / math.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def init(name, array):
    return numpy_helper.from_array(contiguous(array), name=name)


def const_node(name, output, array):
    """A Constant node, as torch's exporter writes small constants."""
    return helper.make_node("Constant", [], [output], name=name,
                            value=numpy_helper.from_array(np.asarray(array), name=output))


def finish_model(graph, doc, opset_imports=None, ir_version=None, functions=None,
                 metadata=None):
    kwargs = {}
    if functions:
        kwargs["functions"] = functions
    model = helper.make_model(
        graph,
        opset_imports=opset_imports or [helper.make_opsetid("", OPSET)],
        producer_name=PRODUCER, producer_version="1", doc_string=doc, **kwargs)
    # helper.make_model picks the newest IR version onnx knows; pin it so the files do
    # not change with the installed onnx.
    model.ir_version = ir_version or 7
    model.model_version = 1
    for key, value in (metadata or {}).items():
        prop = model.metadata_props.add()
        prop.key, prop.value = key, value
    return model


def check(model_or_path):
    onnx.checker.check_model(model_or_path, full_check=True)
    if isinstance(model_or_path, str):
        model_or_path = onnx.load(model_or_path, load_external_data=False)
    onnx.shape_inference.infer_shapes(model_or_path, check_type=True, strict_mode=True)


def write_test_data(folder, inputs, outputs, data_set=0):
    """inputs/outputs: lists of (name, array) in graph order."""
    data_dir = os.path.join(folder, "test_data_set_%d" % data_set)
    os.makedirs(data_dir, exist_ok=True)
    for kind, pairs in (("input", inputs), ("output", outputs)):
        for k, (name, array) in enumerate(pairs):
            tensor = numpy_helper.from_array(contiguous(array), name=name)
            with open(os.path.join(data_dir, "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(tensor.SerializeToString())


def save(model, folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save_model(model, path)
    check(path)
    return path


def assert_inferred_shape(model, value_name, expected):
    """Cross-check a shape of our numpy reference against onnx's shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model)
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        if vi.name == value_name:
            dims = [d.dim_value if d.HasField("dim_value") else d.dim_param
                    for d in vi.type.tensor_type.shape.dim]
            assert dims == list(expected), (value_name, dims, expected)
            return
    raise AssertionError("no inferred shape for " + value_name)


# ---- 1. conv_nhwc ------------------------------------------------------------------

def make_conv_nhwc(rng, outdir):
    """A conv net written channel-last with Transposes around every layout-sensitive op,
    as TF/Keras converters produce: the transpose-push pass has work to do."""
    w1 = uniform_fan_in(rng, (8, 3, 3, 3), 3 * 9)
    b1 = uniform_fan_in(rng, (8,), 3 * 9)
    scale = rng.uniform(0.5, 1.5, size=(8,)).astype(np.float32)
    shift = rng.normal(0.0, 0.1, size=(8,)).astype(np.float32)
    w2 = uniform_fan_in(rng, (16, 8, 3, 3), 8 * 9)
    b2 = uniform_fan_in(rng, (16,), 8 * 9)

    to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
    T = helper.make_node
    nodes = [
        T("Transpose", ["image"], ["x_nchw"], name="input_to_nchw", perm=to_nchw),
        T("Conv", ["x_nchw", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        T("Relu", ["conv1_out"], ["relu1_out"], name="relu1"),
        T("Transpose", ["relu1_out"], ["relu1_nhwc"], name="relu1_to_nhwc", perm=to_nhwc),
        T("Mul", ["relu1_nhwc", "bn.scale"], ["scaled"], name="channel_scale"),
        T("Add", ["scaled", "bn.shift"], ["shifted"], name="channel_shift"),
        # The sandwich: an elementwise op wrapped in a Transpose pair (left unnamed, like
        # converter output, so the loader has to generate names).
        T("Transpose", ["shifted"], ["sandwich_nchw"], perm=to_nchw),
        T("Relu", ["sandwich_nchw"], ["sandwich_relu"]),
        T("Transpose", ["sandwich_relu"], ["sandwich_nhwc"], name="sandwich_to_nhwc",
          perm=to_nhwc),
        T("Transpose", ["sandwich_nhwc"], ["conv2_in"], name="conv2_to_nchw", perm=to_nchw),
        T("Conv", ["conv2_in", "conv2.weight", "conv2.bias"], ["conv2_out"], name="conv2",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        T("Relu", ["conv2_out"], ["relu2_out"], name="relu2"),
        T("MaxPool", ["relu2_out"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]),
        T("Transpose", ["pooled"], ["features"], name="output_to_nhwc", perm=to_nhwc),
    ]
    graph = helper.make_graph(
        nodes, "conv_nhwc",
        [helper.make_tensor_value_info("image", F32, [1, 32, 32, 3])],
        [helper.make_tensor_value_info("features", F32, [1, 8, 8, 16])],
        initializer=[init("conv1.weight", w1), init("conv1.bias", b1),
                     init("bn.scale", scale), init("bn.shift", shift),
                     init("conv2.weight", w2), init("conv2.bias", b2)])
    model = finish_model(graph, "NHWC conv net with Transpose pairs around Conv/MaxPool")
    check(model)

    image = rng.uniform(0.0, 1.0, size=(1, 32, 32, 3)).astype(np.float32)
    x = image.astype(np.float64).transpose(to_nchw)
    y = ref_relu(ref_conv2d(x, w1.astype(np.float64), b1.astype(np.float64), 1, 1))
    y = y.transpose(to_nhwc) * scale + shift
    y = ref_relu(y)  # the sandwich, done in NHWC: Relu commutes with Transpose
    y = ref_relu(ref_conv2d(y.transpose(to_nchw), w2.astype(np.float64),
                            b2.astype(np.float64), 2, 1))
    features = ref_maxpool2x2(y).transpose(to_nhwc).astype(np.float32)
    assert_inferred_shape(model, "features", features.shape)

    folder = os.path.join(outdir, "conv_nhwc")
    save(model, folder)
    write_test_data(folder, [("image", image)], [("features", features)])


# ---- 2. transformer_block ----------------------------------------------------------

D_MODEL, N_HEADS, D_HEAD, D_FF = 32, 4, 8, 64
LN_EPS = 1e-5


def make_transformer_block(rng, outdir):
    """A pre-norm encoder block as torch 1.13 exports it at opset 13: LayerNorm and Gelu
    decomposed, head split through Shape/Gather/Concat/Reshape, Constant nodes."""
    p = {
        "ln.weight": rng.uniform(0.5, 1.5, size=(D_MODEL,)).astype(np.float32),
        "ln.bias": rng.normal(0.0, 0.1, size=(D_MODEL,)).astype(np.float32),
    }
    for proj in ("q", "k", "v", "out"):
        p["attn.%s.weight" % proj] = uniform_fan_in(rng, (D_MODEL, D_MODEL), D_MODEL)
        p["attn.%s.bias" % proj] = uniform_fan_in(rng, (D_MODEL,), D_MODEL)
    p["ffn.fc1.weight"] = uniform_fan_in(rng, (D_MODEL, D_FF), D_MODEL)
    p["ffn.fc1.bias"] = uniform_fan_in(rng, (D_FF,), D_MODEL)
    p["ffn.fc2.weight"] = uniform_fan_in(rng, (D_FF, D_MODEL), D_FF)
    p["ffn.fc2.bias"] = uniform_fan_in(rng, (D_MODEL,), D_FF)

    T = helper.make_node
    nodes = [
        # LayerNorm over the last axis
        T("ReduceMean", ["tokens"], ["ln_mean"], name="ln_mean", axes=[-1], keepdims=1),
        T("Sub", ["tokens", "ln_mean"], ["ln_centered"], name="ln_sub"),
        const_node("ln_two", "ln_two", np.array(2.0, dtype=np.float32)),
        T("Pow", ["ln_centered", "ln_two"], ["ln_sq"], name="ln_pow"),
        T("ReduceMean", ["ln_sq"], ["ln_var"], name="ln_var", axes=[-1], keepdims=1),
        const_node("ln_eps", "ln_eps", np.array(LN_EPS, dtype=np.float32)),
        T("Add", ["ln_var", "ln_eps"], ["ln_var_eps"], name="ln_add_eps"),
        T("Sqrt", ["ln_var_eps"], ["ln_std"], name="ln_sqrt"),
        T("Div", ["ln_centered", "ln_std"], ["ln_norm"], name="ln_div"),
        T("Mul", ["ln_norm", "ln.weight"], ["ln_scaled"], name="ln_mul"),
        T("Add", ["ln_scaled", "ln.bias"], ["ln_out"], name="ln_add"),
        # the sequence length, read from the data: Shape -> Gather -> Unsqueeze
        T("Shape", ["ln_out"], ["ln_shape"], name="shape_of_x"),
        const_node("seq_index", "seq_index", np.array(1, dtype=np.int64)),
        T("Gather", ["ln_shape", "seq_index"], ["seq_len"], name="gather_seq", axis=0),
        const_node("unsq_axes", "unsq_axes", np.array([0], dtype=np.int64)),
        T("Unsqueeze", ["seq_len", "unsq_axes"], ["seq_len_1d"], name="unsqueeze_seq"),
        const_node("batch_1d", "batch_1d", np.array([1], dtype=np.int64)),
        const_node("heads_dims", "heads_dims", np.array([N_HEADS, D_HEAD], dtype=np.int64)),
        T("Concat", ["batch_1d", "seq_len_1d", "heads_dims"], ["heads_shape"],
          name="concat_heads_shape", axis=0),
        const_node("model_dim", "model_dim", np.array([D_MODEL], dtype=np.int64)),
        T("Concat", ["batch_1d", "seq_len_1d", "model_dim"], ["merged_shape"],
          name="concat_merged_shape", axis=0),
    ]
    for proj in ("q", "k", "v"):
        nodes += [
            T("MatMul", ["ln_out", "attn.%s.weight" % proj], ["%s_mm" % proj],
              name="%s_matmul" % proj),
            T("Add", ["%s_mm" % proj, "attn.%s.bias" % proj], ["%s_lin" % proj],
              name="%s_bias" % proj),
            T("Reshape", ["%s_lin" % proj, "heads_shape"], ["%s_split" % proj],
              name="%s_reshape" % proj),
            T("Transpose", ["%s_split" % proj], ["%s_heads" % proj],
              name="%s_transpose" % proj, perm=[0, 2, 1, 3]),
        ]
    nodes += [
        T("Transpose", ["k_heads"], ["k_heads_t"], name="k_transpose_last2",
          perm=[0, 1, 3, 2]),
        T("MatMul", ["q_heads", "k_heads_t"], ["scores_raw"], name="qk_matmul"),
        const_node("attn_scale", "attn_scale",
                   np.array(math.sqrt(D_HEAD), dtype=np.float32)),
        T("Div", ["scores_raw", "attn_scale"], ["scores"], name="qk_scale"),
        T("Softmax", ["scores"], ["attn_probs"], name="softmax", axis=-1),
        T("MatMul", ["attn_probs", "v_heads"], ["context_heads"], name="pv_matmul"),
        T("Transpose", ["context_heads"], ["context_split"], name="context_transpose",
          perm=[0, 2, 1, 3]),
        T("Reshape", ["context_split", "merged_shape"], ["context"], name="context_reshape"),
        T("MatMul", ["context", "attn.out.weight"], ["attn_mm"], name="out_matmul"),
        T("Add", ["attn_mm", "attn.out.bias"], ["attn_out"], name="out_bias"),
        T("Add", ["tokens", "attn_out"], ["residual1"], name="residual1"),
        # FFN with Gelu in its Erf form: x * 0.5 * (1 + erf(x / sqrt 2))
        T("MatMul", ["residual1", "ffn.fc1.weight"], ["fc1_mm"], name="fc1_matmul"),
        T("Add", ["fc1_mm", "ffn.fc1.bias"], ["fc1_out"], name="fc1_bias"),
        const_node("gelu_sqrt2", "gelu_sqrt2", np.array(math.sqrt(2.0), dtype=np.float32)),
        T("Div", ["fc1_out", "gelu_sqrt2"], ["gelu_div"], name="gelu_div"),
        T("Erf", ["gelu_div"], ["gelu_erf"], name="gelu_erf"),
        const_node("gelu_one", "gelu_one", np.array(1.0, dtype=np.float32)),
        T("Add", ["gelu_erf", "gelu_one"], ["gelu_add"], name="gelu_add"),
        T("Mul", ["fc1_out", "gelu_add"], ["gelu_mul"], name="gelu_mul"),
        const_node("gelu_half", "gelu_half", np.array(0.5, dtype=np.float32)),
        T("Mul", ["gelu_mul", "gelu_half"], ["gelu_out"], name="gelu_half_mul"),
        T("MatMul", ["gelu_out", "ffn.fc2.weight"], ["fc2_mm"], name="fc2_matmul"),
        T("Add", ["fc2_mm", "ffn.fc2.bias"], ["fc2_out"], name="fc2_bias"),
        T("Add", ["residual1", "fc2_out"], ["hidden"], name="residual2"),
    ]
    graph = helper.make_graph(
        nodes, "transformer_block",
        [helper.make_tensor_value_info("tokens", F32, [1, "seq", D_MODEL])],
        [helper.make_tensor_value_info("hidden", F32, [1, "seq", D_MODEL])],
        initializer=[init(k, v) for k, v in p.items()])
    model = finish_model(graph, "Pre-norm transformer encoder block, torch-exporter style")
    check(model)

    seq = 6
    tokens = rng.normal(0.0, 1.0, size=(1, seq, D_MODEL)).astype(np.float32)
    q = {k: v.astype(np.float64) for k, v in p.items()}
    x = tokens.astype(np.float64)
    h = ref_layernorm(x, q["ln.weight"], q["ln.bias"], LN_EPS)

    def heads(proj):
        lin = h @ q["attn.%s.weight" % proj] + q["attn.%s.bias" % proj]
        return lin.reshape(1, seq, N_HEADS, D_HEAD).transpose(0, 2, 1, 3)

    qh, kh, vh = heads("q"), heads("k"), heads("v")
    probs = ref_softmax(qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(D_HEAD), axis=-1)
    context = (probs @ vh).transpose(0, 2, 1, 3).reshape(1, seq, D_MODEL)
    r1 = x + context @ q["attn.out.weight"] + q["attn.out.bias"]
    ffn = ref_gelu_erf(r1 @ q["ffn.fc1.weight"] + q["ffn.fc1.bias"])
    hidden = (r1 + ffn @ q["ffn.fc2.weight"] + q["ffn.fc2.bias"]).astype(np.float32)
    assert_inferred_shape(model, "hidden", [1, "seq", D_MODEL])

    folder = os.path.join(outdir, "transformer_block")
    save(model, folder)
    write_test_data(folder, [("tokens", tokens)], [("hidden", hidden)])


# ---- 3. tiny_if --------------------------------------------------------------------

FN_DOMAIN = "graphlab.example"
LOOP_TRIPS = 3


def make_scale_shift_function():
    """ScaleShift(X, S) = LeakyRelu(X * S + 1, alpha=@alpha): a model-local function with
    an attribute parameter referenced from its body (ref_attr_name)."""
    leaky = helper.make_node("LeakyRelu", ["shifted"], ["Y"])
    alpha_ref = helper.AttributeProto()
    alpha_ref.name, alpha_ref.ref_attr_name, alpha_ref.type = "alpha", "alpha", \
        onnx.AttributeProto.FLOAT
    leaky.attribute.append(alpha_ref)
    body = [
        helper.make_node("Mul", ["X", "S"], ["scaled"]),
        helper.make_node("Constant", [], ["one"], value_float=1.0),
        helper.make_node("Add", ["scaled", "one"], ["shifted"]),
        leaky,
    ]
    return helper.make_function(
        FN_DOMAIN, "ScaleShift", ["X", "S"], ["Y"], body,
        opset_imports=[helper.make_opsetid("", OPSET)], attributes=["alpha"],
        doc_string="LeakyRelu(X * S + 1) with a caller-chosen slope")


def make_tiny_if(rng, outdir):
    """Control flow and the rarer corners of the format: If branches and a Loop body that
    read outer values, an input with a default, a model-local function, metadata."""
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["fn_out", "alpha"], ["then_out"], name="then_add",
                          doc_string="reads fn_out and alpha from the enclosing graph")],
        "then_branch", [], [helper.make_tensor_value_info("then_out", F32, [2, 3])])
    else_graph = helper.make_graph(
        [helper.make_node("Sub", ["fn_out", "alpha"], ["else_out"], name="else_sub")],
        "else_branch", [], [helper.make_tensor_value_info("else_out", F32, [2, 3])])
    loop_body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "step"], ["acc_out"], name="body_add",
                          doc_string="'step' is an outer value"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
        "loop_body",
        [helper.make_tensor_value_info("iter", I64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", F32, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", F32, [2, 3])])

    nodes = [
        helper.make_node("ScaleShift", ["x", "alpha"], ["fn_out"], name="scale_shift",
                         domain=FN_DOMAIN, alpha=0.25),
        helper.make_node("Mul", ["x", "alpha"], ["step"], name="loop_step"),
        helper.make_node("If", ["flag"], ["branch_out"], name="choose",
                         then_branch=then_graph, else_branch=else_graph,
                         doc_string="then: fn_out + alpha; else: fn_out - alpha"),
        helper.make_node("Loop", ["trip_count", "", "branch_out"], ["y"], name="repeat",
                         body=loop_body),
    ]
    alpha_input = helper.make_tensor_value_info("alpha", F32, [1])
    alpha_input.doc_string = "has a default (initializer of the same name): may be fed"
    graph = helper.make_graph(
        nodes, "tiny_if",
        [helper.make_tensor_value_info("x", F32, [2, 3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, []), alpha_input],
        [helper.make_tensor_value_info("y", F32, [2, 3])],
        initializer=[init("alpha", np.array([0.5], dtype=np.float32)),
                     init("trip_count", np.array(LOOP_TRIPS, dtype=np.int64))],
        doc_string="If and Loop subgraphs that capture outer values")
    model = finish_model(
        graph, "Control flow, function and metadata corners of the ONNX format",
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(FN_DOMAIN, 1)],
        ir_version=8, functions=[make_scale_shift_function()],
        metadata={"author": "graphlab examples", "purpose": "loader coverage"})
    check(model)

    folder = os.path.join(outdir, "tiny_if")
    save(model, folder)
    x = rng.normal(0.0, 1.0, size=(2, 3)).astype(np.float32)
    alpha = 0.5  # the default: the test data feeds x and flag only
    z = x.astype(np.float64) * alpha + 1.0
    fn_out = np.where(z >= 0, z, 0.25 * z)
    # data set 0 takes the then branch, data set 1 the else branch
    for data_set, flag in enumerate((True, False)):
        branch = fn_out + alpha if flag else fn_out - alpha
        y = branch + LOOP_TRIPS * (x.astype(np.float64) * alpha)
        write_test_data(folder, [("x", x), ("flag", np.array(flag))],
                        [("y", y.astype(np.float32))], data_set)


# ---- 4. mlp_external ---------------------------------------------------------------

MLP_DIMS = (64, 128, 128, 16)


def make_mlp_external(rng, outdir):
    """An MLP whose every initializer lives in weights.bin (external data)."""
    nodes, inits, weights = [], [], []
    prev = "x"
    for layer, (fan_in, fan_out) in enumerate(zip(MLP_DIMS, MLP_DIMS[1:])):
        w = uniform_fan_in(rng, (fan_in, fan_out), fan_in)
        b = uniform_fan_in(rng, (fan_out,), fan_in)
        wn, bn = "fc%d.weight" % layer, "fc%d.bias" % layer
        inits += [init(wn, w), init(bn, b)]
        weights.append((w, b))
        last = layer == len(MLP_DIMS) - 2
        mm, lin = "fc%d_mm" % layer, ("y" if last else "fc%d_out" % layer)
        nodes += [helper.make_node("MatMul", [prev, wn], [mm], name="fc%d_matmul" % layer),
                  helper.make_node("Add", [mm, bn], [lin], name="fc%d_bias" % layer)]
        prev = lin
        if not last:
            nodes.append(helper.make_node("Relu", [lin], ["relu%d" % layer],
                                          name="relu%d" % layer))
            prev = "relu%d" % layer
    graph = helper.make_graph(
        nodes, "mlp_external",
        [helper.make_tensor_value_info("x", F32, [1, MLP_DIMS[0]])],
        [helper.make_tensor_value_info("y", F32, [1, MLP_DIMS[-1]])], initializer=inits)
    model = finish_model(graph, "MLP with its weights in weights.bin (external data)")
    check(model)

    x = rng.normal(0.0, 1.0, size=(1, MLP_DIMS[0])).astype(np.float32)
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(weights):
        h = h @ w.astype(np.float64) + b.astype(np.float64)
        if i < len(weights) - 1:
            h = ref_relu(h)

    folder = os.path.join(outdir, "mlp_external")
    os.makedirs(folder, exist_ok=True)
    weights_path = os.path.join(folder, "weights.bin")
    if os.path.exists(weights_path):
        os.remove(weights_path)  # onnx appends to an existing data file
    path = os.path.join(folder, "model.onnx")
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    check(path)
    write_test_data(folder, [("x", x)], [("y", h.astype(np.float32))])


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    # One generator per model, so editing one model leaves the others' bytes unchanged.
    for offset, make in enumerate((make_conv_nhwc, make_transformer_block, make_tiny_if,
                                   make_mlp_external)):
        make(np.random.RandomState(SEED + offset), outdir)
        print("wrote", os.path.join(outdir, make.__name__[len("make_"):]))


if __name__ == "__main__":
    main()
