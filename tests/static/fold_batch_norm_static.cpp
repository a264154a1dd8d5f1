// fold_batch_norm in constant evaluation (g++ and clang++): the contraction barrier stays out of
// the way there, T is deduced from arrays, and the weights kind is a required choice. Values are
// derived by hand with powers of two, so every operation is exact.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <qfold/fold/batch_norm.hpp>
#include <span>
#include <type_traits>

namespace {
// Two output channels of one weight each. var + eps = {4, 1}: rsqrt {1/2, 1}; gamma {2, 4}: the
// weight scales are {1, 4}, so the weights {1, -2} fold to {1, -8}. Conv bias:
// ((3 - 1) * 1/2) * 2 + 1/4 = 2.25 and ((5 - 1) * 1) * 4 - 1 = 15; linear: (3 - 1) * (2 * 1/2) +
// 1/4 = 2.25 and (5 - 1) * (4 * 1) - 1 = 15 (exact here, so the two agree).
constexpr std::array<float, 2> w{1.0f, -2.0f}, b{3.0f, 5.0f}, mean{1.0f, 1.0f}, var{3.0f, 0.0f},
    gamma{2.0f, 4.0f}, beta{0.25f, -1.0f};
constexpr std::array<std::int64_t, 4> conv_shape{2, 1, 1, 1};
constexpr std::array<std::int64_t, 2> linear_shape{2, 1};

template <class View>
constexpr std::array<float, 4> fold(const View& view) {
  std::array<float, 2> out_w{}, out_b{};
  const qfold::batch_norm_params params{mean, var, gamma, beta, 1.0f};
  if (qfold::fold_batch_norm(view, b, params, out_w, out_b)) return {};
  return {out_w[0], out_w[1], out_b[0], out_b[1]};
}

constexpr std::array<float, 4> expected{1.0f, -8.0f, 2.25f, 15.0f};
static_assert(fold(qfold::conv_weights(w, conv_shape)) == expected);
static_assert(fold(qfold::linear_weights(w, linear_shape)) == expected);
static_assert(fold(qfold::weights_view{w, conv_shape, qfold::weight_layout::o_i_s, 1,
                                       qfold::weights_kind::conv}) == expected);

// The same weights as bytes at an odd address (a model file's raw data read in place).
constexpr std::array<std::byte, 9> misplaced_w = [] {
  std::array<std::byte, 9> r{};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto one = std::bit_cast<std::array<std::byte, sizeof(float)>>(w[i]);
    for (std::size_t k = 0; k < sizeof(float); ++k) r[1 + i * sizeof(float) + k] = one[k];
  }
  return r;
}();
static_assert(fold(qfold::weights_view<float>(
                  qfold::unaligned_values<float>{misplaced_w.data() + 1, 2}, conv_shape,
                  qfold::weight_layout::o_i_s, 1, qfold::weights_kind::conv)) == expected);

// In two steps (a writer folding pieces as it writes them): the scales {1, 4}, the same bias,
// then each weight alone from its scale; a range beyond the weights is refused.
template <class View>
constexpr std::array<float, 6> fold_in_two_steps(const View& view) {
  std::array<float, 2> scales{}, out_b{}, out_w{};
  const qfold::batch_norm_params params{mean, var, gamma, beta, 1.0f};
  if (qfold::fold_batch_norm_scales(view, b, params, scales, out_b)) return {};
  for (std::size_t i = 0; i < 2; ++i)
    if (qfold::fold_batch_norm_weights(view, scales, i, std::span<float>(out_w).subspan(i, 1)))
      return {};
  if (!qfold::fold_batch_norm_weights(view, scales, 2, std::span<float>(out_w).first(1))) return {};
  return {out_w[0], out_w[1], out_b[0], out_b[1], scales[0], scales[1]};
}
constexpr std::array<float, 6> expected_in_two_steps{1.0f, -8.0f, 2.25f, 15.0f, 1.0f, 4.0f};
static_assert(fold_in_two_steps(qfold::conv_weights(w, conv_shape)) == expected_in_two_steps);
static_assert(fold_in_two_steps(qfold::weights_view<float>(
                  qfold::unaligned_values<float>{misplaced_w.data() + 1, 2}, conv_shape,
                  qfold::weight_layout::o_i_s, 1, qfold::weights_kind::conv)) ==
              expected_in_two_steps);

// T comes from the data; the kind is whatever was asked for.
static_assert(
    std::is_same_v<decltype(qfold::conv_weights(w, conv_shape)), qfold::weights_view<float>>);
static_assert(qfold::conv_weights(w, conv_shape).kind == qfold::weights_kind::conv);
static_assert(qfold::linear_weights(w, linear_shape).kind == qfold::weights_kind::linear);
static_assert(std::is_same_v<decltype(qfold::batch_norm_params{mean, var, gamma, beta}),
                             qfold::batch_norm_params<float>>);
// The bool spelling from before weights_kind still means what it said.
static_assert(qfold::weights_view<float>{w, linear_shape, qfold::weight_layout::o_i_s, 1, true}
                  .kind == qfold::weights_kind::linear);
static_assert(qfold::weights_view<float>{w, conv_shape, qfold::weight_layout::o_i_s, 1, false}
                  .kind == qfold::weights_kind::conv);
// No kind, no weights_view (tests/compile_fail/weights_view_kind_required.cpp); no int for a bool.
static_assert(
    !std::is_constructible_v<qfold::weights_view<float>, std::span<const float>,
                             std::span<const std::int64_t>, qfold::weight_layout, std::int64_t>);
static_assert(!std::is_constructible_v<qfold::weights_view<float>, std::span<const float>,
                                       std::span<const std::int64_t>, qfold::weight_layout,
                                       std::int64_t, int>);
}  // namespace
