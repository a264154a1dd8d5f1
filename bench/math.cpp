// qfold::math against <cmath> (glibc) over 64k-element arrays, float and double, in one run.
// Items/s are function evaluations per second; bench/README.md turns them into ratios.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <qfold/math/functions.hpp>
#include <random>
#include <vector>

namespace {
constexpr std::size_t n = 1 << 16;

// Inputs where each function does real work (no saturation), e.g. int8 codes times a scale.
template <class T>
std::vector<T> inputs(double lo, double hi) {
  std::vector<T> v(n);
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> d(lo, hi);
  for (auto& x : v) x = static_cast<T>(d(gen));
  return v;
}

template <class T, class F>
void run(benchmark::State& state, F f, double lo, double hi) {
  const std::vector<T> in = inputs<T>(lo, hi);
  std::vector<T> out(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f(in[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

#define QFOLD_BENCH_PAIR(name, qexpr, stdexpr, lo, hi) \
  void name##_qfold_float(benchmark::State& s) {       \
    run<float>(                                        \
        s, [](float x) { return qexpr; }, lo, hi);     \
  }                                                    \
  void name##_std_float(benchmark::State& s) {         \
    run<float>(                                        \
        s, [](float x) { return stdexpr; }, lo, hi);   \
  }                                                    \
  void name##_qfold_double(benchmark::State& s) {      \
    run<double>(                                       \
        s, [](double x) { return qexpr; }, lo, hi);    \
  }                                                    \
  void name##_std_double(benchmark::State& s) {        \
    run<double>(                                       \
        s, [](double x) { return stdexpr; }, lo, hi);  \
  }                                                    \
  BENCHMARK(name##_qfold_float);                       \
  BENCHMARK(name##_std_float);                         \
  BENCHMARK(name##_qfold_double);                      \
  BENCHMARK(name##_std_double);

namespace qm = qfold::math;
QFOLD_BENCH_PAIR(exp, qm::exp(x), std::exp(x), -10, 10)
QFOLD_BENCH_PAIR(expm1, qm::expm1(x), std::expm1(x), -2, 2)
QFOLD_BENCH_PAIR(log, qm::log(x), std::log(x), 1e-3, 1e3)
QFOLD_BENCH_PAIR(log1p, qm::log1p(x), std::log1p(x), -0.5, 2)
QFOLD_BENCH_PAIR(tanh, qm::tanh(x), std::tanh(x), -4, 4)
// std: the naive composition a user would write (two roundings, not correctly rounded).
QFOLD_BENCH_PAIR(sigmoid, qm::sigmoid(x), 1 / (1 + std::exp(-x)), -8, 8)
QFOLD_BENCH_PAIR(erf, qm::erf(x), std::erf(x), -4, 4)
QFOLD_BENCH_PAIR(erfc, qm::erfc(x), std::erfc(x), -2, 8)
QFOLD_BENCH_PAIR(sqrt, qm::sqrt(x), std::sqrt(x), 1e-3, 1e3)
QFOLD_BENCH_PAIR(rsqrt, qm::rsqrt(x), 1 / std::sqrt(x), 1e-3, 1e3)
QFOLD_BENCH_PAIR(sin, qm::sin(x), std::sin(x), -10, 10)
QFOLD_BENCH_PAIR(cos, qm::cos(x), std::cos(x), -10, 10)
QFOLD_BENCH_PAIR(atan, qm::atan(x), std::atan(x), -10, 10)
}  // namespace
