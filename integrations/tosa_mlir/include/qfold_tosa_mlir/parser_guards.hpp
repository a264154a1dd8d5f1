// An input that crashes MLIR's parser itself (mlir-opt too): deep nesting, found by fuzz_tosa_fold
// on MLIR 16 and still there in MLIR 22 (20,000 nested `[` overflow mlir-opt 22's stack).
// qfold-tosa-opt refuses it as bad input (exit 1) before MLIR gets to crash, and the fuzzer uses
// the same check. (MLIR 16's other crash, `array<i1: 1>`, is a parse error in MLIR 22.)
#pragma once

#include <cstddef>
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

}  // namespace qfold_tosa
