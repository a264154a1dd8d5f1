// Every customization point once: the signature qfold expects, and whether an adapter has it, has
// it with other parameter types, or returns something else. Passes list the points they need
// (graph/traits.hpp); a pipeline names the first one an adapter lacks, at run or compile time.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <variant>

#include "qfold/detail/ranges.hpp"
#include "qfold/graph/ir_traits.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/vocabulary.hpp"

namespace qfold {

namespace detail {

// What an adapter hands over, by shape rather than by type.
template <class R>
concept integer_range =
    std::ranges::sized_range<R> && std::integral<std::ranges::range_value_t<R>> &&
    !std::same_as<std::ranges::range_value_t<R>, bool>;
// An integer constant (tensor_view<T> of any integer T, or values by value).
template <class C>
concept int_tensor_like = requires(const C& c) {
  requires integer_range<std::remove_cvref_t<decltype(c.data)>>;
  requires integer_range<std::remove_cvref_t<decltype(c.shape)>>;
};
template <class O>
concept optional_of_int_tensor = requires { typename O::value_type; } &&
    std::same_as<O, std::optional<typename O::value_type>> &&
    int_tensor_like<typename O::value_type>;
// A float constant: .data a sized range of any element type (float32 and float64 fold; any other,
// long double or a half type, is refused naming it) and .shape integers; or a std::variant of
// such, for an IR whose constants differ in type.
template <class C>
concept value_tensor_like = requires(const C& c) {
  requires std::ranges::sized_range<std::remove_cvref_t<decltype(c.data)>>;
  requires integer_range<std::remove_cvref_t<decltype(c.shape)>>;
};
template <class V>
struct is_tensor_variant : std::false_type {};
template <class... A>
struct is_tensor_variant<std::variant<A...>> : std::bool_constant<(value_tensor_like<A> && ...)> {};
template <class C>
concept float_tensor_like = value_tensor_like<C> || is_tensor_variant<C>::value;
template <class O>
concept optional_of_float_tensor = requires { typename O::value_type; } &&
    std::same_as<O, std::optional<typename O::value_type>> &&
    float_tensor_like<typename O::value_type>;
// A RESCALE: rescale_view, or multipliers and shifts as the IR has them.
template <class R>
concept rescale_like = requires(const R& r) {
  { r.attributes } -> std::convertible_to<rescale_attributes>;
} && (requires(const R& r) {
  requires std::ranges::sized_range<std::remove_cvref_t<decltype(r.scales)>>;
  requires std::convertible_to<std::ranges::range_value_t<std::remove_cvref_t<decltype(r.scales)>>,
                               scale_factor>;
} || requires(const R& r) {
  requires integer_range<std::remove_cvref_t<decltype(r.multipliers)>>;
  requires integer_range<std::remove_cvref_t<decltype(r.shifts)>>;
});

// Whether the adapter declares a point of that name at all, whatever its parameters: a class
// derived from both the adapter and a probe with a member of that name finds it ambiguously
// exactly when the adapter has one. Declared but not callable is a wrong parameter type, not a
// missing point. The primary ir_traits forwards every name, so there G's members are asked.
template <class G>
concept forwarding_traits = requires { typename ir_traits<G>::forwards_to_members; } &&
    std::same_as<typename ir_traits<G>::forwards_to_members, G>;
#define QFOLD_DETAIL_NAME(point)                                                              \
  struct name_##point {                                                                       \
    int point;                                                                                \
  };                                                                                          \
  template <class T>                                                                          \
  struct in_##point : T, name_##point {};                                                     \
  template <class T>                                                                          \
  concept names_##point =                                                                     \
      std::is_class_v<T> && !std::is_final_v<T> && !requires { &in_##point<T>::point; };     \
  template <class G>                                                                          \
  concept declares_##point =                                                                  \
      (forwarding_traits<G> ? names_##point<G> : names_##point<ir_traits<G>>);
QFOLD_DETAIL_NAME(nodes)
QFOLD_DETAIL_NAME(kind)
QFOLD_DETAIL_NAME(operands)
QFOLD_DETAIL_NAME(use_count)
QFOLD_DETAIL_NAME(constant)
QFOLD_DETAIL_NAME(unaligned_constant)
QFOLD_DETAIL_NAME(conv_attributes)
QFOLD_DETAIL_NAME(batch_norm_attributes)
QFOLD_DETAIL_NAME(batch_norm_operands)
QFOLD_DETAIL_NAME(output_rank)
QFOLD_DETAIL_NAME(int_constant)
QFOLD_DETAIL_NAME(output_shape)
QFOLD_DETAIL_NAME(rescale)
QFOLD_DETAIL_NAME(mul_shift)
QFOLD_DETAIL_NAME(table_values)
QFOLD_DETAIL_NAME(clamp_attributes)
QFOLD_DETAIL_NAME(element_type)
QFOLD_DETAIL_NAME(qparams)
QFOLD_DETAIL_NAME(qparams_shared)
QFOLD_DETAIL_NAME(quantized_conv)
QFOLD_DETAIL_NAME(view_axis)
QFOLD_DETAIL_NAME(add_constant)
QFOLD_DETAIL_NAME(constant_storage)
QFOLD_DETAIL_NAME(add_scaled_constant)
QFOLD_DETAIL_NAME(set_operand)
QFOLD_DETAIL_NAME(remove_last_operand)
QFOLD_DETAIL_NAME(replace_uses)
QFOLD_DETAIL_NAME(erase)
QFOLD_DETAIL_NAME(constant_bytes)
QFOLD_DETAIL_NAME(take_name)
QFOLD_DETAIL_NAME(add_int_constant)
QFOLD_DETAIL_NAME(add_table)
QFOLD_DETAIL_NAME(add_rescale)
QFOLD_DETAIL_NAME(set_qparams)
QFOLD_DETAIL_NAME(set_conv_input_zero_point)
#undef QFOLD_DETAIL_NAME
// The int16 add_table is an overload of the int8 one: its absence is never a wrong parameter.
template <class G>
concept declares_add_table16 = false;

template <class G>
concept has_node_id = requires { typename ir_traits<G>::node_id; } &&
    std::copyable<node_id_t<G>> && std::equality_comparable<node_id_t<G>>;

// calls_x: the point accepts qfold's arguments; has_x: it also returns what qfold expects.
#define QFOLD_DETAIL_READ_POINT(point, ...)                                         \
  template <class G>                                                                \
  concept calls_##point = requires(const G& g, node_id_t<G> n) {                    \
    ir_traits<G>::point(g, n);                                                      \
  };                                                                                \
  template <class G>                                                                \
  concept has_##point = calls_##point<G> && requires(const G& g, node_id_t<G> n) { \
    __VA_ARGS__;                                                                    \
  };
QFOLD_DETAIL_READ_POINT(kind, { ir_traits<G>::kind(g, n) } -> std::convertible_to<op_kind>)
QFOLD_DETAIL_READ_POINT(operands, { ir_traits<G>::operands(g, n) } -> std::ranges::sized_range)
QFOLD_DETAIL_READ_POINT(use_count,
                        { ir_traits<G>::use_count(g, n) } -> std::convertible_to<std::size_t>)
QFOLD_DETAIL_READ_POINT(constant, { ir_traits<G>::constant(g, n) } -> optional_of_float_tensor)
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
QFOLD_DETAIL_READ_POINT(int_constant,
                        { ir_traits<G>::int_constant(g, n) } -> optional_of_int_tensor)
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
QFOLD_DETAIL_READ_POINT(constant_bytes, { ir_traits<G>::constant_bytes(g, n) }
                                        -> std::convertible_to<std::size_t>)
#undef QFOLD_DETAIL_READ_POINT

// Points with other parameters: calls_x (accepts them), has_x (and returns what is expected).
#define QFOLD_DETAIL_POINT(point, params, call, ...) \
  template <class G>                                \
  concept calls_##point = requires params { call; }; \
  template <class G>                                \
  concept has_##point = calls_##point<G> && requires params { __VA_ARGS__; };
QFOLD_DETAIL_POINT(nodes, (const G& g), ir_traits<G>::nodes(g),
                   { ir_traits<G>::nodes(g) } -> std::ranges::forward_range)
QFOLD_DETAIL_POINT(view_axis, (const G& g, node_id_t<G> n, std::int64_t a),
                   ir_traits<G>::view_axis(g, n, a),
                   { ir_traits<G>::view_axis(g, n, a) } -> std::same_as<std::optional<std::int64_t>>)
#undef QFOLD_DETAIL_POINT
// A new float32 or float64 constant (the type of the fold that adds it); either overload serves.
template <class G, class V>
concept calls_add_constant_of =
    requires(G& g, std::span<const V> d, std::span<const std::int64_t> s) {
  ir_traits<G>::add_constant(g, d, s);
};
template <class G, class V>
concept has_add_constant_of =
    calls_add_constant_of<G, V> &&
    requires(G& g, std::span<const V> d, std::span<const std::int64_t> s) {
  { ir_traits<G>::add_constant(g, d, s) } -> std::convertible_to<node_id_t<G>>;
};
template <class G>
concept calls_add_constant = calls_add_constant_of<G, float> || calls_add_constant_of<G, double>;
template <class G>
concept has_add_constant = calls_add_constant<G> &&
    (!calls_add_constant_of<G, float> || has_add_constant_of<G, float>) &&
    (!calls_add_constant_of<G, double> || has_add_constant_of<G, double>);
#define QFOLD_DETAIL_POINT(point, params, call, ...) \
  template <class G>                                \
  concept calls_##point = requires params { call; }; \
  template <class G>                                \
  concept has_##point = calls_##point<G> && requires params { __VA_ARGS__; };
QFOLD_DETAIL_POINT(constant_storage, (G & g, std::size_t count),
                   ir_traits<G>::constant_storage(g, count),
                   { ir_traits<G>::constant_storage(g, count) } -> std::same_as<std::span<float>>)
QFOLD_DETAIL_POINT(add_scaled_constant, (G & g, const scaled_weights& w),
                   ir_traits<G>::add_scaled_constant(g, w),
                   { ir_traits<G>::add_scaled_constant(g, w) }
                   -> std::same_as<std::optional<node_id_t<G>>>)
QFOLD_DETAIL_POINT(set_operand, (G & g, node_id_t<G> n), ir_traits<G>::set_operand(g, n, std::size_t{0}, n),
                   ir_traits<G>::set_operand(g, n, std::size_t{0}, n))
QFOLD_DETAIL_POINT(remove_last_operand, (G & g, node_id_t<G> n),
                   ir_traits<G>::remove_last_operand(g, n), ir_traits<G>::remove_last_operand(g, n))
QFOLD_DETAIL_POINT(replace_uses, (G & g, node_id_t<G> n), ir_traits<G>::replace_uses(g, n, n),
                   ir_traits<G>::replace_uses(g, n, n))
// erase is noexcept, and returns nothing or false when it could not erase (nothing changed).
QFOLD_DETAIL_POINT(erase, (G & g, node_id_t<G> n), ir_traits<G>::erase(g, n),
                   requires noexcept(ir_traits<G>::erase(g, n));
                   requires std::is_void_v<decltype(ir_traits<G>::erase(g, n))> ||
                       std::convertible_to<decltype(ir_traits<G>::erase(g, n)), bool>)
QFOLD_DETAIL_POINT(take_name, (G & g, node_id_t<G> n), ir_traits<G>::take_name(g, n, n),
                   { ir_traits<G>::take_name(g, n, n) } -> std::convertible_to<node_id_t<G>>)
QFOLD_DETAIL_POINT(add_int_constant, (G & g, std::span<const std::int64_t> d),
                   ir_traits<G>::add_int_constant(g, d, d, dtype::int8),
                   { ir_traits<G>::add_int_constant(g, d, d, dtype::int8) }
                   -> std::convertible_to<node_id_t<G>>)
QFOLD_DETAIL_POINT(add_table8, (G & g, node_id_t<G> n, std::span<const std::int8_t> t),
                   ir_traits<G>::add_table(g, n, t),
                   { ir_traits<G>::add_table(g, n, t) } -> std::convertible_to<node_id_t<G>>)
QFOLD_DETAIL_POINT(add_table16, (G & g, node_id_t<G> n, std::span<const std::int16_t> t),
                   ir_traits<G>::add_table(g, n, t),
                   { ir_traits<G>::add_table(g, n, t) } -> std::convertible_to<node_id_t<G>>)
QFOLD_DETAIL_POINT(add_rescale,
                   (G & g, node_id_t<G> n, const rescale_attributes& a,
                    std::span<const scale_factor> s),
                   ir_traits<G>::add_rescale(g, n, a, s),
                   { ir_traits<G>::add_rescale(g, n, a, s) } -> std::convertible_to<node_id_t<G>>)
QFOLD_DETAIL_POINT(set_qparams, (G & g, node_id_t<G> n, const qfold::qparams& q),
                   ir_traits<G>::set_qparams(g, n, q), ir_traits<G>::set_qparams(g, n, q))
QFOLD_DETAIL_POINT(set_conv_input_zero_point, (G & g, node_id_t<G> n),
                   ir_traits<G>::set_conv_input_zero_point(g, n, std::int64_t{0}),
                   ir_traits<G>::set_conv_input_zero_point(g, n, std::int64_t{0}))
#undef QFOLD_DETAIL_POINT

// One tag per point: its name, the signature qfold calls, what is wrong with G's, and
// static_asserts that say so (a message must be a literal, hence one tag per point).
#define QFOLD_DETAIL_POINT_TAG(point, declared, call, signature)                                 \
  struct point##_point {                                                                         \
    static constexpr std::string_view name = #point;                                             \
    static constexpr std::string_view expected = signature;                                      \
    template <class G>                                                                           \
    static constexpr point_problem problem() {                                                   \
      if constexpr (has_##point<G>)                                                              \
        return point_problem::none;                                                              \
      else if constexpr (calls_##point<G>)                                                       \
        return point_problem::wrong_return;                                                      \
      else if constexpr (declares_##declared<G>)                                                 \
        return point_problem::wrong_parameters;                                                  \
      else                                                                                       \
        return point_problem::missing;                                                           \
    }                                                                                            \
    template <class G>                                                                           \
    static constexpr bool check_required() {                                                     \
      static_assert(calls_##point<G> || declares_##declared<G>,                                  \
                    "qfold: ir_traits<G>::" call " is missing; expected: " signature);           \
      static_assert(calls_##point<G> || !declares_##declared<G>,                                 \
                    "qfold: ir_traits<G>::" call ": wrong parameter types; expected: " signature); \
      static_assert(!calls_##point<G> || has_##point<G>,                                         \
                    "qfold: ir_traits<G>::" call ": wrong return type; expected: " signature);   \
      return has_##point<G>;                                                                     \
    }                                                                                            \
    template <class G>                                                                           \
    static constexpr bool check_optional() {                                                     \
      static_assert(calls_##point<G> || !declares_##declared<G>,                                 \
                    "qfold: ir_traits<G>::" call " (optional): wrong parameter types; expected: " \
                    signature);                                                                  \
      static_assert(!calls_##point<G> || has_##point<G>,                                         \
                    "qfold: ir_traits<G>::" call " (optional): wrong return type; expected: "    \
                    signature);                                                                  \
      return true;                                                                               \
    }                                                                                            \
  };

QFOLD_DETAIL_POINT_TAG(nodes, nodes, "nodes(g)",
                       "static R nodes(const G&), R a forward range of node_id: every live node")
QFOLD_DETAIL_POINT_TAG(kind, kind, "kind(g, n)", "static qfold::op_kind kind(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(operands, operands, "operands(g, n)",
                       "static R operands(const G&, node_id), R a sized range of node_id")
QFOLD_DETAIL_POINT_TAG(use_count, use_count, "use_count(g, n)",
                       "static std::size_t use_count(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(constant, constant, "constant(g, n)",
                       "static std::optional<C> constant(const G&, node_id), C with .data (a "
                       "sized range of float or double) and .shape (a sized range of integers), "
                       "e.g. qfold::tensor_view<float>; or C a std::variant of such")
QFOLD_DETAIL_POINT_TAG(unaligned_constant, unaligned_constant, "unaligned_constant(g, n)",
                       "static std::optional<qfold::unaligned_tensor_view> "
                       "unaligned_constant(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(conv_attributes, conv_attributes, "conv_attributes(g, n)",
                       "static qfold::conv_attributes conv_attributes(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(batch_norm_attributes, batch_norm_attributes,
                       "batch_norm_attributes(g, n)",
                       "static qfold::batch_norm_attributes batch_norm_attributes(const G&, "
                       "node_id)")
QFOLD_DETAIL_POINT_TAG(batch_norm_operands, batch_norm_operands, "batch_norm_operands(g, n)",
                       "static qfold::batch_norm_operands<node_id> batch_norm_operands(const G&, "
                       "node_id)")
QFOLD_DETAIL_POINT_TAG(output_rank, output_rank, "output_rank(g, n)",
                       "static std::size_t output_rank(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(int_constant, int_constant, "int_constant(g, n)",
                       "static std::optional<C> int_constant(const G&, node_id), C with .data and "
                       ".shape (sized ranges of integers), e.g. qfold::tensor_view<std::int8_t>")
QFOLD_DETAIL_POINT_TAG(output_shape, output_shape, "output_shape(g, n)",
                       "static R output_shape(const G&, node_id), R a sized range of integers")
QFOLD_DETAIL_POINT_TAG(rescale, rescale, "rescale(g, n)",
                       "static R rescale(const G&, node_id), R with .attributes "
                       "(qfold::rescale_attributes) and .scales (a sized range of "
                       "qfold::scale_factor) or .multipliers and .shifts (sized ranges of "
                       "integers)")
QFOLD_DETAIL_POINT_TAG(mul_shift, mul_shift, "mul_shift(g, n)",
                       "static int mul_shift(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(table_values, table_values, "table_values(g, n)",
                       "static R table_values(const G&, node_id), R a sized range of integers")
QFOLD_DETAIL_POINT_TAG(clamp_attributes, clamp_attributes, "clamp_attributes(g, n)",
                       "static qfold::clamp_attributes clamp_attributes(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(element_type, element_type, "element_type(g, n)",
                       "static std::optional<qfold::dtype> element_type(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(qparams, qparams, "qparams(g, n)",
                       "static std::optional<qfold::qparams> qparams(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(qparams_shared, qparams_shared, "qparams_shared(g, n)",
                       "static bool qparams_shared(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(quantized_conv, quantized_conv, "quantized_conv(g, n)",
                       "static std::optional<qfold::quantized_conv_attributes> "
                       "quantized_conv(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(view_axis, view_axis, "view_axis(g, n, axis)",
                       "static std::optional<std::int64_t> view_axis(const G&, node_id, "
                       "std::int64_t axis)")
QFOLD_DETAIL_POINT_TAG(add_constant, add_constant, "add_constant(g, data, shape)",
                       "static node_id add_constant(G&, std::span<const float> data, "
                       "std::span<const std::int64_t> shape) (std::span<const double> for float64 "
                       "constants)")
QFOLD_DETAIL_POINT_TAG(constant_storage, constant_storage, "constant_storage(g, count)",
                       "static std::span<float> constant_storage(G&, std::size_t count)")
QFOLD_DETAIL_POINT_TAG(add_scaled_constant, add_scaled_constant, "add_scaled_constant(g, w)",
                       "static std::optional<node_id> add_scaled_constant(G&, const "
                       "qfold::scaled_weights&)")
QFOLD_DETAIL_POINT_TAG(set_operand, set_operand, "set_operand(g, n, i, v)",
                       "static void set_operand(G&, node_id n, std::size_t i, node_id v)")
QFOLD_DETAIL_POINT_TAG(remove_last_operand, remove_last_operand, "remove_last_operand(g, n)",
                       "static void remove_last_operand(G&, node_id)")
QFOLD_DETAIL_POINT_TAG(replace_uses, replace_uses, "replace_uses(g, old, v)",
                       "static void replace_uses(G&, node_id old, node_id v)")
QFOLD_DETAIL_POINT_TAG(take_name, take_name, "take_name(g, old, v)",
                       "static node_id take_name(G&, node_id old, node_id v)")
QFOLD_DETAIL_POINT_TAG(constant_bytes, constant_bytes, "constant_bytes(g, n)",
                       "static std::size_t constant_bytes(const G&, node_id)")
QFOLD_DETAIL_POINT_TAG(add_int_constant, add_int_constant,
                       "add_int_constant(g, data, shape, type)",
                       "static node_id add_int_constant(G&, std::span<const std::int64_t> data, "
                       "std::span<const std::int64_t> shape, qfold::dtype)")
QFOLD_DETAIL_POINT_TAG(add_table8, add_table, "add_table(g, input, values)",
                       "static node_id add_table(G&, node_id input, std::span<const std::int8_t> "
                       "values)")
QFOLD_DETAIL_POINT_TAG(add_table16, add_table16, "add_table(g, input, values16)",
                       "static node_id add_table(G&, node_id input, std::span<const std::int16_t> "
                       "values)")
QFOLD_DETAIL_POINT_TAG(add_rescale, add_rescale, "add_rescale(g, input, attributes, scales)",
                       "static node_id add_rescale(G&, node_id input, const "
                       "qfold::rescale_attributes&, std::span<const qfold::scale_factor>)")
QFOLD_DETAIL_POINT_TAG(set_qparams, set_qparams, "set_qparams(g, n, q)",
                       "static void set_qparams(G&, node_id, const qfold::qparams&)")
QFOLD_DETAIL_POINT_TAG(set_conv_input_zero_point, set_conv_input_zero_point,
                       "set_conv_input_zero_point(g, n, zp)",
                       "static void set_conv_input_zero_point(G&, node_id, std::int64_t)")
#undef QFOLD_DETAIL_POINT_TAG

// The two points the tag above cannot say: node_id (a type), and erase (noexcept).
struct node_id_point {
  static constexpr std::string_view name = "node_id";
  static constexpr std::string_view expected =
      "using node_id = ...; a copyable, equality-comparable handle of a node";
  template <class G>
  static constexpr point_problem problem() {
    if constexpr (has_node_id<G>)
      return point_problem::none;
    else if constexpr (requires { typename ir_traits<G>::node_id; })
      return point_problem::wrong_return;
    else
      return point_problem::missing;
  }
  template <class G>
  static constexpr bool check_required() {
    static_assert(has_node_id<G>,
                  "qfold: ir_traits<G>::node_id is missing (or not copyable and comparable); "
                  "expected: using node_id = ...; a copyable, equality-comparable handle");
    return has_node_id<G>;
  }
};
struct erase_point {
  static constexpr std::string_view name = "erase";
  static constexpr std::string_view expected =
      "static void erase(G&, node_id) noexcept (or bool: false when it could not)";
  template <class G>
  static constexpr point_problem problem() {
    if constexpr (has_erase<G>)
      return point_problem::none;
    else if constexpr (calls_erase<G>)
      return point_problem::throws;
    else if constexpr (declares_erase<G>)
      return point_problem::wrong_parameters;
    else
      return point_problem::missing;
  }
  template <class G>
  static constexpr bool check_required() {
    static_assert(calls_erase<G> || declares_erase<G>,
                  "qfold: ir_traits<G>::erase(g, n) is missing; expected: static void erase(G&, "
                  "node_id) noexcept");
    static_assert(calls_erase<G> || !declares_erase<G>,
                  "qfold: ir_traits<G>::erase(g, n): wrong parameter types; expected: static "
                  "void erase(G&, node_id) noexcept");
    static_assert(!calls_erase<G> || has_erase<G>,
                  "qfold: ir_traits<G>::erase(g, n) must be noexcept (and return void or bool): "
                  "an erased node cannot be brought back, so erasures run after a site's commit "
                  "and must not throw; return false where one could not be made");
    return has_erase<G>;
  }
};
// A TABLE's entries: table_values, or (without it) the integer constant that is operand 1.
struct table_entries_point {
  static constexpr std::string_view name = "table_values";
  static constexpr std::string_view expected =
      "static R table_values(const G&, node_id), R a sized range of integers; or, without it, "
      "int_constant (the table is operand 1 of the TABLE)";
  template <class G>
  static constexpr point_problem problem() {
    if constexpr (has_table_values<G> || (!calls_table_values<G> && !declares_table_values<G> &&
                                          has_int_constant<G>))
      return point_problem::none;
    else if constexpr (calls_table_values<G>)
      return point_problem::wrong_return;
    else if constexpr (declares_table_values<G>)
      return point_problem::wrong_parameters;
    else
      return int_constant_point::problem<G>();
  }
  template <class G>
  static constexpr bool check_required() {
    if constexpr (calls_table_values<G> || declares_table_values<G>)
      return table_values_point::check_required<G>();
    else
      return int_constant_point::check_required<G>();
  }
};

template <class... P>
struct point_list {};

// Every point of `Required` present as expected, and every point of `Optional` either absent or
// present as expected (a mistyped optional point is an error, never silently unused).
template <class G, class Required, class Optional>
inline constexpr bool satisfies = false;
template <class G, class... R, class... O>
inline constexpr bool satisfies<G, point_list<R...>, point_list<O...>> =
    ((R::template problem<G>() == point_problem::none) && ...) &&
    ((O::template problem<G>() == point_problem::none ||
      O::template problem<G>() == point_problem::missing) &&
     ...);

template <class G, class... R, class... O>
constexpr std::optional<unmet_point> first_unmet(point_list<R...>, point_list<O...>) {
  std::optional<unmet_point> r;
  const auto look = [&](std::string_view name, point_problem p, std::string_view expected,
                        bool required) {
    if (!r && p != point_problem::none && (required || p != point_problem::missing))
      r = unmet_point{name, p, expected};
  };
  (look(R::name, R::template problem<G>(), R::expected, true), ...);
  (look(O::name, O::template problem<G>(), O::expected, false), ...);
  return r;
}

// The static_asserts of every unmet point (node_id first: without it no other point can be asked).
template <class G, class... R, class... O>
constexpr bool check_points(point_list<R...>, point_list<O...>) {
  if constexpr (!has_node_id<G>) {
    return node_id_point::check_required<G>();
  } else {
    const bool required = (R::template check_required<G>() && ...);
    const bool optional = (O::template check_optional<G>() && ...);
    return required && optional;
  }
}

}  // namespace detail
}  // namespace qfold
