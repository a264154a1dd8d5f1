// Inference batch norm folded into the preceding convolution (1d/2d/3d, grouped, depthwise,
// transposed including grouped transposed) or linear layer, on plain spans: PyTorch's operation
// order in the weights' own type, so float32 results are bit-identical to torch.nn.utils.fusion
// wherever torch is right, and correct where it is not (grouped transposed convolution).
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "qfold/arith/isa.hpp"
#include "qfold/detail/ranges.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/math/float_bits.hpp"
#include "qfold/math/sqrt.hpp"

namespace qfold {

// Axis order of a weight tensor. O = output channels, I = input channels (per group), S = spatial.
enum class weight_layout : std::uint8_t {
  o_i_s,  // OIHW: PyTorch/ONNX Conv (out, in/groups, k...), and Linear (out, in)
  o_s_i,  // OHWI: TFLite and TOSA CONV2D
  s_i_o,  // HWIO: TensorFlow (k..., in/groups, out)
  i_o_s,  // IOHW: PyTorch/ONNX ConvTranspose (in, out/groups, k...)
  // HWCM: TOSA DEPTHWISE_CONV2D (k..., C, M), output channel c * M + m, groups = C (one input
  // channel per group). Element order is HWIO's with O = C * M, so the channel is i % (C * M).
  s_c_m,
};

// Which of torch's two folds the weights take; there is no default, because the two round the
// bias differently (a forgotten choice would be 1 ulp off torch's bias, silently).
enum class weights_kind : std::uint8_t {
  conv,    // fuse_conv_bn_weights: bias ((b - mean) * rsqrt) * gamma + beta
  linear,  // fuse_linear_bn_weights: bias (b - mean) * (gamma * rsqrt) + beta
};

// `size` values of T stored in T's object representation (host byte order) at any address: a
// model file's tensor data read where it lies, which may not be aligned for T (a T* there would
// be undefined behaviour, so the values are read byte-wise).
template <std::floating_point T>
struct unaligned_values {
  const std::byte* bytes = nullptr;
  std::size_t size = 0;
  [[nodiscard]] constexpr T operator[](std::size_t i) const noexcept {
    if (!std::is_constant_evaluated()) {
      T v;
      __builtin_memcpy(&v, bytes + i * sizeof(T), sizeof(T));
      return v;
    }
    std::array<std::byte, sizeof(T)> b{};
    for (std::size_t k = 0; k < sizeof(T); ++k) b[k] = bytes[i * sizeof(T) + k];
    return std::bit_cast<T>(b);
  }
};

template <std::floating_point T>
struct weights_view {
  std::span<const T> values;  // empty when the weights are given as `unaligned` instead
  unaligned_values<T> unaligned{};
  std::span<const std::int64_t> shape;  // in `layout` order
  weight_layout layout = weight_layout::o_i_s;
  std::int64_t groups = 1;
  weights_kind kind;

  constexpr weights_view(std::span<const T> values_, std::span<const std::int64_t> shape_,
                         weight_layout layout_, std::int64_t groups_, weights_kind kind_) noexcept
      : values(values_), shape(shape_), layout(layout_), groups(groups_), kind(kind_) {}
  // The weights read in place from bytes at any address (e.g. a model file's raw tensor data).
  constexpr weights_view(unaligned_values<T> unaligned_, std::span<const std::int64_t> shape_,
                         weight_layout layout_, std::int64_t groups_, weights_kind kind_) noexcept
      : unaligned(unaligned_), shape(shape_), layout(layout_), groups(groups_), kind(kind_) {}
  [[nodiscard]] constexpr std::size_t size() const noexcept {
    return values.empty() ? unaligned.size : values.size();
  }
  // The spelling from before weights_kind, `linear` as a bool (also a required argument).
  template <std::same_as<bool> Bool>
  constexpr weights_view(std::span<const T> values_, std::span<const std::int64_t> shape_,
                         weight_layout layout_, std::int64_t groups_, Bool linear) noexcept
      : weights_view(values_, shape_, layout_, groups_,
                     linear ? weights_kind::linear : weights_kind::conv) {}
};

namespace detail {
template <class R>
concept float_data = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::floating_point<std::remove_cv_t<std::ranges::range_value_t<R>>> &&
    (std::is_lvalue_reference_v<R> || std::ranges::borrowed_range<R>);
template <class R>
using float_data_t = std::remove_cv_t<std::ranges::range_value_t<R>>;
}  // namespace detail

// weights_view{vector, shape, layout, groups, kind} deduces T from the data.
template <class R, class... Rest>
requires detail::float_data<R> weights_view(R&&, Rest&&...)
->weights_view<detail::float_data_t<R>>;

// A convolution's weights (PyTorch Conv: o_i_s; ConvTranspose: i_o_s), T from the data.
template <class R>
requires detail::float_data<R>
[[nodiscard]] constexpr auto conv_weights(R&& values, std::span<const std::int64_t> shape,
                                          weight_layout layout = weight_layout::o_i_s,
                                          std::int64_t groups = 1) noexcept {
  return weights_view<detail::float_data_t<R>>(std::span<const detail::float_data_t<R>>(values),
                                               shape, layout, groups, weights_kind::conv);
}
// A linear layer's weights (out, in), T from the data.
template <class R>
requires detail::float_data<R>
[[nodiscard]] constexpr auto linear_weights(R&& values,
                                            std::span<const std::int64_t> shape) noexcept {
  return weights_view<detail::float_data_t<R>>(std::span<const detail::float_data_t<R>>(values),
                                               shape, weight_layout::o_i_s, 1,
                                               weights_kind::linear);
}

// A batch norm's inference parameters, one value per output channel each (none may be empty: an
// absent gamma or beta is passed as ones or zeros, never inferred from an empty span).
template <std::floating_point T>
struct batch_norm_params {
  std::span<const T> mean, variance, gamma, beta;
  T epsilon = static_cast<T>(1e-5);
  bool training = false;
};
// batch_norm_params{mean, var, gamma, beta} deduces T from the data.
template <class R, class... Rest>
requires detail::float_data<R> batch_norm_params(R&&, Rest&&...)
->batch_norm_params<detail::float_data_t<R>>;

namespace detail {
// x, rounded to T, as a value no later operation can be fused with. Bit-identity with torch needs
// each product rounded before the addition that follows, but GCC in its gnu modes (CMake's
// default -std=gnu++20) contracts a * b + c into an FMA even across statements and through a
// std::bit_cast round trip, and clang at -ffp-contract=fast ignores `#pragma clang fp
// contract(off)` and __arithmetic_fence. An empty asm statement that takes and gives back the
// value in a register is opaque to both, costs no instruction, and leaves constant evaluation
// alone (which never contracts). Checked with objdump on g++ 12 and clang++ 14 at -O2
// -march=native -ffp-contract=fast; the test fold_batch_norm.contraction builds the golden test so.
template <std::floating_point T>
[[nodiscard]] constexpr T rounded(T x) noexcept {
#if defined(__GNUC__)
  if (!std::is_constant_evaluated()) {
#if defined(__SSE2__) || defined(__aarch64__)
    if constexpr (sizeof(T) <= sizeof(double)) {
#if defined(__SSE2__)
      asm("" : "+x"(x));
#else
      asm("" : "+w"(x));
#endif
    } else {
      asm("" : "+m"(x));
    }
#else
    asm("" : "+m"(x));
#endif
  }
#endif
  return x;
}

// Where a fold reads its weights: aligned values, or (values null) their unaligned bytes.
template <std::floating_point T>
struct weight_source {
  const T* values = nullptr;
  const std::byte* bytes = nullptr;
  [[nodiscard]] constexpr T operator[](std::size_t i) const noexcept {
    return values != nullptr ? values[i] : unaligned_values<T>{bytes, 0}[i];
  }
  [[nodiscard]] constexpr weight_source operator+(std::size_t i) const noexcept {
    return values != nullptr ? weight_source{values + i, nullptr}
                             : weight_source{nullptr, bytes + i * sizeof(T)};
  }
  [[nodiscard]] const void* address() const noexcept {
    return values != nullptr ? static_cast<const void*>(values) : bytes;
  }
};

// out[i] = in[i] * s for n elements (`in` a T* or a weight_source<T>); true when every result is
// finite. Fixed-size blocks and an integer test of the exponent bits let compilers vectorise it
// at -O2 (a float reduction would not be), so the fold runs at memory speed.
template <std::floating_point T, class Source>
[[nodiscard]] constexpr bool scale_into(Source in, T* out, std::size_t n, T s) noexcept {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr bits exponent =
      std::bit_cast<bits>(std::numeric_limits<T>::infinity());  // all exponent bits
  constexpr std::size_t block = 16;
  bits non_finite = 0;
  std::size_t i = 0;
  for (; i + block <= n; i += block) {  // through a local block: no aliasing question to ask
    std::array<T, block> v{};
    for (std::size_t k = 0; k < block; ++k) v[k] = in[i + k] * s;
    for (std::size_t k = 0; k < block; ++k)
      non_finite |= static_cast<bits>((std::bit_cast<bits>(v[k]) & exponent) == exponent);
    for (std::size_t k = 0; k < block; ++k) out[i + k] = v[k];
  }
  for (; i < n; ++i) {
    const T v = in[i] * s;
    out[i] = v;
    non_finite |= static_cast<bits>((std::bit_cast<bits>(v) & exponent) == exponent);
  }
  return non_finite == 0;
}

// Rows at run time, except float rows on x86-64 (the vector kernels below), go through scale_row,
// which GCC compiles twice on x86-64 ELF targets (function multiversioning): an AVX2 clone picked
// at load time where the CPU has AVX2, and the baseline. Users need no -march flag. Clang 14
// mis-links multiversioned inline functions across translation units, so it gets the baseline.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
[[gnu::target_clones("avx2", "default")]]
#endif
inline bool
scale_row(const float* in, float* out, std::size_t n, float s) noexcept {
  return scale_into(in, out, n, s);
}
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
[[gnu::target_clones("avx2", "default")]]
#endif
inline bool
scale_row(const double* in, double* out, std::size_t n, double s) noexcept {
  return scale_into(in, out, n, s);
}

// A site whose weights are larger than this may write its folded weights with non-temporal
// stores: they are not read again soon, and a plain store first reads every output line into the
// cache. Whether that pays depends on the CPU (streaming_pays).
inline constexpr std::size_t streaming_bytes = std::size_t{1} << 20;

#if defined(QFOLD_DETAIL_X86_TARGETS)
using f32x16 = float __attribute__((vector_size(64)));
using f32x8 = float __attribute__((vector_size(32)));
using f32x4 = float __attribute__((vector_size(16)));
using i32x16 = std::int32_t __attribute__((vector_size(64)));
using i32x8 = std::int32_t __attribute__((vector_size(32)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));

// scale_into for float in explicit vectors V (the same products: only the stores differ), each
// full vector of the output stored aligned, non-temporally when `streaming`. The input is read
// byte-wise, so it may have any alignment (weight_source::address()). Inlined into the target
// functions below, which compile it for their ISA; the non-temporal store is an asm statement on
// GCC (it has no generic builtin for it).
template <class V, bool streaming>
[[gnu::always_inline]] inline bool vector_scale(const void* from, float* out, std::size_t n,
                                                float s) noexcept {
  constexpr std::size_t lanes = sizeof(V) / sizeof(float);
  constexpr std::uint32_t exponent = 0x7f800000u;
  const auto* in = static_cast<const unsigned char*>(from);
  std::uint32_t non_finite = 0;
  std::size_t i = 0;
  const auto one = [&](std::size_t k) {
    float x;
    __builtin_memcpy(&x, in + k * sizeof(float), sizeof(float));
    const float v = x * s;
    out[k] = v;
    non_finite |=
        static_cast<std::uint32_t>((std::bit_cast<std::uint32_t>(v) & exponent) == exponent);
  };
  for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % sizeof(V) != 0; ++i) one(i);
  // The non-finite flags gather in a vector, reduced once per row; reduced per vector they were a
  // dependency chain that made the AVX2 kernel slower than SSE.
  using I = std::conditional_t<lanes == 16, i32x16, std::conditional_t<lanes == 8, i32x8, i32x4>>;
  I flags{};
  for (; i + lanes <= n; i += lanes) {
    V x;
    __builtin_memcpy(&x, in + i * sizeof(float), sizeof(V));
    x *= s;
    I b;
    __builtin_memcpy(&b, &x, sizeof(V));
    flags |= (b & static_cast<std::int32_t>(exponent)) == static_cast<std::int32_t>(exponent);
    if constexpr (!streaming) __builtin_memcpy(out + i, &x, sizeof(V));
#if defined(__clang__)
    else
      __builtin_nontemporal_store(x, reinterpret_cast<V*>(out + i));
#else
    else if constexpr (lanes == 4)  // SSE, part of every x86-64 CPU
      asm("movntps %1, %0" : "=m"(*reinterpret_cast<V*>(out + i)) : "x"(x));
    else
      asm("vmovntps %1, %0" : "=m"(*reinterpret_cast<V*>(out + i)) : "v"(x));
#endif
  }
  for (std::size_t k = 0; k < lanes; ++k) non_finite |= static_cast<std::uint32_t>(flags[k] != 0);
  for (; i < n; ++i) one(i);
  return non_finite == 0;  // after streamed rows the caller fences once (end_streaming)
}
template <bool streaming>
[[gnu::target("avx512f")]] inline bool scale_avx512(const void* in, float* out, std::size_t n,
                                                    float s) noexcept {
  return vector_scale<f32x16, streaming>(in, out, n, s);
}
template <bool streaming>
[[gnu::target("avx2")]] inline bool scale_avx2(const void* in, float* out, std::size_t n,
                                               float s) noexcept {
  return vector_scale<f32x8, streaming>(in, out, n, s);
}
template <bool streaming>
inline bool scale_sse(const void* in, float* out, std::size_t n, float s) noexcept {
  return vector_scale<f32x4, streaming>(in, out, n, s);
}
using row_kernel = bool (*)(const void*, float*, std::size_t, float) noexcept;
// Every row kernel this CPU can run, widest ISA first, the streaming copy before the plain one
// (tests and benchmarks compare them all). SSE is part of x86-64 itself, so four always run.
struct row_kernels {
  std::array<row_kernel, 6> kernels{};
  std::array<const char*, 6> names{};
  std::array<bool, 6> streaming{};
  std::size_t size = 0;
};
inline row_kernels available_row_kernels() noexcept {
  row_kernels r;
  const auto add = [&](row_kernel k, const char* name, bool streaming) {
    r.kernels[r.size] = k;
    r.names[r.size] = name;
    r.streaming[r.size++] = streaming;
  };
  const vector_isa isa = cpu_vector_isa();
  if (isa >= vector_isa::avx512) {
    add(&scale_avx512<true>, "avx512f streaming", true);
    add(&scale_avx512<false>, "avx512f", false);
  }
  if (isa >= vector_isa::avx2) {
    add(&scale_avx2<true>, "avx2 streaming", true);
    add(&scale_avx2<false>, "avx2", false);
  }
  add(&scale_sse<true>, "sse streaming", true);
  add(&scale_sse<false>, "sse", false);
  return r;
}
// Non-temporal stores pay on the Intel Xeons measured (ResNet-50's weights folded at 1.03-1.11x
// memcpy, 0.65-0.69x with plain stores) and on AMD Zen 5 (EPYC family 1Ah: AVX-512 rows 1.12x
// memcpy streaming, 0.83x plain), and cost on AMD Zen 1 (EPYC family 17h: 0.55-0.6x memcpy,
// plain 0.93x), so they are used everywhere but on AMD family 17h, Zen 1 to Zen 2 (bench/README.md,
// "Batch norm").
inline bool streaming_pays() noexcept {
  __builtin_cpu_init();
  return !__builtin_cpu_is("amdfam17h");
}
// The kernel for rows of a site of at least streaming_bytes (`large`) or smaller (chosen once).
inline row_kernel row_kernel_for(bool large) noexcept {
  static const std::array<row_kernel, 2> chosen = [] {
    const row_kernels all = available_row_kernels();
    std::size_t plain = 0;
    while (all.streaming[plain]) ++plain;  // the widest plain kernel
    return std::array<row_kernel, 2>{all.kernels[plain],
                                     streaming_pays() ? all.kernels[0] : all.kernels[plain]};
  }();
  return chosen[large ? 1 : 0];
}
#endif

// After a site's streamed rows: orders their stores before whatever follows (once per site: a
// fence per row stalls on the write-combining buffers).
inline void end_streaming() noexcept {
#if defined(QFOLD_DETAIL_X86_TARGETS)
  __builtin_ia32_sfence();
#endif
}

// out = in * s for a row; `large`: the row belongs to a site of at least streaming_bytes.
template <std::floating_point T>
[[nodiscard]] constexpr bool scale(weight_source<T> in, T* out, std::size_t n, T s,
                                   bool large = false) noexcept {
  if (std::is_constant_evaluated()) return scale_into(in, out, n, s);
#if defined(QFOLD_DETAIL_X86_TARGETS)
  if constexpr (std::is_same_v<T, float>) return row_kernel_for(large)(in.address(), out, n, s);
#endif
  (void)large;
  return in.values != nullptr ? scale_row(in.values, out, n, s) : scale_into(in, out, n, s);
}

struct channel_geometry {
  std::int64_t out_channels = 0;
  std::int64_t block = 1;  // contiguous elements per channel run (o_i_s, o_s_i)
  std::int64_t per_group_out = 0, per_group_in = 0, kernel = 1;  // i_o_s
};

// The product of dims, each positive, or why not: a dim <= 0 or a product beyond the largest
// span (checked before each multiplication, so nothing wraps).
[[nodiscard]] constexpr std::optional<rejection> checked_element_count(
    std::span<const std::int64_t> shape, std::size_t& count, std::string_view not_positive,
    std::string_view too_large) {
  constexpr auto most = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d <= 0) return rejection{reason::invalid_shape, not_positive};
    const auto u = static_cast<std::uint64_t>(d);
    if (n > most / u) return rejection{reason::invalid_shape, too_large};
    n *= u;
  }
  count = static_cast<std::size_t>(n);
  return std::nullopt;
}

template <std::floating_point T>
[[nodiscard]] constexpr std::optional<rejection> geometry(const weights_view<T>& w,
                                                          channel_geometry& g) {
  if (w.shape.size() < 2)
    return rejection{reason::ambiguous_axis, "batch norm: weight rank below 2"};
  std::size_t count = 0;
  if (auto r = checked_element_count(w.shape, count, "batch norm: weight dimension not positive",
                                     "batch norm: the weight dimensions' product overflows"))
    return r;
  // Every offset below is < count, and every channel count a product of some of the dims.
  if (!w.values.empty() && w.unaligned.size != 0)
    return rejection{reason::invalid_shape, "batch norm: weights given both as values and bytes"};
  if (count != w.size() || (w.values.empty() && w.unaligned.bytes == nullptr))
    return rejection{reason::invalid_shape, "batch norm: weight shape does not match its data"};
  const auto total = static_cast<std::int64_t>(count);
  if (w.groups < 1) return rejection{reason::ambiguous_axis, "batch norm: groups below 1"};
  switch (w.layout) {
    case weight_layout::o_i_s:
    case weight_layout::o_s_i:
      g.out_channels = w.shape[0];
      g.block = total / g.out_channels;
      if (g.out_channels % w.groups != 0)
        return rejection{reason::ambiguous_axis,
                         "batch norm: output channels not divisible by groups"};
      return std::nullopt;
    case weight_layout::s_i_o:
      g.out_channels = w.shape.back();
      if (g.out_channels % w.groups != 0)
        return rejection{reason::ambiguous_axis,
                         "batch norm: output channels not divisible by groups"};
      return std::nullopt;
    case weight_layout::s_c_m:
      // Depthwise by definition: a groups other than C is a different convolution.
      if (w.groups != w.shape[w.shape.size() - 2])
        return rejection{reason::ambiguous_axis,
                         "batch norm: depthwise (s_c_m) groups differ from the input channels"};
      // The product of two dims, so at most total: no overflow.
      g.out_channels = w.shape[w.shape.size() - 2] * w.shape.back();
      return std::nullopt;
    case weight_layout::i_o_s:
      if (w.shape[0] % w.groups != 0)
        return rejection{reason::ambiguous_axis,
                         "batch norm: transposed input channels not divisible by groups"};
      g.per_group_in = w.shape[0] / w.groups;
      g.per_group_out = w.shape[1];
      // groups <= shape[0], so this is at most shape[0] * shape[1] <= total: no overflow.
      g.out_channels = w.shape[1] * w.groups;
      g.kernel = total / (w.shape[0] * w.shape[1]);
      return std::nullopt;
  }
  return rejection{reason::ambiguous_axis, "batch norm: unknown weight layout"};
}
}  // namespace detail

namespace detail {
// fold_batch_norm's checks of everything it is given but the results, in its order; `outputs`
// says whether the caller's output spans suit `channels` output channels (g: the weights'
// geometry).
template <std::floating_point T, class Outputs>
[[nodiscard]] constexpr std::optional<rejection> check_batch_norm(const weights_view<T>& w,
                                                                  std::span<const T> bias,
                                                                  const batch_norm_params<T>& bn,
                                                                  channel_geometry& g,
                                                                  Outputs&& outputs) {
  if (bn.training) return rejection{reason::training_mode, "batch norm: training mode"};
  if (auto r = geometry(w, g)) return r;
  const auto channels = static_cast<std::size_t>(g.out_channels);
  const auto sized = [&](std::size_t n) { return n == channels; };
  // An empty statistic is missing data, not a default of ones or zeros.
  if (bn.mean.empty() || bn.variance.empty() || bn.gamma.empty() || bn.beta.empty())
    return rejection{reason::invalid_shape, "batch norm: an empty gamma, beta, mean or variance"};
  if (!sized(bn.mean.size()) || !sized(bn.variance.size()) || !sized(bn.gamma.size()) ||
      !sized(bn.beta.size()) || (!bias.empty() && !sized(bias.size())))
    return rejection{reason::channel_mismatch,
                     "batch norm: parameter length differs from the output channels"};
  if (!outputs(channels))
    return rejection{reason::channel_mismatch, "batch norm: output spans have the wrong sizes"};
  // eps is added to every variance: NaN, infinite or negative, it is no batch norm's epsilon.
  if (!math::is_finite(bn.epsilon) || bn.epsilon < 0)
    return rejection{reason::invalid_constant, "batch norm: epsilon is negative or not finite"};
  // An infinite variance would fold to a zero channel that looks valid (1 / sqrt(inf) = 0); a NaN
  // one to NaN. A finite negative variance is left to the result check (var + eps <= 0 is inf or
  // NaN there; above 0 it is what the batch norm itself computes).
  for (std::size_t o = 0; o < channels; ++o)
    if (!math::is_finite(bn.variance[o]))
      return rejection{reason::invalid_constant, "batch norm: a variance is not finite", o};
  return std::nullopt;
}

template <std::floating_point T>
[[nodiscard]] constexpr T batch_norm_rsqrt(const batch_norm_params<T>& bn, std::size_t o) {
  return T{1} / math::sqrt(bn.variance[o] + bn.epsilon);
}
// Channel o's weight scale, gamma_o * rsqrt_o.
template <std::floating_point T>
[[nodiscard]] constexpr T batch_norm_scale(const batch_norm_params<T>& bn, std::size_t o) {
  return bn.gamma[o] * batch_norm_rsqrt(bn, o);
}
// Channel o's folded bias, in torch's order for the weights' kind.
template <std::floating_point T>
[[nodiscard]] constexpr T batch_norm_bias(weights_kind kind, std::span<const T> bias,
                                          const batch_norm_params<T>& bn, std::size_t o) {
  const T r = batch_norm_rsqrt(bn, o);
  const T centred =
      (bias.empty() ? T{0} : bias[o]) - bn.mean[o];  // an absent bias is 0 - mean, as in torch
  const T scaled =
      kind == weights_kind::linear ? centred * (bn.gamma[o] * r) : centred * r * bn.gamma[o];
  // rounded(): the product is rounded to T before beta is added, never fused with it (FMA).
  return rounded(scaled) + bn.beta[o];  // -0 + 0 is +0, as in torch
}
// The first non-finite value of `folded`, named with index first + its position: a weight's own
// index, or a bias's (first = the number of weights), as fold_batch_norm names them.
template <std::floating_point T>
[[nodiscard]] constexpr std::optional<rejection> first_non_finite(std::span<const T> folded,
                                                                  std::size_t first,
                                                                  std::string_view what) {
  for (std::size_t i = 0; i < folded.size(); ++i)
    if (!math::is_finite(folded[i])) return rejection{reason::non_finite, what, first + i};
  return std::nullopt;
}
inline constexpr std::string_view non_finite_weight = "batch norm: folded weight is not finite",
                                  non_finite_bias = "batch norm: folded bias is not finite";

// Folded weights first .. first + n - 1 into out[0 .. n): each run of weights that share a
// channel (a row of `block` weights in o_i_s / o_s_i, of `kernel` in i_o_s) is one call of the row
// kernels, cut where the range cuts it. `large`: the site is at least streaming_bytes (only whole
// o_i_s / o_s_i rows then stream). True when every result is finite.
template <std::floating_point T>
[[nodiscard]] constexpr bool scale_weights(const weights_view<T>& w, const channel_geometry& g,
                                           std::span<const T> scales, std::size_t first, T* out,
                                           std::size_t n, bool large) {
  const weight_source<T> in{w.values.empty() ? nullptr : w.values.data(), w.unaligned.bytes};
  if (in.values == nullptr && in.bytes == nullptr) return n == 0;  // geometry() refused it first
  const std::size_t end = first + n;
  bool finite = true;
  const auto runs = [&](std::size_t run, bool stream, auto&& channel_of) {
    for (std::size_t i = first; i < end;) {
      const std::size_t r = i / run, stop = (r + 1) * run < end ? (r + 1) * run : end;
      finite = scale(in + i, out + (i - first), stop - i, scales[channel_of(r)], stream) && finite;
      i = stop;
    }
  };
  switch (w.layout) {
    case weight_layout::o_i_s:
    case weight_layout::o_s_i:
      runs(static_cast<std::size_t>(g.block), large, [](std::size_t r) { return r; });
      break;
    case weight_layout::s_i_o:    // channel fastest: the scale varies per element
    case weight_layout::s_c_m: {  // (s_c_m's output channel c * M + m is its last two dims')
      const auto channels = static_cast<std::size_t>(g.out_channels);
      for (std::size_t i = first; i < end; ++i) {
        out[i - first] = in[i] * scales[i % channels];
        finite = finite && math::is_finite(out[i - first]);
      }
      break;
    }
    case weight_layout::i_o_s: {  // weight[i][j][k] belongs to output channel (i / per_group_in) *
                                  // per_group_out + j
      const auto per_out = static_cast<std::size_t>(g.per_group_out),
                 per_in = static_cast<std::size_t>(g.per_group_in);
      runs(static_cast<std::size_t>(g.kernel), false,
           [&](std::size_t r) { return (r / per_out / per_in) * per_out + r % per_out; });
      break;
    }
  }
  return finite;
}
}  // namespace detail

// folded_weights[i] = w[i] * (gamma_o * rsqrt_o) and folded_bias[o] = ((b_o - mean_o) * rsqrt_o)
// * gamma_o + beta_o (linear: (b_o - mean_o) * (gamma_o * rsqrt_o) + beta_o) with rsqrt_o =
// 1 / sqrt(var_o + eps), each operation rounded in T (as torch.nn.utils.fusion computes it; eps
// is rounded to T first), o = the output channel of weight i in its layout. `bias`
// may be empty (the producer has none: zeros). Rejections: invalid_shape (a dim <= 0, a product
// of dims that overflows, a shape that disagrees with the data, an empty statistic),
// ambiguous_axis (rank, groups, layout), channel_mismatch (a length differs from the channels
// the weights' own dims give), invalid_constant (eps negative or not finite, a variance not
// finite), non_finite (a folded value). Nothing but the two output spans is written (folded_weights
// may be the weights' own storage), and after a rejection their contents mean nothing; a rejection
// names the reason and, for non-finite results, the first weight (or bias: index = number of
// weights + channel). Bit-identity with torch holds whatever the compiler's floating-point
// contraction setting (-ffp-contract=fast, FMA targets): no product is fused with an addition.
// T comes from the weights and the parameters, so vectors go in as they are.
template <std::floating_point T>
[[nodiscard]] constexpr std::optional<rejection> fold_batch_norm(
    const weights_view<T>& w, std::type_identity_t<std::span<const T>> bias,
    const batch_norm_params<T>& bn, std::type_identity_t<std::span<T>> folded_weights,
    std::type_identity_t<std::span<T>> folded_bias) {
  detail::channel_geometry g;
  if (auto r = detail::check_batch_norm(w, bias, bn, g, [&](std::size_t channels) {
        return folded_weights.size() == w.size() && folded_bias.size() == channels;
      }))
    return r;
  // The per-channel weight scale first goes into folded_bias (scratch), which is rewritten below.
  for (std::size_t o = 0; o < folded_bias.size(); ++o)
    folded_bias[o] = detail::batch_norm_scale(bn, o);
  const bool large = w.size() * sizeof(T) >= detail::streaming_bytes;
  // The full scan for the first non-finite weight runs only when a row found one.
  const bool finite = detail::scale_weights(w, g, std::span<const T>(folded_bias), 0,
                                            folded_weights.data(), w.size(), large);
  if (large && !std::is_constant_evaluated()) detail::end_streaming();
  for (std::size_t o = 0; o < folded_bias.size(); ++o)
    folded_bias[o] = detail::batch_norm_bias(w.kind, bias, bn, o);
  if (!finite)
    if (auto r = detail::first_non_finite(std::span<const T>(folded_weights), 0,
                                          detail::non_finite_weight))
      return r;
  return detail::first_non_finite(std::span<const T>(folded_bias), w.size(),
                                  detail::non_finite_bias);
}

// fold_batch_norm in two steps, for a writer that folds each piece of the weights as it writes
// it (no storage for all of them): fold_batch_norm_scales gives the per-channel scales
// gamma_o * rsqrt_o and the folded bias, with every rejection of fold_batch_norm but a
// non-finite folded weight; fold_batch_norm_weights then gives the folded weights first ..
// first + folded.size() - 1 from those scales, bit for bit fold_batch_norm's, or non_finite with
// the first such weight's index. A site with both a non-finite weight and a non-finite bias is
// named by its weight in fold_batch_norm: a caller that checks every weight before it reports
// the bias names it the same way.
template <std::floating_point T>
[[nodiscard]] constexpr std::optional<rejection> fold_batch_norm_scales(
    const weights_view<T>& w, std::type_identity_t<std::span<const T>> bias,
    const batch_norm_params<T>& bn, std::type_identity_t<std::span<T>> scales,
    std::type_identity_t<std::span<T>> folded_bias) {
  detail::channel_geometry g;
  if (auto r = detail::check_batch_norm(w, bias, bn, g, [&](std::size_t channels) {
        return scales.size() == channels && folded_bias.size() == channels;
      }))
    return r;
  for (std::size_t o = 0; o < scales.size(); ++o) {
    scales[o] = detail::batch_norm_scale(bn, o);
    folded_bias[o] = detail::batch_norm_bias(w.kind, bias, bn, o);
  }
  return detail::first_non_finite(std::span<const T>(folded_bias), w.size(),
                                  detail::non_finite_bias);
}
template <std::floating_point T>
[[nodiscard]] constexpr std::optional<rejection> fold_batch_norm_weights(
    const weights_view<T>& w, std::type_identity_t<std::span<const T>> scales, std::size_t first,
    std::type_identity_t<std::span<T>> folded) {
  detail::channel_geometry g;
  if (auto r = detail::geometry(w, g)) return r;
  if (scales.size() != static_cast<std::size_t>(g.out_channels))
    return rejection{reason::channel_mismatch,
                     "batch norm: scales differ from the output channels"};
  if (first > w.size() || folded.size() > w.size() - first)
    return rejection{reason::channel_mismatch, "batch norm: the range leaves the weights"};
  if (detail::scale_weights(w, g, scales, first, folded.data(), folded.size(), false))
    return std::nullopt;
  return detail::first_non_finite(std::span<const T>(folded), first, detail::non_finite_weight);
}

}  // namespace qfold
