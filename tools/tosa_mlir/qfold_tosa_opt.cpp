// qfold-tosa-opt IN.mlir [-o OUT.mlir] [--dry-run] [--json] [--pass NAME]...: folds every
// func.func of a TOSA 1.0 module (MLIR 22's TOSA dialect) with qfold's exact passes and reports
// every site. With --pass-pipeline=..., a --qfold-<pass> flag, any registered MLIR pass flag or an
// --mlir-* option it is MLIR's opt driver (mlir::MlirOptMain) with qfold's passes registered.
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/AsmState.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Support/FileUtilities.h>
#include <mlir/Tools/mlir-opt/MlirOptMain.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <qfold_tosa_mlir/parser_guards.hpp>
#include <qfold_tosa_mlir/passes.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../common/tool_support.hpp"

namespace {

using qfold_tool::exit_bad_input;
using qfold_tool::exit_ok;
using qfold_tool::exit_usage;
using qfold_tool::exit_write;
using qfold_tool::tool_error;

std::string usage() {
  std::string passes;
  for (const auto& n : qfold_tosa::pass_names())
    passes += "  " + n + " (MLIR: --" + qfold_tosa::mlir_pass_argument(n) + ")\n";
  return R"(usage: qfold-tosa-opt IN.mlir [-o OUT.mlir] [--dry-run] [--json] [--pass NAME]...
       qfold-tosa-opt --pass-pipeline=PIPELINE | --qfold-PASS | --UPSTREAM-PASS ... [mlir-opt options]

Folds every func.func of a TOSA 1.0 module (MLIR 22's TOSA dialect) with qfold's
exact passes: a site is folded only where the result is bit for bit the same on every input,
otherwise refused with a reason. The module is verified before and after.

  IN            the module; - reads standard input
  -o OUT        write the folded module to OUT (default, and -o -: standard output), through a
                temporary file next to OUT (next to its target if OUT is a symbolic link) and a
                rename
  --dry-run     fold in memory and report; write nothing
  --json        the report as JSON on standard output (then the module needs -o, or --dry-run)
  --pass NAME   run only this pass (repeatable; default: all, in this order):
)" + passes +
         R"(  --help        this help; --help-mlir-opt: the options of the opt driver

The report (one line per site) goes to standard error. Exit codes: 0 done; 1 bad input (not
readable, not parsable, rejected by the verifier, an op qfold cannot read: unsupported element
types, a table of the wrong size, invalid RESCALE parameters); 2 usage; 3 the output could not be
written (nothing is left at OUT).

With --pass-pipeline=..., a --qfold-PASS flag, any other registered MLIR pass flag or an --mlir-*
option, qfold-tosa-opt is MLIR's opt driver (mlir-opt's options and exit codes) with qfold's
passes registered, e.g.
  qfold-tosa-opt in.mlir --pass-pipeline='builtin.module(func.func(qfold-fold-dyt-alpha,tosa-to-linalg))'
  qfold-tosa-opt in.mlir --pass-pipeline='builtin.module(qfold-fold,canonicalize)'
)";
}

// An argument that makes this MLIR's opt driver.
bool is_opt_argument(std::string_view a) {
  if (a.rfind("--pass-pipeline", 0) == 0 || a.rfind("--qfold-", 0) == 0 ||
      a.rfind("--mlir-", 0) == 0 || a == "--help-mlir-opt")
    return true;
  if (a.size() < 3 || a[0] != '-') return false;
  std::string_view name = a.substr(a[1] == '-' ? 2 : 1);
  name = name.substr(0, name.find('='));
  if (name.empty()) return false;
  // A registered pass or pipeline.
  const llvm::StringRef n(name.data(), name.size());
  return mlir::PassInfo::lookup(n) != nullptr || mlir::PassPipelineInfo::lookup(n) != nullptr;
}

struct options {
  std::string input, output;
  bool dry_run = false, json = false, has_output = false;
  std::vector<std::string> passes;
};

// Parses the tool's own arguments; nullopt after printing help.
std::optional<options> parse_arguments(int argc, char** argv) {
  options o;
  bool options_done = false, has_input = false;
  const auto names = qfold_tosa::pass_names();
  const auto value = [&](int& i, std::string_view a, std::string_view flag) -> std::string {
    if (a.size() > flag.size() && a[flag.size()] == '=')
      return std::string(a.substr(flag.size() + 1));
    if (i + 1 >= argc) throw tool_error(exit_usage, std::string(flag) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto is = [&](std::string_view flag) {
      return a == flag ||
             (a.rfind(flag, 0) == 0 && a.size() > flag.size() && a[flag.size()] == '=');
    };
    if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && (a == "--help" || a == "-h")) {
      std::cout << usage();
      return std::nullopt;
    } else if (!options_done && a == "--dry-run") {
      o.dry_run = true;
    } else if (!options_done && a == "--json") {
      o.json = true;
    } else if (!options_done && is("-o")) {
      if (o.has_output) throw tool_error(exit_usage, "-o given twice");
      o.output = value(i, a, "-o");
      o.has_output = true;
      if (o.output.empty()) throw tool_error(exit_usage, "an empty output path");
    } else if (!options_done && is("--pass")) {
      std::string name = value(i, a, "--pass");
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        throw tool_error(exit_usage, "unknown pass '" + name + "' (available: " + list + ")");
      }
      if (std::find(o.passes.begin(), o.passes.end(), name) == o.passes.end())
        o.passes.push_back(std::move(name));
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      throw tool_error(exit_usage, "unknown option '" + std::string(a) + "'");
    } else {
      if (has_input) throw tool_error(exit_usage, "more than one input");
      if (a.empty()) throw tool_error(exit_usage, "an empty input path");
      o.input = a;
      has_input = true;
    }
  }
  if (!has_input) throw tool_error(exit_usage, "expected IN.mlir (or - for standard input)");
  if (o.has_output && o.output == "-") o.has_output = false;  // -o -: standard output
  if (o.json && !o.has_output && !o.dry_run)
    throw tool_error(exit_usage,
                     "--json prints the report on standard output: give -o OUT for the module "
                     "(or --dry-run)");
  return o;
}

std::unique_ptr<llvm::MemoryBuffer> read_input(const std::string& path) {
  if (path != "-") {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st))
      throw tool_error(exit_bad_input, "cannot read '" + path + "': no such file");
    if (std::filesystem::is_directory(st))
      throw tool_error(exit_bad_input, "'" + path + "' is a directory, not an MLIR file");
  }
  std::string error;
  auto buffer = mlir::openInputFile(path, &error);
  if (!buffer) throw tool_error(exit_bad_input, "cannot read '" + path + "': " + error);
  return buffer;
}

void print_json(std::ostream& os, const options& o, std::size_t input_bytes,
                std::optional<std::size_t> output_bytes, std::size_t functions,
                const std::vector<qfold_tool::site>& sites) {
  using qfold_tool::json_string;
  const auto t = qfold_tool::count(sites);
  const bool written = output_bytes.has_value();
  os << "{\n  \"input\": " << json_string(o.input)
     << ",\n  \"output\": " << (written ? json_string(o.output) : "null")
     << ",\n  \"dry_run\": " << (o.dry_run ? "true" : "false")
     << ",\n  \"input_bytes\": " << input_bytes
     << ",\n  \"output_bytes\": " << (written ? std::to_string(*output_bytes) : "null")
     << ",\n  \"functions\": " << functions << ",\n  \"folded\": " << t.folded
     << ",\n  \"rejected\": " << t.rejected << ",\n  \"bytes_removed\": " << t.bytes_removed
     << ",\n  \"bytes_added\": " << t.bytes_added << ",\n  \"sites\": ";
  qfold_tool::print_sites_json(os, sites);
  os << "\n}\n";
}

// Set once the output is being written: an exception from then on is a write failure (exit 3).
bool writing = false;

int run(const options& o, mlir::DialectRegistry& registry) {
  const auto buffer = read_input(o.input);
  const std::size_t input_bytes = buffer->getBufferSize();
  mlir::MLIRContext context(registry);
  context.disableMultithreading();  // one module, a few functions: threads are not worth it
  llvm::SourceMgr source;
  source.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(buffer->getMemBufferRef(), false),
                            llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler diagnostics(source, &context, llvm::errs());
  const llvm::StringRef bytes = buffer->getBuffer();
  if (qfold_tosa::nests_too_deep(std::string_view(bytes.data(), bytes.size())))
    throw tool_error(exit_bad_input, "'" + o.input + "' nests deeper than " +
                                         std::to_string(qfold_tosa::max_nesting) +
                                         " levels (MLIR's parser would overflow its stack)");
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(
      source, mlir::ParserConfig(&context, /*verifyAfterParse=*/false));
  if (!module)
    throw tool_error(exit_bad_input,
                     "'" + o.input + "' is not a valid MLIR module (parser: see above)");
  if (const auto p = qfold_tosa::resource_parameter(*module))  // before MLIR's verifier aborts
    throw tool_error(exit_bad_input,
                     "'" + o.input + "': " + *p + ": a parameter must be a dense integer constant");
  if (mlir::failed(mlir::verify(*module)))
    throw tool_error(exit_bad_input,
                     "'" + o.input + "' is not a valid MLIR module (verifier: see above)");
  const auto problems = qfold_tosa::check_module(*module);
  if (!problems.empty()) {
    for (const auto& p : problems) llvm::errs() << "qfold-tosa-opt: error: " << p << "\n";
    throw tool_error(exit_bad_input, "'" + o.input + "' has ops qfold cannot read (" +
                                         std::to_string(problems.size()) + ")");
  }
  std::vector<qfold_tool::site> sites;
  std::size_t functions = 0;
  for (mlir::func::FuncOp f : module->getOps<mlir::func::FuncOp>()) {
    ++functions;
    for (auto& s : qfold_tosa::fold_function(f, o.passes)) sites.push_back(std::move(s));
  }
  // From here on, a failure is about the output.
  writing = true;
  if (mlir::failed(mlir::verify(*module)))
    throw tool_error(exit_write,
                     "internal error: the folded module fails the verifier (see above); nothing "
                     "written");
  std::optional<std::size_t> output_bytes;
  if (!o.dry_run) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    os << "\n";
    os.flush();
    if (o.has_output) {
      qfold_tool::write_file_atomically(o.output, text);
    } else {
      std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
      std::cout.flush();
      if (!std::cout) throw tool_error(exit_write, "cannot write the module to standard output");
    }
    output_bytes = text.size();
  }
  if (o.json) {
    print_json(std::cout, o, input_bytes, output_bytes, functions, sites);
    std::cout.flush();
    if (!std::cout) throw tool_error(exit_write, "cannot write the report to standard output");
  } else {
    std::ostringstream os;
    qfold_tool::print_site_lines(os, sites);
    qfold_tool::print_totals(os, sites);
    os << " in " << functions << " function" << (functions == 1 ? "" : "s") << "\n";
    os << (o.input == "-" ? std::string("<stdin>") : o.input) << ": " << input_bytes << " bytes";
    if (output_bytes)
      os << " -> " << (o.has_output ? o.output : std::string("<stdout>")) << ": " << *output_bytes
         << " bytes\n";
    else
      os << " (dry run, nothing written)\n";
    std::cerr << os.str();
  }
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    mlir::registerAllPasses();
    qfold_tosa::register_passes();
    bool opt = false;
    for (int i = 1; i < argc && !opt; ++i) {
      if (std::string_view(argv[i]) == "--") break;
      opt = is_opt_argument(argv[i]);
    }
    if (opt) {
      // MLIR's opt driver owns the arguments; its own help for --help-mlir-opt.
      std::vector<char*> args(argv, argv + argc);
      std::string help = "--help";
      for (auto& a : args)
        if (std::string_view(a) == "--help-mlir-opt") a = help.data();
      return mlir::asMainReturnCode(mlir::MlirOptMain(static_cast<int>(args.size()), args.data(),
                                                      "qfold-tosa-opt (MLIR opt driver with qfold)",
                                                      registry));
    }
    std::optional<options> o;
    try {
      o = parse_arguments(argc, argv);
    } catch (const tool_error& e) {
      std::cerr << "qfold-tosa-opt: " << e.what() << "\n" << usage();
      return e.code();
    }
    if (!o) return exit_ok;
    return run(*o, registry);
  } catch (const tool_error& e) {
    std::cerr << "qfold-tosa-opt: error: " << e.what() << "\n";
    return e.code();
  } catch (const std::bad_alloc&) {
    std::cerr << "qfold-tosa-opt: error: out of memory while "
              << (writing ? "writing the output" : "reading or folding the module") << "\n";
    return writing ? exit_write : exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << "qfold-tosa-opt: error: " << (writing ? "while writing: " : "while folding: ")
              << e.what() << "\n";
    return writing ? exit_write : exit_bad_input;
  } catch (...) {
    std::cerr << "qfold-tosa-opt: error: unknown exception\n";
    return writing ? exit_write : exit_bad_input;
  }
}
