// expect: precondition_failed
// Reading the value of a result that holds an error is a compile error in constant evaluation.
#include <qfold/arith/reciprocal_scale.hpp>

constexpr auto bad = qfold::checked::reciprocal_scale(0).value();
