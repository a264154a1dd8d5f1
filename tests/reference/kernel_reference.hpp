// qref kernels: an independent, literal model of the vector and build variants of requantization
// that qfold's flavours reproduce. Test-only; same house rules as spec_reference.hpp (every
// intermediate an i128, each function follows its source step by step, Result<T> with ok == false
// where the source checks, asserts or has undefined behaviour). Written from the upstream code
// (named next to each function), never by calling qfold.
//
// Instruction semantics used for the NEON / Helium intrinsics, from the Arm architecture manuals
// (per 32-bit lane, esize 32):
//   VSHL (register, positive count n): the low 32 bits of x * 2^n (no saturation).
//   VRSHL (register, negative count -n): (x + 2^(n-1)) >> n, computed wider than 32 bits.
//   VQDMULH: sat32((2 * a * b) >> 32).   VQRDMULH: sat32((2 * a * b + 2^31) >> 32).
//   VQADD / VQSUB: saturating.           VAND: bitwise.   VSHR #31: arithmetic shift.
#ifndef QFOLD_TESTS_REFERENCE_KERNEL_REFERENCE_HPP
#define QFOLD_TESTS_REFERENCE_KERNEL_REFERENCE_HPP

#include <bit>
#include <cstdint>

#include "reference/spec_reference.hpp"

namespace qref::kernel {

inline i128 sat(i128 v, int bits) {
  if (v > pow2(bits - 1) - 1) return pow2(bits - 1) - 1;
  if (v < -pow2(bits - 1)) return -pow2(bits - 1);
  return v;
}
inline i128 sat32(i128 v) { return sat(v, 32); }

// Bitwise AND of two values read as `bits`-bit two's complement words, read back signed.
inline i128 and_bits(i128 a, i128 b, int bits) {
  const auto ua = static_cast<uint64_t>(low_bits(a, bits));
  const auto ub = static_cast<uint64_t>(low_bits(b, bits));
  return wrap_signed(static_cast<i128>(ua & ub), bits);
}

// ---- lanes -----------------------------------------------------------------------------------
inline i128 vshl(i128 x, i128 n) {  // n >= 0 only (the kernels never shift left by < 0)
  return wrap_signed(x * pow2(static_cast<int>(n)), 32);
}
inline i128 vrshl(i128 x, i128 n) {  // n <= 0: rounding right shift by -n
  if (n >= 0) return wrap_signed(x * pow2(static_cast<int>(n)), 32);
  const int r = static_cast<int>(-n);
  if (r >= 33) return 0;  // not reached by the kernels modelled here
  return floor_shift(x + pow2(r - 1), r);
}
inline i128 vqdmulh(i128 a, i128 b) { return sat32(floor_shift(2 * a * b, 32)); }
inline i128 vqrdmulh(i128 a, i128 b) { return sat32(floor_shift(2 * a * b + pow2(31), 32)); }
inline i128 vqadd(i128 a, i128 b) { return sat32(a + b); }
inline i128 vqsub(i128 a, i128 b) { return sat32(a - b); }

// Whether VSHL by n changes the value (the lane "wraps").
inline bool vshl_wraps(i128 x, i128 n) { return !fits_int32(x * pow2(static_cast<int>(n))); }

// ---- TFLite NEON MultiplyByQuantizedMultiplier4Rows (one lane) --------------------------------
// tensorflow/lite/kernels/internal/common.h (its mirror compiler/mlir/lite/.../common.h),
// USE_NEON:
//   default: left = max(shift, 0), right = min(shift, 0);
//            vrshlq(vqrdmulhq(vshlq(x, left), q), right)
//   TFLITE_SINGLE_ROUNDING: TFLITE_DCHECK(q >= 0); right = min(-1, shift), left = shift - right;
//            vrshlq(vqdmulhq(vshlq(x, left), q), right)
// The scalar kernel's shift range -31..30 is the modelled domain (not_modelled outside).
inline Result<int32_t> tflite_4rows(int32_t x, int32_t q, int shift, bool single_rounding) {
  if (shift < -31 || shift > 30)
    return failure<int32_t>(Kind::not_modelled, Why::shift_out_of_range);
  if (single_rounding) {
    if (!(q >= 0)) return failure<int32_t>(Kind::dcheck_fail, Why::multiplier_negative);
    const int right = shift < -1 ? shift : -1;
    const int left = shift - right;
    return success(static_cast<int32_t>(vrshl(vqdmulh(vshl(x, left), q), right)));
  }
  const int left = shift > 0 ? shift : 0;
  const int right = shift < 0 ? shift : 0;
  return success(static_cast<int32_t>(vrshl(vqrdmulh(vshl(x, left), q), right)));
}
// The left shift the lane performs (to test lane_overflow::refuse).
inline int tflite_4rows_left_shift(int shift, bool single_rounding) {
  if (single_rounding) return shift - (shift < -1 ? shift : -1);
  return shift > 0 ? shift : 0;
}

// ---- CMSIS-NN Helium (MVE) -------------------------------------------------------------------
// Include/arm_nnsupportfunctions.h @ 99f736a (after ece5a38a), ARM_MATH_MVEI.
// arm_divide_by_power_of_two_mve(dividend, exponent):
//   shift = -exponent; fixup = (dividend & shift) >> 31; fixed = vqadd(dividend, fixup);
//   vrshl(fixed, shift)
inline i128 divide_by_power_of_two_mve(i128 dividend, i128 exponent) {
  const i128 shift = -exponent;
  const i128 fixup = floor_shift(and_bits(dividend, shift, 32), 31);
  return vrshl(vqadd(dividend, fixup), shift);
}
// arm_requantize_mve(val, multiplier, shift) and arm_requantize_mve_pred (one active lane):
//   single rounding: right = MIN(-1, shift); left = shift - right;
//     mve:  vrshl(vqdmulh(vshl(val, left), m), right)
//     pred: vrshl(vqrdmulh(vshl(val, left), m), right)
//   default: arm_divide_by_power_of_two_mve(vqrdmulh(vshl(val, LEFT_SHIFT(shift)), m),
//                                           RIGHT_SHIFT(shift))
// Modelled for the documented shift range -31..30.
inline Result<int32_t> cmsis_requantize_mve(int32_t val, int32_t m, int32_t shift,
                                            bool single_rounding, bool pred) {
  if (shift < -31 || shift > 30)
    return failure<int32_t>(Kind::not_modelled, Why::shift_out_of_range);
  if (single_rounding) {
    const int right = shift < -1 ? shift : -1;
    const int left = shift - right;
    const i128 a = vshl(val, left);
    const i128 h = pred ? vqrdmulh(a, m) : vqdmulh(a, m);
    return success(static_cast<int32_t>(vrshl(h, right)));
  }
  const int left = shift > 0 ? shift : 0;    // LEFT_SHIFT
  const int right = shift > 0 ? 0 : -shift;  // RIGHT_SHIFT
  return success(
      static_cast<int32_t>(divide_by_power_of_two_mve(vqrdmulh(vshl(val, left), m), right)));
}
// arm_requantize_mve_32x4 with every lane's (val, multiplier, shift), as its own code:
//   single: right = vminq(-1, shift); left = vqsubq(shift, right);
//           vrshl(vqdmulh(vshl(val, left), m), right)
//   default: p = shift > 0; left = p ? shift : 0; right = -(p ? 0 : shift);
//           divide_32x4(vqrdmulh(vshl(val, left), m), right), divide_32x4 as above.
inline Result<int32_t> cmsis_requantize_mve_32x4(int32_t val, int32_t m, int32_t shift,
                                                 bool single_rounding) {
  if (shift < -31 || shift > 30)
    return failure<int32_t>(Kind::not_modelled, Why::shift_out_of_range);
  if (single_rounding) {
    const i128 right = shift < -1 ? shift : -1;
    const i128 left = vqsub(shift, right);
    return success(static_cast<int32_t>(vrshl(vqdmulh(vshl(val, left), m), right)));
  }
  const bool p = shift > 0;
  const i128 left = p ? shift : 0;
  const i128 right = -(p ? 0 : static_cast<i128>(shift));
  return success(
      static_cast<int32_t>(divide_by_power_of_two_mve(vqrdmulh(vshl(val, left), m), right)));
}
inline int cmsis_mve_left_shift(int shift, bool single_rounding) {
  if (single_rounding) return shift - (shift < -1 ? shift : -1);
  return shift > 0 ? shift : 0;
}

// ---- CMSIS-NN arm_nn_requantize, CMSIS_NN_USE_SINGLE_ROUNDING, since ece5a38a ------------------
//   total_shift = 31 - shift; new_val = val * (int64)multiplier;
//   int64_t result = new_val >> (total_shift - 1); result = (result + 1) >> 1; return result;
// The return narrows int64 -> int32 (reported as narrowing, with the wrapped value).
// The default build is unchanged: spec_reference.hpp's cmsis_requantize(..., false).
inline Result<int32_t> cmsis_requantize_current(int32_t val, int32_t multiplier, int32_t shift,
                                                bool single_rounding) {
  if (!single_rounding) return cmsis_requantize(val, multiplier, shift, false);
  const i128 total_shift = 31 - static_cast<i128>(shift);
  const i128 new_val = static_cast<i128>(val) * multiplier;
  const i128 count = total_shift - 1;
  if (count < 0 || count > 63)
    return failure<int32_t>(Kind::undefined, Why::shift_count_out_of_range);
  i128 result = floor_shift(new_val, static_cast<int>(count));
  result = floor_shift(result + 1, 1);
  if (!fits_int32(result))
    return failure<int32_t>(Kind::narrowing, Why::narrowing_to_int32, wrap32(result));
  return success(static_cast<int32_t>(result));
}

// ---- TFLite QuantizeMultiplier under TFLITE_EMULATE_FLOAT -------------------------------------
// tensorflow/lite/kernels/internal/quantization_util.cc IntegerFrExp + QuantizeMultiplier.
// Returns the pair as TFLite does (negative scales give negative multipliers, NaN gives
// (0, INT_MAX)); +-inf trips TFLITE_CHECK(q_fixed <= 1 << 31) or CHECK_LE(q_fixed, INT32_MAX)
// ... for -inf q_fixed = INT64_MIN passes both checks and narrows; reported as check_fail too
// (its value is meaningless).
inline Result<TfliteMulShift> tflite_quantize_multiplier_emulated(double d,
                                                                  bool single_rounding = false) {
  if (d == 0.0) return success(TfliteMulShift{0, 0});
  const auto u = std::bit_cast<uint64_t>(d);
  constexpr uint64_t kSignMask = 0x8000000000000000ULL;
  constexpr uint64_t kExponentMask = 0x7ff0000000000000ULL;
  constexpr uint64_t kFractionMask = 0x000fffffffc00000ULL;
  int shift = 0;
  i128 q_fixed = 0;
  if ((u & ~kSignMask) == 0) {
    shift = 0;
    q_fixed = 0;
  } else {
    const auto exponent_part = static_cast<uint32_t>((u & kExponentMask) >> 52);
    if (exponent_part == 0x7ff) {
      if (u & kFractionMask) return success(TfliteMulShift{0, 2147483647});  // NaN: (0, INT_MAX)
      return failure<TfliteMulShift>(Kind::check_fail, Why::nan_or_inf);
    }
    shift = static_cast<int>(exponent_part) - 1023 + 1;
    i128 fraction = 0x40000000 + static_cast<i128>((u & kFractionMask) >> 22);
    if ((u & 0x003fffffULL) > 0x00200000ULL) fraction = fraction + 1;
    if (u & kSignMask) fraction = -fraction;
    q_fixed = fraction;
  }
  return tflite_finish_multiplier(q_fixed, shift, single_rounding);
}

// ---- ExecuTorch Cortex-M quantize_multiplier_aot (backends/cortex_m/passes/passes_utils.py) ----
//   if scale == 0.0: return 0, 0
//   mantissa, shift = math.frexp(scale); q_fixed = int(round(mantissa * (1 << 31)))
//   if q_fixed == 1 << 31: q_fixed //= 2; shift += 1
//   multiplier = max(INT32_MIN, min(INT32_MAX, q_fixed)); return multiplier, shift
// math.frexp normalises subnormals; round() of NaN raises ValueError, of inf OverflowError.
inline Result<TfliteMulShift> cortex_m_quantize_multiplier_aot(double scale) {
  if (scale == 0.0) return success(TfliteMulShift{0, 0});
  const auto u = std::bit_cast<uint64_t>(scale);
  const bool negative = (u >> 63) != 0;
  const auto biased = static_cast<int>((u >> 52) & 0x7ff);
  uint64_t frac = u & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return failure<TfliteMulShift>(Kind::python_exception, Why::nan_or_inf);
  int exponent = 0;
  i128 sig = 0;  // |scale| = sig * 2^(exponent - 53), 2^52 <= sig < 2^53
  if (biased == 0) {
    sig = frac;
    exponent = -1021;
    while (sig < pow2(52)) {
      sig = sig * 2;
      exponent = exponent - 1;
    }
  } else {
    sig = static_cast<i128>(frac) + pow2(52);
    exponent = biased - 1022;
  }
  // mantissa * 2^31 = sig / 2^22 exactly; Python round(): half to even.
  i128 q = floor_shift(sig, 22);
  const i128 rest = sig - q * pow2(22);
  if (rest > pow2(21) || (rest == pow2(21) && (q % 2) == 1)) q = q + 1;
  if (negative) q = -q;
  if (q == pow2(31)) {
    q = floor_shift(q, 1);
    exponent = exponent + 1;
  }
  if (q > pow2(31) - 1) q = pow2(31) - 1;
  if (q < -pow2(31)) q = -pow2(31);
  return success(TfliteMulShift{static_cast<int32_t>(q), exponent});
}

// ---- gemmlowp int16 (fixedpoint/fixedpoint.h @ 16e8662) ---------------------------------------
// SaturatingRoundingDoublingHighMul<int16_t>: overflow = a == b == INT16_MIN; ab = (int32)a * b;
//   nudge = ab >= 0 ? 1 << 14 : 1 - (1 << 14); (int16)((ab + nudge) / (1 << 15)), truncating.
inline int16_t gemmlowp_srdhm16(int16_t a, int16_t b) {
  const bool overflow = a == b && a == INT16_MIN;
  const i128 ab = static_cast<i128>(a) * b;
  const i128 nudge = ab >= 0 ? pow2(14) : 1 - pow2(14);
  const i128 high = trunc_div_pow2(ab + nudge, 15);
  return overflow ? INT16_MAX : static_cast<int16_t>(wrap_signed(high, 16));
}
// RoundingDivideByPOT<int16_t>(x, exponent): assert(0 <= exponent <= 31);
//   mask = Dup<int16_t>((1ll << exponent) - 1)  (converted to int16: -1 for exponent >= 16)
//   remainder = x & mask; threshold = (mask >> 1) + ((x < 0) & 1); each Add narrows to int16
//   result = (x >> exponent) + ((remainder > threshold) & 1)
inline Result<int16_t> gemmlowp_rounding_divide_by_pot16(int16_t x, int exponent) {
  if (!(exponent >= 0 && exponent <= 31))
    return failure<int16_t>(Kind::assert_fail, Why::exponent_out_of_range);
  const i128 mask = wrap_signed(pow2(exponent) - 1, 16);
  const i128 remainder = and_bits(x, mask, 16);
  const i128 threshold = wrap_signed(floor_shift(mask, 1) + (x < 0 ? 1 : 0), 16);
  const i128 r = wrap_signed(floor_shift(x, exponent) + (remainder > threshold ? 1 : 0), 16);
  return success(static_cast<int16_t>(r));
}
// SaturatingRoundingMultiplyByPOT<Exponent>(x) for int32 (bits 32) or int16 (bits 16):
//   Exponent == 0: x.  Exponent < 0: RoundingDivideByPOT(x, -Exponent).
//   Exponent > 0: threshold = (1 << (bits - 1 - Exponent)) - 1 (UB when bits - 1 - Exponent < 0);
//     x > threshold -> max; x < -threshold -> min; else x << Exponent.
inline Result<int64_t> gemmlowp_saturating_rounding_multiply_by_pot(int64_t x, int exponent,
                                                                    int bits) {
  if (exponent == 0) return success(x);
  if (exponent < 0) {
    if (bits == 32) {
      const auto r = gemmlowp_rounding_divide_by_pot(static_cast<int32_t>(x), -exponent);
      return Result<int64_t>{r.ok, r.value, r.kind, r.why};
    }
    const auto r = gemmlowp_rounding_divide_by_pot16(static_cast<int16_t>(x), -exponent);
    return Result<int64_t>{r.ok, r.value, r.kind, r.why};
  }
  if (bits - 1 - exponent < 0)
    return failure<int64_t>(Kind::undefined, Why::shift_count_out_of_range);
  const i128 threshold = pow2(bits - 1 - exponent) - 1;
  if (x > threshold) return success(static_cast<int64_t>(pow2(bits - 1) - 1));
  if (x < -threshold) return success(static_cast<int64_t>(-pow2(bits - 1)));
  return success(static_cast<int64_t>(x * pow2(exponent)));
}

// ---- TFLite DownScaleInt32ToInt16Multiplier (kernels/internal/common.h) -----------------------
//   DCHECK_GE(m, 0); if m >= INT32_MAX - (1 << 15): 0x7FFF;
//   result = (m + (1 << 15)) >> 16; DCHECK_LE(result << 16, m + 2^15);
//   DCHECK_GT(result << 16, m - 2^15); *out = result; DCHECK_EQ(*out, result)
inline Result<int16_t> tflite_downscale_int32_to_int16_multiplier(int32_t m) {
  if (!(m >= 0)) return failure<int16_t>(Kind::dcheck_fail, Why::multiplier_negative);
  if (m >= INT32_MAX - pow2(15)) return success(static_cast<int16_t>(INT16_MAX));
  const i128 result = floor_shift(static_cast<i128>(m) + pow2(15), 16);
  if (!(result * pow2(16) <= m + pow2(15)) || !(result * pow2(16) > m - pow2(15)) ||
      !fits_signed(result, 16))
    return failure<int16_t>(Kind::dcheck_fail, Why::narrowing_to_int32);
  return success(static_cast<int16_t>(result));
}

// ---- MLIR TosaToLinalg RESCALE: output_zp added with a wrapping i32 arith.addi ------------------
// Everything as rescale_element (the TOSA model), except that an int32 overflow of
// scaled + output_zp wraps before the clamp instead of breaking the REQUIRE.
inline Result<int64_t> mlir_rescale_element(const RescaleParams& p, int64_t in) {
  const Result<int64_t> r = rescale_element(p, in);
  if (r.ok || r.why != Why::output_zp_add_overflow) return r;
  const int ob = bits_of(p.out_t);
  const i128 lo = p.output_unsigned ? 0 : -pow2(ob - 1);
  const i128 hi = p.output_unsigned ? pow2(ob) - 1 : pow2(ob - 1) - 1;
  i128 out = r.value;  // wrap32(scaled + output_zp), the as-if value of the model
  if (out < lo) out = lo;
  if (out > hi) out = hi;
  return success(static_cast<int64_t>(out));
}

}  // namespace qref::kernel

#endif
