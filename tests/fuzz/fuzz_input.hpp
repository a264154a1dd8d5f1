// The fuzz targets' reader: the fuzzer's bytes taken in order as little-endian fields, and what
// a finding does. Reads past the end give zeros, so every input (even an empty one) is a case.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace fuzz {

class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint64_t bits(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      const std::uint64_t b = at_ < size_ ? data_[at_] : 0;
      ++at_;
      v |= b << (8 * i);
    }
    return v;
  }
  std::uint8_t byte() { return static_cast<std::uint8_t>(bits(1)); }
  bool flag() { return (byte() & 1) != 0; }
  // Any bit pattern of the type.
  template <class T>
  T raw() {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    const std::uint64_t v = bits(static_cast<int>(sizeof(T)));
    if constexpr (sizeof(T) == 8) {
      return std::bit_cast<T>(v);
    } else if constexpr (sizeof(T) == 4) {
      return std::bit_cast<T>(static_cast<std::uint32_t>(v));
    } else if constexpr (sizeof(T) == 2) {
      return std::bit_cast<T>(static_cast<std::uint16_t>(v));
    } else {
      return std::bit_cast<T>(static_cast<std::uint8_t>(v));
    }
  }
  std::int64_t i64() { return static_cast<std::int64_t>(bits(8)); }
  std::int32_t i32() { return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits(4))); }
  std::int64_t i16() { return static_cast<std::int16_t>(static_cast<std::uint16_t>(bits(2))); }
  std::int64_t i8() { return static_cast<std::int8_t>(byte()); }
  float f32() { return std::bit_cast<float>(static_cast<std::uint32_t>(bits(4))); }
  double f64() { return std::bit_cast<double>(bits(8)); }
  std::size_t count(std::size_t max) { return byte() % (max + 1); }  // 0..max
  // A value of chosen magnitude: one byte gives a bit count b, then a raw integer shifted
  // arithmetically down to |v| < 2^b, so that the edges of every width are common.
  std::int64_t sized_i64() {
    const int b = byte() & 63;
    return i64() >> (63 - b);
  }
  std::int32_t sized_i32() {
    const int b = byte() & 31;
    return i32() >> (31 - b);
  }
  // A shift count: -64..190 from one byte, or (byte 0xFF) any int.
  int shift() {
    const std::uint8_t b = byte();
    return b == 0xFF ? i32() : static_cast<int>(b) - 64;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// A finding: the message, then abort (libFuzzer saves the input and prints the stack).
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "qfold fuzz finding: %s\n", what);
  std::abort();
}
inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

}  // namespace fuzz
