// Small pattern helpers the passes share: operands by position, walking through layout views,
// RESCALEd operands of a binary op.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "qfold/detail/ranges.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/vocabulary.hpp"

namespace qfold::detail {

// Operand i of n, if n has that many.
template <class G>
[[nodiscard]] constexpr std::optional<node_id_t<G>> operand(const G& g, node_id_t<G> n,
                                                            std::size_t i) {
  // A walk, not begin() + i: g++ 12 cannot tell that a vector returned by value and longer than
  // i has data, and warns of a null dereference (-Wnull-dereference) where it inlines this.
  std::size_t k = 0;
  for (const auto& o : ir_traits<G>::operands(g, n))
    if (k++ == i) return o;
  return std::nullopt;
}

// n's only operand, if it has exactly one.
template <class G>
[[nodiscard]] constexpr std::optional<node_id_t<G>> only_operand(const G& g, node_id_t<G> n) {
  return std::ranges::size(ir_traits<G>::operands(g, n)) == 1 ? operand(g, n, 0) : std::nullopt;
}

// The first node at or above n that is not a layout view, and the views passed on the way
// (nearest first). A view without exactly one operand stops the walk.
template <class G>
struct through_views {
  node_id_t<G> source;
  std::vector<node_id_t<G>> views;
};
template <class G>
[[nodiscard]] constexpr through_views<G> skip_views(const G& g, node_id_t<G> n) {
  through_views<G> r{n, {}};
  while (ir_traits<G>::kind(g, r.source) == op_kind::view) {
    const auto next = only_operand(g, r.source);
    if (!next) break;
    r.views.push_back(r.source);
    r.source = *next;
  }
  return r;
}

// One operand of an elementwise binary op: views, a RESCALE, and that RESCALE's source (itself
// seen through views for a constant).
template <class G>
struct rescaled_operand {
  node_id_t<G> rescale;
  through_views<G> source;
  bool viewed = false;  // views between the binary op and the RESCALE
};
template <class G>
[[nodiscard]] constexpr std::optional<rescaled_operand<G>> rescaled(const G& g, node_id_t<G> op,
                                                                    std::size_t i) {
  const auto v = skip_views(g, *operand(g, op, i));
  if (ir_traits<G>::kind(g, v.source) != op_kind::rescale) return std::nullopt;
  const auto src = only_operand(g, v.source);
  if (!src) return std::nullopt;
  return rescaled_operand<G>{v.source, skip_views(g, *src), !v.views.empty()};
}

// A binary op whose two operands are RESCALEs, one of an integer constant (alpha, gamma, beta) and
// one of the activation, which may not pass through layout views. `what` names the constant and
// the activation side in the rejections.
template <class G>
struct constant_and_activation {
  rescaled_operand<G> constant, activation;
};
struct split_messages {
  std::string_view not_constant, activation_view;
};
template <class G>
[[nodiscard]] constexpr std::optional<rejection> split_rescaled(const G& g, node_id_t<G> op,
                                                                split_messages what,
                                                                constant_and_activation<G>& out) {
  using T = ir_traits<G>;
  if (std::ranges::size(T::operands(g, op)) != 2)
    return rejection{reason::unsupported, "a MUL or ADD without two operands"};
  const auto r0 = rescaled(g, op, 0), r1 = rescaled(g, op, 1);
  if (!r0 || !r1) return rejection{reason::unsupported, "a MUL or ADD operand is not a RESCALE"};
  const bool c0 = ir_traits<G>::int_constant(g, r0->source.source).has_value();
  const bool c1 = ir_traits<G>::int_constant(g, r1->source.source).has_value();
  if (c0 == c1)
    return c0 ? rejection{reason::unsupported, "both operands of a MUL or ADD are constants"}
              : rejection{reason::not_constant, what.not_constant};
  out.constant = c0 ? *r0 : *r1;
  out.activation = c0 ? *r1 : *r0;
  if (out.activation.viewed || !out.activation.source.views.empty())
    return rejection{reason::layout_view, what.activation_view};
  return std::nullopt;
}

}  // namespace qfold::detail
