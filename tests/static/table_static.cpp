// Compile-time tables (static_assert only; both g++ and clang++ with their default constexpr
// limits): a whole int8 tanh and sigmoid table per constant evaluation, checked at entries whose
// codes are derived by hand below.
#include <cstdint>
#include <qfold/qfold.hpp>

namespace {
using qfold::dtype;
using qfold::make_qparams;

// tanh, input scale 1/16 (codes span [-8, 7.94]), output scale 1/128, zero points 0.
constexpr auto tanh_table = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::executorch, qfold::fn::tanh, make_qparams(dtype::int8, 1.0 / 16, 0),
    make_qparams(dtype::int8, 1.0 / 128, 0));
static_assert(tanh_table.has_value());
static_assert((*tanh_table)(0) == 0);        // tanh(0) = 0 -> the zero point
static_assert((*tanh_table)(-128) == -128);  // tanh(-8) * 128 = -127.99997 -> -128
static_assert((*tanh_table)(127) == 127);    // tanh(7.9375) * 128 = 127.9999 -> 128, clamped
static_assert((*tanh_table)(8) == 59);       // tanh(0.5) * 128 = 59.17 -> 59
static_assert((*tanh_table)(-8) == -59);     // odd function

// sigmoid, output scale 1/256 and zero point -128 (TFLite's and ExecuTorch's usual choice).
constexpr auto sigmoid_table = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::executorch, qfold::fn::sigmoid, make_qparams(dtype::int8, 1.0 / 16, 0),
    make_qparams(dtype::int8, 1.0 / 256, -128));
static_assert(sigmoid_table.has_value());
static_assert((*sigmoid_table)(0) == 0);        // 0.5 * 256 - 128
static_assert((*sigmoid_table)(16) == 59);      // sigmoid(1) * 256 = 187.15 -> 187 - 128
static_assert((*sigmoid_table)(-128) == -128);  // sigmoid(-8) * 256 = 0.086 -> 0 - 128

// Vela's convention rounds zp + y / s (zero point first) half away from zero via trunc(f + 0.5):
// with output scale 2 and zp 1, tanh(7.9375) / 2 = 0.49999..., + 1 = 1.4999... -> 1.
constexpr auto vela_table = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::vela, qfold::fn::tanh, make_qparams(dtype::int8, 1.0 / 16, 0),
    make_qparams(dtype::int8, 2.0, 1));
static_assert((*vela_table)(127) == 1);
static_assert((*vela_table)(0) == 1);

// A chain collapsed at compile time: add 3, then clamp to [-100, 100].
constexpr qfold::chain::step add_clamp[] = {qfold::chain::add{3}, qfold::chain::clamp{-100, 100}};
constexpr auto collapsed = qfold::chain::collapse<std::int8_t, std::int8_t>(add_clamp);
static_assert(collapsed.has_value() && (*collapsed)(-128) == -100 && (*collapsed)(0) == 3 &&
              (*collapsed)(127) == 100);
}  // namespace
