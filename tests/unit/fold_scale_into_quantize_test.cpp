// Scale into quantize on plain data (fold/scale_into_quantize.hpp), against an independent float32
// model of torch's quantize_per_tensor / dequantize_per_tensor written here with <cmath>: the
// sandwich proof agrees with the model on every code (int8 and int16); a power-of-two constant
// folds into the scale with the same codes on every tie, edge and random float input; any other
// constant is refused by default, and the refusal is warranted: the test finds an input whose code
// moves.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/fold/scale_into_quantize.hpp>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "exact_support.hpp"

namespace {
using qfold::float_exactness;
using qfold::qparams;
using qfold::reason;
using qfold::scale_op;

// torch: clamp(round_half_even(x * float(1.0 / scale)) + zp, qmin, qmax); NaN -> 0 on x86.
i64 ref_quantize(float x, const qparams& q) {
  const float y = x * static_cast<float>(1.0 / q.scale);
  if (std::isnan(y)) return 0;
  const float r = std::nearbyint(y) + static_cast<float>(q.zero_point);  // FE_TONEAREST: even
  if (!(r > static_cast<float>(q.qmin))) return q.qmin;
  if (!(r < static_cast<float>(q.qmax))) return q.qmax;
  return static_cast<i64>(r);
}
float ref_dequantize(i64 code, const qparams& q) {
  return static_cast<float>(code - q.zero_point) * static_cast<float>(q.scale);
}
float apply(scale_op op, float x, float c) { return op == scale_op::div ? x / c : x * c; }

std::optional<i64> first_moved_code(scale_op op, float c, const qparams& in, const qparams& out) {
  for (i64 code = in.qmin; code <= in.qmax; ++code)
    if (ref_quantize(apply(op, ref_dequantize(code, in), c), out) != code) return code;
  return std::nullopt;
}

TEST_CASE("scale into quantize: the sandwich proof agrees with the model on every code",
          "[fold][scale]") {
  REQUIRE(std::fegetround() == FE_TONEAREST);
  std::mt19937_64 gen(21027);
  int identities = 0, moved = 0;
  for (int n = 0; n < scaled(600); ++n) {
    const bool wide = n % 3 == 0;
    const auto type = wide ? qfold::dtype::int16 : qfold::dtype::int8;
    const double s_in = std::ldexp(1.0 + static_cast<double>(pick(gen, 0, 1000)) / 1000.0,
                                   static_cast<int>(pick(gen, -12, 2)));
    const float c = std::array<float, 6>{
        2.0f, 8.0f, 3.0f, 0.125f, 11.3137085f, 1.0f / 3}[static_cast<std::size_t>(pick(gen, 0, 5))];
    const scale_op op = n % 2 == 0 ? scale_op::div : scale_op::mul;
    const i64 zp = wide ? 0 : pick(gen, -20, 20);
    // S_out = S_in / c (div) or S_in * c (mul), then nudged by 0, 1e-7, 1e-4 or 1e-2 relative.
    const double ideal = op == scale_op::div ? s_in / c : s_in * c;
    const double nudge =
        std::array<double, 4>{0, 1e-7, 1e-4, 1e-2}[static_cast<std::size_t>((n / 2) % 4)];
    const qparams in = qfold::make_qparams(type, s_in, static_cast<std::int32_t>(zp));
    const qparams out =
        qfold::make_qparams(type, ideal * (1 + nudge), static_cast<std::int32_t>(zp));
    const auto r = qfold::prove_requantize_identity(op, c, in, out, qfold::conventions::executorch);
    const auto expected = first_moved_code(op, c, in, out);
    REQUIRE(r.has_value() == expected.has_value());
    if (r) {
      CHECK(r->code == reason::not_exact);
      CHECK(static_cast<i64>(r->index) == *expected - in.qmin);
      ++moved;
    } else {
      ++identities;
    }
  }
  CHECK(identities > scaled(100));
  CHECK(moved > scaled(50));
}

TEST_CASE("scale into quantize: sandwich guards", "[fold][scale]") {
  const auto q8 = qfold::make_qparams(qfold::dtype::int8, 0.1, 0);
  const auto q16 = qfold::make_qparams(qfold::dtype::int16, 0.1, 0);
  const auto& ex = qfold::conventions::executorch;
  const auto refuses = [&](std::optional<qfold::rejection> r, reason why) {
    REQUIRE(r);
    CHECK(r->code == why);
  };
  CHECK_FALSE(qfold::prove_requantize_identity(scale_op::mul, 1.0f, q8, q8, ex));
  CHECK_FALSE(qfold::prove_requantize_identity(scale_op::mul, 1.0f, q16, q16, ex));
  refuses(qfold::prove_requantize_identity(scale_op::div, 0.0f, q8, q8, ex),
          reason::invalid_constant);
  refuses(qfold::prove_requantize_identity(scale_op::div, std::numeric_limits<float>::infinity(),
                                           q8, q8, ex),
          reason::invalid_constant);
  refuses(qfold::prove_requantize_identity(scale_op::mul, std::numeric_limits<float>::quiet_NaN(),
                                           q8, q8, ex),
          reason::invalid_constant);
  refuses(qfold::prove_requantize_identity(scale_op::mul, 1.0f, q8, q16, ex),
          reason::qparams_mismatch);
  auto narrow = q16;
  narrow.qmin = -32767;  // the int16 path's symmetric range
  refuses(qfold::prove_requantize_identity(scale_op::mul, 1.0f, q16, narrow, ex),
          reason::qparams_mismatch);
  auto bad = q8;
  bad.scale = -1;
  refuses(qfold::prove_requantize_identity(scale_op::mul, 1.0f, bad, q8, ex),
          reason::qparams_mismatch);
  refuses(qfold::prove_requantize_identity(scale_op::mul, 1.0f,
                                           qfold::make_qparams(qfold::dtype::int32, 0.1, 0),
                                           qfold::make_qparams(qfold::dtype::int32, 0.1, 0), ex),
          reason::unsupported);
}

// Inputs that probe every rounding decision: each tie (k + 1/2) S' and its float neighbours for
// every code, +-0, subnormals, huge values, +-inf, NaN, and random floats of every magnitude.
std::vector<float> probes(const qparams& folded, std::mt19937_64& gen) {
  std::vector<float> xs{0.0f,
                        -0.0f,
                        std::numeric_limits<float>::denorm_min(),
                        -std::numeric_limits<float>::denorm_min(),
                        std::numeric_limits<float>::min(),
                        std::numeric_limits<float>::max(),
                        -std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN()};
  for (i64 k = folded.qmin - folded.zero_point - 2; k <= folded.qmax - folded.zero_point + 2; ++k) {
    float x = static_cast<float>((static_cast<double>(k) + 0.5) * folded.scale);
    for (int i = 0; i < 3; ++i) x = std::nextafter(x, -std::numeric_limits<float>::infinity());
    for (int i = 0; i < 7; ++i, x = std::nextafter(x, std::numeric_limits<float>::infinity()))
      xs.push_back(x);
  }
  for (int i = 0; i < scaled(20000); ++i)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(pick(gen, 0, 0xFFFFFFFF))));
  return xs;
}

TEST_CASE("scale into quantize: a power-of-two constant folds with the same codes everywhere",
          "[fold][scale]") {
  std::mt19937_64 gen(8);
  int checked = 0;
  for (const auto type : {qfold::dtype::int8, qfold::dtype::int16}) {
    for (const float c : {2.0f, 8.0f, 0.5f, 0.125f, 1024.0f, 0x1p-20f}) {
      for (const scale_op op : {scale_op::div, scale_op::mul}) {
        const double s = std::ldexp(1.0 + static_cast<double>(pick(gen, 0, 999)) / 1000.0,
                                    static_cast<int>(pick(gen, -20, 4)));
        const qparams q = qfold::make_qparams(type, s, type == qfold::dtype::int8 ? 3 : 0);
        qparams folded{};
        REQUIRE_FALSE(
            qfold::fold_scale_into_quantize(op, c, q, float_exactness::bit_exact, folded));
        CHECK(folded.scale == (op == scale_op::div ? s * c : s / c));
        for (const float x : probes(folded, gen)) {
          REQUIRE(ref_quantize(apply(op, x, c), q) == ref_quantize(x, folded));
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000000 / (sanitized ? 8 : 1));
}

TEST_CASE("scale into quantize: any other constant is refused, and a code does move",
          "[fold][scale]") {
  std::mt19937_64 gen(3);
  const qparams q = qfold::make_qparams(qfold::dtype::int8, 0.05, 0);
  for (const float c : {3.0f, 11.3137085f, 0.1f}) {  // 11.31...: sqrt(128), an attention scale
    qparams folded{};
    const auto r =
        qfold::fold_scale_into_quantize(scale_op::div, c, q, float_exactness::bit_exact, folded);
    REQUIRE(r);
    CHECK(r->code == reason::not_exact);
    // Folded anyway (the tolerance policy), some input near a tie gets another code.
    REQUIRE_FALSE(
        qfold::fold_scale_into_quantize(scale_op::div, c, q, float_exactness::real, folded));
    bool moved = false;
    for (const float x : probes(folded, gen))
      moved |= ref_quantize(x / c, q) != ref_quantize(x, folded);
    CHECK(moved);
  }
}

TEST_CASE("scale into quantize: guards", "[fold][scale]") {
  const qparams q = qfold::make_qparams(qfold::dtype::int8, 0.05, 0);
  qparams f{};
  const auto refuses = [&](float c, const qparams& p, reason why) {
    const auto r = qfold::fold_scale_into_quantize(scale_op::div, c, p, float_exactness::real, f);
    INFO("c = " << c << ", scale = " << p.scale);
    REQUIRE(r);
    CHECK(r->code == why);
  };
  refuses(0.0f, q, reason::invalid_constant);
  refuses(-2.0f, q, reason::invalid_constant);
  refuses(std::numeric_limits<float>::infinity(), q, reason::invalid_constant);
  refuses(std::numeric_limits<float>::quiet_NaN(), q, reason::invalid_constant);
  auto bad = q;
  bad.scale = std::numeric_limits<double>::quiet_NaN();
  refuses(2.0f, bad, reason::qparams_mismatch);
  bad.scale = 0;
  refuses(2.0f, bad, reason::qparams_mismatch);
  refuses(0x1p110f, q, reason::out_of_range);  // the folded scale leaves 2^-100..2^100
  // At compile time, on both compilers.
  STATIC_REQUIRE([] {
    qparams folded{};
    return !qfold::fold_scale_into_quantize(scale_op::mul, 4.0f,
                                            qfold::make_qparams(qfold::dtype::int8, 0.5, 1),
                                            float_exactness::bit_exact, folded) &&
           folded.scale == 0.125;
  }());
  STATIC_REQUIRE(!qfold::prove_requantize_identity(
      scale_op::div, 2.0f, qfold::make_qparams(qfold::dtype::int8, 0.5, 1),
      qfold::make_qparams(qfold::dtype::int8, 0.25, 1), qfold::conventions::executorch));
}

}  // namespace
