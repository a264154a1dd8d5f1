// Classification (exact/classify.hpp) against answers built without the classifier: random lines
// and clamped lines written down directly, random RESCALEs evaluated by the independent reference
// (tests/reference/spec_reference.hpp), one-code near-misses of both, and the DyT-affine chain of
// tosa-semantics.md 5.3 evaluated step by step by the reference. Every certificate the classifier
// returns is re-evaluated by the reference; every witness is checked to really differ.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/exact/classify.hpp>
#include <qfold/quant/conventions.hpp>
#include <qfold/table/functions.hpp>
#include <qfold/table/generate.hpp>
#include <random>
#include <span>
#include <vector>

#include "catch_compat.hpp"
#include "exact_support.hpp"
#include "reference/spec_reference.hpp"

namespace {
using qfold::domain;
using qfold::int_type;
using qfold::map_kind;
using i64 = std::int64_t;

// --- independent facts about a map ------------------------------------------------------------
// Affine iff every second difference is zero; then slope = y1 - y0 and offset = y0 - slope lo.
std::optional<qfold::affine_map> brute_affine(domain d, std::span<const i64> y) {
  for (std::size_t i = 2; i < y.size(); ++i)
    if (y[i] - y[i - 1] != y[i - 1] - y[i - 2]) return std::nullopt;
  const i64 slope = y.size() > 1 ? y[1] - y[0] : 0;
  return qfold::affine_map{slope, y[0] - slope * d.lo};
}
map_kind affine_kind(const qfold::affine_map& l) {
  return l.slope == 0                      ? map_kind::constant
         : (l.slope == 1 && l.offset == 0) ? map_kind::identity
                                           : map_kind::affine;
}

// What every classification must satisfy, whatever the map: the kind is backed by a certificate
// that reproduces the map (checked here, by the reference for RESCALEs), and every witness names
// an input where the map's value is `expected` and the candidate's is different.
void check_claims(domain d, std::span<const i64> y, const qfold::classification& c,
                  bool with_space) {
  const auto value_at = [&](i64 x) { return y[static_cast<std::size_t>(x - d.lo)]; };
  const auto real = [&](const std::optional<qfold::witness>& w) {
    if (!w) return;
    REQUIRE(d.contains(w->input));
    CHECK(w->expected == value_at(w->input));
    CHECK(w->actual != w->expected);
  };
  real(c.affine_miss);
  real(c.saturated_miss);
  real(c.rescale_miss);
  // The affine candidate is the line through the first two points (independently computed here):
  // its miss is the first input off that line.
  const i64 s = y.size() > 1 ? y[1] - y[0] : 0;
  const auto line = [&](i64 x) { return y[0] + s * (x - d.lo); };
  std::optional<i64> first_off;
  for (std::size_t i = 0; i < y.size() && !first_off; ++i)
    if (line(d.lo + static_cast<i64>(i)) != y[i]) first_off = d.lo + static_cast<i64>(i);
  CHECK(c.affine_miss.has_value() == first_off.has_value());
  if (c.affine_miss && first_off) {
    CHECK(c.affine_miss->input == *first_off);
    CHECK(c.affine_miss->actual == line(*first_off));
  }
  switch (c.kind) {
    case map_kind::identity:
    case map_kind::constant:
    case map_kind::affine: {
      const auto b = brute_affine(d, y);
      REQUIRE(b.has_value());
      CHECK(c.affine == *b);
      CHECK(c.kind == affine_kind(*b));
      break;
    }
    case map_kind::rescale:
      REQUIRE(c.rescale.has_value());
      CHECK(c.affine_miss.has_value());
      break;
    case map_kind::saturated_affine:
      CHECK(c.affine_miss.has_value());
      CHECK_FALSE(c.rescale.has_value());
      for (std::size_t i = 0; i < y.size(); ++i) {
        const i64 x = d.lo + static_cast<i64>(i);
        const i64 v = std::clamp(c.saturated.line.slope * x + c.saturated.line.offset,
                                 c.saturated.lo, c.saturated.hi);
        REQUIRE(v == y[i]);
      }
      break;
    case map_kind::none:
      CHECK(c.affine_miss.has_value());
      CHECK_FALSE(c.rescale.has_value());
      if (with_space) CHECK(c.rescale_miss.has_value());
      break;
  }
  if (c.rescale) {
    CHECK(ref_reproduces(d, y, *c.rescale));
    CHECK_FALSE(c.rescale_miss.has_value());
  }
}

const std::array<domain, 4> full_domains{qfold::int8_domain, qfold::uint8_domain,
                                         qfold::int16_domain, domain{-100, 37}};
}  // namespace

TEST_CASE("exact classify: random lines over int8, uint8, int16 and restricted domains",
          "[exact][classify]") {
  std::mt19937_64 gen(11);
  int per_kind[6] = {};
  for (int n = 0; n < scaled(400); ++n) {
    domain d = full_domains[static_cast<std::size_t>(n % 4)];
    if (d == qfold::int16_domain && n % 40 != 2) d = qfold::int8_domain;  // int16: 1 in 40
    if (n % 7 == 3) {  // a random [qmin, qmax] inside int16 (at least two codes)
      const i64 lo = pick(gen, -32768, 32000);
      d = domain{lo, lo + pick(gen, 1, 700)};
    }
    i64 a = pick(gen, -300, 300), b = pick(gen, -100000, 100000);
    if (n % 5 == 0) a = 0;         // constant
    if (n % 5 == 1) a = 1, b = 0;  // identity
    if (n % 5 == 2) a = 1;         // a shift of the codes
    const auto y = qfold::tabulate(d, [&](i64 x) { return a * x + b; });
    const auto c = qfold::classify(d, y);
    const map_kind expected = a == 0               ? map_kind::constant
                              : (a == 1 && b == 0) ? map_kind::identity
                                                   : map_kind::affine;
    REQUIRE(c.kind == expected);
    CHECK(c.affine == qfold::affine_map{a, b});
    CHECK_FALSE(c.affine_miss.has_value());
    CHECK_FALSE(c.rescale.has_value());  // no space given: no synthesis
    CHECK_FALSE(c.rescale_miss.has_value());
    for (std::size_t i = 0; i < y.size(); i += 97)
      CHECK(c.affine(d.lo + static_cast<i64>(i)) == y[i]);
    ++per_kind[static_cast<int>(c.kind)];
  }
  CHECK(per_kind[static_cast<int>(map_kind::identity)] > 0);
  CHECK(per_kind[static_cast<int>(map_kind::constant)] > 0);
  CHECK(per_kind[static_cast<int>(map_kind::affine)] > 0);
}

TEST_CASE("exact classify: a line stays affine when a RESCALE space is given",
          "[exact][classify]") {
  // y = x + 5 over int8 -> int8 is one RESCALE (scale 1, output zp 5) except where it would pass
  // 127: clamp(x + 5) is that RESCALE, x + 5 itself leaves int8 and is no RESCALE at all.
  const qfold::rescale_space space{};
  const auto shifted = qfold::tabulate(domain{-128, 122}, [](i64 x) { return x + 5; });
  const auto c = qfold::classify(domain{-128, 122}, shifted, &space);
  CHECK(c.kind == map_kind::affine);
  CHECK(c.affine == qfold::affine_map{1, 5});
  REQUIRE(c.rescale.has_value());  // also a RESCALE; the kind stays affine (lines come first)
  CHECK(ref_reproduces(domain{-128, 122}, shifted, *c.rescale));
  CHECK(c.rescale->attributes.output_zp == 5);  // R(0) = 0 pins the output zero point: y(0) = 5
  const auto beyond = qfold::tabulate(qfold::int8_domain, [](i64 x) { return x + 5; });
  const auto c2 = qfold::classify(qfold::int8_domain, beyond, &space);
  CHECK(c2.kind == map_kind::affine);
  CHECK_FALSE(c2.rescale.has_value());
  REQUIRE(c2.rescale_miss.has_value());
  CHECK(c2.rescale_miss->input == 123);  // y = 128 leaves int8: no RESCALE reaches it
  check_claims(qfold::int8_domain, beyond, c2, true);
}

TEST_CASE("exact classify: lines clamped at one end or both are saturated_affine",
          "[exact][classify]") {
  std::mt19937_64 gen(12);
  int cases[3] = {};
  for (int n = 0; n < scaled(600); ++n) {
    // int8, uint8 and -100..37 in turn; every 50th case all int16 codes.
    const std::array<domain, 3> small{qfold::int8_domain, qfold::uint8_domain, domain{-100, 37}};
    const domain d = n % 50 == 7 ? qfold::int16_domain : small[static_cast<std::size_t>(n % 4 % 3)];
    i64 a = pick(gen, 1, 40) * (n % 3 == 0 ? -1 : 1);
    if (d == qfold::int16_domain) a = a > 0 ? 1 : -1;
    const i64 b = pick(gen, -1000, 1000);
    const auto line = [&](i64 x) { return a * x + b; };
    const i64 lmin = std::min(line(d.lo), line(d.hi)), lmax = std::max(line(d.lo), line(d.hi));
    // Clamp bounds strictly inside the line's range (so each clamps at least one input), or
    // beyond it (so that end is untouched); at least two inputs stay strictly inside.
    const int ends = n % 3;  // 0: low end only, 1: high end only, 2: both
    const i64 span = lmax - lmin;
    i64 lo = lmin - 1 - pick(gen, 0, 50), hi = lmax + 1 + pick(gen, 0, 50);
    if (ends != 1) lo = lmin + pick(gen, 1, span / 3);
    if (ends != 0) hi = lmax - pick(gen, 1, span / 3);
    const auto y = qfold::tabulate(d, [&](i64 x) { return std::clamp(line(x), lo, hi); });
    // The known answer: the clamp bounds the map actually reaches, and the inputs strictly
    // between them. An untouched end's bound is the line's own value there (as the map's min or
    // max), so the line's end point counts as "on the bound".
    const i64 ymin = *std::min_element(y.begin(), y.end()),
              ymax = *std::max_element(y.begin(), y.end());
    std::optional<i64> first, last;
    for (std::size_t i = 0; i < y.size(); ++i)
      if (y[i] > ymin && y[i] < ymax) {
        const i64 x = d.lo + static_cast<i64>(i);
        if (!first) first = x;
        last = x;
      }
    REQUIRE(first.has_value());
    REQUIRE(*last > *first);  // two inside points: the line is determined
    const auto c = qfold::classify(d, y);
    REQUIRE(c.kind == map_kind::saturated_affine);
    CHECK(c.saturated.line == qfold::affine_map{a, b});
    CHECK(c.saturated.lo == ymin);
    CHECK(c.saturated.hi == ymax);
    CHECK(c.saturated.first == *first);
    CHECK(c.saturated.last == *last);
    CHECK_FALSE(c.saturated_miss.has_value());
    for (std::size_t i = 0; i < y.size(); ++i)
      REQUIRE(c.saturated(d.lo + static_cast<i64>(i)) == y[i]);
    check_claims(d, y, c, false);
    ++cases[ends];
  }
  CHECK(cases[0] > 0);
  CHECK(cases[1] > 0);
  CHECK(cases[2] > 0);
}

TEST_CASE("exact classify: hand-derived clamped lines", "[exact][classify]") {
  // clamp(x, -128, 0) over int8: the line y = x is clamped above 0; the low end -128 is the
  // line's own value. Strictly inside (-128, 0): x = -127..-1.
  const auto y = qfold::tabulate(qfold::int8_domain, [](i64 x) { return std::min<i64>(x, 0); });
  const auto c = qfold::classify(qfold::int8_domain, y);
  REQUIRE(c.kind == map_kind::saturated_affine);
  CHECK(c.saturated.line == qfold::affine_map{1, 0});
  CHECK(c.saturated.lo == -128);
  CHECK(c.saturated.hi == 0);
  CHECK(c.saturated.first == -127);
  CHECK(c.saturated.last == -1);
  // The affine candidate through (-128, -128) and (-127, -127) first misses at x = 1: y = 0.
  REQUIRE(c.affine_miss.has_value());
  CHECK(c.affine_miss->input == 1);
  CHECK(c.affine_miss->expected == 0);
  CHECK(c.affine_miss->actual == 1);
  // A ReLU6-like clamp of 3x - 7 to [0, 60] over uint8: 0 up to x = 2 (3*2-7 = -1), then
  // 3x - 7 for x = 3..22 (2..59; x = 23 gives 62 -> 60).
  const auto r =
      qfold::tabulate(qfold::uint8_domain, [](i64 x) { return std::clamp<i64>(3 * x - 7, 0, 60); });
  const auto cr = qfold::classify(qfold::uint8_domain, r);
  REQUIRE(cr.kind == map_kind::saturated_affine);
  CHECK(cr.saturated.line == qfold::affine_map{3, -7});
  CHECK(cr.saturated.first == 3);
  CHECK(cr.saturated.last == 22);
  // A step (only the two end values) is not reported as a line.
  const auto step = qfold::tabulate(qfold::int8_domain, [](i64 x) { return x < 0 ? 0 : 5; });
  const auto cs = qfold::classify(qfold::int8_domain, step);
  CHECK(cs.kind == map_kind::none);
  CHECK_FALSE(cs.saturated_miss.has_value());
  check_claims(qfold::int8_domain, step, cs, false);
}

TEST_CASE("exact classify: one-code near-misses of lines are refused with a real witness",
          "[exact][classify]") {
  std::mt19937_64 gen(13);
  int refused = 0, clamped = 0;
  for (int n = 0; n < scaled(1500); ++n) {
    const domain d = n % 3 == 0   ? qfold::int8_domain
                     : n % 3 == 1 ? qfold::uint8_domain
                                  : domain{-20, 20};
    const i64 a = pick(gen, -5, 5), b = pick(gen, -300, 300);
    auto y = qfold::tabulate(d, [&](i64 x) { return a * x + b; });
    const auto k = static_cast<std::size_t>(
        n % 4 == 0 ? pick(gen, 0, 1) : pick(gen, 0, static_cast<i64>(y.size()) - 1));
    y[k] += pick(gen, 0, 1) != 0 ? 1 : -1;
    const auto c = qfold::classify(d, y);
    check_claims(d, y, c, false);
    REQUIRE(c.affine_miss.has_value());
    // Changed beyond the first two points: the candidate is the original line, which misses
    // exactly there. Otherwise the candidate is another line, which misses by the third point.
    if (k >= 2) {
      CHECK(c.affine_miss->input == d.lo + static_cast<i64>(k));
      CHECK(c.affine_miss->actual == a * c.affine_miss->input + b);
    } else {
      CHECK(c.affine_miss->input <= d.lo + 2);
    }
    // A changed end point can make a clamped line (e.g. 2x with the last code one lower is 2x
    // clamped there); anything else is no line at all.
    if (c.kind == map_kind::saturated_affine) {
      CHECK((k == 0 || k == y.size() - 1));
      ++clamped;
    } else {
      CHECK(c.kind == map_kind::none);
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(clamped > 0);
}

namespace {}  // namespace

TEST_CASE("exact classify: random RESCALEs by the reference always get a certificate",
          "[exact][classify][rescale]") {
  std::mt19937_64 gen(14);
  int done = 0, as_rescale = 0, as_line = 0, int16_maps = 0;
  while (done < scaled(1000)) {
    const bool int16_ok = int16_maps < scaled(16);
    auto r = make_random_rescale(gen, int16_ok);
    if (!r) continue;
    ++done;
    if (r->attrs.input_type == int_type::i16 && r->d == qfold::int16_domain) ++int16_maps;
    const std::array<i64, 1> izp{r->attrs.input_zp};
    const bool dr = r->attrs.rounding == qfold::rounding_mode::double_round || pick(gen, 0, 1) != 0;
    const auto space = space_of(r->attrs, izp, dr && r->attrs.scale32);
    const auto c = qfold::classify(r->d, r->y, &space);
    INFO("m " << r->multiplier << " shift " << r->shift << " izp " << r->attrs.input_zp << " ozp "
              << r->attrs.output_zp << " domain " << r->d.lo << ".." << r->d.hi);
    REQUIRE(c.rescale.has_value());
    CHECK(ref_reproduces(r->d, r->y, *c.rescale));
    // It is never a worse (larger) shift than the one that made the map, and for its own zero
    // points and rounding no smaller shift has a multiplier (rescale_shifts; the search over all
    // candidates against the reference is in exact_synthesize_test.cpp).
    CHECK(c.rescale->scale.shift <= r->shift);
    const auto& ca = c.rescale->attributes;
    const auto ranges = qfold::rescale_shifts(r->d, r->y, space, ca.input_zp, ca.output_zp,
                                              ca.rounding == qfold::rounding_mode::double_round);
    for (int s = 2; s < c.rescale->scale.shift; ++s)
      CHECK(ranges[static_cast<std::size_t>(s)].empty());
    CHECK(ranges[static_cast<std::size_t>(c.rescale->scale.shift)].lo ==
          c.rescale->scale.multiplier);
    check_claims(r->d, r->y, c, true);
    if (c.kind == map_kind::rescale)
      ++as_rescale;
    else
      ++as_line;
  }
  CHECK(as_rescale > done / 2);
  CHECK(as_line > 0);  // constants, and identities of scale-1 RESCALEs
}

TEST_CASE("exact classify: one-code near-misses of RESCALEs are refused or truly matched",
          "[exact][classify][rescale]") {
  std::mt19937_64 gen(15);
  int done = 0, refused = 0, other = 0;
  while (done < scaled(400)) {
    auto r = make_random_rescale(gen, false);
    if (!r || r->y.size() < 3) continue;
    // Change one code by +-1 where the map stays non-decreasing and inside the output type (a
    // map that falls or leaves the type is refused trivially).
    const qfold::int_range out = r->attrs.output_range();
    std::vector<std::pair<std::size_t, i64>> options;
    for (std::size_t i = 0; i < r->y.size(); ++i)
      for (i64 dv : {-1, 1}) {
        const i64 v = r->y[i] + dv;
        if (!out.contains(v)) continue;
        if (i > 0 && v < r->y[i - 1]) continue;
        if (i + 1 < r->y.size() && v > r->y[i + 1]) continue;
        options.emplace_back(i, v);
      }
    if (options.empty()) continue;
    ++done;
    const auto [k, v] =
        options[static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(options.size()) - 1))];
    auto y = r->y;
    y[k] = v;
    const std::array<i64, 1> izp{r->attrs.input_zp};
    const auto space = space_of(r->attrs, izp, r->attrs.scale32);
    const auto c = qfold::classify(r->d, y, &space);
    check_claims(r->d, y, c, true);
    if (c.rescale) {
      CHECK(ref_reproduces(r->d, y, *c.rescale));  // another RESCALE, and it really matches
      ++other;
    } else {
      REQUIRE(c.rescale_miss.has_value());  // checked to differ by check_claims
      ++refused;
    }
  }
  CHECK(refused > done / 2);
  INFO("near-misses matched by another RESCALE: " << other);
  CHECK(other < done);
}

TEST_CASE("exact classify: maps no RESCALE can follow get witnesses that differ",
          "[exact][classify][rescale]") {
  const qfold::rescale_space space{};
  // Falling: y = -x/2 (C++ division). The endpoint candidate has slope 0; whatever it is, its
  // witness must name an input where it really differs.
  const auto falling = qfold::tabulate(qfold::int8_domain, [](i64 x) { return -x / 2; });
  const auto c = qfold::classify(qfold::int8_domain, falling, &space);
  CHECK(c.kind == map_kind::none);
  REQUIRE(c.rescale_miss.has_value());
  check_claims(qfold::int8_domain, falling, c, true);
  // A constant outside int8 and a line leaving it.
  const auto big = qfold::tabulate(qfold::int8_domain, [](i64) { return 500; });
  const auto cb = qfold::classify(qfold::int8_domain, big, &space);
  CHECK(cb.kind == map_kind::constant);
  REQUIRE(cb.rescale_miss.has_value());
  check_claims(qfold::int8_domain, big, cb, true);
  // Too steep for any scale16 RESCALE (slope 16384 needs a scale beyond 32767 / 4).
  const qfold::rescale_space s16{.output_type = int_type::i32, .scale32 = false};
  const auto steep = qfold::tabulate(qfold::int8_domain, [](i64 x) { return 16384 * x; });
  const auto cs = qfold::classify(qfold::int8_domain, steep, &s16);
  CHECK(cs.kind == map_kind::affine);
  CHECK_FALSE(cs.rescale.has_value());
  REQUIRE(cs.rescale_miss.has_value());
  check_claims(qfold::int8_domain, steep, cs, true);
  // One input: a value only a RESCALE with a non-zero output zero point could give, for an i32
  // output (zero point 0) at the input zero point (where R(0) = 0).
  const qfold::rescale_space s32{.output_type = int_type::i32};
  const std::array<i64, 1> one{7};
  const auto c1 = qfold::classify(domain{0, 0}, one, &s32);
  CHECK(c1.kind == map_kind::constant);
  CHECK_FALSE(c1.rescale.has_value());
  REQUIRE(c1.rescale_miss.has_value());
  check_claims(domain{0, 0}, one, c1, true);
}

TEST_CASE("exact classify: random maps, every claim checked", "[exact][classify]") {
  // Random non-decreasing steps, noisy lines and random walks: whatever the classifier says is
  // backed by a certificate that reproduces the map or by witnesses that really differ.
  std::mt19937_64 gen(16);
  std::array<int, 6> kinds{};
  for (int n = 0; n < scaled(1500); ++n) {
    const domain d = n % 2 == 0 ? qfold::int8_domain : domain{-10, pick(gen, -9, 40)};
    std::vector<i64> y(d.size());
    i64 v = pick(gen, -128, 127);
    const int style = n % 3;
    for (auto& e : y) {
      if (style == 0) v += pick(gen, 0, 2);               // non-decreasing walk
      if (style == 1) v = pick(gen, -128, 127);           // noise
      if (style == 2) v += pick(gen, 0, 9) == 0 ? 1 : 0;  // a slow staircase (often a RESCALE)
      e = std::clamp<i64>(v, -128, 127);
    }
    const std::array<i64, 2> izps{0, pick(gen, -128, 127)};
    const qfold::rescale_space space{.input_zero_points = izps};
    const auto c = qfold::classify(d, y, &space);
    check_claims(d, y, c, true);
    ++kinds[static_cast<std::size_t>(c.kind)];
  }
  CHECK(kinds[static_cast<std::size_t>(map_kind::rescale)] > 0);
  CHECK(kinds[static_cast<std::size_t>(map_kind::none)] > 0);
}

TEST_CASE("exact classify: maps with extreme int64 values do not overflow", "[exact][classify]") {
  // Lines through int64 extremes leave int64 elsewhere: a miss, never undefined behaviour (the
  // sanitizer build checks the "never").
  constexpr i64 lo = std::numeric_limits<i64>::min(), hi = std::numeric_limits<i64>::max();
  const std::vector<std::vector<i64>> maps = {{lo, hi, 0},  {hi, lo, hi}, {0, hi, hi}, {lo, lo, hi},
                                              {hi, hi, hi}, {lo, 0, hi},  {lo, hi}};
  const qfold::rescale_space space{.output_type = int_type::i32};
  for (const auto& y : maps) {
    for (const domain d :
         {domain{0, static_cast<i64>(y.size()) - 1}, domain{-1, static_cast<i64>(y.size()) - 2},
          domain{1'000'000, 1'000'000 + static_cast<i64>(y.size()) - 1}}) {
      const auto c = qfold::classify(d, y, &space);
      if (y.size() == 2 && d.lo == 0) {
        // Two points are always on a line, unless it does not fit int64: slope 2^64 - 1 does not.
        CHECK(c.kind == map_kind::none);
      }
      if (y == std::vector<i64>{hi, hi, hi}) {
        CHECK(c.kind == map_kind::constant);
        CHECK(c.affine == qfold::affine_map{0, hi});
      }
      REQUIRE(c.affine_miss.has_value() == (c.kind != map_kind::constant));
      if (c.affine_miss)
        CHECK(c.affine_miss->expected == y[static_cast<std::size_t>(c.affine_miss->input - d.lo)]);
    }
  }
  // {lo, 0, hi}: the line through the first two points has slope 2^63, which does not fit; the
  // candidate is then the constant through the first point, which misses at the second.
  const std::vector<i64> y{lo, 0, hi};
  const auto c = qfold::classify(domain{0, 2}, y);
  REQUIRE(c.affine_miss.has_value());
  CHECK(c.affine_miss->input == 1);
  CHECK(c.affine_miss->actual == lo);
  // A clamped line whose slope fits but whose far values do not: clamp(2^61 x, -2^62, 2^62)
  // over -6..6 (the line reaches +-3 * 2^61 there, beyond int64).
  const auto sat = qfold::tabulate(
      domain{-6, 6}, [](i64 x) { return std::clamp<i64>(x, -2, 2) * (i64{1} << 61); });
  const auto cs = qfold::classify(domain{-6, 6}, sat);
  CHECK(cs.kind == map_kind::saturated_affine);
  CHECK(cs.saturated.line == qfold::affine_map{i64{1} << 61, 0});
  for (i64 x = -6; x <= 6; ++x) CHECK(cs.saturated(x) == sat[static_cast<std::size_t>(x + 6)]);
  CHECK(cs.saturated.line(6) == hi);  // saturated, not wrapped
  CHECK(cs.saturated.line(-6) == lo);
}

TEST_CASE("exact classify: degenerate and invalid inputs", "[exact][classify][errors]") {
  // Domains.
  CHECK(qfold::int8_domain.size() == 256);
  CHECK(qfold::uint16_domain.size() == 65536);
  CHECK(domain{5, 4}.size() == 0);
  CHECK(domain{5, -100}.size() == 0);
  CHECK(domain{std::numeric_limits<i64>::min(), std::numeric_limits<i64>::min() + 9}.size() == 10);
  CHECK(qfold::tabulate(domain{5, 4}, [](i64 x) { return x; }).empty());
  CHECK(qfold::tabulate(domain{-2, 1}, [](i64 x) { return x * x; }) ==
        std::vector<i64>{4, 1, 0, 1});
  // domain_of: [qmin, qmax] of valid qparams; int32 cannot be enumerated; invalid qparams.
  const auto d = qfold::domain_of(qfold::qparams{0.5, 3, -100, 100, qfold::dtype::int8});
  REQUIRE(d.has_value());
  CHECK(*d == domain{-100, 100});
  CHECK(*qfold::domain_of(qfold::make_qparams(qfold::dtype::uint16, 1.0, 0)) ==
        qfold::uint16_domain);
  CHECK(*qfold::domain_of(qfold::make_qparams(qfold::dtype::int16, 1.0, 0)) == qfold::int16_domain);
  CHECK(qfold::domain_of(qfold::make_qparams(qfold::dtype::int32, 1.0, 0)).error().code ==
        qfold::errc::illegal_type);
  CHECK(qfold::domain_of(qfold::qparams{0.0}).error().code == qfold::errc::scale_zero);
  CHECK(qfold::domain_of(qfold::qparams{-1.0}).error().code == qfold::errc::scale_negative);
  CHECK(qfold::domain_of(qfold::qparams{std::numeric_limits<double>::quiet_NaN()}).error().code ==
        qfold::errc::scale_nan);
  CHECK(qfold::domain_of(qfold::qparams{1.0, 0, 10, 5}).error().code == qfold::errc::empty_range);
  CHECK(qfold::domain_of(qfold::qparams{1.0, 300}).error().code ==
        qfold::errc::zero_point_out_of_range);
  CHECK(qfold::domain_of(qfold::qparams{1.0, 0, -129, 0}).error().code ==
        qfold::errc::value_out_of_range);
  // Empty spans and size mismatches classify as nothing: kind none, no certificate, no witness.
  const qfold::rescale_space space{};
  const std::vector<i64> y3{1, 2, 3};
  for (const auto& c :
       {qfold::classify(qfold::int8_domain, {}, &space), qfold::classify(domain{0, 3}, y3, &space),
        qfold::classify(domain{5, 4}, {}, &space)}) {
    CHECK(c.kind == map_kind::none);
    CHECK_FALSE(c.rescale.has_value());
    CHECK_FALSE(c.affine_miss.has_value());
    CHECK_FALSE(c.saturated_miss.has_value());
    CHECK_FALSE(c.rescale_miss.has_value());
  }
  CHECK_FALSE(qfold::synthesize_rescale(domain{0, 3}, y3, space).has_value());
  CHECK(qfold::classify_channels(domain{0, 2}, y3, 0).empty());
  CHECK(qfold::classify_channels(domain{0, 2}, y3, 2).empty());  // 3 values for 2 x 3
  CHECK(qfold::classify_channels(domain{0, 1}, y3, 1).empty());
  // One input: a constant (and an identity only by coincidence of value).
  const std::array<i64, 1> one{42};
  const auto c1 = qfold::classify(domain{7, 7}, one);
  CHECK(c1.kind == map_kind::constant);
  CHECK(c1.affine == qfold::affine_map{0, 42});
  CHECK(qfold::to_string(map_kind::saturated_affine) == "saturated_affine");
  CHECK(qfold::to_string(map_kind::none) == "none");
}

TEST_CASE("exact classify: classify_channels is classify per channel", "[exact][classify]") {
  std::mt19937_64 gen(17);
  constexpr std::size_t channels = 40;
  const domain d = qfold::int8_domain;
  std::vector<i64> values;
  for (std::size_t ch = 0; ch < channels; ++ch) {
    const i64 a = pick(gen, 0, 3), b = pick(gen, -50, 50);
    const i64 lo = pick(gen, -200, -100), hi = pick(gen, 100, 200);
    const i64 noise_at = ch % 5 == 4 ? pick(gen, 0, 255) : -1;
    for (i64 x = d.lo; x <= d.hi; ++x)
      values.push_back(std::clamp(a * x + b, lo, hi) + (x - d.lo == noise_at ? 1 : 0));
  }
  const qfold::rescale_space space{.output_type = int_type::i16};
  const auto all = qfold::classify_channels(d, values, channels, &space);
  REQUIRE(all.size() == channels);
  for (std::size_t ch = 0; ch < channels; ++ch) {
    const std::span<const i64> y(values.data() + ch * d.size(), d.size());
    const auto one = qfold::classify(d, y, &space);
    CHECK(all[ch].kind == one.kind);
    CHECK(all[ch].affine == one.affine);
    CHECK(all[ch].rescale == one.rescale);
    check_claims(d, y, all[ch], true);
  }
  // With each kernel forced (what the benchmark measures per ISA): the same answers.
  for (const auto isa : runnable_isas()) {
    INFO("isa " << static_cast<int>(isa));
    const auto forced = qfold::detail::classify_channels_with(d, values, channels, &space, isa);
    REQUIRE(forced.size() == channels);
    for (std::size_t ch = 0; ch < channels; ++ch) {
      CHECK(forced[ch].kind == all[ch].kind);
      CHECK(forced[ch].affine == all[ch].affine);
      CHECK(forced[ch].rescale == all[ch].rescale);
    }
  }
}

namespace {
// --- tosa-semantics.md 5.3, FoldDyTAffineIntoConvPass ------------------------------------------
// TABLE -> (RESCALE_i32 * RESCALE_i32(gamma)) -> RESCALE_i8 -> (RESCALE_i32 + RESCALE_i32(beta))
//       -> RESCALE_i8, evaluated per channel with the reference, every multiplier and shift
// derived from the real scales the way ExecuTorch does (et_compute_multiplier_and_shift), int32
// overflow of the MUL and the ADD refused (checked, as the pass does).
struct dyt_scales {
  double table = 1.0 / 128;  // TABLE output scale (zero point tzp)
  i64 tzp = 0;
  double gamma = 1.0 / 64;     // gamma codes (zero point 0)
  double mul_out = 1.0 / 128;  // int8 after the MUL's output RESCALE (zero point mzp)
  i64 mzp = 0;
  double add = 1.0 / 2048;  // the ADD's int32 scale
  double beta = 1.0 / 32;   // beta codes (zero point 0)
  double out = 1.0 / 128;   // int8 output of the ADD's output RESCALE (zero point ozp)
  i64 ozp = 0;
};

struct ref_rescale_step {
  qfold::rescale_attributes attrs;
  i64 multiplier;
  int shift;
};
ref_rescale_step et_rescale(double scale, int_type in, int_type out, i64 izp, i64 ozp) {
  const auto ms = qref::et_compute_multiplier_and_shift(scale, 32);
  REQUIRE(ms.ok);
  return {{.input_type = in, .output_type = out, .input_zp = izp, .output_zp = ozp},
          ms.value.multiplier,
          ms.value.shift};
}
std::optional<i64> apply(const ref_rescale_step& s, i64 x) {
  return ref_rescale(s.attrs, s.multiplier, s.shift, x);
}

// a(x) for table output value x, per channel; nullopt where a step is refused.
std::optional<i64> dyt_affine(const dyt_scales& q, i64 gamma_code, i64 beta_code, i64 x) {
  const auto r_ta = et_rescale(1.0, int_type::i8, int_type::i32, q.tzp, 0);
  const auto r_g = et_rescale(1.0, int_type::i8, int_type::i32, 0, 0);
  const auto r_go =
      et_rescale(q.table * q.gamma / q.mul_out, int_type::i32, int_type::i8, 0, q.mzp);
  const auto r_aa = et_rescale(q.mul_out / q.add, int_type::i8, int_type::i32, q.mzp, 0);
  const auto r_b = et_rescale(q.beta / q.add, int_type::i8, int_type::i32, 0, 0);
  const auto r_ao = et_rescale(q.add / q.out, int_type::i32, int_type::i8, 0, q.ozp);
  const auto t = apply(r_ta, x), g = apply(r_g, gamma_code), b = apply(r_b, beta_code);
  if (!t || !g || !b) return std::nullopt;
  const i64 product = *t * *g;
  if (product < INT32_MIN || product > INT32_MAX) return std::nullopt;
  const auto go = apply(r_go, product);
  if (!go) return std::nullopt;
  const auto aa = apply(r_aa, *go);
  if (!aa) return std::nullopt;
  const i64 sum = *aa + *b;
  if (sum < INT32_MIN || sum > INT32_MAX) return std::nullopt;
  return apply(r_ao, sum);
}

// The pass's own test, written from its description: a - ozp = slope * (t - tzp) + offset with
// one consistent y per x, dy % dx == 0 and every point on the line. Over the 256 table values
// used as x directly, "one y per x" holds trivially.
std::optional<std::pair<i64, i64>> pass_affine_fit(std::span<const i64> a, const dyt_scales& q) {
  const i64 x0 = -128 - q.tzp, x1 = -127 - q.tzp;
  const i64 dy = (a[1] - q.ozp) - (a[0] - q.ozp), dx = x1 - x0;
  if (dy % dx != 0) return std::nullopt;
  const i64 slope = dy / dx, offset = (a[0] - q.ozp) - slope * x0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] - q.ozp != slope * (static_cast<i64>(i) - 128 - q.tzp) + offset) return std::nullopt;
  return std::pair{slope, offset};
}
}  // namespace

TEST_CASE("exact classify: DyT gamma/beta per channel (tosa-semantics 5.3)",
          "[exact][classify][dyt]") {
  // The table: int8 tanh, ExecuTorch convention; input scale 4/128 (codes span [-4, 3.97]),
  // output scale 1/128. The pass folds over the table's output values, so the map classified per
  // channel is x (a table output code, -128..127) -> a.
  const auto table = qfold::make_table8<std::int8_t, std::int8_t>(
      qfold::conventions::executorch, qfold::fn::tanh,
      qfold::make_qparams(qfold::dtype::int8, 4.0 / 128, 0),
      qfold::make_qparams(qfold::dtype::int8, 1.0 / 128, 0));
  REQUIRE(table.has_value());
  // The pass evaluates the chain at the table's 256 entries; qfold classifies the map on every
  // code the table could hold, which contains them (a superset: a fold proven here is proven
  // there). Every entry is a code of that domain:
  for (const auto v : table->values) CHECK(qfold::int8_domain.contains(v));

  SECTION("power-of-two scales: gamma 1 and beta 0 is the identity, the rest RESCALEs or clamped") {
    // With mul_out = table and out = table scale, all RESCALEs but the gamma one are exact
    // powers of two: a = clamp(clamp(round(x g / 64)) + 4 b + ozp). By hand, per channel:
    //   g = 64, b = 0, ozp 0: identity;
    //   g = 64, b = 5: x + 20 clamped at 127: a line clamped at one end, and more specifically one
    //     RESCALE (scale 1, output zp 20: its own int8 clamp is the clamp), which wins;
    //   g = 64, b = -30: x - 120 clamped at -128: likewise a RESCALE, output zp -120;
    //   g = 32: round-half-up of x/2 plus 4b: one RESCALE (scale 1/2, output zp 4b);
    //   g = 127: round(127 x / 64) clamped to int8: one RESCALE (scale 127/64, clamp included);
    //   g = 0: the constant 4b;  g = -64: -x, with -(-128) = 128 clamped to 127 (saturated).
    const dyt_scales q{};
    struct channel {
      i64 gamma, beta;
      map_kind expected;
    };
    const std::vector<channel> channels = {
        {64, 0, map_kind::identity},          {64, 5, map_kind::rescale},
        {64, -30, map_kind::rescale},         {32, 0, map_kind::rescale},
        {32, 7, map_kind::rescale},           {127, 0, map_kind::rescale},
        {0, 3, map_kind::constant},           {37, 1, map_kind::rescale},
        {-64, 0, map_kind::saturated_affine},  // -x, with -(-128) = 128 clamped to 127
    };
    std::vector<i64> values;
    for (const auto& ch : channels)
      for (i64 x = -128; x <= 127; ++x) {
        const auto a = dyt_affine(q, ch.gamma, ch.beta, x);
        REQUIRE(a.has_value());
        values.push_back(*a);
      }
    const std::array<i64, 1> izp{q.tzp};
    const qfold::rescale_space space{.input_zero_points = izp};
    const auto cls = qfold::classify_channels(qfold::int8_domain, values, channels.size(), &space);
    REQUIRE(cls.size() == channels.size());
    for (std::size_t c = 0; c < channels.size(); ++c) {
      INFO("channel " << c << " gamma " << channels[c].gamma << " beta " << channels[c].beta);
      const std::span<const i64> a(values.data() + 256 * c, 256);
      CHECK(cls[c].kind == channels[c].expected);
      check_claims(qfold::int8_domain, a, cls[c], true);
      // The pass's affine fit agrees with the classifier: the fold applies exactly on the
      // channels classified identity / constant / affine, with the same line.
      const auto fit = pass_affine_fit(a, q);
      const bool affine = cls[c].kind == map_kind::identity || cls[c].kind == map_kind::constant ||
                          cls[c].kind == map_kind::affine;
      CHECK(fit.has_value() == affine);
      if (fit && affine) {
        // a - ozp = slope (x - tzp) + offset  <=>  a = slope x + (offset + ozp - slope tzp)
        CHECK(cls[c].affine.slope == fit->first);
        CHECK(cls[c].affine.offset == fit->second + q.ozp - fit->first * q.tzp);
      }
    }
    REQUIRE(cls[1].rescale.has_value());
    CHECK(cls[1].rescale->attributes.output_zp == 20);
    CHECK(cls[1].rescale->scale.multiplier == 256);  // scale 1 at shift 8, the smallest legal
    CHECK(cls[1].rescale->scale.shift == 8);         // for inputs -128..127 (|v| <= 2^(s-1))
    // gamma 32: the certificate is round-half-up(x/2) + 4b, i.e. scale 1/2 with output zp 4b.
    REQUIRE(cls[4].rescale.has_value());
    CHECK(cls[4].rescale->attributes.output_zp == 28);
    CHECK(cls[4].rescale->scale.multiplier * 2 == std::int64_t{1} << cls[4].rescale->scale.shift);
  }

  SECTION("zero points and a non-power-of-two output scale: classification equals brute force") {
    // Output scale 1/100: gamma 1 (code 64) and beta 0 give round((x - 3) * 25/32) - 4, one
    // RESCALE (input zp 3 = the table's), not a line; other gammas and betas add a second
    // rounding (gamma) and an offset inside the final rounding (beta).
    const dyt_scales q{.tzp = 3, .mzp = 3, .beta = 1.0 / 50, .out = 1.0 / 100, .ozp = -4};
    std::mt19937_64 gen(18);
    const std::size_t channels = sanitized ? 24 : 160;
    std::vector<i64> values;
    std::vector<std::pair<i64, i64>> params;
    for (std::size_t c = 0; c < channels; ++c) {
      const i64 gamma = c % 4 == 0 ? 64 : c % 16 == 1 ? 0 : pick(gen, -127, 127);
      const i64 beta = c % 8 == 0 ? 0 : pick(gen, -20, 20);
      params.emplace_back(gamma, beta);
      for (i64 x = -128; x <= 127; ++x) {
        const auto a = dyt_affine(q, gamma, beta, x);
        REQUIRE(a.has_value());
        values.push_back(*a);
      }
    }
    const std::array<i64, 1> izp{q.tzp};
    const qfold::rescale_space space{.input_zero_points = izp};
    const auto cls = qfold::classify_channels(qfold::int8_domain, values, channels, &space);
    REQUIRE(cls.size() == channels);
    std::array<int, 6> kinds{};
    for (std::size_t c = 0; c < channels; ++c) {
      INFO("channel " << c << " gamma " << params[c].first << " beta " << params[c].second);
      const std::span<const i64> a(values.data() + 256 * c, 256);
      check_claims(qfold::int8_domain, a, cls[c], true);
      const auto fit = pass_affine_fit(a, q);
      const bool affine = cls[c].kind == map_kind::identity || cls[c].kind == map_kind::constant ||
                          cls[c].kind == map_kind::affine;
      CHECK(fit.has_value() == affine);
      // Whether one RESCALE exists, decided by the reference alone (every shift, zero point and
      // rounding; see reference_smallest), agrees with the synthesis.
      const auto brute = reference_smallest(qfold::int8_domain, a, space);
      CHECK(brute.has_value() == cls[c].rescale.has_value());
      if (brute && cls[c].rescale) CHECK(brute->scale.shift == cls[c].rescale->scale.shift);
      if (params[c].first == 64 && params[c].second == 0) CHECK(cls[c].kind == map_kind::rescale);
      if (params[c].first == 0) CHECK(cls[c].kind == map_kind::constant);
      ++kinds[static_cast<std::size_t>(cls[c].kind)];
    }
    CHECK(kinds[static_cast<std::size_t>(map_kind::rescale)] >= static_cast<int>(channels / 8));
    CHECK(kinds[static_cast<std::size_t>(map_kind::none)] > 0);
  }
}

TEST_CASE("exact classify: every vector kernel gives the same classification",
          "[exact][classify]") {
  // classify_with forced to each ISA this CPU runs (scalar loops, two-lane baseline, AVX2,
  // AVX-512), on lines with one code moved (the miss anywhere, the vector blocks' tails
  // included), RESCALE maps (the synthesis then starts from classification's constant run) and
  // clamped lines: the same kind, line, witnesses and certificate; and the certificate equals
  // synthesize_rescale's on its own (which knows nothing of the classification).
  using qfold::detail::vector_isa;
  const auto isas = runnable_isas();
  const auto same_witness = [](const std::optional<qfold::witness>& a,
                               const std::optional<qfold::witness>& b) {
    return a.has_value() == b.has_value() &&
           (!a || (a->input == b->input && a->expected == b->expected && a->actual == b->actual));
  };
  std::mt19937_64 gen(153);
  const auto check = [&](domain d, const std::vector<i64>& y, const qfold::rescale_space& space) {
    const auto want = qfold::detail::classify_with(d, y, &space, vector_isa::scalar);
    const auto alone = qfold::synthesize_rescale(d, y, space);
    REQUIRE(want.rescale.has_value() == alone.has_value());
    if (alone) CHECK(*want.rescale == *alone);
    for (const auto isa : isas) {
      const auto c = qfold::detail::classify_with(d, y, &space, isa);
      INFO("isa " << static_cast<int>(isa));
      CHECK(c.kind == want.kind);
      CHECK(c.affine == want.affine);
      CHECK(same_witness(c.affine_miss, want.affine_miss));
      CHECK(same_witness(c.saturated_miss, want.saturated_miss));
      CHECK(same_witness(c.rescale_miss, want.rescale_miss));
      REQUIRE(c.rescale.has_value() == want.rescale.has_value());
      if (c.rescale) CHECK(*c.rescale == *want.rescale);
    }
  };
  for (int round = 0; round < scaled(1200); ++round) {
    const domain d = round % 100 == 0 ? qfold::int16_domain
                     : round % 3 == 0 ? domain{pick(gen, -128, 0), pick(gen, 1, 127)}
                                      : qfold::int8_domain;
    const i64 a = pick(gen, -2, 4), b = pick(gen, 0, 1) == 0 ? 0 : pick(gen, -100, 100);
    auto y = qfold::tabulate(d, [&](i64 x) { return a * x + b; });
    if (pick(gen, 0, 2) != 0)
      y[static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(y.size()) - 1))] +=
          pick(gen, 0, 1) * 2 - 1;
    check(d, y,
          {.input_type = d.size() > 256 ? int_type::i16 : int_type::i8,
           .output_type = int_type::i32});
    const auto c = qfold::tabulate(d, [&](i64 x) { return std::clamp<i64>(a * x + b, -128, 127); });
    check(d, c, {.input_type = d.size() > 256 ? int_type::i16 : int_type::i8});
    auto r = make_random_rescale(gen, round % 100 == 0);
    if (!r) continue;
    const std::array<i64, 1> iz{r->attrs.input_zp};
    const auto space = space_of(r->attrs, iz, r->attrs.scale32);
    check(r->d, r->y, space);
    // The first unclamped code moved by one: classification's constant run then ends early.
    const qfold::int_range out = r->attrs.output_range();
    const auto at = static_cast<std::size_t>(
        std::lower_bound(r->y.begin(), r->y.end(), out.lo + 1) - r->y.begin());
    if (at < r->y.size() && at > 0) {
      r->y[at - 1] += 1;
      check(r->d, r->y, space);
    }
  }
}
