// How a compiler plugs its IR into qfold: ir_traits<G> (graph/ir_traits.hpp) gives the
// customization points (graph/points.hpp), and each pass needs exactly the points listed here for
// it; the rest of its points are optional, each with a documented default (docs/reference.md).
#pragma once

#include "qfold/graph/ir_traits.hpp"
#include "qfold/graph/points.hpp"

namespace qfold {

namespace detail {
// What every pass reads: the structure (each pass adds the mutation points it uses).
using structure_points =
    point_list<node_id_point, nodes_point, kind_point, operands_point, use_count_point>;
template <class... P>
struct join;
template <class... A, class... B>
struct join<point_list<A...>, point_list<B...>> {
  using type = point_list<A..., B...>;
};
template <class... P>
using with_structure = typename join<structure_points, point_list<P...>>::type;

// Each pass: the points it cannot do without, and those it uses when the adapter has them.
struct batch_norm_points {
  using required =
      with_structure<constant_point, conv_attributes_point, batch_norm_attributes_point,
                     add_constant_point, set_operand_point, remove_last_operand_point,
                     replace_uses_point, erase_point>;
  using optional = point_list<output_rank_point, batch_norm_operands_point,
                              unaligned_constant_point, constant_storage_point,
                              add_scaled_constant_point, constant_bytes_point, take_name_point>;
};
struct scale_into_quantize_points {
  using required =
      with_structure<constant_point, qparams_point, qparams_shared_point, set_qparams_point,
                     set_operand_point, replace_uses_point, erase_point>;
  using optional = point_list<constant_bytes_point, take_name_point>;
};
struct dyt_alpha_points {
  using required =
      with_structure<int_constant_point, rescale_point, mul_shift_point, table_entries_point,
                     add_table8_point, replace_uses_point, erase_point>;
  using optional =
      point_list<qparams_point, set_qparams_point, constant_bytes_point, take_name_point>;
};
struct dyt_affine_points {
  using required =
      with_structure<int_constant_point, rescale_point, mul_shift_point, table_entries_point,
                     output_shape_point, conv_attributes_point, quantized_conv_point,
                     add_int_constant_point, set_operand_point, remove_last_operand_point,
                     set_conv_input_zero_point_point, erase_point>;
  using optional = point_list<view_axis_point, qparams_point, constant_bytes_point>;
};
struct merge_rescales_points {
  using required =
      with_structure<rescale_point, add_rescale_point, replace_uses_point, erase_point>;
  using optional =
      point_list<int_constant_point, mul_shift_point, output_shape_point, qparams_point,
                 set_qparams_point, constant_bytes_point, take_name_point>;
};
struct compose_tables_points {
  using required =
      with_structure<table_entries_point, add_table8_point, replace_uses_point, erase_point>;
  using optional =
      point_list<qparams_point, set_qparams_point, constant_bytes_point, take_name_point>;
};
struct collapse_to_table_points {
  using required =
      with_structure<element_type_point, add_table8_point, replace_uses_point, erase_point>;
  using optional =
      point_list<rescale_point, int_constant_point, mul_shift_point, clamp_attributes_point,
                 table_values_point, output_shape_point, add_table16_point, add_rescale_point,
                 qparams_point, set_qparams_point, constant_bytes_point, take_name_point>;
};

template <class G, class Points>
inline constexpr bool serves = satisfies<G, typename Points::required, typename Points::optional>;
template <class G, class Points>
constexpr bool check_pass() {
  return check_points<G>(typename Points::required{}, typename Points::optional{});
}
// A pass's entry point: a static_assert per point G lacks, and then nothing of the pass is
// instantiated (`run` is a generic lambda never called), so no error follows from qfold's
// internals; else run(g).
template <class Points, class G, class Run>
constexpr auto checked_pass(G& g, Run&& run) {
  static_assert(check_pass<G, Points>());
  if constexpr (serves<G, Points>)
    return run(g);
  else
    return report<node_id_t<G>>{};
}
template <class G, class Points>
constexpr std::optional<unmet_point> unmet_of() {
  return first_unmet<G>(typename Points::required{}, typename Points::optional{});
}
}  // namespace detail

// Capabilities, one per pass (what it needs; its optional points, when present, typed right).
template <class G>
concept ir_graph = detail::satisfies<G, detail::structure_points, detail::point_list<>>;
template <class G>
concept constant_graph = ir_graph<G> && detail::has_constant<G>;
template <class G>
concept mutable_graph = ir_graph<G> && detail::has_add_constant<G> && detail::has_set_operand<G> &&
    detail::has_remove_last_operand<G> && detail::has_replace_uses<G> && detail::has_erase<G>;
template <class G>
concept batch_norm_foldable_graph = detail::serves<G, detail::batch_norm_points>;
template <class G>
concept quantize_foldable_graph = detail::serves<G, detail::scale_into_quantize_points>;
template <class G>
concept dyt_alpha_foldable_graph = detail::serves<G, detail::dyt_alpha_points>;
template <class G>
concept dyt_affine_foldable_graph = detail::serves<G, detail::dyt_affine_points>;
template <class G>
concept rescale_mergeable_graph = detail::serves<G, detail::merge_rescales_points>;
template <class G>
concept table_composable_graph = detail::serves<G, detail::compose_tables_points>;
template <class G>
concept table_collapsible_graph = detail::serves<G, detail::collapse_to_table_points>;
// Reads integer constants, RESCALEs and MULs (what the TOSA-style passes share).
template <class G>
concept integer_graph = ir_graph<G> && detail::has_int_constant<G> && detail::has_rescale<G> &&
    detail::has_mul_shift<G>;
// Every quantized pass but the table ones: scale into quantize and both DyT folds.
template <class G>
concept quantized_graph =
    quantize_foldable_graph<G> && dyt_alpha_foldable_graph<G> && dyt_affine_foldable_graph<G>;

}  // namespace qfold
