// DyT's per-channel affine (TABLE, times gamma, RESCALE, plus beta, RESCALE) folded into the int8
// weights and int32 bias of the convolution that reads it, when every channel's integer map from
// table code to convolution input code is exactly an integer line; identities bypassed otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/arith/mul.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/arith/rescale_array.hpp"
#include "qfold/arith/rounding.hpp"
#include "qfold/detail/algorithm.hpp"
#include "qfold/exact/classify.hpp"
#include "qfold/fold/batch_norm.hpp"
#include "qfold/fold/dyt_alpha.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

// a = R_ao(R_aa(R_go(R_ta(t) * R_g(gamma[c]))) + R_b(beta[c])) for table output t, channel c.
struct dyt_affine_site {
  std::span<const std::int8_t> table;   // the TABLE's 256 entries: every t that can occur
  std::int64_t table_zero_point = 0;    // of the TABLE's output
  rescale_view table_rescale;           // R_ta: int8 -> int32
  rescale_view gamma_rescale;           // R_g:  int8 -> int32
  std::span<const std::int64_t> gamma;  // C int8 codes
  int mul_shift = 0;                    // TOSA MUL shift
  rescale_view product_rescale;         // R_go: int32 -> int8
  rescale_view scaled_rescale;          // R_aa: int8 -> int32
  rescale_view beta_rescale;            // R_b:  int8 -> int32
  std::span<const std::int64_t> beta;   // C int8 codes
  rescale_view sum_rescale;             // R_ao: int32 -> int8, the convolution's input
};

// The integer convolution that reads `a`: weights (O, I / groups, spatial...) in o_i_s or o_s_i,
// or depthwise (spatial..., C, M) in s_c_m with groups = C.
struct dyt_affine_conv {
  std::span<const std::int64_t> weights;
  std::span<const std::int64_t> weight_shape;
  weight_layout layout = weight_layout::o_i_s;
  std::int64_t groups = 1;
  std::span<const std::int64_t> weight_zero_points;  // one, or one per output channel
  dtype weight_type = dtype::int8;
  std::span<const std::int64_t> bias;  // O int32 values; empty: no bias (zeros)
  std::int64_t input_zero_point = 0;
  bool padded = false;
};

enum class dyt_affine_action : std::uint8_t {
  fold,           // gamma and beta folded into the weights and bias; conv reads the table
  bypass_affine,  // gamma and beta are an identity on the table's codes: conv reads the table
  bypass_gamma,   // only gamma is an identity: beta's RESCALE reads the table (padded conv)
};

struct dyt_affine_plan {
  dyt_affine_action action = dyt_affine_action::fold;
  std::vector<std::int64_t> weights, bias;  // fold only
  std::int64_t input_zero_point = 0;        // fold only: the table's zero point
};

namespace detail {
// (t, g, a) for every distinct table value t (ascending) and every channel, channel-major.
struct dyt_affine_values {
  std::vector<std::int64_t> t, t32, g, a;  // distinct table values, their RESCALE, per channel
};

[[nodiscard]] constexpr std::optional<rejection> evaluate_dyt_affine(const dyt_affine_site& s,
                                                                     dyt_affine_values& v) {
  for (int code = -128; code < 128; ++code) {
    const std::int64_t t = s.table[static_cast<std::size_t>(code + 128)];
    if (detail::contains(v.t, t)) continue;
    // Kept sorted as it grows (at most 256 values): std::sort's instantiation would cost every
    // TU that includes this header ~0.03 s (bench/README.md, "Include cost").
    v.t.push_back(t);
    for (std::size_t i = v.t.size() - 1; i > 0 && v.t[i - 1] > v.t[i]; --i)
      std::swap(v.t[i - 1], v.t[i]);
  }
  // Every RESCALE passed check_rescale (validated, per tensor): each is evaluated by its kernel.
  const auto evaluator = [](const rescale_view& r) {
    return rescale_evaluator(r.attributes, r.scales[0]);
  };
  const rescale_evaluator table_r = evaluator(s.table_rescale),
                          gamma_r = evaluator(s.gamma_rescale), beta_r = evaluator(s.beta_rescale),
                          product_r = evaluator(s.product_rescale),
                          scaled_r = evaluator(s.scaled_rescale), sum_r = evaluator(s.sum_rescale);
  v.t32.clear();
  for (std::size_t c = 0; c < s.gamma.size(); ++c) {
    const auto g32 = gamma_r(s.gamma[c]);
    const auto b32 = beta_r(s.beta[c]);
    if (!g32 || !b32)
      return rejection{reason::unsupported_rescale, "the gamma or beta RESCALE fails", c};
    for (std::size_t i = v.t32.size(); c == 0 && i < v.t.size(); ++i) {  // once: no channel in it
      const auto t32 = table_r(v.t[i]);
      if (!t32) return rejection{reason::unsupported_rescale, "the table RESCALE fails", c};
      v.t32.push_back(*t32);
    }
    for (const std::int64_t t32 : v.t32) {
      // Unlike the alpha pattern, an int32 overflow refuses even with shift 0 (checked, not
      // wrapped): a wrapped gamma product is never what a DyT layer means.
      if (s.mul_shift == 0 && !fits_int32(t32 * *g32))
        return rejection{reason::overflow, "table * gamma overflows int32", c};
      const auto product =
          checked::mul<std::int32_t>(static_cast<std::int32_t>(t32), *g32, s.mul_shift);
      if (!product) return rejection{reason::overflow, "table * gamma leaves int32", c};
      const auto g = product_r(*product);
      const auto g_32 = g ? scaled_r(*g) : g;
      if (!g_32) return rejection{reason::unsupported_rescale, "a gamma-side RESCALE fails", c};
      const std::int64_t sum = std::int64_t{*g_32} + *b32;
      if (!fits_int32(sum)) return rejection{reason::overflow, "the beta ADD overflows int32", c};
      const auto a = sum_r(sum);
      if (!a) return rejection{reason::unsupported_rescale, "the output RESCALE fails", c};
      v.g.push_back(*g);
      v.a.push_back(*a);
    }
  }
  return std::nullopt;
}

// y equals t on every distinct table value of every channel.
[[nodiscard]] constexpr bool is_identity(const std::vector<std::int64_t>& t,
                                         const std::vector<std::int64_t>& y) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] != t[i % t.size()]) return false;
  return true;
}

// The plan once the pattern and the conv's shape are checked (counts from fold_dyt_affine).
[[nodiscard]] constexpr std::optional<rejection> plan_dyt_affine(
    const dyt_affine_site& s, const dyt_affine_conv& conv, std::size_t channels, std::size_t count,
    std::size_t out_channels, std::size_t per_group_in, std::size_t groups, dyt_affine_plan& plan) {
  detail::dyt_affine_values v;
  if (auto r = detail::evaluate_dyt_affine(s, v)) return r;
  if (detail::is_identity(v.t, v.a)) {
    plan.action = dyt_affine_action::bypass_affine;
    return std::nullopt;
  }
  if (conv.padded) {
    if (detail::is_identity(v.t, v.g)) {
      plan.action = dyt_affine_action::bypass_gamma;
      return std::nullopt;
    }
    return rejection{reason::padding, "padded conv: beta cannot fold and gamma is not an identity"};
  }
  // a - azp = k (t - tzp) + m per channel: the line y = k t + b gives m = b + k tzp - azp.
  const std::size_t n = v.t.size();
  std::vector<affine_map> lines;
  for (std::size_t c = 0; c < channels; ++c) {
    const line_fit fit = fit_line(v.t, std::span<const std::int64_t>(v.a).subspan(c * n, n));
    if (!fit.line)
      return rejection{reason::not_exact, "a channel's map is not an exact integer line", c};
    lines.push_back({fit.line->slope, fit.line->offset + fit.line->slope * s.table_zero_point -
                                          conv.input_zero_point});
  }
  const dtype_range wr = range_of(conv.weight_type);
  const std::size_t spatial = count / (out_channels * per_group_in);
  plan.action = dyt_affine_action::fold;
  plan.input_zero_point = s.table_zero_point;
  plan.weights.assign(count, 0);
  plan.bias.assign(out_channels, 0);
  for (std::size_t o = 0; o < out_channels && !conv.bias.empty(); ++o) {
    if (!fits_int32(conv.bias[o]))
      return rejection{reason::out_of_range, "a conv bias value is not an int32", o};
    plan.bias[o] = conv.bias[o];
  }
  // Weight element e of output channel o reads input channel ci (within all groups). The bias
  // change sums |w - wzp| < 2^33 times |m| < 2^17 over any number of weights: 128 bits.
  wide_int bias_sum = 0;
  const auto fold_weight = [&](std::size_t e, std::size_t ci,
                               std::int64_t wzp) -> std::optional<rejection> {
    if (conv.weights[e] < wr.lo || conv.weights[e] > wr.hi)
      return rejection{reason::out_of_range, "a weight is outside its type", e};
    const std::int64_t w = conv.weights[e] - wzp;
    const std::int64_t folded = w * lines[ci].slope + wzp;
    if (folded < wr.lo || folded > wr.hi)
      return rejection{reason::out_of_range, "a folded weight leaves the weight type", e};
    plan.weights[e] = folded;
    bias_sum += wide_int{w} * lines[ci].offset;
    return std::nullopt;
  };
  const std::size_t per_group_out = out_channels / groups;
  // Element (i, k) of output channel o: input channel i of its group, spatial tap k.
  const auto element = [&](std::size_t o, std::size_t i, std::size_t k) -> std::size_t {
    switch (conv.layout) {
      case weight_layout::o_i_s:
        return (o * per_group_in + i) * spatial + k;
      case weight_layout::s_c_m:  // (k, c, m) with per_group_in 1: o = c * M + m is fastest
        return (k * per_group_in + i) * out_channels + o;
      default:  // o_s_i (fold_dyt_affine takes no other)
        return (o * spatial + k) * per_group_in + i;
    }
  };
  for (std::size_t o = 0; o < out_channels; ++o) {
    const std::int64_t wzp = conv.weight_zero_points[conv.weight_zero_points.size() == 1 ? 0 : o];
    if (wzp < wr.lo || wzp > wr.hi)
      return rejection{reason::out_of_range, "a weight zero point is outside its type", o};
    const std::size_t first_in = (o / per_group_out) * per_group_in;
    bias_sum = plan.bias[o];
    for (std::size_t i = 0; i < per_group_in; ++i)
      for (std::size_t k = 0; k < spatial; ++k)
        if (auto r = fold_weight(element(o, i, k), first_in + i, wzp)) return r;
    plan.bias[o] = saturate_int64(bias_sum);  // saturated: still outside int32 when it was
  }
  for (std::size_t o = 0; o < out_channels; ++o)
    if (!fits_int32(plan.bias[o]))
      return rejection{reason::out_of_range, "a folded bias leaves int32", o};
  return std::nullopt;
}
}  // namespace detail

// Checks the pattern, evaluates it over every distinct table value and channel, and plans the
// rewrite: `fold` when every channel is an exact integer line a - azp = k (t - tzp) + m and the
// conv is unpadded (w' = (w - wzp) k + wzp in range, bias' = bias + sum (w - wzp) m in int32);
// `bypass_affine` when a == t everywhere; for a padded conv, `bypass_gamma` when gamma's side
// alone is an identity (beta then stays: at the border its effect depends on position). Weights
// o_i_s or o_s_i with any groups, or s_c_m (depthwise: groups = C = gamma's length).
[[nodiscard]] constexpr std::optional<rejection> fold_dyt_affine(const dyt_affine_site& s,
                                                                 const dyt_affine_conv& conv,
                                                                 dyt_affine_plan& plan) {
  using detail::check_rescale;
  constexpr auto i8 = int_type::i8, i32 = int_type::i32;
  if (s.table.size() != 256)
    return rejection{reason::invalid_shape, "the table does not have 256 int8 entries"};
  struct expected {
    const rescale_view* rescale;
    int_type in, out;
    std::string_view otherwise;
  };
  for (const expected& e :
       {expected{&s.table_rescale, i8, i32, "the table RESCALE is not int8 -> int32"},
        expected{&s.gamma_rescale, i8, i32, "the gamma RESCALE is not int8 -> int32"},
        expected{&s.product_rescale, i32, i8, "the MUL's RESCALE is not int32 -> int8"},
        expected{&s.scaled_rescale, i8, i32, "the ADD's RESCALE is not int8 -> int32"},
        expected{&s.beta_rescale, i8, i32, "the beta RESCALE is not int8 -> int32"},
        expected{&s.sum_rescale, i32, i8, "the ADD output RESCALE is not int32 -> int8"}})
    if (auto r = check_rescale(*e.rescale, e.in, e.out, e.otherwise)) return r;
  if (s.mul_shift < 0 || s.mul_shift > 63)
    return rejection{reason::unsupported, "MUL shift outside 0..63"};
  const std::size_t channels = s.gamma.size();
  if (channels == 0 || s.beta.empty())  // missing data, never a default
    return rejection{reason::invalid_shape, "gamma or beta is empty"};
  if (s.beta.size() != channels)
    return rejection{reason::channel_mismatch, "gamma and beta have different lengths"};
  for (std::size_t c = 0; c < channels; ++c)
    if (!int8_domain.contains(s.gamma[c]) || !int8_domain.contains(s.beta[c]))
      return rejection{reason::out_of_range, "a gamma or beta code is not an int8", c};
  if (!int8_domain.contains(s.table_zero_point))
    return rejection{reason::qparams_mismatch, "the table's zero point is not an int8"};
  if (conv.input_zero_point != s.sum_rescale.attributes.output_zp)
    return rejection{reason::qparams_mismatch,
                     "the conv's input zero point differs from the ADD RESCALE's output_zp"};
  const auto& shape = conv.weight_shape;
  const bool depthwise = conv.layout == weight_layout::s_c_m;
  if (shape.size() < 2 ||
      (conv.layout != weight_layout::o_i_s && conv.layout != weight_layout::o_s_i && !depthwise))
    return rejection{reason::unsupported,
                     "conv weights are not (O, I, spatial...), (O, ..., I) or (..., C, M)"};
  if (conv.groups < 1) return rejection{reason::channel_mismatch, "the conv's groups are below 1"};
  if (conv.weight_type != dtype::int8 && conv.weight_type != dtype::uint8 &&
      conv.weight_type != dtype::int16 && conv.weight_type != dtype::uint16 &&
      conv.weight_type != dtype::int32)
    return rejection{reason::unsupported, "the conv's weight type is unknown"};
  std::size_t count = 0;
  if (auto r = detail::checked_element_count(shape, count, "conv weights with a dimension <= 0",
                                             "the conv weights' dimensions overflow"))
    return r;
  // From here every product of dims is at most count, and every index below count.
  if (conv.weights.size() != count)
    return rejection{reason::invalid_shape, "the conv weight shape does not match its data"};
  // s_c_m is depthwise by definition (one input channel per group): other groups are another
  // conv. Its C * M outputs are a product of two dims, so at most count.
  if (depthwise && conv.groups != shape[shape.size() - 2])
    return rejection{reason::channel_mismatch,
                     "depthwise (s_c_m) conv: groups differ from the weights' input channels"};
  const auto out_channels =
      static_cast<std::size_t>(depthwise ? shape[shape.size() - 2] * shape.back() : shape[0]);
  std::size_t per_group_in = 1;  // s_c_m
  if (conv.layout == weight_layout::o_i_s) per_group_in = static_cast<std::size_t>(shape[1]);
  if (conv.layout == weight_layout::o_s_i) per_group_in = static_cast<std::size_t>(shape.back());
  const auto groups = static_cast<std::size_t>(conv.groups);
  // channels / groups first: per_group_in * groups could wrap for a huge groups.
  if (channels % groups != 0 || channels / groups != per_group_in || out_channels % groups != 0)
    return rejection{reason::channel_mismatch,
                     "the conv's input channels differ from gamma's length (or its groups)"};
  if (!conv.bias.empty() && conv.bias.size() != out_channels)
    return rejection{reason::channel_mismatch, "the conv bias length differs from its outputs"};
  if (conv.weight_zero_points.size() != 1 && conv.weight_zero_points.size() != out_channels)
    return rejection{reason::channel_mismatch,
                     "weight zero points are neither per tensor nor per output channel"};

  // Every allocation is bounded by the inputs' own sizes (256 per channel, one per weight), but it
  // can still fail: that is a rejection, never an exception out of the fold.
  try {
    return detail::plan_dyt_affine(s, conv, channels, count, out_channels, per_group_in, groups,
                                   plan);
  } catch (const std::exception&) {  // std::bad_alloc or std::length_error, the only ones the
                                     // plan's vectors throw (caught by their base: no <stdexcept>)
    return rejection{reason::allocation_failure, "the fold's memory could not be allocated"};
  }
}

}  // namespace qfold
