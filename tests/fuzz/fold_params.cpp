// libFuzzer target: qfold's fold/ layer on arbitrary parameters: fold_batch_norm (any shape,
// layout, groups, span lengths and floats, float and double), fold_dyt_alpha and fold_dyt_affine
// (any RESCALEs, codes, zero points, tables and conv shapes), fold_scale_into_quantize and
// prove_requantize_identity (any constant and qparams). No input may crash or reach undefined
// behaviour; every accepted fold is checked here against an independent recomputation: the
// shape rules and channel indices derived again from the dims, torch's float operation order
// with <cmath>, the DyT chains with the 128-bit reference (tests/reference/spec_reference.hpp),
// the folded conv proved equal term by term, and torch's quantize model from
// tests/unit/fold_scale_into_quantize_test.cpp. Refusals for non-finite results are checked to be
// warranted.
//
// Input format (little endian; reads past the end give 0, so every input is valid):
//   byte 0      what to run: % 4 -> 0 batch norm, 1 DyT alpha, 2 DyT affine, 3 scale/quantize
//   batch norm  flags (bit 0 double, 1 linear, 2 training if the next byte is 0xFF), rank (% 6),
//               per dim 1 byte (< 200: 1 + b % 6, else a raw int64 follows), layout (< 240:
//               % 5, else raw), groups (< 200: 1 + b % 4, else raw int64), then per span (w,
//               mean, var, gamma, beta, bias, out w, out b) a length byte (< 200: the right
//               length, else b % 9) and per value 1 byte (< 224: (int8) / 16, else raw bits)
//   DyT         per RESCALE: flag (types forced right), attributes, scale count, scales; codes
//               and zero points as int8 or raw int64; tables of int8 (length byte, < 250: 256);
//               the affine's conv: a shape byte sb (< 200: o_i_s / o_s_i by bit 0, HWCM s_c_m
//               when sb % 8 == 7; else a layout byte % 6), groups, rank, dims
//   scale       constant (1 byte: < 128 a power of two 2^(b % 64 - 32), else raw float bits),
//               op, exactness, qparams (type, scale as 2^(b % 40 - 20) or raw double, zp, qmin,
//               qmax), a second qparams for the sandwich, then sample floats
// Seeds: tests/fuzz/corpus/fold_params/ (made by tests/fuzz/corpus/make_exact_fold_seeds.py).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <qfold/fold/batch_norm.hpp>
#include <qfold/fold/dyt_affine.hpp>
#include <qfold/fold/dyt_alpha.hpp>
#include <qfold/fold/scale_into_quantize.hpp>
#include <span>
#include <type_traits>
#include <vector>

#include "exact_support.hpp"
#include "fuzz/fuzz_input.hpp"

namespace {
using qfold::reason;
using qfold::rescale_attributes;
__extension__ typedef __int128 i128;

// ---------------------------------------------------------------------------------- batch norm
template <class T>
T read_value(fuzz::input& in) {
  const std::uint8_t b = in.byte();
  if (b < 224) return static_cast<T>(static_cast<std::int8_t>(in.byte())) / T{16};
  if constexpr (sizeof(T) == 4) {
    return in.f32();
  } else {
    return in.f64();
  }
}
template <class T>
std::vector<T> read_values(fuzz::input& in, std::size_t right, bool positive = false) {
  const std::uint8_t b = in.byte();
  const std::size_t n = b < 200 ? right : b % 9;
  std::vector<T> v;
  for (std::size_t i = 0; i < n; ++i) {
    T x = read_value<T>(in);
    if (positive && x < 0) x = -x;
    v.push_back(x);
  }
  return v;
}

// The output channel count the dims give, derived here again; nullopt when the shape is invalid.
std::optional<std::size_t> expected_channels(std::span<const i64> shape, qfold::weight_layout l,
                                             i64 groups, i128& product) {
  product = 1;
  bool positive = shape.size() >= 2;
  for (const i64 d : shape) {
    positive = positive && d > 0;
    if (positive) product = std::min<i128>(product * d, i128{1} << 64);  // saturated at 2^64
  }
  // Only shapes whose product could equal a real span's length are valid.
  if (!positive || groups < 1 || product >= (i128{1} << 62)) return std::nullopt;
  using wl = qfold::weight_layout;
  if (l == wl::o_i_s || l == wl::o_s_i || l == wl::s_i_o) {
    const i64 c = l == wl::s_i_o ? shape.back() : shape.front();
    if (c % groups != 0) return std::nullopt;
    return static_cast<std::size_t>(c);
  }
  if (l == wl::s_c_m) {  // (k..., C, M): depthwise, groups = C, C * M outputs (<= product)
    const i64 c = shape[shape.size() - 2];
    if (groups != c) return std::nullopt;
    return static_cast<std::size_t>(c * shape.back());
  }
  if (l == wl::i_o_s) {
    if (shape[0] % groups != 0) return std::nullopt;
    const i128 c = i128{shape[1]} * groups;
    if (c > product) return std::nullopt;  // never: groups <= shape[0]; kept for the harness
    return static_cast<std::size_t>(c);
  }
  return std::nullopt;
}

// The output channel of weight i, from the dims alone.
std::size_t channel_of(std::size_t i, std::size_t n, std::span<const i64> shape,
                       qfold::weight_layout l, i64 groups) {
  using wl = qfold::weight_layout;
  const auto d0 = static_cast<std::size_t>(shape[0]), d1 = static_cast<std::size_t>(shape[1]);
  if (l == wl::o_i_s || l == wl::o_s_i) return i / (n / d0);
  if (l == wl::s_i_o) return i % static_cast<std::size_t>(shape.back());
  if (l == wl::s_c_m) return i % static_cast<std::size_t>(shape[shape.size() - 2] * shape.back());
  const std::size_t kernel = n / (d0 * d1);  // i_o_s: (in, out / groups, kernel)
  const std::size_t ci = i / (d1 * kernel), j = (i / kernel) % d1;
  return (ci / (d0 / static_cast<std::size_t>(groups))) * d1 + j;
}

template <class T>
auto bits_of(T v) {
  return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v);
}

template <class T>
void run_batch_norm(fuzz::input& in, std::uint8_t flags) {
  const bool linear = (flags & 2) != 0;
  const bool training = (flags & 4) != 0 && in.byte() == 0xFF;
  std::vector<i64> shape;
  const std::size_t rank = in.count(5);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::uint8_t b = in.byte();
    shape.push_back(b < 200 ? 1 + b % 6 : in.i64());
  }
  const std::uint8_t lb = in.byte();
  const auto layout = static_cast<qfold::weight_layout>(lb < 240 ? lb % 5 : lb);
  const std::uint8_t gb = in.byte();
  const i64 groups = gb < 200 ? 1 + gb % 4 : in.i64();
  i128 product = 0;
  const auto channels = expected_channels(shape, layout, groups, product);
  const std::size_t n_right =
      product >= 1 && product <= 4096 ? static_cast<std::size_t>(product) : 5;
  const std::size_t c_right = channels && *channels <= 4096 ? *channels : 3;
  const auto w = read_values<T>(in, n_right);
  const auto mean = read_values<T>(in, c_right), var = read_values<T>(in, c_right, true),
             gamma = read_values<T>(in, c_right), beta = read_values<T>(in, c_right),
             bias = read_values<T>(in, c_right);
  const T eps = in.flag() ? read_value<T>(in) : static_cast<T>(1e-5);
  std::vector<T> out_w(in.byte() < 240 ? w.size() : in.count(8)),
      out_b(in.byte() < 240 ? c_right : in.count(8));
  const qfold::weights_view<T> view{w, shape, layout, groups, linear};
  const qfold::batch_norm_params<T> bn{mean, var, gamma, beta, eps, training};
  const auto r = qfold::fold_batch_norm<T>(view, bias, bn, out_w, out_b);

  // Is the input well formed, by the rules derived again here?
  const auto sized = [&](std::size_t s) { return channels && s == *channels; };
  bool valid = !training && channels && product == static_cast<i128>(w.size()) &&
               sized(mean.size()) && sized(var.size()) && sized(gamma.size()) &&
               sized(beta.size()) && (bias.empty() || sized(bias.size())) &&
               out_w.size() == w.size() && sized(out_b.size()) && std::isfinite(eps) && eps >= 0;
  for (std::size_t o = 0; valid && o < var.size(); ++o) valid = std::isfinite(var[o]);
  if (!valid) {
    fuzz::check(r.has_value(), "batch norm: folded malformed input");
    return;
  }
  // torch's order, in T, with <cmath>.
  bool finite = true;
  std::vector<T> ew(w.size()), eb(*channels);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::size_t o = channel_of(i, w.size(), shape, layout, groups);
    fuzz::check(o < *channels, "batch norm (harness): channel index");
    const T rs = T{1} / std::sqrt(var[o] + eps);
    ew[i] = w[i] * (gamma[o] * rs);
    finite = finite && std::isfinite(ew[i]);
  }
  for (std::size_t o = 0; o < *channels; ++o) {
    const T rs = T{1} / std::sqrt(var[o] + eps);
    const T centred = (bias.empty() ? T{0} : bias[o]) - mean[o];
    const T scaled = linear ? centred * (gamma[o] * rs) : centred * rs * gamma[o];
    eb[o] = scaled + beta[o];
    finite = finite && std::isfinite(eb[o]);
  }
  if (r) {
    fuzz::check(r->code == reason::non_finite && !finite, "batch norm: unwarranted refusal");
    return;
  }
  fuzz::check(finite, "batch norm: accepted a non-finite fold");
  for (std::size_t i = 0; i < w.size(); ++i)
    fuzz::check(bits_of(out_w[i]) == bits_of(ew[i]), "batch norm: folded weight differs");
  for (std::size_t o = 0; o < *channels; ++o)
    fuzz::check(bits_of(out_b[o]) == bits_of(eb[o]), "batch norm: folded bias differs");
}

// ------------------------------------------------------------------------------------- DyT
int_type read_type(fuzz::input& in) {
  const std::uint8_t b = in.byte();
  if (b >= 240) return static_cast<int_type>(b);
  return std::array<int_type, 4>{int_type::i8, int_type::i16, int_type::i32, int_type::i48}[b % 4];
}
i64 read_code(fuzz::input& in) { return in.byte() < 230 ? in.i8() : in.i64(); }

struct rescale_data {
  rescale_attributes attributes;
  std::vector<qfold::scale_factor> scales;
  [[nodiscard]] qfold::rescale_view view() const { return {attributes, scales}; }
};
// A RESCALE: mostly of the pattern's types, signed, per tensor, valid; sometimes anything.
rescale_data read_rescale(fuzz::input& in, int_type from, int_type to) {
  rescale_data r;
  auto& a = r.attributes;
  const std::uint8_t f = in.byte();
  const bool any = f >= 224;
  a.input_type = any ? read_type(in) : from;
  a.output_type = any ? read_type(in) : to;
  a.scale32 = !any || in.flag();
  const std::uint8_t rb = in.byte();
  a.rounding = rb < 128   ? qfold::rounding_mode::single_round
               : rb < 250 ? qfold::rounding_mode::double_round
                          : static_cast<qfold::rounding_mode>(rb % 5);
  a.per_channel = any && in.flag();
  a.input_unsigned = any && in.flag();
  a.output_unsigned = any && in.flag();
  a.input_zp = from == int_type::i8 || any ? read_code(in) : 0;
  a.output_zp = to == int_type::i8 || any ? read_code(in) : 0;
  const std::size_t n = any ? in.count(2) : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t m =
        in.byte() < 200 ? static_cast<std::int32_t>(in.bits(2)) << in.count(15) : in.i32();
    r.scales.push_back({m, static_cast<int>(in.byte() % 66) - 2});
  }
  return r;
}
std::optional<i64> ref(const qfold::rescale_view& r, i64 x) {
  return ref_rescale(r.attributes, r.scales[0].multiplier, r.scales[0].shift, x);
}
std::vector<std::int8_t> read_table(fuzz::input& in, std::uint8_t mask) {
  const std::uint8_t b = in.byte();
  std::vector<std::int8_t> t(b < 250 ? 256 : b % 8 + 250);
  for (auto& v : t) v = static_cast<std::int8_t>(in.byte() & mask);
  return t;
}
qfold::domain read_range(fuzz::input& in) {
  const std::uint8_t b = in.byte();
  if (b < 160) return qfold::int8_domain;
  if (b < 250) {
    const i64 lo = in.i8();
    return {lo, std::min<i64>(127, lo + in.byte())};
  }
  return {in.i64(), in.i64()};
}

void run_dyt_alpha(fuzz::input& in) {
  const rescale_data act = read_rescale(in, int_type::i8, int_type::i32);
  const rescale_data alpha = read_rescale(in, int_type::i8, int_type::i32);
  const rescale_data out = read_rescale(in, int_type::i32, int_type::i8);
  const std::vector<std::int8_t> table = read_table(in, 0xFF);
  qfold::dyt_alpha_site s;
  s.activation = read_range(in);
  s.activation_rescale = act.view();
  s.alpha_rescale = alpha.view();
  s.alpha = read_code(in);
  s.mul_shift = static_cast<int>(in.byte() % 70) - 3;
  s.output_rescale = out.view();
  s.tanh_input = read_range(in);
  s.tanh_table = table;
  std::array<std::int8_t, 256> folded{};
  const auto r = qfold::fold_dyt_alpha(s, folded);
  if (r) return;  // refusals: only no-crash here (their reasons are the unit tests' business)
  fuzz::check(table.size() == 256 && s.activation.lo <= s.activation.hi &&
                  s.activation.lo >= -128 && s.activation.hi <= 127,
              "dyt alpha: accepted a malformed site");
  for (const auto* v : {&act, &alpha, &out})
    fuzz::check(!v->attributes.per_channel && v->scales.size() == 1 &&
                    v->attributes.rounding != qfold::rounding_mode::inexact_round,
                "dyt alpha: accepted a per-channel or inexact RESCALE");
  // Every entry is the pattern replayed by the reference (edges copied outside the range).
  const auto al = ref(s.alpha_rescale, s.alpha);
  fuzz::check(al.has_value(), "dyt alpha: the reference fails on alpha");
  for (i64 code = -128; code <= 127; ++code) {
    const i64 c = std::clamp(code, s.activation.lo, s.activation.hi);
    const auto a = ref(s.activation_rescale, c);
    fuzz::check(a.has_value(), "dyt alpha: the reference fails on a code");
    const auto p = qref::tosa_mul(qref::DType::i32, *a, *al, s.mul_shift);
    fuzz::check(p.ok, "dyt alpha: the reference MUL fails");
    const auto q = ref(s.output_rescale, p.value);
    fuzz::check(q && s.tanh_input.contains(*q), "dyt alpha: code outside the tanh input");
    fuzz::check(
        folded[static_cast<std::size_t>(code + 128)] == table[static_cast<std::size_t>(*q + 128)],
        "dyt alpha: entry differs from the pattern");
  }
}

void run_dyt_affine(fuzz::input& in) {
  const std::uint8_t mask = in.byte() | 0x81;  // few distinct table values keep cases fast
  const std::vector<std::int8_t> table = read_table(in, mask);
  const rescale_data rt = read_rescale(in, int_type::i8, int_type::i32),
                     rg = read_rescale(in, int_type::i8, int_type::i32),
                     rp = read_rescale(in, int_type::i32, int_type::i8),
                     rs = read_rescale(in, int_type::i8, int_type::i32),
                     rb = read_rescale(in, int_type::i8, int_type::i32),
                     ro = read_rescale(in, int_type::i32, int_type::i8);
  const std::size_t channels = in.count(6);
  std::vector<i64> gamma, beta;
  for (std::size_t c = 0; c < channels; ++c) gamma.push_back(read_code(in));
  const std::size_t nb = in.byte() < 220 ? channels : in.count(6);
  for (std::size_t c = 0; c < nb; ++c) beta.push_back(read_code(in));
  qfold::dyt_affine_site s{table,     read_code(in), rt.view(),
                           rg.view(), gamma,         static_cast<int>(in.byte() % 70) - 3,
                           rp.view(), rs.view(),     rb.view(),
                           beta,      ro.view()};
  // The conv: (O, I, k), (O, k, I) or depthwise (k, C, M) mostly consistent with gamma;
  // sometimes any dims (and any layout value).
  using wl = qfold::weight_layout;
  std::vector<i64> shape;
  const std::uint8_t sb = in.byte();
  i64 groups = sb < 200 ? 1 + in.byte() % 2 : in.i64();
  const auto layout =
      sb < 200 && sb % 8 == 7 ? wl::s_c_m : static_cast<wl>(sb < 200 ? (sb & 1) : in.byte() % 6);
  const std::size_t rank = 2 + in.count(2);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::uint8_t b = in.byte();
    shape.push_back(b < 220 ? 1 + b % 3 : in.i64());
  }
  if (sb < 150 && layout == wl::s_c_m) {  // C = gamma's channels = groups, M of 1 to 3
    groups = static_cast<i64>(channels);
    shape[rank - 2] = groups;
    shape.back() = 1 + in.byte() % 3;
  } else if (sb < 150 && groups >= 1 && channels % static_cast<std::size_t>(groups) == 0) {
    const i64 per_in = static_cast<i64>(channels) / groups;
    (layout == qfold::weight_layout::o_i_s ? shape[1] : shape.back()) = per_in;
    shape[0] = groups * (1 + in.byte() % 2);
  }
  i128 product = 1;
  bool positive = true;
  for (const i64 d : shape) {
    positive = positive && d > 0;
    if (positive) product = std::min<i128>(product * d, i128{1} << 64);
  }
  const std::size_t n =
      positive && product <= 512 ? static_cast<std::size_t>(product) : in.count(9);
  std::vector<i64> weights;
  for (std::size_t i = 0; i < n; ++i) weights.push_back(in.byte() < 240 ? in.i8() / 4 : in.i64());
  std::size_t outs = 1;  // the output channels the dims give, when small
  if (layout == wl::s_c_m) {
    const i64 c = shape[rank - 2], m = shape.back();
    if (c > 0 && c < 64 && m > 0 && m < 64) outs = static_cast<std::size_t>(c * m);
  } else if (shape[0] > 0 && shape[0] < 64) {
    outs = static_cast<std::size_t>(shape[0]);
  }
  std::vector<i64> wzp, bias;
  const std::uint8_t zb = in.byte();
  const std::size_t nz = zb < 150 ? 1 : zb < 240 ? outs : in.count(4);
  for (std::size_t i = 0; i < nz; ++i) wzp.push_back(in.byte() < 240 ? in.i8() / 8 : in.i64());
  const std::uint8_t bb = in.byte();
  const std::size_t nbias = bb < 100 ? 0 : bb < 240 ? outs : in.count(4);
  for (std::size_t i = 0; i < nbias; ++i) bias.push_back(in.byte() < 240 ? in.i16() : in.i64());
  const std::uint8_t tb = in.byte();
  const qfold::dyt_affine_conv conv{
      weights,
      shape,
      layout,
      groups,
      wzp,
      tb < 200 ? qfold::dtype::int8 : static_cast<qfold::dtype>(tb % 7),
      bias,
      in.byte() < 240 ? ro.attributes.output_zp : read_code(in),
      in.byte() >= 200};
  qfold::dyt_affine_plan plan;
  const auto r = qfold::fold_dyt_affine(s, conv, plan);
  if (r) return;

  // Accepted: the site is well formed by the rules derived again here.
  const bool depthwise = layout == wl::s_c_m;
  fuzz::check(table.size() == 256 && channels > 0 && beta.size() == channels && positive &&
                  product == static_cast<i128>(weights.size()) &&
                  (layout == wl::o_i_s || layout == wl::o_s_i || depthwise) && groups >= 1 &&
                  (!depthwise || groups == shape[rank - 2]),
              "dyt affine: accepted a malformed site");
  // s_c_m: (k..., C, M), C * M outputs of one input channel each (groups = C).
  const auto O = static_cast<std::size_t>(depthwise ? shape[rank - 2] * shape.back() : shape[0]);
  const auto I = static_cast<std::size_t>(depthwise             ? 1
                                          : layout == wl::o_i_s ? shape[1]
                                                                : shape.back());
  const auto G = static_cast<std::size_t>(groups);
  fuzz::check(I * G == channels && O % G == 0 && (bias.empty() || bias.size() == O) &&
                  (wzp.size() == 1 || wzp.size() == O),
              "dyt affine: accepted mismatched channels");
  // a_c(t) and g_c(t) by the reference, for every distinct table value t.
  std::vector<i64> ts(table.begin(), table.end());
  std::sort(ts.begin(), ts.end());
  ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
  std::vector<std::vector<i64>> a(channels), g(channels);
  for (std::size_t c = 0; c < channels; ++c)
    for (const i64 t : ts) {
      const auto t32 = ref(s.table_rescale, t), g32 = ref(s.gamma_rescale, gamma[c]);
      fuzz::check(t32 && g32, "dyt affine: the reference fails (table or gamma)");
      fuzz::check(s.mul_shift != 0 || qref::fits_int32(i128{*t32} * *g32),
                  "dyt affine: accepted an int32 overflow");
      const auto p = qref::tosa_mul(qref::DType::i32, *t32, *g32, s.mul_shift);
      fuzz::check(p.ok, "dyt affine: the reference MUL fails");
      const auto gc = ref(s.product_rescale, p.value);
      const auto g2 = gc ? ref(s.scaled_rescale, *gc) : gc;
      const auto b32 = ref(s.beta_rescale, beta[c]);
      fuzz::check(g2 && b32 && qref::fits_int32(i128{*g2} + *b32), "dyt affine: gamma side/ADD");
      const auto ac = ref(s.sum_rescale, *g2 + *b32);
      fuzz::check(ac.has_value(), "dyt affine: the reference fails on the output RESCALE");
      g[c].push_back(*gc);
      a[c].push_back(*ac);
    }
  const auto identity = [&](const std::vector<std::vector<i64>>& y) {
    for (const auto& ch : y)
      if (ch != ts) return false;
    return true;
  };
  if (plan.action == qfold::dyt_affine_action::bypass_affine) {
    fuzz::check(identity(a), "dyt affine: bypass of a non-identity");
    return;
  }
  if (plan.action == qfold::dyt_affine_action::bypass_gamma) {
    fuzz::check(conv.padded && identity(g), "dyt affine: gamma bypass of a non-identity");
    return;
  }
  fuzz::check(!conv.padded, "dyt affine: folded into a padded conv");
  fuzz::check(plan.weights.size() == weights.size() && plan.bias.size() == O,
              "dyt affine: plan sizes");
  const qfold::dtype_range wr = qfold::range_of(conv.weight_type);
  const i64 tzp = s.table_zero_point, azp = conv.input_zero_point;
  const std::size_t S = weights.size() / (O * I);
  for (std::size_t o = 0; o < O; ++o) {
    const i64 z = wzp[wzp.size() == 1 ? 0 : o];
    i128 constants = 0;
    for (std::size_t i = 0; i < I; ++i)
      for (std::size_t k = 0; k < S; ++k) {
        const std::size_t e = layout == wl::o_i_s   ? (o * I + i) * S + k
                              : layout == wl::o_s_i ? (o * S + k) * I + i
                                                    : (k * I + i) * O + o;  // s_c_m
        const std::size_t ci = (o / (O / G)) * I + i;
        fuzz::check(plan.weights[e] >= wr.lo && plan.weights[e] <= wr.hi,
                    "dyt affine: folded weight outside its type");
        // The term's change, (w - z)(a(t) - azp) - (w' - z)(t - tzp), is one constant over t.
        std::optional<i128> d;
        for (std::size_t j = 0; j < ts.size(); ++j) {
          const i128 v =
              i128{weights[e] - z} * (a[ci][j] - azp) - i128{plan.weights[e] - z} * (ts[j] - tzp);
          fuzz::check(!d || *d == v, "dyt affine: a folded term depends on the input");
          d = v;
        }
        constants += *d;
      }
    const i64 b0 = bias.empty() ? 0 : bias[o];
    fuzz::check(i128{plan.bias[o]} - b0 == constants, "dyt affine: bias change differs");
    fuzz::check(qref::fits_int32(plan.bias[o]), "dyt affine: folded bias outside int32");
  }
  fuzz::check(plan.input_zero_point == tzp, "dyt affine: input zero point");
}

// ------------------------------------------------------------------------ scale into quantize
// torch's quantize_per_tensor / dequantize_per_tensor in float32 (as the unit test models them).
i64 model_quantize(float x, const qfold::qparams& q) {
  const float y = x * static_cast<float>(1.0 / q.scale);
  if (std::isnan(y)) return 0;
  const float r = std::nearbyint(y) + static_cast<float>(q.zero_point);
  if (!(r > static_cast<float>(q.qmin))) return q.qmin;
  if (!(r < static_cast<float>(q.qmax))) return q.qmax;
  return static_cast<i64>(r);
}
float model_dequantize(i64 code, const qfold::qparams& q) {
  return static_cast<float>(code - q.zero_point) * static_cast<float>(q.scale);
}

qfold::qparams read_qparams(fuzz::input& in) {
  qfold::qparams q;
  const std::uint8_t tb = in.byte();
  const unsigned t = tb < 240 ? tb % 4u : tb % 7u;  // int32 and unknown types rarely
  q.type = static_cast<qfold::dtype>(t);
  constexpr std::array<qfold::dtype_range, 7> ranges{{{-128, 127},
                                                      {0, 255},
                                                      {-32768, 32767},
                                                      {0, 65535},
                                                      {-2147483648LL, 2147483647LL},
                                                      {0, 0},
                                                      {0, 0}}};
  const qfold::dtype_range r = ranges[t];
  const std::uint8_t sb = in.byte();
  q.scale = sb < 200 ? std::ldexp(1.0 + in.byte() / 256.0, sb % 40 - 20) : in.f64();
  q.zero_point = in.byte() < 200 ? static_cast<std::int32_t>(in.i8() / 4) : in.i32();
  const bool full = in.byte() < 200;
  q.qmin = full ? static_cast<std::int32_t>(r.lo) : in.i32();
  q.qmax = full ? static_cast<std::int32_t>(r.hi) : in.i32();
  return q;
}

bool sane(double s) { return s >= 0x1p-30 && s <= 0x1p30; }

void run_scale(fuzz::input& in) {
  const std::uint8_t cb = in.byte();
  const float c = cb < 128 ? std::ldexp(1.0f, cb % 64 - 32) : in.f32();
  const auto op = static_cast<qfold::scale_op>(in.byte() % 2);
  const auto exact = in.flag() ? qfold::float_exactness::real : qfold::float_exactness::bit_exact;
  const qfold::qparams q = read_qparams(in);
  qfold::qparams folded{};
  const auto r = qfold::fold_scale_into_quantize(op, c, q, exact, folded);
  if (!r) {
    fuzz::check(std::isfinite(c) && c > 0 && qfold::validate(q).has_value(),
                "scale: folded an invalid constant or qparams");
    const double want = op == qfold::scale_op::div ? q.scale * double{c} : q.scale / double{c};
    fuzz::check(folded.scale == want && folded.zero_point == q.zero_point &&
                    folded.qmin == q.qmin && folded.qmax == q.qmax && folded.type == q.type,
                "scale: folded qparams");
    if (exact == qfold::float_exactness::bit_exact) {
      int e = 0;
      fuzz::check(std::frexp(c, &e) == 0.5f && std::isnormal(c), "scale: c not a power of two");
      // quantize(x op c, q) == quantize(x, folded) for sample inputs, in torch's model.
      if (sane(q.scale) && sane(folded.scale) && q.type != qfold::dtype::int32)
        for (int k = 0; k < 24; ++k) {
          const float x =
              k < 8 ? in.f32()
                    : static_cast<float>((static_cast<double>(in.i16()) + 0.5) *
                                         (op == qfold::scale_op::div ? folded.scale : q.scale));
          const float y = op == qfold::scale_op::div ? x / c : x * c;
          fuzz::check(model_quantize(y, q) == model_quantize(x, folded),
                      "scale: a code moves after the fold");
        }
    }
  }
  // The sandwich: dequantize(in) -> op(c) -> quantize(out).
  const qfold::qparams qi = read_qparams(in), qo = in.flag() ? qi : read_qparams(in);
  const auto rs = qfold::prove_requantize_identity(op, c, qi, qo, qfold::conventions::executorch);
  if (rs) return;
  fuzz::check(qfold::validate(qi).has_value() && qfold::validate(qo).has_value() &&
                  qi.type == qo.type && qi.qmin == qo.qmin && qi.qmax == qo.qmax &&
                  qi.type != qfold::dtype::int32 && std::isfinite(c) && c != 0,
              "sandwich: accepted mismatched qparams");
  const i64 span = i64{qi.qmax} - qi.qmin;
  for (i64 k = 0; k <= std::min<i64>(span, 4095); ++k) {
    const i64 code = span <= 4095 ? qi.qmin + k : qi.qmin + (span * k) / 4095;
    const float y = model_dequantize(code, qi);
    fuzz::check(model_quantize(op == qfold::scale_op::div ? y / c : y * c, qo) == code,
                "sandwich: a code does not come back (model)");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  const std::uint8_t what = in.byte();
  switch (what % 4) {
    case 0: {
      const std::uint8_t flags = in.byte();
      if (flags & 1)
        run_batch_norm<double>(in, flags);
      else
        run_batch_norm<float>(in, flags);
      break;
    }
    case 1:
      run_dyt_alpha(in);
      break;
    case 2:
      run_dyt_affine(in);
      break;
    default:
      run_scale(in);
      break;
  }
  return 0;
}
