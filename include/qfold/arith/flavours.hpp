// Every requantize flavour qfold models under one name, so that two of them can be compared:
// "does this multiplier/shift give the same codes on the scalar and the NEON kernel?"
#pragma once

#include <cstdint>
#include <optional>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/cmsis_nn.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/simd.hpp"
#include "qfold/arith/tflite.hpp"

namespace qfold {

// Each is one function of (x, multiplier, TFLite-style left shift); the TOSA ones use
// tflite::to_tosa (TOSA shift = 31 - shift). Vector lanes wrap (lane_overflow::wrap), as the
// instructions do. arm_requantize_mve_32x4 is the same lane function as arm_requantize_mve.
enum class requantize_flavour : std::uint8_t {
  tosa_single_round,                      // apply_scale_32, SINGLE_ROUND
  tosa_double_round,                      // apply_scale_32, DOUBLE_ROUND
  tflite_double_round,                    // MultiplyByQuantizedMultiplier, default build
  tflite_single_round,                    // ... TFLITE_SINGLE_ROUNDING
  tflite_neon_double_round,               // MultiplyByQuantizedMultiplier4Rows, default build
  tflite_neon_single_round,               // ... TFLITE_SINGLE_ROUNDING
  cmsis_nn_double_round,                  // arm_nn_requantize, default build
  cmsis_nn_single_round,                  // ... CMSIS_NN_USE_SINGLE_ROUNDING, current code
  cmsis_nn_single_round_before_ece5a38a,  // ... before the int64-intermediate fix
  cmsis_nn_mve_double_round,              // arm_requantize_mve(_32x4, _pred), default build
  cmsis_nn_mve_single_round,              // arm_requantize_mve(_32x4), single rounding
  cmsis_nn_mve_pred_single_round,         // arm_requantize_mve_pred, single rounding
};
inline constexpr int requantize_flavour_count = 12;

[[nodiscard]] constexpr bool is_valid(requantize_flavour f) noexcept {
  return static_cast<int>(f) < requantize_flavour_count;
}

namespace checked {
// x requantized by (m.multiplier, m.shift) as flavour f computes it, or that flavour's error.
[[nodiscard]] constexpr result<std::int32_t> requantize(requantize_flavour f, std::int32_t x,
                                                        tflite::quantized_multiplier m) {
  using F = requantize_flavour;
  using tr = tflite::rounding;
  using cr = cmsis_nn::rounding;
  switch (f) {
    case F::tosa_single_round:
    case F::tosa_double_round: {
      const result<scale_factor> t = tflite::to_tosa(m);
      if (!t) return t.error();
      return checked::apply_scale_32(x, t->multiplier, t->shift, f == F::tosa_double_round);
    }
    case F::tflite_double_round:
      return tflite::checked::multiply_by_quantized_multiplier(x, m.multiplier, m.shift,
                                                               tr::double_round);
    case F::tflite_single_round:
      return tflite::checked::multiply_by_quantized_multiplier(x, m.multiplier, m.shift,
                                                               tr::single_round);
    case F::tflite_neon_double_round:
      return tflite::checked::multiply_by_quantized_multiplier_4rows(x, m.multiplier, m.shift,
                                                                     tr::double_round);
    case F::tflite_neon_single_round:
      return tflite::checked::multiply_by_quantized_multiplier_4rows(x, m.multiplier, m.shift,
                                                                     tr::single_round);
    case F::cmsis_nn_double_round:
      return cmsis_nn::checked::requantize(x, m.multiplier, m.shift, cr::double_round);
    case F::cmsis_nn_single_round:
      return cmsis_nn::checked::requantize(x, m.multiplier, m.shift, cr::single_round);
    case F::cmsis_nn_single_round_before_ece5a38a:
      return cmsis_nn::checked::requantize(x, m.multiplier, m.shift, cr::single_round,
                                           cmsis_nn::version::before_ece5a38a);
    case F::cmsis_nn_mve_double_round:
      return cmsis_nn::checked::requantize_mve(x, m.multiplier, m.shift, cr::double_round);
    case F::cmsis_nn_mve_single_round:
      return cmsis_nn::checked::requantize_mve(x, m.multiplier, m.shift, cr::single_round);
    case F::cmsis_nn_mve_pred_single_round:
      return cmsis_nn::checked::requantize_mve_pred(x, m.multiplier, m.shift, cr::single_round);
  }
  return fail(errc::illegal_attributes, "requantize: unknown requantize_flavour");
}
}  // namespace checked

[[nodiscard]] constexpr std::int32_t requantize(requantize_flavour f, std::int32_t x,
                                                tflite::quantized_multiplier m) {
  const result<std::int32_t> r = checked::requantize(f, x, m);
  detail::expects(r.has_value(), "requantize: a flavour and arguments it defines");
  return *r;
}

// The first x in [lo, hi] where flavours a and b differ: two values, or a value against an error
// (one kernel defines the input and the other does not); nullopt when they agree on all of it,
// by evaluation of every input (use the int8 or int16 range for an exhaustive answer there).
[[nodiscard]] constexpr std::optional<std::int32_t> first_disagreement(
    requantize_flavour a, requantize_flavour b, tflite::quantized_multiplier m, std::int32_t lo,
    std::int32_t hi) {
  for (std::int64_t x = lo; x <= hi; ++x) {
    const auto xi = static_cast<std::int32_t>(x);
    const result<std::int32_t> p = checked::requantize(a, xi, m);
    const result<std::int32_t> q = checked::requantize(b, xi, m);
    if (p.has_value() != q.has_value() || (p && *p != *q)) return xi;
  }
  return std::nullopt;
}

// Whether a and b give the same code (or both refuse) for every x in [lo, hi].
[[nodiscard]] constexpr bool same_function(requantize_flavour a, requantize_flavour b,
                                           tflite::quantized_multiplier m, std::int32_t lo,
                                           std::int32_t hi) {
  return !first_disagreement(a, b, m, lo, hi).has_value();
}

}  // namespace qfold
