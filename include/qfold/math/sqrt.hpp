// sqrt and rsqrt = 1/sqrt(x) for float and double, correctly rounded by construction: the
// rounding of each result is decided by an exact integer comparison, not by an error bound.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "qfold/math/double_double.hpp"
#include "qfold/math/float_bits.hpp"

namespace qfold::math {
namespace detail {

// Unsigned integers of 128 and 192 bits, only what the exact checks below need.
struct u128 {
  std::uint64_t hi = 0, lo = 0;
};
[[nodiscard]] constexpr u128 mul_64x64(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t a0 = a & 0xFFFFFFFF, a1 = a >> 32, b0 = b & 0xFFFFFFFF, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFF) + (p10 & 0xFFFFFFFF);
  return {p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & 0xFFFFFFFF)};
}
[[nodiscard]] constexpr int compare(u128 a, u128 b) noexcept {
  if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
  return a.lo < b.lo ? -1 : (a.lo == b.lo ? 0 : 1);
}
struct u192 {
  std::uint64_t w2 = 0, w1 = 0, w0 = 0;  // most significant first
};
[[nodiscard]] constexpr u192 mul_128x64(u128 a, std::uint64_t b) noexcept {
  const u128 lo = mul_64x64(a.lo, b), hi = mul_64x64(a.hi, b);
  const std::uint64_t w1 = lo.hi + hi.lo;
  return {hi.hi + (w1 < lo.hi ? 1 : 0), w1, lo.lo};
}
[[nodiscard]] constexpr int compare(u192 a, u192 b) noexcept {
  if (a.w2 != b.w2) return a.w2 < b.w2 ? -1 : 1;
  if (a.w1 != b.w1) return a.w1 < b.w1 ? -1 : 1;
  return a.w0 < b.w0 ? -1 : (a.w0 == b.w0 ? 0 : 1);
}
[[nodiscard]] constexpr u192 pow2_192(int e) noexcept {  // 0 <= e < 192
  u192 r;
  if (e >= 128)
    r.w2 = std::uint64_t{1} << (e - 128);
  else if (e >= 64)
    r.w1 = std::uint64_t{1} << (e - 64);
  else
    r.w0 = std::uint64_t{1} << e;
  return r;
}

// x = m 2^e with m in [2^52, 2^54) and e even (a positive finite double).
struct even_split {
  std::uint64_t m;
  int e;
};
[[nodiscard]] constexpr even_split split_even(double x) noexcept {
  const auto b = to_bits(x);
  int biased = static_cast<int>(b >> 52);
  std::uint64_t m = b & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0) {
    const int shift = std::countl_zero(m) - 11;
    m <<= shift;
    biased = 1 - shift;
  } else {
    m |= std::uint64_t{1} << 52;
  }
  int e = biased - 1075;
  if ((e & 1) != 0) {
    m <<= 1;
    --e;
  }
  return {m, e};
}

// sqrt of a positive finite double, correctly rounded: S = floor(sqrt(m 2^56)) has 55 bits and
// S^2 is compared exactly with m 2^56, so the two dropped bits and the remainder decide.
[[nodiscard]] constexpr double sqrt_positive(double x) noexcept {
  const even_split v = split_even(x);
  const u128 n{v.m >> 8, v.m << 56};  // m 2^56, below 2^110
  // Newton in double from a power-of-two start, to within a few units of S.
  const double nd = static_cast<double>(v.m) * 0x1p56;
  double y = pow2((64 - std::countl_zero(v.m) + 56) / 2);
  for (int i = 0; i < 7; ++i) y = 0.5 * (y + nd / y);
  auto s = static_cast<std::uint64_t>(y);
  while (compare(mul_64x64(s, s), n) > 0) --s;
  while (compare(mul_64x64(s + 1, s + 1), n) <= 0) ++s;
  const bool inexact = compare(mul_64x64(s, s), n) != 0;
  std::uint64_t kept = s >> 2;
  const std::uint64_t rest = s & 3;
  if (rest == 3 || (rest == 2 && (inexact || (kept & 1) != 0))) ++kept;
  // sqrt(x) = S 2^((e - 56) / 2); kept = S / 4, at most 2^53 (then still exact as a double).
  return static_cast<double>(kept) * pow2((v.e - 56) / 2 + 2);
}

// 1/sqrt of a positive finite double, correctly rounded to T. A double-double estimate gives
// the candidate Y (y = Y 2^-p for y = 1/sqrt(m 2^-52) in (1/2, 1]); Y is right exactly when
// (2Y - 1)^2 m < 2^(2p + 54) < (2Y + 1)^2 m, which is checked in 192-bit integers.
template <binary_float T>
[[nodiscard]] constexpr T rsqrt_positive(double x) noexcept {
  constexpr int p = float_traits<T>::precision;
  const even_split v = split_even(x);
  const double vd = static_cast<double>(v.m) * 0x1p-52;  // exact, in [1, 4)
  const double y0 = 1 / sqrt_positive(vd);
  // One Newton step in double-double: y1 = y0 + y0 (1 - v y0^2) / 2.
  const double_double r = dd::add(dd::neg(dd::mul(dd::two_prod(y0, y0), vd)), 1.0);
  const double_double y1 = dd::add(dd::mul(dd::scale(r, 0.5), y0), y0);
  auto big_y = static_cast<std::uint64_t>(dd::nearest<T>(y1) * static_cast<T>(pow2(p)));
  const u192 target = pow2_192(2 * p + 54);
  const auto bound = [&](std::uint64_t two_y_pm_1) {
    return compare(mul_128x64(mul_64x64(two_y_pm_1, two_y_pm_1), v.m), target);
  };
  while (bound(2 * big_y - 1) >= 0) --big_y;  // Y - 1/2 must lie below 2^p / sqrt(v)
  while (bound(2 * big_y + 1) <= 0) ++big_y;  // and Y + 1/2 above it
  // x = v 2^(e + 52), so rsqrt(x) = Y 2^-p 2^(-e/2 - 26), scaled in two exact steps.
  return static_cast<T>(static_cast<double>(big_y) * pow2(-p) * pow2(-v.e / 2 - 26));
}

}  // namespace detail

// Correctly rounded square root (IEEE): sqrt(-0) = -0, NaN below zero, sqrt(+inf) = +inf.
// The float version rounds the double result, which is exact for sqrt (53 >= 2*24 + 2).
// IEEE 754 requires a correctly rounded square root and every supported target has one in
// hardware: at run time it gives the same bits as the integer method, about 50x faster.
template <binary_float T>
[[nodiscard]] constexpr T sqrt(T x) noexcept {
  if (!std::is_constant_evaluated()) return std::sqrt(x);
  if (is_nan(x) || x == 0 || x == std::numeric_limits<T>::infinity()) return x;
  if (x < 0) return std::numeric_limits<T>::quiet_NaN();
  return static_cast<T>(detail::sqrt_positive(static_cast<double>(x)));
}

// Correctly rounded 1/sqrt(x) (IEEE rSqrt): rsqrt(+-0) = +-inf, NaN below zero,
// rsqrt(+inf) = +0.
template <binary_float T>
[[nodiscard]] constexpr T rsqrt(T x) noexcept {
  if (is_nan(x)) return x;
  if (x == 0) return copysign(std::numeric_limits<T>::infinity(), x);
  if (x < 0) return std::numeric_limits<T>::quiet_NaN();
  if (x == std::numeric_limits<T>::infinity()) return T{0};
  return detail::rsqrt_positive<T>(static_cast<double>(x));
}

}  // namespace qfold::math
