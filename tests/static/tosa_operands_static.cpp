// TOSA 1.0's operand layout (qfold/graph/tosa_operands.hpp) at compile time, on g++ and clang++
// (static_assert only: compiling is passing): the operand tables as the specification lists
// them, and zero-point storage checked over every 8- and 16-bit value against two's complement
// written out independently (bit patterns through unsigned arithmetic).
#include <cstdint>
#include <qfold/graph/tosa_operands.hpp>
#include <utility>

namespace {
namespace t = qfold::tosa;

// RESCALE: input, multiplier, shift, input_zp, output_zp; only the input is an edge, the four
// parameters must be constants.
static_assert(t::layout_of(t::op::rescale).count == 5 && t::layout_of(t::op::rescale).visible == 1);
static_assert(!t::layout_of(t::op::rescale).must_be_constant(t::rescale_operand::input));
static_assert(t::layout_of(t::op::rescale).must_be_constant(t::rescale_operand::multiplier) &&
              t::layout_of(t::op::rescale).must_be_constant(t::rescale_operand::shift) &&
              t::layout_of(t::op::rescale).must_be_constant(t::rescale_operand::input_zp) &&
              t::layout_of(t::op::rescale).must_be_constant(t::rescale_operand::output_zp));
static_assert(!t::layout_of(t::op::rescale).must_be_constant(5));  // past the end
// MUL: two data operands and the constant shift.
static_assert(t::layout_of(t::op::mul).count == 3 && t::layout_of(t::op::mul).visible == 2 &&
              t::layout_of(t::op::mul).must_be_constant(t::mul_operand::shift) &&
              !t::layout_of(t::op::mul).must_be_constant(t::mul_operand::input2));
// TABLE: the table is seen (operand 1) and must be constant.
static_assert(t::layout_of(t::op::table).visible == 2 &&
              t::layout_of(t::op::table).must_be_constant(t::table_operand::table));
// Convolutions: input, weight, bias seen; zero points constant. Weight and bias need not be
// constants to the spec (qfold refuses a fold that needs them as values).
static_assert(t::layout_of(t::op::conv2d).count == 5 && t::layout_of(t::op::conv2d).visible == 3);
static_assert(t::layout_of(t::op::depthwise_conv2d).must_be_constant(t::conv_operand::input_zp) &&
              t::layout_of(t::op::depthwise_conv2d).must_be_constant(t::conv_operand::weight_zp) &&
              !t::layout_of(t::op::depthwise_conv2d).must_be_constant(t::conv_operand::weight));
static_assert(t::layout_of(t::op::matmul).count == 4 && t::layout_of(t::op::matmul).visible == 2 &&
              t::layout_of(t::op::matmul).must_be_constant(t::matmul_operand::b_zp));
static_assert(t::layout_of(t::op::slice).must_be_constant(t::shape_operand::start) &&
              t::layout_of(t::op::slice).must_be_constant(t::shape_operand::size) &&
              t::layout_of(t::op::reshape).visible == 1);
static_assert(t::layout_of(t::op::other).count == 0 && t::layout_of(t::op::const_).count == 0);

// Names in both spellings, and every op's name leads back to it.
static_assert(t::op_named("RESCALE") == t::op::rescale &&
              t::op_named("tosa.rescale") == t::op::rescale);
static_assert(t::op_named("DEPTHWISE_CONV2D") == t::op::depthwise_conv2d);
static_assert(t::op_named("tosa.fully_connected") == t::op::other &&
              t::op_named("") == t::op::other);
constexpr bool names_round_trip() {
  for (int i = 0; i < static_cast<int>(t::op::other); ++i) {
    const auto o = static_cast<t::op>(i);
    if (t::op_named(t::spec_name(o)) != o || t::op_named(t::mlir_name(o)) != o) return false;
  }
  return true;
}
static_assert(names_round_trip());

// The signless bits of v (two's complement of the width), read back as a signed value.
constexpr std::int64_t as_signed_bits(std::int64_t v, unsigned bits) {
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return (u & sign) != 0 ? -static_cast<std::int64_t>(((~u) & mask) + 1)
                         : static_cast<std::int64_t>(u);
}
// Every value from lo to hi (and one past each end): unsigned values store as their bits and
// read back; signed values store as themselves; out-of-range values are refused.
constexpr bool zero_points(unsigned bits, bool is_unsigned, std::int64_t lo, std::int64_t hi) {
  const std::int64_t min = is_unsigned ? 0 : -(std::int64_t{1} << (bits - 1));
  const std::int64_t max =
      is_unsigned ? (std::int64_t{1} << bits) - 1 : (std::int64_t{1} << (bits - 1)) - 1;
  for (std::int64_t v = lo - 1; v <= hi + 1; ++v) {
    const auto s = t::zero_point_stored(v, bits, is_unsigned);
    if (v < min || v > max) {
      if (s) return false;
      continue;
    }
    if (!s || *s != as_signed_bits(v, bits)) return false;
    if (t::zero_point_value(*s, bits, is_unsigned) != v) return false;
  }
  return true;
}
static_assert(zero_points(8, false, -128, 127) && zero_points(8, true, 0, 255));
// 16 bits in chunks of 2,048 values, each its own constant evaluation (clang's step budget).
template <bool Unsigned, int K>
constexpr bool chunk16 = zero_points(16, Unsigned, (Unsigned ? 0 : -32768) + K * 2048,
                                     (Unsigned ? 0 : -32768) + K * 2048 + 2047);
template <bool Unsigned, int... K>
constexpr bool all_chunks16(std::integer_sequence<int, K...>) {
  return (chunk16<Unsigned, K> && ...);
}
static_assert(all_chunks16<false>(std::make_integer_sequence<int, 32>{}));
static_assert(all_chunks16<true>(std::make_integer_sequence<int, 32>{}));
// The reference's own anchors (the facts the storage rule is quoted with).
static_assert(t::zero_point_stored(131, 8, true) == -125 &&
              t::zero_point_value(-125, 8, true) == 131);
static_assert(t::zero_point_stored(32768, 16, true) == -32768);
static_assert(t::zero_point_value(-125, 8, false) == -125);
static_assert(!t::zero_point_stored(0, 0, false) && !t::zero_point_stored(0, 33, false));
}  // namespace
