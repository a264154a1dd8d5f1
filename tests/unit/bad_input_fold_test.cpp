// Hostile input for the fold/ layer (issue 11): each case names the input and asserts the exact
// rejection reason, derived in the comment next to it from the fold's documented rules, never
// copied from its output. Every case starts from a valid site that folds (checked first), so a
// case fails if its one change is not what refuses it. The catalogue is docs/errors.md's fold
// table.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/fold/batch_norm.hpp>
#include <qfold/fold/dyt_affine.hpp>
#include <qfold/fold/dyt_alpha.hpp>
#include <qfold/fold/scale_into_quantize.hpp>
#include <span>
#include <vector>

#include "catch_compat.hpp"

namespace {
using i64 = std::int64_t;
using qfold::int_type;
using qfold::reason;
using qfold::weight_layout;
constexpr i64 wrap_dim = (i64{1} << 62) + 1;  // 4 * (2^62 + 1) = 2^64 + 4: wraps to 4 in 64 bits
constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float inf = std::numeric_limits<float>::infinity();

// ------------------------------------------------------------------------------ batch norm
// A valid conv 2d: OIHW (4, 2, 3, 3), 72 weights, 4 channels of statistics.
struct bn_site {
  std::vector<float> w = std::vector<float>(72, 0.5f);
  std::vector<i64> shape{4, 2, 3, 3};
  weight_layout layout = weight_layout::o_i_s;
  i64 groups = 1;
  std::vector<float> mean{0.f, 1.f, -1.f, 2.f}, var{1.f, 2.f, 0.5f, 4.f}, gamma{1.f, 2.f, 3.f, 4.f},
      beta{0.f, -1.f, 1.f, 0.25f}, bias{1.f, 1.f, 1.f, 1.f};
  float epsilon = 1e-5f;
  bool training = false;
  std::size_t out_w = 72, out_b = 4;

  std::optional<qfold::rejection> fold() const {
    std::vector<float> fw(out_w), fb(out_b);
    const auto v = qfold::conv_weights(w, shape, layout, groups);
    const qfold::batch_norm_params bn{mean, var, gamma, beta, epsilon, training};
    return qfold::fold_batch_norm(v, bias, bn, fw, fb);
  }
};

qfold::rejection refused(const bn_site& s, reason why) {
  REQUIRE(bn_site{}.fold() == std::nullopt);  // the unchanged site folds
  const auto r = s.fold();
  REQUIRE(r.has_value());
  CHECK(to_string(r->code) == to_string(why));
  return *r;
}

TEST_CASE("bad input: batch norm dims and data", "[fold][bad_input]") {
  SECTION("ConvTranspose dims (2^62+1, 4) over 4 floats: the product would wrap to 4") {
    bn_site s;  // the reported attack: 16 bytes of data, i_o_s, 4 output channels
    s.w.assign(4, 1.f);
    s.shape = {wrap_dim, 4};
    s.layout = weight_layout::i_o_s;
    s.out_w = 4;
    refused(s, reason::invalid_shape);  // 4 (2^62 + 1) > 2^63: the checked product refuses
  }
  SECTION("Conv dims (4, 2^62+1) over 4 floats: would fold 4 weights as 4 channels of one") {
    bn_site s;
    s.w.assign(4, 1.f);
    s.shape = {4, wrap_dim};
    s.out_w = 4;
    refused(s, reason::invalid_shape);
  }
  SECTION("dims (2^32, 2^32): the product wraps to 0, matching an empty weight") {
    bn_site s;
    s.w.clear();
    s.shape = {i64{1} << 32, i64{1} << 32};
    s.out_w = 0;
    refused(s, reason::invalid_shape);
  }
  SECTION("a negative dim") {
    bn_site s;
    s.shape = {4, -2, 3, 3};
    refused(s, reason::invalid_shape);
  }
  SECTION("a zero dim over no data: product 0 equals the data length, still refused") {
    bn_site s;
    s.w.clear();
    s.shape = {4, 0, 3, 3};
    s.out_w = 0;
    refused(s, reason::invalid_shape);
  }
  SECTION("one weight fewer than the dims say") {
    bn_site s;
    s.w.pop_back();
    s.out_w = 71;
    refused(s, reason::invalid_shape);
  }
  SECTION("one weight more than the dims say") {
    bn_site s;
    s.w.push_back(1.f);
    s.out_w = 73;
    refused(s, reason::invalid_shape);
  }
  SECTION("rank 1: no output axis") {
    bn_site s;
    s.shape = {72};
    refused(s, reason::ambiguous_axis);
  }
  SECTION("an enum value that is no layout") {
    bn_site s;
    s.layout = static_cast<weight_layout>(7);
    refused(s, reason::ambiguous_axis);
  }
}

TEST_CASE("bad input: batch norm groups", "[fold][bad_input]") {
  SECTION("groups 0") {
    bn_site s;
    s.groups = 0;
    refused(s, reason::ambiguous_axis);
  }
  SECTION("groups -2") {
    bn_site s;
    s.groups = -2;
    refused(s, reason::ambiguous_axis);
  }
  SECTION("groups 3 do not divide 4 output channels") {
    bn_site s;
    s.groups = 3;
    refused(s, reason::ambiguous_axis);
  }
  SECTION("transposed: groups 3 do not divide 4 input channels") {
    bn_site s;  // IOHW (4, 2, 3, 3): 4 inputs; the 4-channel statistics would fit groups 2
    s.layout = weight_layout::i_o_s;
    s.groups = 3;
    refused(s, reason::ambiguous_axis);
  }
  SECTION("HWIO: groups 3 do not divide 4 output channels") {
    bn_site s;
    s.shape = {3, 3, 2, 4};
    s.layout = weight_layout::s_i_o;
    s.groups = 3;
    refused(s, reason::ambiguous_axis);
  }
}

TEST_CASE("bad input: batch norm parameters", "[fold][bad_input]") {
  SECTION("empty gamma: never folded as ones") {
    bn_site s;
    s.gamma.clear();
    refused(s, reason::invalid_shape);
  }
  SECTION("empty beta: never folded as zeros") {
    bn_site s;
    s.beta.clear();
    refused(s, reason::invalid_shape);
  }
  SECTION("empty mean") {
    bn_site s;
    s.mean.clear();
    refused(s, reason::invalid_shape);
  }
  SECTION("empty variance") {
    bn_site s;
    s.var.clear();
    refused(s, reason::invalid_shape);
  }
  SECTION("gamma of 3 for 4 channels") {
    bn_site s;
    s.gamma.pop_back();
    refused(s, reason::channel_mismatch);
  }
  SECTION("a conv bias of 5 for 4 channels") {
    bn_site s;
    s.bias.push_back(0.f);
    refused(s, reason::channel_mismatch);
  }
  SECTION("statistics sized by the first dim where HWIO's channels are the last") {
    bn_site s;  // (3, 3, 2, 4) HWIO: 4 channels from the weights' dims; 3 statistics fit dim 0
    s.shape = {3, 3, 2, 4};
    s.layout = weight_layout::s_i_o;
    for (auto* p : {&s.mean, &s.var, &s.gamma, &s.beta, &s.bias}) p->pop_back();
    s.out_b = 3;
    refused(s, reason::channel_mismatch);
  }
  SECTION("an output weight span one short") {
    bn_site s;
    s.out_w = 71;
    refused(s, reason::channel_mismatch);
  }
  SECTION("training mode") {
    bn_site s;
    s.training = true;
    refused(s, reason::training_mode);
  }
}

TEST_CASE("bad input: batch norm epsilon and variance", "[fold][bad_input]") {
  SECTION("epsilon NaN") {
    bn_site s;
    s.epsilon = nan;
    refused(s, reason::invalid_constant);
  }
  SECTION("epsilon infinite") {
    bn_site s;
    s.epsilon = inf;
    refused(s, reason::invalid_constant);
  }
  SECTION("epsilon negative") {
    bn_site s;
    s.epsilon = -1e-5f;
    refused(s, reason::invalid_constant);
  }
  SECTION("a NaN variance (channel 2)") {
    bn_site s;
    s.var[2] = nan;
    CHECK(refused(s, reason::invalid_constant).index == 2);
  }
  SECTION("an infinite variance: 1 / sqrt(inf) = 0 would silently zero channel 1") {
    bn_site s;
    s.var[1] = inf;
    CHECK(refused(s, reason::invalid_constant).index == 1);
  }
  SECTION("variance -1: sqrt(-1 + eps) is NaN, so channel 1's weights are not finite") {
    bn_site s;  // first weight of channel 1 in OIHW (4, 2, 3, 3): 1 * 2 * 3 * 3 = 18
    s.var[1] = -1.f;
    CHECK(refused(s, reason::non_finite).index == 18);
  }
  SECTION("variance -eps: var + eps is exactly 0 in float, 1 / 0 = inf scales channel 3") {
    bn_site s;  // first weight of channel 3: 3 * 18 = 54
    s.var[3] = -1e-5f;
    CHECK(refused(s, reason::non_finite).index == 54);
  }
}

TEST_CASE("bad input: batch norm in double has the same checks", "[fold][bad_input]") {
  const std::vector<double> w(4, 1.0), p(4, 1.0), z(4, 0.0);
  const std::vector<i64> shape{wrap_dim, 4};
  std::vector<double> fw(4), fb(4);
  const qfold::batch_norm_params<double> bn{z, p, p, z, 1e-5, false};
  const auto r =
      qfold::fold_batch_norm(qfold::conv_weights(w, shape, weight_layout::i_o_s), {}, bn, fw, fb);
  REQUIRE(r.has_value());
  CHECK(r->code == reason::invalid_shape);
  const std::vector<i64> ok{1, 4};  // honest dims (1 input, 4 outputs) over the same data fold
  CHECK_FALSE(
      qfold::fold_batch_norm(qfold::conv_weights(w, ok, weight_layout::i_o_s), {}, bn, fw, fb));
}

// ------------------------------------------------------------------------------------- DyT
// RESCALEs by exactly 1: apply_scale_32(v, 2^30, 30) = floor((v 2^30 + 2^29) / 2^30) = v.
qfold::rescale_attributes attrs(int_type in, int_type out) {
  qfold::rescale_attributes a;
  a.input_type = in;
  a.output_type = out;
  return a;
}
constexpr std::array<qfold::scale_factor, 1> one{{{1 << 30, 30}}};
constexpr std::array<qfold::scale_factor, 2> two{{{1 << 30, 30}, {1 << 30, 30}}};
constexpr std::array<qfold::scale_factor, 1> shift63{{{1 << 30, 63}}};
constexpr std::array<qfold::scale_factor, 1> negative{{{-1, 30}}};

std::array<std::int8_t, 256> identity_table() {
  std::array<std::int8_t, 256> t{};
  for (std::size_t i = 0; i < 256; ++i) t[i] = static_cast<std::int8_t>(static_cast<int>(i) - 128);
  return t;
}

// alpha 2 times the activation, clamped to int8 by the output RESCALE, read from a table.
struct alpha_site {
  std::array<std::int8_t, 256> table = identity_table();
  qfold::dyt_alpha_site s{qfold::int8_domain,
                          {attrs(int_type::i8, int_type::i32), one},
                          {attrs(int_type::i8, int_type::i32), one},
                          2,
                          0,
                          {attrs(int_type::i32, int_type::i8), one},
                          qfold::int8_domain,
                          table};
  alpha_site() { s.tanh_table = table; }
  alpha_site(const alpha_site&) = delete;
};

void refused(const qfold::dyt_alpha_site& s, reason why) {
  std::array<std::int8_t, 256> out{};
  {
    const alpha_site good;
    REQUIRE(qfold::fold_dyt_alpha(good.s, out) == std::nullopt);
  }
  const auto r = qfold::fold_dyt_alpha(s, out);
  REQUIRE(r.has_value());
  CHECK(to_string(r->code) == to_string(why));
}

TEST_CASE("bad input: DyT alpha", "[fold][bad_input]") {
  alpha_site a;
  auto& s = a.s;
  SECTION("a tanh table of 255 entries") {
    s.tanh_table = std::span(a.table).first(255);
    refused(s, reason::invalid_shape);
  }
  SECTION("an empty tanh table") {
    s.tanh_table = {};
    refused(s, reason::invalid_shape);
  }
  SECTION("a tanh table of 257 entries") {
    std::array<std::int8_t, 257> big{};
    s.tanh_table = big;
    refused(s, reason::invalid_shape);
  }
  SECTION("alpha 128: not an int8 code") {
    s.alpha = 128;
    refused(s, reason::out_of_range);
  }
  SECTION("alpha INT64_MIN") {
    s.alpha = std::numeric_limits<i64>::min();
    refused(s, reason::out_of_range);
  }
  SECTION("MUL shift -1") {
    s.mul_shift = -1;
    refused(s, reason::unsupported);
  }
  SECTION("MUL shift 64") {
    s.mul_shift = 64;
    refused(s, reason::unsupported);
  }
  SECTION("an inverted activation range (lo > hi)") {
    s.activation = {5, 4};
    refused(s, reason::qparams_mismatch);
  }
  SECTION("an activation range beyond int8") {
    s.activation = {-200, 0};
    refused(s, reason::qparams_mismatch);
  }
  SECTION("a RESCALE without a multiplier/shift pair") {
    s.alpha_rescale.scales = {};
    refused(s, reason::unsupported_rescale);
  }
  SECTION("a per-tensor RESCALE with two pairs") {
    s.alpha_rescale.scales = two;
    refused(s, reason::unsupported_rescale);
  }
  SECTION("shift 63 (TOSA allows 2..62)") {
    s.output_rescale.scales = shift63;
    refused(s, reason::unsupported_rescale);
  }
  SECTION("a negative multiplier") {
    s.activation_rescale.scales = negative;
    refused(s, reason::unsupported_rescale);
  }
  SECTION("an int_type value outside the enum") {
    s.activation_rescale.attributes.output_type = static_cast<int_type>(7);
    refused(s, reason::unsupported_rescale);
  }
  SECTION("INEXACT_ROUND: not a function, cannot be tabulated") {
    s.output_rescale.attributes.rounding = qfold::rounding_mode::inexact_round;
    refused(s, reason::unsupported_rescale);
  }
}

// gamma {1, 2}, beta {0, 3} through RESCALEs by 1: a_c(t) = g_c t + b_c, exact lines, folded into
// a conv (2, 2, 1, 1) reading both channels. Table values t = code / 4 keep 2t + 3 inside int8.
struct affine_site {
  std::array<std::int8_t, 256> table{};
  std::vector<i64> gamma{1, 2}, beta{0, 3};
  std::vector<i64> weights{1, 2, 3, 4}, shape{2, 2, 1, 1}, wzp{0}, bias{10, 20};
  qfold::dyt_affine_site s;
  qfold::dyt_affine_conv conv;
  affine_site() {
    for (std::size_t i = 0; i < 256; ++i)
      table[i] = static_cast<std::int8_t>((static_cast<int>(i) - 128) / 4);
    const auto to32 = attrs(int_type::i8, int_type::i32), to8 = attrs(int_type::i32, int_type::i8);
    s = {table,      0,           {to32, one}, {to32, one}, gamma,     0,
         {to8, one}, {to32, one}, {to32, one}, beta,        {to8, one}};
    rebind();
  }
  void rebind() {
    s.gamma = gamma;
    s.beta = beta;
    conv.weights = weights;
    conv.weight_shape = shape;
    conv.weight_zero_points = wzp;
    conv.bias = bias;
  }
  affine_site(const affine_site&) = delete;
};

qfold::rejection refused(affine_site& a, reason why) {
  {
    affine_site good;
    qfold::dyt_affine_plan p;
    REQUIRE(qfold::fold_dyt_affine(good.s, good.conv, p) == std::nullopt);
    REQUIRE(p.action == qfold::dyt_affine_action::fold);
  }
  a.rebind();
  qfold::dyt_affine_plan p;
  const auto r = qfold::fold_dyt_affine(a.s, a.conv, p);
  REQUIRE(r.has_value());
  CHECK(to_string(r->code) == to_string(why));
  return *r;
}

TEST_CASE("bad input: DyT affine conv shapes", "[fold][bad_input]") {
  affine_site a;
  SECTION("weight dims (2, 2, 2^62+1) over 4 weights: the product would wrap to 4") {
    a.shape = {2, 2, wrap_dim};
    refused(a, reason::invalid_shape);
  }
  SECTION("a negative dim") {
    a.shape = {2, 2, -1, 1};
    refused(a, reason::invalid_shape);
  }
  SECTION("a zero dim") {
    a.shape = {2, 2, 0, 1};
    a.weights.clear();
    refused(a, reason::invalid_shape);
  }
  SECTION("dims that say 8 weights over 4") {
    a.shape = {2, 2, 2, 1};
    refused(a, reason::invalid_shape);
  }
  SECTION("rank 1 weights") {
    a.shape = {4};
    refused(a, reason::unsupported);
  }
  SECTION("transposed (IOHW) weights") {
    a.conv.layout = weight_layout::i_o_s;
    refused(a, reason::unsupported);
  }
  SECTION("an unknown weight dtype") {
    a.conv.weight_type = static_cast<qfold::dtype>(9);
    refused(a, reason::unsupported);
  }
}

TEST_CASE("bad input: DyT affine channels", "[fold][bad_input]") {
  affine_site a;
  SECTION("empty gamma: no channels is missing data") {
    a.gamma.clear();
    refused(a, reason::invalid_shape);
  }
  SECTION("empty beta") {
    a.beta.clear();
    refused(a, reason::invalid_shape);
  }
  SECTION("beta of 1 for 2 channels") {
    a.beta.pop_back();
    refused(a, reason::channel_mismatch);
  }
  SECTION("conv input channels 3 for gamma's 2") {
    a.shape = {2, 3, 1, 1};
    a.weights = {1, 2, 3, 4, 5, 6};
    refused(a, reason::channel_mismatch);
  }
  SECTION("groups 0") {
    a.conv.groups = 0;
    refused(a, reason::channel_mismatch);
  }
  SECTION("groups (2 / 3 mod 2^64) with 3 inputs per group: 3 g wraps to gamma's 2") {
    a.shape = {2, 3, 1, 1};
    a.weights = {1, 2, 3, 4, 5, 6};
    a.conv.groups = 0x5555555555555556;  // 3 * 0x5555555555555556 = 2^64 + 2
    refused(a, reason::channel_mismatch);
  }
  SECTION("a conv bias of 3 for 2 outputs") {
    a.bias.push_back(0);
    refused(a, reason::channel_mismatch);
  }
  SECTION("no weight zero point at all") {
    a.wzp.clear();
    refused(a, reason::channel_mismatch);
  }
  SECTION("a table of 255 entries") {
    a.s.table = std::span(a.table).first(255);
    refused(a, reason::invalid_shape);
  }
  SECTION("a table zero point of 300: not an int8") {
    a.s.table_zero_point = 300;
    refused(a, reason::qparams_mismatch);
  }
  SECTION("a gamma code of 128") {
    a.gamma[1] = 128;
    CHECK(refused(a, reason::out_of_range).index == 1);
  }
  SECTION("int32 weights whose bias change leaves int32") {
    // gamma 1 everywhere: channel 1 is a = t + 3 (slope 1, offset m = 3), so the weights keep
    // their values; those reading channel 1 (elements 1 and 3) are 2^31 - 1, and output 0's bias
    // becomes 10 + 1 * 0 + (2^31 - 1) * 3, beyond int32 (the sum is taken in 128 bits).
    a.gamma = {1, 1};
    a.conv.weight_type = qfold::dtype::int32;
    a.weights = {1, 2147483647, 3, 2147483647};
    CHECK(refused(a, reason::out_of_range).index == 0);
  }
}

// ------------------------------------------------------------------------ scale into quantize
qfold::rejection refused_scale(float c, const qfold::qparams& q, reason why,
                               qfold::scale_op op = qfold::scale_op::div) {
  qfold::qparams folded{};
  const auto r =
      qfold::fold_scale_into_quantize(op, c, q, qfold::float_exactness::bit_exact, folded);
  REQUIRE(r.has_value());
  CHECK(to_string(r->code) == to_string(why));
  return *r;
}
const qfold::qparams q8 = qfold::make_qparams(qfold::dtype::int8, 1.0 / 128, 0);

TEST_CASE("bad input: scale into quantize", "[fold][bad_input]") {
  qfold::qparams folded{};
  REQUIRE_FALSE(qfold::fold_scale_into_quantize(qfold::scale_op::div, 2.0f, q8,
                                                qfold::float_exactness::bit_exact, folded));
  SECTION("c = 0, -0, NaN, infinite, negative") {
    for (const float c : {0.0f, -0.0f, nan, inf, -inf, -2.0f})
      refused_scale(c, q8, reason::invalid_constant);
  }
  SECTION("a subnormal c: 2^-7 * 2^-149 is below 2^-100") {
    refused_scale(std::ldexp(1.0f, -149), q8, reason::out_of_range);
  }
  SECTION("a subnormal power of two within the bounds is still not exact-safe") {
    // q.scale 2^90 times 2^-140 = 2^-50 is inside 2^+-100, but x / c in float is not exact for
    // a subnormal c (it has no normal reciprocal), so bit_exact refuses.
    refused_scale(std::ldexp(1.0f, -140), qfold::make_qparams(qfold::dtype::int8, 0x1p90, 0),
                  reason::not_exact);
  }
  SECTION("a quantize scale of 0 or NaN") {
    refused_scale(2.0f, qfold::make_qparams(qfold::dtype::int8, 0.0, 0), reason::qparams_mismatch);
    refused_scale(2.0f, qfold::make_qparams(qfold::dtype::int8, std::nan(""), 0),
                  reason::qparams_mismatch);
  }
  SECTION("a quantize scale of 2^-101: normal but outside 2^+-100") {
    refused_scale(2.0f, qfold::make_qparams(qfold::dtype::int8, 0x1p-101, 0), reason::out_of_range,
                  qfold::scale_op::mul);
  }
  SECTION("a folded scale beyond 2^100: 2^99 * 4") {
    refused_scale(4.0f, qfold::make_qparams(qfold::dtype::int8, 0x1p99, 0), reason::out_of_range);
  }
  SECTION("c = 3 is not a power of two") { refused_scale(3.0f, q8, reason::not_exact); }
}

TEST_CASE("bad input: requantize sandwich", "[fold][bad_input]") {
  const auto ex = qfold::conventions::executorch;
  const auto q8b = qfold::make_qparams(qfold::dtype::int8, 1.0 / 256, 0);  // S_in / 2
  REQUIRE_FALSE(qfold::prove_requantize_identity(qfold::scale_op::div, 2.0f, q8, q8b, ex));
  const auto why = [&](float c, const qfold::qparams& in, const qfold::qparams& out) {
    const auto r = qfold::prove_requantize_identity(qfold::scale_op::div, c, in, out, ex);
    REQUIRE(r.has_value());
    return *r;
  };
  SECTION("c NaN or 0") {
    CHECK(why(nan, q8, q8b).code == reason::invalid_constant);
    CHECK(why(0.0f, q8, q8b).code == reason::invalid_constant);
  }
  SECTION("int8 in, uint8 out") {
    CHECK(why(2.0f, q8, qfold::make_qparams(qfold::dtype::uint8, 1.0 / 256, 128)).code ==
          reason::qparams_mismatch);
  }
  SECTION("clamp ranges that differ") {
    auto narrow = q8b;
    narrow.qmin = -127;
    CHECK(why(2.0f, q8, narrow).code == reason::qparams_mismatch);
  }
  SECTION("int32 codes cannot be enumerated") {
    const auto q32 = qfold::make_qparams(qfold::dtype::int32, 1.0, 0);
    CHECK(why(1.0f, q32, q32).code == reason::unsupported);
  }
  SECTION("c = 4 with the output scale made for 2: the first code already moves") {
    // code -128: dequantize -128 / 128 = -1, / 4 = -1/4, quantize at 1/256: -64, not -128; so
    // the refusal names code -128, index 0 (code - qmin).
    const auto r = why(4.0f, q8, q8b);
    CHECK(r.code == reason::not_exact);
    CHECK(r.index == 0);
  }
}

}  // namespace
