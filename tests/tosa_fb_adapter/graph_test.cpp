// The adapter over a .tosa file: TOSA 1.0 ops mapped onto qfold's vocabulary (through
// qfold/graph/tosa_operands.hpp, as the MLIR adapter maps them), every read point, parameters
// computed at run time (refused not_constant, named by non_constant_parameters), ops qfold cannot
// read (problems()).
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_fb/graph.hpp>
#include <qfold_tosa_fb/passes.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/write.hpp>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tosa_fb_adapter/tosa_fb_test_support.hpp"

namespace {

using qfold::op_kind;
using tosa_fb_test::bytes;
using tosa_fb_test::file_builder;
using tosa_fb_test::id_of;

// One of every op qfold maps, on an INT8 [1, 2, 2, 4] input.
file_builder zoo() {
  file_builder f;
  f.input("x", {1, 2, 2, 4});
  f.rescale("x", "r32", tosa::DType_INT32, tosa_fb_test::with_zero_points(-3, 0));
  f.constant("k32", {1, 1, 1, 1}, tosa::DType_INT32, {3});
  f.op(tosa::Op_ADD, {"r32", "k32"}, "add", {1, 2, 2, 4}, tosa::DType_INT32);
  f.op(tosa::Op_SUB, {"add", "k32"}, "sub", {1, 2, 2, 4}, tosa::DType_INT32);
  f.mul("sub", "k32", "mul", 2);
  f.rescale("mul", "r8", tosa::DType_INT8, tosa_fb_test::with_zero_points(0, 0, 1 << 30, 31));
  f.table("r8", "t8", tosa_fb_test::tanh_table());
  f.clamp("t8", "cl", -100, 100);
  f.op(tosa::Op_CAST, {"cl"}, "ca", {1, 2, 2, 4}, tosa::DType_INT16);
  tosa_fb_test::rescale_options r16;
  r16.scale32 = false;
  r16.multipliers = {1 << 14};
  r16.shifts = {14};
  f.rescale("ca", "r16", tosa::DType_INT16, r16);
  std::vector<std::int64_t> t16(513);
  for (std::size_t i = 0; i < t16.size(); ++i) t16[i] = static_cast<std::int64_t>(i) * 64 - 16384;
  f.table("r16", "t16", t16);
  f.constant("w", {4, 1, 1, 4}, tosa::DType_INT8, std::vector<std::int64_t>(16, 1));
  f.constant("b", {4}, tosa::DType_INT32, {1, 2, 3, 4});
  f.conv2d("cl", "w", "b", "conv", {1, 2, 2, 4}, {0, 0, 0, 0}, -7, 0);
  f.constant("dw_w", {1, 1, 4, 1}, tosa::DType_INT8, {1, 2, 3, 4});
  f.conv2d("cl", "dw_w", "b", "dw", {1, 4, 4, 4}, {1, 1, 1, 1}, 0, 0, true);
  f.const_shape("shape3", {1, 4, 4});
  f.op(tosa::Op_RESHAPE, {"cl", "shape3"}, "flat", {1, 4, 4}, tosa::DType_INT8);
  f.constant("bm", {1, 4, 3}, tosa::DType_INT8, std::vector<std::int64_t>(12, 2));
  f.constant("azp", {1}, tosa::DType_INT8, {5});
  f.constant("bzp", {1}, tosa::DType_INT8, {0});
  f.op(tosa::Op_MATMUL, {"flat", "bm", "azp", "bzp"}, "mm", {1, 4, 3}, tosa::DType_INT32);
  f.op(tosa::Op_TRANSPOSE, {"cl"}, "tr", {1, 4, 2, 2}, tosa::DType_INT8,
       [](flatbuffers::FlatBufferBuilder& b) {
         return std::pair{tosa::Attribute_TransposeAttribute,
                          tosa::CreateTransposeAttribute(b, b.CreateVector(std::vector<std::int32_t>{0, 3, 1, 2}))
                              .Union()};
       });
  f.const_shape("start", {0, 0, 1, 0});
  f.const_shape("size", {1, 2, 1, 4});
  f.op(tosa::Op_SLICE, {"cl", "start", "size"}, "sl", {1, 2, 1, 4}, tosa::DType_INT8);
  f.constant("fc", {2}, tosa::DType_FP32, {});
  {
    const float v[2] = {1.5f, -2.0f};
    auto& t = f.find("fc");
    t.data = bytes(8);
    std::memcpy(t.data->data(), v, 8);
  }
  for (const char* out : {"t16", "conv", "dw", "mm", "tr", "sl"}) f.output(out);
  return f;
}

}  // namespace

TEST_CASE("TOSA 1.0 ops map onto qfold's vocabulary as in the MLIR adapter") {
  const bytes b = zoo().build();
  const auto m = qfold_tosa_fb::read_model(b);
  const qfold_tosa_fb::graph g(m);
  CHECK(g.problems().empty());
  CHECK(g.non_constant_parameters().empty());
  const auto kind = [&](const char* n) { return g.kind(id_of(m, n)); };
  CHECK(kind("x") == op_kind::input);
  CHECK(kind("r32") == op_kind::rescale);
  CHECK(kind("k32") == op_kind::constant);
  CHECK(kind("add") == op_kind::add);
  CHECK(kind("sub") == op_kind::sub);
  CHECK(kind("mul") == op_kind::mul);
  CHECK(kind("r8") == op_kind::rescale);
  CHECK(kind("t8") == op_kind::table);
  CHECK(kind("cl") == op_kind::clamp);
  CHECK(kind("ca") == op_kind::cast);
  CHECK(kind("r16") == op_kind::rescale);
  CHECK(kind("t16") == op_kind::table);
  CHECK(kind("conv") == op_kind::convolution);
  CHECK(kind("dw") == op_kind::convolution);
  CHECK(kind("flat") == op_kind::view);
  CHECK(kind("mm") == op_kind::linear);
  CHECK(kind("tr") == op_kind::view);
  CHECK(kind("sl") == op_kind::view);
  CHECK(kind("shape3") == op_kind::other);  // CONST_SHAPE: a hidden operand, not a constant
  CHECK(kind("fc") == op_kind::constant);
  // Every live tensor is a node, producers before readers.
  const auto nodes = g.nodes();
  CHECK(nodes.size() == m.tensors.size());
  CHECK(qfold::detail::nodes_on_cycles(g, nodes).empty());
}

TEST_CASE("operands are TOSA 1.0's visible prefix; parameters are hidden") {
  const bytes b = zoo().build();
  const auto m = qfold_tosa_fb::read_model(b);
  const qfold_tosa_fb::graph g(m);
  const auto ops = [&](const char* n) {
    const auto s = g.operands(id_of(m, n));
    return std::vector<std::uint32_t>(s.begin(), s.end());
  };
  using V = std::vector<std::uint32_t>;
  CHECK(ops("r32") == V{id_of(m, "x")});
  CHECK(ops("mul") == V{id_of(m, "sub"), id_of(m, "k32")});
  CHECK(ops("t8") == V{id_of(m, "r8"), id_of(m, "t8_table")});  // the table is seen
  CHECK(ops("conv") == V{id_of(m, "cl"), id_of(m, "w"), id_of(m, "b")});
  CHECK(ops("mm") == V{id_of(m, "flat"), id_of(m, "bm")});
  CHECK(ops("flat") == V{id_of(m, "cl")});
  CHECK(ops("sl") == V{id_of(m, "cl")});
  CHECK(ops("x").empty());
  CHECK(ops("k32").empty());
  // use_count counts every reader, hidden operands included.
  CHECK(g.use_count(id_of(m, "cl")) == 6);
  CHECK(g.use_count(id_of(m, "k32")) == 3);
  CHECK(g.use_count(id_of(m, "conv")) == 1);  // a graph output
  CHECK(g.use_count(id_of(m, "r32_multiplier")) == 1);
}

TEST_CASE("read points: rescale, mul_shift, clamp, conv attributes, views, constants in place") {
  const bytes b = zoo().build();
  const auto m = qfold_tosa_fb::read_model(b);
  const qfold_tosa_fb::graph g(m);
  {
    const auto r = g.rescale(id_of(m, "r32"));
    CHECK(r.attributes.input_type == qfold::int_type::i8);
    CHECK(r.attributes.output_type == qfold::int_type::i32);
    CHECK(r.attributes.input_zp == -3);
    CHECK(r.attributes.scale32);
    CHECK(r.attributes.rounding == qfold::rounding_mode::single_round);
    REQUIRE(r.multipliers.size() == 1);
    CHECK(r.multipliers[0] == 1 << 30);
    CHECK(r.shifts[0] == 30);
  }
  {
    const auto r = g.rescale(id_of(m, "r16"));
    CHECK_FALSE(r.attributes.scale32);
    CHECK(r.attributes.input_type == qfold::int_type::i16);
    CHECK(r.multipliers[0] == 1 << 14);
    CHECK(r.shifts[0] == 14);
  }
  CHECK(g.mul_shift(id_of(m, "mul")) == 2);
  const auto c = g.clamp_attributes(id_of(m, "cl"));
  CHECK(c.min == -100);
  CHECK(c.max == 100);
  {
    const auto a = g.conv_attributes(id_of(m, "conv"));
    CHECK(a.layout == qfold::weight_layout::o_s_i);
    CHECK_FALSE(a.padded);
    CHECK(a.input_channel_axis == 3);
    const auto q = g.quantized_conv(id_of(m, "conv"));
    REQUIRE(q);
    CHECK(q->input_zero_point == -7);
    REQUIRE(q->weight_zero_points.size() == 1);
    CHECK(q->weight_zero_points[0] == 0);
  }
  {
    const auto a = g.conv_attributes(id_of(m, "dw"));
    CHECK(a.layout == qfold::weight_layout::s_c_m);
    CHECK(a.padded);
    CHECK(a.groups == 4);
  }
  {
    const auto a = g.conv_attributes(id_of(m, "mm"));
    CHECK(a.layout == qfold::weight_layout::s_i_o);
    CHECK(a.input_channel_axis == 2);
    const auto q = g.quantized_conv(id_of(m, "mm"));
    REQUIRE(q);
    CHECK(q->input_zero_point == 5);
  }
  CHECK(g.view_axis(id_of(m, "tr"), 3) == 1);  // perms [0, 3, 1, 2]
  CHECK(g.view_axis(id_of(m, "tr"), 1) == 2);
  CHECK(g.view_axis(id_of(m, "flat"), 3) == 2);  // [1, 2, 2, 4] -> [1, 4, 4]: last axis kept
  CHECK_FALSE(g.view_axis(id_of(m, "flat"), 1));
  CHECK(g.view_axis(id_of(m, "sl"), 3) == 3);  // taken whole
  CHECK_FALSE(g.view_axis(id_of(m, "sl"), 2));  // cut
  {
    const auto w = g.int_constant(id_of(m, "dw_w"));
    REQUIRE(w);
    CHECK(std::vector<std::int64_t>(w->data.begin(), w->data.end()) ==
          std::vector<std::int64_t>{1, 2, 3, 4});
    CHECK(std::vector<std::int64_t>(w->shape.begin(), w->shape.end()) ==
          std::vector<std::int64_t>{1, 1, 4, 1});
    CHECK(g.constant_bytes(id_of(m, "dw_w")) == 4);
    CHECK_FALSE(g.int_constant(id_of(m, "shape3")));  // a shape, not a CONST's tensor
    CHECK_FALSE(g.int_constant(id_of(m, "cl")));
  }
  {
    const auto f = g.constant(id_of(m, "fc"));
    REQUIRE(f);
    CHECK(f->data.size() == 2);
    CHECK(f->data[0] == 1.5f);
    CHECK(f->data[1] == -2.0f);
    // In place: the view is the file's bytes (the writer aligned them to 8).
    CHECK(reinterpret_cast<const std::uint8_t*>(f->data.data()) >= b.data());
    CHECK(reinterpret_cast<const std::uint8_t*>(f->data.data()) < b.data() + b.size());
  }
  CHECK(g.element_type(id_of(m, "ca")) == qfold::dtype::int16);
  CHECK(g.element_type(id_of(m, "mm")) == qfold::dtype::int32);
  CHECK_FALSE(g.element_type(id_of(m, "fc")));
  CHECK(std::vector<std::int64_t>(g.output_shape(id_of(m, "tr")).begin(),
                                  g.output_shape(id_of(m, "tr")).end()) ==
        std::vector<std::int64_t>{1, 4, 2, 2});
  CHECK_FALSE(g.qparams(id_of(m, "x")));
}

TEST_CASE("unsigned sides: zero points stored signed, read as the spec's values") {
  file_builder f;
  f.input("x", {1, 4});
  tosa_fb_test::rescale_options in;
  in.input_unsigned = true;
  in.input_zp = -125;  // uint8 131
  f.rescale("x", "a", tosa::DType_INT8, in);
  f.input("h", {1, 4}, tosa::DType_INT16);
  tosa_fb_test::rescale_options out;
  out.output_unsigned = true;
  out.output_zp = -32768;  // uint16 32768
  f.rescale("h", "u", tosa::DType_INT16, out);
  f.output("a");
  f.output("u");
  const bytes b = f.build();
  const auto m = qfold_tosa_fb::read_model(b);
  const qfold_tosa_fb::graph g(m);
  CHECK(g.problems().empty());
  const auto a = g.rescale(id_of(m, "a"));
  CHECK(a.attributes.input_unsigned);
  CHECK(a.attributes.input_zp == 131);
  const auto u = g.rescale(id_of(m, "u"));
  CHECK(u.attributes.output_unsigned);
  CHECK(u.attributes.output_zp == 32768);
}

TEST_CASE("a parameter computed at run time: named, refused not_constant, file unchanged") {
  file_builder f = tosa_fb_test::rescale_pair();
  f.input("m", {1}, tosa::DType_INT32);
  f.ops.back().inputs[1] = "m";  // the second RESCALE's multiplier is a graph input
  const bytes b = f.build();
  const auto m = qfold_tosa_fb::read_model(b);
  qfold_tosa_fb::graph g(m);
  CHECK(g.problems().empty());  // readable: a run-time value, not a broken constant
  const auto named = g.non_constant_parameters();
  REQUIRE(named.size() == 1);
  CHECK(named[0].find("its multiplier 'm' is not produced by a CONST") != std::string::npos);
  CHECK(named[0].find("RESCALE -> 'y'") != std::string::npos);
  CHECK(g.kind(id_of(m, "y")) == op_kind::rescale);
  CHECK_THROWS_AS(g.rescale(id_of(m, "y")), qfold::parameter_not_constant);
  const auto sites = qfold_tosa_fb::fold(g);
  REQUIRE_FALSE(sites.empty());
  for (const auto& s : sites) {
    INFO(s.pass << ": " << s.reason << " " << s.message);
    CHECK_FALSE(s.folded);
    CHECK(s.reason == "not_constant");
  }
  CHECK_FALSE(g.changed());
  CHECK(qfold_tosa_fb::write_bytes(g) == b);
}

TEST_CASE("a MUL shift or a conv zero point computed at run time is refused, not misread") {
  tosa_fb_test::dyt_options o;
  file_builder f = tosa_fb_test::dyt_alpha(o);
  f.input("s", {1}, tosa::DType_INT8);
  for (auto& op : f.ops)
    if (op.code == tosa::Op_MUL) op.inputs[2] = "s";
  const bytes b = f.build();
  const auto m = qfold_tosa_fb::read_model(b);
  qfold_tosa_fb::graph g(m);
  CHECK_THROWS_AS(g.mul_shift(id_of(m, "mul")), qfold::parameter_not_constant);
  const auto sites = qfold_tosa_fb::fold(g, {"fold_dyt_alpha"});
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].reason == "not_constant");
  CHECK(qfold_tosa_fb::write_bytes(g) == b);

  file_builder c = tosa_fb_test::dyt_affine();
  c.input("izp", {1}, tosa::DType_INT8);
  for (auto& op : c.ops)
    if (op.code == tosa::Op_CONV2D) op.inputs[3] = "izp";
  const bytes cb = c.build();
  const auto cm = qfold_tosa_fb::read_model(cb);
  qfold_tosa_fb::graph cg(cm);
  CHECK_THROWS_AS(cg.quantized_conv(id_of(cm, "conv")), qfold::parameter_not_constant);
  CHECK(cg.non_constant_parameters().size() == 1);
  const auto csites = qfold_tosa_fb::fold(cg, {"fold_dyt_affine"});
  REQUIRE(csites.size() == 1);
  CHECK(csites[0].reason == "not_constant");
  CHECK(qfold_tosa_fb::write_bytes(cg) == cb);
}

TEST_CASE("ops qfold cannot read are bad input, each named") {
  const auto problem_of = [](file_builder f) {
    const bytes b = f.build();
    const auto m = qfold_tosa_fb::read_model(b);
    const qfold_tosa_fb::graph g(m);
    const auto p = g.problems();
    return p.empty() ? std::string() : p[0];
  };
  {
    file_builder f = tosa_fb_test::dyt_alpha();
    auto& t = f.find("table_table");
    t.shape = {255};
    t.data->pop_back();
    const auto p = problem_of(f);
    CHECK(p.find("TABLE -> 'table'") != std::string::npos);
    CHECK(p.find("256 INT8 entries, not 'table_table' INT8 [255]") != std::string::npos);
  }
  {
    file_builder f = tosa_fb_test::rescale_pair();
    f.find("y_shift").data = tosa_fb_test::encode(tosa::DType_INT8, {70});
    const auto p = problem_of(f);
    CHECK(p.find("RESCALE -> 'y'") != std::string::npos);
    CHECK(p.find("shift") != std::string::npos);
  }
  {
    file_builder f = tosa_fb_test::rescale_pair();
    auto& t = f.find("y_multiplier");
    t.type = tosa::DType_INT16;
    t.data->resize(2);
    CHECK(problem_of(f).find("scale32 = true needs an INT32 multiplier, not INT16") !=
          std::string::npos);
  }
  {
    file_builder f = tosa_fb_test::rescale_pair();
    auto& t = f.find("y_multiplier");
    t.type = tosa::DType_FP32;
    CHECK(problem_of(f).find("the multiplier constant 'y_multiplier' is not an integer tensor (FP32)") !=
          std::string::npos);
  }
  {
    file_builder f = tosa_fb_test::rescale_pair();
    f.find("y").type = tosa::DType_INT48;
    CHECK(problem_of(f).find("RESCALE from INT32 to INT48: unsupported element types") !=
          std::string::npos);
  }
  {
    file_builder f = tosa_fb_test::dyt_alpha();
    f.find("mul_shift").data = tosa_fb_test::encode(tosa::DType_INT8, {64});
    CHECK(problem_of(f).find("MUL: shift 64") != std::string::npos);
  }
  {
    file_builder f;
    f.input("x", {4});
    f.clamp("x", "c", 10, -10);
    f.output("c");
    CHECK(problem_of(f).find("CLAMP: min_val 10 above max_val -10") != std::string::npos);
  }
  {
    file_builder f;
    f.input("x", {4}, tosa::DType_INT16);
    f.clamp("x", "c", -1, 1);
    f.find("x").type = tosa::DType_INT8;  // bounds of 2 bytes for an INT8 input
    f.find("c").type = tosa::DType_INT8;
    CHECK(problem_of(f).find("CLAMP: min_val and max_val are not 1 bytes each") !=
          std::string::npos);
  }
  {
    file_builder f = tosa_fb_test::dyt_affine();
    f.find("conv_input_zp").data = tosa_fb_test::encode(tosa::DType_INT8, {1});
    f.find("conv_input_zp").shape = {1};
    f.find("conv_weight_zp").type = tosa::DType_INT16;
    f.find("conv_weight_zp").data = tosa_fb_test::encode(tosa::DType_INT16, {1});
    CHECK(problem_of(f).find("the weight_zp 'conv_weight_zp' is not one INT8 value") !=
          std::string::npos);
  }
}
