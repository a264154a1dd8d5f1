// Quantization parameters of a tensor: scale, zero point, the clamp range [qmin, qmax] and the
// element type, with validation that names what is wrong.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "qfold/arith/result.hpp"

namespace qfold {

// Element type of a quantized tensor.
enum class dtype : std::uint8_t { int8, uint8, int16, uint16, int32 };

// False for a value cast into dtype from outside the enum (e.g. read from a file).
[[nodiscard]] constexpr bool is_valid(dtype t) noexcept {
  return t == dtype::int8 || t == dtype::uint8 || t == dtype::int16 || t == dtype::uint16 ||
         t == dtype::int32;
}

struct dtype_range {
  std::int64_t lo, hi;
};
// Contract: t is one of the five types (a made-up range would make every check vacuous).
[[nodiscard]] constexpr dtype_range range_of(dtype t) noexcept {
  detail::expects(is_valid(t), "range_of: dtype is int8, uint8, int16, uint16 or int32");
  switch (t) {
    case dtype::int8:
      return {-128, 127};
    case dtype::uint8:
      return {0, 255};
    case dtype::int16:
      return {-32768, 32767};
    case dtype::uint16:
      return {0, 65535};
    case dtype::int32:
      return {-2147483648LL, 2147483647LL};
  }
  return {0, 0};
}

// real = scale * (code - zero_point); codes live in [qmin, qmax] within the element type.
struct qparams {
  double scale = 1.0;
  std::int32_t zero_point = 0;
  std::int32_t qmin = -128;
  std::int32_t qmax = 127;
  dtype type = dtype::int8;

  friend constexpr bool operator==(const qparams&, const qparams&) = default;
};

// The C++ element type of a dtype: std::int8_t, std::uint8_t, std::int16_t, std::uint16_t,
// std::int32_t.
template <dtype D>
requires(is_valid(D)) using element_type_t = std::conditional_t<
    D == dtype::int8, std::int8_t,
    std::conditional_t<
        D == dtype::uint8, std::uint8_t,
        std::conditional_t<D == dtype::int16, std::int16_t,
                           std::conditional_t<D == dtype::uint16, std::uint16_t, std::int32_t>>>>;

// qparams whose element type is also part of the C++ type, so that the table generators can
// deduce their element types from their arguments (qparams::type is a run-time value, which no
// template argument can be deduced from, even in a constant expression). A typed_qparams<D> is a
// qparams and goes wherever one does; the generators still check that `type` equals D.
template <dtype D>
requires(is_valid(D)) struct typed_qparams : qparams {
  static constexpr dtype element_dtype = D;
  using element_type = element_type_t<D>;
};

// Full-range parameters of a type.
[[nodiscard]] constexpr qparams make_qparams(dtype t, double scale,
                                             std::int32_t zero_point) noexcept {
  const dtype_range r = range_of(t);
  return {scale, zero_point, static_cast<std::int32_t>(r.lo), static_cast<std::int32_t>(r.hi), t};
}
// The same with the type as a template argument: make_qparams<dtype::int8>(1.0 / 128, 0).
template <dtype D>
[[nodiscard]] constexpr typed_qparams<D> make_qparams(double scale,
                                                      std::int32_t zero_point) noexcept {
  return {make_qparams(D, scale, zero_point)};
}

namespace detail {
[[nodiscard]] constexpr bool is_finite(double x) noexcept {
  return ((std::bit_cast<std::uint64_t>(x) >> 52) & 0x7FF) != 0x7FF;
}
[[nodiscard]] constexpr bool is_subnormal(double x) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  return ((bits >> 52) & 0x7FF) == 0 && (bits & ((std::uint64_t{1} << 52) - 1)) != 0;
}
}  // namespace detail

// Errors: scale zero, negative, NaN, infinite or subnormal (its reciprocal overflows, so every
// quantize gives inf or NaN: no framework means such a scale); zero point outside the type; qmin
// > qmax or either outside the type; a type outside the enum.
[[nodiscard]] constexpr result<void> validate(const qparams& q) {
  if (q.scale != q.scale) return fail(errc::scale_nan, "qparams: scale is NaN");
  if (!detail::is_finite(q.scale)) return fail(errc::scale_infinite, "qparams: scale is infinite");
  if (q.scale < 0) return fail(errc::scale_negative, "qparams: scale < 0");
  if (q.scale == 0) return fail(errc::scale_zero, "qparams: scale is zero");
  if (detail::is_subnormal(q.scale))
    return fail(errc::scale_subnormal, "qparams: scale is subnormal");
  if (!is_valid(q.type)) return fail(errc::illegal_type, "qparams: unknown element type");
  const dtype_range r = range_of(q.type);
  if (q.zero_point < r.lo || q.zero_point > r.hi)
    return fail(errc::zero_point_out_of_range, "qparams: zero point outside the element type");
  if (q.qmin < r.lo || q.qmax > r.hi)
    return fail(errc::value_out_of_range, "qparams: qmin/qmax outside the element type");
  if (q.qmin > q.qmax) return fail(errc::empty_range, "qparams: qmin > qmax");
  return {};
}

}  // namespace qfold
