// The TOSA RESCALE operator (spec RESCALE.tosac, reference model type_conversion.cpp): its
// attributes, the ERROR_IF validation, and per-element evaluation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"

namespace qfold {

// TOSA integer element types of RESCALE; signedness is the separate *_unsigned attribute.
enum class int_type : std::uint8_t { i8 = 8, i16 = 16, i32 = 32, i48 = 48 };

enum class rounding_mode : std::uint8_t {
  single_round = 1,   // round half up
  inexact_round = 2,  // EXT-INEXACTROUND: any result within the spec's tolerance; not bit exact
  double_round = 3,   // EXT-DOUBLEROUND: extra +-2^30 nudge when shift > 31
};

[[nodiscard]] constexpr int bit_width(int_type t) noexcept { return static_cast<int>(t); }

// False for a value cast into int_type from outside the enum (e.g. from a file or an IR).
[[nodiscard]] constexpr bool is_valid(int_type t) noexcept {
  return t == int_type::i8 || t == int_type::i16 || t == int_type::i32 || t == int_type::i48;
}

// Numeric range of an element type as interpreted (unsigned only for i8 and i16).
struct int_range {
  std::int64_t lo, hi;
  [[nodiscard]] constexpr bool contains(std::int64_t v) const noexcept {
    return v >= lo && v <= hi;
  }
};
// Contract: t is one of the four types (an out-of-enum width would shift by it).
[[nodiscard]] constexpr int_range range_of(int_type t, bool is_unsigned) noexcept {
  detail::expects(is_valid(t), "range_of: int_type is i8, i16, i32 or i48");
  const int bits = bit_width(t);
  if (is_unsigned) return {0, (std::int64_t{1} << bits) - 1};
  return {-(std::int64_t{1} << (bits - 1)), (std::int64_t{1} << (bits - 1)) - 1};
}

// Every RESCALE attribute except the per-channel multiplier/shift arrays. Zero points are numeric
// values of the interpreted type: 0..255 for unsigned i8, 0 or 32768 for unsigned i16.
struct rescale_attributes {
  int_type input_type = int_type::i8;
  int_type output_type = int_type::i8;
  bool scale32 = true;
  rounding_mode rounding = rounding_mode::single_round;
  bool per_channel = false;
  bool input_unsigned = false;
  bool output_unsigned = false;
  std::int64_t input_zp = 0;
  std::int64_t output_zp = 0;

  [[nodiscard]] constexpr int_range input_range() const noexcept {
    return range_of(input_type, input_unsigned);
  }
  [[nodiscard]] constexpr int_range output_range() const noexcept {
    return range_of(output_type, output_unsigned);
  }
  friend constexpr bool operator==(const rescale_attributes&, const rescale_attributes&) = default;
};

// False for INEXACT_ROUND: its output is only specified within a tolerance, so no fold may treat
// it as a function. qfold evaluates it as SINGLE_ROUND (one of the permitted results).
// A RESCALE's attributes with its multiplier/shift pairs (one, or one per channel), as a graph
// node holds them.
struct rescale_view {
  rescale_attributes attributes;
  std::span<const scale_factor> scales;
};

[[nodiscard]] constexpr bool is_bit_exact(const rescale_attributes& a) noexcept {
  return a.rounding != rounding_mode::inexact_round;
}

namespace detail {
[[nodiscard]] constexpr bool zero_point_ok(int_type t, bool is_unsigned, std::int64_t zp) noexcept {
  if (zp == 0) return true;
  if (t == int_type::i8) return range_of(t, is_unsigned).contains(zp);
  return t == int_type::i16 && is_unsigned && zp == 32768;
}
}  // namespace detail

// The spec's ERROR_IF list, one error per condition, in the spec's order.
[[nodiscard]] constexpr result<void> validate(const rescale_attributes& a) {
  const auto in = a.input_type, out = a.output_type;
  // First: every later rule reads the types (and range_of shifts by their width).
  if (!is_valid(in)) return fail(errc::illegal_type, "rescale: input type is not i8/i16/i32/i48");
  if (!is_valid(out)) return fail(errc::illegal_type, "rescale: output type is not i8/i16/i32/i48");
  if (out == int_type::i48)
    return fail(errc::illegal_type, "rescale: output type i48 is not allowed");
  if (a.rounding != rounding_mode::single_round && a.rounding != rounding_mode::inexact_round &&
      a.rounding != rounding_mode::double_round)
    return fail(errc::illegal_attributes, "rescale: unknown rounding_mode");
  if (!detail::zero_point_ok(in, a.input_unsigned, a.input_zp))
    return fail(
        errc::illegal_zero_point,
        "rescale: input_zp must be 0 unless input is i8 (in range) or unsigned i16 (0 or 32768)");
  if (!detail::zero_point_ok(out, a.output_unsigned, a.output_zp))
    return fail(
        errc::illegal_zero_point,
        "rescale: output_zp must be 0 unless output is i8 (in range) or unsigned i16 (0 or 32768)");
  if (a.scale32 && in == int_type::i48)
    return fail(errc::illegal_attributes, "rescale: scale32 with i48 input");
  if (!a.scale32 && a.rounding == rounding_mode::double_round)
    return fail(errc::illegal_attributes, "rescale: DOUBLE_ROUND requires scale32");
  if (a.input_unsigned && a.output_unsigned)
    return fail(errc::illegal_attributes, "rescale: input_unsigned and output_unsigned both set");
  if (a.output_unsigned && (in == int_type::i32 || in == int_type::i48 || out == int_type::i32))
    return fail(errc::illegal_attributes,
                "rescale: output_unsigned with i32/i48 input or i32 output");
  if (a.input_unsigned && (out == int_type::i32 || in == int_type::i32 || in == int_type::i48))
    return fail(errc::illegal_attributes,
                "rescale: input_unsigned with i32/i48 input or i32 output");
  return {};
}

// A multiplier/shift pair legal for the attributes: multiplier >= 0 (and an int16 when
// !scale32), shift in 2..62.
[[nodiscard]] constexpr result<void> validate(const rescale_attributes& a, scale_factor s) {
  if (s.multiplier < 0) return fail(errc::negative_multiplier, "rescale: multiplier < 0");
  if (!a.scale32 && s.multiplier > 32767)
    return fail(errc::multiplier_out_of_range,
                "rescale: multiplier does not fit int16 (scale32 = false)");
  if (s.shift < 2 || s.shift > 62)
    return fail(errc::shift_out_of_range, "rescale: shift outside 2..62");
  return {};
}

// Attributes plus the multiplier/shift arrays for a tensor whose last dimension is `channels`
// (ignored unless per_channel; per-tensor needs exactly one pair).
[[nodiscard]] constexpr result<void> validate(const rescale_attributes& a,
                                              std::span<const scale_factor> scales,
                                              std::size_t channels) {
  if (auto r = validate(a); !r) return r;
  if (scales.size() != (a.per_channel ? channels : 1))
    return fail(errc::size_mismatch,
                "rescale: multiplier/shift count differs from the channel count");
  if (a.per_channel && channels == 0)
    return fail(errc::size_mismatch, "rescale: per_channel with no channels");
  for (std::size_t c = 0; c < scales.size(); ++c)
    if (auto r = validate(a, scales[c]); !r) return fail(r.error().code, r.error().message, c);
  return {};
}

// How RESCALE adds output_zp to the scaled value. `checked`: the TOSA reference model's REQUIRE
// (apply_add_s<int32_t>): an int32 overflow is an error. `wrapping`: MLIR's TosaToLinalg lowering
// adds it with a plain i32 arith.addi, which wraps; the clamp then sees the wrapped value. They
// differ only where scaled + output_zp leaves int32 (reachable with scale16 / int48 input).
enum class zero_point_add : std::uint8_t { checked, wrapping };

namespace detail {
// One element of a RESCALE whose attributes and scale passed validate(a) and validate(a, s): the
// per-element checks only (a proof that evaluates one RESCALE on every code validates it once).
[[nodiscard]] constexpr result<std::int32_t> rescale_validated(const rescale_attributes& a,
                                                               scale_factor s, std::int64_t in,
                                                               zero_point_add zp_add) {
  if (!a.input_range().contains(in))
    return fail(errc::value_out_of_range, "rescale: input outside its type");
  const std::int64_t v =
      in - a.input_zp;  // fits int32 whenever scale32 (i8/i16/i32 inputs, i32 zp 0)
  const result<std::int32_t> scaled =
      a.scale32 ? checked::apply_scale_32(static_cast<std::int32_t>(v), s.multiplier, s.shift,
                                          a.rounding == rounding_mode::double_round)
                : checked::apply_scale_16(v, static_cast<std::int16_t>(s.multiplier), s.shift);
  if (!scaled) return scaled;
  std::int64_t r = std::int64_t{*scaled} + a.output_zp;
  if (zp_add == zero_point_add::wrapping) r = wrap_int32(r);
  if (!fits_int32(r))
    return fail(errc::result_out_of_range, "rescale: adding output_zp overflows int32");
  // Clamp with signed comparisons, as the reference model does: negatives become 0 when unsigned.
  const int_range out = a.output_range();
  return static_cast<std::int32_t>(clamp(r, out.lo, out.hi));
}
}  // namespace detail

namespace checked {
// One element. Errors: invalid attributes or scale (see validate), input outside its type,
// apply_scale requirements (value range for scale32, int32 result for scale16), and int32
// overflow when adding output_zp (the reference model's REQUIRE) unless zp_add is wrapping.
[[nodiscard]] constexpr result<std::int32_t> rescale_value(const rescale_attributes& a,
                                                           scale_factor s, std::int64_t in,
                                                           zero_point_add zp_add) {
  if (zp_add != zero_point_add::checked && zp_add != zero_point_add::wrapping)
    return fail(errc::illegal_attributes, "rescale: unknown zero_point_add");
  if (auto ok = validate(a); !ok) return ok.error();
  if (auto ok = validate(a, s); !ok) return ok.error();
  return detail::rescale_validated(a, s, in, zp_add);
}
[[nodiscard]] constexpr result<std::int32_t> rescale_value(const rescale_attributes& a,
                                                           scale_factor s, std::int64_t in) {
  return rescale_value(a, s, in, zero_point_add::checked);
}
}  // namespace checked

// Unchecked: a valid element is the caller's contract (compile error in constant evaluation).
[[nodiscard]] constexpr std::int32_t rescale_value(
    const rescale_attributes& a, scale_factor s, std::int64_t in,
    zero_point_add zp_add = zero_point_add::checked) {
  const result<std::int32_t> r = checked::rescale_value(a, s, in, zp_add);
  detail::expects(r.has_value(),
                  "rescale_value: input in type, apply_scale requirements, no output_zp overflow");
  return *r;
}

// The first input in [lo, hi] (clipped to the input type) where RESCALE with zp_add `x` and with
// `y` differ (a value against an error, or two values), or nullopt when they agree on all of it.
// For 8- and 16-bit inputs the default range is the whole type, so the answer is exhaustive.
[[nodiscard]] constexpr std::optional<std::int64_t> first_disagreement(
    const rescale_attributes& a, scale_factor s, zero_point_add x, zero_point_add y,
    std::int64_t lo, std::int64_t hi) {
  if (!is_valid(a.input_type)) return std::nullopt;  // both refuse every input alike
  const int_range in = a.input_range();
  for (std::int64_t v = lo < in.lo ? in.lo : lo, end = hi > in.hi ? in.hi : hi; v <= end; ++v) {
    const result<std::int32_t> p = checked::rescale_value(a, s, v, x);
    const result<std::int32_t> q = checked::rescale_value(a, s, v, y);
    if (p.has_value() != q.has_value() || (p && *p != *q)) return v;
  }
  return std::nullopt;
}
namespace detail {
[[nodiscard]] constexpr bool scaled_defined(const rescale_attributes& a, scale_factor s,
                                            std::int64_t v) {
  return checked::rescale_value(a, s, v, zero_point_add::wrapping).has_value();
}
// apply_scale's result for input v (which must be defined), without output_zp.
[[nodiscard]] constexpr std::int64_t scaled_of(const rescale_attributes& a, scale_factor s,
                                               std::int64_t v) {
  const std::int64_t x = v - a.input_zp;
  return a.scale32
             ? *qfold::checked::apply_scale_32(static_cast<std::int32_t>(x), s.multiplier, s.shift,
                                               a.rounding == rounding_mode::double_round)
             : *qfold::checked::apply_scale_16(x, static_cast<std::int16_t>(s.multiplier), s.shift);
}
// The smallest v in [lo, hi] with pred(v), for pred false-then-true on [lo, hi]; hi + 1 if none.
template <class Pred>
[[nodiscard]] constexpr std::int64_t first_true(std::int64_t lo, std::int64_t hi, Pred pred) {
  std::int64_t end = hi + 1;
  while (lo < end) {
    const std::int64_t mid = lo + (end - lo) / 2;
    if (pred(mid))
      end = mid;
    else
      lo = mid + 1;
  }
  return end;
}
}  // namespace detail

// The first input of the whole input type where RESCALE with zp_add `x` and with `y` differ, for
// every input type (int48 included), in O(log) evaluations. Why it is exact: with multiplier >= 0
// apply_scale is non-decreasing in the input (DOUBLE_ROUND's nudge only jumps upward at 0), so
// the inputs it defines form an interval [L, H] around input_zp (scaled 0), and the inputs where
// scaled + output_zp leaves int32 are a prefix of [L, input_zp] (below) and a suffix of
// [input_zp, H] (above); only there do the two additions differ. Tests compare it with the
// exhaustive first_disagreement above.
[[nodiscard]] constexpr std::optional<std::int64_t> first_disagreement(const rescale_attributes& a,
                                                                       scale_factor s,
                                                                       zero_point_add x,
                                                                       zero_point_add y) {
  if (x == y || !validate(a) || !validate(a, s)) return std::nullopt;
  const int_range in = a.input_range();
  const bool known = [](zero_point_add z) {
    return z == zero_point_add::checked || z == zero_point_add::wrapping;
  }(x) && [](zero_point_add z) {
    return z == zero_point_add::checked || z == zero_point_add::wrapping;
  }(y);
  if (!known) return in.lo;           // one side refuses every input, the other does not
  const std::int64_t c = a.input_zp;  // a legal zero point lies in the input type; scaled(c) = 0
  const std::int64_t hi_def =
      detail::first_true(c, in.hi,
                         [&](std::int64_t v) { return !detail::scaled_defined(a, s, v); }) -
      1;
  const std::int64_t lo_def =
      detail::first_true(in.lo, c, [&](std::int64_t v) { return detail::scaled_defined(a, s, v); });
  if (detail::scaled_of(a, s, lo_def) + a.output_zp < int32_min) return lo_def;
  const std::int64_t up = detail::first_true(c, hi_def, [&](std::int64_t v) {
    return detail::scaled_of(a, s, v) + a.output_zp > int32_max;
  });
  if (up <= hi_def) return up;
  return std::nullopt;
}

// Whether the two zero-point additions give the same codes on every input of the input type.
[[nodiscard]] constexpr bool same_function(const rescale_attributes& a, scale_factor s,
                                           zero_point_add x, zero_point_add y) {
  return !first_disagreement(a, s, x, y).has_value();
}

}  // namespace qfold
