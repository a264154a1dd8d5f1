// The collapse-to-table pass over any adapted IR: a chain of elementwise integer ops (RESCALE,
// MUL / ADD / SUB by a constant, CLAMP, TABLE, CAST) from one non-constant int8 (or int16) tensor
// to an int8 tensor becomes one TABLE equal to the chain on every input code
// (fold_chain_to_table8 / fold_chain_to_table16). Analysis first, then each plan in a
// transaction (two_phase.hpp).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/detail/algorithm.hpp"
#include "qfold/detail/ranges.hpp"
#include "qfold/fold/collapse_to_table.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/merge_rescales_pass.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/read.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/two_phase.hpp"
#include "qfold/table/chain.hpp"

namespace qfold {

inline constexpr std::string_view collapse_to_table_pass_name = "fold_collapse_to_table";

namespace detail {
template <class Id>
struct collapse_plan {
  Id first, last;              // the chain's first op (its chain operand is read at apply) and end
  std::size_t input_slot = 0;  // which operand of `first` is the chain's input
  bool int16 = false;
  std::array<std::int8_t, 256> values8{};
  std::array<std::int16_t, 513> values16{};
};

// Which operand of elementwise op n carries the chain (the others are integer constants), or
// nullopt when n is not an op a table can absorb.
template <class G>
[[nodiscard]] constexpr std::optional<std::size_t> chain_slot(const G& g, node_id_t<G> n) {
  // An op whose point the adapter lacks is not absorbed (the chain ends there).
  constexpr bool tables = has_table_values<G> || (!calls_table_values<G> && has_int_constant<G>);
  switch (ir_traits<G>::kind(g, n)) {
    case op_kind::rescale:
      if (!has_rescale<G> || !only_operand(g, n)) return std::nullopt;
      return 0;
    case op_kind::clamp:
      if (!has_clamp_attributes<G> || !only_operand(g, n)) return std::nullopt;
      return 0;
    case op_kind::cast:
      if (!only_operand(g, n)) return std::nullopt;
      return 0;
    case op_kind::table:
      if (!tables || !table_input(g, n)) return std::nullopt;
      return 0;
    case op_kind::mul:
      if (!has_mul_shift<G>) return std::nullopt;
      [[fallthrough]];
    case op_kind::add:
    case op_kind::sub: {
      if (!has_int_constant<G>) return std::nullopt;
      if (std::ranges::size(ir_traits<G>::operands(g, n)) != 2) return std::nullopt;
      const bool c0 = is_int_constant(g, *operand(g, n, 0));
      const bool c1 = is_int_constant(g, *operand(g, n, 1));
      if (c0 == c1) return std::nullopt;
      return c0 ? 1 : 0;
    }
    default:
      return std::nullopt;
  }
}

// An elementwise integer op: a chain slot and an integer element type.
template <class G>
[[nodiscard]] constexpr std::optional<node_id_t<G>> chain_input(const G& g, node_id_t<G> n) {
  const auto slot = chain_slot(g, n);
  if (!slot || !ir_traits<G>::element_type(g, n)) return std::nullopt;
  return operand(g, n, *slot);
}

// Which elementwise op reads each node as its chain input, to find where chains end.
template <class G>
struct chain_readers {
  using id = node_id_t<G>;
  bool built = false;
  std::vector<std::pair<id, id>> links;  // (chain input, reader)

  constexpr void build(const G& g) {
    std::vector<std::pair<id, id>> l;
    for (const auto& n : ir_traits<G>::nodes(g))
      if (const auto in = chain_input(g, n)) l.emplace_back(*in, n);
    if constexpr (std::totally_ordered<id>)
      detail::sort_by(l.begin(), l.end(), [](const std::pair<id, id>& e) { return e.first; });
    links = std::move(l);
    built = true;
  }
  // The elementwise op that reads o as its chain input, when it is o's only reader.
  [[nodiscard]] constexpr std::optional<id> only_reader(const G& g, id o) const {
    if (ir_traits<G>::use_count(g, o) != 1) return std::nullopt;
    if constexpr (std::totally_ordered<id>) {
      const auto it = detail::lower_bound_by(links.begin(), links.end(), o,
                                             [](const std::pair<id, id>& e) { return e.first; });
      if (it != links.end() && it->first == o) return it->second;
    } else {
      for (const auto& [in, reader] : links)
        if (in == o) return reader;
    }
    return std::nullopt;
  }
};

[[nodiscard]] constexpr int_range range_of_dtype(dtype t) noexcept {
  const dtype_range r = range_of(t);
  return {r.lo, r.hi};
}

// The steps of one op, appended to every channel's chain. `from`: the element type of its input.
template <class G>
[[nodiscard]] constexpr std::optional<rejection> append_steps(
    const G& g, node_id_t<G> n, std::size_t slot, std::vector<std::vector<chain::step>>& channels,
    std::vector<range_check>& checks, std::size_t& step_count) {
  using T = ir_traits<G>;
  const auto push = [&](const chain::step& s) {
    for (auto& c : channels) c.push_back(s);
    ++step_count;
  };
  switch (T::kind(g, n)) {
    case op_kind::rescale: {
      rescale_values r;
      if constexpr (has_rescale<G>) read_rescale(g, n, r);
      if (!is_bit_exact(r.attributes))
        return rejection{reason::unsupported_rescale, "a RESCALE is INEXACT_ROUND"};
      const std::size_t count = r.attributes.per_channel ? r.scales.size() : 1;
      if (auto ok = validate(r.attributes, r.scales, count); !ok)
        return rejection{reason::unsupported_rescale, ok.error().message, ok.error().index};
      rescale_attributes a = r.attributes;
      a.per_channel = false;
      if (count == 1) {
        push(chain::rescale{a, r.scales[0]});
        return std::nullopt;
      }
      if (channels.size() == 1) {  // the first per-channel step: copy the chain per channel
        const std::vector<chain::step> so_far = channels[0];
        channels.assign(count, so_far);
      } else if (channels.size() != count) {
        return rejection{reason::channel_mismatch,
                         "per-channel RESCALEs of the chain have different channel counts"};
      }
      for (std::size_t c = 0; c < count; ++c) channels[c].push_back(chain::rescale{a, r.scales[c]});
      ++step_count;
      return std::nullopt;
    }
    case op_kind::table: {
      const auto t = read_table8(g, n);
      if (!t)
        return rejection{reason::invalid_shape,
                         "a TABLE of the chain does not have 256 int8 entries"};
      chain::table s{{}, -128};
      for (std::size_t i = 0; i < 256; ++i) s.values[i] = (*t)[i];
      push(s);
      return std::nullopt;
    }
    case op_kind::clamp: {
      if constexpr (has_clamp_attributes<G>) {
        const qfold::clamp_attributes a = T::clamp_attributes(g, n);
        push(chain::clamp{a.min, a.max});
      }
      return std::nullopt;
    }
    case op_kind::cast: {
      const auto to = T::element_type(g, n);
      const auto from = T::element_type(g, *operand(g, n, 0));
      if (!to || !from || !is_valid(*to) || !is_valid(*from))
        return rejection{reason::unsupported, "a CAST between types qfold does not know"};
      const int_range f = range_of_dtype(*from), t = range_of_dtype(*to);
      // Widening (the target holds every source value): the identity. Narrowing: every value
      // that reaches it must fit; the proof checks that on every code.
      if (f.lo < t.lo || f.hi > t.hi) checks.push_back({step_count, t.lo, t.hi});
      return std::nullopt;
    }
    default:
      break;
  }
  // MUL, ADD, SUB by a constant.
  const auto c = read_int_constant(g, *operand(g, n, slot == 0 ? 1 : 0));
  if (!c) return rejection{reason::not_constant, "an operand of the chain is not a constant"};
  if (c->data.empty()) return rejection{reason::invalid_shape, "a constant of the chain is empty"};
  const std::int64_t k = c->data[0];
  for (const std::int64_t v : c->data)
    if (v != k)
      return rejection{reason::not_scalar, "a constant of the chain holds more than one value"};
  if (!std::in_range<std::int32_t>(k))
    return rejection{reason::out_of_range, "a constant of the chain does not fit int32"};
  if (!keeps_shape(g, n, *operand(g, n, slot), *operand(g, n, slot == 0 ? 1 : 0)))
    return rejection{reason::unsupported,
                     "a constant of the chain broadcasts the tensor to another shape"};
  const auto k32 = static_cast<std::int32_t>(k);
  constexpr std::int32_t min32 = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t max32 = std::numeric_limits<std::int32_t>::max();
  switch (T::kind(g, n)) {
    case op_kind::mul: {
      const auto shift = mul_shift_of(g, n);
      if (!shift) return rejection{reason::unsupported, "a MUL's shift is outside 0..63"};
      push(chain::mul{k32, *shift, true});
      break;
    }
    case op_kind::add:
      push(chain::add{k32});
      break;
    default:  // sub
      if (slot == 0) {
        // x - k == x + (-k); for k = INT32_MIN, (x + INT32_MAX) + 1 fails exactly where x - k does.
        if (k32 == min32) {
          push(chain::add{max32});
          push(chain::add{1});
        } else {
          push(chain::add{-k32});
        }
      } else {
        // k - x == (-x) + k; -x fails only at x = INT32_MIN (where k - x may fit: a conservative
        // refusal, never a wrong table).
        push(chain::mul{-1, 0, false});
        push(chain::add{k32});
      }
      break;
  }
  return std::nullopt;
}

[[nodiscard]] constexpr bool is_code_type(std::optional<dtype> t) noexcept {
  return t == dtype::int8 || t == dtype::int16;
}
}  // namespace detail

namespace detail {
template <class G>
constexpr report<node_id_t<G>> fold_collapse_to_tables_of(G& g) {
  using T = ir_traits<G>;
  using id = node_id_t<G>;
  using plan_t = detail::collapse_plan<id>;
  constexpr bool int16_capable = detail::has_add_table16<G> && detail::has_add_rescale<G>;
  detail::chain_readers<G> readers;
  const auto match = [&readers](const G& cg, id last) -> std::optional<site_candidate<id, plan_t>> {
    if (!detail::chain_input(cg, last) || T::element_type(cg, last) != dtype::int8)
      return std::nullopt;
    if (!readers.built) readers.build(cg);
    // Not the end when the chain goes on, through single readers, to another int8 result.
    {
      id cur = last;
      for (std::size_t guard = 0; guard <= readers.links.size(); ++guard) {
        const auto next = readers.only_reader(cg, cur);
        if (!next) break;
        if (T::element_type(cg, *next) == dtype::int8) return std::nullopt;
        cur = *next;
      }
    }
    // Walk back to the farthest non-constant int8 / int16 tensor through single-reader ops.
    std::vector<id> ops{last};  // last first
    struct start {
      std::size_t ops;
      id node;
      bool int16;
    };
    std::vector<start> starts;
    bool blocked = false;
    for (id cur = last;;) {
      const auto in = detail::chain_input(cg, cur);
      if (!in) break;
      const auto type = T::element_type(cg, *in);
      if (detail::is_code_type(type) && T::kind(cg, *in) != op_kind::constant &&
          !detail::is_int_constant(cg, *in))
        starts.push_back({ops.size(), *in, type == dtype::int16});
      if (!detail::chain_input(cg, *in)) break;
      if (T::use_count(cg, *in) != 1) {
        blocked = true;
        break;
      }
      if (ops.size() > readers.links.size()) break;  // a cycle: an adapter that lies
      ops.push_back(*in);
      cur = *in;
    }
    const start* chosen = nullptr;
    for (const start& s : starts)
      if (!s.int16 || int16_capable) chosen = &s;
    site_candidate<id, plan_t> c{{}, std::nullopt, {last, last, 0, false, {}, {}}};
    if (chosen == nullptr || chosen->ops < 2) {
      const bool int16_blocked =
          !starts.empty() && starts.back().int16 && !int16_capable && starts.back().ops >= 2;
      if (!blocked && !int16_blocked) return std::nullopt;  // a lone op, or no code source
      c.nodes.assign(ops.rbegin(), ops.rend());
      c.rejected = int16_blocked
                       ? rejection{reason::unsupported,
                                   "an int16 chain, and the adapter has no add_table(int16) and "
                                   "add_rescale"}
                       : rejection{reason::shared_output,
                                   "an intermediate node of the chain has another reader"};
      return c;
    }
    ops.resize(chosen->ops);
    c.nodes.assign(ops.rbegin(), ops.rend());
    c.plan.first = c.nodes.front();
    c.plan.int16 = chosen->int16;
    c.rejected = [&]() -> std::optional<rejection> {
      std::vector<std::vector<chain::step>> channels(1);
      std::vector<range_check> checks;
      std::size_t steps = 0;
      for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        const auto slot = detail::chain_slot(cg, c.nodes[i]);
        if (!slot) return rejection{reason::unsupported, "an op of the chain changed"};
        if (i == 0) c.plan.input_slot = *slot;
        if (auto r = detail::append_steps(cg, c.nodes[i], *slot, channels, checks, steps)) return r;
      }
      const elementwise_chain chain{c.plan.int16 ? int16_domain : int8_domain, channels, checks};
      if constexpr (int16_capable) {
        if (c.plan.int16) return fold_chain_to_table16(chain, c.plan.values16);
      }
      return fold_chain_to_table8(chain, c.plan.values8);
    }();
    return c;
  };
  const auto apply = [](transaction<G>& tx, plan_t& p) -> std::optional<rejection> {
    const G& cg = std::as_const(tx.graph());
    // Read now: an earlier site may have replaced the chain's input (by an equal value).
    const auto input = detail::operand(cg, p.first, p.input_slot);
    if (!input) return rejection{reason::unsupported, "the chain lost its input before apply"};
    id folded = *input;
    if constexpr (int16_capable) {
      if (p.int16) {
        const id t = tx.add_table(*input, std::span<const std::int16_t>(p.values16));
        const std::array<scale_factor, 1> s{int16_table_rounding_scale};
        folded = tx.add_rescale(t, int16_table_rounding, std::span<const scale_factor>(s));
      }
    }
    if (!p.int16) folded = tx.add_table(*input, std::span<const std::int8_t>(p.values8));
    if constexpr (detail::has_set_qparams<G>) {
      if (const auto q = detail::qparams_of(cg, p.last)) tx.set_qparams(folded, *q);
    }
    tx.replace_uses(p.last, folded);
    tx.erase_dead(p.last);
    return std::nullopt;
  };
  return detail::run_two_phase<plan_t>(g, collapse_to_table_pass_name, match, apply);
}

}  // namespace detail

// A compile error names each point G's adapter lacks (detail::checked_pass).
template <class G>
constexpr report<node_id_t<G>> fold_collapse_to_tables(G& g) {
  return detail::checked_pass<detail::collapse_to_table_points>(
      g, [](auto& h) { return detail::fold_collapse_to_tables_of(h); });
}

}  // namespace qfold
