// Issue 13's requantize flavours against the independent references (tests/reference/
// kernel_reference.hpp and spec_reference.hpp, 128-bit, written from the upstream code): CMSIS-NN
// current and pre-ece5a38a single rounding, TFLite NEON 4Rows, CMSIS-NN Helium lanes, TFLite
// EMULATE_FLOAT QuantizeMultiplier, ExecuTorch Cortex-M quantize_multiplier_aot, gemmlowp int16
// and SaturatingRoundingMultiplyByPOT, DownScaleInt32ToInt16Multiplier, RESCALE zero-point
// addition, and same_function / first_disagreement between flavours. Exhaustive where the domain
// allows; the worked inputs of docs/conventions.md are asserted here.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/arith/executorch.hpp>
#include <qfold/arith/flavours.hpp>
#include <qfold/arith/gemmlowp.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/arith/scale_derivation.hpp>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "random_values.hpp"
#include "reference/from_qfold.hpp"
#include "reference/kernel_reference.hpp"
#include "reference/spec_reference.hpp"

namespace {
using qfold::errc;
using qfold::lane_overflow;
using qfold::requantize_flavour;
using qfold::tflite::quantized_multiplier;
namespace k = qref::kernel;
constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
constexpr auto i32max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t one_30 = std::int32_t{1} << 30;

using rnd = test_random::source<20261201>;
constexpr auto& uniform = rnd::uniform;
constexpr auto& random_bits = rnd::random_bits;
constexpr auto& random_int32 = rnd::random_int32;
// Multipliers as kernels see them: mostly normalised Q31 values, some anything.
std::int32_t random_multiplier() {
  switch (uniform(0, 5)) {
    case 0:
      return random_int32();
    case 1:
      return static_cast<std::int32_t>(uniform(0, i32max));
    default:
      return static_cast<std::int32_t>(uniform(one_30, i32max));
  }
}

template <class Q, class R>
bool agree(const qfold::result<Q>& q, const qref::Result<R>& r) {
  if (r.ok)
    return q.has_value() && static_cast<std::int64_t>(*q) == static_cast<std::int64_t>(r.value);
  return !q.has_value();
}

// Edge values of x for a shift: around 0, the int32 ends, and where x * 2^n leaves int32.
std::vector<std::int32_t> edge_values(int n) {
  std::vector<std::int32_t> v{0, 1, -1, 2, -2, 3, -3, i32min, i32min + 1, i32max, i32max - 1};
  for (int j = n - 1; j <= n + 1; ++j) {
    if (j < 0 || j > 31) continue;
    const std::int64_t lim = (std::int64_t{1} << (31 - j));
    for (std::int64_t d : {-2, -1, 0, 1}) {
      for (std::int64_t s : {lim + d, -lim + d})
        if (s >= i32min && s <= i32max) v.push_back(static_cast<std::int32_t>(s));
    }
  }
  return v;
}

// ---- the reference value of each flavour -------------------------------------------------------
qref::Result<std::int32_t> reference(requantize_flavour f, std::int32_t x, quantized_multiplier m) {
  using F = requantize_flavour;
  switch (f) {
    case F::tosa_single_round:
    case F::tosa_double_round: {
      const auto r = qref::apply_scale_32(x, m.multiplier, 31 - m.shift, f == F::tosa_double_round);
      return qref::Result<std::int32_t>{r.ok, static_cast<std::int32_t>(r.value), r.kind, r.why};
    }
    case F::tflite_double_round:
      return qref::tflite_multiply_by_quantized_multiplier(x, m.multiplier, m.shift, false);
    case F::tflite_single_round:
      return qref::tflite_multiply_by_quantized_multiplier(x, m.multiplier, m.shift, true);
    case F::tflite_neon_double_round:
      return k::tflite_4rows(x, m.multiplier, m.shift, false);
    case F::tflite_neon_single_round:
      return k::tflite_4rows(x, m.multiplier, m.shift, true);
    case F::cmsis_nn_double_round:
      // qfold refuses shift -31 here (the C code's (1 << 31) - 1 is undefined); so does this.
      if (m.shift == -31)
        return qref::failure<std::int32_t>(qref::Kind::undefined, qref::Why::signed_overflow);
      return qref::cmsis_requantize(x, m.multiplier, m.shift, false);
    case F::cmsis_nn_single_round:
      if (m.shift < -31)
        return qref::failure<std::int32_t>(qref::Kind::not_modelled, qref::Why::shift_out_of_range);
      return k::cmsis_requantize_current(x, m.multiplier, m.shift, true);
    case F::cmsis_nn_single_round_before_ece5a38a:
      if (m.shift < -31)
        return qref::failure<std::int32_t>(qref::Kind::not_modelled, qref::Why::shift_out_of_range);
      return qref::cmsis_requantize(x, m.multiplier, m.shift, true);
    case F::cmsis_nn_mve_double_round:
      return k::cmsis_requantize_mve(x, m.multiplier, m.shift, false, false);
    case F::cmsis_nn_mve_single_round:
      return k::cmsis_requantize_mve(x, m.multiplier, m.shift, true, false);
    case F::cmsis_nn_mve_pred_single_round:
      return k::cmsis_requantize_mve(x, m.multiplier, m.shift, true, true);
  }
  return qref::failure<std::int32_t>(qref::Kind::not_modelled, qref::Why::none);
}

constexpr std::array<requantize_flavour, qfold::requantize_flavour_count> all_flavours{
    requantize_flavour::tosa_single_round,
    requantize_flavour::tosa_double_round,
    requantize_flavour::tflite_double_round,
    requantize_flavour::tflite_single_round,
    requantize_flavour::tflite_neon_double_round,
    requantize_flavour::tflite_neon_single_round,
    requantize_flavour::cmsis_nn_double_round,
    requantize_flavour::cmsis_nn_single_round,
    requantize_flavour::cmsis_nn_single_round_before_ece5a38a,
    requantize_flavour::cmsis_nn_mve_double_round,
    requantize_flavour::cmsis_nn_mve_single_round,
    requantize_flavour::cmsis_nn_mve_pred_single_round,
};
}  // namespace

TEST_CASE("CMSIS-NN single rounding: current (ece5a38a) and pre-fix code vs the reference",
          "[arith][flavours]") {
  using qfold::cmsis_nn::rounding;
  using qfold::cmsis_nn::version;
  namespace cc = qfold::cmsis_nn::checked;
  // The example: 1500000000 * 0.75 = 1125000000 exactly (1610612736 = 0.75 * 2^31).
  CHECK(*cc::requantize(1500000000, 1610612736, 0, rounding::single_round) == 1125000000);
  CHECK(cc::requantize(1500000000, 1610612736, 0, rounding::single_round, version::before_ece5a38a)
            .error()
            .code == errc::result_out_of_range);
  CHECK(qfold::cmsis_nn::requantize(1500000000, 1610612736, 0, rounding::single_round) ==
        1125000000);
  std::size_t compared = 0, typical = 0, refused_before_only = 0;
  const auto check = [&](std::int32_t v, std::int32_t m, std::int32_t s) {
    ++compared;
    const auto now = cc::requantize(v, m, s, rounding::single_round);
    const auto before = cc::requantize(v, m, s, rounding::single_round, version::before_ece5a38a);
    const auto rnow = k::cmsis_requantize_current(v, m, s, true);
    const auto rbefore = qref::cmsis_requantize(v, m, s, true);
    if (!agree(now, rnow) || !agree(before, rbefore)) {
      CAPTURE(v, m, s, rnow.ok, rnow.value, rbefore.ok, rbefore.value);
      FAIL("cmsis_nn::requantize (single rounding) differs from the reference");
    }
    // Wherever the old code defines a value, the fix changes nothing.
    if (before) REQUIRE((now && *now == *before));
    // The double-rounding build does not depend on the version.
    REQUIRE(cc::requantize(v, m, s, rounding::double_round, version::before_ece5a38a).has_value() ==
            cc::requantize(v, m, s, rounding::double_round).has_value());
  };
  for (int s = -31; s <= 30; ++s)
    for (std::int32_t v : edge_values(0))
      for (std::int32_t m : {0, 1, -1, one_30, i32max, i32min, i32min + 1, 1610612736})
        check(v, m, s);
  for (int i = 0; i < 2'000'000; ++i)
    check(random_int32(), random_multiplier(), static_cast<std::int32_t>(uniform(-31, 30)));
  // "Typical": accumulators of every magnitude (a random bit length, then a random value), a
  // normalised Q31 multiplier, shift 0 (scales in [0.5, 1)).
  for (int i = 0; i < 1'000'000; ++i) {
    const auto v = static_cast<std::int32_t>(random_bits(32));
    const auto m = static_cast<std::int32_t>(uniform(one_30, i32max));
    ++typical;
    const bool now = cc::requantize(v, m, 0, rounding::single_round).has_value();
    const bool before =
        cc::requantize(v, m, 0, rounding::single_round, version::before_ece5a38a).has_value();
    REQUIRE(now);  // |v * m / 2^31| < 2^31: the current code defines every such input
    if (!before) ++refused_before_only;
  }
  CHECK(compared > 2'000'000);
  // About 3% of these inputs have |v * m| / 2^30 >= 2^31 - 1 (the pre-fix intermediate): the
  // measured share must be in that neighbourhood.
  CHECK(refused_before_only > typical / 100);  // measured 1.9%
  CHECK(refused_before_only < typical / 10);
  // arm_nn_requantize_s64 still narrows its intermediate: still refused.
  CHECK(qfold::cmsis_nn::checked::requantize_s64(std::int64_t{1} << 46, 32767, 0).error().code ==
        errc::result_out_of_range);
  CHECK_FALSE(qref::cmsis_requantize_s64(std::int64_t{1} << 46, 32767, 0).ok);
}

TEST_CASE("TFLite NEON MultiplyByQuantizedMultiplier4Rows vs the reference", "[arith][flavours]") {
  using qfold::tflite::rounding;
  namespace tc = qfold::tflite::checked;
  std::size_t compared = 0, typical = 0, differs_from_scalar = 0;
  const auto check = [&](std::int32_t x, std::int32_t q, int s) {
    for (bool single : {false, true}) {
      const rounding b = single ? rounding::single_round : rounding::double_round;
      ++compared;
      const auto ours = tc::multiply_by_quantized_multiplier_4rows(x, q, s, b);
      const auto ref = k::tflite_4rows(x, q, s, single);
      if (!agree(ours, ref)) {
        CAPTURE(x, q, s, single, ref.ok, ref.value);
        FAIL("multiply_by_quantized_multiplier_4rows differs from the reference");
      }
      // refuse exactly where the lane's left shift wraps
      const auto refused =
          tc::multiply_by_quantized_multiplier_4rows(x, q, s, b, lane_overflow::refuse);
      const bool wraps = k::vshl_wraps(x, k::tflite_4rows_left_shift(s, single));
      REQUIRE(refused.has_value() == (ours.has_value() && !wraps));
      if (!refused && ours && wraps) REQUIRE(refused.error().code == errc::value_out_of_range);
      // Without a wrap the single-rounding lane is the scalar single rounding.
      if (single && refused) {
        const auto scalar = qref::tflite_multiply_by_quantized_multiplier(x, q, s, true);
        if (scalar.ok) REQUIRE(*refused == scalar.value);
      }
    }
  };
  for (int s = -31; s <= 30; ++s) {
    const int left = s > 0 ? s : 0;
    for (std::int32_t x : edge_values(left + 1))
      for (std::int32_t q : {0, 1, one_30, i32max, 1610612736, -1, i32min}) check(x, q, s);
  }
  for (int i = 0; i < 2'000'000; ++i)
    check(random_int32(), random_multiplier(), static_cast<int>(uniform(-31, 30)));
  // The default build's last rounding is half up where the scalar's is half away from zero.
  CHECK(qfold::tflite::multiply_by_quantized_multiplier_4rows(-2, one_30, -1) == 0);
  CHECK(qfold::tflite::multiply_by_quantized_multiplier(-2, one_30, -1) == -1);
  // Typical: int16-sized accumulators, normalised multipliers, shifts -1..-10.
  for (int i = 0; i < 1'000'000; ++i) {
    const auto x = static_cast<std::int32_t>(uniform(-32768, 32767));
    const auto q = static_cast<std::int32_t>(uniform(one_30, i32max));
    const int s = static_cast<int>(uniform(-10, -1));
    ++typical;
    const auto scalar = qref::tflite_multiply_by_quantized_multiplier(x, q, s, false);
    REQUIRE(scalar.ok);
    if (qfold::tflite::multiply_by_quantized_multiplier_4rows(x, q, s) != scalar.value)
      ++differs_from_scalar;
  }
  CHECK(compared > 4'000'000);
  CHECK(differs_from_scalar > typical / 100);  // measured about 4% (the negative exact ties)
  CHECK(differs_from_scalar < typical / 10);
}

TEST_CASE("CMSIS-NN Helium arm_requantize_mve / _32x4 / _pred lanes vs the reference",
          "[arith][flavours]") {
  using qfold::cmsis_nn::rounding;
  namespace cc = qfold::cmsis_nn::checked;
  std::size_t compared = 0;
  const auto check = [&](std::int32_t v, std::int32_t m, std::int32_t s) {
    for (bool single : {false, true}) {
      const rounding b = single ? rounding::single_round : rounding::double_round;
      ++compared;
      const auto mve = cc::requantize_mve(v, m, s, b);
      const auto x4 = cc::requantize_mve_32x4(v, m, s, b);
      const auto pred = cc::requantize_mve_pred(v, m, s, b);
      const auto rmve = k::cmsis_requantize_mve(v, m, s, single, false);
      const auto rx4 = k::cmsis_requantize_mve_32x4(v, m, s, single);
      const auto rpred = k::cmsis_requantize_mve(v, m, s, single, true);
      if (!agree(mve, rmve) || !agree(x4, rx4) || !agree(pred, rpred)) {
        CAPTURE(v, m, s, single, rmve.value, rx4.value, rpred.value);
        FAIL("cmsis_nn MVE lanes differ from the reference");
      }
      const bool wraps = k::vshl_wraps(v, k::cmsis_mve_left_shift(s, single));
      const auto refused = cc::requantize_mve(v, m, s, b, lane_overflow::refuse);
      REQUIRE(refused.has_value() == (mve.has_value() && !wraps));
      if (refused) {
        // Without a wrap the single-rounding lane is the scalar (current) single rounding, and
        // the default-build lane the scalar double rounding (saturating at INT32_MIN^2).
        const auto scalar = single ? k::cmsis_requantize_current(v, m, s, true)
                                   : qref::tflite_multiply_by_quantized_multiplier(v, m, s, false);
        if (scalar.ok) REQUIRE(*refused == scalar.value);
      }
    }
  };
  for (int s = -31; s <= 30; ++s)
    for (std::int32_t v : edge_values(s > -1 ? s + 1 : 0))
      for (std::int32_t m : {0, 1, -1, one_30, i32max, i32min, 1610612736}) check(v, m, s);
  for (int i = 0; i < 2'000'000; ++i)
    check(random_int32(), random_multiplier(), static_cast<std::int32_t>(uniform(-31, 30)));
  CHECK(compared > 4'000'000);
  // _pred rounds twice in the single-rounding build: 1/4 -> 1/2 -> 1; _mve gives 0.
  CHECK(qfold::cmsis_nn::requantize_mve_pred(1, one_30, -1, rounding::single_round) == 1);
  CHECK(qfold::cmsis_nn::requantize_mve(1, one_30, -1, rounding::single_round) == 0);
  // the wrap: 1500000000 << 1 wraps to -1294967296, * 0.75 = -971225472, / 2 = -485612736.
  CHECK(qfold::cmsis_nn::requantize_mve(1500000000, 1610612736, 0, rounding::single_round) ==
        -485612736);
  CHECK(cc::requantize_mve(1500000000, 1610612736, 0, rounding::single_round, lane_overflow::refuse)
            .error()
            .code == errc::value_out_of_range);
}

TEST_CASE("TFLite QuantizeMultiplier with TFLITE_EMULATE_FLOAT vs the reference",
          "[arith][flavours]") {
  using qfold::tflite::float_impl;
  using qfold::tflite::rounding;
  std::size_t compared = 0, ties = 0;
  const auto check = [&](double d) {
    for (bool single : {false, true}) {
      ++compared;
      const rounding b = single ? rounding::single_round : rounding::double_round;
      const auto ours = qfold::tflite::quantize_multiplier(d, b, float_impl::emulated);
      const auto ref = k::tflite_quantize_multiplier_emulated(d, single);
      const bool refused_by_design = std::isnan(d) || std::isinf(d) || d < 0;
      if (refused_by_design) {
        REQUIRE_FALSE(ours.has_value());
        continue;
      }
      REQUIRE(ref.ok);
      REQUIRE(ours.has_value());
      if (ours->multiplier != ref.value.multiplier || ours->shift != ref.value.left_shift) {
        CAPTURE(d, single, ref.value.multiplier, ref.value.left_shift);
        FAIL("quantize_multiplier (emulated) differs from the reference");
      }
      if (single)
        REQUIRE(qfold::tflite::quantize_multiplier<rounding::single_round, float_impl::emulated>(
                    d) == *ours);
      else
        REQUIRE(qfold::tflite::quantize_multiplier<rounding::double_round, float_impl::emulated>(
                    d) == *ours);
      REQUIRE(*qfold::tflite::checked::quantize_multiplier(d, b, float_impl::emulated) == *ours);
      const auto native = qfold::tflite::quantize_multiplier(d, b);
      if (!(*native == *ours)) ++ties;
    }
  };
  for (int i = 0; i < 1'000'000; ++i) {
    const auto bits =
        static_cast<std::uint64_t>(uniform(0, std::numeric_limits<std::int64_t>::max()));
    double d = std::bit_cast<double>(bits);
    if (i % 3 == 0) {  // an exact tie of the 22 dropped bits
      d = std::bit_cast<double>((bits & ~std::uint64_t{0x3FFFFF}) | 0x200000);
    }
    check(d);
  }
  for (double d :
       {0.0, -0.0, 0.5, 0.5 + 0x1p-32, 1.0 - 0x1p-33, 1.0 - 0x1p-32, 0x1p-31, 0x1p-32, 0x1p-1074,
        0x1p-1022, 1e300, 0x1p30, 0x1p31, -1.0, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()})
    check(d);
  CHECK(compared > 2'000'000);
  CHECK(ties > 100'000);  // each constructed tie rounds down here and up in the native build
  // The worked value: 0.5 + 2^-32 is exactly mantissa * 2^31 = 2^30 + 1/2.
  CHECK(*qfold::tflite::quantize_multiplier(0.5 + 0x1p-32, rounding::double_round,
                                            float_impl::emulated) ==
        quantized_multiplier{one_30, 0});
  CHECK(*qfold::tflite::quantize_multiplier(0.5 + 0x1p-32) == quantized_multiplier{one_30 + 1, 0});
  // docs/conventions.md: 0.5 + 3 * 2^-32 is 2^30 + 3/2: away -> 2^30 + 2, toward zero -> 2^30 + 1.
  CHECK(*qfold::tflite::quantize_multiplier(0.5 + 3 * 0x1p-32) ==
        quantized_multiplier{one_30 + 2, 0});
  CHECK(*qfold::tflite::quantize_multiplier(0.5 + 3 * 0x1p-32, rounding::double_round,
                                            float_impl::emulated) ==
        quantized_multiplier{one_30 + 1, 0});
  CHECK(k::tflite_quantize_multiplier_emulated(0.5 + 3 * 0x1p-32).value ==
        qref::TfliteMulShift{one_30 + 1, 0});
}

TEST_CASE("ExecuTorch Cortex-M quantize_multiplier_aot and the Arm backend's derivation",
          "[arith][flavours]") {
  namespace ec = qfold::executorch::checked;
  std::size_t compared = 0, outside_cmsis = 0;
  const auto check = [&](double d) {
    ++compared;
    const auto ours = ec::cortex_m_quantize_multiplier(d);
    const auto ref = k::cortex_m_quantize_multiplier_aot(d);
    if (std::isnan(d) || std::isinf(d) || d < 0) {
      REQUIRE_FALSE(ours.has_value());
      if (d < 0) REQUIRE(ours.error().code == errc::scale_negative);
      return;
    }
    REQUIRE(ref.ok);
    REQUIRE(ours.has_value());
    if (ours->multiplier != ref.value.multiplier || ours->shift != ref.value.left_shift) {
      CAPTURE(d, ref.value.multiplier, ref.value.left_shift);
      FAIL("cortex_m_quantize_multiplier differs from the reference");
    }
    // CMSIS-NN's arm_nn_requantize range: multiplier > INT32_MIN, shift -31..30 (-30 in the
    // default build, whose shift -31 is undefined C).
    for (auto b :
         {qfold::cmsis_nn::rounding::double_round, qfold::cmsis_nn::rounding::single_round}) {
      const int lo = b == qfold::cmsis_nn::rounding::double_round ? -30 : -31;
      const bool in_range = ref.value.left_shift >= lo && ref.value.left_shift <= 30;
      REQUIRE(qfold::cmsis_nn::accepts(*ours, b) == in_range);
      REQUIRE(ec::cortex_m_quantize_multiplier_for_cmsis_nn(d, b).has_value() == in_range);
      if (!in_range) ++outside_cmsis;
    }
    // Next to the Arm backend's: the same mantissa rounding (half to even), shifts differ by
    // the convention (TOSA right shift = 31 - left shift) while both are in range.
    const auto arm = ec::arm_multiplier_and_shift(d);
    const auto et = qref::et_compute_multiplier_and_shift(d, 32);
    REQUIRE(arm.has_value() == et.ok);
    if (arm) {
      REQUIRE(arm->multiplier == et.value.multiplier);
      REQUIRE(arm->shift == et.value.shift);
      if (d != 0 && arm->shift < 62)
        REQUIRE((arm->multiplier == ours->multiplier && arm->shift == 31 - ours->shift));
    }
  };
  for (int i = 0; i < 1'000'000; ++i) {
    const auto bits =
        static_cast<std::uint64_t>(uniform(0, std::numeric_limits<std::int64_t>::max()));
    double d = std::bit_cast<double>(bits);
    if (i % 3 == 0) d = std::bit_cast<double>((bits & ~std::uint64_t{0x3FFFFF}) | 0x200000);
    if (i % 5 == 0)
      d = std::ldexp(static_cast<double>(uniform(1, 1 << 20)), static_cast<int>(uniform(-80, 40)));
    check(d);
  }
  for (double d :
       {0.0, -0.0, 0.5, 0.5 + 0x1p-32, 0.5 + 0x1p-31, 1.0 - 0x1p-33, 0x1p-31, 0x1p-32, 0x1p-40,
        0x1p-1074, 1e300, 0x1p30, 0x1p31, -1.0, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()})
    check(d);
  CHECK(compared > 1'000'000);
  CHECK(outside_cmsis > 1000);
  // Ties to even (TFLite rounds away): 0.5 + 2^-32 -> 2^30; 0.5 + 3 * 2^-32 -> 2^30 + 2.
  CHECK(qfold::executorch::cortex_m_quantize_multiplier(0.5 + 0x1p-32) ==
        quantized_multiplier{one_30, 0});
  CHECK(qfold::executorch::cortex_m_quantize_multiplier(0.5 + 3 * 0x1p-32) ==
        quantized_multiplier{one_30 + 2, 0});
  // Not flushed: 2^-40 is (2^30, -39), which TFLite flushes to (0, 0) and CMSIS-NN cannot take.
  CHECK(qfold::executorch::cortex_m_quantize_multiplier(0x1p-40) ==
        quantized_multiplier{one_30, -39});
  CHECK(*qfold::tflite::quantize_multiplier(0x1p-40) == quantized_multiplier{0, 0});
  CHECK(ec::cortex_m_quantize_multiplier_for_cmsis_nn(0x1p-40).error().code ==
        errc::shift_out_of_range);
}

TEST_CASE("gemmlowp int16 SRDHM, RDBPOT, SaturatingRoundingMultiplyByPOT: every int16 input",
          "[arith][flavours]") {
  namespace g = qfold::gemmlowp;
  std::size_t pairs = 0;
  // Every (a, b) pair: 2^32 products.
  for (std::int32_t a = -32768; a <= 32767; ++a) {
    const auto a16 = static_cast<std::int16_t>(a);
    for (std::int32_t b = -32768; b <= 32767; ++b) {
      const auto b16 = static_cast<std::int16_t>(b);
      if (g::saturating_rounding_doubling_high_mul(a16, b16) != k::gemmlowp_srdhm16(a16, b16)) {
        CAPTURE(a, b);
        FAIL("int16 SRDHM differs from the reference");
      }
    }
    pairs += 65536;
  }
  CHECK(pairs == std::size_t{1} << 32);
  for (std::int32_t x = -32768; x <= 32767; ++x) {
    const auto x16 = static_cast<std::int16_t>(x);
    for (int e = -2; e <= 33; ++e) {
      const auto ours = g::checked::rounding_divide_by_pot(x16, e);
      const auto ref = k::gemmlowp_rounding_divide_by_pot16(x16, e);
      if (!agree(ours, ref)) {
        CAPTURE(x, e, ref.ok, ref.value);
        FAIL("int16 RDBPOT differs from the reference");
      }
      if (!ours) REQUIRE(ours.error().code == errc::shift_out_of_range);
    }
    for (int e = -33; e <= 17; ++e) {
      const auto ours = g::checked::saturating_rounding_multiply_by_pot(x16, e);
      const auto ref = k::gemmlowp_saturating_rounding_multiply_by_pot(x, e, 16);
      if (!agree(ours, ref)) {
        CAPTURE(x, e, ref.ok, ref.value);
        FAIL("int16 SaturatingRoundingMultiplyByPOT differs from the reference");
      }
    }
  }
  // int32 SaturatingRoundingMultiplyByPOT and the checked int32 RDBPOT: edges and 2M random.
  const auto check32 = [](std::int32_t x, int e) {
    const auto ours = g::checked::saturating_rounding_multiply_by_pot(x, e);
    const auto ref = k::gemmlowp_saturating_rounding_multiply_by_pot(x, e, 32);
    if (!agree(ours, ref)) {
      CAPTURE(x, e, ref.ok, ref.value);
      FAIL("int32 SaturatingRoundingMultiplyByPOT differs from the reference");
    }
    const auto d = g::checked::rounding_divide_by_pot(x, e);
    REQUIRE(agree(d, qref::gemmlowp_rounding_divide_by_pot(x, e)));
  };
  for (int e = -33; e <= 33; ++e)
    for (std::int32_t x : edge_values(e > 0 ? e : 0)) check32(x, e);
  for (int i = 0; i < 2'000'000; ++i) check32(random_int32(), static_cast<int>(uniform(-33, 33)));
  // Hand values: 0x4000 * 0x4000 / 2^15 = 0x2000; -1.5 rounds up to -1 (SRDHM) ...
  CHECK(g::saturating_rounding_doubling_high_mul(std::int16_t{0x4000}, std::int16_t{0x4000}) ==
        0x2000);
  CHECK(g::saturating_rounding_doubling_high_mul(std::int16_t{-32768}, std::int16_t{-32768}) ==
        32767);
  CHECK(g::rounding_divide_by_pot(std::int16_t{-3}, 1) == -2);  // ... RDBPOT away from zero
  // gemmlowp's int16 mask for exponents >= 16 is -1: the result is the sign, not 0.
  CHECK(g::rounding_divide_by_pot(std::int16_t{5}, 20) == 1);
  CHECK(g::rounding_divide_by_pot(std::int16_t{-5}, 20) == -1);
  CHECK(g::saturating_rounding_multiply_by_pot(std::int16_t{20000}, 1) == 32767);
  CHECK(g::saturating_rounding_multiply_by_pot(std::int16_t{-16384}, 1) == -32768);
  CHECK(g::saturating_rounding_multiply_by_pot(std::int32_t{-5}, -1) == -3);
}

TEST_CASE("TFLite DownScaleInt32ToInt16Multiplier vs the reference", "[arith][flavours]") {
  namespace tc = qfold::tflite::checked;
  std::size_t compared = 0;
  const auto check = [&](std::int64_t q) {
    if (q < i32min || q > i32max) return;
    ++compared;
    const auto qi = static_cast<std::int32_t>(q);
    const auto ours = tc::downscale_int32_to_int16_multiplier(qi);
    const auto ref = k::tflite_downscale_int32_to_int16_multiplier(qi);
    if (!agree(ours, ref)) {
      CAPTURE(q, ref.ok, ref.value);
      FAIL("downscale_int32_to_int16_multiplier differs from the reference");
    }
    if (!ours) REQUIRE(ours.error().code == errc::negative_multiplier);
  };
  // Around every rounding tie (k * 2^16 + 2^15) and every multiple of 2^16.
  for (std::int64_t kk = 0; kk <= 32768; ++kk)
    for (std::int64_t d = -2; d <= 2; ++d) check(kk * 65536 + 32768 + d), check(kk * 65536 + d);
  for (std::int64_t q = i32max - 70000; q <= i32max; ++q) check(q);
  for (int i = 0; i < 2'000'000; ++i) check(random_int32());
  CHECK(compared > 2'000'000);
  CHECK(qfold::tflite::downscale_int32_to_int16_multiplier(one_30) == 16384);
  CHECK(qfold::tflite::downscale_int32_to_int16_multiplier(32768) == 1);  // tie rounds up
  CHECK(qfold::tflite::downscale_int32_to_int16_multiplier(32767) == 0);
  CHECK(qfold::tflite::downscale_int32_to_int16_multiplier(i32max) == 32767);
}

TEST_CASE("RESCALE output zero point: TOSA's checked add vs MLIR's wrapping add",
          "[arith][flavours]") {
  using qfold::int_type;
  using qfold::zero_point_add;
  namespace c = qfold::checked;
  // The worked example: int48 input, scale16 (1, 2), output_zp 1: 4 * (2^31 - 1) / 4 = INT32_MAX,
  // + 1 overflows; TOSA refuses, MLIR wraps to INT32_MIN and clamps to -128.
  const qfold::rescale_attributes a{.input_type = int_type::i48, .scale32 = false, .output_zp = 1};
  const qfold::scale_factor s{1, 2};
  const std::int64_t x = 4 * std::int64_t{i32max};
  CHECK(c::rescale_value(a, s, x).error().code == errc::result_out_of_range);
  CHECK(*c::rescale_value(a, s, x, zero_point_add::wrapping) == -128);
  CHECK_FALSE(qref::rescale_as_qfold(a, s, x).ok);
  CHECK(k::mlir_rescale_element(qref::from_qfold(a, s.multiplier, s.shift), x).value == -128);
  CHECK_FALSE(qfold::same_function(a, s, zero_point_add::checked, zero_point_add::wrapping));
  CHECK(qfold::first_disagreement(a, s, zero_point_add::checked, zero_point_add::wrapping) ==
        std::optional<std::int64_t>(x - 2));  // (x - 2) / 4 = INT32_MAX - 0.5 rounds up too
  CHECK(qfold::same_function(a, s, zero_point_add::wrapping, zero_point_add::wrapping));

  // Random attributes: both additions against the two models, and the O(log) first_disagreement
  // against a scan of the window around its answer (and the whole type for 8/16-bit inputs).
  std::size_t compared = 0, differing = 0;
  for (int i = 0; i < 20'000; ++i) {
    qfold::rescale_attributes r;
    const int in = static_cast<int>(uniform(0, 3));
    r.input_type = in == 0   ? int_type::i8
                   : in == 1 ? int_type::i16
                   : in == 2 ? int_type::i32
                             : int_type::i48;
    r.output_type = uniform(0, 1) ? int_type::i8 : int_type::i16;
    r.scale32 = r.input_type != int_type::i48 && uniform(0, 1);
    r.rounding = r.scale32 && uniform(0, 1) ? qfold::rounding_mode::double_round
                                            : qfold::rounding_mode::single_round;
    if (r.input_type == int_type::i8) r.input_zp = uniform(-128, 127);
    if (r.output_type == int_type::i8) r.output_zp = uniform(-128, 127);
    const qfold::scale_factor f{
        static_cast<std::int32_t>(r.scale32 ? uniform(0, i32max) : uniform(0, 32767)),
        static_cast<int>(uniform(2, 40))};
    const qfold::int_range range = r.input_range();
    const auto fd =
        qfold::first_disagreement(r, f, zero_point_add::checked, zero_point_add::wrapping);
    if (fd) ++differing;
    const bool small = r.input_type == int_type::i8 || r.input_type == int_type::i16;
    if (small) {
      REQUIRE(fd == qfold::first_disagreement(r, f, zero_point_add::checked,
                                              zero_point_add::wrapping, range.lo, range.hi));
      REQUIRE_FALSE(fd.has_value());  // 8/16-bit inputs never reach int32's ends
    } else if (fd) {
      REQUIRE(qfold::first_disagreement(r, f, zero_point_add::checked, zero_point_add::wrapping,
                                        *fd - 300, *fd + 300) == fd);
    }
    const auto p = qref::from_qfold(r, f.multiplier, f.shift);
    for (int j = 0; j < 20; ++j) {
      std::int64_t v = uniform(range.lo, range.hi);
      if (fd && j < 5) v = *fd + j - 2;
      if (v < range.lo || v > range.hi) continue;
      ++compared;
      REQUIRE(agree(c::rescale_value(r, f, v), qref::rescale_element(p, v)));
      REQUIRE(agree(c::rescale_value(r, f, v, zero_point_add::wrapping),
                    k::mlir_rescale_element(p, v)));
    }
  }
  CHECK(compared > 300'000);
  CHECK(differing > 100);
}

TEST_CASE(
    "requantize flavours: each against its reference, pairwise first_disagreement exhaustive "
    "over int16",
    "[arith][flavours]") {
  const std::array<quantized_multiplier, 10> grid{{{one_30, -1},
                                                   {one_30, 0},
                                                   {1610612736, -3},
                                                   {i32max, -8},
                                                   {1073741825, -31},
                                                   {1518500250, 2},
                                                   {one_30, 14},
                                                   {i32min, 0},
                                                   {-one_30, 0},
                                                   {1789569707, -15}}};
  std::size_t evaluations = 0, pairs = 0, differing_pairs = 0;
  for (const quantized_multiplier m : grid) {
    // The reference's codes for every int16 input, per flavour (definedness as a flag).
    std::array<std::vector<std::optional<std::int32_t>>, qfold::requantize_flavour_count> codes;
    for (std::size_t f = 0; f < all_flavours.size(); ++f) {
      codes[f].resize(65536);
      for (std::int32_t x = -32768; x <= 32767; ++x) {
        const auto r = reference(all_flavours[f], x, m);
        const auto q = qfold::checked::requantize(all_flavours[f], x, m);
        ++evaluations;
        if (!agree(q, r)) {
          CAPTURE(f, x, m.multiplier, m.shift, r.ok, r.value);
          FAIL("requantize flavour differs from its reference");
        }
        if (r.ok) codes[f][static_cast<std::size_t>(x + 32768)] = r.value;
      }
    }
    for (std::size_t a = 0; a < all_flavours.size(); ++a)
      for (std::size_t b = a + 1; b < all_flavours.size(); ++b) {
        std::optional<std::int32_t> expected;
        for (std::size_t i = 0; i < 65536 && !expected; ++i)
          if (codes[a][i] != codes[b][i]) expected = static_cast<std::int32_t>(i) - 32768;
        const auto got =
            qfold::first_disagreement(all_flavours[a], all_flavours[b], m, -32768, 32767);
        ++pairs;
        if (got != expected) {
          CAPTURE(a, b, m.multiplier, m.shift, expected.value_or(0), got.value_or(0));
          FAIL("first_disagreement differs from the reference's scan");
        }
        REQUIRE(qfold::same_function(all_flavours[a], all_flavours[b], m, -32768, 32767) ==
                !expected.has_value());
        if (expected) ++differing_pairs;
      }
  }
  CHECK(evaluations == grid.size() * 12 * 65536);
  CHECK(pairs == grid.size() * 66);
  CHECK(differing_pairs > 0);
  CHECK(qfold::checked::requantize(static_cast<requantize_flavour>(12), 1, {one_30, 0})
            .error()
            .code == errc::illegal_attributes);
}

// docs/conventions.md, "Requantize flavours side by side": every cell is asserted against the
// reference and qfold, and every pair of flavours differs in at least one column.
TEST_CASE("docs/conventions.md flavour table: worked inputs", "[arith][flavours]") {
  struct column {
    std::int32_t x;
    quantized_multiplier m;
  };
  const std::array<column, 6> cols{{{-2, {one_30, -1}},
                                    {1, {one_30, -1}},
                                    {1500000000, {1610612736, 0}},
                                    {i32min, {i32min, 0}},
                                    {1, {-one_30, 0}},
                                    {one_30, {one_30, 1}}}};
  constexpr std::optional<std::int32_t> no{};
  // Rows in requantize_flavour order; nullopt: refused. Derivations in docs/conventions.md.
  const std::array<std::array<std::optional<std::int32_t>, 6>, 12> table{{
      {0, 0, no, no, no, no},                   // tosa single
      {-1, 1, no, no, no, no},                  // tosa double
      {-1, 1, 1125000000, i32max, 0, no},       // tflite double
      {0, 0, 1125000000, no, no, one_30},       // tflite single
      {0, 1, 1125000000, i32max, 0, -one_30},   // tflite neon double
      {0, 0, -485612736, no, no, 0},            // tflite neon single
      {-1, 1, 1125000000, no, 0, no},           // cmsis double
      {0, 0, 1125000000, no, 0, one_30},        // cmsis single
      {0, 0, no, no, 0, no},                    // cmsis single pre-fix
      {-1, 1, 1125000000, i32max, 0, -one_30},  // mve double
      {0, 0, -485612736, 0, 0, 0},              // mve single
      {0, 1, -485612736, 0, 0, 0},              // mve pred single
  }};
  for (std::size_t f = 0; f < all_flavours.size(); ++f)
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const auto r = reference(all_flavours[f], cols[c].x, cols[c].m);
      const auto q = qfold::checked::requantize(all_flavours[f], cols[c].x, cols[c].m);
      CAPTURE(f, c);
      CHECK(r.ok == table[f][c].has_value());
      if (r.ok && table[f][c]) CHECK(r.value == *table[f][c]);
      CHECK(agree(q, r));
    }
  for (std::size_t a = 0; a < table.size(); ++a)
    for (std::size_t b = a + 1; b < table.size(); ++b) {
      bool differ = false;
      for (std::size_t c = 0; c < cols.size(); ++c) differ = differ || table[a][c] != table[b][c];
      CAPTURE(a, b);
      CHECK(differ);
    }
}

TEST_CASE("contract twins equal their checked forms, bad parameters give named errors",
          "[arith][flavours]") {
  using qfold::scale_width;
  using qfold::tie_rule;
  for (int i = 0; i < 200'000; ++i) {
    const double d = std::ldexp(static_cast<double>(uniform(1, std::int64_t{1} << 53)),
                                static_cast<int>(uniform(-120, -41)));
    for (auto w : {scale_width::bits32, scale_width::bits16})
      for (auto t : {tie_rule::half_to_even, tie_rule::half_away_from_zero}) {
        const auto c = qfold::compute_multiplier_and_shift(d, w, t);
        const auto c2 = qfold::checked::compute_multiplier_and_shift(d, w, t);
        REQUIRE(c.has_value() == c2.has_value());
        if (c) REQUIRE(*c2 == *c);
      }
    using W = scale_width;
    using T = tie_rule;
    const auto even32 = qfold::compute_multiplier_and_shift(d, W::bits32, T::half_to_even);
    const auto away16 = qfold::compute_multiplier_and_shift(d, W::bits16, T::half_away_from_zero);
    REQUIRE((even32 && away16));
    REQUIRE(qfold::compute_multiplier_and_shift<W::bits32, T::half_to_even>(d) == *even32);
    REQUIRE(qfold::compute_multiplier_and_shift<W::bits16, T::half_away_from_zero>(d) == *away16);
    REQUIRE(*qfold::checked::compute_multiplier_and_shift<W::bits32, T::half_to_even>(d) ==
            *even32);
    const auto tq = qfold::tflite::quantize_multiplier(d);
    REQUIRE(*qfold::tflite::checked::quantize_multiplier(d) == *tq);
    REQUIRE(*qfold::tflite::checked::quantize_multiplier<>(d) == *tq);
    REQUIRE(qfold::tflite::quantize_multiplier<>(d) == *tq);
  }
  namespace cc = qfold::cmsis_nn::checked;
  namespace tc = qfold::tflite::checked;
  namespace gc = qfold::gemmlowp::checked;
  using qfold::cmsis_nn::rounding;
  const auto bad_lane = static_cast<lane_overflow>(7);
  CHECK(
      cc::requantize(1, one_30, 0, rounding::single_round, static_cast<qfold::cmsis_nn::version>(5))
          .error()
          .code == errc::illegal_attributes);
  CHECK(cc::requantize_mve(1, one_30, 31).error().code == errc::shift_out_of_range);
  CHECK(cc::requantize_mve(1, one_30, -32, rounding::single_round).error().code ==
        errc::shift_out_of_range);
  CHECK(cc::requantize_mve(1, one_30, 0, static_cast<rounding>(4)).error().code ==
        errc::illegal_attributes);
  CHECK(cc::requantize_mve_pred(1, one_30, 0, rounding::single_round, bad_lane).error().code ==
        errc::illegal_attributes);
  CHECK(cc::requantize_mve_32x4(i32max, one_30, 5, rounding::double_round, lane_overflow::refuse)
            .error()
            .code == errc::value_out_of_range);
  CHECK(cc::accepts({i32min, 0}).error().code == errc::multiplier_out_of_range);
  CHECK(cc::accepts({one_30, -31}).error().code == errc::shift_out_of_range);
  CHECK(cc::accepts({one_30, -31}, rounding::single_round).has_value());
  CHECK(cc::accepts({one_30, 31}, rounding::single_round).error().code == errc::shift_out_of_range);
  CHECK(tc::multiply_by_quantized_multiplier_4rows(1, -1, 0, qfold::tflite::rounding::single_round)
            .error()
            .code == errc::negative_multiplier);
  CHECK(tc::multiply_by_quantized_multiplier_4rows(1, one_30, 31).error().code ==
        errc::shift_out_of_range);
  CHECK(tc::multiply_by_quantized_multiplier_4rows(1, one_30, 0,
                                                   qfold::tflite::rounding::double_round, bad_lane)
            .error()
            .code == errc::illegal_attributes);
  CHECK(tc::downscale_int32_to_int16_multiplier(-1).error().code == errc::negative_multiplier);
  CHECK(qfold::tflite::quantize_multiplier(0.5, qfold::tflite::rounding::double_round,
                                           static_cast<qfold::tflite::float_impl>(3))
            .error()
            .code == errc::illegal_attributes);
  CHECK(qfold::tflite::quantize_multiplier(std::numeric_limits<double>::infinity(),
                                           qfold::tflite::rounding::double_round,
                                           qfold::tflite::float_impl::emulated)
            .error()
            .code == errc::scale_infinite);
  CHECK(qfold::executorch::checked::cortex_m_quantize_multiplier(
            std::numeric_limits<double>::quiet_NaN())
            .error()
            .code == errc::scale_nan);
  CHECK(gc::rounding_divide_by_pot(std::int32_t{1}, 32).error().code == errc::shift_out_of_range);
  CHECK(gc::rounding_divide_by_pot(std::int16_t{1}, -1).error().code == errc::shift_out_of_range);
  CHECK(gc::saturating_rounding_multiply_by_pot(std::int16_t{1}, 16).error().code ==
        errc::shift_out_of_range);
  CHECK(gc::saturating_rounding_multiply_by_pot(std::int32_t{1}, -32).error().code ==
        errc::shift_out_of_range);
  CHECK(qfold::checked::rescale_value({}, {one_30, 30}, 1, static_cast<qfold::zero_point_add>(9))
            .error()
            .code == errc::illegal_attributes);
}
