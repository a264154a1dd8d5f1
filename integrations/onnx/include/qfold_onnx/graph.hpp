// qfold_onnx::graph: the qfold adapter over an ONNX model (onnx::ModelProto, the protobuf classes
// of the ONNX C++ library), as member functions that qfold::ir_traits forwards to.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <qfold/fold/rejection.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model_table.hpp"

namespace qfold_onnx {

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
// looks foldable is not in the vocabulary as such, and refusal(n) gives the reason code when the
// node is invalid (bad dims, empty parameters, impossible attributes).
//
// Trust: nothing read from the model is trusted. Every count, product and offset is checked
// against the data actually present; constant() never hands out a view whose dims disagree with
// its data, nor an empty one. Declared shapes (value_info, graph outputs) are ignored: ranks are
// propagated by this adapter from the graph inputs' types and the constants' own dims through
// the ops whose rank rules it implements (unknown otherwise, and a fold that needs one refuses).
//
// Mutations: each mutation point either does all it says or throws having changed nothing
// (model and adapter); erase() never throws. Node ids index a table built once; commit() removes
// what was erased and places inserted nodes (call it before writing the model; the tool does).
class graph : public model_table {
 public:
  // aliases: the bytes of tensors parsed without their raw_data (see raw_aliases); the adapter
  // reads them and forgets the entries of tensors it erases. They must outlive the adapter.
  explicit graph(onnx::ModelProto& model, raw_aliases* aliases = nullptr)
      : model_table(model, aliases) {
    classify_all();
  }

  // --- Inspection ------------------------------------------------------------------------------
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
    return geometry_of(*e.node, weight_dims(*e.node));
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
  [[nodiscard]] std::size_t use_count(node_id n) const {  // allocates nothing (erase uses it)
    const entry& e = at(n);
    if (e.src == source::view) return use_count(e.base);
    const auto of = [&](const std::string& v) -> std::size_t {
      const auto it = values_.find(v);
      return it == values_.end() ? 0 : it->second.readers + it->second.outputs;
    };
    if (e.src == source::initializer || e.src == source::input) return of(e.name);
    if (e.node == nullptr) return 0;
    std::size_t count = 0;
    for (const std::string& v : e.node->output()) count += of(v);
    return count;
  }
  // A float32 constant's data and dims; nullopt unless n is a constant whose dims match its
  // data exactly and which holds at least one element (qfold's folds read an empty span as
  // "ones" or "zeros": an empty tensor must never reach them).
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
          // constant() checked rows * cols == data.size() without wrap.
          const auto rows = static_cast<std::size_t>(base->shape[0]),
                     cols = static_cast<std::size_t>(base->shape[1]);
          std::vector<float> t(rows * cols);
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = base->data[r * cols + c];
          e.view_data = std::move(t);
          e.view_shape = {base->shape[1], base->shape[0]};
          e.view_ready = true;
        }
        return qfold::tensor_view<float>{e.view_data, e.view_shape};
      }
      default:
        return float_view(e);
    }
  }
  // A float32 initializer's values where they lie, at any alignment: a tensor parsed as an alias
  // of the input file (parse_bytes_aliased) is read in place, without the aligned copy constant()
  // makes of misaligned bytes (the batch-norm pass reads a weight once, as it folds it). nullopt
  // for anything else: the pass then reads constant().
  [[nodiscard]] std::optional<qfold::unaligned_tensor_view> unaligned_constant(node_id n) const {
    const entry& e = at(n);
    if (!e.alive || e.kind != qfold::op_kind::constant) return std::nullopt;
    if (e.src == source::identity) return unaligned_constant(e.base);
    if constexpr (std::endian::native != std::endian::little) return std::nullopt;
    if (e.src != source::initializer || e.tensor == nullptr || aliases_ == nullptr)
      return std::nullopt;
    const onnx::TensorProto& t = *e.tensor;
    const auto it = aliases_->find(&t);
    if (it == aliases_->end() || it->second.data() == nullptr ||
        t.data_type() != onnx::TensorProto::FLOAT || !tensor_problem(t, aliases_).empty())
      return std::nullopt;
    // tensor_problem checked that the bytes are exactly the dims' count of floats.
    return qfold::unaligned_tensor_view{
        {reinterpret_cast<const std::byte*>(it->second.data()), it->second.size() / sizeof(float)},
        {t.dims().data(), static_cast<std::size_t>(t.dims_size())}};
  }
  [[nodiscard]] qfold::conv_attributes conv_attributes(node_id n) const { return at(n).conv; }
  [[nodiscard]] qfold::batch_norm_attributes batch_norm_attributes(node_id n) const {
    return at(n).bn;
  }
  // Rank of the node's (first) output as this adapter derives it; 0 when unknown. Gemm is rank
  // 2 by definition; MatMul (+ Add) from the propagated rank of its input, never from declared
  // shapes.
  [[nodiscard]] std::size_t output_rank(node_id n) const {
    const entry& e = at(n);
    if (e.linear == linear_form::gemm) return 2;
    if (e.linear == linear_form::matmul || e.linear == linear_form::matmul_add) {
      // MatMul (A, B) with B of rank 2 has A's rank (rank 1 A: rank 1); + a bias of rank <= 2.
      if (e.matmul == nullptr || e.matmul->input_size() < 1) return 0;
      const auto a = rank_of(e.matmul->input(0));
      if (!a || *a == 0) return 0;
      std::size_t rank = *a;
      if (e.linear == linear_form::matmul_add && e.bias_slot >= 0 &&
          e.bias_slot < e.node->input_size()) {
        const auto b = rank_of(e.node->input(e.bias_slot));
        if (!b) return 0;
        rank = std::max(rank, *b);
      }
      return rank;
    }
    const auto outs = outputs_of(e);
    if (outs.empty()) return 0;
    return rank_of(outs.front()).value_or(0);
  }

  // Room for the values of the next add_constant of `count` floats (qfold's optional point): in
  // the spill, where add_constant would keep them, so that a pass folding into it is not followed
  // by a copy of its results. Empty where add_constant would not use the spill (small tensors, no
  // spill, big-endian hosts): the pass then folds into its own buffer.
  std::span<float> constant_storage(std::size_t count) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      const auto bytes = checked::bytes(count, sizeof(float));
      if (aliases_ != nullptr && bytes && *bytes >= raw_aliases::min_bytes)
        if (const auto room = aliases_->spill.lend(*bytes); room.data() != nullptr)
          return {reinterpret_cast<float*>(room.data()), count};
    }
    return {};
  }

  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    std::string why;
    const auto count = checked::element_count(shape, &why);
    if (!count) throw std::invalid_argument("qfold_onnx: add_constant: " + why);
    if (*count != data.size())
      throw std::invalid_argument("qfold_onnx: add_constant: dims " + dims_string(shape) +
                                  " do not match " + std::to_string(data.size()) + " values");
    journal j(*this);
    auto t = float_initializer(shape);
    store_floats(j, *t, data);
    return add_initializer(j, std::move(t), shape.size());
  }

  // A constant of the values a batch-norm fold gives, made when the model is written (qfold's
  // optional point; write_model folds it piece by piece as it writes it, constant() makes it in
  // full). Only for weights in the mapped input, which outlives the model: any other storage may
  // be freed or reused once the pass erases the weights it replaces; and only for a fold that is
  // whole (values() of no value checks the shape and the scales). nullopt otherwise: the pass
  // then folds into storage.
  std::optional<node_id> add_scaled_constant(const qfold::scaled_weights& w) {
    if constexpr (std::endian::native != std::endian::little) return std::nullopt;
    const qfold::weights_view<float>& v = w.weights;
    const auto* at =
        v.values.empty() ? v.unaligned.bytes : reinterpret_cast<const std::byte*>(v.values.data());
    const auto bytes = checked::bytes(v.size(), sizeof(float));
    if (aliases_ == nullptr || at == nullptr || !bytes || *bytes < raw_aliases::min_bytes ||
        !within(aliases_->source, at, *bytes) || w.values(0, {}))
      return std::nullopt;
    raw_aliases::scaled d{at,       v.size(), {v.shape.begin(), v.shape.end()},  v.layout,
                          v.groups, v.kind,   {w.scales.begin(), w.scales.end()}};
    journal j(*this);
    auto t = float_initializer(d.shape);
    t->set_raw_data(std::string(1, '\0'));  // the placeholder
    const onnx::TensorProto* key = t.get();
    const std::size_t rank = d.shape.size();
    j.step([&] { aliases_->deferred.emplace(key, std::move(d)); },
           [this, key] { aliases_->deferred.erase(key); });
    return add_initializer(j, std::move(t), rank);
  }

  // Operand i of n becomes v (i == operand count appends). For a Gemm with transB = 0 or a
  // MatMul, operand 1 is the weight seen as (N, K): a new (N, K) constant is stored as the IR
  // wants it, and the transposed view the adapter made of the original weight restores it.
  void set_operand(node_id n, std::size_t i, node_id v) {
    valid(n);
    valid(v);
    entry& e = mut(n);
    if (!e.alive || e.node == nullptr)
      throw std::logic_error("qfold_onnx: set_operand on a non-node");
    if (i > e.operands.size()) throw std::out_of_range("qfold_onnx: operand index");
    const entry& ve = at(v);
    if (!ve.alive) throw std::logic_error("qfold_onnx: set_operand to an erased node");
    const bool matmul = e.linear == linear_form::matmul || e.linear == linear_form::matmul_add;
    const bool gemm_view = e.linear == linear_form::gemm && i == 1 && e.gemm_view != none;
    const bool to_view = ve.src == source::view;
    if (to_view && !((matmul && i == 1 && v == e.weight_view) || (gemm_view && v == e.gemm_view)))
      throw std::logic_error("qfold_onnx: a transposed view can only restore its own weight");
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
    const bool appended = i == e.operands.size();
    if (!appended && (slot < 0 || slot >= target->input_size()))
      throw std::logic_error("qfold_onnx: operand without an input slot");
    if (matmul && i == 1 && !to_view) {  // the new (N, K) weight must be a rank-2 constant
      const auto view = constant(v);
      if (!view || view->shape.size() != 2)
        throw std::invalid_argument("qfold_onnx: a MatMul weight must be a rank-2 float constant");
    }
    journal j(*this);
    node_id operand = v;
    std::string name;
    if (to_view) {
      name = output_name(ve.base);
    } else {
      const std::string role = i == 1 ? "weight" : i == 2 ? "bias" : "operand";
      rename_fresh(j, v, appended || slot < 0 ? e.name + "." + role : target->input(slot));
      if (matmul && i == 1) operand = transposed_copy(j, v);
      name = output_name(operand);
    }
    if (e.linear == linear_form::gemm && i == 1) {
      if (to_view) {
        restore_attr(j, *e.node, "transB", e.gemm_trans_b);
      } else if (gemm_view) {
        set_attr(j, *e.node, "transB", int_attr("transB", 1));  // the new weight is (N, K)
      }
    }
    append_record rec;
    rec.operand = i;
    if (matmul && i == 2 && appended) {
      append_matmul_bias(j, n, name);
      rec.made_add = true;
    } else if (appended) {
      int k = target->input_size();  // fill trailing empty (absent) optional inputs first
      while (k > 0 && target->input(k - 1).empty()) --k;
      rec.slot = k;
      std::string in = name;
      if (k < target->input_size()) {
        rec.filled = true;
        j.step([&] { target->mutable_input(k)->swap(in); },
               [target, k] { target->mutable_input(k)->clear(); });
      } else {
        j.step([&] { target->add_input()->swap(in); },
               [target] { target->mutable_input()->RemoveLast(); });
      }
      if (e.linear == linear_form::gemm) {  // C was absent: beta becomes 1
        rec.beta = snapshot(*e.node, "beta");
        rec.has_beta = true;
        set_attr(j, *e.node, "beta", float_attr("beta", 1.0f));
      }
    } else {
      const std::string old = target->input(slot);
      std::string in = name;
      j.step([&] { target->mutable_input(slot)->swap(in); },
             [target, slot, keep = std::string(old)]() mutable {
               target->mutable_input(slot)->swap(keep);
             });
      drop_reader(j, old);
    }
    add_reader(j, name);
    if (appended) {
      auto shared = std::make_shared<const append_record>(std::move(rec));
      j.step([&] { e.appends.push_back(shared); }, [&e] { e.appends.pop_back(); });
      j.step([&] { e.operands.push_back(operand); }, [&e] { e.operands.pop_back(); });
    } else {
      const node_id previous = e.operands[i];
      j.step([&] { e.operands[i] = operand; }, [&e, i, previous] { e.operands[i] = previous; });
    }
    j.done();
  }

  // n loses its last operand: the undo of an append by set_operand(n, operand count, v) (the
  // input slot becomes absent again, a bias Add made for a MatMul goes, Gemm's beta is as it
  // was). An operand the ONNX node needs (a MatMul + Add's bias) cannot be removed.
  void remove_last_operand(node_id n) {
    valid(n);
    entry& e = mut(n);
    if (!e.alive || e.node == nullptr)
      throw std::logic_error("qfold_onnx: remove_last_operand on a non-node");
    if (e.operands.empty()) throw std::logic_error("qfold_onnx: no operand to remove");
    const std::size_t i = e.operands.size() - 1;
    const bool matmul = e.linear == linear_form::matmul || e.linear == linear_form::matmul_add;
    const bool ours = !e.appends.empty() && e.appends.back()->operand == i;
    const auto held = ours ? e.appends.back() : std::make_shared<const append_record>();
    const append_record& rec = *held;
    if (matmul && i < 2) throw std::logic_error("qfold_onnx: a MatMul keeps both its inputs");
    if (matmul && !(ours && rec.made_add))
      throw std::logic_error("qfold_onnx: the bias of a MatMul + Add cannot be removed");
    int slot = ours ? rec.slot : physical_slot(*e.node, i);
    if (!rec.made_add && (slot < 0 || slot >= e.node->input_size()))
      throw std::logic_error("qfold_onnx: operand without an input slot");
    journal j(*this);
    if (rec.made_add) {
      remove_matmul_bias(j, n);
    } else {
      onnx::NodeProto* target = e.node;
      const std::string old = target->input(slot);
      const bool last = slot == target->input_size() - 1 && !(ours && rec.filled);
      if (last) {
        std::string keep = old;
        j.step([&] { target->mutable_input()->RemoveLast(); },
               [target, keep]() mutable { target->add_input()->swap(keep); });
      } else {
        std::string keep = old;
        j.step([&] { target->mutable_input(slot)->clear(); },
               [target, slot, keep]() mutable { target->mutable_input(slot)->swap(keep); });
      }
      drop_reader(j, old);
      if (ours && rec.has_beta) restore_attr(j, *e.node, "beta", rec.beta);
    }
    if (ours) j.step([&] { e.appends.pop_back(); }, [&e, held] { e.appends.push_back(held); });
    const node_id last_operand = e.operands.back();
    j.step([&] { e.operands.pop_back(); },
           [&e, last_operand] { e.operands.push_back(last_operand); });
    j.done();
  }

  // Every reader of old's output (graph outputs included) reads v's output instead. When old is
  // v's only reader, v's output takes old's name (so graph outputs and value_info stay as they
  // were); otherwise an Identity forwards it. Refused (thrown, nothing changed) for a node
  // without an output, or a v that is not a node with an output.
  void replace_uses(node_id old, node_id v) {
    valid(old);
    valid(v);
    if (old == v) return;
    entry& o = mut(old);
    if (!o.alive || o.node == nullptr || o.node->output_size() == 0 || o.node->output(0).empty())
      throw std::logic_error("qfold_onnx: replace_uses of a node without outputs");
    if (!at(v).alive) throw std::logic_error("qfold_onnx: replace_uses by an erased node");
    const std::string target = o.node->output(0);
    const std::string from = output_name(v);  // throws for a node without an output
    if (!values_.contains(from) || !values_.contains(target))
      throw std::logic_error("qfold_onnx: replace_uses of an unknown value");
    const std::size_t reads_by_old =
        static_cast<std::size_t>(std::ranges::count(o.node->input(), from));
    journal j(*this);
    const std::string dead = fresh_name(target + "_qfold_replaced");
    j.step([&] { names_.insert(dead); }, [this, dead] { names_.erase(dead); });
    {
      std::string out = dead;
      onnx::NodeProto* node = o.node;
      j.step([&] { node->mutable_output(0)->swap(out); },
             [node, keep = target]() mutable { node->mutable_output(0)->swap(keep); });
    }
    const value moved = values_.at(target);
    j.step([&] { values_.emplace(dead, value{old, 0, 0}); }, [this, dead] { values_.erase(dead); });
    const auto retarget = [&](node_id producer) {  // target's readers stay; its producer changes
      j.step([&] { values_.at(target).producer = producer; },
             [this, target, moved] { values_.at(target) = moved; });
    };
    const value fv = values_.at(from);
    if (fv.readers == reads_by_old && fv.outputs == 0 && at(v).src == source::node) {
      entry& ve = mut(v);
      {
        std::string out = target;
        onnx::NodeProto* node = ve.node;
        j.step([&] { node->mutable_output(0)->swap(out); },
               [node, keep = from]() mutable { node->mutable_output(0)->swap(keep); });
      }
      retarget(v);
      // `from` stays as an alias with old's reads so that erase(old) balances; it has no producer
      // left in the model and goes away with old.
      j.step([&] { values_.at(from).producer = none; },
             [this, from, fv] { values_.at(from) = fv; });
      move_rank(j, from, target);
      j.done();
      return;
    }
    retarget(add_identity(j, old, v, from, target));
    move_rank(j, from, target);
    j.done();
  }

  // Erases n when nothing reads it; never throws: a node it cannot erase (read, a graph input,
  // already erased, an unknown id) is left alone.
  void erase(node_id n) noexcept {
    if (n < 0 || static_cast<std::size_t>(n) >= entries_.size()) return;
    entry& e = entries_[static_cast<std::size_t>(n)];
    if (!e.alive || e.src == source::input || use_count(n) != 0) return;
    e.alive = false;
    switch (e.src) {
      case source::initializer:
        return drop_initializer(e);
      case source::input:
        return;
      case source::view:
        if (at(e.base).alive && use_count(e.base) == 0 && is_constant_like(e.base)) erase(e.base);
        return;
      case source::node:
      case source::identity:
      case source::constant_node:
        break;
    }
    if (e.inner != none) entries_[static_cast<std::size_t>(e.inner)].alive = false;
    onnx::NodeProto* const parts[2] = {e.node, e.matmul == e.node ? nullptr : e.matmul};
    for (onnx::NodeProto* node : parts) {
      if (node == nullptr) continue;
      const bool add_of_matmul = node == e.node && parts[1] != nullptr;
      for (const std::string& in : node->input())
        if (!in.empty() && !(add_of_matmul && parts[1]->output_size() > 0 &&
                             in == parts[1]->output(0)))  // the product is internal
          drop_reader_noexcept(in);
      for (const std::string& out : node->output()) {
        const auto it = values_.find(out);
        if (it != values_.end() && it->second.producer == n && it->second.readers == 0 &&
            it->second.outputs == 0)
          forget(out);
      }
    }
    for (onnx::NodeProto* node : parts)  // a node the adapter added is gone at once
      if (node != nullptr && kill_pending(node)) {
        if (e.node == node) e.node = nullptr;
        if (e.matmul == node) e.matmul = nullptr;
      }
    for (const std::string& in : e.implicit) drop_reader_noexcept(in);
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
        return e.tensor != nullptr ? tensor_bytes(*e.tensor, aliases_) : 0;
      case source::constant_node:
        return e.tensor != nullptr ? tensor_bytes(*e.tensor, aliases_)
                                   : e.scalar.size() * sizeof(float);
      case source::identity: {
        if (e.node == nullptr || e.node->input_size() < 1) return 0;
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
  // Constant v (N, K) stored transposed as (K, N) for a MatMul: v itself, rewritten, when it has
  // no reader yet (made by the pass for this), else a new constant.
  node_id transposed_copy(journal& j, node_id v) {
    const auto view = constant(v);  // checked by the caller: rank 2, dims match the data
    const auto rows = static_cast<std::size_t>(view->shape[0]),
               cols = static_cast<std::size_t>(view->shape[1]);
    std::string t(rows * cols * sizeof(float), '\0');
    std::vector<float> tv(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) tv[c * rows + r] = view->data[r * cols + c];
    std::memcpy(t.data(), tv.data(), t.size());
    if constexpr (std::endian::native == std::endian::big) byteswap_floats(t);
    const std::int64_t shape[2] = {view->shape[1], view->shape[0]};
    entry& e = mut(v);
    const auto it = values_.find(e.name);
    if (e.src == source::initializer && e.tensor != nullptr && it != values_.end() &&
        it->second.readers == 0 && e.tensor->has_raw_data()) {
      onnx::TensorProto* tensor = e.tensor;
      const std::int64_t d0 = tensor->dims(0), d1 = tensor->dims(1);
      auto keep = std::make_shared<std::string>(std::move(t));
      // An aliased tensor's view is switched off (raw_data then holds the bytes) and back: the
      // entry exists already, so neither direction allocates.
      std::string_view* alias = nullptr;
      if (aliases_ != nullptr)
        if (const auto a = aliases_->find(tensor); a != aliases_->end()) alias = &a->second;
      const std::string_view old_alias = alias != nullptr ? *alias : std::string_view();
      j.step(
          [&] {
            tensor->mutable_raw_data()->swap(*keep);
            tensor->set_dims(0, shape[0]);
            tensor->set_dims(1, shape[1]);
            if (alias != nullptr) *alias = std::string_view();
          },
          [tensor, keep, d0, d1, alias, old_alias] {
            tensor->mutable_raw_data()->swap(*keep);
            tensor->set_dims(0, d0);
            tensor->set_dims(1, d1);
            if (alias != nullptr) *alias = old_alias;
          });
      return v;
    }
    // add_constant is all or nothing itself; its undo is registered before it runs.
    auto copy = std::make_shared<node_id>(none);
    j.step([&] { *copy = add_constant(tv, shape); }, [this, copy] { erase(*copy); });
    return *copy;
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

  // Each node's place in qfold's vocabulary, in graph order (an Identity's input first). A model
  // the table found malformed fails closed: nothing is foldable.
  void classify_all() {
    if (!malformed_.empty()) {
      for (entry& e : entries_)
        if (e.op == "BatchNormalization") {
          e.note = malformed_;
          e.refusal = qfold::reason::invalid_shape;
        }
      return;
    }
    const std::size_t count = entries_.size();
    for (std::size_t i = 0; i < count; ++i)
      if (entries_[i].src == source::node) classify(static_cast<node_id>(i));
  }

  // Marks node id invalid: `other` with a note and a reason.
  void refuse(entry& e, qfold::reason why, std::string note) {
    e.kind = qfold::op_kind::other;
    e.refusal = why;
    e.note = std::move(note);
    e.linear = linear_form::none;
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
    const bool has_output = n.output_size() > 0 && !n.output(0).empty();
    if (op == "Conv" || op == "ConvTranspose") {
      // A weight that is a constant must have consistent data to be read at all.
      const node_id w = input_entry(1);
      if (const auto* t = tensor_of(w); t != nullptr && !tensor_problem(*t, aliases_).empty())
        return refuse(e, qfold::reason::invalid_shape,
                      op + " weight: " + tensor_problem(*t, aliases_));
      const auto dims = weight_dims(n);
      if (auto why = conv_problem(n, dims); !why.empty())
        return refuse(e, qfold::reason::invalid_shape, op + " " + why);
      e.kind = op_kind::convolution;
      const bool t = op == "ConvTranspose";
      e.conv.groups = attr_int(n, "group", 1);
      e.conv.transposed = t;
      e.conv.layout = t ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s;
      const auto geo = geometry_of(n, dims);  // unknown geometry counts as padded (fail closed)
      e.conv.padded =
          !geo.pads || std::ranges::any_of(*geo.pads, [](std::int64_t p) { return p != 0; });
    } else if (op == "BatchNormalization") {
      if (n.input_size() != 5 || n.input(0).empty() || !has_output) {
        e.note = "BatchNormalization without its five inputs and an output";
        e.refusal = qfold::reason::unsupported;
      } else if (attr_int(n, "spatial", 1) != 1) {
        e.note = "BatchNormalization with spatial = 0 (statistics per element, not per channel)";
      } else if (auto why = bn_problem(n); !why.first.empty()) {
        refuse(e, why.second, why.first);
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
      if (!has_output || n.input_size() < 2 || n.input(0).empty() || n.input(1).empty()) {
        e.note = "Gemm without its inputs and an output";
      } else if (alpha != 1.0f) {
        e.note = "Gemm with alpha != 1";
      } else if (c != none && beta != 1.0f) {
        e.note = "Gemm with beta != 1";
      } else if (c_shape && (c_shape->size() > 2 || (c_shape->size() == 2 && (*c_shape)[0] != 1))) {
        e.note = "Gemm's C is not one value per output column";
      } else if (attr_int(n, "transA", 0) != 0) {
        e.note = "Gemm with transA = 1";
      } else {
        e.kind = op_kind::linear;
        e.linear = linear_form::gemm;
        e.gemm_trans_b = snapshot(n, "transB");
        if (attr_int(n, "transB", 0) == 0 && e.operands.size() > 1 &&
            constant_like(e.operands[1])) {
          e.operands[1] = make_view(e.operands[1]);
          mut(id).gemm_view = e.operands[1];
        }
      }
    } else if (op == "MatMul") {
      const node_id b = input_entry(1);
      const auto b_shape = constant_shape(b);
      if (!b_shape || b_shape->size() != 2 || !has_output || n.input_size() != 2 ||
          n.input(0).empty() || e.operands.size() != 2) {
        e.note = "MatMul whose second input is not a constant matrix";
        return;
      }
      e.kind = op_kind::linear;
      e.linear = linear_form::matmul;
      e.matmul = e.node;
      const node_id view = make_view(b);
      entry& again = mut(id);  // make_view may grow the table; deque references stay valid
      again.operands[1] = view;
      again.weight_view = view;
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

  // Why a BatchNormalization's constant parameters cannot be folded (empty: they can): a
  // tensor whose dims disagree with its data, a parameter that is not one value per channel or
  // has no value at all (qfold's fold would read it as ones / zeros), lengths that differ.
  std::pair<std::string, qfold::reason> bn_problem(const onnx::NodeProto& n) const {
    static constexpr const char* names[] = {"scale", "B", "input_mean", "input_var"};
    std::optional<std::int64_t> length;
    for (int k = 1; k < 5; ++k) {
      const char* what = names[k - 1];
      if (n.input(k).empty())
        return {std::string("BatchNormalization without its ") + what,
                qfold::reason::invalid_shape};
      const node_id p = value_producer(n.input(k));
      if (p == none || at(p).kind != qfold::op_kind::constant) continue;  // not_constant later
      const onnx::TensorProto* t = tensor_of(p);
      if (t != nullptr && !tensor_problem(*t, aliases_).empty())
        return {std::string("BatchNormalization ") + what + ": " + tensor_problem(*t, aliases_),
                qfold::reason::invalid_shape};
      const auto shape = constant_shape(p);
      if (!shape) continue;
      if (shape->size() != 1)
        return {std::string("BatchNormalization ") + what + " has dims " + dims_string(*shape) +
                    " (one value per channel needed)",
                qfold::reason::invalid_shape};
      if ((*shape)[0] == 0)
        return {std::string("BatchNormalization ") + what + " is empty (dims (0))",
                qfold::reason::invalid_shape};
      if (length && *length != (*shape)[0])
        return {std::string("BatchNormalization ") + what + " has " + std::to_string((*shape)[0]) +
                    " values, the parameters before it " + std::to_string(*length),
                qfold::reason::channel_mismatch};
      length = (*shape)[0];
    }
    return {};
  }

  void classify_constant(entry& e) {
    const onnx::NodeProto& n = *e.node;
    if (n.output_size() < 1 || n.output(0).empty()) return;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        e.tensor = const_cast<onnx::TensorProto*>(&a.t());
      } else if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
        e.scalar = {a.f()};
        e.shape.clear();
      } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
        e.scalar.assign(a.floats().begin(), a.floats().end());
        e.shape = {static_cast<std::int64_t>(e.scalar.size())};
      } else {
        return;  // integer / string / sparse constants: `other`
      }
    }
    if (e.tensor == nullptr && e.scalar.empty() && n.attribute_size() == 0) return;
    e.kind = qfold::op_kind::constant;
    e.src = source::constant_node;
  }

  // Add(MatMul(x, B), c) with B a constant matrix, c a constant of shape (N) or (1, N), and the
  // Add the MatMul's only reader: one linear node, named after the Add.
  void absorb_matmul(node_id id) {
    entry& e = mut(id);
    const onnx::NodeProto& n = *e.node;
    if (n.input_size() != 2 || n.output_size() < 1 || n.output(0).empty() || e.operands.size() != 2)
      return;
    for (int side = 0; side < 2; ++side) {
      const node_id mm = value_producer(n.input(side));
      const node_id bias = value_producer(n.input(1 - side));
      if (mm == none || bias == none || mm == bias) continue;
      entry& m = mut(mm);
      if (m.linear != linear_form::matmul || !m.alive || m.hidden || m.node->output_size() < 1 ||
          m.node->output(0) != n.input(side) || m.operands.size() != 2)
        continue;
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
      e.weight_view = m.weight_view;
      e.inner = mm;
      m.hidden = true;
      values_.at(n.input(side)).producer = id;
      return;
    }
  }
};

static_assert(qfold::batch_norm_foldable_graph<graph>);

}  // namespace qfold_onnx
