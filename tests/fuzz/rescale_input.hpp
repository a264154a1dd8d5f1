// RESCALE attributes and scales from fuzz input, shared by the targets that fuzz RESCALE: mostly
// legal-looking, sometimes out of every enum, zero points and multipliers at every edge.
#pragma once

#include <cstdint>
#include <limits>
#include <qfold/arith/rescale.hpp>

#include "fuzz/fuzz_input.hpp"

namespace fuzz {

inline qfold::int_type type_from(input& in) {
  const std::uint8_t b = in.byte();
  constexpr qfold::int_type valid[] = {qfold::int_type::i8, qfold::int_type::i16,
                                       qfold::int_type::i32, qfold::int_type::i48};
  if (b % 8 == 7)
    return static_cast<qfold::int_type>(in.byte());  // any byte, usually no type at all
  return valid[b % 4];
}
inline std::int64_t zp_from(input& in) {
  switch (in.byte() % 6) {
    case 0:
      return 0;
    case 1:
      return static_cast<std::int8_t>(in.byte());
    case 2:
      return in.byte();
    case 3:
      return 32768;
    case 4:
      return in.sized_i64();
    default:
      return in.raw<std::int64_t>();
  }
}
inline qfold::rescale_attributes attributes_from(input& in) {
  qfold::rescale_attributes a;
  a.input_type = type_from(in);
  a.output_type = type_from(in);
  const std::uint8_t f = in.byte();
  a.scale32 = (f & 1) == 0;
  a.per_channel = (f & 2) != 0;
  a.input_unsigned = (f & 4) != 0;
  a.output_unsigned = (f & 8) != 0;
  const std::uint8_t r = in.byte();
  a.rounding = static_cast<qfold::rounding_mode>(r % 8 < 6    ? 1 + r % 3
                                                 : r % 8 == 6 ? 0
                                                              : in.byte());
  a.input_zp = zp_from(in);
  a.output_zp = zp_from(in);
  return a;
}
inline qfold::scale_factor scale_factor_from(input& in) {
  const std::uint8_t b = in.byte();
  std::int32_t m = in.sized_i32();
  if ((b & 3) != 0) m &= std::numeric_limits<std::int32_t>::max();
  const std::uint8_t s = in.byte();
  return {m, s < 0xC0 ? 2 + s % 61 : in.shift()};
}

}  // namespace fuzz
