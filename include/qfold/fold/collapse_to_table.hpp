// Collapsing an elementwise integer chain (RESCALE, MUL / ADD by a constant, CLAMP, TABLE, CAST)
// from an int8 or int16 tensor to an int8 tensor into one TABLE: a 256-entry int8 TABLE equal to
// the chain on every code, or a 513-knot int16 TABLE (+ the RESCALE by 2^-7 that rounds its 16.7
// output) only where that pair equals the chain on all 65,536 codes. Per-channel chains fold only
// when every channel gives the same table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "qfold/arith/rescale.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/exact/domain.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/table/chain.hpp"
#include "qfold/table/compose.hpp"
#include "qfold/table/lut.hpp"

namespace qfold {

// A narrowing CAST: before step `before` of the chain, the value must lie in [lo, hi] (the
// target type); a value outside is refused, not truncated (see docs/folds.md).
struct range_check {
  std::size_t before = 0;
  std::int64_t lo = 0, hi = 0;
};

// The chain as plain data: one list of steps per channel (one list: per tensor; every list has
// the same structure), the narrowing checks, and the input codes (int8 or int16, all of them).
struct elementwise_chain {
  domain codes = int8_domain;
  std::span<const std::vector<chain::step>> channels;
  std::span<const range_check> checks;
};

// The RESCALE that rounds an int16 TABLE's 16.7 output to int8 (x 2^-7, round half up).
inline constexpr rescale_attributes int16_table_rounding{int_type::i32, int_type::i8};
inline constexpr scale_factor int16_table_rounding_scale{1 << 30, 37};

namespace detail {
// The chain at x with the narrowing checks, or the failing step's error (index = the step).
[[nodiscard]] constexpr result<std::int64_t> run_elementwise(std::span<const chain::step> steps,
                                                             std::span<const range_check> checks,
                                                             std::int64_t x) {
  for (std::size_t i = 0;; ++i) {
    for (const range_check& c : checks)
      if (c.before == i && (x < c.lo || x > c.hi))
        return fail(errc::value_out_of_range,
                    "a narrowing CAST receives a value outside its target type", i);
    if (i == steps.size()) return x;
    const result<std::int64_t> r = chain::evaluate(steps.subspan(i, 1), x);
    if (!r) return fail(r.error().code, r.error().message, i);
    x = *r;
  }
}

[[nodiscard]] constexpr rejection chain_failure(const error& e, std::size_t index) {
  const reason why = e.code == errc::result_out_of_range  ? reason::overflow
                     : e.code == errc::value_out_of_range ? reason::out_of_range
                                                          : reason::unsupported;
  return rejection{why, e.message, index};
}

// Every channel at every code; calls out(channel, code index, value). Rejections: a failing step
// (overflow / out_of_range / unsupported), a result outside int8 (out_of_range), a channel whose
// value differs from channel 0's (not_exact). Indices: channel * codes + code index.
template <class Out>
[[nodiscard]] constexpr std::optional<rejection> each_code(const elementwise_chain& c,
                                                           std::vector<std::int64_t>& first,
                                                           Out&& out) {
  const std::size_t codes = c.codes.size();
  if (c.channels.empty()) return rejection{reason::invalid_shape, "the chain has no channels"};
  first.clear();
  first.reserve(codes);
  for (std::size_t ch = 0; ch < c.channels.size(); ++ch) {
    for (std::size_t i = 0; i < codes; ++i) {
      const std::size_t index = ch * codes + i;
      const auto r =
          run_elementwise(c.channels[ch], c.checks, c.codes.lo + static_cast<std::int64_t>(i));
      if (!r) return chain_failure(r.error(), index);
      if (*r < -128 || *r > 127)
        return rejection{reason::out_of_range, "the chain's result leaves int8", index};
      if (ch == 0) {
        first.push_back(*r);
        out(i, *r);
      } else if (*r != first[i]) {
        return rejection{reason::not_exact,
                         "the channels give different tables (index: channel * codes + code "
                         "index)",
                         index};
      }
    }
  }
  return std::nullopt;
}
}  // namespace detail

// An int8 chain as a 256-entry int8 TABLE (entry i = the chain at code i - 128, every channel).
[[nodiscard]] constexpr std::optional<rejection> fold_chain_to_table8(
    const elementwise_chain& c, std::array<std::int8_t, 256>& table) {
  if (c.codes != int8_domain)
    return rejection{reason::unsupported, "an int8 TABLE is indexed by int8 codes"};
  try {
    std::vector<std::int64_t> first;
    return detail::each_code(
        c, first, [&](std::size_t i, std::int64_t v) { table[i] = static_cast<std::int8_t>(v); });
  } catch (const std::bad_alloc&) {
    return rejection{reason::allocation_failure, "the proof's buffers could not be allocated"};
  }
}

// An int16 chain as a TOSA int16 TABLE followed by int16_table_rounding: accepted only where that
// pair equals the chain on all 65,536 codes (not_exact otherwise, with the first code's index).
[[nodiscard]] constexpr std::optional<rejection> fold_chain_to_table16(
    const elementwise_chain& c, std::array<std::int16_t, 513>& table) {
  if (c.codes != int16_domain)
    return rejection{reason::unsupported, "an int16 TABLE is indexed by int16 codes"};
  try {
    std::vector<std::int64_t> y;
    if (auto r = detail::each_code(c, y, [](std::size_t, std::int64_t) {})) return r;
    // The checks passed on every code, so the plain chain is the same function there.
    const auto fit = chain::collapse_int16(c.channels[0], true);
    if (!fit)
      return rejection{
          fit.error().code == errc::not_exact ? reason::not_exact : reason::out_of_range,
          fit.error().message, fit.error().index};
    // What the graph will compute, replayed: TOSA TABLE int16, then the rounding RESCALE.
    for (std::size_t i = 0; i < y.size(); ++i) {
      const auto x = static_cast<std::int16_t>(-32768 + static_cast<std::int64_t>(i));
      const auto raw = checked::tosa_lookup(fit->table, x);
      const auto v =
          raw ? checked::rescale_value(int16_table_rounding, int16_table_rounding_scale, *raw)
              : result<std::int32_t>(raw.error());
      if (!v || *v != y[i])
        return rejection{reason::not_exact,
                         "the int16 TABLE and its rounding differ from the chain", i};
    }
    table = fit->table.values;
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return rejection{reason::allocation_failure, "the proof's buffers could not be allocated"};
  }
}

}  // namespace qfold
