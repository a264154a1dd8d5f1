// An IR as a compiler engineer might have it: nodes in a hash map keyed by the name of the value
// each defines, operands by name, attributes in one variant map; constants are nodes; no shapes,
// element types or quantization parameters on nodes. qfold knows nothing of it: it is adapted from
// outside in qfold_adapter.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace mapir {

using Attr =
    std::variant<std::int64_t, double, std::string, std::vector<double>, std::vector<std::int64_t>>;

struct Node {
  std::string op;  // "Input", "Constant" ("value", "shape"), "Conv", "RESCALE", "TABLE", ...
  std::vector<std::string> inputs;
  std::unordered_map<std::string, Attr> attrs;
};

struct Graph {
  std::unordered_map<std::string, Node> nodes;  // the key is the node's id and its value's name
  std::vector<std::string> outputs;

  // Adds n as `name`, or as name.1, name.2, ... when that is taken; returns the name it got.
  std::string add(const std::string& name, Node n) {
    std::string unique = name;
    for (int i = 1; nodes.contains(unique); ++i) unique = name + "." + std::to_string(i);
    nodes.emplace(unique, std::move(n));
    return unique;
  }
  // Every reader of `from`, and every graph output naming it, reads `to` instead. All or nothing:
  // the new names are copied first, then swapped in (which cannot throw).
  void rename_uses(const std::string& from, const std::string& to) {
    std::vector<std::pair<std::string*, std::string>> uses;
    const auto note = [&](std::string& name) {
      name == from ? uses.push_back({&name, to}) : void();
    };
    for (auto& entry : nodes) std::ranges::for_each(entry.second.inputs, note);
    std::ranges::for_each(outputs, note);
    for (auto& [use, name] : uses) use->swap(name);
  }
  // Attribute `key` of node n if it holds a T, else nullptr (or `fallback`).
  template <class T>
  [[nodiscard]] const T* find(const std::string& n, const std::string& key) const {
    const auto& a = nodes.at(n).attrs;
    const auto it = a.find(key);
    return it == a.end() ? nullptr : std::get_if<T>(&it->second);
  }
  template <class T>
  [[nodiscard]] T attr(const std::string& n, const std::string& key, T fallback) const {
    const T* v = find<T>(n, key);
    return v != nullptr ? *v : fallback;
  }
};

}  // namespace mapir
