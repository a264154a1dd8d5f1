// Merging RESCALE -> (MUL by an integer constant ->) RESCALE into one RESCALE, per channel: only
// where the merged RESCALE equals the pair on every input code (8- and 16-bit inputs, all codes
// enumerated), else refused with the first code where the naive merge (scales multiplied, the
// intermediate clamp and rounding skipped, as tolerance-based passes do) differs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "qfold/arith/rescale.hpp"
#include "qfold/exact/domain.hpp"
#include "qfold/exact/merge.hpp"
#include "qfold/exact/synthesize.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/table/chain.hpp"

namespace qfold {

// The pair as the graph holds it: each RESCALE's attributes and its scales (one, or one per
// channel of the last axis), and the MUL by a constant between them, if there is one.
struct rescale_pair_site {
  rescale_view first;
  std::optional<chain::mul> mul;
  rescale_view second;
};

// The one RESCALE that replaces the pair: per channel when either RESCALE is.
struct rescale_merge_plan {
  rescale_attributes attributes{};
  std::vector<scale_factor> scales;
};

namespace detail {
[[nodiscard]] constexpr std::optional<rejection> valid_rescale(const rescale_view& r) {
  if (!is_bit_exact(r.attributes))
    return rejection{reason::unsupported_rescale, "a RESCALE is INEXACT_ROUND (not a function)"};
  const std::size_t channels = r.attributes.per_channel ? r.scales.size() : 1;
  if (auto ok = validate(r.attributes, r.scales, channels); !ok)
    return rejection{reason::unsupported_rescale, ok.error().message, ok.error().index};
  return std::nullopt;
}

// One channel of the pair as a chain (each RESCALE per tensor, with that channel's scale).
[[nodiscard]] constexpr std::array<chain::step, 3> pair_steps(const rescale_pair_site& s,
                                                              std::size_t c, std::size_t& count) {
  rescale_attributes a = s.first.attributes, b = s.second.attributes;
  a.per_channel = b.per_channel = false;
  const scale_factor sa = s.first.scales[s.first.attributes.per_channel ? c : 0];
  const scale_factor sb = s.second.scales[s.second.attributes.per_channel ? c : 0];
  std::array<chain::step, 3> steps{chain::rescale{a, sa}, chain::rescale{b, sb},
                                   chain::rescale{b, sb}};
  count = 2;
  if (s.mul) {
    steps[1] = *s.mul;
    count = 3;
  }
  return steps;
}

[[nodiscard]] constexpr rejection step_failure(const error& e, std::size_t index) {
  return rejection{
      e.code == errc::result_out_of_range ? reason::overflow : reason::unsupported_rescale,
      e.message, index};
}
}  // namespace detail

// Errors are rejections: unsupported_rescale (INEXACT_ROUND, attributes or scales invalid by the
// spec, a step failing on some input code: the graph itself is in error there, index = the
// code's offset), overflow (the MUL's rounded product leaves int32 at some code), unsupported
// (an int32 or int48 input: no exhaustive proof covers 2^32 codes, and qfold has no algebraic
// argument for a general pair, so it does not merge them), channel_mismatch (per-channel counts
// that differ), not_exact (no single RESCALE equals the pair; index = channel * codes + the
// first differing code's offset from the type's first code), allocation_failure.
[[nodiscard]] constexpr std::optional<rejection> fold_merge_rescales(const rescale_pair_site& s,
                                                                     rescale_merge_plan& plan) {
  if (auto r = detail::valid_rescale(s.first)) return r;
  if (auto r = detail::valid_rescale(s.second)) return r;
  const rescale_attributes& a = s.first.attributes;
  const rescale_attributes& b = s.second.attributes;
  if (a.input_type != int_type::i8 && a.input_type != int_type::i16)
    return rejection{reason::unsupported,
                     "the first RESCALE's input is int32 or int48: no exact argument covers its "
                     "whole range, so the pair is not merged"};
  const std::size_t ca = a.per_channel ? s.first.scales.size() : 1;
  const std::size_t cb = b.per_channel ? s.second.scales.size() : 1;
  if (a.per_channel && b.per_channel && ca != cb)
    return rejection{reason::channel_mismatch,
                     "the two RESCALEs have different per-channel scale counts"};
  const std::size_t channels = ca > cb ? ca : cb;
  const int_range in = a.input_range();
  const domain d{in.lo, in.hi};
  const std::array<std::int64_t, 2> zps{a.input_zp, 0};
  const rescale_space space{a.input_type,
                            a.input_unsigned,
                            b.output_type,
                            b.output_unsigned,
                            true,
                            true,
                            std::span<const std::int64_t>(zps.data(), a.input_zp == 0 ? 1 : 2)};
  try {
    plan.scales.clear();
    plan.scales.reserve(channels);
    std::vector<std::int64_t> y;
    y.reserve(d.size());
    for (std::size_t c = 0; c < channels; ++c) {
      std::size_t count = 0;
      const auto steps = detail::pair_steps(s, c, count);
      const std::span<const chain::step> chain(steps.data(), count);
      const auto merged = merge_rescales(d, chain, space);
      if (!merged) {
        const error& e = merged.error();
        if (e.code == errc::size_overflow)
          return rejection{reason::allocation_failure, e.message, rejection::no_index};
        if (e.index == error::no_index)
          return rejection{reason::unsupported_rescale, e.message, rejection::no_index};
        return detail::step_failure(e, c * d.size() + e.index);
      }
      const std::size_t first_diff =
          merged->first_difference
              ? c * d.size() + static_cast<std::size_t>(merged->first_difference->input - d.lo)
              : rejection::no_index;
      if (!merged->merged)
        return rejection{reason::not_exact,
                         "no single RESCALE equals the pair on every input code (index: channel "
                         "* codes + the first code where the naive merge differs)",
                         first_diff};
      if (c == 0) {
        plan.attributes = merged->merged->attributes;
        plan.scales.push_back(merged->merged->scale);
        continue;
      }
      if (merged->merged->attributes == plan.attributes) {
        plan.scales.push_back(merged->merged->scale);
        continue;
      }
      // One per-channel RESCALE has one set of zero points and one rounding: find this channel's
      // scale for channel 0's, and check it on every code.
      y.clear();
      for (std::int64_t x = d.lo; x <= d.hi; ++x) y.push_back(*chain::evaluate(chain, x));
      const auto shifts =
          rescale_shifts(d, y, space, plan.attributes.input_zp, plan.attributes.output_zp,
                         plan.attributes.rounding == rounding_mode::double_round);
      std::optional<scale_factor> found;
      for (int sh = 2; sh <= 62 && !found; ++sh) {
        const multiplier_range& m = shifts[static_cast<std::size_t>(sh)];
        if (m.empty()) continue;
        const rescale_certificate cert{plan.attributes, {static_cast<std::int32_t>(m.lo), sh}};
        if (detail::reproduces(d, y, cert)) found = cert.scale;
      }
      if (!found)
        return rejection{reason::not_exact,
                         "the channels' single RESCALEs need different zero points or rounding "
                         "(index: channel * codes + the first code where the naive merge differs)",
                         first_diff};
      plan.scales.push_back(*found);
    }
  } catch (const std::bad_alloc&) {
    return rejection{reason::allocation_failure, "the proof's buffers could not be allocated"};
  }
  plan.attributes.per_channel = a.per_channel || b.per_channel;
  return std::nullopt;
}

}  // namespace qfold
