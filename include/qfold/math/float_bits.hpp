// Bit-level helpers for float and double: classification, sign, neighbours and ULP distance,
// constexpr through std::bit_cast (no <cmath>), for the math layer and for tests that count ULPs.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>

namespace qfold::math {

// The two IEEE binary formats the math layer is written for.
template <class T>
concept binary_float = std::same_as<T, float> || std::same_as<T, double>;

namespace detail {
template <binary_float T>
struct float_traits;
template <>
struct float_traits<float> {
  using bits = std::uint32_t;
  static constexpr int precision = 24;  // significand bits, hidden bit included
  static constexpr int bias = 127;
  static constexpr int max_biased = 255;
};
template <>
struct float_traits<double> {
  using bits = std::uint64_t;
  static constexpr int precision = 53;
  static constexpr int bias = 1023;
  static constexpr int max_biased = 2047;
};
template <binary_float T>
using bits_t = typename float_traits<T>::bits;
template <binary_float T>
inline constexpr bits_t<T> sign_mask = bits_t<T>{1} << (sizeof(T) * 8 - 1);
template <binary_float T>
inline constexpr bits_t<T> fraction_mask = (bits_t<T>{1} << (float_traits<T>::precision - 1)) - 1;

template <binary_float T>
[[nodiscard]] constexpr bits_t<T> to_bits(T x) noexcept {
  return std::bit_cast<bits_t<T>>(x);
}
template <binary_float T>
[[nodiscard]] constexpr T from_bits(bits_t<T> b) noexcept {
  return std::bit_cast<T>(b);
}
// Biased exponent field (0 for zeros and subnormals, max_biased for inf and NaN).
template <binary_float T>
[[nodiscard]] constexpr int biased_exponent(T x) noexcept {
  return static_cast<int>((to_bits(x) & ~sign_mask<T>) >> (float_traits<T>::precision - 1));
}
// 2^e for e in [-1074, 1023], built from bits (subnormal powers included).
[[nodiscard]] constexpr double pow2(int e) noexcept {
  if (e >= -1022) return from_bits<double>(static_cast<std::uint64_t>(e + 1023) << 52);
  return from_bits<double>(std::uint64_t{1} << (e + 1074));
}
}  // namespace detail

template <binary_float T>
[[nodiscard]] constexpr bool is_nan(T x) noexcept {
  return (detail::to_bits(x) & ~detail::sign_mask<T>) >
         (detail::to_bits(std::numeric_limits<T>::infinity()));
}
template <binary_float T>
[[nodiscard]] constexpr bool is_inf(T x) noexcept {
  return (detail::to_bits(x) & ~detail::sign_mask<T>) ==
         detail::to_bits(std::numeric_limits<T>::infinity());
}
template <binary_float T>
[[nodiscard]] constexpr bool is_finite(T x) noexcept {
  return detail::biased_exponent(x) != detail::float_traits<T>::max_biased;
}
// True for negative values, -0 and NaNs with the sign bit set (C signbit).
template <binary_float T>
[[nodiscard]] constexpr bool signbit(T x) noexcept {
  return (detail::to_bits(x) & detail::sign_mask<T>) != 0;
}
template <binary_float T>
[[nodiscard]] constexpr T abs(T x) noexcept {
  return detail::from_bits<T>(detail::to_bits(x) & ~detail::sign_mask<T>);
}
// |magnitude| with the sign bit of `sign` (C copysign).
template <binary_float T>
[[nodiscard]] constexpr T copysign(T magnitude, T sign) noexcept {
  return detail::from_bits<T>((detail::to_bits(magnitude) & ~detail::sign_mask<T>) |
                              (detail::to_bits(sign) & detail::sign_mask<T>));
}

// The next representable value toward +inf (C nextafter(x, +inf)); NaN and +inf unchanged,
// -0 and +0 both step to the smallest positive subnormal.
template <binary_float T>
[[nodiscard]] constexpr T next_up(T x) noexcept {
  if (is_nan(x) || x == std::numeric_limits<T>::infinity()) return x;
  if (x == 0) return std::numeric_limits<T>::denorm_min();
  const auto b = detail::to_bits(x);
  return detail::from_bits<T>(signbit(x) ? b - 1 : b + 1);
}
// The next representable value toward -inf.
template <binary_float T>
[[nodiscard]] constexpr T next_down(T x) noexcept {
  return -next_up(-x);
}

// Number of representable values between a and b, counting one of the ends: 0 when a == b
// (+0 and -0 are the same point), 1 for neighbours. NaN anywhere gives the maximum.
template <binary_float T>
[[nodiscard]] constexpr std::uint64_t ulp_distance(T a, T b) noexcept {
  if (is_nan(a) || is_nan(b)) return std::numeric_limits<std::uint64_t>::max();
  // Map the sign-magnitude encoding onto a line of integers where neighbours differ by one.
  const auto line = [](T x) {
    const auto magnitude = static_cast<std::int64_t>(detail::to_bits(x) & ~detail::sign_mask<T>);
    return signbit(x) ? -magnitude : magnitude;
  };
  const std::int64_t ia = line(a), ib = line(b);
  return ia > ib ? static_cast<std::uint64_t>(ia - ib) : static_cast<std::uint64_t>(ib - ia);
}

}  // namespace qfold::math
