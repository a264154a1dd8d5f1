// Table types and lookups against the TOSA spec's TABLE pseudocode, restated here independently
// (index = (x + 32768) >> 7, frac = x & 0x7F, (base << 7) + slope * frac, slope REQUIRE) and
// TFLite's LUTLookup; exhaustive over every int16 code for random and extreme tables.
#include <algorithm>
#include <array>
#include <cstdint>
#include <qfold/qfold.hpp>
#include <random>

#include "catch_compat.hpp"

namespace {
// The spec's apply_lookup_s, written with division instead of shifts and masks.
struct spec_lookup {
  bool ok;
  std::int64_t value;
};
spec_lookup spec_table_int16(const qfold::int16_table& t, std::int64_t x) {
  const std::int64_t offset = x + 32768;  // 0..65535
  const std::int64_t index = offset / 128;
  const std::int64_t frac = offset % 128;  // == x & 0x7F since 32768 is a multiple of 128
  const std::int64_t base = t.values[static_cast<std::size_t>(index)];
  const std::int64_t slope = t.values[static_cast<std::size_t>(index + 1)] - base;
  if (slope < -32768 || slope > 32767) return {false, 0};
  return {true, base * 128 + slope * frac};
}
// TFLite LUTLookup(int16): base + round_half_up(slope * frac / 128).
std::int64_t tflite_table_int16(const qfold::int16_table& t, std::int64_t x) {
  const std::int64_t offset = x + 32768, index = offset / 128, frac = offset % 128;
  const std::int64_t base = t.values[static_cast<std::size_t>(index)];
  const std::int64_t slope = t.values[static_cast<std::size_t>(index + 1)] - base;
  const std::int64_t num = slope * frac + 64;  // floor division by 128
  return base + (num >= 0 ? num / 128 : -((-num + 127) / 128));
}
}  // namespace

TEST_CASE("int8 tables: TOSA code order and TFLite's uint8-cast order", "[table]") {
  qfold::int8_table t;
  for (std::size_t i = 0; i < 256; ++i)
    t.values[i] = static_cast<std::int8_t>(127 - static_cast<int>(i));
  CHECK(t(-128) == 127);  // entry 0 is code -128
  CHECK(t(127) == -128);
  const auto tfl = qfold::to_tflite_order(t);
  CHECK(tfl[0] == t(0));       // TFLite entry 0 is code 0 ...
  CHECK(tfl[127] == t(127));   // ... entry 127 code 127 ...
  CHECK(tfl[128] == t(-128));  // ... entry 128 code -128
  CHECK(tfl[255] == t(-1));
  CHECK(qfold::from_tflite_order(tfl) == t);
  const qfold::uint8_table u{};
  CHECK(qfold::uint8_table::index_of(0) == 0);
  CHECK(u(255) == 0);
}

TEST_CASE("int16 TABLE lookup equals the spec on every code, and TFLite's rounded lookup",
          "[table]") {
  std::mt19937 gen(3);
  for (int round = 0; round < 40; ++round) {
    qfold::int16_table t;
    std::int32_t v = std::uniform_int_distribution<std::int32_t>(-32768, 32767)(gen);
    for (auto& k : t.values) {  // a random walk with legal slopes, or fully random (illegal) knots
      if (round % 4 == 3) {
        k = static_cast<std::int16_t>(std::uniform_int_distribution<int>(-32768, 32767)(gen));
        continue;
      }
      v = std::clamp(v + std::uniform_int_distribution<std::int32_t>(-300, 300)(gen), -32768,
                     32767);
      k = static_cast<std::int16_t>(v);
    }
    bool all_ok = true;
    for (std::int32_t x = -32768; x <= 32767; ++x) {
      const auto x16 = static_cast<std::int16_t>(x);
      const spec_lookup s = spec_table_int16(t, x);
      const auto q = qfold::checked::tosa_lookup(t, x16);
      REQUIRE(q.has_value() == s.ok);
      if (s.ok) REQUIRE(*q == s.value);
      all_ok = all_ok && s.ok;
      REQUIRE(qfold::tflite_lookup(t, x16) == tflite_table_int16(t, x));
    }
    CHECK(qfold::validate(t).has_value() == all_ok);
  }
}

TEST_CASE("int16 TABLE edge cases of tosa-semantics.md 7.11", "[table][edge]") {
  qfold::int16_table t;
  for (std::size_t i = 0; i < 513; ++i)
    t.values[i] = static_cast<std::int16_t>(static_cast<int>(i) * 100 - 25600);
  // -32768: index 0, frac 0 -> knot 0 << 7. 32767: index 511, frac 127 -> (k511 << 7) + 127 * 100.
  CHECK(qfold::tosa_lookup(t, -32768) == -25600 * 128);
  CHECK(qfold::tosa_lookup(t, 32767) == (511 * 100 - 25600) * 128 + 127 * 100);
  // Negative inputs: -1 = 0xFFFF: index 255, frac 127.
  CHECK(qfold::tosa_lookup(t, -1) == (255 * 100 - 25600) * 128 + 127 * 100);
  // Slope REQUIRE: base -32768, next 32767 is a slope of 65535.
  t.values[10] = -32768;
  t.values[11] = 32767;
  CHECK(qfold::checked::tosa_lookup(t, static_cast<std::int16_t>(-32768 + 10 * 128)).error().code ==
        qfold::errc::value_out_of_range);
  CHECK(qfold::validate(t).error().index == 10);
}
