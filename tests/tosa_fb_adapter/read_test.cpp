// Reading .tosa files: a well-formed file, and each rule of read_model broken once, refused with
// its code and a message naming the tensor or op (never undefined behaviour: these run under
// ASan/UBSan in the sanitizer build).
#include <qfold_tosa_fb/graph.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <string>

#include "catch_compat.hpp"
#include "tosa_fb_adapter/tosa_fb_test_support.hpp"

namespace {

using qfold_tosa_fb::problem;
using tosa_fb_test::bytes;
using tosa_fb_test::file_builder;

using tosa_fb_test::rescale_pair;

// What read_model throws for `b`: the code, and the message must contain `needle`.
void refused(const bytes& b, problem code, const std::string& needle) {
  try {
    (void)qfold_tosa_fb::read_model(b);
    FAIL("read_model accepted a file that breaks " << qfold_tosa_fb::to_string(code));
  } catch (const qfold_tosa_fb::bad_file& e) {
    INFO(e.what());
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("a well-formed file reads: version, block, tensors in place, ops mapped") {
  const bytes b = rescale_pair().build();
  const auto m = qfold_tosa_fb::read_model(b);
  CHECK(m.version.major == 1);
  CHECK(m.version.minor == 0);
  CHECK_FALSE(m.version.draft);
  REQUIRE(m.tensors.size() == 11);  // x, 4 + 4 parameters, wide, y
  REQUIRE(m.ops.size() == 10);      // 8 CONSTs, 2 RESCALEs
  CHECK(m.inputs.size() == 1);
  CHECK(m.outputs.size() == 1);
  for (const auto& t : m.tensors)
    if (!t.data.empty()) {  // the data is a view of the file's own bytes
      CHECK(t.data.data() >= b.data());
      CHECK(t.data.data() + t.data.size() <= b.data() + b.size());
    }
  std::size_t rescales = 0, consts = 0;
  for (const auto& o : m.ops) {
    rescales += o.op == qfold::tosa::op::rescale;
    consts += o.op == qfold::tosa::op::const_;
  }
  CHECK(rescales == 2);
  CHECK(consts == 8);
}

TEST_CASE("bytes that are not a TOSA flatbuffer are refused before anything is read") {
  refused({}, problem::too_small, "0 bytes");
  refused({1, 2, 3, 4, 5, 6, 7}, problem::too_small, "7 bytes");
  bytes b = rescale_pair().build();
  bytes other = b;
  other[4] = 'X';
  refused(other, problem::not_tosa, "'XOSA'");
  file_builder f = rescale_pair();
  f.identifier = "TFL3";
  refused(f.build(), problem::not_tosa, "'TFL3'");
  // Truncated: the root offset points past the end, or tables are cut.
  for (const std::size_t keep : {std::size_t{8}, std::size_t{12}, std::size_t{40}, std::size_t{100}}) {
    INFO("kept " << keep << " bytes");
    refused(bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(keep)),
            problem::verifier_failed, "verifier");
  }
  // A root offset beyond the buffer.
  bytes wild = b;
  wild[0] = 0xff;
  wild[1] = 0xff;
  wild[2] = 0xff;
  wild[3] = 0x7f;
  refused(wild, problem::verifier_failed, "verifier");
}

TEST_CASE("versions: major 1 only; a 1.1 file reads and keeps its version") {
  for (const auto& [major, minor] : {std::pair{0, 80}, std::pair{2, 0}, std::pair{-1, -1}}) {
    file_builder f = rescale_pair();
    f.major = major;
    f.minor = minor;
    refused(f.build(), problem::unsupported_version,
            "TOSA version " + std::to_string(major) + "." + std::to_string(minor));
  }
  file_builder f = rescale_pair();
  f.minor = 1;
  f.draft = true;
  const bytes b = f.build();
  const auto m = qfold_tosa_fb::read_model(b);
  CHECK(m.version.minor == 1);
  CHECK(m.version.draft);
}

TEST_CASE("one region with one block, or the file is refused saying so") {
  file_builder f = rescale_pair();
  f.regions = 2;
  refused(f.build(), problem::several_regions, "2 regions");
  f.regions = 0;
  refused(f.build(), problem::no_region, "no region");
  f.regions = 1;
  f.blocks = 3;
  refused(f.build(), problem::several_blocks, "3 blocks");
  f.blocks = 0;
  refused(f.build(), problem::no_region, "has no block");
}

TEST_CASE("tensor names: present, unique, and every name an op or the block uses exists") {
  {
    file_builder f = rescale_pair();
    f.tensors[0].omit_name = true;
    refused(f.build(), problem::unnamed_tensor, "tensor #0 has no name");
  }
  {
    file_builder f = rescale_pair();
    f.tensor("wide", {1, 4}, tosa::DType_INT32);
    refused(f.build(), problem::duplicate_tensor, "two tensors are named 'wide'");
  }
  {
    file_builder f = rescale_pair();
    f.ops.back().inputs[0] = "nowhere";
    refused(f.build(), problem::unknown_tensor, "input 0 names 'nowhere'");
  }
  {
    file_builder f = rescale_pair();
    f.ops.back().outputs[0] = "ghost";
    refused(f.build(), problem::unknown_tensor, "output 0 names 'ghost'");
  }
  {
    file_builder f = rescale_pair();
    f.inputs.push_back("absent");
    refused(f.build(), problem::unknown_tensor, "graph input 1 names 'absent'");
  }
  {
    file_builder f = rescale_pair();
    f.outputs[0] = "gone";
    refused(f.build(), problem::unknown_tensor, "graph output 0 names 'gone'");
  }
}

TEST_CASE("every tensor's data is checked against its shape and type") {
  {
    file_builder f = rescale_pair();
    f.find("wide_multiplier").data->pop_back();  // 3 bytes for one INT32
    refused(f.build(), problem::data_size, "tensor 'wide_multiplier': dims [1] of INT32 need 4 bytes, the data holds 3");
  }
  {
    file_builder f = rescale_pair();
    f.find("y_shift").shape = {2};  // one INT8 for two elements
    refused(f.build(), problem::data_size, "'y_shift': dims [2] of INT8 need 2 bytes");
  }
  {
    file_builder f = rescale_pair();
    f.find("y_shift").shape = {-1};
    refused(f.build(), problem::bad_shape, "'y_shift' has data but dims [-1]");
  }
  {
    // 2^31-1 x 2^31-1 x 2^31-1 elements of INT32: the byte count overflows 64 bits.
    file_builder f = rescale_pair();
    f.find("wide_multiplier").shape = {2147483647, 2147483647, 2147483647};
    refused(f.build(), problem::bad_shape, "'wide_multiplier'");
  }
  {
    file_builder f = rescale_pair();
    f.find("wide_multiplier").type = tosa::DType_UNKNOWN;
    refused(f.build(), problem::data_size, "type UNKNOWN");
  }
  {
    file_builder f = rescale_pair();
    auto& t = f.find("wide_shift");
    t.data.reset();
    t.offset = 64;
    t.size = 1;
    refused(f.build(), problem::external_data, "'wide_shift' keeps its data outside");
  }
  {
    file_builder f = rescale_pair();
    f.find("wide_shift").data.reset();
    refused(f.build(), problem::data_size, "constant 'wide_shift' (dims [1] of INT8) has no data");
  }
  {
    // INT4 packs two elements a byte: 3 elements take 2 bytes.
    file_builder f = rescale_pair();
    f.constant("nibbles", {3}, tosa::DType_INT4, {1, -2, 7});
    CHECK(f.find("nibbles").data->size() == 2);
    const bytes b = f.build();
    CHECK_NOTHROW(qfold_tosa_fb::read_model(b));
    f.find("nibbles").data->push_back(0);
    refused(f.build(), problem::data_size, "'nibbles': dims [3] of INT4 need 2 bytes");
  }
  {
    // A constant without a known shape.
    file_builder f = rescale_pair();
    f.constant("empty", {0, 4}, tosa::DType_INT8, {});
    const bytes b = f.build();
    CHECK_NOTHROW(qfold_tosa_fb::read_model(b));  // zero elements, no data: fine
    f.find("empty").shape = {-1, 4};
    refused(f.build(), problem::bad_shape, "constant 'empty' has dims [-1, 4]");
  }
}

TEST_CASE("producers: each tensor produced once, graph inputs by no op, constants by no input") {
  {
    file_builder f = rescale_pair();
    f.ops.push_back({tosa::Op_CONST, {}, {"wide"}, {}, ""});
    refused(f.build(), problem::produced_twice, "tensor 'wide' is the output of op #");
  }
  {
    file_builder f = rescale_pair();
    f.ops.push_back({tosa::Op_CONST, {}, {"x"}, {}, ""});
    refused(f.build(), problem::input_produced, "graph input 'x' is the output of op #");
  }
  {
    file_builder f = rescale_pair();
    f.inputs.push_back("x");
    refused(f.build(), problem::duplicate_input, "'x' is listed twice");
  }
  {
    file_builder f = rescale_pair();
    f.ops[0].inputs = {"x"};  // the first CONST reads x
    refused(f.build(), problem::constant_with_inputs, "has 1 inputs: a constant has none");
  }
}

TEST_CASE("ops qfold maps must have TOSA 1.0's operand count and attribute table") {
  {
    file_builder f = rescale_pair();
    f.ops.back().inputs.pop_back();  // RESCALE without its output_zp
    refused(f.build(), problem::operand_count, "has 4 inputs and 1 outputs; TOSA 1.0 gives it 5");
  }
  {
    file_builder f = rescale_pair();
    f.ops.back().attribute = [](flatbuffers::FlatBufferBuilder& b) {
      return std::pair{tosa::Attribute_MulAttribute, tosa::CreateMulAttribute(b).Union()};
    };
    refused(f.build(), problem::wrong_attribute, "carries attribute MulAttribute, not RescaleAttribute");
  }
  {
    file_builder f = rescale_pair();
    f.ops.back().attribute = [](flatbuffers::FlatBufferBuilder&) {
      return std::pair{tosa::Attribute_NONE, flatbuffers::Offset<void>()};
    };
    refused(f.build(), problem::wrong_attribute, "(none), not RescaleAttribute");
  }
}

TEST_CASE("a cycle of ops is refused naming an op on it") {
  file_builder f;
  f.input("x", {1, 4}, tosa::DType_INT32);
  f.tensor("a", {1, 4}, tosa::DType_INT32);
  f.tensor("b", {1, 4}, tosa::DType_INT32);
  f.ops.push_back({tosa::Op_ADD, {"x", "b"}, {"a"}, {}, ""});
  f.ops.push_back({tosa::Op_ADD, {"a", "a"}, {"b"}, {}, ""});
  f.tensor("c", {1, 4}, tosa::DType_INT32);
  f.ops.push_back({tosa::Op_ADD, {"b", "x"}, {"c"}, {}, ""});  // after the cycle, not on it
  f.output("c");
  try {
    (void)qfold_tosa_fb::read_model(f.build());
    FAIL("a cycle was read");
  } catch (const qfold_tosa_fb::bad_file& e) {
    CHECK(e.code() == problem::cycle);
    const std::string what = e.what();
    INFO(what);
    CHECK((what.find("op #0") != std::string::npos || what.find("op #1") != std::string::npos));
    CHECK(what.find("op #2") == std::string::npos);
  }
}

TEST_CASE("ops the schema or qfold does not know are kept as `other`") {
  file_builder f = rescale_pair();
  f.tensor("z", {1, 4}, tosa::DType_INT8);
  f.ops.push_back({static_cast<tosa::Op>(200), {"y"}, {"z"}, {}, "future"});  // a later version's
  f.tensor("n", {1, 4}, tosa::DType_INT8);
  f.ops.push_back({tosa::Op_NEGATE, {"z"}, {"n"}, {}, ""});
  f.outputs = {"n"};
  const bytes b = f.build();
  const auto m = qfold_tosa_fb::read_model(b);
  CHECK(m.ops[m.ops.size() - 2].op == qfold::tosa::op::other);
  CHECK(m.op_label(static_cast<std::uint32_t>(m.ops.size() - 2)) == "op #10 (Op 200 -> 'z')");
  const qfold_tosa_fb::graph g(m);
  CHECK(g.kind(static_cast<std::uint32_t>(m.tensors.size() - 2)) == qfold::op_kind::other);
  CHECK(g.problems().empty());
}
