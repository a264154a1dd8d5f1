// qfold_onnx_make_models seeds DIR: writes the seed corpus of tests/fuzz/onnx_fold.cpp (committed
// in tests/fuzz/corpus/onnx_fold/): small models, each a few KB, with every site form qfold-onnx
// folds (Conv, grouped ConvTranspose, Gemm transB 0/1, MatMul, MatMul + Add, Identity and Constant
// parameters) and the refusals around them (rank-3 MatMul, shared output, empty BN parameters,
// a lying value_info, a subgraph reading an outer value), and one with tensors large enough for
// the aliased fast path. Deterministic: the same bytes each run.
// qfold_onnx_make_models mutate-seeds DIR: the same models behind 16 control bytes, the corpus of
// tests/fuzz/onnx_mutate.cpp (tests/fuzz/corpus/onnx_mutate/).
// qfold_onnx_make_models bad CASE OUT: the hostile model of one CLI case of bad_input.cmake.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model_builder.hpp"

namespace {

using qfold_onnx_test::builder;
using qfold_onnx_test::conv_bn;
using qfold_onnx_test::gemm_bn;
using qfold_onnx_test::matmul_bn;

// Written before each seed: the control bytes of tests/fuzz/onnx_mutate.cpp (empty for
// onnx_fold). These 16 make 8 calls: add a constant, set an operand, replace uses, remove an
// operand, erase, read, set an operand with a failure injected at step 2, commit.
std::string seed_prefix;
constexpr char mutate_control[16] = {0x70, 0x04, 0x71, 0x09, 0x74, 0x03, 0x73, 0x05,
                                     0x75, 0x02, 0x76, 0x01, 0x21, 0x0d, 0x77, 0x00};

void save(const std::string& dir, const std::string& name, const onnx::ModelProto& m) {
  std::string bytes = seed_prefix;
  if (!m.AppendToString(&bytes)) throw std::runtime_error("cannot serialize " + name);
  std::ofstream out(dir + "/" + name + ".onnx", std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + name);
}

onnx::TensorProto& init(builder& b, const std::string& name) {
  for (auto& t : *b.g->mutable_initializer())
    if (t.name() == name) return t;
  throw std::runtime_error("no initializer " + name);
}
onnx::NodeProto& node(builder& b, const std::string& name) {
  for (auto& n : *b.g->mutable_node())
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}
void external(onnx::TensorProto& t, const std::string& location) {
  t.clear_raw_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value(location);
}

// The bytes of one bad case (raw bytes for the cases that are not a ModelProto at all): a valid
// conv_bn model that each case breaks in one place. The ONNX checker accepts every one of them
// unless the case says otherwise.
std::string bad_model(const std::string& c) {
  builder b = conv_bn(c.starts_with("transpose_") ? "ConvTranspose" : "Conv");
  onnx::TensorProto& w = init(b, "w");
  onnx::NodeProto& conv = node(b, "conv");
  if (c == "wrapping_dims" || c == "transpose_wrapping_dims") {
    // 4 x (2^62 + 1) wraps to 4 in 64 bits: the 16 bytes present would look right.
    w.clear_dims();
    w.add_dims(4);
    w.add_dims((std::int64_t{1} << 62) + 1);
    const float v[4] = {1, 2, 3, 4};
    w.set_raw_data(v, sizeof v);
  } else if (c == "negative_dims") {
    w.set_dims(1, -2);
  } else if (c == "raw_data_short") {
    w.mutable_raw_data()->resize(12);
  } else if (c == "raw_data_long") {
    w.mutable_raw_data()->resize(20);
  } else if (c == "float_data_mismatch") {
    w.clear_raw_data();
    for (const float v : {1.0f, 2.0f, 3.0f}) w.add_float_data(v);
  } else if (c == "two_data_fields") {
    w.add_float_data(1.0f);
  } else if (c == "stride_zero" || c == "transpose_stride_zero") {
    builder::attr(&conv, "strides", std::vector<std::int64_t>{0, 1});
  } else if (c == "rank1_weight" || c == "transpose_rank1_weight") {
    w.clear_dims();
    w.add_dims(4);
  } else if (c == "group_zero") {
    builder::attr(&conv, "group", std::int64_t{0});
  } else if (c == "group_not_dividing") {
    builder::attr(&conv, "group", std::int64_t{4});
  } else if (c == "negative_pads") {
    builder::attr(&conv, "pads", std::vector<std::int64_t>{0, -1, 0, 0});
  } else if (c == "external_missing") {
    external(w, "w.bin");
  } else if (c == "external_present") {
    external(w, "w.bin");  // the test writes w.bin next to the model
  } else if (c == "external_dotdot") {
    external(w, "../w.bin");
  } else if (c == "external_absolute") {
    external(w, "/etc/passwd");
  } else if (c == "checker_rejects") {
    conv.set_op_type("NoSuchOp");
  } else if (c == "bn_empty_scale") {
    auto& g = init(b, "bn.gamma");
    g.set_dims(0, 0);
    g.clear_raw_data();
  } else if (c == "lying_value_info") {
    builder m = matmul_bn(false, {2, 4, 6});
    m.value_info("p", {8, 4});  // says rank 2; x @ W is (2, 4, 4)
    return m.m.SerializeAsString();
  } else if (c == "matmul_unknown_rank") {
    builder m;
    m.input("x", {2, 4, 6});
    m.init("W", {6, 4});
    m.bn_params("bn", 4);
    // an op whose rank rule qfold does not know, before the MatMul
    auto* o = m.m.add_opset_import();
    o->set_domain("com.example");
    o->set_version(1);
    m.node("Opaque", "opaque", {"x"}, {"o"})->set_domain("com.example");
    m.node("MatMul", "mm", {"o", "W"}, {"p"});
    m.bn("bn", "p", "bn", "y");
    m.output("y");
    return m.m.SerializeAsString();
  } else if (c == "garbage") {
    std::string bytes = "\x08\x07";  // ir_version 7, then noise
    std::uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 500; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      bytes += static_cast<char>(x >> 56);
    }
    return bytes;
  } else if (c == "huge_length") {  // a graph field that claims 2 GiB - 1
    return std::string("\x08\x07\x3a\xff\xff\xff\xff\x07", 8);
  } else if (c != "good") {
    throw std::runtime_error("unknown case " + c);
  }
  return b.m.SerializeAsString();
}

int make_seeds(const std::string& dir);

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "seeds" && argc == 3) return make_seeds(argv[2]);
    if (mode == "mutate-seeds" && argc == 3) {
      seed_prefix.assign(mutate_control, sizeof mutate_control);
      return make_seeds(argv[2]);
    }
    if (mode == "bad" && argc == 4) {
      const std::string bytes = bad_model(argv[2]);
      std::ofstream out(argv[3], std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      return out ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "qfold_onnx_make_models: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: qfold_onnx_make_models seeds DIR | mutate-seeds DIR | bad CASE OUT\n";
  return 2;
}

namespace {

int make_seeds(const std::string& dir) {
  try {
    {  // Conv (grouped, with bias) + BN, then a second conv without bias + BN, Relu between
      builder b;
      b.input("x", {1, 4, 5, 5});
      b.init("w", {6, 2, 3, 3});
      b.init("bias", {6});
      b.bn_params("bn", 6);
      b.init("w2", {6, 6, 1, 1});
      b.bn_params("bn2", 6);
      auto* conv = b.node("Conv", "conv", {"x", "w", "bias"}, {"c"});
      builder::attr(conv, "group", std::int64_t{2});
      builder::attr(conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
      b.bn("bn", "c", "bn", "y");
      b.node("Relu", "relu", {"y"}, {"r"});
      b.node("Conv", "conv2", {"r", "w2", ""}, {"c2"});
      b.bn("bn2", "c2", "bn2", "z");
      b.output("z");
      save(dir, "conv_bn", b.m);
    }
    {  // ConvTranspose grouped + BN, and a depthwise one
      builder b;
      b.input("x", {1, 4, 3, 3});
      b.init("w", {4, 3, 2, 2});
      b.bn_params("bn", 6);
      b.init("wd", {6, 1, 3, 3});
      b.bn_params("bnd", 6);
      auto* t = b.node("ConvTranspose", "up", {"x", "w"}, {"u"});
      builder::attr(t, "group", std::int64_t{2});
      builder::attr(t, "strides", std::vector<std::int64_t>{2, 2});
      b.bn("bn", "u", "bn", "y");
      auto* d = b.node("ConvTranspose", "dw", {"y", "wd"}, {"d"});
      builder::attr(d, "group", std::int64_t{6});
      b.bn("bnd", "d", "bnd", "z");
      b.output("z");
      save(dir, "conv_transpose_bn", b.m);
    }
    for (const std::int64_t trans_b : {0, 1}) {  // Gemm + BN
      builder b = gemm_bn(trans_b, true);
      // transB written out also when it is the default 0
      if (trans_b == 0) builder::attr(b.g->mutable_node(0), "transB", trans_b);
      save(dir, "gemm_transb" + std::to_string(trans_b) + "_bn", b.m);
    }
    {  // Gemm without C, Flatten before it
      builder b;
      b.input("x", {2, 3, 2});
      b.init("B", {5, 6});
      b.bn_params("bn", 5);
      b.node("Flatten", "flat", {"x"}, {"f"});
      auto* gemm = b.node("Gemm", "gemm", {"f", "B"}, {"g"});
      builder::attr(gemm, "transB", std::int64_t{1});
      b.bn("bn", "g", "bn", "y");
      b.output("y");
      save(dir, "flatten_gemm_bn", b.m);
    }
    {  // MatMul + Add + BN, and MatMul alone + BN
      builder b;
      b.input("x", {3, 6});
      b.init("W", {6, 4});
      b.init("c", {4});
      b.bn_params("bn", 4);
      b.init("W2", {4, 3});
      b.bn_params("bn2", 3);
      b.node("MatMul", "mm", {"x", "W"}, {"p"});
      b.node("Add", "add", {"c", "p"}, {"a"});
      b.bn("bn", "a", "bn", "y");
      b.node("MatMul", "mm2", {"y", "W2"}, {"q"});
      b.bn("bn2", "q", "bn2", "z");
      b.output("z");
      save(dir, "matmul_bn", b.m);
    }
    {  // MatMul of rank 3 (refused) with a value_info that says rank 2
      builder b = matmul_bn(false, {2, 4, 6});
      b.value_info("p", {8, 4});
      save(dir, "matmul_rank3_lying_value_info", b.m);
    }
    {  // Identity parameters, a Constant weight, a shared initializer, a shared output
      builder b;
      b.input("x", {1, 2, 4, 4});
      b.init("w", {2, 2, 1, 1});
      b.bn_params("bn", 2);
      b.bn_params("bn2", 2);
      b.conv_bn_through_identity();
      b.constant("k", "kw", {2, 2, 1, 1}, {1.0f, -2.0f, 0.5f, 3.0f});
      b.node("Conv", "conv2", {"y", "kw"}, {"c2"});
      b.bn("bn2", "c2", "bn2", "z");
      b.node("Conv", "conv3", {"z", "w"}, {"c3"});
      b.bn("bn2", "c3", "bn2", "v");
      b.node("Add", "sum", {"v", "c3"}, {"s"});
      b.output("s");
      save(dir, "identity_constant_shared", b.m);
    }
    {  // BN with an empty scale (refused), one whose B has another length (refused)
      builder b;
      b.input("x", {1, 2, 4, 4});
      b.init("w", {2, 2, 1, 1});
      b.init("w2", {2, 2, 1, 1});
      b.bn_params("bn", 2);
      b.init("empty", {0});
      b.init("three", {3});
      b.node("Conv", "conv", {"x", "w"}, {"c"});
      b.node("BatchNormalization", "bn", {"c", "empty", "bn.beta", "bn.mean", "bn.var"}, {"y"});
      b.node("Conv", "conv2", {"y", "w2"}, {"c2"});
      b.node("BatchNormalization", "bn2", {"c2", "bn.gamma", "three", "bn.mean", "bn.var"}, {"z"});
      b.output("z");
      save(dir, "bn_bad_params", b.m);
    }
    {  // An If whose branches read the conv's weight from the outer scope
      builder b;
      b.input("x", {1, 2, 4, 4});
      b.input("cond", {});
      b.init("w", {2, 2, 1, 1});
      b.bn_params("bn", 2);
      b.node("Conv", "conv", {"x", "w"}, {"c"});
      b.bn("bn", "c", "bn", "y");
      auto* n = b.node("If", "if", {"cond"}, {"o"});
      for (const char* branch : {"then_branch", "else_branch"}) {
        auto* a = n->add_attribute();
        a->set_name(branch);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* g = a->mutable_g();
        g->set_name(branch);
        auto* id = g->add_node();
        id->set_op_type("Identity");
        id->add_input(std::string(branch) == "then_branch" ? "w" : "y");
        id->add_output(std::string(branch) + "_out");
        auto* o = g->add_output();
        o->set_name(std::string(branch) + "_out");
        o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        o->mutable_type()->mutable_tensor_type()->mutable_shape();
      }
      auto* cond = b.g->mutable_input(1)->mutable_type()->mutable_tensor_type();
      cond->set_elem_type(onnx::TensorProto::BOOL);
      cond->mutable_shape();  // a scalar
      b.output("o");
      save(dir, "if_outer_read", b.m);
    }
    {  // Conv1d and Conv3d + BN, Reshape / Unsqueeze ranks before a MatMul
      builder b;
      b.input("s", {2, 3, 9});
      b.init("w1", {5, 3, 3});
      b.bn_params("bn1", 5);
      b.node("Conv", "conv1d", {"s", "w1"}, {"c1"});
      b.bn("bn1", "c1", "bn1", "y1");
      b.int64_init("shape", {2, -1});
      b.node("Reshape", "flat", {"y1", "shape"}, {"r"});
      b.init("W", {35, 4});
      b.bn_params("bn2", 4);
      b.node("MatMul", "mm", {"r", "W"}, {"p"});
      b.bn("bn2", "p", "bn2", "y2");
      b.output("y2");
      save(dir, "conv1d_reshape_matmul", b.m);
    }
    {  // Weights of at least 4 KiB, aliased by the fast path (names of 1-4 characters put their
       // bytes at different offsets mod 4): Conv + BN read in place, one with a second reader
       // (refused: written from the input), a Gemm transB 0 weight read through constant()
       // (an aligned copy in the spill)
      builder b;
      b.input("x", {1, 8, 5, 5});
      b.init("a", {16, 8, 3, 3});
      b.bn_params("bna", 16);
      b.init("bb", {16, 16, 2, 2});
      b.bn_params("bnb", 16);
      b.init("ccc", {64, 16});
      b.bn_params("bnc", 16);
      b.init("dddd", {16, 16, 2, 2});
      b.bn_params("bnd", 16);
      b.node("Conv", "conv_a", {"x", "a"}, {"ca"});
      b.bn("bna", "ca", "bna", "ya");
      b.node("Conv", "conv_b", {"ya", "bb"}, {"cb"});
      b.bn("bnb", "cb", "bnb", "yb");
      b.node("Conv", "conv_d", {"ya", "dddd"}, {"cd"});
      b.bn("bnd", "cd", "bnd", "yd");
      b.node("Flatten", "flat", {"yb"}, {"f"});
      auto* gemm = b.node("Gemm", "gemm", {"f", "ccc"}, {"g"});
      builder::attr(gemm, "transB", std::int64_t{0});
      b.bn("bnc", "g", "bnc", "yc");
      b.output("yc");
      b.output("yd");
      b.output("cd");
      save(dir, "aliased_every_alignment", b.m);
    }
  } catch (const std::exception& e) {
    std::cerr << "qfold_onnx_make_models: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
