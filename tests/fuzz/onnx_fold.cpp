// libFuzzer target: the bytes as an ONNX model through everything qfold-onnx runs, twice:
//  1. the tool's path: parse_model (header checks, tensor / external data / Conv validation, the
//     ONNX checker), fold_model (adapter + batch-norm pass + commit), the output check, and
//     serialization;
//  2. an embedding compiler's path: the bytes parsed as a ModelProto with nothing checked, then
//     fold_model and serialization; the adapter alone must keep this safe.
//  3. the tool's fast path: the same as 1, with large raw_data aliased in the input (a skeleton
//     parsed, the bytes read in place or in the spill) and the output spliced back together.
// Findings: any crash or sanitizer report; an exception from fold_model (the adapter refuses bad
// sites in analysis, so a throw in the apply phase means a half-applied rewrite); in path 1, a
// folded model that fails the ONNX checker although its input passed (a wrong rewrite); path 3
// accepting what path 1 refuses or the other way round, or writing other bytes.
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

// The folded model's bytes ("" when it does not serialize).
std::string fold_and_serialize(onnx::ModelProto& model, bool checked,
                               qfold_onnx::raw_aliases* aliases = nullptr) {
  try {
    (void)qfold_onnx::fold_model(model, aliases);
  } catch (const std::bad_alloc&) {
    return {};  // the model asked for more memory than there is: an input error, not a bug
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
  if (aliases != nullptr) {  // the bytes qfold-onnx's writer puts in the file, in order
    qfold_onnx::spliced_model spliced;
    qfold_onnx::splice_model(model, aliases, spliced);
    if (!qfold_onnx::for_each_bytes(spliced, [&](std::string_view v) { out.append(v); }))
      finding("a tensor folded as it is written fails to fold", "");
  } else if (model.ByteSizeLong() <= static_cast<std::size_t>(INT_MAX)) {
    (void)model.SerializeToString(&out);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string plain, fast;
  bool plain_ok = false, fast_ok = false;
  try {
    onnx::ModelProto model = qfold_onnx::parse_model(bytes, "fuzz.onnx");
    plain_ok = true;
    plain = fold_and_serialize(model, true);
  } catch (const qfold_onnx::tool_error&) {  // bad input, refused with exit code 1
  } catch (const std::bad_alloc&) {
    return 0;
  }
  try {
    qfold_onnx::raw_aliases aliases;
    onnx::ModelProto model = qfold_onnx::parse_model(bytes, "fuzz.onnx", &aliases);
    fast_ok = true;
    fast = fold_and_serialize(model, true, &aliases);
  } catch (const qfold_onnx::tool_error&) {
  } catch (const std::bad_alloc&) {
    return 0;
  }
  if (plain_ok != fast_ok) finding("the aliased parse and the plain one disagree", "accepted");
  if (plain_ok && plain != fast) finding("the spliced output differs from the plain one", "bytes");
  onnx::ModelProto raw;
  try {
    if (!qfold_onnx::parse_bytes(bytes, raw)) return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  fold_and_serialize(raw, false);
  return 0;
}
