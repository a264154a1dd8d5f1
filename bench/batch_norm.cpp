// Batch-norm folding over ResNet-50-sized weights (53 convolutions, 23.5M float32 weights) against
// a memcpy of the same bytes in the same run: the fold reads and writes every weight once, so
// memcpy is its floor.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <qfold/qfold.hpp>
#include <random>
#include <vector>

namespace {
struct site {
  std::vector<std::int64_t> shape;  // OIHW
  std::vector<float> weights, bias, mean, var, gamma, beta, out_weights, out_bias;
};

// ResNet-50's convolutions: the stem, then bottlenecks (1x1, 3x3, 1x1 and a 1x1 downsample in
// each stage's first block) of widths 64, 128, 256, 512 repeated 3, 4, 6, 3 times.
std::vector<site> resnet50() {
  std::vector<std::vector<std::int64_t>> shapes{{64, 3, 7, 7}};
  std::int64_t in = 64;
  const std::int64_t widths[] = {64, 128, 256, 512}, blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage)
    for (std::int64_t b = 0; b < blocks[stage]; ++b) {
      const std::int64_t w = widths[stage];
      shapes.push_back({w, in, 1, 1});
      shapes.push_back({w, w, 3, 3});
      shapes.push_back({4 * w, w, 1, 1});
      if (b == 0) shapes.push_back({4 * w, in, 1, 1});
      in = 4 * w;
    }
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<site> sites;
  for (auto& shape : shapes) {
    site s;
    s.shape = shape;
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    const auto c = static_cast<std::size_t>(shape[0]);
    s.weights.resize(n);
    for (auto& x : s.weights) x = dist(gen);
    s.bias.assign(c, 0.1f);
    s.mean.assign(c, 0.01f);
    s.var.assign(c, 0.9f);
    s.gamma.assign(c, 1.1f);
    s.beta.assign(c, -0.2f);
    s.out_weights.resize(n);
    s.out_bias.resize(c);
    sites.push_back(std::move(s));
  }
  return sites;
}

std::int64_t weight_bytes(const std::vector<site>& sites) {
  std::int64_t n = 0;
  for (const auto& s : sites) n += static_cast<std::int64_t>(s.weights.size() * sizeof(float));
  return n;
}

void fold_resnet50(benchmark::State& state) {
  auto sites = resnet50();
  for (auto _ : state)
    for (auto& s : sites) {
      const auto r =
          qfold::fold_batch_norm(qfold::conv_weights(s.weights, s.shape), s.bias,
                                 {s.mean, s.var, s.gamma, s.beta}, s.out_weights, s.out_bias);
      benchmark::DoNotOptimize(r);
      benchmark::ClobberMemory();
    }
  state.SetBytesProcessed(state.iterations() * weight_bytes(sites));
  state.counters["sites"] = static_cast<double>(sites.size());
  state.counters["weights"] = static_cast<double>(weight_bytes(sites) / 4);
}

void memcpy_resnet50(benchmark::State& state) {
  auto sites = resnet50();
  for (auto _ : state)
    for (auto& s : sites) {
      std::memcpy(s.out_weights.data(), s.weights.data(), s.weights.size() * sizeof(float));
      benchmark::ClobberMemory();
    }
  state.SetBytesProcessed(state.iterations() * weight_bytes(sites));
}

#if defined(QFOLD_DETAIL_X86_TARGETS)
// The fold's row loop with each row kernel this CPU has (arg: index in available_row_kernels(),
// widest first, streaming before plain), and with scale_row (arg -1, the fold before issue 15):
// what the fold reaches on a CPU with only AVX2, or only x86-64's SSE, measured on this one.
void rows_resnet50(benchmark::State& state) {
  auto sites = resnet50();
  const auto all = qfold::detail::available_row_kernels();
  const auto k = state.range(0);
  if (k >= static_cast<std::int64_t>(all.size)) {
    state.SkipWithError("this CPU has no such kernel");
    return;
  }
  for (auto _ : state)
    for (auto& s : sites) {
      const std::size_t c = s.mean.size(), block = s.weights.size() / c;
      bool finite = true;
      for (std::size_t o = 0; o < c; ++o) {
        const float* in = s.weights.data() + o * block;
        float* out = s.out_weights.data() + o * block;
        finite = (k < 0 ? qfold::detail::scale_row(in, out, block, s.gamma[o])
                        : all.kernels[static_cast<std::size_t>(k)](in, out, block, s.gamma[o])) &&
                 finite;
      }
      qfold::detail::end_streaming();
      benchmark::DoNotOptimize(finite);
      benchmark::ClobberMemory();
    }
  state.SetLabel(k < 0 ? "plain scale_row" : all.names[static_cast<std::size_t>(k)]);
  state.SetBytesProcessed(state.iterations() * weight_bytes(sites));
}
BENCHMARK(rows_resnet50)->DenseRange(-1, 5)->Unit(benchmark::kMillisecond);
#endif
}  // namespace

BENCHMARK(memcpy_resnet50)->Unit(benchmark::kMillisecond);
BENCHMARK(fold_resnet50)->Unit(benchmark::kMillisecond);

// The pass over synthetic tiny-IR graphs: a chain of conv + batch norm sites (each 8 nodes with
// its constants), 10k and 1M nodes, to show that the pass grows linearly with the graph.
#include "tiny_ir/tiny_ir.hpp"

namespace {
tiny::graph chain_of_sites(std::size_t nodes) {
  tiny::graph g;
  auto x = g.input("x", {1, 4, 1, 1});
  const std::vector<float> w(16, 0.5f), ones(4, 1.0f), zeros(4, 0.0f);
  for (std::size_t i = 0; 8 * (i + 1) <= nodes; ++i) {
    const auto weight = g.constant("w", w, {4, 4, 1, 1});
    const auto bias = g.constant("b", zeros, {4});
    const auto conv = g.conv2d("conv", x, weight, bias);
    x = g.batch_norm("bn", conv, g.constant("gamma", ones, {4}), g.constant("beta", zeros, {4}),
                     g.constant("mean", zeros, {4}), g.constant("var", ones, {4}));
  }
  g.mark_output(x);
  return g;
}

void pass_on_graph(benchmark::State& state) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const tiny::graph original = chain_of_sites(nodes);
  for (auto _ : state) {
    state.PauseTiming();
    tiny::graph g = original;
    state.ResumeTiming();
    auto r = qfold::fold_batch_norms(g);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(nodes));
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
}  // namespace

BENCHMARK(pass_on_graph)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
