#!/usr/bin/python3
"""Writes the TOSA 1.0 modules (MLIR 22's TOSA dialect) that prove qfold's folds on MLIR's own
lowering, executed by mlir-runner (LLVM 22).

    make_modules.py [OUTDIR]          write OUTDIR/*.mlir, *.expected and manifest.json
                                      (default: the modules/ folder next to this script)
    make_modules.py --bench N OUT     write a module of N DyT transformer-like blocks

TOSA 1.0 as MLIR 22 parses it: an op's parameters are constant operands, each made by its own
`"tosa.const"() <{values = ...}>` named after the op (`%<op>_mult`, `_shift`, `_izp`, `_ozp`,
`_lut`, `_azp`, `_bzp`, `_wzp`; `tosa.const_shape` `%<op>_shape` for a reshape): a RESCALE reads
(input, multiplier, shift, input_zp, output_zp) with scale32 / rounding_mode / per_channel /
input_unsigned / output_unsigned attributes, a MUL (input1, input2, shift), a TABLE (input,
table), CONV2D and DEPTHWISE_CONV2D (input, weight, bias, input_zp, weight_zp) with acc_type,
MATMUL (a, b, a_zp, b_zp). Unsigned (uint8) tensors are signless i8 tensors read or written by a
RESCALE with input_unsigned / output_unsigned, and their zero points are stored in signless i8
constants (131 is stored as -125).

Each executed module has a tested function @f whose only argument is the activation (nothing the
sites read at run time is a constant) and a @main that builds an input holding every int8 code on
every channel, calls @f and prints each output: a line with the output's index, then one line
`( v0, v1, ... )` per row of the last dimension, as `vector.print` writes it (int8 outputs are
sign-extended to i32 first, uint8 outputs zero-extended).

NAME.model_folded.mlir (DyT modules) is NAME.mlir with every site that must fold rewritten by
this script, as docs/folds.md describes the rewrite: it must print NAME.expected too, which proves
the folds themselves on the executor, independently of qfold-tosa-opt.

NAME.expected is what @main must print. It is computed here by an independent model of TOSA's
integer semantics written from the TOSA 1.0 specification (v1.0.2 pseudocode: RESCALE with
apply_scale_32/16 and unsigned inputs/outputs, MUL with shift and 32-bit wrap, ADD, SUB, CLAMP,
TABLE int8 and int16 (apply_lookup_s), CAST, CONV2D, DEPTHWISE_CONV2D, MATMUL); it is not derived
from qfold's code, nor from MLIR's lowering. Every value the model computes is checked against
the spec's ERROR_IF and REQUIRE conditions, so a module never relies on behaviour the spec leaves
unpredictable.

The module `params` is not executed: its parameters that TOSA's integer profile requires to be
compile-time constants are computed at run time (function arguments of @f, or a CAST of one),
which only the EXT-DYNAMIC extension allows, and one RESCALE is INEXACT_ROUND. MLIR 22's lowering
refuses INEXACT_ROUND and sign-extends a run-time unsigned zero point, so no executor says what it
prints. It exists for the report: every pass must refuse its sites and leave it unchanged.

manifest.json says, per module, which sites it holds and what qfold-tosa-opt should report for
each: `expect` is a list of {pass, folded, reason}; an empty list means no pass matches the site
(the tool must not report it and must not change it). The ops of a site are named
`%<site>_<role>`, with the same name as their location (`loc("<site>_<role>")`), so a report's
node names identify the site (MLIR's parser keeps locations, not SSA names).

Further entries `<module>.<pass>` hold the expectations of the newer passes (merge rescales,
compose tables, collapse to table), one pass per entry (run alone with --pass, so they do not
depend on the order of passes whose sites overlap): merge_sites, compose_sites and collapse_sites
below find each pass's sites on the module's graph as docs/folds.md states the patterns and
decide the outcomes with the model (every code of every channel); `outcomes` lists what may be
reported where the model cannot decide (folded or not_exact).

Standard library only, deterministic (fixed seed), no network.
"""

import json
import math
import os
import random
import sys

I8 = (-128, 127)
I16 = (-32768, 32767)
I32 = (-(1 << 31), (1 << 31) - 1)
RANGE = {"i8": I8, "i16": I16, "i32": I32}
BITS = {"i8": 8, "i16": 16, "i32": 32}


class SpecError(Exception):
    """A REQUIRE or ERROR_IF of the TOSA spec would be broken: the module is not valid."""


def require(cond, what):
    if not cond:
        raise SpecError(what)


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


def clip(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


def to_storage(v, dt):
    """The signless storage of an unsigned value (uint8 131 is stored as int8 -125)."""
    b = BITS[dt]
    v &= (1 << b) - 1
    return v - (1 << b) if v >= (1 << (b - 1)) else v


def unsigned_of(v, dt):
    """The unsigned value a signless element holds (zero_extend in the spec)."""
    return v & ((1 << BITS[dt]) - 1)


# --- TOSA 1.0 integer semantics (spec v1.0.2 pseudocode: scale_helpers, RESCALE, MUL, ADD, SUB,
# --- CLAMP, TABLE, CAST, CONV2D, DEPTHWISE_CONV2D, MATMUL), on Python's unbounded ints ----------


def apply_scale_32(value, multiplier, shift, double_round):
    require(multiplier >= 0, "apply_scale_32: multiplier < 0")
    require(2 <= shift <= 62, "apply_scale_32: shift outside 2..62")
    require(-(1 << (shift - 1)) <= value < (1 << (shift - 1)), "apply_scale_32: value range")
    rnd = 1 << (shift - 1)
    if double_round and shift > 31:
        rnd += (1 << 30) if value >= 0 else -(1 << 30)
    r = (value * multiplier + rnd) >> shift  # Python >> on ints is a floor (arithmetic) shift
    require(I32[0] <= r <= I32[1], "apply_scale_32: result outside int32")
    return r


def apply_scale_16(value, multiplier, shift):
    require(0 <= multiplier <= 32767, "apply_scale_16: multiplier outside int16 / negative")
    require(2 <= shift <= 62, "apply_scale_16: shift outside 2..62")
    r = (value * multiplier + (1 << (shift - 1))) >> shift
    require(I32[0] <= r <= I32[1], "apply_scale_16: result outside int32")
    return r


def rescale_value(v, channel, a):
    """One element of TOSA 1.0 RESCALE. v is the element as stored (signless: a uint8 input is
    a signless i8 read with zero extension); the result is stored the same way. `a` holds the
    attributes, zero points as stored in their (signless) constants."""
    in_t, out_t = a["in_t"], a["out_t"]
    iu, ou = a["input_unsigned"], a["output_unsigned"]
    izp, ozp = a["input_zp"], a["output_zp"]
    # RESCALE.tosac's ERROR_IFs (uint16 zero points 0 or 32768, stored as -32768)
    require(in_t == "i8" or (in_t == "i16" and iu) or izp == 0,
            "RESCALE: input_zp != 0 for a type other than (u)int8 / uint16")
    require(out_t == "i8" or (out_t == "i16" and ou) or ozp == 0,
            "RESCALE: output_zp != 0 for a type other than (u)int8 / uint16")
    require(not (in_t == "i16" and iu) or izp in (0, -32768), "RESCALE: uint16 input_zp")
    require(not (out_t == "i16" and ou) or ozp in (0, -32768), "RESCALE: uint16 output_zp")
    require(a["scale32"] or a["rounding"] != "DOUBLE_ROUND", "RESCALE: DOUBLE_ROUND without scale32")
    require(not (iu and ou), "RESCALE: input_unsigned and output_unsigned")
    require(not (out_t == "i32" and iu), "RESCALE: unsigned input to int32")
    require(not (in_t == "i32" and ou), "RESCALE: int32 input to an unsigned output")
    require(not (in_t == "i32" and iu) and not (out_t == "i32" and ou), "RESCALE: uint32")
    if iu:
        x = unsigned_of(v, in_t) - unsigned_of(izp, in_t)
    else:
        x = v - izp
    c = channel if a["per_channel"] else 0
    # INEXACT_ROUND may return any value within the spec's bound; SINGLE_ROUND is one of them
    # (only the module `params`, which is not executed, has one)
    if a["scale32"]:
        r = apply_scale_32(x, a["multiplier"][c], a["shift"][c], a["rounding"] == "DOUBLE_ROUND")
    else:
        r = apply_scale_16(x, a["multiplier"][c], a["shift"][c])
    if ou:
        r = r + unsigned_of(ozp, out_t)
        require(I32[0] <= r <= I32[1], "RESCALE: output_zp add overflows int32")
        return to_storage(clip(r, 0, (1 << BITS[out_t]) - 1), out_t)
    r = r + ozp
    require(I32[0] <= r <= I32[1], "RESCALE: output_zp add overflows int32")
    return clip(r, *RANGE[out_t])


def mul_value(a, b, shift, t):
    require(0 <= shift <= 63, "MUL: shift outside 0..63")
    if t != "i32":
        require(shift == 0, "MUL: shift != 0 for a non-int32 type")
    if shift > 0:
        r = (a * b + (1 << (shift - 1))) >> shift
        require(I32[0] <= r <= I32[1], "MUL: shifted product outside int32")
        return r
    return wrap32(a * b)  # apply_mul_s: the low 32 bits (TOSA MUL with shift 0 wraps)


def add_value(a, b):
    r = a + b
    require(I32[0] <= r <= I32[1], "ADD: int32 overflow")
    return r


def sub_value(a, b):
    r = a - b
    require(I32[0] <= r <= I32[1], "SUB: int32 overflow")
    return r


def cast_value(v, out_t):
    # Integer to integer: wider types sign-extend; a narrowing cast here only ever sees values
    # that fit (checked), so no truncation rule is relied on.
    require(RANGE[out_t][0] <= v <= RANGE[out_t][1], "CAST: narrowing a value that does not fit")
    return v


def table_value(v, table):
    require(len(table) == 256, "TABLE: not 256 entries")
    return table[v + 128]


def apply_lookup_s(table, value):
    """The int16 TABLE (513 entries): a 16.7 interpolated value (introduction.adoc)."""
    require(len(table) == 513, "TABLE: not 513 entries")
    v = clip(value, -32768, 32767)
    index = (v + 32768) >> 7
    fraction = v & 0x7F
    base, nxt = table[index], table[index + 1]
    slope = nxt - base
    require(I16[0] <= slope <= I16[1], "TABLE: int16 slope outside int16")
    return (base << 7) + slope * fraction


# --- Tensors: shape + flat row-major data, numpy-style broadcasting of equal ranks ----------


class Tensor:
    def __init__(self, shape, data):
        n = 1
        for d in shape:
            n *= d
        assert len(data) == n, (shape, len(data))
        self.shape, self.data = tuple(shape), list(data)

    def index_of(self, idx):
        k = 0
        for d, i in zip(self.shape, idx):
            k = k * d + (i if d != 1 else 0)
        return k


def indices(shape):
    if not shape:
        yield ()
        return
    for head in indices(shape[:-1]):
        for i in range(shape[-1]):
            yield head + (i,)


def broadcast(*shapes):
    rank = len(shapes[0])
    assert all(len(s) == rank for s in shapes), shapes
    out = []
    for dims in zip(*shapes):
        m = max(dims)
        assert all(d in (1, m) for d in dims), shapes
        out.append(m)
    return tuple(out)


def elementwise(fn, *ts):
    shape = broadcast(*(t.shape for t in ts))
    data = [fn(idx, *(t.data[t.index_of(idx)] for t in ts)) for idx in indices(shape)]
    return Tensor(shape, data)


def out_size(i, k, pad0, pad1):
    """CONV2D / DEPTHWISE_CONV2D's output size (stride 1, dilation 1: idiv_check holds)."""
    return i - 1 + pad0 + pad1 - (k - 1) + 1


def conv2d_nhwc(x, w, bias, pad, input_zp, weight_zp):
    """CONV2D.tosac, stride 1, dilation 1: weight [OC, KH, KW, IC]; acc_t int32 with the spec's
    checked adds and subtractions; the bias added last."""
    n, ih, iw, ic = x.shape
    oc, kh, kw, wic = w.shape
    assert wic == ic and len(bias.data) == oc
    pt, pb, pl, pr = pad
    oh, ow = out_size(ih, kh, pt, pb), out_size(iw, kw, pl, pr)
    out = []
    for b in range(n):
        for y in range(oh):
            for xo in range(ow):
                for o in range(oc):
                    acc = 0
                    for ky in range(kh):
                        iy = y + ky - pt
                        if not 0 <= iy < ih:
                            continue  # padding: value 0, its product 0
                        for kx in range(kw):
                            ix = xo + kx - pl
                            if not 0 <= ix < iw:
                                continue
                            for c in range(ic):
                                v = sub_value(x.data[((b * ih + iy) * iw + ix) * ic + c], input_zp)
                                wv = sub_value(w.data[((o * kh + ky) * kw + kx) * ic + c],
                                               weight_zp)
                                acc = add_value(acc, wrap32(v * wv))
                    out.append(add_value(acc, bias.data[o]))
    return Tensor((n, oh, ow, oc), out)


def depthwise_nhwc(x, w, bias, pad, input_zp, weight_zp):
    """DEPTHWISE_CONV2D.tosac, stride 1, dilation 1: weight [KH, KW, C, M], output channel
    c * M + m."""
    n, ih, iw, ch = x.shape
    kh, kw, wc, mm = w.shape
    assert wc == ch and len(bias.data) == ch * mm
    pt, pb, pl, pr = pad
    oh, ow = out_size(ih, kh, pt, pb), out_size(iw, kw, pl, pr)
    out = []
    for b in range(n):
        for y in range(oh):
            for xo in range(ow):
                for c in range(ch):
                    for m in range(mm):
                        acc = 0
                        for ky in range(kh):
                            iy = y + ky - pt
                            if not 0 <= iy < ih:
                                continue
                            for kx in range(kw):
                                ix = xo + kx - pl
                                if not 0 <= ix < iw:
                                    continue
                                v = sub_value(x.data[((b * ih + iy) * iw + ix) * ch + c], input_zp)
                                wv = sub_value(w.data[((ky * kw + kx) * ch + c) * mm + m],
                                               weight_zp)
                                acc = add_value(acc, wrap32(v * wv))
                        out.append(add_value(acc, bias.data[c * mm + m]))
    return Tensor((n, oh, ow, ch * mm), out)


def matmul(a, b, a_zp, b_zp):
    """MATMUL.tosac, int8 x int8 -> int32 (zero points allowed for int8: the v1.0.2 pseudocode's
    ERROR_IF reads `is_same<in_t,i8_t>` where its comment and the argument descriptions say the
    opposite; the specification's main branch has it as `!is_same`)."""
    n, h, c = a.shape
    n2, c2, w = b.shape
    assert n == n2 and c == c2
    out = []
    for k in range(n):
        for y in range(h):
            for x in range(w):
                acc = 0
                for i in range(c):
                    v1 = sub_value(a.data[(k * h + y) * c + i], a_zp)
                    v2 = sub_value(b.data[(k * c + i) * w + x], b_zp)
                    acc = add_value(acc, wrap32(v1 * v2))
                out.append(acc)
    return Tensor((n, h, w), out)


# --- Scale derivation (ExecuTorch's _compute_multiplier_and_shift, restated) ------------------


def multiplier_and_shift(scale, bits=32):
    offset = 31 if bits == 32 else 15
    mant, exp = math.frexp(scale)
    m = round(mant * (1 << offset))  # Python round: half to even
    if m == (1 << offset):
        m //= 2
        exp += 1
    shift = offset - exp
    if shift > 62:
        m >>= min(31, shift - 62)
        shift = 62
    assert 0 <= m < (1 << offset) and 2 <= shift <= 62, (scale, m, shift)
    return m, shift


def round_half_even(x):
    return round(x)


def tanh_table(in_scale, in_zp, out_scale, out_zp, lo=-128, hi=127):
    t = []
    for code in range(-128, 128):
        y = math.tanh((code - in_zp) * in_scale)
        t.append(clip(round_half_even(y / out_scale) + out_zp, lo, hi))
    return t


# --- The module builder: emits MLIR text and evaluates every op on the fixed input ----------


def ttype(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def dense(shape, dt, data, splat=True):
    if splat and all(v == data[0] for v in data):
        return "dense<%d> : %s" % (data[0], ttype(shape, dt))

    def nest(level, off):
        if level == len(shape):
            return str(data[off])
        step = 1
        for d in shape[level + 1:]:
            step *= d
        return "[" + ", ".join(nest(level + 1, off + i * step) for i in range(shape[level])) + "]"

    return "dense<%s> : %s" % (nest(0, 0), ttype(shape, dt))


def bool_attr(b):
    return "true" if b else "false"


class Value:
    def __init__(self, name, dt, tensor):
        self.name, self.dt, self.t = name, dt, tensor
        self.kind, self.ins, self.params = "value", [], []
        self.unsigned = False  # a uint8 tensor (written by a RESCALE with output_unsigned)

    @property
    def shape(self):
        return self.t.shape

    @property
    def type(self):
        if self.dt == "shape":
            return "!tosa.shape<%d>" % len(self.t.data)
        return ttype(self.shape, self.dt)

    def runtime_params(self):
        """The parameters (operands TOSA's integer profile requires to be constant) that are
        not constants here."""
        return [p for _, p in self.params if p.kind not in ("const", "const_shape")]


def input_codes(shape):
    """Every int8 code on every channel: element [.., j, c] (j the flattened index of the middle
    dims) holds the int8 whose two's complement bits are (j + 97 c) mod 256, a different order of
    the 256 codes on each channel."""
    rows = 1
    for d in shape[:-1]:
        rows *= d
    assert rows % 256 == 0 or rows == 256, shape
    ch = shape[-1]
    return Tensor(shape, [((j + 97 * c + 128) % 256) - 128 for j in range(rows) for c in range(ch)])


class Module:
    def __init__(self, name, in_shape, fold=False, executed=True):
        self.name = name
        # fold: emit each site that must fold in its folded form, rewritten here on the model
        # (docs/folds.md's rewrite, not qfold's code): a module the executor can compare with the
        # original before, and independently of, qfold-tosa-opt.
        self.fold = fold
        # executed: lowered and run by the tests (a @main, an .expected file); not for `params`
        self.executed = executed
        # the passes the manifest entry's expectations are about (the tool runs with --pass for
        # each): passes added to qfold later do not change what this entry checks
        self.passes = [ALPHA, AFFINE]
        # newer passes whose expectations this module's entries leave out (see module_unsigned)
        self.skip_models = set()
        self.lines = []
        self.x = Value("%x", "i8", input_codes(in_shape))
        self.args = []  # further arguments of @f (run-time parameters, module params)
        self.outputs = []
        self.sites = []
        self.names = set()
        self.tamper = None
        # the graph, for the structural part of the newer passes' expectations (new_pass_entries)
        self.x.kind, self.x.ins = "input", []
        self.nodes = [self.x]
        # extra manifest entries (one per newer pass), filled by main()
        self.entries = []

    def mark(self):
        return (len(self.lines), set(self.names), len(self.nodes))

    def rollback(self, mark):
        """Drop what was emitted since mark (the values stay evaluated)."""
        del self.lines[mark[0]:]
        self.names = mark[1]
        del self.nodes[mark[2]:]

    def fresh(self, name):
        assert name not in self.names, name
        self.names.add(name)
        return "%" + name

    def emit(self, name, op, ins, params, attrs, dt, tensor):
        """One TOSA op: its data operands `ins`, then its parameter operands `params` (role,
        Value), in the op's operand order. Printed in MLIR 22's custom form, which for these ops
        is `op operands {attrs} : (operand types) -> result type`."""
        v = Value(self.fresh(name), dt, tensor)
        v.kind, v.ins, v.params = op[len("tosa."):], list(ins), list(params)
        self.nodes.append(v)
        operands = list(ins) + [p for _, p in params]
        a = " {" + attrs + "}" if attrs else ""
        self.lines.append('  %s = %s %s%s : (%s) -> %s loc("%s")'
                          % (v.name, op, ", ".join(o.name for o in operands), a,
                             ", ".join(o.type for o in operands), v.type, name))
        return v

    # constants and arguments -------------------------------------------------------------------
    def const(self, name, shape, dt, data):
        t = Tensor(shape, data)
        lo, hi = RANGE[dt]
        assert all(lo <= d <= hi for d in data), (name, data)
        v = Value(self.fresh(name), dt, t)
        v.kind = "const"
        self.nodes.append(v)
        self.lines.append('  %s = "tosa.const"() <{values = %s}> : () -> %s loc("%s")'
                          % (v.name, dense(shape, dt, data), v.type, name))
        return v

    def const_shape(self, name, values):
        v = Value(self.fresh(name), "shape", Tensor((len(values),), values))
        v.kind = "const_shape"
        self.nodes.append(v)
        self.lines.append('  %s = tosa.const_shape {values = %s} : () -> %s loc("%s")'
                          % (v.name, dense((len(values),), "index", values, splat=False), v.type,
                             name))
        return v

    def arg(self, name, shape, dt, data):
        """A further argument of @f: a parameter computed at run time (its value here stands for
        one run; the module is not executed)."""
        assert not self.executed
        v = Value(self.fresh(name), dt, Tensor(shape, data))
        v.kind = "arg"
        self.args.append(v)
        return v

    def param(self, name, given, shape, dt, data):
        """A parameter operand: its own constant, or `given` (a run-time value)."""
        if given is not None:
            assert given.shape == tuple(shape) and given.dt == dt, (name, given.shape, given.dt)
            return given
        return self.const(name, shape, dt, data)

    # ops -------------------------------------------------------------------------------------
    def rescale(self, name, x, out_t, scales=None, mult=None, shift=None, input_zp=0, output_zp=0,
                double_round=False, scale32=True, per_channel=None, input_unsigned=False,
                output_unsigned=False, rounding=None, runtime=None):
        """TOSA 1.0 RESCALE. Zero points are the values as the (unsigned) type reads them: an
        unsigned zero point of 131 is stored as -125. runtime: {role: Value} parameters computed
        at run time instead of constants (mult, shift, izp, ozp)."""
        runtime = runtime or {}
        if mult is None:
            pairs = [multiplier_and_shift(s, 32 if scale32 else 16) for s in scales]
            mult, shift = [p[0] for p in pairs], [p[1] for p in pairs]
        if per_channel is None:
            per_channel = len(mult) > 1
        rounding = rounding or ("DOUBLE_ROUND" if double_round else "SINGLE_ROUND")
        izp = to_storage(input_zp, x.dt) if input_unsigned else input_zp
        ozp = to_storage(output_zp, out_t) if output_unsigned else output_zp
        if "izp" in runtime:
            izp = runtime["izp"].t.data[0]
        if "ozp" in runtime:
            ozp = runtime["ozp"].t.data[0]
        if "mult" in runtime:
            mult = list(runtime["mult"].t.data)
        if "shift" in runtime:
            shift = list(runtime["shift"].t.data)
        a = dict(in_t=x.dt, out_t=out_t, input_zp=izp, output_zp=ozp, multiplier=mult,
                 shift=shift, scale32=scale32, rounding=rounding, per_channel=per_channel,
                 input_unsigned=input_unsigned, output_unsigned=output_unsigned)
        nc = len(mult)
        if per_channel:
            assert nc == x.shape[-1]
        else:
            assert nc == 1
        t = elementwise(lambda idx, v: rescale_value(v, idx[-1], a), x.t)
        params = [
            ("multiplier", self.param(name + "_mult", runtime.get("mult"), (nc,),
                                      "i32" if scale32 else "i16", mult)),
            ("shift", self.param(name + "_shift", runtime.get("shift"), (nc,), "i8", shift)),
            ("input_zp", self.param(name + "_izp", runtime.get("izp"), (1,), x.dt, [izp])),
            ("output_zp", self.param(name + "_ozp", runtime.get("ozp"), (1,), out_t, [ozp])),
        ]
        attrs = ("input_unsigned = %s, output_unsigned = %s, per_channel = %s, rounding_mode = %s, "
                 "scale32 = %s" % (bool_attr(input_unsigned), bool_attr(output_unsigned),
                                   bool_attr(per_channel), rounding, bool_attr(scale32)))
        v = self.emit(name, "tosa.rescale", [x], params, attrs, out_t, t)
        v.attrs = a
        v.unsigned = output_unsigned
        return v

    def mul(self, name, a, b, shift=0, runtime_shift=None):
        assert a.dt == b.dt
        s = runtime_shift.t.data[0] if runtime_shift is not None else shift
        t = elementwise(lambda idx, p, q: mul_value(p, q, s, a.dt), a.t, b.t)
        sh = self.param(name + "_shift", runtime_shift, (1,), "i8", [shift])
        v = self.emit(name, "tosa.mul", [a, b], [("shift", sh)], "", "i32", t)
        v.mul_shift = s
        return v

    def add(self, name, a, b):
        assert a.dt == b.dt == "i32"
        return self.emit(name, "tosa.add", [a, b], [], "", "i32",
                         elementwise(lambda idx, p, q: add_value(p, q), a.t, b.t))

    def sub(self, name, a, b):
        assert a.dt == b.dt == "i32"
        return self.emit(name, "tosa.sub", [a, b], [], "", "i32",
                         elementwise(lambda idx, p, q: sub_value(p, q), a.t, b.t))

    def clamp(self, name, x, lo, hi):
        # TOSA 1.0 CLAMP: int8 and int16 only (an int32 CLAMP is not in the integer profile)
        assert x.dt in ("i8", "i16") and lo <= hi
        attrs = "max_val = %d : %s, min_val = %d : %s" % (hi, x.dt, lo, x.dt)
        v = self.emit(name, "tosa.clamp", [x], [], attrs, x.dt,
                      elementwise(lambda idx, v: clip(v, lo, hi), x.t))
        v.bounds = (lo, hi)
        return v

    def table(self, name, x, values, runtime_table=None):
        """int8 TABLE (256 int8 entries) or int16 TABLE (513 int16 entries, int32 output)."""
        if runtime_table is not None:
            values = list(runtime_table.t.data)
        if x.dt == "i8":
            assert len(values) == 256
            fn, out_t = (lambda idx, v: table_value(v, values)), "i8"
        else:
            assert x.dt == "i16" and len(values) == 513
            fn, out_t = (lambda idx, v: apply_lookup_s(values, v)), "i32"
        tab = self.param(name + "_lut", runtime_table, (len(values),), x.dt, values)
        v = self.emit(name, "tosa.table", [x], [("table", tab)], "", out_t, elementwise(fn, x.t))
        v.lut = list(values)
        return v

    def cast(self, name, x, out_t):
        return self.emit(name, "tosa.cast", [x], [], "", out_t,
                         elementwise(lambda idx, v: cast_value(v, out_t), x.t))

    def reshape(self, name, x, shape):
        t = Tensor(shape, x.t.data)
        s = self.const_shape(name + "_shape", list(shape))
        return self.emit(name, "tosa.reshape", [x], [("shape", s)], "", x.dt, t)

    def conv(self, name, x, w, b, pad, input_zp, weight_zp, depthwise=False, runtime=None):
        """CONV2D (weight [OC, KH, KW, IC]) or DEPTHWISE_CONV2D (weight [KH, KW, C, M]), stride
        and dilation 1, int32 accumulator. runtime: {"izp"|"wzp": Value}."""
        runtime = runtime or {}
        if "izp" in runtime:
            input_zp = runtime["izp"].t.data[0]
        if "wzp" in runtime:
            weight_zp = runtime["wzp"].t.data[0]
        fn = depthwise_nhwc if depthwise else conv2d_nhwc
        t = fn(x.t, w.t, b.t, pad, input_zp, weight_zp)
        izp = self.param(name + "_izp", runtime.get("izp"), (1,), x.dt, [input_zp])
        wzp = self.param(name + "_wzp", runtime.get("wzp"), (1,), w.dt, [weight_zp])
        attrs = ("acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: %s>, "
                 "stride = array<i64: 1, 1>" % ", ".join(map(str, pad)))
        op = "tosa.depthwise_conv2d" if depthwise else "tosa.conv2d"
        v = self.emit(name, op, [x, w, b], [("input_zp", izp), ("weight_zp", wzp)], attrs, "i32",
                      t)
        v.conv = dict(pad=list(pad), input_zp=input_zp, weight_zp=weight_zp, depthwise=depthwise)
        return v

    def matmul(self, name, a, b, a_zp, b_zp):
        t = matmul(a.t, b.t, a_zp, b_zp)
        azp = self.const(name + "_azp", (1,), a.dt, [a_zp])
        bzp = self.const(name + "_bzp", (1,), b.dt, [b_zp])
        return self.emit(name, "tosa.matmul", [a, b], [("a_zp", azp), ("b_zp", bzp)], "", "i32", t)

    # sites and outputs -------------------------------------------------------------------------
    def site(self, sid, description, expect, outcome=None, model=None):
        """expect: [] (no pass matches) or [(pass, folded, reason)]. outcome: what the model
        decided the fold must do (affine sites), checked against expect."""
        if outcome is not None:
            folded = outcome in ("fold", "bypass_affine", "bypass_gamma")
            assert [(f, r) for _, f, r in expect] == [(folded, None if folded else outcome)], \
                (sid, outcome, expect)
        extra = {"naive_merge": model} if model is not None else {}
        self.sites.append({
            "site": sid,
            "description": description,
            **extra,
            "expect": [{"pass": p, "folded": f, **({"reason": r} if r else {})}
                       for p, f, r in expect],
        })

    def output(self, v):
        self.outputs.append(v)

    # text --------------------------------------------------------------------------------------
    def text(self):
        rtypes = ", ".join(o.type for o in self.outputs)
        res = ", ".join(o.name for o in self.outputs)
        args = ", ".join("%s: %s" % (a.name, a.type) for a in [self.x] + self.args)
        out = ["// Generated by tests/tosa/make_modules.py (%s): do not edit." % self.name]
        if self.executed:
            out += ["// @f holds the sites; @main feeds it every int8 code on every channel and "
                    "prints",
                    "// each output: its index, then one line per row of the last dimension."]
        else:
            out += ["// @f holds the sites, whose parameters are computed at run time (arguments "
                    "of @f):",
                    "// valid TOSA 1.0 only with EXT-DYNAMIC; not executed (no @main)."]
        out.append("func.func @f(%s) -> (%s) {" % (args, rtypes))
        out += self.lines
        out.append("  return %s : %s" % (res, rtypes))
        out.append("}")
        if self.executed:
            out += self.main_text()
        return "\n".join(out) + "\n"

    def main_text(self):
        s = self.x.shape
        ins = ", ".join("%%i%d: index" % k for k in range(len(s)))
        mid = len(s) - 1
        # j = flattened index of dims 1..rank-2 (dim 0 is 1)
        body = ["  %in = tensor.generate {", "  ^bb0(%s):" % ins]
        acc = "%i1"
        for k in range(2, mid):
            body.append("    %%d%d = arith.constant %d : index" % (k, s[k]))
            body.append("    %%m%d = arith.muli %s, %%d%d : index" % (k, acc, k))
            body.append("    %%j%d = arith.addi %%m%d, %%i%d : index" % (k, k, k))
            acc = "%%j%d" % k
        body += ["    %c97 = arith.constant 97 : index",
                 "    %%ck = arith.muli %%i%d, %%c97 : index" % mid,
                 "    %%s = arith.addi %s, %%ck : index" % acc,
                 "    %v = arith.index_cast %s : index to i32",
                 "    %b = arith.trunci %v : i32 to i8",
                 "    tensor.yield %b : i8",
                 "  } : %s" % self.x.type]
        n = len(self.outputs)
        lhs = "%r" if n == 1 else "%%r:%d" % n
        rtypes = ", ".join(o.type for o in self.outputs)
        body.append("  %s = call @f(%%in) : (%s) -> (%s)" % (lhs, self.x.type, rtypes))
        body += ["  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
                 "  %z32 = arith.constant 0 : i32", "  %z8 = arith.constant 0 : i8"]
        for k, o in enumerate(self.outputs):
            r = "%r" if n == 1 else "%%r#%d" % k
            shape = o.shape
            rows = 1
            for d in shape[:-1]:
                rows *= d
            last = shape[-1]
            body.append("  %%k%d = arith.constant %d : i32" % (k, k))
            body.append("  vector.print %%k%d : i32" % k)
            src = r
            if len(shape) != 2:
                grp = "[[%s], [%d]]" % (", ".join(str(i) for i in range(len(shape) - 1)),
                                        len(shape) - 1)
                body.append("  %%o%d = tensor.collapse_shape %s %s : %s into %s"
                            % (k, r, grp, o.type, ttype((rows, last), o.dt)))
                src = "%%o%d" % k
            body.append("  %%n%d = arith.constant %d : index" % (k, rows))
            body.append("  scf.for %%q%d = %%c0 to %%n%d step %%c1 {" % (k, k))
            vt = "vector<%dx%s>" % (last, o.dt)
            pad = "%z8" if o.dt == "i8" else "%z32"
            body.append("    %%v%d = vector.transfer_read %s[%%q%d, %%c0], %s : %s, %s"
                        % (k, src, k, pad, ttype((rows, last), o.dt), vt))
            pv = "%%v%d" % k
            if o.dt != "i32":
                ext = "arith.extui" if o.unsigned else "arith.extsi"
                body.append("    %%e%d = %s %%v%d : %s to vector<%dxi32>"
                            % (k, ext, k, vt, last))
                pv = "%%e%d" % k
            body.append("    vector.print %s : vector<%dxi32>" % (pv, last))
            body.append("  }")
        return ["", "func.func @main() {"] + body + ["  return", "}"]

    def expected(self):
        out = []
        for k, o in enumerate(self.outputs):
            out.append(str(k))
            last = o.shape[-1]
            d = [unsigned_of(v, o.dt) for v in o.t.data] if o.unsigned else o.t.data
            for r in range(len(d) // last):
                out.append("( " + ", ".join(str(v) for v in d[r * last:(r + 1) * last]) + " )")
        return "\n".join(out) + "\n"


# --- Site builders -----------------------------------------------------------------------------

ALPHA = "fold_dyt_alpha"
BLOCKS = 16  # DyT blocks in dyt_blocks.mlir
AFFINE = "fold_dyt_affine"
ONE = dict(mult=[1 << 30], shift=[30])  # scale 1.0 exactly


def dyt_alpha(m, sid, x, alpha_code, act=None, alpha_r=None, out=None, mul_shift=0,
              tanh=(0.03, 0, 1.0 / 128, 0), alpha_shape=None, alpha_source=None,
              per_channel_act=False, runtime_shift=None):
    """ExecuTorch Arm's DyT lowering: RESCALE(act)->i32, RESCALE(alpha)->i32, MUL, RESCALE->i8,
    TABLE(tanh). Returns the nodes by role."""
    mark = m.mark()
    act = act or dict(scales=[1.0], input_zp=-3)
    alpha_r = alpha_r or dict(scales=[1.0])
    out = out or dict(scales=[0.0166], output_zp=2)
    ch = x.shape[-1]
    if per_channel_act:
        act = dict(scales=[1.0 + 0.25 * c for c in range(ch)], input_zp=act.get("input_zp", 0))
    r_act = m.rescale(sid + "_act", x, "i32", **act)
    if alpha_source is None:
        ashape = alpha_shape or (1,) * len(x.shape)
        n = 1
        for d in ashape:
            n *= d
        codes = alpha_code if isinstance(alpha_code, list) else [alpha_code] * n
        alpha = m.const(sid + "_alpha", ashape, "i8", codes)
    else:
        alpha = alpha_source
    r_alpha = m.rescale(sid + "_alpha32", alpha, "i32", **alpha_r)
    prod = m.mul(sid + "_mul", r_act, r_alpha, mul_shift, runtime_shift)
    r_out = m.rescale(sid + "_to_tanh", prod, "i8", **out)
    tin_scale, tin_zp, tout_scale, tout_zp = tanh
    table = m.table(sid + "_tanh", r_out, tanh_table(tin_scale, tin_zp, tout_scale, tout_zp))
    if m.fold:
        # one TABLE indexed by the activation code: entry c + 128 is the pattern evaluated on
        # code c by the model (per tensor: channel 0 stands for all)
        a32 = r_alpha.t.data[0]
        folded = [table.lut[rescale_value(mul_value(rescale_value(c, 0, r_act.attrs), a32,
                                                    prod.mul_shift, "i32"), 0, r_out.attrs) + 128]
                  for c in range(-128, 128)]
        for code, v in zip(x.t.data, table.t.data):  # and it agrees with the model's data
            assert folded[code + 128] == v
        m.rollback(mark)
        table = m.table(sid + "_folded", x, folded)
    return dict(act=r_act, mul=prod, out=r_out, table=table)


def module_dyt_alpha(fold=False):
    m = Module("dyt_alpha", (1, 256, 4), fold)
    x = m.x
    # ExecuTorch-like scales: activation 0.05 (zp -3) into int32 at 2^-10 relative, alpha 0.5
    # as code 64 at scale 1/128, tanh input scale 0.03 (zp 2).
    s = dyt_alpha(m, "a0", x, 64, act=dict(scales=[0.05 / (0.05 / 1024)], input_zp=-3),
                  alpha_r=dict(scales=[1.0]), out=dict(scales=[(0.05 / 1024) / 128 / 0.03],
                                                       output_zp=2), tanh=(0.03, 2, 1 / 128, 0))
    m.output(s["table"])
    m.site("a0", "DyT alpha, ExecuTorch-like scales (activation zp -3, tanh input zp 2)",
           [(ALPHA, True, None)])
    # The negative test changes one entry of this table, one that some input code reaches.
    m.tamper = {"value": "%a0_tanh_lut", "index": s["out"].t.data[0] + 128}
    # negative alpha code, double rounding on the output RESCALE (shift > 31)
    s = dyt_alpha(m, "a1", x, -37, act=dict(scales=[1.0], input_zp=5), alpha_r=dict(scales=[1.0]),
                  out=dict(scales=[0.0123], output_zp=-7, double_round=True),
                  tanh=(0.041, -7, 1 / 128, 1))
    m.output(s["table"])
    m.site("a1", "DyT alpha, negative alpha, DOUBLE_ROUND output RESCALE",
           [(ALPHA, True, None)])
    # the MUL wraps: (x - zp) * 2^13 times alpha 2^10 * 120 leaves int32; TOSA MUL with shift 0
    # keeps the low 32 bits, and the output RESCALE (shift >= 32) accepts every int32
    s = dyt_alpha(m, "a2", x, 120, act=dict(scales=[8192.0], input_zp=1),
                  alpha_r=dict(scales=[1024.0]), out=dict(scales=[2.0 ** -26], output_zp=0),
                  tanh=(0.02, 0, 1 / 128, 0))
    m.output(s["table"])
    m.site("a2", "DyT alpha whose MUL wraps to 32 bits (shift 0)", [(ALPHA, True, None)])
    # MUL with a shift (rounded, stays in int32), 16-bit RESCALE multiplier on the activation
    s = dyt_alpha(m, "a3", x, 99, act=dict(scales=[300.0], scale32=False, input_zp=0),
                  alpha_r=dict(scales=[1.0]), mul_shift=7,
                  out=dict(scales=[0.011], output_zp=-1), tanh=(0.05, -1, 1 / 100, 3))
    m.output(s["table"])
    m.site("a3", "DyT alpha, MUL shift 7, scale32 = false activation RESCALE",
           [(ALPHA, True, None)])
    # a saturating output RESCALE (codes clamp at -128 and 127 before the table)
    s = dyt_alpha(m, "a4", x, 127, act=dict(scales=[1.0], input_zp=0), alpha_r=dict(scales=[1.0]),
                  out=dict(scales=[0.031], output_zp=10), tanh=(0.08, 10, 1 / 128, 0))
    m.output(s["table"])
    m.site("a4", "DyT alpha, saturating output RESCALE", [(ALPHA, True, None)])
    return m


def affine_chain(m, sid, x, gamma, beta, table=None, zta=1, zgo=1, zaa=0, zao=-4, go_scale=1.0,
                 ta_scale=1.0, g_scale=1.0, table_node=None):
    """TABLE -> MUL(RESCALE_i32(table), RESCALE_i32(gamma)) -> RESCALE_i8 -> ADD(RESCALE_i32,
    RESCALE_i32(beta)) -> RESCALE_i8. The TABLE reads x, or is table_node. Returns the nodes by
    role, the mark before the chain's own nodes and the arguments a rewrite needs."""
    ch = x.shape[-1]
    if table_node is None:
        mark = m.mark()
        tab_values = table or [clip(round(40 * math.tanh((c - 3) * 0.03)), -128, 127)
                               for c in range(-128, 128)]
        tab = m.table(sid + "_table", x, tab_values)
    else:
        tab = table_node
        tab_values = tab.lut
        mark = m.mark()
    r_ta = m.rescale(sid + "_t32", tab, "i32", scales=[ta_scale], input_zp=zta)
    g = m.const(sid + "_gamma", (1, 1, 1, ch), "i8", gamma)
    r_g = m.rescale(sid + "_g32", g, "i32", scales=[g_scale])
    prod = m.mul(sid + "_mul", r_ta, r_g, 0)
    r_go = m.rescale(sid + "_scaled", prod, "i8", scales=[go_scale], output_zp=zgo)
    r_aa = m.rescale(sid + "_s32", r_go, "i32", scales=[1.0], input_zp=zaa)
    b = m.const(sid + "_beta", (1, 1, 1, ch), "i8", beta)
    r_b = m.rescale(sid + "_b32", b, "i32", scales=[1.0])
    s = m.add(sid + "_add", r_aa, r_b)
    r_ao = m.rescale(sid + "_sum", s, "i8", scales=[1.0], output_zp=zao)
    return dict(table=tab, t32=r_ta, gamma=g, g32=r_g, mul=prod, scaled=r_go, s32=r_aa, beta=b,
                b32=r_b, add=s, sum=r_ao, mark=mark, tab_values=tab_values, zta=zta, zao=zao,
                zaa=zaa, beta_values=beta, table_node=table_node)


def affine_site(m, sid, x, gamma, beta, weights, bias, pad, wzp=0, may_fold=True, k=3,
                depthwise=False, runtime=None, **chain):
    """affine_chain -> CONV2D (k x k, weight [OC, k, k, C]) or DEPTHWISE_CONV2D (weight
    [k, k, C, M], M = len(bias) / C). Returns the nodes by role and the model's outcome."""
    ch = x.shape[-1]
    c = affine_chain(m, sid, x, gamma, beta, **chain)
    oc = len(bias)
    wshape = (k, k, ch, oc // ch) if depthwise else (oc, k, k, ch)
    w = m.const(sid + "_w", wshape, "i8", weights)
    bb = m.const(sid + "_bias", (oc,), "i32", bias)
    conv = m.conv(sid + "_conv", c["sum"], w, bb, pad, c["zao"], wzp, depthwise, runtime)
    outcome, w2, b2 = affine_outcome(c, w, bb, conv)
    tab = c["table"]
    if m.fold and may_fold and outcome in ("fold", "bypass_affine", "bypass_gamma"):
        m.rollback(c["mark"])
        if c["table_node"] is None:
            tab = m.table(sid + "_table", x, c["tab_values"])
        s, zao = c["add"], c["zao"]
        if outcome == "bypass_gamma":  # beta's RESCALE reads the table
            r_aa = m.rescale(sid + "_s32", tab, "i32", scales=[1.0], input_zp=c["zaa"])
            b = m.const(sid + "_beta", (1, 1, 1, ch), "i8", c["beta_values"])
            r_b = m.rescale(sid + "_b32", b, "i32", scales=[1.0])
            s = m.add(sid + "_add", r_aa, r_b)
            r_ao = m.rescale(sid + "_sum", s, "i8", scales=[1.0], output_zp=zao)
            src, izp, wv, bv = r_ao, zao, weights, bias
        elif outcome == "bypass_affine":  # the conv reads the table
            src, izp, wv, bv = tab, zao, weights, bias
        else:  # the conv reads the table, with the table's zero point and folded weights, bias
            src, izp, wv, bv = tab, c["zta"], w2, b2
        w = m.const(sid + "_w", wshape, "i8", wv)
        bb = m.const(sid + "_bias", (oc,), "i32", bv)
        folded = m.conv(sid + "_conv", src, w, bb, pad, izp, wzp, depthwise)
        assert folded.t.data == conv.t.data
        conv = folded
        c["add"] = s
    return dict(table=tab, add=c["add"], sum=c["sum"], conv=conv, scaled=c["scaled"],
                outcome=outcome)


def weight_channels(w, depthwise):
    """Per weight element (flat index): (input channel, output channel)."""
    if depthwise:  # [KH, KW, C, M]: output channel c * M + m
        _, _, ch, mm = w.shape
        return [((i // mm) % ch, ((i // mm) % ch) * mm + i % mm) for i in range(len(w.t.data))]
    oc, kh, kw, ic = w.shape  # [OC, KH, KW, IC]
    return [(i % ic, i // (kh * kw * ic)) for i in range(len(w.t.data))]


def affine_outcome(c, w, bb, conv):
    """What the DyT affine fold (docs/folds.md) must do with this site: the chain evaluated here,
    with the model's TOSA arithmetic, on every entry of the table and every channel, gives the
    per-channel maps table code -> gamma side (g) -> conv input (a) the decision rests on. For a
    fold or a bypass, also a proof on the model: the rewritten convolution, evaluated on the
    table's output, gives the original convolution's output."""
    tab = c["table"]
    tzp = c["zta"]
    cv = conv.conv
    pad, azp, wzp, dw = cv["pad"], cv["input_zp"], cv["weight_zp"], cv["depthwise"]
    conv_fn = depthwise_nhwc if dw else conv2d_nhwc
    ch = tab.shape[-1]
    tv = sorted(set(tab.lut))
    gm, am = [], []  # per channel: lists over tv
    for ci in range(ch):
        g32 = rescale_value(c["gamma"].t.data[ci], ci, c["g32"].attrs)
        b32 = rescale_value(c["beta"].t.data[ci], ci, c["b32"].attrs)
        gs, as_ = [], []
        for t in tv:
            t32 = rescale_value(t, ci, c["t32"].attrs)
            if not I32[0] <= t32 * g32 <= I32[1]:
                return "overflow", None, None
            gv = rescale_value(t32 * g32, ci, c["scaled"].attrs)
            av = rescale_value(add_value(rescale_value(gv, ci, c["s32"].attrs), b32), ci,
                               c["sum"].attrs)
            gs.append(gv)
            as_.append(av)
        gm.append(gs)
        am.append(as_)
    if all(am[ci] == tv for ci in range(ch)):
        ref = conv_fn(tab.t, w.t, bb.t, pad, azp, wzp)
        assert ref.data == conv.t.data, "bypass_affine is not exact on the model"
        return "bypass_affine", None, None
    if any(pad):
        return ("bypass_gamma" if all(gm[ci] == tv for ci in range(ch)) else "padding"), None, None
    lines = []
    for ci in range(ch):
        pts = list(zip(tv, am[ci]))
        if len(pts) == 1:
            k = 0
        else:
            dx, dy = pts[1][0] - pts[0][0], pts[1][1] - pts[0][1]
            if dy % dx:
                return "not_exact", None, None
            k = dy // dx
        off = pts[0][1] - azp - k * (pts[0][0] - tzp)
        if any(y - azp != k * (x - tzp) + off for x, y in pts):
            return "not_exact", None, None
        lines.append((k, off))
    chans = weight_channels(w, dw)
    w2 = [(v - wzp) * lines[chans[i][0]][0] + wzp for i, v in enumerate(w.t.data)]
    if any(not I8[0] <= v <= I8[1] for v in w2):
        return "out_of_range", None, None
    b2 = list(bb.t.data)
    for i, v in enumerate(w.t.data):
        ic, o = chans[i]
        b2[o] += (v - wzp) * lines[ic][1]
    if any(not I32[0] <= v <= I32[1] for v in b2):
        return "out_of_range", None, None
    ref = conv_fn(tab.t, Tensor(w.shape, w2), Tensor(bb.shape, b2), pad, tzp, wzp)
    assert ref.data == conv.t.data, "the folded convolution is not exact on the model"
    return "fold", w2, b2


def module_dyt_affine(fold=False):
    rng = random.Random(20261201)
    m = Module("dyt_affine", (1, 16, 16, 4), fold)
    x = m.x
    oc = 3

    def w_small(lim=12, n=oc * 9 * 4):
        return [rng.randint(-lim, lim) for _ in range(n)]

    def bias(n=oc):
        return [rng.randint(-5000, 5000) for _ in range(n)]

    P0, P1 = [0, 0, 0, 0], [1, 1, 1, 1]
    # exact integer line per channel (slopes 3, -2, 1, 2; offsets from beta): folds, unpadded
    s = affine_site(m, "b0", x, [3, -2, 1, 2], [5, -7, 0, 11], w_small(), bias(), P0, wzp=2)
    m.output(s["conv"])
    m.site("b0", "DyT affine into an unpadded conv, exact integer line per channel",
           [(AFFINE, True, None)], s["outcome"])
    # gamma is an identity, beta is not, padded conv: beta's RESCALE reads the table
    s = affine_site(m, "b1", x, [1, 1, 1, 1], [5, -7, 3, 11], w_small(), bias(), P1)
    m.output(s["conv"])
    m.site("b1", "DyT affine before a padded conv, gamma an identity (bypass gamma)",
           [(AFFINE, True, None)], s["outcome"])
    # gamma and beta both identities, padded conv: the conv reads the table
    s = affine_site(m, "b2", x, [1, 1, 1, 1], [0, 0, 0, 0], w_small(), bias(), P1, zaa=1, zao=1,
                    zta=1, zgo=1)
    m.output(s["conv"])
    m.site("b2", "DyT affine before a padded conv, an identity (bypass)", [(AFFINE, True, None)],
           s["outcome"])
    # padded conv, gamma not an identity: refused
    s = affine_site(m, "b3", x, [2, 1, 1, 1], [1, 2, 3, 4], w_small(), bias(), P1)
    m.output(s["conv"])
    m.site("b3", "DyT affine before a padded conv, gamma not an identity",
           [(AFFINE, False, "padding")], s["outcome"])
    # ExecuTorch-like rounding RESCALE after gamma: no exact integer line
    s = affine_site(m, "b4", x, [77, -50, 90, 100], [5, -7, 3, 11], w_small(), bias(), P0,
                    go_scale=0.0123)
    m.output(s["conv"])
    m.site("b4", "DyT affine, rounding gamma RESCALE: not an integer line",
           [(AFFINE, False, "not_exact")], s["outcome"])
    # folded weights leave int8: (w - wzp) * 3 + wzp with |w| up to 60
    s = affine_site(m, "b5", x, [3, 3, 3, 3], [0, 0, 0, 0], w_small(60), bias(), P0)
    m.output(s["conv"])
    m.site("b5", "DyT affine whose folded weights leave int8", [(AFFINE, False, "out_of_range")],
           s["outcome"])
    # table * gamma overflows int32 (shift 0 wraps in TOSA; qfold refuses a wrapped gamma)
    s = affine_site(m, "b6", x, [100, 90, 80, 70], [0, 0, 0, 0], w_small(), bias(), P0,
                    ta_scale=2.0 ** 20, g_scale=2.0 ** 8, go_scale=2.0 ** -30)
    m.output(s["conv"])
    m.site("b6", "DyT affine whose table * gamma product overflows int32",
           [(AFFINE, False, "overflow")], s["outcome"])
    # the sum RESCALE has a second reader (also returned)
    s = affine_site(m, "b7", x, [3, -2, 1, 2], [5, -7, 0, 11], w_small(), bias(), P0,
                    may_fold=False)
    m.output(s["conv"])
    m.output(s["sum"])
    assert s["outcome"] == "fold"  # refused for the second reader alone
    m.site("b7", "DyT affine whose last RESCALE is also a function result (would fold)",
           [(AFFINE, False, "shared_output")])
    # DEPTHWISE_CONV2D (weight [KH, KW, C, M], output channel c * M + m): the same rules, each
    # output channel reading one input channel
    dw = dict(k=3, depthwise=True)
    s = affine_site(m, "b8", x, [3, -2, 1, 2], [5, -7, 0, 11], w_small(n=9 * 4), bias(4), P0,
                    wzp=-1, **dw)
    m.output(s["conv"])
    m.site("b8", "DyT affine into an unpadded depthwise conv (M = 1), exact integer lines",
           [(AFFINE, True, None)], s["outcome"])
    s = affine_site(m, "b9", x, [2, 1, -1, 3], [1, -2, 3, 6], w_small(n=9 * 8), bias(8), P0,
                    wzp=3, **dw)
    m.output(s["conv"])
    m.site("b9", "DyT affine into an unpadded depthwise conv (M = 2), exact integer lines",
           [(AFFINE, True, None)], s["outcome"])
    s = affine_site(m, "b10", x, [1, 1, 1, 1], [4, -3, 2, 9], w_small(n=9 * 4), bias(4), P1,
                    **dw)
    m.output(s["conv"])
    m.site("b10", "DyT affine before a padded depthwise conv (M = 1), gamma an identity "
           "(bypass gamma)", [(AFFINE, True, None)], s["outcome"])
    s = affine_site(m, "b11", x, [2, 1, 1, 3], [1, 2, 3, 4], w_small(n=9 * 8), bias(8), P1, **dw)
    m.output(s["conv"])
    m.site("b11", "DyT affine before a padded depthwise conv (M = 2), gamma not an identity",
           [(AFFINE, False, "padding")], s["outcome"])
    s = affine_site(m, "b12", x, [1, 1, 1, 1], [0, 0, 0, 0], w_small(n=9 * 8), bias(8), P1,
                    zaa=2, zao=2, zta=2, zgo=2, **dw)
    m.output(s["conv"])
    m.site("b12", "DyT affine before a padded depthwise conv (M = 2), an identity (bypass)",
           [(AFFINE, True, None)], s["outcome"])
    s = affine_site(m, "b13", x, [77, -50, 90, 100], [5, -7, 3, 11], w_small(n=9 * 8), bias(8),
                    P0, go_scale=0.0123, **dw)
    m.output(s["conv"])
    m.site("b13", "DyT affine into an unpadded depthwise conv (M = 2), rounding gamma RESCALE: "
           "not an integer line", [(AFFINE, False, "not_exact")], s["outcome"])
    # a linear layer: MATMUL with a constant right-hand side, through a reshape. qfold maps it
    # as `linear`, and the DyT affine pattern ends at a convolution: nothing folds into it, and
    # the pass does not take it for a site (the chain would be an exact line otherwise)
    c = affine_chain(m, "b14", x, [3, -2, 1, 2], [5, -7, 0, 11])
    v = m.reshape("b14_view", c["sum"], (1, 256, 4))
    wl = m.const("b14_w", (1, 4, 3), "i8", w_small(n=4 * 3))
    lin = m.matmul("b14_linear", v, wl, c["zao"], 1)
    m.output(lin)
    m.site("b14", "DyT affine chain into a linear layer (reshape, MATMUL with a constant right-"
           "hand side): not a DyT affine site (the pattern ends at a convolution)", [])
    return m


def module_refusals():
    """Every site is refused: the tool must leave this module unchanged."""
    m = Module("refusals", (1, 256, 4))
    x = m.x
    # the MUL has a second reader
    s = dyt_alpha(m, "f0", x, 64)
    m.output(s["table"])
    m.output(s["mul"])
    m.site("f0", "DyT alpha whose MUL is also a function result",
           [(ALPHA, False, "shared_output")])
    # the output RESCALE has a second reader
    s = dyt_alpha(m, "f1", x, 64)
    m.output(s["table"])
    m.output(s["out"])
    m.site("f1", "DyT alpha whose output RESCALE is also a function result",
           [(ALPHA, False, "shared_output")])
    # alpha is the activation itself: not a constant
    s = dyt_alpha(m, "f2", x, None, alpha_source=x)
    m.output(s["table"])
    m.site("f2", "DyT alpha whose alpha is not a constant (the activation squared)",
           [(ALPHA, False, "not_constant")])
    # alpha has one value per channel
    s = dyt_alpha(m, "f3", x, [3, 5, 7, 9], alpha_shape=(1, 1, 4))
    m.output(s["table"])
    m.site("f3", "DyT alpha with a per-channel (non-scalar) alpha", [(ALPHA, False, "not_scalar")])
    # per-channel activation RESCALE
    s = dyt_alpha(m, "f4", x, 64, per_channel_act=True)
    m.output(s["table"])
    m.site("f4", "DyT alpha with a per-channel activation RESCALE",
           [(ALPHA, False, "unsupported_rescale")])
    # a layout view (reshape) on the activation side
    v = m.reshape("f5_view", x, (256, 4))
    s = dyt_alpha(m, "f5", v, 64)
    m.output(s["table"])
    m.site("f5", "DyT alpha with the activation seen through a reshape into its RESCALE",
           [(ALPHA, False, "layout_view")])
    # the constant operand of the MUL is not RESCALEd
    r = m.rescale("f6_act", x, "i32", scales=[1.0], input_zp=-3)
    c = m.const("f6_k", (1, 1, 1), "i32", [77])
    p = m.mul("f6_mul", r, c, 0)
    o = m.rescale("f6_to_tanh", p, "i8", scales=[0.0166], output_zp=2)
    t = m.table("f6_tanh", o, tanh_table(0.03, 2, 1 / 128, 0))
    m.output(t)
    m.site("f6", "TABLE(RESCALE(MUL(RESCALE(x), constant))): the constant has no RESCALE",
           [(ALPHA, False, "unsupported")])
    # a rescale pair whose naive merge (scale 0.5 * 2 = 1) differs: 2 * round(x / 2) != x
    r1 = m.rescale("f7_half", x, "i8", scales=[0.5], input_zp=0)
    r2 = m.rescale("f7_double", r1, "i8", scales=[2.0])
    m.output(r2)
    model = naive_merge(r1, r2)
    assert not model["equal"]
    m.site("f7", "RESCALE 0.5 then RESCALE 2: the naive merge (scale 1) differs", [],
           model=model)
    # TABLE -> TABLE whose intermediate has a second reader
    t1 = m.table("f8_t1", x, [clip(c * 2, -128, 127) for c in range(-128, 128)])
    t2 = m.table("f8_t2", t1, tanh_table(0.02, 0, 1 / 128, 0))
    m.output(t2)
    m.output(t1)
    m.site("f8", "TABLE -> TABLE whose first TABLE is also a function result", [])
    return m


def naive_merge(r1, r2, k=None):
    """Does the naive merge of RESCALE r1 -> (MUL by constant k ->)
    RESCALE r2 (real scales multiplied, multiplier and shift derived as ExecuTorch does, r1's
    input_zp and signedness, r2's output_zp, signedness and rounding, the intermediate clamp and
    rounding skipped) equal the pair on every int8 code of every channel? The first code where it
    differs, if any. Shown in the DyT entries' sites; merge_sites takes "equal" as proof that one
    RESCALE equals the pair (the naive merge itself), so the merge must fold."""
    a1, a2 = r1.attrs, r2.attrs
    if a1["input_unsigned"] and a2["output_unsigned"]:
        return {"equal": False, "why": "uint8 to uint8: TOSA has no such RESCALE"}
    ch = r1.shape[-1]
    for c in range(ch):
        c1 = c if a1["per_channel"] else 0
        c2 = c if a2["per_channel"] else 0
        kc = 1 if k is None else k.t.data[c if len(k.t.data) > 1 else 0]
        if kc < 0:
            return {"equal": False, "why": "a negative constant: no RESCALE multiplier"}
        scale = (a1["multiplier"][c1] / 2.0 ** a1["shift"][c1]) * kc * \
            (a2["multiplier"][c2] / 2.0 ** a2["shift"][c2])
        mm, sh = multiplier_and_shift(scale)
        merged = dict(in_t=a1["in_t"], out_t=a2["out_t"], input_zp=a1["input_zp"],
                      output_zp=a2["output_zp"], multiplier=[mm], shift=[sh], scale32=True,
                      rounding=a2["rounding"], per_channel=False,
                      input_unsigned=a1["input_unsigned"], output_unsigned=a2["output_unsigned"])
        for code in range(-128, 128):
            y = rescale_value(code, c1, a1)
            if k is not None:
                y = mul_value(y, kc, 0, "i32")
            y = rescale_value(y, c2, a2)
            z = rescale_value(code, 0, merged)
            if y != z:
                return {"equal": False, "channel": c, "code": code, "pair": y, "naive": z}
    return {"equal": True}


# --- The newer passes (docs/folds.md: merge rescales, compose tables, collapse to table): their
# --- expected reports, from the graph built above and the model's values on every code -------

MERGE = "fold_merge_rescales"
COMPOSE = "fold_compose_tables"
COLLAPSE = "fold_collapse_to_table"
ALL_PASSES = [ALPHA, AFFINE, MERGE, COMPOSE, COLLAPSE]
EITHER = "folded_or_not_exact"  # an expectation: folded, or refused as not_exact


def use_counts(m):
    uses = {}
    for v in m.nodes:
        for o in v.ins + [p for _, p in v.params]:
            uses[o.name] = uses.get(o.name, 0) + 1
    for o in m.outputs:
        uses[o.name] = uses.get(o.name, 0) + 1
    return uses


def uniform(k):
    return all(d == k.t.data[0] for d in k.t.data)


def is_int8_table(v):
    return v.kind == "table" and v.ins[0].dt == "i8" and len(v.lut) == 256


def code_maps(start, end):
    """Per channel, the map start code -> end value (both as stored), read off the model's data
    (the chain is elementwise). None unless start is the module's input, which holds every int8
    code on every channel: the maps then cover all 256 codes."""
    if start.kind != "input":
        return None
    ch = start.shape[-1]
    maps = [dict() for _ in range(ch)]
    for i, (a, b) in enumerate(zip(start.t.data, end.t.data)):
        assert maps[i % ch].get(a, b) == b
        maps[i % ch][a] = b
    assert all(len(mp) == 256 for mp in maps)
    return [[mp[c] for c in range(-128, 128)] for mp in maps]


def monotone(mp, first, last):
    """Is the map non-decreasing in the values the types mean (uint8 read unsigned)?"""
    def key_in(code):
        return unsigned_of(code, "i8") if first.attrs["input_unsigned"] else code

    def key_out(v):
        return unsigned_of(v, last.dt) if last.attrs["output_unsigned"] else v

    pts = sorted((key_in(c), key_out(v)) for c, v in zip(range(-128, 128), mp))
    return all(pts[i][1] <= pts[i + 1][1] for i in range(len(pts) - 1))


def merge_sites(m):
    """fold_merge_rescales as docs/folds.md states it: RESCALE -> RESCALE, or RESCALE -> MUL by an
    integer constant -> RESCALE; refused shared_output (the first RESCALE or the MUL has another
    reader), not_constant (a parameter computed at run time), not_scalar (a MUL constant of
    several values), unsupported_rescale (INEXACT_ROUND), unsupported (the first RESCALE reads
    int32), not_exact (a uint8 input and a uint8 output: TOSA has no RESCALE from uint8 to uint8).
    Otherwise the pair on every code of every channel (the model's values) decides: equal to its
    naive merge -> folded (the naive merge is one RESCALE equal to the pair, which qfold's search
    finds at least); a channel whose map is not non-decreasing in the values the types mean ->
    not_exact (a RESCALE with multiplier >= 0 is non-decreasing in its input, so none can equal
    it); else folded or not_exact. Sites are disjoint (an accepted site's nodes are not
    reused)."""
    uses = use_counts(m)
    claimed, out = set(), []
    for last in m.nodes:
        if last.kind != "rescale":
            continue
        before, mul, first, k = last.ins[0], None, None, None
        if before.kind == "rescale":
            first = before
        elif before.kind == "mul":
            mul = before
            a, b = mul.ins
            if a.kind == "rescale" and b.kind == "const":
                first, k = a, b
            if b.kind == "rescale" and a.kind == "const":
                first, k = b, a
        if first is None:
            continue
        nodes = [first] + ([mul] if mul else []) + [last]
        if any(n.name in claimed for n in nodes):
            continue
        if uses[first.name] != 1 or (mul and uses[mul.name] != 1):
            outcome = "shared_output"
        elif any(n.runtime_params() for n in nodes):
            outcome = "not_constant"
        elif k is not None and not uniform(k):
            outcome = "not_scalar"
        elif any(n.attrs["rounding"] == "INEXACT_ROUND" for n in (first, last)):
            outcome = "unsupported_rescale"
        elif first.ins[0].dt == "i32":
            outcome = "unsupported"
        elif first.attrs["input_unsigned"] and last.attrs["output_unsigned"]:
            outcome = "not_exact"
        else:
            maps = code_maps(first.ins[0], last)
            assert maps is not None, "a pair the model cannot enumerate: " + last.name
            if naive_merge(first, last, k)["equal"]:
                outcome = "folded"
            elif not all(monotone(mp, first, last) for mp in maps):
                outcome = "not_exact"
            else:
                outcome = EITHER
        if outcome in ("folded", EITHER):
            claimed.update(n.name for n in nodes)
        out.append((nodes, outcome))
    return out


def compose_sites(m):
    """fold_compose_tables: an int8 TABLE whose input is an int8 TABLE; shared_output when the
    first has another reader, not_constant when a table is computed at run time, else folded
    (the composition is a table by construction). Sites are disjoint: of TABLE -> TABLE -> TABLE
    the first pair (in block order) composes."""
    uses = use_counts(m)
    claimed, out = set(), []
    for t2 in m.nodes:
        if not is_int8_table(t2) or not is_int8_table(t2.ins[0]):
            continue
        t1 = t2.ins[0]
        if t1.name in claimed or t2.name in claimed:
            continue
        outcome = ("shared_output" if uses[t1.name] != 1 else
                   "not_constant" if t1.runtime_params() or t2.runtime_params() else "folded")
        if outcome == "folded":
            claimed.update((t1.name, t2.name))
        out.append(([t1, t2], outcome))
    return out


def chain_input(v):
    """The operand an elementwise op of a collapsible chain carries the chain on, or None."""
    if v.kind in ("rescale", "clamp", "cast", "table"):
        return v.ins[0]
    if v.kind in ("mul", "add", "sub") and len(v.ins) == 2:
        c = [o.kind == "const" for o in v.ins]
        if c[0] != c[1]:
            return v.ins[1] if c[0] else v.ins[0]
    return None


def collapse_sites(m):
    """fold_collapse_to_table: a chain of elementwise ops (chain_input) from a non-constant int8
    tensor to an int8 result, at least two ops, every node inside read only by the next; it ends
    where no single reader continues it to another int8 result and starts at the farthest int8
    tensor behind it (walking back through ops read only by the next). Refused: shared_output
    when an elementwise op on the way back has another reader and no chain of two ops remains
    after it; then, op by op in chain order, not_constant (a parameter computed at run time),
    unsupported_rescale (INEXACT_ROUND), invalid_shape (a TABLE without 256 int8 entries: an
    int16 TABLE), not_scalar (a constant of several values); not_exact when per-channel steps
    give different tables on different channels (the model's values on all 256 codes). The
    model's module is valid on every code (its REQUIREs hold), so no step overflows and every
    narrowing CAST fits: otherwise folded."""
    uses = use_counts(m)
    readers = {}
    for v in m.nodes:
        ci = chain_input(v)
        if ci is not None:
            readers.setdefault(ci.name, []).append(v)
    out = []
    for last in m.nodes:
        if chain_input(last) is None or last.dt != "i8":
            continue
        cur, is_end = last, True
        while uses.get(cur.name, 0) == 1 and len(readers.get(cur.name, [])) == 1:
            cur = readers[cur.name][0]
            if cur.dt == "i8":
                is_end = False
                break
        if not is_end:
            continue
        ops, starts, blocked, cur = [last], [], False, last
        while True:
            i = chain_input(cur)
            if i is None:
                break
            if i.dt == "i8" and i.kind != "const":
                starts.append((len(ops), i))
            if chain_input(i) is None:
                break
            if uses[i.name] != 1:
                blocked = True
                break
            ops.append(i)
            cur = i
        if not starts or starts[-1][0] < 2:
            if blocked:
                out.append((list(reversed(ops)), "shared_output"))
            continue
        n, start = starts[-1]
        ops = list(reversed(ops[:n]))
        reason = None
        for op in ops:
            consts = [o for o in op.ins if o.kind == "const"] if op.kind in ("mul", "add",
                                                                              "sub") else []
            if op.runtime_params():
                reason = "not_constant"
            elif op.kind == "rescale" and op.attrs["rounding"] == "INEXACT_ROUND":
                reason = "unsupported_rescale"
            elif op.kind == "table" and not is_int8_table(op):
                reason = "invalid_shape"
            elif any(not uniform(k) for k in consts):
                reason = "not_scalar"
            if reason:
                break
        if reason:
            out.append((ops, reason))
            continue
        try:
            maps = [[eval_chain(ops, code, c) for code in range(-128, 128)]
                    for c in range(start.shape[-1])]
        except ChainError as e:
            out.append((ops, e.reason))
            continue
        assert code_maps(start, last) in (None, maps)  # the model's data agrees
        out.append((ops, "folded" if all(mp == maps[0] for mp in maps) else "not_exact"))
    return out


class ChainError(Exception):
    def __init__(self, reason):
        self.reason = reason


def eval_chain(ops, code, channel):
    """The chain's ops applied to one int8 code on one channel with the model's TOSA semantics;
    a REQUIRE that fails is the pass's reason for it: overflow (ADD / SUB, a shifted MUL),
    out_of_range (a narrowing CAST that does not fit, a RESCALE requirement)."""
    v = code
    for op in ops:
        try:
            if op.kind == "rescale":
                v = rescale_value(v, channel, op.attrs)
            elif op.kind == "clamp":
                v = clip(v, *op.bounds)
            elif op.kind == "cast":
                v = cast_value(v, op.dt)
            elif op.kind == "table":
                v = table_value(v, op.lut)
            else:
                slot = 0 if op.ins[1].kind == "const" else 1
                k = op.ins[1 - slot].t.data[0]
                a, b = (v, k) if slot == 0 else (k, v)
                v = (mul_value(a, b, op.mul_shift, "i32") if op.kind == "mul" else
                     add_value(a, b) if op.kind == "add" else sub_value(a, b))
        except SpecError:
            raise ChainError("out_of_range" if op.kind in ("cast", "rescale") else "overflow")
    return v


PASS_MODELS = ((MERGE, merge_sites), (COMPOSE, compose_sites), (COLLAPSE, collapse_sites))


def site_owners(m, found):
    ids = [s["site"] for s in m.sites]
    return ids, [{s for s in ids for n in nodes if n.name.startswith("%" + s + "_")}
                 for nodes, _ in found]


def expectation(p, outcome):
    e = {"pass": p}
    if outcome == EITHER:
        e["outcomes"] = [{"folded": True}, {"folded": False, "reason": "not_exact"}]
    elif outcome == "folded":
        e["folded"] = True
    else:
        e.update(folded=False, reason=outcome)
    return e


def new_pass_entries(m):
    """One manifest entry per newer pass that has a site in m: that pass alone (--pass), every
    site of the module listed, each with the outcomes the pass models above predict."""
    entries = []
    for p, model in PASS_MODELS:
        if p in m.skip_models:
            continue
        found = model(m)
        if not found:
            continue
        ids, owners_of = site_owners(m, found)
        # A site spanning two sites' nodes (dyt_blocks: block b's last RESCALE and block b+1's
        # first) belongs to the one that also owns a site alone; the other is left out of this
        # entry when it owns none alone (a listed site would make the report site ambiguous).
        alone = {next(iter(o)) for o in owners_of if len(o) == 1}
        left_out = {s for o in owners_of if len(o) > 1 for s in o if s not in alone}
        want = {s: [] for s in ids if s not in left_out}
        for (nodes, outcome), owners in zip(found, owners_of):
            owners = owners - left_out
            assert len(owners) == 1, (m.name, p, [n.name for n in nodes], owners)
            want[owners.pop()].append(expectation(p, outcome))
        sites = [{"site": s["site"], "description": s["description"], "expect": want[s["site"]]}
                 for s in m.sites if s["site"] in want]
        outcomes = [o for _, o in found]
        unchanged = (True if all(o not in ("folded", EITHER) for o in outcomes)
                     else None if all(o != "folded" for o in outcomes) else False)
        entries.append({"id": m.name + "." + p[len("fold_"):], "module": m.name + ".mlir",
                        "passes": [p], "expected": m.name + ".expected", "unchanged": unchanged,
                        "sites": sites})
    return entries


def all_passes_entry(m):
    """The entry of a module that is not executed (params): every pass at once, each site with
    the DyT passes' expectations and the newer passes' (all refusals, so the passes cannot
    interfere), the module unchanged."""
    want = {s["site"]: list(s["expect"]) for s in m.sites}
    for p, model in PASS_MODELS:
        found = model(m)
        ids, owners_of = site_owners(m, found)
        for (nodes, outcome), owners in zip(found, owners_of):
            assert len(owners) == 1 and outcome not in ("folded", EITHER), (p, owners, outcome)
            want[owners.pop()].append(expectation(p, outcome))
    sites = []
    for s in m.sites:
        assert want[s["site"]] and not any(e.get("folded") for e in want[s["site"]]), s
        sites.append({"site": s["site"], "description": s["description"],
                      "expect": want[s["site"]]})
    return {"id": m.name, "module": m.name + ".mlir", "passes": ALL_PASSES, "executed": False,
            "unchanged": True, "sites": sites}


def module_rescale_pairs():
    """Attention-scale rescale pairs: RESCALE -> RESCALE, also through a MUL by a constant."""
    m = Module("rescale_pairs", (1, 256, 4))
    x = m.x
    # x4 exactly, then the attention scale: the pair equals one RESCALE
    r1 = m.rescale("c0_up", x, "i32", scales=[4.0], input_zp=5)
    r2 = m.rescale("c0_scale", r1, "i8", scales=[0.0371], output_zp=-2)
    m.output(r2)
    m.site("c0", "RESCALE x4 (exact) then the attention scale 0.0371", [],
           model=naive_merge(r1, r2))
    # per channel on both ends
    r1 = m.rescale("c1_up", x, "i32", scales=[1.0, 2.0, 4.0, 8.0], input_zp=0)
    r2 = m.rescale("c1_scale", r1, "i8", scales=[0.1, 0.05, 0.025, 0.0125], output_zp=3)
    m.output(r2)
    m.site("c1", "per-channel RESCALE pair", [], model=naive_merge(r1, r2))
    # through a MUL by a per-channel constant
    r1 = m.rescale("c2_up", x, "i32", scales=[1.0], input_zp=-1)
    k = m.const("c2_k", (1, 1, 4), "i32", [3, 5, 7, 11])
    p = m.mul("c2_mul", r1, k, 0)
    r2 = m.rescale("c2_scale", p, "i8", scales=[0.2, 0.12, 0.08, 0.05], double_round=True)
    m.output(r2)
    m.site("c2", "RESCALE -> MUL(per-channel constant) -> per-channel RESCALE", [],
           model=naive_merge(r1, r2, k))
    # int32 in the middle, 1/sqrt(64) attention scale with double rounding, int8 -> int8 -> int8
    r1 = m.rescale("c3_q", x, "i8", scales=[0.7], input_zp=4, output_zp=-6)
    r2 = m.rescale("c3_scale", r1, "i8", scales=[0.125], input_zp=-6, output_zp=1)
    m.output(r2)
    m.site("c3", "int8 RESCALE pair with zero points on both sides", [],
           model=naive_merge(r1, r2))
    return m


def module_unsigned():
    """RESCALE pairs with uint8 ends (input_unsigned / output_unsigned on signless i8 tensors,
    unsigned zero points stored in signless constants). merge_rescales can merge uint8 -> int8
    -> int8 and int8 -> int8 -> uint8 into one RESCALE; uint8 -> int8 -> uint8 has no single
    RESCALE in TOSA (ERROR_IF(input_unsigned && output_unsigned)): refused not_exact.

    No collapse_to_table entry: a chain from a uint8 tensor holds signless i8 elements that its
    first RESCALE reads as unsigned; docs/folds.md does not say how the pass takes such a start
    (a TABLE indexed by the stored byte would be exact, a refusal safe), so the manifest claims
    nothing there; tosa.exec.fold_all.unsigned proves on the executor whatever it does."""
    m = Module("unsigned", (1, 256, 4))
    m.skip_models = {COLLAPSE}
    x = m.x
    # uint8 (zp 131, stored -125) -> int8 -> int8: the middle never clamps, equal to one RESCALE
    r1 = m.rescale("u0_first", x, "i8", scales=[0.5], input_zp=131, output_zp=-3,
                   input_unsigned=True)
    r2 = m.rescale("u0_second", r1, "i8", scales=[1.0], input_zp=-3, output_zp=5)
    m.output(r2)
    model = naive_merge(r1, r2)
    assert model["equal"]
    m.site("u0", "uint8 (zp 131) -> int8 -> int8 RESCALE pair (one RESCALE equals it)", [],
           model=model)
    # int8 -> int8 -> uint8 (zp 128, stored -128)
    r1 = m.rescale("u1_first", x, "i8", scales=[0.5], input_zp=2, output_zp=-1)
    r2 = m.rescale("u1_second", r1, "i8", scales=[1.0], input_zp=-1, output_zp=128,
                   output_unsigned=True)
    m.output(r2)
    model = naive_merge(r1, r2)
    assert model["equal"]
    m.site("u1", "int8 -> int8 -> uint8 (zp 128) RESCALE pair (one RESCALE equals it)", [],
           model=model)
    # uint8 (zp 100) -> int8 -> uint8 (zp 120): no uint8 -> uint8 RESCALE
    r1 = m.rescale("u2_first", x, "i8", scales=[0.75], input_zp=100, output_zp=1,
                   input_unsigned=True)
    r2 = m.rescale("u2_second", r1, "i8", scales=[1.5], input_zp=1, output_zp=120,
                   output_unsigned=True)
    m.output(r2)
    m.site("u2", "uint8 -> int8 -> uint8 RESCALE pair: TOSA has no uint8 -> uint8 RESCALE", [],
           model=naive_merge(r1, r2))
    # uint8 (zp 255, stored -1) -> int8 x4 saturating -> int8 x0.25: the naive merge differs
    r1 = m.rescale("u3_first", x, "i8", scales=[4.0], input_zp=255, output_zp=0,
                   input_unsigned=True)
    r2 = m.rescale("u3_second", r1, "i8", scales=[0.25], output_zp=-7)
    m.output(r2)
    model = naive_merge(r1, r2)
    assert not model["equal"]
    m.site("u3", "uint8 (zp 255) -> int8 x4 (saturating) -> int8 x0.25: the naive merge differs",
           [], model=model)
    return m


def module_params():
    """Parameters TOSA's integer profile requires to be compile-time constants, computed at run
    time (arguments of @f, or a CAST of one), and an INEXACT_ROUND RESCALE: every pass refuses
    every site (not_constant; INEXACT_ROUND unsupported_rescale, as docs/folds.md says) and the
    module stays as it is. Not executed (see the module docstring)."""
    m = Module("params", (1, 16, 16, 4), executed=False)
    m.passes = ALL_PASSES
    x = m.x
    P0 = [0, 0, 0, 0]
    # multiplier of a RESCALE pair's first RESCALE
    mult = m.arg("n0_mult", (1,), "i32", [multiplier_and_shift(0.5)[0]])
    r1 = m.rescale("n0_first", x, "i8", scales=[0.5], runtime={"mult": mult})
    m.output(m.rescale("n0_second", r1, "i8", scales=[1.0], output_zp=3))
    m.site("n0", "RESCALE pair, the first RESCALE's multiplier a function argument", [])
    # shift, computed: a CAST of an int32 argument
    sa = m.arg("n1_shift32", (1,), "i32", [multiplier_and_shift(0.25)[1]])
    sh = m.cast("n1_shift", sa, "i8")
    r1 = m.rescale("n1_first", x, "i8", scales=[0.25], runtime={"shift": sh})
    m.output(m.rescale("n1_second", r1, "i8", scales=[2.0]))
    m.site("n1", "RESCALE pair, the first RESCALE's shift computed (CAST of an argument)", [])
    # input zero point
    z = m.arg("n2_izp", (1,), "i8", [-5])
    r1 = m.rescale("n2_first", x, "i8", scales=[0.5], runtime={"izp": z})
    m.output(m.rescale("n2_second", r1, "i8", scales=[1.0], output_zp=-2))
    m.site("n2", "RESCALE pair, the first RESCALE's input_zp a function argument", [])
    # unsigned input zero point (MLIR 22's lowering sign-extends it: 131 would be read as -125)
    z = m.arg("n3_izp", (1,), "i8", [to_storage(131, "i8")])
    r1 = m.rescale("n3_first", x, "i8", scales=[0.5], input_unsigned=True, runtime={"izp": z})
    m.output(m.rescale("n3_second", r1, "i8", scales=[1.0]))
    m.site("n3", "uint8 -> int8 -> int8 RESCALE pair, the uint8 input_zp a function argument",
           [])
    # the MUL shift of a DyT alpha site
    sh = m.arg("n4_mul_shift", (1,), "i8", [0])
    s = dyt_alpha(m, "n4", x, 64, runtime_shift=sh)
    m.output(s["table"])
    m.site("n4", "DyT alpha whose MUL shift is a function argument",
           [(ALPHA, False, "not_constant")])
    # the MUL shift of RESCALE -> MUL by a constant -> RESCALE
    r1 = m.rescale("n5_up", x, "i32", scales=[1.0])
    k = m.const("n5_k", (1, 1, 1, 1), "i32", [12])
    sh = m.arg("n5_mul_shift", (1,), "i8", [2])
    p = m.mul("n5_mul", r1, k, runtime_shift=sh)
    m.output(m.rescale("n5_down", p, "i8", scales=[0.1]))
    m.site("n5", "RESCALE -> MUL by a constant -> RESCALE, the MUL shift a function argument", [])
    # the table of a TABLE -> TABLE pair
    tab = m.arg("n6_table", (256,), "i8", [clip(c // 2 + 3, -128, 127) for c in range(-128, 128)])
    t1 = m.table("n6_t1", x, None, runtime_table=tab)
    m.output(m.table("n6_t2", t1, tanh_table(0.02, 0, 1 / 128, 0)))
    m.site("n6", "TABLE -> TABLE, the first table a function argument", [])
    # the input zero point of the conv after a DyT affine chain (an exact line otherwise)
    rng = random.Random(20261203)
    izp = m.arg("n7_conv_izp", (1,), "i8", [-4])
    s = affine_site(m, "n7", x, [3, -2, 1, 2], [5, -7, 0, 11],
                    [rng.randint(-12, 12) for _ in range(3 * 9 * 4)],
                    [rng.randint(-5000, 5000) for _ in range(3)], P0, runtime={"izp": izp})
    m.output(s["conv"])
    m.site("n7", "DyT affine into a conv whose input_zp is a function argument",
           [(AFFINE, False, "not_constant")])
    # the weight zero point of a depthwise conv after a DyT affine chain, computed (a CAST)
    wz = m.arg("n8_wzp32", (1,), "i32", [1])
    wzp = m.cast("n8_conv_wzp", wz, "i8")
    s = affine_site(m, "n8", x, [2, 1, -1, 3], [1, 2, 3, -4],
                    [rng.randint(-12, 12) for _ in range(9 * 8)],
                    [rng.randint(-5000, 5000) for _ in range(8)], P0, wzp=1, depthwise=True,
                    runtime={"wzp": wzp})
    m.output(s["conv"])
    m.site("n8", "DyT affine into a depthwise conv (M = 2) whose weight_zp is computed (a CAST "
           "of an argument)", [(AFFINE, False, "not_constant")])
    # INEXACT_ROUND: a result anywhere within the spec's bound, not a function of the input
    r1 = m.rescale("n9_first", x, "i8", scales=[0.3], output_zp=1, rounding="INEXACT_ROUND")
    m.output(m.rescale("n9_second", r1, "i8", scales=[1.0], input_zp=1))
    m.site("n9", "RESCALE pair whose first RESCALE is INEXACT_ROUND", [])
    return m


def module_chains():
    """Elementwise int8 chains: RESCALE, MUL/ADD/SUB by constants, CLAMP, TABLE, CAST."""
    m = Module("chains", (1, 256, 4))
    x = m.x
    # wrapping MUL: (x + 5) * 40000000 leaves int32 for |x + 5| > 53
    r = m.rescale("d0_in", x, "i32", scales=[1.0], input_zp=-5)
    k = m.const("d0_k", (1, 1, 1), "i32", [40000000])
    p = m.mul("d0_mul", r, k, 0)
    o = m.rescale("d0_out", p, "i8", scales=[2.0 ** -27], double_round=True)
    m.output(o)
    m.site("d0", "RESCALE -> wrapping MUL by a constant -> DOUBLE_ROUND RESCALE", [])
    # ADD, SUB, RESCALE to int16, int16 CLAMP (TOSA 1.0 has no int32 CLAMP), per-channel RESCALE,
    # TABLE
    r = m.rescale("d1_in", x, "i32", scales=[16.0], input_zp=3)
    a = m.add("d1_add", r, m.const("d1_kadd", (1, 1, 4), "i32", [100, -200, 300, 0]))
    s = m.sub("d1_sub", a, m.const("d1_ksub", (1, 1, 1), "i32", [-50]))
    h = m.rescale("d1_mid", s, "i16", scales=[1.0])
    c = m.clamp("d1_clamp", h, -1500, 1700)
    o = m.rescale("d1_out", c, "i8", scales=[0.07, 0.06, 0.05, 0.09], output_zp=-9)
    t = m.table("d1_table", o, [clip(round(100 * math.sin(i / 20.0)), -128, 127)
                                for i in range(256)])
    m.output(t)
    m.site("d1", "RESCALE -> ADD -> SUB -> RESCALE to int16 -> CLAMP -> per-channel RESCALE -> "
           "TABLE", [])
    # saturation, int8 CLAMP, CAST i8 -> i32 -> MUL (shift) -> RESCALE
    r = m.rescale("d2_sat", x, "i8", scales=[3.7], input_zp=2, output_zp=1)
    c = m.clamp("d2_clamp", r, -100, 90)
    w = m.cast("d2_cast", c, "i32")
    p = m.mul("d2_mul", w, m.const("d2_k", (1, 1, 1), "i32", [1000]), 3)
    o = m.rescale("d2_out", p, "i8", scales=[0.01])
    m.output(o)
    m.site("d2", "saturating RESCALE -> CLAMP -> CAST -> MUL shift 3 -> RESCALE", [])
    # 16-bit multiplier RESCALE, then a TABLE, then a CAST to int32 as the output
    r = m.rescale("d3_r16", x, "i8", scales=[0.61], scale32=False, input_zp=-20, output_zp=7)
    t = m.table("d3_table", r, [clip(127 - i, -128, 127) for i in range(256)])
    w = m.cast("d3_cast", t, "i32")
    m.output(w)
    m.site("d3", "scale32 = false RESCALE -> TABLE -> CAST to int32", [])
    # per-channel RESCALE -> CLAMP: each channel a different table (collapse: not_exact)
    r = m.rescale("d4_pc", x, "i8", scales=[0.5, 0.25, 0.75, 1.0], input_zp=3, output_zp=-1)
    c = m.clamp("d4_clamp", r, -100, 100)
    m.output(c)
    m.site("d4", "per-channel RESCALE -> CLAMP whose channels give different tables", [])
    # RESCALE (also a function result) -> CLAMP -> TABLE: the CLAMP -> TABLE after it remains
    r = m.rescale("d5_shared", x, "i8", scales=[0.9], input_zp=1, output_zp=-3)
    c = m.clamp("d5_clamp", r, -90, 120)
    t = m.table("d5_table", c, [clip((i - 128) // 2 + 5, -128, 127) for i in range(256)])
    m.output(t)
    m.output(r)
    m.site("d5", "RESCALE also a function result -> CLAMP -> TABLE", [])
    return m


def module_table_chains():
    m = Module("table_chains", (1, 256, 4))
    x = m.x
    t1 = m.table("e0_t1", x, [clip(round(1.5 * (c - 4)), -128, 127) for c in range(-128, 128)])
    t2 = m.table("e0_t2", t1, tanh_table(0.025, 0, 1 / 128, -2))
    m.output(t2)
    m.site("e0", "TABLE -> TABLE", [])
    t1 = m.table("e1_t1", x, tanh_table(0.04, 1, 1 / 127, 0))
    t2 = m.table("e1_t2", t1, [clip(-c, -128, 127) for c in range(-128, 128)])
    t3 = m.table("e1_t3", t2, [clip(c // 3 + 9, -128, 127) for c in range(-128, 128)])
    m.output(t3)
    m.site("e1", "TABLE -> TABLE -> TABLE", [])
    # an int16 TABLE (513 entries, 16.7 output in int32) between int8 RESCALEs
    r = m.rescale("e2_in", x, "i16", scales=[200.0], input_zp=-2)
    t = m.table("e2_table", r, [clip(round(20000 * math.sin(i / 60.0)), -32768, 32767)
                                for i in range(-256, 257)])
    o = m.rescale("e2_out", t, "i8", scales=[1.0 / 128 / 200], output_zp=3)
    m.output(o)
    m.site("e2", "RESCALE to int16 -> int16 TABLE (513 entries) -> RESCALE to int8", [])
    return m


def module_blocks(n, name="dyt_blocks", fold=False):
    """N DyT transformer-like blocks in a chain: DyT alpha into the tanh TABLE, then DyT gamma
    and beta into a 1x1 conv, then a RESCALE back to int8 for the next block. Every site folds:
    the alpha pass first, then the affine pass on the table it made."""
    rng = random.Random(20261201 + n)
    m = Module(name, (1, 16, 16, 8), fold)
    h = m.x
    ch = 8
    for b in range(n):
        s = dyt_alpha(m, "p%d" % b, h, 64 + b % 40, act=dict(scales=[20.0], input_zp=0),
                      out=dict(scales=[0.0009], output_zp=0), tanh=(0.03, 0, 1 / 40, 0))
        a = affine_site(m, "q%d" % b, h, [rng.randint(1, 3) for _ in range(ch)],
                        [rng.randint(-5, 5) for _ in range(ch)],
                        [rng.randint(-8, 8) for _ in range(ch * ch)],
                        [rng.randint(-100, 100) for _ in range(ch)], [0, 0, 0, 0], zta=0, zgo=0,
                        zaa=0, zao=0, k=1, table_node=s["table"])
        assert a["outcome"] == "fold", a["outcome"]
        h = m.rescale("q%d_next" % b, a["conv"], "i8", scales=[0.01])
        m.site("p%d" % b, "block %d: DyT alpha" % b, [(ALPHA, True, None)])
        m.site("q%d" % b, "block %d: DyT affine into the 1x1 conv (reads block %d's new table)"
               % (b, b), [(AFFINE, True, None)], a["outcome"])
    m.output(h)
    return m


MANIFEST_COMMENT = (
    "Generated by tests/tosa/make_modules.py. Per entry: a module (TOSA 1.0 as MLIR 22 parses "
    "it), the passes qfold-tosa-opt runs on it (--pass each), the sites and what the tool must "
    "report for each (expect: a list of {pass, folded, reason}; empty: none of the passes "
    "matches the site, so the tool neither reports nor changes it). A report site belongs to "
    "site S when one of its node names contains 'S_'. unchanged: every site refused or "
    "unmatched, so the tool's output must print (mlir-opt --mlir-print-op-generic) exactly as "
    "the original does; null: decided by the report (some outcome may be either). executed: "
    "false for a module that is not lowered and run (params: parameters computed at run time); "
    "otherwise the original and the tool's output must print the expected output. The entry "
    "named after its module runs the DyT passes (every pass for params); an entry "
    "<module>.<pass> runs one newer pass alone (merge_rescales, compose_tables, "
    "collapse_to_table), its expectations derived by make_modules.py's models of those passes "
    "(docs/folds.md) on its model of TOSA's integer semantics, never from qfold's output. An "
    "expectation with `outcomes` instead of folded/reason allows any of them (a RESCALE pair "
    "whose naive merge differs: folded, or not_exact).")


def main(argv):
    if len(argv) >= 2 and argv[1] == "--bench":
        if len(argv) != 4:
            print("usage: make_modules.py --bench N OUT.mlir", file=sys.stderr)
            return 2
        m = module_blocks(int(argv[2]), "bench")
        with open(argv[3], "w") as f:
            f.write(m.text())
        return 0
    outdir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                        "modules")
    os.makedirs(outdir, exist_ok=True)
    modules = [module_dyt_alpha(), module_dyt_affine(), module_rescale_pairs(),
               module_chains(), module_table_chains(), module_refusals(), module_unsigned(),
               module_params()]
    modules.append(module_blocks(BLOCKS))
    model_folded = {"dyt_alpha": module_dyt_alpha(True), "dyt_affine": module_dyt_affine(True),
                    "dyt_blocks": module_blocks(BLOCKS, fold=True)}
    manifest = {"comment": MANIFEST_COMMENT, "modules": []}
    for m in modules:
        with open(os.path.join(outdir, m.name + ".mlir"), "w") as f:
            f.write(m.text())
        if not m.executed:
            manifest["modules"].append(all_passes_entry(m))
            continue
        with open(os.path.join(outdir, m.name + ".expected"), "w") as f:
            f.write(m.expected())
        unchanged = all(not any(e["folded"] for e in s["expect"]) for s in m.sites)
        entry = {"id": m.name, "module": m.name + ".mlir", "passes": m.passes,
                 "expected": m.name + ".expected", "unchanged": unchanged, "sites": m.sites}
        if m.tamper:
            entry["tamper"] = m.tamper
        if m.name in model_folded:
            f = model_folded[m.name]
            assert f.expected() == m.expected() and f.text() != m.text()
            entry["model_folded"] = m.name + ".model_folded.mlir"
            with open(os.path.join(outdir, entry["model_folded"]), "w") as out:
                out.write(f.text().replace("(%s): do not edit." % m.name,
                                           "(%s, folded by its model): do not edit." % m.name))
        manifest["modules"].append(entry)
        manifest["modules"] += new_pass_entries(m)
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
