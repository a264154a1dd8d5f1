// Chain composition: the collapsed table gives, for every input code, exactly what evaluating the
// chain step by step gives, where each step is evaluated by the independent reference
// (tests/reference/spec_reference.hpp), not by qfold.
#include <array>
#include <cstdint>
#include <optional>
#include <qfold/qfold.hpp>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "reference/from_qfold.hpp"
#include "reference/kernel_reference.hpp"
#include "reference/spec_reference.hpp"

namespace {
namespace chain = qfold::chain;

// One step by the reference; nullopt where the reference refuses (REQUIRE, UB, ...).
std::optional<std::int64_t> reference_step(const chain::step& s, std::int64_t x) {
  if (const auto* r = std::get_if<chain::rescale>(&s)) {
    const auto v = qref::rescale_element(
        qref::from_qfold(r->attributes, r->scale.multiplier, r->scale.shift), x);
    return v.ok ? std::optional<std::int64_t>(v.value) : std::nullopt;
  }
  if (const auto* m = std::get_if<chain::mul>(&s)) {
    const auto v = qref::tosa_mul(qref::DType::i32, x, m->constant, m->shift);
    if (!v.ok) return std::nullopt;
    const std::int64_t exact = x * m->constant;
    if (m->shift == 0 && !m->wrap && (exact < INT32_MIN || exact > INT32_MAX)) return std::nullopt;
    return v.value;
  }
  if (const auto* a = std::get_if<chain::add>(&s)) {
    const std::int64_t r = x + a->constant;
    return r < INT32_MIN || r > INT32_MAX ? std::nullopt : std::optional<std::int64_t>(r);
  }
  if (const auto* c = std::get_if<chain::clamp>(&s)) return std::min(std::max(x, c->lo), c->hi);
  if (const auto* t = std::get_if<chain::table>(&s)) {
    const std::int64_t i = x - t->first_code;
    return i < 0 || i > 255 ? std::nullopt
                            : std::optional<std::int64_t>(t->values[static_cast<std::size_t>(i)]);
  }
  if (const auto* q = std::get_if<chain::requantize>(&s)) {
    if (x < INT32_MIN || x > INT32_MAX) return std::nullopt;
    const auto xi = static_cast<std::int32_t>(x);
    using f = chain::requantize::flavour;
    const auto v =
        q->kind == f::tflite_double
            ? qref::tflite_multiply_by_quantized_multiplier(xi, q->multiplier, q->shift, false)
        : q->kind == f::tflite_single
            ? qref::tflite_multiply_by_quantized_multiplier(xi, q->multiplier, q->shift, true)
        : q->kind == f::cmsis_double
            ? qref::cmsis_requantize(xi, q->multiplier, q->shift, false)
            : qref::kernel::cmsis_requantize_current(xi, q->multiplier, q->shift, true);
    return v.ok ? std::optional<std::int64_t>(v.value) : std::nullopt;
  }
  return std::nullopt;  // table16: covered by table_lut_test
}

std::optional<std::int64_t> reference_chain(const std::vector<chain::step>& steps, std::int64_t x) {
  for (const auto& s : steps) {
    const auto v = reference_step(s, x);
    if (!v) return std::nullopt;
    x = *v;
  }
  return x;
}

chain::table random_table(std::mt19937& gen) {
  chain::table t;
  for (auto& v : t.values) v = std::uniform_int_distribution<std::int32_t>(-128, 127)(gen);
  return t;
}

// A random chain of the kind a quantized graph holds: rescale int8 -> int32, MUL by a constant,
// ADD, requantize back to int8 through one of the flavours, clamp, optionally a table.
std::vector<chain::step> random_chain(std::mt19937& gen) {
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen);
  };
  std::vector<chain::step> steps;
  const auto izp = static_cast<std::int32_t>(pick(-128, 127));
  steps.push_back(chain::rescale{
      {.output_type = qfold::int_type::i32, .input_zp = izp},
      {static_cast<std::int32_t>(pick(1 << 30, (1LL << 31) - 1)), static_cast<int>(pick(20, 31))}});
  steps.push_back(chain::mul{static_cast<std::int32_t>(pick(-40000, 40000)),
                             static_cast<int>(pick(0, 1) * pick(0, 12)), pick(0, 1) != 0});
  steps.push_back(chain::add{static_cast<std::int32_t>(pick(-100000, 100000))});
  switch (pick(0, 2)) {
    case 0:
      steps.push_back(
          chain::rescale{{.input_type = qfold::int_type::i32,
                          .rounding = pick(0, 1) != 0 ? qfold::rounding_mode::double_round
                                                      : qfold::rounding_mode::single_round,
                          .output_zp = static_cast<std::int32_t>(pick(-128, 127))},
                         {static_cast<std::int32_t>(pick(1 << 30, (1LL << 31) - 1)),
                          static_cast<int>(pick(32, 45))}});
      break;
    default: {
      const auto kind = static_cast<chain::requantize::flavour>(pick(0, 3));
      steps.push_back(chain::requantize{static_cast<std::int32_t>(pick(1 << 30, (1LL << 31) - 1)),
                                        static_cast<int>(pick(-14, -1)), kind});
      steps.push_back(chain::add{static_cast<std::int32_t>(pick(-128, 127))});
      steps.push_back(chain::clamp{-128, 127});
    }
  }
  if (pick(0, 1) != 0) steps.push_back(random_table(gen));
  return steps;
}
}  // namespace

TEST_CASE("collapse: 2,000 random int8 chains equal the step-by-step reference on every code",
          "[table][compose]") {
  std::mt19937 gen(5);
  int collapsed = 0, refused = 0;
  for (int n = 0; n < 2000; ++n) {
    const auto steps = random_chain(gen);
    std::optional<std::size_t> first_bad;
    std::array<std::int64_t, 256> expected{};
    for (int i = 0; i < 256; ++i) {
      const auto v = reference_chain(steps, i - 128);
      const bool fits = v && *v >= -128 && *v <= 127;
      if (!fits && !first_bad) first_bad = static_cast<std::size_t>(i);
      expected[static_cast<std::size_t>(i)] = v.value_or(0);
    }
    const auto t = chain::collapse<std::int8_t, std::int8_t>(steps);
    if (first_bad) {
      REQUIRE_FALSE(t.has_value());
      CHECK(t.error().index == *first_bad);
      ++refused;
      continue;
    }
    REQUIRE(t.has_value());
    for (std::size_t i = 0; i < 256; ++i) REQUIRE(t->values[i] == expected[i]);
    ++collapsed;
  }
  CHECK(collapsed > 500);  // both outcomes must be exercised
  CHECK(refused > 50);
}

TEST_CASE("collapse: table after table, and uint8 input", "[table][compose]") {
  std::mt19937 gen(9);
  const chain::table a = random_table(gen), b = random_table(gen);
  const std::vector<chain::step> steps{a, b};
  const auto t = chain::collapse<std::int8_t, std::int8_t>(steps);
  REQUIRE(t.has_value());
  for (int code = -128; code <= 127; ++code) {
    const auto mid = a.values[static_cast<std::size_t>(code + 128)];
    CHECK((*t)(static_cast<std::int8_t>(code)) == b.values[static_cast<std::size_t>(mid + 128)]);
  }
  // uint8 -> int8: RESCALE with input zp 128 and scale 1 is code - 128.
  const std::vector<chain::step> u{
      chain::rescale{{.input_unsigned = true, .input_zp = 128}, {1 << 30, 30}}};
  const auto tu = chain::collapse<std::uint8_t, std::int8_t>(u);
  REQUIRE(tu.has_value());
  for (int code = 0; code <= 255; ++code)
    CHECK((*tu)(static_cast<std::uint8_t>(code)) == code - 128);
}

TEST_CASE("collapse_int16: exact chains pass, inexact ones report the error and refuse",
          "[table][compose]") {
  // y = x / 2 rounded: linear with a rounding step -> inexact at some codes, reported exactly.
  const std::vector<chain::step> half{chain::rescale{
      {.input_type = qfold::int_type::i16, .output_type = qfold::int_type::i16}, {1 << 30, 31}}};
  const auto fit = chain::collapse_int16(half, false);
  REQUIRE(fit.has_value());
  std::int64_t max_err = 0;
  for (std::int32_t x = -32768; x <= 32767; ++x) {
    const std::int64_t want = *reference_chain(half, x);
    const std::int64_t got = qfold::tflite_lookup(fit->table, static_cast<std::int16_t>(x));
    max_err = std::max(max_err, std::abs(want - got));
  }
  CHECK(fit->max_error == max_err);
  CHECK(chain::collapse_int16(half, true).error().code ==
        (max_err == 0 ? qfold::errc{} : qfold::errc::not_exact));
  // An integer-affine map a*x + b is exact (knot slope 128a, lookup base + a*frac) when every
  // knot fits int16, including the virtual knot at 32768: true for a constant; for y = -x - 1
  // that knot would be -32769, so it is clamped and the last segment bends.
  const std::vector<chain::step> constant{chain::mul{0, 0}, chain::add{7}};
  const auto c = chain::collapse_int16(constant, true);
  REQUIRE(c.has_value());
  CHECK(c->exact());
  CHECK(c->table.values[512] == 7);
  const std::vector<chain::step> negate{chain::mul{-1, 0}, chain::add{-1}};
  const auto n = chain::collapse_int16(negate, false);
  REQUIRE(n.has_value());
  CHECK(n->max_error == 1);          // only the last segment, bent by the clamped virtual knot
  CHECK(n->first_mismatch > 32640);  // in the last segment
  CHECK(chain::collapse_int16(negate, true).error().code == qfold::errc::not_exact);
  // A map whose knots leave int16 is refused outright.
  const std::vector<chain::step> steep{chain::mul{4, 0}};
  CHECK(chain::collapse_int16(steep, false).error().code == qfold::errc::value_out_of_range);
}
