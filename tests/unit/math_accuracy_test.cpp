// Accuracy of qfold::math against the independent reference in tests/reference/real_reference.hpp
// (x87 double-long-double, ~2^-110): every result must be the correctly rounded one wherever the
// reference can decide it. Float inputs: every value s*(q - zp) of int8 codes over 5 zero points
// and 50 scales, every int16 code over 10 scales, and 1M random floats across exponents; double
// inputs: 1M random samples per function. Disagreements with glibc are counted and printed,
// never asserted. Under sanitizers the random counts are divided by 16.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <qfold/math/functions.hpp>
#include <random>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "reference/real_reference.hpp"

namespace {
namespace qm = qfold::math;
using rref::ld;
using rref::xdd;

#if defined(__SANITIZE_ADDRESS__)
constexpr int sample_divisor = 16;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int sample_divisor = 16;
#else
constexpr int sample_divisor = 1;
#endif
#else
constexpr int sample_divisor = 1;
#endif
constexpr int random_count = 1000000 / sample_divisor;

struct function_case {
  const char* name;
  float (*qf)(float);
  double (*qd)(double);
  float (*libm_f)(float);
  double (*libm_d)(double);
  xdd (*ref)(ld);
  double lo, hi;  // inputs sampled from (lo, hi]
};

// Exponent range of |x| worth sampling: 2^-40 up to the domain's edge (subnormals are covered by
// the log/sqrt/atan cases, whose domains start at 0).
template <class T>
T random_in(std::mt19937_64& gen, const function_case& f) {
  constexpr bool is_float = sizeof(T) == 4;
  const double edge = std::max(std::fabs(f.lo), std::fabs(f.hi));
  const int e_hi = std::min(std::ilogb(edge), is_float ? 127 : 1023);
  const int e_lo = f.lo == 0 || f.lo == -1 ? (is_float ? -149 : -1074) : -40;
  for (;;) {
    const int e = e_lo + static_cast<int>(gen() % static_cast<std::uint64_t>(e_hi - e_lo + 1));
    const T m = static_cast<T>(1 + std::ldexp(static_cast<double>(gen() >> 11), -53));
    T x = std::ldexp(m, e);
    if ((gen() & 1) != 0) x = -x;
    if (std::isfinite(x) && x > f.lo && x <= f.hi && x != 0) return x;
  }
}

std::vector<float> float_inputs(const function_case& f) {
  std::vector<float> in;
  std::mt19937_64 gen(20240611);
  // Scales: 1/256, 1/128, 2^-k for k = 0..15, and 32 random float32 values in [1e-4, 1].
  std::vector<float> s8 = {1.0f / 256, 1.0f / 128};
  for (int k = 0; k <= 15; ++k) s8.push_back(std::ldexp(1.0f, -k));
  std::uniform_real_distribution<float> unit(1e-4f, 1.0f);
  while (s8.size() < 50) s8.push_back(unit(gen));
  for (float s : s8)
    for (int zp : {-128, -1, 0, 5, 127})
      for (int q = -128; q <= 127; ++q) in.push_back(s * static_cast<float>(q - zp));
  // int16 codes over 10 scales.
  for (float s : {1.0f / 32768, 1.0f / 4096, 1.0f / 1024, 1.0f / 256, 3.0517578e-5f * 3, 0.000123f,
                  0.000457f, 0.0011f, 0.0078125f, 0.01f})
    for (int q = -32768; q <= 32767; ++q) in.push_back(s * static_cast<float>(q));
  in.erase(std::remove_if(in.begin(), in.end(), [&](float x) { return !(x > f.lo && x <= f.hi); }),
           in.end());
  for (int i = 0; i < random_count; ++i) in.push_back(random_in<float>(gen, f));
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  if (sample_divisor > 1) {  // keep every sample_divisor-th input under sanitizers
    std::size_t kept = 0;
    for (std::size_t i = 0; i < in.size(); i += static_cast<std::size_t>(sample_divisor))
      in[kept++] = in[i];
    in.resize(kept);
  }
  return in;
}

struct tally {
  std::size_t inputs = 0, undecided = 0, wrong = 0, libm_wrong = 0, libm_differs = 0;
  ld max_ulp = 0;
  double worst_input = 0;
};

template <class T>
void account(tally& t, T x, T got, T libm, xdd ref) {
  ++t.inputs;
  const auto cr = rref::correctly_rounded<T>(ref);
  if (libm != got && !(std::isnan(libm) && std::isnan(got))) ++t.libm_differs;
  if (!cr.decided) {
    ++t.undecided;
    return;
  }
  const ld e = rref::ulp_error(got, ref, cr.value);
  if (e > t.max_ulp) {
    t.max_ulp = e;
    t.worst_input = static_cast<double>(x);
  }
  if (std::memcmp(&got, &cr.value, sizeof(T)) != 0 && got != cr.value) ++t.wrong;
  if (libm != cr.value) ++t.libm_wrong;
}

void report(const char* name, const char* type, const tally& t) {
  std::printf(
      "math accuracy %-8s %-6s inputs %8zu  not correctly rounded %zu  undecided %zu  max ulp "
      "%.6Lf (at %a)  glibc differs %zu, glibc not correctly rounded %zu\n",
      name, type, t.inputs, t.wrong, t.undecided, t.max_ulp, t.worst_input, t.libm_differs,
      t.libm_wrong);
  std::fflush(stdout);
}

void run(const function_case& f) {
  tally tf;
  for (float x : float_inputs(f)) account(tf, x, f.qf(x), f.libm_f(x), f.ref(static_cast<ld>(x)));
  report(f.name, "float", tf);
  CHECK(tf.wrong == 0);
  CHECK(tf.undecided == 0);

  tally td;
  std::mt19937_64 gen(7);
  for (int i = 0; i < random_count; ++i) {
    const double x = random_in<double>(gen, f);
    account(td, x, f.qd(x), f.libm_d(x), f.ref(static_cast<ld>(x)));
  }
  report(f.name, "double", td);
  CHECK(td.wrong == 0);
  CHECK(td.undecided <= 2);  // the reference decides all but ~2^-40 of random doubles
}

// Logistic through libm, as a user would write it: the naive composition, two roundings.
float naive_sigmoid_f(float x) { return 1.0f / (1.0f + std::exp(-x)); }
double naive_sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
float naive_rsqrt_f(float x) { return 1.0f / std::sqrt(x); }
double naive_rsqrt_d(double x) { return 1.0 / std::sqrt(x); }

#define QFOLD_MATH_CASE(fn, libf, libd, ref, lo, hi)                                             \
  function_case {                                                                                \
#fn, [](float x) { return qm::fn(x); }, [](double x) { return qm::fn(x); }, libf, libd, ref, \
                                                                             lo, hi              \
  }

const function_case cases[] = {
    QFOLD_MATH_CASE(
        exp, [](float x) { return std::exp(x); }, [](double x) { return std::exp(x); },
        [](ld x) { return rref::exp(rref::x(x)); }, -745.2, 709.8),
    QFOLD_MATH_CASE(
        expm1, [](float x) { return std::expm1(x); }, [](double x) { return std::expm1(x); },
        [](ld x) { return rref::expm1(x); }, -50, 709.8),
    QFOLD_MATH_CASE(
        log, [](float x) { return std::log(x); }, [](double x) { return std::log(x); },
        [](ld x) { return rref::log(rref::x(x)); }, 0, std::numeric_limits<double>::max()),
    QFOLD_MATH_CASE(
        log1p, [](float x) { return std::log1p(x); }, [](double x) { return std::log1p(x); },
        [](ld x) { return rref::log1p(x); }, -1, std::numeric_limits<double>::max()),
    QFOLD_MATH_CASE(
        tanh, [](float x) { return std::tanh(x); }, [](double x) { return std::tanh(x); },
        [](ld x) { return rref::tanh(x); }, -30, 30),
    QFOLD_MATH_CASE(
        sigmoid, naive_sigmoid_f, naive_sigmoid_d, [](ld x) { return rref::sigmoid(x); }, -750, 50),
    QFOLD_MATH_CASE(
        erf, [](float x) { return std::erf(x); }, [](double x) { return std::erf(x); },
        [](ld x) { return rref::erf(x); }, -7, 7),
    QFOLD_MATH_CASE(
        erfc, [](float x) { return std::erfc(x); }, [](double x) { return std::erfc(x); },
        [](ld x) { return rref::erfc(x); }, -7, 28),
    QFOLD_MATH_CASE(
        sqrt, [](float x) { return std::sqrt(x); }, [](double x) { return std::sqrt(x); },
        [](ld x) { return rref::sqrt(x); }, 0, std::numeric_limits<double>::max()),
    QFOLD_MATH_CASE(
        rsqrt, naive_rsqrt_f, naive_rsqrt_d, [](ld x) { return rref::rsqrt(x); }, 0,
        std::numeric_limits<double>::max()),
    QFOLD_MATH_CASE(
        sin, [](float x) { return std::sin(x); }, [](double x) { return std::sin(x); },
        [](ld x) { return rref::sin(x); }, -0x1p30, 0x1p30),
    QFOLD_MATH_CASE(
        cos, [](float x) { return std::cos(x); }, [](double x) { return std::cos(x); },
        [](ld x) { return rref::cos(x); }, -0x1p30, 0x1p30),
    QFOLD_MATH_CASE(
        atan, [](float x) { return std::atan(x); }, [](double x) { return std::atan(x); },
        [](ld x) { return rref::atan(x); }, -std::numeric_limits<double>::max(),
        std::numeric_limits<double>::max()),
};

const function_case& find(const std::string& name) {
  for (const auto& c : cases)
    if (name == c.name) return c;
  return cases[0];
}

}  // namespace

TEST_CASE("math accuracy: exp", "[math][accuracy]") { run(find("exp")); }
TEST_CASE("math accuracy: expm1", "[math][accuracy]") { run(find("expm1")); }
TEST_CASE("math accuracy: log", "[math][accuracy]") { run(find("log")); }
TEST_CASE("math accuracy: log1p", "[math][accuracy]") { run(find("log1p")); }
TEST_CASE("math accuracy: tanh", "[math][accuracy]") { run(find("tanh")); }
TEST_CASE("math accuracy: sigmoid", "[math][accuracy]") { run(find("sigmoid")); }
TEST_CASE("math accuracy: erf", "[math][accuracy]") { run(find("erf")); }
TEST_CASE("math accuracy: erfc", "[math][accuracy]") { run(find("erfc")); }
TEST_CASE("math accuracy: sqrt", "[math][accuracy]") { run(find("sqrt")); }
TEST_CASE("math accuracy: rsqrt", "[math][accuracy]") { run(find("rsqrt")); }
TEST_CASE("math accuracy: sin", "[math][accuracy]") { run(find("sin")); }
TEST_CASE("math accuracy: cos", "[math][accuracy]") { run(find("cos")); }
TEST_CASE("math accuracy: atan", "[math][accuracy]") { run(find("atan")); }
