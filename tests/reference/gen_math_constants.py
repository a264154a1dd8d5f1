#!/usr/bin/env python3
"""Prints the constants that include/qfold/math/*.hpp hard-code (other than erfcx_table.hpp),
from exact integer and decimal arithmetic in the Python standard library:
  pi from Machin's formula, ln 2 from decimal's ln, atan(j/16) from its series after two
  argument halvings, coefficients 1/n! and 1/(2n+1) as exact fractions.
Each double-double is (nearest double, nearest double to the rest)."""
from decimal import Decimal as D, getcontext
from fractions import Fraction as F
from math import factorial

getcontext().prec = 200

def pi_fixed(bits):  # floor-ish of pi * 2^bits, error a few units
    g = bits + 64; one = 1 << g
    def atan_inv(n):
        s, t, k, sign = 0, one // n, 1, 1
        while t:
            s += sign * (t // k); t //= n * n; k += 2; sign = -sign
        return s
    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 64

def dd(fr):
    hi = float(fr); lo = float(fr - F(hi)); return "{%s, %s}" % (hi.hex(), lo.hex())

PI = F(pi_fixed(640), 1 << 640)
ln2 = F(D(2).ln())
print("ln2 =", dd(ln2))
L1 = F(round(ln2 * 2 ** 32), 2 ** 32); L2 = float(ln2 - L1); L3 = float(ln2 - L1 - F(L2))
print("ln2_1 =", float(L1).hex(), " ln2_2 =", L2.hex(), " ln2_3 =", L3.hex())
print("1/ln2 =", float(1 / ln2).hex())
print("pi/2 =", dd(PI / 2))
for n in range(3, 11): print("1/%d! =" % n, dd(F(1, factorial(n))))
for n in range(1, 21): print("1/%d =" % (2 * n + 1), dd(F(1, 2 * n + 1)))
print("sin coefficients (-1)^n/(2n+1)!:")
for n in range(14): print("  ", n, dd(F((-1) ** n, factorial(2 * n + 1))))
print("cos coefficients (-1)^n/(2n)!:")
for n in range(15): print("  ", n, dd(F((-1) ** n, factorial(2 * n))))

def atan_dec(x):
    # two halvings: atan x = 2 atan(x / (1 + sqrt(1 + x^2))), then the alternating series
    for _ in range(2): x = x / (1 + (1 + x * x).sqrt())
    s, p, n, x2 = D(0), x, 0, x * x
    while True:
        t = p / (2 * n + 1)
        if abs(t) < D(10) ** -190: break
        s += t if n % 2 == 0 else -t
        p *= x2; n += 1
    return 4 * s

print("atan(j/16):")
for j in range(17): print("  ", j, dd(F(atan_dec(D(j) / 16))))
# check: atan(1) = pi/4
assert abs(F(atan_dec(D(1))) - PI / 4) < F(1, 10 ** 150)

N = 64 * 24  # 2/pi in 64-bit words, most significant first; stable under the pi error bound
P = pi_fixed(N + 400)
lo = (1 << (2 * N + 401)) // (P + 8); hi = (1 << (2 * N + 401)) // (P - 8)
assert lo == hi
print("2/pi words:")
print(",\n".join("0x%016X" % ((lo >> (64 * (23 - j))) & ((1 << 64) - 1)) for j in range(24)))
