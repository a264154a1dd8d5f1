// RESCALE against the independent reference (tests/reference/spec_reference.hpp): every ERROR_IF
// combination, every int8/uint8/int16/uint16 input for every legal type pair across a grid of
// scales and zero points (element and batch API), and random int32/int48 inputs.
#include <array>
#include <cstdint>
#include <qfold/qfold.hpp>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "reference/from_qfold.hpp"
#include "reference/spec_reference.hpp"

namespace {
using qfold::int_type;
using qfold::rescale_attributes;
using qfold::rounding_mode;
using qfold::scale_factor;

qref::RescaleParams to_ref(const rescale_attributes& a, scale_factor s) {
  return qref::from_qfold(a, s.multiplier, s.shift);
}

constexpr std::array<int_type, 4> all_types{int_type::i8, int_type::i16, int_type::i32,
                                            int_type::i48};
}  // namespace

TEST_CASE("RESCALE validation equals the spec's ERROR_IF list for every combination",
          "[rescale][reference]") {
  const std::array<std::int64_t, 8> zps{0, 1, -1, 127, 128, 255, 32768, -129};
  std::size_t combos = 0, legal = 0;
  for (int_type in : all_types)
    for (int_type out : all_types)
      for (int flags = 0; flags < 8; ++flags)
        for (int rm = 0; rm <= 4; ++rm)
          for (std::int64_t izp : zps)
            for (std::int64_t ozp : zps) {
              const rescale_attributes a{.input_type = in,
                                         .output_type = out,
                                         .scale32 = (flags & 1) != 0,
                                         .rounding = static_cast<rounding_mode>(rm),
                                         .input_unsigned = (flags & 2) != 0,
                                         .output_unsigned = (flags & 4) != 0,
                                         .input_zp = izp,
                                         .output_zp = ozp};
              const qref::RescaleParams p = to_ref(a, {1 << 30, 30});
              // The spec's ERROR_IFs, plus zero points that are not values of their types.
              const bool ref_legal = !qref::rescale_error_if(p).any() &&
                                     qref::representable(p.in_t, p.input_unsigned, izp) &&
                                     qref::representable(p.out_t, p.output_unsigned, ozp);
              ++combos;
              legal += ref_legal ? 1 : 0;
              if (qfold::validate(a).has_value() != ref_legal) {
                CAPTURE(int(in), int(out), flags, rm, izp, ozp);
                FAIL("validate() disagrees with the reference's ERROR_IF list");
              }
            }
  CHECK(combos == 4 * 4 * 8 * 5 * 64);
  CHECK(legal > 0);
}

namespace {
// A grid of scales through both derivations (ExecuTorch's and MLIR's ties), both widths.
std::vector<scale_factor> scale_grid(bool scale32) {
  const double scales[] = {1.0,     0.5,      0.75,      1.0 / 3, 2.5, 1.0 / 255, 100.0,
                           0x1p-20, 0.999999, 1.0000001, 0x1p-40, 0.0, 3e-3,      0.5 + 0x1p-32};
  std::vector<scale_factor> grid;
  for (double s : scales)
    for (auto tie : {qfold::tie_rule::half_to_even, qfold::tie_rule::half_away_from_zero})
      if (auto f = qfold::compute_multiplier_and_shift(
              s, scale32 ? qfold::scale_width::bits32 : qfold::scale_width::bits16, tie))
        grid.push_back(*f);
  grid.push_back({0, 2});
  grid.push_back({scale32 ? 2147483647 : 32767, 2});  // huge: saturates
  grid.push_back({scale32 ? 2147483647 : 32767, 62});
  return grid;
}

template <class In, class Out>
void check_exhaustive(const rescale_attributes& a, std::size_t& compared) {
  std::vector<In> in;
  const auto range = a.input_range();
  for (std::int64_t x = range.lo; x <= range.hi; ++x) in.push_back(static_cast<In>(x));
  std::vector<Out> out(in.size());
  for (const scale_factor s : scale_grid(a.scale32)) {
    const qref::RescaleParams p = to_ref(a, s);
    std::size_t first_bad = in.size();
    std::vector<std::int64_t> expected(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto r = qref::rescale_element(p, in[i]);
      const auto q = qfold::checked::rescale_value(a, s, in[i]);
      if (r.ok != q.has_value() || (r.ok && r.value != *q)) {
        CAPTURE(int(a.input_type), a.input_unsigned, int(a.output_type), a.output_unsigned,
                int(a.rounding), a.input_zp, a.output_zp, s.multiplier, s.shift, in[i], r.ok,
                r.value, qref::to_string(r.why));
        FAIL("rescale_value differs from the reference");
      }
      if (!r.ok && first_bad == in.size()) first_bad = i;
      expected[i] = r.value;
      ++compared;
    }
    // The batch API: same outputs, or an error at the first element the reference refuses.
    const std::array<scale_factor, 1> one{s};
    const auto batch = qfold::rescale_array<In, Out>(a, one, in, out);
    if (first_bad < in.size()) {
      REQUIRE_FALSE(batch.has_value());
      CHECK(batch.error().index == first_bad);
    } else {
      REQUIRE(batch.has_value());
      for (std::size_t i = 0; i < in.size(); ++i)
        if (out[i] != expected[i]) {
          CAPTURE(s.multiplier, s.shift, in[i], out[i], expected[i]);
          FAIL("rescale_array differs from the reference");
        }
    }
  }
}

template <class In>
void all_outputs(rescale_attributes a, std::size_t& compared) {
  const std::int64_t izps_signed8[] = {0, -128, 127, 5};
  const std::int64_t izps_unsigned8[] = {0, 255, 128};
  const std::int64_t izps_unsigned16[] = {0, 32768};
  std::vector<std::int64_t> izps{0};
  if (a.input_type == int_type::i8)
    izps.assign(a.input_unsigned ? std::begin(izps_unsigned8) : std::begin(izps_signed8),
                a.input_unsigned ? std::end(izps_unsigned8) : std::end(izps_signed8));
  if (a.input_type == int_type::i16 && a.input_unsigned)
    izps.assign(std::begin(izps_unsigned16), std::end(izps_unsigned16));
  for (std::int64_t izp : izps)
    for (rounding_mode rm : {rounding_mode::single_round, rounding_mode::double_round}) {
      a.input_zp = izp;
      a.rounding = rm;
      const auto run = [&](int_type out, bool out_unsigned, std::int64_t ozp, auto tag) {
        a.output_type = out;
        a.output_unsigned = out_unsigned;
        a.output_zp = ozp;
        if (qfold::validate(a)) check_exhaustive<In, decltype(tag)>(a, compared);
      };
      run(int_type::i8, false, 0, std::int8_t{});
      run(int_type::i8, false, -128, std::int8_t{});
      run(int_type::i8, false, 100, std::int8_t{});
      run(int_type::i8, true, 0, std::uint8_t{});
      run(int_type::i8, true, 255, std::uint8_t{});
      run(int_type::i16, false, 0, std::int16_t{});
      run(int_type::i16, true, 32768, std::uint16_t{});
      run(int_type::i32, false, 0, std::int32_t{});
    }
}
}  // namespace

TEST_CASE("RESCALE exhaustive over int8 and uint8 inputs, every output type",
          "[rescale][reference]") {
  std::size_t compared = 0;
  all_outputs<std::int8_t>({.input_type = int_type::i8}, compared);
  all_outputs<std::uint8_t>({.input_type = int_type::i8, .input_unsigned = true}, compared);
  CHECK(compared > 100'000);
}

TEST_CASE("RESCALE exhaustive over int16 and uint16 inputs, every output type",
          "[rescale][reference]") {
  std::size_t compared = 0;
  all_outputs<std::int16_t>({.input_type = int_type::i16}, compared);
  all_outputs<std::uint16_t>({.input_type = int_type::i16, .input_unsigned = true}, compared);
  CHECK(compared > 10'000'000);
}

TEST_CASE("RESCALE int32 and int48 inputs: edges and random values", "[rescale][reference]") {
  std::mt19937_64 gen(7);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen);
  };
  std::size_t compared = 0;
  for (int_type in : {int_type::i32, int_type::i48}) {
    const bool scale32 = in == int_type::i32;
    for (int_type out : {int_type::i8, int_type::i16, int_type::i32})
      for (bool dr : {false, true}) {
        const rescale_attributes a{
            .input_type = in,
            .output_type = out,
            .scale32 = scale32,
            .rounding = dr ? rounding_mode::double_round : rounding_mode::single_round,
            .output_zp = out == int_type::i8 ? 17 : 0};
        if (!qfold::validate(a)) continue;
        const auto range = a.input_range();
        for (const scale_factor s : scale_grid(scale32))
          for (int i = 0; i < 20'000; ++i) {
            const int bits = static_cast<int>(pick(0, in == int_type::i32 ? 32 : 48));
            std::int64_t x =
                i < 8 ? std::array<std::int64_t, 8>{range.lo,
                                                    range.hi,
                                                    0,
                                                    -1,
                                                    1,
                                                    range.lo + 1,
                                                    range.hi - 1,
                                                    int64_t{1} << 30}[static_cast<std::size_t>(i)]
                      : pick(-(std::int64_t{1} << bits) / 2, (std::int64_t{1} << bits) / 2);
            x = x < range.lo ? range.lo : (x > range.hi ? range.hi : x);
            const auto r = qref::rescale_element(to_ref(a, s), x);
            const auto q = qfold::checked::rescale_value(a, s, x);
            ++compared;
            if (r.ok != q.has_value() || (r.ok && r.value != *q)) {
              CAPTURE(int(in), int(out), dr, s.multiplier, s.shift, x, r.ok, r.value,
                      qref::to_string(r.why));
              FAIL("rescale_value differs from the reference");
            }
          }
      }
  }
  CHECK(compared > 1'000'000);
}

TEST_CASE("RESCALE per channel through the batch API equals the reference per element",
          "[rescale][reference]") {
  std::mt19937_64 gen(11);
  const std::size_t channels = 7, rows = 300;
  std::vector<scale_factor> scales;
  for (std::size_t c = 0; c < channels; ++c)
    scales.push_back(
        {static_cast<std::int32_t>(std::uniform_int_distribution<std::int64_t>(0, 2147483647)(gen)),
         static_cast<int>(std::uniform_int_distribution<int>(32, 45)(gen))});
  const rescale_attributes a{.input_type = int_type::i32, .per_channel = true, .output_zp = -3};
  std::vector<std::int32_t> in(channels * rows);
  for (auto& x : in)
    x = static_cast<std::int32_t>(
        std::uniform_int_distribution<std::int64_t>(INT32_MIN, INT32_MAX)(gen));
  std::vector<std::int8_t> out(in.size());
  REQUIRE(qfold::rescale_array<std::int32_t, std::int8_t>(a, scales, in, out).has_value());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto r = qref::rescale_element(to_ref(a, scales[i % channels]), in[i]);
    REQUIRE(r.ok);
    REQUIRE(out[i] == r.value);
  }
  // A channel whose shift makes some element break the value requirement: error at that element.
  scales[3].shift = 20;
  const auto bad = qfold::rescale_array<std::int32_t, std::int8_t>(a, scales, in, out);
  REQUIRE_FALSE(bad.has_value());
  std::size_t first = in.size();
  for (std::size_t i = 3; i < in.size() && first == in.size(); i += channels)
    if (!qref::rescale_element(to_ref(a, scales[3]), in[i]).ok) first = i;
  CHECK(bad.error().index == first);
}
