// The DyT affine pass over any adapted IR: TABLE -> (RESCALE * RESCALE(gamma)) -> RESCALE ->
// (RESCALE + RESCALE(beta)) -> RESCALE -> layout views -> integer convolution. The per-channel
// affine folds into the convolution (fold_dyt_affine) or, where it is an identity, is bypassed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/detail/ranges.hpp"
#include "qfold/fold/dyt_affine.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/read.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"

namespace qfold {

inline constexpr std::string_view dyt_affine_pass_name = "fold_dyt_affine";

namespace detail {
template <class Id>
struct dyt_affine_graph_plan {
  Id conv, reader, table, sum_rescale, scaled_rescale, product_rescale;
  std::vector<Id> views;
  dyt_affine_plan fold;
  std::vector<std::int64_t> weight_shape;
};

// The axis along which a per-channel constant of `shape` broadcasts in an output of rank `rank`
// (shapes right-aligned): its only dimension of size `channels`, all others 1.
[[nodiscard]] constexpr std::optional<std::int64_t> broadcast_axis(
    std::span<const std::int64_t> shape, std::size_t rank, std::size_t channels) {
  std::optional<std::int64_t> axis;
  if (shape.size() > rank) return std::nullopt;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && channels != 1) continue;
    if (static_cast<std::size_t>(shape[i]) != channels || axis) return std::nullopt;
    axis = static_cast<std::int64_t>(rank - shape.size() + i);
  }
  return axis;
}

template <class G>
[[nodiscard]] constexpr std::vector<std::int64_t> shape_of(const G& g, node_id_t<G> n) {
  const auto s = ir_traits<G>::output_shape(g, n);
  return {std::ranges::begin(s), std::ranges::end(s)};
}

template <class G>
[[nodiscard]] constexpr std::optional<rejection> plan_dyt_affine(
    const G& g, node_id_t<G> add, dyt_affine_graph_plan<node_id_t<G>>& plan) {
  using T = ir_traits<G>;
  for (const auto& v : plan.views)
    if (T::use_count(g, v) != 1)
      return rejection{reason::shared_output, "a view before the conv has more than one user"};
  if (T::use_count(g, plan.sum_rescale) != 1 || T::use_count(g, add) != 1)
    return rejection{reason::shared_output, "the ADD or its RESCALE has more than one user"};
  constant_and_activation<G> add_sides{};
  if (auto r = split_rescaled(
          g, add, {"beta is not a constant", "a layout view on the activation side of the ADD"},
          add_sides))
    return r;
  const auto& beta_side = add_sides.constant;
  const auto& scaled_side = add_sides.activation;
  plan.scaled_rescale = scaled_side.rescale;
  plan.product_rescale = scaled_side.source.source;
  if (T::kind(g, plan.product_rescale) != op_kind::rescale)
    return rejection{reason::unsupported, "the ADD's activation is not a rescaled MUL"};
  const auto mul = only_operand(g, plan.product_rescale);
  if (!mul || T::kind(g, *mul) != op_kind::mul)
    return rejection{reason::unsupported, "the ADD's activation is not a rescaled MUL"};
  if (T::use_count(g, plan.scaled_rescale) != 1 || T::use_count(g, plan.product_rescale) != 1 ||
      T::use_count(g, *mul) != 1)
    return rejection{reason::shared_output, "a node of the gamma side has more than one user"};
  constant_and_activation<G> mul_sides{};
  if (auto r = split_rescaled(
          g, *mul, {"gamma is not a constant", "a layout view between the TABLE and the MUL"},
          mul_sides))
    return r;
  const auto& gamma_side = mul_sides.constant;
  const auto& table_side = mul_sides.activation;
  plan.table = table_side.source.source;
  if (T::kind(g, plan.table) != op_kind::table)
    return rejection{reason::unsupported, "the MUL's activation is not a TABLE"};

  const auto gamma = read_int_constant(g, gamma_side.source.source);
  const auto beta = read_int_constant(g, beta_side.source.source);
  if (!gamma || !beta)  // the adapter said otherwise a moment ago: not trusted either way
    return rejection{reason::not_constant, "gamma or beta is not an integer constant"};
  // Gamma and beta broadcast along one axis, which the views carry to the conv's channel axis.
  const std::size_t channels = gamma->data.size();
  const auto add_shape = shape_of(g, add);
  const auto beta_axis = broadcast_axis(shape_of(g, beta_side.rescale), add_shape.size(), channels);
  const auto gamma_axis =
      broadcast_axis(shape_of(g, gamma_side.rescale), shape_of(g, *mul).size(), channels);
  if (beta->data.size() != channels || !beta_axis || gamma_axis != beta_axis ||
      add_shape[static_cast<std::size_t>(*beta_axis)] != static_cast<std::int64_t>(channels))
    return rejection{reason::channel_mismatch,
                     "gamma and beta are not per-channel along one axis of the activation"};
  std::optional<std::int64_t> axis = beta_axis;
  for (auto v = plan.views.rbegin(); v != plan.views.rend() && axis; ++v)
    axis = view_axis_of(g, *v, *axis);
  const conv_attributes attrs = T::conv_attributes(g, plan.conv);
  if (axis != attrs.input_channel_axis)
    return rejection{reason::channel_mismatch,
                     "the views do not carry the channel axis to the conv's channel axis"};
  if (attrs.transposed) return rejection{reason::unsupported, "a transposed convolution"};
  const auto qconv = T::quantized_conv(g, plan.conv);
  const auto weight_id = operand(g, plan.conv, 1);
  const auto weights = weight_id ? read_int_constant(g, *weight_id) : std::nullopt;
  const auto bias_id = operand(g, plan.conv, 2);
  const auto bias = bias_id ? read_int_constant(g, *bias_id) : std::nullopt;
  if (!qconv || !weights || (bias_id && !bias))
    return rejection{reason::not_constant, "the conv's weights or bias are not integer constants"};

  const auto shift = mul_shift_of(g, *mul);
  if (!shift) return rejection{reason::unsupported, "the MUL's shift does not fit an int"};
  const auto table_values = read_table8(g, plan.table);
  if (!table_values)
    return rejection{reason::invalid_shape, "the TABLE does not have 256 int8 entries"};
  rescale_values table_r, gamma_r, product_r, scaled_r, beta_r, sum_r;
  read_rescale(g, table_side.rescale, table_r);
  read_rescale(g, gamma_side.rescale, gamma_r);
  read_rescale(g, plan.product_rescale, product_r);
  read_rescale(g, plan.scaled_rescale, scaled_r);
  read_rescale(g, beta_side.rescale, beta_r);
  read_rescale(g, plan.sum_rescale, sum_r);
  const auto table_q = qparams_of(g, plan.table);
  const dyt_affine_site site{
      *table_values, table_q ? std::int64_t{table_q->zero_point} : table_r.attributes.input_zp,
      table_r,       gamma_r,
      gamma->data,   *shift,
      product_r,     scaled_r,
      beta_r,        beta->data,
      sum_r};
  const dyt_affine_conv conv{weights->data,
                             weights->shape,
                             attrs.layout,
                             attrs.groups,
                             qconv->weight_zero_points,
                             qconv->weight_type,
                             bias ? bias->data : std::span<const std::int64_t>{},
                             qconv->input_zero_point,
                             attrs.padded};
  plan.weight_shape.assign(weights->shape.begin(), weights->shape.end());
  return fold_dyt_affine(site, conv, plan.fold);
}
}  // namespace detail

namespace detail {
template <class G>
constexpr report<node_id_t<G>> fold_dyt_affines_of(G& g) {
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::dyt_affine_graph_plan<id>;
  const auto match = [](const G& cg, id conv) -> std::optional<site_candidate<id, plan_t>> {
    if (T::kind(cg, conv) != op_kind::convolution) return std::nullopt;
    // A site: conv <- views <- RESCALE <- ADD. Anything else is not this pattern.
    const auto input = detail::operand(cg, conv, 0);
    if (!input) return std::nullopt;
    const auto chain = detail::skip_views(cg, *input);
    if (T::kind(cg, chain.source) != op_kind::rescale) return std::nullopt;
    const auto add = detail::only_operand(cg, chain.source);
    if (!add || T::kind(cg, *add) != op_kind::add) return std::nullopt;
    site_candidate<id, plan_t> c{{*add, chain.source, conv},
                                 std::nullopt,
                                 {conv,
                                  chain.views.empty() ? conv : chain.views.back(),
                                  conv,
                                  chain.source,
                                  conv,
                                  conv,
                                  chain.views,
                                  {},
                                  {}}};
    c.rejected = detail::plan_dyt_affine(cg, *add, c.plan);
    return c;
  };
  const auto apply = [](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    const G& cg = tx.graph();
    if (p.fold.action == dyt_affine_action::bypass_gamma) {
      tx.set_operand(p.scaled_rescale, 0, p.table);
      tx.erase_dead(p.product_rescale);
      return std::nullopt;
    }
    tx.set_operand(p.reader, 0, p.table);
    if (p.fold.action == dyt_affine_action::fold) {
      const std::int64_t outs = static_cast<std::int64_t>(p.fold.bias.size());
      const auto old_weights = detail::operand(cg, p.conv, 1);
      const auto old_bias = detail::operand(cg, p.conv, 2);
      const auto qconv = T::quantized_conv(cg, p.conv);
      if (!old_weights || !qconv)
        return rejection{reason::unsupported, "the conv changed since analysis"};
      const id w =
          tx.add_int_constant(std::span<const std::int64_t>(p.fold.weights),
                              std::span<const std::int64_t>(p.weight_shape), qconv->weight_type);
      const id b = tx.add_int_constant(std::span<const std::int64_t>(p.fold.bias),
                                       std::span<const std::int64_t>(&outs, 1), dtype::int32);
      tx.set_operand(p.conv, 1, w);
      tx.set_operand(p.conv, 2, b);
      tx.set_conv_input_zero_point(p.conv, p.fold.input_zero_point);
      tx.erase_dead(*old_weights);
      if (old_bias) tx.erase_dead(*old_bias);
    }
    tx.erase_dead(p.sum_rescale);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, dyt_affine_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (detail::checked_pass).
template <class G>
constexpr report<node_id_t<G>> fold_dyt_affines(G& g) {
  return detail::checked_pass<detail::dyt_affine_points>(
      g, [](auto& h) { return detail::fold_dyt_affines_of(h); });
}

}  // namespace qfold
