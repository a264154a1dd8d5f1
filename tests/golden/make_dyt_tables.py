#!/usr/bin/python3
"""Golden DyT alpha tables as ExecuTorch's FoldDyTAlphaIntoLUTPass builds them.

The pass (pytorch/executorch PR 21953, backends/arm/_passes/fold_dyt_alpha_into_lut_pass.py;
`_generate_dyt_lut` and `_apply_tosa_rescale`) replaces

    tanh(RESCALE_i8(MUL(RESCALE_i32(act), RESCALE_i32(alpha))))

by one int8 TABLE indexed by the activation code. For every case this script replays that
construction with the same torch tensor operations and dtypes (nothing is imported from
ExecuTorch), and independently with Python integers and a numpy float32 model, and asserts that
all of them agree:

    R(v; scale, izp, ozp) = clamp(((v - izp) * m + (1 << (sh - 1))) >> sh + ozp, type min, max)
        (m, sh) = _compute_multiplier_and_shift(scale)      # op_tosa_rescale.py, 32-bit
    for c in clamp(-128..127, act.qmin, act.qmax):
        p = wrap_int32(R_act(c) * R_alpha(alpha_code))      # TOSA MUL, shift 0
        q = clamp(R_out(p), tanh_in.qmin, tanh_in.qmax)
        t = quantize_tanh_out(torch.tanh(dequantize_tanh_in(q)))

It also writes, per case, the int8 tanh TABLE that ExecuTorch's InsertTableOpsPass builds for the
tanh node itself (with the tanh's input/output qparams), and checks that every DyT entry is that
table read at R_out(p): the fold is "replay the integer path, then look the tanh table up".

int32 scales (ExecuTorch InsertRescaleInt32Pass, backends/arm/_passes/insert_rescales_pass.py):
for aten.mul.Tensor the int32 operand scale equals the int8 operand scale, so both input
RESCALEs have scale int8_scale / int32_scale = 1.0 (zp: int8 zp -> 0), and the MUL output has
int32 scale math.prod(operand int32 scales), rescaled to the tanh input by
int32_scale / tanh_in.scale (zp 0 -> tanh_in.zp). The "et_*" cases use exactly that. The other
cases choose smaller int32 scales (act_scale / 2^k, act_scale / d, ...), which ExecuTorch's
guards accept as long as the RESCALE scale equals int8_scale / int32_scale; they exercise
non-trivial input RESCALEs, int32 MUL wrap-around, derivation ties and shift > 62.

Each case also says what a fail-closed fold must do (qfold::fold_dyt_alpha): `expect table`, or
`expect reject <reason> <entry>` at the first activation code (ascending) where a RESCALE's TOSA
REQUIRE on its input value is broken (ExecuTorch does not check it; TOSA leaves the result
unpredictable) or where R_out(p) leaves the tanh table's declared input range [qmin, qmax]
(ExecuTorch clamps it into the range; those tanh table entries are not defined by the tanh's
quantization).

Writes dyt_alpha_tables.txt next to this script. Format: README.md in this directory.
Usage: /usr/bin/python3 tests/golden/make_dyt_tables.py [--check-only] [--outdir DIR]
Needs Debian's python3-torch (1.13.1) and python3-numpy.
"""

import math
import os
import random
import sys
from fractions import Fraction

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
f32 = np.float32
torch.set_num_threads(1)

INT8 = (-128, 127)
INT32 = (-(2 ** 31), 2 ** 31 - 1)


def as_f32(v):
    """The float32 value nearest to v, as a Python float."""
    return float(f32(v))


# --------------------------------------------------------------------------------------------
# Multiplier and shift: ExecuTorch op_tosa_rescale.py::_compute_multiplier_and_shift (32-bit)
# --------------------------------------------------------------------------------------------

def compute_multiplier_and_shift(scale):
    offset = 31
    mantissa, exponent = math.frexp(scale)
    m = round(mantissa * (1 << offset))          # Python round: half to even; the product is exact
    assert m <= 1 << offset
    if m == 1 << offset:
        m //= 2
        exponent += 1
    shift = offset - exponent
    assert m <= (1 << offset) - 1
    if shift > 62:
        m >>= min(31, shift - 62)
        shift = 62
    assert m >= 0 and 2 <= shift <= 62, (scale, m, shift)
    return m, shift


def multiplier_and_shift_exact(scale, ties_even=True):
    """Second derivation with exact rationals (no frexp): m/2^sh = scale, m in [2^30, 2^31)."""
    s = Fraction(scale)
    assert s > 0
    e = 0
    while s * Fraction(2) ** e < 2 ** 30:
        e += 1
    while s * Fraction(2) ** e >= 2 ** 31:
        e -= 1
    v = s * Fraction(2) ** e                      # in [2^30, 2^31)
    fl = v.numerator // v.denominator
    rest = v - fl
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and (not ties_even or fl % 2 == 1)):
        fl += 1
    if fl == 2 ** 31:
        fl //= 2
        e -= 1
    if e > 62:
        fl >>= min(31, e - 62)
        e = 62
    return fl, e


def rescale_int(v, scale, izp, ozp, lo, hi):
    """TOSA RESCALE SINGLE_ROUND with Python integers; also returns whether apply_scale_32's
    REQUIRE on its input value (-(2^(sh-1)) <= v - izp < 2^(sh-1)) holds."""
    m, sh = compute_multiplier_and_shift(scale)
    x = v - izp
    ok = -(1 << (sh - 1)) <= x < (1 << (sh - 1))
    r = ((x * m + (1 << (sh - 1))) >> sh) + ozp
    return min(max(r, lo), hi), ok


def wrap_int32(v):
    return ((v + 2 ** 31) % 2 ** 32) - 2 ** 31


# --------------------------------------------------------------------------------------------
# The torch side: ExecuTorch's operations, order and dtypes
# --------------------------------------------------------------------------------------------

def dequantize(q, scale, zp):
    # quantized_decomposed.dequantize_per_tensor: (input.to(float32) - zero_point) * scale
    return (q.to(torch.float32) - zp) * scale


def quantize(x, scale, zp, qmin, qmax, dtype=torch.int8):
    # quantized_decomposed.quantize_per_tensor: clamp(round(x * (1.0 / scale)) + zp, qmin, qmax)
    assert x.dtype == torch.float32
    inv_scale = 1.0 / scale
    return torch.clamp(torch.round(x * inv_scale) + zp, qmin, qmax).to(dtype)


def apply_tosa_rescale(values, scale, izp, ozp, dtype):
    # _apply_tosa_rescale
    m, sh = compute_multiplier_and_shift(scale)
    rounding = 1 << (sh - 1)
    centered = values.to(torch.int64) - izp
    scaled = (centered * m + rounding) >> sh
    shifted = scaled + ozp
    info = torch.iinfo(dtype)
    return shifted.clamp(info.min, info.max).to(dtype)


def et_tanh_table(tin, tout):
    """InsertTableOpsPass generate_8bit_table_values for aten.tanh (int8 in, int8 out)."""
    codes = torch.arange(-128, 128, dtype=torch.int8).clamp(tin["qmin"], tin["qmax"])
    x = dequantize(codes, tin["scale"], tin["zp"])
    y = torch.tanh(x)
    t = quantize(y, tout["scale"], tout["zp"], tout["qmin"], tout["qmax"])
    return [int(v) for v in t.tolist()], x, y


def et_dyt_table(c):
    """_generate_dyt_lut."""
    act, tin, tout = c["act"], c["tin"], c["tout"]
    domain = torch.arange(-128, 128, dtype=torch.int8).clamp(act["qmin"], act["qmax"])
    a32 = apply_tosa_rescale(domain, c["ra"], act["zp"], 0, torch.int32)
    alpha_code = torch.tensor([c["alpha_code"]], dtype=torch.int8)
    b32 = apply_tosa_rescale(alpha_code, c["rb"], c["alpha_zp"], 0, torch.int32)
    product = (a32.to(torch.int64) * b32.to(torch.int64)).to(torch.int32)
    mul_codes = apply_tosa_rescale(product, c["ro"], 0, tin["zp"], torch.int8)
    mul_codes = mul_codes.clamp(tin["qmin"], tin["qmax"])
    x = dequantize(mul_codes, tin["scale"], tin["zp"])
    y = torch.tanh(x)
    t = quantize(y, tout["scale"], tout["zp"], tout["qmin"], tout["qmax"])
    return ([int(v) for v in t.reshape(-1).tolist()], [int(v) for v in product.tolist()],
            [int(v) for v in mul_codes.tolist()], x, y)


# --------------------------------------------------------------------------------------------
# Independent models: Python integers for the integer path, numpy float32 for the float path
# --------------------------------------------------------------------------------------------

def np_dequantize(codes, scale, zp):
    return (np.asarray(codes, dtype=np.int64) - zp).astype(f32) * f32(scale)


def np_quantize(y, scale, zp, qmin, qmax):
    p = np.asarray(y, dtype=f32) * f32(1.0 / scale)
    r = np.rint(p) + f32(zp)
    return [int(v) for v in np.minimum(np.maximum(r, f32(qmin)), f32(qmax))]


def int_model(c):
    """Per table entry: (p, R_out(p) before the tanh-range clamp), and the fold's expectation."""
    act, tin = c["act"], c["tin"]
    b32, b_ok = rescale_int(c["alpha_code"], c["rb"], c["alpha_zp"], 0, *INT32)
    expect = None if b_ok else ("unsupported_rescale", None)
    ps, qs = [], []
    for code in range(-128, 128):
        cc = min(max(code, act["qmin"]), act["qmax"])
        a32, a_ok = rescale_int(cc, c["ra"], act["zp"], 0, *INT32)
        p = wrap_int32(a32 * b32)
        q, o_ok = rescale_int(p, c["ro"], 0, tin["zp"], *INT8)
        ps.append(p)
        qs.append(q)
        if expect is None and code == cc:       # the fold visits each code in [qmin, qmax] once
            entry = code + 128
            if not a_ok or not o_ok:
                expect = ("unsupported_rescale", entry)
            elif not tin["qmin"] <= q <= tin["qmax"]:
                expect = ("out_of_range", entry)
    return b32, ps, qs, expect


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

def qp(scale, zp, qmin=-128, qmax=127):
    return {"scale": scale, "zp": zp, "qmin": qmin, "qmax": qmax}


def alpha_qparams(alpha, mode):
    """int8 qparams of the scalar alpha, as a min/max observer would give them (float32 scale).
    asym: range [min(0, a), max(0, a)] over 255 steps; sym: |a| / 127, zp 0, range -127..127;
    (scale, zp): explicit."""
    if mode == "asym":
        return as_f32(abs(alpha) / 255.0), (-128 if alpha > 0 else 127), -128, 127
    if mode == "sym":
        return as_f32(abs(alpha) / 127.0), 0, -127, 127
    s, z = mode
    return as_f32(s), z, -128, 127


def quantize_alpha(alpha, scale, zp, qmin, qmax):
    """quantize_per_tensor of the float32 alpha parameter (ExecuTorch folds it to a constant)."""
    t = quantize(torch.tensor([alpha], dtype=torch.float32), scale, zp, qmin, qmax)
    return int(t.item())


def tanh_in_observer(act, alpha, factor=1.0, qmin=-128, qmax=127, symmetric=False):
    """The MUL output's int8 qparams as a min/max observer over alpha * x (x = the activation's
    real values) would give them, the scale multiplied by `factor` (< 1: the tanh input
    saturates; > 1: it uses fewer codes)."""
    xs = [float(v) for v in np_dequantize(range(act["qmin"], act["qmax"] + 1),
                                          act["scale"], act["zp"])]
    ys = [alpha * x for x in xs] + [0.0]
    lo, hi = min(ys), max(ys)
    if symmetric:
        scale = as_f32(max(-lo, hi) / ((qmax - qmin) / 2.0) * factor)
        return qp(scale, 0, qmin, qmax)
    scale = as_f32((hi - lo) / float(qmax - qmin) * factor)
    # qmin - lo / scale, written so that the range stays centred when factor != 1
    zp = min(max(int(round((qmin + qmax) / 2.0 - (lo + hi) / 2.0 / scale)), qmin), qmax)
    return qp(scale, zp, qmin, qmax)


TOUT = qp(1.0 / 128, 0)


def make_case(name, act, alpha, amode, tin=None, tout=TOUT, i32=("et",), note="-"):
    alpha = as_f32(alpha)
    a_s, a_zp, a_qmin, a_qmax = alpha_qparams(alpha, amode)
    code = quantize_alpha(alpha, a_s, a_zp, a_qmin, a_qmax)
    if tin is None:
        tin = tanh_in_observer(act, alpha)
    elif callable(tin):
        tin = tin(act, alpha)
    kind = i32[0]
    if kind == "et":                     # InsertRescaleInt32Pass for aten.mul.Tensor
        s32a, s32b = act["scale"], a_s
    elif kind == "pow2":                 # int32 scale = int8 scale / 2^k
        s32a, s32b = act["scale"] / 2.0 ** i32[1], a_s / 2.0 ** i32[2]
    elif kind == "div":                  # int32 scale = int8 scale / d (a double)
        s32a, s32b = act["scale"] / i32[1], a_s / i32[2]
    elif kind == "ratio":                # int32 scales chosen so the RESCALE scales are exactly
        s32a = exact_divisor(act["scale"], i32[1])    # i32[1], i32[2]
        s32b = exact_divisor(a_s, i32[2])
    else:
        raise ValueError(kind)
    ra = act["scale"] / s32a             # _rescale_inputs: [old scale / new scale]
    rb = a_s / s32b
    s_mul = math.prod((s32a, s32b))      # _get_output_qparams for mul
    ro = s_mul / tin["scale"]            # _rescale_outputs: [old scale / new scale]
    if kind == "ratio":
        assert ra == i32[1] and rb == i32[2], (name, ra, rb)
    return {"name": name, "act": act, "alpha": alpha, "alpha_scale": a_s, "alpha_zp": a_zp,
            "alpha_qmin": a_qmin, "alpha_qmax": a_qmax, "alpha_code": code,
            "s32a": s32a, "s32b": s32b, "ra": ra, "rb": rb, "ro": ro, "tin": tin, "tout": tout,
            "i32": kind, "note": note}


def exact_divisor(num, target):
    """A double d with num / d == target exactly (searched around num / target)."""
    d = num / target
    for _ in range(64):
        r = num / d
        if r == target:
            return d
        d = np.nextafter(d, np.inf if r > target else -np.inf).item()
    raise AssertionError((num, target))


def cases():
    rng = random.Random(20260823)
    C = []
    add = C.append
    # --- ExecuTorch's own int32 scales (both input RESCALEs 1.0) ---------------------------
    add(make_case("et_a0p5", qp(1.0 / 32, 0), 0.5, "asym"))
    add(make_case("et_a1_zp5", qp(0.0234375, 5), 1.0, "asym"))
    add(make_case("et_a0p01", qp(as_f32(0.05), 0), 0.01, "asym"))
    add(make_case("et_a0p02_sym", qp(as_f32(0.0173), -3), 0.02, "sym"))
    add(make_case("et_a0p1_zpm128", qp(1.0 / 16, -128), 0.1, "asym", note="x>=0"))
    add(make_case("et_a0p25_zp127", qp(as_f32(0.05), 127), 0.25, "asym", note="x<=0"))
    add(make_case("et_a0p8_act127", qp(as_f32(6.0 / 127), 0, -127, 127), 0.8, "sym",
                  note="activation_qmin_-127"))
    add(make_case("et_a1p5_explicit", qp(as_f32(0.1), -20), 1.5, (0.02, 0)))
    add(make_case("et_a2_zp60", qp(1.0 / 64, 60), 2.0, "asym"))
    add(make_case("et_a3p7", qp(as_f32(0.0371), 17), 3.7, (0.0625, -40)))
    add(make_case("et_a5_sat", qp(1.0 / 128, 0), 5.0, "asym",
                  tin=lambda a, al: tanh_in_observer(a, al, 0.5), note="tanh_input_saturates"))
    add(make_case("et_a10", qp(as_f32(0.04), -7), 10.0, "asym"))
    add(make_case("et_a10_sat", qp(as_f32(0.04), -7), 10.0, "sym", tin=qp(as_f32(0.05), 0),
                  note="tanh_input_saturates_both_ends"))
    add(make_case("et_neg_a0p01", qp(as_f32(0.05), 0), -0.01, "asym"))
    add(make_case("et_neg_a0p3", qp(1.0 / 32, 12), -0.3, "sym"))
    add(make_case("et_neg_a1", qp(0.0234375, -60), -1.0, (1.0 / 64, -10)))
    add(make_case("et_neg_a2p5_act127", qp(as_f32(4.0 / 127), 0, -127, 127), -2.5, "asym",
                  note="activation_qmin_-127"))
    add(make_case("et_neg_a10_sat", qp(as_f32(0.03), 33), -10.0, "asym",
                  tin=lambda a, al: tanh_in_observer(a, al, 0.25), note="tanh_input_saturates"))
    add(make_case("et_tout_sym127", qp(1.0 / 32, 0), 0.7, "asym",
                  tout=qp(as_f32(1.0 / 127), 0, -127, 127), note="tanh_output_qmin_-127"))
    add(make_case("et_tout_narrow", qp(as_f32(0.045), -2), 1.2, "sym",
                  tout=qp(as_f32(2.0 / 255), 5, -100, 100), note="tanh_output_-100..100"))
    add(make_case("et_tin_wide", qp(as_f32(0.05), 0), 0.6, "asym",
                  tin=lambda a, al: tanh_in_observer(a, al, 4.0), note="tanh_input_uses_1/4"))
    add(make_case("et_a0p05_tinzp", qp(1.0 / 8, -128), 0.05, "asym", note="x>=0,tanh_in_zp_-128"))
    # --- tanh input range narrower than int8 ----------------------------------------------
    add(make_case("tin127_inside", qp(1.0 / 32, 0), 0.9, "sym",
                  tin=lambda a, al: tanh_in_observer(a, al, 1.0, -127, 127, symmetric=True),
                  note="tanh_input_qmin_-127_not_reached"))
    add(make_case("tin127_reached", qp(1.0 / 32, 0), 0.9, "sym",
                  tin=lambda a, al: tanh_in_observer(a, al, 0.8, -127, 127, symmetric=True),
                  note="tanh_input_qmin_-127_reached"))
    add(make_case("tin100_reached", qp(as_f32(0.05), 10), 1.3, "asym",
                  tin=lambda a, al: tanh_in_observer(a, al, 0.8, -100, 100),
                  note="tanh_input_-100..100_reached"))
    add(make_case("tin100_inside", qp(as_f32(0.05), 10), 1.3, "asym",
                  tin=lambda a, al: tanh_in_observer(a, al, 1.4, -100, 100),
                  note="tanh_input_-100..100_not_reached"))
    # --- other int32 scales: non-trivial input RESCALEs, wrap-around, ties, shift > 62 ------
    add(make_case("pow2_a8_b4", qp(1.0 / 32, 3), 0.75, "asym", i32=("pow2", 8, 4)))
    add(make_case("pow2_wrap_a12_b8", qp(as_f32(0.05), -5), 2.0, "asym", i32=("pow2", 12, 8),
                  note="int32_mul_wraps"))
    # tanh input scale 2^26 int32 steps: the wrapped products spread over the int8 codes
    add(make_case("pow2_wrap_neg_a16_b6", qp(1.0 / 32, 20), -1.7, (0.0125, 9),
                  i32=("pow2", 16, 6),
                  tin=lambda a, al: qp(as_f32(a["scale"] * 0.0125 * 2.0 ** 4), 3),
                  note="int32_mul_wraps"))
    add(make_case("div_1000_37", qp(as_f32(0.02), 0), 0.4, "sym", i32=("div", 1000.0, 37.0)))
    add(make_case("div_wrap_3000_777", qp(1.0 / 16, -1), 3.0, "asym",
                  i32=("div", 3000.0, 777.0), note="int32_mul_wraps"))
    add(make_case("ratio_half_quarter", qp(as_f32(0.03), 7), 1.1, "asym",
                  i32=("ratio", 0.5, 0.25), note="input_rescales_round_half_up"))
    add(make_case("ratio_third", qp(as_f32(0.03), -9), -0.45, "asym",
                  i32=("ratio", 1.0 / 3.0, 3.0)))
    # 1 + 2^-31: mantissa * 2^31 = 2^30 + 0.5, half to even gives 2^30 (MLIR: 2^30 + 1).
    add(make_case("tie_act", qp(1.0 / 32, 0), 1.0, "asym", i32=("ratio", 1.0 + 2.0 ** -31, 1.0),
                  note="derivation_tie"))
    # 1 + 5 * 2^-31: 2^30 + 2.5, half to even gives 2^30 + 2 (MLIR: 2^30 + 3).
    add(make_case("tie_alpha", qp(1.0 / 32, 0), -1.0, "asym",
                  i32=("ratio", 1.0, 1.0 + 5 * 2.0 ** -31), note="derivation_tie"))
    add(make_case("tiny_out_shift62", qp(as_f32(0.05), 0), 1.0, "asym", i32=("pow2", 20, 12),
                  note="output_scale_below_2^-31,int32_mul_wraps"))
    add(make_case("out_scale_0p7", qp(as_f32(0.05), 0), 1.0, "asym",
                  tin=lambda a, al: qp(as_f32(a["scale"] * (1.0 / 255) / 0.7), 0),
                  note="output_shift_31"))
    add(make_case("out_scale_3", qp(as_f32(0.05), 0), 1.0, "asym",
                  tin=lambda a, al: qp(as_f32(a["scale"] * (1.0 / 255) / 3.0), -4),
                  note="output_shift_29"))
    # --- TOSA REQUIREs broken (ExecuTorch does not check; a fail-closed fold refuses) -------
    add(make_case("require_act_2p22", qp(1.0 / 32, -100), 0.5, "asym", i32=("pow2", 22, 0),
                  note="activation_rescale_shift_8_needs_|c-zp|<128"))
    add(make_case("require_out", qp(1.0 / 32, 0), 1.0, "asym", i32=("pow2", 12, 6),
                  tin=lambda a, al: qp(as_f32(a["scale"] * (1.0 / 255) / 2.0 ** 18 / 0.75), 0),
                  note="output_rescale_shift_31_needs_|p|<2^30"))
    # --- seeded random ExecuTorch-style cases ---------------------------------------------
    for k in range(4):
        act = qp(as_f32(rng.uniform(0.005, 0.1)), rng.randint(-128, 127))
        if k == 3:
            act = qp(act["scale"], rng.randint(-60, 60), -127, 127)
        mag = math.exp(rng.uniform(math.log(0.01), math.log(10.0)))
        alpha = mag if rng.random() < 0.5 else -mag
        explicit = (as_f32(mag / rng.uniform(30, 120)), rng.randint(-20, 20))
        amode = rng.choice(["asym", "sym", explicit])
        factor = rng.uniform(0.5, 2.0)
        add(make_case(f"random_{k}", act, alpha, amode,
                      tin=lambda a, al, f=factor: tanh_in_observer(a, al, f)))
    return C


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def hexf(v):
    return float(v).hex()


def run_length(values):
    """Tables as tokens `v` or `v*n` (n >= 2 equal entries in a row): halves the file."""
    tokens, i = [], 0
    while i < len(values):
        j = i
        while j < len(values) and values[j] == values[i]:
            j += 1
        tokens.append(str(values[i]) if j - i == 1 else f"{values[i]}*{j - i}")
        i = j
    decoded = []
    for t in tokens:
        v, _, n = t.partition("*")
        decoded += [int(v)] * (int(n) if n else 1)
    assert decoded == values
    return " ".join(tokens)


def cr_tanh(xs):
    """float32 tanh rounded once from double math.tanh (correctly rounded but for cases within
    a double ulp of a float32 midpoint)."""
    return np.array([f32(math.tanh(float(x))) for x in xs], dtype=f32)


def main():
    check_only = "--check-only" in sys.argv
    outdir = HERE
    if "--outdir" in sys.argv:
        outdir = sys.argv[sys.argv.index("--outdir") + 1]
    out = []
    summary = []
    n_fragile = 0
    n_ties = 0
    for c in cases():
        act, tin, tout = c["act"], c["tin"], c["tout"]
        derived = {}
        for key in ("ra", "rb", "ro"):
            m, sh = compute_multiplier_and_shift(c[key])
            assert (m, sh) == multiplier_and_shift_exact(c[key]), (c["name"], key)
            if (m, sh) != multiplier_and_shift_exact(c[key], ties_even=False):
                n_ties += 1
            derived[key] = (m, sh)
        tanh_table, tx, ty = et_tanh_table(tin, tout)
        dyt, product, mul_codes, dx, dy = et_dyt_table(c)
        b32, ps, qs, expect = int_model(c)
        # Integer path: torch (ExecuTorch's code) == Python integers.
        assert ps == product, c["name"]
        assert [min(max(q, tin["qmin"]), tin["qmax"]) for q in qs] == mul_codes, c["name"]
        # Float path: numpy model of dequantize / quantize == torch, given torch's tanh values.
        assert np.array_equal(np_dequantize([min(max(v, tin["qmin"]), tin["qmax"])
                                             for v in range(-128, 128)],
                                            tin["scale"], tin["zp"]), tx.numpy())
        assert np_quantize(ty.numpy(), tout["scale"], tout["zp"], tout["qmin"],
                           tout["qmax"]) == tanh_table
        assert np.array_equal(np_dequantize(mul_codes, tin["scale"], tin["zp"]), dx.numpy())
        assert np_quantize(dy.numpy(), tout["scale"], tout["zp"], tout["qmin"],
                           tout["qmax"]) == dyt
        # The DyT table is the tanh table read at the (clamped) rescaled code.
        assert dyt == [tanh_table[q + 128] for q in mul_codes], c["name"]
        # Entries that move when tanh is correctly rounded (qfold's fn::tanh).
        alt_tanh = np_quantize(cr_tanh(tx.numpy()), tout["scale"], tout["zp"], tout["qmin"],
                               tout["qmax"])
        alt_dyt = np_quantize(cr_tanh(dx.numpy()), tout["scale"], tout["zp"], tout["qmin"],
                              tout["qmax"])
        fragile = [("tanh", i, tanh_table[i], alt_tanh[i], tx[i].item(), ty[i].item())
                   for i in range(256) if alt_tanh[i] != tanh_table[i]]
        fragile += [("dyt", i, dyt[i], alt_dyt[i], dx[i].item(), dy[i].item())
                    for i in range(256) if alt_dyt[i] != dyt[i]]
        n_fragile += len(fragile)
        wrapped = sum(1 for code in range(max(-128, act["qmin"]), act["qmax"] + 1)
                      if ps[code + 128] != (rescale_int(code, c["ra"], act["zp"], 0, *INT32)[0]
                                            * b32))
        lo_q, hi_q = min(qs), max(qs)

        lines = [f"case {c['name']}",
                 f"note {c['note']}",
                 f"activation {hexf(act['scale'])} {act['zp']} {act['qmin']} {act['qmax']}",
                 f"alpha {hexf(c['alpha'])} {hexf(c['alpha_scale'])} {c['alpha_zp']} "
                 f"{c['alpha_qmin']} {c['alpha_qmax']} {c['alpha_code']}",
                 f"int32_scales {c['i32']} {hexf(c['s32a'])} {hexf(c['s32b'])}"]
        for key, label, izp, ozp in (("ra", "activation_rescale", act["zp"], 0),
                                     ("rb", "alpha_rescale", c["alpha_zp"], 0),
                                     ("ro", "output_rescale", 0, tin["zp"])):
            m, sh = derived[key]
            lines.append(f"{label} {hexf(c[key])} {izp} {ozp} {m} {sh}")
        lines += [f"tanh_input {hexf(tin['scale'])} {tin['zp']} {tin['qmin']} {tin['qmax']}",
                  f"tanh_output {hexf(tout['scale'])} {tout['zp']} {tout['qmin']} {tout['qmax']}",
                  f"stats alpha_i32={b32} wrapped={wrapped} rescaled_min={lo_q} "
                  f"rescaled_max={hi_q}",
                  "expect table" if expect is None else
                  f"expect reject {expect[0]} {'-' if expect[1] is None else expect[1]}"]
        for table, i, g, a, x, y in fragile:
            lines.append(f"fragile {table} {i} {g} {a} {hexf(x)} {hexf(y)}")
        lines.append("tanh_table " + run_length(tanh_table))
        lines.append("dyt_table " + run_length(dyt))
        lines.append("end")
        out.append("\n".join(lines))
        summary.append(f"{c['name']:22s} alpha={c['alpha']:+.4g} code={c['alpha_code']:4d} "
                       f"ra={derived['ra']} rb={derived['rb']} ro={derived['ro']} "
                       f"q=[{lo_q},{hi_q}] wrapped={wrapped} fragile={len(fragile)} "
                       f"expect={expect or 'table'}")

    cap = torch.__config__.show().split("CPU capability usage:")[1].splitlines()[0].strip()
    print(f"torch {torch.__version__}, numpy {np.__version__}, ATen CPU capability {cap}; "
          f"{len(out)} cases; torch == integer/numpy models on all; {n_fragile} fragile entries; "
          f"{n_ties} derivations where half-even differs from half-away")
    print("\n".join(summary))
    if check_only:
        return
    head = [
        "# DyT alpha tables: ExecuTorch FoldDyTAlphaIntoLUTPass replayed in torch 1.13.1",
        "# (tests/golden/make_dyt_tables.py; format: README.md). One block per case, case .. end.",
        "# Scales: float.hex() of the exact double. RESCALE lines: <scale> <input_zp> <output_zp>",
        "# <multiplier> <shift> (ExecuTorch _compute_multiplier_and_shift, 32-bit, half to even).",
        "# Tables: 256 int8 entries, entry i for code i - 128; `v*n` is n entries equal to v.",
    ]
    with open(os.path.join(outdir, "dyt_alpha_tables.txt"), "w") as f:
        f.write("\n".join(head) + "\n" + "\n".join(out) + "\n")


if __name__ == "__main__":
    main()
