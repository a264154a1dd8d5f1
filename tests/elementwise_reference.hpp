// Test glue for the rescale / table passes: an independent model of an elementwise integer chain
// (TOSA RESCALE and MUL from the reference model qref, ADD / SUB / CLAMP / CAST / TABLE written
// here from the spec with 128-bit integers), and small helpers shared by the pass tests. Nothing
// here calls the code under test.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <qfold/arith/rescale.hpp>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "catch_compat.hpp"
#include "reference/from_qfold.hpp"
#include "reference/spec_reference.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace ref_chain {
using i128 = qref::i128;

struct rescale {
  qfold::rescale_attributes a;
  qfold::scale_factor s;
};
struct mul {  // TOSA MUL int32 by a constant, with its shift
  std::int64_t k;
  int shift = 0;
};
struct add {  // x + k, int32 (overflow: no result)
  std::int64_t k;
};
struct sub {  // x - k, or k - x when `reversed`
  std::int64_t k;
  bool reversed = false;
};
struct clamp {
  std::int64_t lo, hi;
};
struct narrow {  // TOSA CAST int -> int to [lo, hi]: truncation to the low bits
  std::int64_t lo, hi;
};
struct table {  // int8 TABLE: out = t[x + 128]
  std::vector<std::int8_t> t;
};
using op = std::variant<rescale, mul, add, sub, clamp, narrow, table>;

inline bool fits32(i128 v) { return v >= INT32_MIN && v <= INT32_MAX; }

// One step by the spec, or nullopt where the spec gives no result (REQUIRE / ERROR_IF).
inline std::optional<std::int64_t> step(const op& o, std::int64_t x) {
  if (const auto* r = std::get_if<rescale>(&o)) {
    const auto v = qref::rescale_element(qref::from_qfold(r->a, r->s.multiplier, r->s.shift), x);
    return v.ok ? std::optional<std::int64_t>(v.value) : std::nullopt;
  }
  if (const auto* m = std::get_if<mul>(&o)) {
    const auto v = qref::tosa_mul(qref::DType::i32, x, m->k, m->shift);
    return v.ok ? std::optional<std::int64_t>(v.value) : std::nullopt;
  }
  if (const auto* a = std::get_if<add>(&o)) {
    const i128 v = i128{x} + a->k;
    if (!fits32(x) || !fits32(v)) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  if (const auto* s = std::get_if<sub>(&o)) {
    const i128 v = s->reversed ? i128{s->k} - x : i128{x} - s->k;
    if (!fits32(x) || !fits32(v)) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  if (const auto* c = std::get_if<clamp>(&o)) return std::clamp(x, c->lo, c->hi);
  if (const auto* n = std::get_if<narrow>(&o)) {
    if (x >= n->lo && x <= n->hi) return x;
    const i128 width = i128{n->hi} - n->lo + 1;
    i128 low = ((i128{x} % width) + width) % width;
    if (n->lo < 0 && low >= width / 2) low -= width;
    return static_cast<std::int64_t>(low);
  }
  const auto& t = std::get<table>(o);
  if (x < -128 || x > 127) return std::nullopt;
  return t.t[static_cast<std::size_t>(x + 128)];
}

inline std::optional<std::int64_t> run(const std::vector<op>& ops, std::int64_t x) {
  for (const op& o : ops) {
    const auto v = step(o, x);
    if (!v) return std::nullopt;
    x = *v;
  }
  return x;
}

}  // namespace ref_chain

namespace pass_test {
using id = tiny::graph::node_id;

inline std::vector<double> codes(std::int64_t lo, std::int64_t hi) {
  std::vector<double> r;
  for (std::int64_t c = lo; c <= hi; ++c) r.push_back(static_cast<double>(c));
  return r;
}
// Every code of [lo, hi] on every one of `channels` channels (last axis): row r holds code lo + r.
inline std::vector<double> codes_per_channel(std::int64_t lo, std::int64_t hi,
                                             std::size_t channels) {
  std::vector<double> r;
  for (std::int64_t c = lo; c <= hi; ++c)
    for (std::size_t k = 0; k < channels; ++k) r.push_back(static_cast<double>(c));
  return r;
}
inline bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
         });
}
inline std::size_t count_kind(const tiny::graph& g, qfold::op_kind k) {
  const auto ns = g.nodes();
  return static_cast<std::size_t>(std::ranges::count_if(ns, [&](id n) { return g.kind(n) == k; }));
}
// A random int8 table (any entries).
inline std::vector<std::int8_t> random_table(std::mt19937& gen) {
  std::vector<std::int8_t> t(256);
  std::uniform_int_distribution<int> d(-128, 127);
  for (auto& v : t) v = static_cast<std::int8_t>(d(gen));
  return t;
}
// Runs a pass on a graph of one site that it must refuse with `why`, leaving the graph as it was.
template <class Pass>
qfold::rejection rejects(tiny::graph& g, Pass p, qfold::reason why) {
  const auto before = g.structural_hash();
  const auto r = p(g);
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.sites[0].rejected);
  CHECK(r.sites[0].rejected->code == why);
  CHECK(g.structural_hash() == before);
  return *r.sites[0].rejected;
}
inline qfold::rescale_attributes attrs(qfold::int_type in, qfold::int_type out,
                                       std::int64_t izp = 0, std::int64_t ozp = 0) {
  return tiny::blocks::rescale_attrs(in, out, izp, ozp);
}
}  // namespace pass_test
