// qfold::math edge cases: special values (C99 Annex F), signed zeros, overflow and underflow
// thresholds, the rounding rules against <cmath> and against their definitions, and the bit
// helpers. Expected values are IEEE/C facts or derived in the comments.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <qfold/math/functions.hpp>
#include <random>

#include "catch_compat.hpp"

namespace {
namespace qm = qfold::math;

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
bool is_nan(T x) {
  return x != x;
}

template <class T>
void special_values() {
  constexpr T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T pz = T{0}, nz = -T{0};
  // NaN in, NaN out, for every function.
  for (T (*f)(T) : {+[](T x) { return qm::exp(x); }, +[](T x) { return qm::expm1(x); },
                    +[](T x) { return qm::log(x); }, +[](T x) { return qm::log1p(x); },
                    +[](T x) { return qm::tanh(x); }, +[](T x) { return qm::sigmoid(x); },
                    +[](T x) { return qm::erf(x); }, +[](T x) { return qm::erfc(x); },
                    +[](T x) { return qm::sqrt(x); }, +[](T x) { return qm::rsqrt(x); },
                    +[](T x) { return qm::sin(x); }, +[](T x) { return qm::cos(x); },
                    +[](T x) { return qm::atan(x); }})
    CHECK(is_nan(f(nan)));
  CHECK(qm::exp(-inf) == 0);
  CHECK(qm::exp(inf) == inf);
  CHECK(qm::exp(pz) == 1);
  CHECK(qm::exp(nz) == 1);
  CHECK(qm::expm1(-inf) == -1);
  CHECK(qm::expm1(inf) == inf);
  CHECK(same_bits(qm::expm1(nz), nz));
  CHECK(qm::log(pz) == -inf);
  CHECK(qm::log(nz) == -inf);
  CHECK(is_nan(qm::log(T{-1})));
  CHECK(same_bits(qm::log(T{1}), pz));
  CHECK(qm::log(inf) == inf);
  CHECK(qm::log1p(T{-1}) == -inf);
  CHECK(is_nan(qm::log1p(T{-2})));
  CHECK(same_bits(qm::log1p(nz), nz));
  CHECK(qm::tanh(inf) == 1);
  CHECK(qm::tanh(-inf) == -1);
  CHECK(same_bits(qm::tanh(nz), nz));
  CHECK(qm::sigmoid(pz) == T{0.5});
  CHECK(qm::sigmoid(nz) == T{0.5});
  CHECK(qm::sigmoid(inf) == 1);
  CHECK(same_bits(qm::sigmoid(-inf), pz));
  CHECK(qm::erf(inf) == 1);
  CHECK(qm::erf(-inf) == -1);
  CHECK(same_bits(qm::erf(nz), nz));
  CHECK(qm::erfc(-inf) == 2);
  CHECK(same_bits(qm::erfc(inf), pz));
  CHECK(qm::erfc(pz) == 1);
  CHECK(same_bits(qm::sqrt(nz), nz));
  CHECK(is_nan(qm::sqrt(T{-1})));
  CHECK(qm::sqrt(inf) == inf);
  CHECK(qm::rsqrt(pz) == inf);
  CHECK(qm::rsqrt(nz) == -inf);
  CHECK(same_bits(qm::rsqrt(inf), pz));
  CHECK(is_nan(qm::rsqrt(T{-4})));
  CHECK(same_bits(qm::sin(nz), nz));
  CHECK(is_nan(qm::sin(inf)));
  CHECK(is_nan(qm::cos(-inf)));
  CHECK(qm::cos(nz) == 1);
  CHECK(same_bits(qm::atan(nz), nz));
  CHECK(qm::atan(inf) == static_cast<T>(1.5707963267948966192313216916397514L));
  CHECK(qm::atan(-inf) == -static_cast<T>(1.5707963267948966192313216916397514L));
}

}  // namespace

TEST_CASE("math: special values (C99 Annex F), float and double", "[math]") {
  special_values<float>();
  special_values<double>();
}

TEST_CASE("math: overflow and underflow thresholds", "[math]") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  // ln(DBL_MAX) = 709.782712893383996843; the next double above rounds to inf.
  CHECK(qm::exp(709.782712893384) == std::exp(709.782712893384));
  CHECK(qm::exp(709.79) == inf);
  // e^-745.1332 ~ 2^-1074.5: rounds up to the smallest subnormal; e^-745.14 ~ 2^-1075.01: to 0.
  CHECK(qm::exp(-745.1332) == std::numeric_limits<double>::denorm_min());
  CHECK(qm::exp(-745.14) == 0);
  // float: e^88.7228 ~ FLT_MAX (0x1.fffffep127 = e^88.72283906); e^88.73 overflows.
  CHECK(qm::exp(88.7f) == std::exp(88.7f));
  CHECK(qm::exp(88.73f) == std::numeric_limits<float>::infinity());
  CHECK(qm::exp(-103.97f) == std::numeric_limits<float>::denorm_min());  // in (2^-150, 1.5 2^-149)
  CHECK(qm::exp(-104.0f) == 0);  // below 2^-150 (ln 2^-150 = -103.972)
  // Subnormal results are rounded once: sigmoid(x) ~ e^x deep below zero.
  CHECK(qm::sigmoid(-745.0) == qm::exp(-745.0));
  CHECK(qm::erfc(27.0) > 0);
  CHECK(qm::erfc(27.3) == 0);
}

TEST_CASE("math: rounding rules on ties and against <cmath>", "[math][rounding]") {
  using qm::rounding_rule;
  // Ties: 2.5 -> 2 (even), 3 (away), 3 (up); -2.5 -> -2, -3, -2; 0.5 -> 0, 1, 1; -0.5 -> -0, -1, 0.
  CHECK(qm::round(2.5, rounding_rule::half_to_even) == 2);
  CHECK(qm::round(2.5, rounding_rule::half_away_from_zero) == 3);
  CHECK(qm::round(2.5, rounding_rule::half_up) == 3);
  CHECK(qm::round(-2.5, rounding_rule::half_to_even) == -2);
  CHECK(qm::round(-2.5, rounding_rule::half_away_from_zero) == -3);
  CHECK(qm::round(-2.5, rounding_rule::half_up) == -2);
  CHECK(same_bits(qm::round(-0.5, rounding_rule::half_to_even), -0.0));
  CHECK(qm::round(-0.5, rounding_rule::half_away_from_zero) == -1);
  CHECK(same_bits(qm::round(-0.5, rounding_rule::half_up), 0.0));
  // Vela's trunc(x + 0.5): 0.49999999999999994 + 0.5 rounds to 1 in double; the true rounding
  // is 0. In float the same happens at 0.49999997f.
  CHECK(qm::vela_round(0.49999999999999994) == 1);
  CHECK(qm::round_half_away_from_zero(0.49999999999999994) == 0);
  CHECK(qm::vela_round(0.49999997f) == 1);
  CHECK(qm::vela_round(-0.49999999999999994) == -1);
  CHECK(same_bits(qm::vela_round(-0.0), 0.0));  // -0 < 0 is false: -0 + 0.5 -> trunc -> +0
  CHECK(qm::vela_round(4503599627370497.0) == 4503599627370498.0);  // 2^52 + 1 + 0.5 ties up
  CHECK(qm::round_half_up(0.49999999999999994) == 0);               // floor(x + 1/2) taken exactly

  std::mt19937_64 gen(11);
  for (int i = 0; i < 1000000; ++i) {
    // Random doubles of every magnitude around the integers, plus exact halves.
    double x = std::ldexp(static_cast<double>(gen() >> 11), -static_cast<int>(gen() % 60));
    if (i % 4 == 0) x = std::floor(x) + 0.5;
    if ((gen() & 1) != 0) x = -x;
    const auto f = static_cast<float>(x);
    REQUIRE(same_bits(qm::trunc(x), std::trunc(x)));
    REQUIRE(same_bits(qm::floor(x), std::floor(x)));
    REQUIRE(same_bits(qm::ceil(x), std::ceil(x)));
    REQUIRE(same_bits(qm::round_half_away_from_zero(x), std::round(x)));
    REQUIRE(same_bits(qm::round_half_to_even(x), std::nearbyint(x)));
    REQUIRE(same_bits(qm::vela_round(x), std::trunc(x + (x < 0 ? -0.5 : 0.5))));
    // floor(x + 1/2) exactly: long double holds x + 1/2 exactly for |x| < 2^62.
    const long double up = std::floor(static_cast<long double>(x) + 0.5L);
    REQUIRE(qm::round_half_up(x) == static_cast<double>(up));
    REQUIRE(same_bits(qm::trunc(f), std::trunc(f)));
    REQUIRE(same_bits(qm::floor(f), std::floor(f)));
    REQUIRE(same_bits(qm::ceil(f), std::ceil(f)));
    REQUIRE(same_bits(qm::round_half_away_from_zero(f), std::round(f)));
    REQUIRE(same_bits(qm::round_half_to_even(f), std::nearbyint(f)));
    REQUIRE(same_bits(qm::vela_round(f), std::trunc(f + (f < 0 ? -0.5f : 0.5f))));
    REQUIRE(qm::round_half_up(f) == static_cast<float>(std::floor(static_cast<double>(f) + 0.5)));
  }
}

TEST_CASE("math: float sqrt over two whole binades equals the IEEE sqrt", "[math]") {
  // sqrt(4x) = 2 sqrt(x) exactly, so [1, 4) covers every float significand and exponent parity.
  for (std::uint32_t b = 0x3F800000u; b < 0x40800000u; ++b) {
    float x = 0;
    std::memcpy(&x, &b, sizeof x);
    REQUIRE(qm::sqrt(x) == std::sqrt(x));
  }
}

TEST_CASE("math: next_up, next_down, ulp_distance", "[math]") {
  CHECK(qm::next_up(1.0) == std::nextafter(1.0, 2.0));
  CHECK(qm::next_down(1.0f) == std::nextafter(1.0f, 0.0f));
  CHECK(qm::next_up(-0.0) == std::numeric_limits<double>::denorm_min());
  CHECK(qm::next_down(0.0f) == -std::numeric_limits<float>::denorm_min());
  CHECK(qm::next_up(std::numeric_limits<double>::max()) == std::numeric_limits<double>::infinity());
  CHECK(qm::ulp_distance(0.0, -0.0) == 0);
  CHECK(qm::ulp_distance(1.0f, qm::next_up(qm::next_up(1.0f))) == 2);
  CHECK(qm::ulp_distance(-std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::denorm_min()) == 2);
  CHECK(qm::ulp_distance(1.0, std::numeric_limits<double>::quiet_NaN()) ==
        std::numeric_limits<std::uint64_t>::max());
}
