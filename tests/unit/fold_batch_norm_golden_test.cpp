// Batch-norm folding against torch.nn.utils.fusion, bit for bit (signed zeros and subnormals
// included): 261 cases made by tests/golden/make_batch_norm_folds.py with python3-torch (conv
// 1d/2d/3d, grouped, depthwise, transposed, linear; bias, gamma, beta present or absent; two
// epsilons; float32 and float64). Where torch raises or returns a wrongly shaped weight (grouped
// transposed convolution; linear without gamma/beta) the file holds the correct fold.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <qfold/qfold.hpp>
#include <string>
#include <vector>

#include "batch_norm_golden.hpp"
#include "catch_compat.hpp"

namespace {
using qfold_test::as;
using qfold_test::bits;
using qfold_test::bn_case;
using qfold_test::read_cases;

// The fold with its weights kind a compile-time constant and inlined into this function
// ([[gnu::flatten]]): what an optimizer sees at its most, so that a product it could fuse with
// the addition after it (an FMA) would be fused here. tests/CMakeLists.txt also builds this file
// at -march=native -ffp-contract=fast -std=gnu++20 (fold_batch_norm.contraction), where GCC
// contracts such a product unless qfold prevents it.
template <qfold::weights_kind Kind, class T>
[[gnu::flatten]] std::optional<qfold::rejection> fold_as(
    const std::vector<T>& w, const std::vector<std::int64_t>& shape, qfold::weight_layout layout,
    std::int64_t groups, const std::vector<T>& b, const qfold::batch_norm_params<T>& params,
    std::vector<T>& out_w, std::vector<T>& out_b) {
  if constexpr (Kind == qfold::weights_kind::linear)
    return qfold::fold_batch_norm(qfold::linear_weights(w, shape), b, params, out_w, out_b);
  else
    return qfold::fold_batch_norm(qfold::conv_weights(w, shape, layout, groups), b, params, out_w,
                                  out_b);
}

template <class T>
void check(const bn_case& c, int& bit_exact, int& refused, int& wrong_kind_differs) {
  const auto w = as<T>(c, "w"), b = as<T>(c, "b"), mean = as<T>(c, "mean"), var = as<T>(c, "var"),
             fused_w = as<T>(c, "fused_w"), fused_b = as<T>(c, "fused_b");
  auto gamma = as<T>(c, "gamma"), beta = as<T>(c, "beta");
  const std::string& layout = c.keys.at("layout");
  const auto layout_of =
      layout.rfind("IO", 0) == 0 ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s;
  const std::int64_t groups = std::stoll(c.keys.at("groups"));
  const auto eps = static_cast<T>(std::strtod(c.keys.at("eps").c_str(), nullptr));
  // torch folds an absent gamma / beta as ones / zeros; qfold takes them explicitly (an empty
  // span is refused). Multiplying by 1 and adding +0 are what torch computes too.
  if (gamma.empty()) gamma.assign(mean.size(), T{1});
  if (beta.empty()) beta.assign(mean.size(), T{0});
  std::vector<T> out_w(w.size()), out_b(mean.size());
  const qfold::batch_norm_params params{mean, var, gamma, beta, eps, false};
  const auto r = c.keys.at("kind") == "linear"
                     ? fold_as<qfold::weights_kind::linear>(w, c.shape, layout_of, groups, b,
                                                            params, out_w, out_b)
                     : fold_as<qfold::weights_kind::conv>(w, c.shape, layout_of, groups, b, params,
                                                          out_w, out_b);
  bool finite = true;
  for (const T v : fused_w) finite = finite && std::isfinite(v);
  for (const T v : fused_b) finite = finite && std::isfinite(v);
  CAPTURE(c.keys.at("name"));
  if (!finite) {  // torch gives inf/NaN here; qfold refuses the fold
    REQUIRE(r.has_value());
    CHECK(r->code == qfold::reason::non_finite);
    ++refused;
    return;
  }
  REQUIRE_FALSE(r.has_value());
  REQUIRE(out_w.size() == fused_w.size());
  for (std::size_t i = 0; i < out_w.size(); ++i) {
    CAPTURE(i);
    REQUIRE(bits(out_w[i]) == bits(fused_w[i]));
  }
  for (std::size_t o = 0; o < out_b.size(); ++o) {
    CAPTURE(o, out_b[o], fused_b[o]);
    REQUIRE(bits(out_b[o]) == bits(fused_b[o]));
  }
  ++bit_exact;
  // The kind is no detail: a linear layer folded with the conv order misses torch's bias bits.
  if (c.keys.at("kind") == "linear") {
    std::vector<T> conv_w(w.size()), conv_b(mean.size());
    REQUIRE_FALSE(
        fold_as<qfold::weights_kind::conv>(w, c.shape, layout_of, groups, b, params, conv_w, conv_b)
            .has_value());
    bool differs = false;
    for (std::size_t o = 0; o < conv_b.size(); ++o)
      differs = differs || bits(conv_b[o]) != bits(fused_b[o]);
    if (differs) ++wrong_kind_differs;
  }
}
}  // namespace

TEST_CASE(
    "batch-norm folds are bit-identical to torch.nn.utils.fusion (and correct where torch is not)",
    "[fold][golden]") {
  const auto cases = read_cases();
  REQUIRE(cases.size() == 261);
  int bit_exact = 0, refused = 0, torch_wrong_or_raises = 0, wrong_kind_differs = 0;
  for (const auto& c : cases) {
    if (c.keys.at("torch_status") != "ok") ++torch_wrong_or_raises;
    if (c.keys.at("dtype") == "float64")
      check<double>(c, bit_exact, refused, wrong_kind_differs);
    else
      check<float>(c, bit_exact, refused, wrong_kind_differs);
  }
  CHECK(bit_exact + refused == 261);
  CHECK(wrong_kind_differs > 0);
  WARN(wrong_kind_differs << " linear cases whose bias the conv order would get wrong");
  CHECK(refused == 1);  // conv2d_extreme overflows to inf
  CHECK(torch_wrong_or_raises ==
        76);  // grouped transposed convolutions and linear without gamma/beta
}
