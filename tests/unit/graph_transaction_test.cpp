// The transaction guarantee of every pass: an adapter that throws at any one of its calls (reads
// during analysis, every mutation point, the inverses of a rollback, the erasures of the cleanup)
// leaves the graph exactly as it was (structural hash) or, only when the failing call is part of
// the cleanup after the commit, folded with unused nodes left and that said in the report. No
// exception escapes a pass. Each graph holds one site, so "as it was" and "folded" are the only
// two graphs a pass may leave.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <new>
#include <qfold/qfold.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "hostile_adapter.hpp"
#include "tiny_ir/blocks.hpp"
#include "tiny_ir/interpreter.hpp"
#include "tiny_ir/tiny_ir.hpp"

namespace {
using id = tiny::graph::node_id;
namespace blocks = tiny::blocks;

using failing = qfold_test::hostile;

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
         });
}

struct one_site {
  std::string name;
  tiny::graph g;
  std::vector<double> input;  // one evaluation over every input code (or representative floats)
};

// Runs `pass` with a failure injected at every call in turn; see the file comment.
template <class Pass>
void every_failure(const one_site& site, Pass pass) {
  INFO(site.name);
  const std::uint64_t original = site.g.structural_hash();
  failing clean(site.g);
  const auto r = pass(clean);
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.folded() == 1);
  const std::uint64_t folded = clean.g.structural_hash();
  REQUIRE(folded != original);
  const auto folded_out = tiny::evaluate(clean.g, site.input);
  const long total = clean.calls;
  std::size_t rolled_back = 0, elsewhere = 0, cleanup = 0;
  for (long k = 1; k <= total; ++k) {
    failing f(site.g);
    f.fail_at = k;
    const auto fr = pass(f);  // nothing may escape
    INFO("call " << k << " of " << total << " failed, in " << f.failed_in);
    std::size_t failures = 0, folded_sites = 0;
    bool cleanup_failed = false;
    for (const auto& s : fr.sites) {
      folded_sites += s.folded() ? 1u : 0u;
      failures += !s.folded() && s.rejected->code == qfold::reason::adapter_failure ? 1u : 0u;
      cleanup_failed = cleanup_failed || s.cleanup_failed;
    }
    CHECK(failures + (cleanup_failed ? 1u : 0u) == 1);  // the failure is reported, once
    const std::uint64_t h = f.g.structural_hash();
    if (h == original) {
      CHECK(folded_sites == 0);
      ++rolled_back;
    } else if (h == folded) {
      // A read at another node failed (that node is reported), or the cleanup's last look at a
      // node that stays (reported as a cleanup failure, conservatively).
      CHECK(folded_sites == 1);
      ++elsewhere;
    } else {  // only after the commit: folded, unused nodes left
      CHECK(cleanup_failed);
      CHECK(folded_sites == 1);
      CHECK(same(tiny::evaluate(f.g, site.input), folded_out));
      ++cleanup;
    }
  }
  CHECK(rolled_back > 0);
  CHECK(cleanup > 0);
  CHECK(rolled_back + elsewhere + cleanup == static_cast<std::size_t>(total));
  // A failure that does not stop: the rollback's inverses fail too. Reported, never thrown.
  for (long k = 1; k <= total; k += 3) {
    failing f(site.g);
    f.fail_at = k;
    f.persistent = true;
    const auto fr = pass(f);
    CHECK(fr.folded() + fr.rejected() >= 1);
  }
}

const auto bn_pass = [](failing& g) { return qfold::fold_batch_norms(g); };
const auto alpha_pass = [](failing& g) { return qfold::fold_dyt_alphas(g); };
const auto affine_pass = [](failing& g) { return qfold::fold_dyt_affines(g); };
const auto scale_pass = [](failing& g) { return qfold::fold_scales_into_quantize(g); };
const auto merge_pass = [](failing& g) { return qfold::fold_merge_rescales(g); };
const auto compose_pass = [](failing& g) { return qfold::fold_compose_tables(g); };
const auto collapse_pass = [](failing& g) { return qfold::fold_collapse_to_tables(g); };

using tiny::blocks::ramp_table;
using tiny::blocks::rescale_attrs;

one_site conv_bn(bool bias) {
  one_site s{bias ? "conv + bias + batch norm" : "conv without bias + batch norm", {}, {}};
  auto& g = s.g;
  const id x = g.input("x", {1, 2, 3, 3});
  const id w = g.constant("w", tiny::random_floats(2 * 2 * 3 * 3, 7, -1, 1), {2, 2, 3, 3});
  const id b = bias ? g.constant("b", {0.5f, -0.25f}, {2}) : tiny::graph::none;
  const id conv = g.conv2d("conv", x, w, b, {.padding = 1});
  const id bn = g.batch_norm(
      "bn", conv, g.constant("gamma", {1.5f, 0.75f}, {2}), g.constant("beta", {0.1f, -0.2f}, {2}),
      g.constant("mean", {0.3f, -0.4f}, {2}), g.constant("var", {2.0f, 0.5f}, {2}), 1e-5);
  g.mark_output(g.relu("relu", bn));
  for (const float v : tiny::random_floats(18, 3, -2, 2)) s.input.push_back(v);
  return s;
}

one_site dyt_alpha() {
  one_site s{"DyT alpha", {}, {}};
  blocks::dyt_alpha_options o;
  const id x = s.g.input("x", {1, 256});
  s.g.mark_output(blocks::dyt_alpha(s.g, "dyt", x, o));
  for (int c = -128; c < 128; ++c) s.input.push_back(c);
  return s;
}

// NHWC 4x4x4 codes after an int8 TABLE, then the DyT affine and an integer 3x3 conv.
one_site dyt_affine(std::vector<std::int64_t> gamma, std::vector<std::int64_t> beta,
                    std::int64_t padding, std::int64_t table_zp, const char* name) {
  one_site s{name, {}, {}};
  auto& g = s.g;
  std::vector<std::int8_t> table(256);
  for (int i = 0; i < 256; ++i)
    table[static_cast<std::size_t>(i)] = static_cast<std::int8_t>((i - 128) / 4);
  const id x = g.input("x", {1, 4, 4, 4});
  const id t = g.table("table", x, table);
  g.set_output_qparams(
      t, qfold::make_qparams(qfold::dtype::int8, 0.1, static_cast<std::int32_t>(table_zp)));
  blocks::dyt_affine_options o;
  o.gamma = std::move(gamma);
  o.beta = std::move(beta);
  o.table_zero_point = table_zp;
  o.output_zero_point = table_zp == 0 ? 0 : -3;
  o.padding = padding;
  g.mark_output(blocks::dyt_affine_conv(g, "affine", t, o));
  for (int p = 0; p < 16; ++p)
    for (int c = 0; c < 4; ++c) s.input.push_back((p * 16 + 37 * c) % 256 - 128);
  return s;
}

one_site sandwich() {
  one_site s{"requantize sandwich", {}, {}};
  const auto in = qfold::make_qparams(qfold::dtype::int8, 0.03, 5);
  auto out = in;
  out.scale = in.scale * 0.125;
  const id x = s.g.input("x", {256});
  s.g.mark_output(s.g.dequantize(
      "consumer", blocks::requantize_sandwich(s.g, "attn", x, 0.125f, in, out), out));
  for (int c = -128; c < 128; ++c) s.input.push_back(c);
  return s;
}

one_site requantize() {
  one_site s{"requantize with shared qparams", {}, {}};
  const auto q = qfold::make_qparams(qfold::dtype::int8, 0.0147, -3);
  const id x = s.g.input("x", {256});
  const id dq = s.g.dequantize("pool.dq", x, q);
  s.g.mark_output(s.g.dequantize("consumer", s.g.quantize("pool.q", dq, q), q));
  s.g.mark_output(s.g.relu("other_reader", dq));
  for (int c = -128; c < 128; ++c) s.input.push_back(c);
  return s;
}

one_site scale_before_annotation() {
  one_site s{"power-of-two scale into the quantize", {}, {}};
  const auto q = qfold::make_qparams(qfold::dtype::int8, 0.04, -1);
  const id x = s.g.input("x", {64});
  s.g.mark_output(
      s.g.dequantize("consumer", blocks::scale_then_quantize(s.g, "attn", x, 8.0f, q), q));
  for (int k = -32; k < 32; ++k) s.input.push_back(k * 0.17);
  return s;
}

// RESCALE -> MUL by 3 -> RESCALE (merged into one RESCALE, with qparams copied), and a
// per-channel pair.
one_site rescale_pair(bool per_channel) {
  one_site s{per_channel ? "per-channel RESCALE pair" : "RESCALE -> MUL -> RESCALE", {}, {}};
  auto& g = s.g;
  const std::int64_t channels = per_channel ? 2 : 1;
  const id x = g.input("x", {256, channels}, qfold::dtype::int8);
  auto a = rescale_attrs(qfold::int_type::i8, qfold::int_type::i32, 2);
  a.per_channel = per_channel;
  std::vector<qfold::scale_factor> sa{{1 << 30, 26}};
  if (per_channel) sa.push_back({1 << 30, 27});
  const id r1 = g.rescale("r1", x, a, sa);
  const id k = g.int_constant("k", {3}, {1}, qfold::dtype::int32);
  const id r2 =
      g.rescale("r2", g.mul("mul", r1, k),
                rescale_attrs(qfold::int_type::i32, qfold::int_type::i8, 0, 1), {{1 << 30, 36}});
  g.set_output_qparams(r2, qfold::make_qparams(qfold::dtype::int8, 0.5, 1));
  g.mark_output(r2);
  for (int c = -128; c < 128; ++c)
    for (std::int64_t ch = 0; ch < channels; ++ch) s.input.push_back(c);
  return s;
}

one_site table_pair() {
  one_site s{"TABLE -> TABLE", {}, {}};
  const id x = s.g.input("x", {256}, qfold::dtype::int8);
  const id t = s.g.table("t2", s.g.table("t1", x, ramp_table(3)), ramp_table(7));
  s.g.set_output_qparams(t, qfold::make_qparams(qfold::dtype::int8, 0.1, 0));
  s.g.mark_output(t);
  for (int c = -128; c < 128; ++c) s.input.push_back(c);
  return s;
}

// int8 -> RESCALE -> ADD -> SUB -> CLAMP -> RESCALE -> TABLE -> CAST, or the int16 chain that
// becomes an int16 TABLE and its rounding RESCALE (two added nodes to roll back).
one_site elementwise_chain(bool int16) {
  one_site s{int16 ? "int16 chain into an int16 TABLE" : "int8 chain into one TABLE", {}, {}};
  auto& g = s.g;
  using qfold::int_type;
  const id x =
      g.input("x", {int16 ? 65536 : 256}, int16 ? qfold::dtype::int16 : qfold::dtype::int8);
  const auto k = [&](std::int64_t v) { return g.int_constant("k", {v}, {1}, qfold::dtype::int32); };
  if (int16) {
    const id up = g.rescale("up", x, rescale_attrs(int_type::i16, int_type::i32), {{1 << 30, 30}});
    const id down = g.rescale("down", g.mul("mul", up, k(2)),
                              rescale_attrs(int_type::i32, int_type::i8), {{1 << 30, 38}});
    g.mark_output(g.clamp("clamp", down, -90, 90));
    for (int c = -32768; c < 32768; ++c) s.input.push_back(c);
    return s;
  }
  const id up = g.rescale("up", x, rescale_attrs(int_type::i8, int_type::i32, 1), {{1 << 30, 28}});
  const id mid = g.clamp("clamp", g.sub("sub", g.add("add", up, k(40)), k(9)), -300, 300);
  const id down =
      g.rescale("down", mid, rescale_attrs(int_type::i32, int_type::i8), {{1 << 30, 32}});
  const id t = g.table("t", down, ramp_table(5));
  g.mark_output(g.cast("cast", g.cast("wide", t, qfold::dtype::int32), qfold::dtype::int8));
  for (int c = -128; c < 128; ++c) s.input.push_back(c);
  return s;
}

}  // namespace

TEST_CASE("transactions: merge rescales, a failure at every adapter call", "[graph][transaction]") {
  every_failure(rescale_pair(false), merge_pass);
  every_failure(rescale_pair(true), merge_pass);
}

TEST_CASE("transactions: compose tables, a failure at every adapter call", "[graph][transaction]") {
  every_failure(table_pair(), compose_pass);
}

TEST_CASE("transactions: collapse to table, a failure at every adapter call",
          "[graph][transaction]") {
  every_failure(elementwise_chain(false), collapse_pass);
  every_failure(elementwise_chain(true), collapse_pass);
}

TEST_CASE("transactions: batch norm, a failure at every adapter call", "[graph][transaction]") {
  every_failure(conv_bn(true), bn_pass);
  every_failure(conv_bn(false), bn_pass);  // the bias is appended: undone by remove_last_operand
}

TEST_CASE("transactions: DyT alpha, a failure at every adapter call", "[graph][transaction]") {
  every_failure(dyt_alpha(), alpha_pass);
}

TEST_CASE("transactions: DyT affine, a failure at every adapter call", "[graph][transaction]") {
  every_failure(dyt_affine({1, -1, 2, 1}, {5, 0, -7, 3}, 0, 2, "DyT affine folded into the conv"),
                affine_pass);
  every_failure(dyt_affine({1, 1, 1, 1}, {4, -2, 0, 9}, 1, 0, "DyT affine, gamma bypassed"),
                affine_pass);
}

TEST_CASE("transactions: scale into quantize, a failure at every adapter call",
          "[graph][transaction]") {
  every_failure(sandwich(), scale_pass);
  every_failure(requantize(), scale_pass);
  every_failure(scale_before_annotation(), scale_pass);
}
