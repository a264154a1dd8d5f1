// A `.tosa` file as MLIR 22 TOSA 1.0 text (MLIR's generic op form, one func.func @main), so
// that any file qfold reads or writes can be checked with MLIR's own verifier and executor.
// Covers the ops qfold maps and the elementwise ops without attributes; any other op is an
// emit_error naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/schema.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qfold_tosa_fb {

// A file that cannot be written as MLIR (an op or a type this writer does not cover).
class emit_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline std::string mlir_element(tosa::DType t) {
  switch (t) {
    case tosa::DType_BOOL:
      return "i1";
    case tosa::DType_INT4:
      return "i4";
    case tosa::DType_INT8:
      return "i8";
    case tosa::DType_INT16:
      return "i16";
    case tosa::DType_INT32:
      return "i32";
    case tosa::DType_INT48:
      return "i48";
    case tosa::DType_FP32:
      return "f32";
    case tosa::DType_FP16:
      return "f16";
    case tosa::DType_BF16:
      return "bf16";
    case tosa::DType_FP8E4M3:
      return "f8E4M3FN";
    case tosa::DType_FP8E5M2:
      return "f8E5M2";
    default:
      throw emit_error("no MLIR element type for " + dtype_name(t));
  }
}
inline std::string mlir_type(const tensor_info& t) {
  if (t.type == tosa::DType_SHAPE) {
    if (t.shape.size() != 1 || t.shape[0] < 0)
      throw emit_error("shape tensor '" + std::string(t.name) + "' is not of rank 1");
    return "!tosa.shape<" + std::to_string(t.shape[0]) + ">";
  }
  if (t.fb != nullptr && t.fb->is_unranked()) return "tensor<*x" + mlir_element(t.type) + ">";
  std::string s = "tensor<";
  for (const std::int64_t d : t.shape) s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + mlir_element(t.type) + ">";
}
// One element of a tensor's little-endian data as an integer (sign-extended; INT4 packed).
inline std::int64_t integer_at(const tensor_info& t, std::size_t i) {
  if (t.type == tosa::DType_INT4) {
    const std::uint8_t b = t.data[i / 2];
    const int nibble = i % 2 == 0 ? (b & 0xF) : (b >> 4);
    return nibble >= 8 ? nibble - 16 : nibble;
  }
  const std::size_t w = storage_of(t.type).bytes;
  std::uint64_t u = 0;
  for (std::size_t b = 0; b < w; ++b) u |= std::uint64_t{t.data[i * w + b]} << (8 * b);
  if (w >= 8) return static_cast<std::int64_t>(u);
  const std::uint64_t sign = std::uint64_t{1} << (8 * w - 1);
  return static_cast<std::int64_t>(u ^ sign) - static_cast<std::int64_t>(sign);
}
// A constant's dense<...> literal: nested lists for integers (bool as true/false), the raw
// little-endian bytes in hex for floating-point types.
inline std::string dense_literal(const tensor_info& t) {
  const auto count = element_count(t.shape);
  if (!count) throw emit_error("constant '" + std::string(t.name) + "' has no known shape");
  const bool is_float = t.type == tosa::DType_FP32 || t.type == tosa::DType_FP16 ||
                        t.type == tosa::DType_BF16 || t.type == tosa::DType_FP8E4M3 ||
                        t.type == tosa::DType_FP8E5M2;
  if (*count == 0) return "dense<[]>";
  if (is_float) {
    std::string s = "dense<\"0x";
    char hex[3];
    for (const std::uint8_t b : t.data) {
      std::snprintf(hex, sizeof hex, "%02X", static_cast<unsigned>(b));
      s += hex;
    }
    return s + "\">";
  }
  const bool is_bool = t.type == tosa::DType_BOOL;
  std::string s = "dense<";
  std::size_t next = 0;
  // Nested brackets, one level per dim (a rank-0 tensor is its one value).
  const auto emit = [&](auto&& self, std::size_t dim) -> void {
    if (dim == t.shape.size()) {
      const std::int64_t v = integer_at(t, next++);
      s += is_bool ? (v != 0 ? "true" : "false") : std::to_string(v);
      return;
    }
    s += "[";
    for (std::int64_t k = 0; k < t.shape[dim]; ++k) {
      if (k != 0) s += ", ";
      self(self, dim + 1);
    }
    s += "]";
  };
  emit(emit, 0);
  return s + ">";
}
inline std::string i64_array(const flatbuffers::Vector<std::int32_t>* v, const char* what,
                             std::size_t size) {
  if (v == nullptr || v->size() != size)
    throw emit_error(std::string("a ") + what + " of " + std::to_string(size) + " values is missing");
  std::string s = "array<i64: ";
  for (std::uint32_t i = 0; i < v->size(); ++i) s += (i != 0 ? ", " : "") + std::to_string(v->Get(i));
  return s + ">";
}
inline std::string nan_mode(tosa::NanPropagationMode m) {
  switch (m) {
    case tosa::NanPropagationMode_PROPAGATE:
      return "#tosa.nan_mode<PROPAGATE>";
    case tosa::NanPropagationMode_IGNORE:
      return "#tosa.nan_mode<IGNORE>";
    default:
      throw emit_error("nan_mode UNKNOWN");
  }
}
inline std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace detail

// The file as one func.func @main of MLIR 22's TOSA dialect (generic op form; ops in an order
// where every value is defined before its use). Throws emit_error.
inline std::string to_mlir(const model& m) {
  using namespace detail;
  std::vector<std::string> value(m.tensors.size());
  for (std::size_t i = 0; i < m.inputs.size(); ++i) value[m.inputs[i]] = "%arg" + std::to_string(i);
  std::string s = "module {\n  func.func @main(";
  for (std::size_t i = 0; i < m.inputs.size(); ++i)
    s += (i != 0 ? ", " : "") + value[m.inputs[i]] + ": " + mlir_type(m.tensors[m.inputs[i]]);
  s += ") -> (";
  for (std::size_t i = 0; i < m.outputs.size(); ++i)
    s += (i != 0 ? ", " : "") + mlir_type(m.tensors[m.outputs[i]]);
  s += ") {\n";
  // Kahn's order over the ops (read_model refused cycles), the file's order where it can.
  const auto n = static_cast<std::uint32_t>(m.ops.size());
  std::vector<std::uint32_t> pending(n, 0);
  std::vector<std::vector<std::uint32_t>> readers(m.tensors.size());
  for (std::uint32_t k = 0; k < n; ++k)
    for (const std::uint32_t t : m.ops[k].inputs) {
      if (m.tensors[t].producer != no_op) ++pending[k];
      readers[t].push_back(k);
    }
  std::vector<std::uint32_t> order;
  std::vector<bool> queued(n, false);
  for (std::uint32_t scan = 0; order.size() < n;) {
    // The first op in file order whose inputs are all defined.
    while (scan < n && (queued[scan] || pending[scan] != 0)) ++scan;
    std::uint32_t k = scan;
    if (k == n) {
      for (k = 0; k < n && (queued[k] || pending[k] != 0); ++k) {
      }
      if (k == n) throw emit_error("the ops have a cycle");
    }
    queued[k] = true;
    order.push_back(k);
    for (const std::uint32_t out : m.ops[k].outputs)
      for (const std::uint32_t r : readers[out]) {
        --pending[r];
        if (r < scan) scan = r;
      }
  }
  std::uint32_t next = 0;
  for (const std::uint32_t k : order) {
    const op_info& o = m.ops[k];
    if (o.outputs.size() != 1)
      throw emit_error(m.op_label(k) + ": only ops with one output are written as MLIR");
    const tensor_info& out = m.tensors[o.outputs[0]];
    std::string name = "\"tosa." + lower(op_name(o.code)) + "\"";
    std::string props;
    switch (o.code) {
      case tosa::Op_CONST:
        props = "values = " + dense_literal(out) + " : " + [&] {
          std::string ty = "tensor<";
          for (const std::int64_t d : out.shape) ty += std::to_string(d) + "x";
          return ty + mlir_element(out.type) + ">";
        }();
        break;
      case tosa::Op_CONST_SHAPE: {
        std::string vals = "dense<[";
        for (std::size_t i = 0; i < out.data.size() / 8; ++i)
          vals += (i != 0 ? ", " : "") + std::to_string(integer_at(out, i));
        props = "values = " + vals + "]> : tensor<" + std::to_string(out.data.size() / 8) +
                "xindex>";
        break;
      }
      case tosa::Op_RESCALE: {
        const auto* a = o.fb->attribute_as_RescaleAttribute();
        if (a == nullptr) throw emit_error(m.op_label(k) + " has no RescaleAttribute");
        const char* modes[] = {nullptr, "SINGLE_ROUND", "INEXACT_ROUND", "DOUBLE_ROUND"};
        const auto mode = static_cast<std::uint32_t>(a->rounding_mode());
        if (mode < 1 || mode > 3) throw emit_error(m.op_label(k) + ": rounding_mode UNKNOWN");
        props = std::string("input_unsigned = ") + (a->input_unsigned() ? "true" : "false") +
                ", output_unsigned = " + (a->output_unsigned() ? "true" : "false") +
                ", per_channel = " + (a->per_channel() ? "true" : "false") +
                ", rounding_mode = #tosa.rounding_mode<" + modes[mode] +
                ">, scale32 = " + (a->scale32() ? "true" : "false");
        break;
      }
      case tosa::Op_CLAMP: {
        const auto* a = o.fb->attribute_as_ClampAttribute();
        const auto* lo = a != nullptr ? a->min_val() : nullptr;
        const auto* hi = a != nullptr ? a->max_val() : nullptr;
        const tensor_info& in = m.tensors[o.inputs.at(0)];
        const std::size_t w = storage_of(in.type).bytes;
        if (lo == nullptr || hi == nullptr || w == 0 || lo->size() != w || hi->size() != w)
          throw emit_error(m.op_label(k) + ": min_val / max_val are not one element each");
        tensor_info bound;
        bound.type = in.type;
        const auto literal = [&](const flatbuffers::Vector<std::uint8_t>* v) {
          bound.data = {v->data(), v->size()};
          if (in.type == tosa::DType_FP32 || in.type == tosa::DType_FP16 ||
              in.type == tosa::DType_BF16) {
            std::string h = "0x";
            char hex[3];
            for (std::size_t b = w; b-- > 0;) {
              std::snprintf(hex, sizeof hex, "%02X", static_cast<unsigned>(v->Get(static_cast<std::uint32_t>(b))));
              h += hex;
            }
            return h + " : " + mlir_element(in.type);
          }
          return std::to_string(integer_at(bound, 0)) + " : " + mlir_element(in.type);
        };
        props = "max_val = " + literal(hi) + ", min_val = " + literal(lo) +
                ", nan_mode = " + nan_mode(a->nan_mode());
        break;
      }
      case tosa::Op_CONV2D:
      case tosa::Op_DEPTHWISE_CONV2D: {
        const flatbuffers::Vector<std::int32_t>*pad = nullptr, *stride = nullptr, *dilation = nullptr;
        bool local_bound = false;
        tosa::DType acc = tosa::DType_UNKNOWN;
        if (const auto* c = o.fb->attribute_as_Conv2dAttribute()) {
          pad = c->pad();
          stride = c->stride();
          dilation = c->dilation();
          local_bound = c->local_bound();
          acc = c->acc_type();
        } else if (const auto* d = o.fb->attribute_as_DepthwiseConv2dAttribute()) {
          pad = d->pad();
          stride = d->stride();
          dilation = d->dilation();
          local_bound = d->local_bound();
          acc = d->acc_type();
        } else {
          throw emit_error(m.op_label(k) + " has no convolution attribute");
        }
        props = "acc_type = " + mlir_element(acc) +
                ", dilation = " + i64_array(dilation, "dilation", 2) +
                (local_bound ? ", local_bound = true" : "") + ", pad = " + i64_array(pad, "pad", 4) +
                ", stride = " + i64_array(stride, "stride", 2);
        break;
      }
      case tosa::Op_TRANSPOSE: {
        const auto* a = o.fb->attribute_as_TransposeAttribute();
        const auto* perms = a != nullptr ? a->perms() : nullptr;
        if (perms == nullptr) throw emit_error(m.op_label(k) + " has no perms");
        props = "perms = array<i32: ";
        for (std::uint32_t i = 0; i < perms->size(); ++i)
          props += (i != 0 ? ", " : "") + std::to_string(perms->Get(i));
        props += ">";
        break;
      }
      case tosa::Op_MAXIMUM:
      case tosa::Op_MINIMUM: {
        const auto* mx = o.fb->attribute_as_MaximumAttribute();
        const auto* mn = o.fb->attribute_as_MinimumAttribute();
        props = "nan_mode = " + nan_mode(mx != nullptr   ? mx->nan_mode()
                                         : mn != nullptr ? mn->nan_mode()
                                                         : tosa::NanPropagationMode_PROPAGATE);
        break;
      }
      case tosa::Op_TABLE:
      case tosa::Op_MUL:
      case tosa::Op_ADD:
      case tosa::Op_SUB:
      case tosa::Op_CAST:
      case tosa::Op_MATMUL:
      case tosa::Op_RESHAPE:
      case tosa::Op_SLICE:
      case tosa::Op_ABS:
      case tosa::Op_BITWISE_AND:
      case tosa::Op_BITWISE_OR:
      case tosa::Op_BITWISE_XOR:
      case tosa::Op_BITWISE_NOT:
      case tosa::Op_LOGICAL_AND:
      case tosa::Op_LOGICAL_OR:
      case tosa::Op_LOGICAL_XOR:
      case tosa::Op_LOGICAL_NOT:
      case tosa::Op_SELECT:
      case tosa::Op_EQUAL:
      case tosa::Op_GREATER:
      case tosa::Op_GREATER_EQUAL:
      case tosa::Op_INTDIV:
      case tosa::Op_CLZ:
      case tosa::Op_IDENTITY:
        break;
      default:
        throw emit_error(m.op_label(k) + ": " + op_name(o.code) +
                         " is not among the ops qfold writes as MLIR");
    }
    value[o.outputs[0]] = "%" + std::to_string(next++);
    s += "    " + value[o.outputs[0]] + " = " + name + "(";
    std::string types;
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
      const std::uint32_t t = o.inputs[i];
      if (value[t].empty())
        throw emit_error(m.op_label(k) + " reads '" + std::string(m.tensors[t].name) +
                         "', which neither an op nor the graph's inputs give");
      s += (i != 0 ? ", " : "") + value[t];
      types += (i != 0 ? ", " : "") + mlir_type(m.tensors[t]);
    }
    s += ")";
    if (!props.empty()) s += " <{" + props + "}>";
    s += " : (" + types + ") -> " + mlir_type(out) + "\n";
  }
  s += "    return";
  for (std::size_t i = 0; i < m.outputs.size(); ++i)
    s += (i != 0 ? ", " : " ") + value[m.outputs[i]];
  if (!m.outputs.empty()) {
    s += " :";
    for (std::size_t i = 0; i < m.outputs.size(); ++i)
      s += (i != 0 ? ", " : " ") + mlir_type(m.tensors[m.outputs[i]]);
  }
  s += "\n  }\n}\n";
  return s;
}

}  // namespace qfold_tosa_fb
