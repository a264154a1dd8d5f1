// A constant scale next to a quantize: x / c (or x * c) feeding quantize(S) becomes quantize with
// scale S * c (or S / c); and a dequantize -> div/mul(c) -> quantize sandwich that gives back every
// code unchanged is removed. Both are proven: the first in float arithmetic, the second per code.
#pragma once

#include <cstdint>
#include <optional>

#include "qfold/exact/domain.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/math/float_bits.hpp"
#include "qfold/quant/conventions.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

enum class scale_op : std::uint8_t { div, mul };  // x / c, or x * c (either operand order)

// What "equal" means for the fold into the quantize's scale.
enum class float_exactness : std::uint8_t {
  bit_exact,  // fold only when the quantized codes equal the original for every float input
  real,       // also fold when the identity holds in real arithmetic only (a code may move at a
              // rounding tie): what compilers that fold with a tolerance do
};

namespace detail {
// c is +-2^k exactly, a normal number of its type.
template <math::binary_float Real>
[[nodiscard]] constexpr bool is_power_of_two(Real c) noexcept {
  const int exponent = math::detail::biased_exponent(c);
  return (math::detail::to_bits(c) & math::detail::fraction_mask<Real>) == 0 && exponent != 0 &&
         exponent != math::detail::float_traits<Real>::max_biased;
}
template <math::binary_float Real>
[[nodiscard]] constexpr bool is_finite_nonzero(Real c) noexcept {
  return math::is_finite(c) && c != 0;
}
}  // namespace detail

// quantize(x / c, q) == quantize(x, folded) with folded.scale = q.scale * c (mul: q.scale / c),
// for every input x under any of qfold's quantize conventions (float_exactness::bit_exact). Why a
// power of two c is exact: x / 2^k is exact while normal, and the reciprocal (1/S) 2^-k is exact in
// double and in Real, so both sides round the same real product x * r * 2^-k once. The scale bounds
// below keep r within 2^+-100, which settles the edges: where x / 2^k would be subnormal the
// scaled value is below 2^-26 on both sides (code zp), where it would overflow it is beyond 2^28
// on both sides (clamped to the same end). tests/unit/fold_scale_into_quantize_test.cpp samples
// every tie and edge. Any other c can move a code at a tie: bit_exact rejects it, `real` folds.
// Rejections: c zero, negative or not finite; invalid qparams; a folded scale outside 2^+-100.
template <math::binary_float Real>
[[nodiscard]] constexpr std::optional<rejection> fold_scale_into_quantize(scale_op op, Real c,
                                                                          const qparams& q,
                                                                          float_exactness exact,
                                                                          qparams& folded) {
  if (!detail::is_finite_nonzero(c))
    return rejection{reason::invalid_constant, "the constant is zero or not finite"};
  if (c < 0)
    return rejection{reason::invalid_constant, "a negative constant would need a negative scale"};
  if (!validate(q))
    return rejection{reason::qparams_mismatch, "the quantize's qparams are invalid"};
  const double scale =
      op == scale_op::div ? q.scale * static_cast<double>(c) : q.scale / static_cast<double>(c);
  constexpr double bound = 0x1p100;
  if (!(q.scale >= 1 / bound && q.scale <= bound && scale >= 1 / bound && scale <= bound))
    return rejection{reason::out_of_range, "a scale outside 2^-100..2^100"};
  if (exact == float_exactness::bit_exact && !detail::is_power_of_two(c))
    return rejection{reason::not_exact,
                     "c is not a power of two: rounding x / c in float can move a code at a tie"};
  folded = q;
  folded.scale = scale;
  return std::nullopt;
}

// dequantize(in) -> op(c) -> quantize(out) returns every code of [in.qmin, in.qmax] unchanged,
// evaluated exactly as the graph runs it (the convention's arithmetic), so the three nodes can go.
// Rejections: c zero or not finite; types or clamp ranges that differ (the rewrite would change
// them); a 32-bit type (not enumerable); the first code that comes back different (index: code -
// in.qmin).
template <math::binary_float Real>
[[nodiscard]] constexpr std::optional<rejection> prove_requantize_identity(
    scale_op op, Real c, const qparams& in, const qparams& out,
    const quant_convention<Real>& convention) {
  if (!detail::is_finite_nonzero(c))
    return rejection{reason::invalid_constant, "the constant is zero or not finite"};
  if (!validate(convention, in) || !validate(convention, out))
    return rejection{
        reason::qparams_mismatch,
        "the dequantize or quantize qparams are invalid in the convention's arithmetic"};
  if (in.type != out.type)
    return rejection{reason::qparams_mismatch, "dequantize and quantize types differ"};
  if (in.qmin != out.qmin || in.qmax != out.qmax)
    return rejection{reason::qparams_mismatch, "dequantize and quantize clamp ranges differ"};
  const auto codes = domain_of(in);
  if (!codes) return rejection{reason::unsupported, "32-bit codes cannot be enumerated"};
  for (std::int64_t code = codes->lo; code <= codes->hi; ++code) {
    const Real y = dequantize(convention, in, code);
    const auto back =
        detail::quantize_validated(convention, out, op == scale_op::div ? y / c : y * c);
    if (!back || *back != code)
      return rejection{reason::not_exact, "a code does not come back unchanged",
                       static_cast<std::size_t>(code - codes->lo)};
  }
  return std::nullopt;
}

}  // namespace qfold
