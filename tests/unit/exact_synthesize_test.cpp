// Rescale synthesis (exact/synthesize.hpp) against a search that uses only the independent
// reference (tests/reference/spec_reference.hpp): for maps made by random reference RESCALEs, the
// certificate has exactly the smallest shift, and the smallest multiplier at that shift, that any
// RESCALE of the space has; rescale_shifts gives exactly the multipliers that work at each shift.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/exact/synthesize.hpp>
#include <random>
#include <span>
#include <vector>

#include "catch_compat.hpp"
#include "exact_support.hpp"
#include "reference/spec_reference.hpp"

namespace {
using qfold::domain;
using qfold::int_type;
using i64 = std::int64_t;

// Every shift: qfold's multiplier ranges equal the reference search's (both empty, or the same
// interval).
void check_shifts(domain d, std::span<const i64> y, const qfold::rescale_space& space,
                  const qfold::rescale_attributes& a, int from = 2, int to = 62) {
  const bool dr = a.rounding == qfold::rounding_mode::double_round;
  const auto ranges = qfold::rescale_shifts(d, y, space, a.input_zp, a.output_zp, dr);
  CHECK(ranges[0].empty());
  CHECK(ranges[1].empty());
  for (int s = from; s <= to; ++s) {
    const mrange ref = reference_multipliers(d, y, a, s);
    const auto& q = ranges[static_cast<std::size_t>(s)];
    INFO("shift " << s << ": qfold [" << q.lo << ", " << q.hi << "], reference [" << ref.lo << ", "
                  << ref.hi << "]");
    REQUIRE(q.empty() == ref.empty());
    if (!ref.empty()) {
      CHECK(q.lo == ref.lo);
      CHECK(q.hi == ref.hi);
    }
  }
}
}  // namespace

TEST_CASE("exact synthesize: hand-derived certificates", "[exact][synthesize]") {
  const auto cert = [](domain d, const std::vector<i64>& y, const qfold::rescale_space& s) {
    const auto c = qfold::synthesize_rescale(d, y, s);
    REQUIRE(c.has_value());
    CHECK(ref_reproduces(d, y, *c));
    return *c;
  };
  const auto identity8 = qfold::tabulate(qfold::int8_domain, [](i64 x) { return x; });
  // scale32: apply_scale_32 needs -2^(s-1) <= x < 2^(s-1), so s >= 8 for int8; at s = 8,
  // (256 x + 128) >> 8 = x, and 255 gives (-32640 + 128) >> 8 = -127 at x = -128: (256, 8).
  const auto c1 = cert(qfold::int8_domain, identity8, {});
  CHECK(c1.scale == qfold::scale_factor{256, 8});
  CHECK(c1.attributes.rounding == qfold::rounding_mode::single_round);
  CHECK(c1.attributes.input_zp == 0);
  CHECK(c1.attributes.output_zp == 0);
  // scale16 has no value range: (4x + 2) >> 2 = x at s = 2 (m = 5 gives 3 at x = 2).
  CHECK(cert(qfold::int8_domain, identity8, {.scale32 = false}).scale == qfold::scale_factor{4, 2});
  // Round half up of x/2: (128 x + 128) >> 8 at s = 8; 127 gives 0 at x = 1, 129 gives -1 at
  // x = -1. With scale16: (2x + 2) >> 2.
  const auto half = qfold::tabulate(qfold::int8_domain, [](i64 x) { return (x + 1) >> 1; });
  CHECK(cert(qfold::int8_domain, half, {}).scale == qfold::scale_factor{128, 8});
  CHECK(cert(qfold::int8_domain, half, {.scale32 = false}).scale == qfold::scale_factor{2, 2});
  // int16 identity: s >= 16; at 16, m = 65537 still works (32767 * 65537 + 32768 < 32768 * 2^16)
  // and 65536 is the smallest: (65536, 16).
  const auto identity16 = qfold::tabulate(qfold::int16_domain, [](i64 x) { return x; });
  const qfold::rescale_space s16{.input_type = int_type::i16, .output_type = int_type::i16};
  CHECK(cert(qfold::int16_domain, identity16, s16).scale == qfold::scale_factor{65536, 16});
  // uint8 codes to int8 around zero point 128 (the usual u8 -> i8 conversion).
  const auto u8 = qfold::tabulate(qfold::uint8_domain, [](i64 x) { return x - 128; });
  const std::array<i64, 1> z128{128};
  const auto c2 =
      cert(qfold::uint8_domain, u8, {.input_unsigned = true, .input_zero_points = z128});
  CHECK(c2.scale == qfold::scale_factor{256, 8});
  CHECK(c2.attributes.input_zp == 128);
  // A constant: multiplier 0 at the smallest legal shift, the constant as output zero point.
  const auto seven = qfold::tabulate(qfold::int8_domain, [](i64) { return 7; });
  const auto c3 = cert(qfold::int8_domain, seven, {});
  CHECK(c3.scale == qfold::scale_factor{0, 8});
  CHECK(c3.attributes.output_zp == 7);
  // The input zero point outside the domain: nothing pins the output zero point, all 256 are
  // candidates; the reference search over all of them agrees on the smallest (shift, multiplier).
  const qfold::rescale_attributes off{.input_zp = -5, .output_zp = 17};
  std::vector<i64> yo;
  for (i64 x = 20; x <= 60; ++x) yo.push_back(*ref_rescale(off, 1589137899, 32, x));  // 0.37
  const std::array<i64, 1> m5{-5};
  const qfold::rescale_space so{.input_zero_points = m5};
  REQUIRE(output_zero_points(domain{20, 60}, yo, so, -5).size() == 256);
  const auto co = cert(domain{20, 60}, yo, so);
  const auto ro = reference_smallest(domain{20, 60}, yo, so);
  REQUIRE(ro.has_value());
  CHECK(co.scale == ro->scale);
  // Clamped at both ends: 4x clamped to int8 is one RESCALE. At shift 8 the unclamped ends bound
  // m: x = -32 needs -32 m + 128 < -127 * 256 (m >= 1021), x = 31 needs 31 m + 128 < 125 * 256
  // (m <= 1028); the clamped inputs only need to reach the bounds. So (1021, 8), not (1024, 8).
  const auto x4 =
      qfold::tabulate(qfold::int8_domain, [](i64 x) { return std::clamp<i64>(4 * x, -128, 127); });
  CHECK(cert(qfold::int8_domain, x4, {}).scale == qfold::scale_factor{1021, 8});
  // x / 2 in C++ (toward zero) is one RESCALE too: a multiplier just below 2^(s-1) turns the
  // half-up ties of odd x > 0 down and leaves those of odd x < 0 up. At shift 8 no multiplier
  // works (x = 1 needs m < 128, x = -128 needs m >= 128); at shift 9, m = 255 gives
  // floor(x * 255/512 + 1/2) = trunc(x / 2) for every int8 (254 fails at -128, 256 at 1).
  const auto trunc = qfold::tabulate(qfold::int8_domain, [](i64 x) { return x / 2; });
  CHECK(cert(qfold::int8_domain, trunc, {}).scale == qfold::scale_factor{255, 9});
}

TEST_CASE("exact synthesize: rescale_shifts leaves shifts below apply_scale_32's value range empty",
          "[exact][synthesize]") {
  // The int16 identity is (2^s, s) at every shift as a formula, but apply_scale_32 refuses
  // |x| >= 2^(s-1): below 16 no RESCALE exists. With scale16 there is no such requirement.
  const auto identity16 = qfold::tabulate(qfold::int16_domain, [](i64 x) { return x; });
  const qfold::rescale_space s32{.input_type = int_type::i16, .output_type = int_type::i16};
  const auto r32 = qfold::rescale_shifts(qfold::int16_domain, identity16, s32, 0, 0, false);
  for (int s = 0; s < 16; ++s) CHECK(r32[static_cast<std::size_t>(s)].empty());
  CHECK(r32[16].lo == 65536);
  CHECK(r32[16].hi == 65537);
  for (int s = 2; s <= 15; ++s)  // the reference agrees: a REQUIRE fails for some input
    CHECK(reference_multipliers(qfold::int16_domain, identity16,
                                {.input_type = int_type::i16, .output_type = int_type::i16}, s)
              .empty());
  const qfold::rescale_space s16{
      .input_type = int_type::i16, .output_type = int_type::i16, .scale32 = false};
  const auto r16 = qfold::rescale_shifts(qfold::int16_domain, identity16, s16, 0, 0, false);
  CHECK(r16[2].lo == 4);
  CHECK(r16[2].hi == 4);
  CHECK(r16[14].lo == 16384);
  CHECK(r16[15].empty());  // 2^15 does not fit the int16 multiplier
}

TEST_CASE(
    "exact synthesize: random reference RESCALEs get exactly the smallest shift and multiplier",
    "[exact][synthesize]") {
  std::mt19937_64 gen(21);
  int done = 0, int16_maps = 0, double_round = 0, unpinned = 0;
  while (done < scaled(320)) {
    const bool int16_ok = int16_maps < (sanitized ? 1 : 6);
    auto r = make_random_rescale(gen, int16_ok);
    if (!r) continue;
    const bool wide = r->attrs.input_type == int_type::i16 && r->d.size() > 4096;
    ++done;
    if (wide) ++int16_maps;
    const std::array<i64, 1> izp{r->attrs.input_zp};
    const bool dr = r->attrs.rounding == qfold::rounding_mode::double_round || pick(gen, 0, 1) != 0;
    const auto space = space_of(r->attrs, izp, dr && r->attrs.scale32);
    if (output_zero_points(r->d, r->y, space, r->attrs.input_zp).size() > 1) ++unpinned;
    INFO("m " << r->multiplier << " shift " << r->shift << " izp " << r->attrs.input_zp << " ozp "
              << r->attrs.output_zp << " domain " << r->d.lo << ".." << r->d.hi << " scale32 "
              << r->attrs.scale32);
    const auto c = qfold::synthesize_rescale(r->d, r->y, space);
    REQUIRE(c.has_value());
    CHECK(ref_reproduces(r->d, r->y, *c));
    const auto best = reference_smallest(r->d, r->y, space);
    REQUIRE(best.has_value());
    CHECK(c->scale.shift == best->scale.shift);
    CHECK(c->scale.multiplier == best->scale.multiplier);
    CHECK(c->scale.shift <= r->shift);
    if (c->attributes.rounding == qfold::rounding_mode::double_round) {
      ++double_round;
      CHECK(c->scale.shift > 31);  // below 32 DOUBLE_ROUND is SINGLE_ROUND: single is returned
    }
    CHECK(c->attributes.input_zp == r->attrs.input_zp);
    // rescale_shifts for the certificate's candidate: nothing below its shift, its multiplier
    // first at its shift.
    const auto ranges =
        qfold::rescale_shifts(r->d, r->y, space, c->attributes.input_zp, c->attributes.output_zp,
                              c->attributes.rounding == qfold::rounding_mode::double_round);
    for (int s = 2; s < c->scale.shift; ++s) CHECK(ranges[static_cast<std::size_t>(s)].empty());
    CHECK(ranges[static_cast<std::size_t>(c->scale.shift)].lo == c->scale.multiplier);
  }
  CHECK(int16_maps > 0);
  if (!sanitized) CHECK(unpinned > 0);  // some maps leave the output zero point free
  (void)double_round;  // DOUBLE_ROUND rarely beats a smaller single-round shift; see below
}

TEST_CASE("exact synthesize: rescale_shifts equals the reference search at every shift",
          "[exact][synthesize]") {
  std::mt19937_64 gen(22);
  int done = 0;
  while (done < scaled(40)) {
    auto r = make_random_rescale(gen, false);
    if (!r) continue;
    ++done;
    const std::array<i64, 1> izp{r->attrs.input_zp};
    const auto space = space_of(r->attrs, izp, r->attrs.scale32);
    INFO("m " << r->multiplier << " shift " << r->shift << " izp " << r->attrs.input_zp << " ozp "
              << r->attrs.output_zp << " domain " << r->d.lo << ".." << r->d.hi);
    check_shifts(r->d, r->y, space, r->attrs);
    // A near miss: one code changed by one, same candidate: every shift, still exact.
    auto y = r->y;
    const auto k = static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(y.size()) - 1));
    y[k] += y[k] > r->attrs.output_range().lo ? -1 : 1;
    check_shifts(r->d, y, space, r->attrs);
  }
}

TEST_CASE("exact synthesize: double rounding only when allowed, and only where it matters",
          "[exact][synthesize]") {
  // DOUBLE_ROUND at shift 40 with a multiplier whose double-rounded results differ from every
  // single-rounded RESCALE: found when allowed; refused (or matched by a single-round RESCALE
  // that the reference confirms) when not.
  std::mt19937_64 gen(23);
  int needs_double = 0, tried = 0;
  while (needs_double < scaled(8) && tried < 4000) {
    ++tried;
    qfold::rescale_attributes a{.rounding = qfold::rounding_mode::double_round,
                                .input_zp = pick(gen, -128, 127),
                                .output_zp = pick(gen, -20, 20)};
    const int shift = static_cast<int>(pick(gen, 32, 45));
    const i64 m = pick(gen, i64{1} << 29, (i64{1} << 31) - 1) >> std::min(shift - 32, 10);
    std::vector<i64> y;
    for (i64 x = -128; x <= 127; ++x) y.push_back(*ref_rescale(a, m, shift, x));
    const std::array<i64, 1> izp{a.input_zp};
    const qfold::rescale_space single{.allow_double_round = false, .input_zero_points = izp};
    const qfold::rescale_space both{.input_zero_points = izp};
    const auto s = qfold::synthesize_rescale(qfold::int8_domain, y, single);
    const auto ref_single = reference_smallest(qfold::int8_domain, y, single);
    CHECK(s.has_value() == ref_single.has_value());
    if (s) {
      CHECK(s->attributes.rounding == qfold::rounding_mode::single_round);
      CHECK(ref_reproduces(qfold::int8_domain, y, *s));
      continue;
    }
    ++needs_double;
    const auto d = qfold::synthesize_rescale(qfold::int8_domain, y, both);
    REQUIRE(d.has_value());
    CHECK(d->attributes.rounding == qfold::rounding_mode::double_round);
    CHECK(ref_reproduces(qfold::int8_domain, y, *d));
    const auto ref_both = reference_smallest(qfold::int8_domain, y, both);
    REQUIRE(ref_both.has_value());
    CHECK(d->scale == ref_both->scale);
  }
  CHECK(needs_double > 0);
}

TEST_CASE("exact synthesize: int32 inputs on domains far from zero", "[exact][synthesize]") {
  // Restricted int32 domains (accumulators) at both ends of int32 and around zero: |x - zp| up to
  // 2^31, far beyond 8/16-bit codes. The certificate is still the reference's smallest.
  std::mt19937_64 gen(24);
  const i64 n = sanitized ? 1024 : 4096;
  for (const i64 lo : {i64{-2147483648}, i64{2147483647} - n + 1, -n / 2, i64{1} << 30}) {
    for (int k = 0; k < 3; ++k) {
      const domain d{lo, lo + n - 1};
      // int8 outputs only around zero (far out they would all be clamped); int32 outputs with
      // scales 2^-1..2^-7, so the map takes hundreds of values over the domain.
      const int_type out = k == 2 && lo == -n / 2 ? int_type::i8 : int_type::i32;
      const qfold::rescale_attributes a{.input_type = int_type::i32,
                                        .output_type = out,
                                        .rounding = k == 1 ? qfold::rounding_mode::double_round
                                                           : qfold::rounding_mode::single_round};
      const int shift = static_cast<int>(pick(gen, 32, 38));
      const i64 m = pick(gen, i64{1} << 29, (i64{1} << 31) - 1);
      std::vector<i64> y;
      bool ok = true;
      for (i64 x = d.lo; x <= d.hi && ok; ++x) {
        const auto v = ref_rescale(a, m, shift, x);
        ok = v.has_value();
        y.push_back(v.value_or(0));
      }
      REQUIRE(ok);
      const qfold::rescale_space space{.input_type = int_type::i32, .output_type = a.output_type};
      CHECK(y.front() != y.back());
      INFO("domain " << d.lo << ".. m " << m << " shift " << shift << " kind " << k);
      const auto c = qfold::synthesize_rescale(d, y, space);
      REQUIRE(c.has_value());
      CHECK(ref_reproduces(d, y, *c));
      const auto best = reference_smallest(d, y, space);
      REQUIRE(best.has_value());
      CHECK(c->scale == best->scale);
    }
  }
}

TEST_CASE("exact synthesize: refusals and degenerate spaces", "[exact][synthesize][errors]") {
  const qfold::rescale_space s8{};
  const auto line = qfold::tabulate(qfold::int8_domain, [](i64 x) { return x / 2; });
  // Steps of widths 1 and 3 between the two end steps: the steps of floor(linear) differ in width
  // by at most one, so no RESCALE gives 0 (x < 0), 1 (x = 0), 2 (x = 1..3), 3 (x >= 4).
  const auto steps = qfold::tabulate(qfold::int8_domain, [](i64 x) {
    return x < 0 ? 0 : x == 0 ? 1 : x < 4 ? 2 : 3;
  });
  // Falling, leaving the output type, wrong sizes, empty.
  const auto falling = qfold::tabulate(qfold::int8_domain, [](i64 x) { return -x / 2; });
  CHECK_FALSE(qfold::synthesize_rescale(qfold::int8_domain, falling, s8).has_value());
  const auto wide = qfold::tabulate(qfold::int8_domain, [](i64 x) { return 2 * x; });
  CHECK_FALSE(qfold::synthesize_rescale(qfold::int8_domain, wide, s8).has_value());
  CHECK(qfold::synthesize_rescale(qfold::int8_domain, wide, {.output_type = int_type::i16})
            .has_value());
  CHECK_FALSE(
      qfold::synthesize_rescale(qfold::uint8_domain, line, s8).has_value());  // inputs outside i8
  CHECK_FALSE(qfold::synthesize_rescale(domain{0, 10}, line, s8).has_value());
  CHECK_FALSE(qfold::synthesize_rescale(qfold::int8_domain, {}, s8).has_value());
  CHECK_FALSE(qfold::synthesize_rescale(domain{1, 0}, {}, s8).has_value());
  CHECK_FALSE(qfold::synthesize_rescale(qfold::int8_domain, steps, s8).has_value());
  CHECK_FALSE(reference_smallest(qfold::int8_domain, steps, s8).has_value());
  // Spaces no RESCALE is legal in: both sides unsigned; unsigned input to i32.
  const auto u = qfold::tabulate(qfold::uint8_domain, [](i64 x) { return x; });
  CHECK_FALSE(qfold::synthesize_rescale(qfold::uint8_domain, u,
                                        {.input_unsigned = true, .output_unsigned = true})
                  .has_value());
  CHECK_FALSE(qfold::synthesize_rescale(qfold::uint8_domain, u,
                                        {.input_unsigned = true, .output_type = int_type::i32})
                  .has_value());
  CHECK(qfold::synthesize_rescale(qfold::uint8_domain, u,
                                  {.input_unsigned = true, .output_type = int_type::i16})
            .has_value());
  // Illegal candidate input zero points are skipped, legal ones still tried.
  const auto shifted =
      qfold::tabulate(qfold::int8_domain, [](i64 x) { return std::clamp<i64>(x - 5, -128, 127); });
  const std::array<i64, 3> izps{1000, -129, 5};
  const auto c =
      qfold::synthesize_rescale(qfold::int8_domain, shifted, {.input_zero_points = izps});
  REQUIRE(c.has_value());
  CHECK(c->attributes.input_zp == 5);
  CHECK(ref_reproduces(qfold::int8_domain, shifted, *c));
  const std::array<i64, 1> bad{1000};
  CHECK_FALSE(qfold::synthesize_rescale(qfold::int8_domain, shifted, {.input_zero_points = bad})
                  .has_value());
  for (const auto& r : qfold::rescale_shifts(qfold::int8_domain, shifted, {}, 1000, 0, false))
    CHECK(r.empty());
  for (const auto& r : qfold::rescale_shifts(qfold::int8_domain, shifted, {}, 0, 300, false))
    CHECK(r.empty());
  for (const auto& r :
       qfold::rescale_shifts(qfold::int8_domain, shifted, {.scale32 = false}, 0, 0, true))
    CHECK(r.empty());
  // Domains outside the input type, down to the ends of int64: refused, no arithmetic on them.
  const std::vector<i64> y4{1, 2, 3, 4};
  for (const domain d :
       {domain{std::numeric_limits<i64>::min(), std::numeric_limits<i64>::min() + 3},
        domain{std::numeric_limits<i64>::max() - 3, std::numeric_limits<i64>::max()},
        domain{126, 129}}) {
    CHECK_FALSE(qfold::synthesize_rescale(d, y4, {.input_zero_points = izps}).has_value());
    for (const auto& r : qfold::rescale_shifts(d, y4, {}, 127, 0, false)) CHECK(r.empty());
  }
}
