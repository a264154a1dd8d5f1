// Shared plumbing of the qfold Python bindings: qfold::error as a Python exception, option
// strings, and conversion of any array-like into a contiguous numpy array of one element type.
#pragma once

// GCC 12's -Wnull-dereference flags std containers inlined into pybind11's own code
// (detail/class.h clear_patients); the warning is about pybind11, not qfold, so it is off for
// the headers' region only. Include this header first so that the std headers land in it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#pragma GCC diagnostic pop

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <qfold/arith/rescale.hpp>
#include <qfold/arith/result.hpp>
#include <qfold/arith/scale_derivation.hpp>
#include <qfold/exact/synthesize.hpp>
#include <qfold/fold/rejection.hpp>
#include <qfold/quant/qparams.hpp>
#include <qfold/table/chain.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace qfold_py {
namespace py = pybind11;

// A qfold::error on its way to Python; module.cpp translates it into the qfold.Error subclass of
// its code, with .code, .message and .index.
struct error_exception : std::exception {
  qfold::errc code;
  std::string message;
  std::size_t index;
  error_exception(qfold::errc c, std::string m, std::size_t i = qfold::error::no_index)
      : code(c), message(std::move(m)), index(i) {}
  [[nodiscard]] const char* what() const noexcept override { return message.c_str(); }
};

[[noreturn]] inline void raise(const qfold::error& e) {
  throw error_exception(e.code, std::string(e.message), e.index);
}
[[noreturn]] inline void raise(qfold::errc c, std::string message,
                               std::size_t index = qfold::error::no_index) {
  throw error_exception(c, std::move(message), index);
}
template <class T>
T value_or_raise(const qfold::result<T>& r) {
  if (!r) raise(r.error());
  return *r;
}
inline void check(const qfold::result<void>& r) {
  if (!r) raise(r.error());
}

// A rejection as a Python value (qfold.Rejection); refusals are never exceptions.
struct py_rejection {
  qfold::reason code{};
  std::string message;
  std::size_t index = qfold::rejection::no_index;
};
inline py::object to_python(const qfold::rejection& r) {
  return py::cast(py_rejection{r.code, std::string(r.message), r.index});
}

// An option spelled as a string ("half_even", "i8", ...); anything else names the choices.
template <class E>
E parse_option(std::string_view s, std::initializer_list<std::pair<std::string_view, E>> choices,
               std::string_view what, qfold::errc code = qfold::errc::illegal_attributes) {
  std::string names;
  for (const auto& [name, value] : choices) {
    if (name == s) return value;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  raise(code,
        std::string(what) + ": unknown option '" + std::string(s) + "' (one of " + names + ")");
}

qfold::dtype parse_dtype(std::string_view s, std::string_view what);
std::string_view dtype_name(qfold::dtype t);
// A dtype given as a string, a numpy dtype or a numpy scalar type: its name ("int8", ...).
std::string dtype_string(py::handle d, std::string_view what = "dtype");

// An argument of the wrong Python type is a TypeError that names it and the type expected:
// bool_arg takes a bool (or numpy.bool_), str_arg a str.
bool bool_arg(py::handle obj, std::string_view what);
std::string str_arg(py::handle obj, std::string_view what);
[[noreturn]] void raise_type(py::handle obj, std::string_view what, std::string_view expected);

// A MemoryError naming the argument (numpy could not allocate an array qfold needs for it).
[[noreturn]] void raise_memory(std::string_view what, std::string_view detail);
// A new array of this shape, or a MemoryError naming `what`.
template <class T>
py::array_t<T, py::array::c_style> new_array(const std::vector<py::ssize_t>& shape,
                                             std::string_view what) {
  try {
    return py::array_t<T, py::array::c_style>(shape);
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_MemoryError)) throw;
    raise_memory(what, "cannot allocate the result");
  }
}
// a as a C-contiguous array of T, copied when it is not one already: pybind11's ensure(), whose
// null result (numpy could not allocate the copy of, say, a huge broadcast view) is a MemoryError
// naming `what` instead of a null array dereferenced later.
template <class T>
py::array_t<T, py::array::c_style> contiguous(const py::array& a, std::string_view what) {
  auto r = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!r) raise_memory(what, "cannot make a contiguous copy of the array");
  return r;
}
// A copy of a in memory only qfold references: what a call reads after releasing the GIL, when
// another thread may write the caller's buffer.
template <class T>
py::array_t<T, py::array::c_style> owned_copy(const py::array_t<T, py::array::c_style>& a,
                                              std::string_view what) {
  std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
  auto r = new_array<T>(shape, what);
  if (a.size() != 0) std::memcpy(r.mutable_data(), a.data(), static_cast<std::size_t>(a.nbytes()));
  return r;
}

// The element types the bindings move in and out.
template <class T>
inline constexpr bool is_int_element =
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ||
    std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>;

// Any array-like as a numpy array: an ndarray as it is, an object with numpy() (a torch tensor)
// through it, anything else through numpy.asarray. Object arrays are refused.
py::array as_array(py::handle obj, std::string_view what);

// Calls f(array_t<T>) with the array's own integer element type (int8..uint64); a float, bool or
// object array is a TypeError naming `what`.
template <class F>
decltype(auto) visit_int(const py::array& a, std::string_view what, F&& f) {
  const char kind = a.dtype().kind();
  const auto size = a.dtype().itemsize();
  auto as = [&]<class T>() {
    return f(contiguous<T>(a, what));  // same kind and size: never lossy
  };
  if (kind == 'i') {
    if (size == 1) return as.template operator()<std::int8_t>();
    if (size == 2) return as.template operator()<std::int16_t>();
    if (size == 4) return as.template operator()<std::int32_t>();
    if (size == 8) return as.template operator()<std::int64_t>();
  } else if (kind == 'u') {
    if (size == 1) return as.template operator()<std::uint8_t>();
    if (size == 2) return as.template operator()<std::uint16_t>();
    if (size == 4) return as.template operator()<std::uint32_t>();
    if (size == 8) return as.template operator()<std::uint64_t>();
  }
  throw py::type_error(std::string(what) + ": expected an integer array, got dtype " +
                       std::string(py::str(a.dtype())));
}

std::vector<py::ssize_t> shape_of(const py::array& a);

// The integers of obj as a contiguous array of T: no copy when the element type already is T
// (unless `owned`: then always a copy only qfold references), otherwise converted with every value
// checked (errc::value_out_of_range, index = the first element, in C order, that does not fit T).
template <class T>
py::array_t<T, py::array::c_style> int_array_as(py::handle obj, std::string_view what,
                                                bool owned = false) {
  py::array a = as_array(obj, what);
  // numpy.asarray([]) is float64: an empty list is as good an empty integer array as any.
  if (a.size() == 0 && !py::isinstance<py::array>(obj)) a = py::array_t<T>(shape_of(a));
  return visit_int(
      a, what,
      [&]<class S>(py::array_t<S, py::array::c_style> src) -> py::array_t<T, py::array::c_style> {
        if constexpr (std::is_same_v<S, T>) {
          return owned ? owned_copy(src, what) : src;
        } else {
          auto out = new_array<T>(shape_of(src), what);
          const S* in = src.data();
          T* o = out.mutable_data();
          const auto n = static_cast<std::size_t>(src.size());
          for (std::size_t i = 0; i < n; ++i) {
            if (!std::in_range<T>(in[i]))
              raise(qfold::errc::value_out_of_range,
                    std::string(what) + ": a value does not fit the element type", i);
            o[i] = static_cast<T>(in[i]);
          }
          return out;
        }
      });
}

// The floats of obj as a contiguous array of T. An ndarray (or tensor) must already hold T: a
// float64 array where float32 is computed is a TypeError, never a silent rounding. Lists and
// Python numbers are converted.
template <class T>
py::array_t<T, py::array::c_style> float_array_as(py::handle obj, std::string_view what,
                                                  bool owned = false) {
  const bool is_array = py::isinstance<py::array>(obj) || py::hasattr(obj, "numpy");
  const py::array a = as_array(obj, what);
  if (a.dtype().kind() != 'f' && (is_array || (a.dtype().kind() != 'i' && a.dtype().kind() != 'u')))
    throw py::type_error(std::string(what) + ": expected a float array, got dtype " +
                         std::string(py::str(a.dtype())));
  if (is_array && a.dtype().kind() == 'f' && a.dtype().itemsize() != sizeof(T))
    throw py::type_error(std::string(what) + ": expected " +
                         (sizeof(T) == 4 ? "float32" : "float64") + ", got dtype " +
                         std::string(py::str(a.dtype())));
  auto r = contiguous<T>(a, what);
  // A converted list is qfold's own already; an array may be the caller's buffer.
  return owned && is_array ? owned_copy(r, what) : r;
}

// A Python int (or numpy integer) as an int64, or errc::value_out_of_range naming `what`.
std::int64_t int_arg(py::handle obj, std::string_view what);
// True for a Python or numpy integer (a scalar call), false for anything array-like.
bool is_int_scalar(py::handle obj);

// A scalar-or-array elementwise call: f(T) -> qfold::result<R>. A scalar gives a Python int, an
// array an array of R of the same shape; the first failing element raises with its index.
template <class T, class R, class F>
py::object elementwise(py::handle x, std::string_view what, F&& f) {
  if (is_int_scalar(x)) {
    const std::int64_t v = int_arg(x, what);
    if (!std::in_range<T>(v))
      raise(qfold::errc::value_out_of_range, std::string(what) + ": value does not fit its type");
    return py::int_(value_or_raise(f(static_cast<T>(v))));
  }
  const auto in = int_array_as<T>(x, what);
  auto out = new_array<R>(shape_of(in), what);
  const T* p = in.data();
  R* o = out.mutable_data();
  const auto n = static_cast<std::size_t>(in.size());
  for (std::size_t i = 0; i < n; ++i) {
    const qfold::result<R> r = f(p[i]);
    if (!r) raise(r.error().code, std::string(r.error().message), i);
    o[i] = *r;
  }
  return out;
}

// Conversions of the small value types shared by several files.
qfold::qparams to_qparams(py::handle obj, std::string_view what);

// qfold.Rescale: one TOSA RESCALE, its attributes with one multiplier/shift pair (or one per
// channel). Also what synthesis and merging return (a rescale_certificate is one with one pair).
struct py_rescale {
  qfold::rescale_attributes attributes;
  std::vector<qfold::scale_factor> scales;
  [[nodiscard]] qfold::rescale_view view() const { return {attributes, scales}; }
};
// A rescale with exactly one pair (chain steps, certificates), or errc::size_mismatch.
qfold::scale_factor single_scale(const py_rescale& r, std::string_view what);
py_rescale from_certificate(const qfold::rescale_certificate& c);
// The pairs of Rescale(multiplier, shift): ints, two 1-D sequences, or ScaleFactor(s).
std::vector<qfold::scale_factor> scales_from(py::handle multiplier, py::handle shift);
// Per channel unless multiplier is one int or one ScaleFactor.
bool per_channel_default(py::handle multiplier);
qfold::rounding_mode parse_rounding(std::string_view s);
// A Python list of qfold.Rescale / qfold.chain.* steps (tables.cpp).
std::vector<qfold::chain::step> steps_from(py::handle steps);
qfold::int_type parse_int_type(std::string_view s, std::string_view what);
std::string_view int_type_name(qfold::int_type t);

void bind_arith(py::module_& m);
void bind_tables(py::module_& m);
void bind_exact(py::module_& m);
void bind_folds(py::module_& m);
void bind_graph(py::module_& m);  // graph.cpp: run_passes over a Python IR

}  // namespace qfold_py
