// Reading a `.tosa` file (TOSA 1.0 flatbuffer) as untrusted input: identifier, flatbuffers'
// Verifier, version, one region with one block, every tensor's data against its shape and type,
// operators naming existing tensors, each tensor produced once, no cycle. Every problem is a
// qfold_tosa_fb::bad_file naming what is wrong where; tensor data stays in the caller's buffer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <qfold/graph/tosa_operands.hpp>
#include <qfold_tosa_fb/schema.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qfold_tosa_fb {

// What makes a file unreadable, one code per rule (docs and tests name them).
enum class problem : std::uint8_t {
  too_small,             // fewer than 8 bytes: no root offset and identifier
  too_large,             // 2 GiB or more: beyond what flatbuffers addresses
  not_tosa,              // bytes 4..7 are not "TOSA"
  verifier_failed,       // flatbuffers' Verifier refused the buffer (offsets, sizes, alignment)
  unsupported_version,   // a major version other than 1
  no_region,             // no region, or no block in the region
  several_regions,       // more than one region (qfold folds one region with one block)
  several_blocks,        // more than one block in the region
  unnamed_tensor,        // a tensor without a name (or an empty one)
  duplicate_tensor,      // two tensors of one name
  unknown_tensor,        // an operator or the block names a tensor the block does not have
  data_size,             // a tensor's data disagrees with its shape and type
  bad_shape,             // a constant's dims are negative, or their product overflows
  external_data,         // data outside the flatbuffer (offset/size, files over 2 GB)
  produced_twice,        // a tensor is the output of two operators (or twice of one)
  input_produced,        // a graph input is the output of an operator
  duplicate_input,       // a tensor listed twice as a graph input
  constant_with_inputs,  // a CONST or CONST_SHAPE operator with inputs
  operand_count,         // an operator qfold maps with the wrong number of inputs or outputs
  wrong_attribute,       // an operator whose attribute is not of its op's table
  cycle,                 // the operators' inputs lead back to them
};

[[nodiscard]] constexpr std::string_view to_string(problem p) noexcept {
  constexpr std::string_view names[] = {
      "too_small",        "too_large",           "not_tosa",
      "verifier_failed",  "unsupported_version", "no_region",
      "several_regions",  "several_blocks",      "unnamed_tensor",
      "duplicate_tensor", "unknown_tensor",      "data_size",
      "bad_shape",        "external_data",       "produced_twice",
      "input_produced",   "duplicate_input",     "constant_with_inputs",
      "operand_count",    "wrong_attribute",     "cycle"};
  const auto i = static_cast<std::size_t>(p);
  return i < std::size(names) ? names[i] : std::string_view("unknown");
}

// A file qfold refuses to read: what rule it breaks (code) and where (what()).
class bad_file : public std::runtime_error {
 public:
  bad_file(problem code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] problem code() const noexcept { return code_; }

 private:
  problem code_;
};

struct version {
  std::int32_t major = 0, minor = 0, patch = 0;
  bool draft = false;
  [[nodiscard]] std::string text() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) +
           (draft ? " (draft)" : "");
  }
};

inline constexpr std::uint32_t no_op = 0xFFFFFFFFu;

// One tensor of the block, as the file has it (name and data point into the file's bytes).
struct tensor_info {
  const tosa::TosaTensor* fb = nullptr;
  std::string_view name;
  std::vector<std::int64_t> shape;  // the file's int32 dims, widened
  tosa::DType type = tosa::DType_UNKNOWN;
  std::span<const std::uint8_t> data;  // empty: none
  std::uint32_t producer = no_op;      // the operator whose output it is
};
// One operator, with its inputs and outputs as tensor indices.
struct op_info {
  const tosa::TosaOperator* fb = nullptr;
  tosa::Op code = tosa::Op_UNKNOWN;
  qfold::tosa::op op = qfold::tosa::op::other;  // TOSA 1.0's name, mapped (tosa_operands.hpp)
  std::vector<std::uint32_t> inputs, outputs;
};

// A checked `.tosa` file: views of the caller's bytes, which must outlive it.
struct model {
  std::span<const std::uint8_t> bytes;
  const tosa::TosaGraph* root = nullptr;
  const tosa::TosaRegion* region = nullptr;
  const tosa::TosaBasicBlock* block = nullptr;
  qfold_tosa_fb::version version;
  std::vector<tensor_info> tensors;
  std::vector<op_info> ops;
  std::vector<std::uint32_t> inputs, outputs;  // the block's, as tensor indices
  // Operators whose attribute type this schema does not know (a later TOSA version's): they are
  // read (as `other`), but a rewritten file could not carry their attribute.
  std::vector<std::uint32_t> unknown_attributes;

  // "op #3 (RESCALE -> 'x')": an operator named by its place, code and first output.
  [[nodiscard]] std::string op_label(std::uint32_t i) const {
    std::string s = "op #" + std::to_string(i);
    if (i >= ops.size()) return s;
    s += " (" + op_name(ops[i].code);
    if (!ops[i].outputs.empty()) s += " -> '" + std::string(tensors[ops[i].outputs[0]].name) + "'";
    return s + ")";
  }
};

namespace detail {
inline std::string_view view_of(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : std::string_view(s->c_str(), s->size());
}
inline std::string dims_string(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i != 0 ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
// The attribute table an op must carry (NONE: any is accepted).
constexpr tosa::Attribute required_attribute(tosa::Op o) noexcept {
  switch (o) {
    case tosa::Op_RESCALE:
      return tosa::Attribute_RescaleAttribute;
    case tosa::Op_CONV2D:
      return tosa::Attribute_Conv2dAttribute;
    case tosa::Op_DEPTHWISE_CONV2D:
      return tosa::Attribute_DepthwiseConv2dAttribute;
    case tosa::Op_CLAMP:
      return tosa::Attribute_ClampAttribute;
    case tosa::Op_TRANSPOSE:
      return tosa::Attribute_TransposeAttribute;
    default:
      return tosa::Attribute_NONE;
  }
}
}  // namespace detail

// Reads and checks `bytes`; throws bad_file. Allocation failures propagate as std::bad_alloc.
inline model read_model(std::span<const std::uint8_t> bytes) {
  using detail::view_of;
  model m;
  m.bytes = bytes;
  if (bytes.size() < 8)
    throw bad_file(problem::too_small, "the file has " + std::to_string(bytes.size()) +
                                           " bytes: too few for a flatbuffer (root offset and "
                                           "file identifier)");
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    throw bad_file(problem::too_large, "the file has " + std::to_string(bytes.size()) +
                                           " bytes: flatbuffers addresses less than 2 GiB");
  if (std::memcmp(bytes.data() + 4, file_identifier.data(), 4) != 0) {
    std::string id;
    for (std::size_t i = 4; i < 8; ++i) {
      const auto c = static_cast<char>(bytes[i]);
      id += c >= 0x20 && c < 0x7f ? std::string(1, c) : "\\x" + std::to_string(bytes[i]);
    }
    throw bad_file(problem::not_tosa,
                   "the file identifier is '" + id + "', not 'TOSA': not a TOSA flatbuffer");
  }
  {
    // max_tables bounds the verifier's work; a file cannot hold more tables than bytes / 4.
    const auto max_tables =
        static_cast<flatbuffers::uoffset_t>(std::max<std::size_t>(1000000, bytes.size() / 4));
    flatbuffers::Verifier v(bytes.data(), bytes.size(), 64, max_tables);
    if (!tosa::VerifyTosaGraphBuffer(v))
      throw bad_file(problem::verifier_failed,
                     "flatbuffers' verifier refused the file (an offset, size, alignment or "
                     "nesting depth outside the buffer or its limits)");
  }
  m.root = tosa::GetTosaGraph(bytes.data());
  const tosa::Version* ver = m.root->version();  // required: the verifier checked it is there
  if (ver == nullptr) throw bad_file(problem::verifier_failed, "the file has no version");
  m.version = {ver->_major(), ver->_minor(), ver->_patch(), ver->_draft()};
  if (m.version.major != supported_major)
    throw bad_file(problem::unsupported_version,
                   "TOSA version " + m.version.text() + ": qfold reads TOSA 1.x files (major 1)");
  const auto* regions = m.root->regions();
  if (regions == nullptr || regions->size() == 0)
    throw bad_file(problem::no_region, "the file has no region");
  if (regions->size() > 1)
    throw bad_file(problem::several_regions,
                   "the file has " + std::to_string(regions->size()) +
                       " regions: qfold folds files of one region with one block");
  m.region = regions->Get(0);
  const auto* blocks = m.region->blocks();
  if (blocks == nullptr || blocks->size() == 0)
    throw bad_file(problem::no_region,
                   "region '" + std::string(view_of(m.region->name())) + "' has no block");
  if (blocks->size() > 1)
    throw bad_file(problem::several_blocks,
                   "region '" + std::string(view_of(m.region->name())) + "' has " +
                       std::to_string(blocks->size()) +
                       " blocks: qfold folds files of one region with one block");
  m.block = blocks->Get(0);

  // Tensors: names, shapes, data.
  std::unordered_map<std::string_view, std::uint32_t> by_name;
  const auto* tensors = m.block->tensors();
  const std::uint32_t tensor_count = tensors == nullptr ? 0 : tensors->size();
  m.tensors.resize(tensor_count);
  by_name.reserve(tensor_count);
  for (std::uint32_t i = 0; i < tensor_count; ++i) {
    const tosa::TosaTensor* t = tensors->Get(i);
    tensor_info& info = m.tensors[i];
    info.fb = t;
    info.name = view_of(t->name());
    if (info.name.empty())
      throw bad_file(problem::unnamed_tensor, "tensor #" + std::to_string(i) + " has no name");
    if (!by_name.emplace(info.name, i).second)
      throw bad_file(problem::duplicate_tensor, "two tensors are named '" + std::string(info.name) +
                                                    "' (#" + std::to_string(by_name[info.name]) +
                                                    " and #" + std::to_string(i) + ")");
    if (const auto* shape = t->shape())
      for (const std::int32_t d : *shape) info.shape.push_back(d);
    info.type = t->type();
    const std::string label = "tensor '" + std::string(info.name) + "'";
    if (t->offset() != 0 || t->size() != 0)
      throw bad_file(problem::external_data,
                     label + " keeps its data outside the flatbuffer (offset " +
                         std::to_string(t->offset()) + ", size " + std::to_string(t->size()) +
                         "): files over 2 GB are not supported");
    if (const auto* data = t->data(); data != nullptr && data->size() != 0) {
      info.data = std::span<const std::uint8_t>(data->data(), data->size());
      if (storage_of(info.type).bytes == 0)
        throw bad_file(problem::data_size, label + " has data but type " + dtype_name(info.type) +
                                               ", whose storage qfold does not know");
      const auto count = element_count(info.shape);
      if (!count)
        throw bad_file(problem::bad_shape, label + " has data but dims " +
                                               detail::dims_string(info.shape) +
                                               " (a negative dim, or a product beyond 64 bits)");
      const auto expected = data_bytes(info.type, *count);
      if (!expected)
        throw bad_file(problem::bad_shape, label + ": " + std::to_string(*count) + " elements of " +
                                               dtype_name(info.type) +
                                               " take more bytes than 64 bits count");
      if (*expected != info.data.size())
        throw bad_file(problem::data_size,
                       label + ": dims " + detail::dims_string(info.shape) + " of " +
                           dtype_name(info.type) + " need " + std::to_string(*expected) +
                           " bytes, the data holds " + std::to_string(info.data.size()));
    }
  }
  const auto find = [&](const flatbuffers::String* s, const std::string& where) {
    const std::string_view n = view_of(s);
    const auto it = by_name.find(n);
    if (it == by_name.end())
      throw bad_file(problem::unknown_tensor,
                     where + " names '" + std::string(n) + "', which is no tensor of the block");
    return it->second;
  };

  // Operators.
  const auto* ops = m.block->operators();
  const std::uint32_t op_count = ops == nullptr ? 0 : ops->size();
  m.ops.resize(op_count);
  for (std::uint32_t k = 0; k < op_count; ++k) {
    const tosa::TosaOperator* o = ops->Get(k);
    op_info& info = m.ops[k];
    info.fb = o;
    info.code = o->op();
    info.op = qfold::tosa::op_named(op_name(info.code));
    const std::string label = "op #" + std::to_string(k) + " (" + op_name(info.code) + ")";
    if (const auto* in = o->inputs()) {
      info.inputs.reserve(in->size());
      for (std::uint32_t j = 0; j < in->size(); ++j)
        info.inputs.push_back(find(in->Get(j), label + " input " + std::to_string(j)));
    }
    if (const auto* out = o->outputs()) {
      info.outputs.reserve(out->size());
      for (std::uint32_t j = 0; j < out->size(); ++j) {
        const std::uint32_t t = find(out->Get(j), label + " output " + std::to_string(j));
        if (m.tensors[t].producer != no_op)
          throw bad_file(problem::produced_twice,
                         "tensor '" + std::string(m.tensors[t].name) + "' is the output of " +
                             m.op_label(m.tensors[t].producer) + " and of " + label);
        m.tensors[t].producer = k;
        info.outputs.push_back(t);
      }
    }
    if (o->attribute_type() > tosa::Attribute_MAX) m.unknown_attributes.push_back(k);
  }
  // The block's inputs and outputs.
  if (const auto* in = m.block->inputs())
    for (std::uint32_t j = 0; j < in->size(); ++j) {
      const std::uint32_t t = find(in->Get(j), "graph input " + std::to_string(j));
      if (m.tensors[t].producer != no_op)
        throw bad_file(problem::input_produced, "graph input '" + std::string(m.tensors[t].name) +
                                                    "' is the output of " +
                                                    m.op_label(m.tensors[t].producer));
      if (std::find(m.inputs.begin(), m.inputs.end(), t) != m.inputs.end())
        throw bad_file(problem::duplicate_input, "tensor '" + std::string(m.tensors[t].name) +
                                                     "' is listed twice as a graph input");
      m.inputs.push_back(t);
    }
  if (const auto* out = m.block->outputs())
    for (std::uint32_t j = 0; j < out->size(); ++j)
      m.outputs.push_back(find(out->Get(j), "graph output " + std::to_string(j)));

  // What qfold's mapping relies on: constants with their data, operand counts, attributes.
  for (std::uint32_t k = 0; k < op_count; ++k) {
    const op_info& o = m.ops[k];
    if (o.op == qfold::tosa::op::other) continue;
    if (o.op == qfold::tosa::op::const_ || o.op == qfold::tosa::op::const_shape) {
      if (!o.inputs.empty())
        throw bad_file(problem::constant_with_inputs, m.op_label(k) + " has " +
                                                          std::to_string(o.inputs.size()) +
                                                          " inputs: a constant has none");
      if (o.outputs.size() != 1)
        throw bad_file(problem::operand_count, m.op_label(k) + " has " +
                                                   std::to_string(o.outputs.size()) +
                                                   " outputs: a constant has one");
      const tensor_info& t = m.tensors[o.outputs[0]];
      const auto count = element_count(t.shape);
      if (!count || t.fb->is_unranked())
        throw bad_file(problem::bad_shape, "constant '" + std::string(t.name) + "' has dims " +
                                               detail::dims_string(t.shape) +
                                               (t.fb->is_unranked() ? " and is unranked" : "") +
                                               ": a constant's shape is known");
      if (t.data.empty() && *count != 0)
        throw bad_file(problem::data_size, "constant '" + std::string(t.name) + "' (dims " +
                                               detail::dims_string(t.shape) + " of " +
                                               dtype_name(t.type) + ") has no data");
      continue;
    }
    const auto layout = qfold::tosa::layout_of(o.op);
    if (o.inputs.size() != layout.count || o.outputs.size() != 1)
      throw bad_file(problem::operand_count,
                     m.op_label(k) + " has " + std::to_string(o.inputs.size()) + " inputs and " +
                         std::to_string(o.outputs.size()) + " outputs; TOSA 1.0 gives it " +
                         std::to_string(layout.count) + " inputs and 1 output");
    const tosa::Attribute need = detail::required_attribute(o.code);
    if (need != tosa::Attribute_NONE &&
        (o.fb->attribute_type() != need || o.fb->attribute() == nullptr))
      throw bad_file(problem::wrong_attribute,
                     m.op_label(k) + " carries attribute " +
                         std::string(o.fb->attribute() == nullptr
                                         ? "(none)"
                                         : tosa::EnumNameAttribute(o.fb->attribute_type())) +
                         ", not " + tosa::EnumNameAttribute(need));
  }

  // No cycle: Kahn's algorithm over the operators (edges producer -> reader).
  {
    std::vector<std::uint32_t> pending(op_count, 0), first(op_count + 1, 0), readers;
    for (std::uint32_t k = 0; k < op_count; ++k)
      for (const std::uint32_t t : m.ops[k].inputs)
        if (m.tensors[t].producer != no_op) {
          ++pending[k];
          ++first[m.tensors[t].producer + 1];
        }
    for (std::uint32_t k = 0; k < op_count; ++k) first[k + 1] += first[k];
    readers.resize(first[op_count]);
    {
      std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
      for (std::uint32_t k = 0; k < op_count; ++k)
        for (const std::uint32_t t : m.ops[k].inputs)
          if (const std::uint32_t p = m.tensors[t].producer; p != no_op) readers[fill[p]++] = k;
    }
    std::vector<std::uint32_t> ready;
    for (std::uint32_t k = 0; k < op_count; ++k)
      if (pending[k] == 0) ready.push_back(k);
    std::uint32_t done = 0;
    while (!ready.empty()) {
      const std::uint32_t k = ready.back();
      ready.pop_back();
      ++done;
      for (std::uint32_t r = first[k]; r < first[k + 1]; ++r)
        if (--pending[readers[r]] == 0) ready.push_back(readers[r]);
    }
    if (done != op_count) {
      // Walk back from a waiting op through waiting producers: the first op met twice is on a
      // cycle (every waiting op has a waiting producer).
      std::uint32_t k = 0;
      while (pending[k] == 0) ++k;
      std::vector<bool> seen(op_count, false);
      while (!seen[k]) {
        seen[k] = true;
        for (const std::uint32_t t : m.ops[k].inputs)
          if (const std::uint32_t p = m.tensors[t].producer; p != no_op && pending[p] != 0) {
            k = p;
            break;
          }
      }
      throw bad_file(problem::cycle,
                     m.op_label(k) + " reads, through its inputs, its own output (a cycle)");
    }
  }
  return m;
}

}  // namespace qfold_tosa_fb
