// qfold-onnx IN.onnx OUT.onnx: folds BatchNormalization into the preceding Conv, ConvTranspose
// (grouped too), Gemm or MatMul + Add wherever the fold is exact, removes the initializers left
// without readers, checks the result with the ONNX checker, writes it, and prints the report.
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onnx_tool.hpp"

namespace {

constexpr std::string_view usage = R"(usage: qfold-onnx [--dry-run] [--json] IN.onnx [OUT.onnx]

Folds BatchNormalization into the Conv, ConvTranspose (grouped and depthwise too), Gemm or
MatMul + Add before it, bit for bit as torch.nn.utils.fusion computes it, wherever that is
exact; refuses every other site with a reason. Initializers left without readers are removed.

  --dry-run   fold in memory and print the report; write nothing (OUT is optional)
  --json      print the report as JSON
  --help      print this help

Exit codes: 0 done; 1 bad input (not a file, not ONNX, truncated, dims or data that disagree,
invalid convolution attributes, external data, unsupported opset or IR version, rejected by the
ONNX checker); 2 usage; 3 the output could not be written. OUT is written through a temporary
file next to it (next to its target if OUT is a symbolic link) and a rename: never left partial.
)";

}  // namespace

int main(int argc, char** argv) {
  bool dry_run = false, json = false;
  std::vector<std::string> paths;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && a == "--dry-run") {
      dry_run = true;
    } else if (!options_done && a == "--json") {
      json = true;
    } else if (!options_done && (a == "--help" || a == "-h")) {
      std::cout << usage;
      return qfold_onnx::exit_ok;
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      std::cerr << "qfold-onnx: unknown option '" << a << "'\n" << usage;
      return qfold_onnx::exit_usage;
    } else {
      paths.emplace_back(a);
    }
  }
  if (std::ranges::any_of(paths, [](const std::string& p) { return p.empty(); })) {
    std::cerr << "qfold-onnx: an empty path\n" << usage;
    return qfold_onnx::exit_usage;
  }
  if (paths.empty() || paths.size() > 2 || (!dry_run && paths.size() != 2)) {
    std::cerr << "qfold-onnx: " << (dry_run ? "expected IN.onnx" : "expected IN.onnx OUT.onnx")
              << "\n"
              << usage;
    return qfold_onnx::exit_usage;
  }
  // Anything thrown before writing starts is about the input (an allocation failure included:
  // a model can ask for more than there is); from then on, about the output.
  bool writing = false;
  try {
    qfold_onnx::run_info info;
    info.input = paths[0];
    // Declared first, destroyed last: the file it replaces is removed while the model and its
    // tensor store are freed (tool_support.hpp).
    std::optional<qfold_tool::atomic_output> out;
    const qfold_onnx::input_file in(info.input);
    info.input_bytes = in.bytes().size();
    // Large tensor data is never copied into fresh heap memory: it stays in the mapped input, or
    // goes to the aliases' spill (qfold_onnx/model_bytes.hpp, raw_aliases). `in` and `aliases`
    // outlive `model`.
    qfold_onnx::raw_aliases aliases;
    onnx::ModelProto model = qfold_onnx::parse_model(in.bytes(), info.input, &aliases, in.fd());
    const auto result = qfold_onnx::fold_model(model, &aliases);
    if (!dry_run) {
      writing = true;
      qfold_onnx::check_output(model);
      info.output = paths[1];
      out.emplace(info.output);
      info.output_bytes = qfold_onnx::write_model(model, *out, &aliases);
    }
    if (json) {
      qfold_onnx::print_json(std::cout, result, info);
    } else {
      qfold_onnx::print_text(std::cout, result, info);
    }
  } catch (const qfold_onnx::tool_error& e) {
    std::cerr << "qfold-onnx: error: " << e.what() << "\n";
    return e.code();
  } catch (const std::bad_alloc&) {
    std::cerr << "qfold-onnx: error: out of memory while "
              << (writing ? "writing the output" : "reading or folding the model") << "\n";
    return writing ? qfold_onnx::exit_write : qfold_onnx::exit_bad_input;
  } catch (const std::exception& e) {  // a bug, or an input qfold cannot handle: never a partial
                                       // output
    std::cerr << "qfold-onnx: error: " << (writing ? "while writing: " : "while folding: ")
              << e.what() << "\n";
    return writing ? qfold_onnx::exit_write : qfold_onnx::exit_bad_input;
  } catch (...) {
    std::cerr << "qfold-onnx: error: unknown exception\n";
    return writing ? qfold_onnx::exit_write : qfold_onnx::exit_bad_input;
  }
  return qfold_onnx::exit_ok;
}
