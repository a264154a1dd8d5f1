// Small pattern helpers the passes share: operands by position, walking through layout views,
// and erasing what a rewrite left without users.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <ranges>
#include <vector>

#include "qfold/graph/traits.hpp"
#include "qfold/graph/vocabulary.hpp"

namespace qfold::detail {

// Operand i of n, if n has that many.
template <class G>
[[nodiscard]] constexpr std::optional<node_id_t<G>> operand(const G& g, node_id_t<G> n,
                                                            std::size_t i) {
  const auto ops = ir_traits<G>::operands(g, n);
  if (std::ranges::size(ops) <= i) return std::nullopt;
  return *std::ranges::next(std::ranges::begin(ops), static_cast<std::ptrdiff_t>(i));
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

// Erases n if nothing reads it, then each of its operands that is left without users (never a
// graph input); returns the bytes of the constants that went away.
template <class G>
constexpr std::size_t erase_dead(G& g, node_id_t<G> n) {
  using T = ir_traits<G>;
  std::size_t bytes = 0;
  std::vector<node_id_t<G>> todo{n}, erased;
  while (!todo.empty()) {
    const node_id_t<G> m = todo.back();
    todo.pop_back();
    if (std::ranges::find(erased, m) != erased.end() || T::use_count(g, m) != 0 ||
        T::kind(g, m) == op_kind::input)
      continue;
    std::vector<node_id_t<G>> ops;
    for (const auto o : T::operands(g, m))
      if (std::ranges::find(ops, o) == ops.end()) ops.push_back(o);
    if (T::kind(g, m) == op_kind::constant) bytes += T::constant_bytes(g, m);
    T::erase(g, m);
    erased.push_back(m);
    todo.insert(todo.end(), ops.begin(), ops.end());
  }
  return bytes;
}

}  // namespace qfold::detail
