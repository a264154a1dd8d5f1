// What the TOSA 1.0 adapter tests share: a parsed module (fixture), TOSA 1.0 function text built
// op by op with every parameter a tosa.const operand (func_text), a graph whose mutation points
// fail on demand (failing), and a model of TOSA 1.0 RESCALE written from the specification's
// pseudocode in 128-bit arithmetic, reading MLIR's ops directly (no qfold code in it).
#pragma once

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Tosa/IR/TosaOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OperationSupport.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/Parser/Parser.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_mlir/passes.hpp>
#include <qfold_tosa_mlir/tosa_graph.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"

namespace tosa_test {

using G = qfold_tosa::graph;

// A module parsed (and verified) from text; diagnostics go to standard error.
struct fixture {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  explicit fixture(const std::string& text, bool all_dialects = false)
      : context(registry(all_dialects)) {
    context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
    context.getDiagEngine().registerHandler([](mlir::Diagnostic& d) {
      llvm::errs() << "diagnostic: " << d.str() << "\n";  // a test module that does not parse
      return mlir::success();
    });
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
  static mlir::DialectRegistry registry(bool all) {
    mlir::DialectRegistry r;
    if (all) mlir::registerAllDialects(r);  // the executor modules print with vector, scf...
    return r;
  }
  // The first function, or the one called `name`.
  mlir::func::FuncOp func(const std::string& name = "") {
    for (mlir::func::FuncOp f : module->getOps<mlir::func::FuncOp>())
      if (name.empty() || f.getSymName() == name) return f;
    throw std::logic_error("no function " + name);
  }
  // The result of the k-th op called `name` in the first function's body.
  mlir::Value value(const std::string& name, int k = 0) {
    for (mlir::Operation& op : func().getBody().front())
      if (op.getName().getStringRef() == name && k-- == 0) return op.getResult(0);
    throw std::logic_error("no " + name);
  }
  // The result of the op located at loc("name") (func_text locates every op so).
  mlir::Value named(const std::string& name, const std::string& function = "") {
    for (mlir::Operation& op : func(function).getBody().front())
      if (const auto l = llvm::dyn_cast<mlir::NameLoc>(op.getLoc()))
        if (l.getName() == name) return op.getResult(0);
    throw std::logic_error("no op located at " + name);
  }
  // The module as printed, locations included (an op moved, remade or renamed shows).
  std::string print() {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
    return os.str();
  }
  std::string print(mlir::func::FuncOp f) {
    std::string s;
    llvm::raw_string_ostream os(s);
    f->print(os, mlir::OpPrintingFlags().enableDebugInfo());
    return os.str();
  }
  // Ops called `name` in the first function (or the one given).
  std::size_t count(const std::string& name, const std::string& function = "") {
    std::size_t n = 0;
    for (mlir::Operation& op : func(function).getBody().front())
      n += op.getName().getStringRef() == name ? 1U : 0U;
    return n;
  }
  // tosa.const and tosa.const_shape ops without a reader, in the whole module.
  std::size_t unused_constants() {
    std::size_t n = 0;
    module->walk([&](mlir::Operation* op) {
      n +=
          llvm::isa<mlir::tosa::ConstOp, mlir::tosa::ConstShapeOp>(op) && op->use_empty() ? 1U : 0U;
    });
    return n;
  }
  bool verifies() { return mlir::succeeded(mlir::verify(*module)); }
};

template <class R>
std::vector<std::int64_t> to_vector(const R& r) {
  std::vector<std::int64_t> v;
  for (const auto x : r) v.push_back(static_cast<std::int64_t>(x));
  return v;
}

// --- TOSA 1.0 text -----------------------------------------------------------------------------

// "i8" of "tensor<1x4xi8>".
inline std::string element_of(const std::string& tensor) {
  const auto end = tensor.rfind('>');
  const auto begin = tensor.find_last_of("<x", end);
  return tensor.substr(begin + 1, end - begin - 1);
}
// How a zero point is stored: an unsigned side's value in a signless tensor of its width, as
// two's-complement bits (uint8 131 as -125).
inline std::int64_t stored_zero_point(std::int64_t v, unsigned bits, bool is_unsigned) {
  const std::int64_t half = std::int64_t{1} << (bits - 1);
  return is_unsigned && v >= half ? v - 2 * half : v;
}
inline unsigned bits_of(const std::string& element) {
  return static_cast<unsigned>(std::stoul(element.substr(element.find_first_of("0123456789"))));
}
inline std::string list(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i != 0 ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A RESCALE's parameters as TOSA means them (an unsigned side's zero point 0..255), and operands
// to use instead of a constant of its own (a function argument, a shared constant).
struct rescale_spec {
  std::vector<std::int64_t> multipliers{1073741824}, shifts{30};
  std::int64_t input_zp = 0, output_zp = 0;
  std::string rounding = "SINGLE_ROUND";
  bool scale32 = true, per_channel = false, input_unsigned = false, output_unsigned = false;
  std::string m_operand, s_operand, izp_operand, ozp_operand;
};

// A RESCALE of one multiplier and shift (1 << 30, 30: the identity by default).
inline rescale_spec with_zero_points(std::int64_t input_zp, std::int64_t output_zp,
                                     std::int64_t multiplier = 1073741824,
                                     std::int64_t shift = 30) {
  rescale_spec r;
  r.multipliers = {multiplier};
  r.shifts = {shift};
  r.input_zp = input_zp;
  r.output_zp = output_zp;
  return r;
}

// One func.func in MLIR 22's TOSA 1.0 syntax, op by op; every op located at loc("its name"), so
// fixture::named finds it.
class func_text {
 public:
  // arguments: "%x: tensor<4xi8>, %m: tensor<1xi32>" (each usable as an operand); results:
  // "tensor<4xi8>, ...".
  func_text(std::string name, std::string arguments, std::string results)
      : name_(std::move(name)), arguments_(std::move(arguments)), results_(std::move(results)) {
    for (std::size_t at = 0; at < arguments_.size();) {
      const auto colon = arguments_.find(": ", at);
      auto end = arguments_.find(", %", colon);
      if (end == std::string::npos) end = arguments_.size();
      types_.emplace_back(arguments_.substr(at, colon - at),
                          arguments_.substr(colon + 2, end - colon - 2));
      at = end == arguments_.size() ? end : end + 2;
    }
  }

  std::string constant(const std::string& name, const std::string& values,
                       const std::string& type) {
    return op(name,
              "\"tosa.const\"() <{values = dense<" + values + "> : " + type + "}> : () -> " + type);
  }
  std::string shape(const std::string& name, const std::vector<std::int64_t>& values) {
    const std::string n = std::to_string(values.size());
    return op(name, "tosa.const_shape {values = dense<" + list(values) + "> : tensor<" + n +
                        "xindex>} : () -> !tosa.shape<" + n + ">");
  }
  // "%name = text loc("name")"; returns "%name".
  std::string op(const std::string& name, const std::string& text) {
    body_ += "  %" + name + " = " + text + " loc(\"" + name + "\")\n";
    return "%" + name;
  }
  std::string rescale(const std::string& name, const std::string& input, const std::string& from,
                      const std::string& to, const rescale_spec& s = {}) {
    const std::string in = element_of(from), out = element_of(to);
    const std::string mt = s.scale32 ? "i32" : "i16";
    const auto n = std::to_string(s.multipliers.size());
    const std::string m = !s.m_operand.empty() ? s.m_operand
                                               : constant(name + "_m", list(s.multipliers),
                                                          "tensor<" + n + "x" + mt + ">");
    const std::string sh = !s.s_operand.empty()
                               ? s.s_operand
                               : constant(name + "_s", list(s.shifts), "tensor<" + n + "xi8>");
    const std::string izp =
        !s.izp_operand.empty()
            ? s.izp_operand
            : constant(name + "_izp",
                       std::to_string(stored_zero_point(s.input_zp, bits_of(in), s.input_unsigned)),
                       "tensor<1x" + in + ">");
    const std::string ozp =
        !s.ozp_operand.empty()
            ? s.ozp_operand
            : constant(
                  name + "_ozp",
                  std::to_string(stored_zero_point(s.output_zp, bits_of(out), s.output_unsigned)),
                  "tensor<1x" + out + ">");
    const auto b = [](bool v) { return v ? "true" : "false"; };
    return op(name, "tosa.rescale " + input + ", " + m + ", " + sh + ", " + izp + ", " + ozp +
                        " {input_unsigned = " + b(s.input_unsigned) +
                        ", output_unsigned = " + b(s.output_unsigned) +
                        ", per_channel = " + b(s.per_channel) + ", rounding_mode = " + s.rounding +
                        ", scale32 = " + b(s.scale32) + "} : (" + from + ", " + type_of(m) + ", " +
                        type_of(sh) + ", " + type_of(izp) + ", " + type_of(ozp) + ") -> " + to);
  }
  // tosa.mul with a shift constant of its own (or shift_operand).
  std::string mul(const std::string& name, const std::string& a, const std::string& b,
                  const std::string& ta, const std::string& tb, const std::string& to,
                  int shift = 0, const std::string& shift_operand = "") {
    const std::string s = !shift_operand.empty()
                              ? shift_operand
                              : constant(name + "_shift", std::to_string(shift), "tensor<1xi8>");
    return op(name, "tosa.mul " + a + ", " + b + ", " + s + " : (" + ta + ", " + tb + ", " +
                        type_of(s) + ") -> " + to);
  }
  std::string table(const std::string& name, const std::string& input, const std::string& table,
                    const std::string& from, const std::string& to) {
    return op(name, "tosa.table " + input + ", " + table + " : (" + from + ", " + type_of(table) +
                        ") -> " + to);
  }
  // A conv2d or depthwise_conv2d (int8, acc_type i32) with zero-point constants of its own (or
  // the operands given).
  std::string conv(const std::string& name, const std::string& kind, const std::string& input,
                   const std::string& weight, const std::string& bias, const std::string& from,
                   const std::string& to, std::int64_t input_zp = 0, std::int64_t weight_zp = 0,
                   const std::string& pad = "0, 0, 0, 0", const std::string& izp_operand = "",
                   const std::string& wzp_operand = "") {
    const std::string izp = !izp_operand.empty()
                                ? izp_operand
                                : constant(name + "_izp", std::to_string(input_zp), "tensor<1xi8>");
    const std::string wzp =
        !wzp_operand.empty() ? wzp_operand
                             : constant(name + "_wzp", std::to_string(weight_zp), "tensor<1xi8>");
    return op(name, "tosa." + kind + " " + input + ", " + weight + ", " + bias + ", " + izp + ", " +
                        wzp +
                        " {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: " + pad +
                        ">, stride = array<i64: 1, 1>} : (" + from + ", " + type_of(weight) + ", " +
                        type_of(bias) + ", " + type_of(izp) + ", " + type_of(wzp) + ") -> " + to);
  }
  void line(const std::string& text) { body_ += "  " + text + "\n"; }

  // The function, returning `returns` (typed as the results).
  [[nodiscard]] std::string str(const std::string& returns) const {
    return "func.func @" + name_ + "(" + arguments_ + ") -> (" + results_ + ") {\n" + body_ +
           "  return " + returns + " : " + results_ + "\n}\n";
  }

 private:
  // The type of an argument or of a value made here (the text after its op's last "-> ").
  [[nodiscard]] std::string type_of(const std::string& value) const {
    for (const auto& [v, t] : types_)
      if (v == value) return t;
    const std::string key = "  " + value + " = ";
    const auto at = body_.find(key);
    if (at == std::string::npos) throw std::logic_error("func_text: the type of " + value);
    const auto end = body_.find(" loc(", at);
    const auto arrow = body_.rfind("-> ", end);
    return body_.substr(arrow + 3, end - arrow - 3);
  }
  std::string name_, arguments_, results_, body_;
  std::vector<std::pair<std::string, std::string>> types_;
};

// --- TOSA 1.0 RESCALE, from the specification (pseudocode/operators/RESCALE.tosac and
// library/scale_helpers.tosac, v1.0), in 128-bit arithmetic so that no step can overflow: each
// REQUIRE of the spec that fails makes the result nullopt (the op is undefined there). ----------

__extension__ typedef __int128 i128;  // g++ and clang++ (-Wpedantic: an extension)

// apply_scale_32(value, multiplier, shift, double_round) and apply_scale_16.
inline std::optional<i128> spec_apply_scale(i128 value, i128 multiplier, i128 shift, bool scale32,
                                            bool double_round) {
  if (multiplier < 0 || shift < 2 || shift > 62) return std::nullopt;
  const i128 one = 1;
  if (scale32) {
    if (multiplier > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
    // value is the int32_t parameter, within +-2^(shift-1)
    if (value < std::numeric_limits<std::int32_t>::min() ||
        value > std::numeric_limits<std::int32_t>::max())
      return std::nullopt;
    if (value < -(one << (shift - 1)) || value >= (one << (shift - 1))) return std::nullopt;
  } else {
    if (multiplier > std::numeric_limits<std::int16_t>::max()) return std::nullopt;
    if (value < -(one << 47) || value >= (one << 47)) return std::nullopt;  // int48_t
  }
  i128 round = one << (shift - 1);
  if (scale32 && double_round && shift > 31) round += value >= 0 ? (one << 30) : -(one << 30);
  const i128 product = value * multiplier + round;
  // >> of a negative value: floor (C++20 defines it arithmetic), as the spec's int64_t >>.
  const i128 result = product >> static_cast<int>(shift);
  if (result < std::numeric_limits<std::int32_t>::min() ||
      result > std::numeric_limits<std::int32_t>::max())
    return std::nullopt;
  return result;
}

// One RESCALE as MLIR holds it: its attributes and the integers of its tosa.const operands
// (zero points extended as the spec says: zero_extend for an unsigned side, else sign_extend).
struct rescale_model {
  unsigned in_bits = 0, out_bits = 0;
  bool input_unsigned = false, output_unsigned = false, scale32 = true, double_round = false;
  bool per_channel = false, inexact = false;
  i128 input_zp = 0, output_zp = 0;
  std::vector<i128> multipliers, shifts;

  // The output value (0..2^bits-1 on an unsigned side) for the input value v as its type holds
  // it, on channel c; nullopt where the spec's REQUIREs fail.
  [[nodiscard]] std::optional<i128> operator()(i128 v, std::size_t c = 0) const {
    const std::size_t k = per_channel ? c : 0;
    if (k >= multipliers.size() || k >= shifts.size()) return std::nullopt;
    const i128 value = v - input_zp;
    const auto scaled = spec_apply_scale(value, multipliers[k], shifts[k], scale32, double_round);
    if (!scaled) return std::nullopt;
    const i128 sum = *scaled + output_zp;  // apply_add_s<int32_t>
    if (sum < std::numeric_limits<std::int32_t>::min() ||
        sum > std::numeric_limits<std::int32_t>::max())
      return std::nullopt;
    const i128 one = 1;
    const i128 lo = output_unsigned ? 0 : -(one << (out_bits - 1));
    const i128 hi = output_unsigned ? (one << out_bits) - 1 : (one << (out_bits - 1)) - 1;
    return sum < lo ? lo : sum > hi ? hi : sum;
  }
  // The same on the tensors' stored bits: the signless input code (e.g. -128..127) in, the
  // signless output code out (an unsigned side's value as two's-complement bits).
  [[nodiscard]] std::optional<std::int64_t> on_codes(std::int64_t code, std::size_t c = 0) const {
    const i128 one = 1;
    const i128 v = input_unsigned ? (i128{code} & ((one << in_bits) - 1)) : i128{code};
    const auto r = (*this)(v, c);
    if (!r) return std::nullopt;
    const i128 half = one << (out_bits - 1);
    const i128 bits = *r & ((one << out_bits) - 1);
    return static_cast<std::int64_t>(bits >= half ? bits - 2 * half : bits);
  }
};

inline std::vector<llvm::APInt> integers_of(mlir::Value v) {
  auto c = llvm::dyn_cast_or_null<mlir::tosa::ConstOp>(v.getDefiningOp());
  if (!c) throw std::logic_error("rescale_model: a parameter is not a tosa.const");
  const auto d = llvm::cast<mlir::DenseElementsAttr>(c.getValues());
  std::vector<llvm::APInt> r;
  for (const llvm::APInt& x : d.getValues<llvm::APInt>()) r.push_back(x);
  return r;
}
inline rescale_model model_of(mlir::Value result) {
  auto op = llvm::dyn_cast_or_null<mlir::tosa::RescaleOp>(result.getDefiningOp());
  if (!op) throw std::logic_error("rescale_model: not a tosa.rescale");
  rescale_model m;
  const auto width = [](mlir::Value v) {
    return llvm::cast<mlir::ShapedType>(v.getType()).getElementType().getIntOrFloatBitWidth();
  };
  m.in_bits = width(op.getInput());
  m.out_bits = width(op.getOutput());
  m.input_unsigned = op.getInputUnsigned();
  m.output_unsigned = op.getOutputUnsigned();
  m.scale32 = op.getScale32();
  m.per_channel = op.getPerChannel();
  m.double_round = op.getRoundingMode() == mlir::tosa::RoundingMode::DOUBLE_ROUND;
  m.inexact = op.getRoundingMode() == mlir::tosa::RoundingMode::INEXACT_ROUND;
  for (const auto& x : integers_of(op.getMultiplier())) m.multipliers.push_back(x.getSExtValue());
  for (const auto& x : integers_of(op.getShift())) m.shifts.push_back(x.getSExtValue());
  const auto izp = integers_of(op.getInputZp()), ozp = integers_of(op.getOutputZp());
  if (izp.size() != 1 || ozp.size() != 1) throw std::logic_error("rescale_model: zero points");
  m.input_zp = m.input_unsigned ? i128{izp[0].getZExtValue()} : i128{izp[0].getSExtValue()};
  m.output_zp = m.output_unsigned ? i128{ozp[0].getZExtValue()} : i128{ozp[0].getSExtValue()};
  return m;
}

// --- Failure injection: a graph whose mutation points throw at the n-th call -----------------

struct failing {
  G& g;
  int fail_at = -1, calls = 0;
  int* shared = nullptr;  // a count across several graphs (one per function), if given
  void tick() {
    int& n = shared != nullptr ? *shared : calls;
    if (n++ == fail_at) throw std::bad_alloc();
  }
};

}  // namespace tosa_test

template <>
struct qfold::ir_traits<tosa_test::failing> {
  using F = tosa_test::failing;
  using T = qfold::ir_traits<tosa_test::G>;
  using node_id = mlir::Value;
  static auto nodes(const F& f) { return T::nodes(f.g); }
  static auto kind(const F& f, node_id n) { return T::kind(f.g, n); }
  static auto operands(const F& f, node_id n) { return T::operands(f.g, n); }
  static auto use_count(const F& f, node_id n) { return T::use_count(f.g, n); }
  static auto constant(const F& f, node_id n) { return T::constant(f.g, n); }
  static auto int_constant(const F& f, node_id n) { return T::int_constant(f.g, n); }
  static auto output_shape(const F& f, node_id n) { return T::output_shape(f.g, n); }
  static auto element_type(const F& f, node_id n) { return T::element_type(f.g, n); }
  static auto rescale(const F& f, node_id n) { return T::rescale(f.g, n); }
  static auto mul_shift(const F& f, node_id n) { return T::mul_shift(f.g, n); }
  static auto clamp_attributes(const F& f, node_id n) { return T::clamp_attributes(f.g, n); }
  static auto qparams(const F& f, node_id n) { return T::qparams(f.g, n); }
  static auto qparams_shared(const F& f, node_id n) { return T::qparams_shared(f.g, n); }
  static auto conv_attributes(const F& f, node_id n) { return T::conv_attributes(f.g, n); }
  static auto quantized_conv(const F& f, node_id n) { return T::quantized_conv(f.g, n); }
  static auto view_axis(const F& f, node_id n, std::int64_t a) { return T::view_axis(f.g, n, a); }
  static auto constant_bytes(const F& f, node_id n) { return T::constant_bytes(f.g, n); }
  static node_id add_constant(F& f, std::span<const float> d, std::span<const std::int64_t> s) {
    f.tick();
    return T::add_constant(f.g, d, s);
  }
  static node_id add_int_constant(F& f, std::span<const std::int64_t> d,
                                  std::span<const std::int64_t> s, qfold::dtype t) {
    f.tick();
    return T::add_int_constant(f.g, d, s, t);
  }
  static node_id add_table(F& f, node_id in, std::span<const std::int8_t> v) {
    f.tick();
    return T::add_table(f.g, in, v);
  }
  static node_id add_table(F& f, node_id in, std::span<const std::int16_t> v) {
    f.tick();
    return T::add_table(f.g, in, v);
  }
  static node_id add_rescale(F& f, node_id in, const qfold::rescale_attributes& a,
                             std::span<const qfold::scale_factor> s) {
    f.tick();
    return T::add_rescale(f.g, in, a, s);
  }
  static void set_operand(F& f, node_id n, std::size_t i, node_id v) {
    f.tick();
    T::set_operand(f.g, n, i, v);
  }
  static void remove_last_operand(F& f, node_id n) { T::remove_last_operand(f.g, n); }
  static void replace_uses(F& f, node_id o, node_id v) {
    f.tick();
    T::replace_uses(f.g, o, v);
  }
  static void erase(F& f, node_id n) noexcept { T::erase(f.g, n); }
  static void set_qparams(F& f, node_id n, const qfold::qparams& q) { T::set_qparams(f.g, n, q); }
  static void set_conv_input_zero_point(F& f, node_id n, std::int64_t zp) {
    f.tick();
    T::set_conv_input_zero_point(f.g, n, zp);
  }
};

namespace tosa_test {

static_assert(qfold::quantized_graph<failing>);

// Runs the pass `pass` on the first function of `text` with its n-th mutation failing, for n =
// 0, 1, ... until a run folds with no failure: each failed run reports the site as an
// adapter_failure and leaves the module byte-identical (locations included) and verified. The
// module must hold one site that folds. Returns the mutation calls of the folding run.
inline int every_mutation_fails(const std::string& text, const std::string& pass) {
  for (int fail_at = 0;; ++fail_at) {
    INFO(pass << ": mutation " << fail_at << " fails");
    fixture f(text);
    REQUIRE(f.module);
    const std::string before = f.print();
    const std::size_t unused_before = f.unused_constants();
    G g(f.func());
    REQUIRE(g.problems().empty());
    failing w{g, fail_at};
    const auto report =
        qfold::standard_pipeline<failing>().only(std::vector<std::string>{pass}).run(w);
    g.collect_garbage();
    REQUIRE(report.sites.size() == 1);
    CHECK(f.verifies());
    CHECK(f.unused_constants() == unused_before);
    if (report.sites[0].folded()) {
      CHECK(w.calls <= fail_at);  // no call failed: done
      CHECK(f.print() != before);
      return w.calls;
    }
    REQUIRE(report.sites[0].rejected);
    CHECK(report.sites[0].rejected->code == qfold::reason::adapter_failure);
    CHECK(f.print() == before);
    REQUIRE(fail_at < 40);
  }
}

}  // namespace tosa_test

namespace tosa_test {

// 256 entries of round(127 tanh((i - 128) / 40)): the DyT tanh table.
inline std::string tanh_table() {
  std::string t = "[";
  for (int i = 0; i < 256; ++i) {
    const double v = std::round(127 * std::tanh((i - 128) / 40.0));
    t += (i != 0 ? ", " : "") + std::to_string(static_cast<int>(v));
  }
  return t + "]";
}

// The DyT alpha site as ExecuTorch's Arm backend lowers it to TOSA 1.0: RESCALE(act) to int32,
// MUL by RESCALE(alpha) to int32, RESCALE to int8, TABLE (tanh). Ops located at act,
// alpha_rescale, mul, out, table; constants alpha, tanh.
struct dyt_options {
  bool extra_use = false;  // the MUL's output is returned too (a second reader)
  std::string alpha_shape = "1x1x1x1", alpha = "77";
  std::string arguments;                         // appended to "%arg0: ..."
  std::string mul_shift_operand, table_operand;  // instead of constants of their own
  rescale_spec act = with_zero_points(-3, 0);    // i8 -> i32: x + 3
  rescale_spec alpha_rescale = with_zero_points(0, 0);
  rescale_spec out = with_zero_points(0, 5, 1518500250, 40);  // i32 -> i8
};
inline std::string dyt_module(const dyt_options& o = {}) {
  const std::string A = "tensor<1x4x4x8xi8>", A32 = "tensor<1x4x4x8xi32>",
                    S = "tensor<" + o.alpha_shape + "xi8>",
                    S32 = "tensor<" + o.alpha_shape + "xi32>";
  func_text f("dyt", "%arg0: " + A + o.arguments, o.extra_use ? A + ", " + A32 : A);
  const std::string alpha = f.constant("alpha", o.alpha, S);
  const std::string table = !o.table_operand.empty()
                                ? o.table_operand
                                : f.constant("tanh", tanh_table(), "tensor<256xi8>");
  const std::string act = f.rescale("act", "%arg0", A, A32, o.act);
  const std::string alpha32 = f.rescale("alpha_rescale", alpha, S, S32, o.alpha_rescale);
  const std::string mul = f.mul("mul", act, alpha32, A32, S32, A32, 0, o.mul_shift_operand);
  const std::string out = f.rescale("out", mul, A32, A, o.out);
  const std::string t = f.table("table", out, table, A, A);
  return f.str(o.extra_use ? t + ", " + mul : t);
}

// DyT affine: TABLE -> (RESCALE * RESCALE(gamma)) -> RESCALE -> (RESCALE + RESCALE(beta)) ->
// RESCALE -> conv2d, every RESCALE an identity, gamma 2 and beta 3 per channel: a = 2 t + 3
// exactly, so the affine folds into the conv (weights 1 -> 2, bias + 3 * 2 per output channel).
// The conv is located at conv, its zero points at conv_izp and conv_wzp.
struct affine_options {
  std::string arguments;                 // appended to "%arg0: ..."
  std::string izp_operand, wzp_operand;  // the conv's zero points, instead of its own constants
};
inline std::string affine_module(const affine_options& o = {}) {
  std::string table = "[";
  for (int i = 0; i < 256; ++i)
    table += (i != 0 ? ", " : "") + std::to_string(std::clamp(i - 128, -60, 60));
  table += "]";
  const std::string A = "tensor<1x2x2x2xi8>", A32 = "tensor<1x2x2x2xi32>", S = "tensor<1x1x1x2xi8>",
                    S32 = "tensor<1x1x1x2xi32>";
  func_text f("affine", "%arg0: " + A + o.arguments, "tensor<1x2x2x2xi32>");
  const std::string tv = f.constant("table_values", table, "tensor<256xi8>");
  const std::string gamma = f.constant("gamma", "2", S);
  const std::string beta = f.constant("beta", "3", S);
  const std::string w = f.constant("w", "1", "tensor<2x1x1x2xi8>");
  const std::string b = f.constant("b", "[10, -20]", "tensor<2xi32>");
  const std::string t = f.table("t", "%arg0", tv, A, A);
  const std::string rt = f.rescale("rt", t, A, A32);
  const std::string rg = f.rescale("rg", gamma, S, S32);
  const std::string m = f.mul("m", rt, rg, A32, S32, A32);
  const std::string rp = f.rescale("rp", m, A32, A);
  const std::string rs = f.rescale("rs", rp, A, A32);
  const std::string rb = f.rescale("rb", beta, S, S32);
  const std::string a =
      f.op("a", "tosa.add " + rs + ", " + rb + " : (" + A32 + ", " + S32 + ") -> " + A32);
  const std::string rsum = f.rescale("rsum", a, A32, A);
  const std::string c = f.conv("conv", "conv2d", rsum, w, b, A, "tensor<1x2x2x2xi32>", 0, 0,
                               "0, 0, 0, 0", o.izp_operand, o.wzp_operand);
  return f.str(c);
}

}  // namespace tosa_test
