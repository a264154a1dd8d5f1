// expect: (requires +|satisfy .)mul_operand
// TOSA MUL takes i8, i16 or i32 operands only; int64 fails the qfold::mul_operand concept.
#include <cstdint>
#include <qfold/arith/mul.hpp>

auto bad = qfold::mul<std::int64_t>(1, 2);
