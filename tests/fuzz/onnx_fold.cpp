// libFuzzer target: the bytes as an ONNX model through everything qfold-onnx runs, twice:
//  1. the tool's path: parse_model (header checks, tensor / external data / Conv validation, the
//     ONNX checker), fold_model (adapter + batch-norm pass + commit), the output check, and
//     serialization;
//  2. an embedding compiler's path: the bytes parsed as a ModelProto with nothing checked, then
//     fold_model and serialization; the adapter alone must keep this safe.
// Findings: any crash or sanitizer report; an exception from fold_model (the adapter refuses bad
// sites in analysis, so a throw in the apply phase means a half-applied rewrite); in path 1, a
// folded model that fails the ONNX checker although its input passed (a wrong rewrite).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

#include "onnx_tool.hpp"

namespace {

[[noreturn]] void finding(const char* what, const char* detail) {
  std::fprintf(stderr, "onnx_fold finding: %s: %s\n", what, detail);
  std::abort();
}

void fold_and_serialize(onnx::ModelProto& model, bool checked) {
  try {
    (void)qfold_onnx::fold_model(model);
  } catch (const std::bad_alloc&) {
    return;  // the model asked for more memory than there is: an input error, not a bug
  } catch (const std::exception& e) {
    finding(checked ? "fold_model threw (checked model)" : "fold_model threw (unchecked model)",
            e.what());
  }
  if (checked) {
    try {
      qfold_onnx::check_output(model);
    } catch (const qfold_onnx::tool_error& e) {
      finding("the folded model fails the checker", e.what());
    }
  }
  std::string out;
  if (model.ByteSizeLong() <= static_cast<std::size_t>(INT_MAX))
    (void)model.SerializeToString(&out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    onnx::ModelProto model = qfold_onnx::parse_model(bytes, "fuzz.onnx");
    fold_and_serialize(model, true);
  } catch (const qfold_onnx::tool_error&) {  // bad input, refused with exit code 1
  } catch (const std::bad_alloc&) {
  }
  onnx::ModelProto raw;
  try {
    if (!qfold_onnx::parse_bytes(bytes, raw)) return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  fold_and_serialize(raw, false);
  return 0;
}
