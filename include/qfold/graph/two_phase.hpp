// The driver every pass runs on: analysis over every node (reads only), then each accepted plan
// applied in its own transaction. Whatever an adapter call throws, a site is applied whole or
// left exactly as it was, and the report says which (reason adapter_failure).
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "qfold/detail/algorithm.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/transaction.hpp"
#include "qfold/graph/vocabulary.hpp"

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
inline constexpr std::string_view parameter_computed =
    "a parameter the IR requires to be a compile-time constant (a multiplier, shift, zero point "
    "or table) is computed at run time";
inline constexpr std::string_view cyclic =
    "the graph has a cycle: these nodes' operands lead back to them; the pass folds nothing";
inline constexpr std::string_view rollback_threw =
    "an adapter call threw while applying and an inverse threw while rolling back: the graph "
    "may differ from what it was";

// A site's entry in the report before it is applied.
template <class Id>
[[nodiscard]] constexpr site_report<Id> site_of(std::string_view pass, std::vector<Id> nodes,
                                                std::optional<rejection> rejected) {
  site_report<Id> s;
  s.pass = pass;
  s.nodes = std::move(nodes);
  s.rejected = rejected;
  return s;
}

// Where each node id lies in a list of nodes: a table indexed by the id for integer ids in a
// range at most four times the list (dense ids, the common case), else binary search over the
// ids sorted when they are ordered, else a hash table when they hash (std::hash, or an ADL
// hash_value as MLIR's and LLVM's types have), else a scan. An id not in the list gives size().
template <class Id>
concept dense_id = std::integral<Id> && !std::same_as<Id, bool>;
template <class Id>
concept std_hashable_id = requires(const Id& x) {
  { std::hash<Id>{}(x) } -> std::convertible_to<std::size_t>;
};
template <class Id>
concept adl_hashable_id = requires(const Id& x) {
  { hash_value(x) } -> std::convertible_to<std::size_t>;
};
template <class Id>
concept hashed_id = !std::totally_ordered<Id> && std::equality_comparable<Id> &&
                    (std_hashable_id<Id> || adl_hashable_id<Id>);
struct id_hash {
  template <class Id>
  std::size_t operator()(const Id& x) const {
    if constexpr (std_hashable_id<Id>) {
      return std::hash<Id>{}(x);
    } else {
      return static_cast<std::size_t>(hash_value(x));
    }
  }
};
template <class Id>
class position_index {
 public:
  constexpr explicit position_index(const std::vector<Id>& all) : all_(all) {
    const std::size_t n = all.size();
    if constexpr (dense_id<Id>) {
      if (n != 0) {
        Id lo = all[0], hi = all[0];
        for (const Id& x : all) {
          lo = x < lo ? x : lo;
          hi = x > hi ? x : hi;
        }
        // The span hi - lo in unsigned arithmetic: no overflow for any two ids.
        using U = std::make_unsigned_t<Id>;
        const U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
        if (span / 4 < n) {
          lo_ = lo;
          table_.assign(static_cast<std::size_t>(span) + 1, n);
          for (std::size_t i = 0; i < n; ++i) table_[offset(all[i])] = i;
          return;
        }
      }
    }
    if constexpr (hashed_id<Id>) {
      hashed_.reserve(n);
      for (std::size_t i = 0; i < n; ++i) hashed_.emplace(all[i], i);  // the first of equal ids
    }
    if constexpr (std::totally_ordered<Id>) {
      order_.reserve(n);  // not resize(n): g++ 12 warns of a null dereference there
      for (std::size_t i = 0; i < n; ++i) order_.push_back(i);
      detail::sort_by(order_.begin(), order_.end(),
                      [&](std::size_t i) -> const Id& { return all_[i]; });
    }
  }
  [[nodiscard]] constexpr std::size_t operator()(const Id& x) const {
    const std::size_t n = all_.size();
    if constexpr (dense_id<Id>) {
      if (!table_.empty()) {
        if (x < lo_) return n;
        const std::size_t k = offset(x);
        return k < table_.size() ? table_[k] : n;
      }
    }
    if constexpr (std::totally_ordered<Id>) {
      const auto it = detail::lower_bound_by(order_.begin(), order_.end(), x,
                                             [&](std::size_t i) -> const Id& { return all_[i]; });
      return it != order_.end() && all_[*it] == x ? *it : n;
    } else if constexpr (hashed_id<Id>) {
      const auto it = hashed_.find(x);
      return it != hashed_.end() ? it->second : n;
    } else {
      for (std::size_t i = 0; i < n; ++i)
        if (all_[i] == x) return i;
      return n;
    }
  }

 private:
  [[nodiscard]] constexpr std::size_t offset(const Id& x) const {
    using U = std::make_unsigned_t<std::conditional_t<dense_id<Id>, Id, int>>;
    return static_cast<std::size_t>(static_cast<U>(static_cast<U>(x) - static_cast<U>(lo_)));
  }
  const std::vector<Id>& all_;
  std::conditional_t<dense_id<Id>, Id, char> lo_{};
  std::vector<std::size_t> table_, order_;
  std::conditional_t<hashed_id<Id>, std::unordered_map<Id, std::size_t, id_hash>, char> hashed_{};
};

// The nodes of `all` that lie on, or after, a cycle of operands among them (empty: none).
// Operands outside `all` are taken as inputs. A list in producers-first order is acyclic, and
// seen so in one pass over the operands; any other order is sorted out by Kahn's algorithm.
template <class G>
[[nodiscard]] constexpr std::vector<node_id_t<G>> nodes_on_cycles(
    const G& g, const std::vector<node_id_t<G>>& all) {
  using id = node_id_t<G>;
  const std::size_t n = all.size();
  const position_index<id> index_of(all);
  // Edges operand -> reader as (operand index, reader index), and each reader's in-degree.
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::vector<std::size_t> pending(n, 0);
  bool forward = true;  // every operand listed before its reader
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& o : ir_traits<G>::operands(g, all[r]))
      if (const std::size_t i = index_of(o); i != n) {
        edges.emplace_back(i, r);
        ++pending[r];
        forward = forward && i < r;
      }
  if (forward) return {};
  // Readers of each node, grouped by a counting sort of the edges.
  std::vector<std::size_t> first(n + 1, 0), readers(edges.size());
  for (const auto& e : edges) ++first[e.first + 1];
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  {
    std::vector<std::size_t> fill(first.begin(), first.end() - 1);
    for (const auto& e : edges) readers[fill[e.first]++] = e.second;
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (std::size_t k = first[i]; k < first[i + 1]; ++k)
      if (--pending[readers[k]] == 0) ready.push_back(readers[k]);
  }
  std::vector<id> r;
  if (done != n)
    for (std::size_t i = 0; i < n; ++i)
      if (pending[i] != 0) r.push_back(all[i]);
  return r;
}

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
    for (const auto& n : ir_traits<G>::nodes(std::as_const(g))) all.push_back(n);
    if (auto cycle = nodes_on_cycles(std::as_const(g), all); !cycle.empty()) {
      r.sites.push_back(
          site_of<id>(pass, std::move(cycle), rejection{reason::cyclic_graph, cyclic}));
      return r;
    }
  } catch (...) {
    r.sites.push_back(site_of<id>(pass, {}, rejection{reason::adapter_failure, analysis_threw}));
    return r;
  }
  std::vector<std::pair<std::size_t, Plan>> plans;  // (site index, plan)
  for (const auto& n : all) {
    try {
      auto c = match(std::as_const(g), n);
      if (!c) continue;
      reserve_one_more(r.sites);  // then neither push below can fail alone
      reserve_one_more(plans);
      r.sites.push_back(site_of<id>(pass, std::move(c->nodes), c->rejected));
      if (!c->rejected) plans.emplace_back(r.sites.size() - 1, std::move(c->plan));
    } catch (const parameter_not_constant&) {
      r.sites.push_back(
          site_of<id>(pass, {n}, rejection{reason::not_constant, parameter_computed}));
    } catch (...) {
      r.sites.push_back(site_of<id>(pass, {n}, rejection{reason::adapter_failure, analysis_threw}));
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
      const auto done = tx.commit();
      s.bytes_removed = done.bytes_removed;
      s.bytes_added = done.bytes_added;
      s.cleanup_failed = tx.cleanup_failed();
      s.replaced = tx.replaced();
      s.replacement = tx.replacement();
      s.added = tx.added();
    } catch (...) {
      s.rejected = rejection{reason::adapter_failure, tx.rollback() ? apply_threw : rollback_threw};
    }
  }
  return r;
}
}  // namespace detail

}  // namespace qfold
