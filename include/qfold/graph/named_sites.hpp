// A pass report's sites with their nodes named, so that the report outlives the graph (a pass
// may erase the nodes it names): what tools and MLIR passes print, one line per site.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "qfold/graph/report.hpp"

namespace qfold {

// One site of a report, with names (so that it outlives the graph).
struct named_site {
  std::string pass;
  std::vector<std::string> nodes;  // producer first
  bool folded = false;
  std::string reason, message, note;
  std::optional<std::size_t> index;
  std::size_t bytes_removed = 0, bytes_added = 0;
};

// A site of a qfold report with its nodes named by name_of(node) (the graph may then go).
template <class Site, class NameOf>
named_site with_names(const Site& s, NameOf&& name_of) {
  named_site out;
  out.pass = std::string(s.pass);
  for (const auto n : s.nodes) out.nodes.push_back(name_of(n));
  out.folded = s.folded();
  out.bytes_removed = s.bytes_removed;
  out.bytes_added = s.bytes_added;
  if (s.rejected) {
    out.reason = std::string(to_string(s.rejected->code));
    out.message = std::string(s.rejected->message);
    if (s.rejected->index != rejection::no_index) out.index = s.rejected->index;
  }
  return out;
}

struct site_totals {
  std::size_t folded = 0, rejected = 0, bytes_removed = 0, bytes_added = 0;
};
inline site_totals count_sites(const std::vector<named_site>& sites) {
  site_totals t;
  for (const auto& s : sites) {
    (s.folded ? t.folded : t.rejected) += 1;
    t.bytes_removed += s.bytes_removed;
    t.bytes_added += s.bytes_added;
  }
  return t;
}

// One line per site: "pass: a -> b: folded, N bytes removed, M added (net K removed)" or "...:
// rejected (reason) message [at index] (note)".
inline void print_site_lines(std::ostream& os, const std::vector<named_site>& sites) {
  for (const auto& s : sites) {
    os << s.pass << ": ";
    for (std::size_t i = 0; i < s.nodes.size(); ++i) os << (i != 0 ? " -> " : "") << s.nodes[i];
    if (s.folded) {
      os << ": folded, ";
      detail::print_net(os, s.bytes_removed, s.bytes_added);
      os << "\n";
      continue;
    }
    os << ": rejected (" << s.reason << ") " << s.message;
    if (s.index) os << " [at " << *s.index << "]";
    if (!s.note.empty()) os << " (" << s.note << ")";
    os << "\n";
  }
}
// "F folded, R rejected, B bytes removed, A added (net ...)" (no newline: tools append their
// own counts).
inline void print_totals(std::ostream& os, const std::vector<named_site>& sites) {
  const site_totals t = count_sites(sites);
  os << t.folded << " folded, " << t.rejected << " rejected, ";
  detail::print_net(os, t.bytes_removed, t.bytes_added);
}

}  // namespace qfold
