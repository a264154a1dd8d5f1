// Quantized building blocks in the tiny IR, lowered the way ExecuTorch's Arm backend lowers them
// (int32 RESCALEs around MUL and ADD, tanh as an int8 TABLE): a DyT layer, a DyT affine feeding a
// convolution, and a constant attention scale before a quantize. Shared by the demo, tests, bench.
#pragma once

#include <cstdint>
#include <qfold/arith/scale_derivation.hpp>
#include <qfold/quant/conventions.hpp>
#include <qfold/table/functions.hpp>
#include <qfold/table/generate.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace tiny::blocks {

using id = graph::node_id;

// RESCALE attributes from `in` to `out` with zero points (scale32, single rounding).
inline qfold::rescale_attributes rescale_attrs(qfold::int_type in, qfold::int_type out,
                                               std::int64_t input_zp = 0,
                                               std::int64_t output_zp = 0) {
  qfold::rescale_attributes a;
  a.input_type = in;
  a.output_type = out;
  a.input_zp = input_zp;
  a.output_zp = output_zp;
  return a;
}

// An int8 table whose entry i is (i * step) mod 256 - 128: a permutation for odd steps.
inline std::vector<std::int8_t> ramp_table(int step) {
  std::vector<std::int8_t> t(256);
  for (int i = 0; i < 256; ++i)
    t[static_cast<std::size_t>(i)] = static_cast<std::int8_t>((i * step) % 256 - 128);
  return t;
}

// A RESCALE from `in` to `out` with zero points; the scale's multiplier and shift are derived as
// ExecuTorch does (32-bit, ties to even).
inline id rescale(graph& g, const std::string& name, id x, qfold::int_type in, qfold::int_type out,
                  double scale, std::int64_t input_zp = 0, std::int64_t output_zp = 0) {
  const qfold::rescale_attributes a = rescale_attrs(in, out, input_zp, output_zp);
  const auto s = qfold::compute_multiplier_and_shift(scale, qfold::scale_width::bits32,
                                                     qfold::tie_rule::half_to_even);
  if (!s)
    throw std::invalid_argument("tiny::blocks: " + name + ": " + std::string(s.error().message));
  return g.rescale(name, x, a, {*s});
}

inline std::vector<std::int8_t> tanh_table(const qfold::qparams& in, const qfold::qparams& out) {
  const auto t = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::executorch,
                                                              qfold::fn::tanh, in, out);
  if (!t)
    throw std::invalid_argument("tiny::blocks: tanh table: " + std::string(t.error().message));
  return {t->values.begin(), t->values.end()};
}

struct dyt_alpha_options {
  qfold::qparams activation = qfold::make_qparams(qfold::dtype::int8, 0.05, 3);
  double alpha = 0.7;
  qfold::qparams tanh_input = qfold::make_qparams(qfold::dtype::int8, 0.02, 0);
  qfold::qparams tanh_output = qfold::make_qparams(qfold::dtype::int8, 1.0 / 128, 0);
};

// tanh(alpha * x) with x an annotated int8 activation: RESCALE x and alpha (a constant scalar,
// int8, symmetric, behind a reshape as exported graphs have it) to int32 at their own scales,
// MUL, RESCALE to the tanh input, TABLE. Returns the TABLE.
inline id dyt_alpha(graph& g, const std::string& name, id x, const dyt_alpha_options& o) {
  using qfold::int_type;
  g.set_output_qparams(x, o.activation);
  const double alpha_scale = (o.alpha < 0 ? -o.alpha : o.alpha) / 127;
  const id alpha =
      g.int_constant(name + ".alpha", {o.alpha < 0 ? -127 : 127}, {1}, qfold::dtype::int8);
  g.set_output_qparams(alpha, qfold::make_qparams(qfold::dtype::int8, alpha_scale, 0));
  const id a32 =
      rescale(g, name + ".x32", x, int_type::i8, int_type::i32, 1.0, o.activation.zero_point);
  const id alpha32 = rescale(g, name + ".alpha32", g.reshape(name + ".alpha_view", alpha, {1, 1}),
                             int_type::i8, int_type::i32, 1.0);
  const id product = g.mul(name + ".mul", a32, alpha32);
  const id to_tanh =
      rescale(g, name + ".to_tanh", product, int_type::i32, int_type::i8,
              o.activation.scale * alpha_scale / o.tanh_input.scale, 0, o.tanh_input.zero_point);
  g.set_output_qparams(to_tanh, o.tanh_input);
  const id t = g.table(name + ".tanh", to_tanh, tanh_table(o.tanh_input, o.tanh_output));
  g.set_output_qparams(t, o.tanh_output);
  return t;
}

struct dyt_affine_options {
  std::vector<std::int64_t> gamma, beta;  // int8 codes, one per channel
  std::int64_t table_zero_point = 0, output_zero_point = 0;
  std::int64_t out_channels = 4, padding = 0, groups = 1;
  std::uint64_t seed = 1;  // conv weights in [-20, 20], bias in [-1000, 1000]
};

// The DyT affine after a TABLE t of NHWC shape (N, H, W, C), lowered with power-of-two int32
// scales (table x 2^8, gamma x 1, back / 2^8; both ADD operands x 2^4, back / 2^4), so that it
// is exactly gamma (t - tzp) + beta + ozp while nothing saturates; then permute to NCHW and an
// integer 3x3 convolution. Returns the convolution.
inline id dyt_affine_conv(graph& g, const std::string& name, id t, const dyt_affine_options& o) {
  using qfold::int_type;
  const auto channels = static_cast<std::int64_t>(o.gamma.size());
  const id gamma =
      g.int_constant(name + ".gamma", o.gamma, {1, 1, 1, channels}, qfold::dtype::int8);
  const id beta = g.int_constant(name + ".beta", o.beta, {1, 1, 1, channels}, qfold::dtype::int8);
  const id t32 =
      rescale(g, name + ".t32", t, int_type::i8, int_type::i32, 256.0, o.table_zero_point);
  const id g32 = rescale(g, name + ".gamma32", gamma, int_type::i8, int_type::i32, 1.0);
  const id scaled = rescale(g, name + ".scaled", g.mul(name + ".mul", t32, g32), int_type::i32,
                            int_type::i8, 1.0 / 256);
  const id s32 = rescale(g, name + ".scaled32", scaled, int_type::i8, int_type::i32, 16.0);
  const id b32 = rescale(g, name + ".beta32", beta, int_type::i8, int_type::i32, 16.0);
  const id sum = rescale(g, name + ".sum", g.add(name + ".add", s32, b32), int_type::i32,
                         int_type::i8, 1.0 / 16, 0, o.output_zero_point);
  const id nchw = g.permute(name + ".to_nchw", sum, {0, 3, 1, 2});
  std::vector<std::int64_t> w, b;
  std::uint64_t s = o.seed;
  const auto next = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(splitmix64(s) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  for (std::int64_t i = 0; i < o.out_channels * (channels / o.groups) * 9; ++i)
    w.push_back(next(-20, 20));
  for (std::int64_t i = 0; i < o.out_channels; ++i) b.push_back(next(-1000, 1000));
  const id weights = g.int_constant(name + ".w", w, {o.out_channels, channels / o.groups, 3, 3},
                                    qfold::dtype::int8);
  const id bias = g.int_constant(name + ".b", b, {o.out_channels}, qfold::dtype::int32);
  return g.qconv2d(name + ".conv", nchw, weights, bias, {o.groups, 1, o.padding},
                   o.output_zero_point, {0});
}

// Attention's score scaling before annotation: x (float) / c -> quantize(S).
inline id scale_then_quantize(graph& g, const std::string& name, id x, float c,
                              const qfold::qparams& q) {
  const id divisor = g.constant(name + ".c", {c}, {1});
  return g.quantize(name + ".q", g.div(name + ".div", x, divisor), q);
}

// After annotation: codes -> dequantize(in) -> * c -> quantize(out).
inline id requantize_sandwich(graph& g, const std::string& name, id codes, float c,
                              const qfold::qparams& in, const qfold::qparams& out) {
  const id factor = g.constant(name + ".c", {c}, {1});
  return g.quantize(name + ".q",
                    g.fmul(name + ".mul", g.dequantize(name + ".dq", codes, in), factor), out);
}

}  // namespace tiny::blocks
