// Each ecosystem's quantize / dequantize recipe as an explicit policy: arithmetic type, reciprocal
// multiply or divide, zero point before or after rounding, the rounding rule, input clamping.
// Tables built with a policy equal the ones that ecosystem emits (tests/golden/).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>

#include "qfold/arith/result.hpp"
#include "qfold/math/rounding.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

template <std::floating_point Real>
struct quant_convention {
  using real = Real;  // arithmetic type of dequantize, the function and quantize
  math::rounding_rule rounding = math::rounding_rule::half_to_even;
  bool zero_point_before_rounding = false;  // round(zp + y / s) instead of round(y / s) + zp
  bool multiply_by_reciprocal = true;       // y * (1 / s) instead of y / s
  bool reciprocal_in_double = false;        // 1 / s computed in double, then rounded to Real
  bool clamp_input_codes = false;           // input codes outside [qmin, qmax] take the edge code
  bool nan_to_zero = false;                 // a NaN result becomes code 0, else it is an error
};

namespace conventions {
// ExecuTorch Arm backend (insert_table_ops.py over torch quantized_decomposed ops): float32;
// quantize is clamp(torch.round(x * (1.0 / scale)) + zp) with the reciprocal taken in Python
// double; torch.round is half to even; domain codes clamped to [qmin, qmax]. NaN (log of a
// negative input) survives torch.clamp and .to(int8) makes it 0 on x86: code 0.
inline constexpr quant_convention<float> executorch{
    math::rounding_rule::half_to_even, false, true, true, true, true};
// TFLite LUTPopulate<int8/uint8>: float32, inverse_scale = 1.0f / scale, TfLiteRound (half away
// from zero), zero point added after rounding, every code of the type.
inline constexpr quant_convention<float> tflite{math::rounding_rule::half_away_from_zero, false,
                                                true, false, false};
// Vela convert_to_lut8 (tanh, sigmoid): double, y / scale, zero point added before rounding,
// round_away_zero = trunc(f + 0.5 * sign(f)) with its double-addition quirk.
inline constexpr quant_convention<double> vela{math::rounding_rule::vela_trunc_add_half, true,
                                               false, false, false};
// Vela create_lut_8bit_op (exp, log, ...): as convert_to_lut8 but the zero point after rounding.
inline constexpr quant_convention<double> vela_8bit_op{math::rounding_rule::vela_trunc_add_half,
                                                       false, false, false, false};
}  // namespace conventions

// real = (code - zp) * scale in the convention's type. code - zp is exact; so is its conversion
// for every 8- and 16-bit code. Contract: |code| <= 2^62 (codes are int32; no int64 overflow).
template <std::floating_point Real>
[[nodiscard]] constexpr Real dequantize(const quant_convention<Real>&, const qparams& q,
                                        std::int64_t code) noexcept {
  detail::expects(code >= -(std::int64_t{1} << 62) && code <= (std::int64_t{1} << 62),
                  "dequantize: |code| <= 2^62");
  return static_cast<Real>(code - q.zero_point) * static_cast<Real>(q.scale);
}

namespace detail {
// -1 below Real's normal range (0, subnormal), +1 above its finite range, 0 for a positive normal
// finite value: a scale that is fine as a double can be 0, subnormal or inf as a float. Compared
// in double, before any conversion (an overflowing one is no constant expression).
template <std::floating_point Real>
[[nodiscard]] constexpr int magnitude_class(double v) noexcept {
  if (!(v <= static_cast<double>(std::numeric_limits<Real>::max()))) return 1;
  return v >= static_cast<double>(std::numeric_limits<Real>::min()) ? 0 : -1;
}
}  // namespace detail

// validate(q), a known rounding rule, and a scale that the convention's arithmetic can use: the
// scale and the reciprocal it multiplies by are positive normal numbers of its type (else every
// quantize overflows to inf, and 0 * inf is NaN). Errors: those of validate(q),
// illegal_attributes (rounding rule), scale_subnormal (scale below Real's normal range, or
// 1 / scale above its finite range), scale_too_large (scale above Real's finite range, or
// 1 / scale below its normal range).
template <std::floating_point Real>
[[nodiscard]] constexpr result<void> validate(const quant_convention<Real>& c, const qparams& q) {
  if (auto ok = validate(q); !ok) return ok;
  if (c.rounding != math::rounding_rule::half_to_even &&
      c.rounding != math::rounding_rule::half_away_from_zero &&
      c.rounding != math::rounding_rule::half_up &&
      c.rounding != math::rounding_rule::vela_trunc_add_half)
    return fail(errc::illegal_attributes, "quant_convention: unknown rounding rule");
  if (const int k = detail::magnitude_class<Real>(q.scale); k != 0)
    return k < 0 ? fail(errc::scale_subnormal, "quant_convention: scale is subnormal in Real")
                 : fail(errc::scale_too_large, "quant_convention: scale overflows Real");
  if (!c.multiply_by_reciprocal) return {};
  // 1 / scale as the convention takes it: in double (finite: q.scale is normal), or in Real.
  const double reciprocal = c.reciprocal_in_double
                                ? 1.0 / q.scale
                                : static_cast<double>(Real{1} / static_cast<Real>(q.scale));
  if (const int k = detail::magnitude_class<Real>(reciprocal); k != 0)
    return k > 0 ? fail(errc::scale_subnormal, "quant_convention: 1 / scale overflows Real")
                 : fail(errc::scale_too_large, "quant_convention: 1 / scale is subnormal in Real");
  return {};
}

// The code for y, clamped to [qmin, qmax]; +-inf clamp to the ends. A NaN is code 0 under
// nan_to_zero (even when 0 is outside [qmin, qmax], as torch's .to(int8) gives) and otherwise an
// error (a framework's result is then undefined or platform bound).
// Errors: those of validate(c, q), and not_finite for a NaN y (unless nan_to_zero).
namespace detail {
// quantize once validate(c, q) has succeeded: loops over every code validate once, not per code.
template <std::floating_point Real>
[[nodiscard]] constexpr result<std::int64_t> quantize_validated(const quant_convention<Real>& c,
                                                                const qparams& q, Real y) {
  if (y != y) {
    if (c.nan_to_zero) return 0;
    return fail(errc::not_finite, "quantize: value is NaN");
  }
  const Real scaled = !c.multiply_by_reciprocal ? y / static_cast<Real>(q.scale)
                      : c.reciprocal_in_double  ? y * static_cast<Real>(1.0 / q.scale)
                                                : y * (Real{1} / static_cast<Real>(q.scale));
  const auto zp = static_cast<Real>(q.zero_point);
  const Real r = c.zero_point_before_rounding ? math::round(zp + scaled, c.rounding)
                                              : math::round(scaled, c.rounding) + zp;
  if (!(r > static_cast<Real>(q.qmin))) return q.qmin;
  if (!(r < static_cast<Real>(q.qmax))) return q.qmax;
  return static_cast<std::int64_t>(r);
}
}  // namespace detail

template <std::floating_point Real>
[[nodiscard]] constexpr result<std::int64_t> quantize(const quant_convention<Real>& c,
                                                      const qparams& q, Real y) {
  if (auto ok = validate(c, q); !ok) return ok.error();
  return detail::quantize_validated(c, q, y);
}

}  // namespace qfold
