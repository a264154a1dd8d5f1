// Compile-time tables (static_assert only; both g++ and clang++ with their default constexpr
// limits): a whole int8 tanh and sigmoid table per constant evaluation, checked at entries whose
// codes are derived by hand below.
#include <cstdint>
#include <qfold/qfold.hpp>
#include <type_traits>

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

// The two forms, element types deduced from typed qparams: the contract form is the table, the
// checked form a result; both equal the spelled-out form above, entry for entry.
constexpr auto in16th = qfold::make_qparams<dtype::int8>(1.0 / 16, 0);
constexpr auto out128th = qfold::make_qparams<dtype::int8>(1.0 / 128, 0);
static_assert(std::is_same_v<decltype(in16th), const qfold::typed_qparams<dtype::int8>>);
static_assert(in16th == make_qparams(dtype::int8, 1.0 / 16, 0));  // a qparams like any other
constexpr auto tanh_contract =
    qfold::make_table8(qfold::conventions::executorch, qfold::fn::torch::tanh, in16th, out128th);
static_assert(std::is_same_v<decltype(tanh_contract), const qfold::int8_table>);
static_assert(tanh_contract == *tanh_table);
static_assert(tanh_contract(8) == 59 && tanh_contract(-8) == -59);  // the hand-derived entries
constexpr auto tanh_checked = qfold::checked::make_table8(qfold::conventions::executorch,
                                                          qfold::fn::torch::tanh, in16th, out128th);
static_assert(std::is_same_v<decltype(tanh_checked), const qfold::result<qfold::int8_table>>);
static_assert(tanh_checked.has_value() && *tanh_checked == *tanh_table);
// int8 -> uint8 deduced: sigmoid at output scale 1/256, zero point 0: sigmoid(0) * 256 = 128.
constexpr auto sigmoid_u8 =
    qfold::make_table8(qfold::conventions::executorch, qfold::fn::torch::sigmoid, in16th,
                       qfold::make_qparams<dtype::uint8>(1.0 / 256, 0));
static_assert(std::is_same_v<decltype(sigmoid_u8), const qfold::table8<std::int8_t, std::uint8_t>>);
static_assert(sigmoid_u8(0) == 128 && sigmoid_u8(16) == 187);  // 187.15 -> 187
// A checked form with a bad typed qparams: the error, not a table (contract form: compile error,
// tests/compile_fail/make_table8_precondition.cpp).
constexpr auto bad_scale = [] {
  auto q = qfold::make_qparams<dtype::int8>(1.0 / 16, 0);
  q.scale = -1.0;
  return qfold::checked::make_table8(qfold::conventions::executorch, qfold::fn::tanh, q, out128th);
}();
static_assert(!bad_scale && bad_scale.error().code == qfold::errc::scale_negative);

// fn::torch is the complete set ExecuTorch's Arm backend tabulates; where torch's function is the
// correctly rounded one it is the same object type as qfold::fn's.
static_assert(std::is_same_v<decltype(qfold::fn::torch::sigmoid), decltype(qfold::fn::sigmoid)>);
static_assert(
    std::is_same_v<decltype(qfold::fn::torch::hardswish), decltype(qfold::fn::hardswish)>);
static_assert(!std::is_same_v<decltype(qfold::fn::torch::rsqrt), decltype(qfold::fn::rsqrt)>);
// by_name: the aten names, the gelu approximation, and unknown names as errors.
using qfold::fn::torch::by_name;
using qfold::fn::torch::op;
static_assert(by_name("aten.sigmoid.default")->id == op::sigmoid);
static_assert(by_name("aten::hardswish")->id == op::hardswish);
static_assert(by_name("aten.gelu.default")->id == op::gelu);
static_assert(by_name("aten.gelu.default", {.approximate = "tanh"})->id == op::gelu_tanh);
static_assert(by_name("aten.elu.default", {.alpha = 0.5})->parameter == 0.5);
static_assert(by_name("aten.leaky_relu.default")->parameter == 0.01);  // torch's default
static_assert(by_name("aten.gelu.default", {.approximate = "erf"}).error().code ==
              qfold::errc::illegal_attributes);
static_assert(by_name("aten.relu.default").error().code == qfold::errc::illegal_attributes);
static_assert(!by_name("sigmoid") && !by_name("aten..default") && !by_name("aten.sigmoid") &&
              !by_name("aten::") && !by_name(""));
// The function by_name gives computes what the object of the same name computes.
static_assert(by_name("aten.silu.default").value()(1.5f) == qfold::fn::torch::silu(1.5f));
static_assert(by_name("aten.rsqrt.default").value()(2.0) == qfold::fn::torch::rsqrt(2.0));
static_assert(by_name("aten.elu.default", {.alpha = 0.5}).value()(-1.0f) ==
              qfold::fn::elu(0.5)(-1.0f));

// ExecuTorch int16, contract form: tanh at input scale 2^-12, output 2^-15. Knot 0 (code -32768,
// x = -8): tanh(-8) * 32768 = -32767.99 -> -32768; knot 512 (the virtual code 32768, x = 8) ->
// 32768, clamped to 32767; knot 256 (x = 0) is 0. max |knot| = 2^15 needs no shift: rshift 0.
constexpr auto tanh16 = qfold::make_executorch_int16_table(
    qfold::fn::tanh, qfold::make_qparams<dtype::int16>(1.0 / 4096, 0),
    qfold::make_qparams<dtype::int16>(1.0 / 32768, 0));
static_assert(tanh16.rshift == 0 && tanh16.table.values[256] == 0 &&
              tanh16.table.values[512] == 32767 && tanh16.table.values[0] == -32768);

// A chain collapsed at compile time: add 3, then clamp to [-100, 100].
constexpr qfold::chain::step add_clamp[] = {qfold::chain::add{3}, qfold::chain::clamp{-100, 100}};
constexpr auto collapsed = qfold::chain::collapse<std::int8_t, std::int8_t>(add_clamp);
static_assert(collapsed.has_value() && (*collapsed)(-128) == -100 && (*collapsed)(0) == 3 &&
              (*collapsed)(127) == 100);
}  // namespace
