// Exact merging (exact/merge.hpp): a chain of RESCALEs and TABLEs becomes one RESCALE only when
// that RESCALE equals the chain on every input. The chain is evaluated here step by step by the
// independent reference (tests/reference/spec_reference.hpp); the report's naive merge (what a
// float-tolerance pass such as ExecuTorch's FuseConsecutiveRescalesPass would emit) is evaluated
// by the reference too, so its maximum deviation and first difference are checked, not trusted.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/exact/merge.hpp>
#include <qfold/quant/conventions.hpp>
#include <qfold/table/compose.hpp>
#include <qfold/table/functions.hpp>
#include <qfold/table/generate.hpp>
#include <random>
#include <span>
#include <variant>
#include <vector>

#include "catch_compat.hpp"
#include "exact_support.hpp"
#include "reference/spec_reference.hpp"

namespace {
namespace chain = qfold::chain;
using qfold::domain;
using qfold::int_type;
using i64 = std::int64_t;

// One chain step by the reference (RESCALE, TABLE, clamp are all these chains use).
std::optional<i64> reference_step(const chain::step& s, i64 x) {
  if (const auto* r = std::get_if<chain::rescale>(&s))
    return ref_rescale(r->attributes, r->scale.multiplier, r->scale.shift, x);
  if (const auto* t = std::get_if<chain::table>(&s)) {
    const i64 i = x - t->first_code;
    if (i < 0 || i > 255) return std::nullopt;
    return t->values[static_cast<std::size_t>(i)];
  }
  if (const auto* c = std::get_if<chain::clamp>(&s)) return std::clamp(x, c->lo, c->hi);
  return std::nullopt;
}
std::optional<std::vector<i64>> reference_chain(domain d, std::span<const chain::step> steps) {
  std::vector<i64> y;
  for (i64 x = d.lo; x <= d.hi; ++x) {
    std::optional<i64> v = x;
    for (const auto& s : steps)
      if (v) v = reference_step(s, *v);
    if (!v) return std::nullopt;
    y.push_back(*v);
  }
  return y;
}

// The report, checked against the reference: the merged RESCALE (if any) gives the chain on
// every input; max_deviation and first_difference are those of the naive RESCALE evaluated by
// the reference (an input where the reference refuses it counts as unbounded).
void check_report(domain d, std::span<const i64> y, const qfold::merge_report& r) {
  if (r.merged) CHECK(ref_reproduces(d, y, *r.merged));
  i64 max_dev = 0;
  std::optional<qfold::witness> first;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const i64 x = d.lo + static_cast<i64>(i);
    const auto n =
        ref_rescale(r.naive.attributes, r.naive.scale.multiplier, r.naive.scale.shift, x);
    if (!n) {
      if (!first) first = qfold::witness{x, y[i], 0};
      max_dev = std::numeric_limits<i64>::max();
      continue;
    }
    if (*n != y[i] && !first) first = qfold::witness{x, y[i], *n};
    max_dev = std::max(max_dev, *n > y[i] ? *n - y[i] : y[i] - *n);
  }
  CHECK(r.max_deviation == max_dev);
  REQUIRE(r.first_difference.has_value() == first.has_value());
  if (first) {
    CHECK(r.first_difference->input == first->input);
    CHECK(r.first_difference->expected == first->expected);
    CHECK(r.first_difference->actual == first->actual);
    if (max_dev != std::numeric_limits<i64>::max()) CHECK(first->actual != first->expected);
  }
  CHECK(r.exact() == r.merged.has_value());
}

chain::rescale et_rescale(double scale, int_type in, int_type out, i64 izp, i64 ozp) {
  const auto ms = qref::et_compute_multiplier_and_shift(scale, 32);
  REQUIRE(ms.ok);
  return {{.input_type = in, .output_type = out, .input_zp = izp, .output_zp = ozp},
          {static_cast<std::int32_t>(ms.value.multiplier), ms.value.shift}};
}
double real_scale(const chain::rescale& r) {
  return std::ldexp(static_cast<double>(r.scale.multiplier), -r.scale.shift);
}
}  // namespace

TEST_CASE("exact merge: ExecuTorch's consecutive-rescale fusion, int32 -> int8 -> int32",
          "[exact][merge]") {
  // FuseConsecutiveRescalesPass drops R1 (int32 -> int8) followed by R2 (int8 -> int32) when
  // R1.output_zp == R2.input_zp, R1.input_zp == R2.output_zp and |s1 s2 - 1| < 1e-6. qfold keeps
  // the int8 rounding and clamp in the chain and merges only when the result is identical.
  const qfold::rescale_space i32_to_i32{.input_type = int_type::i32, .output_type = int_type::i32};
  const auto et_condition = [](const chain::rescale& r1, const chain::rescale& r2) {
    return r1.attributes.output_zp == r2.attributes.input_zp &&
           r1.attributes.input_zp == r2.attributes.output_zp &&
           std::abs(real_scale(r1) * real_scale(r2) - 1.0) < 1e-6;
  };

  SECTION("scales 1/256 and 256: the int8 rounding and clamp matter") {
    const std::vector<chain::step> steps{et_rescale(1.0 / 256, int_type::i32, int_type::i8, 0, 0),
                                         et_rescale(256.0, int_type::i8, int_type::i32, 0, 0)};
    REQUIRE(et_condition(std::get<chain::rescale>(steps[0]), std::get<chain::rescale>(steps[1])));
    const domain d{-32768, 32767};  // a window of int32 accumulator values
    const auto y = reference_chain(d, steps);
    REQUIRE(y.has_value());
    const auto r = qfold::merge_rescales(d, steps, i32_to_i32);
    REQUIRE(r.has_value());
    check_report(d, *y, *r);
    CHECK_FALSE(r->exact());  // 256 round(x / 256) is a staircase: no single RESCALE
    CHECK_FALSE(reference_smallest(d, *y, i32_to_i32).has_value());
    // The fused pair is the identity ((2^30, 30): scale exactly 1). It differs from the chain
    // first at x = -32767: round(-32767 / 256) = -128 -> -32768. Largest deviation: x = 32767,
    // where round(127.996) = 128 is clamped to 127 -> 32512, off by 255.
    CHECK(r->naive.scale == qfold::scale_factor{1 << 30, 30});
    REQUIRE(r->first_difference.has_value());
    CHECK(r->first_difference->input == -32767);
    CHECK(r->first_difference->expected == -32768);
    CHECK(r->first_difference->actual == -32767);
    CHECK(r->max_deviation == 255);
  }

  SECTION("a scale product within 1e-6 of 1 but not 1") {
    const std::vector<chain::step> steps{
        et_rescale(1.0 / 255.9999, int_type::i32, int_type::i8, 3, 0),
        et_rescale(255.9999 * (1 + 4e-7), int_type::i8, int_type::i32, 0, 3)};
    // (int32 zero points must be 0: a TOSA ERROR_IF. The chain is refused at the first input.)
    const auto bad = qfold::merge_rescales(domain{-10, 10}, steps, i32_to_i32);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == qfold::errc::illegal_zero_point);
    CHECK(bad.error().index == 0);
    const std::vector<chain::step> legal{
        et_rescale(1.0 / 255.9999, int_type::i32, int_type::i8, 0, 0),
        et_rescale(255.9999 * (1 + 4e-7), int_type::i8, int_type::i32, 0, 0)};
    REQUIRE(et_condition(std::get<chain::rescale>(legal[0]), std::get<chain::rescale>(legal[1])));
    const domain d{-20000, 20000};
    const auto y = reference_chain(d, legal);
    REQUIRE(y.has_value());
    const auto r = qfold::merge_rescales(d, legal, i32_to_i32);
    REQUIRE(r.has_value());
    check_report(d, *y, *r);
    CHECK_FALSE(r->exact());
    CHECK(r->max_deviation >= 1);
    CHECK(r->max_deviation <= 128);  // rounding to a multiple of ~256
  }

  SECTION("scales 2 and 1/2 over inputs that fit int8 after doubling: provably identical") {
    // x in -64..63: 2x in -128..126 is exact in int8 (no rounding, no clamp); halving it back is
    // exact. The chain is the identity, and so is the fused pair.
    const std::vector<chain::step> steps{et_rescale(2.0, int_type::i32, int_type::i8, 0, 0),
                                         et_rescale(0.5, int_type::i8, int_type::i32, 0, 0)};
    REQUIRE(et_condition(std::get<chain::rescale>(steps[0]), std::get<chain::rescale>(steps[1])));
    const domain d{-64, 63};
    const auto y = reference_chain(d, steps);
    REQUIRE(y.has_value());
    for (std::size_t i = 0; i < y->size(); ++i) REQUIRE((*y)[i] == d.lo + static_cast<i64>(i));
    const auto r = qfold::merge_rescales(d, steps, i32_to_i32);
    REQUIRE(r.has_value());
    check_report(d, *y, *r);
    CHECK(r->exact());
    CHECK(r->max_deviation == 0);
    CHECK_FALSE(r->first_difference.has_value());
    // One input further, 2 * 64 = 128 is clamped to 127 and halved to 64 (round half up of 63.5):
    // still the identity there. At 65 (130 -> 127 -> 64) it is not: the fused identity is off by
    // one there. Yet the chain is still one RESCALE, a different one: a scale 1 - e with
    // 0.5/65 < e <= 0.5/64 rounds 65 down to 64 and keeps -64..64. Merged, exactly.
    const domain wider{-64, 65};
    const auto yw = reference_chain(wider, steps);
    REQUIRE(yw.has_value());
    const auto rw = qfold::merge_rescales(wider, steps, i32_to_i32);
    REQUIRE(rw.has_value());
    check_report(wider, *yw, *rw);
    REQUIRE(rw->first_difference.has_value());
    CHECK(rw->first_difference->input == 65);
    CHECK(rw->first_difference->expected == 64);
    CHECK(rw->max_deviation == 1);
    REQUIRE(rw->exact());
    const double e = 1.0 - real_scale({rw->merged->attributes, rw->merged->scale});
    CHECK(e > 0.5 / 65);
    CHECK(e <= 0.5 / 64);
    // At 66 (132 -> 127 -> 64) the inputs 64, 65 and 66 all give 64: a step three wide after
    // steps one wide, which floor(linear) cannot make (its step widths differ by at most one).
    const domain widest{-64, 66};
    const auto y2 = reference_chain(widest, steps);
    REQUIRE(y2.has_value());
    const auto r2 = qfold::merge_rescales(widest, steps, i32_to_i32);
    REQUIRE(r2.has_value());
    check_report(widest, *y2, *r2);
    CHECK_FALSE(r2->exact());
    CHECK_FALSE(reference_smallest(widest, *y2, i32_to_i32).has_value());
  }

  SECTION("scale 1 with a zero point: only the int8 clamp can matter") {
    const std::vector<chain::step> steps{et_rescale(1.0, int_type::i32, int_type::i8, 0, 10),
                                         et_rescale(1.0, int_type::i8, int_type::i32, 10, 0)};
    REQUIRE(et_condition(std::get<chain::rescale>(steps[0]), std::get<chain::rescale>(steps[1])));
    // x + 10 fits int8 for x in -138..117: identical there.
    const auto r = qfold::merge_rescales(domain{-138, 117}, steps, i32_to_i32);
    REQUIRE(r.has_value());
    CHECK(r->exact());
    CHECK(r->max_deviation == 0);
    // Over -200..200 the chain is clamp(x, -138, 117): refused; the first difference is at -200
    // (chain -138) and the largest at 200 (chain 117, off by 83).
    const domain d{-200, 200};
    const auto y = reference_chain(d, steps);
    REQUIRE(y.has_value());
    const auto rc = qfold::merge_rescales(d, steps, i32_to_i32);
    REQUIRE(rc.has_value());
    check_report(d, *y, *rc);
    CHECK_FALSE(rc->exact());
    REQUIRE(rc->first_difference.has_value());
    CHECK(rc->first_difference->input == -200);
    CHECK(rc->first_difference->expected == -138);
    CHECK(rc->max_deviation == 83);
  }
}

TEST_CASE("exact merge: random RESCALE then RESCALE chains against the reference",
          "[exact][merge]") {
  std::mt19937_64 gen(31);
  int exact = 0, refused = 0;
  for (int n = 0; n < scaled(300); ++n) {
    // int8 (or uint8) -> mid type -> int8, with zero points, single or double rounding.
    const bool u8 = n % 4 == 3;
    const int_type mid = n % 3 == 0 ? int_type::i8 : n % 3 == 1 ? int_type::i16 : int_type::i32;
    const auto izp = u8 ? pick(gen, 0, 255) : pick(gen, -128, 127);
    const auto mzp = mid == int_type::i8 ? pick(gen, -128, 127) : 0;
    const auto ozp = pick(gen, -128, 127);
    const double span_mid = mid == int_type::i8 ? 256.0 : mid == int_type::i16 ? 65536.0 : 1 << 24;
    const double s1 =
        span_mid / 256.0 * std::exp2(static_cast<double>(pick(gen, -3000, 1000)) / 1000.0);
    const double s2 = (1.0 / s1) * std::exp2(static_cast<double>(pick(gen, -2000, 2000)) / 1000.0);
    chain::rescale r1 = et_rescale(s1, int_type::i8, mid, izp, mzp);
    chain::rescale r2 = et_rescale(s2, mid, int_type::i8, mzp, ozp);
    r1.attributes.input_unsigned = u8;
    if (pick(gen, 0, 1) != 0) r2.attributes.rounding = qfold::rounding_mode::double_round;
    if (n % 5 == 0)
      r2.scale.multiplier = static_cast<std::int32_t>(pick(gen, 1 << 29, (1LL << 31) - 1));
    const std::vector<chain::step> steps{r1, r2};
    const domain d = u8 ? qfold::uint8_domain : qfold::int8_domain;
    const auto y = reference_chain(d, steps);
    if (!y) {  // a step the reference refuses (e.g. apply_scale_32's value range): qfold errors
      CHECK_FALSE(qfold::merge_rescales(d, steps, {}).has_value());
      continue;
    }
    const std::array<i64, 1> izps{izp};
    const qfold::rescale_space space{.input_unsigned = u8, .input_zero_points = izps};
    const auto r = qfold::merge_rescales(d, steps, space);
    REQUIRE(r.has_value());
    check_report(d, *y, *r);
    // The merge exists exactly when the reference search finds a RESCALE of the space.
    const auto best = reference_smallest(d, *y, space);
    CHECK(best.has_value() == r->exact());
    if (best && r->merged) CHECK(best->scale == r->merged->scale);
    // The naive merge: the product of the two real scales through the std::round derivation
    // (MLIR's), input side of R1, output side of R2, single rounding.
    const auto ms = qref::mlir_compute_multiplier_and_shift(real_scale(r1) * real_scale(r2), 32);
    if (ms.ok) {
      CHECK(r->naive.scale.multiplier == ms.value.multiplier);
      CHECK(r->naive.scale.shift == ms.value.shift);
    }
    CHECK(r->naive.attributes.input_zp == izp);
    CHECK(r->naive.attributes.output_zp == ozp);
    CHECK(r->naive.attributes.rounding == qfold::rounding_mode::single_round);
    (r->exact() ? exact : refused)++;
  }
  CHECK(exact > 0);
  CHECK(refused > 0);
}

TEST_CASE("exact merge: TABLE then RESCALE, RESCALE then TABLE, and longer chains",
          "[exact][merge]") {
  const auto tanh = qfold::make_table8<std::int8_t, std::int8_t>(
      qfold::conventions::executorch, qfold::fn::tanh,
      qfold::make_qparams(qfold::dtype::int8, 4.0 / 128, 0),
      qfold::make_qparams(qfold::dtype::int8, 1.0 / 128, 0));
  REQUIRE(tanh.has_value());
  const auto tanh_step = chain::table::from(*tanh);
  chain::table identity{};
  for (std::size_t i = 0; i < 256; ++i) identity.values[i] = static_cast<std::int32_t>(i) - 128;
  const chain::rescale requant = et_rescale(0.7, int_type::i8, int_type::i8, -3, 11);
  const std::array<i64, 1> zero{0}, minus3{-3};
  const qfold::rescale_space space0{.input_zero_points = zero};
  const qfold::rescale_space space3{.input_zero_points = minus3};
  const domain d = qfold::int8_domain;

  const auto run = [&](const std::vector<chain::step>& steps, const qfold::rescale_space& space) {
    const auto y = reference_chain(d, steps);
    REQUIRE(y.has_value());
    const auto r = qfold::merge_rescales(d, steps, space);
    REQUIRE(r.has_value());
    check_report(d, *y, *r);
    CHECK(reference_smallest(d, *y, space).has_value() == r->exact());
    // The 8-bit chain always collapses into one TABLE equal to it on every code.
    const auto t = chain::collapse<std::int8_t, std::int8_t>(steps);
    REQUIRE(t.has_value());
    for (std::size_t i = 0; i < 256; ++i) REQUIRE(t->values[i] == (*y)[i]);
    return *r;
  };

  // TABLE (tanh) then RESCALE: tanh is no RESCALE, nor is it after one more: refused, with the
  // deviation of the end-point RESCALE a tolerance pass might emit.
  const auto a = run({tanh_step, requant}, space0);
  CHECK_FALSE(a.exact());
  CHECK(a.max_deviation > 1);
  // RESCALE then TABLE: likewise.
  const auto b = run({requant, tanh_step}, space3);
  CHECK_FALSE(b.exact());
  // An identity TABLE on either side changes nothing: the merge is the RESCALE's own map.
  const auto c = run({identity, requant}, space3);
  CHECK(c.exact());
  const auto e = run({requant, identity}, space3);
  CHECK(e.exact());
  // A TABLE that is itself a RESCALE (scale 1/2), then a RESCALE: merged when the composition is
  // one RESCALE (the reference search decides in run()).
  chain::table halve{};
  for (std::size_t i = 0; i < 256; ++i)
    halve.values[i] =
        static_cast<std::int32_t>(*ref_rescale({}, 1 << 30, 31, static_cast<i64>(i) - 128));
  const auto f = run({halve, et_rescale(2.0, int_type::i8, int_type::i8, 0, 0)}, space0);
  CHECK_FALSE(f.exact());  // round(x/2) * 2 loses the low bit
  const auto g = run({halve, et_rescale(0.5, int_type::i8, int_type::i8, 0, 0)}, space0);
  // round(round(x/2)/2) is 1 at x = 1, where round(x/4) is 0; and no other RESCALE matches it
  // (run() asks the reference search too).
  CHECK_FALSE(g.exact());
  const auto h = run({et_rescale(0.5, int_type::i8, int_type::i8, 0, 0), halve}, space0);
  CHECK(h.exact() == g.exact());
  // Three RESCALEs through int16 and int32, and a clamp between them.
  const auto i = run({et_rescale(100.0, int_type::i8, int_type::i16, 0, 0),
                      et_rescale(300.0, int_type::i16, int_type::i32, 0, 0),
                      et_rescale(1.0 / 30000, int_type::i32, int_type::i8, 0, 0)},
                     space0);
  CHECK(i.exact());  // x * 100 * 300 / 30000 = x exactly
  // A clamp between them: clamp(100x, -5000, 5000) / 100 = clamp(x, -50, 50) is clamped inside
  // int8, which no int8 RESCALE does; clamping to +-12800 instead clamps nothing.
  const auto j =
      run({et_rescale(100.0, int_type::i8, int_type::i16, 0, 0), chain::clamp{-5000, 5000},
           et_rescale(0.01, int_type::i16, int_type::i8, 0, 0)},
          space0);
  CHECK_FALSE(j.exact());
  const auto k =
      run({et_rescale(100.0, int_type::i8, int_type::i16, 0, 0), chain::clamp{-12800, 12800},
           et_rescale(0.01, int_type::i16, int_type::i8, 0, 0)},
          space0);
  CHECK(k.exact());
}

TEST_CASE("exact merge: chain errors", "[exact][merge][errors]") {
  const std::array<i64, 1> zero{0};
  const qfold::rescale_space space{.input_zero_points = zero};
  chain::table identity{};
  for (std::size_t i = 0; i < 256; ++i) identity.values[i] = static_cast<std::int32_t>(i) - 128;
  // A TABLE over inputs it does not cover: the first such input is reported (index = x - lo).
  const std::vector<chain::step> t{identity};
  const auto r = qfold::merge_rescales(domain{-100, 300}, t, space);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == qfold::errc::value_out_of_range);
  CHECK(r.error().index == 228);  // x = 128
  // Illegal RESCALE attributes: the first input fails.
  const std::vector<chain::step> bad{
      chain::rescale{{.output_type = int_type::i32, .output_zp = 5}, {1 << 30, 30}}};
  const auto rb = qfold::merge_rescales(qfold::int8_domain, bad, space);
  REQUIRE_FALSE(rb.has_value());
  CHECK(rb.error().code == qfold::errc::illegal_zero_point);
  CHECK(rb.error().index == 0);
  // apply_scale_32's value range: shift 8 cannot take |x| >= 128; inputs -200.. fail first at 0.
  const std::vector<chain::step> narrow{
      chain::rescale{{.input_type = int_type::i16, .output_type = int_type::i16}, {256, 8}}};
  const auto rn = qfold::merge_rescales(
      domain{-200, 200}, narrow, {.input_type = int_type::i16, .output_type = int_type::i16});
  REQUIRE_FALSE(rn.has_value());
  CHECK(rn.error().code == qfold::errc::value_out_of_range);
  CHECK(rn.error().index == 0);
  // An empty chain is the identity of the domain; an empty domain is an error (a report over no
  // input would claim a deviation of 0 for nothing).
  const auto id = qfold::merge_rescales(qfold::int8_domain, {}, space);
  REQUIRE(id.has_value());
  CHECK(id->exact());
  const auto none = qfold::merge_rescales(domain{1, 0}, t, space);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code == qfold::errc::empty_range);
}
