// Exactness analysis at compile time (static_assert only; g++ and clang++ with their default
// constexpr limits): classification, rescale synthesis and merging over the small domain
// -8..7, with every expected answer derived by hand next to it.
#include <array>
#include <cstdint>
#include <qfold/exact/merge.hpp>

namespace {
using qfold::domain;
using qfold::map_kind;
using i64 = std::int64_t;

constexpr domain d{-8, 7};
static_assert(d.size() == 16 && d.contains(-8) && d.contains(7) && !d.contains(8));
static_assert(domain{3, 2}.size() == 0);

template <class F>
constexpr std::array<i64, 16> map(F f) {
  std::array<i64, 16> y{};
  for (std::size_t i = 0; i < 16; ++i) y[i] = f(d.lo + static_cast<i64>(i));
  return y;
}
template <class F>
constexpr qfold::classification classified(F f, const qfold::rescale_space* space = nullptr) {
  const auto y = map(f);
  return qfold::classify(d, y, space);
}

// Lines.
static_assert(classified([](i64 x) { return x; }).kind == map_kind::identity);
static_assert(classified([](i64) { return 5; }).kind == map_kind::constant);
static_assert(classified([](i64 x) { return 3 * x - 2; }).kind == map_kind::affine);
static_assert(classified([](i64 x) { return 3 * x - 2; }).affine == qfold::affine_map{3, -2});
static_assert(classified([](i64 x) { return -x; }).affine == qfold::affine_map{-1, 0});

// Not a line: x^2 misses the line through (-8, 64) and (-7, 49) (slope -15) first at x = -6,
// where the line gives 34 and the map 36.
constexpr auto square = classified([](i64 x) { return x * x; });
static_assert(square.kind == map_kind::none);
static_assert(square.affine_miss->input == -6 && square.affine_miss->expected == 36 &&
              square.affine_miss->actual == 34);

// A line clamped at both ends: clamp(2x + 1, -5, 9): strictly inside (-5, 9) for x = -2..3.
constexpr auto relu_like = classified([](i64 x) { return x < -3 ? -5 : x > 4 ? 9 : 2 * x + 1; });
static_assert(relu_like.kind == map_kind::saturated_affine);
static_assert(relu_like.saturated.line == qfold::affine_map{2, 1});
static_assert(relu_like.saturated.lo == -5 && relu_like.saturated.hi == 9);
static_assert(relu_like.saturated.first == -2 && relu_like.saturated.last == 3);

// One RESCALE: round half up of x/2. With apply_scale_32, |x| <= 8 needs shift >= 4; at 4,
// (8x + 8) >> 4 = floor((x + 1) / 2), and 7 gives 0 at x = 1, 9 gives -1 at x = -1: (8, 4).
constexpr qfold::rescale_space int8_space{};
constexpr auto halve = classified([](i64 x) { return (x + 1) >> 1; }, &int8_space);
static_assert(halve.kind == map_kind::rescale);
static_assert(halve.rescale->scale == qfold::scale_factor{8, 4});
static_assert(halve.rescale->attributes.output_zp == 0);
static_assert(halve.affine_miss->input == -6);  // line through (-8,-4), (-7,-3): -2 at -6, map -3

constexpr bool synthesized_halving() {
  const auto y = map([](i64 x) { return (x + 1) >> 1; });
  const auto c = qfold::synthesize_rescale(d, y, {.scale32 = false});
  return c && c->scale == qfold::scale_factor{2, 2};  // scale16: no value range; (2x + 2) >> 2
}
static_assert(synthesized_halving());

// Synthesis through the bound arithmetic of issue 15 (the same answers at compile time, where the
// scalar loops run). round(3x / 4): apply_scale_32 needs shift >= 4 here; at 4, m = 12 gives
// floor((12x + 8) / 16) = floor(3x/4 + 1/2) exactly; x = 2 rejects 11 ((22 + 8) >> 4 = 1, not 2).
constexpr bool three_quarters() {
  const auto y = map([](i64 x) { return (3 * x + 2) >> 2; });  // floor(3x/4 + 1/2)
  const auto c = qfold::synthesize_rescale(d, y, {});
  return c && c->scale == qfold::scale_factor{12, 4};
}
static_assert(three_quarters());
// 40x clamped to int8: x = 3 needs 3m/16 in [119.5, 120.5), so m in [638, 642] (x = -3 gives the
// same, |x| <= 2 looser, x = +-4 only m > 510); the smallest is 638 at shift 4.
constexpr bool clamped_forty() {
  const auto y = map([](i64 x) { return x < -3 ? -128 : x > 3 ? 127 : 40 * x; });
  const auto c = qfold::synthesize_rescale(d, y, {});
  return c && c->scale == qfold::scale_factor{638, 4};
}
static_assert(clamped_forty());

// rescale_shifts for the int8-space halving: nothing below shift 4 (apply_scale_32's range); from
// there exactly 2^(s-1): x = 1 needs m + 2^(s-1) >= 2^s, x = -1 needs -m + 2^(s-1) >= 0. From
// shift 32, 2^(s-1) no longer fits the int32 multiplier: empty.
constexpr bool halving_shifts() {
  const auto y = map([](i64 x) { return (x + 1) >> 1; });
  const auto r = qfold::rescale_shifts(d, y, int8_space, 0, 0, false);
  return r[3].empty() && r[4].lo == 8 && r[4].hi == 8 && r[5].lo == 16 && r[5].hi == 16 &&
         r[31].lo == i64{1} << 30 && r[31].hi == i64{1} << 30 && r[32].empty();
}
static_assert(halving_shifts());

// A falling map is no RESCALE; its witness differs from the map there.
constexpr auto falling = classified([](i64 x) { return -x; }, &int8_space);
static_assert(!falling.rescale && falling.rescale_miss &&
              falling.rescale_miss->actual != falling.rescale_miss->expected);

// classify_channels: two channels, a line and a constant.
constexpr bool channels() {
  std::array<i64, 32> y{};
  for (std::size_t i = 0; i < 16; ++i) {
    y[i] = 2 * static_cast<i64>(i);
    y[16 + i] = 4;
  }
  const auto c = qfold::classify_channels(d, y, 2);
  return c.size() == 2 && c[0].kind == map_kind::affine && c[1].kind == map_kind::constant;
}
static_assert(channels());

// tabulate and domain_of.
static_assert(qfold::tabulate(d, [](i64 x) { return x * x; })[0] == 64);
static_assert(*qfold::domain_of(qfold::qparams{0.1, 0, -8, 7}) == d);
static_assert(!qfold::domain_of(qfold::make_qparams(qfold::dtype::int32, 1.0, 0)));

// Merging 2x then /2 (int8 -> int8 -> int8) over -8..7: exact, the identity (no clamp: 2x fits).
constexpr bool merged_round_trip() {
  constexpr qfold::chain::step steps[] = {qfold::chain::rescale{{}, {1 << 30, 29}},
                                          qfold::chain::rescale{{}, {1 << 30, 31}}};
  const auto r = qfold::merge_rescales(d, steps, int8_space);
  return r && r->exact() && r->max_deviation == 0 && !r->first_difference;
}
static_assert(merged_round_trip());

// Halving twice is not halving by four: round(round(x/2)/2) is 1 at x = 1, round(x/4) is 0. The
// naive merge (scale 1/4) is off by one wherever the two disagree; the first such input is found
// by brute force below.
constexpr bool halving_twice() {
  constexpr qfold::chain::step steps[] = {qfold::chain::rescale{{}, {1 << 30, 31}},
                                          qfold::chain::rescale{{}, {1 << 30, 31}}};
  const auto r = qfold::merge_rescales(d, steps, int8_space);
  if (!r || r->max_deviation != 1 || !r->first_difference) return false;
  i64 first = 99;
  for (i64 x = 7; x >= -8; --x)
    if ((((x + 1) >> 1) + 1) >> 1 != (x + 2) >> 2) first = x;
  return r->first_difference->input == first;
}
static_assert(halving_twice());
}  // namespace
