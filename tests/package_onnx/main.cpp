// Package consumer of the ONNX component: builds Conv -> BatchNormalization in memory, folds it
// through qfold_onnx::graph and qfold's batch-norm pass, and checks the result exactly (values
// chosen so that every rounding order gives the same floats) and with the ONNX checker.
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstring>
#include <qfold/graph/batch_norm_pass.hpp>
#include <qfold_onnx/graph.hpp>
#include <string>
#include <vector>

namespace {

void add_tensor(onnx::GraphProto& g, const std::string& name, std::vector<std::int64_t> dims,
                std::vector<float> values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (const auto d : dims) t->add_dims(d);
  for (const float v : values) t->add_float_data(v);
}
void add_value(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (const int d : {1, 2, 3, 3}) t->mutable_shape()->add_dim()->set_dim_value(d);
}
int fail(const char* what) {
  std::fprintf(stderr, "qfold::onnx consumer: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("conv_bn");
  add_value(g.add_input(), "x");
  add_value(g.add_output(), "y");
  add_tensor(g, "w", {2, 2, 1, 1}, {1, 2, 3, 4});
  // factor scale / sqrt(var + eps) = 3 / 2 and 5 / 4, exactly; bias (0 - mean) * factor + B.
  add_tensor(g, "scale", {2}, {3, 5});
  add_tensor(g, "b", {2}, {0.5f, -1});
  add_tensor(g, "mean", {2}, {1, 2});
  add_tensor(g, "var", {2}, {4, 16});
  auto* conv = g.add_node();
  conv->set_op_type("Conv");
  conv->set_name("conv");
  conv->add_input("x");
  conv->add_input("w");
  conv->add_output("c");
  auto* bn = g.add_node();
  bn->set_op_type("BatchNormalization");
  bn->set_name("bn");
  for (const char* in : {"c", "scale", "b", "mean", "var"}) bn->add_input(in);
  bn->add_output("y");
  auto* eps = bn->add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(0);

  qfold_onnx::graph adapter(model);
  const auto report = qfold::fold_batch_norms(adapter);
  adapter.commit();
  if (report.folded() != 1) return fail("the batch norm was not folded");
  if (g.node_size() != 1 || g.node(0).op_type() != "Conv" || g.node(0).output(0) != "y")
    return fail("the graph is not one Conv writing y");
  const auto values = [&](const std::string& name) {
    for (const auto& t : g.initializer())
      if (t.name() == name) {
        std::vector<float> v(t.float_data().begin(), t.float_data().end());
        if (v.empty()) {
          v.resize(t.raw_data().size() / sizeof(float));
          std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
        }
        return v;
      }
    return std::vector<float>{};
  };
  const onnx::NodeProto& folded = g.node(0);
  if (folded.input_size() != 3) return fail("the folded Conv has no bias");
  if (values(folded.input(1)) != std::vector<float>{1.5f, 3, 3.75f, 5})
    return fail("folded weights differ from w * scale / sqrt(var + eps)");
  if (values(folded.input(2)) != std::vector<float>{-1, -3.5f})
    return fail("folded bias differs from (0 - mean) * scale / sqrt(var + eps) + B");
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return fail("the ONNX checker refuses the folded model");
  }
  std::printf("qfold::onnx: 1 batch norm folded, model checked\n");
  return 0;
}
