// Lookup-table types and their exact lookup semantics: 256-entry int8/uint8 tables in code order
// (TOSA TABLE, ExecuTorch, Vela) with conversion to TFLite's uint8-cast order, and the TOSA int16
// 513-entry interpolating table (unrounded TOSA lookup, rounded TFLite lookup, slope check).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "qfold/arith/result.hpp"

namespace qfold {

// 256 entries for an 8-bit input, entry i for input code (type minimum + i): for int8, entry 0
// is code -128 (TOSA TABLE order); for uint8, entry 0 is code 0. Out is the output element type.
template <class In, class Out>
requires((std::same_as<In, std::int8_t> ||
          std::same_as<In, std::uint8_t>)&&std::integral<Out>) struct table8 {
  std::array<Out, 256> values{};

  [[nodiscard]] static constexpr std::size_t index_of(In code) noexcept {
    return static_cast<std::size_t>(static_cast<int>(code) -
                                    static_cast<int>(std::numeric_limits<In>::min()));
  }
  // TOSA TABLE int8: out = table[in + 128].
  [[nodiscard]] constexpr Out operator()(In code) const noexcept { return values[index_of(code)]; }
  friend constexpr bool operator==(const table8&, const table8&) = default;
};

using int8_table = table8<std::int8_t, std::int8_t>;
using uint8_table = table8<std::uint8_t, std::uint8_t>;

// A table from data (an IR's attribute): exactly 256 entries in code order. Errors: size_mismatch.
template <class In, class Out>
[[nodiscard]] constexpr result<table8<In, Out>> table8_from(std::span<const Out> values) {
  if (values.size() != 256) return fail(errc::size_mismatch, "table8_from: not 256 entries");
  table8<In, Out> t;
  for (std::size_t i = 0; i < 256; ++i) t.values[i] = values[i];
  return t;
}

// TFLite's LUTPopulate stores an int8 table indexed by uint8_t(code): [0..127, -128..-1].
template <class Out>
[[nodiscard]] constexpr std::array<Out, 256> to_tflite_order(
    const table8<std::int8_t, Out>& t) noexcept {
  std::array<Out, 256> r{};
  for (int code = -128; code <= 127; ++code)
    r[static_cast<std::uint8_t>(code)] = t(static_cast<std::int8_t>(code));
  return r;
}
template <class Out>
[[nodiscard]] constexpr table8<std::int8_t, Out> from_tflite_order(
    const std::array<Out, 256>& v) noexcept {
  table8<std::int8_t, Out> t;
  for (int code = -128; code <= 127; ++code)
    t.values[t.index_of(static_cast<std::int8_t>(code))] = v[static_cast<std::uint8_t>(code)];
  return t;
}

// TOSA TABLE for int16 input: 513 knots, knot i at input -32768 + 128 i (knot 512 is the
// virtual point 32768). Lookup interpolates linearly in 16.7 fixed point.
struct int16_table {
  std::array<std::int16_t, 513> values{};
  friend constexpr bool operator==(const int16_table&, const int16_table&) = default;
};

// A TOSA int16 table from data: exactly 513 knots (slopes unchecked; see validate). Errors:
// size_mismatch.
[[nodiscard]] constexpr result<int16_table> int16_table_from(std::span<const std::int16_t> values) {
  if (values.size() != 513) return fail(errc::size_mismatch, "int16_table_from: not 513 knots");
  int16_table t;
  for (std::size_t i = 0; i < 513; ++i) t.values[i] = values[i];
  return t;
}

// The spec's REQUIRE: every slope (next - base) lies in int16. Errors name the first bad knot.
[[nodiscard]] constexpr result<void> validate(const int16_table& t) {
  for (std::size_t i = 0; i + 1 < t.values.size(); ++i) {
    const int slope = t.values[i + 1] - t.values[i];
    if (slope < -32768 || slope > 32767)
      return fail(errc::value_out_of_range, "int16_table: slope between knots outside int16", i);
  }
  return {};
}

namespace detail {
struct int16_segment {
  std::int32_t base, slope, frac;
};
[[nodiscard]] constexpr int16_segment segment(const int16_table& t, std::int16_t x) noexcept {
  const int index = (x + 32768) >> 7;  // 0..511
  const int frac = x & 0x7F;           // low 7 bits of the two's complement code
  const std::size_t i = static_cast<std::size_t>(index);
  return {t.values[i], t.values[i + 1] - t.values[i], frac};
}
}  // namespace detail

namespace checked {
// TOSA TABLE int16: (base << 7) + slope * frac, an unrounded int32 with 7 fractional bits.
[[nodiscard]] constexpr result<std::int32_t> tosa_lookup(const int16_table& t, std::int16_t x) {
  const auto s = detail::segment(t, x);
  if (s.slope < -32768 || s.slope > 32767)
    return fail(errc::value_out_of_range, "tosa_lookup: slope outside int16 (spec REQUIRE)");
  return s.base * 128 + s.slope * s.frac;
}
}  // namespace checked

// Unchecked: a valid slope is the caller's contract (validate() the table once).
[[nodiscard]] constexpr std::int32_t tosa_lookup(const int16_table& t, std::int16_t x) {
  const result<std::int32_t> r = checked::tosa_lookup(t, x);
  detail::expects(r.has_value(), "tosa_lookup: slope in int16");
  return *r;
}

// TFLite LUTLookup(int16): base + ((slope * frac + 64) >> 7), i.e. the TOSA result divided by
// 128 and rounded half up. Defined for every table (TFLite has no slope requirement).
[[nodiscard]] constexpr std::int16_t tflite_lookup(const int16_table& t, std::int16_t x) noexcept {
  const auto s = detail::segment(t, x);
  return static_cast<std::int16_t>(s.base + ((s.slope * s.frac + 64) >> 7));
}

}  // namespace qfold
