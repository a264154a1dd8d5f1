// Bad input at the graph layer: an adapter that lies (forged shapes and operand lists, answers
// that change between calls, ids out of range, calls that throw) gets a named rejection for the
// site, never undefined behaviour, and the graph stays exactly as it was. Each case is one row of
// docs/errors.md (graph layer); the expected reason follows from the pass's documented guards.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/qfold.hpp>
#include <span>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "hostile_adapter.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using qfold::reason;
using qfold_test::hostile;
using qfold_test::id;
namespace blocks = tiny::blocks;

constexpr std::int64_t wrap_dim = (std::int64_t{1} << 62) + 1;  // 4 * (2^62 + 1) wraps to 4

struct bn_site {
  hostile h{tiny::graph{}};
  id x{}, w{}, conv{}, gamma{}, bn{};
  std::vector<id> bn_operands, conv_operands;
};
bn_site make_bn(bool linear = false) {
  bn_site s;
  auto& g = s.h.g;
  s.x = g.input("x",
                linear ? std::vector<std::int64_t>{1, 2} : std::vector<std::int64_t>{1, 2, 2, 2});
  s.w =
      linear ? g.constant("w", {1, 2, 3, 4}, {2, 2}) : g.constant("w", {1, 2, 3, 4}, {2, 2, 1, 1});
  s.conv = linear ? g.linear("fc", s.x, s.w) : g.conv2d("conv", s.x, s.w);
  s.gamma = g.constant("gamma", {1.5f, 0.5f}, {2});
  s.bn = g.batch_norm("bn", s.conv, s.gamma, g.constant("beta", {0.25f, -1}, {2}),
                      g.constant("mean", {1, 2}, {2}), g.constant("var", {4, 0.25f}, {2}), 1e-5);
  g.mark_output(s.bn);
  const auto ops = g.operands(s.bn);
  s.bn_operands.assign(ops.begin(), ops.end());
  const auto cops = g.operands(s.conv);
  s.conv_operands.assign(cops.begin(), cops.end());
  return s;
}

// Runs `pass` on h; exactly one site, rejected with `why`, graph unchanged.
template <class Pass>
void refused(hostile& h, Pass pass, reason why) {
  const auto before = h.g.structural_hash();
  const auto r = pass(h);
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.sites[0].rejected);
  CHECK(r.sites[0].rejected->code == why);
  CHECK(h.g.structural_hash() == before);
}
const auto bn_pass = [](hostile& h) { return qfold::fold_batch_norms(h); };
const auto alpha_pass = [](hostile& h) { return qfold::fold_dyt_alphas(h); };
const auto affine_pass = [](hostile& h) { return qfold::fold_dyt_affines(h); };
const auto scale_pass = [](hostile& h) { return qfold::fold_scales_into_quantize(h); };

// A float constant view over storage that outlives the pass run.
struct forged {
  std::vector<float> data;
  std::vector<std::int64_t> shape;
  [[nodiscard]] qfold::tensor_view<float> view() const { return {data, shape}; }
};
}  // namespace

TEST_CASE("bad input, graph: the baseline batch-norm site folds", "[bad_input][graph]") {
  auto s = make_bn();
  CHECK(bn_pass(s.h).folded() == 1);
}

TEST_CASE("bad input, graph: operand lists that lie", "[bad_input][graph]") {
  SECTION("batch norm with three operands") {
    auto s = make_bn();
    const std::vector<id> three(s.bn_operands.begin(), s.bn_operands.begin() + 3);
    s.h.operands_hook = [&](id n) -> std::optional<std::span<const id>> {
      if (n == s.bn) return std::span<const id>(three);
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::unsupported);
  }
  SECTION("batch norm with no operand") {
    auto s = make_bn();
    s.h.operands_hook = [&](id n) -> std::optional<std::span<const id>> {
      if (n == s.bn) return std::span<const id>();
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::unsupported);
  }
  SECTION("convolution without its weight operand") {
    auto s = make_bn();
    const std::vector<id> only_x{s.x};
    s.h.operands_hook = [&](id n) -> std::optional<std::span<const id>> {
      if (n == s.conv) return std::span<const id>(only_x);
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::unsupported);
  }
  SECTION("an operand id out of the graph's range") {
    // tiny's at() range-checks and throws: the site is an adapter failure, nothing changes.
    auto s = make_bn();
    std::vector<id> ops = s.bn_operands;
    ops[2] = 9999;
    s.h.operands_hook = [&](id n) -> std::optional<std::span<const id>> {
      if (n == s.bn) return std::span<const id>(ops);
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::adapter_failure);
  }
}

TEST_CASE("bad input, graph: weight shapes that lie", "[bad_input][graph]") {
  const auto weight_is = [](bn_site& s, const forged& f) {
    s.h.constant_hook = [&s, &f](id n) -> std::optional<qfold::tensor_view<float>> {
      if (n == s.w) return f.view();
      return std::nullopt;
    };
  };
  SECTION("dims (4, 2^62 + 1) over 16 floats: the product wraps to 4 in 64 bits") {
    auto s = make_bn();
    const forged f{std::vector<float>(16, 1.0f), {4, wrap_dim, 1, 1}};
    weight_is(s, f);
    refused(s.h, bn_pass, reason::invalid_shape);
  }
  SECTION("dims (2, 2^62 + 1, 2, 2): wraps to 8 = the data's length") {
    auto s = make_bn();
    const forged f{std::vector<float>(8, 1.0f), {2, wrap_dim, 2, 2}};
    weight_is(s, f);
    refused(s.h, bn_pass, reason::invalid_shape);
  }
  SECTION("a negative dim") {
    auto s = make_bn();
    const forged f{std::vector<float>(8, 1.0f), {2, -2, -2, 1}};
    weight_is(s, f);
    refused(s.h, bn_pass, reason::invalid_shape);
  }
  SECTION("a zero dim") {
    auto s = make_bn();
    const forged f{{}, {2, 0, 1, 1}};
    weight_is(s, f);
    refused(s.h, bn_pass, reason::invalid_shape);
  }
  SECTION("dims that ask for more data than there is") {
    auto s = make_bn();
    const forged f{std::vector<float>(7, 1.0f), {2, 2, 2, 1}};
    weight_is(s, f);
    refused(s.h, bn_pass, reason::invalid_shape);
  }
  SECTION("an empty gamma") {
    auto s = make_bn();
    const forged f{{}, {0}};
    s.h.constant_hook = [&](id n) -> std::optional<qfold::tensor_view<float>> {
      if (n == s.gamma) return f.view();
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::invalid_shape);
  }
  SECTION("a gamma longer than the channels") {
    auto s = make_bn();
    const forged f{{1, 1, 1}, {3}};
    s.h.constant_hook = [&](id n) -> std::optional<qfold::tensor_view<float>> {
      if (n == s.gamma) return f.view();
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::channel_mismatch);
  }
  SECTION("a weight of rank 0 (no dims, no data): no channel axis to fold along") {
    auto s = make_bn();
    s.h.constant_hook = [&](id n) -> std::optional<qfold::tensor_view<float>> {
      if (n == s.w) return qfold::tensor_view<float>{};
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::ambiguous_axis);
  }
  SECTION("a linear layer whose output rank is declared 3") {
    auto s = make_bn(true);
    s.h.output_rank_hook = [&](id n) -> std::optional<std::size_t> {
      if (n == s.conv) return 3;
      return std::nullopt;
    };
    refused(s.h, bn_pass, reason::ambiguous_axis);
  }
}

TEST_CASE("bad input, graph: adapter calls that throw", "[bad_input][graph]") {
  SECTION("nodes() throws: nothing is looked at") {
    auto s = make_bn();
    s.h.fail_at = 1;  // the first call of a pass is nodes()
    refused(s.h, bn_pass, reason::adapter_failure);
  }
  SECTION("every later call throws too: the pass still returns") {
    auto s = make_bn();
    s.h.fail_at = 1;
    s.h.persistent = true;
    refused(s.h, bn_pass, reason::adapter_failure);
  }
}

TEST_CASE("bad input, graph: quantized sites that lie", "[bad_input][graph]") {
  const auto alpha_site = [] {
    hostile h{tiny::graph{}};
    const id x = h.g.input("x", {1, 256});
    h.g.mark_output(blocks::dyt_alpha(h.g, "dyt", x, {}));
    return h;
  };
  SECTION("DyT alpha: alpha stops being a constant between two reads") {
    auto h = alpha_site();
    int seen = 0;
    h.int_constant_hook =
        [&](id n) -> std::optional<std::optional<qfold::tensor_view<std::int64_t>>> {
      if (!h.g.int_constant(n)) return std::nullopt;
      if (++seen > 1) return std::optional<qfold::tensor_view<std::int64_t>>{};
      return std::nullopt;
    };
    refused(h, alpha_pass, reason::not_constant);
  }
  SECTION("DyT alpha: a tanh table of 255 entries") {
    auto h = alpha_site();
    const std::vector<std::int8_t> short_table(255, 0);
    h.table_values_hook = [&](id) -> std::optional<std::span<const std::int8_t>> {
      return std::span<const std::int8_t>(short_table);
    };
    refused(h, alpha_pass, reason::invalid_shape);
  }
  SECTION("DyT alpha: an empty tanh table") {
    auto h = alpha_site();
    h.table_values_hook = [&](id) -> std::optional<std::span<const std::int8_t>> {
      return std::span<const std::int8_t>();
    };
    refused(h, alpha_pass, reason::invalid_shape);
  }
  const auto scale_site = [](float c) {
    hostile h{tiny::graph{}};
    const id x = h.g.input("x", {8});
    h.g.mark_output(blocks::scale_then_quantize(h.g, "attn", x, c,
                                                qfold::make_qparams(qfold::dtype::int8, 0.04, 0)));
    return h;
  };
  SECTION("scale: an empty constant divisor") {
    auto h = scale_site(8.0f);
    const forged f{{}, {0}};
    h.constant_hook = [&](id n) -> std::optional<qfold::tensor_view<float>> {
      if (h.g.constant(n)) return f.view();
      return std::nullopt;
    };
    refused(h, scale_pass, reason::not_scalar);
  }
  SECTION("scale: a div with three operands") {
    auto h = scale_site(8.0f);
    std::vector<id> three;
    h.operands_hook = [&](id n) -> std::optional<std::span<const id>> {
      if (h.g.kind(n) != qfold::op_kind::div) return std::nullopt;
      const auto ops = h.g.operands(n);
      three = {ops[0], ops[1], ops[1]};
      return std::span<const id>(three);
    };
    refused(h, scale_pass, reason::unsupported);
  }
  const auto affine_site = [] {
    hostile h{tiny::graph{}};
    std::vector<std::int8_t> table(256);
    for (int i = 0; i < 256; ++i)
      table[static_cast<std::size_t>(i)] = static_cast<std::int8_t>((i - 128) / 4);
    const id x = h.g.input("x", {1, 4, 4, 4});
    const id t = h.g.table("table", x, table);
    h.g.set_output_qparams(t, qfold::make_qparams(qfold::dtype::int8, 0.1, 2));
    blocks::dyt_affine_options o;
    o.gamma = {1, -1, 2, 1};
    o.beta = {5, 0, -7, 3};
    o.table_zero_point = 2;
    o.output_zero_point = -3;
    h.g.mark_output(blocks::dyt_affine_conv(h.g, "affine", t, o));
    return h;
  };
  SECTION("DyT affine: the baseline folds") {
    auto h = affine_site();
    CHECK(affine_pass(h).folded() == 1);
  }
  SECTION("DyT affine: gamma stops being a constant between two reads") {
    auto h = affine_site();
    int seen = 0;
    h.int_constant_hook =
        [&](id n) -> std::optional<std::optional<qfold::tensor_view<std::int64_t>>> {
      if (h.g.name(n) != "affine.gamma") return std::nullopt;
      if (++seen > 1) return std::optional<qfold::tensor_view<std::int64_t>>{};
      return std::nullopt;
    };
    refused(h, affine_pass, reason::not_constant);
  }
  SECTION("DyT affine: an activation shape with a negative dim") {
    auto h = affine_site();
    const std::vector<std::int64_t> bad{1, 4, 4, -4};
    h.output_shape_hook = [&](id n) -> std::optional<std::span<const std::int64_t>> {
      if (h.g.kind(n) == qfold::op_kind::add) return std::span<const std::int64_t>(bad);
      return std::nullopt;
    };
    refused(h, affine_pass, reason::channel_mismatch);
  }
  SECTION("DyT affine: conv weights whose dims wrap to their data's length") {
    auto h = affine_site();
    std::vector<std::int64_t> shape;
    h.int_constant_hook =
        [&](id n) -> std::optional<std::optional<qfold::tensor_view<std::int64_t>>> {
      if (h.g.name(n) != "affine.w") return std::nullopt;
      const auto v = *h.g.int_constant(n);  // (4, 4, 3, 3): 144 values
      shape = {4, 4, 9, wrap_dim};          // 144 * (2^62 + 1) wraps to 144
      return qfold::tensor_view<std::int64_t>{v.data, shape};
    };
    refused(h, affine_pass, reason::invalid_shape);
  }
}

TEST_CASE("bad input, graph: a parameter computed at run time refuses its site, not_constant",
          "[bad_input][graph]") {
  using qfold::int_type;
  constexpr qfold::scale_factor unit{1 << 30, 30}, half{1 << 30, 31};
  const auto i8_i32 = tiny::blocks::rescale_attrs(int_type::i8, int_type::i32, 0, 0);
  const auto i32_i8 = tiny::blocks::rescale_attrs(int_type::i32, int_type::i8, 0, 5);
  // Two independent pairs x -> R1 -> R2; the first pair's R1 has a run-time multiplier.
  hostile h{tiny::graph{}};
  const id x = h.g.input("x", {256});
  const id a1 = h.g.rescale("a1", x, i8_i32, {unit});
  const id a2 = h.g.rescale("a2", a1, i32_i8, {half});
  h.g.mark_output(a2);
  const id b1 = h.g.rescale("b1", x, i8_i32, {unit});
  h.g.mark_output(h.g.rescale("b2", b1, i32_i8, {half}));
  SECTION("the other pair still merges; the refused one is as it was") {
    h.computed_parameters = {a1};
    const auto r = qfold::fold_merge_rescales(h);
    std::size_t not_constant = 0;
    for (const auto& s : r.sites)
      if (s.rejected) {
        CHECK(s.rejected->code == reason::not_constant);
        // named by the node the pattern was matched from: one of the refused pair
        CHECK((std::find(s.nodes.begin(), s.nodes.end(), a1) != s.nodes.end() ||
               std::find(s.nodes.begin(), s.nodes.end(), a2) != s.nodes.end()));
        ++not_constant;
      }
    CHECK(not_constant >= 1);
    CHECK(r.folded() == 1);
    CHECK(h.g.operands(a2)[0] == a1);  // the refused pair as it was
    CHECK(h.g.operands(a1)[0] == x);
  }
  SECTION("a MUL's shift computed at run time, between a pair") {
    hostile m{tiny::graph{}};
    const id in = m.g.input("x", {256});
    const id r1 = m.g.rescale("r1", in, i8_i32, {unit});
    const id k = m.g.int_constant("k", {3}, {1}, qfold::dtype::int32);
    const id mul = m.g.mul("mul", r1, k, 0);
    m.g.mark_output(m.g.rescale("r2", mul, i32_i8, {half}));
    m.computed_parameters = {mul};
    const auto before = m.g.structural_hash();
    const auto r = qfold::fold_merge_rescales(m);
    CHECK(r.folded() == 0);
    REQUIRE_FALSE(r.sites.empty());
    for (const auto& s : r.sites) {
      REQUIRE(s.rejected);
      CHECK(s.rejected->code == reason::not_constant);
    }
    CHECK(m.g.structural_hash() == before);
  }
}
