// tiny: the demo's own compact IR (nodes in a vector, built with helpers) and its qfold adapter,
// written as the member functions that qfold::ir_traits forwards to. Run it with interpreter.hpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
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
    std::string op;  // what an `other` node computes: "relu", "flatten"
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
  };

  // --- Building --------------------------------------------------------------------------------
  node_id input(std::string name, std::vector<std::int64_t> shape) {
    node n = make(qfold::op_kind::input, std::move(name), {});
    n.shape = std::move(shape);
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

  // FNV-1a over every live node's id, kind, op, operands, attributes, shape and constant bytes,
  // and the outputs: equal before and after means the graph is exactly as it was.
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
    if (x.kind != qfold::op_kind::constant) return std::nullopt;
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
  void set_operand(node_id n, std::size_t i, node_id v) {
    auto& in = mut(n).inputs;
    if (i > in.size()) throw std::out_of_range("tiny: set_operand beyond the operand count");
    if (i == in.size()) {
      in.resize(i + 1, v);  // not push_back: g++ 12 -O3 warns falsely (-Warray-bounds) there
    } else {
      drop_user(in[i], n);
      in[i] = v;
    }
    mut(v).users.push_back(n);
  }
  void replace_uses(node_id old, node_id v) {
    if (old == v) return;
    for (const node_id u : std::exchange(mut(old).users, {})) {  // one entry per slot
      auto& in = mut(u).inputs;
      *std::ranges::find(in, old) = v;
      mut(v).users.push_back(u);
    }
    for (node_id& o : outputs_)
      if (o == old) o = v;
    mut(v).output_uses += std::exchange(mut(old).output_uses, 0);
  }
  void erase(node_id n) {
    node& x = mut(n);
    if (!x.alive || use_count(n) != 0) throw std::logic_error("tiny: erase of a used node");
    for (const node_id i : x.inputs) drop_user(i, n);
    x.alive = false;
    x.inputs.clear();
    x.data = {};
  }
  [[nodiscard]] std::size_t constant_bytes(node_id n) const {
    return at(n).data.size() * sizeof(float);
  }

 private:
  static std::size_t index(node_id n) { return static_cast<std::size_t>(n); }
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
              transposed ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s};
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

  // Shape inference, when a node is built (operands always exist by then).
  std::vector<std::int64_t> infer(const node& n) const {
    using qfold::op_kind;
    const auto in = [&](std::size_t i) -> const std::vector<std::int64_t>& {
      return at(n.inputs[i]).shape;
    };
    const auto fail = [&](const char* what) {
      return std::invalid_argument("tiny: " + n.name + ": " + what);
    };
    switch (n.kind) {
      case op_kind::convolution: {
        const auto &x = in(0), &w = in(1);
        if (x.size() != 4 || w.size() != 4) throw fail("conv2d wants rank-4 input and weight");
        std::vector<std::int64_t> r{x[0], n.conv.transposed ? w[1] * n.conv.groups : w[0]};
        for (std::size_t a = 2; a < 4; ++a)
          r.push_back(n.conv.transposed ? (x[a] - 1) * n.stride - 2 * n.padding + w[a]
                                        : (x[a] + 2 * n.padding - w[a]) / n.stride + 1);
        return r;
      }
      case op_kind::linear: {  // like torch's F.linear: a rank-1 weight drops the last axis
        std::vector<std::int64_t> r = in(0);
        if (r.empty()) throw fail("linear wants an input of rank 1 or more");
        r.pop_back();
        if (in(1).size() == 2) r.push_back(in(1)[0]);
        return r;
      }
      case op_kind::other:
        if (n.op == "flatten") {
          std::int64_t rest = 1;
          for (std::size_t a = 1; a < in(0).size(); ++a) rest *= in(0)[a];
          return {in(0).at(0), rest};
        }
        return in(0);
      default:
        return in(0);  // batch_norm
    }
  }
  node_id add(node n) {
    const auto id = static_cast<node_id>(nodes_.size());
    for (const node_id i : n.inputs) {
      if (i < 0 || index(i) >= nodes_.size() || !at(i).alive)
        throw std::invalid_argument("tiny: " + n.name + ": operand is not a live node");
    }
    if (n.kind != qfold::op_kind::input && n.kind != qfold::op_kind::constant) n.shape = infer(n);
    for (const node_id i : n.inputs) mut(i).users.push_back(id);
    nodes_.push_back(std::move(n));
    return id;
  }

  std::vector<node> nodes_;
  std::vector<node_id> outputs_;
};

static_assert(qfold::batch_norm_foldable_graph<graph>);

}  // namespace tiny
