// Rescale synthesis: the TOSA RESCALE (multiplier, shift, zero points, rounding, clamp) that
// reproduces an integer map on every input, found by exact interval arithmetic on the rounding
// conditions (no search over floats), and re-checked over the whole domain before it is returned.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

#include "qfold/arith/isa.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/detail/algorithm.hpp"
#include "qfold/exact/domain.hpp"

namespace qfold {

// Which RESCALEs a synthesis may return: the element types and signedness of both sides, the
// multiplier width, whether DOUBLE_ROUND may be used, and the input zero points to try (empty:
// 0 only). The output zero point is derived, or searched over every legal value.
struct rescale_space {
  int_type input_type = int_type::i8;
  bool input_unsigned = false;
  int_type output_type = int_type::i8;
  bool output_unsigned = false;
  bool scale32 = true;
  bool allow_double_round = true;
  std::span<const std::int64_t> input_zero_points{};
};

// One RESCALE; evaluate with checked::rescale_value(attributes, scale, x).
struct rescale_certificate {
  rescale_attributes attributes;
  scale_factor scale;
  friend constexpr bool operator==(const rescale_certificate&,
                                   const rescale_certificate&) = default;
};

// The multipliers that work at one shift (lo > hi: none).
struct multiplier_range {
  std::int64_t lo = 1, hi = 0;
  [[nodiscard]] constexpr bool empty() const noexcept { return lo > hi; }
};

namespace detail {
[[nodiscard]] constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  return -floor_div(-a, b);
}

// With a 16-bit multiplier (int48 inputs) |v| < 2^47 and m < 2^15; otherwise |v| < 2^31 and
// m < 2^31, or |v| < 2^17 where the search goes up to 2^45 (smallest): always |v m| < 2^62, so a
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
// clamp bound, none where the output range is a single value). The scaled value R(v) must also
// be an int32 (apply_scale_16's REQUIRE; apply_scale_32's inputs cannot leave it) and so must
// R(v) + ozp (apply_add_s<int32_t>): R is non-decreasing in v for m >= 0, so the domain's two
// ends bound m from above.
[[nodiscard]] constexpr multiplier_range multipliers(domain d, std::span<const std::int64_t> y,
                                                     const candidate& k, int s, int_range out,
                                                     std::int64_t cap) noexcept {
  multiplier_range r{0, cap};
  const std::int64_t half = std::int64_t{1} << (s - 1);
  const std::int64_t nudge = k.double_round && s > 31 ? std::int64_t{1} << 30 : 0;
  {
    const std::int64_t top = std::min(int32_max, int32_max - k.output_zp),
                       bottom = std::max(int32_min, int32_min - k.output_zp);
    const std::int64_t vhi = d.hi - k.input_zp, vlo = d.lo - k.input_zp;
    if (vhi > 0)  // R(vhi) <= top  <=>  vhi m <= (top + 1) 2^s - c - 1
      r.hi = std::min(r.hi, floor_div(shifted_minus(top + 1, s, half + nudge) - 1, vhi));
    if (vlo < 0)  // R(vlo) >= bottom  <=>  vlo m >= bottom 2^s - c
      r.hi = std::min(r.hi, floor_div(shifted_minus(bottom, s, half - nudge), vlo));
  }
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
  if (!scale32) return 2;
  // The smallest s with -2^(s-1) <= vlo and vhi < 2^(s-1): s - 1 >= bit_width(vhi) and
  // s - 1 >= bit_width(-vlo - 1); at least 2, at most 62.
  const std::int64_t vlo = d.lo - input_zp, vhi = d.hi - input_zp;
  const int up = vhi > 0 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(vhi))) : 0;
  const int down =
      vlo < 0 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(-(vlo + 1)))) : 0;
  return std::min(std::max(1 + std::max(up, down), 2), 62);
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
  // The uncapped ranges are exact only while |v m| < 2^62 (see `beyond`): |v| < 2^17. Wider
  // inputs (int48) skip the search and try every shift.
  const bool narrow =
      d.lo - k.input_zp > -(std::int64_t{1} << 17) && d.hi - k.input_zp < (std::int64_t{1} << 17);
  if (!k.double_round && narrow) {
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

// In a namespace of their own: their short names must not shadow locals of other headers.
namespace synth {
// --- The fast exact path (single rounding, |x - input_zp| <= 2^17) -------------------------------
// At shift s the multipliers that work are [M_s, H_s] (the intersection of every code's interval;
// M_s counts m >= 0). Each code's bounds are ceil / floor of (2t -+ 1) 2^(s-1) / v, and
// ceil(ceil(z) / 2) = ceil(z / 2), floor(floor(z) / 2) = floor(z / 2): so M_s = ceil(M_62 /
// 2^(62-s)) and H_s = floor(H_62 / 2^(62-s)) for every s, and the exact bounds at shift 62 give
// every shift at once. Feasible shifts are an interval: M_s <= H_s is upward closed, and M_s <= cap
// downward closed (M_s never falls as s grows).
__extension__ typedef __int128 wide;
__extension__ typedef unsigned __int128 uwide;

template <class T>
[[nodiscard]] constexpr T floor_div_t(T a, T b) noexcept {
  const T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <class T>
[[nodiscard]] constexpr T ceil_div_t(T a, T b) noexcept {
  return -floor_div_t<T>(-a, b);
}

inline constexpr std::int64_t fast_max_v = std::int64_t{1} << 17;

// One code's multiplier interval at shift s in 128 bits (single rounding); false when no
// multiplier works (v = 0 with the wrong target). t = y - output_zp.
[[nodiscard]] constexpr bool code_bounds(std::int64_t v, std::int64_t yv, std::int64_t ozp, int s,
                                         int_range out, wide& lo, wide& hi) noexcept {
  const bool need_ge = yv != out.lo, need_le = yv != out.hi;
  const wide t = wide{yv} - ozp;
  if (v == 0) return !((need_ge && t > 0) || (need_le && t < 0));
  const wide a = (2 * t - 1) * (wide{1} << (s - 1));      // v m >= a
  const wide b = (2 * t + 1) * (wide{1} << (s - 1)) - 1;  // v m <= b
  if (v > 0) {
    if (need_ge) lo = std::max(lo, ceil_div_t<wide>(a, v));
    if (need_le) hi = std::min(hi, floor_div_t<wide>(b, v));
  } else {
    if (need_ge) hi = std::min(hi, floor_div_t<wide>(a, v));
    if (need_le) lo = std::max(lo, ceil_div_t<wide>(b, v));
  }
  return true;
}

// The bounds as fractions, without a division per code. With u = |v| and w = t for v > 0, w = -t
// for v < 0, every code of one sign of v bounds the scale m / 2^(s-1) from below by (2w - 1) / u
// and from above by (2w + 1) / u (for v > 0: v m >= (2t - 1) 2^(s-1) and v m < (2t + 1) 2^(s-1);
// for v < 0 the same with the inequalities' sides exchanged), so only the largest lower and the
// smallest upper fraction of each sign matter. They are kept as p / q (q > 0; q = 0 is -inf for
// `lower`, +inf for `upper`) and compared by cross products: |w| < 2^33 and u <= 2^17 keep every
// product below 2^52, exact in int64 and in double. `outside` says whether some code lies outside
// an interval the caller names (`inner`: strictly inside the output range, |w| < 2^33); when
// none does, every code's bounds were taken exactly, so the certificate needs no evaluation.
inline constexpr std::int64_t max_w = std::int64_t{1} << 33;
struct fractions {
  std::int64_t lp = -1, lq = 0;  // the largest (2w - 1) / u
  std::int64_t up = 1, uq = 0;   // the smallest (2w + 1) / u
  bool wild = false;             // some |w| >= 2^33 (not exact: the caller gives up)
  bool outside = false;          // some code outside `inner` (always so when wild)
  constexpr void lower(std::int64_t p, std::int64_t q) noexcept {
    if (p * lq > lp * q) lp = p, lq = q;
  }
  constexpr void upper(std::int64_t p, std::int64_t q) noexcept {
    if (p * uq < up * q) up = p, uq = q;
  }
};
[[nodiscard]] constexpr bool w_fits(std::int64_t yv, std::int64_t ozp) noexcept {
  return static_cast<std::uint64_t>(yv) - static_cast<std::uint64_t>(ozp) +
             static_cast<std::uint64_t>(max_w) <
         2 * static_cast<std::uint64_t>(max_w);
}

// Codes y[0..n) of one sign strictly inside the output range, u = u0 + i (v > 0) or u0 - i;
// `inner` (lo <= hi) lies within |w| < 2^33.
template <bool Negative>
constexpr void fractions_scalar(const std::int64_t* y, std::size_t n, std::int64_t u0,
                                std::int64_t ozp, int_range inner, fractions& f) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    if (y[i] < inner.lo || y[i] > inner.hi) f.outside = true;
    if (!w_fits(y[i], ozp)) {
      f.wild = true;
      return;
    }
    const std::int64_t t = y[i] - ozp, w = Negative ? -t : t;
    const std::int64_t u =
        Negative ? u0 - static_cast<std::int64_t>(i) : u0 + static_cast<std::int64_t>(i);
    f.lower(2 * w - 1, u);
    f.upper(2 * w + 1, u);
  }
}

// floor(p 2^61 / q) and ceil(p 2^61 / q) for |p| < 2^35, 0 < q < 2^18: long division in two
// 64-bit steps (no 128-bit division): p 2^27 (below 2^62) by q, then the remainder (below 2^18)
// times 2^34. For q = 2^k (often: an end of an int8 or int16 domain, u = 128 or 32768) the
// quotient is exact, p 2^(61-k): one shift instead of two divisions ((q & (q - 1)) == 0 rather
// than std::has_single_bit, which is a library call without -mpopcnt).
[[nodiscard]] constexpr wide floor_times_2_61(std::int64_t p, std::int64_t q) noexcept {
  if ((q & (q - 1)) == 0)
    return wide{p} * (wide{1} << (61 - std::countr_zero(static_cast<std::uint64_t>(q))));
  const std::int64_t n0 = p * (std::int64_t{1} << 27);
  const std::int64_t q0 = floor_div_t<std::int64_t>(n0, q), r0 = n0 - q0 * q;  // 0 <= r0 < q
  return wide{q0} * (std::int64_t{1} << 34) + (r0 << 34) / q;
}
[[nodiscard]] constexpr wide ceil_times_2_61(std::int64_t p, std::int64_t q) noexcept {
  return -floor_times_2_61(-p, q);
}

// The bounds at shift 62 that the fractions of each sign give (K = 2^61): for v > 0,
// M >= ceil(K lower) and H <= ceil(K upper) - 1 (the upper inequality is strict); for v < 0,
// M >= floor(K lower) + 1 and H <= floor(K upper). Of the two lower bounds the one from the larger
// fraction is the larger (v < 0 on a tie: floor(z) + 1 >= ceil(z)), and of the two upper bounds
// the one from the smaller (v > 0 on a tie: ceil(z) - 1 <= floor(z)): one long division each.
constexpr void apply_fractions(const fractions& pos, const fractions& neg, wide& lo,
                               wide& hi) noexcept {
  if (pos.lq > 0 && (neg.lq == 0 || pos.lp * neg.lq > neg.lp * pos.lq))
    lo = std::max(lo, ceil_times_2_61(pos.lp, pos.lq));
  else if (neg.lq > 0)
    lo = std::max(lo, floor_times_2_61(neg.lp, neg.lq) + 1);
  if (pos.uq > 0 && (neg.uq == 0 || pos.up * neg.uq <= neg.up * pos.uq))
    hi = std::min(hi, ceil_times_2_61(pos.up, pos.uq) - 1);
  else if (neg.uq > 0)
    hi = std::min(hi, floor_times_2_61(neg.up, neg.uq));
}

// Values are biased by 2^63 so that a logical shift floors (u = z + 2^63 gives
// u >> s = floor(z / 2^s) + 2^(63-s)), and "a < b" is the sign bit of a - b (all terms stay
// within +-2^62, so no difference overflows).
inline constexpr std::uint64_t bias = std::uint64_t{1} << 63;

[[nodiscard]] constexpr std::uint64_t biased_start(std::int64_t v, std::int64_t m, int s) noexcept {
  return static_cast<std::uint64_t>(v * m + (std::int64_t{1} << (s - 1))) + bias;
}

// One pass over codes: r = (acc + i m) >> s (the biased RESCALE value of code i) against a
// target. `equal`: any bit of the result set means some r differs from y + c; `at_most` /
// `at_least`: the top bit set means some r > c / r < c.
enum class scan : std::uint8_t { equal, at_most, at_least };

// `at_most` / `at_least` also require y == yc (the clamp bound): then the top bit is set as well.
template <scan K>
[[nodiscard]] constexpr std::uint64_t scan_scalar(const std::int64_t* y, std::size_t count,
                                                  std::uint64_t acc, std::uint64_t um, int s,
                                                  std::uint64_t c, std::uint64_t yc) noexcept {
  std::uint64_t bad = 0;
  for (std::size_t i = 0; i < count; ++i, acc += um) {
    const std::uint64_t r = acc >> s, yi = static_cast<std::uint64_t>(y[i]);
    if constexpr (K == scan::equal)
      bad |= r ^ (yi + c);
    else if constexpr (K == scan::at_most)
      bad |= (c - r) | (yi ^ yc) | (0 - (yi ^ yc));
    else
      bad |= (r - c) | (yi ^ yc) | (0 - (yi ^ yc));
  }
  return bad;
}

// Whether (m, s) with single rounding gives y on every code: clamp(floor((v m + 2^(s-1)) / 2^s)
// + ozp) == y, for attributes already validated, s at least the smallest legal shift (so the
// checked evaluation could not fail), |v| <= 2^17 and m <= 2^31. Codes [0, a) hold out.lo, [b, n)
// out.hi, [a, b) values strictly between (when y is non-decreasing; each is checked, so any y is
// judged right); R + ozp must equal y in [a, b), be at most out.lo before and at least out.hi
// after. Every code is evaluated.
struct verify_args {
  std::int64_t vlo;
  std::size_t a, b;
  std::int64_t m;
  int s;
  std::int64_t ozp;
  int_range out;
};
[[nodiscard]] constexpr bool reproduces_scalar(std::span<const std::int64_t> y,
                                               const verify_args& g) noexcept {
  const std::uint64_t k = std::uint64_t{1} << (63 - g.s);  // R + k = the biased shift
  const std::uint64_t um = static_cast<std::uint64_t>(g.m);
  const std::uint64_t shift_y = k - static_cast<std::uint64_t>(g.ozp);  // y + shift_y = t + k
  const std::uint64_t acc = biased_start(g.vlo, g.m, g.s);
  const std::int64_t* p = y.data();
  if (scan_scalar<scan::equal>(p + g.a, g.b - g.a, acc + g.a * um, um, g.s, shift_y, 0) != 0)
    return false;
  const std::uint64_t lo_k = static_cast<std::uint64_t>(g.out.lo) + shift_y;
  const std::uint64_t hi_k = static_cast<std::uint64_t>(g.out.hi) + shift_y;
  const std::uint64_t sign =
      scan_scalar<scan::at_most>(p, g.a, acc, um, g.s, lo_k, static_cast<std::uint64_t>(g.out.lo)) |
      scan_scalar<scan::at_least>(p + g.b, y.size() - g.b, acc + g.b * um, um, g.s, hi_k,
                                  static_cast<std::uint64_t>(g.out.hi));
  return (sign >> 63) == 0;
}

// The first i in [0, n) with y[i] != base + i step (mod 2^64), or n.
[[nodiscard]] constexpr std::size_t off_line_scalar(const std::int64_t* y, std::size_t n,
                                                    std::uint64_t base,
                                                    std::uint64_t step) noexcept {
  for (std::size_t i = 0; i < n; ++i, base += step)
    if (static_cast<std::uint64_t>(y[i]) != base) return i;
  return n;
}

// --- Vector copies (GCC/clang vector extensions)
// --------------------------------------------------- Each kernel is a template over the vector
// type, inlined into one function per ISA: two lanes (SSE2, no -march needed), and on x86-64
// [[gnu::target]] copies for AVX2 and AVX-512F that run only when the CPU has them
// (cpu_vector_isa). Vectors never cross a function boundary.
__extension__ typedef std::uint64_t u64x2 __attribute__((vector_size(16)));
__extension__ typedef double f64x2 __attribute__((vector_size(16)));
#if defined(QFOLD_DETAIL_X86_TARGETS)
__extension__ typedef std::uint64_t u64x4 __attribute__((vector_size(32)));
__extension__ typedef double f64x4 __attribute__((vector_size(32)));
__extension__ typedef std::uint64_t u64x8 __attribute__((vector_size(64)));
__extension__ typedef double f64x8 __attribute__((vector_size(64)));
#endif

template <class V>
inline constexpr std::size_t lanes_of = sizeof(V) / 8;

// (Helpers take and fill references: a vector passed or returned by value would change the ABI
// of a default-target function, which GCC warns about.)
template <class V, class T>
[[gnu::always_inline]] inline void splat(V& v, T x) noexcept {
  for (std::size_t k = 0; k < lanes_of<V>; ++k) v[k] = x;
}
template <class V>
[[gnu::always_inline]] inline void load(V& v, const std::int64_t* p) noexcept {
  __builtin_memcpy(&v, p, sizeof v);
}
template <class U>
[[gnu::always_inline]] inline std::uint64_t or_lanes(const U& v) noexcept {
  std::uint64_t r = 0;
  for (std::size_t k = 0; k < lanes_of<U>; ++k) r |= v[k];
  return r;
}

template <class U>
[[gnu::always_inline]] inline std::size_t off_line_v(const std::int64_t* y, std::size_t n,
                                                     std::uint64_t base,
                                                     std::uint64_t step) noexcept {
  constexpr std::size_t w = lanes_of<U>, group = 4 * w;
  if (n < w) return off_line_scalar(y, n, base, step);
  U a0 = {};
  for (std::size_t k = 0; k < w; ++k) a0[k] = base + k * step;
  U sw = {}, sg = {};
  splat(sw, w * step);
  splat(sg, group * step);
  U a1 = a0 + sw, a2 = a1 + sw, a3 = a2 + sw;
  std::size_t i = 0;
  for (; i + group <= n; i += group, a0 += sg, a1 += sg, a2 += sg, a3 += sg) {
    U y0, y1, y2, y3;
    load(y0, y + i);
    load(y1, y + i + w);
    load(y2, y + i + 2 * w);
    load(y3, y + i + 3 * w);
    if (or_lanes((y0 ^ a0) | (y1 ^ a1) | (y2 ^ a2) | (y3 ^ a3)) != 0) break;
  }
  // One vector at a time (from the block that differs, or in the tail), the last one ending at n
  // (its codes before i are known to match); the lane by the scalar loop within that vector.
  for (;; i += w, a0 += sw) {
    const std::size_t at = i + w <= n ? i : n - w;
    if (at != i) {
      if (i == n) return n;
      U back = {};
      splat(back, (i - at) * step);
      a0 -= back;
    }
    U y0;
    load(y0, y + at);
    if (or_lanes(y0 ^ a0) != 0) return at + off_line_scalar(y + at, w, base + at * step, step);
    if (at != i) return n;
  }
}

// How many codes at the end of y[0..n) equal value.
[[nodiscard]] constexpr std::size_t trailing_scalar(const std::int64_t* y, std::size_t n,
                                                    std::int64_t value) noexcept {
  std::size_t k = 0;
  while (k < n && y[n - 1 - k] == value) ++k;
  return k;
}
template <class U>
[[gnu::always_inline]] inline std::size_t trailing_v(const std::int64_t* y, std::size_t n,
                                                     std::int64_t value) noexcept {
  constexpr std::size_t w = lanes_of<U>, group = 4 * w;
  if (n < w) return trailing_scalar(y, n, value);
  U vv = {};
  splat(vv, static_cast<std::uint64_t>(value));
  std::size_t i = n;  // y[i..n) == value
  for (; i >= group; i -= group) {
    U y0, y1, y2, y3;
    load(y0, y + i - group);
    load(y1, y + i - group + w);
    load(y2, y + i - group + 2 * w);
    load(y3, y + i - group + 3 * w);
    if (or_lanes((y0 ^ vv) | (y1 ^ vv) | (y2 ^ vv) | (y3 ^ vv)) != 0) break;
  }
  // One vector at a time, the last one starting at 0 (its codes from i on are known to match).
  for (;; i -= w) {
    const std::size_t at = i >= w ? i - w : 0;
    if (i == 0) return n;
    U y0;
    load(y0, y + at);
    if (or_lanes(y0 ^ vv) != 0) return n - (at + w) + trailing_scalar(y + at, w, value);
    if (at == 0) return n;
  }
}

template <scan K, class U>
[[gnu::always_inline]] inline std::uint64_t scan_v(const std::int64_t* y, std::size_t count,
                                                   std::uint64_t acc, std::uint64_t um, int s,
                                                   std::uint64_t c, std::uint64_t yc) noexcept {
  constexpr std::size_t w = lanes_of<U>;
  if (count < w) return scan_scalar<K>(y, count, acc, um, s, c, yc);
  U a0 = {};
  for (std::size_t k = 0; k < w; ++k) a0[k] = acc + k * um;
  U sw = {}, cv = {}, ycv = {}, bad = {};
  splat(sw, w * um);
  splat(cv, c);
  splat(ycv, yc);
  const auto one = [&](std::size_t at, const U& a) {
    U y0;
    load(y0, y + at);
    if constexpr (K == scan::equal) {
      bad |= (a >> s) ^ (y0 + cv);
    } else {
      const U o = y0 ^ ycv;
      bad |= (K == scan::at_most ? cv - (a >> s) : (a >> s) - cv) | o | (0 - o);
    }
  };
  std::size_t i = 0;
  for (; i + w <= count; i += w, a0 += sw) one(i, a0);
  if (i < count) {  // the last w codes again (a code checked twice changes nothing)
    U back = {};
    splat(back, (i - (count - w)) * um);
    one(count - w, a0 - back);
  }
  return or_lanes(bad);
}

template <class U>
[[gnu::always_inline]] inline bool reproduces_v(std::span<const std::int64_t> y,
                                                const verify_args& g) noexcept {
  const std::uint64_t k = std::uint64_t{1} << (63 - g.s);
  const std::uint64_t um = static_cast<std::uint64_t>(g.m);
  const std::uint64_t shift_y = k - static_cast<std::uint64_t>(g.ozp);
  const std::uint64_t acc = biased_start(g.vlo, g.m, g.s);
  const std::int64_t* p = y.data();
  if (scan_v<scan::equal, U>(p + g.a, g.b - g.a, acc + g.a * um, um, g.s, shift_y, 0) != 0)
    return false;
  const std::uint64_t lo_k = static_cast<std::uint64_t>(g.out.lo) + shift_y;
  const std::uint64_t hi_k = static_cast<std::uint64_t>(g.out.hi) + shift_y;
  const std::uint64_t sign =
      scan_v<scan::at_most, U>(p, g.a, acc, um, g.s, lo_k, static_cast<std::uint64_t>(g.out.lo)) |
      scan_v<scan::at_least, U>(p + g.b, y.size() - g.b, acc + g.b * um, um, g.s, hi_k,
                                static_cast<std::uint64_t>(g.out.hi));
  return (sign >> 63) == 0;
}

// fractions_scalar in double lanes. p = 2w - 1 is formed as an integer (2y - (2 ozp + 1) for
// v > 0, (2 ozp - 1) - 2y for v < 0) and converted exactly by adding the bits of 2^52 + 2^51 and
// subtracting that value (exact for |p| < 2^51); p + 2 = 2w + 1. With |w| < 2^33 the products
// are exact (below 2^52), so the comparisons are those of the scalar loop; each lane keeps its
// own best fractions, merged exactly in int64 at the end. No |w| check here: |w| is bounded by
// the run's ends for a non-decreasing map (the caller checks them), and for any other map the
// answer is never trusted (such a code is `outside`, so a certificate is evaluated on every
// code; a refusal is trusted only after the map is found non-decreasing), while unsigned and
// double lanes have no undefined behaviour.
// out = v with lane k taken from lane k ^ H (H a power of two below the lane count); a lane loop
// where the compiler lacks __builtin_shufflevector (GCC before 12).
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define QFOLD_DETAIL_SHUFFLEVECTOR 1
#endif
#endif
template <std::size_t H, class F>
[[gnu::always_inline]] inline void swap_lanes(F& out, const F& v) noexcept {
#if defined(QFOLD_DETAIL_SHUFFLEVECTOR)
  if constexpr (lanes_of<F> == 2) {
    out = __builtin_shufflevector(v, v, 1, 0);
  } else if constexpr (lanes_of<F> == 4) {
    if constexpr (H == 2)
      out = __builtin_shufflevector(v, v, 2, 3, 0, 1);
    else
      out = __builtin_shufflevector(v, v, 1, 0, 3, 2);
  } else {
    if constexpr (H == 4)
      out = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
    else if constexpr (H == 2)
      out = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
    else
      out = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
  }
#else
  for (std::size_t k = 0; k < lanes_of<F>; ++k) out[k] = v[k ^ H];
#endif
}
// Each lane's best fractions merged with those of lane k ^ H, then with k ^ H/2, ..., 1: lane 0
// ends with the best of all (a short dependency chain), which goes into f.
template <std::size_t H, class F>
[[gnu::always_inline]] inline void merge_lanes(F& lp, F& lq, F& up, F& uq, fractions& f) noexcept {
  if constexpr (H == 0) {
    // A lane fed a wild code may hold any double (or NaN): such a map is not non-decreasing, and
    // converting it to int64 (or its cross products beyond |p| < 2^35) would be undefined, so it
    // only marks the result inexact.
    const auto integral = [](double x) { return x > -0x1p35 && x < 0x1p35; };
    if (lq[0] > 0) {
      if (integral(lp[0]))
        f.lower(static_cast<std::int64_t>(lp[0]), static_cast<std::int64_t>(lq[0]));
      else
        f.wild = true;
    }
    if (uq[0] > 0) {
      if (integral(up[0]))
        f.upper(static_cast<std::int64_t>(up[0]), static_cast<std::int64_t>(uq[0]));
      else
        f.wild = true;
    }
  } else {
    F lp1, lq1, up1, uq1;
    swap_lanes<H>(lp1, lp);
    swap_lanes<H>(lq1, lq);
    swap_lanes<H>(up1, up);
    swap_lanes<H>(uq1, uq);
    const auto ml = lp1 * lq > lp * lq1;
    const auto mu = up1 * uq < up * uq1;
    lp = ml ? lp1 : lp;
    lq = ml ? lq1 : lq;
    up = mu ? up1 : up;
    uq = mu ? uq1 : uq;
    merge_lanes<H / 2>(lp, lq, up, uq, f);
  }
}

template <bool Negative, class U, class F>
[[gnu::always_inline]] inline void fractions_v(const std::int64_t* y, std::size_t n,
                                               std::int64_t u0, std::int64_t ozp, int_range inner,
                                               fractions& out) noexcept {
  constexpr std::size_t w = lanes_of<U>;
  fractions f = out;
  if (n < 2 * w) {
    fractions_scalar<Negative>(y, n, u0, ozp, inner, f);
    out = f;
    return;
  }
  // y outside inner: with d = y - inner.lo (mod 2^64) and span = inner.hi - inner.lo < 2^63,
  // d > span, i.e. d >= 2^63 or d + (2^63 - 1 - span) >= 2^63: the top bit of d | (d + that).
  U in_lo = {}, in_k = {}, off = {};
  splat(in_lo, static_cast<std::uint64_t>(inner.lo));
  splat(in_k,
        (bias - 1) - (static_cast<std::uint64_t>(inner.hi) - static_cast<std::uint64_t>(inner.lo)));
  constexpr std::uint64_t magic_bits = 0x4338000000000000;  // 2^52 + 2^51
  const auto uozp = static_cast<std::uint64_t>(ozp);
  U c = {};
  splat(c, Negative ? magic_bits + 2 * uozp - 1 : magic_bits - 2 * uozp - 1);
  F magic = {}, two = {}, u = {}, du = {}, step = {};
  splat(magic, 6755399441055744.0);
  splat(two, 2.0);
  splat(du, Negative ? -static_cast<double>(w) : static_cast<double>(w));
  splat(step, Negative ? -static_cast<double>(2 * w) : static_cast<double>(2 * w));
  for (std::size_t k = 0; k < w; ++k) u[k] = static_cast<double>(k);
  F u0v = {};
  splat(u0v, static_cast<double>(u0));
  u = Negative ? u0v - u : u0v + u;
  // Two sets of lanes (codes i.. and i + w..), so that the compare-and-select chains overlap.
  F lp0 = {}, lq0 = {}, up0 = {}, uq0 = {};
  splat(lp0, -1.0);
  splat(up0, 1.0);
  F lp1 = lp0, lq1 = lq0, up1 = up0, uq1 = uq0;
  const auto one = [&](std::size_t i, const F& ui, F& lp, F& lq, F& up, F& uq) {
    U yv;
    load(yv, y + i);
    const U d = yv - in_lo;
    off |= d | (d + in_k);
    const U bits = Negative ? c - (yv + yv) : (yv + yv) + c;
    const F pl = reinterpret_cast<F>(bits) - magic, pu = pl + two;
    const auto ml = pl * lq > lp * ui;
    lp = ml ? pl : lp;
    lq = ml ? ui : lq;
    const auto mu = pu * uq < up * ui;
    up = mu ? pu : up;
    uq = mu ? ui : uq;
  };
  std::size_t i = 0;
  for (; i + 2 * w <= n; i += 2 * w, u += step) {
    one(i, u, lp0, lq0, up0, uq0);
    const F u1 = u + du;
    one(i + w, u1, lp1, lq1, up1, uq1);
  }
  // The last codes again as whole vectors ending at n (a code seen twice changes nothing).
  if (i < n) {
    const std::size_t j = n - 2 * w;
    const double back = static_cast<double>(i - j);
    F bj = {};
    splat(bj, Negative ? back : -back);
    const F uj = u + bj, uj1 = uj + du;
    one(j, uj, lp0, lq0, up0, uq0);
    one(j + w, uj1, lp1, lq1, up1, uq1);
  }
  // Merge the two sets, then the lanes, exactly in double.
  const auto ml = lp1 * lq0 > lp0 * lq1;
  lp0 = ml ? lp1 : lp0;
  lq0 = ml ? lq1 : lq0;
  const auto mu = up1 * uq0 < up0 * uq1;
  up0 = mu ? up1 : up0;
  uq0 = mu ? uq1 : uq0;
  merge_lanes<w / 2>(lp0, lq0, up0, uq0, f);
  if ((or_lanes(off) >> 63) != 0) f.outside = true;
  out = f;
}

// One function per ISA and kernel.
inline std::size_t trailing_baseline(const std::int64_t* y, std::size_t n,
                                     std::int64_t value) noexcept {
  return trailing_v<u64x2>(y, n, value);
}
inline std::size_t off_line_baseline(const std::int64_t* y, std::size_t n, std::uint64_t base,
                                     std::uint64_t step) noexcept {
  return off_line_v<u64x2>(y, n, base, step);
}
inline bool reproduces_baseline(std::span<const std::int64_t> y, const verify_args& g) noexcept {
  return reproduces_v<u64x2>(y, g);
}
inline void fractions_baseline(const std::int64_t* y, std::size_t n, std::int64_t u0,
                               std::int64_t ozp, int_range inner, bool negative,
                               fractions& f) noexcept {
  if (negative)
    fractions_v<true, u64x2, f64x2>(y, n, u0, ozp, inner, f);
  else
    fractions_v<false, u64x2, f64x2>(y, n, u0, ozp, inner, f);
}
#if defined(QFOLD_DETAIL_X86_TARGETS)
[[gnu::target("avx2")]] inline std::size_t trailing_avx2(const std::int64_t* y, std::size_t n,
                                                         std::int64_t value) noexcept {
  return trailing_v<u64x4>(y, n, value);
}
[[gnu::target("avx2")]] inline std::size_t off_line_avx2(const std::int64_t* y, std::size_t n,
                                                         std::uint64_t base,
                                                         std::uint64_t step) noexcept {
  return off_line_v<u64x4>(y, n, base, step);
}
[[gnu::target("avx2")]] inline bool reproduces_avx2(std::span<const std::int64_t> y,
                                                    const verify_args& g) noexcept {
  return reproduces_v<u64x4>(y, g);
}
[[gnu::target("avx2")]] inline void fractions_avx2(const std::int64_t* y, std::size_t n,
                                                   std::int64_t u0, std::int64_t ozp,
                                                   int_range inner, bool negative,
                                                   fractions& f) noexcept {
  if (negative)
    fractions_v<true, u64x4, f64x4>(y, n, u0, ozp, inner, f);
  else
    fractions_v<false, u64x4, f64x4>(y, n, u0, ozp, inner, f);
}
[[gnu::target("avx512f")]] inline std::size_t trailing_avx512(const std::int64_t* y, std::size_t n,
                                                              std::int64_t value) noexcept {
  return trailing_v<u64x8>(y, n, value);
}
[[gnu::target("avx512f")]] inline std::size_t off_line_avx512(const std::int64_t* y, std::size_t n,
                                                              std::uint64_t base,
                                                              std::uint64_t step) noexcept {
  return off_line_v<u64x8>(y, n, base, step);
}
[[gnu::target("avx512f")]] inline bool reproduces_avx512(std::span<const std::int64_t> y,
                                                         const verify_args& g) noexcept {
  return reproduces_v<u64x8>(y, g);
}
[[gnu::target("avx512f")]] inline void fractions_avx512(const std::int64_t* y, std::size_t n,
                                                        std::int64_t u0, std::int64_t ozp,
                                                        int_range inner, bool negative,
                                                        fractions& f) noexcept {
  if (negative)
    fractions_v<true, u64x8, f64x8>(y, n, u0, ozp, inner, f);
  else
    fractions_v<false, u64x8, f64x8>(y, n, u0, ozp, inner, f);
}
#endif

// The kernels by ISA (scalar loops in constant evaluation and for vector_isa::scalar).
[[nodiscard]] constexpr std::size_t first_off_line(const std::int64_t* y, std::size_t n,
                                                   std::uint64_t base, std::uint64_t step,
                                                   vector_isa isa) noexcept {
  if (std::is_constant_evaluated() || isa == vector_isa::scalar)
    return off_line_scalar(y, n, base, step);
#if defined(QFOLD_DETAIL_X86_TARGETS)
  if (isa == vector_isa::avx512) return off_line_avx512(y, n, base, step);
  if (isa == vector_isa::avx2) return off_line_avx2(y, n, base, step);
#endif
  return off_line_baseline(y, n, base, step);
}
[[nodiscard]] constexpr std::size_t trailing(const std::int64_t* y, std::size_t n,
                                             std::int64_t value, vector_isa isa) noexcept {
  if (std::is_constant_evaluated() || isa == vector_isa::scalar)
    return trailing_scalar(y, n, value);
#if defined(QFOLD_DETAIL_X86_TARGETS)
  if (isa == vector_isa::avx512) return trailing_avx512(y, n, value);
  if (isa == vector_isa::avx2) return trailing_avx2(y, n, value);
#endif
  return trailing_baseline(y, n, value);
}
[[nodiscard]] constexpr bool reproduces_single(std::span<const std::int64_t> y,
                                               const verify_args& g, vector_isa isa) noexcept {
  // [a, b) is compared without the clamp: R is non-decreasing in v (m >= 0), so equality there
  // makes y non-decreasing on [a, b), and the clamp changes nothing when its ends are inside.
  if (g.a < g.b && (y[g.a] <= g.out.lo || y[g.b - 1] >= g.out.hi)) return false;
  if (std::is_constant_evaluated() || isa == vector_isa::scalar) return reproduces_scalar(y, g);
#if defined(QFOLD_DETAIL_X86_TARGETS)
  if (isa == vector_isa::avx512) return reproduces_avx512(y, g);
  if (isa == vector_isa::avx2) return reproduces_avx2(y, g);
#endif
  return reproduces_baseline(y, g);
}
template <bool Negative>
constexpr void add_fractions(const std::int64_t* y, std::size_t n, std::int64_t u0,
                             std::int64_t ozp, int_range inner, fractions& f,
                             vector_isa isa) noexcept {
  if (std::is_constant_evaluated() || isa == vector_isa::scalar)
    return fractions_scalar<Negative>(y, n, u0, ozp, inner, f);
#if defined(QFOLD_DETAIL_X86_TARGETS)
  if (isa == vector_isa::avx512) return fractions_avx512(y, n, u0, ozp, inner, Negative, f);
  if (isa == vector_isa::avx2) return fractions_avx2(y, n, u0, ozp, inner, Negative, f);
#endif
  return fractions_baseline(y, n, u0, ozp, inner, Negative, f);
}

// The first index whose value is not below `value` (y non-decreasing). Branch-free: the answer
// stays in [lo, lo + len].
[[nodiscard]] constexpr std::size_t lower_index(std::span<const std::int64_t> y,
                                                std::int64_t value) noexcept {
  std::size_t lo = 0, len = y.size();
  while (len > 1) {
    const std::size_t half = len / 2;
    lo += y[lo + half - 1] < value ? half : 0;
    len -= half;
  }
  return lo + (len == 1 && y[lo] < value ? 1 : 0);
}

enum class fast_outcome : std::uint8_t { found, none, unknown };
struct fast_answer {
  fast_outcome outcome = fast_outcome::unknown;
  scale_factor scale{};
};

// The smallest s in [s_lo, 62] with ceil(M / 2^(62-s)) <= min(H >> (62-s), cap), and its
// multiplier (M >= 0). M_s <= H_s says [M, H] holds a multiple of 2^k, k = 62 - s: for M = 0
// always (0), otherwise exactly when (M - 1) >> k != H >> k, i.e. k < bit_width((M - 1) ^ H).
// So the first feasible shift is direct; then the cap there (M_s only grows with s, so if it
// exceeds the cap there it does everywhere above).
[[nodiscard]] constexpr std::optional<scale_factor> first_feasible(wide m_top, wide h_top, int s_lo,
                                                                   std::int64_t cap) noexcept {
  if (s_lo > 62 || m_top > h_top) return std::nullopt;
  int s = s_lo;
  if (m_top > 0) {
    const auto x = static_cast<uwide>((m_top - 1) ^ h_top);
    const auto high = static_cast<std::uint64_t>(x >> 64);
    const int bits = high != 0 ? 64 + static_cast<int>(std::bit_width(high))
                               : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(x)));
    s = std::max(s_lo, 62 - (bits - 1));
  }
  const wide m = m_top == 0 ? wide{0} : ((m_top - 1) >> (62 - s)) + 1;
  if (m > cap) return std::nullopt;
  return scale_factor{static_cast<std::int32_t>(m), s};
}

// What the caller knows of the map: nothing, or that it is exactly one integer line over the
// domain (checked on every code), rising (slope >= 0) or falling; and `run` > 0 when y[i] == y[0]
// exactly for i < run and y[run] != y[0] (or run == size).
enum class map_shape : std::uint8_t { unknown, rising_line, falling_line };
struct map_facts {
  map_shape shape = map_shape::unknown;
  std::size_t run = 0;
};

// The exact smallest (shift, multiplier) for one single-rounding candidate, without a division
// per code: the bounds at shift 62 from the largest lower and smallest upper fraction of each
// sign of v (one vector pass over the unclamped codes; for a known line the fractions are
// monotone in v, so the ends of each sign's run give them), and the codes at the clamp edges;
// every shift follows from them. The candidate is evaluated on every code unless every code's
// bounds were taken exactly (then it holds by construction). `none` is exact for a
// non-decreasing map (the caller checks that before trusting it); `unknown` sends the caller to
// the interval method (outside the ranges argued for here).
[[nodiscard, gnu::always_inline]] constexpr fast_answer smallest_single(
    domain d, std::span<const std::int64_t> y, const candidate& k, int_range out, std::int64_t cap,
    int min_shift, const map_facts& facts, vector_isa isa) {
  fast_answer none{fast_outcome::none, {}};
  const std::int64_t vlo = d.lo - k.input_zp, vhi = d.hi - k.input_zp;
  if (vlo < -fast_max_v || vhi > fast_max_v) return {};
  if (y.front() < out.lo || y.back() > out.hi) return none;
  const std::int64_t ozp = k.output_zp;
  const std::size_t n = y.size();
  // [a, b): strictly inside the output range (for a non-decreasing map: any other split is only
  // verified, never trusted): the runs of out.lo at the start and out.hi at the end, each found
  // by a vector scan that stops at its end (classification may have found the first already;
  // an end that is not clamped needs no scan).
  const std::size_t a =
      y.front() != out.lo ? 0
      : facts.run > 0     ? facts.run
                          : first_off_line(y.data(), n, static_cast<std::uint64_t>(out.lo), 0, isa);
  const std::size_t b =
      y.back() != out.hi ? n : std::max(a, n - trailing(y.data(), n, out.hi, isa));
  // [a, zero): v < 0; [pos, b): v > 0.
  const std::size_t zero = static_cast<std::size_t>(
      qfold::clamp(-vlo, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)));
  const std::size_t pos = zero < b && vlo + static_cast<std::int64_t>(zero) == 0 ? zero + 1 : zero;
  const wide unbounded = wide{1} << 100;  // no code bounds the multiplier from above
  wide lo = 0, hi = unbounded;
  fractions fpos, fneg;
  // One code's bounds: as fractions when |t| < 2^33, else exactly in 128 bits.
  const auto add_code = [&](std::size_t i) {
    const std::int64_t v = vlo + static_cast<std::int64_t>(i), yv = y[i];
    if (v == 0 || !w_fits(yv, ozp)) return code_bounds(v, yv, ozp, 62, out, lo, hi);
    const bool need_ge = yv != out.lo, need_le = yv != out.hi;
    const std::int64_t t = yv - ozp;
    if (v > 0) {
      if (need_ge) fpos.lower(2 * t - 1, v);
      if (need_le) fpos.upper(2 * t + 1, v);
    } else {
      if (need_le) fneg.lower(-2 * t - 1, -v);
      if (need_ge) fneg.upper(-2 * t + 1, -v);
    }
    return true;
  };
  // Codes at the edges: the last clamped low, the first and last unclamped, the first clamped
  // high, and v = 0. Clamped codes between are implied (R is non-decreasing in v for m >= 0).
  std::array<std::size_t, 7> edge{};
  std::size_t edges = 0;
  if (a > 0) edge[edges++] = a - 1;
  if (a < b) edge[edges++] = a;
  if (b > a + 1) edge[edges++] = b - 1;
  if (b < n) edge[edges++] = b;
  if (vlo <= 0 && vhi >= 0) edge[edges++] = static_cast<std::size_t>(-vlo);
  const bool line = facts.shape == map_shape::rising_line;
  if (line) {  // the inner ends of both signs' runs
    if (zero > a) edge[edges++] = zero - 1;
    if (pos < b) edge[edges++] = pos;
  }
  for (std::size_t e = 0; e < edges; ++e)
    if (!add_code(edge[e])) return none;
  // Whether every code's bounds were taken exactly, so that any multiplier in [lo, hi] gives y on
  // every code and the evaluation below could not fail: the clamped runs hold exactly out.lo and
  // out.hi (as scanned) and follow from their edge codes; each code of [a, b) must lie strictly
  // inside the output range (where the map needs R + ozp = y exactly, which its two bounds say)
  // with |w| < 2^33 (exact fractions). A rising line's [a, b) lies between its ends; otherwise
  // the fraction passes check each code (`outside`) and the v = 0 code is checked here.
  bool exact = true;
  if (a < b && line) {
    exact = y[a] > out.lo && y[b - 1] < out.hi;
  } else if (a < b) {
    // For a non-decreasing map |t| in [a, b) is bounded by its ends; otherwise `wild` may say so.
    if (!w_fits(y[a], ozp) || !w_fits(y[b - 1], ozp)) return {};
    const int_range inner{std::max(out.lo + 1, ozp - max_w + 1),
                          std::min(out.hi - 1, ozp + max_w - 1)};
    exact = inner.lo <= inner.hi && (pos == zero || (y[zero] > out.lo && y[zero] < out.hi));
    const int_range checked = exact ? inner : int_range{ozp, ozp};  // (never empty)
    add_fractions<true>(y.data() + a, zero - a, -(vlo + static_cast<std::int64_t>(a)), ozp, checked,
                        fneg, isa);
    add_fractions<false>(y.data() + pos, b - pos, vlo + static_cast<std::int64_t>(pos), ozp,
                         checked, fpos, isa);
    if (fneg.wild || fpos.wild) return {};
    exact = exact && !fneg.outside && !fpos.outside;
  }
  apply_fractions(fpos, fneg, lo, hi);
  if (lo > hi) return none;  // empty at 62, so at every shift
  const auto f = first_feasible(lo, hi, std::max(min_shift, 2), cap);
  if (!f) return none;
  if (!exact && !reproduces_single(y, {vlo, a, b, f->multiplier, f->shift, ozp, out}, isa))
    return {};
  return {fast_outcome::found, *f};
}
}  // namespace synth

[[nodiscard]] constexpr int_range output_zero_points(const rescale_space& space) noexcept {
  if (space.output_type == int_type::i8) return range_of(int_type::i8, space.output_unsigned);
  if (space.output_type == int_type::i16 && space.output_unsigned)
    return {0, 32768};  // only 0 and 32768
  return {0, 0};
}

// The vector kernels of this CPU at run time, the scalar loops in constant evaluation.
[[nodiscard]] constexpr vector_isa runtime_isa() noexcept {
  if (std::is_constant_evaluated()) return vector_isa::scalar;
  return cpu_vector_isa();
}

// synthesize_rescale with what the caller knows of the map's shape and the kernels to use (tests
// compare the ISAs; the answer never depends on either).
[[nodiscard]] constexpr std::optional<rescale_certificate> synthesize(
    domain d, std::span<const std::int64_t> y, const rescale_space& space,
    const synth::map_facts& facts, vector_isa isa) {
  if (y.size() != d.size() || y.empty() || !domain_in_type(d, space)) return std::nullopt;
  // A RESCALE is non-decreasing (multiplier >= 0, clamp): anything else is refused. Checked once,
  // before the first refusal or interval search is trusted (a certificate the fast path found
  // gives y on every code, so the map is non-decreasing then). A known line is non-decreasing
  // exactly when it rises.
  int monotone = facts.shape == synth::map_shape::rising_line    ? 1
                 : facts.shape == synth::map_shape::falling_line ? -1
                                                                 : 0;  // 0 unknown, 1 yes, -1 no
  const auto non_decreasing = [&] {
    if (monotone == 0) {
      monotone = 1;
      for (std::size_t i = 1; i < y.size() && monotone == 1; ++i)
        if (y[i] < y[i - 1]) monotone = -1;
    }
    return monotone == 1;
  };
  const int_range out = range_of(space.output_type, space.output_unsigned);
  const std::int64_t cap = space.scale32 ? int32_max : 32767;
  const std::array<std::int64_t, 1> zero{0};
  const std::span<const std::int64_t> izps =
      space.input_zero_points.empty() ? std::span<const std::int64_t>(zero.data(), zero.size())
                                      : space.input_zero_points;
  // validate(attributes) is its zero-point rules (zero_point_ok of each side) and rules that read
  // only the space and the rounding: those once per call, the zero points per candidate, before
  // anything is evaluated (the same candidates as validating each one's attributes). Of the
  // rounding rules DOUBLE_ROUND adds only "requires scale32".
  const bool legal_space = static_cast<bool>(validate(attributes_of(space, {0, 0, false})));
  const std::array<bool, 2> legal_rounding{
      legal_space, legal_space && space.allow_double_round && space.scale32};
  const int_range ozp_range = output_zero_points(space);
  // The best candidate so far; its certificate is built once, for the winner.
  bool found = false;
  candidate best{};
  scale_factor best_scale{};
  for (const std::int64_t izp : izps) {
    if (!zero_point_ok(space.input_type, space.input_unsigned, izp)) continue;
    // With the input zero point inside the domain, R(0) = 0 pins the output zero point there.
    std::int64_t ozp_lo = ozp_range.lo, ozp_hi = ozp_range.hi;
    const bool has_zero = d.contains(izp);
    const std::int64_t y0 = has_zero ? y[offset_in(d, izp)] : 0;
    if (has_zero && y0 > out.lo && y0 < out.hi) ozp_lo = ozp_hi = y0;
    // Unsigned int16 output: of 0..32768 only 0 and 32768 are legal, so the loop steps from one
    // to the other.
    const auto next = [&](std::int64_t z) { return z == 0 && ozp_hi == 32768 ? ozp_hi : z + 1; };
    for (std::int64_t ozp = ozp_lo; ozp <= ozp_hi; ozp = next(ozp)) {
      // Illegal for the output type (validate() refuses it): skipped before any evaluation.
      if (!zero_point_ok(space.output_type, space.output_unsigned, ozp)) continue;
      // R(0) = 0 with either rounding: y(izp) must be ozp, or clamped on ozp's side of it
      // (multipliers() is empty at every shift otherwise).
      if (has_zero && ((y0 != out.lo && y0 > ozp) || (y0 != out.hi && y0 < ozp))) continue;
      for (bool dr : {false, true}) {
        if (!legal_rounding[dr ? 1 : 0]) continue;
        // DOUBLE_ROUND differs only from shift 32: it cannot beat a smaller shift already found.
        if (dr && found && best_scale.shift < 32) continue;
        const candidate k{izp, ozp, dr};
        scale_factor s{};
        const auto fast =
            dr ? synth::fast_answer{}
               : synth::smallest_single(d, y, k, out, cap,
                                        smallest_legal_shift(d, izp, cap > 32767), facts, isa);
        if (fast.outcome == synth::fast_outcome::found) {
          s = fast.scale;  // it gives y on every code (proven or evaluated): y is non-decreasing
          monotone = 1;
        } else if (!non_decreasing()) {
          return std::nullopt;
        } else if (fast.outcome == synth::fast_outcome::none) {
          continue;
        } else {
          const auto f = smallest(d, y, k, out, cap);
          if (!f) continue;
          // the certificate is re-checked, never trusted
          if (!reproduces(d, y, rescale_certificate{attributes_of(space, k), *f})) continue;
          s = *f;
        }
        if (!found || s.shift < best_scale.shift ||
            (s.shift == best_scale.shift && s.multiplier < best_scale.multiplier)) {
          found = true;
          best = k;
          best_scale = s;
        }
      }
    }
  }
  if (!found) return std::nullopt;
  return rescale_certificate{attributes_of(space, best), best_scale};
}
}  // namespace detail

// The RESCALE within `space` that gives y[i] for input d.lo + i, with the smallest shift and the
// smallest multiplier at that shift; nullopt when none exists. The result has been evaluated on
// every input before it is returned.
[[nodiscard]] constexpr std::optional<rescale_certificate> synthesize_rescale(
    domain d, std::span<const std::int64_t> y, const rescale_space& space) {
  return detail::synthesize(d, y, space, {}, detail::runtime_isa());
}

// For one candidate (zero points and rounding), the multipliers that work at every shift 2..62
// (index = shift; entries 0 and 1 stay empty, and so do shifts where apply_scale_32 would refuse
// an input, and every shift for illegal attributes, a domain outside the input type or a map of
// the wrong size).
// One pass over the domain per shift.
[[nodiscard]] constexpr std::array<multiplier_range, 63> rescale_shifts(
    domain d, std::span<const std::int64_t> y, const rescale_space& space, std::int64_t input_zp,
    std::int64_t output_zp, bool double_round) {
  std::array<multiplier_range, 63> r{};
  if (y.size() != d.size() || y.empty() || !detail::domain_in_type(d, space)) return r;
  if (!validate(detail::attributes_of(space, {input_zp, output_zp, double_round}))) return r;
  const int_range out = range_of(space.output_type, space.output_unsigned);
  const std::int64_t cap = space.scale32 ? int32_max : 32767;
  for (int s = detail::smallest_legal_shift(d, input_zp, space.scale32); s <= 62; ++s)
    r[static_cast<std::size_t>(s)] =
        detail::multipliers(d, y, {input_zp, output_zp, double_round}, s, out, cap);
  return r;
}

}  // namespace qfold
