// The apply phase's guarantee, in one place: a site's mutations go through a transaction that
// records how to undo each one before making it, so that a site is applied whole or, when an
// adapter call or an allocation throws, rolled back until the graph is exactly as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "qfold/detail/algorithm.hpp"
#include "qfold/detail/ranges.hpp"
#include "qfold/graph/read.hpp"
#include "qfold/graph/traits.hpp"
#include "qfold/graph/vocabulary.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

namespace detail {
// Room for one more element, growing geometrically (reserve(size() + 1) would reallocate on every
// call), so that the push_back after it cannot throw.
template <class V>
constexpr void reserve_one_more(V& v) {
  if (v.size() == v.capacity()) v.reserve(v.size() < 8 ? 8 : 2 * v.size());
}

// What a transaction throws when a pass misuses it (a qfold bug, never bad input); the driver
// (run_two_phase) catches it like any exception and rolls the site back. Not std::logic_error:
// <stdexcept> brings <string> into every graph header (~0.07 s a TU on g++ 12).
class transaction_misuse : public std::exception {
 public:
  explicit transaction_misuse(const char* what) noexcept : what_(what) {}
  [[nodiscard]] const char* what() const noexcept override { return what_; }

 private:
  const char* what_;
};
}  // namespace detail

// The contract with the adapter (docs/adapting-your-ir.md, "Transactions"):
// - every mutation point either does all it says or throws having changed nothing;
// - erase(g, n) of a node without readers does not throw;
// - the inverses used here undo what they invert: erase of an added node (no readers left;
//   add_constant, add_int_constant, add_table of either width, add_rescale),
//   set_operand back to the previous operand, remove_last_operand after an append,
//   set_qparams / set_conv_input_zero_point back to the previous value.
// replace_uses has no inverse through the points (graph outputs cannot be read back), so it is
// the commit: the last mutation of a site. Erasures are queued and run only after the commit,
// because an erased node cannot be brought back.
template <class G>
class transaction {
 public:
  using id = node_id_t<G>;

  constexpr explicit transaction(G& g) : g_(g) {}
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // Starts the next site (the buffers are kept: one transaction serves a whole pass).
  constexpr void begin() noexcept {
    log_.clear();
    dead_.clear();
    erased_.clear();
    added_.clear();
    replaced_.reset();
    replacement_.reset();
    committed_ = cleanup_failed_ = false;
  }

  [[nodiscard]] constexpr G& graph() noexcept { return g_; }
  [[nodiscard]] constexpr const G& graph() const noexcept { return g_; }

  // A float32 or float64 constant (the adapter's add_constant for that type).
  template <class V>
  constexpr id add_constant(std::span<const V> data, std::span<const std::int64_t> shape) {
    return added([&] { return T::add_constant(g_, data, shape); });
  }
  constexpr id add_int_constant(std::span<const std::int64_t> data,
                                std::span<const std::int64_t> shape, dtype type) {
    return added([&] { return T::add_int_constant(g_, data, shape, type); });
  }
  constexpr id add_table(id input, std::span<const std::int8_t> values) {
    return added([&] { return T::add_table(g_, input, values); });
  }
  // A 513-entry int16 TABLE (the optional int16 add_table point).
  constexpr id add_table(id input, std::span<const std::int16_t> values) {
    return added([&] { return T::add_table(g_, input, values); });
  }
  constexpr id add_rescale(id input, const rescale_attributes& a,
                           std::span<const scale_factor> scales) {
    return added([&] { return T::add_rescale(g_, input, a, scales); });
  }

  // The optional add_scaled_constant point; nullopt when the adapter declines (nothing added).
  constexpr std::optional<id> add_scaled_constant(const scaled_weights& w) {
    open();
    detail::reserve_one_more(log_);
    detail::reserve_one_more(added_);
    const std::optional<id> n = T::add_scaled_constant(g_, w);
    if (n) {
      log_.push_back(step{step::erase_added, *n});
      added_.push_back(*n);
    }
    return n;
  }

  // Operand i of n becomes v; i == n's operand count appends.
  constexpr void set_operand(id n, std::size_t i, id v) {
    open();
    const auto ops = T::operands(g_, n);
    const std::size_t count = std::ranges::size(ops);
    if (i > count) throw detail::transaction_misuse("qfold: set_operand beyond the operand count");
    if (i == count && !detail::has_remove_last_operand<G>)
      throw detail::transaction_misuse("qfold: an append without remove_last_operand to undo it");
    step undo{i == count ? step::pop_operand : step::restore_operand, n, i, v};
    if (i < count)
      undo.other = *std::ranges::next(std::ranges::begin(ops), static_cast<std::ptrdiff_t>(i));
    journal(undo, [&] { T::set_operand(g_, n, i, v); });
  }
  // n must have qparams already, or have been added by this transaction.
  constexpr void set_qparams(id n, const qparams& q) {
    open();
    step undo{step::restore_qparams, n};
    if (!was_added(n)) {
      const auto old = T::qparams(g_, n);
      if (!old)
        throw detail::transaction_misuse("qfold: set_qparams on a node without qparams to restore");
      undo.q = *old;
    } else {
      undo.kind = step::nothing;  // erased on rollback anyway
    }
    journal(undo, [&] { T::set_qparams(g_, n, q); });
  }
  constexpr void set_conv_input_zero_point(id n, std::int64_t zp) {
    open();
    const auto conv = T::quantized_conv(g_, n);
    if (!conv)
      throw detail::transaction_misuse("qfold: set_conv_input_zero_point on a float convolution");
    step undo{step::restore_zero_point, n};
    undo.zero_point = conv->input_zero_point;
    journal(undo, [&] { T::set_conv_input_zero_point(g_, n, zp); });
  }

  // The commit: every reader of old (and graph outputs) reads v. Nothing but erase_dead may
  // follow it.
  constexpr void replace_uses(id old, id v) {
    open();
    T::replace_uses(g_, old, v);
    committed_ = true;
    replaced_ = old;
    replacement_ = v;
  }

  // Queues n, and the operands it leaves without readers, for erasure after the commit.
  constexpr void erase_dead(id n) { dead_.push_back(n); }

  // Ends the site: counts the bytes of the constants it added, runs the queued erasures, then,
  // when the replaced node went, lets the replacement take its name (the optional take_name).
  // What fails here (a read, or take_name) leaves the site applied (the graph computes the folded
  // function) and `cleanup_failed` says nodes without readers or a name may be left.
  struct outcome {
    std::size_t bytes_removed = 0, bytes_added = 0;
  };
  constexpr outcome commit() {
    committed_ = true;
    outcome r;
    try {
      for (const auto& n : added_) r.bytes_added += bytes_of_added(n);
      for (const auto& n : dead_) r.bytes_removed += erase_unused(n);
      if constexpr (detail::has_take_name<G>) {
        if (replaced_ && replacement_ && detail::contains(erased_, *replaced_)) {
          id renamed = T::take_name(g_, *replaced_, *replacement_);
          for (auto& a : added_)  // the report names the added node as it is now
            if (a == *replacement_) a = renamed;
          replacement_ = std::move(renamed);
        }
      }
    } catch (...) {
      cleanup_failed_ = true;
    }
    log_.clear();
    return r;
  }
  [[nodiscard]] constexpr bool cleanup_failed() const noexcept { return cleanup_failed_; }
  // What the site replaced (its commit), by what, and the nodes it added.
  [[nodiscard]] constexpr const std::optional<id>& replaced() const noexcept { return replaced_; }
  [[nodiscard]] constexpr const std::optional<id>& replacement() const noexcept {
    return replacement_;
  }
  [[nodiscard]] constexpr const std::vector<id>& added() const noexcept { return added_; }

  // Undoes every recorded step, newest first. False if an inverse threw too: the graph may then
  // differ from what it was (a double fault the caller must report).
  constexpr bool rollback() noexcept {
    bool ok = true;
    for (auto s = log_.rbegin(); s != log_.rend(); ++s) {
      try {
        undo(*s);
      } catch (...) {
        ok = false;
      }
    }
    log_.clear();
    return ok;
  }

 private:
  using T = ir_traits<G>;
  struct step {
    enum kind_t : std::uint8_t {
      nothing,
      erase_added,
      restore_operand,
      pop_operand,
      restore_qparams,
      restore_zero_point
    } kind = nothing;
    id node;
    std::size_t index = 0;
    id other = node;  // restore_operand: the previous operand
    qparams q{};
    std::int64_t zero_point = 0;
  };

  constexpr void open() const {
    if (committed_)
      throw detail::transaction_misuse("qfold: a mutation after the transaction's commit");
  }
  // Room in the journal first, so that recording the inverse of a step that succeeded cannot
  // fail.
  template <class Mutate>
  constexpr void journal(const step& undo, Mutate&& mutate) {
    detail::reserve_one_more(log_);
    mutate();
    log_.push_back(undo);
  }
  template <class Add>
  constexpr id added(Add&& add) {
    open();
    detail::reserve_one_more(log_);
    detail::reserve_one_more(added_);
    const id n = add();
    log_.push_back(step{step::erase_added, n});
    added_.push_back(n);
    return n;
  }
  // The constant bytes an added node brought: its own if a constant, and a TABLE's table
  // constant in the operand form (made with it).
  constexpr std::size_t bytes_of_added(const id& n) {
    if (T::kind(g_, n) == op_kind::constant) return detail::constant_bytes_of(g_, n);
    if constexpr (!detail::calls_table_values<G>) {
      const auto ops = T::operands(g_, n);
      if (T::kind(g_, n) == op_kind::table && std::ranges::size(ops) == 2) {
        const id table = *std::ranges::next(std::ranges::begin(ops), 1);
        if (T::kind(g_, table) == op_kind::constant) return detail::constant_bytes_of(g_, table);
      }
    }
    return 0;
  }
  [[nodiscard]] constexpr bool was_added(id n) const {
    for (const step& s : log_)
      if (s.kind == step::erase_added && s.node == n) return true;
    return false;
  }
  constexpr void undo(const step& s) {
    switch (s.kind) {
      case step::nothing:
        break;
      case step::erase_added:
        erase_added(s.node);
        break;
      case step::restore_operand:  // recorded only by set_operand
        if constexpr (detail::has_set_operand<G>) T::set_operand(g_, s.node, s.index, s.other);
        break;
      case step::pop_operand:  // recorded only where the adapter has remove_last_operand
        if constexpr (detail::has_remove_last_operand<G>) T::remove_last_operand(g_, s.node);
        break;
      case step::restore_qparams:  // recorded only by set_qparams, so only for such adapters
        if constexpr (detail::has_set_qparams<G>) T::set_qparams(g_, s.node, s.q);
        break;
      case step::restore_zero_point:
        if constexpr (detail::has_set_conv_input_zero_point<G>)
          T::set_conv_input_zero_point(g_, s.node, s.zero_point);
        break;
    }
  }
  // An added node goes; a TABLE in the operand form (no table_values point) takes the table
  // constant its add_table made with it, unless another node reads that constant.
  constexpr void erase_added(id n) {
    if constexpr (!detail::calls_table_values<G>) {
      const auto ops = T::operands(g_, n);  // a range by value (a vector) is not borrowed
      if (T::kind(g_, n) == op_kind::table && std::ranges::size(ops) == 2) {
        const id table = *std::ranges::next(std::ranges::begin(ops), 1);
        if (!erased(n) || (T::use_count(g_, table) == 0 && !erased(table)))
          throw detail::transaction_misuse("qfold: an erase failed while rolling back");
        return;
      }
    }
    if (!erased(n)) throw detail::transaction_misuse("qfold: an erase failed while rolling back");
  }
  // erase(n), false where the adapter says it could not (its erase returns bool).
  constexpr bool erased(const id& n) noexcept {
    if constexpr (std::is_void_v<decltype(T::erase(g_, n))>) {
      T::erase(g_, n);
      return true;
    } else {
      return static_cast<bool>(T::erase(g_, n));
    }
  }
  // Erases n if nothing reads it, then each of its operands left without readers (never a graph
  // input); the bytes of the constants that went away. `erased_` spans the site's roots, so a
  // node is never looked at after its erasure.
  constexpr std::size_t erase_unused(id n) {
    std::size_t bytes = 0;
    todo_.assign(1, n);
    while (!todo_.empty()) {
      const id m = todo_.back();  // a copy: m outlives the pop
      todo_.pop_back();
      if (detail::contains(erased_, m) || T::use_count(g_, m) != 0 ||
          T::kind(g_, m) == op_kind::input)
        continue;
      ops_.clear();
      for (const auto& o : T::operands(g_, m))
        if (!detail::contains(ops_, o)) ops_.push_back(o);
      detail::reserve_one_more(erased_);
      const std::size_t b =
          T::kind(g_, m) == op_kind::constant ? detail::constant_bytes_of(g_, m) : 0;
      if (!erased(m)) {
        cleanup_failed_ = true;
        continue;
      }
      bytes += b;
      erased_.push_back(m);
      todo_.insert(todo_.end(), ops_.begin(), ops_.end());
    }
    return bytes;
  }

  G& g_;
  std::vector<step> log_;
  std::vector<id> dead_, erased_, todo_, ops_, added_;  // buffers reused from site to site
  std::optional<id> replaced_, replacement_;
  bool committed_ = false, cleanup_failed_ = false;
};

}  // namespace qfold
