// Folds on .tosa files, end to end: read, fold with qfold's passes, write, read the output back,
// and run both files on every int8 code with the interpreter (RESCALE and MUL by the spec
// reference model): outputs equal element for element. Refusals and rolled-back sites leave the
// file byte-identical; every mutation of each kind of site fails once in turn (failure
// injection) and the file is written back as it was.
#include <new>
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_fb/graph.hpp>
#include <qfold_tosa_fb/passes.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/write.hpp>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tosa_fb_adapter/tosa_fb_test_support.hpp"

namespace {

using tosa_fb_test::bytes;
using tosa_fb_test::file_builder;
using tosa_fb_test::id_of;
using G = qfold_tosa_fb::graph;

struct folded {
  bytes out;
  std::vector<qfold::named_site> sites;
};
folded fold_file(const bytes& in, const std::vector<std::string>& passes = {}) {
  const auto m = qfold_tosa_fb::read_model(in);
  G g(m);
  REQUIRE(qfold_tosa_fb::check_graph(g).empty());
  folded r;
  r.sites = qfold_tosa_fb::fold(g, passes);
  r.out = qfold_tosa_fb::write_bytes(g);
  return r;
}

// The output file reads, has no problem, and computes what the input computes on every int8
// code at every position of the graph input `input` (int16: every code somewhere).
void same_function(const bytes& original, const bytes& out, const std::string& input = "x") {
  const auto a = qfold_tosa_fb::read_model(original);
  const auto b = qfold_tosa_fb::read_model(out);
  {
    const G g(b);
    CHECK(qfold_tosa_fb::check_graph(g).empty());
  }
  std::size_t count = 1;
  for (const auto d : a.tensors[id_of(a, input)].shape) count *= static_cast<std::size_t>(d);
  const bool int16 = a.tensors[id_of(a, input)].type == tosa::DType_INT16;
  for (const auto& codes : tosa_fb_test::every_code(int16 ? 16 : 8, count, !int16)) {
    const auto ya = tosa_fb_test::outputs_of(a, input, codes);
    const auto yb = tosa_fb_test::outputs_of(b, input, codes);
    REQUIRE(ya == yb);
  }
}

std::size_t ops_of(const bytes& b, tosa::Op code) {
  const auto m = qfold_tosa_fb::read_model(b);
  std::size_t n = 0;
  for (const auto& o : m.ops) n += o.code == code;
  return n;
}

}  // namespace

TEST_CASE("merge_rescales: a RESCALE pair becomes one RESCALE, equal on every int8 code") {
  const bytes in = tosa_fb_test::rescale_pair().build();
  const auto r = fold_file(in, {"fold_merge_rescales"});
  REQUIRE(r.sites.size() == 1);
  INFO(r.sites[0].message);
  REQUIRE(r.sites[0].folded);
  CHECK(r.sites[0].pass == "fold_merge_rescales");
  CHECK(r.sites[0].nodes == std::vector<std::string>{"RESCALE:'wide'", "RESCALE:'y'"});
  CHECK(ops_of(r.out, tosa::Op_RESCALE) == 1);
  CHECK(ops_of(r.out, tosa::Op_CONST) == 4);  // the pair's eight parameters went, four came
  same_function(in, r.out);
  // The merged RESCALE took the name of the one it replaced: the graph output is still 'y'.
  const auto m = qfold_tosa_fb::read_model(r.out);
  REQUIRE(m.outputs.size() == 1);
  CHECK(m.tensors[m.outputs[0]].name == "y");
  CHECK(m.version.major == 1);
  CHECK(m.version.minor == 0);
  // Folding the folded file again changes nothing: byte-identical.
  const auto again = fold_file(r.out);
  CHECK(again.out == r.out);
}

TEST_CASE("merge_rescales per channel and 16-bit, checked on every code") {
  file_builder f;
  f.input("x", {1, 2, 3});
  tosa_fb_test::rescale_options a;
  a.per_channel = true;
  a.multipliers = {1 << 30, 1518500250, 1 << 29};
  a.shifts = {20, 21, 22};
  a.input_zp = 7;
  f.rescale("x", "wide", tosa::DType_INT32, a);
  tosa_fb_test::rescale_options b;
  b.multipliers = {1 << 30};
  b.shifts = {40};
  b.output_zp = -4;
  f.rescale("wide", "y", tosa::DType_INT8, b);
  f.output("y");
  const bytes in = f.build();
  const auto r = fold_file(in, {"fold_merge_rescales"});
  REQUIRE(r.sites.size() == 1);
  INFO(r.sites[0].reason << ": " << r.sites[0].message);
  if (r.sites[0].folded) {
    same_function(in, r.out);
  } else {
    CHECK(r.out == in);  // a refusal leaves the file as it was
  }
}

TEST_CASE("DyT alpha: RESCALE, MUL, RESCALE, TABLE become one TABLE, equal on every code") {
  const bytes in = tosa_fb_test::dyt_alpha().build();
  const auto r = fold_file(in, {"fold_dyt_alpha"});
  REQUIRE(r.sites.size() == 1);
  INFO(r.sites[0].reason << ": " << r.sites[0].message);
  REQUIRE(r.sites[0].folded);
  CHECK(ops_of(r.out, tosa::Op_MUL) == 0);
  CHECK(ops_of(r.out, tosa::Op_RESCALE) == 0);
  CHECK(ops_of(r.out, tosa::Op_TABLE) == 1);
  CHECK(r.sites[0].bytes_removed > 0);
  same_function(in, r.out);
  const auto m = qfold_tosa_fb::read_model(r.out);
  CHECK(m.tensors[m.outputs[0]].name == "table");
  // The untouched graph input keeps its name, shape and place.
  CHECK(m.tensors[0].name == "x");
  CHECK(m.inputs == std::vector<std::uint32_t>{0});
}

TEST_CASE("the whole pipeline on a DyT block: alpha into the TABLE, affine into the conv") {
  for (const bool depthwise : {false, true})
    for (const bool padded : {false, true}) {
      INFO((depthwise ? "depthwise" : "conv2d") << (padded ? ", padded" : ""));
      tosa_fb_test::affine_options o;
      o.depthwise = depthwise;
      if (padded) o.pad = {1, 1, 1, 1};
      const bytes in = tosa_fb_test::dyt_affine(o).build();
      const auto r = fold_file(in);
      bool affine_folded = false;
      for (const auto& s : r.sites) {
        INFO(s.pass << ": " << s.reason << " " << s.message);
        if (s.pass == "fold_dyt_affine") affine_folded = s.folded;
      }
      CHECK(affine_folded == !padded);  // padded: gamma is not an identity, refused
      if (!padded) CHECK(ops_of(r.out, tosa::Op_MUL) == 0);
      same_function(in, r.out);
    }
}

TEST_CASE("DyT affine through a layout view; the pipeline before a MATMUL by a constant") {
  {
    tosa_fb_test::affine_options o;
    o.transpose = true;  // perms [0, 2, 1, 3] keep the channel axis last
    const bytes in = tosa_fb_test::dyt_affine(o).build();
    const auto r = fold_file(in, {"fold_dyt_affine"});
    REQUIRE(r.sites.size() == 1);
    INFO(r.sites[0].reason << ": " << r.sites[0].message);
    CHECK(r.sites[0].folded);
    CHECK(ops_of(r.out, tosa::Op_MUL) == 0);
    CHECK(ops_of(r.out, tosa::Op_TRANSPOSE) == 1);
    same_function(in, r.out);
  }
  for (const bool transpose : {false, true}) {
    // fold_dyt_affine folds into convolutions only: before a MATMUL (qfold's `linear`) the
    // other passes fold what they can, and the file computes what it did.
    tosa_fb_test::affine_options o;
    o.matmul = true;
    o.transpose = transpose;
    const bytes in = tosa_fb_test::dyt_affine(o).build();
    const auto r = fold_file(in);
    for (const auto& s : r.sites) CHECK(s.pass != "fold_dyt_affine");
    CHECK(ops_of(r.out, tosa::Op_MATMUL) == 1);
    same_function(in, r.out);
  }
}

TEST_CASE("compose_tables: two int8 TABLEs become one, equal on every code") {
  file_builder f;
  f.input("x", {1, 8});
  std::vector<std::int64_t> square(256), shifted(256);
  for (int i = 0; i < 256; ++i) {
    square[static_cast<std::size_t>(i)] = std::clamp((i - 128) * (i - 128) / 64 - 100, -128, 127);
    shifted[static_cast<std::size_t>(i)] = std::clamp(127 - i, -128, 127);
  }
  f.table("x", "a", square);
  f.table("a", "b", shifted);
  f.output("b");
  const bytes in = f.build();
  const auto r = fold_file(in, {"fold_compose_tables"});
  REQUIRE(r.sites.size() == 1);
  INFO(r.sites[0].reason << ": " << r.sites[0].message);
  REQUIRE(r.sites[0].folded);
  CHECK(ops_of(r.out, tosa::Op_TABLE) == 1);
  same_function(in, r.out);
}

TEST_CASE("collapse_to_table: RESCALE, ADD, CLAMP, RESCALE from int8 become one TABLE") {
  file_builder f;
  f.input("x", {1, 8});
  f.rescale("x", "wide", tosa::DType_INT32, tosa_fb_test::with_zero_points(-3, 0, 1 << 30, 24));
  f.constant("k", {1, 1}, tosa::DType_INT32, {5000});
  f.op(tosa::Op_ADD, {"wide", "k"}, "sum", {1, 8}, tosa::DType_INT32);
  f.clamp("sum", "c", -20000, 30000);
  f.rescale("c", "y", tosa::DType_INT8, tosa_fb_test::with_zero_points(0, 2, 1518500250, 38));
  f.output("y");
  const bytes in = f.build();
  const auto r = fold_file(in, {"fold_collapse_to_table"});
  REQUIRE(r.sites.size() == 1);
  INFO(r.sites[0].reason << ": " << r.sites[0].message);
  REQUIRE(r.sites[0].folded);
  CHECK(ops_of(r.out, tosa::Op_TABLE) == 1);
  CHECK(ops_of(r.out, tosa::Op_RESCALE) == 0);
  CHECK(ops_of(r.out, tosa::Op_CLAMP) == 0);
  same_function(in, r.out);
}

TEST_CASE("collapse_to_table from int16: an int16 TABLE and its RESCALE, on all 65,536 codes") {
  // round(x / 128) clamped: linear on every 128-code segment, so the 513 knots are exact.
  file_builder f;
  f.input("x", {1, 16}, tosa::DType_INT16);
  f.rescale("x", "wide", tosa::DType_INT32);
  f.rescale("wide", "narrow", tosa::DType_INT8, tosa_fb_test::with_zero_points(0, 0, 1 << 30, 37));
  f.clamp("narrow", "y", -100, 100);
  f.output("y");
  const bytes in = f.build();
  const auto r = fold_file(in, {"fold_collapse_to_table"});
  REQUIRE(r.sites.size() == 1);
  INFO(r.sites[0].reason << ": " << r.sites[0].message);
  REQUIRE(r.sites[0].folded);
  CHECK(ops_of(r.out, tosa::Op_TABLE) == 1);
  CHECK(ops_of(r.out, tosa::Op_RESCALE) == 1);
  CHECK(ops_of(r.out, tosa::Op_CLAMP) == 0);
  same_function(in, r.out);
  // 3x/512 is a staircase no interpolated table reproduces: refused, the file as it was.
  file_builder s;
  s.input("x", {1, 16}, tosa::DType_INT16);
  s.rescale("x", "wide", tosa::DType_INT32);
  s.constant("three", {1, 1}, tosa::DType_INT32, {3});
  s.mul("wide", "three", "tripled");
  s.rescale("tripled", "y", tosa::DType_INT8, tosa_fb_test::with_zero_points(0, 0, 1 << 30, 39));
  s.output("y");
  const bytes stairs = s.build();
  const auto refused = fold_file(stairs, {"fold_collapse_to_table"});
  REQUIRE(refused.sites.size() == 1);
  CHECK(refused.sites[0].reason == "not_exact");
  CHECK(refused.out == stairs);
}

TEST_CASE("refused sites leave the file byte-identical") {
  SECTION("the MUL has another reader (shared_output)") {
    tosa_fb_test::dyt_options o;
    o.extra_use = true;
    const bytes in = tosa_fb_test::dyt_alpha(o).build();
    const auto r = fold_file(in, {"fold_dyt_alpha"});
    REQUIRE(r.sites.size() == 1);
    CHECK(r.sites[0].reason == "shared_output");
    CHECK(r.out == in);
  }
  SECTION("INEXACT_ROUND is no function to fold") {
    file_builder f = tosa_fb_test::rescale_pair();
    f.ops.back().attribute = [](flatbuffers::FlatBufferBuilder& b) {
      return std::pair{
          tosa::Attribute_RescaleAttribute,
          tosa::CreateRescaleAttribute(b, true, tosa::RoundingMode_INEXACT_ROUND).Union()};
    };
    const bytes in = f.build();
    const auto r = fold_file(in);
    for (const auto& s : r.sites) CHECK_FALSE(s.folded);
    CHECK(r.out == in);
  }
  SECTION("a file with nothing to fold") {
    file_builder f;
    f.input("x", {4}, tosa::DType_INT32);
    f.op(tosa::Op_ADD, {"x", "x"}, "y", {4}, tosa::DType_INT32);
    f.output("y");
    const bytes in = f.build();
    const auto r = fold_file(in);
    CHECK(r.sites.empty());
    CHECK(r.out == in);
  }
}

TEST_CASE("a 1.1 file folds and keeps its version") {
  file_builder f = tosa_fb_test::rescale_pair();
  f.minor = 1;
  f.draft = true;
  const bytes in = f.build();
  const auto r = fold_file(in);
  const auto m = qfold_tosa_fb::read_model(r.out);
  CHECK(m.version.major == 1);
  CHECK(m.version.minor == 1);
  CHECK(m.version.draft);
  same_function(in, r.out);
}

TEST_CASE("untouched ops and tensors keep their names, order, data and attributes") {
  // A DyT alpha site, then a CLAMP and a conv the folds do not touch.
  file_builder f = tosa_fb_test::dyt_alpha();
  f.clamp("table", "cl", -50, 60);
  f.constant("w", {3, 1, 1, 8}, tosa::DType_INT8, std::vector<std::int64_t>(24, -2));
  f.constant("b", {3}, tosa::DType_INT32, {7, 8, 9});
  f.conv2d("cl", "w", "b", "conv", {1, 4, 4, 3}, {0, 0, 0, 0}, 4, 0);
  f.outputs = {"conv"};
  const bytes in = f.build();
  const auto r = fold_file(in, {"fold_dyt_alpha"});
  REQUIRE(r.sites.size() == 1);
  REQUIRE(r.sites[0].folded);
  const auto a = qfold_tosa_fb::read_model(in);
  const auto b = qfold_tosa_fb::read_model(r.out);
  // The ops after the site, in the same order with the same attributes (compared by value).
  const auto tail = [](const qfold_tosa_fb::model& m) {
    std::vector<std::string> ops;
    bool after = false;
    for (const auto& o : m.ops) {
      after = after || o.code == tosa::Op_CLAMP;
      if (!after) continue;
      std::string s = qfold_tosa_fb::op_name(o.code);
      for (const auto i : o.inputs) s += " " + std::string(m.tensors[i].name);
      if (o.fb->location() != nullptr && o.fb->location()->text() != nullptr)
        s += " @" + o.fb->location()->text()->str();
      if (const auto* c = o.fb->attribute_as_ClampAttribute()) {
        const auto* lo = c->min_val();
        const auto* hi = c->max_val();
        REQUIRE(lo != nullptr);
        REQUIRE(hi != nullptr);
        s += " clamp " + std::to_string(lo->size()) + ":" + std::to_string(*lo->data()) + " " +
             std::to_string(hi->size()) + ":" + std::to_string(*hi->data()) + " " +
             std::to_string(c->nan_mode());
      }
      if (const auto* c = o.fb->attribute_as_Conv2dAttribute()) {
        const auto* pad = c->pad();
        REQUIRE(pad != nullptr);
        s += " pad " + std::to_string(pad->size()) + " acc " + std::to_string(c->acc_type());
      }
      ops.push_back(s);
    }
    return ops;
  };
  CHECK(tail(a) == tail(b));
  CHECK_FALSE(tail(a).empty());
  // Every tensor of the input that is still there: same name, shape, type, data; same order.
  std::vector<std::string> kept_a, kept_b;
  for (const auto& t : b.tensors) kept_b.emplace_back(t.name);
  for (const auto& t : a.tensors) {
    const auto it = std::find_if(b.tensors.begin(), b.tensors.end(),
                                 [&](const auto& u) { return u.name == t.name; });
    if (it == b.tensors.end()) continue;
    kept_a.emplace_back(t.name);
    CHECK(it->shape == t.shape);
    CHECK(it->type == t.type);
    CHECK(std::equal(it->data.begin(), it->data.end(), t.data.begin(), t.data.end()));
  }
  std::vector<std::string> order_b;
  for (const auto& n : kept_b)
    if (std::find(kept_a.begin(), kept_a.end(), n) != kept_a.end()) order_b.push_back(n);
  CHECK(order_b == kept_a);
  CHECK(std::find(kept_a.begin(), kept_a.end(), "w") != kept_a.end());
}

// --- Failure injection: each mutation of a site fails once, in turn -------------------------

namespace {
struct failing {
  G& g;
  int fail_at = -1, calls = 0;
  void tick() {
    if (calls++ == fail_at) throw std::bad_alloc();
  }
};
}  // namespace

template <>
struct qfold::ir_traits<failing> {
  using F = failing;
  using T = qfold::ir_traits<G>;
  using node_id = G::node_id;
  static auto nodes(const F& f) { return T::nodes(f.g); }
  static auto kind(const F& f, node_id n) { return T::kind(f.g, n); }
  static auto operands(const F& f, node_id n) { return T::operands(f.g, n); }
  static auto use_count(const F& f, node_id n) { return T::use_count(f.g, n); }
  static auto constant(const F& f, node_id n) { return T::constant(f.g, n); }
  static auto int_constant(const F& f, node_id n) { return T::int_constant(f.g, n); }
  static auto output_shape(const F& f, node_id n) { return T::output_shape(f.g, n); }
  static auto element_type(const F& f, node_id n) { return T::element_type(f.g, n); }
  static auto rescale(const F& f, node_id n) { return T::rescale(f.g, n); }
  static auto mul_shift(const F& f, node_id n) { return T::mul_shift(f.g, n); }
  static auto clamp_attributes(const F& f, node_id n) { return T::clamp_attributes(f.g, n); }
  static auto qparams(const F& f, node_id n) { return T::qparams(f.g, n); }
  static auto qparams_shared(const F& f, node_id n) { return T::qparams_shared(f.g, n); }
  static auto conv_attributes(const F& f, node_id n) { return T::conv_attributes(f.g, n); }
  static auto quantized_conv(const F& f, node_id n) { return T::quantized_conv(f.g, n); }
  static auto view_axis(const F& f, node_id n, std::int64_t a) { return T::view_axis(f.g, n, a); }
  static auto constant_bytes(const F& f, node_id n) { return T::constant_bytes(f.g, n); }
  static node_id add_constant(F& f, std::span<const float> d, std::span<const std::int64_t> s) {
    f.tick();
    return T::add_constant(f.g, d, s);
  }
  static node_id add_int_constant(F& f, std::span<const std::int64_t> d,
                                  std::span<const std::int64_t> s, qfold::dtype t) {
    f.tick();
    return T::add_int_constant(f.g, d, s, t);
  }
  static node_id add_table(F& f, node_id in, std::span<const std::int8_t> v) {
    f.tick();
    return T::add_table(f.g, in, v);
  }
  static node_id add_table(F& f, node_id in, std::span<const std::int16_t> v) {
    f.tick();
    return T::add_table(f.g, in, v);
  }
  static node_id add_rescale(F& f, node_id in, const qfold::rescale_attributes& a,
                             std::span<const qfold::scale_factor> s) {
    f.tick();
    return T::add_rescale(f.g, in, a, s);
  }
  static void set_operand(F& f, node_id n, std::size_t i, node_id v) {
    f.tick();
    T::set_operand(f.g, n, i, v);
  }
  static void remove_last_operand(F& f, node_id n) { T::remove_last_operand(f.g, n); }
  static void replace_uses(F& f, node_id o, node_id v) {
    f.tick();
    T::replace_uses(f.g, o, v);
  }
  static void erase(F& f, node_id n) noexcept { T::erase(f.g, n); }
  static node_id take_name(F& f, node_id o, node_id v) { return T::take_name(f.g, o, v); }
  static void set_qparams(F& f, node_id n, const qfold::qparams& q) { T::set_qparams(f.g, n, q); }
  static void set_conv_input_zero_point(F& f, node_id n, std::int64_t zp) {
    f.tick();
    T::set_conv_input_zero_point(f.g, n, zp);
  }
};
static_assert(qfold::quantized_graph<failing>);

namespace {
// Runs `pass` on `in` with its n-th mutation failing, for n = 0, 1, ... until a run folds: each
// failed run reports an adapter_failure and writes the file back byte-identical. The folding run
// computes the original function. Returns the mutation calls of the folding run.
int every_mutation_fails(const bytes& in, const std::string& pass) {
  for (int fail_at = 0;; ++fail_at) {
    INFO(pass << ": mutation " << fail_at << " fails");
    const auto m = qfold_tosa_fb::read_model(in);
    G g(m);
    failing w{g, fail_at};
    const auto report =
        qfold::standard_pipeline<failing>().only(std::vector<std::string>{pass}).run(w);
    REQUIRE(report.sites.size() == 1);
    if (report.sites[0].folded()) {
      CHECK(w.calls <= fail_at);  // no call failed: done
      CHECK(g.changed());
      same_function(in, qfold_tosa_fb::write_bytes(g));
      return w.calls;
    }
    REQUIRE(report.sites[0].rejected);
    CHECK(report.sites[0].rejected->code == qfold::reason::adapter_failure);
    CHECK_FALSE(g.changed());
    CHECK(qfold_tosa_fb::write_bytes(g) == in);
    REQUIRE(fail_at < 40);
  }
}
}  // namespace

TEST_CASE("failure injection: every mutation of a site fails in turn; rolled back byte for byte") {
  CHECK(every_mutation_fails(tosa_fb_test::rescale_pair().build(), "fold_merge_rescales") == 2);
  CHECK(every_mutation_fails(tosa_fb_test::dyt_alpha().build(), "fold_dyt_alpha") == 2);
  CHECK(every_mutation_fails(tosa_fb_test::dyt_affine().build(), "fold_dyt_affine") >= 5);
  tosa_fb_test::affine_options dw;
  dw.depthwise = true;
  CHECK(every_mutation_fails(tosa_fb_test::dyt_affine(dw).build(), "fold_dyt_affine") >= 5);
}

TEST_CASE("set_conv_input_zero_point: in place, shared, and back to the file's bytes") {
  SECTION("a private zero point changes in place and back") {
    const bytes in = tosa_fb_test::dyt_affine().build();
    const auto m = qfold_tosa_fb::read_model(in);
    G g(m);
    const auto conv = id_of(m, "conv");
    g.set_conv_input_zero_point(conv, 9);
    CHECK(g.quantized_conv(conv)->input_zero_point == 9);
    CHECK(g.changed());
    g.set_conv_input_zero_point(conv, 0);
    CHECK_FALSE(g.changed());
    CHECK(qfold_tosa_fb::write_bytes(g) == in);
  }
  SECTION("a shared zero point gets a CONST of its own, and back") {
    file_builder f = tosa_fb_test::dyt_affine();
    f.constant("shared_zp", {1}, tosa::DType_INT8, {0});
    for (auto& op : f.ops)
      if (op.code == tosa::Op_CONV2D) op.inputs[3] = op.inputs[4] = "shared_zp";
    const bytes in = f.build();
    const auto m = qfold_tosa_fb::read_model(in);
    G g(m);
    const auto conv = id_of(m, "conv");
    g.set_conv_input_zero_point(conv, -5);
    CHECK(g.quantized_conv(conv)->input_zero_point == -5);
    CHECK(g.quantized_conv(conv)->weight_zero_points[0] == 0);  // the shared one is unchanged
    const bytes changed = qfold_tosa_fb::write_bytes(g);
    CHECK(changed != in);
    const auto cm = qfold_tosa_fb::read_model(changed);
    CHECK(G(cm).problems().empty());
    g.set_conv_input_zero_point(conv, 0);
    CHECK_FALSE(g.changed());
    CHECK(qfold_tosa_fb::write_bytes(g) == in);
  }
}

TEST_CASE("mutation points refuse what would break the file, changing nothing") {
  const bytes in = tosa_fb_test::dyt_alpha().build();
  const auto m = qfold_tosa_fb::read_model(in);
  G g(m);
  const auto x = id_of(m, "x"), act = id_of(m, "act"), mul = id_of(m, "mul"),
             table = id_of(m, "table"), out = id_of(m, "out");
  CHECK_THROWS(g.set_operand(act, 0, mul));                       // INT32 where INT8 goes
  CHECK_THROWS(g.set_operand(act, 1, x));                         // a hidden operand: fixed
  CHECK_THROWS(g.replace_uses(out, table));                       // the TABLE reads out: a cycle
  CHECK_THROWS(g.replace_uses(x, table));                         // x is upstream of table: a cycle
  CHECK_THROWS(g.add_table(mul, std::vector<std::int8_t>(256)));  // an INT32 input
  CHECK_THROWS(g.add_table(x, std::vector<std::int8_t>(255)));
  CHECK_THROWS(g.add_int_constant(std::vector<std::int64_t>{300}, std::vector<std::int64_t>{1},
                                  qfold::dtype::int8));
  qfold::rescale_attributes a;
  a.input_type = qfold::int_type::i32;  // x is INT8
  const qfold::scale_factor s{1 << 30, 30};
  CHECK_THROWS(g.add_rescale(x, a, std::span(&s, 1)));
  CHECK_THROWS(g.remove_last_operand(act));
  CHECK_THROWS(g.set_qparams(act, {}));
  g.erase(act);  // read by the MUL: not erased
  g.erase(x);    // a graph input: never erased
  CHECK_FALSE(g.changed());
  CHECK(qfold_tosa_fb::write_bytes(g) == in);
}

TEST_CASE("a cycle is refused even through depths that an earlier rewiring raised") {
  // x -> a -> b -> b2, and x -> d -> e (identity RESCALEs, INT8 to INT8)
  file_builder f;
  f.input("x", {4});
  f.rescale("x", "a", tosa::DType_INT8);
  f.rescale("a", "b", tosa::DType_INT8);
  f.rescale("b", "b2", tosa::DType_INT8);
  f.rescale("x", "d", tosa::DType_INT8);
  f.rescale("d", "e", tosa::DType_INT8);
  f.output("b2");
  f.output("e");
  const bytes in = f.build();
  const auto m = qfold_tosa_fb::read_model(in);
  G g(m);
  g.set_operand(id_of(m, "d"), 0, id_of(m, "b2"));  // d reads b2: e now depends on b2
  CHECK(g.operands(id_of(m, "d"))[0] == id_of(m, "b2"));
  const bytes once = qfold_tosa_fb::write_bytes(g);
  CHECK_THROWS_AS(g.set_operand(id_of(m, "b2"), 0, id_of(m, "e")), std::logic_error);
  CHECK_THROWS_AS(g.set_operand(id_of(m, "a"), 0, id_of(m, "e")), std::logic_error);
  CHECK(qfold_tosa_fb::write_bytes(g) == once);  // the refusals changed nothing
  CHECK_NOTHROW(qfold_tosa_fb::read_model(once));
}

TEST_CASE("chained DyT blocks: a site whose activation an earlier site replaced still folds") {
  // Two DyT alpha blocks, the second reading the first's TABLE: the first site replaces that
  // TABLE, so the second's activation (found in analysis) is an erased node by the time it is
  // applied; the adapter reads it as what replaced it (an equal value).
  file_builder f = tosa_fb_test::dyt_alpha();
  f.outputs.clear();
  f.constant("alpha2", {1, 1, 1, 1}, tosa::DType_INT8, {50});
  f.rescale("table", "act2", tosa::DType_INT32, tosa_fb_test::with_zero_points(1, 0));
  f.rescale("alpha2", "alpha2_rescale", tosa::DType_INT32);
  f.mul("act2", "alpha2_rescale", "mul2");
  f.rescale("mul2", "out2", tosa::DType_INT8,
            tosa_fb_test::with_zero_points(0, -2, 1518500250, 39));
  f.table("out2", "table2", tosa_fb_test::tanh_table());
  f.output("table2");
  const bytes in = f.build();
  const auto r = fold_file(in, {"fold_dyt_alpha"});
  REQUIRE(r.sites.size() == 2);
  for (const auto& s : r.sites) {
    INFO(s.reason << ": " << s.message);
    CHECK(s.folded);
  }
  CHECK(ops_of(r.out, tosa::Op_TABLE) == 2);
  CHECK(ops_of(r.out, tosa::Op_MUL) == 0);
  same_function(in, r.out);
}

TEST_CASE("an op whose attribute table the schema does not know: kept, but never rewritten") {
  file_builder f = tosa_fb_test::rescale_pair();
  f.outputs.clear();
  f.tensor("z", {1, 4}, tosa::DType_INT8);
  f.ops.push_back(
      {static_cast<tosa::Op>(90),
       {"y"},
       {"z"},
       [](flatbuffers::FlatBufferBuilder& b) {
         return std::pair{static_cast<tosa::Attribute>(100), tosa::CreateMulAttribute(b).Union()};
       },
       "later"});
  f.output("z");
  const bytes in = f.build();
  const auto m = qfold_tosa_fb::read_model(in);
  REQUIRE(m.unknown_attributes.size() == 1);
  G g(m);
  CHECK(g.kind(id_of(m, "z")) == qfold::op_kind::other);
  const auto sites = qfold_tosa_fb::fold(g, {"fold_merge_rescales"});
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].folded);
  CHECK(qfold_tosa_fb::unwritable_reason(g).find(
            "op #10 (Op 90 -> 'z') carries attribute type 100") != std::string::npos);
  CHECK_THROWS_AS(qfold_tosa_fb::write_bytes(g), qfold_tosa_fb::write_error);
  // Nothing folded: the file goes back as it was, unknown attribute included.
  G untouched(m);
  CHECK(qfold_tosa_fb::write_bytes(untouched) == in);
}
