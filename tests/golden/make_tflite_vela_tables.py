#!/usr/bin/python3
"""Golden lookup tables as TFLite (LUTPopulate) and Arm Vela (Python) generate them.

Independent of torch: numpy float32 arithmetic for TFLite, Python doubles (`math`) for Vela.
The transcendental functions TFLite calls are the C library's float functions (std::tanh(float)
is tanhf, std::exp(float) is expf, std::erfc(float) is erfcf); they are called here from the
system libm through ctypes, so the tables are what TFLite computes on Linux/glibc x86-64.
Alternatives (numpy's own float32 ufuncs, correctly rounded float32 functions) are computed too
and every entry where they would change a table is listed in tflite_fragile.txt.

Sources (formulas restated, no code copied; see README.md):
  TFLite   tensorflow/tflite-micro @ 90b983c2b3 tensorflow/lite/kernels/internal/common.h
           (detail::LUTPopulateInt8, detail::LUTPopulateInt16<float>), cppmath.h (TfLiteRound)
           tensorflow/tensorflow tensorflow/lite/kernels/activations.cc (tanh/logistic lambdas),
           exp.cc (exp lambda), internal/reference/gelu.h (GeluTransform, GeluTransformApproximate)
  Vela     nxp-imx/ethos-u-vela @ a6f65663db ethosu/vela/tflite_graph_optimiser.py
           (convert_to_lut8, convert_ops_to_lut), ethosu/vela/lut.py (create_lut_8bit_op),
           ethosu/vela/numeric_util.py (round_away_zero, clamp_sigmoid)

Writes tflite_int8.txt, tflite_int16.txt, vela_int8.txt and tflite_fragile.txt next to this file.
Usage: /usr/bin/python3 tests/golden/make_tflite_vela_tables.py [--check-only] [--outdir DIR]
"""

import ctypes
import ctypes.util
import math
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
f32 = np.float32

# --------------------------------------------------------------------------------------------
# float32 primitives
# --------------------------------------------------------------------------------------------

_libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _cfun(name, t):
    fn = getattr(_libm, name)
    fn.restype = t
    fn.argtypes = [t]
    return fn


_tanhf = _cfun("tanhf", ctypes.c_float)
_expf = _cfun("expf", ctypes.c_float)
_erfcf = _cfun("erfcf", ctypes.c_float)
_erf_d = _cfun("erf", ctypes.c_double)


def libm_f(fn):
    return lambda x: f32(fn(float(x)))


def cr_f(fn):
    """Correctly rounded float32 function from a double-precision evaluation."""
    return lambda x: f32(fn(float(x)))


def np_f(fn):
    return lambda x: fn(np.array([x], dtype=f32))[0]


FLOAT_LIBS = {
    "libm": {"tanh": libm_f(_tanhf), "exp": libm_f(_expf), "erfc": libm_f(_erfcf)},
    "numpy": {"tanh": np_f(np.tanh), "exp": np_f(np.exp), "erfc": None},
    "cr": {"tanh": cr_f(math.tanh), "exp": cr_f(lambda v: math.exp(v) if v < 709 else math.inf),
           "erfc": cr_f(math.erfc)},
}


def round_half_away_f32(v):
    """TfLiteRound on a float32 (std::round): exact, no x + 0.5 trick."""
    v = f32(v)
    if not np.isfinite(v):
        return v
    t = f32(np.trunc(v))
    frac = f32(v - t)                      # exact for float32
    if frac >= f32(0.5):
        t = f32(t + f32(1))
    elif frac <= f32(-0.5):
        t = f32(t - f32(1))
    return t


def cvt_i32(v):
    """static_cast<int32_t>(float) as x86-64 (cvttss2si) does it: truncation; NaN and
    out-of-range give INT32_MIN. The configurations below never rely on the out-of-range case;
    the script asserts that."""
    if not np.isfinite(v) or v >= 2.0 ** 31 or v < -(2.0 ** 31):
        raise OverflowError(f"float {v!r} does not fit int32: C++ behaviour is undefined")
    return int(np.trunc(v))


# TFLite transforms, each written with the float operations of the C++ lambda. `lib` supplies the
# float32 elementary functions.
M_SQRT1_2 = 0.70710678118654752440
M_2_SQRTPI = 1.12837916709551257390


def tfl_transform(name, lib):
    L = FLOAT_LIBS[lib]
    if name == "tanh":                                   # std::tanh(value)
        return L["tanh"]
    if name == "exp":                                    # std::exp(value)
        return L["exp"]
    if name == "sigmoid":                                # 1.0f / (1.0f + std::exp(-value))
        e = L["exp"]
        return lambda x: f32(f32(1) / f32(f32(1) + e(f32(-x))))
    if name == "gelu":
        # 0.5f * in * std::erfc(in * static_cast<float>(-M_SQRT1_2))
        if L["erfc"] is None:
            return None
        c = f32(-M_SQRT1_2)
        return lambda x: f32(f32(f32(0.5) * x) * L["erfc"](f32(x * c)))
    if name == "gelu_tanh":
        # 0.5f * in * (1.f + std::tanh(kSqrt2dPi * (in + 0.044715f * in * in * in)))
        k = f32(M_2_SQRTPI * M_SQRT1_2)
        th = L["tanh"]

        def g(x):
            cube = f32(f32(f32(f32(0.044715) * x) * x) * x)
            inner = f32(k * f32(x + cube))
            return f32(f32(f32(0.5) * x) * f32(f32(1) + th(inner)))
        return g
    if name == "gelu_erf_legacy":
        # Older TFLite: 0.5f * in * (1.f + std::erf(in * M_SQRT1_2)): M_SQRT1_2 is a double, so
        # erf and the rest run in double and the result is rounded to float on return.
        if lib != "libm":
            return None
        return lambda x: f32((0.5 * float(x)) * (1.0 + _erf_d(float(x) * M_SQRT1_2)))
    raise KeyError(name)


# --------------------------------------------------------------------------------------------
# TFLite LUTPopulate
# --------------------------------------------------------------------------------------------

TIES = {}


def tflite_int8(name, lib, s_in, zp_in, s_out, zp_out, dtype):
    """detail::LUTPopulateInt8. Returns values in CODE order (entry 0 = type minimum)."""
    fn = tfl_transform(name, lib)
    if fn is None:
        return None
    lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
    inverse_scale = f32(f32(1) / f32(s_out))
    out = []
    for val in range(lo, hi + 1):
        dequantized = f32(f32(s_in) * f32(val - zp_in))
        transformed = fn(dequantized)
        p = f32(transformed * inverse_scale)
        if lib == "libm" and np.isfinite(p) and p - np.floor(p) == f32(0.5):
            TIES[name] = TIES.get(name, 0) + 1
        rescaled = round_half_away_f32(p)
        quantized = cvt_i32(f32(rescaled + f32(zp_out)))
        out.append(max(min(hi, quantized), lo))
    return out


def tflite_int16(name, lib, s_in, zp_in, s_out, zp_out):
    """detail::LUTPopulateInt16<float>: 513 entries."""
    fn = tfl_transform(name, lib)
    if fn is None:
        return None
    s_in, s_out = f32(s_in), f32(s_out)
    input_min = f32(s_in * f32(-32768 - zp_in))
    input_max = f32(s_in * f32(32767 - zp_in))
    output_min = f32(s_out * f32(-32768 - zp_out))
    output_max = f32(s_out * f32(32767 - zp_out))
    step = f32(f32(input_max - input_min) / f32(512))
    half_step = f32(step / f32(2))
    inv = f32(f32(65536) / f32(output_max - output_min))
    tmin, tmax = f32(-32768), f32(32767)
    R = round_half_away_f32
    lut = []
    for i in range(512):
        x0 = f32(input_min + f32(f32(i) * step))
        xm = f32(f32(input_min + f32(f32(i) * step)) + half_step)
        x1 = f32(input_min + f32(f32(i + 1) * step))
        val, val_mid, val_next = fn(x0), fn(xm), fn(x1)
        sample = R(f32(val * inv))
        mid_interp = R(f32(f32(f32(val_next * inv) + R(f32(val * inv))) / f32(2)))
        mid_val = R(f32(val_mid * inv))
        err = f32(mid_interp - mid_val)
        bias = R(f32(err / f32(2)))
        lut.append(int(min(max(f32(sample - bias), tmin), tmax)))
    last = R(f32(fn(input_max) * inv))
    lut.append(int(min(max(last, tmin), tmax)))
    return lut


# --------------------------------------------------------------------------------------------
# Vela (Python, double precision)
# --------------------------------------------------------------------------------------------

def vela_round_away_zero(f):
    # numeric_util.round_away_zero: trunc(f + 0.5*sign(f)), in double
    r = -0.5 if f < 0 else 0.5
    return math.trunc(f + r)


def true_round_half_away(f):
    a = math.floor(abs(f))
    if abs(f) - a >= 0.5:
        a += 1
    return int(math.copysign(a, f))


def clamp_sigmoid(x):
    if x <= -8:
        return 0.0
    if x >= 8:
        return 1.0
    return 1 / (1 + math.exp(-x))


def vela_log(v):
    # convert_ops_to_lut: log with 0 -> DBL_MIN; negative inputs raise in math.log (Vela fails)
    if v == 0:
        v = sys.float_info.min
    return math.log(v)


def vela_gelu(v):
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def vela_gelu_tanh(v):
    return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * math.pow(v, 3))))


VELA_FN = {"tanh": math.tanh, "sigmoid": clamp_sigmoid, "exp": math.exp, "log": vela_log,
           "gelu": vela_gelu, "gelu_tanh": vela_gelu_tanh}


def vela_table(conv, name, s_in, zp_in, s_out, zp_out, dtype, rounder=vela_round_away_zero):
    """conv 'vela_lut8' = convert_to_lut8 (zp added before rounding),
    'vela_8bit_op' = create_lut_8bit_op (zp added after rounding). Scales are the float32 values
    taken as doubles. Returns (values, pre-rounding values)."""
    fn = VELA_FN[name]
    ix = range(256) if dtype == "uint8" else range(-128, 128)
    qmin, qmax = min(ix), max(ix)
    s_in, s_out = float(f32(s_in)), float(f32(s_out))
    vals, pre = [], []
    for x in ix:
        x_real = s_in * (x - zp_in)
        y_real = fn(x_real)
        if conv == "vela_lut8":
            p = zp_out + y_real / s_out
            r = rounder(p)
        else:
            p = y_real / s_out
            r = rounder(p) + zp_out
        vals.append(min(qmax, max(qmin, r)))
        pre.append(p)
    return vals, pre


# --------------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------------

def as_f32(v):
    return float(f32(v))


def ref_double(name, x):
    if name == "tanh":
        return math.tanh(x)
    if name in ("sigmoid",):
        return clamp_sigmoid(x) if abs(x) < 8 else 1 / (1 + math.exp(-x))
    if name == "exp":
        return math.exp(x)
    if name == "log":
        return math.log(x) if x > 0 else -math.inf
    if name in ("gelu", "gelu_erf_legacy"):
        return 0.5 * x * math.erfc(-x / math.sqrt(2))
    if name == "gelu_tanh":
        return vela_gelu_tanh(x)
    raise KeyError(name)


def observer(name, s_in, zp_in, lo, hi):
    ys = [ref_double(name, s_in * (q - zp_in)) for q in range(lo, hi + 1)]
    ys = [y for y in ys if math.isfinite(y)]
    ymin, ymax = min(ys + [0.0]), max(ys + [0.0])
    scale = as_f32((ymax - ymin) / (hi - lo))
    zp = int(round(lo - ymin / scale))
    return scale, min(max(zp, lo), hi)


def int8_in_configs(rng, dtype):
    r = lambda: as_f32(rng.uniform(1e-3, 0.2))
    if dtype == "uint8":
        return [(1.0 / 16, 128), (as_f32(0.05), 0), (r(), rng.randint(0, 255)), (0.0234375, 133)]
    return [(1.0 / 16, 0), (1.0 / 32, -128), (0.0234375, 5), (as_f32(0.05), 127),
            (1.0 / 128, 0), (r(), rng.randint(-128, 127)), (r(), -128), (r(), 5),
            (as_f32(0.1), 0), (1.0 / 8, -3)]


def tflite_int8_configs(name, rng, dtype):
    lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
    out = []
    for k, (s, zp) in enumerate(int8_in_configs(rng, dtype)):
        if name == "sigmoid":                         # TFLite requires 1/256 and zp = type min
            so, zo = 1.0 / 256, lo
        elif name == "tanh" and k % 3 != 2:
            so, zo = 1.0 / 128, (0 if dtype == "int8" else 128)
        else:
            so, zo = observer(name, s, zp, lo, hi)
        out.append((s, zp, so, zo))
    if name == "exp" and dtype == "int8":
        out.append((1.0 / 16, 0, 2.0, -5))           # exp(0) * 1/2 == 0.5: an exact tie
    return out


def vela_configs(conv, name, rng, dtype):
    lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
    out = []
    if name == "log":                                 # Vela's math.log fails for x < 0
        r = lambda: as_f32(rng.uniform(1e-3, 0.2))
        ins = [(1.0 / 16, lo), (1.0 / 32, lo), (0.0234375, lo), (as_f32(0.05), lo),
               (1.0 / 128, lo), (r(), lo), (r(), lo), (as_f32(0.1), lo)]
    else:
        ins = int8_in_configs(rng, dtype)[:8] if dtype == "int8" else int8_in_configs(rng, dtype)
    canon = {"tanh": (1.0 / 128, 0 if dtype == "int8" else 128), "sigmoid": (1.0 / 256, lo)}
    for k, (s, zp) in enumerate(ins):
        if name in canon and k % 3 != 2:
            so, zo = canon[name]
        else:
            so, zo = observer(name, s, zp, lo, hi)
        out.append((s, zp, so, zo))
    if dtype == "int8":
        # Exact .5 ties (the rounding rule and where the zero point is added decide): f(x) is
        # exactly 0 or +-1 (saturated in double) and the output scale is 2.
        tie = {"tanh": (0.25, 0, 2.0, 3), "sigmoid": (0.125, 0, 2.0, -1),
               "exp": (1.0 / 16, 0, 2.0, -5)}
        if name in tie:
            out.append(tie[name])
    return out


def tflite_int16_configs(name, rng):
    # zero points 0 (TFLite requires it for int16 exp; LUTPopulate itself takes any)
    if name == "tanh":
        return [(2.0 ** -12, 0, 2.0 ** -15, 0), (as_f32(rng.uniform(1e-4, 4e-4)), 0, 2.0 ** -15, 0),
                (as_f32(6.0 / 32768), 0, as_f32(1.0 / 32767), 0)]
    if name == "sigmoid":
        return [(2.0 ** -12, 0, 2.0 ** -15, 0), (as_f32(rng.uniform(1e-4, 4e-4)), 0, 2.0 ** -15, 0),
                (as_f32(10.0 / 32768), 0, as_f32(1.0 / 32767), 0)]
    if name == "exp":
        return [(2.0 ** -14, 0, 8.0 / 32768, 0), (2.0 ** -13, 0, 64.0 / 32768, 0),
                (as_f32(rng.uniform(1e-4, 3e-4)), 0, as_f32(32.0 / 32768), 0)]
    raise KeyError(name)


# --------------------------------------------------------------------------------------------

def hexf(v):
    return float(v).hex()


def header(conv, name, dt_in, s_in, zp_in, dt_out, s_out, zp_out, extra):
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}[dt_in]
    return (f"{conv} {name} - {dt_in} {hexf(as_f32(s_in))} {zp_in} {lo} {hi} "
            f"{dt_out} {hexf(as_f32(s_out))} {zp_out} {lo} {hi} {extra}")


def main():
    check_only = "--check-only" in sys.argv
    outdir = HERE
    if "--outdir" in sys.argv:
        outdir = sys.argv[sys.argv.index("--outdir") + 1]
    rng = random.Random(90_983_2026)
    t8, t16, v8, fragile = [], [], [], []
    stats = {}

    def compare(fname, lineno, name, golden, alts):
        for alt, table in alts:
            if table is None:
                continue
            diff = [i for i in range(len(golden)) if table[i] != golden[i]]
            st = stats.setdefault((fname, name, alt), [0, 0, 0])
            st[0] += 1
            st[1] += len(diff)
            st[2] += 1 if diff else 0
            for i in diff:
                fragile.append(f"{fname} {lineno} {name} {alt} idx={i} golden={golden[i]} "
                               f"alt={table[i]}")

    # ---- TFLite int8 / uint8 ----
    for name in ["tanh", "sigmoid", "exp", "gelu", "gelu_tanh", "gelu_erf_legacy"]:
        dtypes = ["int8", "uint8"] if name in ("tanh", "sigmoid", "gelu") else ["int8"]
        for dt in dtypes:
            cfgs = tflite_int8_configs(name, rng, dt)
            if name == "gelu_erf_legacy":
                cfgs = cfgs[:4]
            for s, zp, so, zo in cfgs:
                golden = tflite_int8(name, "libm", s, zp, so, zo, dt)
                extra = "native_order=uint8cast" if dt == "int8" else "-"
                t8.append(header("tflite", name, dt, s, zp, dt, so, zo, extra) + " : " +
                          " ".join(map(str, golden)))
                compare("tflite_int8.txt", len(t8), name, golden,
                        [(a, tflite_int8(name, a, s, zp, so, zo, dt)) for a in ("numpy", "cr")])

    # ---- TFLite int16 ----
    for name in ["tanh", "sigmoid", "exp"]:
        for s, zp, so, zo in tflite_int16_configs(name, rng):
            golden = tflite_int16(name, "libm", s, zp, so, zo)
            assert len(golden) == 513
            t16.append(header("tflite", name, "int16", s, zp, "int16", so, zo, "-") + " : " +
                       " ".join(map(str, golden)))
            compare("tflite_int16.txt", len(t16), name, golden,
                    [(a, tflite_int16(name, a, s, zp, so, zo)) for a in ("numpy", "cr")])

    # ---- Vela ----
    ties = {}
    for conv, names in [("vela_lut8", ["tanh", "sigmoid"]),
                        ("vela_8bit_op", ["exp", "log", "gelu", "gelu_tanh"])]:
        for name in names:
            dtypes = ["int8", "uint8"] if conv == "vela_lut8" else ["int8"]
            for dt in dtypes:
                cfgs = vela_configs(conv, name, rng, dt)
                if name.startswith("gelu"):
                    cfgs = cfgs[:5]
                for s, zp, so, zo in cfgs:
                    golden, pre = vela_table(conv, name, s, zp, so, zo, dt)
                    v8.append(header(conv, name, dt, s, zp, dt, so, zo, "-") + " : " +
                              " ".join(map(str, golden)))
                    exact, _ = vela_table(conv, name, s, zp, so, zo, dt, true_round_half_away)
                    compare("vela_int8.txt", len(v8), name, golden, [("true_round", exact)])
                    ties[(conv, name)] = ties.get((conv, name), 0) + sum(
                        1 for p in pre if math.isfinite(p) and p - math.floor(p) == 0.5)

    print(f"numpy {np.__version__}, libm {ctypes.util.find_library('m')}, python {sys.version.split()[0]}")
    print("file              function         alternative  tables  entries!=alt  tables_with_diff")
    for (fname, name, alt), (nt, ne, td) in stats.items():
        print(f"{fname:16s}  {name:15s}  {alt:11s}  {nt:6d}  {ne:12d}  {td:6d}")
    print("TFLite int8 exact .5 ties of transformed * inverse_scale:", TIES)
    print("Vela exact .5 ties of the pre-rounding value:", ties)
    if check_only:
        return
    for fname, lines in [("tflite_int8.txt", t8), ("tflite_int16.txt", t16), ("vela_int8.txt", v8)]:
        with open(os.path.join(outdir, fname), "w") as f:
            f.write("\n".join(lines) + "\n")
    with open(os.path.join(outdir, "tflite_fragile.txt"), "w") as f:
        f.write("# file line function alternative idx golden alt (see README.md)\n")
        f.write("\n".join(fragile) + "\n")


if __name__ == "__main__":
    main()
