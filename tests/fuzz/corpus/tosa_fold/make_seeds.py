#!/usr/bin/env python3
"""Writes the seed modules of tests/fuzz/tosa_fold.cpp into this directory (run it here).

Small LLVM 16 TOSA modules (generic op form, tiny shapes) of every site qfold-tosa-opt folds or
refuses, and of the bad input it refuses: a DyT alpha site (RESCALE -> MUL -> RESCALE -> TABLE),
a DyT affine site before a conv2d, RESCALE pairs, TABLE -> TABLE chains, RESCALE / CLAMP / TABLE
chains to collapse, an int16 table, sites to refuse, a table of the wrong size, a bad RESCALE
shift, and modules without TOSA. The files regression_* are written by hand: inputs on which
MLIR 16 itself crashes, which the target skips.
"""
import math
import os

ONE = 1073741824  # 1.0 as a multiplier with shift 30


def rescale(name, x, tin, tout, in_zp=0, out_zp=0, m=(ONE,), s=(30,), double_round=False,
            per_channel=False, scale32=True):
    ms = ", ".join(str(v) for v in m)
    ss = ", ".join(str(v) for v in s)
    return (f'  %{name} = "tosa.rescale"(%{x}) {{double_round = {str(double_round).lower()}, '
            f'input_zp = {in_zp} : i32, multiplier = array<i32: {ms}>, output_zp = {out_zp} : i32, '
            f'per_channel = {str(per_channel).lower()}, scale32 = {str(scale32).lower()}, '
            f'shift = array<i32: {ss}>}} : ({tin}) -> {tout} loc("{name}")\n')


def const(name, values, type_):
    v = values if isinstance(values, str) else "[" + ", ".join(str(x) for x in values) + "]"
    return f'  %{name} = "tosa.const"() {{value = dense<{v}> : {type_}}} : () -> {type_} loc("{name}")\n'


def table(name, x, lut, tin, tout, entries="tensor<256xi8>"):
    return (f'  %{name} = "tosa.table"(%{x}, %{lut}) : ({tin}, {entries}) -> {tout} '
            f'loc("{name}")\n')


def mul(name, a, b, ta, tb, tout, shift=0):
    return (f'  %{name} = "tosa.mul"(%{a}, %{b}) {{shift = {shift} : i32}} : ({ta}, {tb}) -> {tout} '
            f'loc("{name}")\n')


def binary(op, name, a, b, ta, tb, tout):
    return f'  %{name} = "tosa.{op}"(%{a}, %{b}) : ({ta}, {tb}) -> {tout} loc("{name}")\n'


def clamp(name, x, t, lo, hi):
    return (f'  %{name} = "tosa.clamp"(%{x}) {{max_fp = 0.000000e+00 : f32, max_int = {hi} : i64, '
            f'min_fp = 0.000000e+00 : f32, min_int = {lo} : i64}} : ({t}) -> {t} loc("{name}")\n')


def func(name, args, results, body, returns):
    a = ", ".join(f"%{n}: {t}" for n, t in args)
    r = ", ".join(t for _, t in returns)
    rv = ", ".join(f"%{n}" for n, _ in returns)
    rt = r if len(returns) == 1 else f"({r})"
    return f"func.func @{name}({a}) -> {rt} {{\n{body}  return {rv} : {r}\n}}\n"


def lut8(fn):
    return [max(-128, min(127, round(fn(i - 128)))) for i in range(256)]


TANH = lut8(lambda x: 127 * math.tanh(x / 32))
TANH40 = lut8(lambda x: 40 * math.tanh(x / 32))
SQUARE = lut8(lambda x: x * x / 128)
I8 = "tensor<1x2x2x4xi8>"
I32 = "tensor<1x2x2x4xi32>"
LUT = "tensor<256xi8>"
seeds = {}


def dyt_alpha(p, x, alpha=77, to_tanh=(1518500250, 40), in_zp=-3, shared_alpha=None):
    b = rescale(f"{p}_act", x, I8, I32, in_zp=in_zp)
    if shared_alpha is None:
        b += const(f"{p}_alpha", str(alpha), "tensor<1x1x1x1xi8>")
        b += rescale(f"{p}_alpha32", f"{p}_alpha", "tensor<1x1x1x1xi8>", "tensor<1x1x1x1xi32>")
        b += mul(f"{p}_mul", f"{p}_act", f"{p}_alpha32", I32, "tensor<1x1x1x1xi32>", I32)
    else:  # alpha is a run-time value: not a DyT alpha site
        b += rescale(f"{p}_alpha32", shared_alpha, I8, I32)
        b += mul(f"{p}_mul", f"{p}_act", f"{p}_alpha32", I32, I32, I32)
    b += rescale(f"{p}_to_tanh", f"{p}_mul", I32, I8, out_zp=5, m=(to_tanh[0],), s=(to_tanh[1],))
    b += const(f"{p}_lut", TANH, LUT)
    b += table(f"{p}_tanh", f"{p}_to_tanh", f"{p}_lut", I8, I8)
    return b


seeds["dyt_alpha.mlir"] = "// A DyT alpha site, as ExecuTorch's Arm backend lowers it.\n" + func(
    "dyt", [("x", I8)], [], dyt_alpha("a", "x"), [("a_tanh", I8)])
seeds["dyt_alpha_refused.mlir"] = (
    "// DyT alpha sites to refuse: alpha not a constant, and a MUL read twice.\n" +
    func("f", [("x", I8)], [],
         dyt_alpha("a", "x", shared_alpha="x") + dyt_alpha("b", "x", alpha=-128),
         [("a_tanh", I8), ("b_tanh", I8), ("b_mul", I32)]))


def dyt_affine(p, x, conv="conv2d"):
    b = rescale(f"{p}_t32", x, I8, I32, in_zp=1)
    b += const(f"{p}_gamma", "[[[[3, -2, 1, 2]]]]", "tensor<1x1x1x4xi8>")
    b += rescale(f"{p}_g32", f"{p}_gamma", "tensor<1x1x1x4xi8>", "tensor<1x1x1x4xi32>")
    b += mul(f"{p}_mul", f"{p}_t32", f"{p}_g32", I32, "tensor<1x1x1x4xi32>", I32)
    b += rescale(f"{p}_scaled", f"{p}_mul", I32, I8, out_zp=1)
    b += rescale(f"{p}_s32", f"{p}_scaled", I8, I32)
    b += const(f"{p}_beta", "[[[[5, -7, 0, 11]]]]", "tensor<1x1x1x4xi8>")
    b += rescale(f"{p}_b32", f"{p}_beta", "tensor<1x1x1x4xi8>", "tensor<1x1x1x4xi32>")
    b += binary("add", f"{p}_add", f"{p}_s32", f"{p}_b32", I32, "tensor<1x1x1x4xi32>", I32)
    b += rescale(f"{p}_sum", f"{p}_add", I32, I8, out_zp=-4)
    b += const(f"{p}_w", "[[[[-8, -5, 8, 5]]], [[[2, -7, 7, 9]]]]", "tensor<2x1x1x4xi8>")
    b += const(f"{p}_bias", "[-1100, 851]", "tensor<2xi32>")
    b += (f'  %{p}_conv = "tosa.conv2d"(%{p}_sum, %{p}_w, %{p}_bias) {{dilation = array<i64: 1, 1>, '
          f'pad = array<i64: 0, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = -4, '
          f'weight_zp = 2>, stride = array<i64: 1, 1>}} : ({I8}, tensor<2x1x1x4xi8>, '
          f'tensor<2xi32>) -> tensor<1x2x2x2xi32> loc("{p}_conv")\n')
    return b


seeds["dyt_affine_conv2d.mlir"] = (
    "// A DyT affine site (gamma, beta) after a DyT table, before a conv2d.\n" +
    func("f", [("x", I8)], [],
         const("t_lut", TANH40, LUT) + table("t", "x", "t_lut", I8, I8) + dyt_affine("b", "t"),
         [("b_conv", "tensor<1x2x2x2xi32>")]))

def affine_views(p, x):
    # The DyT affine's output through a transpose and a reshape into a conv2d.
    b = dyt_affine(p, x).split(f'  %{p}_w = ')[0]
    b += const(f"{p}_perms", "[0, 2, 1, 3]", "tensor<4xi32>")
    b += (f'  %{p}_tr = "tosa.transpose"(%{p}_sum, %{p}_perms) : ({I8}, tensor<4xi32>) -> {I8} '
          f'loc("{p}_tr")\n')
    b += (f'  %{p}_flat = "tosa.reshape"(%{p}_tr) {{new_shape = array<i64: 1, 4, 1, 4>}} : ({I8}) '
          f'-> tensor<1x4x1x4xi8> loc("{p}_flat")\n')
    b += const(f"{p}_w", "[[[[-8, -5, 8, 5]]], [[[2, -7, 7, 9]]]]", "tensor<2x1x1x4xi8>")
    b += const(f"{p}_bias", "[-1100, 851]", "tensor<2xi32>")
    b += (f'  %{p}_conv = "tosa.conv2d"(%{p}_flat, %{p}_w, %{p}_bias) {{dilation = array<i64: 1, 1>, '
          f'pad = array<i64: 0, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = -4, '
          f'weight_zp = 2>, stride = array<i64: 1, 1>}} : (tensor<1x4x1x4xi8>, tensor<2x1x1x4xi8>, '
          f'tensor<2xi32>) -> tensor<1x4x1x2xi32> loc("{p}_conv")\n')
    return b


FC = """func.func @fc(%x: tensor<4x4xi8>) -> tensor<4x2xi32> {
  %w = "tosa.const"() {value = dense<[[1, -2, 3, -4], [5, 6, -7, 8]]> : tensor<2x4xi8>} : () -> tensor<2x4xi8>
  %b = "tosa.const"() {value = dense<[7, -9]> : tensor<2xi32>} : () -> tensor<2xi32>
  %y = "tosa.fully_connected"(%x, %w, %b) {quantization_info = #tosa.conv_quant<input_zp = -4, weight_zp = 0>} : (tensor<4x4xi8>, tensor<2x4xi8>, tensor<2xi32>) -> tensor<4x2xi32>
  return %y : tensor<4x2xi32>
}
"""
seeds["dyt_affine_views.mlir"] = (
    "// DyT affine sites: into a conv2d through a transpose and a reshape, and into a depthwise\n"
    "// conv2d; a fully_connected in another function.\n" +
    func("f", [("x", I8)], [],
         const("t_lut", TANH40, LUT) + table("t", "x", "t_lut", I8, I8) +
         affine_views("b", "t") + dyt_affine("c", "t").replace(
             '"tosa.conv2d"', '"tosa.depthwise_conv2d"').replace(
             "tensor<2x1x1x4xi8>", "tensor<1x1x4x1xi8>").replace(
             "[[[[-8, -5, 8, 5]]], [[[2, -7, 7, 9]]]]", "[[[[-8], [-5], [8], [5]]]]").replace(
             "[-1100, 851]", "[1, 2, 3, 4]").replace("tensor<2xi32>", "tensor<4xi32>").replace(
             "tensor<1x2x2x2xi32>", I32),
         [("b_conv", "tensor<1x4x1x2xi32>"), ("c_conv", I32)]) + FC)

seeds["rescale_pairs.mlir"] = "// RESCALE pairs to merge: per tensor, per channel, i8 -> i8 -> i8.\n" + func(
    "f", [("x", I8)], [],
    rescale("c0_up", "x", I8, I32, in_zp=5, s=(28,)) +
    rescale("c0_scale", "c0_up", I32, I8, out_zp=-2, m=(1274746293,), s=(35,)) +
    rescale("c1_up", "x", I8, I32, m=(ONE,) * 4, s=(30, 29, 28, 27), per_channel=True) +
    rescale("c1_scale", "c1_up", I32, I8, out_zp=3, m=(1717986918,) * 4, s=(34, 35, 36, 37),
            per_channel=True) +
    rescale("c3_q", "x", I8, I8, in_zp=4, out_zp=-6, m=(1503238554,), s=(31,)) +
    rescale("c3_scale", "c3_q", I8, I8, in_zp=-6, out_zp=1, s=(33,)) +
    rescale("c4_16", "x", I8, I8, in_zp=-20, out_zp=7, m=(19988,), s=(15,), scale32=False) +
    rescale("c4_scale", "c4_16", I8, I8, in_zp=7, m=(ONE,), s=(31,), double_round=True),
    [("c0_scale", I8), ("c1_scale", I8), ("c3_scale", I8), ("c4_scale", I8)])

seeds["table_chain.mlir"] = "// TABLE -> TABLE chains to compose (two and three tables).\n" + func(
    "f", [("x", I8)], [],
    const("t1_lut", TANH, LUT) + table("t1", "x", "t1_lut", I8, I8) +
    const("t2_lut", SQUARE, LUT) + table("t2", "t1", "t2_lut", I8, I8) +
    const("t3_lut", "-3", LUT) + table("t3", "t2", "t3_lut", I8, I8),
    [("t2", I8), ("t3", I8)])

seeds["collapse_chains.mlir"] = (
    "// Chains of RESCALE, ADD, SUB, CLAMP, CAST, MUL and TABLE to collapse into one TABLE.\n" +
    func("f", [("x", I8)], [],
         rescale("d1_in", "x", I8, I32, in_zp=3, s=(26,)) +
         const("d1_kadd", "[[[[100, -200, 300, 0]]]]", "tensor<1x1x1x4xi32>") +
         binary("add", "d1_add", "d1_in", "d1_kadd", I32, "tensor<1x1x1x4xi32>", I32) +
         const("d1_ksub", "-50", "tensor<1x1x1x1xi32>") +
         binary("sub", "d1_sub", "d1_add", "d1_ksub", I32, "tensor<1x1x1x1xi32>", I32) +
         clamp("d1_clamp", "d1_sub", I32, -1500, 1700) +
         rescale("d1_out", "d1_clamp", I32, I8, out_zp=-9, m=(1202590843, 2061584302,
                 1717986918, 1546188227), s=(34, 35, 35, 34), per_channel=True) +
         const("d1_lut", SQUARE, LUT) + table("d1_table", "d1_out", "d1_lut", I8, I8) +
         rescale("d2_sat", "x", I8, I8, in_zp=2, out_zp=1, m=(1986422374,), s=(29,)) +
         clamp("d2_clamp", "d2_sat", I8, -100, 90) +
         f'  %d2_cast = "tosa.cast"(%d2_clamp) : ({I8}) -> {I32} loc("d2_cast")\n' +
         const("d2_k", "1000", "tensor<1x1x1x1xi32>") +
         mul("d2_mul", "d2_cast", "d2_k", I32, "tensor<1x1x1x1xi32>", I32, shift=3) +
         rescale("d2_out", "d2_mul", I32, I8, m=(1374389535,), s=(37,)),
         [("d1_table", I8), ("d2_out", I8)]))

I16 = "tensor<1x2x2x4xi16>"
seeds["int16_table.mlir"] = "// An int16 TABLE (513 entries, i32 out) after an int8 -> int16 RESCALE.\n" + func(
    "f", [("x", I8)], [],
    rescale("r16", "x", I8, I16, in_zp=1, s=(22,)) +
    const("lut16", [max(-32768, min(32767, 128 * i - 32768)) for i in range(513)],
          "tensor<513xi16>") +
    table("t16", "r16", "lut16", I16, I32, entries="tensor<513xi16>"),
    [("t16", I32)])

seeds["bad_table_size.mlir"] = (
    "// LLVM 16 accepts a TABLE of 255 entries; qfold does not (bad input).\n" +
    func("f", [("x", "tensor<4xi8>")], [],
         const("t", "1", "tensor<255xi8>") +
         table("y", "x", "t", "tensor<4xi8>", "tensor<4xi8>", entries="tensor<255xi8>"),
         [("y", "tensor<4xi8>")]))

seeds["bad_rescale_shift.mlir"] = "// A RESCALE shift outside 2..62 (bad input).\n" + func(
    "f", [("x", "tensor<4xi8>")], [],
    rescale("y", "x", "tensor<4xi8>", "tensor<4xi8>", s=(70,)), [("y", "tensor<4xi8>")])

seeds["not_tosa.mlir"] = """// No TOSA: a declaration, arith ops, and a function of two blocks.
module {
  func.func private @decl(i32) -> i32
  func.func @add(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    %1 = func.call @decl(%0) : (i32) -> i32
    return %1 : i32
  }
  func.func @blocks(%c: i1, %x: tensor<4xi8>) -> tensor<4xi8> {
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %t = "tosa.const"() {value = dense<1> : tensor<256xi8>} : () -> tensor<256xi8>
    %y = "tosa.table"(%x, %t) : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
    return %y : tensor<4xi8>
  ^bb2:
    return %x : tensor<4xi8>
  }
}
"""

here = os.path.dirname(os.path.abspath(__file__))
for name, text in seeds.items():
    with open(os.path.join(here, name), "w") as f:
        f.write(text)
print(f"{len(seeds)} seeds")
