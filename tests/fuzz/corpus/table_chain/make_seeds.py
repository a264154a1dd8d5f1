#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz/table_chain.cpp into this directory (run it here).

Each seed is byte 0 = operation (0-1 8-bit table, 2 int16 tables, 3 int16 lookups, 4-5 chain
evaluate, 6 collapse, 7 collapse_int16, 8-9 math), then its fields in the order the target reads
them: u8 = 1 byte, i32 = bit-count byte + 4 raw bytes, i64 = bit-count byte + 8 raw bytes,
shift = one byte holding shift + 64, raw<T> = sizeof(T) bytes little-endian.
"""
import os
import struct

def u8(v): return bytes([v & 0xFF])
def i32(v): return u8(31) + struct.pack("<i", v)
def i64(v): return u8(63) + struct.pack("<q", v)
def shift(v): return u8(v + 64)
def raw_f64(v): return struct.pack("<d", v)
def raw_i64(v): return struct.pack("<q", v)
def flag(b): return u8(1 if b else 0)

I32MIN, I32MAX, I64MIN, I64MAX = -2**31, 2**31 - 1, -2**63, 2**63 - 1
seeds = {}

def qp_nice(m, e, zp_kind=0, zp=0):
    # usual type; scale (1 + m/256) 2^-e; zero point; full type range
    z = u8(zp_kind) + (u8(zp) if zp_kind == 1 else i32(zp) if zp_kind == 2 else b"")
    return u8(0) + u8(0) + u8(m) + u8(e) + z + u8(1)
def qp_raw_scale(v):
    return u8(0) + u8(4) + raw_f64(v) + u8(0) + u8(1)

# 8-bit tables: convention (0 ExecuTorch, 1 TFLite, 2 Vela, 3 Vela 8-bit op), function, types.
for conv in range(4):
    for fn in (0, 1, 3, 5, 9):
        seeds[f"table8_c{conv}_f{fn}"] = (u8(0) + u8(conv) + u8(fn) + flag(False) + u8(0) + u8(0) +
                                          qp_nice(128, 5) + qp_nice(0, 7))
for name, v in (("nan", float("nan")), ("inf", float("inf")), ("zero", 0.0), ("neg", -1.0),
                ("denorm", 5e-324), ("float_denorm", 1e-40), ("huge", 1e300)):
    seeds[f"table8_scale_{name}"] = u8(1) + u8(0) + u8(0) + flag(False) + u8(0) + u8(0) + qp_raw_scale(v) + qp_nice(0, 7)
seeds["table8_custom_bad_rule"] = u8(0) + u8(4) + u8(4) + u8(2) + u8(0) + flag(False) + u8(0) + u8(0) + qp_nice(0, 4) + qp_nice(0, 7)
seeds["int16_tanh"] = u8(2) + u8(0) + flag(False) + flag(False) + qp_nice(0, 12) + qp_nice(0, 15)
seeds["int16_exp_out32"] = u8(2) + u8(2) + flag(False) + flag(True) + qp_nice(0, 12) + qp_nice(0, 20)
seeds["lookup_smooth"] = u8(3) + raw_i64(7) + flag(True) + u8(40) + struct.pack("<h", -1000) + struct.pack("<8h", -32768, -1, 0, 1, 127, 128, 32767, 300)
seeds["lookup_random"] = u8(3) + raw_i64(99) + flag(False) + u8(0) + struct.pack("<h", 0) + struct.pack("<8h", -32768, -32641, 5, 6, 7, 8, 9, 32767)

def attrs(it, ot, flags, rounding, izp, ozp):
    return u8(it) + u8(ot) + u8(flags) + u8(rounding) + u8(4) + i64(izp) + u8(4) + i64(ozp)
def scale(m, s): return u8(1) + i32(m) + u8(s - 2)
step_rescale = u8(0) + attrs(0, 2, 0, 0, 0, 0) + scale(1 << 30, 20)
step_mul = u8(1) + i32(I32MAX) + flag(False) + flag(False)
step_mul_shift = u8(1) + i32(I32MIN) + flag(True) + shift(63) + flag(True)
step_add = u8(2) + i32(I32MAX)
step_clamp = u8(3) + flag(True) + raw_i64(I64MIN) + i64(I64MAX)
step_clamp_empty = u8(3) + flag(False) + i64(5) + i64(4)
step_table = u8(4) + raw_i64(3) + flag(False) + u8(0)
step_table_far = u8(4) + raw_i64(3) + flag(True) + u8(2) + i32(I32MAX)
step_table16 = u8(5) + raw_i64(5) + flag(True) + u8(30) + struct.pack("<h", 0)
step_requant = u8(6) + i32(1 << 30) + shift(-31) + u8(2)
step_requant_bad = u8(6) + i32(1 << 30) + shift(0) + u8(4) + u8(9)

def chain(op, steps, tail):
    return u8(op) + u8(len(steps)) + b"".join(steps) + tail
xs = flag(True) + raw_i64(I64MIN) + flag(True) + raw_i64(I64MAX) + flag(False) + i64(-129) + flag(False) + i64(2**31)
seeds["evaluate_add_extremes"] = chain(4, [step_add], xs)
seeds["evaluate_table_extremes"] = chain(4, [step_table_far], xs)
seeds["evaluate_clamp_add"] = chain(4, [step_clamp, step_add, step_mul], xs)
seeds["evaluate_clamp_empty"] = chain(5, [step_clamp_empty], xs)
seeds["evaluate_requant"] = chain(5, [step_rescale, step_requant, step_requant_bad], xs)
seeds["evaluate_mul_shift"] = chain(5, [step_mul_shift, step_table16], xs)
seeds["collapse_rescale_table"] = chain(6, [step_rescale, step_table], u8(0))
seeds["collapse_clamp"] = chain(6, [step_clamp], u8(3))
seeds["collapse_int16_table16"] = chain(7, [step_table16], flag(False))
seeds["collapse_int16_clamp"] = chain(7, [step_clamp, step_add], flag(True))
for name, v in (("nan", float("nan")), ("inf", float("inf")), ("tiny", 5e-324), ("big", 1e300),
                ("half", 0.5), ("trig", 1e22)):
    seeds[f"math_{name}"] = u8(8) + raw_f64(v) + struct.pack("<f", 0.5) + i32(-3) + u8(1)

here = os.path.dirname(os.path.abspath(__file__))
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds")
