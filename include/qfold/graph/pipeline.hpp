// An ordered list of named passes run over one graph, with insertion before or after a named
// pass (the generic form of a pass manager's "register before" hook). qfold's own passes are
// added by value (graph/passes.hpp), which checks the adapter at compile time.
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "qfold/detail/algorithm.hpp"
#include "qfold/graph/report.hpp"
#include "qfold/graph/traits.hpp"

namespace qfold {

namespace detail {
// A copyable owner of any callable `R(A...)`: what the pipeline needs of std::function, without
// <functional> (it adds ~0.1 s to a TU of qfold's headers on g++ 12). Like std::function, it calls
// its target as a non-const lvalue (a mutable lambda may keep state between runs); unlike it, the
// target is called as `f(args...)` (no pointers to members).
template <class Signature>
class pass_function;
template <class R, class... A>
class pass_function<R(A...)> {
 public:
  pass_function() = default;
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, pass_function> &&
           std::is_invocable_r_v<R, std::decay_t<F>&, A...> &&
           !std::is_member_pointer_v<std::decay_t<F>>)
      pass_function(F&& f)  // NOLINT: implicit, like std::function
      : target_(new model<std::decay_t<F>>(std::forward<F>(f))) {}
  pass_function(const pass_function& o) : target_(o.target_ ? o.target_->clone() : nullptr) {}
  pass_function(pass_function&& o) noexcept : target_(std::exchange(o.target_, nullptr)) {}
  pass_function& operator=(pass_function o) noexcept {
    std::swap(target_, o.target_);
    return *this;
  }
  ~pass_function() { delete target_; }

  explicit operator bool() const noexcept { return target_ != nullptr; }
  R operator()(A... a) const {
    expects(target_ != nullptr, "pipeline: a pass without a function was run");
    return target_->call(std::forward<A>(a)...);
  }

 private:
  struct base {
    virtual ~base() = default;
    [[nodiscard]] virtual base* clone() const = 0;
    virtual R call(A... a) = 0;
  };
  template <class F>
  struct model final : base {
    template <class U>
    explicit model(U&& u) : f(std::forward<U>(u)) {}
    [[nodiscard]] base* clone() const override { return new model(f); }
    R call(A... a) override { return f(std::forward<A>(a)...); }
    F f;
  };
  base* target_ = nullptr;
};
}  // namespace detail

template <class G>
class pipeline {
 public:
  // Any callable `report<node_id_t<G>>(G&)`: a lambda, a function, a std::function.
  using pass = detail::pass_function<report<node_id_t<G>>(G&)>;

  pipeline& add(std::string name, pass p) {
    passes_.push_back({std::move(name), std::move(p)});
    return *this;
  }
  // One of qfold's passes (qfold::passes::dyt_alpha, ...); a compile error names what G lacks
  // (and nothing of the pass is instantiated then, so no error follows from qfold's internals).
  template <class P>
  requires requires { P::name; }
  pipeline& add(const P& p) {
    constexpr bool ok = P::template check<G>();
    if constexpr (ok) add(std::string(P::name), [p](G& g) { return p.run(g); });
    return *this;
  }
  // The pass if G's adapter serves it, else a note of the first point it lacks (skipped(), and
  // every report run() returns). True when added.
  template <class P>
  requires requires { P::name; }
  bool add_if_supported(const P& p) {
    if constexpr (P::template supports<G>) {
      add(std::string(P::name), [p](G& g) { return p.run(g); });
      return true;
    } else {
      skipped_.push_back({P::name, *P::template unmet<G>()});
      return false;
    }
  }
  // The passes left out by add_if_supported, with why.
  [[nodiscard]] const std::vector<skipped_pass>& skipped() const noexcept { return skipped_; }
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
    return detail::find_if(passes_.begin(), passes_.end(),
                           [&](const entry& e) { return e.name == name; }) != passes_.end();
  }
  // The passes called one of `wanted`, in this pipeline's order (a name it lacks is ignored:
  // ask contains() first to report it).
  // Skipped passes of those names stay noted as skipped.
  template <class Names>
  [[nodiscard]] pipeline only(const Names& wanted) const {
    const auto is_wanted = [&](std::string_view name) {
      return detail::find_if(std::begin(wanted), std::end(wanted), [&](const auto& w) {
               return std::string_view(w) == name;
             }) != std::end(wanted);
    };
    pipeline r;
    for (const auto& e : passes_)
      if (is_wanted(e.name)) r.passes_.push_back(e);
    for (const auto& s : skipped_)
      if (is_wanted(s.pass)) r.skipped_.push_back(s);
    return r;
  }

  // Runs every pass in order; the reports are concatenated, after the passes skipped.
  report<node_id_t<G>> run(G& g) const {
    report<node_id_t<G>> r;
    r.skipped = skipped_;
    for (const auto& e : passes_) r += e.run(g);
    return r;
  }

 private:
  struct entry {
    std::string name;
    pass run;
  };
  bool insert(std::string_view anchor, std::ptrdiff_t after, std::string name, pass p) {
    const auto it = detail::find_if(passes_.begin(), passes_.end(),
                                    [&](const entry& e) { return e.name == anchor; });
    if (it == passes_.end()) return false;
    passes_.insert(it + after, {std::move(name), std::move(p)});
    return true;
  }
  std::vector<entry> passes_;
  std::vector<skipped_pass> skipped_;
};

}  // namespace qfold
