// exp, expm1, log and log1p for float and double, correctly rounded as far as tested
// (docs/exactness.md): double-double evaluation, then one rounding to the target type.
#pragma once

#include <limits>

#include "qfold/math/double_double.hpp"
#include "qfold/math/float_bits.hpp"
#include "qfold/math/rounding.hpp"

namespace qfold::math {
namespace detail {

// ln 2 = ln2_1 + ln2_2 + ln2_3 to about 2^-143; ln2_1 has 32 significant bits, so k * ln2_1 is
// exact for |k| < 2^21. Constants from tests/reference/gen_math_constants.py.
inline constexpr double ln2_1 = 0x1.62e42ffp-1;
inline constexpr double ln2_2 = -0x1.718432a1b0e26p-35;
inline constexpr double ln2_3 = -0x1.9ff0342542fc3p-90;
inline constexpr double inv_ln2 = 0x1.71547652b82fep+0;

// e * ln 2 as a double-double, |e| < 2^21 (relative error ~2^-130).
[[nodiscard]] constexpr double_double times_ln2(double e) noexcept {
  return dd::add(dd::add(dd::two_prod(e, ln2_2), e * ln2_3), e * ln2_1);
}

// expm1(r) for |r| <= 2^-9.5 by Taylor series: terms from r^6 on are below 2^-53 relative to r
// and are summed in double; 1/3!, 1/4!, 1/5! are double-doubles.
[[nodiscard]] constexpr double_double expm1_taylor(double_double r) noexcept {
  const double x = r.hi;
  const double tail =
      0x1.6c16c16c16c17p-10 +
      x * (0x1.a01a01a01a01ap-13 +
           x * (0x1.a01a01a01a01ap-16 + x * (0x1.71de3a556c734p-19 + x * 0x1.27e4fb7789f5cp-22)));
  double_double acc =
      dd::add(double_double{0x1.1111111111111p-7, 0x1.1111111111111p-63}, dd::mul(r, tail));
  acc = dd::add(double_double{0x1.5555555555555p-5, 0x1.5555555555555p-59}, dd::mul(r, acc));
  acc = dd::add(double_double{0x1.5555555555555p-3, 0x1.5555555555555p-57}, dd::mul(r, acc));
  acc = dd::add(dd::mul(r, acc), 0.5);
  acc = dd::add(dd::mul(r, acc), 1.0);
  return dd::mul(r, acc);
}

// exp(x) = 2^k * (1 + em): x = k ln2 + r with |r| <= ln2/2, and em = expm1(r) computed as
// expm1(r / 256) followed by eight doublings (1 + e)^2 - 1 = e (2 + e), which keep em's
// relative error (no cancellation near r = 0). |x.hi| < 1100.
struct exp_parts {
  double_double em;
  int k;
};
[[nodiscard]] constexpr exp_parts exp_reduce(double_double x) noexcept {
  const double kd = round_half_to_even(x.hi * inv_ln2);
  // x.hi - kd ln2_1 is exact (kd ln2_1 is exact and, for kd != 0, within a factor 2 of x.hi).
  double_double r = dd::add(dd::two_sum(x.hi - kd * ln2_1, x.lo), dd::two_prod(-kd, ln2_2));
  r = dd::add(r, -kd * ln2_3);
  double_double em{};
  if (abs(r.hi) <= 0x1.6p-10) {
    em = expm1_taylor(r);
  } else {
    em = expm1_taylor(dd::scale(r, 0x1p-8));
    for (int i = 0; i < 8; ++i) em = dd::mul(em, dd::add(em, 2.0));
  }
  return {em, static_cast<int>(kd)};
}

// expm1(x) as a double-double for |x| < 64 (the relative error stays ~2^-100).
[[nodiscard]] constexpr double_double expm1_dd(double x) noexcept {
  const exp_parts p = exp_reduce({x, 0});
  if (p.k == 0) return p.em;
  return dd::add(dd::scale(dd::add(p.em, 1.0), pow2(p.k)), -1.0);
}

// log(y) for a positive finite double-double y: y = 2^e m with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, as 2 s sum s^2n / (2n + 1).
[[nodiscard]] constexpr double_double log_dd(double_double y) noexcept {
  int e = 0;
  if (biased_exponent(y.hi) == 0) {  // subnormal: scale into the normal range first
    y = dd::scale(y, 0x1p54);
    e = -54;
  }
  const int ye = biased_exponent(y.hi) - 1023;
  double_double m = dd::scale(y, pow2(-ye));
  e += ye;
  if (m.hi > 0x1.6a09e667f3bcdp+0) {
    m = dd::scale(m, 0.5);
    ++e;
  }
  const double_double s = dd::div(dd::add(m, -1.0), dd::add(m, 1.0));
  const double_double s2 = dd::mul(s, s);
  const double z = s2.hi;
  // Terms n >= 10 are below 2^-55 of the sum: double Horner, n = 10..20.
  const double tail =
      0x1.8618618618618p-5 +
      z * (0x1.642c8590b2164p-5 +
           z * (0x1.47ae147ae147bp-5 +
                z * (0x1.2f684bda12f68p-5 +
                     z * (0x1.1a7b9611a7b96p-5 +
                          z * (0x1.0842108421084p-5 +
                               z * (0x1.f07c1f07c1f08p-6 +
                                    z * (0x1.d41d41d41d41dp-6 +
                                         z * (0x1.bacf914c1bad0p-6 +
                                              z * (0x1.a41a41a41a41ap-6 +
                                                   z * 0x1.8f9c18f9c18fap-6)))))))));
  // 1 / (2n + 1) for n = 9..1 as double-doubles.
  constexpr double_double c[] = {{0x1.af286bca1af28p-5, 0x1.af286bca1af28p-59},
                                 {0x1.e1e1e1e1e1e1ep-5, 0x1.e1e1e1e1e1e1ep-61},
                                 {0x1.1111111111111p-4, 0x1.1111111111111p-60},
                                 {0x1.3b13b13b13b14p-4, -0x1.3b13b13b13b14p-58},
                                 {0x1.745d1745d1746p-4, -0x1.745d1745d1746p-59},
                                 {0x1.c71c71c71c71cp-4, 0x1.c71c71c71c71cp-58},
                                 {0x1.2492492492492p-3, 0x1.2492492492492p-57},
                                 {0x1.999999999999ap-3, -0x1.999999999999ap-57},
                                 {0x1.5555555555555p-2, 0x1.5555555555555p-56}};
  double_double acc{tail, 0};
  for (const double_double& cn : c) acc = dd::add(cn, dd::mul(s2, acc));
  acc = dd::add(dd::mul(s2, acc), 1.0);
  const double_double log_m = dd::mul(dd::scale(s, 2.0), acc);
  if (e == 0) return log_m;
  return dd::add(times_ln2(static_cast<double>(e)), log_m);
}

}  // namespace detail

// e^x. exp(-inf) = +0, exp(+inf) = +inf, overflow to +inf, gradual underflow.
template <binary_float T>
[[nodiscard]] constexpr T exp(T x) noexcept {
  if (is_nan(x)) return x;
  if (x > T{710}) return std::numeric_limits<T>::infinity();
  if (x < T{-746}) return T{0};
  const detail::exp_parts p = detail::exp_reduce({static_cast<double>(x), 0});
  return dd::nearest<T>(dd::add(p.em, 1.0), p.k);
}

// e^x - 1, accurate near 0; signed zeros kept, expm1(-inf) = -1.
template <binary_float T>
[[nodiscard]] constexpr T expm1(T x) noexcept {
  if (is_nan(x) || x == 0) return x;
  if (x > T{710}) return std::numeric_limits<T>::infinity();
  if (x < T{-40}) return T{-1};  // e^x < 2^-57: -1 + e^x rounds to -1 in both types
  const double xd = static_cast<double>(x);
  if (abs(xd) < 0x1p-60) return dd::nearest<T>(dd::fast_two_sum(xd, xd * xd * 0.5));
  const detail::exp_parts p = detail::exp_reduce({xd, 0});
  if (p.k == 0) return dd::nearest<T>(p.em);
  if (p.k > 110) return dd::nearest<T>(dd::add(p.em, 1.0), p.k);  // the -1 is below 2^-110
  return dd::nearest<T>(dd::add(dd::scale(dd::add(p.em, 1.0), detail::pow2(p.k)), -1.0));
}

// Natural logarithm. log(+-0) = -inf, log(x < 0) = NaN, log(1) = +0, log(+inf) = +inf.
template <binary_float T>
[[nodiscard]] constexpr T log(T x) noexcept {
  if (is_nan(x) || x == std::numeric_limits<T>::infinity()) return x;
  if (x == 0) return -std::numeric_limits<T>::infinity();
  if (x < 0) return std::numeric_limits<T>::quiet_NaN();
  return dd::nearest<T>(detail::log_dd({static_cast<double>(x), 0}));
}

// log(1 + x), accurate near 0; log1p(-1) = -inf, NaN below -1, signed zeros kept.
template <binary_float T>
[[nodiscard]] constexpr T log1p(T x) noexcept {
  if (is_nan(x) || x == 0 || x == std::numeric_limits<T>::infinity()) return x;
  if (x == -1) return -std::numeric_limits<T>::infinity();
  if (x < -1) return std::numeric_limits<T>::quiet_NaN();
  const double xd = static_cast<double>(x);
  if (abs(xd) < 0x1p-60) return dd::nearest<T>(dd::fast_two_sum(xd, -(xd * xd * 0.5)));
  return dd::nearest<T>(detail::log_dd(dd::two_sum(1.0, xd)));
}

}  // namespace qfold::math
