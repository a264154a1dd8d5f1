// Every qfold pass as a value naming it: `pipeline<G>::add(qfold::passes::dyt_alpha)` adds it by
// name and, when G's adapter lacks a point the pass needs or has it with another signature, fails
// to compile with a message naming that point and the expected signature (where
// standard_pipeline<G>() quietly leaves such a pass out).
#pragma once

#include <string_view>

#include "qfold/graph/batch_norm_pass.hpp"
#include "qfold/graph/collapse_to_table_pass.hpp"
#include "qfold/graph/compose_tables_pass.hpp"
#include "qfold/graph/dyt_affine_pass.hpp"
#include "qfold/graph/dyt_alpha_pass.hpp"
#include "qfold/graph/merge_rescales_pass.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/scale_into_quantize_pass.hpp"
#include "qfold/graph/traits.hpp"

namespace qfold::passes {

// A pass value P has: P::name; P::supports<G> (G's adapter models what the pass needs);
// P::check<G>() (static_asserts naming what it lacks); p.run(g). One definition for the passes
// without options:
#define QFOLD_DETAIL_PASS_VALUE(value, pass_name, capability, checker, fold) \
  struct value##_t {                                                         \
    static constexpr std::string_view name = pass_name;                      \
    template <class G>                                                       \
    static constexpr bool supports = capability<G>;                          \
    template <class G>                                                       \
    static constexpr bool check() {                                          \
      return detail::checker<G>();                                           \
    }                                                                        \
    template <class G>                                                       \
    constexpr report<node_id_t<G>> run(G& g) const {                         \
      return fold(g);                                                        \
    }                                                                        \
  };                                                                         \
  inline constexpr value##_t value{};
QFOLD_DETAIL_PASS_VALUE(batch_norm, batch_norm_pass_name, batch_norm_foldable_graph,
                        check_batch_norm_foldable, fold_batch_norms)
QFOLD_DETAIL_PASS_VALUE(dyt_alpha, dyt_alpha_pass_name, quantized_graph, check_quantized,
                        fold_dyt_alphas)
QFOLD_DETAIL_PASS_VALUE(dyt_affine, dyt_affine_pass_name, quantized_graph, check_quantized,
                        fold_dyt_affines)
QFOLD_DETAIL_PASS_VALUE(merge_rescales, merge_rescales_pass_name, rescale_mergeable_graph,
                        check_merge_rescales, fold_merge_rescales)
QFOLD_DETAIL_PASS_VALUE(compose_tables, compose_tables_pass_name, table_composable_graph,
                        check_compose_tables, fold_compose_tables)
QFOLD_DETAIL_PASS_VALUE(collapse_to_table, collapse_to_table_pass_name, table_collapsible_graph,
                        check_collapse_to_table, fold_collapse_to_tables)
#undef QFOLD_DETAIL_PASS_VALUE

// Scale into quantize takes options: passes::scale_into_quantize_t{options}.
struct scale_into_quantize_t {
  static constexpr std::string_view name = scale_into_quantize_pass_name;
  scale_into_quantize_options options{};
  template <class G>
  static constexpr bool supports = quantize_foldable_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_quantize_foldable<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_scales_into_quantize(g, options);
  }
};
inline constexpr scale_into_quantize_t scale_into_quantize{};

}  // namespace qfold::passes
