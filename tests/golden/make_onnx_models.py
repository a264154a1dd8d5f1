#!/usr/bin/python3
"""Golden ONNX models for qfold-onnx, exported by PyTorch, with torch's own batch-norm folds.

For each model (torchvision ResNet-18 and MobileNetV2 with random weights, and `mixed`, a small
model with grouped, depthwise and transposed convolutions, Gemm, MatMul + Add, shared weights, an
Identity on an initializer and sites qfold must refuse) the script

1. fills every parameter and batch-norm statistic from a deterministic generator that the C++
   test reimplements (below), so no weight data needs to be committed;
2. exports the eval model to ONNX keeping BatchNormalization
   (`training=torch.onnx.TrainingMode.PRESERVE`);
3. checks that the generator, rerun from each initializer's spec, gives the exported bytes, and
   writes `onnx/<model>.onnx` with the float initializers' data removed and the spec in their
   `doc_string` (`qfold-gen <kind> <exponent> <key>`);
4. computes the fold of every BatchNormalization after a Conv, ConvTranspose, Gemm or MatMul (+
   Add) with `torch.nn.utils.fusion` (fuse_conv_bn_weights / fuse_linear_bn_weights) in float32,
   except for grouped ConvTranspose, where torch is wrong (it scales weight axis 1, out/groups
   long, by all `out` factors: it raises or returns a wrongly shaped tensor; the script asserts
   that) and the reference is torch applied to the regrouped weight (in, out/g, k) ->
   (in/g, out, k), regrouped back; checks each fold's meaning in float64 (BN(op(x)) == op'(x));
5. writes `onnx/<model>.expected`: the expected report totals, the sites qfold must refuse (with
   the reason), and for every folded tensor the node and input that hold it in qfold-onnx's
   output, its shape, a 64-bit hash of its float32 bits and its first values. The hash is
   sum_i mix64(bits_i + (i + 1) * 0x9E3779B97F4A7C15) mod 2^64 (mix64: splitmix64's finalizer),
   position-keyed like FNV-1a but vectorisable in numpy (FNV over 60 MB in Python is slow).

The generator: for a tensor with key K (the torch state_dict key), state = FNV-1a-64(K) and for
element i (from 0) splitmix64: state += 0x9E3779B97F4A7C15; z = mix(state); u = z >> 40 (24 bits);
kind `s` (signed): value = (float(u) - 2^23) * 2^-e; kind `p` (positive): value = (u + 1) * 2^-e.
Every value is exact in float32, so numpy and C++ agree without any rounding question.

Usage: /usr/bin/python3 tests/golden/make_onnx_models.py [--check-only] [--outdir DIR]
Needs Debian's python3-torch (1.13.1), python3-torchvision (0.14.1), python3-onnx (1.12),
python3-numpy. Deterministic: a rerun writes byte-identical files. Format: README.md.
"""

import io
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_weights, fuse_linear_bn_weights

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)
M64 = (1 << 64) - 1


# --------------------------------------------------------------------------------------------
# The deterministic generator (the C++ test has the same one)
# --------------------------------------------------------------------------------------------
def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def mix64(z):
    """splitmix64's finalizer on a uint64 array."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def tensor_hash(a: np.ndarray) -> int:
    """64-bit hash of a float32 array's bits, keyed by position (C order):
    sum over i of mix64(bits_i + (i + 1) * 0x9E3779B97F4A7C15), modulo 2^64."""
    bits = np.ascontiguousarray(a, dtype="<f4").reshape(-1).view(np.uint32).astype(np.uint64)
    i = np.arange(1, bits.size + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(mix64(bits + i * np.uint64(0x9E3779B97F4A7C15)), dtype=np.uint64))


def generate(key: str, kind: str, exponent: int, count: int) -> np.ndarray:
    state = np.uint64(fnv1a64(key.encode()))
    i = np.arange(1, count + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = mix64(state + i * np.uint64(0x9E3779B97F4A7C15))
    u = (z >> np.uint64(40)).astype(np.float64)
    scale = 2.0 ** -exponent
    if kind == "s":
        v = (u - 2.0**23) * scale
    elif kind == "p":
        v = (u + 1.0) * scale
    else:
        raise ValueError(kind)
    out = v.astype(np.float32)
    assert np.array_equal(out.astype(np.float64), v), "generator values must be exact in float32"
    return out


def spec_for(key: str, module) -> tuple:
    """Generator kind and exponent for a state_dict entry."""
    leaf = key.rsplit(".", 1)[-1]
    if isinstance(module, nn.modules.batchnorm._BatchNorm):
        return {"weight": ("s", 22), "bias": ("s", 23), "running_mean": ("s", 23),
                "running_var": ("p", 24)}[leaf]
    if leaf == "bias" or leaf.startswith("b"):
        return ("s", 24)
    return ("s", 26)  # weights: [-1/8, 1/8)


def fill(model: nn.Module) -> dict:
    """Fills every float parameter and buffer; returns key -> (kind, exponent, seed key)."""
    specs = {}
    modules = dict(model.named_modules())
    with torch.no_grad():
        for key, t in model.state_dict().items():
            if not t.is_floating_point():
                continue
            owner = modules.get(key.rsplit(".", 1)[0] if "." in key else "", model)
            kind, e = spec_for(key, owner)
            t.copy_(torch.from_numpy(generate(key, kind, e, t.numel()).reshape(t.shape)))
            specs[key] = (kind, e, key)
    return specs


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------
class Mixed(nn.Module):
    """Every ONNX form qfold-onnx folds, and sites it must refuse."""

    def __init__(self):
        super().__init__()
        self.conv_g2 = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.bn_g2 = nn.BatchNorm2d(6)
        self.conv_nobias = nn.Conv2d(6, 6, 1, bias=False)
        self.bn_nobias = nn.BatchNorm2d(6)
        self.convT = nn.ConvTranspose2d(6, 4, 2, stride=2)
        self.bn_convT = nn.BatchNorm2d(4)
        self.convT_g2 = nn.ConvTranspose2d(4, 6, 3, padding=1, groups=2)
        self.bn_convT_g2 = nn.BatchNorm2d(6)
        self.convT_dw = nn.ConvTranspose2d(6, 6, 3, padding=1, groups=6)
        self.bn_convT_dw = nn.BatchNorm2d(6)
        self.conv1d = nn.Conv1d(3, 5, 3)
        self.bn_conv1d = nn.BatchNorm1d(5)
        self.conv3d = nn.Conv3d(2, 3, (2, 3, 2), groups=1)
        self.bn_conv3d = nn.BatchNorm3d(3)
        self.shared = nn.Conv2d(4, 4, 1)  # one weight, two Conv nodes, two batch norms
        self.bn_shared_a = nn.BatchNorm2d(4)
        self.bn_shared_b = nn.BatchNorm2d(4)
        self.fc = nn.Linear(6, 5)  # Gemm, transB = 1
        self.bn_fc = nn.BatchNorm1d(5)
        self.w_addmm = nn.Parameter(torch.zeros(6, 5))  # Gemm, transB = 0
        self.b_addmm = nn.Parameter(torch.zeros(5))
        self.bn_addmm = nn.BatchNorm1d(5)
        self.w_mm = nn.Parameter(torch.zeros(6, 7))  # MatMul + Add
        self.b_mm = nn.Parameter(torch.zeros(7))
        self.bn_mm = nn.BatchNorm1d(7)
        self.w_mm_nobias = nn.Parameter(torch.zeros(6, 3))  # MatMul alone: qfold adds an Add
        self.bn_mm_nobias = nn.BatchNorm1d(3)
        self.bn_identity = nn.BatchNorm1d(5)  # var == gamma: torch exports Identity(initializer)
        self.fc_identity = nn.Linear(6, 5)
        # Sites qfold must refuse:
        self.bn_after_relu = nn.BatchNorm2d(6)  # unsupported: input is a Relu
        self.conv_shared_out = nn.Conv2d(6, 6, 1)  # shared_output: the conv output has 2 readers
        self.bn_shared_out = nn.BatchNorm2d(6)
        self.w_rank3 = nn.Parameter(torch.zeros(6, 4))  # ambiguous_axis: MatMul output rank 3
        self.bn_rank3 = nn.BatchNorm1d(3)
        self.w_alpha = nn.Parameter(torch.zeros(6, 5))  # unsupported: Gemm alpha = 2
        self.b_alpha = nn.Parameter(torch.zeros(5))
        self.bn_alpha = nn.BatchNorm1d(5)

    def forward(self, x, s, v, t, r):
        y = self.bn_g2(self.conv_g2(x))
        y = self.bn_nobias(self.conv_nobias(torch.relu(y)))
        y = self.bn_convT(self.convT(y))  # 4 channels, 2x spatial
        y = self.bn_convT_g2(self.convT_g2(y))
        y = self.bn_convT_dw(self.convT_dw(y))
        y = self.bn_after_relu(torch.relu(y))
        c = self.conv_shared_out(y)
        y = self.bn_shared_out(c) + c
        a = self.bn_shared_a(self.shared(x))
        b = self.bn_shared_b(self.shared(x * 2.0))
        q = self.bn_conv1d(self.conv1d(s))
        w = self.bn_conv3d(self.conv3d(t))
        f = self.bn_fc(self.fc(v))
        g = self.bn_addmm(torch.addmm(self.b_addmm, v, self.w_addmm))
        h = self.bn_mm(v @ self.w_mm + self.b_mm)
        k = self.bn_mm_nobias(v @ self.w_mm_nobias)
        i = self.bn_identity(self.fc_identity(v))
        j = self.bn_rank3(r @ self.w_rank3)  # (N, 3, 6) @ (6, 4): BN's channel axis is not last
        l = self.bn_alpha(torch.addmm(self.b_alpha, v, self.w_alpha, alpha=2.0))
        return y, a, b, q, w, f, g, h, k, i, j, l


def mixed_model():
    m = Mixed()
    inputs = (torch.zeros(2, 4, 5, 5), torch.zeros(2, 3, 9), torch.zeros(2, 6),
              torch.zeros(1, 2, 4, 5, 4), torch.zeros(2, 3, 6))
    return m, inputs


MODELS = {
    # name: (constructor, example inputs, opset, sites refused: bn module -> reason)
    "resnet18": (lambda: (torchvision.models.resnet18(weights=None), (torch.zeros(1, 3, 64, 64),)),
                 13, {}),
    "mobilenet_v2": (lambda: (torchvision.models.mobilenet_v2(weights=None),
                              (torch.zeros(1, 3, 64, 64),)), 15, {}),
    "mixed": (mixed_model, 14, {"bn_after_relu": "unsupported", "bn_shared_out": "shared_output",
                                "bn_rank3": "ambiguous_axis", "bn_alpha": "unsupported"}),
}


# --------------------------------------------------------------------------------------------
# Reference folds
# --------------------------------------------------------------------------------------------
def fold_conv_transpose_grouped(w, b, bn, groups):
    """Correct fold of a grouped ConvTranspose: torch's, on the regrouped weight."""
    cin, opg = w.shape[0], w.shape[1]
    k = w.shape[2:]
    torch_ok = True
    try:
        tw, _ = fuse_conv_bn_weights(w, b, bn.running_mean, bn.running_var, bn.eps, bn.weight,
                                     bn.bias, transpose=True)
        torch_ok = tw.shape == w.shape
    except RuntimeError:
        torch_ok = False
    assert not torch_ok, "torch got a grouped ConvTranspose right: revisit the reference"
    # (in, out/g, k) -> (g, in/g, out/g, k) -> (in/g, g, out/g, k) -> (in/g, out, k)
    r = w.reshape(groups, cin // groups, opg, *k).transpose(0, 1).reshape(cin // groups,
                                                                            groups * opg, *k)
    fw, fb = fuse_conv_bn_weights(r, b, bn.running_mean, bn.running_var, bn.eps, bn.weight,
                                  bn.bias, transpose=True)
    back = fw.reshape(cin // groups, groups, opg, *k).transpose(0, 1).reshape(w.shape)
    return back.detach().contiguous(), fb.detach()


def bn_f64(bn, y):
    shape = [1, -1] + [1] * (y.dim() - 2)
    m, v = bn.running_mean.double().reshape(shape), bn.running_var.double().reshape(shape)
    g, b = bn.weight.double().reshape(shape), bn.bias.double().reshape(shape)
    eps = float(np.float32(bn.eps))
    return (y - m) / torch.sqrt(v + eps) * g + b


def check_meaning(op, w, b, fw, fb, bn, x):
    """BN(op(x; w, b)) == op(x; fw, fb) in float64, within the float32 rounding of fw, fb."""
    ref = bn_f64(bn, op(x.double(), w.double(), None if b is None else b.double()))
    got = op(x.double(), fw.double(), fb.double())
    scale = ref.abs().max().item() + 1.0
    assert torch.allclose(ref, got, rtol=0, atol=1e-5 * scale), (ref - got).abs().max()


# --------------------------------------------------------------------------------------------
# ONNX helpers
# --------------------------------------------------------------------------------------------
def export(model, inputs, opset):
    f = io.BytesIO()
    torch.onnx.export(model, inputs, f, opset_version=opset,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    return onnx.load_from_string(f.getvalue())


def producers(graph):
    p = {}
    for n in graph.node:
        for o in n.output:
            p[o] = n
    return p


def readers(graph):
    r = {}
    for n in graph.node:
        for i in n.input:
            r.setdefault(i, []).append(n)
    for o in graph.output:
        r.setdefault(o.name, []).append(None)
    return r


def resolve(name, prod, init_key):
    """The state_dict key behind a value: an initializer, or Identity chains of one."""
    while name not in init_key:
        n = prod.get(name)
        if n is None or n.op_type != "Identity":
            return None
        name = n.input[0]
    return init_key[name]


def attr(node, key, default):
    for a in node.attribute:
        if a.name == key:
            return onnx.helper.get_attribute_value(a)
    return default


def tensor_line(node_name, slot, arr, note):
    a = np.ascontiguousarray(arr.detach().numpy() if torch.is_tensor(arr) else arr,
                             dtype=np.float32)
    first = " ".join(float(v).hex() for v in a.reshape(-1)[:4])
    shape = ",".join(str(d) for d in a.shape)
    return (f"tensor {node_name} {slot} {shape} {tensor_hash(a):016x} {a.size} {note} : {first}")


# --------------------------------------------------------------------------------------------
def make(name, outdir, check_only):
    ctor, opset, refused = MODELS[name]
    model, inputs = ctor()
    model.eval()
    specs = fill(model)
    if name == "mixed":  # var == gamma (both positive): torch exports var as Identity(gamma)
        with torch.no_grad():
            model.bn_identity.weight.copy_(model.bn_identity.running_var)
        specs["bn_identity.weight"] = specs["bn_identity.running_var"]
    state = model.state_dict()
    mp = export(model, inputs, opset)
    g = mp.graph
    onnx.checker.check_model(mp)

    # 1. initializer -> state_dict key, by name, else by identical data
    by_bytes = {}
    for key, t in state.items():
        if t.is_floating_point():
            by_bytes.setdefault(t.detach().numpy().astype("<f4").tobytes(), key)
    init_key = {}
    stripped = 0
    for init in g.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        arr = numpy_helper.to_array(init)
        key = init.name if init.name in specs else by_bytes.get(arr.astype("<f4").tobytes())
        if key is None:
            continue  # a constant torch computed: stays in the file
        kind, e, seed = specs[key]
        regenerated = generate(seed, kind, e, arr.size).reshape(arr.shape)
        assert regenerated.tobytes() == arr.astype("<f4").tobytes(), init.name
        init_key[init.name] = key
        stripped += arr.size * 4

    # 2. expected folds, from the exported graph
    prod, read = producers(g), readers(g)
    lines = []
    folded = 0
    n_bn = 0
    seen_refused = set()
    x_cache = {}
    for bn_node in g.node:
        if bn_node.op_type != "BatchNormalization":
            continue
        n_bn += 1
        gamma_key = resolve(bn_node.input[1], prod, init_key)
        bn_name = gamma_key.rsplit(".", 1)[0]
        bn = model.get_submodule(bn_name)
        assert float(np.float32(bn.eps)) == attr(bn_node, "epsilon", 1e-5)
        p = prod.get(bn_node.input[0])
        if bn_name in refused:
            lines.append(f"refused {bn_node.name} {refused[bn_name]}")
            seen_refused.add(bn_name)
            continue
        assert p is not None and len(read[p.output[0]]) == 1, bn_name
        folded += 1
        rm, rv, gm, bt = bn.running_mean, bn.running_var, bn.weight, bn.bias
        if p.op_type in ("Conv", "ConvTranspose"):
            wkey = resolve(p.input[1], prod, init_key)
            bkey = resolve(p.input[2], prod, init_key) if len(p.input) > 2 else None
            w, b = state[wkey], (state[bkey] if bkey else None)
            groups = attr(p, "group", 1)
            transposed = p.op_type == "ConvTranspose"
            if transposed and groups > 1:
                fw, fb = fold_conv_transpose_grouped(w, b, bn, groups)
                note = "grouped-transposed:correct-fold(torch-wrong)"
            else:
                fw, fb = fuse_conv_bn_weights(w, b, rm, rv, bn.eps, gm, bt, transpose=transposed)
                note = "torch.nn.utils.fusion.fuse_conv_bn_weights"
            nd = w.dim() - 2
            conv = getattr(torch.nn.functional,
                           ("conv_transpose%dd" if transposed else "conv%dd") % nd)
            kw = {"groups": groups}
            chans = w.shape[0] if transposed else w.shape[1] * groups
            x = torch.from_numpy(generate("x" + bn_name, "s", 23, 2 * chans * 8 ** nd)
                                 ).reshape(2, chans, *([8] * nd))
            check_meaning(lambda x_, w_, b_: conv(x_, w_, b_, **kw), w, b, fw, fb, bn, x)
            lines.append(tensor_line(p.name, 1, fw, note))
            lines.append(tensor_line(p.name, 2, fb, note))
            continue
        # linear forms
        if p.op_type == "Gemm":
            wkey = resolve(p.input[1], prod, init_key)
            bkey = resolve(p.input[2], prod, init_key) if len(p.input) > 2 else None
            w = state[wkey] if attr(p, "transB", 0) == 1 else state[wkey].t()
            b = state[bkey] if bkey else None
            targets = [(p.name, 1, False), (p.name, 2, None)]
            lines.append(f"attr {p.name} transB 1")
        elif p.op_type == "Add":
            mm = prod[p.input[0]] if prod.get(p.input[0]) is not None and \
                prod[p.input[0]].op_type == "MatMul" else prod[p.input[1]]
            side = list(p.input).index(mm.output[0])
            w = state[resolve(mm.input[1], prod, init_key)].t()
            b = state[resolve(p.input[1 - side], prod, init_key)]
            targets = [(mm.name, 1, True), (p.name, 1 - side, None)]
        elif p.op_type == "MatMul":
            w = state[resolve(p.input[1], prod, init_key)].t()
            b = None
            # qfold-onnx adds Add(<MatMul output>, bias) named "<MatMul name>_bias"
            targets = [(p.name, 1, True), (p.name + "_bias", 1, None)]
        else:
            raise AssertionError(f"{bn_name}: unexpected producer {p.op_type}")
        fw, fb = fuse_linear_bn_weights(w, b, rm, rv, bn.eps, gm, bt)
        x = torch.from_numpy(generate("x" + bn_name, "s", 23, 3 * w.shape[1])).reshape(3, -1)
        check_meaning(lambda x_, w_, b_: torch.nn.functional.linear(x_, w_, b_), w, b, fw, fb,
                      bn, x)
        note = "torch.nn.utils.fusion.fuse_linear_bn_weights"
        for node_name, slot, transposed in targets:
            if transposed is None:
                lines.append(tensor_line(node_name, slot, fb, note))
            else:  # MatMul keeps its weight as (in, out)
                lines.append(tensor_line(node_name, slot, fw.t() if transposed else fw, note))
    assert seen_refused == set(refused), (seen_refused, refused)

    # 3. strip the data and write
    for init in g.initializer:
        if init.name in init_key:
            key = init_key[init.name]
            kind, e, seed = specs[key]
            init.ClearField("raw_data")
            del init.float_data[:]
            init.doc_string = f"qfold-gen {kind} {e} {seed}"
    header = [
        f"# {name}: made by tests/golden/make_onnx_models.py (torch {torch.__version__}, "
        f"torchvision {torchvision.__version__}, onnx {onnx.__version__}); format: README.md",
        f"model {name} opset {opset} batch_norms {n_bn} folded {folded} refused {len(refused)} "
        f"left {len(refused)}",
    ]
    text = "\n".join(header + lines) + "\n"
    data = mp.SerializeToString()
    print(f"{name}: {n_bn} batch norms, {folded} folded, {len(refused)} refused; "
          f"{stripped} bytes of weights regenerated at test time; model file {len(data)} bytes")
    if not check_only:
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, name + ".onnx"), "wb") as f:
            f.write(data)
        with open(os.path.join(outdir, name + ".expected"), "w") as f:
            f.write(text)


def main():
    check_only = "--check-only" in sys.argv
    outdir = os.path.join(HERE, "onnx")
    if "--outdir" in sys.argv:
        outdir = sys.argv[sys.argv.index("--outdir") + 1]
    # The generator and the hash must match the C++ ones: pin a few values.
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    print("pins:", generate("pin", "s", 23, 2).tolist(), generate("pin", "p", 24, 1).tolist(),
          f"{tensor_hash(np.array([1.0, -0.0], dtype=np.float32)):016x}")
    for name in MODELS:
        make(name, outdir, check_only)


if __name__ == "__main__":
    main()
