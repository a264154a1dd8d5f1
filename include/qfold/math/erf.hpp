// erf and erfc for float and double, correctly rounded as far as tested: Maclaurin series near 0,
// elsewhere e^(-x^2) times a piecewise Taylor expansion of erfcx, in double-double.
#pragma once

#include <limits>

#include "qfold/math/double_double.hpp"
#include "qfold/math/erfcx_table.hpp"
#include "qfold/math/exp_log.hpp"
#include "qfold/math/float_bits.hpp"

namespace qfold::math {
namespace detail {

// erf(x) for |x| < 0.5 (x not tiny): 2/sqrt(pi) x sum a_n x^2n.
[[nodiscard]] constexpr double_double erf_small(double x) noexcept {
  const double_double z = dd::two_prod(x, x);
  const double w = z.hi;
  double tail = erf_tail[8];
  for (int n = 7; n >= 0; --n) tail = erf_tail[n] + w * tail;
  double_double acc{tail, 0};
  for (int n = 11; n >= 0; --n) acc = dd::add(erf_head[n], dd::mul(z, acc));
  return dd::mul(dd::mul(two_over_sqrt_pi, acc), x);
}

// erfc(a) = v 2^k for 0.5 <= a < 28: e^(-a^2) (a^2 exact as a double-double) times erfcx(a)
// from the table (a - centre is exact: both lie in one binade and the centre has 6 bits).
struct scaled_value {
  double_double v;
  int k;
};
[[nodiscard]] constexpr scaled_value erfc_large(double a) noexcept {
  const int index = (biased_exponent(a) - 1022) * 16 + static_cast<int>((to_bits(a) >> 48) & 15);
  const erfcx_interval& in = erfcx_table[index];
  const double t = a - in.centre;
  double tail = in.tail[erfcx_terms - erfcx_dd_terms - 1];
  for (int n = erfcx_terms - erfcx_dd_terms - 2; n >= 0; --n) tail = in.tail[n] + t * tail;
  double_double acc{tail, 0};
  for (int n = erfcx_dd_terms - 1; n >= 0; --n) acc = dd::add(in.head[n], dd::mul(acc, t));
  const exp_parts e = exp_reduce(dd::neg(dd::two_prod(a, a)));
  return {dd::mul(dd::add(e.em, 1.0), acc), e.k};
}

}  // namespace detail

// Error function; odd, signed zeros kept, erf(+-inf) = +-1.
template <binary_float T>
[[nodiscard]] constexpr T erf(T x) noexcept {
  if (is_nan(x) || x == 0) return x;
  const double a = abs(static_cast<double>(x));
  if (a >= 6) return copysign(T{1}, x);  // erfc(6) < 2^-55
  double_double r{};
  if (a < 0x1p-500) {  // erf a = 2a/sqrt(pi) to 2^-1000; scaled so no product underflows
    r = dd::mul(detail::two_over_sqrt_pi, a * 0x1p600);
    return dd::nearest<T>(signbit(x) ? dd::neg(r) : r, -600);
  }
  if (a < 0.5) {
    r = detail::erf_small(a);
  } else {
    const detail::scaled_value c = detail::erfc_large(a);  // k >= -53, the scaling is exact
    r = dd::add(dd::neg(dd::scale(c.v, detail::pow2(c.k))), 1.0);
  }
  return dd::nearest<T>(signbit(x) ? dd::neg(r) : r);
}

// Complementary error function 1 - erf(x) without cancellation: erfc(-inf) = 2, erfc(+inf) = +0,
// gradual underflow up to x ~ 27.2.
template <binary_float T>
[[nodiscard]] constexpr T erfc(T x) noexcept {
  if (is_nan(x)) return x;
  if (x <= T{-6}) return T{2};  // 2 - erfc(6) rounds to 2
  if (x >= T{28}) return T{0};  // erfc(28) < 2^-1100
  const double xd = static_cast<double>(x);
  if (abs(xd) < 0.5) {
    if (abs(xd) < 0x1p-60) return T{1};  // 1 - 2x/sqrt(pi): within 2^-59 of 1
    return dd::nearest<T>(dd::add(dd::neg(detail::erf_small(xd)), 1.0));
  }
  const detail::scaled_value c = detail::erfc_large(abs(xd));
  if (xd > 0) return dd::nearest<T>(c.v, c.k);
  return dd::nearest<T>(dd::add(dd::neg(dd::scale(c.v, detail::pow2(c.k))), 2.0));
}

}  // namespace qfold::math
