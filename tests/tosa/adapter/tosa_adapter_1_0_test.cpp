// What TOSA 1.0 (MLIR 22) brought to the adapter: parameters that are operands (a run-time one
// refuses its site as not_constant, never an adapter failure), INEXACT_ROUND (not a function:
// refused), unsigned RESCALE sides in signless tensors (merged pairs checked on every input code
// against the test's own 128-bit model of the spec's RESCALE), input zero points set and reset
// through private and shared constants, failures injected at every mutation of each pass's
// sites, parameter constants shared between operands (no use after free), DEPTHWISE_CONV2D and
// MATMUL read as convolution and linear, and the passes registered with MLIR's pass registry.
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Transforms/Passes.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <qfold/graph/collapse_to_table_pass.hpp>
#include <qfold/graph/compose_tables_pass.hpp>
#include <qfold/graph/dyt_affine_pass.hpp>
#include <qfold/graph/dyt_alpha_pass.hpp>
#include <qfold/graph/merge_rescales_pass.hpp>
#include <string>
#include <vector>

#include "tosa_test_support.hpp"

namespace {

using qfold::op_kind;
using tosa_test::fixture;
using tosa_test::func_text;
using tosa_test::G;
using tosa_test::rescale_spec;
using tosa_test::to_vector;

const std::string merge = std::string(qfold::merge_rescales_pass_name);
const std::string compose = std::string(qfold::compose_tables_pass_name);
const std::string collapse = std::string(qfold::collapse_to_table_pass_name);
const std::string dyt_alpha = std::string(qfold::dyt_alpha_pass_name);
const std::string dyt_affine = std::string(qfold::dyt_affine_pass_name);

rescale_spec spec(std::int64_t m, std::int64_t s, std::int64_t izp = 0, std::int64_t ozp = 0) {
  rescale_spec r;
  r.multipliers = {m};
  r.shifts = {s};
  r.input_zp = izp;
  r.output_zp = ozp;
  return r;
}

// x (i8) -> RESCALE to i32 (x 4) -> RESCALE to i8 (/ 8): a pair that merges. `adjust` changes
// each RESCALE; `arguments` adds function arguments they may read; `mid` is the type between
// them (i8 for the unsigned pairs: an unsigned side is 8 or 16 bits, the other side too).
std::string pair_module(const std::function<void(rescale_spec&, rescale_spec&)>& adjust = {},
                        const std::string& arguments = "", const std::string& mid = "i32") {
  rescale_spec a = spec(1073741824, 28), b = spec(1073741824, 33);
  if (adjust) adjust(a, b);
  const std::string A = "tensor<1x8xi8>", M = "tensor<1x8x" + mid + ">";
  func_text f("f", "%x: " + A + arguments, A);
  const auto r0 = f.rescale("first", "%x", A, M, a);
  return f.str(f.rescale("second", r0, M, A, b));
}
// uint8 / int8 -> int8 -> int8 / uint8.
std::string unsigned_pair_module(const std::function<void(rescale_spec&, rescale_spec&)>& adjust) {
  return pair_module(adjust, "", "i8");
}

// x (i8) -> RESCALE to i32 -> MUL by 3 -> RESCALE to i8: merges (the MUL's shift given, or its
// own constant 0).
std::string mul_pair_module(const std::string& shift_operand = "",
                            const std::string& arguments = "") {
  const std::string A = "tensor<1x8xi8>", A32 = "tensor<1x8xi32>";
  func_text f("f", "%x: " + A + arguments, A);
  const auto k = f.constant("k", "3", "tensor<1x1xi32>");
  const auto r0 = f.rescale("first", "%x", A, A32, spec(1073741824, 28));
  const auto m = f.mul("mul", r0, k, A32, "tensor<1x1xi32>", A32, 0, shift_operand);
  return f.str(f.rescale("second", m, A32, A, spec(1073741824, 34)));
}

// x -> TABLE -> TABLE: composes (each table given, or a constant of its own).
std::string table_pair_module(const std::string& first = "", const std::string& second = "",
                              const std::string& arguments = "") {
  const std::string A = "tensor<1x8xi8>";
  func_text f("f", "%x: " + A + arguments, A);
  std::vector<std::int64_t> half;
  for (int i = 0; i < 256; ++i) half.push_back((i - 128) / 2);
  const auto t0 =
      !first.empty() ? first : f.constant("t0", tosa_test::list(half), "tensor<256xi8>");
  const auto t1 =
      !second.empty() ? second : f.constant("t1", tosa_test::tanh_table(), "tensor<256xi8>");
  const auto a = f.table("table0", "%x", t0, A, A);
  return f.str(f.table("table1", a, t1, A, A));
}

// x -> RESCALE (i8 -> i8) -> TABLE: collapses into one TABLE.
std::string rescale_table_module(const std::string& table = "",
                                 const std::function<void(rescale_spec&)>& adjust = {},
                                 const std::string& arguments = "") {
  const std::string A = "tensor<1x8xi8>";
  func_text f("f", "%x: " + A + arguments, A);
  const auto t =
      !table.empty() ? table : f.constant("t", tosa_test::tanh_table(), "tensor<256xi8>");
  rescale_spec s = spec(1518500250, 31, 3, -2);
  if (adjust) adjust(s);
  const auto r = f.rescale("rescale", "%x", A, A, s);
  return f.str(f.table("table", r, t, A, A));
}

// Runs every pass on a fresh parse of `text` (and each pass alone), expecting nothing folded,
// every pass of `reaching` to refuse a site as not_constant, no site an adapter failure, and the
// module byte-identical.
void refused_not_constant(const std::string& text, const std::vector<std::string>& reaching) {
  std::vector<std::vector<std::string>> runs{{}};  // all passes, then each alone
  for (const auto& p : qfold_tosa::pass_names()) runs.push_back({p});
  for (const auto& only : runs) {
    INFO("passes: " << (only.empty() ? std::string("all") : only[0]));
    fixture f(text);
    REQUIRE(f.module);
    REQUIRE(G(f.func()).problems().empty());  // a run-time parameter is not bad input
    const std::string before = f.print();
    const auto sites = qfold_tosa::fold_function(f.func(), only);
    for (const auto& s : sites) {
      INFO(s.pass << ": " << s.reason << " " << s.message);
      CHECK(!s.folded);
      CHECK(s.reason != "adapter_failure");
      if (s.reason == "not_constant")
        CHECK(s.message.find("computed at run time") != std::string::npos);
    }
    for (const auto& p : reaching) {
      if (!only.empty() && only[0] != p) continue;
      INFO("pass " << p << " should refuse a site as not_constant");
      CHECK(std::any_of(sites.begin(), sites.end(), [&](const qfold::named_site& s) {
        return s.pass == p && s.reason == "not_constant";
      }));
    }
    CHECK(f.print() == before);
    CHECK(f.unused_constants() == 0);
  }
}

// The same module with the parameter a constant: every pass of `reaching` folds a site.
void folds(const std::string& text, const std::vector<std::string>& reaching) {
  for (const auto& p : reaching) {
    INFO("control: " << p << " folds");
    fixture f(text);
    REQUIRE(f.module);
    const auto sites = qfold_tosa::fold_function(f.func(), {p});
    CHECK(std::any_of(sites.begin(), sites.end(),
                      [](const qfold::named_site& s) { return s.folded; }));
    CHECK(f.verifies());
    CHECK(f.unused_constants() == 0);
  }
}

template <class F>
std::string thrown_by(F&& f) {
  try {
    f();
  } catch (const qfold::parameter_not_constant& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace

// --- (a) Parameters computed at run time -----------------------------------------------------

TEST_CASE("tosa 1.0: a run-time RESCALE parameter refuses the site as not_constant", "[tosa]") {
  // Each parameter of each RESCALE of a pair in turn is a function argument.
  struct variant {
    const char* name;
    std::string arguments;
    std::function<void(rescale_spec&, rescale_spec&)> adjust;
  };
  const std::vector<variant> variants{
      {"first multiplier", ", %p: tensor<1xi32>", [](auto& a, auto&) { a.m_operand = "%p"; }},
      {"first shift", ", %p: tensor<1xi8>", [](auto& a, auto&) { a.s_operand = "%p"; }},
      {"first input_zp", ", %p: tensor<1xi8>", [](auto& a, auto&) { a.izp_operand = "%p"; }},
      {"first output_zp", ", %p: tensor<1xi32>", [](auto& a, auto&) { a.ozp_operand = "%p"; }},
      {"second multiplier", ", %p: tensor<1xi32>", [](auto&, auto& b) { b.m_operand = "%p"; }},
      {"second shift", ", %p: tensor<1xi8>", [](auto&, auto& b) { b.s_operand = "%p"; }},
      {"second input_zp", ", %p: tensor<1xi32>", [](auto&, auto& b) { b.izp_operand = "%p"; }},
      {"second output_zp", ", %p: tensor<1xi8>", [](auto&, auto& b) { b.ozp_operand = "%p"; }},
      // An unsigned input's zero point at run time (MLIR 22's lowering would sign-extend it).
      {"first input_zp, uint8", ", %p: tensor<1xi8>",
       [](auto& a, auto&) {
         a.input_unsigned = true;
         a.izp_operand = "%p";
       }},
  };
  folds(pair_module(), {merge});
  for (const auto& v : variants) {
    INFO(v.name);
    const std::string text = pair_module(v.adjust, v.arguments);
    refused_not_constant(text, {merge, collapse});
    // The read point itself: throws, naming the op and the operand.
    fixture f(text);
    REQUIRE(f.module);
    G g(f.func());
    const mlir::Value r = f.named(std::string(v.name).rfind("first", 0) == 0 ? "first" : "second");
    CHECK(g.kind(r) == op_kind::rescale);
    const std::string what = thrown_by([&] { (void)g.rescale(r); });
    const std::string operand = std::string(v.name).substr(std::string(v.name).find(' ') + 1);
    CHECK(what.find("tosa.rescale's " + operand.substr(0, operand.find(','))) != std::string::npos);
    CHECK(what.find("computed at run time") != std::string::npos);
  }
}

TEST_CASE("tosa 1.0: a run-time MUL shift refuses the site as not_constant", "[tosa]") {
  folds(mul_pair_module(), {merge, collapse});
  const std::string text = mul_pair_module("%p", ", %p: tensor<1xi8>");
  refused_not_constant(text, {merge, collapse});
  {
    fixture f(text);
    REQUIRE(f.module);
    G g(f.func());
    CHECK(g.kind(f.named("mul")) == op_kind::mul);  // still a MUL: only its folds are refused
    CHECK(thrown_by([&] { (void)g.mul_shift(f.named("mul")); }).find("tosa.mul's shift") !=
          std::string::npos);
  }
  // The DyT alpha site with its MUL's shift at run time.
  tosa_test::dyt_options o;
  o.arguments = ", %p: tensor<1xi8>";
  o.mul_shift_operand = "%p";
  folds(tosa_test::dyt_module(), {dyt_alpha});
  refused_not_constant(tosa_test::dyt_module(o), {dyt_alpha});
}

TEST_CASE("tosa 1.0: a run-time conv zero point refuses the site as not_constant", "[tosa]") {
  folds(tosa_test::affine_module(), {dyt_affine});
  for (const bool input : {true, false}) {
    INFO((input ? "input_zp" : "weight_zp"));
    tosa_test::affine_options o;
    o.arguments = ", %p: tensor<1xi8>";
    (input ? o.izp_operand : o.wzp_operand) = "%p";
    const std::string text = tosa_test::affine_module(o);
    refused_not_constant(text, {dyt_affine});
    fixture f(text);
    REQUIRE(f.module);
    G g(f.func());
    const auto conv = f.named("conv");
    CHECK(g.kind(conv) == op_kind::convolution);
    CHECK(g.conv_attributes(conv).layout == qfold::weight_layout::o_s_i);
    CHECK(thrown_by([&] {
            (void)g.quantized_conv(conv);
          }).find(std::string("tosa.conv2d's ") + (input ? "input_zp" : "weight_zp")) !=
          std::string::npos);
    // set_conv_input_zero_point cannot set a run-time zero point: refused, nothing changed.
    if (input) {
      const std::string before = f.print();
      CHECK_THROWS_AS(g.set_conv_input_zero_point(conv, 1), qfold::parameter_not_constant);
      g.collect_garbage();
      CHECK(f.print() == before);
    }
  }
  // MATMUL's a_zp and b_zp, and DEPTHWISE_CONV2D's, through the read point.
  fixture f(R"(
func.func @f(%x: tensor<1x2x8xi8>, %y: tensor<1x4x4x8xi8>, %p: tensor<1xi8>) -> (tensor<1x2x4xi32>, tensor<1x2x4xi32>, tensor<1x4x4x8xi32>) {
  %w = "tosa.const"() <{values = dense<3> : tensor<1x8x4xi8>}> : () -> tensor<1x8x4xi8>
  %dw = "tosa.const"() <{values = dense<2> : tensor<1x1x8x1xi8>}> : () -> tensor<1x1x8x1xi8>
  %db = "tosa.const"() <{values = dense<0> : tensor<8xi32>}> : () -> tensor<8xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.matmul %x, %w, %p, %z : (tensor<1x2x8xi8>, tensor<1x8x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32> loc("a")
  %1 = tosa.matmul %x, %w, %z, %p : (tensor<1x2x8xi8>, tensor<1x8x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32> loc("b")
  %2 = tosa.depthwise_conv2d %y, %dw, %db, %z, %p {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<1x1x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32> loc("d")
  return %0, %1, %2 : tensor<1x2x4xi32>, tensor<1x2x4xi32>, tensor<1x4x4x8xi32>
}
)");
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  CHECK(g.kind(f.named("a")) == op_kind::linear);
  CHECK(thrown_by([&] { (void)g.quantized_conv(f.named("a")); }).find("tosa.matmul's a_zp") !=
        std::string::npos);
  CHECK(thrown_by([&] { (void)g.quantized_conv(f.named("b")); }).find("tosa.matmul's b_zp") !=
        std::string::npos);
  CHECK(thrown_by([&] {
          (void)g.quantized_conv(f.named("d"));
        }).find("tosa.depthwise_conv2d's weight_zp") != std::string::npos);
}

TEST_CASE("tosa 1.0: a run-time TABLE table refuses the site as not_constant", "[tosa]") {
  // TABLE -> TABLE (compose; collapse too): either table an argument.
  folds(table_pair_module(), {compose, collapse});
  refused_not_constant(table_pair_module("%p", "", ", %p: tensor<256xi8>"), {compose, collapse});
  refused_not_constant(table_pair_module("", "%p", ", %p: tensor<256xi8>"), {compose, collapse});
  // RESCALE -> TABLE (collapse).
  folds(rescale_table_module(), {collapse});
  refused_not_constant(rescale_table_module("%p", {}, ", %p: tensor<256xi8>"), {collapse});
  // The DyT alpha site's tanh table.
  tosa_test::dyt_options o;
  o.arguments = ", %p: tensor<256xi8>";
  o.table_operand = "%p";
  refused_not_constant(tosa_test::dyt_module(o), {dyt_alpha});
  // A TABLE with a run-time table is still a TABLE, and fine input.
  fixture f(table_pair_module("%p", "", ", %p: tensor<256xi8>"));
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  CHECK(g.kind(f.named("table0")) == op_kind::table);
}

// A tosa.const whose data qfold cannot read (a dense_resource blob, the form MLIR keeps large
// constants in) is a constant all the same, not a value computed at run time: a RESCALE's or a
// MUL's is bad input (tosa_adapter_test.cpp, "bad input"), and a TABLE's table must not be
// refused as "computed at run time" either.
// (Found by this test: the adapter once took such a table for a run-time value, not_constant.)
TEST_CASE("tosa 1.0: a dense_resource TABLE table is bad input, not a run-time parameter",
          "[tosa]") {
  std::string blob = "0x04000000";  // alignment 4, then 256 bytes
  for (int i = 0; i < 256; ++i) blob += "00";
  fixture f(
      "func.func @f(%x: tensor<1x8xi8>) -> (tensor<1x8xi8>) {\n"
      "  %t0 = \"tosa.const\"() <{values = dense_resource<tab> : tensor<256xi8>}> : () -> "
      "tensor<256xi8>\n"
      "  %t1 = \"tosa.const\"() <{values = dense<3> : tensor<256xi8>}> : () -> tensor<256xi8>\n"
      "  %a = tosa.table %x, %t0 : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>\n"
      "  %b = tosa.table %a, %t1 : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>\n"
      "  return %b : tensor<1x8xi8>\n}\n"
      "{-#\n  dialect_resources: {\n    builtin: {\n      tab: \"" +
      blob + "\"\n    }\n  }\n#-}\n");
  REQUIRE(f.module);
  const std::string before = f.print();
  // Bad input: a problem naming the table, as for a RESCALE's unreadable multiplier.
  const auto problems = G(f.func()).problems();
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("tosa.table: the table constant is not a dense integer tensor") !=
        std::string::npos);
  // (Tools stop at the problem; a caller that folds anyway gets no table site, never a claim
  // that the table is computed at run time.)
  for (const auto& s : qfold_tosa::fold_function(f.func())) {
    INFO(s.pass << ": " << s.reason << " " << s.message);
    CHECK(s.message.find("computed at run time") == std::string::npos);
  }
  CHECK(f.print() == before);
}

// --- (b) INEXACT_ROUND -------------------------------------------------------------------------

TEST_CASE("tosa 1.0: INEXACT_ROUND is read, and refused by every fold", "[tosa]") {
  const auto refused = [](const std::string& text, const std::vector<std::string>& reaching) {
    fixture f(text);
    REQUIRE(f.module);
    REQUIRE(G(f.func()).problems().empty());
    const std::string before = f.print();
    const auto sites = qfold_tosa::fold_function(f.func());
    REQUIRE(!sites.empty());
    for (const auto& s : sites) {
      INFO(s.pass << ": " << s.reason << " " << s.message);
      CHECK(!s.folded);
      CHECK(s.reason != "adapter_failure");
    }
    for (const auto& p : reaching)
      CHECK(std::any_of(sites.begin(), sites.end(), [&](const qfold::named_site& s) {
        return s.pass == p && s.reason == "unsupported_rescale" &&
               s.message.find("INEXACT_ROUND") != std::string::npos;
      }));
    CHECK(f.print() == before);
  };
  const auto inexact = [](rescale_spec& r) { r.rounding = "INEXACT_ROUND"; };
  refused(pair_module([&](auto& a, auto&) { inexact(a); }), {merge, collapse});
  refused(pair_module([&](auto&, auto& b) { inexact(b); }), {merge, collapse});
  refused(rescale_table_module("", inexact), {collapse});
  tosa_test::dyt_options o;
  o.out.rounding = "INEXACT_ROUND";
  {
    fixture f(tosa_test::dyt_module(o));
    REQUIRE(f.module);
    const std::string before = f.print();
    const auto sites = qfold_tosa::fold_function(f.func());
    REQUIRE(!sites.empty());
    for (const auto& s : sites) {
      INFO(s.pass << ": " << s.reason << " " << s.message);
      CHECK(!s.folded);
      CHECK(s.reason != "adapter_failure");
    }
    CHECK(f.print() == before);
  }
  // The same with SINGLE_ROUND folds (the rounding mode is the only reason).
  folds(rescale_table_module(), {collapse});
  // The adapter reads the mode as TOSA's.
  fixture f(pair_module([&](auto& a, auto&) { inexact(a); }));
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.rescale(f.named("first")).attributes.rounding == qfold::rounding_mode::inexact_round);
  CHECK(!qfold::is_bit_exact(g.rescale(f.named("first")).attributes));
}

// --- (c) Unsigned RESCALE pairs against the spec ----------------------------------------------

// The model against hand-computed values of the spec's arithmetic.
TEST_CASE("tosa 1.0: the test's RESCALE model on values worked by hand", "[tosa]") {
  using tosa_test::spec_apply_scale;
  // round half up: -3 / 2 = -1.5 -> -1; 3 / 2 = 1.5 -> 2.
  CHECK(spec_apply_scale(-3, 1 << 30, 31, true, false) == tosa_test::i128{-1});
  CHECK(spec_apply_scale(3, 1 << 30, 31, true, false) == tosa_test::i128{2});
  // DOUBLE_ROUND (shift > 31): the rounding nudged away from zero by 2^30.
  CHECK(spec_apply_scale(-5, 1 << 30, 32, true, true) == tosa_test::i128{-1});  // -1.25 -> -1
  CHECK(spec_apply_scale(5, 1 << 30, 32, true, false) == tosa_test::i128{1});
  // REQUIREs: shift outside 2..62, a negative multiplier, value outside +-2^(shift-1).
  CHECK(!spec_apply_scale(1, 1, 1, true, false));
  CHECK(!spec_apply_scale(1, -1, 30, true, false));
  CHECK(!spec_apply_scale(4, 1, 3, true, false));
  tosa_test::rescale_model m;
  m.in_bits = m.out_bits = 8;
  m.input_unsigned = true;
  m.input_zp = 131;
  m.output_zp = -3;
  m.multipliers = {1 << 30};
  m.shifts = {30};
  CHECK(m.on_codes(-125) == std::int64_t{-3});  // 131 stored as -125: 131 - 131 - 3
  CHECK(m.on_codes(0) == std::int64_t{-128});   // 0 - 131 - 3 clamped
  CHECK(m.on_codes(-1) == std::int64_t{121});   // 255 - 131 - 3
  m.input_unsigned = false;
  m.output_unsigned = true;
  m.input_zp = 0;
  m.output_zp = 131;
  CHECK(m.on_codes(0) == std::int64_t{-125});  // 131 stored as -125
  CHECK(m.on_codes(127) == std::int64_t{-1});  // 258 clamped to 255
  CHECK(m.on_codes(-128) == std::int64_t{3});
}

namespace {

// Merges the one pair of `text` and checks the merged RESCALE against the original pair on
// every input code, both through the test's model of the spec. Returns the merged RESCALE's
// model.
tosa_test::rescale_model merged_equals_pair(const std::string& text) {
  fixture f(text);
  REQUIRE(f.module);
  REQUIRE(G(f.func()).problems().empty());
  const auto first = tosa_test::model_of(f.named("first"));
  const auto second = tosa_test::model_of(f.named("second"));
  const auto sites = qfold_tosa::fold_function(f.func(), {merge});
  REQUIRE(sites.size() == 1);
  INFO(sites[0].reason << " " << sites[0].message);
  REQUIRE(sites[0].folded);
  CHECK(f.verifies());
  CHECK(f.count("tosa.rescale") == 1);
  CHECK(f.unused_constants() == 0);
  const auto merged = tosa_test::model_of(f.value("tosa.rescale"));
  const std::int64_t lo = -(std::int64_t{1} << (first.in_bits - 1));
  for (std::int64_t code = lo; code < -lo; ++code) {
    INFO("input code " << code);
    const auto mid = first.on_codes(code);
    REQUIRE(mid);  // the pair is defined on every code
    const auto expected = second.on_codes(*mid);
    REQUIRE(expected);
    CHECK(merged.on_codes(code) == expected);
  }
  return merged;
}
}  // namespace

TEST_CASE("tosa 1.0: unsigned RESCALE pairs merge, equal on every input code", "[tosa]") {
  SECTION("uint8 -> int8 -> int8") {
    // uint8 zero point 131 (stored -125), to int8 with zero point 3, then halved with 5 added.
    const auto merged = merged_equals_pair(unsigned_pair_module([](auto& a, auto& b) {
      a = spec(1073741824, 30, 131, 3);
      a.input_unsigned = true;
      b = spec(1073741824, 31, 3, 5);
    }));
    CHECK(merged.input_unsigned);
    CHECK(!merged.output_unsigned);
  }
  SECTION("uint8 -> int8 -> int8, clamped between them") {
    // u - 131 clamped at -128 (u < 3), then the identity.
    const auto merged = merged_equals_pair(unsigned_pair_module([](auto& a, auto& b) {
      a = spec(1073741824, 30, 131, 0);
      a.input_unsigned = true;
      b = spec(1073741824, 30, 0, 0);
    }));
    CHECK(merged.input_unsigned);
    CHECK(merged.input_zp == 131);
  }
  SECTION("uint8 -> int8 -> int8, the second scaling") {
    const auto merged = merged_equals_pair(unsigned_pair_module([](auto& a, auto& b) {
      a = spec(1073741824, 30, 128, 0);
      a.input_unsigned = true;
      b = spec(1518500250, 31, 0, -7);
    }));
    CHECK(merged.input_unsigned);
  }
  SECTION("int8 -> int8 -> uint8") {
    const auto merged = merged_equals_pair(unsigned_pair_module([](auto& a, auto& b) {
      a = spec(1518500250, 31, 0, -2);
      b = spec(1073741824, 30, -2, 131);
      b.output_unsigned = true;
    }));
    CHECK(!merged.input_unsigned);
    CHECK(merged.output_unsigned);
  }
  SECTION("int8 -> int8 -> uint8, clamped at both ends") {
    const auto merged = merged_equals_pair(unsigned_pair_module([](auto& a, auto& b) {
      a = spec(1073741824, 30, 0, 0);
      b = spec(1073741824, 29, 0, 128);  // 2 x + 128: clamped to 0..255
      b.output_unsigned = true;
    }));
    CHECK(merged.output_unsigned);
  }
}

TEST_CASE("tosa 1.0: an unsigned merged RESCALE stores its zero point signless", "[tosa]") {
  // u - 131, clamped at -128: the merged RESCALE keeps the uint8 zero point 131, stored as -125
  // in a tensor<1xi8> (not a ui8 tensor).
  fixture f(unsigned_pair_module([](auto& a, auto& b) {
    a = spec(1073741824, 30, 131, 0);
    a.input_unsigned = true;
    b = spec(1073741824, 30, 0, 0);
  }));
  REQUIRE(f.module);
  REQUIRE(qfold_tosa::fold_function(f.func(), {merge}).at(0).folded);
  auto op = llvm::cast<mlir::tosa::RescaleOp>(f.value("tosa.rescale").getDefiningOp());
  CHECK(op.getInputUnsigned());
  const auto zp = tosa_test::integers_of(op.getInputZp());
  REQUIRE(zp.size() == 1);
  CHECK(zp[0].getBitWidth() == 8);
  CHECK(zp[0].getSExtValue() == -125);
  CHECK(llvm::cast<mlir::ShapedType>(op.getInputZp().getType())
            .getElementType()
            .isSignlessInteger(8));
  CHECK(
      llvm::cast<mlir::ShapedType>(op.getOutput().getType()).getElementType().isSignlessInteger(8));
}

TEST_CASE("tosa 1.0: uint8 -> int8 -> uint8 is refused, the module unchanged", "[tosa]") {
  // The merged RESCALE would be unsigned on both sides (the spec's ERROR_IF).
  fixture f(unsigned_pair_module([](auto& a, auto& b) {
    a = spec(1073741824, 30, 128, 0);
    a.input_unsigned = true;
    b = spec(1073741824, 30, 0, 128);
    b.output_unsigned = true;
  }));
  REQUIRE(f.module);
  REQUIRE(G(f.func()).problems().empty());
  const std::string before = f.print();
  const auto sites = qfold_tosa::fold_function(f.func(), {merge});
  REQUIRE(sites.size() == 1);
  INFO(sites[0].reason << " " << sites[0].message);
  CHECK(!sites[0].folded);
  CHECK(sites[0].reason != "adapter_failure");
  CHECK(f.print() == before);
}

// --- (d) Input zero points set and set back ---------------------------------------------------

TEST_CASE("tosa 1.0: set_conv_input_zero_point and back leaves the function byte-identical",
          "[tosa]") {
  const std::string text = R"(
func.func @f(%x: tensor<1x4x4x8xi8>, %y: tensor<1x2x8xi8>) -> (tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>, tensor<1x2x4xi32>, tensor<1x4x4x8xi32>) {
  %w = "tosa.const"() <{values = dense<1> : tensor<2x1x1x8xi8>}> : () -> tensor<2x1x1x8xi8>
  %b = "tosa.const"() <{values = dense<[5, -6]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %own = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}> : () -> tensor<1xi8> loc("own")
  %shared = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}> : () -> tensor<1xi8> loc("shared")
  %both = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8> loc("both")
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mw = "tosa.const"() <{values = dense<3> : tensor<1x8x4xi8>}> : () -> tensor<1x8x4xi8>
  %azp = "tosa.const"() <{values = dense<4> : tensor<1xi8>}> : () -> tensor<1xi8>
  %dw = "tosa.const"() <{values = dense<2> : tensor<1x1x8x1xi8>}> : () -> tensor<1x1x8x1xi8>
  %db = "tosa.const"() <{values = dense<0> : tensor<8xi32>}> : () -> tensor<8xi32>
  %0 = tosa.conv2d %x, %w, %b, %own, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32> loc("private")
  %1 = tosa.conv2d %x, %w, %b, %shared, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32> loc("shared1")
  %2 = tosa.conv2d %x, %w, %b, %shared, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32> loc("shared2")
  %3 = tosa.conv2d %x, %w, %b, %both, %both {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32> loc("input_and_weight")
  %4 = tosa.matmul %y, %mw, %azp, %wzp : (tensor<1x2x8xi8>, tensor<1x8x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32> loc("matmul")
  %5 = tosa.depthwise_conv2d %x, %dw, %db, %shared, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<1x1x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32> loc("depthwise")
  return %0, %1, %2, %3, %4, %5 : tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>, tensor<1x2x4xi32>, tensor<1x4x4x8xi32>
}
)";
  constexpr std::array<const char*, 6> convs{"private",          "shared1", "shared2",
                                             "input_and_weight", "matmul",  "depthwise"};
  for (std::size_t at = 0; at < convs.size(); ++at) {
    const std::string name = convs[at];
    INFO(name);
    fixture f(text);
    REQUIRE(f.module);
    const std::string before = f.print(f.func());
    G g(f.func());
    const auto conv = f.named(name);
    const std::int64_t original = g.quantized_conv(conv)->input_zero_point;
    const auto zps = [&] {
      std::vector<std::int64_t> r;
      for (const char* c : convs) {
        const auto q = g.quantized_conv(f.named(c));
        r.push_back(q->input_zero_point);
        r.push_back(q->weight_zero_points[0]);
      }
      return r;
    };
    std::vector<std::int64_t> others = zps();
    for (const std::int64_t zp : {std::int64_t{7}, std::int64_t{-128}, original, std::int64_t{9}}) {
      g.set_conv_input_zero_point(conv, zp);
      CHECK(f.verifies());
      CHECK(g.quantized_conv(conv)->input_zero_point == zp);
      // Only this conv's input zero point changed (not a conv sharing the constant, nor this
      // conv's weight zero point when it reads the same constant).
      others[2 * at] = zp;
      CHECK(zps() == others);
    }
    g.set_conv_input_zero_point(conv, original);
    g.collect_garbage();
    CHECK(f.print(f.func()) == before);
    // Outside int8: refused, nothing changed.
    CHECK_THROWS_AS(g.set_conv_input_zero_point(conv, 128), std::invalid_argument);
    g.collect_garbage();
    CHECK(f.print(f.func()) == before);
    CHECK(f.unused_constants() == 0);
  }
}

// --- (e) Failures injected at every mutation of each pass's sites ------------------------------

TEST_CASE("tosa 1.0: a failure at any mutation rolls each kind of site back", "[tosa]") {
  using tosa_test::every_mutation_fails;
  SECTION("RESCALE pair, per tensor") { CHECK(every_mutation_fails(pair_module(), merge) >= 2); }
  SECTION("RESCALE pair, per channel") {
    const std::string text = pair_module([](auto& a, auto& b) {
      a.per_channel = b.per_channel = true;
      a.multipliers.assign(8, 1073741824);
      a.shifts = {28, 29, 30, 28, 29, 30, 28, 29};
      b.per_channel = true;
      b.multipliers = {1073741824, 1518500250, 1073741824, 1518500250,
                       1073741824, 1518500250, 1073741824, 1518500250};
      b.shifts.assign(8, 33);
    });
    CHECK(every_mutation_fails(text, merge) >= 2);
  }
  SECTION("RESCALE -> MUL -> RESCALE") {
    CHECK(every_mutation_fails(mul_pair_module(), merge) >= 2);
  }
  SECTION("uint8 RESCALE pair") {
    CHECK(every_mutation_fails(unsigned_pair_module([](auto& a, auto& b) {
                                 a = spec(1073741824, 30, 131, 3);
                                 a.input_unsigned = true;
                                 b = spec(1073741824, 31, 3, 5);
                               }),
                               merge) >= 2);
  }
  SECTION("TABLE -> TABLE") { CHECK(every_mutation_fails(table_pair_module(), compose) >= 2); }
  SECTION("RESCALE -> TABLE") {
    CHECK(every_mutation_fails(rescale_table_module(), collapse) >= 2);
  }
  SECTION("DyT affine, the conv's input zero point shared with another conv") {
    std::string text = tosa_test::affine_module();
    // A second conv reads the first conv's input zero-point constant.
    const auto at = text.find("  return %conv");
    REQUIRE(at != std::string::npos);
    text.insert(at,
                "  %other = tosa.conv2d %arg0, %w, %b, %conv_izp, %conv_wzp {acc_type = i32, "
                "dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, "
                "1>} : (tensor<1x2x2x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, "
                "tensor<1xi8>) -> tensor<1x2x2x2xi32>\n");
    const auto ret = text.find("  return %conv : tensor<1x2x2x2xi32>");
    text.replace(ret, std::string("  return %conv : tensor<1x2x2x2xi32>").size(),
                 "  return %conv, %other : tensor<1x2x2x2xi32>, tensor<1x2x2x2xi32>");
    const std::string sig = "-> (tensor<1x2x2x2xi32>) {";
    text.replace(text.find(sig), sig.size(), "-> (tensor<1x2x2x2xi32>, tensor<1x2x2x2xi32>) {");
    CHECK(every_mutation_fails(text, dyt_affine) >= 2);
  }
}

// --- (f) Parameter constants shared between operands ------------------------------------------

TEST_CASE("tosa 1.0: a parameter constant shared between operands is erased once", "[tosa]") {
  // Folds each module with every pass, twice (the second run finds nothing), checking the
  // module verifies and no constant is left without a reader. Run under ASan (ci-clang-asan): an
  // op erased twice, or read after its erasure, is reported there.
  const auto fold_all = [](const std::string& text, std::size_t expected_folds) {
    fixture f(text);
    REQUIRE(f.module);
    REQUIRE(G(f.func()).problems().empty());
    const std::size_t unused_before = f.unused_constants();
    const auto sites = qfold_tosa::fold_function(f.func());
    std::size_t folded = 0;
    for (const auto& s : sites) {
      INFO(s.pass << ": " << s.reason << " " << s.message);
      CHECK(s.reason != "adapter_failure");
      CHECK(s.note.empty());
      folded += s.folded ? 1U : 0U;
    }
    CHECK(folded == expected_folds);
    CHECK(f.verifies());
    CHECK(f.unused_constants() == unused_before);
    const std::string once = f.print();
    const auto again = qfold_tosa::fold_function(f.func());
    for (const auto& s : again) CHECK(!s.folded);
    CHECK(f.print() == once);
    return f.print();
  };
  SECTION("one constant as the shift and both zero points of both RESCALEs of a pair") {
    func_text f("f", "%x: tensor<8xi8>", "tensor<8xi8>");
    const auto m = f.constant("m", "1073741824", "tensor<1xi32>");
    const auto c = f.constant("c30", "30", "tensor<1xi8>");
    rescale_spec s;
    s.m_operand = m;
    s.s_operand = s.izp_operand = s.ozp_operand = c;
    const auto r0 = f.rescale("first", "%x", "tensor<8xi8>", "tensor<8xi8>", s);
    const auto r1 = f.rescale("second", r0, "tensor<8xi8>", "tensor<8xi8>", s);
    fold_all(f.str(r1), 1);
  }
  SECTION(
      "one constant as two RESCALEs' multiplier and the MUL's factor; one as the MUL's shift "
      "and zero points") {
    const std::string A = "tensor<8xi8>", A32 = "tensor<8xi32>";
    func_text f("f", "%x: " + A, A);
    const auto k = f.constant("k", "1048576", "tensor<1xi32>");  // 2^20
    const auto z8 = f.constant("z8", "0", "tensor<1xi8>");
    const auto z32 = f.constant("z32", "0", "tensor<1xi32>");
    const auto s20 = f.constant("s20", "20", "tensor<1xi8>");
    const auto s40 = f.constant("s40", "40", "tensor<1xi8>");
    rescale_spec a, b;
    a.m_operand = b.m_operand = k;
    a.s_operand = s20;
    b.s_operand = s40;
    a.izp_operand = b.ozp_operand = z8;
    a.ozp_operand = b.izp_operand = z32;
    const auto r0 = f.rescale("first", "%x", A, A32, a);                     // x
    const auto mul = f.mul("mul", r0, k, A32, "tensor<1xi32>", A32, 0, z8);  // x 2^20
    const auto r1 = f.rescale("second", mul, A32, A, b);                     // x 2^40 / 2^40
    fold_all(f.str(r1), 1);
  }
  SECTION("the DyT alpha site with its alpha the RESCALEs' shift constant") {
    const std::string A = "tensor<8xi8>", A32 = "tensor<8xi32>", S = "tensor<1xi8>",
                      S32 = "tensor<1xi32>";
    func_text f("dyt", "%x: " + A, A);
    const auto c30 = f.constant("c30", "30", S);  // alpha 30, and the shift 30
    const auto m = f.constant("m", "1073741824", S32);
    const auto z8 = f.constant("z8", "0", S);
    const auto z32 = f.constant("z32", "0", S32);
    const auto table = f.constant("tanh", tosa_test::tanh_table(), "tensor<256xi8>");
    rescale_spec act, al, out = spec(1518500250, 40, 0, 5);
    act.m_operand = al.m_operand = m;
    act.s_operand = al.s_operand = c30;
    act.izp_operand = al.izp_operand = z8;
    act.ozp_operand = al.ozp_operand = out.izp_operand = z32;
    const auto r0 = f.rescale("act", "%x", A, A32, act);
    const auto r1 = f.rescale("alpha_rescale", c30, S, S32, al);
    const auto p = f.mul("mul", r0, r1, A32, S32, A32, 0, z8);
    const auto r2 = f.rescale("out", p, A32, A, out);
    fold_all(f.str(f.table("table", r2, table, A, A)), 1);
  }
  SECTION("one table constant read by both TABLEs of a pair") {
    func_text f("f", "%x: tensor<8xi8>", "tensor<8xi8>");
    const auto t = f.constant("t", tosa_test::tanh_table(), "tensor<256xi8>");
    const auto a = f.table("table0", "%x", t, "tensor<8xi8>", "tensor<8xi8>");
    const std::string folded =
        fold_all(f.str(f.table("table1", a, t, "tensor<8xi8>", "tensor<8xi8>")), 1);
    CHECK(folded.find("tosa.table %arg0") != std::string::npos);
  }
  SECTION("a conv whose input and weight zero points are one constant, shared with another") {
    std::string text = tosa_test::affine_module({", %y: tensor<1x2x2x2xi8>", "", ""});
    // conv's weight_zp is its input_zp constant; a second conv reads that constant too.
    const auto replace = [&](const std::string& from, const std::string& to) {
      const auto at = text.find(from);
      REQUIRE(at != std::string::npos);
      text.replace(at, from.size(), to);
    };
    replace("%conv_izp, %conv_wzp", "%conv_izp, %conv_izp");
    replace("  return %conv : tensor<1x2x2x2xi32>",
            "  %other = tosa.conv2d %y, %w, %b, %conv_izp, %conv_izp {acc_type = i32, dilation = "
            "array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : "
            "(tensor<1x2x2x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) "
            "-> tensor<1x2x2x2xi32>\n  return %conv, %other : tensor<1x2x2x2xi32>, "
            "tensor<1x2x2x2xi32>");
    replace("-> (tensor<1x2x2x2xi32>) {", "-> (tensor<1x2x2x2xi32>, tensor<1x2x2x2xi32>) {");
    fold_all(text, 1);
  }
  SECTION("a RESCALE -> CLAMP -> TABLE chain with one constant as shift and zero points") {
    const std::string A = "tensor<8xi8>";
    func_text f("f", "%x: " + A, A);
    const auto c = f.constant("c30", "30", "tensor<1xi8>");
    const auto t = f.constant("t", tosa_test::tanh_table(), "tensor<256xi8>");
    rescale_spec s = spec(1518500250, 31);
    s.s_operand = s.izp_operand = s.ozp_operand = c;
    const auto r = f.rescale("rescale", "%x", A, A, s);
    const auto cl =
        f.op("clamp", "tosa.clamp " + r + " {min_val = -100 : i8, max_val = 100 : i8} : (" + A +
                          ") -> " + A);
    fold_all(f.str(f.table("table", cl, t, A, A)), 1);
  }
}

// --- (g) DEPTHWISE_CONV2D and MATMUL ----------------------------------------------------------

TEST_CASE("tosa 1.0: depthwise_conv2d and matmul are read as convolution and linear", "[tosa]") {
  fixture f(R"(
func.func @f(%x: tensor<1x4x4x4xi8>, %a: tensor<1x3x8xi8>, %a2: tensor<2x3x8xi8>, %b: tensor<1x8x5xi8>, %h: tensor<1x4x4x4xi16>) -> (tensor<1x4x4x8xi32>, tensor<1x3x5xi32>, tensor<1x3x5xi32>, tensor<2x3x5xi32>, tensor<1x4x4x8xi48>) {
  %dw = "tosa.const"() <{values = dense<[[[[1, 2], [3, 4], [5, 6], [7, 8]]]]> : tensor<1x1x4x2xi8>}> : () -> tensor<1x1x4x2xi8> loc("dw_weight")
  %db = "tosa.const"() <{values = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>}> : () -> tensor<8xi32>
  %dzp = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mw = "tosa.const"() <{values = dense<3> : tensor<1x8x5xi8>}> : () -> tensor<1x8x5xi8> loc("mm_weight")
  %mw2 = "tosa.const"() <{values = dense<3> : tensor<2x8x5xi8>}> : () -> tensor<2x8x5xi8>
  %azp = "tosa.const"() <{values = dense<-7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %bzp = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %hw = "tosa.const"() <{values = dense<1> : tensor<1x1x4x2xi8>}> : () -> tensor<1x1x4x2xi8>
  %hb = "tosa.const"() <{values = dense<0> : tensor<8xi48>}> : () -> tensor<8xi48>
  %hzp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %0 = tosa.depthwise_conv2d %x, %dw, %db, %dzp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x4xi8>, tensor<1x1x4x2xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32> loc("depthwise")
  %1 = tosa.matmul %a, %mw, %azp, %bzp : (tensor<1x3x8xi8>, tensor<1x8x5xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x5xi32> loc("matmul")
  %2 = tosa.matmul %a, %b, %azp, %bzp : (tensor<1x3x8xi8>, tensor<1x8x5xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x5xi32> loc("activations")
  %3 = tosa.matmul %a2, %mw2, %azp, %bzp : (tensor<2x3x8xi8>, tensor<2x8x5xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x5xi32> loc("batched")
  %4 = tosa.depthwise_conv2d %h, %hw, %hb, %hzp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x4xi16>, tensor<1x1x4x2xi8>, tensor<8xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x4x4x8xi48> loc("int16")
  return %0, %1, %2, %3, %4 : tensor<1x4x4x8xi32>, tensor<1x3x5xi32>, tensor<1x3x5xi32>, tensor<2x3x5xi32>, tensor<1x4x4x8xi48>
}
)");
  REQUIRE(f.module);
  G g(f.func());
  CHECK(g.problems().empty());
  // DEPTHWISE_CONV2D: weight [KH, KW, C, M] (HWCM), one group per input channel (C = 4, M = 2:
  // 8 output channels), zero points from its operands.
  const auto dw = f.named("depthwise");
  CHECK(g.kind(dw) == op_kind::convolution);
  const auto da = g.conv_attributes(dw);
  CHECK(da.layout == qfold::weight_layout::s_c_m);
  CHECK(da.groups == 4);
  CHECK(da.input_channel_axis == 3);
  CHECK(!da.padded);
  const auto dq = g.quantized_conv(dw);
  REQUIRE(dq);
  CHECK(dq->input_zero_point == -5);
  CHECK(to_vector(dq->weight_zero_points) == std::vector<std::int64_t>{2});
  CHECK(dq->weight_type == qfold::dtype::int8);
  std::vector<mlir::Value> ops;
  for (const mlir::Value o : g.operands(dw)) ops.push_back(o);
  REQUIRE(ops.size() == 3);
  CHECK(ops[1] == f.named("dw_weight"));
  const auto w = g.int_constant(ops[1]);
  REQUIRE(w);
  CHECK(to_vector(w->shape) == std::vector<std::int64_t>{1, 1, 4, 2});
  CHECK(to_vector(w->data) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8});
  // MATMUL with a constant [1, C, W] right-hand side: linear, b as [1, in, out], a's channels on
  // axis 2.
  const auto mm = f.named("matmul");
  CHECK(g.kind(mm) == op_kind::linear);
  const auto ma = g.conv_attributes(mm);
  CHECK(ma.layout == qfold::weight_layout::s_i_o);
  CHECK(ma.input_channel_axis == 2);
  CHECK(!ma.padded);
  const auto mq = g.quantized_conv(mm);
  REQUIRE(mq);
  CHECK(mq->input_zero_point == -7);
  CHECK(to_vector(mq->weight_zero_points) == std::vector<std::int64_t>{1});
  CHECK(g.operands(mm).size() == 2);
  CHECK(g.operands(mm)[1] == f.named("mm_weight"));
  // Not linear layers: a product of two activations; one weight per batch.
  CHECK(g.kind(f.named("activations")) == op_kind::other);
  CHECK(g.kind(f.named("batched")) == op_kind::other);
  CHECK(!g.quantized_conv(f.named("activations")));
  // int16 x int8 with an i48 accumulator: not folded into.
  CHECK(g.kind(f.named("int16")) == op_kind::other);
}

// --- (h) The passes in MLIR's registry --------------------------------------------------------

TEST_CASE("tosa 1.0: register_passes: pipelines parse and fold", "[tosa]") {
  qfold_tosa::register_passes();
  qfold_tosa::register_passes();  // safe to call again
  mlir::registerTransformsPasses();
  for (const auto& name : qfold_tosa::pass_names())
    CHECK(mlir::PassInfo::lookup(qfold_tosa::mlir_pass_argument(name)) != nullptr);
  CHECK(mlir::PassPipelineInfo::lookup(qfold_tosa::pipeline_argument) != nullptr);

  const auto run = [](const std::string& pipeline, const std::string& text) {
    INFO(pipeline);
    fixture f(text);
    REQUIRE(f.module);
    std::string errors;
    llvm::raw_string_ostream es(errors);
    const auto parsed = mlir::parsePassPipeline(pipeline, es);
    INFO(es.str());
    REQUIRE(mlir::succeeded(parsed));
    mlir::PassManager pm(&f.context, mlir::ModuleOp::getOperationName());
    static_cast<mlir::OpPassManager&>(pm) = *parsed;
    REQUIRE(mlir::succeeded(pm.run(*f.module)));
    CHECK(f.verifies());
    return std::pair{f.count("tosa.rescale"), f.count("tosa.mul")};
  };
  // Every pass: the DyT alpha site becomes one TABLE.
  CHECK(run("builtin.module(qfold-fold)", tosa_test::dyt_module()) ==
        std::pair<std::size_t, std::size_t>{0, 0});
  CHECK(run("builtin.module(func.func(qfold-fold))", tosa_test::dyt_module()) ==
        std::pair<std::size_t, std::size_t>{0, 0});
  // One pass with an upstream one, on functions: the pair becomes one RESCALE.
  CHECK(run("builtin.module(func.func(qfold-fold-merge-rescales,canonicalize))", pair_module()) ==
        std::pair<std::size_t, std::size_t>{1, 0});
  CHECK(run("builtin.module(qfold-fold,canonicalize)", mul_pair_module()) ==
        std::pair<std::size_t, std::size_t>{1, 0});
  // Refused sites do not fail the pass.
  CHECK(run("builtin.module(qfold-fold)",
            pair_module([](auto& a, auto&) { a.m_operand = "%p"; }, ", %p: tensor<1xi32>")) ==
        std::pair<std::size_t, std::size_t>{2, 0});
  // Unknown names are parse errors.
  std::string errors;
  llvm::raw_string_ostream es(errors);
  CHECK(mlir::failed(mlir::parsePassPipeline("builtin.module(qfold-fold-nothing)", es)));
  // Bad input fails the pass with the problem.
  {
    fixture f(R"(func.func @f(%arg0: tensor<4xi8>) -> tensor<4xi8> {
  %t = "tosa.const"() <{values = dense<1> : tensor<255xi8>}> : () -> tensor<255xi8>
  %0 = tosa.table %arg0, %t : (tensor<4xi8>, tensor<255xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
})");
    REQUIRE(f.module);
    const auto parsed = mlir::parsePassPipeline("builtin.module(qfold-fold)", es);
    REQUIRE(mlir::succeeded(parsed));
    mlir::PassManager pm(&f.context, mlir::ModuleOp::getOperationName());
    static_cast<mlir::OpPassManager&>(pm) = *parsed;
    CHECK(mlir::failed(pm.run(*f.module)));
  }
}
