// The OHWI (TFLite/TOSA) and HWIO layouts fold to the same numbers as OIHW, element for element
// after the permutation: the golden torch cases cover OIHW and IOHW; these layouts are checked by
// permuting a random OIHW case and its fold (the arithmetic per element is the same operation).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <qfold/fold/batch_norm.hpp>
#include <random>
#include <string_view>
#include <vector>

#include "catch_compat.hpp"

namespace {
// A batch norm's statistics and a conv bias, one value per channel from dist (variance |x| +
// var_floor), drawn channel by channel.
struct random_bn_data {
  std::vector<float> mean, var, gamma, beta, bias;
  random_bn_data(std::size_t channels, std::mt19937& gen, std::normal_distribution<float>& dist,
                 float var_floor)
      : mean(channels), var(channels), gamma(channels), beta(channels), bias(channels) {
    for (std::size_t o = 0; o < channels; ++o) {
      mean[o] = dist(gen);
      var[o] = std::abs(dist(gen)) + var_floor;
      gamma[o] = dist(gen);
      beta[o] = dist(gen);
      bias[o] = dist(gen);
    }
  }
};
}  // namespace

TEST_CASE("batch norm folds OHWI and HWIO weights like OIHW, and in place", "[fold]") {
  std::mt19937 gen(17);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  const std::int64_t O = 6, I = 4, H = 3, W = 2;
  std::vector<float> oihw(static_cast<std::size_t>(O * I * H * W));
  for (auto& x : oihw) x = dist(gen);
  const random_bn_data p(6, gen, dist, 0.1f);
  const auto& bias = p.bias;
  const qfold::batch_norm_params<float> bn{p.mean, p.var, p.gamma, p.beta, 1e-5f, false};
  const auto at = [&](std::int64_t o, std::int64_t i, std::int64_t h, std::int64_t w) {
    return static_cast<std::size_t>(((o * I + i) * H + h) * W + w);
  };
  // The same weights permuted into OHWI and HWIO.
  std::vector<float> ohwi(oihw.size()), hwio(oihw.size());
  for (std::int64_t o = 0; o < O; ++o)
    for (std::int64_t i = 0; i < I; ++i)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w) {
          ohwi[static_cast<std::size_t>(((o * H + h) * W + w) * I + i)] = oihw[at(o, i, h, w)];
          hwio[static_cast<std::size_t>(((h * W + w) * I + i) * O + o)] = oihw[at(o, i, h, w)];
        }
  const std::vector<std::int64_t> s_oihw{O, I, H, W}, s_ohwi{O, H, W, I}, s_hwio{H, W, I, O};
  std::vector<float> f_oihw(oihw.size()), f_ohwi(oihw.size()), f_hwio(oihw.size()), b1(6), b2(6),
      b3(6);
  REQUIRE_FALSE(qfold::fold_batch_norm(
      qfold::conv_weights(oihw, s_oihw, qfold::weight_layout::o_i_s), bias, bn, f_oihw, b1));
  REQUIRE_FALSE(qfold::fold_batch_norm(
      qfold::conv_weights(ohwi, s_ohwi, qfold::weight_layout::o_s_i), bias, bn, f_ohwi, b2));
  REQUIRE_FALSE(qfold::fold_batch_norm(
      qfold::conv_weights(hwio, s_hwio, qfold::weight_layout::s_i_o), bias, bn, f_hwio, b3));
  for (std::int64_t o = 0; o < O; ++o)
    for (std::int64_t i = 0; i < I; ++i)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w) {
          const auto ref = std::bit_cast<std::uint32_t>(f_oihw[at(o, i, h, w)]);
          CHECK(std::bit_cast<std::uint32_t>(
                    f_ohwi[static_cast<std::size_t>(((o * H + h) * W + w) * I + i)]) == ref);
          CHECK(std::bit_cast<std::uint32_t>(
                    f_hwio[static_cast<std::size_t>(((h * W + w) * I + i) * O + o)]) == ref);
        }
  CHECK(b1 == b2);
  CHECK(b1 == b3);
  // Folding into the weights' own storage gives the same values.
  auto same = oihw;
  REQUIRE_FALSE(qfold::fold_batch_norm(
      qfold::conv_weights(same, s_oihw, qfold::weight_layout::o_i_s), bias, bn, same, b1));
  CHECK(same == f_oihw);
}

TEST_CASE("batch norm: a site above the streaming size folds to the same bits", "[fold]") {
  // 64 x 47 x 10 x 10 floats (1.2 MB): the row kernel stores non-temporally where the CPU can
  // (AVX-512 or AVX2); every weight must equal w * (gamma / sqrt(var + eps)) in float, as the
  // scalar s_i_o path and the formula give it, whatever the output's alignment.
  const std::int64_t O = 64, I = 47, H = 10, W = 10;
  const std::size_t n = static_cast<std::size_t>(O * I * H * W);
  REQUIRE(n * sizeof(float) >= qfold::detail::streaming_bytes);
  std::mt19937 gen(23);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> w(n);
  for (auto& x : w) x = dist(gen);
  const random_bn_data p(64, gen, dist, 0.01f);
  const auto &mean = p.mean, &var = p.var, &gamma = p.gamma, &beta = p.beta, &bias = p.bias;
  const float eps = 1e-5f;
  const qfold::batch_norm_params<float> bn{mean, var, gamma, beta, eps, false};
  const std::vector<std::int64_t> shape{O, I, H, W};
  const std::size_t row = n / 64;
  for (const std::size_t offset :
       {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {  // output aligned, and not
    std::vector<float> storage(n + offset), b(64);
    const std::span<float> out(storage.data() + offset, n);
    REQUIRE_FALSE(qfold::fold_batch_norm(qfold::conv_weights(w, shape, qfold::weight_layout::o_i_s),
                                         bias, bn, out, b));
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t o = i / row;
      const float s = gamma[o] * (1.0f / std::sqrt(var[o] + eps));
      differ += std::bit_cast<std::uint32_t>(out[i]) != std::bit_cast<std::uint32_t>(w[i] * s);
    }
    CHECK(differ == 0);
  }
  // A product that overflows in the middle of a streamed row is found as in any other row: the
  // channel with the largest |scale| (above 1) gets the largest float there.
  std::size_t o_big = 0;
  const auto scale_of = [&](std::size_t o) { return gamma[o] * (1.0f / std::sqrt(var[o] + eps)); };
  for (std::size_t o = 1; o < 64; ++o)
    if (std::abs(scale_of(o)) > std::abs(scale_of(o_big))) o_big = o;
  REQUIRE(std::abs(scale_of(o_big)) > 1.0f);
  std::vector<float> big = w, out(n), b(64);
  const std::size_t at = o_big * row + 1001;
  big[at] = std::numeric_limits<float>::max();
  REQUIRE_FALSE(std::isfinite(big[at] * scale_of(o_big)));
  const auto r = qfold::fold_batch_norm(
      qfold::conv_weights(big, shape, qfold::weight_layout::o_i_s), bias, bn, out, b);
  REQUIRE(r);
  CHECK(r->index == at);
}

#if defined(QFOLD_DETAIL_X86_TARGETS)
TEST_CASE("batch norm: every row kernel this CPU has gives the plain loop's bits", "[fold]") {
  // The fold uses the widest kernels, streaming or not by CPU; the others run on other CPUs (AVX2
  // without AVX-512, plain x86-64 with SSE only), so each is checked here against w * s in float:
  // rows of every length up to three vectors past 64 floats, the output at each alignment within
  // a vector, and a non-finite product at each position of a row.
  const auto all = qfold::detail::available_row_kernels();
  REQUIRE(all.size >= 2);
  CHECK(std::string_view(all.names[all.size - 2]) == "sse streaming");
  CHECK(std::string_view(all.names[all.size - 1]) == "sse");
  std::mt19937 gen(29);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> in(120), storage(140);
  for (auto& x : in) x = dist(gen);
  // The input also at every byte offset within a float (kernels read it byte-wise).
  std::vector<std::byte> bytes(in.size() * sizeof(float) + 3);
  const float s = -1.7f;
  for (std::size_t k = 0; k < all.size; ++k) {
    INFO("kernel " << all.names[k]);
    std::size_t differ = 0, wrong_flag = 0;
    for (std::size_t shift = 0; shift < 4; ++shift)
      for (std::size_t n = 0; n <= 112; ++n)
        for (std::size_t offset = 0; offset < 16; ++offset) {
          std::fill(storage.begin(), storage.end(), 0.0f);
          float* out = storage.data() + offset;
          std::memcpy(bytes.data() + shift, in.data(), in.size() * sizeof(float));
          const void* from =
              shift == 0 ? static_cast<const void*>(in.data()) : bytes.data() + shift;
          wrong_flag += !all.kernels[k](from, out, n, s);
          qfold::detail::end_streaming();
          for (std::size_t i = 0; i < n; ++i)
            differ +=
                std::bit_cast<std::uint32_t>(out[i]) != std::bit_cast<std::uint32_t>(in[i] * s);
          for (std::size_t i = n + offset; i < storage.size(); ++i) differ += storage[i] != 0.0f;
          for (std::size_t i = 0; i < offset; ++i) differ += storage[i] != 0.0f;
        }
    CHECK(differ == 0);
    CHECK(wrong_flag == 0);
    std::size_t missed = 0;
    for (std::size_t at = 0; at < 70; ++at) {
      std::vector<float> big(in.begin(), in.begin() + 70);
      big[at] = std::numeric_limits<float>::max();
      missed += all.kernels[k](big.data(), storage.data() + at % 16, 70, s);
    }
    qfold::detail::end_streaming();
    CHECK(missed == 0);
  }
}
#endif

namespace {
// `v`'s bytes starting `shift` bytes into a byte buffer, as a model file may hold them.
// A weight layout and shape (grouped where `groups` > 1) with its output channel count.
struct layout_case {
  qfold::weight_layout layout;
  std::vector<std::int64_t> shape;
  std::int64_t groups;
  std::size_t channels;
};
struct misplaced {
  std::vector<std::byte> storage;
  qfold::unaligned_values<float> view;
  misplaced(const std::vector<float>& v, std::size_t shift)
      : storage(v.size() * sizeof(float) + shift) {
    std::memcpy(storage.data() + shift, v.data(), v.size() * sizeof(float));
    view = {storage.data() + shift, v.size()};
  }
};
}  // namespace

TEST_CASE("batch norm reads weights from bytes at any alignment, to the same bits", "[fold]") {
  // Each layout (grouped where it has groups) and kind, small and above the streaming size:
  // folded from unaligned_values at byte offsets 0-7 the weights and bias are those the aligned
  // span folds to (itself checked against torch and the formula above), and so is a rejection.
  std::mt19937 gen(31);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  using qfold::weight_layout;
  const std::vector<layout_case> cases{
      {weight_layout::o_i_s, {6, 4, 3, 3}, 2, 6},      {weight_layout::o_s_i, {6, 3, 3, 4}, 1, 6},
      {weight_layout::s_i_o, {3, 3, 4, 6}, 1, 6},      {weight_layout::i_o_s, {4, 3, 2, 2}, 2, 6},
      {weight_layout::o_i_s, {64, 47, 10, 10}, 1, 64},  // streamed rows where the CPU pays
  };
  for (const auto& c : cases)
    for (const auto kind : {qfold::weights_kind::conv, qfold::weights_kind::linear}) {
      std::size_t n = 1;
      for (const auto d : c.shape) n *= static_cast<std::size_t>(d);
      std::vector<float> w(n);
      for (auto& x : w) x = dist(gen);
      const random_bn_data p(c.channels, gen, dist, 0.1f);
      const auto& bias = p.bias;
      const qfold::batch_norm_params<float> bn{p.mean, p.var, p.gamma, p.beta, 1e-5f, false};
      std::vector<float> want(n), want_b(c.channels);
      REQUIRE_FALSE(
          qfold::fold_batch_norm(qfold::weights_view<float>(w, c.shape, c.layout, c.groups, kind),
                                 bias, bn, want, want_b));
      // The same weights with a product that overflows (the rejection names the same index).
      std::vector<float> huge = w;
      huge[n / 2] = std::numeric_limits<float>::max();
      std::vector<float> scratch(n), scratch_b(c.channels);
      const auto want_r = qfold::fold_batch_norm(
          qfold::weights_view<float>(huge, c.shape, c.layout, c.groups, kind), bias, bn, scratch,
          scratch_b);
      for (std::size_t shift = 0; shift < 8; ++shift) {
        INFO("layout " << static_cast<int>(c.layout) << ", " << n << " weights, shift " << shift);
        const misplaced m(w, shift);
        std::vector<float> got(n), got_b(c.channels);
        REQUIRE_FALSE(qfold::fold_batch_norm(
            qfold::weights_view<float>(m.view, c.shape, c.layout, c.groups, kind), bias, bn, got,
            got_b));
        std::size_t differ = 0;
        for (std::size_t i = 0; i < n; ++i)
          differ += std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(want[i]);
        CHECK(differ == 0);
        CHECK(got_b == want_b);
        const misplaced mh(huge, shift);
        const auto r = qfold::fold_batch_norm(
            qfold::weights_view<float>(mh.view, c.shape, c.layout, c.groups, kind), bias, bn,
            scratch, scratch_b);
        REQUIRE(r.has_value() == want_r.has_value());
        if (r) CHECK(r->index == want_r->index);
      }
    }
}

TEST_CASE("batch norm refuses unaligned weights that disagree with their shape", "[fold]") {
  const std::vector<float> w(16, 0.5f), p(4, 1.0f);
  const std::vector<std::int64_t> shape{4, 4};
  const qfold::batch_norm_params<float> bn{p, p, p, p, 1e-5f, false};
  std::vector<float> out(16), b(4);
  const misplaced m(w, 1);
  const auto refused = [&](qfold::weights_view<float> v) {
    const auto r = qfold::fold_batch_norm(v, {}, bn, out, b);
    return r && r->code == qfold::reason::invalid_shape;
  };
  using qfold::weight_layout, qfold::weights_kind;
  CHECK(refused({qfold::unaligned_values<float>{m.view.bytes, 15}, shape, weight_layout::o_i_s, 1,
                 weights_kind::linear}));
  CHECK(refused({qfold::unaligned_values<float>{nullptr, 16}, shape, weight_layout::o_i_s, 1,
                 weights_kind::linear}));
  qfold::weights_view<float> both(w, shape, weight_layout::o_i_s, 1, weights_kind::linear);
  both.unaligned = m.view;  // values and bytes at once: which would be meant?
  CHECK(refused(both));
  CHECK_FALSE(qfold::fold_batch_norm(
      qfold::weights_view<float>(m.view, shape, weight_layout::o_i_s, 1, weights_kind::linear), {},
      bn, out, b));
}

TEST_CASE("batch norm in two steps: every range of the weights, fold_batch_norm's bits", "[fold]") {
  // fold_batch_norm_scales, then fold_batch_norm_weights over a range (a writer folding each
  // piece as it writes it): for every range [first, first + n) of small weights of each layout
  // and kind, the values are fold_batch_norm's bit for bit, and each one is w * (gamma * (1 /
  // sqrt(var + eps))) in float, its channel taken from the element's index by the layout's
  // definition; a non-finite product is named by its own index in every range holding it.
  std::mt19937 gen(47);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  using qfold::weight_layout;
  const std::vector<layout_case> cases{
      {weight_layout::o_i_s, {6, 2, 3, 3}, 2, 6}, {weight_layout::o_s_i, {6, 3, 2, 2}, 1, 6},
      {weight_layout::s_i_o, {2, 3, 4, 6}, 1, 6}, {weight_layout::i_o_s, {4, 3, 2, 2}, 2, 6},
      {weight_layout::o_i_s, {5, 7}, 1, 5},       {weight_layout::s_c_m, {2, 2, 3, 2}, 3, 6},
  };
  const auto channel_of = [](const layout_case& c, std::size_t i, std::size_t n) -> std::size_t {
    const auto d0 = static_cast<std::size_t>(c.shape[0]), d1 = static_cast<std::size_t>(c.shape[1]);
    switch (c.layout) {
      case weight_layout::o_i_s:
      case weight_layout::o_s_i:
        return i / (n / d0);
      case weight_layout::s_i_o:
        return i % static_cast<std::size_t>(c.shape.back());
      case weight_layout::s_c_m:  // (k..., C, M): out channel c * M + m, the last two dims
        return i % static_cast<std::size_t>(c.shape[c.shape.size() - 2] * c.shape.back());
      case weight_layout::i_o_s: {  // (in, out / groups, k...): out channel g * d1 + j
        const std::size_t k = n / (d0 * d1), in = i / (d1 * k), j = (i / k) % d1;
        return in / (d0 / static_cast<std::size_t>(c.groups)) * d1 + j;
      }
    }
    return 0;
  };
  const auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  for (const auto& c : cases)
    for (const auto kind : {qfold::weights_kind::conv, qfold::weights_kind::linear}) {
      std::size_t n = 1;
      for (const auto d : c.shape) n *= static_cast<std::size_t>(d);
      std::vector<float> w(n);
      for (auto& x : w) x = dist(gen);
      const random_bn_data p(c.channels, gen, dist, 0.1f);
      const qfold::batch_norm_params<float> bn{p.mean, p.var, p.gamma, p.beta, 1e-5f, false};
      const qfold::weights_view<float> view(w, c.shape, c.layout, c.groups, kind);
      std::vector<float> want(n), want_b(c.channels), scales(c.channels), bias(c.channels);
      REQUIRE_FALSE(qfold::fold_batch_norm(view, p.bias, bn, want, want_b));
      REQUIRE_FALSE(qfold::fold_batch_norm_scales(view, p.bias, bn, scales, bias));
      CHECK(bias == want_b);
      std::size_t off_formula = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t o = channel_of(c, i, n);
        off_formula +=
            bits(want[i]) != bits(w[i] * (p.gamma[o] * (1.0f / std::sqrt(p.var[o] + 1e-5f))));
      }
      CHECK(off_formula == 0);
      std::vector<float> huge = w;
      const std::size_t bad = n / 2;
      huge[bad] = std::numeric_limits<float>::max();
      if (std::abs(huge[bad] * scales[channel_of(c, bad, n)]) <= std::numeric_limits<float>::max())
        huge[bad] = std::numeric_limits<float>::infinity();  // a scale below 1 keeps max finite
      const qfold::weights_view<float> huge_view(huge, c.shape, c.layout, c.groups, kind);
      std::size_t differ = 0, misnamed = 0;
      std::vector<float> got(n);
      for (std::size_t first = 0; first <= n; ++first)
        for (std::size_t len = 0; first + len <= n; ++len) {
          const std::span<float> piece(got.data(), len);
          REQUIRE_FALSE(qfold::fold_batch_norm_weights(view, scales, first, piece));
          for (std::size_t k = 0; k < len; ++k) differ += bits(got[k]) != bits(want[first + k]);
          const auto r = qfold::fold_batch_norm_weights(huge_view, scales, first, piece);
          const bool holds = first <= bad && bad < first + len;
          misnamed += r.has_value() != holds ||
                      (r && (r->code != qfold::reason::non_finite || r->index != bad));
        }
      INFO("layout " << static_cast<int>(c.layout) << ", " << n << " weights");
      CHECK(differ == 0);
      CHECK(misnamed == 0);
      // Misuse is refused: scales of another count, a range beyond the weights.
      std::vector<float> one(1);
      const auto short_scales = std::span<const float>(scales).first(c.channels - 1);
      CHECK(qfold::fold_batch_norm_weights(view, short_scales, 0, std::span<float>(one))->code ==
            qfold::reason::channel_mismatch);
      CHECK(qfold::fold_batch_norm_weights(view, scales, n, std::span<float>(one)));
      CHECK(qfold::fold_batch_norm_weights(view, scales, n + 1, std::span<float>()));
      CHECK(qfold::fold_batch_norm_weights(view, scales, SIZE_MAX, std::span<float>(one)));
      CHECK(
          qfold::fold_batch_norm_scales(view, p.bias, bn, std::span<float>(scales).first(1), bias));
    }
  // A non-finite bias: the scales step names it as fold_batch_norm does (index = weights +
  // channel), and still gives the scales.
  const std::vector<float> w(8, 1.0f), ones(2, 1.0f),
      beta{0.0f, std::numeric_limits<float>::infinity()};
  const std::vector<std::int64_t> shape{2, 4};
  const qfold::batch_norm_params<float> bn{ones, ones, ones, beta, 0.0f, false};
  const qfold::weights_view<float> v(w, shape, weight_layout::o_i_s, 1, qfold::weights_kind::conv);
  std::vector<float> out(8), b(2), s(2);
  const auto want_r = qfold::fold_batch_norm(v, {}, bn, out, b);
  const auto r = qfold::fold_batch_norm_scales(v, {}, bn, s, b);
  REQUIRE(want_r);
  REQUIRE(r);
  CHECK(r->code == want_r->code);
  CHECK(r->index == want_r->index);
  CHECK(r->index == 9);
  CHECK(s == ones);
}

TEST_CASE("batch norm in two steps: pieces of a site above the streaming size", "[fold]") {
  // Cut as a writer cuts them (a power of two) and at odd places, the pieces of a large site
  // (whose whole fold streams where the CPU pays) are its fold's bits.
  std::mt19937 gen(53);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  const std::vector<std::int64_t> shape{64, 47, 10, 10};
  const std::size_t n = 64 * 47 * 100;
  std::vector<float> w(n);
  for (auto& x : w) x = dist(gen);
  const random_bn_data p(64, gen, dist, 0.1f);
  const qfold::batch_norm_params<float> bn{p.mean, p.var, p.gamma, p.beta, 1e-5f, false};
  const misplaced m(w, 3);  // read in place at an odd address, as from a model file
  const qfold::weights_view<float> view(m.view, shape, qfold::weight_layout::o_i_s, 1,
                                        qfold::weights_kind::conv);
  std::vector<float> want(n), want_b(64), scales(64), bias(64);
  REQUIRE_FALSE(qfold::fold_batch_norm(view, p.bias, bn, want, want_b));
  REQUIRE_FALSE(qfold::fold_batch_norm_scales(view, p.bias, bn, scales, bias));
  for (const std::size_t piece : {std::size_t{1} << 14, std::size_t{1} << 16, std::size_t{4699}}) {
    std::vector<float> got(n);
    for (std::size_t first = 0; first < n; first += piece) {
      const std::size_t len = std::min(piece, n - first);
      REQUIRE_FALSE(qfold::fold_batch_norm_weights(view, scales, first,
                                                   std::span<float>(got.data() + first, len)));
    }
    CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
  }
}
