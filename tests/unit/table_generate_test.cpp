// Generators: compile-time tables equal run-time ones; every bad input is an error; the
// conventions differ exactly where docs/conventions.md says they do.
#include <cstdint>
#include <limits>
#include <qfold/qfold.hpp>

#include "catch_compat.hpp"

namespace {
using qfold::dtype;
using qfold::make_qparams;
constexpr auto tanh_ct = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::executorch, qfold::fn::tanh, make_qparams(dtype::int8, 1.0 / 16, 0),
    make_qparams(dtype::int8, 1.0 / 128, 0));
constexpr auto sigmoid_ct = qfold::make_table8<std::int8_t, std::int8_t>(
    qfold::conventions::tflite, qfold::fn::tflite::sigmoid, make_qparams(dtype::int8, 0.0234375, 5),
    make_qparams(dtype::int8, 1.0 / 256, -128));

template <class T>
T at_run_time(T v) {  // a value the optimiser cannot see through
  volatile T copy = v;
  return copy;
}
}  // namespace

TEST_CASE("compile-time tanh and sigmoid tables equal the run-time ones", "[table][constexpr]") {
  const auto tanh_rt = qfold::make_table8<std::int8_t, std::int8_t>(
      qfold::conventions::executorch, qfold::fn::tanh,
      make_qparams(dtype::int8, at_run_time(1.0 / 16), 0), make_qparams(dtype::int8, 1.0 / 128, 0));
  const auto sigmoid_rt = qfold::make_table8<std::int8_t, std::int8_t>(
      qfold::conventions::tflite, qfold::fn::tflite::sigmoid,
      make_qparams(dtype::int8, at_run_time(0.0234375), 5),
      make_qparams(dtype::int8, 1.0 / 256, -128));
  REQUIRE(tanh_rt.has_value());
  REQUIRE(sigmoid_rt.has_value());
  CHECK(*tanh_rt == *tanh_ct);
  CHECK(*sigmoid_rt == *sigmoid_ct);
}

TEST_CASE("generators refuse bad qparams, mismatched types and NaN", "[table]") {
  const auto in = make_qparams(dtype::int8, 0.05, 0), out = make_qparams(dtype::int8, 1.0 / 128, 0);
  const auto& et = qfold::conventions::executorch;
  const auto code = [](const auto& r) { return r.error().code; };
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    auto q = in;
    q.scale = bad;
    CHECK_FALSE(
        qfold::make_table8<std::int8_t, std::int8_t>(et, qfold::fn::tanh, q, out).has_value());
    CHECK_FALSE(
        qfold::make_table8<std::int8_t, std::int8_t>(et, qfold::fn::tanh, in, q).has_value());
  }
  CHECK(code(qfold::make_table8<std::int8_t, std::int8_t>(et, qfold::fn::tanh, in,
                                                          qfold::qparams{.zero_point = 200})) ==
        qfold::errc::zero_point_out_of_range);
  CHECK(code(qfold::make_table8<std::uint8_t, std::int8_t>(et, qfold::fn::tanh, in, out)) ==
        qfold::errc::illegal_type);
  // log of a negative input is NaN: an error under TFLite's and Vela's conventions (their result
  // is undefined), code 0 under ExecuTorch's (what torch's .to(int8) gives on x86).
  const auto neg = make_qparams(dtype::int8, 0.05, 100);  // code -128 is -11.4
  const auto tfl = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::tflite,
                                                                qfold::fn::log, neg, out);
  CHECK(code(tfl) == qfold::errc::not_finite);
  CHECK(tfl.error().index == 0);
  const auto etl = qfold::make_table8<std::int8_t, std::int8_t>(et, qfold::fn::log, neg, out);
  REQUIRE(etl.has_value());
  CHECK((*etl)(-128) == 0);
  CHECK((*etl)(100) == -128);  // log(0) = -inf -> qmin
  // int16 generators: input must be int16; ExecuTorch refuses an all-zero table (log2(0)).
  const auto i16 = make_qparams(dtype::int16, 1.0 / 4096, 0),
             o16 = make_qparams(dtype::int16, 1.0 / 32768, 0);
  CHECK(code(qfold::make_executorch_int16_table(qfold::fn::tanh, in, o16)) ==
        qfold::errc::illegal_type);
  CHECK(code(qfold::make_tflite_int16_table(qfold::fn::tanh, in, o16)) ==
        qfold::errc::illegal_type);
  const auto zero = [](float) { return 0.0f; };
  CHECK(code(qfold::make_executorch_int16_table(zero, i16, o16)) ==
        qfold::errc::value_out_of_range);
  // A function jumping from -1 to +1 needs a slope of 65535 between two knots: not a valid TOSA
  // table.
  const auto step = [](float x) { return x < 0.0f ? -1.0f : 1.0f; };
  const auto s = qfold::make_executorch_int16_table(step, i16, o16);
  CHECK(code(s) == qfold::errc::value_out_of_range);
}

TEST_CASE("ExecuTorch int16: the rescale that follows the table is 2^(rshift - 7)", "[table]") {
  const auto t =
      qfold::make_executorch_int16_table(qfold::fn::tanh, make_qparams(dtype::int16, 1.0 / 4096, 0),
                                         make_qparams(dtype::int16, 1.0 / 32768, 0));
  REQUIRE(t.has_value());
  CHECK(t->rshift == 0);
  CHECK(t->rescale == qfold::scale_factor{1 << 30, 37});  // 2^-7 = 0.5 * 2^-6 -> (2^30, 31 + 6)
  // Table then rescale is a rounded lookup: the same as TFLite's LUTLookup on the same table.
  for (std::int32_t x = -32768; x <= 32767; x += 97) {
    const auto x16 = static_cast<std::int16_t>(x);
    const auto raw = qfold::tosa_lookup(t->table, x16);
    const auto rescaled = qfold::rescale_value(
        {.input_type = qfold::int_type::i32, .output_type = qfold::int_type::i16}, t->rescale, raw);
    REQUIRE(rescaled == qfold::tflite_lookup(t->table, x16));
  }
}

TEST_CASE("docs/conventions.md tie example: exp(0) at output scale 2", "[table][docs]") {
  for (std::int32_t zp : {3, -3}) {
    const auto out = make_qparams(dtype::int8, 2.0, zp);
    CAPTURE(zp);
    CHECK(*qfold::quantize(qfold::conventions::executorch, out, 1.0f) ==
          zp);  // half even: 0.5 -> 0
    CHECK(*qfold::quantize(qfold::conventions::tflite, out, 1.0f) ==
          zp + 1);  // half away: 0.5 -> 1
    CHECK(*qfold::quantize(qfold::conventions::vela, out, 1.0) ==
          (zp >= 0 ? zp + 1 : zp));  // zp + 0.5 away
    CHECK(*qfold::quantize(qfold::conventions::vela_8bit_op, out, 1.0) ==
          zp + 1);  // zp after rounding
  }
}

TEST_CASE("7.12 int8 table order, and ExecuTorch's clamped input codes", "[table][edge]") {
  // qmin -127: code -128 is outside the range and takes the entry of code -127.
  const auto in = qfold::qparams{.scale = 0.05, .zero_point = 0, .qmin = -127, .qmax = 127};
  const auto out = make_qparams(dtype::int8, 1.0 / 128, 0);
  const auto et = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::executorch,
                                                               qfold::fn::tanh, in, out);
  REQUIRE(et.has_value());
  CHECK((*et)(-128) == (*et)(-127));
  // TFLite evaluates every code: code -128 is tanh(-6.4), code -127 tanh(-6.35); both -> -128.
  const auto tfl = qfold::make_table8<std::int8_t, std::int8_t>(qfold::conventions::tflite,
                                                                qfold::fn::tanh, in, out);
  CHECK(qfold::to_tflite_order(*tfl)[128] == (*tfl)(-128));
}

TEST_CASE("7.13 ExecuTorch int16 build: masked knots, virtual end point, right shift, wrap",
          "[table][edge]") {
  const double s = 1.0 / 4096;  // a power of two: every product below is exact
  const auto in = make_qparams(dtype::int16, s, 0);
  // f(x) = 0.75 x into int32 at scale s / 4: knot = 3 * code, max |knot| = 3 * 32768 < 2^17, so
  // rshift = ceil(log2(98304)) + 1 - 16 = 2 and the table holds floor(3 code / 4); the RESCALE
  // that follows is 2^(2 - 7) = 2^-5: multiplier 2^30, shift 35.
  const auto linear = [](float x) { return 0.75f * x; };
  const auto t =
      qfold::make_executorch_int16_table(linear, in, make_qparams(dtype::int32, s / 4, 0));
  REQUIRE(t.has_value());
  CHECK(t->rshift == 2);
  CHECK(t->rescale == qfold::scale_factor{1 << 30, 35});
  for (int i = 0; i <= 512; ++i)
    CHECK(t->table.values[static_cast<std::size_t>(i)] == 3 * (-32768 + 128 * i) / 4);
  // Identity at scale s / 4: knot 512 (the virtual code 32768) is 4 * 32768 >> 2 = 32768, which
  // .to(int16) wraps to -32768: a slope ExecuTorch would emit and TOSA forbids. qfold refuses.
  const auto identity = [](float x) { return x; };
  const auto w =
      qfold::make_executorch_int16_table(identity, in, make_qparams(dtype::int32, s / 4, 0));
  CHECK(w.error().code == qfold::errc::value_out_of_range);
  CHECK(w.error().index == 511);
  // qmin -32767 (the symmetric a16 range): knot 0 is evaluated at code -32767 & ~0x7F = -32768.
  const auto sym = qfold::make_executorch_int16_table(
      identity,
      qfold::qparams{
          .scale = s, .zero_point = 0, .qmin = -32767, .qmax = 32767, .type = dtype::int16},
      make_qparams(dtype::int16, s, 0));
  REQUIRE(sym.has_value());
  CHECK(sym->table.values[0] == -32768);
  CHECK(sym->table.values[1] == -32768 + 128);
}

TEST_CASE("7.14 float details of quantize: float32 products, the convention's tie rule",
          "[table][edge]") {
  // Output scale 0.1 (a double that is not a float): the reciprocal is 10.0f whether it is taken
  // in double then rounded (ExecuTorch) or in float (TFLite). y = 0.05f = 0.050000000745 gives
  // 0.05f * 10 = 0.50000000745, which rounds to the float 0.5: a tie, even -> 0, away -> 1.
  const auto out = make_qparams(dtype::int8, 0.1, 0);
  CHECK(*qfold::quantize(qfold::conventions::executorch, out, 0.05f) == 0);
  CHECK(*qfold::quantize(qfold::conventions::tflite, out, 0.05f) == 1);
  // 0.15f * 10 = 1.50000006 is no tie: 2 under both.
  CHECK(*qfold::quantize(qfold::conventions::executorch, out, 0.15f) == 2);
  CHECK(*qfold::quantize(qfold::conventions::tflite, out, 0.15f) == 2);
  // In double (Vela) 0.05 / 0.1 is 0.5 exactly: trunc(0.5 + 0.5) = 1.
  CHECK(*qfold::quantize(qfold::conventions::vela_8bit_op, out, 0.05) == 1);
  // +0 and -0 give the same code; +-inf clamp to the range ends.
  CHECK(*qfold::quantize(qfold::conventions::executorch, out, -0.0f) == 0);
  CHECK(*qfold::quantize(qfold::conventions::tflite, out,
                         -std::numeric_limits<float>::infinity()) == -128);
  CHECK(*qfold::quantize(qfold::conventions::tflite, out, std::numeric_limits<float>::infinity()) ==
        127);
}
