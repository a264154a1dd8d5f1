// rref: a slow, independent high-precision reference for the real functions of qfold::math.
// Test-only. Written apart from include/qfold/math with different arithmetic and algorithms:
//
//   * Arithmetic: pairs of x87 80-bit long doubles ("xdd", about 128 significant bits), not
//     pairs of doubles; Veltkamp splitting with 2^32 + 1.
//   * Constants: pi from the first 576 bits of its hexadecimal expansion (the same digits as
//     Blowfish's P-array, 243F6A88 85A308D3 ...), ln 2 from the series sum 1/(k 2^k).
//   * exp: x = k ln2 + r, Taylor series of exp(r / 2^12), then twelve squarings.
//     log: Newton (Halley) iterations on exp from a long double start, or the log1p series
//     near 1. tanh: sinh/cosh series below 1, (e^2x - 1)/(e^2x + 1) above. sigmoid: the
//     formula, as the long double range has no underflow for it. erf: Maclaurin series below
//     2.5; erfc: Laplace's continued fraction above 2.5. sin/cos: Cody-Waite reduction with
//     32-bit pieces of pi/2 (exact products for |x| < 2^30), Taylor series of the remainder.
//     atan: three argument halvings atan x = 2 atan(x / (1 + sqrt(1 + x^2))), then its series.
//
// The library uses double-double arithmetic, table-based erfcx, Payne-Hanek reduction, atanh
// series for log and expm1 doublings for exp; nothing here is shared with it. Relative error of
// every function below is about 2^-110 or better in the ranges the tests use (each is cross-
// checked against glibc's long double functions, which are within a few 2^-64, in
// tests/unit/math_accuracy_test.cpp).
#ifndef QFOLD_TESTS_REFERENCE_REAL_REFERENCE_HPP
#define QFOLD_TESTS_REFERENCE_REAL_REFERENCE_HPP

#include <cmath>
#include <cstdint>
#include <limits>

namespace rref {

using ld = long double;
static_assert(std::numeric_limits<ld>::digits == 64, "rref needs the x87 80-bit long double");

struct xdd {
  ld hi = 0, lo = 0;
};

inline xdd quick_two_sum(ld a, ld b) {
  const ld s = a + b;
  return {s, b - (s - a)};
}
inline xdd two_sum(ld a, ld b) {
  const ld s = a + b;
  const ld v = s - a;
  return {s, (a - (s - v)) + (b - v)};
}
inline xdd two_prod(ld a, ld b) {
  const ld p = a * b;
  const ld ca = 4294967297.0L * a, cb = 4294967297.0L * b;
  const ld ah = ca - (ca - a), al = a - ah;
  const ld bh = cb - (cb - b), bl = b - bh;
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}
inline xdd operator+(xdd a, xdd b) {
  xdd s = two_sum(a.hi, b.hi);
  const xdd t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = quick_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return quick_two_sum(s.hi, s.lo);
}
inline xdd operator-(xdd a) { return {-a.hi, -a.lo}; }
inline xdd operator-(xdd a, xdd b) { return a + (-b); }
inline xdd operator*(xdd a, xdd b) {
  xdd p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return quick_two_sum(p.hi, p.lo);
}
inline xdd operator/(xdd a, xdd b) {
  const ld q1 = a.hi / b.hi;
  xdd r = a - b * xdd{q1, 0};
  const ld q2 = r.hi / b.hi;
  r = r - b * xdd{q2, 0};
  const ld q3 = r.hi / b.hi;
  return quick_two_sum(q1, q2) + xdd{q3, 0};
}
inline xdd operator/(xdd a, ld d) {  // by a long double: two quotient digits, exact remainder
  const ld q1 = a.hi / d;
  const xdd p = two_prod(q1, d);
  const ld q2 = (((a.hi - p.hi) - p.lo) + a.lo) / d;
  return quick_two_sum(q1, q2);
}
inline xdd ldexp(xdd a, int e) { return {std::ldexp(a.hi, e), std::ldexp(a.lo, e)}; }
inline xdd x(ld v) { return {v, 0}; }
inline ld to_ld(xdd a) { return a.hi + a.lo; }
inline xdd sqrt(xdd a) {  // two Newton steps from the long double root
  xdd y = x(std::sqrt(a.hi));
  for (int i = 0; i < 2; ++i) y = (y + a / y) * x(0.5L);
  return y;
}

// pi = 3 + sum pi_hex[i] 16^-(8 (i + 1)), 576 bits.
inline constexpr std::uint32_t pi_hex[18] = {
    0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0,
    0x082EFA98, 0xEC4E6C89, 0x452821E6, 0x38D01377, 0xBE5466CF, 0x34E90C6C,
    0xC0AC29B7, 0xC97C50DD, 0x3F84D5B5, 0xB5470917, 0x9216D5D9, 0x8979FB1B};
// pi/2 in 32-bit pieces: piece 0 = 3/2, piece i = pi_hex[i-1] 2^(-32 i - 1) (all exact).
inline ld half_pi_piece(int i) {
  return i == 0 ? 1.5L : std::ldexp(static_cast<ld>(pi_hex[i - 1]), -32 * i - 1);
}
inline xdd pi() {
  xdd s = x(3);
  for (int i = 17; i >= 0; --i) s = s + x(std::ldexp(static_cast<ld>(pi_hex[i]), -32 * (i + 1)));
  return s;
}
inline xdd ln2() {  // sum 1 / (k 2^k)
  xdd s{};
  for (int k = 140; k >= 1; --k) s = s + x(1) / std::ldexp(static_cast<ld>(k), k);
  return s;
}

// --- exp family ----------------------------------------------------------------------------
inline xdd exp(xdd a) {
  static const xdd l2 = ln2();
  if (a.hi > 11356) return x(std::numeric_limits<ld>::infinity());
  if (a.hi < -11400) return x(0);
  const ld k = std::nearbyint(a.hi / l2.hi);
  const xdd r = ldexp(a - xdd(two_prod(k, l2.hi)) - x(k * l2.lo), -12);
  xdd sum = x(1), term = x(1);
  for (int n = 1; n < 40; ++n) {
    term = term * r / static_cast<ld>(n);
    sum = sum + term;
    if (std::fabs(term.hi) < 1e-40L) break;
  }
  for (int i = 0; i < 12; ++i) sum = sum * sum;
  return ldexp(sum, static_cast<int>(k));
}
inline xdd expm1(ld a) {
  if (std::fabs(a) < 0.5L) {
    xdd sum{}, term = x(1);
    for (int n = 1; n < 60; ++n) {
      term = term * x(a) / static_cast<ld>(n);
      sum = sum + term;
      if (std::fabs(term.hi) < 1e-40L * std::fabs(a)) break;
    }
    return sum;
  }
  return exp(x(a)) - x(1);
}

// --- log family ----------------------------------------------------------------------------
inline xdd log1p_series(xdd u) {  // |u| < 1/16
  xdd sum{}, p = u;
  for (int n = 1; n < 60; ++n) {
    const xdd t = p / static_cast<ld>(n);
    sum = (n % 2 == 1) ? sum + t : sum - t;
    p = p * u;
    if (std::fabs(t.hi) < 1e-40L * std::fabs(u.hi)) break;
  }
  return sum;
}
inline xdd log(xdd a) {  // a > 0
  if (std::fabs(to_ld(a) - 1) < 0.0625L) return log1p_series(a - x(1));
  xdd y = x(std::log(a.hi));
  for (int i = 0; i < 3; ++i) {
    const xdd e = exp(y);
    y = y + x(2) * (a - e) / (a + e);
  }
  return y;
}
inline xdd log1p(ld a) {
  if (std::fabs(a) < 0.0625L) return log1p_series(x(a));
  return log(two_sum(1, a));
}

// --- hyperbolic ----------------------------------------------------------------------------
inline xdd tanh(ld a) {
  const ld s = a < 0 ? -1 : 1, v = std::fabs(a);
  if (v > 45) return x(s);
  if (v < 1) {  // sinh / cosh series
    xdd sh{}, ch{}, term = x(1);
    for (int n = 0; n < 80; ++n) {
      if (n % 2 == 0)
        ch = ch + term;
      else
        sh = sh + term;
      term = term * x(v) / static_cast<ld>(n + 1);
      if (n > 4 && std::fabs(term.hi) < 1e-42L * v) break;
    }
    return x(s) * sh / ch;
  }
  const xdd e = exp(x(2 * v));
  return x(s) * (e - x(1)) / (e + x(1));
}
inline xdd sigmoid(ld a) { return x(1) / (x(1) + exp(x(-a))); }

// --- erf, erfc -----------------------------------------------------------------------------
inline xdd erf_series(ld a) {  // 2/sqrt(pi) sum (-1)^n a^(2n+1) / (n! (2n+1))
  static const xdd two_over_sqrt_pi = x(2) / sqrt(pi());
  const xdd a2 = two_prod(a, a);
  xdd sum{}, p = x(a);
  for (int n = 0; n < 400; ++n) {
    const xdd t = p / static_cast<ld>(2 * n + 1);
    sum = (n % 2 == 0) ? sum + t : sum - t;
    p = p * a2 / static_cast<ld>(n + 1);
    if (n > 2 && std::fabs(t.hi) < 1e-42L * std::fabs(sum.hi)) break;
  }
  return two_over_sqrt_pi * sum;
}
// erfc a for a >= 2.5: e^(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))),
// evaluated backwards; depth 40 + 1000/a^2 is converged to the last bit of the xdd (a depth of
// 200 and of 5000 agree exactly at a = 2.5; 150 agrees to 6e-35).
inline xdd erfc_cf(ld a) {
  static const xdd sqrt_pi = sqrt(pi());
  const int depth = 40 + static_cast<int>(1000 / (a * a));
  xdd f = x(a);
  for (int n = depth; n >= 1; --n) f = x(a) + x(n * 0.5L) / f;
  return exp(-two_prod(a, a)) / (sqrt_pi * f);
}
inline xdd erfc(ld a) {
  if (a < 0) return x(2) - erfc(-a);
  if (a < 2.5L) return x(1) - erf_series(a);
  return erfc_cf(a);
}
inline xdd erf(ld a) {
  if (std::fabs(a) < 2.5L) return erf_series(a);
  const xdd c = erfc_cf(std::fabs(a));
  return a < 0 ? c - x(1) : x(1) - c;
}

// --- sqrt ----------------------------------------------------------------------------------
inline xdd sqrt(ld a) { return sqrt(x(a)); }
inline xdd rsqrt(ld a) { return x(1) / sqrt(x(a)); }

// --- trig (|a| < 2^30) ---------------------------------------------------------------------
struct quadrant {
  xdd r;
  int k;
};
inline quadrant reduce(ld a) {
  static const xdd p = pi();
  const ld k = std::nearbyint(to_ld(x(2) * x(a) / p));  // |k| < 2^31: every k * piece exact
  xdd r = x(a);
  for (int i = 0; i < 12; ++i) r = r - x(k * half_pi_piece(i));
  return {r, static_cast<int>(static_cast<long long>(k) & 3)};
}
inline xdd sin_series(xdd r) {
  const xdd r2 = r * r;
  xdd sum{}, t = r;
  for (int n = 0; n < 40; ++n) {
    sum = (n % 2 == 0) ? sum + t : sum - t;
    t = t * r2 / static_cast<ld>((2 * n + 2) * (2 * n + 3));
    if (std::fabs(t.hi) < 1e-42L * std::fabs(r.hi)) break;
  }
  return sum;
}
inline xdd cos_series(xdd r) {
  const xdd r2 = r * r;
  xdd sum{}, t = x(1);
  for (int n = 0; n < 40; ++n) {
    sum = (n % 2 == 0) ? sum + t : sum - t;
    t = t * r2 / static_cast<ld>((2 * n + 1) * (2 * n + 2));
    if (std::fabs(t.hi) < 1e-42L) break;
  }
  return sum;
}
inline xdd sin(ld a) {
  const quadrant q = reduce(a);
  const xdd v = (q.k % 2 == 0) ? sin_series(q.r) : cos_series(q.r);
  return q.k >= 2 ? -v : v;
}
inline xdd cos(ld a) {
  const quadrant q = reduce(a);
  const xdd v = (q.k % 2 == 0) ? cos_series(q.r) : sin_series(q.r);
  return (q.k == 1 || q.k == 2) ? -v : v;
}
inline xdd atan(ld a) {
  static const xdd half_pi = pi() * x(0.5L);
  const bool neg = a < 0;
  const ld v = std::fabs(a);
  const bool inv = v > 1;
  xdd t = inv ? x(1) / x(v) : x(v);
  for (int i = 0; i < 3; ++i) t = t / (x(1) + sqrt(x(1) + t * t));
  const xdd t2 = t * t;
  xdd sum{}, p = t;
  for (int n = 0; n < 80; ++n) {
    const xdd term = p / static_cast<ld>(2 * n + 1);
    sum = (n % 2 == 0) ? sum + term : sum - term;
    p = p * t2;
    if (std::fabs(term.hi) < 1e-42L * std::fabs(t.hi)) break;
  }
  xdd r = sum * x(8);
  if (inv) r = half_pi - r;
  return neg ? -r : r;
}

// --- deciding the correctly rounded value ----------------------------------------------------
// The T nearest to the reference value v, when v is farther than rel * |v| from every rounding
// boundary (decided == true); otherwise the reference cannot settle it (decided == false).
template <class T>
struct rounded {
  T value;
  bool decided;
};
template <class T>
rounded<T> correctly_rounded(xdd v, ld rel = 0x1p-100L) {
  const ld inf = std::numeric_limits<T>::infinity();
  const ld max = std::numeric_limits<T>::max();
  const ld top = max + (max - static_cast<ld>(std::nextafter(static_cast<T>(max), T{0}))) / 2;
  const ld av = std::fabs(v.hi);
  if (v.hi == 0) return {static_cast<T>(v.hi), true};
  if (av >= top * (1 + rel)) return {static_cast<T>(v.hi < 0 ? -inf : inf), true};
  if (av > top * (1 - rel)) return {T{0}, false};
  T c = static_cast<T>(v.hi);
  if (std::isinf(c)) c = static_cast<T>(v.hi < 0 ? -max : max);
  const T down = std::nextafter(c, -static_cast<T>(inf)),
          up = std::nextafter(c, static_cast<T>(inf));
  const ld tol = rel * av;
  // v - midpoint, exact to long double rounding (the midpoint of two T values is exact in ld).
  const auto beyond = [&](T other) { return (v.hi - (static_cast<ld>(c) + other) / 2) + v.lo; };
  const ld d_up = beyond(up), d_down = beyond(down);
  if (std::fabs(d_up) <= tol || std::fabs(d_down) <= tol) return {c, false};
  if (d_up > 0) return {up, true};
  if (d_down < 0) return {down, true};
  return {c, true};
}

// |got - v| in units of the spacing of T at the correctly rounded value (0.5 = correctly
// rounded at a boundary; for the infinite result 0 when got is inf).
template <class T>
ld ulp_error(T got, xdd v, T correct) {
  if (std::isinf(correct)) return std::isinf(got) && (got > 0) == (correct > 0) ? 0 : 1e30L;
  const T up = std::nextafter(std::fabs(correct), std::numeric_limits<T>::infinity());
  const ld spacing = static_cast<ld>(up) - std::fabs(static_cast<ld>(correct));
  return std::fabs((static_cast<ld>(got) - v.hi) - v.lo) / spacing;
}

}  // namespace rref

#endif  // QFOLD_TESTS_REFERENCE_REAL_REFERENCE_HPP
