// The table-composing pass over the demo IR: TABLE -> TABLE becomes one TABLE whose entries equal
// the second table read at the first's output (computed here independently), and the folded graph
// gives the original's codes on every int8 input; a shared first table is refused with the graph
// left as it was.
#include <cstdint>
#include <qfold/qfold.hpp>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "elementwise_reference.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using namespace pass_test;
using qfold::reason;

const auto pass = [](tiny::graph& g) { return qfold::fold_compose_tables(g); };

}  // namespace

TEST_CASE("compose tables: one table, the second read at the first, on every code",
          "[graph][tables]") {
  std::mt19937 gen(7);
  for (int n = 0; n < 200; ++n) {
    const auto t1 = random_table(gen), t2 = random_table(gen);
    tiny::graph g;
    const id x = g.input("x", {256}, qfold::dtype::int8);
    const id a = g.table("t1", x, t1);
    const id b = g.table("t2", a, t2);
    const auto q = qfold::make_qparams(qfold::dtype::int8, 0.25, 3);
    g.set_output_qparams(b, q);
    g.mark_output(b);
    const auto input = codes(-128, 127);
    const auto before = tiny::evaluate(g, input);
    const auto r = pass(g);
    REQUIRE(r.folded() == 1);
    const auto after = tiny::evaluate(g, input);
    CHECK(same(after, before));
    const id t = g.outputs()[0];
    CHECK(g.operands(t)[0] == x);
    CHECK(g.qparams(t) == q);
    CHECK(count_kind(g, qfold::op_kind::table) == 1);
    std::size_t mismatches = 0;  // independent: t2[t1[c] + 128]
    for (int c = -128; c < 128; ++c) {
      const auto i = static_cast<std::size_t>(c + 128);
      const auto want = t2[static_cast<std::size_t>(t1[i] + 128)];
      if (g.table_values(t)[i] != want || after[i] != want) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("compose tables: three tables compose pairwise, run after run", "[graph][tables]") {
  std::mt19937 gen(8);
  tiny::graph g;
  const id x = g.input("x", {256}, qfold::dtype::int8);
  g.mark_output(g.table("t3", g.table("t2", g.table("t1", x, random_table(gen)), random_table(gen)),
                        random_table(gen)));
  const auto input = codes(-128, 127);
  const auto before = tiny::evaluate(g, input);
  CHECK(pass(g).folded() == 1);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(pass(g).folded() == 1);
  CHECK(same(tiny::evaluate(g, input), before));
  CHECK(count_kind(g, qfold::op_kind::table) == 1);
  CHECK(pass(g).sites.empty());
}

TEST_CASE("compose tables: a shared first table is refused, the graph left as it was",
          "[graph][tables]") {
  std::mt19937 gen(9);
  tiny::graph g;
  const id x = g.input("x", {256}, qfold::dtype::int8);
  const id a = g.table("t1", x, random_table(gen));
  g.mark_output(g.table("t2", a, random_table(gen)));
  g.mark_output(a);
  const auto hash = g.structural_hash();
  const auto r = pass(g);
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.sites[0].rejected);
  CHECK(r.sites[0].rejected->code == reason::shared_output);
  CHECK(g.structural_hash() == hash);
}
