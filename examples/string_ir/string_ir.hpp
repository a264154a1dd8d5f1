// A third-party IR qfold knows nothing about, as many compilers' first IR looks: ops named by
// strings, operands as indices, one attribute map. Adapted without touching it in
// qfold_adapter.hpp (the example of docs/adapting-your-ir.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strir {

struct Node {
  std::string op;  // "input", "const", "conv", "linear", "bn", "rescale", "mul", "add",
                   // "table", "reshape", "qconv" ... anything else is opaque
  std::vector<int> inputs;
  std::vector<float> data;           // a float constant's values
  std::vector<std::int32_t> ints;    // an integer constant's values; a rescale's multipliers
  std::vector<std::int32_t> shifts;  // a rescale's shifts
  std::vector<std::int64_t> shape;   // the output shape
  std::map<std::string, double> attrs;
  bool dead = false;
};

struct Graph {
  std::vector<Node> nodes;  // in order: producers first
  std::vector<int> outputs;

  int add(Node n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
  [[nodiscard]] double attr(int n, const std::string& key, double fallback = 0) const {
    const auto& a = nodes[static_cast<std::size_t>(n)].attrs;
    const auto it = a.find(key);
    return it == a.end() ? fallback : it->second;
  }
};

}  // namespace strir
