// Multiplier and shift from a real scale, exactly as the TOSA lowerings compute them
// (ExecuTorch _compute_multiplier_and_shift, MLIR computeMultiplierAndShiftTosaScale32/16), with
// the tie rule an explicit choice. Pure integer work on the double's bits: constexpr, no <cmath>.
#pragma once

#include <bit>
#include <cstdint>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/result.hpp"

namespace qfold {

// How mantissa * 2^31 (or 2^15) is rounded when it lands exactly on .5.
enum class tie_rule : std::uint8_t {
  half_to_even,         // ExecuTorch: Python round(); torch.round
  half_away_from_zero,  // MLIR and TFLite: std::round
};

// Multiplier width of a RESCALE: scale32 = true is 32, false (int48 input) is 16.
enum class scale_width : std::uint8_t { bits16 = 16, bits32 = 32 };

namespace detail {
struct decomposed {
  bool negative = false, nan = false, infinite = false, zero = false;
  std::uint64_t mantissa = 0;  // 53 significant bits, top bit (2^52) set for every finite non-zero
  int exponent = 0;            // value = mantissa * 2^(exponent - 53), i.e. frexp's exponent
};

// frexp without <cmath>: subnormals are normalised so that every non-zero has a 53-bit mantissa.
[[nodiscard]] constexpr decomposed decompose(double x) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  decomposed d;
  d.negative = (bits >> 63) != 0;
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {
    d.nan = frac != 0;
    d.infinite = frac == 0;
    return d;
  }
  if (biased == 0) {
    if (frac == 0) {
      d.zero = true;
      return d;
    }
    const int lead = std::countl_zero(frac) - 11;  // shift that puts the top bit at 2^52
    d.mantissa = frac << lead;
    d.exponent = -1021 - lead;
    return d;
  }
  d.mantissa = frac | (std::uint64_t{1} << 52);
  d.exponent = biased - 1022;
  return d;
}

// mantissa / 2^drop rounded to an integer under `ties` (drop in 1..63).
[[nodiscard]] constexpr std::uint64_t round_shift(std::uint64_t mantissa, int drop,
                                                  tie_rule ties) noexcept {
  const std::uint64_t kept = mantissa >> drop;
  const std::uint64_t rest = mantissa & ((std::uint64_t{1} << drop) - 1);
  const std::uint64_t half = std::uint64_t{1} << (drop - 1);
  if (rest > half) return kept + 1;
  if (rest < half) return kept;
  return ties == tie_rule::half_away_from_zero ? kept + 1 : kept + (kept & 1);
}

// round(frexp_mantissa * 2^bits) and the frexp exponent, renormalised when it rounds up to 2^bits.
struct rounded_mantissa {
  std::int64_t multiplier;
  int exponent;
};
[[nodiscard]] constexpr rounded_mantissa round_mantissa(const decomposed& d, int bits,
                                                        tie_rule ties) noexcept {
  auto m = static_cast<std::int64_t>(round_shift(d.mantissa, 53 - bits, ties));
  int e = d.exponent;
  if (m == (std::int64_t{1} << bits)) {
    m /= 2;
    ++e;
  }
  return {m, e};
}
}  // namespace detail

// Errors: negative, NaN or infinite scales; scales >= 2^29 (32-bit) or >= 2^13 (16-bit), whose
// shift would be below 2. Scale 0 (and -0) gives multiplier 0 with shift 31 (15): a valid
// RESCALE that maps every input to the output zero point, as ExecuTorch and MLIR produce.
// Scales below 2^-31 need shift > 62; as in both lowerings the multiplier is then floor-shifted
// right to make shift 62, and reaches 0 for scales below about 2^-62 (check multiplier if it
// matters).
[[nodiscard]] constexpr result<scale_factor> compute_multiplier_and_shift(double scale,
                                                                          scale_width width,
                                                                          tie_rule ties) {
  // Out-of-enum options (cast from data) would silently pick one branch: refuse them.
  if (width != scale_width::bits32 && width != scale_width::bits16)
    return fail(errc::illegal_attributes, "compute_multiplier_and_shift: unknown scale_width");
  if (ties != tie_rule::half_to_even && ties != tie_rule::half_away_from_zero)
    return fail(errc::illegal_attributes, "compute_multiplier_and_shift: unknown tie_rule");
  const detail::decomposed d = detail::decompose(scale);
  const int bits = width == scale_width::bits32 ? 31 : 15;
  if (d.nan) return fail(errc::scale_nan, "compute_multiplier_and_shift: scale is NaN");
  if (d.infinite)
    return fail(errc::scale_infinite, "compute_multiplier_and_shift: scale is infinite");
  if (d.zero) return scale_factor{0, bits};
  if (d.negative) return fail(errc::scale_negative, "compute_multiplier_and_shift: scale < 0");
  auto [m, e] = detail::round_mantissa(d, bits, ties);
  int shift = bits - e;
  if (shift < 2)
    return fail(errc::scale_too_large, "compute_multiplier_and_shift: scale needs shift < 2");
  if (shift > 62) {
    m >>= (shift - 62 < 31 ? shift - 62 : 31);
    shift = 62;
  }
  return scale_factor{static_cast<std::int32_t>(m), shift};
}

namespace checked {
// The two forms, as everywhere in qfold: checked::compute_multiplier_and_shift returns a result,
// qfold::compute_multiplier_and_shift<width, ties>(scale) the scale_factor itself. The options are
// template arguments in the new spelling; the run-time spelling above (scale, width, ties) is the
// one from before the two forms, kept unchanged: it is the checked form.
[[nodiscard]] constexpr result<scale_factor> compute_multiplier_and_shift(double scale,
                                                                          scale_width width,
                                                                          tie_rule ties) {
  return qfold::compute_multiplier_and_shift(scale, width, ties);
}
template <scale_width width, tie_rule ties>
[[nodiscard]] constexpr result<scale_factor> compute_multiplier_and_shift(double scale) {
  return qfold::compute_multiplier_and_shift(scale, width, ties);
}
}  // namespace checked

// Contract form: a finite scale >= 0 below 2^29 (32-bit) or 2^13 (16-bit), known options. A
// violation is a compile error in constant evaluation and stops the program at run time.
template <scale_width width, tie_rule ties>
[[nodiscard]] constexpr scale_factor compute_multiplier_and_shift(double scale) {
  const result<scale_factor> r = compute_multiplier_and_shift(scale, width, ties);
  detail::expects(r.has_value(),
                  "compute_multiplier_and_shift: finite scale >= 0 that needs shift >= 2");
  return *r;
}

// The real value a scale_factor stands for, multiplier * 2^-shift (exact for shift <= 1074).
// |multiplier| <= 2^31, so 1106 halvings reach +-0 and 1024 doublings +-inf (or stay 0): the
// loops stop there, with the same value, instead of running up to 2^31 times.
[[nodiscard]] constexpr double to_double(scale_factor s) noexcept {
  double v = static_cast<double>(s.multiplier);
  const int down = s.shift > 1200 ? 1200 : s.shift, up = s.shift < -1200 ? -1200 : s.shift;
  for (int i = 0; i < down; ++i) v *= 0.5;
  for (int i = 0; i > up; --i) v *= 2.0;
  return v;
}

}  // namespace qfold
