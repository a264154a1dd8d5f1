// A reference interpreter for tiny graphs (NCHW float32 ops with double accumulation, integer ops
// with qfold's checked TOSA arithmetic), to run a network before and after a pass; and random data.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <qfold/arith/mul.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/quant/conventions.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tiny_ir/tiny_ir.hpp"

namespace tiny {

// The next value of splitmix64: the same numbers with every standard library.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

// Uniform floats in [lo, hi) from splitmix64.
inline std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo = -1,
                                        float hi = 1) {
  std::vector<float> r(count);
  for (float& x : r) x = lo + (hi - lo) * static_cast<float>(splitmix64(seed) >> 40) * 0x1p-24f;
  return r;
}

namespace detail {
// Every value is a double: float32 values and integer codes up to 2^53 are exact in it.
using tensor = std::vector<double>;
using values = std::vector<tensor>;
using shape = std::vector<std::int64_t>;

inline std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

inline std::invalid_argument fail(const graph::node& n, std::string_view what) {
  return std::invalid_argument("tiny::run: " + n.name + ": " + std::string(what));
}

// An integer operand: a whole number in [lo, hi] (lo and hi within +-2^53).
inline std::int64_t to_int(const graph::node& n, double d, std::int64_t lo, std::int64_t hi) {
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d))
    throw fail(n, "an operand value is not an integer in " + std::to_string(lo) + ".." +
                      std::to_string(hi));
  return static_cast<std::int64_t>(d);
}
// The values n's output can hold: its element type's range (int32 when it has none).
inline qfold::dtype_range range_of(const graph& g, graph::node_id n) {
  const auto t = g.at(n).element;
  return qfold::range_of(t ? *t : qfold::dtype::int32);
}
inline std::int64_t to_int32(const graph::node& n, double d) {
  return to_int(n, d, std::numeric_limits<std::int32_t>::min(),
                std::numeric_limits<std::int32_t>::max());
}

inline std::size_t count(const shape& s, std::size_t from = 0) {
  std::size_t r = 1;
  for (std::size_t a = from; a < s.size(); ++a) r *= u(s[a]);
  return r;
}

// Calls tap(out, in, weight) with the flat indices of each product a conv sums, in the order a
// direct conv (or, transposed, a scatter over each output window) sums them. Taps in the padding
// are skipped: they read zero (float) or the input zero point (integer), adding nothing.
template <class Tap>
void for_each_conv_tap(const graph& g, const graph::node& n, Tap&& tap) {
  const shape& xs = g.at(n.inputs[0]).shape;
  const shape& ws = g.at(n.inputs[1]).shape;
  const shape& ys = n.shape;
  const std::size_t batch = u(xs[0]), cin = u(xs[1]), h = u(xs[2]), wd = u(xs[3]);
  const std::size_t cout = u(ys[1]), oh = u(ys[2]), ow = u(ys[3]), kh = u(ws[2]), kw = u(ws[3]);
  const std::size_t groups = u(n.conv.groups), cig = cin / groups, cog = cout / groups;
  const std::int64_t s = n.stride, p = n.padding;
  const auto out = [&](std::size_t b, std::size_t c, std::size_t y, std::size_t xx) {
    return ((b * cout + c) * oh + y) * ow + xx;
  };
  const auto in = [&](std::size_t b, std::size_t c, std::size_t y, std::size_t xx) {
    return ((b * cin + c) * h + y) * wd + xx;
  };
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
                  tap(out(b, c, y, xx), in(b, (c / cog) * cig + i, u(iy), u(ix)),
                      ((c * cig + i) * kh + ky) * kw + kx);
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
                  tap(out(b, (i / cig) * cog + j, u(oy), u(ox)), in(b, i, y, xx),
                      ((i * cog + j) * kh + ky) * kw + kx);
                }
    }
  }
}

// Float conv: accumulates in double from the bias and rounds once per output element.
inline tensor conv2d(const graph& g, const graph::node& n, const values& v) {
  const tensor& x = v[u(n.inputs[0])];
  const tensor& w = v[u(n.inputs[1])];
  const double* bias = n.inputs.size() > 2 ? v[u(n.inputs[2])].data() : nullptr;
  const std::size_t cout = u(n.shape[1]), inner = count(n.shape, 2);
  tensor acc(count(n.shape));
  for (std::size_t o = 0; o < acc.size(); ++o) acc[o] = bias ? bias[(o / inner) % cout] : 0.0;
  for_each_conv_tap(g, n,
                    [&](std::size_t o, std::size_t i, std::size_t k) { acc[o] += x[i] * w[k]; });
  for (double& a : acc) a = static_cast<float>(a);
  return acc;
}

// Integer conv: int32 bias[o] + sum (w - wzp[o]) * (x - input_zp), exact in int64; the result
// must fit int32.
inline tensor qconv2d(const graph& g, const graph::node& n, const values& v) {
  const tensor& xv = v[u(n.inputs[0])];
  const tensor& wv = v[u(n.inputs[1])];
  const std::size_t cout = u(n.shape[1]), inner = count(n.shape, 2);
  std::vector<std::int64_t> x(xv.size()), w(wv.size());  // |x - izp| < 2^33, |w - wzp| < 2^9
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = to_int32(n, xv[i]) - n.input_zero_point;
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = to_int(n, wv[k], -128, 127);
  const auto& zps = n.weight_zero_points;
  std::vector<std::int64_t> acc(count(n.shape), 0);
  for (std::size_t o = 0; o < acc.size(); ++o)
    if (n.inputs.size() > 2) acc[o] = to_int32(n, v[u(n.inputs[2])][(o / inner) % cout]);
  for_each_conv_tap(g, n, [&](std::size_t o, std::size_t i, std::size_t k) {
    const std::size_t c = (o / inner) % cout;
    const std::int64_t p = x[i] * (w[k] - zps[zps.size() == 1 ? 0 : c]);
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    if (p > 0 ? acc[o] > max - p : acc[o] < -max - 1 - p)
      throw fail(n, "the accumulator overflows int64");
    acc[o] += p;
  });
  tensor r(acc.size());
  for (std::size_t o = 0; o < acc.size(); ++o) {
    if (acc[o] < std::numeric_limits<std::int32_t>::min() ||
        acc[o] > std::numeric_limits<std::int32_t>::max())
      throw fail(n, "the accumulator does not fit int32");
    r[o] = static_cast<double>(acc[o]);
  }
  return r;
}

// Source index of each output element when output dimension d steps by strides[d] in the source
// (0 for a broadcast dimension), starting at `offset`.
inline std::vector<std::size_t> source_indices(const shape& out,
                                               const std::vector<std::size_t>& strides,
                                               std::size_t offset = 0) {
  std::vector<std::size_t> r(count(out));
  std::vector<std::size_t> coord(out.size(), 0);
  std::size_t src = offset;
  for (std::size_t& x : r) {
    x = src;
    for (std::size_t d = out.size(); d-- > 0;) {  // odometer, last axis fastest
      src += strides[d];
      if (++coord[d] < u(out[d])) break;
      src -= coord[d] * strides[d];
      coord[d] = 0;
    }
  }
  return r;
}
inline std::vector<std::size_t> row_major_strides(const shape& s) {
  std::vector<std::size_t> r(s.size());
  std::size_t stride = 1;
  for (std::size_t a = s.size(); a-- > 0;) {
    r[a] = stride;
    stride *= u(s[a]);
  }
  return r;
}
// numpy broadcasting: s right-aligned to `out`; its size-1 and missing dimensions repeat.
inline std::vector<std::size_t> broadcast_strides(const shape& s, const shape& out) {
  const std::vector<std::size_t> own = row_major_strides(s);
  std::vector<std::size_t> r(out.size(), 0);
  for (std::size_t k = 0; k < s.size(); ++k) {
    const std::size_t a = s.size() - 1 - k;
    r[out.size() - 1 - k] = s[a] == 1 ? 0 : own[a];
  }
  return r;
}

template <class Op>
tensor elementwise(const graph& g, const graph::node& n, const values& v, Op op) {
  const auto ia = source_indices(n.shape, broadcast_strides(g.at(n.inputs[0]).shape, n.shape));
  const auto ib = source_indices(n.shape, broadcast_strides(g.at(n.inputs[1]).shape, n.shape));
  const tensor &a = v[u(n.inputs[0])], &b = v[u(n.inputs[1])];
  tensor r(ia.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = op(a[ia[i]], b[ib[i]]);
  return r;
}

inline tensor view(const graph& g, const graph::node& n, const tensor& x) {
  const shape& in = g.at(n.inputs[0]).shape;
  if (n.op == "reshape") return x;
  const std::vector<std::size_t> own = row_major_strides(in);
  std::vector<std::size_t> strides = own;
  std::size_t offset = 0;
  if (n.op == "permute") {
    for (std::size_t i = 0; i < strides.size(); ++i) strides[i] = own[u(n.view[i])];
  } else if (n.op == "slice") {
    offset = u(n.view[1]) * own[u(n.view[0])];
  } else {
    throw fail(n, "unknown view " + n.op);
  }
  tensor r;
  for (const std::size_t i : source_indices(n.shape, strides, offset)) r.push_back(x[i]);
  return r;
}
}  // namespace detail

// Runs g with `input` fed to its (single) input node; returns the graph outputs concatenated in
// order. Float ops round each result to float32; integer ops check every operand (whole numbers
// in their type) and every result. Throws std::invalid_argument, naming the node, on any error.
inline std::vector<double> evaluate(const graph& g, const std::vector<double>& input) {
  using detail::u;
  using qfold::op_kind;
  detail::values v(g.slots());
  bool fed = false;
  for (const graph::node_id id : g.nodes()) {
    const graph::node& n = g.at(id);
    detail::tensor& out = v[u(id)];
    const auto arg = [&](std::size_t i) -> const detail::tensor& { return v[u(n.inputs[i])]; };
    const auto map = [&](auto f) {  // unary elementwise
      const detail::tensor& x = arg(0);
      out.resize(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) out[i] = f(x[i], i);
    };
    switch (n.kind) {
      case op_kind::input:
        if (fed || input.size() != detail::count(n.shape))
          throw std::invalid_argument("tiny::run: one input of the input node's size");
        out = input;
        fed = true;
        break;
      case op_kind::constant:
        if (n.integer)
          out.assign(n.ints.begin(), n.ints.end());
        else
          out.assign(n.data.begin(), n.data.end());
        break;
      case op_kind::convolution:
        if (n.conv.layout !=
            (n.conv.transposed ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s))
          throw detail::fail(n, "conv weights are OIHW, transposed IOHW");
        out = n.quantized ? detail::qconv2d(g, n, v) : detail::conv2d(g, n, v);
        break;
      case op_kind::linear: {  // on the last axis, weight (out, in)
        const auto& x = arg(0);
        const auto& w = arg(1);
        const auto& ws = g.at(n.inputs[1]).shape;
        if (ws.size() != 2) throw detail::fail(n, "linear weight of rank 2");
        const std::size_t cout = u(ws[0]), cin = u(ws[1]), rows = x.size() / cin;
        out.resize(rows * cout);
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t o = 0; o < cout; ++o) {
            double acc = n.inputs.size() > 2 ? arg(2)[o] : 0.0;
            for (std::size_t i = 0; i < cin; ++i) acc += x[r * cin + i] * w[o * cin + i];
            out[r * cout + o] = static_cast<float>(acc);
          }
        break;
      }
      case op_kind::batch_norm: {  // (x - mean) / sqrt(var + eps) * gamma + beta on axis 1
        if (n.bn.training) throw detail::fail(n, "training-mode batch norm");
        const std::size_t channels = u(n.shape.at(1)), inner = detail::count(n.shape, 2);
        map([&](double x, std::size_t i) -> double {
          const std::size_t c = (i / inner) % channels;
          return static_cast<float>(
              (x - arg(3)[c]) / std::sqrt(arg(4)[c] + n.bn.epsilon) * arg(1)[c] + arg(2)[c]);
        });
        break;
      }
      case op_kind::rescale: {  // per channel on the last axis
        const qfold::rescale_attributes& a = n.rescale;
        const std::size_t channels = n.shape.empty() ? 1 : u(n.shape.back());
        map([&](double x, std::size_t i) -> double {
          const auto r = qfold::checked::rescale_value(
              a, n.scales[a.per_channel ? i % channels : 0],
              detail::to_int(n, x, a.input_range().lo, a.input_range().hi));
          if (!r) throw detail::fail(n, r.error().message);
          return *r;
        });
        break;
      }
      case op_kind::mul:
        out = detail::elementwise(g, n, v, [&](double a, double b) -> double {
          if (!n.integer) return static_cast<float>(a) * static_cast<float>(b);
          const auto r = qfold::checked::mul<std::int32_t>(
              static_cast<std::int32_t>(detail::to_int32(n, a)),
              static_cast<std::int32_t>(detail::to_int32(n, b)), n.shift);
          if (!r) throw detail::fail(n, r.error().message);
          return *r;
        });
        break;
      case op_kind::add:
        out = detail::elementwise(g, n, v, [&](double a, double b) -> double {
          const std::int64_t r = detail::to_int32(n, a) + detail::to_int32(n, b);
          if (r < std::numeric_limits<std::int32_t>::min() ||
              r > std::numeric_limits<std::int32_t>::max())
            throw detail::fail(n, "the sum overflows int32");
          return static_cast<double>(r);
        });
        break;
      case op_kind::sub:
        out = detail::elementwise(g, n, v, [&](double a, double b) -> double {
          const std::int64_t r = detail::to_int32(n, a) - detail::to_int32(n, b);
          if (r < std::numeric_limits<std::int32_t>::min() ||
              r > std::numeric_limits<std::int32_t>::max())
            throw detail::fail(n, "the difference overflows int32");
          return static_cast<double>(r);
        });
        break;
      case op_kind::clamp: {  // TOSA CLAMP: the input's values, bounded
        const qfold::dtype_range in = detail::range_of(g, n.inputs[0]);
        map([&](double x, std::size_t) -> double {
          const std::int64_t c = detail::to_int(n, x, in.lo, in.hi);
          return static_cast<double>(c < n.clamp.min   ? n.clamp.min
                                     : c > n.clamp.max ? n.clamp.max
                                                       : c);
        });
        break;
      }
      case op_kind::cast: {  // TOSA CAST int -> int: sign-extend, or truncate to the low bits
        const qfold::dtype_range in = detail::range_of(g, n.inputs[0]);
        const qfold::dtype_range to = qfold::range_of(*n.element);
        map([&](double x, std::size_t) -> double {
          const std::int64_t c = detail::to_int(n, x, in.lo, in.hi);
          if (c >= to.lo && c <= to.hi) return static_cast<double>(c);
          const auto width = static_cast<std::uint64_t>(to.hi - to.lo) + 1;  // 2^bits
          auto low = static_cast<std::uint64_t>(c) & (width - 1);
          const bool is_signed = to.lo < 0;
          return is_signed && low >= width / 2
                     ? static_cast<double>(static_cast<std::int64_t>(low) -
                                           static_cast<std::int64_t>(width))
                     : static_cast<double>(low);
        });
        break;
      }
      case op_kind::div:
        out = detail::elementwise(g, n, v, [](double a, double b) -> double {
          return static_cast<float>(a) / static_cast<float>(b);
        });
        break;
      case op_kind::table:
        if (!n.table16.empty()) {  // TOSA int16: (base << 7) + slope * frac, slope REQUIRE
          map([&](double x, std::size_t) -> double {
            const std::int64_t c = detail::to_int(n, x, -32768, 32767);
            const std::size_t index = detail::u((c + 32768) >> 7);
            const std::int64_t frac = c & 0x7F;
            const std::int64_t base = n.table16[index], slope = n.table16[index + 1] - base;
            if (slope < -32768 || slope > 32767)
              throw detail::fail(n, "an int16 table slope outside int16");
            return static_cast<double>(base * 128 + slope * frac);
          });
          break;
        }
        map([&](double x, std::size_t) -> double {
          return n.table[detail::u(detail::to_int(n, x, -128, 127) + 128)];
        });
        break;
      case op_kind::quantize:
        map([&](double x, std::size_t) -> double {
          const auto r =
              qfold::quantize(qfold::conventions::executorch, *n.qparams, static_cast<float>(x));
          if (!r) throw detail::fail(n, r.error().message);
          return static_cast<double>(*r);
        });
        break;
      case op_kind::dequantize: {
        const qfold::qparams& q = *n.qparams;
        const qfold::dtype_range range = qfold::range_of(q.type);
        map([&](double x, std::size_t) -> double {
          return qfold::dequantize(qfold::conventions::executorch, q,
                                   detail::to_int(n, x, range.lo, range.hi));
        });
        break;
      }
      case op_kind::view:
        out = detail::view(g, n, arg(0));
        break;
      case op_kind::other:
        out = arg(0);
        if (n.op == "relu") {
          for (double& f : out) f = f > 0 ? f : 0.0;
        } else if (n.op != "flatten") {
          throw detail::fail(n, "unknown op " + n.op);
        }
        break;
      default:
        throw detail::fail(n, "op kind not interpreted");
    }
  }
  std::vector<double> r;
  for (const graph::node_id o : g.outputs()) r.insert(r.end(), v[u(o)].begin(), v[u(o)].end());
  return r;
}

// evaluate() on float32 values (every result of a float graph is a float32 value).
inline std::vector<float> run(const graph& g, const std::vector<float>& input) {
  const std::vector<double> r = evaluate(g, {input.begin(), input.end()});
  std::vector<float> out(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) out[i] = static_cast<float>(r[i]);
  return out;
}

}  // namespace tiny
