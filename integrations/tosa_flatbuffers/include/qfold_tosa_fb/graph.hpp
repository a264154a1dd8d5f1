// qfold's adapter over one checked `.tosa` file (qfold_tosa_fb::model): node ids are tensor
// indices, ops map onto qfold's vocabulary through qfold/graph/tosa_operands.hpp (the layout the
// MLIR TOSA 1.0 adapter shares), and every qfold::ir_traits point that adapter has is here with
// the same meaning. Tensor data is read in place from the file's bytes; mutations keep new data
// and names in the graph, and a graph brought back to what it read compares unchanged().
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <optional>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/graph/tosa_operands.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <qfold/quant/qparams.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/schema.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace qfold_tosa_fb {

static_assert(std::endian::native == std::endian::little,
              "qfold_tosa_fb reads the file's little-endian data in place");

namespace detail {

// The integer width of a TOSA element type qfold reads as integers (0: not one).
constexpr unsigned int_bits(tosa::DType t) noexcept {
  switch (t) {
    case tosa::DType_INT8:
      return 8;
    case tosa::DType_INT16:
      return 16;
    case tosa::DType_INT32:
      return 32;
    case tosa::DType_INT48:
      return 48;
    default:
      return 0;
  }
}
constexpr std::optional<qfold::dtype> dtype_of(tosa::DType t) noexcept {
  switch (t) {
    case tosa::DType_INT8:
      return qfold::dtype::int8;
    case tosa::DType_INT16:
      return qfold::dtype::int16;
    case tosa::DType_INT32:
      return qfold::dtype::int32;
    default:
      return std::nullopt;
  }
}
// TOSA 1.0 has no unsigned types: uint8 / uint16 values are stored in INT8 / INT16.
constexpr tosa::DType storage_type_of(qfold::dtype d) {
  switch (d) {
    case qfold::dtype::int8:
    case qfold::dtype::uint8:
      return tosa::DType_INT8;
    case qfold::dtype::int16:
    case qfold::dtype::uint16:
      return tosa::DType_INT16;
    case qfold::dtype::int32:
      return tosa::DType_INT32;
  }
  throw std::invalid_argument("qfold_tosa_fb: a dtype outside the enum");
}
// RESCALE's element types: i8/i16/i32/i48 in, i8/i16/i32 out (an unsigned side is flagged).
constexpr std::optional<qfold::int_type> rescale_type_of(tosa::DType t, bool input) noexcept {
  switch (t) {
    case tosa::DType_INT8:
      return qfold::int_type::i8;
    case tosa::DType_INT16:
      return qfold::int_type::i16;
    case tosa::DType_INT32:
      return qfold::int_type::i32;
    case tosa::DType_INT48:
      if (input) return qfold::int_type::i48;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}
constexpr tosa::DType type_of(qfold::int_type t) noexcept {
  switch (t) {
    case qfold::int_type::i8:
      return tosa::DType_INT8;
    case qfold::int_type::i16:
      return tosa::DType_INT16;
    case qfold::int_type::i32:
      return tosa::DType_INT32;
    case qfold::int_type::i48:
      return tosa::DType_INT48;
  }
  return tosa::DType_UNKNOWN;
}

// One little-endian element of `bytes` bytes (1, 2, 4, 6 or 8), sign-extended.
struct element_reader {
  const std::uint8_t* raw = nullptr;
  std::size_t bytes = 1;
  std::int64_t operator()(std::size_t i) const noexcept {
    std::uint64_t u = 0;
    std::memcpy(&u, raw + i * bytes, bytes);  // little-endian host (static_assert above)
    if (bytes >= 8) return static_cast<std::int64_t>(u);
    const auto bits = static_cast<unsigned>(8 * bytes);
    const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
    return static_cast<std::int64_t>(u ^ sign) - static_cast<std::int64_t>(sign);
  }
};
// A tensor's elements as int64, read in place: a forward range with size() and operator[].
class element_range {
 public:
  class iterator {
   public:
    using value_type = std::int64_t;
    using difference_type = std::ptrdiff_t;
    using iterator_concept = std::forward_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // elements are values, not references
    iterator() = default;
    iterator(element_reader r, std::size_t i) noexcept : r_(r), i_(i) {}
    std::int64_t operator*() const noexcept { return r_(i_); }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }

   private:
    element_reader r_{};
    std::size_t i_ = 0;
  };
  element_range() = default;
  element_range(element_reader r, std::size_t count) noexcept : r_(r), count_(count) {}
  [[nodiscard]] iterator begin() const noexcept { return {r_, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {r_, count_}; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] std::int64_t operator[](std::size_t i) const noexcept { return r_(i); }

 private:
  element_reader r_{};
  std::size_t count_ = 0;
};
static_assert(std::forward_iterator<element_range::iterator>);

// An integer constant's values and dims.
struct int_tensor {
  element_range data;
  std::span<const std::int64_t> shape;
};

// A parameter operand: a constant (its integers), computed at run time, or a constant qfold
// cannot read as integers (bad input).
struct parameter {
  enum class state : std::uint8_t { constant, computed, unreadable } is = state::computed;
  std::optional<int_tensor> values;
  tosa::DType type = tosa::DType_UNKNOWN;
};
// A one-element zero point as the spec means it (an unsigned side's value from its signed
// storage), or nullopt when it is not one integer.
inline std::optional<std::int64_t> zero_point_of(const parameter& p, bool is_unsigned) {
  if (p.is != parameter::state::constant || p.values->data.size() != 1) return std::nullopt;
  return qfold::tosa::zero_point_value(p.values->data[0], std::min(int_bits(p.type), 32U),
                                       is_unsigned);
}

inline const char* operand_name(qfold::tosa::op o, std::size_t i) {
  using qfold::tosa::op;
  switch (o) {
    case op::rescale: {
      constexpr const char* n[] = {"input", "multiplier", "shift", "input_zp", "output_zp"};
      return i < 5 ? n[i] : "operand";
    }
    case op::mul:
      return i == 2 ? "shift" : "input";
    case op::table:
      return i == 1 ? "table" : "input";
    case op::conv2d:
    case op::depthwise_conv2d: {
      constexpr const char* n[] = {"input", "weight", "bias", "input_zp", "weight_zp"};
      return i < 5 ? n[i] : "operand";
    }
    case op::matmul: {
      constexpr const char* n[] = {"a", "b", "a_zp", "b_zp"};
      return i < 4 ? n[i] : "operand";
    }
    case op::reshape:
      return i == 1 ? "shape" : "input";
    case op::slice:
      return i == 1 ? "start" : i == 2 ? "size" : "input";
    default:
      return "operand";
  }
}

}  // namespace detail

// A RESCALE's attributes and its multiplier / shift constants, read in place.
struct rescale_info {
  qfold::rescale_attributes attributes;
  detail::element_range multipliers, shifts;
};

// One `.tosa` file's block seen by qfold. The model (and the bytes it views) must outlive the
// graph. Reads hand out views valid until the next mutation.
class graph {
 public:
  using node_id = std::uint32_t;  // a tensor index (the file's order; new tensors after)
  static constexpr node_id no_node = 0xFFFFFFFFu;

  explicit graph(const model& m) : m_(&m) {
    const auto n = static_cast<std::uint32_t>(m.tensors.size());
    for (std::uint32_t i = 0; i < n; ++i) {
      const tensor_info& t = m.tensors[i];
      tensor_state s;
      s.name = t.name;
      s.shape = t.shape;
      s.type = t.type;
      s.data = t.data;
      s.producer = t.producer;
      s.order = i;
      tensors_.push_back(std::move(s));
      if (t.name.starts_with("qfold_")) reserved_.insert(t.name);
    }
    for (const op_info& o : m.ops) {
      op_state s;
      s.fb = o.fb;
      s.code = o.code;
      s.op = o.op;
      s.inputs = o.inputs;
      s.outputs = o.outputs;
      ops_.push_back(std::move(s));
    }
    for (std::uint32_t k = 0; k < ops_.size(); ++k)
      for (std::uint32_t j = 0; j < ops_[k].inputs.size(); ++j)
        tensors_[ops_[k].inputs[j]].readers.push_back({k, j});
    for (const std::uint32_t t : m.inputs) tensors_[t].input = true;
    outputs_ = m.outputs;
    compute_depths();
    for (const std::uint32_t t : outputs_) ++tensors_[t].output_refs;
  }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;

  [[nodiscard]] const model& source() const noexcept { return *m_; }

  // --- What the graph is now (for the writer and reports) --------------------------------------
  [[nodiscard]] std::size_t tensor_count() const noexcept { return tensors_.size(); }
  [[nodiscard]] std::size_t op_count() const noexcept { return ops_.size(); }
  [[nodiscard]] bool alive(node_id n) const { return tensor(n).alive; }
  [[nodiscard]] std::string_view tensor_name(node_id n) const { return tensor(n).name; }
  [[nodiscard]] tosa::DType tensor_type(node_id n) const { return tensor(n).type; }
  [[nodiscard]] std::span<const std::uint8_t> tensor_data(node_id n) const {
    return tensor(n).data;
  }
  // The file's own tensor index of n, or nullopt for a tensor qfold made.
  [[nodiscard]] std::optional<std::uint32_t> original_index(node_id n) const {
    if (n < m_->tensors.size()) return n;
    return std::nullopt;
  }
  // The op that produces n (no_op: none).
  [[nodiscard]] std::uint32_t producer(node_id n) const { return tensor(n).producer; }
  [[nodiscard]] const std::vector<std::uint32_t>& graph_outputs() const noexcept {
    return outputs_;
  }

  // A readable name: "RESCALE:'name'" (the producing op and the tensor), "input:'name'". An
  // erased node keeps its name (a report may name nodes its pass erased).
  [[nodiscard]] std::string name(node_id n) const {
    const tensor_state& t = tensor(n);
    std::string s = t.producer == no_op ? std::string(t.input ? "input" : "tensor")
                                        : op_name(ops_[t.producer].code);
    return s + ":'" + std::string(t.name) + "'";
  }

  // Why the block is bad input for qfold, one message per op; empty when it is fine. Ops qfold
  // does not map are fine (they are `other`).
  [[nodiscard]] std::vector<std::string> problems() const {
    std::vector<std::string> r;
    for (std::uint32_t k = 0; k < ops_.size(); ++k) {
      if (!ops_[k].alive) continue;
      const auto i = inspect(k);
      if (!i.problem.empty()) r.push_back(label(k) + ": " + i.problem);
    }
    return r;
  }
  // The parameter operands TOSA 1.0 requires to be compile-time constants (tosa_operands.hpp)
  // that no CONST / CONST_SHAPE produces, one message each. The folds refuse such sites
  // (not_constant); Vela crashes on them, so qfold-tosa refuses the file.
  [[nodiscard]] std::vector<std::string> non_constant_parameters() const {
    std::vector<std::string> r;
    for (std::uint32_t k = 0; k < ops_.size(); ++k) {
      const op_state& o = ops_[k];
      if (!o.alive || o.op == qfold::tosa::op::other) continue;
      const auto layout = qfold::tosa::layout_of(o.op);
      for (std::size_t i = 0; i < o.inputs.size(); ++i)
        if (layout.must_be_constant(i) && !is_constant_tensor(o.inputs[i]))
          r.push_back(label(k) + ": its " + detail::operand_name(o.op, i) + " '" +
                      std::string(tensors_[o.inputs[i]].name) +
                      "' is not produced by a CONST (TOSA 1.0 requires a compile-time constant)");
    }
    return r;
  }

  // Whether anything differs from the file: false after a pass that folded nothing or rolled
  // back (the file can then be written back as it was, byte for byte).
  [[nodiscard]] bool changed() const {
    const std::size_t nt = m_->tensors.size(), no = m_->ops.size();
    for (std::size_t i = nt; i < tensors_.size(); ++i)
      if (tensors_[i].alive) return true;
    for (std::size_t k = no; k < ops_.size(); ++k)
      if (ops_[k].alive) return true;
    for (std::size_t i = 0; i < nt; ++i) {
      const tensor_state& t = tensors_[i];
      const tensor_info& f = m_->tensors[i];
      if (!t.alive || t.name.data() != f.name.data() || t.name.size() != f.name.size() ||
          t.data.data() != f.data.data() || t.data.size() != f.data.size())
        return true;
    }
    for (std::size_t k = 0; k < no; ++k)
      if (!ops_[k].alive || ops_[k].inputs != m_->ops[k].inputs) return true;
    return outputs_ != m_->outputs;
  }

  // The ops in the order a file lists them: the file's ops in their order, each op qfold made
  // just before the first op that reads it (its own new producers before it), the rest last.
  [[nodiscard]] std::vector<std::uint32_t> op_order() const {
    std::vector<std::uint32_t> r;
    r.reserve(ops_.size());
    std::vector<char> placed(ops_.size(), 0);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;  // (op, next input)
    const auto place_new = [&](std::uint32_t root) {
      stack.assign(1, {root, 0});
      while (!stack.empty()) {
        auto& [k, next] = stack.back();
        const op_state& o = ops_[k];
        if (next < o.inputs.size()) {
          const std::uint32_t p = tensors_[o.inputs[next++]].producer;
          if (p != no_op && p >= m_->ops.size() && ops_[p].alive && !placed[p]) {
            placed[p] = 1;  // marked on the way down: a cycle cannot loop here
            stack.emplace_back(p, 0);
          }
          continue;
        }
        r.push_back(k);
        stack.pop_back();
      }
    };
    // The file's ops come first in ops_, so a new op read by one of them is placed (with its
    // own new producers) just before the first such reader; the rest follow in creation order.
    for (std::uint32_t k = 0; k < ops_.size(); ++k) {
      if (!ops_[k].alive || placed[k]) continue;
      placed[k] = 1;
      place_new(k);
    }
    return r;
  }

  // --- Structure ------------------------------------------------------------------------------
  // Every live tensor: the ones no op produces first, then each op's outputs in op_order().
  [[nodiscard]] std::vector<node_id> nodes() const {
    std::vector<node_id> r;
    r.reserve(tensors_.size());
    for (node_id i = 0; i < tensors_.size(); ++i)
      if (tensors_[i].alive && tensors_[i].producer == no_op) r.push_back(i);
    for (const std::uint32_t k : op_order())
      for (const std::uint32_t t : ops_[k].outputs)
        if (tensors_[t].alive) r.push_back(t);
    return r;
  }
  [[nodiscard]] qfold::op_kind kind(node_id n) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op) return qfold::op_kind::input;
    const op_state& o = ops_[t.producer];
    if (o.kind_known) return o.kind;
    o.kind = o.outputs.size() == 1 ? inspect(t.producer).kind : qfold::op_kind::other;
    o.kind_known = true;  // until the op's inputs (or a private zero point's bytes) change
    return o.kind;
  }
  // The operands qfold sees: TOSA 1.0's visible prefix; all inputs of an op qfold does not map.
  [[nodiscard]] std::span<const node_id> operands(node_id n) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op) return {};
    const op_state& o = ops_[t.producer];
    return std::span<const node_id>(o.inputs.data(), visible(o));
  }
  [[nodiscard]] std::size_t use_count(node_id n) const {
    const tensor_state& t = tensor(n);
    return t.readers.size() + t.output_refs;
  }

  // --- Constants and attributes ----------------------------------------------------------------
  [[nodiscard]] std::optional<qfold::tensor_view<float>> constant(node_id n) const {
    if (!is_constant_tensor(n)) return std::nullopt;
    const tensor_state& t = tensor(n);
    if (t.type != tosa::DType_FP32) return std::nullopt;
    const auto count = element_count(t.shape);
    if (!count || *count * 4 != t.data.size()) return std::nullopt;
    const auto size = static_cast<std::size_t>(*count);
    if (reinterpret_cast<std::uintptr_t>(t.data.data()) % alignof(float) == 0)
      return qfold::tensor_view<float>{
          std::span<const float>(reinterpret_cast<const float*>(t.data.data()), size), t.shape};
    auto& copy = float_copies_.emplace_back(size);  // misaligned data (a hand-made file)
    std::memcpy(copy.data(), t.data.data(), t.data.size());
    return qfold::tensor_view<float>{copy, t.shape};
  }
  [[nodiscard]] std::optional<detail::int_tensor> int_constant(node_id n) const {
    if (!is_constant_tensor(n) || ops_[tensor(n).producer].op != qfold::tosa::op::const_)
      return std::nullopt;
    return int_values(n);
  }
  [[nodiscard]] std::span<const std::int64_t> output_shape(node_id n) const {
    return tensor(n).shape;
  }
  [[nodiscard]] std::optional<qfold::dtype> element_type(node_id n) const {
    return detail::dtype_of(tensor(n).type);
  }
  // Throws qfold::parameter_not_constant when a parameter is computed at run time.
  [[nodiscard]] rescale_info rescale(node_id n) const {
    rescale_info r;
    const tensor_state& t = tensor(n);
    if (t.producer == no_op || ops_[t.producer].op != qfold::tosa::op::rescale) return r;
    const auto read = read_rescale(t.producer);
    if (read.computed) not_constant(t.producer, *read.computed);
    r.attributes = read.attributes;
    r.multipliers = read.multipliers;
    r.shifts = read.shifts;
    return r;
  }
  // The MUL's shift (-1: not one value in 0..63, refused by the folds); throws
  // qfold::parameter_not_constant when it is computed at run time.
  [[nodiscard]] int mul_shift(node_id n) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op || ops_[t.producer].op != qfold::tosa::op::mul) return 0;
    const auto p = read_parameter(t.producer, qfold::tosa::mul_operand::shift);
    if (p.is == detail::parameter::state::computed)
      not_constant(t.producer, qfold::tosa::mul_operand::shift);
    if (p.is != detail::parameter::state::constant || p.values->data.size() != 1) return -1;
    const std::int64_t s = p.values->data[0];
    return s >= 0 && s <= 63 ? static_cast<int>(s) : -1;
  }
  [[nodiscard]] qfold::clamp_attributes clamp_attributes(node_id n) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op || ops_[t.producer].op != qfold::tosa::op::clamp) return {};
    const auto b = clamp_bounds(t.producer);
    if (!b) return {1, 0};  // refused (inspect names it bad input)
    return *b;
  }
  // TOSA tensors carry no quantization parameters: zero points are RESCALE's and CONV's own.
  [[nodiscard]] std::optional<qfold::qparams> qparams(node_id) const { return std::nullopt; }
  [[nodiscard]] bool qparams_shared(node_id) const { return false; }

  [[nodiscard]] qfold::conv_attributes conv_attributes(node_id n) const {
    qfold::conv_attributes a;
    a.input_channel_axis = 3;  // NHWC
    const tensor_state& t = tensor(n);
    if (t.producer == no_op) return a;
    const op_state& o = ops_[t.producer];
    const auto padded = [](const flatbuffers::Vector<std::int32_t>* pad) {
      return pad != nullptr &&
             std::any_of(pad->begin(), pad->end(), [](std::int32_t p) { return p != 0; });
    };
    if (o.op == qfold::tosa::op::conv2d) {
      a.layout = qfold::weight_layout::o_s_i;  // OHWI
      const auto* c = o.fb != nullptr ? o.fb->attribute_as_Conv2dAttribute() : nullptr;
      a.padded = c == nullptr || padded(c->pad());  // unknown padding counts as padded
    } else if (o.op == qfold::tosa::op::depthwise_conv2d) {
      a.layout = qfold::weight_layout::s_c_m;  // HWCM: one group per input channel
      const auto* d = o.fb != nullptr ? o.fb->attribute_as_DepthwiseConv2dAttribute() : nullptr;
      a.padded = d == nullptr || padded(d->pad());
      const auto& w = tensors_[o.inputs[qfold::tosa::conv_operand::weight]].shape;
      a.groups = w.size() == 4 && w[2] > 0 ? w[2] : 0;
    } else if (o.op == qfold::tosa::op::matmul) {
      a.layout = qfold::weight_layout::s_i_o;  // b [1, in, out]
      a.input_channel_axis = 2;                // a [N, H, in]
    }
    return a;
  }
  // The zero points of a convolution or linear MATMUL; throws qfold::parameter_not_constant when
  // one is computed at run time.
  [[nodiscard]] std::optional<qfold::quantized_conv_attributes> quantized_conv(node_id n) const {
    namespace t = qfold::tosa;
    const auto k = kind(n);
    if (k != qfold::op_kind::convolution && k != qfold::op_kind::linear) return std::nullopt;
    const std::uint32_t op = tensor(n).producer;
    const bool matmul = k == qfold::op_kind::linear;
    const std::size_t in_i = matmul ? t::matmul_operand::a_zp : t::conv_operand::input_zp,
                      w_i = matmul ? t::matmul_operand::b_zp : t::conv_operand::weight_zp;
    const auto in = read_parameter(op, in_i), w = read_parameter(op, w_i);
    if (in.is == detail::parameter::state::computed) not_constant(op, in_i);
    if (w.is == detail::parameter::state::computed) not_constant(op, w_i);
    const auto in_zp = detail::zero_point_of(in, false), w_zp = detail::zero_point_of(w, false);
    if (!in_zp || !w_zp) return std::nullopt;
    ops_[op].weight_zero_point = *w_zp;
    return qfold::quantized_conv_attributes{
        *in_zp, std::span<const std::int64_t>(&ops_[op].weight_zero_point, 1), qfold::dtype::int8};
  }
  // Where layout view n puts its input's axis a, unchanged in size and order.
  [[nodiscard]] std::optional<std::int64_t> view_axis(node_id n, std::int64_t a) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op) return std::nullopt;
    const op_state& o = ops_[t.producer];
    if (o.inputs.empty()) return std::nullopt;
    const auto& in = tensors_[o.inputs[0]].shape;
    const auto& out = t.shape;
    const auto rank_in = static_cast<std::int64_t>(in.size());
    if (a < 0 || a >= rank_in || !element_count(in) || !element_count(out)) return std::nullopt;
    const auto ia = static_cast<std::size_t>(a);
    if (o.op == qfold::tosa::op::transpose) {
      const auto* attr = o.fb != nullptr ? o.fb->attribute_as_TransposeAttribute() : nullptr;
      const auto* perms = attr != nullptr ? attr->perms() : nullptr;
      if (perms == nullptr || perms->size() != out.size()) return std::nullopt;
      std::optional<std::int64_t> r;
      std::vector<bool> seen(perms->size(), false);
      for (std::uint32_t b = 0; b < perms->size(); ++b) {
        const std::int32_t p = perms->Get(b);
        if (p < 0 || p >= rank_in || seen[static_cast<std::size_t>(p)]) return std::nullopt;
        seen[static_cast<std::size_t>(p)] = true;
        if (p == a) r = static_cast<std::int64_t>(b);
      }
      return r;
    }
    if (o.op == qfold::tosa::op::slice) {
      const auto start = shape_values(o.inputs[qfold::tosa::shape_operand::start]),
                 size = shape_values(o.inputs[qfold::tosa::shape_operand::size]);
      if (!start || !size || start->size() != in.size() || size->size() != in.size())
        return std::nullopt;
      if ((*start)[ia] == 0 && (*size)[ia] == in[ia]) return a;
      return std::nullopt;
    }
    if (o.op == qfold::tosa::op::reshape) {
      // Same size and the same stride (product of the dims after it): the same coordinate.
      const auto stride = [](std::span<const std::int64_t> shape, std::size_t i) {
        return element_count(shape.subspan(i + 1));
      };
      const auto in_stride = stride(in, ia);
      if (!in_stride) return std::nullopt;
      for (std::size_t b = 0; b < out.size(); ++b)
        if (out[b] == in[ia] && stride(out, b) == in_stride) return static_cast<std::int64_t>(b);
      return std::nullopt;
    }
    return std::nullopt;
  }
  [[nodiscard]] std::size_t constant_bytes(node_id n) const {
    return is_constant_tensor(n) ? tensor(n).data.size() : 0;
  }

  // --- Mutation: each point checks and allocates first, then changes the graph with steps that
  // cannot fail, so it does all it says or throws having changed nothing.
  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    check_shape(data.size(), shape);
    std::vector<std::uint8_t> bytes(data.size() * sizeof(float));
    if (!bytes.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    maker mk(*this);
    const node_id t = mk.constant(tosa::DType_FP32, shape, std::move(bytes));
    mk.done();
    return t;
  }
  node_id add_int_constant(std::span<const std::int64_t> data, std::span<const std::int64_t> shape,
                           qfold::dtype d) {
    if (!qfold::is_valid(d)) throw std::invalid_argument("qfold_tosa_fb: a dtype outside the enum");
    check_shape(data.size(), shape);
    const qfold::dtype_range range = qfold::range_of(d);
    const tosa::DType type = detail::storage_type_of(d);
    for (const std::int64_t x : data)
      if (x < range.lo || x > range.hi)
        throw std::invalid_argument("qfold_tosa_fb: a value outside the constant's type");
    maker mk(*this);
    const node_id t = mk.constant(type, shape, encode(type, data));
    mk.done();
    return t;
  }
  // A new TABLE on `input` with a CONST of its own: 256 int8 entries (INT8 in and out) or 513
  // int16 entries (INT16 in, INT32 out).
  node_id add_table(node_id input, std::span<const std::int8_t> values) {
    return make_table(input, values, tosa::DType_INT8, tosa::DType_INT8, 256);
  }
  node_id add_table(node_id input, std::span<const std::int16_t> values) {
    return make_table(input, values, tosa::DType_INT16, tosa::DType_INT32, 513);
  }
  // A new RESCALE of `input` in TOSA 1.0's form: attributes and scales as TOSA's (one, or one
  // per channel of the last axis with per_channel), checked with qfold::validate; its multiplier,
  // shift and zero points are new CONSTs (an unsigned side's zero point stored signed).
  node_id add_rescale(node_id input, const qfold::rescale_attributes& a,
                      std::span<const qfold::scale_factor> scales) {
    input = resolve(input);
    const tensor_state& in = live(input);
    const auto it = detail::rescale_type_of(in.type, true);
    if (!it || *it != a.input_type)
      throw std::invalid_argument(
          "qfold_tosa_fb: add_rescale: the input's type is not the attributes' input type");
    std::size_t channels = 1;
    if (a.per_channel) {
      if (in.shape.empty() || in.shape.back() < 0)
        throw std::invalid_argument(
            "qfold_tosa_fb: add_rescale: per_channel needs a known last dimension");
      channels = static_cast<std::size_t>(in.shape.back());
    }
    if (const auto ok = qfold::validate(a, scales, channels); !ok)
      throw std::invalid_argument("qfold_tosa_fb: add_rescale: " + std::string(ok.error().message));
    const tosa::DType out_type = detail::type_of(a.output_type);
    const unsigned in_bits = detail::int_bits(in.type);
    const auto out_bits = static_cast<unsigned>(qfold::bit_width(a.output_type));
    const auto in_zp =
        qfold::tosa::zero_point_stored(a.input_zp, std::min(in_bits, 32U), a.input_unsigned);
    const auto out_zp = qfold::tosa::zero_point_stored(a.output_zp, out_bits, a.output_unsigned);
    if (!in_zp || !out_zp)
      throw std::invalid_argument("qfold_tosa_fb: add_rescale: a zero point outside its type");
    std::vector<std::int64_t> m, s;
    m.reserve(scales.size());
    s.reserve(scales.size());
    for (const auto& f : scales) {
      m.push_back(f.multiplier);
      s.push_back(f.shift);
    }
    const std::int64_t n = static_cast<std::int64_t>(scales.size()), one = 1;
    const std::int64_t izp[1] = {*in_zp}, ozp[1] = {*out_zp};
    const tosa::DType mul_type = a.scale32 ? tosa::DType_INT32 : tosa::DType_INT16;
    tosa::RoundingMode rounding = tosa::RoundingMode_SINGLE_ROUND;
    if (a.rounding == qfold::rounding_mode::double_round)
      rounding = tosa::RoundingMode_DOUBLE_ROUND;
    if (a.rounding == qfold::rounding_mode::inexact_round)
      rounding = tosa::RoundingMode_INEXACT_ROUND;
    maker mk(*this);
    const node_id params[4] = {
        mk.constant(mul_type, std::span(&n, 1), encode(mul_type, m)),
        mk.constant(tosa::DType_INT8, std::span(&n, 1), encode(tosa::DType_INT8, s)),
        mk.constant(in.type, std::span(&one, 1), encode(in.type, izp)),
        mk.constant(out_type, std::span(&one, 1), encode(out_type, ozp))};
    const node_id out = mk.tensor(out_type, in.shape, {});
    op_state o;
    o.code = tosa::Op_RESCALE;
    o.op = qfold::tosa::op::rescale;
    o.inputs = {input, params[0], params[1], params[2], params[3]};
    o.outputs = {out};
    o.rescale = {a.scale32, rounding, a.per_channel, a.input_unsigned, a.output_unsigned};
    o.location = location_for(input);
    mk.op(std::move(o));
    mk.done();
    return out;
  }

  void set_operand(node_id n, std::size_t i, node_id v) {
    const tensor_state& t = live(n);
    if (t.producer == no_op) throw std::logic_error("qfold_tosa_fb: set_operand on an input");
    const std::uint32_t k = t.producer;
    op_state& o = ops_[k];
    if (i >= visible(o))
      throw std::logic_error("qfold_tosa_fb: TOSA ops have a fixed operand count (no append)");
    const node_id old = o.inputs[i];
    v = resolve(v);
    live(v);
    if (old == v) return;
    same_type(old, v, "set_operand");
    const auto raises = new_edges(v, std::span<const std::uint32_t>(&k, 1), "set_operand");
    reserve_readers(v, 1);
    // From here on nothing throws.
    changed_now();
    drop_reader(old, k, static_cast<std::uint32_t>(i));
    o.inputs[i] = v;
    o.kind_known = false;
    tensors_[v].readers.push_back({k, static_cast<std::uint32_t>(i)});
    for (const auto& [op, depth] : raises) ops_[op].depth = depth;
  }
  [[noreturn]] void remove_last_operand(node_id) {
    throw std::logic_error("qfold_tosa_fb: TOSA ops have a fixed operand count");
  }
  // Every reader of old (graph outputs included) reads v instead; an erased old is resolved to v
  // from then on where a mutation point takes an input (v computes what old computed).
  void replace_uses(node_id old, node_id v) {
    live(old);
    v = resolve(v);
    live(v);
    if (old == v) return;
    same_type(old, v, "replace_uses");
    std::vector<std::uint32_t> readers;
    readers.reserve(tensors_[old].readers.size());
    for (const reader& r : tensors_[old].readers) readers.push_back(r.op);
    const auto raises = new_edges(v, readers, "replace_uses");
    reserve_readers(v, tensors_[old].readers.size());
    // From here on nothing throws.
    changed_now();
    tensor_state& from = tensors_[old];
    tensor_state& to = tensors_[v];
    for (const reader& r : from.readers) {
      ops_[r.op].inputs[r.slot] = v;
      ops_[r.op].kind_known = false;
      to.readers.push_back(r);
    }
    from.readers.clear();
    for (std::uint32_t& o : outputs_)
      if (o == old) o = v;
    to.output_refs += from.output_refs;
    from.output_refs = 0;
    from.replaced_by = v;
    for (const auto& [op, depth] : raises) ops_[op].depth = depth;
  }
  // Erases n's op when nothing reads any of its outputs (a graph input is never erased), and
  // with it the hidden parameter constants (tosa_operands.hpp) it leaves without readers. Their
  // data stays readable: qfold may still look at a node it erased.
  void erase(node_id n) noexcept {
    if (n >= tensors_.size()) return;
    tensor_state& t = tensors_[n];
    if (!t.alive || t.input || use_count(n) != 0) return;
    if (t.producer == no_op) {
      changed_now();
      t.alive = false;
      return;
    }
    const std::uint32_t k = t.producer;
    op_state& o = ops_[k];
    for (const std::uint32_t out : o.outputs)
      if (use_count(out) != 0) return;
    changed_now();
    o.alive = false;
    for (const std::uint32_t out : o.outputs) tensors_[out].alive = false;
    const std::size_t shown = visible(o);
    for (std::uint32_t j = 0; j < o.inputs.size(); ++j) drop_reader(o.inputs[j], k, j);
    for (std::size_t j = shown; j < o.inputs.size(); ++j) {
      const node_id p = o.inputs[j];
      if (use_count(p) == 0 && is_constant_tensor(p)) erase(p);
    }
  }
  [[noreturn]] void set_qparams(node_id, const qfold::qparams&) {
    throw std::logic_error("qfold_tosa_fb: TOSA tensors carry no qparams");
  }
  // Sets a convolution's input zero point: in place when the zero-point constant has no other
  // reader, else through a CONST of its own; setting it back to what it was reads the original
  // constant (and its original bytes) again, so a rollback leaves the graph unchanged().
  void set_conv_input_zero_point(node_id n, std::int64_t zp) {
    namespace tn = qfold::tosa;
    const auto k = kind(n);
    if (k != qfold::op_kind::convolution && k != qfold::op_kind::linear)
      throw std::logic_error("qfold_tosa_fb: set_conv_input_zero_point on a non-integer conv");
    if (zp < -128 || zp > 127)
      throw std::invalid_argument("qfold_tosa_fb: an input zero point outside int8");
    const std::uint32_t op = tensor(n).producer;
    const auto index = static_cast<std::uint32_t>(
        k == qfold::op_kind::linear ? tn::matmul_operand::a_zp : tn::conv_operand::input_zp);
    const node_id current = ops_[op].inputs[index];
    if (!is_constant_tensor(current)) not_constant(op, index);
    const tosa::DType type = tensors_[current].type;
    if (detail::int_bits(type) == 0)
      throw std::invalid_argument("qfold_tosa_fb: the input zero point is not an integer");
    const auto now = int_values(current);
    if (now && now->data.size() == 1 && now->data[0] == zp) return;  // already that value
    const std::int64_t value[1] = {zp};
    if (const auto it = original_zero_points_.find(op); it != original_zero_points_.end()) {
      const node_id original = it->second;
      const auto was = int_values(original);
      if (was && was->data.size() == 1 && was->data[0] == zp && tensors_[original].alive) {
        reserve_readers(original, 1);
        changed_now();
        original_zero_points_.erase(it);
        drop_reader(current, op, index);
        ops_[op].inputs[index] = original;
        ops_[op].kind_known = false;
        tensors_[original].readers.push_back({op, index});
        if (use_count(current) == 0) erase(current);
        return;
      }
    }
    if (use_count(current) == 1) {
      // Its only reader: the bytes change in place (the file's own bytes when zp is what the
      // file holds).
      if (current < m_->tensors.size()) {
        const tensor_info& f = m_->tensors[current];
        const auto held = f.data.size() == storage_of(type).bytes
                              ? std::optional<std::int64_t>(
                                    detail::element_reader{f.data.data(), f.data.size()}(0))
                              : std::nullopt;
        if (held == zp) {
          changed_now();
          tensors_[current].data = f.data;
          ops_[op].kind_known = false;
          return;
        }
      }
      auto& bytes = storage_.emplace_back(encode(type, value));
      changed_now();
      tensors_[current].data = bytes;
      ops_[op].kind_known = false;
      return;
    }
    maker mk(*this);
    const node_id own = mk.constant(type, tensors_[current].shape, encode(type, value));
    reserve_readers(own, 1);
    original_zero_points_.reserve(original_zero_points_.size() + 1);
    mk.done();
    // From here on nothing throws (the map has room: emplace allocates its node, though).
    try {
      original_zero_points_.emplace(op, current);
    } catch (...) {
      mk.undo();
      throw;
    }
    changed_now();
    drop_reader(current, op, index);
    ops_[op].inputs[index] = own;
    ops_[op].kind_known = false;
    tensors_[own].readers.push_back({op, index});
  }
  // After old was erased, v (a tensor qfold made) takes its name and its place in the file's
  // tensor list, so that a graph output or a tensor someone looks for by name keeps its name.
  node_id take_name(node_id old, node_id v) noexcept {
    if (old >= tensors_.size() || v >= tensors_.size() || old == v) return v;
    tensor_state& o = tensors_[old];
    tensor_state& t = tensors_[v];
    if (o.alive || !t.alive || v < m_->tensors.size()) return v;
    changed_now();
    t.name = o.name;
    t.order = o.order;
    return v;
  }

 private:
  struct reader {
    std::uint32_t op = 0, slot = 0;
  };
  struct tensor_state {
    std::string_view name;
    std::span<const std::int64_t> shape;
    tosa::DType type = tosa::DType_UNKNOWN;
    std::span<const std::uint8_t> data;
    std::uint32_t producer = no_op;
    std::vector<reader> readers;
    std::uint32_t output_refs = 0;
    std::uint64_t order = 0;  // place in the written tensor list
    bool alive = true, input = false;
    node_id replaced_by = no_node;  // replace_uses(this, replaced_by) ran
  };

 public:
  // A new op's RESCALE attribute (the file's ops keep their own table).
  struct rescale_fields {
    bool scale32 = true;
    tosa::RoundingMode rounding = tosa::RoundingMode_SINGLE_ROUND;
    bool per_channel = false, input_unsigned = false, output_unsigned = false;
  };
  struct op_state {
    const tosa::TosaOperator* fb = nullptr;  // nullptr: made by qfold
    tosa::Op code = tosa::Op_UNKNOWN;
    qfold::tosa::op op = qfold::tosa::op::other;
    std::vector<std::uint32_t> inputs, outputs;
    bool alive = true;
    rescale_fields rescale;                      // a new RESCALE's
    std::string location;                        // a new op's location text
    mutable std::int64_t weight_zero_point = 0;  // quantized_conv's span points here
    // Above the depth of every op whose output it reads (a topological rank): an edge from v to
    // an op deeper than v's producer cannot close a cycle.
    std::uint32_t depth = 1;
    mutable qfold::op_kind kind = qfold::op_kind::other;  // kind() of its output, once known
    mutable bool kind_known = false;
  };
  [[nodiscard]] const op_state& op_at(std::uint32_t k) const { return ops_.at(k); }
  // The order in which the writer lists live tensors.
  [[nodiscard]] std::uint64_t tensor_order(node_id n) const { return tensor(n).order; }
  [[nodiscard]] std::span<const std::int64_t> tensor_shape(node_id n) const {
    return tensor(n).shape;
  }

 private:
  // What an op is to qfold, and why it is bad input if it is (empty: it is not).
  struct inspection {
    qfold::op_kind kind = qfold::op_kind::other;
    std::string problem;
  };
  struct rescale_read {
    qfold::rescale_attributes attributes;
    detail::element_range multipliers, shifts;
    std::optional<std::size_t> computed;  // the first parameter computed at run time
    std::string problem;
  };

  // Makes new tensors and ops all or nothing: done() keeps them; without it (an exception) the
  // destructor takes them back out.
  class maker {
   public:
    explicit maker(graph& g)
        : g_(g),
          tensors_(g.tensors_.size()),
          ops_(g.ops_.size()),
          storage_(g.storage_.size()),
          shapes_(g.shape_storage_.size()),
          names_(g.name_storage_.size()) {}
    maker(const maker&) = delete;
    maker& operator=(const maker&) = delete;
    ~maker() {
      if (!done_) undo();
    }
    node_id tensor(tosa::DType type, std::span<const std::int64_t> shape,
                   std::vector<std::uint8_t> bytes) {
      for (const std::int64_t d : shape)
        if (d < std::numeric_limits<std::int32_t>::min() ||
            d > std::numeric_limits<std::int32_t>::max())
          throw std::invalid_argument("qfold_tosa_fb: a dim beyond int32");
      const auto& own_shape = g_.shape_storage_.emplace_back(shape.begin(), shape.end());
      const auto& own_data = g_.storage_.emplace_back(std::move(bytes));
      const std::string_view name = g_.fresh_name();
      const auto id = static_cast<node_id>(g_.tensors_.size());
      tensor_state t;
      t.name = name;
      t.shape = own_shape;
      t.type = type;
      t.data = own_data;
      t.order = (std::uint64_t{1} << 32) | id;  // after the file's tensors
      g_.tensors_.push_back(std::move(t));
      return id;
    }
    // A tensor and the CONST that produces it.
    node_id constant(tosa::DType type, std::span<const std::int64_t> shape,
                     std::vector<std::uint8_t> bytes) {
      const node_id t = tensor(type, shape, std::move(bytes));
      op_state o;
      o.code = tosa::Op_CONST;
      o.op = qfold::tosa::op::const_;
      o.outputs = {t};
      o.location = "qfold";
      op(std::move(o));
      return t;
    }
    // An op whose inputs and outputs exist; it becomes their reader and producer.
    void op(op_state o) {
      o.depth = 1;
      for (const node_id in : o.inputs)
        if (const std::uint32_t p = g_.tensors_[in].producer; p != no_op)
          o.depth = std::max(o.depth, g_.ops_[p].depth + 1);
      for (std::uint32_t j = 0; j < o.inputs.size(); ++j) {
        const node_id in = o.inputs[j];
        g_.reserve_readers(
            in, static_cast<std::size_t>(std::count(o.inputs.begin(), o.inputs.end(), in)));
      }
      const auto k = static_cast<std::uint32_t>(g_.ops_.size());
      g_.ops_.push_back(std::move(o));
      // Nothing below throws: reader room was reserved.
      const op_state& made = g_.ops_.back();
      for (std::uint32_t j = 0; j < made.inputs.size(); ++j)
        g_.tensors_[made.inputs[j]].readers.push_back({k, j});
      for (const node_id out : made.outputs) g_.tensors_[out].producer = k;
      g_.changed_now();
    }
    void done() noexcept { done_ = true; }
    // Takes back everything made since construction (noexcept: pops and erasures only).
    void undo() noexcept {
      done_ = true;
      g_.changed_now();
      while (g_.ops_.size() > ops_) {
        const auto k = static_cast<std::uint32_t>(g_.ops_.size() - 1);
        const op_state& o = g_.ops_.back();
        for (std::uint32_t j = 0; j < o.inputs.size(); ++j) g_.drop_reader(o.inputs[j], k, j);
        g_.ops_.pop_back();
      }
      while (g_.tensors_.size() > tensors_) {
        g_.tensors_.pop_back();
      }
      while (g_.storage_.size() > storage_) g_.storage_.pop_back();
      while (g_.shape_storage_.size() > shapes_) g_.shape_storage_.pop_back();
      while (g_.name_storage_.size() > names_) g_.name_storage_.pop_back();
    }

   private:
    graph& g_;
    std::size_t tensors_, ops_, storage_, shapes_, names_;
    bool done_ = false;
  };

  [[nodiscard]] const tensor_state& tensor(node_id n) const {
    if (n >= tensors_.size()) throw std::out_of_range("qfold_tosa_fb: a node id beyond the graph");
    return tensors_[n];
  }
  const tensor_state& live(node_id n) const {
    const tensor_state& t = tensor(n);
    if (!t.alive) throw std::logic_error("qfold_tosa_fb: an erased node");
    return t;
  }
  [[nodiscard]] std::string label(std::uint32_t k) const {
    std::string s = "op #" + std::to_string(k) + " (" + op_name(ops_[k].code);
    if (!ops_[k].outputs.empty())
      s += " -> '" + std::string(tensors_[ops_[k].outputs[0]].name) + "'";
    return s + ")";
  }
  static std::size_t visible(const op_state& o) {
    if (o.op == qfold::tosa::op::other) return o.inputs.size();
    return std::min(qfold::tosa::layout_of(o.op).visible, o.inputs.size());
  }
  // A tensor a CONST or CONST_SHAPE produces.
  [[nodiscard]] bool is_constant_tensor(node_id n) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op) return false;
    const auto o = ops_[t.producer].op;
    return o == qfold::tosa::op::const_ || o == qfold::tosa::op::const_shape;
  }
  // A constant's values as integers (INT8, INT16, INT32, INT48), or nullopt.
  [[nodiscard]] std::optional<detail::int_tensor> int_values(node_id n) const {
    const tensor_state& t = tensor(n);
    const unsigned bits = detail::int_bits(t.type);
    const auto count = element_count(t.shape);
    if (bits == 0 || !count || *count * (bits / 8) != t.data.size()) return std::nullopt;
    return detail::int_tensor{
        detail::element_range({t.data.data(), bits / 8}, static_cast<std::size_t>(*count)),
        t.shape};
  }
  // The int64 values of a CONST_SHAPE's tensor (a slice's start or size), or nullopt.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> shape_values(node_id n) const {
    const tensor_state& t = tensor(n);
    if (t.producer == no_op || ops_[t.producer].op != qfold::tosa::op::const_shape ||
        t.type != tosa::DType_SHAPE || t.data.size() % 8 != 0)
      return std::nullopt;
    std::vector<std::int64_t> r(t.data.size() / 8);
    const detail::element_reader read{t.data.data(), 8};
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = read(i);
    return r;
  }
  [[nodiscard]] detail::parameter read_parameter(std::uint32_t k, std::size_t i) const {
    detail::parameter p;
    const op_state& o = ops_[k];
    if (i >= o.inputs.size()) {
      p.is = detail::parameter::state::unreadable;
      return p;
    }
    const node_id v = o.inputs[i];
    p.type = tensors_[v].type;
    if (!is_constant_tensor(v)) return p;
    p.values = int_values(v);
    p.is = p.values ? detail::parameter::state::constant : detail::parameter::state::unreadable;
    return p;
  }
  [[noreturn]] void not_constant(std::uint32_t k, std::size_t i) const {
    const op_state& o = ops_[k];
    throw qfold::parameter_not_constant(
        "qfold_tosa_fb: " + label(k) + "'s " + detail::operand_name(o.op, i) + " '" +
        std::string(tensors_[o.inputs[i]].name) + "' is computed at run time, not a CONST");
  }

  [[nodiscard]] rescale_read read_rescale(std::uint32_t k) const {
    namespace t = qfold::tosa;
    rescale_read r;
    const op_state& o = ops_[k];
    const tensor_state& input = tensors_[o.inputs[0]];
    const tensor_state& output = tensors_[o.outputs[0]];
    const auto it = detail::rescale_type_of(input.type, true),
               ot = detail::rescale_type_of(output.type, false);
    if (!it || !ot) {
      r.problem = "RESCALE from " + dtype_name(input.type) + " to " + dtype_name(output.type) +
                  ": unsupported element types (INT8/16/32/48 to INT8/16/32)";
      return r;
    }
    rescale_fields f = o.rescale;
    if (o.fb != nullptr) {
      const auto* a = o.fb->attribute_as_RescaleAttribute();  // read.hpp checked it is there
      if (a == nullptr) {
        r.problem = "RESCALE without its RescaleAttribute";
        return r;
      }
      f = {a->scale32(), a->rounding_mode(), a->per_channel(), a->input_unsigned(),
           a->output_unsigned()};
    }
    auto& a = r.attributes;
    a.input_type = *it;
    a.output_type = *ot;
    a.input_unsigned = f.input_unsigned;
    a.output_unsigned = f.output_unsigned;
    a.scale32 = f.scale32;
    a.per_channel = f.per_channel;
    switch (f.rounding) {
      case tosa::RoundingMode_SINGLE_ROUND:
        a.rounding = qfold::rounding_mode::single_round;
        break;
      case tosa::RoundingMode_INEXACT_ROUND:
        a.rounding = qfold::rounding_mode::inexact_round;
        break;
      case tosa::RoundingMode_DOUBLE_ROUND:
        a.rounding = qfold::rounding_mode::double_round;
        break;
      default:
        r.problem = "RESCALE: rounding_mode " +
                    std::to_string(static_cast<std::uint32_t>(f.rounding)) +
                    " (SINGLE_ROUND, INEXACT_ROUND or DOUBLE_ROUND)";
        return r;
    }
    const detail::parameter m = read_parameter(k, t::rescale_operand::multiplier),
                            s = read_parameter(k, t::rescale_operand::shift),
                            izp = read_parameter(k, t::rescale_operand::input_zp),
                            ozp = read_parameter(k, t::rescale_operand::output_zp);
    const detail::parameter* params[] = {&m, &s, &izp, &ozp};
    for (std::size_t i = 0; i < 4; ++i) {
      if (params[i]->is == detail::parameter::state::unreadable) {
        r.problem = std::string("RESCALE: the ") + detail::operand_name(t::op::rescale, i + 1) +
                    " constant '" + std::string(tensors_[o.inputs[i + 1]].name) +
                    "' is not an integer tensor (" + dtype_name(params[i]->type) + ")";
        return r;
      }
      if (params[i]->is == detail::parameter::state::computed && !r.computed) r.computed = i + 1;
    }
    if (m.is == detail::parameter::state::constant) {
      if (m.type != (a.scale32 ? tosa::DType_INT32 : tosa::DType_INT16)) {
        r.problem = std::string("RESCALE: scale32 = ") + (a.scale32 ? "true" : "false") +
                    " needs an INT" + (a.scale32 ? "32" : "16") + " multiplier, not " +
                    dtype_name(m.type);
        return r;
      }
      r.multipliers = m.values->data;
    }
    if (s.is == detail::parameter::state::constant) {
      if (s.type != tosa::DType_INT8) {
        r.problem = "RESCALE: the shift is " + dtype_name(s.type) + ", not INT8";
        return r;
      }
      r.shifts = s.values->data;
    }
    if ((izp.is == detail::parameter::state::constant && izp.type != input.type) ||
        (ozp.is == detail::parameter::state::constant && ozp.type != output.type)) {
      r.problem = "RESCALE: a zero point's type is not its side's (input " +
                  dtype_name(input.type) + ", output " + dtype_name(output.type) + ")";
      return r;
    }
    const auto in_zp = detail::zero_point_of(izp, a.input_unsigned),
               out_zp = detail::zero_point_of(ozp, a.output_unsigned);
    if ((izp.is == detail::parameter::state::constant && !in_zp) ||
        (ozp.is == detail::parameter::state::constant && !out_zp)) {
      r.problem = "RESCALE: a zero point is not a single integer";
      return r;
    }
    a.input_zp = in_zp.value_or(0);
    a.output_zp = out_zp.value_or(0);
    if (r.computed) return r;
    if (r.multipliers.size() != r.shifts.size()) {
      r.problem = "RESCALE: " + std::to_string(r.multipliers.size()) + " multipliers but " +
                  std::to_string(r.shifts.size()) + " shifts";
      return r;
    }
    std::size_t channels = 1;
    if (a.per_channel) {
      if (input.shape.empty() || input.shape.back() < 0) {
        r.problem = "RESCALE: per_channel needs a known last dimension of the input";
        return r;
      }
      channels = static_cast<std::size_t>(input.shape.back());
    }
    std::vector<qfold::scale_factor> scales;
    scales.reserve(r.multipliers.size());
    for (std::size_t i = 0; i < r.multipliers.size(); ++i)
      scales.push_back(
          {static_cast<std::int32_t>(r.multipliers[i]), static_cast<int>(r.shifts[i])});
    if (const auto ok = qfold::validate(a, scales, channels); !ok) {
      r.problem = "RESCALE: " + std::string(ok.error().message);
      if (ok.error().index != qfold::error::no_index)
        r.problem += " (channel " + std::to_string(ok.error().index) + ")";
    }
    return r;
  }

  // CLAMP's bounds from min_val / max_val, each the bytes of one element of the input type.
  [[nodiscard]] std::optional<qfold::clamp_attributes> clamp_bounds(std::uint32_t k) const {
    const op_state& o = ops_[k];
    if (o.fb == nullptr) return std::nullopt;
    const auto* a = o.fb->attribute_as_ClampAttribute();
    const std::size_t bytes = detail::int_bits(tensors_[o.inputs[0]].type) / 8;
    if (a == nullptr || a->min_val() == nullptr || a->max_val() == nullptr || bytes == 0 ||
        a->min_val()->size() != bytes || a->max_val()->size() != bytes)
      return std::nullopt;
    return qfold::clamp_attributes{detail::element_reader{a->min_val()->data(), bytes}(0),
                                   detail::element_reader{a->max_val()->data(), bytes}(0)};
  }

  [[nodiscard]] inspection inspect(std::uint32_t k) const {
    using op = qfold::tosa::op;
    inspection r;
    const op_state& o = ops_[k];
    const auto type = [&](std::size_t i) { return tensors_[o.inputs[i]].type; };
    const auto out = [&] { return tensors_[o.outputs[0]].type; };
    switch (o.op) {
      case op::const_:
        r.kind = qfold::op_kind::constant;
        return r;
      case op::rescale: {
        auto read = read_rescale(k);
        if (read.problem.empty()) r.kind = qfold::op_kind::rescale;
        r.problem = std::move(read.problem);
        return r;
      }
      case op::table: {
        const tosa::DType in = type(0);
        if (in != tosa::DType_INT8 && in != tosa::DType_INT16) {
          r.problem = "TABLE on " + dtype_name(in) + ": only INT8 and INT16 inputs are supported";
          return r;
        }
        const bool int8 = in == tosa::DType_INT8;
        const tensor_state& table = tensors_[o.inputs[1]];
        const std::int64_t entries = int8 ? 256 : 513;
        if (table.shape.size() != 1 || table.shape[0] != entries || table.type != in) {
          r.problem = std::string("TABLE: an ") + (int8 ? "INT8" : "INT16") +
                      " input needs a table of " + std::to_string(entries) +
                      (int8 ? " INT8" : " INT16") + " entries, not '" + std::string(table.name) +
                      "' " + dtype_name(table.type) + " " + detail::dims_string(table.shape);
          return r;
        }
        if (out() != (int8 ? tosa::DType_INT8 : tosa::DType_INT32)) {
          r.problem = std::string("TABLE: an ") + (int8 ? "INT8" : "INT16") + " input gives " +
                      (int8 ? "INT8" : "INT32") + ", not " + dtype_name(out());
          return r;
        }
        r.kind = qfold::op_kind::table;
        return r;
      }
      case op::mul: {
        const tosa::DType a = type(0);
        const unsigned bits = detail::int_bits(a);
        if (a != type(1) || (bits != 8 && bits != 16 && bits != 32) || out() != tosa::DType_INT32)
          return r;  // float, or a combination TOSA does not define: not looked through
        const auto shift = read_parameter(k, qfold::tosa::mul_operand::shift);
        if (shift.is == detail::parameter::state::constant) {
          const std::int64_t s = shift.values->data.size() == 1 ? shift.values->data[0] : -1;
          if (shift.type != tosa::DType_INT8 || s < 0 || s > 63 || (s != 0 && bits != 32)) {
            r.problem = "MUL: shift " + std::to_string(s) + " of " + dtype_name(shift.type) +
                        " (one INT8 value, 0..63, and 0 unless the inputs are INT32)";
            return r;
          }
        } else if (shift.is == detail::parameter::state::unreadable) {
          r.problem = "MUL: the shift constant is not an integer tensor";
          return r;
        }
        r.kind = qfold::op_kind::mul;
        return r;
      }
      case op::add:
      case op::sub:
        if (type(0) == tosa::DType_INT32 && type(1) == tosa::DType_INT32 &&
            out() == tosa::DType_INT32)
          r.kind = o.op == op::add ? qfold::op_kind::add : qfold::op_kind::sub;
        return r;
      case op::clamp: {
        const tosa::DType in = type(0);
        const unsigned bits = detail::int_bits(in);
        if (bits == 0 || bits > 32 || in != out()) return r;
        const auto b = clamp_bounds(k);
        if (!b) {
          r.problem = "CLAMP: min_val and max_val are not " + std::to_string(bits / 8) +
                      " bytes each (one " + dtype_name(in) + ")";
          return r;
        }
        if (b->min > b->max) {
          r.problem = "CLAMP: min_val " + std::to_string(b->min) + " above max_val " +
                      std::to_string(b->max);
          return r;
        }
        r.kind = qfold::op_kind::clamp;
        return r;
      }
      case op::cast: {
        const unsigned a = detail::int_bits(type(0)), b = detail::int_bits(out());
        if (a != 0 && b != 0 && a <= 32 && b <= 32) r.kind = qfold::op_kind::cast;
        return r;
      }
      case op::conv2d:
      case op::depthwise_conv2d:
      case op::matmul:
        return inspect_conv(k);
      case op::reshape:
      case op::transpose:
      case op::slice:
        r.kind = qfold::op_kind::view;
        return r;
      case op::const_shape:
      case op::other:
        break;
    }
    return r;
  }
  // CONV2D, DEPTHWISE_CONV2D (INT8 x INT8, INT32 accumulator) and MATMUL with a constant
  // right-hand side of one batch (a linear layer: TOSA 1.0 has no FULLY_CONNECTED).
  [[nodiscard]] inspection inspect_conv(std::uint32_t k) const {
    namespace t = qfold::tosa;
    inspection r;
    const op_state& o = ops_[k];
    const bool matmul = o.op == t::op::matmul;
    const auto type = [&](std::size_t i) { return tensors_[o.inputs[i]].type; };
    if (type(0) != tosa::DType_INT8 || type(1) != tosa::DType_INT8 ||
        tensors_[o.outputs[0]].type != tosa::DType_INT32 ||
        (!matmul && type(t::conv_operand::bias) != tosa::DType_INT32))
      return r;  // float, or INT16 x INT8 with an INT48 accumulator: not folded into
    if (matmul) {
      const tensor_state& b = tensors_[o.inputs[1]];
      if (!is_constant_tensor(o.inputs[1]) || b.shape.size() != 3 || b.shape[0] != 1)
        return r;  // a product of two activations, or one weight per batch: not a linear layer
    }
    const std::size_t zps[2] = {matmul ? t::matmul_operand::a_zp : t::conv_operand::input_zp,
                                matmul ? t::matmul_operand::b_zp : t::conv_operand::weight_zp};
    for (const std::size_t i : zps) {
      const auto p = read_parameter(k, i);
      if (p.is == detail::parameter::state::computed) continue;  // refused by the folds
      const auto zp = detail::zero_point_of(p, false);
      if (!zp || p.type != tosa::DType_INT8 || *zp < -128 || *zp > 127) {
        r.problem = op_name(o.code) + ": the " + detail::operand_name(o.op, i) + " '" +
                    std::string(tensors_[o.inputs[i]].name) + "' is not one INT8 value";
        return r;
      }
    }
    r.kind = matmul ? qfold::op_kind::linear : qfold::op_kind::convolution;
    return r;
  }

  // n, or for an erased n that replace_uses replaced, what replaced it (and so on).
  [[nodiscard]] node_id resolve(node_id n) const {
    for (std::size_t hops = 0; n < tensors_.size() && !tensors_[n].alive &&
                               tensors_[n].replaced_by != no_node && hops < tensors_.size();
         ++hops)
      n = tensors_[n].replaced_by;
    return n;
  }
  // Each op's depth: 1 + the deepest producer of its inputs (the file has no cycle: read.hpp).
  void compute_depths() {
    const auto n = static_cast<std::uint32_t>(ops_.size());
    std::vector<std::uint32_t> pending(n, 0), ready;
    for (std::uint32_t k = 0; k < n; ++k) {
      for (const node_id in : ops_[k].inputs)
        if (tensors_[in].producer != no_op) ++pending[k];
      if (pending[k] == 0) ready.push_back(k);
    }
    while (!ready.empty()) {
      const std::uint32_t k = ready.back();
      ready.pop_back();
      for (const node_id out : ops_[k].outputs)
        for (const reader& r : tensors_[out].readers) {
          ops_[r.op].depth = std::max(ops_[r.op].depth, ops_[k].depth + 1);
          if (--pending[r.op] == 0) ready.push_back(r.op);
        }
    }
  }
  // Checks that edges from v to each of `readers` (op indices) close no cycle, and returns the
  // depths to raise once they are made (throws std::logic_error on a cycle; changes nothing).
  [[nodiscard]] std::vector<std::pair<std::uint32_t, std::uint32_t>> new_edges(
      node_id v, std::span<const std::uint32_t> readers, const char* point) const {
    const std::uint32_t p = tensors_[v].producer;
    const std::uint32_t dv = p == no_op ? 0 : ops_[p].depth;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> raises;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> todo;
    for (const std::uint32_t r : readers) {
      if (ops_[r].depth > dv) continue;  // deeper than v: not upstream of it
      if (reaches(v, std::span<const std::uint32_t>(&r, 1)))
        throw std::logic_error(std::string("qfold_tosa_fb: ") + point + " would make a cycle");
      todo.emplace_back(r, dv + 1);
    }
    // r and what reads it, transitively, go deeper (the planned depths first, then the ops').
    const auto planned = [&](std::uint32_t k) {
      for (const auto& [op, d] : raises)
        if (op == k) return d;
      return ops_[k].depth;
    };
    while (!todo.empty()) {
      const auto [k, d] = todo.back();
      todo.pop_back();
      if (planned(k) >= d) continue;
      bool found = false;
      for (auto& [op, depth] : raises)
        if (op == k) {
          depth = d;
          found = true;
        }
      if (!found) raises.emplace_back(k, d);
      for (const node_id out : ops_[k].outputs)
        for (const reader& r : tensors_[out].readers) todo.emplace_back(r.op, d + 1);
    }
    return raises;
  }
  // Whether any of `targets` (op indices) lies on a path of inputs up from v.
  [[nodiscard]] bool reaches(node_id v, std::span<const std::uint32_t> targets) const {
    if (targets.empty()) return false;
    std::vector<char> seen(ops_.size(), 0);
    std::vector<std::uint32_t> todo;
    if (tensors_[v].producer != no_op) todo.push_back(tensors_[v].producer);
    while (!todo.empty()) {
      const std::uint32_t k = todo.back();
      todo.pop_back();
      if (seen[k]) continue;
      seen[k] = 1;
      if (std::find(targets.begin(), targets.end(), k) != targets.end()) return true;
      for (const std::uint32_t in : ops_[k].inputs)
        if (const std::uint32_t p = tensors_[in].producer; p != no_op && !seen[p])
          todo.push_back(p);
    }
    return false;
  }
  void same_type(node_id a, node_id b, const char* point) const {
    const tensor_state& x = tensors_[a];
    const tensor_state& y = tensors_[b];
    if (x.type != y.type ||
        !std::equal(x.shape.begin(), x.shape.end(), y.shape.begin(), y.shape.end()))
      throw std::logic_error(std::string("qfold_tosa_fb: ") + point +
                             " with a tensor of another type (" + dtype_name(x.type) + " " +
                             detail::dims_string(x.shape) + " by " + dtype_name(y.type) + " " +
                             detail::dims_string(y.shape) + ")");
  }
  void reserve_readers(node_id n, std::size_t more) {
    auto& r = tensors_[n].readers;
    if (r.capacity() - r.size() < more) r.reserve(std::max(r.size() + more, 2 * r.size()));
  }
  void drop_reader(node_id n, std::uint32_t op, std::uint32_t slot) noexcept {
    auto& r = tensors_[n].readers;
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i].op == op && r[i].slot == slot) {
        r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  }
  void changed_now() const noexcept {
    ++generation_;
    float_copies_.clear();
  }
  // "qfold_<n>", unused by any tensor the graph has had.
  std::string_view fresh_name() {
    std::string s;
    do {
      s = "qfold_" + std::to_string(next_name_++);
    } while (reserved_.count(s) != 0);
    return name_storage_.emplace_back(std::move(s));
  }
  std::string location_for(node_id input) const {
    const tensor_state& t = tensors_[input];
    std::string s = "qfold";
    if (t.producer != no_op && ops_[t.producer].fb != nullptr) {
      const auto* loc = ops_[t.producer].fb->location();
      if (loc != nullptr && loc->text() != nullptr) s += "@" + loc->text()->str();
    }
    return s;
  }
  // Little-endian bytes of `values` as elements of `type` (the caller checked the range).
  static std::vector<std::uint8_t> encode(tosa::DType type, std::span<const std::int64_t> values) {
    const std::size_t w = storage_of(type).bytes;
    std::vector<std::uint8_t> r(values.size() * w);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto u = static_cast<std::uint64_t>(values[i]);
      for (std::size_t b = 0; b < w; ++b) r[i * w + b] = static_cast<std::uint8_t>(u >> (8 * b));
    }
    return r;
  }
  static void check_shape(std::size_t size, std::span<const std::int64_t> shape) {
    const auto count = element_count(shape);
    if (!count || *count != size)
      throw std::invalid_argument("qfold_tosa_fb: a constant's data does not match its shape");
  }
  template <class V>
  node_id make_table(node_id input, std::span<const V> values, tosa::DType in_type,
                     tosa::DType out_type, std::size_t entries) {
    if (values.size() != entries)
      throw std::invalid_argument("qfold_tosa_fb: add_table: " + std::to_string(entries) +
                                  " entries expected, not " + std::to_string(values.size()));
    input = resolve(input);
    const tensor_state& in = live(input);
    if (in.type != in_type)
      throw std::invalid_argument("qfold_tosa_fb: add_table: the input is not " +
                                  dtype_name(in_type));
    std::vector<std::int64_t> wide(values.begin(), values.end());
    const auto n = static_cast<std::int64_t>(entries);
    maker mk(*this);
    const node_id table = mk.constant(in_type, std::span(&n, 1), encode(in_type, wide));
    const node_id out = mk.tensor(out_type, in.shape, {});
    op_state o;
    o.code = tosa::Op_TABLE;
    o.op = qfold::tosa::op::table;
    o.inputs = {input, table};
    o.outputs = {out};
    o.location = location_for(input);
    mk.op(std::move(o));
    mk.done();
    return out;
  }

  const model* m_;
  std::deque<tensor_state> tensors_;
  std::deque<op_state> ops_;
  std::vector<std::uint32_t> outputs_;             // the block's outputs
  std::unordered_set<std::string_view> reserved_;  // the file's names that begin with "qfold_"
  std::deque<std::vector<std::uint8_t>> storage_;  // new tensors' data
  std::deque<std::vector<std::int64_t>> shape_storage_;  // new tensors' dims
  std::deque<std::string> name_storage_;                 // new tensors' names
  std::uint64_t next_name_ = 0;
  // conv op -> the shared input zero-point constant it read before set_conv_input_zero_point
  std::unordered_map<std::uint32_t, node_id> original_zero_points_;
  mutable std::uint64_t generation_ = 1;
  mutable std::deque<std::vector<float>> float_copies_;
};

}  // namespace qfold_tosa_fb

template <>
struct qfold::ir_traits<qfold_tosa_fb::graph> {
  using G = qfold_tosa_fb::graph;
  using node_id = G::node_id;
  static auto nodes(const G& g) { return g.nodes(); }
  static qfold::op_kind kind(const G& g, node_id n) { return g.kind(n); }
  static auto operands(const G& g, node_id n) { return g.operands(n); }
  static std::size_t use_count(const G& g, node_id n) { return g.use_count(n); }
  static auto constant(const G& g, node_id n) { return g.constant(n); }
  static auto int_constant(const G& g, node_id n) { return g.int_constant(n); }
  static auto output_shape(const G& g, node_id n) { return g.output_shape(n); }
  static auto element_type(const G& g, node_id n) { return g.element_type(n); }
  static auto rescale(const G& g, node_id n) { return g.rescale(n); }
  static int mul_shift(const G& g, node_id n) { return g.mul_shift(n); }
  static auto clamp_attributes(const G& g, node_id n) { return g.clamp_attributes(n); }
  static auto qparams(const G& g, node_id n) { return g.qparams(n); }
  static bool qparams_shared(const G& g, node_id n) { return g.qparams_shared(n); }
  static auto conv_attributes(const G& g, node_id n) { return g.conv_attributes(n); }
  static auto quantized_conv(const G& g, node_id n) { return g.quantized_conv(n); }
  static auto view_axis(const G& g, node_id n, std::int64_t a) { return g.view_axis(n, a); }
  static std::size_t constant_bytes(const G& g, node_id n) { return g.constant_bytes(n); }

  static node_id add_constant(G& g, std::span<const float> d, std::span<const std::int64_t> s) {
    return g.add_constant(d, s);
  }
  static node_id add_int_constant(G& g, std::span<const std::int64_t> d,
                                  std::span<const std::int64_t> s, qfold::dtype t) {
    return g.add_int_constant(d, s, t);
  }
  static node_id add_table(G& g, node_id input, std::span<const std::int8_t> values) {
    return g.add_table(input, values);
  }
  static node_id add_table(G& g, node_id input, std::span<const std::int16_t> values) {
    return g.add_table(input, values);
  }
  static node_id add_rescale(G& g, node_id input, const qfold::rescale_attributes& a,
                             std::span<const qfold::scale_factor> s) {
    return g.add_rescale(input, a, s);
  }
  static void set_operand(G& g, node_id n, std::size_t i, node_id v) { g.set_operand(n, i, v); }
  static void remove_last_operand(G& g, node_id n) { g.remove_last_operand(n); }
  static void replace_uses(G& g, node_id old, node_id v) { g.replace_uses(old, v); }
  static void erase(G& g, node_id n) noexcept { g.erase(n); }
  static node_id take_name(G& g, node_id old, node_id v) { return g.take_name(old, v); }
  static void set_qparams(G& g, node_id n, const qfold::qparams& q) { g.set_qparams(n, q); }
  static void set_conv_input_zero_point(G& g, node_id n, std::int64_t zp) {
    g.set_conv_input_zero_point(n, zp);
  }
};

static_assert(qfold::quantized_graph<qfold_tosa_fb::graph>);
static_assert(qfold::rescale_mergeable_graph<qfold_tosa_fb::graph>);
static_assert(qfold::table_composable_graph<qfold_tosa_fb::graph>);
static_assert(qfold::table_collapsible_graph<qfold_tosa_fb::graph>);
