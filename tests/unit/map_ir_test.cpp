// The map IR of examples/map_ir/ (nodes in an unordered_map keyed by their value's name, constants
// as nodes, float64 batch-norm statistics, no shapes or qparams on nodes) runs qfold's standard
// pipeline with no pass skipped. Each test builds a small graph, runs the pipeline, and checks
// that every site folded, that the graph outputs kept their names, and the result by independent
// means: batch norm against torch.nn.utils.fusion's float64 formula recomputed here, the integer
// folds against a TOSA evaluator written here (128-bit arithmetic) on every int8 input code, and
// against what the tiny IR's passes make of the same graph.
#include "map_ir/map_ir.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>
#include <qfold/graph/standard_pipeline.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "map_ir/qfold_adapter.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {

using mapir::Graph;
using mapir::Node;
using ints = std::vector<std::int64_t>;
using qfold::int_type;
using qfold::op_kind;
using qfold::scale_factor;

static_assert(qfold::batch_norm_foldable_graph<Graph>);
static_assert(qfold::quantized_graph<Graph>);
static_assert(qfold::rescale_mergeable_graph<Graph>);
static_assert(qfold::table_composable_graph<Graph>);
static_assert(qfold::table_collapsible_graph<Graph>);

// --- Building ------------------------------------------------------------------------------------
std::string constant(Graph& g, const std::string& name, std::vector<double> values, ints shape) {
  return g.add(name, {"Constant", {}, {{"value", std::move(values)}, {"shape", std::move(shape)}}});
}

// Attribute `key` of node n, which must be there as a T.
template <class T>
const T& get(const Graph& g, const std::string& n, const std::string& key) {
  const T* v = g.find<T>(n, key);
  if (v == nullptr) throw std::runtime_error(n + " has no attribute " + key + " of that type");
  return *v;
}

std::int64_t bits_of(qfold::dtype t) {
  return t == qfold::dtype::int8 ? 8 : t == qfold::dtype::int16 ? 16 : 32;
}

// tiny node -> map-IR node; a table becomes a TABLE reading a table constant; a view is dropped
// (this IR has none: its readers read the view's input).
Graph translate(const tiny::graph& t) {
  Graph g;
  std::vector<std::string> id(t.slots());
  for (std::size_t n = 0; n < t.slots(); ++n) {
    const auto& x = t.at(static_cast<tiny::graph::node_id>(n));
    if (!x.alive) continue;
    Node m;
    for (const auto i : x.inputs) m.inputs.push_back(id.at(static_cast<std::size_t>(i)));
    switch (x.kind) {
      case op_kind::input:
        m.op = "Input";
        m.attrs = {{"shape", x.shape}};
        if (x.element) m.attrs["out_bits"] = bits_of(*x.element);
        break;
      case op_kind::constant:
        REQUIRE(x.integer);
        m.op = "Constant";
        m.attrs = {{"value", x.ints}, {"shape", x.shape}};
        break;
      case op_kind::rescale: {
        ints multipliers, shifts;
        for (const scale_factor& s : x.scales) {
          multipliers.push_back(s.multiplier);
          shifts.push_back(s.shift);
        }
        const qfold::rescale_attributes& a = x.rescale;
        m.op = "RESCALE";
        m.attrs = {{"in_bits", std::int64_t{qfold::bit_width(a.input_type)}},
                   {"out_bits", std::int64_t{qfold::bit_width(a.output_type)}},
                   {"scale32", std::int64_t{a.scale32}},
                   {"rounding", static_cast<std::int64_t>(a.rounding)},
                   {"per_channel", std::int64_t{a.per_channel}},
                   {"input_zp", a.input_zp},
                   {"output_zp", a.output_zp},
                   {"multiplier", multipliers},
                   {"shift", shifts}};
        break;
      }
      case op_kind::mul:
        m.op = "MUL";
        m.attrs = {{"shift", std::int64_t{x.shift}}};
        break;
      case op_kind::add:
        m.op = "ADD";
        break;
      case op_kind::clamp:
        m.op = "CLAMP";
        m.attrs = {{"min_int", x.clamp.min}, {"max_int", x.clamp.max}};
        break;
      case op_kind::table:
        m.op = "TABLE";
        m.inputs.push_back(
            g.add(x.name + ".values",
                  {"Constant",
                   {},
                   {{"value", ints(x.table.begin(), x.table.end())}, {"shape", ints{256}}}}));
        break;
      case op_kind::view:
        id[n] = m.inputs.at(0);
        continue;
      default:
        FAIL("translate: an op the map IR test does not use");
    }
    id[n] = g.add(x.name, std::move(m));
  }
  for (const auto o : t.outputs()) g.outputs.push_back(id.at(static_cast<std::size_t>(o)));
  return g;
}

// --- A TOSA evaluator, from the spec's pseudocode, one int8 code at a time
// ------------------------
__extension__ typedef __int128 i128;

void need(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("reference evaluator: " + what);
}
i128 pow2(std::int64_t n) { return static_cast<i128>(1) << n; }
bool fits_bits(i128 v, std::int64_t bits) { return v >= -pow2(bits - 1) && v < pow2(bits - 1); }

// apply_scale_32 (double rounding optional) and apply_scale_16, REQUIREs included.
std::int64_t apply_scale(i128 value, std::int64_t multiplier, std::int64_t shift, bool scale32,
                         bool double_round) {
  need(multiplier >= 0 && shift >= 2 && shift <= 62, "apply_scale: multiplier or shift");
  need(fits_bits(value, scale32 ? shift : 48), "apply_scale: value out of range");
  i128 round = pow2(shift - 1);
  if (scale32 && double_round && shift > 31) round += value >= 0 ? pow2(30) : -pow2(30);
  const i128 r = (value * multiplier + round) >> shift;  // arithmetic shift (C++20)
  need(fits_bits(r, 32), "apply_scale: result outside int32");
  return static_cast<std::int64_t>(r);
}

struct evaluator {
  const Graph& g;
  std::int64_t code;  // what every Input holds
  std::map<std::string, std::int64_t> done{};

  std::int64_t operator()(const std::string& n) {
    if (const auto it = done.find(n); it != done.end()) return it->second;
    const Node& x = g.nodes.at(n);
    const auto num = [&](const char* key, std::int64_t fallback) {
      return g.attr<std::int64_t>(n, key, fallback);
    };
    const auto in = [&](std::size_t i) { return (*this)(x.inputs.at(i)); };
    i128 v = 0;
    if (x.op == "Input") {
      v = code;
    } else if (x.op == "Constant") {
      const ints& c = get<ints>(g, n, "value");
      need(c.size() == 1, "only scalar constants are evaluated");
      v = c[0];
    } else if (x.op == "RESCALE") {
      need(num("per_channel", 0) == 0 && num("input_unsigned", 0) == 0 &&
               num("output_unsigned", 0) == 0 && num("rounding", 1) != 2,
           "RESCALE: per tensor, signed, exact rounding only");
      const ints& m = get<ints>(g, n, "multiplier");
      const ints& s = get<ints>(g, n, "shift");
      need(m.size() == 1 && s.size() == 1, "RESCALE: one multiplier and shift");
      const std::int64_t a = in(0);
      need(fits_bits(a, num("in_bits", 8)), "RESCALE: input outside its type");
      const i128 value = static_cast<i128>(a) - num("input_zp", 0);
      v = static_cast<i128>(
              apply_scale(value, m[0], s[0], num("scale32", 1) != 0, num("rounding", 1) == 3)) +
          num("output_zp", 0);
      const std::int64_t out = num("out_bits", 8);
      v = std::clamp(v, -pow2(out - 1), pow2(out - 1) - 1);
    } else if (x.op == "MUL") {  // int32 operands
      const std::int64_t shift = num("shift", 0);
      need(shift >= 0 && shift <= 63, "MUL: shift");
      v = static_cast<i128>(in(0)) * in(1);
      if (shift > 0) v = (v + pow2(shift - 1)) >> shift;
      need(fits_bits(v, 32), "MUL: result outside int32");
    } else if (x.op == "ADD") {
      v = static_cast<i128>(in(0)) + in(1);
      need(fits_bits(v, 32), "ADD: result outside int32");
    } else if (x.op == "CLAMP") {
      v = std::clamp<std::int64_t>(in(0), num("min_int", 0), num("max_int", 0));
    } else if (x.op == "TABLE") {
      const ints& t = get<ints>(g, x.inputs.at(1), "value");
      const std::int64_t a = in(0);
      need(t.size() == 256 && fits_bits(a, 8), "TABLE: int8 only");
      v = t[static_cast<std::size_t>(a + 128)];
    } else {
      need(false, "an op the evaluator does not know: " + x.op);
    }
    done.emplace(n, static_cast<std::int64_t>(v));
    return static_cast<std::int64_t>(v);
  }
};

// The outputs of `before` and `after` agree on every int8 input code (every Input holds it).
void same_on_every_code(const Graph& before, const Graph& after) {
  REQUIRE(before.outputs.size() == after.outputs.size());
  std::size_t mismatches = 0;
  for (std::int64_t code = -128; code <= 127; ++code) {
    evaluator b{before, code}, a{after, code};
    for (std::size_t o = 0; o < before.outputs.size(); ++o)
      if (b(before.outputs[o]) != a(after.outputs[o])) ++mismatches;
  }
  CHECK(mismatches == 0);
}

// Runs the standard pipeline; nothing may be skipped, nothing refused.
qfold::report<std::string> fold(Graph& g, std::size_t expected_sites) {
  const auto passes = qfold::standard_pipeline<Graph>();
  CHECK(passes.skipped().empty());
  CHECK(passes.names().size() == 7);
  auto r = passes.run(g);
  CHECK(r.skipped.empty());
  std::string refused;
  for (const auto& s : r.sites)
    if (s.rejected) refused += std::string(s.pass) + ": " + std::string(s.rejected->message) + "\n";
  INFO(refused);
  CHECK(r.rejected() == 0);
  CHECK(r.folded() == expected_sites);
  return r;
}

std::size_t count_op(const Graph& g, const std::string& op) {
  std::size_t n = 0;
  for (const auto& entry : g.nodes) n += entry.second.op == op ? 1u : 0u;
  return n;
}

// A deterministic double in [lo, hi) with all 53 bits of precision in use.
struct doubles {
  std::uint64_t state;
  double operator()(double lo, double hi) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1p-53;
  }
};

TEST_CASE("map IR: batch norm folds into the conv in float64, as torch.nn.utils.fusion",
          "[graph][map_ir]") {
  for (const bool with_bias : {true, false}) {
    for (const double eps : {1e-5, 1e-3}) {
      constexpr std::int64_t out = 4, in = 3, k = 3;
      constexpr std::size_t outs = 4, per_out = 3 * 3 * 3;  // out, and in * k * k
      doubles next{with_bias ? 7u : 11u};
      std::vector<double> w(outs * per_out), b(outs), gamma(outs), beta(outs), mean(outs),
          var(outs);
      for (double& v : w) v = next(-2, 2);
      for (std::size_t o = 0; o < outs; ++o) {
        b[o] = next(-1, 1);
        gamma[o] = next(-3, 3);
        beta[o] = next(-1, 1);
        mean[o] = next(-1, 1);
        var[o] = o == 0 ? 0.0 : next(0, 4);  // a zero variance: eps carries it
      }
      Graph g;
      const std::string x = g.add("x", {"Input", {}, {{"shape", ints{1, in, 8, 8}}}});
      Node conv{"Conv", {x, constant(g, "w", w, {out, in, k, k})}, {{"pad", ints{1, 1, 1, 1}}}};
      if (with_bias) conv.inputs.push_back(constant(g, "b", b, {out}));
      const std::string c = g.add("conv", std::move(conv));
      g.add("bn", {"BatchNorm",
                   {c, constant(g, "gamma", gamma, {out}), constant(g, "beta", beta, {out}),
                    constant(g, "mean", mean, {out}), constant(g, "var", var, {out})},
                   {{"epsilon", eps}}});
      g.outputs = {"bn"};

      const auto r = fold(g, 1);
      REQUIRE(r.sites.size() == 1);
      CHECK(r.sites[0].replaced == std::optional<std::string>("bn"));
      CHECK(r.sites[0].replacement == std::optional<std::string>("bn"));
      // The conv took the batch norm's name; x, the conv and its two new constants are all left.
      CHECK(g.outputs == std::vector<std::string>{"bn"});
      CHECK(g.nodes.size() == 4);
      const Node& folded = g.nodes.at("bn");
      REQUIRE(folded.op == "Conv");
      REQUIRE(folded.inputs.size() == 3);
      CHECK(folded.inputs[0] == "x");
      CHECK(get<ints>(g, folded.inputs[1], "shape") == ints{out, in, k, k});
      CHECK(get<ints>(g, folded.inputs[2], "shape") == ints{out});
      const auto& fw = get<std::vector<double>>(g, folded.inputs[1], "value");
      const auto& fb = get<std::vector<double>>(g, folded.inputs[2], "value");
      REQUIRE(fw.size() == w.size());
      REQUIRE(fb.size() == b.size());

      // torch.nn.utils.fusion.fuse_conv_bn_weights in float64, one rounding per operation:
      //   bn_var_rsqrt = torch.rsqrt(bn_rv + bn_eps)      (rsqrt in double: 1 / sqrt)
      //   fused_conv_w = conv_w * (bn_w * bn_var_rsqrt).reshape([-1, 1, 1, 1])
      //   fused_conv_b = (conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b   (conv_b: zeros if None)
      std::size_t differ = 0;
      for (std::size_t o = 0; o < outs; ++o) {
        const double sum = var[o] + eps;
        const double root = std::sqrt(sum);
        const double rsqrt = 1.0 / root;
        const double scale = gamma[o] * rsqrt;
        for (std::size_t i = 0; i < per_out; ++i) {
          const double want = w[o * per_out + i] * scale;
          differ += std::bit_cast<std::uint64_t>(fw[o * per_out + i]) !=
                    std::bit_cast<std::uint64_t>(want);
        }
        const double centred = (with_bias ? b[o] : 0.0) - mean[o];
        const double normed = centred * rsqrt;
        const double scaled = normed * gamma[o];
        const double want = scaled + beta[o];
        differ += std::bit_cast<std::uint64_t>(fb[o]) != std::bit_cast<std::uint64_t>(want);
      }
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("map IR: DyT alpha folds into the tanh TABLE as on the tiny IR, exact on every code",
          "[graph][map_ir]") {
  for (const double alpha : {0.7, -1.3, 2.5}) {
    tiny::graph t;
    tiny::blocks::dyt_alpha_options o;
    o.alpha = alpha;
    t.mark_output(tiny::blocks::dyt_alpha(t, "dyt", t.input("x", {1, 8}, qfold::dtype::int8), o));
    Graph g = translate(t);
    const Graph before = g;
    REQUIRE(count_op(g, "MUL") == 1);
    REQUIRE(qfold::standard_pipeline<tiny::graph>().run(t).folded() == 1);
    fold(g, 1);
    CHECK(g.outputs == std::vector<std::string>{"dyt.tanh"});
    const Node& table = g.nodes.at("dyt.tanh");
    REQUIRE(table.op == "TABLE");
    CHECK(table.inputs.at(0) == "x");
    CHECK(g.nodes.size() == 3);  // x, the TABLE and its table constant
    const auto& tiny_table = t.at(t.outputs().at(0)).table;
    CHECK(get<ints>(g, table.inputs.at(1), "value") == ints(tiny_table.begin(), tiny_table.end()));
    same_on_every_code(before, g);
  }
}

TEST_CASE("map IR: RESCALE pairs (and RESCALE -> MUL -> RESCALE) merge, exact on every code",
          "[graph][map_ir]") {
  tiny::graph t;
  const auto x = t.input("x", {1, 8}, qfold::dtype::int8);
  using tiny::blocks::rescale_attrs;
  // x 1 (zp 3) to int32, then x 1/2 (zp -2) to int8.
  t.mark_output(t.rescale(
      "pair",
      t.rescale("pair.r1", x, rescale_attrs(int_type::i8, int_type::i32, 3), {{1 << 30, 30}}),
      rescale_attrs(int_type::i32, int_type::i8, 0, -2), {{1 << 30, 31}}));
  // x 16, MUL by 3, x 1/64: 0.75 x with one rounding.
  const auto k = t.int_constant("k", {3}, {1}, qfold::dtype::int32);
  const auto r16 =
      t.rescale("mul.r1", x, rescale_attrs(int_type::i8, int_type::i32), {{1 << 30, 26}});
  t.mark_output(t.rescale("mul", t.mul("mul.mul", r16, k),
                          rescale_attrs(int_type::i32, int_type::i8, 0, 5), {{1 << 30, 36}}));
  Graph g = translate(t);
  const Graph before = g;
  REQUIRE(qfold::standard_pipeline<tiny::graph>().run(t).folded() == 2);
  fold(g, 2);
  CHECK(g.outputs == (std::vector<std::string>{"pair", "mul"}));
  CHECK(count_op(g, "RESCALE") == 2);
  CHECK(count_op(g, "MUL") == 0);
  using T = qfold::ir_traits<Graph>;
  for (std::size_t o = 0; o < 2; ++o) {
    const std::string& name = g.outputs[o];
    CHECK(g.nodes.at(name).inputs == std::vector<std::string>{"x"});
    const auto& want = t.at(t.outputs().at(o));
    const auto got = T::rescale(g, name);
    CHECK(got.attributes == want.rescale);
    REQUIRE(got.multipliers.size() == 1);
    CHECK(got.multipliers[0] == want.scales.at(0).multiplier);
    CHECK(got.shifts[0] == want.scales.at(0).shift);
  }
  same_on_every_code(before, g);
}

TEST_CASE("map IR: TABLE -> TABLE composes, and an elementwise chain collapses into one TABLE",
          "[graph][map_ir]") {
  tiny::graph t;
  const auto x = t.input("x", {1, 8}, qfold::dtype::int8);
  using tiny::blocks::rescale_attrs;
  t.mark_output(t.table("tables", t.table("tables.first", x, tiny::blocks::ramp_table(3)),
                        tiny::blocks::ramp_table(5)));
  // RESCALE to int32 (zp 1), + 100, CLAMP to [-150, 300], x 1/4 back to int8.
  const auto wide =
      t.rescale("chain.r1", x, rescale_attrs(int_type::i8, int_type::i32, 1), {{1 << 30, 30}});
  const auto sum = t.add("chain.add", wide, t.int_constant("c", {100}, {1}, qfold::dtype::int32));
  t.mark_output(t.rescale("chain", t.clamp("chain.clamp", sum, -150, 300),
                          rescale_attrs(int_type::i32, int_type::i8), {{1 << 30, 32}}));
  Graph g = translate(t);
  const Graph before = g;
  REQUIRE(qfold::standard_pipeline<tiny::graph>().run(t).folded() == 2);
  fold(g, 2);
  CHECK(g.outputs == (std::vector<std::string>{"tables", "chain"}));
  CHECK(g.nodes.size() == 5);  // x, and two TABLEs with their table constants
  for (std::size_t o = 0; o < 2; ++o) {
    const Node& table = g.nodes.at(g.outputs[o]);
    REQUIRE(table.op == "TABLE");
    CHECK(table.inputs.at(0) == "x");
    const auto& want = t.at(t.outputs().at(o)).table;
    CHECK(get<ints>(g, table.inputs.at(1), "value") == ints(want.begin(), want.end()));
  }
  same_on_every_code(before, g);
}

TEST_CASE("map IR: a constant divisor folds into the Quantize's scale", "[graph][map_ir]") {
  Graph g;
  const std::string x = g.add("x", {"Input", {}, {{"shape", ints{1, 8}}}});
  const std::string d = g.add("div", {"Div", {x, constant(g, "c", {8.0}, {1})}, {}});
  g.add("q", {"Quantize", {d}, {{"scale", 0.03125}, {"zero_point", std::int64_t{-3}}}});
  g.outputs = {"q"};
  fold(g, 1);
  CHECK(g.outputs == std::vector<std::string>{"q"});
  CHECK(g.nodes.size() == 2);
  CHECK(g.nodes.at("q").inputs == std::vector<std::string>{"x"});
  CHECK(g.attr(std::string("q"), "scale", 0.0) == 0.25);  // x / 8 at 1/32 == x at 1/4
  CHECK(g.attr<std::int64_t>("q", "zero_point", 0) == -3);
}

}  // namespace

// Adapters that lack a point, or give it wrongly: the pipeline leaves the passes that need it out
// and names the point.
namespace lacking {
struct bare : mapir::Graph {};  // the structure only
struct wrong_shift : mapir::Graph {};
struct throwing_erase : mapir::Graph {};
}  // namespace lacking
template <>
struct qfold::ir_traits<lacking::bare> {
  using base = qfold::ir_traits<mapir::Graph>;
  using node_id = std::string;
  static auto nodes(const mapir::Graph& g) { return base::nodes(g); }
  static auto kind(const mapir::Graph& g, const node_id& n) { return base::kind(g, n); }
  static auto operands(const mapir::Graph& g, const node_id& n) { return base::operands(g, n); }
  static auto use_count(const mapir::Graph& g, const node_id& n) { return base::use_count(g, n); }
};
template <>
struct qfold::ir_traits<lacking::wrong_shift> : qfold::ir_traits<mapir::Graph> {
  static std::string mul_shift(const mapir::Graph&, const node_id&) { return "1"; }
};
template <>
struct qfold::ir_traits<lacking::throwing_erase> : qfold::ir_traits<mapir::Graph> {
  static void erase(mapir::Graph& g, const node_id& n) { g.nodes.erase(n); }
};

namespace {
TEST_CASE("map IR: an adapter lacking a point has the passes that need it skipped, named",
          "[graph][map_ir]") {
  using qfold::point_problem;
  const auto skipped = [](const auto& pipeline) {
    std::map<std::string, qfold::unmet_point> r;
    for (const auto& s : pipeline.skipped()) r.emplace(std::string(s.pass), s.unmet);
    return r;
  };
  {
    const auto p = qfold::standard_pipeline<lacking::bare>();
    CHECK(p.names().empty());
    const auto s = skipped(p);
    REQUIRE(s.size() == 7);
    CHECK(s.at("fold_batch_norm").point == "constant");
    CHECK(s.at("fold_batch_norm").problem == point_problem::missing);
    CHECK(s.at("fold_batch_norm").expected.find("std::optional<C> constant") !=
          std::string_view::npos);
    CHECK(s.at("fold_dyt_alpha").point == "int_constant");
    CHECK(s.at("fold_merge_rescales").point == "rescale");
    CHECK(s.at("fold_collapse_to_table").point == "element_type");
    lacking::bare g;
    CHECK(p.run(g).skipped.size() == 7);
  }
  {
    const auto p = qfold::standard_pipeline<lacking::wrong_shift>();
    const auto s = skipped(p);
    // mul_shift is needed by both DyT passes, and optional for the other two: a mistyped optional
    // point is refused too, never silently unused.
    REQUIRE(s.size() == 4);
    for (const char* pass :
         {"fold_dyt_alpha", "fold_dyt_affine", "fold_merge_rescales", "fold_collapse_to_table"}) {
      INFO(pass);
      CHECK(s.at(pass).point == "mul_shift");
      CHECK(s.at(pass).problem == point_problem::wrong_return);
    }
    CHECK(qfold::detail::unmet_of<lacking::wrong_shift, qfold::detail::dyt_alpha_points>()->point ==
          "mul_shift");
    CHECK(p.contains("fold_batch_norm"));
  }
  {
    const auto s = skipped(qfold::standard_pipeline<lacking::throwing_erase>());
    REQUIRE(s.size() == 7);
    CHECK(s.at("fold_batch_norm").point == "erase");
    CHECK(s.at("fold_batch_norm").problem == point_problem::throws);
  }
}
}  // namespace
