// expect: view_axis\(g, n, axis\): wrong return type: expected std::optional<std::int64_t>
// An adapter asking for the DyT alpha pass by name whose view_axis returns a plain int: adding
// the pass fails to compile naming the point and the signature qfold expects (standard_pipeline
// would leave the pass out without a word).
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>

#include "tiny_ir/tiny_ir.hpp"

namespace adapter {
struct mistyped : tiny::graph {};
}  // namespace adapter

template <>
struct qfold::ir_traits<adapter::mistyped> : qfold::ir_traits<tiny::graph> {
  static int view_axis(const tiny::graph&, int, std::int64_t a) { return static_cast<int>(a); }
};

void build() {
  qfold::pipeline<adapter::mistyped> p;
  p.add(qfold::passes::dyt_alpha);
}
