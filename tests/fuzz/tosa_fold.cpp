// libFuzzer target: the bytes as MLIR text (a TOSA module of LLVM 16, generic or pretty form)
// through what qfold-tosa-opt's default path runs: MLIR's parser and verifier with every dialect
// the tool registers, check_module, fold_function with every pass on each func.func, the verifier
// again, and the printed module.
// Findings: any crash or sanitizer report in qfold's code; an exception out of check_module or
// fold_function (the adapter refuses bad input with problems and rejections, never by throwing;
// only running out of memory is not a finding); a site that says an erase failed; a folded module
// that fails the verifier, or whose printed text does not parse and verify again (unless the
// input's own printed text does not either: then it is MLIR's printer); a function without a
// folded site that prints differently after folding (a refusal must change nothing), and a
// module without one that does. Inputs on which MLIR 16 itself crashes (mlir-opt-16 too) are
// skipped: see nests_too_deep and mlir16_broken_array.
#include "tosa_mlir/tosa_fold.hpp"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OperationSupport.h>
#include <mlir/IR/SubElementInterfaces.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/Parser/Parser.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tosa_fold finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

// The context of an input: one with the dialects qfold-tosa-opt registers (all of MLIR's), its
// diagnostics swallowed, shared by kInputsPerContext inputs and then replaced. A fresh context per
// input costs ~1.7 ms (copying the registry, loading TOSA's and func's dialects: 540 inputs/s
// against 6,300 for one shared context); a shared one grows with every type and attribute any
// input uniqued. Replacing it bounds that growth. What a context has uniqued or loaded does not
// change how a module parses or folds, so a finding still replays alone.
constexpr unsigned kInputsPerContext = 256;
mlir::MLIRContext& context_for_input() {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry r;
    mlir::registerAllDialects(r);
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
    // Diagnostics do not print the op: MLIR 16 crashes printing some (see mlir16_broken_array).
    context->printOpOnDiagnostic(false);
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

// The text parsed as qfold-tosa-opt parses a file (null-terminated, as MLIR's lexer expects;
// parsing verifies).
mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string& text, mlir::MLIRContext& context) {
  llvm::SourceMgr source;
  source.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(text.data(), text.size()), "fuzz.mlir",
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(source, mlir::ParserConfig(&context));
}

// A filter for MLIR 16's parser, not qfold: it recurses once per nesting level ([...], (...),
// {...}, <...>) without a limit, so deep nesting overflows the stack (mlir-opt-16 and
// qfold-tosa-opt crash on 7,320 nested `[`). No module qfold reads nests more than a few dozen
// levels; inputs that nest deeper than kMaxNesting (MLIR 16 parses 5,000 fine) are skipped. The
// count is coarse (brackets in strings count; `->` and `>=` do not close).
constexpr int kMaxNesting = 1000;
bool nests_too_deep(const std::string& text) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[' || c == '(' || c == '{' || c == '<') {
      if (++depth > kMaxNesting) return true;
    } else if (c == ']' || c == ')' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-') &&
                (i + 1 == text.size() || text[i + 1] != '='))) {
      if (depth > 0) --depth;
    }
  }
  return false;
}

// A filter for a bug of MLIR 16, not qfold's: its parser makes `array<i1: 1>` (integer literals
// for i1; `true` / `false` are fine) a DenseArrayAttr of one element and no bytes, which its
// printer then reads through a null pointer (mlir-opt-16 and qfold-tosa-opt crash on any module
// holding one, wherever it is). Modules holding such an attribute anywhere (an op's attributes,
// a type, a location, nested) are skipped; the verifier's diagnostics would print it too, which
// is why they do not print ops here.
bool mlir16_broken_array(mlir::ModuleOp m) {
  bool broken = false;
  const auto check = [&](mlir::Attribute a) {
    const auto d = a.dyn_cast<mlir::DenseArrayAttr>();
    if (!d) return;
    const auto bytes = (d.getElementType().getIntOrFloatBitWidth() + 7) / 8;
    if (d.getRawData().size() != static_cast<std::size_t>(d.getSize()) * bytes) broken = true;
  };
  const auto no_type = [](mlir::Type) {};
  const auto attribute = [&](mlir::Attribute a) {
    check(a);
    if (auto s = a.dyn_cast<mlir::SubElementAttrInterface>()) s.walkSubElements(check, no_type);
  };
  const auto type = [&](mlir::Type t) {
    if (auto s = t.dyn_cast<mlir::SubElementTypeInterface>()) s.walkSubElements(check, no_type);
  };
  m->walk([&](mlir::Operation* op) {
    attribute(op->getAttrDictionary());
    attribute(op->getLoc());
    for (const mlir::Type t : op->getResultTypes()) type(t);
    for (mlir::Region& r : op->getRegions())
      for (mlir::Block& b : r)
        for (const mlir::BlockArgument a : b.getArguments()) {
          type(a.getType());
          attribute(a.getLoc());
        }
  });
  return broken;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (nests_too_deep(text)) return 0;
  mlir::MLIRContext& context = context_for_input();
  const mlir::OwningOpRef<mlir::ModuleOp> module = parse(text, context);
  if (!module) return 0;  // not parsable or rejected by the verifier: exit 1
  mlir::ModuleOp m = *module;
  if (mlir16_broken_array(m)) return 0;
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
    std::vector<qfold_tool::site> sites;
    try {
      sites = qfold_tosa::fold_function(f);
    } catch (const std::bad_alloc&) {
      return 0;
    } catch (const std::exception& e) {
      finding("fold_function threw", e.what());
    } catch (...) {
      finding("fold_function threw", "not a std::exception");
    }
    const auto t = qfold_tool::count(sites);
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
