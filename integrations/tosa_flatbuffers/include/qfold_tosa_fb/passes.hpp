// qfold's passes over a `.tosa` file's graph, by name (qfold::standard_pipeline of the adapter),
// the checks that make a file bad input, and reports whose sites name tensors (they outlive the
// graph). The same names and order as the MLIR TOSA 1.0 integration's passes.
#pragma once

#include <cstddef>
#include <qfold/graph/named_sites.hpp>
#include <qfold/graph/report.hpp>
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_fb/graph.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qfold_tosa_fb {

// The passes qfold runs on TOSA, in the standard pipeline's order (fold_scale_into_quantize is
// left out: TOSA has no quantize op, so it has nothing to fold here).
inline std::vector<std::string> pass_names() {
  std::vector<std::string> r;
  for (const auto& n : qfold::standard_pipeline<graph>().names())
    if (std::string_view(n) != qfold::scale_into_quantize_pass_name) r.emplace_back(n);
  return r;
}

// Why the graph is bad input: ops qfold cannot read (unsupported element types, tables of the
// wrong size, invalid RESCALE parameters), then parameters that are not constants (TOSA 1.0's
// rule, which Vela relies on without checking). Empty: fine.
inline std::vector<std::string> check_graph(const graph& g) {
  auto r = g.problems();
  for (auto& p : g.non_constant_parameters()) r.push_back(std::move(p));
  return r;
}

// Runs the named passes (all of pass_names() when `only` is empty) on g, one at a time, and
// returns the sites with names. Nothing thrown by the adapter escapes a pass; an allocation
// failure outside one may.
inline std::vector<qfold::named_site> fold(graph& g, const std::vector<std::string>& only = {}) {
  const auto p = qfold::standard_pipeline<graph>().only(only.empty() ? pass_names() : only);
  std::vector<qfold::named_site> sites;
  for (const auto& name : p.names()) {
    const auto report = p.only(std::vector<std::string>{std::string(name)}).run(g);
    for (const auto& s : report.sites) {
      // Erased nodes keep their names: a report names what its pass erased.
      qfold::named_site out = qfold::with_names(s, [&](graph::node_id n) { return g.name(n); });
      if (s.cleanup_failed) out.note = "an erase failed: unused nodes left";
      sites.push_back(std::move(out));
    }
  }
  return sites;
}

}  // namespace qfold_tosa_fb
