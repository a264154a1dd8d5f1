// A hostile adapter for tests: tiny's adapter with every call counted, a failure injected at any
// one call, and read points that can be made to lie (forged shapes, operand lists, answers that
// change between calls). Shared by the transaction and bad-input tests.
#pragma once

#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tiny_ir/tiny_ir.hpp"

namespace qfold_test {
using id = tiny::graph::node_id;

// tiny's adapter, counting every call; call number `fail_at` throws (std::bad_alloc on odd
// numbers, std::runtime_error on even ones), and with `persistent` so does every later call.
// A mutation that throws has changed nothing, as the contract asks of an adapter.
struct hostile {
  using node_id = id;
  explicit hostile(tiny::graph graph) : g(std::move(graph)) {}
  tiny::graph g;
  long fail_at = -1;
  bool persistent = false;
  mutable long calls = 0;
  mutable std::string failed_in;  // the point whose call threw

  // Lies: where a hook is set, the read point answers with it.
  std::function<std::optional<std::span<const id>>(id)> operands_hook;
  std::function<std::optional<qfold::tensor_view<float>>(id)> constant_hook;
  std::function<std::optional<std::optional<qfold::tensor_view<std::int64_t>>>(id)>
      int_constant_hook;
  std::function<std::optional<std::span<const std::int64_t>>(id)> output_shape_hook;
  std::function<std::optional<std::span<const std::int8_t>>(id)> table_values_hook;
  std::function<std::optional<std::size_t>(id)> output_rank_hook;
  // Nodes whose parameters (rescale, mul_shift) the IR says are computed at run time: their read
  // points throw qfold::parameter_not_constant, as TOSA adapters do.
  std::vector<id> computed_parameters;

  void tick(const char* point) const {
    ++calls;
    if (calls == fail_at || (persistent && fail_at > 0 && calls > fail_at)) {
      if (failed_in.empty()) failed_in = point;
      if (calls % 2 != 0) throw std::bad_alloc();
      throw std::runtime_error(std::string("injected failure in ") + point);
    }
  }
  // Reads.
  [[nodiscard]] auto nodes() const { return tick("nodes"), g.nodes(); }
  [[nodiscard]] auto kind(id n) const { return tick("kind"), g.kind(n); }
  [[nodiscard]] std::span<const id> operands(id n) const {
    tick("operands");
    if (operands_hook)
      if (auto v = operands_hook(n)) return *v;
    return g.operands(n);
  }
  [[nodiscard]] auto use_count(id n) const { return tick("use_count"), g.use_count(n); }
  [[nodiscard]] std::optional<qfold::tensor_view<float>> constant(id n) const {
    tick("constant");
    if (constant_hook)
      if (auto v = constant_hook(n)) return v;
    return g.constant(n);
  }
  [[nodiscard]] auto conv_attributes(id n) const {
    return tick("conv_attributes"), g.conv_attributes(n);
  }
  [[nodiscard]] auto batch_norm_attributes(id n) const {
    return tick("batch_norm_attributes"), g.batch_norm_attributes(n);
  }
  [[nodiscard]] std::size_t output_rank(id n) const {
    tick("output_rank");
    if (output_rank_hook)
      if (auto v = output_rank_hook(n)) return *v;
    return g.output_rank(n);
  }
  [[nodiscard]] auto constant_bytes(id n) const {
    return tick("constant_bytes"), g.constant_bytes(n);
  }
  [[nodiscard]] std::optional<qfold::tensor_view<std::int64_t>> int_constant(id n) const {
    tick("int_constant");
    if (int_constant_hook)
      if (auto v = int_constant_hook(n)) return *v;
    return g.int_constant(n);
  }
  [[nodiscard]] std::span<const std::int64_t> output_shape(id n) const {
    tick("output_shape");
    if (output_shape_hook)
      if (auto v = output_shape_hook(n)) return *v;
    return g.output_shape(n);
  }
  [[nodiscard]] auto rescale(id n) const {
    tick("rescale");
    computed(n);
    return g.rescale(n);
  }
  [[nodiscard]] auto mul_shift(id n) const {
    tick("mul_shift");
    computed(n);
    return g.mul_shift(n);
  }
  void computed(id n) const {
    for (const id c : computed_parameters)
      if (c == n) throw qfold::parameter_not_constant("a parameter computed at run time");
  }
  [[nodiscard]] std::span<const std::int8_t> table_values(id n) const {
    tick("table_values");
    if (table_values_hook)
      if (auto v = table_values_hook(n)) return *v;
    return g.table_values(n);
  }
  [[nodiscard]] auto qparams(id n) const { return tick("qparams"), g.qparams(n); }
  [[nodiscard]] auto qparams_shared(id n) const {
    return tick("qparams_shared"), g.qparams_shared(n);
  }
  [[nodiscard]] auto view_axis(id n, std::int64_t a) const {
    return tick("view_axis"), g.view_axis(n, a);
  }
  [[nodiscard]] auto quantized_conv(id n) const {
    return tick("quantized_conv"), g.quantized_conv(n);
  }
  [[nodiscard]] auto clamp_attributes(id n) const {
    return tick("clamp_attributes"), g.clamp_attributes(n);
  }
  [[nodiscard]] auto element_type(id n) const { return tick("element_type"), g.element_type(n); }
  // Mutations.
  id add_constant(std::span<const float> d, std::span<const std::int64_t> s) {
    return tick("add_constant"), g.add_constant(d, s);
  }
  id add_int_constant(std::span<const std::int64_t> d, std::span<const std::int64_t> s,
                      qfold::dtype t) {
    return tick("add_int_constant"), g.add_int_constant(d, s, t);
  }
  id add_table(id input, std::span<const std::int8_t> v) {
    return tick("add_table"), g.add_table(input, v);
  }
  id add_table(id input, std::span<const std::int16_t> v) {
    return tick("add_table"), g.add_table(input, v);
  }
  id add_rescale(id input, const qfold::rescale_attributes& a,
                 std::span<const qfold::scale_factor> s) {
    return tick("add_rescale"), g.add_rescale(input, a, s);
  }
  void set_operand(id n, std::size_t i, id v) { tick("set_operand"), g.set_operand(n, i, v); }
  void remove_last_operand(id n) { tick("remove_last_operand"), g.remove_last_operand(n); }
  void replace_uses(id o, id v) { tick("replace_uses"), g.replace_uses(o, v); }
  // erase is noexcept (qfold's contract); an injected failure makes it report false instead.
  bool erase(id n) noexcept {
    try {
      tick("erase");
    } catch (...) {
      return false;
    }
    g.erase(n);
    return true;
  }
  void set_qparams(id n, const qfold::qparams& q) { tick("set_qparams"), g.set_qparams(n, q); }
  void set_conv_input_zero_point(id n, std::int64_t zp) {
    tick("set_conv_input_zero_point"), g.set_conv_input_zero_point(n, zp);
  }
};
static_assert(qfold::quantized_graph<hostile> && qfold::batch_norm_foldable_graph<hostile>);
static_assert(qfold::rescale_mergeable_graph<hostile> && qfold::table_collapsible_graph<hostile> &&
              qfold::detail::has_add_table16<hostile>);

}  // namespace qfold_test
