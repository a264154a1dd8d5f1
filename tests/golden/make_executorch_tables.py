#!/usr/bin/python3
"""Golden TOSA TABLE contents as ExecuTorch's Arm backend builds them.

Reproduces the table generation of ExecuTorch's `InsertTableOpsPass`
(backends/arm/_passes/insert_table_ops.py, pytorch/executorch @ cff6f4dd32, 2026-08-22) with the
quantize/dequantize arithmetic of torch's `quantized_decomposed` ops
(torch/ao/quantization/fx/_decomposed.py). The pipeline is written out here with the same torch
tensor operations, in the same order and with the same dtypes; nothing is imported from
ExecuTorch. One exception: the int16 knots use torch >= 2.0's integer linspace (emulated in
`torch2_linspace_int`), because the installed torch 1.13 still has the old vectorised one.
See README.md in this directory for the details and their verification.

Writes executorch_int8.txt and executorch_int16.txt next to this script, and
executorch_fragile.txt (entries that change when the float32 function is evaluated differently).

Usage: /usr/bin/python3 tests/golden/make_executorch_tables.py [--check-only] [--outdir DIR]
Needs Debian's python3-torch (1.13.1) and python3-numpy.
"""

import math
import os
import random
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
F = torch.nn.functional
f32 = np.float32

torch.set_num_threads(1)


def as_f32(v):
    """The float32 value nearest to v, as a Python float (double)."""
    return float(np.float32(v))


# --------------------------------------------------------------------------------------------
# The torch side: exactly the operations ExecuTorch runs.
# --------------------------------------------------------------------------------------------

def dequantize(q, scale, zp):
    # quantized_decomposed.dequantize_per_tensor: (input.to(float32) - zero_point) * scale
    return (q.to(torch.float32) - zp) * scale


def quantize(x, scale, zp, qmin, qmax, dtype):
    # quantized_decomposed.quantize_per_tensor
    assert x.dtype == torch.float32
    inv_scale = 1.0 / scale
    return torch.clamp(torch.round(x * inv_scale) + zp, qmin, qmax).to(dtype)


# ExecuTorch's op -> torch function map (TableOps.unary_table_ops and the special cases).
TORCH_OPS = {
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "exp": torch.exp,
    "log": torch.log,
    "erf": torch.erf,
    "gelu": lambda x: F.gelu(x, approximate="none").flatten(),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh").flatten(),
    "silu": F.silu,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    # elu: torch.ops.aten.elu.default(x, alpha, scale, input_scale); ExecuTorch takes alpha from
    # node.meta["float_alpha"] and scale/input_scale default 1.0.
    "elu": lambda x, alpha=1.0: torch.ops.aten.elu.default(x, alpha, 1.0, 1.0).flatten(),
    "leaky_relu": lambda x, slope=0.01: F.leaky_relu(x, negative_slope=slope).flatten(),
    "expm1": torch.expm1,
    "log1p": torch.log1p,
    "sin": torch.sin,
    "cos": torch.cos,
    "atan": torch.atan,
}
PARAMS = {"elu": 1.0, "leaky_relu": 0.01}

TORCH_DTYPE = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32}
DTYPE_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
               "int32": (-(2 ** 31), 2 ** 31 - 1)}


def torch_op(name):
    fn = TORCH_OPS[name]
    if name in PARAMS:
        p = PARAMS[name]
        return lambda x: fn(x, p)
    return fn


def et_table_int8(name, ins, out):
    """generate_8bit_table_values: returns (list of 256 ints in code order, lshift 0)."""
    s_in, zp_in, qmin_in, qmax_in, _ = ins
    s_out, zp_out, qmin_out, qmax_out, dt_out = out
    assert dt_out == "int8"
    codes = torch.arange(-128, 128, dtype=torch.int8).clamp(qmin_in, qmax_in)
    x = dequantize(codes, s_in, zp_in)
    y = torch_op(name)(x)
    q = quantize(y, s_out, zp_out, qmin_out, qmax_out, torch.int8).to(dtype=torch.int8)
    return [int(v) for v in q.tolist()], x, y


def torch2_linspace_int(start, end, steps):
    """torch.linspace(start, end, steps, dtype=int32) as torch >= 2.0 computes it on CPU
    (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp after pytorch PR #89048): step in double,
    `start + step*i` for i < steps//2, `end - step*(steps-1-i)` above, truncated toward zero.
    torch 1.13 (installed here) still has the vectorised variant, which truncates once per
    8-lane block and gives other knots for qmin = -32767; ExecuTorch needs torch 2.x."""
    step = (float(end) - float(start)) / (steps - 1)
    half = steps // 2
    out = []
    for i in range(steps):
        v = start + step * i if i < half else end - step * (steps - i - 1)
        out.append(math.trunc(v))
    return out


def et_table_int16(name, ins, out):
    """generate_16_bit_table_values: returns (513 ints, rshift, x, y)."""
    s_in, zp_in, qmin_in, qmax_in, dt_in = ins
    s_out, zp_out, qmin_out, qmax_out, dt_out = out
    assert dt_in == "int16" and dt_out in ("int16", "int32")
    knots = torch.tensor(torch2_linspace_int(qmin_in, qmax_in + 1, 513), dtype=torch.int32)
    has_full_upper = dt_in == "int16" and qmax_in == 32767
    x = knots.clamp(qmin_in, qmax_in).to(dtype=TORCH_DTYPE[dt_in])
    x = dequantize(x & ~0x7F, s_in, zp_in)
    if has_full_upper:
        x[-1] = (32767 + 1 - zp_in) * s_in   # Python int * float, stored into float32
    y = torch_op(name)(x)
    lut = quantize(y, s_out, zp_out, qmin_out, qmax_out, TORCH_DTYPE[dt_out])
    rshift = int(torch.ceil(torch.log2(lut.abs().max()))) + 1 - 16
    rshift = max(rshift, 0)
    lut = lut >> rshift
    return [int(v) for v in lut.to(dtype=torch.int16).tolist()], rshift, x, y


# --------------------------------------------------------------------------------------------
# Independent numpy model of the same float32 pipeline. Used (1) to check that the torch
# arithmetic is what README.md says it is, and (2) to recompute every table with correctly
# rounded float32 function values, which marks the entries that depend on torch's math library.
# --------------------------------------------------------------------------------------------

def np_dequantize(codes, scale, zp):
    return (np.asarray(codes, dtype=np.int64) - zp).astype(f32) * f32(scale)


def np_quantize(y, scale, zp, qmin, qmax):
    """float32: y * float32(1/scale), round half even, + zp, clamp, NaN -> 0 (torch on x86)."""
    p = y.astype(f32) * f32(1.0 / scale)
    r = np.rint(p) + f32(zp)
    with np.errstate(invalid="ignore"):
        c = np.minimum(np.maximum(r, f32(qmin)), f32(qmax))
    out = []
    for v in c:
        out.append(0 if np.isnan(v) else int(v))
    return out, p


def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


# Real-valued functions in double precision (accurate to a few double ulps); rounding them to
# float32 gives the correctly rounded float32 value except in astronomically rare cases.
REF = {
    "tanh": math.tanh,
    "sigmoid": _sigmoid,
    "exp": _exp,
    "log": lambda x: math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan),
    "erf": math.erf,
    "gelu": lambda x: 0.5 * x * math.erfc(-x / math.sqrt(2.0)),
    # 0.5 (1 + tanh u) == sigmoid(2u): no cancellation for large negative x.
    "gelu_tanh": lambda x: x * _sigmoid(2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)),
    "silu": lambda x: x * _sigmoid(x),
    "hardswish": lambda x: x * min(max(x + 3.0, 0.0), 6.0) / 6.0,
    "hardsigmoid": lambda x: min(max(x + 3.0, 0.0), 6.0) / 6.0,
    "rsqrt": lambda x: 1.0 / math.sqrt(x) if x > 0 else (math.inf if x == 0 else math.nan),
    "reciprocal": lambda x: 1.0 / x if x != 0 else math.copysign(math.inf, x),
    "elu": lambda x: x if x > 0 else 1.0 * math.expm1(x),
    "leaky_relu": lambda x: x if x > 0 else x * 0.01,
    "expm1": lambda x: math.expm1(x) if x < 709 else math.inf,
    "log1p": lambda x: math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan),
    "sin": math.sin,
    "cos": math.cos,
    "atan": math.atan,
}


def ref_f32(name, xs):
    out = np.empty(len(xs), dtype=f32)
    for i, x in enumerate(xs):
        v = REF[name](float(x))
        out[i] = f32(v) if not math.isnan(v) else f32("nan")
    return out


# --------------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------------

def observer_qparams(name, xs, qmin, qmax, symmetric=False):
    """Output (scale, zp) like a min/max observer over f(x) for the given inputs (finite only),
    scale rounded to float32."""
    ys = [REF[name](float(x)) for x in xs]
    ys = [y for y in ys if math.isfinite(y)]
    lo, hi = min(ys + [0.0]), max(ys + [0.0])
    if symmetric:
        scale = as_f32(max(abs(lo), abs(hi)) / ((qmax - qmin) / 2.0))
        zp = 0
    else:
        scale = as_f32((hi - lo) / float(qmax - qmin))
        if scale == 0.0:
            scale = as_f32(1e-3)
        zp = int(round(qmin - lo / scale))
        zp = min(max(zp, qmin), qmax)
    if scale == 0.0:
        scale = as_f32(1e-3)
    return scale, zp


CANONICAL8 = {"tanh": (1.0 / 128, 0), "sigmoid": (1.0 / 256, -128),
              "hardsigmoid": (1.0 / 256, -128)}
POSITIVE_DOMAIN = {"log", "rsqrt"}


def int8_configs(name, rng):
    """About 13 (in, out) pairs per function. in/out = (scale, zp, qmin, qmax, dtype)."""
    r = lambda: as_f32(rng.uniform(1e-3, 0.2))
    if name in POSITIVE_DOMAIN:
        ins = [
            (1.0 / 16, -128), (1.0 / 32, -128), (0.0234375, -128), (as_f32(0.05), -128),
            (1.0 / 128, -128), (r(), -128), (r(), -128), (r(), -120),
            (0.0234375, 5),            # includes x == 0 and x < 0
            (1.0 / 16, 0),             # half the codes negative
            (as_f32(0.05), 127),       # every x <= 0
            (0.1, -128),               # a double scale that is not a float32
        ]
    elif name == "log1p":
        ins = [
            (1.0 / 16, 0), (1.0 / 32, -128), (0.0234375, 5), (as_f32(0.05), 127),
            (1.0 / 128, 0), (r(), rng.randint(-128, 127)), (r(), -128), (r(), 5),
            (as_f32(0.01), 0), (1.0 / 64, -64), (0.1, -128), (1.0 / 256, 127),
        ]
    else:
        ins = [
            (1.0 / 16, 0), (1.0 / 32, -128), (0.0234375, 5), (as_f32(0.05), 127),
            (1.0 / 128, 0), (r(), rng.randint(-128, 127)), (r(), -128), (r(), 5),
            (as_f32(0.05), 0), (1.0 / 256, 127), (0.1, 0),
            (as_f32(0.0078125 * 3), -20),
        ]
    cfgs = []
    for k, (s, zp) in enumerate(ins):
        i = (s, zp, -128, 127, "int8")
        xs = np_dequantize(range(-128, 128), s, zp)
        if name in CANONICAL8 and k % 3 != 2:
            so, zo = CANONICAL8[name]
        else:
            so, zo = observer_qparams(name, xs, -128, 127)
        cfgs.append((i, (so, zo, -128, 127, "int8")))
    # restricted input range: symmetric int8 (qmin -127)
    s = as_f32(6.0 / 127) if name not in POSITIVE_DOMAIN else as_f32(4.0 / 127)
    zp = 0 if name not in POSITIVE_DOMAIN else -127
    xs = np_dequantize(range(-127, 128), s, zp)
    so, zo = CANONICAL8.get(name) or observer_qparams(name, xs, -128, 127)
    cfgs.append(((s, zp, -127, 127, "int8"), (so, zo, -128, 127, "int8")))
    # output range narrower than the type, and a saturating output scale
    s = as_f32(0.0390625) if name not in POSITIVE_DOMAIN else as_f32(0.03125)
    zp = 3 if name not in POSITIVE_DOMAIN else -128
    xs = np_dequantize(range(-128, 128), s, zp)
    so, zo = observer_qparams(name, xs, -128, 127)
    zo = max(-100, min(100, zo))
    cfgs.append(((s, zp, -128, 127, "int8"), (so, zo, -100, 100, "int8")))
    cfgs.append(((s, zp, -128, 127, "int8"), (as_f32(so / 4), zo, -128, 127, "int8")))
    return cfgs


def int16_configs(name, rng):
    cfgs = []
    full = (-32768, 32767)
    sym = (-32767, 32767)

    def add(s_in, zp_in, rng_in, out_mode, rng_out=None, dt_out="int16", scale_div=1.0):
        qmin, qmax = rng_in
        xs = np_dequantize(range(qmin, qmax + 1, 7), s_in, zp_in)
        if dt_out == "int32":
            so, zo = observer_qparams(name, xs, -32768, 32767, symmetric=True)
            so = as_f32(so / scale_div)
            qo = DTYPE_RANGE["int32"]
        else:
            qo = rng_out or full
            if out_mode == "canon":
                so, zo = {"tanh": (2.0 ** -15, 0), "sigmoid": (2.0 ** -15, 0)}[name]
            else:
                so, zo = observer_qparams(name, xs, qo[0], qo[1], symmetric=(out_mode == "sym"))
        cfgs.append(((s_in, zp_in, qmin, qmax, "int16"), (so, zo, qo[0], qo[1], dt_out)))

    canon = "canon" if name in ("tanh", "sigmoid") else "sym"
    add(2.0 ** -12, 0, full, canon)                                    # +-8, full range
    add(as_f32(6.0 / 32767), 0, sym, "sym", rng_out=sym)               # ExecuTorch a16 default
    add(as_f32(rng.uniform(1e-5, 5e-4)), 0, full, "sym")
    add(as_f32(rng.uniform(5e-5, 2e-4)), -1000, full, "asym")
    add(0.0003, 0, full, "sym")                                        # double scale, not float32
    add(as_f32(rng.uniform(1e-4, 3e-4)), 0, sym, "asym", rng_out=(-30000, 30000))
    if name in ("tanh", "exp", "sigmoid"):
        add(as_f32(2.0 ** -12), 0, full, "sym", dt_out="int32", scale_div=64.0)  # rshift > 0
    if name == "tanh":
        add(as_f32(2.5e-4), 0, (-30000, 30000), "sym")                 # unaligned knots, no virtual end
    return cfgs


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------

def hexf(v):
    return float(v).hex()


def header(conv, name, param, ins, out, extra):
    s_in, zp_in, qmin_in, qmax_in, dt_in = ins
    s_out, zp_out, qmin_out, qmax_out, dt_out = out
    return (f"{conv} {name} {param} {dt_in} {hexf(s_in)} {zp_in} {qmin_in} {qmax_in} "
            f"{dt_out} {hexf(s_out)} {zp_out} {qmin_out} {qmax_out} {extra}")


# --------------------------------------------------------------------------------------------
# Alternative float32 function values (analysis only; nothing here goes into the golden tables)
# --------------------------------------------------------------------------------------------

def _fma32(a, b, c):
    """Correctly rounded float32 fma(a, b, c) for float32 a, b, c."""
    a, b, c = float(f32(a)), float(f32(b)), float(f32(c))
    s = a * b                       # exact in double
    hi = s + c
    bb = hi - s
    lo = (s - (hi - bb)) + (c - bb)  # TwoSum: hi + lo == s + c exactly
    r = f32(hi)
    if float(r) != hi and lo != 0.0:
        for n in (np.nextafter(r, f32(np.inf)), np.nextafter(r, f32(-np.inf))):
            if (float(r) + float(n)) / 2 == hi:          # hi is a float32 midpoint: lo decides
                lo_f, hi_f = (r, n) if float(r) < float(n) else (n, r)
                return lo_f if lo < 0 else hi_f
    return r


def torch2_erf(xs):
    """torch >= 2.1 x86 Vectorized<float>::erf (vec256/vec512_float.h): Abramowitz-Stegun 7.1.26
    with FMA, and Sleef expf (u10) for exp(-x*x) (taken from torch.exp, which is Sleef here)."""
    xs = np.asarray(xs, dtype=f32)
    e = torch.exp(torch.from_numpy(-(xs * xs))).numpy()
    out = np.empty(len(xs), dtype=f32)
    for i, x in enumerate(xs):
        ax = abs(x)
        t = f32(f32(1) / _fma32(0.3275911, ax, 1.0))
        r = _fma32(1.061405429, t, -1.453152027)
        r = _fma32(r, t, 1.421413741)
        r = _fma32(r, t, -0.284496736)
        r = _fma32(r, t, 0.254829592)
        v = _fma32(f32(-e[i]) * t, r, 1.0)
        out[i] = -v if np.signbit(x) else v
    return out


def torch2_elu(xs):
    """Newer torch ELU (ATen/native/cpu/Elu.h): expm1(x * input_scale) * alpha*scale for x < 0."""
    t = torch.from_numpy(np.asarray(xs, dtype=f32))
    return torch.where(t >= 0, t * 1.0, torch.expm1(t * 1.0) * 1.0).numpy()


ALTERNATIVES = {"erf": [("torch2_erf", torch2_erf)], "elu": [("torch2_elu", torch2_elu)]}


def shift_model(q, dt_out):
    """rshift and the shifted int16 table, as generate_16_bit_table_values computes them."""
    if dt_out == "int8":
        return list(q), 0
    lo = DTYPE_RANGE[dt_out][0]             # torch integer abs() wraps at the type minimum
    m = max(v if v == lo else abs(v) for v in q)
    rs = max(0, int(math.ceil(float(np.log2(f32(m))))) + 1 - 16)
    return [int(np.int16(np.int64(v) >> rs)) for v in q], rs


INT8_FUNCS = ["tanh", "sigmoid", "exp", "log", "erf", "gelu", "gelu_tanh", "silu", "hardswish",
              "hardsigmoid", "rsqrt", "reciprocal", "elu", "leaky_relu", "expm1", "log1p", "sin",
              "cos", "atan"]
INT16_FUNCS = ["tanh", "sigmoid", "exp", "erf", "gelu", "silu"]


def main():
    check_only = "--check-only" in sys.argv
    outdir = HERE
    if "--outdir" in sys.argv:
        outdir = sys.argv[sys.argv.index("--outdir") + 1]
    rng = random.Random(20260822)
    lines = {"int8": [], "int16": []}
    fragile = []
    stats = {}
    ties = {}

    jobs = [("int8", n, c) for n in INT8_FUNCS for c in int8_configs(n, rng)]
    jobs += [("int16", n, c) for n in INT16_FUNCS for c in int16_configs(n, rng)]
    for kind, name, (ins, out) in jobs:
        param = repr(PARAMS[name]) if name in PARAMS else "-"
        if kind == "int8":
            table, x_t, y_t = et_table_int8(name, ins, out)
            rshift = None
            assert len(table) == 256
            codes = [min(max(c, ins[2]), ins[3]) for c in range(-128, 128)]
        else:
            table, rshift, x_t, y_t = et_table_int16(name, ins, out)
            assert len(table) == 513
            knots = torch2_linspace_int(ins[2], ins[3] + 1, 513)
            codes = [min(max(k, ins[2]), ins[3]) & ~0x7F for k in knots]
        # The numpy model of dequantize must give torch's inputs, and the numpy model of
        # quantize (+ rshift) must give torch's table from torch's function values.
        xs = np_dequantize(codes, ins[0], ins[1])
        if kind == "int16" and ins[4] == "int16" and ins[3] == 32767:
            xs[-1] = f32((32768 - ins[1]) * ins[0])
        assert np.array_equal(xs, x_t.numpy()), (name, ins, "dequantize model")
        y = y_t.numpy()
        q_model, p_model = np_quantize(y, out[0], out[1], out[2], out[3])
        fin = p_model[np.isfinite(p_model)]
        ties[name] = ties.get(name, 0) + int(np.sum(fin - np.floor(fin) == f32(0.5)))
        t_model, r_model = shift_model(q_model, out[4])
        assert t_model == table and (rshift is None or r_model == rshift), \
            (name, ins, out, "quantize model")
        # Alternative function values through the same (verified) pipeline.
        alts = [("cr", ref_f32(name, xs))] + [(k, fn(xs)) for k, fn in ALTERNATIVES.get(name, [])]
        fname = f"executorch_{kind}.txt"
        extra = "-" if rshift is None else f"rshift={rshift}"
        lines[kind].append(header("executorch", name, param, ins, out, extra) + " : " +
                           " ".join(str(v) for v in table))
        for alt, y_alt in alts:
            q_alt, _ = np_quantize(y_alt, out[0], out[1], out[2], out[3])
            t_alt, _ = shift_model(q_alt, out[4])
            diff = [i for i in range(len(table)) if t_alt[i] != table[i]]
            ydiff = int(np.sum((y_alt != y) & ~(np.isnan(y_alt) & np.isnan(y))))
            st = stats.setdefault((kind, name, alt), [0, 0, 0, 0])
            st[0] += 1
            st[1] += ydiff
            st[2] += len(diff)
            st[3] += 1 if diff else 0
            for i in diff:
                fragile.append(f"{fname} {len(lines[kind])} {name} {alt} idx={i} "
                               f"golden={table[i]} alt={t_alt[i]} x={float(xs[i]).hex()} "
                               f"torch_y={float(y[i]).hex()} alt_y={float(y_alt[i]).hex()}")

    cap = torch.__config__.show().split("CPU capability usage:")[1].splitlines()[0].strip()
    print(f"torch {torch.__version__}, numpy {np.__version__}, ATen CPU capability {cap}; "
          f"{len(jobs)} tables; the numpy model of dequantize/quantize agrees with torch on all")
    print("dtype  function     alternative  tables  y!=alt  entries!=alt  tables_with_diff")
    for (kind, name, alt), (nt, yd, ed, td) in stats.items():
        print(f"{kind:5s}  {name:11s}  {alt:11s}  {nt:6d}  {yd:6d}  {ed:12d}  {td:6d}")
    print("exact .5 ties of y * float32(1/scale) (half-to-even decides):",
          {k: v for k, v in ties.items() if v})
    if check_only:
        return
    for kind in ("int8", "int16"):
        with open(os.path.join(outdir, f"executorch_{kind}.txt"), "w") as f:
            f.write("\n".join(lines[kind]) + "\n")
    with open(os.path.join(outdir, "executorch_fragile.txt"), "w") as f:
        f.write("# file line function alternative idx golden alt x torch_y alt_y (README.md)\n")
        f.write("\n".join(fragile) + "\n")


if __name__ == "__main__":
    main()
