// TOSA 1.0's operand layout, in one place for every TOSA adapter (MLIR's dialect, the .tosa
// flatbuffer): which operand of which op is what, which operands the spec requires to be
// compile-time constants, which qfold sees as graph edges, and how a zero point is stored. No IR
// types: an adapter maps its own op names onto qfold::tosa::op.
// Source: the TOSA 1.0 specification (operator argument tables) and MLIR 22's TosaOps.td.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace qfold::tosa {

// The TOSA 1.0 ops qfold looks at; every other op is `other`.
enum class op : std::uint8_t {
  const_,            // CONST: no operands, the data is the op's
  const_shape,       // CONST_SHAPE: no operands
  rescale,           // input, multiplier, shift, input_zp, output_zp
  mul,               // input1, input2, shift
  add,               // input1, input2
  sub,               // input1, input2
  table,             // input, table
  clamp,             // input (min_val, max_val are attributes)
  cast,              // input
  conv2d,            // input, weight [OC, KH, KW, IC], bias, input_zp, weight_zp
  depthwise_conv2d,  // input, weight [KH, KW, C, M], bias, input_zp, weight_zp
  matmul,            // a [N, H, C], b [N, C, W], a_zp, b_zp
  reshape,           // input, shape (CONST_SHAPE)
  transpose,         // input (perms is an attribute)
  slice,             // input, start, size (CONST_SHAPE)
  other,
};

// Operand indices, named as the specification names them.
struct rescale_operand {
  static constexpr std::size_t input = 0, multiplier = 1, shift = 2, input_zp = 3, output_zp = 4;
};
struct mul_operand {
  static constexpr std::size_t input1 = 0, input2 = 1, shift = 2;
};
struct table_operand {
  static constexpr std::size_t input = 0, table = 1;
};
struct conv_operand {  // CONV2D and DEPTHWISE_CONV2D
  static constexpr std::size_t input = 0, weight = 1, bias = 2, input_zp = 3, weight_zp = 4;
};
struct matmul_operand {
  static constexpr std::size_t a = 0, b = 1, a_zp = 2, b_zp = 3;
};
struct shape_operand {  // RESHAPE's shape, SLICE's start and size
  static constexpr std::size_t input = 0, shape = 1, start = 1, size = 2;
};

// An op's operands: how many, how many of them (a prefix) qfold sees as the node's operands, and
// which must be compile-time constants (bit i: operand i; TOSA 1.0's integer profile requires
// them to come from CONST or CONST_SHAPE). The hidden ones qfold reads through the adapter's
// attribute points (rescale, mul_shift, quantized_conv, view_axis).
struct operand_layout {
  std::size_t count = 0;
  std::size_t visible = 0;
  std::uint32_t constant_mask = 0;

  [[nodiscard]] constexpr bool must_be_constant(std::size_t i) const noexcept {
    return i < count && i < 32 && ((constant_mask >> i) & 1U) != 0;
  }
};

[[nodiscard]] constexpr operand_layout layout_of(op o) noexcept {
  switch (o) {
    case op::const_:
    case op::const_shape:
      return {0, 0, 0};
    case op::rescale:  // multiplier, shift, input_zp, output_zp
      return {5, 1, 0b11110};
    case op::mul:  // shift
      return {3, 2, 0b100};
    case op::add:
    case op::sub:
      return {2, 2, 0};
    case op::table:  // the table is both seen (qfold reads it as operand 1) and constant
      return {2, 2, 0b10};
    case op::clamp:
    case op::cast:
    case op::transpose:
      return {1, 1, 0};
    case op::conv2d:
    case op::depthwise_conv2d:  // input_zp, weight_zp
      return {5, 3, 0b11000};
    case op::matmul:  // a_zp, b_zp
      return {4, 2, 0b1100};
    case op::reshape:  // shape
      return {2, 1, 0b10};
    case op::slice:  // start, size
      return {3, 1, 0b110};
    case op::other:
      break;
  }
  return {};
}

// Each op's name in the specification (the flatbuffer's Op enum spelling) and in MLIR.
struct op_names {
  std::string_view spec, mlir;
};
[[nodiscard]] constexpr op_names names_of(op o) noexcept {
  constexpr op_names names[] = {{"CONST", "tosa.const"},
                                {"CONST_SHAPE", "tosa.const_shape"},
                                {"RESCALE", "tosa.rescale"},
                                {"MUL", "tosa.mul"},
                                {"ADD", "tosa.add"},
                                {"SUB", "tosa.sub"},
                                {"TABLE", "tosa.table"},
                                {"CLAMP", "tosa.clamp"},
                                {"CAST", "tosa.cast"},
                                {"CONV2D", "tosa.conv2d"},
                                {"DEPTHWISE_CONV2D", "tosa.depthwise_conv2d"},
                                {"MATMUL", "tosa.matmul"},
                                {"RESHAPE", "tosa.reshape"},
                                {"TRANSPOSE", "tosa.transpose"},
                                {"SLICE", "tosa.slice"},
                                {"other", "other"}};
  const auto i = static_cast<std::size_t>(o);
  return i < std::size(names) ? names[i] : op_names{"other", "other"};
}
[[nodiscard]] constexpr std::string_view spec_name(op o) noexcept { return names_of(o).spec; }
[[nodiscard]] constexpr std::string_view mlir_name(op o) noexcept { return names_of(o).mlir; }
// The op named `name` in either spelling (other: not one qfold looks at).
[[nodiscard]] constexpr op op_named(std::string_view name) noexcept {
  for (auto i = static_cast<std::uint8_t>(op::const_); i < static_cast<std::uint8_t>(op::other);
       ++i) {
    const auto o = static_cast<op>(i);
    if (name == spec_name(o) || name == mlir_name(o)) return o;
  }
  return op::other;
}

// Zero points. TOSA 1.0 has no unsigned types: an unsigned RESCALE side is flagged
// (input_unsigned, output_unsigned) and its zero point is stored in a signless tensor of the same
// width, as the two's-complement bits of the unsigned value (uint8 131 stored as -125, uint16
// 32768 as -32768). `bits` is 8, 16 or 32 (32: always signed).
[[nodiscard]] constexpr std::int64_t zero_point_value(std::int64_t stored, unsigned bits,
                                                      bool is_unsigned) noexcept {
  if (!is_unsigned || bits >= 32 || stored >= 0) return stored;
  return stored + (std::int64_t{1} << bits);
}
// How the zero point `value` is stored, or nullopt when it does not fit the type (signed: the
// width's signed range; unsigned: 0 .. 2^bits - 1).
[[nodiscard]] constexpr std::optional<std::int64_t> zero_point_stored(std::int64_t value,
                                                                      unsigned bits,
                                                                      bool is_unsigned) noexcept {
  if (bits == 0 || bits > 32) return std::nullopt;
  const std::int64_t half = std::int64_t{1} << (bits - 1);
  if (is_unsigned && bits < 32) {
    if (value < 0 || value >= 2 * half) return std::nullopt;
    return value >= half ? value - 2 * half : value;
  }
  if (value < -half || value >= half) return std::nullopt;
  return value;
}

}  // namespace qfold::tosa
