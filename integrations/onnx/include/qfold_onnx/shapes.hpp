// Checked shapes of an ONNX model: attributes with ONNX's defaults, Conv geometry and its rules,
// and ranks propagated from what can be checked (never from declared value_info).
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model_bytes.hpp"

namespace qfold_onnx {

// The attributes of a Conv or ConvTranspose node with ONNX's defaults filled in.
struct conv_geometry {
  std::int64_t group = 1;
  std::string auto_pad = "NOTSET";                // NOTSET, SAME_UPPER, SAME_LOWER, VALID
  std::vector<std::int64_t> kernel_shape;         // from the attribute, else the weight's dims
  std::vector<std::int64_t> strides, dilations;   // default 1 per spatial axis
  std::optional<std::vector<std::int64_t>> pads;  // begin..., end...; nullopt for SAME_*
  std::vector<std::int64_t> output_padding;       // ConvTranspose only; default 0
};

// An attribute by name (nullptr: absent), and its value when it has the type asked for.
inline const onnx::AttributeProto* attr(const onnx::NodeProto& n, std::string_view key) {
  for (const auto& a : n.attribute())
    if (a.name() == key) return &a;
  return nullptr;
}
inline std::int64_t attr_int(const onnx::NodeProto& n, std::string_view key, std::int64_t d) {
  const auto* a = attr(n, key);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : d;
}
inline float attr_float(const onnx::NodeProto& n, std::string_view key, float d) {
  const auto* a = attr(n, key);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : d;
}
inline std::string attr_string(const onnx::NodeProto& n, std::string_view key, std::string d) {
  const auto* a = attr(n, key);
  return a != nullptr && a->type() == onnx::AttributeProto::STRING ? a->s() : d;
}
inline std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, std::string_view key) {
  const auto* a = attr(n, key);
  if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return {};
  return {a->ints().begin(), a->ints().end()};
}

// Whether a node is of ONNX's default domain (ai.onnx), the only one whose ops are known here.
inline bool default_domain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

// Why a Conv / ConvTranspose cannot be what it says (empty: it can). `weight` is its weight's
// dims when known. ONNX requires positive strides, dilations, kernel sizes and group, pads >= 0,
// a weight of rank >= 3 whose channels the group divides, and one value per spatial axis.
inline std::string conv_problem(const onnx::NodeProto& n,
                                const std::optional<std::vector<std::int64_t>>& weight) {
  const bool t = n.op_type() == "ConvTranspose";
  if (n.input_size() < 2 || n.input(0).empty() || n.input(1).empty())
    return "without its input and weight";
  if (n.output_size() < 1 || n.output(0).empty()) return "without an output";
  const std::int64_t group = attr_int(n, "group", 1);
  if (group < 1) return "group " + std::to_string(group) + " is not positive";
  std::optional<std::size_t> spatial;
  if (weight) {
    if (weight->size() < 3)
      return "weight of rank " + std::to_string(weight->size()) + " (needs 3 or more)";
    for (const std::int64_t d : *weight)
      if (d < 1) return "weight dims " + dims_string(*weight) + " are not all positive";
    if (!t && (*weight)[0] % group != 0)
      return "group " + std::to_string(group) + " does not divide the " +
             std::to_string((*weight)[0]) + " output channels";
    if (t && (*weight)[0] % group != 0)
      return "group " + std::to_string(group) + " does not divide the " +
             std::to_string((*weight)[0]) + " input channels";
    spatial = weight->size() - 2;
  }
  const auto check = [&](const char* key, std::size_t per_axis, std::int64_t min) -> std::string {
    const auto* a = attr(n, key);
    if (a == nullptr) return {};
    if (a->type() != onnx::AttributeProto::INTS) return std::string(key) + " is not a list";
    for (const std::int64_t v : a->ints())
      if (v < min)
        return std::string(key) + " value " + std::to_string(v) + " is below " +
               std::to_string(min);
    if (spatial && static_cast<std::size_t>(a->ints_size()) != per_axis)
      return std::string(key) + " has " + std::to_string(a->ints_size()) + " values for " +
             std::to_string(*spatial) + " spatial axes";
    return {};
  };
  const std::size_t s = spatial.value_or(0);
  for (const auto& [key, per, min] :
       {std::tuple<const char*, std::size_t, std::int64_t>{"strides", s, 1},
        {"dilations", s, 1},
        {"kernel_shape", s, 1},
        {"pads", 2 * s, 0},
        {"output_padding", s, 0},
        {"output_shape", s, 1}})
    if (auto why = check(key, per, min); !why.empty()) return why;
  if (weight) {
    const auto k = attr_ints(n, "kernel_shape");
    if (!k.empty() && !std::equal(k.begin(), k.end(), weight->begin() + 2))
      return "kernel_shape " + dims_string(k) + " differs from the weight's " +
             dims_string(std::span(*weight).subspan(2));
  }
  const std::string pad = attr_string(n, "auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID" && pad != "SAME_UPPER" && pad != "SAME_LOWER")
    return "auto_pad '" + pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER";
  return {};
}

// The geometry of a Conv or ConvTranspose, ONNX's defaults filled in; `weight` is its weight's
// dims when known (the kernel shape when the attribute is absent).
inline conv_geometry geometry_of(const onnx::NodeProto& node,
                                 const std::optional<std::vector<std::int64_t>>& weight) {
  conv_geometry c;
  c.group = attr_int(node, "group", 1);
  c.auto_pad = attr_string(node, "auto_pad", "NOTSET");
  c.kernel_shape = attr_ints(node, "kernel_shape");
  std::size_t spatial = c.kernel_shape.size();
  if (c.kernel_shape.empty() && weight && weight->size() > 2) {
    c.kernel_shape.assign(weight->begin() + 2, weight->end());
    spatial = c.kernel_shape.size();
  }
  const auto fill = [&](const char* key, std::int64_t dflt, std::size_t count) {
    auto v = attr_ints(node, key);
    if (v.empty()) v.assign(count, dflt);
    return v;
  };
  c.strides = fill("strides", 1, spatial);
  c.dilations = fill("dilations", 1, spatial);
  if (node.op_type() == "ConvTranspose") c.output_padding = fill("output_padding", 0, spatial);
  if (c.auto_pad == "VALID") {
    c.pads = std::vector<std::int64_t>(2 * spatial, 0);
  } else if (c.auto_pad == "NOTSET") {
    c.pads = fill("pads", 0, 2 * spatial);
  }  // SAME_UPPER / SAME_LOWER: pads depend on the input's shape
  return c;
}

// Ranks from what can be checked: graph inputs' declared types (the model's interface, which
// runtimes enforce), the constants' own dims, and the rank rules of the ops below. value_info
// and graph output types are never read. A value defined twice has no rank.
// const_tensor(name): the tensor that defines a value when it is a constant (an initializer, or a
// Constant node's `value`), else nullptr.
template <class ConstTensor>
std::unordered_map<std::string, std::size_t> propagate_ranks(const onnx::ModelProto& model,
                                                             const raw_aliases* aliases,
                                                             ConstTensor&& const_tensor) {
  std::unordered_map<std::string, std::size_t> ranks;
  const onnx::GraphProto& graph = model.graph();
  std::int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  for (const auto& v : graph.input())
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()] = static_cast<std::size_t>(v.type().tensor_type().shape().dim_size());
  for (const auto& t : graph.initializer()) {
    const auto it = ranks.find(t.name());
    if (!tensor_problem(t, aliases).empty() ||
        (it != ranks.end() && it->second != static_cast<std::size_t>(t.dims_size()))) {
      ranks.erase(t.name());
      continue;
    }
    ranks[t.name()] = static_cast<std::size_t>(t.dims_size());
  }
  static const std::unordered_set<std::string_view> same = {"Abs",
                                                            "Acos",
                                                            "Asin",
                                                            "Atan",
                                                            "AveragePool",
                                                            "BatchNormalization",
                                                            "Cast",
                                                            "CastLike",
                                                            "Ceil",
                                                            "Celu",
                                                            "Clip",
                                                            "Conv",
                                                            "ConvTranspose",
                                                            "Cos",
                                                            "Cosh",
                                                            "DequantizeLinear",
                                                            "Dropout",
                                                            "Elu",
                                                            "Erf",
                                                            "Exp",
                                                            "Floor",
                                                            "GlobalAveragePool",
                                                            "GlobalLpPool",
                                                            "GlobalMaxPool",
                                                            "HardSigmoid",
                                                            "HardSwish",
                                                            "Hardmax",
                                                            "Identity",
                                                            "InstanceNormalization",
                                                            "IsInf",
                                                            "IsNaN",
                                                            "LRN",
                                                            "LayerNormalization",
                                                            "LeakyRelu",
                                                            "Log",
                                                            "LogSoftmax",
                                                            "LpNormalization",
                                                            "LpPool",
                                                            "MaxPool",
                                                            "MeanVarianceNormalization",
                                                            "Mish",
                                                            "Neg",
                                                            "Not",
                                                            "PRelu",
                                                            "QuantizeLinear",
                                                            "Reciprocal",
                                                            "Relu",
                                                            "Round",
                                                            "Selu",
                                                            "Shrink",
                                                            "Sigmoid",
                                                            "Sign",
                                                            "Sin",
                                                            "Sinh",
                                                            "Softmax",
                                                            "Softplus",
                                                            "Softsign",
                                                            "Sqrt",
                                                            "Tan",
                                                            "Tanh",
                                                            "ThresholdedRelu",
                                                            "Transpose",
                                                            "Concat"};
  static const std::unordered_set<std::string_view> broadcast = {
      "Add",  "And",         "BitShift", "Div",  "Equal", "Greater", "GreaterOrEqual",
      "Less", "LessOrEqual", "Max",      "Mean", "Min",   "Mod",     "Mul",
      "Or",   "Pow",         "Sub",      "Sum",  "Where", "Xor"};
  const auto known = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto it = ranks.find(name);
    return it == ranks.end() ? std::nullopt : std::optional<std::size_t>(it->second);
  };
  const auto const_len = [&](const std::string& name) -> std::optional<std::size_t> {
    // A constant int64 vector's length (its own dims, checked against its data).
    const onnx::TensorProto* t = const_tensor(name);
    if (t == nullptr || !tensor_problem(*t, aliases).empty() || t->dims_size() != 1 ||
        t->data_type() != onnx::TensorProto::INT64)
      return std::nullopt;
    return static_cast<std::size_t>(t->dims(0));
  };
  std::unordered_set<std::string> seen, outside;
  for (const auto& v : graph.input()) outside.insert(v.name());
  for (const auto& t : graph.initializer()) outside.insert(t.name());
  for (const auto& node : graph.node()) {
    std::optional<std::size_t> r;
    const std::string& op = node.op_type();
    const auto in = [&](int k) -> std::optional<std::size_t> {
      if (k >= node.input_size() || node.input(k).empty()) return std::nullopt;
      return known(node.input(k));
    };
    if (!default_domain(node)) {
    } else if (same.contains(op)) {
      r = in(0);
    } else if (broadcast.contains(op)) {
      std::size_t m = 0;
      bool all = node.input_size() > 0;
      for (int k = 0; k < node.input_size(); ++k) {
        const auto x = in(k);
        if (!x)
          all = false;
        else
          m = std::max(m, *x);
      }
      if (all) r = m;
    } else if (op == "Gemm" || op == "Flatten") {
      r = 2;
    } else if (op == "Shape") {
      r = 1;
    } else if (op == "MatMul") {
      const auto a = in(0), b = in(1);
      if (a && b && *a >= 1 && *b >= 1) {
        if (*a == 1 && *b == 1)
          r = 0;
        else if (*a == 1)
          r = *b - 1;
        else if (*b == 1)
          r = *a - 1;
        else
          r = std::max(*a, *b);
      }
    } else if (op == "Reshape" && node.input_size() > 1) {
      r = const_len(node.input(1));
    } else if (op == "Unsqueeze" || op == "Squeeze") {
      std::optional<std::size_t> axes;
      if (opset < 13) {
        if (const auto* a = attr(node, "axes");
            a != nullptr && a->type() == onnx::AttributeProto::INTS)
          axes = static_cast<std::size_t>(a->ints_size());
      } else if (node.input_size() > 1 && !node.input(1).empty()) {
        axes = const_len(node.input(1));
      }
      const auto x = in(0);
      if (x && axes) {
        if (op == "Unsqueeze")
          r = *x + *axes;
        else if (*axes <= *x)
          r = *x - *axes;
      }
    } else if (op == "Constant") {
      for (const auto& a : node.attribute()) {
        if (a.name() == "value" && a.has_t() && tensor_problem(a.t(), aliases).empty())
          r = static_cast<std::size_t>(a.t().dims_size());
        else if (a.name() == "value_float" || a.name() == "value_int")
          r = 0;
        else if (a.name() == "value_floats" || a.name() == "value_ints")
          r = 1;
      }
    }
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& out = node.output(k);
      if (out.empty()) continue;
      // Defined twice (or shadowing an input): no rank. Only output 0 follows the rules above.
      if (!seen.insert(out).second || outside.contains(out) || k > 0 || !r) {
        ranks.erase(out);
        continue;
      }
      ranks[out] = *r;
    }
  }
  return ranks;
}

}  // namespace qfold_onnx
