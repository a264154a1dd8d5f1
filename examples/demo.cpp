// qfold demo: exact requantization arithmetic, compile-time and run-time from the same code,
// how the ecosystems' rounding rules differ, and errors as values.
#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <qfold/qfold.hpp>

namespace {
// Proven while compiling: an int8 RESCALE by 0.5 rounds half toward +inf.
static_assert(qfold::rescale_value({}, {1 << 30, 31}, -3) == -1);
static_assert(qfold::rescale_value({}, {1 << 30, 31}, 3) == 2);

void requantize_accumulators() {
  std::puts("1. Requantize int32 accumulators to int8 (scale 0.0123, output zero point -5)");
  const auto scale = qfold::compute_multiplier_and_shift(0.0123, qfold::scale_width::bits32,
                                                         qfold::tie_rule::half_to_even);
  std::printf("   ExecuTorch convention: multiplier %d, shift %d\n", scale->multiplier,
              scale->shift);
  const qfold::rescale_attributes attrs{.input_type = qfold::int_type::i32, .output_zp = -5};
  const std::array<std::int32_t, 6> acc{-20000, -1000, -41, 0, 41, 20000};
  std::array<std::int8_t, 6> out{};
  const std::array<qfold::scale_factor, 1> scales{*scale};
  if (auto r = qfold::rescale_array<std::int32_t, std::int8_t>(attrs, scales, acc, out); !r) return;
  for (std::size_t i = 0; i < acc.size(); ++i) std::printf("   %6d -> %4d\n", acc[i], out[i]);
}

void conventions_differ() {
  std::puts("2. One scale (1/4), five rounding rules");
  std::puts("       x   TOSA single  TOSA double  TFLite  TFLite single  CMSIS-NN");
  for (std::int32_t x : {-2, -1, 1, 2, 6}) {
    using qfold::tflite::rounding;
    std::printf(
        "   %5d   %11d  %11d  %6d  %13d  %8d\n", x, qfold::apply_scale_32(x, 1 << 30, 32),
        qfold::apply_scale_32(x, 1 << 30, 32, true),
        qfold::tflite::multiply_by_quantized_multiplier(x, 1 << 30, -1),
        qfold::tflite::multiply_by_quantized_multiplier(x, 1 << 30, -1, rounding::single_round),
        qfold::cmsis_nn::requantize(x, 1 << 30, -1));
  }
  const auto et = qfold::compute_multiplier_and_shift(0.5 + 0x1p-32, qfold::scale_width::bits32,
                                                      qfold::tie_rule::half_to_even);
  const auto mlir = qfold::compute_multiplier_and_shift(0.5 + 0x1p-32, qfold::scale_width::bits32,
                                                        qfold::tie_rule::half_away_from_zero);
  std::printf("   scale 0.5 + 2^-32: ExecuTorch multiplier %d, MLIR multiplier %d\n",
              et->multiplier, mlir->multiplier);
}

void tables_per_ecosystem() {
  std::puts("4. One tanh table as ExecuTorch and as TFLite emit it (input 0.1, output scale 2)");
  const auto in = qfold::make_qparams(qfold::dtype::int8, 0.1, 0);
  const auto out = qfold::make_qparams(qfold::dtype::int8, 2.0, 0);  // tanh = +-1 -> +-0.5, a tie
  const auto et = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::executorch,
                                                               qfold::fn::tanh, in, out);
  const auto tfl = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::tflite,
                                                                qfold::fn::tanh, in, out);
  int differ = 0;
  for (int code = -128; code <= 127; ++code) {
    const auto c = static_cast<std::int8_t>(code);
    if ((*et)(c) == (*tfl)(c)) continue;
    if (differ++ < 3)
      std::printf("   code %4d: ExecuTorch %4d, TFLite %4d (a tie: half to even vs half away)\n",
                  code, (*et)(c), (*tfl)(c));
  }
  std::printf("   %d of 256 entries differ; TFLite stores its table in uint8-cast order besides\n",
              differ);
}

void errors_are_values() {
  std::puts("5. Bad input is an error value, never undefined behaviour");
  const auto nan = qfold::compute_multiplier_and_shift(std::numeric_limits<double>::quiet_NaN(),
                                                       qfold::scale_width::bits32,
                                                       qfold::tie_rule::half_to_even);
  std::printf("   NaN scale        -> %.*s\n", int(nan.error().message.size()),
              nan.error().message.data());
  const auto v =
      qfold::validate(qfold::rescale_attributes{.input_unsigned = true, .output_unsigned = true});
  std::printf("   u8 -> u8 RESCALE -> %.*s\n", int(v.error().message.size()),
              v.error().message.data());
  const auto req = qfold::checked::apply_scale_32(1 << 30, 1 << 30, 31);
  std::printf("   apply_scale_32   -> %.*s\n", int(req.error().message.size()),
              req.error().message.data());
}
}  // namespace

int main() {
  std::printf("qfold %d.%d.%d\n\n", qfold::version_major, qfold::version_minor,
              qfold::version_patch);
  requantize_accumulators();
  conventions_differ();
  tables_per_ecosystem();
  errors_are_values();
  return 0;
}
