// RESCALE over 1M-element arrays: one checked call per element (rescale_value) against the batch
// API (rescale_array), with a hand-written unchecked loop as the floor, all in the same run.
// Items/s in the output are elements per second; bench/README.md turns them into ratios.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <qfold/qfold.hpp>
#include <random>
#include <span>
#include <vector>

namespace {
constexpr std::size_t n = 1 << 20;

template <class In>
std::vector<In> random_input(std::int64_t lo, std::int64_t hi) {
  std::mt19937_64 gen(42);
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  std::vector<In> v(n);
  for (auto& x : v) x = static_cast<In>(dist(gen));
  return v;
}

struct scenario {
  qfold::rescale_attributes attrs;
  std::vector<qfold::scale_factor> scales;
  std::int64_t lo, hi;  // input value range
};

template <class In, class Out>
scenario make_scenario();
template <>
scenario make_scenario<std::int8_t, std::int8_t>() {  // int8 -> int8, per tensor, zero points
  return {{.input_zp = -3, .output_zp = 7}, {{1518500250, 31}}, -128, 127};
}
template <>
scenario make_scenario<std::int16_t, std::int16_t>() {  // int16 -> int16, per tensor
  return {{.input_type = qfold::int_type::i16, .output_type = qfold::int_type::i16},
          {{1518500250, 31}},
          -32768,
          32767};
}
template <>
scenario make_scenario<std::int32_t, std::int8_t>() {  // int32 accumulators -> int8, per tensor
  return {{.input_type = qfold::int_type::i32, .output_zp = -5},
          {{1582621291, 39}},
          -(1 << 20),
          1 << 20};
}

template <class In, class Out>
void setup(benchmark::State& state, const scenario& s) {
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.counters["elements_per_ns"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
  (void)s;
}

template <class In, class Out>
void per_element_calls(benchmark::State& state) {
  const scenario s = make_scenario<In, Out>();
  const auto in = random_input<In>(s.lo, s.hi);
  std::vector<Out> out(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(qfold::rescale_value(s.attrs, s.scales[0], in[i]));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setup<In, Out>(state, s);
}

template <class In, class Out>
void batch_api(benchmark::State& state) {
  const scenario s = make_scenario<In, Out>();
  const auto in = random_input<In>(s.lo, s.hi);
  std::vector<Out> out(n);
  for (auto _ : state) {
    auto r = qfold::rescale_array<In, Out>(s.attrs, s.scales, in, out);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setup<In, Out>(state, s);
}

// What a user would write by hand with no checks at all (single rounding, no double round).
template <class In, class Out>
void handwritten_unchecked(benchmark::State& state) {
  const scenario s = make_scenario<In, Out>();
  const auto in = random_input<In>(s.lo, s.hi);
  std::vector<Out> out(n);
  const std::int64_t m = s.scales[0].multiplier, izp = s.attrs.input_zp, ozp = s.attrs.output_zp;
  const int sh = s.scales[0].shift;
  const std::int64_t rnd = std::int64_t{1} << (sh - 1);
  const auto range = s.attrs.output_range();
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t r = (((in[i] - izp) * m + rnd) >> sh) + ozp;
      out[i] = static_cast<Out>(r < range.lo ? range.lo : (r > range.hi ? range.hi : r));
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setup<In, Out>(state, s);
}

// Per-channel int32 -> int8 with 64 channels (a conv output), batch API only.
void per_channel_batch(benchmark::State& state) {
  const std::size_t channels = 64;
  std::vector<qfold::scale_factor> scales(channels);
  for (std::size_t c = 0; c < channels; ++c)
    scales[c] = {static_cast<std::int32_t>(1100000000 + 7000000 * c), 38};
  const qfold::rescale_attributes a{.input_type = qfold::int_type::i32, .per_channel = true};
  const auto in = random_input<std::int32_t>(-(1 << 20), 1 << 20);
  std::vector<std::int8_t> out(n);
  for (auto _ : state) {
    auto r = qfold::rescale_array<std::int32_t, std::int8_t>(a, scales, in, out);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setup<std::int32_t, std::int8_t>(state, {});
}
}  // namespace

BENCHMARK(per_element_calls<std::int8_t, std::int8_t>);
BENCHMARK(batch_api<std::int8_t, std::int8_t>);
BENCHMARK(handwritten_unchecked<std::int8_t, std::int8_t>);
BENCHMARK(per_element_calls<std::int16_t, std::int16_t>);
BENCHMARK(batch_api<std::int16_t, std::int16_t>);
BENCHMARK(handwritten_unchecked<std::int16_t, std::int16_t>);
BENCHMARK(per_element_calls<std::int32_t, std::int8_t>);
BENCHMARK(batch_api<std::int32_t, std::int8_t>);
BENCHMARK(handwritten_unchecked<std::int32_t, std::int8_t>);
BENCHMARK(per_channel_batch);
