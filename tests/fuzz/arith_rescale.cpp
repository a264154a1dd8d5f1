// libFuzzer target for qfold's arith layer, differential against the independent 128-bit model
// (tests/reference/spec_reference.hpp): wherever a checked form returns a value it must equal the
// model's, wherever the model defines a result qfold must give it (except the inputs qfold
// documents it refuses), and every error must carry a named code.
// The issue-13 flavours (NEON / Helium lanes, CMSIS-NN since ece5a38a, EMULATE_FLOAT, Cortex-M,
// gemmlowp int16, DownScale, RESCALE zero-point addition, flavour comparison) are checked against
// tests/reference/kernel_reference.hpp the same way.
// Input format: byte 0 picks the operation (byte % 18); the following bytes are its fields, read
// little-endian in the order the case below reads them (missing bytes read as 0). Seeds:
// tests/fuzz/corpus/arith_rescale/, made by tests/fuzz/corpus/arith_rescale/make_seeds.py.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <qfold/qfold.hpp>
#include <span>
#include <type_traits>
#include <vector>

#include "fuzz/fuzz_input.hpp"
#include "fuzz/rescale_input.hpp"
#include "reference/from_qfold.hpp"
#include "reference/kernel_reference.hpp"
#include "reference/spec_reference.hpp"

namespace {
using fuzz::attributes_from;
using fuzz::check;
using fuzz::input;
using fuzz::scale_factor_from;

using qfold::errc;
using qfold::int_type;
using qfold::rescale_attributes;
using qfold::scale_factor;
constexpr std::int64_t i32min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t i32max = std::numeric_limits<std::int32_t>::max();

template <class Q>
void named(const qfold::result<Q>& q, const char* what) {
  if (!q) check(qfold::to_string(q.error().code) != "unknown" && !q.error().message.empty(), what);
}
template <class Q>
void code_is(const qfold::result<Q>& q, errc want, const char* what) {
  check(!q.has_value() && q.error().code == want, what);
}
// Verdict and value against the model; every error is named.
template <class Q, class R>
void same(const qfold::result<Q>& q, const qref::Result<R>& r, const char* what) {
  if (r.ok)
    check(q.has_value() && static_cast<std::int64_t>(*q) == static_cast<std::int64_t>(r.value),
          what);
  else
    check(!q.has_value(), what);
  named(q, what);
}

bool types_valid(const rescale_attributes& a) {
  return qfold::is_valid(a.input_type) && qfold::is_valid(a.output_type);
}
// The spec's ERROR_IF list plus zero points that are no values of their types (the model's).
bool ref_attributes_legal(const rescale_attributes& a) {
  if (!types_valid(a)) return false;
  const qref::RescaleParams p = qref::from_qfold(a);
  return !qref::rescale_error_if(p).any() &&
         qref::representable(p.in_t, p.input_unsigned, a.input_zp) &&
         qref::representable(p.out_t, p.output_unsigned, a.output_zp);
}
bool is_attribute_code(errc c) {
  return c == errc::illegal_type || c == errc::illegal_zero_point || c == errc::illegal_attributes;
}

void rescale_value_case(input& in) {
  const rescale_attributes a = attributes_from(in);
  const scale_factor s = scale_factor_from(in);
  const std::int64_t x = in.flag() ? in.raw<std::int64_t>() : in.sized_i64();
  const auto v = qfold::validate(a);
  check(v.has_value() == ref_attributes_legal(a), "validate(attributes) differs from the model");
  if (!v) check(is_attribute_code(v.error().code), "validate(attributes): code");
  if (!types_valid(a)) check(v.error().code == errc::illegal_type, "out-of-enum type");
  const auto q = qfold::checked::rescale_value(a, s, x);
  if (!types_valid(a)) {
    code_is(q, errc::illegal_type, "rescale_value: out-of-enum type");
    return;
  }
  same(q, qref::rescale_as_qfold(a, s, x), "rescale_value differs from the model");
  if (q) check(qfold::rescale_value(a, s, x) == *q, "rescale_value: unchecked form");
}

// --- rescale_array: spans of every element type, per-channel counts, short outputs ----------
template <class T>
T element_from(std::uint64_t bits, bool narrow) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    const auto v = static_cast<std::int64_t>(bits);
    return narrow ? v >> 16 : v;  // mostly int48, or any int64
  } else {
    return static_cast<T>(bits);  // the low bits: every value of T
  }
}

template <class In, class Out>
void rescale_array_case(input& in, const rescale_attributes& base) {
  rescale_attributes a = base;
  if (in.flag()) {
    a.input_type = qfold::int_type_of<In>;
    a.input_unsigned = std::is_unsigned_v<In>;
  }
  if (in.flag()) {
    a.output_type = qfold::int_type_of<Out>;
    a.output_unsigned = std::is_unsigned_v<Out>;
  }
  std::vector<scale_factor> scales(in.byte() % 6);
  for (auto& s : scales) s = scale_factor_from(in);
  std::size_t n = in.byte();
  if (in.flag()) n += 512;  // the 8-bit table path starts at 512 elements
  const std::size_t out_n = n > 0 && in.byte() % 8 == 0 ? n - 1 : n;
  const bool narrow = in.flag();
  std::uint64_t state = in.raw<std::uint64_t>();
  const std::uint8_t small = in.byte();
  std::vector<In> values(n);
  for (auto& v : values) {
    state = state * 6364136223846793005u + 1442695040888963407u;  // an LCG: any length from a seed
    const std::uint64_t bits = state >> 16;
    v = element_from<In>(small % 4 == 0 ? bits % 8 : bits, narrow);  // sometimes few codes
  }
  constexpr Out sentinel = static_cast<Out>(0x5A);
  std::vector<Out> out(out_n, sentinel);
  const auto r = qfold::rescale_array<In, Out>(a, scales, values, out);
  named(r, "rescale_array: unnamed error");
  const auto untouched = [&] {
    for (const Out o : out)
      if (o != sentinel) return false;
    return true;
  };
  if (!r) check(untouched(), "rescale_array wrote its output on an error");
  if (qfold::int_type_of<In> != a.input_type || std::is_unsigned_v<In> != a.input_unsigned ||
      qfold::int_type_of<Out> != a.output_type || std::is_unsigned_v<Out> != a.output_unsigned) {
    code_is(r, errc::illegal_type, "rescale_array: span types differ from the attributes");
    return;
  }
  if (n != out_n) {
    code_is(r, errc::size_mismatch, "rescale_array: short output");
    return;
  }
  const std::size_t channels = a.per_channel ? scales.size() : 1;
  if (!ref_attributes_legal(a)) {
    check(!r && is_attribute_code(r.error().code), "rescale_array: illegal attributes");
    return;
  }
  if (scales.size() != channels || channels == 0) {
    code_is(r, errc::size_mismatch, "rescale_array: scale count");
    return;
  }
  for (std::size_t c = 0; c < channels; ++c) {
    const scale_factor s = scales[c];
    const errc want = s.multiplier < 0                     ? errc::negative_multiplier
                      : !a.scale32 && s.multiplier > 32767 ? errc::multiplier_out_of_range
                      : s.shift < 2 || s.shift > 62        ? errc::shift_out_of_range
                                                           : errc{};
    if (want != errc{}) {
      check(!r && r.error().code == want && r.error().index == c, "rescale_array: bad scale");
      return;
    }
  }
  if (n % channels != 0) {
    code_is(r, errc::size_mismatch, "rescale_array: size not a multiple of the channels");
    return;
  }
  std::vector<std::int64_t> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto w =
        qref::rescale_as_qfold(a, scales[i % channels], static_cast<std::int64_t>(values[i]));
    if (!w.ok) {  // the first element the model refuses is the one reported
      check(!r && r.error().index == i, "rescale_array: first failing element");
      return;
    }
    want[i] = w.value;
  }
  check(r.has_value(), "rescale_array refused a valid call");
  for (std::size_t i = 0; i < n; ++i)
    check(static_cast<std::int64_t>(out[i]) == want[i], "rescale_array differs from the model");
}

template <class In>
void rescale_array_in(input& in, const rescale_attributes& a) {
  switch (in.byte() % 6) {
    case 0:
      return rescale_array_case<In, std::int8_t>(in, a);
    case 1:
      return rescale_array_case<In, std::uint8_t>(in, a);
    case 2:
      return rescale_array_case<In, std::int16_t>(in, a);
    case 3:
      return rescale_array_case<In, std::uint16_t>(in, a);
    case 4:
      return rescale_array_case<In, std::int32_t>(in, a);
    default:
      return rescale_array_case<In, std::int64_t>(in, a);
  }
}
void rescale_array_dispatch(input& in) {
  const rescale_attributes a = attributes_from(in);
  switch (in.byte() % 6) {
    case 0:
      return rescale_array_in<std::int8_t>(in, a);
    case 1:
      return rescale_array_in<std::uint8_t>(in, a);
    case 2:
      return rescale_array_in<std::int16_t>(in, a);
    case 3:
      return rescale_array_in<std::uint16_t>(in, a);
    case 4:
      return rescale_array_in<std::int32_t>(in, a);
    default:
      return rescale_array_in<std::int64_t>(in, a);
  }
}

// --- TOSA apply_scale, MUL, reciprocal_scale -------------------------------------------------
void apply_scale_32_case(input& in) {
  const std::int32_t v = in.sized_i32(), m = in.sized_i32();
  const int s = in.shift();
  const bool dr = in.flag();
  const auto q = qfold::checked::apply_scale_32(v, m, s, dr);
  same(q, qref::apply_scale_32(v, m, s, dr), "apply_scale_32 differs from the model");
  // The spec's REQUIREs in its order: multiplier, shift, value.
  if (m < 0)
    code_is(q, errc::negative_multiplier, "apply_scale_32: code");
  else if (s < 2 || s > 62)
    code_is(q, errc::shift_out_of_range, "apply_scale_32: code");
  else if (!q)
    code_is(q, errc::value_out_of_range, "apply_scale_32: code");
  if (q) check(qfold::apply_scale_32(v, m, s, dr) == *q, "apply_scale_32: unchecked form");
}

void apply_scale_16_case(input& in) {
  const std::int64_t v = in.sized_i64();
  const auto m = static_cast<std::int16_t>(in.sized_i32());
  const int s = in.shift();
  const auto q = qfold::checked::apply_scale_16(v, m, s);
  same(q, qref::apply_scale_16(v, m, s), "apply_scale_16 differs from the model");
  if (v < qfold::int48_min || v > qfold::int48_max)
    code_is(q, errc::value_out_of_range, "apply_scale_16: code");
  else if (m < 0)
    code_is(q, errc::negative_multiplier, "apply_scale_16: code");
  else if (s < 2 || s > 62)
    code_is(q, errc::shift_out_of_range, "apply_scale_16: code");
  else if (!q)
    code_is(q, errc::result_out_of_range, "apply_scale_16: code");
  if (q) check(qfold::apply_scale_16(v, m, s) == *q, "apply_scale_16: unchecked form");
}

template <class T>
void mul_typed(std::int32_t a32, std::int32_t b32, int s, qref::DType t) {
  const auto a = static_cast<T>(a32), b = static_cast<T>(b32);
  const auto q = qfold::checked::mul<T>(a, b, s);
  same(q, qref::tosa_mul(t, a, b, s), "mul differs from the model");
  if (s < 0 || s > 63 || (s != 0 && !std::is_same_v<T, std::int32_t>))
    code_is(q, errc::shift_out_of_range, "mul: code");
  else if (!q)
    code_is(q, errc::result_out_of_range, "mul: code");
  if (q) check(qfold::mul<T>(a, b, s) == *q, "mul: unchecked form");
}
void mul_case(input& in) {
  const std::uint8_t t = in.byte();
  const std::int32_t a = in.sized_i32(),
                     b = in.flag() ? static_cast<std::int32_t>(i32min) : in.sized_i32();
  const int s = in.shift();
  if (t % 3 == 0) mul_typed<std::int8_t>(a, b, s, qref::DType::i8);
  if (t % 3 == 1) mul_typed<std::int16_t>(a, b, s, qref::DType::i16);
  if (t % 3 == 2) mul_typed<std::int32_t>(a, b, s, qref::DType::i32);
}

void reciprocal_case(input& in) {
  const std::uint32_t d =
      in.flag() ? in.raw<std::uint32_t>() : static_cast<std::uint32_t>(in.sized_i32());
  const auto q = qfold::checked::reciprocal_scale(d);
  const auto r = qref::reciprocal_scale(d);
  if (r.ok)
    check(q && q->multiplier == r.value.multiplier && q->shift == r.value.shift,
          "reciprocal_scale differs from the model");
  else
    code_is(q, d == 0 ? errc::divisor_zero : errc::multiplier_out_of_range,
            "reciprocal_scale: code");
  if (q) check(qfold::reciprocal_scale(d) == *q, "reciprocal_scale: unchecked form");
}

// --- scale derivation, TFLite, gemmlowp, CMSIS-NN ------------------------------------------
double scale_from_bits(input& in) {
  switch (in.byte() % 4) {
    case 0:  // a mantissa and a binary exponent around the useful range
      return std::ldexp(static_cast<double>(in.raw<std::uint32_t>() | 1u),
                        static_cast<int>(in.byte()) - 200);
    case 1:
      return std::bit_cast<double>(in.raw<std::uint64_t>() & 0x000FFFFFFFFFFFFFull);  // subnormal
    default:
      return in.raw<double>();  // anything: NaNs, infinities, negatives, zeros
  }
}

void derivation_case(input& in) {
  const double s = scale_from_bits(in);
  const std::uint8_t wb = in.byte(), tb = in.byte();
  const auto width = wb % 4 == 0   ? qfold::scale_width::bits16
                     : wb % 4 == 1 ? qfold::scale_width::bits32
                                   : static_cast<qfold::scale_width>(in.byte());
  const auto ties = tb % 3 == 0   ? qfold::tie_rule::half_to_even
                    : tb % 3 == 1 ? qfold::tie_rule::half_away_from_zero
                                  : static_cast<qfold::tie_rule>(in.byte());
  const auto q = qfold::compute_multiplier_and_shift(s, width, ties);
  const bool w_ok = width == qfold::scale_width::bits16 || width == qfold::scale_width::bits32;
  const bool t_ok =
      ties == qfold::tie_rule::half_to_even || ties == qfold::tie_rule::half_away_from_zero;
  if (!w_ok || !t_ok) return code_is(q, errc::illegal_attributes, "derivation: unknown enum");
  const int bits = width == qfold::scale_width::bits32 ? 32 : 16;
  if (std::isnan(s)) return code_is(q, errc::scale_nan, "derivation: NaN");
  if (std::isinf(s)) return code_is(q, errc::scale_infinite, "derivation: inf");
  if (s == 0) {
    check(q && q->multiplier == 0 && q->shift == bits - 1, "derivation: zero");
    return;
  }
  if (s < 0) return code_is(q, errc::scale_negative, "derivation: negative");
  const auto r = ties == qfold::tie_rule::half_to_even
                     ? qref::et_compute_multiplier_and_shift(s, bits)
                     : qref::mlir_compute_multiplier_and_shift(s, bits);
  if (r.ok)
    check(q && q->multiplier == r.value.multiplier && q->shift == r.value.shift,
          "derivation differs from the model");
  else
    code_is(q, errc::scale_too_large, "derivation: too large");
}

qfold::tflite::rounding tflite_build(input& in) {
  const std::uint8_t b = in.byte();
  return b % 3 == 0   ? qfold::tflite::rounding::double_round
         : b % 3 == 1 ? qfold::tflite::rounding::single_round
                      : static_cast<qfold::tflite::rounding>(in.byte());
}
bool valid(qfold::tflite::rounding b) {
  return b == qfold::tflite::rounding::double_round || b == qfold::tflite::rounding::single_round;
}

void tflite_quantize_case(input& in) {
  const double s = scale_from_bits(in);
  const auto build = tflite_build(in);
  const auto q = qfold::tflite::quantize_multiplier(s, build);
  if (!valid(build)) return code_is(q, errc::illegal_attributes, "quantize_multiplier: enum");
  if (std::isnan(s)) return code_is(q, errc::scale_nan, "quantize_multiplier: NaN");
  if (std::isinf(s)) return code_is(q, errc::scale_infinite, "quantize_multiplier: inf");
  if (s < 0) return code_is(q, errc::scale_negative, "quantize_multiplier: negative");
  const auto r =
      qref::tflite_quantize_multiplier(s, build == qfold::tflite::rounding::single_round);
  check(r.ok && q && q->multiplier == r.value.multiplier && q->shift == r.value.left_shift,
        "quantize_multiplier differs from the model");
}

void tflite_requantize_case(input& in) {
  const std::int32_t x = in.sized_i32(), m = in.sized_i32();
  const int shift = in.shift();
  const auto build = tflite_build(in);
  const auto q = qfold::tflite::checked::multiply_by_quantized_multiplier(x, m, shift, build);
  named(q, "tflite: unnamed error");
  if (!valid(build)) return code_is(q, errc::illegal_attributes, "tflite: unknown build");
  // qfold refuses the shifts TFLite documents as out of range (TFLite defines shift 31 for
  // x in {0, 1} only, through 1 << 31); everywhere else it is the model.
  if (shift < -31 || shift > 30) return check(!q, "tflite: shift outside -31..30 accepted");
  same(q,
       qref::tflite_multiply_by_quantized_multiplier(
           x, m, shift, build == qfold::tflite::rounding::single_round),
       "multiply_by_quantized_multiplier differs from the model");
  if (q)
    check(qfold::tflite::multiply_by_quantized_multiplier(x, m, shift, build) == *q,
          "tflite: unchecked form");
  // The int64 overload (16x8).
  const std::int64_t x64 = in.sized_i64();
  const auto q64 = qfold::tflite::checked::multiply_by_quantized_multiplier(x64, m, shift);
  same(q64, qref::tflite_multiply_by_quantized_multiplier_int64(x64, m, shift),
       "multiply_by_quantized_multiplier(int64) differs from the model");
  const errc want = m < 0                                              ? errc::negative_multiplier
                    : shift < -31 || shift > 7                         ? errc::shift_out_of_range
                    : x64 < qfold::int48_min || x64 > qfold::int48_max ? errc::value_out_of_range
                                                                       : errc::result_out_of_range;
  if (!q64) check(q64.error().code == want, "tflite int64: code");
}

void cmsis_case(input& in) {
  using qfold::cmsis_nn::rounding;
  const std::int32_t v = in.sized_i32(), m = in.sized_i32();
  const auto shift = static_cast<std::int32_t>(in.shift());
  const std::uint8_t b = in.byte();
  const auto build = b % 3 == 0   ? rounding::double_round
                     : b % 3 == 1 ? rounding::single_round
                                  : static_cast<rounding>(in.byte());
  const auto q = qfold::cmsis_nn::checked::requantize(v, m, shift, build);
  named(q, "cmsis: unnamed error");
  if (build != rounding::double_round && build != rounding::single_round)
    return code_is(q, errc::illegal_attributes, "cmsis: unknown build");
  if (shift < -31 || shift > 30) {
    code_is(q, errc::shift_out_of_range, "cmsis: shift outside -31..30 accepted");
  } else {
    // The default is the current code (ece5a38a); the old model is version::before_ece5a38a.
    same(q, qref::kernel::cmsis_requantize_current(v, m, shift, build == rounding::single_round),
         "cmsis_nn::requantize differs from the model");
    same(qfold::cmsis_nn::checked::requantize(v, m, shift, build,
                                              qfold::cmsis_nn::version::before_ece5a38a),
         qref::cmsis_requantize(v, m, shift, build == rounding::single_round),
         "cmsis_nn::requantize (before ece5a38a) differs from the model");
  }
  if (q) check(qfold::cmsis_nn::requantize(v, m, shift, build) == *q, "cmsis: unchecked form");
  const std::int64_t v64 = in.flag() ? in.raw<std::int64_t>() : in.sized_i64();
  const std::int32_t rm = in.flag() ? in.sized_i32() : static_cast<std::int32_t>(in.byte()) - 2;
  const auto s64 = static_cast<std::int32_t>(in.shift());
  const auto q64 = qfold::cmsis_nn::checked::requantize_s64(v64, rm, s64);
  same(q64, qref::cmsis_requantize_s64(v64, rm, s64), "requantize_s64 differs from the model");
  if (q64) check(qfold::cmsis_nn::requantize_s64(v64, rm, s64) == *q64, "s64: unchecked form");
}

void gemmlowp_case(input& in) {
  const std::int32_t a = in.flag() ? static_cast<std::int32_t>(i32min) : in.sized_i32();
  const std::int32_t b = in.flag() ? static_cast<std::int32_t>(i32min) : in.sized_i32();
  check(qfold::gemmlowp::saturating_rounding_doubling_high_mul(a, b) == qref::gemmlowp_srdhm(a, b),
        "srdhm differs from the model");
  check(qfold::cmsis_nn::doubling_high_mult_no_sat(a, b) ==
            qref::cmsis_doubling_high_mult_no_sat(a, b).value,
        "no_sat differs from the model");
  const int e = in.byte() & 31;
  const auto r = qref::gemmlowp_rounding_divide_by_pot(a, e);
  check(r.ok && qfold::gemmlowp::rounding_divide_by_pot(a, e) == r.value,
        "rounding_divide_by_pot differs from the model");
}

void conversion_case(input& in) {
  const std::int32_t m = in.sized_i32();
  const int shift = in.shift();
  const auto t = qfold::tflite::to_tosa({m, shift});
  if (m < 0)
    code_is(t, errc::negative_multiplier, "to_tosa: code");
  else if (31 - std::int64_t{shift} < 2 || 31 - std::int64_t{shift} > 62)
    code_is(t, errc::shift_out_of_range, "to_tosa: code");
  else
    check(t && t->multiplier == m && t->shift == 31 - shift, "to_tosa: value");
  if (t) {
    const auto back = qfold::tflite::from_tosa(*t);
    check(back && back->multiplier == m && back->shift == shift, "to_tosa/from_tosa round trip");
  }
  const auto f = qfold::tflite::from_tosa({m, shift});
  if (m < 0)
    code_is(f, errc::negative_multiplier, "from_tosa: code");
  else if (31 - std::int64_t{shift} < -31 || 31 - std::int64_t{shift} > 30)
    code_is(f, errc::shift_out_of_range, "from_tosa: code");
  else
    check(f && f->multiplier == m && f->shift == 31 - shift, "from_tosa: value");
  // to_double is exact where multiplier * 2^-shift is a double; elsewhere it only must end.
  const double d = qfold::to_double({m, shift});
  if (shift >= -990 && shift <= 1074) check(d == std::ldexp(m, -shift), "to_double: value");
}

void disagreement_case(input& in) {
  const qfold::tflite::quantized_multiplier m{in.sized_i32(),
                                              static_cast<int>(in.byte() % 80) - 40};
  const auto build = tflite_build(in);
  const bool dr = in.flag();
  const std::int32_t lo = in.sized_i32();
  const std::int32_t hi = static_cast<std::int32_t>(
      std::min<std::int64_t>(i32max, std::int64_t{lo} + (in.byte() & 63)));
  const auto got = qfold::tflite::first_disagreement(m, build, dr, lo, hi);
  const bool single = build == qfold::tflite::rounding::single_round;
  const bool tosa_ok = m.multiplier >= 0 && m.shift >= -31 && m.shift <= 29;
  const bool claim = valid(build) && qfold::tflite::same_function(build, dr, m.shift);
  std::optional<std::int32_t> want;
  for (std::int64_t x = lo; x <= hi; ++x) {
    const auto xi = static_cast<std::int32_t>(x);
    auto a = qref::tflite_multiply_by_quantized_multiplier(xi, m.multiplier, m.shift, single);
    if (!valid(build) || m.shift < -31 || m.shift > 30) a.ok = false;  // qfold refuses these
    qref::Result<std::int32_t> b{};
    if (tosa_ok) b = qref::apply_scale_32(xi, m.multiplier, 31 - m.shift, dr);
    if (claim && a.ok && b.ok) check(a.value == b.value, "same_function claims a false equality");
    if (!want && (a.ok != b.ok || (a.ok && a.value != b.value))) want = xi;
  }
  check(got == want, "first_disagreement differs from the model");
}

// The vector lanes: NEON 4Rows (both builds) and Helium arm_requantize_mve / _32x4 / _pred, with
// lane_overflow::refuse exactly where the lane's left shift wraps.
void lanes_case(input& in) {
  namespace k = qref::kernel;
  const std::int32_t v = in.sized_i32(), m = in.sized_i32();
  const int shift = in.shift();
  const bool single = in.flag();
  const auto tb =
      single ? qfold::tflite::rounding::single_round : qfold::tflite::rounding::double_round;
  const auto cb =
      single ? qfold::cmsis_nn::rounding::single_round : qfold::cmsis_nn::rounding::double_round;
  const auto t = qfold::tflite::checked::multiply_by_quantized_multiplier_4rows(v, m, shift, tb);
  const auto mve = qfold::cmsis_nn::checked::requantize_mve(v, m, shift, cb);
  const auto x4 = qfold::cmsis_nn::checked::requantize_mve_32x4(v, m, shift, cb);
  const auto pred = qfold::cmsis_nn::checked::requantize_mve_pred(v, m, shift, cb);
  same(t, k::tflite_4rows(v, m, shift, single), "4rows differs from the model");
  same(mve, k::cmsis_requantize_mve(v, m, shift, single, false), "mve differs from the model");
  same(x4, k::cmsis_requantize_mve_32x4(v, m, shift, single), "mve_32x4 differs from the model");
  same(pred, k::cmsis_requantize_mve(v, m, shift, single, true), "mve_pred differs from the model");
  if (shift < -31 || shift > 30) return;
  const bool twrap = k::vshl_wraps(v, k::tflite_4rows_left_shift(shift, single));
  const bool cwrap = k::vshl_wraps(v, k::cmsis_mve_left_shift(shift, single));
  const auto tr = qfold::tflite::checked::multiply_by_quantized_multiplier_4rows(
      v, m, shift, tb, qfold::lane_overflow::refuse);
  const auto cr =
      qfold::cmsis_nn::checked::requantize_mve(v, m, shift, cb, qfold::lane_overflow::refuse);
  check(tr.has_value() == (t.has_value() && !twrap), "4rows refuse differs from the wrap");
  check(cr.has_value() == (mve.has_value() && !cwrap), "mve refuse differs from the wrap");
  if (cr && single) {
    const auto scalar = k::cmsis_requantize_current(v, m, shift, true);
    if (scalar.ok) check(*cr == scalar.value, "mve single without a wrap differs from the scalar");
  }
  if (t)
    check(qfold::tflite::multiply_by_quantized_multiplier_4rows(v, m, shift, tb) == *t,
          "4rows: unchecked form");
}

// Scale derivations: TFLITE_EMULATE_FLOAT QuantizeMultiplier and ExecuTorch Cortex-M.
void derivation_flavours_case(input& in) {
  namespace k = qref::kernel;
  double d = in.f64();
  if (in.flag())
    d = std::bit_cast<double>((std::bit_cast<std::uint64_t>(d) & ~std::uint64_t{0x3FFFFF}) |
                              0x200000);
  const bool single = in.flag();
  const bool refused = std::isnan(d) || std::isinf(d) || d < 0;
  const auto e = qfold::tflite::quantize_multiplier(
      d, single ? qfold::tflite::rounding::single_round : qfold::tflite::rounding::double_round,
      qfold::tflite::float_impl::emulated);
  named(e, "emulated quantize_multiplier: unnamed error");
  const auto re = k::tflite_quantize_multiplier_emulated(d, single);
  if (refused) {
    check(!e.has_value(), "emulated quantize_multiplier accepted a NaN/inf/negative scale");
  } else {
    check(re.ok && e && e->multiplier == re.value.multiplier && e->shift == re.value.left_shift,
          "emulated quantize_multiplier differs from the model");
  }
  const auto c = qfold::executorch::checked::cortex_m_quantize_multiplier(d);
  named(c, "cortex_m: unnamed error");
  const auto rc = k::cortex_m_quantize_multiplier_aot(d);
  if (refused) {
    check(!c.has_value(), "cortex_m accepted a NaN/inf/negative scale");
  } else {
    check(rc.ok && c && c->multiplier == rc.value.multiplier && c->shift == rc.value.left_shift,
          "cortex_m_quantize_multiplier differs from the model");
    const bool in_range = rc.value.left_shift >= -30 && rc.value.left_shift <= 30;
    check(qfold::cmsis_nn::accepts(*c) == in_range, "cmsis_nn::accepts differs");
  }
}

// gemmlowp int16 and SaturatingRoundingMultiplyByPOT, DownScaleInt32ToInt16Multiplier.
void gemmlowp16_case(input& in) {
  namespace k = qref::kernel;
  const auto a = static_cast<std::int16_t>(in.raw<std::uint16_t>());
  const auto b = static_cast<std::int16_t>(in.raw<std::uint16_t>());
  const int e = static_cast<int>(in.byte()) - 128;
  check(qfold::gemmlowp::saturating_rounding_doubling_high_mul(a, b) == k::gemmlowp_srdhm16(a, b),
        "int16 srdhm differs from the model");
  same(qfold::gemmlowp::checked::rounding_divide_by_pot(a, e),
       k::gemmlowp_rounding_divide_by_pot16(a, e), "int16 rdbpot differs from the model");
  same(qfold::gemmlowp::checked::saturating_rounding_multiply_by_pot(a, e),
       k::gemmlowp_saturating_rounding_multiply_by_pot(a, e, 16), "int16 srmpot differs");
  const std::int32_t x = in.sized_i32();
  same(qfold::gemmlowp::checked::saturating_rounding_multiply_by_pot(x, e),
       k::gemmlowp_saturating_rounding_multiply_by_pot(x, e, 32), "int32 srmpot differs");
  same(qfold::tflite::checked::downscale_int32_to_int16_multiplier(x),
       k::tflite_downscale_int32_to_int16_multiplier(x), "downscale differs from the model");
}

// Two requantize flavours over a window, and RESCALE's two zero-point additions.
void flavour_pair_case(input& in) {
  const auto fa = static_cast<qfold::requantize_flavour>(in.byte() % 13);
  const auto fb = static_cast<qfold::requantize_flavour>(in.byte() % 13);
  const qfold::tflite::quantized_multiplier m{in.sized_i32(),
                                              static_cast<int>(in.byte() % 66) - 33};
  const std::int32_t lo = in.sized_i32();
  const auto hi = static_cast<std::int32_t>(
      std::min<std::int64_t>(i32max, std::int64_t{lo} + (in.byte() & 63)));
  std::optional<std::int32_t> want;
  for (std::int64_t x = lo; x <= hi && !want; ++x) {
    const auto xi = static_cast<std::int32_t>(x);
    const auto p = qfold::checked::requantize(fa, xi, m);
    const auto q = qfold::checked::requantize(fb, xi, m);
    named(p, "requantize flavour: unnamed error");
    if (p.has_value() != q.has_value() || (p && *p != *q)) want = xi;
  }
  check(qfold::first_disagreement(fa, fb, m, lo, hi) == want, "flavour first_disagreement");
  // RESCALE zero point: analytic first_disagreement against a scan around its answer.
  const rescale_attributes a = attributes_from(in);
  const scale_factor s = scale_factor_from(in);
  const auto fd = qfold::first_disagreement(a, s, qfold::zero_point_add::checked,
                                            qfold::zero_point_add::wrapping);
  if (!types_valid(a)) return;
  const qfold::int_range r = a.input_range();
  const std::int64_t from = fd ? std::max(r.lo, *fd - 40) : r.lo;
  const std::int64_t to = std::min(r.hi, from + 80);
  std::optional<std::int64_t> scan = qfold::first_disagreement(
      a, s, qfold::zero_point_add::checked, qfold::zero_point_add::wrapping, from, to);
  if (fd)
    check(scan == fd, "rescale zero-point first_disagreement differs from a scan");
  else
    check(!scan, "rescale zero-point: a disagreement the analysis missed");
  if (ref_attributes_legal(a) && qfold::validate(a, s)) {
    const std::int64_t x = fd ? *fd : std::clamp<std::int64_t>(in.sized_i64(), r.lo, r.hi);
    same(qfold::checked::rescale_value(a, s, x, qfold::zero_point_add::wrapping),
         qref::kernel::mlir_rescale_element(
             qref::as_qfold_evaluates(qref::from_qfold(a, s.multiplier, s.shift)), x),
         "wrapping zero point differs from the MLIR model");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  switch (in.byte() % 18) {
    case 0:
      apply_scale_32_case(in);
      break;
    case 1:
      apply_scale_16_case(in);
      break;
    case 2:
      mul_case(in);
      break;
    case 3:
      reciprocal_case(in);
      break;
    case 4:
      derivation_case(in);
      break;
    case 5:
      tflite_quantize_case(in);
      break;
    case 6:
      tflite_requantize_case(in);
      break;
    case 7:
      cmsis_case(in);
      break;
    case 8:
      gemmlowp_case(in);
      break;
    case 9:
      conversion_case(in);
      break;
    case 10:
      disagreement_case(in);
      break;
    case 11:
    case 12:
      rescale_value_case(in);
      break;
    case 14:
      lanes_case(in);
      break;
    case 15:
      derivation_flavours_case(in);
      break;
    case 16:
      gemmlowp16_case(in);
      break;
    case 17:
      flavour_pair_case(in);
      break;
    default:
      rescale_array_dispatch(in);
      break;
  }
  return 0;
}
