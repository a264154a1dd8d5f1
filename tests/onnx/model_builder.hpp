// A small ONNX model builder for the adapter tests and the fuzz seed generator: initializers with
// deterministic values, inputs, outputs, nodes and attributes.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
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
  void input(const std::string& name, std::vector<std::int64_t> dims) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (const auto d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
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
};

}  // namespace qfold_onnx_test
