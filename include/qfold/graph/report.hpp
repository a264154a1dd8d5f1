// What a pass did: every site it looked at, folded (what replaced what, the bytes of constants
// added and removed) or rejected (the rejection's reason, message and witness), and the passes a
// pipeline left out with the point the adapter lacked. Inspectable by programs, printable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <vector>

#include "qfold/fold/rejection.hpp"

namespace qfold {

// Why a point does not serve: absent; present but not callable with the expected parameters;
// callable but returning another type; erase without noexcept.
enum class point_problem : std::uint8_t { none, missing, wrong_parameters, wrong_return, throws };

[[nodiscard]] constexpr std::string_view to_string(point_problem p) noexcept {
  switch (p) {
    case point_problem::none:
      return "present";
    case point_problem::missing:
      return "missing";
    case point_problem::wrong_parameters:
      return "wrong parameter types";
    case point_problem::wrong_return:
      return "wrong return type";
    case point_problem::throws:
      return "not noexcept";
  }
  return "unknown";
}

// The first point a pass needs and an adapter does not give as expected.
struct unmet_point {
  std::string_view point;     // e.g. "view_axis"
  point_problem problem{};    // missing, wrong_parameters, ...
  std::string_view expected;  // the signature qfold calls
};

template <class NodeId>
struct site_report {
  std::string_view pass;
  std::vector<NodeId> nodes;  // the nodes of the matched pattern, producer first
  std::optional<rejection> rejected;
  std::size_t bytes_removed = 0;  // constants the site erased
  std::size_t bytes_added = 0;    // constants the site created (folded weights, tables)
  // Folded, but the cleanup after the commit failed (take_name threw, or an erase broke its
  // noexcept promise by other means): the graph computes the folded function, but nodes without
  // readers may be left, or the replacement kept its own name.
  bool cleanup_failed = false;
  // What the folded site changed: the readers of `replaced` (graph outputs included) read
  // `replacement` instead (after take_name, the id it answers to); `added` lists the nodes it
  // created. A site that only rewires operands (DyT affine) has no replaced node.
  std::optional<NodeId> replaced, replacement;
  std::vector<NodeId> added;
  [[nodiscard]] constexpr bool folded() const noexcept { return !rejected.has_value(); }
  // Constant bytes removed less those added (negative: the graph grew).
  [[nodiscard]] constexpr std::ptrdiff_t net_bytes_removed() const noexcept {
    return static_cast<std::ptrdiff_t>(bytes_removed) - static_cast<std::ptrdiff_t>(bytes_added);
  }
};

// A pass a pipeline left out, and the first point the adapter lacked for it.
struct skipped_pass {
  std::string_view pass;
  unmet_point unmet;
};

template <class NodeId>
struct report {
  std::vector<site_report<NodeId>> sites;
  std::vector<skipped_pass> skipped;

  [[nodiscard]] constexpr std::size_t folded() const noexcept {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.folded() ? 1u : 0u;
    return n;
  }
  [[nodiscard]] constexpr std::size_t rejected() const noexcept { return sites.size() - folded(); }
  [[nodiscard]] constexpr std::size_t bytes_removed() const noexcept {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.bytes_removed;
    return n;
  }
  [[nodiscard]] constexpr std::size_t bytes_added() const noexcept {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.bytes_added;
    return n;
  }
  [[nodiscard]] constexpr std::ptrdiff_t net_bytes_removed() const noexcept {
    return static_cast<std::ptrdiff_t>(bytes_removed()) -
           static_cast<std::ptrdiff_t>(bytes_added());
  }
  // Sites are appended; a pass skipped in both is noted once (e.g. one report over many blocks).
  constexpr report& operator+=(const report& other) {
    sites.insert(sites.end(), other.sites.begin(), other.sites.end());
    for (const auto& s : other.skipped) {
      bool seen = false;
      for (const auto& t : skipped) seen = seen || t.pass == s.pass;
      if (!seen) skipped.push_back(s);
    }
    return *this;
  }
};

namespace detail {
// The stream is a template parameter so that this header needs only <iosfwd>: <ostream> costs a
// TU ~0.1 s on g++ 12, and whoever prints a report has a stream, hence <ostream>, already.
template <class Ostream>
void print_net(Ostream& os, std::size_t removed, std::size_t added) {
  os << removed << " bytes removed, " << added << " added (net ";
  if (removed >= added)
    os << removed - added << " removed)";
  else
    os << added - removed << " added)";
}
template <class Ostream, class NodeId, class Name>
void print_report(Ostream& os, const report<NodeId>& r, const Name& name) {
  for (const auto& p : r.skipped)
    os << p.pass << ": skipped: ir_traits<G>::" << p.unmet.point << ": "
       << to_string(p.unmet.problem) << "; expected " << p.unmet.expected << "\n";
  for (const auto& s : r.sites) {
    os << s.pass << ": ";
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      os << (i != 0 ? " -> " : "") << name(s.nodes[i]);
    if (s.folded()) {
      os << ": folded, ";
      print_net(os, s.bytes_removed, s.bytes_added);
      if (s.replaced && s.replacement && *s.replaced == *s.replacement)  // took its name
        os << "; " << name(*s.replaced) << " replaced (its name kept)";
      else if (s.replaced && s.replacement)
        os << "; " << name(*s.replaced) << " replaced by " << name(*s.replacement);
      os << (s.cleanup_failed ? " (the cleanup failed: unused nodes or a name left)" : "") << "\n";
    } else {
      os << ": rejected (" << to_string(s.rejected->code) << ") " << s.rejected->message;
      if (s.rejected->index != rejection::no_index) os << " [at " << s.rejected->index << "]";
      os << "\n";
    }
  }
  os << r.folded() << " folded, " << r.rejected() << " rejected, ";
  print_net(os, r.bytes_removed(), r.bytes_added());
  if (!r.skipped.empty()) os << ", " << r.skipped.size() << " passes skipped";
  os << "\n";
}
}  // namespace detail

// One line per site; `name(id)` gives a node's name (e.g. from the adapter). Printing needs
// <ostream> (or <iostream>, <sstream>, ...) where it is used; this header includes <iosfwd> only.
template <class NodeId, class Name>
void print(std::ostream& os, const report<NodeId>& r, const Name& name) {
  detail::print_report(os, r, name);
}

template <class NodeId>
std::ostream& operator<<(std::ostream& os, const report<NodeId>& r) {
  print(os, r, [](const NodeId& n) -> const NodeId& { return n; });
  return os;
}

}  // namespace qfold
