// Bad-input catalogue of the arith, quant, table and math layers (issue 11): every hostile
// parameter gets its exact named error, derived from the spec / DESIGN.md in the `why` column,
// never undefined behaviour or a value. Each row is one named case; docs/errors.md shows the same
// table (case -> API -> errc -> why). Rows are {case, API, expected errc, why, call}; a row whose
// call returns a value, or another code, fails with the case's name.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <qfold/qfold.hpp>
#include <span>
#include <string_view>
#include <vector>

#include "catch_compat.hpp"

namespace {
using qfold::errc;
using qfold::int_type;
using qfold::rescale_attributes;
using qfold::rounding_mode;
using qfold::scale_factor;
namespace checked = qfold::checked;
namespace chain = qfold::chain;

constexpr std::int32_t i32min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t i32max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double denorm = std::numeric_limits<double>::denorm_min();
constexpr auto w32 = qfold::scale_width::bits32;
constexpr auto w16 = qfold::scale_width::bits16;
constexpr auto even = qfold::tie_rule::half_to_even;
constexpr std::int32_t one_30 = 1 << 30;
constexpr std::size_t any_index = qfold::error::no_index - 1;  // the row does not check it

// The error of a result (code 0 when it holds a value, which no row expects).
template <class R>
qfold::error error_of(const R& r) {
  return r ? qfold::error{} : r.error();
}

struct bad_case {
  std::string_view name, api;
  errc want;
  std::string_view why;
  qfold::error (*call)();
  std::size_t index = any_index;  // the expected error.index, where the API reports one
};

rescale_attributes i8_to_i8() { return {}; }
rescale_attributes with(rescale_attributes a, int_type in, int_type out) {
  a.input_type = in;
  a.output_type = out;
  return a;
}
// Knots 0 except -32768 at knot 99 and 32767 at knot 100: the first slope outside int16 (65535)
// starts at knot 99 (98 -> 99 is -32768, still an int16).
qfold::int16_table int16_table_with_jump() {
  qfold::int16_table t;
  t.values[99] = -32768;
  t.values[100] = 32767;
  return t;
}
// One element through rescale_array with the given span types, sizes and scales.
template <class In, class Out>
qfold::error array(const rescale_attributes& a, std::span<const scale_factor> s, std::size_t n,
                   std::size_t out_n, In fill = 0) {
  std::vector<In> in(n, fill);
  std::vector<Out> out(out_n);
  return error_of(qfold::rescale_array<In, Out>(a, s, in, out));
}
constexpr std::array<scale_factor, 1> unit{{{one_30, 30}}};
constexpr std::array<scale_factor, 2> two_units{{{one_30, 30}, {one_30, 30}}};
constexpr std::array<scale_factor, 3> three_units{{{one_30, 30}, {one_30, 30}, {one_30, 30}}};
constexpr std::array<scale_factor, 3> second_shift_63{{{one_30, 30}, {one_30, 63}, {one_30, 30}}};

qfold::error chain_at(const std::vector<chain::step>& steps, std::int64_t x) {
  return error_of(chain::evaluate(steps, x));
}

// clang-format off
const std::vector<bad_case>& catalogue() {
  static const std::vector<bad_case> rows{
  // --- multiplier/shift from a real scale --------------------------------------------------
  {"derive NaN", "compute_multiplier_and_shift", errc::scale_nan, "no multiplier approximates NaN",
   [] { return error_of(qfold::compute_multiplier_and_shift(nan, w32, even)); }},
  {"derive +inf", "compute_multiplier_and_shift", errc::scale_infinite, "frexp(inf) has no mantissa",
   [] { return error_of(qfold::compute_multiplier_and_shift(inf, w32, even)); }},
  {"derive -inf", "compute_multiplier_and_shift", errc::scale_infinite, "infinity is checked before the sign",
   [] { return error_of(qfold::compute_multiplier_and_shift(-inf, w16, even)); }},
  {"derive negative", "compute_multiplier_and_shift", errc::scale_negative, "RESCALE multipliers are >= 0 (ExecuTorch asserts)",
   [] { return error_of(qfold::compute_multiplier_and_shift(-0.5, w32, even)); }},
  {"derive negative subnormal", "compute_multiplier_and_shift", errc::scale_negative, "the sign is refused before any flush to 0",
   [] { return error_of(qfold::compute_multiplier_and_shift(-denorm, w32, even)); }},
  {"derive 2^29 (32-bit)", "compute_multiplier_and_shift", errc::scale_too_large, "mantissa 2^30, exponent 30: shift 31 - 30 = 1 < 2",
   [] { return error_of(qfold::compute_multiplier_and_shift(0x1p29, w32, even)); }},
  {"derive 2^13 (16-bit)", "compute_multiplier_and_shift", errc::scale_too_large, "shift 15 - 14 = 1 < 2",
   [] { return error_of(qfold::compute_multiplier_and_shift(0x1p13, w16, even)); }},
  {"derive DBL_MAX", "compute_multiplier_and_shift", errc::scale_too_large, "shift 31 - 1024 is negative",
   [] { return error_of(qfold::compute_multiplier_and_shift(std::numeric_limits<double>::max(), w32, even)); }},
  {"derive out-of-enum width", "compute_multiplier_and_shift", errc::illegal_attributes, "scale_width 0 is neither 16 nor 32 bits",
   [] { return error_of(qfold::compute_multiplier_and_shift(0.25, static_cast<qfold::scale_width>(0), even)); }},
  {"derive out-of-enum tie rule", "compute_multiplier_and_shift", errc::illegal_attributes, "tie_rule 2 names no rounding",
   [] { return error_of(qfold::compute_multiplier_and_shift(0.25, w32, static_cast<qfold::tie_rule>(2))); }},
  {"TFLite quantize NaN", "tflite::quantize_multiplier", errc::scale_nan, "static_cast<int64_t> of NaN is UB in TFLite",
   [] { return error_of(qfold::tflite::quantize_multiplier(nan)); }},
  {"TFLite quantize -inf", "tflite::quantize_multiplier", errc::scale_infinite, "frexp(-inf) is UB to round in TFLite",
   [] { return error_of(qfold::tflite::quantize_multiplier(-inf)); }},
  {"TFLite quantize negative", "tflite::quantize_multiplier", errc::scale_negative, "TFLite's negative multipliers are meaningless",
   [] { return error_of(qfold::tflite::quantize_multiplier(-1.0)); }},
  {"TFLite quantize out-of-enum build", "tflite::quantize_multiplier", errc::illegal_attributes, "rounding 7 is no TFLite build",
   [] { return error_of(qfold::tflite::quantize_multiplier(0.5, static_cast<qfold::tflite::rounding>(7))); }},
  // --- quantization parameters and conventions ---------------------------------------------
  {"qparams scale NaN", "validate(qparams)", errc::scale_nan, "real = scale * (q - zp) is undefined",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = nan})); }},
  {"qparams scale +inf", "validate(qparams)", errc::scale_infinite, "every non-zero-point code is infinite",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = inf})); }},
  {"qparams scale -inf", "validate(qparams)", errc::scale_infinite, "infinity is checked before the sign",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = -inf})); }},
  {"qparams scale 0", "validate(qparams)", errc::scale_zero, "quantize divides by the scale",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = 0.0})); }},
  {"qparams scale -0", "validate(qparams)", errc::scale_zero, "-0 is not < 0; it is zero",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = -0.0})); }},
  {"qparams scale negative", "validate(qparams)", errc::scale_negative, "scales are positive",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = -1.0})); }},
  {"qparams scale denorm_min", "validate(qparams)", errc::scale_subnormal, "1 / 2^-1074 overflows: quantize gives inf or NaN",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = denorm})); }},
  {"qparams largest subnormal", "validate(qparams)", errc::scale_subnormal, "below DBL_MIN the reciprocal overflows too",
   [] { return error_of(qfold::validate(qfold::qparams{.scale = std::numeric_limits<double>::min() - denorm})); }},
  {"qparams out-of-enum dtype", "validate(qparams)", errc::illegal_type, "dtype 9 has no range (it read as {0, 0})",
   [] { return error_of(qfold::validate(qfold::qparams{.qmin = 0, .qmax = 0, .type = static_cast<qfold::dtype>(9)})); }},
  {"qparams int8 zp 128", "validate(qparams)", errc::zero_point_out_of_range, "the zero point is a code of the type",
   [] { return error_of(qfold::validate(qfold::qparams{.zero_point = 128})); }},
  {"qparams uint8 zp -1", "validate(qparams)", errc::zero_point_out_of_range, "uint8 codes are 0..255",
   [] { return error_of(qfold::validate(qfold::make_qparams(qfold::dtype::uint8, 1.0, -1))); }},
  {"qparams uint16 zp INT32_MIN", "validate(qparams)", errc::zero_point_out_of_range, "uint16 codes are 0..65535",
   [] { return error_of(qfold::validate(qfold::make_qparams(qfold::dtype::uint16, 1.0, i32min))); }},
  {"qparams int8 qmin -129", "validate(qparams)", errc::value_out_of_range, "clamp range outside the type",
   [] { return error_of(qfold::validate(qfold::qparams{.qmin = -129})); }},
  {"qparams uint8 qmax 256", "validate(qparams)", errc::value_out_of_range, "clamp range outside the type",
   [] { auto q = qfold::make_qparams(qfold::dtype::uint8, 1.0, 0); q.qmax = 256; return error_of(qfold::validate(q)); }},
  {"qparams qmin > qmax", "validate(qparams)", errc::empty_range, "no code to clamp to",
   [] { return error_of(qfold::validate(qfold::qparams{.qmin = 5, .qmax = 4})); }},
  {"float convention, scale 1e-39", "validate(convention, qparams)", errc::scale_subnormal, "a normal double but a float subnormal: 1/s overflows float",
   [] { return error_of(qfold::validate(qfold::conventions::executorch, qfold::qparams{.scale = 1e-39})); }},
  {"float convention, scale 1e39", "validate(convention, qparams)", errc::scale_too_large, "static_cast<float>(1e39) is inf",
   [] { return error_of(qfold::validate(qfold::conventions::tflite, qfold::qparams{.scale = 1e39})); }},
  {"float reciprocal subnormal", "validate(convention, qparams)", errc::scale_too_large, "1.0f / 2^127 = 2^-127 is a float subnormal",
   [] { return error_of(qfold::validate(qfold::conventions::tflite, qfold::qparams{.scale = 0x1p127})); }},
  {"double reciprocal subnormal", "validate(convention, qparams)", errc::scale_too_large, "1 / 2^1023 is a double subnormal",
   [] { qfold::quant_convention<double> c{}; return error_of(qfold::validate(c, qfold::qparams{.scale = 0x1p1023})); }},
  {"convention out-of-enum rounding", "quantize", errc::illegal_attributes, "rounding_rule 7 would return the value unrounded",
   [] { qfold::quant_convention<float> c{}; c.rounding = static_cast<qfold::math::rounding_rule>(7); return error_of(qfold::quantize(c, qfold::qparams{}, 1.0f)); }},
  {"quantize NaN (TFLite)", "quantize", errc::not_finite, "static_cast<int32_t>(NaN) is UB in LUTPopulate",
   [] { return error_of(qfold::quantize(qfold::conventions::tflite, qfold::qparams{}, std::numeric_limits<float>::quiet_NaN())); }},
  // --- table generation ---------------------------------------------------------------------
  {"table8 qparams type differs", "make_table8", errc::illegal_type, "uint8 qparams for an int8 table",
   [] { return error_of(qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::tflite, qfold::fn::tanh, qfold::make_qparams(qfold::dtype::uint8, 0.1, 0), qfold::qparams{})); }},
  {"table8 subnormal output scale", "make_table8", errc::scale_subnormal, "every entry would be +-inf or NaN",
   [] { return error_of(qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::vela, qfold::fn::tanh, qfold::qparams{.scale = 0.1}, qfold::qparams{.scale = denorm})); }},
  {"table8 log of negatives", "make_table8", errc::not_finite, "log(-12.8) is NaN at entry 0 (code -128)",
   [] { return error_of(qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::tflite, qfold::fn::log, qfold::qparams{.scale = 0.1}, qfold::qparams{.scale = 0.1})); }, 0},
  {"ExecuTorch int16 from int8 qparams", "make_executorch_int16_table", errc::illegal_type, "the 513-knot table needs int16 input",
   [] { return error_of(qfold::make_executorch_int16_table(qfold::fn::tanh, qfold::qparams{.scale = 0.1}, qfold::make_qparams(qfold::dtype::int16, 1.0 / 32768, 0))); }},
  {"ExecuTorch int16 all knots 0", "make_executorch_int16_table", errc::value_out_of_range, "log2(max |knot|) of 0 raises in ExecuTorch",
   [] { return error_of(qfold::make_executorch_int16_table([](float) { return 0.0f; }, qfold::make_qparams(qfold::dtype::int16, 1.0 / 256, 0), qfold::make_qparams(qfold::dtype::int16, 1.0 / 256, 0))); }},
  {"TFLite int16 float-subnormal scale", "make_tflite_int16_table", errc::scale_subnormal, "1e-40 is 0 or subnormal as the float TFLite computes in",
   [] { return error_of(qfold::make_tflite_int16_table(qfold::fn::tanh, qfold::make_qparams(qfold::dtype::int16, 1e-40, 0), qfold::make_qparams(qfold::dtype::int16, 1.0 / 32768, 0))); }},
  {"TFLite int16 uint16 output", "make_tflite_int16_table", errc::illegal_type, "LUTPopulate<int16_t> has int16 output",
   [] { return error_of(qfold::make_tflite_int16_table(qfold::fn::tanh, qfold::make_qparams(qfold::dtype::int16, 1.0 / 256, 0), qfold::make_qparams(qfold::dtype::uint16, 1.0 / 256, 0))); }},
  // --- TOSA apply_scale_32 / apply_scale_16 ------------------------------------------------
  {"apply_scale_32 shift -1", "checked::apply_scale_32", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(checked::apply_scale_32(1, one_30, -1)); }},
  {"apply_scale_32 shift 0", "checked::apply_scale_32", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(checked::apply_scale_32(1, one_30, 0)); }},
  {"apply_scale_32 shift 1", "checked::apply_scale_32", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(checked::apply_scale_32(0, one_30, 1)); }},
  {"apply_scale_32 shift 63", "checked::apply_scale_32", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62): 1 << 62 is the largest round",
   [] { return error_of(checked::apply_scale_32(1, one_30, 63, true)); }},
  {"apply_scale_32 shift 64", "checked::apply_scale_32", errc::shift_out_of_range, "a shift by 64 would be UB",
   [] { return error_of(checked::apply_scale_32(1, one_30, 64)); }},
  {"apply_scale_32 shift 200", "checked::apply_scale_32", errc::shift_out_of_range, "not even an int8 shift",
   [] { return error_of(checked::apply_scale_32(1, one_30, 200)); }},
  {"apply_scale_32 shift INT_MIN", "checked::apply_scale_32", errc::shift_out_of_range, "shift - 1 would overflow",
   [] { return error_of(checked::apply_scale_32(1, one_30, std::numeric_limits<int>::min())); }},
  {"apply_scale_32 value 2 at shift 2", "checked::apply_scale_32", errc::value_out_of_range, "REQUIRE(-2 <= value < 2)",
   [] { return error_of(checked::apply_scale_32(2, one_30, 2)); }},
  {"apply_scale_32 INT32_MIN at shift 31", "checked::apply_scale_32", errc::value_out_of_range, "REQUIRE(value >= -2^30)",
   [] { return error_of(checked::apply_scale_32(i32min, one_30, 31, true)); }},
  {"apply_scale_32 INT32_MAX at shift 31", "checked::apply_scale_32", errc::value_out_of_range, "REQUIRE(value < 2^30)",
   [] { return error_of(checked::apply_scale_32(i32max, i32max, 31)); }},
  {"apply_scale_32 multiplier INT32_MIN", "checked::apply_scale_32", errc::negative_multiplier, "REQUIRE(multiplier >= 0)",
   [] { return error_of(checked::apply_scale_32(1, i32min, 30)); }},
  {"apply_scale_32 multiplier -1, shift 200", "checked::apply_scale_32", errc::negative_multiplier, "the spec checks the multiplier first",
   [] { return error_of(checked::apply_scale_32(1, -1, 200)); }},
  {"apply_scale_16 INT64_MAX", "checked::apply_scale_16", errc::value_out_of_range, "value is an int48",
   [] { return error_of(checked::apply_scale_16(i64max, 1, 16)); }},
  {"apply_scale_16 2^47", "checked::apply_scale_16", errc::value_out_of_range, "int48_max + 1",
   [] { return error_of(checked::apply_scale_16(qfold::int48_max + 1, 1, 16)); }},
  {"apply_scale_16 -2^47 - 1", "checked::apply_scale_16", errc::value_out_of_range, "int48_min - 1",
   [] { return error_of(checked::apply_scale_16(qfold::int48_min - 1, 1, 16)); }},
  {"apply_scale_16 multiplier -1", "checked::apply_scale_16", errc::negative_multiplier, "REQUIRE(multiplier >= 0)",
   [] { return error_of(checked::apply_scale_16(5, -1, 16)); }},
  {"apply_scale_16 shift 1", "checked::apply_scale_16", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(checked::apply_scale_16(5, 1, 1)); }},
  {"apply_scale_16 shift 63", "checked::apply_scale_16", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(checked::apply_scale_16(5, 1, 63)); }},
  {"apply_scale_16 result > int32", "checked::apply_scale_16", errc::result_out_of_range, "(2^47 - 1) * 32767 / 4 ~ 2^60: REQUIRE int32 result",
   [] { return error_of(checked::apply_scale_16(qfold::int48_max, 32767, 2)); }},
  // --- TOSA MUL and reciprocal_scale -------------------------------------------------------
  {"mul i32 shift -1", "checked::mul", errc::shift_out_of_range, "REQUIRE(0 <= shift <= 63)",
   [] { return error_of(checked::mul<std::int32_t>(3, 4, -1)); }},
  {"mul i32 shift 64", "checked::mul", errc::shift_out_of_range, "REQUIRE(0 <= shift <= 63)",
   [] { return error_of(checked::mul<std::int32_t>(3, 4, 64)); }},
  {"mul i8 shift 1", "checked::mul", errc::shift_out_of_range, "REQUIRE(in_t == i32 || shift == 0)",
   [] { return error_of(checked::mul<std::int8_t>(3, 4, 1)); }},
  {"mul i16 shift 2", "checked::mul", errc::shift_out_of_range, "REQUIRE(in_t == i32 || shift == 0)",
   [] { return error_of(checked::mul<std::int16_t>(3, 4, 2)); }},
  {"mul INT32_MIN^2 shift 63", "checked::mul", errc::result_out_of_range, "2^62 + 2^62 overflows the spec's int64 sum",
   [] { return error_of(checked::mul<std::int32_t>(i32min, i32min, 63)); }},
  {"mul INT32_MAX^2 shift 1", "checked::mul", errc::result_out_of_range, "(2^31 - 1)^2 / 2 ~ 2^61: REQUIRE int32",
   [] { return error_of(checked::mul<std::int32_t>(i32max, i32max, 1)); }},
  {"reciprocal_scale 0", "checked::reciprocal_scale", errc::divisor_zero, "REQUIRE(value > 0)",
   [] { return error_of(checked::reciprocal_scale(0)); }},
  {"reciprocal_scale 2^30 + 1", "checked::reciprocal_scale", errc::multiplier_out_of_range, "(2^30 + 1) 2^31 / (2^30 + 1) = 2^31 > INT32_MAX",
   [] { return error_of(checked::reciprocal_scale((1u << 30) + 1)); }},
  {"reciprocal_scale 2^31 + 2", "checked::reciprocal_scale", errc::multiplier_out_of_range, "quotient exactly 2^31",
   [] { return error_of(checked::reciprocal_scale((1u << 31) + 2)); }},
  // --- TOSA RESCALE ---------------------------------------------------------------------------
  {"RESCALE input type 0", "checked::rescale_value", errc::illegal_type, "int_type 0: range_of would shift by -1",
   [] { return error_of(checked::rescale_value(with(i8_to_i8(), static_cast<int_type>(0), int_type::i8), {one_30, 30}, 0)); }},
  {"RESCALE output type 64", "checked::rescale_value", errc::illegal_type, "int_type 64: range_of would shift by 64",
   [] { return error_of(checked::rescale_value(with(i8_to_i8(), int_type::i8, static_cast<int_type>(64)), {one_30, 30}, 0)); }},
  {"RESCALE input type 7", "validate(rescale_attributes)", errc::illegal_type, "no TOSA type is 7 bits wide",
   [] { return error_of(qfold::validate(with(i8_to_i8(), static_cast<int_type>(7), int_type::i8))); }},
  {"RESCALE output i48", "validate(rescale_attributes)", errc::illegal_type, "tosa.xml has no i48 output",
   [] { return error_of(qfold::validate(with(i8_to_i8(), int_type::i8, int_type::i48))); }},
  {"RESCALE rounding_mode 0", "validate(rescale_attributes)", errc::illegal_attributes, "reference model: SINGLE, INEXACT or DOUBLE",
   [] { auto a = i8_to_i8(); a.rounding = static_cast<rounding_mode>(0); return error_of(qfold::validate(a)); }},
  {"RESCALE rounding_mode 4", "validate(rescale_attributes)", errc::illegal_attributes, "reference model: SINGLE, INEXACT or DOUBLE",
   [] { auto a = i8_to_i8(); a.rounding = static_cast<rounding_mode>(4); return error_of(qfold::validate(a)); }},
  {"RESCALE i16 input_zp 5", "validate(rescale_attributes)", errc::illegal_zero_point, "ERROR_IF: zp != 0 unless i8 or unsigned i16",
   [] { auto a = with(i8_to_i8(), int_type::i16, int_type::i16); a.input_zp = 5; return error_of(qfold::validate(a)); }},
  {"RESCALE i8 input_zp 128", "validate(rescale_attributes)", errc::illegal_zero_point, "the zp is an in_t value: -128..127",
   [] { auto a = i8_to_i8(); a.input_zp = 128; return error_of(qfold::validate(a)); }},
  {"RESCALE i8 input_zp INT64_MIN", "validate(rescale_attributes)", errc::illegal_zero_point, "in - zp would overflow int64",
   [] { auto a = i8_to_i8(); a.input_zp = i64min; return error_of(qfold::validate(a)); }},
  {"RESCALE u8 output_zp 256", "validate(rescale_attributes)", errc::illegal_zero_point, "unsigned i8 zp is 0..255",
   [] { auto a = with(i8_to_i8(), int_type::i16, int_type::i8); a.output_unsigned = true; a.output_zp = 256; return error_of(qfold::validate(a)); }},
  {"RESCALE u16 output_zp 1", "validate(rescale_attributes)", errc::illegal_zero_point, "ERROR_IF: unsigned i16 zp is 0 or 32768",
   [] { auto a = i8_to_i8(); a.output_type = int_type::i16; a.output_unsigned = true; a.output_zp = 1; return error_of(qfold::validate(a)); }},
  {"RESCALE scale32 with i48", "validate(rescale_attributes)", errc::illegal_attributes, "ERROR_IF(scale32 && in_t == i48)",
   [] { return error_of(qfold::validate(with(i8_to_i8(), int_type::i48, int_type::i32))); }},
  {"RESCALE DOUBLE_ROUND without scale32", "validate(rescale_attributes)", errc::illegal_attributes, "ERROR_IF(!scale32 && DOUBLE_ROUND)",
   [] { auto a = with(i8_to_i8(), int_type::i48, int_type::i32); a.scale32 = false; a.rounding = rounding_mode::double_round; return error_of(qfold::validate(a)); }},
  {"RESCALE both unsigned", "validate(rescale_attributes)", errc::illegal_attributes, "ERROR_IF(input_unsigned && output_unsigned)",
   [] { auto a = i8_to_i8(); a.input_unsigned = a.output_unsigned = true; return error_of(qfold::validate(a)); }},
  {"RESCALE unsigned output from i32", "validate(rescale_attributes)", errc::illegal_attributes, "ERROR_IF(output_unsigned && in_t == i32)",
   [] { auto a = with(i8_to_i8(), int_type::i32, int_type::i8); a.output_unsigned = true; return error_of(qfold::validate(a)); }},
  {"RESCALE unsigned input to i32", "validate(rescale_attributes)", errc::illegal_attributes, "ERROR_IF(input_unsigned && out_t == i32)",
   [] { auto a = with(i8_to_i8(), int_type::i8, int_type::i32); a.input_unsigned = true; return error_of(qfold::validate(a)); }},
  {"RESCALE multiplier -1", "validate(attributes, scale)", errc::negative_multiplier, "apply_scale REQUIRE(multiplier >= 0)",
   [] { return error_of(qfold::validate(i8_to_i8(), scale_factor{-1, 30})); }},
  {"RESCALE multiplier 32768, scale16", "validate(attributes, scale)", errc::multiplier_out_of_range, "!scale32: the multiplier is an int16",
   [] { auto a = with(i8_to_i8(), int_type::i48, int_type::i32); a.scale32 = false; return error_of(qfold::validate(a, scale_factor{32768, 30})); }},
  {"RESCALE shift -1", "validate(attributes, scale)", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(qfold::validate(i8_to_i8(), scale_factor{one_30, -1})); }},
  {"RESCALE shift 1", "validate(attributes, scale)", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(qfold::validate(i8_to_i8(), scale_factor{one_30, 1})); }},
  {"RESCALE shift 63", "validate(attributes, scale)", errc::shift_out_of_range, "REQUIRE(2 <= shift <= 62)",
   [] { return error_of(qfold::validate(i8_to_i8(), scale_factor{one_30, 63})); }},
  {"RESCALE shift 200", "validate(attributes, scale)", errc::shift_out_of_range, "the shift attribute is an int8 at most",
   [] { return error_of(qfold::validate(i8_to_i8(), scale_factor{one_30, 200})); }},
  {"RESCALE i8 input 128", "checked::rescale_value", errc::value_out_of_range, "the input is an in_t value",
   [] { return error_of(checked::rescale_value(i8_to_i8(), {one_30, 30}, 128)); }},
  {"RESCALE i48 input INT64_MAX", "checked::rescale_value", errc::value_out_of_range, "not an int48",
   [] { auto a = with(i8_to_i8(), int_type::i48, int_type::i32); a.scale32 = false; return error_of(checked::rescale_value(a, {1, 16}, i64max)); }},
  {"RESCALE i32 INT32_MIN at shift 31", "checked::rescale_value", errc::value_out_of_range, "apply_scale_32 REQUIRE(value >= -2^30)",
   [] { return error_of(checked::rescale_value(with(i8_to_i8(), int_type::i32, int_type::i32), {one_30, 31}, i32min)); }},
  {"RESCALE output_zp overflows int32", "checked::rescale_value", errc::result_out_of_range, "apply_add_s: INT32_MAX + 1 (4 (2^31 - 1) / 4 + zp 1)",
   [] { auto a = with(i8_to_i8(), int_type::i48, int_type::i8); a.scale32 = false; a.output_zp = 1; return error_of(checked::rescale_value(a, {1, 2}, 4 * std::int64_t{i32max})); }},
  {"RESCALE scale16 result > int32", "checked::rescale_value", errc::result_out_of_range, "apply_scale_16 REQUIRE int32 result",
   [] { auto a = with(i8_to_i8(), int_type::i48, int_type::i32); a.scale32 = false; return error_of(checked::rescale_value(a, {32767, 2}, qfold::int48_max)); }},
  {"rescale_array int8 span for i16", "rescale_array", errc::illegal_type, "span element type differs from input_type",
   [] { return array<std::int8_t, std::int8_t>(with(i8_to_i8(), int_type::i16, int_type::i8), unit, 4, 4); }},
  {"rescale_array uint8 output for signed", "rescale_array", errc::illegal_type, "uint8_t output but output_unsigned = false",
   [] { return array<std::int8_t, std::uint8_t>(i8_to_i8(), unit, 4, 4); }},
  {"rescale_array short output", "rescale_array", errc::size_mismatch, "out is shorter than in",
   [] { return array<std::int8_t, std::int8_t>(i8_to_i8(), unit, 4, 3); }},
  {"rescale_array per-tensor, 2 scales", "rescale_array", errc::size_mismatch, "per-tensor takes exactly one pair",
   [] { return array<std::int8_t, std::int8_t>(i8_to_i8(), two_units, 4, 4); }},
  {"rescale_array per-channel, 0 scales", "rescale_array", errc::size_mismatch, "no channel to scale",
   [] { auto a = i8_to_i8(); a.per_channel = true; return array<std::int8_t, std::int8_t>(a, {}, 4, 4); }},
  {"rescale_array 3 channels, 4 elements", "rescale_array", errc::size_mismatch, "the size is no multiple of the channel count",
   [] { auto a = i8_to_i8(); a.per_channel = true; return array<std::int8_t, std::int8_t>(a, three_units, 4, 4); }},
  {"rescale_array channel 1 shift 63", "rescale_array", errc::shift_out_of_range, "index = the channel",
   [] { auto a = i8_to_i8(); a.per_channel = true; return array<std::int8_t, std::int8_t>(a, second_shift_63, 6, 6); }, 1},
  {"rescale_array INT32_MIN elements", "rescale_array", errc::value_out_of_range, "element 0 breaks apply_scale_32's value range at shift 31",
   [] { constexpr std::array<scale_factor, 1> s{{{one_30, 31}}}; return array<std::int32_t, std::int32_t>(with(i8_to_i8(), int_type::i32, int_type::i32), s, 3, 3, i32min); }, 0},
  // --- TFLite, gemmlowp, CMSIS-NN ----------------------------------------------------------
  {"to_tosa shift INT_MIN", "tflite::to_tosa", errc::shift_out_of_range, "31 - INT_MIN overflowed int",
   [] { return error_of(qfold::tflite::to_tosa({one_30, std::numeric_limits<int>::min()})); }},
  {"to_tosa shift 30", "tflite::to_tosa", errc::shift_out_of_range, "TOSA shift 31 - 30 = 1 < 2",
   [] { return error_of(qfold::tflite::to_tosa({one_30, 30})); }},
  {"from_tosa shift INT_MIN", "tflite::from_tosa", errc::shift_out_of_range, "31 - INT_MIN overflowed int",
   [] { return error_of(qfold::tflite::from_tosa({one_30, std::numeric_limits<int>::min()})); }},
  {"from_tosa shift INT_MAX", "tflite::from_tosa", errc::shift_out_of_range, "TFLite shift far below -31",
   [] { return error_of(qfold::tflite::from_tosa({one_30, std::numeric_limits<int>::max()})); }},
  {"from_tosa multiplier -1", "tflite::from_tosa", errc::negative_multiplier, "TOSA multipliers are >= 0",
   [] { return error_of(qfold::tflite::from_tosa({-1, 31})); }},
  {"TFLite requantize shift 31", "tflite::checked::multiply_by_quantized_multiplier", errc::shift_out_of_range, "1 << 31 in TFLite's int",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(1, one_30, 31)); }},
  {"TFLite requantize shift -32", "tflite::checked::multiply_by_quantized_multiplier", errc::shift_out_of_range, "RoundingDivideByPOT asserts exponent <= 31",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(1, one_30, -32)); }},
  {"TFLite requantize x * 2 overflow", "tflite::checked::multiply_by_quantized_multiplier", errc::value_out_of_range, "INT32_MAX * (1 << 1) is signed overflow",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(i32max, one_30, 1)); }},
  {"TFLite single round q < 0", "tflite::checked::multiply_by_quantized_multiplier", errc::negative_multiplier, "TFLITE_DCHECK(quantized_multiplier >= 0)",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(1, -1, 0, qfold::tflite::rounding::single_round)); }},
  {"TFLite requantize build 7", "tflite::checked::multiply_by_quantized_multiplier", errc::illegal_attributes, "no such build",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(1, one_30, 0, static_cast<qfold::tflite::rounding>(7))); }},
  {"TFLite int64 x = 2^47", "tflite::checked::multiply_by_quantized_multiplier(int64)", errc::value_out_of_range, "TFLITE_DCHECK x in [-2^47, 2^47)",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(std::int64_t{1} << 47, one_30, 0)); }},
  {"TFLite int64 shift 8", "tflite::checked::multiply_by_quantized_multiplier(int64)", errc::shift_out_of_range, "TFLITE_DCHECK(shift <= 7)",
   [] { return error_of(qfold::tflite::checked::multiply_by_quantized_multiplier(std::int64_t{5}, one_30, 8)); }},
  {"CMSIS-NN double round shift -31", "cmsis_nn::checked::requantize", errc::shift_out_of_range, "(1 << 31) - 1 in arm_nn_divide_by_power_of_two is UB",
   [] { return error_of(qfold::cmsis_nn::checked::requantize(5, one_30, -31)); }},
  {"CMSIS-NN INT32_MIN^2", "cmsis_nn::checked::requantize", errc::result_out_of_range, "the no_sat high multiply narrows 2^31 into int32",
   [] { return error_of(qfold::cmsis_nn::checked::requantize(i32min, i32min, 0)); }},
  {"CMSIS-NN single round intermediate INT32_MAX, before ece5a38a", "cmsis_nn::checked::requantize", errc::result_out_of_range, "(result + 1) >> 1 overflowed at INT32_MAX in the int32 intermediate of the code before the fix (the current code is exact there: 2^30)",
   [] { return error_of(qfold::cmsis_nn::checked::requantize(i32max, one_30, 0, qfold::cmsis_nn::rounding::single_round, qfold::cmsis_nn::version::before_ece5a38a)); }},
  {"CMSIS-NN build 9", "cmsis_nn::checked::requantize", errc::illegal_attributes, "no such build",
   [] { return error_of(qfold::cmsis_nn::checked::requantize(1, one_30, 0, static_cast<qfold::cmsis_nn::rounding>(9))); }},
  {"CMSIS-NN s64 INT64_MAX * 2", "cmsis_nn::checked::requantize_s64", errc::value_out_of_range, "val * reduced_multiplier overflows int64",
   [] { return error_of(qfold::cmsis_nn::checked::requantize_s64(i64max, 2, 0)); }},
  {"CMSIS-NN s64 shift 15", "cmsis_nn::checked::requantize_s64", errc::shift_out_of_range, "a shift count 14 - 15 = -1 is UB",
   [] { return error_of(qfold::cmsis_nn::checked::requantize_s64(5, 2, 15)); }},
  // --- chains -----------------------------------------------------------------------------------
  {"chain ADD at INT64_MAX", "chain::evaluate", errc::value_out_of_range, "x + c overflowed int64 before the range test",
   [] { return chain_at({chain::add{1}}, i64max); }, 0},
  {"chain ADD INT32_MAX + 1", "chain::evaluate", errc::result_out_of_range, "TOSA ADD int32 overflow",
   [] { return chain_at({chain::add{1}}, i32max); }, 0},
  {"chain TABLE at INT64_MIN", "chain::evaluate", errc::value_out_of_range, "x - first_code overflowed int64",
   [] { chain::table t; t.first_code = 1; return chain_at({t}, i64min); }, 0},
  {"chain TABLE past its 256 codes", "chain::evaluate", errc::value_out_of_range, "first_code + 256 has no entry",
   [] { return chain_at({chain::table{}}, 128); }, 0},
  {"chain clamp lo > hi", "chain::evaluate", errc::empty_range, "TOSA CLAMP ERROR_IF(max < min)",
   [] { return chain_at({chain::clamp{5, 4}}, 0); }, 0},
  {"chain MUL no-wrap overflow", "chain::evaluate", errc::result_out_of_range, "65536^2 does not fit int32 and wrap = false",
   [] { return chain_at({chain::mul{65536, 0, false}}, 65536); }, 0},
  {"chain MUL input INT64_MIN", "chain::evaluate", errc::value_out_of_range, "TOSA MUL takes int32 operands",
   [] { return chain_at({chain::mul{1, 0}}, i64min); }, 0},
  {"chain requantize flavour 9", "chain::evaluate", errc::illegal_attributes, "no such flavour (was silently CMSIS single)",
   [] { return chain_at({chain::requantize{one_30, 0, static_cast<chain::requantize::flavour>(9)}}, 1); }, 0},
  {"chain TABLE16 input 32768", "chain::evaluate", errc::value_out_of_range, "the int16 TABLE takes int16 input",
   [] { return chain_at({chain::table16{}}, 32768); }, 0},
  {"chain clamp then ADD", "chain::evaluate", errc::value_out_of_range, "index = the step that fails (1)",
   [] { return chain_at({chain::clamp{i64max, i64max}, chain::add{-1}}, 0); }, 1},
  {"chain RESCALE type 0", "chain::evaluate", errc::illegal_type, "the step's RESCALE validates its types",
   [] { return chain_at({chain::rescale{with(i8_to_i8(), static_cast<int_type>(0), int_type::i8), {one_30, 30}}}, 0); }, 0},
  {"collapse uint8 codes into int8", "chain::collapse", errc::value_out_of_range, "code 128 (entry 128) is no int8",
   [] { return error_of(chain::collapse<std::uint8_t, std::int8_t>({})); }, 128},
  {"collapse_int16 output INT64_MAX", "chain::collapse_int16", errc::value_out_of_range, "knot 0 is no int16 (256 d would overflow)",
   [] { return error_of(chain::collapse_int16(std::vector<chain::step>{chain::clamp{i64max, i64max}}, false)); }, 0},
  {"collapse_int16 last code outside int16", "chain::collapse_int16", errc::value_out_of_range, "only code 32767 maps to 40000: index 65535",
   [] { chain::table t; t.first_code = 32767 - 255; for (auto& v : t.values) v = 0; t.values[255] = 40000;
        return error_of(chain::collapse_int16(std::vector<chain::step>{chain::clamp{32767 - 255, 32767}, t}, false)); }, 65535},
  // --- lookup tables -----------------------------------------------------------------------------
  {"int16 table slope 65535", "validate(int16_table)", errc::value_out_of_range, "REQUIRE slope in int16; index = knot 99",
   [] { return error_of(qfold::validate(int16_table_with_jump())); }, 99},
  {"tosa_lookup over a bad slope", "checked::tosa_lookup", errc::value_out_of_range, "the spec's REQUIRE on the segment",
   [] { return error_of(checked::tosa_lookup(int16_table_with_jump(), static_cast<std::int16_t>(-32768 + 99 * 128 + 5))); }},
  {"table8 from 255 entries", "table8_from", errc::size_mismatch, "a TABLE has 256 entries",
   [] { const std::vector<std::int8_t> v(255); return error_of(qfold::table8_from<std::int8_t, std::int8_t>(std::span<const std::int8_t>(v))); }},
  {"table8 from 257 entries", "table8_from", errc::size_mismatch, "a TABLE has 256 entries",
   [] { const std::vector<std::uint8_t> v(257); return error_of(qfold::table8_from<std::uint8_t, std::uint8_t>(std::span<const std::uint8_t>(v))); }},
  {"int16 table from 512 knots", "int16_table_from", errc::size_mismatch, "TOSA int16 TABLE has 513 knots",
   [] { const std::vector<std::int16_t> v(512); return error_of(qfold::int16_table_from(v)); }},
  {"int16 table from no data", "int16_table_from", errc::size_mismatch, "an empty tensor is an error, not a default",
   [] { return error_of(qfold::int16_table_from({})); }},
  };
  return rows;
}
// clang-format on
}  // namespace

TEST_CASE("bad input: every catalogue case gives its exact named error", "[arith][bad_input]") {
  const auto& rows = catalogue();
  CHECK(rows.size() >= 60);
  for (const bad_case& c : rows) {
    CAPTURE(c.name, c.api, qfold::to_string(c.want));
    const qfold::error e = c.call();
    CHECK(qfold::to_string(e.code) == qfold::to_string(c.want));
    CHECK(!e.message.empty());
    if (c.index != any_index) CHECK(e.index == c.index);
  }
}

TEST_CASE("bad input: every case name is unique", "[arith][bad_input]") {
  const auto& rows = catalogue();
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      CAPTURE(rows[i].name);
      CHECK(rows[i].name != rows[j].name);
    }
}

// Hostile-looking inputs that are legal and have a defined value (not errors): the value is
// derived here from the spec, so these rows cannot pass by returning an error either.
TEST_CASE("bad input: edge inputs that are legal give the spec's value", "[arith][bad_input]") {
  // Scale 0 and -0: multiplier 0 at shift 31 (15), every input maps to the zero point.
  CHECK(*qfold::compute_multiplier_and_shift(0.0, w32, even) == scale_factor{0, 31});
  CHECK(*qfold::compute_multiplier_and_shift(-0.0, w16, even) == scale_factor{0, 15});
  // A subnormal scale: shift 31 + 1074 > 62, so the multiplier is floor-shifted right by 31: 0.
  CHECK(*qfold::compute_multiplier_and_shift(denorm, w32, even) == scale_factor{0, 62});
  // The double just below 2^29: (1 - 2^-53) 2^29 rounds to 2^31 at 31 bits, is renormalised to
  // (2^30, exponent 30), so its shift is 1 as well: refused like 2^29.
  CHECK(qfold::compute_multiplier_and_shift(std::nextafter(0x1p29, 0.0), w32, even).error().code ==
        errc::scale_too_large);
  // MUL shift 0 wraps to 32 bits (TOSA's apply_mul_s): 46341^2 = 2147488281 - 2^32.
  CHECK(*checked::mul<std::int32_t>(46341, 46341, 0) == 2147488281LL - (1LL << 32));
  // apply_scale_32 at its extremes: INT32_MIN is legal from shift 32 on: -2^31 2^30 / 2^32 =
  // -2^29 exactly. At shift 62 with DOUBLE_ROUND: floor((-2^31 (2^31 - 1) - 2^30 + 2^61) / 2^62)
  // = floor(-1/2 + 2^-32) = -1.
  CHECK(*checked::apply_scale_32(i32min, one_30, 32) == -(1 << 29));
  CHECK(*checked::apply_scale_32(i32min, i32max, 62, true) == -1);
  // ExecuTorch's NaN is code 0 (nan_to_zero), even outside [qmin, qmax].
  CHECK(*qfold::quantize(qfold::conventions::executorch, qfold::qparams{.qmin = 5, .qmax = 9},
                         std::numeric_limits<float>::quiet_NaN()) == 0);
  // Chains at int64 extremes where the steps are defined: a clamp into range, then ADD.
  CHECK(*chain::evaluate(std::vector<chain::step>{chain::clamp{-10, 10}, chain::add{i32max - 10}},
                         i64max) == i32max);
  // A TABLE whose first code is INT32_MAX still has one entry.
  chain::table t;
  t.first_code = i32max;
  t.values[0] = 7;
  CHECK(*chain::evaluate(std::vector<chain::step>{t}, i32max) == 7);
  // requantize_s64 products that fit int64 exactly at its ends were refused by the old bound
  // |val| <= INT64_MAX / |m|: INT64_MIN * 0 and -2^62 * 2 = INT64_MIN. Both round to 0 (the
  // second through the full 64-bit shift count of shift -49: -1, then (-1 + 1) >> 1).
  CHECK(*qfold::cmsis_nn::checked::requantize_s64(i64min, 0, 0) == 0);
  CHECK(*qfold::cmsis_nn::checked::requantize_s64(-(std::int64_t{1} << 62), 2, -49) == 0);
}
