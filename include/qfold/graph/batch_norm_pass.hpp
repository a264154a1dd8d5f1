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
  bool float64 = false;           // the fold's type: the weight's
};
// The folded values of one site (reused from site to site: `weights` only grows, so a site
// smaller than the largest so far writes into memory already there, never filled first), the
// neutral gamma / beta of a batch norm without them, and what the fold reads (views of the
// adapter's storage, valid until the site changes the graph).
template <class T>
struct batch_norm_fold {
  std::vector<T> weights, bias, ones, zeros, scales, piece;
  std::vector<std::int64_t> weight_shape;
  std::span<T> target;  // the site's folded weights: in `weights` or the adapter's room
  std::optional<weights_view<T>> w;
  std::span<const T> producer_bias;
  batch_norm_params<T> params;
  // The constants read for the fold (own copies where the adapter handed values over by value).
  std::optional<float_values<T>> weight, bias_in, mean, var, gamma, beta;
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
template <class T>
constexpr bool disjoint(std::span<const T> a, const void* b, std::size_t bytes) noexcept {
  if (std::is_constant_evaluated()) return true;  // constant evaluation has no adapter storage
  const auto x = reinterpret_cast<std::uintptr_t>(a.data()),
             y = reinterpret_cast<std::uintptr_t>(b);
  return x + a.size_bytes() <= y || y + bytes <= x;
}
template <class T>
constexpr bool disjoint(std::span<const T> a, std::span<const T> b) noexcept {
  return disjoint(a, b.data(), b.size_bytes());
}

// A producer's weights as the fold reads them (layout, groups and kind are the caller's to set):
// float32 weights in place through the adapter's unaligned_constant when it has one for them (a
// model file's bytes need no aligned copy), else constant(). The unaligned view's count is a
// number, not a span, so it is checked against its shape here.
template <class T, class G>
constexpr std::optional<weights_view<T>> weight_of(const G& g, node_id_t<G> n,
                                                   batch_norm_fold<T>& fold,
                                                   std::optional<rejection>& bad) {
  constexpr auto conv = weights_kind::conv;
  if constexpr (calls_unaligned_constant<G> && std::same_as<T, float>) {
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
  fold.weight = read_float_constant<T>(g, n, bad);
  if (!fold.weight) return std::nullopt;
  return weights_view<T>(fold.weight->data, fold.weight->shape, weight_layout::o_i_s, 1, conv);
}

// Reads the site's constants, in the weight's float type T, and, when `fold` is given (apply),
// what the fold reads into it; analysis passes none.
template <class T, class G>
constexpr std::optional<rejection> plan_batch_norm(const G& g, node_id_t<G> bn,
                                                   node_id_t<G> producer,
                                                   batch_norm_plan<node_id_t<G>>& plan,
                                                   batch_norm_fold<T>& out, bool apply) {
  using TR = ir_traits<G>;
  const auto roles = batch_norm_roles(g, bn);
  const auto pops = TR::operands(g, producer);
  if (!roles) return rejection{reason::unsupported, "batch norm without its four parameters"};
  const batch_norm_attributes attrs = TR::batch_norm_attributes(g, bn);
  if (attrs.training) return rejection{reason::training_mode, "batch norm in training mode"};
  if (TR::use_count(g, producer) != 1)
    return rejection{reason::shared_output, "the convolution's output has another consumer"};
  if (std::ranges::size(pops) < 2)
    return rejection{reason::unsupported, "producer without a weight operand"};
  auto pit = std::ranges::begin(pops);
  const auto weight_id = *++pit;
  std::optional<rejection> bad;
  const auto weight = weight_of<T>(g, weight_id, out, bad);
  if (bad) return bad;
  const auto read = [&](std::optional<float_values<T>>& to, const auto& id) {
    if (!bad) to = read_float_constant<T>(g, id, bad);
    return to.has_value();
  };
  const bool mean = read(out.mean, roles->mean);  // both read: each names what it lacks
  const bool stats = read(out.var, roles->variance) && mean;
  const bool gamma = !roles->gamma || read(out.gamma, *roles->gamma);
  const bool beta = !roles->beta || read(out.beta, *roles->beta);
  if (bad) return bad;
  if (!roles->gamma) out.gamma.reset();
  if (!roles->beta) out.beta.reset();
  if (!weight || !stats || !gamma || !beta)
    return rejection{reason::not_constant, "a weight or batch-norm parameter is not a constant"};
  plan.old_constants = {weight_id};
  if (roles->gamma) plan.old_constants.push_back(*roles->gamma);
  if (roles->beta) plan.old_constants.push_back(*roles->beta);
  plan.old_constants.push_back(roles->mean);
  plan.old_constants.push_back(roles->variance);
  out.bias_in.reset();
  if (std::ranges::size(pops) > 2) {
    const auto bias_id = *++pit;
    if (!read(out.bias_in, bias_id))
      return bad ? bad : rejection{reason::not_constant, "the convolution bias is not a constant"};
    plan.old_constants.push_back(bias_id);
  }
  conv_attributes conv{};
  if (TR::kind(g, producer) == op_kind::convolution) {
    conv = TR::conv_attributes(g, producer);
  } else if (const auto rank = output_rank_of(g, producer); rank != std::size_t{2}) {
    return rejection{reason::ambiguous_axis,
                     rank ? "linear output is not of rank 2 (batch, channels)"
                          : "a linear's output rank is unknown (the adapter has no output_rank)"};
  }
  if (!apply) return std::nullopt;
  // An absent gamma or beta is its neutral value, one per channel (the statistics say how many).
  const std::size_t channels = out.mean->data.size();
  if (!out.gamma) out.ones.assign(channels, T{1});
  if (!out.beta) out.zeros.assign(channels, T{0});
  out.params.mean = out.mean->data;
  out.params.variance = out.var->data;
  out.params.gamma = out.gamma ? out.gamma->data : std::span<const T>(out.ones);
  out.params.beta = out.beta ? out.beta->data : std::span<const T>(out.zeros);
  out.params.epsilon = static_cast<T>(attrs.epsilon);
  out.weight_shape.assign(weight->shape.begin(), weight->shape.end());
  out.w = *weight;
  out.w->layout = conv.layout;
  out.w->groups = conv.groups;
  out.w->kind =
      TR::kind(g, producer) == op_kind::linear ? weights_kind::linear : weights_kind::conv;
  out.producer_bias = out.bias_in ? out.bias_in->data : std::span<const T>{};
  return std::nullopt;
}

// The site read into `out`, folded into room(count) (the adapter's storage for the new constant,
// constant_storage: used only when it is what was asked for, the right size and apart from every
// value the fold reads, as an adapter is not trusted to get either right) or else out.weights.
template <class T, class Room>
constexpr std::optional<rejection> fold_stored(batch_norm_fold<T>& out, Room&& room) {
  const weights_view<T>& w = *out.w;
  const batch_norm_params<T>& p = out.params;
  // assign, not resize: libstdc++ 12's resize() of a float vector is not a constant expression
  // for clang (it fills memory whose lifetime has not begun).
  const std::size_t count = w.size();
  out.target = room(count);
  const auto apart = [&](std::span<const T> v) {
    return disjoint(std::span<const T>(out.target), v);
  };
  const void* weights =
      w.values.empty() ? static_cast<const void*>(w.unaligned.bytes) : w.values.data();
  if (out.target.size() != count ||
      !disjoint(std::span<const T>(out.target), weights, count * sizeof(T)) || !apart(p.mean) ||
      !apart(p.variance) || !apart(p.gamma) || !apart(p.beta) || !apart(out.producer_bias)) {
    if (out.weights.size() < count) out.weights.assign(count, T{0});
    out.target = std::span<T>(out.weights.data(), count);
  }
  out.bias.assign(p.mean.size(), T{0});
  return fold_batch_norm(w, out.producer_bias, p, out.target, std::span<T>(out.bias));
}

// The site read into `out`, for add_scaled_constant: its scales and folded bias, and every folded
// weight made once, piece by piece into a buffer that stays in the cache, to refuse the site
// exactly as fold_batch_norm would (a non-finite weight before a non-finite bias).
constexpr std::optional<rejection> fold_deferred(batch_norm_fold<float>& out) {
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

namespace detail {
// Room the adapter offers for the folded float32 weights (constant_storage), or none.
template <class V, class G>
constexpr std::span<V> folding_room(G& g, std::size_t count) {
  if constexpr (std::same_as<V, float> && has_constant_storage<G>)
    return ir_traits<G>::constant_storage(g, count);
  else
    return {};
}

// The folded weights and bias of a site in type V, added as new constants (float32 ones by
// add_scaled_constant or into the adapter's room where it has those points). A function, not a
// lambda in the pass: clang 14 instantiates discarded branches of a template lambda.
template <class G, class V, class Id>
constexpr std::optional<rejection> add_folded(transaction<G>& tx, batch_norm_fold<V>& fold,
                                              std::optional<Id>& w, std::optional<Id>& b) {
  if constexpr (!has_add_constant_of<G, V>) {
    return rejection{reason::unsupported_type,
                     std::same_as<V, double>
                         ? "a float64 site, and the adapter has no add_constant for float64"
                         : "a float32 site, and the adapter has no add_constant for float32"};
  } else {
    if constexpr (std::same_as<V, float> && has_add_scaled_constant<G>) {
      if (auto refused = fold_deferred(fold)) return refused;
      w = tx.add_scaled_constant(scaled_weights{*fold.w, std::span<const float>(fold.scales)});
    }
    if (!w) {
      const auto room = [&](std::size_t count) { return folding_room<V>(tx.graph(), count); };
      if (auto refused = fold_stored(fold, room)) return refused;
      w = tx.add_constant(std::span<const V>(fold.target),
                          std::span<const std::int64_t>(fold.weight_shape));
    }
    const std::int64_t channels = static_cast<std::int64_t>(fold.bias.size());
    b = tx.add_constant(std::span<const V>(fold.bias), std::span<const std::int64_t>(&channels, 1));
    return std::nullopt;
  }
}

template <class G>
constexpr report<node_id_t<G>> fold_batch_norms_of(G& g) {
  using TR = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::batch_norm_plan<id>;
  detail::batch_norm_fold<float> fold32;
  detail::batch_norm_fold<double> fold64;
  // The fold's type is the weight's (torch folds in the conv's dtype): float64 weights fold in
  // double, anything else is read as float32 (and refused, named, if it is not).
  const auto plan = [&](const G& cg, plan_t& p, bool apply) {
    const auto weight = detail::operand(cg, p.producer, 1);
    bool in_place = false;  // float32 bytes read in place: constant() is not asked (it may copy)
    if constexpr (detail::has_unaligned_constant<G>)
      in_place = weight && TR::unaligned_constant(cg, *weight).has_value();
    p.float64 = weight && !in_place && detail::is_float64_constant(cg, *weight).value_or(false);
    return p.float64 ? detail::plan_batch_norm(cg, p.batch_norm, p.producer, p, fold64, apply)
                     : detail::plan_batch_norm(cg, p.batch_norm, p.producer, p, fold32, apply);
  };
  const auto match = [&](const G& cg, id n) -> std::optional<site_candidate<id, plan_t>> {
    if (TR::kind(cg, n) != op_kind::batch_norm) return std::nullopt;
    const auto roles = detail::batch_norm_roles(cg, n);
    if (!roles)  // a malformed node: reported, never dereferenced
      return site_candidate<id, plan_t>{
          {n},
          rejection{reason::unsupported, "batch norm without its four parameters"},
          {n, n, {}}};
    const id producer = roles->input;
    site_candidate<id, plan_t> c{{producer, n}, std::nullopt, {n, producer, {}}};
    const op_kind pk = TR::kind(cg, producer);
    if (pk != op_kind::convolution && pk != op_kind::linear)
      c.rejected =
          rejection{reason::unsupported, "batch norm input is not a convolution or linear node"};
    else
      c.rejected = plan(cg, c.plan, false);
    return c;
  };
  const auto apply = [&](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    // The constants are read again (earlier sites only add constants and erase unused ones) and
    // folded; a refusal comes before any mutation, so the site stays untouched.
    if (auto refused = plan(std::as_const(g), p, true)) return refused;
    std::optional<id> w, b;
    if (auto refused =
            p.float64 ? detail::add_folded(tx, fold64, w, b) : detail::add_folded(tx, fold32, w, b))
      return refused;
    tx.set_operand(p.producer, 1, *w);
    tx.set_operand(p.producer, 2, *b);
    tx.replace_uses(p.batch_norm, p.producer);
    tx.erase_dead(p.batch_norm);
    for (const auto& c : p.old_constants) tx.erase_dead(c);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, batch_norm_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (detail::checked_pass).
template <class G>
constexpr report<node_id_t<G>> fold_batch_norms(G& g) {
  return detail::checked_pass<detail::batch_norm_points>(
      g, [](auto& h) { return detail::fold_batch_norms_of(h); });
}

}  // namespace qfold
