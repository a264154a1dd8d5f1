// qfold's adapter for one func.func of MLIR's TOSA 1.0 dialect (MLIR 22): a thin wrapper over the
// function's entry block and a non-intrusive qfold::ir_traits specialization. Node ids are
// mlir::Values (op results and block arguments); every rewrite builds TOSA ops with an OpBuilder,
// in dominance order. Which operand of which op is what is qfold/graph/tosa_operands.hpp's: the
// parameters TOSA 1.0 requires to be constants (RESCALE's multiplier, shift and zero points, MUL's
// shift, the convolutions' zero points) are hidden operands read through the attribute points; one
// computed at run time makes the point throw qfold::parameter_not_constant (the site is refused).
#pragma once

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Tosa/IR/TosaOps.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinTypes.h>
#include <mlir/IR/Location.h>
#include <mlir/IR/Operation.h>
#include <mlir/IR/Value.h>

#include <algorithm>
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
#include <qfold/graph/tosa_operands.hpp>
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
  const auto i = llvm::dyn_cast_or_null<mlir::IntegerType>(t);
  if (!i) return std::nullopt;
  const unsigned w = i.getWidth();
  if (w != 8 && w != 16 && w != 32 && w != 48 && w != 64) return std::nullopt;
  if (i.isUnsigned() && w == 64) return std::nullopt;  // does not fit int64
  return int_element{w, i.isUnsigned()};
}
inline mlir::Type element_of(mlir::Value v) {
  const auto s = llvm::dyn_cast<mlir::ShapedType>(v.getType());
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
// RESCALE's element types: i8/i16/i32/i48 in, i8/i16/i32 out (signless: TOSA 1.0 flags an
// unsigned side with input_unsigned / output_unsigned), or the older ui8/ui16 on either side.
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
  if (const auto f = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    return f.getFilename().str() + ":" + std::to_string(f.getLine()) + ":" +
           std::to_string(f.getColumn());
  if (const auto n = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    if (llvm::isa<mlir::UnknownLoc>(n.getChildLoc())) return n.getName().str();
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
  const auto type = llvm::dyn_cast<mlir::RankedTensorType>(attr.getType());
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
  return llvm::dyn_cast<mlir::DenseElementsAttr>(c.getValuesAttr());
}

// TOSA 1.0's name for an op (qfold/graph/tosa_operands.hpp), from its MLIR name.
inline qfold::tosa::op tosa_op_of(mlir::Operation* op) {
  if (op == nullptr) return qfold::tosa::op::other;
  return qfold::tosa::op_named(std::string_view(op->getName().getStringRef()));
}

// A parameter operand: constant (the integers of its tosa.const), computed at run time, or a
// constant qfold cannot read as integers (bad input).
struct parameter {
  enum class state : std::uint8_t { constant, computed, unreadable } is = state::computed;
  std::optional<int_tensor> values;
  mlir::Type element;  // the tensor's element type
};
inline parameter read_parameter(mlir::Operation* op, std::size_t i) {
  parameter p;
  if (i >= op->getNumOperands()) {
    p.is = parameter::state::unreadable;
    return p;
  }
  const mlir::Value v = op->getOperand(static_cast<unsigned>(i));
  p.element = element_of(v);
  if (!llvm::isa_and_nonnull<mlir::tosa::ConstOp>(v.getDefiningOp())) return p;
  p.values = read_int_tensor(dense_of(v.getDefiningOp()));
  p.is = p.values ? parameter::state::constant : parameter::state::unreadable;
  return p;
}
// A one-element zero point as the spec means it (an unsigned side's value from its signless
// storage), or nullopt when it is not one integer.
inline std::optional<std::int64_t> zero_point_of(const parameter& p, bool is_unsigned) {
  if (p.is != parameter::state::constant || p.values->data.size() != 1) return std::nullopt;
  const auto e = int_element_of(p.element);
  const std::int64_t stored = p.values->data[0];
  if (!e || e->is_unsigned) return stored;  // an unsigned type holds the value itself
  return qfold::tosa::zero_point_value(stored, e->width, is_unsigned);
}

inline const char* operand_name(qfold::tosa::op o, std::size_t i) {
  using qfold::tosa::op;
  switch (o) {
    case op::rescale: {
      constexpr const char* n[] = {"input", "multiplier", "shift", "input_zp", "output_zp"};
      return i < 5 ? n[i] : "operand";
    }
    case op::mul:
      return i == 2 ? "shift" : "input";
    case op::table:
      return i == 1 ? "table" : "input";
    case op::conv2d:
    case op::depthwise_conv2d:
      return i == 3 ? "input_zp" : i == 4 ? "weight_zp" : "operand";
    case op::matmul:
      return i == 2 ? "a_zp" : i == 3 ? "b_zp" : "operand";
    default:
      return "operand";
  }
}
// Throws qfold::parameter_not_constant, naming the op and the operand.
[[noreturn]] inline void not_constant(mlir::Operation* op, std::size_t i) {
  throw qfold::parameter_not_constant("qfold_tosa: " + op->getName().getStringRef().str() + "'s " +
                                      operand_name(tosa_op_of(op), i) + " at " +
                                      location_string(op->getLoc()) +
                                      " is computed at run time, not a tosa.const");
}

// A RESCALE as qfold reads it. `computed`: a parameter is computed at run time (the folds refuse
// the site); `problem`: the constants break the spec's rules (bad input).
struct rescale_read {
  qfold::rescale_attributes attributes;
  element_range multipliers, shifts;
  std::optional<std::size_t> computed;  // the first parameter computed at run time
  std::string problem;
};
inline rescale_read read_rescale(mlir::tosa::RescaleOp op) {
  namespace t = qfold::tosa;
  rescale_read r;
  const mlir::Type in = element_of(op.getInput()), out = element_of(op.getOutput());
  const auto it = rescale_type_of(in, true), ot = rescale_type_of(out, false);
  if (!it || !ot) {
    r.problem = "tosa.rescale from " + type_string(in) + " to " + type_string(out) +
                ": unsupported element types (i8/i16/i32/i48 to i8/i16/i32)";
    return r;
  }
  auto& a = r.attributes;
  a.input_type = it->first;
  a.input_unsigned = it->second || op.getInputUnsigned();
  a.output_type = ot->first;
  a.output_unsigned = ot->second || op.getOutputUnsigned();
  a.scale32 = op.getScale32();
  switch (op.getRoundingMode()) {
    case mlir::tosa::RoundingMode::SINGLE_ROUND:
      a.rounding = qfold::rounding_mode::single_round;
      break;
    case mlir::tosa::RoundingMode::INEXACT_ROUND:
      a.rounding = qfold::rounding_mode::inexact_round;
      break;
    case mlir::tosa::RoundingMode::DOUBLE_ROUND:
      a.rounding = qfold::rounding_mode::double_round;
      break;
  }
  a.per_channel = op.getPerChannel();
  const parameter m = read_parameter(op, t::rescale_operand::multiplier),
                  s = read_parameter(op, t::rescale_operand::shift),
                  izp = read_parameter(op, t::rescale_operand::input_zp),
                  ozp = read_parameter(op, t::rescale_operand::output_zp);
  const parameter* params[] = {&m, &s, &izp, &ozp};
  for (std::size_t i = 0; i < 4; ++i) {
    if (params[i]->is == parameter::state::unreadable) {
      r.problem = std::string("tosa.rescale: the ") + operand_name(t::op::rescale, i + 1) +
                  " constant is not a dense integer tensor";
      return r;
    }
    if (params[i]->is == parameter::state::computed && !r.computed) r.computed = i + 1;
  }
  if (m.is == parameter::state::constant) {
    if (!is_signed_int(m.element, a.scale32 ? 32 : 16)) {
      r.problem = std::string("tosa.rescale: scale32 = ") + (a.scale32 ? "true" : "false") +
                  " needs an i" + (a.scale32 ? "32" : "16") + " multiplier, not " +
                  type_string(m.element);
      return r;
    }
    r.multipliers = m.values->data;
  }
  if (s.is == parameter::state::constant) {
    if (!is_signed_int(s.element, 8)) {
      r.problem = "tosa.rescale: the shift is " + type_string(s.element) + ", not i8";
      return r;
    }
    r.shifts = s.values->data;
  }
  const auto in_zp = zero_point_of(izp, a.input_unsigned),
             out_zp = zero_point_of(ozp, a.output_unsigned);
  if ((izp.is == parameter::state::constant && !in_zp) ||
      (ozp.is == parameter::state::constant && !out_zp)) {
    r.problem = "tosa.rescale: a zero point is not a single integer";
    return r;
  }
  a.input_zp = in_zp.value_or(0);
  a.output_zp = out_zp.value_or(0);
  if (r.computed) return r;
  if (r.multipliers.size() != r.shifts.size()) {
    r.problem = "tosa.rescale: " + std::to_string(r.multipliers.size()) + " multipliers but " +
                std::to_string(r.shifts.size()) + " shifts";
    return r;
  }
  std::size_t channels = 1;
  if (a.per_channel) {
    const auto type = llvm::dyn_cast<mlir::RankedTensorType>(op.getInput().getType());
    if (!type || type.getRank() < 1 || mlir::ShapedType::isDynamic(type.getShape().back())) {
      r.problem = "tosa.rescale: per_channel needs a static last dimension of the input";
      return r;
    }
    channels = static_cast<std::size_t>(type.getShape().back());
  }
  std::vector<qfold::scale_factor> scales;
  scales.reserve(r.multipliers.size());
  for (std::size_t i = 0; i < r.multipliers.size(); ++i)
    scales.push_back({static_cast<std::int32_t>(r.multipliers[i]), static_cast<int>(r.shifts[i])});
  if (const auto ok = qfold::validate(a, scales, channels); !ok) {
    r.problem = "tosa.rescale: " + std::string(ok.error().message);
    if (ok.error().index != qfold::error::no_index)
      r.problem += " (channel " + std::to_string(ok.error().index) + ")";
  }
  return r;
}

// What an op is to qfold, and why it is bad input if it is (empty: it is not).
struct inspection {
  qfold::op_kind kind = qfold::op_kind::other;
  std::string problem;
};

inline inspection inspect_table(mlir::tosa::TableOp op) {
  inspection r;
  const mlir::Type in = element_of(op.getInput1()), out = element_of(op.getOutput());
  const auto table = llvm::dyn_cast<mlir::RankedTensorType>(op.getTable().getType());
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
  if (const auto t = read_parameter(op, qfold::tosa::table_operand::table);
      t.is == parameter::state::unreadable) {
    r.problem = "tosa.table: the table constant is not a dense integer tensor";
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
  const parameter shift = read_parameter(op, qfold::tosa::mul_operand::shift);
  if (shift.is == parameter::state::constant) {
    const std::int64_t s = shift.values->data.size() == 1 ? shift.values->data[0] : -1;
    if (s < 0 || s > 63 || (s != 0 && ea->width != 32)) {
      r.problem = "tosa.mul: shift " + std::to_string(s) +
                  " (one value, 0..63, and 0 unless the inputs are i32)";
      return r;
    }
  } else if (shift.is == parameter::state::unreadable) {
    r.problem = "tosa.mul: the shift constant is not a dense integer tensor";
    return r;
  }
  r.kind = qfold::op_kind::mul;
  return r;
}

// CONV2D, DEPTHWISE_CONV2D (int8 x int8, i32 accumulator) and MATMUL with a constant right-hand
// side of one batch (a linear layer: TOSA 1.0 has no FULLY_CONNECTED); anything else `other`.
inline inspection inspect_conv(mlir::Operation* op, qfold::tosa::op o) {
  namespace t = qfold::tosa;
  inspection r;
  const bool matmul = o == t::op::matmul;
  if (!is_signed_int(element_of(op->getOperand(0)), 8) ||
      !is_signed_int(element_of(op->getOperand(1)), 8) ||
      !is_signed_int(element_of(op->getResult(0)), 32) ||
      (!matmul && !is_signed_int(element_of(op->getOperand(t::conv_operand::bias)), 32)))
    return r;  // float, or int16 x int8 with an i48 accumulator: not folded into
  if (matmul) {
    const auto b = llvm::dyn_cast<mlir::RankedTensorType>(op->getOperand(1).getType());
    if (!llvm::isa_and_nonnull<mlir::tosa::ConstOp>(op->getOperand(1).getDefiningOp()) || !b ||
        b.getRank() != 3 || b.getShape()[0] != 1)
      return r;  // a product of two activations, or one weight per batch: not a linear layer
  }
  const std::size_t zps[2] = {matmul ? t::matmul_operand::a_zp : t::conv_operand::input_zp,
                              matmul ? t::matmul_operand::b_zp : t::conv_operand::weight_zp};
  for (const std::size_t i : zps) {
    const parameter p = read_parameter(op, i);
    if (p.is == parameter::state::computed) continue;  // refused by the folds that read it
    const auto zp = zero_point_of(p, false);
    if (!zp || *zp < -128 || *zp > 127) {
      r.problem = op->getName().getStringRef().str() + ": the " + operand_name(o, i) +
                  " is not one int8 value";
      return r;
    }
  }
  r.kind = matmul ? qfold::op_kind::linear : qfold::op_kind::convolution;
  return r;
}

inline inspection inspect(mlir::Operation* operation) {
  using namespace mlir::tosa;
  using op = qfold::tosa::op;
  inspection r;
  const auto o = tosa_op_of(operation);
  switch (o) {
    case op::const_:
      if (llvm::isa<mlir::DenseElementsAttr>(llvm::cast<ConstOp>(operation).getValuesAttr()))
        r.kind = qfold::op_kind::constant;
      return r;
    case op::rescale: {
      auto read = read_rescale(llvm::cast<RescaleOp>(operation));
      if (read.problem.empty()) r.kind = qfold::op_kind::rescale;
      r.problem = std::move(read.problem);
      return r;
    }
    case op::table:
      return inspect_table(llvm::cast<TableOp>(operation));
    case op::mul:
      return inspect_mul(llvm::cast<MulOp>(operation));
    case op::add:
    case op::sub:
      if (is_signed_int(element_of(operation->getOperand(0)), 32) &&
          is_signed_int(element_of(operation->getOperand(1)), 32) &&
          is_signed_int(element_of(operation->getResult(0)), 32))
        r.kind = o == op::add ? qfold::op_kind::add : qfold::op_kind::sub;
      return r;
    case op::clamp: {
      auto c = llvm::cast<ClampOp>(operation);
      const mlir::Type in = element_of(c.getInput());
      const auto e = int_element_of(in);
      if (!e || e->is_unsigned || e->width > 32 || in != element_of(c.getOutput())) return r;
      const auto lo = llvm::dyn_cast<mlir::IntegerAttr>(c.getMinValAttr()),
                 hi = llvm::dyn_cast<mlir::IntegerAttr>(c.getMaxValAttr());
      if (!lo || !hi || lo.getValue().getBitWidth() > 64 || hi.getValue().getBitWidth() > 64) {
        r.problem = "tosa.clamp: min_val and max_val are not integers";
        return r;
      }
      if (lo.getValue().getSExtValue() > hi.getValue().getSExtValue()) {
        r.problem = "tosa.clamp: min_val " + std::to_string(lo.getValue().getSExtValue()) +
                    " above max_val " + std::to_string(hi.getValue().getSExtValue());
        return r;
      }
      r.kind = qfold::op_kind::clamp;
      return r;
    }
    case op::cast: {
      const auto a = int_element_of(element_of(operation->getOperand(0))),
                 b = int_element_of(element_of(operation->getResult(0)));
      if (a && b && !a->is_unsigned && !b->is_unsigned && a->width <= 32 && b->width <= 32)
        r.kind = qfold::op_kind::cast;
      return r;
    }
    case op::conv2d:
    case op::depthwise_conv2d:
    case op::matmul:
      return inspect_conv(operation, o);
    case op::reshape:
    case op::transpose:
    case op::slice:
      r.kind = qfold::op_kind::view;
      return r;
    case op::const_shape:
    case op::other:
      break;
  }
  return r;
}

// The operands qfold sees: TOSA 1.0's visible prefix (tosa_operands.hpp); all of an op qfold
// does not know.
inline std::size_t visible_operands(mlir::Operation* op) {
  const auto o = tosa_op_of(op);
  if (o == qfold::tosa::op::other) return op->getNumOperands();
  return std::min<std::size_t>(qfold::tosa::layout_of(o).visible, op->getNumOperands());
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

// A RESCALE's attributes and its multiplier / shift constants, read in place.
struct rescale_info {
  qfold::rescale_attributes attributes;
  detail::element_range multipliers, shifts;
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
    if (const auto a = llvm::dyn_cast<mlir::BlockArgument>(v))
      return "@" + func_.getSymName().str() + ":arg" + std::to_string(a.getArgNumber());
    mlir::Operation* op = v.getDefiningOp();
    std::string s =
        op->getName().getStringRef().str() + "@" + detail::location_string(op->getLoc());
    if (op->getNumResults() > 1)
      s += "#" + std::to_string(llvm::cast<mlir::OpResult>(v).getResultNumber());
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
    const auto type = llvm::dyn_cast<mlir::RankedTensorType>(attr.getType());
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
    const auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
    if (!t) return {};
    return {t.getShape().data(), t.getShape().size()};
  }
  [[nodiscard]] std::optional<qfold::dtype> element_type(mlir::Value v) const {
    return detail::dtype_of(detail::element_of(v));
  }
  // Throws qfold::parameter_not_constant when a parameter is computed at run time.
  [[nodiscard]] rescale_info rescale(mlir::Value v) const {
    rescale_info r;
    auto op = llvm::dyn_cast_or_null<mlir::tosa::RescaleOp>(v.getDefiningOp());
    if (!op) return r;
    const auto read = detail::read_rescale(op);
    if (read.computed) detail::not_constant(op, *read.computed);
    r.attributes = read.attributes;
    r.multipliers = read.multipliers;
    r.shifts = read.shifts;
    return r;
  }
  // The MUL's shift (-1: not one value in 0..63, refused by the folds); throws
  // qfold::parameter_not_constant when it is computed at run time.
  [[nodiscard]] int mul_shift(mlir::Value v) const {
    mlir::Operation* op = v.getDefiningOp();
    if (!llvm::isa_and_nonnull<mlir::tosa::MulOp>(op)) return 0;
    const auto p = detail::read_parameter(op, qfold::tosa::mul_operand::shift);
    if (p.is == detail::parameter::state::computed)
      detail::not_constant(op, qfold::tosa::mul_operand::shift);
    if (p.is != detail::parameter::state::constant || p.values->data.size() != 1) return -1;
    const std::int64_t s = p.values->data[0];
    return s >= 0 && s <= 63 ? static_cast<int>(s) : -1;
  }
  [[nodiscard]] qfold::clamp_attributes clamp_attributes(mlir::Value v) const {
    auto op = llvm::dyn_cast_or_null<mlir::tosa::ClampOp>(v.getDefiningOp());
    if (!op) return {};
    const auto lo = llvm::dyn_cast<mlir::IntegerAttr>(op.getMinValAttr()),
               hi = llvm::dyn_cast<mlir::IntegerAttr>(op.getMaxValAttr());
    if (!lo || !hi) return {1, 0};  // refused (inspect names it bad input)
    return {lo.getValue().getSExtValue(), hi.getValue().getSExtValue()};
  }
  // TOSA tensors carry no quantization parameters: zero points are RESCALE's and CONV's own.
  [[nodiscard]] std::optional<qfold::qparams> qparams(mlir::Value) const { return std::nullopt; }
  [[nodiscard]] bool qparams_shared(mlir::Value) const { return false; }

  [[nodiscard]] qfold::conv_attributes conv_attributes(mlir::Value v) const {
    qfold::conv_attributes a;
    a.input_channel_axis = 3;  // NHWC
    mlir::Operation* op = v.getDefiningOp();
    const auto padded = [](llvm::ArrayRef<std::int64_t> pad) {
      return std::ranges::any_of(pad, [](std::int64_t p) { return p != 0; });
    };
    if (auto c = llvm::dyn_cast_or_null<mlir::tosa::Conv2DOp>(op)) {
      a.layout = qfold::weight_layout::o_s_i;  // OHWI
      a.padded = padded(c.getPad());
    } else if (auto d = llvm::dyn_cast_or_null<mlir::tosa::DepthwiseConv2DOp>(op)) {
      a.layout = qfold::weight_layout::s_c_m;  // HWCM: one group per input channel
      a.padded = padded(d.getPad());
      const auto w = llvm::dyn_cast<mlir::RankedTensorType>(d.getWeight().getType());
      a.groups = w && w.getRank() == 4 && w.getShape()[2] > 0 ? w.getShape()[2] : 0;
    } else if (llvm::isa_and_nonnull<mlir::tosa::MatMulOp>(op)) {
      a.layout = qfold::weight_layout::s_i_o;  // b [1, in, out]
      a.input_channel_axis = 2;                // a [N, H, in]
    }
    return a;
  }
  // The zero points of a convolution or linear MATMUL; throws qfold::parameter_not_constant when
  // one is computed at run time.
  [[nodiscard]] std::optional<qfold::quantized_conv_attributes> quantized_conv(
      mlir::Value v) const {
    namespace t = qfold::tosa;
    mlir::Operation* op = v.getDefiningOp();
    const auto k = kind(v);
    if (k != qfold::op_kind::convolution && k != qfold::op_kind::linear) return std::nullopt;
    const bool matmul = k == qfold::op_kind::linear;
    const std::size_t in_i = matmul ? t::matmul_operand::a_zp : t::conv_operand::input_zp,
                      w_i = matmul ? t::matmul_operand::b_zp : t::conv_operand::weight_zp;
    const auto in = detail::read_parameter(op, in_i), w = detail::read_parameter(op, w_i);
    if (in.is == detail::parameter::state::computed) detail::not_constant(op, in_i);
    if (w.is == detail::parameter::state::computed) detail::not_constant(op, w_i);
    const auto in_zp = detail::zero_point_of(in, false), w_zp = detail::zero_point_of(w, false);
    if (!in_zp || !w_zp) return std::nullopt;
    auto& wzp = weight_zero_points_[op];
    wzp = *w_zp;
    return qfold::quantized_conv_attributes{*in_zp, std::span<const std::int64_t>(&wzp, 1),
                                            qfold::dtype::int8};
  }
  // Where layout view v puts its input's axis a, unchanged in size and order.
  [[nodiscard]] std::optional<std::int64_t> view_axis(mlir::Value v, std::int64_t a) const {
    mlir::Operation* op = v.getDefiningOp();
    if (op == nullptr || op->getNumOperands() < 1) return std::nullopt;
    const auto in = llvm::dyn_cast<mlir::RankedTensorType>(op->getOperand(0).getType());
    const auto out = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
    if (!in || !out || a < 0 || a >= in.getRank() || !in.hasStaticShape() || !out.hasStaticShape())
      return std::nullopt;
    const auto ia = static_cast<std::size_t>(a);
    if (auto t = llvm::dyn_cast<mlir::tosa::TransposeOp>(op)) {
      const llvm::ArrayRef<std::int32_t> p = t.getPerms();
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
      // start and size are tosa.const_shape operands (one value per axis).
      const auto start = shape_values(s.getStart()), size = shape_values(s.getSize());
      if (!start || !size || start->size() != static_cast<std::size_t>(in.getRank()) ||
          size->size() != start->size())
        return std::nullopt;
      if ((*start)[ia] == 0 && (*size)[ia] == in.getShape()[ia]) return a;
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
    return make_constant(mlir::DenseElementsAttr::get(llvm::cast<mlir::ShapedType>(type), values));
  }
  // A new TABLE on `input` with a private tosa.const: 256 int8 entries (i8 in, i8 out) or 513
  // int16 entries (i16 in, i32 out).
  mlir::Value add_table(mlir::Value input, std::span<const std::int8_t> values) {
    return make_table(input, values, 8, 8);
  }
  mlir::Value add_table(mlir::Value input, std::span<const std::int16_t> values) {
    return make_table(input, values, 16, 32);
  }
  // A new RESCALE of `input` in TOSA 1.0's form: attributes and scales as TOSA's (one, or one
  // per channel of the last axis with per_channel), checked with qfold::validate; its multiplier,
  // shift and zero points are new tosa.const ops (an unsigned side's zero point stored signless).
  mlir::Value add_rescale(mlir::Value input, const qfold::rescale_attributes& a,
                          std::span<const qfold::scale_factor> scales) {
    collect_garbage();
    const mlir::Type in_elem = detail::element_of(input);
    const auto it = detail::rescale_type_of(in_elem, true);
    if (!it || it->first != a.input_type || (it->second && !a.input_unsigned))
      throw std::invalid_argument(
          "qfold_tosa: add_rescale: the input's type is not the attributes' input type");
    std::size_t channels = 1;
    const auto in_type = llvm::dyn_cast<mlir::RankedTensorType>(input.getType());
    if (a.per_channel) {
      if (!in_type || in_type.getRank() < 1 ||
          mlir::ShapedType::isDynamic(in_type.getShape().back()))
        throw std::invalid_argument(
            "qfold_tosa: add_rescale: per_channel needs a static last dimension");
      channels = static_cast<std::size_t>(in_type.getShape().back());
    }
    if (const auto ok = qfold::validate(a, scales, channels); !ok)
      throw std::invalid_argument("qfold_tosa: add_rescale: " + std::string(ok.error().message));
    const auto out_bits = static_cast<unsigned>(qfold::bit_width(a.output_type));
    const mlir::Type out_elem = builder_.getIntegerType(out_bits);
    const auto in_bits = llvm::cast<mlir::IntegerType>(in_elem).getWidth();
    const auto in_zp = qfold::tosa::zero_point_stored(a.input_zp, std::min(in_bits, 32U),
                                                      a.input_unsigned && !it->second);
    const auto out_zp = qfold::tosa::zero_point_stored(a.output_zp, out_bits, a.output_unsigned);
    if (!in_zp || !out_zp)
      throw std::invalid_argument("qfold_tosa: add_rescale: a zero point outside its type");
    check_in_block(input);
    const auto out_type = llvm::cast<mlir::ShapedType>(input.getType()).clone(out_elem);
    const auto n = static_cast<std::int64_t>(scales.size());
    std::vector<llvm::APInt> m, s;
    m.reserve(scales.size());
    s.reserve(scales.size());
    for (const auto& f : scales) {
      m.emplace_back(a.scale32 ? 32 : 16, static_cast<std::uint64_t>(std::int64_t{f.multiplier}),
                     true);
      s.emplace_back(8, static_cast<std::uint64_t>(std::int64_t{f.shift}), true);
    }
    const auto vector = [&](unsigned bits, std::int64_t count, llvm::ArrayRef<llvm::APInt> v) {
      return mlir::DenseElementsAttr::get(
          mlir::RankedTensorType::get({count}, builder_.getIntegerType(bits)), v);
    };
    const llvm::APInt izp(in_bits, static_cast<std::uint64_t>(*in_zp), true);
    const llvm::APInt ozp(out_bits, static_cast<std::uint64_t>(*out_zp), true);
    const mlir::DenseElementsAttr attrs[] = {
        vector(a.scale32 ? 32 : 16, n, m), vector(8, n, s),
        mlir::DenseElementsAttr::get(mlir::RankedTensorType::get({1}, in_elem), izp),
        mlir::DenseElementsAttr::get(mlir::RankedTensorType::get({1}, out_elem), ozp)};
    mlir::Value params[4];
    std::size_t made = 0;
    try {
      for (; made < 4; ++made) params[made] = make_constant(attrs[made]);
    } catch (...) {  // all or nothing
      while (made > 0) erase_made_constant(params[--made]);
      throw;
    }
    place_after(input);
    // After the new constants when the input is an argument (they went to the block's start,
    // the first-made last).
    if (input.getDefiningOp() == nullptr)
      builder_.setInsertionPointAfter(params[0].getDefiningOp());
    mlir::tosa::RoundingMode rounding = mlir::tosa::RoundingMode::SINGLE_ROUND;
    if (a.rounding == qfold::rounding_mode::double_round)
      rounding = mlir::tosa::RoundingMode::DOUBLE_ROUND;
    if (a.rounding == qfold::rounding_mode::inexact_round)
      rounding = mlir::tosa::RoundingMode::INEXACT_ROUND;
    auto op = mlir::tosa::RescaleOp::create(
        builder_, location_of(input), out_type, input, params[0], params[1], params[2], params[3],
        a.scale32, rounding, a.per_channel, a.input_unsigned, a.output_unsigned);
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
  // Erases v's op when nothing reads it. Its hidden parameter constants (tosa_operands.hpp: a
  // RESCALE's multiplier, shift and zero points, a MUL's shift, a convolution's zero points, a
  // reshape's or slice's shape) and the private table of a TABLE that add_table made go with it
  // when nothing else reads them, at the next mutation point: qfold may still look at them (they
  // are nodes too) until then, and erases them itself when it does.
  void erase(mlir::Value v) noexcept {
    mlir::Operation* op = v.getDefiningOp();
    if (op == nullptr) return;
    for (const mlir::Value r : op->getResults())
      if (!r.use_empty()) return;
    // At most the five operands of a TOSA op, without allocating (erase must not throw).
    mlir::Operation* hidden[6] = {};
    std::size_t count = 0;
    for (std::size_t i = detail::visible_operands(op); i < op->getNumOperands() && count < 5; ++i)
      hidden[count++] = op->getOperand(static_cast<unsigned>(i)).getDefiningOp();
    if (const auto it = private_tables_.find(op); it != private_tables_.end()) {
      hidden[count++] = it->second;
      private_tables_.erase(it);
    }
    forget(op);
    op->erase();
    for (std::size_t i = 0; i < count; ++i) {
      mlir::Operation* h = hidden[i];
      if (h == nullptr || !h->use_empty() || garbage_.count(h) != 0 ||
          !llvm::isa<mlir::tosa::ConstOp, mlir::tosa::ConstShapeOp>(h))
        continue;
      try {
        garbage_.insert(h);
      } catch (...) {  // no memory for the note: erase it now (unless qfold may still read it)
        if (front_constants_.count(h) != 0) {
          forget(h);
          h->erase();
        }
      }
    }
  }
  [[noreturn]] void set_qparams(mlir::Value, const qfold::qparams&) {
    throw std::logic_error("qfold_tosa: TOSA tensors carry no qparams");
  }
  // Sets a convolution's input zero point: in place when the zero-point constant has no other
  // reader, else through a constant of its own before the conv; setting it back to what it was
  // reads the original constant again, so a rollback leaves the function as it was.
  void set_conv_input_zero_point(mlir::Value n, std::int64_t zp) {
    collect_garbage();
    namespace t = qfold::tosa;
    mlir::Operation* op = n.getDefiningOp();
    const auto k = detail::inspect(op).kind;
    if (k != qfold::op_kind::convolution && k != qfold::op_kind::linear)
      throw std::logic_error("qfold_tosa: set_conv_input_zero_point on a non-integer conv");
    if (zp < -128 || zp > 127)
      throw std::invalid_argument("qfold_tosa: an input zero point outside int8");
    const auto index = static_cast<unsigned>(
        k == qfold::op_kind::linear ? t::matmul_operand::a_zp : t::conv_operand::input_zp);
    const mlir::Value current = op->getOperand(index);
    auto c = llvm::dyn_cast_or_null<mlir::tosa::ConstOp>(current.getDefiningOp());
    if (!c) detail::not_constant(op, index);
    if (const auto now = detail::read_int_tensor(detail::dense_of(c));
        now && now->data.size() == 1 && now->data[0] == zp)
      return;  // already that value (a shared constant is not copied for nothing)
    const auto type = llvm::cast<mlir::RankedTensorType>(current.getType());
    const auto attr = mlir::DenseElementsAttr::get(
        type, llvm::APInt(type.getElementType().getIntOrFloatBitWidth(),
                          static_cast<std::uint64_t>(zp), true));
    if (const auto it = original_zero_points_.find(op); it != original_zero_points_.end()) {
      mlir::Operation* original = it->second;
      if (detail::dense_of(original) == attr) {  // back to the constant it read before
        changed();
        original_zero_points_.erase(it);
        op->setOperand(index, original->getResult(0));
        if (current.use_empty()) {
          forget(c);
          c->erase();
        }
        return;
      }
    }
    if (current.hasOneUse()) {
      changed();
      c.setValuesAttr(attr);
      return;
    }
    builder_.setInsertionPoint(op);
    auto own = mlir::tosa::ConstOp::create(builder_, location_of(n), type, attr);
    try {
      original_zero_points_.emplace(op, c.getOperation());
    } catch (...) {  // all or nothing
      own->erase();
      throw;
    }
    changed();
    op->setOperand(index, own.getResult());
  }

  // Erases the constants left without readers (see erase). Runs at every mutation point and when
  // the graph goes; call it before printing the function.
  void collect_garbage() noexcept {
    changed();
    std::unordered_set<mlir::Operation*> garbage;
    garbage.swap(garbage_);  // forget() below edits garbage_
    for (mlir::Operation* op : garbage)
      if (op->use_empty()) {
        forget(op);
        op->erase();
      }
  }

 private:
  // Drops every note about op before it is erased (its address may come back).
  void forget(mlir::Operation* op) noexcept {
    changed();
    garbage_.erase(op);
    front_constants_.erase(op);
    original_zero_points_.erase(op);
    for (auto it = original_zero_points_.begin(); it != original_zero_points_.end();)
      it = it->second == op ? original_zero_points_.erase(it) : std::next(it);
  }
  void erase_made_constant(mlir::Value v) noexcept {
    forget(v.getDefiningOp());
    v.getDefiningOp()->erase();
  }
  // The values of a tosa.const_shape operand (a shape, a slice's start or size), or nullopt.
  static std::optional<std::vector<std::int64_t>> shape_values(mlir::Value v) {
    auto c = llvm::dyn_cast_or_null<mlir::tosa::ConstShapeOp>(v.getDefiningOp());
    if (!c) return std::nullopt;
    std::vector<std::int64_t> r;
    for (const llvm::APInt& x : c.getValuesAttr().getValues<llvm::APInt>()) {
      if (x.getSignificantBits() > 64) return std::nullopt;
      r.push_back(x.getSExtValue());
    }
    return r;
  }
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
    auto c = mlir::tosa::ConstOp::create(
        builder_, mlir::NameLoc::get(builder_.getStringAttr("qfold"), func_.getLoc()),
        attr.getType(), llvm::cast<mlir::ElementsAttr>(attr));
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
                                   : llvm::cast<mlir::BlockArgument>(v).getOwner() == block_;
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
        llvm::cast<mlir::ShapedType>(input.getType()).clone(builder_.getIntegerType(out_bits));
    const auto table_type = mlir::RankedTensorType::get({static_cast<std::int64_t>(entries)},
                                                        builder_.getIntegerType(bits));
    const auto attr =
        mlir::DenseElementsAttr::get(table_type, llvm::ArrayRef(values.data(), values.size()));
    check_in_block(input);
    const mlir::Value table = make_constant(attr);
    place_after(input);
    if (input.getDefiningOp() == nullptr) builder_.setInsertionPointAfter(table.getDefiningOp());
    auto op = mlir::tosa::TableOp::create(builder_, location_of(input), out_type, input, table);
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
      if (llvm::cast<mlir::BlockArgument>(v).getOwner() != block_)
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
  // conv -> the shared input zero-point constant it read before set_conv_input_zero_point
  std::unordered_map<mlir::Operation*, mlir::Operation*> original_zero_points_;
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
