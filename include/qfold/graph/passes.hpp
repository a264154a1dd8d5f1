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
// P::check<G>() (static_asserts naming what it lacks); p.run(g).
struct batch_norm_t {
  static constexpr std::string_view name = batch_norm_pass_name;
  template <class G>
  static constexpr bool supports = batch_norm_foldable_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_batch_norm_foldable<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_batch_norms(g);
  }
};

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

struct dyt_alpha_t {
  static constexpr std::string_view name = dyt_alpha_pass_name;
  template <class G>
  static constexpr bool supports = quantized_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_quantized<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_dyt_alphas(g);
  }
};

struct dyt_affine_t {
  static constexpr std::string_view name = dyt_affine_pass_name;
  template <class G>
  static constexpr bool supports = quantized_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_quantized<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_dyt_affines(g);
  }
};

struct merge_rescales_t {
  static constexpr std::string_view name = merge_rescales_pass_name;
  template <class G>
  static constexpr bool supports = rescale_mergeable_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_merge_rescales<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_merge_rescales(g);
  }
};

struct compose_tables_t {
  static constexpr std::string_view name = compose_tables_pass_name;
  template <class G>
  static constexpr bool supports = table_composable_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_compose_tables<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_compose_tables(g);
  }
};

struct collapse_to_table_t {
  static constexpr std::string_view name = collapse_to_table_pass_name;
  template <class G>
  static constexpr bool supports = table_collapsible_graph<G>;
  template <class G>
  static constexpr bool check() {
    return detail::check_collapse_to_table<G>();
  }
  template <class G>
  constexpr report<node_id_t<G>> run(G& g) const {
    return fold_collapse_to_tables(g);
  }
};

inline constexpr batch_norm_t batch_norm{};
inline constexpr scale_into_quantize_t scale_into_quantize{};
inline constexpr dyt_alpha_t dyt_alpha{};
inline constexpr dyt_affine_t dyt_affine{};
inline constexpr merge_rescales_t merge_rescales{};
inline constexpr compose_tables_t compose_tables{};
inline constexpr collapse_to_table_t collapse_to_table{};

}  // namespace qfold::passes
