// tanh and the logistic sigmoid 1 / (1 + e^-x) for float and double, each one correctly rounded
// function (not a composition of rounded steps): double-double evaluation, one final rounding.
#pragma once

#include <limits>

#include "qfold/math/double_double.hpp"
#include "qfold/math/exp_log.hpp"
#include "qfold/math/float_bits.hpp"

namespace qfold::math {

// tanh(|x|) = E / (E + 2) with E = expm1(2|x|): no cancellation anywhere. Signed zeros kept,
// tanh(+-inf) = +-1.
template <binary_float T>
[[nodiscard]] constexpr T tanh(T x) noexcept {
  if (is_nan(x) || x == 0) return x;
  const double a = abs(static_cast<double>(x));
  if (a >= 22) return copysign(T{1}, x);  // 1 - tanh(22) < 2^-62
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
