// expect: ir_traits<G>::kind\(g, n\) is missing; expected: static qfold::op_kind kind\(const G&, node_id\)
// An adapter with every customization point of the batch-norm pass but kind(n): the pass refuses
// it with a message naming the missing point, not an error deep inside the pass.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/graph/batch_norm_pass.hpp>
#include <span>
#include <vector>

namespace adapter {
struct graph_without_kind {
  using node_id = int;
  std::vector<node_id> nodes() const { return {}; }
  // no: qfold::op_kind kind(node_id) const;
  std::span<const node_id> operands(node_id) const { return {}; }
  std::size_t use_count(node_id) const { return 0; }
  std::optional<qfold::tensor_view<float>> constant(node_id) const { return std::nullopt; }
  qfold::conv_attributes conv_attributes(node_id) const { return {}; }
  qfold::batch_norm_attributes batch_norm_attributes(node_id) const { return {}; }
  std::size_t output_rank(node_id) const { return 0; }
  node_id add_constant(std::span<const float>, std::span<const std::int64_t>) { return 0; }
  void set_operand(node_id, std::size_t, node_id) {}
  void remove_last_operand(node_id) {}
  void replace_uses(node_id, node_id) {}
  void erase(node_id) {}
  std::size_t constant_bytes(node_id) const { return 0; }
};
}  // namespace adapter

std::size_t fold(adapter::graph_without_kind& g) { return qfold::fold_batch_norms(g).folded(); }
