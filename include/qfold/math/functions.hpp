// The real functions of qfold::math in one include: exact rounding rules, exp/log, tanh and
// sigmoid, erf/erfc, sqrt/rsqrt, sin/cos/atan; constexpr for float and double, no <cmath>.
#pragma once

#include "qfold/math/double_double.hpp"
#include "qfold/math/erf.hpp"
#include "qfold/math/exp_log.hpp"
#include "qfold/math/float_bits.hpp"
#include "qfold/math/hyperbolic.hpp"
#include "qfold/math/rounding.hpp"
#include "qfold/math/sqrt.hpp"
#include "qfold/math/trig.hpp"
