// expect: precondition_failed
// The contract form of make_table8 with qparams its convention cannot use (a negative scale) in
// constant evaluation is a compile error naming qfold's precondition hook, never a wrong table.
#include <qfold/table/generate.hpp>

constexpr auto identity = [](float x) { return x; };
constexpr auto bad_input = [] {
  auto q = qfold::make_qparams<qfold::dtype::int8>(0.05, 0);
  q.scale = -0.05;
  return q;
}();
constexpr auto bad = qfold::make_table8(qfold::conventions::executorch, identity, bad_input,
                                        qfold::make_qparams<qfold::dtype::int8>(1.0 / 128, 0));
