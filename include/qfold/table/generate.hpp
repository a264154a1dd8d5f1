// Table generators: any real function through an ecosystem's quantization convention into a
// 256-entry 8-bit table, ExecuTorch's 513-knot int16 TABLE (with its shift and the RESCALE that
// must follow) and TFLite's LUTPopulate<int16_t>. The same code runs at compile and run time.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>

#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/arith/scale_derivation.hpp"
#include "qfold/math/rounding.hpp"
#include "qfold/quant/conventions.hpp"
#include "qfold/quant/qparams.hpp"
#include "qfold/table/lut.hpp"

namespace qfold {

template <class T>
inline constexpr dtype dtype_of = std::same_as<T, std::int8_t>     ? dtype::int8
                                  : std::same_as<T, std::uint8_t>  ? dtype::uint8
                                  : std::same_as<T, std::int16_t>  ? dtype::int16
                                  : std::same_as<T, std::uint16_t> ? dtype::uint16
                                                                   : dtype::int32;

namespace checked {
// entry i = quantize_out(f(dequantize_in(code_i))) for the 256 codes of In, under convention c.
// Errors: invalid qparams or ones the convention cannot use (validate(c, q)), qparams types that
// differ from In / Out, and a NaN result (error.index = the entry).
template <class In, class Out, std::floating_point Real, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr result<table8<In, Out>> make_table8(const quant_convention<Real>& c,
                                                            const F& f, const qparams& in,
                                                            const qparams& out) {
  if (auto ok = validate(c, in); !ok) return ok.error();
  if (auto ok = validate(c, out); !ok) return ok.error();
  if (in.type != dtype_of<In> || out.type != dtype_of<Out>)
    return fail(errc::illegal_type, "make_table8: qparams element types differ from the table's");
  table8<In, Out> t;
  for (int i = 0; i < 256; ++i) {
    std::int64_t code = std::numeric_limits<In>::min() + i;
    if (c.clamp_input_codes) code = qfold::clamp(code, in.qmin, in.qmax);
    const result<std::int64_t> q = quantize(c, out, static_cast<Real>(f(dequantize(c, in, code))));
    if (!q)
      return fail(q.error().code, "make_table8: the function gives NaN",
                  static_cast<std::size_t>(i));
    t.values[static_cast<std::size_t>(i)] = static_cast<Out>(*q);
  }
  return t;
}

// The element types deduced from typed qparams (make_qparams<dtype::int8>(...)): the dtype is
// then a template argument, so deduction works in constant expressions too. (A plain qparams
// carries its dtype as a run-time value, from which no type can be deduced; returning a variant
// of the four tables instead would make every caller unpack it.) A dtype other than int8/uint8
// is a compile error that names it.
template <dtype I, dtype O, std::floating_point Real, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr auto make_table8(const quant_convention<Real>& c, const F& f,
                                         const typed_qparams<I>& in, const typed_qparams<O>& out) {
  static_assert(I == dtype::int8 || I == dtype::uint8,
                "make_table8: the input qparams' dtype must be int8 or uint8");
  static_assert(O == dtype::int8 || O == dtype::uint8,
                "make_table8: the output qparams' dtype must be int8 or uint8");
  return checked::make_table8<element_type_t<I>, element_type_t<O>>(c, f, in, out);
}
}  // namespace checked

// Contract form: the table itself; the conditions under which checked::make_table8 fails are the
// caller's contract (a violation is a compile error in constant evaluation and stops the program
// at run time).
template <dtype I, dtype O, std::floating_point Real, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr auto make_table8(const quant_convention<Real>& c, const F& f,
                                         const typed_qparams<I>& in, const typed_qparams<O>& out) {
  const auto r = checked::make_table8(c, f, in, out);
  detail::expects(r.has_value(),
                  "make_table8: qparams valid for the convention, and no NaN from the function");
  return *r;
}

// The spelling from before the two forms: element types as template arguments, plain qparams, a
// result. Kept so that existing code compiles unchanged; it is checked::make_table8<In, Out>.
template <class In, class Out, std::floating_point Real, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr result<table8<In, Out>> make_table8(const quant_convention<Real>& c,
                                                            const F& f, const qparams& in,
                                                            const qparams& out) {
  return checked::make_table8<In, Out>(c, f, in, out);
}

// ExecuTorch's int16 TABLE: the table, the right shift applied to its knots, and the RESCALE
// by 2^(rshift - 7) that must follow the TABLE (32-bit 16.7 output -> output qparams).
struct executorch_int16_table {
  int16_table table;
  int rshift = 0;
  scale_factor rescale;  // multiplier/shift of 2^(rshift - 7), as ExecuTorch derives it
};

namespace detail {
// torch.linspace(start, end, steps) for an integral dtype: double step, the first half counted
// from start and the second from end, each truncated toward zero.
[[nodiscard]] constexpr std::int64_t linspace_int(std::int64_t start, std::int64_t end, int steps,
                                                  int i) noexcept {
  const double step = static_cast<double>(end - start) / static_cast<double>(steps - 1);
  const double v = i < steps / 2 ? static_cast<double>(start) + step * i
                                 : static_cast<double>(end) - step * (steps - i - 1);
  return static_cast<std::int64_t>(v);
}
}  // namespace detail

namespace checked {
// generate_16_bit_table_values of ExecuTorch's InsertTableOpsPass (int16 input; int16 or int32
// output qparams): knots at linspace(qmin, qmax + 1, 513) clamped and masked with ~0x7F, the
// virtual end point (32768 - zp) * scale when qmax == 32767, quantized with the output qparams,
// then floor-shifted right by max(0, ceil(log2(max |knot|)) + 1 - 16) into int16 (wrapping like
// .to(int16)). Errors: invalid qparams, non-int16 input, NaN, every knot 0 (log2(0) raises), and
// a slope outside int16 (the TABLE would break the spec's REQUIRE).
template <class F>
requires std::invocable<const F&, float>
[[nodiscard]] constexpr result<executorch_int16_table> make_executorch_int16_table(
    const F& f, const qparams& in, const qparams& out) {
  constexpr auto& c = conventions::executorch;
  if (auto ok = validate(c, in); !ok) return ok.error();
  if (auto ok = validate(c, out); !ok) return ok.error();
  if (in.type != dtype::int16 || (out.type != dtype::int16 && out.type != dtype::int32))
    return fail(errc::illegal_type,
                "make_executorch_int16_table: needs int16 input and int16/int32 output");
  std::int64_t knots[513] = {};
  std::int64_t max_abs = 0;
  for (int i = 0; i < 513; ++i) {
    const std::int64_t code =
        qfold::clamp(detail::linspace_int(in.qmin, in.qmax + 1, 513, i), in.qmin, in.qmax);
    float x = dequantize(c, in, code & ~std::int64_t{0x7F});
    if (i == 512 && in.qmax == 32767) x = static_cast<float>((32768.0 - in.zero_point) * in.scale);
    const result<std::int64_t> q = quantize(c, out, static_cast<float>(f(x)));
    if (!q)
      return fail(q.error().code, "make_executorch_int16_table: the function gives NaN",
                  static_cast<std::size_t>(i));
    knots[i] = *q;
    max_abs = std::max(max_abs, *q < 0 ? -*q : *q);
  }
  if (max_abs == 0)
    return fail(errc::value_out_of_range, "make_executorch_int16_table: every knot is 0");
  const int ceil_log2 = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(max_abs - 1)));
  executorch_int16_table r;
  r.rshift = std::max(0, ceil_log2 + 1 - 16);
  for (std::size_t i = 0; i < 513; ++i)
    r.table.values[i] = static_cast<std::int16_t>(
        static_cast<std::uint16_t>(static_cast<std::uint64_t>(knots[i] >> r.rshift)));
  if (auto ok = validate(r.table); !ok) return ok.error();  // TOSA's slope REQUIRE
  double scale = 1.0;
  for (int k = 0; k < 7 - r.rshift; ++k) scale *= 0.5;
  for (int k = 0; k < r.rshift - 7; ++k) scale *= 2.0;
  const result<scale_factor> s =
      qfold::compute_multiplier_and_shift(scale, scale_width::bits32, tie_rule::half_to_even);
  if (!s) return s.error();
  r.rescale = *s;
  return r;
}

// The same from typed qparams (make_qparams<dtype::int16>(...)); other dtypes are a compile error.
template <dtype I, dtype O, class F>
requires std::invocable<const F&, float>
[[nodiscard]] constexpr result<executorch_int16_table> make_executorch_int16_table(
    const F& f, const typed_qparams<I>& in, const typed_qparams<O>& out) {
  static_assert(I == dtype::int16, "make_executorch_int16_table: the input dtype must be int16");
  static_assert(O == dtype::int16 || O == dtype::int32,
                "make_executorch_int16_table: the output dtype must be int16 or int32");
  return checked::make_executorch_int16_table(f, static_cast<const qparams&>(in),
                                              static_cast<const qparams&>(out));
}
}  // namespace checked

// Contract form (typed qparams): the table; checked::make_executorch_int16_table's errors are
// the caller's contract.
template <dtype I, dtype O, class F>
requires std::invocable<const F&, float>
[[nodiscard]] constexpr executorch_int16_table make_executorch_int16_table(
    const F& f, const typed_qparams<I>& in, const typed_qparams<O>& out) {
  const auto r = checked::make_executorch_int16_table(f, in, out);
  detail::expects(r.has_value(),
                  "make_executorch_int16_table: valid qparams, no NaN, not all 0, int16 slopes");
  return *r;
}

// The spelling from before the two forms (plain qparams, a result): checked::'s.
template <class F>
requires std::invocable<const F&, float>
[[nodiscard]] constexpr result<executorch_int16_table> make_executorch_int16_table(
    const F& f, const qparams& in, const qparams& out) {
  return checked::make_executorch_int16_table(f, in, out);
}

namespace checked {
// TFLite LUTPopulate<int16_t> (common.h): 512 segments over the real input range, each knot
// corrected by half the midpoint interpolation error; all arithmetic in Real (float by default),
// TfLiteRound (half away from zero); no output zero point in the table.
template <std::floating_point Real = float, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr result<int16_table> make_tflite_int16_table(const F& f, const qparams& in,
                                                                    const qparams& out) {
  if (auto ok = validate(in); !ok) return ok.error();
  if (auto ok = validate(out); !ok) return ok.error();
  // Both scales are used in Real: they must be normal numbers of it.
  for (const double scale : {in.scale, out.scale})
    if (const int k = detail::magnitude_class<Real>(scale); k != 0)
      return k < 0 ? fail(errc::scale_subnormal, "make_tflite_int16_table: scale subnormal in Real")
                   : fail(errc::scale_too_large, "make_tflite_int16_table: scale overflows Real");
  if (in.type != dtype::int16 || out.type != dtype::int16)
    return fail(errc::illegal_type, "make_tflite_int16_table: needs int16 input and output");
  const auto round = [](Real v) {
    return math::round(v, math::rounding_rule::half_away_from_zero);
  };
  const Real in_scale = static_cast<Real>(in.scale), out_scale = static_cast<Real>(out.scale);
  const Real input_min = in_scale * static_cast<Real>(-32768 - in.zero_point);
  const Real input_max = in_scale * static_cast<Real>(32767 - in.zero_point);
  const Real output_min = out_scale * static_cast<Real>(-32768 - out.zero_point);
  const Real output_max = out_scale * static_cast<Real>(32767 - out.zero_point);
  const Real step = (input_max - input_min) / Real{512};
  const Real half_step = step / Real{2};
  const Real inv = Real{65536} / (output_max - output_min);
  const auto store = [](Real v) -> result<std::int16_t> {
    if (v != v) return fail(errc::not_finite, "make_tflite_int16_table: the function gives NaN");
    return static_cast<std::int16_t>(v < Real{-32768} ? Real{-32768}
                                                      : (v > Real{32767} ? Real{32767} : v));
  };
  int16_table t;
  for (int i = 0; i < 512; ++i) {
    const Real val = static_cast<Real>(f(input_min + static_cast<Real>(i) * step));
    const Real mid = static_cast<Real>(f(input_min + static_cast<Real>(i) * step + half_step));
    const Real next = static_cast<Real>(f(input_min + static_cast<Real>(i + 1) * step));
    const Real sample = round(val * inv);
    const Real midpoint_interp = round((next * inv + round(val * inv)) / Real{2});
    const Real midpoint = round(mid * inv);
    const Real bias = round((midpoint_interp - midpoint) / Real{2});
    const auto v = store(sample - bias);
    if (!v) return fail(v.error().code, v.error().message, static_cast<std::size_t>(i));
    t.values[static_cast<std::size_t>(i)] = *v;
  }
  const auto last = store(round(static_cast<Real>(f(input_max)) * inv));
  if (!last) return fail(last.error().code, last.error().message, 512);
  t.values[512] = *last;
  return t;
}

// The same from typed qparams (make_qparams<dtype::int16>(...)); other dtypes are a compile error.
template <std::floating_point Real = float, dtype I, dtype O, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr result<int16_table> make_tflite_int16_table(const F& f,
                                                                    const typed_qparams<I>& in,
                                                                    const typed_qparams<O>& out) {
  static_assert(I == dtype::int16 && O == dtype::int16,
                "make_tflite_int16_table: the input and output dtypes must be int16");
  return checked::make_tflite_int16_table<Real>(f, static_cast<const qparams&>(in),
                                                static_cast<const qparams&>(out));
}
}  // namespace checked

// Contract form (typed qparams): the table; checked::make_tflite_int16_table's errors are the
// caller's contract.
template <std::floating_point Real = float, dtype I, dtype O, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr int16_table make_tflite_int16_table(const F& f, const typed_qparams<I>& in,
                                                            const typed_qparams<O>& out) {
  const auto r = checked::make_tflite_int16_table<Real>(f, in, out);
  detail::expects(r.has_value(), "make_tflite_int16_table: valid int16 qparams, no NaN");
  return *r;
}

// The spelling from before the two forms (plain qparams, a result): checked::'s.
template <std::floating_point Real = float, class F>
requires std::invocable<const F&, Real>
[[nodiscard]] constexpr result<int16_table> make_tflite_int16_table(const F& f, const qparams& in,
                                                                    const qparams& out) {
  return checked::make_tflite_int16_table<Real>(f, in, out);
}

}  // namespace qfold
