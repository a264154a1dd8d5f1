// Compile-time proofs for qfold::math (static_assert only: compiling is passing, on g++ and
// clang++ with their default constexpr limits). Expected values are exact facts or derived in
// the comments, never copied from the library's output.
#include <array>
#include <cstddef>
#include <qfold/math/functions.hpp>

namespace {
namespace qm = qfold::math;
using qm::rounding_rule;

// Exact values.
static_assert(qm::exp(0.0) == 1.0 && qm::exp(0.0f) == 1.0f);
static_assert(qm::log(1.0) == 0.0 && qm::log(1.0f) == 0.0f);
static_assert(qm::sqrt(4.0) == 2.0 && qm::sqrt(2.25f) == 1.5f && qm::sqrt(0x1p-1074) == 0x1p-537);
static_assert(qm::rsqrt(4.0) == 0.5 && qm::rsqrt(0x1p-148f) == 0x1p74f);
static_assert(qm::tanh(0.0f) == 0.0f && qm::sigmoid(0.0f) == 0.5f && qm::sigmoid(0.0) == 0.5);
static_assert(qm::erf(0.0) == 0.0 && qm::erfc(0.0f) == 1.0f);
static_assert(qm::sin(0.0) == 0.0 && qm::cos(0.0f) == 1.0f && qm::atan(0.0) == 0.0);
static_assert(qm::expm1(0.0) == 0.0 && qm::log1p(0.0f) == 0.0f);
static_assert(qm::signbit(qm::tanh(-0.0)) && qm::signbit(qm::sqrt(-0.0f)));

// Hand-derived roundings. e = 2.718281828459045 235... rounds to 0x1.5bf0a8b145769p+1
// (the double nearest e, as printed by every libm); ln 2 to 0x1.62e42fefa39efp-1; pi/4 to
// 0x1.921fb54442d18p-1, so atan(1) is that double; sqrt(2) to 0x1.6a09e667f3bcdp+0 and in float
// to 0x1.6a09e6p+0; 1/sqrt(2) to 0x1.6a09e667f3bcdp-1.
static_assert(qm::exp(1.0) == 0x1.5bf0a8b145769p+1);
static_assert(qm::exp(1.0f) ==
              0x1.5bf0a8p+1f);  // e = 0x1.5bf0a8|b14..: the cut bits are below half
static_assert(qm::log(2.0) == 0x1.62e42fefa39efp-1 && qm::log(2.0f) == 0x1.62e430p-1f);
static_assert(qm::atan(1.0) == 0x1.921fb54442d18p-1 && qm::atan(1.0f) == 0x1.921fb6p-1f);
static_assert(qm::sqrt(2.0) == 0x1.6a09e667f3bcdp+0 && qm::sqrt(2.0f) == 0x1.6a09e6p+0f);
static_assert(qm::rsqrt(2.0) == 0x1.6a09e667f3bcdp-1);
// The largest float needs the full Payne-Hanek reduction: it must be a constant in [-1, 1]
// (its value is checked at run time against the reference).
static_assert(qm::sin(0x1.fffffep127f) >= -1.0f && qm::sin(0x1.fffffep127f) <= 1.0f);
// Saturation: tanh(22) and erf(6) round to 1; sigmoid(-746) underflows to +0.
static_assert(qm::tanh(22.0) == 1.0 && qm::erf(6.0f) == 1.0f && qm::sigmoid(-746.0) == 0.0);

// Rounding rules on ties: 2.5 -> 2 (even), 3 (away), 3 (up); -2.5 -> -2, -3, -2.
static_assert(qm::round(2.5f, rounding_rule::half_to_even) == 2.0f);
static_assert(qm::round(2.5f, rounding_rule::half_away_from_zero) == 3.0f);
static_assert(qm::round(2.5f, rounding_rule::half_up) == 3.0f);
static_assert(qm::round(2.5f, rounding_rule::vela_trunc_add_half) == 3.0f);
static_assert(qm::round(-2.5, rounding_rule::half_to_even) == -2.0);
static_assert(qm::round(-2.5, rounding_rule::half_away_from_zero) == -3.0);
static_assert(qm::round(-2.5, rounding_rule::half_up) == -2.0);
static_assert(qm::round(-2.5, rounding_rule::vela_trunc_add_half) == -3.0);
// Vela's quirk: 0.49999999999999994 + 0.5 rounds to 1.0 in double before the truncation.
static_assert(qm::vela_round(0.49999999999999994) == 1.0);
static_assert(qm::round_half_away_from_zero(0.49999999999999994) == 0.0);
static_assert(qm::round_half_up(0.49999999999999994) == 0.0);
static_assert(qm::floor(-0.5) == -1.0 && qm::ceil(-0.5f) == 0.0f && qm::signbit(qm::ceil(-0.5f)));

// Bit helpers.
static_assert(qm::next_up(1.0f) == 0x1.000002p+0f && qm::next_down(1.0) == 0x1.fffffffffffffp-1);
static_assert(qm::ulp_distance(1.0, qm::next_up(1.0)) == 1 && qm::ulp_distance(-0.0f, 0.0f) == 0);

// A whole 256-entry int8 tanh table (scale 1/32, codes -128..127) in ONE constant evaluation:
// it must fit clang's default budget of 1,048,576 steps (measured: about 700 steps per tanh).
// Checked: odd symmetry, exact zero at code 0, monotone, and tanh(4) rounded to float
// (tanh 4 = (e^8 - 1)/(e^8 + 1) = 0.9993292997390670...; the floats around it are
// 0x1.ffa816p-1 = 0.9993292689323425 (3.08e-8 below) and 0x1.ffa818p-1 = 0.9993293285369873
// (2.88e-8 above): the latter is nearer).
constexpr std::array<float, 256> tanh_table() {
  std::array<float, 256> t{};
  for (std::size_t i = 0; i < 256; ++i)
    t[i] = qm::tanh(static_cast<float>(static_cast<int>(i) - 128) / 32.0f);
  return t;
}
constexpr bool tanh_table_ok() {
  constexpr auto t = tanh_table();
  if (t[128] != 0.0f || t[128 + 128 - 1] != qm::tanh(127.0f / 32.0f)) return false;
  for (std::size_t i = 1; i < 128; ++i)
    if (t[128 + i] != -t[128 - i]) return false;
  for (std::size_t i = 1; i < 256; ++i)
    if (!(t[i] >= t[i - 1])) return false;
  return t[0] == -0x1.ffa818p-1f;  // code -128: tanh(-4)
}
static_assert(tanh_table_ok());

}  // namespace
