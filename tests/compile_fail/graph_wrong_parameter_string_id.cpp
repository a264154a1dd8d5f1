// expect: ir_traits<G>::mul_shift\(g, n\): wrong parameter types; expected: static int
// mul_shift\(const G&, node_id\) Node ids are strings and mul_shift takes an int: the point is
// there with the wrong parameter type, which the DyT alpha pass says as such (not "missing").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/graph/dyt_alpha_pass.hpp>
#include <span>
#include <string>
#include <vector>

namespace adapter {
struct by_name {
  using node_id = std::string;
  std::vector<node_id> nodes() const { return {}; }
  qfold::op_kind kind(const node_id&) const { return qfold::op_kind::other; }
  std::span<const node_id> operands(const node_id&) const { return {}; }
  std::size_t use_count(const node_id&) const { return 0; }
  std::optional<qfold::tensor_view<std::int32_t>> int_constant(const node_id&) const {
    return std::nullopt;
  }
  qfold::rescale_view rescale(const node_id&) const { return {}; }
  int mul_shift(int) const { return 0; }
  node_id add_table(const node_id&, std::span<const std::int8_t>) { return {}; }
  void replace_uses(const node_id&, const node_id&) {}
  void erase(const node_id&) noexcept {}
};
}  // namespace adapter

std::size_t fold(adapter::by_name& g) { return qfold::fold_dyt_alphas(g).folded(); }
