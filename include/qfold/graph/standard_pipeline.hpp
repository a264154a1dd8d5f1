// Every qfold pass the adapter supports, registered by name in a pipeline in the order they
// enable each other: batch norm, scale into quantize, DyT alpha, DyT affine, then merge rescales,
// compose tables, collapse to table (after the DyT passes: a collapse would otherwise take the
// RESCALE -> TABLE ends of DyT sites, and composed tables make longer chains to collapse).
#pragma once

#include "qfold/graph/passes.hpp"
#include "qfold/graph/pipeline.hpp"
#include "qfold/graph/traits.hpp"

namespace qfold {

namespace detail {
template <class G, class P>
constexpr void add_if_supported(pipeline<G>& p, const P& pass) {
  if constexpr (P::template supports<G>) p.add(pass);
}
}  // namespace detail

// Passes whose capability concept G does not model are left out (a float-only adapter gets
// batch-norm folding alone; pipeline::add(qfold::passes::x) instead says at compile time what a
// pass lacks); insert_before / insert_after place a compiler's own passes by name.
template <class G>
pipeline<G> standard_pipeline(scale_into_quantize_options scale_options = {}) {
  pipeline<G> p;
  detail::add_if_supported(p, passes::batch_norm);
  detail::add_if_supported(p, passes::scale_into_quantize_t{scale_options});
  detail::add_if_supported(p, passes::dyt_alpha);
  detail::add_if_supported(p, passes::dyt_affine);
  detail::add_if_supported(p, passes::merge_rescales);
  detail::add_if_supported(p, passes::compose_tables);
  detail::add_if_supported(p, passes::collapse_to_table);
  return p;
}

}  // namespace qfold
