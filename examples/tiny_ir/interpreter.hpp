// A reference interpreter for tiny graphs (NCHW float32 tensors, double accumulation), so that a
// network can be run before and after a pass; and reproducible random data for examples.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tiny_ir/tiny_ir.hpp"

namespace tiny {

// Uniform floats in [lo, hi) from splitmix64: the same numbers with every standard library.
inline std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo = -1,
                                        float hi = 1) {
  std::vector<float> r(count);
  for (float& x : r) {
    std::uint64_t z = (seed += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    x = lo + (hi - lo) * static_cast<float>(z >> 40) * 0x1p-24f;
  }
  return r;
}

namespace detail {
inline std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

// Direct convolution; transposed scatters each input element over its output window.
// Accumulates in double and rounds once per output element.
inline std::vector<float> conv2d(const graph& g, const graph::node& n,
                                 const std::vector<std::vector<float>>& v) {
  const auto& x = v[u(n.inputs[0])];
  const auto& w = v[u(n.inputs[1])];
  const float* bias = n.inputs.size() > 2 ? v[u(n.inputs[2])].data() : nullptr;
  const auto& xs = g.at(n.inputs[0]).shape;
  const auto& ws = g.at(n.inputs[1]).shape;
  const auto& ys = n.shape;
  const std::size_t batch = u(xs[0]), cin = u(xs[1]), h = u(xs[2]), wd = u(xs[3]);
  const std::size_t cout = u(ys[1]), oh = u(ys[2]), ow = u(ys[3]), kh = u(ws[2]), kw = u(ws[3]);
  const std::size_t groups = u(n.conv.groups), cig = cin / groups, cog = cout / groups;
  const std::int64_t s = n.stride, p = n.padding;
  std::vector<double> acc(batch * cout * oh * ow, 0.0);
  const auto at_out = [&](std::size_t b, std::size_t c, std::size_t y, std::size_t xx) -> double& {
    return acc[((b * cout + c) * oh + y) * ow + xx];
  };
  const auto in = [&](std::size_t b, std::size_t c, std::size_t y, std::size_t xx) {
    return static_cast<double>(x[((b * cin + c) * h + y) * wd + xx]);
  };
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t c = 0; c < cout; ++c)
      for (std::size_t y = 0; y < oh; ++y)
        for (std::size_t xx = 0; xx < ow; ++xx) at_out(b, c, y, xx) = bias ? bias[c] : 0.0;
  const auto inside = [](std::int64_t i, std::size_t size) { return i >= 0 && u(i) < size; };
  for (std::size_t b = 0; b < batch; ++b) {
    if (!n.conv.transposed) {  // weight (cout, cig, kh, kw)
      for (std::size_t c = 0; c < cout; ++c)
        for (std::size_t y = 0; y < oh; ++y)
          for (std::size_t xx = 0; xx < ow; ++xx)
            for (std::size_t i = 0; i < cig; ++i)
              for (std::size_t ky = 0; ky < kh; ++ky)
                for (std::size_t kx = 0; kx < kw; ++kx) {
                  const auto iy =
                      static_cast<std::int64_t>(y) * s - p + static_cast<std::int64_t>(ky);
                  const auto ix =
                      static_cast<std::int64_t>(xx) * s - p + static_cast<std::int64_t>(kx);
                  if (!inside(iy, h) || !inside(ix, wd)) continue;
                  at_out(b, c, y, xx) += in(b, (c / cog) * cig + i, u(iy), u(ix)) *
                                         w[((c * cig + i) * kh + ky) * kw + kx];
                }
    } else {  // weight (cin, cog, kh, kw): input channel i feeds outputs (i / cig) * cog + j
      for (std::size_t i = 0; i < cin; ++i)
        for (std::size_t y = 0; y < h; ++y)
          for (std::size_t xx = 0; xx < wd; ++xx)
            for (std::size_t j = 0; j < cog; ++j)
              for (std::size_t ky = 0; ky < kh; ++ky)
                for (std::size_t kx = 0; kx < kw; ++kx) {
                  const auto oy =
                      static_cast<std::int64_t>(y) * s - p + static_cast<std::int64_t>(ky);
                  const auto ox =
                      static_cast<std::int64_t>(xx) * s - p + static_cast<std::int64_t>(kx);
                  if (!inside(oy, oh) || !inside(ox, ow)) continue;
                  at_out(b, (i / cig) * cog + j, u(oy), u(ox)) +=
                      in(b, i, y, xx) * w[((i * cog + j) * kh + ky) * kw + kx];
                }
    }
  }
  return {acc.begin(), acc.end()};
}

inline std::size_t count(const std::vector<std::int64_t>& shape, std::size_t from = 0) {
  std::size_t r = 1;
  for (std::size_t a = from; a < shape.size(); ++a) r *= u(shape[a]);
  return r;
}
}  // namespace detail

// Runs g with `input` fed to its (single) input node; returns the graph outputs concatenated in
// order. Throws std::invalid_argument for what it does not interpret.
inline std::vector<float> run(const graph& g, const std::vector<float>& input) {
  using detail::u;
  using qfold::op_kind;
  std::vector<std::vector<float>> v(g.slots());
  bool fed = false;
  for (const graph::node_id id : g.nodes()) {
    const graph::node& n = g.at(id);
    std::vector<float>& out = v[u(id)];
    const auto arg = [&](std::size_t i) -> const std::vector<float>& { return v[u(n.inputs[i])]; };
    switch (n.kind) {
      case op_kind::input:
        if (fed || input.size() != detail::count(n.shape))
          throw std::invalid_argument("tiny::run: one input of the input node's size");
        out = input;
        fed = true;
        break;
      case op_kind::constant:
        out = n.data;
        break;
      case op_kind::convolution:
        if (n.conv.layout !=
            (n.conv.transposed ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s))
          throw std::invalid_argument("tiny::run: conv weights are OIHW, transposed IOHW");
        out = detail::conv2d(g, n, v);
        break;
      case op_kind::linear: {  // on the last axis, weight (out, in)
        const auto& x = arg(0);
        const auto& w = arg(1);
        const auto& ws = g.at(n.inputs[1]).shape;
        if (ws.size() != 2) throw std::invalid_argument("tiny::run: linear weight of rank 2");
        const std::size_t cout = u(ws[0]), cin = u(ws[1]), rows = x.size() / cin;
        out.resize(rows * cout);
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t o = 0; o < cout; ++o) {
            double acc = n.inputs.size() > 2 ? arg(2)[o] : 0.0;
            for (std::size_t i = 0; i < cin; ++i)
              acc += static_cast<double>(x[r * cin + i]) * w[o * cin + i];
            out[r * cout + o] = static_cast<float>(acc);
          }
        break;
      }
      case op_kind::batch_norm: {  // (x - mean) / sqrt(var + eps) * gamma + beta on axis 1
        if (n.bn.training) throw std::invalid_argument("tiny::run: training-mode batch norm");
        const auto& x = arg(0);
        const std::size_t channels = u(n.shape.at(1)), inner = detail::count(n.shape, 2);
        out.resize(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
          const std::size_t c = (i / inner) % channels;
          out[i] = static_cast<float>((x[i] - double{arg(3)[c]}) /
                                          std::sqrt(double{arg(4)[c]} + n.bn.epsilon) * arg(1)[c] +
                                      arg(2)[c]);
        }
        break;
      }
      case op_kind::other:
        out = arg(0);
        if (n.op == "relu") {
          for (float& f : out) f = f > 0 ? f : 0.0f;
        } else if (n.op != "flatten") {
          throw std::invalid_argument("tiny::run: unknown op " + n.op);
        }
        break;
      default:
        throw std::invalid_argument("tiny::run: op kind not interpreted");
    }
  }
  std::vector<float> r;
  for (const graph::node_id o : g.outputs()) r.insert(r.end(), v[u(o)].begin(), v[u(o)].end());
  return r;
}

}  // namespace tiny
