// Bindings of include/qfold/exact/: classification of integer maps (per channel), rescale
// synthesis in a RescaleSpace, integer line fits and exact rescale merging, each answer with the
// witness that refutes the candidate it did not take.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/exact/classify.hpp>
#include <qfold/exact/domain.hpp>
#include <qfold/exact/merge.hpp>
#include <qfold/exact/synthesize.hpp>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"  // first: see there

namespace qfold_py {

namespace {
// rescale_space holds a span: the zero points live here, next to it.
struct py_space {
  qfold::rescale_space space;
  std::vector<std::int64_t> input_zero_points;
  [[nodiscard]] qfold::rescale_space view() const {
    qfold::rescale_space s = space;
    s.input_zero_points = input_zero_points;
    return s;
  }
};

py::object optional_witness(const std::optional<qfold::witness>& w) {
  return w ? py::cast(*w) : py::none();
}
py::object optional_rescale(const std::optional<qfold::rescale_certificate>& c) {
  return c ? py::cast(from_certificate(*c)) : py::none();
}

// values (1-D) over the codes lo, lo + 1, ...: the domain, checked without wrapping.
qfold::domain domain_for(py::ssize_t n, std::int64_t lo, std::string_view what) {
  if (n <= 0) raise(qfold::errc::invalid_shape, std::string(what) + ": no values");
  if (static_cast<std::uint64_t>(n) > qfold::max_enumerated_codes)
    raise(qfold::errc::size_overflow, std::string(what) + ": more than 65,536 codes");
  if (lo > std::numeric_limits<std::int64_t>::max() - (n - 1))
    raise(qfold::errc::size_overflow, std::string(what) + ": lo + len(values) - 1 overflows int64");
  return {lo, lo + (n - 1)};
}

std::optional<qfold::rescale_space> space_of(py::handle space) {
  if (space.is_none()) return std::nullopt;
  if (!py::isinstance<py_space>(space))
    throw py::type_error("space: expected a qfold.RescaleSpace");
  return space.cast<const py_space&>().view();
}

void bind_types(py::module_& m) {
  py::class_<py_space>(m, "RescaleSpace",
                       "Which RESCALEs synthesis may return: element types and signedness, the "
                       "multiplier width, DOUBLE_ROUND allowed, input zero points to try.")
      .def(py::init([](const std::string& input_type, const std::string& output_type,
                       bool input_unsigned, bool output_unsigned, bool scale32,
                       bool allow_double_round, std::vector<std::int64_t> input_zero_points) {
             py_space s;
             s.space.input_type = parse_int_type(input_type, "RescaleSpace: input_type");
             s.space.output_type = parse_int_type(output_type, "RescaleSpace: output_type");
             s.space.input_unsigned = input_unsigned;
             s.space.output_unsigned = output_unsigned;
             s.space.scale32 = scale32;
             s.space.allow_double_round = allow_double_round;
             s.input_zero_points = std::move(input_zero_points);
             return s;
           }),
           py::kw_only(), py::arg("input_type") = "i8", py::arg("output_type") = "i8",
           py::arg("input_unsigned").noconvert() = false,
           py::arg("output_unsigned").noconvert() = false, py::arg("scale32").noconvert() = true,
           py::arg("allow_double_round").noconvert() = true,
           py::arg("input_zero_points") = std::vector<std::int64_t>{})
      .def_property_readonly("input_type",
                             [](const py_space& s) { return int_type_name(s.space.input_type); })
      .def_property_readonly("output_type",
                             [](const py_space& s) { return int_type_name(s.space.output_type); })
      .def_readonly("input_zero_points", &py_space::input_zero_points);

  py::class_<qfold::witness>(m, "Witness",
                             "Where a candidate first fails: the input, the map's value there "
                             "(expected) and the candidate's (actual).")
      .def_readonly("input", &qfold::witness::input)
      .def_readonly("expected", &qfold::witness::expected)
      .def_readonly("actual", &qfold::witness::actual)
      .def("__repr__", [](const qfold::witness& w) {
        return "Witness(input=" + std::to_string(w.input) +
               ", expected=" + std::to_string(w.expected) + ", actual=" + std::to_string(w.actual) +
               ")";
      });
  py::class_<qfold::affine_map>(m, "AffineMap", "y = slope * x + offset.")
      .def_readonly("slope", &qfold::affine_map::slope)
      .def_readonly("offset", &qfold::affine_map::offset)
      .def("__call__", [](const qfold::affine_map& f, std::int64_t x) { return f(x); })
      .def("__repr__", [](const qfold::affine_map& f) {
        return "AffineMap(slope=" + std::to_string(f.slope) +
               ", offset=" + std::to_string(f.offset) + ")";
      });
  py::class_<qfold::saturated_affine_map>(m, "SaturatedAffineMap",
                                          "clamp(line(x), lo, hi), unclamped on first..last.")
      .def_readonly("line", &qfold::saturated_affine_map::line)
      .def_readonly("lo", &qfold::saturated_affine_map::lo)
      .def_readonly("hi", &qfold::saturated_affine_map::hi)
      .def_readonly("first", &qfold::saturated_affine_map::first)
      .def_readonly("last", &qfold::saturated_affine_map::last)
      .def("__call__", [](const qfold::saturated_affine_map& f, std::int64_t x) { return f(x); })
      .def("__repr__", [](const qfold::saturated_affine_map& f) {
        return "SaturatedAffineMap(slope=" + std::to_string(f.line.slope) +
               ", offset=" + std::to_string(f.line.offset) + ", lo=" + std::to_string(f.lo) +
               ", hi=" + std::to_string(f.hi) + ", first=" + std::to_string(f.first) +
               ", last=" + std::to_string(f.last) + ")";
      });
  py::class_<qfold::classification>(
      m, "Classification",
      "What an integer map is over its domain (kind: identity, constant, affine, rescale, "
      "saturated_affine, none), its certificate, and the witness of each failed candidate.")
      .def_property_readonly(
          "kind", [](const qfold::classification& c) { return qfold::to_string(c.kind); })
      .def_property_readonly("affine",
                             [](const qfold::classification& c) -> py::object {
                               const auto k = c.kind;
                               if (k == qfold::map_kind::identity ||
                                   k == qfold::map_kind::constant || k == qfold::map_kind::affine)
                                 return py::cast(c.affine);
                               return py::none();
                             })
      .def_property_readonly("saturated",
                             [](const qfold::classification& c) -> py::object {
                               if (c.kind == qfold::map_kind::saturated_affine)
                                 return py::cast(c.saturated);
                               return py::none();
                             })
      .def_property_readonly(
          "rescale", [](const qfold::classification& c) { return optional_rescale(c.rescale); })
      .def_property_readonly(
          "affine_miss",
          [](const qfold::classification& c) { return optional_witness(c.affine_miss); })
      .def_property_readonly(
          "saturated_miss",
          [](const qfold::classification& c) { return optional_witness(c.saturated_miss); })
      .def_property_readonly(
          "rescale_miss",
          [](const qfold::classification& c) { return optional_witness(c.rescale_miss); })
      .def("__repr__", [](const qfold::classification& c) {
        return "Classification(kind='" + std::string(qfold::to_string(c.kind)) + "')";
      });
  py::class_<qfold::line_fit>(m, "LineFit", "An integer line through points, or the first miss.")
      .def_property_readonly("line",
                             [](const qfold::line_fit& f) -> py::object {
                               return f.line ? py::cast(*f.line) : py::none();
                             })
      .def_property_readonly("miss",
                             [](const qfold::line_fit& f) { return optional_witness(f.miss); });
  py::class_<qfold::merge_report>(
      m, "MergeReport",
      "merge_rescales' answer: merged (the one exact Rescale, or None), naive (what multiplying "
      "the scales gives), its max_deviation and first_difference (a Witness).")
      .def_property_readonly(
          "merged", [](const qfold::merge_report& r) { return optional_rescale(r.merged); })
      .def_property_readonly("naive",
                             [](const qfold::merge_report& r) { return from_certificate(r.naive); })
      .def_readonly("max_deviation", &qfold::merge_report::max_deviation)
      .def_property_readonly(
          "first_difference",
          [](const qfold::merge_report& r) { return optional_witness(r.first_difference); })
      .def_property_readonly("exact", &qfold::merge_report::exact)
      .def("__repr__", [](const qfold::merge_report& r) {
        return std::string("MergeReport(exact=") + (r.exact() ? "True" : "False") +
               ", max_deviation=" + std::to_string(r.max_deviation) + ")";
      });
}
}  // namespace

void bind_exact(py::module_& m) {
  bind_types(m);
  m.def(
      "classify",
      [](py::handle values, std::int64_t lo, py::handle space) {
        const auto y = int_array_as<std::int64_t>(values, "classify: values");
        if (y.ndim() != 1) raise(qfold::errc::invalid_shape, "classify: values must be 1-D");
        const qfold::domain d = domain_for(y.size(), lo, "classify");
        const auto s = space_of(space);
        return qfold::classify(d, {y.data(), static_cast<std::size_t>(y.size())},
                               s ? &*s : nullptr);
      },
      py::arg("values"), py::arg("lo") = -128, py::arg("space") = py::none(),
      "Classify the map values[i] = f(lo + i); with a RescaleSpace also synthesize a RESCALE.");
  m.def(
      "classify_channels",
      [](py::handle values, std::int64_t lo, py::handle space) {
        const auto y = int_array_as<std::int64_t>(values, "classify_channels: values");
        if (y.ndim() != 2)
          raise(qfold::errc::invalid_shape,
                "classify_channels: values must be 2-D (channel, code)");
        const qfold::domain d = domain_for(y.shape(1), lo, "classify_channels");
        if (y.shape(0) <= 0) raise(qfold::errc::invalid_shape, "classify_channels: no channels");
        const auto s = space_of(space);
        return qfold::classify_channels(d, {y.data(), static_cast<std::size_t>(y.size())},
                                        static_cast<std::size_t>(y.shape(0)), s ? &*s : nullptr);
      },
      py::arg("values"), py::arg("lo") = -128, py::arg("space") = py::none(),
      "One Classification per row of values[channel][code] (code = lo + column).");
  m.def(
      "synthesize_rescale",
      [](py::handle values, std::int64_t lo, py::handle space) {
        const auto y = int_array_as<std::int64_t>(values, "synthesize_rescale: values");
        if (y.ndim() != 1)
          raise(qfold::errc::invalid_shape, "synthesize_rescale: values must be 1-D");
        const qfold::domain d = domain_for(y.size(), lo, "synthesize_rescale");
        const auto s = space_of(space).value_or(qfold::rescale_space{});
        return optional_rescale(
            qfold::synthesize_rescale(d, {y.data(), static_cast<std::size_t>(y.size())}, s));
      },
      py::arg("values"), py::arg("lo") = -128, py::arg("space") = py::none(),
      "The RESCALE of the space (default int8 -> int8) that gives values[i] for input lo + i on "
      "every input (smallest shift, then multiplier), checked on every input; None if none.");
  m.def(
      "fit_line",
      [](py::handle x, py::handle y) {
        const auto a = int_array_as<std::int64_t>(x, "fit_line: x");
        const auto b = int_array_as<std::int64_t>(y, "fit_line: y");
        if (a.ndim() != 1 || b.ndim() != 1 || a.size() != b.size() || a.size() == 0)
          raise(qfold::errc::size_mismatch, "fit_line: x and y are 1-D, non-empty, same length");
        return qfold::fit_line({a.data(), static_cast<std::size_t>(a.size())},
                               {b.data(), static_cast<std::size_t>(b.size())});
      },
      py::arg("x"), py::arg("y"),
      "The integer line through every (x[i], y[i]) (x strictly increasing), or the first miss.");
  m.def(
      "merge_rescales",
      [](py::handle steps, std::int64_t lo, std::int64_t hi, py::handle space) {
        const auto s = space_of(space).value_or(qfold::rescale_space{});
        return value_or_raise(qfold::merge_rescales({lo, hi}, steps_from(steps), s));
      },
      py::arg("steps"), py::arg("lo") = -128, py::arg("hi") = 127, py::arg("space") = py::none(),
      "Merge a chain (Rescale and qfold.chain steps) over every input lo..hi into one RESCALE of "
      "the space, proven on every input, or report the naive merge's deviation and witness.");
  m.def(
      "domain_of",
      [](py::handle q) {
        const qfold::domain d = value_or_raise(qfold::domain_of(to_qparams(q, "domain_of")));
        return py::make_tuple(d.lo, d.hi);
      },
      py::arg("qparams"), "The codes (qmin, qmax) a tensor with these qparams holds.");
}

}  // namespace qfold_py
