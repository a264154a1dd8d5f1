// The collapse-to-table pass over the demo IR: a chain of RESCALE, ADD / SUB / MUL by a constant,
// CLAMP, TABLE and CAST from an int8 (or int16) tensor to an int8 tensor becomes one TABLE (an
// int16 TABLE and its rounding RESCALE for int16), and the folded graph gives, through tiny's
// interpreter, the original's codes on every input code (every int8 code on every channel, all
// 65,536 int16 codes), equal to the 128-bit reference model's; each guard refuses with its
// reason, a witness that shows the code, and the structural hash unchanged.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <qfold/qfold.hpp>
#include <random>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "elementwise_reference.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using namespace pass_test;
using qfold::int_type;
using qfold::reason;
using qfold::scale_factor;
namespace rc = ref_chain;

const auto pass = [](tiny::graph& g) { return qfold::fold_collapse_to_tables(g); };

qfold::dtype dtype_of(const rc::narrow& n) {
  if (n.lo == -128) return qfold::dtype::int8;
  if (n.lo == -32768) return qfold::dtype::int16;
  return qfold::dtype::int32;
}
constexpr rc::narrow to_i8{-128, 127}, to_i16{-32768, 32767}, to_i32{INT32_MIN, INT32_MAX};

// The chain's ops as tiny nodes after x.
id build(tiny::graph& g, id x, const std::vector<rc::op>& ops) {
  id cur = x;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string n = "op" + std::to_string(i);
    const auto k = [&](std::int64_t v) {
      return g.int_constant(n + ".k", {v}, {1}, qfold::dtype::int32);
    };
    if (const auto* r = std::get_if<rc::rescale>(&ops[i])) cur = g.rescale(n, cur, r->a, {r->s});
    if (const auto* m = std::get_if<rc::mul>(&ops[i])) cur = g.mul(n, cur, k(m->k), m->shift);
    if (const auto* a = std::get_if<rc::add>(&ops[i])) cur = g.add(n, cur, k(a->k));
    if (const auto* s = std::get_if<rc::sub>(&ops[i]))
      cur = s->reversed ? g.sub(n, k(s->k), cur) : g.sub(n, cur, k(s->k));
    if (const auto* c = std::get_if<rc::clamp>(&ops[i])) cur = g.clamp(n, cur, c->lo, c->hi);
    if (const auto* c = std::get_if<rc::narrow>(&ops[i])) cur = g.cast(n, cur, dtype_of(*c));
    if (const auto* t = std::get_if<rc::table>(&ops[i])) cur = g.table(n, cur, t->t);
  }
  return cur;
}

struct chain_graph {
  tiny::graph g;
  id x = 0, end = 0;
};
chain_graph make(const std::vector<rc::op>& ops, bool int16 = false, std::int64_t size = 0) {
  chain_graph c;
  c.x = c.g.input("x", {size != 0 ? size : (int16 ? 65536 : 256)},
                  int16 ? qfold::dtype::int16 : qfold::dtype::int8);
  c.end = build(c.g, c.x, ops);
  c.g.mark_output(c.end);
  return c;
}

// The chain evaluated alone at one code by the interpreter (throws where the graph errors).
double at_code(const std::vector<rc::op>& ops, std::int64_t code, bool int16 = false) {
  auto c = make(ops, int16, 1);
  return tiny::evaluate(c.g, {static_cast<double>(code)})[0];
}

// Folds and checks against the original and the reference model on every code.
void folds(const std::vector<rc::op>& ops, bool int16 = false) {
  auto c = make(ops, int16);
  const auto input = int16 ? codes(-32768, 32767) : codes(-128, 127);
  const auto before = tiny::evaluate(c.g, input);
  const auto r = pass(c.g);
  REQUIRE(r.sites.size() == 1);
  INFO((r.sites[0].rejected ? r.sites[0].rejected->message : "folded"));
  REQUIRE(r.folded() == 1);
  const auto after = tiny::evaluate(c.g, input);
  CHECK(same(after, before));
  const id out = c.g.outputs()[0];
  if (!int16) {
    CHECK(c.g.kind(out) == qfold::op_kind::table);
    CHECK(c.g.operands(out)[0] == c.x);
    CHECK(c.g.live_count() == 2);  // x and the table
  } else {
    CHECK(c.g.kind(out) == qfold::op_kind::rescale);
    CHECK(c.g.at(c.g.operands(out)[0]).table16.size() == 513);
    CHECK(c.g.live_count() == 3);
  }
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const auto want = rc::run(ops, static_cast<std::int64_t>(input[i]));
    if (!want || static_cast<double>(*want) != after[i]) ++mismatches;
  }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("collapse to table: every op kind, one table, same codes on every input",
          "[graph][collapse]") {
  std::mt19937 gen(1);
  const auto tab = random_table(gen);
  folds({rc::rescale{attrs(int_type::i8, int_type::i32, 5), {1 << 30, 28}}, rc::add{100},
         rc::sub{7}, rc::mul{3}, rc::clamp{-2000, 3000},
         rc::rescale{attrs(int_type::i32, int_type::i8, 0, 1), {1 << 30, 35}}, rc::table{tab},
         to_i32, to_i8});
  // k - x, a rounding MUL, and a widening cast on the way
  folds({to_i16, rc::rescale{attrs(int_type::i16, int_type::i32), {1 << 30, 30}}, rc::sub{50, true},
         rc::mul{-3, 2}, rc::rescale{attrs(int_type::i32, int_type::i8, 0, -4), {1 << 30, 31}}});
  // two tables and clamps only
  folds({rc::table{random_table(gen)}, rc::clamp{-60, 90}, rc::table{random_table(gen)}});
  // x - INT32_MIN is an add of 2^31: defined only for negative x, all negative here
  folds({rc::rescale{attrs(int_type::i8, int_type::i32, 127), {1 << 30, 30}}, rc::add{-1},
         rc::sub{INT32_MIN}, rc::add{INT32_MIN},
         rc::rescale{attrs(int_type::i32, int_type::i8), {1 << 30, 30}}});
}

TEST_CASE("collapse to table: int16 into an int16 TABLE only where exact on 65,536 codes",
          "[graph][collapse]") {
  // round(x / 128) clamped: linear on every 128-code segment, so the 513 knots are exact.
  folds({rc::rescale{attrs(int_type::i16, int_type::i32), {1 << 30, 30}},
         rc::rescale{attrs(int_type::i32, int_type::i8), {1 << 30, 37}}, rc::clamp{-100, 100}},
        true);
  folds({rc::rescale{attrs(int_type::i16, int_type::i32), {1 << 30, 30}}, rc::mul{2},
         rc::rescale{attrs(int_type::i32, int_type::i8, 0, 3), {1 << 30, 38}}},
        true);
  // 3x/512 is a staircase that no interpolated table reproduces: refused at the first code
  const std::vector<rc::op> stairs{rc::rescale{attrs(int_type::i16, int_type::i32), {1 << 30, 30}},
                                   rc::mul{3},
                                   rc::rescale{attrs(int_type::i32, int_type::i8), {1 << 30, 39}}};
  auto c = make(stairs, true);
  const auto why = rejects(c.g, pass, reason::not_exact);
  REQUIRE(why.index < 65536);
  const std::int64_t code = static_cast<std::int64_t>(why.index) - 32768;
  std::vector<qfold::chain::step> steps{
      qfold::chain::rescale{attrs(int_type::i16, int_type::i32), {1 << 30, 30}},
      qfold::chain::mul{3, 0, true},
      qfold::chain::rescale{attrs(int_type::i32, int_type::i8), {1 << 30, 39}}};
  const auto fit = qfold::chain::collapse_int16(steps, false);
  REQUIRE(fit);
  const auto looked_up = qfold::tflite_lookup(fit->table, static_cast<std::int16_t>(code));
  CHECK(static_cast<double>(looked_up) != at_code(stairs, code, true));
  CHECK(static_cast<double>(*rc::run(stairs, code)) == at_code(stairs, code, true));
}

TEST_CASE("collapse to table: per-channel steps fold only when every channel agrees",
          "[graph][collapse]") {
  constexpr std::size_t channels = 4;
  std::mt19937 gen(2);
  const auto tab = random_table(gen);
  for (const bool agree : {true, false}) {
    tiny::graph g;
    const id x = g.input("x", {256, channels}, qfold::dtype::int8);
    auto a = attrs(int_type::i8, int_type::i32, -3);
    a.per_channel = true;
    std::vector<scale_factor> s(channels, {1 << 30, 28});
    if (!agree) s[2] = {1 << 30, 27};
    const id r1 = g.rescale("r1", x, a, s);
    const id r2 = g.rescale("r2", r1, attrs(int_type::i32, int_type::i8), {{1 << 30, 31}});
    g.mark_output(g.table("t", r2, tab));
    const auto input = codes_per_channel(-128, 127, channels);
    const auto before = tiny::evaluate(g, input);
    if (agree) {
      const auto r = pass(g);
      REQUIRE(r.folded() == 1);
      CHECK(same(tiny::evaluate(g, input), before));
      CHECK(g.live_count() == 2);
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < input.size(); ++i) {
        auto a1 = a;
        a1.per_channel = false;
        const auto want = rc::run(
            {rc::rescale{a1, s[i % channels]},
             rc::rescale{attrs(int_type::i32, int_type::i8), {1 << 30, 31}}, rc::table{tab}},
            static_cast<std::int64_t>(input[i]));
        if (!want || static_cast<double>(*want) != before[i]) ++mismatches;
      }
      CHECK(mismatches == 0);
    } else {
      const auto why = rejects(g, pass, reason::not_exact);
      // The witness: channel index / 256 differs from channel 0 at that code.
      const std::size_t ch = why.index / 256, code_index = why.index % 256;
      CHECK(ch == 2);
      CHECK(before[code_index * channels + ch] != before[code_index * channels]);
    }
  }
}

TEST_CASE("collapse to table: every guard refuses and leaves the graph as it was",
          "[graph][collapse]") {
  const auto up = rc::rescale{attrs(int_type::i8, int_type::i32), {1 << 30, 28}};  // x 4
  const auto down = rc::rescale{attrs(int_type::i32, int_type::i8), {1 << 30, 32}};
  {  // an intermediate node with another reader
    auto c = make({up, rc::add{3}, down});
    c.g.mark_output(c.g.operands(c.end)[0]);
    rejects(c.g, pass, reason::shared_output);
  }
  {  // a constant of two different values
    tiny::graph g;
    const id x = g.input("x", {2}, qfold::dtype::int8);
    const id r = g.rescale("up", x, up.a, {up.s});
    const id k = g.int_constant("k", {1, 2}, {2}, qfold::dtype::int32);
    g.mark_output(g.rescale("down", g.add("add", r, k), down.a, {down.s}));
    rejects(g, pass, reason::not_scalar);
  }
  {  // a narrowing CAST that receives values outside int8 (TOSA would truncate them)
    const std::vector<rc::op> ops{up, to_i8, rc::clamp{-100, 100}};
    auto c = make(ops);
    const auto why = rejects(c.g, pass, reason::out_of_range);
    REQUIRE(why.index < 256);
    const std::int64_t code = static_cast<std::int64_t>(why.index) - 128;
    const auto pre_cast = rc::run({up}, code);
    REQUIRE(pre_cast);
    CHECK((*pre_cast < -128 || *pre_cast > 127));
    CHECK(at_code(ops, code) !=
          static_cast<double>(std::clamp<std::int64_t>(*pre_cast, -100, 100)));
  }
  {  // an int32 ADD that overflows at some code: the graph errors there
    const std::vector<rc::op> ops{up, rc::add{INT32_MAX - 300}, down};
    auto c = make(ops);
    const auto why = rejects(c.g, pass, reason::overflow);
    REQUIRE(why.index < 256);
    const std::int64_t code = static_cast<std::int64_t>(why.index) - 128;
    CHECK_THROWS(at_code(ops, code));
    CHECK_NOTHROW(at_code(ops, code - 1));  // the first such code
  }
  {  // INEXACT_ROUND
    auto inexact = down;
    inexact.a.rounding = qfold::rounding_mode::inexact_round;
    auto c = make({up, inexact});
    rejects(c.g, pass, reason::unsupported_rescale);
  }
  {  // not sites: a lone TABLE, a chain from a constant, a chain that ends in int32
    std::mt19937 gen(3);
    auto lone = make({rc::table{random_table(gen)}});
    CHECK(pass(lone.g).sites.empty());
    tiny::graph g;
    const id k = g.int_constant("k", {3}, {1}, qfold::dtype::int8);
    g.mark_output(g.table("t",
                          g.rescale("r", k, attrs(int_type::i8, int_type::i8), {{1 << 30, 30}}),
                          random_table(gen)));
    CHECK(pass(g).sites.empty());
    auto wide = make({up, rc::add{1}});
    CHECK(pass(wide.g).sites.empty());
  }
}

TEST_CASE("collapse to table: random chains (fixed seed)", "[graph][collapse]") {
  std::mt19937 gen(20261202);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  std::size_t folded = 0, refused = 0;
  for (int n = 0; n < 300; ++n) {
    std::vector<rc::op> ops;
    ops.push_back(rc::rescale{attrs(int_type::i8, int_type::i32, pick(-10, 10)),
                              {pick(1 << 29, 1 << 30), pick(22, 31)}});
    for (int k = pick(0, 3); k > 0; --k) {
      switch (pick(0, 4)) {
        case 0:
          ops.push_back(rc::add{pick(-5000, 5000)});
          break;
        case 1:
          ops.push_back(rc::sub{pick(-5000, 5000), pick(0, 1) == 1});
          break;
        case 2:
          ops.push_back(rc::mul{pick(-7, 7), pick(0, 2)});
          break;
        case 3: {
          const int lo = pick(-20000, 0);
          ops.push_back(rc::clamp{lo, lo + pick(0, 40000)});
          break;
        }
        default:
          ops.push_back(to_i32);
      }
    }
    ops.push_back(rc::rescale{attrs(int_type::i32, int_type::i8, 0, pick(-10, 10)),
                              {pick(1 << 29, 1 << 30), pick(28, 40)}});
    if (pick(0, 1) == 1) ops.push_back(rc::table{random_table(gen)});
    if (pick(0, 3) == 0) {  // through int16 and back (fits) or int32 -> int8 after a MUL (may not)
      ops.push_back(to_i16);
      ops.push_back(rc::mul{pick(1, 3)});
      ops.push_back(to_i8);
    }
    auto c = make(ops);
    const auto input = codes(-128, 127);
    std::vector<double> before;
    bool graph_errors = false;
    try {
      before = tiny::evaluate(c.g, input);
    } catch (const std::invalid_argument&) {
      graph_errors = true;
    }
    const auto hash = c.g.structural_hash();
    const auto r = pass(c.g);
    REQUIRE(r.sites.size() == 1);
    if (r.folded() == 1) {
      ++folded;
      REQUIRE_FALSE(graph_errors);
      const auto after = tiny::evaluate(c.g, input);
      CHECK(same(after, before));
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < input.size(); ++i) {
        const auto want = rc::run(ops, static_cast<std::int64_t>(input[i]));
        if (!want || static_cast<double>(*want) != after[i]) ++mismatches;
      }
      CHECK(mismatches == 0);
      continue;
    }
    ++refused;
    CHECK(c.g.structural_hash() == hash);
    const auto& why = *r.sites[0].rejected;
    INFO(why.message);
    CHECK((why.code == reason::overflow || why.code == reason::out_of_range));
    REQUIRE(why.index < 256);
    const std::int64_t code = static_cast<std::int64_t>(why.index) - 128;
    // The witness: the graph errors at that code, or a narrowing cast truncates there.
    const auto want = rc::run(ops, code);
    if (why.code == reason::overflow) CHECK_FALSE(want);
  }
  CHECK(folded > 50);
  CHECK(refused > 5);
}

TEST_CASE("collapse to table: a chain through an int16 TABLE it cannot read is refused",
          "[graph][collapse]") {
  tiny::graph g;
  const id x = g.input("x", {65536}, qfold::dtype::int16);
  std::vector<std::int16_t> knots(513);
  for (std::size_t i = 0; i < knots.size(); ++i) knots[i] = static_cast<std::int16_t>(i);
  const id t = g.table16("t16", x, knots);
  const id r = g.rescale("r", t, attrs(int_type::i32, int_type::i8), {{1 << 30, 37}});
  g.mark_output(g.clamp("c", r, -20, 20));
  rejects(g, pass, reason::invalid_shape);  // tiny does not expose an int16 TABLE's knots
}

TEST_CASE("collapse to table: the standard pipeline lets the DyT alpha pass take its site first",
          "[graph][collapse]") {
  tiny::graph g;
  const id x = g.input("x", {256}, qfold::dtype::int8);
  const id t = tiny::blocks::dyt_alpha(g, "dyt", x, {});
  g.mark_output(g.clamp("after", t, -100, 100));  // a chain continues after the tanh table
  const auto input = codes(-128, 127);
  const auto before = tiny::evaluate(g, input);
  const auto r = qfold::standard_pipeline<tiny::graph>().run(g);
  std::size_t dyt = 0, collapsed = 0;
  for (const auto& s : r.sites) {
    dyt += s.pass == qfold::dyt_alpha_pass_name && s.folded() ? 1u : 0u;
    collapsed += s.pass == qfold::collapse_to_table_pass_name && s.folded() ? 1u : 0u;
  }
  CHECK(dyt == 1);
  CHECK(collapsed == 1);  // the new tanh table and the clamp become one table
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(count_kind(g, qfold::op_kind::table) == 1);
  CHECK(count_kind(g, qfold::op_kind::clamp) == 0);
}
