// Named .tosa files that break a rule, each with the words qfold-tosa's error must contain: every
// read_model rule (bad_file codes), ops qfold cannot read (graph problems), and parameters TOSA
// 1.0 requires to be constants that no CONST produces. Shared by the in-process test and the
// command-line tests (make_files writes them, with a manifest, for tosa_fb_cli_test.cmake).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tosa_fb_adapter/tosa_fb_test_support.hpp"

namespace tosa_fb_test {

struct bad_file_case {
  std::string name;  // the file's name, without .tosa
  bytes data;
  std::string expected;  // a substring of the error
};

inline std::vector<bad_file_case> bad_files() {
  std::vector<bad_file_case> r;
  const auto add = [&](std::string name, bytes b, std::string expected) {
    r.push_back({std::move(name), std::move(b), std::move(expected)});
  };
  const auto with = [&](std::string name, const auto& change, std::string expected,
                        file_builder base = rescale_pair()) {
    change(base);
    add(std::move(name), base.build(), std::move(expected));
  };
  const bytes good = rescale_pair().build();

  // --- read_model: the file as a whole ---------------------------------------------------------
  add("empty", {}, "(too_small): the file has 0 bytes");
  add("too_small", {0x10, 0, 0, 0}, "(too_small): the file has 4 bytes");
  with(
      "not_tosa", [](file_builder& f) { f.identifier = "TFL3"; },
      "(not_tosa): the file identifier is 'TFL3'");
  add("truncated", bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2)),
      "(verifier_failed)");
  {
    bytes b = good;
    b[0] = 0xf0;
    b[1] = 0xff;
    b[2] = 0xff;
    b[3] = 0x0f;
    add("root_offset_outside", b, "(verifier_failed)");
  }
  with(
      "version_0_80",
      [](file_builder& f) {
        f.major = 0;
        f.minor = 80;
      },
      "(unsupported_version): TOSA version 0.80.0");
  with(
      "version_2_0", [](file_builder& f) { f.major = 2; },
      "(unsupported_version): TOSA version 2.0.0");
  with(
      "no_region", [](file_builder& f) { f.regions = 0; }, "(no_region): the file has no region");
  with(
      "two_regions", [](file_builder& f) { f.regions = 2; },
      "(several_regions): the file has 2 regions");
  with(
      "two_blocks", [](file_builder& f) { f.blocks = 2; }, "(several_blocks)");
  with(
      "no_block", [](file_builder& f) { f.blocks = 0; }, "region 'main' has no block");
  // --- tensors -----------------------------------------------------------------------------------
  with(
      "unnamed_tensor", [](file_builder& f) { f.tensors[1].omit_name = true; },
      "(unnamed_tensor): tensor #1 has no name");
  with(
      "duplicate_tensor", [](file_builder& f) { f.tensor("wide", {1}, tosa::DType_INT8); },
      "(duplicate_tensor): two tensors are named 'wide'");
  with(
      "unknown_op_input", [](file_builder& f) { f.ops.back().inputs[0] = "nowhere"; },
      "(unknown_tensor): op #9 (RESCALE) input 0 names 'nowhere'");
  with(
      "unknown_op_output", [](file_builder& f) { f.ops.back().outputs[0] = "ghost"; },
      "output 0 names 'ghost'");
  with(
      "unknown_graph_input", [](file_builder& f) { f.inputs.push_back("absent"); },
      "graph input 1 names 'absent'");
  with(
      "unknown_graph_output", [](file_builder& f) { f.outputs[0] = "gone"; },
      "graph output 0 names 'gone'");
  with(
      "data_short", [](file_builder& f) { f.find("wide_multiplier").data->pop_back(); },
      "(data_size): tensor 'wide_multiplier': dims [1] of INT32 need 4 bytes, the data holds 3");
  with(
      "data_long", [](file_builder& f) { f.find("y_shift").data->push_back(1); },
      "tensor 'y_shift': dims [1] of INT8 need 1 bytes, the data holds 2");
  with(
      "negative_dim_constant", [](file_builder& f) { f.find("y_shift").shape = {-1}; },
      "(bad_shape): tensor 'y_shift' has data but dims [-1]");
  with(
      "overflowing_shape",
      [](file_builder& f) {
        f.find("wide_multiplier").shape = {2147483647, 2147483647, 2147483647};
      },
      "(bad_shape): tensor 'wide_multiplier'");
  with(
      "unknown_type_with_data",
      [](file_builder& f) { f.find("wide_shift").type = static_cast<tosa::DType>(99); },
      "'wide_shift' has data but type DType 99");
  with(
      "external_data",
      [](file_builder& f) {
        auto& t = f.find("wide_shift");
        t.data.reset();
        t.offset = 16;
        t.size = 1;
      },
      "(external_data): tensor 'wide_shift' keeps its data outside the flatbuffer");
  with(
      "constant_without_data", [](file_builder& f) { f.find("y_shift").data.reset(); },
      "constant 'y_shift' (dims [1] of INT8) has no data");
  with(
      "unranked_constant",
      [](file_builder& f) {
        f.find("y_shift").shape = {-1};
        f.find("y_shift").data.reset();
      },
      "(bad_shape): constant 'y_shift' has dims [-1]");
  // --- producers and readers ---------------------------------------------------------------------
  with(
      "produced_twice",
      [](file_builder& f) {
        f.ops.push_back({tosa::Op_CONST, {}, {"wide"}, {}, ""});
      },
      "(produced_twice): tensor 'wide' is the output of op #4 (RESCALE -> 'wide') and of op #10");
  with(
      "input_produced",
      [](file_builder& f) {
        f.ops.push_back({tosa::Op_CONST, {}, {"x"}, {}, ""});
      },
      "(input_produced): graph input 'x' is the output of op #10");
  with(
      "duplicate_input", [](file_builder& f) { f.inputs.push_back("x"); },
      "(duplicate_input): tensor 'x' is listed twice");
  with(
      "constant_with_inputs", [](file_builder& f) { f.ops[0].inputs = {"x"}; },
      "(constant_with_inputs): op #0 (CONST -> 'wide_multiplier') has 1 inputs");
  with(
      "rescale_missing_operand", [](file_builder& f) { f.ops.back().inputs.pop_back(); },
      "(operand_count): op #9 (RESCALE -> 'y') has 4 inputs and 1 outputs; TOSA 1.0 gives it 5");
  with(
      "rescale_two_outputs",
      [](file_builder& f) {
        f.tensor("extra", {1, 4}, tosa::DType_INT8);
        f.ops.back().outputs.push_back("extra");
      },
      "(operand_count): op #9 (RESCALE -> 'y') has 5 inputs and 2 outputs");
  with(
      "rescale_wrong_attribute",
      [](file_builder& f) {
        f.ops.back().attribute = [](flatbuffers::FlatBufferBuilder& b) {
          return std::pair{tosa::Attribute_MulAttribute, tosa::CreateMulAttribute(b).Union()};
        };
      },
      "(wrong_attribute): op #9 (RESCALE -> 'y') carries attribute MulAttribute");
  with(
      "conv_without_attribute",
      [](file_builder& f) {
        for (auto& o : f.ops)
          if (o.code == tosa::Op_CONV2D)
            o.attribute = [](flatbuffers::FlatBufferBuilder&) {
              return std::pair{tosa::Attribute_NONE, flatbuffers::Offset<void>()};
            };
      },
      "(wrong_attribute)", dyt_affine());
  {
    file_builder f;
    f.input("x", {4}, tosa::DType_INT32);
    f.tensor("a", {4}, tosa::DType_INT32);
    f.tensor("b", {4}, tosa::DType_INT32);
    f.ops.push_back({tosa::Op_ADD, {"x", "b"}, {"a"}, {}, ""});
    f.ops.push_back({tosa::Op_ADD, {"a", "x"}, {"b"}, {}, ""});
    f.output("b");
    add("cycle", f.build(), "(cycle): op #");
  }
  // --- ops qfold cannot read ---------------------------------------------------------------------
  with(
      "table_wrong_size",
      [](file_builder& f) {
        auto& t = f.find("table_table");
        t.shape = {255};
        t.data->pop_back();
      },
      "TABLE -> 'table'): TABLE: an INT8 input needs a table of 256 INT8 entries", dyt_alpha());
  with(
      "table_on_int32",
      [](file_builder& f) {
        f.input("i", {4}, tosa::DType_INT32);
        f.table("i", "t32", tanh_table(), "table_table");
        f.outputs.push_back("t32");
      },
      "TABLE on INT32: only INT8 and INT16 inputs", dyt_alpha());
  with(
      "rescale_shift_out_of_range",
      [](file_builder& f) { f.find("y_shift").data = encode(tosa::DType_INT8, {70}); },
      "RESCALE -> 'y'): RESCALE: ");
  with(
      "rescale_multiplier_int16_for_scale32",
      [](file_builder& f) {
        auto& t = f.find("y_multiplier");
        t.type = tosa::DType_INT16;
        t.data->resize(2);
      },
      "scale32 = true needs an INT32 multiplier, not INT16");
  with(
      "rescale_multiplier_float",
      [](file_builder& f) { f.find("y_multiplier").type = tosa::DType_FP32; },
      "the multiplier constant 'y_multiplier' is not an integer tensor (FP32)");
  with(
      "rescale_int48_output", [](file_builder& f) { f.find("y").type = tosa::DType_INT48; },
      "RESCALE from INT32 to INT48: unsupported element types");
  with(
      "rescale_zero_point_two_values",
      [](file_builder& f) {
        auto& t = f.find("y_output_zp");
        t.shape = {2};
        t.data->push_back(0);
      },
      "RESCALE: a zero point is not a single integer");
  with(
      "rescale_zero_point_wrong_type",
      [](file_builder& f) {
        auto& t = f.find("y_output_zp");
        t.type = tosa::DType_INT16;
        t.data->push_back(0);
      },
      "RESCALE: a zero point's type is not its side's");
  with(
      "rescale_unknown_rounding",
      [](file_builder& f) {
        f.ops.back().attribute = [](flatbuffers::FlatBufferBuilder& b) {
          return std::pair{
              tosa::Attribute_RescaleAttribute,
              tosa::CreateRescaleAttribute(b, true, tosa::RoundingMode_UNKNOWN).Union()};
        };
      },
      "RESCALE: rounding_mode 0");
  with(
      "rescale_int32_input_zero_point",
      [](file_builder& f) { f.find("y_input_zp").data = encode(tosa::DType_INT32, {4}); },
      "RESCALE -> 'y'): RESCALE: ");
  with(
      "mul_shift_64",
      [](file_builder& f) { f.find("mul_shift").data = encode(tosa::DType_INT8, {64}); },
      "MUL -> 'mul'): MUL: shift 64", dyt_alpha());
  with(
      "mul_int8_shift_1",
      [](file_builder& f) {
        f.input("a8", {4});
        f.mul("a8", "a8", "p8", 1);
        f.outputs.push_back("p8");
      },
      "MUL: shift 1 of INT8 (one INT8 value, 0..63, and 0 unless the inputs are INT32)",
      dyt_alpha());
  {
    file_builder f;
    f.input("x", {4});
    f.clamp("x", "c", 10, -10);
    f.output("c");
    add("clamp_min_above_max", f.build(), "CLAMP -> 'c'): CLAMP: min_val 10 above max_val -10");
  }
  {
    file_builder f;
    f.input("x", {4}, tosa::DType_INT16);
    f.clamp("x", "c", -1, 1);
    f.find("x").type = tosa::DType_INT8;
    f.find("c").type = tosa::DType_INT8;
    add("clamp_bounds_wrong_size", f.build(), "CLAMP: min_val and max_val are not 1 bytes each");
  }
  with(
      "conv_weight_zp_int16",
      [](file_builder& f) {
        auto& t = f.find("conv_weight_zp");
        t.type = tosa::DType_INT16;
        t.data = encode(tosa::DType_INT16, {1});
      },
      "CONV2D: the weight_zp 'conv_weight_zp' is not one INT8 value", dyt_affine());
  // --- parameters TOSA 1.0 requires to be constants (Vela crashes on them) -----------------------
  const auto runtime = [&](std::string name, tosa::Op code, std::size_t operand, tosa::DType type,
                           std::string what, file_builder base) {
    with(
        std::move(name),
        [&](file_builder& f) {
          f.input("runtime", {1}, type);
          for (auto& o : f.ops)
            if (o.code == code) {
              o.inputs[operand] = "runtime";
              break;
            }
        },
        "its " + what + " 'runtime' is not produced by a CONST", std::move(base));
  };
  runtime("runtime_multiplier", tosa::Op_RESCALE, 1, tosa::DType_INT32, "multiplier",
          rescale_pair());
  runtime("runtime_shift", tosa::Op_RESCALE, 2, tosa::DType_INT8, "shift", rescale_pair());
  runtime("runtime_input_zp", tosa::Op_RESCALE, 3, tosa::DType_INT8, "input_zp", rescale_pair());
  runtime("runtime_output_zp", tosa::Op_RESCALE, 4, tosa::DType_INT32, "output_zp", rescale_pair());
  runtime("runtime_mul_shift", tosa::Op_MUL, 2, tosa::DType_INT8, "shift", dyt_alpha());
  {
    file_builder f = dyt_alpha();
    f.input("runtime", {256}, tosa::DType_INT8);
    for (auto& o : f.ops)
      if (o.code == tosa::Op_TABLE) o.inputs[1] = "runtime";
    add("runtime_table", f.build(), "its table 'runtime' is not produced by a CONST");
  }
  runtime("runtime_conv_input_zp", tosa::Op_CONV2D, 3, tosa::DType_INT8, "input_zp", dyt_affine());
  runtime("runtime_conv_weight_zp", tosa::Op_CONV2D, 4, tosa::DType_INT8, "weight_zp",
          dyt_affine());
  {
    file_builder f;
    f.input("x", {1, 4});
    f.input("runtime", {2}, tosa::DType_SHAPE);
    f.op(tosa::Op_RESHAPE, {"x", "runtime"}, "r", {4, 1}, tosa::DType_INT8);
    f.output("r");
    add("runtime_reshape_shape", f.build(), "its shape 'runtime' is not produced by a CONST");
  }
  {
    file_builder f;
    f.input("a", {1, 2, 3});
    f.input("runtime", {1}, tosa::DType_INT8);
    f.constant("bm", {1, 3, 2}, tosa::DType_INT8, {1, 2, 3, 4, 5, 6});
    f.constant("azp", {1}, tosa::DType_INT8, {0});
    f.op(tosa::Op_MATMUL, {"a", "bm", "azp", "runtime"}, "mm", {1, 2, 2}, tosa::DType_INT32);
    f.output("mm");
    add("runtime_matmul_b_zp", f.build(), "its b_zp 'runtime' is not produced by a CONST");
  }
  return r;
}

}  // namespace tosa_fb_test
