// qfold_onnx::graph: the qfold adapter over an ONNX model (onnx::ModelProto, the protobuf classes
// of the ONNX C++ library), as member functions that qfold::ir_traits forwards to.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace qfold_onnx {

// Shape-inference hook for MatMul ranks (set by onnx_tool.hpp, which links the ONNX library's
// shape inference): value name -> rank, for every value whose rank it could infer.
using rank_inference =
    std::function<std::unordered_map<std::string, std::size_t>(const onnx::ModelProto&)>;

// The attributes of a Conv or ConvTranspose node with ONNX's defaults filled in.
struct conv_geometry {
  std::int64_t group = 1;
  std::string auto_pad = "NOTSET";                // NOTSET, SAME_UPPER, SAME_LOWER, VALID
  std::vector<std::int64_t> kernel_shape;         // from the attribute, else the weight's dims
  std::vector<std::int64_t> strides, dilations;   // default 1 per spatial axis
  std::optional<std::vector<std::int64_t>> pads;  // begin..., end...; nullopt for SAME_*
  std::vector<std::int64_t> output_padding;       // ConvTranspose only; default 0
};

// Adapts one ONNX model for qfold's passes. How ONNX maps onto qfold's vocabulary:
// - every float32 initializer (not also a graph input, which makes it overridable at run time,
//   and not stored externally) is a constant; so is a Constant node, and an Identity node
//   whose input is a constant: PyTorch exports deduplicated parameters as Identity(initializer),
//   and qfold sees through them (erasing the Identity frees the initializer when nothing else
//   reads it);
// - Conv and ConvTranspose are convolutions (weights OIHW / IOHW, `group`);
// - Gemm is linear when alpha = 1 and its C (if any, then with beta = 1) is one value per output
//   column; with transB = 0 its weight is seen through a transposed view (K, N) -> (N, K);
// - MatMul with a constant rank-2 weight is linear (weight seen transposed); MatMul + Add, when
//   the Add is the MatMul's only reader and adds a constant of shape (N) or (1, N), is one linear
//   node with a bias (reported under the Add's name);
// - BatchNormalization is batch_norm (training when training_mode = 1 or when it has the
//   training outputs); with spatial = 0 (opset 7-8) it is `other`, with a note.
// Anything else maps onto the rest of the vocabulary or `other`. note(n) says why a node that
// looks foldable is not in the vocabulary as such.
//
// Node ids index a table built once; mutations keep the ONNX model valid and commit() removes
// what was erased (call it before writing the model; the tool does).
class graph {
 public:
  using node_id = std::int32_t;
  static constexpr node_id none = -1;

  explicit graph(onnx::ModelProto& model, rank_inference infer = {})
      : model_(&model), graph_(model.mutable_graph()), infer_(std::move(infer)) {
    build();
  }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;

  // --- Inspection ------------------------------------------------------------------------------
  [[nodiscard]] const std::string& name(node_id n) const { return at(n).name; }
  [[nodiscard]] const std::string& note(node_id n) const { return at(n).note; }
  [[nodiscard]] const onnx::NodeProto* onnx_node(node_id n) const { return at(n).node; }
  [[nodiscard]] const std::string& op_type(node_id n) const { return at(n).op; }
  [[nodiscard]] bool alive(node_id n) const { return at(n).alive; }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  // BatchNormalization nodes that are not batch_norm in qfold's vocabulary (with a note why).
  [[nodiscard]] std::vector<node_id> unrecognised_batch_norms() const {
    std::vector<node_id> r;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].alive && entries_[i].op == "BatchNormalization" &&
          entries_[i].kind != qfold::op_kind::batch_norm)
        r.push_back(static_cast<node_id>(i));
    return r;
  }
  // Conv / ConvTranspose attributes with ONNX defaults; nullopt for any other node.
  [[nodiscard]] std::optional<conv_geometry> geometry(node_id n) const {
    const entry& e = at(n);
    if (e.node == nullptr || (e.op != "Conv" && e.op != "ConvTranspose")) return std::nullopt;
    const onnx::NodeProto& node = *e.node;
    conv_geometry c;
    c.group = attr_int(node, "group", 1);
    c.auto_pad = attr_string(node, "auto_pad", "NOTSET");
    c.kernel_shape = attr_ints(node, "kernel_shape");
    std::size_t spatial = c.kernel_shape.size();
    if (c.kernel_shape.empty() && node.input_size() > 1) {
      if (auto w = tensor_of(value_producer(node.input(1))); w && w->dims_size() > 2) {
        c.kernel_shape.assign(w->dims().begin() + 2, w->dims().end());
        spatial = c.kernel_shape.size();
      }
    }
    const auto fill = [&](const char* key, std::int64_t dflt, std::size_t count) {
      auto v = attr_ints(node, key);
      if (v.empty()) v.assign(count, dflt);
      return v;
    };
    c.strides = fill("strides", 1, spatial);
    c.dilations = fill("dilations", 1, spatial);
    if (e.op == "ConvTranspose") c.output_padding = fill("output_padding", 0, spatial);
    if (c.auto_pad == "VALID") {
      c.pads = std::vector<std::int64_t>(2 * spatial, 0);
    } else if (c.auto_pad == "NOTSET") {
      c.pads = fill("pads", 0, 2 * spatial);
    }  // SAME_UPPER / SAME_LOWER: pads depend on the input's shape
    return c;
  }

  // Removes what was erased from the ONNX model and places inserted nodes; idempotent.
  void commit() {
    auto* nodes = graph_->mutable_node();
    std::vector<onnx::NodeProto*> old(static_cast<std::size_t>(nodes->size()));
    nodes->ExtractSubrange(0, nodes->size(), old.data());
    std::unordered_map<const onnx::NodeProto*, std::vector<std::unique_ptr<onnx::NodeProto>>> after;
    for (auto& [anchor, n] : pending_) after[anchor].push_back(std::move(n));
    pending_.clear();
    std::function<void(onnx::NodeProto*)> emit = [&](onnx::NodeProto* n) {
      std::unique_ptr<onnx::NodeProto> owned(n);
      const auto more = after.find(n);
      if (dead_nodes_.contains(n)) {
        dead_nodes_.erase(n);
      } else {
        nodes->AddAllocated(owned.release());
      }
      if (more != after.end()) {
        auto list = std::move(more->second);
        after.erase(more);
        for (auto& m : list) emit(m.release());
      }
    };
    for (onnx::NodeProto* n : old) emit(n);
    auto* inits = graph_->mutable_initializer();
    int keep = 0;
    for (int i = 0; i < inits->size(); ++i)
      if (!dead_tensors_.contains(&inits->Get(i))) inits->SwapElements(i, keep++);
    inits->DeleteSubrange(keep, inits->size() - keep);
    dead_tensors_.clear();
    auto* infos = graph_->mutable_value_info();
    keep = 0;
    for (int i = 0; i < infos->size(); ++i)
      if (values_.contains(infos->Get(i).name())) infos->SwapElements(i, keep++);
    infos->DeleteSubrange(keep, infos->size() - keep);
  }

  // --- The qfold adapter (see qfold/graph/traits.hpp) -------------------------------------------
  [[nodiscard]] std::vector<node_id> nodes() const {
    std::vector<node_id> r;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].alive && !entries_[i].hidden) r.push_back(static_cast<node_id>(i));
    std::ranges::stable_sort(r, {}, [&](node_id n) { return at(n).order; });
    return r;
  }
  [[nodiscard]] qfold::op_kind kind(node_id n) const { return at(n).kind; }
  [[nodiscard]] std::span<const node_id> operands(node_id n) const { return at(n).operands; }
  [[nodiscard]] std::size_t use_count(node_id n) const {
    const entry& e = at(n);
    if (e.src == source::view) return use_count(e.base);
    std::size_t count = 0;
    for (const std::string& v : outputs_of(e)) {
      if (const auto it = values_.find(v); it != values_.end())
        count += it->second.readers + it->second.outputs;
    }
    return count;
  }
  [[nodiscard]] std::optional<qfold::tensor_view<float>> constant(node_id n) const {
    const entry& e = at(n);
    if (!e.alive || e.kind != qfold::op_kind::constant) return std::nullopt;
    switch (e.src) {
      case source::identity:
        return constant(e.base);
      case source::view: {
        if (!e.view_ready) {
          const auto base = constant(e.base);
          if (!base || base->shape.size() != 2) return std::nullopt;
          const auto rows = static_cast<std::size_t>(base->shape[0]),
                     cols = static_cast<std::size_t>(base->shape[1]);
          e.view_data.resize(rows * cols);
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c)
              e.view_data[c * rows + r] = base->data[r * cols + c];
          e.view_shape = {base->shape[1], base->shape[0]};
          e.view_ready = true;
        }
        return qfold::tensor_view<float>{e.view_data, e.view_shape};
      }
      default:
        return float_view(e);
    }
  }
  [[nodiscard]] qfold::conv_attributes conv_attributes(node_id n) const { return at(n).conv; }
  [[nodiscard]] qfold::batch_norm_attributes batch_norm_attributes(node_id n) const {
    return at(n).bn;
  }
  // Rank of the node's (first) output; 0 when unknown.
  [[nodiscard]] std::size_t output_rank(node_id n) const {
    const entry& e = at(n);
    if (e.op == "Gemm") return 2;
    const auto outs = outputs_of(e);
    if (outs.empty()) return 0;
    if (const auto r = known_rank(outs.front())) return *r;
    if (e.linear == linear_form::matmul || e.linear == linear_form::matmul_add) {
      // MatMul (A, B) with B of rank 2 has A's rank (rank 1 A: rank 1); + bias of rank <= 2.
      const auto a = known_rank(e.matmul->input(0));
      if (!a) return 0;
      std::size_t rank = std::max<std::size_t>(*a, 1);
      if (e.linear == linear_form::matmul_add)
        if (const auto b = known_rank(e.node->input(e.bias_slot))) rank = std::max(rank, *b);
      return rank;
    }
    return 0;
  }

  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(unique_name("qfold_folded"));
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (const std::int64_t d : shape) t->add_dims(d);
    const std::size_t bytes = data.size_bytes();
    // Reuse the storage of an erased initializer when one fits (the pass erases a site's old
    // weights right after adding its new ones): fresh memory is costly (a page fault per 4 KiB).
    std::size_t best = pool_.size();
    for (std::size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].capacity() >= bytes && pool_[i].capacity() <= 2 * bytes &&
          (best == pool_.size() || pool_[i].capacity() < pool_[best].capacity()))
        best = i;
    if (best != pool_.size()) {
      std::string storage = std::move(pool_[best]);
      pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(best));
      storage.resize(bytes);
      if (bytes != 0) std::memcpy(storage.data(), data.data(), bytes);
      t->mutable_raw_data()->swap(storage);
    } else {
      t->set_raw_data(data.data(), bytes);
    }
    if constexpr (std::endian::native == std::endian::big) byteswap_floats(*t->mutable_raw_data());
    entry e;
    e.kind = qfold::op_kind::constant;
    e.src = source::initializer;
    e.tensor = t;
    e.name = t->name();
    const node_id id = push(std::move(e));
    values_[t->name()] = value{id, 0, 0};
    return id;
  }

  void set_operand(node_id n, std::size_t i, node_id v) {
    entry& e = mut(n);
    if (e.node == nullptr) throw std::logic_error("qfold_onnx: set_operand on a non-node");
    if (i > e.operands.size()) throw std::out_of_range("qfold_onnx: operand index");
    if (at(v).src == source::view)
      throw std::logic_error("qfold_onnx: a transposed view cannot become an operand");
    const bool matmul = e.linear == linear_form::matmul || e.linear == linear_form::matmul_add;
    // The physical (node, input) slot; -1: appended.
    onnx::NodeProto* target = e.node;
    int slot = -1;
    if (matmul && i < 2) {
      target = e.matmul;
      slot = static_cast<int>(i);
    } else if (matmul && i == 2) {
      slot = e.bias_slot;  // -1 for a MatMul without Add
    } else {
      slot = physical_slot(*e.node, i);
    }
    const bool appended = slot < 0 || slot >= target->input_size();
    const std::string role = i == 1 ? "weight" : i == 2 ? "bias" : "operand";
    rename_fresh(v, appended ? e.name + "." + role : target->input(slot));
    node_id operand = v;
    if (matmul && i == 1) {  // MatMul reads B as (K, N): store the new (N, K) weight transposed
      operand = transposed_copy(v);
      operand = make_view(operand);
    } else if (e.linear == linear_form::gemm && i == 1 && e.operands.size() > 1 &&
               at(e.operands[1]).src == source::view) {
      set_attr_int(*e.node, "transB", 1);  // the new weight is (N, K)
    }
    const std::string name =
        output_name(at(operand).src == source::view ? at(operand).base : operand);
    if (matmul && i == 2 && appended) {
      append_matmul_bias(e, name);
    } else if (appended) {
      int k = target->input_size();  // fill trailing empty (absent) optional inputs first
      while (k > 0 && target->input(k - 1).empty()) --k;
      if (k < target->input_size()) {
        target->set_input(k, name);
      } else {
        target->add_input(name);
      }
      if (e.linear == linear_form::gemm) set_attr_float(*e.node, "beta", 1.0f);  // C was absent
    } else {
      drop_reader(target->input(slot));
      target->set_input(slot, name);
    }
    ++values_.at(name).readers;
    if (i == e.operands.size()) {
      e.operands.push_back(operand);
    } else {
      e.operands[i] = operand;
    }
  }

  // Every reader of old's output (graph outputs included) reads v's output instead. When old is
  // v's only reader, v's output takes old's name (so graph outputs and value_info stay as they
  // were); otherwise an Identity forwards it.
  void replace_uses(node_id old, node_id v) {
    if (old == v) return;
    entry& o = mut(old);
    if (o.node == nullptr || o.node->output_size() == 0)
      throw std::logic_error("qfold_onnx: replace_uses of a node without outputs");
    const std::string target = o.node->output(0);
    const std::string from = output_name(v);
    const std::size_t reads_by_old =
        static_cast<std::size_t>(std::ranges::count(o.node->input(), from));
    value& fv = values_.at(from);
    const std::string dead = unique_name(target + "_qfold_replaced");
    o.node->set_output(0, dead);
    value moved = values_.at(target);
    values_.erase(target);
    values_[dead] = value{old, 0, 0};
    if (fv.readers == reads_by_old && fv.outputs == 0 && at(v).src == source::node) {
      set_output_name(v, target);
      moved.producer = v;
      values_[target] = moved;
      // `from` stays as an alias with old's reads so that erase(old) balances; it has no producer
      // left in the model and goes away with old.
      fv.producer = none;
      return;
    }
    onnx::NodeProto* id = new_node("Identity", o.node, unique_name(target + "_qfold_identity"));
    id->add_input(from);
    id->add_output(target);
    entry e;
    e.kind = qfold::op_kind::view;
    e.src = source::node;
    e.node = id;
    e.op = "Identity";
    e.name = id->name();
    e.order = o.order + 1;
    e.operands = {v};
    const node_id n = push(std::move(e));
    ++values_.at(from).readers;
    moved.producer = n;
    values_[target] = moved;
  }

  void erase(node_id n) {
    entry& e = mut(n);
    if (!e.alive) return;
    if (use_count(n) != 0) throw std::logic_error("qfold_onnx: erase of a node that is read");
    e.alive = false;
    switch (e.src) {
      case source::initializer:
        dead_tensors_.insert(e.tensor);
        values_.erase(e.tensor->name());
        if (e.tensor->raw_data().size() >= pool_min_bytes) {  // storage for add_constant
          pool_.emplace_back();
          pool_.back().swap(*e.tensor->mutable_raw_data());
        }
        return;
      case source::input:
        throw std::logic_error("qfold_onnx: a graph input cannot be erased");
      case source::view:
        if (at(e.base).alive && use_count(e.base) == 0 && is_constant_like(e.base)) erase(e.base);
        return;
      case source::node:
      case source::identity:
      case source::constant_node:
        break;
    }
    for (onnx::NodeProto* node : {e.node, e.matmul}) {
      if (node == nullptr || (node == e.matmul && e.matmul == e.node)) continue;
      kill_node(node);
      for (const std::string& in : node->input())
        if (!in.empty() && !(e.matmul != nullptr && node == e.node && in == e.matmul->output(0)))
          drop_reader(in);
      for (const std::string& out : node->output()) {
        const auto it = values_.find(out);
        if (it != values_.end() && it->second.producer == n) values_.erase(it);
      }
    }
    for (const std::string& in : e.implicit) drop_reader(in);
    if (e.src == source::identity && at(e.base).alive && use_count(e.base) == 0 &&
        is_constant_like(e.base))
      erase(e.base);
  }

  // Bytes that erasing n frees (an Identity or a view frees its initializer when they are its
  // only reader).
  [[nodiscard]] std::size_t constant_bytes(node_id n) const {
    const entry& e = at(n);
    switch (e.src) {
      case source::initializer:
        return tensor_bytes(*e.tensor);
      case source::constant_node:
        return e.tensor != nullptr ? tensor_bytes(*e.tensor) : e.scalar.size() * sizeof(float);
      case source::identity: {
        const auto it = values_.find(e.node->input(0));
        const bool sole = it != values_.end() && it->second.readers == 1 && it->second.outputs == 0;
        return sole ? constant_bytes(e.base) : 0;
      }
      case source::view:
        return use_count(e.base) == 0 ? constant_bytes(e.base) : 0;
      default:
        return 0;
    }
  }

 private:
  enum class source : std::uint8_t { initializer, input, node, identity, constant_node, view };
  enum class linear_form : std::uint8_t { none, gemm, matmul, matmul_add };

  struct entry {
    qfold::op_kind kind = qfold::op_kind::other;
    source src = source::node;
    std::string op;                       // ONNX op type (nodes)
    std::string name;                     // for reports
    std::string note;                     // why a foldable-looking node is not in the vocabulary
    onnx::TensorProto* tensor = nullptr;  // initializer, or a Constant node's `value`
    onnx::NodeProto* node = nullptr;      // the node (the Add of a MatMul + Add)
    onnx::NodeProto* matmul = nullptr;    // linear_form::matmul / matmul_add
    linear_form linear = linear_form::none;
    int bias_slot = -1;   // matmul_add: the Add's input holding the bias
    node_id base = none;  // identity, view: what they look through
    std::vector<node_id> operands;
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

  [[nodiscard]] const entry& at(node_id n) const {
    return entries_.at(static_cast<std::size_t>(n));
  }
  entry& mut(node_id n) { return entries_.at(static_cast<std::size_t>(n)); }
  node_id push(entry e) {
    entries_.push_back(std::move(e));
    return static_cast<node_id>(entries_.size() - 1);
  }

  // --- Attributes ------------------------------------------------------------------------------
  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, std::string_view key) {
    for (const auto& a : n.attribute())
      if (a.name() == key) return &a;
    return nullptr;
  }
  static std::int64_t attr_int(const onnx::NodeProto& n, std::string_view key, std::int64_t d) {
    const auto* a = attr(n, key);
    return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : d;
  }
  static float attr_float(const onnx::NodeProto& n, std::string_view key, float d) {
    const auto* a = attr(n, key);
    return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : d;
  }
  static std::string attr_string(const onnx::NodeProto& n, std::string_view key, std::string d) {
    const auto* a = attr(n, key);
    return a != nullptr && a->type() == onnx::AttributeProto::STRING ? a->s() : d;
  }
  static std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, std::string_view key) {
    const auto* a = attr(n, key);
    if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return {};
    return {a->ints().begin(), a->ints().end()};
  }
  static onnx::AttributeProto* mutable_attr(onnx::NodeProto& n, std::string_view key) {
    for (auto& a : *n.mutable_attribute())
      if (a.name() == key) return &a;
    auto* a = n.add_attribute();
    a->set_name(std::string(key));
    return a;
  }
  static void set_attr_int(onnx::NodeProto& n, std::string_view key, std::int64_t v) {
    auto* a = mutable_attr(n, key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void set_attr_float(onnx::NodeProto& n, std::string_view key, float v) {
    auto* a = mutable_attr(n, key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  // --- Tensors ---------------------------------------------------------------------------------
  static std::size_t element_size(std::int32_t type) {
    using T = onnx::TensorProto;
    switch (type) {
      case T::FLOAT:
      case T::INT32:
      case T::UINT32:
        return 4;
      case T::DOUBLE:
      case T::INT64:
      case T::UINT64:
      case T::COMPLEX64:
        return 8;
      case T::COMPLEX128:
        return 16;
      case T::FLOAT16:
      case T::BFLOAT16:
      case T::INT16:
      case T::UINT16:
        return 2;
      default:
        return 1;
    }
  }
  static std::size_t tensor_bytes(const onnx::TensorProto& t) {
    if (t.has_raw_data()) return t.raw_data().size();
    std::int64_t count = 1;
    for (const std::int64_t d : t.dims()) count *= d;
    return count < 0 ? 0 : static_cast<std::size_t>(count) * element_size(t.data_type());
  }
  static void byteswap_floats(std::string& raw) {
    for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
      std::swap(raw[i], raw[i + 3]);
      std::swap(raw[i + 1], raw[i + 2]);
    }
  }
  // A float32 tensor's data in place (raw_data or float_data); nullopt for other types, external
  // data, or data that does not match the shape.
  static std::optional<qfold::tensor_view<float>> float_tensor(const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
    if (t.data_location() == onnx::TensorProto::EXTERNAL || t.has_segment()) return std::nullopt;
    std::int64_t count = 1;
    for (const std::int64_t d : t.dims()) {
      if (d < 0) return std::nullopt;
      count *= d;
    }
    const std::span<const std::int64_t> shape(t.dims().data(),
                                              static_cast<std::size_t>(t.dims_size()));
    if (t.has_raw_data()) {
      if constexpr (std::endian::native != std::endian::little) return std::nullopt;
      const std::string& raw = t.raw_data();
      if (raw.size() != static_cast<std::size_t>(count) * sizeof(float) ||
          reinterpret_cast<std::uintptr_t>(raw.data()) % alignof(float) != 0)
        return std::nullopt;
      // The string's storage holds float objects: memcpy into it created them implicitly
      // (C++20 implicit object creation), so this reads them without a copy.
      return qfold::tensor_view<float>{
          std::span<const float>(reinterpret_cast<const float*>(raw.data()),
                                 static_cast<std::size_t>(count)),
          shape};
    }
    if (t.float_data_size() != count) return std::nullopt;
    return qfold::tensor_view<float>{
        std::span<const float>(t.float_data().data(), static_cast<std::size_t>(count)), shape};
  }
  [[nodiscard]] std::optional<qfold::tensor_view<float>> float_view(const entry& e) const {
    if (e.tensor != nullptr) return float_tensor(*e.tensor);
    if (e.src == source::constant_node) return qfold::tensor_view<float>{e.scalar, e.shape};
    return std::nullopt;
  }
  // The TensorProto behind a constant-like entry (initializer, Constant, Identity of those).
  [[nodiscard]] const onnx::TensorProto* tensor_of(node_id n) const {
    if (n == none) return nullptr;
    const entry& e = at(n);
    if (e.src == source::identity) return tensor_of(e.base);
    return e.src == source::initializer || e.src == source::constant_node ? e.tensor : nullptr;
  }
  [[nodiscard]] std::optional<std::vector<std::int64_t>> constant_shape(node_id n) const {
    if (n == none) return std::nullopt;
    const entry& e = at(n);
    if (e.kind != qfold::op_kind::constant) return std::nullopt;
    if (e.src == source::identity) return constant_shape(e.base);
    if (e.tensor != nullptr)
      return std::vector<std::int64_t>(e.tensor->dims().begin(), e.tensor->dims().end());
    if (e.src == source::constant_node) return e.shape;
    return std::nullopt;
  }
  [[nodiscard]] bool is_constant_like(node_id n) const {
    const source s = at(n).src;
    return s == source::initializer || s == source::identity || s == source::constant_node;
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
        return {e.node->output().begin(), e.node->output().end()};
    }
  }
  [[nodiscard]] std::string output_name(node_id v) const {
    const entry& e = at(v);
    if (e.src == source::initializer || e.src == source::input) return e.name;
    if (e.node == nullptr || e.node->output_size() == 0)
      throw std::logic_error("qfold_onnx: node without an output");
    return e.node->output(0);
  }
  void set_output_name(node_id v, const std::string& name) {
    entry& e = mut(v);
    e.node->set_output(0, name);
  }
  void drop_reader(const std::string& name) {
    const auto it = values_.find(name);
    if (it == values_.end() || it->second.readers == 0) return;
    if (--it->second.readers == 0 && it->second.outputs == 0 && it->second.producer == none)
      values_.erase(it);
  }
  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (std::size_t k = 1; names_.contains(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }
  // A constant the pass just made (no reader yet) takes a readable name after what it replaces.
  void rename_fresh(node_id v, const std::string& base) {
    entry& c = mut(v);
    if (c.src != source::initializer || !c.name.starts_with("qfold_folded") ||
        values_.at(c.name).readers != 0)
      return;
    const std::string name = unique_name((base.empty() ? std::string("qfold") : base) + "_bnfold");
    const value moved = values_.at(c.name);
    values_.erase(c.name);
    names_.erase(c.name);
    c.tensor->set_name(name);
    c.name = name;
    values_[name] = moved;
  }
  // A copy of constant v, transposed (N, K) -> (K, N); v itself when v has no reader yet.
  node_id transposed_copy(node_id v) {
    const auto view = constant(v);
    if (!view || view->shape.size() != 2)
      throw std::logic_error("qfold_onnx: a MatMul weight must be a rank-2 float constant");
    const auto rows = static_cast<std::size_t>(view->shape[0]),
               cols = static_cast<std::size_t>(view->shape[1]);
    std::vector<float> t(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = view->data[r * cols + c];
    const std::int64_t shape[2] = {view->shape[1], view->shape[0]};
    entry& e = mut(v);
    if (e.src == source::initializer && values_.at(e.name).readers == 0 &&
        e.tensor->raw_data().size() == t.size() * sizeof(float)) {
      std::memcpy(e.tensor->mutable_raw_data()->data(), t.data(), t.size() * sizeof(float));
      e.tensor->set_dims(0, shape[0]);
      e.tensor->set_dims(1, shape[1]);
      return v;
    }
    return add_constant(t, shape);
  }
  node_id make_view(node_id base) {
    entry e;
    e.kind = qfold::op_kind::constant;
    e.src = source::view;
    e.base = base;
    e.name = at(base).name + " (transposed)";
    e.order = at(base).order;
    return push(std::move(e));
  }
  onnx::NodeProto* new_node(const char* op, const onnx::NodeProto* anchor, std::string name) {
    auto n = std::make_unique<onnx::NodeProto>();
    n->set_op_type(op);
    n->set_name(std::move(name));
    onnx::NodeProto* p = n.get();
    pending_.emplace_back(anchor, std::move(n));
    return p;
  }
  void kill_node(onnx::NodeProto* node) {
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->second.get() == node) {
        pending_.erase(it);
        return;
      }
    dead_nodes_.insert(node);
  }
  // MatMul without a bias gets an Add after it, and becomes MatMul + Add.
  void append_matmul_bias(entry& e, const std::string& bias) {
    const std::string out = e.matmul->output(0);
    const std::string product = unique_name(out + "_qfold_matmul");
    e.matmul->set_output(0, product);
    onnx::NodeProto* add = new_node("Add", e.matmul, unique_name(e.name + "_bias"));
    add->add_input(product);
    add->add_input(bias);
    add->add_output(out);
    names_.insert(product);
    values_[product] = value{values_.at(out).producer, 1, 0};
    e.node = add;
    e.op = "Add";
    e.linear = linear_form::matmul_add;
    e.bias_slot = 1;
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

  [[nodiscard]] std::optional<std::size_t> known_rank(const std::string& name) const {
    if (const auto it = ranks_.find(name); it != ranks_.end()) return it->second;
    if (const node_id p = value_producer(name); p != none)
      if (const auto s = constant_shape(p)) return s->size();
    if (!inferred_ && infer_) {
      inferred_ = true;
      for (auto& [k, r] : infer_(*model_)) ranks_.emplace(k, r);
      if (const auto it = ranks_.find(name); it != ranks_.end()) return it->second;
    }
    return std::nullopt;
  }
  void note_rank(const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks_[v.name()] = static_cast<std::size_t>(v.type().tensor_type().shape().dim_size());
  }

  // Names read inside a subgraph that it does not define (reads of the outer scope).
  static void outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string> defined,
                          std::vector<std::string>& reads) {
    for (const auto& i : g.input()) defined.insert(i.name());
    for (const auto& i : g.initializer()) defined.insert(i.name());
    for (const auto& n : g.node()) {
      for (const auto& in : n.input())
        if (!in.empty() && !defined.contains(in)) reads.push_back(in);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) outer_reads(a.g(), defined, reads);
        for (const auto& sub : a.graphs()) outer_reads(sub, defined, reads);
      }
      for (const auto& out : n.output()) defined.insert(out);
    }
    for (const auto& o : g.output())
      if (!defined.contains(o.name())) reads.push_back(o.name());
  }
  static void collect_names(const onnx::GraphProto& g, std::unordered_set<std::string>& names) {
    for (const auto& i : g.input()) names.insert(i.name());
    for (const auto& i : g.initializer()) names.insert(i.name());
    for (const auto& n : g.node()) {
      for (const auto& o : n.output()) names.insert(o);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_names(a.g(), names);
        for (const auto& sub : a.graphs()) collect_names(sub, names);
      }
    }
  }

  // --- Building --------------------------------------------------------------------------------
  static bool default_domain(const onnx::NodeProto& n) {
    return n.domain().empty() || n.domain() == "ai.onnx";
  }

  void build() {
    collect_names(*graph_, names_);
    for (const auto& v : graph_->input()) note_rank(v);
    for (const auto& v : graph_->value_info()) note_rank(v);
    for (const auto& v : graph_->output()) note_rank(v);
    std::unordered_set<std::string> inputs;
    for (const auto& v : graph_->input()) inputs.insert(v.name());
    for (auto& t : *graph_->mutable_initializer()) {
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
      entry e;
      e.kind = qfold::op_kind::input;
      e.src = source::input;
      e.name = v.name();
      values_[v.name()] = value{push(std::move(e)), 0, 0};
    }
    const auto producer_of = [&](const std::string& name) {
      if (auto it = values_.find(name); it != values_.end()) return it->second.producer;
      entry e;  // read but never defined here (an outer scope): a run-time input
      e.kind = qfold::op_kind::input;
      e.src = source::input;
      e.name = name;
      const node_id id = push(std::move(e));
      values_[name] = value{id, 0, 0};
      return id;
    };
    std::int64_t position = 0;
    for (auto& node : *graph_->mutable_node()) {
      entry e;
      e.node = &node;
      e.op = node.op_type();
      e.name = node.name().empty() ? (node.output_size() > 0 ? node.output(0) : node.op_type())
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
      for (const auto& out : node.output())
        if (!out.empty()) values_[out] = value{id, 0, 0};
    }
    for (const auto& o : graph_->output()) {
      producer_of(o.name());
      ++values_.at(o.name()).outputs;
    }
    // Classify in graph order (an Identity's input is classified before it).
    const std::size_t count = entries_.size();
    for (std::size_t i = 0; i < count; ++i)
      if (entries_[i].src == source::node) classify(static_cast<node_id>(i));
  }

  void classify(node_id id) {
    entry& e = mut(id);
    const onnx::NodeProto& n = *e.node;
    using qfold::op_kind;
    if (!default_domain(n)) return;
    const std::string& op = e.op;
    const auto input_entry = [&](int k) -> node_id {
      return k < n.input_size() && !n.input(k).empty() ? value_producer(n.input(k)) : none;
    };
    const auto constant_like = [&](node_id p) {
      return p != none && at(p).kind == op_kind::constant;
    };
    if (op == "Conv" || op == "ConvTranspose") {
      e.kind = op_kind::convolution;
      const bool t = op == "ConvTranspose";
      e.conv.groups = attr_int(n, "group", 1);
      e.conv.transposed = t;
      e.conv.layout = t ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s;
      const auto geo = geometry(id);  // unknown geometry counts as padded (fail closed)
      e.conv.padded = !geo || !geo->pads ||
                      std::ranges::any_of(*geo->pads, [](std::int64_t p) { return p != 0; });
    } else if (op == "BatchNormalization") {
      if (n.input_size() != 5) {
        e.note = "BatchNormalization without its five inputs";
      } else if (attr_int(n, "spatial", 1) != 1) {
        e.note = "BatchNormalization with spatial = 0 (statistics per element, not per channel)";
      } else {
        e.kind = op_kind::batch_norm;
        std::size_t outputs = 0;
        for (const auto& o : n.output()) outputs += o.empty() ? 0u : 1u;
        e.bn.epsilon = static_cast<double>(attr_float(n, "epsilon", 1e-5f));
        e.bn.training =
            attr_int(n, "training_mode", 0) != 0 || outputs > 1 || attr_int(n, "is_test", 1) == 0;
      }
    } else if (op == "Gemm") {
      const float alpha = attr_float(n, "alpha", 1.0f), beta = attr_float(n, "beta", 1.0f);
      const node_id c = input_entry(2);
      const auto c_shape = constant_shape(c);
      if (alpha != 1.0f) {
        e.note = "Gemm with alpha != 1";
      } else if (c != none && beta != 1.0f) {
        e.note = "Gemm with beta != 1";
      } else if (c_shape && (c_shape->size() > 2 || (c_shape->size() == 2 && (*c_shape)[0] != 1))) {
        e.note = "Gemm's C is not one value per output column";
      } else {
        e.kind = op_kind::linear;
        e.linear = linear_form::gemm;
        if (attr_int(n, "transB", 0) == 0 && e.operands.size() > 1 && constant_like(e.operands[1]))
          e.operands[1] = make_view(e.operands[1]);
      }
    } else if (op == "MatMul") {
      const node_id b = input_entry(1);
      const auto b_shape = constant_shape(b);
      if (!b_shape || b_shape->size() != 2) {
        e.note = "MatMul whose second input is not a constant matrix";
        return;
      }
      e.kind = op_kind::linear;
      e.linear = linear_form::matmul;
      e.matmul = e.node;
      e.operands[1] = make_view(b);
    } else if (op == "Add") {
      e.kind = op_kind::add;
      absorb_matmul(id);
    } else if (op == "Identity") {
      const node_id base = input_entry(0);
      if (constant_like(base)) {
        e.kind = op_kind::constant;
        e.src = source::identity;
        e.base = base;
      } else {
        e.kind = op_kind::view;
      }
    } else if (op == "Constant") {
      classify_constant(e);
    } else if (op == "Mul") {
      e.kind = op_kind::mul;
    } else if (op == "Div") {
      e.kind = op_kind::div;
    } else if (op == "QuantizeLinear") {
      e.kind = op_kind::quantize;
    } else if (op == "DequantizeLinear") {
      e.kind = op_kind::dequantize;
    } else if (op == "Reshape" || op == "Transpose" || op == "Flatten" || op == "Squeeze" ||
               op == "Unsqueeze" || op == "Slice") {
      e.kind = op_kind::view;
    }
  }

  void classify_constant(entry& e) {
    const onnx::NodeProto& n = *e.node;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        e.tensor = const_cast<onnx::TensorProto*>(&a.t());
      } else if (a.name() == "value_float") {
        e.scalar = {a.f()};
      } else if (a.name() == "value_floats") {
        e.scalar.assign(a.floats().begin(), a.floats().end());
        e.shape = {static_cast<std::int64_t>(e.scalar.size())};
      } else {
        return;  // integer / string / sparse constants: `other`
      }
    }
    e.kind = qfold::op_kind::constant;
    e.src = source::constant_node;
  }

  // Add(MatMul(x, B), c) with B a constant matrix, c a constant of shape (N) or (1, N), and the
  // Add the MatMul's only reader: one linear node, named after the Add.
  void absorb_matmul(node_id id) {
    entry& e = mut(id);
    const onnx::NodeProto& n = *e.node;
    if (n.input_size() != 2) return;
    for (int side = 0; side < 2; ++side) {
      const node_id mm = value_producer(n.input(side));
      const node_id bias = value_producer(n.input(1 - side));
      if (mm == none || bias == none || mm == bias) continue;
      entry& m = mut(mm);
      if (m.linear != linear_form::matmul || m.node->output(0) != n.input(side)) continue;
      const value& product = values_.at(n.input(side));
      if (product.readers != 1 || product.outputs != 0) {
        e.note = "the MatMul's output has another reader";
        return;
      }
      const auto shape = constant_shape(bias);
      if (!shape || shape->size() > 2 || (shape->size() == 2 && (*shape)[0] != 1)) {
        e.note = "Add after MatMul does not add a constant of shape (N) or (1, N)";
        return;
      }
      e.kind = qfold::op_kind::linear;
      e.linear = linear_form::matmul_add;
      e.matmul = m.node;
      e.bias_slot = 1 - side;
      e.operands = {m.operands[0], m.operands[1], bias};
      m.hidden = true;
      values_.at(n.input(side)).producer = id;
      return;
    }
  }

  onnx::ModelProto* model_;
  onnx::GraphProto* graph_;
  rank_inference infer_;
  std::deque<entry> entries_;  // stable references while new entries are added
  std::unordered_map<std::string, value> values_;
  std::unordered_set<std::string> names_;  // every name in the model, subgraphs included
  std::unordered_set<const onnx::NodeProto*> dead_nodes_;
  std::unordered_set<const onnx::TensorProto*> dead_tensors_;
  std::vector<std::pair<const onnx::NodeProto*, std::unique_ptr<onnx::NodeProto>>> pending_;
  static constexpr std::size_t pool_min_bytes = 64 * 1024;
  std::vector<std::string> pool_;  // raw_data storage of erased initializers
  mutable std::unordered_map<std::string, std::size_t> ranks_;
  mutable bool inferred_ = false;
};

static_assert(qfold::batch_norm_foldable_graph<graph>);

}  // namespace qfold_onnx
