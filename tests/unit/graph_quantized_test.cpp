// The DyT alpha, DyT affine and scale-into-quantize passes over the demo IR (examples/tiny_ir):
// the folded graph and the original, run by tiny's reference interpreter on every input code (every
// int8 code per channel; every tie, edge and many random floats for the float form), give identical
// outputs; every guard has a graph that triggers exactly its rejection and leaves the graph's
// structural hash unchanged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <qfold/qfold.hpp>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using id = tiny::graph::node_id;
using qfold::reason;
namespace blocks = tiny::blocks;

std::vector<double> codes(std::int64_t lo, std::int64_t hi) {
  std::vector<double> r;
  for (std::int64_t c = lo; c <= hi; ++c) r.push_back(static_cast<double>(c));
  return r;
}
std::size_t count_kind(const tiny::graph& g, qfold::op_kind k) {
  const auto ns = g.nodes();
  return static_cast<std::size_t>(std::ranges::count_if(ns, [&](id n) { return g.kind(n) == k; }));
}
// Outputs equal bit for bit (NaN included).
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
         });
}

// Runs `pass`, which must reject exactly one site with `why`, and checks nothing changed.
template <class Pass>
void rejects(tiny::graph& g, Pass pass, reason why) {
  const auto before = g.structural_hash();
  const auto r = pass(g);
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.sites[0].rejected);
  CHECK(r.sites[0].rejected->code == why);
  CHECK(g.structural_hash() == before);
}
const auto alpha_pass = [](tiny::graph& g) { return qfold::fold_dyt_alphas(g); };
const auto affine_pass = [](tiny::graph& g) { return qfold::fold_dyt_affines(g); };
const auto scale_pass = [](tiny::graph& g) { return qfold::fold_scales_into_quantize(g); };

// --- DyT alpha -----------------------------------------------------------------------------------
struct alpha_graph {
  tiny::graph g;
  id x, tanh;
};
alpha_graph make_alpha(const blocks::dyt_alpha_options& o = {}) {
  alpha_graph a;
  a.x = a.g.input("x", {1, o.activation.qmax - o.activation.qmin + 1});
  a.tanh = blocks::dyt_alpha(a.g, "dyt", a.x, o);
  a.g.mark_output(a.tanh);
  return a;
}

TEST_CASE("dyt alpha pass: one table, same outputs on every activation code", "[graph][dyt]") {
  for (const double alpha : {0.7, -1.9, 0.02, 4.5}) {
    for (const std::int32_t qmin : {-128, -127}) {
      blocks::dyt_alpha_options o;
      o.alpha = alpha;
      o.activation.qmin = qmin;
      o.tanh_input = qfold::make_qparams(qfold::dtype::int8, 0.05 * std::abs(alpha), -2);
      auto a = make_alpha(o);
      const auto input = codes(qmin, 127);
      const auto before = tiny::evaluate(a.g, input);
      const std::size_t nodes = a.g.live_count();
      const auto r = qfold::fold_dyt_alphas(a.g);
      REQUIRE(r.folded() == 1);
      CHECK(r.bytes_removed() == 1);  // alpha: one int8
      CHECK(same(tiny::evaluate(a.g, input), before));
      // Alpha, its view, three RESCALEs, the MUL and the old TABLE go; the new TABLE comes.
      CHECK(a.g.live_count() == nodes - 6);
      CHECK(count_kind(a.g, qfold::op_kind::table) == 1);
      CHECK(count_kind(a.g, qfold::op_kind::mul) == 0);
      const id t = a.g.outputs()[0];
      CHECK(a.g.qparams(t) == o.tanh_output);
      CHECK(a.g.operands(t)[0] == a.x);
    }
  }
}

TEST_CASE("dyt alpha pass: every guard refuses and leaves the graph as it was", "[graph][dyt]") {
  {  // alpha with two elements
    auto a = make_alpha();
    tiny::graph& g = a.g;
    const id rb = g.operands(g.operands(g.operands(a.tanh)[0])[0])[1];
    const id two = g.int_constant("two", {1, 2}, {2}, qfold::dtype::int8);
    g.set_operand(rb, 0, two);
    rejects(g, alpha_pass, reason::not_scalar);
  }
  {  // alpha computed at run time
    auto a = make_alpha();
    tiny::graph& g = a.g;
    const id rb = g.operands(g.operands(g.operands(a.tanh)[0])[0])[1];
    g.set_operand(rb, 0, g.relu("runtime_alpha", g.operands(rb)[0]));
    rejects(g, alpha_pass, reason::not_constant);
  }
  {  // per-channel RESCALE of the activation
    tiny::graph g;
    const id x = g.input("x", {1, 4});
    qfold::rescale_attributes pc;
    pc.output_type = qfold::int_type::i32;
    pc.per_channel = true;
    const id a32 = g.rescale("x32", x, pc, std::vector<qfold::scale_factor>(4, {1 << 30, 30}));
    const id alpha = g.int_constant("alpha", {3}, {1}, qfold::dtype::int8);
    const id alpha32 =
        blocks::rescale(g, "alpha32", alpha, qfold::int_type::i8, qfold::int_type::i32, 1);
    const id to8 = blocks::rescale(g, "to8", g.mul("mul", a32, alpha32), qfold::int_type::i32,
                                   qfold::int_type::i8, 0.5);
    g.mark_output(g.table("tanh", to8, std::vector<std::int8_t>(256, 1)));
    rejects(g, alpha_pass, reason::unsupported_rescale);
  }
  {  // a layout view on the activation side
    tiny::graph g;
    const id x = g.input("x", {1, 256});
    g.mark_output(blocks::dyt_alpha(g, "dyt", g.reshape("x_view", x, {256, 1}), {}));
    rejects(g, alpha_pass, reason::layout_view);
  }
  {  // the MUL has a second reader
    auto a = make_alpha();
    a.g.mark_output(a.g.operands(a.g.operands(a.tanh)[0])[0]);
    rejects(a.g, alpha_pass, reason::shared_output);
  }
  {  // the activation's zero point is not what its RESCALE subtracts
    auto a = make_alpha();
    auto q = *a.g.qparams(a.x);
    q.zero_point += 1;
    a.g.set_output_qparams(a.x, q);
    rejects(a.g, alpha_pass, reason::qparams_mismatch);
  }
  {  // the tanh's declared input range is narrower than the codes the RESCALE produces
    blocks::dyt_alpha_options o;
    o.tanh_input = qfold::make_qparams(qfold::dtype::int8, 0.002, 0);  // saturates at +-127
    auto a = make_alpha(o);
    auto q = *a.g.qparams(a.g.operands(a.tanh)[0]);
    q.qmin = -100;
    q.qmax = 100;
    a.g.set_output_qparams(a.g.operands(a.tanh)[0], q);
    rejects(a.g, alpha_pass, reason::out_of_range);
  }
}

// --- DyT affine ----------------------------------------------------------------------------------
constexpr std::int64_t side = 16, channels = 4;  // 16 x 16 positions: every code per channel
// Table outputs in [-32, 31]: gamma 2 does not saturate.
std::vector<std::int8_t> small_table() {
  std::vector<std::int8_t> table(256);
  for (int i = 0; i < 256; ++i)
    table[static_cast<std::size_t>(i)] = static_cast<std::int8_t>((i - 128) / 4);
  return table;
}
struct affine_graph {
  tiny::graph g;
  id conv;
};
affine_graph make_affine(const blocks::dyt_affine_options& o) {
  affine_graph a;
  const id x = a.g.input("x", {1, side, side, channels});
  const id t = a.g.table("table", x, small_table());
  a.g.set_output_qparams(t, qfold::make_qparams(qfold::dtype::int8, 0.1,
                                                static_cast<std::int32_t>(o.table_zero_point)));
  a.conv = blocks::dyt_affine_conv(a.g, "affine", t, o);
  a.g.mark_output(a.conv);
  return a;
}
// Channel c at position p holds code (p + 37 c) mod 256 - 128: every code, in a different place.
std::vector<double> every_code_per_channel() {
  std::vector<double> r;
  for (std::int64_t p = 0; p < side * side; ++p)
    for (std::int64_t c = 0; c < channels; ++c)
      r.push_back(static_cast<double>((p + 37 * c) % 256 - 128));
  return r;
}
blocks::dyt_affine_options affine_options(std::vector<std::int64_t> gamma,
                                          std::vector<std::int64_t> beta, std::int64_t padding) {
  blocks::dyt_affine_options o;
  o.gamma = std::move(gamma);
  o.beta = std::move(beta);
  o.table_zero_point = 2;
  o.output_zero_point = -3;
  o.padding = padding;
  return o;
}

TEST_CASE("dyt affine pass: fold, bypass, same outputs on every code", "[graph][dyt]") {
  const auto input = every_code_per_channel();
  struct expectation {
    blocks::dyt_affine_options options;
    std::size_t removed_nodes;
  };
  // Unpadded: gamma and beta fold into the conv (the 10 nodes from gamma to the last RESCALE go,
  // new weights and bias replace the old ones). Identity: the conv reads the table (the same 10
  // go). Padded, gamma 1 with the table's zero point 0: only gamma's side (gamma, 2 RESCALEs, MUL,
  // RESCALE) goes.
  const std::vector<expectation> cases{
      {affine_options({1, -1, 2, 1}, {5, 0, -7, 3}, 0), 10},
      {[] {
         auto o = affine_options({1, 1, 1, 1}, {0, 0, 0, 0}, 1);
         o.table_zero_point = 0;
         o.output_zero_point = 0;
         return o;
       }(),
       10},
      {[] {
         auto o = affine_options({1, 1, 1, 1}, {4, -2, 0, 9}, 1);
         o.table_zero_point = 0;
         return o;
       }(),
       5},
  };
  for (const auto& e : cases) {
    auto a = make_affine(e.options);
    const auto before = tiny::evaluate(a.g, input);
    const std::size_t nodes = a.g.live_count();
    const auto r = qfold::fold_dyt_affines(a.g);
    REQUIRE(r.folded() == 1);
    CHECK(same(tiny::evaluate(a.g, input), before));
    CHECK(a.g.live_count() == nodes - e.removed_nodes);
  }
}

TEST_CASE("dyt affine pass: through a permute and a spatial crop", "[graph][dyt]") {
  const auto o = affine_options({2, -1, 1, 1}, {3, 1, 0, -4}, 0);
  tiny::graph g;
  const id x = g.input("x", {1, side, side, channels});
  const id t = g.table("table", x, small_table());
  g.set_output_qparams(t, qfold::make_qparams(qfold::dtype::int8, 0.1, 2));
  const id first = blocks::dyt_affine_conv(g, "affine", t, o);
  const auto ops = g.operands(first);
  const id nchw = ops[0], w = ops[1], b = ops[2];
  const id conv = g.qconv2d("cropped", g.slice("crop", nchw, 2, 1, side), w, b, {}, -3, {0});
  g.erase(first);
  g.mark_output(conv);
  const auto input = every_code_per_channel();
  const auto before = tiny::evaluate(g, input);
  const auto r = qfold::fold_dyt_affines(g);
  REQUIRE(r.folded() == 1);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(g.quantized_conv(conv)->input_zero_point == 2);  // the table's zero point
}

TEST_CASE("dyt affine pass: every guard refuses and leaves the graph as it was", "[graph][dyt]") {
  {  // padded conv, gamma 2: neither gamma nor beta can go
    auto a = make_affine(affine_options({2, 1, 1, 1}, {1, 0, 0, 0}, 1));
    rejects(a.g, affine_pass, reason::padding);
  }
  {  // a second reader of the affine's output
    auto a = make_affine(affine_options({1, 1, 1, 1}, {1, 0, 0, 0}, 0));
    a.g.mark_output(a.g.operands(a.g.operands(a.conv)[0])[0]);
    rejects(a.g, affine_pass, reason::shared_output);
  }
  {  // folded weights beyond int8: gamma 2 doubles weights near 20... made 100 here
    auto a = make_affine(affine_options({2, 2, 2, 2}, {0, 0, 0, 0}, 0));
    const id w = a.g.operands(a.conv)[1];
    const auto shape = a.g.at(w).shape;
    a.g.set_operand(a.conv, 1,
                    a.g.int_constant("big", std::vector<std::int64_t>(a.g.at(w).ints.size(), 100),
                                     shape, qfold::dtype::int8));
    rejects(a.g, affine_pass, reason::out_of_range);
  }
  {  // not an integer line: gamma 3 then / 2 (a non-power-of-two rescale)
    auto a = make_affine(affine_options({3, 1, 1, 1}, {0, 0, 0, 0}, 0));
    const id sum = a.g.operands(a.g.operands(a.conv)[0])[0];
    const id add = a.g.operands(sum)[0];
    const id scaled32 = a.g.operands(add)[0];
    const id scaled = a.g.operands(scaled32)[0];
    a.g.set_operand(
        scaled32, 0,
        blocks::rescale(a.g, "third", scaled, qfold::int_type::i8, qfold::int_type::i8, 1.0 / 3));
    // The extra RESCALE is int8 -> int8: the ADD's activation is no longer a rescaled MUL.
    rejects(a.g, affine_pass, reason::unsupported);
  }
  {  // views that put another axis on the conv's channels
    tiny::graph g;
    const id x = g.input("x", {1, channels, side, channels});  // H == C, so the shapes still fit
    const id t = g.table("table", x, std::vector<std::int8_t>(256, 3));
    auto o = affine_options({1, 2, 1, 1}, {0, 0, 0, 0}, 0);
    const id conv = blocks::dyt_affine_conv(g, "affine", t, o);
    const id nchw = g.operands(conv)[0];
    g.set_operand(conv, 0, g.permute("wrong", g.operands(nchw)[0], {0, 1, 3, 2}));  // N H C W
    g.erase(nchw);
    g.mark_output(conv);
    rejects(g, affine_pass, reason::channel_mismatch);
  }
  {  // not an integer line: the table enters at 256/3, so gamma's path rounds unevenly
    auto a = make_affine(affine_options({1, 1, 1, 1}, {1, 0, 0, 0}, 0));
    const id sum = a.g.operands(a.g.operands(a.conv)[0])[0];
    const id mul = a.g.operands(a.g.operands(a.g.operands(a.g.operands(sum)[0])[0])[0])[0];
    const id t32 = a.g.operands(mul)[0];
    a.g.set_operand(mul, 0,
                    blocks::rescale(a.g, "t32/3", a.g.operands(t32)[0], qfold::int_type::i8,
                                    qfold::int_type::i32, 256.0 / 3, 2));
    a.g.erase(t32);
    rejects(a.g, affine_pass, reason::not_exact);
  }
  {  // a layout view between the TABLE and the MUL's RESCALE
    auto a = make_affine(affine_options({1, 1, 1, 1}, {1, 0, 0, 0}, 0));
    const id sum = a.g.operands(a.g.operands(a.conv)[0])[0];
    const id mul = a.g.operands(a.g.operands(a.g.operands(a.g.operands(sum)[0])[0])[0])[0];
    const id t32 = a.g.operands(mul)[0];
    a.g.set_operand(t32, 0,
                    a.g.reshape("table_view", a.g.operands(t32)[0], {1, side, side, channels}));
    rejects(a.g, affine_pass, reason::layout_view);
  }
  {  // gamma computed at run time
    auto a = make_affine(affine_options({1, 1, 1, 1}, {1, 0, 0, 0}, 0));
    const id sum = a.g.operands(a.g.operands(a.conv)[0])[0];
    const id mul = a.g.operands(a.g.operands(a.g.operands(a.g.operands(sum)[0])[0])[0])[0];
    const id gamma32 = a.g.operands(mul)[1];
    a.g.set_operand(gamma32, 0, a.g.relu("runtime_gamma", a.g.operands(gamma32)[0]));
    rejects(a.g, affine_pass, reason::not_constant);
  }
  {  // the conv's input zero point differs from the affine's output zero point
    auto o = affine_options({1, 1, 1, 1}, {1, 0, 0, 0}, 0);
    auto a = make_affine(o);
    a.g.set_conv_input_zero_point(a.conv, 7);
    rejects(a.g, affine_pass, reason::qparams_mismatch);
  }
}

// --- Scale into quantize -------------------------------------------------------------------------
TEST_CASE("scale into quantize pass: the sandwich goes, same codes for every code",
          "[graph][scale]") {
  for (const auto type : {qfold::dtype::int8, qfold::dtype::int16}) {
    const auto in = qfold::make_qparams(type, 0.03, type == qfold::dtype::int8 ? 5 : 0);
    for (const float c : {0.125f, 3.0f, 1.0f / 11.3137085f}) {
      auto out = in;
      out.scale = in.scale * static_cast<double>(c);
      tiny::graph g;
      const id x = g.input("x", {in.qmax - in.qmin + 1});
      const id q = blocks::requantize_sandwich(g, "attn", x, c, in, out);
      g.mark_output(g.dequantize("consumer", q, out));
      const auto input = codes(in.qmin, in.qmax);
      const auto before = tiny::evaluate(g, input);
      const auto r = qfold::fold_scales_into_quantize(g);
      REQUIRE(r.folded() == 1);
      CHECK(same(tiny::evaluate(g, input), before));
      CHECK(g.live_count() == 2);  // x and the consumer
    }
  }
}

TEST_CASE("scale into quantize pass: a requantize that gives back every code goes",
          "[graph][scale]") {
  for (const auto type : {qfold::dtype::int8, qfold::dtype::int16}) {
    const auto in = qfold::make_qparams(type, 0.0147, type == qfold::dtype::int8 ? -3 : 0);
    tiny::graph g;
    const id x = g.input("x", {in.qmax - in.qmin + 1});
    const id dq = g.dequantize("pool.dq", x, in);
    const id q = g.quantize("pool.q", dq, in);  // shared qparams, as around a pooling
    g.mark_output(g.dequantize("consumer", q, in));
    g.mark_output(g.relu("other_reader", dq));  // keeps the dequantize
    const auto input = codes(in.qmin, in.qmax);
    const auto before = tiny::evaluate(g, input);
    const auto r = qfold::fold_scales_into_quantize(g);
    REQUIRE(r.folded() == 1);
    CHECK(same(tiny::evaluate(g, input), before));
    CHECK(g.live_count() == 4);  // x, the dequantize and its two readers
  }
  // Two in a row: the second's plan read the first's quantize, which the first removes; the
  // second takes what its dequantize reads by then.
  const auto q = qfold::make_qparams(qfold::dtype::int8, 0.0147, -3);
  tiny::graph g;
  const id x = g.input("x", {256});
  const id first = g.quantize("pool.q", g.dequantize("pool.dq", x, q), q);
  const id second = g.quantize("flatten.q", g.dequantize("flatten.dq", first, q), q);
  g.mark_output(g.dequantize("consumer", second, q));
  const auto input = codes(-128, 127);
  const auto before = tiny::evaluate(g, input);
  const auto r = qfold::fold_scales_into_quantize(g);
  REQUIRE(r.folded() == 2);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(g.live_count() == 2);  // x and the consumer
}

TEST_CASE("scale into quantize pass: a sandwich that is not an identity folds into the scale",
          "[graph][scale]") {
  // dequantize -> / 8 -> quantize with the dequantize's own qparams (attention's scores / sqrt(64)
  // in a reference-quantized graph): codes move, so the sandwich stays, but 8 folds into the scale.
  const auto in = qfold::make_qparams(qfold::dtype::int8, 0.0129, 66 - 128);
  tiny::graph g;
  const id x = g.input("x", {256});
  const id q =
      g.quantize("q", g.div("div", g.dequantize("dq", x, in), g.constant("c", {8.0f}, {1})), in);
  g.mark_output(g.dequantize("consumer", q, in));
  const auto input = codes(-128, 127);
  const auto before = tiny::evaluate(g, input);
  const auto r = qfold::fold_scales_into_quantize(g);
  REQUIRE(r.folded() == 1);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(g.qparams(g.operands(g.outputs()[0])[0])->scale == in.scale * 8);
  CHECK(g.live_count() == 4);  // x, the dequantize, the quantize, the consumer
}

TEST_CASE("scale into quantize pass: a power-of-two scale folds into the quantize",
          "[graph][scale]") {
  const auto q = qfold::make_qparams(qfold::dtype::int8, 0.04, -1);
  std::vector<double> input;
  for (std::int64_t k = -140; k <= 140; ++k)
    for (int d = -2; d <= 2; ++d) {  // around every tie of the folded scale, in float32 steps
      float x = static_cast<float>((static_cast<double>(k) + 0.5) * q.scale * 8);
      for (int i = 0; i < d + 2; ++i) x = std::nextafter(x, 1e30f);
      input.push_back(static_cast<double>(x));
    }
  for (const double x : tiny::random_floats(10000, 5, -50, 50)) input.push_back(x);
  tiny::graph g;
  const id x = g.input("x", {static_cast<std::int64_t>(input.size())});
  g.mark_output(blocks::scale_then_quantize(g, "scores", x, 8.0f, q));
  const auto before = tiny::evaluate(g, input);
  const auto r = qfold::fold_scales_into_quantize(g);
  REQUIRE(r.folded() == 1);
  CHECK(r.bytes_removed() == 4);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(g.qparams(g.outputs()[0])->scale == 0.04 * 8);
  // sqrt(128) is not a power of two: refused by default.
  tiny::graph h;
  h.mark_output(blocks::scale_then_quantize(h, "scores", h.input("x", {4}), 11.3137085f, q));
  rejects(h, scale_pass, reason::not_exact);
  const auto real = qfold::fold_scales_into_quantize(
      h, {qfold::conventions::executorch, qfold::float_exactness::real});
  CHECK(real.folded() == 1);
}

TEST_CASE("scale into quantize pass: every guard refuses and leaves the graph as it was",
          "[graph][scale]") {
  const auto q8 = qfold::make_qparams(qfold::dtype::int8, 0.02, 0);
  const auto q16 = qfold::make_qparams(qfold::dtype::int16, 0.02, 0);
  {  // a runtime divisor
    tiny::graph g;
    const id x = g.input("x", {4});
    g.mark_output(g.quantize("q", g.div("div", x, g.relu("d", x)), q8));
    rejects(g, scale_pass, reason::not_constant);
  }
  {  // a constant dividend: c / x
    tiny::graph g;
    const id x = g.input("x", {4});
    g.mark_output(g.quantize("q", g.div("div", g.constant("c", {2.0f}, {1}), x), q8));
    rejects(g, scale_pass, reason::unsupported);
  }
  for (const float bad : {0.0f, std::numeric_limits<float>::infinity(), -4.0f}) {
    tiny::graph g;
    g.mark_output(blocks::scale_then_quantize(g, "s", g.input("x", {4}), bad, q8));
    rejects(g, scale_pass, reason::invalid_constant);
  }
  {  // a constant with two elements
    tiny::graph g;
    const id x = g.input("x", {2});
    g.mark_output(g.quantize("q", g.div("div", x, g.constant("c", {2.0f, 4.0f}, {2})), q8));
    rejects(g, scale_pass, reason::not_scalar);
  }
  {  // the quantize's qparams are shared (e.g. with a pooling after it)
    tiny::graph g;
    const id q = blocks::scale_then_quantize(g, "s", g.input("x", {4}), 2.0f, q8);
    g.set_output_qparams(q, q8, true);
    g.mark_output(q);
    rejects(g, scale_pass, reason::shared_qparams);
  }
  {  // the div has another reader
    tiny::graph g;
    const id q = blocks::scale_then_quantize(g, "s", g.input("x", {4}), 2.0f, q8);
    g.mark_output(q);
    g.mark_output(g.operands(q)[0]);
    rejects(g, scale_pass, reason::shared_output);
  }
  // A requantize (dequantize -> quantize) goes only where it gives back every code.
  const auto requantize = [](tiny::graph& g, id x, const qfold::qparams& in,
                             const qfold::qparams& out) {
    return g.quantize("s.q", g.dequantize("s.dq", x, in), out);
  };
  {  // int8 codes requantized to int16: the type would change
    tiny::graph g;
    g.mark_output(requantize(g, g.input("x", {256}), q8, q16));
    rejects(g, scale_pass, reason::qparams_mismatch);
  }
  {  // the int16 path with a symmetric clamp on one side only
    auto sym = q16;
    sym.qmin = -32767;
    tiny::graph g;
    g.mark_output(requantize(g, g.input("x", {256}), q16, sym));
    rejects(g, scale_pass, reason::qparams_mismatch);
  }
  {  // not an identity: a code moves, and the graph shows it moving at the reported code
    auto out = q8;
    out.scale = 0.021;
    tiny::graph g;
    const id q = requantize(g, g.input("x", {256}), q8, out);
    g.mark_output(g.dequantize("consumer", q, out));
    const auto input = codes(-128, 127);
    const auto before = tiny::evaluate(g, input);
    rejects(g, scale_pass, reason::not_exact);
    const auto index = qfold::fold_scales_into_quantize(g).sites[0].rejected->index;
    const float kept = static_cast<float>(input[index]) * static_cast<float>(out.scale);
    CHECK(before[index] != static_cast<double>(kept));
  }
}

TEST_CASE("standard pipeline: the passes the adapter supports, by name", "[graph]") {
  const auto p = qfold::standard_pipeline<tiny::graph>();
  CHECK(p.names() == std::vector<std::string>{"fold_batch_norm", "fold_scale_into_quantize",
                                              "fold_dyt_alpha", "fold_dyt_affine",
                                              "fold_merge_rescales", "fold_compose_tables",
                                              "fold_collapse_to_table"});
  // The names outlive the pipeline (they were views into it: a use after free under ASan).
  std::vector<std::string> copied;
  for (auto n : qfold::standard_pipeline<tiny::graph>().names()) copied.push_back(n);
  CHECK(copied == p.names());
  CHECK(p.contains("fold_dyt_alpha"));
  CHECK_FALSE(p.contains("fold_dyt"));
  const std::vector<std::string_view> wanted{"fold_dyt_affine", "no_such_pass", "fold_batch_norm"};
  CHECK(p.only(wanted).names() == std::vector<std::string>{"fold_batch_norm", "fold_dyt_affine"});
}

}  // namespace
