// TFLite / TFLite Micro requantization (quantization_util.cc QuantizeMultiplier, common.cc
// MultiplyByQuantizedMultiplier): the default double-rounding build, the TFLITE_SINGLE_ROUNDING
// build, the int64-input (16x8) variant, and conversion to and from TOSA multiplier/shift.
#pragma once

#include <cstdint>
#include <optional>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/gemmlowp.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/arith/scale_derivation.hpp"

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

// QuantizeMultiplier: frexp, std::round (half away from zero), renormalise 2^31, flush shifts
// below -31 to (0, 0); the single-rounding build saturates shift > 30 to (2^31 - 1, 30).
// Errors (where TFLite has undefined or meaningless results): negative, NaN, infinite scales.
[[nodiscard]] constexpr result<quantized_multiplier> quantize_multiplier(
    double scale, rounding build = rounding::double_round) {
  if (build != rounding::double_round && build != rounding::single_round)
    return fail(errc::illegal_attributes, "tflite::quantize_multiplier: unknown rounding build");
  const detail::decomposed d = detail::decompose(scale);
  if (d.nan) return fail(errc::scale_nan, "tflite::quantize_multiplier: scale is NaN");
  if (d.infinite)
    return fail(errc::scale_infinite, "tflite::quantize_multiplier: scale is infinite");
  if (d.zero) return quantized_multiplier{0, 0};
  if (d.negative) return fail(errc::scale_negative, "tflite::quantize_multiplier: scale < 0");
  const auto [m, e] = detail::round_mantissa(d, 31, tie_rule::half_away_from_zero);
  if (e < -31) return quantized_multiplier{0, 0};
  if (build == rounding::single_round && e > 30)
    return quantized_multiplier{static_cast<std::int32_t>(int32_max), 30};
  return quantized_multiplier{static_cast<std::int32_t>(m), e};
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
