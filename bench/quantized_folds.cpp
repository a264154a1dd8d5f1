// The DyT alpha, DyT affine and scale-into-quantize passes over a transformer-sized tiny-IR graph:
// 1,000 blocks (about 30,000 nodes), each a DyT layer (alpha into the tanh table, gamma/beta into a
// 32-channel 3x3 integer conv) followed by an attention-style requantize by 1/8. Per pass: time per
// site, and the share of it spent in the exhaustive proof (the IR-free fold on the same site's
// data). Baselines in the same run: copying the graph (touching every node once) and generating the
// tanh table.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <qfold/qfold.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_ir/blocks.hpp"
#include "tiny_ir/tiny_ir.hpp"
#include "tiny_pass_bench.hpp"

namespace {
namespace blocks = tiny::blocks;
using id = tiny::graph::node_id;
constexpr int sites = 1000;
constexpr std::int64_t channels = 32;

tiny::graph transformer() {
  tiny::graph g;
  const id x = g.input("x", {1, 3, 3, channels});  // every block reads it; 3x3 conv -> 1x1
  const auto scores_q = qfold::make_qparams(qfold::dtype::int8, 0.05, 0);
  auto scaled_q = scores_q;
  scaled_q.scale = scores_q.scale * 0.125;
  for (int b = 0; b < sites; ++b) {
    const std::string n = "b" + std::to_string(b);
    blocks::dyt_alpha_options dyt;
    dyt.alpha = 0.5 + b % 7 * 0.1;
    dyt.tanh_output = qfold::make_qparams(qfold::dtype::int8, 1.0 / 32, 0);
    const id t = blocks::dyt_alpha(g, n + ".dyt", x, dyt);
    blocks::dyt_affine_options affine;
    for (std::int64_t c = 0; c < channels; ++c) {
      affine.gamma.push_back(c % 3 == 0 ? -1 : 1 + c % 2);
      affine.beta.push_back(c % 11 - 5);
    }
    affine.out_channels = channels;
    affine.seed = static_cast<std::uint64_t>(b);
    const id conv = blocks::dyt_affine_conv(g, n + ".affine", t, affine);
    const id scores = blocks::rescale(g, n + ".scores", conv, qfold::int_type::i32,
                                      qfold::int_type::i8, 1.0 / 256);
    g.set_output_qparams(scores, scores_q);
    const id scaled =
        blocks::requantize_sandwich(g, n + ".attn", scores, 0.125f, scores_q, scaled_q);
    g.mark_output(scaled);
  }
  return g;
}

const tiny::graph& graph() {
  static const tiny::graph g = transformer();
  return g;
}

template <class Pass>
void run_pass(benchmark::State& state, Pass pass) {
  tiny_bench::run_pass(state, graph(), sites, pass);
}
void pass_dyt_alpha(benchmark::State& s) {
  run_pass(s, [](tiny::graph& g) { return qfold::fold_dyt_alphas(g); });
}
void pass_dyt_affine(benchmark::State& s) {
  run_pass(s, [](tiny::graph& g) { return qfold::fold_dyt_affines(g); });
}
void pass_scale_into_quantize(benchmark::State& s) {
  run_pass(s, [](tiny::graph& g) { return qfold::fold_scales_into_quantize(g); });
}

// The proof alone: the IR-free fold on the first block's data, once per site.
id find(const tiny::graph& g, const std::string& name) {
  for (const id n : g.nodes())
    if (g.name(n) == name) return n;
  throw std::logic_error("bench: no node " + name);
}
template <class Fold>
void proof(benchmark::State& state, Fold fold) {
  for (auto _ : state)
    for (int i = 0; i < sites; ++i) benchmark::DoNotOptimize(fold());
  state.counters["ns/site"] = tiny_bench::per_site(sites);
}
void proof_dyt_alpha(benchmark::State& state) {
  const tiny::graph& g = graph();
  const qfold::dyt_alpha_site site{qfold::int8_domain,
                                   g.rescale(find(g, "b0.dyt.x32")),
                                   g.rescale(find(g, "b0.dyt.alpha32")),
                                   g.int_constant(find(g, "b0.dyt.alpha"))->data[0],
                                   0,
                                   g.rescale(find(g, "b0.dyt.to_tanh")),
                                   qfold::int8_domain,
                                   g.table_values(find(g, "b0.dyt.tanh"))};
  std::array<std::int8_t, 256> out{};
  proof(state, [&] { return qfold::fold_dyt_alpha(site, out); });
}
void proof_dyt_affine(benchmark::State& state) {
  const tiny::graph& g = graph();
  const std::string n = "b0.affine";
  const id conv = find(g, n + ".conv");
  const auto w = g.int_constant(find(g, n + ".w"));
  const qfold::dyt_affine_site site{g.table_values(find(g, "b0.dyt.tanh")),
                                    0,
                                    g.rescale(find(g, n + ".t32")),
                                    g.rescale(find(g, n + ".gamma32")),
                                    g.int_constant(find(g, n + ".gamma"))->data,
                                    0,
                                    g.rescale(find(g, n + ".scaled")),
                                    g.rescale(find(g, n + ".scaled32")),
                                    g.rescale(find(g, n + ".beta32")),
                                    g.int_constant(find(g, n + ".beta"))->data,
                                    g.rescale(find(g, n + ".sum"))};
  const qfold::dyt_affine_conv c{w->data,
                                 w->shape,
                                 qfold::weight_layout::o_i_s,
                                 1,
                                 g.quantized_conv(conv)->weight_zero_points,
                                 qfold::dtype::int8,
                                 g.int_constant(find(g, n + ".b"))->data,
                                 0,
                                 false};
  proof(state, [&] {
    qfold::dyt_affine_plan p;
    if (qfold::fold_dyt_affine(site, c, p)) throw std::logic_error("bench: affine refused");
    return p.bias[0];
  });
}
void proof_scale_into_quantize(benchmark::State& state) {
  const auto in = qfold::make_qparams(qfold::dtype::int8, 0.05, 0);
  auto out = in;
  out.scale = in.scale * 0.125;
  proof(state, [&] {
    return qfold::prove_requantize_identity(qfold::scale_op::mul, 0.125f, in, out,
                                            qfold::conventions::executorch);
  });
}

// Baselines.
void baseline_graph_copy(benchmark::State& state) {
  for (auto _ : state) {
    tiny::graph g = graph();
    benchmark::DoNotOptimize(g);
  }
  state.counters["ns/site"] = tiny_bench::per_site(sites);
}
void baseline_tanh_table(benchmark::State& state) {
  const auto in = qfold::make_qparams(qfold::dtype::int8, 0.02, 0);
  const auto out = qfold::make_qparams(qfold::dtype::int8, 1.0 / 32, 0);
  proof(state, [&] { return blocks::tanh_table(in, out)[0]; });
}
}  // namespace

BENCHMARK(baseline_graph_copy)->Unit(benchmark::kMillisecond);
BENCHMARK(baseline_tanh_table)->Unit(benchmark::kMillisecond);
BENCHMARK(pass_dyt_alpha)->Unit(benchmark::kMillisecond);
BENCHMARK(proof_dyt_alpha)->Unit(benchmark::kMillisecond);
BENCHMARK(pass_dyt_affine)->Unit(benchmark::kMillisecond);
BENCHMARK(proof_dyt_affine)->Unit(benchmark::kMillisecond);
BENCHMARK(pass_scale_into_quantize)->Unit(benchmark::kMillisecond);
BENCHMARK(proof_scale_into_quantize)->Unit(benchmark::kMillisecond);
