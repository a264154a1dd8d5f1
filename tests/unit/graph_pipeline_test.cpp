// The pass pipeline (order, insertion before / after a named pass, concatenated reports) and
// reports (counts, printed text), over the demo IR (examples/tiny_ir).
#include <cstdint>
#include <qfold/qfold.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "catch_compat.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using id = tiny::graph::node_id;
using pipeline = qfold::pipeline<tiny::graph>;
using report = qfold::report<id>;

// A pass that folds nothing and reports one rejected site named after it, so that the order of
// the sites in a concatenated report shows the order the passes ran in.
pipeline::pass marker(std::string_view name, std::vector<std::string>* log = nullptr) {
  return [name, log](tiny::graph&) {
    if (log) log->emplace_back(name);
    report r;
    qfold::site_report<tiny::graph::node_id> s;
    s.pass = name;
    s.rejected = qfold::rejection{qfold::reason::unsupported, name};
    r.sites.push_back(s);
    return r;
  };
}
pipeline::pass batch_norm_pass() {
  return [](tiny::graph& g) { return qfold::fold_batch_norms(g); };
}

// Two conv + batch-norm sites: "bn_ok" folds, "bn_train" (training mode) is refused.
tiny::graph two_sites() {
  tiny::graph g;
  const id x = g.input("x", {1, 2, 3, 3});
  const auto c = [&](const char* name, std::vector<float> v, std::vector<std::int64_t> shape) {
    return g.constant(name, std::move(v), std::move(shape));
  };
  const id w = c("w", tiny::random_floats(4, 1), {2, 2, 1, 1});
  const id gamma = c("gamma", {1, 2}, {2}), beta = c("beta", {0, 1}, {2});
  const id mean = c("mean", {0.5f, -0.5f}, {2}), var = c("var", {1, 4}, {2});
  const id bn_ok = g.batch_norm("bn_ok", g.conv2d("conv_ok", x, w), gamma, beta, mean, var);
  const id bn_train = g.batch_norm("bn_train", g.conv2d("conv_train", bn_ok, w), gamma, beta, mean,
                                   var, 1e-5, true);
  g.mark_output(bn_train);
  return g;
}
}  // namespace

TEST_CASE("pipeline: add, insert before / after a named pass, names in order",
          "[graph][pipeline]") {
  pipeline p;
  CHECK(p.names().empty());
  p.add(std::string(qfold::batch_norm_pass_name), batch_norm_pass()).add("last", marker("last"));
  CHECK(p.names() == std::vector<std::string>{"fold_batch_norm", "last"});

  CHECK(p.insert_before(qfold::batch_norm_pass_name, "first", marker("first")));
  CHECK(p.insert_after(qfold::batch_norm_pass_name, "after_bn", marker("after_bn")));
  CHECK(p.insert_before("last", "before_last", marker("before_last")));
  CHECK(p.insert_after("last", "very_last", marker("very_last")));
  CHECK(p.names() == std::vector<std::string>{"first", "fold_batch_norm", "after_bn", "before_last",
                                              "last", "very_last"});

  // An unknown anchor inserts nothing.
  CHECK_FALSE(p.insert_before("no_such_pass", "x", marker("x")));
  CHECK_FALSE(p.insert_after("no_such_pass", "y", marker("y")));
  CHECK(p.names().size() == 6);
}

TEST_CASE("pipeline: run() runs the passes in order and concatenates their reports",
          "[graph][pipeline]") {
  std::vector<std::string> log;
  pipeline p;
  p.add("b", marker("b", &log));
  p.add(std::string(qfold::batch_norm_pass_name), batch_norm_pass());
  CHECK(p.insert_before("b", "a", marker("a", &log)));
  CHECK(p.insert_after(qfold::batch_norm_pass_name, "c", marker("c", &log)));

  tiny::graph g = two_sites();
  const report r = p.run(g);
  CHECK(log == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(r.sites.size() == 5);  // a, b, the two batch-norm sites, c
  CHECK(r.sites[0].pass == "a");
  CHECK(r.sites[1].pass == "b");
  CHECK(r.sites[2].pass == qfold::batch_norm_pass_name);
  CHECK(r.sites[3].pass == qfold::batch_norm_pass_name);
  CHECK(r.sites[4].pass == "c");
  CHECK(r.sites[2].folded());
  CHECK(r.folded() == 1);
  CHECK(r.rejected() == 4);

  // A second run finds the refused site again, and nothing else to fold.
  const report again = p.run(g);
  CHECK(again.folded() == 0);
  CHECK(again.rejected() == 4);
  CHECK(again.bytes_removed() == 0);
}

TEST_CASE("report: counts, operator+= and the printed text", "[graph][pipeline][report]") {
  tiny::graph g = two_sites();
  const report r = qfold::fold_batch_norms(g);
  REQUIRE(r.sites.size() == 2);
  CHECK(r.folded() == 1);
  CHECK(r.rejected() == 1);
  // bn_ok's mean and var are shared with bn_train (kept); w is still read by conv_train (kept);
  // nothing went, so no bytes were removed. The folded weights (4 floats) and bias (2) were added.
  CHECK(r.bytes_removed() == 0);
  CHECK(r.bytes_added() == 24);
  REQUIRE(r.sites[0].replaced.has_value());
  REQUIRE(r.sites[0].replacement.has_value());
  CHECK(r.sites[0].replaced == r.sites[0].nodes[1]);      // bn_ok's readers
  CHECK(r.sites[0].replacement == r.sites[0].nodes[0]);   // now read conv_ok
  CHECK(r.sites[0].added.size() == 2);
  CHECK(r.sites[0].folded());
  REQUIRE(r.sites[1].rejected.has_value());
  CHECK(r.sites[1].rejected->code == qfold::reason::training_mode);

  std::ostringstream named;
  qfold::print(named, r, [&](id n) { return g.name(n); });
  CHECK(named.str() ==
        "fold_batch_norm: conv_ok -> bn_ok: folded, 0 bytes removed, 24 added (net 24 added); "
        "bn_ok replaced by conv_ok\n"
        "fold_batch_norm: conv_train -> bn_train: rejected (training_mode) batch norm in training "
        "mode\n"
        "1 folded, 1 rejected, 0 bytes removed, 24 added (net 24 added)\n");

  // Without names, operator<< prints node ids.
  std::ostringstream ids;
  ids << r;
  CHECK(ids.str().find("rejected (training_mode)") != std::string::npos);
  CHECK(ids.str().find(std::to_string(r.sites[1].nodes[0]) + " -> " +
                       std::to_string(r.sites[1].nodes[1])) != std::string::npos);

  report sum = r;
  sum += r;
  CHECK(sum.sites.size() == 4);
  CHECK(sum.folded() == 2);
  CHECK(sum.rejected() == 2);
}

TEST_CASE("report: bytes removed per site and in total; witnesses are printed",
          "[graph][pipeline][report]") {
  tiny::graph g;
  const id x = g.input("x", {1, 2, 3, 3});
  const auto c = [&](const std::string& name, std::vector<float> v,
                     std::vector<std::int64_t> shape) {
    return g.constant(name, std::move(v), std::move(shape));
  };
  const auto params = [&](const char* prefix, float variance) {
    const std::string p(prefix);
    return std::vector<id>{c(p + ".gamma", {1, 1}, {2}), c(p + ".beta", {0, 0}, {2}),
                           c(p + ".mean", {0, 0}, {2}), c(p + ".var", {1, variance}, {2})};
  };
  // "a" folds and frees its weight (4 floats), bias (2) and parameters (4 x 2): 56 bytes.
  const auto pa = params("a", 1);
  const id a = g.batch_norm(
      "bn_a", g.conv2d("conv_a", x, c("wa", {1, 2, 3, 4}, {2, 2, 1, 1}), c("ba", {1, 1}, {2})),
      pa[0], pa[1], pa[2], pa[3]);
  // "b" has variance -eps on channel 1: 1 / sqrt(0) makes its weights infinite, from index 2.
  const auto pb = params("b", -1e-5f);
  const id b = g.batch_norm("bn_b", g.conv2d("conv_b", a, c("wb", {1, 2, 3, 4}, {2, 2, 1, 1})),
                            pb[0], pb[1], pb[2], pb[3]);
  g.mark_output(b);

  const report r = qfold::fold_batch_norms(g);
  REQUIRE(r.sites.size() == 2);
  CHECK(r.sites[0].bytes_removed == (4 + 2 + 4 * 2) * sizeof(float));
  CHECK(r.sites[1].bytes_removed == 0);
  CHECK(r.bytes_removed() == 56);
  REQUIRE(r.sites[1].rejected.has_value());
  CHECK(r.sites[1].rejected->code == qfold::reason::non_finite);
  CHECK(r.sites[1].rejected->index == 2);

  std::ostringstream text;
  qfold::print(text, r, [&](id n) { return g.name(n); });
  CHECK(text.str().find("conv_a -> bn_a: folded, 56 bytes removed") != std::string::npos);
  CHECK(text.str().find("conv_b -> bn_b: rejected (non_finite)") != std::string::npos);
  CHECK(text.str().find("[at 2]") != std::string::npos);
  CHECK(text.str().find("1 folded, 1 rejected, 56 bytes removed") != std::string::npos);
}
