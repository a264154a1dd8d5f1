// expect: precondition_failed
// A violated apply_scale_32 precondition (multiplier < 0) in constant evaluation is a compile
// error naming qfold's precondition hook, never a silently wrong constant.
#include <qfold/arith/apply_scale.hpp>

constexpr auto bad = qfold::apply_scale_32(1, -1, 31);
