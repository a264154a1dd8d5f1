// The merge-rescales, compose-tables and collapse-to-table passes over tiny-IR graphs of 1,000
// sites each: per pass, the time per site, and the share of it spent in the exhaustive proof (the
// IR-free fold on one site's data). Baseline in the same run: copying the graph (touching every
// node once).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <qfold/qfold.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_ir/blocks.hpp"
#include "tiny_ir/tiny_ir.hpp"
#include "tiny_pass_bench.hpp"

namespace {
using id = tiny::graph::node_id;
constexpr int sites = 1000;

using tiny::blocks::ramp_table;
using tiny::blocks::rescale_attrs;

// Each site reads the input: x -> RESCALE(x 16, zp b % 5) -> MUL by 3 -> RESCALE(x 1/64).
tiny::graph rescale_pairs() {
  tiny::graph g;
  const id x = g.input("x", {1, 16}, qfold::dtype::int8);
  const id k = g.int_constant("k", {3}, {1}, qfold::dtype::int32);
  for (int b = 0; b < sites; ++b) {
    const std::string n = "b" + std::to_string(b);
    const id r1 =
        g.rescale(n + ".r1", x, rescale_attrs(qfold::int_type::i8, qfold::int_type::i32, b % 5),
                  {{1 << 30, 26}});
    g.mark_output(g.rescale(n + ".r2", g.mul(n + ".mul", r1, k),
                            rescale_attrs(qfold::int_type::i32, qfold::int_type::i8),
                            {{1 << 30, 36}}));
  }
  return g;
}
tiny::graph table_pairs() {
  tiny::graph g;
  const id x = g.input("x", {1, 16}, qfold::dtype::int8);
  for (int b = 0; b < sites; ++b) {
    const std::string n = "b" + std::to_string(b);
    g.mark_output(g.table(n + ".t2", g.table(n + ".t1", x, ramp_table(3 + b % 7)), ramp_table(5)));
  }
  return g;
}
// RESCALE -> ADD -> CLAMP -> RESCALE -> TABLE per site (5 ops into one TABLE).
tiny::graph chains() {
  tiny::graph g;
  const id x = g.input("x", {1, 16}, qfold::dtype::int8);
  const id k = g.int_constant("k", {40}, {1}, qfold::dtype::int32);
  for (int b = 0; b < sites; ++b) {
    const std::string n = "b" + std::to_string(b);
    const id up =
        g.rescale(n + ".up", x, rescale_attrs(qfold::int_type::i8, qfold::int_type::i32, b % 3),
                  {{1 << 30, 28}});
    const id c = g.clamp(n + ".clamp", g.add(n + ".add", up, k), -300, 300);
    const id down = g.rescale(
        n + ".down", c, rescale_attrs(qfold::int_type::i32, qfold::int_type::i8), {{1 << 30, 32}});
    g.mark_output(g.table(n + ".t", down, ramp_table(7)));
  }
  return g;
}

template <class Make, class Pass>
void run_pass(benchmark::State& state, Make make, Pass pass) {
  tiny_bench::run_pass(state, make(), sites, pass);
}
template <class Fold>
void proof(benchmark::State& state, Fold fold) {
  for (auto _ : state)
    for (int i = 0; i < sites; ++i) benchmark::DoNotOptimize(fold());
  state.counters["ns/site"] = tiny_bench::per_site(sites);
}
template <class Make>
void copy(benchmark::State& state, Make make) {
  const tiny::graph original = make();
  for (auto _ : state) {
    tiny::graph g = original;
    benchmark::DoNotOptimize(g);
  }
  state.counters["ns/site"] = tiny_bench::per_site(sites);
}

void baseline_copy_rescale_pairs(benchmark::State& s) { copy(s, rescale_pairs); }
void baseline_copy_table_pairs(benchmark::State& s) { copy(s, table_pairs); }
void baseline_copy_chains(benchmark::State& s) { copy(s, chains); }
void pass_merge_rescales(benchmark::State& s) {
  run_pass(s, rescale_pairs, [](tiny::graph& g) { return qfold::fold_merge_rescales(g); });
}
void pass_compose_tables(benchmark::State& s) {
  run_pass(s, table_pairs, [](tiny::graph& g) { return qfold::fold_compose_tables(g); });
}
void pass_collapse_to_table(benchmark::State& s) {
  run_pass(s, chains, [](tiny::graph& g) { return qfold::fold_collapse_to_tables(g); });
}
void proof_merge_rescales(benchmark::State& state) {
  const std::array<qfold::scale_factor, 1> s1{{{1 << 30, 26}}}, s2{{{1 << 30, 36}}};
  const qfold::rescale_pair_site site{
      {rescale_attrs(qfold::int_type::i8, qfold::int_type::i32), s1},
      qfold::chain::mul{3, 0, true},
      {rescale_attrs(qfold::int_type::i32, qfold::int_type::i8), s2}};
  proof(state, [&] {
    qfold::rescale_merge_plan p;
    if (qfold::fold_merge_rescales(site, p)) throw std::logic_error("bench: merge refused");
    return p.scales[0].multiplier;
  });
}
void proof_collapse_to_table(benchmark::State& state) {
  std::vector<std::vector<qfold::chain::step>> channels{
      {qfold::chain::rescale{rescale_attrs(qfold::int_type::i8, qfold::int_type::i32),
                             {1 << 30, 28}},
       qfold::chain::add{40}, qfold::chain::clamp{-300, 300},
       qfold::chain::rescale{rescale_attrs(qfold::int_type::i32, qfold::int_type::i8),
                             {1 << 30, 32}},
       qfold::chain::table::from(qfold::table8<std::int8_t, std::int8_t>{})}};
  const qfold::elementwise_chain c{qfold::int8_domain, channels, {}};
  std::array<std::int8_t, 256> t{};
  proof(state, [&] {
    if (qfold::fold_chain_to_table8(c, t)) throw std::logic_error("bench: collapse refused");
    return t[0];
  });
}
}  // namespace

BENCHMARK(baseline_copy_rescale_pairs)->Unit(benchmark::kMillisecond);
BENCHMARK(pass_merge_rescales)->Unit(benchmark::kMillisecond);
BENCHMARK(proof_merge_rescales)->Unit(benchmark::kMillisecond);
BENCHMARK(baseline_copy_table_pairs)->Unit(benchmark::kMillisecond);
BENCHMARK(pass_compose_tables)->Unit(benchmark::kMillisecond);
BENCHMARK(baseline_copy_chains)->Unit(benchmark::kMillisecond);
BENCHMARK(pass_collapse_to_table)->Unit(benchmark::kMillisecond);
BENCHMARK(proof_collapse_to_table)->Unit(benchmark::kMillisecond);
