// The batch-norm folding pass over any adapted IR: analysis finds every batch_norm whose input is
// a convolution or linear node and reads its constants through the adapter; each accepted site is
// then folded (fold_batch_norm) and applied in a transaction (two_phase.hpp). The fold runs once,
// at apply, into the storage the adapter lends for the new constant (constant_storage) or else
// one buffer reused from site to site: it runs at memory speed, so a second pass over the
// weights during analysis would cost as much again, and holding every site's folded weights
// until the end as much fresh memory as the weights themselves. A site the fold refuses
// (shapes, a non-finite result) is refused before anything is mutated, so it is left as it was.
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
// smaller than the largest so far writes into memory already there, never filled first), and the
// neutral gamma / beta of a batch norm without them.
struct batch_norm_fold {
  std::vector<float> weights, bias, ones, zeros;
  std::vector<std::int64_t> weight_shape;
  std::span<float> target;  // the site's folded weights: in `weights` or the adapter's room
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

// Reads the site's constants and, when `fold` is given, folds them into it (apply); analysis
// passes none. `room(count)` gives where the folded weights go: the adapter's storage for the
// new constant (constant_storage), or an empty span for the fold's own buffer.
template <class G, class Room>
constexpr std::optional<rejection> plan_batch_norm(const G& g, node_id_t<G> bn,
                                                   node_id_t<G> producer,
                                                   batch_norm_plan<node_id_t<G>>& plan,
                                                   batch_norm_fold* fold, Room&& room) {
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
  const std::span<const float> gamma_data = gamma ? gamma->data : std::span<const float>(out.ones);
  const std::span<const float> beta_data = beta ? beta->data : std::span<const float>(out.zeros);
  // assign, not resize: libstdc++ 12's resize() of a float vector is not a constant expression
  // for clang (it fills memory whose lifetime has not begun).
  const std::size_t count = weight->size();
  // The adapter's room is used only when it is what was asked for: the right size, and apart
  // from every value the fold reads (an adapter is not trusted to get either right).
  out.target = room(count);
  const auto apart = [&](std::span<const float> v) { return disjoint(out.target, v); };
  const void* weights = weight->values.empty() ? static_cast<const void*>(weight->unaligned.bytes)
                                               : weight->values.data();
  if (out.target.size() != count || !disjoint(out.target, weights, count * sizeof(float)) ||
      !apart(mean->data) || !apart(var->data) || !apart(gamma_data) || !apart(beta_data) ||
      (bias && !apart(bias->data))) {
    if (out.weights.size() < count) out.weights.assign(count, 0.0f);
    out.target = std::span<float>(out.weights.data(), count);
  }
  out.weight_shape.assign(weight->shape.begin(), weight->shape.end());
  std::size_t channels = mean->data.size();
  out.bias.assign(channels, 0.0f);
  const weights_kind kind =
      T::kind(g, producer) == op_kind::linear ? weights_kind::linear : weights_kind::conv;
  weights_view<float> w = *weight;
  w.layout = conv.layout;
  w.groups = conv.groups;
  w.kind = kind;
  const batch_norm_params<float> params{
      mean->data, var->data, gamma_data, beta_data, static_cast<float>(attrs.epsilon), false};
  return fold_batch_norm(w, bias ? bias->data : std::span<const float>{}, params, out.target,
                         std::span<float>(out.bias));
}
}  // namespace detail

template <class G>
constexpr report<node_id_t<G>> fold_batch_norms(G& g) {
  static_assert(detail::check_batch_norm_foldable<G>());
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::batch_norm_plan<id>;
  detail::batch_norm_fold fold;
  const auto no_room = [](std::size_t) { return std::span<float>(); };
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
      c.rejected = detail::plan_batch_norm(cg, n, producer, c.plan, nullptr, no_room);
    return c;
  };
  const auto apply = [&](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    // The constants are read again (earlier sites only add constants and erase unused ones) and
    // folded; a refusal comes before any mutation, so the site stays untouched.
    const auto room = [&](std::size_t count) -> std::span<float> {
      if constexpr (requires { T::constant_storage(tx.graph(), count); })
        return T::constant_storage(tx.graph(), count);
      else
        return no_room(count);
    };
    if (auto refused =
            detail::plan_batch_norm(std::as_const(g), p.batch_norm, p.producer, p, &fold, room))
      return refused;
    const std::int64_t channels = static_cast<std::int64_t>(fold.bias.size());
    const id w = tx.add_constant(std::span<const float>(fold.target),
                                 std::span<const std::int64_t>(fold.weight_shape));
    const id b = tx.add_constant(std::span<const float>(fold.bias),
                                 std::span<const std::int64_t>(&channels, 1));
    tx.set_operand(p.producer, 1, w);
    tx.set_operand(p.producer, 2, b);
    tx.replace_uses(p.batch_norm, p.producer);
    tx.erase_dead(p.batch_norm);
    for (const id c : p.old_constants) tx.erase_dead(c);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, batch_norm_pass_name, match, apply);
}

}  // namespace qfold
