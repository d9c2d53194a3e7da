#!/usr/bin/python3
"""Writes a ResNet-18 ONNX model (torchvision's architecture) with random
weights from a fixed seed: what tests/onnx/resnet_ort.sh and
bench/bench_net.py run in Loom and in onnxruntime. Needs python3-onnx and
python3-numpy (Debian's); no torch.

  usage: resnet.py [--batch N] [--size HW] [--classes K] [--seed S] [--symbolic]
                   [--dtype float32|float16] -o OUT.onnx

With --symbolic the batch, height and width are the symbolic dimensions
"batch", "height" and "width" (`loom model run --dim batch=N ...` gives
them values): one file for every batch and size. With --dtype float16
every tensor is float16, the input and output included, as PyTorch's
`model.half()` exports it: the same draws as the float32 model, rounded.

The network: conv 7x7/2 (64) + BN + ReLU, max pool 3x3/2 pad 1, four stages
of two BasicBlocks (conv 3x3 + BN + ReLU, conv 3x3 + BN, the skip added,
ReLU) with 64, 128, 256 and 512 channels, the first block of stages 2-4
striding by 2 with a 1x1/2 conv + BN on its skip, GlobalAveragePool,
Flatten, Gemm (transB=1) to 1000 classes. Convolutions have no bias, as in
torchvision. The BatchNormalization nodes are kept, as an export in
training mode or without constant folding leaves them; names follow
torch.onnx.export's (`layer2.0.downsample.0.weight`, `/layer2/layer2.0/conv1/Conv`).

Weights are He-scaled (std sqrt(2 / fan_in)); each BN has a random positive
variance, a small random mean, gamma and beta, and the last BN of a block a
smaller gamma, so that the residual sums and the activations stay O(1) at
any input size (the logits are O(1) too)."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def scope(prefix):
    """The node-name prefix torch.onnx.export gives a module's nodes:
    `layer1.0.conv1` is `/layer1/layer1.0/conv1/`."""
    parts = []
    for p in prefix.split(".") if prefix else []:
        parts.append(parts[-1] + "." + p if p.isdigit() else p)
    return "/" + "".join(p + "/" for p in parts)


class Builder:
    def __init__(self, seed, dtype):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.nodes, self.inits = [], []

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(array.astype(self.dtype), name))
        return name

    def conv(self, prefix, x, cin, cout, k, stride, pad):
        std = np.sqrt(2.0 / (cin * k * k))
        w = self.init(prefix + ".weight",
                      self.rng.standard_normal((cout, cin, k, k)) * std)
        y = scope(prefix) + "Conv_output_0"
        self.nodes.append(helper.make_node(
            "Conv", [x, w], [y], name=scope(prefix) + "Conv",
            kernel_shape=[k, k], strides=[stride, stride],
            pads=[pad, pad, pad, pad], dilations=[1, 1], group=1))
        return y

    def bn(self, prefix, x, c, gamma=(0.5, 1.0)):
        r = self.rng
        names = [self.init(prefix + ".weight", r.uniform(*gamma, c)),
                 self.init(prefix + ".bias", r.uniform(-0.2, 0.2, c)),
                 self.init(prefix + ".running_mean", r.uniform(-0.2, 0.2, c)),
                 self.init(prefix + ".running_var", r.uniform(0.5, 2.0, c))]
        y = scope(prefix) + "BatchNormalization_output_0"
        self.nodes.append(helper.make_node(
            "BatchNormalization", [x] + names, [y],
            name=scope(prefix) + "BatchNormalization",
            epsilon=1e-5, momentum=0.9))
        return y

    def op(self, kind, prefix, inputs, **attrs):
        y = scope(prefix) + kind + "_output_0"
        self.nodes.append(helper.make_node(
            kind, inputs, [y], name=scope(prefix) + kind, **attrs))
        return y

    def basic_block(self, prefix, x, cin, cout, stride):
        h = self.conv(prefix + ".conv1", x, cin, cout, 3, stride, 1)
        h = self.bn(prefix + ".bn1", h, cout)
        h = self.op("Relu", prefix + ".relu", [h])
        h = self.conv(prefix + ".conv2", h, cout, cout, 3, 1, 1)
        h = self.bn(prefix + ".bn2", h, cout, gamma=(0.2, 0.5))
        skip = x
        if stride != 1 or cin != cout:
            skip = self.conv(prefix + ".downsample.0", x, cin, cout, 1, stride, 0)
            skip = self.bn(prefix + ".downsample.1", skip, cout)
        s = self.op("Add", prefix, [h, skip])
        return self.op("Relu", prefix + ".relu_1", [s])


def resnet18(batch, size, classes, seed, symbolic=False, dtype="float32"):
    b = Builder(seed, np.dtype(dtype))
    elem = TensorProto.FLOAT16 if dtype == "float16" else TensorProto.FLOAT
    x = b.conv("conv1", "input", 3, 64, 7, 2, 3)
    x = b.bn("bn1", x, 64)
    x = b.op("Relu", "relu", [x])
    x = b.op("MaxPool", "maxpool", [x], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=0, dilations=[1, 1])
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512), start=1):
        for i in range(2):
            stride = 2 if stage > 1 and i == 0 else 1
            x = b.basic_block("layer%d.%d" % (stage, i), x, cin, cout, stride)
            cin = cout
    x = b.op("GlobalAveragePool", "avgpool", [x])
    x = b.op("Flatten", "", [x], axis=1)
    w = b.init("fc.weight", b.rng.standard_normal((classes, 512)) / np.sqrt(512))
    bias = b.init("fc.bias", b.rng.uniform(-0.1, 0.1, classes))
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["output"], name="/fc/Gemm",
                                    alpha=1.0, beta=1.0, transB=1))
    n, h, w = ("batch", "height", "width") if symbolic else (batch, size, size)
    graph = helper.make_graph(
        b.nodes, "resnet18",
        [helper.make_tensor_value_info("input", elem, [n, 3, h, w])],
        [helper.make_tensor_value_info("output", elem, [n, classes])],
        b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tests/onnx/resnet.py")
    model.ir_version = 8  # opset 13's; onnxruntime reads it
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--size", type=int, default=224, help="input height and width")
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--symbolic", action="store_true",
                   help="batch, height and width as symbolic dimensions")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32",
                   help="the type of every tensor")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx")
    a = p.parse_args()
    if a.batch < 1 or a.size < 32 or a.classes < 1:
        p.error("--batch and --classes must be positive and --size at least 32")
    model = resnet18(a.batch, a.size, a.classes, a.seed, a.symbolic, a.dtype)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, a.output)


if __name__ == "__main__":
    main()
