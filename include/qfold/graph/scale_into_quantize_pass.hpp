// The scale-into-quantize pass over any adapted IR. For each quantize fed by div/mul by a constant
// scalar: after annotation (the other operand is a dequantize) the dequantize -> op -> quantize
// sandwich is removed when it returns every code unchanged; otherwise (and before annotation) the
// constant folds into the quantize's scale. A quantize fed by a dequantize alone (a requantize)
// goes when it returns every code unchanged. Analysis first, then each accepted plan in a
// transaction.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/detail/ranges.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/fold/scale_into_quantize.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"
#include "qfold/quant/conventions.hpp"

namespace qfold {

inline constexpr std::string_view scale_into_quantize_pass_name = "fold_scale_into_quantize";

struct scale_into_quantize_options {
  quant_convention<float> convention = conventions::executorch;  // how the sandwich computes
  float_exactness exactness = float_exactness::bit_exact;        // before annotation
};

namespace detail {
template <class Id>
struct scale_plan {
  Id quantize, op, source;        // source: what the quantize reads afterwards
  std::optional<qparams> folded;  // folding into the scale: the quantize's new qparams
  std::optional<Id> dequantize;   // removing a sandwich: its dequantize (source: what it reads)
};

// The producer of dequantize d, when d -> [op by c] -> a quantize with qparams out gives back every
// code of d's input unchanged, else nullopt with the reason in r. (Other readers of d keep it.)
// The convention computes in float32: a float64 c that float32 does not hold is not proven.
template <class G, class Real>
[[nodiscard]] constexpr std::optional<node_id_t<G>> identity_sandwich(
    const G& g, node_id_t<G> d, scale_op op, Real c, const qparams& out,
    const scale_into_quantize_options& o, std::optional<rejection>& r) {
  using T = ir_traits<G>;
  const auto in = T::qparams(g, d);
  const auto producer = only_operand(g, d);
  const auto c32 = static_cast<float>(c);
  if (!in || !producer)
    r = rejection{reason::unsupported, "the dequantize is not per tensor"};
  else if (c == c && static_cast<Real>(c32) != c)
    r = rejection{reason::unsupported_type,
                  "a float64 constant that float32 does not hold (the sandwich computes in "
                  "float32)"};
  else
    r = prove_requantize_identity(op, c32, *in, out, o.convention);
  if (r) return std::nullopt;
  return producer;
}

template <class G>
[[nodiscard]] constexpr std::optional<rejection> plan_scale(const G& g,
                                                            const scale_into_quantize_options& o,
                                                            scale_plan<node_id_t<G>>& plan) {
  using T = ir_traits<G>;
  const op_kind k = T::kind(g, plan.op);
  if (std::ranges::size(T::operands(g, plan.op)) != 2)
    return rejection{reason::unsupported, "the div/mul does not have two operands"};
  const auto x = *operand(g, plan.op, 0), y = *operand(g, plan.op, 1);
  const auto cx = T::constant(g, x), cy = T::constant(g, y);  // read once, then used
  if (cx && cy) return rejection{reason::unsupported, "both operands are constants"};
  if (k == op_kind::div && cx)
    return rejection{reason::unsupported, "a constant dividend: c / x is not a scale of x"};
  if (!cx && !cy) return rejection{reason::not_constant, "a runtime divisor or factor"};
  plan.source = cx ? y : x;
  if (T::use_count(g, plan.op) != 1)
    return rejection{reason::shared_output, "the div/mul has more than one user"};
  const auto out = T::qparams(g, plan.quantize);
  if (!out) return rejection{reason::unsupported, "the quantize is not per tensor"};
  const scale_op op = k == op_kind::div ? scale_op::div : scale_op::mul;
  // The constant in its own type (float32 or float64, by value, borrowed or in a variant).
  return with_float_scalar(cx ? *cx : *cy, [&](auto c) -> std::optional<rejection> {
    if (T::kind(g, plan.source) == op_kind::dequantize) {  // after annotation: the sandwich
      std::optional<rejection> not_identity;
      if (const auto producer = identity_sandwich(g, plan.source, op, c, *out, o, not_identity)) {
        plan.dequantize = plan.source;
        plan.source = *producer;
        return std::nullopt;
      }  // not an identity: the constant may still fold into the quantize's scale
    }
    if (T::qparams_shared(g, plan.quantize))
      return rejection{reason::shared_qparams,
                       "the quantize's qparams are shared with other nodes"};
    qparams folded{};
    if (auto r = fold_scale_into_quantize(op, c, *out, o.exactness, folded)) return r;
    plan.folded = folded;
    return std::nullopt;
  });
}
}  // namespace detail

namespace detail {
template <class G>
constexpr report<node_id_t<G>> fold_scales_into_quantize_of(G& g, scale_into_quantize_options o) {
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::scale_plan<id>;
  const auto match = [&o](const G& cg, id q) -> std::optional<site_candidate<id, plan_t>> {
    if (T::kind(cg, q) != op_kind::quantize) return std::nullopt;
    const auto op = detail::only_operand(cg, q);
    if (!op) return std::nullopt;
    const op_kind k = T::kind(cg, *op);
    if (k != op_kind::div && k != op_kind::mul && k != op_kind::dequantize) return std::nullopt;
    site_candidate<id, plan_t> c{{*op, q}, std::nullopt, {q, *op, *op, std::nullopt, std::nullopt}};
    if (k != op_kind::dequantize) {
      c.rejected = detail::plan_scale(cg, o, c.plan);
    } else if (const auto out = T::qparams(cg, q); !out) {  // a requantize: dequantize -> quantize
      c.rejected = rejection{reason::unsupported, "the quantize is not per tensor"};
    } else if (const auto producer =
                   detail::identity_sandwich(cg, *op, scale_op::mul, 1.0f, *out, o, c.rejected)) {
      c.plan.dequantize = *op;
      c.plan.source = *producer;
    }
    return c;
  };
  const auto apply = [](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    if (p.dequantize) {  // an earlier site may have given the dequantize a source with the same
                         // codes
      const auto now = detail::only_operand(std::as_const(tx.graph()), *p.dequantize);
      if (!now) return rejection{reason::unsupported, "the dequantize lost its input"};
      p.source = *now;
    }
    if (p.folded) {
      tx.set_qparams(p.quantize, *p.folded);
      tx.set_operand(p.quantize, 0, p.source);
      tx.erase_dead(p.op);
    } else {  // the producer's codes go straight to the quantize's readers
      tx.replace_uses(p.quantize, p.source);
      tx.erase_dead(p.quantize);
    }
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, scale_into_quantize_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (graph/traits.hpp); nothing of the pass is
// instantiated then, so none follows from qfold's internals.
template <class G>
constexpr report<node_id_t<G>> fold_scales_into_quantize(G& g, scale_into_quantize_options o = {}) {
  static_assert(detail::check_pass<G, detail::scale_into_quantize_points>());
  if constexpr (quantize_foldable_graph<G>)
    return detail::fold_scales_into_quantize_of(g, o);
  else
    return {};
}

}  // namespace qfold
