// Two inputs that crash MLIR 16 itself (mlir-opt-16 too), found by fuzz_tosa_fold; qfold-tosa-opt
// refuses them as bad input (exit 1) before MLIR gets to crash, and the fuzzer uses the same
// checks. Neither is qfold's arithmetic: they guard the parser and the printer qfold calls.
#pragma once

#include <mlir/IR/BuiltinAttributeInterfaces.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/SubElementInterfaces.h>

#include <cstddef>
#include <string_view>

namespace qfold_tosa {

// MLIR 16's parser recurses once per nesting level ([...], (...), {...}, <...>) without a limit
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

// MLIR 16's parser makes `array<i1: 1>` (integer literals for i1; `true` / `false` are fine) a
// DenseArrayAttr of one element and no bytes, which its printer then reads through a null pointer
// (printing the module, or an op in a diagnostic). True when such an attribute is anywhere in m
// (an op's attributes, a type, a location, nested): check it before verifying, since the
// verifier's diagnostics print ops.
[[nodiscard]] inline bool has_broken_dense_array(mlir::ModuleOp m) {
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

}  // namespace qfold_tosa
