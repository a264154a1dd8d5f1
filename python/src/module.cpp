// The qfold._qfold extension module: the exception classes (one per qfold::errc under
// qfold.Error), the value types every part shares (QParams, ScaleFactor, Rescale, Rejection),
// and the array plumbing of common.hpp; the functions live in arith, tables, exact and folds.
#include <array>
#include <cstddef>
#include <cstdint>
#include <qfold/arith/rescale.hpp>
#include <qfold/quant/qparams.hpp>
#include <qfold/version.hpp>
#include <string>
#include <string_view>

#include "common.hpp"  // first: see there

namespace qfold_py {

namespace {
constexpr std::array all_codes{
    qfold::errc::negative_multiplier, qfold::errc::multiplier_out_of_range,
    qfold::errc::shift_out_of_range,  qfold::errc::value_out_of_range,
    qfold::errc::result_out_of_range, qfold::errc::divisor_zero,
    qfold::errc::scale_negative,      qfold::errc::scale_nan,
    qfold::errc::scale_infinite,      qfold::errc::scale_too_large,
    qfold::errc::scale_zero,          qfold::errc::illegal_type,
    qfold::errc::illegal_zero_point,  qfold::errc::illegal_attributes,
    qfold::errc::size_mismatch,       qfold::errc::zero_point_out_of_range,
    qfold::errc::empty_range,         qfold::errc::not_finite,
    qfold::errc::not_exact,           qfold::errc::size_overflow,
    qfold::errc::invalid_shape,       qfold::errc::scale_subnormal,
};

// "shift_out_of_range" -> "ShiftOutOfRange".
std::string class_name(std::string_view code) {
  std::string r;
  bool upper = true;
  for (const char c : code) {
    if (c == '_') {
      upper = true;
      continue;
    }
    r += upper ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return r;
}

// The exception classes live as long as the interpreter (module objects are never unloaded).
PyObject* error_base = nullptr;
std::array<PyObject*, all_codes.size()> error_classes{};

PyObject* class_of(qfold::errc c) {
  const auto i = static_cast<std::size_t>(c) - 1;
  return i < error_classes.size() && error_classes[i] != nullptr ? error_classes[i] : error_base;
}

void translate(const error_exception& x) {
  PyObject* cls = class_of(x.code);
  const std::string_view code = qfold::to_string(x.code);
  std::string text = std::string(code) + ": " + x.message;
  if (x.index != qfold::error::no_index) text += " (index " + std::to_string(x.index) + ")";
  py::object instance = py::reinterpret_borrow<py::object>(cls)(text);
  instance.attr("code") = py::str(code.data(), code.size());
  instance.attr("message") = x.message;
  instance.attr("index") =
      x.index == qfold::error::no_index ? py::object(py::none()) : py::object(py::int_(x.index));
  PyErr_SetObject(cls, instance.ptr());
}

void bind_errors(py::module_& m) {
  error_base = PyErr_NewExceptionWithDoc(
      "qfold.Error",
      "A qfold::error: .code (the errc name), .message (names the offending input), .index "
      "(the element of an array call, or None). Subclasses per code; also a ValueError.",
      PyExc_ValueError, nullptr);
  m.add_object("Error", py::handle(error_base));
  for (std::size_t i = 0; i < all_codes.size(); ++i) {
    const std::string name = class_name(qfold::to_string(all_codes[i]));
    const std::string qualified = "qfold." + name;
    error_classes[i] = PyErr_NewException(qualified.c_str(), error_base, nullptr);
    m.add_object(name.c_str(), py::handle(error_classes[i]));
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const error_exception& x) {
      translate(x);
    }
  });
}
}  // namespace

// --- helpers declared in common.hpp ------------------------------------------------------------

qfold::dtype parse_dtype(std::string_view s, std::string_view what) {
  return parse_option<qfold::dtype>(s,
                                    {{"int8", qfold::dtype::int8},
                                     {"uint8", qfold::dtype::uint8},
                                     {"int16", qfold::dtype::int16},
                                     {"uint16", qfold::dtype::uint16},
                                     {"int32", qfold::dtype::int32}},
                                    what, qfold::errc::illegal_type);
}
std::string_view dtype_name(qfold::dtype t) {
  switch (t) {
    case qfold::dtype::int8:
      return "int8";
    case qfold::dtype::uint8:
      return "uint8";
    case qfold::dtype::int16:
      return "int16";
    case qfold::dtype::uint16:
      return "uint16";
    case qfold::dtype::int32:
      return "int32";
  }
  return "unknown";
}
std::string dtype_string(py::handle d, std::string_view what) {
  if (py::isinstance<py::str>(d)) return d.cast<std::string>();
  try {
    return py::str(py::dtype::from_args(py::reinterpret_borrow<py::object>(d)));
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    raise_type(d, what, "a dtype (a name such as \"int8\", or numpy.int8)");
  }
}

[[noreturn]] void raise_type(py::handle obj, std::string_view what, std::string_view expected) {
  throw py::type_error(std::string(what) + ": expected " + std::string(expected) + ", got " +
                       Py_TYPE(obj.ptr())->tp_name);
}
bool bool_arg(py::handle obj, std::string_view what) {
  if (PyBool_Check(obj.ptr())) return obj.ptr() == Py_True;
  if (py::isinstance(obj, py::module_::import("numpy").attr("bool_")))
    return py::bool_(py::reinterpret_borrow<py::object>(obj));
  raise_type(obj, what, "a bool");
}
std::string str_arg(py::handle obj, std::string_view what) {
  if (!py::isinstance<py::str>(obj)) raise_type(obj, what, "a str");
  return obj.cast<std::string>();
}
[[noreturn]] void raise_memory(std::string_view what, std::string_view detail) {
  PyErr_Clear();
  PyErr_SetString(
      PyExc_MemoryError,
      (std::string(what) + ": " + std::string(detail) + " (not enough memory)").c_str());
  throw py::error_already_set();
}

qfold::int_type parse_int_type(std::string_view s, std::string_view what) {
  return parse_option<qfold::int_type>(s,
                                       {{"i8", qfold::int_type::i8},
                                        {"i16", qfold::int_type::i16},
                                        {"i32", qfold::int_type::i32},
                                        {"i48", qfold::int_type::i48}},
                                       what, qfold::errc::illegal_type);
}
std::string_view int_type_name(qfold::int_type t) {
  switch (t) {
    case qfold::int_type::i8:
      return "i8";
    case qfold::int_type::i16:
      return "i16";
    case qfold::int_type::i32:
      return "i32";
    case qfold::int_type::i48:
      return "i48";
  }
  return "unknown";
}

qfold::rounding_mode parse_rounding(std::string_view s) {
  return parse_option<qfold::rounding_mode>(
      s,
      {{"single_round", qfold::rounding_mode::single_round},
       {"double_round", qfold::rounding_mode::double_round},
       {"inexact_round", qfold::rounding_mode::inexact_round}},
      "Rescale: rounding");
}
namespace {
std::string_view rounding_name(qfold::rounding_mode r) {
  switch (r) {
    case qfold::rounding_mode::single_round:
      return "single_round";
    case qfold::rounding_mode::double_round:
      return "double_round";
    case qfold::rounding_mode::inexact_round:
      return "inexact_round";
  }
  return "unknown";
}
}  // namespace

py::array as_array(py::handle obj, std::string_view what) {
  if (py::isinstance<py::array>(obj)) return py::reinterpret_borrow<py::array>(obj);
  py::object o = py::reinterpret_borrow<py::object>(obj);
  // torch tensors (and other frameworks' arrays) through their own numpy(); a tensor that needs
  // grad or lives on a GPU raises torch's own clear error there.
  if (!py::isinstance<py::str>(obj) && py::hasattr(obj, "numpy") &&
      PyCallable_Check(o.attr("numpy").ptr()))
    o = o.attr("numpy")();
  py::array a = py::module_::import("numpy").attr("asarray")(o);
  if (a.dtype().kind() == 'O' || a.dtype().kind() == 'U' || a.dtype().kind() == 'S')
    throw py::type_error(std::string(what) + ": expected numbers, got dtype " +
                         std::string(py::str(a.dtype())));
  return a;
}

std::vector<py::ssize_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

bool is_int_scalar(py::handle obj) {
  if (py::isinstance<py::bool_>(obj)) return false;
  if (PyLong_Check(obj.ptr())) return true;
  const py::object integer = py::module_::import("numpy").attr("integer");
  return py::isinstance(obj, integer);
}

std::int64_t int_arg(py::handle obj, std::string_view what) {
  if (py::isinstance<py::float_>(obj) || py::isinstance<py::bool_>(obj) ||
      !(PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr())))
    throw py::type_error(std::string(what) + ": expected an int, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0)
    raise(qfold::errc::value_out_of_range, std::string(what) + ": the int does not fit int64");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

qfold::qparams to_qparams(py::handle obj, std::string_view what) {
  if (!py::isinstance<qfold::qparams>(obj))
    throw py::type_error(std::string(what) + ": expected a qfold.QParams");
  return obj.cast<qfold::qparams>();
}

qfold::scale_factor single_scale(const py_rescale& r, std::string_view what) {
  if (r.scales.size() != 1)
    raise(qfold::errc::size_mismatch,
          std::string(what) + ": needs a per-tensor Rescale (one multiplier/shift pair)");
  return r.scales[0];
}
py_rescale from_certificate(const qfold::rescale_certificate& c) {
  return {c.attributes, {c.scale}};
}

py::object apply_rescale(const py_rescale& r, py::handle values);  // arith.cpp

bool per_channel_default(py::handle multiplier) {
  return !(is_int_scalar(multiplier) || py::isinstance<qfold::scale_factor>(multiplier));
}

std::vector<qfold::scale_factor> scales_from(py::handle multiplier, py::handle shift) {
  std::vector<qfold::scale_factor> r;
  if (py::isinstance<qfold::scale_factor>(multiplier)) {
    if (!shift.is_none()) throw py::type_error("Rescale: a ScaleFactor takes no shift");
    return {multiplier.cast<qfold::scale_factor>()};
  }
  if (shift.is_none()) {  // a sequence of ScaleFactor
    for (const py::handle s : py::reinterpret_borrow<py::iterable>(multiplier)) {
      if (!py::isinstance<qfold::scale_factor>(s))
        throw py::type_error(
            "Rescale: without shift, multiplier is a ScaleFactor or a list of them");
      r.push_back(s.cast<qfold::scale_factor>());
    }
    return r;
  }
  if (is_int_scalar(multiplier) && is_int_scalar(shift)) {
    const std::int64_t m = int_arg(multiplier, "Rescale: multiplier");
    const std::int64_t s = int_arg(shift, "Rescale: shift");
    if (!std::in_range<std::int32_t>(m))
      raise(qfold::errc::multiplier_out_of_range, "Rescale: multiplier does not fit int32");
    if (!std::in_range<int>(s))
      raise(qfold::errc::shift_out_of_range, "Rescale: shift outside 2..62");
    return {{static_cast<std::int32_t>(m), static_cast<int>(s)}};
  }
  const auto ms = int_array_as<std::int64_t>(multiplier, "Rescale: multiplier");
  const auto ss = int_array_as<std::int64_t>(shift, "Rescale: shift");
  if (ms.ndim() > 1 || ss.ndim() > 1 || ms.size() != ss.size())
    raise(qfold::errc::size_mismatch,
          "Rescale: multiplier and shift are two 1-D sequences of the same length");
  for (py::ssize_t i = 0; i < ms.size(); ++i) {
    const std::int64_t m = ms.data()[i], s = ss.data()[i];
    if (!std::in_range<std::int32_t>(m))
      raise(qfold::errc::multiplier_out_of_range, "Rescale: multiplier does not fit int32",
            static_cast<std::size_t>(i));
    if (!std::in_range<int>(s))
      raise(qfold::errc::shift_out_of_range, "Rescale: shift outside 2..62",
            static_cast<std::size_t>(i));
    r.push_back({static_cast<std::int32_t>(m), static_cast<int>(s)});
  }
  return r;
}

namespace {
std::string repr(const py_rescale& r) {
  const auto& a = r.attributes;
  std::string s = "Rescale(";
  if (r.scales.size() == 1) {
    s += "multiplier=" + std::to_string(r.scales[0].multiplier) +
         ", shift=" + std::to_string(r.scales[0].shift);
  } else {
    s += "scales=" + std::to_string(r.scales.size()) + " channels";
  }
  s += ", input_type='" + std::string(int_type_name(a.input_type)) + "', output_type='" +
       std::string(int_type_name(a.output_type)) + "', input_zp=" + std::to_string(a.input_zp) +
       ", output_zp=" + std::to_string(a.output_zp) +
       ", scale32=" + (a.scale32 ? "True" : "False") + ", rounding='" +
       std::string(rounding_name(a.rounding)) + "'";
  if (a.per_channel) s += ", per_channel=True";
  if (a.input_unsigned) s += ", input_unsigned=True";
  if (a.output_unsigned) s += ", output_unsigned=True";
  return s + ")";
}

void bind_values(py::module_& m) {
  py::class_<qfold::scale_factor>(m, "ScaleFactor",
                                  "A TOSA multiplier/shift pair: multiplier * 2**-shift.")
      .def(py::init([](std::int32_t multiplier, int shift) {
             return qfold::scale_factor{multiplier, shift};
           }),
           py::arg("multiplier"), py::arg("shift"))
      .def_readwrite("multiplier", &qfold::scale_factor::multiplier)
      .def_readwrite("shift", &qfold::scale_factor::shift)
      .def(
          "to_float", [](const qfold::scale_factor& s) { return qfold::to_double(s); },
          "The real value multiplier * 2**-shift (exact for shift <= 1074).")
      .def("__iter__",
           [](const qfold::scale_factor& s) {
             return py::iter(py::make_tuple(s.multiplier, s.shift));
           })
      .def("__eq__",
           [](const qfold::scale_factor& a, const qfold::scale_factor& b) { return a == b; })
      .def("__hash__",
           [](const qfold::scale_factor& s) {
             return py::hash(py::make_tuple(s.multiplier, s.shift));
           })
      .def("__repr__", [](const qfold::scale_factor& s) {
        return "ScaleFactor(multiplier=" + std::to_string(s.multiplier) +
               ", shift=" + std::to_string(s.shift) + ")";
      });

  py::class_<qfold::qparams>(
      m, "QParams",
      "Quantization parameters: real = scale * (code - zero_point), codes clamped to [qmin, qmax] "
      "within dtype. qmin/qmax default to the dtype's range. Validated where used.")
      .def(py::init([](double scale, std::int64_t zero_point, py::handle dtype, py::object qmin,
                       py::object qmax) {
             const qfold::dtype t =
                 parse_dtype(dtype_string(dtype, "QParams: dtype"), "QParams: dtype");
             if (!std::in_range<std::int32_t>(zero_point))
               raise(qfold::errc::zero_point_out_of_range, "QParams: zero point outside int32");
             qfold::qparams q =
                 qfold::make_qparams(t, scale, static_cast<std::int32_t>(zero_point));
             for (auto [obj, field] : {std::pair{&qmin, &q.qmin}, std::pair{&qmax, &q.qmax}}) {
               if (obj->is_none()) continue;
               const std::int64_t v = int_arg(*obj, "QParams: qmin/qmax");
               if (!std::in_range<std::int32_t>(v))
                 raise(qfold::errc::value_out_of_range, "QParams: qmin/qmax outside int32");
               *field = static_cast<std::int32_t>(v);
             }
             return q;
           }),
           py::arg("scale"), py::arg("zero_point") = 0, py::arg("dtype") = "int8",
           py::arg("qmin") = py::none(), py::arg("qmax") = py::none())
      .def_readwrite("scale", &qfold::qparams::scale)
      .def_readwrite("zero_point", &qfold::qparams::zero_point)
      .def_readwrite("qmin", &qfold::qparams::qmin)
      .def_readwrite("qmax", &qfold::qparams::qmax)
      .def_property(
          "dtype", [](const qfold::qparams& q) { return std::string(dtype_name(q.type)); },
          [](qfold::qparams& q, const std::string& s) {
            q.type = parse_dtype(s, "QParams: dtype");
          })
      .def(
          "validate", [](const qfold::qparams& q) { check(qfold::validate(q)); },
          "Raise the qfold.Error for invalid parameters (NaN/zero/negative/subnormal scale, zero "
          "point or range outside the dtype, qmin > qmax).")
      .def("__eq__", [](const qfold::qparams& a, const qfold::qparams& b) { return a == b; })
      .def("__repr__", [](const qfold::qparams& q) {
        return "QParams(scale=" + std::string(py::repr(py::float_(q.scale))) +
               ", zero_point=" + std::to_string(q.zero_point) + ", dtype='" +
               std::string(dtype_name(q.type)) + "', qmin=" + std::to_string(q.qmin) +
               ", qmax=" + std::to_string(q.qmax) + ")";
      });

  py::class_<py_rejection>(
      m, "Rejection",
      "A fold that was refused: .reason (the qfold::reason name), .message, .index (the first "
      "element, channel or table entry where it fails, or None). A value, never raised; falsy.")
      .def_property_readonly(
          "reason", [](const py_rejection& r) { return std::string(qfold::to_string(r.code)); })
      .def_readonly("message", &py_rejection::message)
      .def_property_readonly("index",
                             [](const py_rejection& r) -> py::object {
                               if (r.index == qfold::rejection::no_index) return py::none();
                               return py::int_(r.index);
                             })
      .def("__bool__", [](const py_rejection&) { return false; })
      .def("__repr__", [](const py_rejection& r) {
        std::string s = "Rejection(reason='" + std::string(qfold::to_string(r.code)) +
                        "', message=" + std::string(py::repr(py::str(r.message)));
        if (r.index != qfold::rejection::no_index) s += ", index=" + std::to_string(r.index);
        return s + ")";
      });

  py::class_<py_rescale>(
      m, "Rescale",
      "One TOSA RESCALE: attributes plus one multiplier/shift pair (or one per channel: "
      "per_channel=True, the channel is the last dimension). Call it on values.")
      .def(py::init([](py::handle multiplier, py::handle shift, const std::string& input_type,
                       const std::string& output_type, std::int64_t input_zp,
                       std::int64_t output_zp, bool scale32, const std::string& rounding,
                       py::object per_channel, bool input_unsigned, bool output_unsigned) {
             py_rescale r;
             r.scales = scales_from(multiplier, shift);
             auto& a = r.attributes;
             a.input_type = parse_int_type(input_type, "Rescale: input_type");
             a.output_type = parse_int_type(output_type, "Rescale: output_type");
             a.input_zp = input_zp;
             a.output_zp = output_zp;
             a.scale32 = scale32;
             a.rounding = parse_rounding(rounding);
             a.per_channel = per_channel.is_none() ? per_channel_default(multiplier)
                                                   : bool_arg(per_channel, "Rescale: per_channel");
             a.input_unsigned = input_unsigned;
             a.output_unsigned = output_unsigned;
             return r;
           }),
           py::arg("multiplier"), py::arg("shift") = py::none(), py::kw_only(),
           py::arg("input_type") = "i8", py::arg("output_type") = "i8", py::arg("input_zp") = 0,
           py::arg("output_zp") = 0, py::arg("scale32").noconvert() = true,
           py::arg("rounding") = "single_round", py::arg("per_channel") = py::none(),
           py::arg("input_unsigned").noconvert() = false,
           py::arg("output_unsigned").noconvert() = false)
      .def_property_readonly(
          "input_type", [](const py_rescale& r) { return int_type_name(r.attributes.input_type); })
      .def_property_readonly(
          "output_type",
          [](const py_rescale& r) { return int_type_name(r.attributes.output_type); })
      .def_property_readonly("input_zp", [](const py_rescale& r) { return r.attributes.input_zp; })
      .def_property_readonly("output_zp",
                             [](const py_rescale& r) { return r.attributes.output_zp; })
      .def_property_readonly("scale32", [](const py_rescale& r) { return r.attributes.scale32; })
      .def_property_readonly(
          "rounding", [](const py_rescale& r) { return rounding_name(r.attributes.rounding); })
      .def_property_readonly("per_channel",
                             [](const py_rescale& r) { return r.attributes.per_channel; })
      .def_property_readonly("input_unsigned",
                             [](const py_rescale& r) { return r.attributes.input_unsigned; })
      .def_property_readonly("output_unsigned",
                             [](const py_rescale& r) { return r.attributes.output_unsigned; })
      .def_readonly("scales", &py_rescale::scales,
                    "The multiplier/shift pairs (list of ScaleFactor).")
      .def_property_readonly(
          "multiplier",
          [](const py_rescale& r) { return single_scale(r, "multiplier").multiplier; })
      .def_property_readonly("shift",
                             [](const py_rescale& r) { return single_scale(r, "shift").shift; })
      .def(
          "validate",
          [](const py_rescale& r) {
            const std::size_t channels = r.attributes.per_channel ? r.scales.size() : 1;
            check(qfold::validate(r.attributes, r.scales, channels));
          },
          "Raise the qfold.Error of the spec's ERROR_IF list (and the pairs' ranges), if any.")
      .def("__call__", &apply_rescale, py::arg("values"),
           "RESCALE every value: an int gives an int (checked::rescale_value), an array an array "
           "(rescale_array) of the output type's dtype. The array's values must fit the input "
           "type; per channel, its last dimension is the channel.")
      .def("__eq__",
           [](const py_rescale& a, const py_rescale& b) {
             return a.attributes == b.attributes && a.scales == b.scales;
           })
      .def("__repr__", &repr);
}
}  // namespace
}  // namespace qfold_py

PYBIND11_MODULE(_qfold, m) {
  using namespace qfold_py;
  m.doc() =
      "qfold: exact integer arithmetic and folds for quantized ML compilers (the C++ library "
      "qfold, bound with pybind11). Errors raise qfold.Error; refusals return qfold.Rejection.";
  m.attr("__version__") = std::to_string(QFOLD_VERSION_MAJOR) + "." +
                          std::to_string(QFOLD_VERSION_MINOR) + "." +
                          std::to_string(QFOLD_VERSION_PATCH);
  bind_errors(m);
  bind_values(m);
  bind_arith(m);
  bind_tables(m);
  bind_exact(m);
  bind_folds(m);
  bind_graph(m);
}
