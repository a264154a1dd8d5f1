// tiny: the demo's compact IR (float and quantized ops, nodes in a vector, built with helpers) and
// its qfold adapter, as the members qfold::ir_traits forwards to. Run it with interpreter.hpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <qfold/quant/qparams.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tiny {

struct conv_options {
  std::int64_t groups = 1, stride = 1, padding = 0;  // symmetric padding on H and W
};

class graph {
 public:
  using node_id = std::int32_t;
  static constexpr node_id none = -1;  // an absent optional operand (bias)

  struct node {
    qfold::op_kind kind = qfold::op_kind::other;
    std::string op;  // what an `other` node computes ("relu", "flatten") or a view does
                     // ("permute", "slice", "reshape")
    std::vector<node_id> inputs;
    std::vector<float> data;          // a constant's values, row-major
    std::vector<std::int64_t> shape;  // a constant's shape, else the inferred output shape
    qfold::conv_attributes conv{};
    std::int64_t stride = 1, padding = 0;
    qfold::batch_norm_attributes bn{};
    std::string name;
    bool alive = true;
    std::vector<node_id> users;   // one entry per operand slot that reads this node
    std::size_t output_uses = 0;  // how often the graph outputs list this node
    // Quantized ops.
    bool integer = false;  // computes integers: int constants, rescale, table, integer mul / add,
                           // quantize, qconv2d; views and `other` take it from their input
    std::vector<std::int64_t> ints;           // an integer constant's values, row-major
    qfold::dtype type = qfold::dtype::int32;  // an integer constant's element type
    qfold::rescale_attributes rescale{};
    std::vector<qfold::scale_factor> scales;  // one, or one per channel of the last axis
    int shift = 0;                            // an integer mul's TOSA shift
    std::vector<std::int8_t> table;           // 256 entries, indexed by code + 128
    std::vector<std::int16_t> table16;        // an int16 TABLE's 513 knots (TOSA, output int32)
    qfold::clamp_attributes clamp{};          // an integer clamp's bounds
    std::optional<qfold::dtype> element;      // the output's element type (nullopt: float or
                                              // unknown); an input's is declared, a cast's target
    std::optional<qfold::qparams> qparams;    // quantize / dequantize: their own; else annotation
    bool qparams_shared = false;
    std::vector<std::int64_t> view;  // permute: the permutation; slice: axis, start, end
    bool quantized = false;          // an integer conv (qconv2d)
    std::int64_t input_zero_point = 0;
    std::vector<std::int64_t> weight_zero_points;  // one, or one per output channel
  };

  // --- Building --------------------------------------------------------------------------------
  // `type`: the input's element type when it holds integer codes (nullopt: float).
  node_id input(std::string name, std::vector<std::int64_t> shape,
                std::optional<qfold::dtype> type = std::nullopt) {
    node n = make(qfold::op_kind::input, std::move(name), {});
    n.shape = std::move(shape);
    n.element = type;
    return add(std::move(n));
  }
  node_id constant(std::string name, std::vector<float> data, std::vector<std::int64_t> shape) {
    std::int64_t count = 1;
    for (const std::int64_t d : shape) count *= d;
    if (count < 0 || static_cast<std::size_t>(count) != data.size())
      throw std::invalid_argument("tiny: constant " + name + ": data does not match its shape");
    node n = make(qfold::op_kind::constant, std::move(name), {});
    n.data = std::move(data);
    n.shape = std::move(shape);
    return add(std::move(n));
  }
  // Weight OIHW (out, in / groups, kh, kw).
  node_id conv2d(std::string name, node_id x, node_id w, node_id bias = none, conv_options o = {}) {
    return add(conv_node(std::move(name), x, w, bias, o, false));
  }
  // Weight IOHW (in, out / groups, kh, kw), as PyTorch's ConvTranspose2d.
  node_id conv_transpose2d(std::string name, node_id x, node_id w, node_id bias = none,
                           conv_options o = {}) {
    return add(conv_node(std::move(name), x, w, bias, o, true));
  }
  // Weight (out, in); applied on the last axis.
  node_id linear(std::string name, node_id x, node_id w, node_id bias = none) {
    node n = make(qfold::op_kind::linear, std::move(name), {x, w});
    if (bias != none) n.inputs.push_back(bias);
    return add(std::move(n));
  }
  // Inference batch norm on channel axis 1; operands in ONNX order.
  node_id batch_norm(std::string name, node_id x, node_id gamma, node_id beta, node_id mean,
                     node_id var, double epsilon = 1e-5, bool training = false) {
    node n = make(qfold::op_kind::batch_norm, std::move(name), {x, gamma, beta, mean, var});
    n.bn = {epsilon, training};
    return add(std::move(n));
  }
  node_id relu(std::string name, node_id x) { return other("relu", std::move(name), x); }
  node_id flatten(std::string name, node_id x) { return other("flatten", std::move(name), x); }

  // --- Building quantized graphs ---------------------------------------------------------------
  // An integer constant; every value must lie in the range of `type`.
  node_id int_constant(std::string name, std::vector<std::int64_t> data,
                       std::vector<std::int64_t> shape, qfold::dtype type) {
    if (elements(name, shape) != data.size())
      throw std::invalid_argument("tiny: int_constant " + name + ": data does not match its shape");
    const qfold::dtype_range r = qfold::range_of(type);
    for (const std::int64_t v : data)
      if (v < r.lo || v > r.hi)
        throw std::invalid_argument("tiny: int_constant " + name + ": value " + std::to_string(v) +
                                    " outside its dtype");
    node n = make(qfold::op_kind::constant, std::move(name), {});
    n.integer = true;
    n.ints = std::move(data);
    n.shape = std::move(shape);
    n.type = type;
    return add(std::move(n));
  }
  // TOSA RESCALE; per channel (attributes.per_channel) along the last axis.
  node_id rescale(std::string name, node_id x, qfold::rescale_attributes attributes,
                  std::vector<qfold::scale_factor> scales) {
    node n = make(qfold::op_kind::rescale, std::move(name), {x});
    n.integer = true;
    n.rescale = attributes;
    n.scales = std::move(scales);
    return add(std::move(n));
  }
  // TOSA MUL of int32 values (shift 0 wraps); numpy broadcasting.
  node_id mul(std::string name, node_id a, node_id b, int shift = 0) {
    node n = make(qfold::op_kind::mul, std::move(name), {a, b});
    n.integer = true;
    n.shift = shift;
    return add(std::move(n));
  }
  // int32 a + b (overflow is an error when run); numpy broadcasting.
  node_id add(std::string name, node_id a, node_id b) {
    node n = make(qfold::op_kind::add, std::move(name), {a, b});
    n.integer = true;
    return add(std::move(n));
  }
  // int32 a - b (overflow is an error when run); numpy broadcasting.
  node_id sub(std::string name, node_id a, node_id b) {
    node n = make(qfold::op_kind::sub, std::move(name), {a, b});
    n.integer = true;
    return add(std::move(n));
  }
  // TOSA CLAMP of integers to [lo, hi] (ERROR_IF lo > hi); the element type is the input's.
  node_id clamp(std::string name, node_id x, std::int64_t lo, std::int64_t hi) {
    if (lo > hi) throw std::invalid_argument("tiny: clamp " + name + ": lo > hi");
    node n = make(qfold::op_kind::clamp, std::move(name), {x});
    n.integer = true;
    n.clamp = {lo, hi};
    return add(std::move(n));
  }
  // TOSA CAST between integer types: a widening cast sign-extends (keeps the value), a narrowing
  // one truncates to the low bits (two's complement wrap), as CAST.tosac defines.
  node_id cast(std::string name, node_id x, qfold::dtype to) {
    node n = make(qfold::op_kind::cast, std::move(name), {x});
    n.integer = true;
    n.element = to;
    return add(std::move(n));
  }
  // int16 TABLE (TOSA): 513 knots, output int32 = (base << 7) + slope * frac, unrounded.
  node_id table16(std::string name, node_id x, std::vector<std::int16_t> values) {
    if (values.size() != 513)
      throw std::invalid_argument("tiny: table16 " + name + ": wants exactly 513 values");
    node n = make(qfold::op_kind::table, std::move(name), {x});
    n.integer = true;
    n.table16 = std::move(values);
    return add(std::move(n));
  }
  // float32 a * b and a / b; numpy broadcasting.
  node_id fmul(std::string name, node_id a, node_id b) {
    return add(make(qfold::op_kind::mul, std::move(name), {a, b}));
  }
  node_id div(std::string name, node_id a, node_id b) {
    return add(make(qfold::op_kind::div, std::move(name), {a, b}));
  }
  // int8 TABLE: out = values[code + 128].
  node_id table(std::string name, node_id x, std::vector<std::int8_t> values) {
    if (values.size() != 256)
      throw std::invalid_argument("tiny: table " + name + ": wants exactly 256 values");
    node n = make(qfold::op_kind::table, std::move(name), {x});
    n.integer = true;
    n.table = std::move(values);
    return add(std::move(n));
  }
  // float32 <-> code with qfold::conventions::executorch.
  node_id quantize(std::string name, node_id x, qfold::qparams q) {
    node n = make(qfold::op_kind::quantize, std::move(name), {x});
    n.integer = true;
    n.qparams = valid(n.name, q);
    return add(std::move(n));
  }
  node_id dequantize(std::string name, node_id x, qfold::qparams q) {
    node n = make(qfold::op_kind::dequantize, std::move(name), {x});
    n.qparams = valid(n.name, q);
    return add(std::move(n));
  }
  // Views: output axis i is input axis perm[i]; [start, end) of one axis; same data, new shape.
  node_id permute(std::string name, node_id x, std::vector<std::int64_t> perm) {
    return view_node("permute", std::move(name), x, std::move(perm));
  }
  node_id slice(std::string name, node_id x, std::int64_t axis, std::int64_t start,
                std::int64_t end) {
    return view_node("slice", std::move(name), x, {axis, start, end});
  }
  node_id reshape(std::string name, node_id x, std::vector<std::int64_t> shape) {
    return view_node("reshape", std::move(name), x, std::move(shape));
  }
  // Integer conv, NCHW input, OIHW int8 weights, int32 bias (or none): the int32 accumulator
  // bias[o] + sum (w - weight_zero_points[o]) * (x - input_zero_point); padding reads the zero
  // point (contributes 0).
  node_id qconv2d(std::string name, node_id x, node_id w, node_id bias, conv_options o,
                  std::int64_t input_zero_point, std::vector<std::int64_t> weight_zero_points) {
    node n = conv_node(std::move(name), x, w, bias, o, false);
    n.integer = true;
    n.quantized = true;
    n.input_zero_point = input_zero_point;
    n.weight_zero_points = std::move(weight_zero_points);
    return add(std::move(n));
  }
  // Annotates n's output quantization; `shared`: another node's quantization is tied to it.
  void set_output_qparams(node_id n, qfold::qparams q, bool shared = false) {
    node& x = mut(n);
    x.qparams = valid(x.name, q);
    x.qparams_shared = shared;
  }
  void mark_output(node_id n) {
    outputs_.push_back(n);
    ++mut(n).output_uses;
  }

  // --- Inspection ------------------------------------------------------------------------------
  [[nodiscard]] const node& at(node_id n) const { return nodes_.at(index(n)); }
  [[nodiscard]] const std::vector<node_id>& outputs() const noexcept { return outputs_; }
  [[nodiscard]] std::size_t slots() const noexcept { return nodes_.size(); }  // live and dead
  [[nodiscard]] std::size_t live_count() const noexcept {
    return static_cast<std::size_t>(
        std::ranges::count_if(nodes_, [](const node& x) { return x.alive; }));
  }
  [[nodiscard]] const std::string& name(node_id n) const { return at(n).name; }
  // Whether n computes integers (codes, accumulators) rather than floats; inputs count as float.
  [[nodiscard]] bool is_integer(node_id n) const { return at(n).integer; }

  // FNV-1a over every live node's id, kind, op, operands, attributes (float and quantized), shape
  // and constant values, and the outputs: equal before and after means the graph is exactly as it
  // was.
  [[nodiscard]] std::uint64_t structural_hash() const {
    std::uint64_t h = 14695981039346656037u;
    const auto bytes = [&](const void* p, std::size_t size) {
      const auto* b = static_cast<const unsigned char*>(p);
      for (std::size_t i = 0; i < size; ++i) h = (h ^ b[i]) * 1099511628211u;
    };
    const auto word = [&](std::uint64_t v) { bytes(&v, sizeof v); };
    const auto ids = [&](const std::vector<node_id>& v) {
      word(v.size());
      for (const node_id i : v) word(static_cast<std::uint64_t>(i));
    };
    const auto values = [&](const std::vector<std::int64_t>& v) {
      word(v.size());
      for (const std::int64_t i : v) word(static_cast<std::uint64_t>(i));
    };
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const node& x = nodes_[i];
      if (!x.alive) continue;
      word(i);
      word(static_cast<std::uint64_t>(x.kind));
      word(x.op.size());
      bytes(x.op.data(), x.op.size());
      ids(x.inputs);
      word(x.data.size());
      bytes(x.data.data(), x.data.size() * sizeof(float));
      word(x.shape.size());
      for (const std::int64_t d : x.shape) word(static_cast<std::uint64_t>(d));
      for (const std::int64_t a : {x.conv.groups, std::int64_t{x.conv.transposed},
                                   static_cast<std::int64_t>(x.conv.layout), x.stride, x.padding,
                                   std::int64_t{x.bn.training}})
        word(static_cast<std::uint64_t>(a));
      word(std::bit_cast<std::uint64_t>(x.bn.epsilon));
      for (const bool b :
           {x.conv.padded, x.integer, x.quantized, x.qparams.has_value(), x.qparams_shared})
        word(b ? 1 : 0);
      word(static_cast<std::uint64_t>(x.conv.input_channel_axis));
      values(x.ints);
      word(static_cast<std::uint64_t>(x.type));
      const qfold::rescale_attributes& r = x.rescale;
      for (const std::int64_t a :
           {static_cast<std::int64_t>(r.input_type), static_cast<std::int64_t>(r.output_type),
            std::int64_t{r.scale32}, static_cast<std::int64_t>(r.rounding),
            std::int64_t{r.per_channel}, std::int64_t{r.input_unsigned},
            std::int64_t{r.output_unsigned}, r.input_zp, r.output_zp})
        word(static_cast<std::uint64_t>(a));
      word(x.scales.size());
      for (const qfold::scale_factor& f : x.scales) {
        word(static_cast<std::uint64_t>(f.multiplier));
        word(static_cast<std::uint64_t>(f.shift));
      }
      word(static_cast<std::uint64_t>(x.shift));
      word(x.table.size());
      bytes(x.table.data(), x.table.size());
      word(x.table16.size());
      bytes(x.table16.data(), x.table16.size() * sizeof(std::int16_t));
      word(static_cast<std::uint64_t>(x.clamp.min));
      word(static_cast<std::uint64_t>(x.clamp.max));
      word(x.element ? static_cast<std::uint64_t>(*x.element) + 1 : 0);
      if (x.qparams) {
        const qfold::qparams& q = *x.qparams;
        word(std::bit_cast<std::uint64_t>(q.scale));
        for (const std::int64_t a : {std::int64_t{q.zero_point}, std::int64_t{q.qmin},
                                     std::int64_t{q.qmax}, static_cast<std::int64_t>(q.type)})
          word(static_cast<std::uint64_t>(a));
      }
      values(x.view);
      word(static_cast<std::uint64_t>(x.input_zero_point));
      values(x.weight_zero_points);
    }
    ids(outputs_);
    return h;
  }

  // --- The qfold adapter (see qfold/graph/traits.hpp) -------------------------------------------
  // Live nodes, producers first. Builders only read earlier nodes, but constants made by
  // add_constant come later than their readers, so this is a depth-first post-order.
  [[nodiscard]] std::vector<node_id> nodes() const {
    std::vector<node_id> order;
    std::vector<std::uint8_t> state(nodes_.size(), 0);   // 0 new, 1 on the stack, 2 emitted
    std::vector<std::pair<node_id, std::size_t>> stack;  // node, next operand to visit
    for (std::size_t root = 0; root < nodes_.size(); ++root) {
      if (!nodes_[root].alive || state[root] != 0) continue;
      stack.emplace_back(static_cast<node_id>(root), 0);
      state[root] = 1;
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        const auto& in = at(n).inputs;
        if (next < in.size()) {
          const node_id m = in[next++];
          if (state[index(m)] == 0) {
            state[index(m)] = 1;
            stack.emplace_back(m, 0);  // invalidates n and next; the loop re-reads them
          }
          continue;
        }
        state[index(n)] = 2;
        order.push_back(n);
        stack.pop_back();
      }
    }
    return order;
  }
  [[nodiscard]] qfold::op_kind kind(node_id n) const { return at(n).kind; }
  [[nodiscard]] std::span<const node_id> operands(node_id n) const { return at(n).inputs; }
  [[nodiscard]] std::size_t use_count(node_id n) const {
    return at(n).users.size() + at(n).output_uses;
  }
  [[nodiscard]] std::optional<qfold::tensor_view<float>> constant(node_id n) const {
    const node& x = at(n);
    if (x.kind != qfold::op_kind::constant || x.integer) return std::nullopt;
    return qfold::tensor_view<float>{x.data, x.shape};
  }
  [[nodiscard]] qfold::conv_attributes conv_attributes(node_id n) const { return at(n).conv; }
  [[nodiscard]] qfold::batch_norm_attributes batch_norm_attributes(node_id n) const {
    return at(n).bn;
  }
  [[nodiscard]] std::size_t output_rank(node_id n) const { return at(n).shape.size(); }

  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    return constant("const" + std::to_string(nodes_.size()), {data.begin(), data.end()},
                    {shape.begin(), shape.end()});
  }
  // Shapes are inferred when a node is built and kept here: rewire to a value of the same shape.
  // Each mutation allocates first, so that it either happens whole or throws having changed
  // nothing (qfold's transactions rely on it).
  void set_operand(node_id n, std::size_t i, node_id v) {
    auto& in = mut(n).inputs;
    auto& users = mut(v).users;
    if (i > in.size()) throw std::out_of_range("tiny: set_operand beyond the operand count");
    reserve(users, users.size() + 1);
    if (i == in.size()) {
      in.resize(i + 1, v);  // not push_back: g++ 12 -O3 warns falsely (-Warray-bounds) there
    } else {
      drop_user(in[i], n);
      in[i] = v;
    }
    users.push_back(n);
  }
  void remove_last_operand(node_id n) {
    auto& in = mut(n).inputs;
    if (in.empty()) throw std::out_of_range("tiny: remove_last_operand of a node without operands");
    drop_user(in.back(), n);
    in.pop_back();
  }
  void replace_uses(node_id old, node_id v) {
    if (old == v) return;
    auto& users = mut(v).users;
    reserve(users, users.size() + mut(old).users.size());
    for (const node_id u : std::exchange(mut(old).users, {})) {  // one entry per slot
      auto& in = mut(u).inputs;
      *std::ranges::find(in, old) = v;
      users.push_back(u);
    }
    for (node_id& o : outputs_)
      if (o == old) o = v;
    mut(v).output_uses += std::exchange(mut(old).output_uses, 0);
  }
  // Only ever called on a live node without readers; then it cannot fail (anything else breaks
  // qfold's contract and stops the program).
  void erase(node_id n) noexcept {
    node& x = nodes_[index(n)];
    if (!x.alive || use_count(n) != 0) std::abort();
    for (const node_id i : x.inputs) drop_user(i, n);
    x.alive = false;
    x.inputs.clear();
    x.data = {};
    x.ints = {};
  }
  // Float constants: 4 bytes an element; integer constants: their dtype's width.
  [[nodiscard]] std::size_t constant_bytes(node_id n) const {
    const node& x = at(n);
    return x.data.size() * sizeof(float) + x.ints.size() * byte_width(x.type);
  }

  // Quantized graphs.
  [[nodiscard]] std::optional<qfold::tensor_view<std::int64_t>> int_constant(node_id n) const {
    const node& x = at(n);
    if (x.kind != qfold::op_kind::constant || !x.integer) return std::nullopt;
    return qfold::tensor_view<std::int64_t>{x.ints, x.shape};
  }
  [[nodiscard]] std::span<const std::int64_t> output_shape(node_id n) const { return at(n).shape; }
  // Default attributes and no scales unless n is a rescale.
  [[nodiscard]] qfold::rescale_view rescale(node_id n) const {
    const node& x = at(n);
    return {x.rescale, x.scales};
  }
  [[nodiscard]] int mul_shift(node_id n) const { return at(n).shift; }  // 0 unless integer mul
  // An int8 TABLE's 256 entries (an int16 TABLE's knots are not exposed: passes refuse to read
  // it, which is safe; they can still create one with add_table(int16)).
  [[nodiscard]] std::span<const std::int8_t> table_values(node_id n) const { return at(n).table; }
  [[nodiscard]] qfold::clamp_attributes clamp_attributes(node_id n) const { return at(n).clamp; }
  [[nodiscard]] std::optional<qfold::dtype> element_type(node_id n) const { return at(n).element; }
  [[nodiscard]] std::optional<qfold::qparams> qparams(node_id n) const { return at(n).qparams; }
  [[nodiscard]] bool qparams_shared(node_id n) const { return at(n).qparams_shared; }
  [[nodiscard]] std::optional<std::int64_t> view_axis(node_id n, std::int64_t axis) const {
    const node& x = at(n);
    if (x.kind != qfold::op_kind::view || x.inputs.empty()) return std::nullopt;
    const std::vector<std::int64_t>& in = at(x.inputs[0]).shape;
    if (axis < 0 || static_cast<std::size_t>(axis) >= in.size()) return std::nullopt;
    if (x.op == "permute") {
      const auto it = std::ranges::find(x.view, axis);
      if (it == x.view.end()) return std::nullopt;
      return static_cast<std::int64_t>(it - x.view.begin());
    }
    if (x.op == "slice") {
      const bool narrowed = x.view[0] == axis && (x.view[1] != 0 || x.view[2] != in[size(axis)]);
      return narrowed ? std::nullopt : std::optional<std::int64_t>(axis);
    }
    if (x.op == "reshape") {
      if (static_cast<std::size_t>(axis) >= x.shape.size()) return std::nullopt;
      const auto prefix = static_cast<std::ptrdiff_t>(axis) + 1;
      return std::equal(in.begin(), in.begin() + prefix, x.shape.begin())
                 ? std::optional<std::int64_t>(axis)
                 : std::nullopt;
    }
    return std::nullopt;
  }
  [[nodiscard]] std::optional<qfold::quantized_conv_attributes> quantized_conv(node_id n) const {
    const node& x = at(n);
    if (x.kind != qfold::op_kind::convolution || !x.quantized) return std::nullopt;
    return qfold::quantized_conv_attributes{x.input_zero_point, x.weight_zero_points,
                                            qfold::dtype::int8};
  }
  node_id add_int_constant(std::span<const std::int64_t> data, std::span<const std::int64_t> shape,
                           qfold::dtype type) {
    return int_constant("const" + std::to_string(nodes_.size()), {data.begin(), data.end()},
                        {shape.begin(), shape.end()}, type);
  }
  node_id add_table(node_id input, std::span<const std::int8_t> values) {
    return table("table" + std::to_string(nodes_.size()), input, {values.begin(), values.end()});
  }
  node_id add_table(node_id input, std::span<const std::int16_t> values) {
    return table16("table" + std::to_string(nodes_.size()), input, {values.begin(), values.end()});
  }
  node_id add_rescale(node_id input, const qfold::rescale_attributes& a,
                      std::span<const qfold::scale_factor> scales) {
    return rescale("rescale" + std::to_string(nodes_.size()), input, a,
                   {scales.begin(), scales.end()});
  }
  void set_qparams(node_id n, const qfold::qparams& q) {
    node& x = mut(n);
    x.qparams = valid(x.name, q);
  }
  void set_conv_input_zero_point(node_id n, std::int64_t zp) {
    node& x = mut(n);
    if (x.kind != qfold::op_kind::convolution || !x.quantized)
      throw std::invalid_argument("tiny: " + x.name + ": not an integer conv");
    x.input_zero_point = valid_input_zero_point(x.name, zp);
  }

 private:
  static std::size_t index(node_id n) { return static_cast<std::size_t>(n); }
  // Capacity for n, growing geometrically (an exact reserve would reallocate on every call).
  static void reserve(std::vector<node_id>& v, std::size_t n) {
    if (n > v.capacity()) v.reserve(std::max(n, 2 * v.capacity()));
  }
  static std::size_t size(std::int64_t v) { return static_cast<std::size_t>(v); }
  node& mut(node_id n) { return nodes_.at(index(n)); }
  void drop_user(node_id of, node_id user) {
    auto& u = mut(of).users;
    u.erase(std::ranges::find(u, user));
  }

  static node make(qfold::op_kind kind, std::string name, std::vector<node_id> inputs) {
    node n;
    n.kind = kind;
    n.name = std::move(name);
    n.inputs = std::move(inputs);
    return n;
  }
  node conv_node(std::string name, node_id x, node_id w, node_id bias, conv_options o,
                 bool transposed) {
    node n = make(qfold::op_kind::convolution, std::move(name), {x, w});
    n.conv = {o.groups, transposed,
              transposed ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s,
              o.padding != 0, 1};
    n.stride = o.stride;
    n.padding = o.padding;
    if (bias != none) n.inputs.push_back(bias);
    return n;
  }
  node_id other(const char* op, std::string name, node_id x) {
    node n = make(qfold::op_kind::other, std::move(name), {x});
    n.op = op;
    return add(std::move(n));
  }
  node_id view_node(const char* op, std::string name, node_id x, std::vector<std::int64_t> p) {
    node n = make(qfold::op_kind::view, std::move(name), {x});
    n.op = op;
    n.view = std::move(p);
    return add(std::move(n));
  }

  // Element count of a shape; negative dimensions are an error.
  static std::size_t elements(const std::string& name, const std::vector<std::int64_t>& shape) {
    std::size_t count = 1;
    for (const std::int64_t d : shape) {
      if (d < 0) throw std::invalid_argument("tiny: " + name + ": negative dimension");
      count *= static_cast<std::size_t>(d);
    }
    return count;
  }
  static std::size_t byte_width(qfold::dtype t) {
    switch (t) {
      case qfold::dtype::int8:
      case qfold::dtype::uint8:
        return 1;
      case qfold::dtype::int16:
      case qfold::dtype::uint16:
        return 2;
      case qfold::dtype::int32:
        return 4;
    }
    return 0;
  }
  static qfold::qparams valid(const std::string& name, const qfold::qparams& q) {
    if (const auto r = qfold::validate(q); !r)
      throw std::invalid_argument("tiny: " + name + ": " + std::string(r.error().message));
    return q;
  }
  static std::int64_t valid_input_zero_point(const std::string& name, std::int64_t zp) {
    if (zp < qfold::range_of(qfold::dtype::int32).lo ||
        zp > qfold::range_of(qfold::dtype::int32).hi)
      throw std::invalid_argument("tiny: " + name + ": input zero point outside int32");
    return zp;
  }
  // numpy broadcasting: shapes right-aligned, each dimension equal or 1.
  static std::optional<std::vector<std::int64_t>> broadcast(const std::vector<std::int64_t>& a,
                                                            const std::vector<std::int64_t>& b) {
    const std::size_t rank = std::max(a.size(), b.size());
    std::vector<std::int64_t> r(rank);
    for (std::size_t i = 0; i < rank; ++i) {
      const std::int64_t da = i + a.size() < rank ? 1 : a[i + a.size() - rank];
      const std::int64_t db = i + b.size() < rank ? 1 : b[i + b.size() - rank];
      if (da != db && da != 1 && db != 1) return std::nullopt;
      r[i] = da == 1 ? db : da;
    }
    return r;
  }

  // Shape inference, when a node is built (operands always exist by then).
  std::vector<std::int64_t> infer(const node& n) const {
    using qfold::op_kind;
    const auto in = [&](std::size_t i) -> const std::vector<std::int64_t>& {
      return at(n.inputs[i]).shape;
    };
    const auto fail = [&](const std::string& what) {
      return std::invalid_argument("tiny: " + n.name + ": " + what);
    };
    switch (n.kind) {
      case op_kind::convolution: {
        const auto &x = in(0), &w = in(1);
        if (x.size() != 4 || w.size() != 4) throw fail("conv2d wants rank-4 input and weight");
        if (n.conv.groups < 1 || n.stride < 1 || n.padding < 0)
          throw fail("conv2d wants groups >= 1, stride >= 1, padding >= 0");
        std::vector<std::int64_t> r{x[0], n.conv.transposed ? w[1] * n.conv.groups : w[0]};
        for (std::size_t a = 2; a < 4; ++a)
          r.push_back(n.conv.transposed ? (x[a] - 1) * n.stride - 2 * n.padding + w[a]
                                        : (x[a] + 2 * n.padding - w[a]) / n.stride + 1);
        if (r[2] < 1 || r[3] < 1) throw fail("conv2d output would be empty");
        if (n.quantized) check_qconv(n, fail);
        return r;
      }
      case op_kind::linear: {  // like torch's F.linear: a rank-1 weight drops the last axis
        std::vector<std::int64_t> r = in(0);
        if (r.empty()) throw fail("linear wants an input of rank 1 or more");
        r.pop_back();
        if (in(1).size() == 2) r.push_back(in(1)[0]);
        return r;
      }
      case op_kind::rescale: {
        const std::size_t channels = in(0).empty() ? 0 : size(in(0).back());
        if (const auto ok = qfold::validate(n.rescale, n.scales, channels); !ok)
          throw fail(std::string(ok.error().message));
        return in(0);
      }
      case op_kind::mul:
      case op_kind::add:
      case op_kind::sub:
      case op_kind::div: {
        if (n.shift < 0 || n.shift > 63) throw fail("mul: shift outside 0..63");
        auto r = broadcast(in(0), in(1));
        if (!r) throw fail("operand shapes do not broadcast");
        return *std::move(r);
      }
      case op_kind::view:
        return view_shape(n, in(0), fail);
      case op_kind::other:
        if (n.op == "flatten") {
          std::int64_t rest = 1;
          for (std::size_t a = 1; a < in(0).size(); ++a) rest *= in(0)[a];
          return {in(0).at(0), rest};
        }
        return in(0);
      default:
        return in(0);  // batch_norm, table, quantize, dequantize
    }
  }
  template <class Fail>
  static std::vector<std::int64_t> view_shape(const node& n, const std::vector<std::int64_t>& in,
                                              const Fail& fail) {
    const std::vector<std::int64_t>& p = n.view;
    const auto rank = static_cast<std::int64_t>(in.size());
    if (n.op == "permute") {
      std::vector<bool> seen(in.size(), false);
      std::vector<std::int64_t> r;
      if (p.size() != in.size()) throw fail("permute: the permutation's length is not the rank");
      for (const std::int64_t a : p) {
        if (a < 0 || a >= rank || seen[size(a)]) throw fail("permute: not a permutation");
        seen[size(a)] = true;
        r.push_back(in[size(a)]);
      }
      return r;
    }
    if (n.op == "slice") {
      const std::int64_t axis = p[0], start = p[1], end = p[2];
      if (axis < 0 || axis >= rank) throw fail("slice: axis outside the rank");
      if (start < 0 || start >= end || end > in[size(axis)])
        throw fail("slice: wants 0 <= start < end <= the axis size");
      std::vector<std::int64_t> r = in;
      r[size(axis)] = end - start;
      return r;
    }
    // reshape
    if (elements(n.name, p) != elements(n.name, in))
      throw fail("reshape: the element count changes");
    return p;
  }
  // An integer conv's operands: int8 weights, int32 bias of the output channel count, zero
  // points in range, channels consistent with the groups.
  template <class Fail>
  void check_qconv(const node& n, const Fail& fail) const {
    const node& w = at(n.inputs[1]);
    const auto& xs = at(n.inputs[0]).shape;
    const std::int64_t cout = w.shape[0], groups = n.conv.groups;
    if (w.kind != qfold::op_kind::constant || !w.integer || w.type != qfold::dtype::int8)
      throw fail("qconv2d: the weight must be an int8 int_constant");
    if (cout % groups != 0 || xs[1] != w.shape[1] * groups)
      throw fail("qconv2d: channel counts do not match the groups");
    if (n.inputs.size() > 2) {
      const node& b = at(n.inputs[2]);
      if (b.kind != qfold::op_kind::constant || !b.integer || b.type != qfold::dtype::int32 ||
          b.shape != std::vector<std::int64_t>{cout})
        throw fail("qconv2d: the bias must be an int32 int_constant of shape (out_channels)");
    }
    const std::size_t zps = n.weight_zero_points.size();
    if (zps != 1 && zps != size(cout))
      throw fail("qconv2d: wants 1 or out_channels weight zero points");
    for (const std::int64_t zp : n.weight_zero_points)
      if (zp < -128 || zp > 127) throw fail("qconv2d: weight zero point outside int8");
    valid_input_zero_point(n.name, n.input_zero_point);
  }
  // The element type of n's output, when n is built.
  std::optional<qfold::dtype> element_of(const node& n) const {
    using qfold::op_kind;
    switch (n.kind) {
      case op_kind::input:
      case op_kind::cast:
        return n.element;
      case op_kind::constant:
        return n.integer ? std::optional<qfold::dtype>(n.type) : std::nullopt;
      case op_kind::rescale: {
        const qfold::rescale_attributes& a = n.rescale;
        const bool u = a.output_unsigned;
        if (a.output_type == qfold::int_type::i8)
          return u ? qfold::dtype::uint8 : qfold::dtype::int8;
        if (a.output_type == qfold::int_type::i16)
          return u ? qfold::dtype::uint16 : qfold::dtype::int16;
        if (a.output_type == qfold::int_type::i32) return qfold::dtype::int32;
        return std::nullopt;
      }
      case op_kind::table:
        return n.table16.empty() ? qfold::dtype::int8 : qfold::dtype::int32;
      case op_kind::mul:
      case op_kind::add:
      case op_kind::sub:
        return n.integer ? std::optional<qfold::dtype>(qfold::dtype::int32) : std::nullopt;
      case op_kind::convolution:
        return n.quantized ? std::optional<qfold::dtype>(qfold::dtype::int32) : std::nullopt;
      case op_kind::quantize:
        return n.qparams->type;
      case op_kind::clamp:
      case op_kind::view:
      case op_kind::other:
        return at(n.inputs[0]).element;
      default:
        return std::nullopt;  // float ops, dequantize
    }
  }
  node_id add(node n) {
    const auto id = static_cast<node_id>(nodes_.size());
    for (const node_id i : n.inputs) {
      if (i < 0 || index(i) >= nodes_.size() || !at(i).alive)
        throw std::invalid_argument("tiny: " + n.name + ": operand is not a live node");
    }
    if (n.kind != qfold::op_kind::input && n.kind != qfold::op_kind::constant) n.shape = infer(n);
    if (n.kind == qfold::op_kind::view || n.kind == qfold::op_kind::other)
      n.integer = at(n.inputs[0]).integer;
    n.element = element_of(n);
    for (const node_id i : n.inputs) mut(i).users.push_back(id);
    nodes_.push_back(std::move(n));
    return id;
  }

  std::vector<node> nodes_;
  std::vector<node_id> outputs_;
};

static_assert(qfold::batch_norm_foldable_graph<graph> && qfold::quantized_graph<graph> &&
              qfold::rescale_mergeable_graph<graph> && qfold::table_collapsible_graph<graph> &&
              qfold::table_composable_graph<graph> && qfold::detail::has_add_table16<graph>);

}  // namespace tiny
