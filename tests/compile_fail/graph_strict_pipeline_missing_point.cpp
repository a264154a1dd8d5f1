// expect: ir_traits<G>::qparams\(g, n\) is missing; expected: static std::optional<qfold::qparams>
// qparams\(const G&, node_id\) An adapter with batch-norm folding's points only, asked for every
// pass: the strict pipeline fails to compile naming the first point the next pass lacks, with its
// signature.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/graph/standard_pipeline.hpp>
#include <span>
#include <vector>

namespace adapter {
struct batch_norm_only {
  using node_id = int;
  std::vector<node_id> nodes() const { return {}; }
  qfold::op_kind kind(node_id) const { return qfold::op_kind::other; }
  std::span<const node_id> operands(node_id) const { return {}; }
  std::size_t use_count(node_id) const { return 0; }
  std::optional<qfold::tensor_view<float>> constant(node_id) const { return std::nullopt; }
  qfold::conv_attributes conv_attributes(node_id) const { return {}; }
  qfold::batch_norm_attributes batch_norm_attributes(node_id) const { return {}; }
  node_id add_constant(std::span<const float>, std::span<const std::int64_t>) { return 0; }
  void set_operand(node_id, std::size_t, node_id) {}
  void remove_last_operand(node_id) {}
  void replace_uses(node_id, node_id) {}
  void erase(node_id) noexcept {}
};
}  // namespace adapter

std::size_t passes() {
  return qfold::strict_standard_pipeline<adapter::batch_norm_only>().names().size();
}
