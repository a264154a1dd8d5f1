// The TOSA MLIR adapter (qfold_tosa_mlir/tosa_graph.hpp) on small hand-written modules in
// LLVM 16's generic form: every op kind it maps, operands, shared constants, block arguments,
// the read points, bad input, the mutation points' all-or-nothing promise, and the DyT alpha site
// as ExecuTorch's Arm backend lowers it (folded, verified; refused, byte-identical).
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Tosa/IR/TosaOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/Parser/Parser.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <new>
#include <qfold/arith/rescale.hpp>
#include <qfold/graph/dyt_alpha_pass.hpp>
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_mlir/tosa_graph.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tosa_fold.hpp"

namespace {

using qfold::op_kind;
using G = qfold_tosa::graph;

static_assert(qfold::ir_graph<G>);
static_assert(qfold::mutable_graph<G>);
static_assert(qfold::quantized_graph<G>);
static_assert(qfold::integer_graph<G>);
static_assert(!qfold::batch_norm_foldable_graph<G>);  // TOSA has no batch norm

struct fixture {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  explicit fixture(const std::string& text, bool all_dialects = false)
      : context(registry(all_dialects)) {
    context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
    context.getDiagEngine().registerHandler([](mlir::Diagnostic& d) {
      llvm::errs() << "diagnostic: " << d.str() << "\n";  // a test module that does not parse
      return mlir::success();
    });
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
  static mlir::DialectRegistry registry(bool all) {
    mlir::DialectRegistry r;
    if (all) mlir::registerAllDialects(r);  // the executor modules print with vector, scf...
    return r;
  }
  mlir::func::FuncOp func() { return *module->getOps<mlir::func::FuncOp>().begin(); }
  // The result of the k-th op called `name` in the function's body.
  mlir::Value value(const std::string& name, int k = 0) {
    for (mlir::Operation& op : func().getBody().front())
      if (op.getName().getStringRef() == name && k-- == 0) return op.getResult(0);
    throw std::logic_error("no " + name);
  }
  std::string print() {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    return os.str();
  }
  std::size_t count(const std::string& name) {
    std::size_t n = 0;
    for (mlir::Operation& op : func().getBody().front())
      n += op.getName().getStringRef() == name ? 1u : 0u;
    return n;
  }
};

template <class R>
std::vector<std::int64_t> to_vector(const R& r) {
  std::vector<std::int64_t> v;
  for (const auto x : r) v.push_back(static_cast<std::int64_t>(x));
  return v;
}

std::string rescale(const std::string& x, int izp, int ozp, std::int32_t m, int s,
                    const std::string& from, const std::string& to, bool double_round = false,
                    bool per_channel = false, const std::string& ms = "",
                    const std::string& ss = "") {
  return "\"tosa.rescale\"(" + x + ") {double_round = " + (double_round ? "true" : "false") +
         ", input_zp = " + std::to_string(izp) +
         " : i32, multiplier = array<i32: " + (ms.empty() ? std::to_string(m) : ms) +
         ">, output_zp = " + std::to_string(ozp) +
         " : i32, per_channel = " + (per_channel ? "true" : "false") +
         ", scale32 = true, shift = array<i32: " + (ss.empty() ? std::to_string(s) : ss) +
         ">} : (" + from + ") -> " + to;
}

std::string table_values() {
  std::string t;
  for (int i = 0; i < 256; ++i) {
    const double v = std::round(127 * std::tanh((i - 128) / 40.0));
    t += (i != 0 ? ", " : "") + std::to_string(static_cast<int>(v));
  }
  return t;
}

// The DyT alpha site. `extra_use`: the MUL's output is also returned (a second reader).
std::string dyt_module(bool extra_use = false, const std::string& alpha_shape = "1x1x1x1",
                       const std::string& alpha = "77") {
  const std::string A = "tensor<1x4x4x8xi8>", A32 = "tensor<1x4x4x8xi32>",
                    S = "tensor<" + alpha_shape + "xi8>", S32 = "tensor<" + alpha_shape + "xi32>";
  const std::string results = extra_use ? A + ", " + A32 : A;
  return "func.func @dyt(%arg0: " + A + ") -> (" + results + ") {\n" +
         "  %alpha = \"tosa.const\"() {value = dense<" + alpha + "> : " + S + "} : () -> " + S +
         "\n" + "  %table = \"tosa.const\"() {value = dense<[" + table_values() +
         "]> : tensor<256xi8>} : () -> tensor<256xi8>\n" +
         "  %0 = " + rescale("%arg0", -3, 0, 1073741824, 30, A, A32) + "\n" +
         "  %1 = " + rescale("%alpha", 0, 0, 1073741824, 30, S, S32) + "\n" +
         "  %2 = \"tosa.mul\"(%0, %1) {shift = 0 : i32} : (" + A32 + ", " + S32 + ") -> " + A32 +
         "\n" + "  %3 = " + rescale("%2", 0, 5, 1518500250, 40, A32, A) + "\n" +
         "  %4 = \"tosa.table\"(%3, %table) : (" + A + ", tensor<256xi8>) -> " + A + "\n" +
         "  return %4" + (extra_use ? ", %2" : "") + " : " + results + "\n}\n";
}

const std::string every_op = R"(
func.func @ops(%arg0: tensor<1x4x4x8xi8>, %arg1: tensor<1x4x4x8xi16>, %arg2: tensor<2x8xi8>,
               %arg3: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) {
  %w = "tosa.const"() {value = dense<1> : tensor<2x1x1x8xi8>} : () -> tensor<2x1x1x8xi8>
  %b = "tosa.const"() {value = dense<[5, -6]> : tensor<2xi32>} : () -> tensor<2xi32>
  %dw = "tosa.const"() {value = dense<2> : tensor<1x1x8x1xi8>} : () -> tensor<1x1x8x1xi8>
  %db = "tosa.const"() {value = dense<0> : tensor<8xi32>} : () -> tensor<8xi32>
  %fw = "tosa.const"() {value = dense<3> : tensor<4x8xi8>} : () -> tensor<4x8xi8>
  %fb = "tosa.const"() {value = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %t8 = "tosa.const"() {value = dense<7> : tensor<256xi8>} : () -> tensor<256xi8>
  %t16 = "tosa.const"() {value = dense<9> : tensor<513xi16>} : () -> tensor<513xi16>
  %perms = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %c0 = "tosa.conv2d"(%arg0, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = -1, weight_zp = 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi32>
  %c1 = "tosa.depthwise_conv2d"(%arg0, %dw, %db) {dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = 3, weight_zp = 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<1x1x8x1xi8>, tensor<8xi32>) -> tensor<1x5x4x8xi32>
  %c2 = "tosa.fully_connected"(%arg2, %fw, %fb) {quantization_info = #tosa.conv_quant<input_zp = 0, weight_zp = 0>} : (tensor<2x8xi8>, tensor<4x8xi8>, tensor<4xi32>) -> tensor<2x4xi32>
  %r = "tosa.rescale"(%arg0) {double_round = true, input_zp = 2 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 33>} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi32>
  %rc = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824>, output_zp = 0 : i32, per_channel = true, scale32 = true, shift = array<i32: 30, 31, 32, 33, 34, 35, 36, 37>} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi32>
  %u = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 128 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xui8>
  %m = "tosa.mul"(%r, %rc) {shift = 3 : i32} : (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  %a = "tosa.add"(%m, %r) : (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  %s = "tosa.sub"(%a, %r) : (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  %tb = "tosa.table"(%arg0, %t8) : (tensor<1x4x4x8xi8>, tensor<256xi8>) -> tensor<1x4x4x8xi8>
  %tb16 = "tosa.table"(%arg1, %t16) : (tensor<1x4x4x8xi16>, tensor<513xi16>) -> tensor<1x4x4x8xi32>
  %cl = "tosa.clamp"(%tb) {max_fp = 0.0 : f32, max_int = 100 : i64, min_fp = 0.0 : f32, min_int = -7 : i64} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8>
  %ca = "tosa.cast"(%cl) : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi32>
  %rs = "tosa.reshape"(%tb) {new_shape = array<i64: 16, 8>} : (tensor<1x4x4x8xi8>) -> tensor<16x8xi8>
  %tr = "tosa.transpose"(%tb, %perms) : (tensor<1x4x4x8xi8>, tensor<4xi32>) -> tensor<1x8x4x4xi8>
  %sl = "tosa.slice"(%tb) {size = array<i64: 1, 2, 4, 8>, start = array<i64: 0, 1, 0, 0>} : (tensor<1x4x4x8xi8>) -> tensor<1x2x4x8xi8>
  %fm = "tosa.mul"(%arg3, %arg3) {shift = 0 : i32} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %ab = "tosa.abs"(%s) : (tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  %a8 = "tosa.add"(%tb, %tb) : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8>
  return %ca, %ab : tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>
}
)";

}  // namespace

TEST_CASE("tosa adapter: every op kind it maps", "[tosa]") {
  fixture f(every_op);
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  const auto kind = [&](const std::string& op, int k = 0) { return g.kind(f.value(op, k)); };
  CHECK(g.kind(f.func().getArgument(0)) == op_kind::input);
  CHECK(kind("tosa.const") == op_kind::constant);
  CHECK(kind("tosa.conv2d") == op_kind::convolution);
  CHECK(kind("tosa.depthwise_conv2d") == op_kind::convolution);
  CHECK(kind("tosa.fully_connected") == op_kind::linear);
  CHECK(kind("tosa.rescale", 0) == op_kind::rescale);
  CHECK(kind("tosa.rescale", 1) == op_kind::rescale);
  CHECK(kind("tosa.rescale", 2) == op_kind::rescale);  // to ui8
  CHECK(kind("tosa.mul", 0) == op_kind::mul);
  CHECK(kind("tosa.mul", 1) == op_kind::other);  // float
  CHECK(kind("tosa.add", 0) == op_kind::add);
  CHECK(kind("tosa.add", 1) == op_kind::other);  // i8 add: not TOSA's (i32) ADD
  CHECK(kind("tosa.sub") == op_kind::sub);
  CHECK(kind("tosa.table", 0) == op_kind::table);
  CHECK(kind("tosa.table", 1) == op_kind::table);
  CHECK(kind("tosa.clamp") == op_kind::clamp);
  CHECK(kind("tosa.cast") == op_kind::cast);
  CHECK(kind("tosa.reshape") == op_kind::view);
  CHECK(kind("tosa.transpose") == op_kind::view);
  CHECK(kind("tosa.slice") == op_kind::view);
  CHECK(kind("tosa.abs") == op_kind::other);

  // Nodes: the arguments, then every result in order.
  const auto nodes = g.nodes();
  CHECK(nodes.size() == 4 + 9 + 19);
  CHECK(nodes.front() == f.func().getArgument(0));
}

TEST_CASE("tosa adapter: operands, uses, shared constants, block arguments", "[tosa]") {
  fixture f(every_op);
  REQUIRE(f.module);
  G g(f.func());
  const auto tb = f.value("tosa.table");
  // TABLE: input, table (TOSA's form); the transpose's perms are hidden.
  const auto ops = [&](mlir::Value v) {
    std::vector<mlir::Value> r;
    for (const mlir::Value o : g.operands(v)) r.push_back(o);
    return r;
  };
  CHECK(ops(tb) == std::vector<mlir::Value>{f.func().getArgument(0), f.value("tosa.const", 6)});
  CHECK(ops(f.value("tosa.transpose")) == std::vector<mlir::Value>{tb});
  CHECK(g.operands(f.value("tosa.conv2d")).size() == 3);
  CHECK(g.operands(f.func().getArgument(0)).empty());
  // %tb: clamp, reshape, transpose, slice, two operands of the i8 add.
  CHECK(g.use_count(tb) == 6);
  // %r: mul, add, sub; graph outputs count: %ca is returned.
  CHECK(g.use_count(f.value("tosa.rescale")) == 3);
  CHECK(g.use_count(f.value("tosa.cast")) == 1);
  // A block argument read by six ops.
  CHECK(g.use_count(f.func().getArgument(0)) == 6);
}

TEST_CASE("tosa adapter: constants and attributes", "[tosa]") {
  fixture f(every_op);
  REQUIRE(f.module);
  G g(f.func());
  {
    const auto b = g.int_constant(f.value("tosa.const", 1));
    REQUIRE(b);
    CHECK(to_vector(b->data) == std::vector<std::int64_t>{5, -6});
    CHECK(to_vector(b->shape) == std::vector<std::int64_t>{2});
    const auto w = g.int_constant(f.value("tosa.const", 0));  // a splat: 16 values
    REQUIRE(w);
    CHECK(w->data.size() == 16);
    CHECK(w->data[15] == 1);
    const auto t16 = g.int_constant(f.value("tosa.const", 7));
    REQUIRE(t16);
    CHECK(t16->data.size() == 513);
    CHECK(!g.int_constant(f.value("tosa.rescale")));
    CHECK(g.constant_bytes(f.value("tosa.const", 1)) == 8);
    CHECK(g.constant_bytes(f.value("tosa.const", 0)) == 1);  // a splat stores one element
  }
  {
    const auto r = g.rescale(f.value("tosa.rescale", 0));
    CHECK(r.attributes.input_type == qfold::int_type::i8);
    CHECK(r.attributes.output_type == qfold::int_type::i32);
    CHECK(r.attributes.rounding == qfold::rounding_mode::double_round);
    CHECK(r.attributes.input_zp == 2);
    CHECK(r.attributes.scale32);
    CHECK(!r.attributes.per_channel);
    CHECK(r.multipliers.size() == 1);
    CHECK(r.shifts[0] == 33);
    const auto pc = g.rescale(f.value("tosa.rescale", 1));
    CHECK(pc.attributes.per_channel);
    CHECK(pc.shifts.size() == 8);
    CHECK(pc.shifts[7] == 37);
    const auto u = g.rescale(f.value("tosa.rescale", 2));
    CHECK(u.attributes.output_unsigned);
    CHECK(u.attributes.output_zp == 128);
    CHECK(qfold::validate(u.attributes).has_value());
  }
  CHECK(g.mul_shift(f.value("tosa.mul")) == 3);
  const auto cl = g.clamp_attributes(f.value("tosa.clamp"));
  CHECK(cl.min == -7);
  CHECK(cl.max == 100);
  CHECK(g.element_type(f.value("tosa.rescale", 2)) == qfold::dtype::uint8);
  CHECK(g.element_type(f.value("tosa.cast")) == qfold::dtype::int32);
  CHECK(!g.element_type(f.value("tosa.mul", 1)));  // f32
  CHECK(g.output_shape(f.value("tosa.reshape")).size() == 2);
  CHECK(!g.qparams(f.value("tosa.table")));

  const auto conv = g.conv_attributes(f.value("tosa.conv2d"));
  CHECK(conv.layout == qfold::weight_layout::o_s_i);
  CHECK(conv.input_channel_axis == 3);
  CHECK(!conv.padded);
  const auto q = g.quantized_conv(f.value("tosa.conv2d"));
  REQUIRE(q);
  CHECK(q->input_zero_point == -1);
  CHECK(q->weight_zero_points.size() == 1);
  const auto dw = g.conv_attributes(f.value("tosa.depthwise_conv2d"));
  CHECK(dw.groups == 8);
  CHECK(dw.padded);
  CHECK(g.conv_attributes(f.value("tosa.fully_connected")).input_channel_axis == 1);
  CHECK(g.quantized_conv(f.value("tosa.fully_connected")));
  CHECK(!g.quantized_conv(f.value("tosa.rescale")));

  // Views: reshape 1x4x4x8 -> 16x8 keeps the channels (axis 3 -> 1) and merges the rest;
  // transpose (0, 3, 1, 2) moves axis 3 to 1; the slice keeps every axis but 1.
  CHECK(g.view_axis(f.value("tosa.reshape"), 3) == 1);
  CHECK(g.view_axis(f.value("tosa.reshape"), 2) == std::nullopt);
  CHECK(g.view_axis(f.value("tosa.transpose"), 3) == 1);
  CHECK(g.view_axis(f.value("tosa.transpose"), 0) == 0);
  CHECK(g.view_axis(f.value("tosa.slice"), 3) == 3);
  CHECK(g.view_axis(f.value("tosa.slice"), 1) == std::nullopt);
  CHECK(g.view_axis(f.value("tosa.slice"), 9) == std::nullopt);
}

TEST_CASE("tosa adapter: bad input is a problem with a location", "[tosa]") {
  const auto problems = [](const std::string& body) {
    fixture f("func.func @f(%arg0: tensor<4xi8>, %arg1: tensor<4xi16>, %arg2: tensor<4xf32>) {\n" +
              body + "\n  return\n}\n");
    REQUIRE(f.module);
    return G(f.func()).problems();
  };
  // LLVM 16 does not check a TABLE's size; the adapter does.
  const auto short_table = problems(
      R"(%t = "tosa.const"() {value = dense<1> : tensor<255xi8>} : () -> tensor<255xi8>
  %0 = "tosa.table"(%arg0, %t) : (tensor<4xi8>, tensor<255xi8>) -> tensor<4xi8>)");
  REQUIRE(short_table.size() == 1);
  CHECK(short_table[0].find("needs a table of 256 i8 entries") != std::string::npos);
  CHECK(short_table[0].find(":3:") != std::string::npos);  // its line
  CHECK(problems(R"(%t = "tosa.const"() {value = dense<1> : tensor<256xi16>} : () -> tensor<256xi16>
  %0 = "tosa.table"(%arg1, %t) : (tensor<4xi16>, tensor<256xi16>) -> tensor<4xi32>)")
            .size() == 1);
  CHECK(
      problems(
          R"(%0 = "tosa.rescale"(%arg2) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xf32>) -> tensor<4xi8>)")
          .size() == 1);
  CHECK(
      problems(
          R"(%0 = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 70>} : (tensor<4xi8>) -> tensor<4xi8>)")
          .size() == 1);
  CHECK(
      problems(
          R"(%0 = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824, 5>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xi8>) -> tensor<4xi8>)")
          .size() == 1);
  CHECK(
      problems(
          R"(%0 = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = true, scale32 = true, shift = array<i32: 30>} : (tensor<4xi8>) -> tensor<4xi8>)")
          .size() == 1);  // per_channel: 1 pair for 4 channels
  CHECK(
      problems(
          R"(%0 = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xi8>) -> tensor<4xi48>)")
          .size() == 1);  // i48 output
  CHECK(
      problems(
          R"(%0 = "tosa.mul"(%arg0, %arg0) {shift = 2 : i32} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi32>)")
          .size() == 1);
  CHECK(
      problems(
          R"(%0 = "tosa.clamp"(%arg0) {max_fp = 0.0 : f32, max_int = 1 : i64, min_fp = 0.0 : f32, min_int = 5 : i64} : (tensor<4xi8>) -> tensor<4xi8>)")
          .size() == 1);
  // Fine: float ops and ops qfold does not know are `other`.
  CHECK(
      problems(
          R"(%0 = "tosa.mul"(%arg2, %arg2) {shift = 0 : i32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "tosa.sigmoid"(%0) : (tensor<4xf32>) -> tensor<4xf32>)")
          .empty());
}

TEST_CASE("tosa adapter: mutation points, all or nothing, in dominance order", "[tosa]") {
  fixture f(dyt_module());
  REQUIRE(f.module);
  const std::string before = f.print();
  G g(f.func());
  const mlir::Value arg = f.func().getArgument(0);

  // A new integer constant, erased again: the module is as it was.
  const std::vector<std::int64_t> data{1, -2, 3}, shape{3};
  const auto c = g.add_int_constant(data, shape, qfold::dtype::int8);
  CHECK(g.kind(c) == op_kind::constant);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  g.erase(c);
  CHECK(f.print() == before);

  // Refused before anything changes: values outside the type, a shape that disagrees.
  const std::vector<std::int64_t> big{300};
  const std::vector<std::int64_t> one{1};
  CHECK_THROWS_AS(g.add_int_constant(big, one, qfold::dtype::int8), std::invalid_argument);
  CHECK_THROWS_AS(g.add_int_constant(data, one, qfold::dtype::int8), std::invalid_argument);
  CHECK(f.print() == before);

  // A new table on the block argument: a private const and a table, both after the argument;
  // erasing the table takes the const with it (at the next change, or collect_garbage).
  std::vector<std::int8_t> values(256, 3);
  const auto t = g.add_table(arg, std::span<const std::int8_t>(values));
  CHECK(g.kind(t) == op_kind::table);
  CHECK(g.operands(t).size() == 2);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  const std::vector<std::int8_t> wrong(255, 0);
  CHECK_THROWS_AS(g.add_table(arg, std::span<const std::int8_t>(wrong)), std::invalid_argument);
  const std::vector<std::int16_t> t16(513, 0);
  CHECK_THROWS_AS(g.add_table(arg, std::span<const std::int16_t>(t16)), std::invalid_argument);
  g.erase(t);
  g.collect_garbage();
  CHECK(f.print() == before);

  // A new rescale: verified by qfold::validate first.
  qfold::rescale_attributes a;
  a.input_type = qfold::int_type::i8;
  a.output_type = qfold::int_type::i32;
  a.input_zp = -3;
  const std::vector<qfold::scale_factor> s{{1073741824, 30}};
  const auto r = g.add_rescale(arg, a, s);
  CHECK(g.kind(r) == op_kind::rescale);
  CHECK(g.rescale(r).attributes == a);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  const std::vector<qfold::scale_factor> bad{{1073741824, 70}};
  CHECK_THROWS_AS(g.add_rescale(arg, a, bad), std::invalid_argument);
  a.input_type = qfold::int_type::i16;
  CHECK_THROWS_AS(g.add_rescale(arg, a, s), std::invalid_argument);  // the input is i8
  g.erase(r);
  CHECK(f.print() == before);

  // replace_uses with another type, set_operand beyond the fixed operands: refused, unchanged.
  CHECK_THROWS_AS(g.replace_uses(f.value("tosa.mul"), arg), std::logic_error);
  CHECK_THROWS_AS(g.set_operand(f.value("tosa.table"), 2, arg), std::logic_error);
  CHECK_THROWS_AS(g.set_qparams(arg, qfold::qparams{}), std::logic_error);
  CHECK(f.print() == before);

  // A constant made now sits at the top; a reader earlier in the block can take it.
  const std::vector<std::int64_t> alpha{77}, alpha_shape{1, 1, 1, 1};
  const auto c2 = g.add_int_constant(alpha, alpha_shape, qfold::dtype::int8);
  const auto alpha_rescale = f.value("tosa.rescale", 1);
  const auto old_alpha = g.operands(alpha_rescale)[0];
  g.set_operand(alpha_rescale, 0, c2);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  g.set_operand(alpha_rescale, 0, old_alpha);
  g.erase(c2);
  CHECK(f.print() == before);
}

TEST_CASE("tosa adapter: the DyT alpha site folds, verifies and computes the same", "[tosa]") {
  fixture f(dyt_module());
  REQUIRE(f.module);
  G g(f.func());
  REQUIRE(g.problems().empty());
  // The chain's function of the activation code, before folding.
  const auto act = g.rescale(f.value("tosa.rescale", 0)),
             al = g.rescale(f.value("tosa.rescale", 1)),
             out = g.rescale(f.value("tosa.rescale", 2));
  const auto old_table = g.int_constant(f.value("tosa.const", 1));
  REQUIRE(old_table);
  std::vector<std::int64_t> expected;
  const std::int32_t alpha32 =
      qfold::rescale_value(al.attributes, {al.multipliers[0], al.shifts[0]}, 77);
  for (int c = -128; c <= 127; ++c) {
    const std::int32_t x =
        qfold::rescale_value(act.attributes, {act.multipliers[0], act.shifts[0]}, c);
    const auto p = static_cast<std::int32_t>(static_cast<std::uint32_t>(
        static_cast<std::int64_t>(x) * alpha32));  // TOSA MUL, shift 0: the low 32 bits
    const std::int32_t q =
        qfold::rescale_value(out.attributes, {out.multipliers[0], out.shifts[0]}, p);
    expected.push_back(old_table->data[static_cast<std::size_t>(q + 128)]);
  }

  const auto sites = qfold_tosa::fold_function(f.func(), {std::string(qfold::dyt_alpha_pass_name)});
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].folded);
  CHECK(sites[0].nodes.size() == 3);
  CHECK(sites[0].nodes[2].rfind("tosa.table@", 0) == 0);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  // One table on the argument, its const; nothing of the chain is left.
  CHECK(f.count("tosa.mul") == 0);
  CHECK(f.count("tosa.rescale") == 0);
  CHECK(f.count("tosa.table") == 1);
  CHECK(f.count("tosa.const") == 1);
  G after(f.func());
  const auto table = f.value("tosa.table");
  CHECK(after.operands(table)[0] == f.func().getArgument(0));
  const auto folded = after.int_constant(after.operands(table)[1]);
  REQUIRE(folded);
  CHECK(to_vector(folded->data) == expected);
}

TEST_CASE("tosa adapter: refused DyT sites leave the module byte-identical", "[tosa]") {
  const auto unchanged = [](const std::string& text, const std::string& reason) {
    fixture f(text);
    REQUIRE(f.module);
    const std::string before = f.print();
    const auto sites = qfold_tosa::fold_function(f.func());
    REQUIRE(sites.size() == 1);
    CHECK(!sites[0].folded);
    CHECK(sites[0].reason == reason);
    CHECK(f.print() == before);
  };
  unchanged(dyt_module(true), "shared_output");           // the MUL has a second reader
  unchanged(dyt_module(false, "1x1x1x8"), "not_scalar");  // alpha is not a scalar
}

TEST_CASE("tosa adapter: a table constant shared by two tables stays for the other", "[tosa]") {
  std::string text = dyt_module();
  // A second table reads the same table constant (and the activation directly); both returned.
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("-> (tensor<1x4x4x8xi8>) {", "-> (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) {");
  replace("  return %4 : tensor<1x4x4x8xi8>",
          "  %5 = \"tosa.table\"(%arg0, %table) : (tensor<1x4x4x8xi8>, tensor<256xi8>) -> "
          "tensor<1x4x4x8xi8>\n  return %4, %5 : tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>");
  fixture f(text);
  REQUIRE(f.module);
  const auto sites = qfold_tosa::fold_function(f.func());
  REQUIRE(sites.size() == 1);  // the second table (no RESCALE before it) is not a site
  CHECK(sites[0].folded);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  CHECK(f.count("tosa.table") == 2);
  CHECK(f.count("tosa.const") == 2);   // the shared table and the folded one
  CHECK(sites[0].bytes_removed == 1);  // the alpha splat only: the table is still read
}

// --- Failure injection: a graph whose mutation points throw at the n-th call ------------------
namespace {
struct failing {
  G& g;
  int fail_at = -1, calls = 0;
  int* shared = nullptr;  // a count across several graphs (one per function), if given
  void tick() {
    int& n = shared != nullptr ? *shared : calls;
    if (n++ == fail_at) throw std::bad_alloc();
  }
};
}  // namespace

template <>
struct qfold::ir_traits<failing> {
  using T = qfold::ir_traits<G>;
  using node_id = mlir::Value;
  static auto nodes(const failing& f) { return T::nodes(f.g); }
  static auto kind(const failing& f, node_id n) { return T::kind(f.g, n); }
  static auto operands(const failing& f, node_id n) { return T::operands(f.g, n); }
  static auto use_count(const failing& f, node_id n) { return T::use_count(f.g, n); }
  static auto constant(const failing& f, node_id n) { return T::constant(f.g, n); }
  static auto int_constant(const failing& f, node_id n) { return T::int_constant(f.g, n); }
  static auto output_shape(const failing& f, node_id n) { return T::output_shape(f.g, n); }
  static auto rescale(const failing& f, node_id n) { return T::rescale(f.g, n); }
  static auto mul_shift(const failing& f, node_id n) { return T::mul_shift(f.g, n); }
  static auto qparams(const failing& f, node_id n) { return T::qparams(f.g, n); }
  static auto qparams_shared(const failing& f, node_id n) { return T::qparams_shared(f.g, n); }
  static auto conv_attributes(const failing& f, node_id n) { return T::conv_attributes(f.g, n); }
  static auto quantized_conv(const failing& f, node_id n) { return T::quantized_conv(f.g, n); }
  static auto view_axis(const failing& f, node_id n, std::int64_t a) {
    return T::view_axis(f.g, n, a);
  }
  static auto constant_bytes(const failing& f, node_id n) { return T::constant_bytes(f.g, n); }
  static node_id add_constant(failing& f, std::span<const float> d,
                              std::span<const std::int64_t> s) {
    f.tick();
    return T::add_constant(f.g, d, s);
  }
  static node_id add_int_constant(failing& f, std::span<const std::int64_t> d,
                                  std::span<const std::int64_t> s, qfold::dtype t) {
    f.tick();
    return T::add_int_constant(f.g, d, s, t);
  }
  static node_id add_table(failing& f, node_id in, std::span<const std::int8_t> v) {
    f.tick();
    return T::add_table(f.g, in, v);
  }
  static node_id add_table(failing& f, node_id in, std::span<const std::int16_t> v) {
    f.tick();
    return T::add_table(f.g, in, v);
  }
  static node_id add_rescale(failing& f, node_id in, const qfold::rescale_attributes& a,
                             std::span<const qfold::scale_factor> s) {
    f.tick();
    return T::add_rescale(f.g, in, a, s);
  }
  static auto element_type(const failing& f, node_id n) { return T::element_type(f.g, n); }
  static auto clamp_attributes(const failing& f, node_id n) { return T::clamp_attributes(f.g, n); }
  static void set_operand(failing& f, node_id n, std::size_t i, node_id v) {
    f.tick();
    T::set_operand(f.g, n, i, v);
  }
  static void remove_last_operand(failing& f, node_id n) { T::remove_last_operand(f.g, n); }
  static void replace_uses(failing& f, node_id o, node_id v) {
    f.tick();
    T::replace_uses(f.g, o, v);
  }
  static void erase(failing& f, node_id n) noexcept { T::erase(f.g, n); }
  static void set_qparams(failing& f, node_id n, const qfold::qparams& q) {
    T::set_qparams(f.g, n, q);
  }
  static void set_conv_input_zero_point(failing& f, node_id n, std::int64_t zp) {
    f.tick();
    T::set_conv_input_zero_point(f.g, n, zp);
  }
};

TEST_CASE("tosa adapter: a failure at any mutation rolls the DyT alpha site back", "[tosa]") {
  for (int fail_at = 0;; ++fail_at) {
    fixture f(dyt_module());
    REQUIRE(f.module);
    const std::string before = f.print();
    G g(f.func());
    failing w{g, fail_at};
    const auto report = qfold::fold_dyt_alphas(w);
    g.collect_garbage();
    REQUIRE(report.sites.size() == 1);
    CHECK(mlir::succeeded(mlir::verify(*f.module)));
    if (report.sites[0].folded()) {
      CHECK(w.calls <= fail_at);  // no call failed: done
      CHECK(f.print() != before);
      break;
    }
    CHECK(report.sites[0].rejected->code == qfold::reason::adapter_failure);
    CHECK(f.print() == before);
    REQUIRE(fail_at < 10);
  }
}

TEST_CASE("tosa adapter: unsigned and int48 RESCALE types", "[tosa]") {
  fixture f(R"(
func.func @f(%arg0: tensor<4xi16>, %arg1: tensor<4xui16>, %arg2: tensor<4xi48>, %arg3: tensor<4xui8>) -> (tensor<4xui16>, tensor<4xi16>, tensor<4xi32>, tensor<4xi8>) {
  %0 = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 32768 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xi16>) -> tensor<4xui16>
  %1 = "tosa.rescale"(%arg1) {double_round = false, input_zp = 32768 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xui16>) -> tensor<4xi16>
  %2 = "tosa.rescale"(%arg2) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 16384>, output_zp = 0 : i32, per_channel = false, scale32 = false, shift = array<i32: 14>} : (tensor<4xi48>) -> tensor<4xi32>
  %3 = "tosa.rescale"(%arg3) {double_round = false, input_zp = 128 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xui8>) -> tensor<4xi8>
  return %0, %1, %2, %3 : tensor<4xui16>, tensor<4xi16>, tensor<4xi32>, tensor<4xi8>
}
)");
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  const auto a0 = g.rescale(f.value("tosa.rescale", 0)).attributes;
  CHECK(a0.output_type == qfold::int_type::i16);
  CHECK(a0.output_unsigned);
  CHECK(a0.output_zp == 32768);
  const auto a1 = g.rescale(f.value("tosa.rescale", 1)).attributes;
  CHECK(a1.input_unsigned);
  CHECK(a1.input_zp == 32768);
  const auto a2 = g.rescale(f.value("tosa.rescale", 2)).attributes;
  CHECK(a2.input_type == qfold::int_type::i48);
  CHECK(!a2.scale32);
  const auto a3 = g.rescale(f.value("tosa.rescale", 3)).attributes;
  CHECK(a3.input_type == qfold::int_type::i8);
  CHECK(a3.input_unsigned);
  CHECK(g.element_type(f.value("tosa.rescale", 0)) == qfold::dtype::uint16);
  CHECK(!g.element_type(f.func().getArgument(2)));  // i48
}

TEST_CASE("tosa adapter: the tool's passes are the standard pipeline's", "[tosa]") {
  // Every pass the standard pipeline runs on this adapter, but scale-into-quantize (TOSA has no
  // quantize op), each registered as --qfold-<name>.
  std::vector<std::string> expected;
  for (const auto& n : qfold::standard_pipeline<G>().names())
    if (n != qfold::scale_into_quantize_pass_name) expected.emplace_back(n);
  CHECK(qfold_tosa::pass_names() == expected);
  CHECK(qfold_tosa::pass_names().front() == qfold::dyt_alpha_pass_name);
  CHECK(qfold_tosa::mlir_pass_argument("fold_dyt_alpha") == "qfold-fold-dyt-alpha");
}

// --- DyT affine: TABLE -> (RESCALE * RESCALE(gamma)) -> RESCALE -> (RESCALE + RESCALE(beta)) ->
// RESCALE -> conv2d, every RESCALE an identity, gamma 2 and beta 3 per channel: a = 2 t + 3
// exactly, so the affine folds into the conv (weights 1 -> 2, bias + 3 * 2 per output channel).
namespace {
std::string affine_module() {
  std::string table;
  for (int i = 0; i < 256; ++i)
    table += (i != 0 ? ", " : "") + std::to_string(std::clamp(i - 128, -60, 60));
  const std::string A = "tensor<1x2x2x2xi8>", A32 = "tensor<1x2x2x2xi32>", S = "tensor<1x1x1x2xi8>",
                    S32 = "tensor<1x1x1x2xi32>", one = "1073741824";
  return "func.func @affine(%arg0: " + A + ") -> tensor<1x2x2x2xi32> {\n" +
         "  %table = \"tosa.const\"() {value = dense<[" + table +
         "]> : tensor<256xi8>} : () -> tensor<256xi8>\n" +
         "  %gamma = \"tosa.const\"() {value = dense<2> : " + S + "} : () -> " + S + "\n" +
         "  %beta = \"tosa.const\"() {value = dense<3> : " + S + "} : () -> " + S + "\n" +
         "  %w = \"tosa.const\"() {value = dense<1> : tensor<2x1x1x2xi8>} : () -> "
         "tensor<2x1x1x2xi8>\n" +
         "  %b = \"tosa.const\"() {value = dense<[10, -20]> : tensor<2xi32>} : () -> "
         "tensor<2xi32>\n" +
         "  %t = \"tosa.table\"(%arg0, %table) : (" + A + ", tensor<256xi8>) -> " + A + "\n" +
         "  %rt = " + rescale("%t", 0, 0, 1073741824, 30, A, A32) + "\n" +
         "  %rg = " + rescale("%gamma", 0, 0, 1073741824, 30, S, S32) + "\n" +
         "  %m = \"tosa.mul\"(%rt, %rg) {shift = 0 : i32} : (" + A32 + ", " + S32 + ") -> " + A32 +
         "\n" + "  %rp = " + rescale("%m", 0, 0, 1073741824, 30, A32, A) + "\n" +
         "  %rs = " + rescale("%rp", 0, 0, 1073741824, 30, A, A32) + "\n" +
         "  %rb = " + rescale("%beta", 0, 0, 1073741824, 30, S, S32) + "\n" +
         "  %a = \"tosa.add\"(%rs, %rb) : (" + A32 + ", " + S32 + ") -> " + A32 + "\n" +
         "  %rsum = " + rescale("%a", 0, 0, 1073741824, 30, A32, A) + "\n" +
         "  %c = \"tosa.conv2d\"(%rsum, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, "
         "0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = 0, weight_zp = 0>, stride = "
         "array<i64: 1, 1>} : (" +
         A + ", tensor<2x1x1x2xi8>, tensor<2xi32>) -> tensor<1x2x2x2xi32>\n" +
         "  return %c : tensor<1x2x2x2xi32>\n}\n";
}
}  // namespace

TEST_CASE("tosa adapter: the DyT affine site folds into the conv2d", "[tosa]") {
  fixture f(affine_module());
  REQUIRE(f.module);
  REQUIRE(G(f.func()).problems().empty());
  const auto sites =
      qfold_tosa::fold_function(f.func(), {std::string(qfold::dyt_affine_pass_name)});
  REQUIRE(sites.size() == 1);
  INFO(sites[0].reason << " " << sites[0].message);
  REQUIRE(sites[0].folded);
  CHECK(mlir::succeeded(mlir::verify(*f.module)));
  G g(f.func());
  const auto conv = f.value("tosa.conv2d");
  const auto ops = g.operands(conv);
  CHECK(g.kind(ops[0]) == op_kind::table);  // the conv reads the TABLE
  const auto w = g.int_constant(ops[1]);
  const auto b = g.int_constant(ops[2]);
  REQUIRE(w);
  REQUIRE(b);
  CHECK(to_vector(w->data) == std::vector<std::int64_t>(4, 2));
  CHECK(to_vector(b->data) == std::vector<std::int64_t>{16, -14});
  CHECK(g.quantized_conv(conv)->input_zero_point == 0);
  CHECK(f.count("tosa.mul") == 0);
  CHECK(f.count("tosa.add") == 0);
  CHECK(f.count("tosa.rescale") == 0);
  CHECK(f.count("tosa.const") == 3);  // table, new weights, new bias
}

TEST_CASE("tosa adapter: a failure at any mutation rolls the DyT affine site back", "[tosa]") {
  for (int fail_at = 0;; ++fail_at) {
    fixture f(affine_module());
    REQUIRE(f.module);
    const std::string before = f.print();
    G g(f.func());
    failing w{g, fail_at};
    const auto report = qfold::fold_dyt_affines(w);
    g.collect_garbage();
    REQUIRE(report.sites.size() == 1);
    CHECK(mlir::succeeded(mlir::verify(*f.module)));
    if (report.sites[0].folded()) {
      CHECK(w.calls <= fail_at);
      CHECK(f.print() != before);
      break;
    }
    CHECK(report.sites[0].rejected->code == qfold::reason::adapter_failure);
    CHECK(f.print() == before);
    REQUIRE(fail_at < 20);
  }
}

// Every pass of the standard pipeline over the executor tests' modules (tests/tosa/modules), with
// a failure injected at every mutation in turn: the module still verifies, every failed site is
// reported as such, no constant is left without a reader, and a run whose failure point is never
// reached prints what a clean run prints.
TEST_CASE("tosa adapter: failures injected into the whole pipeline on real modules", "[tosa]") {
  static_assert(qfold::quantized_graph<failing>);
  std::vector<std::filesystem::path> modules;
  for (const auto& e : std::filesystem::directory_iterator(QFOLD_TOSA_MODULES_DIR))
    if (e.path().extension() == ".mlir" &&
        e.path().filename().string().find(".model_folded") == std::string::npos)
      modules.push_back(e.path());
  std::sort(modules.begin(), modules.end());
  REQUIRE(!modules.empty());
  const auto unused_constants = [](fixture& f) {
    std::size_t n = 0;
    f.module->walk([&](mlir::Operation* op) {
      n += op->getName().getStringRef() == "tosa.const" && op->use_empty() ? 1u : 0u;
    });
    return n;
  };
  for (const auto& path : modules) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const auto run = [&](int fail_at, std::string& printed, int& calls, std::size_t& unused,
                         std::size_t& failed) {
      fixture f(text.str(), true);
      REQUIRE(f.module);
      failed = 0;
      calls = 0;
      for (mlir::func::FuncOp fn : f.module->getOps<mlir::func::FuncOp>()) {
        G g(fn);
        REQUIRE(g.problems().empty());
        failing w{g, fail_at, 0, &calls};
        const auto report = qfold::standard_pipeline<failing>().run(w);
        g.collect_garbage();
        for (const auto& site : report.sites)
          failed +=
              site.rejected && site.rejected->code == qfold::reason::adapter_failure ? 1u : 0u;
      }
      CHECK(mlir::succeeded(mlir::verify(*f.module)));
      printed = f.print();
      unused = unused_constants(f);
    };
    INFO(path.filename().string());
    std::string clean;
    int total = 0;
    std::size_t unused = 0, failed = 0;
    run(-1, clean, total, unused, failed);
    CHECK(failed == 0);
    const std::size_t unused_before = [&] {
      fixture f(text.str(), true);
      return unused_constants(f);
    }();
    CHECK(unused == unused_before);
    // Every call for small modules; about 60 spread over the calls for the larger ones.
    const int stride = std::max(1, total / 60);
    for (int fail_at = 0; fail_at <= total; fail_at += stride) {
      INFO("failure at mutation " << fail_at << " of " << total);
      std::string printed;
      int calls = 0;
      run(fail_at, printed, calls, unused, failed);
      CHECK(unused == unused_before);
      if (fail_at >= calls) {
        CHECK(failed == 0);
        CHECK(printed == clean);
      } else {
        CHECK(failed >= 1);
      }
    }
  }
}
