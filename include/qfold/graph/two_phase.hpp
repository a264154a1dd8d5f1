// The driver every pass runs on: analysis over every node (reads only), then each accepted plan
// applied in its own transaction. Whatever an adapter call throws, a site is applied whole or
// left exactly as it was, and the report says which (reason adapter_failure).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/fold/rejection.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/transaction.hpp"

namespace qfold {

// What analysis found at one node: the pattern's nodes (producer first), and the plan to apply
// or why not.
template <class Id, class Plan>
struct site_candidate {
  std::vector<Id> nodes;
  std::optional<rejection> rejected;
  Plan plan;
};

namespace detail {
inline constexpr std::string_view analysis_threw =
    "an adapter call threw during analysis; the site was left as it was";
inline constexpr std::string_view apply_threw =
    "an adapter call or an allocation threw while applying; the site was rolled back";
inline constexpr std::string_view rollback_threw =
    "an adapter call threw while applying and an inverse threw while rolling back: the graph "
    "may differ from what it was";

// `match(const G&, node) -> std::optional<site_candidate<id, Plan>>`: nullopt where the node does
// not start this pass's pattern. `apply(transaction<G>&, Plan&) -> std::optional<rejection>`: the
// site's mutations, through the transaction only; a rejection rolls the site back.
// Sites are applied in the order analysis found them; a plan must stay valid while earlier sites
// are applied (passes match disjoint patterns, and apply re-checks what an earlier site could
// have changed).
template <class Plan, class G, class Match, class Apply>
constexpr report<node_id_t<G>> run_two_phase(G& g, std::string_view pass, Match&& match,
                                             Apply&& apply) {
  using id = node_id_t<G>;
  report<id> r;
  std::vector<id> all;
  try {
    for (const id n : ir_traits<G>::nodes(std::as_const(g))) all.push_back(n);
  } catch (...) {
    r.sites.push_back({pass, {}, rejection{reason::adapter_failure, analysis_threw}, 0});
    return r;
  }
  std::vector<std::pair<std::size_t, Plan>> plans;  // (site index, plan)
  for (const id n : all) {
    try {
      auto c = match(std::as_const(g), n);
      if (!c) continue;
      reserve_one_more(r.sites);  // then neither push below can fail alone
      reserve_one_more(plans);
      r.sites.push_back({pass, std::move(c->nodes), c->rejected, 0});
      if (!c->rejected) plans.emplace_back(r.sites.size() - 1, std::move(c->plan));
    } catch (...) {
      r.sites.push_back({pass, {n}, rejection{reason::adapter_failure, analysis_threw}, 0});
    }
  }
  transaction<G> tx(g);
  for (auto& [site, plan] : plans) {
    tx.begin();
    auto& s = r.sites[site];
    try {
      if (auto rejected = apply(tx, plan)) {
        s.rejected = rejected;
        if (!tx.rollback()) s.rejected = rejection{reason::adapter_failure, rollback_threw};
        continue;
      }
      s.bytes_removed = tx.commit();
      s.cleanup_failed = tx.cleanup_failed();
    } catch (...) {
      s.rejected = rejection{reason::adapter_failure, tx.rollback() ? apply_threw : rollback_threw};
    }
  }
  return r;
}
}  // namespace detail

}  // namespace qfold
