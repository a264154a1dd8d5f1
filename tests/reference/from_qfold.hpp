// Test glue: qfold's RESCALE attributes as the reference model's parameters. The model itself
// (spec_reference.hpp) knows nothing of qfold; this is the one place that translates.
#pragma once

#include <cstdint>
#include <qfold/arith/rescale.hpp>

#include "reference/spec_reference.hpp"

namespace qref {

// Callers validate the type first; anything else reads as i48.
inline DType from_qfold(qfold::int_type t) {
  return t == qfold::int_type::i8    ? DType::i8
         : t == qfold::int_type::i16 ? DType::i16
         : t == qfold::int_type::i32 ? DType::i32
                                     : DType::i48;
}

// Every attribute as it is (both enums number the rounding modes as the spec does).
inline RescaleParams from_qfold(const qfold::rescale_attributes& a, std::int64_t multiplier = 0,
                                int shift = 0) {
  RescaleParams p;
  p.in_t = from_qfold(a.input_type);
  p.out_t = from_qfold(a.output_type);
  p.scale32 = a.scale32;
  p.rounding_mode = static_cast<RoundingMode>(static_cast<int>(a.rounding));
  p.per_channel = a.per_channel;
  p.input_unsigned = a.input_unsigned;
  p.output_unsigned = a.output_unsigned;
  p.input_zp = a.input_zp;
  p.output_zp = a.output_zp;
  p.multiplier = multiplier;
  p.shift = shift;
  return p;
}

// What qfold computes: INEXACT_ROUND is no function in the model (any result within a tolerance);
// qfold evaluates it as SINGLE_ROUND, one permitted result, so that is what it is compared with.
inline RescaleParams as_qfold_evaluates(RescaleParams p) {
  if (p.rounding_mode == RoundingMode::inexact_round) p.rounding_mode = RoundingMode::single_round;
  return p;
}

// One RESCALE element as qfold computes it, by the model.
inline Result<std::int64_t> rescale_as_qfold(const qfold::rescale_attributes& a,
                                             qfold::scale_factor s, std::int64_t x) {
  return rescale_element(as_qfold_evaluates(from_qfold(a, s.multiplier, s.shift)), x);
}

}  // namespace qref
