#!/usr/bin/python3
"""Writes the ONNX models tests/onnx/test_onnx.c reads, and the NumPy
reference results of the two networks, beside this script. Run it again
after changing a case; the outputs are committed. Needs python3-onnx and
python3-numpy (Debian's)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 13)]
rng = np.random.default_rng(20240601)


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def save_tensor(array, name):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def weight(name, shape, scale=0.5):
    a = (rng.standard_normal(shape) * scale).astype(np.float32)
    return a, numpy_helper.from_array(a, name)


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=OPSET,
                             producer_name="make_cases.py")


def vinfo(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


# ---- refusals ---------------------------------------------------------------

def refusals():
    save(model([helper.make_node("Hardmax", ["x"], ["y"], name="hardmax")],
               [vinfo("x", [2, 3])], [vinfo("y", [2, 3])]),
         "unsupported_op.onnx")
    save(model([helper.make_node("MaxPool", ["x"], ["y"], name="pool",
                                 kernel_shape=[2, 2], ceil_mode=1)],
               [vinfo("x", [1, 1, 5, 5])], [vinfo("y", [1, 1, 3, 3])]),
         "unsupported_attr_value.onnx")
    save(model([helper.make_node("Transpose", ["x"], ["y"], name="t",
                                 perm=[1, 0], note=1)],
               [vinfo("x", [2, 3])], [vinfo("y", [3, 2])]),
         "unsupported_attr.onnx", check=False)  # ONNX's checker refuses it too
    save(model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [vinfo("x", ["batch", 3])], [vinfo("y", ["batch", 3])]),
         "dynamic_shape.onnx")


# ---- networks and their NumPy references -----------------------------------

def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y = np.zeros((n, k, oh, ow), np.float64)
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i:i + oh, j:j + ow]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return (y + b[None, :, None, None]).astype(np.float32)


def batch_norm(x, scale, bias, mean, var, eps=1e-5):
    c = (None, slice(None), None, None)
    return ((x - mean[c]) / np.sqrt(var[c] + eps) * scale[c] + bias[c]).astype(np.float32)


def max_pool(x, k, stride, pad):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                constant_values=-np.inf)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride])
    return y


def mlp():
    sizes = [16, 32, 24, 10]
    nodes, inits, ws = [], [], []
    x = (rng.standard_normal((4, 16))).astype(np.float32)
    name, y = "x", x.astype(np.float64)
    for i in range(3):
        w, wt = weight("fc%d.weight" % i, (sizes[i + 1], sizes[i]))
        b, bt = weight("fc%d.bias" % i, (sizes[i + 1],))
        inits += [wt, bt]
        out = "gemm%d" % i
        nodes.append(helper.make_node("Gemm", [name, wt.name, bt.name], [out],
                                      name="fc%d" % i, transB=1))
        y = y @ w.T.astype(np.float64) + b
        name = out
        if i < 2:
            nodes.append(helper.make_node("Relu", [out], ["relu%d" % i],
                                          name="relu%d" % i))
            y = np.maximum(y, 0)
            name = "relu%d" % i
    nodes[-1].output[0] = "y"
    save(model(nodes, [vinfo("x", [4, 16])], [vinfo("y", [4, 10])], inits),
         "mlp.onnx")
    save_tensor(x, "mlp_input_0.pb")
    save_tensor(y.astype(np.float32), "mlp_output_0.pb")


def convnet():
    """A residual block: conv-bn-relu, max pool, two conv-bn with a skip
    connection, global average pool, flatten, a classifier."""
    nodes, inits = [], []
    x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)

    def add_init(name, shape, scale=0.5, positive=False):
        a, t = weight(name, shape, scale)
        if positive:
            a = np.abs(a) + 0.5
            t = numpy_helper.from_array(a, name)
        inits.append(t)
        return a

    def conv_bn(src, dst, cin, cout, tag):
        w = add_init(tag + ".w", (cout, cin, 3, 3), 0.3)
        b = add_init(tag + ".b", (cout,), 0.1)
        bn = [add_init(tag + ".bn.scale", (cout,)),
              add_init(tag + ".bn.bias", (cout,)),
              add_init(tag + ".bn.mean", (cout,), 0.1),
              add_init(tag + ".bn.var", (cout,), 0.5, positive=True)]
        nodes.append(helper.make_node("Conv", [src, tag + ".w", tag + ".b"],
                                      [tag + ".conv"], name=tag + ".conv",
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node(
            "BatchNormalization",
            [tag + ".conv"] + [tag + s for s in (".bn.scale", ".bn.bias",
                                                 ".bn.mean", ".bn.var")],
            [dst], name=tag + ".bn", epsilon=1e-5))
        return lambda v: batch_norm(conv2d(v, w, b, 1), *bn)

    f1 = conv_bn("x", "bn1", 3, 8, "c1")
    nodes.append(helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"))
    nodes.append(helper.make_node("MaxPool", ["r1"], ["p1"], name="pool",
                                  kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    f2 = conv_bn("p1", "bn2", 8, 8, "c2")
    nodes.append(helper.make_node("Relu", ["bn2"], ["r2"], name="relu2"))
    f3 = conv_bn("r2", "bn3", 8, 8, "c3")
    nodes.append(helper.make_node("Add", ["bn3", "p1"], ["sum"], name="skip"))
    nodes.append(helper.make_node("Relu", ["sum"], ["r3"], name="relu3"))
    nodes.append(helper.make_node("GlobalAveragePool", ["r3"], ["gap"],
                                  name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat"))
    fw = add_init("fc.w", (10, 8))
    fb = add_init("fc.b", (10,))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["y"],
                                  name="fc", transB=1))
    save(model(nodes, [vinfo("x", [1, 3, 12, 12])], [vinfo("y", [1, 10])],
               inits), "convnet.onnx")

    r1 = np.maximum(f1(x), 0)
    p1 = max_pool(r1, 3, 2, 1)
    r2 = np.maximum(f2(p1), 0)
    r3 = np.maximum(f3(r2) + p1, 0)
    gap = r3.mean(axis=(2, 3), dtype=np.float64)
    y = gap @ fw.T.astype(np.float64) + fb
    save_tensor(x, "convnet_input_0.pb")
    save_tensor(y.astype(np.float32), "convnet_output_0.pb")


def misc():
    """The forms the node tests leave out: MatMul with a 1-D operand and
    with batches that broadcast, Reshape's shape from an initializer, a
    Constant node's tensor as an argument, Concat of three, Clip with
    initializer bounds, two outputs."""
    a = rng.standard_normal((2, 1, 3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4, 2)).astype(np.float32)
    v = rng.standard_normal((4,)).astype(np.float32)
    c = rng.standard_normal((5, 2)).astype(np.float32)
    inits = [numpy_helper.from_array(np.array([0, -1], np.int64), "shape"),
             numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.5, np.float32), "hi")]
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["mm"], name="mm"),
        helper.make_node("MatMul", ["v", "b"], ["mv"], name="mv"),
        helper.make_node("Reshape", ["mm", "shape"], ["r"], name="reshape"),
        helper.make_node("Constant", [], ["c"], name="c",
                         value=numpy_helper.from_array(c)),
        helper.make_node("Add", ["mv", "c"], ["s"], name="add"),
        helper.make_node("Concat", ["s", "s", "mv"], ["cat"], name="cat",
                         axis=0),
        helper.make_node("Clip", ["cat", "lo", "hi"], ["clip"], name="clip"),
    ]
    save(model(nodes, [vinfo("a", [2, 1, 3, 4]), vinfo("b", [5, 4, 2]),
                       vinfo("v", [4])],
               [vinfo("r", [2, 30]), vinfo("clip", [15, 2])], inits),
         "misc.onnx")
    mm = np.matmul(a.astype(np.float64), b)
    mv = np.matmul(v.astype(np.float64), b)
    s_ = mv + c
    cat = np.concatenate([s_, s_, mv], axis=0)
    for i, x in enumerate((a, b, v)):
        save_tensor(x, "misc_input_%d.pb" % i)
    save_tensor(mm.reshape(2, -1).astype(np.float32), "misc_output_0.pb")
    save_tensor(np.clip(cat, -0.5, 0.5).astype(np.float32), "misc_output_1.pb")


def layout():
    """Where channels-last activations meet the model's NCHW: a per-channel
    broadcast Add after a Conv (back to NCHW), a depthwise Conv without a
    bias and its batch norm (folded), a Mul with a second input of the same
    shape (that input transposed), an AveragePool, and its result both a
    graph output and the input of a Softmax over the channels."""
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    x2 = rng.standard_normal((1, 8, 6, 6)).astype(np.float32)
    w1, t1 = weight("w1", (8, 4, 3, 3), 0.3)
    b1, tb1 = weight("b1", (8,), 0.1)
    k, tk = weight("k", (1, 8, 1, 1))
    wd, td = weight("wd", (8, 1, 3, 3))
    bn = [weight("bn.scale", (8,))[0], weight("bn.bias", (8,))[0],
          weight("bn.mean", (8,), 0.1)[0], np.abs(weight("bn.var", (8,))[0]) + 0.5]
    tbn = [numpy_helper.from_array(a, n) for a, n in
           zip(bn, ("bn.scale", "bn.bias", "bn.mean", "bn.var"))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="c1", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c1", "k"], ["a1"], name="a1"),
        helper.make_node("Relu", ["a1"], ["r1"], name="r1"),
        helper.make_node("Conv", ["r1", "wd"], ["d"], name="d", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["d", "bn.scale", "bn.bias", "bn.mean",
                                                "bn.var"], ["dn"], name="dn"),
        helper.make_node("Mul", ["dn", "x2"], ["m"], name="m"),
        helper.make_node("AveragePool", ["m"], ["p"], name="p", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Softmax", ["p"], ["y"], name="y", axis=1),
    ]
    save(model(nodes, [vinfo("x", [1, 4, 6, 6]), vinfo("x2", [1, 8, 6, 6])],
               [vinfo("y", [1, 8, 3, 3]), vinfo("p", [1, 8, 3, 3])],
               [t1, tb1, tk, td] + tbn), "layout.onnx")
    r1 = np.maximum(conv2d(x, w1, b1, 1).astype(np.float64) + k, 0)
    rp = np.pad(r1, ((0, 0), (0, 0), (1, 1), (1, 1)))
    d = np.zeros_like(r1)
    for i in range(3):
        for j in range(3):
            d += rp[:, :, i:i + 6, j:j + 6] * wd[None, :, 0, i, j, None, None]
    m = batch_norm(d, *bn).astype(np.float64) * x2
    p = m.reshape(1, 8, 3, 2, 3, 2).mean(axis=(3, 5))
    e = np.exp(p - p.max(axis=1, keepdims=True))
    for i, a in enumerate((x, x2)):
        save_tensor(a, "layout_input_%d.pb" % i)
    save_tensor((e / e.sum(axis=1, keepdims=True)).astype(np.float32), "layout_output_0.pb")
    save_tensor(p.astype(np.float32), "layout_output_1.pb")


def math():
    """The elementwise operators the node tests check in the interpreter,
    chained for the backends (`loom model run --verify`): a GELU written
    with Erf, the activations, comparisons feeding Where and logic, Pow,
    Mod, Round and the variadic Max and Mean, with broadcasting, and two
    reductions of the result added (ReduceLogSumExp kept, ReduceMax not)."""
    nodes = [
        helper.make_node("Mul", ["x", "rsqrt2"], ["xs"], name="xs"),
        helper.make_node("Erf", ["xs"], ["e"], name="erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="e1"),
        helper.make_node("Mul", ["x", "e1"], ["g2"], name="g2"),
        helper.make_node("Mul", ["g2", "half"], ["gelu"], name="gelu"),
        helper.make_node("LeakyRelu", ["x"], ["lr"], name="lr", alpha=0.1),
        helper.make_node("Elu", ["x"], ["elu"], name="elu"),
        helper.make_node("HardSigmoid", ["x"], ["hs"], name="hs"),
        helper.make_node("Softplus", ["x"], ["sp"], name="sp"),
        helper.make_node("Greater", ["x", "y"], ["gt"], name="gt"),
        helper.make_node("Less", ["x", "zero"], ["neg"], name="neg"),
        helper.make_node("Xor", ["gt", "neg"], ["xr"], name="xr"),
        helper.make_node("Where", ["xr", "gelu", "lr"], ["w"], name="w"),
        helper.make_node("Abs", ["y"], ["ay"], name="ay"),
        helper.make_node("Pow", ["ay", "three"], ["p"], name="p"),
        helper.make_node("Mod", ["x", "y"], ["md"], name="md", fmod=1),
        helper.make_node("Round", ["md"], ["rd"], name="rd"),
        helper.make_node("Max", ["w", "elu", "hs"], ["mx"], name="mx"),
        helper.make_node("Mean", ["mx", "sp", "p", "rd"], ["out"], name="mean"),
        helper.make_node("ReduceLogSumExp", ["out"], ["lse"], name="lse", axes=[2]),
        helper.make_node("ReduceMax", ["out"], ["rmax"], name="rmax", axes=[0, 2],
                         keepdims=0),
        helper.make_node("Add", ["lse", "rmax"], ["red"], name="red"),
    ]
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("rsqrt2", 0.7071067811865476), ("one", 1.0), ("half", 0.5),
               ("zero", 0.0), ("three", 3.0))]
    save(model(nodes, [vinfo("x", [2, 3, 8]), vinfo("y", [3, 1])],
               [vinfo("out", [2, 3, 8]), vinfo("red", [2, 3, 3])], consts), "math.onnx")


if __name__ == "__main__":
    refusals()
    mlp()
    convnet()
    misc()
    layout()
    math()
