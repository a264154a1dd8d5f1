// A small ONNX model builder for the adapter tests and the fuzz seed generator: initializers with
// deterministic values, inputs, outputs, value_info, nodes and attributes; and the small models
// that several of them start from.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace qfold_onnx_test {

// --- A small model builder --------------------------------------------------------------------
struct builder {
  onnx::ModelProto m;
  onnx::GraphProto* g = m.mutable_graph();
  std::uint64_t seed = 1;

  explicit builder(std::int64_t opset = 13) {
    m.set_ir_version(7);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g->set_name("test");
  }
  std::vector<float> values(std::size_t n, float lo, float hi) {
    std::vector<float> r(n);
    for (float& x : r) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      x = lo + (hi - lo) * static_cast<float>(seed >> 40) * 0x1p-24f;
    }
    return r;
  }
  onnx::TensorProto* init(const std::string& name, std::vector<std::int64_t> dims, float lo = -1,
                          float hi = 1) {
    std::size_t n = 1;
    for (const auto d : dims) n *= static_cast<std::size_t>(d);
    const auto v = values(n, lo, hi);
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (const auto d : dims) t->add_dims(d);
    t->set_raw_data(v.data(), v.size() * sizeof(float));
    return t;
  }
  // Names v and gives it a FLOAT tensor type of these dims.
  static void float_value(onnx::ValueInfoProto* v, const std::string& name,
                          const std::vector<std::int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (const auto d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void input(const std::string& name, std::vector<std::int64_t> dims) {
    float_value(g->add_input(), name, dims);
  }
  // A 1-D INT64 initializer (a Reshape shape, Unsqueeze axes) holding `v` in int64_data.
  onnx::TensorProto* int64_init(const std::string& name, std::vector<std::int64_t> v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (const auto x : v) t->add_int64_data(x);
    return t;
  }
  // A FLOAT value_info entry with these dims (the adapter must treat it as a hint only).
  void value_info(const std::string& name, std::vector<std::int64_t> dims) {
    float_value(g->add_value_info(), name, dims);
  }
  void output(const std::string& name) {
    auto* v = g->add_output();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape();  // unknown dims, but the checker wants the field
  }
  onnx::NodeProto* node(const std::string& op, const std::string& name,
                        std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return n;
  }
  // A Constant node `name` whose value attribute is a FLOAT tensor (in float_data) of these dims.
  onnx::NodeProto* constant(const std::string& name, const std::string& output,
                            std::vector<std::int64_t> dims, std::vector<float> v) {
    auto* k = node("Constant", name, {}, {output});
    auto* a = k->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (const auto d : dims) t->add_dims(d);
    for (const float x : v) t->add_float_data(x);
    return k;
  }
  static void attr(onnx::NodeProto* n, const std::string& key, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, float v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, std::vector<std::int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (const auto x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  // BN parameters `<p>.gamma` ... with variance in [0.5, 2].
  void bn_params(const std::string& p, std::int64_t c) {
    init(p + ".gamma", {c});
    init(p + ".beta", {c});
    init(p + ".mean", {c});
    init(p + ".var", {c}, 0.5f, 2.0f);
  }
  onnx::NodeProto* bn(const std::string& name, const std::string& x, const std::string& p,
                      const std::string& y) {
    return node("BatchNormalization", name, {x, p + ".gamma", p + ".beta", p + ".mean", p + ".var"},
                {y});
  }
  // The Conv `conv` reading its weight through Identity `id_w` (w -> conv.weight), and the
  // BatchNormalization `bn` (c -> y) its variance through Identity `id_var` (bn.var ->
  // bn.running_var): the parameters `w` and `bn.*` must exist.
  void conv_bn_through_identity() {
    node("Identity", "id_w", {"w"}, {"conv.weight"});
    node("Identity", "id_var", {"bn.var"}, {"bn.running_var"});
    node("Conv", "conv", {"x", "conv.weight"}, {"c"});
    node("BatchNormalization", "bn", {"c", "bn.gamma", "bn.beta", "bn.mean", "bn.running_var"},
         {"y"});
  }
};

// --- Small models ------------------------------------------------------------------------------

// x (1 x 2 x 4 x 4) -> `op` `conv` (w: 2 x 2 x 1 x 1) -> c -> BatchNormalization `bn` over 2
// channels -> y, the output. Each hostile and bad case breaks it in one place.
inline builder conv_bn(const char* op = "Conv", std::int64_t opset = 13) {
  builder b(opset);
  b.input("x", {1, 2, 4, 4});
  b.init("w", {2, 2, 1, 1});
  b.bn_params("bn", 2);
  b.node(op, "conv", {"x", "w"}, {"c"});
  b.bn("bn", "c", "bn", "y");
  b.output("y");
  return b;
}

// x (2 x 6) -> Gemm `gemm` (B: 5 x 6 with transB = 1, else 6 x 5 and no transB attribute; C of
// 5 if with_c) -> g -> BatchNormalization `bn` over 5 -> y.
inline builder gemm_bn(std::int64_t trans_b, bool with_c) {
  builder b;
  b.input("x", {2, 6});
  b.init("B", trans_b == 1 ? std::vector<std::int64_t>{5, 6} : std::vector<std::int64_t>{6, 5});
  if (with_c) b.init("C", {5});
  b.bn_params("bn", 5);
  auto* gemm = b.node(
      "Gemm", "gemm",
      with_c ? std::vector<std::string>{"x", "B", "C"} : std::vector<std::string>{"x", "B"}, {"g"});
  if (trans_b == 1) builder::attr(gemm, "transB", trans_b);
  b.bn("bn", "g", "bn", "y");
  b.output("y");
  return b;
}

// x (x_dims) -> MatMul `mm` (W: 6 x 4) -> p [-> Add `add` (p + c, c of 4) -> a] ->
// BatchNormalization `bn` over 4 -> y.
inline builder matmul_bn(bool with_add, std::vector<std::int64_t> x_dims = {3, 6}) {
  builder b;
  b.input("x", std::move(x_dims));
  b.init("W", {6, 4});
  if (with_add) b.init("c", {4});
  b.bn_params("bn", 4);
  b.node("MatMul", "mm", {"x", "W"}, {"p"});
  if (with_add) b.node("Add", "add", {"p", "c"}, {"a"});
  b.bn("bn", with_add ? "a" : "p", "bn", "y");
  b.output("y");
  return b;
}

}  // namespace qfold_onnx_test
