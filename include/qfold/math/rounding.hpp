// Exact rounding of a float or double to an integral value of the same type (trunc, floor, ceil
// and the tie rules that quantizers use), constexpr on the bits; NaN and inf pass through.
#pragma once

#include <cstdint>

#include "qfold/arith/result.hpp"
#include "qfold/math/float_bits.hpp"

namespace qfold::math {

// The tie rules of real quantizers (docs/conventions.md).
enum class rounding_rule : std::uint8_t {
  half_to_even,         // torch.round, Python round, numpy.rint, C rint/nearbyint
  half_away_from_zero,  // C/C++ round, TfLiteRound
  half_up,              // floor(x + 1/2), computed exactly: ties toward +inf
  vela_trunc_add_half,  // Vela round_away_zero: trunc(x + (x < 0 ? -0.5 : 0.5)) in T arithmetic
};

namespace detail {
// Every float/double with |x| >= 2^(precision-1) is already an integer (and so are inf, NaN).
template <binary_float T>
[[nodiscard]] constexpr bool already_integral(T x) noexcept {
  return biased_exponent(x) >= float_traits<T>::bias + float_traits<T>::precision - 1;
}
// Parity of an integral t with |t| < 2^(precision-1).
template <binary_float T>
[[nodiscard]] constexpr bool is_odd_integral(T t) noexcept {
  return (static_cast<std::int64_t>(t) & 1) != 0;
}
}  // namespace detail

// Toward zero; keeps the sign of zero (trunc(-0.5) == -0).
template <binary_float T>
[[nodiscard]] constexpr T trunc(T x) noexcept {
  if (detail::already_integral(x)) return x;
  const int unbiased = detail::biased_exponent(x) - detail::float_traits<T>::bias;
  if (unbiased < 0) return copysign(T{0}, x);
  // Clear the fraction bits below 2^0; 0 <= unbiased < precision - 1.
  const auto fraction = detail::fraction_mask<T> >> unbiased;
  return detail::from_bits<T>(detail::to_bits(x) & ~fraction);
}

template <binary_float T>
[[nodiscard]] constexpr T floor(T x) noexcept {
  const T t = trunc(x);
  return x < t ? t - 1 : t;  // t - 1 is exact: |t| < 2^(precision-1)
}

template <binary_float T>
[[nodiscard]] constexpr T ceil(T x) noexcept {
  const T t = trunc(x);
  return x > t ? t + 1 : t;  // ceil(-0.5) == -0 as in C: t keeps the sign
}

// Nearest integer, ties to even (torch.round, rint). Zero results keep the sign of x.
template <binary_float T>
[[nodiscard]] constexpr T round_half_to_even(T x) noexcept {
  if (detail::already_integral(x)) return x;
  const T t = trunc(x);
  const T d = abs(x - t);  // exact: x and t share the binade or t == 0
  if (d > T{0.5} || (d == T{0.5} && detail::is_odd_integral(t))) return x < 0 ? t - 1 : t + 1;
  return t;
}

// Nearest integer, ties away from zero (C round, TfLiteRound). Zero results keep the sign of x.
template <binary_float T>
[[nodiscard]] constexpr T round_half_away_from_zero(T x) noexcept {
  if (detail::already_integral(x)) return x;
  const T t = trunc(x);
  if (abs(x - t) >= T{0.5}) return x < 0 ? t - 1 : t + 1;
  return t;
}

// floor(x + 1/2) with the sum taken exactly: ties toward +inf (TOSA/gemmlowp style). The naive
// floating sum is wrong for 0.5 - ulp and for odd integers near 2^(precision-1). An integral x
// (including -0) is returned unchanged; other inputs that round to zero give +0.
template <binary_float T>
[[nodiscard]] constexpr T round_half_up(T x) noexcept {
  if (detail::already_integral(x)) return x;
  const T f = floor(x);
  if (f == x) return x;
  return x - f >= T{0.5} ? f + 1 : f + T{0};  // f + 0 turns a -0 floor into +0
}

// Vela's round_away_zero, quirks included: x + (x < 0 ? -0.5 : 0.5) is rounded to T before the
// truncation, so 0.49999999999999994 (double) gives 1, odd integers at and above
// 2^(precision-1) move to the even neighbour, and -0 gives +0.
template <binary_float T>
[[nodiscard]] constexpr T vela_round(T x) noexcept {
  if (!is_finite(x)) return x;
  return trunc(x + (x < 0 ? T{-0.5} : T{0.5}));
}

// Contract: rule is one of the four (a value cast from outside the enum is a compile error in
// constant evaluation and stops the program at run time, instead of returning x unrounded).
template <binary_float T>
[[nodiscard]] constexpr T round(T x, rounding_rule rule) noexcept {
  switch (rule) {
    case rounding_rule::half_to_even:
      return round_half_to_even(x);
    case rounding_rule::half_away_from_zero:
      return round_half_away_from_zero(x);
    case rounding_rule::half_up:
      return round_half_up(x);
    case rounding_rule::vela_trunc_add_half:
      return vela_round(x);
  }
  qfold::detail::expects(false, "math::round: unknown rounding_rule");
  return x;
}

}  // namespace qfold::math
