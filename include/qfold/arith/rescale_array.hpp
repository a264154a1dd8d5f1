// RESCALE over whole arrays (per-tensor or per-channel, channel = last dimension): validates
// once, proves the spec's requirements for the data's actual range once, then runs a tight loop
// (or a 256-entry table for 8-bit inputs) with no per-element checks.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/detail/algorithm.hpp"

namespace qfold {

// C++ storage type of each RESCALE element type (i48 is held in int64_t).
template <class T>
concept rescale_element = std::same_as<T, std::int8_t> || std::same_as<T, std::uint8_t> ||
    std::same_as<T, std::int16_t> || std::same_as<T, std::uint16_t> ||
    std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

template <rescale_element T>
inline constexpr int_type int_type_of = sizeof(T) == 1   ? int_type::i8
                                        : sizeof(T) == 2 ? int_type::i16
                                        : sizeof(T) == 4 ? int_type::i32
                                                         : int_type::i48;

namespace detail {
// One channel's parameters, with the rounding constant folded in.
struct rescale_kernel {
  std::int64_t multiplier, round, nudge, input_zp, output_zp, lo, hi;
  int shift;

  constexpr rescale_kernel(const rescale_attributes& a, scale_factor s) noexcept
      : multiplier(s.multiplier),
        round(std::int64_t{1} << (s.shift - 1)),
        nudge(a.scale32 && a.rounding == rounding_mode::double_round && s.shift > 31
                  ? std::int64_t{1} << 30
                  : 0),
        input_zp(a.input_zp),
        output_zp(a.output_zp),
        lo(a.output_range().lo),
        hi(a.output_range().hi),
        shift(s.shift) {}

  // Valid only where prove() holds: |v * multiplier| < 2^62, so nothing here can overflow.
  template <bool double_round = true>
  [[nodiscard]] constexpr std::int64_t apply(std::int64_t in) const noexcept {
    const std::int64_t v = in - input_zp;
    std::int64_t p = v * multiplier + round;
    if constexpr (double_round) p += v >= 0 ? nudge : -nudge;
    const std::int64_t r = (p >> shift) + output_zp;
    return std::min(std::max(r, lo), hi);  // min/max, not branches: outputs often saturate
  }
};

// Every input in [lo, hi] meets the requirements: apply_scale_32's value range (scale32), and an
// int32 result after adding output_zp. The scaled value is non-decreasing in the input
// (multiplier >= 0; the double-round nudge only grows with the sign of v), so the ends suffice.
[[nodiscard]] constexpr bool prove(const rescale_attributes& a, scale_factor s, std::int64_t lo,
                                   std::int64_t hi) {
  return checked::rescale_value(a, s, lo).has_value() &&
         checked::rescale_value(a, s, hi).has_value();
}

// The loop is instantiated without the double-round term when it is zero, so that the common
// case is a multiply, add, shift and clamp that compilers vectorise.
template <bool double_round, class In, class Out>
constexpr void run_strided(const rescale_kernel& k, const In* in, Out* out, std::size_t count,
                           std::size_t stride) noexcept {
  if (stride == 1) {
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(k.apply<double_round>(in[i]));
  } else {
    for (std::size_t i = 0; i < count; ++i)
      out[i * stride] = static_cast<Out>(k.apply<double_round>(in[i * stride]));
  }
}

// Blocks with a constant trip count: GCC's -O2 cost model vectorises those, not an open loop.
template <class T>
[[nodiscard]] constexpr std::array<T, 2> min_max(std::span<const T> v) noexcept {
  constexpr std::size_t block = 64;
  T lo = v[0], hi = v[0];
  std::size_t i = 0;
  for (; i + block <= v.size(); i += block)
    for (std::size_t j = 0; j < block; ++j) {
      const T x = v[i + j];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
  for (; i < v.size(); ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  return {lo, hi};
}

template <class In, class Out>
constexpr void run_strided(const rescale_kernel& k, const In* in, Out* out, std::size_t count,
                           std::size_t stride) noexcept {
  if (k.nudge != 0)
    run_strided<true>(k, in, out, count, stride);
  else
    run_strided<false>(k, in, out, count, stride);
}

// One per-tensor RESCALE evaluated on many single values (a proof over every code): the kernel
// wherever prove() holds for the whole input type (checked once here), else the per-element
// checks of rescale_validated. `a` and `s` must have passed validate(a) and validate(a, s).
class rescale_evaluator {
 public:
  constexpr rescale_evaluator(const rescale_attributes& a, scale_factor s)
      : a_(a), s_(s), k_(a, s), in_(a.input_range()), proven_(prove(a, s, in_.lo, in_.hi)) {}

  [[nodiscard]] constexpr result<std::int32_t> operator()(std::int64_t x) const {
    if (proven_ && in_.contains(x)) return static_cast<std::int32_t>(k_.apply(x));
    return rescale_validated(a_, s_, x, zero_point_add::checked);
  }

 private:
  rescale_attributes a_;
  scale_factor s_;
  rescale_kernel k_;
  int_range in_;
  bool proven_;
};
}  // namespace detail

// out[i] = RESCALE(in[i]); channel = i % scales.size() when per_channel. The element types of the
// spans must match the attributes (uint8_t for unsigned i8, int64_t for i48, ...). Errors: those
// of validate(), span sizes, and the first element that breaks a requirement (error.index).
// `out` is written only when the whole call succeeds.
template <rescale_element In, rescale_element Out>
[[nodiscard]] constexpr result<void> rescale_array(const rescale_attributes& a,
                                                   std::span<const scale_factor> scales,
                                                   std::span<const In> in, std::span<Out> out) {
  if (int_type_of<In> != a.input_type || std::is_unsigned_v<In> != a.input_unsigned)
    return fail(errc::illegal_type,
                "rescale_array: input span element type differs from the attributes");
  if (int_type_of<Out> != a.output_type || std::is_unsigned_v<Out> != a.output_unsigned)
    return fail(errc::illegal_type,
                "rescale_array: output span element type differs from the attributes");
  if (in.size() != out.size())
    return fail(errc::size_mismatch, "rescale_array: input and output sizes differ");
  const std::size_t channels = a.per_channel ? scales.size() : 1;
  if (auto ok = validate(a, scales, channels); !ok) return ok;
  if (in.size() % channels != 0)
    return fail(errc::size_mismatch, "rescale_array: size is not a multiple of the channel count");
  if (in.empty()) return {};
  if constexpr (sizeof(In) == 1) {
    // 8-bit per-tensor: a table of all 256 codes pays for itself after a few hundred elements.
    // It is used only when every code is valid, so no element needs a check.
    if (channels == 1 && in.size() >= 512) {
      std::array<Out, 256> table{};
      bool all_valid = true;
      for (int code = 0; code < 256; ++code) {
        const auto r = checked::rescale_value(a, scales[0], static_cast<In>(code));
        all_valid = all_valid && r.has_value();
        table[static_cast<std::size_t>(code)] = static_cast<Out>(r.value_or(0));
      }
      if (all_valid) {
        for (std::size_t i = 0; i < in.size(); ++i)
          out[i] = table[static_cast<std::uint8_t>(in[i])];
        return {};
      }
    }
  }

  const auto [min, max] = detail::min_max(in);
  for (std::size_t c = 0; c < channels; ++c) {  // includes the int48 range of int64_t inputs
    if (detail::prove(a, scales[c], min, max)) continue;
    // Some element may fail: report the first one in element order (not channel order).
    for (std::size_t i = 0; i < in.size(); ++i)
      if (auto r = checked::rescale_value(a, scales[i % channels], in[i]); !r)
        return fail(r.error().code, r.error().message, i);
  }

  const std::size_t rows = in.size() / channels;
  for (std::size_t c = 0; c < channels; ++c)
    detail::run_strided(detail::rescale_kernel(a, scales[c]), in.data() + c, out.data() + c, rows,
                        channels);
  return {};
}

}  // namespace qfold
