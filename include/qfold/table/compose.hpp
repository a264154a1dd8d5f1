// Collapsing an elementwise integer chain into one table, proven by exhaustive evaluation: an
// 8-bit input chain becomes a 256-entry table equal to the chain on every code; an int16 chain
// becomes a TOSA 513-knot table only after all 65,536 codes are checked (exactness on request).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

#include "qfold/arith/result.hpp"
#include "qfold/table/chain.hpp"
#include "qfold/table/lut.hpp"

namespace qfold::chain {

namespace detail {
[[nodiscard]] constexpr bool fits_int16(std::int64_t v) noexcept {
  return v >= -32768 && v <= 32767;
}
}  // namespace detail

// The table with entry i = chain(code i) for every code of In. Errors: the first code where a
// step fails (error.index = table entry), or where the result does not fit Out.
template <class In, class Out>
[[nodiscard]] constexpr result<table8<In, Out>> collapse(std::span<const step> steps) {
  table8<In, Out> t;
  for (int i = 0; i < 256; ++i) {
    const auto code = static_cast<std::int64_t>(std::numeric_limits<In>::min()) + i;
    const result<std::int64_t> r = evaluate(steps, code);
    const auto index = static_cast<std::size_t>(i);
    if (!r) return fail(r.error().code, r.error().message, index);
    if (!std::in_range<Out>(*r))  // not a mixed-sign comparison: Out may be unsigned
      return fail(errc::value_out_of_range,
                  "collapse: chain output outside the table's element type", index);
    t.values[index] = static_cast<Out>(*r);
  }
  return t;
}

// An int16 chain as a TOSA int16 TABLE whose rounded lookup (TFLite LUTLookup, or TOSA TABLE
// followed by RESCALE by 2^-7) approximates the chain. Knot i is the chain at code
// -32768 + 128 i; knot 512 extends the last segment's slope to the virtual code 32768 (clamped
// to int16; the exhaustive check then says whether that costs exactness).
struct int16_fit {
  int16_table table;
  std::int64_t max_error = 0;       // max over all 65,536 codes of |lookup - chain|
  std::int32_t worst_code = 0;      // first code where max_error is reached
  std::int32_t first_mismatch = 0;  // first code where the lookup differs (if any)
  [[nodiscard]] constexpr bool exact() const noexcept { return max_error == 0; }
};

// Errors: a step failing at some code (error.index = code + 32768), chain outputs outside
// int16 (at a knot: index = code + 32768 of the knot; elsewhere: that code + 32768), slopes
// outside int16, and with require_exact any code where the table differs (errc::not_exact,
// error.index = first such code + 32768).
[[nodiscard]] constexpr result<int16_fit> collapse_int16(std::span<const step> steps,
                                                         bool require_exact) {
  int16_fit fit;
  std::int64_t knots[513] = {};
  for (int i = 0; i < 512; ++i) {
    const result<std::int64_t> r = evaluate(steps, -32768 + 128 * i);
    if (!r) return fail(r.error().code, r.error().message, static_cast<std::size_t>(128 * i));
    knots[i] = *r;
  }
  // Knots are checked first: a chain may return any int64 (a clamp step), and the knot 512
  // formula below must not overflow.
  for (std::size_t i = 0; i < 512; ++i)
    if (!detail::fits_int16(knots[i]))
      return fail(errc::value_out_of_range, "collapse_int16: chain output outside int16", i * 128);
  const result<std::int64_t> last = evaluate(steps, 32767);
  if (!last) return fail(last.error().code, last.error().message, 65535);
  if (!detail::fits_int16(*last))
    return fail(errc::value_out_of_range, "collapse_int16: chain output outside int16", 65535);
  // Knot 512 continues the last segment through code 32767 to 32768: k511 + round(128 d / 127).
  const std::int64_t n = 256 * (*last - knots[511]) + 127;
  knots[512] = qfold::clamp(knots[511] + n / 254 - (n % 254 != 0 && n < 0 ? 1 : 0), -32768, 32767);
  for (std::size_t i = 0; i < 513; ++i) fit.table.values[i] = static_cast<std::int16_t>(knots[i]);
  if (auto ok = validate(fit.table); !ok) return ok.error();
  for (std::int32_t x = -32768; x <= 32767; ++x) {
    const result<std::int64_t> r = evaluate(steps, x);
    const auto index = static_cast<std::size_t>(x + 32768);
    if (!r) return fail(r.error().code, r.error().message, index);
    // Every output is an int16 (so the difference cannot overflow); the doc says so anyway.
    if (!detail::fits_int16(*r))
      return fail(errc::value_out_of_range, "collapse_int16: chain output outside int16", index);
    const std::int64_t diff = tflite_lookup(fit.table, static_cast<std::int16_t>(x)) - *r;
    const std::int64_t err = diff < 0 ? -diff : diff;
    if (err != 0 && fit.max_error == 0) fit.first_mismatch = x;
    if (err > fit.max_error) {
      fit.max_error = err;
      fit.worst_code = x;
    }
  }
  if (require_exact && !fit.exact())
    return fail(errc::not_exact, "collapse_int16: the table differs from the chain",
                static_cast<std::size_t>(fit.first_mismatch + 32768));
  return fit;
}

}  // namespace qfold::chain
