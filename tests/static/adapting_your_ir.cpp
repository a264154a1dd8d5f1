// The example of docs/adapting-your-ir.md, compiled: a third-party IR adapted without touching
// it, by specializing qfold::ir_traits. Keep the two in sync.
#include <cstdint>
#include <optional>
#include <qfold/qfold.hpp>
#include <span>
#include <vector>

namespace theirs {  // an IR qfold knows nothing about
struct op {
  int opcode;  // 0 input, 1 const, 2 conv, 3 batchnorm, 4 other
  std::vector<int> args;
  std::vector<float> payload;
  std::vector<std::int64_t> dims;
  int groups = 1;
  float eps = 1e-5f;
  int readers = 0;
};
struct module {
  std::vector<op> ops;
};
}  // namespace theirs

template <>
struct qfold::ir_traits<theirs::module> {
  using node_id = int;
  static std::vector<int> nodes(const theirs::module& m) {
    std::vector<int> r(m.ops.size());
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int>(i);
    return r;
  }
  static op_kind kind(const theirs::module& m, int n) {
    constexpr op_kind map[] = {op_kind::input, op_kind::constant, op_kind::convolution,
                               op_kind::batch_norm, op_kind::other};
    return map[m.ops[static_cast<std::size_t>(n)].opcode];
  }
  static std::span<const int> operands(const theirs::module& m, int n) {
    return m.ops[static_cast<std::size_t>(n)].args;
  }
  static std::size_t use_count(const theirs::module& m, int n) {
    return static_cast<std::size_t>(m.ops[static_cast<std::size_t>(n)].readers);
  }
};

// Enough for passes that only read the structure; batch-norm folding needs more (see the docs).
static_assert(qfold::ir_graph<theirs::module>);
static_assert(!qfold::constant_graph<theirs::module>);
static_assert(!qfold::batch_norm_foldable_graph<theirs::module>);
