// expect: ir_traits<G>::add_rescale\(g, input, attributes, scales\): wrong parameter types; expected: static node_id add_rescale
// Asking for the rescale-merging pass by name with an adapter that cannot create a RESCALE names
// the missing point.
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>

#include "tiny_ir/tiny_ir.hpp"

namespace adapter {
struct no_add_rescale : tiny::graph {};
}  // namespace adapter

template <>
struct qfold::ir_traits<adapter::no_add_rescale> : qfold::ir_traits<tiny::graph> {
  static void add_rescale() = delete;  // hides the base's add_rescale(g, input, a, scales)
};

void build() {
  qfold::pipeline<adapter::no_add_rescale> p;
  p.add(qfold::passes::merge_rescales);
}
