// Exhaustive input domains (int8, uint8, int16, uint16, or any [qmin, qmax] inside them) and
// integer maps tabulated over them: the ground on which every exactness claim is decided.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "qfold/arith/result.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

// The inputs lo..hi, all of them. At most 65,536 codes: wider types cannot be enumerated.
struct domain {
  std::int64_t lo = -128;
  std::int64_t hi = 127;

  // 0 when lo > hi (computed without signed overflow for any lo, hi).
  [[nodiscard]] constexpr std::size_t size() const noexcept {
    return hi < lo ? 0
                   : static_cast<std::size_t>(static_cast<std::uint64_t>(hi) -
                                              static_cast<std::uint64_t>(lo) + 1);
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

// values[i] = f(d.lo + i) for every input. (reserve + push_back: clang 14 cannot evaluate
// libstdc++'s vector(n) in a constant expression.)
template <class F>
[[nodiscard]] constexpr std::vector<std::int64_t> tabulate(domain d, const F& f) {
  std::vector<std::int64_t> values;
  values.reserve(d.size());
  for (std::size_t i = 0; i < d.size(); ++i)
    values.push_back(static_cast<std::int64_t>(f(d.lo + static_cast<std::int64_t>(i))));
  return values;
}

}  // namespace qfold
