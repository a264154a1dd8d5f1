// gemmlowp fixed-point rounding primitives (fixedpoint/fixedpoint.h), the building blocks of
// TFLite's and CMSIS-NN's double-rounding requantize.
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

namespace gemmlowp {
// SaturatingRoundingDoublingHighMul: the only overflow, INT32_MIN * INT32_MIN, saturates.
[[nodiscard]] constexpr std::int32_t saturating_rounding_doubling_high_mul(
    std::int32_t a, std::int32_t b) noexcept {
  const std::int64_t r = detail::doubling_high_mul(a, b);
  return r > int32_max ? static_cast<std::int32_t>(int32_max) : static_cast<std::int32_t>(r);
}

// RoundingDivideByPOT: x / 2^exponent, ties away from zero. exponent in 0..31 is the contract.
[[nodiscard]] constexpr std::int32_t rounding_divide_by_pot(std::int32_t x, int exponent) {
  detail::expects(exponent >= 0 && exponent <= 31, "rounding_divide_by_pot: 0 <= exponent <= 31");
  return static_cast<std::int32_t>(shift_right_round_half_away(x, exponent));
}
}  // namespace gemmlowp
}  // namespace qfold
