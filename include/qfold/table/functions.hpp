// The real functions tables are built from, as function objects callable with float or double:
// the correctly rounded mathematical functions (qfold::fn), and the composite formulas of each
// framework in that framework's operation order (fn::torch, fn::tflite, fn::vela), so that the
// tables equal the ones those frameworks emit.
#pragma once

#include <concepts>
#include <limits>

#include "qfold/math/functions.hpp"

namespace qfold::fn {

// Correctly rounded in the caller's type (one rounding of the exact value).
inline constexpr auto tanh = [](std::floating_point auto x) { return math::tanh(x); };
inline constexpr auto sigmoid = [](std::floating_point auto x) { return math::sigmoid(x); };
inline constexpr auto exp = [](std::floating_point auto x) { return math::exp(x); };
inline constexpr auto expm1 = [](std::floating_point auto x) { return math::expm1(x); };
inline constexpr auto log = [](std::floating_point auto x) { return math::log(x); };
inline constexpr auto log1p = [](std::floating_point auto x) { return math::log1p(x); };
inline constexpr auto erf = [](std::floating_point auto x) { return math::erf(x); };
inline constexpr auto erfc = [](std::floating_point auto x) { return math::erfc(x); };
inline constexpr auto sqrt = [](std::floating_point auto x) { return math::sqrt(x); };
inline constexpr auto rsqrt = [](std::floating_point auto x) { return math::rsqrt(x); };
inline constexpr auto sin = [](std::floating_point auto x) { return math::sin(x); };
inline constexpr auto cos = [](std::floating_point auto x) { return math::cos(x); };
inline constexpr auto atan = [](std::floating_point auto x) { return math::atan(x); };

// Piecewise and rational ones, each step rounded in the caller's type (as every framework does).
inline constexpr auto reciprocal = []<std::floating_point T>(T x) { return T{1} / x; };
// min(max(x + 3, 0), 6), shared by the two hard activations.
inline constexpr auto relu6_of_x_plus_3 = []<std::floating_point T>(T x) {
  const T r = x + T{3};
  return r < T{0} ? T{0} : (r > T{6} ? T{6} : r);
};
inline constexpr auto hardsigmoid = []<std::floating_point T>(T x) {
  return relu6_of_x_plus_3(x) / T{6};
};
// x * r / 6 in that order (not x * (r / 6)), as torch computes it.
inline constexpr auto hardswish = []<std::floating_point T>(T x) {
  return x * relu6_of_x_plus_3(x) / T{6};
};
[[nodiscard]] constexpr auto leaky_relu(double negative_slope) {
  return [negative_slope]<std::floating_point T>(T x) {
    return x > T{0} ? x : x * static_cast<T>(negative_slope);
  };
}
// x > 0 ? x : alpha * expm1(x) (torch 2.x; torch 1.13 wrote exp(x) - 1).
[[nodiscard]] constexpr auto elu(double alpha) {
  return [alpha]<std::floating_point T>(T x) {
    return x > T{0} ? x : math::expm1(x) * static_cast<T>(alpha);
  };
}

// PyTorch's CPU kernels (the float32 values ExecuTorch's table pass sees) where they compose
// several rounded steps; torch.sigmoid and the unary functions are closest to the correctly
// rounded qfold::fn ones (tests/golden/ shows every difference).
namespace torch {
inline constexpr auto silu = []<std::floating_point T>(T x) { return x / (T{1} + math::exp(-x)); };
inline constexpr auto rsqrt = []<std::floating_point T>(T x) { return T{1} / math::sqrt(x); };
// x * 0.5 * (1 + erf(x * sqrt(1/2))).
inline constexpr auto gelu = []<std::floating_point T>(T x) {
  return x * T{0.5} * (T{1} + math::erf(x * static_cast<T>(0.70710678118654752440)));
};
// 0.5 * x * (1 + tanh(kBeta * (x + kKappa * x^3))), x^3 = (x * x) * x.
inline constexpr auto gelu_tanh = []<std::floating_point T>(T x) {
  const T inner =
      static_cast<T>(0.79788456080286535588) * (x + static_cast<T>(0.044715) * (x * x * x));
  return T{0.5} * x * (T{1} + math::tanh(inner));
};
}  // namespace torch

// TFLite's kernels (activations.cc, exp.cc, gelu.h), float32 lambdas.
namespace tflite {
inline constexpr auto sigmoid = []<std::floating_point T>(T x) {
  return T{1} / (T{1} + math::exp(-x));
};
// (0.5 x) * erfc(x * -sqrt(1/2)), the current gelu.h.
inline constexpr auto gelu = []<std::floating_point T>(T x) {
  return (T{0.5} * x) * math::erfc(x * static_cast<T>(-0.70710678118654752440));
};
// (0.5 x) * (1 + tanh(sqrt(2/pi) * (x + ((0.044715 x) x) x))).
inline constexpr auto gelu_tanh = []<std::floating_point T>(T x) {
  const T inner =
      static_cast<T>(0.79788456080286535588) * (x + ((static_cast<T>(0.044715) * x) * x) * x);
  return (T{0.5} * x) * (T{1} + math::tanh(inner));
};
// The older gelu.h: 0.5f * x * (1 + erf(x * M_SQRT1_2)) with M_SQRT1_2 a double, so erf and the
// sum run in double and only the result is rounded to T.
inline constexpr auto gelu_erf_legacy = []<std::floating_point T>(T x) {
  const double half_x = static_cast<double>(T{0.5} * x);
  return static_cast<T>(half_x *
                        (1.0 + math::erf(static_cast<double>(x) * 0.70710678118654752440)));
};
}  // namespace tflite

// Arm Vela (Python, double): clamp_sigmoid, log with log(0) taken at the smallest normal double,
// and the NXP fork's GELU formulas with math.pow(x, 3) (one rounding of x^3).
namespace vela {
inline constexpr auto sigmoid = [](double x) {
  return x <= -8.0 ? 0.0 : (x >= 8.0 ? 1.0 : 1.0 / (1.0 + math::exp(-x)));
};
inline constexpr auto log = [](double x) {
  return math::log(x == 0.0 ? std::numeric_limits<double>::min() : x);
};
inline constexpr auto gelu = [](double x) {
  return 0.5 * x * (1.0 + math::erf(x / 1.4142135623730950488));
};
inline constexpr auto gelu_tanh = [](double x) {
  const double cube = math::dd::nearest<double>(math::dd::mul(math::dd::two_prod(x, x), x));
  return 0.5 * x * (1.0 + math::tanh(0.79788456080286535588 * (x + 0.044715 * cube)));
};
}  // namespace vela

}  // namespace qfold::fn
