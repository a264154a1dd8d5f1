// The real functions tables are built from, as function objects callable with float or double:
// the correctly rounded mathematical functions (qfold::fn), and the composite formulas of each
// framework in that framework's operation order (fn::torch, fn::tflite, fn::vela), so that the
// tables equal the ones those frameworks emit; fn::torch::by_name finds one by its aten op name.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string_view>

#include "qfold/arith/result.hpp"
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

// The complete set of functions ExecuTorch's Arm backend turns into tables (InsertTableOpsPass:
// TableOps.unary_table_ops and its special cases), each as the float32 value PyTorch's CPU kernel
// gives: where torch composes several rounded steps, those steps in torch's order; where torch
// is closest to the correctly rounded function (tanh, sigmoid, exp, ... : tests/golden/ shows
// every difference), an alias of the qfold::fn object, so fn::torch::sigmoid is fn::sigmoid.
namespace torch {
inline constexpr auto tanh = fn::tanh;
inline constexpr auto sigmoid = fn::sigmoid;
inline constexpr auto exp = fn::exp;
inline constexpr auto expm1 = fn::expm1;
inline constexpr auto log = fn::log;
inline constexpr auto log1p = fn::log1p;
inline constexpr auto erf = fn::erf;
inline constexpr auto sin = fn::sin;
inline constexpr auto cos = fn::cos;
inline constexpr auto atan = fn::atan;
inline constexpr auto reciprocal = fn::reciprocal;
inline constexpr auto hardsigmoid = fn::hardsigmoid;
inline constexpr auto hardswish = fn::hardswish;
using fn::elu;
using fn::leaky_relu;
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

// One of the functions above, chosen at run time (e.g. from an op name in a graph): a single
// constexpr function object, callable with float or double, usable wherever the others are.
// GCC's -Wshadow takes a scoped enumerator for a redeclaration of the function of the same name
// (op::tanh hides neither ::tanh nor fn::torch::tanh, both stay reachable as before).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
enum class op : std::uint8_t {
  tanh,
  sigmoid,
  exp,
  expm1,
  log,
  log1p,
  erf,
  sin,
  cos,
  atan,
  reciprocal,
  rsqrt,
  hardsigmoid,
  hardswish,
  silu,
  gelu,
  gelu_tanh,
  elu,
  leaky_relu,
};
#pragma GCC diagnostic pop

struct function {
  op id = op::tanh;
  double parameter = 0.0;  // elu: alpha; leaky_relu: negative_slope; otherwise unused

  template <std::floating_point T>
  [[nodiscard]] constexpr T operator()(T x) const {
    switch (id) {
      case op::tanh:
        return torch::tanh(x);
      case op::sigmoid:
        return torch::sigmoid(x);
      case op::exp:
        return torch::exp(x);
      case op::expm1:
        return torch::expm1(x);
      case op::log:
        return torch::log(x);
      case op::log1p:
        return torch::log1p(x);
      case op::erf:
        return torch::erf(x);
      case op::sin:
        return torch::sin(x);
      case op::cos:
        return torch::cos(x);
      case op::atan:
        return torch::atan(x);
      case op::reciprocal:
        return torch::reciprocal(x);
      case op::rsqrt:
        return torch::rsqrt(x);
      case op::hardsigmoid:
        return torch::hardsigmoid(x);
      case op::hardswish:
        return torch::hardswish(x);
      case op::silu:
        return torch::silu(x);
      case op::gelu:
        return torch::gelu(x);
      case op::gelu_tanh:
        return torch::gelu_tanh(x);
      case op::elu:
        return torch::elu(parameter)(x);
      case op::leaky_relu:
        return torch::leaky_relu(parameter)(x);
    }
    qfold::detail::expects(false, "fn::torch::function: id is one of the ops");
    return x;
  }
  friend constexpr bool operator==(const function&, const function&) = default;
};

// The attributes by_name reads, with torch's defaults.
struct op_attributes {
  double alpha = 1.0;                     // aten.elu
  double negative_slope = 0.01;           // aten.leaky_relu
  std::string_view approximate = "none";  // aten.gelu: "none" or "tanh"
};

}  // namespace torch
}  // namespace qfold::fn

namespace qfold::detail {
struct torch_op_name {
  std::string_view name;
  fn::torch::op id;
};
inline constexpr torch_op_name torch_op_names[] = {
    {"tanh", fn::torch::op::tanh},
    {"sigmoid", fn::torch::op::sigmoid},
    {"exp", fn::torch::op::exp},
    {"expm1", fn::torch::op::expm1},
    {"log", fn::torch::op::log},
    {"log1p", fn::torch::op::log1p},
    {"erf", fn::torch::op::erf},
    {"sin", fn::torch::op::sin},
    {"cos", fn::torch::op::cos},
    {"atan", fn::torch::op::atan},
    {"reciprocal", fn::torch::op::reciprocal},
    {"rsqrt", fn::torch::op::rsqrt},
    {"hardsigmoid", fn::torch::op::hardsigmoid},
    {"hardswish", fn::torch::op::hardswish},
    {"silu", fn::torch::op::silu},
    {"gelu", fn::torch::op::gelu},
    {"elu", fn::torch::op::elu},
    {"leaky_relu", fn::torch::op::leaky_relu},
};
// "aten.sigmoid.default" or "aten::sigmoid" -> "sigmoid"; anything else -> "" (unknown).
[[nodiscard]] constexpr std::string_view aten_base_name(std::string_view s) noexcept {
  constexpr std::string_view dotted = "aten.", suffix = ".default", schema = "aten::";
  if (s.starts_with(dotted) && s.ends_with(suffix) && s.size() > dotted.size() + suffix.size())
    return s.substr(dotted.size(), s.size() - dotted.size() - suffix.size());
  if (s.starts_with(schema) && s.size() > schema.size()) return s.substr(schema.size());
  return {};
}
}  // namespace qfold::detail

namespace qfold::fn {
namespace torch {

// The function ExecuTorch's Arm backend tabulates for the op named `name`, as torch prints it:
// "aten.sigmoid.default" (the edge/aten overload) or "aten::sigmoid" (the schema name); gelu with
// approximate "tanh" is gelu_tanh. Errors: illegal_attributes for a name that is not one of
// these ops, an approximate other than "none" / "tanh", or a non-finite elu alpha / leaky_relu
// slope.
[[nodiscard]] constexpr result<function> by_name(std::string_view name,
                                                 const op_attributes& attributes = {}) {
  const std::string_view base = qfold::detail::aten_base_name(name);
  for (const auto& [n, id] : qfold::detail::torch_op_names) {
    if (base.empty() || n != base) continue;
    switch (id) {
      case op::gelu:
        if (attributes.approximate == "none") return function{op::gelu};
        if (attributes.approximate == "tanh") return function{op::gelu_tanh};
        return fail(errc::illegal_attributes,
                    "fn::torch::by_name: gelu approximate is not none/tanh");
      case op::elu:
      case op::leaky_relu: {
        const double p = id == op::elu ? attributes.alpha : attributes.negative_slope;
        if (!(p - p == 0.0))
          return fail(errc::illegal_attributes,
                      "fn::torch::by_name: elu alpha / leaky_relu slope is not finite");
        return function{id, p};
      }
      default:
        return function{id};
    }
  }
  return fail(errc::illegal_attributes,
              "fn::torch::by_name: not an op ExecuTorch's Arm backend makes a table for");
}
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
