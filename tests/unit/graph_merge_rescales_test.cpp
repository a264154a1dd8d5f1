// The rescale-merging pass over the demo IR: a merged pair gives, through tiny's interpreter, the
// same codes as the original on every input code (every int8 code on every channel, all 65,536
// int16 codes), and those codes equal the 128-bit TOSA reference model's; the ExecuTorch-style
// pair whose naive merge skips the intermediate clamp is refused with the code where it moves;
// every guard refuses with its reason and leaves the structural hash unchanged.
#include <array>
#include <cstdint>
#include <qfold/qfold.hpp>
#include <random>
#include <span>
#include <vector>

#include "catch_compat.hpp"
#include "elementwise_reference.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using namespace pass_test;
using qfold::int_type;
using qfold::reason;
using qfold::scale_factor;

const auto pass = [](tiny::graph& g) { return qfold::fold_merge_rescales(g); };

struct pair_graph {
  tiny::graph g;
  id x = 0, first = 0, last = 0;
  std::vector<ref_chain::op> reference;  // the same chain for the independent model
};

// x -> R1 -> (MUL by k ->) R2, per tensor; shape {codes} so one run covers every code.
pair_graph make_pair(qfold::rescale_attributes a, scale_factor sa, qfold::rescale_attributes b,
                     scale_factor sb, std::optional<std::int64_t> k = std::nullopt,
                     int mul_shift = 0) {
  pair_graph p;
  const auto range = a.input_range();
  p.x = p.g.input("x", {range.hi - range.lo + 1});
  p.first = p.g.rescale("r1", p.x, a, {sa});
  p.reference.push_back(ref_chain::rescale{a, sa});
  id mid = p.first;
  if (k) {
    const id c = p.g.int_constant("k", {*k}, {1}, qfold::dtype::int32);
    mid = p.g.mul("mul", p.first, c, mul_shift);
    p.reference.push_back(ref_chain::mul{*k, mul_shift});
  }
  p.last = p.g.rescale("r2", mid, b, {sb});
  p.reference.push_back(ref_chain::rescale{b, sb});
  p.g.mark_output(p.last);
  return p;
}

// Folds, then checks the folded graph against the original and the reference on every code.
void folds(pair_graph& p) {
  const auto range = p.g.rescale(p.first).attributes.input_range();
  const auto input = codes(range.lo, range.hi);
  const auto before = tiny::evaluate(p.g, input);
  const auto r = pass(p.g);
  REQUIRE(r.sites.size() == 1);
  INFO((r.sites[0].rejected ? r.sites[0].rejected->message : "folded"));
  REQUIRE(r.folded() == 1);
  const auto after = tiny::evaluate(p.g, input);
  CHECK(same(after, before));
  CHECK(count_kind(p.g, qfold::op_kind::rescale) == 1);
  CHECK(count_kind(p.g, qfold::op_kind::mul) == 0);
  CHECK(p.g.operands(p.g.outputs()[0])[0] == p.x);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const auto want = ref_chain::run(p.reference, static_cast<std::int64_t>(input[i]));
    if (!want || static_cast<double>(*want) != after[i]) ++mismatches;
  }
  CHECK(mismatches == 0);
}

constexpr scale_factor unit{1 << 30, 30};  // x 1
}  // namespace

TEST_CASE("merge rescales: pairs that merge give the same codes on every input", "[graph][merge]") {
  {  // int8 -> int32 (x 1, zp 3) -> int8 (x 1/2, zp -2)
    auto p = make_pair(attrs(int_type::i8, int_type::i32, 3), unit,
                       attrs(int_type::i32, int_type::i8, 0, -2), {1 << 30, 31});
    folds(p);
  }
  {  // x 16, MUL by 3, x 1/64: one rounding at the end, 0.75 x
    auto p = make_pair(attrs(int_type::i8, int_type::i32), {1 << 30, 26},
                       attrs(int_type::i32, int_type::i8, 0, 5), {1 << 30, 36}, 3);
    folds(p);
  }
  {  // x 16, MUL by 5 with shift 2 (rounds, exactly here: 20 x), x 1/64
    auto p = make_pair(attrs(int_type::i8, int_type::i32, -7), {1 << 30, 26},
                       attrs(int_type::i32, int_type::i8), {1 << 30, 36}, 5, 2);
    folds(p);
  }
  {  // a negative factor makes the map decreasing: no RESCALE (multiplier >= 0) equals it
    auto p = make_pair(attrs(int_type::i8, int_type::i32), {1 << 30, 28},
                       attrs(int_type::i32, int_type::i8), {1 << 30, 32}, -2, 1);
    const auto r = pass(p.g);
    REQUIRE(r.sites.size() == 1);
    REQUIRE(r.sites[0].rejected);
    CHECK(r.sites[0].rejected->code == reason::not_exact);
  }
  {  // int16: x 1, then x 1/4 to int16 (all 65,536 codes)
    auto p = make_pair(attrs(int_type::i16, int_type::i32), unit,
                       attrs(int_type::i32, int_type::i16), {1 << 30, 32});
    folds(p);
  }
  {  // int16 -> int8 through an int32 MUL by 5 and x 1/1024
    auto p = make_pair(attrs(int_type::i16, int_type::i32), unit,
                       attrs(int_type::i32, int_type::i8), {1 << 30, 40}, 5);
    folds(p);
  }
}

TEST_CASE("merge rescales: per channel, every code on every channel", "[graph][merge]") {
  constexpr std::size_t channels = 4;
  tiny::graph g;
  const id x = g.input("x", {256, channels});
  auto a = attrs(int_type::i8, int_type::i32, 1);
  a.per_channel = true;
  const std::vector<scale_factor> s1{{1 << 30, 30}, {1 << 30, 29}, {1 << 30, 28}, {3 << 28, 27}};
  const id r1 = g.rescale("r1", x, a, s1);
  const id r2 = g.rescale("r2", r1, attrs(int_type::i32, int_type::i8, 0, -1), {{1 << 30, 33}});
  g.mark_output(r2);
  const auto input = codes_per_channel(-128, 127, channels);
  const auto before = tiny::evaluate(g, input);
  const auto r = pass(g);
  REQUIRE(r.folded() == 1);
  const auto after = tiny::evaluate(g, input);
  CHECK(same(after, before));
  const id merged = g.outputs()[0];
  CHECK(g.rescale(merged).attributes.per_channel);
  CHECK(g.rescale(merged).scales.size() == channels);
  // The reference, channel by channel.
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const std::size_t c = i % channels;
    auto a1 = a;
    a1.per_channel = false;
    const std::vector<ref_chain::op> chain{
        ref_chain::rescale{a1, s1[c]},
        ref_chain::rescale{attrs(int_type::i32, int_type::i8, 0, -1), {1 << 30, 33}}};
    const auto want = ref_chain::run(chain, static_cast<std::int64_t>(input[i]));
    if (!want || static_cast<double>(*want) != after[i]) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("merge rescales: the naive merge of a clamping pair moves codes; the pass refuses",
          "[graph][merge]") {
  // int8 x 16 to int8 (saturates beyond |x| > 7), then x 1/16: ExecuTorch-style fusion multiplies
  // the scales (x 1) and skips the intermediate clamp.
  const auto a = attrs(int_type::i8, int_type::i8);
  const auto b = attrs(int_type::i8, int_type::i8);
  const scale_factor sa{1 << 30, 26}, sb{1 << 30, 34};
  const std::vector<qfold::chain::step> steps{qfold::chain::rescale{a, sa},
                                              qfold::chain::rescale{b, sb}};
  const auto m = qfold::merge_rescales(qfold::int8_domain, steps, {});
  REQUIRE(m);
  CHECK_FALSE(m->exact());
  CHECK(m->max_deviation == 120);  // code -128: the pair gives -8, the naive merge -128
  REQUIRE(m->first_difference);

  auto p = make_pair(a, sa, b, sb);
  const auto why = rejects(p.g, pass, reason::not_exact);
  REQUIRE(why.index != qfold::rejection::no_index);
  const std::int64_t code = static_cast<std::int64_t>(why.index) - 128;
  CHECK(code == m->first_difference->input);
  // The witness moves: the graph at that code vs the naive merged RESCALE there.
  const auto kept = tiny::evaluate(p.g, codes(-128, 127))[why.index];
  const auto naive = qfold::checked::rescale_value(m->naive.attributes, m->naive.scale, code);
  REQUIRE(naive);
  CHECK(static_cast<double>(*naive) != kept);
  const auto want = ref_chain::run(p.reference, code);
  REQUIRE(want);
  CHECK(static_cast<double>(*want) == kept);
}

TEST_CASE("merge rescales: every guard refuses and leaves the graph as it was", "[graph][merge]") {
  {  // the first RESCALE has another reader
    auto p = make_pair(attrs(int_type::i8, int_type::i32), unit, attrs(int_type::i32, int_type::i8),
                       {1 << 30, 31});
    p.g.mark_output(p.first);
    rejects(p.g, pass, reason::shared_output);
  }
  {  // an int32 input (ExecuTorch's FuseConsecutiveRescales shape: int32 -> int8 -> int32)
    auto p = make_pair(attrs(int_type::i32, int_type::i8), {1 << 30, 38},
                       attrs(int_type::i8, int_type::i32), {1 << 30, 22});
    rejects(p.g, pass, reason::unsupported);
  }
  {  // INEXACT_ROUND
    auto a = attrs(int_type::i8, int_type::i32);
    a.rounding = qfold::rounding_mode::inexact_round;
    auto p = make_pair(a, unit, attrs(int_type::i32, int_type::i8), {1 << 30, 31});
    rejects(p.g, pass, reason::unsupported_rescale);
  }
  {  // a MUL by a constant of two values
    tiny::graph g;
    const id x = g.input("x", {128, 2});
    const id r1 = g.rescale("r1", x, attrs(int_type::i8, int_type::i32), {unit});
    const id k = g.int_constant("k", {2, 3}, {2}, qfold::dtype::int32);
    g.mark_output(
        g.rescale("r2", g.mul("mul", r1, k), attrs(int_type::i32, int_type::i8), {{1 << 30, 31}}));
    rejects(g, pass, reason::not_scalar);
  }
  {  // a MUL whose rounded product leaves int32 (the graph itself is in error there)
    auto p = make_pair(attrs(int_type::i8, int_type::i32), {1 << 30, 10},
                       attrs(int_type::i32, int_type::i8), {1 << 30, 40}, 1 << 20, 1);
    const auto why = rejects(p.g, pass, reason::overflow);
    REQUIRE(why.index < 256);
    std::vector<double> one(256, 0.0);
    one[0] = static_cast<double>(static_cast<std::int64_t>(why.index) - 128);
    tiny::graph single;
    const id x = single.input("x", {1});
    single.mark_output(single.rescale(
        "r2",
        single.mul("mul",
                   single.rescale("r1", x, attrs(int_type::i8, int_type::i32), {{1 << 30, 10}}),
                   single.int_constant("k", {1 << 20}, {1}, qfold::dtype::int32), 1),
        attrs(int_type::i32, int_type::i8), {{1 << 30, 40}}));
    CHECK_THROWS(tiny::evaluate(single, {one[0]}));
  }
  {  // a lone RESCALE and a RESCALE after anything else are not sites
    tiny::graph g;
    const id x = g.input("x", {256});
    g.mark_output(g.rescale("r", g.relu("relu", x), attrs(int_type::i8, int_type::i8), {unit}));
    CHECK(pass(g).sites.empty());
  }
}

TEST_CASE("merge rescales: a chain of three merges pairwise, run after run", "[graph][merge]") {
  tiny::graph g;
  const id x = g.input("x", {256});
  const id r1 = g.rescale("r1", x, attrs(int_type::i8, int_type::i32), {{1 << 30, 28}});
  const id r2 = g.rescale("r2", r1, attrs(int_type::i32, int_type::i32), {{1 << 30, 31}});
  g.mark_output(g.rescale("r3", r2, attrs(int_type::i32, int_type::i8, 0, 4), {{1 << 30, 31}}));
  const auto input = codes(-128, 127);
  const auto before = tiny::evaluate(g, input);
  const auto first = pass(g);
  CHECK(first.folded() == 1);
  CHECK(first.sites.size() == 1);  // r2 -> r3 overlaps the accepted site: left for the next run
  CHECK(same(tiny::evaluate(g, input), before));
  const auto second = pass(g);
  CHECK(second.folded() == 1);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(count_kind(g, qfold::op_kind::rescale) == 1);
}

TEST_CASE("merge rescales: random pairs (fixed seed), folded or refused with a moving code",
          "[graph][merge]") {
  std::mt19937 gen(20261201);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  std::size_t folded = 0, refused = 0;
  for (int n = 0; n < 300; ++n) {
    const std::int64_t izp = pick(-20, 20), ozp = pick(-20, 20);
    const bool with_mul = pick(0, 2) == 0;
    const bool to_int8 = pick(0, 1) == 0;  // the middle is int32 or int8 (clamping)
    const auto mid = to_int8 ? int_type::i8 : int_type::i32;
    const auto a = attrs(int_type::i8, mid, izp, 0);
    const scale_factor sa{pick(1 << 29, (1 << 30) + (1 << 29)), pick(25, 33)};
    const auto b = attrs(with_mul ? int_type::i32 : mid, int_type::i8, 0, ozp);
    const scale_factor sb{pick(1 << 29, (1 << 30) + (1 << 29)), pick(29, 37)};
    const auto k = with_mul ? std::optional<std::int64_t>(pick(-4, 4)) : std::nullopt;
    if (with_mul && to_int8) continue;  // MUL reads the int32 middle only
    auto p = make_pair(a, sa, b, sb, k);
    const auto input = codes(-128, 127);
    const auto before = tiny::evaluate(p.g, input);
    const auto hash = p.g.structural_hash();
    const auto r = pass(p.g);
    REQUIRE(r.sites.size() == 1);
    if (r.folded() == 1) {
      ++folded;
      const auto after = tiny::evaluate(p.g, input);
      CHECK(same(after, before));
      for (std::size_t i = 0; i < input.size(); i += 17)
        CHECK(static_cast<double>(
                  *ref_chain::run(p.reference, static_cast<std::int64_t>(input[i]))) == after[i]);
      continue;
    }
    ++refused;
    CHECK(p.g.structural_hash() == hash);
    const auto& why = *r.sites[0].rejected;
    CHECK(why.code == reason::not_exact);
    // The witness moves: the naive merge there differs from the graph.
    std::vector<qfold::chain::step> steps{qfold::chain::rescale{a, sa}};
    if (k) steps.push_back(qfold::chain::mul{static_cast<std::int32_t>(*k), 0, true});
    steps.push_back(qfold::chain::rescale{b, sb});
    const std::array<std::int64_t, 2> zps{izp, 0};
    const qfold::rescale_space space{
        int_type::i8,
        false,
        int_type::i8,
        false,
        true,
        true,
        std::span<const std::int64_t>(zps.data(), izp == 0 ? 1 : 2)};  // the pass's space
    const auto m = qfold::merge_rescales(qfold::int8_domain, steps, space);
    REQUIRE(m);
    if (why.index != qfold::rejection::no_index) {
      const auto naive = qfold::checked::rescale_value(m->naive.attributes, m->naive.scale,
                                                       static_cast<std::int64_t>(why.index) - 128);
      CHECK((!naive || static_cast<double>(*naive) != before[why.index]));
    }
  }
  CHECK(folded > 20);
  CHECK(refused > 20);
}

TEST_CASE("merge rescales: the IR-free fold refuses per-channel counts that differ",
          "[graph][merge]") {
  auto a = attrs(int_type::i8, int_type::i32);
  auto b = attrs(int_type::i32, int_type::i8);
  a.per_channel = b.per_channel = true;
  const std::vector<scale_factor> four(4, unit), two(2, {1 << 30, 31});
  qfold::rescale_merge_plan plan;
  const auto r = qfold::fold_merge_rescales({{a, four}, std::nullopt, {b, two}}, plan);
  REQUIRE(r);
  CHECK(r->code == reason::channel_mismatch);
  // Both per channel with the same count: one scale per channel, checked on every code.
  const std::vector<scale_factor> four_down(4, {1 << 30, 31});
  CHECK_FALSE(qfold::fold_merge_rescales({{a, four}, std::nullopt, {b, four_down}}, plan));
  CHECK(plan.scales.size() == 4);
  CHECK(plan.attributes.per_channel);
}
