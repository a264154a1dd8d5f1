// The batch-norm pass runs in constant evaluation: a graph whose storage is fixed arrays (so it
// can live in a constexpr function) is adapted through member functions, folded with
// qfold::fold_batch_norms, and the folded weights are checked against hand-derived values on
// g++ and clang++ (static_assert only: compiling is passing).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/graph/batch_norm_pass.hpp>
#include <span>
#include <vector>

namespace {
class fixed_graph {
 public:
  using node_id = int;

  struct node {
    qfold::op_kind kind = qfold::op_kind::other;
    std::array<node_id, 5> inputs{};
    std::size_t input_count = 0;
    std::array<float, 8> data{};
    std::size_t data_count = 0;
    std::array<std::int64_t, 4> shape{};  // a constant's shape, else the output shape
    std::size_t rank = 0;
    double epsilon = 0;
    bool training = false;
    bool alive = false;
  };

  constexpr node_id input(std::span<const std::int64_t> shape) {
    node n;
    n.kind = qfold::op_kind::input;
    set_shape(n, shape);
    return add(n);
  }
  constexpr node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    node n;
    n.kind = qfold::op_kind::constant;
    for (const float f : data) n.data.at(n.data_count++) = f;  // past the slots: not constant
    set_shape(n, shape);
    return add(n);
  }
  // Conv with an OIHW weight; the output keeps the input's rank.
  constexpr node_id conv(node_id x, node_id w) {
    node n;
    n.kind = qfold::op_kind::convolution;
    n.inputs = {x, w};
    n.input_count = 2;
    n.rank = at(x).rank;
    return add(n);
  }
  constexpr node_id batch_norm(node_id x, std::array<node_id, 4> params, double epsilon,
                               bool training) {
    node n;
    n.kind = qfold::op_kind::batch_norm;
    n.inputs = {x, params[0], params[1], params[2], params[3]};
    n.input_count = 5;
    n.rank = at(x).rank;
    n.epsilon = epsilon;
    n.training = training;
    return add(n);
  }
  constexpr void mark_output(node_id n) { output_ = n; }
  [[nodiscard]] constexpr node_id output() const { return output_; }
  [[nodiscard]] constexpr std::size_t live_count() const {
    std::size_t r = 0;
    for (std::size_t i = 0; i < count_; ++i) r += nodes_[i].alive ? 1u : 0u;
    return r;
  }
  [[nodiscard]] constexpr const node& at(node_id n) const {
    return nodes_.at(static_cast<std::size_t>(n));
  }

  // The adapter. Builders only read earlier nodes, so constants and inputs first, then the
  // rest in creation order, is an order with producers first.
  [[nodiscard]] constexpr std::vector<node_id> nodes() const {
    std::vector<node_id> r;
    for (const bool leaves : {true, false})
      for (std::size_t i = 0; i < count_; ++i) {
        const node& n = nodes_[i];
        const bool leaf = n.kind == qfold::op_kind::constant || n.kind == qfold::op_kind::input;
        if (n.alive && leaf == leaves) r.push_back(static_cast<node_id>(i));
      }
    return r;
  }
  [[nodiscard]] constexpr qfold::op_kind kind(node_id n) const { return at(n).kind; }
  [[nodiscard]] constexpr std::span<const node_id> operands(node_id n) const {
    return {at(n).inputs.data(), at(n).input_count};
  }
  [[nodiscard]] constexpr std::size_t use_count(node_id v) const {
    std::size_t r = output_ == v ? 1u : 0u;
    for (std::size_t i = 0; i < count_; ++i)
      for (std::size_t k = 0; nodes_[i].alive && k < nodes_[i].input_count; ++k)
        r += nodes_[i].inputs[k] == v ? 1u : 0u;
    return r;
  }
  [[nodiscard]] constexpr std::optional<qfold::tensor_view<float>> constant(node_id n) const {
    const node& c = at(n);
    if (c.kind != qfold::op_kind::constant) return std::nullopt;
    return qfold::tensor_view<float>{{c.data.data(), c.data_count}, {c.shape.data(), c.rank}};
  }
  [[nodiscard]] constexpr qfold::conv_attributes conv_attributes(node_id) const { return {}; }
  [[nodiscard]] constexpr qfold::batch_norm_attributes batch_norm_attributes(node_id n) const {
    return {at(n).epsilon, at(n).training};
  }
  [[nodiscard]] constexpr std::size_t output_rank(node_id n) const { return at(n).rank; }
  constexpr void set_operand(node_id n, std::size_t i, node_id v) {
    node& x = mut(n);
    x.inputs.at(i) = v;
    if (i == x.input_count) ++x.input_count;
  }
  constexpr void remove_last_operand(node_id n) { --mut(n).input_count; }
  constexpr void replace_uses(node_id old, node_id v) {
    for (std::size_t i = 0; i < count_; ++i)
      for (std::size_t k = 0; k < nodes_[i].input_count; ++k)
        if (nodes_[i].inputs[k] == old) nodes_[i].inputs[k] = v;
    if (output_ == old) output_ = v;
  }
  constexpr void erase(node_id n) noexcept { nodes_[static_cast<std::size_t>(n)].alive = false; }
  [[nodiscard]] constexpr std::size_t constant_bytes(node_id n) const {
    return at(n).data_count * sizeof(float);
  }

 private:
  static constexpr void set_shape(node& n, std::span<const std::int64_t> shape) {
    for (const std::int64_t d : shape) n.shape.at(n.rank++) = d;
  }
  constexpr node_id add(node n) {
    n.alive = true;
    nodes_.at(count_) = n;
    return static_cast<node_id>(count_++);
  }
  constexpr node& mut(node_id n) { return nodes_.at(static_cast<std::size_t>(n)); }

  std::array<node, 16> nodes_{};
  std::size_t count_ = 0;
  node_id output_ = -1;
};
static_assert(qfold::batch_norm_foldable_graph<fixed_graph>);

// The same graph with the optional point add_scaled_constant: the pass hands it the fold, and it
// makes the values (one at a time, as a writer's pieces) in the constant expression too.
class scaled_graph : public fixed_graph {
 public:
  constexpr std::optional<node_id> add_scaled_constant(const qfold::scaled_weights& w) {
    std::array<float, 8> v{};
    const std::size_t n = w.weights.size();
    if (n > v.size()) return std::nullopt;
    for (std::size_t i = 0; i < n; ++i)
      if (w.values(i, std::span<float>(v).subspan(i, 1))) return std::nullopt;
    ++scaled;
    return add_constant(std::span<const float>(v.data(), n), w.weights.shape);
  }
  std::size_t scaled = 0;
};
static_assert(qfold::batch_norm_foldable_graph<scaled_graph>);

struct fold_result {
  std::array<float, 2> weight{}, bias{};
  std::size_t folded = 0, rejected = 0, bytes_removed = 0, live_before = 0, live_after = 0;
  qfold::reason reason{};
  std::size_t scaled = 0;
};

// conv (OIHW 2x1x1x1, weight {3, -2}, no bias) on a (1, 1, 1, 1) input, then batch norm with
// eps = 0 and variance {4, 0.25}.
template <class Graph>
constexpr fold_result fold(bool training) {
  Graph g;
  const auto c = [&](std::array<float, 2> v, std::array<std::int64_t, 4> shape, std::size_t rank) {
    return g.add_constant(v, std::span<const std::int64_t>(shape.data(), rank));
  };
  constexpr std::array<std::int64_t, 4> in_shape{1, 1, 1, 1};
  const int x = g.input(in_shape);
  const int conv = g.conv(x, c({3, -2}, {2, 1, 1, 1}, 4));
  const int gamma = c({1, 0.5f}, {2}, 1), beta = c({0.25f, -1}, {2}, 1);
  const int mean = c({1, 2}, {2}, 1), var = c({4, 0.25f}, {2}, 1);
  g.mark_output(g.batch_norm(conv, {gamma, beta, mean, var}, 0.0, training));

  fold_result r;
  r.live_before = g.live_count();
  const auto report = qfold::fold_batch_norms(g);
  r.live_after = g.live_count();
  r.folded = report.folded();
  r.rejected = report.rejected();
  r.bytes_removed = report.bytes_removed();
  if (!report.sites.empty() && report.sites[0].rejected) r.reason = report.sites[0].rejected->code;
  if constexpr (requires { g.scaled; }) r.scaled = g.scaled;
  if (g.output() == conv && g.operands(conv).size() == 3) {
    const auto w = g.constant(g.operands(conv)[1]), b = g.constant(g.operands(conv)[2]);
    for (std::size_t i = 0; i < 2; ++i) {
      r.weight[i] = w->data[i];
      r.bias[i] = b->data[i];
    }
  }
  return r;
}

// variance {4, 0.25}, eps 0: rsqrt = 1 / sqrt(var) = {0.5, 2}, exact.
// weight' = w * (gamma * rsqrt) = {3 * 0.5, -2 * (0.5 * 2)} = {1.5, -2}
// bias' = ((0 - mean) * rsqrt) * gamma + beta = {-1 * 0.5 * 1 + 0.25, -2 * 2 * 0.5 - 1}
//       = {-0.25, -3}; every step is exact in float32, so == is the right test.
constexpr fold_result folded = fold<fixed_graph>(false);
static_assert(folded.folded == 1 && folded.rejected == 0);
static_assert(folded.weight[0] == 1.5f && folded.weight[1] == -2.0f);
static_assert(folded.bias[0] == -0.25f && folded.bias[1] == -3.0f);
// Gone: the batch norm, the old weight and the 4 parameters (5 constants x 2 floats = 40 bytes);
// new: the folded weight and bias.
static_assert(folded.bytes_removed == 5 * 2 * sizeof(float));
static_assert(folded.live_before == 8 && folded.live_after == 4);

// A refused site (training mode) at compile time: nothing changes. (Not a non-finite fold:
// 1 / 0, 0 * inf and float overflow are not constant expressions, so there the compile fails.)
constexpr fold_result refused = fold<fixed_graph>(true);
static_assert(refused.folded == 0 && refused.rejected == 1);
static_assert(refused.reason == qfold::reason::training_mode);
static_assert(refused.bytes_removed == 0 && refused.live_after == refused.live_before);

// Deferred to the adapter: the same bits, the same graph after; refused before it is asked.
constexpr fold_result deferred = fold<scaled_graph>(false);
static_assert(deferred.scaled == 1 && deferred.folded == 1);
static_assert(deferred.weight == folded.weight && deferred.bias == folded.bias);
static_assert(deferred.bytes_removed == folded.bytes_removed);
static_assert(deferred.live_after == folded.live_after);
constexpr fold_result deferred_refused = fold<scaled_graph>(true);
static_assert(deferred_refused.scaled == 0 && deferred_refused.rejected == 1);
}  // namespace
