// libFuzzer target: the bytes as MLIR text (a TOSA 1.0 module of MLIR 22, generic or pretty form)
// through what qfold-tosa-opt's default path runs: the nesting guard (parser_guards.hpp), MLIR's
// parser without verification, with every dialect and extension the tool registers, the verifier,
// check_module, fold_function with every pass on each func.func, the verifier again, and the
// printed module.
// Findings: any crash or sanitizer report in qfold's code; an exception out of check_module or
// fold_function (the adapter refuses bad input with problems and rejections, never by throwing;
// only running out of memory is not a finding); a site that says an erase failed; a folded module
// that fails the verifier, or whose printed text does not parse and verify again (unless the
// input's own printed text does not either: then it is MLIR's printer); a function without a
// folded site that prints differently after folding (a refusal must change nothing), and a
// module without one that does. Inputs that nest deeper than qfold_tosa::max_nesting are
// skipped, as qfold-tosa-opt refuses them before MLIR's parser overflows its stack.
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OperationSupport.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/Parser/Parser.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <qfold/graph/named_sites.hpp>
#include <qfold_tosa_mlir/parser_guards.hpp>
#include <qfold_tosa_mlir/passes.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tosa_fold finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

// The context of an input: one with the dialects and extensions qfold-tosa-opt registers (all of
// MLIR's), its diagnostics swallowed, shared by kInputsPerContext inputs and then replaced. A
// fresh context per input costs milliseconds (copying the registry, loading TOSA's and func's
// dialects); a shared one grows with every type and attribute any input uniqued. Replacing it
// bounds that growth. What a context has uniqued or loaded does not change how a module parses or
// folds, so a finding still replays alone.
constexpr unsigned kInputsPerContext = 256;
mlir::MLIRContext& context_for_input() {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry r;
    mlir::registerAllDialects(r);
    mlir::registerAllExtensions(r);
    return r;
  }();
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned inputs = 0;
  if (!context || ++inputs == kInputsPerContext) {
    context.reset();
    context = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
    context->getDiagEngine().registerHandler([](mlir::Diagnostic&) {
      return mlir::success();  // handled: nothing printed
    });
    inputs = 0;
  }
  return *context;
}

// Generic form with locations: a refusal must leave even the locations alone.
template <class Op>
std::string print(Op op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os, mlir::OpPrintingFlags().printGenericOpForm().enableDebugInfo());
  os.flush();
  return s;
}

// What qfold-tosa-opt writes (the pretty form, no locations).
std::string tool_text(mlir::ModuleOp m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os);
  os << "\n";
  os.flush();
  return s;
}

// The text as qfold-tosa-opt reads a file: refused when it nests too deep, parsed without
// verification, refused when a parameter is a dense_resource constant (MLIR's verifier aborts),
// verification (null-terminated, as MLIR's lexer expects) with the tool's diagnostic handler (its
// output thrown away; diagnostics on ops print the op, as the tool's do), then verified; null
// where the tool exits 1.
mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string& text, mlir::MLIRContext& context) {
  if (qfold_tosa::nests_too_deep(text)) return {};
  llvm::SourceMgr source;
  source.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(text.data(), text.size()), "fuzz.mlir",
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  const mlir::SourceMgrDiagnosticHandler diagnostics(source, &context, llvm::nulls());
  auto m = mlir::parseSourceFile<mlir::ModuleOp>(
      source, mlir::ParserConfig(&context, /*verifyAfterParse=*/false));
  if (!m || qfold_tosa::resource_parameter(*m) || mlir::failed(mlir::verify(*m))) return {};
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (qfold_tosa::nests_too_deep(text)) return 0;  // the tool's exit 1, before any context
  mlir::MLIRContext& context = context_for_input();
  const mlir::OwningOpRef<mlir::ModuleOp> module = parse(text, context);
  if (!module) return 0;  // the tool's exit 1: not parsable or not verified
  mlir::ModuleOp m = *module;
  try {
    if (!qfold_tosa::check_module(m).empty()) return 0;  // ops qfold cannot read: exit 1
  } catch (const std::bad_alloc&) {
    return 0;
  } catch (const std::exception& e) {
    finding("check_module threw", e.what());
  } catch (...) {
    finding("check_module threw", "not a std::exception");
  }
  const std::string before = print(m), input_out = tool_text(m);
  std::vector<std::string> functions_before;
  for (mlir::func::FuncOp f : m.getOps<mlir::func::FuncOp>()) functions_before.push_back(print(f));

  std::size_t folded = 0, i = 0;
  for (mlir::func::FuncOp f : m.getOps<mlir::func::FuncOp>()) {
    std::vector<qfold::named_site> sites;
    try {
      sites = qfold_tosa::fold_function(f);
    } catch (const std::bad_alloc&) {
      return 0;
    } catch (const std::exception& e) {
      finding("fold_function threw", e.what());
    } catch (...) {
      finding("fold_function threw", "not a std::exception");
    }
    const auto t = qfold::count_sites(sites);
    for (const auto& s : sites)
      if (!s.note.empty()) finding("a site's cleanup failed", s.pass + ": " + s.note);
    if (t.folded == 0 && print(f) != functions_before[i])
      finding("a function without a folded site changed", f.getSymName().str());
    folded += t.folded;
    ++i;
  }
  if (mlir::failed(mlir::verify(m))) finding("the folded module fails the verifier", print(m));
  const std::string after = print(m);
  if (folded == 0) {
    if (after != before) finding("a module without a folded site changed", after);
  } else if (const std::string out = tool_text(m);
             !parse(out, context) && parse(input_out, context)) {
    finding("the folded module's text does not parse and verify", out);
  }
  return 0;
}
