// Elementwise integer chains (RESCALE, MUL / ADD by a constant, clamp, table lookups, the TFLite
// and CMSIS-NN requantize flavours) and their exact evaluation on one value. A chain over an
// 8-bit input collapses into one table (compose.hpp); every step keeps its integer semantics.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <variant>

#include "qfold/arith/cmsis_nn.hpp"
#include "qfold/arith/mul.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/arith/result.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/arith/tflite.hpp"
#include "qfold/table/lut.hpp"

namespace qfold::chain {

// TOSA RESCALE of one value (one channel).
struct rescale {
  rescale_attributes attributes;
  scale_factor scale;
};

// TOSA MUL (int32) by a constant. With shift 0 the product wraps to 32 bits as TOSA defines;
// `wrap = false` makes that overflow an error instead (for chains that must not wrap).
struct mul {
  std::int32_t constant = 1;
  int shift = 0;
  bool wrap = true;
};

// TOSA ADD (int32) of a constant; an int32 overflow is an error.
struct add {
  std::int32_t constant = 0;
};

struct clamp {
  std::int64_t lo, hi;
};

// A 256-entry table indexed by (value - first_code); a value outside the 256 codes is an error.
struct table {
  std::array<std::int32_t, 256> values{};
  std::int32_t first_code = -128;

  template <class In, class Out>
  [[nodiscard]] static constexpr table from(const table8<In, Out>& t) noexcept {
    table r{{}, std::numeric_limits<In>::min()};
    for (std::size_t i = 0; i < 256; ++i) r.values[i] = t.values[i];
    return r;
  }
};

// TOSA TABLE int16: the unrounded 16.7 result (as TOSA); follow it with a rescale to round.
struct table16 {
  int16_table values;
};

// MultiplyByQuantizedMultiplier / arm_nn_requantize with a TFLite-style (left) shift.
struct requantize {
  enum class flavour : std::uint8_t { tflite_double, tflite_single, cmsis_double, cmsis_single };
  std::int32_t multiplier = 0;
  int shift = 0;
  flavour kind = flavour::tflite_double;
};

using step = std::variant<rescale, mul, add, clamp, table, table16, requantize>;

namespace detail {
struct apply_step {
  std::int64_t x;

  constexpr result<std::int64_t> operator()(const rescale& s) const {
    const auto r = checked::rescale_value(s.attributes, s.scale, x);
    return r ? result<std::int64_t>(*r) : result<std::int64_t>(r.error());
  }
  constexpr result<std::int64_t> operator()(const mul& s) const {
    if (!fits_int32(x)) return fail(errc::value_out_of_range, "chain mul: input is not an int32");
    const std::int64_t product = x * s.constant;
    if (s.shift == 0 && !s.wrap && !fits_int32(product))
      return fail(errc::result_out_of_range, "chain mul: int32 overflow (wrap disabled)");
    const auto r = checked::mul(static_cast<std::int32_t>(x), s.constant, s.shift);
    return r ? result<std::int64_t>(*r) : result<std::int64_t>(r.error());
  }
  constexpr result<std::int64_t> operator()(const add& s) const {
    // The input is checked before the sum: x may be any int64 (a clamp or the caller's input).
    if (!fits_int32(x)) return fail(errc::value_out_of_range, "chain add: input is not an int32");
    const std::int64_t r = x + s.constant;
    if (!fits_int32(r)) return fail(errc::result_out_of_range, "chain add: int32 overflow");
    return r;
  }
  constexpr result<std::int64_t> operator()(const clamp& s) const {
    if (s.lo > s.hi) return fail(errc::empty_range, "chain clamp: lo > hi");
    return qfold::clamp(x, s.lo, s.hi);
  }
  constexpr result<std::int64_t> operator()(const table& s) const {
    // Compared before subtracting: x - first_code overflows for x near INT64_MIN.
    if (x < s.first_code || x > std::int64_t{s.first_code} + 255)
      return fail(errc::value_out_of_range, "chain table: input outside the table's 256 codes");
    return s.values[static_cast<std::size_t>(x - s.first_code)];
  }
  constexpr result<std::int64_t> operator()(const table16& s) const {
    if (x < -32768 || x > 32767)
      return fail(errc::value_out_of_range, "chain table16: input is not an int16");
    const auto r = checked::tosa_lookup(s.values, static_cast<std::int16_t>(x));
    return r ? result<std::int64_t>(*r) : result<std::int64_t>(r.error());
  }
  constexpr result<std::int64_t> operator()(const requantize& s) const {
    if (!fits_int32(x))
      return fail(errc::value_out_of_range, "chain requantize: input is not an int32");
    const auto v = static_cast<std::int32_t>(x);
    using f = requantize::flavour;
    if (s.kind != f::tflite_double && s.kind != f::tflite_single && s.kind != f::cmsis_double &&
        s.kind != f::cmsis_single)
      return fail(errc::illegal_attributes, "chain requantize: unknown flavour");
    const result<std::int32_t> r =
        s.kind == f::tflite_double
            ? tflite::checked::multiply_by_quantized_multiplier(v, s.multiplier, s.shift)
        : s.kind == f::tflite_single ? tflite::checked::multiply_by_quantized_multiplier(
                                           v, s.multiplier, s.shift, tflite::rounding::single_round)
        : s.kind == f::cmsis_double
            ? cmsis_nn::checked::requantize(v, s.multiplier, s.shift)
            : cmsis_nn::checked::requantize(v, s.multiplier, s.shift,
                                            cmsis_nn::rounding::single_round);
    return r ? result<std::int64_t>(*r) : result<std::int64_t>(r.error());
  }
};

// A switch on the alternative rather than std::visit, whose dispatch tables cost every TU that
// includes this header ~0.07 s with clang++ 14 (bench/README.md, "Include cost").
static_assert(std::variant_size_v<step> == 7, "a new step needs its case below");
[[nodiscard]] constexpr result<std::int64_t> apply(const step& s, std::int64_t x) {
  const apply_step f{x};
  // clang-format off
  switch (s.index()) {
    case 0: return f(std::get<0>(s));
    case 1: return f(std::get<1>(s));
    case 2: return f(std::get<2>(s));
    case 3: return f(std::get<3>(s));
    case 4: return f(std::get<4>(s));
    case 5: return f(std::get<5>(s));
    case 6: return f(std::get<6>(s));
    default: break;
  }
  // clang-format on
  // Not reached: every alternative is trivially copyable, so a step is never valueless.
  return fail(errc::illegal_attributes, "chain: a step without a value");
}
}  // namespace detail

// The chain's value for input x, or the first step's error (error.index = the step).
[[nodiscard]] constexpr result<std::int64_t> evaluate(std::span<const step> steps, std::int64_t x) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const result<std::int64_t> r = detail::apply(steps[i], x);
    if (!r) return fail(r.error().code, r.error().message, i);
    x = *r;
  }
  return x;
}

}  // namespace qfold::chain
