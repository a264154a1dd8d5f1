// The batch-norm pass over the demo IR (examples/tiny_ir): a folded network computes what the
// unfolded one did (run by tiny's reference interpreter), the folded constants are exactly what
// qfold::fold_batch_norm computes, every guard refuses with its reason and leaves the graph as it
// was, shared constants are copied and never changed, and constants left unused are dropped.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <qfold/qfold.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using id = tiny::graph::node_id;
using qfold::reason;

std::size_t elements(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}
id random_constant(tiny::graph& g, const std::string& name, std::vector<std::int64_t> shape,
                   std::uint64_t seed, float lo = -0.5f, float hi = 0.5f) {
  const std::size_t n = elements(shape);
  return g.constant(name, tiny::random_floats(n, seed, lo, hi), std::move(shape));
}
// Batch norm with random statistics: gamma in [0.5, 1.5), variance in [0.25, 2).
id random_bn(tiny::graph& g, const std::string& name, id x, std::int64_t channels,
             std::uint64_t seed) {
  return g.batch_norm(name, x, random_constant(g, name + ".gamma", {channels}, seed, 0.5f, 1.5f),
                      random_constant(g, name + ".beta", {channels}, seed + 1, -1, 1),
                      random_constant(g, name + ".mean", {channels}, seed + 2, -1, 1),
                      random_constant(g, name + ".var", {channels}, seed + 3, 0.25f, 2));
}

// Every foldable kind in one network: conv, grouped conv (no bias), grouped transposed conv
// (stride and padding), depthwise conv, linear on (N, C).
struct network {
  tiny::graph g;
  std::vector<id> batch_norms;
};
network make_network(std::uint64_t seed) {
  network n;
  auto& g = n.g;
  const id x = g.input("x", {2, 3, 6, 6});
  const id c1 = g.conv2d("conv", x, random_constant(g, "conv.w", {8, 3, 3, 3}, seed),
                         random_constant(g, "conv.b", {8}, seed + 1), {.padding = 1});
  n.batch_norms.push_back(random_bn(g, "bn_conv", c1, 8, seed + 10));
  const id r = g.relu("relu", n.batch_norms.back());
  const id c2 = g.conv2d("grouped", r, random_constant(g, "grouped.w", {8, 4, 3, 3}, seed + 2),
                         tiny::graph::none, {.groups = 2, .stride = 2, .padding = 1});
  n.batch_norms.push_back(random_bn(g, "bn_grouped", c2, 8, seed + 20));  // (2, 8, 3, 3)
  const id c3 = g.conv_transpose2d(
      "deconv", n.batch_norms.back(), random_constant(g, "deconv.w", {8, 2, 3, 3}, seed + 3),
      random_constant(g, "deconv.b", {4}, seed + 4), {.groups = 2, .stride = 2, .padding = 1});
  n.batch_norms.push_back(random_bn(g, "bn_deconv", c3, 4, seed + 30));  // (2, 4, 5, 5)
  const id c4 = g.conv2d("depthwise", n.batch_norms.back(),
                         random_constant(g, "depthwise.w", {4, 1, 3, 3}, seed + 5),
                         tiny::graph::none, {.groups = 4, .padding = 1});
  n.batch_norms.push_back(random_bn(g, "bn_depthwise", c4, 4, seed + 40));
  const id fc = g.linear("fc", g.flatten("flatten", n.batch_norms.back()),
                         random_constant(g, "fc.w", {6, 100}, seed + 6),
                         random_constant(g, "fc.b", {6}, seed + 7));
  n.batch_norms.push_back(random_bn(g, "bn_fc", fc, 6, seed + 50));
  g.mark_output(n.batch_norms.back());
  return n;
}

// A site's data before folding, to recompute the fold with qfold::fold_batch_norm.
struct site_data {
  id producer;
  std::vector<float> w, b, gamma, beta, mean, var;
  std::vector<std::int64_t> shape;
  qfold::conv_attributes conv;
  bool linear;
  float epsilon;
};
std::vector<float> data_of(const tiny::graph& g, id n) {
  const auto c = g.constant(n);
  REQUIRE(c.has_value());
  return {c->data.begin(), c->data.end()};
}
site_data capture(const tiny::graph& g, id bn) {
  const auto ops = g.operands(bn);
  const id p = ops[0];
  const auto pops = g.operands(p);
  return {p,
          data_of(g, pops[1]),
          pops.size() > 2 ? data_of(g, pops[2]) : std::vector<float>{},
          data_of(g, ops[1]),
          data_of(g, ops[2]),
          data_of(g, ops[3]),
          data_of(g, ops[4]),
          g.at(pops[1]).shape,
          g.conv_attributes(p),
          g.kind(p) == qfold::op_kind::linear,
          static_cast<float>(g.batch_norm_attributes(bn).epsilon)};
}
bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}
// The producer now reads constants equal, bit for bit, to fold_batch_norm on the old data.
void check_folded_constants(const tiny::graph& g, const site_data& s) {
  const auto ops = g.operands(s.producer);
  REQUIRE(ops.size() == 3);
  const auto w = g.constant(ops[1]), b = g.constant(ops[2]);
  REQUIRE(w.has_value());
  REQUIRE(b.has_value());
  std::vector<float> want_w(s.w.size()), want_b(s.mean.size());
  const auto r = qfold::fold_batch_norm(
      qfold::weights_view<float>{s.w, s.shape, s.conv.layout, s.conv.groups, s.linear},
      std::span<const float>(s.b),
      qfold::batch_norm_params<float>{s.mean, s.var, s.gamma, s.beta, s.epsilon, false},
      std::span<float>(want_w), std::span<float>(want_b));
  REQUIRE_FALSE(r.has_value());
  CHECK(same_bits(w->data, want_w));
  CHECK(same_bits(b->data, want_b));
  CHECK(std::ranges::equal(w->shape, s.shape));
  CHECK(std::ranges::equal(b->shape, std::vector<std::int64_t>{std::ssize(s.mean)}));
}

// max |a - b| / max |a|
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, magnitude = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(double{a[i]} - double{b[i]}));
    magnitude = std::max(magnitude, std::abs(double{a[i]}));
  }
  REQUIRE(magnitude > 0);
  return diff / magnitude;
}

bool topological(const tiny::graph& g) {
  std::vector<bool> seen(g.slots(), false);
  for (const id n : g.nodes()) {
    for (const id o : g.operands(n))
      if (!seen[static_cast<std::size_t>(o)]) return false;
    seen[static_cast<std::size_t>(n)] = true;
  }
  return true;
}
}  // namespace

TEST_CASE("tiny interpreter: conv, grouped transposed conv and batch norm by hand",
          "[graph][tiny]") {
  SECTION("conv2d, stride 1, padding 1, 2x2 ones: sums of the window over a zero border") {
    tiny::graph g;
    const id x = g.input("x", {1, 1, 2, 2});
    g.mark_output(g.conv2d("c", x, g.constant("w", {1, 1, 1, 1}, {1, 1, 2, 2}), tiny::graph::none,
                           {.padding = 1}));
    CHECK(tiny::run(g, {1, 2, 3, 4}) == std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4});
  }
  SECTION("transposed 1x1, groups 2: weight (i, j) feeds output channel (i / 1) * 2 + j") {
    tiny::graph g;
    const id x = g.input("x", {1, 2, 1, 1});
    g.mark_output(g.conv_transpose2d("t", x, g.constant("w", {1, 2, 3, 4}, {2, 2, 1, 1}),
                                     g.constant("b", {0, 0, 0, 100}, {4}), {.groups = 2}));
    CHECK(tiny::run(g, {1, 10}) == std::vector<float>{1, 2, 30, 140});
  }
  SECTION("transposed 2x2 ones, stride 2, padding 1: each input fills a 2x2 block, border cut") {
    tiny::graph g;
    const id x = g.input("x", {1, 1, 2, 2});
    const id t = g.conv_transpose2d("t", x, g.constant("w", {1, 1, 1, 1}, {1, 1, 2, 2}),
                                    tiny::graph::none, {.stride = 2, .padding = 1});
    g.mark_output(t);
    CHECK(g.output_rank(t) == 4);
    CHECK(g.at(t).shape == std::vector<std::int64_t>{1, 1, 2, 2});
    CHECK(tiny::run(g, {1, 2, 3, 4}) == std::vector<float>{1, 2, 3, 4});
  }
  SECTION("batch norm on axis 1 of (N, C): (x - mean) / sqrt(var + eps) * gamma + beta") {
    tiny::graph g;
    const id x = g.input("x", {2, 2});
    const auto c = [&](const char* name, std::vector<float> v) {
      return g.constant(name, std::move(v), {2});
    };
    g.mark_output(g.batch_norm("bn", x, c("g", {2, 3}), c("b", {1, -1}), c("m", {1, 2}),
                               c("v", {4, 9}), 0.0));
    CHECK(tiny::run(g, {3, 5, 5, 8}) == std::vector<float>{3, 2, 5, 5});
  }
}

TEST_CASE("batch norm: folded network equals the unfolded one on random inputs (5 seeds)",
          "[graph][batch_norm]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    network n = make_network(seed * 1000);
    std::vector<site_data> sites;
    for (const id bn : n.batch_norms) sites.push_back(capture(n.g, bn));
    const std::vector<std::vector<float>> inputs{tiny::random_floats(216, seed),
                                                 tiny::random_floats(216, seed + 99, -3, 3)};
    std::vector<std::vector<float>> before;
    for (const auto& in : inputs) before.push_back(tiny::run(n.g, in));
    const std::size_t live = n.g.live_count();

    const auto report = qfold::fold_batch_norms(n.g);
    REQUIRE(report.folded() == 5);
    REQUIRE(report.rejected() == 0);
    // Per site the batch norm, its 4 parameters and the old weight (and bias, 3 sites have one)
    // go, and a new weight and bias come: -5 with a bias, -4 without.
    CHECK(n.g.live_count() == live - 3 * 5 - 2 * 4);
    CHECK(topological(n.g));
    for (const id bn : n.batch_norms) CHECK_FALSE(n.g.at(bn).alive);
    for (const auto& s : sites) check_folded_constants(n.g, s);

    // The interpreter accumulates in double and rounds once per op, so the two graphs differ
    // only by float32 rounding of the folded weights and biases (relative 2^-24 each) and the
    // unfolded graph's extra rounding between conv and batch norm: per layer a few units of
    // 2^-24 of the sum of |terms| (at most 100 terms), carried through 5 layers. 1e-5 of the
    // output magnitude leaves a margin (observed here: 0.8e-7 to 2.7e-7) while a fold on a wrong
    // axis or channel is off by order 1.
    for (std::size_t i = 0; i < inputs.size(); ++i)
      CHECK(relative_difference(before[i], tiny::run(n.g, inputs[i])) < 1e-5);
  }
}

namespace {
// Runs the pass on a graph with exactly one batch-norm site, which it must refuse for `why`;
// the graph must be exactly as it was.
template <class G>  // tiny::graph, or an adapter derived from it
qfold::rejection expect_rejected(G& g, reason why) {
  const std::uint64_t hash = g.structural_hash();
  const std::size_t live = g.live_count();
  const auto r = qfold::fold_batch_norms(g);
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.rejected() == 1);
  REQUIRE(r.sites[0].rejected.has_value());
  CHECK(qfold::to_string(r.sites[0].rejected->code) == qfold::to_string(why));
  CHECK(r.bytes_removed() == 0);
  CHECK(g.structural_hash() == hash);
  CHECK(g.live_count() == live);
  std::ostringstream text;
  qfold::print(text, r, [&](id n) { return g.name(n); });
  CHECK(text.str().find(std::string(qfold::to_string(why))) != std::string::npos);
  return *r.sites[0].rejected;
}

// conv (4 -> 4, 3x3, bias) + batch norm over (1, 4, 5, 5); the parameters can be swapped for
// non-constant or mis-sized ones.
struct conv_bn {
  tiny::graph g;
  id x, w, b, conv = tiny::graph::none;
  std::vector<id> params;  // gamma, beta, mean, var
  id bn = tiny::graph::none;
  conv_bn() {
    x = g.input("x", {1, 4, 5, 5});
    w = random_constant(g, "w", {4, 4, 3, 3}, 1);
    b = random_constant(g, "b", {4}, 2);
    for (std::uint64_t i = 0; i < 4; ++i)
      params.push_back(random_constant(g, "p" + std::to_string(i), {4}, 10 + i, 0.5f, 1.5f));
  }
  id finish(double epsilon = 1e-5, bool training = false) {
    if (conv == tiny::graph::none) conv = g.conv2d("conv", x, w, b);
    bn = g.batch_norm("bn", conv, params[0], params[1], params[2], params[3], epsilon, training);
    g.mark_output(bn);
    return bn;
  }
};
}  // namespace

TEST_CASE("batch norm: the baseline of the guard tests folds", "[graph][batch_norm]") {
  conv_bn s;
  s.finish();
  const auto r = qfold::fold_batch_norms(s.g);
  CHECK(r.folded() == 1);
}

TEST_CASE("batch norm guard: training mode", "[graph][batch_norm][guard]") {
  conv_bn s;
  s.finish(1e-5, true);
  expect_rejected(s.g, reason::training_mode);
}

TEST_CASE("batch norm guard: non-constant weight, bias or parameter",
          "[graph][batch_norm][guard]") {
  SECTION("the weight is a graph input") {
    conv_bn s;
    s.w = s.g.input("w_in", {4, 4, 3, 3});
    s.finish();
    expect_rejected(s.g, reason::not_constant);
  }
  SECTION("the conv bias is computed") {
    conv_bn s;
    s.b = s.g.relu("b_relu", s.g.input("b_in", {4}));
    s.finish();
    expect_rejected(s.g, reason::not_constant);
  }
  SECTION("gamma is computed from an input") {
    conv_bn s;
    s.params[0] = s.g.relu("gamma", s.g.input("gamma_in", {4}));
    s.finish();
    expect_rejected(s.g, reason::not_constant);
  }
  SECTION("the variance is an input") {
    conv_bn s;
    s.params[3] = s.g.input("var_in", {4});
    s.finish();
    expect_rejected(s.g, reason::not_constant);
  }
}

TEST_CASE("batch norm guard: the conv output has another consumer", "[graph][batch_norm][guard]") {
  SECTION("another node") {
    conv_bn s;
    s.conv = s.g.conv2d("conv", s.x, s.w, s.b);
    s.g.mark_output(s.g.relu("other", s.conv));
    s.finish();
    expect_rejected(s.g, reason::shared_output);
  }
  SECTION("a graph output") {
    conv_bn s;
    s.conv = s.g.conv2d("conv", s.x, s.w, s.b);
    s.g.mark_output(s.conv);
    s.finish();
    expect_rejected(s.g, reason::shared_output);
  }
}

TEST_CASE("batch norm guard: parameter lengths differ from the channel count",
          "[graph][batch_norm][guard]") {
  SECTION("all four parameters of length 3 for 4 channels") {
    conv_bn s;
    for (std::uint64_t i = 0; i < 4; ++i)
      s.params[i] = random_constant(s.g, "short" + std::to_string(i), {3}, 20 + i, 0.5f, 1.5f);
    s.finish();
    expect_rejected(s.g, reason::channel_mismatch);
  }
  SECTION("only gamma is short") {
    conv_bn s;
    s.params[0] = random_constant(s.g, "gamma3", {3}, 30, 0.5f, 1.5f);
    s.finish();
    expect_rejected(s.g, reason::channel_mismatch);
  }
  SECTION("the conv bias is long") {
    conv_bn s;
    s.b = random_constant(s.g, "b5", {5}, 31);
    s.finish();
    expect_rejected(s.g, reason::channel_mismatch);
  }
}

TEST_CASE("batch norm guard: ambiguous channel axis", "[graph][batch_norm][guard]") {
  SECTION("linear output of rank 3 (N, T, C): is the channel T or C?") {
    tiny::graph g;
    const id fc = g.linear("fc", g.input("x", {2, 5, 6}), random_constant(g, "w", {4, 6}, 1));
    REQUIRE(g.output_rank(fc) == 3);
    g.mark_output(random_bn(g, "bn", fc, 4, 2));
    const auto r = expect_rejected(g, reason::ambiguous_axis);
    CHECK(std::string(r.message).find("rank 2") != std::string::npos);
  }
  SECTION("a weight of rank 1 (linear on (N, T, C) -> (N, T)): no output axis in the weight") {
    tiny::graph g;
    const id fc = g.linear("fc", g.input("x", {2, 3, 6}), random_constant(g, "w", {6}, 1));
    REQUIRE(g.output_rank(fc) == 2);
    g.mark_output(random_bn(g, "bn", fc, 3, 2));
    const auto r = expect_rejected(g, reason::ambiguous_axis);
    CHECK(std::string(r.message).find("rank below 2") != std::string::npos);
  }
}

TEST_CASE("batch norm guard: non-finite folded values", "[graph][batch_norm][guard]") {
  // variance -eps: var + eps is exactly 0 in float32, so 1 / sqrt(0) = inf scales channel 2.
  conv_bn s;
  std::vector<float> var(4, 1.0f);
  var[2] = -1e-5f;
  s.params[3] = s.g.constant("var", var, {4});
  s.finish(1e-5);
  const auto r = expect_rejected(s.g, reason::non_finite);
  CHECK(r.index == 2 * 4 * 3 * 3);  // the first weight of output channel 2
}

TEST_CASE("batch norm guard: batch norm after a node that is not conv or linear",
          "[graph][batch_norm][guard]") {
  conv_bn s;
  s.conv = s.g.relu("relu", s.g.conv2d("conv", s.x, s.w, s.b));
  s.finish();
  expect_rejected(s.g, reason::unsupported);
}

TEST_CASE("batch norm: a weight shared with another conv is copied, never changed in place",
          "[graph][batch_norm][sharing]") {
  tiny::graph g;
  const id x = g.input("x", {1, 4, 5, 5});
  const id w = random_constant(g, "shared.w", {4, 4, 3, 3}, 1);
  const std::vector<float> original = data_of(g, w);
  const id c1 = g.conv2d("conv1", x, w);
  const id bn = random_bn(g, "bn", c1, 4, 10);
  const id c2 = g.conv2d("conv2", x, w);  // reads w, no batch norm
  g.mark_output(bn);
  g.mark_output(g.relu("relu", c2));
  const std::vector<float> in = tiny::random_floats(100, 5);
  const std::vector<float> before = tiny::run(g, in);
  const site_data site = capture(g, bn);

  const auto r = qfold::fold_batch_norms(g);
  REQUIRE(r.folded() == 1);
  REQUIRE(g.at(w).alive);  // still read by conv2
  CHECK(g.use_count(w) == 1);
  CHECK(g.operands(c2)[1] == w);
  CHECK(g.operands(c1)[1] != w);
  CHECK(same_bits(g.constant(w)->data, original));
  check_folded_constants(g, site);
  // Only the batch norm's 4 parameters went: 4 x 4 floats.
  CHECK(r.bytes_removed() == 4 * 4 * sizeof(float));
  CHECK(relative_difference(before, tiny::run(g, in)) < 1e-5);  // tolerance: see the network test
}

TEST_CASE("batch norm: shared constants are dropped once, by the last site that used them",
          "[graph][batch_norm][sharing]") {
  tiny::graph g;
  const id x = g.input("x", {1, 4, 5, 5});
  const id w = random_constant(g, "shared.w", {4, 4, 3, 3}, 1);
  const id ones = g.constant("ones", std::vector<float>(4, 1.0f), {4});
  const auto param = [&](const char* name, std::uint64_t seed) {
    return random_constant(g, name, {4}, seed, 0.5f, 1.5f);
  };
  const id beta = param("beta", 2), mean1 = param("mean1", 3), mean2 = param("mean2", 4);
  // bn1 uses `ones` as gamma and as variance: one constant, two parameters, one erase.
  const id bn1 = g.batch_norm("bn1", g.conv2d("conv1", x, w), ones, beta, mean1, ones);
  const id bn2 = g.batch_norm("bn2", g.conv2d("conv2", x, w), ones, beta, mean2, ones);
  g.mark_output(bn1);
  g.mark_output(bn2);
  const std::vector<float> in = tiny::random_floats(100, 6);
  const std::vector<float> before = tiny::run(g, in);
  const std::size_t w_bytes = g.constant_bytes(w), p_bytes = g.constant_bytes(ones);
  REQUIRE(w_bytes == 144 * sizeof(float));
  REQUIRE(p_bytes == 4 * sizeof(float));

  const auto r = qfold::fold_batch_norms(g);
  REQUIRE(r.folded() == 2);
  // Site 1 frees only mean1 (w, ones, beta are still read by site 2); site 2 frees the rest.
  CHECK(r.sites[0].bytes_removed == p_bytes);
  CHECK(r.sites[1].bytes_removed == w_bytes + 3 * p_bytes);
  for (const id c : {w, ones, beta, mean1, mean2}) CHECK_FALSE(g.at(c).alive);
  CHECK(topological(g));
  CHECK(relative_difference(before, tiny::run(g, in)) < 1e-5);
}

TEST_CASE("batch norm: constants left without users are dropped, bytes_removed is their size",
          "[graph][batch_norm]") {
  conv_bn s;
  s.finish();
  std::vector<id> old{s.w, s.b};
  old.insert(old.end(), s.params.begin(), s.params.end());
  std::size_t bytes = 0;
  for (const id c : old) bytes += s.g.constant_bytes(c);
  REQUIRE(bytes == (144 + 4 + 4 * 4) * sizeof(float));

  const auto r = qfold::fold_batch_norms(s.g);
  REQUIRE(r.folded() == 1);
  CHECK(r.bytes_removed() == bytes);
  CHECK(r.sites[0].bytes_removed == bytes);
  for (const id c : old) CHECK_FALSE(s.g.at(c).alive);
  CHECK_FALSE(s.g.at(s.bn).alive);
  CHECK(s.g.outputs() == std::vector<id>{s.conv});  // the output now reads the conv
  // x, conv, and the new weight and bias.
  CHECK(s.g.live_count() == 4);
  CHECK(topological(s.g));
}

namespace {
// An adapter that lends room for the folded weights (the optional point constant_storage), well
// or badly: room of the wrong size, or overlapping the weights the fold reads, must not be used.
struct lending_graph : tiny::graph {
  enum class lend { good, short_by_one, over_weight, none } mode = lend::good;
  std::vector<float> room;
  id weight = tiny::graph::none;
  std::vector<const float*> added;  // data() of each add_constant's values
  std::span<float> constant_storage(std::size_t n) {
    switch (mode) {
      case lend::good:
        room.assign(n, 0.0f);
        return room;
      case lend::short_by_one:
        room.assign(n, 0.0f);
        return {room.data(), n - 1};
      case lend::over_weight:  // one float past the weights' start: hostile
        return {const_cast<float*>(constant(weight)->data.data()) + 1, n};
      case lend::none:
        break;
    }
    return {};
  }
  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    added.push_back(data.data());
    return tiny::graph::add_constant(data, shape);
  }
};
}  // namespace

TEST_CASE("batch norm: folds into the adapter's room when it lends good room, else its own",
          "[graph][batch_norm]") {
  using lend = lending_graph::lend;
  for (const lend mode : {lend::good, lend::short_by_one, lend::over_weight, lend::none}) {
    INFO("mode " << static_cast<int>(mode));
    lending_graph g;
    g.mode = mode;
    const id x = g.input("x", {1, 4, 5, 5});
    g.weight = random_constant(g, "w", {4, 4, 3, 3}, 1);
    const id conv = g.conv2d("conv", x, g.weight, random_constant(g, "b", {4}, 2));
    const id bn = random_bn(g, "bn", conv, 4, 10);
    g.mark_output(bn);
    const std::vector<float> in = tiny::random_floats(100, 5);
    const std::vector<float> before = tiny::run(g, in);
    const site_data site = capture(g, bn);
    const auto r = qfold::fold_batch_norms(g);
    REQUIRE(r.folded() == 1);
    check_folded_constants(g, site);
    REQUIRE(g.added.size() == 2);  // weights, then bias
    // Only good room is filled in place and handed to add_constant; otherwise the pass's own
    // buffer is.
    CHECK((g.added[0] == g.room.data()) == (mode == lend::good));
    CHECK(relative_difference(before, tiny::run(g, in)) < 1e-5);
  }
}

namespace {
// An adapter that shows the weights only as bytes at an odd address (the optional point
// unaligned_constant, as a model file's tensor data), well or badly: a view whose count or
// address disagrees with its shape must be refused; none (nullopt) means constant() is read.
struct unaligned_graph : lending_graph {
  enum class show { good, short_by_one, null_bytes, none } how = show::good;
  std::vector<std::byte> bytes;
  std::optional<qfold::tensor_view<float>> constant(node_id n) const {
    if (n == weight && how != show::none) return std::nullopt;  // only through the bytes
    return tiny::graph::constant(n);
  }
  std::optional<qfold::unaligned_tensor_view> unaligned_constant(node_id n) const {
    if (n != weight || how == show::none) return std::nullopt;
    const auto c = tiny::graph::constant(n);
    const std::size_t count = c->data.size() - (how == show::short_by_one ? 1 : 0);
    return qfold::unaligned_tensor_view{
        {how == show::null_bytes ? nullptr : bytes.data() + 1, count}, c->shape};
  }
};
}  // namespace

TEST_CASE("batch norm: reads the weights in place through unaligned_constant, checked",
          "[graph][batch_norm]") {
  using show = unaligned_graph::show;
  using lend = lending_graph::lend;
  for (const show how : {show::good, show::short_by_one, show::null_bytes, show::none})
    for (const lend mode : {lend::good, lend::none}) {
      INFO("show " << static_cast<int>(how) << ", lend " << static_cast<int>(mode));
      unaligned_graph g;
      g.how = how;
      g.mode = mode;
      const id x = g.input("x", {1, 4, 5, 5});
      g.weight = random_constant(g, "w", {4, 4, 3, 3}, 1);
      const auto w = g.tiny::graph::constant(g.weight)->data;
      g.bytes.resize(w.size_bytes() + 1);
      std::memcpy(g.bytes.data() + 1, w.data(), w.size_bytes());
      const id conv = g.conv2d("conv", x, g.weight, random_constant(g, "b", {4}, 2));
      const id bn = random_bn(g, "bn", conv, 4, 10);
      g.mark_output(bn);
      const std::vector<float> in = tiny::random_floats(100, 5);
      const std::vector<float> before = tiny::run(g, in);
      if (how == show::good || how == show::none) {
        const site_data site = capture(g, bn);
        REQUIRE(qfold::fold_batch_norms(g).folded() == 1);
        check_folded_constants(g, site);
        CHECK(relative_difference(before, tiny::run(g, in)) < 1e-5);
        if (mode == lend::good) CHECK(g.added.front() == g.room.data());
      } else {
        (void)expect_rejected(g, reason::invalid_shape);
      }
    }
}

namespace {
// An adapter with the optional point add_scaled_constant (qfold-onnx folds such a constant as it
// writes it): here it makes the values at once, in odd pieces through values(), or declines;
// and its add_constant can fail, to see the scaled constant rolled back with the site.
struct scaled_graph : lending_graph {
  bool accept = true, fail_add_constant = false;
  std::size_t scaled_calls = 0;
  std::optional<node_id> add_scaled_constant(const qfold::scaled_weights& s) {
    ++scaled_calls;
    if (!accept) return std::nullopt;
    std::vector<float> v(s.weights.size());
    for (std::size_t first = 0; first < v.size(); first += 7) {
      const std::size_t n = std::min<std::size_t>(7, v.size() - first);
      if (s.values(first, std::span<float>(v.data() + first, n)))
        throw std::logic_error("a checked fold refused later");
    }
    return tiny::graph::add_constant(v, s.weights.shape);
  }
  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    if (fail_add_constant) throw std::bad_alloc();
    return lending_graph::add_constant(data, shape);
  }
};
static_assert(qfold::batch_norm_foldable_graph<scaled_graph>);
static_assert(qfold::detail::has_add_scaled_constant<scaled_graph>);
}  // namespace

TEST_CASE("batch norm: a fold deferred to the adapter (add_scaled_constant) has the same bits",
          "[graph][batch_norm]") {
  // Conv (with and without bias) and linear sites: accepted, the constant the adapter makes from
  // the scales is the fold's (check_folded_constants: fold_batch_norm on the captured values);
  // declined, the pass folds into storage as without the point.
  for (const bool accept : {true, false})
    for (const bool linear : {false, true}) {
      INFO("accept " << accept << ", linear " << linear);
      scaled_graph g;
      g.accept = accept;
      g.mode = lending_graph::lend::none;
      id producer = tiny::graph::none;
      std::vector<float> in;
      if (linear) {
        const id x = g.input("x", {2, 100});
        g.weight = random_constant(g, "w", {6, 100}, 3);
        producer = g.linear("fc", x, g.weight, random_constant(g, "b", {6}, 4));
        in = tiny::random_floats(200, 5);
      } else {
        const id x = g.input("x", {1, 4, 5, 5});
        g.weight = random_constant(g, "w", {4, 4, 3, 3}, 1);
        producer = g.conv2d("conv", x, g.weight);
        in = tiny::random_floats(100, 5);
      }
      const id bn = random_bn(g, "bn", producer, linear ? 6 : 4, 10);
      g.mark_output(bn);
      const std::vector<float> before = tiny::run(g, in);
      const site_data site = capture(g, bn);
      REQUIRE(qfold::fold_batch_norms(g).folded() == 1);
      check_folded_constants(g, site);
      CHECK(g.scaled_calls == 1);
      CHECK(g.added.size() == (accept ? 1u : 2u));  // the bias alone, or weights and bias
      CHECK(relative_difference(before, tiny::run(g, in)) < 1e-5);
    }
}

TEST_CASE("batch norm: a deferred fold is refused as the stored one, and rolled back whole",
          "[graph][batch_norm]") {
  // var + eps == 0 on channel 2: weights and bias are both non-finite there; the site is refused
  // before the adapter is asked, named by its first weight as fold_batch_norm names it.
  const auto site = [](scaled_graph& g, bool infinite) {
    const id x = g.input("x", {1, 4, 5, 5});
    g.weight = random_constant(g, "w", {4, 4, 3, 3}, 1);
    const id conv = g.conv2d("conv", x, g.weight, random_constant(g, "b", {4}, 2));
    std::vector<float> var(4, 1.0f);
    if (infinite) var[2] = -1e-5f;
    g.mark_output(g.batch_norm("bn", conv, random_constant(g, "gamma", {4}, 11, 0.5f, 1.5f),
                               random_constant(g, "beta", {4}, 12, -1, 1),
                               random_constant(g, "mean", {4}, 13, -1, 1),
                               g.constant("var", var, {4}), 1e-5, false));
  };
  {
    scaled_graph g;
    site(g, true);
    const auto r = expect_rejected(g, reason::non_finite);
    CHECK(r.index == 2 * 4 * 3 * 3);
    CHECK(g.scaled_calls == 0);
  }
  {  // The scaled constant is added, then the bias's add_constant throws: the site rolls back.
    scaled_graph g;
    site(g, false);
    g.fail_add_constant = true;
    const auto r = expect_rejected(g, reason::adapter_failure);
    CHECK(g.scaled_calls == 1);
    (void)r;
  }
}
