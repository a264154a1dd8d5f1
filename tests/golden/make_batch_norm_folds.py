#!/usr/bin/python3
"""Golden batch-norm folds as torch's `torch.nn.utils.fusion` computes them.

For every case the script records the inputs of
    fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose)
    fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)
and the fused weight and bias, bit for bit. torch 1.13's fusion.py computes (all in the tensor
dtype, every operation a separate eager kernel, one rounding each):

    conv:    r  = rsqrt(rv + eps)                 # eps: Python float, rounded to the dtype first
             W' = W * (gamma * r).reshape(shape)  # shape [-1,1,..] (conv) or [1,-1,..] (transpose)
             b' = (b - rm) * r * gamma + beta     # left to right
    linear:  s  = gamma * rsqrt(rv + eps)
             W' = W * s.unsqueeze(-1)
             b' = (b - rm) * s + beta             # note: uses s, unlike the conv formula

A missing conv/linear bias is zeros_like(rm); for conv a missing gamma/beta is ones/zeros.
fuse_linear_bn_weights has no None handling for gamma/beta (torch raises TypeError).

The script (1) runs torch, (2) recomputes every case step by step in numpy with the same dtype
and operation order, and ASSERTS bit equality (sign of zero included), (3) checks the fold's
meaning in float64 (BN(op(x)) == op'(x) within rounding), (4) measures how torch evaluates
float32 rsqrt against numpy and a correctly rounded reference, and (5) counts the golden
entries that would change under plausible alternative evaluations.

Grouped / depthwise ConvTranspose: torch scales weight dim 1 (out/groups entries) with all
`out` factors, so it raises (shape mismatch) or returns a wrongly shaped tensor. Those lines are
marked torch_status=raises|wrong and hold the correct fold (same operation order, output
channel o = (i // (in/groups)) * (out/groups) + j for weight[i][j]), cross-checked against
torch applied to the regrouped weight (the ExecuTorch FuseBatchNormWithConvPass approach).

Writes batch_norm_folds.txt next to this script. Format: README.md, section
"make_batch_norm_folds.py".
Usage: /usr/bin/python3 tests/golden/make_batch_norm_folds.py [--check-only] [--outdir DIR]
Needs Debian's python3-torch (1.13.1) and python3-numpy.
"""

import math
import os
import sys
import zlib
from fractions import Fraction

import numpy as np
import torch
from torch.nn.utils.fusion import fuse_conv_bn_weights, fuse_linear_bn_weights

HERE = os.path.dirname(os.path.abspath(__file__))
F = torch.nn.functional
f32 = np.float32
f64 = np.float64
torch.set_num_threads(1)

EPS_VALUES = (1e-5, 1e-3)
EPS_TAG = {1e-5: "e5", 1e-3: "e3"}


# --------------------------------------------------------------------------------------------
# Exact float32 helpers (Fractions), for the correctly rounded references
# --------------------------------------------------------------------------------------------

def round_fraction_f32(q, zero_sign=1.0):
    """Round the exact rational q to float32, nearest, ties to even. zero_sign: sign of a zero."""
    if q == 0:
        return f32(math.copysign(0.0, zero_sign))
    c = f32(float(q))  # float(q) is correctly rounded to double; fix the double rounding below
    if not np.isfinite(c):
        return c
    best = None
    for y in (np.nextafter(c, f32(-np.inf)), c, np.nextafter(c, f32(np.inf))):
        if not np.isfinite(y):
            continue
        d = abs(Fraction(float(y)) - q)
        if best is None or d < best[0] or (d == best[0] and int(f32(y).view(np.uint32)) % 2 == 0):
            best = (d, y)
    return f32(best[1])


def cr_rsqrt_f32(x):
    """Correctly rounded float32 1/sqrt(x) for a positive finite float32 x (exact decision)."""
    xf = Fraction(float(x))
    c = f32(1.0 / math.sqrt(float(x)))
    for y in (np.nextafter(c, f32(0)), c, np.nextafter(c, f32(np.inf))):
        lo = (Fraction(float(y)) + Fraction(float(np.nextafter(y, f32(0))))) / 2
        hi = (Fraction(float(y)) + Fraction(float(np.nextafter(y, f32(np.inf))))) / 2
        # 1/sqrt(x) > lo  <=>  lo^2 x < 1 ; a midpoint m with m^2 x == 1 cannot exist (no ties)
        assert lo * lo * xf != 1 and hi * hi * xf != 1
        if lo * lo * xf < 1 < hi * hi * xf:
            return f32(y)
    raise AssertionError("no correctly rounded candidate")


def cr_rsqrt_f32_array(x):
    """Vectorised: double evaluation, exact Fraction decision only near float32 midpoints."""
    x = np.asarray(x, dtype=f32)
    r64 = 1.0 / np.sqrt(x.astype(f64))          # relative error < 2^-52
    c = r64.astype(f32)
    up = np.nextafter(c, f32(np.inf)).astype(f64)
    dn = np.nextafter(c, f32(0)).astype(f64)
    c64 = c.astype(f64)
    mid = np.where(r64 >= c64, (c64 + up) / 2, (c64 + dn) / 2)   # exact in double
    near = np.abs(r64 - mid) <= np.abs(r64) * 2.0 ** -49
    out = c.copy()
    for i in np.nonzero(near)[0]:
        out[i] = cr_rsqrt_f32(x[i])
    return out, int(np.sum(near))


def bits_equal(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    u = np.uint32 if a.dtype == f32 else np.uint64
    return bool(np.array_equal(a.view(u), b.view(u)))


def ndiff(a, b):
    u = np.uint32 if a.dtype == f32 else np.uint64
    return int(np.sum(np.asarray(a).view(u) != np.asarray(b).view(u)))


# --------------------------------------------------------------------------------------------
# Case description
# --------------------------------------------------------------------------------------------

class Base:
    def __init__(self, name, kind, out_ch, in_ch, groups, kernel, dtype=f32, variants="all"):
        self.name, self.kind = name, kind
        self.out_ch, self.in_ch, self.groups, self.kernel = out_ch, in_ch, groups, tuple(kernel)
        self.dtype, self.variants = dtype, variants
        assert out_ch % groups == 0 and in_ch % groups == 0
        if kind == "conv":
            self.wshape = (out_ch, in_ch // groups) + self.kernel
        elif kind == "conv_transpose":
            self.wshape = (in_ch, out_ch // groups) + self.kernel
        else:
            assert groups == 1 and not kernel
            self.wshape = (out_ch, in_ch)

    @property
    def layout(self):
        sp = {0: "", 1: "W", 2: "HW", 3: "DHW"}[len(self.kernel)]
        return ("IO" if self.kind == "conv_transpose" else "OI") + sp

    def channel_map(self):
        """Output channel of every weight element (array of the weight's shape)."""
        idx = np.indices(self.wshape)
        if self.kind == "conv_transpose":
            in_pg, out_pg = self.in_ch // self.groups, self.out_ch // self.groups
            return (idx[0] // in_pg) * out_pg + idx[1]
        return idx[0]


BASES = [
    # plain convolutions, groups 1
    Base("conv1d", "conv", 6, 4, 1, (3,)),
    Base("conv2d", "conv", 8, 3, 1, (3, 3)),
    Base("conv2d_1x1", "conv", 5, 6, 1, (1, 1)),
    Base("conv3d", "conv", 4, 3, 1, (2, 3, 2)),
    # grouped and depthwise (weight dim 0 is still the output channel)
    Base("conv2d_g2", "conv", 6, 4, 2, (3, 3)),
    Base("conv1d_g3", "conv", 6, 6, 3, (2,)),
    Base("conv2d_dw", "conv", 5, 5, 5, (3, 3)),
    Base("conv1d_dw", "conv", 4, 4, 4, (3,)),
    # transposed, groups 1 (torch correct: weight dim 1 is the output channel)
    Base("convT2d", "conv_transpose", 6, 3, 1, (3, 3)),
    Base("convT1d", "conv_transpose", 4, 5, 1, (2,)),
    Base("convT3d", "conv_transpose", 4, 2, 1, (2, 2, 1)),
    # linear
    Base("linear", "linear", 5, 7, 1, ()),
    # grouped / depthwise transposed: torch raises or returns a wrong result
    Base("convT2d_g2", "conv_transpose", 6, 4, 2, (3, 3)),
    Base("convT2d_g2_opg1", "conv_transpose", 2, 4, 2, (2, 2)),
    Base("convT2d_dw", "conv_transpose", 4, 4, 4, (3, 3)),
    Base("convT1d_g3", "conv_transpose", 9, 6, 3, (2,)),
    # double path
    Base("conv2d_f64", "conv", 6, 3, 1, (3, 3), dtype=f64, variants="f64"),
]


def variants_of(base):
    if base.variants == "f64":
        return [(1, 1, 1, 1e-5), (0, 0, 0, 1e-3), (1, 0, 1, 1e-3), (0, 1, 0, 1e-5)]
    return [(hb, hg, hbe, eps) for hb in (1, 0) for hg in (1, 0) for hbe in (1, 0)
            for eps in EPS_VALUES]


# --------------------------------------------------------------------------------------------
# Input data: mixed magnitudes, subnormals, signed zeros, discriminating variances
# --------------------------------------------------------------------------------------------

def find_discriminating_vars(eps, rng, want=8):
    """float32 variances v for which (a) f32(v + eps_double) != f32(v) + f32(eps),
    (b) 1/sqrt with two roundings != correctly rounded rsqrt of f32(v) + f32(eps)."""
    eps_add, rsq = [], []
    while len(eps_add) < want or len(rsq) < want:
        v = f32(10.0 ** rng.uniform(-6, 1))
        x = v + f32(eps)
        if f32(float(v) + eps) != x and len(eps_add) < want:
            eps_add.append(v)
        elif f32(1) / np.sqrt(x) != cr_rsqrt_f32(x) and len(rsq) < want:
            rsq.append(v)
    return eps_add, rsq


def mixed_values(rng, n, dtype):
    """Weights of mixed magnitude: normal, 1e-3, 1e4, tiny normal, subnormal, +-0, powers of 2."""
    out = np.empty(n, dtype=dtype)
    kinds = rng.choice(8, size=n, p=[0.50, 0.10, 0.08, 0.06, 0.07, 0.05, 0.04, 0.10])
    for i, k in enumerate(kinds):
        s = -1.0 if rng.random() < 0.5 else 1.0
        if k == 0:
            v = rng.normal()
        elif k == 1:
            v = rng.normal() * 1e-3
        elif k == 2:
            v = s * 1e4 * rng.uniform(0.5, 2.0)
        elif k == 3:
            v = s * 10.0 ** rng.uniform(-37.5, -30)
        elif k == 4:  # float32 subnormal (also for the float64 case: tiny, exactly representable)
            v = s * float(np.array([rng.integers(1, 0x00800000)], dtype=np.uint32).view(f32)[0])
        elif k == 5:
            v = s * 0.0
        elif k == 6:
            v = s * 2.0 ** int(rng.integers(-10, 11))
        else:
            v = rng.normal() * 10.0
        out[i] = v
    return out


def make_inputs(base, variant, disc):
    has_b, has_g, has_be, eps = variant
    seed = zlib.crc32(f"{base.name}|{variant}".encode())
    rng = np.random.default_rng(seed)
    dt = base.dtype
    C = base.out_ch
    w = mixed_values(rng, int(np.prod(base.wshape)), dt).reshape(base.wshape)

    mean = np.array(rng.normal(size=C) * 2.0, dtype=dt)
    for c in range(C):
        u = rng.random()
        if u < 0.15:
            mean[c] = 0.0
        elif u < 0.25:
            mean[c] = rng.normal() * 1e3
    # variances: discriminating values first (so every case has some), then special values
    eps_add, rsq = disc[eps]
    pool = [rng.choice(eps_add), rng.choice(rsq), f32(1e-8) * f32(rng.uniform(0.5, 2)),
            10.0 ** rng.uniform(3, 7), 0.0, f32(1e-12), rng.uniform(0.05, 3.0)]
    var = np.array([pool[c] if c < len(pool) else rng.uniform(0.05, 3.0) for c in range(C)],
                   dtype=dt)
    rng.shuffle(var)

    bias = None
    if has_b:
        bias = np.array(rng.normal(size=C) * 2.0, dtype=dt)
        for c in range(C):
            u = rng.random()
            if u < 0.3:
                bias[c] = mean[c]          # b - mean == +0 exactly: signed-zero behaviour
            elif u < 0.4:
                bias[c] = 1e4 * rng.uniform(-1, 1)
    gamma = None
    if has_g:
        gamma = np.array(rng.normal(size=C), dtype=dt)
        for c in range(C):
            u = rng.random()
            if u < 0.12:
                gamma[c] = 0.0
            elif u < 0.22:
                gamma[c] = rng.normal() * 1e-3
            elif u < 0.3:
                gamma[c] = rng.normal() * 50.0
    beta = None
    if has_be:
        beta = np.array(rng.normal(size=C), dtype=dt)
        for c in range(C):
            u = rng.random()
            if u < 0.15:
                beta[c] = 0.0
            elif u < 0.25:
                beta[c] = -0.0
    if not has_b and C > 1:
        mean[int(rng.integers(C))] = 0.0       # 0 - 0 = +0 (not -0): bias-absent sign case
    return w, bias, mean, var, gamma, beta, eps


def extreme_case():
    """conv2d whose fold overflows to +-inf and underflows to subnormals / zero (float32)."""
    base = Base("conv2d_extreme", "conv", 4, 2, 1, (2, 2))
    w = np.array([3e38, -3e38, 1e-45, -1e-45, 1.5e-40, 2.0, -0.0, 0.0] * 4, dtype=f32)
    w = w.reshape(base.wshape)
    bias = np.array([3e38, -3e38, 1.0, 0.0], dtype=f32)
    mean = np.array([-3e38, 3e38, 1.0, 0.0], dtype=f32)
    var = np.array([0.0, 1e-8, 1e30, 3e38], dtype=f32)
    gamma = np.array([4.0, 1e-3, 1e20, -1e-30], dtype=f32)
    beta = np.array([1.0, -1.0, 0.0, -0.0], dtype=f32)
    return base, (1, 1, 1, 1e-5), (w, bias, mean, var, gamma, beta, 1e-5)


# --------------------------------------------------------------------------------------------
# torch, and the numpy model that must reproduce it bit for bit
# --------------------------------------------------------------------------------------------

def T(a):
    return None if a is None else torch.from_numpy(np.ascontiguousarray(a).copy())


def torch_fold(base, w, bias, mean, var, gamma, beta, eps):
    """Returns (status_hint, fused_w, fused_b or None, error message)."""
    try:
        with torch.no_grad():
            if base.kind == "linear":
                fw, fb = fuse_linear_bn_weights(T(w), T(bias), T(mean), T(var), eps, T(gamma),
                                                T(beta))
            else:
                fw, fb = fuse_conv_bn_weights(T(w), T(bias), T(mean), T(var), eps, T(gamma),
                                              T(beta), transpose=(base.kind == "conv_transpose"))
        return fw.detach().numpy(), fb.detach().numpy(), None
    except Exception as e:  # noqa: BLE001 - recording what torch does
        return None, None, f"{type(e).__name__}: {str(e).splitlines()[0]}"


def torch_fold_regrouped(base, w, bias, mean, var, gamma, beta, eps):
    """ExecuTorch-style: [in, out/g, k] -> [in/g, out, k], fold with transpose=True, restore."""
    g = base.groups
    in_pg, out_pg = base.in_ch // g, base.out_ch // g
    k = base.kernel
    wr = w.reshape((g, in_pg, out_pg) + k).swapaxes(0, 1).reshape((in_pg, base.out_ch) + k)
    C = base.out_ch
    gm = gamma if gamma is not None else np.ones(C, dtype=w.dtype)
    bt = beta if beta is not None else np.zeros(C, dtype=w.dtype)
    with torch.no_grad():
        fw, fb = fuse_conv_bn_weights(T(wr), T(bias), T(mean), T(var), eps, T(gm), T(bt),
                                      transpose=True)
    fw = fw.detach().numpy().reshape((in_pg, g, out_pg) + k).swapaxes(0, 1).reshape(base.wshape)
    return np.ascontiguousarray(fw), fb.detach().numpy()


def np_model(base, w, bias, mean, var, gamma, beta, eps, alt=None):
    """numpy, same dtype and operation order as torch (alt=None), or an alternative evaluation."""
    dt = base.dtype
    C = base.out_ch
    one = dt(1)
    b = bias if bias is not None else np.zeros(C, dtype=dt)
    gm = gamma if gamma is not None else np.ones(C, dtype=dt)
    bt = beta if beta is not None else np.zeros(C, dtype=dt)
    ch = base.channel_map()

    if alt == "double":  # everything in float64, one rounding at the end
        w64, b64, m64, v64 = (a.astype(f64) for a in (w, b, mean, var))
        g64, bt64 = gm.astype(f64), bt.astype(f64)
        r64 = 1.0 / np.sqrt(v64 + eps)
        s64 = g64 * r64
        fw = (w64 * s64[ch]).astype(dt)
        fb = ((b64 - m64) * r64 * g64 + bt64).astype(dt)
        return fw, fb

    if alt == "eps64":
        v = (var.astype(f64) + eps).astype(dt)
    else:
        v = var + dt(eps)                       # torch rounds the Python eps to the dtype first
    if alt == "cr_rsqrt":
        r, _ = cr_rsqrt_f32_array(v)
    else:
        r = one / np.sqrt(v)                    # two roundings: sqrt, then division
    s = gm * r
    if alt == "w_gamma_first":
        fw = (w * gm[ch]) * r[ch]
    else:
        fw = w * s[ch]

    d = b - mean
    if alt == "skip_absent":                    # drop the neutral operations of absent inputs
        d = b - mean if bias is not None else -mean
    linear_formula = (base.kind == "linear")
    if alt == "other_bias_formula":
        linear_formula = not linear_formula
    if alt == "fma_bias":
        t = d if linear_formula else d * r
        mul = s if linear_formula else gm
        fb = np.array([round_fraction_f32(Fraction(float(t[c])) * Fraction(float(mul[c]))
                                          + Fraction(float(bt[c])),
                                          zero_sign=-1.0 if (np.signbit(t[c] * mul[c])
                                                             and np.signbit(bt[c])) else 1.0)
                       for c in range(C)], dtype=dt)
        return fw, fb
    if linear_formula:
        t = d * s
    else:
        t = (d * r) * gm
    if alt == "skip_absent":
        if gamma is None and not linear_formula:
            t = d * r
        fb = t + bt if beta is not None else t
    else:
        fb = t + bt
    return fw, fb


ALTERNATIVES = ["eps64", "cr_rsqrt", "double", "w_gamma_first", "other_bias_formula",
                "fma_bias", "skip_absent"]


# --------------------------------------------------------------------------------------------
# Meaning of the fold, in float64: BN(op(x; W, b)) == op(x; W', b') up to rounding
# --------------------------------------------------------------------------------------------

def semantic_check(base, w, bias, mean, var, gamma, beta, eps, fw, fb):
    rng = np.random.default_rng(7)
    C, g = base.out_ch, base.groups
    nd = len(base.kernel)
    if base.kind == "linear":
        x = torch.from_numpy(rng.normal(size=(3, base.in_ch)))
        op = lambda xx, ww, bb: F.linear(xx, ww, bb)
    else:
        x = torch.from_numpy(rng.normal(size=(2, base.in_ch) + (4,) * nd))
        if base.kind == "conv":
            fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
        else:
            fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
        op = lambda xx, ww, bb: fn(xx, ww, bb, groups=g)
    d = lambda a: None if a is None else torch.from_numpy(np.asarray(a, dtype=f64))
    gm = gamma if gamma is not None else np.ones(C)
    bt = beta if beta is not None else np.zeros(C)
    shp = (1, C) + (1,) * nd
    y = op(x, d(w), d(bias))
    ref = ((y - d(mean).reshape(shp)) / torch.sqrt(d(var).reshape(shp) + eps)
           * d(gm).reshape(shp) + d(bt).reshape(shp))
    got = op(x, d(fw), d(fb))
    # magnitude of every term that was rounded: |x||W'| + |b'| + |b - mean| r |gamma| + |beta|
    r = 1.0 / torch.sqrt(d(var) + eps)
    extra = (d(bias).abs() if bias is not None else 0.0) + d(mean).abs()
    extra = extra * r * d(gm).abs() + d(bt).abs() + d(fb).abs()
    mag = op(x.abs(), d(fw).abs(), extra)
    err = (ref - got).abs()
    tol = mag * 1e-6 + 1e-30
    assert ref.shape == got.shape and bool(torch.all(err <= tol)), \
        (base.name, float((err / tol).max()))


# --------------------------------------------------------------------------------------------
# rsqrt / eps / product behaviour of torch, measured
# --------------------------------------------------------------------------------------------

def rsqrt_study():
    rng = np.random.default_rng(20260901)
    lines = []
    bits = rng.integers(1, 0x7F800000, size=100000, dtype=np.int64).astype(np.uint32)
    x_all = bits.view(f32)                                     # all positive finite floats
    x_rng = (10.0 ** rng.uniform(-9, 7, 100000)).astype(f32)   # var + eps range
    for label, x in (("random bit patterns (incl. subnormals)", x_all),
                     ("log-uniform [1e-9, 1e7]", x_rng)):
        big = torch.rsqrt(torch.from_numpy(x.copy())).numpy()
        small = np.concatenate([torch.rsqrt(torch.from_numpy(x[i:i + 7].copy())).numpy()
                                for i in range(0, len(x), 7)])
        two = f32(1) / np.sqrt(x)
        cr, nexact = cr_rsqrt_f32_array(x)
        exact = np.array([cr_rsqrt_f32(v) for v in x[:3000]], dtype=f32)
        assert bits_equal(cr[:3000], exact), "vectorised correctly rounded rsqrt"
        dbl = (1.0 / np.sqrt(x.astype(f64))).astype(f32)
        assert bits_equal(big, two) and bits_equal(small, two), label
        ulp = np.abs(big.view(np.int32).astype(np.int64) - cr.view(np.int32))
        lines.append(f"rsqrt over {len(x)} {label}: torch == f32(1)/sqrt(x) (two roundings) in "
                     f"all (100000-element tensor and 7-element tensors); != correctly rounded in "
                     f"{ndiff(big, cr)} (max {int(ulp.max())} ulp); f32(1/sqrt(double x)) != "
                     f"correctly rounded in {ndiff(dbl, cr)} ({nexact} decided exactly)")
    xd = (10.0 ** rng.uniform(-9, 7, 100000))
    assert bits_equal(torch.rsqrt(torch.from_numpy(xd.copy())).numpy(), 1.0 / np.sqrt(xd))
    lines.append("rsqrt float64 over 100000 values: torch == 1.0/sqrt(x) (two roundings) in all")
    v = (10.0 ** rng.uniform(-9, 1, 100000)).astype(f32)
    for eps in EPS_VALUES:
        t = (torch.from_numpy(v.copy()) + eps).numpy()
        assert bits_equal(t, v + f32(eps))
        lines.append(f"float32 tensor + {eps!r}: torch == v + f32(eps) in all 100000; "
                     f"== f32(v + eps_double) would differ in "
                     f"{ndiff(t, (v.astype(f64) + eps).astype(f32))}")
    a = mixed_values(rng, 100000, f32)
    b = (10.0 ** rng.uniform(-3, 3, 100000) * rng.choice([-1, 1], 100000)).astype(f32)
    c = rng.normal(size=100000).astype(f32)
    ta, tb, tc = (torch.from_numpy(z.copy()) for z in (a, b, c))
    assert bits_equal((ta * tb).numpy(), a * b)
    assert bits_equal((ta * tb + tc).numpy(), a * b + c)
    assert bits_equal((ta - tb).numpy(), a - b)
    fma = np.array([round_fraction_f32(Fraction(float(a[i])) * Fraction(float(b[i]))
                                       + Fraction(float(c[i]))) for i in range(20000)], dtype=f32)
    lines.append(f"products/sums: torch a*b, a*b+c, a-b == numpy float32 (one rounding per "
                 f"operation) on 100000; a fused a*b+c would differ in {ndiff((a * b + c)[:20000], fma)}"
                 f" of 20000; subnormal results are kept (no flush to zero)")
    return lines


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------

def hexs(a):
    if a is None:
        return "-"
    return " ".join(float(v).hex() for v in np.asarray(a).reshape(-1))


def main():
    check_only = "--check-only" in sys.argv
    outdir = HERE
    if "--outdir" in sys.argv:
        outdir = sys.argv[sys.argv.index("--outdir") + 1]

    study = rsqrt_study()
    drng = np.random.default_rng(12345)
    disc = {eps: find_discriminating_vars(eps, drng) for eps in EPS_VALUES}

    jobs = [(b, v, make_inputs(b, v, disc)) for b in BASES for v in variants_of(b)]
    jobs.append(extreme_case())

    lines, statuses, errors = [], {}, {}
    alt_stats = {a: [0, 0, 0] for a in ALTERNATIVES}  # elements changed, cases changed, cases
    total_elems = 0
    for base, variant, inp in jobs:
        w, bias, mean, var, gamma, beta, eps = inp
        has_b, has_g, has_be = bias is not None, gamma is not None, beta is not None
        tw, tb, err = torch_fold(base, *inp)
        with np.errstate(over="ignore"):
            mw, mb = np_model(base, *inp)
        assert mw.shape == w.shape and mb.shape == (base.out_ch,)
        if err is not None:
            status = "raises"
            errors.setdefault(base.name, set()).add(err)
        elif tw.shape != w.shape or not bits_equal(tw, mw) or not bits_equal(tb, mb):
            status = "wrong"
            errors.setdefault(base.name, set()).add(f"returned weight shape {tuple(tw.shape)}")
        else:
            status = "ok"
        statuses[status] = statuses.get(status, 0) + 1
        grouped_t = base.kind == "conv_transpose" and base.groups > 1
        # torch's fold must be reproduced exactly wherever torch is applicable
        if status != "ok":
            assert grouped_t or (base.kind == "linear" and not (has_g and has_be)), \
                (base.name, variant, err)
        if grouped_t:
            assert status != "ok"
            rw, rb = torch_fold_regrouped(base, *inp)
            assert bits_equal(rw, mw) and bits_equal(rb, mb), (base.name, variant, "regrouped")
        if base.kind == "linear" and status == "raises":
            C = base.out_ch
            ow, ob, e2 = torch_fold(base, w, bias, mean, var,
                                    gamma if has_g else np.ones(C, dtype=f32),
                                    beta if has_be else np.zeros(C, dtype=f32), eps)
            assert e2 is None and bits_equal(ow, mw) and bits_equal(ob, mb), (base.name, variant)
        finite = bool(np.all(np.isfinite(mw)) and np.all(np.isfinite(mb)))
        if finite:
            semantic_check(base, *inp, mw, mb)
        else:
            assert base.name == "conv2d_extreme"
        if base.dtype == f32 and finite:
            total_elems += mw.size + mb.size
            for alt in ALTERNATIVES:
                aw, ab = np_model(base, *inp, alt=alt)
                n = ndiff(aw, mw) + ndiff(ab, mb)
                st = alt_stats[alt]
                st[0] += n
                st[1] += 1 if n else 0
                st[2] += 1
        name = base.name
        if base.name != "conv2d_extreme":
            name += (f"_b{int(has_b)}_g{int(has_g)}_be{int(has_be)}_{EPS_TAG[eps]}")
        head = (f"{name} kind={base.kind} dtype={'float32' if base.dtype == f32 else 'float64'} "
                f"groups={base.groups} channels={base.out_ch} "
                f"wshape={','.join(str(d) for d in w.shape)} layout={base.layout} "
                f"eps={float(eps).hex()} torch_status={status} has_bias={int(has_b)} "
                f"has_gamma={int(has_g)} has_beta={int(has_be)}")
        lines.append(f"{head} : w {hexs(w)} | b {hexs(bias)} | mean {hexs(mean)} | "
                     f"var {hexs(var)} | gamma {hexs(gamma)} | beta {hexs(beta)} | "
                     f"fused_w {hexs(mw)} | fused_b {hexs(mb)}")

    cap = torch.__config__.show().split("CPU capability usage:")[1].splitlines()[0].strip()
    print(f"torch {torch.__version__}, numpy {np.__version__}, ATen CPU capability {cap}")
    for s in study:
        print(s)
    print(f"{len(lines)} cases, torch_status {statuses}; numpy step-by-step model == torch "
          f"bit for bit on every 'ok' case; every fold checked in float64 against BN(op(x))")
    for name, errs in errors.items():
        for e in sorted(errs):
            print(f"  torch on {name}: {e}")
    print(f"alternatives over the {alt_stats['eps64'][2]} finite float32 cases "
          f"({total_elems} fused values): elements changed / cases changed")
    for alt, (n, c, _) in alt_stats.items():
        print(f"  {alt:18s} {n:6d} {c:4d}")
    if check_only:
        return
    path = os.path.join(outdir, "batch_norm_folds.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
