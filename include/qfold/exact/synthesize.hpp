// Rescale synthesis: the TOSA RESCALE (multiplier, shift, zero points, rounding, clamp) that
// reproduces an integer map on every input, found by exact interval arithmetic on the rounding
// conditions (no search over floats), and re-checked over the whole domain before it is returned.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

#include "qfold/arith/rescale.hpp"
#include "qfold/arith/result.hpp"
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

// In a namespace of their own: their short names must not shadow locals of other headers.
namespace synth {
// --- The fast exact path (single rounding, |x - input_zp| <= 2^17) -------------------------------
// At shift s the multipliers that work are [M_s, H_s] (the intersection of every code's interval;
// M_s counts m >= 0). Each code's bounds are ceil / floor of (2t -+ 1) 2^(s-1) / v, and
// ceil(ceil(z) / 2) = ceil(z / 2), floor(floor(z) / 2) = floor(z / 2): so M_s = ceil(M_S / 2^(S-s))
// and H_s = floor(H_S / 2^(S-s)) for every s <= S, and the exact bounds at one top shift S give
// every smaller shift at once. Feasible shifts are an interval: M_s <= H_s is upward closed, and
// M_s <= cap downward closed (M_s never falls as s grows).
__extension__ typedef __int128 wide;

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
inline constexpr std::int64_t fast_max_h = std::int64_t{1} << 45;  // |v h| <= 2^62

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

// Codes are checked 16 at a time without branches: a fixed trip count that g++'s -O2 cost model
// vectorises. Values are biased by 2^63 so that a logical shift floors (u = z + 2^63 gives
// u >> s = floor(z / 2^s) + 2^(63-s)), and "a < b" is the sign bit of a - b (all terms stay
// within +-2^62, so no difference overflows).
inline constexpr std::size_t block = 16;
inline constexpr std::uint64_t bias = std::uint64_t{1} << 63;

[[nodiscard]] constexpr std::uint64_t biased_start(std::int64_t v, std::int64_t m, int s) noexcept {
  return static_cast<std::uint64_t>(v * m + (std::int64_t{1} << (s - 1))) + bias;
}
[[nodiscard]] constexpr std::int64_t signed_of(std::uint64_t u) noexcept {
  return static_cast<std::int64_t>(u);
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

// The same, four codes at a time in two-lane vectors (GCC/clang vector extensions: SSE2 without
// any -march), stopping at the first block of 16 with a difference.
__extension__ typedef std::uint64_t u64x2 __attribute__((vector_size(16)));
[[nodiscard]] inline u64x2 load2(const std::int64_t* p) noexcept {
  u64x2 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

template <scan K>
[[nodiscard]] inline u64x2 scan_step(u64x2 r, const std::int64_t* y, std::uint64_t c,
                                     std::uint64_t yc) noexcept {
  if constexpr (K == scan::equal) {
    return r ^ (load2(y) + c);
  } else {
    const u64x2 off = load2(y) ^ yc;
    return (K == scan::at_most ? c - r : r - c) | off | (0 - off);
  }
}

template <scan K>
[[nodiscard]] inline std::uint64_t scan_vector(const std::int64_t* y, std::size_t count,
                                               std::uint64_t acc, std::uint64_t um, int s,
                                               std::uint64_t c, std::uint64_t yc) noexcept {
  u64x2 a0 = u64x2{acc, acc + um}, a1 = a0 + 2 * um, bad0{}, bad1{};
  const std::uint64_t step = 4 * um;
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    for (std::size_t j = 0; j < 16; j += 4, a0 += step, a1 += step) {
      bad0 |= scan_step<K>(a0 >> s, y + i + j, c, yc);
      bad1 |= scan_step<K>(a1 >> s, y + i + j + 2, c, yc);
    }
    if constexpr (K == scan::equal) {
      const u64x2 any = bad0 | bad1;
      if ((any[0] | any[1]) != 0) return any[0] | any[1];
    }
  }
  const u64x2 any = bad0 | bad1;
  return any[0] | any[1] | scan_scalar<K>(y + i, count - i, a0[0], um, s, c, yc);
}

// For the pass at the top shift: over 16 codes, the top bit set when some code rejects m (biased
// pm) or h (biased ph). For v > 0 m must give R >= t and h R <= t; for v < 0 the other way.
template <bool Negative>
[[nodiscard]] constexpr std::uint64_t bounds_scalar(const std::int64_t* y, std::uint64_t pm,
                                                    std::uint64_t ph, std::uint64_t um,
                                                    std::uint64_t uh, int s,
                                                    std::uint64_t c) noexcept {
  std::uint64_t sign = 0;
  for (std::size_t j = 0; j < block; ++j, pm += um, ph += uh) {
    const std::uint64_t tk = static_cast<std::uint64_t>(y[j]) + c, rm = pm >> s, rh = ph >> s;
    sign |= Negative ? (tk - rm) | (rh - tk) : (rm - tk) | (tk - rh);
  }
  return sign;
}
template <bool Negative>
[[nodiscard]] inline std::uint64_t bounds_vector(const std::int64_t* y, std::uint64_t pm,
                                                 std::uint64_t ph, std::uint64_t um,
                                                 std::uint64_t uh, int s,
                                                 std::uint64_t c) noexcept {
  u64x2 m2 = u64x2{pm, pm + um}, h2 = u64x2{ph, ph + uh}, sign{};
  const std::uint64_t sm = 2 * um, sh = 2 * uh;
  for (std::size_t j = 0; j < block; j += 2, m2 += sm, h2 += sh) {
    const u64x2 tk = load2(y + j) + c, rm = m2 >> s, rh = h2 >> s;
    sign |= Negative ? (tk - rm) | (rh - tk) : (rm - tk) | (tk - rh);
  }
  return sign[0] | sign[1];
}
template <bool Negative>
[[nodiscard]] constexpr std::uint64_t bounds_block(const std::int64_t* y, std::uint64_t pm,
                                                   std::uint64_t ph, std::uint64_t um,
                                                   std::uint64_t uh, int s,
                                                   std::uint64_t c) noexcept {
  if (std::is_constant_evaluated()) return bounds_scalar<Negative>(y, pm, ph, um, uh, s, c);
  return bounds_vector<Negative>(y, pm, ph, um, uh, s, c);
}

template <scan K>
[[nodiscard]] constexpr std::uint64_t scan_codes(const std::int64_t* y, std::size_t count,
                                                 std::uint64_t acc, std::uint64_t um, int s,
                                                 std::uint64_t c, std::uint64_t yc = 0) noexcept {
  if (std::is_constant_evaluated()) return scan_scalar<K>(y, count, acc, um, s, c, yc);
  return scan_vector<K>(y, count, acc, um, s, c, yc);
}

// Whether (m, s) with single rounding gives y on every code: clamp(floor((v m + 2^(s-1)) / 2^s)
// + ozp) == y, for attributes already validated, s at least the smallest legal shift (so the
// checked evaluation could not fail), |v| <= 2^17 and m <= 2^31. Codes [0, a) hold out.lo, [b, n)
// out.hi, [a, b) values strictly between (when y is non-decreasing; each is checked, so any y is
// judged right); R + ozp must equal y in [a, b), be at most out.lo before and at least out.hi
// after. Every code is evaluated.
[[nodiscard]] constexpr bool reproduces_single(std::int64_t vlo, std::span<const std::int64_t> y,
                                               std::size_t a, std::size_t b, std::int64_t m, int s,
                                               std::int64_t ozp, int_range out) noexcept {
  const std::uint64_t k = std::uint64_t{1} << (63 - s);  // R + k = the biased shift
  const std::uint64_t um = static_cast<std::uint64_t>(m);
  const std::uint64_t shift_y = k - static_cast<std::uint64_t>(ozp);  // y + shift_y = t + k
  const std::uint64_t acc = biased_start(vlo, m, s);
  const std::int64_t* p = y.data();
  if (scan_codes<scan::equal>(p + a, b - a, acc + a * um, um, s, shift_y) != 0) return false;
  const std::uint64_t lo_k = static_cast<std::uint64_t>(out.lo) + shift_y;
  const std::uint64_t hi_k = static_cast<std::uint64_t>(out.hi) + shift_y;
  const std::uint64_t sign =
      scan_codes<scan::at_most>(p, a, acc, um, s, lo_k, static_cast<std::uint64_t>(out.lo)) |
      scan_codes<scan::at_least>(p + b, y.size() - b, acc + b * um, um, s, hi_k,
                                 static_cast<std::uint64_t>(out.hi));
  return (sign >> 63) == 0;
}

// The first index whose value is not below `value` (y non-decreasing).
[[nodiscard]] constexpr std::size_t lower_index(std::span<const std::int64_t> y,
                                                std::int64_t value) noexcept {
  std::size_t lo = 0, hi = y.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (y[mid] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

enum class fast_outcome : std::uint8_t { found, none, unknown };
struct fast_answer {
  fast_outcome outcome = fast_outcome::unknown;
  scale_factor scale{};
};

// The smallest s in [s_lo, S] with ceil(M / 2^(S-s)) <= min(H >> (S-s), cap), and its multiplier:
// a binary search for the first s with M_s <= H_s (upward closed), then the cap there (M_s only
// grows with s, so if it exceeds the cap there it does everywhere above).
[[nodiscard]] constexpr std::optional<scale_factor> first_feasible(std::int64_t m_top,
                                                                   std::int64_t h_top, int top,
                                                                   int s_lo,
                                                                   std::int64_t cap) noexcept {
  const auto m_at = [&](int s) { return m_top == 0 ? 0 : ((m_top - 1) >> (top - s)) + 1; };
  if (s_lo > top || m_at(top) > h_top) return std::nullopt;
  int lo = s_lo, hi = top;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (m_at(mid) <= (h_top >> (top - mid)))
      hi = mid;
    else
      lo = mid + 1;
  }
  const std::int64_t m = m_at(lo);
  if (m > cap) return std::nullopt;
  return scale_factor{static_cast<std::int32_t>(m), lo};
}

// Bits of a non-negative 128-bit value.
[[nodiscard]] constexpr int bit_length(wide u) noexcept {
  const auto high = static_cast<std::uint64_t>(u >> 64);
  return static_cast<int>(high != 0 ? 64 + std::bit_width(high)
                                    : std::bit_width(static_cast<std::uint64_t>(u)));
}

// The exact smallest (shift, multiplier) for one single-rounding candidate, without a division
// per code: bounds from the codes at the clamp edges (exact, in 128 bits) give a candidate that
// is the answer whenever it reproduces the map (the true intervals lie inside those bounds); if
// not, one pass at the top shift raises M and lowers H code by code (a division only where a
// code tightens them), and every shift follows from M_S, H_S. `unknown` sends the caller to the
// interval method (outside the ranges argued for here).
[[nodiscard]] constexpr fast_answer smallest_single(domain d, std::span<const std::int64_t> y,
                                                    const candidate& k, int_range out,
                                                    std::int64_t cap, int min_shift) {
  fast_answer none{fast_outcome::none, {}};
  const std::int64_t vlo = d.lo - k.input_zp, vhi = d.hi - k.input_zp;
  if (vlo < -fast_max_v || vhi > fast_max_v) return {};
  if (y.front() < out.lo || y.back() > out.hi) return none;
  const std::size_t n = y.size();
  const std::size_t a = lower_index(y, out.lo + 1);  // [a, b): strictly inside the output range
  const std::size_t b = std::max(a, lower_index(y, out.hi));
  // Codes at the edges: the last clamped low, the first and last unclamped, the first clamped
  // high, and v = 0. Clamped codes between are implied (R is non-decreasing in v for m >= 0).
  std::array<std::size_t, 5> edge{};
  std::size_t edges = 0;
  if (a > 0) edge[edges++] = a - 1;
  if (a < b) edge[edges++] = a;
  if (b > a + 1) edge[edges++] = b - 1;
  if (b < n) edge[edges++] = b;
  if (vlo <= 0 && vhi >= 0) edge[edges++] = static_cast<std::size_t>(-vlo);
  const wide unbounded = wide{1} << 100;  // no code bounds the multiplier from above
  wide lo = 0, hi = unbounded;
  for (std::size_t e = 0; e < edges; ++e)
    if (!code_bounds(vlo + static_cast<std::int64_t>(edge[e]), y[edge[e]], k.output_zp, 62, out, lo,
                     hi))
      return none;
  if (lo > hi) return none;  // empty at 62, so at every shift
  // The top shift: the largest where M <= cap (beyond it M only grows) and H <= 2^45 (products
  // fit int64). Limited by H, an empty interval there says nothing about larger shifts.
  // With no upper bound at all (no unclamped code but v = 0), H stays infinite.
  int jm = std::max(0, bit_length(lo) - bit_length(cap) - 1);
  while (jm < 61 && ((lo - 1) >> jm) + 1 > cap) ++jm;
  int jh = hi == unbounded ? 0 : std::max(0, bit_length(hi) - 47);
  while (hi != unbounded && jh < 61 && (hi >> jh) > fast_max_h) ++jh;
  const int top = 62 - std::max(jm, jh);
  const bool h_limited = jh > jm;
  const int s_lo = std::max(min_shift, 2);
  if (top < s_lo) return h_limited ? fast_answer{} : none;
  const int drop = 62 - top;
  std::int64_t m = lo == 0 ? 0 : static_cast<std::int64_t>(((lo - 1) >> drop) + 1);
  std::int64_t h = hi == unbounded ? std::numeric_limits<std::int64_t>::max()
                                   : static_cast<std::int64_t>(hi >> drop);
  const std::int64_t ozp = k.output_zp;
  if (const auto f = first_feasible(m, h, top, s_lo, cap)) {
    if (reproduces_single(vlo, y, a, b, f->multiplier, f->shift, ozp, out))
      return {fast_outcome::found, *f};
  } else if (m <= h) {
    return none;  // feasible at the top only beyond the cap: so nowhere
  }
  if (m > h) return h_limited ? fast_answer{} : none;
  // The pass over the unclamped codes at the top shift: a block whose codes all accept m and h
  // (m: R >= t for v > 0, R <= t for v < 0; h the other way) costs no division; a block where
  // one does not is redone code by code, moving m up or h down to that code's exact bound.
  const std::int64_t half = std::int64_t{1} << (top - 1);
  const std::uint64_t shift_y = (std::uint64_t{1} << (63 - top)) - static_cast<std::uint64_t>(ozp);
  bool wild = false;  // a code beyond the ends' values: the map is not non-decreasing
  const std::int64_t tlimit = top >= 60 ? 1 : std::int64_t{1} << (60 - top);
  const auto exact = [&](std::size_t from, std::size_t to) {  // false: empty
    for (std::size_t i = from; i < to; ++i) {
      const std::int64_t v = vlo + static_cast<std::int64_t>(i);
      // |t| < 2^(60-top), so the bounds below fit int64 (unsigned: y may be any int64 here).
      if (static_cast<std::uint64_t>(y[i]) - static_cast<std::uint64_t>(ozp) +
              static_cast<std::uint64_t>(tlimit) >=
          2 * static_cast<std::uint64_t>(tlimit)) {
        wild = true;
        return false;
      }
      const std::int64_t t = y[i] - ozp;
      const std::int64_t lo_t = (2 * t - 1) * half;      // v m >= lo_t
      const std::int64_t hi_t = (2 * t + 1) * half - 1;  // v m <= hi_t
      if (v > 0) {
        if (v * m < lo_t) m = ceil_div(lo_t, v);
        if (v * h > hi_t) h = floor_div(hi_t, v);
      } else {
        if (v * m > hi_t) m = ceil_div(hi_t, v);
        if (v * h < lo_t) h = floor_div(lo_t, v);
      }
      if (m > h) return false;
    }
    return true;
  };
  // 16 codes of one sign of v from i: checked without a division, redone exactly if one rejects.
  const auto one = [&](std::size_t i, auto negative) {
    const std::int64_t v = vlo + static_cast<std::int64_t>(i);
    const std::uint64_t sign = bounds_block<decltype(negative)::value>(
        y.data() + i, biased_start(v, m, top), biased_start(v, h, top),
        static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(h), top, shift_y);
    return (sign >> 63) == 0 || exact(i, i + block);
  };
  // One sign of v at a time: [from, to) with v < 0 (negative) or v > 0, from the outside in
  // (the widest |v| bound most tightly, so later blocks rarely move m or h).
  const auto sweep = [&](std::size_t from, std::size_t to, auto negative) {
    const std::size_t full = (to - from) / block * block;
    if constexpr (decltype(negative)::value) {
      for (std::size_t i = from; i < from + full; i += block)
        if (!one(i, negative)) return false;
      return exact(from + full, to);
    } else {
      for (std::size_t i = to; i > to - full; i -= block)
        if (!one(i - block, negative)) return false;
      return exact(from, to - full);
    }
  };
  // The outermost 16 codes of one sign (all of them when fewer).
  const auto outer = [&](std::size_t from, std::size_t to, auto negative) {
    if (to - from < block) return exact(from, to);
    return one(decltype(negative)::value ? from : to - block, negative);
  };
  const auto t_fits = [&](std::int64_t yv) {  // |y - ozp| < tlimit, for any int64 y
    return static_cast<std::uint64_t>(yv) - static_cast<std::uint64_t>(ozp) +
               static_cast<std::uint64_t>(tlimit) <
           2 * static_cast<std::uint64_t>(tlimit);
  };
  if (a < b) {
    // |t| is bounded by the two ends; (2t + 1) 2^(top-1) must fit int64 for the exact bounds.
    if (!t_fits(y[a]) || !t_fits(y[b - 1])) return {};
    const std::size_t zero = static_cast<std::size_t>(std::clamp<std::int64_t>(
        -vlo, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)));  // first v >= 0
    const std::size_t pos =
        zero < b && vlo + static_cast<std::int64_t>(zero) == 0 ? zero + 1 : zero;
    // The outermost codes bind most often: their bounds first, and the candidate they give is
    // the answer whenever it reproduces the map (as for the edges above).
    if (!outer(a, zero, std::true_type{}) || !outer(pos, b, std::false_type{}))
      return h_limited || wild ? fast_answer{} : none;
    if (const auto f = first_feasible(m, h, top, s_lo, cap);
        f && reproduces_single(vlo, y, a, b, f->multiplier, f->shift, ozp, out))
      return {fast_outcome::found, *f};
    if (!sweep(a, zero, std::true_type{}) || !sweep(pos, b, std::false_type{}))
      return h_limited || wild ? fast_answer{} : none;
  }
  const auto f = first_feasible(m, h, top, s_lo, cap);
  if (!f) return none;  // M <= H at the top, so every shift that works needs M > cap
  if (!reproduces_single(vlo, y, a, b, f->multiplier, f->shift, ozp, out)) return {};
  return {fast_outcome::found, *f};
}
}  // namespace synth

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
  // A RESCALE is non-decreasing (multiplier >= 0, clamp): anything else is refused. Checked once,
  // before the first refusal or interval search is trusted (a certificate the fast path found was
  // evaluated on every code, so the map is non-decreasing then).
  int monotone = 0;  // 0 unknown, 1 yes, -1 no
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
        // DOUBLE_ROUND differs only from shift 32: it cannot beat a smaller shift already found.
        if (dr && best && best->scale.shift < 32) continue;
        const detail::candidate k{izp, ozp, dr};
        const rescale_attributes attrs = detail::attributes_of(space, k);
        if (!validate(attrs)) continue;
        std::optional<scale_factor> s;
        const auto fast =
            dr ? detail::synth::fast_answer{}
               : detail::synth::smallest_single(d, y, k, out, cap,
                                                detail::smallest_legal_shift(d, izp, cap > 32767));
        if (fast.outcome == detail::synth::fast_outcome::found) {
          s = fast.scale;  // already evaluated on every code (reproduces_single)
          monotone = 1;
        } else if (!non_decreasing()) {
          return std::nullopt;
        } else if (fast.outcome == detail::synth::fast_outcome::none) {
          continue;
        } else {
          s = detail::smallest(d, y, k, out, cap);
          if (!s) continue;
          // the certificate is re-checked, never trusted
          if (!detail::reproduces(d, y, rescale_certificate{attrs, *s})) continue;
        }
        const rescale_certificate c{attrs, *s};
        if (!best || s->shift < best->scale.shift ||
            (s->shift == best->scale.shift && s->multiplier < best->scale.multiplier))
          best = c;
      }
    }
  }
  return best;
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
