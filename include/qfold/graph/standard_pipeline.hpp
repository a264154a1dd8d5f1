// qfold's passes registered by name in a pipeline, in the order they enable each other: batch
// norm, scale into quantize, DyT alpha, DyT affine, then merge rescales, compose tables, collapse
// to table (after the DyT passes: a collapse would otherwise take the
// RESCALE -> TABLE ends of DyT sites, and composed tables make longer chains to collapse).
#pragma once

#include "qfold/graph/passes.hpp"
#include "qfold/graph/pipeline.hpp"
#include "qfold/graph/traits.hpp"

namespace qfold {

namespace detail {
template <class G, class Add>
void standard_passes(scale_into_quantize_options scale_options, Add&& add) {
  add(passes::batch_norm);
  add(passes::scale_into_quantize_t{scale_options});
  add(passes::dyt_alpha);
  add(passes::dyt_affine);
  add(passes::merge_rescales);
  add(passes::compose_tables);
  add(passes::collapse_to_table);
}
}  // namespace detail

// Every pass G's adapter serves; each pass it does not is noted with the first point it lacks
// and the signature expected (pipeline::skipped(), report::skipped, printed by qfold::print).
// insert_before / insert_after place a compiler's own passes by name.
template <class G>
pipeline<G> standard_pipeline(scale_into_quantize_options scale_options = {}) {
  pipeline<G> p;
  detail::standard_passes<G>(scale_options, [&](const auto& pass) { p.add_if_supported(pass); });
  return p;
}

// Every pass, or a compile error naming each point G's adapter lacks (with the signature
// expected): for an adapter meant to run them all.
template <class G>
pipeline<G> strict_standard_pipeline(scale_into_quantize_options scale_options = {}) {
  pipeline<G> p;
  detail::standard_passes<G>(scale_options, [&](const auto& pass) { p.add(pass); });
  return p;
}

}  // namespace qfold
