// The constexpr budget: a whole int8 tanh or sigmoid table in one constant evaluation within
// 100,000 clang steps (MSVC's default limit; clang's is 1,048,576). tests/CMakeLists.txt compiles
// this file with -fconstexpr-steps=100000 on clang++ and -fconstexpr-ops-limit=600000 on g++
// (GCC counts about 5.7 operations per clang step here; its default is 2^33). Entries derived by
// hand: x = (q - zp) * scale, y rounded half to even at the output scale, plus its zero point.
#include <cstdint>
#include <qfold/quant/conventions.hpp>
#include <qfold/table/functions.hpp>
#include <qfold/table/generate.hpp>

namespace {
using qfold::dtype;
using qfold::make_qparams;

// tanh, input scale 1/32 with zero point 3 (x in [-4.09, 3.88]), output scale 1/127, zp -1.
constexpr auto tanh_table = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::executorch, qfold::fn::tanh, make_qparams(dtype::int8, 1.0 / 32, 3),
    make_qparams(dtype::int8, 1.0 / 127, -1));
static_assert(tanh_table.has_value());
static_assert((*tanh_table)(3) == -1);       // tanh(0) = 0: the output zero point
static_assert((*tanh_table)(4) == 3);        // tanh(1/32) * 127 = 3.967 -> 4, - 1
static_assert((*tanh_table)(35) == 96);      // tanh(1) * 127 = 96.72 -> 97, - 1
static_assert((*tanh_table)(-29) == -98);    // tanh(-1) * 127 = -96.72 -> -97, - 1
static_assert((*tanh_table)(67) == 121);     // tanh(2) * 127 = 122.43 -> 122, - 1
static_assert((*tanh_table)(127) == 126);    // tanh(3.875) * 127 = 126.89 -> 127, - 1
static_assert((*tanh_table)(-128) == -128);  // tanh(-4.09375) * 127 = -126.93 -> -127, - 1

// sigmoid, input scale 1/16 (x in [-8, 7.94]), output scale 1/256 with zero point -128.
constexpr auto sigmoid_table = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::executorch, qfold::fn::sigmoid, make_qparams(dtype::int8, 1.0 / 16, 0),
    make_qparams(dtype::int8, 1.0 / 256, -128));
static_assert(sigmoid_table.has_value());
static_assert((*sigmoid_table)(0) == 0);        // 1/2 * 256 = 128, - 128
static_assert((*sigmoid_table)(16) == 59);      // sigmoid(1) * 256 = 187.15 -> 187, - 128
static_assert((*sigmoid_table)(-16) == -59);    // sigmoid(-1) * 256 = 68.85 -> 69, - 128
static_assert((*sigmoid_table)(127) == 127);    // 255.91 -> 256, - 128 = 128: clamped
static_assert((*sigmoid_table)(-128) == -128);  // sigmoid(-8) * 256 = 0.086 -> 0, - 128
}  // namespace
