// expect: ir_traits<G>::rescale\(g, n\): wrong parameter types; expected: static R rescale\(const G&, node_id\)
// Asking for a quantized pass by name with an adapter whose rescale point takes no graph and
// node names it, as a point with wrong parameter types (not a missing one).
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>

#include "tiny_ir/tiny_ir.hpp"

namespace adapter {
struct no_rescale : tiny::graph {};
}  // namespace adapter

template <>
struct qfold::ir_traits<adapter::no_rescale> : qfold::ir_traits<tiny::graph> {
  static void rescale() = delete;  // hides the base's rescale(g, n)
};

void build() {
  qfold::pipeline<adapter::no_rescale> p;
  p.add(qfold::passes::dyt_affine);
}
