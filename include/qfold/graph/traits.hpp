// How a compiler plugs its IR into qfold: specialize qfold::ir_traits<G> (non-intrusive), or give
// the graph type the same-named member functions, which the primary template forwards to.
// Capability concepts are layered; each pass requires only what it uses.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>

#include "qfold/graph/vocabulary.hpp"

namespace qfold {

// Customization points, all static and all taking the graph first:
//   node_id                                  copyable, equality comparable handle of a node
//   nodes(g)            -> forward range of node_id: every live node, producers first
//   kind(g, n)          -> op_kind
//   operands(g, n)      -> sized range of node_id (absent optional operands are not listed)
//   use_count(g, n)     -> std::size_t: operand slots reading n's output, plus graph outputs
// Constants and attributes:
//   constant(g, n)      -> std::optional<tensor_view<float>> (nullopt unless n is a constant)
//   conv_attributes(g, n), batch_norm_attributes(g, n)
//   output_rank(g, n)   -> std::size_t
// Mutation (the apply phase of a pass only):
//   add_constant(g, std::span<const float> data, std::span<const std::int64_t> shape) -> node_id
//   set_operand(g, n, i, v)   operand i of n becomes v (i == operand count appends)
//   replace_uses(g, old, v)   every reader of old (and graph outputs) reads v instead
//   erase(g, n)               n has no users left
//   constant_bytes(g, n)      -> std::size_t: storage a constant frees when erased
namespace detail {
template <class G>
struct member_node_id {};
template <class G>
requires requires { typename G::node_id; }
struct member_node_id<G> {
  using node_id = typename G::node_id;
};
}  // namespace detail

template <class G>
struct ir_traits : detail::member_node_id<G> {
  // Each member is a template so that a graph type lacking the member makes the call ill-formed
  // (a concept failure naming the point), not the whole specialization.

  template <class Graph = G>
  static constexpr auto nodes(const Graph& g) -> decltype(g.nodes()) {
    return g.nodes();
  }
  template <class Graph = G>
  static constexpr auto kind(const Graph& g, typename Graph::node_id n) -> decltype(g.kind(n)) {
    return g.kind(n);
  }
  template <class Graph = G>
  static constexpr auto operands(const Graph& g, typename Graph::node_id n)
      -> decltype(g.operands(n)) {
    return g.operands(n);
  }
  template <class Graph = G>
  static constexpr auto use_count(const Graph& g, typename Graph::node_id n)
      -> decltype(g.use_count(n)) {
    return g.use_count(n);
  }
  template <class Graph = G>
  static constexpr auto constant(const Graph& g, typename Graph::node_id n)
      -> decltype(g.constant(n)) {
    return g.constant(n);
  }
  template <class Graph = G>
  static constexpr auto conv_attributes(const Graph& g, typename Graph::node_id n)
      -> decltype(g.conv_attributes(n)) {
    return g.conv_attributes(n);
  }
  template <class Graph = G>
  static constexpr auto batch_norm_attributes(const Graph& g, typename Graph::node_id n)
      -> decltype(g.batch_norm_attributes(n)) {
    return g.batch_norm_attributes(n);
  }
  template <class Graph = G>
  static constexpr auto output_rank(const Graph& g, typename Graph::node_id n)
      -> decltype(g.output_rank(n)) {
    return g.output_rank(n);
  }
  template <class Graph = G>
  static constexpr auto add_constant(Graph& g, std::span<const float> data,
                                     std::span<const std::int64_t> shape)
      -> decltype(g.add_constant(data, shape)) {
    return g.add_constant(data, shape);
  }
  template <class Graph = G>
  static constexpr auto set_operand(Graph& g, typename Graph::node_id n, std::size_t i,
                                    typename Graph::node_id v) -> decltype(g.set_operand(n, i, v)) {
    return g.set_operand(n, i, v);
  }
  template <class Graph = G>
  static constexpr auto replace_uses(Graph& g, typename Graph::node_id old,
                                     typename Graph::node_id v)
      -> decltype(g.replace_uses(old, v)) {
    return g.replace_uses(old, v);
  }
  template <class Graph = G>
  static constexpr auto erase(Graph& g, typename Graph::node_id n) -> decltype(g.erase(n)) {
    return g.erase(n);
  }
  template <class Graph = G>
  static constexpr auto constant_bytes(const Graph& g, typename Graph::node_id n)
      -> decltype(g.constant_bytes(n)) {
    return g.constant_bytes(n);
  }
};

template <class G>
using node_id_t = typename ir_traits<G>::node_id;

// One concept per customization point, so a failing check names exactly what is missing.
namespace detail {
template <class G>
concept has_node_id = requires {
  typename ir_traits<G>::node_id;
}
&&std::copyable<node_id_t<G>>&& std::equality_comparable<node_id_t<G>>;
template <class G>
concept has_nodes = requires(const G& g) {
  { ir_traits<G>::nodes(g) } -> std::ranges::forward_range;
};
template <class G>
concept has_kind = requires(const G& g, node_id_t<G> n) {
  { ir_traits<G>::kind(g, n) } -> std::convertible_to<op_kind>;
};
template <class G>
concept has_operands = requires(const G& g, node_id_t<G> n) {
  { ir_traits<G>::operands(g, n) } -> std::ranges::sized_range;
};
template <class G>
concept has_use_count = requires(const G& g, node_id_t<G> n) {
  { ir_traits<G>::use_count(g, n) } -> std::convertible_to<std::size_t>;
};
template <class G>
concept has_constant = requires(const G& g, node_id_t<G> n) {
  { ir_traits<G>::constant(g, n) } -> std::same_as<std::optional<tensor_view<float>>>;
};
template <class G>
concept has_conv_attributes = requires(const G& g, node_id_t<G> n) {
  { ir_traits<G>::conv_attributes(g, n) } -> std::convertible_to<qfold::conv_attributes>;
};
template <class G>
concept has_batch_norm_attributes = requires(const G& g, node_id_t<G> n) {
  {
    ir_traits<G>::batch_norm_attributes(g, n)
    } -> std::convertible_to<qfold::batch_norm_attributes>;
};
template <class G>
concept has_output_rank = requires(const G& g, node_id_t<G> n) {
  { ir_traits<G>::output_rank(g, n) } -> std::convertible_to<std::size_t>;
};
template <class G>
concept has_mutation = requires(G& g, const G& cg, node_id_t<G> n, std::span<const float> d,
                                std::span<const std::int64_t> s) {
  { ir_traits<G>::add_constant(g, d, s) } -> std::convertible_to<node_id_t<G>>;
  ir_traits<G>::set_operand(g, n, std::size_t{0}, n);
  ir_traits<G>::replace_uses(g, n, n);
  ir_traits<G>::erase(g, n);
  { ir_traits<G>::constant_bytes(cg, n) } -> std::convertible_to<std::size_t>;
};
}  // namespace detail

// The layers: read the structure; read constants; read the attributes batch-norm folding needs;
// and change the graph.
template <class G>
concept ir_graph = detail::has_node_id<G> && detail::has_nodes<G> && detail::has_kind<G> &&
    detail::has_operands<G> && detail::has_use_count<G>;
template <class G>
concept constant_graph = ir_graph<G> && detail::has_constant<G>;
template <class G>
concept mutable_graph = ir_graph<G> && detail::has_mutation<G>;
template <class G>
concept batch_norm_foldable_graph =
    constant_graph<G> && mutable_graph<G> && detail::has_conv_attributes<G> &&
    detail::has_batch_norm_attributes<G> && detail::has_output_rank<G>;

namespace detail {
// A readable failure for each missing customization point (used at the top of each pass).
template <class G>
constexpr bool check_ir_graph() {
  static_assert(has_node_id<G>,
                "qfold: ir_traits<G>::node_id is missing (or not copyable and comparable)");
  static_assert(has_nodes<G>, "qfold: ir_traits<G>::nodes(g) is missing (a range of every node)");
  static_assert(has_kind<G>, "qfold: ir_traits<G>::kind(g, n) is missing (returns qfold::op_kind)");
  static_assert(has_operands<G>,
                "qfold: ir_traits<G>::operands(g, n) is missing (a sized range of node ids)");
  static_assert(has_use_count<G>, "qfold: ir_traits<G>::use_count(g, n) is missing");
  return true;
}
template <class G>
constexpr bool check_batch_norm_foldable() {
  check_ir_graph<G>();
  static_assert(has_constant<G>,
                "qfold: ir_traits<G>::constant(g, n) is missing (optional<tensor_view<float>>)");
  static_assert(has_conv_attributes<G>, "qfold: ir_traits<G>::conv_attributes(g, n) is missing");
  static_assert(has_batch_norm_attributes<G>,
                "qfold: ir_traits<G>::batch_norm_attributes(g, n) is missing");
  static_assert(has_output_rank<G>, "qfold: ir_traits<G>::output_rank(g, n) is missing");
  static_assert(
      has_mutation<G>,
      "qfold: the mutation points add_constant, set_operand, replace_uses, erase, constant_bytes "
      "of ir_traits<G> are missing");
  return true;
}
}  // namespace detail

}  // namespace qfold
