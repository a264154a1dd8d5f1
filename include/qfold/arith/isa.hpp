// Which vector instruction set the running CPU has, asked once: the run-time choice between the
// per-ISA copies of a kernel ([[gnu::target]] functions, no -march needed) and the baseline.
#pragma once

#include <cstdint>

namespace qfold::detail {

// `scalar`: plain loops (what constant evaluation runs); `baseline`: two-lane vector extensions
// (SSE2 on x86-64); `avx2`, `avx512`: the [[gnu::target]] copies (AVX-512F).
enum class vector_isa : std::uint8_t { scalar, baseline, avx2, avx512 };

#if defined(__GNUC__) && defined(__x86_64__)
#define QFOLD_DETAIL_X86_TARGETS 1
#endif

// The widest of them this CPU runs (checked once per program).
[[nodiscard]] inline vector_isa cpu_vector_isa() noexcept {
#if defined(QFOLD_DETAIL_X86_TARGETS)
  static const vector_isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return vector_isa::avx512;
    return __builtin_cpu_supports("avx2") ? vector_isa::avx2 : vector_isa::baseline;
  }();
  return isa;
#else
  return vector_isa::baseline;
#endif
}

// Whether this CPU runs the kernels of `isa` (each ISA's CPUs run the narrower ones: every
// AVX-512F CPU has AVX2). Tests and benchmarks force each one; the library asks cpu_vector_isa.
[[nodiscard]] inline bool cpu_runs(vector_isa isa) noexcept { return isa <= cpu_vector_isa(); }

}  // namespace qfold::detail
