// Every qfold pass instantiated over the map IR's adapter (examples/map_ir/), compiled by
// tests/CMakeLists.txt with g++ and with clang++ at -Wall -Wextra -Wpedantic -Werror and qfold's
// headers on a plain -I: an adapter as a user writes it must not make qfold's headers warn.
#include <qfold/qfold.hpp>

#include "map_ir/qfold_adapter.hpp"

// The adapter serves every pass (a pass it did not serve would fail to compile below).
static_assert(qfold::batch_norm_foldable_graph<mapir::Graph>);
static_assert(qfold::quantized_graph<mapir::Graph>);
static_assert(qfold::rescale_mergeable_graph<mapir::Graph>);
static_assert(qfold::table_composable_graph<mapir::Graph>);
static_assert(qfold::table_collapsible_graph<mapir::Graph>);

std::size_t run_every_pass(mapir::Graph& g) {
  std::size_t folded = qfold::strict_standard_pipeline<mapir::Graph>().run(g).folded();
  folded += qfold::fold_batch_norms(g).folded();
  folded += qfold::fold_scales_into_quantize(g).folded();
  folded += qfold::fold_dyt_alphas(g).folded();
  folded += qfold::fold_dyt_affines(g).folded();
  folded += qfold::fold_merge_rescales(g).folded();
  folded += qfold::fold_compose_tables(g).folded();
  folded += qfold::fold_collapse_to_tables(g).folded();
  return folded;
}

int main() {
  mapir::Graph g;
  return run_every_pass(g) == 0 ? 0 : 1;
}
