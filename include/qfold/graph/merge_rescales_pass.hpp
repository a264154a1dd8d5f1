// The rescale-merging pass over any adapted IR: RESCALE -> RESCALE, and RESCALE -> MUL by an
// integer constant -> RESCALE, per tensor or per channel, becomes one RESCALE where that equals the
// pair on every input code (fold_merge_rescales), else the site is refused with the first code
// where the naive merge differs. Analysis first, then each plan in a transaction (two_phase.hpp).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/detail/algorithm.hpp"
#include "qfold/detail/ranges.hpp"
#include "qfold/fold/merge_rescales.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/read.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"

namespace qfold {

inline constexpr std::string_view merge_rescales_pass_name = "fold_merge_rescales";

namespace detail {
template <class Id>
struct rescale_merge_graph_plan {
  Id first, last;  // the first RESCALE (its operand 0 is read at apply time) and the last
  rescale_merge_plan merged;
};

// The one value of an integer constant that is a scalar or holds one value repeated.
template <class G>
[[nodiscard]] constexpr std::optional<rejection> uniform_constant(const G& g, node_id_t<G> n,
                                                                  std::int64_t& value) {
  const auto c = read_int_constant(g, n);
  if (!c) return rejection{reason::not_constant, "the MUL's other operand is not a constant"};
  if (c->data.empty()) return rejection{reason::invalid_shape, "the MUL's constant is empty"};
  value = c->data[0];
  for (const std::int64_t v : c->data)
    if (v != value)
      return rejection{reason::not_scalar, "the MUL's constant holds more than one value"};
  return std::nullopt;
}

// Whether elementwise op `op`, reading `input` and the constant `k`, keeps input's shape (so one
// TABLE or RESCALE of input can replace it): the output shapes compared where the adapter gives
// them; else only a single value of rank 0 or 1 is taken to broadcast without changing a shape.
template <class G>
[[nodiscard]] constexpr bool keeps_shape(const G& g, node_id_t<G> op, node_id_t<G> input,
                                         node_id_t<G> k) {
  if constexpr (has_output_shape<G>) {
    (void)k;
    std::vector<std::int64_t> sa, sb;
    std::span<const std::int64_t> va, vb;
    if (!read_integers(ir_traits<G>::output_shape(g, op), sa, va) ||
        !read_integers(ir_traits<G>::output_shape(g, input), sb, vb))
      return false;
    return detail::equal(va, vb);
  } else {
    (void)op;
    (void)input;
    const auto c = read_int_constant(g, k);
    return c && c->data.size() == 1 && c->shape.size() <= 1;
  }
}
}  // namespace detail

namespace detail {
template <class G>
constexpr report<node_id_t<G>> fold_merge_rescales_of(G& g) {
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::rescale_merge_graph_plan<id>;
  std::vector<id> claimed;  // nodes of accepted sites: a later site may not reuse them
  const auto match = [&claimed](const G& cg, id last) -> std::optional<site_candidate<id, plan_t>> {
    if (T::kind(cg, last) != op_kind::rescale) return std::nullopt;
    const auto before = detail::only_operand(cg, last);
    if (!before) return std::nullopt;
    std::optional<id> mul, first;
    if (T::kind(cg, *before) == op_kind::rescale) {
      first = *before;
    } else if (detail::has_mul_shift<G> && T::kind(cg, *before) == op_kind::mul &&
               std::ranges::size(T::operands(cg, *before)) == 2) {
      mul = *before;
      const id a = *detail::operand(cg, *mul, 0), b = *detail::operand(cg, *mul, 1);
      if (T::kind(cg, a) == op_kind::rescale && detail::is_int_constant(cg, b)) first = a;
      if (T::kind(cg, b) == op_kind::rescale && detail::is_int_constant(cg, a)) first = b;
    }
    if (!first) return std::nullopt;
    const auto is_claimed = [&](id n) { return detail::contains(claimed, n); };
    if (is_claimed(*first) || is_claimed(last) || (mul && is_claimed(*mul)))
      return std::nullopt;  // part of an earlier site: merged on the next run
    site_candidate<id, plan_t> c{{}, std::nullopt, {*first, last, {}}};
    c.nodes.push_back(*first);
    if (mul) c.nodes.push_back(*mul);
    c.nodes.push_back(last);
    c.rejected = [&]() -> std::optional<rejection> {
      if (T::use_count(cg, *first) != 1 || (mul && T::use_count(cg, *mul) != 1))
        return rejection{reason::shared_output, "the first RESCALE or the MUL has another reader"};
      if (!detail::only_operand(cg, *first))
        return rejection{reason::unsupported, "the first RESCALE has more than one operand"};
      detail::rescale_values r1, r2;
      detail::read_rescale(cg, *first, r1);
      detail::read_rescale(cg, last, r2);
      rescale_pair_site site{r1, std::nullopt, r2};
      if (mul) {
        const id k = detail::is_int_constant(cg, *detail::operand(cg, *mul, 0))
                         ? *detail::operand(cg, *mul, 0)
                         : *detail::operand(cg, *mul, 1);
        std::int64_t value = 0;
        if (auto r = detail::uniform_constant(cg, k, value)) return r;
        if (!std::in_range<std::int32_t>(value))
          return rejection{reason::out_of_range, "the MUL's constant does not fit int32"};
        if (!detail::keeps_shape(cg, *mul, *first, k))
          return rejection{reason::unsupported,
                           "the MUL's constant broadcasts the tensor to another shape"};
        const auto shift = detail::mul_shift_of(cg, *mul);
        if (!shift) return rejection{reason::unsupported, "the MUL's shift is outside 0..63"};
        site.mul = chain::mul{static_cast<std::int32_t>(value), *shift, true};
      }
      return fold_merge_rescales(site, c.plan.merged);
    }();
    if (!c.rejected) {
      detail::reserve_one_more(claimed);
      claimed.insert(claimed.end(), c.nodes.begin(), c.nodes.end());
    }
    return c;
  };
  const auto apply = [](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    const G& cg = std::as_const(tx.graph());
    // Read now: an earlier site may have replaced the first RESCALE's input (by an equal value).
    const auto input = detail::only_operand(cg, p.first);
    if (!input)
      return rejection{reason::unsupported, "the first RESCALE lost its operand before apply"};
    const id merged =
        tx.add_rescale(*input, p.merged.attributes, std::span<const scale_factor>(p.merged.scales));
    if constexpr (detail::has_set_qparams<G>) {
      if (const auto q = detail::qparams_of(cg, p.last)) tx.set_qparams(merged, *q);
    }
    tx.replace_uses(p.last, merged);
    tx.erase_dead(p.last);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, merge_rescales_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (detail::checked_pass).
template <class G>
constexpr report<node_id_t<G>> fold_merge_rescales(G& g) {
  return detail::checked_pass<detail::merge_rescales_points>(
      g, [](auto& h) { return detail::fold_merge_rescales_of(h); });
}

}  // namespace qfold
