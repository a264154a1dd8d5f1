// The batch-norm folding pass over any adapted IR: for every batch_norm whose input is a
// convolution or linear node, analysis reads the constants through the adapter and computes the
// folded weights with fold_batch_norm (no graph access); only then are the accepted plans
// applied, each in a transaction (two_phase.hpp). A rejected or failed site is left as it was.
// Apply computes each site's weights again into one reused buffer rather than keeping every
// site's: the fold runs at memory speed, while holding a whole model's folded weights until the
// end would cost as much fresh memory as the weights themselves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <vector>

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
// The folded values of one site (reused from site to site).
struct batch_norm_fold {
  std::vector<float> weights, bias;
  std::vector<std::int64_t> weight_shape;
};

template <class G>
constexpr std::optional<rejection> plan_batch_norm(const G& g, node_id_t<G> bn,
                                                   node_id_t<G> producer,
                                                   batch_norm_plan<node_id_t<G>>& plan,
                                                   batch_norm_fold& out) {
  using T = ir_traits<G>;
  const auto ops = T::operands(g, bn);
  const auto pops = T::operands(g, producer);
  if (std::ranges::size(ops) != 5)
    return rejection{reason::unsupported, "batch norm without its four parameters"};
  const batch_norm_attributes attrs = T::batch_norm_attributes(g, bn);
  if (attrs.training) return rejection{reason::training_mode, "batch norm in training mode"};
  if (T::use_count(g, producer) != 1)
    return rejection{reason::shared_output, "the convolution's output has another consumer"};
  if (std::ranges::size(pops) < 2)
    return rejection{reason::unsupported, "producer without a weight operand"};
  auto it = std::ranges::begin(ops);
  const auto gamma_id = *++it, beta_id = *++it, mean_id = *++it, var_id = *++it;
  auto pit = std::ranges::begin(pops);
  const auto weight_id = *++pit;
  const auto weight = T::constant(g, weight_id);
  const auto gamma = T::constant(g, gamma_id), beta = T::constant(g, beta_id);
  const auto mean = T::constant(g, mean_id), var = T::constant(g, var_id);
  if (!weight || !gamma || !beta || !mean || !var)
    return rejection{reason::not_constant, "a weight or batch-norm parameter is not a constant"};
  std::optional<tensor_view<float>> bias;
  plan.old_constants = {weight_id, gamma_id, beta_id, mean_id, var_id};
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
  // assign, not resize: libstdc++ 12's resize() of a float vector is not a constant expression
  // for clang (it fills memory whose lifetime has not begun).
  out.weights.assign(weight->data.size(), 0.0f);
  out.weight_shape.assign(weight->shape.begin(), weight->shape.end());
  std::size_t channels = mean->data.size();
  out.bias.assign(channels, 0.0f);
  const weights_kind kind =
      T::kind(g, producer) == op_kind::linear ? weights_kind::linear : weights_kind::conv;
  const weights_view<float> w{weight->data, weight->shape, conv.layout, conv.groups, kind};
  const batch_norm_params<float> params{
      mean->data, var->data, gamma->data, beta->data, static_cast<float>(attrs.epsilon), false};
  return fold_batch_norm(w, bias ? bias->data : std::span<const float>{}, params,
                         std::span<float>(out.weights), std::span<float>(out.bias));
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
    const auto ops = T::operands(cg, n);
    if (std::ranges::empty(ops))  // a malformed node: reported, never dereferenced
      return site_candidate<id, plan_t>{
          {n}, rejection{reason::unsupported, "batch norm without an input"}, {n, n, {}}};
    const id producer = *std::ranges::begin(ops);
    site_candidate<id, plan_t> c{{producer, n}, std::nullopt, {n, producer, {}}};
    const op_kind pk = T::kind(cg, producer);
    if (pk != op_kind::convolution && pk != op_kind::linear)
      c.rejected =
          rejection{reason::unsupported, "batch norm input is not a convolution or linear node"};
    else
      c.rejected = detail::plan_batch_norm(cg, n, producer, c.plan, fold);
    return c;
  };
  const auto apply = [&](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    // The same fold on the same constants (earlier sites only add constants and erase unused
    // ones), so it gives the same values; were it ever to refuse now, the site stays untouched.
    if (auto again = detail::plan_batch_norm(std::as_const(g), p.batch_norm, p.producer, p, fold))
      return again;
    const std::int64_t channels = static_cast<std::int64_t>(fold.bias.size());
    const id w = tx.add_constant(std::span<const float>(fold.weights),
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
