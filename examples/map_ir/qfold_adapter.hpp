// qfold's adapter for the map IR (map_ir.hpp), non-intrusive: one ir_traits specialization. Ids are
// the value names. Constants are handed over where they lie (float64 and int64 vectors in the
// attribute map); what the IR does not store (shapes, element types) is derived from the ops.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "map_ir/map_ir.hpp"

template <>
struct qfold::ir_traits<mapir::Graph> {
  using G = mapir::Graph;
  using node_id = std::string;
  using ints = std::vector<std::int64_t>;
  static const mapir::Node& at(const G& g, const node_id& n) { return g.nodes.at(n); }

  // --- Batch-norm folding ----------------------------------------------------------------------
  static std::vector<node_id> nodes(const G& g) {  // in the map's order: qfold needs none
    std::vector<node_id> r;
    for (const auto& entry : g.nodes) r.push_back(entry.first);
    return r;
  }
  static op_kind kind(const G& g, const node_id& n) {  // the quantized ops' names too: one table
    static constexpr std::string_view names[] = {
        "Input", "Constant", "Conv",  "CONV2D", "BatchNorm", "RESCALE",  "MUL",       "ADD",
        "SUB",   "TABLE",    "CLAMP", "CAST",   "Div",       "Quantize", "Dequantize"};
    using enum op_kind;
    static constexpr op_kind kinds[] = {input,   constant, convolution, convolution, batch_norm,
                                        rescale, mul,      add,         sub,         table,
                                        clamp,   cast,     div,         quantize,    dequantize};
    const auto i = std::ranges::find(names, at(g, n).op) - std::begin(names);
    return i < std::ssize(names) ? kinds[i] : other;
  }
  static std::span<const node_id> operands(const G& g, const node_id& n) { return at(g, n).inputs; }
  static std::size_t use_count(const G& g, const node_id& n) {  // a scan: no use lists
    auto uses = std::ranges::count(g.outputs, n);
    for (const auto& entry : g.nodes) uses += std::ranges::count(entry.second.inputs, n);
    return static_cast<std::size_t>(uses);
  }
  template <class T = double>  // double: a float constant; std::int64_t: int_constant below
  static std::optional<tensor_view<T>> constant(const G& g, const node_id& n) {
    const auto* v = at(g, n).op == "Constant" ? g.find<std::vector<T>>(n, "value") : nullptr;
    const auto* shape = g.find<ints>(n, "shape");
    return v && shape ? std::optional(tensor_view<T>{*v, *shape}) : std::nullopt;
  }
  static qfold::conv_attributes conv_attributes(const G& g, const node_id& n) {
    const bool tosa = at(g, n).op == "CONV2D";  // NHWC input, OHWI weights; Conv: NCHW, OIHW
    return {g.attr<std::int64_t>(n, "group", 1), false,
            tosa ? weight_layout::o_s_i : weight_layout::o_i_s,
            std::ranges::any_of(g.attr(n, "pad", ints{}), std::identity{}), tosa ? 3 : 1};
  }
  static qfold::batch_norm_attributes batch_norm_attributes(const G& g, const node_id& n) {
    return {g.attr(n, "epsilon", 1e-5), false};
  }
  static node_id add_constant(G& g, std::span<const double> data,
                              std::span<const std::int64_t> shape) {
    mapir::Node c{"Constant", {}, {{"shape", ints(shape.begin(), shape.end())}}};
    c.attrs["value"] = std::vector<double>(data.begin(), data.end());
    return g.add("folded", std::move(c));
  }
  static void set_operand(G& g, const node_id& n, std::size_t i, const node_id& v) {
    auto& in = g.nodes.at(n).inputs;
    i == in.size() ? in.push_back(v) : void(in.at(i) = v);
  }
  static void remove_last_operand(G& g, const node_id& n) { g.nodes.at(n).inputs.pop_back(); }
  static void replace_uses(G& g, const node_id& old, const node_id& v) { g.rename_uses(old, v); }
  static void erase(G& g, const node_id& n) noexcept { g.nodes.erase(n); }
  static node_id take_name(G& g, node_id old, node_id v) {  // ids are names: outputs keep theirs
    if (at(g, v).op == "Input") return v;                   // graph inputs are fed by name
    node_id key = old;                                      // allocated before anything changes
    g.rename_uses(v, old);
    auto entry = g.nodes.extract(v);
    entry.key() = std::move(key);
    g.nodes.insert(std::move(entry));
    return old;
  }

  // --- The quantized passes: TOSA's integer ops, and a float Quantize for scale folding ---------
  static auto int_constant(const G& g, const node_id& n) { return constant<std::int64_t>(g, n); }
  // Inputs and constants declare a shape; elementwise ops broadcast their operands' (a TABLE has
  // its input's). Anything else reads as rank 0, which the shape checks refuse or see through.
  static ints output_shape(const G& g, const node_id& n) {
    static constexpr std::string_view elementwise[] = {"RESCALE", "MUL",   "ADD", "SUB",
                                                       "TABLE",   "CLAMP", "CAST"};
    if (const auto* shape = g.find<ints>(n, "shape")) return *shape;
    const mapir::Node& x = at(g, n);
    if (std::ranges::find(elementwise, x.op) == std::end(elementwise)) return {};
    ints r;
    for (std::size_t i = 0; i < (x.op == "TABLE" ? 1 : x.inputs.size()); ++i) {
      const ints s = output_shape(g, x.inputs.at(i));
      if (s.size() > r.size()) r.insert(r.begin(), s.size() - r.size(), 1);
      for (std::size_t d = 0; d < s.size(); ++d)
        if (auto& o = r[r.size() - s.size() + d]; o == 1) o = s[d];
    }
    return r;
  }
  // TOSA's RESCALE attributes as integers, read and written under these names.
  static constexpr const char* rescale_keys[] = {"in_bits",         "out_bits",    "scale32",
                                                 "rounding",        "per_channel", "input_unsigned",
                                                 "output_unsigned", "input_zp",    "output_zp"};
  struct rescale_ref {  // the multipliers and shifts where the node keeps them
    rescale_attributes attributes;
    std::span<const std::int64_t> multipliers, shifts;
  };
  static rescale_ref rescale(const G& g, const node_id& n) {
    constexpr std::int64_t defaults[] = {8, 8, 1, 1, 0, 0, 0, 0, 0};
    std::int64_t v[std::size(rescale_keys)];
    for (std::size_t i = 0; i < std::size(v); ++i) v[i] = g.attr(n, rescale_keys[i], defaults[i]);
    const rescale_attributes a{int_type(v[0]),      int_type(v[1]), v[2] != 0,  // not 8/16/32/48,
                               rounding_mode(v[3]), v[4] != 0,      v[5] != 0,  // not 1/2/3:
                               v[6] != 0,           v[7],           v[8]};      // refused
    const auto* m = g.find<ints>(n, "multiplier");
    const auto* s = g.find<ints>(n, "shift");
    return m && s ? rescale_ref{a, *m, *s} : rescale_ref{a, {}, {}};
  }
  static node_id add_rescale(G& g, const node_id& input, const rescale_attributes& a,
                             std::span<const scale_factor> scales) {
    const auto rounding = static_cast<std::int64_t>(a.rounding);
    const std::int64_t v[] = {
        bit_width(a.input_type), bit_width(a.output_type), a.scale32,  rounding,   a.per_channel,
        a.input_unsigned,        a.output_unsigned,        a.input_zp, a.output_zp};
    ints m, s;
    for (const scale_factor& f : scales) {
      m.push_back(f.multiplier);
      s.push_back(f.shift);
    }
    mapir::Node r{"RESCALE", {input}, {{"multiplier", std::move(m)}, {"shift", std::move(s)}}};
    for (std::size_t i = 0; i < std::size(v); ++i) r.attrs[rescale_keys[i]] = v[i];
    return g.add(input + ".rescale", std::move(r));
  }
  static int mul_shift(const G& g, const node_id& n) {  // out of int: -1, which folds refuse
    const std::int64_t s = g.attr<std::int64_t>(n, "shift", 0);
    return std::in_range<int>(s) ? static_cast<int>(s) : -1;
  }
  static node_id add_int_constant(G& g, std::span<const std::int64_t> data,
                                  std::span<const std::int64_t> shape, dtype) {  // all int64 here
    mapir::Node c{"Constant", {}, {{"shape", ints(shape.begin(), shape.end())}}};
    c.attrs["value"] = ints(data.begin(), data.end());
    return g.add("folded", std::move(c));
  }
  // No table_values: a TABLE's entries are its operand 1, an integer constant (TOSA's form).
  static node_id add_table(G& g, const node_id& input, std::span<const std::int8_t> values) {
    const ints entries(values.begin(), values.end()), shape{std::ssize(values)};
    const node_id t = add_int_constant(g, entries, shape, dtype::int8);
    try {
      return g.add(input + ".lookup", {"TABLE", {input, t}, {}});
    } catch (...) {
      g.nodes.erase(t);  // all or nothing
      throw;
    }
  }
  static qfold::clamp_attributes clamp_attributes(const G& g, const node_id& n) {
    return {g.attr<std::int64_t>(n, "min_int", 0), g.attr<std::int64_t>(n, "max_int", 0)};
  }
  // Types are implied by the ops: int32 arithmetic, int8 tables, declared widths elsewhere.
  static std::optional<dtype> element_type(const G& g, const node_id& n) {
    const mapir::Node& x = at(g, n);
    if (x.op == "MUL" || x.op == "ADD" || x.op == "SUB") return dtype::int32;
    if (x.op == "TABLE" || x.op == "Quantize") return dtype::int8;
    if (x.op == "CLAMP") return x.inputs.empty() ? std::nullopt : element_type(g, x.inputs[0]);
    const bool sized = x.op == "Input" || x.op == "RESCALE" || x.op == "CAST";
    const std::int64_t bits = sized ? g.attr<std::int64_t>(n, "out_bits", 0) : 0;
    const bool u = g.attr<std::int64_t>(n, "output_unsigned", 0) != 0;
    if (bits == 8 || bits == 16)
      return bits == 8 ? (u ? dtype::uint8 : dtype::int8) : (u ? dtype::uint16 : dtype::int16);
    return bits == 32 ? std::optional(dtype::int32) : std::nullopt;  // else float, or int48
  }
  static std::optional<quantized_conv_attributes> quantized_conv(const G& g, const node_id& n) {
    static constexpr std::int64_t zero = 0;
    if (at(g, n).op != "CONV2D") return std::nullopt;  // Conv is the float convolution
    const auto* weight_zp = g.find<std::int64_t>(n, "weight_zp");
    return quantized_conv_attributes{g.attr<std::int64_t>(n, "input_zp", 0),
                                     {weight_zp != nullptr ? weight_zp : &zero, 1},
                                     dtype::int8};
  }
  static void set_conv_input_zero_point(G& g, const node_id& n, std::int64_t zp) {
    g.nodes.at(n).attrs["input_zp"] = zp;
  }
  // Quantize and Dequantize hold their own int8 scale and zero point; nothing else has any.
  static std::optional<qfold::qparams> qparams(const G& g, const node_id& n) {
    const auto* scale = g.find<double>(n, "scale");
    const auto* zp = g.find<std::int64_t>(n, "zero_point");
    if ((at(g, n).op != "Quantize" && at(g, n).op != "Dequantize") || scale == nullptr ||
        zp == nullptr || !std::in_range<std::int32_t>(*zp))
      return std::nullopt;
    return make_qparams(dtype::int8, *scale, static_cast<std::int32_t>(*zp));
  }
  static bool qparams_shared(const G&, const node_id&) { return false; }  // no op ties them
  static void set_qparams(G& g, const node_id& n, const qfold::qparams& q) {
    auto& a = g.nodes.at(n).attrs;  // both exist (qparams read them): nothing is half done
    a.at("scale") = q.scale;
    a.at("zero_point") = std::int64_t{q.zero_point};
  }
};
