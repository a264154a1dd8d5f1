// expect: view_axis\(g, n, axis\) \(optional\): wrong return type; expected: static std::optional<std::int64_t> view_axis
// An adapter asking for the DyT affine pass by name whose (optional) view_axis returns a plain
// int: adding the pass fails to compile naming the point and the signature qfold expects (a
// mistyped optional point is never silently unused; standard_pipeline notes it as skipped).
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
  p.add(qfold::passes::dyt_affine);
}
