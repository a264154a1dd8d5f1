// tanh and the logistic sigmoid 1 / (1 + e^-x) for float and double, each one correctly rounded
// function (not a composition of rounded steps): double-double evaluation, one final rounding.
#pragma once

#include <limits>
#include <optional>
#include <type_traits>

#include "qfold/math/double_double.hpp"
#include "qfold/math/exp_log.hpp"
#include "qfold/math/float_bits.hpp"

namespace qfold::math {

namespace detail {
// expm1(x) for 0 <= x < 700 in plain double, relative error below 20 units of 2^-53: x = k ln2 + r
// (k ln2_1 exact, Sterbenz for the subtraction, |r| <= 0.35), expm1(r) by Taylor to r^14 in
// Horner form (the rest is below 2^-56 relative), then 2^k (1 + em) - 1, which is at least
// 0.41 * 2^k for k >= 1 (no cancellation). About a tenth of expm1_dd's constant-evaluation steps.
inline constexpr double inverse_factorials[] = {  // 1 / n! for n = 14 down to 2
    1 / 87178291200.0, 1 / 6227020800.0, 1 / 479001600.0, 1 / 39916800.0, 1 / 3628800.0,
    1 / 362880.0,      1 / 40320.0,      1 / 5040.0,      1 / 720.0,      1 / 120.0,
    1 / 24.0,          1 / 6.0,          1 / 2.0};
[[nodiscard]] constexpr double expm1_fast(double x) noexcept {
  const int k = static_cast<int>(x * inv_ln2 + 0.5);
  const double r = (x - k * ln2_1) - k * ln2_2;
  double h = 0;
  for (const double c : inverse_factorials) h = h * r + c;
  const double em = r * (h * r + 1.0);
  return k == 0 ? em : pow2(k) * (1.0 + em) - 1.0;
}

// The float nearest to the real y, given y's double approximation `approx` within relative
// error `rel`: nullopt when a float midpoint is that close, so that the rounding is not certain.
// For positive normal or subnormal results below the largest float.
[[nodiscard]] constexpr std::optional<float> nearest_float_if_certain(double approx,
                                                                      double rel) noexcept {
  const float f = static_cast<float>(approx);
  const auto b = to_bits(f);
  if (b == 0 || f >= std::numeric_limits<float>::max()) return std::nullopt;
  const double below = (static_cast<double>(from_bits<float>(b - 1)) + f) / 2;  // exact in double
  const double above = (static_cast<double>(from_bits<float>(b + 1)) + f) / 2;
  const double tolerance = approx * rel;
  if (approx - below > tolerance && above - approx > tolerance) return f;
  return std::nullopt;
}
}  // namespace detail

// tanh(|x|) = E / (E + 2) with E = expm1(2|x|): no cancellation anywhere. Signed zeros kept,
// tanh(+-inf) = +-1.
template <binary_float T>
[[nodiscard]] constexpr T tanh(T x) noexcept {
  if (is_nan(x) || x == 0) return x;
  const double a = abs(static_cast<double>(x));
  if (a >= 22) return copysign(T{1}, x);     // 1 - tanh(22) < 2^-62
  if constexpr (std::is_same_v<T, float>) {  // in double first: enough but near a midpoint
    if (a >= 0x1p-30) {
      const double e = detail::expm1_fast(2 * a);  // t = e / (e + 2): two more roundings
      if (const auto f = detail::nearest_float_if_certain(e / (e + 2), 0x1p-44))
        return signbit(x) ? -*f : *f;
    }
  }
  double_double t{};
  if (a < 0x1p-30) {  // tanh x = x - x^3/3 + ...: the cube is below 2^-60 relative
    t = dd::fast_two_sum(a, -(a * a * a / 3));
  } else {
    const double_double em = detail::expm1_dd(2 * a);
    t = dd::div(em, dd::add(em, 2.0));
  }
  return dd::nearest<T>(signbit(x) ? dd::neg(t) : t);
}

// 1 / (1 + e^-x), one rounding. sigmoid(0) = 1/2 exactly, sigmoid(-inf) = +0, sigmoid(+inf) = 1.
// For x < 0 it is evaluated as e^x / (1 + e^x) with the power of two of e^x kept aside, so
// results deep in the subnormal range are rounded once too.
template <binary_float T>
[[nodiscard]] constexpr T sigmoid(T x) noexcept {
  if (is_nan(x)) return x;
  if constexpr (std::is_same_v<T, float>) {  // as tanh: in double first, with e^|x| = 1 + e
    if (x > -104 && x < 40) {                // beyond, the float is 0 or 1: the exact path
      const double e = detail::expm1_fast(abs(static_cast<double>(x)));
      const double y = x >= 0 ? (1 + e) / (2 + e) : 1 / (2 + e);  // no cancellation
      if (const auto f = detail::nearest_float_if_certain(y, 0x1p-44)) return *f;
    }
  }
  if (x >= T{40}) return T{1};  // e^-40 < 2^-57
  if (x < T{-746}) return T{0};
  if (x >= 0) {
    const detail::exp_parts p = detail::exp_reduce({-static_cast<double>(x), 0});  // k >= -58
    const double_double d =
        dd::add(dd::scale(dd::add(p.em, 1.0), detail::pow2(p.k)), 1.0);  // 1 + e^-x
    return dd::nearest<T>(dd::div({1.0, 0.0}, d));
  }
  const detail::exp_parts p = detail::exp_reduce({static_cast<double>(x), 0});
  const double_double v = dd::add(p.em, 1.0);     // e^x = v 2^k
  if (p.k < -110) return dd::nearest<T>(v, p.k);  // 1 + e^x is 1 to 2^-110
  return dd::nearest<T>(dd::div(v, dd::add(dd::scale(v, detail::pow2(p.k)), 1.0)), p.k);
}

}  // namespace qfold::math
