#!/usr/bin/python3
"""Write a DenseNet-121-like model: the graph that made `graphlab export` time out.

    /usr/bin/python3 bench/make_densenet.py [OUT.onnx] [--blocks 6,12,24,16] [--growth 32]
                                            [--image 224]

The structure of torchvision's densenet121 as torch.onnx exports it, built with
onnx.helper (torchvision is not needed): a stem (Conv 7x7/2, BatchNormalization, Relu,
MaxPool), four dense blocks in which every layer reads the Concat of all the block's
features so far (BN-Relu-Conv1x1-BN-Relu-Conv3x3), transitions (BN-Relu-Conv1x1-
AveragePool) and the classifier (BN-Relu-GlobalAveragePool-Flatten-Gemm). Every
BatchNormalization has its own four initializers and every Conv its weight, so the full
drawing has about a thousand boxes and each feature map feeds every later Concat of its
block: the long edges that make dot's layout slow.

Weights are small random numbers of the real shapes (about 32 MB at the defaults); the
model runs and `onnx.checker` accepts it. Deterministic: the same arguments give the same
bytes. Default output: /tmp/graphlab-bench/densenet121.onnx (never inside the tree).
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 7
SEED = 121


class Net:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []

    def init(self, name, shape, lo=-0.05, hi=0.05):
        data = self.rng.uniform(lo, hi, size=shape).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def node(self, op, name, inputs, **attrs):
        out = name + "_out"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def conv(self, name, x, cin, cout, k, stride=1, pad=0):
        w = self.init(name + ".weight", (cout, cin, k, k))
        return self.node("Conv", name + "/Conv", [x, w], kernel_shape=[k, k],
                         strides=[stride, stride], pads=[pad] * 4)

    def bn(self, name, x, c):
        params = [self.init(name + ".weight", (c,), 0.5, 1.5),
                  self.init(name + ".bias", (c,)),
                  self.init(name + ".running_mean", (c,)),
                  self.init(name + ".running_var", (c,), 0.5, 1.5)]
        return self.node("BatchNormalization", name + "/BatchNormalization", [x] + params,
                         epsilon=1e-5)

    def relu(self, name, x):
        return self.node("Relu", name + "/Relu", [x])

    def concat(self, name, xs):
        return self.node("Concat", name + "/Concat", xs, axis=1)


def densenet(blocks, growth, image):
    net = Net(np.random.RandomState(SEED))
    bn_size, channels = 4, 2 * growth
    x = net.conv("features/conv0", "input", 3, channels, 7, 2, 3)
    x = net.relu("features/relu0", net.bn("features/norm0", x, channels))
    x = net.node("MaxPool", "features/pool0/MaxPool", [x], kernel_shape=[3, 3],
                 strides=[2, 2], pads=[1, 1, 1, 1])
    for b, layers in enumerate(blocks, 1):
        features = [x]
        for l in range(1, layers + 1):
            p = "features/denseblock%d/denselayer%d" % (b, l)
            cin = channels + (l - 1) * growth
            y = net.concat(p, features)
            y = net.relu(p + "/relu1", net.bn(p + "/norm1", y, cin))
            y = net.conv(p + "/conv1", y, cin, bn_size * growth, 1)
            y = net.relu(p + "/relu2", net.bn(p + "/norm2", y, bn_size * growth))
            features.append(net.conv(p + "/conv2", y, bn_size * growth, growth, 3, 1, 1))
        channels += layers * growth
        x = net.concat("features/denseblock%d" % b, features)
        if b < len(blocks):
            p = "features/transition%d" % b
            x = net.relu(p + "/relu", net.bn(p + "/norm", x, channels))
            x = net.conv(p + "/conv", x, channels, channels // 2, 1)
            channels //= 2
            x = net.node("AveragePool", p + "/pool/AveragePool", [x], kernel_shape=[2, 2],
                         strides=[2, 2])
    x = net.relu("features/relu5", net.bn("features/norm5", x, channels))
    x = net.node("GlobalAveragePool", "GlobalAveragePool", [x])
    x = net.node("Flatten", "Flatten", [x], axis=1)
    w = net.init("classifier.weight", (1000, channels))
    bias = net.init("classifier.bias", (1000,))
    net.nodes.append(helper.make_node("Gemm", [x, w, bias], ["output"], name="classifier/Gemm",
                                      transB=1))
    graph = helper.make_graph(
        net.nodes, "densenet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, image, image])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1000])],
        initializer=net.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="graphlab-bench", producer_version="1",
                              doc_string="DenseNet-like: blocks %s, growth %d" %
                              (",".join(map(str, blocks)), growth))
    model.ir_version = IR_VERSION
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="/tmp/graphlab-bench/densenet121.onnx")
    parser.add_argument("--blocks", default="6,12,24,16")
    parser.add_argument("--growth", type=int, default=32)
    parser.add_argument("--image", type=int, default=224)
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.abspath(args.out)
    if out.startswith(repo + os.sep):
        sys.exit("make_densenet.py: %s is inside the source tree; choose a path outside it"
                 % out)
    model = densenet([int(n) for n in args.blocks.split(",")], args.growth, args.image)
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    onnx.save_model(model, out)
    print("wrote %s (%.1f MB, %d nodes, %d initializers)" %
          (out, os.path.getsize(out) / 1e6, len(model.graph.node),
           len(model.graph.initializer)))


if __name__ == "__main__":
    main()
