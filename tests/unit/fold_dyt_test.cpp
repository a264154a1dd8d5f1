// The DyT folds on plain data (fold/dyt_alpha.hpp, fold/dyt_affine.hpp), against the independent
// 128-bit reference (tests/reference/spec_reference.hpp): the alpha table equals the pattern
// replayed by the reference on every activation code, or the fold refuses at the first code where
// the reference fails; a folded convolution equals the original on every possible input, proved
// tap by tap (below); and every guard refuses with its own reason.
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <qfold/fold/dyt_affine.hpp>
#include <qfold/fold/dyt_alpha.hpp>
#include <random>
#include <span>
#include <vector>

#include "catch_compat.hpp"
#include "exact_support.hpp"
#include "reference/spec_reference.hpp"

namespace {
using qfold::reason;
using qfold::rescale_attributes;
using qfold::rescale_view;
using qfold::scale_factor;

scale_factor random_scale(std::mt19937_64& gen, int lo_shift, int hi_shift) {
  return {static_cast<std::int32_t>(pick(gen, 1 << 30, (i64{1} << 31) - 1)),
          static_cast<int>(pick(gen, lo_shift, hi_shift))};
}
std::optional<i64> ref(const rescale_view& r, i64 x) {
  return ref_rescale(r.attributes, r.scales[0].multiplier, r.scales[0].shift, x);
}
std::vector<std::int8_t> random_table(std::mt19937_64& gen) {
  std::vector<std::int8_t> t(256);
  for (auto& v : t) v = static_cast<std::int8_t>(pick(gen, -128, 127));
  return t;
}

// --- DyT alpha ---------------------------------------------------------------------------------
struct alpha_expectation {
  std::optional<reason> rejected;
  std::size_t index = 0;
  std::array<std::int8_t, 256> table{};
};
// The pattern by the reference: RESCALE, TOSA MUL (wrapping at shift 0), RESCALE, table lookup.
alpha_expectation reference_alpha(const qfold::dyt_alpha_site& s) {
  alpha_expectation e;
  const auto alpha32 = ref(s.alpha_rescale, s.alpha);
  REQUIRE(alpha32);
  for (i64 c = s.activation.lo; c <= s.activation.hi; ++c) {
    const auto i = static_cast<std::size_t>(c + 128);
    const auto a32 = ref(s.activation_rescale, c);
    REQUIRE(a32);
    const auto p = qref::tosa_mul(qref::DType::i32, *a32, *alpha32, s.mul_shift);
    if (!p.ok) return {reason::overflow, i, {}};
    const auto q = ref(s.output_rescale, p.value);
    if (!q) return {reason::unsupported_rescale, i, {}};  // a REQUIRE of apply_scale_32 fails
    if (!s.tanh_input.contains(*q)) return {reason::out_of_range, i, {}};
    e.table[i] = s.tanh_table[static_cast<std::size_t>(*q + 128)];
  }
  for (i64 c = -128; c < s.activation.lo; ++c)
    e.table[static_cast<std::size_t>(c + 128)] =
        e.table[static_cast<std::size_t>(s.activation.lo + 128)];
  for (i64 c = s.activation.hi + 1; c < 128; ++c)
    e.table[static_cast<std::size_t>(c + 128)] =
        e.table[static_cast<std::size_t>(s.activation.hi + 128)];
  return e;
}

// The same pattern as MLIR's TOSA lowering runs it: output_zp added with a wrapping i32 add. It
// differs from the reference model only where the checked add overflows, which the fold refuses
// on every reached input; so an accepted fold must be exact on this executor too.
std::optional<std::array<std::int8_t, 256>> mlir_alpha(const qfold::dyt_alpha_site& s) {
  constexpr auto wrap = qfold::zero_point_add::wrapping;
  const auto rescale = [&](const qfold::rescale_view& r, i64 x) {
    return qfold::checked::rescale_value(r.attributes, r.scales[0], x, wrap);
  };
  const auto alpha32 = rescale(s.alpha_rescale, s.alpha);
  if (!alpha32) return std::nullopt;
  std::array<std::int8_t, 256> t{};
  for (i64 c = -128; c < 128; ++c) {
    const i64 code = std::clamp(c, s.activation.lo, s.activation.hi);
    const auto a32 = rescale(s.activation_rescale, code);
    if (!a32) return std::nullopt;
    const auto p = qfold::checked::mul(*a32, *alpha32, s.mul_shift);
    if (!p) return std::nullopt;
    const auto q = rescale(s.output_rescale, *p);
    if (!q || !s.tanh_input.contains(*q)) return std::nullopt;
    t[static_cast<std::size_t>(c + 128)] = s.tanh_table[static_cast<std::size_t>(*q + 128)];
  }
  return t;
}

TEST_CASE("dyt alpha: the folded table is the pattern replayed by the reference", "[fold][dyt]") {
  std::mt19937_64 gen(21953);
  int folded = 0, overflowed = 0, narrowed = 0, failed = 0;
  for (int n = 0; n < scaled(3000); ++n) {
    scales sc;
    const auto tanh = random_table(gen);
    qfold::dyt_alpha_site s;
    s.activation = {pick(gen, 0, 3) == 0 ? -127 : -128, pick(gen, 0, 3) == 0 ? 100 : 127};
    s.activation_rescale = sc.view(attrs(int_type::i8, int_type::i32, pick(gen, -128, 127)),
                                   random_scale(gen, 20, 40));
    s.alpha_rescale = sc.view(attrs(int_type::i8, int_type::i32, pick(gen, -128, 127)),
                              random_scale(gen, 20, 40));
    s.alpha = pick(gen, -128, 127);
    s.mul_shift = pick(gen, 0, 3) == 0 ? static_cast<int>(pick(gen, 1, 6)) : 0;
    s.output_rescale = sc.view(attrs(int_type::i32, int_type::i8, 0, pick(gen, -128, 127)),
                               random_scale(gen, 2, 62));
    s.tanh_input = pick(gen, 0, 4) == 0 ? qfold::domain{-100, 100} : qfold::int8_domain;
    s.tanh_table = tanh;
    const alpha_expectation e = reference_alpha(s);
    std::array<std::int8_t, 256> out{};
    const auto r = qfold::fold_dyt_alpha(s, out);
    REQUIRE(r.has_value() == e.rejected.has_value());
    if (r) {
      CHECK(r->code == *e.rejected);
      CHECK(r->index == e.index);
      (r->code == reason::overflow       ? overflowed
       : r->code == reason::out_of_range ? narrowed
                                         : failed) += 1;
    } else {
      CHECK(out == e.table);
      CHECK(mlir_alpha(s) == out);  // and on MLIR's lowering (wrapping zero-point add)
      ++folded;
    }
  }
  // The random cases reach every outcome (a test that never folds proves nothing).
  CHECK(folded > scaled(1000));
  INFO("folded " << folded << " overflowed " << overflowed << " narrowed " << narrowed << " failed "
                 << failed);
  CHECK(narrowed > scaled(80));
  CHECK(failed > scaled(80));
}

TEST_CASE("dyt alpha: a wrapping MUL (shift 0) is replayed, not refused", "[fold][dyt]") {
  // 2^16 * 2^15 wraps to -2^31 in TOSA MUL with shift 0; the fold must reproduce that.
  scales sc;
  std::vector<std::int8_t> tanh(256);
  for (std::size_t i = 0; i < 256; ++i)
    tanh[i] = static_cast<std::int8_t>(static_cast<int>(i) - 128);
  qfold::dyt_alpha_site s{qfold::int8_domain,
                          sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 14}),  // x * 2^16
                          sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 15}),  // 2^15
                          1,
                          0,
                          sc.view(attrs(int_type::i32, int_type::i8), {1 << 30, 40}),  // / 2^10
                          qfold::int8_domain,
                          tanh};
  std::array<std::int8_t, 256> out{};
  REQUIRE_FALSE(qfold::fold_dyt_alpha(s, out));
  // code 1: 2^31 wraps to -2^31, / 2^10 -> -2^21, clamped to -128 (identity table).
  CHECK(out[129] == -128);
  // code -1: -2^31 fits, -2^21 -> -128 as well; code 0 -> 0.
  CHECK(out[127] == -128);
  CHECK(out[128] == 0);
  CHECK(reference_alpha(s).table == out);
}

TEST_CASE("dyt alpha: every guard refuses with its reason", "[fold][dyt]") {
  scales sc;
  std::vector<std::int8_t> tanh(256, 0);
  const auto good = [&] {
    return qfold::dyt_alpha_site{qfold::int8_domain,
                                 sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 30}),
                                 sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 30}),
                                 3,
                                 0,
                                 sc.view(attrs(int_type::i32, int_type::i8), {1 << 30, 32}),
                                 qfold::int8_domain,
                                 tanh};
  };
  std::array<std::int8_t, 256> out{};
  REQUIRE_FALSE(qfold::fold_dyt_alpha(good(), out));
  const auto refuses = [&](const qfold::dyt_alpha_site& s, reason why) {
    const auto r = qfold::fold_dyt_alpha(s, out);
    REQUIRE(r);
    CHECK(r->code == why);
  };
  auto s = good();
  auto per_channel = attrs(int_type::i8, int_type::i32);
  per_channel.per_channel = true;
  s.activation_rescale.attributes = per_channel;
  refuses(s, reason::unsupported_rescale);
  s = good();
  auto unsigned_in = attrs(int_type::i8, int_type::i32);
  unsigned_in.input_unsigned = true;
  s.alpha_rescale.attributes = unsigned_in;
  refuses(s, reason::unsupported_rescale);
  s = good();
  s.output_rescale = sc.view(attrs(int_type::i32, int_type::i16), {1 << 30, 32});
  refuses(s, reason::unsupported_rescale);
  s = good();
  s.output_rescale = sc.view(attrs(int_type::i32, int_type::i8), {1 << 30, 1});  // shift < 2
  refuses(s, reason::unsupported_rescale);
  s = good();
  s.alpha = 128;
  refuses(s, reason::out_of_range);
  s = good();
  s.activation = {-129, 127};
  refuses(s, reason::qparams_mismatch);
  s = good();
  s.tanh_input = {5, 4};
  refuses(s, reason::qparams_mismatch);
  s = good();
  s.tanh_table = std::span(tanh).first(255);
  refuses(s, reason::invalid_shape);
  s = good();
  s.mul_shift = 64;
  refuses(s, reason::unsupported);
  s = good();  // -128 * 2^16 * 2^15 >> 1 leaves int32 at the first code
  s.activation_rescale = sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 14});
  s.alpha_rescale = sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 15});
  s.alpha = 1;
  s.mul_shift = 1;
  refuses(s, reason::overflow);
  CHECK(qfold::fold_dyt_alpha(s, out)->index == 0);
  // Zero points that do not line up with the annotated qparams.
  const auto q = qfold::make_qparams(qfold::dtype::int8, 0.1, 0);
  auto q5 = q;
  q5.zero_point = 5;
  const auto g = good();
  CHECK_FALSE(qfold::dyt_alpha_qparams_line_up(q, g.activation_rescale, q, g.output_rescale));
  CHECK(qfold::dyt_alpha_qparams_line_up(q5, g.activation_rescale, q, g.output_rescale)->code ==
        reason::qparams_mismatch);
  CHECK(qfold::dyt_alpha_qparams_line_up(q, g.activation_rescale, q5, g.output_rescale)->code ==
        reason::qparams_mismatch);
  auto q16 = qfold::make_qparams(qfold::dtype::int16, 0.1, 0);
  CHECK(qfold::dyt_alpha_qparams_line_up(q16, g.activation_rescale, q, g.output_rescale)->code ==
        reason::qparams_mismatch);
}

TEST_CASE("dyt alpha: folds at compile time", "[fold][dyt][static]") {
  constexpr auto table = [] {
    constexpr std::array<scale_factor, 1> one{scale_factor{1 << 30, 30}};
    constexpr std::array<scale_factor, 1> out_scale{scale_factor{1 << 30, 31}};  // / 2
    std::array<std::int8_t, 256> tanh{};
    for (std::size_t i = 0; i < 256; ++i) tanh[i] = static_cast<std::int8_t>(255 - i);
    rescale_attributes to32, to8;
    to32.output_type = int_type::i32;
    to8.input_type = int_type::i32;
    const qfold::dyt_alpha_site s{qfold::int8_domain, {to32, one},        {to32, one}, 4, 0,
                                  {to8, out_scale},   qfold::int8_domain, tanh};
    std::array<std::int8_t, 256> out{};
    return qfold::fold_dyt_alpha(s, out) ? std::array<std::int8_t, 256>{} : out;
  }();
  // code 10: 10 * 4 / 2 = 20 -> tanh[148] = 255 - 148 = 107; code 100 saturates at 127 -> 0.
  static_assert(table[138] == 107);
  static_assert(table[228] == 0);
  STATIC_REQUIRE(table[128] == 127);
}

// --- DyT affine --------------------------------------------------------------------------------
struct affine_case {
  scales sc;
  std::vector<std::int8_t> table;
  std::vector<i64> gamma, beta, weights, wzp, bias;
  std::vector<i64> shape;
  qfold::dyt_affine_site site;
  qfold::dyt_affine_conv conv;
};

// a(t) for one channel by the reference, or nullopt where it fails or overflows int32.
std::optional<i64> reference_a(const qfold::dyt_affine_site& s, std::size_t c, i64 t) {
  const auto t32 = ref(s.table_rescale, t), g32 = ref(s.gamma_rescale, s.gamma[c]);
  const auto b32 = ref(s.beta_rescale, s.beta[c]);
  if (!t32 || !g32 || !b32) return std::nullopt;
  const auto p = qref::tosa_mul(qref::DType::i32, *t32, *g32, s.mul_shift);
  if (!p.ok || !qref::fits_int32(qref::i128{*t32} * *g32 >> s.mul_shift)) return std::nullopt;
  const auto g = ref(s.product_rescale, p.value);
  const auto g32b = g ? ref(s.scaled_rescale, *g) : std::nullopt;
  if (!g32b || !qref::fits_int32(qref::i128{*g32b} + *b32)) return std::nullopt;
  return ref(s.sum_rescale, *g32b + *b32);
}

// Exact over every input: a conv output is bias[o] + sum over (input channel ci, tap k) of
// (w - wzp)(x - azp), each term depending on its own input code only. So the folded conv equals
// the original on every input iff, for every (o, ci, k), d(t) = (w' - wzp)(t - tzp) - (w - wzp)
// (a_ci(t) - azp) is one constant D over every table value t, and sum D = bias - bias'.
void check_fold_exact(const affine_case& c, const qfold::dyt_affine_plan& p) {
  const auto& s = c.site;
  const auto azp = c.conv.input_zero_point, tzp = p.input_zero_point;
  const std::size_t outs = static_cast<std::size_t>(c.shape[0]);
  const std::size_t per_in = static_cast<std::size_t>(c.shape[1]);
  const std::size_t spatial = c.weights.size() / (outs * per_in);
  const std::size_t per_out_group = outs / static_cast<std::size_t>(c.conv.groups);
  std::vector<i64> ts(s.table.begin(), s.table.end());
  std::sort(ts.begin(), ts.end());
  ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
  for (std::size_t o = 0; o < outs; ++o) {
    const i64 wzp = c.wzp.size() == 1 ? c.wzp[0] : c.wzp[o];
    qref::i128 sum_d = 0;
    for (std::size_t i = 0; i < per_in; ++i)
      for (std::size_t k = 0; k < spatial; ++k) {
        const std::size_t e = (o * per_in + i) * spatial + k;
        const std::size_t ci = (o / per_out_group) * per_in + i;
        std::optional<qref::i128> d;
        for (const i64 t : ts) {
          const auto a = reference_a(s, ci, t);
          REQUIRE(a);
          const qref::i128 v = qref::i128{p.weights[e] - wzp} * (t - tzp) -
                               qref::i128{c.weights[e] - wzp} * (*a - azp);
          if (d) REQUIRE(*d == v);
          d = v;
        }
        sum_d += *d;
      }
    const i64 old_bias = c.bias.empty() ? 0 : c.bias[o];
    CHECK(sum_d == qref::i128{old_bias} - p.bias[o]);
  }
}

// Is every channel an exact integer line by the reference (a brute-force search, independent of
// qfold's fit)? Slopes are bounded by 255 for int8 codes.
bool reference_all_lines(const qfold::dyt_affine_site& s) {
  std::vector<i64> ts(s.table.begin(), s.table.end());
  std::sort(ts.begin(), ts.end());
  ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
  for (std::size_t c = 0; c < s.gamma.size(); ++c) {
    bool any = false;
    for (i64 k = -255; k <= 255 && !any; ++k) {
      const i64 b = *reference_a(s, c, ts[0]) - k * ts[0];
      any = std::all_of(ts.begin(), ts.end(),
                        [&](i64 t) { return *reference_a(s, c, t) == k * t + b; });
    }
    if (!any) return false;
  }
  return true;
}

affine_case random_affine(std::mt19937_64& gen, bool exact_kind) {
  affine_case c;
  const std::size_t channels = static_cast<std::size_t>(pick(gen, 1, 3)) * 2;
  const i64 groups = pick(gen, 0, 1) == 0 ? 1 : 2;
  // Exact kinds: power-of-two scales, gamma +-1 or 2, a table of small codes, so the path is
  // affine without saturating; others: random scales.
  c.table.resize(256);
  const i64 span = exact_kind ? 40 : 127;
  for (auto& v : c.table) v = static_cast<std::int8_t>(pick(gen, -span, span));
  const i64 tzp = pick(gen, -10, 10);
  const auto up = [&](int k) { return scale_factor{1 << 30, 30 - k}; };
  const auto down = [&](int k) { return scale_factor{1 << 30, 30 + k}; };
  const auto rnd = [&] { return random_scale(gen, 28, 36); };
  c.site.table = c.table;
  c.site.table_zero_point = tzp;
  c.site.table_rescale =
      c.sc.view(attrs(int_type::i8, int_type::i32, tzp), exact_kind ? up(8) : rnd());
  c.site.gamma_rescale = c.sc.view(attrs(int_type::i8, int_type::i32), exact_kind ? up(0) : rnd());
  for (std::size_t i = 0; i < channels; ++i) {
    c.gamma.push_back(exact_kind
                          ? std::array<i64, 3>{-1, 1, 2}[static_cast<std::size_t>(pick(gen, 0, 2))]
                          : pick(gen, -128, 127));
    c.beta.push_back(pick(gen, exact_kind ? -20 : -128, exact_kind ? 20 : 127));
  }
  c.site.gamma = c.gamma;
  c.site.mul_shift = 0;
  c.site.product_rescale =
      c.sc.view(attrs(int_type::i32, int_type::i8, 0, 0), exact_kind ? down(8) : rnd());
  c.site.scaled_rescale = c.sc.view(attrs(int_type::i8, int_type::i32), exact_kind ? up(4) : rnd());
  c.site.beta_rescale = c.sc.view(attrs(int_type::i8, int_type::i32), exact_kind ? up(4) : rnd());
  c.site.beta = c.beta;
  const i64 azp = pick(gen, -5, 5);
  c.site.sum_rescale =
      c.sc.view(attrs(int_type::i32, int_type::i8, 0, azp), exact_kind ? down(4) : rnd());
  const i64 outs = static_cast<i64>(pick(gen, 1, 2)) * groups;
  c.shape = {outs, static_cast<i64>(channels) / groups, 3, 3};
  for (i64 e = 0; e < outs * c.shape[1] * 9; ++e) c.weights.push_back(pick(gen, -30, 30));
  c.wzp = pick(gen, 0, 1) == 0 ? std::vector<i64>{0}
                               : std::vector<i64>(static_cast<std::size_t>(outs), 0);
  for (auto& z : c.wzp) z = pick(gen, -3, 3);
  if (pick(gen, 0, 3) != 0)
    for (i64 o = 0; o < outs; ++o) c.bias.push_back(pick(gen, -100000, 100000));
  c.conv = {c.weights, c.shape, qfold::weight_layout::o_i_s,
            groups,    c.wzp,   qfold::dtype::int8,
            c.bias,    azp,     false};
  return c;
}

TEST_CASE("dyt affine: folds are exact on every input, refusals are warranted", "[fold][dyt]") {
  std::mt19937_64 gen(1953);
  int folds = 0, not_exact = 0;
  for (int n = 0; n < scaled(400); ++n) {
    affine_case c = random_affine(gen, n % 2 == 0);
    qfold::dyt_affine_plan p;
    const auto r = qfold::fold_dyt_affine(c.site, c.conv, p);
    if (!r) {
      if (p.action == qfold::dyt_affine_action::fold) {
        check_fold_exact(c, p);
        ++folds;
      } else {
        REQUIRE(p.action == qfold::dyt_affine_action::bypass_affine);
        for (const auto t : c.table)
          for (std::size_t ch = 0; ch < c.gamma.size(); ++ch)
            CHECK(reference_a(c.site, ch, t) == t);
      }
    } else if (r->code == reason::not_exact) {
      CHECK_FALSE(reference_all_lines(c.site));
      ++not_exact;
    } else {
      // The only other outcomes here: an overflow the reference sees too, or a folded weight or
      // bias out of range (checked by the in-range tests below).
      CHECK((r->code == reason::overflow || r->code == reason::out_of_range));
      if (r->code == reason::overflow) {
        bool any = false;
        for (const auto t : c.table)
          for (std::size_t ch = 0; ch < c.gamma.size(); ++ch) any |= !reference_a(c.site, ch, t);
        CHECK(any);
      }
    }
  }
  CHECK(folds > scaled(100));
  CHECK(not_exact > scaled(100));
}

TEST_CASE("dyt affine: identities are bypassed; padded convs fold nothing else", "[fold][dyt]") {
  std::mt19937_64 gen(7);
  affine_case c = random_affine(gen, true);
  // gamma 1 and beta 0 with matching power-of-two scales and zero points: a == t.
  std::fill(c.gamma.begin(), c.gamma.end(), 1);
  std::fill(c.beta.begin(), c.beta.end(), 0);
  c.site.table_zero_point = 0;
  c.site.table_rescale.attributes.input_zp = 0;
  c.site.sum_rescale.attributes.output_zp = 0;
  c.conv.input_zero_point = 0;
  qfold::dyt_affine_plan p;
  REQUIRE_FALSE(qfold::fold_dyt_affine(c.site, c.conv, p));
  CHECK(p.action == qfold::dyt_affine_action::bypass_affine);
  c.conv.padded = true;
  REQUIRE_FALSE(qfold::fold_dyt_affine(c.site, c.conv, p));
  CHECK(p.action == qfold::dyt_affine_action::bypass_affine);
  // beta 3: gamma alone is still an identity on the codes -> bypass gamma only.
  std::fill(c.beta.begin(), c.beta.end(), 3);
  REQUIRE_FALSE(qfold::fold_dyt_affine(c.site, c.conv, p));
  CHECK(p.action == qfold::dyt_affine_action::bypass_gamma);
  // Unpadded, the same site folds beta into the bias.
  c.conv.padded = false;
  REQUIRE_FALSE(qfold::fold_dyt_affine(c.site, c.conv, p));
  CHECK(p.action == qfold::dyt_affine_action::fold);
  check_fold_exact(c, p);
  // gamma 2 on a padded conv: neither is an identity.
  std::fill(c.gamma.begin(), c.gamma.end(), 2);
  c.conv.padded = true;
  const auto r = qfold::fold_dyt_affine(c.site, c.conv, p);
  REQUIRE(r);
  CHECK(r->code == reason::padding);
}

TEST_CASE("dyt affine: every guard refuses with its reason", "[fold][dyt]") {
  std::mt19937_64 gen(11);
  const auto fresh = [&] {
    affine_case c = random_affine(gen, true);
    std::fill(c.gamma.begin(), c.gamma.end(), 1);
    return c;
  };
  const auto refuses = [](affine_case& c, reason why) {
    qfold::dyt_affine_plan p;
    c.site.gamma = c.gamma;
    c.site.beta = c.beta;
    c.conv.weights = c.weights;
    c.conv.bias = c.bias;
    c.conv.weight_zero_points = c.wzp;
    const auto r = qfold::fold_dyt_affine(c.site, c.conv, p);
    REQUIRE(r);
    CHECK(r->code == why);
  };
  {
    auto c = fresh();
    c.site.gamma_rescale.attributes.per_channel = true;
    refuses(c, reason::unsupported_rescale);
  }
  {
    auto c = fresh();
    c.site.sum_rescale.attributes.output_type = int_type::i16;
    refuses(c, reason::unsupported_rescale);
  }
  {
    auto c = fresh();
    c.beta.pop_back();
    refuses(c, reason::channel_mismatch);
  }
  {
    auto c = fresh();
    c.gamma[0] = 200;
    refuses(c, reason::out_of_range);
  }
  {
    auto c = fresh();
    c.conv.input_zero_point += 1;
    refuses(c, reason::qparams_mismatch);
  }
  {
    auto c = fresh();
    c.shape[1] += 1;  // channels no longer match gamma
    c.conv.weight_shape = c.shape;
    c.weights.resize(static_cast<std::size_t>(c.shape[0] * c.shape[1] * 9), 0);
    refuses(c, reason::channel_mismatch);
  }
  {
    auto c = fresh();
    c.bias.assign(static_cast<std::size_t>(c.shape[0]) + 1, 0);
    refuses(c, reason::channel_mismatch);
  }
  {
    auto c = fresh();
    c.wzp.assign(static_cast<std::size_t>(c.shape[0]) + 1, 0);
    refuses(c, reason::channel_mismatch);
  }
  {
    auto c = fresh();  // gamma 100 times table codes of up to 40 * 2^8: the int32 MUL overflows
    std::fill(c.gamma.begin(), c.gamma.end(), 100);
    c.site.gamma_rescale = c.sc.view(attrs(int_type::i8, int_type::i32), {1 << 30, 10});
    refuses(c, reason::overflow);
  }
  {
    auto c = fresh();  // slope 2 doubles weights of 100: beyond int8
    std::fill(c.gamma.begin(), c.gamma.end(), 2);
    std::fill(c.weights.begin(), c.weights.end(), 100);
    refuses(c, reason::out_of_range);
  }
  {
    auto c = fresh();  // a bias at the int32 edge, plus beta's offset
    std::fill(c.beta.begin(), c.beta.end(), 20);
    std::fill(c.weights.begin(), c.weights.end(), 30);
    c.bias.assign(static_cast<std::size_t>(c.shape[0]), 2147483647);
    refuses(c, reason::out_of_range);
  }
  {
    auto c = fresh();
    c.site.table = std::span(c.table).first(10);
    refuses(c, reason::invalid_shape);
  }
}

}  // namespace
