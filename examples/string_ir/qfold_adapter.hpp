// qfold's adapter for the string-op IR, non-intrusive: one ir_traits specialization. The first
// block is all batch-norm folding needs; the second adds what the quantized passes read and
// write. Integer constants, multipliers, shifts and tables are handed over as the IR stores them
// (int32 vectors; the table as TABLE operand 1, as TOSA has it): qfold reads them in place.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "string_ir/string_ir.hpp"

template <>
struct qfold::ir_traits<strir::Graph> {
  using G = strir::Graph;
  using node_id = int;
  static const strir::Node& at(const G& g, int n) { return g.nodes[static_cast<std::size_t>(n)]; }
  static strir::Node& at(G& g, int n) { return g.nodes[static_cast<std::size_t>(n)]; }

  // --- Batch-norm folding ----------------------------------------------------------------------
  static std::vector<int> nodes(const G& g) {  // live ones, producers first
    std::vector<int> r;
    for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n)
      if (!at(g, n).dead) r.push_back(n);
    return r;
  }
  static op_kind kind(const G& g, int n) {  // the quantized ops' names too: one table
    static const std::pair<const char*, op_kind> names[] = {
        {"input", op_kind::input},      {"const", op_kind::constant},
        {"conv", op_kind::convolution}, {"qconv", op_kind::convolution},
        {"linear", op_kind::linear},    {"bn", op_kind::batch_norm},
        {"rescale", op_kind::rescale},  {"mul", op_kind::mul},
        {"add", op_kind::add},          {"table", op_kind::table},
        {"reshape", op_kind::view}};
    for (const auto& [name, k] : names)
      if (at(g, n).op == name) return k;
    return op_kind::other;
  }
  static std::span<const int> operands(const G& g, int n) { return at(g, n).inputs; }
  static std::size_t use_count(const G& g, int n) {  // a scan: this IR keeps no use lists
    std::size_t uses = static_cast<std::size_t>(std::ranges::count(g.outputs, n));
    for (const strir::Node& m : g.nodes)
      if (!m.dead) uses += static_cast<std::size_t>(std::ranges::count(m.inputs, n));
    return uses;
  }
  static std::optional<tensor_view<float>> constant(const G& g, int n) {
    if (at(g, n).op != "const" || at(g, n).data.empty()) return std::nullopt;
    return tensor_view<float>{at(g, n).data, at(g, n).shape};
  }
  static qfold::conv_attributes conv_attributes(const G& g, int n) {
    return {static_cast<std::int64_t>(g.attr(n, "groups", 1)), false, weight_layout::o_i_s,
            g.attr(n, "pad") != 0, static_cast<std::int64_t>(g.attr(n, "channel_axis", 1))};
  }
  static qfold::batch_norm_attributes batch_norm_attributes(const G& g, int n) {
    return {g.attr(n, "eps", 1e-5), false};
  }
  static qfold::batch_norm_operands<int> batch_norm_operands(const G& g, int n) {
    const auto& in = at(g, n).inputs;  // x, mean, var; or x, gamma, beta, mean, var
    if (in.size() == 3) return {in[0], std::nullopt, std::nullopt, in[1], in[2]};
    return {in.at(0), in.at(1), in.at(2), in.at(3), in.at(4)};
  }
  static std::size_t output_rank(const G& g, int n) { return at(g, n).shape.size(); }
  static int add_constant(G& g, std::span<const float> data, std::span<const std::int64_t> shape) {
    return g.add(
        {"const", {}, {data.begin(), data.end()}, {}, {}, {shape.begin(), shape.end()}, {}});
  }
  static void set_operand(G& g, int n, std::size_t i, int v) {
    auto& in = at(g, n).inputs;
    i == in.size() ? in.push_back(v) : void(in.at(i) = v);
  }
  static void remove_last_operand(G& g, int n) { at(g, n).inputs.pop_back(); }
  static void replace_uses(G& g, int old, int v) {
    for (strir::Node& m : g.nodes) std::ranges::replace(m.inputs, old, v);
    std::ranges::replace(g.outputs, old, v);
  }
  static void erase(G& g, int n) noexcept { at(g, n).dead = true; }
  static std::size_t constant_bytes(const G& g, int n) {
    return 4 * (at(g, n).data.size() + at(g, n).ints.size());
  }

  // --- The quantized passes ----------------------------------------------------------------------
  static std::optional<tensor_view<std::int32_t>> int_constant(const G& g, int n) {
    if (at(g, n).op != "const" || !at(g, n).data.empty()) return std::nullopt;
    return tensor_view<std::int32_t>{at(g, n).ints, at(g, n).shape};
  }
  static std::span<const std::int64_t> output_shape(const G& g, int n) { return at(g, n).shape; }
  struct rescale_ref {
    rescale_attributes attributes;
    std::span<const std::int32_t> multipliers, shifts;
  };
  static rescale_ref rescale(const G& g, int n) {
    const auto type = [](double bits) {
      return bits == 8 ? int_type::i8 : bits == 16 ? int_type::i16 : int_type::i32;
    };
    rescale_attributes a;
    a.input_type = type(g.attr(n, "in_bits", 8));
    a.output_type = type(g.attr(n, "out_bits", 32));
    a.input_zp = static_cast<std::int32_t>(g.attr(n, "input_zp"));
    a.output_zp = static_cast<std::int32_t>(g.attr(n, "output_zp"));
    return {a, at(g, n).ints, at(g, n).shifts};
  }
  static int mul_shift(const G& g, int n) { return static_cast<int>(g.attr(n, "shift")); }
  // No table_values: a table is operand 1 of its TABLE, an integer constant.
  static std::optional<qfold::qparams> qparams(const G&, int) { return std::nullopt; }
  static bool qparams_shared(const G&, int) { return false; }
  static void set_qparams(G&, int, const qfold::qparams&) {}
  static std::optional<std::int64_t> view_axis(const G& g, int n, std::int64_t a) {
    return at(g, n).shape == at(g, at(g, n).inputs.at(0)).shape ? std::optional(a) : std::nullopt;
  }
  static std::optional<quantized_conv_attributes> quantized_conv(const G& g, int n) {
    static constexpr std::int64_t zero[] = {0};  // this IR has symmetric int8 weights only
    if (at(g, n).op != "qconv") return std::nullopt;
    return quantized_conv_attributes{static_cast<std::int64_t>(g.attr(n, "input_zp")), zero,
                                     dtype::int8};
  }
  static int add_int_constant(G& g, std::span<const std::int64_t> data,
                              std::span<const std::int64_t> shape, dtype) {
    strir::Node c{"const", {}, {}, {}, {}, {shape.begin(), shape.end()}, {}};
    for (const std::int64_t v : data) c.ints.push_back(static_cast<std::int32_t>(v));
    return g.add(std::move(c));
  }
  static int add_table(G& g, int input, std::span<const std::int8_t> values) {
    strir::Node table{"const", {}, {}, {values.begin(), values.end()}, {}, {256}, {}};
    strir::Node lookup{
        "table", {input, static_cast<int>(g.nodes.size())}, {}, {}, {}, at(g, input).shape, {}};
    g.nodes.reserve(g.nodes.size() + 2);  // then neither push can fail: all or nothing
    g.add(std::move(table));
    return g.add(std::move(lookup));
  }
  static void set_conv_input_zero_point(G& g, int n, std::int64_t zp) {
    at(g, n).attrs["input_zp"] = static_cast<double>(zp);
  }
};
