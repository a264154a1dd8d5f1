// Hostile input for the exact/ layer (issue 11): domains of any size up to the whole int64 range,
// empty and inverted domains, unknown element types, maps and point sets whose lines leave int64.
// Each case asserts the exact errc (or the exact refusal: no certificate, no classification),
// derived in the comment next to it; sizes and deviations are recomputed here in 128 bits.
#include <array>
#include <cstdint>
#include <limits>
#include <qfold/exact/classify.hpp>
#include <qfold/exact/domain.hpp>
#include <qfold/exact/merge.hpp>
#include <qfold/exact/synthesize.hpp>
#include <span>
#include <vector>

#include "catch_compat.hpp"
#include "exact_support.hpp"

namespace {
namespace chain = qfold::chain;
using qfold::errc;
__extension__ typedef __int128 i128;
constexpr i64 i64_min = std::numeric_limits<i64>::min(), i64_max = std::numeric_limits<i64>::max();
constexpr domain whole{i64_min, i64_max};

const std::array<i64, 1> zero{0};
const qfold::rescale_space int8_space{.input_zero_points = zero};
const qfold::rescale_space int32_space{
    .input_type = int_type::i32, .output_type = int_type::i32, .input_zero_points = zero};

errc merge_error(domain d, std::span<const chain::step> steps, const qfold::rescale_space& s) {
  const auto r = qfold::merge_rescales(d, steps, s);
  REQUIRE_FALSE(r.has_value());
  return r.error().code;
}

TEST_CASE("bad input: domain sizes never wrap", "[exact][bad_input]") {
  SECTION("the whole int64 range has 2^64 codes: size() saturates, it is not 0") {
    CHECK(whole.count() == static_cast<qfold::detail::wide_uint>(1) << 64);
    CHECK(whole.size() == std::numeric_limits<std::size_t>::max());
    CHECK_FALSE(whole.empty());
    CHECK_FALSE(whole.enumerable());
  }
  SECTION("2^64 - 1 codes fit size_t exactly") {
    const domain d{i64_min, i64_max - 1};
    CHECK(d.size() == std::numeric_limits<std::size_t>::max());
    CHECK(d.count() == std::numeric_limits<std::size_t>::max());
  }
  SECTION("inverted (lo > hi) is empty at any distance") {
    for (const domain d : {domain{5, 4}, domain{i64_max, i64_min}, domain{1, -1}}) {
      CHECK(d.count() == 0);
      CHECK(d.size() == 0);
      CHECK(d.empty());
      CHECK_FALSE(d.enumerable());
    }
  }
  SECTION("65,536 codes are enumerable, 65,537 are not") {
    CHECK(qfold::int16_domain.enumerable());
    CHECK_FALSE(domain{-32768, 32768}.enumerable());
  }
}

TEST_CASE("bad input: checked::tabulate", "[exact][bad_input]") {
  const auto id = [](i64 x) { return x; };
  SECTION("the whole int64 range") {
    const auto t = qfold::checked::tabulate(whole, id);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == errc::size_overflow);
  }
  SECTION("the int32 range: 2^32 codes") {
    const auto t = qfold::checked::tabulate(domain{-2147483648LL, 2147483647LL}, id);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == errc::size_overflow);
  }
  SECTION("an inverted domain") {
    const auto t = qfold::checked::tabulate(domain{1, 0}, id);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == errc::empty_range);
  }
  SECTION("four codes at the top of int64") {
    const auto t = qfold::checked::tabulate(domain{i64_max - 3, i64_max}, id);
    REQUIRE(t);
    CHECK(*t == std::vector<i64>{i64_max - 3, i64_max - 2, i64_max - 1, i64_max});
  }
}

TEST_CASE("bad input: merge_rescales domains", "[exact][bad_input]") {
  SECTION("the whole int64 domain: 2^64 codes, once reported as size 0 with deviation 0") {
    CHECK(merge_error(whole, {}, int32_space) == errc::size_overflow);
  }
  SECTION("the whole int32 domain: 2^32 codes are too many to enumerate") {
    CHECK(merge_error({-2147483648LL, 2147483647LL}, {}, int32_space) == errc::size_overflow);
  }
  SECTION("65,537 codes") {
    CHECK(merge_error({0, 65536}, {}, int32_space) == errc::size_overflow);
  }
  SECTION("an empty domain") { CHECK(merge_error({0, -1}, {}, int8_space) == errc::empty_range); }
  SECTION("an inverted domain far apart") {
    CHECK(merge_error({i64_max, i64_min}, {}, int8_space) == errc::empty_range);
  }
  SECTION("exactly 65,536 codes merge (the limit is inclusive)") {
    const qfold::rescale_space s16{.input_type = int_type::i16, .output_type = int_type::i16};
    const auto r = qfold::merge_rescales(qfold::int16_domain, {}, s16);
    REQUIRE(r);
    CHECK(r->exact());  // the empty chain is the identity: (65536, 16) as in exact_synthesize
  }
}

TEST_CASE("bad input: merge_rescales element types and deviations", "[exact][bad_input]") {
  SECTION("a RESCALE step whose int_type is not an enumerator") {
    const std::vector<chain::step> steps{
        chain::rescale{{.input_type = static_cast<int_type>(7)}, {1 << 30, 30}}};
    const auto r = qfold::merge_rescales(qfold::int8_domain, steps, int8_space);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::illegal_type);
    CHECK(r.error().index == 0);  // the step
  }
  SECTION("a space whose output type is not an enumerator") {
    const qfold::rescale_space bad{.output_type = static_cast<int_type>(200)};
    CHECK(merge_error(qfold::int8_domain, {}, bad) == errc::illegal_type);
  }
  SECTION("a chain ending at INT64_MIN: the deviation is taken in 128 bits") {
    // A clamp to [INT64_MIN, INT64_MIN] maps every int8 code to INT64_MIN. No int8 RESCALE gives
    // that. The naive merge (a chain that is not only RESCALEs) uses the end points' slope, 0:
    // multiplier 0, so n = 0 and |0 - INT64_MIN| = 2^63, saturated to INT64_MAX (in 64 bits the
    // difference overflowed). Recomputed below with the reference, in 128 bits.
    const std::vector<chain::step> steps{chain::clamp{i64_min, i64_min}};
    const auto r = qfold::merge_rescales(qfold::int8_domain, steps, int8_space);
    REQUIRE(r);
    CHECK_FALSE(r->exact());
    i128 worst = 0;
    for (i64 x = -128; x <= 127; ++x) {
      const auto n =
          ref_rescale(r->naive.attributes, r->naive.scale.multiplier, r->naive.scale.shift, x);
      REQUIRE(n);
      worst = std::max(worst, i128{*n} - i64_min);
    }
    CHECK(i128{r->max_deviation} == std::min<i128>(worst, i64_max));
    CHECK(r->max_deviation == i64_max);
    REQUIRE(r->first_difference);
    CHECK(r->first_difference->input == -128);
    CHECK(r->first_difference->expected == i64_min);
  }
}

TEST_CASE("bad input: synthesize_rescale and rescale_shifts", "[exact][bad_input]") {
  const std::vector<i64> y3{0, 1, 2};
  SECTION("an input type that is not an enumerator: no certificate, no interval") {
    qfold::rescale_space s{.input_type = static_cast<int_type>(64)};
    CHECK_FALSE(qfold::synthesize_rescale(domain{0, 2}, y3, s));
    for (const auto& m : qfold::rescale_shifts(domain{0, 2}, y3, s, 0, 0, false)) CHECK(m.empty());
  }
  SECTION("a domain outside the input type (int8 at the top of int64)") {
    CHECK_FALSE(qfold::synthesize_rescale(domain{i64_max - 2, i64_max}, y3, int8_space));
  }
  SECTION("the whole int64 domain with any map") {
    CHECK_FALSE(qfold::synthesize_rescale(whole, y3, int32_space));
  }
  SECTION("an inverted domain with an empty map") {
    CHECK_FALSE(qfold::synthesize_rescale(domain{3, 2}, {}, int8_space));
  }
  SECTION("input zero points at the int64 extremes are skipped, not subtracted") {
    // izp INT64_MIN would overflow d.lo - izp; it is illegal for int8 and never evaluated, so
    // only izp 0 is tried: y = x is the identity (256, 8) found with it.
    const std::array<i64, 3> izps{i64_min, i64_max, 0};
    const qfold::rescale_space s{.input_zero_points = izps};
    const auto y = qfold::tabulate(qfold::int8_domain, [](i64 x) { return x; });
    const auto c = qfold::synthesize_rescale(qfold::int8_domain, y, s);
    REQUIRE(c);
    CHECK(c->attributes.input_zp == 0);
    CHECK(ref_reproduces(qfold::int8_domain, y, *c));
  }
}

TEST_CASE("bad input: classify and classify_channels", "[exact][bad_input]") {
  SECTION("channels * size that wraps to the span length: once read past the span") {
    // (2^63 + 1) channels of 2 codes: 2^64 + 2 wraps to 2, the length of the values.
    const std::vector<i64> two{1, 2};
    CHECK(qfold::classify_channels(domain{0, 1}, two, (std::size_t{1} << 63) + 1).empty());
  }
  SECTION("the whole int64 domain with a 3-value map: sizes differ") {
    const std::vector<i64> y3{0, 1, 2};
    CHECK(qfold::classify(whole, y3).kind == qfold::map_kind::none);
  }
  SECTION("a line beyond int64: the witness never agrees with the map") {
    // y = (0, INT64_MAX, INT64_MAX) on 0..2: the line through the first two has slope INT64_MAX
    // and reaches 2 INT64_MAX at 2, beyond int64 on the map's side, so the witness reports the
    // other extreme, INT64_MIN, not the saturated INT64_MAX that would equal the map.
    const std::vector<i64> y{0, i64_max, i64_max};
    const auto c = qfold::classify(domain{0, 2}, y);
    CHECK(c.kind == qfold::map_kind::none);
    REQUIRE(c.affine_miss);
    CHECK(c.affine_miss->input == 2);
    CHECK(c.affine_miss->expected == i64_max);
    CHECK(c.affine_miss->actual == i64_min);
  }
  SECTION("an unknown type in the space: no certificate and no RESCALE candidate") {
    const std::vector<i64> y{0, 1, 2};
    const qfold::rescale_space s{.output_type = static_cast<int_type>(250)};
    const auto c = qfold::classify(domain{0, 2}, y, &s);
    CHECK(c.kind == qfold::map_kind::identity);  // y = x: found without any RESCALE
    CHECK_FALSE(c.rescale);
    CHECK_FALSE(c.rescale_miss);
  }
}

TEST_CASE("bad input: fit_line beyond int64", "[exact][bad_input]") {
  SECTION("slope 2^64 - 1: no int64 line; the miss is the second point") {
    const std::vector<i64> x{0, 1}, y{i64_min, i64_max};
    const auto f = qfold::fit_line(x, y);
    CHECK_FALSE(f.line);
    REQUIRE(f.miss);
    CHECK(f.miss->input == 1);
    CHECK(f.miss->expected == i64_max);
    CHECK(f.miss->actual == i64_min);  // the constant through the first point
  }
  SECTION("slope 4 but offset 5 * 2^62: no int64 line") {
    const i64 x0 = -(i64{1} << 62);
    const std::vector<i64> x{x0, x0 + 1}, y{i64{1} << 62, (i64{1} << 62) + 4};
    const auto f = qfold::fit_line(x, y);
    CHECK_FALSE(f.line);
    REQUIRE(f.miss);
    CHECK(f.miss->input == x0 + 1);
    CHECK(f.miss->actual == i64{1} << 62);
  }
  SECTION("one point at INT64_MIN: slope 1 needs offset 1 + 2^63, so slope 0") {
    const std::vector<i64> x{i64_min}, y{1};
    const auto f = qfold::fit_line(x, y);
    REQUIRE(f.line);
    CHECK(*f.line == qfold::affine_map{0, 1});
  }
  SECTION("x not increasing, and sizes that differ") {
    const std::vector<i64> x{3, 3}, y{1, 1}, y1{1};
    CHECK_FALSE(qfold::fit_line(x, y).line);
    CHECK_FALSE(qfold::fit_line(x, y).miss);
    CHECK_FALSE(qfold::fit_line(x, y1).line);
  }
}

}  // namespace
