// The TOSA 1.0 MLIR adapter (qfold_tosa_mlir/tosa_graph.hpp) on small hand-written modules in
// MLIR 22's syntax: every op kind it maps, the operands it shows and the parameter operands it
// hides, shared constants, block arguments, the read points, bad input, the mutation points'
// all-or-nothing promise, and the DyT sites as ExecuTorch's Arm backend lowers them (folded,
// verified, computing the same; refused, byte-identical; rolled back after any failure).
// tosa_adapter_1_0_test.cpp tests what TOSA 1.0 brought (run-time parameters, INEXACT_ROUND,
// unsigned RESCALE, depthwise and matmul, the MLIR pass registration).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <qfold/arith/rescale.hpp>
#include <qfold/graph/dyt_affine_pass.hpp>
#include <qfold/graph/dyt_alpha_pass.hpp>
#include <qfold/graph/standard_pipeline.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tosa_test_support.hpp"

namespace {

using qfold::op_kind;
using tosa_test::fixture;
using tosa_test::G;
using tosa_test::to_vector;

static_assert(qfold::ir_graph<G>);
static_assert(qfold::mutable_graph<G>);
static_assert(qfold::quantized_graph<G>);
static_assert(qfold::integer_graph<G>);
static_assert(!qfold::batch_norm_foldable_graph<G>);  // TOSA has no batch norm

// Every op kind the adapter maps, in TOSA 1.0's form: parameters are tosa.const operands, shapes
// tosa.const_shape operands; MATMUL with a constant [1, C, W] right-hand side is TOSA 1.0's
// linear layer (FULLY_CONNECTED is gone).
const std::string every_op = R"(
func.func @ops(%arg0: tensor<1x4x4x8xi8>, %arg1: tensor<1x4x4x8xi16>, %arg2: tensor<1x2x8xi8>,
               %arg3: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) {
  %w = "tosa.const"() <{values = dense<1> : tensor<2x1x1x8xi8>}> : () -> tensor<2x1x1x8xi8> loc("w")
  %b = "tosa.const"() <{values = dense<[5, -6]> : tensor<2xi32>}> : () -> tensor<2xi32> loc("b")
  %dw = "tosa.const"() <{values = dense<2> : tensor<1x1x8x1xi8>}> : () -> tensor<1x1x8x1xi8>
  %db = "tosa.const"() <{values = dense<0> : tensor<8xi32>}> : () -> tensor<8xi32>
  %fw = "tosa.const"() <{values = dense<3> : tensor<1x8x4xi8>}> : () -> tensor<1x8x4xi8>
  %t8 = "tosa.const"() <{values = dense<7> : tensor<256xi8>}> : () -> tensor<256xi8> loc("t8")
  %t16 = "tosa.const"() <{values = dense<9> : tensor<513xi16>}> : () -> tensor<513xi16> loc("t16")
  %izp = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8> loc("z8")
  %dzp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m1 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s33 = "tosa.const"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s30 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m8 = "tosa.const"() <{values = dense<1073741824> : tensor<8xi32>}> : () -> tensor<8xi32>
  %s8 = "tosa.const"() <{values = dense<[30, 31, 32, 33, 34, 35, 36, 37]> : tensor<8xi8>}> : () -> tensor<8xi8>
  %zp2 = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %u128 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sh3 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %shape = tosa.const_shape {values = dense<[16, 8]> : tensor<2xindex>} : () -> !tosa.shape<2> loc("shape")
  %start = tosa.const_shape {values = dense<[0, 1, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 2, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %c0 = tosa.conv2d %arg0, %w, %b, %izp, %z8 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32> loc("conv")
  %c1 = tosa.depthwise_conv2d %arg0, %dw, %db, %dzp, %z8 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<1x1x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x5x4x8xi32> loc("depthwise")
  %c2 = tosa.matmul %arg2, %fw, %z8, %z8 : (tensor<1x2x8xi8>, tensor<1x8x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32> loc("matmul")
  %r = tosa.rescale %arg0, %m1, %s33, %zp2, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x4x4x8xi32> loc("r")
  %rc = tosa.rescale %arg0, %m8, %s8, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi8>, tensor<8xi32>, tensor<8xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x4x4x8xi32> loc("rc")
  %u = tosa.rescale %arg0, %m1, %s30, %z8, %u128 {input_unsigned = false, output_unsigned = true, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi8> loc("u")
  %m = tosa.mul %r, %rc, %sh3 : (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>, tensor<1xi8>) -> tensor<1x4x4x8xi32> loc("mul")
  %a = tosa.add %m, %r : (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32> loc("add")
  %s = tosa.sub %a, %r : (tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32> loc("sub")
  %tb = tosa.table %arg0, %t8 : (tensor<1x4x4x8xi8>, tensor<256xi8>) -> tensor<1x4x4x8xi8> loc("table")
  %tb16 = tosa.table %arg1, %t16 : (tensor<1x4x4x8xi16>, tensor<513xi16>) -> tensor<1x4x4x8xi32> loc("table16")
  %cl = tosa.clamp %tb {min_val = -7 : i8, max_val = 100 : i8} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8> loc("clamp")
  %ca = tosa.cast %cl : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi32> loc("cast")
  %rs = tosa.reshape %tb, %shape : (tensor<1x4x4x8xi8>, !tosa.shape<2>) -> tensor<16x8xi8> loc("reshape")
  %tr = tosa.transpose %tb {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xi8>) -> tensor<1x8x4x4xi8> loc("transpose")
  %sl = tosa.slice %tb, %start, %size : (tensor<1x4x4x8xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x4x8xi8> loc("slice")
  %fz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %fm = tosa.mul %arg3, %arg3, %fz : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1xi8>) -> tensor<1x4x4x8xf32> loc("float_mul")
  %ab = tosa.abs %s : (tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32> loc("abs")
  %a8 = tosa.add %tb, %tb : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8> loc("add8")
  return %ca, %ab : tensor<1x4x4x8xi32>, tensor<1x4x4x8xi32>
}
)";

}  // namespace

TEST_CASE("tosa adapter: every op kind it maps", "[tosa]") {
  fixture f(every_op);
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  const auto kind = [&](const std::string& name) { return g.kind(f.named(name)); };
  CHECK(g.kind(f.func().getArgument(0)) == op_kind::input);
  CHECK(kind("w") == op_kind::constant);
  CHECK(kind("shape") == op_kind::other);  // a tosa.const_shape: read through view_axis only
  CHECK(kind("conv") == op_kind::convolution);
  CHECK(kind("depthwise") == op_kind::convolution);
  CHECK(kind("matmul") == op_kind::linear);
  CHECK(kind("r") == op_kind::rescale);
  CHECK(kind("rc") == op_kind::rescale);
  CHECK(kind("u") == op_kind::rescale);  // to uint8 (signless i8, output_unsigned)
  CHECK(kind("mul") == op_kind::mul);
  CHECK(kind("float_mul") == op_kind::other);
  CHECK(kind("add") == op_kind::add);
  CHECK(kind("add8") == op_kind::other);  // i8 add: not TOSA's (i32) ADD
  CHECK(kind("sub") == op_kind::sub);
  CHECK(kind("table") == op_kind::table);
  CHECK(kind("table16") == op_kind::table);
  CHECK(kind("clamp") == op_kind::clamp);
  CHECK(kind("cast") == op_kind::cast);
  CHECK(kind("reshape") == op_kind::view);
  CHECK(kind("transpose") == op_kind::view);
  CHECK(kind("slice") == op_kind::view);
  CHECK(kind("abs") == op_kind::other);

  // Nodes: the arguments, then every result in order (20 tosa.const, 3 tosa.const_shape, 19 ops).
  const auto nodes = g.nodes();
  CHECK(nodes.size() == 4 + 20 + 3 + 19);
  CHECK(nodes.front() == f.func().getArgument(0));
}

TEST_CASE("tosa adapter: operands, hidden parameters, uses, shared constants, block arguments",
          "[tosa]") {
  fixture f(every_op);
  REQUIRE(f.module);
  G g(f.func());
  const auto ops = [&](mlir::Value v) {
    std::vector<mlir::Value> r;
    for (const mlir::Value o : g.operands(v)) r.push_back(o);
    return r;
  };
  const auto tb = f.named("table");
  const mlir::Value arg0 = f.func().getArgument(0);
  // TOSA 1.0's operands, the parameters hidden (qfold reads them through the attribute points):
  // TABLE input, table; CONV input, weight, bias (not the zero points); MATMUL a, b (not a_zp,
  // b_zp); RESCALE input (not multiplier, shift, zero points); MUL input1, input2 (not shift);
  // RESHAPE and SLICE their input (not the tosa.const_shape operands).
  CHECK(ops(tb) == std::vector<mlir::Value>{arg0, f.named("t8")});
  CHECK(ops(f.named("conv")) == std::vector<mlir::Value>{arg0, f.named("w"), f.named("b")});
  CHECK(ops(f.named("matmul")).size() == 2);
  CHECK(ops(f.named("r")) == std::vector<mlir::Value>{arg0});
  CHECK(ops(f.named("mul")) == std::vector<mlir::Value>{f.named("r"), f.named("rc")});
  CHECK(ops(f.named("reshape")) == std::vector<mlir::Value>{tb});
  CHECK(ops(f.named("slice")) == std::vector<mlir::Value>{tb});
  CHECK(ops(f.named("transpose")) == std::vector<mlir::Value>{tb});
  CHECK(ops(f.named("abs")).size() == 1);  // an op qfold does not know: all its operands
  CHECK(g.operands(arg0).empty());
  CHECK(g.operands(f.named("w")).empty());
  // %tb: clamp, reshape, transpose, slice, two operands of the i8 add.
  CHECK(g.use_count(tb) == 6);
  // %r: mul, add, sub.
  CHECK(g.use_count(f.named("r")) == 3);
  CHECK(g.use_count(f.named("cast")) == 1);  // the return
  // A block argument read by six ops.
  CHECK(g.use_count(arg0) == 6);
  // A zero-point constant shared by six hidden operands: read, so never taken as unused.
  CHECK(g.use_count(f.named("z8")) == 6);
}

TEST_CASE("tosa adapter: constants and attributes", "[tosa]") {
  fixture f(every_op);
  REQUIRE(f.module);
  G g(f.func());
  {
    const auto b = g.int_constant(f.named("b"));
    REQUIRE(b);
    CHECK(to_vector(b->data) == std::vector<std::int64_t>{5, -6});
    CHECK(to_vector(b->shape) == std::vector<std::int64_t>{2});
    const auto w = g.int_constant(f.named("w"));  // a splat: 16 values
    REQUIRE(w);
    CHECK(w->data.size() == 16);
    CHECK(w->data[15] == 1);
    const auto t16 = g.int_constant(f.named("t16"));
    REQUIRE(t16);
    CHECK(t16->data.size() == 513);
    CHECK(!g.int_constant(f.named("r")));
    CHECK(!g.int_constant(f.named("shape")));  // a shape is not an integer tensor
    CHECK(g.constant_bytes(f.named("b")) == 8);
    CHECK(g.constant_bytes(f.named("w")) == 1);  // a splat stores one element
  }
  {
    const auto r = g.rescale(f.named("r"));
    CHECK(r.attributes.input_type == qfold::int_type::i8);
    CHECK(r.attributes.output_type == qfold::int_type::i32);
    CHECK(r.attributes.rounding == qfold::rounding_mode::double_round);
    CHECK(r.attributes.input_zp == 2);
    CHECK(r.attributes.scale32);
    CHECK(!r.attributes.per_channel);
    CHECK(to_vector(r.multipliers) == std::vector<std::int64_t>{1073741824});
    CHECK(to_vector(r.shifts) == std::vector<std::int64_t>{33});
    const auto pc = g.rescale(f.named("rc"));
    CHECK(pc.attributes.per_channel);
    CHECK(pc.attributes.rounding == qfold::rounding_mode::single_round);
    CHECK(pc.shifts.size() == 8);
    CHECK(pc.shifts[7] == 37);
    // uint8 output in a signless tensor: output_zp 128 stored as -128.
    const auto u = g.rescale(f.named("u"));
    CHECK(u.attributes.output_unsigned);
    CHECK(!u.attributes.input_unsigned);
    CHECK(u.attributes.output_zp == 128);
    CHECK(qfold::validate(u.attributes).has_value());
  }
  CHECK(g.mul_shift(f.named("mul")) == 3);
  const auto cl = g.clamp_attributes(f.named("clamp"));
  CHECK(cl.min == -7);
  CHECK(cl.max == 100);
  CHECK(g.element_type(f.named("u")) == qfold::dtype::int8);  // signless: the flag says uint8
  CHECK(g.element_type(f.named("cast")) == qfold::dtype::int32);
  CHECK(!g.element_type(f.named("float_mul")));  // f32
  CHECK(g.output_shape(f.named("reshape")).size() == 2);
  CHECK(!g.qparams(f.named("table")));
  CHECK(!g.qparams_shared(f.named("table")));

  const auto conv = g.conv_attributes(f.named("conv"));
  CHECK(conv.layout == qfold::weight_layout::o_s_i);
  CHECK(conv.input_channel_axis == 3);
  CHECK(!conv.padded);
  const auto q = g.quantized_conv(f.named("conv"));
  REQUIRE(q);
  CHECK(q->input_zero_point == -1);  // the input_zp operand
  CHECK(to_vector(q->weight_zero_points) == std::vector<std::int64_t>{0});
  const auto dw = g.conv_attributes(f.named("depthwise"));
  CHECK(dw.layout == qfold::weight_layout::s_c_m);
  CHECK(dw.groups == 8);
  CHECK(dw.padded);
  CHECK(g.quantized_conv(f.named("depthwise"))->input_zero_point == 3);
  const auto mm = g.conv_attributes(f.named("matmul"));
  CHECK(mm.layout == qfold::weight_layout::s_i_o);
  CHECK(mm.input_channel_axis == 2);
  CHECK(g.quantized_conv(f.named("matmul")));
  CHECK(!g.quantized_conv(f.named("r")));

  // Views: reshape 1x4x4x8 -> 16x8 keeps the channels (axis 3 -> 1) and merges the rest;
  // transpose (0, 3, 1, 2) moves axis 3 to 1; the slice keeps every axis but 1.
  CHECK(g.view_axis(f.named("reshape"), 3) == 1);
  CHECK(g.view_axis(f.named("reshape"), 2) == std::nullopt);
  CHECK(g.view_axis(f.named("transpose"), 3) == 1);
  CHECK(g.view_axis(f.named("transpose"), 0) == 0);
  CHECK(g.view_axis(f.named("slice"), 3) == 3);
  CHECK(g.view_axis(f.named("slice"), 1) == std::nullopt);
  CHECK(g.view_axis(f.named("slice"), 9) == std::nullopt);
}

TEST_CASE("tosa adapter: bad input is a problem with a location", "[tosa]") {
  const auto problems = [](const std::string& body, const std::string& resources = "") {
    fixture f(
        "func.func @f(%arg0: tensor<4xi8>, %arg1: tensor<4xi16>, %arg2: tensor<4xf32>, "
        "%arg3: tensor<1xi8>) {\n"
        "  %m = \"tosa.const\"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> "
        "tensor<1xi32>\n"
        "  %s = \"tosa.const\"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>\n"
        "  %z = \"tosa.const\"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>\n" +
        body + "\n  return\n}\n" + resources);
    REQUIRE(f.module);
    return G(f.func()).problems();
  };
  const std::string attrs =
      "{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = "
      "SINGLE_ROUND, scale32 = true}";
  // MLIR 22 does not check a TABLE's size; the adapter does.
  const auto short_table = problems(
      R"(  %t = "tosa.const"() <{values = dense<1> : tensor<255xi8>}> : () -> tensor<255xi8>
  %0 = tosa.table %arg0, %t : (tensor<4xi8>, tensor<255xi8>) -> tensor<4xi8>)");
  REQUIRE(short_table.size() == 1);
  CHECK(short_table[0].find("needs a table of 256 i8 entries") != std::string::npos);
  CHECK(short_table[0].find(":6:8:") != std::string::npos);  // its line and column
  CHECK(problems(
            R"(  %t = "tosa.const"() <{values = dense<1> : tensor<256xi16>}> : () -> tensor<256xi16>
  %0 = tosa.table %arg1, %t : (tensor<4xi16>, tensor<256xi16>) -> tensor<4xi32>)")
            .size() == 1);
  // RESCALE: an element type qfold does not read; shift 70; an i48 output. (MLIR 22's verifier
  // now refuses multiplier and shift counts that differ or are not one per channel, and an i16
  // multiplier with scale32.)
  CHECK(problems(
            R"(  %z64 = "tosa.const"() <{values = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = tosa.rescale %arg0, %m, %s, %z, %z64 )" +
            attrs +
            " : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi64>) -> "
            "tensor<4xi64>")
            .size() == 1);
  CHECK(
      problems(R"(  %s70 = "tosa.const"() <{values = dense<70> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.rescale %arg0, %m, %s70, %z, %z )" +
               attrs +
               " : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> "
               "tensor<4xi8>")
          .size() == 1);
  CHECK(problems(
            R"(  %z48 = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %0 = tosa.rescale %arg0, %m, %s, %z, %z48 )" +
            attrs +
            " : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi48>) -> "
            "tensor<4xi48>")
            .size() == 1);  // i48 output
  // Constants qfold cannot read as integers (a dense_resource blob): bad input, named.
  const std::string blobs =
      "{-#\n  dialect_resources: {\n    builtin: {\n      m: \"0x0400000000000040\",\n      s: "
      "\"0x040000001E\"\n    }\n  }\n#-}\n";
  const auto unreadable_m = problems(
      R"(  %mr = "tosa.const"() <{values = dense_resource<m> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.rescale %arg0, %mr, %s, %z, %z )" +
          attrs +
          " : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> "
          "tensor<4xi8>",
      blobs);
  REQUIRE(unreadable_m.size() == 1);
  CHECK(unreadable_m[0].find("the multiplier constant is not a dense integer tensor") !=
        std::string::npos);
  const auto unreadable_shift = problems(
      R"(  %sr = "tosa.const"() <{values = dense_resource<s> : tensor<1xi8>}> : () -> tensor<1xi8>
  %1 = tosa.cast %arg0 : (tensor<4xi8>) -> tensor<4xi32>
  %2 = tosa.mul %1, %1, %sr : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>)",
      blobs);
  // (Not on a float MUL, nor as a zero point: MLIR 22's verifier aborts reading such a
  // dense_resource itself; see the CLI case dense_resource_zero_point.)
  REQUIRE(unreadable_shift.size() == 1);
  CHECK(unreadable_shift[0].find("tosa.mul: the shift constant is not a dense integer tensor") !=
        std::string::npos);
  // The spec's ERROR_IF: both sides unsigned.
  CHECK(
      problems(
          R"(  %0 = tosa.rescale %arg0, %m, %s, %z, %z {input_unsigned = true, output_unsigned = true, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4xi8>)")
          .size() == 1);
  // MUL: a shift on int8 inputs (only i32 inputs take one). (A CLAMP with min_val above
  // max_val: MLIR 22's verifier refuses it now.)
  CHECK(problems(R"(  %s2 = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %arg0, %arg0, %s2 : (tensor<4xi8>, tensor<4xi8>, tensor<1xi8>) -> tensor<4xi32>)")
            .size() == 1);
  // Fine: float ops and ops qfold does not know are `other`; a run-time parameter is not bad
  // input (the folds refuse its site as not_constant).
  CHECK(
      problems(
          R"(  %0 = tosa.mul %arg2, %arg2, %z : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %1 = tosa.sigmoid %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = tosa.rescale %arg0, %m, %arg3, %z, %z )" +
          attrs +
          " : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> "
          "tensor<4xi8>")
          .empty());
}

TEST_CASE("tosa adapter: mutation points, all or nothing, in dominance order", "[tosa]") {
  fixture f(tosa_test::dyt_module());
  REQUIRE(f.module);
  const std::string before = f.print();
  G g(f.func());
  const mlir::Value arg = f.func().getArgument(0);

  // A new integer constant, erased again: the module is as it was.
  const std::vector<std::int64_t> data{1, -2, 3}, shape{3};
  const auto c = g.add_int_constant(data, shape, qfold::dtype::int8);
  CHECK(g.kind(c) == op_kind::constant);
  CHECK(f.verifies());
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
  CHECK(f.verifies());
  const std::vector<std::int8_t> wrong(255, 0);
  CHECK_THROWS_AS(g.add_table(arg, std::span<const std::int8_t>(wrong)), std::invalid_argument);
  const std::vector<std::int16_t> t16(513, 0);
  CHECK_THROWS_AS(g.add_table(arg, std::span<const std::int16_t>(t16)), std::invalid_argument);
  g.erase(t);
  g.collect_garbage();
  CHECK(f.print() == before);

  // A new rescale in TOSA 1.0's form (four parameter constants made with it), verified by
  // qfold::validate first; erasing it takes its constants too.
  qfold::rescale_attributes a;
  a.input_type = qfold::int_type::i8;
  a.output_type = qfold::int_type::i32;
  a.input_zp = -3;
  const std::vector<qfold::scale_factor> s{{1073741824, 30}};
  const std::size_t consts = f.count("tosa.const");
  const auto r = g.add_rescale(arg, a, s);
  CHECK(g.kind(r) == op_kind::rescale);
  CHECK(g.rescale(r).attributes == a);
  CHECK(g.operands(r).size() == 1);
  CHECK(f.count("tosa.const") == consts + 4);
  CHECK(f.verifies());
  const std::vector<qfold::scale_factor> bad{{1073741824, 70}};
  CHECK_THROWS_AS(g.add_rescale(arg, a, bad), std::invalid_argument);
  a.input_type = qfold::int_type::i16;
  CHECK_THROWS_AS(g.add_rescale(arg, a, s), std::invalid_argument);  // the input is i8
  g.erase(r);
  g.collect_garbage();
  CHECK(f.print() == before);

  // replace_uses with another type, set_operand beyond the visible operands (a hidden
  // parameter): refused, unchanged.
  CHECK_THROWS_AS(g.replace_uses(f.named("mul"), arg), std::logic_error);
  CHECK_THROWS_AS(g.set_operand(f.named("table"), 2, arg), std::logic_error);
  CHECK_THROWS_AS(g.set_operand(f.named("act"), 1, f.named("alpha")), std::logic_error);
  CHECK_THROWS_AS(g.remove_last_operand(f.named("act")), std::logic_error);
  CHECK_THROWS_AS(g.set_qparams(arg, qfold::qparams{}), std::logic_error);
  g.collect_garbage();
  CHECK(f.print() == before);

  // A constant made now sits at the top; a reader earlier in the block can take it.
  const std::vector<std::int64_t> alpha{77}, alpha_shape{1, 1, 1, 1};
  const auto c2 = g.add_int_constant(alpha, alpha_shape, qfold::dtype::int8);
  const auto alpha_rescale = f.named("alpha_rescale");
  const auto old_alpha = g.operands(alpha_rescale)[0];
  g.set_operand(alpha_rescale, 0, c2);
  CHECK(f.verifies());
  g.set_operand(alpha_rescale, 0, old_alpha);
  g.erase(c2);
  g.collect_garbage();
  CHECK(f.print() == before);
}

TEST_CASE("tosa adapter: the DyT alpha site folds, verifies and computes the same", "[tosa]") {
  fixture f(tosa_test::dyt_module());
  REQUIRE(f.module);
  REQUIRE(G(f.func()).problems().empty());
  // The chain's function of the activation code, before folding, from the spec's RESCALE (the
  // test's own model) and MUL (shift 0: the low 32 bits of the product).
  const auto act = tosa_test::model_of(f.named("act")),
             al = tosa_test::model_of(f.named("alpha_rescale")),
             out = tosa_test::model_of(f.named("out"));
  const auto table = G(f.func()).int_constant(f.named("tanh"));
  REQUIRE(table);
  const auto alpha32 = al(77);
  REQUIRE(alpha32);
  std::vector<std::int64_t> expected;
  for (int c = -128; c <= 127; ++c) {
    const auto x = act(c);
    REQUIRE(x);
    const auto p = static_cast<std::int32_t>(static_cast<std::uint32_t>(
        static_cast<std::int64_t>(*x) * static_cast<std::int64_t>(*alpha32)));
    const auto q = out(p);
    REQUIRE(q);
    expected.push_back(table->data[static_cast<std::size_t>(*q + 128)]);
  }

  const auto sites = qfold_tosa::fold_function(f.func(), {std::string(qfold::dyt_alpha_pass_name)});
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].folded);
  CHECK(sites[0].nodes.size() == 3);
  CHECK(sites[0].nodes[0].rfind("tosa.mul@mul", 0) == 0);
  CHECK(sites[0].nodes[2].rfind("tosa.table@table", 0) == 0);
  CHECK(f.verifies());
  // One table on the argument, its const; nothing of the chain is left, no parameter constant
  // (multipliers, shifts, zero points, the MUL's shift) either.
  CHECK(f.count("tosa.mul") == 0);
  CHECK(f.count("tosa.rescale") == 0);
  CHECK(f.count("tosa.table") == 1);
  CHECK(f.count("tosa.const") == 1);
  CHECK(f.unused_constants() == 0);
  G after(f.func());
  const auto t = f.value("tosa.table");
  CHECK(after.operands(t)[0] == f.func().getArgument(0));
  const auto folded = after.int_constant(after.operands(t)[1]);
  REQUIRE(folded);
  CHECK(to_vector(folded->data) == expected);
}

TEST_CASE("tosa adapter: refused DyT sites leave the module byte-identical", "[tosa]") {
  const auto unchanged = [](const std::string& text, const std::string& reason) {
    fixture f(text);
    REQUIRE(f.module);
    const std::string before = f.print();
    const auto sites = qfold_tosa::fold_function(f.func());
    REQUIRE(!sites.empty());
    for (const auto& s : sites) {
      INFO(s.pass << " " << s.reason << " " << s.message);
      CHECK(!s.folded);
      CHECK(s.reason != "adapter_failure");
    }
    CHECK(sites[0].pass == qfold::dyt_alpha_pass_name);
    CHECK(sites[0].reason == reason);
    CHECK(f.print() == before);
  };
  tosa_test::dyt_options shared;
  shared.extra_use = true;  // the MUL has a second reader
  unchanged(tosa_test::dyt_module(shared), "shared_output");
  tosa_test::dyt_options vector;
  vector.alpha_shape = "1x1x1x8";  // alpha is not a scalar
  unchanged(tosa_test::dyt_module(vector), "not_scalar");
}

TEST_CASE("tosa adapter: a table constant shared by two tables stays for the other", "[tosa]") {
  std::string text = tosa_test::dyt_module();
  // A second table reads the same table constant (and the activation directly); both returned.
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("-> (tensor<1x4x4x8xi8>) {", "-> (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) {");
  replace("  return %table : tensor<1x4x4x8xi8>",
          "  %t2 = tosa.table %arg0, %tanh : (tensor<1x4x4x8xi8>, tensor<256xi8>) -> "
          "tensor<1x4x4x8xi8>\n  return %table, %t2 : tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>");
  fixture f(text);
  REQUIRE(f.module);
  const auto sites = qfold_tosa::fold_function(f.func());
  REQUIRE(sites.size() == 1);  // the second table (no RESCALE before it) is not a site
  CHECK(sites[0].folded);
  CHECK(f.verifies());
  CHECK(f.count("tosa.table") == 2);
  CHECK(f.count("tosa.const") == 2);   // the shared table and the folded one
  CHECK(sites[0].bytes_removed == 1);  // the alpha splat only: the table is still read
  CHECK(f.unused_constants() == 0);
}

TEST_CASE("tosa adapter: a failure at any mutation rolls the DyT alpha site back", "[tosa]") {
  CHECK(tosa_test::every_mutation_fails(tosa_test::dyt_module(),
                                        std::string(qfold::dyt_alpha_pass_name)) >= 2);
}

TEST_CASE("tosa adapter: unsigned and int48 RESCALE types", "[tosa]") {
  // TOSA 1.0: signless tensors with input_unsigned / output_unsigned, the zero point stored
  // signless (uint16 32768 as -32768, uint8 128 as -128); the older ui8 / ui16 tensors are
  // still read as unsigned; i48 in with scale32 = false (an i16 multiplier).
  const std::string I16 = "tensor<4xi16>";
  tosa_test::func_text t("f",
                         "%arg0: tensor<4xi16>, %arg1: tensor<4xi16>, %arg2: tensor<4xi48>, "
                         "%arg3: tensor<4xi8>, %arg4: tensor<4xui8>",
                         "tensor<4xi16>, tensor<4xi16>, tensor<4xi32>, tensor<4xi8>, tensor<4xi8>");
  tosa_test::rescale_spec s0;
  s0.output_unsigned = true;
  s0.output_zp = 32768;
  const auto r0 = t.rescale("r0", "%arg0", I16, I16, s0);
  tosa_test::rescale_spec s1;
  s1.input_unsigned = true;
  s1.input_zp = 32768;
  const auto r1 = t.rescale("r1", "%arg1", I16, I16, s1);
  tosa_test::rescale_spec s2;
  s2.scale32 = false;
  s2.multipliers = {16384};
  s2.shifts = {14};
  const auto r2 = t.rescale("r2", "%arg2", "tensor<4xi48>", "tensor<4xi32>", s2);
  tosa_test::rescale_spec s3;
  s3.input_unsigned = true;
  s3.input_zp = 128;
  const auto r3 = t.rescale("r3", "%arg3", "tensor<4xi8>", "tensor<4xi8>", s3);
  const auto z = t.constant("ui8_zp", "128", "tensor<1xui8>");
  tosa_test::rescale_spec s4;
  s4.izp_operand = z;
  const auto r4 = t.rescale("r4", "%arg4", "tensor<4xui8>", "tensor<4xi8>", s4);
  fixture f(t.str(r0 + ", " + r1 + ", " + r2 + ", " + r3 + ", " + r4));
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  const auto a0 = g.rescale(f.named("r0")).attributes;
  CHECK(a0.output_type == qfold::int_type::i16);
  CHECK(a0.output_unsigned);
  CHECK(a0.output_zp == 32768);
  const auto a1 = g.rescale(f.named("r1")).attributes;
  CHECK(a1.input_unsigned);
  CHECK(a1.input_zp == 32768);
  const auto a2 = g.rescale(f.named("r2")).attributes;
  CHECK(a2.input_type == qfold::int_type::i48);
  CHECK(!a2.scale32);
  CHECK(a2.output_type == qfold::int_type::i32);
  const auto a3 = g.rescale(f.named("r3")).attributes;
  CHECK(a3.input_type == qfold::int_type::i8);
  CHECK(a3.input_unsigned);
  CHECK(a3.input_zp == 128);
  const auto a4 = g.rescale(f.named("r4")).attributes;
  CHECK(a4.input_unsigned);  // from the ui8 type, input_unsigned = false
  CHECK(a4.input_zp == 128);
  CHECK(g.element_type(f.named("r0")) == qfold::dtype::int16);  // signless
  CHECK(g.element_type(f.func().getArgument(4)) == qfold::dtype::uint8);
  CHECK(!g.element_type(f.func().getArgument(2)));  // i48
}

TEST_CASE("tosa adapter: the tool's passes are the standard pipeline's", "[tosa]") {
  // Every pass the standard pipeline runs on this adapter, but scale-into-quantize (TOSA has no
  // quantize op), each registered as --qfold-<name>.
  std::vector<std::string> expected;
  for (const auto& n : qfold::standard_pipeline<G>().names())
    if (n != qfold::scale_into_quantize_pass_name) expected.emplace_back(n);
  CHECK(qfold_tosa::pass_names() == expected);
  CHECK(qfold_tosa::pass_names().size() == 5);
  CHECK(qfold_tosa::pass_names().front() == qfold::dyt_alpha_pass_name);
  // Batch norm is left out: TOSA has no batch-norm op (the adapter lacks its points).
  const auto skipped = qfold::standard_pipeline<G>().skipped();
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].pass == qfold::batch_norm_pass_name);
  CHECK(qfold_tosa::mlir_pass_argument("fold_dyt_alpha") == "qfold-fold-dyt-alpha");
  CHECK(qfold_tosa::mlir_pass_argument("fold_merge_rescales") == "qfold-fold-merge-rescales");
}

TEST_CASE("tosa adapter: the DyT affine site folds into the conv2d", "[tosa]") {
  fixture f(tosa_test::affine_module());
  REQUIRE(f.module);
  REQUIRE(G(f.func()).problems().empty());
  const auto sites =
      qfold_tosa::fold_function(f.func(), {std::string(qfold::dyt_affine_pass_name)});
  REQUIRE(sites.size() == 1);
  INFO(sites[0].reason << " " << sites[0].message);
  REQUIRE(sites[0].folded);
  CHECK(f.verifies());
  G g(f.func());
  const auto conv = f.named("conv");
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
  // table, new weights, new bias, the conv's two zero points; nothing without a reader.
  CHECK(f.count("tosa.const") == 5);
  CHECK(f.unused_constants() == 0);
}

TEST_CASE("tosa adapter: a failure at any mutation rolls the DyT affine site back", "[tosa]") {
  CHECK(tosa_test::every_mutation_fails(tosa_test::affine_module(),
                                        std::string(qfold::dyt_affine_pass_name)) >= 2);
}

// Every pass of the standard pipeline over TOSA 1.0 modules (the executor tests' modules in
// tests/tosa/modules once they are TOSA 1.0, and pipeline.mlir here), with a failure injected at
// every mutation in turn: the module still verifies, every failed site is reported as such, no
// constant is left without a reader, and a run whose failure point is never reached prints what
// a clean run prints.
TEST_CASE("tosa adapter: failures injected into the whole pipeline on real modules", "[tosa]") {
  std::vector<std::filesystem::path> modules{QFOLD_TOSA_ADAPTER_DIR "/pipeline.mlir"};
  for (const auto& e : std::filesystem::directory_iterator(QFOLD_TOSA_MODULES_DIR))
    if (e.path().extension() == ".mlir" &&
        e.path().filename().string().find(".model_folded") == std::string::npos)
      modules.push_back(e.path());
  std::sort(modules.begin() + 1, modules.end());
  std::size_t checked = 0;
  for (const auto& path : modules) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    // Every module is TOSA 1.0 (parameters as operands): one in the pre-1.0 form is an error.
    CHECK(text.str().find("multiplier = array") == std::string::npos);
    ++checked;
    INFO(path.filename().string());
    const auto run = [&](int fail_at, std::string& printed, int& calls, std::size_t& unused,
                         std::size_t& failed, std::size_t& folded) {
      fixture f(text.str(), true);
      REQUIRE(f.module);
      failed = folded = 0;
      calls = 0;
      for (mlir::func::FuncOp fn : f.module->getOps<mlir::func::FuncOp>()) {
        G g(fn);
        REQUIRE(g.problems().empty());
        tosa_test::failing w{g, fail_at, 0, &calls};
        const auto report = qfold::standard_pipeline<tosa_test::failing>().run(w);
        g.collect_garbage();
        for (const auto& site : report.sites) {
          failed +=
              site.rejected && site.rejected->code == qfold::reason::adapter_failure ? 1U : 0U;
          folded += site.folded() ? 1U : 0U;
        }
      }
      CHECK(f.verifies());
      printed = f.print();
      unused = f.unused_constants();
    };
    std::string clean;
    int total = 0;
    std::size_t unused = 0, failed = 0, folded = 0;
    run(-1, clean, total, unused, failed, folded);
    CHECK(failed == 0);
    const std::size_t unused_before = fixture(text.str(), true).unused_constants();
    CHECK(unused == unused_before);
    // Every call for small modules; about 60 spread over the calls for the larger ones.
    const int stride = std::max(1, total / 60);
    for (int fail_at = 0; fail_at <= total; fail_at += stride) {
      INFO("failure at mutation " << fail_at << " of " << total);
      std::string printed;
      int calls = 0;
      run(fail_at, printed, calls, unused, failed, folded);
      CHECK(unused == unused_before);
      if (fail_at >= calls) {
        CHECK(failed == 0);
        CHECK(printed == clean);
      } else {
        CHECK(failed >= 1);
      }
    }
  }
  CHECK(checked >= 1);
}
