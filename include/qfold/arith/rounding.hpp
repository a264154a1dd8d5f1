// Integer rounding primitives shared by every requantize flavour: shifts that round,
// the int32/int48 range tests, and saturation. Overflow-free for every int64 input.
#pragma once

#include <cstdint>
#include <limits>

#include "qfold/arith/result.hpp"

namespace qfold {

inline constexpr std::int64_t int32_min = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t int48_min = -(std::int64_t{1} << 47);
inline constexpr std::int64_t int48_max = (std::int64_t{1} << 47) - 1;

[[nodiscard]] constexpr bool fits_int32(std::int64_t v) noexcept {
  return v >= int32_min && v <= int32_max;
}
[[nodiscard]] constexpr bool fits_int48(std::int64_t v) noexcept {
  return v >= int48_min && v <= int48_max;
}

// floor(v / 2^shift) + (1/2 rounded up): the TOSA "add half, then arithmetic shift", i.e. round
// half toward +inf. Written as floor-shift plus the first dropped bit, which is the same value
// (v = q*2^s + r, 0 <= r < 2^s: adding 2^(s-1) carries iff bit s-1 of r is set) but cannot
// overflow. Contract: shift in [1, 63] (any other count is a shift by a negative or >= 64).
[[nodiscard]] constexpr std::int64_t shift_right_round_half_up(std::int64_t v, int shift) noexcept {
  detail::expects(shift >= 1 && shift <= 63, "shift_right_round_half_up: 1 <= shift <= 63");
  return (v >> shift) + ((v >> (shift - 1)) & 1);
}

// v / 2^shift rounded to nearest, ties away from zero (gemmlowp RoundingDivideByPOT, CMSIS-NN
// arm_nn_divide_by_power_of_two, TFLite double rounding's second step). Contract: shift in
// [0, 62].
[[nodiscard]] constexpr std::int64_t shift_right_round_half_away(std::int64_t v,
                                                                 int shift) noexcept {
  detail::expects(shift >= 0 && shift <= 62, "shift_right_round_half_away: 0 <= shift <= 62");
  if (shift == 0) return v;
  const std::int64_t mask = (std::int64_t{1} << shift) - 1;
  const std::int64_t remainder = v & mask;
  const std::int64_t threshold = (mask >> 1) + (v < 0 ? 1 : 0);
  return (v >> shift) + (remainder > threshold ? 1 : 0);
}

[[nodiscard]] constexpr std::int64_t clamp(std::int64_t v, std::int64_t lo,
                                           std::int64_t hi) noexcept {
  return v < lo ? lo : (v > hi ? hi : v);
}

// The low 32 bits of v as a signed value (two's complement wrap, well defined since C++20).
[[nodiscard]] constexpr std::int32_t wrap_int32(std::int64_t v) noexcept {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
}

}  // namespace qfold
