// One lane of the Arm NEON / Helium (MVE) instructions the vector requantize kernels use
// (VSHL, VQDMULH, VQRDMULH, VRSHL), as exact integer functions, and the policy for a lane whose
// left shift wraps where the scalar kernel it replaces would compute (or overflow) differently.
#pragma once

#include <cstdint>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"

namespace qfold {

// What a vector kernel's left shift does when x * 2^n leaves int32. `wrap` is what the
// instruction does (VSHL keeps the low 32 bits); `refuse` makes it an error (checked form) or a
// broken contract (unchecked form): the inputs where the vector kernel departs from the scalar.
enum class lane_overflow : std::uint8_t { wrap, refuse };

namespace detail::lane {
// VSHL by a non-negative register count n in 0..31: the low 32 bits of x * 2^n.
[[nodiscard]] constexpr std::int32_t shl(std::int32_t x, int n) noexcept {
  return wrap_int32(static_cast<std::int64_t>(static_cast<std::uint64_t>(std::int64_t{x}) << n));
}
[[nodiscard]] constexpr bool shl_fits(std::int32_t x, int n) noexcept {
  return fits_int32(std::int64_t{x} * (std::int64_t{1} << n));
}
// VQDMULH: floor(2ab / 2^32) = floor(ab / 2^31); only INT32_MIN * INT32_MIN saturates.
[[nodiscard]] constexpr std::int32_t qdmulh(std::int32_t a, std::int32_t b) noexcept {
  const std::int64_t r = (std::int64_t{a} * b) >> 31;
  return r > int32_max ? static_cast<std::int32_t>(int32_max) : static_cast<std::int32_t>(r);
}
// VQRDMULH: floor((2ab + 2^31) / 2^32) = floor((ab + 2^30) / 2^31), saturating as VQDMULH.
[[nodiscard]] constexpr std::int32_t qrdmulh(std::int32_t a, std::int32_t b) noexcept {
  const std::int64_t r = shift_right_round_half_up(std::int64_t{a} * b, 31);
  return r > int32_max ? static_cast<std::int32_t>(int32_max) : static_cast<std::int32_t>(r);
}
// VRSHL by a count -n, n in 0..31: a rounding right shift, half toward +inf, computed without
// overflow (the instruction rounds in a wider intermediate).
[[nodiscard]] constexpr std::int32_t rshr(std::int32_t x, int n) noexcept {
  return n == 0 ? x : static_cast<std::int32_t>(shift_right_round_half_up(x, n));
}
}  // namespace detail::lane

}  // namespace qfold
