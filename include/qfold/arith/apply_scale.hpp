// TOSA apply_scale_32 / apply_scale_16 (spec pseudocode scale_helpers.tosac), the integer core
// of RESCALE: value * multiplier / 2^shift, rounded half up, optionally double rounded.
#pragma once

#include <cstdint>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"

namespace qfold {

// A multiplier/shift pair meaning multiplier * 2^-shift (TOSA convention: shift is a right shift).
struct scale_factor {
  std::int32_t multiplier = 0;
  int shift = 0;

  friend constexpr bool operator==(const scale_factor&, const scale_factor&) = default;
};

namespace detail {
inline constexpr std::int64_t double_round_nudge = std::int64_t{1} << 30;

[[nodiscard]] constexpr bool apply_scale_32_value_ok(std::int64_t value, int shift) noexcept {
  const std::int64_t half = std::int64_t{1} << (shift - 1);
  return value >= -half && value < half;
}

// The formula alone, for arguments already known to satisfy the requirements.
[[nodiscard]] constexpr std::int64_t apply_scale_32_raw(std::int64_t value, std::int64_t multiplier,
                                                        int shift, bool double_round) noexcept {
  const std::int64_t product = value * multiplier;
  if (double_round && shift > 31) {
    // The +-2^30 nudge of the spec, then round half up; never overflows as |product| < 2^62.
    const std::int64_t nudged = product + (value >= 0 ? double_round_nudge : -double_round_nudge);
    return shift_right_round_half_up(nudged, shift);
  }
  return shift_right_round_half_up(product, shift);
}
}  // namespace detail

namespace checked {
// One error per violated REQUIRE of the spec, checked in the spec's order.
[[nodiscard]] constexpr result<std::int32_t> apply_scale_32(std::int32_t value,
                                                            std::int32_t multiplier, int shift,
                                                            bool double_round = false) {
  if (multiplier < 0) return fail(errc::negative_multiplier, "apply_scale_32: multiplier < 0");
  if (shift < 2 || shift > 62)
    return fail(errc::shift_out_of_range, "apply_scale_32: shift outside 2..62");
  if (!detail::apply_scale_32_value_ok(value, shift))
    return fail(errc::value_out_of_range,
                "apply_scale_32: value outside [-2^(shift-1), 2^(shift-1))");
  // With |value| <= 2^(shift-1) and multiplier < 2^31 the result magnitude is below 2^30 + 1, so
  // the spec's int32 REQUIRE on the result cannot fail here (tests check it against a reference).
  return static_cast<std::int32_t>(
      detail::apply_scale_32_raw(value, multiplier, shift, double_round));
}

[[nodiscard]] constexpr result<std::int32_t> apply_scale_16(std::int64_t value,
                                                            std::int16_t multiplier, int shift) {
  if (!fits_int48(value))
    return fail(errc::value_out_of_range, "apply_scale_16: value is not an int48");
  if (multiplier < 0) return fail(errc::negative_multiplier, "apply_scale_16: multiplier < 0");
  if (shift < 2 || shift > 62)
    return fail(errc::shift_out_of_range, "apply_scale_16: shift outside 2..62");
  const std::int64_t r = shift_right_round_half_up(value * multiplier, shift);
  if (!fits_int32(r))
    return fail(errc::result_out_of_range, "apply_scale_16: result outside int32");
  return static_cast<std::int32_t>(r);
}
}  // namespace checked

// Unchecked forms: the spec's preconditions are the caller's contract. A violation is a compile
// error in constant evaluation and stops the program at run time (never undefined behaviour).
[[nodiscard]] constexpr std::int32_t apply_scale_32(std::int32_t value, std::int32_t multiplier,
                                                    int shift, bool double_round = false) {
  detail::expects(multiplier >= 0, "apply_scale_32: multiplier >= 0");
  detail::expects(shift >= 2 && shift <= 62, "apply_scale_32: 2 <= shift <= 62");
  detail::expects(detail::apply_scale_32_value_ok(value, shift),
                  "apply_scale_32: -2^(shift-1) <= value < 2^(shift-1)");
  return static_cast<std::int32_t>(
      detail::apply_scale_32_raw(value, multiplier, shift, double_round));
}

[[nodiscard]] constexpr std::int32_t apply_scale_16(std::int64_t value, std::int16_t multiplier,
                                                    int shift) {
  const result<std::int32_t> r = checked::apply_scale_16(value, multiplier, shift);
  detail::expects(r.has_value(),
                  "apply_scale_16: multiplier >= 0, 2 <= shift <= 62, int48 value, int32 result");
  return *r;
}

}  // namespace qfold
