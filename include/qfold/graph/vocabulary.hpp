// qfold's small op vocabulary and the typed views an adapter returns for a node: constant
// tensors, convolution / linear / batch-norm / rescale attributes. Adapters map their IR onto
// these.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/fold/batch_norm.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

enum class op_kind : std::uint8_t {
  constant,     // a tensor known at compile time (an initializer)
  input,        // a graph input or any value computed at run time outside the vocabulary
  convolution,  // operands: input, weight, optional bias
  linear,       // operands: input, weight (out, in), optional bias
  batch_norm,   // operands: input, gamma, beta, mean, variance (ONNX order)
  rescale,      // TOSA RESCALE: operand: input
  table,        // int8 TABLE (256 entries indexed by code + 128): operand: input
  mul,          // elementwise a * b: integer (TOSA MUL with its shift) or float, as typed
  add,          // elementwise a + b (integer: int32, overflow is an error)
  div,          // elementwise float a / b
  quantize,     // float -> code with the node's qparams
  dequantize,   // code -> float with the node's qparams
  view,         // layout only (reshape, permute, slice, identity)
  sub,          // elementwise a - b (integer: int32, overflow is an error)
  clamp,        // integer clamp to [min, max] (clamp_attributes): operand: input
  cast,         // integer element type conversion (element_type of input and output): input
  other,        // anything else: never looked through
};

[[nodiscard]] constexpr std::string_view to_string(op_kind k) noexcept {
  constexpr std::string_view names[] = {
      "constant", "input", "convolution", "linear", "batch_norm", "rescale",
      "table",    "mul",   "add",         "div",    "quantize",   "dequantize",
      "view",     "sub",   "clamp",       "cast",   "other"};
  const auto i = static_cast<std::size_t>(k);  // an adapter may return a value outside the enum
  return i < std::size(names) ? names[i] : std::string_view("unknown");
}

// A constant tensor seen through the adapter (row-major, `shape` in the tensor's own order).
template <class T>
struct tensor_view {
  std::span<const T> data;
  std::span<const std::int64_t> shape;
};
// A float constant's values where they lie, at any address (the optional point
// unaligned_constant): e.g. a model file's raw tensor bytes, read without an aligned copy.
struct unaligned_tensor_view {
  unaligned_values<float> data;
  std::span<const std::int64_t> shape;
};
// A constant given as the batch-norm fold that makes it (the optional point add_scaled_constant):
// weight i of the new constant is weights[i] * scales[its output channel], bit for bit what
// fold_batch_norm writes, made by values() whenever the adapter needs them (e.g. piece by piece
// as it writes a model file, so that all of them are never held at once). Its shape is
// weights.shape; both views are valid for the call that lends them only.
struct scaled_weights {
  weights_view<float> weights;    // the producer's weights, as the fold reads them
  std::span<const float> scales;  // one per output channel
  // Values first .. first + out.size() - 1; a rejection (a range outside the weights, scales
  // that do not fit them, a non-finite value) leaves out's contents meaningless.
  [[nodiscard]] constexpr std::optional<rejection> values(std::size_t first,
                                                          std::span<float> out) const {
    return fold_batch_norm_weights(weights, scales, first, out);
  }
};

struct conv_attributes {
  std::int64_t groups = 1;
  bool transposed = false;
  weight_layout layout = weight_layout::o_i_s;  // of the weight operand
  bool padded = false;                          // any non-zero padding (explicit or automatic)
  std::int64_t input_channel_axis = 1;          // of the input: 1 for NCHW, 3 for NHWC (TOSA)
};

// An integer convolution (TOSA CONV2D, ONNX ConvInteger): int8 weights (an integer constant,
// operand 1), int32 bias (operand 2), accumulator = bias + sum (w - wzp) * (x - input_zero_point).
struct quantized_conv_attributes {
  std::int64_t input_zero_point = 0;
  std::span<const std::int64_t> weight_zero_points;  // one, or one per output channel (axis 0)
  dtype weight_type = dtype::int8;
};

struct batch_norm_attributes {
  double epsilon = 1e-5;
  bool training = false;
};

// A batch norm's parameters by role, for IRs whose batch norm may lack gamma or beta (the
// optional point batch_norm_operands): an absent gamma is all ones, an absent beta all zeros.
// Without that point, operands(g, n) is read in ONNX order: input, gamma, beta, mean, variance.
template <class Id>
struct batch_norm_operands {
  Id input;
  std::optional<Id> gamma, beta;
  Id mean, variance;
};

// An integer CLAMP's bounds (inclusive).
struct clamp_attributes {
  std::int64_t min = 0, max = 0;
};

// What an adapter's read point throws when a parameter its IR requires to be a compile-time
// constant is computed at run time (a TOSA RESCALE's multiplier, shift or zero point, a MUL's
// shift, a convolution's zero point, a TABLE's table): the site that reads it is refused
// (reason not_constant), not taken as an adapter failure.
class parameter_not_constant : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace qfold
