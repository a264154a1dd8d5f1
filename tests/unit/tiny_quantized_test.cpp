// The demo IR's quantized ops (examples/tiny_ir): builders, the qfold::quantized_graph adapter
// points and the interpreter, against small cases computed by hand from the TOSA spec and the
// ExecuTorch quantize / dequantize formulas (never from the code's own output).
#include <cstdint>
#include <optional>
#include <qfold/qfold.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using id = tiny::graph::node_id;
using std::int64_t;
using ints = std::vector<int64_t>;
using reals = std::vector<double>;

constexpr qfold::rescale_attributes i8_to_i8{};   // int8 -> int8, scale32, SINGLE_ROUND, zp 0
constexpr qfold::scale_factor half{1 << 30, 31};  // 2^30 / 2^31 = 0.5
constexpr qfold::scale_factor one{1 << 30, 30};
constexpr qfold::scale_factor two{1 << 30, 29};

reals run_one(tiny::graph& g, id out, const reals& input) {
  g.mark_output(out);
  return tiny::evaluate(g, input);
}

std::vector<std::int8_t> descending_table() {  // entry k = 127 - k: code c -> -1 - c
  std::vector<std::int8_t> t(256);
  for (int k = 0; k < 256; ++k) t[static_cast<std::size_t>(k)] = static_cast<std::int8_t>(127 - k);
  return t;
}

std::vector<int64_t> as_vector(std::span<const int64_t> s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE("tiny: the graph satisfies qfold::quantized_graph", "[tiny]") {
  STATIC_REQUIRE(qfold::quantized_graph<tiny::graph>);
  STATIC_REQUIRE(qfold::batch_norm_foldable_graph<tiny::graph>);
}

// TOSA apply_scale_32: (v * m + 2^(s-1)) >> s. By 0.5: -3 -> (-3 * 2^30 + 2^30) >> 31 = -1,
// 3 -> (4 * 2^30) >> 31 = 2, 1 -> 1, -1 -> 0; then + output_zp and clamp to int8.
TEST_CASE("tiny: rescale int8 -> int8 by 0.5 rounds half up", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {5});
  CHECK(run_one(g, g.rescale("r", x, i8_to_i8, {half}), {-3, 3, 1, -1, 0}) ==
        reals{-1, 2, 1, 0, 0});
}

TEST_CASE("tiny: rescale adds the output zero point and saturates", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {3});
  qfold::rescale_attributes a = i8_to_i8;
  a.output_zp = 5;
  const id r = g.rescale("r", x, a, {two});  // 2 * v + 5, clamped to [-128, 127]
  CHECK(run_one(g, r, {-3, 61, 127}) == reals{-1, 127, 127});
}

TEST_CASE("tiny: rescale per channel uses the last axis", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {2, 2});
  qfold::rescale_attributes a = i8_to_i8;
  a.per_channel = true;
  const id r = g.rescale("r", x, a, {half, one});
  CHECK(run_one(g, r, {3, 3, -3, -3}) == reals{2, 3, -1, -3});
  const auto v = g.rescale(r);
  CHECK(v.attributes == a);
  CHECK(v.scales.size() == 2);
  CHECK(v.scales[1] == one);
}

TEST_CASE("tiny: rescale refuses bad scales, counts and inputs", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {2, 3});
  CHECK_THROWS_AS(g.rescale("shift1", x, i8_to_i8, {{1 << 30, 1}}), std::invalid_argument);
  CHECK_THROWS_AS(g.rescale("two", x, i8_to_i8, {half, half}), std::invalid_argument);
  qfold::rescale_attributes a = i8_to_i8;
  a.per_channel = true;
  CHECK_THROWS_AS(g.rescale("pc", x, a, {half, half}), std::invalid_argument);  // 3 channels
  const id r = g.rescale("r", x, i8_to_i8, {half});
  g.mark_output(r);
  CHECK_THROWS_AS(tiny::evaluate(g, {0, 0, 0, 0, 0, 128}), std::invalid_argument);  // not int8
  CHECK_THROWS_AS(tiny::evaluate(g, {0, 0, 0, 0, 0, 0.5}), std::invalid_argument);
}

// TOSA MUL, shift 0: the low 32 bits of the product. 46341^2 = 2147488281 = 2^32 - 2147479015.
TEST_CASE("tiny: integer mul with shift 0 wraps", "[tiny]") {
  tiny::graph g;
  const id a = g.input("a", {1});
  const id b = g.int_constant("b", {46341}, {1}, qfold::dtype::int32);
  CHECK(run_one(g, g.mul("m", a, b), {46341}) == reals{-2147479015});
}

// Shift 1: (a * b + 1) >> 1 (round half up): 3 * 5 -> 8, 3 * -5 -> (-15 + 1) >> 1 = -7.
TEST_CASE("tiny: integer mul with a shift rounds half up", "[tiny]") {
  tiny::graph g;
  const id a = g.input("a", {2});
  const id b = g.int_constant("b", {5, -5}, {2}, qfold::dtype::int32);
  const id m = g.mul("m", a, b, 1);
  CHECK(g.mul_shift(m) == 1);
  CHECK(g.is_integer(m));
  CHECK(run_one(g, m, {3, 3}) == reals{8, -7});
  CHECK_THROWS_AS(tiny::evaluate(g, {3, 2.5}), std::invalid_argument);  // not an integer
  CHECK_THROWS_AS(g.mul("bad", a, b, 64), std::invalid_argument);
}

TEST_CASE("tiny: integer add, and its int32 overflow is an error", "[tiny]") {
  tiny::graph g;
  const id a = g.input("a", {2});
  const id b = g.int_constant("b", {1, -2}, {2}, qfold::dtype::int32);
  g.mark_output(g.add("s", a, b));
  CHECK(tiny::evaluate(g, {41, -5}) == reals{42, -7});
  CHECK_THROWS_AS(tiny::evaluate(g, {2147483647, 0}), std::invalid_argument);
  CHECK(tiny::evaluate(g, {2147483646, -2147483646}) == reals{2147483647, -2147483648.0});
}

TEST_CASE("tiny: float mul and div compute in float32", "[tiny]") {
  tiny::graph g;
  const id a = g.input("a", {2});
  const id b = g.constant("b", {3, 4}, {2});
  const id m = g.fmul("m", a, b);
  CHECK(g.kind(m) == qfold::op_kind::mul);
  CHECK(g.mul_shift(m) == 0);
  CHECK_FALSE(g.is_integer(m));
  g.mark_output(m);
  g.mark_output(g.div("d", a, b));
  // 1/3 in float32 is 0x1.555556p-2, not the double 1/3.
  CHECK(tiny::evaluate(g, {1, 2}) == reals{3, 8, static_cast<double>(1.0f / 3.0f), 0.5});
}

// A (1, 1, 1, C) constant over an (N, H, W, C) tensor: element i meets c[i % C].
TEST_CASE("tiny: binary ops broadcast a (1, 1, 1, C) constant over (N, H, W, C)", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {2, 1, 2, 3});
  const id c = g.constant("c", {1, 2, 3}, {1, 1, 1, 3});
  const id k = g.int_constant("k", {10, 20, 30}, {1, 1, 1, 3}, qfold::dtype::int32);
  const id m = g.fmul("m", x, c);
  const id s = g.add("s", k, x);  // broadcasting from either side
  CHECK(as_vector(g.output_shape(m)) == ints{2, 1, 2, 3});
  CHECK(as_vector(g.output_shape(s)) == ints{2, 1, 2, 3});
  g.mark_output(m);
  g.mark_output(s);
  reals in(12), want;
  for (std::size_t i = 0; i < 12; ++i) in[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < 12; ++i) want.push_back(in[i] * static_cast<double>(i % 3 + 1));
  for (std::size_t i = 0; i < 12; ++i)
    want.push_back(in[i] + 10.0 * static_cast<double>(i % 3 + 1));
  CHECK(tiny::evaluate(g, in) == want);
  CHECK_THROWS_AS(g.fmul("bad", x, g.constant("d", {1, 2}, {2})), std::invalid_argument);
}

// Entry k = 127 - k, indexed by code + 128: code c -> 127 - (c + 128) = -1 - c.
TEST_CASE("tiny: table looks up code + 128", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {4});
  const id t = g.table("t", x, descending_table());
  CHECK(g.table_values(t).size() == 256);
  CHECK(g.table_values(x).empty());
  CHECK(run_one(g, t, {-128, 127, 0, 5}) == reals{127, -128, -1, -6});
  CHECK_THROWS_AS(tiny::evaluate(g, {128, 0, 0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(g.table("short", x, std::vector<std::int8_t>(255)), std::invalid_argument);
}

// ExecuTorch: code = clamp(round_half_even(y * (1 / 0.5)) + 3, -128, 127); y = (code - 3) * 0.5.
// 1 -> 5, 0.25 -> round(0.5) = 0 -> 3, 0.75 -> round(1.5) = 2 -> 5, -100 -> -197 -> -128.
TEST_CASE("tiny: quantize then dequantize with the ExecuTorch convention", "[tiny]") {
  tiny::graph g;
  const qfold::qparams q = qfold::make_qparams(qfold::dtype::int8, 0.5, 3);
  const id x = g.input("x", {4});
  const id qn = g.quantize("q", x, q);
  const id dq = g.dequantize("dq", qn, q);
  CHECK(g.is_integer(qn));
  CHECK_FALSE(g.is_integer(dq));
  CHECK(g.qparams(qn) == q);
  CHECK(g.qparams(dq) == q);
  g.mark_output(qn);
  g.mark_output(dq);
  CHECK(tiny::evaluate(g, {1, 0.25, 0.75, -100}) == reals{5, 3, 5, -128, 1, 0, 1, -65.5});
  CHECK_THROWS_AS(g.quantize("bad", x, qfold::make_qparams(qfold::dtype::int8, 0, 0)),
                  std::invalid_argument);
}

// x (1, 2, 2, 3) NHWC holds (h * 2 + w) * 3 + c; NCHW order lists channel 0 first: 0 3 6 9.
TEST_CASE("tiny: permute (0, 3, 1, 2), then slice, then reshape", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 2, 2, 3});
  const id p = g.permute("p", x, {0, 3, 1, 2});
  const id s = g.slice("s", p, 1, 1, 3);
  const id r = g.reshape("r", s, {1, 2, 4});
  CHECK(g.kind(p) == qfold::op_kind::view);
  CHECK(as_vector(g.output_shape(p)) == ints{1, 3, 2, 2});
  CHECK(as_vector(g.output_shape(s)) == ints{1, 2, 2, 2});
  CHECK(as_vector(g.output_shape(r)) == ints{1, 2, 4});
  g.mark_output(p);
  g.mark_output(r);
  reals in(12);
  for (std::size_t i = 0; i < 12; ++i) in[i] = static_cast<double>(i);
  CHECK(tiny::evaluate(g, in) == reals{0, 3, 6, 9,  1, 4, 7, 10, 2, 5, 8, 11,  // permuted
                                       1, 4, 7, 10, 2, 5, 8, 11});             // channels 1, 2
  CHECK_THROWS_AS(g.permute("bad", x, {0, 3, 1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(g.slice("bad", x, 3, 2, 4), std::invalid_argument);
  CHECK_THROWS_AS(g.reshape("bad", x, {5}), std::invalid_argument);
}

TEST_CASE("tiny: view_axis follows an axis through permute, slice and reshape", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 2, 2, 3});
  const id p = g.permute("p", x, {0, 3, 1, 2});  // (1, 3, 2, 2)
  CHECK(g.view_axis(p, 3) == 1);
  CHECK(g.view_axis(p, 0) == 0);
  CHECK(g.view_axis(p, 1) == 2);
  CHECK(g.view_axis(p, 2) == 3);
  CHECK(g.view_axis(p, 4) == std::nullopt);
  CHECK(g.view_axis(p, -1) == std::nullopt);
  const id narrow = g.slice("narrow", p, 1, 1, 3);
  CHECK(g.view_axis(narrow, 1) == std::nullopt);
  CHECK(g.view_axis(narrow, 0) == 0);
  CHECK(g.view_axis(narrow, 2) == 2);
  const id full = g.slice("full", p, 1, 0, 3);
  CHECK(g.view_axis(full, 1) == 1);
  const id r = g.reshape("r", p, {1, 3, 4});
  CHECK(g.view_axis(r, 0) == 0);
  CHECK(g.view_axis(r, 1) == 1);
  CHECK(g.view_axis(r, 2) == std::nullopt);
  CHECK(g.view_axis(r, 3) == std::nullopt);
  CHECK(g.view_axis(x, 0) == std::nullopt);  // not a view
}

// x - zp = [[1, 3], [5, -1]] (x = [[3, 5], [7, 1]], zp 2); w - wzp = [[0, 1], [2, 3]]
// (w = [[1, 2], [3, 4]], wzp 1); bias 100; padding 1 gives a 3x3 output where taps outside the
// input add nothing (the border reads the zero point). Sums of w - wzp times x - zp:
//   (0,0): 3*1 = 3                  (0,1): 2*1 + 3*3 = 11        (0,2): 2*3 = 6
//   (1,0): 1*1 + 3*5 = 16           (1,1): 0*1+1*3+2*5+3*-1 = 10  (1,2): 0*3 + 2*-1 = -2
//   (2,0): 1*5 = 5                  (2,1): 0*5 + 1*-1 = -1       (2,2): 0*-1 = 0
TEST_CASE("tiny: qconv2d with padding reads the input zero point at the border", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 1, 2, 2});
  const id w = g.int_constant("w", {1, 2, 3, 4}, {1, 1, 2, 2}, qfold::dtype::int8);
  const id b = g.int_constant("b", {100}, {1}, qfold::dtype::int32);
  const id c = g.qconv2d("c", x, w, b, {.padding = 1}, 2, {1});
  CHECK(as_vector(g.output_shape(c)) == ints{1, 1, 3, 3});
  CHECK(g.conv_attributes(c).padded);
  CHECK(g.is_integer(c));
  const auto qc = g.quantized_conv(c);
  REQUIRE(qc);
  CHECK(qc->input_zero_point == 2);
  CHECK(as_vector(qc->weight_zero_points) == ints{1});
  CHECK(qc->weight_type == qfold::dtype::int8);
  CHECK(run_one(g, c, {3, 5, 7, 1}) == reals{103, 111, 106, 116, 110, 98, 105, 99, 100});
}

// Two output channels, no padding: channel 0 as above (centre 10, bias 100); channel 1 has
// wzp 0, so w = [[1, 2], [3, 4]]: 1*1 + 2*3 + 3*5 + 4*-1 = 18, bias -20.
TEST_CASE("tiny: qconv2d with per-channel weight zero points", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 1, 2, 2});
  const id w = g.int_constant("w", {1, 2, 3, 4, 1, 2, 3, 4}, {2, 1, 2, 2}, qfold::dtype::int8);
  const id b = g.int_constant("b", {100, -20}, {2}, qfold::dtype::int32);
  const id c = g.qconv2d("c", x, w, b, {}, 2, {1, 0});
  CHECK_FALSE(g.conv_attributes(c).padded);
  CHECK(run_one(g, c, {3, 5, 7, 1}) == reals{110, -2});
}

TEST_CASE("tiny: qconv2d refuses bad operands and an int32 overflow", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 1, 2, 2});
  const id w = g.int_constant("w", {1, 2, 3, 4}, {1, 1, 2, 2}, qfold::dtype::int8);
  const id fw = g.constant("fw", {1, 2, 3, 4}, {1, 1, 2, 2});
  const id w16 = g.int_constant("w16", {1, 2, 3, 4}, {1, 1, 2, 2}, qfold::dtype::int16);
  const id b8 = g.int_constant("b8", {1}, {1}, qfold::dtype::int8);
  CHECK_THROWS_AS(g.qconv2d("float w", x, fw, tiny::graph::none, {}, 0, {0}),
                  std::invalid_argument);
  CHECK_THROWS_AS(g.qconv2d("int16 w", x, w16, tiny::graph::none, {}, 0, {0}),
                  std::invalid_argument);
  CHECK_THROWS_AS(g.qconv2d("int8 bias", x, w, b8, {}, 0, {0}), std::invalid_argument);
  CHECK_THROWS_AS(g.qconv2d("zps", x, w, tiny::graph::none, {}, 0, {0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(g.qconv2d("wzp", x, w, tiny::graph::none, {}, 0, {128}), std::invalid_argument);
  // bias INT32_MAX plus a positive sum (10, as in the per-channel case) leaves int32.
  const id big = g.int_constant("big", {2147483647}, {1}, qfold::dtype::int32);
  const id c = g.qconv2d("c", x, w, big, {}, 2, {1});
  g.mark_output(c);
  CHECK_THROWS_AS(tiny::evaluate(g, {3, 5, 7, 1}), std::invalid_argument);
  CHECK(g.quantized_conv(g.conv2d("float conv", x, fw)) == std::nullopt);
}

TEST_CASE("tiny: int constants are range checked and separate from float constants", "[tiny]") {
  tiny::graph g;
  CHECK_THROWS_AS(g.int_constant("a", {128}, {1}, qfold::dtype::int8), std::invalid_argument);
  CHECK_THROWS_AS(g.int_constant("b", {-129}, {1}, qfold::dtype::int8), std::invalid_argument);
  CHECK_THROWS_AS(g.int_constant("c", {-1}, {1}, qfold::dtype::uint8), std::invalid_argument);
  CHECK_THROWS_AS(g.int_constant("d", {2147483648}, {1}, qfold::dtype::int32),
                  std::invalid_argument);
  CHECK_THROWS_AS(g.int_constant("e", {1, 2}, {3}, qfold::dtype::int32), std::invalid_argument);
  const id k = g.int_constant("k", {-128, 127, 0, 255 - 255}, {2, 2}, qfold::dtype::int8);
  const id f = g.constant("f", {1.5f}, {1});
  CHECK(g.kind(k) == qfold::op_kind::constant);
  CHECK(g.constant(k) == std::nullopt);
  CHECK(g.int_constant(f) == std::nullopt);
  const auto v = g.int_constant(k);
  REQUIRE(v);
  CHECK(as_vector(v->data) == ints{-128, 127, 0, 0});
  CHECK(as_vector(v->shape) == ints{2, 2});
}

TEST_CASE("tiny: constant_bytes counts an int constant's dtype width", "[tiny]") {
  tiny::graph g;
  const ints six(6, 1);
  CHECK(g.constant_bytes(g.int_constant("i8", six, {2, 3}, qfold::dtype::int8)) == 6);
  CHECK(g.constant_bytes(g.int_constant("u8", six, {2, 3}, qfold::dtype::uint8)) == 6);
  CHECK(g.constant_bytes(g.int_constant("i16", six, {2, 3}, qfold::dtype::int16)) == 12);
  CHECK(g.constant_bytes(g.int_constant("i32", six, {2, 3}, qfold::dtype::int32)) == 24);
  CHECK(g.constant_bytes(g.constant("f", std::vector<float>(6, 1.0f), {2, 3})) == 24);
}

TEST_CASE("tiny: the quantized mutation points", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 1, 2, 2});
  const ints data{1, 2, 3, 4}, shape{1, 1, 2, 2};
  const id k = g.add_int_constant(data, shape, qfold::dtype::int8);
  REQUIRE(g.int_constant(k));
  CHECK(as_vector(g.int_constant(k)->data) == data);
  const std::vector<std::int8_t> t = descending_table();
  const id tb = g.add_table(x, t);
  CHECK(g.kind(tb) == qfold::op_kind::table);
  CHECK(g.use_count(x) == 1);
  CHECK(g.operands(tb).size() == 1);
  CHECK(g.operands(tb)[0] == x);

  const id c = g.qconv2d("c", x, k, tiny::graph::none, {}, 0, {0});
  g.set_conv_input_zero_point(c, -3);
  CHECK(g.quantized_conv(c)->input_zero_point == -3);
  CHECK_THROWS_AS(g.set_conv_input_zero_point(tb, 1), std::invalid_argument);

  CHECK(g.qparams(c) == std::nullopt);
  CHECK_FALSE(g.qparams_shared(c));
  const qfold::qparams q = qfold::make_qparams(qfold::dtype::int8, 0.25, -1);
  g.set_output_qparams(c, q, true);
  CHECK(g.qparams(c) == q);
  CHECK(g.qparams_shared(c));
  const qfold::qparams q2 = qfold::make_qparams(qfold::dtype::int8, 0.125, 0);
  g.set_qparams(c, q2);
  CHECK(g.qparams(c) == q2);
  CHECK(g.qparams_shared(c));
  CHECK_THROWS_AS(g.set_qparams(c, qfold::make_qparams(qfold::dtype::int8, -1, 0)),
                  std::invalid_argument);
}

namespace {
// A graph with every quantized field; `change` alters exactly one of them (0: none).
tiny::graph every_field(int change) {
  tiny::graph g;
  const auto pick = [&](int which, auto base, auto changed) {
    return change == which ? changed : base;
  };
  const id x = g.input("x", {1, 2, 2, 2});
  const id k = g.int_constant("k", {1, pick(1, int64_t{2}, int64_t{3})}, {1, 1, 1, 2},
                              pick(2, qfold::dtype::int8, qfold::dtype::int16));
  qfold::rescale_attributes a{};
  a.input_type = qfold::int_type::i32;
  a.output_zp = pick(3, 0, 1);
  a.rounding = pick(4, qfold::rounding_mode::single_round, qfold::rounding_mode::double_round);
  const id w = g.int_constant("w", {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}, qfold::dtype::int8);
  const id c = g.qconv2d("c", x, w, tiny::graph::none, {}, pick(5, 0, 1), {pick(6, 0, 1)});
  const id r = g.rescale("r", c, a, {pick(7, half, one)});
  const id m = pick(8, 0, 1) ? g.fmul("m", r, k) : g.mul("m", r, k, pick(9, 0, 1));
  std::vector<std::int8_t> t = descending_table();
  t[7] = pick(10, t[7], std::int8_t{0});
  const id tb = g.table("t", m, t);
  const id p = g.permute("p", tb, pick(11, ints{0, 1, 2, 3}, ints{0, 1, 3, 2}));
  const id s = g.slice("s", p, pick(12, 1, 0), 0, 1);
  const id dq =
      g.dequantize("dq", s, qfold::make_qparams(qfold::dtype::int8, pick(13, 0.5, 0.25), 0));
  g.set_output_qparams(tb, qfold::make_qparams(qfold::dtype::int8, 1.0, pick(14, 0, 1)),
                       pick(15, false, true));
  g.mark_output(dq);
  return g;
}
constexpr int every_field_changes = 15;
}  // namespace

TEST_CASE("tiny: structural_hash sees every quantized field", "[tiny]") {
  const std::uint64_t base = every_field(0).structural_hash();
  CHECK(every_field(0).structural_hash() == base);  // a rebuilt identical graph
  for (int change = 1; change <= every_field_changes; ++change) {
    INFO("change " << change);
    CHECK(every_field(change).structural_hash() != base);
  }
}

TEST_CASE("tiny: structural_hash follows the quantized mutation points", "[tiny]") {
  tiny::graph g = every_field(0);
  const std::uint64_t base = g.structural_hash();
  const id c = 3;  // x, k, w, c
  REQUIRE(g.name(c) == "c");
  g.set_conv_input_zero_point(c, 4);
  CHECK(g.structural_hash() != base);
  g.set_conv_input_zero_point(c, 0);
  CHECK(g.structural_hash() == base);
  g.set_qparams(c, qfold::make_qparams(qfold::dtype::int8, 2.0, 0));
  CHECK(g.structural_hash() != base);
}

TEST_CASE("tiny: evaluate and run agree on a float graph", "[tiny]") {
  tiny::graph g;
  const id x = g.input("x", {1, 1, 2, 2});
  g.mark_output(g.relu("r", g.conv2d("c", x, g.constant("w", {0.5f, -1, 2, 0.25f}, {1, 1, 2, 2}),
                                     tiny::graph::none, {.padding = 1})));
  const std::vector<float> in = tiny::random_floats(4, 7);
  const std::vector<float> out = tiny::run(g, in);
  const reals d = tiny::evaluate(g, {in.begin(), in.end()});
  REQUIRE(d.size() == out.size());
  for (std::size_t i = 0; i < d.size(); ++i) CHECK(d[i] == static_cast<double>(out[i]));
}
