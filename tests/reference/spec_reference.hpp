// qref: an independent, deliberately literal reference model of the integer arithmetic that
// qfold reproduces. Test-only code. It is written from the primary sources listed next to each
// function, not from the qfold implementation.
//
// House rules for this file:
//   * Every intermediate is an i128 (__int128), so nothing in *this* file can overflow. Where a
//     source does its arithmetic in a narrower type and that type would overflow, wrap or be
//     asked to shift by an illegal amount, the model notices and reports it.
//   * Each function follows its source step by step. Nothing is optimised, nothing is constexpr.
//   * Functions return Result<T>. ok == true means the source defines the result and every
//     REQUIRE / assert / CHECK / DCHECK it states holds. ok == false says what failed:
//       kind: what sort of rule failed (REQUIRE, ERROR_IF, assert, ...; see Kind),
//       why:  which rule (see Why).
//     When ok == false, `value` is the "as if two's complement" result where the source would
//     still produce one (UB overflow and narrowing evaluated as wrap-around, an assert that
//     compiles out under NDEBUG and whose code then goes on without UB); otherwise it is zero.
//     Tests should compare `value` only when ok is true, unless they mean to check that
//     secondary value on purpose.
//   * The first failing rule, in the order the source checks them, is the one reported.
//
// Conventions: `>>` on a signed value in this file is an arithmetic (floor) shift, which C++20
// guarantees. `shift` means the TOSA right shift unless a function says otherwise (TFLite and
// CMSIS-NN use a signed *left* shift exponent).
//
// Requires GCC or Clang (for __int128). Compiles warning-free under -std=c++20 -Wall -Wextra
// -Wpedantic -Wconversion -Wsign-conversion -Wold-style-cast -Wshadow.

#ifndef QFOLD_TESTS_REFERENCE_SPEC_REFERENCE_HPP
#define QFOLD_TESTS_REFERENCE_SPEC_REFERENCE_HPP

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace qref {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

using std::int16_t;
using std::int32_t;
using std::int64_t;
using std::uint32_t;
using std::uint64_t;

// =============================================================================================
// Result type
// =============================================================================================

enum class Kind {
  none,              // ok
  type_range,        // an argument is not representable in the parameter type the source uses
  require,           // TOSA REQUIRE (spec) / REQUIRE or ASSERT_MSG in the TOSA reference model
  error_if,          // TOSA ERROR_IF: the graph is invalid
  assert_fail,       // C/C++ assert() (gone under NDEBUG)
  check_fail,        // TFLITE_CHECK / TFLITE_CHECK_LE: aborts in every build
  dcheck_fail,       // TFLITE_DCHECK: debug builds only
  python_exception,  // Python raises (AssertionError, ValueError, OverflowError)
  undefined,         // the C/C++ source has undefined behaviour for this input
  narrowing,         // an out-of-range conversion to a narrower integer (implementation-
                     // defined before C++20 / in C; every mainstream compiler wraps)
  not_modelled,      // the source is not a bit-exact function here (INEXACT_ROUND)
};

enum class Why {
  none,
  // argument types
  value_not_int32,
  value_not_int48,
  multiplier_not_int32,
  multiplier_not_int16,
  shift_not_int8,
  operand_not_representable,  // MUL operand not representable in in_t
  unsupported_type,           // e.g. MUL with in_t == i48
  // TOSA scale helpers
  multiplier_negative,
  shift_out_of_range,
  value_out_of_range,  // apply_scale_32: value outside [-2^(shift-1), 2^(shift-1))
  result_not_int32,
  divisor_zero,                // reciprocal_scale
  multiplier_overflows_int32,  // reciprocal_scale result does not fit int32_t
  // RESCALE
  error_if,  // one or more ERROR_IFs hold; see rescale_error_if()
  input_not_representable,
  input_zp_not_representable,
  output_zp_not_representable,
  inexact_round,           // rounding_mode == INEXACT_ROUND: not bit-exact
  output_zp_add_overflow,  // apply_add_s<int32_t>(result, output_zp) REQUIRE
  // MUL
  mul_shift_out_of_range,  // REQUIRE(0 <= shift <= 63)
  mul_shift_not_zero,      // REQUIRE(in_t == i32 || shift == 0)
  mul_result_not_int32,
  int64_overflow,  // the source's int64_t arithmetic overflows
  // multiplier/shift derivation from a double
  nan_or_inf,
  unsupported_scale_width,
  mantissa_too_large,  // "shifted mantissa exceeds ..." (never fires for finite input)
  shift_below_2,       // MLIR computeMultiplierAndShift returns false
  // C/C++ integer hazards
  signed_overflow,           // signed int overflow (UB)
  shift_count_out_of_range,  // shift count negative or >= width (UB) / assert on exponent
  exponent_out_of_range,     // gemmlowp RoundingDivideByPOT assert(0 <= exponent <= 31)
  input_out_of_range,        // TFLite int64 overload: x outside [-2^47, 2^47)
  narrowing_to_int32,        // int64 -> int32 conversion of an out-of-range value
};

template <class T>
struct Result {
  bool ok;
  T value;
  Kind kind;
  Why why;
};

template <class T>
inline Result<T> success(T v) {
  return Result<T>{true, v, Kind::none, Why::none};
}
template <class T>
inline Result<T> failure(Kind k, Why w, T v = T{}) {
  return Result<T>{false, v, k, w};
}

// Multiplier and TOSA *right* shift, as used by RESCALE (scale ~= multiplier * 2^-shift).
struct MulShift {
  int64_t multiplier;
  int shift;
  friend bool operator==(const MulShift&, const MulShift&) = default;
};

// TFLite convention: quantized_multiplier with fixed point at bit 31, and a signed *left* shift
// (scale ~= multiplier * 2^(left_shift - 31)).
struct TfliteMulShift {
  int32_t multiplier;
  int left_shift;
  friend bool operator==(const TfliteMulShift&, const TfliteMulShift&) = default;
};

// =============================================================================================
// Small literal helpers (i128 only)
// =============================================================================================

inline i128 pow2(int n) {  // 2^n for 0 <= n <= 125 (no sign bit involved, so the shift is exact)
  return static_cast<i128>(1) << n;
}

inline bool fits_signed(i128 v, int bits) {  // v in [-2^(bits-1), 2^(bits-1))
  return v >= -pow2(bits - 1) && v < pow2(bits - 1);
}
inline bool fits_unsigned(i128 v, int bits) {  // v in [0, 2^bits)
  return v >= 0 && v < pow2(bits);
}
inline bool fits_int32(i128 v) { return fits_signed(v, 32); }
inline bool fits_int64(i128 v) { return fits_signed(v, 64); }

// Floor division by 2^n (what an arithmetic right shift does). Written as a division plus a
// correction, rather than `>>`, so the floor is explicit.
inline i128 floor_shift(i128 v, int n) {
  const i128 d = pow2(n);
  i128 q = v / d;  // C++ division truncates toward zero
  if (v % d != 0 && v < 0) q = q - 1;
  return q;
}

// C++ truncating division by 2^n (what gemmlowp's `/ (1ll << 31)` does).
inline i128 trunc_div_pow2(i128 v, int n) { return v / pow2(n); }

// The low `bits` bits of v, read back as a two's complement signed number.
inline i128 wrap_signed(i128 v, int bits) {
  const i128 m = pow2(bits);
  i128 r = v % m;
  if (r < 0) r = r + m;
  if (r >= pow2(bits - 1)) r = r - m;
  return r;
}
inline int32_t wrap32(i128 v) { return static_cast<int32_t>(wrap_signed(v, 32)); }

// `a & mask` on two's complement values, where mask = 2^n - 1 (n <= 64): the low n bits of a,
// as a non-negative number.
inline i128 low_bits(i128 a, int n) {
  const i128 m = pow2(n);
  i128 r = a % m;
  if (r < 0) r = r + m;
  return r;
}

// =============================================================================================
// Tensor element types used by RESCALE / MUL
// =============================================================================================

enum class DType { i8, i16, i32, i48 };

inline int bits_of(DType t) {
  switch (t) {
    case DType::i8:
      return 8;
    case DType::i16:
      return 16;
    case DType::i32:
      return 32;
    case DType::i48:
      return 48;
  }
  return 0;
}

// Is v a value of type t, read as signed or (if is_unsigned) unsigned?
inline bool representable(DType t, bool is_unsigned, int64_t v) {
  return is_unsigned ? fits_unsigned(v, bits_of(t)) : fits_signed(v, bits_of(t));
}

// Raw storage bits -> value: keep the low bits_of(t) bits of `raw`, then zero-extend (unsigned)
// or sign-extend (signed). This is TOSA's zero_extend / sign_extend of a stored element, e.g.
// from_bits(i8, true, -56) == 200 and from_bits(i8, false, 200) == -56. Use it when a test holds
// storage bits rather than values; rescale_element() itself takes values.
inline int64_t from_bits(DType t, bool is_unsigned, int64_t raw) {
  const int b = bits_of(t);
  if (is_unsigned) return static_cast<int64_t>(low_bits(raw, b));
  return static_cast<int64_t>(wrap_signed(raw, b));
}

// =============================================================================================
// 1. TOSA scale helpers
//    Source: arm/tosa-specification pseudocode/library/scale_helpers.tosac (stored at 833bc89):
//    apply_scale_32, apply_scale_16, reciprocal_scale. Cross-checked against the TOSA reference
//    model reference_model/src/quant_util.h (QuantUtil::apply_scale_32 / apply_scale_16 /
//    reciprocal_scale), which asserts the int32 result range but not the value range.
// =============================================================================================

// apply_scale_32(int32 value, int32 multiplier, int8 shift, bool double_round).
// value and multiplier are taken wide so tests can pass values the spec's types cannot hold;
// those are reported as Kind::type_range (value_not_int32, multiplier_not_int32, and
// shift_not_int8 for a shift outside [-128, 127]). Then, in the spec's order:
//   REQUIRE(multiplier >= 0)                           -> multiplier_negative
//   REQUIRE(2 <= shift <= 62)                          -> shift_out_of_range
//   REQUIRE(-(1<<(shift-1)) <= value < 1<<(shift-1))   -> value_out_of_range
// The spec comment says the result then always fits int32 (it does; the model still checks, as
// the reference model does, and would report result_not_int32).
inline Result<int32_t> apply_scale_32(int64_t value, int64_t multiplier, int shift,
                                      bool double_round) {
  if (!fits_int32(value)) return failure<int32_t>(Kind::type_range, Why::value_not_int32);
  if (!fits_int32(multiplier)) return failure<int32_t>(Kind::type_range, Why::multiplier_not_int32);
  if (shift < -128 || shift > 127) return failure<int32_t>(Kind::type_range, Why::shift_not_int8);

  if (!(multiplier >= 0)) return failure<int32_t>(Kind::require, Why::multiplier_negative);
  if (!(2 <= shift && shift <= 62)) return failure<int32_t>(Kind::require, Why::shift_out_of_range);
  const i128 v = value;
  if (!(v >= -pow2(shift - 1) && v < pow2(shift - 1)))
    return failure<int32_t>(Kind::require, Why::value_out_of_range);

  i128 round = pow2(shift - 1);
  if (double_round) {
    if (shift > 31 && v >= 0) round = round + pow2(30);
    if (shift > 31 && v < 0) round = round - pow2(30);
  }
  i128 result = v * static_cast<i128>(multiplier) + round;
  result = floor_shift(result, shift);
  if (!fits_int32(result))
    return failure<int32_t>(Kind::require, Why::result_not_int32, wrap32(result));
  return success(static_cast<int32_t>(result));
}

// apply_scale_16(int48 value, int16 multiplier, int8 shift).
//   type checks (value int48, multiplier int16)         -> Kind::type_range
//   REQUIRE(multiplier >= 0)                            -> multiplier_negative
//   REQUIRE(2 <= shift <= 62)                           -> shift_out_of_range
//   (no REQUIRE on the value range; no double rounding)
//   REQUIRE(result fits int32)                          -> result_not_int32
inline Result<int32_t> apply_scale_16(int64_t value, int64_t multiplier, int shift) {
  if (!fits_signed(value, 48)) return failure<int32_t>(Kind::type_range, Why::value_not_int48);
  if (!fits_signed(multiplier, 16))
    return failure<int32_t>(Kind::type_range, Why::multiplier_not_int16);
  if (shift < -128 || shift > 127) return failure<int32_t>(Kind::type_range, Why::shift_not_int8);

  if (!(multiplier >= 0)) return failure<int32_t>(Kind::require, Why::multiplier_negative);
  if (!(2 <= shift && shift <= 62)) return failure<int32_t>(Kind::require, Why::shift_out_of_range);
  const i128 round = pow2(shift - 1);
  i128 result = static_cast<i128>(value) * static_cast<i128>(multiplier) + round;
  result = floor_shift(result, shift);
  if (!fits_int32(result))
    return failure<int32_t>(Kind::require, Why::result_not_int32, wrap32(result));
  return success(static_cast<int32_t>(result));
}

// count_leading_zeros for a 32-bit operand, as the spec's arithmetic_helpers.tosac defines it
// (clz(0) == 32). Written as the spec's bit-by-bit loop.
inline int clz32(uint32_t a) {
  if (a == 0) return 32;
  uint32_t mask = 0x80000000u;
  int acc = 0;
  while ((mask & a) == 0) {
    mask = mask >> 1;
    acc = acc + 1;
  }
  return acc;
}

// reciprocal_scale(uint32 value) -> (multiplier, shift)
//   REQUIRE(value > 0)                                 -> divisor_zero
//   k = 32 - clz(value - 1); multiplier = (((1<<30) + 1) << k) / value; shift = 30 + k
// The spec's comment claims 2^30 <= multiplier < 2^31. That is false for value in
// {2^30 + 1, 2^31 + 1, 2^31 + 2}, where the quotient is exactly 2^31 and does not fit the int32_t
// multiplier field: reported as Kind::narrowing / multiplier_overflows_int32 (value carries the
// true quotient 2^31). Note value == 1 gives (2^30 + 1, 30), not (2^30, 30).
inline Result<MulShift> reciprocal_scale(uint32_t value) {
  if (!(value > 0)) return failure<MulShift>(Kind::require, Why::divisor_zero);
  const int k = 32 - clz32(value - 1u);
  const i128 numerator = (pow2(30) + 1) * pow2(k);
  const i128 multiplier = numerator / static_cast<i128>(value);
  const MulShift r{static_cast<int64_t>(multiplier), 30 + k};
  if (!fits_int32(multiplier))
    return failure<MulShift>(Kind::narrowing, Why::multiplier_overflows_int32, r);
  return success(r);
}

// =============================================================================================
// 2. TOSA RESCALE, one element
//    Source: arm/tosa-specification pseudocode/operators/RESCALE.tosac (stored at 0816ff9),
//    pseudocode/library/arithmetic_helpers.tosac (apply_add_s, apply_clip_s/u), tosa.xml (type
//    pairs). Where the spec text is ambiguous the TOSA reference model decides
//    (reference_model/src/ops/type_conversion.cpp OpRescale::checkTensorAttributes / eval, and
//    arith_util.h applyClip):
//      * the spec typo `value = sign_extend<int48_t>(value)` means the input value;
//      * unsigned output is clamped with *signed* comparisons, so negative results become 0
//        (a literal apply_clip_u on zero-extended bits would send them to the maximum);
//      * adding output_zp REQUIREs no int32 overflow (apply_add_s), it does not saturate.
// =============================================================================================

enum class RoundingMode : int { single_round = 1, inexact_round = 2, double_round = 3 };

struct RescaleParams {
  DType in_t = DType::i8;
  DType out_t = DType::i8;
  bool scale32 = true;
  RoundingMode rounding_mode = RoundingMode::single_round;
  bool per_channel = false;
  bool input_unsigned = false;
  bool output_unsigned = false;
  int64_t input_zp = 0;          // a value (0..255 for u8, 0 or 32768 for u16, -128..127 for i8)
  int64_t output_zp = 0;         // likewise for out_t
  int64_t multiplier = 1 << 30;  // multiplier[c] for this element's channel c (mul_t: i32 or i16)
  int64_t shift = 30;            // shift[c] (i8)
  int rank = 1;                  // rank of the input tensor (only per_channel && rank < 1 matters)
};

// Every ERROR_IF of RESCALE.tosac, by name, plus two graph-validity rules from elsewhere
// (marked). A field is true when that condition HOLDS (i.e. the graph is invalid for it).
struct RescaleErrorIf {
  // RESCALE.tosac, in order:
  bool input_zp_nonzero_for_type = false;  // in_t not i8 and not (i16 && input_unsigned), zp != 0
  bool output_zp_nonzero_for_type =
      false;  // out_t not i8 and not (i16 && output_unsigned), zp != 0
  bool input_u16_zp_not_0_or_32768 = false;
  bool output_u16_zp_not_0_or_32768 = false;
  bool scale32_with_i48_input = false;
  bool double_round_without_scale32 = false;
  bool input_and_output_unsigned = false;
  bool i32_output_with_input_unsigned = false;
  bool i32_input_with_output_unsigned = false;
  bool i48_input_with_output_unsigned = false;
  bool i48_input_unsigned = false;
  bool i32_input_unsigned = false;
  bool i32_output_unsigned = false;
  bool per_channel_rank_below_1 = false;
  // tosa.xml: RESCALE has no i48 output (supported pairs are {i8,i16,i32,i48} -> {i8,i16,i32}).
  bool unsupported_type_pair = false;
  // Reference model checkTensorAttributes: rounding_mode must be SINGLE, INEXACT or DOUBLE.
  bool invalid_rounding_mode = false;

  bool any() const { return !held().empty(); }

  std::vector<std::string> held() const {
    std::vector<std::string> v;
    if (input_zp_nonzero_for_type) v.emplace_back("input_zp_nonzero_for_type");
    if (output_zp_nonzero_for_type) v.emplace_back("output_zp_nonzero_for_type");
    if (input_u16_zp_not_0_or_32768) v.emplace_back("input_u16_zp_not_0_or_32768");
    if (output_u16_zp_not_0_or_32768) v.emplace_back("output_u16_zp_not_0_or_32768");
    if (scale32_with_i48_input) v.emplace_back("scale32_with_i48_input");
    if (double_round_without_scale32) v.emplace_back("double_round_without_scale32");
    if (input_and_output_unsigned) v.emplace_back("input_and_output_unsigned");
    if (i32_output_with_input_unsigned) v.emplace_back("i32_output_with_input_unsigned");
    if (i32_input_with_output_unsigned) v.emplace_back("i32_input_with_output_unsigned");
    if (i48_input_with_output_unsigned) v.emplace_back("i48_input_with_output_unsigned");
    if (i48_input_unsigned) v.emplace_back("i48_input_unsigned");
    if (i32_input_unsigned) v.emplace_back("i32_input_unsigned");
    if (i32_output_unsigned) v.emplace_back("i32_output_unsigned");
    if (per_channel_rank_below_1) v.emplace_back("per_channel_rank_below_1");
    if (unsupported_type_pair) v.emplace_back("unsupported_type_pair");
    if (invalid_rounding_mode) v.emplace_back("invalid_rounding_mode");
    return v;
  }
};

inline RescaleErrorIf rescale_error_if(const RescaleParams& p) {
  const bool in_i8 = p.in_t == DType::i8, in_i16 = p.in_t == DType::i16;
  const bool in_i32 = p.in_t == DType::i32, in_i48 = p.in_t == DType::i48;
  const bool out_i8 = p.out_t == DType::i8, out_i16 = p.out_t == DType::i16;
  const bool out_i32 = p.out_t == DType::i32, out_i48 = p.out_t == DType::i48;
  RescaleErrorIf e;
  e.input_zp_nonzero_for_type = !in_i8 && (!in_i16 || !p.input_unsigned) && p.input_zp != 0;
  e.output_zp_nonzero_for_type = !out_i8 && (!out_i16 || !p.output_unsigned) && p.output_zp != 0;
  e.input_u16_zp_not_0_or_32768 =
      in_i16 && p.input_unsigned && p.input_zp != 0 && p.input_zp != 32768;
  e.output_u16_zp_not_0_or_32768 =
      out_i16 && p.output_unsigned && p.output_zp != 0 && p.output_zp != 32768;
  e.scale32_with_i48_input = p.scale32 && in_i48;
  e.double_round_without_scale32 = !p.scale32 && p.rounding_mode == RoundingMode::double_round;
  e.input_and_output_unsigned = p.input_unsigned && p.output_unsigned;
  e.i32_output_with_input_unsigned = out_i32 && p.input_unsigned;
  e.i32_input_with_output_unsigned = in_i32 && p.output_unsigned;
  e.i48_input_with_output_unsigned = in_i48 && p.output_unsigned;
  e.i48_input_unsigned = in_i48 && p.input_unsigned;
  e.i32_input_unsigned = in_i32 && p.input_unsigned;
  e.i32_output_unsigned = out_i32 && p.output_unsigned;
  e.per_channel_rank_below_1 = p.per_channel && p.rank < 1;
  e.unsupported_type_pair = out_i48;
  const int rm = static_cast<int>(p.rounding_mode);
  e.invalid_rounding_mode = !(rm == 1 || rm == 2 || rm == 3);
  return e;
}

// One RESCALE output element, as a value of out_t (read unsigned if output_unsigned).
// `in` is the input element as a *value* (use from_bits() to convert storage bits).
// Checks, in order:
//   1. any ERROR_IF                                          -> Kind::error_if / Why::error_if
//   2. in, input_zp, output_zp representable in their types   -> Kind::type_range
//      multiplier representable in mul_t (i32 if scale32 else i16), shift in i8
//   3. rounding_mode == INEXACT_ROUND                          -> Kind::not_modelled
//   4. apply_scale_32 / apply_scale_16 REQUIREs                -> Kind::require (see above)
//   5. apply_add_s<int32_t>(result, output_zp) REQUIRE         -> output_zp_add_overflow
// then the clamp to out_t (unsigned: [0, 2^bits - 1], negatives to 0; signed: [min, max]).
inline Result<int64_t> rescale_element(const RescaleParams& p, int64_t in) {
  if (rescale_error_if(p).any()) return failure<int64_t>(Kind::error_if, Why::error_if);

  if (!representable(p.in_t, p.input_unsigned, in))
    return failure<int64_t>(Kind::type_range, Why::input_not_representable);
  if (!representable(p.in_t, p.input_unsigned, p.input_zp))
    return failure<int64_t>(Kind::type_range, Why::input_zp_not_representable);
  if (!representable(p.out_t, p.output_unsigned, p.output_zp))
    return failure<int64_t>(Kind::type_range, Why::output_zp_not_representable);
  if (p.scale32 ? !fits_int32(p.multiplier) : !fits_signed(p.multiplier, 16))
    return failure<int64_t>(Kind::type_range,
                            p.scale32 ? Why::multiplier_not_int32 : Why::multiplier_not_int16);
  if (!fits_signed(p.shift, 8)) return failure<int64_t>(Kind::type_range, Why::shift_not_int8);

  if (p.rounding_mode == RoundingMode::inexact_round)
    return failure<int64_t>(Kind::not_modelled, Why::inexact_round);

  // value = extend48(in) - extend48(input_zp). `in` and `input_zp` are already values, i.e. the
  // zero- or sign-extended readings, so the extension is the identity here. Both fit int48.
  const i128 value = static_cast<i128>(in) - static_cast<i128>(p.input_zp);

  Result<int32_t> scaled{};
  if (p.scale32) {
    // The spec passes the int48 value to apply_scale_32's int32 parameter. After the ERROR_IFs
    // (i32 input => zp 0; i48 input => !scale32) it always fits; apply_scale_32 reports it if not.
    scaled = apply_scale_32(static_cast<int64_t>(value), p.multiplier, static_cast<int>(p.shift),
                            p.rounding_mode == RoundingMode::double_round);
  } else {
    scaled = apply_scale_16(static_cast<int64_t>(value), p.multiplier, static_cast<int>(p.shift));
  }
  if (!scaled.ok) return failure<int64_t>(scaled.kind, scaled.why);

  // extended_out_zp = zero_extend<int32_t>(output_zp) or sign_extend<int32_t>(output_zp): again
  // the value itself. apply_add_s<int32_t>: exact sum, REQUIRE it fits int32 (no saturation).
  const i128 sum = static_cast<i128>(scaled.value) + static_cast<i128>(p.output_zp);
  if (!fits_int32(sum))
    return failure<int64_t>(Kind::require, Why::output_zp_add_overflow,
                            static_cast<int64_t>(wrap32(sum)));

  const int ob = bits_of(p.out_t);
  i128 lo = 0, hi = 0;
  if (p.output_unsigned) {
    lo = 0;             // minimum_u<out_t>
    hi = pow2(ob) - 1;  // maximum_u<out_t>
  } else {
    lo = -pow2(ob - 1);     // minimum_s<out_t>
    hi = pow2(ob - 1) - 1;  // maximum_s<out_t>
  }
  i128 out = sum;
  if (out < lo) out = lo;  // signed comparison, as the reference model's applyClip does
  if (out > hi) out = hi;
  return success(static_cast<int64_t>(out));
}

// =============================================================================================
// 3. TOSA MUL (integer forms), one element
//    Source: arm/tosa-specification pseudocode/operators/MUL.tosac (stored at 1b690f8) and
//    arithmetic_helpers.tosac apply_mul_s. Reference model: ewise_binary.cpp OpMul::register_fcn.
//   REQUIRE(0 <= shift <= 63)                     -> mul_shift_out_of_range
//   REQUIRE(in_t == i32 || shift == 0)            -> mul_shift_not_zero
//   i32 && shift > 0: p = a*b; p = (p + (1 << (shift-1))) >> shift; REQUIRE(p fits int32)
//   otherwise: low 32 bits of the product (wraps; for i8/i16 it never needs to).
// One extra report: for shift == 63 and a == b == INT32_MIN, the spec's (and the reference
// model's) int64_t sum product + round = 2^62 + 2^62 overflows int64. The exact result would be 1;
// the model reports Kind::undefined / int64_overflow (value 1) so a library can refuse it.
// =============================================================================================

inline Result<int32_t> tosa_mul(DType in_t, int64_t a, int64_t b, int64_t shift) {
  if (in_t == DType::i48) return failure<int32_t>(Kind::type_range, Why::unsupported_type);
  if (!representable(in_t, false, a) || !representable(in_t, false, b))
    return failure<int32_t>(Kind::type_range, Why::operand_not_representable);
  if (!fits_signed(shift, 8)) return failure<int32_t>(Kind::type_range, Why::shift_not_int8);

  if (!(0 <= shift && shift <= 63))
    return failure<int32_t>(Kind::require, Why::mul_shift_out_of_range);
  if (!(in_t == DType::i32 || shift == 0))
    return failure<int32_t>(Kind::require, Why::mul_shift_not_zero);

  const i128 product = static_cast<i128>(a) * static_cast<i128>(b);
  if (in_t == DType::i32 && shift > 0) {
    const int s = static_cast<int>(shift);
    const i128 round = pow2(s - 1);
    const i128 sum = product + round;
    const i128 result = floor_shift(sum, s);
    if (!fits_int64(sum))
      return failure<int32_t>(Kind::undefined, Why::int64_overflow, wrap32(result));
    if (!fits_int32(result))
      return failure<int32_t>(Kind::require, Why::mul_result_not_int32, wrap32(result));
    return success(static_cast<int32_t>(result));
  }
  // apply_mul_s<int32_t>(static_cast<int32_t>(a), static_cast<int32_t>(b)): int64 product, then
  // static_cast<int32_t>: the low 32 bits.
  return success(wrap32(product));
}

// =============================================================================================
// 4. Multiplier and shift from a double scale (ExecuTorch Arm backend, MLIR TOSA utils)
//
// Exactness: both sources compute frexp(scale) -> (mant, exp), then round(mant * 2^offset).
// frexp and the multiplication by 2^offset are exact in binary64 (a power-of-two rescaling that
// stays inside the normal range), so the only rounding is the final round-to-integer, and it is
// fully determined by the 53-bit significand: with sig = mant * 2^53 (an integer in
// [2^52, 2^53)), the integer part is sig >> (53 - offset) and the fraction is the low
// (53 - offset) bits. The model therefore takes the double apart bit by bit (std::bit_cast),
// normalises subnormals the way frexp does, and rounds with integer arithmetic: no libm, no
// dependence on FP environment, excess precision or -ffast-math, and half-to-even (Python
// round) vs half-away-from-zero (std::round) is a one-line difference.
// =============================================================================================

struct DoubleParts {
  bool is_nan = false;
  bool is_inf = false;
  bool is_zero = false;
  bool negative = false;
  uint64_t sig = 0;  // |x| = sig * 2^(exp - 53), sig in [2^52, 2^53) when finite and nonzero
  int exp = 0;       // frexp exponent: |x| = (sig / 2^53) * 2^exp, sig / 2^53 in [0.5, 1)
};

inline DoubleParts decompose(double x) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  DoubleParts d;
  d.negative = (bits >> 63) != 0;
  const int e = static_cast<int>((bits >> 52) & 0x7FFu);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  if (e == 0x7FF) {
    if (frac != 0)
      d.is_nan = true;
    else
      d.is_inf = true;
    return d;
  }
  if (e == 0) {
    if (frac == 0) {
      d.is_zero = true;  // frexp(+-0) == (+-0, 0)
      return d;
    }
    // Subnormal: |x| = frac * 2^-1074. frexp normalises: find the top set bit p of frac.
    int p = 63;
    while (((frac >> p) & 1u) == 0) p = p - 1;
    d.sig = frac << (52 - p);  // now in [2^52, 2^53)
    d.exp = p - 1073;          // frac * 2^-1074 == (sig / 2^53) * 2^(p - 1073)
    return d;
  }
  // Normal: |x| = (2^52 + frac) * 2^(e - 1075) = (sig / 2^53) * 2^(e - 1022).
  d.sig = (uint64_t{1} << 52) | frac;
  d.exp = e - 1022;
  return d;
}

// round(sig / 2^drop) for sig > 0, drop >= 1: half to even (Python round) or half away from zero
// (std::round; away from zero on the magnitude is the same thing).
inline i128 round_shifted(uint64_t sig, int drop, bool half_to_even) {
  const i128 s = static_cast<i128>(sig);
  const i128 q = floor_shift(s, drop);
  const i128 r = s - q * pow2(drop);
  const i128 half = pow2(drop - 1);
  if (r > half) return q + 1;
  if (r < half) return q;
  if (!half_to_even) return q + 1;
  return (q % 2 == 0) ? q : q + 1;
}

// ExecuTorch backends/arm/operators/op_tosa_rescale.py::_compute_multiplier_and_shift, one
// scale (stored at e32f827). Python semantics:
//   scale_width not 16/32                 -> ValueError     (python_exception,
//   unsupported_scale_width) NaN / inf: math.frexp passes them through, round() raises ValueError /
//   OverflowError
//                                         -> python_exception, nan_or_inf
//   mant, exp = frexp(scale); m = round(mant * 2^offset)  (half to even; offset = 31 or 15)
//   assert m <= 2^offset                  (never fails)
//   if m == 2^offset: m //= 2; exp += 1
//   shift = offset - exp
//   assert m <= 2^offset - 1              (never fails)
//   if shift > 62: m >>= min(31, shift - 62); shift = 62   (floor shift; m may become 0)
//   assert m >= 0                         -> python_exception, multiplier_negative (scale < 0)
//   assert 2 <= shift <= 62               -> python_exception, shift_out_of_range (scale >= ~2^29
//                                            for width 32, >= ~2^13 for width 16)
// +0.0 and -0.0 both give (0, offset), e.g. (0, 31): round(-0.0) is the int 0.
inline Result<MulShift> et_compute_multiplier_and_shift(double scale, int scale_width = 32) {
  int offset = 0;
  if (scale_width == 16)
    offset = 15;
  else if (scale_width == 32)
    offset = 31;
  else
    return failure<MulShift>(Kind::python_exception, Why::unsupported_scale_width);

  const DoubleParts d = decompose(scale);
  if (d.is_nan || d.is_inf) return failure<MulShift>(Kind::python_exception, Why::nan_or_inf);

  i128 m = 0;
  int exp = 0;
  if (!d.is_zero) {
    const i128 mag = round_shifted(d.sig, 53 - offset, /*half_to_even=*/true);
    m = d.negative ? -mag : mag;
    exp = d.exp;
  }
  if (!(m <= pow2(offset)))
    return failure<MulShift>(Kind::python_exception, Why::mantissa_too_large);
  if (m == pow2(offset)) {
    m = floor_shift(m, 1);  // //= 2
    exp = exp + 1;
  }
  int shift = offset - exp;
  if (!(m <= pow2(offset) - 1))
    return failure<MulShift>(Kind::python_exception, Why::mantissa_too_large);
  if (shift > 62) {
    const int by = (shift - 62 < 31) ? shift - 62 : 31;
    m = floor_shift(m, by);  // Python >> is a floor shift, also for negatives
    shift = 62;
  }
  const MulShift r{static_cast<int64_t>(m), shift};
  if (!(m >= 0)) return failure<MulShift>(Kind::python_exception, Why::multiplier_negative, r);
  if (!(shift >= 2 && shift <= 62))
    return failure<MulShift>(Kind::python_exception, Why::shift_out_of_range, r);
  return success(r);
}

// MLIR mlir/lib/Dialect/Tosa/Utils/QuantUtils.cpp: computeMultiplierAndShift(scale, multiplier,
// shift, scaleWidth) -> bool, which calls computeMultiplierAndShiftTosaScale16/32. Modelled as
// of llvm-project after PR #129606 (merged 2025-03): the clamp is at 62 and the function
// returns false when shift < 2. Older versions: clamp at 63 (e.g. stored 45d17e2) and/or a void
// return with no shift check (stored 3d1687c has clamp 62 but still void).
//   scaleWidth not 16/32                  -> assert(0) and return false (assert_fail,
//   unsupported_scale_width) mant = frexp(scale); shiftedM = std::round(mant * 2^offset)   (half
//   AWAY from zero) assert(shiftedM <= 2^offset)          NaN/inf fail this (NaN compares false;
//   inf > 2^offset)
//                                         -> assert_fail, nan_or_inf (in NDEBUG builds the
//                                            later static_cast<int32_t> of NaN/inf is UB)
//   if shiftedM == 2^offset: /= 2, ++shift
//   shift = offset - exp
//   assert(shiftedM <= INT32_MAX)         (never fails)
//   multiplier = int32(shiftedM)
//   if shift > 62: multiplier >>= min(31, shift - 62); shift = 62
//   return shift >= 2                     -> ok == false, Kind::none, shift_below_2 (value holds
//                                            the multiplier/shift the function wrote)
// Unlike ExecuTorch there is no check on the sign: a negative scale yields a negative
// multiplier and ok == true.
inline Result<MulShift> mlir_compute_multiplier_and_shift(double scale, int scale_width = 32) {
  int offset = 0;
  if (scale_width == 16)
    offset = 15;
  else if (scale_width == 32)
    offset = 31;
  else
    return failure<MulShift>(Kind::assert_fail, Why::unsupported_scale_width);

  const DoubleParts d = decompose(scale);
  if (d.is_nan || d.is_inf) return failure<MulShift>(Kind::assert_fail, Why::nan_or_inf);

  i128 shifted_m = 0;
  int exp = 0;
  if (!d.is_zero) {
    const i128 mag = round_shifted(d.sig, 53 - offset, /*half_to_even=*/false);
    shifted_m = d.negative ? -mag : mag;
    exp = d.exp;
  }
  if (!(shifted_m <= pow2(offset)))
    return failure<MulShift>(Kind::assert_fail, Why::mantissa_too_large);
  if (shifted_m == pow2(offset)) {
    shifted_m = shifted_m / 2;
    exp = exp + 1;
  }
  int shift = offset - exp;
  if (!(shifted_m <= pow2(31) - 1))
    return failure<MulShift>(Kind::assert_fail, Why::mantissa_too_large);
  i128 multiplier = shifted_m;  // fits int32 (>= -2^31 as |mant| < 1)
  if (shift > 62) {
    const int by = (shift - 62 < 31) ? shift - 62 : 31;
    multiplier = floor_shift(multiplier, by);  // int32 >> : arithmetic
    shift = 62;
  }
  const MulShift r{static_cast<int64_t>(multiplier), shift};
  if (shift < 2) return failure<MulShift>(Kind::none, Why::shift_below_2, r);
  return success(r);
}

// =============================================================================================
// 5. TFLite / TFLite Micro
//    QuantizeMultiplier: tensorflow/lite/kernels/internal/quantization_util.cc (TFLM stored at
//      7fadd41; TF at dfd50c9), non-TFLITE_EMULATE_FLOAT path. TfLiteRound == std::round.
//    MultiplyByQuantizedMultiplier: tensorflow/lite/kernels/internal/common.cc (TFLM stored at
//      2e50943, TF at 4713c15), both the TFLITE_SINGLE_ROUNDING and the default (#else) branch.
//    gemmlowp: google/gemmlowp fixedpoint/fixedpoint.h (stored at 032a599):
//      SaturatingRoundingDoublingHighMul<int32_t>, RoundingDivideByPOT<int32_t>.
//    C++ rules applied (TFLite is C++17): `1 << n` for n == 31 is INT32_MIN (defined since C++14
//    via the unsigned-representable rule), n >= 32 is UB; int32 `*` overflow is UB (TF marks
//    these functions TFLITE_NO_SANITIZE_INTEGER_OVERFLOW, which only silences UBSan).
// =============================================================================================

// QuantizeMultiplier(double) -> (quantized_multiplier, left shift).
//   d == 0 (incl. -0.0)                  -> (0, 0)
//   NaN / inf: static_cast<int64_t> of a NaN/inf double is UB -> undefined, nan_or_inf
//   q = frexp(d, &shift); q_fixed = (int64)round(q * 2^31)   (half away from zero)
//   TFLITE_CHECK(q_fixed <= 2^31); if q_fixed == 2^31: q_fixed /= 2, ++shift
//   TFLITE_CHECK_LE(q_fixed, INT32_MAX)
//   if shift < -31: shift = 0, q_fixed = 0            (flush tiny scales)
//   [single_rounding build only] if shift > 30: shift = 30, q_fixed = 2^31 - 1   (saturate)
// Negative d is accepted: q_fixed lies in [-2^31, -2^30] and is NOT renormalised, so e.g.
// d = -(1 - 2^-33) gives (INT32_MIN, 0).
// QuantizeMultiplier's steps after the mantissa (shared with the kernel variants' references):
// the CHECKs, a mantissa of exactly 2^31 halved, tiny shifts flushed, the single-rounding cap.
inline Result<TfliteMulShift> tflite_finish_multiplier(i128 q_fixed, int shift,
                                                       bool single_rounding) {
  if (!(q_fixed <= pow2(31)))
    return failure<TfliteMulShift>(Kind::check_fail, Why::mantissa_too_large);
  if (q_fixed == pow2(31)) {
    q_fixed = q_fixed / 2;
    shift = shift + 1;
  }
  if (!(q_fixed <= pow2(31) - 1))
    return failure<TfliteMulShift>(Kind::check_fail, Why::mantissa_too_large);
  if (shift < -31) {
    shift = 0;
    q_fixed = 0;
  }
  if (single_rounding && shift > 30) {
    shift = 30;
    q_fixed = pow2(31) - 1;
  }
  return success(TfliteMulShift{static_cast<int32_t>(q_fixed), shift});
}

inline Result<TfliteMulShift> tflite_quantize_multiplier(double d, bool single_rounding = false) {
  const DoubleParts p = decompose(d);
  if (p.is_zero) return success(TfliteMulShift{0, 0});
  if (p.is_nan || p.is_inf) return failure<TfliteMulShift>(Kind::undefined, Why::nan_or_inf);

  int shift = p.exp;
  const i128 mag = round_shifted(p.sig, 53 - 31, /*half_to_even=*/false);
  i128 q_fixed = p.negative ? -mag : mag;
  return tflite_finish_multiplier(q_fixed, shift, single_rounding);
}

// gemmlowp SaturatingRoundingDoublingHighMul(int32 a, int32 b) (== NEON VQRDMULH):
//   a == b == INT32_MIN -> INT32_MAX; else ab = (int64)a*b, nudge = ab >= 0 ? 2^30 : 1 - 2^30,
//   (int32)((ab + nudge) / 2^31) with C++ truncating division. Net effect: ab / 2^31 rounded to
//   nearest with ties toward +infinity. Always defined.
inline int32_t gemmlowp_srdhm(int32_t a, int32_t b) {
  const bool overflow = (a == b) && (a == INT32_MIN);
  const i128 ab = static_cast<i128>(a) * static_cast<i128>(b);
  const i128 nudge = (ab >= 0) ? pow2(30) : (1 - pow2(30));
  const i128 ab_x2_high32 = trunc_div_pow2(ab + nudge, 31);
  return overflow ? INT32_MAX : static_cast<int32_t>(ab_x2_high32);
}

// gemmlowp RoundingDivideByPOT(int32 x, int exponent):
//   assert(0 <= exponent <= 31)          -> assert_fail, exponent_out_of_range
//   mask = (1ll << exponent) - 1; remainder = x & mask;
//   threshold = (mask >> 1) + (x < 0 ? 1 : 0); result = (x >> exponent) + (remainder > threshold)
//   Rounds to nearest, ties AWAY from zero.
inline Result<int32_t> gemmlowp_rounding_divide_by_pot(int32_t x, int exponent) {
  if (!(exponent >= 0 && exponent <= 31))
    return failure<int32_t>(Kind::assert_fail, Why::exponent_out_of_range);
  const i128 mask = pow2(exponent) - 1;
  const i128 remainder = low_bits(x, exponent);  // x & mask
  const i128 threshold = floor_shift(mask, 1) + ((x < 0) ? 1 : 0);
  const i128 result = floor_shift(x, exponent) + ((remainder > threshold) ? 1 : 0);
  return success(static_cast<int32_t>(result));
}

// `x * (1 << left_shift)` as C++17 evaluates it on int (see the section comment).
inline Result<int32_t> cpp17_int_mul_pow2(int32_t x, int left_shift) {
  if (left_shift < 0 || left_shift >= 32)
    return failure<int32_t>(Kind::undefined, Why::shift_count_out_of_range);
  const i128 p = (left_shift == 31) ? static_cast<i128>(INT32_MIN) : pow2(left_shift);
  const i128 prod = static_cast<i128>(x) * p;
  if (!fits_int32(prod))
    return failure<int32_t>(Kind::undefined, Why::signed_overflow, wrap32(prod));
  return success(static_cast<int32_t>(prod));
}

// MultiplyByQuantizedMultiplier(int32 x, int32 quantized_multiplier, int shift), shift = LEFT.
// Default (double rounding) build:
//   left = max(shift, 0), right = max(-shift, 0)
//   RoundingDivideByPOT(SRDHM(x * (1 << left), q), right)
//   UB: left >= 32, or x * (1 << left) overflows int32   -> undefined (value: wrapped product
//       carried through when the shift count itself was legal)
//   right > 31 -> gemmlowp assert                         -> assert_fail, exponent_out_of_range
//   No check on the sign of q.
// TFLITE_SINGLE_ROUNDING build:
//   TFLITE_DCHECK(q >= 0)                                 -> dcheck_fail, multiplier_negative
//   TFLITE_DCHECK(-31 <= shift <= 30)                     -> dcheck_fail, shift_out_of_range
//   total = 31 - shift; r = ((int64)x*q + 2^(total-1)) >> total
//   TFLITE_DCHECK(r fits int32)                           -> dcheck_fail, result_not_int32
// Single rounding equals TOSA apply_scale_32(x, q, 31 - shift, false) minus TOSA's value REQUIRE.
inline Result<int32_t> tflite_multiply_by_quantized_multiplier(int32_t x, int32_t q, int shift,
                                                               bool single_rounding = false) {
  if (single_rounding) {
    if (!(q >= 0)) return failure<int32_t>(Kind::dcheck_fail, Why::multiplier_negative);
    if (!(shift >= -31 && shift <= 30))
      return failure<int32_t>(Kind::dcheck_fail, Why::shift_out_of_range);
    const int total_shift = 31 - shift;
    const i128 round = pow2(total_shift - 1);
    i128 result = static_cast<i128>(x) * static_cast<i128>(q) + round;
    result = floor_shift(result, total_shift);
    if (!fits_int32(result))
      return failure<int32_t>(Kind::dcheck_fail, Why::result_not_int32, wrap32(result));
    return success(static_cast<int32_t>(result));
  }
  const int left_shift = shift > 0 ? shift : 0;
  // -shift is itself UB in the source for shift == INT_MIN; any shift < -31 fails the assert.
  if (shift < -31) return failure<int32_t>(Kind::assert_fail, Why::exponent_out_of_range);
  const int right_shift = shift > 0 ? 0 : -shift;
  const Result<int32_t> scaled_x = cpp17_int_mul_pow2(x, left_shift);
  if (!scaled_x.ok && scaled_x.why == Why::shift_count_out_of_range) return scaled_x;
  const int32_t high = gemmlowp_srdhm(scaled_x.value, q);
  const Result<int32_t> out = gemmlowp_rounding_divide_by_pot(high, right_shift);
  if (!scaled_x.ok) return failure<int32_t>(scaled_x.kind, scaled_x.why, out.value);
  return out;
}

// MultiplyByQuantizedMultiplier(int64 x, int32 quantized_multiplier, int shift), the 16x8 path.
enum class TfliteInt64Variant {
  double_rounding,  // current TF/TFLM default (#else) branch: assert()s, guard, silent narrowing
  single_rounding,  // current TFLITE_SINGLE_ROUNDING branch: DCHECKs, guard, DCHECK on result
  legacy_no_guard,  // older TF common.h (inline in the header): asserts on q and shift only,
                    // reduced = (q + (1 << 15)) >> 16 with no 0x7FFF0000 guard
};
// Current versions (both builds), in order:
//   q >= 0                        -> assert_fail / dcheck_fail, multiplier_negative
//   -31 <= shift < 8              -> assert_fail / dcheck_fail, shift_out_of_range
//   -2^47 <= x < 2^47             -> assert_fail / dcheck_fail, input_out_of_range
//   reduced = q < 0x7FFF0000 ? (q + 2^15) >> 16 : 0x7FFF          (so reduced <= 0x7FFF)
//   total = 15 - shift; r = (x*reduced + 2^(total-1)) >> total
//   double_rounding: `int32_t result = x >> total_shift` narrows with no check
//                                 -> narrowing, narrowing_to_int32 (value = wrapped)
//   single_rounding: TFLITE_DCHECK(r fits int32) -> dcheck_fail, result_not_int32
// legacy_no_guard: no x-range assert; (q + 2^15) overflows int32 for q >= 0x7FFF8000
//                                 -> undefined, signed_overflow; x*reduced + round can overflow
//                                    int64 for huge x -> undefined, int64_overflow; then narrowing.
// For q in [0x7FFF0000, 0x7FFF7FFF] guard and no-guard agree (both 0x7FFF).
inline Result<int32_t> tflite_multiply_by_quantized_multiplier_int64(
    int64_t x, int32_t q, int shift,
    TfliteInt64Variant variant = TfliteInt64Variant::double_rounding) {
  const Kind ck =
      (variant == TfliteInt64Variant::single_rounding) ? Kind::dcheck_fail : Kind::assert_fail;
  if (!(q >= 0)) return failure<int32_t>(ck, Why::multiplier_negative);
  if (!(shift >= -31 && shift < 8)) return failure<int32_t>(ck, Why::shift_out_of_range);
  if (variant != TfliteInt64Variant::legacy_no_guard && !fits_signed(x, 48))
    return failure<int32_t>(ck, Why::input_out_of_range);

  Kind first_kind = Kind::none;
  Why first_why = Why::none;
  i128 reduced = 0;
  if (variant == TfliteInt64Variant::legacy_no_guard) {
    const i128 sum = static_cast<i128>(q) + pow2(15);  // int32 arithmetic in the source
    if (!fits_int32(sum)) {
      first_kind = Kind::undefined;
      first_why = Why::signed_overflow;
    }
    reduced = floor_shift(wrap_signed(sum, 32), 16);
  } else {
    reduced = (q < 0x7FFF0000) ? floor_shift(static_cast<i128>(q) + pow2(15), 16) : 0x7FFF;
  }
  const int total_shift = 15 - shift;
  const i128 acc = static_cast<i128>(x) * reduced + pow2(total_shift - 1);
  if (!fits_int64(acc) && first_kind == Kind::none) {
    first_kind = Kind::undefined;
    first_why = Why::int64_overflow;
  }
  const i128 result = floor_shift(wrap_signed(acc, 64), total_shift);
  if (!fits_int32(result) && first_kind == Kind::none) {
    first_kind =
        (variant == TfliteInt64Variant::single_rounding) ? Kind::dcheck_fail : Kind::narrowing;
    first_why = (variant == TfliteInt64Variant::single_rounding) ? Why::result_not_int32
                                                                 : Why::narrowing_to_int32;
  }
  if (first_kind != Kind::none) return failure<int32_t>(first_kind, first_why, wrap32(result));
  return success(static_cast<int32_t>(result));
}

// =============================================================================================
// 6. CMSIS-NN
//    Source: ARM-software/CMSIS-NN Include/arm_nnsupportfunctions.h (snapshot 99f736a,
//    2026-07-15): arm_nn_doubling_high_mult, arm_nn_doubling_high_mult_no_sat,
//    arm_nn_divide_by_power_of_two, arm_nn_requantize (CMSIS_NN_USE_SINGLE_ROUNDING and the
//    default C branch), arm_nn_requantize_s64, REDUCE_MULTIPLIER. The C branches are modelled;
//    the CMSIS_NN_USE_REQUANTIZE_INLINE_ASSEMBLY branch computes the same values (see README).
//    C rules applied: `1 << 31` on int is UB in C (unlike C++14+); int32 overflow is UB;
//    out-of-range conversion to int32_t is implementation-defined (reported as narrowing).
// =============================================================================================

// arm_nn_doubling_high_mult (saturating; "matches VQRDMULH"): nudge 2^30, or 1 - 2^30 when
// exactly one operand is negative; truncating division by 2^31; INT32_MIN*INT32_MIN -> INT32_MAX.
// Same values as gemmlowp_srdhm for every input.
inline int32_t cmsis_doubling_high_mult(int32_t m1, int32_t m2) {
  i128 mult = pow2(30);
  if ((m1 < 0) != (m2 < 0)) mult = 1 - mult;
  mult = mult + static_cast<i128>(m1) * static_cast<i128>(m2);
  int32_t result = static_cast<int32_t>(trunc_div_pow2(mult, 31));
  if (m1 == m2 && m1 == INT32_MIN) result = INT32_MAX;
  return result;
}

// arm_nn_doubling_high_mult_no_sat: (int32_t)((2^30 + (int64)m1*m2) >> 31), an arithmetic
// (floor) shift: round half toward +infinity, like SRDHM, but with no saturation. The only
// input whose result leaves int32 is m1 == m2 == INT32_MIN (2^31), reported as narrowing with
// value INT32_MIN (gemmlowp gives INT32_MAX there).
inline Result<int32_t> cmsis_doubling_high_mult_no_sat(int32_t m1, int32_t m2) {
  const i128 mult = pow2(30) + static_cast<i128>(m1) * static_cast<i128>(m2);
  const i128 result = floor_shift(mult, 31);
  if (!fits_int32(result))
    return failure<int32_t>(Kind::narrowing, Why::narrowing_to_int32, wrap32(result));
  return success(static_cast<int32_t>(result));
}

// arm_nn_divide_by_power_of_two(dividend, exponent), documented range [0, 31]:
//   remainder_mask = (1 << exponent) - 1; remainder = mask & dividend; result = dividend >>
//   exponent; threshold = mask >> 1; if (result < 0) threshold++; if (remainder > threshold)
//   result++;
// Ties away from zero. It tests the sign of the *shifted result*, gemmlowp tests the sign of the
// dividend; for an arithmetic shift they are the same (a negative dividend always shifts to a
// value <= -1), so the two agree on every input.
// UB in C: exponent == 31 ((1 << 31) overflows int, then INT_MIN - 1 overflows) -> undefined,
// signed_overflow, value computed with mask 0x7FFFFFFF; exponent < 0 or > 31 -> undefined,
// shift_count_out_of_range.
inline Result<int32_t> cmsis_divide_by_power_of_two(int32_t dividend, int32_t exponent) {
  if (exponent < 0 || exponent > 31)
    return failure<int32_t>(Kind::undefined, Why::shift_count_out_of_range);
  const i128 remainder_mask = pow2(exponent) - 1;
  const i128 remainder = low_bits(dividend, exponent);
  i128 result = floor_shift(dividend, exponent);
  i128 threshold = floor_shift(remainder_mask, 1);
  if (result < 0) threshold = threshold + 1;
  if (remainder > threshold) result = result + 1;
  if (exponent == 31)
    return failure<int32_t>(Kind::undefined, Why::signed_overflow, static_cast<int32_t>(result));
  return success(static_cast<int32_t>(result));
}

// arm_nn_requantize(val, multiplier, shift), shift = LEFT shift exponent, documented range
// [-31, 30], multiplier documented [INT32_MIN + 1, INT32_MAX] (negative allowed).
// Default C branch:
//   divide_by_power_of_two(doubling_high_mult_no_sat(val * (1 << LEFT_SHIFT(shift)), multiplier),
//                          RIGHT_SHIFT(shift))
//   UB: LEFT_SHIFT >= 31 (C), val * (1 << n) overflow, RIGHT_SHIFT == 31 (so the documented
//   shift == -31 is UB in the C branch), RIGHT_SHIFT > 31. Narrowing: no_sat on INT32_MIN^2.
// CMSIS_NN_USE_SINGLE_ROUNDING:
//   total = 31 - shift; new_val = val * (int64)multiplier;
//   int32_t result = new_val >> (total - 1); result = (result + 1) >> 1;
//   == floor((val*multiplier + 2^(total-1)) / 2^total), the same value as TFLite single rounding,
//   but with no checks: a shift count outside [0, 63] is UB (shift >= 31 or shift <= -33), the
//   intermediate (one bit before the final rounding) narrows silently to int32 (reported as
//   narrowing), and `result + 1` overflows when the intermediate is INT32_MAX (UB).
inline Result<int32_t> cmsis_requantize(int32_t val, int32_t multiplier, int32_t shift,
                                        bool single_rounding = false) {
  if (single_rounding) {
    const i128 total_shift = 31 - static_cast<i128>(shift);
    const i128 new_val = static_cast<i128>(val) * static_cast<i128>(multiplier);
    const i128 count = total_shift - 1;
    if (count < 0 || count > 63)
      return failure<int32_t>(Kind::undefined, Why::shift_count_out_of_range);
    const i128 wide = floor_shift(new_val, static_cast<int>(count));
    const i128 result32 = wrap_signed(wide, 32);  // `int32_t result = ...` narrows here
    const i128 result = floor_shift(wrap_signed(result32 + 1, 32), 1);
    if (!fits_int32(wide))
      return failure<int32_t>(Kind::narrowing, Why::narrowing_to_int32,
                              static_cast<int32_t>(result));
    if (result32 == INT32_MAX) return failure<int32_t>(Kind::undefined, Why::signed_overflow);
    return success(static_cast<int32_t>(result));
  }
  const int32_t left = shift > 0 ? shift : 0;
  // RIGHT_SHIFT(shift) > 31 makes the divide's shifts UB (and -INT32_MIN is UB by itself).
  if (shift < -31) return failure<int32_t>(Kind::undefined, Why::shift_count_out_of_range);
  const int32_t right = shift > 0 ? 0 : -shift;
  Kind first_kind = Kind::none;
  Why first_why = Why::none;
  i128 scaled = 0;
  if (left >= 31) {
    // 1 << 31 is UB in C; 1 << 32 and beyond is UB everywhere. No value to carry on with.
    return failure<int32_t>(Kind::undefined,
                            left == 31 ? Why::signed_overflow : Why::shift_count_out_of_range);
  }
  scaled = static_cast<i128>(val) * pow2(left);
  if (!fits_int32(scaled)) {
    first_kind = Kind::undefined;
    first_why = Why::signed_overflow;
    scaled = wrap_signed(scaled, 32);
  }
  const Result<int32_t> high =
      cmsis_doubling_high_mult_no_sat(static_cast<int32_t>(scaled), multiplier);
  if (!high.ok && first_kind == Kind::none) {
    first_kind = high.kind;
    first_why = high.why;
  }
  const Result<int32_t> out = cmsis_divide_by_power_of_two(high.value, right);
  if (!out.ok && out.why == Why::shift_count_out_of_range) return out;
  if (!out.ok && first_kind == Kind::none) {
    first_kind = out.kind;
    first_why = out.why;
  }
  if (first_kind != Kind::none) return failure<int32_t>(first_kind, first_why, out.value);
  return success(out.value);
}

// REDUCE_MULTIPLIER(m): m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF. Always defined for int32
// m.
inline int32_t cmsis_reduce_multiplier(int32_t m) {
  if (m < 0x7FFF0000) return static_cast<int32_t>(floor_shift(static_cast<i128>(m) + pow2(15), 16));
  return 0x7FFF;
}

// arm_nn_requantize_s64(int64 val, int32 reduced_multiplier, int32 shift), shift documented
// [-31, 7], val documented [-2^47, 2^47):
//   new_val = val * reduced_multiplier                (int64: UB if it overflows)
//   int32_t result = new_val >> (14 - shift)          (UB if the count is outside [0, 63];
//                                                      then a NARROWING to int32 -- one bit
//                                                      before the final rounding step)
//   result = (result + 1) >> 1                        (int32: UB if result == INT32_MAX)
// Mathematically floor((val*rm + 2^(14-shift)) / 2^(15-shift)), the same formula as TFLite's
// int64 overload, but only exact while the intermediate fits int32, i.e. for final results in
// [-2^30, 2^30 - 1]; TFLite covers the whole int32 range.
inline Result<int32_t> cmsis_requantize_s64(int64_t val, int32_t reduced_multiplier,
                                            int32_t shift) {
  const i128 new_val = static_cast<i128>(val) * static_cast<i128>(reduced_multiplier);
  if (!fits_int64(new_val)) return failure<int32_t>(Kind::undefined, Why::int64_overflow);
  const i128 count = 14 - static_cast<i128>(shift);
  if (count < 0 || count > 63)
    return failure<int32_t>(Kind::undefined, Why::shift_count_out_of_range);
  const i128 wide = floor_shift(new_val, static_cast<int>(count));
  Kind first_kind = Kind::none;
  Why first_why = Why::none;
  if (!fits_int32(wide)) {
    first_kind = Kind::narrowing;
    first_why = Why::narrowing_to_int32;
  }
  const i128 result32 = wrap_signed(wide, 32);
  if (result32 == INT32_MAX && first_kind == Kind::none) {
    first_kind = Kind::undefined;
    first_why = Why::signed_overflow;
  }
  const i128 result = floor_shift(wrap_signed(result32 + 1, 32), 1);
  if (first_kind != Kind::none)
    return failure<int32_t>(first_kind, first_why, static_cast<int32_t>(result));
  return success(static_cast<int32_t>(result));
}

// =============================================================================================
// Names, for test messages
// =============================================================================================

inline const char* to_string(Kind k) {
  switch (k) {
    case Kind::none:
      return "none";
    case Kind::type_range:
      return "type_range";
    case Kind::require:
      return "require";
    case Kind::error_if:
      return "error_if";
    case Kind::assert_fail:
      return "assert_fail";
    case Kind::check_fail:
      return "check_fail";
    case Kind::dcheck_fail:
      return "dcheck_fail";
    case Kind::python_exception:
      return "python_exception";
    case Kind::undefined:
      return "undefined";
    case Kind::narrowing:
      return "narrowing";
    case Kind::not_modelled:
      return "not_modelled";
  }
  return "?";
}

inline const char* to_string(Why w) {
  switch (w) {
    case Why::none:
      return "none";
    case Why::value_not_int32:
      return "value_not_int32";
    case Why::value_not_int48:
      return "value_not_int48";
    case Why::multiplier_not_int32:
      return "multiplier_not_int32";
    case Why::multiplier_not_int16:
      return "multiplier_not_int16";
    case Why::shift_not_int8:
      return "shift_not_int8";
    case Why::operand_not_representable:
      return "operand_not_representable";
    case Why::unsupported_type:
      return "unsupported_type";
    case Why::multiplier_negative:
      return "multiplier_negative";
    case Why::shift_out_of_range:
      return "shift_out_of_range";
    case Why::value_out_of_range:
      return "value_out_of_range";
    case Why::result_not_int32:
      return "result_not_int32";
    case Why::divisor_zero:
      return "divisor_zero";
    case Why::multiplier_overflows_int32:
      return "multiplier_overflows_int32";
    case Why::error_if:
      return "error_if";
    case Why::input_not_representable:
      return "input_not_representable";
    case Why::input_zp_not_representable:
      return "input_zp_not_representable";
    case Why::output_zp_not_representable:
      return "output_zp_not_representable";
    case Why::inexact_round:
      return "inexact_round";
    case Why::output_zp_add_overflow:
      return "output_zp_add_overflow";
    case Why::mul_shift_out_of_range:
      return "mul_shift_out_of_range";
    case Why::mul_shift_not_zero:
      return "mul_shift_not_zero";
    case Why::mul_result_not_int32:
      return "mul_result_not_int32";
    case Why::int64_overflow:
      return "int64_overflow";
    case Why::nan_or_inf:
      return "nan_or_inf";
    case Why::unsupported_scale_width:
      return "unsupported_scale_width";
    case Why::mantissa_too_large:
      return "mantissa_too_large";
    case Why::shift_below_2:
      return "shift_below_2";
    case Why::signed_overflow:
      return "signed_overflow";
    case Why::shift_count_out_of_range:
      return "shift_count_out_of_range";
    case Why::exponent_out_of_range:
      return "exponent_out_of_range";
    case Why::input_out_of_range:
      return "input_out_of_range";
    case Why::narrowing_to_int32:
      return "narrowing_to_int32";
  }
  return "?";
}

}  // namespace qref

#endif  // QFOLD_TESTS_REFERENCE_SPEC_REFERENCE_HPP
