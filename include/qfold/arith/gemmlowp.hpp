// gemmlowp fixed-point rounding primitives (fixedpoint/fixedpoint.h), the building blocks of
// TFLite's and CMSIS-NN's double-rounding requantize: int32 and int16 SRDHM, RoundingDivideByPOT
// and SaturatingRoundingMultiplyByPOT (a run-time exponent in place of the template argument).
#pragma once

#include <cstdint>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"

namespace qfold {
namespace detail {
// round(a * b / 2^31) with ties toward +inf, unsaturated (int64). gemmlowp writes it as
// (ab + nudge) / 2^31 with nudge 2^30 or 1 - 2^30 and a truncating division; CMSIS-NN as
// (ab + 2^30) >> 31. Both are floor((ab + 2^30) / 2^31): for ab = -k < 0,
// -trunc((k - 1 + 2^30) / 2^31) == floor((2^30 - k) / 2^31).
[[nodiscard]] constexpr std::int64_t doubling_high_mul(std::int32_t a, std::int32_t b) noexcept {
  return shift_right_round_half_up(std::int64_t{a} * std::int64_t{b}, 31);
}
}  // namespace detail

namespace detail {
// gemmlowp's int16 SaturatingRoundingDoublingHighMul without the saturation:
// (ab + nudge) / 2^15 truncating, nudge 2^14 or 1 - 2^14, which is floor((ab + 2^14) / 2^15)
// (the int32 argument above, one size down).
[[nodiscard]] constexpr std::int32_t doubling_high_mul16(std::int16_t a, std::int16_t b) noexcept {
  return static_cast<std::int32_t>(shift_right_round_half_up(std::int32_t{a} * b, 15));
}
// RoundingDivideByPOT<int16_t> as written: mask = (1ll << e) - 1 converted to int16 (so for
// e >= 16 the mask is -1 and the result is +1 for x >= 0, -1 for x < 0: gemmlowp asserts only
// e <= 31), threshold = (mask >> 1) + (x < 0), all narrowed to int16 as its Add does.
[[nodiscard]] constexpr std::int16_t rounding_divide_by_pot16(std::int16_t x, int e) noexcept {
  const auto narrow = [](std::int64_t v) {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(static_cast<std::uint64_t>(v)));
  };
  const std::int16_t mask = narrow((std::int64_t{1} << e) - 1);
  const std::int16_t remainder = narrow(x & mask);
  const std::int16_t threshold = narrow((mask >> 1) + (x < 0 ? 1 : 0));
  return narrow((x >> e) + (remainder > threshold ? 1 : 0));
}
template <class T>
[[nodiscard]] constexpr T saturating_multiply_by_pot(T x, int exponent) noexcept {
  constexpr std::int64_t lo = -(std::int64_t{1} << (8 * sizeof(T) - 1)), hi = -lo - 1;
  return static_cast<T>(clamp(std::int64_t{x} * (std::int64_t{1} << exponent), lo, hi));
}
}  // namespace detail

namespace gemmlowp {
// SaturatingRoundingDoublingHighMul: the only overflow, INT32_MIN * INT32_MIN, saturates.
[[nodiscard]] constexpr std::int32_t saturating_rounding_doubling_high_mul(
    std::int32_t a, std::int32_t b) noexcept {
  const std::int64_t r = detail::doubling_high_mul(a, b);
  return r > int32_max ? static_cast<std::int32_t>(int32_max) : static_cast<std::int32_t>(r);
}
// The int16 specialisation: round(a * b / 2^15) half up; INT16_MIN * INT16_MIN saturates.
[[nodiscard]] constexpr std::int16_t saturating_rounding_doubling_high_mul(
    std::int16_t a, std::int16_t b) noexcept {
  const std::int32_t r = detail::doubling_high_mul16(a, b);
  return r > 32767 ? std::int16_t{32767} : static_cast<std::int16_t>(r);
}

namespace checked {
// RoundingDivideByPOT: x / 2^exponent, ties away from zero. Error: exponent outside 0..31 (the
// asserts). For int16, exponents 16..31 are accepted as gemmlowp is: the int16 mask is then -1
// and the result is 1 for x >= 0 and -1 for x < 0 (see detail::rounding_divide_by_pot16).
[[nodiscard]] constexpr result<std::int32_t> rounding_divide_by_pot(std::int32_t x, int exponent) {
  if (exponent < 0 || exponent > 31)
    return fail(errc::shift_out_of_range,
                "gemmlowp::rounding_divide_by_pot: exponent outside 0..31");
  return static_cast<std::int32_t>(shift_right_round_half_away(x, exponent));
}
[[nodiscard]] constexpr result<std::int16_t> rounding_divide_by_pot(std::int16_t x, int exponent) {
  if (exponent < 0 || exponent > 31)
    return fail(errc::shift_out_of_range,
                "gemmlowp::rounding_divide_by_pot: exponent outside 0..31");
  return detail::rounding_divide_by_pot16(x, exponent);
}
// SaturatingRoundingMultiplyByPOT<exponent>(x): exponent > 0 saturates x * 2^exponent to the
// type, exponent < 0 is RoundingDivideByPOT(x, -exponent). Error: exponent outside
// -31..(bits - 1) (beyond that gemmlowp's threshold 1 << (bits - 1 - exponent) is undefined).
[[nodiscard]] constexpr result<std::int32_t> saturating_rounding_multiply_by_pot(std::int32_t x,
                                                                                 int exponent) {
  if (exponent < -31 || exponent > 31)
    return fail(errc::shift_out_of_range,
                "gemmlowp::saturating_rounding_multiply_by_pot: exponent outside -31..31");
  if (exponent < 0) return rounding_divide_by_pot(x, -exponent);
  return detail::saturating_multiply_by_pot(x, exponent);
}
[[nodiscard]] constexpr result<std::int16_t> saturating_rounding_multiply_by_pot(std::int16_t x,
                                                                                 int exponent) {
  if (exponent < -31 || exponent > 15)
    return fail(errc::shift_out_of_range,
                "gemmlowp::saturating_rounding_multiply_by_pot: exponent outside -31..15 (int16)");
  if (exponent < 0) return rounding_divide_by_pot(x, -exponent);
  return detail::saturating_multiply_by_pot(x, exponent);
}
}  // namespace checked

// RoundingDivideByPOT: x / 2^exponent, ties away from zero. exponent in 0..31 is the contract.
[[nodiscard]] constexpr std::int32_t rounding_divide_by_pot(std::int32_t x, int exponent) {
  detail::expects(exponent >= 0 && exponent <= 31, "rounding_divide_by_pot: 0 <= exponent <= 31");
  return static_cast<std::int32_t>(shift_right_round_half_away(x, exponent));
}
[[nodiscard]] constexpr std::int16_t rounding_divide_by_pot(std::int16_t x, int exponent) {
  detail::expects(exponent >= 0 && exponent <= 31, "rounding_divide_by_pot: 0 <= exponent <= 31");
  return detail::rounding_divide_by_pot16(x, exponent);
}
[[nodiscard]] constexpr std::int32_t saturating_rounding_multiply_by_pot(std::int32_t x,
                                                                         int exponent) {
  const result<std::int32_t> r = checked::saturating_rounding_multiply_by_pot(x, exponent);
  detail::expects(r.has_value(), "saturating_rounding_multiply_by_pot: -31 <= exponent <= 31");
  return *r;
}
[[nodiscard]] constexpr std::int16_t saturating_rounding_multiply_by_pot(std::int16_t x,
                                                                         int exponent) {
  const result<std::int16_t> r = checked::saturating_rounding_multiply_by_pot(x, exponent);
  detail::expects(r.has_value(), "saturating_rounding_multiply_by_pot: -31 <= exponent <= 15");
  return *r;
}
}  // namespace gemmlowp
}  // namespace qfold
