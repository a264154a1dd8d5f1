// Exactness analysis: per-channel classification (classify_channels) over every int16 code x
// 1,024 channels and every int8 code x 4,096 channels, with and without RESCALE synthesis, against
// a straightforward scalar implementation written here, all in one run. The counter
// ns_per_code_channel is wall time / (codes x channels) ("850p" = 0.85 ns); channels_found counts
// the channels each side found a line or clamped line for (classification) or a RESCALE for
// (synthesis).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <qfold/exact/classify.hpp>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {
using i64 = std::int64_t;
using qfold::domain;

// --- data ---------------------------------------------------------------------------------------
struct dataset {
  domain d;
  std::size_t channels = 0;
  std::vector<i64> values;  // [channel][code]
  qfold::rescale_space space;
  [[nodiscard]] std::span<const i64> channel(std::size_t c) const {
    return std::span<const i64>(values).subspan(c * d.size(), d.size());
  }
};

// Per-channel lines y = a x + b; half of them through 0 (b = 0), which are also RESCALEs of the
// space (int32 output: zero point 0); a sixteenth the identity.
dataset affine_maps(domain d, std::size_t channels, qfold::int_type in) {
  dataset s{d, channels, {}, {.input_type = in, .output_type = qfold::int_type::i32}};
  std::mt19937_64 gen(1);
  s.values.reserve(d.size() * channels);
  for (std::size_t c = 0; c < channels; ++c) {
    const i64 a = c % 16 == 0 ? 1 : std::uniform_int_distribution<i64>(1, 3)(gen);
    const i64 b = c % 2 == 0 ? 0 : std::uniform_int_distribution<i64>(-1000, 1000)(gen);
    for (i64 x = d.lo; x <= d.hi; ++x) s.values.push_back(a * x + b);
  }
  return s;
}

// Per-channel RESCALEs (single rounding, scale 0.3..3, output clamped to the input's type), as
// a per-channel requantization produces them.
dataset rescale_maps(domain d, std::size_t channels, qfold::int_type t) {
  dataset s{d, channels, {}, {.input_type = t, .output_type = t}};
  std::mt19937_64 gen(2);
  s.values.reserve(d.size() * channels);
  const qfold::rescale_attributes a{.input_type = t, .output_type = t};
  for (std::size_t c = 0; c < channels; ++c) {
    const qfold::scale_factor f{
        static_cast<std::int32_t>(std::uniform_int_distribution<i64>(644245094, 2147483647)(gen)),
        static_cast<int>(std::uniform_int_distribution<int>(29, 31)(gen))};
    for (i64 x = d.lo; x <= d.hi; ++x) s.values.push_back(qfold::rescale_value(a, f, x));
  }
  return s;
}

const dataset& data(int which) {
  static const dataset sets[] = {
      affine_maps(qfold::int16_domain, 1024, qfold::int_type::i16),
      rescale_maps(qfold::int16_domain, 1024, qfold::int_type::i16),
      affine_maps(qfold::int8_domain, 4096, qfold::int_type::i8),
      rescale_maps(qfold::int8_domain, 4096, qfold::int_type::i8),
  };
  return sets[which];
}
enum : int { int16_affine, int16_rescale, int8_affine, int8_rescale };

// --- the straightforward scalar implementation ---------------------------------------------------
// Affine: recompute the line through the first two points at every code.
bool scalar_affine(std::span<const i64> y) {
  const i64 slope = y.size() > 1 ? y[1] - y[0] : 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] != y[0] + slope * static_cast<i64>(i)) return false;
  return true;
}

// Affine, or else a line clamped to the end values: the line through the first and last codes
// strictly between them, clamped, recomputed at every code.
bool scalar_line_or_clamped_line(std::span<const i64> y) {
  if (scalar_affine(y)) return true;
  const i64 lo = std::min(y.front(), y.back()), hi = std::max(y.front(), y.back());
  std::size_t first = 0, last = y.size() - 1;
  while (first < y.size() && (y[first] == lo || y[first] == hi)) ++first;
  while (last > first && (y[last] == lo || y[last] == hi)) --last;
  if (first >= y.size()) return false;
  const i64 slope = last > first ? (y[last] - y[first]) / static_cast<i64>(last - first) : 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] !=
        std::clamp(y[first] + slope * (static_cast<i64>(i) - static_cast<i64>(first)), lo, hi))
      return false;
  return true;
}

// One RESCALE by hand (apply_scale_32 with both roundings, output zero point, clamp).
i64 scalar_rescale(i64 v, i64 m, int s, bool dr, i64 ozp, qfold::int_range out) {
  i64 r = v * m + (i64{1} << (s - 1));
  if (dr && s > 31) r += v >= 0 ? i64{1} << 30 : -(i64{1} << 30);
  return std::clamp((r >> s) + ozp, out.lo, out.hi);
}

// Synthesis by search: for every shift 2..62 (from the smallest apply_scale_32 accepts) and both
// roundings, the multipliers within +-8 of the float estimate from the end points, each verified
// by evaluating it on every code (stopping at the first miss). Input zero point 0; output zero
// point y(0). Not exact: a RESCALE whose multiplier is off the estimate by more than 8 is missed.
std::optional<qfold::scale_factor> scalar_synthesize(domain d, std::span<const i64> y,
                                                     const qfold::rescale_space& space) {
  const qfold::int_range out = qfold::range_of(space.output_type, space.output_unsigned);
  if (!d.contains(0)) return std::nullopt;
  const i64 ozp = y[static_cast<std::size_t>(-d.lo)];
  if (space.output_type != qfold::int_type::i8 && ozp != 0) return std::nullopt;
  std::size_t first = 0, last = y.size() - 1;  // the unclamped part
  while (first < last && (y[first] == out.lo || y[first] == out.hi)) ++first;
  while (last > first && (y[last] == out.lo || y[last] == out.hi)) --last;
  const double slope =
      last > first ? static_cast<double>(y[last] - y[first]) / static_cast<double>(last - first)
                   : 0.0;
  int smin = 2;
  while ((i64{1} << (smin - 1)) < std::max(-d.lo, d.hi + 1)) ++smin;
  for (int s = smin; s <= 62; ++s)
    for (const bool dr : {false, true}) {
      const auto est = static_cast<i64>(std::llround(std::ldexp(slope, s)));
      for (i64 m = std::max<i64>(0, est - 8); m <= std::min<i64>(est + 8, 2147483647); ++m) {
        bool ok = true;
        for (std::size_t i = 0; i < y.size() && ok; ++i)
          ok = scalar_rescale(d.lo + static_cast<i64>(i), m, s, dr, ozp, out) == y[i];
        if (ok) return qfold::scale_factor{static_cast<std::int32_t>(m), s};
      }
    }
  return std::nullopt;
}

// --- benchmarks ----------------------------------------------------------------------------------
void counters(benchmark::State& state, const dataset& s, std::size_t channels, i64 found) {
  state.counters["ns_per_code_channel"] = benchmark::Counter(
      static_cast<double>(s.d.size() * channels),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["channels_found"] = static_cast<double>(found);
}

void qfold_classify(benchmark::State& state, int which) {
  const dataset& s = data(which);
  i64 found = 0;
  for (auto _ : state) {
    const auto c = qfold::classify_channels(s.d, s.values, s.channels);
    found = std::count_if(c.begin(), c.end(),
                          [](const auto& k) { return k.kind != qfold::map_kind::none; });
    benchmark::DoNotOptimize(found);
  }
  counters(state, s, s.channels, found);
}

void scalar_classify(benchmark::State& state, int which) {
  const dataset& s = data(which);
  i64 found = 0;
  for (auto _ : state) {
    found = 0;
    for (std::size_t c = 0; c < s.channels; ++c)
      found += scalar_line_or_clamped_line(s.channel(c)) ? 1 : 0;
    benchmark::DoNotOptimize(found);
  }
  counters(state, s, s.channels, found);
}

// Synthesis on the first `channels` channels (int16: 64, so that the windowed search, which takes
// ~70 ns per code-channel on RESCALE maps, stays short): through classify_channels (the widest
// kernels this CPU has), or with the kernels of `isa` forced (what a CPU that has only that ISA
// would run; skipped on a CPU without it).
void qfold_synthesize(benchmark::State& state, int which, std::size_t channels,
                      std::optional<qfold::detail::vector_isa> isa) {
  if (isa && !qfold::detail::cpu_runs(*isa)) {
    state.SkipWithError("this CPU does not run that ISA");
    return;
  }
  const dataset& s = data(which);
  const std::span<const i64> values = std::span<const i64>(s.values).first(channels * s.d.size());
  i64 found = 0;
  for (auto _ : state) {
    const auto c =
        isa ? qfold::detail::classify_channels_with(s.d, values, channels, &s.space, *isa)
            : qfold::classify_channels(s.d, values, channels, &s.space);
    found = std::count_if(c.begin(), c.end(), [](const auto& k) { return k.rescale.has_value(); });
    benchmark::DoNotOptimize(found);
  }
  counters(state, s, channels, found);
}

void scalar_synthesize_all(benchmark::State& state, int which, std::size_t channels) {
  const dataset& s = data(which);
  i64 found = 0;
  for (auto _ : state) {
    found = 0;
    for (std::size_t c = 0; c < channels; ++c) {
      const bool affine = scalar_line_or_clamped_line(s.channel(c));
      const auto r = scalar_synthesize(s.d, s.channel(c), s.space);
      benchmark::DoNotOptimize(affine);
      found += r ? 1 : 0;
    }
    benchmark::DoNotOptimize(found);
  }
  counters(state, s, channels, found);
}
}  // namespace

// Classification only (no space): the 1 ns per code-channel target.
BENCHMARK_CAPTURE(qfold_classify, int16_x1024_affine, int16_affine)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(scalar_classify, int16_x1024_affine, int16_affine)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(qfold_classify, int16_x1024_rescale, int16_rescale)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(scalar_classify, int16_x1024_rescale, int16_rescale)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(qfold_classify, int8_x4096_affine, int8_affine)
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(scalar_classify, int8_x4096_affine, int8_affine)
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(qfold_classify, int8_x4096_rescale, int8_rescale)
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(scalar_classify, int8_x4096_rescale, int8_rescale)
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);
// With RESCALE synthesis (exact, smallest shift) against the windowed search, then with each
// kernel forced (names qfold_synthesize_isa/CASE/ISA).
const bool synthesis_registered = [] {
  using qfold::detail::vector_isa;
  struct bench_case {
    const char* name;
    int which;
    std::size_t channels;
  };
  constexpr bench_case cases[] = {{"int16_x64_affine", int16_affine, 64},
                                  {"int16_x64_rescale", int16_rescale, 64},
                                  {"int8_x4096_affine", int8_affine, 4096},
                                  {"int8_x4096_rescale", int8_rescale, 4096}};
  constexpr std::pair<vector_isa, const char*> isas[] = {{vector_isa::scalar, "scalar"},
                                                         {vector_isa::baseline, "baseline"},
                                                         {vector_isa::avx2, "avx2"},
                                                         {vector_isa::avx512, "avx512"}};
  const auto once = [](benchmark::internal::Benchmark* b) {
    b->Iterations(1)->Unit(benchmark::kMillisecond);
  };
  for (const auto& c : cases) {
    once(benchmark::RegisterBenchmark((std::string("qfold_synthesize/") + c.name).c_str(),
                                      qfold_synthesize, c.which, c.channels, std::nullopt));
    once(benchmark::RegisterBenchmark((std::string("scalar_synthesize_all/") + c.name).c_str(),
                                      scalar_synthesize_all, c.which, c.channels));
  }
  for (const auto& c : cases)
    for (const auto& [isa, isa_name] : isas)
      once(benchmark::RegisterBenchmark(
          (std::string("qfold_synthesize_isa/") + c.name + "/" + isa_name).c_str(),
          qfold_synthesize, c.which, c.channels, std::optional<vector_isa>(isa)));
  return true;
}();
