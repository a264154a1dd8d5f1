// expect: ir_traits<G>::set_qparams\(g, n, q\) is missing; expected: static void set_qparams
// An adapter with every point the scale-into-quantize pass reads but no way to rewrite a
// quantize's qparams: the pass refuses it naming that point.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/graph/scale_into_quantize_pass.hpp>
#include <span>
#include <vector>

namespace adapter {
struct graph_without_set_qparams {
  using node_id = int;
  std::vector<node_id> nodes() const { return {}; }
  qfold::op_kind kind(node_id) const { return qfold::op_kind::other; }
  std::span<const node_id> operands(node_id) const { return {}; }
  std::size_t use_count(node_id) const { return 0; }
  std::optional<qfold::tensor_view<float>> constant(node_id) const { return std::nullopt; }
  std::optional<qfold::qparams> qparams(node_id) const { return std::nullopt; }
  bool qparams_shared(node_id) const { return false; }
  node_id add_constant(std::span<const float>, std::span<const std::int64_t>) { return 0; }
  void set_operand(node_id, std::size_t, node_id) {}
  void remove_last_operand(node_id) {}
  void replace_uses(node_id, node_id) {}
  void erase(node_id) {}
  std::size_t constant_bytes(node_id) const { return 0; }
  // no: void set_qparams(node_id, const qfold::qparams&);
};
}  // namespace adapter

std::size_t fold(adapter::graph_without_set_qparams& g) {
  return qfold::fold_scales_into_quantize(g).folded();
}
