// Table generation and composition: qfold's correctly rounded constexpr math against the same
// generator running the C library's functions (std::), int8 and int16 tables, and a collapsed
// chain against evaluating the chain per element, all in one run.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <qfold/qfold.hpp>
#include <random>
#include <vector>

namespace {
using qfold::dtype;
using qfold::make_qparams;
const qfold::qparams in8 = make_qparams(dtype::int8, 0.0234375, -3),
                     out8 = make_qparams(dtype::int8, 1.0 / 128, 0);
const qfold::qparams in16 = make_qparams(dtype::int16, 1.0 / 4096, 0),
                     out16 = make_qparams(dtype::int16, 1.0 / 32768, 0);

const auto std_tanh = [](float x) { return std::tanh(x); };
const auto std_exp = [](float x) { return std::exp(x); };

template <class F>
void int8_table(benchmark::State& state, F f) {
  for (auto _ : state) {
    auto t =
        qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::executorch, f, in8, out8);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 256);
}
template <class F>
void executorch_int16(benchmark::State& state, F f) {
  for (auto _ : state) {
    auto t = qfold::make_executorch_int16_table(f, in16, out16);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 513);
}
template <class F>
void tflite_int16(benchmark::State& state, F f) {
  for (auto _ : state) {
    auto t = qfold::make_tflite_int16_table<float>(f, in16, out16);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 513 * 3);
}

// A DyT-like chain: int8 -> int32 rescale, MUL by a constant, back to int8, then a tanh table.
std::vector<qfold::chain::step> chain() {
  const auto t = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::executorch,
                                                              qfold::fn::tanh, in8, out8);
  return {
      qfold::chain::rescale{{.output_type = qfold::int_type::i32, .input_zp = -3}, {1 << 30, 30}},
      qfold::chain::mul{1234, 0},
      qfold::chain::rescale{{.input_type = qfold::int_type::i32}, {1518500250, 41}},
      qfold::chain::table::from(*t)};
}

void collapse_chain(benchmark::State& state) {
  const auto steps = chain();
  for (auto _ : state) {
    auto t = qfold::chain::collapse<std::int8_t, std::int8_t>(steps);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 256);
}

std::vector<std::int8_t> activations() {
  std::mt19937 gen(1);
  std::vector<std::int8_t> v(1 << 20);
  for (auto& x : v)
    x = static_cast<std::int8_t>(std::uniform_int_distribution<int>(-128, 127)(gen));
  return v;
}

void chain_per_element(benchmark::State& state) {
  const auto steps = chain();
  const auto in = activations();
  std::vector<std::int8_t> out(in.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < in.size(); ++i)
      out[i] = static_cast<std::int8_t>(*qfold::chain::evaluate(steps, in[i]));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(in.size()));
}

void chain_collapsed_table(benchmark::State& state) {
  const auto steps = chain();
  const auto in = activations();
  std::vector<std::int8_t> out(in.size());
  for (auto _ : state) {
    const auto t = qfold::chain::collapse<std::int8_t, std::int8_t>(steps);  // included in the time
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = (*t)(in[i]);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(in.size()));
}
}  // namespace

BENCHMARK_CAPTURE(int8_table, tanh_qfold, qfold::fn::tanh);
BENCHMARK_CAPTURE(int8_table, tanh_std, std_tanh);
BENCHMARK_CAPTURE(int8_table, exp_qfold, qfold::fn::exp);
BENCHMARK_CAPTURE(int8_table, exp_std, std_exp);
BENCHMARK_CAPTURE(executorch_int16, tanh_qfold, qfold::fn::tanh);
BENCHMARK_CAPTURE(executorch_int16, tanh_std, std_tanh);
BENCHMARK_CAPTURE(tflite_int16, tanh_qfold, qfold::fn::tanh);
BENCHMARK_CAPTURE(tflite_int16, tanh_std, std_tanh);
BENCHMARK(collapse_chain);
BENCHMARK(chain_per_element);
BENCHMARK(chain_collapsed_table);
