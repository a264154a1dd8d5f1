// The golden batch-norm folds of tests/golden/batch_norm_folds.txt (made with python3-torch by
// make_batch_norm_folds.py), read for the fold test and the graph-level float64 test.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "catch_compat.hpp"

namespace qfold_test {
struct bn_case {
  std::map<std::string, std::string> keys;
  std::map<std::string, std::vector<double>> arrays;  // absent ("-") arrays are missing
  std::vector<std::int64_t> shape;
};

inline std::vector<bn_case> read_cases() {
  std::ifstream in(std::string(QFOLD_GOLDEN_DIR) + "/batch_norm_folds.txt");
  REQUIRE(in.good());
  std::vector<bn_case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    bn_case c;
    std::string tok;
    s >> c.keys["name"];
    while (s >> tok && tok != ":") {
      const auto eq = tok.find('=');
      c.keys[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    std::string label;
    while (s >> label) {
      std::vector<double> values;
      bool absent = false;
      while (s >> tok && tok != "|") {
        if (tok == "-")
          absent = true;
        else
          values.push_back(std::strtod(tok.c_str(), nullptr));  // hex floats, inf: exact
      }
      if (!absent) c.arrays[label] = values;
    }
    std::istringstream dims(c.keys["wshape"]);
    for (std::string d; std::getline(dims, d, ',');) c.shape.push_back(std::stoll(d));
    cases.push_back(std::move(c));
  }
  return cases;
}

template <class T>
std::vector<T> as(const bn_case& c, const std::string& label) {
  const auto it = c.arrays.find(label);
  if (it == c.arrays.end()) return {};
  return std::vector<T>(it->second.begin(), it->second.end());
}

template <class T>
auto bits(T v) {  // compare representations: -0 != +0, subnormals exact
  return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v);
}

}  // namespace qfold_test
