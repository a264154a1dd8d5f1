// Every qfold pass the adapter supports, registered by name in a pipeline in the order they
// enable each other: batch norm, scale into quantize, DyT alpha, DyT affine.
#pragma once

#include <string>

#include "qfold/graph/batch_norm_pass.hpp"
#include "qfold/graph/dyt_affine_pass.hpp"
#include "qfold/graph/dyt_alpha_pass.hpp"
#include "qfold/graph/pipeline.hpp"
#include "qfold/graph/scale_into_quantize_pass.hpp"
#include "qfold/graph/traits.hpp"

namespace qfold {

// Passes whose capability concept G does not model are left out (a float-only adapter gets
// batch-norm folding alone); insert_before / insert_after place a compiler's own passes by name.
template <class G>
pipeline<G> standard_pipeline(scale_into_quantize_options scale_options = {}) {
  pipeline<G> p;
  if constexpr (batch_norm_foldable_graph<G>)
    p.add(std::string(batch_norm_pass_name), [](G& g) { return fold_batch_norms(g); });
  if constexpr (quantize_foldable_graph<G>)
    p.add(std::string(scale_into_quantize_pass_name),
          [scale_options](G& g) { return fold_scales_into_quantize(g, scale_options); });
  if constexpr (quantized_graph<G>) {
    p.add(std::string(dyt_alpha_pass_name), [](G& g) { return fold_dyt_alphas(g); });
    p.add(std::string(dyt_affine_pass_name), [](G& g) { return fold_dyt_affines(g); });
  }
  return p;
}

}  // namespace qfold
