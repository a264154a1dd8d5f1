// TOSA reciprocal_scale (scale_helpers.tosac): the multiplier/shift of 1/divisor that AVG_POOL2D
// uses, with the multiplier in [2^30, 2^31) and shift = 30 + ceil(log2(divisor)).
#pragma once

#include <bit>
#include <cstdint>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/result.hpp"

namespace qfold {

namespace checked {
// Errors: divisor 0, and the divisors whose multiplier (2^30 + 1) * 2^k / divisor would not fit
// int32 (the spec assumes it does; it fails only for divisors above 2^30).
[[nodiscard]] constexpr result<scale_factor> reciprocal_scale(std::uint32_t divisor) {
  if (divisor == 0) return fail(errc::divisor_zero, "reciprocal_scale: divisor == 0");
  const int k =
      32 - std::countl_zero(divisor - 1);  // 2^(k-1) < divisor <= 2^k; countl_zero(0) == 32
  const std::int64_t multiplier = (((std::int64_t{1} << 30) + 1) << k) / divisor;
  if (multiplier > int32_max)
    return fail(errc::multiplier_out_of_range, "reciprocal_scale: multiplier does not fit int32");
  return scale_factor{static_cast<std::int32_t>(multiplier), 30 + k};
}
}  // namespace checked

// Unchecked: divisor > 0 and a representable multiplier are the caller's contract.
[[nodiscard]] constexpr scale_factor reciprocal_scale(std::uint32_t divisor) {
  const result<scale_factor> r = checked::reciprocal_scale(divisor);
  detail::expects(r.has_value(), "reciprocal_scale: divisor > 0 and multiplier fits int32");
  return *r;
}

}  // namespace qfold
