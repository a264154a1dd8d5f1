// expect: make_table8: the input qparams' dtype must be int8 or uint8
// make_table8 deduces its element types from typed qparams; an int16 input has no 256-entry
// table, and the error says so (make_executorch_int16_table is the int16 generator).
#include <qfold/table/generate.hpp>

constexpr auto identity = [](float x) { return x; };
constexpr auto bad =
    qfold::checked::make_table8(qfold::conventions::executorch, identity,
                                qfold::make_qparams<qfold::dtype::int16>(1.0 / 4096, 0),
                                qfold::make_qparams<qfold::dtype::int8>(1.0 / 128, 0));
