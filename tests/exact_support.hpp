// Shared by the exact_* tests: sanitizer-aware case counts, random RESCALE attributes, and the
// reference-only (tests/reference/spec_reference.hpp) evaluation and search for RESCALEs that
// the tests compare qfold's classifier and synthesis against.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <qfold/exact/classify.hpp>
#include <random>
#include <span>
#include <vector>

#include "reference/from_qfold.hpp"
#include "reference/spec_reference.hpp"

namespace {  // test-only: each test file gets its own copy
using qfold::domain;
using qfold::int_type;
using i64 = std::int64_t;

// Sanitizer builds run 5-10x slower: they get fewer random cases (same kinds of case).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif
constexpr int scaled(int n) { return sanitized ? std::max(1, n / 8) : n; }

// The kernels this CPU can run: the scalar loops, the two-lane baseline, and the AVX2 and
// AVX-512 copies where the CPU has them (never called otherwise).
inline std::vector<qfold::detail::vector_isa> runnable_isas() {
  using qfold::detail::vector_isa;
  std::vector<vector_isa> r;
  for (const auto isa :
       {vector_isa::scalar, vector_isa::baseline, vector_isa::avx2, vector_isa::avx512})
    if (qfold::detail::cpu_runs(isa)) r.push_back(isa);
  return r;
}

// A per-tensor RESCALE's attributes (signed types, single rounding, scale32).
inline qfold::rescale_attributes attrs(int_type in, int_type out, i64 izp = 0, i64 ozp = 0) {
  qfold::rescale_attributes a;
  a.input_type = in;
  a.output_type = out;
  a.input_zp = izp;
  a.output_zp = ozp;
  return a;
}
// Storage for the scale_factor spans rescale views point into.
struct scales {
  std::deque<std::array<qfold::scale_factor, 1>> all;  // stable addresses as it grows
  qfold::rescale_view view(const qfold::rescale_attributes& a, qfold::scale_factor s) {
    all.push_back({s});
    return {a, all.back()};
  }
};
i64 pick(std::mt19937_64& gen, i64 lo, i64 hi) {
  return std::uniform_int_distribution<i64>(lo, hi)(gen);
}

// --- the reference's RESCALE ----------------------------------------------------------------
std::optional<i64> ref_rescale(const qfold::rescale_attributes& a, i64 multiplier, int shift,
                               i64 x) {
  const auto r =
      qref::rescale_element(qref::as_qfold_evaluates(qref::from_qfold(a, multiplier, shift)), x);
  return r.ok ? std::optional<i64>(r.value) : std::nullopt;
}
// Does the certificate give y on every input, evaluated by the reference?
[[maybe_unused]] bool ref_reproduces(domain d, std::span<const i64> y,
                                     const qfold::rescale_certificate& c) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const auto v =
        ref_rescale(c.attributes, c.scale.multiplier, c.scale.shift, d.lo + static_cast<i64>(i));
    if (!v || *v != y[i]) return false;
  }
  return true;
}

// --- RESCALE search with the reference alone ---------------------------------------------------
// For fixed attributes, shift and input x, the reference's output is monotone in the multiplier
// (non-decreasing when x > input_zp, non-increasing when x < input_zp, constant at x = input_zp;
// the rounding and the clamp are monotone). So the multipliers giving y(x) form an interval,
// found by two binary searches, and the multipliers that work on the whole domain are the
// intersection of those intervals. Nothing of qfold's interval arithmetic is used.
struct mrange {
  i64 lo = 1, hi = 0;
  [[nodiscard]] bool empty() const { return lo > hi; }
};
template <class P>
i64 first_true(i64 lo, i64 hi, const P& pred) {  // pred monotone false -> true on [lo, hi]
  while (lo <= hi) {
    const i64 mid = lo + (hi - lo) / 2;
    if (pred(mid))
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return lo;
}
mrange reference_multipliers(domain d, std::span<const i64> y, const qfold::rescale_attributes& a,
                             int shift) {
  mrange r{0, a.scale32 ? 2147483647 : 32767};
  const auto n = static_cast<i64>(y.size());
  for (i64 k = 0; k < n && !r.empty(); ++k) {
    const i64 i = k == 0 ? 0 : k == 1 ? n - 1 : k - 1;  // both ends first: they constrain most
    const i64 x = d.lo + i, t = y[static_cast<std::size_t>(i)];
    const auto f = [&](i64 m) { return ref_rescale(a, m, shift, x); };
    const auto f0 = f(r.lo);
    if (!f0) return {};  // a REQUIRE that does not depend on the multiplier (the value range)
    if (x == a.input_zp) {
      if (*f0 != t) return {};
      continue;
    }
    const bool up = x > a.input_zp;
    const auto at_least = [&](i64 m) {
      const auto v = f(m);
      return v && (up ? *v >= t : *v <= t);
    };
    const auto beyond = [&](i64 m) {
      const auto v = f(m);
      return v && (up ? *v > t : *v < t);
    };
    r = {first_true(r.lo, r.hi, at_least), first_true(r.lo, r.hi, beyond) - 1};
  }
  return r;
}

// The output zero points a RESCALE of `space` can have for this map. R(0) = 0 for both roundings
// (the rounding constant 2^(s-1), plus 2^30 when s > 31, stays below 2^s), so when the input
// zero point is an input of the domain and the map is strictly inside the output type there,
// the output zero point must be y(input_zp); otherwise every legal one is a candidate.
std::vector<i64> output_zero_points(domain d, std::span<const i64> y, const qfold::rescale_space& s,
                                    i64 izp) {
  const qfold::int_range out = qfold::range_of(s.output_type, s.output_unsigned);
  if (d.contains(izp)) {
    const i64 v = y[static_cast<std::size_t>(izp - d.lo)];
    if (v > out.lo && v < out.hi) return {v};
  }
  if (s.output_type == int_type::i8) {
    std::vector<i64> all;
    for (i64 z = out.lo; z <= out.hi; ++z) all.push_back(z);
    return all;
  }
  if (s.output_type == int_type::i16 && s.output_unsigned) return {0, 32768};
  return {0};
}

// The smallest (shift, then multiplier) RESCALE of `space` that gives y, by the reference search.
[[maybe_unused]] std::optional<qfold::rescale_certificate> reference_smallest(
    domain d, std::span<const i64> y, const qfold::rescale_space& space) {
  const std::array<i64, 1> zero{0};
  const auto izps =
      space.input_zero_points.empty() ? std::span<const i64>(zero) : space.input_zero_points;
  for (int shift = 2; shift <= 62; ++shift) {
    std::optional<qfold::rescale_certificate> best;
    for (const i64 izp : izps)
      for (const i64 ozp : output_zero_points(d, y, space, izp))
        for (const bool dr : {false, true}) {
          if (dr && !(space.allow_double_round && space.scale32)) continue;
          const qfold::rescale_attributes a{
              space.input_type,
              space.output_type,
              space.scale32,
              dr ? qfold::rounding_mode::double_round : qfold::rounding_mode::single_round,
              false,
              space.input_unsigned,
              space.output_unsigned,
              izp,
              ozp};
          if (qref::rescale_error_if(qref::as_qfold_evaluates(qref::from_qfold(a, 0, shift))).any())
            continue;
          const mrange m = reference_multipliers(d, y, a, shift);
          if (!m.empty() && (!best || m.lo < best->scale.multiplier))
            best = qfold::rescale_certificate{a, {static_cast<std::int32_t>(m.lo), shift}};
        }
    if (best) return best;
  }
  return std::nullopt;
}

// A random RESCALE with 8- or 16-bit input (the types RESCALE maps are classified over).
struct random_rescale {
  qfold::rescale_attributes attrs;
  i64 multiplier;
  int shift;
  domain d;
  std::vector<i64> y;  // by the reference
};

inline std::optional<random_rescale> make_random_rescale(std::mt19937_64& gen,
                                                         bool allow_int16_input) {
  random_rescale r{};
  auto& a = r.attrs;
  const int in_kind = static_cast<int>(pick(gen, 0, allow_int16_input ? 2 : 1));  // i8 u8 i16
  const int out_kind = static_cast<int>(pick(gen, 0, 4));  // i8 u8 i16 i32 u16
  a.input_type = in_kind == 2 ? int_type::i16 : int_type::i8;
  a.input_unsigned = in_kind == 1;
  a.output_type = out_kind <= 1 ? int_type::i8 : out_kind == 3 ? int_type::i32 : int_type::i16;
  a.output_unsigned = out_kind == 1 || out_kind == 4;
  if (a.input_unsigned && (a.output_unsigned || a.output_type == int_type::i32))
    return std::nullopt;
  a.scale32 = pick(gen, 0, 4) != 0;
  a.rounding = a.scale32 && pick(gen, 0, 1) != 0 ? qfold::rounding_mode::double_round
                                                 : qfold::rounding_mode::single_round;
  if (in_kind == 0) a.input_zp = pick(gen, -128, 127);
  if (in_kind == 1) a.input_zp = pick(gen, 0, 255);
  if (out_kind == 0) a.output_zp = pick(gen, -128, 127);
  if (out_kind == 1) a.output_zp = pick(gen, 0, 255);
  if (out_kind == 4) a.output_zp = pick(gen, 0, 1) * 32768;
  r.d = in_kind == 0   ? qfold::int8_domain
        : in_kind == 1 ? qfold::uint8_domain
                       : qfold::int16_domain;
  if (pick(gen, 0, 5) == 0) {  // a restricted [qmin, qmax]
    const i64 lo = pick(gen, r.d.lo, r.d.hi - 2);
    r.d = domain{lo, pick(gen, lo + 2, std::min(r.d.hi, lo + 300))};
  }
  // A real scale around (output span / input span) * 2^[-3, 3], encoded at a random legal shift.
  const double in_span = static_cast<double>(r.d.size());
  const double out_span = a.output_type == int_type::i8    ? 256.0
                          : a.output_type == int_type::i16 ? 65536.0
                                                           : 1e6;
  const double scale =
      out_span / in_span * std::exp2(static_cast<double>(pick(gen, -3000, 3000)) / 1000.0);
  const i64 cap = a.scale32 ? 2147483647 : 32767;
  int s_lo = 2;
  while (a.scale32 &&
         (std::int64_t{1} << (s_lo - 1)) < std::max(r.d.hi - a.input_zp + 1, a.input_zp - r.d.lo))
    ++s_lo;
  int s_hi = s_lo;
  while (s_hi < 62 && scale * std::exp2(s_hi + 1) < static_cast<double>(cap)) ++s_hi;
  r.shift = static_cast<int>(pick(gen, s_lo, s_hi));
  const double m = scale * std::exp2(r.shift);
  r.multiplier = std::clamp<i64>(
      static_cast<i64>(m * (0.9 + 0.2 * static_cast<double>(pick(gen, 0, 1000)) / 1000.0)), 0, cap);
  if (pick(gen, 0, 30) == 0) r.multiplier = 0;
  r.y.reserve(r.d.size());
  for (i64 x = r.d.lo; x <= r.d.hi; ++x) {
    const auto v = ref_rescale(a, r.multiplier, r.shift, x);
    if (!v) return std::nullopt;
    r.y.push_back(*v);
  }
  return r;
}

inline qfold::rescale_space space_of(const qfold::rescale_attributes& a, std::span<const i64> izps,
                                     bool allow_double_round) {
  return qfold::rescale_space{a.input_type, a.input_unsigned,   a.output_type, a.output_unsigned,
                              a.scale32,    allow_double_round, izps};
}
}  // namespace
