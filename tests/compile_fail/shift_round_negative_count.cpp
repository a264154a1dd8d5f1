// expect: precondition_failed
// shift_right_round_half_up by 0 would shift by -1 (undefined): its contract makes that a
// compile error in constant evaluation.
#include <qfold/arith/rounding.hpp>

constexpr auto bad = qfold::shift_right_round_half_up(5, 0);
