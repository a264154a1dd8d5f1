// Compile-time proofs for hostile input in the arith, quant, table and math layers (issue 11):
// a broken contract is no constant expression (each `rejects` is paired with an `accepts` of
// the nearest legal call, so the detector is shown to work), and the checked forms name the
// error during constant evaluation too. static_assert only: compiling is passing.
#include <array>
#include <cstdint>
#include <limits>
#include <qfold/qfold.hpp>
#include <type_traits>

namespace {
// True when F{}() is a constant expression: a contract violation reaches the non-constexpr
// detail::precondition_failed, so the requirement fails instead of compiling to a value.
template <class F>
concept accepts = requires {
  typename std::bool_constant<(F{}(), true)>;
};
template <class F>
concept rejects = !accepts<F>;

using qfold::errc;
using qfold::int_type;
constexpr std::int32_t i32min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();

// apply_scale_32: multiplier < 0, shift 63, value outside [-2^(shift-1), 2^(shift-1)).
constexpr auto as32_ok = [] { return qfold::apply_scale_32(1, 1 << 30, 31); };
constexpr auto as32_negative = [] { return qfold::apply_scale_32(1, -1, 31); };
constexpr auto as32_shift63 = [] { return qfold::apply_scale_32(1, 1 << 30, 63); };
constexpr auto as32_value = [] { return qfold::apply_scale_32(i32min, 1 << 30, 31); };
static_assert(accepts<decltype(as32_ok)>);
static_assert(rejects<decltype(as32_negative)> && rejects<decltype(as32_shift63)> &&
              rejects<decltype(as32_value)>);

// apply_scale_16 outside int48; MUL i8 with a shift; the one undefined i32 MUL; divisor 0.
constexpr auto as16_ok = [] { return qfold::apply_scale_16(qfold::int48_max, 1, 17); };
constexpr auto as16_int48 = [] { return qfold::apply_scale_16(qfold::int48_max + 1, 1, 17); };
constexpr auto mul_ok = [] { return qfold::mul<std::int32_t>(i32min, i32min, 62); };
constexpr auto mul_i8_shift = [] { return qfold::mul<std::int8_t>(1, 1, 1); };
constexpr auto mul_overflow = [] { return qfold::mul<std::int32_t>(i32min, i32min, 63); };
constexpr auto recip_zero = [] { return qfold::reciprocal_scale(0); };
constexpr auto recip_one = [] { return qfold::reciprocal_scale(1); };
static_assert(accepts<decltype(as16_ok)> && accepts<decltype(mul_ok)> &&
              accepts<decltype(recip_one)>);
static_assert(rejects<decltype(as16_int48)> && rejects<decltype(mul_i8_shift)> &&
              rejects<decltype(mul_overflow)> && rejects<decltype(recip_zero)>);

// RESCALE with an out-of-enum type: the reported bug (range_of shifting by 64 or -1).
constexpr auto rescale_ok = [] { return qfold::rescale_value({}, {1 << 30, 30}, 5); };
constexpr auto rescale_type64 = [] {
  return qfold::rescale_value({.output_type = static_cast<int_type>(64)}, {1 << 30, 30}, 5);
};
constexpr auto range_type0 = [] { return qfold::range_of(static_cast<int_type>(0), false).lo; };
constexpr auto dtype_range9 = [] { return qfold::range_of(static_cast<qfold::dtype>(9)).lo; };
static_assert(accepts<decltype(rescale_ok)>);
static_assert(rejects<decltype(rescale_type64)> && rejects<decltype(range_type0)> &&
              rejects<decltype(dtype_range9)>);

// The rounding helpers' shift counts, requantize shifts outside their documented ranges.
constexpr auto half_up_1 = [] { return qfold::shift_right_round_half_up(5, 1); };
constexpr auto half_up_0 = [] { return qfold::shift_right_round_half_up(5, 0); };
constexpr auto half_up_64 = [] { return qfold::shift_right_round_half_up(5, 64); };
constexpr auto half_away_63 = [] { return qfold::shift_right_round_half_away(5, 63); };
constexpr auto pot_32 = [] { return qfold::gemmlowp::rounding_divide_by_pot(5, 32); };
constexpr auto tflite_31 = [] { return qfold::tflite::multiply_by_quantized_multiplier(1, 1, 31); };
constexpr auto cmsis_m31 = [] { return qfold::cmsis_nn::requantize(5, 1 << 30, -31); };
constexpr auto cmsis_m30 = [] { return qfold::cmsis_nn::requantize(5, 1 << 30, -30); };
static_assert(accepts<decltype(half_up_1)> && accepts<decltype(cmsis_m30)>);
static_assert(rejects<decltype(half_up_0)> && rejects<decltype(half_up_64)> &&
              rejects<decltype(half_away_63)> && rejects<decltype(pot_32)> &&
              rejects<decltype(tflite_31)> && rejects<decltype(cmsis_m31)>);

// math::round with a rule outside the enum; dequantize of a code whose difference overflows.
constexpr auto round_ok = [] {
  return qfold::math::round(2.5, qfold::math::rounding_rule::half_up);
};
constexpr auto round_rule7 = [] {
  return qfold::math::round(2.5, static_cast<qfold::math::rounding_rule>(7));
};
constexpr auto dequantize_min = [] {
  return qfold::dequantize(qfold::conventions::vela, qfold::qparams{.zero_point = 1}, i64min);
};
static_assert(accepts<decltype(round_ok)>);
static_assert(rejects<decltype(round_rule7)> && rejects<decltype(dequantize_min)>);

// An int16 TABLE lookup over a slope outside int16 (the contract form).
constexpr qfold::int16_table jump = [] {
  qfold::int16_table t;
  t.values[1] = 32767;
  t.values[2] = -32768;
  return t;
}();
constexpr auto lookup_ok = [] { return qfold::tosa_lookup(jump, -32768); };
constexpr auto lookup_bad = [] { return qfold::tosa_lookup(jump, -32768 + 128 + 1); };
static_assert(accepts<decltype(lookup_ok)> && rejects<decltype(lookup_bad)>);

// The checked forms give the named error at compile time.
static_assert(qfold::validate(qfold::rescale_attributes{.input_type = static_cast<int_type>(0)})
                  .error()
                  .code == errc::illegal_type);
static_assert(qfold::tflite::from_tosa({1, std::numeric_limits<int>::min()}).error().code ==
              errc::shift_out_of_range);
static_assert(qfold::chain::evaluate(std::array<qfold::chain::step, 1>{qfold::chain::add{1}},
                                     i64max)
                  .error()
                  .code == errc::value_out_of_range);
static_assert(qfold::validate(qfold::qparams{.scale = std::numeric_limits<double>::denorm_min()})
                  .error()
                  .code == errc::scale_subnormal);
static_assert(
    qfold::validate(qfold::conventions::executorch, qfold::qparams{.scale = 1e39}).error().code ==
    errc::scale_too_large);
static_assert(qfold::compute_multiplier_and_shift(0.5, static_cast<qfold::scale_width>(0),
                                                  qfold::tie_rule::half_to_even)
                  .error()
                  .code == errc::illegal_attributes);
}  // namespace
