// qfold's small op vocabulary and the typed views an adapter returns for a node: constant
// tensors, convolution / linear / batch-norm attributes. Adapters map their IR onto these.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "qfold/fold/batch_norm.hpp"

namespace qfold {

enum class op_kind : std::uint8_t {
  constant,     // a tensor known at compile time (an initializer)
  input,        // a graph input or any value computed at run time outside the vocabulary
  convolution,  // operands: input, weight, optional bias
  linear,       // operands: input, weight (out, in), optional bias
  batch_norm,   // operands: input, gamma, beta, mean, variance (ONNX order)
  rescale,
  table,
  mul,
  add,
  div,
  quantize,
  dequantize,
  view,   // layout only (reshape, permute, slice, identity)
  other,  // anything else: never looked through
};

[[nodiscard]] constexpr std::string_view to_string(op_kind k) noexcept {
  constexpr std::string_view names[] = {
      "constant", "input", "convolution", "linear",   "batch_norm", "rescale", "table",
      "mul",      "add",   "div",         "quantize", "dequantize", "view",    "other"};
  return names[static_cast<std::size_t>(k)];
}

// A constant tensor seen through the adapter (row-major, `shape` in the tensor's own order).
template <class T>
struct tensor_view {
  std::span<const T> data;
  std::span<const std::int64_t> shape;
};

struct conv_attributes {
  std::int64_t groups = 1;
  bool transposed = false;
  weight_layout layout = weight_layout::o_i_s;  // of the weight operand
};

struct batch_norm_attributes {
  double epsilon = 1e-5;
  bool training = false;
};

}  // namespace qfold
