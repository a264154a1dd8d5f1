// Classification of an integer map over a whole domain, per channel: identity, constant, exactly
// integer-affine, exactly one TOSA RESCALE, affine on a sub-range and clamped outside it, or none
// of these; each answer carries its certificate, each failed candidate the first input it misses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "qfold/arith/rounding.hpp"
#include "qfold/arith/scale_derivation.hpp"
#include "qfold/detail/algorithm.hpp"
#include "qfold/exact/domain.hpp"
#include "qfold/exact/synthesize.hpp"

namespace qfold {

enum class map_kind : std::uint8_t { identity, constant, affine, rescale, saturated_affine, none };

[[nodiscard]] constexpr std::string_view to_string(map_kind k) noexcept {
  constexpr std::string_view names[] = {"identity", "constant",         "affine",
                                        "rescale",  "saturated_affine", "none"};
  return names[static_cast<std::size_t>(k)];
}

namespace detail {
// Lines are evaluated in 128 bits: a map may hold any int64, and a candidate line through two of
// its points may leave int64 elsewhere (that is a miss, never undefined behaviour).
__extension__ typedef __int128 wide_int;
[[nodiscard]] constexpr bool fits_int64(wide_int v) noexcept {
  return v >= std::numeric_limits<std::int64_t>::min() &&
         v <= std::numeric_limits<std::int64_t>::max();
}
[[nodiscard]] constexpr std::int64_t saturate_int64(wide_int v) noexcept {
  return v < std::numeric_limits<std::int64_t>::min()   ? std::numeric_limits<std::int64_t>::min()
         : v > std::numeric_limits<std::int64_t>::max() ? std::numeric_limits<std::int64_t>::max()
                                                        : static_cast<std::int64_t>(v);
}
}  // namespace detail

// y = slope * x + offset.
struct affine_map {
  std::int64_t slope = 0, offset = 0;
  // Saturated to int64 (exact on the domain of a map classified as this line).
  [[nodiscard]] constexpr std::int64_t operator()(std::int64_t x) const noexcept {
    return detail::saturate_int64(detail::wide_int{slope} * x + offset);
  }
  friend constexpr bool operator==(const affine_map&, const affine_map&) = default;
};

namespace detail {
[[nodiscard]] constexpr wide_int line_value(const affine_map& l, std::int64_t x) noexcept {
  return wide_int{l.slope} * x + l.offset;
}
}  // namespace detail

// y = clamp(line(x), lo, hi), unclamped exactly on first..last.
struct saturated_affine_map {
  affine_map line;
  std::int64_t lo = 0, hi = 0;
  std::int64_t first = 0, last = 0;
  [[nodiscard]] constexpr std::int64_t operator()(std::int64_t x) const noexcept {
    const detail::wide_int v = detail::line_value(line, x);
    return v < lo ? lo : v > hi ? hi : static_cast<std::int64_t>(v);
  }
};

// Where a candidate first fails: the input, the map's value there, the candidate's value (an
// int64 extreme where the candidate has none: beyond int64, or an error of the RESCALE).
struct witness {
  std::int64_t input = 0, expected = 0, actual = 0;
};

struct classification {
  map_kind kind = map_kind::none;
  affine_map affine;                           // identity, constant, affine
  saturated_affine_map saturated;              // saturated_affine
  std::optional<rescale_certificate> rescale;  // whenever one RESCALE reproduces the map
  std::optional<witness> affine_miss;          // the first input the best affine candidate misses
  std::optional<witness> saturated_miss;       // likewise for the clamped line
  std::optional<witness> rescale_miss;         // likewise for the RESCALE the endpoints suggest
};

namespace detail {
// The candidate's value as a witness holds it: saturated to int64, and where that would equal
// the map's value (the candidate is beyond int64 on the map's side) the other int64 extreme, so
// that a witness never seems to agree.
[[nodiscard]] constexpr std::int64_t witness_value(wide_int v, std::int64_t expected) noexcept {
  const std::int64_t s = saturate_int64(v);
  if (s != expected || v == expected) return s;
  return expected == std::numeric_limits<std::int64_t>::max()
             ? std::numeric_limits<std::int64_t>::min()
             : std::numeric_limits<std::int64_t>::max();
}

// f(x) may be 128 bits wide (a line); the witness holds it as witness_value does.
template <class F>
[[nodiscard]] constexpr std::optional<witness> first_miss(domain d, std::span<const std::int64_t> y,
                                                          const F& f) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::int64_t x = d.lo + static_cast<std::int64_t>(i);
    const wide_int v = f(x);
    if (v != y[i]) return witness{x, y[i], witness_value(v, y[i])};
  }
  return std::nullopt;
}

// The line through the first two points (a constant for a one-point domain, and the constant
// through the first point when that line's slope or offset does not fit int64).
[[nodiscard]] constexpr affine_map line_through_start(domain d,
                                                      std::span<const std::int64_t> y) noexcept {
  const wide_int slope = y.size() > 1 ? wide_int{y[1]} - y[0] : 0;
  const wide_int offset = y[0] - slope * d.lo;
  if (!fits_int64(slope) || !fits_int64(offset)) return {0, y[0]};
  return {static_cast<std::int64_t>(slope), static_cast<std::int64_t>(offset)};
}

// The clamp of the line through the unclamped middle: the ends' values are the clamp bounds.
[[nodiscard]] constexpr std::optional<saturated_affine_map> clamped_line(
    domain d, std::span<const std::int64_t> y) {
  const std::int64_t lo = std::min(y.front(), y.back()), hi = std::max(y.front(), y.back());
  std::size_t first = 0, last = y.size() - 1;
  while (first < y.size() && (y[first] == lo || y[first] == hi)) ++first;
  while (last > first && (y[last] == lo || y[last] == hi)) --last;
  if (first >= y.size()) return std::nullopt;  // only the two end values: a step, not a line
  const wide_int slope =
      last > first ? (wide_int{y[last]} - y[first]) / static_cast<std::int64_t>(last - first) : 0;
  const std::int64_t x0 = d.lo + static_cast<std::int64_t>(first);
  const wide_int offset = y[first] - slope * x0;
  if (!fits_int64(slope) || !fits_int64(offset)) return std::nullopt;
  return saturated_affine_map{{static_cast<std::int64_t>(slope), static_cast<std::int64_t>(offset)},
                              lo,
                              hi,
                              x0,
                              d.lo + static_cast<std::int64_t>(last)};
}

// The RESCALE a naive merge would use: the endpoints' slope through compute_multiplier_and_shift
// (0 when the map falls or has one point; the steepest encodable scale when it is too steep), so
// that every non-empty map has a candidate within the space.
[[nodiscard]] constexpr std::optional<rescale_certificate> endpoint_rescale(
    domain d, std::span<const std::int64_t> y, const rescale_space& space) {
  if (y.empty()) return std::nullopt;
  const double slope = y.size() < 2 || y.back() <= y.front()
                           ? 0.0
                           : (static_cast<double>(y.back()) - static_cast<double>(y.front())) /
                                 static_cast<double>(y.size() - 1);
  const auto s =
      compute_multiplier_and_shift(slope, space.scale32 ? scale_width::bits32 : scale_width::bits16,
                                   tie_rule::half_away_from_zero)
          .value_or(scale_factor{space.scale32 ? 2147483647 : 32767, 2});
  const std::int64_t izp = space.input_zero_points.empty() ? 0 : space.input_zero_points.front();
  rescale_attributes a{space.input_type,
                       space.output_type,
                       space.scale32,
                       rounding_mode::single_round,
                       false,
                       space.input_unsigned,
                       space.output_unsigned,
                       izp,
                       0};
  if (d.contains(izp)) a.output_zp = y[offset_in(d, izp)];
  if (!validate(a)) a.output_zp = 0;
  return rescale_certificate{a, s};
}
}  // namespace detail

namespace detail {
// The first input off a line. Where the line's values at both ends fit int64 (then so do all
// between: a line is monotone), one vector pass compares modulo 2^64, which is exact there;
// otherwise each value is computed in 128 bits.
[[nodiscard]] constexpr std::optional<witness> first_off_line(domain d,
                                                              std::span<const std::int64_t> y,
                                                              const affine_map& line,
                                                              vector_isa isa) {
  const wide_int first = line_value(line, d.lo), last = line_value(line, d.hi);
  if (!fits_int64(first) || !fits_int64(last))
    return first_miss(d, y, [&](std::int64_t x) { return line_value(line, x); });
  const std::size_t i = synth::first_off_line(
      y.data(), y.size(), static_cast<std::uint64_t>(static_cast<std::int64_t>(first)),
      static_cast<std::uint64_t>(line.slope), isa);
  if (i == y.size()) return std::nullopt;
  const std::int64_t x = d.lo + static_cast<std::int64_t>(i);
  return witness{x, y[i], witness_value(line_value(line, x), y[i])};
}

// classify with the kernels to use (tests compare the ISAs; the answer never depends on them).
[[nodiscard]] constexpr classification classify_with(domain d, std::span<const std::int64_t> y,
                                                     const rescale_space* space, vector_isa isa) {
  classification c;
  if (y.empty() || y.size() != d.size()) return c;
  const affine_map line = line_through_start(d, y);
  c.affine_miss = first_off_line(d, y, line, isa);
  if (!c.affine_miss) {
    c.affine = line;
    c.kind = line.slope == 0 ? map_kind::constant
                             : (line == affine_map{1, 0} ? map_kind::identity : map_kind::affine);
  }
  if (space != nullptr) {
    // A map found to be one line tells synthesis where its bounds are (the ends of each run);
    // one that starts with a constant run, where that run ends (its first miss).
    synth::map_facts facts;
    if (!c.affine_miss)
      facts.shape =
          line.slope >= 0 ? synth::map_shape::rising_line : synth::map_shape::falling_line;
    else if (line.slope == 0 && line.offset == y[0])
      facts.run = offset_in(d, c.affine_miss->input);
    c.rescale = synthesize(d, y, *space, facts, isa);
    if (!c.rescale && known_types(*space)) {  // other types: no candidate at all
      if (const auto naive = endpoint_rescale(d, y, *space))
        c.rescale_miss = first_miss(d, y, [&](std::int64_t x) -> wide_int {
          // An error is a miss: it shows as an int64 extreme different from the map's value.
          const auto r = checked::rescale_value(naive->attributes, naive->scale, x);
          if (r) return *r;
          const std::int64_t yx = y[offset_in(d, x)];
          return yx == std::numeric_limits<std::int64_t>::min()
                     ? std::numeric_limits<std::int64_t>::max()
                     : std::numeric_limits<std::int64_t>::min();
        });
    }
  }
  if (c.kind != map_kind::none) return c;
  if (c.rescale) {
    c.kind = map_kind::rescale;
    return c;
  }
  if (const auto sat = clamped_line(d, y)) {
    c.saturated_miss = first_miss(d, y, *sat);
    if (!c.saturated_miss) {
      c.saturated = *sat;
      c.kind = map_kind::saturated_affine;
    }
  }
  return c;
}
}  // namespace detail

// Classifies y (y[i] = map(d.lo + i)). With `space`, also synthesizes a RESCALE in that space.
// The kind is the most specific that holds: identity, constant, affine, rescale, saturated_affine.
[[nodiscard]] constexpr classification classify(domain d, std::span<const std::int64_t> y,
                                                const rescale_space* space = nullptr) {
  return detail::classify_with(d, y, space, detail::runtime_isa());
}

// The integer line y = slope * x + offset through every point (x[i], y[i]) of a set with strictly
// increasing x (not a contiguous domain: e.g. the values a table can produce), or the first point
// off the line through the first two (when that line's slope or offset does not fit int64, no
// int64 line fits: the miss is then the second point, off the constant through the first). A
// one-point set gets slope 1 (any slope fits it), or slope 0 when y - x does not fit int64.
struct line_fit {
  std::optional<affine_map> line;
  std::optional<witness> miss;  // when no integer line fits: the first point the candidate misses
};

[[nodiscard]] constexpr line_fit fit_line(std::span<const std::int64_t> x,
                                          std::span<const std::int64_t> y) {
  line_fit r;
  if (x.empty() || x.size() != y.size()) return r;
  detail::wide_int slope = 1;
  if (x.size() > 1) {
    const detail::wide_int dx = detail::wide_int{x[1]} - x[0], dy = detail::wide_int{y[1]} - y[0];
    if (dx <= 0) return r;
    slope = dy / dx;  // a remainder means no integer line: the second point is then the miss
  }
  detail::wide_int offset = y[0] - slope * x[0];
  if (!detail::fits_int64(slope) || !detail::fits_int64(offset)) {
    slope = 0;  // a representable candidate through the first point (it misses the second)
    offset = y[0];
  }
  const affine_map line{static_cast<std::int64_t>(slope), static_cast<std::int64_t>(offset)};
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i > 0 && x[i] <= x[i - 1]) return {};  // not a set with increasing x
    const detail::wide_int v = detail::line_value(line, x[i]);
    if (v != y[i]) {
      r.miss = witness{x[i], y[i], detail::witness_value(v, y[i])};
      return r;
    }
  }
  r.line = line;
  return r;
}

namespace detail {
// classify_channels with the kernels to use (benchmarks and tests compare the ISAs).
[[nodiscard]] constexpr std::vector<classification> classify_channels_with(
    domain d, std::span<const std::int64_t> values, std::size_t channels,
    const rescale_space* space, vector_isa isa) {
  std::vector<classification> r;
  if (channels == 0 || d.empty() || values.size() / channels != d.size() ||
      values.size() % channels != 0)
    return r;
  r.reserve(channels);
  for (std::size_t ch = 0; ch < channels; ++ch) {
    // Synthesis reads a short channel in several places (ends first): the next one is fetched
    // into the cache meanwhile (32 lines for int8), as the hardware's stream prefetcher does not.
    if (!std::is_constant_evaluated() && space != nullptr && ch + 1 < channels && d.size() <= 4096)
      for (std::size_t i = 0; i < d.size(); i += 8)
        __builtin_prefetch(&values[(ch + 1) * d.size() + i]);
    r.push_back(classify_with(d, values.subspan(ch * d.size(), d.size()), space, isa));
  }
  return r;
}
}  // namespace detail

// One classification per channel of values laid out channel-major ([channel][code]); empty
// unless values holds exactly channels * d.size() values (checked without wrapping).
[[nodiscard]] constexpr std::vector<classification> classify_channels(
    domain d, std::span<const std::int64_t> values, std::size_t channels,
    const rescale_space* space = nullptr) {
  return detail::classify_channels_with(d, values, channels, space, detail::runtime_isa());
}

}  // namespace qfold
