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

// The synthesis before issue 15 (commit d7d01d8), verbatim: the interval method at every tried
// shift, two 64-bit divisions per code. The new synthesis must give the same certificate.
namespace old_synth {
using namespace qfold;
namespace detail {
[[nodiscard]] constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  return -floor_div(-a, b);
}

// Every |v| here is below 2^17 and every multiplier considered below 2^45, so |v m| < 2^62: a
// bound beyond +-(2^62 + 1) can be saturated there without changing any answer.
inline constexpr std::int64_t beyond = (std::int64_t{1} << 62) + 1;
inline constexpr std::int64_t uncapped_multiplier = std::int64_t{1} << 45;

// t * 2^s - c, saturated to +-beyond when |t * 2^s| exceeds 2^62.
[[nodiscard]] constexpr std::int64_t shifted_minus(std::int64_t t, int s, std::int64_t c) noexcept {
  const std::int64_t limit = (std::int64_t{1} << 62) >> s;
  if (t > limit) return beyond;
  if (t < -limit) return -beyond;
  return t * (std::int64_t{1} << s) - c;
}

struct candidate {
  std::int64_t input_zp, output_zp;
  bool double_round;
};

// The multipliers m in [0, cap] with clamp(floor((v m + 2^(s-1) + nudge) / 2^s) + ozp) == y(x)
// for every input: each input is one or two linear inequalities on m (one where y sits on a
// clamp bound, none where the output range is a single value).
[[nodiscard]] constexpr multiplier_range multipliers(domain d, std::span<const std::int64_t> y,
                                                     const candidate& k, int s, int_range out,
                                                     std::int64_t cap) noexcept {
  multiplier_range r{0, cap};
  const std::int64_t half = std::int64_t{1} << (s - 1);
  const std::int64_t nudge = k.double_round && s > 31 ? std::int64_t{1} << 30 : 0;
  for (std::size_t i = 0; i < y.size() && !r.empty(); ++i) {
    const std::int64_t v = d.lo + static_cast<std::int64_t>(i) - k.input_zp;
    const std::int64_t yv = y[i];
    if (yv < out.lo || yv > out.hi) return {1, 0};
    const bool need_ge = yv != out.lo;  // R(v) >= t unless y is clamped from below
    const bool need_le = yv != out.hi;  // R(v) <= t unless y is clamped from above
    const std::int64_t t = yv - k.output_zp;
    if (v == 0) {  // R(0) = 0 (the rounding constant stays below 2^s)
      if ((need_ge && t > 0) || (need_le && t < 0)) return {1, 0};
      continue;
    }
    const std::int64_t c = half + (v >= 0 ? nudge : -nudge);
    const std::int64_t a = shifted_minus(t, s, c);          // R(v) >= t  <=>  v m >= a
    const std::int64_t b = shifted_minus(t + 1, s, c) - 1;  // R(v) <= t  <=>  v m <= b
    if (v > 0) {
      if (need_ge) r.lo = std::max(r.lo, ceil_div(a, v));
      if (need_le) r.hi = std::min(r.hi, floor_div(b, v));
    } else {
      if (need_ge) r.hi = std::min(r.hi, floor_div(a, v));
      if (need_le) r.lo = std::max(r.lo, ceil_div(b, v));
    }
  }
  return r;
}

[[nodiscard]] constexpr rescale_attributes attributes_of(const rescale_space& space,
                                                         const candidate& k) noexcept {
  return {space.input_type,
          space.output_type,
          space.scale32,
          k.double_round ? rounding_mode::double_round : rounding_mode::single_round,
          false,
          space.input_unsigned,
          space.output_unsigned,
          k.input_zp,
          k.output_zp};
}

[[nodiscard]] constexpr bool reproduces(domain d, std::span<const std::int64_t> y,
                                        const rescale_certificate& c) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const auto r =
        checked::rescale_value(c.attributes, c.scale, d.lo + static_cast<std::int64_t>(i));
    if (!r || *r != y[i]) return false;
  }
  return true;
}

// apply_scale_32 requires -2^(shift-1) <= v < 2^(shift-1): small shifts exclude wide inputs
// (apply_scale_16 has no such requirement).
[[nodiscard]] constexpr int smallest_legal_shift(domain d, std::int64_t input_zp,
                                                 bool scale32) noexcept {
  int s = 2;
  if (scale32) {
    const std::int64_t vlo = d.lo - input_zp, vhi = d.hi - input_zp;
    while (s < 62 && (vlo < -(std::int64_t{1} << (s - 1)) || vhi >= (std::int64_t{1} << (s - 1))))
      ++s;
  }
  return s;
}

// Element types qfold knows (an enum holds any byte: other values must not reach range_of).
[[nodiscard]] constexpr bool known_type(int_type t) noexcept {
  return t == int_type::i8 || t == int_type::i16 || t == int_type::i32 || t == int_type::i48;
}
[[nodiscard]] constexpr bool known_types(const rescale_space& space) noexcept {
  return known_type(space.input_type) && known_type(space.output_type);
}

// The index of input x in a domain that contains it (exact for any domain: unsigned difference).
[[nodiscard]] constexpr std::size_t offset_in(domain d, std::int64_t x) noexcept {
  return static_cast<std::size_t>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(d.lo));
}

// Inputs outside the input type make every RESCALE an error (and |x - zp| must stay small for
// the bounds above), so such domains are refused before any arithmetic.
[[nodiscard]] constexpr bool domain_in_type(domain d, const rescale_space& space) noexcept {
  if (!known_types(space)) return false;
  const int_range in = range_of(space.input_type, space.input_unsigned);
  return d.lo <= d.hi && in.contains(d.lo) && in.contains(d.hi);
}

// The largest shift worth trying: where the slope between the first and last unclamped points
// needs a multiplier near the cap (62 when the map has no such slope).
[[nodiscard]] constexpr int shift_estimate(std::span<const std::int64_t> y, int_range out,
                                           std::int64_t cap) noexcept {
  std::size_t first = y.size(), last = 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] > out.lo && y[i] < out.hi) {
      if (first == y.size()) first = i;
      last = i;
    }
  if (first >= last || y[last] <= y[first]) return 62;
  // In 128 bits: cap < 2^31 and dx < 2^64, so the product cannot overflow.
  __extension__ typedef __int128 wide;
  const wide q = wide{cap} * static_cast<wide>(last - first) * 2 /
                 (wide{y[last]} - y[first]);  // 2^s <= 2 cap / slope
  int s = 0;
  while (s < 62 && (wide{1} << (s + 1)) <= q) ++s;
  return s < 2 ? 2 : s;
}

// The smallest shift (and its smallest multiplier) for one candidate. Without the cap on the
// multiplier, feasibility is upward closed in the shift for single rounding ((m, s) and
// (2m, s + 1) are the same function), so a binary search below the estimated top shift finds the
// first feasible one, and the shifts from there are tried in order until the multiplier also fits
// the cap. Whenever that fast path finds nothing, every shift is tried (the answer never depends
// on the estimate). DOUBLE_ROUND only differs above shift 31 and is not upward closed.
[[nodiscard]] constexpr std::optional<scale_factor> smallest(domain d,
                                                             std::span<const std::int64_t> y,
                                                             const candidate& k, int_range out,
                                                             std::int64_t cap) {
  const int min_shift = smallest_legal_shift(d, k.input_zp, cap > 32767);
  const auto capped = [&](int s) -> std::optional<scale_factor> {
    const multiplier_range m = multipliers(d, y, k, s, out, cap);
    if (m.empty()) return std::nullopt;
    return scale_factor{static_cast<std::int32_t>(m.lo), s};
  };
  if (!k.double_round) {
    int lo = min_shift, hi = std::max(min_shift, shift_estimate(y, out, cap));
    if (!multipliers(d, y, k, hi, out, uncapped_multiplier).empty()) {
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (multipliers(d, y, k, mid, out, uncapped_multiplier).empty())
          lo = mid + 1;
        else
          hi = mid;
      }
      for (int s = lo; s <= 62; ++s)
        if (auto f = capped(s)) return f;
    }
  }
  for (int s = std::max(min_shift, k.double_round ? 32 : 2); s <= 62; ++s)
    if (auto f = capped(s)) return f;
  return std::nullopt;
}

[[nodiscard]] constexpr int_range output_zero_points(const rescale_space& space) noexcept {
  if (space.output_type == int_type::i8) return range_of(int_type::i8, space.output_unsigned);
  if (space.output_type == int_type::i16 && space.output_unsigned)
    return {0, 32768};  // only 0 and 32768
  return {0, 0};
}
}  // namespace detail

// The RESCALE within `space` that gives y[i] for input d.lo + i, with the smallest shift and the
// smallest multiplier at that shift; nullopt when none exists. The result has been evaluated on
// every input with checked::rescale_value before it is returned.
[[nodiscard]] constexpr std::optional<rescale_certificate> synthesize_rescale(
    domain d, std::span<const std::int64_t> y, const rescale_space& space) {
  if (y.size() != d.size() || y.empty() || !detail::domain_in_type(d, space)) return std::nullopt;
  // A RESCALE is non-decreasing (multiplier >= 0, clamp): anything else is refused at once.
  for (std::size_t i = 1; i < y.size(); ++i)
    if (y[i] < y[i - 1]) return std::nullopt;
  const int_range out = range_of(space.output_type, space.output_unsigned);
  const std::int64_t cap = space.scale32 ? int32_max : 32767;
  const std::array<std::int64_t, 1> zero{0};
  const std::span<const std::int64_t> izps = space.input_zero_points.empty()
                                                 ? std::span<const std::int64_t>(zero)
                                                 : space.input_zero_points;
  std::optional<rescale_certificate> best;
  for (const std::int64_t izp : izps) {
    const int_range ozp_range = detail::output_zero_points(space);
    // With the input zero point inside the domain, R(0) = 0 pins the output zero point there.
    std::int64_t ozp_lo = ozp_range.lo, ozp_hi = ozp_range.hi;
    if (d.contains(izp)) {
      const std::int64_t y0 = y[detail::offset_in(d, izp)];
      if (y0 > out.lo && y0 < out.hi) ozp_lo = ozp_hi = y0;
    }
    for (std::int64_t ozp = ozp_lo; ozp <= ozp_hi; ++ozp) {
      if (ozp_range.hi == 32768 && ozp != 0 && ozp != 32768) continue;
      for (bool dr : {false, true}) {
        if (dr && !(space.allow_double_round && space.scale32)) continue;
        const detail::candidate k{izp, ozp, dr};
        const rescale_attributes attrs = detail::attributes_of(space, k);
        if (!validate(attrs)) continue;
        const auto s = detail::smallest(d, y, k, out, cap);
        if (!s) continue;
        const rescale_certificate c{attrs, *s};
        if (!detail::reproduces(d, y, c)) continue;  // the certificate is re-checked, never trusted
        if (!best || s->shift < best->scale.shift ||
            (s->shift == best->scale.shift && s->multiplier < best->scale.multiplier))
          best = c;
      }
    }
  }
  return best;
}
}  // namespace old_synth

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

TEST_CASE("exact synthesize: the same certificates and refusals as the interval method",
          "[exact][synthesize]") {
  // The synthesis before issue 15 (old_synth, above) tried the interval method at every shift it
  // probed; the new one derives every shift from one top shift and verifies a candidate. Both
  // must return the same certificate (attributes and scale) or both refuse, on RESCALE maps,
  // near misses, random non-decreasing walks, constants, clamped lines and steps, in spaces with
  // and without DOUBLE_ROUND, scale16, several input zero points and free output zero points.
  std::mt19937_64 gen(25);
  int found = 0, refused = 0, done = 0;
  const auto same = [&](domain d, const std::vector<i64>& y, const qfold::rescale_space& space) {
    const auto n = qfold::synthesize_rescale(d, y, space);
    const auto o = old_synth::synthesize_rescale(d, y, space);
    INFO("domain " << d.lo << ".." << d.hi << " in " << static_cast<int>(space.input_type)
                   << " out " << static_cast<int>(space.output_type) << " scale32 " << space.scale32
                   << " dr " << space.allow_double_round);
    if (n) {
      INFO("new: m " << n->scale.multiplier << " shift " << n->scale.shift << " izp "
                     << n->attributes.input_zp << " ozp " << n->attributes.output_zp << " rounding "
                     << static_cast<int>(n->attributes.rounding));
      CHECK(ref_reproduces(d, y, *n));
    }
    if (o) {
      INFO("old: m " << o->scale.multiplier << " shift " << o->scale.shift);
      CHECK(ref_reproduces(d, y, *o));
    }
    REQUIRE(n.has_value() == o.has_value());
    if (n) {
      CHECK(n->attributes == o->attributes);
      CHECK(n->scale == o->scale);
      ++found;
    } else {
      ++refused;
    }
    ++done;
  };
  int int16_maps = 0;
  while (done < scaled(3000)) {
    auto r = make_random_rescale(gen, int16_maps < (sanitized ? 1 : 8));
    if (!r) continue;
    if (r->d.size() > 4096) ++int16_maps;
    std::array<i64, 2> izps{r->attrs.input_zp, pick(gen, 0, 3) == 0 ? i64{0} : r->attrs.input_zp};
    const std::span<const i64> iz =
        pick(gen, 0, 4) == 0 ? std::span<const i64>(izps) : std::span<const i64>(izps).first(1);
    const bool dr = r->attrs.scale32 && pick(gen, 0, 1) != 0;
    const auto space = space_of(r->attrs, iz, dr);
    same(r->d, r->y, space);
    // A near miss: one code moved by one, kept non-decreasing and inside the output type.
    auto y = r->y;
    const auto k = static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(y.size()) - 1));
    const i64 step = pick(gen, 0, 1) != 0 ? 1 : -1;
    const qfold::int_range out = r->attrs.output_range();
    const i64 nv = y[k] + step;
    if (out.contains(nv) && (k == 0 || y[k - 1] <= nv) && (k + 1 == y.size() || nv <= y[k + 1])) {
      y[k] = nv;
      same(r->d, y, space);
    }
    // A random non-decreasing walk over the same domain (steps 0..3), some clamped.
    std::vector<i64> w;
    i64 v = pick(gen, -200, 200);
    const i64 maxstep = pick(gen, 0, 3);
    for (std::size_t i = 0; i < r->d.size() && i < 4096; ++i) {
      w.push_back(std::clamp(v, out.lo, out.hi));
      v += pick(gen, 0, maxstep);
    }
    if (w.size() == r->d.size()) same(r->d, w, space);
  }
  // Constants, lines a x (all shifts' bounds exact at the smallest legal shift), clamped lines,
  // and two-value steps, on int8 and int16 inputs.
  for (const i64 c : {i64{-128}, i64{-1}, i64{0}, i64{5}, i64{127}}) {
    const auto y = qfold::tabulate(qfold::int8_domain, [&](i64) { return c; });
    same(qfold::int8_domain, y, {});
    same(qfold::int8_domain, y, {.output_type = int_type::i32});
  }
  for (i64 a = 0; a <= 5; ++a) {
    const auto y = qfold::tabulate(qfold::int8_domain, [&](i64 x) { return a * x; });
    same(qfold::int8_domain, y, {.output_type = int_type::i32});
    same(qfold::int8_domain, y, {.output_type = int_type::i32, .scale32 = false});
    const auto c = qfold::tabulate(qfold::int8_domain,
                                   [&](i64 x) { return std::clamp<i64>(a * x + 3, -128, 127); });
    same(qfold::int8_domain, c, {});
    const auto y16 = qfold::tabulate(qfold::int16_domain, [&](i64 x) { return a * x; });
    if (!sanitized || a < 2)
      same(qfold::int16_domain, y16, {.input_type = int_type::i16, .output_type = int_type::i32});
  }
  for (i64 at = -128; at <= 127; at += 17) {
    const auto y = qfold::tabulate(qfold::int8_domain, [&](i64 x) { return x < at ? -128 : 127; });
    same(qfold::int8_domain, y, {});
  }
  // Maps that fall somewhere (refused at once before; now only before a refusal is trusted): a
  // RESCALE map with one dip, and maps holding int64 extremes (no overflow: the sanitizer build).
  for (int i = 0; i < scaled(200); ++i) {
    auto r = make_random_rescale(gen, false);
    if (!r || r->y.size() < 3) continue;
    auto y = r->y;
    const auto k = static_cast<std::size_t>(pick(gen, 1, static_cast<i64>(y.size()) - 1));
    y[k] = y[k - 1] - pick(gen, 1, 3);
    const std::array<i64, 1> iz{r->attrs.input_zp};
    same(r->d, y, space_of(r->attrs, iz, r->attrs.scale32));
    const i64 wild =
        pick(gen, 0, 1) != 0 ? std::numeric_limits<i64>::max() : std::numeric_limits<i64>::min();
    y = r->y;
    y[k] = wild;
    same(r->d, y, space_of(r->attrs, iz, r->attrs.scale32));
    for (auto& v : y) v = pick(gen, 0, 1) != 0 ? std::numeric_limits<i64>::max() : v;
    same(r->d, y, space_of(r->attrs, iz, r->attrs.scale32));
    // A dip inside a clamped end (the verification must look at every code's value there).
    y = r->y;
    const qfold::int_range out = r->attrs.output_range();
    const std::size_t last = y.size() - 1 - static_cast<std::size_t>(pick(gen, 0, 2));
    if (y[last] == out.hi) y[last] -= 2;
    if (y[static_cast<std::size_t>(pick(gen, 0, 2))] == out.lo) y[1] = out.lo + 2;
    same(r->d, y, space_of(r->attrs, iz, r->attrs.scale32));
  }
  CHECK(found > scaled(1000));
  CHECK(refused > scaled(100));
}

namespace {
// Equal fractions p / q (q = 0: none) of two results.
bool same_fractions(const qfold::detail::synth::fractions& a,
                    const qfold::detail::synth::fractions& b) {
  const auto eq = [](i64 p1, i64 q1, i64 p2, i64 q2) {
    return (q1 == 0) == (q2 == 0) && (q1 == 0 || p1 * q2 == p2 * q1);
  };
  return a.wild == b.wild && (a.wild || (eq(a.lp, a.lq, b.lp, b.lq) && eq(a.up, a.uq, b.up, b.uq)));
}
}  // namespace

TEST_CASE("exact synthesize: every vector kernel equals the scalar loop", "[exact][synthesize]") {
  using namespace qfold::detail;
  const auto isas = runnable_isas();
  INFO("ISAs: " << isas.size());
  std::mt19937_64 gen(151);
  for (int round = 0; round < scaled(4000); ++round) {
    const auto n = static_cast<std::size_t>(pick(gen, 0, round % 10 == 0 ? 600 : 70));
    // A line with one planted miss (or none), values anywhere in int64.
    const i64 slope = pick(gen, -5, 5), start = pick(gen, -1000, 1000);
    std::vector<i64> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = start + slope * static_cast<i64>(i);
    if (n > 0 && pick(gen, 0, 3) != 0)
      y[static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(n) - 1))] += pick(gen, 0, 1) * 2 - 1;
    const auto base = static_cast<std::uint64_t>(start), step = static_cast<std::uint64_t>(slope);
    const std::size_t want = synth::off_line_scalar(y.data(), n, base, step);
    for (const auto isa : isas) CHECK(synth::first_off_line(y.data(), n, base, step, isa) == want);
    // A run of one value at the end of a random array.
    std::vector<i64> e(n);
    const i64 value = pick(gen, -3, 3);
    const auto run = static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(n)));
    for (std::size_t i = 0; i < n; ++i) e[i] = i + run >= n ? value : pick(gen, -3, 3);
    const std::size_t want_run = synth::trailing_scalar(e.data(), n, value);
    for (const auto isa : isas) CHECK(synth::trailing(e.data(), n, value, isa) == want_run);
    // A RESCALE (m, s) evaluated against a clamped map it may or may not give, every split.
    if (n > 0) {
      const qfold::int_range out{-128, 127};
      const i64 m = pick(gen, 0, 1 << 20), ozp = pick(gen, -5, 5), vlo = pick(gen, -300, 0);
      const int sh = static_cast<int>(pick(gen, 10, 24));
      std::vector<i64> g(n);
      for (std::size_t i = 0; i < n; ++i) {
        const i64 v = vlo + static_cast<i64>(i);
        g[i] = std::clamp<i64>(((v * m + (i64{1} << (sh - 1))) >> sh) + ozp, out.lo, out.hi);
      }
      if (pick(gen, 0, 1) != 0)
        g[static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(n) - 1))] += pick(gen, -2, 2);
      const auto a = static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(n)));
      const auto b = static_cast<std::size_t>(pick(gen, static_cast<i64>(a), static_cast<i64>(n)));
      const synth::verify_args args{vlo, a, b, m, sh, ozp, out};
      const bool want_ok = synth::reproduces_scalar(g, args);
      for (const auto isa : isas)
        CHECK(synth::reproduces_single(g, args, isa) ==
              (want_ok && (a == b || (g[a] > out.lo && g[b - 1] < out.hi))));
    }
    // Fractions of one sign over a non-decreasing run (u > 0), and over a wild one.
    const i64 ozp = pick(gen, -200, 200), u0 = pick(gen, static_cast<i64>(n) + 1, 70000);
    std::vector<i64> r(n);
    i64 v = pick(gen, -40000, 40000);
    for (auto& x : r) x = v += pick(gen, 0, 4);
    if (n > 0 && pick(gen, 0, 5) == 0) {  // any int64: the double lanes then hold any value
      const std::array<i64, 7> wild{std::numeric_limits<i64>::max(),
                                    std::numeric_limits<i64>::min(),
                                    i64{1} << 60,
                                    -(i64{1} << 61) + 5,
                                    pick(gen, i64{1} << 40, i64{1} << 62),
                                    pick(gen, i64{1} << 49, i64{1} << 51),
                                    -pick(gen, i64{1} << 49, i64{1} << 51)};
      r[static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(n) - 1))] =
          wild[static_cast<std::size_t>(pick(gen, 0, 6))];
    }
    // The interval whose codes count as inside: around the run's values (often all of them,
    // often not the first or last few), anywhere within |w| < 2^33 of ozp.
    qfold::int_range inner{ozp - (i64{1} << 33) + 1, ozp + (i64{1} << 33) - 1};
    if (n > 0 && pick(gen, 0, 3) != 0) {
      const auto [mn, mx] = std::minmax_element(r.begin(), r.end());
      // Clamped first: a wild value +- 1 would overflow.
      const i64 lo = std::clamp(*mn, inner.lo, inner.hi), hi = std::clamp(*mx, inner.lo, inner.hi);
      inner = {std::max(inner.lo, lo + pick(gen, -1, 1)),
               std::min(inner.hi, std::max(hi + pick(gen, -1, 1), lo + 1))};
      if (inner.lo > inner.hi) inner.hi = inner.lo;
    }
    for (const bool negative : {false, true}) {
      synth::fractions want_f;
      if (negative)
        synth::fractions_scalar<true>(r.data(), n, u0, ozp, inner, want_f);
      else
        synth::fractions_scalar<false>(r.data(), n, u0 - static_cast<i64>(n), ozp, inner, want_f);
      // `outside` against plain comparisons of every code.
      bool want_outside = false;
      for (const i64 x : r) want_outside = want_outside || x < inner.lo || x > inner.hi;
      CHECK(want_f.outside == want_outside);
      for (const auto isa : isas) {
        synth::fractions f;
        if (negative)
          synth::add_fractions<true>(r.data(), n, u0, ozp, inner, f, isa);
        else
          synth::add_fractions<false>(r.data(), n, u0 - static_cast<i64>(n), ozp, inner, f, isa);
        INFO("n " << n << " negative " << negative << " isa " << static_cast<int>(isa));
        CHECK(f.outside == want_outside);
        // A wild code makes the vector lanes' answer meaningless (never used): only compare
        // runs the scalar loop found exact.
        if (!want_f.wild) CHECK(same_fractions(f, want_f));
      }
    }
  }
}

TEST_CASE("exact synthesize: the same certificates with every vector kernel and map shape",
          "[exact][synthesize]") {
  // Forced scalar, baseline, AVX2 and AVX-512 kernels (where the CPU has them) on whole 8-bit and
  // 16-bit maps: RESCALE maps, the same maps with one code moved by one (kept non-decreasing, or
  // not: the candidate the end points and the bounds give is then wrong at that code alone),
  // lines with and without the shape hint classification gives, and clamped lines. Every
  // answer equals the interval method's (old_synth).
  using namespace qfold::detail;
  const auto isas = runnable_isas();
  std::mt19937_64 gen(152);
  int compared = 0, found = 0;
  const auto same = [&](domain d, const std::vector<i64>& y, const qfold::rescale_space& space,
                        synth::map_shape shape) {
    const auto o = old_synth::synthesize_rescale(d, y, space);
    for (const auto isa : isas) {
      const auto n = synthesize(d, y, space, {shape, 0}, isa);
      INFO("isa " << static_cast<int>(isa) << " shape " << static_cast<int>(shape) << " domain "
                  << d.lo << ".." << d.hi);
      REQUIRE(n.has_value() == o.has_value());
      if (n) {
        CHECK(n->attributes == o->attributes);
        CHECK(n->scale == o->scale);
      }
    }
    ++compared;
    found += o ? 1 : 0;
  };
  int int16_maps = 0;
  for (int round = 0; round < scaled(1500); ++round) {
    auto r = make_random_rescale(gen, int16_maps < (sanitized ? 1 : 12));
    if (!r) continue;
    if (r->d.size() > 4096) ++int16_maps;
    const std::array<i64, 1> iz{r->attrs.input_zp};
    const auto space = space_of(r->attrs, iz, r->attrs.scale32 && pick(gen, 0, 1) != 0);
    same(r->d, r->y, space, synth::map_shape::unknown);
    // One code off by one: at the code that binds the bounds most often (next to a clamp edge or
    // at the ends), or anywhere.
    const qfold::int_range out = r->attrs.output_range();
    for (int k = 0; k < 3; ++k) {
      auto y = r->y;
      const std::size_t n = y.size();
      std::size_t at = static_cast<std::size_t>(pick(gen, 0, static_cast<i64>(n) - 1));
      if (k == 0)
        at = static_cast<std::size_t>(std::lower_bound(y.begin(), y.end(), out.lo + 1) - y.begin());
      if (k == 1)
        at = static_cast<std::size_t>(std::lower_bound(y.begin(), y.end(), out.hi) - y.begin());
      if (at >= n) at = n - 1;
      const i64 nv = y[at] + (pick(gen, 0, 1) != 0 ? 1 : -1);
      if (!out.contains(nv)) continue;
      y[at] = nv;
      same(r->d, y, space, synth::map_shape::unknown);
    }
    // Values outside the output type next to the clamp edges (where the vector scans put the
    // ends of the unclamped run): never reproduced by a clamped RESCALE.
    for (const bool low : {true, false}) {
      auto y = r->y;
      const auto at = static_cast<std::size_t>(
          std::lower_bound(y.begin(), y.end(), low ? out.lo + 1 : out.hi) - y.begin());
      if (low && at < y.size()) y[at] = out.lo - 1;
      if (!low && at > 0) y[at - 1] = out.hi + 1;
      same(r->d, y, space, synth::map_shape::unknown);
    }
    // A code of the unclamped run (anywhere, or at v = 0) set to a clamp bound or just beyond:
    // the bounds taken for it are then not the map's, so the certificate must be evaluated.
    for (int k = 0; k < 2; ++k) {
      auto y = r->y;
      const auto a =
          static_cast<std::size_t>(std::lower_bound(y.begin(), y.end(), out.lo + 1) - y.begin());
      const auto b =
          static_cast<std::size_t>(std::lower_bound(y.begin(), y.end(), out.hi) - y.begin());
      if (a >= b) break;
      std::size_t at =
          static_cast<std::size_t>(pick(gen, static_cast<i64>(a), static_cast<i64>(b) - 1));
      if (k == 1 && r->d.contains(r->attrs.input_zp))
        at = static_cast<std::size_t>(r->attrs.input_zp - r->d.lo);
      const std::array<i64, 4> bad{out.lo, out.lo - 1, out.hi, out.hi + 1};
      y[at] = bad[static_cast<std::size_t>(pick(gen, 0, 3))];
      same(r->d, y, space, synth::map_shape::unknown);
    }
    // A code far outside any type in the middle (the double lanes then hold garbage).
    {
      auto y = r->y;
      y[y.size() / 2] = (pick(gen, 0, 1) != 0 ? 1 : -1) * pick(gen, i64{1} << 40, i64{1} << 62);
      same(r->d, y, space, synth::map_shape::unknown);
    }
  }
  // Lines a x + b, a >= 0 (rising) or < 0 (falling), with the hint and without.
  for (int round = 0; round < scaled(400); ++round) {
    const bool wide16 = round % 50 == 0;
    const domain d = wide16 ? qfold::int16_domain : qfold::int8_domain;
    const i64 a = pick(gen, -3, 6), b = pick(gen, 0, 2) == 0 ? 0 : pick(gen, -300, 300);
    const auto y = qfold::tabulate(d, [&](i64 x) { return a * x + b; });
    const qfold::rescale_space space{.input_type = wide16 ? int_type::i16 : int_type::i8,
                                     .output_type = int_type::i32,
                                     .scale32 = pick(gen, 0, 3) != 0};
    same(d, y, space, synth::map_shape::unknown);
    same(d, y, space, a >= 0 ? synth::map_shape::rising_line : synth::map_shape::falling_line);
    // Clamped to int8 (a line no more): no hint.
    const auto c = qfold::tabulate(d, [&](i64 x) { return std::clamp<i64>(a * x + b, -128, 127); });
    same(d, c, {.input_type = space.input_type}, synth::map_shape::unknown);
  }
  CHECK(compared > scaled(2000));
  CHECK(found > scaled(1000));
}

TEST_CASE("exact synthesize: the smallest legal shift from bit widths equals the loop",
          "[exact][synthesize]") {
  // smallest_legal_shift now takes bit widths; the loop of the interval method (old_synth) is the
  // definition. Every domain edge of int8, uint8, int16 and int32 against every kind of zero point.
  std::mt19937_64 gen(154);
  const std::vector<i64> ends{-2147483648, -65536, -32769, -32768, -129,      -128, -2,
                              -1,          0,      1,      2,      127,       128,  255,
                              256,         32767,  32768,  65535,  2147483647};
  for (const i64 lo : ends)
    for (const i64 hi : ends) {
      if (lo > hi) continue;
      for (int k = 0; k < 20; ++k) {
        const i64 zp =
            k < 10 ? ends[static_cast<std::size_t>(pick(gen, 0, 18))] : pick(gen, -70000, 70000);
        for (const bool s32 : {false, true})
          CHECK(qfold::detail::smallest_legal_shift({lo, hi}, zp, s32) ==
                old_synth::detail::smallest_legal_shift({lo, hi}, zp, s32));
      }
    }
}

TEST_CASE("exact synthesize: the first feasible shift from bit widths equals the search",
          "[exact][synthesize]") {
  // first_feasible finds the first shift where [M_62, H_62] holds a multiple of 2^(62-s) from the
  // bits where M - 1 and H differ; the definition is the search over every shift.
  __extension__ typedef __int128 wide;
  std::mt19937_64 gen(155);
  for (int round = 0; round < scaled(200000); ++round) {
    const int bits = static_cast<int>(pick(gen, 0, 100));
    const auto big = [&] {
      wide v = 0;
      for (int b = 0; b < bits; b += 30) v = (v << 30) | pick(gen, 0, (1 << 30) - 1);
      return bits == 0 ? wide{pick(gen, 0, 3)} : v >> (bits % 30 == 0 ? 0 : 30 - bits % 30);
    };
    const wide m = pick(gen, 0, 9) == 0 ? wide{0} : big();
    const wide h = pick(gen, 0, 1) != 0 ? m + big() : big();
    const int s_lo = static_cast<int>(pick(gen, 2, 63));
    const i64 cap = pick(gen, 0, 1) != 0 ? 2147483647 : 32767;
    std::optional<qfold::scale_factor> want;
    for (int s = s_lo; s <= 62 && !want && m <= h; ++s) {
      const wide ms = m == 0 ? 0 : ((m - 1) >> (62 - s)) + 1;
      if (ms <= (h >> (62 - s))) {
        if (ms <= cap) want = qfold::scale_factor{static_cast<std::int32_t>(ms), s};
        break;
      }
    }
    const auto got = qfold::detail::synth::first_feasible(m, h, s_lo, cap);
    REQUIRE(got.has_value() == want.has_value());
    if (got) CHECK(*got == *want);
  }
}

TEST_CASE(
    "exact synthesize: rescale_shifts keeps apply_scale_16's result and the zero-point add "
    "inside int32",
    "[exact][synthesize]") {
  // int48 codes near +-2^43 and 2^30, clamped outputs: every multiplier that keeps the scaled
  // value an int32 gives the clamp, and larger ones make apply_scale_16 (or the output zero point
  // add) fail. Found by fuzz_exact_domains (regression seed regression_shifts_int48_result). The
  // reference: every multiplier 0..32767 at every shift through ref_rescale, the exact set.
  struct case_ {
    domain d;
    i64 y, ozp;
  };
  const i64 big = i64{1} << 43;
  for (const auto& c : {case_{{big, big}, 127, 0}, case_{{big - 2, big + 1}, 127, 5},
                        case_{{-big - 1, -big + 2}, -128, 0}, case_{{-big, -big}, -128, -7},
                        case_{{(i64{1} << 30), (i64{1} << 30) + 3}, 127, 100}}) {
    const qfold::rescale_space space{
        .input_type = int_type::i48, .output_type = int_type::i8, .scale32 = false};
    const std::vector<i64> y(c.d.size(), c.y);
    const auto ranges = qfold::rescale_shifts(c.d, y, space, 0, c.ozp, false);
    const qfold::rescale_attributes a{.input_type = int_type::i48,
                                      .output_type = int_type::i8,
                                      .scale32 = false,
                                      .output_zp = c.ozp};
    // Where the int32 bound binds (a multiplier above 2^(s - 12) overflows at 2^43: s <= 26,
    // and at 2^30 s <= 13) and a few shifts beyond, where it does not.
    for (const int s : {2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17,
                        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 30, 40, 50, 62}) {
      i64 lo = -1, hi = -2, works = 0;
      for (i64 m = 0; m <= 32767; ++m) {
        bool ok = true;
        for (i64 x = c.d.lo; ok && x <= c.d.hi; ++x) {
          const auto r = ref_rescale(a, m, s, x);
          ok = r && *r == c.y;
        }
        if (!ok) continue;
        if (lo < 0) lo = m;
        hi = m;
        ++works;
      }
      INFO("x from " << c.d.lo << ", shift " << s);
      REQUIRE(works == (works == 0 ? 0 : hi - lo + 1));  // an interval
      const auto& q = ranges[static_cast<std::size_t>(s)];
      CHECK(q.empty() == (works == 0));
      if (works != 0) {
        CHECK(q.lo == lo);
        CHECK(q.hi == hi);
      }
    }
  }
}

TEST_CASE("exact synthesize: floor and ceil of p 2^61 / q equal unsigned 128-bit division",
          "[exact][synthesize]") {
  // floor_times_2_61 / ceil_times_2_61 (long division, a shift when q is a power of two) over
  // their whole stated range |p| < 2^35, 0 < q < 2^18. The reference: |p| 2^61 / q by unsigned
  // __int128 division and remainder, the sign applied after (floor(-z) = -ceil(z)).
  __extension__ typedef __int128 wide;
  __extension__ typedef unsigned __int128 uwide;
  const auto ref = [](i64 p, i64 q, bool up) {
    const bool neg = p < 0;
    const uwide n = static_cast<uwide>(neg ? -p : p) << 61, uq = static_cast<uwide>(q);
    const uwide down = n / uq, ceil = down + (n % uq != 0 ? 1 : 0);  // of |p| 2^61 / q
    return neg ? -static_cast<wide>(up ? down : ceil) : static_cast<wide>(up ? ceil : down);
  };
  const i64 pmax = (i64{1} << 35) - 1, qmax = (i64{1} << 18) - 1;
  std::vector<i64> qs{1, 2, 3, 5, 6, 7, 255, 257, 32767, 32769, 65535, 131071, qmax - 1, qmax};
  for (int k = 0; k < 18; ++k) {  // every power of two and its neighbours
    qs.push_back(i64{1} << k);
    if (k > 0) qs.push_back((i64{1} << k) - 1);
    qs.push_back((i64{1} << k) + 1);
  }
  std::vector<i64> ps{0, 1, 2, 3, 127, 128, 255, 256, 65535, 65536, i64{1} << 34, pmax - 1, pmax};
  for (const i64 q : qs) {  // multiples of q and their neighbours (remainder 0, 1, q - 1)
    for (const i64 m : {i64{1}, i64{2}, i64{3}, pmax / q}) {
      ps.push_back(m * q);
      ps.push_back(m * q - 1);
      if (m * q + 1 <= pmax) ps.push_back(m * q + 1);
    }
  }
  const std::size_t listed = ps.size();
  for (std::size_t i = 0; i < listed; ++i) ps.push_back(-ps[i]);
  std::size_t checked = 0;
  const auto check = [&](i64 p, i64 q) {
    INFO("p " << p << " q " << q);
    REQUIRE(qfold::detail::synth::floor_times_2_61(p, q) == ref(p, q, false));
    REQUIRE(qfold::detail::synth::ceil_times_2_61(p, q) == ref(p, q, true));
    ++checked;
  };
  for (const i64 q : qs)
    for (const i64 p : ps) check(p, q);
  // Random p against every power of two and random q, p by magnitude class (small to 2^35).
  std::mt19937_64 gen(156);
  for (int round = 0; round < scaled(200000); ++round) {
    const i64 mag = i64{1} << pick(gen, 1, 35);
    const i64 p = pick(gen, -(mag - 1), mag - 1);
    const i64 q = round % 2 == 0 ? i64{1} << pick(gen, 0, 17) : pick(gen, 1, qmax);
    check(p, q);
  }
  CHECK(checked > static_cast<std::size_t>(scaled(200000)));
}

TEST_CASE("exact synthesize: candidates with illegal zero points are skipped, results unchanged",
          "[exact][synthesize]") {
  // The synthesis skips an input or output zero point that validate() would refuse before any
  // evaluation, validates the rounding once per space, steps over the illegal unsigned int16
  // output zero points 1..32767, and builds the certificate once, for the winner. The interval
  // method (old_synth) validates every candidate's attributes: both must agree on every map, in
  // spaces that mix legal and illegal input zero points, pin the output zero point to an illegal
  // value (y(izp) != 0 for int16 / int32 outputs), or leave it free; on small domains the
  // reference search confirms the smallest (shift, multiplier).
  std::mt19937_64 gen(157);
  int compared = 0, found = 0, with_reference = 0;
  const auto same = [&](domain d, const std::vector<i64>& y, const qfold::rescale_space& space) {
    const auto n = qfold::synthesize_rescale(d, y, space);
    const auto o = old_synth::synthesize_rescale(d, y, space);
    INFO("domain " << d.lo << ".." << d.hi << " in " << static_cast<int>(space.input_type) << "/"
                   << space.input_unsigned << " out " << static_cast<int>(space.output_type) << "/"
                   << space.output_unsigned << " scale32 " << space.scale32 << " dr "
                   << space.allow_double_round << " izps " << space.input_zero_points.size());
    REQUIRE(n.has_value() == o.has_value());
    if (n) {
      CHECK(n->attributes == o->attributes);
      CHECK(n->scale == o->scale);
      CHECK(ref_reproduces(d, y, *n));
      ++found;
    }
    // (The reference search tries every output zero point a candidate leaves free: kept short.)
    std::size_t ozps = 0;
    const std::array<i64, 1> zero{0};
    for (const i64 izp :
         space.input_zero_points.empty() ? std::span<const i64>(zero) : space.input_zero_points)
      ozps += output_zero_points(d, y, space, izp).size();
    if (d.size() <= 48 && ozps <= 8) {
      const auto r = reference_smallest(d, y, space);
      REQUIRE(r.has_value() == n.has_value());
      if (n) CHECK(n->scale == r->scale);
      ++with_reference;
    }
    ++compared;
  };
  for (int round = 0; round < scaled(600); ++round) {
    auto r = make_random_rescale(gen, round % 100 == 0);
    if (!r) continue;
    if (round % 3 == 0 && r->d.size() > 48) {  // a small domain, for the reference search
      const i64 lo = pick(gen, r->d.lo, r->d.hi - 40);
      r->d = domain{lo, lo + pick(gen, 2, 40)};
      r->y.clear();
      for (i64 x = r->d.lo; x <= r->d.hi; ++x)
        r->y.push_back(*ref_rescale(r->attrs, r->multiplier, r->shift, x));
    }
    // The map's own input zero point among legal and illegal ones for every input type (i8:
    // -128..127, u8: 0..255, i16: 0 only), some inside the domain (pinning the output zero
    // point), some outside (leaving it free).
    std::vector<i64> izps{r->attrs.input_zp};
    for (int k = 0; k < 3; ++k) {
      const std::array<i64, 9> extra{
          -129, 256, 1000, -1, 0, 200, 128, 32768, pick(gen, r->d.lo, r->d.hi)};
      izps.insert(izps.begin() + pick(gen, 0, static_cast<i64>(izps.size())),
                  extra[static_cast<std::size_t>(pick(gen, 0, 8))]);
    }
    const std::span<const i64> iz(izps);
    for (const bool dr : {false, true}) {
      same(r->d, r->y, space_of(r->attrs, iz, dr));
      // The same map in other output types (the output zero point becomes illegal or pinned).
      auto space = space_of(r->attrs, iz, dr);
      space.output_type = pick(gen, 0, 1) != 0 ? int_type::i16 : int_type::i32;
      space.output_unsigned = space.output_type == int_type::i16 && pick(gen, 0, 1) != 0;
      same(r->d, r->y, space);
      space.scale32 = !space.scale32;
      same(r->d, r->y, space);
    }
  }
  // Unsigned int16 output: maps at output zero point 0 and 32768, with the input zero point
  // outside the domain (both candidates tried), inside it, or clamped there.
  for (int round = 0; round < scaled(200); ++round) {
    const i64 ozp = pick(gen, 0, 1) * 32768, izp = pick(gen, -128, 127);
    const qfold::rescale_attributes a{.input_type = int_type::i8,
                                      .output_type = int_type::i16,
                                      .output_unsigned = true,
                                      .input_zp = izp,
                                      .output_zp = ozp};
    const i64 lo = pick(gen, -128, 100);
    const domain d{lo, std::min<i64>(127, lo + pick(gen, 2, round % 2 == 0 ? 40 : 255))};
    const int shift = static_cast<int>(pick(gen, 9, 30));
    const i64 m = pick(gen, 0, std::min<i64>(2147483647, i64{1} << (shift + 9)));
    std::vector<i64> y;
    for (i64 x = d.lo; x <= d.hi; ++x) {
      const auto v = ref_rescale(a, m, shift, x);
      if (v) y.push_back(*v);
    }
    if (y.size() != d.size()) continue;
    const std::array<i64, 2> izs{izp, pick(gen, -128, 127)};
    same(d, y,
         {.output_type = int_type::i16,
          .output_unsigned = true,
          .input_zero_points = std::span<const i64>(izs)});
  }
  CHECK(compared > scaled(2000));
  CHECK(found > scaled(500));
  CHECK(with_reference > scaled(300));
}
