// Every qfold pass as a value naming it: `pipeline<G>::add(qfold::passes::dyt_alpha)` adds it by
// name and, when G's adapter lacks a point the pass needs or has it with another signature, fails
// to compile with a message naming that point and the expected signature; standard_pipeline<G>()
// leaves such a pass out and says which point it lacked (pipeline::skipped, report::skipped).
#pragma once

#include <optional>
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

// A pass value P has: P::name; P::points (the points it needs and those it can use, see
// graph/traits.hpp); P::supports<G>; P::unmet<G>() (the first point G lacks, nullopt if none);
// P::check<G>() (static_asserts naming what G lacks); p.run(g).
template <class Points>
struct pass_base {
  using points = Points;
  template <class G>
  static constexpr bool supports = detail::serves<G, Points>;
  template <class G>
  static constexpr std::optional<unmet_point> unmet() {
    return detail::unmet_of<G, Points>();
  }
  template <class G>
  static constexpr bool check() {
    return detail::check_pass<G, Points>();
  }
};

#define QFOLD_DETAIL_PASS_VALUE(value, pass_name, points_t, fold) \
  struct value##_t : pass_base<detail::points_t> {                \
    static constexpr std::string_view name = pass_name;           \
    template <class G>                                            \
    constexpr report<node_id_t<G>> run(G& g) const {              \
      return fold(g);                                             \
    }                                                             \
  };                                                              \
  inline constexpr value##_t value{};
QFOLD_DETAIL_PASS_VALUE(batch_norm, batch_norm_pass_name, batch_norm_points, fold_batch_norms)
QFOLD_DETAIL_PASS_VALUE(dyt_alpha, dyt_alpha_pass_name, dyt_alpha_points, fold_dyt_alphas)
QFOLD_DETAIL_PASS_VALUE(dyt_affine, dyt_affine_pass_name, dyt_affine_points, fold_dyt_affines)
QFOLD_DETAIL_PASS_VALUE(merge_rescales, merge_rescales_pass_name, merge_rescales_points,
                        fold_merge_rescales)
QFOLD_DETAIL_PASS_VALUE(compose_tables, compose_tables_pass_name, compose_tables_points,
                        fold_compose_tables)
QFOLD_DETAIL_PASS_VALUE(collapse_to_table, collapse_to_table_pass_name, collapse_to_table_points,
                        fold_collapse_to_tables)
#undef QFOLD_DETAIL_PASS_VALUE

// Scale into quantize takes options: passes::scale_into_quantize_t{options}.
struct scale_into_quantize_t : pass_base<detail::scale_into_quantize_points> {
  static constexpr std::string_view name = scale_into_quantize_pass_name;
  scale_into_quantize_options options{};
  constexpr scale_into_quantize_t() = default;
  constexpr explicit scale_into_quantize_t(scale_into_quantize_options o) : options(o) {}
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_scales_into_quantize(g, options);
  }
};
inline constexpr scale_into_quantize_t scale_into_quantize{};

}  // namespace qfold::passes
