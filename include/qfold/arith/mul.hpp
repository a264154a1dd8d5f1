// TOSA MUL on integers (spec MUL.tosac): i8 x i8, i16 x i16 and i32 x i32 into i32; for i32 a
// right shift with round half up (range-checked), for shift 0 the low 32 bits of the product.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"

namespace qfold {

// The operand types TOSA MUL accepts (exactly these; no promotions).
template <class T>
concept mul_operand =
    std::same_as<T, std::int8_t> || std::same_as<T, std::int16_t> || std::same_as<T, std::int32_t>;

namespace checked {
// Errors: shift outside 0..63, shift != 0 for i8/i16 operands, a shifted result outside int32.
template <mul_operand T>
[[nodiscard]] constexpr result<std::int32_t> mul(T a, T b, int shift = 0) {
  if (shift < 0 || shift > 63) return fail(errc::shift_out_of_range, "mul: shift outside 0..63");
  if (shift != 0 && !std::same_as<T, std::int32_t>)
    return fail(errc::shift_out_of_range, "mul: shift must be 0 unless operands are i32");
  const std::int64_t product = std::int64_t{a} * std::int64_t{b};
  if (shift == 0) return wrap_int32(product);  // wraps, never saturates (46341^2 -> -2147479015)
  // The spec adds 2^(shift-1) in int64: for shift 63 and INT32_MIN^2 that sum overflows, so the
  // spec's result is undefined there; refuse it rather than return the exact value 1.
  if (product > std::numeric_limits<std::int64_t>::max() - (std::int64_t{1} << (shift - 1)))
    return fail(errc::result_out_of_range, "mul: a * b + 2^(shift-1) overflows the spec's int64");
  const std::int64_t r = shift_right_round_half_up(product, shift);
  if (!fits_int32(r)) return fail(errc::result_out_of_range, "mul: shifted result outside int32");
  return static_cast<std::int32_t>(r);
}
}  // namespace checked

// Unchecked: shift rules and the int32 range of a shifted result are the caller's contract.
template <mul_operand T>
[[nodiscard]] constexpr std::int32_t mul(T a, T b, int shift = 0) {
  const result<std::int32_t> r = checked::mul(a, b, shift);
  detail::expects(r.has_value(),
                  "mul: 0 <= shift <= 63, shift 0 unless i32, shifted result fits int32");
  return *r;
}

}  // namespace qfold
