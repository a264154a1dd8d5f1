// The batch-norm folding pass over any adapted IR: analysis finds every batch_norm whose input is
// a convolution or linear node and reads its constants through the adapter; each accepted site is
// then folded (fold_batch_norm) and applied in a transaction (two_phase.hpp). The fold runs once,
// at apply, into the storage the adapter lends for the new constant (constant_storage) or else
// one buffer reused from site to site: it runs at memory speed, so a second pass over the
// weights during analysis would cost as much again, and holding every site's folded weights
// until the end as much fresh memory as the weights themselves. An adapter with
// add_scaled_constant is given the fold itself instead (the weights and the per-channel scales),
// to make the values when it writes them: the pass then makes each value once into a small
// buffer, only to check it. A site the fold refuses (shapes, a non-finite result) is refused
// before anything is mutated, so it is left as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "qfold/detail/ranges.hpp"
#include "qfold/fold/batch_norm.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"
#include "qfold/graph/vocabulary.hpp"

namespace qfold {

inline constexpr std::string_view batch_norm_pass_name = "fold_batch_norm";

namespace detail {
template <class Id>
struct batch_norm_plan {
  Id batch_norm, producer;
  std::vector<Id> old_constants;  // may be left without users
};
// The folded values of one site (reused from site to site: `weights` only grows, so a site
// smaller than the largest so far writes into memory already there, never filled first), the
// neutral gamma / beta of a batch norm without them, and what the fold reads (views of the
// adapter's storage, valid until the site changes the graph).
struct batch_norm_fold {
  std::vector<float> weights, bias, ones, zeros, scales, piece;
  std::vector<std::int64_t> weight_shape;
  std::span<float> target;  // the site's folded weights: in `weights` or the adapter's room
  std::optional<weights_view<float>> w;
  std::span<const float> producer_bias;
  batch_norm_params<float> params;
};

// A batch norm's operands by role: batch_norm_operands(g, n) if the adapter has that point, else
// operands(g, n) in ONNX order; nullopt when they are not five.
template <class G>
[[nodiscard]] constexpr std::optional<batch_norm_operands<node_id_t<G>>> batch_norm_roles(
    const G& g, node_id_t<G> bn) {
  if constexpr (calls_batch_norm_operands<G>) {
    return ir_traits<G>::batch_norm_operands(g, bn);
  } else {
    const auto ops = ir_traits<G>::operands(g, bn);
    if (std::ranges::size(ops) != 5) return std::nullopt;
    auto it = std::ranges::begin(ops);
    const auto input = *it, gamma = *++it, beta = *++it, mean = *++it, var = *++it;
    return batch_norm_operands<node_id_t<G>>{input, gamma, beta, mean, var};
  }
}

// Whether a and the `bytes` bytes at b share no byte (addresses compared as integers: they may
// come from unrelated objects).
constexpr bool disjoint(std::span<const float> a, const void* b, std::size_t bytes) noexcept {
  if (std::is_constant_evaluated()) return true;  // constant evaluation has no adapter storage
  const auto x = reinterpret_cast<std::uintptr_t>(a.data()),
             y = reinterpret_cast<std::uintptr_t>(b);
  return x + a.size_bytes() <= y || y + bytes <= x;
}
constexpr bool disjoint(std::span<const float> a, std::span<const float> b) noexcept {
  return disjoint(a, b.data(), b.size_bytes());
}

// A producer's weights as the fold reads them (layout, groups and kind are the caller's to set):
// in place through the adapter's unaligned_constant when it has one for them (a model file's
// bytes need no aligned copy), else constant(). The unaligned view's count is a number, not a
// span, so it is checked against its shape here.
template <class G>
constexpr std::optional<weights_view<float>> weight_of(const G& g, node_id_t<G> n,
                                                       std::optional<rejection>& bad) {
  constexpr auto conv = weights_kind::conv;
  if constexpr (calls_unaligned_constant<G>) {
    if (const auto u = ir_traits<G>::unaligned_constant(g, n)) {
      std::size_t count = 0;
      if (checked_element_count(u->shape, count, "", "") || count != u->data.size ||
          count > SIZE_MAX / sizeof(float) || u->data.bytes == nullptr) {
        bad = rejection{reason::invalid_shape,
                        "the weight's unaligned view disagrees with its shape"};
        return std::nullopt;
      }
      return weights_view<float>(u->data, u->shape, weight_layout::o_i_s, 1, conv);
    }
  }
  if (const auto c = ir_traits<G>::constant(g, n))
    return weights_view<float>(c->data, c->shape, weight_layout::o_i_s, 1, conv);
  return std::nullopt;
}

// Reads the site's constants and, when `fold` is given (apply), what the fold reads into it;
// analysis passes none.
template <class G>
constexpr std::optional<rejection> plan_batch_norm(const G& g, node_id_t<G> bn,
                                                   node_id_t<G> producer,
                                                   batch_norm_plan<node_id_t<G>>& plan,
                                                   batch_norm_fold* fold) {
  using T = ir_traits<G>;
  const auto roles = batch_norm_roles(g, bn);
  const auto pops = T::operands(g, producer);
  if (!roles) return rejection{reason::unsupported, "batch norm without its four parameters"};
  const batch_norm_attributes attrs = T::batch_norm_attributes(g, bn);
  if (attrs.training) return rejection{reason::training_mode, "batch norm in training mode"};
  if (T::use_count(g, producer) != 1)
    return rejection{reason::shared_output, "the convolution's output has another consumer"};
  if (std::ranges::size(pops) < 2)
    return rejection{reason::unsupported, "producer without a weight operand"};
  auto pit = std::ranges::begin(pops);
  const auto weight_id = *++pit;
  std::optional<rejection> bad_weight;
  const auto weight = weight_of(g, weight_id, bad_weight);
  if (bad_weight) return bad_weight;
  const auto mean = T::constant(g, roles->mean), var = T::constant(g, roles->variance);
  const auto gamma = roles->gamma ? T::constant(g, *roles->gamma) : std::nullopt;
  const auto beta = roles->beta ? T::constant(g, *roles->beta) : std::nullopt;
  if (!weight || !mean || !var || (roles->gamma && !gamma) || (roles->beta && !beta))
    return rejection{reason::not_constant, "a weight or batch-norm parameter is not a constant"};
  plan.old_constants = {weight_id};
  if (roles->gamma) plan.old_constants.push_back(*roles->gamma);
  if (roles->beta) plan.old_constants.push_back(*roles->beta);
  plan.old_constants.push_back(roles->mean);
  plan.old_constants.push_back(roles->variance);
  std::optional<tensor_view<float>> bias;
  if (std::ranges::size(pops) > 2) {
    const auto bias_id = *++pit;
    bias = T::constant(g, bias_id);
    if (!bias) return rejection{reason::not_constant, "the convolution bias is not a constant"};
    plan.old_constants.push_back(bias_id);
  }
  conv_attributes conv{};
  if (T::kind(g, producer) == op_kind::convolution) {
    conv = T::conv_attributes(g, producer);
  } else if (T::output_rank(g, producer) != 2) {
    return rejection{reason::ambiguous_axis, "linear output is not of rank 2 (batch, channels)"};
  }
  if (fold == nullptr) return std::nullopt;
  batch_norm_fold& out = *fold;
  // An absent gamma or beta is its neutral value, one per channel (the statistics say how many).
  if (!gamma) out.ones.assign(mean->data.size(), 1.0f);
  if (!beta) out.zeros.assign(mean->data.size(), 0.0f);
  out.params.mean = mean->data;
  out.params.variance = var->data;
  out.params.gamma = gamma ? gamma->data : std::span<const float>(out.ones);
  out.params.beta = beta ? beta->data : std::span<const float>(out.zeros);
  out.params.epsilon = static_cast<float>(attrs.epsilon);
  out.weight_shape.assign(weight->shape.begin(), weight->shape.end());
  out.w = *weight;
  out.w->layout = conv.layout;
  out.w->groups = conv.groups;
  out.w->kind = T::kind(g, producer) == op_kind::linear ? weights_kind::linear : weights_kind::conv;
  out.producer_bias = bias ? bias->data : std::span<const float>{};
  return std::nullopt;
}

// The site read into `out`, folded into room(count) (the adapter's storage for the new constant,
// constant_storage: used only when it is what was asked for, the right size and apart from every
// value the fold reads, as an adapter is not trusted to get either right) or else out.weights.
template <class Room>
constexpr std::optional<rejection> fold_stored(batch_norm_fold& out, Room&& room) {
  const weights_view<float>& w = *out.w;
  const batch_norm_params<float>& p = out.params;
  // assign, not resize: libstdc++ 12's resize() of a float vector is not a constant expression
  // for clang (it fills memory whose lifetime has not begun).
  const std::size_t count = w.size();
  out.target = room(count);
  const auto apart = [&](std::span<const float> v) { return disjoint(out.target, v); };
  const void* weights =
      w.values.empty() ? static_cast<const void*>(w.unaligned.bytes) : w.values.data();
  if (out.target.size() != count || !disjoint(out.target, weights, count * sizeof(float)) ||
      !apart(p.mean) || !apart(p.variance) || !apart(p.gamma) || !apart(p.beta) ||
      !apart(out.producer_bias)) {
    if (out.weights.size() < count) out.weights.assign(count, 0.0f);
    out.target = std::span<float>(out.weights.data(), count);
  }
  out.bias.assign(p.mean.size(), 0.0f);
  return fold_batch_norm(w, out.producer_bias, p, out.target, std::span<float>(out.bias));
}

// The site read into `out`, for add_scaled_constant: its scales and folded bias, and every folded
// weight made once, piece by piece into a buffer that stays in the cache, to refuse the site
// exactly as fold_batch_norm would (a non-finite weight before a non-finite bias).
constexpr std::optional<rejection> fold_deferred(batch_norm_fold& out) {
  const weights_view<float>& w = *out.w;
  const std::size_t channels = out.params.mean.size();
  out.scales.assign(channels, 0.0f);
  out.bias.assign(channels, 0.0f);
  const auto scales = fold_batch_norm_scales(
      w, out.producer_bias, out.params, std::span<float>(out.scales), std::span<float>(out.bias));
  if (scales && scales->code != reason::non_finite) return scales;
  constexpr std::size_t piece = std::size_t{1} << 14;  // 64 KiB of floats
  if (out.piece.size() < piece) out.piece.assign(piece, 0.0f);
  for (std::size_t first = 0; first < w.size(); first += piece) {
    const std::size_t n = w.size() - first < piece ? w.size() - first : piece;
    if (auto r = fold_batch_norm_weights(w, std::span<const float>(out.scales), first,
                                         std::span<float>(out.piece.data(), n)))
      return r;
  }
  return scales;
}
}  // namespace detail

template <class G>
constexpr report<node_id_t<G>> fold_batch_norms(G& g) {
  static_assert(detail::check_batch_norm_foldable<G>());
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::batch_norm_plan<id>;
  detail::batch_norm_fold fold;
  const auto match = [&](const G& cg, id n) -> std::optional<site_candidate<id, plan_t>> {
    if (T::kind(cg, n) != op_kind::batch_norm) return std::nullopt;
    const auto roles = detail::batch_norm_roles(cg, n);
    if (!roles)  // a malformed node: reported, never dereferenced
      return site_candidate<id, plan_t>{
          {n},
          rejection{reason::unsupported, "batch norm without its four parameters"},
          {n, n, {}}};
    const id producer = roles->input;
    site_candidate<id, plan_t> c{{producer, n}, std::nullopt, {n, producer, {}}};
    const op_kind pk = T::kind(cg, producer);
    if (pk != op_kind::convolution && pk != op_kind::linear)
      c.rejected =
          rejection{reason::unsupported, "batch norm input is not a convolution or linear node"};
    else
      c.rejected = detail::plan_batch_norm(cg, n, producer, c.plan, nullptr);
    return c;
  };
  const auto apply = [&](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    // The constants are read again (earlier sites only add constants and erase unused ones) and
    // folded; a refusal comes before any mutation, so the site stays untouched.
    if (auto refused =
            detail::plan_batch_norm(std::as_const(g), p.batch_norm, p.producer, p, &fold))
      return refused;
    std::optional<id> w;
    if constexpr (detail::has_add_scaled_constant<G>) {
      if (auto refused = detail::fold_deferred(fold)) return refused;
      w = tx.add_scaled_constant(scaled_weights{*fold.w, std::span<const float>(fold.scales)});
    }
    if (!w) {
      const auto room = [&](std::size_t count) -> std::span<float> {
        if constexpr (requires { T::constant_storage(tx.graph(), count); })
          return T::constant_storage(tx.graph(), count);
        else
          return std::span<float>();
      };
      if (auto refused = detail::fold_stored(fold, room)) return refused;
      w = tx.add_constant(std::span<const float>(fold.target),
                          std::span<const std::int64_t>(fold.weight_shape));
    }
    const std::int64_t channels = static_cast<std::int64_t>(fold.bias.size());
    const id b = tx.add_constant(std::span<const float>(fold.bias),
                                 std::span<const std::int64_t>(&channels, 1));
    tx.set_operand(p.producer, 1, *w);
    tx.set_operand(p.producer, 2, b);
    tx.replace_uses(p.batch_norm, p.producer);
    tx.erase_dead(p.batch_norm);
    for (const id c : p.old_constants) tx.erase_dead(c);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, batch_norm_pass_name, match, apply);
}

}  // namespace qfold
