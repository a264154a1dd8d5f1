// qfold's arith layer against the independent reference in tests/reference/spec_reference.hpp
// (128-bit, written from the TOSA spec, TFLite, gemmlowp, CMSIS-NN, ExecuTorch and MLIR sources
// without reading qfold). Millions of random inputs plus every edge; exhaustive where the domain
// allows. Rule everywhere: the reference defines a result => qfold gives the same one; the
// reference has a REQUIRE / assert / undefined behaviour => qfold returns an error.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/cmsis_nn.hpp>
#include <qfold/arith/gemmlowp.hpp>
#include <qfold/arith/mul.hpp>
#include <qfold/arith/reciprocal_scale.hpp>
#include <qfold/arith/scale_derivation.hpp>
#include <qfold/arith/tflite.hpp>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "random_values.hpp"
#include "reference/kernel_reference.hpp"
#include "reference/spec_reference.hpp"

namespace {
namespace checked = qfold::checked;
using qfold::errc;
constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
constexpr auto i32max = std::numeric_limits<std::int32_t>::max();

using rnd = test_random::source<20261130>;
constexpr auto& rng = rnd::rng;
constexpr auto& uniform = rnd::uniform;
constexpr auto& random_bits = rnd::random_bits;
constexpr auto& random_int32 = rnd::random_int32;

errc code_of(qref::Why w) {
  switch (w) {
    case qref::Why::multiplier_negative:
      return errc::negative_multiplier;
    case qref::Why::shift_out_of_range:
      return errc::shift_out_of_range;
    case qref::Why::value_out_of_range:
    case qref::Why::value_not_int48:
      return errc::value_out_of_range;
    case qref::Why::result_not_int32:
      return errc::result_out_of_range;
    case qref::Why::divisor_zero:
      return errc::divisor_zero;
    case qref::Why::multiplier_overflows_int32:
    case qref::Why::multiplier_not_int16:
      return errc::multiplier_out_of_range;
    default:
      return errc{};
  }
}

// Same verdict and value; with `codes`, also the same error code.
template <class Q, class R>
bool agree(const qfold::result<Q>& q, const qref::Result<R>& r, bool codes = false) {
  if (r.ok)
    return q.has_value() && static_cast<std::int64_t>(*q) == static_cast<std::int64_t>(r.value);
  return !q.has_value() && (!codes || q.error().code == code_of(r.why));
}
}  // namespace

TEST_CASE("apply_scale_32: every shift's edges and ties, and 4M random inputs",
          "[arith][reference]") {
  std::size_t checked_count = 0;
  const auto check = [&](std::int64_t v, std::int64_t m, int s, bool dr) {
    if (v < i32min || v > i32max || m < i32min || m > i32max) return;
    const auto q =
        checked::apply_scale_32(static_cast<std::int32_t>(v), static_cast<std::int32_t>(m), s, dr);
    const auto r = qref::apply_scale_32(v, m, s, dr);
    ++checked_count;
    if (!agree(q, r, true)) {
      CAPTURE(v, m, s, dr, r.ok, r.value, qref::to_string(r.why));
      FAIL("apply_scale_32 differs from the reference");
    }
  };
  for (int s = 0; s <= 64; ++s) {
    const std::int64_t half = s >= 1 && s <= 62 ? std::int64_t{1} << (s - 1) : 0;
    for (std::int64_t v :
         {-half - 1, -half, -half + 1, half - 1, half, std::int64_t{0}, std::int64_t{1},
          std::int64_t{-1}, std::int64_t{i32min}, std::int64_t{i32max}})
      for (std::int64_t m : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1} << 30,
                             std::int64_t{i32max}, std::int64_t{-1}, std::int64_t{i32min}})
        for (bool dr : {false, true}) check(v, m, s, dr);
    // Products landing exactly on +-0.5 and +-1.5 of the last step: v * 2^j = t * 2^(s-1).
    for (int j = 0; j <= 30 && s >= 2 && s <= 62; ++j)
      for (std::int64_t t : {-3, -1, 1, 3})
        if (s - 1 - j >= 0 && s - 1 - j < 40)
          check(t * (std::int64_t{1} << (s - 1 - j)), std::int64_t{1} << j, s, true),
              check(t * (std::int64_t{1} << (s - 1 - j)), std::int64_t{1} << j, s, false);
  }
  for (int i = 0; i < 4'000'000; ++i)
    check(random_int32(), uniform(0, 15) == 0 ? random_int32() : uniform(0, i32max),
          static_cast<int>(uniform(1, 63)), uniform(0, 1) != 0);
  CHECK(checked_count > 4'000'000);
}

TEST_CASE("apply_scale_16: int48 edges, every shift, and 2M random inputs", "[arith][reference]") {
  const auto check = [](std::int64_t v, std::int16_t m, int s) {
    const auto q = checked::apply_scale_16(v, m, s);
    const auto r = qref::apply_scale_16(v, m, s);
    if (!agree(q, r, true)) {
      CAPTURE(v, m, s, r.ok, r.value, qref::to_string(r.why));
      FAIL("apply_scale_16 differs from the reference");
    }
  };
  for (int s = 0; s <= 64; ++s)
    for (std::int64_t v :
         {qfold::int48_min, qfold::int48_max, qfold::int48_min - 1, qfold::int48_max + 1,
          std::int64_t{0}, std::int64_t{-1}, std::int64_t{1} << 40, std::int64_t{i32min}})
      for (std::int16_t m : {std::int16_t{0}, std::int16_t{1}, std::int16_t{1 << 14},
                             std::int16_t{32767}, std::int16_t{-1}})
        check(v, m, s);
  for (int i = 0; i < 2'000'000; ++i)
    check(random_bits(49), static_cast<std::int16_t>(uniform(-64, 32767)),
          static_cast<int>(uniform(1, 63)));
}

TEST_CASE("reciprocal_scale: divisors 1..2^20, around every power of two, and 1M random",
          "[arith][reference]") {
  const auto check = [](std::uint32_t d) {
    const auto q = checked::reciprocal_scale(d);
    const auto r = qref::reciprocal_scale(d);
    const bool same =
        r.ok ? q.has_value() && q->multiplier == r.value.multiplier && q->shift == r.value.shift
             : !q.has_value() && q.error().code == code_of(r.why);
    if (!same) {
      CAPTURE(d, r.ok, qref::to_string(r.why));
      FAIL("reciprocal_scale differs from the reference");
    }
  };
  for (std::uint32_t d = 0; d <= (1u << 20); ++d) check(d);
  for (int k = 20; k <= 32; ++k)
    for (std::int64_t delta = -3; delta <= 3; ++delta) {
      const std::int64_t d = (std::int64_t{1} << k) + delta;
      if (d >= 0 && d <= 0xFFFFFFFF) check(static_cast<std::uint32_t>(d));
    }
  for (int i = 0; i < 1'000'000; ++i) check(static_cast<std::uint32_t>(uniform(0, 0xFFFFFFFF)));
  // The three divisors whose multiplier is exactly 2^31 (found by the reference's author).
  for (std::uint32_t d : {(1u << 30) + 1, (1u << 31) + 1, (1u << 31) + 2})
    CHECK(checked::reciprocal_scale(d).error().code == errc::multiplier_out_of_range);
}

namespace {
// Doubles across every exponent that matters, subnormals included, and exact ties of the
// mantissa rounding at 31 and 15 bits (bits below the kept ones = 100...0).
double random_scale(int width) {
  std::uint64_t bits = rng()();
  switch (uniform(0, 4)) {
    case 0: {  // a tie: the 53-bit significand ends in 1 followed by zeros at the rounding point
      const int drop = 53 - (width == 32 ? 31 : 15);
      const std::uint64_t kept =
          (std::uint64_t{1} << (52 - drop)) | (rng()() & ((std::uint64_t{1} << (52 - drop)) - 1));
      const std::uint64_t sig = (kept << drop) | (std::uint64_t{1} << (drop - 1));
      return std::ldexp(static_cast<double>(sig), static_cast<int>(uniform(-120, 20)) - 52);
    }
    case 1:
      return std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng()),
                        static_cast<int>(uniform(-80, 35)));
    case 2:
      return std::bit_cast<double>(bits & 0x000FFFFFFFFFFFFFull);  // subnormal (or zero)
    default: {
      const std::uint64_t exponent = static_cast<std::uint64_t>(uniform(1023 - 140, 1023 + 40));
      return std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | (exponent << 52));
    }
  }
}
}  // namespace

TEST_CASE("compute_multiplier_and_shift equals ExecuTorch (half even) and MLIR (half away)",
          "[arith][reference]") {
  using qfold::scale_width, qfold::tie_rule;
  const auto check = [](double s, int width) {
    const auto w = width == 32 ? scale_width::bits32 : scale_width::bits16;
    const auto et = qfold::compute_multiplier_and_shift(s, w, tie_rule::half_to_even);
    const auto mlir = qfold::compute_multiplier_and_shift(s, w, tie_rule::half_away_from_zero);
    const auto ret = qref::et_compute_multiplier_and_shift(s, width);
    const auto rmlir = qref::mlir_compute_multiplier_and_shift(s, width);
    const auto same = [](const qfold::result<qfold::scale_factor>& q,
                         const qref::Result<qref::MulShift>& r) {
      return r.ok
                 ? q.has_value() && q->multiplier == r.value.multiplier && q->shift == r.value.shift
                 : !q.has_value();
    };
    // MLIR returns negative multipliers for negative scales; qfold refuses them (as ExecuTorch
    // does).
    const bool mlir_ok = std::signbit(s) && s != 0 ? !mlir.has_value() : same(mlir, rmlir);
    if (!same(et, ret) || !mlir_ok) {
      CAPTURE(s, width, ret.ok, rmlir.ok);
      FAIL("multiplier/shift derivation differs from the reference");
    }
  };
  for (int width : {32, 16}) {
    for (double s : {0.0,
                     -0.0,
                     1.0,
                     0.5,
                     0.5 + 0x1p-32,
                     1 - 0x1p-33,
                     1 - 3 * 0x1p-32,
                     0x1p28,
                     0x1p29,
                     0x1p12,
                     0x1p13,
                     std::nextafter(0x1p29, 0.0),
                     std::nextafter(0x1p13, 0.0),
                     0x1p-40,
                     0x1p-62,
                     0x1p-63,
                     5e-324,
                     -1.0,
                     -0x1p-70,
                     std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()})
      check(s, width);
    for (int i = 0; i < 500'000; ++i) check(random_scale(width), width);
  }
}

TEST_CASE("TFLite QuantizeMultiplier in both builds", "[arith][reference]") {
  using qfold::tflite::rounding;
  const auto check = [](double s) {
    for (bool single : {false, true}) {
      const auto q = qfold::tflite::quantize_multiplier(
          s, single ? rounding::single_round : rounding::double_round);
      const auto r = qref::tflite_quantize_multiplier(s, single);
      // TFLite gives meaningless (negative) multipliers for negative scales; qfold refuses them.
      const bool same = std::signbit(s) && s != 0 ? !q.has_value()
                        : r.ok ? q.has_value() && q->multiplier == r.value.multiplier &&
                                     q->shift == r.value.left_shift
                               : !q.has_value();
      if (!same) {
        CAPTURE(s, single, r.ok);
        FAIL("quantize_multiplier differs from the reference");
      }
    }
  };
  for (double s :
       {0.0, -0.0, 1.0, 0.5 + 0x1p-32, 0x1p-32, 0x1p-33, 0x1p30, 0x1p31, -(1 - 0x1p-33),
        std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    check(s);
  for (int i = 0; i < 500'000; ++i) check(random_scale(32));
}

TEST_CASE("TFLite MultiplyByQuantizedMultiplier, both builds and the int64 overload",
          "[arith][reference]") {
  using qfold::tflite::rounding;
  // Shift 31 is excluded from the value comparison: TFLite defines it only for x in {0, 1}
  // (1 << 31 wraps); qfold refuses the whole shift.
  for (int i = 0; i < 2'000'000; ++i) {
    const std::int32_t x = random_int32();
    const auto q =
        static_cast<std::int32_t>(uniform(0, 31) == 0 ? uniform(i32min, -1) : uniform(0, i32max));
    const int shift = static_cast<int>(uniform(-33, 31));
    for (bool single : {false, true}) {
      const auto ours = qfold::tflite::checked::multiply_by_quantized_multiplier(
          x, q, shift, single ? rounding::single_round : rounding::double_round);
      const auto ref = qref::tflite_multiply_by_quantized_multiplier(x, q, shift, single);
      if (shift == 31) {
        CHECK_FALSE(ours.has_value());
        continue;
      }
      if (!agree(ours, ref)) {
        CAPTURE(x, q, shift, single, ref.ok, ref.value, qref::to_string(ref.why));
        FAIL("multiply_by_quantized_multiplier differs from the reference");
      }
    }
  }
  for (int i = 0; i < 1'000'000; ++i) {
    const std::int64_t x = random_bits(50);
    const auto q = static_cast<std::int32_t>(uniform(0, 15) == 0 ? uniform(0x7FFE0000, i32max)
                                                                 : uniform(-5, i32max));
    const int shift = static_cast<int>(uniform(-33, 9));
    const auto ours = qfold::tflite::checked::multiply_by_quantized_multiplier(x, q, shift);
    const auto ref = qref::tflite_multiply_by_quantized_multiplier_int64(x, q, shift);
    if (!agree(ours, ref)) {
      CAPTURE(x, q, shift, ref.ok, ref.value, qref::to_string(ref.why));
      FAIL("multiply_by_quantized_multiplier(int64) differs from the reference");
    }
  }
}

TEST_CASE("TFLite default build is TOSA DOUBLE_ROUND, single build is SINGLE_ROUND",
          "[arith][reference]") {
  // The claim of qfold::tflite::same_function, checked value by value against the reference:
  // wherever both reference functions define a result they agree exactly as claimed.
  std::size_t compared = 0;
  for (int i = 0; i < 2'000'000; ++i) {
    const std::int32_t x = random_int32();
    const auto q = static_cast<std::int32_t>(uniform(0, i32max));
    const int shift = static_cast<int>(uniform(-31, 29));
    for (bool single : {false, true})
      for (bool dr : {false, true}) {
        const auto tfl = qref::tflite_multiply_by_quantized_multiplier(x, q, shift, single);
        const auto tosa = qref::apply_scale_32(x, q, 31 - shift, dr);
        if (!tfl.ok || !tosa.ok) continue;
        ++compared;
        const bool same = qfold::tflite::same_function(
            single ? qfold::tflite::rounding::single_round : qfold::tflite::rounding::double_round,
            dr, shift);
        if (same && tfl.value != tosa.value) {
          CAPTURE(x, q, shift, single, dr, tfl.value, tosa.value);
          FAIL("same_function claims equality where the references differ");
        }
      }
  }
  CHECK(compared > 4'000'000);
}

TEST_CASE("gemmlowp and CMSIS-NN primitives and requantize", "[arith][reference]") {
  using qfold::cmsis_nn::rounding;
  for (int i = 0; i < 2'000'000; ++i) {
    const std::int32_t a = random_int32(), b = i % 1000 == 0 ? a : random_int32();
    REQUIRE(qfold::gemmlowp::saturating_rounding_doubling_high_mul(a, b) ==
            qref::gemmlowp_srdhm(a, b));
    const auto ns = qref::cmsis_doubling_high_mult_no_sat(a, b);
    REQUIRE(qfold::cmsis_nn::doubling_high_mult_no_sat(a, b) ==
            ns.value);  // wraps where the C narrows
    const int e = static_cast<int>(uniform(0, 31));
    REQUIRE(qfold::gemmlowp::rounding_divide_by_pot(a, e) ==
            qref::gemmlowp_rounding_divide_by_pot(a, e).value);
    // arm_nn_requantize; shift -31 makes CMSIS-NN's C mask (1 << 31) undefined, so it is left out.
    const auto shift = static_cast<std::int32_t>(uniform(-30, 31));
    // The default is the current code (ece5a38a: int64 single-rounding intermediate, modelled
    // in kernel_reference.hpp); spec_reference.hpp's single rounding is the code before it.
    for (bool single : {false, true}) {
      const auto ours = qfold::cmsis_nn::checked::requantize(
          a, b, shift, single ? rounding::single_round : rounding::double_round);
      const auto ref = qref::kernel::cmsis_requantize_current(a, b, shift, single);
      const auto before = qfold::cmsis_nn::checked::requantize(
          a, b, shift, single ? rounding::single_round : rounding::double_round,
          qfold::cmsis_nn::version::before_ece5a38a);
      const auto ref_before = qref::cmsis_requantize(a, b, shift, single);
      if (!agree(ours, ref) || !agree(before, ref_before)) {
        CAPTURE(a, b, shift, single, ref.ok, ref.value, qref::to_string(ref.why), ref_before.ok,
                ref_before.value);
        FAIL("cmsis_nn::requantize differs from the reference");
      }
    }
    const std::int64_t v = random_bits(uniform(0, 3) == 0 ? 63 : 49);
    const auto reduced =
        static_cast<std::int32_t>(uniform(0, 7) == 0 ? random_int32() : uniform(-32768, 32767));
    const auto s64 = static_cast<std::int32_t>(uniform(-51, 16));
    const auto ours = qfold::cmsis_nn::checked::requantize_s64(v, reduced, s64);
    const auto ref = qref::cmsis_requantize_s64(v, reduced, s64);
    if (!agree(ours, ref)) {
      CAPTURE(v, reduced, s64, ref.ok, ref.value, qref::to_string(ref.why));
      FAIL("cmsis_nn::requantize_s64 differs from the reference");
    }
  }
}

TEST_CASE("MUL: every int8 pair, random int16 and int32 with every shift", "[arith][reference]") {
  for (int a = -128; a <= 127; ++a)
    for (int b = -128; b <= 127; ++b)
      REQUIRE(agree(checked::mul(static_cast<std::int8_t>(a), static_cast<std::int8_t>(b)),
                    qref::tosa_mul(qref::DType::i8, a, b, 0)));
  for (int i = 0; i < 1'000'000; ++i) {
    const auto a = static_cast<std::int16_t>(uniform(-32768, 32767)),
               b = static_cast<std::int16_t>(uniform(-32768, 32767));
    const int s = static_cast<int>(uniform(-1, 2));
    REQUIRE(agree(checked::mul(a, b, s), qref::tosa_mul(qref::DType::i16, a, b, s)));
  }
  for (int i = 0; i < 2'000'000; ++i) {
    const std::int32_t a = random_int32(), b = i % 997 == 0 ? i32min : random_int32();
    const int s = static_cast<int>(uniform(-1, 64));
    const auto ours = checked::mul(a, b, s);
    const auto ref = qref::tosa_mul(qref::DType::i32, a, b, s);
    if (!agree(ours, ref)) {
      CAPTURE(a, b, s, ref.ok, ref.value, qref::to_string(ref.why));
      FAIL("mul differs from the reference");
    }
  }
  CHECK_FALSE(checked::mul<std::int32_t>(i32min, i32min, 63).has_value());
  CHECK_FALSE(qref::tosa_mul(qref::DType::i32, i32min, i32min, 63).ok);
}
