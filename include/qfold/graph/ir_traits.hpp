// The customization points an IR gives qfold: specialize qfold::ir_traits<G> (non-intrusive), or
// give the graph type the same-named member functions, which the primary template forwards to.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "qfold/detail/ranges.hpp"
#include "qfold/graph/vocabulary.hpp"

namespace qfold {

// Each point is a static function taking the graph first; graph/points.hpp lists every point with
// the signature qfold expects, graph/traits.hpp which passes need which, docs/reference.md the
// types they take and return.
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
  using forwards_to_members = G;  // the primary template: the points are G's members
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
  static constexpr auto unaligned_constant(const Graph& g, typename Graph::node_id n)
      -> decltype(g.unaligned_constant(n)) {
    return g.unaligned_constant(n);
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
  template <class Graph = G, class V>
  static constexpr auto add_constant(Graph& g, std::span<const V> data,
                                     std::span<const std::int64_t> shape)
      -> decltype(g.add_constant(data, shape)) {
    return g.add_constant(data, shape);
  }
  template <class Graph = G>
  static constexpr auto add_scaled_constant(Graph& g, const scaled_weights& w)
      -> decltype(g.add_scaled_constant(w)) {
    return g.add_scaled_constant(w);
  }
  template <class Graph = G>
  static constexpr auto constant_storage(Graph& g, std::size_t count)
      -> decltype(g.constant_storage(count)) {
    return g.constant_storage(count);
  }
  template <class Graph = G>
  static constexpr auto set_operand(Graph& g, typename Graph::node_id n, std::size_t i,
                                    typename Graph::node_id v) -> decltype(g.set_operand(n, i, v)) {
    return g.set_operand(n, i, v);
  }
  template <class Graph = G>
  static constexpr auto remove_last_operand(Graph& g, typename Graph::node_id n)
      -> decltype(g.remove_last_operand(n)) {
    return g.remove_last_operand(n);
  }
  template <class Graph = G>
  static constexpr auto replace_uses(Graph& g, typename Graph::node_id old,
                                     typename Graph::node_id v)
      -> decltype(g.replace_uses(old, v)) {
    return g.replace_uses(old, v);
  }
  template <class Graph = G>
  // By reference: copying an id (a std::string) may throw, and erase must not.
  static constexpr auto erase(Graph& g,
                              const typename Graph::node_id& n) noexcept(noexcept(g.erase(n)))
      -> decltype(g.erase(n)) {
    return g.erase(n);
  }
  template <class Graph = G>
  static constexpr auto take_name(Graph& g, typename Graph::node_id old, typename Graph::node_id v)
      -> decltype(g.take_name(old, v)) {
    return g.take_name(old, v);
  }
  template <class Graph = G>
  static constexpr auto constant_bytes(const Graph& g, typename Graph::node_id n)
      -> decltype(g.constant_bytes(n)) {
    return g.constant_bytes(n);
  }
  template <class Graph = G>
  static constexpr auto int_constant(const Graph& g, typename Graph::node_id n)
      -> decltype(g.int_constant(n)) {
    return g.int_constant(n);
  }
  template <class Graph = G>
  static constexpr auto output_shape(const Graph& g, typename Graph::node_id n)
      -> decltype(g.output_shape(n)) {
    return g.output_shape(n);
  }
  template <class Graph = G>
  static constexpr auto rescale(const Graph& g, typename Graph::node_id n)
      -> decltype(g.rescale(n)) {
    return g.rescale(n);
  }
  template <class Graph = G>
  static constexpr auto mul_shift(const Graph& g, typename Graph::node_id n)
      -> decltype(g.mul_shift(n)) {
    return g.mul_shift(n);
  }
  template <class Graph = G>
  static constexpr auto table_values(const Graph& g, typename Graph::node_id n)
      -> decltype(g.table_values(n)) {
    return g.table_values(n);
  }
  template <class Graph = G>
  static constexpr auto qparams(const Graph& g, typename Graph::node_id n)
      -> decltype(g.qparams(n)) {
    return g.qparams(n);
  }
  template <class Graph = G>
  static constexpr auto qparams_shared(const Graph& g, typename Graph::node_id n)
      -> decltype(g.qparams_shared(n)) {
    return g.qparams_shared(n);
  }
  template <class Graph = G>
  static constexpr auto view_axis(const Graph& g, typename Graph::node_id n, std::int64_t axis)
      -> decltype(g.view_axis(n, axis)) {
    return g.view_axis(n, axis);
  }
  template <class Graph = G>
  static constexpr auto quantized_conv(const Graph& g, typename Graph::node_id n)
      -> decltype(g.quantized_conv(n)) {
    return g.quantized_conv(n);
  }
  template <class Graph = G>
  static constexpr auto add_int_constant(Graph& g, std::span<const std::int64_t> data,
                                         std::span<const std::int64_t> shape, dtype type)
      -> decltype(g.add_int_constant(data, shape, type)) {
    return g.add_int_constant(data, shape, type);
  }
  template <class Graph = G, class V>
  static constexpr auto add_table(Graph& g, typename Graph::node_id input,
                                  std::span<const V> values)
      -> decltype(g.add_table(input, values)) {
    return g.add_table(input, values);
  }
  template <class Graph = G>
  static constexpr auto set_qparams(Graph& g, typename Graph::node_id n, const qfold::qparams& q)
      -> decltype(g.set_qparams(n, q)) {
    return g.set_qparams(n, q);
  }
  template <class Graph = G>
  static constexpr auto set_conv_input_zero_point(Graph& g, typename Graph::node_id n,
                                                  std::int64_t zp)
      -> decltype(g.set_conv_input_zero_point(n, zp)) {
    return g.set_conv_input_zero_point(n, zp);
  }
  template <class Graph = G>
  static constexpr auto batch_norm_operands(const Graph& g, typename Graph::node_id n)
      -> decltype(g.batch_norm_operands(n)) {
    return g.batch_norm_operands(n);
  }
  template <class Graph = G>
  static constexpr auto clamp_attributes(const Graph& g, typename Graph::node_id n)
      -> decltype(g.clamp_attributes(n)) {
    return g.clamp_attributes(n);
  }
  template <class Graph = G>
  static constexpr auto element_type(const Graph& g, typename Graph::node_id n)
      -> decltype(g.element_type(n)) {
    return g.element_type(n);
  }
  template <class Graph = G>
  static constexpr auto add_rescale(Graph& g, typename Graph::node_id input,
                                    const rescale_attributes& a,
                                    std::span<const scale_factor> scales)
      -> decltype(g.add_rescale(input, a, scales)) {
    return g.add_rescale(input, a, scales);
  }
};

template <class G>
using node_id_t = typename ir_traits<G>::node_id;

}  // namespace qfold
