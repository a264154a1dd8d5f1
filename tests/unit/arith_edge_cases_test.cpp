// The edge cases of tosa-semantics.md section 7, one named test each. Expected values are
// derived by hand in the comments (never taken from the code under test).
#include <cmath>
#include <cstdint>
#include <limits>
#include <qfold/qfold.hpp>

#include "catch_compat.hpp"

using qfold::scale_factor;
namespace checked = qfold::checked;
constexpr std::int32_t one_30 = std::int32_t{1} << 30;  // multiplier of 1.0 with shift 30
constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
constexpr auto i32max = std::numeric_limits<std::int32_t>::max();

TEST_CASE("7.1 ties: SINGLE_ROUND rounds half toward +inf", "[arith][edge]") {
  // multiplier 2^30, shift 31 is x/2: -3/2 = -1.5 -> -1, -1/2 -> 0, 1/2 -> 1, 3/2 -> 2.
  CHECK(qfold::apply_scale_32(-3, one_30, 31) == -1);
  CHECK(qfold::apply_scale_32(-1, one_30, 31) == 0);
  CHECK(qfold::apply_scale_32(1, one_30, 31) == 1);
  CHECK(qfold::apply_scale_32(3, one_30, 31) == 2);
  // TFLite's double rounding goes away from zero on the final step: with (2^30, -1) the real
  // scale is 1/4; x = -2 gives SRDHM -1 exactly, then RDBPOT(-1, 1) = -0.5 -> -1; TOSA gives 0.
  CHECK(qfold::tflite::multiply_by_quantized_multiplier(-2, one_30, -1) == -1);
  CHECK(qfold::apply_scale_32(-2, one_30, 32) == 0);
}

TEST_CASE("7.2 DOUBLE_ROUND acts only when shift > 31, and 0 counts as non-negative",
          "[arith][edge]") {
  // shift 31: x/2, the flag changes nothing.
  for (std::int32_t v = -8; v <= 8; ++v)
    CHECK(qfold::apply_scale_32(v, one_30, 31, true) ==
          qfold::apply_scale_32(v, one_30, 31, false));
  // shift 32 is x/4 with an extra +-1/4: 1/4 -> single 0, double floor(1/4 + 1/2 + 1/4) = 1;
  // -2/4 -> single floor(0) = 0, double floor(-1/2 + 1/2 - 1/4) = -1; 0 -> floor(3/4) = 0.
  CHECK(qfold::apply_scale_32(1, one_30, 32, false) == 0);
  CHECK(qfold::apply_scale_32(1, one_30, 32, true) == 1);
  CHECK(qfold::apply_scale_32(-2, one_30, 32, false) == 0);
  CHECK(qfold::apply_scale_32(-2, one_30, 32, true) == -1);
  CHECK(qfold::apply_scale_32(0, one_30, 32, true) == 0);
  // The int16-multiplier path with DOUBLE_ROUND is an ERROR_IF.
  const qfold::rescale_attributes a{.input_type = qfold::int_type::i48,
                                    .scale32 = false,
                                    .rounding = qfold::rounding_mode::double_round};
  CHECK(qfold::validate(a).error().code == qfold::errc::illegal_attributes);
}

TEST_CASE("7.3 apply_scale_32 value requirement", "[arith][edge]") {
  // shift 31 allows [-2^30, 2^30): 2^30 at scale 0.5 violates it, -2^30 does not.
  CHECK(checked::apply_scale_32(one_30, one_30, 31).error().code ==
        qfold::errc::value_out_of_range);
  CHECK(checked::apply_scale_32(-one_30, one_30, 31).value() == -(1 << 29));
  // INT32_MIN is legal only from shift 32 on.
  CHECK(checked::apply_scale_32(i32min, one_30, 31).error().code ==
        qfold::errc::value_out_of_range);
  CHECK(checked::apply_scale_32(i32min, one_30, 32).value() == -(1 << 29));
  // The smallest shift: [-2, 2) at shift 2.
  CHECK(checked::apply_scale_32(-2, one_30, 2).has_value());
  CHECK(checked::apply_scale_32(2, one_30, 2).error().code == qfold::errc::value_out_of_range);
}

TEST_CASE("7.4 shift limits and unencodable scales", "[arith][edge]") {
  CHECK(checked::apply_scale_32(0, 1, 1).error().code == qfold::errc::shift_out_of_range);
  CHECK(checked::apply_scale_32(0, 1, 63).error().code == qfold::errc::shift_out_of_range);
  CHECK(checked::apply_scale_16(0, 1, 1).error().code == qfold::errc::shift_out_of_range);
  CHECK(checked::apply_scale_16(0, 1, 63).error().code == qfold::errc::shift_out_of_range);
  using qfold::scale_width, qfold::tie_rule;
  // 2^28 has frexp (0.5, 29): multiplier 2^30, shift 31 - 29 = 2. 2^29 would need shift 1.
  CHECK(qfold::compute_multiplier_and_shift(0x1p28, scale_width::bits32, tie_rule::half_to_even)
            .value() == scale_factor{one_30, 2});
  CHECK(qfold::compute_multiplier_and_shift(0x1p29, scale_width::bits32, tie_rule::half_to_even)
            .error()
            .code == qfold::errc::scale_too_large);
  // Just below 2^29 the mantissa rounds up to 2^31, renormalises, and also needs shift 1.
  CHECK(!qfold::compute_multiplier_and_shift(std::nextafter(0x1p29, 0.0), scale_width::bits32,
                                             tie_rule::half_to_even));
  // 16-bit: 2^12 -> (2^14, 2), 2^13 -> shift 1.
  CHECK(qfold::compute_multiplier_and_shift(0x1p12, scale_width::bits16, tie_rule::half_to_even)
            .value() == scale_factor{1 << 14, 2});
  CHECK(!qfold::compute_multiplier_and_shift(0x1p13, scale_width::bits16, tie_rule::half_to_even));
  // Tiny: 2^-40 is (2^30, 70); reduced to shift 62 by 8 bits: (2^22, 62). 2^-100 reaches 0.
  CHECK(qfold::compute_multiplier_and_shift(0x1p-40, scale_width::bits32, tie_rule::half_to_even)
            .value() == scale_factor{1 << 22, 62});
  CHECK(qfold::compute_multiplier_and_shift(0x1p-100, scale_width::bits32, tie_rule::half_to_even)
            .value() == scale_factor{0, 62});
  // MUL: shift 0..63, and only i32 may shift.
  CHECK(checked::mul<std::int32_t>(1, 1, 64).error().code == qfold::errc::shift_out_of_range);
  CHECK(checked::mul<std::int32_t>(1, 1, -1).error().code == qfold::errc::shift_out_of_range);
  CHECK(checked::mul<std::int8_t>(1, 1, 1).error().code == qfold::errc::shift_out_of_range);
  CHECK(checked::mul<std::int16_t>(1, 1, 1).error().code == qfold::errc::shift_out_of_range);
}

TEST_CASE("7.5 multiplier normalisation and ties", "[arith][edge]") {
  using qfold::scale_width, qfold::tie_rule;
  const auto et = [](double s) {
    return qfold::compute_multiplier_and_shift(s, scale_width::bits32, tie_rule::half_to_even)
        .value();
  };
  const auto mlir = [](double s) {
    return qfold::compute_multiplier_and_shift(s, scale_width::bits32,
                                               tie_rule::half_away_from_zero)
        .value();
  };
  // 1 - 2^-33: mantissa * 2^31 = 2^31 - 1/4 rounds to 2^31, renormalised to (2^30, exponent 1).
  CHECK(et(1 - 0x1p-33) == scale_factor{one_30, 30});
  // 0.5 + 2^-32: mantissa * 2^31 = 2^30 + 1/2 exactly: even -> 2^30, away -> 2^30 + 1.
  CHECK(et(0.5 + 0x1p-32) == scale_factor{one_30, 31});
  CHECK(mlir(0.5 + 0x1p-32) == scale_factor{one_30 + 1, 31});
  // 0.5 + 3 * 2^-32: 2^30 + 3/2: both round to 2^30 + 2 (even, and away).
  CHECK(et(0.5 + 3 * 0x1p-32) == scale_factor{one_30 + 2, 31});
  CHECK(mlir(0.5 + 3 * 0x1p-32) == scale_factor{one_30 + 2, 31});
  // TFLite QuantizeMultiplier rounds away too, and writes the exponent as a left shift.
  CHECK(qfold::tflite::quantize_multiplier(0.5 + 0x1p-32).value() ==
        qfold::tflite::quantized_multiplier{one_30 + 1, 0});
  CHECK(qfold::tflite::quantize_multiplier(1 - 0x1p-33).value() ==
        qfold::tflite::quantized_multiplier{one_30, 1});
}

TEST_CASE("7.6 int48 accumulators use the 16-bit multiplier", "[arith][edge]") {
  // scale32 with i48 input is an ERROR_IF; without it the full int48 range is accepted.
  CHECK(
      qfold::validate(qfold::rescale_attributes{.input_type = qfold::int_type::i48}).error().code ==
      qfold::errc::illegal_attributes);
  const qfold::rescale_attributes a{
      .input_type = qfold::int_type::i48, .output_type = qfold::int_type::i32, .scale32 = false};
  // (2^47 - 1) * 2^14 / 2^30 = 2^31 - 2^-16 -> rounds to 2^31: outside int32 (REQUIRE).
  CHECK(checked::rescale_value(a, {1 << 14, 30}, qfold::int48_max).error().code ==
        qfold::errc::result_out_of_range);
  // -2^47 * 2^14 / 2^30 = -2^31 exactly: fits.
  CHECK(checked::rescale_value(a, {1 << 14, 30}, qfold::int48_min).value() == i32min);
  CHECK(checked::apply_scale_16(qfold::int48_max + 1, 1, 2).error().code ==
        qfold::errc::value_out_of_range);
}

TEST_CASE("7.7 zero points: types, zero extension, output_zp overflow, unsigned clamp",
          "[arith][edge]") {
  using qfold::int_type;
  const scale_factor unit{one_30, 30};
  // uint8 in (zp 128) -> int8 out: 0 -> -128, 255 -> 127.
  const qfold::rescale_attributes u8_to_i8{.input_unsigned = true, .input_zp = 128};
  CHECK(qfold::rescale_value(u8_to_i8, unit, 0) == -128);
  CHECK(qfold::rescale_value(u8_to_i8, unit, 255) == 127);
  // uint16 zero point must be 0 or 32768.
  qfold::rescale_attributes u16{.input_type = int_type::i16,
                                .output_type = int_type::i16,
                                .input_unsigned = true,
                                .input_zp = 32768};
  CHECK(qfold::rescale_value(u16, unit, 0) == -32768);
  CHECK(qfold::rescale_value(u16, unit, 65535) == 32767);
  u16.input_zp = 1;
  CHECK(qfold::validate(u16).error().code == qfold::errc::illegal_zero_point);
  // Signed i16 and i32 zero points must be 0; i8 ones must lie in the type.
  CHECK(qfold::validate(qfold::rescale_attributes{.input_type = int_type::i16, .input_zp = 1})
            .error()
            .code == qfold::errc::illegal_zero_point);
  CHECK(qfold::validate(qfold::rescale_attributes{.output_type = int_type::i32, .output_zp = 1})
            .error()
            .code == qfold::errc::illegal_zero_point);
  CHECK(qfold::validate(qfold::rescale_attributes{.input_zp = 128}).error().code ==
        qfold::errc::illegal_zero_point);
  // Unsigned output: a negative result clamps to 0 (reference model), not to 255.
  const qfold::rescale_attributes i16_to_u8{.input_type = int_type::i16, .output_unsigned = true};
  CHECK(qfold::rescale_value(i16_to_u8, unit, -100) == 0);
  CHECK(qfold::rescale_value(i16_to_u8, unit, 300) == 255);
  // output_zp is added with an int32 overflow check: int48 input near the top, zp 100.
  const qfold::rescale_attributes i48_to_i8{
      .input_type = int_type::i48, .scale32 = false, .output_zp = 100};
  CHECK(checked::rescale_value(i48_to_i8, {1 << 14, 14}, i32max).error().code ==
        qfold::errc::result_out_of_range);
  CHECK(checked::rescale_value(i48_to_i8, {1 << 14, 14}, i32max - 100).value() == 127);
}

TEST_CASE("7.8 unsigned combinations", "[arith][edge]") {
  using qfold::int_type;
  const auto code = [](qfold::rescale_attributes a) { return qfold::validate(a).error().code; };
  CHECK(code({.input_unsigned = true, .output_unsigned = true}) == qfold::errc::illegal_attributes);
  CHECK(code({.output_type = int_type::i32, .input_unsigned = true}) ==
        qfold::errc::illegal_attributes);
  CHECK(code({.input_type = int_type::i32, .input_unsigned = true}) ==
        qfold::errc::illegal_attributes);
  CHECK(code({.input_type = int_type::i32, .output_unsigned = true}) ==
        qfold::errc::illegal_attributes);
  CHECK(code({.input_type = int_type::i48, .scale32 = false, .output_unsigned = true}) ==
        qfold::errc::illegal_attributes);
  CHECK(code({.input_type = int_type::i48, .scale32 = false, .input_unsigned = true}) ==
        qfold::errc::illegal_attributes);
  CHECK(code({.output_type = int_type::i32, .output_unsigned = true}) ==
        qfold::errc::illegal_attributes);
  CHECK(code({.output_type = int_type::i48}) == qfold::errc::illegal_type);
  // The legal ones.
  CHECK(qfold::validate(qfold::rescale_attributes{.input_unsigned = true}).has_value());
  CHECK(qfold::validate(qfold::rescale_attributes{.input_type = int_type::i32,
                                                  .output_type = int_type::i16,
                                                  .output_unsigned = false})
            .has_value());
}

TEST_CASE("7.9 per-channel: channel is the last-dimension index", "[arith][edge]") {
  // Two channels: scale 1 and scale 1/2, data laid out [row][channel].
  const std::array<scale_factor, 2> scales{{{one_30, 30}, {one_30, 31}}};
  const std::array<std::int8_t, 6> in{10, 10, -7, -7, 3, 3};
  std::array<std::int8_t, 6> out{};
  const qfold::rescale_attributes a{.per_channel = true};
  REQUIRE(qfold::rescale_array<std::int8_t, std::int8_t>(a, scales, in, out).has_value());
  // channel 1 halves with round half up: 10/2 = 5, -7/2 = -3.5 -> -3, 3/2 = 1.5 -> 2.
  CHECK(out == std::array<std::int8_t, 6>{10, 5, -7, -3, 3, 2});
  // The array length must be a multiple of the channel count, and there must be channels.
  std::array<std::int8_t, 5> odd_out{};
  CHECK(qfold::rescale_array<std::int8_t, std::int8_t>(a, scales, std::span(in).first(5), odd_out)
            .error()
            .code == qfold::errc::size_mismatch);
  CHECK(qfold::rescale_array<std::int8_t, std::int8_t>(a, {}, in, out).error().code ==
        qfold::errc::size_mismatch);
}

TEST_CASE("7.10 MUL: half-up shift with range check, shift 0 wraps", "[arith][edge]") {
  CHECK(qfold::mul<std::int32_t>(46341, 46341) == -2147479015);  // 2147488281 - 2^32
  CHECK(qfold::mul<std::int32_t>(3, 5, 1) == 8);                 // 7.5 -> 8
  CHECK(qfold::mul<std::int32_t>(-3, 5, 1) == -7);               // -7.5 -> -7
  CHECK(qfold::mul<std::int32_t>(i32min, i32min, 62) == 1);      // 2^62 / 2^62 = 1
  // shift 63: 2^62 + 2^62 overflows the spec's int64 sum, so the spec leaves it undefined: refused.
  CHECK(checked::mul<std::int32_t>(i32min, i32min, 63).error().code ==
        qfold::errc::result_out_of_range);
  CHECK(qfold::mul<std::int32_t>(i32min, i32max, 63) ==
        0);  // -(2^62 - 2^31) / 2^63 -> round(-0.49..) = 0
  CHECK(checked::mul<std::int32_t>(i32max, i32max, 1).error().code ==
        qfold::errc::result_out_of_range);
  CHECK(qfold::mul<std::int8_t>(-128, -128) == 16384);
  CHECK(qfold::mul<std::int16_t>(-32768, -32768) == (1 << 30));
}

TEST_CASE("gemmlowp, TFLite and CMSIS-NN requantize differ where documented", "[arith][edge]") {
  // INT32_MIN * INT32_MIN: gemmlowp/TFLite saturate, CMSIS-NN's no_sat wraps.
  CHECK(qfold::gemmlowp::saturating_rounding_doubling_high_mul(i32min, i32min) == i32max);
  CHECK(qfold::cmsis_nn::doubling_high_mult_no_sat(i32min, i32min) == i32min);
  // gemmlowp RDBPOT: ties away from zero. -5/2 -> -3, 5/2 -> 3, -3/4 -> -1, exponent 0 is identity.
  CHECK(qfold::gemmlowp::rounding_divide_by_pot(-5, 1) == -3);
  CHECK(qfold::gemmlowp::rounding_divide_by_pot(5, 1) == 3);
  CHECK(qfold::gemmlowp::rounding_divide_by_pot(-3, 2) == -1);
  CHECK(qfold::gemmlowp::rounding_divide_by_pot(i32min, 0) == i32min);
  // TFLite single rounding and CMSIS-NN single rounding equal TOSA SINGLE_ROUND: -2/4 -> 0.
  CHECK(qfold::tflite::multiply_by_quantized_multiplier(
            -2, one_30, -1, qfold::tflite::rounding::single_round) == 0);
  CHECK(qfold::cmsis_nn::requantize(-2, one_30, -1, qfold::cmsis_nn::rounding::single_round) == 0);
  // ... and the default builds do not: -2/4 = -0.5 -> -1 (second rounding away from zero).
  CHECK(qfold::cmsis_nn::requantize(-2, one_30, -1) == -1);
  // CMSIS-NN single rounding before ece5a38a overflowed its int32 intermediate before TFLite's
  // result does; the current code's int64 intermediate gives (2^62 - 2^32 + 1 + 2^30) >> 31 =
  // 2^31 - 2.
  CHECK(qfold::cmsis_nn::checked::requantize(i32max, i32max, 0,
                                             qfold::cmsis_nn::rounding::single_round,
                                             qfold::cmsis_nn::version::before_ece5a38a)
            .error()
            .code == qfold::errc::result_out_of_range);
  CHECK(*qfold::cmsis_nn::checked::requantize(
            i32max, i32max, 0, qfold::cmsis_nn::rounding::single_round) == 2147483646);
}

TEST_CASE("7.15 INEXACT_ROUND is representable but not bit exact", "[arith][edge]") {
  const qfold::rescale_attributes a{.rounding = qfold::rounding_mode::inexact_round};
  CHECK(qfold::validate(a).has_value());
  CHECK_FALSE(qfold::is_bit_exact(a));
  CHECK(qfold::is_bit_exact(
      qfold::rescale_attributes{.rounding = qfold::rounding_mode::double_round}));
  // Evaluated as SINGLE_ROUND, one of the results the spec's tolerance admits: 3/2 -> 2.
  CHECK(qfold::rescale_value(a, {one_30, 31}, 3) == 2);
}

TEST_CASE("docs/conventions.md worked example: scale 1/4 under every rule", "[arith][docs]") {
  struct row {
    std::int32_t x, tosa_single, tosa_double, tflite_default, tflite_single, cmsis_default;
  };
  // The table of docs/conventions.md, derived by hand there.
  constexpr row rows[] = {{-2, 0, -1, -1, 0, -1},
                          {-1, 0, 0, 0, 0, 0},
                          {1, 0, 1, 1, 0, 1},
                          {2, 1, 1, 1, 1, 1},
                          {6, 2, 2, 2, 2, 2}};
  using qfold::tflite::rounding;
  for (const row& r : rows) {
    CAPTURE(r.x);
    CHECK(qfold::apply_scale_32(r.x, one_30, 32) == r.tosa_single);
    CHECK(qfold::apply_scale_32(r.x, one_30, 32, true) == r.tosa_double);
    CHECK(qfold::tflite::multiply_by_quantized_multiplier(r.x, one_30, -1) == r.tflite_default);
    CHECK(qfold::tflite::multiply_by_quantized_multiplier(
              r.x, one_30, -1, rounding::single_round) == r.tflite_single);
    CHECK(qfold::cmsis_nn::requantize(r.x, one_30, -1) == r.cmsis_default);
    CHECK(qfold::cmsis_nn::requantize(r.x, one_30, -1, qfold::cmsis_nn::rounding::single_round) ==
          r.tflite_single);
  }
  CHECK(qfold::tflite::same_function(rounding::double_round, true, -1));
  CHECK_FALSE(qfold::tflite::same_function(rounding::double_round, false, -1));
  CHECK(qfold::tflite::first_disagreement({one_30, -1}, rounding::double_round, false, -2, 6) ==
        -2);
  CHECK(qfold::tflite::first_disagreement({one_30, -1}, rounding::double_round, true, -1000,
                                          1000) == std::nullopt);
  // Domain: TOSA shift 30 needs |x| < 2^29, TFLite shift 1 only that 2x fits int32.
  CHECK(qfold::tflite::first_disagreement({one_30, 1}, rounding::double_round, true, (1 << 29) - 2,
                                          1 << 29) == (1 << 29));
}
