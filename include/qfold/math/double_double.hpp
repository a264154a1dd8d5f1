// Double-double arithmetic (an unevaluated sum hi + lo, about 106 significant bits) built from
// error-free transformations, and the one correctly rounded step from it to float or double.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "qfold/math/float_bits.hpp"

// Error-free transformations need each operation rounded once to binary64: x87 excess precision
// or -ffast-math reassociation would silently break every result of this layer.
#if defined(__FAST_MATH__)
#error "qfold/math needs IEEE arithmetic: do not build it with -ffast-math"
#endif
#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0 && __FLT_EVAL_METHOD__ != -1
#error "qfold/math needs FLT_EVAL_METHOD == 0 (SSE2 or another strict binary64 unit, not x87)"
#endif

namespace qfold::math {

// hi + lo with |lo| <= ulp(hi) / 2 after every operation below (normalised).
struct double_double {
  double hi = 0;
  double lo = 0;
};

namespace dd {

// a + b exactly, when |a| >= |b| or a == 0 (Dekker).
[[nodiscard]] constexpr double_double fast_two_sum(double a, double b) noexcept {
  const double s = a + b;
  return {s, b - (s - a)};
}

// a + b exactly, any order (Knuth).
[[nodiscard]] constexpr double_double two_sum(double a, double b) noexcept {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// a * b exactly (|a|, |b| < 2^996 and no underflow of the error term). Constant evaluation has
// no fma, so Dekker's product on Veltkamp halves; the halves have 26 bits, so every partial
// product is exact and a contracted (fused) form would compute the same values.
[[nodiscard]] constexpr double_double two_prod(double a, double b) noexcept {
  const double p = a * b;
#if defined(__FP_FAST_FMA)
  if (!std::is_constant_evaluated()) return {p, __builtin_fma(a, b, -p)};
#endif
  const double ca = 134217729.0 * a;  // 2^27 + 1
  const double ah = ca - (ca - a);
  const double cb = 134217729.0 * b;
  const double bh = cb - (cb - b);
  return {p, ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)};
}

// Sums and products, relative error about 2^-104 (QD's accurate "ieee" addition, which keeps
// that bound under cancellation).
[[nodiscard]] constexpr double_double add(double_double a, double_double b) noexcept {
  const double_double s = two_sum(a.hi, b.hi);
  const double_double t = two_sum(a.lo, b.lo);
  const double_double u = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(u.hi, u.lo + t.lo);
}
[[nodiscard]] constexpr double_double add(double_double a, double b) noexcept {
  const double_double s = two_sum(a.hi, b);
  return fast_two_sum(s.hi, s.lo + a.lo);
}
[[nodiscard]] constexpr double_double neg(double_double a) noexcept { return {-a.hi, -a.lo}; }
[[nodiscard]] constexpr double_double sub(double_double a, double_double b) noexcept {
  return add(a, neg(b));
}
[[nodiscard]] constexpr double_double mul(double_double a, double_double b) noexcept {
  const double_double p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
[[nodiscard]] constexpr double_double mul(double_double a, double b) noexcept {
  const double_double p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, p.lo + a.lo * b);
}
// Exact scaling by a power of two (no overflow or underflow in the caller's ranges).
[[nodiscard]] constexpr double_double scale(double_double a, double two_to_k) noexcept {
  return {a.hi * two_to_k, a.lo * two_to_k};
}
// a / b with three quotient digits (b != 0).
[[nodiscard]] constexpr double_double div(double_double a, double_double b) noexcept {
  const double q1 = a.hi / b.hi;
  const double_double r1 = sub(a, mul(b, q1));
  const double q2 = r1.hi / b.hi;
  const double_double r2 = sub(r1, mul(b, q2));
  return add(fast_two_sum(q1, q2), r2.hi / b.hi);
}

// The T nearest to (v.hi + v.lo) * 2^k, ties to even, with gradual underflow and overflow to
// inf: the single rounding of every function in this layer. v must be normalised
// (|lo| <= ulp(hi) / 2); lo then matters only where hi alone sits on or next to a rounding
// boundary, which the integer work below settles exactly.
template <binary_float T>
[[nodiscard]] constexpr T nearest(double_double v, int k = 0) noexcept {
  using tr = detail::float_traits<T>;
  constexpr int p = tr::precision;
  constexpr int q_min = 2 - tr::bias - p;  // exponent of the smallest subnormal
  if (v.hi == 0) return static_cast<T>(v.hi);
  const bool negative = v.hi < 0;
  const auto hb = detail::to_bits(abs(v.hi));
  int biased = static_cast<int>(hb >> 52);
  std::uint64_t m = hb & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0) {  // subnormal hi: normalise so that m has 53 bits
    const int shift = std::countl_zero(m) - 11;
    m <<= shift;
    biased = 1 - shift;
  } else {
    m |= std::uint64_t{1} << 52;
  }
  const bool lo_up = v.lo != 0 && ((v.lo > 0) != negative);  // pushes |value| above m * unit
  const bool lo_down = v.lo != 0 && !lo_up;
  const int e = biased - 1075 + k;  // |value| = (m + lo/unit) * 2^e, top bit of m at 2^(e + 52)
  int q = e + 52 - (p - 1);         // exponent of the target's last bit in this binade
  if (q < q_min) q = q_min;
  const int s = q - e;  // bits of m below the target's last bit
  std::uint64_t kept = 0;
  if (s <= 0) {  // only for double in the normal range: s == 0, hi is representable
    kept = m;
    // A normalised lo is 0 when hi is subnormal, so unit (m's last bit, unscaled) is a normal.
    const double unit = v.lo != 0 && biased >= 1 ? detail::pow2(biased - 1075) : 0.0;
    const double lo_abs = abs(v.lo);
    if (v.lo != 0 && lo_abs * 2 == unit) {  // exact tie between m and its neighbour: to even
      if ((m & 1) != 0) kept = lo_up ? m + 1 : m - 1;
    } else if (m == (std::uint64_t{1} << 52) && lo_down && q - 1 >= q_min && lo_abs * 4 > unit) {
      // hi is a power of two and the value lies below it, where the grid is twice as fine.
      kept = (std::uint64_t{1} << 53) - 1;
      --q;
    }
  } else if (s <= 54) {
    const std::uint64_t rest = m & ((std::uint64_t{1} << s) - 1);
    const std::uint64_t half = std::uint64_t{1} << (s - 1);
    kept = m >> s;
    // |lo| <= unit/2 cannot move the value across half unless rest is exactly half.
    if (rest > half || (rest == half && (lo_up || (!lo_down && (kept & 1) != 0)))) ++kept;
  }  // else: below a quarter of the smallest subnormal, rounds to zero
  if (kept == (std::uint64_t{1} << p)) {  // carried into the next binade
    kept >>= 1;
    ++q;
  }
  using bits = detail::bits_t<T>;
  bits out = 0;
  if (kept >= (std::uint64_t{1} << (p - 1))) {  // normal
    const int biased_out = q + p - 1 + tr::bias;
    if (biased_out >= tr::max_biased)
      out = detail::to_bits(std::numeric_limits<T>::infinity());
    else
      out = static_cast<bits>((static_cast<bits>(biased_out) << (p - 1)) |
                              static_cast<bits>(kept & ((std::uint64_t{1} << (p - 1)) - 1)));
  } else {  // subnormal or zero: q == q_min
    out = static_cast<bits>(kept);
  }
  if (negative) out |= detail::sign_mask<T>;
  return detail::from_bits<T>(out);
}

}  // namespace dd
}  // namespace qfold::math
