// The two forms of the table generators (checked:: returns a result, the contract form the
// table), element types deduced from typed qparams, the spelling from before the split, and
// fn::torch::by_name at run time. Every table here is compared with one built another way from
// the same inputs; the values themselves are checked against golden data in table_golden_test.
#include <cstdint>
#include <qfold/qfold.hpp>
#include <string>
#include <type_traits>

#include "catch_compat.hpp"

namespace {
using qfold::dtype;

template <class T>
T at_run_time(T v) {  // a value the optimiser cannot see through
  volatile T copy = v;
  return copy;
}

constexpr auto in8 = qfold::make_qparams<dtype::int8>(0.0234375, -3);
constexpr auto out8 = qfold::make_qparams<dtype::int8>(1.0 / 128, 0);
constexpr auto gelu_ct =
    qfold::make_table8(qfold::conventions::executorch, qfold::fn::torch::gelu, in8, out8);
}  // namespace

TEST_CASE("make_table8: contract, checked and spelled-out forms give one table", "[table]") {
  auto in = in8;
  in.scale = at_run_time(in8.scale);
  const auto& et = qfold::conventions::executorch;
  const auto checked = qfold::checked::make_table8(et, qfold::fn::torch::gelu, in, out8);
  REQUIRE(checked.has_value());
  CHECK(*checked == gelu_ct);
  CHECK(qfold::make_table8(et, qfold::fn::torch::gelu, in, out8) == gelu_ct);
  const auto spelled = qfold::make_table8<std::int8_t, std::int8_t>(et, qfold::fn::torch::gelu,
                                                                    qfold::qparams(in), out8);
  REQUIRE(spelled.has_value());
  CHECK(*spelled == gelu_ct);
  // uint8 input, int8 output: deduced as table8<uint8_t, int8_t>.
  const auto u8 = qfold::make_qparams<dtype::uint8>(at_run_time(0.05), 128);
  const auto mixed = qfold::checked::make_table8(et, qfold::fn::torch::tanh, u8, out8);
  static_assert(std::is_same_v<decltype(mixed),
                               const qfold::result<qfold::table8<std::uint8_t, std::int8_t>>>);
  const auto mixed_spelled = qfold::make_table8<std::uint8_t, std::int8_t>(
      et, qfold::fn::tanh, qfold::make_qparams(dtype::uint8, 0.05, 128), out8);
  REQUIRE(mixed.has_value());
  REQUIRE(mixed_spelled.has_value());
  CHECK(*mixed == *mixed_spelled);
}

TEST_CASE("checked::make_table8 on typed qparams: the same named errors", "[table]") {
  const auto& et = qfold::conventions::executorch;
  auto in = in8;
  in.scale = at_run_time(-1.0);
  CHECK(qfold::checked::make_table8(et, qfold::fn::tanh, in, out8).error().code ==
        qfold::errc::scale_negative);
  // The type field disagreeing with the template argument is still caught.
  auto lying = qfold::make_qparams<dtype::int8>(0.05, 0);  // valid as uint8 qparams too
  lying.qmin = 0;
  lying.type = at_run_time(dtype::uint8);
  CHECK(qfold::checked::make_table8(et, qfold::fn::tanh, lying, out8).error().code ==
        qfold::errc::illegal_type);
  // NaN under TFLite's convention: log of a negative input, entry 0.
  const auto neg = qfold::make_qparams<dtype::int8>(0.05, 100);
  const auto nan =
      qfold::checked::make_table8(qfold::conventions::tflite, qfold::fn::log, neg, out8);
  REQUIRE_FALSE(nan.has_value());
  CHECK(nan.error().code == qfold::errc::not_finite);
  CHECK(nan.error().index == 0);
}

TEST_CASE("int16 generators: contract and checked forms agree with the plain-qparams form",
          "[table]") {
  const auto in = qfold::make_qparams<dtype::int16>(at_run_time(1.0 / 4096), 0);
  const auto out = qfold::make_qparams<dtype::int16>(1.0 / 32768, 0);
  const auto plain = qfold::make_executorch_int16_table(qfold::fn::torch::sigmoid,
                                                        qfold::qparams(in), qfold::qparams(out));
  REQUIRE(plain.has_value());
  const auto contract = qfold::make_executorch_int16_table(qfold::fn::torch::sigmoid, in, out);
  CHECK(contract.table == plain->table);
  CHECK(contract.rshift == plain->rshift);
  CHECK(contract.rescale == plain->rescale);
  const auto tfl_plain =
      qfold::make_tflite_int16_table(qfold::fn::tanh, qfold::qparams(in), qfold::qparams(out));
  REQUIRE(tfl_plain.has_value());
  CHECK(qfold::make_tflite_int16_table(qfold::fn::tanh, in, out) == *tfl_plain);
  const auto tfl_checked = qfold::checked::make_tflite_int16_table(qfold::fn::tanh, in, out);
  REQUIRE(tfl_checked.has_value());
  CHECK(*tfl_checked == *tfl_plain);
  auto bad = in;
  bad.zero_point = at_run_time(40000);
  CHECK(qfold::checked::make_executorch_int16_table(qfold::fn::tanh, bad, out).error().code ==
        qfold::errc::zero_point_out_of_range);
}

TEST_CASE("fn::torch::by_name at run time: names, attributes, errors", "[table]") {
  using qfold::fn::torch::by_name;
  using qfold::fn::torch::op;
  const std::string name = "aten.leaky_relu.default";  // not a literal: a run-time string
  const auto f = by_name(name, {.negative_slope = at_run_time(0.2)});
  REQUIRE(f.has_value());
  CHECK(f->id == op::leaky_relu);
  CHECK(f->parameter == 0.2);
  CHECK((*f)(-1.0f) == qfold::fn::leaky_relu(0.2)(-1.0f));
  CHECK(by_name(std::string("aten::gelu"), {.approximate = std::string_view("tanh")})->id ==
        op::gelu_tanh);
  for (const char* unknown : {"aten.relu.default", "aten.tanh.out", "torch.tanh", "tanh",
                              "aten.Tanh.default", "aten.tanh.default.default"}) {
    INFO(unknown);
    const auto r = by_name(unknown);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == qfold::errc::illegal_attributes);
    CHECK(r.error().message.find("by_name") != std::string_view::npos);
  }
  CHECK_FALSE(by_name("aten.elu.default", {.alpha = at_run_time(1.0) / 0.0}).has_value());
}
