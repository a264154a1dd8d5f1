// The adapter API as a newcomer meets it: a pipeline names each pass it leaves out and the first
// point the adapter lacks (missing, wrong parameter types, wrong return type, erase that may
// throw); float32 / float64 constants by value, borrowed or in a std::variant, the float64 fold
// bit-identical to torch's; other float types refused naming the type; cycles refused.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <qfold/qfold.hpp>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "batch_norm_golden.hpp"
#include "catch_compat.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using qfold::op_kind;
using qfold::point_problem;

// Adapters declared, never run on a node: what the points are is all these tests ask.
// Batch-norm folding's points and nothing else.
struct bn_only {
  using node_id = int;
  std::vector<int> nodes() const { return {}; }
  op_kind kind(int) const { return op_kind::other; }
  std::span<const int> operands(int) const { return {}; }
  std::size_t use_count(int) const { return 0; }
  std::optional<qfold::tensor_view<float>> constant(int) const { return std::nullopt; }
  qfold::conv_attributes conv_attributes(int) const { return {}; }
  qfold::batch_norm_attributes batch_norm_attributes(int) const { return {}; }
  int add_constant(std::span<const float>, std::span<const std::int64_t>) { return 0; }
  void set_operand(int, std::size_t, int) {}
  void remove_last_operand(int) {}
  void replace_uses(int, int) {}
  void erase(int) noexcept {}
};
// The structure without use_count: no pass can run.
struct no_use_count {
  using node_id = int;
  std::vector<int> nodes() const { return {}; }
  op_kind kind(int) const { return op_kind::other; }
  std::span<const int> operands(int) const { return {}; }
};
// String ids, a MUL shift taking an int, a qparams without std::optional, an erase that may
// throw: a point of each kind of mistake.
struct mistaken {
  using node_id = std::string;
  std::vector<std::string> nodes() const { return {}; }
  op_kind kind(const std::string&) const { return op_kind::other; }
  std::span<const std::string> operands(const std::string&) const { return {}; }
  std::size_t use_count(const std::string&) const { return 0; }
  int mul_shift(int) const { return 0; }
  qfold::qparams qparams(const std::string&) const { return {}; }
  void erase(const std::string&) {}
};

// The two mistakes: qparams returning qfold::qparams, not std::optional<qfold::qparams>;
// with string ids, a MUL shift asked by int (merge_rescales reads it when present).
struct qparams_by_value : bn_only {
  qfold::qparams qparams(int) const { return {}; }
  bool qparams_shared(int) const { return false; }
  void set_qparams(int, const qfold::qparams&) {}
};
struct rescales_by_name {
  using node_id = std::string;
  std::vector<std::string> nodes() const { return {}; }
  op_kind kind(const std::string&) const { return op_kind::other; }
  std::span<const std::string> operands(const std::string&) const { return {}; }
  std::size_t use_count(const std::string&) const { return 0; }
  qfold::rescale_view rescale(const std::string&) const { return {}; }
  std::string add_rescale(const std::string&, const qfold::rescale_attributes&,
                          std::span<const qfold::scale_factor>) {
    return {};
  }
  void replace_uses(const std::string&, const std::string&) {}
  void erase(const std::string&) noexcept {}
  int mul_shift(int) const { return 0; }
};

template <class G>
std::vector<std::string> skipped_passes(const qfold::pipeline<G>& p) {
  std::vector<std::string> r;
  for (const auto& s : p.skipped()) r.emplace_back(s.pass);
  return r;
}
}  // namespace

TEST_CASE("adapter API: each point's problem is told apart", "[graph][adapter]") {
  using namespace qfold::detail;
  CHECK(kind_point::problem<bn_only>() == point_problem::none);
  CHECK(qparams_point::problem<bn_only>() == point_problem::missing);
  CHECK(use_count_point::problem<no_use_count>() == point_problem::missing);
  CHECK(mul_shift_point::problem<mistaken>() == point_problem::wrong_parameters);
  CHECK(qparams_point::problem<mistaken>() == point_problem::wrong_return);
  CHECK(erase_point::problem<mistaken>() == point_problem::throws);
  CHECK(erase_point::problem<bn_only>() == point_problem::none);
  CHECK(table_entries_point::problem<bn_only>() == point_problem::missing);  // nor int_constant
  CHECK(qfold::batch_norm_foldable_graph<bn_only>);
  CHECK_FALSE(qfold::quantize_foldable_graph<bn_only>);
  CHECK_FALSE(qfold::ir_graph<no_use_count>);
  CHECK(qfold::ir_graph<mistaken>);
  CHECK(qfold::ir_graph<tiny::graph>);
  CHECK(qfold::quantized_graph<tiny::graph>);
}

TEST_CASE("adapter API: standard_pipeline notes each pass it leaves out, and why",
          "[graph][adapter]") {
  const auto bn = qfold::standard_pipeline<bn_only>();
  CHECK(bn.names() == std::vector<std::string>{"fold_batch_norm"});
  CHECK(skipped_passes(bn) == std::vector<std::string>{"fold_scale_into_quantize", "fold_dyt_alpha",
                                                       "fold_dyt_affine", "fold_merge_rescales",
                                                       "fold_compose_tables",
                                                       "fold_collapse_to_table"});
  const qfold::skipped_pass& scale = bn.skipped().front();
  CHECK(scale.unmet.point == "qparams");
  CHECK(scale.unmet.problem == point_problem::missing);
  CHECK(scale.unmet.expected == "static std::optional<qfold::qparams> qparams(const G&, node_id)");
  CHECK(bn.skipped()[1].unmet.point == "int_constant");  // DyT alpha: table entries come after
  CHECK(bn.skipped()[4].unmet.point == "table_values");  // compose tables has no int_constant

  // The run's report carries them; print puts them first and counts them.
  bn_only g;
  const auto r = bn.run(g);
  REQUIRE(r.skipped.size() == 6);
  std::ostringstream os;
  qfold::print(os, r, [](int n) { return n; });
  const std::string text = os.str();
  CHECK(text.rfind("fold_scale_into_quantize: skipped: ir_traits<G>::qparams: missing; expected "
                   "static std::optional<qfold::qparams> qparams(const G&, node_id)\n",
                   0) == 0);
  CHECK(text.find("0 folded, 0 rejected, 0 bytes removed, 0 added (net 0 removed), 6 passes "
                  "skipped\n") != std::string::npos);

  // only() keeps the notes of the passes it keeps.
  CHECK(
      skipped_passes(bn.only(std::vector<std::string>{"fold_batch_norm", "fold_merge_rescales"})) ==
      std::vector<std::string>{"fold_merge_rescales"});

  // Without use_count nothing runs, and every pass says so.
  const auto none = qfold::standard_pipeline<no_use_count>();
  CHECK(none.names().empty());
  REQUIRE(none.skipped().size() == 7);
  for (const auto& s : none.skipped()) {
    CHECK(s.unmet.point == "use_count");
    CHECK(s.unmet.problem == point_problem::missing);
  }

  // A mistyped point is named with what is wrong with it, required or optional.
  const auto by_value = qfold::standard_pipeline<qparams_by_value>();
  REQUIRE(by_value.skipped().size() == 6);
  CHECK(by_value.skipped()[0].unmet.point == "qparams");
  CHECK(by_value.skipped()[0].unmet.problem == point_problem::wrong_return);
  const auto by_int = qfold::standard_pipeline<rescales_by_name>();
  CHECK(by_int.names() == std::vector<std::string>{});
  const auto merge = std::ranges::find(by_int.skipped(), std::string_view("fold_merge_rescales"),
                                       &qfold::skipped_pass::pass);
  REQUIRE(merge != by_int.skipped().end());
  CHECK(merge->unmet.point == "mul_shift");
  CHECK(merge->unmet.problem == point_problem::wrong_parameters);
  CHECK(merge->unmet.expected == "static int mul_shift(const G&, node_id)");

  // The demo IR gives every point: nothing is skipped.
  const auto all = qfold::standard_pipeline<tiny::graph>();
  CHECK(all.skipped().empty());
  CHECK(all.names().size() == 7);
}

namespace {
// Constants of any float type, by value in a std::variant: conv and batch norm only.
using values = std::variant<std::vector<float>, std::vector<double>, std::vector<long double>>;
struct vnode {
  op_kind kind;
  std::vector<int> in;
  values data;
  std::vector<std::int64_t> shape;
  bool dead = false;
};
struct variant_ir {
  using node_id = int;
  std::vector<vnode> ns;
  std::vector<int> outputs;

  int add(vnode n) {
    ns.push_back(std::move(n));
    return static_cast<int>(ns.size()) - 1;
  }
  const vnode& at(int n) const { return ns.at(static_cast<std::size_t>(n)); }
  vnode& at(int n) { return ns.at(static_cast<std::size_t>(n)); }
  std::vector<int> nodes() const {
    std::vector<int> r;
    for (int n = 0; n < static_cast<int>(ns.size()); ++n)
      if (!at(n).dead) r.push_back(n);
    return r;
  }
  op_kind kind(int n) const { return at(n).kind; }
  std::span<const int> operands(int n) const { return at(n).in; }
  std::size_t use_count(int n) const {
    std::size_t uses = static_cast<std::size_t>(std::ranges::count(outputs, n));
    for (const vnode& m : ns)
      if (!m.dead) uses += static_cast<std::size_t>(std::ranges::count(m.in, n));
    return uses;
  }
  using view = std::variant<qfold::tensor_view<float>, qfold::tensor_view<double>,
                            qfold::tensor_view<long double>>;
  std::optional<view> constant(int n) const {
    if (at(n).kind != op_kind::constant) return std::nullopt;
    return std::visit(
        [&](const auto& v) -> view {
          using T = typename std::remove_cvref_t<decltype(v)>::value_type;
          return qfold::tensor_view<T>{v, at(n).shape};
        },
        at(n).data);
  }
  qfold::conv_attributes conv_attributes(int) const { return {}; }  // OIHW, groups 1
  qfold::batch_norm_attributes batch_norm_attributes(int n) const { return {epsilon.at(n), false}; }
  template <class T>
  int add_constant(std::span<const T> data, std::span<const std::int64_t> shape) {
    return add({op_kind::constant,
                {},
                std::vector<T>(data.begin(), data.end()),
                {shape.begin(), shape.end()}});
  }
  void set_operand(int n, std::size_t i, int v) {
    auto& in = at(n).in;
    i == in.size() ? in.push_back(v) : void(in.at(i) = v);
  }
  void remove_last_operand(int n) { at(n).in.pop_back(); }
  void replace_uses(int old, int v) {
    for (vnode& m : ns) std::ranges::replace(m.in, old, v);
    std::ranges::replace(outputs, old, v);
  }
  void erase(int n) noexcept { ns[static_cast<std::size_t>(n)].dead = true; }
  std::map<int, double> epsilon;
};

// The same IR whose add_constant makes float32 constants only.
struct float32_out_ir : variant_ir {
  int add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    return variant_ir::add_constant(data, shape);
  }
};

// input -> conv(w, b) -> batch_norm(gamma, beta, mean, var); the constants' types as given.
template <class W, class S>
variant_ir conv_bn(const qfold_test::bn_case& c, double eps) {
  variant_ir g;
  const auto k = [&](std::vector<std::int64_t> shape, auto v) {
    return g.add({op_kind::constant, {}, std::move(v), std::move(shape)});
  };
  const std::int64_t channels = c.shape.at(0);
  auto gamma = qfold_test::as<S>(c, "gamma"), beta = qfold_test::as<S>(c, "beta");
  if (gamma.empty()) gamma.assign(static_cast<std::size_t>(channels), S{1});  // torch's default
  if (beta.empty()) beta.assign(static_cast<std::size_t>(channels), S{0});
  const int x = g.add({op_kind::input, {}, {}, {}});
  std::vector<int> conv_in{x, k(c.shape, qfold_test::as<W>(c, "w"))};
  if (c.arrays.count("b") != 0) conv_in.push_back(k({channels}, qfold_test::as<W>(c, "b")));
  const int conv = g.add({op_kind::convolution, conv_in, {}, {}});
  const int bn = g.add(
      {op_kind::batch_norm,
       {conv, k({channels}, gamma), k({channels}, beta),
        k({channels}, qfold_test::as<S>(c, "mean")), k({channels}, qfold_test::as<S>(c, "var"))},
       {},
       {}});
  g.epsilon[bn] = eps;
  g.outputs.push_back(bn);
  return g;
}
}  // namespace

TEST_CASE("adapter API: float64 constants in a std::variant fold bit-identically to torch",
          "[graph][adapter][golden]") {
  static_assert(qfold::batch_norm_foldable_graph<variant_ir>);
  int checked = 0;
  for (const auto& c : qfold_test::read_cases()) {
    if (c.keys.at("dtype") != "float64" || c.keys.at("kind") != "conv" ||
        c.keys.at("torch_status") != "ok")
      continue;
    CAPTURE(c.keys.at("name"));
    const double eps = std::strtod(c.keys.at("eps").c_str(), nullptr);
    variant_ir g = conv_bn<double, double>(c, eps);
    const int bn = g.outputs.at(0);
    const auto r = qfold::fold_batch_norms(g);
    REQUIRE(r.folded() == 1);
    const auto& site = r.sites.at(0);
    CHECK(site.bytes_added > 0);
    CHECK(site.bytes_removed > site.bytes_added);  // w, b and four statistics go; w and b come
    REQUIRE(site.replaced.has_value());
    CHECK(*site.replaced == bn);
    REQUIRE(g.outputs.size() == 1);
    const int conv = g.outputs[0];
    CHECK(g.kind(conv) == op_kind::convolution);
    CHECK(site.replacement == conv);
    REQUIRE(g.operands(conv).size() == 3);
    const auto& w = std::get<std::vector<double>>(g.at(g.operands(conv)[1]).data);
    const auto& b = std::get<std::vector<double>>(g.at(g.operands(conv)[2]).data);
    const auto fused_w = qfold_test::as<double>(c, "fused_w");
    const auto fused_b = qfold_test::as<double>(c, "fused_b");
    REQUIRE(w.size() == fused_w.size());
    REQUIRE(b.size() == fused_b.size());
    for (std::size_t i = 0; i < w.size(); ++i)
      REQUIRE(qfold_test::bits(w[i]) == qfold_test::bits(fused_w[i]));
    for (std::size_t i = 0; i < b.size(); ++i)
      REQUIRE(qfold_test::bits(b[i]) == qfold_test::bits(fused_b[i]));
    ++checked;

    // The same site with float32 weights and float64 statistics mixes two types: refused.
    variant_ir mixed = conv_bn<float, double>(c, eps);
    const std::size_t mixed_nodes = mixed.ns.size();
    const auto m = qfold::fold_batch_norms(mixed);
    REQUIRE(m.sites.size() == 1);
    REQUIRE_FALSE(m.sites[0].folded());
    CHECK(m.sites[0].rejected->code == qfold::reason::unsupported_type);
    CHECK(mixed.ns.size() == mixed_nodes);
    CHECK(mixed.nodes().size() == mixed_nodes);

    // long double: refused naming the type, never "not a constant".
    variant_ir wide = conv_bn<long double, long double>(c, eps);
    const std::size_t before = wide.ns.size();
    const auto l = qfold::fold_batch_norms(wide);
    REQUIRE(l.sites.size() == 1);
    REQUIRE_FALSE(l.sites[0].folded());
    CHECK(l.sites[0].rejected->code == qfold::reason::unsupported_type);
    CHECK(l.sites[0].rejected->message.find("long double") != std::string_view::npos);
    CHECK(wide.ns.size() == before);
    CHECK(wide.nodes().size() == before);

    // A float64 site the adapter cannot add float64 constants for.
    float32_out_ir narrow{conv_bn<double, double>(c, eps)};
    const auto n = qfold::fold_batch_norms(narrow);
    REQUIRE(n.sites.size() == 1);
    REQUIRE_FALSE(n.sites[0].folded());
    CHECK(n.sites[0].rejected->code == qfold::reason::unsupported_type);
    CHECK(n.sites[0].rejected->message.find("float64") != std::string_view::npos);
    CHECK(narrow.ns.size() == before);
  }
  CHECK(checked == 4);
}

TEST_CASE("adapter API: a cycle is refused, never folded through", "[graph][adapter]") {
  std::vector<std::int8_t> inc(256), dec(256);
  for (int i = 0; i < 256; ++i) {
    inc[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i == 127 ? 127 : i - 127);
    dec[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i == 0 ? -128 : i - 129);
  }
  tiny::graph g;
  const auto x = g.input("x", {4}, qfold::dtype::int8);
  const auto t1 = g.table("t1", x, inc);
  const auto t2 = g.table("t2", t1, dec);
  g.mark_output(t2);
  g.set_operand(t1, 0, t2);  // t1 <-> t2
  const auto live_range = g.nodes();
  const std::vector live(live_range.begin(), live_range.end());
  const auto r = qfold::fold_compose_tables(g);
  CHECK(r.folded() == 0);
  REQUIRE(r.sites.size() == 1);
  CHECK(r.sites[0].rejected->code == qfold::reason::cyclic_graph);
  CHECK(r.sites[0].nodes.size() == 2);
  const auto after = g.nodes();
  CHECK(std::vector(after.begin(), after.end()) == live);
  CHECK(g.operands(t1)[0] == t2);
  CHECK(g.operands(t2)[0] == t1);
  // The whole pipeline leaves it alone too, and says so once per pass that looked.
  const auto all = qfold::standard_pipeline<tiny::graph>().run(g);
  CHECK(all.folded() == 0);
  for (const auto& s : all.sites) CHECK(s.rejected->code == qfold::reason::cyclic_graph);
}

namespace {
// Operands only, ids as given (negative, sparse, in any order): what the cycle check reads.
template <class Id>
struct edges_ir {
  using node_id = Id;
  std::map<Id, std::vector<Id>> in;
  std::vector<Id> nodes() const {
    std::vector<Id> r;
    for (const auto& [n, ops] : in) r.push_back(n);
    return r;
  }
  op_kind kind(const Id&) const { return op_kind::other; }
  std::span<const Id> operands(const Id& n) const { return in.at(n); }
  std::size_t use_count(const Id&) const { return 0; }
};
template <class Id>
std::vector<Id> on_cycles(const edges_ir<Id>& g, std::vector<Id> order) {
  auto r = qfold::detail::nodes_on_cycles(g, order);
  std::ranges::sort(r);
  return r;
}
}  // namespace

TEST_CASE("adapter API: cycles are found for any id type and node order", "[graph][adapter]") {
  constexpr int lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
  // Dense ids (a table), sparse ones (sorted), extremes of the type; producers first or not.
  for (const std::vector<int>& ids :
       {std::vector<int>{0, 1, 2, 3, 4}, {-2, -1, 0, 1, 2}, {lo, -7, 0, 1000000, hi}}) {
    CAPTURE(ids);
    edges_ir<int> g;  // a -> b -> c -> d, e reads a and d, an operand outside the graph
    g.in = {{ids[0], {}},
            {ids[1], {ids[0], 12345}},
            {ids[2], {ids[1]}},
            {ids[3], {ids[2]}},
            {ids[4], {ids[0], ids[3]}}};
    CHECK(on_cycles(g, ids).empty());
    CHECK(on_cycles(g, {ids[4], ids[2], ids[0], ids[3], ids[1]}).empty());
    g.in[ids[1]].push_back(ids[3]);  // b <-> c <-> d, and e after them
    std::vector<int> expect{ids[1], ids[2], ids[3], ids[4]};
    std::ranges::sort(expect);
    CHECK(on_cycles(g, ids) == expect);
    CHECK(on_cycles(g, {ids[3], ids[4], ids[0], ids[2], ids[1]}) == expect);
  }
  edges_ir<std::string> s;  // string ids: sorted, not tabled
  s.in = {{"x", {}}, {"t1", {"t2"}}, {"t2", {"t1"}}, {"y", {"x"}}};
  CHECK(on_cycles(s, {"y", "t1", "x", "t2"}) == std::vector<std::string>{"t1", "t2"});
}

TEST_CASE("adapter API: reports over many blocks, net bytes, a name kept", "[graph][adapter]") {
  const auto p = qfold::standard_pipeline<bn_only>();
  bn_only g;
  qfold::report<int> all;
  for (int block = 0; block < 3; ++block) all += p.run(g);
  CHECK(all.skipped.size() == 6);  // each pass noted once, not once a block

  qfold::site_report<int> s;
  s.pass = "fold_batch_norm";
  s.nodes = {1, 2};
  s.bytes_removed = 10;
  s.bytes_added = 16;
  s.replaced = 2;
  s.replacement = 2;  // take_name gave the replacement the replaced node's id
  all.sites.push_back(s);
  CHECK(all.net_bytes_removed() == -6);
  std::ostringstream os;
  qfold::print(os, all, [](int n) { return "n" + std::to_string(n); });
  CHECK(os.str().find("fold_batch_norm: n1 -> n2: folded, 10 bytes removed, 16 added (net 6 "
                      "added); n2 replaced (its name kept)\n") != std::string::npos);
}
