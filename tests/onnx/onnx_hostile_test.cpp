// The ONNX adapter on hostile input, reached as an embedding compiler would reach it (no ONNX
// checker, no qfold-onnx validation): counts from the file that wrap or disagree with the data,
// empty or mismatched batch-norm parameters, lying declared shapes, impossible Conv attributes,
// malformed graphs. Then the mutation points' transaction contract: every point either does all
// it says or throws having changed nothing (failures injected at every step), erase never
// throws, and the inverses a driver uses bring the model back byte for byte.
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "model_builder.hpp"
#include "onnx_tool.hpp"

namespace {

using qfold_onnx::graph;
using qfold_onnx_test::builder;
using qfold_onnx_test::conv_bn;
using qfold_onnx_test::gemm_bn;
using qfold_onnx_test::matmul_bn;
using id = graph::node_id;

std::string bytes_of(const onnx::ModelProto& m) { return m.SerializeAsString(); }

onnx::TensorProto& init(builder& b, const std::string& name) {
  for (auto& t : *b.g->mutable_initializer())
    if (t.name() == name) return t;
  FAIL("no initializer " << name);
  throw std::logic_error("unreachable");
}
id find(const graph& g, const std::string& name) {
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g.name(static_cast<id>(i)) == name) return static_cast<id>(i);
  FAIL("no node " << name);
  return graph::none;
}

const qfold_onnx::site& only_site(const qfold_onnx::fold_result& r) {
  REQUIRE(r.sites.size() == 1);
  return r.sites.front();
}

// fold_model on a model nothing validated: the one site's reason and note, and the model must be
// byte-identical afterwards (a refused site changes nothing).
std::pair<std::string, std::string> refused(builder& b) {
  const std::string before = bytes_of(b.m);
  const auto r = qfold_onnx::fold_model(b.m);
  const auto& s = only_site(r);
  CHECK_FALSE(s.folded);
  CHECK(bytes_of(b.m) == before);
  return {s.reason, s.note};
}

}  // namespace

// --- Counts from the file ---------------------------------------------------------------------

TEST_CASE("hostile: dims whose product wraps are never read (Conv and ConvTranspose)") {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    builder b = conv_bn(op);
    auto& w = init(b, "w");
    // 4 * (2^62 + 1) = 2^64 + 4: in 64-bit arithmetic it wraps to 4, which the 16 bytes of
    // data would match. The checked product refuses it.
    w.clear_dims();
    w.add_dims(4);
    w.add_dims((std::int64_t{1} << 62) + 1);
    const float v[4] = {1, 2, 3, 4};
    w.set_raw_data(v, sizeof v);
    CHECK(qfold_onnx::tensor_problem(w) ==
          "dims (4, 4611686018427387905): the product of the dims overflows");
    {
      onnx::ModelProto copy = b.m;
      graph g(copy);
      CHECK_FALSE(g.constant(find(g, "w")));
    }
    const auto [reason, note] = refused(b);
    CHECK(reason == "invalid_shape");
    CHECK(note == std::string(op) +
                      " weight: dims (4, 4611686018427387905): the product of the dims overflows");
  }
}

TEST_CASE("hostile: dims against data, each storage") {
  struct bad {
    const char* what;
    std::function<void(onnx::TensorProto&)> apply;
    const char* problem;
  };
  const std::vector<bad> cases = {
      {"negative dim", [](onnx::TensorProto& t) { t.set_dims(1, -2); },
       "dims (2, -2, 1, 1): negative dimension -2"},
      {"raw_data too short", [](onnx::TensorProto& t) { t.mutable_raw_data()->resize(12); },
       "raw_data holds 12 bytes, dims (2, 2, 1, 1) need 16"},
      {"raw_data too long", [](onnx::TensorProto& t) { t.mutable_raw_data()->resize(20); },
       "raw_data holds 20 bytes, dims (2, 2, 1, 1) need 16"},
      {"float_data short",
       [](onnx::TensorProto& t) {
         t.clear_raw_data();
         for (const float v : {1.0f, 2.0f, 3.0f}) t.add_float_data(v);
       },
       "float_data holds 3 values, dims (2, 2, 1, 1) need 4"},
      {"no data at all", [](onnx::TensorProto& t) { t.clear_raw_data(); },
       "float_data holds 0 values, dims (2, 2, 1, 1) need 4"},
      {"raw_data and float_data", [](onnx::TensorProto& t) { t.add_float_data(1.0f); },
       "more than one data field"},
      {"int64_data in a float tensor",
       [](onnx::TensorProto& t) {
         t.clear_raw_data();
         for (int k = 0; k < 4; ++k) t.add_int64_data(k);
       },
       "data in a field that does not match its type"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    builder b = conv_bn();
    c.apply(init(b, "w"));
    CHECK(qfold_onnx::tensor_problem(init(b, "w")) == c.problem);
    const auto [reason, note] = refused(b);
    CHECK(reason == "invalid_shape");
    CHECK(note == std::string("Conv weight: ") + c.problem);
  }
}

TEST_CASE("hostile: a tensor with external data is not a constant, and qfold-onnx refuses it") {
  builder b = conv_bn();
  auto& w = init(b, "w");
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w.add_external_data();
  kv->set_key("location");
  kv->set_value("../w.bin");
  CHECK(qfold_onnx::tensor_problem(w) == "external data");
  const auto [reason, note] = refused(b);
  CHECK(reason == "invalid_shape");
  CHECK(note == "Conv weight: external data");
  try {
    (void)qfold_onnx::parse_model(bytes_of(b.m), "dir/m.onnx");
    FAIL("accepted");
  } catch (const qfold_onnx::tool_error& e) {
    CHECK(e.code() == qfold_onnx::exit_bad_input);
    CHECK(std::string(e.what()) ==
          "'dir/m.onnx': initializer 'w': external data location '../w.bin' leaves the model's "
          "directory (refused)");
  }
  kv->set_value("/abs/w.bin");
  try {
    (void)qfold_onnx::parse_model(bytes_of(b.m), "dir/m.onnx");
    FAIL("accepted");
  } catch (const qfold_onnx::tool_error& e) {
    CHECK(std::string(e.what()) ==
          "'dir/m.onnx': initializer 'w': external data location '/abs/w.bin' is absolute "
          "(refused)");
  }
}

TEST_CASE("hostile: add_constant refuses dims that wrap, are negative or disagree") {
  builder b = conv_bn();
  graph g(b.m);
  const std::string before = bytes_of(b.m);
  const float v[4] = {1, 2, 3, 4};
  const std::int64_t wrap[2] = {4, (std::int64_t{1} << 62) + 1}, neg[2] = {-2, -2}, three[1] = {3};
  CHECK_THROWS_AS(g.add_constant(v, wrap), std::invalid_argument);
  CHECK_THROWS_AS(g.add_constant(v, neg), std::invalid_argument);
  CHECK_THROWS_AS(g.add_constant(v, three), std::invalid_argument);
  CHECK(bytes_of(b.m) == before);
  g.commit();
  CHECK(bytes_of(b.m) == before);
}

// --- Batch-norm parameters ------------------------------------------------------------------

TEST_CASE("hostile: empty batch-norm parameters are refused, never read as ones or zeros") {
  for (const char* p : {"gamma", "beta", "mean", "var"}) {
    INFO(p);
    builder b = conv_bn();
    auto& t = init(b, std::string("bn.") + p);
    t.set_dims(0, 0);
    t.clear_raw_data();
    const auto [reason, note] = refused(b);
    CHECK(reason == "invalid_shape");
    const std::string onnx_name = std::string(p) == "gamma"  ? "scale"
                                  : std::string(p) == "beta" ? "B"
                                  : std::string(p) == "mean" ? "input_mean"
                                                             : "input_var";
    CHECK(note == "BatchNormalization " + onnx_name + " is empty (dims (0))");
  }
}

TEST_CASE("hostile: batch-norm parameters of another length or rank") {
  SECTION("B of 3 values after a scale of 2: the adapter refuses") {
    builder b = conv_bn();
    b.init("three", {3});
    b.g->mutable_node(1)->set_input(2, "three");
    const auto [reason, note] = refused(b);
    CHECK(reason == "channel_mismatch");
    CHECK(note == "BatchNormalization B has 3 values, the parameters before it 2");
  }
  SECTION("all four of 3 values for a conv of 2 channels: the fold refuses") {
    builder b = conv_bn();
    b.bn_params("bn3", 3);
    auto* bn = b.g->mutable_node(1);
    for (int k = 1; k < 5; ++k) bn->set_input(k, "bn3." + std::string(bn->input(k)).substr(3));
    const auto [reason, note] = refused(b);
    CHECK(reason == "channel_mismatch");
  }
  SECTION("a scale of dims (2, 1)") {
    builder b = conv_bn();
    b.init("g21", {2, 1});
    b.g->mutable_node(1)->set_input(1, "g21");
    const auto [reason, note] = refused(b);
    CHECK(reason == "invalid_shape");
    CHECK(note == "BatchNormalization scale has dims (2, 1) (one value per channel needed)");
  }
}

// --- Declared shapes are hints ----------------------------------------------------------------

TEST_CASE("hostile: value_info never decides the MatMul's rank") {
  SECTION("rank 3 declared as rank 2: refused (folding would scale the wrong axis)") {
    builder b = matmul_bn(false, {2, 4, 6});
    b.value_info("p", {8, 4});
    {
      onnx::ModelProto copy = b.m;
      graph g(copy);
      CHECK(g.output_rank(find(g, "mm")) == 3);  // x's rank (2, 4, 6) @ (6, 4)
    }
    CHECK(refused(b).first == "ambiguous_axis");
  }
  SECTION("rank 2 declared as rank 3: folded all the same") {
    builder b = matmul_bn(false);
    b.value_info("p", {1, 3, 4});
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).folded);
  }
  SECTION("an input rank nothing implements: unknown, refused") {
    builder b;
    b.input("x", {3, 6});
    b.init("W", {6, 4});
    b.bn_params("bn", 4);
    b.node("Opaque", "opaque", {"x"}, {"o"})->set_domain("com.example");
    b.node("MatMul", "mm", {"o", "W"}, {"p"});
    b.bn("bn", "p", "bn", "y");
    b.output("y");
    {
      onnx::ModelProto copy = b.m;
      graph g(copy);
      CHECK_FALSE(g.rank_of("o"));
      CHECK(g.output_rank(find(g, "mm")) == 0);
    }
    CHECK(refused(b).first == "ambiguous_axis");
  }
}

TEST_CASE("hostile: ranks come from the graph inputs and op rules only") {
  builder b;
  b.input("x", {2, 3, 4});
  b.int64_init("shape", {6, -1});
  b.int64_init("axes", {0});
  b.node("Relu", "relu", {"x"}, {"r"});
  b.node("Flatten", "flat", {"r"}, {"f"});
  b.node("Reshape", "reshape", {"r", "shape"}, {"s"});
  b.node("Unsqueeze", "unsq", {"s", "axes"}, {"u"});
  b.node("Add", "add", {"u", "f"}, {"a"});
  b.output("a");
  auto* v = b.g->add_value_info();  // a lie about r: ignored
  v->set_name("r");
  v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(24);
  graph g(b.m);
  CHECK(g.rank_of("x") == 3u);
  CHECK(g.rank_of("r") == 3u);  // not 1
  CHECK(g.rank_of("f") == 2u);
  CHECK(g.rank_of("s") == 2u);  // the shape tensor has 2 elements
  CHECK(g.rank_of("u") == 3u);
  CHECK(g.rank_of("a") == 3u);  // broadcast: the larger rank
}

// --- Impossible Conv attributes, malformed graphs -------------------------------------------

TEST_CASE("hostile: Conv and ConvTranspose attributes ONNX forbids are refused") {
  struct bad {
    const char* op;
    std::function<void(builder&, onnx::NodeProto&)> apply;
    const char* note;
  };
  const auto rank1_weight = [](builder& b, onnx::NodeProto&) {  // w: dims (4)
    auto& w = init(b, "w");
    w.clear_dims();
    w.add_dims(4);
  };
  const std::vector<bad> cases = {
      {"Conv",
       [](builder&, onnx::NodeProto& n) {
         builder::attr(&n, "strides", std::vector<std::int64_t>{0, 1});
       },
       "Conv strides value 0 is below 1"},
      {"ConvTranspose",
       [](builder&, onnx::NodeProto& n) {
         builder::attr(&n, "strides", std::vector<std::int64_t>{1, 0});
       },
       "ConvTranspose strides value 0 is below 1"},
      {"Conv", [](builder&, onnx::NodeProto& n) { builder::attr(&n, "group", std::int64_t{0}); },
       "Conv group 0 is not positive"},
      {"Conv", [](builder&, onnx::NodeProto& n) { builder::attr(&n, "group", std::int64_t{4}); },
       "Conv group 4 does not divide the 2 output channels"},
      {"ConvTranspose",
       [](builder&, onnx::NodeProto& n) { builder::attr(&n, "group", std::int64_t{4}); },
       "ConvTranspose group 4 does not divide the 2 input channels"},
      {"Conv",
       [](builder&, onnx::NodeProto& n) {
         builder::attr(&n, "pads", std::vector<std::int64_t>{0, -1, 0, 0});
       },
       "Conv pads value -1 is below 0"},
      {"Conv",
       [](builder&, onnx::NodeProto& n) {
         builder::attr(&n, "dilations", std::vector<std::int64_t>{1, 1, 1});
       },
       "Conv dilations has 3 values for 2 spatial axes"},
      {"Conv", rank1_weight, "Conv weight of rank 1 (needs 3 or more)"},
      {"ConvTranspose", rank1_weight, "ConvTranspose weight of rank 1 (needs 3 or more)"},
      {"Conv",
       [](builder&, onnx::NodeProto& n) {
         builder::attr(&n, "kernel_shape", std::vector<std::int64_t>{3, 3});
       },
       "Conv kernel_shape (3, 3) differs from the weight's (1, 1)"},
  };
  for (const auto& c : cases) {
    INFO(c.note);
    builder b = conv_bn(c.op);
    c.apply(b, *b.g->mutable_node(0));
    const auto [reason, note] = refused(b);
    CHECK(reason == "invalid_shape");
    CHECK(note == c.note);
  }
}

TEST_CASE("hostile: malformed graphs (no checker) fold nothing and crash nothing") {
  SECTION("a name defined twice") {
    builder b = conv_bn();
    b.node("Relu", "relu", {"x"}, {"c"});  // c again
    const std::string before = bytes_of(b.m);
    const auto r = qfold_onnx::fold_model(b.m);
    REQUIRE(r.sites.size() == 1);
    CHECK(r.sites[0].reason == "invalid_shape");
    CHECK(r.sites[0].note == "the graph defines 'c' twice");
    CHECK(bytes_of(b.m) == before);
  }
  SECTION("a value read before it is defined") {
    builder b;
    b.input("x", {1, 2, 4, 4});
    b.init("w", {2, 2, 1, 1});
    b.bn_params("bn", 2);
    b.bn("bn", "c", "bn", "y");
    b.node("Conv", "conv", {"x", "w"}, {"c"});
    b.output("y");
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).note == "'c' is read before it is defined");
  }
  SECTION("producers and batch norms without outputs or inputs") {
    builder b = conv_bn();
    b.g->mutable_node(0)->clear_output();
    b.node("BatchNormalization", "bn_short", {"y", "bn.gamma"}, {"z"});
    b.node("MatMul", "mm_no_out", {"x", "w"}, {});
    b.node("BatchNormalization", "bn_no_x", {"", "bn.gamma", "bn.beta", "bn.mean", "bn.var"},
           {"q"});
    const std::string before = bytes_of(b.m);
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(r.folded() == 0);
    CHECK(bytes_of(b.m) == before);
  }
}

TEST_CASE("hostile: a refused fold keeps every value_info entry") {
  builder b = conv_bn();
  builder::attr(b.g->mutable_node(1), "training_mode", std::int64_t{1});
  for (const char* name : {"c", "not_in_the_graph"}) {  // the second names nothing
    auto* v = b.g->add_value_info();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  const auto [reason, note] = refused(b);
  CHECK(reason == "training_mode");
  CHECK(b.m.graph().value_info_size() == 2);
}

// --- Transactions -----------------------------------------------------------------------------

namespace {

// What the adapter exposes about its graph, for "nothing changed" beyond the model's bytes.
struct state {
  std::vector<id> nodes;
  std::vector<std::vector<id>> operands;
  std::vector<std::size_t> uses;
  std::vector<qfold::op_kind> kinds;
  bool operator==(const state&) const = default;
};
state state_of(const graph& g, std::size_t size) {
  state s;
  s.nodes = g.nodes();
  for (std::size_t i = 0; i < size; ++i) {
    const auto n = static_cast<id>(i);
    const auto ops = g.operands(n);
    s.operands.emplace_back(ops.begin(), ops.end());
    s.uses.push_back(g.alive(n) ? g.use_count(n) : 0);
    s.kinds.push_back(g.kind(n));
  }
  return s;
}

// Runs `prepare` (not injected) then `op` with a failure injected at step 0, 1, 2, ... until op
// succeeds: each failed call must leave the model's bytes and the adapter's state as they were
// (before and after commit). Returns how many steps op has (each was made to fail once).
std::size_t strong_guarantee(const std::function<builder()>& make,
                             const std::function<void(graph&)>& prepare,
                             const std::function<void(graph&)>& op) {
  for (std::size_t k = 0;; ++k) {
    builder b = make();
    graph g(b.m);
    prepare(g);
    const std::string before = bytes_of(b.m);
    const std::size_t size = g.size();
    const state was = state_of(g, size);
    g.inject_failure_after(k);
    bool threw = false;
    try {
      op(g);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    g.inject_failure_after(std::nullopt);
    if (!threw) {
      CHECK(k > 0);  // the point has steps, and each one was made to fail
      return k;
    }
    INFO("failure injected at step " << k);
    REQUIRE(bytes_of(b.m) == before);
    REQUIRE(state_of(g, size) == was);
    for (std::size_t i = size; i < g.size(); ++i) CHECK_FALSE(g.alive(static_cast<id>(i)));
    // Committed, it equals the same graph committed with the failed call never made.
    builder twin = make();
    graph tg(twin.m);
    prepare(tg);
    tg.commit();
    g.commit();
    REQUIRE(bytes_of(b.m) == bytes_of(twin.m));
  }
}

const std::vector<float> four(4, 0.5f), thirty(30, 0.25f), twentyfour(24, 0.125f);

}  // namespace

TEST_CASE("transactions: every mutation point fails whole, at every step") {
  id w = graph::none, bias = graph::none;
  const std::int64_t w_shape[4] = {2, 2, 1, 1}, c2[1] = {2}, nk[2] = {5, 6}, n5[1] = {5},
                     mm_w[2] = {4, 6}, n4[1] = {4};
  const auto add_w = [&](graph& g) { w = g.add_constant(four, w_shape); };
  const auto add_wb = [&](graph& g) {
    add_w(g);
    bias = g.add_constant(std::span<const float>(four).first(2), c2);
  };
  const auto nothing = [](graph&) {};
  std::size_t steps = 0;
  SECTION("add_constant") {
    steps = strong_guarantee([] { return conv_bn(); }, nothing, add_w);
  }
  SECTION("set_operand: replace a Conv weight") {
    steps = strong_guarantee([] { return conv_bn(); }, add_w,
                             [&](graph& g) { g.set_operand(find(g, "conv"), 1, w); });
  }
  SECTION("set_operand: append a Conv bias") {
    steps = strong_guarantee([] { return conv_bn(); }, add_wb,
                             [&](graph& g) { g.set_operand(find(g, "conv"), 2, bias); });
  }
  SECTION("set_operand: fill an empty bias slot") {
    const auto make = [] {
      builder b = conv_bn();
      b.g->mutable_node(0)->add_input("");
      return b;
    };
    steps =
        strong_guarantee(make, add_wb, [&](graph& g) { g.set_operand(find(g, "conv"), 2, bias); });
  }
  SECTION("set_operand: Gemm transB = 0 weight (transB set), then C appended (beta set)") {
    const auto prep = [&](graph& g) {
      w = g.add_constant(thirty, nk);
      bias = g.add_constant(std::span<const float>(thirty).first(5), n5);
    };
    steps = strong_guarantee([] { return gemm_bn(0, false); }, prep,
                             [&](graph& g) { g.set_operand(find(g, "gemm"), 1, w); });
    steps += strong_guarantee([] { return gemm_bn(0, false); }, prep,
                              [&](graph& g) { g.set_operand(find(g, "gemm"), 2, bias); });
  }
  SECTION("set_operand: MatMul weight (stored transposed) and bias (an Add made)") {
    const auto prep = [&](graph& g) {
      w = g.add_constant(twentyfour, mm_w);
      bias = g.add_constant(std::span<const float>(twentyfour).first(4), n4);
    };
    steps = strong_guarantee([] { return matmul_bn(false); }, prep,
                             [&](graph& g) { g.set_operand(find(g, "mm"), 1, w); });
    steps += strong_guarantee([] { return matmul_bn(false); }, prep,
                              [&](graph& g) { g.set_operand(find(g, "mm"), 2, bias); });
    steps += strong_guarantee([] { return matmul_bn(true); }, prep,
                              [&](graph& g) { g.set_operand(find(g, "add"), 2, bias); });
  }
  SECTION("set_operand: a MatMul weight that is read elsewhere is copied") {
    const auto make = [] {
      builder b = matmul_bn(false);
      b.init("W2", {4, 6});
      b.node("MatMul", "other", {"x2", "W2"}, {"o"});
      b.input("x2", {1, 4});
      b.output("o");
      return b;
    };
    steps = strong_guarantee(make, nothing,
                             [&](graph& g) { g.set_operand(find(g, "mm"), 1, find(g, "W2")); });
  }
  SECTION("remove_last_operand after appends") {
    const auto prep_conv = [&](graph& g) {
      add_wb(g);
      g.set_operand(find(g, "conv"), 2, bias);
    };
    steps = strong_guarantee([] { return conv_bn(); }, prep_conv,
                             [&](graph& g) { g.remove_last_operand(find(g, "conv")); });
    const auto prep_mm = [&](graph& g) {
      bias = g.add_constant(std::span<const float>(twentyfour).first(4), n4);
      g.set_operand(find(g, "mm"), 2, bias);
    };
    steps += strong_guarantee([] { return matmul_bn(false); }, prep_mm,
                              [&](graph& g) { g.remove_last_operand(find(g, "mm")); });
  }
  SECTION("replace_uses: the producer takes the batch norm's name") {
    steps = strong_guarantee([] { return conv_bn(); }, nothing,
                             [&](graph& g) { g.replace_uses(find(g, "bn"), find(g, "conv")); });
  }
  SECTION("replace_uses: an Identity forwards (the producer has another reader)") {
    const auto make = [] {
      builder b = conv_bn();
      b.node("Relu", "relu", {"c"}, {"r"});
      b.output("r");
      return b;
    };
    steps = strong_guarantee(make, nothing,
                             [&](graph& g) { g.replace_uses(find(g, "bn"), find(g, "conv")); });
  }
  CHECK(steps > 0);
}

TEST_CASE("transactions: refused calls change nothing") {
  builder b = conv_bn();
  b.node("Relu", "sink", {"y"}, {});  // a node without outputs (no checker ran)
  graph g(b.m);
  const std::string before = bytes_of(b.m);
  const id conv = find(g, "conv"), bn = find(g, "bn"), sink = find(g, "sink");
  CHECK_THROWS_AS(g.replace_uses(sink, conv), std::logic_error);
  CHECK_THROWS_AS(g.replace_uses(bn, sink), std::logic_error);
  CHECK_THROWS_AS(g.set_operand(conv, 5, find(g, "w")), std::out_of_range);
  CHECK_THROWS_AS(g.set_operand(conv, 1, 999), std::out_of_range);
  CHECK_THROWS_AS(g.remove_last_operand(find(g, "w")), std::logic_error);
  CHECK_THROWS_AS(g.replace_uses(bn, 999), std::out_of_range);
  CHECK(bytes_of(b.m) == before);
  g.commit();
  CHECK(bytes_of(b.m) == before);
}

TEST_CASE("transactions: a MatMul + Add's own bias cannot be removed; views restore only theirs") {
  builder b = matmul_bn(true);
  b.init("W2", {6, 4});
  b.node("MatMul", "mm2", {"x", "W2"}, {"p2"});
  b.bn("bn", "p2", "bn", "y2");
  b.output("y2");
  graph g(b.m);
  const std::string before = bytes_of(b.m);
  const id add = find(g, "add"), mm2 = find(g, "mm2");
  CHECK_THROWS_AS(g.remove_last_operand(add), std::logic_error);
  // mm2's operand 1 is its own view of W2; add's view of W is not mm2's.
  CHECK_THROWS_AS(g.set_operand(mm2, 1, g.operands(add)[1]), std::logic_error);
  CHECK(bytes_of(b.m) == before);
}

TEST_CASE("transactions: erase never throws and leaves what it cannot erase") {
  builder b = conv_bn();
  graph g(b.m);
  static_assert(noexcept(g.erase(graph::none)));
  const std::string before = bytes_of(b.m);
  const auto uses = [&](const std::string& n) { return g.use_count(find(g, n)); };
  g.erase(find(g, "x"));     // a graph input
  g.erase(find(g, "w"));     // read by the conv
  g.erase(find(g, "conv"));  // read by the batch norm
  g.erase(graph::none);
  g.erase(12345);
  CHECK(g.alive(find(g, "x")));
  CHECK(g.alive(find(g, "w")));
  CHECK(uses("w") == 1);
  g.commit();
  CHECK(bytes_of(b.m) == before);
}

TEST_CASE("transactions: the driver's inverses bring the model back byte for byte") {
  // The steps the batch-norm pass takes at a site, then their inverses newest first (erase of
  // what was added, set_operand back to the previous operand, remove_last_operand for appends),
  // as the transactional driver does on a failure before its commit point.
  struct form {
    const char* name;
    std::function<builder()> make;
    const char* producer;
    std::vector<std::int64_t> w_shape;
  };
  const std::vector<form> forms = {
      {"Conv", [] { return conv_bn(); }, "conv", {2, 2, 1, 1}},
      {"ConvTranspose", [] { return conv_bn("ConvTranspose"); }, "conv", {2, 2, 1, 1}},
      {"Gemm transB 0, no C", [] { return gemm_bn(0, false); }, "gemm", {5, 6}},
      {"Gemm transB 1, C", [] { return gemm_bn(1, true); }, "gemm", {5, 6}},
      {"MatMul", [] { return matmul_bn(false); }, "mm", {4, 6}},
      {"MatMul + Add", [] { return matmul_bn(true); }, "add", {4, 6}},
  };
  for (const auto& f : forms) {
    INFO(f.name);
    builder b = f.make();
    const std::string before = bytes_of(b.m);
    graph g(b.m);
    const id p = find(g, f.producer);
    const std::vector<id> old(g.operands(p).begin(), g.operands(p).end());
    std::size_t count = 1;
    for (const auto d : f.w_shape) count *= static_cast<std::size_t>(d);
    const std::vector<float> wv(count, 0.75f), bv(static_cast<std::size_t>(f.w_shape[0]), 0.5f);
    const std::int64_t channels[1] = {f.w_shape[0]};
    const id w = g.add_constant(wv, f.w_shape);
    const id bias = g.add_constant(bv, channels);
    g.set_operand(p, 1, w);
    const bool append = old.size() < 3;
    g.set_operand(p, 2, bias);
    CHECK(bytes_of(b.m) != before);
    if (append) {
      g.remove_last_operand(p);
    } else {
      g.set_operand(p, 2, old[2]);
    }
    g.set_operand(p, 1, old[1]);
    g.erase(bias);
    g.erase(w);
    CHECK(std::vector<id>(g.operands(p).begin(), g.operands(p).end()) == old);
    CHECK(bytes_of(b.m) == before);  // erase removes an added initializer at once
    g.commit();
    CHECK(bytes_of(b.m) == before);
    // And the site still folds afterwards, as if nothing had happened.
    onnx::ModelProto again = b.m;
    CHECK(qfold_onnx::fold_model(again).folded() == 1);
  }
}

TEST_CASE("transactions: the pass with a failure injected at every step folds or rolls back") {
  // Every site form in one model. With the k-th journalled step failing, the driver rolls that
  // site back (adapter_failure) and the others fold: the model must then equal, byte for byte,
  // the same model folded with that site refused for another reason (here: its batch norm made
  // a training one), and pass the ONNX checker.
  const auto make = [] {
    builder b;
    b.input("x", {1, 2, 4, 4});
    b.input("v", {3, 6});
    b.init("w", {2, 2, 1, 1});
    b.bn_params("bn1", 2);
    b.node("Conv", "conv", {"x", "w"}, {"c"});
    b.bn("bn1", "c", "bn1", "y1");
    b.init("wt", {2, 3, 2, 2});
    b.bn_params("bn2", 3);
    b.node("ConvTranspose", "up", {"y1", "wt"}, {"u"});
    b.bn("bn2", "u", "bn2", "y2");
    b.init("B", {6, 5});
    b.bn_params("bn3", 5);
    b.node("Gemm", "gemm", {"v", "B"}, {"g"});
    b.bn("bn3", "g", "bn3", "y3");
    b.init("W", {6, 4});
    b.init("cb", {4});
    b.bn_params("bn4", 4);
    b.node("MatMul", "mm", {"v", "W"}, {"p"});
    b.node("Add", "add", {"p", "cb"}, {"a"});
    b.bn("bn4", "a", "bn4", "y4");
    b.init("W2", {6, 3});
    b.bn_params("bn5", 3);
    b.node("MatMul", "mm2", {"v", "W2"}, {"q"});
    b.bn("bn5", "q", "bn5", "y5");
    for (const char* y : {"y2", "y3", "y4", "y5"}) b.output(y);
    return b;
  };
  std::size_t failures = 0;
  for (std::size_t k = 0;; ++k) {
    INFO("failure injected at step " << k);
    builder b = make();
    graph g(b.m);
    g.inject_failure_after(k);
    const auto r = qfold::fold_batch_norms(g);
    g.inject_failure_after(std::nullopt);
    g.commit();
    REQUIRE(r.sites.size() == 5);
    std::vector<std::size_t> failed;
    for (std::size_t s = 0; s < r.sites.size(); ++s)
      if (r.sites[s].rejected) {
        CHECK(r.sites[s].rejected->code == qfold::reason::adapter_failure);
        failed.push_back(s);
      }
    if (failed.empty()) {  // k is past the last step: everything folded
      CHECK(failures > 0);
      break;
    }
    REQUIRE(failed.size() == 1);
    ++failures;
    CHECK_NOTHROW(onnx::checker::check_model(b.m));
    builder want = make();
    auto* bn = want.g->mutable_node(0);
    for (auto& n : *want.g->mutable_node())
      if (n.name() == "bn" + std::to_string(failed[0] + 1)) bn = &n;
    // refused in analysis: the model around it folds
    builder::attr(bn, "training_mode", std::int64_t{1});
    graph wg(want.m);
    (void)qfold::fold_batch_norms(wg);
    wg.commit();
    bn->mutable_attribute()->RemoveLast();
    CHECK(bytes_of(b.m) == bytes_of(want.m));
  }
}
