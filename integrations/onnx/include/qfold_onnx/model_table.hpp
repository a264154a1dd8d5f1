// The indexed ONNX model under qfold_onnx::graph: an entry per node, initializer and input, value
// producers and reader counts, names and ranks, and edits of the protobuf that undo themselves.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <optional>
#include <qfold/fold/rejection.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model_bytes.hpp"
#include "shapes.hpp"

namespace qfold_onnx {

// The model as a table that graph (graph.hpp) maps onto qfold's vocabulary. Node ids index
// entries_, built once; a value is known by its name, with its producer and its readers. Every
// edit is a journal step whose inverse is registered first, so that a mutation point that throws
// leaves model and table as they were.
class model_table {
 public:
  using node_id = std::int32_t;
  static constexpr node_id none = -1;
  model_table(const model_table&) = delete;
  model_table& operator=(const model_table&) = delete;

  // Entries in the table, erased ones included (node ids are below this).
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  [[nodiscard]] const std::string& name(node_id n) const { return at(n).name; }
  [[nodiscard]] const std::string& note(node_id n) const { return at(n).note; }
  // Why the node is invalid as this adapter reads it (nullopt: it is not).
  [[nodiscard]] std::optional<qfold::reason> refusal(node_id n) const { return at(n).refusal; }
  [[nodiscard]] const onnx::NodeProto* onnx_node(node_id n) const { return at(n).node; }
  [[nodiscard]] const std::string& op_type(node_id n) const { return at(n).op; }
  [[nodiscard]] bool alive(node_id n) const { return at(n).alive; }
  // A model-level problem (a name defined twice, a read before the definition): nothing is
  // classified as foldable then. Empty when there is none.
  [[nodiscard]] const std::string& model_problem() const noexcept { return malformed_; }
  // The rank this adapter derived for a value name (nullopt: unknown).
  [[nodiscard]] std::optional<std::size_t> rank_of(const std::string& name) const {
    const auto it = ranks_.find(name);
    return it == ranks_.end() ? std::nullopt : std::optional<std::size_t>(it->second);
  }

  // Removes what was erased from the ONNX model and places inserted nodes; idempotent. The
  // value_info of values that went away goes too, and nothing else: a model nothing was done to
  // stays byte for byte as it was.
  void commit() {
    auto* nodes = graph_->mutable_node();
    std::unordered_set<const onnx::NodeProto*> dead;
    for (const entry& e : entries_)
      if (!e.alive &&
          (e.src == source::node || e.src == source::identity || e.src == source::constant_node))
        for (const onnx::NodeProto* p : {e.node, e.matmul})
          if (p != nullptr) dead.insert(p);
    std::unordered_map<const onnx::NodeProto*, std::vector<onnx::NodeProto*>> after;
    for (auto& [anchor, n] : pending_) after[anchor].push_back(n.get());
    std::vector<onnx::NodeProto*> old(static_cast<std::size_t>(nodes->size()));
    nodes->Reserve(nodes->size() + static_cast<int>(pending_.size()));
    // From here on nothing allocates but the order vector, built before the model changes.
    std::vector<onnx::NodeProto*> order;
    order.reserve(old.size() + pending_.size());
    for (int i = 0; i < nodes->size(); ++i) old[static_cast<std::size_t>(i)] = nodes->Mutable(i);
    std::vector<onnx::NodeProto*> stack;
    for (onnx::NodeProto* n : old) {
      stack.push_back(n);
      while (!stack.empty()) {
        onnx::NodeProto* m = stack.back();
        stack.pop_back();
        order.push_back(m);
        if (const auto more = after.find(m); more != after.end())
          for (auto it = more->second.rbegin(); it != more->second.rend(); ++it)
            stack.push_back(*it);
      }
    }
    {  // a node whose anchor went (never expected) still goes into the graph, at the end
      std::unordered_set<const onnx::NodeProto*> placed(order.begin(), order.end());
      for (auto& [anchor, n] : pending_)
        if (!placed.contains(n.get())) order.push_back(n.get());
    }
    std::vector<onnx::NodeProto*> released(old.size());
    nodes->ExtractSubrange(0, nodes->size(), released.data());
    for (auto& [anchor, n] : pending_) (void)n.release();  // owned by `order` now
    pending_.clear();
    for (onnx::NodeProto* n : order) {
      if (dead.contains(n)) {
        delete n;
      } else {
        nodes->AddAllocated(n);
      }
    }
    for (entry& e : entries_)
      if (!e.alive && e.node != nullptr && dead.contains(e.node)) e.node = e.matmul = nullptr;
    auto* infos = graph_->mutable_value_info();
    int keep = 0;
    for (int i = 0; i < infos->size(); ++i)
      if (!gone_.contains(infos->Get(i).name()) || values_.contains(infos->Get(i).name()))
        infos->SwapElements(i, keep++);
    infos->DeleteSubrange(keep, infos->size() - keep);
    gone_.clear();
  }

  // Test hook: the k-th journalled step from now on throws std::bad_alloc (every mutation point
  // must then leave the model and the adapter exactly as they were). nullopt: off.
  void inject_failure_after(std::optional<std::size_t> steps) noexcept { inject_ = steps; }

 protected:
  // aliases: see graph's constructor.
  explicit model_table(onnx::ModelProto& model, raw_aliases* aliases)
      : model_(&model), graph_(model.mutable_graph()), aliases_(aliases) {
    build();
  }
  ~model_table() = default;

  enum class source : std::uint8_t { initializer, input, node, identity, constant_node, view };
  enum class linear_form : std::uint8_t { none, gemm, matmul, matmul_add };

  // An attribute as it was: nullopt when absent.
  using attr_snapshot = std::optional<onnx::AttributeProto>;
  // What set_operand did when it appended an operand, for remove_last_operand.
  struct append_record {
    std::size_t operand = 0;
    int slot = -1;
    bool filled = false;    // an empty (absent) input slot was filled, not added
    bool made_add = false;  // a MatMul got a bias Add
    bool has_beta = false;
    attr_snapshot beta;
  };

  struct entry {
    qfold::op_kind kind = qfold::op_kind::other;
    source src = source::node;
    std::string op;                        // ONNX op type (nodes)
    std::string name;                      // for reports
    std::string note;                      // why a foldable-looking node is not in the vocabulary
    std::optional<qfold::reason> refusal;  // the node is invalid (note says how)
    onnx::TensorProto* tensor = nullptr;   // initializer, or a Constant node's `value`
    onnx::NodeProto* node = nullptr;       // the node (the Add of a MatMul + Add)
    onnx::NodeProto* matmul = nullptr;     // linear_form::matmul / matmul_add
    linear_form linear = linear_form::none;
    int bias_slot = -1;          // matmul_add: the Add's input holding the bias
    node_id base = none;         // identity, view: what they look through
    node_id inner = none;        // matmul_add: the hidden MatMul entry
    node_id weight_view = none;  // matmul: the view of the original B
    node_id gemm_view = none;    // gemm with transB = 0: the view of the original B
    attr_snapshot gemm_trans_b;  // gemm: transB as the model had it
    std::vector<node_id> operands;
    std::vector<std::shared_ptr<const append_record>> appends;
    std::vector<std::string> implicit;  // outer names read inside subgraphs
    qfold::conv_attributes conv{};
    qfold::batch_norm_attributes bn{};
    std::vector<std::int64_t> shape;  // Constant value_float(s)
    std::vector<float> scalar;        // Constant value_float(s)
    std::int64_t order = 0;           // producers first
    bool alive = true;
    bool hidden = false;  // a MatMul inside a MatMul + Add linear node
    mutable bool view_ready = false;
    mutable std::vector<float> view_data;
    mutable std::vector<std::int64_t> view_shape;
  };
  struct value {
    node_id producer = none;
    std::size_t readers = 0;  // input slots of live nodes (and reads inside subgraphs)
    std::size_t outputs = 0;  // graph outputs naming it
  };

  // Undo journal of one mutation point: each step registers its inverse (which must not throw)
  // before it runs; a step that throws has changed nothing itself; leaving the scope without
  // done() runs the inverses newest first.
  class journal {
   public:
    explicit journal(model_table& g) : g_(g) { undo_.reserve(16); }
    journal(const journal&) = delete;
    journal& operator=(const journal&) = delete;
    ~journal() {
      if (!done_)
        for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)->run();
    }
    template <class Do, class Undo>
    void step(Do&& d, Undo&& u) {
      auto inverse = std::make_unique<undo_fn<std::decay_t<Undo>>>(std::forward<Undo>(u));
      undo_.push_back(std::move(inverse));
      try {
        if (g_.inject_ && (*g_.inject_)-- == 0) {
          g_.inject_.reset();
          throw std::bad_alloc();
        }
        d();
      } catch (...) {
        undo_.pop_back();
        throw;
      }
    }
    void done() noexcept { done_ = true; }

   private:
    struct undo_base {
      virtual ~undo_base() = default;
      virtual void run() noexcept = 0;
    };
    template <class F>
    struct undo_fn final : undo_base {
      F f;
      explicit undo_fn(F&& x) : f(std::move(x)) {}
      void run() noexcept override { f(); }
    };
    model_table& g_;
    std::vector<std::unique_ptr<undo_base>> undo_;
    bool done_ = false;
  };
  // A new float initializer of these dims, with a fresh name and no data yet.
  std::unique_ptr<onnx::TensorProto> float_initializer(std::span<const std::int64_t> dims) {
    auto t = std::make_unique<onnx::TensorProto>();
    t->set_name(fresh_name("qfold_folded"));
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (const std::int64_t d : dims) t->add_dims(d);
    return t;
  }
  // Adds t, its data in place, as a constant (the steps after the data's own, in j).
  node_id add_initializer(journal& j, std::unique_ptr<onnx::TensorProto> t, std::size_t rank) {
    const std::string name = t->name();
    entry e;
    e.kind = qfold::op_kind::constant;
    e.src = source::initializer;
    e.tensor = t.get();
    e.name = name;
    auto* inits = graph_->mutable_initializer();
    j.step([&] { inits->Reserve(inits->size() + 1); }, [] {});
    j.step([&] { names_.insert(name); }, [this, name] { names_.erase(name); });
    j.step([&] { entries_.push_back(std::move(e)); }, [this] { entries_.pop_back(); });
    const auto id = static_cast<node_id>(entries_.size() - 1);
    j.step([&] { values_.emplace(name, value{id, 0, 0}); }, [this, name] { values_.erase(name); });
    j.step([&] { ranks_.emplace(name, rank); }, [this, name] { ranks_.erase(name); });
    j.step([&] { inits->AddAllocated(t.release()); }, [inits] { inits->RemoveLast(); });
    j.done();
    return id;
  }
  void valid(node_id n) const {
    if (n < 0 || static_cast<std::size_t>(n) >= entries_.size())
      throw std::out_of_range("qfold_onnx: unknown node id " + std::to_string(n));
  }
  [[nodiscard]] const entry& at(node_id n) const {
    valid(n);
    return entries_[static_cast<std::size_t>(n)];
  }
  entry& mut(node_id n) {
    valid(n);
    return entries_[static_cast<std::size_t>(n)];
  }
  node_id push(entry e) {
    entries_.push_back(std::move(e));
    return static_cast<node_id>(entries_.size() - 1);
  }

  // --- Journalled attribute edits -------------------------------------------------------------
  static attr_snapshot snapshot(const onnx::NodeProto& n, std::string_view key) {
    const auto* a = attr(n, key);
    return a == nullptr ? attr_snapshot{} : attr_snapshot{*a};
  }
  static onnx::AttributeProto int_attr(const char* key, std::int64_t v) {
    onnx::AttributeProto a;
    a.set_name(key);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
  }
  static onnx::AttributeProto float_attr(const char* key, float v) {
    onnx::AttributeProto a;
    a.set_name(key);
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(v);
    return a;
  }
  // The attribute `key` of n becomes `value` (replaced in place, or appended), journalled.
  void set_attr(journal& j, onnx::NodeProto& n, std::string_view key, onnx::AttributeProto to) {
    auto* attrs = n.mutable_attribute();
    for (int k = 0; k < attrs->size(); ++k)
      if (attrs->Get(k).name() == key) {
        auto* a = attrs->Mutable(k);
        auto keep = std::make_shared<onnx::AttributeProto>(std::move(to));
        j.step([&] { a->Swap(keep.get()); }, [a, keep] { a->Swap(keep.get()); });
        return;
      }
    auto fresh = std::make_unique<onnx::AttributeProto>(std::move(to));
    j.step([&] { attrs->Reserve(attrs->size() + 1); }, [] {});
    j.step([&] { attrs->AddAllocated(fresh.release()); }, [attrs] { attrs->RemoveLast(); });
  }
  // The attribute `key` of n as the snapshot had it (removed when it was absent), journalled.
  void restore_attr(journal& j, onnx::NodeProto& n, std::string_view key,
                    const attr_snapshot& was) {
    if (was) {
      set_attr(j, n, key, *was);
      return;
    }
    auto* attrs = n.mutable_attribute();
    for (int k = 0; k < attrs->size(); ++k)
      if (attrs->Get(k).name() == key) {
        // Move it to the end, then release it: undo puts it back where it was.
        auto held = std::make_shared<std::unique_ptr<onnx::AttributeProto>>();
        j.step([&] { attrs->Reserve(attrs->size() + 1); }, [] {});
        const int last = attrs->size() - 1;
        j.step(
            [&] {
              for (int m = k; m < last; ++m) attrs->SwapElements(m, m + 1);
              held->reset(attrs->ReleaseLast());
            },
            [attrs, held, k, last] {
              attrs->AddAllocated(held->release());
              for (int m = last; m > k; --m) attrs->SwapElements(m, m - 1);
            });
        return;
      }
  }

  // A constant entry's float32 values, made or aligned first where they have to be.
  [[nodiscard]] std::optional<qfold::tensor_view<float>> float_view(const entry& e) const {
    if (e.tensor != nullptr) {
      make_deferred(aliases_, *e.tensor);
      align_alias(aliases_, *e.tensor);
      return float_tensor(*e.tensor, aliases_);
    }
    if (e.src == source::constant_node && !e.scalar.empty())
      return qfold::tensor_view<float>{e.scalar, e.shape};
    return std::nullopt;
  }
  // The TensorProto behind a constant-like entry (initializer, Constant, Identity of those).
  [[nodiscard]] const onnx::TensorProto* tensor_of(node_id n) const {
    if (n == none) return nullptr;
    const entry& e = at(n);
    if (e.src == source::identity) return tensor_of(e.base);
    return e.src == source::initializer || e.src == source::constant_node ? e.tensor : nullptr;
  }
  // A constant's dims, only when they agree with its data.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> constant_shape(node_id n) const {
    if (n == none) return std::nullopt;
    const entry& e = at(n);
    if (e.kind != qfold::op_kind::constant) return std::nullopt;
    if (e.src == source::identity) return constant_shape(e.base);
    if (e.tensor != nullptr) {
      if (!tensor_problem(*e.tensor, aliases_).empty()) return std::nullopt;
      return std::vector<std::int64_t>(e.tensor->dims().begin(), e.tensor->dims().end());
    }
    if (e.src == source::constant_node) return e.shape;
    return std::nullopt;
  }
  [[nodiscard]] bool is_constant_like(node_id n) const {
    const source s = at(n).src;
    return s == source::initializer || s == source::identity || s == source::constant_node;
  }
  // The dims of a Conv's weight when it is a constant with consistent data.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> weight_dims(
      const onnx::NodeProto& n) const {
    if (n.input_size() < 2 || n.input(1).empty()) return std::nullopt;
    const onnx::TensorProto* t = tensor_of(value_producer(n.input(1)));
    if (t == nullptr || !tensor_problem(*t, aliases_).empty()) return std::nullopt;
    return std::vector<std::int64_t>(t->dims().begin(), t->dims().end());
  }

  // --- Values ----------------------------------------------------------------------------------
  [[nodiscard]] node_id value_producer(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? none : it->second.producer;
  }
  [[nodiscard]] std::vector<std::string> outputs_of(const entry& e) const {
    switch (e.src) {
      case source::initializer:
      case source::input:
        return {e.name};
      case source::view:
        return {};
      default:
        if (e.node == nullptr) return {};
        return {e.node->output().begin(), e.node->output().end()};
    }
  }
  [[nodiscard]] std::string output_name(node_id v) const {
    const entry& e = at(v);
    if (e.src == source::initializer || e.src == source::input) return e.name;
    if (e.node == nullptr || e.node->output_size() == 0 || e.node->output(0).empty())
      throw std::logic_error("qfold_onnx: node without an output");
    return e.node->output(0);
  }
  // A name no value, node or initializer of the model has (not reserved: see names_).
  [[nodiscard]] std::string fresh_name(const std::string& base) const {
    std::string name = base;
    for (std::size_t k = 1; names_.contains(name); ++k) name = base + "_" + std::to_string(k);
    return name;
  }
  void forget(const std::string& name) noexcept {
    values_.erase(name);
    try {
      gone_.insert(name);
    } catch (...) {  // only value_info cleanup is lost: a stale entry, never a wrong graph
    }
  }
  // Removes key from a map or set, journalled: the undo puts the same node back (no allocation,
  // and no rehash: the container held it before, with the same buckets).
  template <class C>
  void take(journal& j, C& c, const std::string& key) {
    if (!c.contains(key)) return;
    auto held = std::make_shared<typename C::node_type>();
    j.step([&] { *held = c.extract(key); }, [&c, held] { c.insert(std::move(*held)); });
  }
  void add_reader(journal& j, const std::string& name) {
    j.step([&] { ++values_.at(name).readers; }, [this, name] { --values_.at(name).readers; });
  }
  void drop_reader(journal& j, const std::string& name) {
    const auto it = values_.find(name);
    if (it == values_.end() || it->second.readers == 0) return;
    const value was = it->second;
    if (was.readers == 1 && was.outputs == 0 && was.producer == none) {
      take(j, values_, name);
    } else {
      j.step([&] { --values_.at(name).readers; }, [this, name] { ++values_.at(name).readers; });
    }
  }
  void drop_reader_noexcept(const std::string& name) noexcept {
    const auto it = values_.find(name);
    if (it == values_.end() || it->second.readers == 0) return;
    if (--it->second.readers == 0 && it->second.outputs == 0 && it->second.producer == none)
      forget(name);
  }
  // `to` gets from's rank (or none), journalled.
  void move_rank(journal& j, const std::string& from, const std::string& to) {
    const auto r = rank_of(from);
    if (!r) return take(j, ranks_, to);
    if (const auto was = rank_of(to)) {
      j.step([&] { ranks_.at(to) = *r; }, [this, to, w = *was] { ranks_.at(to) = w; });
    } else {
      j.step([&] { ranks_.emplace(to, *r); }, [this, to] { ranks_.erase(to); });
    }
  }
  // A constant the pass just made (no reader yet) takes a readable name after what it replaces.
  void rename_fresh(journal& j, node_id v, const std::string& base) {
    entry& c = mut(v);
    if (c.src != source::initializer || c.tensor == nullptr || !c.name.starts_with("qfold_folded"))
      return;
    const auto it = values_.find(c.name);
    if (it == values_.end() || it->second.readers != 0) return;
    const std::string old = c.name;
    const std::string name = fresh_name((base.empty() ? std::string("qfold") : base) + "_bnfold");
    const value moved = it->second;
    j.step([&] { names_.insert(name); }, [this, name] { names_.erase(name); });
    j.step([&] { values_.emplace(name, moved); }, [this, name] { values_.erase(name); });
    std::string n1 = name, n2 = name;
    onnx::TensorProto* t = c.tensor;
    j.step([&] { t->mutable_name()->swap(n1); },
           [t, keep = old]() mutable { t->mutable_name()->swap(keep); });
    j.step([&] { c.name.swap(n2); }, [&c, keep = old]() mutable { c.name.swap(keep); });
    take(j, values_, old);
    const auto r = rank_of(old);
    if (r) j.step([&] { ranks_[name] = *r; }, [this, name] { ranks_.erase(name); });
  }

  // A new tensor's raw_data becomes `data`: large data in the aliases' spill when there is one
  // (no fresh heap memory), else in the storage of an erased initializer when one fits (the pass
  // erases a site's old weights right after adding its new ones: fresh memory is costly, a page
  // fault per 4 KiB), else in fresh memory.
  void store_floats(journal& j, onnx::TensorProto& t, std::span<const float> data) {
    const std::size_t bytes = data.size_bytes();
    std::string_view kept;
    if constexpr (std::endian::native == std::endian::little)
      if (aliases_ != nullptr && bytes >= raw_aliases::min_bytes)
        kept = aliases_->spill.keep(
            std::string_view(reinterpret_cast<const char*>(data.data()), bytes));
    if (kept.data() != nullptr) {
      t.set_raw_data(std::string(1, '\0'));  // the placeholder
      const onnx::TensorProto* key = &t;
      j.step([&] { aliases_->emplace(key, kept); }, [this, key] { aliases_->erase(key); });
      return;
    }
    std::size_t best = pool_.size();
    for (std::size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].capacity() >= bytes && pool_[i].capacity() <= 2 * bytes &&
          (best == pool_.size() || pool_[i].capacity() < pool_[best].capacity()))
        best = i;
    if (best != pool_.size()) {
      std::string storage = std::move(pool_[best]);
      pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(best));
      storage.resize(bytes);  // within capacity: no allocation
      if (bytes != 0) std::memcpy(storage.data(), data.data(), bytes);
      t.mutable_raw_data()->swap(storage);
    } else {
      t.set_raw_data(data.data(), bytes);
    }
    if constexpr (std::endian::native == std::endian::big) byteswap_floats(*t.mutable_raw_data());
  }
  // Removes an erased initializer from the model; its raw_data storage is kept for store_floats
  // (an optimisation only) and its aliases go.
  void drop_initializer(entry& e) noexcept {
    forget(e.name);
    auto* inits = graph_->mutable_initializer();
    for (int k = 0; k < inits->size(); ++k)
      if (inits->Mutable(k) == e.tensor) {
        if (aliases_ != nullptr) {  // no throw (pointer hash)
          if (const auto a = aliases_->find(e.tensor); a != aliases_->end()) {
            aliases_->spill.release(a->second);
            aliases_->erase(a);
          }
          aliases_->deferred.erase(e.tensor);
        }
        if (e.tensor->raw_data().size() >= pool_min_bytes && pool_.size() < pool_.capacity()) {
          pool_.emplace_back();  // within capacity: no allocation
          pool_.back().swap(*e.tensor->mutable_raw_data());
        }
        inits->DeleteSubrange(k, 1);
        break;
      }
    e.tensor = nullptr;
  }
  // A new Identity node `to` = Identity(`from`) (v's output), placed after `after` on commit;
  // its entry is a view reading v. Returns its id.
  node_id add_identity(journal& j, node_id after, node_id v, const std::string& from,
                       const std::string& to) {
    const std::string id_name = fresh_name(to + "_qfold_identity");
    j.step([&] { names_.insert(id_name); }, [this, id_name] { names_.erase(id_name); });
    auto id = std::make_unique<onnx::NodeProto>();
    id->set_op_type("Identity");
    id->set_name(id_name);
    id->add_input(from);
    id->add_output(to);
    entry e;
    e.kind = qfold::op_kind::view;
    e.src = source::node;
    e.node = id.get();
    e.op = "Identity";
    e.name = id_name;
    e.order = at(after).order + 1;
    e.operands = {v};
    j.step([&] { entries_.push_back(std::move(e)); }, [this] { entries_.pop_back(); });
    const auto nid = static_cast<node_id>(entries_.size() - 1);
    add_reader(j, from);
    const onnx::NodeProto* anchor = at(after).node;
    j.step([&] { pending_.emplace_back(anchor, std::move(id)); }, [this] { pending_.pop_back(); });
    return nid;
  }
  // Drops a node the adapter added and has not committed yet; false when node is not one.
  bool kill_pending(onnx::NodeProto* node) noexcept {
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->second.get() == node) {
        pending_.erase(it);  // moves unique_ptrs: no throw
        return true;
      }
    return false;
  }
  // MatMul without a bias gets an Add after it, and becomes MatMul + Add.
  void append_matmul_bias(journal& j, node_id n, const std::string& bias) {
    entry& e = mut(n);
    if (e.matmul->output_size() < 1) throw std::logic_error("qfold_onnx: MatMul without output");
    const std::string out = e.matmul->output(0);
    const std::string product = fresh_name(out + "_qfold_matmul");
    j.step([&] { names_.insert(product); }, [this, product] { names_.erase(product); });
    const std::string add_name = fresh_name(e.name + "_bias");
    j.step([&] { names_.insert(add_name); }, [this, add_name] { names_.erase(add_name); });
    auto add = std::make_unique<onnx::NodeProto>();
    add->set_op_type("Add");
    add->set_name(add_name);
    add->add_input(product);
    add->add_input(bias);
    add->add_output(out);
    const value v = values_.at(out);
    j.step(
        [&] {
          values_.emplace(product, value{v.producer, 1, 0});
        },
        [this, product] { values_.erase(product); });
    move_rank(j, out, product);
    onnx::NodeProto* mm = e.matmul;
    std::string p = product;
    j.step([&] { mm->mutable_output(0)->swap(p); },
           [mm, keep = out]() mutable { mm->mutable_output(0)->swap(keep); });
    onnx::NodeProto* raw = add.get();
    j.step([&] { pending_.emplace_back(mm, std::move(add)); }, [this] { pending_.pop_back(); });
    switch_matmul_form(j, e, mm, raw, true);
  }
  // The undo of append_matmul_bias.
  void remove_matmul_bias(journal& j, node_id n) {
    entry& e = mut(n);
    onnx::NodeProto* add = e.node;
    onnx::NodeProto* mm = e.matmul;
    if (add == mm || add->output_size() < 1 || add->input_size() < 2 || mm->output_size() < 1)
      throw std::logic_error("qfold_onnx: no bias Add to remove");
    const std::string out = add->output(0), product = mm->output(0), bias = add->input(1);
    std::unique_ptr<onnx::NodeProto>* owned = nullptr;
    std::size_t index = 0;
    for (std::size_t k = 0; k < pending_.size(); ++k)
      if (pending_[k].second.get() == add) {
        owned = &pending_[k].second;
        index = k;
      }
    if (owned == nullptr) throw std::logic_error("qfold_onnx: the bias Add is not the adapter's");
    drop_reader(j, bias);
    {
      std::string o = out;
      j.step([&] { mm->mutable_output(0)->swap(o); },
             [mm, keep = product]() mutable { mm->mutable_output(0)->swap(keep); });
    }
    take(j, values_, product);
    move_rank(j, product, out);
    take(j, names_, product);
    auto held =
        std::make_shared<std::pair<const onnx::NodeProto*, std::unique_ptr<onnx::NodeProto>>>();
    j.step(
        [&] {
          *held = std::move(pending_[index]);
          pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
        },
        [this, held, index] {
          pending_.insert(pending_.begin() + static_cast<std::ptrdiff_t>(index), std::move(*held));
        });
    switch_matmul_form(j, e, mm, add, false);
  }
  // The last journalled step of append_matmul_bias (to_add) and of its undo remove_matmul_bias:
  // e becomes the MatMul + Add form (node add, op "Add", bias operand 1) when to_add, else the
  // MatMul form (node mm, op "MatMul", no bias slot); the inverse switches back. Both strings are
  // made before the step, so neither the step nor its inverse allocates.
  static void switch_matmul_form(journal& j, entry& e, onnx::NodeProto* mm, onnx::NodeProto* add,
                                 bool to_add) {
    const auto set = [&e, mm, add](bool with_add, std::string& op) noexcept {
      e.node = with_add ? add : mm;
      e.op.swap(op);
      e.linear = with_add ? linear_form::matmul_add : linear_form::matmul;
      e.bias_slot = with_add ? 1 : -1;
    };
    std::string op = to_add ? "Add" : "MatMul";
    j.step([&] { set(to_add, op); },
           [set, to_add, keep = std::string(to_add ? "MatMul" : "Add")]() mutable {
             set(!to_add, keep);
           });
  }
  // Operand i of a plain node is its i-th non-empty input.
  static int physical_slot(const onnx::NodeProto& n, std::size_t i) {
    std::size_t seen = 0;
    for (int k = 0; k < n.input_size(); ++k) {
      if (n.input(k).empty()) continue;
      if (seen++ == i) return k;
    }
    return -1;  // append
  }

  // Names read inside a subgraph that it does not define (reads of the outer scope).
  static void outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string> defined,
                          std::vector<std::string>& reads, int depth = 0) {
    if (depth > 64) return;  // protobuf's own nesting limit is lower
    for (const auto& i : g.input()) defined.insert(i.name());
    for (const auto& i : g.initializer()) defined.insert(i.name());
    for (const auto& n : g.node()) {
      for (const auto& in : n.input())
        if (!in.empty() && !defined.contains(in)) reads.push_back(in);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) outer_reads(a.g(), defined, reads, depth + 1);
        for (const auto& sub : a.graphs()) outer_reads(sub, defined, reads, depth + 1);
      }
      for (const auto& out : n.output()) defined.insert(out);
    }
    for (const auto& o : g.output())
      if (!defined.contains(o.name())) reads.push_back(o.name());
  }
  static void collect_names(const onnx::GraphProto& g, std::unordered_set<std::string>& names,
                            int depth = 0) {
    if (depth > 64) return;
    for (const auto& i : g.input()) names.insert(i.name());
    for (const auto& i : g.initializer()) names.insert(i.name());
    for (const auto& n : g.node()) {
      names.insert(n.name());
      for (const auto& o : n.output()) names.insert(o);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_names(a.g(), names, depth + 1);
        for (const auto& sub : a.graphs()) collect_names(sub, names, depth + 1);
      }
    }
  }

  // --- Building --------------------------------------------------------------------------------
  void malformed(const std::string& why) {
    if (malformed_.empty()) malformed_ = why;
  }

  void build() {
    pool_.reserve(64);
    collect_names(*graph_, names_);
    std::unordered_set<std::string> defined;
    const auto define = [&](const std::string& name) {
      if (name.empty()) return;
      if (!defined.insert(name).second) malformed("the graph defines '" + name + "' twice");
    };
    std::unordered_set<std::string> inputs;
    for (const auto& v : graph_->input()) {
      if (!inputs.insert(v.name()).second) malformed("the graph defines '" + v.name() + "' twice");
    }
    for (auto& t : *graph_->mutable_initializer()) {
      define(t.name());
      entry e;
      e.tensor = &t;
      e.name = t.name();
      if (inputs.contains(t.name())) {
        e.kind = qfold::op_kind::input;
        e.src = source::input;
        e.note = "initializer is also a graph input (overridable at run time)";
        inputs.erase(t.name());
      } else {
        e.kind = qfold::op_kind::constant;
        e.src = source::initializer;
      }
      values_[t.name()] = value{push(std::move(e)), 0, 0};
    }
    for (const auto& v : graph_->input()) {
      if (!inputs.contains(v.name())) continue;
      define(v.name());
      entry e;
      e.kind = qfold::op_kind::input;
      e.src = source::input;
      e.name = v.name();
      values_[v.name()] = value{push(std::move(e)), 0, 0};
    }
    std::unordered_set<std::string> read_early;  // read before any definition (outer scope?)
    const auto producer_of = [&](const std::string& name) {
      if (auto it = values_.find(name); it != values_.end()) return it->second.producer;
      entry e;  // read but never defined here (an outer scope): a run-time input
      e.kind = qfold::op_kind::input;
      e.src = source::input;
      e.name = name;
      const node_id id = push(std::move(e));
      values_[name] = value{id, 0, 0};
      read_early.insert(name);
      return id;
    };
    std::int64_t position = 0;
    for (auto& node : *graph_->mutable_node()) {
      entry e;
      e.node = &node;
      e.op = node.op_type();
      e.name = node.name().empty()
                   ? (node.output_size() > 0 && !node.output(0).empty() ? node.output(0)
                                                                        : node.op_type())
                   : node.name();
      e.order = 2 * ++position;
      for (const auto& in : node.input())
        if (!in.empty()) {
          e.operands.push_back(producer_of(in));
          ++values_.at(in).readers;
        }
      for (const auto& a : node.attribute()) {
        if (a.has_g()) outer_reads(a.g(), {}, e.implicit);
        for (const auto& sub : a.graphs()) outer_reads(sub, {}, e.implicit);
      }
      for (const auto& in : e.implicit) {
        producer_of(in);
        ++values_.at(in).readers;
      }
      const node_id id = push(std::move(e));
      for (const auto& out : node.output()) {
        if (out.empty()) continue;
        if (read_early.contains(out)) malformed("'" + out + "' is read before it is defined");
        define(out);
        if (const auto it = values_.find(out); it != values_.end()) {
          it->second.producer = id;  // malformed anyway; keep the counts
        } else {
          values_[out] = value{id, 0, 0};
        }
      }
    }
    for (const auto& o : graph_->output()) {
      producer_of(o.name());
      ++values_.at(o.name()).outputs;
    }
    ranks_ = propagate_ranks(*model_, aliases_, [this](const std::string& name) {
      // Nodes are not classified yet: an initializer, or a Constant node's `value`.
      const onnx::TensorProto* t = nullptr;
      const node_id p = value_producer(name);
      if (p == none) return t;
      const entry& pe = at(p);
      if (pe.src == source::initializer) {
        t = pe.tensor;
      } else if (pe.src == source::node && pe.node != nullptr && pe.op == "Constant" &&
                 default_domain(*pe.node)) {
        for (const auto& a : pe.node->attribute())
          if (a.name() == "value" && a.has_t()) t = &a.t();
      }
      return t;
    });
  }

  onnx::ModelProto* model_;
  onnx::GraphProto* graph_;
  std::deque<entry> entries_;  // stable references while new entries are added
  std::unordered_map<std::string, value> values_;
  std::unordered_set<std::string> names_;  // every name in the model, subgraphs included
  std::unordered_set<std::string> gone_;   // values that went away (their value_info goes)
  std::vector<std::pair<const onnx::NodeProto*, std::unique_ptr<onnx::NodeProto>>> pending_;
  static constexpr std::size_t pool_min_bytes = 64 * 1024;
  std::vector<std::string> pool_;  // raw_data storage of erased initializers
  raw_aliases* aliases_ = nullptr;
  std::unordered_map<std::string, std::size_t> ranks_;
  std::string malformed_;
  std::optional<std::size_t> inject_;
};

}  // namespace qfold_onnx
