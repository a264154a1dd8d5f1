// TFLite / TFLite Micro requantization (quantization_util.cc QuantizeMultiplier, common.cc
// MultiplyByQuantizedMultiplier): the default double-rounding build, the TFLITE_SINGLE_ROUNDING
// build, the int64-input (16x8) variant, the NEON MultiplyByQuantizedMultiplier4Rows lanes,
// DownScaleInt32ToInt16Multiplier, and conversion to and from TOSA multiplier/shift.
#pragma once

#include <cstdint>
#include <optional>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/gemmlowp.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/arith/scale_derivation.hpp"
#include "qfold/arith/simd.hpp"

namespace qfold::tflite {

// TFLite convention: real = multiplier * 2^(shift - 31); shift is a LEFT shift exponent.
struct quantized_multiplier {
  std::int32_t multiplier = 0;
  int shift = 0;
  friend constexpr bool operator==(const quantized_multiplier&,
                                   const quantized_multiplier&) = default;
};

// Which TFLite build: the default (gemmlowp double rounding) or -DTFLITE_SINGLE_ROUNDING.
enum class rounding : std::uint8_t { double_round, single_round };

// How QuantizeMultiplier takes the double apart: std::frexp and std::round (`native`), or, under
// -DTFLITE_EMULATE_FLOAT, IntegerFrExp, which keeps the top 30 fraction bits and adds one only
// when the 22 dropped bits exceed half: mantissa ties round toward zero instead of away.
enum class float_impl : std::uint8_t { native, emulated };

namespace detail {
// IntegerFrExp's rounding of the 53-bit mantissa to 31 bits: up only above the half.
[[nodiscard]] constexpr qfold::detail::rounded_mantissa round_mantissa_ties_down(
    const qfold::detail::decomposed& d) noexcept {
  auto m = static_cast<std::int64_t>(d.mantissa >> 22);
  if ((d.mantissa & ((std::uint64_t{1} << 22) - 1)) > (std::uint64_t{1} << 21)) ++m;
  int e = d.exponent;
  if (m == (std::int64_t{1} << 31)) {
    m /= 2;
    ++e;
  }
  return {m, e};
}
}  // namespace detail

// QuantizeMultiplier: frexp, std::round (half away from zero), renormalise 2^31, flush shifts
// below -31 to (0, 0); the single-rounding build saturates shift > 30 to (2^31 - 1, 30). With
// float_impl::emulated (TFLITE_EMULATE_FLOAT) mantissa ties round toward zero: 0.5 + 2^-32
// gives 2^30, not 2^30 + 1. Subnormal scales flush to (0, 0) either way.
// Errors (where TFLite has undefined or meaningless results): negative, NaN, infinite scales
// (TFLITE_CHECK fails for infinities; NaN gives shift INT_MAX), unknown options.
[[nodiscard]] constexpr result<quantized_multiplier> quantize_multiplier(
    double scale, rounding build = rounding::double_round, float_impl impl = float_impl::native) {
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "tflite::quantize_multiplier: unknown rounding build");
  if (impl != float_impl::native && impl != float_impl::emulated)
    return fail(errc::illegal_attributes, "tflite::quantize_multiplier: unknown float_impl");
  const qfold::detail::decomposed d = qfold::detail::decompose(scale);
  if (d.nan) return fail(errc::scale_nan, "tflite::quantize_multiplier: scale is NaN");
  if (d.infinite)
    return fail(errc::scale_infinite, "tflite::quantize_multiplier: scale is infinite");
  if (d.zero) return quantized_multiplier{0, 0};
  if (d.negative) return fail(errc::scale_negative, "tflite::quantize_multiplier: scale < 0");
  const auto [m, e] = impl == float_impl::native
                          ? qfold::detail::round_mantissa(d, 31, tie_rule::half_away_from_zero)
                          : detail::round_mantissa_ties_down(d);
  if (e < -31) return quantized_multiplier{0, 0};
  if (build == rounding::single_round && e > 30)
    return quantized_multiplier{static_cast<std::int32_t>(int32_max), 30};
  return quantized_multiplier{static_cast<std::int32_t>(m), e};
}

namespace checked {
// The two forms: checked::quantize_multiplier returns a result, quantize_multiplier<build,
// impl>(scale) the pair itself (options as template arguments); the run-time spelling above is
// the one from before the two forms, kept unchanged: it is the checked form.
[[nodiscard]] constexpr result<quantized_multiplier> quantize_multiplier(
    double scale, rounding build = rounding::double_round, float_impl impl = float_impl::native) {
  return tflite::quantize_multiplier(scale, build, impl);
}
template <rounding build = rounding::double_round, float_impl impl = float_impl::native>
[[nodiscard]] constexpr result<quantized_multiplier> quantize_multiplier(double scale) {
  return tflite::quantize_multiplier(scale, build, impl);
}
}  // namespace checked
// Contract form of QuantizeMultiplier: a finite scale >= 0 and known options.
template <rounding build = rounding::double_round, float_impl impl = float_impl::native>
[[nodiscard]] constexpr quantized_multiplier quantize_multiplier(double scale) {
  const result<quantized_multiplier> r = quantize_multiplier(scale, build, impl);
  qfold::detail::expects(r.has_value(), "tflite::quantize_multiplier: finite scale >= 0");
  return *r;
}

namespace detail {
// The double-rounding requantize shared by TFLite and CMSIS-NN; they differ only in whether the
// doubling high multiply saturates (TFLite) or wraps (CMSIS-NN) at INT32_MIN * INT32_MIN.
[[nodiscard]] constexpr result<std::int32_t> double_rounding_requantize(std::int32_t x,
                                                                        std::int32_t q, int shift,
                                                                        bool saturate) {
  if (shift < -31 || shift > 30)
    return fail(errc::shift_out_of_range, "requantize: shift outside -31..30");
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const std::int64_t shifted = std::int64_t{x} << left;
  if (!fits_int32(shifted))
    return fail(errc::value_out_of_range, "requantize: x * 2^shift overflows int32");
  const auto v = static_cast<std::int32_t>(shifted);
  const std::int32_t h = saturate ? gemmlowp::saturating_rounding_doubling_high_mul(v, q)
                                  : wrap_int32(qfold::detail::doubling_high_mul(v, q));
  return static_cast<std::int32_t>(shift_right_round_half_away(h, right));
}
}  // namespace detail

namespace checked {
// MultiplyByQuantizedMultiplier(int32 x, q, shift). Errors: shift outside -31..30; double
// rounding: x * 2^shift overflowing int32 (undefined in TFLite); single rounding: q < 0 or a
// result outside int32 (TFLite DCHECKs).
[[nodiscard]] constexpr result<std::int32_t> multiply_by_quantized_multiplier(
    std::int32_t x, std::int32_t q, int shift, rounding build = rounding::double_round) {
  if (build == rounding::double_round) return detail::double_rounding_requantize(x, q, shift, true);
  if (build != rounding::single_round)
    return fail(errc::illegal_attributes, "tflite: unknown rounding build");
  if (q < 0) return fail(errc::negative_multiplier, "tflite: multiplier < 0");
  if (shift < -31 || shift > 30)
    return fail(errc::shift_out_of_range, "tflite: shift outside -31..30");
  const std::int64_t r = shift_right_round_half_up(std::int64_t{x} * q, 31 - shift);
  if (!fits_int32(r)) return fail(errc::result_out_of_range, "tflite: result outside int32");
  return static_cast<std::int32_t>(r);
}

// The int64-input overload (16x8 kernels): the multiplier is first rounded to 16 bits
// (q < 0x7FFF0000 ? (q + 2^15) >> 16 : 0x7FFF), then one half-up rounding by 15 - shift.
// Errors: q < 0, shift outside -31..7, x not an int48, result outside int32 (TFLite DCHECKs).
[[nodiscard]] constexpr result<std::int32_t> multiply_by_quantized_multiplier(std::int64_t x,
                                                                              std::int32_t q,
                                                                              int shift) {
  if (q < 0) return fail(errc::negative_multiplier, "tflite (int64): multiplier < 0");
  if (shift < -31 || shift > 7)
    return fail(errc::shift_out_of_range, "tflite (int64): shift outside -31..7");
  if (!fits_int48(x)) return fail(errc::value_out_of_range, "tflite (int64): x is not an int48");
  const std::int64_t reduced = q < 0x7FFF0000 ? (std::int64_t{q} + (1 << 15)) >> 16 : 0x7FFF;
  const std::int64_t r = shift_right_round_half_up(x * reduced, 15 - shift);
  if (!fits_int32(r))
    return fail(errc::result_out_of_range, "tflite (int64): result outside int32");
  return static_cast<std::int32_t>(r);
}
}  // namespace checked

[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier(
    std::int32_t x, std::int32_t q, int shift, rounding build = rounding::double_round) {
  const result<std::int32_t> r = checked::multiply_by_quantized_multiplier(x, q, shift, build);
  qfold::detail::expects(r.has_value(),
                         "tflite::multiply_by_quantized_multiplier: arguments in range");
  return *r;
}
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier(std::int64_t x,
                                                                      std::int32_t q, int shift) {
  const result<std::int32_t> r = checked::multiply_by_quantized_multiplier(x, q, shift);
  qfold::detail::expects(r.has_value(),
                         "tflite::multiply_by_quantized_multiplier(int64): arguments in range");
  return *r;
}

namespace checked {
// One lane of the NEON MultiplyByQuantizedMultiplier4Rows (kernels/internal/common.h, USE_NEON;
// the older neon_tensor_utils.cc copy rounds its last step away from zero instead). Default build:
// VSHL by max(shift, 0), VQRDMULH, VRSHL by min(shift, 0): the same first step as the scalar code,
// but the final rounding shift is half up where RoundingDivideByPOT is half away from zero (x = -2,
// q = 2^30, shift -1: -0.5 gives 0, the scalar -1). Single- rounding build: VSHL by shift + 1 (for
// shift >= -1), VQDMULH, VRSHL by max(1, -shift), which is the scalar single rounding wherever x <<
// (shift + 1) fits int32. The left shift wraps for large x; with lane_overflow::refuse that is
// errc::value_out_of_range (where the lane departs from the scalar kernel). Errors: shift outside
// -31..30, q < 0 in the single-rounding build (DCHECK), unknown options.
[[nodiscard]] constexpr result<std::int32_t> multiply_by_quantized_multiplier_4rows(
    std::int32_t x, std::int32_t q, int shift, rounding build = rounding::double_round,
    lane_overflow overflow = lane_overflow::wrap) {
  namespace lane = qfold::detail::lane;
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "tflite (4rows): unknown rounding build");
  if (overflow != lane_overflow::wrap && overflow != lane_overflow::refuse)
    return fail(errc::illegal_attributes, "tflite (4rows): unknown lane_overflow");
  if (shift < -31 || shift > 30)
    return fail(errc::shift_out_of_range, "tflite (4rows): shift outside -31..30");
  if (build == rounding::single_round) {
    if (q < 0) return fail(errc::negative_multiplier, "tflite (4rows): multiplier < 0");
    const int right = shift < -1 ? -shift : 1;  // right_shift = min(-1, shift)
    const int left = shift + right;             // left_shift = shift - right_shift
    if (overflow == lane_overflow::refuse && !lane::shl_fits(x, left))
      return fail(errc::value_out_of_range,
                  "tflite (4rows): x << (shift + 1) wraps; the scalar kernel differs");
    return lane::rshr(lane::qdmulh(lane::shl(x, left), q), right);
  }
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  if (overflow == lane_overflow::refuse && !lane::shl_fits(x, left))
    return fail(errc::value_out_of_range,
                "tflite (4rows): x << shift wraps; the scalar kernel is undefined there");
  return lane::rshr(lane::qrdmulh(lane::shl(x, left), q), right);
}

// DownScaleInt32ToInt16Multiplier: (q + 2^15) >> 16, and 0x7FFF from INT32_MAX - 2^15 up (where
// the sum would overflow). Error: q < 0 (DCHECK).
[[nodiscard]] constexpr result<std::int16_t> downscale_int32_to_int16_multiplier(std::int32_t q) {
  if (q < 0) return fail(errc::negative_multiplier, "tflite::downscale: multiplier < 0");
  if (q >= int32_max - (1 << 15)) return std::int16_t{0x7FFF};
  return static_cast<std::int16_t>((q + (1 << 15)) >> 16);
}
}  // namespace checked

[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_4rows(
    std::int32_t x, std::int32_t q, int shift, rounding build = rounding::double_round,
    lane_overflow overflow = lane_overflow::wrap) {
  const result<std::int32_t> r =
      checked::multiply_by_quantized_multiplier_4rows(x, q, shift, build, overflow);
  qfold::detail::expects(r.has_value(),
                         "tflite::multiply_by_quantized_multiplier_4rows: arguments in range");
  return *r;
}
[[nodiscard]] constexpr std::int16_t downscale_int32_to_int16_multiplier(std::int32_t q) {
  const result<std::int16_t> r = checked::downscale_int32_to_int16_multiplier(q);
  qfold::detail::expects(r.has_value(), "tflite::downscale_int32_to_int16_multiplier: q >= 0");
  return *r;
}

// TFLite left-shift exponent <-> TOSA right shift: tosa.shift = 31 - tflite.shift. TOSA needs
// shift 2..62 and multiplier >= 0, so TFLite shifts 30 and below -31 have no TOSA equivalent.
// The shifts are range-checked before 31 - shift is formed (INT_MIN would overflow it).
[[nodiscard]] constexpr result<scale_factor> to_tosa(quantized_multiplier m) {
  if (m.multiplier < 0) return fail(errc::negative_multiplier, "tflite::to_tosa: multiplier < 0");
  if (m.shift < -31 || m.shift > 29)
    return fail(errc::shift_out_of_range, "tflite::to_tosa: TOSA shift outside 2..62");
  return scale_factor{m.multiplier, 31 - m.shift};
}
[[nodiscard]] constexpr result<quantized_multiplier> from_tosa(scale_factor s) {
  if (s.multiplier < 0) return fail(errc::negative_multiplier, "tflite::from_tosa: multiplier < 0");
  if (s.shift < 1 || s.shift > 62)
    return fail(errc::shift_out_of_range, "tflite::from_tosa: TFLite shift outside -31..30");
  return quantized_multiplier{s.multiplier, 31 - s.shift};
}

// Whether TFLite's MultiplyByQuantizedMultiplier in `build` and TOSA apply_scale_32 with the
// converted shift compute the same function on every input both define. The default (double
// rounding) build is TOSA DOUBLE_ROUND and the single-rounding build is TOSA SINGLE_ROUND; for
// shift >= 0 (TOSA shift <= 31, where DOUBLE_ROUND is inert) all four coincide. The algebra is in
// docs/conventions.md; tests check it against an independent reference. TOSA defines fewer
// inputs: its value requirement is one bit tighter than TFLite's x * 2^shift overflow limit.
[[nodiscard]] constexpr bool same_function(rounding build, bool tosa_double_round,
                                           int tflite_shift) noexcept {
  return tflite_shift >= 0 || (build == rounding::double_round) == tosa_double_round;
}

// The first x in [lo, hi] where the two differ, or where one side defines a result and the
// other does not; nullopt when they agree on the whole range (by exhaustive evaluation).
[[nodiscard]] constexpr std::optional<std::int32_t> first_disagreement(quantized_multiplier m,
                                                                       rounding build,
                                                                       bool tosa_double_round,
                                                                       std::int32_t lo,
                                                                       std::int32_t hi) {
  const result<scale_factor> t = to_tosa(m);
  for (std::int64_t x = lo; x <= hi; ++x) {
    const auto xi = static_cast<std::int32_t>(x);
    const auto a = checked::multiply_by_quantized_multiplier(xi, m.multiplier, m.shift, build);
    const auto b =
        t ? qfold::checked::apply_scale_32(xi, t->multiplier, t->shift, tosa_double_round)
          : result<std::int32_t>(t.error());
    if (a.has_value() != b.has_value() || (a && *a != *b)) return xi;
  }
  return std::nullopt;
}

}  // namespace qfold::tflite
