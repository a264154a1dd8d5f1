// Exhaustive input domains (int8, uint8, int16, uint16, or any [qmin, qmax] inside them) and
// integer maps tabulated over them: the ground on which every exactness claim is decided.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <string_view>
#include <vector>

#include "qfold/arith/result.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

namespace detail {
__extension__ typedef unsigned __int128 wide_uint;  // counts up to 2^64
}  // namespace detail

// The most codes qfold enumerates (and allocates for) in one domain: every uint16 / int16 code.
inline constexpr std::uint64_t max_enumerated_codes = 65536;

// The inputs lo..hi, all of them. Any lo, hi of int64 is a valid value (lo > hi is empty), but
// only domains of at most max_enumerated_codes codes can be enumerated.
struct domain {
  std::int64_t lo = -128;
  std::int64_t hi = 127;

  // The exact number of codes, 0..2^64 (the whole int64 range has 2^64: one more than uint64).
  [[nodiscard]] constexpr detail::wide_uint count() const noexcept {
    if (hi < lo) return 0;
    // Two's complement difference in uint64 is exact for any lo <= hi (at most 2^64 - 1).
    return static_cast<detail::wide_uint>(static_cast<std::uint64_t>(hi) -
                                          static_cast<std::uint64_t>(lo)) +
           1;
  }
  // count() as a size_t, saturated (never wrapped: the whole int64 range is not size 0).
  [[nodiscard]] constexpr std::size_t size() const noexcept {
    const detail::wide_uint n = count();
    constexpr auto most = std::numeric_limits<std::size_t>::max();
    return n > most ? most : static_cast<std::size_t>(n);
  }
  [[nodiscard]] constexpr bool empty() const noexcept { return hi < lo; }
  // Small enough to enumerate (1..max_enumerated_codes codes).
  [[nodiscard]] constexpr bool enumerable() const noexcept {
    return !empty() && count() <= max_enumerated_codes;
  }
  [[nodiscard]] constexpr bool contains(std::int64_t x) const noexcept {
    return x >= lo && x <= hi;
  }
  friend constexpr bool operator==(const domain&, const domain&) = default;
};

inline constexpr domain int8_domain{-128, 127};
inline constexpr domain uint8_domain{0, 255};
inline constexpr domain int16_domain{-32768, 32767};
inline constexpr domain uint16_domain{0, 65535};

// The codes a tensor with these qparams can hold: [qmin, qmax]. Errors: invalid qparams, int32.
[[nodiscard]] constexpr result<domain> domain_of(const qparams& q) {
  if (auto ok = validate(q); !ok) return ok.error();
  if (q.type == dtype::int32)
    return fail(errc::illegal_type, "domain_of: int32 cannot be enumerated");
  return domain{q.qmin, q.qmax};
}

namespace detail {
// Why a domain cannot be enumerated, or none: empty (lo > hi), or more codes than qfold enumerates.
[[nodiscard]] constexpr result<void> check_enumerable(domain d, std::string_view empty_message,
                                                      std::string_view large_message) {
  if (d.empty()) return fail(errc::empty_range, empty_message);
  if (!d.enumerable()) return fail(errc::size_overflow, large_message);
  return {};
}
}  // namespace detail

namespace checked {
// values[i] = f(d.lo + i) for every input, or why not. Errors: empty_range (lo > hi),
// size_overflow (more than max_enumerated_codes codes, or the allocation fails).
template <class F>
[[nodiscard]] constexpr result<std::vector<std::int64_t>> tabulate(domain d, const F& f) {
  if (auto ok = detail::check_enumerable(d, "tabulate: the domain is empty (lo > hi)",
                                         "tabulate: the domain has too many codes to enumerate");
      !ok)
    return ok.error();
  std::vector<std::int64_t> values;
  try {  // reserve + push_back: clang 14 cannot evaluate libstdc++'s vector(n) in constant
         // evaluation
    values.reserve(d.size());
  } catch (const std::exception&) {  // std::bad_alloc or std::length_error (<stdexcept> costs
                                     // a TU ~0.07 s on g++ 12: caught by their base)
    return fail(errc::size_overflow, "tabulate: the table could not be allocated");
  }
  for (std::size_t i = 0; i < d.size(); ++i)
    values.push_back(static_cast<std::int64_t>(f(d.lo + static_cast<std::int64_t>(i))));
  return values;
}
}  // namespace checked

// values[i] = f(d.lo + i) for every input; empty for an empty domain. A domain of more than
// max_enumerated_codes codes breaks the contract (use checked::tabulate for untrusted domains).
template <class F>
[[nodiscard]] constexpr std::vector<std::int64_t> tabulate(domain d, const F& f) {
  detail::expects(d.empty() || d.enumerable(), "tabulate: the domain has too many codes");
  std::vector<std::int64_t> values;
  values.reserve(d.size());
  for (std::size_t i = 0; i < d.size(); ++i)
    values.push_back(static_cast<std::int64_t>(f(d.lo + static_cast<std::int64_t>(i))));
  return values;
}

}  // namespace qfold
