// The table-composing pass over any adapted IR: an int8 TABLE read only by another int8 TABLE
// becomes one TABLE, entry i = second[first[i] + 128] (a chain of two table steps, every code).
// Analysis first, then each plan in a transaction (two_phase.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/detail/algorithm.hpp"
#include "qfold/detail/ranges.hpp"
#include "qfold/fold/collapse_to_table.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/read.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"
#include "qfold/table/chain.hpp"

namespace qfold {

inline constexpr std::string_view compose_tables_pass_name = "fold_compose_tables";

namespace detail {
template <class Id>
struct compose_tables_plan {
  Id first, second;  // the first TABLE's input is read at apply time
  std::array<std::int8_t, 256> values{};
};

[[nodiscard]] constexpr chain::table table_step(const std::array<std::int8_t, 256>& t) {
  chain::table s{{}, -128};
  for (std::size_t i = 0; i < 256; ++i) s.values[i] = t[i];
  return s;
}
}  // namespace detail

namespace detail {
template <class G>
constexpr report<node_id_t<G>> fold_compose_tables_of(G& g) {
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::compose_tables_plan<id>;
  std::vector<id> claimed;  // tables of accepted sites: T1 -> T2 -> T3 composes pairwise per run
  const auto match = [&claimed](const G& cg,
                                id second) -> std::optional<site_candidate<id, plan_t>> {
    if (T::kind(cg, second) != op_kind::table) return std::nullopt;
    const auto first = detail::table_input(cg, second);
    if (!first || T::kind(cg, *first) != op_kind::table) return std::nullopt;
    if (detail::contains(claimed, *first) || detail::contains(claimed, second)) return std::nullopt;
    site_candidate<id, plan_t> c{{*first, second}, std::nullopt, {*first, second, {}}};
    c.rejected = [&]() -> std::optional<rejection> {
      if (T::use_count(cg, *first) != 1)
        return rejection{reason::shared_output, "the first TABLE has another reader"};
      if (!detail::table_input(cg, *first))
        return rejection{reason::unsupported, "the first TABLE has no input operand"};
      const auto t1 = detail::read_table8(cg, *first);
      const auto t2 = detail::read_table8(cg, second);
      if (!t1 || !t2)
        return rejection{reason::invalid_shape, "a TABLE does not have 256 int8 entries"};
      const std::vector<chain::step> steps{detail::table_step(*t1), detail::table_step(*t2)};
      const elementwise_chain chain{
          int8_domain, std::span<const std::vector<chain::step>>(&steps, 1), {}};
      return fold_chain_to_table8(chain, c.plan.values);
    }();
    if (!c.rejected) {
      detail::reserve_one_more(claimed);
      claimed.insert(claimed.end(), {*first, second});
    }
    return c;
  };
  const auto apply = [](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    const G& cg = std::as_const(tx.graph());
    const auto input = detail::table_input(cg, p.first);
    if (!input)
      return rejection{reason::unsupported, "the first TABLE lost its input before apply"};
    const id folded = tx.add_table(*input, std::span<const std::int8_t>(p.values));
    if constexpr (detail::has_set_qparams<G>) {
      if (const auto q = detail::qparams_of(cg, p.second)) tx.set_qparams(folded, *q);
    }
    tx.replace_uses(p.second, folded);
    tx.erase_dead(p.second);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, compose_tables_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (detail::checked_pass).
template <class G>
constexpr report<node_id_t<G>> fold_compose_tables(G& g) {
  return detail::checked_pass<detail::compose_tables_points>(
      g, [](auto& h) { return detail::fold_compose_tables_of(h); });
}

}  // namespace qfold
