#!/usr/bin/env python3
"""Writes the seed modules of tests/fuzz/tosa_fold.cpp into this directory (run it here).

Small TOSA 1.0 modules of MLIR 22 (tiny shapes, each op named by its location; generic form, and
the pretty form for a few) of every site qfold-tosa-opt folds or refuses, and of the bad input it
refuses: DyT alpha as ExecuTorch's Arm backend lowers it (RESCALE to int32, MUL with its shift
operand, RESCALE to int8, TABLE), the DyT affine before a conv2d and a depthwise_conv2d (through
reshape / transpose / slice views, and into a MATMUL with a constant right-hand side), RESCALE
pairs (per tensor, per channel, double round, 16-bit multipliers, unsigned flags), TABLE chains
(int8 and int16), RESCALE / ADD / SUB / CLAMP / CAST / MUL chains into a TABLE, parameters
computed at run time (function arguments), INEXACT_ROUND, a RESCALE whose two zero points are one
tosa.const (regression: the adapter once freed such a shared parameter constant twice), deep
nesting just under qfold_tosa::max_nesting, a table of the wrong size, a bad RESCALE
shift, and modules without TOSA.

Every seed but the deliberate bad ones (BAD below) must parse and verify with MLIR 22's mlir-opt:
`make_seeds.py --check [path/to/mlir-opt]` checks that (default /usr/lib/llvm-22/bin/mlir-opt).
regression_deep_nesting.mlir is written by hand (see its comment); every other file is this script's.
"""
import math
import os
import subprocess
import sys

ONE = 1073741824  # 1.0 as a multiplier with shift 30
PRETTY = False  # set per seed by pretty(): the ops' custom assembly instead of the generic form


def elem(t):
    """The element type of a tensor type: "tensor<1x2xi8>" -> "i8"."""
    return t[t.rindex("x") + 1:-1] if "x" in t else t[len("tensor<"):-1]


def vals(v):
    return v if isinstance(v, str) else "[" + ", ".join(str(x) for x in v) + "]"


def op(name, kind, operands, types, result, props=(), pretty_props=None, loc=True):
    """One op: props are (key, generic value) pairs; pretty_props (key, value) for the pretty
    form (default: the same)."""
    ops = ", ".join(f"%{o}" for o in operands)
    tin = ", ".join(types)
    where = f' loc("{name}")' if loc else ""
    if PRETTY:
        p = pretty_props if pretty_props is not None else props
        attrs = " {" + ", ".join(f"{k} = {v}" for k, v in p) + "}" if p else ""
        return f"  %{name} = tosa.{kind} {ops}{attrs} : ({tin}) -> {result}{where}\n"
    attrs = " <{" + ", ".join(f"{k} = {v}" for k, v in props) + "}>" if props else ""
    return f'  %{name} = "tosa.{kind}"({ops}){attrs} : ({tin}) -> {result}{where}\n'


def const(name, values, type_):
    # tosa.const prints in the generic form either way.
    return (f'  %{name} = "tosa.const"() <{{values = dense<{vals(values)}> : {type_}}}> : () -> '
            f'{type_} loc("{name}")\n')


def const_shape(name, values):
    n = len(values)
    t = f"tensor<{n}xindex>"
    if PRETTY:
        return (f"  %{name} = tosa.const_shape {{values = dense<{vals(values)}> : {t}}} : () -> "
                f'!tosa.shape<{n}> loc("{name}")\n')
    return (f'  %{name} = "tosa.const_shape"() <{{values = dense<{vals(values)}> : {t}}}> : () -> '
            f'!tosa.shape<{n}> loc("{name}")\n')


def zp_type(t):
    return f"tensor<1x{elem(t)}>"


def rescale(name, x, tin, tout, in_zp=0, out_zp=0, m=(ONE,), s=(30,), rounding="SINGLE_ROUND",
            per_channel=False, scale32=True, input_unsigned=False, output_unsigned=False,
            params=None):
    """A RESCALE with its multiplier, shift and zero points as new tosa.const ops, except those
    that `params` names ({"m": value name, "s": ..., "izp": ..., "ozp": ...}: an argument or a
    constant made before)."""
    params = dict(params or {})
    types = {"m": f"tensor<{len(m)}x{'i32' if scale32 else 'i16'}>", "s": f"tensor<{len(s)}xi8>",
             "izp": zp_type(tin), "ozp": zp_type(tout)}
    values = {"m": m, "s": s, "izp": [in_zp], "ozp": [out_zp]}
    b = ""
    for k in ("m", "s", "izp", "ozp"):
        if k not in params:
            params[k] = f"{name}_{k}"
            b += const(params[k], values[k], types[k])
    flags = [("input_unsigned", str(input_unsigned).lower()),
             ("output_unsigned", str(output_unsigned).lower()),
             ("per_channel", str(per_channel).lower())]
    b += op(name, "rescale", [x] + [params[k] for k in ("m", "s", "izp", "ozp")],
            [tin] + [types[k] for k in ("m", "s", "izp", "ozp")], tout,
            flags + [("rounding_mode", f"#tosa.rounding_mode<{rounding}>"),
                     ("scale32", str(scale32).lower())],
            flags + [("rounding_mode", rounding), ("scale32", str(scale32).lower())])
    return b


def table(name, x, lut, tin, tout, entries="tensor<256xi8>"):
    return op(name, "table", [x, lut], [tin, entries], tout)


def mul(name, a, b, ta, tb, tout, shift=0, shift_value=None):
    """A MUL with its shift operand: a new tosa.const, or the value shift_value names."""
    s = ""
    if shift_value is None:
        shift_value = f"{name}_shift"
        s = const(shift_value, [shift], "tensor<1xi8>")
    return s + op(name, "mul", [a, b, shift_value], [ta, tb, "tensor<1xi8>"], tout)


def binary(kind, name, a, b, ta, tb, tout):
    return op(name, kind, [a, b], [ta, tb], tout)


def clamp(name, x, t, lo, hi):
    e = elem(t)
    return op(name, "clamp", [x], [t], t,
              [("max_val", f"{hi} : {e}"), ("min_val", f"{lo} : {e}"),
               ("nan_mode", "#tosa.nan_mode<PROPAGATE>")],
              [("min_val", f"{lo} : {e}"), ("max_val", f"{hi} : {e}")])


def cast(name, x, tin, tout):
    return op(name, "cast", [x], [tin], tout)


def reshape(name, x, tin, shape):
    tout = "tensor<" + "x".join(str(d) for d in shape) + f"x{elem(tin)}>"
    return (const_shape(f"{name}_shape", shape) +
            op(name, "reshape", [x, f"{name}_shape"], [tin, f"!tosa.shape<{len(shape)}>"], tout))


def transpose(name, x, tin, tout, perms):
    p = [("perms", "array<i32: " + ", ".join(str(v) for v in perms) + ">")]
    return op(name, "transpose", [x], [tin], tout, p)


def slice_(name, x, tin, tout, start, size):
    n = len(start)
    return (const_shape(f"{name}_start", start) + const_shape(f"{name}_size", size) +
            op(name, "slice", [x, f"{name}_start", f"{name}_size"],
               [tin, f"!tosa.shape<{n}>", f"!tosa.shape<{n}>"], tout))


def conv(name, kind, x, tin, w, tw, bias, tb, tout, input_zp=-4, weight_zp=2, pad=(0, 0, 0, 0),
         zps=None):
    """A conv2d or depthwise_conv2d; zps names existing zero-point values (else new consts)."""
    b = ""
    if zps is None:
        zps = (f"{name}_izp", f"{name}_wzp")
        b += const(zps[0], [input_zp], "tensor<1xi8>") + const(zps[1], [weight_zp], "tensor<1xi8>")
    attrs = [("acc_type", "i32"), ("dilation", "array<i64: 1, 1>"),
             ("pad", "array<i64: " + ", ".join(str(p) for p in pad) + ">"),
             ("stride", "array<i64: 1, 1>")]
    return b + op(name, kind, [x, w, bias, zps[0], zps[1]],
                  [tin, tw, tb, "tensor<1xi8>", "tensor<1xi8>"], tout, attrs)


def matmul(name, a, ta, b, tb, tout, a_zp=-4, b_zp=0):
    return (const(f"{name}_azp", [a_zp], "tensor<1xi8>") +
            const(f"{name}_bzp", [b_zp], "tensor<1xi8>") +
            op(name, "matmul", [a, b, f"{name}_azp", f"{name}_bzp"],
               [ta, tb, "tensor<1xi8>", "tensor<1xi8>"], tout))


def func(name, args, body, returns, attributes=""):
    a = ", ".join(f"%{n}: {t}" for n, t in args)
    r = ", ".join(t for _, t in returns)
    rv = ", ".join(f"%{n}" for n, _ in returns)
    rt = r if len(returns) == 1 else f"({r})"
    attrs = f" attributes {{{attributes}}}" if attributes else ""
    return f"func.func @{name}({a}) -> {rt}{attrs} {{\n{body}  return {rv} : {r}\n}}\n"


def lut8(fn):
    return [max(-128, min(127, round(fn(i - 128)))) for i in range(256)]


TANH = lut8(lambda x: 127 * math.tanh(x / 32))
TANH40 = lut8(lambda x: 40 * math.tanh(x / 32))
SQUARE = lut8(lambda x: x * x / 128)
I8 = "tensor<1x2x2x4xi8>"
I16 = "tensor<1x2x2x4xi16>"
I32 = "tensor<1x2x2x4xi32>"
C8 = "tensor<1x1x1x4xi8>"
C32 = "tensor<1x1x1x4xi32>"
S8 = "tensor<1x1x1x1xi8>"
S32 = "tensor<1x1x1x1xi32>"
LUT = "tensor<256xi8>"
LUT16 = "tensor<513xi16>"
W_CONV = "[[[[-8, -5, 8, 5]]], [[[2, -7, 7, 9]]]]"
W_DEPTHWISE = "[[[[-8, 3], [-5, 1], [8, -2], [5, 4]]]]"  # HWCM: 1x1, 4 channels, multiplier 2
seeds = {}


def seed(name, comment, text):
    seeds[name] = "".join(f"// {line}\n" if line else "//\n" for line in comment.split("\n")) + text


def dyt_alpha(p, x, alpha=77, to_tanh=(1518500250, 40), in_zp=-3, alpha_value=None,
              shift_value=None):
    """RESCALE(x) to int32, MUL by RESCALE(alpha) to int32 with a shift operand, RESCALE to int8,
    TABLE (tanh): ExecuTorch's Arm lowering of DyT's tanh(alpha * x). alpha_value: alpha is that
    run-time value instead of a tosa.const."""
    b = rescale(f"{p}_act", x, I8, I32, in_zp=in_zp)
    if alpha_value is None:
        b += const(f"{p}_alpha", str(alpha), S8)
        b += rescale(f"{p}_alpha32", f"{p}_alpha", S8, S32)
        b += mul(f"{p}_mul", f"{p}_act", f"{p}_alpha32", I32, S32, I32, shift_value=shift_value)
    else:
        b += rescale(f"{p}_alpha32", alpha_value, I8, I32)
        b += mul(f"{p}_mul", f"{p}_act", f"{p}_alpha32", I32, I32, I32, shift_value=shift_value)
    b += rescale(f"{p}_to_tanh", f"{p}_mul", I32, I8, out_zp=5, m=(to_tanh[0],), s=(to_tanh[1],))
    b += const(f"{p}_lut", TANH, LUT)
    b += table(f"{p}_tanh", f"{p}_to_tanh", f"{p}_lut", I8, I8)
    return b


def dyt_affine(p, x, gamma="[[[[3, -2, 1, 2]]]]", beta="[[[[5, -7, 0, 11]]]]"):
    """DyT's per-channel gamma * t + beta on an int8 tensor t, as ExecuTorch lowers the MUL and
    the ADD (each input RESCALEd to int32, the result RESCALEd to int8); ends in %{p}_sum."""
    b = rescale(f"{p}_t32", x, I8, I32, in_zp=1)
    b += const(f"{p}_gamma", gamma, C8)
    b += rescale(f"{p}_g32", f"{p}_gamma", C8, C32)
    b += mul(f"{p}_mul", f"{p}_t32", f"{p}_g32", I32, C32, I32)
    b += rescale(f"{p}_scaled", f"{p}_mul", I32, I8, out_zp=1)
    b += rescale(f"{p}_s32", f"{p}_scaled", I8, I32)
    b += const(f"{p}_beta", beta, C8)
    b += rescale(f"{p}_b32", f"{p}_beta", C8, C32)
    b += binary("add", f"{p}_add", f"{p}_s32", f"{p}_b32", I32, C32, I32)
    b += rescale(f"{p}_sum", f"{p}_add", I32, I8, out_zp=-4)
    return b


def conv2d_after(p, x, tin, tout, pad=(0, 0, 0, 0)):
    return (const(f"{p}_w", W_CONV, "tensor<2x1x1x4xi8>") +
            const(f"{p}_bias", "[-1100, 851]", "tensor<2xi32>") +
            conv(f"{p}_conv", "conv2d", x, tin, f"{p}_w", "tensor<2x1x1x4xi8>", f"{p}_bias",
                 "tensor<2xi32>", tout, pad=pad))


def depthwise_after(p, x, tin, tout):
    return (const(f"{p}_w", W_DEPTHWISE, "tensor<1x1x4x2xi8>") +
            const(f"{p}_bias", "[1, 2, 3, 4, 5, 6, 7, 8]", "tensor<8xi32>") +
            conv(f"{p}_conv", "depthwise_conv2d", x, tin, f"{p}_w", "tensor<1x1x4x2xi8>",
                 f"{p}_bias", "tensor<8xi32>", tout))


def tanh40(x):
    return const("t_lut", TANH40, LUT) + table("t", x, "t_lut", I8, I8)


# --- DyT alpha --------------------------------------------------------------------------------
seed("dyt_alpha.mlir",
     "A DyT alpha site, as ExecuTorch's Arm backend lowers it (TOSA 1.0: parameters are tosa.const\n"
     "operands).",
     func("dyt", [("x", I8)], dyt_alpha("a", "x"), [("a_tanh", I8)]))

PRETTY = True
seed("dyt_block_pretty.mlir",
     "A whole DyT block in the pretty form: the previous layer's TABLE, tanh(alpha * x) (RESCALE,\n"
     "MUL with its shift operand, RESCALE, TABLE), gamma and beta (MUL, ADD), and the conv2d it\n"
     "feeds.",
     func("dyt", [("x", I8)],
          tanh40("x") + dyt_alpha("a", "t") + dyt_affine("b", "a_tanh") +
          conv2d_after("b", "b_sum", I8, "tensor<1x2x2x2xi32>"),
          [("b_conv", "tensor<1x2x2x2xi32>")]))
PRETTY = False

seed("dyt_alpha_refused.mlir",
     "DyT alpha sites to refuse: alpha computed at run time, a MUL read twice, a MUL's shift\n"
     "computed at run time (a function argument), and a MUL shift of 40 (the tables differ).",
     func("f", [("x", I8), ("sh", "tensor<1xi8>")],
          dyt_alpha("a", "x", alpha_value="x") + dyt_alpha("b", "x", alpha=-128) +
          dyt_alpha("c", "x", shift_value="sh") +
          const("d_sh", [40], "tensor<1xi8>") + dyt_alpha("d", "x", alpha=-3, shift_value="d_sh"),
          [("a_tanh", I8), ("b_tanh", I8), ("b_mul", I32), ("c_tanh", I8), ("d_tanh", I8)]))

# --- DyT affine -------------------------------------------------------------------------------
seed("dyt_affine_conv2d.mlir",
     "DyT affine sites (gamma, beta) after a DyT table, before a conv2d: unpadded; padded with a\n"
     "gamma that is not an identity (refused); padded with an identity gamma (beta stays).",
     func("f", [("x", I8)],
          tanh40("x") +
          dyt_affine("b", "t") + conv2d_after("b", "b_sum", I8, "tensor<1x2x2x2xi32>") +
          dyt_affine("c", "t") +
          const("c_w", "0", "tensor<2x3x3x4xi8>") +
          const("c_bias", "[7, -7]", "tensor<2xi32>") +
          conv("c_conv", "conv2d", "c_sum", I8, "c_w", "tensor<2x3x3x4xi8>", "c_bias",
               "tensor<2xi32>", "tensor<1x2x2x2xi32>", pad=(1, 1, 1, 1)) +
          dyt_affine("d", "t", gamma="1", beta="[[[[5, -7, 0, 11]]]]") +
          const("d_w", "1", "tensor<2x3x3x4xi8>") +
          const("d_bias", "[7, -7]", "tensor<2xi32>") +
          conv("d_conv", "conv2d", "d_sum", I8, "d_w", "tensor<2x3x3x4xi8>", "d_bias",
               "tensor<2xi32>", "tensor<1x2x2x2xi32>", pad=(1, 1, 1, 1)),
          [("b_conv", "tensor<1x2x2x2xi32>"), ("c_conv", "tensor<1x2x2x2xi32>"),
           ("d_conv", "tensor<1x2x2x2xi32>")]))

seed("dyt_affine_depthwise.mlir",
     "A DyT affine site before a depthwise_conv2d (weights HWCM, channel multiplier 2), and one\n"
     "whose convolution's zero points are function arguments (refused: not constant).",
     func("f", [("x", I8), ("izp", "tensor<1xi8>"), ("wzp", "tensor<1xi8>")],
          tanh40("x") + dyt_affine("b", "t") +
          depthwise_after("b", "b_sum", I8, "tensor<1x2x2x8xi32>") +
          dyt_affine("c", "t") +
          const("c_w", W_DEPTHWISE, "tensor<1x1x4x2xi8>") +
          const("c_bias", "0", "tensor<8xi32>") +
          conv("c_conv", "depthwise_conv2d", "c_sum", I8, "c_w", "tensor<1x1x4x2xi8>", "c_bias",
               "tensor<8xi32>", "tensor<1x2x2x8xi32>", zps=("izp", "wzp")),
          [("b_conv", "tensor<1x2x2x8xi32>"), ("c_conv", "tensor<1x2x2x8xi32>")]))

seed("dyt_affine_views.mlir",
     "DyT affine sites through layout views: a transpose (perms attribute) and a reshape\n"
     "(tosa.const_shape) into a conv2d; a full slice into a depthwise_conv2d; a reshape to rank 3\n"
     "into a MATMUL with a constant right-hand side (a linear layer); a partial slice (refused).",
     func("f", [("x", I8)],
          tanh40("x") +
          dyt_affine("b", "t") +
          transpose("b_tr", "b_sum", I8, I8, [0, 2, 1, 3]) +
          reshape("b_flat", "b_tr", I8, [1, 4, 1, 4]) +
          conv2d_after("b", "b_flat", "tensor<1x4x1x4xi8>", "tensor<1x4x1x2xi32>") +
          dyt_affine("c", "t") +
          slice_("c_sl", "c_sum", I8, I8, [0, 0, 0, 0], [1, 2, 2, 4]) +
          depthwise_after("c", "c_sl", I8, "tensor<1x2x2x8xi32>") +
          dyt_affine("d", "t") +
          reshape("d_rows", "d_sum", I8, [1, 4, 4]) +
          const("d_b", "[[[1, -2], [3, -4], [5, 6], [-7, 8]]]", "tensor<1x4x2xi8>") +
          matmul("d_mm", "d_rows", "tensor<1x4x4xi8>", "d_b", "tensor<1x4x2xi8>",
                 "tensor<1x4x2xi32>") +
          dyt_affine("e", "t") +
          slice_("e_sl", "e_sum", I8, "tensor<1x2x2x2xi8>", [0, 0, 0, 1], [1, 2, 2, 2]) +
          const("e_w", "[[[[1, 2]]], [[[3, 4]]]]", "tensor<2x1x1x2xi8>") +
          const("e_bias", "0", "tensor<2xi32>") +
          conv("e_conv", "conv2d", "e_sl", "tensor<1x2x2x2xi8>", "e_w", "tensor<2x1x1x2xi8>",
               "e_bias", "tensor<2xi32>", "tensor<1x2x2x2xi32>"),
          [("b_conv", "tensor<1x4x1x2xi32>"), ("c_conv", "tensor<1x2x2x8xi32>"),
           ("d_mm", "tensor<1x4x2xi32>"), ("e_conv", "tensor<1x2x2x2xi32>")]))

seed("matmul_linear.mlir",
     "MATMULs: a constant right-hand side of one batch (qfold reads it as a linear layer; no pass\n"
     "folds into one on TOSA), one of two batches and a product of two activations (not linear).",
     func("f", [("a", "tensor<2x3x4xi8>"), ("b", "tensor<2x4x2xi8>")],
          reshape("a4", "a", "tensor<2x3x4xi8>", [2, 3, 1, 4]) +
          const("k", "[[[1, 2], [3, 4], [5, 6], [7, 8]]]", "tensor<1x4x2xi8>") +
          matmul("mm1", "a", "tensor<2x3x4xi8>", "k", "tensor<1x4x2xi8>", "tensor<2x3x2xi32>") +
          const("k2", "1", "tensor<2x4x2xi8>") +
          matmul("mm2", "a", "tensor<2x3x4xi8>", "k2", "tensor<2x4x2xi8>", "tensor<2x3x2xi32>") +
          matmul("mm3", "a", "tensor<2x3x4xi8>", "b", "tensor<2x4x2xi8>", "tensor<2x3x2xi32>"),
          [("mm1", "tensor<2x3x2xi32>"), ("mm2", "tensor<2x3x2xi32>"),
           ("mm3", "tensor<2x3x2xi32>"), ("a4", "tensor<2x3x1x4xi8>")]))

# --- RESCALE pairs ----------------------------------------------------------------------------
U16 = "tensor<1x2x2x4xi16>"
seed("rescale_pairs.mlir",
     "RESCALE pairs to merge: per tensor; per channel; i8 -> i8 -> i8; 16-bit multipliers then\n"
     "DOUBLE_ROUND; an unsigned input (zero point 131 stored as -125) and an unsigned output;\n"
     "int16 with unsigned zero points (32768 stored as -32768); a per-channel pair with double\n"
     "round on both.",
     func("f", [("x", I8), ("h", I16)],
          rescale("c0_up", "x", I8, I32, in_zp=5, s=(28,)) +
          rescale("c0_scale", "c0_up", I32, I8, out_zp=-2, m=(1274746293,), s=(35,)) +
          rescale("c1_up", "x", I8, I32, m=(ONE,) * 4, s=(30, 29, 28, 27), per_channel=True) +
          rescale("c1_scale", "c1_up", I32, I8, out_zp=3, m=(1717986918,) * 4,
                  s=(34, 35, 36, 37), per_channel=True) +
          rescale("c3_q", "x", I8, I8, in_zp=4, out_zp=-6, m=(1503238554,), s=(31,)) +
          rescale("c3_scale", "c3_q", I8, I8, in_zp=-6, out_zp=1, s=(33,)) +
          rescale("c4_16", "x", I8, I8, in_zp=-20, out_zp=7, m=(19988,), s=(15,), scale32=False) +
          rescale("c4_scale", "c4_16", I8, I8, in_zp=7, m=(ONE,), s=(31,),
                  rounding="DOUBLE_ROUND") +
          rescale("c5_u8", "x", I8, I8, in_zp=-125, out_zp=3, input_unsigned=True) +
          rescale("c5_out", "c5_u8", I8, I8, in_zp=3, out_zp=-128, m=(1503238554,), s=(31,),
                  output_unsigned=True) +
          rescale("c6_u16", "h", I16, I16, in_zp=-32768, out_zp=0, m=(ONE,), s=(31,),
                  input_unsigned=True) +
          rescale("c6_out", "c6_u16", I16, I32, m=(ONE,), s=(29,)) +
          rescale("c7_up", "x", I8, I32, in_zp=-1, m=(ONE, 2 * ONE - 1, ONE, 1717986918),
                  s=(30, 31, 29, 33), per_channel=True, rounding="DOUBLE_ROUND") +
          rescale("c7_scale", "c7_up", I32, I8, m=(1202590843,) * 4, s=(36, 35, 34, 33),
                  per_channel=True, rounding="DOUBLE_ROUND"),
          [("c0_scale", I8), ("c1_scale", I8), ("c3_scale", I8), ("c4_scale", I8),
           ("c5_out", I8), ("c6_out", I32), ("c7_scale", I8)]))

seed("inexact_round.mlir",
     "INEXACT_ROUND RESCALEs (TOSA 1.0's third rounding mode: MLIR parses it, its lowering refuses\n"
     "it): a pair, a pair with one INEXACT_ROUND, and one before a TABLE.",
     func("f", [("x", I8)],
          rescale("a_up", "x", I8, I32, s=(28,), rounding="INEXACT_ROUND") +
          rescale("a_down", "a_up", I32, I8, m=(1274746293,), s=(35,), rounding="INEXACT_ROUND") +
          rescale("b_up", "x", I8, I32, s=(28,)) +
          rescale("b_down", "b_up", I32, I8, m=(1274746293,), s=(35,), rounding="INEXACT_ROUND") +
          rescale("c_q", "x", I8, I8, in_zp=3, m=(1503238554,), s=(31,), rounding="INEXACT_ROUND") +
          const("c_lut", SQUARE, LUT) + table("c_t", "c_q", "c_lut", I8, I8),
          [("a_down", I8), ("b_down", I8), ("c_t", I8)]))

# --- TABLE chains and collapses ---------------------------------------------------------------
seed("table_chain.mlir",
     "TABLE -> TABLE chains to compose (two and three int8 tables), and int16 tables (513\n"
     "entries, i32 out) in a chain through a RESCALE back to int16.",
     func("f", [("x", I8), ("h", I16)],
          const("t1_lut", TANH, LUT) + table("t1", "x", "t1_lut", I8, I8) +
          const("t2_lut", SQUARE, LUT) + table("t2", "t1", "t2_lut", I8, I8) +
          const("t3_lut", "-3", LUT) + table("t3", "t2", "t3_lut", I8, I8) +
          const("h1_lut", [max(-32768, min(32767, 128 * i - 32768)) for i in range(513)], LUT16) +
          table("h1", "h", "h1_lut", I16, I32, entries=LUT16) +
          rescale("h1_16", "h1", I32, I16, m=(ONE,), s=(37,)) +
          const("h2_lut", [(i * 37) % 65536 - 32768 for i in range(513)], LUT16) +
          table("h2", "h1_16", "h2_lut", I16, I32, entries=LUT16),
          [("t2", I8), ("t3", I8), ("h2", I32)]))

seed("collapse_chains.mlir",
     "Chains of RESCALE, ADD, SUB, CLAMP, CAST, MUL and TABLE to collapse into one TABLE.",
     func("f", [("x", I8)],
          rescale("d1_in", "x", I8, I32, in_zp=3, s=(26,)) +
          const("d1_kadd", "[[[[100, -200, 300, 0]]]]", C32) +
          binary("add", "d1_add", "d1_in", "d1_kadd", I32, C32, I32) +
          const("d1_ksub", "-50", S32) +
          binary("sub", "d1_sub", "d1_add", "d1_ksub", I32, S32, I32) +
          clamp("d1_clamp", "d1_sub", I32, -1500, 1700) +
          rescale("d1_out", "d1_clamp", I32, I8, out_zp=-9,
                  m=(1202590843, 2061584302, 1717986918, 1546188227), s=(34, 35, 35, 34),
                  per_channel=True) +
          const("d1_lut", SQUARE, LUT) + table("d1_table", "d1_out", "d1_lut", I8, I8) +
          rescale("d2_sat", "x", I8, I8, in_zp=2, out_zp=1, m=(1986422374,), s=(29,)) +
          clamp("d2_clamp", "d2_sat", I8, -100, 90) +
          cast("d2_cast", "d2_clamp", I8, I32) +
          const("d2_k", "1000", S32) +
          mul("d2_mul", "d2_cast", "d2_k", I32, S32, I32, shift=3) +
          rescale("d2_out", "d2_mul", I32, I8, m=(1374389535,), s=(37,)) +
          rescale("d3_16", "x", I8, I16, in_zp=1, s=(22,)) +
          clamp("d3_clamp", "d3_16", I16, -30000, 20000) +
          cast("d3_cast", "d3_clamp", I16, I8),
          [("d1_table", I8), ("d2_out", I8), ("d3_cast", I8)]))

seed("int16_table.mlir",
     "An int16 TABLE (513 entries, i32 out) after an int8 -> int16 RESCALE.",
     func("f", [("x", I8)],
          rescale("r16", "x", I8, I16, in_zp=1, s=(22,)) +
          const("lut16", [max(-32768, min(32767, 128 * i - 32768)) for i in range(513)], LUT16) +
          table("t16", "r16", "lut16", I16, I32, entries=LUT16),
          [("t16", I32)]))

# --- Parameters computed at run time ----------------------------------------------------------
seed("runtime_parameters.mlir",
     "Parameters computed at run time (function arguments; valid with TOSA's dynamic extension):\n"
     "a RESCALE pair whose multiplier, shift or zero point is one, a MUL shift, a TABLE's table,\n"
     "a convolution's zero points. qfold refuses each site as not constant.",
     func("f", [("x", I8), ("m", "tensor<1xi32>"), ("s", "tensor<1xi8>"), ("z", "tensor<1xi8>"),
                ("lut", LUT)],
          rescale("a_up", "x", I8, I32, params={"m": "m"}) +
          rescale("a_down", "a_up", I32, I8, m=(ONE,), s=(31,)) +
          rescale("b_up", "x", I8, I32, params={"s": "s"}) +
          rescale("b_down", "b_up", I32, I8, m=(ONE,), s=(31,)) +
          rescale("c_q", "x", I8, I8, params={"izp": "z"}) +
          rescale("c_down", "c_q", I8, I8, params={"ozp": "z"}) +
          rescale("d_q", "x", I8, I8, m=(1503238554,), s=(31,)) +
          table("d_t", "d_q", "lut", I8, I8) +
          const("e_lut", SQUARE, LUT) + table("e_t", "d_t", "e_lut", I8, I8) +
          rescale("f_32", "x", I8, I32) + const("f_k", "3", S32) +
          mul("f_mul", "f_32", "f_k", I32, S32, I32, shift_value="s") +
          rescale("f_out", "f_mul", I32, I8, m=(ONE,), s=(33,)) +
          tanh40("x") + dyt_affine("g", "t") +
          const("g_w", W_CONV, "tensor<2x1x1x4xi8>") + const("g_bias", "0", "tensor<2xi32>") +
          conv("g_conv", "conv2d", "g_sum", I8, "g_w", "tensor<2x1x1x4xi8>", "g_bias",
               "tensor<2xi32>", "tensor<1x2x2x2xi32>", zps=("z", "z")),
          [("a_down", I8), ("b_down", I8), ("c_down", I8), ("e_t", I8), ("f_out", I8),
           ("g_conv", "tensor<1x2x2x2xi32>")]))

# --- Shared parameter constants (regression) ---------------------------------------------------
seed("regression_shared_zero_point.mlir",
     "Regression: a RESCALE whose input and output zero points are the same tosa.const op (the\n"
     "adapter once freed such a shared parameter constant twice when it erased the RESCALE). Here\n"
     "such RESCALEs are erased by a merge, a collapse into a TABLE and a DyT alpha fold, and one\n"
     "multiplier and shift constant is shared by several RESCALEs.",
     func("f", [("x", I8)],
          const("one", [ONE], "tensor<1xi32>") + const("s30", [30], "tensor<1xi8>") +
          const("z", [0], "tensor<1xi8>") + const("z7", [7], "tensor<1xi8>") +
          rescale("a_q", "x", I8, I8, m=(1503238554,), s=(31,), params={"izp": "z7", "ozp": "z7"}) +
          rescale("a_down", "a_q", I8, I8, s=(31,), params={"m": "one", "izp": "z", "ozp": "z"}) +
          rescale("b_q", "x", I8, I8, params={"m": "one", "s": "s30", "izp": "z", "ozp": "z"}) +
          const("b_lut", SQUARE, LUT) + table("b_t", "b_q", "b_lut", I8, I8) +
          const("c_alpha", "77", S8) +
          rescale("c_act", "x", I8, I32, params={"m": "one", "s": "s30", "izp": "z"}) +
          rescale("c_alpha32", "c_alpha", S8, S32, params={"m": "one", "s": "s30", "izp": "z"}) +
          mul("c_mul", "c_act", "c_alpha32", I32, S32, I32) +
          rescale("c_to_tanh", "c_mul", I32, I8, m=(1518500250,), s=(40,), params={"ozp": "z"}) +
          const("c_lut", TANH, LUT) + table("c_tanh", "c_to_tanh", "c_lut", I8, I8),
          [("a_down", I8), ("b_t", I8), ("c_tanh", I8)]))

# --- Bad input, and modules without TOSA -------------------------------------------------------
seed("bad_table_size.mlir",
     "MLIR 22's verifier accepts a TABLE of 255 entries; qfold does not (bad input).",
     func("f", [("x", "tensor<4xi8>")],
          const("t", "1", "tensor<255xi8>") +
          table("y", "x", "t", "tensor<4xi8>", "tensor<4xi8>", entries="tensor<255xi8>"),
          [("y", "tensor<4xi8>")]))

seed("bad_rescale_shift.mlir",
     "RESCALEs that break the spec's rules: a shift outside 2..62, a negative multiplier, an i48\n"
     "input with scale32 (bad input; MLIR 22's verifier accepts them, qfold refuses them).",
     func("f", [("x", "tensor<4xi8>"), ("w", "tensor<4xi48>")],
          rescale("y", "x", "tensor<4xi8>", "tensor<4xi8>", s=(70,)) +
          rescale("z", "x", "tensor<4xi8>", "tensor<4xi8>", m=(-5,)) +
          rescale("v", "w", "tensor<4xi48>", "tensor<4xi8>"),
          [("y", "tensor<4xi8>"), ("z", "tensor<4xi8>"), ("v", "tensor<4xi8>")]))

seed("not_tosa.mlir", "No TOSA: a declaration, arith ops, and a function of two blocks.", """module {
  func.func private @decl(i32) -> i32
  func.func @add(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    %1 = func.call @decl(%0) : (i32) -> i32
    return %1 : i32
  }
  func.func @blocks(%c: i1, %x: tensor<4xi8>) -> tensor<4xi8> {
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %t = "tosa.const"() <{values = dense<1> : tensor<256xi8>}> : () -> tensor<256xi8>
    %y = tosa.table %x, %t : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
    return %y : tensor<4xi8>
  ^bb2:
    return %x : tensor<4xi8>
  }
}
""")

seed("i1_arrays.mlir",
     "i1 dense arrays, which MLIR 22 prints (MLIR 16 crashed printing `array<i1: 1>`, which MLIR 22\n"
     "refuses as a parse error): on a function, in a dictionary, and in a tensor encoding.",
     "!b = i1\n" +
     func("f", [("x", "tensor<4xi8, {k = array<i1: true>}>")],
          const("t", "1", LUT) +
          table("y", "x", "t", "tensor<4xi8, {k = array<i1: true>}>", "tensor<4xi8>") +
          const("u", SQUARE, LUT) + table("z", "y", "u", "tensor<4xi8>", "tensor<4xi8>"),
          [("z", "tensor<4xi8>")],
          attributes="n = [1, {k = array<i1: false, true>}], m = array<!b: true, true, false>"))

# --- Deep nesting ------------------------------------------------------------------------------
DEPTH = 1000  # qfold_tosa::max_nesting (parser_guards.hpp); regression_deep_nesting.mlir is over it
seed("deep_nesting_parsed.mlir",
     f"Nesting just under qfold_tosa::max_nesting ({DEPTH}), which qfold-tosa-opt parses: a\n"
     "function with an attribute of nested arrays and a TABLE chain; and 250 nested modules (999\n"
     "would parse too, at 0.1 s an input under ASan).",
     func("f", [("x", I8)],
          const("t1_lut", TANH, LUT) + table("t1", "x", "t1_lut", I8, I8) +
          const("t2_lut", SQUARE, LUT) + table("t2", "t1", "t2_lut", I8, I8),
          [("t2", I8)],
          attributes="a = " + "[" * (DEPTH - 2) + "1" + "]" * (DEPTH - 2)) +
     "module {\n" * 250 + "}\n" * 250)


def check(mlir_opt):
    """Every seed parses and verifies with mlir-opt (and prints text that parses again)."""
    failed = 0
    for name, text in sorted(seeds.items()):
        r = subprocess.run([mlir_opt, "-", "-o", "-"], input=text.encode(), capture_output=True)
        if r.returncode != 0:
            failed += 1
            print(f"{name}: mlir-opt fails:\n{r.stderr.decode()[:2000]}", file=sys.stderr)
            continue
        again = subprocess.run([mlir_opt, "-", "-o", os.devnull], input=r.stdout,
                               capture_output=True)
        if again.returncode != 0:
            failed += 1
            print(f"{name}: mlir-opt's output does not parse again", file=sys.stderr)
    return failed


here = os.path.dirname(os.path.abspath(__file__))
for name, text in seeds.items():
    with open(os.path.join(here, name), "w") as f:
        f.write(text)
print(f"{len(seeds)} seeds")
if len(sys.argv) > 1 and sys.argv[1] == "--check":
    tool = sys.argv[2] if len(sys.argv) > 2 else "/usr/lib/llvm-22/bin/mlir-opt"
    n = check(tool)
    print(f"mlir-opt: {len(seeds) - n} of {len(seeds)} seeds parse and verify")
    sys.exit(1 if n else 0)
