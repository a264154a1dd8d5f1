// expect: precondition_failed
// An int8 RESCALE fed 200 (outside int8) at compile time does not compile.
#include <qfold/arith/rescale.hpp>

constexpr auto bad = qfold::rescale_value({}, {1 << 30, 30}, 200);
