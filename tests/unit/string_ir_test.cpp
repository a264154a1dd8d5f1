// The string-op IR of examples/string_ir/ (a third-party IR adapted non-intrusively, handing over
// int32 constants, multiplier and shift arrays and tables as operands in its own storage) gets
// the same folds as the tiny IR: each test builds a tiny graph, translates it node for node,
// runs the same pass on both and compares the folded values bit for bit and the reports. The
// tiny IR's passes are checked against independent references elsewhere.
#include "string_ir/string_ir.hpp"

#include <cstdint>
#include <cstring>
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>
#include <qfold/graph/standard_pipeline.hpp>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "string_ir/qfold_adapter.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/tiny_ir.hpp"

// The same IR handing everything over by value, in owning containers (vectors of int64 and of
// scale_factor): qfold must copy them, not point into temporaries (ASan caught exactly that).
namespace adapter {
struct by_value : strir::Graph {};
}  // namespace adapter
template <>
struct qfold::ir_traits<adapter::by_value> : qfold::ir_traits<strir::Graph> {
  struct owned_tensor {
    std::vector<std::int64_t> data, shape;
  };
  struct owned_rescale {
    rescale_attributes attributes;
    std::vector<scale_factor> scales;
  };
  static std::optional<owned_tensor> int_constant(const strir::Graph& g, int n) {
    const auto c = ir_traits<strir::Graph>::int_constant(g, n);
    if (!c) return std::nullopt;
    return owned_tensor{{c->data.begin(), c->data.end()}, {c->shape.begin(), c->shape.end()}};
  }
  static std::vector<std::int64_t> output_shape(const strir::Graph& g, int n) {
    return g.nodes[static_cast<std::size_t>(n)].shape;
  }
  static owned_rescale rescale(const strir::Graph& g, int n) {
    const auto r = ir_traits<strir::Graph>::rescale(g, n);
    owned_rescale o{r.attributes, {}};
    for (std::size_t i = 0; i < r.multipliers.size(); ++i)
      o.scales.push_back({r.multipliers[i], r.shifts[i]});
    return o;
  }
};

namespace {

using qfold::op_kind;

// The adapter's capability is exactly what its two blocks promise.
static_assert(qfold::batch_norm_foldable_graph<strir::Graph>);
static_assert(qfold::quantized_graph<strir::Graph>);
static_assert(qfold::passes::dyt_alpha_t::check<strir::Graph>());

double bits(qfold::int_type t) {
  return t == qfold::int_type::i8 ? 8 : t == qfold::int_type::i16 ? 16 : 32;
}

// tiny node n -> string-IR node(s); tables become a TABLE reading a table constant.
strir::Graph translate(const tiny::graph& t) {
  strir::Graph s;
  std::vector<int> id(t.slots(), -1);
  for (int n = 0; n < static_cast<int>(t.slots()); ++n) {
    const auto& x = t.at(n);
    if (!x.alive) continue;
    strir::Node m;
    for (const int i : x.inputs) m.inputs.push_back(id[static_cast<std::size_t>(i)]);
    m.shape = x.shape;
    switch (x.kind) {
      case op_kind::input:
        m.op = "input";
        break;
      case op_kind::constant:
        m.op = "const";
        m.data = x.data;
        for (const std::int64_t v : x.ints) m.ints.push_back(static_cast<std::int32_t>(v));
        break;
      case op_kind::convolution:
        m.op = x.quantized ? "qconv" : "conv";
        m.attrs = {{"groups", static_cast<double>(x.conv.groups)},
                   {"pad", static_cast<double>(x.padding)},
                   {"channel_axis", static_cast<double>(x.conv.input_channel_axis)},
                   {"input_zp", static_cast<double>(x.input_zero_point)}};
        break;
      case op_kind::batch_norm:
        m.op = "bn";
        m.attrs = {{"eps", x.bn.epsilon}};
        break;
      case op_kind::rescale:
        m.op = "rescale";
        m.attrs = {{"in_bits", bits(x.rescale.input_type)},
                   {"out_bits", bits(x.rescale.output_type)},
                   {"input_zp", static_cast<double>(x.rescale.input_zp)},
                   {"output_zp", static_cast<double>(x.rescale.output_zp)}};
        for (const auto& f : x.scales) {
          m.ints.push_back(f.multiplier);
          m.shifts.push_back(f.shift);
        }
        break;
      case op_kind::mul:
        m.op = "mul";
        m.attrs = {{"shift", x.shift}};
        break;
      case op_kind::add:
        m.op = "add";
        break;
      case op_kind::table: {
        m.op = "table";
        strir::Node table{"const", {}, {}, {x.table.begin(), x.table.end()}, {}, {256}, {}};
        m.inputs.push_back(s.add(std::move(table)));
        break;
      }
      case op_kind::view:
        m.op = x.op == "reshape" ? "reshape" : "opaque";
        break;
      default:
        m.op = "opaque";
        break;
    }
    id[static_cast<std::size_t>(n)] = s.add(std::move(m));
  }
  for (const int o : t.outputs()) s.outputs.push_back(id[static_cast<std::size_t>(o)]);
  return s;
}

// What a folded table reads: the values of its table constant.
std::vector<std::int64_t> table_of(const strir::Graph& s, int table) {
  const auto& c =
      s.nodes[static_cast<std::size_t>(s.nodes[static_cast<std::size_t>(table)].inputs.at(1))];
  return {c.ints.begin(), c.ints.end()};
}

int live_table(const strir::Graph& s) {
  int found = -1;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    if (!s.nodes[static_cast<std::size_t>(n)].dead &&
        s.nodes[static_cast<std::size_t>(n)].op == "table")
      found = n;
  return found;
}

bool same_nodes(const strir::Graph& a, const strir::Graph& b) {
  if (a.nodes.size() != b.nodes.size() || a.outputs != b.outputs) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const auto &x = a.nodes[i], &y = b.nodes[i];
    if (x.op != y.op || x.inputs != y.inputs || x.ints != y.ints || x.shifts != y.shifts ||
        x.shape != y.shape || x.attrs != y.attrs || x.dead != y.dead ||
        x.data.size() != y.data.size() ||
        (!x.data.empty() && std::memcmp(x.data.data(), y.data.data(), 4 * x.data.size()) != 0))
      return false;
  }
  return true;
}

TEST_CASE("string IR: batch norm folds as on the tiny IR, with and without gamma and beta",
          "[graph][string_ir]") {
  tiny::graph t;
  const auto x = t.input("x", {1, 2, 5, 5});
  const auto w =
      t.constant("w", {0.5f, -1.25f, 2.0f, 0.75f, 1.5f, -0.5f, 0.25f, 3.0f}, {4, 2, 1, 1});
  const auto gamma = t.constant("gamma", {1.5f, -0.5f, 2.0f, 0.25f}, {4});
  const auto beta = t.constant("beta", {0.1f, 0.2f, -0.3f, 0.4f}, {4});
  const auto mean = t.constant("mean", {0.01f, -2.0f, 3.0f, 0.5f}, {4});
  const auto var = t.constant("var", {1.0f, 0.25f, 4.0f, 1e-3f}, {4});
  t.mark_output(t.batch_norm("bn", t.conv2d("conv", x, w), gamma, beta, mean, var));
  strir::Graph s = translate(t);
  const auto rt = qfold::fold_batch_norms(t);
  const auto rs = qfold::fold_batch_norms(s);
  REQUIRE(rt.folded() == 1);
  REQUIRE(rs.folded() == 1);
  CHECK(rs.bytes_removed() == rt.bytes_removed());
  // The conv reads the folded weights and bias: equal to tiny's bit for bit.
  const auto& conv_t = t.at(t.outputs().at(0));
  const auto& conv_s = s.nodes[static_cast<std::size_t>(s.outputs.at(0))];
  REQUIRE(conv_s.op == "conv");
  for (std::size_t i = 1; i < 3; ++i) {
    const auto& a = t.at(conv_t.inputs.at(i)).data;
    const auto& b = s.nodes[static_cast<std::size_t>(conv_s.inputs.at(i))].data;
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
  }

  // Without gamma and beta (batch_norm_operands gives them as absent): the fold of ones and zeros.
  tiny::graph t2;
  const auto x2 = t2.input("x", {1, 2, 5, 5});
  const auto w2 =
      t2.constant("w", {0.5f, -1.25f, 2.0f, 0.75f, 1.5f, -0.5f, 0.25f, 3.0f}, {4, 2, 1, 1});
  t2.mark_output(t2.batch_norm("bn", t2.conv2d("conv", x2, w2), t2.constant("g", {1, 1, 1, 1}, {4}),
                               t2.constant("b", {0, 0, 0, 0}, {4}),
                               t2.constant("m", {0.01f, -2.0f, 3.0f, 0.5f}, {4}),
                               t2.constant("v", {1.0f, 0.25f, 4.0f, 1e-3f}, {4})));
  strir::Graph s2 = translate(t2);
  auto& bn = s2.nodes[static_cast<std::size_t>(s2.outputs.at(0))];
  REQUIRE(bn.op == "bn");
  bn.inputs = {bn.inputs[0], bn.inputs[3], bn.inputs[4]};
  REQUIRE(qfold::fold_batch_norms(t2).folded() == 1);
  REQUIRE(qfold::fold_batch_norms(s2).folded() == 1);
  const auto& c2 = s2.nodes[static_cast<std::size_t>(s2.outputs.at(0))];
  const auto& ct = t2.at(t2.outputs().at(0));
  for (std::size_t i = 1; i < 3; ++i) {
    const auto& a = t2.at(ct.inputs.at(i)).data;
    const auto& b = s2.nodes[static_cast<std::size_t>(c2.inputs.at(i))].data;
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
  }
}

TEST_CASE("string IR: DyT alpha folds as on the tiny IR, the table read as an operand",
          "[graph][string_ir]") {
  for (const double alpha : {0.7, -1.3, 2.5}) {
    tiny::graph t;
    tiny::blocks::dyt_alpha_options o;
    o.alpha = alpha;
    const auto x = t.input("x", {1, 8});
    t.mark_output(tiny::blocks::dyt_alpha(t, "dyt", x, o));
    // tiny's int8 annotations cover every code, as the string IR's absent ones do.
    strir::Graph s = translate(t);
    const auto rt = qfold::fold_dyt_alphas(t);
    const auto rs = qfold::fold_dyt_alphas(s);
    REQUIRE(rt.sites.size() == 1);
    REQUIRE(rs.sites.size() == 1);
    INFO((rs.sites[0].rejected ? rs.sites[0].rejected->message : "folded"));
    CHECK(rs.folded() == rt.folded());
    if (rt.folded() == 0) continue;
    const auto& tt = t.at(t.outputs().at(0));
    REQUIRE(tt.kind == op_kind::table);
    const int st = s.outputs.at(0);
    CHECK(st == live_table(s));
    CHECK(table_of(s, st) == std::vector<std::int64_t>(tt.table.begin(), tt.table.end()));
  }
}

TEST_CASE("string IR: values handed over by value in owning containers fold the same",
          "[graph][string_ir]") {
  static_assert(qfold::quantized_graph<adapter::by_value>);
  for (const double alpha : {0.7, -1.3}) {
    tiny::graph t;
    tiny::blocks::dyt_alpha_options o;
    o.alpha = alpha;
    t.mark_output(tiny::blocks::dyt_alpha(t, "dyt", t.input("x", {1, 8}), o));
    strir::Graph s = translate(t);
    adapter::by_value v;
    static_cast<strir::Graph&>(v) = s;
    REQUIRE(qfold::fold_dyt_alphas(s).folded() == 1);
    REQUIRE(qfold::fold_dyt_alphas(v).folded() == 1);
    CHECK(table_of(v, v.outputs.at(0)) == table_of(s, s.outputs.at(0)));
  }
}

TEST_CASE("string IR: a refused site leaves the graph as it was; by-name passes run",
          "[graph][string_ir]") {
  tiny::graph t;
  const auto x = t.input("x", {1, 8});
  t.mark_output(tiny::blocks::dyt_alpha(t, "dyt", x, {}));
  strir::Graph s = translate(t);
  // alpha read at run time: the alpha constant becomes an input.
  for (auto& n : s.nodes)
    if (n.op == "const" && n.ints.size() == 1) n.op = "input";
  const strir::Graph before = s;
  qfold::pipeline<strir::Graph> p;
  p.add(qfold::passes::dyt_alpha).add(qfold::passes::batch_norm);
  CHECK(p.names() == std::vector<std::string>{"fold_dyt_alpha", "fold_batch_norm"});
  const auto r = p.run(s);
  REQUIRE(r.sites.size() == 1);
  CHECK(r.sites[0].rejected->code == qfold::reason::not_constant);
  CHECK(same_nodes(s, before));
  // Every pass the adapter supports: the float and DyT passes first (the rescale and table passes
  // follow when the adapter has their points).
  const auto names = qfold::standard_pipeline<strir::Graph>().names();
  REQUIRE(names.size() >= 4);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 4) ==
        std::vector<std::string>{"fold_batch_norm", "fold_scale_into_quantize", "fold_dyt_alpha",
                                 "fold_dyt_affine"});
}

}  // namespace
