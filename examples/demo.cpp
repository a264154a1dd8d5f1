// qfold demo: batch norm folded into a small network in the demo IR (tiny); a quantized block (DyT,
// an attention scale, a conv with batch norm) folded by the standard pipeline and run before and
// after on every input code; exact requantization arithmetic, compile-time and run-time from the
// same code, how the ecosystems' rounding rules differ, and errors as values.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <qfold/qfold.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tiny_ir/blocks.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
// Proven while compiling: an int8 RESCALE by 0.5 rounds half toward +inf.
static_assert(qfold::rescale_value({}, {1 << 30, 31}, -3) == -1);
static_assert(qfold::rescale_value({}, {1 << 30, 31}, 3) == 2);

// A batch norm's four parameter constants, deterministic per `seed`; variances in [0.5, 2).
tiny::graph::node_id bn_after(tiny::graph& g, const std::string& name, tiny::graph::node_id x,
                              std::size_t channels, std::uint64_t seed) {
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(channels)};
  const auto gamma =
      g.constant(name + ".gamma", tiny::random_floats(channels, seed, 0.5f, 1.5f), shape);
  const auto beta = g.constant(name + ".beta", tiny::random_floats(channels, seed + 1), shape);
  const auto mean = g.constant(name + ".mean", tiny::random_floats(channels, seed + 2), shape);
  const auto var =
      g.constant(name + ".var", tiny::random_floats(channels, seed + 3, 0.5f, 2.0f), shape);
  return g.batch_norm(name, x, gamma, beta, mean, var);
}

tiny::graph::node_id weights(tiny::graph& g, const std::string& name,
                             std::vector<std::int64_t> shape, std::uint64_t seed) {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return g.constant(name, tiny::random_floats(n, seed, -0.5f, 0.5f), std::move(shape));
}

void print_report(const tiny::graph& g, const qfold::report<tiny::graph::node_id>& report) {
  std::ostringstream text;
  qfold::print(text, report, [&](auto n) { return g.name(n); });
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) std::cout << "   " << line << '\n';
}

void fold_batch_norm_in_a_network() {
  std::puts("1. Fold batch norm into conv, grouped conv, grouped transposed conv and linear");
  tiny::graph g;
  const auto x = g.input("x", {2, 3, 8, 8});
  const auto c1 = g.conv2d("conv1", x, weights(g, "conv1.w", {8, 3, 3, 3}, 10),
                           weights(g, "conv1.b", {8}, 11), {.padding = 1});
  const auto r1 = g.relu("relu1", bn_after(g, "bn1", c1, 8, 20));
  const auto c2 = g.conv2d("conv2 (groups 2)", r1, weights(g, "conv2.w", {8, 4, 3, 3}, 12),
                           tiny::graph::none, {.groups = 2, .stride = 2, .padding = 1});
  const auto b2 = bn_after(g, "bn2", c2, 8, 30);
  const auto c3 =
      g.conv_transpose2d("deconv3 (groups 2)", b2, weights(g, "deconv3.w", {8, 2, 2, 2}, 13),
                         weights(g, "deconv3.b", {4}, 14), {.groups = 2, .stride = 2});
  const auto b3 = bn_after(g, "bn3", c3, 4, 40);
  // conv4's output is also a graph output ("tap"): folding bn4 would change the tap.
  const auto c4 = g.conv2d("conv4", b3, weights(g, "conv4.w", {4, 4, 1, 1}, 15));
  const auto b4 = bn_after(g, "bn4", c4, 4, 50);
  const auto fc = g.linear("fc", g.flatten("flatten", b4), weights(g, "fc.w", {10, 256}, 16),
                           weights(g, "fc.b", {10}, 17));
  g.mark_output(bn_after(g, "bn5 (1d)", fc, 10, 60));
  g.mark_output(c4);

  const std::vector<float> input = tiny::random_floats(2 * 3 * 8 * 8, 2024);
  const std::vector<float> before = tiny::run(g, input);
  const std::size_t nodes_before = g.live_count();

  qfold::pipeline<tiny::graph> passes;
  passes.add(std::string(qfold::batch_norm_pass_name),
             [](tiny::graph& graph) { return qfold::fold_batch_norms(graph); });
  print_report(g, passes.run(g));

  const std::vector<float> after = tiny::run(g, input);
  float diff = 0, magnitude = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    diff = std::max(diff, std::abs(before[i] - after[i]));
    magnitude = std::max(magnitude, std::abs(before[i]));
  }
  std::printf("   nodes: %zu before, %zu after\n", nodes_before, g.live_count());
  std::printf("   outputs: max |after - before| = %.3g, %.3g of max |output| = %.3g\n",
              static_cast<double>(diff), static_cast<double>(diff / magnitude),
              static_cast<double>(magnitude));
  std::puts(
      "   (float folding reassociates: outputs agree to rounding, not bit for bit;\n"
      "    the folded weights follow torch.nn.utils.fusion's float32 operation order)");
}

void fold_a_quantized_block() {
  std::puts("2. A quantized block: DyT (tanh(alpha x), then gamma x + beta into a conv), an");
  std::puts("   attention-style scale by 1/8 between requantizations, and a float head conv with");
  std::puts("   batch norm; every pass of qfold::standard_pipeline");
  namespace blocks = tiny::blocks;
  tiny::graph g;
  const auto x = g.input("x", {1, 16, 16, 4});  // int8 codes, NHWC
  blocks::dyt_alpha_options dyt;
  dyt.tanh_output = qfold::make_qparams(qfold::dtype::int8, 1.0 / 32, 0);  // tanh in [-32, 32]
  const auto t = blocks::dyt_alpha(g, "dyt", x, dyt);
  blocks::dyt_affine_options affine;
  affine.gamma = {1, -1, 2, 1};
  affine.beta = {5, 0, -7, 3};
  affine.output_zero_point = -3;
  const auto conv = blocks::dyt_affine_conv(g, "dyt.affine", t, affine);
  const auto scores_q = qfold::make_qparams(qfold::dtype::int8, 0.05, 0);
  const auto scores =
      blocks::rescale(g, "scores", conv, qfold::int_type::i32, qfold::int_type::i8, 1.0 / 256);
  g.set_output_qparams(scores, scores_q);
  auto scaled_q = scores_q;
  scaled_q.scale = scores_q.scale * 0.125;
  const auto scaled = blocks::requantize_sandwich(g, "attn", scores, 0.125f, scores_q, scaled_q);
  const auto head = g.conv2d("head", g.dequantize("head.in", scaled, scaled_q),
                             weights(g, "head.w", {4, 4, 3, 3}, 18), weights(g, "head.b", {4}, 19),
                             {.padding = 1});
  g.mark_output(bn_after(g, "head.bn", head, 4, 70));

  std::vector<double> input;  // channel c at position p: code (p + 37 c) mod 256 - 128
  for (int p = 0; p < 256; ++p)
    for (int c = 0; c < 4; ++c) input.push_back((p + 37 * c) % 256 - 128);
  const std::vector<double> before = tiny::evaluate(g, input);
  const std::size_t nodes_before = g.live_count();
  const auto report = qfold::standard_pipeline<tiny::graph>().run(g);
  print_report(g, report);
  const std::vector<double> after = tiny::evaluate(g, input);
  double diff = 0;
  for (std::size_t i = 0; i < before.size(); ++i)
    diff = std::max(diff, std::abs(before[i] - after[i]));
  std::printf("   nodes: %zu before, %zu after; outputs: max |after - before| = %.3g\n",
              nodes_before, g.live_count(), diff);
  std::puts("   (the integer part is bit-exact on every input code, proven by the folds; only the");
  std::puts("    float batch norm reassociates)");
}

void requantize_accumulators() {
  std::puts("3. Requantize int32 accumulators to int8 (scale 0.0123, output zero point -5)");
  const auto scale = qfold::compute_multiplier_and_shift(0.0123, qfold::scale_width::bits32,
                                                         qfold::tie_rule::half_to_even);
  std::printf("   ExecuTorch convention: multiplier %d, shift %d\n", scale->multiplier,
              scale->shift);
  const qfold::rescale_attributes attrs{.input_type = qfold::int_type::i32, .output_zp = -5};
  const std::array<std::int32_t, 6> acc{-20000, -1000, -41, 0, 41, 20000};
  std::array<std::int8_t, 6> out{};
  const std::array<qfold::scale_factor, 1> scales{*scale};
  if (auto r = qfold::rescale_array<std::int32_t, std::int8_t>(attrs, scales, acc, out); !r) return;
  for (std::size_t i = 0; i < acc.size(); ++i) std::printf("   %6d -> %4d\n", acc[i], out[i]);
}

void conventions_differ() {
  std::puts("4. One scale (1/4), five rounding rules");
  std::puts("       x   TOSA single  TOSA double  TFLite  TFLite single  CMSIS-NN");
  for (std::int32_t x : {-2, -1, 1, 2, 6}) {
    using qfold::tflite::rounding;
    std::printf(
        "   %5d   %11d  %11d  %6d  %13d  %8d\n", x, qfold::apply_scale_32(x, 1 << 30, 32),
        qfold::apply_scale_32(x, 1 << 30, 32, true),
        qfold::tflite::multiply_by_quantized_multiplier(x, 1 << 30, -1),
        qfold::tflite::multiply_by_quantized_multiplier(x, 1 << 30, -1, rounding::single_round),
        qfold::cmsis_nn::requantize(x, 1 << 30, -1));
  }
  const auto et = qfold::compute_multiplier_and_shift(0.5 + 0x1p-32, qfold::scale_width::bits32,
                                                      qfold::tie_rule::half_to_even);
  const auto mlir = qfold::compute_multiplier_and_shift(0.5 + 0x1p-32, qfold::scale_width::bits32,
                                                        qfold::tie_rule::half_away_from_zero);
  std::printf("   scale 0.5 + 2^-32: ExecuTorch multiplier %d, MLIR multiplier %d\n",
              et->multiplier, mlir->multiplier);
}

void tables_per_ecosystem() {
  std::puts("5. One tanh table as ExecuTorch and as TFLite emit it (input 0.1, output scale 2)");
  const auto in = qfold::make_qparams<qfold::dtype::int8>(0.1, 0);
  const auto out = qfold::make_qparams<qfold::dtype::int8>(2.0, 0);  // tanh = +-1 -> +-0.5, a tie
  const auto et =
      qfold::checked::make_table8(qfold::conventions::executorch, qfold::fn::torch::tanh, in, out);
  const auto tfl =
      qfold::checked::make_table8(qfold::conventions::tflite, qfold::fn::tanh, in, out);
  int differ = 0;
  for (int code = -128; code <= 127; ++code) {
    const auto c = static_cast<std::int8_t>(code);
    if ((*et)(c) == (*tfl)(c)) continue;
    if (differ++ < 3)
      std::printf("   code %4d: ExecuTorch %4d, TFLite %4d (a tie: half to even vs half away)\n",
                  code, (*et)(c), (*tfl)(c));
  }
  std::printf("   %d of 256 entries differ; TFLite stores its table in uint8-cast order besides\n",
              differ);
}

void errors_are_values() {
  std::puts("6. Bad input is an error value, never undefined behaviour");
  const auto nan = qfold::compute_multiplier_and_shift(std::numeric_limits<double>::quiet_NaN(),
                                                       qfold::scale_width::bits32,
                                                       qfold::tie_rule::half_to_even);
  std::printf("   NaN scale        -> %.*s\n", int(nan.error().message.size()),
              nan.error().message.data());
  const auto v =
      qfold::validate(qfold::rescale_attributes{.input_unsigned = true, .output_unsigned = true});
  std::printf("   u8 -> u8 RESCALE -> %.*s\n", int(v.error().message.size()),
              v.error().message.data());
  const auto req = qfold::checked::apply_scale_32(1 << 30, 1 << 30, 31);
  std::printf("   apply_scale_32   -> %.*s\n", int(req.error().message.size()),
              req.error().message.data());
}
}  // namespace

int main() {
  std::printf("qfold %d.%d.%d\n\n", qfold::version_major, qfold::version_minor,
              qfold::version_patch);
  fold_batch_norm_in_a_network();
  fold_a_quantized_block();
  requantize_accumulators();
  conventions_differ();
  tables_per_ecosystem();
  errors_are_values();
  return 0;
}
