// ExecuTorch's two multiplier derivations side by side: the Arm (TOSA) backend's
// _compute_multiplier_and_shift and the Cortex-M backend's quantize_multiplier_aot, with the
// check of whether CMSIS-NN can take the Cortex-M pair.
#pragma once

#include <cstdint>

#include "qfold/arith/cmsis_nn.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/scale_derivation.hpp"
#include "qfold/arith/tflite.hpp"

namespace qfold::executorch {

namespace checked {
// backends/arm: round(mantissa * 2^31) half to even (Python round), TOSA right shift 2..62
// (smaller scales floor-shift the multiplier). The same function as
// qfold::compute_multiplier_and_shift(scale, width, tie_rule::half_to_even).
[[nodiscard]] constexpr result<scale_factor> arm_multiplier_and_shift(
    double scale, scale_width width = scale_width::bits32) {
  return qfold::compute_multiplier_and_shift(scale, width, tie_rule::half_to_even);
}

// backends/cortex_m quantize_multiplier_aot: math.frexp, round(mantissa * 2^31) half to even,
// renormalise 2^31, and return (multiplier, frexp exponent) as a TFLite-style left shift
// (real = multiplier * 2^(shift - 31)). Unlike TFLite's QuantizeMultiplier, shifts below -31 are
// not flushed to (0, 0) and large shifts are not saturated: the pair may be out of CMSIS-NN's
// range (see cmsis_nn::checked::accepts). Scale 0 gives (0, 0). Errors: NaN (Python round raises
// ValueError), infinities (OverflowError), negative scales (Python returns a negative multiplier,
// which no requantize kernel of this backend is meant for), where upstream raises or has no use.
[[nodiscard]] constexpr result<tflite::quantized_multiplier> cortex_m_quantize_multiplier(
    double scale) {
  const qfold::detail::decomposed d = qfold::detail::decompose(scale);
  if (d.nan) return fail(errc::scale_nan, "executorch::cortex_m_quantize_multiplier: scale is NaN");
  if (d.infinite)
    return fail(errc::scale_infinite,
                "executorch::cortex_m_quantize_multiplier: scale is infinite");
  if (d.zero) return tflite::quantized_multiplier{0, 0};
  if (d.negative)
    return fail(errc::scale_negative, "executorch::cortex_m_quantize_multiplier: scale < 0");
  const auto [m, e] = qfold::detail::round_mantissa(d, 31, tie_rule::half_to_even);
  return tflite::quantized_multiplier{static_cast<std::int32_t>(m), e};
}

// The Cortex-M pair for `scale`, refused unless arm_nn_requantize in `build` can take it.
[[nodiscard]] constexpr result<tflite::quantized_multiplier>
cortex_m_quantize_multiplier_for_cmsis_nn(
    double scale, cmsis_nn::rounding build = cmsis_nn::rounding::double_round) {
  const result<tflite::quantized_multiplier> m = cortex_m_quantize_multiplier(scale);
  if (!m) return m;
  if (const result<void> ok = cmsis_nn::checked::accepts(*m, build); !ok) return ok.error();
  return m;
}
}  // namespace checked

[[nodiscard]] constexpr scale_factor arm_multiplier_and_shift(
    double scale, scale_width width = scale_width::bits32) {
  const result<scale_factor> r = checked::arm_multiplier_and_shift(scale, width);
  qfold::detail::expects(r.has_value(), "executorch::arm_multiplier_and_shift: scale in range");
  return *r;
}
[[nodiscard]] constexpr tflite::quantized_multiplier cortex_m_quantize_multiplier(double scale) {
  const result<tflite::quantized_multiplier> r = checked::cortex_m_quantize_multiplier(scale);
  qfold::detail::expects(r.has_value(),
                         "executorch::cortex_m_quantize_multiplier: finite scale >= 0");
  return *r;
}
[[nodiscard]] constexpr tflite::quantized_multiplier cortex_m_quantize_multiplier_for_cmsis_nn(
    double scale, cmsis_nn::rounding build = cmsis_nn::rounding::double_round) {
  const result<tflite::quantized_multiplier> r =
      checked::cortex_m_quantize_multiplier_for_cmsis_nn(scale, build);
  qfold::detail::expects(r.has_value(),
                         "executorch::cortex_m_quantize_multiplier_for_cmsis_nn: CMSIS-NN range");
  return *r;
}

}  // namespace qfold::executorch
