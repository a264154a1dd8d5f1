// What a pass did: every site it looked at, folded or rejected (with the rejection's reason,
// message and witness), and the bytes of constants that went away. Inspectable by programs,
// printable for people.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <vector>

#include "qfold/fold/rejection.hpp"

namespace qfold {

template <class NodeId>
struct site_report {
  std::string_view pass;
  std::vector<NodeId> nodes;  // the nodes of the matched pattern, producer first
  std::optional<rejection> rejected;
  std::size_t bytes_removed = 0;
  // Folded, but an erase threw (an adapter bug): nodes without readers were left in the graph.
  bool cleanup_failed = false;
  [[nodiscard]] constexpr bool folded() const noexcept { return !rejected.has_value(); }
};

template <class NodeId>
struct report {
  std::vector<site_report<NodeId>> sites;

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
  constexpr report& operator+=(const report& other) {
    sites.insert(sites.end(), other.sites.begin(), other.sites.end());
    return *this;
  }
};

namespace detail {
// The stream is a template parameter so that this header needs only <iosfwd>: <ostream> costs a
// TU ~0.1 s on g++ 12, and whoever prints a report has a stream, hence <ostream>, already.
template <class Ostream, class NodeId, class Name>
void print_report(Ostream& os, const report<NodeId>& r, const Name& name) {
  for (const auto& s : r.sites) {
    os << s.pass << ": ";
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      os << (i != 0 ? " -> " : "") << name(s.nodes[i]);
    if (s.folded()) {
      os << ": folded, " << s.bytes_removed << " bytes removed"
         << (s.cleanup_failed ? " (an erase failed: unused nodes left)" : "") << "\n";
    } else {
      os << ": rejected (" << to_string(s.rejected->code) << ") " << s.rejected->message;
      if (s.rejected->index != rejection::no_index) os << " [at " << s.rejected->index << "]";
      os << "\n";
    }
  }
  os << r.folded() << " folded, " << r.rejected() << " rejected, " << r.bytes_removed()
     << " bytes removed\n";
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
