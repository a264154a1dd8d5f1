// Tables equal what ExecuTorch, TFLite and Vela emit: every entry of every table in tests/golden/
// (made by independent scripts that run torch, and restate TFLite's and Vela's arithmetic; see
// tests/golden/README.md). The only entries allowed to differ are the ones the scripts list as
// fragile: where the framework's own float function is not correctly rounded (or differs across
// its versions) and that difference moves a code.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <qfold/qfold.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "catch_compat.hpp"

namespace {
struct golden {
  std::string file, convention, function, param, extra;
  qfold::qparams in, out;
  std::vector<std::int64_t> values;
  int line = 0;
};

qfold::dtype parse_dtype(const std::string& s) {
  if (s == "int8") return qfold::dtype::int8;
  if (s == "uint8") return qfold::dtype::uint8;
  if (s == "int16") return qfold::dtype::int16;
  return qfold::dtype::int32;
}

std::string path(const std::string& file) { return std::string(QFOLD_GOLDEN_DIR) + "/" + file; }

std::vector<golden> read(const std::string& file) {
  std::ifstream in(path(file));
  REQUIRE(in.good());
  std::vector<golden> rows;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '#') continue;
    std::istringstream s(text);
    golden g;
    g.file = file;
    g.line = line;
    std::string in_type, out_type, in_scale, out_scale, colon;
    s >> g.convention >> g.function >> g.param >> in_type >> in_scale >> g.in.zero_point >>
        g.in.qmin >> g.in.qmax >> out_type >> out_scale >> g.out.zero_point >> g.out.qmin >>
        g.out.qmax >> g.extra >> colon;
    REQUIRE(colon == ":");
    g.in.type = parse_dtype(in_type);
    g.out.type = parse_dtype(out_type);
    g.in.scale = std::strtod(in_scale.c_str(), nullptr);  // hex floats: exact
    g.out.scale = std::strtod(out_scale.c_str(), nullptr);
    for (std::int64_t v; s >> v;) g.values.push_back(v);
    rows.push_back(g);
  }
  return rows;
}

// (file, line, index) -> the values a fragile entry may take (golden, or an alternative).
using fragile_map = std::map<std::tuple<std::string, int, std::size_t>, std::set<std::int64_t>>;
fragile_map read_fragile(const std::string& file) {
  fragile_map m;
  std::ifstream in(path(file));
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty() || text[0] == '#') continue;
    std::istringstream s(text);
    std::string f, function, alternative, idx, gold, alt;
    int line = 0;
    s >> f >> line >> function >> alternative >> idx >> gold >> alt;
    const auto index = static_cast<std::size_t>(std::stoul(idx.substr(4)));
    auto& allowed = m[{f, line, index}];
    allowed.insert(std::stoll(gold.substr(7)));
    allowed.insert(std::stoll(alt.substr(4)));
  }
  return m;
}

// How the test picks the function of a golden ExecuTorch table: by the script's function name
// (below), or through qfold::fn::torch::by_name with the op name and attributes torch gives it.
enum class lookup { by_function, by_op_name };

// The aten op name and attributes of a golden ExecuTorch function (the script's TORCH_OPS map:
// gelu_tanh is F.gelu(approximate="tanh"), elu and leaky_relu carry their parameter).
std::pair<std::string, qfold::fn::torch::op_attributes> aten_op(const golden& g) {
  qfold::fn::torch::op_attributes a;
  const double p = g.param == "-" ? 0.0 : std::strtod(g.param.c_str(), nullptr);
  std::string base = g.function;
  if (base == "gelu_tanh") {
    base = "gelu";
    a.approximate = "tanh";
  }
  if (base == "elu") a.alpha = p;
  if (base == "leaky_relu") a.negative_slope = p;
  return {"aten." + base + ".default", a};
}

// Calls use(f) with the function object this convention's generator uses for `name`.
template <class Use>
void with_function(const golden& g, Use use, lookup how = lookup::by_function) {
  namespace fn = qfold::fn;
  const std::string& n = g.function;
  const double p = g.param == "-" ? 0.0 : std::strtod(g.param.c_str(), nullptr);
  if (how == lookup::by_op_name) {
    REQUIRE(g.convention == "executorch");
    const auto [name, attributes] = aten_op(g);
    const auto f = fn::torch::by_name(name, attributes);
    INFO(name);
    REQUIRE(f.has_value());
    return use(*f);
  }
  if (g.convention == "executorch") {
    if (n == "tanh") return use(fn::tanh);
    if (n == "sigmoid") return use(fn::sigmoid);
    if (n == "exp") return use(fn::exp);
    if (n == "log") return use(fn::log);
    if (n == "erf") return use(fn::erf);
    if (n == "gelu") return use(fn::torch::gelu);
    if (n == "gelu_tanh") return use(fn::torch::gelu_tanh);
    if (n == "silu") return use(fn::torch::silu);
    if (n == "hardswish") return use(fn::hardswish);
    if (n == "hardsigmoid") return use(fn::hardsigmoid);
    if (n == "rsqrt") return use(fn::torch::rsqrt);
    if (n == "reciprocal") return use(fn::reciprocal);
    if (n == "elu") return use(fn::elu(p));
    if (n == "leaky_relu") return use(fn::leaky_relu(p));
    if (n == "expm1") return use(fn::expm1);
    if (n == "log1p") return use(fn::log1p);
    if (n == "sin") return use(fn::sin);
    if (n == "cos") return use(fn::cos);
    if (n == "atan") return use(fn::atan);
  } else if (g.convention == "tflite") {
    if (n == "tanh") return use(fn::tanh);
    if (n == "sigmoid") return use(fn::tflite::sigmoid);
    if (n == "exp") return use(fn::exp);
    if (n == "gelu") return use(fn::tflite::gelu);
    if (n == "gelu_tanh") return use(fn::tflite::gelu_tanh);
    if (n == "gelu_erf_legacy") return use(fn::tflite::gelu_erf_legacy);
  } else {
    if (n == "tanh") return use(fn::tanh);
    if (n == "sigmoid") return use(fn::vela::sigmoid);
    if (n == "exp") return use(fn::exp);
    if (n == "log") return use(fn::vela::log);
    if (n == "gelu") return use(fn::vela::gelu);
    if (n == "gelu_tanh") return use(fn::vela::gelu_tanh);
  }
  FAIL("no function object for " << g.convention << " " << n);
}

template <class Real>
std::vector<std::int64_t> make_8bit(const qfold::quant_convention<Real>& c, const golden& g,
                                    lookup how) {
  std::vector<std::int64_t> out;
  with_function(
      g,
      [&](const auto& f) {
        const auto copy = [&](const auto& t) {
          REQUIRE(t.has_value());
          out.assign(t->values.begin(), t->values.end());
        };
        if (g.in.type == qfold::dtype::uint8)
          copy(qfold::make_table8<std::uint8_t, std::uint8_t>(c, f, g.in, g.out));
        else if (g.out.type == qfold::dtype::uint8)
          copy(qfold::make_table8<std::int8_t, std::uint8_t>(c, f, g.in, g.out));
        else
          copy(qfold::make_table8<std::int8_t, std::int8_t>(c, f, g.in, g.out));
      },
      how);
  return out;
}

std::vector<std::int64_t> make(const golden& g, int& rshift, lookup how) {
  if (g.convention == "executorch" && g.in.type == qfold::dtype::int16) {
    std::vector<std::int64_t> out;
    with_function(
        g,
        [&](const auto& f) {
          const auto t = qfold::make_executorch_int16_table(f, g.in, g.out);
          REQUIRE(t.has_value());
          rshift = t->rshift;
          out.assign(t->table.values.begin(), t->table.values.end());
        },
        how);
    return out;
  }
  if (g.convention == "tflite" && g.in.type == qfold::dtype::int16) {
    std::vector<std::int64_t> out;
    with_function(g, [&](const auto& f) {
      const auto t = qfold::make_tflite_int16_table<float>(f, g.in, g.out);
      REQUIRE(t.has_value());
      out.assign(t->values.begin(), t->values.end());
    });
    return out;
  }
  if (g.convention == "executorch") return make_8bit(qfold::conventions::executorch, g, how);
  if (g.convention == "tflite") return make_8bit(qfold::conventions::tflite, g, how);
  if (g.convention == "vela_lut8") return make_8bit(qfold::conventions::vela, g, how);
  return make_8bit(qfold::conventions::vela_8bit_op, g, how);
}

void check_file(const std::string& file, const fragile_map& fragile, std::size_t& entries,
                std::size_t& fragile_hits, std::map<std::string, int>* hits_by_function = nullptr,
                lookup how = lookup::by_function) {
  const auto rows = read(file);
  REQUIRE(!rows.empty());
  for (const golden& g : rows) {
    int rshift = 0;
    const auto got = make(g, rshift, how);
    REQUIRE(got.size() == g.values.size());
    if (g.extra.rfind("rshift=", 0) == 0) CHECK(rshift == std::stoi(g.extra.substr(7)));
    for (std::size_t i = 0; i < got.size(); ++i, ++entries) {
      if (got[i] == g.values[i]) continue;
      const auto it = fragile.find({file, g.line, i});
      if (it != fragile.end() && it->second.count(got[i]) != 0) {
        ++fragile_hits;
        if (hits_by_function != nullptr) ++(*hits_by_function)[g.function];
        continue;
      }
      FAIL_CHECK(file << ":" << g.line << " " << g.convention << " " << g.function << " entry " << i
                      << ": qfold " << got[i] << ", golden " << g.values[i]);
    }
  }
}
}  // namespace

TEST_CASE("ExecuTorch int8 and int16 tables equal the torch-made golden tables",
          "[table][golden]") {
  const auto fragile = read_fragile("executorch_fragile.txt");
  std::size_t entries = 0, fragile_hits = 0;
  check_file("executorch_int8.txt", fragile, entries, fragile_hits);
  check_file("executorch_int16.txt", fragile, entries, fragile_hits);
  CHECK(entries == 285 * 256 + 40 * 513);
  WARN("ExecuTorch: " << entries << " entries, " << fragile_hits
                      << " listed fragile entries differ as allowed");
}

// Every op name fn::torch::by_name knows gives the function whose tables equal the golden ones:
// each golden ExecuTorch table made again from the function by_name returns for its aten name.
TEST_CASE("fn::torch::by_name: a table made from the op name equals the golden table",
          "[table][golden]") {
  const auto fragile = read_fragile("executorch_fragile.txt");
  std::size_t entries = 0, fragile_hits = 0;
  std::map<std::string, int> unused;
  check_file("executorch_int8.txt", fragile, entries, fragile_hits, &unused, lookup::by_op_name);
  check_file("executorch_int16.txt", fragile, entries, fragile_hits, &unused, lookup::by_op_name);
  CHECK(entries == 285 * 256 + 40 * 513);
  // The golden tables cover every op by_name knows (19 functions, gelu_tanh included).
  std::set<qfold::fn::torch::op> seen;
  for (const auto* file : {"executorch_int8.txt", "executorch_int16.txt"})
    for (const golden& g : read(file)) {
      const auto [name, attributes] = aten_op(g);
      const auto f = qfold::fn::torch::by_name(name, attributes);
      REQUIRE(f.has_value());
      seen.insert(f->id);
    }
  CHECK(seen.size() == 19);
  CHECK(seen.size() == static_cast<std::size_t>(qfold::fn::torch::op::leaky_relu) + 1);
}

TEST_CASE("TFLite LUTPopulate int8/uint8/int16 tables equal the golden tables", "[table][golden]") {
  const auto fragile = read_fragile("tflite_fragile.txt");
  std::size_t entries = 0, fragile_hits = 0;
  check_file("tflite_int8.txt", fragile, entries, fragile_hits);
  check_file("tflite_int16.txt", fragile, entries, fragile_hits);
  CHECK(entries == 67 * 256 + 9 * 513);
}

TEST_CASE("Vela convert_to_lut8 and create_lut_8bit_op tables equal the golden tables",
          "[table][golden]") {
  std::size_t entries = 0, fragile_hits = 0;
  check_file("vela_int8.txt", {}, entries, fragile_hits);
  CHECK(entries == 53 * 256);
  CHECK(fragile_hits == 0);
}
