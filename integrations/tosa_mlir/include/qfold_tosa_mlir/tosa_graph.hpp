// qfold's adapter for one func.func of LLVM 16's TOSA dialect (the pre-1.0 dialect: zero points
// and rounding are attributes): a thin wrapper over the function's entry block and a
// non-intrusive qfold::ir_traits specialization. Node ids are mlir::Values (op results and block
// arguments); every rewrite builds TOSA ops with an OpBuilder, in dominance order.
#pragma once

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Tosa/IR/TosaOps.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinTypes.h>
#include <mlir/IR/Location.h>
#include <mlir/IR/Operation.h>
#include <mlir/IR/Value.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <optional>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <qfold/quant/qparams.hpp>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace qfold_tosa {

static_assert(std::endian::native == std::endian::little,
              "qfold_tosa reads DenseElementsAttr raw data as little-endian");

namespace detail {

// An integer element type qfold can read: width 8, 16, 32, 48 or 64 (not unsigned 64), signless
// or signed (TOSA's signed types) or unsigned (ui8, ui16 of RESCALE).
struct int_element {
  unsigned width = 0;
  bool is_unsigned = false;
  friend bool operator==(const int_element&, const int_element&) = default;
};
inline std::optional<int_element> int_element_of(mlir::Type t) {
  const auto i = t.dyn_cast_or_null<mlir::IntegerType>();
  if (!i) return std::nullopt;
  const unsigned w = i.getWidth();
  if (w != 8 && w != 16 && w != 32 && w != 48 && w != 64) return std::nullopt;
  if (i.isUnsigned() && w == 64) return std::nullopt;  // does not fit int64
  return int_element{w, i.isUnsigned()};
}
inline mlir::Type element_of(mlir::Value v) {
  const auto s = v.getType().dyn_cast<mlir::ShapedType>();
  return s ? s.getElementType() : mlir::Type();
}
inline bool is_signed_int(mlir::Type t, unsigned width) {
  const auto e = int_element_of(t);
  return e && e->width == width && !e->is_unsigned;
}
inline std::optional<qfold::dtype> dtype_of(mlir::Type t) {
  const auto e = int_element_of(t);
  if (!e) return std::nullopt;
  if (e->width == 8) return e->is_unsigned ? qfold::dtype::uint8 : qfold::dtype::int8;
  if (e->width == 16) return e->is_unsigned ? qfold::dtype::uint16 : qfold::dtype::int16;
  if (e->width == 32 && !e->is_unsigned) return qfold::dtype::int32;
  return std::nullopt;
}
inline mlir::IntegerType type_of(mlir::MLIRContext* ctx, qfold::dtype d) {
  using S = mlir::IntegerType::SignednessSemantics;
  switch (d) {
    case qfold::dtype::int8:
      return mlir::IntegerType::get(ctx, 8);
    case qfold::dtype::uint8:
      return mlir::IntegerType::get(ctx, 8, S::Unsigned);
    case qfold::dtype::int16:
      return mlir::IntegerType::get(ctx, 16);
    case qfold::dtype::uint16:
      return mlir::IntegerType::get(ctx, 16, S::Unsigned);
    case qfold::dtype::int32:
      return mlir::IntegerType::get(ctx, 32);
  }
  throw std::invalid_argument("qfold_tosa: a dtype outside the enum");
}
// RESCALE's element types: i8/i16/i32/i48 in, i8/i16/i32 out, ui8/ui16 on either side.
inline std::optional<std::pair<qfold::int_type, bool>> rescale_type_of(mlir::Type t, bool input) {
  const auto e = int_element_of(t);
  if (!e) return std::nullopt;
  if (e->is_unsigned && e->width != 8 && e->width != 16) return std::nullopt;
  switch (e->width) {
    case 8:
      return std::pair{qfold::int_type::i8, e->is_unsigned};
    case 16:
      return std::pair{qfold::int_type::i16, e->is_unsigned};
    case 32:
      return std::pair{qfold::int_type::i32, false};
    case 48:
      if (input) return std::pair{qfold::int_type::i48, false};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}
inline std::string type_string(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (t)
    t.print(os);
  else
    os << "(none)";
  return os.str();
}
inline std::string location_string(mlir::Location loc) {
  if (const auto f = loc.dyn_cast<mlir::FileLineColLoc>())
    return f.getFilename().str() + ":" + std::to_string(f.getLine()) + ":" +
           std::to_string(f.getColumn());
  if (const auto n = loc.dyn_cast<mlir::NameLoc>()) {
    if (n.getChildLoc().isa<mlir::UnknownLoc>()) return n.getName().str();
    return n.getName().str() + "@" + location_string(n.getChildLoc());
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return os.str();
}

// The product of static, non-negative dims, or nullopt (dynamic, negative, overflow).
inline std::optional<std::size_t> element_count(llvm::ArrayRef<std::int64_t> shape) {
  std::size_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    const auto u = static_cast<std::size_t>(d);
    if (u != 0 && n > std::numeric_limits<std::size_t>::max() / u) return std::nullopt;
    n *= u;
  }
  return n;
}

// One element of a DenseElementsAttr's raw data (little-endian, `bytes` wide, a splat holds one).
struct element_reader {
  const char* raw = nullptr;
  std::size_t bytes = 1;
  bool splat = false;
  bool is_unsigned = false;
  std::int64_t operator()(std::size_t i) const noexcept {
    std::uint64_t u = 0;
    std::memcpy(&u, raw + (splat ? 0 : i * bytes), bytes);
    if (bytes >= 8) return static_cast<std::int64_t>(u);
    const auto bits = static_cast<unsigned>(8 * bytes);
    if (is_unsigned) return static_cast<std::int64_t>(u);
    const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
    return static_cast<std::int64_t>(u ^ sign) - static_cast<std::int64_t>(sign);
  }
};
// The elements of a DenseElementsAttr as int64, read in place (no copy; a splat is its one value
// repeated). A forward range with size() and operator[] (written out: clang 14 does not take
// libstdc++ 12's iota_view).
class element_range {
 public:
  class iterator {
   public:
    using value_type = std::int64_t;
    using difference_type = std::ptrdiff_t;
    using iterator_concept = std::forward_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // elements are values, not references
    iterator() = default;
    iterator(element_reader r, std::size_t i) noexcept : r_(r), i_(i) {}
    std::int64_t operator*() const noexcept { return r_(i_); }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }

   private:
    element_reader r_{};
    std::size_t i_ = 0;
  };
  element_range() = default;
  element_range(element_reader r, std::size_t count) noexcept : r_(r), count_(count) {}
  [[nodiscard]] iterator begin() const noexcept { return {r_, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {r_, count_}; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] std::int64_t operator[](std::size_t i) const noexcept { return r_(i); }

 private:
  element_reader r_{};
  std::size_t count_ = 0;
};
static_assert(std::forward_iterator<element_range::iterator>);

// The integer contents of a tosa.const, or nullopt (not dense, not an integer type we read, not a
// static shape, raw data whose size disagrees with the type).
struct int_tensor {
  element_range data;
  std::span<const std::int64_t> shape;
};
inline std::optional<int_tensor> read_int_tensor(mlir::DenseElementsAttr attr) {
  if (!attr) return std::nullopt;
  const auto type = attr.getType().dyn_cast<mlir::RankedTensorType>();
  if (!type) return std::nullopt;
  const auto e = int_element_of(type.getElementType());
  if (!e) return std::nullopt;
  const auto count = element_count(type.getShape());
  if (!count) return std::nullopt;
  const llvm::ArrayRef<char> raw = attr.getRawData();
  const std::size_t bytes = (e->width + 7) / 8;
  const bool splat = attr.isSplat();
  if (splat ? raw.size() != bytes : raw.size() != *count * bytes) return std::nullopt;
  const element_reader reader{raw.data(), bytes, splat, e->is_unsigned};
  return int_tensor{element_range(reader, *count),
                    std::span<const std::int64_t>(type.getShape().data(), type.getShape().size())};
}

inline mlir::DenseElementsAttr dense_of(mlir::Operation* op) {
  auto c = llvm::dyn_cast_or_null<mlir::tosa::ConstOp>(op);
  if (!c) return {};
  return c.getValueAttr().dyn_cast<mlir::DenseElementsAttr>();
}

// What an op is to qfold, and why it is bad input if it is (empty: it is not).
struct inspection {
  qfold::op_kind kind = qfold::op_kind::other;
  std::string problem;
};

inline inspection inspect_rescale(mlir::tosa::RescaleOp op) {
  inspection r;
  const mlir::Type in = element_of(op.getInput()), out = element_of(op.getOutput());
  const auto it = rescale_type_of(in, true), ot = rescale_type_of(out, false);
  if (!it || !ot) {
    r.problem = "tosa.rescale from " + type_string(in) + " to " + type_string(out) +
                ": unsupported element types (i8/i16/i32/i48/ui8/ui16 to i8/i16/i32/ui8/ui16)";
    return r;
  }
  qfold::rescale_attributes a;
  a.input_type = it->first;
  a.input_unsigned = it->second;
  a.output_type = ot->first;
  a.output_unsigned = ot->second;
  a.scale32 = op.getScale32();
  a.rounding =
      op.getDoubleRound() ? qfold::rounding_mode::double_round : qfold::rounding_mode::single_round;
  a.per_channel = op.getPerChannel();
  a.input_zp = op.getInputZpAttr().getInt();
  a.output_zp = op.getOutputZpAttr().getInt();
  const auto m = op.getMultiplier(), s = op.getShift();
  if (m.size() != s.size()) {
    r.problem = "tosa.rescale: " + std::to_string(m.size()) + " multipliers but " +
                std::to_string(s.size()) + " shifts";
    return r;
  }
  std::size_t channels = 1;
  if (a.per_channel) {
    const auto t = op.getInput().getType().dyn_cast<mlir::RankedTensorType>();
    if (!t || t.getRank() < 1 || mlir::ShapedType::isDynamic(t.getShape().back())) {
      r.problem = "tosa.rescale: per_channel needs a static last dimension of the input";
      return r;
    }
    channels = static_cast<std::size_t>(t.getShape().back());
  }
  std::vector<qfold::scale_factor> scales;
  scales.reserve(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) scales.push_back({m[i], static_cast<int>(s[i])});
  if (const auto ok = qfold::validate(a, scales, channels); !ok) {
    r.problem = "tosa.rescale: " + std::string(ok.error().message);
    if (ok.error().index != qfold::error::no_index)
      r.problem += " (channel " + std::to_string(ok.error().index) + ")";
    return r;
  }
  r.kind = qfold::op_kind::rescale;
  return r;
}

inline inspection inspect_table(mlir::tosa::TableOp op) {
  inspection r;
  const mlir::Type in = element_of(op.getInput()), out = element_of(op.getOutput());
  const auto table = op.getTable().getType().dyn_cast<mlir::RankedTensorType>();
  const bool int8 = is_signed_int(in, 8);
  if (!int8 && !is_signed_int(in, 16)) {
    r.problem = "tosa.table on " + type_string(in) + ": only i8 and i16 inputs are supported";
    return r;
  }
  const std::int64_t entries = int8 ? 256 : 513;
  if (!table || table.getRank() != 1 || table.getShape()[0] != entries ||
      !is_signed_int(table.getElementType(), int8 ? 8 : 16)) {
    r.problem = std::string("tosa.table: an ") + (int8 ? "i8" : "i16") +
                " input needs a table of " + std::to_string(entries) + (int8 ? " i8" : " i16") +
                " entries, not " + type_string(op.getTable().getType());
    return r;
  }
  if (!is_signed_int(out, int8 ? 8 : 32)) {
    r.problem = std::string("tosa.table: an ") + (int8 ? "i8" : "i16") + " input gives " +
                (int8 ? "i8" : "i32") + ", not " + type_string(out);
    return r;
  }
  r.kind = qfold::op_kind::table;
  return r;
}

inline inspection inspect_mul(mlir::tosa::MulOp op) {
  inspection r;
  const mlir::Type a = element_of(op.getInput1()), b = element_of(op.getInput2()),
                   out = element_of(op.getOutput());
  const auto ea = int_element_of(a);
  if (!ea || a != b || ea->is_unsigned || (ea->width != 8 && ea->width != 16 && ea->width != 32) ||
      !is_signed_int(out, 32))
    return r;  // float, or a combination TOSA does not define: not looked through
  const std::int64_t shift = op.getShiftAttr().getInt();
  if (shift < 0 || shift > 63 || (shift != 0 && ea->width != 32)) {
    r.problem =
        "tosa.mul: shift " + std::to_string(shift) + " (0..63, and 0 unless the inputs are i32)";
    return r;
  }
  r.kind = qfold::op_kind::mul;
  return r;
}

template <class Conv>
inline inspection inspect_conv(Conv op, qfold::op_kind kind) {
  inspection r;
  if (!is_signed_int(element_of(op.getInput()), 8) ||
      !is_signed_int(element_of(op.getWeight()), 8) ||
      !is_signed_int(element_of(op.getBias()), 32) ||
      !is_signed_int(element_of(op.getOutput()), 32))
    return r;  // float, or int16 x int8 with an i48 accumulator: not folded into
  if (const auto q = op.getQuantizationInfoAttr()) {
    const auto in_zp = q.getInputZp(), w_zp = q.getWeightZp();
    if (in_zp < -128 || in_zp > 127 || w_zp < -128 || w_zp > 127) {
      r.problem = std::string(op->getName().getStringRef()) + ": zero points " +
                  std::to_string(in_zp) + ", " + std::to_string(w_zp) + " outside int8";
      return r;
    }
  }
  r.kind = kind;
  return r;
}

inline inspection inspect(mlir::Operation* op) {
  using namespace mlir::tosa;
  inspection r;
  if (op == nullptr) return r;
  if (auto c = llvm::dyn_cast<ConstOp>(op)) {
    if (c.getValueAttr().isa<mlir::DenseElementsAttr>()) r.kind = qfold::op_kind::constant;
    return r;
  }
  if (auto o = llvm::dyn_cast<RescaleOp>(op)) return inspect_rescale(o);
  if (auto o = llvm::dyn_cast<TableOp>(op)) return inspect_table(o);
  if (auto o = llvm::dyn_cast<MulOp>(op)) return inspect_mul(o);
  if (llvm::isa<AddOp, SubOp>(op)) {
    if (is_signed_int(element_of(op->getOperand(0)), 32) &&
        is_signed_int(element_of(op->getOperand(1)), 32) &&
        is_signed_int(element_of(op->getResult(0)), 32))
      r.kind = llvm::isa<AddOp>(op) ? qfold::op_kind::add : qfold::op_kind::sub;
    return r;
  }
  if (auto o = llvm::dyn_cast<ClampOp>(op)) {
    const mlir::Type in = element_of(o.getInput());
    const auto e = int_element_of(in);
    if (!e || e->is_unsigned || e->width > 32 || in != element_of(o.getOutput())) return r;
    if (o.getMinIntAttr().getInt() > o.getMaxIntAttr().getInt()) {
      r.problem = "tosa.clamp: min_int " + std::to_string(o.getMinIntAttr().getInt()) +
                  " above max_int " + std::to_string(o.getMaxIntAttr().getInt());
      return r;
    }
    r.kind = qfold::op_kind::clamp;
    return r;
  }
  if (auto o = llvm::dyn_cast<CastOp>(op)) {
    const auto a = int_element_of(element_of(o.getInput())),
               b = int_element_of(element_of(o.getOutput()));
    if (a && b && !a->is_unsigned && !b->is_unsigned && a->width <= 32 && b->width <= 32)
      r.kind = qfold::op_kind::cast;
    return r;
  }
  if (auto o = llvm::dyn_cast<Conv2DOp>(op)) return inspect_conv(o, qfold::op_kind::convolution);
  if (auto o = llvm::dyn_cast<DepthwiseConv2DOp>(op))
    return inspect_conv(o, qfold::op_kind::convolution);
  if (auto o = llvm::dyn_cast<FullyConnectedOp>(op)) return inspect_conv(o, qfold::op_kind::linear);
  if (llvm::isa<ReshapeOp, TransposeOp, SliceOp>(op)) r.kind = qfold::op_kind::view;
  return r;
}

// The operands qfold sees: transpose's perms are an attribute to qfold (hidden).
inline std::size_t visible_operands(mlir::Operation* op) {
  if (llvm::isa<mlir::tosa::TransposeOp>(op)) return 1;
  return op->getNumOperands();
}

// The operands qfold sees of one op, as a view of the op's own operand list (no copy). Borrowed:
// an iterator stays valid after the view goes (it holds the op), so qfold may call
// std::ranges::begin on the view a point returned.
class operand_view {
 public:
  class iterator {
   public:
    using value_type = mlir::Value;
    using difference_type = std::ptrdiff_t;
    using iterator_concept = std::forward_iterator_tag;
    iterator() = default;
    iterator(mlir::Operation* op, unsigned i) noexcept : op_(op), i_(i) {}
    mlir::Value operator*() const { return op_->getOperand(i_); }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator r = *this;
      ++i_;
      return r;
    }
    friend bool operator==(const iterator&, const iterator&) = default;

   private:
    mlir::Operation* op_ = nullptr;
    unsigned i_ = 0;
  };
  operand_view() = default;
  operand_view(mlir::Operation* op, unsigned count) noexcept : op_(op), count_(count) {}
  [[nodiscard]] iterator begin() const noexcept { return {op_, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {op_, count_}; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] mlir::Value operator[](std::size_t i) const {
    return op_->getOperand(static_cast<unsigned>(i));
  }

 private:
  mlir::Operation* op_ = nullptr;
  unsigned count_ = 0;
};
static_assert(std::forward_iterator<operand_view::iterator>);

}  // namespace detail

// A RESCALE's attributes and its multiplier / shift arrays, as the op holds them.
struct rescale_info {
  qfold::rescale_attributes attributes;
  std::span<const std::int32_t> multipliers, shifts;
};

// One func.func seen by qfold. Make one graph per function at a time and change the function
// only through it while it lives: it caches what it read (op kinds, conv zero points) until its
// next change.
class graph {
 public:
  using node_id = mlir::Value;

  explicit graph(mlir::func::FuncOp f) : func_(f), builder_(f.getContext()) {
    if (!f.getBody().empty()) block_ = &f.getBody().front();
  }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  ~graph() { collect_garbage(); }

  [[nodiscard]] mlir::func::FuncOp function() const noexcept { return func_; }

  // Why the function is bad input for qfold, one message per op (with its location); empty when
  // it is fine. Ops qfold does not know are fine (they are `other`).
  [[nodiscard]] std::vector<std::string> problems() const {
    std::vector<std::string> r;
    if (block_ == nullptr) return r;
    for (mlir::Operation& op : *block_) {
      const auto i = detail::inspect(&op);
      if (!i.problem.empty()) r.push_back(detail::location_string(op.getLoc()) + ": " + i.problem);
    }
    return r;
  }
  // Functions with several blocks are folded in their entry block only.
  [[nodiscard]] bool single_block() const { return func_.getBody().hasOneBlock(); }

  // A readable name: the op and its location, or the function's argument number.
  [[nodiscard]] std::string name(mlir::Value v) const {
    if (const auto a = v.dyn_cast<mlir::BlockArgument>())
      return "@" + func_.getSymName().str() + ":arg" + std::to_string(a.getArgNumber());
    mlir::Operation* op = v.getDefiningOp();
    std::string s =
        op->getName().getStringRef().str() + "@" + detail::location_string(op->getLoc());
    if (op->getNumResults() > 1)
      s += "#" + std::to_string(v.cast<mlir::OpResult>().getResultNumber());
    return s;
  }
  // Names of every node now, by identity: a report may name nodes that a pass has since erased.
  [[nodiscard]] std::unordered_map<const void*, std::string> name_snapshot() const {
    std::unordered_map<const void*, std::string> r;
    for (const mlir::Value v : nodes()) r.emplace(v.getAsOpaquePointer(), name(v));
    return r;
  }

  // --- Structure -------------------------------------------------------------------------------
  // The entry block's arguments, then every result of its ops in order (dominance order).
  [[nodiscard]] std::vector<mlir::Value> nodes() const {
    std::vector<mlir::Value> r;
    if (block_ == nullptr) return r;
    for (const mlir::BlockArgument a : block_->getArguments()) r.push_back(a);
    for (mlir::Operation& op : *block_) {
      if (garbage_.count(&op) != 0) continue;
      for (const mlir::Value v : op.getResults()) r.push_back(v);
    }
    return r;
  }
  [[nodiscard]] qfold::op_kind kind(mlir::Value v) const {
    mlir::Operation* op = v.getDefiningOp();
    if (op == nullptr) return qfold::op_kind::input;
    if (const auto it = kinds_.find(op); it != kinds_.end()) return it->second;
    const qfold::op_kind k = detail::inspect(op).kind;
    kinds_.emplace(op, k);
    return k;
  }
  [[nodiscard]] detail::operand_view operands(mlir::Value v) const {
    mlir::Operation* op = v.getDefiningOp();
    if (op == nullptr) return {};
    return {op, static_cast<unsigned>(detail::visible_operands(op))};
  }
  [[nodiscard]] std::size_t use_count(mlir::Value v) const {
    return static_cast<std::size_t>(std::distance(v.use_begin(), v.use_end()));
  }

  // --- Constants and attributes ----------------------------------------------------------------
  [[nodiscard]] std::optional<qfold::tensor_view<float>> constant(mlir::Value v) const {
    const auto attr = detail::dense_of(v.getDefiningOp());
    if (!attr) return std::nullopt;
    const auto type = attr.getType().dyn_cast<mlir::RankedTensorType>();
    if (!type || !type.getElementType().isF32()) return std::nullopt;
    const auto count = detail::element_count(type.getShape());
    const llvm::ArrayRef<char> raw = attr.getRawData();
    if (!count) return std::nullopt;
    const std::span<const std::int64_t> shape(type.getShape().data(), type.getShape().size());
    if (!attr.isSplat() && raw.size() == *count * sizeof(float) &&
        reinterpret_cast<std::uintptr_t>(raw.data()) % alignof(float) == 0)
      return qfold::tensor_view<float>{
          std::span<const float>(reinterpret_cast<const float*>(raw.data()), *count), shape};
    // A splat (or unaligned data): expanded, up to a bound (the values are only ever needed for
    // small constants; a huge splat is not worth the memory).
    if (*count > (std::size_t{1} << 20) || raw.size() != (attr.isSplat() ? 1 : *count) * 4)
      return std::nullopt;
    auto& copy = float_copies_.emplace_back(*count);
    for (std::size_t i = 0; i < *count; ++i)
      std::memcpy(&copy[i], raw.data() + (attr.isSplat() ? 0 : 4 * i), 4);
    return qfold::tensor_view<float>{copy, shape};
  }
  [[nodiscard]] std::optional<detail::int_tensor> int_constant(mlir::Value v) const {
    return detail::read_int_tensor(detail::dense_of(v.getDefiningOp()));
  }
  [[nodiscard]] std::span<const std::int64_t> output_shape(mlir::Value v) const {
    const auto t = v.getType().dyn_cast<mlir::RankedTensorType>();
    if (!t) return {};
    return {t.getShape().data(), t.getShape().size()};
  }
  [[nodiscard]] std::optional<qfold::dtype> element_type(mlir::Value v) const {
    return detail::dtype_of(detail::element_of(v));
  }
  [[nodiscard]] rescale_info rescale(mlir::Value v) const {
    rescale_info r;
    auto op = llvm::dyn_cast_or_null<mlir::tosa::RescaleOp>(v.getDefiningOp());
    if (!op) return r;
    const auto it = detail::rescale_type_of(detail::element_of(op.getInput()), true);
    const auto ot = detail::rescale_type_of(detail::element_of(op.getOutput()), false);
    if (!it || !ot) return r;
    auto& a = r.attributes;
    a.input_type = it->first;
    a.input_unsigned = it->second;
    a.output_type = ot->first;
    a.output_unsigned = ot->second;
    a.scale32 = op.getScale32();
    a.rounding = op.getDoubleRound() ? qfold::rounding_mode::double_round
                                     : qfold::rounding_mode::single_round;
    a.per_channel = op.getPerChannel();
    a.input_zp = op.getInputZpAttr().getInt();
    a.output_zp = op.getOutputZpAttr().getInt();
    const auto m = op.getMultiplier(), s = op.getShift();
    r.multipliers = {m.data(), m.size()};
    r.shifts = {s.data(), s.size()};
    return r;
  }
  [[nodiscard]] int mul_shift(mlir::Value v) const {
    auto op = llvm::dyn_cast_or_null<mlir::tosa::MulOp>(v.getDefiningOp());
    if (!op) return 0;
    const std::int64_t s = op.getShiftAttr().getInt();
    return s >= 0 && s <= 63 ? static_cast<int>(s) : -1;  // -1: refused by the folds
  }
  [[nodiscard]] qfold::clamp_attributes clamp_attributes(mlir::Value v) const {
    auto op = llvm::dyn_cast_or_null<mlir::tosa::ClampOp>(v.getDefiningOp());
    if (!op) return {};
    return {op.getMinIntAttr().getInt(), op.getMaxIntAttr().getInt()};
  }
  // TOSA tensors carry no quantization parameters: zero points are RESCALE's and CONV's own.
  [[nodiscard]] std::optional<qfold::qparams> qparams(mlir::Value) const { return std::nullopt; }
  [[nodiscard]] bool qparams_shared(mlir::Value) const { return false; }

  [[nodiscard]] qfold::conv_attributes conv_attributes(mlir::Value v) const {
    qfold::conv_attributes a;
    a.input_channel_axis = 3;  // NHWC
    mlir::Operation* op = v.getDefiningOp();
    const auto padded = [](llvm::ArrayRef<std::int64_t> pad) {
      for (const std::int64_t p : pad)
        if (p != 0) return true;
      return false;
    };
    if (auto c = llvm::dyn_cast_or_null<mlir::tosa::Conv2DOp>(op)) {
      a.layout = qfold::weight_layout::o_s_i;  // OHWI
      a.padded = padded(c.getPad());
    } else if (auto d = llvm::dyn_cast_or_null<mlir::tosa::DepthwiseConv2DOp>(op)) {
      // HWCM: one group per input channel. qfold's layouts have no HWCM; the folds refuse it.
      a.layout = qfold::weight_layout::s_i_o;
      a.padded = padded(d.getPad());
      const auto w = d.getWeight().getType().dyn_cast<mlir::RankedTensorType>();
      a.groups = w && w.getRank() == 4 && w.getShape()[2] > 0 ? w.getShape()[2] : 0;
    } else if (llvm::isa_and_nonnull<mlir::tosa::FullyConnectedOp>(op)) {
      a.layout = qfold::weight_layout::o_i_s;  // (out, in)
      a.input_channel_axis = 1;
    }
    return a;
  }
  [[nodiscard]] std::optional<qfold::quantized_conv_attributes> quantized_conv(
      mlir::Value v) const {
    mlir::Operation* op = v.getDefiningOp();
    const auto k = kind(v);
    if (k != qfold::op_kind::convolution && k != qfold::op_kind::linear) return std::nullopt;
    const auto q = op->getAttrOfType<mlir::tosa::ConvOpQuantizationAttr>("quantization_info");
    auto& wzp = weight_zero_points_[op];
    wzp = q ? q.getWeightZp() : 0;
    return qfold::quantized_conv_attributes{
        q ? q.getInputZp() : 0, std::span<const std::int64_t>(&wzp, 1), qfold::dtype::int8};
  }
  // Where layout view v puts its input's axis a, unchanged in size and order.
  [[nodiscard]] std::optional<std::int64_t> view_axis(mlir::Value v, std::int64_t a) const {
    mlir::Operation* op = v.getDefiningOp();
    if (op == nullptr || op->getNumOperands() < 1) return std::nullopt;
    const auto in = op->getOperand(0).getType().dyn_cast<mlir::RankedTensorType>();
    const auto out = v.getType().dyn_cast<mlir::RankedTensorType>();
    if (!in || !out || a < 0 || a >= in.getRank() || !in.hasStaticShape() || !out.hasStaticShape())
      return std::nullopt;
    const auto ia = static_cast<std::size_t>(a);
    if (auto t = llvm::dyn_cast<mlir::tosa::TransposeOp>(op)) {
      const auto perms = detail::read_int_tensor(detail::dense_of(t.getPerms().getDefiningOp()));
      if (!perms) return std::nullopt;
      std::vector<std::int64_t> p;
      for (const std::int64_t x : perms->data) p.push_back(x);
      if (p.size() != static_cast<std::size_t>(out.getRank())) return std::nullopt;
      std::optional<std::int64_t> r;
      std::vector<bool> seen(p.size(), false);
      for (std::size_t b = 0; b < p.size(); ++b) {
        if (p[b] < 0 || p[b] >= in.getRank() || seen[static_cast<std::size_t>(p[b])])
          return std::nullopt;
        seen[static_cast<std::size_t>(p[b])] = true;
        if (p[b] == a) r = static_cast<std::int64_t>(b);
      }
      return r;
    }
    if (auto s = llvm::dyn_cast<mlir::tosa::SliceOp>(op)) {
      const auto start = s.getStart(), size = s.getSize();
      if (start.size() != static_cast<std::size_t>(in.getRank()) || size.size() != start.size())
        return std::nullopt;
      if (start[ia] == 0 && size[ia] == in.getShape()[ia]) return a;
      return std::nullopt;
    }
    if (llvm::isa<mlir::tosa::ReshapeOp>(op)) {
      // Same size and the same stride (product of the dims after it): the same coordinate.
      const auto stride = [](llvm::ArrayRef<std::int64_t> shape, std::size_t i) {
        return detail::element_count(shape.drop_front(i + 1));
      };
      const auto in_stride = stride(in.getShape(), ia);
      if (!in_stride) return std::nullopt;
      for (std::size_t b = 0; b < static_cast<std::size_t>(out.getRank()); ++b)
        if (out.getShape()[b] == in.getShape()[ia] && stride(out.getShape(), b) == in_stride)
          return static_cast<std::int64_t>(b);
      return std::nullopt;
    }
    return std::nullopt;
  }
  [[nodiscard]] std::size_t constant_bytes(mlir::Value v) const {
    const auto attr = detail::dense_of(v.getDefiningOp());
    return attr ? attr.getRawData().size() : 0;
  }

  // --- Mutation: each point checks everything first, then changes the IR with steps that cannot
  // fail (MLIR's own calls do not throw), so it does all it says or throws having changed nothing.
  mlir::Value add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    collect_garbage();
    check_shape(data.size(), shape);
    const auto type = mlir::RankedTensorType::get(llvm::ArrayRef(shape.data(), shape.size()),
                                                  builder_.getF32Type());
    const auto attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef(data.data(), data.size()));
    return make_constant(attr);
  }
  mlir::Value add_int_constant(std::span<const std::int64_t> data,
                               std::span<const std::int64_t> shape, qfold::dtype d) {
    collect_garbage();
    if (!qfold::is_valid(d)) throw std::invalid_argument("qfold_tosa: a dtype outside the enum");
    check_shape(data.size(), shape);
    const qfold::dtype_range range = qfold::range_of(d);
    const mlir::IntegerType et = detail::type_of(builder_.getContext(), d);
    std::vector<llvm::APInt> values;
    values.reserve(data.size());
    for (const std::int64_t x : data) {
      if (x < range.lo || x > range.hi)
        throw std::invalid_argument("qfold_tosa: a value outside the constant's type");
      values.emplace_back(et.getWidth(), static_cast<std::uint64_t>(x), !et.isUnsigned());
    }
    const auto type = mlir::RankedTensorType::get(llvm::ArrayRef(shape.data(), shape.size()), et);
    return make_constant(mlir::DenseElementsAttr::get(type.cast<mlir::ShapedType>(), values));
  }
  // A new TABLE on `input` with a private tosa.const: 256 int8 entries (i8 in, i8 out) or 513
  // int16 entries (i16 in, i32 out).
  mlir::Value add_table(mlir::Value input, std::span<const std::int8_t> values) {
    return make_table(input, values, 8, 8);
  }
  mlir::Value add_table(mlir::Value input, std::span<const std::int16_t> values) {
    return make_table(input, values, 16, 32);
  }
  // A new RESCALE of `input`: attributes and scales as TOSA's (one, or one per channel of the
  // last axis with per_channel); checked with qfold::validate. INEXACT_ROUND has no LLVM 16 form.
  mlir::Value add_rescale(mlir::Value input, const qfold::rescale_attributes& a,
                          std::span<const qfold::scale_factor> scales) {
    collect_garbage();
    const auto it = detail::rescale_type_of(detail::element_of(input), true);
    if (!it || it->first != a.input_type || it->second != a.input_unsigned)
      throw std::invalid_argument(
          "qfold_tosa: add_rescale: the input's type is not the "
          "attributes' input type");
    if (a.rounding == qfold::rounding_mode::inexact_round)
      throw std::invalid_argument("qfold_tosa: add_rescale: INEXACT_ROUND has no LLVM 16 form");
    std::size_t channels = 1;
    const auto in_type = input.getType().dyn_cast<mlir::RankedTensorType>();
    if (a.per_channel) {
      if (!in_type || in_type.getRank() < 1 ||
          mlir::ShapedType::isDynamic(in_type.getShape().back()))
        throw std::invalid_argument(
            "qfold_tosa: add_rescale: per_channel needs a static last "
            "dimension");
      channels = static_cast<std::size_t>(in_type.getShape().back());
    }
    if (const auto ok = qfold::validate(a, scales, channels); !ok)
      throw std::invalid_argument("qfold_tosa: add_rescale: " + std::string(ok.error().message));
    if (a.input_zp < INT32_MIN || a.input_zp > INT32_MAX || a.output_zp < INT32_MIN ||
        a.output_zp > INT32_MAX)
      throw std::invalid_argument("qfold_tosa: add_rescale: a zero point outside int32");
    using S = mlir::IntegerType::SignednessSemantics;
    const mlir::Type out_elem = mlir::IntegerType::get(
        builder_.getContext(), static_cast<unsigned>(qfold::bit_width(a.output_type)),
        a.output_unsigned ? S::Unsigned : S::Signless);
    const auto out_type = input.getType().cast<mlir::ShapedType>().clone(out_elem);
    std::vector<std::int32_t> m, s;
    m.reserve(scales.size());
    s.reserve(scales.size());
    for (const auto& f : scales) {
      m.push_back(f.multiplier);
      s.push_back(static_cast<std::int32_t>(f.shift));
    }
    check_in_block(input);
    place_after(input);
    auto op = builder_.create<mlir::tosa::RescaleOp>(
        location_of(input), out_type, input,
        builder_.getI32IntegerAttr(static_cast<std::int32_t>(a.input_zp)),
        builder_.getI32IntegerAttr(static_cast<std::int32_t>(a.output_zp)),
        builder_.getDenseI32ArrayAttr(m), builder_.getDenseI32ArrayAttr(s),
        builder_.getBoolAttr(a.scale32),
        builder_.getBoolAttr(a.rounding == qfold::rounding_mode::double_round),
        builder_.getBoolAttr(a.per_channel));
    return op.getResult();
  }

  void set_operand(mlir::Value n, std::size_t i, mlir::Value v) {
    collect_garbage();
    mlir::Operation* op = n.getDefiningOp();
    if (op == nullptr) throw std::logic_error("qfold_tosa: set_operand on a block argument");
    const std::size_t count = detail::visible_operands(op);
    if (i >= count)
      throw std::logic_error("qfold_tosa: TOSA ops have a fixed operand count (no append)");
    const auto idx = static_cast<unsigned>(i);
    if (op->getOperand(idx).getType() != v.getType())
      throw std::logic_error("qfold_tosa: set_operand with a value of another type");
    mlir::Operation* move = must_move(v, op);
    if (move != nullptr) move->moveBefore(op);
    op->setOperand(idx, v);
  }
  [[noreturn]] void remove_last_operand(mlir::Value) {
    throw std::logic_error("qfold_tosa: TOSA ops have a fixed operand count");
  }
  void replace_uses(mlir::Value old, mlir::Value v) {
    collect_garbage();
    if (old.getType() != v.getType())
      throw std::logic_error("qfold_tosa: replace_uses with a value of another type (" +
                             detail::type_string(old.getType()) + " by " +
                             detail::type_string(v.getType()) + ")");
    if (block_ == nullptr) throw std::logic_error("qfold_tosa: a function without a body");
    mlir::Operation* first = nullptr;
    for (mlir::OpOperand& use : old.getUses()) {
      mlir::Operation* user = block_->findAncestorOpInBlock(*use.getOwner());
      if (user == nullptr) throw std::logic_error("qfold_tosa: a reader outside the function");
      if (first == nullptr || user->isBeforeInBlock(first)) first = user;
    }
    if (first != nullptr) {
      mlir::Operation* move = must_move(v, first);
      if (move != nullptr) move->moveBefore(first);
    }
    old.replaceAllUsesWith(v);
  }
  // Erases v's op when nothing reads it. A transpose's perms constant (hidden from qfold) goes
  // with it when nothing else reads it; so does the private constant of a table add_table made,
  // but only at the next mutation point (qfold may still look at it, as operand 1 of the table,
  // until then: it erases it itself when it does).
  void erase(mlir::Value v) noexcept {
    mlir::Operation* op = v.getDefiningOp();
    if (op == nullptr) return;
    for (const mlir::Value r : op->getResults())
      if (!r.use_empty()) return;
    mlir::Operation* hidden = nullptr;
    if (auto t = llvm::dyn_cast<mlir::tosa::TransposeOp>(op)) hidden = t.getPerms().getDefiningOp();
    mlir::Operation* private_table = nullptr;
    if (const auto it = private_tables_.find(op); it != private_tables_.end()) {
      private_table = it->second;
      private_tables_.erase(it);
    }
    garbage_.erase(op);
    front_constants_.erase(op);
    changed();
    op->erase();
    if (hidden != nullptr && llvm::isa<mlir::tosa::ConstOp>(hidden) && hidden->use_empty()) {
      front_constants_.erase(hidden);
      hidden->erase();
    }
    if (private_table != nullptr && private_table->use_empty()) {
      try {
        garbage_.insert(private_table);
      } catch (...) {  // no memory for the note: erase it now (qfold reads it only if listed)
        private_table->erase();
      }
    }
  }
  [[noreturn]] void set_qparams(mlir::Value, const qfold::qparams&) {
    throw std::logic_error("qfold_tosa: TOSA tensors carry no qparams");
  }
  void set_conv_input_zero_point(mlir::Value n, std::int64_t zp) {
    collect_garbage();
    mlir::Operation* op = n.getDefiningOp();
    const auto k = detail::inspect(op).kind;
    if (k != qfold::op_kind::convolution && k != qfold::op_kind::linear)
      throw std::logic_error("qfold_tosa: set_conv_input_zero_point on a non-integer conv");
    if (zp < -128 || zp > 127)
      throw std::invalid_argument("qfold_tosa: an input zero point outside int8");
    const auto q = op->getAttrOfType<mlir::tosa::ConvOpQuantizationAttr>("quantization_info");
    op->setAttr("quantization_info", mlir::tosa::ConvOpQuantizationAttr::get(
                                         builder_.getContext(), zp, q ? q.getWeightZp() : 0));
  }

  // Erases the private table constants left without readers (see erase). Runs at every mutation
  // point and when the graph goes; call it before printing the function.
  void collect_garbage() noexcept {
    changed();
    for (mlir::Operation* op : garbage_)
      if (op->use_empty()) {
        front_constants_.erase(op);
        op->erase();
      }
    garbage_.clear();
  }

 private:
  // Forgets what was read: the views handed out live until the next change.
  void changed() const noexcept {
    // Swapped with empty maps, not cleared: clear() zeroes the whole bucket array, sized for the
    // largest function, at every mutation (78% of qfold-tosa-opt's instructions on 1,000 blocks).
    // An empty unordered_map allocates nothing, so this cannot throw.
    if (!kinds_.empty()) decltype(kinds_)().swap(kinds_);
    if (!weight_zero_points_.empty()) decltype(weight_zero_points_)().swap(weight_zero_points_);
    float_copies_.clear();
  }
  static void check_shape(std::size_t size, std::span<const std::int64_t> shape) {
    const auto count = detail::element_count(llvm::ArrayRef(shape.data(), shape.size()));
    if (!count || *count != size)
      throw std::invalid_argument("qfold_tosa: a constant's data does not match its shape");
  }
  [[nodiscard]] mlir::Location location_of(mlir::Value v) const {
    mlir::Operation* op = v.getDefiningOp();
    return mlir::NameLoc::get(builder_.getStringAttr("qfold"),
                              op != nullptr ? op->getLoc() : func_.getLoc());
  }
  mlir::Value make_constant(mlir::DenseElementsAttr attr) {
    if (block_ == nullptr) throw std::logic_error("qfold_tosa: a function without a body");
    builder_.setInsertionPointToStart(block_);
    auto c = builder_.create<mlir::tosa::ConstOp>(
        mlir::NameLoc::get(builder_.getStringAttr("qfold"), func_.getLoc()), attr.getType(),
        attr.cast<mlir::ElementsAttr>());
    try {
      front_constants_.insert(c.getOperation());
    } catch (...) {  // all or nothing
      c->erase();
      throw;
    }
    return c.getResult();
  }
  // The builder's insertion point: right after v's definition (the block's start for an argument).
  // Throws unless v is defined in the entry block (an argument or an op's result).
  void check_in_block(mlir::Value v) const {
    if (block_ == nullptr) throw std::logic_error("qfold_tosa: a function without a body");
    mlir::Operation* def = v.getDefiningOp();
    const bool in = def != nullptr ? def->getBlock() == block_
                                   : v.cast<mlir::BlockArgument>().getOwner() == block_;
    if (!in) throw std::logic_error("qfold_tosa: a value outside the function's entry block");
  }
  void place_after(mlir::Value v) {
    mlir::Operation* def = v.getDefiningOp();
    if (def == nullptr) {
      builder_.setInsertionPointToStart(block_);
    } else {
      builder_.setInsertionPointAfter(def);
    }
  }
  template <class V>
  mlir::Value make_table(mlir::Value input, std::span<const V> values, unsigned bits,
                         unsigned out_bits) {
    collect_garbage();
    const std::size_t entries = bits == 8 ? 256 : 513;
    if (values.size() != entries)
      throw std::invalid_argument("qfold_tosa: add_table: " + std::to_string(entries) +
                                  " entries expected, not " + std::to_string(values.size()));
    if (!detail::is_signed_int(detail::element_of(input), bits))
      throw std::invalid_argument("qfold_tosa: add_table: the input is not i" +
                                  std::to_string(bits));
    const auto out_type =
        input.getType().cast<mlir::ShapedType>().clone(builder_.getIntegerType(out_bits));
    const auto table_type = mlir::RankedTensorType::get({static_cast<std::int64_t>(entries)},
                                                        builder_.getIntegerType(bits));
    const auto attr =
        mlir::DenseElementsAttr::get(table_type, llvm::ArrayRef(values.data(), values.size()));
    check_in_block(input);
    const mlir::Value table = make_constant(attr);
    place_after(input);
    if (input.getDefiningOp() == nullptr) builder_.setInsertionPointAfter(table.getDefiningOp());
    auto op = builder_.create<mlir::tosa::TableOp>(location_of(input), out_type, input, table);
    try {
      private_tables_.emplace(op.getOperation(), table.getDefiningOp());
    } catch (...) {  // all or nothing
      op->erase();
      front_constants_.erase(table.getDefiningOp());
      table.getDefiningOp()->erase();
      throw;
    }
    return op.getResult();
  }
  // The op to move before `user` so that v dominates it (nullptr: v already does). Only ops the
  // adapter made move, and only when their own operands dominate `user`; otherwise it throws
  // before anything changed.
  mlir::Operation* must_move(mlir::Value v, mlir::Operation* user) const {
    if (block_ == nullptr) throw std::logic_error("qfold_tosa: a function without a body");
    mlir::Operation* in_block = block_->findAncestorOpInBlock(*user);
    if (in_block == nullptr) throw std::logic_error("qfold_tosa: a reader outside the function");
    mlir::Operation* def = v.getDefiningOp();
    if (def == nullptr) {
      if (v.cast<mlir::BlockArgument>().getOwner() != block_)
        throw std::logic_error("qfold_tosa: an argument of another block");
      return nullptr;
    }
    if (def->getBlock() != block_)
      throw std::logic_error("qfold_tosa: a value outside the function's entry block");
    if (dominates_block(def)) return nullptr;
    if (def == in_block || def->isBeforeInBlock(in_block)) {
      if (def == in_block) throw std::logic_error("qfold_tosa: an op would read itself");
      return nullptr;
    }
    const bool ours = llvm::isa<mlir::tosa::ConstOp>(def) || private_tables_.count(def) != 0;
    if (!ours) throw std::logic_error("qfold_tosa: the new value does not dominate its reader");
    for (const mlir::Value o : def->getOperands()) {
      mlir::Operation* od = o.getDefiningOp();
      if (od != nullptr && !dominates_block(od) &&
          (od->getBlock() != block_ || !od->isBeforeInBlock(in_block)))
        throw std::logic_error("qfold_tosa: the new value does not dominate its reader");
    }
    return def;
  }

  // A constant made at the block's start (and never moved) precedes every op of the block. Asked
  // first because isBeforeInBlock on ops inserted at the start renumbers the whole block every
  // few inserts (MLIR's order indices run out in front): quadratic, a third of the process time.
  [[nodiscard]] bool dominates_block(mlir::Operation* op) const {
    return front_constants_.count(op) != 0;
  }

  mutable mlir::func::FuncOp func_;
  mlir::Block* block_ = nullptr;
  mutable mlir::OpBuilder builder_;
  std::unordered_map<mlir::Operation*, mlir::Operation*> private_tables_;  // table -> its const
  std::unordered_set<mlir::Operation*> garbage_;
  std::unordered_set<mlir::Operation*> front_constants_;  // made by make_constant, erased on erase
  mutable std::unordered_map<mlir::Operation*, std::int64_t> weight_zero_points_;
  mutable std::deque<std::vector<float>> float_copies_;
  // kind() of each op seen, until the next change (an erased op's address may come back).
  mutable std::unordered_map<mlir::Operation*, qfold::op_kind> kinds_;
};

}  // namespace qfold_tosa

template <>
inline constexpr bool std::ranges::enable_borrowed_range<qfold_tosa::detail::operand_view> = true;

template <>
struct qfold::ir_traits<qfold_tosa::graph> {
  using G = qfold_tosa::graph;
  using node_id = mlir::Value;
  static auto nodes(const G& g) { return g.nodes(); }
  static qfold::op_kind kind(const G& g, node_id n) { return g.kind(n); }
  static auto operands(const G& g, node_id n) { return g.operands(n); }
  static std::size_t use_count(const G& g, node_id n) { return g.use_count(n); }
  static auto constant(const G& g, node_id n) { return g.constant(n); }
  static auto int_constant(const G& g, node_id n) { return g.int_constant(n); }
  static auto output_shape(const G& g, node_id n) { return g.output_shape(n); }
  static auto element_type(const G& g, node_id n) { return g.element_type(n); }
  static auto rescale(const G& g, node_id n) { return g.rescale(n); }
  static int mul_shift(const G& g, node_id n) { return g.mul_shift(n); }
  static auto clamp_attributes(const G& g, node_id n) { return g.clamp_attributes(n); }
  static auto qparams(const G& g, node_id n) { return g.qparams(n); }
  static bool qparams_shared(const G& g, node_id n) { return g.qparams_shared(n); }
  static auto conv_attributes(const G& g, node_id n) { return g.conv_attributes(n); }
  static auto quantized_conv(const G& g, node_id n) { return g.quantized_conv(n); }
  static auto view_axis(const G& g, node_id n, std::int64_t a) { return g.view_axis(n, a); }
  static std::size_t constant_bytes(const G& g, node_id n) { return g.constant_bytes(n); }

  static node_id add_constant(G& g, std::span<const float> d, std::span<const std::int64_t> s) {
    return g.add_constant(d, s);
  }
  static node_id add_int_constant(G& g, std::span<const std::int64_t> d,
                                  std::span<const std::int64_t> s, qfold::dtype t) {
    return g.add_int_constant(d, s, t);
  }
  static node_id add_table(G& g, node_id input, std::span<const std::int8_t> values) {
    return g.add_table(input, values);
  }
  static node_id add_table(G& g, node_id input, std::span<const std::int16_t> values) {
    return g.add_table(input, values);
  }
  static node_id add_rescale(G& g, node_id input, const qfold::rescale_attributes& a,
                             std::span<const qfold::scale_factor> s) {
    return g.add_rescale(input, a, s);
  }
  static void set_operand(G& g, node_id n, std::size_t i, node_id v) { g.set_operand(n, i, v); }
  static void remove_last_operand(G& g, node_id n) { g.remove_last_operand(n); }
  static void replace_uses(G& g, node_id old, node_id v) { g.replace_uses(old, v); }
  static void erase(G& g, node_id n) noexcept { g.erase(n); }
  static void set_qparams(G& g, node_id n, const qfold::qparams& q) { g.set_qparams(n, q); }
  static void set_conv_input_zero_point(G& g, node_id n, std::int64_t zp) {
    g.set_conv_input_zero_point(n, zp);
  }
};
