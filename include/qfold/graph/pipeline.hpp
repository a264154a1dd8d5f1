// An ordered list of named passes run over one graph, with insertion before or after a named
// pass (the generic form of a pass manager's "register before" hook).
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"

namespace qfold {

template <class G>
class pipeline {
 public:
  using pass = std::function<report<node_id_t<G>>(G&)>;

  pipeline& add(std::string name, pass p) {
    passes_.push_back({std::move(name), std::move(p)});
    return *this;
  }
  // Inserts before / after the pass called `anchor`; false (and nothing inserted) if it is absent.
  bool insert_before(std::string_view anchor, std::string name, pass p) {
    return insert(anchor, 0, std::move(name), std::move(p));
  }
  bool insert_after(std::string_view anchor, std::string name, pass p) {
    return insert(anchor, 1, std::move(name), std::move(p));
  }

  [[nodiscard]] std::vector<std::string_view> names() const {
    std::vector<std::string_view> r;
    for (const auto& e : passes_) r.push_back(e.name);
    return r;
  }

  // Runs every pass in order; the reports are concatenated.
  report<node_id_t<G>> run(G& g) const {
    report<node_id_t<G>> r;
    for (const auto& e : passes_) r += e.run(g);
    return r;
  }

 private:
  struct entry {
    std::string name;
    pass run;
  };
  bool insert(std::string_view anchor, std::ptrdiff_t after, std::string name, pass p) {
    const auto it = std::find_if(passes_.begin(), passes_.end(),
                                 [&](const entry& e) { return e.name == anchor; });
    if (it == passes_.end()) return false;
    passes_.insert(it + after, {std::move(name), std::move(p)});
    return true;
  }
  std::vector<entry> passes_;
};

}  // namespace qfold
