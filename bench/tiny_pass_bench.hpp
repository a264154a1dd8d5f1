// What the tiny-IR pass benchmarks share: a pass timed on a fresh copy of a graph per iteration
// (the copy untimed; every site must fold), and the per-site time as a counter.
#pragma once

#include <benchmark/benchmark.h>

#include <stdexcept>

#include "tiny_ir/tiny_ir.hpp"

namespace tiny_bench {

// ns per site: the iteration's time divided by `sites`.
inline benchmark::Counter per_site(int sites) {
  return benchmark::Counter(
      static_cast<double>(sites),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <class Pass>
void run_pass(benchmark::State& state, const tiny::graph& original, int sites, Pass pass) {
  for (auto _ : state) {
    state.PauseTiming();
    tiny::graph g = original;
    state.ResumeTiming();
    const auto r = pass(g);
    if (r.folded() != static_cast<std::size_t>(sites))
      throw std::logic_error("bench: a site did not fold");
    benchmark::DoNotOptimize(r);
  }
  state.counters["ns/site"] = per_site(sites);
}

}  // namespace tiny_bench
