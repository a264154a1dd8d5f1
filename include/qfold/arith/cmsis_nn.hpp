// CMSIS-NN requantization (Include/arm_nnsupportfunctions.h): arm_nn_requantize in the default
// (double rounding) and CMSIS_NN_USE_SINGLE_ROUNDING builds, current and before the fix of
// 2026-05-27, arm_nn_requantize_s64, and the Helium (MVE) lanes arm_requantize_mve(_32x4, _pred).
#pragma once

#include <cstdint>
#include <limits>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/arith/simd.hpp"
#include "qfold/arith/tflite.hpp"

namespace qfold::cmsis_nn {

enum class rounding : std::uint8_t { double_round, single_round };

// Which CMSIS-NN code. `current`: since commit ece5a38a (PR #220, 2026-05-27, V.22.9.1) the
// single-rounding arm_nn_requantize keeps its intermediate in int64 and narrows only the final
// result. `before_ece5a38a`: the older code narrowed the intermediate `new_val >> (total - 1)`
// to int32, which overflows for results near the int32 ends. The double-rounding build and
// arm_nn_requantize_s64 (which still narrows its intermediate) are the same in both.
enum class version : std::uint8_t { current, before_ece5a38a };

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

// Single rounding before ece5a38a (and arm_nn_requantize_s64 today): (int32)(v >> (total - 1)),
// then (r + 1) >> 1. Equal to one half-up rounding by `total` whenever the intermediate fits
// int32 and is not INT32_MAX (else C truncation or signed overflow in CMSIS-NN: an error here).
[[nodiscard]] constexpr result<std::int32_t> single_round(std::int64_t v, int total) {
  const std::int64_t half = v >> (total - 1);
  if (!fits_int32(half) || half == int32_max)
    return fail(errc::result_out_of_range, "cmsis_nn: intermediate outside int32");
  return static_cast<std::int32_t>((half + 1) >> 1);
}

// Single rounding since ece5a38a: ((v >> (total - 1)) + 1) >> 1 in int64, which is
// floor((v + 2^(total-1)) / 2^total) exactly; only the returned value narrows to int32.
[[nodiscard]] constexpr result<std::int32_t> single_round_int64(std::int64_t v, int total) {
  const std::int64_t r = shift_right_round_half_up(v, total);
  if (!fits_int32(r))
    return fail(errc::result_out_of_range, "cmsis_nn: single-rounding result outside int32");
  return static_cast<std::int32_t>(r);
}

// arm_divide_by_power_of_two_mve: a fixup of -1 for negative dividends (when exponent > 0),
// added with saturation (VQADD), then VRSHL's half-up rounding: ties away from zero.
[[nodiscard]] constexpr std::int32_t divide_by_power_of_two_mve(std::int32_t x,
                                                                int exponent) noexcept {
  const std::int64_t fixup = exponent > 0 && x < 0 ? -1 : 0;
  const auto fixed =
      static_cast<std::int32_t>(clamp(std::int64_t{x} + fixup, int32_min, int32_max));
  return qfold::detail::lane::rshr(fixed, exponent);
}

// One lane of arm_requantize_mve / _32x4 (pred = false) or arm_requantize_mve_pred (pred = true).
[[nodiscard]] constexpr result<std::int32_t> requantize_mve(std::int32_t val,
                                                            std::int32_t multiplier,
                                                            std::int32_t shift, rounding build,
                                                            lane_overflow overflow, bool pred) {
  namespace lane = qfold::detail::lane;
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "cmsis_nn (mve): unknown rounding build");
  if (overflow != lane_overflow::wrap && overflow != lane_overflow::refuse)
    return fail(errc::illegal_attributes, "cmsis_nn (mve): unknown lane_overflow");
  if (shift < -31 || shift > 30)
    return fail(errc::shift_out_of_range, "cmsis_nn (mve): shift outside -31..30");
  if (build == rounding::single_round) {
    // right_shift = MIN(-1, shift), left_shift = shift - right_shift: a left shift by shift + 1.
    const int right = shift < -1 ? -shift : 1;
    const int left = shift - (-right);
    if (overflow == lane_overflow::refuse && !lane::shl_fits(val, left))
      return fail(errc::value_out_of_range,
                  "cmsis_nn (mve): val << (shift + 1) wraps; the scalar kernel differs");
    const std::int32_t a = lane::shl(val, left);
    // arm_requantize_mve(_32x4) use VQDMULH (truncating), so VRSHL's rounding is the only one;
    // arm_requantize_mve_pred uses VQRDMULH, which rounds once more.
    const std::int32_t h = pred ? lane::qrdmulh(a, multiplier) : lane::qdmulh(a, multiplier);
    return lane::rshr(h, right);
  }
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  if (overflow == lane_overflow::refuse && !lane::shl_fits(val, left))
    return fail(errc::value_out_of_range,
                "cmsis_nn (mve): val << shift wraps; the scalar kernel is undefined there");
  return divide_by_power_of_two_mve(lane::qrdmulh(lane::shl(val, left), multiplier), right);
}
}  // namespace detail

namespace checked {
// arm_nn_requantize(val, multiplier, shift), shift a left exponent as in TFLite. Errors: shift
// outside -31..30, and in the double-rounding build also shift -31 (arm_nn_divide_by_power_of_two
// forms (1 << 31) - 1 in int: undefined in C, so no value can be promised), val * 2^shift
// overflowing int32 and the high multiply of INT32_MIN by INT32_MIN (double rounding),
// intermediate overflow (single rounding), an unknown build.
// The single-rounding build: since ece5a38a (version::current) only a result outside int32 is an
// error; before it (version::before_ece5a38a) also an intermediate val * multiplier /
// 2^(30 - shift) outside int32 or equal to INT32_MAX.
[[nodiscard]] constexpr result<std::int32_t> requantize(std::int32_t val, std::int32_t multiplier,
                                                        std::int32_t shift,
                                                        rounding build = rounding::double_round,
                                                        version code = version::current) {
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "cmsis_nn: unknown rounding build");
  if (code != version::current && code != version::before_ece5a38a)
    return fail(errc::illegal_attributes, "cmsis_nn: unknown version");
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
  if (code == version::current)
    return detail::single_round_int64(std::int64_t{val} * multiplier, 31 - shift);
  return detail::single_round(std::int64_t{val} * multiplier, 31 - shift);
}

// arm_nn_requantize_s64(val, reduced_multiplier, shift): unlike arm_nn_requantize it still
// narrows its intermediate to int32 in the current code (ece5a38a did not touch it), so it is
// refused wherever that overflows. CMSIS-NN documents val as an int48, a
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

// One lane of the Helium kernels arm_requantize_mve(val, multiplier, shift) and
// arm_requantize_mve_32x4 (the same arithmetic with per-lane multiplier and shift). Default
// build: VSHL by max(shift, 0), VQRDMULH, arm_divide_by_power_of_two_mve: the scalar double
// rounding, except that the left shift wraps and INT32_MIN^2 saturates. Single-rounding build:
// VSHL by shift + 1 (for shift >= -1), VQDMULH, VRSHL by max(1, -shift): one half-up rounding,
// equal to the scalar arm_nn_requantize wherever val << (shift + 1) fits int32 (that is one bit
// fewer inputs than the scalar takes). With lane_overflow::refuse a wrapping left shift is
// errc::value_out_of_range: in the single-rounding build exactly the inputs where the lane
// departs from the scalar kernel, in the default build those where the scalar is undefined.
// Errors otherwise: shift outside -31..30, unknown options.
[[nodiscard]] constexpr result<std::int32_t> requantize_mve(
    std::int32_t val, std::int32_t multiplier, std::int32_t shift,
    rounding build = rounding::double_round, lane_overflow overflow = lane_overflow::wrap) {
  return detail::requantize_mve(val, multiplier, shift, build, overflow, false);
}
[[nodiscard]] constexpr result<std::int32_t> requantize_mve_32x4(
    std::int32_t val, std::int32_t multiplier, std::int32_t shift,
    rounding build = rounding::double_round, lane_overflow overflow = lane_overflow::wrap) {
  return detail::requantize_mve(val, multiplier, shift, build, overflow, false);
}
// One active lane of arm_requantize_mve_pred. Its single-rounding build uses VQRDMULH (rounding)
// where arm_requantize_mve uses VQDMULH, so it rounds twice: floor((a*m + 2^30) / 2^31), then
// VRSHL by max(1, -shift), both half up. Inactive lanes are zero and not modelled.
[[nodiscard]] constexpr result<std::int32_t> requantize_mve_pred(
    std::int32_t val, std::int32_t multiplier, std::int32_t shift,
    rounding build = rounding::double_round, lane_overflow overflow = lane_overflow::wrap) {
  return detail::requantize_mve(val, multiplier, shift, build, overflow, true);
}

// Whether arm_nn_requantize in `build` can take a (multiplier, shift) pair, e.g. one made by
// ExecuTorch's Cortex-M quantize_multiplier_aot (which does not flush shifts below -31): the
// documented multiplier range {INT32_MIN + 1 .. INT32_MAX} and shift -31..30, and in the
// double-rounding build shift -31 is refused as in requantize (UB in the C code).
[[nodiscard]] constexpr result<void> accepts(tflite::quantized_multiplier m,
                                             rounding build = rounding::double_round) {
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "cmsis_nn::accepts: unknown rounding build");
  if (m.multiplier == int32_min)
    return fail(errc::multiplier_out_of_range,
                "cmsis_nn: multiplier INT32_MIN is outside the range");
  if (m.shift < -31 || m.shift > 30)
    return fail(errc::shift_out_of_range, "cmsis_nn: shift outside -31..30");
  if (build == rounding::double_round && m.shift == -31)
    return fail(errc::shift_out_of_range,
                "cmsis_nn: shift -31 is undefined in the double-rounding C code");
  return {};
}
}  // namespace checked

[[nodiscard]] constexpr std::int32_t requantize(std::int32_t val, std::int32_t multiplier,
                                                std::int32_t shift,
                                                rounding build = rounding::double_round,
                                                version code = version::current) {
  const result<std::int32_t> r = checked::requantize(val, multiplier, shift, build, code);
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
[[nodiscard]] constexpr std::int32_t requantize_mve(std::int32_t val, std::int32_t multiplier,
                                                    std::int32_t shift,
                                                    rounding build = rounding::double_round,
                                                    lane_overflow overflow = lane_overflow::wrap) {
  const result<std::int32_t> r = checked::requantize_mve(val, multiplier, shift, build, overflow);
  qfold::detail::expects(r.has_value(), "cmsis_nn::requantize_mve: arguments in range");
  return *r;
}
[[nodiscard]] constexpr std::int32_t requantize_mve_32x4(
    std::int32_t val, std::int32_t multiplier, std::int32_t shift,
    rounding build = rounding::double_round, lane_overflow overflow = lane_overflow::wrap) {
  const result<std::int32_t> r =
      checked::requantize_mve_32x4(val, multiplier, shift, build, overflow);
  qfold::detail::expects(r.has_value(), "cmsis_nn::requantize_mve_32x4: arguments in range");
  return *r;
}
[[nodiscard]] constexpr std::int32_t requantize_mve_pred(
    std::int32_t val, std::int32_t multiplier, std::int32_t shift,
    rounding build = rounding::double_round, lane_overflow overflow = lane_overflow::wrap) {
  const result<std::int32_t> r =
      checked::requantize_mve_pred(val, multiplier, shift, build, overflow);
  qfold::detail::expects(r.has_value(), "cmsis_nn::requantize_mve_pred: arguments in range");
  return *r;
}
// The predicate form of checked::accepts (no precondition: an unknown build is not accepted).
[[nodiscard]] constexpr bool accepts(tflite::quantized_multiplier m,
                                     rounding build = rounding::double_round) {
  return checked::accepts(m, build).has_value();
}

}  // namespace qfold::cmsis_nn
