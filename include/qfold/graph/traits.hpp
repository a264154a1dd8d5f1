// How a compiler plugs its IR into qfold: specialize qfold::ir_traits<G> (non-intrusive), or give
// the graph type the same-named member functions, which the primary template forwards to.
// Capability concepts are layered; each pass requires only what it uses.
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

// Customization points, all static and all taking the graph first:
//   node_id                                  copyable, equality comparable handle of a node
//   nodes(g)            -> forward range of node_id: every live node, producers first
//   kind(g, n)          -> op_kind
//   operands(g, n)      -> sized range of node_id (absent optional operands are not listed)
//   use_count(g, n)     -> std::size_t: operand slots reading n's output, plus graph outputs
// Constants and attributes:
//   constant(g, n)      -> std::optional<tensor_view<float>> (nullopt unless n is a constant)
//   unaligned_constant(g, n) -> std::optional<unaligned_tensor_view> (optional): the same values
//                          in place at any alignment, for a fold that reads them once (batch-norm
//                          weights); nullopt: the pass reads constant(g, n)
//   conv_attributes(g, n), batch_norm_attributes(g, n)
//   batch_norm_operands(g, n) -> batch_norm_operands<node_id> (optional: gamma / beta may be
//   absent) output_rank(g, n)   -> std::size_t
// Mutation (the apply phase of a pass only, through qfold::transaction; each point does all it
// says or throws having changed nothing, see graph/transaction.hpp):
//   add_constant(g, std::span<const float> data, std::span<const std::int64_t> shape) -> node_id
//   constant_storage(g, count) -> std::span<float> (optional): room for the values of the next
//                             add_constant of `count` floats, which a pass fills and then passes
//                             to add_constant; an adapter that recognises its own room keeps the
//                             values there without a copy (fold_batch_norms uses it)
//   add_scaled_constant(g, const scaled_weights&) -> std::optional<node_id> (optional): a new
//                             constant of the values a batch-norm fold gives, which the adapter
//                             makes (scaled_weights::values) when it needs them, reading the
//                             weights where they are until then; nullopt (nothing added) when it
//                             cannot keep them readable: the pass then folds into storage
//   set_operand(g, n, i, v)   operand i of n becomes v (i == operand count appends)
//   remove_last_operand(g, n) n loses its last operand (undoes an append)
//   replace_uses(g, old, v)   every reader of old (and graph outputs) reads v instead
//   erase(g, n)               n has no users left; must not throw
//   constant_bytes(g, n)      -> std::size_t: storage a constant frees when erased
// Quantized graphs (the DyT, scale, rescale and table passes). Values come in the IR's own form
// (graph/read.hpp): any sized range of integers, a view of the IR's storage or by value.
//   int_constant(g, n)  -> std::optional<C>, C with .data (a sized range of integers) and .shape
//                          (a sized range of integers); qfold::tensor_view<T> of any integer T
//   output_shape(g, n)  -> sized range of integers: the static shape of n's output
//   rescale(g, n)       -> R with .attributes (rescale_attributes) and either .scales (a sized
//                          range of scale_factor) or .multipliers and .shifts (sized ranges of
//                          integers); qfold::rescale_view qualifies
//   mul_shift(g, n)     -> int: a TOSA MUL's shift (n is an integer mul)
//   table_values(g, n)  -> sized range of integers: 256 int8 or 513 int16 entries. Optional:
//                          without it, the table is operand 1 of the TABLE (TOSA), an int_constant
//   clamp_attributes(g, n) -> clamp_attributes (n is an integer clamp)
//   element_type(g, n)  -> std::optional<dtype>: n's output element type (nullopt: not one of
//                          dtype's, e.g. float or int48)
//   qparams(g, n)       -> std::optional<qfold::qparams>: the per-tensor quantization of n's output
//                          (of its input, for a dequantize); nullopt if none or per channel
//   qparams_shared(g, n) -> bool: another node's quantization is tied to n's (a shared spec)
//   view_axis(g, n, a)  -> std::optional<std::int64_t>: where view n puts its input axis a,
//                          unchanged in size and order; nullopt if it reshapes or slices it
//   quantized_conv(g, n) -> std::optional<quantized_conv_attributes> (nullopt: a float conv)
//   add_int_constant(g, data, shape, dtype) -> node_id
//   add_table(g, input, std::span<const std::int8_t> values) -> node_id: a new 256-entry TABLE
//   add_table(g, input, std::span<const std::int16_t> values) -> node_id: 513 entries (optional)
//   add_rescale(g, input, const rescale_attributes&, std::span<const scale_factor>) -> node_id
//   set_qparams(g, n, qparams), set_conv_input_zero_point(g, n, std::int64_t)
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
  template <class Graph = G>
  static constexpr auto add_constant(Graph& g, std::span<const float> data,
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
  static constexpr auto erase(Graph& g, typename Graph::node_id n) -> decltype(g.erase(n)) {
    return g.erase(n);
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

// One concept per customization point, so a failing check names exactly what is missing: calls_x
// says the point exists for these arguments, has_x that it also returns what qfold expects.
namespace detail {
template <class R>
concept integer_range =
    std::ranges::sized_range<R> && std::integral<std::ranges::range_value_t<R>> &&
    !std::same_as<std::ranges::range_value_t<R>, bool>;
// An integer constant as an adapter hands it over (tensor_view<T> of any integer T, or by value).
template <class C>
concept int_tensor_like = requires(const C& c) {
  requires integer_range<std::remove_cvref_t<decltype(c.data)>>;
  requires integer_range<std::remove_cvref_t<decltype(c.shape)>>;
};
template <class O>
concept optional_int_tensor = requires {
  typename O::value_type;
}
&&std::same_as<O, std::optional<typename O::value_type>>&& int_tensor_like<typename O::value_type>;
// A RESCALE as an adapter hands it over: rescale_view, or multipliers and shifts as the IR has
// them.
template <class R>
concept rescale_like = requires(const R& r) {
  { r.attributes } -> std::convertible_to<rescale_attributes>;
}
&&(
    requires(const R& r) {
      requires std::ranges::sized_range<std::remove_cvref_t<decltype(r.scales)>>;
      requires std::convertible_to<
          std::ranges::range_value_t<std::remove_cvref_t<decltype(r.scales)>>, scale_factor>;
    } ||
    requires(const R& r) {
      requires integer_range<std::remove_cvref_t<decltype(r.multipliers)>>;
      requires integer_range<std::remove_cvref_t<decltype(r.shifts)>>;
    });

template <class G>
concept has_node_id = requires {
  typename ir_traits<G>::node_id;
}
&&std::copyable<node_id_t<G>>&& std::equality_comparable<node_id_t<G>>;

#define QFOLD_DETAIL_READ_POINT(point, ...)                                       \
  template <class G>                                                              \
  concept calls_##point = requires(const G& g, node_id_t<G> n) {                  \
    ir_traits<G>::point(g, n);                                                    \
  };                                                                              \
  template <class G>                                                              \
  concept has_##point = calls_##point<G>&& requires(const G& g, node_id_t<G> n) { \
    __VA_ARGS__;                                                                  \
  };
QFOLD_DETAIL_READ_POINT(kind, { ir_traits<G>::kind(g, n) } -> std::convertible_to<op_kind>)
QFOLD_DETAIL_READ_POINT(operands, { ir_traits<G>::operands(g, n) } -> std::ranges::sized_range)
QFOLD_DETAIL_READ_POINT(use_count,
                        { ir_traits<G>::use_count(g, n) } -> std::convertible_to<std::size_t>)
QFOLD_DETAIL_READ_POINT(constant, { ir_traits<G>::constant(g, n) }
                                  -> std::same_as<std::optional<tensor_view<float>>>)
QFOLD_DETAIL_READ_POINT(unaligned_constant, { ir_traits<G>::unaligned_constant(g, n) }
                                            -> std::same_as<std::optional<unaligned_tensor_view>>)
QFOLD_DETAIL_READ_POINT(conv_attributes, { ir_traits<G>::conv_attributes(g, n) }
                                         -> std::convertible_to<qfold::conv_attributes>)
QFOLD_DETAIL_READ_POINT(batch_norm_attributes, { ir_traits<G>::batch_norm_attributes(g, n) }
                                               -> std::convertible_to<qfold::batch_norm_attributes>)
QFOLD_DETAIL_READ_POINT(batch_norm_operands, {
  ir_traits<G>::batch_norm_operands(g, n)
} -> std::same_as<qfold::batch_norm_operands<node_id_t<G>>>)
QFOLD_DETAIL_READ_POINT(output_rank,
                        { ir_traits<G>::output_rank(g, n) } -> std::convertible_to<std::size_t>)
QFOLD_DETAIL_READ_POINT(int_constant, { ir_traits<G>::int_constant(g, n) } -> optional_int_tensor)
QFOLD_DETAIL_READ_POINT(output_shape, { ir_traits<G>::output_shape(g, n) } -> integer_range)
QFOLD_DETAIL_READ_POINT(rescale, { ir_traits<G>::rescale(g, n) } -> rescale_like)
QFOLD_DETAIL_READ_POINT(mul_shift, { ir_traits<G>::mul_shift(g, n) } -> std::convertible_to<int>)
QFOLD_DETAIL_READ_POINT(table_values, { ir_traits<G>::table_values(g, n) } -> integer_range)
QFOLD_DETAIL_READ_POINT(clamp_attributes, { ir_traits<G>::clamp_attributes(g, n) }
                                          -> std::convertible_to<qfold::clamp_attributes>)
QFOLD_DETAIL_READ_POINT(element_type,
                        { ir_traits<G>::element_type(g, n) } -> std::same_as<std::optional<dtype>>)
QFOLD_DETAIL_READ_POINT(qparams, { ir_traits<G>::qparams(g, n) }
                                 -> std::same_as<std::optional<qfold::qparams>>)
QFOLD_DETAIL_READ_POINT(qparams_shared,
                        { ir_traits<G>::qparams_shared(g, n) } -> std::convertible_to<bool>)
QFOLD_DETAIL_READ_POINT(quantized_conv, { ir_traits<G>::quantized_conv(g, n) }
                                        -> std::same_as<std::optional<quantized_conv_attributes>>)
#undef QFOLD_DETAIL_READ_POINT

template <class G>
concept calls_nodes = requires(const G& g) {
  ir_traits<G>::nodes(g);
};
template <class G>
concept has_nodes = calls_nodes<G> && requires(const G& g) {
  { ir_traits<G>::nodes(g) } -> std::ranges::forward_range;
};
template <class G>
concept calls_view_axis = requires(const G& g, node_id_t<G> n, std::int64_t a) {
  ir_traits<G>::view_axis(g, n, a);
};
template <class G>
concept has_view_axis = calls_view_axis<G> && requires(const G& g, node_id_t<G> n, std::int64_t a) {
  { ir_traits<G>::view_axis(g, n, a) } -> std::same_as<std::optional<std::int64_t>>;
};
// Where a TABLE's entries come from: table_values, or the table constant as operand 1.
template <class G>
concept table_values_ok = !calls_table_values<G> || has_table_values<G>;

template <class G>
concept has_quantized_mutation = requires(G& g, node_id_t<G> n, std::span<const std::int64_t> d,
                                          std::span<const std::int8_t> t, qfold::qparams q) {
  { ir_traits<G>::add_int_constant(g, d, d, dtype::int8) } -> std::convertible_to<node_id_t<G>>;
  { ir_traits<G>::add_table(g, n, t) } -> std::convertible_to<node_id_t<G>>;
  ir_traits<G>::set_conv_input_zero_point(g, n, std::int64_t{0});
};
template <class G>
concept calls_add_table8 = requires(G& g, node_id_t<G> n, std::span<const std::int8_t> t) {
  ir_traits<G>::add_table(g, n, t);
};
template <class G>
concept has_add_table8 = calls_add_table8<G> &&
    requires(G& g, node_id_t<G> n, std::span<const std::int8_t> t) {
  { ir_traits<G>::add_table(g, n, t) } -> std::convertible_to<node_id_t<G>>;
};
template <class G>
concept calls_add_table16 = requires(G& g, node_id_t<G> n, std::span<const std::int16_t> t) {
  ir_traits<G>::add_table(g, n, t);
};
template <class G>
concept has_add_table16 = calls_add_table16<G> &&
    requires(G& g, node_id_t<G> n, std::span<const std::int16_t> t) {
  { ir_traits<G>::add_table(g, n, t) } -> std::convertible_to<node_id_t<G>>;
};
template <class G>
concept calls_add_scaled_constant = requires(G& g, const scaled_weights& w) {
  ir_traits<G>::add_scaled_constant(g, w);
};
template <class G>
concept has_add_scaled_constant = calls_add_scaled_constant<G> &&
    requires(G& g, const scaled_weights& w) {
  { ir_traits<G>::add_scaled_constant(g, w) } -> std::same_as<std::optional<node_id_t<G>>>;
};
template <class G>
concept calls_add_rescale = requires(G& g, node_id_t<G> n, const rescale_attributes& a,
                                     std::span<const scale_factor> s) {
  ir_traits<G>::add_rescale(g, n, a, s);
};
template <class G>
concept has_add_rescale = calls_add_rescale<G> &&
    requires(G& g, node_id_t<G> n, const rescale_attributes& a, std::span<const scale_factor> s) {
  { ir_traits<G>::add_rescale(g, n, a, s) } -> std::convertible_to<node_id_t<G>>;
};
template <class G>
concept has_set_qparams = requires(G& g, node_id_t<G> n, qfold::qparams q) {
  ir_traits<G>::set_qparams(g, n, q);
};
template <class G>
concept has_mutation = requires(G& g, const G& cg, node_id_t<G> n, std::span<const float> d,
                                std::span<const std::int64_t> s) {
  { ir_traits<G>::add_constant(g, d, s) } -> std::convertible_to<node_id_t<G>>;
  ir_traits<G>::set_operand(g, n, std::size_t{0}, n);
  ir_traits<G>::remove_last_operand(g, n);
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
concept batch_norm_foldable_graph = constant_graph<G> && mutable_graph<G> &&
    detail::has_conv_attributes<G> && detail::has_batch_norm_attributes<G> &&
    detail::has_output_rank<G> &&
    (!detail::calls_batch_norm_operands<G> || detail::has_batch_norm_operands<G>)&&(
        !detail::calls_unaligned_constant<G> ||
        detail::has_unaligned_constant<G>)&&(!detail::calls_add_scaled_constant<G> ||
                                             detail::has_add_scaled_constant<G>);
// What the scale-into-quantize pass reads and changes: float constants and quantization.
template <class G>
concept quantize_foldable_graph = constant_graph<G> && mutable_graph<G> && detail::has_qparams<G> &&
    detail::has_qparams_shared<G> && detail::has_set_qparams<G>;
// What every integer pass reads: integer constants, RESCALE, MUL, TABLE, shapes and quantization.
template <class G>
concept integer_graph = mutable_graph<G> && detail::has_int_constant<G> &&
    detail::has_output_shape<G> && detail::has_rescale<G> && detail::has_mul_shift<G> &&
    detail::table_values_ok<G> && detail::has_qparams<G> && detail::has_qparams_shared<G>;
// What the rescale-merging pass reads and changes: integer graphs that can create a RESCALE.
template <class G>
concept rescale_mergeable_graph = integer_graph<G> && detail::has_add_rescale<G>;
// What the table-composing pass reads and changes: integer graphs that can create an int8 TABLE.
template <class G>
concept table_composable_graph = integer_graph<G> && detail::has_add_table8<G>;
// What the collapse-to-table pass reads and changes: the above, integer clamps and element types
// (an int16 chain needs the optional add_table(int16) and add_rescale points too).
template <class G>
concept table_collapsible_graph = table_composable_graph<G> && detail::has_clamp_attributes<G> &&
    detail::has_element_type<G> &&(!detail::calls_add_table16<G> || detail::has_add_table16<G>);
// What the DyT passes read and change: the above, views and integer convolutions.
template <class G>
concept quantized_graph = quantize_foldable_graph<G> && integer_graph<G> &&
    detail::has_view_axis<G> && detail::has_conv_attributes<G> && detail::has_quantized_conv<G> &&
    detail::has_quantized_mutation<G>;

namespace detail {
// A readable failure for each missing or mistyped customization point (at the top of each pass,
// and in pipeline::add of a named pass).
template <class G>
constexpr bool check_ir_graph() {
  static_assert(has_node_id<G>,
                "qfold: ir_traits<G>::node_id is missing (or not copyable and comparable)");
  if constexpr (has_node_id<G>) {
    static_assert(calls_nodes<G>, "qfold: ir_traits<G>::nodes(g) is missing");
    static_assert(!calls_nodes<G> || has_nodes<G>,
                  "qfold: ir_traits<G>::nodes(g): wrong return type: expected a forward range of "
                  "node ids");
    static_assert(calls_kind<G>, "qfold: ir_traits<G>::kind(g, n) is missing");
    static_assert(!calls_kind<G> || has_kind<G>,
                  "qfold: ir_traits<G>::kind(g, n): wrong return type: expected qfold::op_kind");
    static_assert(calls_operands<G>, "qfold: ir_traits<G>::operands(g, n) is missing");
    static_assert(!calls_operands<G> || has_operands<G>,
                  "qfold: ir_traits<G>::operands(g, n): wrong return type: expected a sized "
                  "range of node ids");
    static_assert(calls_use_count<G>, "qfold: ir_traits<G>::use_count(g, n) is missing");
    static_assert(!calls_use_count<G> || has_use_count<G>,
                  "qfold: ir_traits<G>::use_count(g, n): wrong return type: expected std::size_t");
  }
  return true;
}
template <class G>
constexpr bool check_constant() {
  static_assert(calls_constant<G>, "qfold: ir_traits<G>::constant(g, n) is missing");
  static_assert(!calls_constant<G> || has_constant<G>,
                "qfold: ir_traits<G>::constant(g, n): wrong return type: expected "
                "std::optional<qfold::tensor_view<float>>");
  return true;
}
template <class G>
constexpr bool check_mutation() {
  static_assert(
      has_mutation<G>,
      "qfold: the mutation points add_constant, set_operand, remove_last_operand, replace_uses, "
      "erase, constant_bytes of ir_traits<G> are missing (or have other signatures)");
  return true;
}
template <class G>
constexpr bool check_conv_attributes() {
  static_assert(calls_conv_attributes<G>, "qfold: ir_traits<G>::conv_attributes(g, n) is missing");
  static_assert(!calls_conv_attributes<G> || has_conv_attributes<G>,
                "qfold: ir_traits<G>::conv_attributes(g, n): wrong return type: expected "
                "qfold::conv_attributes");
  return true;
}
template <class G>
constexpr bool check_batch_norm_foldable() {
  check_ir_graph<G>();
  if constexpr (has_node_id<G>) {
    check_constant<G>();
    check_conv_attributes<G>();
    static_assert(calls_batch_norm_attributes<G>,
                  "qfold: ir_traits<G>::batch_norm_attributes(g, n) is missing");
    static_assert(!calls_batch_norm_attributes<G> || has_batch_norm_attributes<G>,
                  "qfold: ir_traits<G>::batch_norm_attributes(g, n): wrong return type: "
                  "expected qfold::batch_norm_attributes");
    static_assert(!calls_batch_norm_operands<G> || has_batch_norm_operands<G>,
                  "qfold: ir_traits<G>::batch_norm_operands(g, n): wrong return type: expected "
                  "qfold::batch_norm_operands<node_id>");
    static_assert(!calls_unaligned_constant<G> || has_unaligned_constant<G>,
                  "qfold: ir_traits<G>::unaligned_constant(g, n): wrong return type: expected "
                  "std::optional<qfold::unaligned_tensor_view>");
    static_assert(!calls_add_scaled_constant<G> || has_add_scaled_constant<G>,
                  "qfold: ir_traits<G>::add_scaled_constant(g, w): wrong return type: expected "
                  "std::optional<node_id>");
    static_assert(calls_output_rank<G>, "qfold: ir_traits<G>::output_rank(g, n) is missing");
    static_assert(!calls_output_rank<G> || has_output_rank<G>,
                  "qfold: ir_traits<G>::output_rank(g, n): wrong return type: expected "
                  "std::size_t");
    check_mutation<G>();
  }
  return true;
}
template <class G>
constexpr bool check_qparams() {
  static_assert(calls_qparams<G>, "qfold: ir_traits<G>::qparams(g, n) is missing");
  static_assert(!calls_qparams<G> || has_qparams<G>,
                "qfold: ir_traits<G>::qparams(g, n): wrong return type: expected "
                "std::optional<qfold::qparams>");
  static_assert(calls_qparams_shared<G>, "qfold: ir_traits<G>::qparams_shared(g, n) is missing");
  static_assert(!calls_qparams_shared<G> || has_qparams_shared<G>,
                "qfold: ir_traits<G>::qparams_shared(g, n): wrong return type: expected bool");
  return true;
}
template <class G>
constexpr bool check_quantize_foldable() {
  check_ir_graph<G>();
  if constexpr (has_node_id<G>) {
    check_constant<G>();
    check_qparams<G>();
    check_mutation<G>();
    static_assert(has_set_qparams<G>, "qfold: ir_traits<G>::set_qparams(g, n, q) is missing");
  }
  return true;
}
template <class G>
constexpr bool check_integer() {
  check_ir_graph<G>();
  if constexpr (has_node_id<G>) {
    check_qparams<G>();
    check_mutation<G>();
    static_assert(calls_int_constant<G>, "qfold: ir_traits<G>::int_constant(g, n) is missing");
    static_assert(!calls_int_constant<G> || has_int_constant<G>,
                  "qfold: ir_traits<G>::int_constant(g, n): wrong return type: expected "
                  "std::optional<C>, C with .data and .shape (sized ranges of integers), e.g. "
                  "std::optional<qfold::tensor_view<std::int8_t>>");
    static_assert(calls_output_shape<G>, "qfold: ir_traits<G>::output_shape(g, n) is missing");
    static_assert(!calls_output_shape<G> || has_output_shape<G>,
                  "qfold: ir_traits<G>::output_shape(g, n): wrong return type: expected a sized "
                  "range of integers");
    static_assert(calls_rescale<G>, "qfold: ir_traits<G>::rescale(g, n) is missing");
    static_assert(!calls_rescale<G> || has_rescale<G>,
                  "qfold: ir_traits<G>::rescale(g, n): wrong return type: expected .attributes "
                  "(qfold::rescale_attributes) and .scales (a sized range of scale_factor) or "
                  ".multipliers and .shifts (sized ranges of integers)");
    static_assert(calls_mul_shift<G>, "qfold: ir_traits<G>::mul_shift(g, n) is missing");
    static_assert(!calls_mul_shift<G> || has_mul_shift<G>,
                  "qfold: ir_traits<G>::mul_shift(g, n): wrong return type: expected int");
    static_assert(table_values_ok<G>,
                  "qfold: ir_traits<G>::table_values(g, n): wrong return type: expected a sized "
                  "range of integers (or leave it out: the table is then operand 1)");
  }
  return true;
}
template <class G>
constexpr bool check_quantized() {
  check_quantize_foldable<G>();
  check_integer<G>();
  if constexpr (has_node_id<G>) {
    static_assert(calls_view_axis<G>, "qfold: ir_traits<G>::view_axis(g, n, axis) is missing");
    static_assert(!calls_view_axis<G> || has_view_axis<G>,
                  "qfold: ir_traits<G>::view_axis(g, n, axis): wrong return type: expected "
                  "std::optional<std::int64_t>");
    check_conv_attributes<G>();
    static_assert(calls_quantized_conv<G>, "qfold: ir_traits<G>::quantized_conv(g, n) is missing");
    static_assert(!calls_quantized_conv<G> || has_quantized_conv<G>,
                  "qfold: ir_traits<G>::quantized_conv(g, n): wrong return type: expected "
                  "std::optional<qfold::quantized_conv_attributes>");
    static_assert(has_quantized_mutation<G>,
                  "qfold: the mutation points add_int_constant, add_table, "
                  "set_conv_input_zero_point of ir_traits<G> are missing");
  }
  return true;
}
template <class G>
constexpr bool check_add_rescale() {
  static_assert(calls_add_rescale<G>,
                "qfold: ir_traits<G>::add_rescale(g, input, attributes, scales) is missing");
  static_assert(!calls_add_rescale<G> || has_add_rescale<G>,
                "qfold: ir_traits<G>::add_rescale(g, input, attributes, scales): wrong return "
                "type: expected a node id");
  return true;
}
template <class G>
constexpr bool check_add_table8() {
  static_assert(
      calls_add_table8<G>,
      "qfold: ir_traits<G>::add_table(g, input, std::span<const std::int8_t>) is missing");
  static_assert(!calls_add_table8<G> || has_add_table8<G>,
                "qfold: ir_traits<G>::add_table(g, input, std::span<const std::int8_t>): wrong "
                "return type: expected a node id");
  return true;
}
template <class G>
constexpr bool check_merge_rescales() {
  check_integer<G>();
  if constexpr (has_node_id<G>) check_add_rescale<G>();
  return true;
}
template <class G>
constexpr bool check_compose_tables() {
  check_integer<G>();
  if constexpr (has_node_id<G>) check_add_table8<G>();
  return true;
}
template <class G>
constexpr bool check_collapse_to_table() {
  check_compose_tables<G>();
  if constexpr (has_node_id<G>) {
    static_assert(calls_clamp_attributes<G>,
                  "qfold: ir_traits<G>::clamp_attributes(g, n) is missing");
    static_assert(!calls_clamp_attributes<G> || has_clamp_attributes<G>,
                  "qfold: ir_traits<G>::clamp_attributes(g, n): wrong return type: expected "
                  "qfold::clamp_attributes");
    static_assert(calls_element_type<G>, "qfold: ir_traits<G>::element_type(g, n) is missing");
    static_assert(!calls_element_type<G> || has_element_type<G>,
                  "qfold: ir_traits<G>::element_type(g, n): wrong return type: expected "
                  "std::optional<qfold::dtype>");
    static_assert(!calls_add_table16<G> || has_add_table16<G>,
                  "qfold: ir_traits<G>::add_table(g, input, std::span<const std::int16_t>): "
                  "wrong return type: expected a node id (or leave it out: int16 chains are "
                  "then refused)");
  }
  return true;
}
}  // namespace detail

}  // namespace qfold
