// Exact merging: a chain of RESCALEs and TABLEs (with every intermediate clamp and rounding)
// becomes one RESCALE only if that RESCALE equals the chain on every input; otherwise the merge
// is refused with the largest deviation of the merge a tolerance-based pass would make, and the
// first input where it differs. Chains over 8-bit inputs always become one TABLE (chain::collapse).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "qfold/arith/rescale.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/scale_derivation.hpp"
#include "qfold/exact/classify.hpp"
#include "qfold/exact/domain.hpp"
#include "qfold/exact/synthesize.hpp"
#include "qfold/table/chain.hpp"

namespace qfold {

struct merge_report {
  std::optional<rescale_certificate> merged;  // the one RESCALE equal to the chain, if it exists
  rescale_certificate naive;                  // what merging by multiplying the scales gives
  std::int64_t max_deviation = 0;             // max |naive - chain| over the domain
  std::optional<witness> first_difference;    // first input where naive and chain differ
  [[nodiscard]] constexpr bool exact() const noexcept { return merged.has_value(); }
};

namespace detail {
// The merge a float-tolerance pass makes: multiply the real scales of the chain's RESCALEs
// (ignoring their intermediate clamps and roundings), input side of the first, output side of
// the last. Chains with other steps get the RESCALE through the chain's end points.
[[nodiscard]] constexpr rescale_certificate naive_merge(domain d, std::span<const std::int64_t> y,
                                                        std::span<const chain::step> steps,
                                                        const rescale_space& space) {
  double scale = 1.0;
  const chain::rescale* first = nullptr;
  const chain::rescale* last = nullptr;
  bool only_rescales = true;
  for (const chain::step& s : steps) {
    const auto* r = std::get_if<chain::rescale>(&s);
    if (r == nullptr) {
      only_rescales = false;
      break;
    }
    scale *= to_double(r->scale);
    if (first == nullptr) first = r;
    last = r;
  }
  if (only_rescales && first != nullptr) {
    const auto f = compute_multiplier_and_shift(
        scale, space.scale32 ? scale_width::bits32 : scale_width::bits16,
        tie_rule::half_away_from_zero);
    rescale_attributes a = first->attributes;
    a.output_type = last->attributes.output_type;
    a.output_unsigned = last->attributes.output_unsigned;
    a.output_zp = last->attributes.output_zp;
    a.rounding = rounding_mode::single_round;
    if (f) return {a, *f};
  }
  return endpoint_rescale(d, y, space).value_or(rescale_certificate{});
}
}  // namespace detail

namespace detail {
// A RESCALE step whose element types qfold does not know is refused before any evaluation.
[[nodiscard]] constexpr bool known_step_types(const chain::step& s) noexcept {
  const auto* r = std::get_if<chain::rescale>(&s);
  return r == nullptr ||
         (known_type(r->attributes.input_type) && known_type(r->attributes.output_type));
}
}  // namespace detail

// Merges `steps` over every input of d into one RESCALE of `space`, or reports why not. Errors:
// empty_range (d is empty), size_overflow (d has more than max_enumerated_codes codes, or the
// table of chain values cannot be allocated), illegal_type (a RESCALE step or the space has an
// element type that is not one of int_type's), and a step of the chain that fails for some
// input (error.index = that input - d.lo).
[[nodiscard]] constexpr result<merge_report> merge_rescales(domain d,
                                                            std::span<const chain::step> steps,
                                                            const rescale_space& space) {
  if (auto ok = detail::check_enumerable(d, "merge_rescales: the domain is empty (lo > hi)",
                                         "merge_rescales: the domain has too many codes");
      !ok)
    return ok.error();
  if (!detail::known_types(space))
    return fail(errc::illegal_type, "merge_rescales: the space's element type is unknown");
  for (std::size_t k = 0; k < steps.size(); ++k)
    if (!detail::known_step_types(steps[k]))
      return fail(errc::illegal_type, "merge_rescales: a RESCALE step's element type is unknown",
                  k);
  std::vector<std::int64_t> y;  // reserve + push_back: constant-evaluable with clang 14 too
  try {
    y.reserve(d.size());
  } catch (const std::bad_alloc&) {
    return fail(errc::size_overflow, "merge_rescales: the chain's values cannot be allocated");
  }
  for (std::size_t i = 0; i < d.size(); ++i) {
    const auto v = chain::evaluate(steps, d.lo + static_cast<std::int64_t>(i));
    if (!v) return fail(v.error().code, v.error().message, i);
    y.push_back(*v);
  }
  merge_report r;
  r.merged = synthesize_rescale(d, y, space);
  r.naive = detail::naive_merge(d, y, steps, space);
  constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::int64_t x = d.lo + static_cast<std::int64_t>(i);
    const auto n = checked::rescale_value(r.naive.attributes, r.naive.scale, x);
    if (!n) {  // the naive merge breaks a requirement here: an unbounded deviation
      if (!r.first_difference) r.first_difference = witness{x, y[i], 0};
      r.max_deviation = unbounded;
      continue;
    }
    // A chain may end anywhere in int64 (a clamp step): the difference is taken in 128 bits.
    const detail::wide_int diff = detail::wide_int{*n} - y[i];
    const std::int64_t dev = detail::saturate_int64(diff < 0 ? -diff : diff);
    if (dev != 0 && !r.first_difference) r.first_difference = witness{x, y[i], *n};
    if (dev > r.max_deviation) r.max_deviation = dev;
  }
  return r;
}

}  // namespace qfold
