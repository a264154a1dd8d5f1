// sin, cos and atan for float and double, correctly rounded as far as tested: exact argument
// reduction for every finite input (Payne-Hanek with 1280 bits of 2/pi), double-double series.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "qfold/math/double_double.hpp"
#include "qfold/math/float_bits.hpp"
#include "qfold/math/sqrt.hpp"

namespace qfold::math {
namespace detail {

inline constexpr double_double pi_over_2{0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};

// 2/pi = sum two_over_pi_words[j] 2^(-64 (j + 1)) (tests/reference/gen_math_constants.py).
inline constexpr std::uint64_t two_over_pi_words[20] = {
    0xA2F9836E4E441529, 0xFC2757D1F534DDC0, 0xDB6295993C439041, 0xFE5163ABDEBBC561,
    0xB7246E3A424DD2E0, 0x06492EEA09D1921C, 0xFE1DEB1CB129A73E, 0xE88235F52EBB4484,
    0xE99C7026B45F7E41, 0x3991D639835339F4, 0x9C845F8BBDF9283B, 0x1FF897FFDE05980F,
    0xEF2F118B5A0A6D1F, 0x6D367ECF27CB09B7, 0x4F463F669E5FEA2D, 0x7527BAC7EBE5F17B,
    0x3D0739F78A5292EA, 0x6BFB5FB11F8D5D08, 0x56033046FC7B6BAB, 0xF0CFBC209AF4361D};

// x = k pi/2 + r with |r| <= pi/4 (r as a double-double), for a positive finite double.
struct reduced {
  double_double r;
  int k;  // quadrant, mod 4
};

// `count` (<= 53) bits of the 384-bit little-endian integer q starting at bit `pos`.
[[nodiscard]] constexpr std::uint64_t bit_field(const std::uint64_t (&q)[6], int pos,
                                                int count) noexcept {
  if (pos < 0) {  // bits below the integer's end read as zeros
    count += pos;
    if (count <= 0) return 0;
    return bit_field(q, 0, count) << (-pos);
  }
  const int w = pos / 64, b = pos % 64;
  std::uint64_t v = q[w] >> b;
  if (b + count > 64 && w + 1 < 6) v |= q[w + 1] << (64 - b);
  return v & ((std::uint64_t{1} << count) - 1);
}

// Payne-Hanek: x 2/pi = m 2^e sum W_j 2^(-64(j+1)). Words whose every bit weighs a multiple of
// 4 are skipped; five words follow, so the product m W (373 bits) has at least 254 fraction bits
// and the neglected words change x 2/pi by less than 2^-200.
[[nodiscard]] constexpr reduced reduce_pi_over_2(double x) noexcept {
  if (x <= 0x1.921fb54442d18p-1) return {{x, 0}, 0};  // below pi/4
  const auto bits = to_bits(x);
  const std::uint64_t m = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
  const int e = static_cast<int>(bits >> 52) - 1075;
  const int j0 = e >= 66 ? (e - 66) / 64 + 1 : 0;
  std::uint64_t q[6] = {};
  std::uint64_t carry = 0;
  for (int i = 0; i < 5; ++i) {  // q = m * (words j0..j0+4), least significant word first
    const u128 p = mul_64x64(m, two_over_pi_words[j0 + 4 - i]);
    q[i] = p.lo + carry;
    carry = p.hi + (q[i] < carry ? 1 : 0);
  }
  q[5] = carry;
  const int point = 64 * (j0 + 5) - e;  // q / 2^point = x 2/pi mod 4, 254 < point <= 373
  int k = static_cast<int>(bit_field(q, point, 2));
  // The fraction below the point, as its top 3 x 53 bits after leading zeros.
  bool negative = false;
  if (bit_field(q, point - 1, 1) != 0) {  // fraction >= 1/2: use fraction - 1, two's complement
    ++k;
    negative = true;
    std::uint64_t borrow = 1;
    for (std::uint64_t& w : q) {
      w = ~w + borrow;
      borrow = (borrow != 0 && w == 0) ? 1 : 0;
    }
  }
  int top = point - 1;  // highest fraction bit that is set (some is: x is not a multiple of pi/2)
  while (top > 53 && bit_field(q, top - 52, 53) == 0) top -= 53;
  while (top > 0 && bit_field(q, top, 1) == 0) --top;
  const double scale_hi = pow2(top - 52 - point);
  const double g1 = static_cast<double>(bit_field(q, top - 52, 53)) * scale_hi;
  const double g2 = static_cast<double>(bit_field(q, top - 105, 53)) * (scale_hi * 0x1p-53);
  const double g3 = static_cast<double>(bit_field(q, top - 158, 53)) * (scale_hi * 0x1p-106);
  const double_double f = dd::add(dd::fast_two_sum(g1, g2), g3);
  const double_double r = dd::mul(f, pi_over_2);
  return {negative ? dd::neg(r) : r, k & 3};
}

// sin r and cos r for |r| <= pi/4: Taylor series in r^2, terms n <= 8 with double-double
// coefficients, n >= 9 (below 2^-54 of the sum) in double.
[[nodiscard]] constexpr double_double sin_poly(double_double r) noexcept {
  constexpr double_double head[9] = {{0x1p0, 0},
                                     {-0x1.5555555555555p-3, -0x1.5555555555555p-57},
                                     {0x1.1111111111111p-7, 0x1.1111111111111p-63},
                                     {-0x1.a01a01a01a01ap-13, -0x1.a01a01a01a01ap-73},
                                     {0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73},
                                     {-0x1.ae64567f544e4p-26, 0x1.c062e06d1f209p-80},
                                     {0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87},
                                     {-0x1.ae7f3e733b81fp-41, -0x1.1d8656b0ee8cbp-97},
                                     {0x1.952c77030ad4ap-49, 0x1.ac981465ddc6cp-103}};
  const double_double z = dd::mul(r, r);
  const double w = z.hi;
  const double tail =
      -0x1.2f49b46814157p-57 +
      w * (0x1.71b8ef6dcf572p-66 +
           w * (-0x1.761b41316381ap-75 + w * (0x1.3f3ccdd165fa9p-84 + w * -0x1.d1ab1c2dccea3p-94)));
  double_double acc{tail, 0};
  for (int n = 8; n >= 0; --n) acc = dd::add(head[n], dd::mul(z, acc));
  return dd::mul(acc, r);
}
[[nodiscard]] constexpr double_double cos_poly(double_double r) noexcept {
  constexpr double_double head[9] = {{0x1p0, 0},
                                     {-0x1p-1, 0},
                                     {0x1.5555555555555p-5, 0x1.5555555555555p-59},
                                     {-0x1.6c16c16c16c17p-10, 0x1.f49f49f49f49fp-65},
                                     {0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76},
                                     {-0x1.27e4fb7789f5cp-22, -0x1.cbbc05b4fa99ap-76},
                                     {0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83},
                                     {-0x1.93974a8c07c9dp-37, -0x1.05d6f8a2efd1fp-92},
                                     {0x1.ae7f3e733b81fp-45, 0x1.1d8656b0ee8cbp-101}};
  const double_double z = dd::mul(r, r);
  const double w = z.hi;
  const double tail = -0x1.6827863b97d97p-53 +
                      w * (0x1.e542ba4020225p-62 +
                           w * (-0x1.0ce396db7f853p-70 +
                                w * (0x1.f2cf01972f578p-80 +
                                     w * (-0x1.88e85fc6a4e5ap-89 + w * 0x1.0a18a2635085dp-98))));
  double_double acc{tail, 0};
  for (int n = 8; n >= 0; --n) acc = dd::add(head[n], dd::mul(z, acc));
  return acc;
}

// atan(y) for y in [0, 1]: atan(j/16) + atan(t), t = (y - j/16) / (1 + y j/16), |t| <= 1/32,
// atan t = t sum (-1)^n t^2n / (2n + 1) with n <= 5 in double-double.
[[nodiscard]] constexpr double_double atan_unit(double_double y) noexcept {
  constexpr double_double at[17] = {{0, 0},
                                    {0x1.ff55bb72cfdeap-5, -0x1.c934d86d23f1dp-60},
                                    {0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59},
                                    {0x1.7b97b4bce5b02p-3, 0x1.347b0b4f881cap-58},
                                    {0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57},
                                    {0x1.362773707ebccp-2, -0x1.963a544b672d8p-57},
                                    {0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56},
                                    {0x1.a64eec3cc23fdp-2, -0x1.24dec1b50b7ffp-56},
                                    {0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56},
                                    {0x1.0657e94db30d0p-1, -0x1.d5b495f6349e6p-56},
                                    {0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58},
                                    {0x1.345f01cce37bbp-1, 0x1.1021137c71102p-55},
                                    {0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56},
                                    {0x1.5d58987169b18p-1, 0x1.0028e4bc5e7cap-57},
                                    {0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56},
                                    {0x1.819d0b7158a4dp-1, -0x1.bf76229d3b917p-56},
                                    {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55}};
  constexpr double_double head[6] = {{0x1p0, 0},
                                     {-0x1.5555555555555p-2, -0x1.5555555555555p-56},
                                     {0x1.999999999999ap-3, -0x1.999999999999ap-57},
                                     {-0x1.2492492492492p-3, -0x1.2492492492492p-57},
                                     {0x1.c71c71c71c71cp-4, 0x1.c71c71c71c71cp-58},
                                     {-0x1.745d1745d1746p-4, 0x1.745d1745d1746p-59}};
  const int j = static_cast<int>(y.hi * 16 + 0.5);
  const double c = j * 0x1p-4;
  const double_double t = j == 0 ? y : dd::div(dd::add(y, -c), dd::add(dd::mul(y, c), 1.0));
  const double_double z = dd::mul(t, t);
  const double w = z.hi;
  const double tail =
      0x1.3b13b13b13b14p-4 +
      w * (-0x1.1111111111111p-4 +
           w * (0x1.e1e1e1e1e1e1ep-5 + w * (-0x1.af286bca1af28p-5 + w * 0x1.8618618618618p-5)));
  double_double acc{tail, 0};
  for (int n = 5; n >= 0; --n) acc = dd::add(head[n], dd::mul(z, acc));
  return dd::add(at[j], dd::mul(acc, t));
}

}  // namespace detail

// sin x; sin(+-0) = +-0, sin(+-inf) = NaN. Exact reduction for every finite x.
template <binary_float T>
[[nodiscard]] constexpr T sin(T x) noexcept {
  if (is_nan(x) || x == 0) return x;
  if (is_inf(x)) return std::numeric_limits<T>::quiet_NaN();
  const double a = abs(static_cast<double>(x));
  double_double s{};
  if (a < 0x1p-30) {  // sin a = a - a^3/6 + ...: the cube term is below 2^-61 relative
    s = dd::fast_two_sum(a, -(a * a * a / 6));
  } else {
    const detail::reduced red = detail::reduce_pi_over_2(a);
    s = (red.k & 1) == 0 ? detail::sin_poly(red.r) : detail::cos_poly(red.r);
    if ((red.k & 2) != 0) s = dd::neg(s);
  }
  return dd::nearest<T>(signbit(x) ? dd::neg(s) : s);
}

// cos x; cos(+-inf) = NaN. Exact reduction for every finite x.
template <binary_float T>
[[nodiscard]] constexpr T cos(T x) noexcept {
  if (is_nan(x)) return x;
  if (is_inf(x)) return std::numeric_limits<T>::quiet_NaN();
  const double a = abs(static_cast<double>(x));
  if (a < 0x1p-30) return dd::nearest<T>(dd::fast_two_sum(1.0, -(a * a / 2)));
  const detail::reduced red = detail::reduce_pi_over_2(a);
  double_double c = (red.k & 1) == 0 ? detail::cos_poly(red.r) : detail::sin_poly(red.r);
  if (((red.k + 1) & 2) != 0) c = dd::neg(c);  // quadrants 1 and 2 are negative
  return dd::nearest<T>(c);
}

// atan x in (-pi/2, pi/2); signed zeros kept, atan(+-inf) = +-pi/2 rounded.
template <binary_float T>
[[nodiscard]] constexpr T atan(T x) noexcept {
  if (is_nan(x) || x == 0) return x;
  const double a = abs(static_cast<double>(x));
  double_double r{};
  if (a < 0x1p-30) {  // atan a = a - a^3/3 + ...
    r = dd::fast_two_sum(a, -(a * a * a / 3));
  } else if (a <= 1) {
    r = detail::atan_unit({a, 0});
  } else if (a < 0x1p60) {  // atan a = pi/2 - atan(1/a)
    r = dd::sub(detail::pi_over_2, detail::atan_unit(dd::div({1, 0}, {a, 0})));
  } else {  // pi/2 - 1/a + ..., and 1/a^3 is below 2^-180 (inf gives 1/a = 0)
    r = dd::add(detail::pi_over_2, is_inf(x) ? 0.0 : -1 / a);
  }
  return dd::nearest<T>(signbit(x) ? dd::neg(r) : r);
}

}  // namespace qfold::math
