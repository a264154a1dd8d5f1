// expect: ir_traits<G>::element_type\(g, n\): wrong return type; expected: static std::optional<qfold::dtype> element_type
// std::optional<qfold::dtype> An element_type point that returns something else (here an int) is
// named, with the expected type, when the collapse-to-table pass is asked for by name.
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>

#include "tiny_ir/tiny_ir.hpp"

namespace adapter {
struct int_element_type : tiny::graph {};
}  // namespace adapter

template <>
struct qfold::ir_traits<adapter::int_element_type> : qfold::ir_traits<tiny::graph> {
  static int element_type(const adapter::int_element_type&, tiny::graph::node_id) { return 0; }
};

void build() {
  qfold::pipeline<adapter::int_element_type> p;
  p.add(qfold::passes::collapse_to_table);
}
