// Compile-time proofs for issue 13's requantize flavours (static_assert only; g++ and clang++).
// Every expected value is derived by hand in the comment next to it, from the upstream code.
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/arith/cmsis_nn.hpp>
#include <qfold/arith/executorch.hpp>
#include <qfold/arith/flavours.hpp>
#include <qfold/arith/gemmlowp.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/arith/scale_derivation.hpp>
#include <qfold/arith/tflite.hpp>
#include <type_traits>

namespace {
constexpr std::int32_t one_30 = std::int32_t{1} << 30;
constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
constexpr auto i32max = std::numeric_limits<std::int32_t>::max();
namespace cn = qfold::cmsis_nn;
namespace tfl = qfold::tflite;
using cn::rounding;
using F = qfold::requantize_flavour;

// CMSIS-NN single rounding since ece5a38a: 1500000000 * 0.75 = 1125000000 exactly; before the
// fix the intermediate 1500000000 * 1610612736 >> 30 = 2.25e9 left int32.
static_assert(cn::requantize(1500000000, 1610612736, 0, rounding::single_round) == 1125000000);
static_assert(!cn::checked::requantize(1500000000, 1610612736, 0, rounding::single_round,
                                       cn::version::before_ece5a38a));
// (2^31 - 1) * 2^30 / 2^31 = 2^30 - 1/2 rounds up to 2^30; the old intermediate was INT32_MAX.
static_assert(cn::requantize(i32max, one_30, 0, rounding::single_round) == one_30);
static_assert(!cn::checked::requantize(i32max, one_30, 0, rounding::single_round,
                                       cn::version::before_ece5a38a));
// -0.5 rounds half up to 0 in both versions.
static_assert(cn::requantize(-2, one_30, -1, rounding::single_round,
                             cn::version::before_ece5a38a) == 0);
// 2^62 / 2^31 = 2^31 does not fit the returned int32.
static_assert(!cn::checked::requantize(i32min, i32min, 0, rounding::single_round));

// TFLite NEON 4Rows: x = -2 at scale 1/4 is -0.5: VRSHL rounds it up to 0, the scalar away to -1.
static_assert(tfl::multiply_by_quantized_multiplier_4rows(-2, one_30, -1) == 0);
static_assert(tfl::multiply_by_quantized_multiplier(-2, one_30, -1) == -1);
// -6/4 = -1.5: SRDHM(-6, 2^30) = -3 (exact), VRSHL(-3, -1) = floor(-2/2) = -1; scalar gives -2.
static_assert(tfl::multiply_by_quantized_multiplier_4rows(-6, one_30, -1) == -1);
static_assert(tfl::multiply_by_quantized_multiplier(-6, one_30, -1) == -2);
// Single rounding: 1500000000 << 1 wraps to -1294967296; * 0.75 = -971225472; / 2 half up
// = -485612736. With refuse the wrap is an error.
static_assert(tfl::multiply_by_quantized_multiplier_4rows(1500000000, 1610612736, 0,
                                                          tfl::rounding::single_round) ==
              -485612736);
static_assert(tfl::checked::multiply_by_quantized_multiplier_4rows(1500000000, 1610612736, 0,
                                                                   tfl::rounding::single_round,
                                                                   qfold::lane_overflow::refuse)
                  .error()
                  .code == qfold::errc::value_out_of_range);
static_assert(tfl::multiply_by_quantized_multiplier_4rows(7, one_30, -1,
                                                          tfl::rounding::single_round) == 2);

// Helium: arm_requantize_mve (single) 1/4 -> 0 (VQDMULH truncates 1 * 2^30 * 2 / 2^32 to 0);
// arm_requantize_mve_pred rounds 1/4 to 1/2 (VQRDMULH gives 1) and 1/2 up to 1.
static_assert(cn::requantize_mve(1, one_30, -1, rounding::single_round) == 0);
static_assert(cn::requantize_mve_32x4(1, one_30, -1, rounding::single_round) == 0);
static_assert(cn::requantize_mve_pred(1, one_30, -1, rounding::single_round) == 1);
// Default build: -0.5 away from zero via the -1 fixup: -1.
static_assert(cn::requantize_mve(-2, one_30, -1) == -1);
// INT32_MIN << 1 wraps to 0 in the single build: 0.
static_assert(cn::requantize_mve(i32min, i32min, 0, rounding::single_round) == 0);

// EMULATE_FLOAT QuantizeMultiplier: 0.5 + 2^-32 has mantissa * 2^31 = 2^30 + 1/2 exactly; ties
// go down (2^30), std::round goes up (2^30 + 1). 0.75 is exact: (3 * 2^29, 0).
static_assert(*tfl::quantize_multiplier(0.5 + 0x1p-32, tfl::rounding::double_round,
                                        tfl::float_impl::emulated) ==
              tfl::quantized_multiplier{one_30, 0});
static_assert(*tfl::quantize_multiplier(0.5 + 0x1p-32) == tfl::quantized_multiplier{one_30 + 1, 0});
static_assert(tfl::quantize_multiplier<tfl::rounding::double_round, tfl::float_impl::emulated>(
                  0.75) == tfl::quantized_multiplier{3 << 29, 0});

// ExecuTorch Cortex-M: ties to even (0.5 + 2^-32 -> 2^30; 0.5 + 3 * 2^-32 -> 2^30 + 2), shifts
// below -31 kept (2^-40 = 2^30 * 2^(-39 - 31)), which CMSIS-NN cannot take.
static_assert(qfold::executorch::cortex_m_quantize_multiplier(0.5 + 0x1p-32) ==
              tfl::quantized_multiplier{one_30, 0});
static_assert(qfold::executorch::cortex_m_quantize_multiplier(0.5 + 3 * 0x1p-32) ==
              tfl::quantized_multiplier{one_30 + 2, 0});
static_assert(qfold::executorch::cortex_m_quantize_multiplier(0x1p-40) ==
              tfl::quantized_multiplier{one_30, -39});
static_assert(!cn::accepts({one_30, -39}));
static_assert(cn::accepts({one_30, -31}, rounding::single_round));
static_assert(!cn::accepts({one_30, -31}));
// The Arm backend's pair for 0.5 + 3 * 2^-32: the same mantissa, TOSA shift 31 - 0.
static_assert(qfold::executorch::arm_multiplier_and_shift(0.5 + 3 * 0x1p-32) ==
              qfold::scale_factor{one_30 + 2, 31});

// gemmlowp int16: 0x4000 * 0x4000 = 2^28, / 2^15 = 2^13; -3 * 16384 / 32768 = -1.5 rounds up to
// -1; INT16_MIN^2 saturates. RDBPOT(-3, 1) = -1.5 away -> -2; exponent 20 gives the sign.
static_assert(qfold::gemmlowp::saturating_rounding_doubling_high_mul(std::int16_t{0x4000},
                                                                     std::int16_t{0x4000}) ==
              0x2000);
static_assert(qfold::gemmlowp::saturating_rounding_doubling_high_mul(std::int16_t{-3},
                                                                     std::int16_t{16384}) == -1);
static_assert(qfold::gemmlowp::saturating_rounding_doubling_high_mul(std::int16_t{-32768},
                                                                     std::int16_t{-32768}) ==
              32767);
static_assert(qfold::gemmlowp::rounding_divide_by_pot(std::int16_t{-3}, 1) == -2);
static_assert(qfold::gemmlowp::rounding_divide_by_pot(std::int16_t{5}, 20) == 1);
static_assert(qfold::gemmlowp::saturating_rounding_multiply_by_pot(std::int16_t{20000}, 1) ==
              32767);
static_assert(qfold::gemmlowp::saturating_rounding_multiply_by_pot(std::int32_t{3}, 4) == 48);
static_assert(qfold::gemmlowp::saturating_rounding_multiply_by_pot(std::int32_t{-5}, -1) == -3);
static_assert(!qfold::gemmlowp::checked::saturating_rounding_multiply_by_pot(std::int16_t{1}, 16));

// DownScaleInt32ToInt16Multiplier: (2^30 + 2^15) >> 16 = 2^14; the tie 2^15 rounds up to 1.
static_assert(tfl::downscale_int32_to_int16_multiplier(one_30) == 16384);
static_assert(tfl::downscale_int32_to_int16_multiplier(32768) == 1);
static_assert(tfl::downscale_int32_to_int16_multiplier(i32max) == 32767);
static_assert(!tfl::checked::downscale_int32_to_int16_multiplier(-1));

// RESCALE zero point: int48 4 * (2^31 - 1) at scale 1/4 is INT32_MAX; + 1 overflows. TOSA
// refuses, MLIR wraps to INT32_MIN and clamps to -128.
constexpr qfold::rescale_attributes i48{
    .input_type = qfold::int_type::i48, .scale32 = false, .output_zp = 1};
static_assert(!qfold::checked::rescale_value(i48, {1, 2}, 4 * std::int64_t{i32max}));
static_assert(qfold::rescale_value(i48, {1, 2}, 4 * std::int64_t{i32max},
                                   qfold::zero_point_add::wrapping) == -128);
static_assert(!qfold::same_function(i48, {1, 2}, qfold::zero_point_add::checked,
                                    qfold::zero_point_add::wrapping));
static_assert(qfold::same_function(qfold::rescale_attributes{.output_zp = 5}, {one_30, 31},
                                   qfold::zero_point_add::checked,
                                   qfold::zero_point_add::wrapping));

// Flavours: at scale 1/4 the scalar and NEON default builds first differ at x = -127 on int8:
// SRDHM gives -63.5 -> -63 for both, then RDBPOT -31.5 -> -32 but VRSHL -> -31 (x = -128 is the
// exact -32 for both); the single-rounding scalar and NEON kernels agree on every int8 input (no
// wrap there).
static_assert(qfold::first_disagreement(F::tflite_double_round, F::tflite_neon_double_round,
                                        {one_30, -1}, -128,
                                        127) == std::optional<std::int32_t>(-127));
static_assert(qfold::same_function(F::tflite_single_round, F::tflite_neon_single_round,
                                   {one_30, -1}, -128, 127));
static_assert(qfold::same_function(F::tflite_double_round, F::tosa_double_round, {one_30, -1}, -128,
                                   127));
static_assert(qfold::requantize(F::cmsis_nn_mve_pred_single_round, 1, {one_30, -1}) == 1);

// Contract twins of the multiplier derivations.
static_assert(
    qfold::compute_multiplier_and_shift<qfold::scale_width::bits32, qfold::tie_rule::half_to_even>(
        0.5 + 0x1p-32) == qfold::scale_factor{one_30, 31});
static_assert(*qfold::checked::compute_multiplier_and_shift(0.5 + 0x1p-32,
                                                            qfold::scale_width::bits32,
                                                            qfold::tie_rule::half_away_from_zero) ==
              qfold::scale_factor{one_30 + 1, 31});

// Broken contracts are no constant expressions (paired with legal controls above).
// True when F{}() is a constant expression (as in bad_input_static.cpp).
template <class F>
concept is_constant = requires {
  typename std::bool_constant<(F{}(), true)>;
};
constexpr auto bad_downscale = [] { return tfl::downscale_int32_to_int16_multiplier(-1); };
constexpr auto bad_mve = [] { return cn::requantize_mve(1, one_30, 31); };
constexpr auto bad_wrap = [] {
  return cn::requantize_mve(i32max, one_30, 0, rounding::single_round,
                            qfold::lane_overflow::refuse);
};
constexpr auto bad_scale = [] {
  return qfold::compute_multiplier_and_shift<qfold::scale_width::bits32,
                                             qfold::tie_rule::half_to_even>(-1.0);
};
constexpr auto bad_cortex = [] { return qfold::executorch::cortex_m_quantize_multiplier(-1.0); };
constexpr auto ok_mve = [] { return cn::requantize_mve(1, one_30, 30); };
constexpr auto ok_scale = [] {
  return qfold::compute_multiplier_and_shift<qfold::scale_width::bits16,
                                             qfold::tie_rule::half_to_even>(0.25);
};
constexpr auto bad_tflite = [] { return tfl::quantize_multiplier<>(-0.5); };
constexpr auto ok_tflite = [] { return tfl::quantize_multiplier<>(0.5); };
static_assert(!is_constant<decltype(bad_downscale)> && !is_constant<decltype(bad_mve)> &&
              !is_constant<decltype(bad_wrap)> && !is_constant<decltype(bad_scale)> &&
              !is_constant<decltype(bad_cortex)> && !is_constant<decltype(bad_tflite)>);
static_assert(is_constant<decltype(ok_mve)> && is_constant<decltype(ok_scale)> &&
              is_constant<decltype(ok_tflite)>);
// The run-time spelling from before the two forms still returns a result (the checked form).
static_assert(!qfold::compute_multiplier_and_shift(-1.0, qfold::scale_width::bits32,
                                                   qfold::tie_rule::half_to_even));
static_assert(!tfl::quantize_multiplier(-0.5));
}  // namespace
