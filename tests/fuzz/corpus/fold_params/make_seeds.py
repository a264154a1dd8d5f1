#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz/fold_params.cpp next to this script (run it from
anywhere). Each seed follows the byte format described at the top of fold_params.cpp; the fuzzer
treats this script itself as one more (meaningless) input."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
i8 = lambda v: struct.pack('<b', v)
u8 = lambda v: struct.pack('<B', v)
u16 = lambda v: struct.pack('<H', v)
i16 = lambda v: struct.pack('<h', v)
i64 = lambda v: struct.pack('<q', v)


def values(vals, length=0):  # length byte < 200: the right length; values as int8 / 16
    return u8(length) + b''.join(u8(0) + i8(v) for v in vals)


def batch_norm(flags, dims, layout, groups_byte, n, c, length=0):
    body = u8(0) + u8(flags) + u8(len(dims))
    for d in dims:
        body += u8(d - 1) if isinstance(d, int) and 1 <= d <= 6 else u8(200) + i64(d[0])
    body += u8(layout) + u8(groups_byte)
    body += values([(7 * i) % 50 - 25 for i in range(n)], length)
    body += values([i - 2 for i in range(c)], length)   # mean
    body += values([16 + i for i in range(c)], length)  # var (1 + i / 16)
    body += values([8 + i for i in range(c)], length)   # gamma
    body += values([-i for i in range(c)], length)      # beta
    body += values([i for i in range(c)], length)       # bias
    return body + u8(0) + u8(0) + u8(0)                 # eps 1e-5, output spans right


def rescale(m_hi=0x4000, left=15, shift=30, izp=None):
    # forced types, single round, zero points when the input is int8, one scale
    body = u8(0) + u8(0) + (u8(0) + i8(izp) if izp is not None else b'')
    return body + u8(0) + u16(m_hi) + u8(left) + u8(shift + 2)


def out_rescale(ozp=0, m_hi=0x4000, left=15, shift=40):  # int32 -> int8: output zp read
    return u8(0) + u8(0) + u8(0) + i8(ozp) + u8(0) + u16(m_hi) + u8(left) + u8(shift + 2)


table = bytes((i * 37) & 0xFF for i in range(256))
seeds = {
    'bn_conv2d': batch_norm(0, [4, 2, 3, 3], 0, 0, 72, 4),
    'bn_double_linear': batch_norm(1 | 2, [3, 5], 0, 0, 15, 3),
    'bn_hwio': batch_norm(0, [3, 3, 2, 4], 2, 0, 72, 4),
    'bn_grouped_transposed': batch_norm(0, [4, 3, 2], 3, 1, 24, 6),  # groups 2
    # ConvTranspose dims (2^62 + 1, 4) over 4 floats: the product wraps to 4 without a check.
    'bn_wrapping_dims': batch_norm(0, [(2**62 + 1,), 4], 3, 0, 4, 4, length=202),
    'dyt_alpha': u8(1) + rescale(izp=0) + rescale(izp=0, shift=20) + out_rescale() +
                 u8(0) + table + u8(0) + u8(0) + i8(3) + u8(3) + u8(0),
    'dyt_alpha_short_table': u8(1) + rescale(izp=0) + rescale(izp=0) + out_rescale() +
                             u8(251) + table[:251],
    # Every RESCALE multiplies by 1 (2^29 at shift 29): a = t * gamma + beta per channel.
    'dyt_affine': u8(2) + u8(0x0F) + u8(0) + table + rescale(izp=0, shift=29) +
                  rescale(izp=0, shift=29) + out_rescale(shift=29) + rescale(izp=0, shift=29) +
                  rescale(izp=0, shift=29) + out_rescale(shift=29) +
                  # 2 channels: gamma 1, 1; beta 0, 1; table zero point 0; MUL shift 0
                  u8(2) + u8(0) + i8(1) + u8(0) + i8(1) + u8(0) + u8(0) + i8(0) + u8(0) + i8(1) +
                  u8(0) + i8(0) + u8(3) +
                  # conv (2, 2, 2) OIHW, groups 1; weights; one zero point 0; no bias; int8
                  u8(0) + u8(0) + u8(1) + u8(1) + u8(1) + u8(1) + u8(1) +
                  b''.join(u8(0) + i8(4 * v) for v in (1, -2, 3, 0, 5, -1, 2, 2)) +
                  u8(0) + u8(0) + i8(0) + u8(0) + u8(0) + u8(0) + u8(0),
    'scale_div2': u8(3) + u8(33) + u8(0) + u8(0) + u8(0) + u8(13) + u8(0) + u8(0) + i8(0) + u8(0) +
                  bytes(64) + u8(0) + u8(13) + u8(0) + u8(0) + i8(0) + u8(0) + u8(0) + u8(0) +
                  u8(14) + u8(0) + u8(0) + i8(0) + u8(0),
    'scale_int16_sandwich': u8(3) + u8(32) + u8(1) + u8(0) + u8(2) + u8(10) + u8(0) + u8(0) +
                            i8(0) + u8(0) + bytes(64) + u8(2) + u8(10) + u8(0) + u8(0) + i8(0) +
                            u8(0) + u8(1),
}

# An empty gamma (length byte 207: 207 % 9 = 0) where torch would assume ones: refused.
bn = batch_norm(0, [2, 1], 0, 0, 2, 2)
gamma_at = 1 + 1 + 1 + 2 + 1 + 1 + (1 + 4) + 3 * (1 + 4)  # op, flags, rank, dims, layout, groups
seeds['bn_empty_gamma'] = bn[:gamma_at] + u8(207) + bn[gamma_at + 5:]

for name, data in seeds.items():
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)
