// CMSIS-NN requantization (Include/arm_nnsupportfunctions.h): arm_nn_requantize in the default
// (double rounding) and CMSIS_NN_USE_SINGLE_ROUNDING builds, and arm_nn_requantize_s64.
#pragma once

#include <cstdint>
#include <limits>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/arith/tflite.hpp"

namespace qfold::cmsis_nn {

enum class rounding : std::uint8_t { double_round, single_round };

// arm_nn_doubling_high_mult_no_sat: like gemmlowp's but INT32_MIN * INT32_MIN wraps to INT32_MIN.
[[nodiscard]] constexpr std::int32_t doubling_high_mult_no_sat(std::int32_t a,
                                                               std::int32_t b) noexcept {
  return wrap_int32(qfold::detail::doubling_high_mul(a, b));
}

namespace detail {
// Exactly whether v * m fits int64 (the bounds are the truncated quotients, which round toward
// the allowed side for either sign; m == -1 is the one divisor whose quotient INT64_MIN / m
// overflows).
[[nodiscard]] constexpr bool product_fits_int64(std::int64_t v, std::int32_t m) noexcept {
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  if (m == 0) return true;
  if (m == -1) return v != lo;
  if (m > 0) return v >= lo / m && v <= hi / m;
  return v >= hi / m && v <= lo / m;
}

// Single rounding: (int32)(v >> (total - 1)), then (r + 1) >> 1. Equal to one half-up rounding
// by `total` whenever the intermediate fits int32 and is not INT32_MAX (else C truncation or
// signed overflow in CMSIS-NN: an error here).
[[nodiscard]] constexpr result<std::int32_t> single_round(std::int64_t v, int total) {
  const std::int64_t half = v >> (total - 1);
  if (!fits_int32(half) || half == int32_max)
    return fail(errc::result_out_of_range, "cmsis_nn: intermediate outside int32");
  return static_cast<std::int32_t>((half + 1) >> 1);
}
}  // namespace detail

namespace checked {
// arm_nn_requantize(val, multiplier, shift), shift a left exponent as in TFLite. Errors: shift
// outside -31..30, and in the double-rounding build also shift -31 (arm_nn_divide_by_power_of_two
// forms (1 << 31) - 1 in int: undefined in C, so no value can be promised), val * 2^shift
// overflowing int32 and the high multiply of INT32_MIN by INT32_MIN (double rounding),
// intermediate overflow (single rounding), an unknown build.
[[nodiscard]] constexpr result<std::int32_t> requantize(std::int32_t val, std::int32_t multiplier,
                                                        std::int32_t shift,
                                                        rounding build = rounding::double_round) {
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "cmsis_nn: unknown rounding build");
  if (shift < -31 || shift > 30)
    return fail(errc::shift_out_of_range, "cmsis_nn: shift outside -31..30");
  if (build == rounding::double_round) {
    if (shift == -31)
      return fail(errc::shift_out_of_range,
                  "cmsis_nn: shift -31 divides by 2^31, undefined in the double-rounding C code");
    // INT32_MIN * INT32_MIN / 2^31 = 2^31 does not fit the int32 that the C code narrows it to
    // (implementation-defined): no value is promised, as in the single-rounding build.
    const std::int64_t scaled = std::int64_t{val} * (std::int64_t{1} << (shift > 0 ? shift : 0));
    if (scaled == int32_min && multiplier == int32_min)
      return fail(errc::result_out_of_range,
                  "cmsis_nn: doubling high multiply of INT32_MIN by INT32_MIN leaves int32");
    return tflite::detail::double_rounding_requantize(val, multiplier, shift, false);
  }
  return detail::single_round(std::int64_t{val} * multiplier, 31 - shift);
}

// arm_nn_requantize_s64(val, reduced_multiplier, shift): CMSIS-NN documents val as an int48, a
// 16-bit reduced multiplier (see tflite's int64 overload) and shift -31..7; like the code, qfold
// accepts whatever the code defines: val * reduced_multiplier within int64, a shift count
// 14 - shift in 0..63, and an intermediate that fits int32 and is not INT32_MAX.
[[nodiscard]] constexpr result<std::int32_t> requantize_s64(std::int64_t val,
                                                            std::int32_t reduced_multiplier,
                                                            std::int32_t shift) {
  if (shift < -49 || shift > 14)
    return fail(errc::shift_out_of_range, "cmsis_nn: shift outside -49..14");
  if (!detail::product_fits_int64(val, reduced_multiplier))
    return fail(errc::value_out_of_range, "cmsis_nn: val * reduced_multiplier overflows int64");
  return detail::single_round(val * reduced_multiplier, 15 - shift);
}
}  // namespace checked

[[nodiscard]] constexpr std::int32_t requantize(std::int32_t val, std::int32_t multiplier,
                                                std::int32_t shift,
                                                rounding build = rounding::double_round) {
  const result<std::int32_t> r = checked::requantize(val, multiplier, shift, build);
  qfold::detail::expects(r.has_value(), "cmsis_nn::requantize: arguments in range");
  return *r;
}
[[nodiscard]] constexpr std::int32_t requantize_s64(std::int64_t val,
                                                    std::int32_t reduced_multiplier,
                                                    std::int32_t shift) {
  const result<std::int32_t> r = checked::requantize_s64(val, reduced_multiplier, shift);
  qfold::detail::expects(r.has_value(), "cmsis_nn::requantize_s64: arguments in range");
  return *r;
}

}  // namespace qfold::cmsis_nn
