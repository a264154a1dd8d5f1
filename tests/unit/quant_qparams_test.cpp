// qparams validation: every bad input gets its own error code.
#include <limits>
#include <qfold/qfold.hpp>

#include "catch_compat.hpp"

TEST_CASE("qparams: scales, zero points and ranges are validated", "[quant]") {
  using qfold::errc;
  using qfold::qparams;
  const auto code = [](qparams q) { return qfold::validate(q).error().code; };
  CHECK(qfold::validate(qparams{}).has_value());
  CHECK(qfold::validate(qfold::make_qparams(qfold::dtype::int16, 1.0 / 32768, 0)).has_value());
  CHECK(code({.scale = 0.0}) == errc::scale_zero);
  CHECK(code({.scale = -0.0}) == errc::scale_zero);
  CHECK(code({.scale = -1.0}) == errc::scale_negative);
  CHECK(code({.scale = std::numeric_limits<double>::quiet_NaN()}) == errc::scale_nan);
  CHECK(code({.scale = std::numeric_limits<double>::infinity()}) == errc::scale_infinite);
  CHECK(code({.scale = -std::numeric_limits<double>::infinity()}) == errc::scale_infinite);
  CHECK(code({.zero_point = 128}) == errc::zero_point_out_of_range);
  CHECK(code({.zero_point = -1, .qmin = 0, .qmax = 255, .type = qfold::dtype::uint8}) ==
        errc::zero_point_out_of_range);
  CHECK(code({.qmin = -129}) == errc::value_out_of_range);
  CHECK(code({.qmin = 5, .qmax = 4}) == errc::empty_range);
  CHECK(qfold::validate(qparams{.qmin = 4, .qmax = 4}).has_value());  // a single code is a range
  CHECK(qfold::make_qparams(qfold::dtype::uint16, 1.0, 32768).qmax == 65535);
}

TEST_CASE("error codes have stable names", "[arith]") {
  CHECK(qfold::to_string(qfold::errc::negative_multiplier) == "negative_multiplier");
  CHECK(qfold::to_string(qfold::errc::scale_zero) == "scale_zero");
  CHECK(qfold::to_string(qfold::errc::not_exact) == "not_exact");
  CHECK(qfold::to_string(static_cast<qfold::errc>(0)) == "unknown");
  CHECK(qfold::to_string(static_cast<qfold::errc>(200)) == "unknown");
}
