// The ONNX adapter (qfold_onnx/graph.hpp) and the tool's pieces (onnx_tool.hpp) on small
// hand-built models: what maps onto qfold's vocabulary, ONNX defaults, Identity and shared
// initializers, every refusal, the values (equal to qfold::fold_batch_norm on the same data),
// and that every output passes the ONNX checker.
#include <onnx/checker.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catch_compat.hpp"
#include "model_builder.hpp"
#include "onnx_tool.hpp"

namespace {
using qfold_onnx_test::builder;
using qfold_onnx_test::conv_bn;
using qfold_onnx_test::gemm_bn;
using qfold_onnx_test::matmul_bn;

const onnx::TensorProto* find_init(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}
const onnx::NodeProto* find_node(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& n : m.graph().node())
    if (n.name() == name) return &n;
  return nullptr;
}
std::vector<float> data(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / sizeof(float));
  std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
  return v;
}
std::vector<float> data(const onnx::ModelProto& m, const std::string& name) {
  const auto* t = find_init(m, name);
  REQUIRE(t != nullptr);
  return data(*t);
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
std::size_t count_op(const onnx::ModelProto& m, const std::string& op) {
  std::size_t n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op ? 1u : 0u;
  return n;
}
std::string bytes_of(const onnx::ModelProto& m) {
  std::string s;
  REQUIRE(m.SerializeToString(&s));
  return s;
}

// The fold qfold computes for these parameters, directly on spans.
struct expected_fold {
  std::vector<float> w, b;
};
expected_fold reference(const onnx::ModelProto& m, const std::string& weight,
                        const std::string& bias, const std::string& p, qfold::weight_layout layout,
                        std::int64_t groups, bool linear) {
  const auto* wt = find_init(m, weight);
  REQUIRE(wt != nullptr);
  const auto w = data(*wt);
  const std::vector<std::int64_t> shape(wt->dims().begin(), wt->dims().end());
  const auto b = bias.empty() ? std::vector<float>{} : data(m, bias);
  const auto gamma = data(m, p + ".gamma"), beta = data(m, p + ".beta"),
             mean = data(m, p + ".mean"), var = data(m, p + ".var");
  expected_fold r{std::vector<float>(w.size()), std::vector<float>(mean.size())};
  const qfold::weights_view<float> view{w, shape, layout, groups, linear};
  const qfold::batch_norm_params<float> params{mean, var, gamma, beta, 1e-5f, false};
  REQUIRE_FALSE(qfold::fold_batch_norm(view, std::span<const float>(b), params,
                                       std::span<float>(r.w), std::span<float>(r.b)));
  return r;
}
std::vector<float> transpose(const std::vector<float>& v, std::size_t rows, std::size_t cols) {
  std::vector<float> t(v.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return t;
}

const qfold_onnx::site& only_site(const qfold_onnx::fold_result& r) {
  REQUIRE(r.sites.size() == 1);
  return r.sites.front();
}

// The folded node's weight (operand 1) and bias (operand 2) hold the reference's values.
void check_weight_and_bias(const onnx::ModelProto& m, const onnx::NodeProto& n,
                           const expected_fold& want) {
  CHECK(same_bits(data(m, n.input(1)), want.w));
  CHECK(same_bits(data(m, n.input(2)), want.b));
}

// fold_model on a model with one site, which the fold must leave byte for byte as it was (a
// refused site changes nothing): that site.
qfold_onnx::site fold_unchanged(onnx::ModelProto& m) {
  const std::string before = bytes_of(m);
  const auto r = qfold_onnx::fold_model(m);
  qfold_onnx::site s = only_site(r);
  CHECK(bytes_of(m) == before);
  return s;
}

}  // namespace

TEST_CASE("onnx adapter: conv + batch norm folds, torch's values, output checked") {
  builder b;
  b.input("x", {1, 4, 5, 5});
  b.init("w", {6, 2, 3, 3});
  b.init("bias", {6});
  b.bn_params("bn", 6);
  auto* conv = b.node("Conv", "conv", {"x", "w", "bias"}, {"c"});
  builder::attr(conv, "group", std::int64_t{2});
  b.bn("bn", "c", "bn", "y");
  b.output("y");
  const auto want = reference(b.m, "w", "bias", "bn", qfold::weight_layout::o_i_s, 2, false);
  const auto r = qfold_onnx::fold_model(b.m);
  const auto& s = only_site(r);
  CHECK(s.folded);
  CHECK(s.nodes == std::vector<std::string>{"conv", "bn"});
  // w, bias and the four parameters are gone: 6*2*3*3 + 5*6 floats.
  CHECK(s.bytes_removed == (108 + 30) * sizeof(float));
  CHECK(count_op(b.m, "BatchNormalization") == 0);
  CHECK(b.m.graph().initializer_size() == 2);
  const auto* c = find_node(b.m, "conv");
  REQUIRE(c != nullptr);
  CHECK(c->output(0) == "y");  // the graph output keeps its name
  check_weight_and_bias(b.m, *c, want);
  CHECK_NOTHROW(onnx::checker::check_model(b.m));
}

TEST_CASE("onnx adapter: ONNX defaults (epsilon, group, pads, auto_pad)") {
  builder b;
  b.input("x", {1, 3, 5, 5});
  b.init("w", {4, 3, 3, 3});
  b.init("wt", {4, 2, 2, 2});
  b.bn_params("bn", 4);
  b.node("Conv", "plain", {"x", "w"}, {"a"});
  auto* c2 = b.node("Conv", "valid", {"x", "w"}, {"v"});
  builder::attr(c2, "auto_pad", std::string("VALID"));
  auto* c3 = b.node("Conv", "same", {"x", "w"}, {"s"});
  builder::attr(c3, "auto_pad", std::string("SAME_UPPER"));
  builder::attr(c3, "strides", std::vector<std::int64_t>{2, 2});
  b.node("ConvTranspose", "up", {"a", "wt"}, {"u"});
  b.bn("bn", "u", "bn", "y");  // no epsilon attribute: 1e-5
  b.output("y");
  b.output("v");
  b.output("s");
  qfold_onnx::graph g(b.m);
  const auto id = [&](const std::string& name) {
    for (const auto n : g.nodes())
      if (g.name(n) == name) return n;
    FAIL("no node " << name);
    return qfold_onnx::graph::none;
  };
  const auto plain = g.geometry(id("plain"));
  REQUIRE(plain);
  CHECK(plain->group == 1);
  CHECK(plain->auto_pad == "NOTSET");
  CHECK(plain->kernel_shape == std::vector<std::int64_t>{3, 3});  // from the weight
  CHECK(plain->strides == std::vector<std::int64_t>{1, 1});
  CHECK(plain->dilations == std::vector<std::int64_t>{1, 1});
  CHECK(plain->pads == std::vector<std::int64_t>{0, 0, 0, 0});
  CHECK(g.geometry(id("valid"))->pads == std::vector<std::int64_t>{0, 0, 0, 0});
  CHECK_FALSE(g.geometry(id("same"))->pads.has_value());  // depends on the input's shape
  CHECK(g.geometry(id("same"))->strides == std::vector<std::int64_t>{2, 2});
  const auto up = g.geometry(id("up"));
  CHECK(up->output_padding == std::vector<std::int64_t>{0, 0});
  CHECK(g.conv_attributes(id("up")).transposed);
  CHECK(g.conv_attributes(id("up")).layout == qfold::weight_layout::i_o_s);
  CHECK(g.conv_attributes(id("plain")).groups == 1);
  CHECK(g.kind(id("bn")) == qfold::op_kind::batch_norm);
  CHECK(g.batch_norm_attributes(id("bn")).epsilon == static_cast<double>(1e-5f));
  CHECK_FALSE(g.batch_norm_attributes(id("bn")).training);
}

TEST_CASE("onnx adapter: ConvTranspose, grouped, folds by output channel") {
  builder b;
  b.input("x", {1, 4, 3, 3});
  b.init("w", {4, 3, 2, 2});  // in 4, out/groups 3, groups 2: out 6
  b.bn_params("bn", 6);
  auto* t = b.node("ConvTranspose", "up", {"x", "w"}, {"u"});
  builder::attr(t, "group", std::int64_t{2});
  b.bn("bn", "u", "bn", "y");
  b.output("y");
  const auto want = reference(b.m, "w", "", "bn", qfold::weight_layout::i_o_s, 2, false);
  const auto r = qfold_onnx::fold_model(b.m);
  CHECK(only_site(r).folded);
  const auto* up = find_node(b.m, "up");
  REQUIRE(up->input_size() == 3);  // the bias was appended
  check_weight_and_bias(b.m, *up, want);
  CHECK_NOTHROW(onnx::checker::check_model(b.m));
}

TEST_CASE("onnx adapter: Identity on initializers is seen through and removed") {
  builder b;
  b.input("x", {1, 2, 4, 4});
  b.init("w", {3, 2, 1, 1});
  b.bn_params("bn", 3);
  b.conv_bn_through_identity();
  b.output("y");
  {
    onnx::ModelProto copy = b.m;
    qfold_onnx::graph g(copy);
    for (const auto n : g.nodes())
      if (g.name(n) == "id_w") {
        CHECK(g.kind(n) == qfold::op_kind::constant);
        const auto v = g.constant(n);
        REQUIRE(v);
        CHECK(v->shape.size() == 4);
        CHECK(same_bits({v->data.begin(), v->data.end()}, data(b.m, "w")));
      }
  }
  const auto want = reference(b.m, "w", "", "bn", qfold::weight_layout::o_i_s, 1, false);
  const auto r = qfold_onnx::fold_model(b.m);
  CHECK(only_site(r).folded);
  CHECK(only_site(r).bytes_removed == (6 + 12) * sizeof(float));
  CHECK(count_op(b.m, "Identity") == 0);
  CHECK(b.m.graph().initializer_size() == 2);
  check_weight_and_bias(b.m, *find_node(b.m, "conv"), want);
  CHECK_NOTHROW(onnx::checker::check_model(b.m));
}

TEST_CASE("onnx adapter: an initializer shared by several nodes is kept while it has readers") {
  builder b;
  b.input("x", {1, 2, 4, 4});
  b.init("w", {2, 2, 1, 1});
  b.init("bias", {2});
  b.bn_params("bn1", 2);
  b.bn_params("bn2", 2);
  b.node("Conv", "conv1", {"x", "w", "bias"}, {"c1"});
  b.node("Conv", "conv2", {"x", "w", "bias"}, {"c2"});
  b.node("Conv", "conv3", {"x", "w"}, {"c3"});  // no batch norm after it
  b.bn("bn1", "c1", "bn1", "y1");
  b.bn("bn2", "c2", "bn1", "y2");  // both batch norms share bn1's parameters
  b.output("y1");
  b.output("y2");
  b.output("c3");
  const auto want = reference(b.m, "w", "bias", "bn1", qfold::weight_layout::o_i_s, 1, false);
  const auto r = qfold_onnx::fold_model(b.m);
  REQUIRE(r.sites.size() == 2);
  CHECK(r.folded() == 2);
  CHECK(find_init(b.m, "w") != nullptr);  // conv3 still reads it
  CHECK(find_init(b.m, "bias") == nullptr);
  CHECK(find_init(b.m, "bn1.gamma") == nullptr);
  CHECK(find_init(b.m, "bn2.gamma") != nullptr);  // never read: not ours to remove
  for (const char* name : {"conv1", "conv2"}) {
    const auto* conv = find_node(b.m, name);
    CHECK(conv->input(1) != "w");
    check_weight_and_bias(b.m, *conv, want);
  }
  CHECK(find_node(b.m, "conv3")->input(1) == "w");
  CHECK_NOTHROW(onnx::checker::check_model(b.m));
}

TEST_CASE("onnx adapter: Gemm, transB 0 and 1, folds as torch's linear fold") {
  for (const std::int64_t trans_b : {0, 1}) {
    builder b = gemm_bn(trans_b, true);
    onnx::ModelProto ref = b.m;
    if (trans_b == 0) {  // the reference sees the (N, K) weight
      auto* rt = const_cast<onnx::TensorProto*>(find_init(ref, "B"));
      const auto w = transpose(data(*rt), 6, 5);
      rt->set_raw_data(w.data(), w.size() * sizeof(float));
      rt->set_dims(0, 5);
      rt->set_dims(1, 6);
    }
    const auto want = reference(ref, "B", "C", "bn", qfold::weight_layout::o_i_s, 1, true);
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).folded);
    const auto* g = find_node(b.m, "gemm");
    check_weight_and_bias(b.m, *g, want);
    if (trans_b == 0) {
      bool trans = false;
      for (const auto& a : g->attribute()) trans |= a.name() == "transB" && a.i() == 1;
      CHECK(trans);
    }
    CHECK_NOTHROW(onnx::checker::check_model(b.m));
  }
}

TEST_CASE("onnx adapter: Gemm forms that are refused, with a note") {
  struct form {
    const char* what;
    float alpha, beta;
    std::vector<std::int64_t> c_shape;
  };
  for (const form& f :
       {form{"Gemm with alpha != 1", 2.0f, 1.0f, {5}}, form{"Gemm with beta != 1", 1.0f, 0.5f, {5}},
        form{"Gemm's C is not one value per output column", 1.0f, 1.0f, {5, 1}}}) {
    builder b;
    b.input("x", {5, 6});
    b.init("B", {5, 6});
    b.init("C", f.c_shape);
    b.bn_params("bn", 5);
    auto* gemm = b.node("Gemm", "gemm", {"x", "B", "C"}, {"g"});
    builder::attr(gemm, "transB", std::int64_t{1});
    builder::attr(gemm, "alpha", f.alpha);
    builder::attr(gemm, "beta", f.beta);
    b.bn("bn", "g", "bn", "y");
    b.output("y");
    const auto s = fold_unchanged(b.m);  // a refused site leaves the model exactly as it was
    CHECK_FALSE(s.folded);
    CHECK(s.reason == "unsupported");
    CHECK(s.note == f.what);
  }
}

TEST_CASE("onnx adapter: MatMul + Add and MatMul alone fold; the weight stays (in, out)") {
  for (const bool with_add : {true, false}) {
    builder b;
    b.input("x", {3, 6});
    b.init("W", {6, 4});
    if (with_add) b.init("c", {4});
    b.bn_params("bn", 4);
    b.node("MatMul", "mm", {"x", "W"}, {"p"});
    if (with_add) b.node("Add", "add", {"c", "p"}, {"a"});  // bias on the left
    b.bn("bn", with_add ? "a" : "p", "bn", "y");
    b.output("y");
    onnx::ModelProto ref = b.m;
    auto* rt = const_cast<onnx::TensorProto*>(find_init(ref, "W"));
    const auto wt = transpose(data(*rt), 6, 4);
    rt->set_raw_data(wt.data(), wt.size() * sizeof(float));
    rt->set_dims(0, 4);
    rt->set_dims(1, 6);
    const auto want =
        reference(ref, "W", with_add ? "c" : "", "bn", qfold::weight_layout::o_i_s, 1, true);
    const auto r = qfold_onnx::fold_model(b.m);
    const auto& s = only_site(r);
    CHECK(s.folded);
    CHECK(s.nodes.front() == (with_add ? "add" : "mm"));
    const auto* mm = find_node(b.m, "mm");
    const auto* w = find_init(b.m, mm->input(1));
    REQUIRE(w != nullptr);
    CHECK(w->dims(0) == 6);
    CHECK(same_bits(data(*w), transpose(want.w, 4, 6)));
    const auto* add = find_node(b.m, with_add ? "add" : "mm_bias");
    REQUIRE(add != nullptr);
    CHECK(add->output(0) == "y");
    CHECK(same_bits(data(b.m, add->input(with_add ? 0 : 1)), want.b));
    CHECK(count_op(b.m, "BatchNormalization") == 0);
    CHECK(b.m.graph().initializer_size() == 2);
    CHECK_NOTHROW(onnx::checker::check_model(b.m));
  }
}

TEST_CASE("onnx adapter: MatMul refusals (rank 3 output, shared product, bias shape)") {
  SECTION("rank 3: the batch norm's channel axis is not the MatMul's last axis") {
    builder b = matmul_bn(false, {2, 4, 6});
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).reason == "ambiguous_axis");
  }
  SECTION("the MatMul's product has another reader") {
    builder b = matmul_bn(true, {2, 6});
    b.output("p");
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).reason == "unsupported");
    CHECK(only_site(r).note == "the MatMul's output has another reader");
  }
  SECTION("a bias of shape (N, 1) is not per output column") {
    builder b;
    b.input("x", {4, 6});
    b.init("W", {6, 4});
    b.init("c", {4, 1});
    b.bn_params("bn", 4);
    b.node("MatMul", "mm", {"x", "W"}, {"p"});
    b.node("Add", "add", {"p", "c"}, {"a"});
    b.bn("bn", "a", "bn", "y");
    b.output("y");
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).reason == "unsupported");
    CHECK(only_site(r).note == "Add after MatMul does not add a constant of shape (N) or (1, N)");
  }
}

TEST_CASE("onnx adapter: refusals leave the model unchanged") {
  SECTION("shared output") {
    builder b;
    b.input("x", {1, 2, 4, 4});
    b.init("w", {2, 2, 1, 1});
    b.bn_params("bn", 2);
    b.node("Conv", "conv", {"x", "w"}, {"c"});
    b.bn("bn", "c", "bn", "y");
    b.node("Add", "add", {"y", "c"}, {"z"});
    b.output("z");
    CHECK(fold_unchanged(b.m).reason == "shared_output");
  }
  SECTION("training mode") {
    builder b = conv_bn("Conv", 14);
    builder::attr(b.g->mutable_node(1), "training_mode", std::int64_t{1});  // the batch norm
    CHECK(fold_unchanged(b.m).reason == "training_mode");
  }
  SECTION("an initializer that is also a graph input can be overridden: not a constant") {
    builder b = conv_bn();
    b.input("w", {2, 2, 1, 1});
    CHECK(fold_unchanged(b.m).reason == "not_constant");
  }
  SECTION("a double weight is not a float32 constant") {
    builder b;
    b.input("x", {1, 2, 4, 4});
    auto* w = b.init("w", {2, 2, 1, 1});
    w->set_data_type(onnx::TensorProto::DOUBLE);
    const double d[4] = {1, 2, 3, 4};  // 8 bytes an element: a valid double tensor
    w->set_raw_data(d, sizeof d);
    b.bn_params("bn", 2);
    b.node("Conv", "conv", {"x", "w"}, {"c"});
    b.bn("bn", "c", "bn", "y");
    b.output("y");
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).reason == "not_constant");
  }
  SECTION("batch norm after a Relu") {
    builder b;
    b.input("x", {1, 2, 4, 4});
    b.bn_params("bn", 2);
    b.node("Relu", "relu", {"x"}, {"r"});
    b.bn("bn", "r", "bn", "y");
    b.output("y");
    const auto r = qfold_onnx::fold_model(b.m);
    const auto& s = only_site(r);
    CHECK(s.reason == "unsupported");
    CHECK(s.note == "input is Relu");
  }
  SECTION("spatial = 0 (opset 7): statistics per element") {
    builder b = conv_bn("Conv", 7);
    builder::attr(b.g->mutable_node(1), "spatial", std::int64_t{0});  // the batch norm
    const auto r = qfold_onnx::fold_model(b.m);
    const auto& s = only_site(r);
    CHECK_FALSE(s.folded);
    CHECK(s.note.find("spatial = 0") != std::string::npos);
    CHECK(r.batch_norms_after == 1);
  }
}

TEST_CASE("onnx adapter: a batch norm read by another node and a graph output") {
  builder b = conv_bn();  // its output y
  b.node("Relu", "relu", {"y"}, {"r"});
  b.output("r");
  auto* vi = b.g->add_value_info();  // value_info of the conv's old output goes away
  vi->set_name("c");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const auto r = qfold_onnx::fold_model(b.m);
  CHECK(only_site(r).folded);
  CHECK(find_node(b.m, "conv")->output(0) == "y");
  CHECK(find_node(b.m, "relu")->input(0) == "y");
  CHECK(b.m.graph().output(0).name() == "y");
  CHECK(b.m.graph().value_info_size() == 0);
  CHECK_NOTHROW(onnx::checker::check_model(b.m));
}

TEST_CASE("onnx adapter: a Constant node as the weight") {
  builder b;
  b.input("x", {1, 2, 4, 4});
  b.bn_params("bn", 2);
  b.constant("k", "w", {2, 2, 1, 1}, {1.0f, -2.0f, 0.5f, 3.0f});
  b.node("Conv", "conv", {"x", "w"}, {"c"});
  b.bn("bn", "c", "bn", "y");
  b.output("y");
  const auto r = qfold_onnx::fold_model(b.m);
  CHECK(only_site(r).folded);
  CHECK(count_op(b.m, "Constant") == 0);
  CHECK(only_site(r).bytes_removed == (4 + 8) * sizeof(float));
  CHECK_NOTHROW(onnx::checker::check_model(b.m));
}

TEST_CASE("onnx tool: parse_model errors") {
  const auto message = [](const std::string& bytes) -> std::string {
    try {
      (void)qfold_onnx::parse_model(bytes, "m.onnx");
    } catch (const qfold_onnx::tool_error& e) {
      CHECK(e.code() == qfold_onnx::exit_bad_input);
      return e.what();
    }
    return "";
  };
  CHECK(message("hello, world\n").find("not an ONNX model") != std::string::npos);
  CHECK(message("").find("not an ONNX model") != std::string::npos);
  builder b;
  b.input("x", {1, 2});
  b.node("Relu", "relu", {"x"}, {"y"});
  b.output("y");
  const std::string good = bytes_of(b.m);
  CHECK(message(good).empty());
  CHECK(message(good.substr(0, good.size() / 2)).find("truncated or corrupt") != std::string::npos);
  b.m.mutable_opset_import(0)->set_version(99);
  CHECK(message(bytes_of(b.m)).find("unsupported opset 99") != std::string::npos);
  b.m.mutable_opset_import(0)->set_version(13);
  b.m.set_ir_version(99);
  CHECK(message(bytes_of(b.m)).find("unsupported IR version 99") != std::string::npos);
}

TEST_CASE("onnx adapter: an absent bias (empty input name or none) is added in its slot") {
  SECTION("Conv with an empty third input") {
    builder b;
    b.input("x", {1, 2, 4, 4});
    b.init("w", {3, 2, 1, 1});
    b.bn_params("bn", 3);
    b.node("Conv", "conv", {"x", "w", ""}, {"c"});
    b.bn("bn", "c", "bn", "y");
    b.output("y");
    const auto want = reference(b.m, "w", "", "bn", qfold::weight_layout::o_i_s, 1, false);
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).folded);
    const auto* conv = find_node(b.m, "conv");
    REQUIRE(conv->input_size() == 3);
    CHECK(same_bits(data(b.m, conv->input(2)), want.b));
    CHECK_NOTHROW(onnx::checker::check_model(b.m));
  }
  SECTION("Gemm without C: C added, beta becomes 1") {
    builder b = gemm_bn(1, false);
    builder::attr(b.g->mutable_node(0), "beta", 0.25f);  // meaningless without C
    const auto want = reference(b.m, "B", "", "bn", qfold::weight_layout::o_i_s, 1, true);
    const auto r = qfold_onnx::fold_model(b.m);
    CHECK(only_site(r).folded);
    const auto* g = find_node(b.m, "gemm");
    REQUIRE(g->input_size() == 3);
    CHECK(same_bits(data(b.m, g->input(2)), want.b));
    float beta = 0;
    for (const auto& a : g->attribute())
      if (a.name() == "beta") beta = a.f();
    CHECK(beta == 1.0f);
    CHECK_NOTHROW(onnx::checker::check_model(b.m));
  }
}

// --- Aliased parsing and spliced writing (qfold-onnx's path: large raw_data never copied) ------

namespace {
// Large enough tensors to be aliased (>= raw_aliases::min_bytes): two Conv + BN sites, one
// refused (its Conv output has a second reader, so its weight is written from the input), a
// Gemm + BN with transB = 0 (the transposed view), and small tensors that stay in the model.
builder big_model() {
  builder b;
  b.input("x", {1, 16, 8, 8});
  b.init("w1", {32, 16, 3, 3});
  b.bn_params("bn1", 32);
  b.node("Conv", "conv1", {"x", "w1"}, {"c1"});
  b.bn("bn1", "c1", "bn1", "y1");
  b.init("w2", {32, 32, 1, 1});
  b.bn_params("bn2", 32);
  b.node("Conv", "conv2", {"y1", "w2"}, {"c2"});
  b.bn("bn2", "c2", "bn2", "y2");
  b.node("Relu", "relu2", {"c2"}, {"r2"});
  b.node("Flatten", "flat", {"y2"}, {"f"});
  b.init("gw", {2048, 1024});
  b.bn_params("bng", 1024);
  b.node("Gemm", "gemm", {"f", "gw"}, {"g"});
  b.bn("bng", "g", "bng", "y");
  b.output("y");
  b.output("r2");
  return b;
}
std::string read_file(const std::filesystem::path& p) {
  const qfold_onnx::input_file in(p.string());
  return std::string(in.bytes());
}
}  // namespace

TEST_CASE("onnx tool: the aliased path writes the bytes of the plain path") {
  auto b = big_model();
  const std::string bytes = bytes_of(b.m);
  const auto dir = std::filesystem::temp_directory_path();
  const auto plain_out = dir / "qfold_onnx_alias_plain.onnx";
  onnx::ModelProto plain = qfold_onnx::parse_model(bytes, "m.onnx");
  const auto plain_r = qfold_onnx::fold_model(plain);
  CHECK(plain_r.folded() == 2);
  const std::size_t plain_size = qfold_onnx::write_model(plain, plain_out.string());
  const std::string want = read_file(plain_out);
  CHECK(want.size() == plain_size);
  CHECK(want == plain.SerializeAsString());  // protobuf's own serializer, the oracle
  // Every alignment of the tensors in memory (the aligned ones are viewed in place, the others
  // copied to the spill), and once from a file (copied by sendfile).
  for (std::size_t shift = 0; shift < 5; ++shift) {
    std::string buffer(shift, 'x');
    buffer += bytes;
    std::optional<qfold_onnx::input_file> in;
    std::string_view view = std::string_view(buffer).substr(shift);
    if (shift == 4) {
      qfold_onnx::write_model(b.m, (dir / "qfold_onnx_alias_in.onnx").string());
      in.emplace((dir / "qfold_onnx_alias_in.onnx").string());
      view = in->bytes();
    }
    qfold_onnx::raw_aliases aliases;
    onnx::ModelProto m = qfold_onnx::parse_model(view, "m.onnx", &aliases, in ? in->fd() : -1);
    CHECK(aliases.size() >= 3);
    const auto r = qfold_onnx::fold_model(m, &aliases);
    CHECK(r.folded() == plain_r.folded());
    CHECK(r.bytes_removed() == plain_r.bytes_removed());
    qfold_onnx::check_output(m);
    const auto out = dir / "qfold_onnx_alias_out.onnx";
    CHECK(qfold_onnx::write_model(m, out.string(), &aliases) == plain_size);
    CHECK(read_file(out) == want);
    // Through the page cache only, and through O_DIRECT from the first byte (file_writer,
    // tests/unit/tool_file_writer_test.cpp): the same bytes.
    for (const auto how :
         {qfold_tool::file_writer::mode::buffered, qfold_tool::file_writer::mode::direct}) {
      CHECK(qfold_onnx::write_model(m, out.string(), &aliases, how) == plain_size);
      CHECK(read_file(out) == want);
    }
    // Unchanged, written again: the same bytes (the model lends its strings and gets them back).
    CHECK(qfold_onnx::write_model(m, out.string(), &aliases) == plain_size);
    CHECK(read_file(out) == want);
    // The file each write replaced is gone once write_model returns (removed on a thread that
    // the output's destructor joins), and so is every temporary.
    std::size_t left = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      left += e.path().filename().string().starts_with(".qfold_onnx_alias_out.onnx.qfold-");
    CHECK(left == 0);
  }
}

TEST_CASE("onnx tool: the aliased path checks sizes as the plain path does") {
  auto b = big_model();
  b.g->mutable_initializer(0)->mutable_raw_data()->resize(32 * 16 * 9 * 4 - 4);
  const std::string bytes = bytes_of(b.m);
  const auto message = [&](qfold_onnx::raw_aliases* aliases) -> std::string {
    try {
      (void)qfold_onnx::parse_model(bytes, "m.onnx", aliases);
    } catch (const qfold_onnx::tool_error& e) {
      return e.what();
    }
    return "";
  };
  qfold_onnx::raw_aliases aliases;
  const std::string plain = message(nullptr);
  CHECK(plain.find("raw_data holds 18428 bytes") != std::string::npos);
  CHECK(message(&aliases) == plain);
  // Two graph fields (protobuf merges them): parsed whole, without aliases, the same model.
  auto c = big_model();
  std::string twice = bytes_of(c.m);
  onnx::ModelProto extra;
  extra.mutable_graph()->set_doc_string("second");
  twice += bytes_of(extra);
  onnx::ModelProto merged;
  REQUIRE(qfold_onnx::parse_bytes(twice, merged));
  onnx::ModelProto m;
  qfold_onnx::raw_aliases none;
  REQUIRE(qfold_onnx::parse_bytes_aliased(twice, m, none));
  CHECK(none.empty());
  CHECK(bytes_of(m) == bytes_of(merged));
}

TEST_CASE("onnx transactions: add_constant into the spill changes nothing when it fails") {
  auto b = big_model();
  const std::string bytes = bytes_of(b.m);
  qfold_onnx::raw_aliases aliases;
  onnx::ModelProto m = qfold_onnx::parse_model(bytes, "m.onnx", &aliases);
  const std::vector<float> data(4096, 0.5f);
  const std::int64_t shape[1] = {4096};
  bool done = false;
  for (std::size_t k = 0; !done && k < 64; ++k) {
    qfold_onnx::graph g(m, &aliases);
    const std::string before = bytes_of(m);
    const std::size_t aliased = aliases.size();
    g.inject_failure_after(k);
    try {
      (void)g.add_constant(data, shape);
      done = true;
    } catch (const std::bad_alloc&) {
      CHECK(bytes_of(m) == before);
      CHECK(aliases.size() == aliased);
    }
  }
  CHECK(done);
}

TEST_CASE("onnx spill: lent room is kept where it is, and taken back by any other keep") {
  qfold_onnx::raw_spill spill;
  const std::string a(10000, 'a'), b(20000, 'b');
  const auto first = spill.keep(a);
  REQUIRE(first.data() != nullptr);  // Linux with memfd, as the tests run
  CHECK(first == a);
  // Room filled in place and kept: the same bytes, no copy (the same address).
  auto room = spill.lend(b.size());
  REQUIRE(room.size() == b.size());
  std::memcpy(room.data(), b.data(), b.size());
  const auto kept = spill.keep(std::string_view(room.data(), room.size()));
  CHECK(kept.data() == room.data());
  CHECK(kept == b);
  CHECK(first == a);  // what was kept before is untouched
  // Released space is lent again (its pages exist), and another keep takes the room back: the
  // bytes given to keep() are then copied, and the room's space is not claimed twice.
  spill.release(first);
  room = spill.lend(a.size());
  CHECK(room.data() == first.data());
  const auto other = spill.keep(std::string_view(b).substr(0, 5000));
  CHECK(other.data() == first.data());  // the released space, now this copy's
  CHECK(other == b.substr(0, 5000));
  const auto again = spill.keep(std::string(6000, 'c'));
  CHECK(again.data() != other.data());
  CHECK(again == std::string(6000, 'c'));
  CHECK(other == b.substr(0, 5000));
  CHECK(kept == b);
}

namespace {
qfold_onnx::graph::node_id named(const qfold_onnx::graph& g, const std::string& name) {
  for (const auto n : g.nodes())
    if (g.name(n) == name) return n;
  FAIL("no node named " << name);
  return -1;
}
}  // namespace

TEST_CASE("onnx adapter: a fold deferred to the writer, made in full when it is read") {
  // qfold-onnx's path: the first site's weights lie in the mapped input, so its fold is a
  // scaled constant (add_scaled_constant), written piece by piece; the refused site and the
  // Gemm's transposed view are not. Read through constant(), the deferred tensor is made in
  // full (in the spill), with the plain path's values, and the model still writes the same bytes.
  auto b = big_model();
  const std::string bytes = bytes_of(b.m);
  onnx::ModelProto plain = qfold_onnx::parse_model(bytes, "m.onnx");
  REQUIRE(qfold_onnx::fold_model(plain).folded() == 2);
  const std::string folded_w1 = find_node(plain, "conv1")->input(1);
  const std::vector<float> want = data(plain, folded_w1);
  qfold_onnx::raw_aliases aliases;
  onnx::ModelProto m = qfold_onnx::parse_model(bytes, "m.onnx", &aliases);
  REQUIRE(qfold_onnx::fold_model(m, &aliases).folded() == 2);
  CHECK(aliases.deferred.size() == 1);
  CHECK(find_node(m, "conv1")->input(1) == folded_w1);
  const auto dir = std::filesystem::temp_directory_path();
  const auto plain_out = dir / "qfold_onnx_deferred_plain.onnx",
             out = dir / "qfold_onnx_deferred.onnx";
  qfold_onnx::write_model(plain, plain_out.string());
  qfold_onnx::write_model(m, out.string(), &aliases);
  CHECK(read_file(out) == read_file(plain_out));
  qfold_onnx::graph g(m, &aliases);
  const auto c = g.constant(named(g, folded_w1));
  REQUIRE(c.has_value());
  CHECK(same_bits(std::vector<float>(c->data.begin(), c->data.end()), want));
  CHECK(aliases.deferred.empty());
  qfold_onnx::write_model(m, out.string(), &aliases);
  CHECK(read_file(out) == read_file(plain_out));
}

TEST_CASE("onnx adapter: add_scaled_constant only for whole folds of the input's own bytes") {
  auto b = big_model();
  const std::string bytes = bytes_of(b.m);
  qfold_onnx::raw_aliases aliases;
  onnx::ModelProto m = qfold_onnx::parse_model(bytes, "m.onnx", &aliases);
  qfold_onnx::graph g(m, &aliases);
  const std::string_view w1 = aliases.at(&m.graph().initializer(0));  // w1, (32, 16, 3, 3)
  const std::vector<std::int64_t> shape{32, 16, 3, 3}, small{4, 4};
  const std::vector<float> scales(32, 0.5f), heap(32 * 16 * 9, 1.0f);
  using qfold::weight_layout, qfold::weights_kind;
  const auto in_input = [&](std::size_t count, std::span<const std::int64_t> dims) {
    return qfold::weights_view<float>(
        qfold::unaligned_values<float>{reinterpret_cast<const std::byte*>(w1.data()), count}, dims,
        weight_layout::o_i_s, 1, weights_kind::conv);
  };
  const std::string before = bytes_of(m);
  // Declined, nothing added: weights outside the input (they may be freed once the pass erases
  // them), too small to be spliced, scales that do not fit, a shape that disagrees.
  CHECK_FALSE(g.add_scaled_constant(
      {qfold::weights_view<float>(heap, shape, weight_layout::o_i_s, 1, weights_kind::conv),
       scales}));
  CHECK_FALSE(g.add_scaled_constant({in_input(16, small), std::span(scales).first(4)}));
  CHECK_FALSE(g.add_scaled_constant({in_input(32 * 16 * 9, shape), std::span(scales).first(31)}));
  CHECK_FALSE(g.add_scaled_constant({in_input(32 * 16 * 9 - 1, shape), scales}));
  CHECK(bytes_of(m) == before);
  CHECK(aliases.deferred.empty());
  // All or nothing at every step.
  bool done = false;
  for (std::size_t k = 0; !done && k < 64; ++k) {
    g.inject_failure_after(k);
    try {
      const auto id = g.add_scaled_constant({in_input(32 * 16 * 9, shape), scales});
      REQUIRE(id.has_value());
      done = true;
      CHECK(aliases.deferred.size() == 1);
      const auto c = g.constant(*id);  // made now: w1 * 0.5
      REQUIRE(c.has_value());
      std::vector<float> w(32 * 16 * 9);
      std::memcpy(w.data(), w1.data(), w1.size());
      for (auto& x : w) x *= 0.5f;
      CHECK(same_bits(std::vector<float>(c->data.begin(), c->data.end()), w));
      CHECK(aliases.deferred.empty());
      g.erase(*id);
    } catch (const std::bad_alloc&) {
      CHECK(bytes_of(m) == before);
      CHECK(aliases.deferred.empty());
    }
  }
  CHECK(done);
  g.inject_failure_after(std::nullopt);
  // Erased while deferred: gone from the model and from the deferred tensors.
  const auto id = g.add_scaled_constant({in_input(32 * 16 * 9, shape), scales});
  REQUIRE(id.has_value());
  CHECK(g.constant_bytes(*id) == 32 * 16 * 9 * sizeof(float));
  g.erase(*id);
  CHECK(aliases.deferred.empty());
  CHECK(bytes_of(m) == before);
}

TEST_CASE("onnx tool: a deferred fold that no longer folds fails the write, leaving no file") {
  // The input's bytes are read again when the writer makes a deferred fold; changed in between
  // (another process writing the file), a weight that now overflows is caught there: exit 3 and
  // no output, never a file with a non-finite weight the check did not see.
  auto b = big_model();
  std::string buffer = bytes_of(b.m);
  qfold_onnx::raw_aliases aliases;
  onnx::ModelProto m = qfold_onnx::parse_model(buffer, "m.onnx", &aliases);
  REQUIRE(qfold_onnx::fold_model(m, &aliases).folded() == 2);
  REQUIRE(aliases.deferred.size() == 1);
  const auto& d = aliases.deferred.begin()->second;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(buffer.data() + (reinterpret_cast<const char*>(d.bytes) - buffer.data()) + 8, &inf,
              sizeof inf);
  const auto out = std::filesystem::temp_directory_path() / "qfold_onnx_refold_fails.onnx";
  std::filesystem::remove(out);
  try {
    qfold_onnx::write_model(m, out.string(), &aliases);
    FAIL("the write succeeded");
  } catch (const qfold_onnx::tool_error& e) {
    CHECK(e.code() == qfold_onnx::exit_write);
    CHECK(std::string(e.what()).find("no longer folds") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(out));
  std::size_t left = 0;
  for (const auto& e : std::filesystem::directory_iterator(out.parent_path()))
    left += e.path().filename().string().starts_with(".qfold_onnx_refold_fails.onnx.qfold-");
  CHECK(left == 0);
}
