// Compile-time proofs for the arith layer (static_assert only: compiling is passing, on g++ and
// clang++). Expected values come from closed forms derived in the comments, not from the code.
#include <array>
#include <cstddef>
#include <cstdint>
#include <qfold/qfold.hpp>
#include <utility>

namespace {
using qfold::int_type;
using qfold::rescale_attributes;
using qfold::scale_factor;

// floor(n / d) for d > 0, written with C++'s truncating division.
constexpr std::int64_t floor_div(std::int64_t n, std::int64_t d) {
  return n / d - (n % d != 0 && n < 0 ? 1 : 0);
}

// RESCALE by 2^up / 2^down (multiplier 2^30, shift 30 + down - up) equals
// round_half_up(v * 2^up / 2^down) = floor((v * 2^(up+1) + 2^down) / 2^(down+1)), then + output_zp
// and clamp. Checked for `count` consecutive inputs from `first` through the batch API (validated
// once per call, which keeps every static_assert inside the compilers' default constexpr budget).
template <class In, class Out, std::size_t count = 256>
constexpr bool rescale_power_of_two(const rescale_attributes& a, int up, int down,
                                    std::int64_t first) {
  const std::array<scale_factor, 1> s{{{std::int32_t{1} << 30, 30 + down - up}}};
  std::array<In, count> in{};
  for (std::size_t i = 0; i < count; ++i)
    in[i] = static_cast<In>(first + static_cast<std::int64_t>(i));
  std::array<Out, count> out{};
  if (!qfold::rescale_array<In, Out>(a, s, in, out)) return false;
  const auto range = a.output_range();
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t v = in[i] - a.input_zp;
    const std::int64_t scaled =
        floor_div(v * (std::int64_t{1} << (up + 1)) + (std::int64_t{1} << down),
                  std::int64_t{1} << (down + 1));
    if (out[i] != qfold::clamp(scaled + a.output_zp, range.lo, range.hi)) return false;
  }
  return true;
}

// Every int8 input, to each output type, signed and unsigned, zero points at both ends,
// scales 2..1/4.
template <class In, class Out>
constexpr bool int8_grid(const rescale_attributes& a) {
  for (int up = 0; up <= 1; ++up)
    for (int down = 0; down <= 2; ++down)
      if (!rescale_power_of_two<In, Out>(a, up, down, a.input_range().lo)) return false;
  return true;
}
static_assert(int8_grid<std::int8_t, std::int8_t>({}));
static_assert(int8_grid<std::int8_t, std::int8_t>({.input_zp = -128, .output_zp = 127}));
static_assert(int8_grid<std::int8_t, std::int8_t>({.input_zp = 127, .output_zp = -128}));
static_assert(int8_grid<std::int8_t, std::int16_t>({.output_type = int_type::i16}));
static_assert(int8_grid<std::int8_t, std::int32_t>({.output_type = int_type::i32, .input_zp = 5}));
static_assert(int8_grid<std::uint8_t, std::int8_t>(
    {.input_unsigned = true, .input_zp = 255, .output_zp = 3}));
static_assert(int8_grid<std::int8_t, std::uint8_t>({.output_unsigned = true, .output_zp = 128}));
static_assert(int8_grid<std::int8_t, std::uint16_t>(
    {.output_type = int_type::i16, .output_unsigned = true, .output_zp = 32768}));

// Every int16 input -> int8 at scale 1/256, and every unsigned int16 (zp 32768) -> int16 at scale
// 1, in slices of 4,096: each variable template is its own constant evaluation, so each stays
// inside the compilers' default budget.
template <std::size_t slice>
constexpr bool int16_slice = rescale_power_of_two<std::int16_t, std::int8_t, 4096>(
    {.input_type = int_type::i16}, 0, 8, -32768 + 4096 * std::int64_t{slice});
template <std::size_t slice>
constexpr bool uint16_slice =
    rescale_power_of_two<std::uint16_t, std::int16_t, 4096>({.input_type = int_type::i16,
                                                             .output_type = int_type::i16,
                                                             .input_unsigned = true,
                                                             .input_zp = 32768},
                                                            0, 0, 4096 * std::int64_t{slice});
template <std::size_t... slice>
constexpr bool all_slices(std::index_sequence<slice...>) {
  return ((int16_slice<slice> && uint16_slice<slice>)&&...);
}
static_assert(all_slices(std::make_index_sequence<16>{}));

// Hand-derived values (see tests/unit/arith_edge_cases_test.cpp for the derivations).
static_assert(qfold::apply_scale_32(-3, 1 << 30, 31) == -1);
static_assert(qfold::apply_scale_32(3, 1 << 30, 31) == 2);
static_assert(qfold::apply_scale_32(-2, 1 << 30, 32, true) == -1);
static_assert(qfold::apply_scale_32(-2, 1 << 30, 32, false) == 0);
static_assert(!qfold::checked::mul<std::int32_t>(INT32_MIN, INT32_MIN,
                                                 63));  // the spec's int64 sum overflows
static_assert(qfold::apply_scale_16(-3, 1 << 14, 15) == -1);
static_assert(qfold::reciprocal_scale(1) == scale_factor{(1 << 30) + 1, 30});
static_assert(qfold::reciprocal_scale(3) ==
              scale_factor{1431655766, 32});  // floor((2^30+1) * 4 / 3)
static_assert(!qfold::checked::reciprocal_scale(0));
static_assert(!qfold::checked::reciprocal_scale((1u << 30) +
                                                1));  // (2^30+1) * 2^31 / (2^30+1) = 2^31
static_assert(qfold::mul<std::int32_t>(46341, 46341) == -2147479015);
static_assert(qfold::compute_multiplier_and_shift(0.5 + 0x1p-32, qfold::scale_width::bits32,
                                                  qfold::tie_rule::half_to_even)
                  .value() == scale_factor{1 << 30, 31});
static_assert(qfold::compute_multiplier_and_shift(0.5 + 0x1p-32, qfold::scale_width::bits32,
                                                  qfold::tie_rule::half_away_from_zero)
                  .value() == scale_factor{(1 << 30) + 1, 31});
static_assert(qfold::compute_multiplier_and_shift(0.0, qfold::scale_width::bits32,
                                                  qfold::tie_rule::half_to_even)
                  .value() == scale_factor{0, 31});
static_assert(qfold::compute_multiplier_and_shift(-1.0, qfold::scale_width::bits32,
                                                  qfold::tie_rule::half_to_even)
                  .error()
                  .code == qfold::errc::scale_negative);
static_assert(qfold::tflite::quantize_multiplier(0.25).value() ==
              qfold::tflite::quantized_multiplier{1 << 30, -1});
static_assert(qfold::tflite::multiply_by_quantized_multiplier(-2, 1 << 30, -1) == -1);
static_assert(qfold::cmsis_nn::requantize(-2, 1 << 30, -1,
                                          qfold::cmsis_nn::rounding::single_round) == 0);

// The batch API runs at compile time too: per-channel scale 1 and 1/2 on [row][channel] data.
constexpr bool batch_per_channel() {
  const std::array<scale_factor, 2> s{{{1 << 30, 30}, {1 << 30, 31}}};
  const std::array<std::int8_t, 4> in{-7, -7, 9, 9};
  std::array<std::int8_t, 4> out{};
  const auto r = qfold::rescale_array<std::int8_t, std::int8_t>({.per_channel = true}, s, in, out);
  return r.has_value() && out == std::array<std::int8_t, 4>{-7, -3, 9, 5};
}
static_assert(batch_per_channel());
}  // namespace
