#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz/arith_rescale.cpp into this directory (run it here).

Each seed is byte 0 = operation, then the fields in the order the target reads them:
u8 = 1 byte; i32 = a bit-count byte (31 keeps all bits) + 4 raw bytes; i64 = bit-count byte (63)
+ 8 raw bytes; shift = one byte holding shift + 64 (or 0xFF + a raw int32); raw<T> = sizeof(T)
bytes little-endian. The seeds put each operation at its edges: INT32/INT64 extremes, the shift
limits -1, 0, 1, 2, 62, 63, 64, 200, out-of-enum types and modes, NaN/inf/subnormal scales.
"""
import os
import struct

def u8(v): return bytes([v & 0xFF])
def i32(v): return u8(31) + struct.pack("<i", v)
def i64(v): return u8(63) + struct.pack("<q", v)
def shift(v): return u8(v + 64) if -64 <= v <= 190 else u8(0xFF) + struct.pack("<i", v)
def raw_u32(v): return struct.pack("<I", v & 0xFFFFFFFF)
def raw_i64(v): return struct.pack("<q", v)
def raw_f64(v): return struct.pack("<d", v)
def flag(b): return u8(1 if b else 0)

I32MIN, I32MAX, I64MIN, I64MAX = -2**31, 2**31 - 1, -2**63, 2**63 - 1
seeds = {}

for s in (-1, 0, 1, 2, 31, 32, 62, 63, 64, 200):
    seeds[f"apply32_shift{s}"] = u8(0) + i32(1 << 20) + i32(1 << 30) + shift(s) + flag(s > 31)
    seeds[f"apply16_shift{s}"] = u8(1) + i64(-(2**47)) + i32(32767) + shift(s)
seeds["apply32_int32min"] = u8(0) + i32(I32MIN) + i32(I32MAX) + shift(32) + flag(True)
seeds["apply32_negative_multiplier"] = u8(0) + i32(5) + i32(-1) + shift(30) + flag(False)
seeds["apply16_int48_over"] = u8(1) + i64(2**47) + i32(1) + shift(10)
seeds["mul_i32_min_squared_63"] = u8(2) + u8(2) + i32(I32MIN) + flag(True) + shift(63)
seeds["mul_i8_shift1"] = u8(2) + u8(0) + i32(-128) + flag(False) + i32(127) + shift(1)
seeds["mul_i16_wrap"] = u8(2) + u8(1) + i32(-32768) + flag(False) + i32(-32768) + shift(0)
for d in (0, 1, 3, 2**30 + 1, 2**31 + 1, 2**32 - 1):
    seeds[f"reciprocal_{d}"] = u8(3) + flag(True) + raw_u32(d)
for name, v in (("nan", float("nan")), ("inf", float("inf")), ("minf", float("-inf")),
                ("zero", 0.0), ("mzero", -0.0), ("neg", -0.5), ("denorm", 5e-324),
                ("huge", 2.0**29), ("tiny", 2.0**-70), ("one", 1.0)):
    seeds[f"derive32_{name}"] = u8(4) + u8(2) + raw_f64(v) + u8(1) + u8(0)
    seeds[f"derive16_{name}"] = u8(4) + u8(2) + raw_f64(v) + u8(0) + u8(1)
    seeds[f"tflite_quantize_{name}"] = u8(5) + u8(2) + raw_f64(v) + u8(0)
seeds["derive_bad_width"] = u8(4) + u8(2) + raw_f64(0.25) + u8(2) + u8(64) + u8(0)
seeds["derive_bad_ties"] = u8(4) + u8(2) + raw_f64(0.25) + u8(1) + u8(2) + u8(9)
for s in (-32, -31, 0, 30, 31, 2**31 - 1):
    seeds[f"tflite_mbqm_shift{s}"] = (u8(6) + i32(I32MAX) + i32(1 << 30) + shift(s) + u8(0) +
                                      i64(2**47 - 1))
    seeds[f"cmsis_shift{s}"] = (u8(7) + i32(I32MIN) + i32(I32MIN) + shift(s) + u8(0) + flag(True) +
                                raw_i64(I64MIN) + flag(False) + u8(3) + shift(-49))
seeds["tflite_unknown_build"] = u8(6) + i32(1) + i32(1 << 30) + shift(0) + u8(2) + u8(7)
seeds["cmsis_s64_one"] = u8(7) + i32(0) + i32(0) + shift(0) + u8(1) + flag(True) + raw_i64(I64MIN)
seeds["gemmlowp_min_min"] = u8(8) + flag(True) + flag(True) + u8(31)
for s in (I32MIN, -31, 29, 30, 61, 62, I32MAX):
    seeds[f"conversion_{s}"] = u8(9) + i32(1 << 30) + shift(s)
seeds["disagreement"] = u8(10) + i32(1 << 30) + u8(40 - 5) + u8(0) + flag(True) + i32(-40) + u8(63)

def attrs(it, ot, flags, rounding, izp, ozp):
    # type byte: index 0..3 picks i8/i16/i32/i48, 7 then a raw byte; zp: kind 4 = i64 value
    return u8(it) + u8(ot) + u8(flags) + u8(rounding) + u8(4) + i64(izp) + u8(4) + i64(ozp)
def scale(m, s):
    return u8(1) + i32(m) + u8(s - 2) if 2 <= s <= 62 else u8(1) + i32(m) + u8(0xC0) + shift(s)

seeds["rescale_i32_i8"] = u8(11) + attrs(2, 0, 0, 0, 0, -5) + scale(1690499128, 37) + flag(False) + i64(41)
seeds["rescale_bad_type"] = u8(11) + u8(7) + u8(64) + attrs(0, 0, 0, 0, 0, 0)[1:] + scale(1 << 30, 30) + flag(False) + i64(1)
seeds["rescale_i48"] = u8(11) + attrs(3, 1, 1, 0, 0, 0) + scale(32767, 20) + flag(True) + raw_i64(I64MAX)
seeds["rescale_zp_overflow"] = u8(12) + attrs(0, 0, 0, 2, -128, 127) + scale(I32MAX, 2) + flag(False) + i64(127)
seeds["rescale_u16"] = u8(12) + attrs(1, 1, 4, 3, 32768, 0) + scale(1 << 30, 31) + flag(False) + i64(65535)
seeds["rescale_shift63"] = u8(12) + attrs(0, 0, 0, 0, 0, 0) + scale(1, 63) + flag(False) + i64(1)

def array(it_index, ot_index, a, nscales, scales, n, flags):
    # In / Out selectors: 0 int8, 1 uint8, 2 int16, 3 uint16, 4 int32, 5 int64
    return (u8(13) + a + u8(it_index) + u8(ot_index) + flag(True) + flag(True) + u8(nscales) +
            b"".join(scales) + u8(n) + flag(n >= 512) + u8(1) + flag(True) + raw_i64(12345) + u8(1))
seeds["array_i8_per_tensor"] = array(0, 0, attrs(0, 0, 0, 0, 0, 0), 1, [scale(1 << 30, 31)], 200, 0)
seeds["array_i8_table"] = array(0, 0, attrs(0, 0, 0, 0, 3, -3), 1, [scale(1 << 30, 30)], 100, 0)
seeds["array_per_channel"] = array(4, 0, attrs(2, 0, 2, 0, 0, 0), 3, [scale(1 << 30, 40)] * 3, 99, 0)
seeds["array_no_channels"] = array(0, 0, attrs(0, 0, 2, 0, 0, 0), 0, [], 10, 0)
seeds["array_i48"] = array(5, 2, attrs(3, 1, 1, 0, 0, 0), 1, [scale(1000, 30)], 64, 0)

# Issue 13 flavours: 14 vector lanes, 15 EMULATE_FLOAT / Cortex-M derivations, 16 gemmlowp int16
# and DownScale, 17 a pair of requantize flavours plus RESCALE's zero-point additions.
for single in (False, True):
    for s in (-32, -31, -1, 0, 1, 30, 31):
        seeds[f"lanes_{'single' if single else 'double'}_shift{s}"] = (
            u8(14) + i32(1500000000) + i32(1610612736) + shift(s) + flag(single))
    seeds[f"lanes_{'single' if single else 'double'}_min_min"] = (
        u8(14) + i32(I32MIN) + i32(I32MIN) + shift(0) + flag(single))
for name, v in (("tie", 0.5 + 2.0**-32), ("tie3", 0.5 + 3 * 2.0**-32), ("tiny", 2.0**-40),
                ("nan", float("nan")), ("inf", float("inf")), ("neg", -0.75), ("denorm", 5e-324),
                ("huge", 2.0**40)):
    seeds[f"derive_flavours_{name}"] = u8(15) + raw_f64(v) + flag(False) + flag(name == "huge")
seeds["derive_flavours_forced_tie"] = u8(15) + raw_f64(0.3) + flag(True) + flag(False)
seeds["gemmlowp16_min_min"] = u8(16) + struct.pack("<hh", -32768, -32768) + u8(128 + 1) + i32(I32MAX)
seeds["gemmlowp16_exp20"] = u8(16) + struct.pack("<hh", 5, -3) + u8(128 - 20) + i32(32768)
seeds["gemmlowp16_exp16"] = u8(16) + struct.pack("<hh", 20000, 2) + u8(128 + 16) + i32(-1)
seeds["flavours_neon_vs_scalar"] = (u8(17) + u8(2) + u8(4) + i32(1 << 30) + u8(33 - 1) + i32(-8) +
                                    u8(63) + attrs(3, 0, 1, 0, 0, 1) + scale(1, 2) + i64(0))
seeds["flavours_cmsis_fix"] = (u8(17) + u8(7) + u8(8) + i32(1610612736) + u8(33) + i32(1500000000) +
                               u8(63) + attrs(0, 0, 0, 0, 0, 0) + scale(1 << 30, 31) + i64(0))

here = os.path.dirname(os.path.abspath(__file__))
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds")
