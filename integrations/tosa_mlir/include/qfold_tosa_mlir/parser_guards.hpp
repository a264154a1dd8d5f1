// Inputs that crash MLIR itself (mlir-opt too), refused by qfold-tosa-opt as bad input (exit 1)
// before MLIR gets to crash; the fuzzer uses the same checks:
// - deep nesting crashes the parser (found by fuzz_tosa_fold on MLIR 16; 20,000 nested `[`
//   still overflow mlir-opt 22's stack): checked on the text, before parsing;
// - a zero point (or MUL shift) held in a `dense_resource` constant aborts MLIR 22's verifier
//   (RESCALE's, CONV2D's, MATMUL's checks read it with getValues<APInt>, which a resource blob
//   does not provide): checked after parsing, before verifying.
// (MLIR 16's `array<i1: 1>` crash is a parse error in MLIR 22.)
#pragma once

#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Operation.h>

#include <cstddef>
#include <optional>
#include <qfold/graph/tosa_operands.hpp>
#include <string>
#include <string_view>

namespace qfold_tosa {

// MLIR's parser recurses once per nesting level ([...], (...), {...}, <...>) without a limit
// and overflows the stack (7,320 nested `[` crash it). No TOSA module nests more than a few dozen
// levels; deeper than this (MLIR parses 5,000 fine) is refused. The count is coarse: brackets in
// strings count, and `->` and `>=` do not close.
inline constexpr int max_nesting = 1000;
[[nodiscard]] inline bool nests_too_deep(std::string_view text) noexcept {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[' || c == '(' || c == '{' || c == '<') {
      if (++depth > max_nesting) return true;
    } else if (c == ']' || c == ')' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-') &&
                (i + 1 == text.size() || text[i + 1] != '='))) {
      if (depth > 0) --depth;
    }
  }
  return false;
}

// The first TOSA op whose parameter operand (tosa_operands.hpp: one the spec requires to be a
// constant) is a tosa.const that does not hold a DenseElementsAttr (a dense_resource blob), as
// "op at location"; nullopt when there is none. Run it before the verifier, which aborts on some
// of them; qfold refuses them all (it reads parameters as dense integers).
[[nodiscard]] inline std::optional<std::string> resource_parameter(mlir::ModuleOp m) {
  std::optional<std::string> found;
  m->walk([&](mlir::Operation* op) {
    if (found || op->getName().getDialectNamespace() != "tosa") return;
    const auto layout = qfold::tosa::layout_of(
        qfold::tosa::op_named(std::string_view(op->getName().getStringRef())));
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      if (!layout.must_be_constant(i)) continue;
      mlir::Operation* def = op->getOperand(i).getDefiningOp();
      if (def == nullptr || def->getName().getStringRef() != "tosa.const") continue;
      const auto values = def->getAttr("values");
      if (!values || llvm::isa<mlir::DenseElementsAttr>(values)) continue;
      std::string loc;
      llvm::raw_string_ostream os(loc);
      op->getLoc().print(os);
      found = op->getName().getStringRef().str() + " at " + os.str() + ": operand " +
              std::to_string(i) + " is a tosa.const without dense data (dense_resource)";
      return;
    }
  });
  return found;
}

}  // namespace qfold_tosa
