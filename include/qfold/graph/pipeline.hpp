// An ordered list of named passes run over one graph, with insertion before or after a named
// pass (the generic form of a pass manager's "register before" hook). qfold's own passes are
// added by value (graph/passes.hpp), which checks the adapter at compile time.
#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
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
  // One of qfold's passes (qfold::passes::dyt_alpha, ...); a compile error names what G lacks.
  template <class P>
  requires requires { P::name; }
  pipeline& add(const P& p) {
    static_assert(P::template check<G>());
    return add(std::string(P::name), [p](G& g) { return p.run(g); });
  }
  // Inserts before / after the pass called `anchor`; false (and nothing inserted) if it is absent.
  bool insert_before(std::string_view anchor, std::string name, pass p) {
    return insert(anchor, 0, std::move(name), std::move(p));
  }
  bool insert_after(std::string_view anchor, std::string name, pass p) {
    return insert(anchor, 1, std::move(name), std::move(p));
  }

  // Copies: the names outlive the pipeline (`for (auto n : standard_pipeline<G>().names())`).
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> r;
    for (const auto& e : passes_) r.push_back(e.name);
    return r;
  }
  [[nodiscard]] bool contains(std::string_view name) const {
    return std::any_of(passes_.begin(), passes_.end(),
                       [&](const entry& e) { return e.name == name; });
  }
  // The passes called one of `wanted`, in this pipeline's order (a name it lacks is ignored:
  // ask contains() first to report it).
  template <class Names>
  [[nodiscard]] pipeline only(const Names& wanted) const {
    pipeline r;
    for (const auto& e : passes_)
      if (std::any_of(std::begin(wanted), std::end(wanted),
                      [&](const auto& w) { return std::string_view(w) == e.name; }))
        r.passes_.push_back(e);
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
