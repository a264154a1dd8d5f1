// Read points may return ranges by value (docs/adapting-your-ir.md): an adapter whose operands(g,
// n) returns a std::vector compiles with every pass, the transaction's rollback included.
#include <cstddef>
#include <qfold/graph/standard_pipeline.hpp>
#include <vector>

#include "string_ir/qfold_adapter.hpp"

namespace adapter {
struct by_value : strir::Graph {};
}  // namespace adapter

template <>
struct qfold::ir_traits<adapter::by_value> : qfold::ir_traits<strir::Graph> {
  static std::vector<int> operands(const strir::Graph& g, int n) {
    return g.nodes[static_cast<std::size_t>(n)].inputs;
  }
};

static_assert(qfold::quantized_graph<adapter::by_value>);

std::size_t fold_all(adapter::by_value& g) {
  return qfold::standard_pipeline<adapter::by_value>().run(g).folded();
}
