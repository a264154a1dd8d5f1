// expect: precondition_failed
// A RESCALE whose output type is cast from outside the enum (64: range_of would shift by 64) is
// no constant: the contract form refuses it at compile time instead of returning a value.
#include <qfold/arith/rescale.hpp>

constexpr auto bad =
    qfold::rescale_value({.output_type = static_cast<qfold::int_type>(64)}, {1 << 30, 30}, 5);
