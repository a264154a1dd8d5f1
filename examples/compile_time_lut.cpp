// A lookup table generated at compile time and used at run time: the int8 tanh TABLE an
// ExecuTorch Arm (TOSA) compile would emit for these qparams, baked into the binary as constant
// data, applied to a buffer like a firmware kernel would, and checked against the same table
// built at run time from the same code.
#include <array>
#include <cstdint>
#include <cstdio>
#include <qfold/qfold.hpp>

namespace {
constexpr auto input = qfold::make_qparams<qfold::dtype::int8>(0.0234375, -3);
constexpr auto output = qfold::make_qparams<qfold::dtype::int8>(1.0 / 128, 0);

// About 206,000 clang constexpr steps (20% of the default limit); no compiler flags needed. The
// element types (int8 -> int8) come from the qparams; invalid qparams would not compile.
constexpr qfold::int8_table tanh_lut =
    qfold::make_table8(qfold::conventions::executorch, qfold::fn::torch::tanh, input, output);
static_assert(tanh_lut(-3) == 0, "tanh(0) is the output zero point");

void apply(const qfold::int8_table& lut, std::int8_t* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) data[i] = lut(data[i]);  // TOSA TABLE int8
}
}  // namespace

int main() {
  std::array<std::int8_t, 8> activations{-128, -64, -20, -3, 0, 17, 64, 127};
  const auto before = activations;
  apply(tanh_lut, activations.data(), activations.size());
  std::puts("code  real      tanh      table  real");
  for (std::size_t i = 0; i < activations.size(); ++i) {
    const double x = input.scale * (before[i] - input.zero_point);
    std::printf("%4d  %+.4f  %+.4f  %4d   %+.4f\n", before[i], x,
                static_cast<double>(qfold::math::tanh(x)), activations[i],
                output.scale * activations[i]);
  }
  // The run-time build (same code, same conventions) gives the same bytes; the volatile copy
  // keeps the optimiser from folding it into another compile-time evaluation.
  volatile double scale = input.scale;
  auto runtime_input = input;
  runtime_input.scale = scale;
  const auto runtime = qfold::checked::make_table8(qfold::conventions::executorch,
                                                   qfold::fn::torch::tanh, runtime_input, output);
  const bool same = runtime.has_value() && *runtime == tanh_lut;
  std::printf("compile-time table == run-time table: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}
