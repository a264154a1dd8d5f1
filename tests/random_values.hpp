// Random test inputs biased toward interesting magnitudes, from one generator per seed (each test
// file picks its own, so its sequence does not depend on the others).
#pragma once

#include <cstdint>
#include <limits>
#include <random>

namespace test_random {

template <std::uint64_t Seed>
struct source {
  static std::mt19937_64& rng() {
    static std::mt19937_64 gen(Seed);
    return gen;
  }
  static std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng());
  }
  // A random bit length, then a random value of about that length, either sign.
  static std::int64_t random_bits(int max_bits) {
    const int bits = static_cast<int>(uniform(0, max_bits - 1));
    const std::int64_t v =
        uniform(0, (std::int64_t{1} << bits) - 1) | (std::int64_t{1} << bits) >> 1;
    return uniform(0, 1) != 0 ? v : -v - uniform(0, 1);
  }
  static std::int32_t random_int32() {
    return uniform(0, 3) == 0
               ? static_cast<std::int32_t>(uniform(std::numeric_limits<std::int32_t>::min(),
                                                   std::numeric_limits<std::int32_t>::max()))
               : static_cast<std::int32_t>(random_bits(32));
  }
};

}  // namespace test_random
