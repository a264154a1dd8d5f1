// What the .tosa tests share: a builder of TOSA 1.0 flatbuffers written with the generated C++
// API (tensors, CONSTs, RESCALE / MUL / TABLE / ... with their constant operands, and knobs that
// break the rules on purpose), and a small interpreter of TOSA 1.0's integer semantics over a
// read model (RESCALE and MUL by tests/reference/spec_reference.hpp, the spec's TABLE lookups),
// used to check a folded file against its original on every input code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/schema.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reference/spec_reference.hpp"

namespace tosa_fb_test {

using bytes = std::vector<std::uint8_t>;
using attribute_maker =
    std::function<std::pair<tosa::Attribute, flatbuffers::Offset<void>>(flatbuffers::FlatBufferBuilder&)>;

// Little-endian bytes of `values` as elements of `type` (INT4 packed two a byte).
inline bytes encode(tosa::DType type, const std::vector<std::int64_t>& values) {
  bytes r;
  if (type == tosa::DType_INT4) {
    for (std::size_t i = 0; i < values.size(); i += 2) {
      const auto lo = static_cast<std::uint8_t>(values[i] & 0xF);
      const auto hi = i + 1 < values.size() ? static_cast<std::uint8_t>(values[i + 1] & 0xF) : 0;
      r.push_back(static_cast<std::uint8_t>(lo | (hi << 4)));
    }
    return r;
  }
  const std::size_t w = qfold_tosa_fb::storage_of(type).bytes;
  for (const std::int64_t v : values)
    for (std::size_t b = 0; b < w; ++b)
      r.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * b)));
  return r;
}

struct tensor_spec {
  std::string name;
  std::vector<std::int32_t> shape;
  tosa::DType type = tosa::DType_INT8;
  std::optional<bytes> data;
  std::uint64_t offset = 0, size = 0;
  bool omit_name = false;
};
struct op_spec {
  tosa::Op code = tosa::Op_UNKNOWN;
  std::vector<std::string> inputs, outputs;
  attribute_maker attribute;  // empty: the op's default (empty table, or none)
  std::string location;
};

struct rescale_options {
  bool scale32 = true, per_channel = false, input_unsigned = false, output_unsigned = false;
  tosa::RoundingMode rounding = tosa::RoundingMode_SINGLE_ROUND;
  std::vector<std::int64_t> multipliers{1 << 30}, shifts{30};
  std::int64_t input_zp = 0, output_zp = 0;  // as stored (signed)
  // Names of existing tensors to use instead of new CONSTs (run-time parameters, shared ones).
  std::string multiplier_tensor, shift_tensor, input_zp_tensor, output_zp_tensor;
};

// A TOSA 1.0 file under construction: one region "main" with one block "main".
struct file_builder {
  std::vector<tensor_spec> tensors;
  std::vector<op_spec> ops;
  std::vector<std::string> inputs, outputs;
  std::int32_t major = 1, minor = 0, patch = 0;
  bool draft = false;
  int regions = 1, blocks = 1;  // copies of the block (to break the one-region rule)
  std::string identifier = "TOSA";
  int counter = 0;

  std::string fresh(const std::string& stem) { return stem + "_" + std::to_string(counter++); }
  tensor_spec& find(const std::string& name) {
    for (auto& t : tensors)
      if (t.name == name) return t;
    throw std::logic_error("file_builder: no tensor " + name);
  }
  std::vector<std::int32_t> shape_of(const std::string& name) { return find(name).shape; }

  std::string tensor(const std::string& name, std::vector<std::int32_t> shape, tosa::DType type) {
    tensors.push_back({name, std::move(shape), type, std::nullopt});
    return name;
  }
  std::string input(const std::string& name, std::vector<std::int32_t> shape,
                    tosa::DType type = tosa::DType_INT8) {
    inputs.push_back(tensor(name, std::move(shape), type));
    return name;
  }
  void output(const std::string& name) { outputs.push_back(name); }
  std::string constant(const std::string& name, std::vector<std::int32_t> shape,
                       tosa::DType type, const std::vector<std::int64_t>& values) {
    tensors.push_back({name, std::move(shape), type, encode(type, values)});
    ops.push_back({tosa::Op_CONST, {}, {name}, {}, ""});
    return name;
  }
  std::string const_shape(const std::string& name, const std::vector<std::int64_t>& values) {
    tensors.push_back({name, {static_cast<std::int32_t>(values.size())}, tosa::DType_SHAPE,
                       encode(tosa::DType_SHAPE, values)});
    ops.push_back({tosa::Op_CONST_SHAPE, {}, {name}, {}, ""});
    return name;
  }
  std::string op(tosa::Op code, std::vector<std::string> in, const std::string& out,
                 std::vector<std::int32_t> shape, tosa::DType type, attribute_maker attr = {}) {
    tensor(out, std::move(shape), type);
    ops.push_back({code, std::move(in), {out}, std::move(attr), "loc:" + out});
    return out;
  }

  std::string rescale(const std::string& in, const std::string& out, tosa::DType out_type,
                      const rescale_options& o = {}) {
    const auto n = static_cast<std::int32_t>(o.multipliers.size());
    const tosa::DType in_type = find(in).type;
    const std::string m = !o.multiplier_tensor.empty()
                              ? o.multiplier_tensor
                              : constant(out + "_multiplier", {n},
                                         o.scale32 ? tosa::DType_INT32 : tosa::DType_INT16,
                                         o.multipliers);
    const std::string s = !o.shift_tensor.empty()
                              ? o.shift_tensor
                              : constant(out + "_shift", {n}, tosa::DType_INT8, o.shifts);
    const std::string izp = !o.input_zp_tensor.empty()
                                ? o.input_zp_tensor
                                : constant(out + "_input_zp", {1}, in_type, {o.input_zp});
    const std::string ozp = !o.output_zp_tensor.empty()
                                ? o.output_zp_tensor
                                : constant(out + "_output_zp", {1}, out_type, {o.output_zp});
    const rescale_options copy = o;
    return op(tosa::Op_RESCALE, {in, m, s, izp, ozp}, out, shape_of(in), out_type,
              [copy](flatbuffers::FlatBufferBuilder& b) {
                return std::pair{tosa::Attribute_RescaleAttribute,
                                 tosa::CreateRescaleAttribute(b, copy.scale32, copy.rounding,
                                                              copy.per_channel,
                                                              copy.input_unsigned,
                                                              copy.output_unsigned)
                                     .Union()};
              });
  }
  // MUL of two INT32 tensors (or INT8/INT16) to INT32, with its shift CONST.
  std::string mul(const std::string& a, const std::string& b, const std::string& out,
                  std::int64_t shift = 0, const std::string& shift_tensor = "") {
    const std::string s =
        !shift_tensor.empty() ? shift_tensor : constant(out + "_shift", {1}, tosa::DType_INT8, {shift});
    std::vector<std::int32_t> shape = shape_of(a);
    const auto bs = shape_of(b);
    for (std::size_t i = 0; i < shape.size() && i < bs.size(); ++i) shape[i] = std::max(shape[i], bs[i]);
    return op(tosa::Op_MUL, {a, b, s}, out, shape, tosa::DType_INT32);
  }
  std::string table(const std::string& in, const std::string& out,
                    const std::vector<std::int64_t>& values, const std::string& table_tensor = "") {
    const bool int8 = find(in).type == tosa::DType_INT8;
    const std::string t =
        !table_tensor.empty()
            ? table_tensor
            : constant(out + "_table", {int8 ? 256 : 513}, int8 ? tosa::DType_INT8 : tosa::DType_INT16,
                       values);
    return op(tosa::Op_TABLE, {in, t}, out, shape_of(in),
              int8 ? tosa::DType_INT8 : tosa::DType_INT32);
  }
  std::string clamp(const std::string& in, const std::string& out, std::int64_t lo,
                    std::int64_t hi) {
    const tosa::DType type = find(in).type;
    return op(tosa::Op_CLAMP, {in}, out, shape_of(in), type,
              [=](flatbuffers::FlatBufferBuilder& b) {
                const auto mn = encode(type, {lo}), mx = encode(type, {hi});
                b.ForceVectorAlignment(mn.size(), 1, 8);
                const auto vmn = b.CreateVector(mn);
                b.ForceVectorAlignment(mx.size(), 1, 8);
                const auto vmx = b.CreateVector(mx);
                return std::pair{tosa::Attribute_ClampAttribute,
                                 tosa::CreateClampAttribute(b, vmn, vmx,
                                                            tosa::NanPropagationMode_PROPAGATE)
                                     .Union()};
              });
  }
  // CONV2D (OHWI weights) or DEPTHWISE_CONV2D (HWCM) of an INT8 NHWC input, INT32 out.
  std::string conv2d(const std::string& in, const std::string& weight, const std::string& bias,
                     const std::string& out, std::vector<std::int32_t> out_shape,
                     std::vector<std::int32_t> pad = {0, 0, 0, 0}, std::int64_t input_zp = 0,
                     std::int64_t weight_zp = 0, bool depthwise = false) {
    const std::string izp = constant(out + "_input_zp", {1}, tosa::DType_INT8, {input_zp});
    const std::string wzp = constant(out + "_weight_zp", {1}, tosa::DType_INT8, {weight_zp});
    return op(depthwise ? tosa::Op_DEPTHWISE_CONV2D : tosa::Op_CONV2D, {in, weight, bias, izp, wzp},
              out, std::move(out_shape), tosa::DType_INT32,
              [pad, depthwise](flatbuffers::FlatBufferBuilder& b) {
                const auto p = b.CreateVector(pad);
                const auto s = b.CreateVector(std::vector<std::int32_t>{1, 1});
                const auto d = b.CreateVector(std::vector<std::int32_t>{1, 1});
                if (depthwise)
                  return std::pair{tosa::Attribute_DepthwiseConv2dAttribute,
                                   tosa::CreateDepthwiseConv2dAttribute(b, p, s, d, false,
                                                                        tosa::DType_INT32)
                                       .Union()};
                return std::pair{tosa::Attribute_Conv2dAttribute,
                                 tosa::CreateConv2dAttribute(b, p, s, d, false, tosa::DType_INT32)
                                     .Union()};
              });
  }

  bytes build() const {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<tosa::TosaTensor>> ts;
    for (const auto& t : tensors) {
      const auto name = t.omit_name ? 0 : b.CreateString(t.name);
      const auto shape = b.CreateVector(t.shape);
      flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> data = 0;
      if (t.data) {
        b.ForceVectorAlignment(t.data->size(), 1, 8);
        data = b.CreateVector(*t.data);
      }
      ts.push_back(tosa::CreateTosaTensor(b, name, shape, t.type, data, false, false, 0, t.offset,
                                          t.size));
    }
    std::vector<flatbuffers::Offset<tosa::TosaOperator>> os;
    for (const auto& o : ops) {
      const auto in = b.CreateVectorOfStrings(o.inputs);
      const auto out = b.CreateVectorOfStrings(o.outputs);
      std::pair<tosa::Attribute, flatbuffers::Offset<void>> attr{tosa::Attribute_NONE, 0};
      if (o.attribute) {
        attr = o.attribute(b);
      } else if (o.code == tosa::Op_CONST) {
        attr = {tosa::Attribute_ConstAttribute, tosa::CreateConstAttribute(b).Union()};
      } else if (o.code == tosa::Op_TABLE) {
        attr = {tosa::Attribute_TableAttribute, tosa::CreateTableAttribute(b).Union()};
      }
      const auto loc = o.location.empty()
                           ? 0
                           : tosa::CreateOpLocation(b, b.CreateString(o.location));
      os.push_back(tosa::CreateTosaOperator(b, o.code, attr.first, attr.second, in, out, loc));
    }
    const auto ov = b.CreateVector(os);
    const auto tv = b.CreateVector(ts);
    const auto iv = b.CreateVectorOfStrings(inputs);
    const auto outv = b.CreateVectorOfStrings(outputs);
    const auto block = tosa::CreateTosaBasicBlock(b, b.CreateString("main"), ov, tv, iv, outv);
    std::vector<flatbuffers::Offset<tosa::TosaBasicBlock>> bl(static_cast<std::size_t>(blocks),
                                                              block);
    const auto region = tosa::CreateTosaRegion(b, b.CreateString("main"), b.CreateVector(bl));
    std::vector<flatbuffers::Offset<tosa::TosaRegion>> rg(static_cast<std::size_t>(regions),
                                                          region);
    const auto version = tosa::CreateVersion(b, major, minor, patch, draft);
    const auto root = tosa::CreateTosaGraph(b, version, b.CreateVector(rg));
    b.Finish(root, identifier.c_str());
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
};

// The index (node id) of the tensor named `name`.
inline std::uint32_t id_of(const qfold_tosa_fb::model& m, std::string_view name) {
  for (std::uint32_t i = 0; i < m.tensors.size(); ++i)
    if (m.tensors[i].name == name) return i;
  throw std::logic_error("id_of: no tensor " + std::string(name));
}

// --- Scenarios: the sites ExecuTorch's Arm backend lowers, as TOSA 1.0 files --------------------

// A RESCALE of one multiplier and shift (1 << 30, 30: the identity by default).
inline rescale_options with_zero_points(std::int64_t input_zp, std::int64_t output_zp,
                                        std::int64_t multiplier = 1 << 30,
                                        std::int64_t shift = 30) {
  rescale_options r;
  r.multipliers = {multiplier};
  r.shifts = {shift};
  r.input_zp = input_zp;
  r.output_zp = output_zp;
  return r;
}

// 256 entries of round(127 tanh((i - 128) / 40)): the DyT tanh table.
inline std::vector<std::int64_t> tanh_table() {
  std::vector<std::int64_t> t;
  for (int i = 0; i < 256; ++i)
    t.push_back(static_cast<std::int64_t>(std::lround(127 * std::tanh((i - 128) / 40.0))));
  return t;
}

// x [1, 4] INT8 -> RESCALE to INT32 (input zp -3) -> RESCALE back to INT8 (zp 5) -> y.
inline file_builder rescale_pair() {
  file_builder f;
  f.input("x", {1, 4});
  f.rescale("x", "wide", tosa::DType_INT32, with_zero_points(-3, 0, 1 << 30, 20));
  f.rescale("wide", "y", tosa::DType_INT8, with_zero_points(0, 5, 1 << 30, 40));
  f.output("y");
  return f;
}

// The DyT alpha site as ExecuTorch's Arm backend lowers it to TOSA 1.0: RESCALE(act) to INT32,
// MUL by RESCALE(alpha) to INT32, RESCALE to INT8, TABLE (tanh). Tensors act, alpha,
// alpha_rescale, mul, out, table; the graph input x [1, 4, 4, 8].
struct dyt_options {
  bool extra_use = false;  // the MUL's output is a graph output too (a second reader)
  std::int64_t alpha = 77;
  std::string multiplier_tensor;  // the output RESCALE's multiplier, instead of its CONST
  rescale_options act = with_zero_points(-3, 0);
  rescale_options alpha_rescale = with_zero_points(0, 0);
  rescale_options out = with_zero_points(0, 5, 1518500250, 40);
};
inline file_builder dyt_alpha(const dyt_options& o = {}) {
  file_builder f;
  f.input("x", {1, 4, 4, 8});
  if (!o.multiplier_tensor.empty()) f.input(o.multiplier_tensor, {1}, tosa::DType_INT32);
  f.constant("alpha", {1, 1, 1, 1}, tosa::DType_INT8, {o.alpha});
  f.rescale("x", "act", tosa::DType_INT32, o.act);
  f.rescale("alpha", "alpha_rescale", tosa::DType_INT32, o.alpha_rescale);
  f.mul("act", "alpha_rescale", "mul");
  rescale_options out = o.out;
  out.multiplier_tensor = o.multiplier_tensor;
  f.rescale("mul", "out", tosa::DType_INT8, out);
  f.table("out", "table", tanh_table());
  f.output("table");
  if (o.extra_use) f.output("mul");
  return f;
}

// DyT affine: TABLE -> (RESCALE * RESCALE(gamma)) -> RESCALE -> (RESCALE + RESCALE(beta)) ->
// RESCALE -> CONV2D, every RESCALE an identity, gamma 2 and beta 3 per channel: a = 2 t + 3
// exactly, so the affine folds into the conv (weights 1 -> 2, bias + 3 * 2 per output channel).
// The graph input x [1, 2, 2, 2]; the conv's output conv.
struct affine_options {
  std::vector<std::int32_t> pad{0, 0, 0, 0};
  bool depthwise = false;
  bool transpose = false;  // a TRANSPOSE (perms [0, 2, 1, 3]: H and W) before the conv
  bool matmul = false;     // a RESHAPE to [1, 4, 2] and a MATMUL by a constant [1, 2, 3]
};
inline file_builder dyt_affine(const affine_options& o = {}) {
  std::vector<std::int64_t> table;
  for (int i = 0; i < 256; ++i) table.push_back(std::clamp(i - 128, -60, 60));
  file_builder f;
  f.input("x", {1, 2, 2, 2});
  f.constant("gamma", {1, 1, 1, 2}, tosa::DType_INT8, {2, 2});
  f.constant("beta", {1, 1, 1, 2}, tosa::DType_INT8, {3, 3});
  if (o.depthwise) {
    f.constant("w", {1, 1, 2, 1}, tosa::DType_INT8, {1, 1});  // HWCM
  } else {
    f.constant("w", {2, 1, 1, 2}, tosa::DType_INT8, {1, 1, 1, 1});  // OHWI
  }
  f.constant("b", {2}, tosa::DType_INT32, {10, -20});
  f.table("x", "t", table);
  f.rescale("t", "rt", tosa::DType_INT32);
  f.rescale("gamma", "rg", tosa::DType_INT32);
  f.mul("rt", "rg", "m");
  f.rescale("m", "rp", tosa::DType_INT8);
  f.rescale("rp", "rs", tosa::DType_INT32);
  f.rescale("beta", "rb", tosa::DType_INT32);
  f.op(tosa::Op_ADD, {"rs", "rb"}, "a", {1, 2, 2, 2}, tosa::DType_INT32);
  f.rescale("a", "rsum", tosa::DType_INT8);
  std::string conv_input = "rsum";
  if (o.transpose) {
    conv_input = f.op(tosa::Op_TRANSPOSE, {"rsum"}, "swapped", {1, 2, 2, 2}, tosa::DType_INT8,
                      [](flatbuffers::FlatBufferBuilder& b) {
                        return std::pair{tosa::Attribute_TransposeAttribute,
                                         tosa::CreateTransposeAttribute(
                                             b, b.CreateVector(std::vector<std::int32_t>{0, 2, 1, 3}))
                                             .Union()};
                      });
  }
  if (o.matmul) {
    f.const_shape("rows", {1, 4, 2});
    f.op(tosa::Op_RESHAPE, {conv_input, "rows"}, "flat", {1, 4, 2}, tosa::DType_INT8);
    f.constant("bm", {1, 2, 3}, tosa::DType_INT8, {1, -2, 3, 4, 5, -6});
    f.constant("azp", {1}, tosa::DType_INT8, {0});
    f.constant("bzp", {1}, tosa::DType_INT8, {0});
    f.op(tosa::Op_MATMUL, {"flat", "bm", "azp", "bzp"}, "conv", {1, 4, 3}, tosa::DType_INT32);
    f.output("conv");
    return f;
  }
  const std::int32_t extra_h = o.pad[0] + o.pad[1], extra_w = o.pad[2] + o.pad[3];
  f.conv2d(conv_input, "w", "b", "conv", {1, 2 + extra_h, 2 + extra_w, 2}, o.pad, 0, 0,
           o.depthwise);
  f.output("conv");
  return f;
}

// --- An interpreter of the integer ops, over a read model -------------------------------------

struct value {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> data;  // element values (signed, as stored)
};

inline std::int64_t element_at(const value& v, const std::vector<std::int64_t>& out_shape,
                               std::size_t flat) {
  // Broadcast (TOSA: equal ranks, dims 1 broadcast) from out_shape's index to v's.
  std::size_t index = 0, stride = 1;
  for (std::size_t d = out_shape.size(); d-- > 0;) {
    const auto od = static_cast<std::size_t>(out_shape[d]);
    const std::size_t coord = flat % od;
    flat /= od;
    const std::size_t vd = d < v.shape.size() ? static_cast<std::size_t>(v.shape[d]) : 1;
    index += (vd == 1 ? 0 : coord) * stride;
    stride *= vd;
  }
  return v.data.at(index);
}

inline std::int64_t wrap(std::int64_t x, int bits) {
  const std::uint64_t m = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const std::uint64_t u = static_cast<std::uint64_t>(x) & m;
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return static_cast<std::int64_t>(u ^ sign) - static_cast<std::int64_t>(sign);
}
inline int bits_of(tosa::DType t) {
  switch (t) {
    case tosa::DType_INT8:
      return 8;
    case tosa::DType_INT16:
      return 16;
    case tosa::DType_INT32:
      return 32;
    case tosa::DType_INT48:
      return 48;
    default:
      throw std::logic_error("interpreter: not an integer type");
  }
}
inline qref::DType ref_type(tosa::DType t) {
  switch (t) {
    case tosa::DType_INT8:
      return qref::DType::i8;
    case tosa::DType_INT16:
      return qref::DType::i16;
    case tosa::DType_INT32:
      return qref::DType::i32;
    case tosa::DType_INT48:
      return qref::DType::i48;
    default:
      throw std::logic_error("interpreter: not a RESCALE type");
  }
}

// Runs the model on `inputs` (by graph input name) and returns every tensor's value by name.
// Throws std::runtime_error where the spec's REQUIREs fail or an op is not modelled.
inline std::map<std::string, value> run(const qfold_tosa_fb::model& m,
                                        const std::map<std::string, value>& inputs) {
  std::map<std::string, value> v;
  const auto name = [&](std::uint32_t t) { return std::string(m.tensors[t].name); };
  for (const std::uint32_t t : m.inputs) v[name(t)] = inputs.at(name(t));
  std::vector<bool> done(m.ops.size(), false);
  for (std::size_t pass = 0; pass < m.ops.size() + 1; ++pass) {
    bool progress = false;
    for (std::size_t k = 0; k < m.ops.size(); ++k) {
      if (done[k]) continue;
      const auto& o = m.ops[k];
      bool ready = true;
      for (const auto in : o.inputs) ready = ready && v.count(name(in)) != 0;
      if (!ready) continue;
      done[k] = progress = true;
      const auto& out_t = m.tensors[o.outputs.at(0)];
      value out;
      out.shape = out_t.shape;
      std::size_t count = 1;
      for (const auto d : out.shape) count *= static_cast<std::size_t>(d);
      const auto in = [&](std::size_t i) -> const value& { return v.at(name(o.inputs.at(i))); };
      switch (o.code) {
        case tosa::Op_CONST:
        case tosa::Op_CONST_SHAPE: {
          const auto& t = out_t;
          const std::size_t w = qfold_tosa_fb::storage_of(t.type).bytes;
          for (std::size_t i = 0; i * w < t.data.size(); ++i) {
            std::uint64_t u = 0;
            for (std::size_t b = 0; b < w; ++b)
              u |= std::uint64_t{t.data[i * w + b]} << (8 * b);
            out.data.push_back(w == 8 ? static_cast<std::int64_t>(u)
                                      : wrap(static_cast<std::int64_t>(u), static_cast<int>(8 * w)));
          }
          break;
        }
        case tosa::Op_RESCALE: {
          const auto* a = o.fb->attribute_as_RescaleAttribute();
          if (a == nullptr) throw std::runtime_error("interpreter: RESCALE without attribute");
          qref::RescaleParams p;
          p.in_t = ref_type(m.tensors[o.inputs[0]].type);
          p.out_t = ref_type(out_t.type);
          p.scale32 = a->scale32();
          p.rounding_mode = static_cast<qref::RoundingMode>(a->rounding_mode());
          p.per_channel = a->per_channel();
          p.input_unsigned = a->input_unsigned();
          p.output_unsigned = a->output_unsigned();
          p.rank = static_cast<int>(in(0).shape.size());
          const int in_bits = qref::bits_of(p.in_t), out_bits = qref::bits_of(p.out_t);
          p.input_zp = qref::from_bits(p.in_t, p.input_unsigned, in(3).data.at(0));
          p.output_zp = qref::from_bits(p.out_t, p.output_unsigned, in(4).data.at(0));
          const std::size_t channels =
              p.per_channel ? static_cast<std::size_t>(out.shape.back()) : 1;
          for (std::size_t i = 0; i < count; ++i) {
            const std::size_t c = p.per_channel ? i % channels : 0;
            p.multiplier = in(1).data.at(c);
            p.shift = in(2).data.at(c);
            const auto r = qref::rescale_element(
                p, qref::from_bits(p.in_t, p.input_unsigned, in(0).data.at(i)));
            if (!r.ok) throw std::runtime_error("interpreter: RESCALE's REQUIRE failed");
            out.data.push_back(wrap(r.value, out_bits));
          }
          (void)in_bits;
          break;
        }
        case tosa::Op_MUL: {
          const auto t = ref_type(m.tensors[o.inputs[0]].type);
          for (std::size_t i = 0; i < count; ++i) {
            const auto r = qref::tosa_mul(t, element_at(in(0), out.shape, i),
                                          element_at(in(1), out.shape, i), in(2).data.at(0));
            if (!r.ok) throw std::runtime_error("interpreter: MUL's REQUIRE failed");
            out.data.push_back(r.value);
          }
          break;
        }
        case tosa::Op_ADD:
        case tosa::Op_SUB:
          for (std::size_t i = 0; i < count; ++i) {
            const std::int64_t a = element_at(in(0), out.shape, i),
                               b = element_at(in(1), out.shape, i);
            const std::int64_t r = o.code == tosa::Op_ADD ? a + b : a - b;
            if (r < INT32_MIN || r > INT32_MAX)
              throw std::runtime_error("interpreter: ADD/SUB overflow");
            out.data.push_back(r);
          }
          break;
        case tosa::Op_TABLE: {
          const auto& table = in(1).data;
          const bool int8 = m.tensors[o.inputs[0]].type == tosa::DType_INT8;
          for (std::size_t i = 0; i < count; ++i) {
            const std::int64_t x = in(0).data.at(i);
            if (int8) {
              out.data.push_back(table.at(static_cast<std::size_t>(x + 128)));
            } else {  // apply_lookup_s: 513 entries, 7 fraction bits, 32-bit result
              const std::int64_t index = (x + 32768) >> 7, fraction = (x + 32768) & 0x7f;
              const std::int64_t base = table.at(static_cast<std::size_t>(index)),
                                 next = table.at(static_cast<std::size_t>(index + 1));
              out.data.push_back((base << 7) + (next - base) * fraction);
            }
          }
          break;
        }
        case tosa::Op_CLAMP: {
          const auto* a = o.fb->attribute_as_ClampAttribute();
          const auto* min_val = a != nullptr ? a->min_val() : nullptr;
          const auto* max_val = a != nullptr ? a->max_val() : nullptr;
          if (min_val == nullptr || max_val == nullptr)
            throw std::runtime_error("interpreter: CLAMP without bounds");
          const int bits = bits_of(out_t.type);
          const auto read = [&](std::span<const std::uint8_t> b) {
            std::uint64_t u = 0;
            for (std::size_t j = 0; j < b.size(); ++j) u |= std::uint64_t{b[j]} << (8 * j);
            return wrap(static_cast<std::int64_t>(u), bits);
          };
          const std::int64_t lo = read({min_val->data(), min_val->size()}),
                             hi = read({max_val->data(), max_val->size()});
          for (std::size_t i = 0; i < count; ++i)
            out.data.push_back(std::clamp(in(0).data.at(i), lo, hi));
          break;
        }
        case tosa::Op_CAST:
          for (std::size_t i = 0; i < count; ++i)
            out.data.push_back(wrap(in(0).data.at(i), bits_of(out_t.type)));
          break;
        case tosa::Op_RESHAPE:
          out.data = in(0).data;
          break;
        case tosa::Op_TRANSPOSE: {
          const auto* a = o.fb->attribute_as_TransposeAttribute();
          const auto* perms = a != nullptr ? a->perms() : nullptr;
          const auto& x = in(0);
          if (perms == nullptr || perms->size() != x.shape.size())
            throw std::runtime_error("interpreter: TRANSPOSE without its perms");
          std::vector<std::size_t> stride(x.shape.size(), 1);
          for (std::size_t d = x.shape.size(); d-- > 1;)
            stride[d - 1] = stride[d] * static_cast<std::size_t>(x.shape[d]);
          for (std::size_t i = 0; i < count; ++i) {
            std::size_t rest = i, index = 0;
            for (std::size_t d = out.shape.size(); d-- > 0;) {
              const auto od = static_cast<std::size_t>(out.shape[d]);
              index += (rest % od) * stride[static_cast<std::size_t>(perms->Get(static_cast<std::uint32_t>(d)))];
              rest /= od;
            }
            out.data.push_back(x.data.at(index));
          }
          break;
        }
        case tosa::Op_MATMUL: {
          const value& a = in(0);
          const value& b = in(1);
          const std::int64_t azp = in(2).data.at(0), bzp = in(3).data.at(0);
          const std::int64_t N = a.shape[0], H = a.shape[1], C = a.shape[2], W = b.shape[2];
          for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t h = 0; h < H; ++h)
              for (std::int64_t w = 0; w < W; ++w) {
                std::int64_t acc = 0;
                for (std::int64_t c = 0; c < C; ++c)
                  acc += (a.data.at(static_cast<std::size_t>((n * H + h) * C + c)) - azp) *
                         (b.data.at(static_cast<std::size_t>(((b.shape[0] == 1 ? 0 : n) * C + c) * W + w)) - bzp);
                if (acc < INT32_MIN || acc > INT32_MAX)
                  throw std::runtime_error("interpreter: MATMUL accumulator overflow");
                out.data.push_back(acc);
              }
          break;
        }
        case tosa::Op_CONV2D:
        case tosa::Op_DEPTHWISE_CONV2D: {
          const bool dw = o.code == tosa::Op_DEPTHWISE_CONV2D;
          const flatbuffers::Vector<std::int32_t>* pad = nullptr;
          if (const auto* a = o.fb->attribute_as_DepthwiseConv2dAttribute(); dw && a != nullptr)
            pad = a->pad();
          if (const auto* a = o.fb->attribute_as_Conv2dAttribute(); !dw && a != nullptr)
            pad = a->pad();
          if (pad == nullptr || pad->size() != 4)
            throw std::runtime_error("interpreter: a convolution without its pad");
          const value& x = in(0);
          const value& w = in(1);
          const value& bias = in(2);
          const std::int64_t izp = in(3).data.at(0), wzp = in(4).data.at(0);
          const std::int64_t N = x.shape[0], IH = x.shape[1], IW = x.shape[2], IC = x.shape[3];
          const std::int64_t KH = dw ? w.shape[0] : w.shape[1], KW = dw ? w.shape[1] : w.shape[2];
          const std::int64_t M = dw ? w.shape[3] : 1;
          const std::int64_t OH = out.shape[1], OW = out.shape[2], OC = out.shape[3];
          const std::int64_t pt = pad->Get(0), pl = pad->Get(2);
          out.data.assign(count, 0);
          for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t oy = 0; oy < OH; ++oy)
              for (std::int64_t ox = 0; ox < OW; ++ox)
                for (std::int64_t oc = 0; oc < OC; ++oc) {
                  std::int64_t acc = bias.data.at(static_cast<std::size_t>(bias.data.size() == 1 ? 0 : oc));
                  for (std::int64_t ky = 0; ky < KH; ++ky)
                    for (std::int64_t kx = 0; kx < KW; ++kx) {
                      const std::int64_t iy = oy - pt + ky, ix = ox - pl + kx;
                      if (iy < 0 || iy >= IH || ix < 0 || ix >= IW) continue;
                      const auto at_x = [&](std::int64_t ic) {
                        return x.data.at(static_cast<std::size_t>(((n * IH + iy) * IW + ix) * IC + ic)) - izp;
                      };
                      if (dw) {
                        const std::int64_t c = oc / M, mm = oc % M;
                        acc += at_x(c) * (w.data.at(static_cast<std::size_t>(((ky * KW + kx) * IC + c) * M + mm)) - wzp);
                      } else {
                        for (std::int64_t ic = 0; ic < IC; ++ic)
                          acc += at_x(ic) * (w.data.at(static_cast<std::size_t>(((oc * KH + ky) * KW + kx) * IC + ic)) - wzp);
                      }
                    }
                  if (acc < INT32_MIN || acc > INT32_MAX)
                    throw std::runtime_error("interpreter: conv accumulator overflow");
                  out.data[static_cast<std::size_t>(((n * OH + oy) * OW + ox) * OC + oc)] = acc;
                }
          break;
        }
        default:
          throw std::runtime_error("interpreter: " + qfold_tosa_fb::op_name(o.code) +
                                   " is not modelled");
      }
      v[name(o.outputs[0])] = std::move(out);
    }
    if (!progress) break;
  }
  return v;
}

// The graph outputs' values for the input named `input` holding `data` (shape from the model).
inline std::vector<std::vector<std::int64_t>> outputs_of(const qfold_tosa_fb::model& m,
                                                         const std::string& input,
                                                         const std::vector<std::int64_t>& data) {
  std::map<std::string, value> in;
  for (const std::uint32_t t : m.inputs)
    if (m.tensors[t].name == input) in[input] = value{m.tensors[t].shape, data};
  const auto all = run(m, in);
  std::vector<std::vector<std::int64_t>> r;
  for (const std::uint32_t t : m.outputs) r.push_back(all.at(std::string(m.tensors[t].name)).data);
  return r;
}

// Every code of a `bits`-bit signed type at each position of an input of `count` elements:
// round r puts code (r * count + i) mod 2^bits - 2^(bits-1) at element i, so that the rounds
// together cover every code at every position (2^bits rounds), or, with `positions` false,
// every code somewhere (ceil(2^bits / count) rounds).
inline std::vector<std::vector<std::int64_t>> every_code(unsigned bits, std::size_t count,
                                                         bool positions = true) {
  const std::size_t codes = std::size_t{1} << bits;
  const std::size_t rounds = positions ? codes : (codes + count - 1) / count;
  std::vector<std::vector<std::int64_t>> r(rounds, std::vector<std::int64_t>(count));
  for (std::size_t k = 0; k < rounds; ++k)
    for (std::size_t i = 0; i < count; ++i)
      r[k][i] = static_cast<std::int64_t>(((positions ? k : k * count) + i) % codes) -
                static_cast<std::int64_t>(codes / 2);
  return r;
}
inline std::vector<std::vector<std::int64_t>> every_int8_code(std::size_t count) {
  return every_code(8, count);
}

}  // namespace tosa_fb_test
