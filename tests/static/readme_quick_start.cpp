// The README's quick start, compiled as written, so the README stays true.
// 0.0123 = 0.7872 * 2^-6: multiplier round(0.7872 * 2^31) = 1690499128, shift 31 + 6 = 37.
#include <qfold/qfold.hpp>

namespace {
constexpr auto scale = qfold::compute_multiplier_and_shift(0.0123, qfold::scale_width::bits32,
                                                           qfold::tie_rule::half_to_even);
constexpr qfold::rescale_attributes attrs{.input_type = qfold::int_type::i32, .output_zp = -5};

static_assert(scale->multiplier == 1690499128 && scale->shift == 37);
static_assert(qfold::rescale_value(attrs, *scale, 41) == -4);          // 0.5043 -> 1, then zp -5
static_assert(qfold::apply_scale_32(-3, 1 << 30, 31) == -1);           // -1.5 rounds half up
static_assert(!qfold::checked::apply_scale_32(1 << 30, 1 << 30, 31));  // spec REQUIRE broken
}  // namespace

// The README's table snippet.
namespace {
constexpr auto tanh_lut = qfold::make_table8(  // element types from the qparams: int8 -> int8
    qfold::conventions::executorch, qfold::fn::torch::tanh,
    qfold::make_qparams<qfold::dtype::int8>(0.0234375, -3),  // input scale, zero point
    qfold::make_qparams<qfold::dtype::int8>(1.0 / 128, 0));  // output
static_assert(tanh_lut(-3) == 0);  // tanh(0) lands on the output zero point
// checked::make_table8 returns a qfold::result instead; fn::torch::by_name("aten.tanh.default")
// finds the function by the op's name.
static_assert(qfold::checked::make_table8(qfold::conventions::executorch,
                                          *qfold::fn::torch::by_name("aten.tanh.default"),
                                          qfold::make_qparams<qfold::dtype::int8>(0.0234375, -3),
                                          qfold::make_qparams<qfold::dtype::int8>(1.0 / 128, 0))
                  .value() == tanh_lut);
}  // namespace
