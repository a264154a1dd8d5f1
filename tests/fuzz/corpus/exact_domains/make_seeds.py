#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz/exact_domains.cpp next to this script (run it from
anywhere). Each seed follows the byte format described at the top of exact_domains.cpp; the
fuzzer treats this script itself as one more (meaningless) input."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
i8 = lambda v: struct.pack('<b', v)
u8 = lambda v: struct.pack('<B', v)
i16 = lambda v: struct.pack('<h', v)
u16 = lambda v: struct.pack('<H', v)
u32 = lambda v: struct.pack('<I', v)
i64 = lambda v: struct.pack('<q', v)

INT8 = u8(3) + u8(0) + u16(0) + u16(0) + u8(1)    # domain: the int8 type, whole
INT16 = u8(3) + u8(2) + u16(0) + u16(0) + u8(1)   # the int16 type, whole
WHOLE = u8(1 | 3 << 2) + i64(-2**63)                # lo raw int64, hi INT64_MAX
EMPTY = u8(0 | 2 << 2) + i16(10) + u8(0)            # lo 10, hi = lo - 1
NEAR_END = u8(2 | 0 << 2) + u8(1) + i8(-128) + u16(40)  # INT64_MIN .. INT64_MIN + 40


def space(tin=0, tout=0, flags=0, izps=(0,)):
    return u8(tin) + u8(tout) + u8(flags) + u8(len(izps)) + b''.join(i16(z) for z in izps)


def rescale_map(shift, mult=1 << 30, f=1, izp=0, ozp=0, perturb=False):
    # map mode 2: f bit 0 = int8 input, (f >> 1) % 3 = output i8 / i16 / i32
    body = u8(2) + u8(f) + i8(izp) + (i8(ozp) if (f >> 1) % 3 == 0 else b'')
    body += u32(mult) + u8(0) + u8(shift - 2)
    return body + (u8(1) + u16(77) + i8(1) if perturb else u8(0))


def line_map(a, b):  # map mode 1, a as int8, b as int16
    return u8(1) + u8(0) + i8(a) + u8(0) + i16(b) + u8(0)


def attrs(tin, tout, izp=0, ozp=0, rounding=0):  # read_attributes (types by index % 4)
    return u8(tin) + u8(tout) + u8(0) + u8(rounding) + i8(izp) + i8(ozp)


seeds = {
    'classify_line': u8(0) + INT8 + space() + u8(1) + line_map(3, -7),
    'classify_identity16': u8(0) + INT16 + space(1, 1) + u8(1) + line_map(1, 0),
    'classify_rescale': u8(0) + INT8 + space() + u8(1) + rescale_map(31),
    'classify_near_miss': u8(0) + INT8 + space() + u8(1) + rescale_map(33, perturb=True),
    'classify_near_end': u8(0) + NEAR_END + space() + u8(0) + line_map(-2, 1),
    'synth_rescale': u8(1) + INT8 + space() + u8(1) + rescale_map(34, mult=0x5a000000) +
                     u8(1) + i8(0) + u8(0),
    'synth_i16_out': u8(1) + INT8 + space(0, 1) + u8(1) + rescale_map(20, f=3) + u8(1) +
                     i8(0) + u8(1),
    # ExecuTorch's consecutive RESCALEs int8 -> int32 (x 2^-1) -> int8 (x 2): 1 << 30 at 31, 32.
    'merge_two_rescales': u8(2) + INT8 + space() + u8(2) + u8(0) + attrs(0, 2) + u32(1 << 30) +
                          u8(34) + u8(0) + attrs(2, 0) + u32(1 << 30) + u8(32),
    'merge_whole_int64': u8(2) + WHOLE + space(2, 2) + u8(0),
    'merge_empty': u8(2) + EMPTY + space() + u8(1) + u8(2) + u8(0) + i8(3),
    'merge_clamp_table': u8(2) + INT8 + space() + u8(2) + u8(3) + u8(0) + i16(-50) + u8(0) +
                         i16(60) + u8(4) + bytes(range(0, 256)) + i16(-128),
    'fit_line': u8(3) + u8(12) + u8(0) + i16(-30) + i8(5) + i16(9) + bytes([3, 1, 4, 1, 5, 9] * 2),
    'fit_line_wide': u8(3) + u8(3) + u8(2 | 8) + i16(0) + i64(2**62) + i16(1) + i64(2**61) * 3,
    'domain_whole': u8(4) + i64(-2**63) + i64(2**63 - 1),
    'domain_int16': u8(4) + i64(-32768) + i64(32767),
}

for name, data in seeds.items():
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)
