// The TOSA 1.0 flatbuffer schema as qfold reads it: the C++ that flatc generates from
// integrations/tosa_flatbuffers/schema/tosa.fbs (in the build tree), the enum values checked
// here, and each element type's storage (bytes per element, overflow-checked byte counts).
#pragma once

#include <flatbuffers/flatbuffers.h>
#include <qfold_tosa_fb/tosa_generated.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace qfold_tosa_fb {

// The values of TOSA 1.0's Op enum that qfold maps (a schema that numbers them otherwise would
// make qfold misread every file, as it makes Vela).
static_assert(tosa::Op_CONV2D == 3 && tosa::Op_DEPTHWISE_CONV2D == 5 && tosa::Op_MATMUL == 7 &&
              tosa::Op_CLAMP == 11 && tosa::Op_ADD == 15 && tosa::Op_MUL == 28 &&
              tosa::Op_SUB == 30 && tosa::Op_TABLE == 31 && tosa::Op_RESHAPE == 57 &&
              tosa::Op_SLICE == 59 && tosa::Op_TRANSPOSE == 61 && tosa::Op_CAST == 65 &&
              tosa::Op_RESCALE == 66 && tosa::Op_CONST == 67 && tosa::Op_CONST_SHAPE == 75);
static_assert(tosa::Attribute_Conv2dAttribute == 3 &&
              tosa::Attribute_DepthwiseConv2dAttribute == 5 &&
              tosa::Attribute_ClampAttribute == 11 && tosa::Attribute_TableAttribute == 31 &&
              tosa::Attribute_TransposeAttribute == 61 && tosa::Attribute_RescaleAttribute == 66 &&
              tosa::Attribute_ConstAttribute == 67 && tosa::Attribute_ConstShapeAttribute == 75);
static_assert(tosa::DType_BOOL == 1 && tosa::DType_INT4 == 2 && tosa::DType_INT8 == 3 &&
              tosa::DType_INT16 == 4 && tosa::DType_INT32 == 5 && tosa::DType_INT48 == 6 &&
              tosa::DType_FP32 == 7 && tosa::DType_FP16 == 8 && tosa::DType_BF16 == 9 &&
              tosa::DType_SHAPE == 10 && tosa::DType_FP8E4M3 == 11 && tosa::DType_FP8E5M2 == 12);
static_assert(tosa::RoundingMode_SINGLE_ROUND == 1 && tosa::RoundingMode_INEXACT_ROUND == 2 &&
              tosa::RoundingMode_DOUBLE_ROUND == 3);

// The file identifier (bytes 4..7) and the major version qfold reads.
inline constexpr std::string_view file_identifier = "TOSA";
inline constexpr int supported_major = 1;

// An Op's name in the schema ("RESCALE"), or "Op <n>" for a value the schema does not know (a
// later TOSA version's op, kept as qfold's `other`).
inline std::string op_name(tosa::Op o) {
  const char* n = tosa::EnumNameOp(o);
  if (n != nullptr && *n != '\0') return n;
  return "Op " + std::to_string(static_cast<std::uint32_t>(o));
}
inline std::string dtype_name(tosa::DType t) {
  const char* n = tosa::EnumNameDType(t);
  if (n != nullptr && *n != '\0') return n;
  return "DType " + std::to_string(static_cast<std::uint32_t>(t));
}

// How a tensor of `t` is stored: whole bytes per element, or INT4's two elements per byte.
struct storage {
  std::size_t bytes = 0;  // per element (0: unknown type, no data possible)
  bool packed4 = false;   // INT4: ceil(n / 2) bytes
};
[[nodiscard]] constexpr storage storage_of(tosa::DType t) noexcept {
  switch (t) {
    case tosa::DType_BOOL:
    case tosa::DType_INT8:
    case tosa::DType_FP8E4M3:
    case tosa::DType_FP8E5M2:
      return {1, false};
    case tosa::DType_INT4:
      return {1, true};
    case tosa::DType_INT16:
    case tosa::DType_FP16:
    case tosa::DType_BF16:
      return {2, false};
    case tosa::DType_INT32:
    case tosa::DType_FP32:
      return {4, false};
    case tosa::DType_INT48:
      return {6, false};
    case tosa::DType_SHAPE:  // shape values are int64
      return {8, false};
    default:
      return {};
  }
}

// The product of the dims, or nullopt when one is negative (unknown) or the product overflows.
[[nodiscard]] constexpr std::optional<std::uint64_t> element_count(
    std::span<const std::int64_t> shape) noexcept {
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    const auto u = static_cast<std::uint64_t>(d);
    if (u != 0 && n > std::numeric_limits<std::uint64_t>::max() / u) return std::nullopt;
    n *= u;
  }
  return n;
}
// The bytes `count` elements of `t` take, or nullopt (an unknown type, or overflow).
[[nodiscard]] constexpr std::optional<std::uint64_t> data_bytes(tosa::DType t,
                                                                std::uint64_t count) noexcept {
  const storage s = storage_of(t);
  if (s.bytes == 0) return std::nullopt;
  if (s.packed4) return count / 2 + count % 2;
  if (count > std::numeric_limits<std::uint64_t>::max() / s.bytes) return std::nullopt;
  return count * s.bytes;
}

}  // namespace qfold_tosa_fb
