#!/usr/bin/python3
"""The baseline for bench_onnx_fold: the same batch-norm fold with the `onnx` package and numpy.

Loads IN.onnx, folds every BatchNormalization whose input is a Conv (or a ConvTranspose with
group 1) read by nothing else into that node's weight and bias, with torch's operation order in
float32 (so the result is bit-identical to qfold-onnx's), removes the initializers left without
readers, and saves OUT.onnx. This is what a Python tool chain would write for ResNet-50; it
handles fewer forms than qfold-onnx (no grouped ConvTranspose, Gemm or MatMul, no Identity
initializers), which only makes it faster.

Prints the time of each phase and the median of --repeat runs of load + fold + save (imports
excluded). --compare FILE checks that every folded tensor equals FILE's (qfold-onnx's output)
bit for bit.

Usage: /usr/bin/python3 bench/onnx_fold_numpy.py IN.onnx OUT.onnx [--repeat N] [--compare F]
Needs Debian's python3-onnx and python3-numpy.
"""

import statistics
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper


def fold(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    for o in g.output:
        readers[o.name] = readers.get(o.name, 0) + 1
    producer = {o: n for n in g.node for o in n.output}
    remove_nodes = []
    folded = 0
    for bn in g.node:
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1:
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type not in ("Conv", "ConvTranspose") or \
                readers[conv.output[0]] != 1:
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in bn.attribute}
        group = {a.name: onnx.helper.get_attribute_value(a) for a in conv.attribute}.get("group", 1)
        if attrs.get("training_mode", 0) or (conv.op_type == "ConvTranspose" and group != 1):
            continue
        if not all(i in inits for i in list(bn.input[1:]) + list(conv.input[1:])):
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(inits[i]) for i in bn.input[1:])
        w = numpy_helper.to_array(inits[conv.input[1]])
        b = numpy_helper.to_array(inits[conv.input[2]]) if len(conv.input) > 2 else \
            np.zeros_like(mean)
        eps = np.float32(attrs.get("epsilon", 1e-5))
        r = np.float32(1) / np.sqrt(var + eps)  # torch's rsqrt: 1 / sqrt, each rounded
        shape = (1, -1) + (1,) * (w.ndim - 2) if conv.op_type == "ConvTranspose" else \
            (-1,) + (1,) * (w.ndim - 1)
        fw = w * (gamma * r).reshape(shape)
        fb = (b - mean) * r * gamma + beta
        wname, bname = conv.input[1] + "_bnfold", conv.output[0] + "_bias_bnfold"
        g.initializer.append(numpy_helper.from_array(fw.astype(np.float32), wname))
        g.initializer.append(numpy_helper.from_array(fb.astype(np.float32), bname))
        for i in list(bn.input[1:]) + list(conv.input[1:]):
            readers[i] -= 1
        conv.input[1] = wname
        if len(conv.input) > 2:
            conv.input[2] = bname
        else:
            conv.input.append(bname)
        readers[wname] = readers[bname] = 1
        conv.output[0] = bn.output[0]
        remove_nodes.append(bn)
        folded += 1
    for n in remove_nodes:
        g.node.remove(n)
    keep = [t for t in g.initializer if readers.get(t.name, 0) > 0]
    del g.initializer[:]
    g.initializer.extend(keep)
    return folded


def main():
    args = sys.argv[1:]
    repeat, compare = 1, None
    if "--repeat" in args:
        k = args.index("--repeat")
        repeat = int(args[k + 1])
        del args[k:k + 2]
    if "--compare" in args:
        k = args.index("--compare")
        compare = args[k + 1]
        del args[k:k + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    totals = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        model = onnx.load(args[0])
        t1 = time.perf_counter()
        folded = fold(model)
        t2 = time.perf_counter()
        onnx.save(model, args[1])
        t3 = time.perf_counter()
        totals.append(t3 - t0)
        print(f"load {t1 - t0:.3f} s, fold {t2 - t1:.3f} s ({folded} folded), "
              f"save {t3 - t2:.3f} s, total {t3 - t0:.3f} s")
    print(f"median of {repeat}: {statistics.median(totals):.3f} s")
    if compare:
        ours = {t.name: t for t in onnx.load(args[1]).graph.initializer}
        theirs = onnx.load(compare)
        tensors = {t.name: t for t in theirs.graph.initializer}
        mine = {n.output[0]: n for n in onnx.load(args[1]).graph.node}
        same = 0
        for n in theirs.graph.node:
            if n.op_type not in ("Conv", "ConvTranspose") or n.output[0] not in mine:
                continue
            for a, b in zip(n.input[1:], mine[n.output[0]].input[1:]):
                x, y = numpy_helper.to_array(tensors[a]), numpy_helper.to_array(ours[b])
                assert x.tobytes() == y.tobytes(), (n.name, a, b)
                same += 1
        print(f"--compare: {same} weight and bias tensors bit-identical to {compare}")


if __name__ == "__main__":
    main()
