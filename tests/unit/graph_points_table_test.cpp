// docs/reference.md's "Points per pass" table against the code: for every pass, the points marked
// R are exactly qfold::detail::<pass>_points::required and those marked o exactly ::optional
// (graph/traits.hpp), by the names a pipeline reports; the columns are the seven passes, and the
// rows every point of any list, each once. Change a list or a cell alone and this fails.
#include <algorithm>
#include <cstddef>
#include <fstream>
#include <qfold/graph/passes.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "catch_compat.hpp"

namespace {
namespace d = qfold::detail;

// The names of a point_list's points, sorted.
template <class... P>
std::vector<std::string> names_of(d::point_list<P...>) {
  std::vector<std::string> r{std::string(P::name)...};
  std::sort(r.begin(), r.end());
  return r;
}

struct pass_points {
  std::string name;
  std::vector<std::string> required, optional;
};
template <class Points>
pass_points points_of(std::string_view name) {
  return {std::string(name), names_of(typename Points::required{}),
          names_of(typename Points::optional{})};
}

// The pass values carry the same lists (what pipeline::add and standard_pipeline check).
static_assert(std::is_same_v<qfold::passes::batch_norm_t::points, d::batch_norm_points>);
static_assert(
    std::is_same_v<qfold::passes::scale_into_quantize_t::points, d::scale_into_quantize_points>);
static_assert(std::is_same_v<qfold::passes::dyt_alpha_t::points, d::dyt_alpha_points>);
static_assert(std::is_same_v<qfold::passes::dyt_affine_t::points, d::dyt_affine_points>);
static_assert(std::is_same_v<qfold::passes::merge_rescales_t::points, d::merge_rescales_points>);
static_assert(std::is_same_v<qfold::passes::compose_tables_t::points, d::compose_tables_points>);
static_assert(
    std::is_same_v<qfold::passes::collapse_to_table_t::points, d::collapse_to_table_points>);

// The seven passes, in the standard pipeline's order (the table's column order).
std::vector<pass_points> code_points() {
  return {points_of<d::batch_norm_points>(qfold::batch_norm_pass_name),
          points_of<d::scale_into_quantize_points>(qfold::scale_into_quantize_pass_name),
          points_of<d::dyt_alpha_points>(qfold::dyt_alpha_pass_name),
          points_of<d::dyt_affine_points>(qfold::dyt_affine_pass_name),
          points_of<d::merge_rescales_points>(qfold::merge_rescales_pass_name),
          points_of<d::compose_tables_points>(qfold::compose_tables_pass_name),
          points_of<d::collapse_to_table_points>(qfold::collapse_to_table_pass_name)};
}

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

// "| a | b |" -> {"a", "b"}.
std::vector<std::string> cells(const std::string& line) {
  std::string_view s = line;
  s.remove_prefix(s.find('|') + 1);
  const auto end = s.find_last_of('|');
  if (end != std::string_view::npos) s = s.substr(0, end);
  std::vector<std::string> r;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '|') {
      r.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  return r;
}

struct table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// The first table after the heading that says "Points per pass".
table points_table() {
  std::ifstream in(std::string(QFOLD_DOCS_DIR) + "/reference.md");
  REQUIRE(in.good());
  table t;
  std::string line;
  bool heading = false;
  while (std::getline(in, line)) {
    const bool row = trim(line).rfind('|', 0) == 0;
    if (!heading) {
      heading = line.rfind('#', 0) == 0 && line.find("Points per pass") != std::string::npos;
    } else if (row && t.header.empty()) {
      t.header = cells(line);
      REQUIRE(std::getline(in, line));  // the |---| line
      REQUIRE(trim(line).rfind("|---", 0) == 0);
    } else if (row) {
      t.rows.push_back(cells(line));
    } else if (!t.header.empty()) {
      break;
    }
  }
  return t;
}

// `name` -> name.
std::string point_name(const std::string& cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`')
    return cell.substr(1, cell.size() - 2);
  return cell;
}
}  // namespace

TEST_CASE("docs/reference.md: the points-per-pass table equals each pass's point lists",
          "[graph][docs]") {
  const auto passes = code_points();
  const table t = points_table();

  // Columns: "point", then the seven passes by the names a pipeline reports.
  std::vector<std::string> columns{"point"};
  for (const auto& p : passes) columns.push_back(p.name);
  REQUIRE(t.header == columns);
  REQUIRE(!t.rows.empty());

  // Each cell R, o or empty; each point once.
  std::vector<std::string> rows;
  for (const auto& row : t.rows) {
    REQUIRE(row.size() == columns.size());
    rows.push_back(point_name(row[0]));
    for (std::size_t c = 1; c < row.size(); ++c) {
      CAPTURE(row[0], columns[c], row[c]);
      CHECK((row[c].empty() || row[c] == "R" || row[c] == "o"));
    }
  }
  std::sort(rows.begin(), rows.end());
  CHECK(std::adjacent_find(rows.begin(), rows.end()) == rows.end());

  // The rows are exactly the points of every list.
  std::vector<std::string> all;
  for (const auto& p : passes) {
    all.insert(all.end(), p.required.begin(), p.required.end());
    all.insert(all.end(), p.optional.begin(), p.optional.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  CHECK(rows == all);

  // Per pass: the R cells are its required points, the o cells its optional ones.
  for (std::size_t c = 1; c < columns.size(); ++c) {
    const pass_points& p = passes[c - 1];
    // A list names each point once (table_values is both the entries point and its fallback).
    CHECK(std::adjacent_find(p.required.begin(), p.required.end()) == p.required.end());
    CHECK(std::adjacent_find(p.optional.begin(), p.optional.end()) == p.optional.end());
    std::vector<std::string> required, optional;
    for (const auto& row : t.rows) {
      if (row[c] == "R") required.push_back(point_name(row[0]));
      if (row[c] == "o") optional.push_back(point_name(row[0]));
    }
    std::sort(required.begin(), required.end());
    std::sort(optional.begin(), optional.end());
    CAPTURE(p.name);
    CHECK(required == p.required);
    CHECK(optional == p.optional);
  }
}
