// Reading values an adapter hands over in its IR's own form (int8 weights in the IR's buffer,
// multipliers and shifts as two arrays, a table as an operand) into the plain spans the fold
// layer takes. Storage the adapter owns is aliased where it already has qfold's form (int64
// values, scale_factor pairs); anything else is copied, checked, into the reader's own buffer,
// so no adapter needs a cache that outlives its call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "qfold/arith/apply_scale.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/detail/ranges.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/graph/pattern.hpp"
#include "qfold/graph/points.hpp"
#include "qfold/graph/vocabulary.hpp"

namespace qfold::detail {

// A range's integers as int64, aliased when the range views contiguous int64 storage it does not
// own (a span: the adapter's storage outlives the call); anything else, a vector returned by value
// included, is copied. False when an element does not fit (a uint64 above INT64_MAX).
template <class R>
constexpr bool read_integers(const R& r, std::vector<std::int64_t>& owned,
                             std::span<const std::int64_t>& out) {
  using V = std::ranges::range_value_t<R>;
  if constexpr (std::ranges::contiguous_range<R> && std::ranges::borrowed_range<R> &&
                std::same_as<V, std::int64_t>) {
    out = std::span<const std::int64_t>(std::ranges::data(r), std::ranges::size(r));
  } else {
    owned.clear();
    owned.reserve(std::ranges::size(r));
    for (const auto& v : r) {
      if (!std::in_range<std::int64_t>(v)) return false;
      owned.push_back(static_cast<std::int64_t>(v));
    }
    out = owned;
  }
  return true;
}

// An integer constant read through int_constant. Not copyable (`data` and `shape` may point
// into the object's own buffers); valid until the graph changes.
struct int_values {
  std::vector<std::int64_t> owned_data, owned_shape;
  std::span<const std::int64_t> data, shape;

  int_values() = default;
  int_values(const int_values&) = delete;  // a copy's spans would point into the original
  int_values& operator=(const int_values&) = delete;
  int_values(int_values&&) noexcept = default;  // a moved vector keeps its buffer
  int_values& operator=(int_values&&) noexcept = default;
};

// n's values, or nullopt when n is not an integer constant (or the adapter has no int_constant)
// or a value does not fit int64.
template <class G>
[[nodiscard]] constexpr std::optional<int_values> read_int_constant(const G& g, node_id_t<G> n) {
  if constexpr (!has_int_constant<G>) {
    return std::nullopt;
  } else {
    const auto c = ir_traits<G>::int_constant(g, n);
    if (!c) return std::nullopt;
    std::optional<int_values> r(std::in_place);
    if (!read_integers(c->data, r->owned_data, r->data) ||
        !read_integers(c->shape, r->owned_shape, r->shape))
      return std::nullopt;
    return r;
  }
}

template <class G>
[[nodiscard]] constexpr bool is_int_constant(const G& g, node_id_t<G> n) {
  if constexpr (has_int_constant<G>)
    return ir_traits<G>::int_constant(g, n).has_value();
  else
    return false;
}

// A type's name as the compiler spells it (g++ and clang++ both put "T = <name>" in
// __PRETTY_FUNCTION__), for messages that name an unsupported element type.
template <class T>
[[nodiscard]] constexpr std::string_view type_name() noexcept {
  const std::string_view f = __PRETTY_FUNCTION__;
  const std::size_t start = f.find("T = ");
  if (start == std::string_view::npos) return "an unknown type";
  const std::size_t end = f.find_first_of(";]", start);
  return f.substr(start + 4, end == std::string_view::npos ? end : end - start - 4);
}
// "a constant of element type <name>: qfold folds float32 and float64 only", in static storage.
template <class T>
struct unsupported_float {
  static constexpr std::string_view head = "a constant of element type ";
  static constexpr std::string_view tail = " (qfold folds float32 and float64 constants)";
  static constexpr std::size_t size = head.size() + type_name<T>().size() + tail.size();
  static constexpr std::array<char, size> text = [] {
    std::array<char, size> r{};
    std::size_t i = 0;
    for (const std::string_view s : {head, type_name<T>(), tail})
      for (const char c : s) r[i++] = c;
    return r;
  }();
  static constexpr std::string_view message{text.data(), size};
};

// A float constant read through constant(g, n) as float32 or float64 (T): aliased where the
// adapter lends contiguous storage of T, else copied. Not copyable (the spans may point into the
// object's own buffers); valid until the graph changes.
template <class T>
struct float_values {
  std::vector<T> owned;
  std::vector<std::int64_t> owned_shape;
  std::span<const T> data;
  std::span<const std::int64_t> shape;

  float_values() = default;
  float_values(const float_values&) = delete;
  float_values& operator=(const float_values&) = delete;
  float_values(float_values&&) noexcept = default;
  float_values& operator=(float_values&&) noexcept = default;
};
template <class T, class C>
constexpr std::optional<rejection> read_float_tensor(const C& c, float_values<T>& out) {
  using R = std::remove_cvref_t<decltype(c.data)>;
  using V = std::ranges::range_value_t<R>;
  if constexpr (!std::same_as<V, T>) {
    if constexpr (std::same_as<V, float> || std::same_as<V, double>)
      return rejection{reason::unsupported_type,
                       "float32 and float64 constants mixed in one site (the fold computes in the "
                       "weight's type)"};
    else
      return rejection{reason::unsupported_type, unsupported_float<V>::message};
  } else {
    if constexpr (std::ranges::contiguous_range<R> && std::ranges::borrowed_range<R>) {
      out.data = std::span<const T>(std::ranges::data(c.data), std::ranges::size(c.data));
    } else {
      out.owned.assign(std::ranges::begin(c.data), std::ranges::end(c.data));
      out.data = out.owned;
    }
    if (!read_integers(c.shape, out.owned_shape, out.shape))
      return rejection{reason::invalid_shape, "a constant's dims do not fit int64"};
    return std::nullopt;
  }
}
// n's values as T; nullopt with `bad` unset when n is not a constant, with `bad` set when its
// element type is not T (named when it is neither float32 nor float64).
template <class T, class G>
[[nodiscard]] constexpr std::optional<float_values<T>> read_float_constant(
    const G& g, node_id_t<G> n, std::optional<rejection>& bad) {
  const auto c = ir_traits<G>::constant(g, n);
  if (!c) return std::nullopt;
  std::optional<float_values<T>> r(std::in_place);
  if constexpr (is_tensor_variant<typename decltype(c)::value_type>::value)
    bad = std::visit([&](const auto& a) { return read_float_tensor(a, *r); }, *c);
  else
    bad = read_float_tensor(*c, *r);
  if (bad) return std::nullopt;
  return r;
}
// Whether n's constant holds float64 values (nullopt: not a constant).
template <class G>
[[nodiscard]] constexpr std::optional<bool> is_float64_constant(const G& g, node_id_t<G> n) {
  const auto c = ir_traits<G>::constant(g, n);
  if (!c) return std::nullopt;
  const auto is64 = [](const auto& a) {
    return std::same_as<std::ranges::range_value_t<std::remove_cvref_t<decltype(a.data)>>, double>;
  };
  if constexpr (is_tensor_variant<typename decltype(c)::value_type>::value)
    return std::visit(is64, *c);
  else
    return is64(*c);
}

// use(value) for the one value of a float constant as constant(g, n) handed it (a tensor or a
// std::variant of tensors), in its own type, float32 or float64; refused when it holds other
// than one value, or values of another type (named).
template <class C, class Use>
constexpr std::optional<rejection> with_float_scalar(const C& c, Use&& use) {
  if constexpr (is_tensor_variant<C>::value) {
    return std::visit([&](const auto& a) { return with_float_scalar(a, use); }, c);
  } else {
    using V = std::ranges::range_value_t<std::remove_cvref_t<decltype(c.data)>>;
    if constexpr (!std::same_as<V, float> && !std::same_as<V, double>) {
      return rejection{reason::unsupported_type, unsupported_float<V>::message};
    } else {
      if (std::ranges::size(c.data) != 1)
        return rejection{reason::not_scalar, "the constant is not a scalar"};
      for (const V v : c.data) return use(v);  // the one value (a loop: no begin() to check)
      return std::nullopt;
    }
  }
}

// The optional points, with their defaults when the adapter has none.
// qparams: none known (a pass then takes the type's whole range and checks no zero points).
template <class G>
[[nodiscard]] constexpr std::optional<qparams> qparams_of(const G& g, node_id_t<G> n) {
  if constexpr (has_qparams<G>)
    return ir_traits<G>::qparams(g, n);
  else
    return std::nullopt;
}
// mul_shift as an int: nullopt without the point (an integer MUL is then not folded), or when
// the adapter's value (any integer type, or convertible to int) does not fit an int.
template <class G>
[[nodiscard]] constexpr std::optional<int> mul_shift_of(const G& g, node_id_t<G> n) {
  if constexpr (has_mul_shift<G>) {
    const auto v = ir_traits<G>::mul_shift(g, n);
    if constexpr (std::integral<std::remove_cvref_t<decltype(v)>>)
      if (!std::in_range<int>(v)) return std::nullopt;
    return static_cast<int>(v);
  } else {
    return std::nullopt;
  }
}
// view_axis: nullopt without the point (a view's axes are unknown: the site is refused).
template <class G>
[[nodiscard]] constexpr std::optional<std::int64_t> view_axis_of(const G& g, node_id_t<G> n,
                                                                 std::int64_t axis) {
  if constexpr (has_view_axis<G>)
    return ir_traits<G>::view_axis(g, n, axis);
  else
    return std::nullopt;
}
// output_rank: nullopt without the point.
template <class G>
[[nodiscard]] constexpr std::optional<std::size_t> output_rank_of(const G& g, node_id_t<G> n) {
  if constexpr (has_output_rank<G>)
    return static_cast<std::size_t>(ir_traits<G>::output_rank(g, n));
  else
    return std::nullopt;
}
// constant_bytes: without the point, the element count times the size of the element type the
// adapter hands the values over in.
template <class C>
[[nodiscard]] constexpr std::size_t bytes_in(const C& c) {
  return std::ranges::size(c.data) * sizeof(std::ranges::range_value_t<decltype(c.data)>);
}
template <class G>
[[nodiscard]] constexpr std::size_t constant_bytes_of(const G& g, node_id_t<G> n) {
  if constexpr (has_constant_bytes<G>) {
    return ir_traits<G>::constant_bytes(g, n);
  } else {
    if constexpr (has_int_constant<G>)
      if (const auto c = ir_traits<G>::int_constant(g, n)) return bytes_in(*c);
    if constexpr (has_constant<G>) {
      if (const auto c = ir_traits<G>::constant(g, n)) {
        if constexpr (is_tensor_variant<typename decltype(c)::value_type>::value)
          return std::visit([](const auto& v) { return bytes_in(v); }, *c);
        else
          return bytes_in(*c);
      }
    }
    return 0;
  }
}

// A RESCALE read through rescale(g, n): the attributes and one scale_factor per channel. A
// malformed one (multiplier and shift counts that differ, values outside int32) reads as no
// scales at all, which every fold refuses (validate: the scale count).
struct rescale_values {
  rescale_attributes attributes{};
  std::vector<scale_factor> owned;
  std::span<const scale_factor> scales;

  rescale_values() = default;
  rescale_values(const rescale_values&) = delete;
  rescale_values& operator=(const rescale_values&) = delete;
  rescale_values(rescale_values&&) noexcept = default;
  rescale_values& operator=(rescale_values&&) noexcept = default;

  [[nodiscard]] constexpr rescale_view view() const noexcept { return {attributes, scales}; }
  constexpr operator rescale_view() const noexcept { return view(); }  // NOLINT: a view
};

template <class G>
requires has_rescale<G>
constexpr void read_rescale(const G& g, node_id_t<G> n, rescale_values& out) {
  const auto r = ir_traits<G>::rescale(g, n);
  out.attributes = r.attributes;
  out.owned.clear();
  out.scales = {};
  if constexpr (requires { r.scales; }) {
    using S = std::remove_cvref_t<decltype(r.scales)>;
    if constexpr (std::ranges::contiguous_range<S> && std::ranges::borrowed_range<S> &&
                  std::same_as<std::ranges::range_value_t<S>, scale_factor>) {  // a view: alias
      out.scales =
          std::span<const scale_factor>(std::ranges::data(r.scales), std::ranges::size(r.scales));
    } else {
      for (const auto& s : r.scales) out.owned.push_back(s);
      out.scales = out.owned;
    }
  } else {
    const std::size_t count = std::ranges::size(r.multipliers);
    if (std::ranges::size(r.shifts) != count) return;
    out.owned.reserve(count);
    auto s = std::ranges::begin(r.shifts);
    for (const auto& m : r.multipliers) {
      const auto shift = *s++;
      if (!std::in_range<std::int32_t>(m) || !std::in_range<int>(shift)) {
        out.owned.clear();
        return;
      }
      out.owned.push_back({static_cast<std::int32_t>(m), static_cast<int>(shift)});
    }
    out.scales = out.owned;
  }
}

// A TABLE's entries into `out`: table_values(g, n) when the adapter has that point, else the
// integer constant that is operand 1 of the TABLE (TOSA's form). False: not readable as integers.
template <class G>
[[nodiscard]] constexpr bool read_table(const G& g, node_id_t<G> n,
                                        std::vector<std::int64_t>& out) {
  std::span<const std::int64_t> values;
  if constexpr (calls_table_values<G>) {
    if (!read_integers(ir_traits<G>::table_values(g, n), out, values)) return false;
    if (values.data() != out.data()) out.assign(values.begin(), values.end());  // aliased
  } else {
    const auto t = operand(g, n, 1);
    if (!t) return false;
    if (ir_traits<G>::kind(g, *t) != op_kind::constant)  // TOSA requires a constant table
      throw parameter_not_constant("a TABLE's table is computed at run time");
    auto c = read_int_constant(g, *t);
    if (!c) return false;
    if (c->data.data() == c->owned_data.data()) {
      out = std::move(c->owned_data);
    } else {
      out.assign(c->data.begin(), c->data.end());
    }
  }
  return true;
}

// A 256-entry int8 table, or nullopt (another size, or an entry outside int8).
template <class G>
[[nodiscard]] constexpr std::optional<std::array<std::int8_t, 256>> read_table8(const G& g,
                                                                                node_id_t<G> n) {
  std::vector<std::int64_t> v;
  if (!read_table(g, n, v) || v.size() != 256) return std::nullopt;
  std::array<std::int8_t, 256> t{};
  for (std::size_t i = 0; i < 256; ++i) {
    if (!std::in_range<std::int8_t>(v[i])) return std::nullopt;
    t[i] = static_cast<std::int8_t>(v[i]);
  }
  return t;
}

// A TABLE's input: operand 0 (operand 1 may be the table itself).
template <class G>
[[nodiscard]] constexpr std::optional<node_id_t<G>> table_input(const G& g, node_id_t<G> n) {
  const std::size_t count = std::ranges::size(ir_traits<G>::operands(g, n));
  if constexpr (calls_table_values<G>) {
    if (count != 1) return std::nullopt;
  } else {
    if (count != 2) return std::nullopt;
  }
  return operand(g, n, 0);
}

}  // namespace qfold::detail
