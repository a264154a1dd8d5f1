// libFuzzer target for qfold's quant and table layers: table generation from arbitrary qparams,
// conventions and functions (8-bit, ExecuTorch and TFLite int16), the TOSA/TFLite int16 lookups,
// elementwise chains (evaluate, collapse, collapse_int16) with arbitrary steps at any int64 input,
// and the math functions on any float/double. Chain steps and lookups are checked against an
// independent evaluation (the 128-bit model of tests/reference/spec_reference.hpp for RESCALE,
// MUL and the requantize flavours, 128-bit arithmetic for the rest); tables against their
// documented invariants and errors; math against <cmath> within 2 ulps.
// Input format: byte 0 picks the operation (byte % 10); the following bytes are its fields, read
// little-endian in the order the code below reads them (missing bytes read as 0). Seeds:
// tests/fuzz/corpus/table_chain/, made by tests/fuzz/corpus/table_chain/make_seeds.py.
#include <algorithm>
#include <array>
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
using qfold::qparams;
namespace chain = qfold::chain;
__extension__ typedef __int128 i128;

template <class Q>
void named(const qfold::result<Q>& q, const char* what) {
  if (!q) check(qfold::to_string(q.error().code) != "unknown" && !q.error().message.empty(), what);
}
template <class Q>
void code_is(const qfold::result<Q>& q, errc want, const char* what) {
  check(!q.has_value() && q.error().code == want, what);
}

// --- qparams and conventions from bytes ------------------------------------------------------
constexpr std::array<qfold::dtype, 5> dtypes{qfold::dtype::int8, qfold::dtype::uint8,
                                             qfold::dtype::int16, qfold::dtype::uint16,
                                             qfold::dtype::int32};
// The element ranges, written out here (not qfold::range_of, which is under test).
std::optional<std::array<std::int64_t, 2>> type_range(qfold::dtype t) {
  switch (static_cast<int>(t)) {
    case 0:
      return std::array<std::int64_t, 2>{-128, 127};
    case 1:
      return std::array<std::int64_t, 2>{0, 255};
    case 2:
      return std::array<std::int64_t, 2>{-32768, 32767};
    case 3:
      return std::array<std::int64_t, 2>{0, 65535};
    case 4:
      return std::array<std::int64_t, 2>{-2147483648LL, 2147483647LL};
    default:
      return std::nullopt;
  }
}
double scale_from(input& in) {
  switch (in.byte() % 5) {
    case 0:
    case 1:  // (1 + m/256) * 2^-e: the scales real graphs use
      return std::ldexp(1.0 + in.byte() / 256.0, -static_cast<int>(in.byte() % 24));
    case 2:
      return std::ldexp(static_cast<double>(in.raw<std::uint32_t>() | 1u),
                        static_cast<int>(in.byte()) * 5 - 700);  // every exponent
    case 3:
      return std::bit_cast<double>(in.raw<std::uint64_t>() & 0x000FFFFFFFFFFFFFull);  // subnormal
    default:
      return in.raw<double>();  // NaN, inf, negative, zero, anything
  }
}
qparams qparams_from(input& in, qfold::dtype usual) {
  qparams q;
  q.type = in.byte() % 8 == 7
               ? (in.flag() ? static_cast<qfold::dtype>(in.byte()) : dtypes[in.byte() % 5])
               : usual;
  q.scale = scale_from(in);
  switch (in.byte() % 4) {
    case 0:
      q.zero_point = 0;
      break;
    case 1:
      q.zero_point = static_cast<std::int8_t>(in.byte());
      break;
    case 2:
      q.zero_point = in.sized_i32();
      break;
    default:
      q.zero_point = in.raw<std::int32_t>();
  }
  const auto r = type_range(usual);
  if (in.byte() % 4 != 0) {
    q.qmin = static_cast<std::int32_t>((*r)[0]);
    q.qmax = static_cast<std::int32_t>((*r)[1]);
  } else {
    q.qmin = in.sized_i32();
    q.qmax = in.sized_i32();
  }
  return q;
}
template <class Real>
qfold::quant_convention<Real> convention_from(input& in) {
  const std::uint8_t b = in.byte(), f = in.byte();
  qfold::quant_convention<Real> c;
  c.rounding = static_cast<qfold::math::rounding_rule>(b % 8 < 4    ? b % 4
                                                       : b % 8 == 4 ? 4
                                                                    : in.byte());
  c.zero_point_before_rounding = (f & 1) != 0;
  c.multiply_by_reciprocal = (f & 2) != 0;
  c.reciprocal_in_double = (f & 4) != 0;
  c.clamp_input_codes = (f & 8) != 0;
  c.nan_to_zero = (f & 16) != 0;
  return c;
}
bool rule_valid(qfold::math::rounding_rule r) { return static_cast<int>(r) < 4; }

// The documented errors of validate(c, q), in order, derived here from the rules, not by qfold.
errc basic_error(const qparams& q) {
  const double s = q.scale;
  if (std::isnan(s)) return errc::scale_nan;
  if (std::isinf(s)) return errc::scale_infinite;
  if (s < 0) return errc::scale_negative;
  if (s == 0) return errc::scale_zero;
  if (std::fpclassify(s) == FP_SUBNORMAL) return errc::scale_subnormal;
  const auto r = type_range(q.type);
  if (!r) return errc::illegal_type;
  if (q.zero_point < (*r)[0] || q.zero_point > (*r)[1]) return errc::zero_point_out_of_range;
  if (q.qmin < (*r)[0] || q.qmax > (*r)[1]) return errc::value_out_of_range;
  if (q.qmin > q.qmax) return errc::empty_range;
  return errc{};
}
// The scale must be usable in Real: itself, and the reciprocal the convention multiplies by.
template <class Real>
errc real_error(const qfold::quant_convention<Real>& c, const qparams& q) {
  const double s = q.scale;
  constexpr double lo = std::numeric_limits<Real>::min(), hi = std::numeric_limits<Real>::max();
  if (s > hi) return errc::scale_too_large;
  if (s < lo) return errc::scale_subnormal;
  if (c.multiply_by_reciprocal) {
    const double rec =
        c.reciprocal_in_double ? 1.0 / s : static_cast<double>(Real{1} / static_cast<Real>(s));
    if (rec > hi) return errc::scale_subnormal;
    if (rec < lo) return errc::scale_too_large;
  }
  return errc{};
}
template <class Real>
errc expected_error(const qfold::quant_convention<Real>& c, const qparams& q) {
  if (const errc e = basic_error(q); e != errc{}) return e;
  if (!rule_valid(c.rounding)) return errc::illegal_attributes;
  return real_error(c, q);
}

// One function type for every table function (a switch inside), so that each generator is
// instantiated once per convention type.
struct any_fn {
  int which = 0;
  double param = 0;
  template <std::floating_point T>
  T operator()(T x) const {
    switch (which) {
      case 0:
        return qfold::fn::tanh(x);
      case 1:
        return qfold::fn::sigmoid(x);
      case 2:
        return qfold::fn::exp(x);
      case 3:
        return qfold::fn::log(x);
      case 4:
        return qfold::fn::erf(x);
      case 5:
        return qfold::fn::torch::rsqrt(x);
      case 6:
        return qfold::fn::reciprocal(x);
      case 7:
        return qfold::fn::hardswish(x);
      case 8:
        return qfold::fn::torch::gelu(x);
      case 9:
        return qfold::fn::elu(param)(x);
      case 10:
        return qfold::fn::leaky_relu(param)(x);
      case 11:
        return qfold::fn::sin(x);
      default:
        return qfold::fn::tflite::gelu_tanh(x);
    }
  }
};
any_fn fn_from(input& in) {
  const int w = in.byte() % 13;
  return {w, in.flag() ? in.raw<double>()
                       : static_cast<double>(static_cast<std::int8_t>(in.byte())) / 16};
}

template <class T>
constexpr qfold::dtype dtype_of = qfold::dtype_of<T>;

template <class In, class Out, class Real>
void table8_case(const qfold::quant_convention<Real>& c, const any_fn& f, const qparams& qi,
                 const qparams& qo) {
  const auto t = qfold::make_table8<In, Out>(c, f, qi, qo);
  named(t, "make_table8: unnamed error");
  if (const errc e = expected_error(c, qi); e != errc{})
    return code_is(t, e, "make_table8: input qparams");
  if (const errc e = expected_error(c, qo); e != errc{})
    return code_is(t, e, "make_table8: output qparams");
  if (qi.type != dtype_of<In> || qo.type != dtype_of<Out>)
    return code_is(t, errc::illegal_type, "make_table8: types");
  const auto value_at = [&](std::size_t i) {  // f at entry i's real input, in Real
    std::int64_t code = std::int64_t{std::numeric_limits<In>::min()} + static_cast<std::int64_t>(i);
    if (c.clamp_input_codes) code = std::clamp<std::int64_t>(code, qi.qmin, qi.qmax);
    return static_cast<Real>(
        f(static_cast<Real>(code - qi.zero_point) * static_cast<Real>(qi.scale)));
  };
  if (!t) {
    check(t.error().code == errc::not_finite && t.error().index < 256 && !c.nan_to_zero &&
              std::isnan(value_at(t.error().index)),
          "make_table8: error on a non-NaN entry");
    for (std::size_t i = 0; i < t.error().index; ++i)
      check(!std::isnan(value_at(i)), "make_table8: not the first NaN");
    return;
  }
  for (std::size_t i = 0; i < 256; ++i) {
    const std::int64_t v = t->values[i];
    // nan_to_zero is ExecuTorch's .to(int8) of a NaN: code 0, even outside [qmin, qmax].
    if (std::isnan(value_at(i)))
      check(c.nan_to_zero && v == 0, "make_table8: a NaN gave an entry other than 0");
    else
      check(v >= qo.qmin && v <= qo.qmax, "make_table8: entry outside [qmin, qmax]");
  }
}

template <class Real>
void table8_dispatch(input& in, const qfold::quant_convention<Real>& c) {
  const any_fn f = fn_from(in);
  const std::uint8_t pair = in.byte();
  const bool in_unsigned = (pair & 1) != 0;
  const int out_kind = (pair >> 1) % 3;
  const qparams qi = qparams_from(in, in_unsigned ? qfold::dtype::uint8 : qfold::dtype::int8);
  const qparams qo = qparams_from(in, out_kind == 0   ? qfold::dtype::int8
                                      : out_kind == 1 ? qfold::dtype::uint8
                                                      : qfold::dtype::int16);
  if (in_unsigned) {
    if (out_kind == 0) table8_case<std::uint8_t, std::int8_t>(c, f, qi, qo);
    if (out_kind == 1) table8_case<std::uint8_t, std::uint8_t>(c, f, qi, qo);
    if (out_kind == 2) table8_case<std::uint8_t, std::int16_t>(c, f, qi, qo);
  } else {
    if (out_kind == 0) table8_case<std::int8_t, std::int8_t>(c, f, qi, qo);
    if (out_kind == 1) table8_case<std::int8_t, std::uint8_t>(c, f, qi, qo);
    if (out_kind == 2) table8_case<std::int8_t, std::int16_t>(c, f, qi, qo);
  }
}

void table8_op(input& in) {
  switch (in.byte() % 6) {
    case 0:
      return table8_dispatch(in, qfold::conventions::executorch);
    case 1:
      return table8_dispatch(in, qfold::conventions::tflite);
    case 2:
      return table8_dispatch(in, qfold::conventions::vela);
    case 3:
      return table8_dispatch(in, qfold::conventions::vela_8bit_op);
    case 4:
      return table8_dispatch(in, convention_from<float>(in));
    default:
      return table8_dispatch(in, convention_from<double>(in));
  }
}

void int16_tables_op(input& in) {
  const any_fn f = fn_from(in);
  const bool out32 = in.flag();
  const qparams qi = qparams_from(in, qfold::dtype::int16);
  const qparams qo = qparams_from(in, out32 ? qfold::dtype::int32 : qfold::dtype::int16);
  const auto& c = qfold::conventions::executorch;
  const auto et = qfold::make_executorch_int16_table(f, qi, qo);
  named(et, "executorch int16: unnamed error");
  if (const errc e = expected_error(c, qi); e != errc{}) {
    code_is(et, e, "executorch int16: input qparams");
  } else if (const errc e2 = expected_error(c, qo); e2 != errc{}) {
    code_is(et, e2, "executorch int16: output qparams");
  } else if (qi.type != qfold::dtype::int16 ||
             (qo.type != qfold::dtype::int16 && qo.type != qfold::dtype::int32)) {
    code_is(et, errc::illegal_type, "executorch int16: types");
  } else if (et) {
    check(qfold::validate(et->table).has_value(), "executorch int16: slope REQUIRE broken");
    check(et->rshift >= 0 && et->rshift <= 17, "executorch int16: rshift");
    const auto s = qfold::compute_multiplier_and_shift(
        std::ldexp(1.0, et->rshift - 7), qfold::scale_width::bits32, qfold::tie_rule::half_to_even);
    check(s && *s == et->rescale, "executorch int16: the RESCALE after the TABLE");
  } else {
    const errc e3 = et.error().code;
    check(e3 == errc::not_finite || e3 == errc::value_out_of_range, "executorch int16: code");
  }
  // TFLite LUTPopulate<int16_t>, float and double.
  const auto check_tflite = [&](auto real_tag) {
    using Real = decltype(real_tag);
    const auto t = qfold::make_tflite_int16_table<Real>(f, qi, qo);
    named(t, "tflite int16: unnamed error");
    qfold::quant_convention<Real> plain{};
    plain.multiply_by_reciprocal = false;  // only the scale itself is used in Real
    for (const errc e :
         {basic_error(qi), basic_error(qo), real_error(plain, qi), real_error(plain, qo)})
      if (e != errc{}) return code_is(t, e, "tflite int16: qparams");
    if (qi.type != qfold::dtype::int16 || qo.type != qfold::dtype::int16)
      return code_is(t, errc::illegal_type, "tflite int16: types");
    if (!t) check(t.error().code == errc::not_finite, "tflite int16: code");
  };
  check_tflite(float{});
  check_tflite(double{});
}

// --- int16 lookups and table conversions ------------------------------------------------------
qfold::int16_table int16_table_from(input& in) {
  qfold::int16_table t;
  std::uint64_t state = in.raw<std::uint64_t>();
  const bool smooth = in.flag();
  const int step = in.byte();
  std::int64_t v = static_cast<std::int16_t>(in.raw<std::uint16_t>());
  for (auto& k : t.values) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    if (smooth) {
      v += static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(2 * step + 1)) -
           step;
      v = std::clamp<std::int64_t>(v, -32768, 32767);
      k = static_cast<std::int16_t>(v);
    } else {
      k = static_cast<std::int16_t>(static_cast<std::uint16_t>(state >> 48));
    }
  }
  return t;
}

void lookup_op(input& in) {
  const qfold::int16_table t = int16_table_from(in);
  std::optional<std::size_t> bad;
  for (std::size_t i = 0; i + 1 < 513 && !bad; ++i) {
    const int slope = t.values[i + 1] - t.values[i];
    if (slope < -32768 || slope > 32767) bad = i;
  }
  const auto v = qfold::validate(t);
  check(v.has_value() == !bad &&
            (v || (v.error().code == errc::value_out_of_range && v.error().index == *bad)),
        "validate(int16_table)");
  for (int k = 0; k < 8; ++k) {
    const auto x = static_cast<std::int16_t>(in.raw<std::uint16_t>());
    const std::int64_t u = std::int64_t{x} + 32768;  // the spec's index and fraction
    const std::int64_t base = t.values[static_cast<std::size_t>(u >> 7)];
    const std::int64_t next = t.values[static_cast<std::size_t>((u >> 7) + 1)];
    const std::int64_t slope = next - base, frac = u & 127;
    const auto q = qfold::checked::tosa_lookup(t, x);
    if (slope < -32768 || slope > 32767)
      code_is(q, errc::value_out_of_range, "tosa_lookup: slope REQUIRE");
    else
      check(q && *q == base * 128 + slope * frac, "tosa_lookup differs from the spec");
    // TFLite: base + ((slope * frac + 64) >> 7), stored into an int16 (wraps).
    const std::int64_t tfl = base + ((slope * frac + 64) >> 7);
    check(qfold::tflite_lookup(t, x) == static_cast<std::int16_t>(static_cast<std::uint16_t>(
                                            static_cast<std::uint64_t>(tfl))),
          "tflite_lookup differs from TFLite");
  }
  // Tables from data of any size; TFLite order round trip.
  std::vector<std::int16_t> knots(in.flag() ? 513 : in.byte() * 3u);
  for (std::size_t i = 0; i < knots.size(); ++i) knots[i] = t.values[i % 513];
  const auto from = qfold::int16_table_from(knots);
  if (knots.size() == 513)
    check(from && *from == t, "int16_table_from");
  else
    code_is(from, errc::size_mismatch, "int16_table_from: size");
  std::vector<std::int8_t> entries(in.flag() ? 256 : in.byte());
  for (std::size_t i = 0; i < entries.size(); ++i)
    entries[i] = static_cast<std::int8_t>(t.values[i]);
  const auto t8 =
      qfold::table8_from<std::int8_t, std::int8_t>(std::span<const std::int8_t>(entries));
  if (entries.size() != 256) return code_is(t8, errc::size_mismatch, "table8_from: size");
  check(t8.has_value(), "table8_from");
  check(qfold::from_tflite_order(qfold::to_tflite_order(*t8)) == *t8, "TFLite order round trip");
  for (int code = -128; code <= 127; ++code)
    check((*t8)(static_cast<std::int8_t>(code)) == entries[static_cast<std::size_t>(code + 128)],
          "table8 lookup");
}

// --- chains: steps from bytes, and an independent step-by-step evaluation --------------------
chain::step step_from(input& in) {
  switch (in.byte() % 7) {
    case 0:
      return chain::rescale{attributes_from(in), scale_factor_from(in)};
    case 1:
      return chain::mul{in.sized_i32(), in.flag() ? in.shift() : 0, in.flag()};
    case 2:
      return chain::add{in.sized_i32()};
    case 3:
      return chain::clamp{in.flag() ? in.raw<std::int64_t>() : in.sized_i64(), in.sized_i64()};
    case 4: {
      chain::table t;
      std::uint64_t state = in.raw<std::uint64_t>();
      const bool wide = in.flag();
      for (auto& v : t.values) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        v = wide ? static_cast<std::int32_t>(static_cast<std::uint32_t>(state >> 32))
                 : static_cast<std::int8_t>(static_cast<std::uint8_t>(state >> 56));
      }
      const std::uint8_t f = in.byte();
      t.first_code = f % 4 == 0 ? -128 : f % 4 == 1 ? 0 : in.sized_i32();
      return t;
    }
    case 5:
      return chain::table16{int16_table_from(in)};
    default: {
      using f = chain::requantize::flavour;
      const std::int32_t m = in.sized_i32();
      const int s = in.shift();
      const std::uint8_t k = in.byte();
      return chain::requantize{m, s, k % 8 < 4 ? static_cast<f>(k % 4) : static_cast<f>(in.byte())};
    }
  }
}

struct expect {
  bool ok = false;
  std::int64_t value = 0;
  errc code{};  // errc{} where the code is not derived here (arithmetic errors: only named)
};
bool fits32(i128 v) { return v >= INT32_MIN && v <= INT32_MAX; }
expect fail_with(errc c = errc{}) { return {false, 0, c}; }

expect reference_step(const chain::step& s, std::int64_t x) {
  if (const auto* r = std::get_if<chain::rescale>(&s)) {
    if (!qfold::is_valid(r->attributes.input_type) || !qfold::is_valid(r->attributes.output_type))
      return fail_with(errc::illegal_type);
    const auto v = qref::rescale_as_qfold(r->attributes, r->scale, x);
    return v.ok ? expect{true, v.value, {}} : fail_with();
  }
  if (const auto* m = std::get_if<chain::mul>(&s)) {
    if (!fits32(x)) return fail_with(errc::value_out_of_range);
    const auto v = qref::tosa_mul(qref::DType::i32, x, m->constant, m->shift);
    if (!v.ok) return fail_with();
    if (m->shift == 0 && !m->wrap && !fits32(i128{x} * m->constant))
      return fail_with(errc::result_out_of_range);
    return {true, v.value, {}};
  }
  if (const auto* a = std::get_if<chain::add>(&s)) {
    if (!fits32(x)) return fail_with(errc::value_out_of_range);
    const i128 r = i128{x} + a->constant;
    if (!fits32(r)) return fail_with(errc::result_out_of_range);
    return {true, static_cast<std::int64_t>(r), {}};
  }
  if (const auto* c = std::get_if<chain::clamp>(&s)) {
    if (c->lo > c->hi) return fail_with(errc::empty_range);
    return {true, std::min(std::max(x, c->lo), c->hi), {}};
  }
  if (const auto* t = std::get_if<chain::table>(&s)) {
    const i128 i = i128{x} - t->first_code;
    if (i < 0 || i > 255) return fail_with(errc::value_out_of_range);
    return {true, t->values[static_cast<std::size_t>(i)], {}};
  }
  if (const auto* t = std::get_if<chain::table16>(&s)) {
    if (x < -32768 || x > 32767) return fail_with(errc::value_out_of_range);
    const std::int64_t u = x + 32768;
    const std::int64_t base = t->values.values[static_cast<std::size_t>(u >> 7)];
    const std::int64_t slope = t->values.values[static_cast<std::size_t>((u >> 7) + 1)] - base;
    if (slope < -32768 || slope > 32767) return fail_with(errc::value_out_of_range);
    return {true, base * 128 + slope * (u & 127), {}};
  }
  const auto& q = std::get<chain::requantize>(s);
  if (!fits32(x)) return fail_with(errc::value_out_of_range);
  using f = chain::requantize::flavour;
  if (q.kind != f::tflite_double && q.kind != f::tflite_single && q.kind != f::cmsis_double &&
      q.kind != f::cmsis_single)
    return fail_with(errc::illegal_attributes);
  // qfold refuses the shifts TFLite and CMSIS-NN document as out of range (-31..30).
  if (q.shift < -31 || q.shift > 30) return fail_with();
  const auto xi = static_cast<std::int32_t>(x);
  const auto v =
      q.kind == f::tflite_double
          ? qref::tflite_multiply_by_quantized_multiplier(xi, q.multiplier, q.shift, false)
      : q.kind == f::tflite_single
          ? qref::tflite_multiply_by_quantized_multiplier(xi, q.multiplier, q.shift, true)
      : q.kind == f::cmsis_double
          ? qref::cmsis_requantize(xi, q.multiplier, q.shift, false)
          : qref::kernel::cmsis_requantize_current(xi, q.multiplier, q.shift, true);
  return v.ok ? expect{true, v.value, {}} : fail_with();
}

struct chain_expect {
  expect e;
  std::size_t step = 0;  // the failing step
};
chain_expect reference_chain(std::span<const chain::step> steps, std::int64_t x) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const expect e = reference_step(steps[i], x);
    if (!e.ok) return {e, i};
    x = e.value;
  }
  return {{true, x, {}}, 0};
}
// evaluate(): value, or the failing step as index, with the code where derived.
void same_as_reference(const qfold::result<std::int64_t>& r, const chain_expect& w,
                       const char* what) {
  named(r, what);
  if (w.e.ok) return check(r && *r == w.e.value, what);
  check(!r && r.error().index == w.step && (w.e.code == errc{} || r.error().code == w.e.code),
        what);
}

std::vector<chain::step> steps_from(input& in, std::size_t max) {
  std::vector<chain::step> steps(in.byte() % (max + 1));
  for (auto& s : steps) s = step_from(in);
  return steps;
}

void evaluate_op(input& in) {
  const auto steps = steps_from(in, 6);
  for (int k = 0; k < 4; ++k) {
    const std::int64_t x = in.flag() ? in.raw<std::int64_t>() : in.sized_i64();
    same_as_reference(chain::evaluate(steps, x), reference_chain(steps, x), "chain::evaluate");
  }
}

template <class In, class Out>
void collapse_case(std::span<const chain::step> steps) {
  const auto t = chain::collapse<In, Out>(steps);
  named(t, "collapse: unnamed error");
  std::array<std::int64_t, 256> want{};
  for (std::size_t i = 0; i < 256; ++i) {  // the first code that fails is the one reported
    const auto code = std::int64_t{std::numeric_limits<In>::min()} + static_cast<std::int64_t>(i);
    const chain_expect w = reference_chain(steps, code);
    if (!w.e.ok)
      return check(!t && t.error().index == i && (w.e.code == errc{} || t.error().code == w.e.code),
                   "collapse: the first failing code");
    if (!std::in_range<Out>(w.e.value))
      return check(!t && t.error().index == i && t.error().code == errc::value_out_of_range,
                   "collapse: an output outside Out");
    want[i] = w.e.value;
  }
  check(t.has_value(), "collapse refused a valid chain");
  for (std::size_t i = 0; i < 256; ++i)
    check(static_cast<std::int64_t>(t->values[i]) == want[i], "collapse differs");
}
void collapse_op(input& in) {
  const auto steps = steps_from(in, 5);
  switch (in.byte() % 6) {
    case 0:
      return collapse_case<std::int8_t, std::int8_t>(steps);
    case 1:
      return collapse_case<std::uint8_t, std::uint8_t>(steps);
    case 2:
      return collapse_case<std::int8_t, std::int16_t>(steps);
    case 3:
      return collapse_case<std::uint8_t, std::int32_t>(steps);
    case 4:
      return collapse_case<std::int8_t, std::uint16_t>(steps);
    default:
      return collapse_case<std::uint8_t, std::int8_t>(steps);
  }
}

// collapse_int16, in its documented order: the 512 knots evaluated, then their int16 range, the
// code 32767 and its range, the slopes, every code, then exactness.
void collapse_int16_op(input& in) {
  const auto steps = steps_from(in, 2);
  const bool exact = in.flag();
  const auto fit = chain::collapse_int16(steps, exact);
  named(fit, "collapse_int16: unnamed error");
  const auto fails = [&](std::size_t index, errc code) {
    check(!fit && fit.error().index == index && (code == errc{} || fit.error().code == code),
          "collapse_int16: error");
  };
  std::array<std::int64_t, 513> k{};
  for (std::size_t i = 0; i < 512; ++i) {
    const chain_expect w = reference_chain(steps, -32768 + 128 * static_cast<std::int64_t>(i));
    if (!w.e.ok) return fails(128 * i, w.e.code);
    k[i] = w.e.value;
  }
  for (std::size_t i = 0; i < 512; ++i)
    if (k[i] < -32768 || k[i] > 32767) return fails(128 * i, errc::value_out_of_range);
  const chain_expect last = reference_chain(steps, 32767);
  if (!last.e.ok) return fails(65535, last.e.code);
  if (last.e.value < -32768 || last.e.value > 32767) return fails(65535, errc::value_out_of_range);
  // Knot 512 = k511 + round_half_up(128 (last - k511) / 127), clamped to int16.
  const i128 num = 256 * (i128{last.e.value} - k[511]) + 127;
  i128 q = num / 254;
  if (num % 254 != 0 && num < 0) q -= 1;  // floor
  k[512] = static_cast<std::int64_t>(std::clamp<i128>(k[511] + q, -32768, 32767));
  qfold::int16_table table;
  for (std::size_t i = 0; i < 513; ++i) table.values[i] = static_cast<std::int16_t>(k[i]);
  for (std::size_t i = 0; i < 512; ++i)
    if (k[i + 1] - k[i] < -32768 || k[i + 1] - k[i] > 32767)
      return fails(i, errc::value_out_of_range);
  std::int64_t max_error = 0;
  std::int32_t worst = 0, first = 0;
  for (std::int32_t x = -32768; x <= 32767; ++x) {
    const chain_expect w = reference_chain(steps, x);
    const auto index = static_cast<std::size_t>(x + 32768);
    if (!w.e.ok) return fails(index, w.e.code);
    if (w.e.value < -32768 || w.e.value > 32767) return fails(index, errc::value_out_of_range);
    const std::int64_t u = std::int64_t{x} + 32768;
    const std::int64_t base = k[static_cast<std::size_t>(u >> 7)];
    const std::int64_t slope = k[static_cast<std::size_t>((u >> 7) + 1)] - base;
    const std::int64_t lookup = static_cast<std::int16_t>(static_cast<std::uint16_t>(
        static_cast<std::uint64_t>(base + ((slope * (u & 127) + 64) >> 7))));
    const std::int64_t err = lookup > w.e.value ? lookup - w.e.value : w.e.value - lookup;
    if (err != 0 && max_error == 0) first = x;
    if (err > max_error) {
      max_error = err;
      worst = x;
    }
  }
  if (exact && max_error != 0)
    return fails(static_cast<std::size_t>(first + 32768), errc::not_exact);
  check(fit && fit->table == table && fit->max_error == max_error && fit->worst_code == worst &&
            (max_error == 0 || fit->first_mismatch == first),
        "collapse_int16 differs");
}

// --- math: qfold's correctly rounded functions against <cmath> within 2 ulps -------------------
template <class T>
void close(T ours, T libm, const char* what) {
  if (std::isnan(libm) || std::isnan(ours))
    return check(std::isnan(libm) && std::isnan(ours), what);
  if (ours == libm) return;
  check(qfold::math::ulp_distance(ours, libm) <= 2, what);
}
template <class T>
void bit_equal(T ours, T libm, const char* what) {
  if (std::isnan(libm)) return check(std::isnan(ours), what);
  check(std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(ours) ==
            std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(libm),
        what);
}
template <class T>
void math_case(T x) {
  namespace m = qfold::math;
  close(m::exp(x), std::exp(x), "exp");
  close(m::expm1(x), std::expm1(x), "expm1");
  close(m::log(x), std::log(x), "log");
  close(m::log1p(x), std::log1p(x), "log1p");
  close(m::tanh(x), std::tanh(x), "tanh");
  close(m::erf(x), std::erf(x), "erf");
  close(m::erfc(x), std::erfc(x), "erfc");
  close(m::sqrt(x), std::sqrt(x), "sqrt");
  close(m::sin(x), std::sin(x), "sin");
  close(m::cos(x), std::cos(x), "cos");
  close(m::atan(x), std::atan(x), "atan");
  (void)m::sigmoid(x);
  (void)m::rsqrt(x);
  bit_equal(m::trunc(x), std::trunc(x), "trunc");
  bit_equal(m::floor(x), std::floor(x), "floor");
  bit_equal(m::ceil(x), std::ceil(x), "ceil");
  bit_equal(m::round(x, m::rounding_rule::half_away_from_zero), std::round(x), "round");
  bit_equal(m::round(x, m::rounding_rule::half_to_even), std::nearbyint(x), "nearbyint");
  (void)m::round(x, m::rounding_rule::half_up);
  (void)m::round(x, m::rounding_rule::vela_trunc_add_half);
}
void math_op(input& in) {
  math_case(in.raw<double>());
  math_case(in.raw<float>());
  // Inputs near the ranges tables use: a small integer times a power of two.
  const double y =
      std::ldexp(static_cast<double>(in.sized_i32()), -static_cast<int>(in.byte() % 64));
  math_case(y);
  math_case(static_cast<float>(y));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  switch (in.byte() % 10) {
    case 0:
    case 1:
      table8_op(in);
      break;
    case 2:
      int16_tables_op(in);
      break;
    case 3:
      lookup_op(in);
      break;
    case 4:
    case 5:
      evaluate_op(in);
      break;
    case 6:
      collapse_op(in);
      break;
    case 7:
      collapse_int16_op(in);  // 65,536 codes: slow, so one op of ten
      break;
    default:
      math_op(in);
      break;
  }
  return 0;
}
