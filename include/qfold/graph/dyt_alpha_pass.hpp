// The DyT alpha pass over any adapted IR: each int8 TABLE fed by RESCALE_i8(MUL(RESCALE_i32(act),
// RESCALE_i32(alpha))) with a constant scalar alpha becomes one TABLE indexed by the activation
// code (fold_dyt_alpha). Analysis first, then each accepted plan in a transaction (two_phase.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/exact/domain.hpp"
#include "qfold/fold/dyt_alpha.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/read.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"

namespace qfold {

inline constexpr std::string_view dyt_alpha_pass_name = "fold_dyt_alpha";

namespace detail {
template <class Id>
struct dyt_alpha_plan {
  Id activation, table;
  std::array<std::int8_t, 256> values{};
};

// The activation's codes, or the full int8 range when the IR does not annotate them.
template <class G>
[[nodiscard]] constexpr domain codes_of(const G& g, node_id_t<G> n) {
  const auto q = qparams_of(g, n);
  return q ? domain{q->qmin, q->qmax} : int8_domain;
}

template <class G>
[[nodiscard]] constexpr std::optional<rejection> plan_dyt_alpha(
    const G& g, node_id_t<G> out_rescale, node_id_t<G> mul, node_id_t<G> table,
    dyt_alpha_plan<node_id_t<G>>& plan) {
  using T = ir_traits<G>;
  if (T::use_count(g, out_rescale) != 1 || T::use_count(g, mul) != 1)
    return rejection{reason::shared_output, "the MUL or its RESCALE has more than one user"};
  constant_and_activation<G> sides{};
  if (auto r = split_rescaled(
          g, mul, {"alpha is not a constant", "a layout view on the activation side"}, sides))
    return r;
  const auto& alpha_side = sides.constant;
  const auto& act_side = sides.activation;
  const auto alpha = read_int_constant(g, alpha_side.source.source);
  if (!alpha)  // split_rescaled saw a constant: an adapter whose answers change is not trusted
    return rejection{reason::not_constant, "alpha is not a constant"};
  if (alpha->data.size() != 1) return rejection{reason::not_scalar, "alpha is not a scalar"};
  const auto tanh_table = read_table8(g, table);
  if (!tanh_table)
    return rejection{reason::invalid_shape, "the TABLE does not have 256 int8 entries"};

  const auto shift = mul_shift_of(g, mul);
  if (!shift) return rejection{reason::unsupported, "the MUL's shift does not fit an int"};

  const node_id_t<G> act_rescale = act_side.rescale;
  const node_id_t<G> alpha_rescale = alpha_side.rescale;
  plan.activation = act_side.source.source;
  rescale_values act_r, alpha_r, out_r;
  read_rescale(g, act_rescale, act_r);
  read_rescale(g, alpha_rescale, alpha_r);
  read_rescale(g, out_rescale, out_r);
  const dyt_alpha_site site{
      codes_of(g, plan.activation), act_r,      alpha_r, alpha->data[0], *shift, out_r,
      codes_of(g, out_rescale),     *tanh_table};
  const auto act_q = qparams_of(g, plan.activation);
  const auto tanh_q = qparams_of(g, out_rescale);
  if (act_q && tanh_q) {
    if (auto r = dyt_alpha_qparams_line_up(*act_q, site.activation_rescale, *tanh_q,
                                           site.output_rescale))
      return r;
  }
  if (const auto alpha_q = qparams_of(g, alpha_side.source.source);
      alpha_q && alpha_q->zero_point != site.alpha_rescale.attributes.input_zp)
    return rejection{reason::qparams_mismatch,
                     "alpha's zero point differs from its RESCALE's input_zp"};
  return fold_dyt_alpha(site, plan.values);
}
}  // namespace detail

namespace detail {
template <class G>
constexpr report<node_id_t<G>> fold_dyt_alphas_of(G& g) {
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::dyt_alpha_plan<id>;
  const auto match = [](const G& cg, id table) -> std::optional<site_candidate<id, plan_t>> {
    if (T::kind(cg, table) != op_kind::table) return std::nullopt;
    // A site: TABLE <- RESCALE <- MUL. Anything else is not this pattern and not reported.
    const auto out_rescale = detail::table_input(cg, table);
    if (!out_rescale || T::kind(cg, *out_rescale) != op_kind::rescale) return std::nullopt;
    const auto mul = detail::only_operand(cg, *out_rescale);
    if (!mul || T::kind(cg, *mul) != op_kind::mul) return std::nullopt;
    site_candidate<id, plan_t> c{{*mul, *out_rescale, table}, std::nullopt, {table, table, {}}};
    c.rejected = detail::plan_dyt_alpha(cg, *out_rescale, *mul, table, c.plan);
    return c;
  };
  const auto apply = [](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    const id folded = tx.add_table(p.activation, std::span<const std::int8_t>(p.values));
    if constexpr (detail::has_set_qparams<G>) {
      if (const auto q = detail::qparams_of(std::as_const(tx.graph()), p.table))
        tx.set_qparams(folded, *q);
    }
    tx.replace_uses(p.table, folded);
    tx.erase_dead(p.table);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, dyt_alpha_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (detail::checked_pass).
template <class G>
constexpr report<node_id_t<G>> fold_dyt_alphas(G& g) {
  return detail::checked_pass<detail::dyt_alpha_points>(
      g, [](auto& h) { return detail::fold_dyt_alphas_of(h); });
}

}  // namespace qfold
