// Errors as values: qfold::result<T> holds a T or a qfold::error (code + short message).
// A constexpr-friendly subset of std::expected; no exceptions, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <utility>

namespace qfold {

enum class errc : std::uint8_t {
  // apply_scale / MUL / requantize requirements
  negative_multiplier = 1,
  multiplier_out_of_range,
  shift_out_of_range,
  value_out_of_range,
  result_out_of_range,
  divisor_zero,
  // real-scale conversion
  scale_negative,
  scale_nan,
  scale_infinite,
  scale_too_large,
  scale_zero,
  // RESCALE attributes and operands (the spec's ERROR_IF list, plus sizes)
  illegal_type,
  illegal_zero_point,
  illegal_attributes,
  size_mismatch,
  // quantization parameters, tables and chains
  zero_point_out_of_range,
  empty_range,
  not_finite,
  not_exact,
  // sizes and shapes that come from data
  size_overflow,  // a product of dims, a count or an offset does not fit (or wraps)
  invalid_shape,  // a negative or missing dim, an empty tensor, or dims that disagree with the data
  // scales that are positive and finite but whose reciprocal (or conversion to the arithmetic
  // type of a convention) overflows: subnormal doubles, or doubles below float's normal range
  scale_subnormal,
};

// Stable, human readable name of a code (for reports and test output).
[[nodiscard]] constexpr std::string_view to_string(errc c) noexcept {
  constexpr std::string_view names[] = {
      "negative_multiplier", "multiplier_out_of_range",
      "shift_out_of_range",  "value_out_of_range",
      "result_out_of_range", "divisor_zero",
      "scale_negative",      "scale_nan",
      "scale_infinite",      "scale_too_large",
      "scale_zero",          "illegal_type",
      "illegal_zero_point",  "illegal_attributes",
      "size_mismatch",       "zero_point_out_of_range",
      "empty_range",         "not_finite",
      "not_exact",           "size_overflow",
      "invalid_shape",       "scale_subnormal",
  };
  const auto i = static_cast<std::size_t>(c) - 1;
  return i < std::size(names) ? names[i] : "unknown";  // std::size: from <string_view>
}

// `message` names the offending input; it always points at a string literal.
// `index` is the element position for errors raised by the batch (array) functions.
struct error {
  static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
  errc code{};
  std::string_view message{};
  std::size_t index = no_index;

  friend constexpr bool operator==(const error& a, const error& b) noexcept {
    return a.code == b.code;
  }
};

namespace detail {
// Not constexpr on purpose: reaching it during constant evaluation is a compile error whose
// diagnostic names this function; at run time it stops the program instead of returning garbage.
[[noreturn]] inline void precondition_failed(const char* /*what*/) noexcept { std::abort(); }

constexpr void expects(bool ok, const char* what) noexcept {
  if (!ok) precondition_failed(what);
}
}  // namespace detail

template <class T>
class [[nodiscard]] result {
  static_assert(std::is_default_constructible_v<T> && !std::is_reference_v<T>);

 public:
  using value_type = T;
  using error_type = qfold::error;

  constexpr result() = default;
  constexpr result(T v) : value_(std::move(v)), ok_(true) {}   // NOLINT: implicit like expected
  constexpr result(qfold::error e) : error_(e), ok_(false) {}  // NOLINT

  [[nodiscard]] constexpr bool has_value() const noexcept { return ok_; }
  constexpr explicit operator bool() const noexcept { return ok_; }

  [[nodiscard]] constexpr const T& value() const& {
    detail::expects(ok_, "result::value() called on an error");
    return value_;
  }
  [[nodiscard]] constexpr T& value() & {
    detail::expects(ok_, "result::value() called on an error");
    return value_;
  }
  [[nodiscard]] constexpr const T& operator*() const& { return value(); }
  [[nodiscard]] constexpr T& operator*() & { return value(); }
  constexpr const T* operator->() const { return &value(); }
  constexpr T* operator->() { return &value(); }

  [[nodiscard]] constexpr const qfold::error& error() const& {
    detail::expects(!ok_, "result::error() called on a value");
    return error_;
  }
  template <class U>
  [[nodiscard]] constexpr T value_or(U&& fallback) const& {
    return ok_ ? value_ : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  T value_{};
  qfold::error error_{};
  bool ok_ = false;
};

template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  using error_type = qfold::error;

  constexpr result() noexcept : ok_(true) {}
  constexpr result(qfold::error e) noexcept : error_(e), ok_(false) {}  // NOLINT

  [[nodiscard]] constexpr bool has_value() const noexcept { return ok_; }
  constexpr explicit operator bool() const noexcept { return ok_; }
  constexpr void value() const { detail::expects(ok_, "result::value() called on an error"); }
  [[nodiscard]] constexpr const qfold::error& error() const& {
    detail::expects(!ok_, "result::error() called on a value");
    return error_;
  }

 private:
  qfold::error error_{};
  bool ok_ = true;
};

// Shorthand used by the library: `return fail(errc::x, "what")`.
[[nodiscard]] constexpr error fail(errc code, std::string_view message,
                                   std::size_t index = error::no_index) noexcept {
  return error{code, message, index};
}

}  // namespace qfold
