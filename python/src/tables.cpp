// Bindings of include/qfold/table/ (and the quantize conventions of quant/): table8 for every
// named function and convention, the ExecuTorch and TFLite int16 tables, lookups, TFLite order,
// and the elementwise chains (qfold.chain) with their evaluation and collapse into one table.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <qfold/quant/conventions.hpp>
#include <qfold/table/chain.hpp>
#include <qfold/table/compose.hpp>
#include <qfold/table/functions.hpp>
#include <qfold/table/generate.hpp>
#include <qfold/table/lut.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.hpp"  // first: see there

namespace qfold_py {

namespace {
// A named function as both conventions' arithmetic types call it.
struct real_function {
  std::function<float(float)> f32;
  std::function<double(double)> f64;
};
template <class F>
real_function wrap(F f) {
  return {[f](float x) { return static_cast<float>(f(x)); },
          [f](double x) { return static_cast<double>(f(x)); }};
}

struct function_options {
  double alpha = 1.0, negative_slope = 0.01;
  std::string approximate = "none";
};

// Every name table8 takes; parameterised ones read function_options.
std::vector<std::pair<std::string_view, std::function<real_function(const function_options&)>>>
registry() {
  namespace fn = qfold::fn;
  using opts = const function_options&;
  const auto plain = [](auto f) { return [f](opts) { return wrap(f); }; };
  return {
      {"tanh", plain(fn::tanh)},
      {"sigmoid", plain(fn::sigmoid)},
      {"exp", plain(fn::exp)},
      {"expm1", plain(fn::expm1)},
      {"log", plain(fn::log)},
      {"log1p", plain(fn::log1p)},
      {"erf", plain(fn::erf)},
      {"erfc", plain(fn::erfc)},
      {"sqrt", plain(fn::sqrt)},
      {"rsqrt", plain(fn::rsqrt)},
      {"sin", plain(fn::sin)},
      {"cos", plain(fn::cos)},
      {"atan", plain(fn::atan)},
      {"reciprocal", plain(fn::reciprocal)},
      {"hardsigmoid", plain(fn::hardsigmoid)},
      {"hardswish", plain(fn::hardswish)},
      {"leaky_relu", [](opts o) { return wrap(fn::leaky_relu(o.negative_slope)); }},
      {"elu", [](opts o) { return wrap(fn::elu(o.alpha)); }},
      {"torch.tanh", plain(fn::torch::tanh)},
      {"torch.sigmoid", plain(fn::torch::sigmoid)},
      {"torch.exp", plain(fn::torch::exp)},
      {"torch.expm1", plain(fn::torch::expm1)},
      {"torch.log", plain(fn::torch::log)},
      {"torch.log1p", plain(fn::torch::log1p)},
      {"torch.erf", plain(fn::torch::erf)},
      {"torch.sin", plain(fn::torch::sin)},
      {"torch.cos", plain(fn::torch::cos)},
      {"torch.atan", plain(fn::torch::atan)},
      {"torch.reciprocal", plain(fn::torch::reciprocal)},
      {"torch.rsqrt", plain(fn::torch::rsqrt)},
      {"torch.hardsigmoid", plain(fn::torch::hardsigmoid)},
      {"torch.hardswish", plain(fn::torch::hardswish)},
      {"torch.silu", plain(fn::torch::silu)},
      {"torch.gelu", plain(fn::torch::gelu)},
      {"torch.gelu_tanh", plain(fn::torch::gelu_tanh)},
      {"torch.leaky_relu", [](opts o) { return wrap(fn::torch::leaky_relu(o.negative_slope)); }},
      {"torch.elu", [](opts o) { return wrap(fn::torch::elu(o.alpha)); }},
      {"tflite.sigmoid", plain(fn::tflite::sigmoid)},
      {"tflite.gelu", plain(fn::tflite::gelu)},
      {"tflite.gelu_tanh", plain(fn::tflite::gelu_tanh)},
      {"tflite.gelu_erf_legacy", plain(fn::tflite::gelu_erf_legacy)},
      {"vela.sigmoid", plain(fn::vela::sigmoid)},
      {"vela.log", plain(fn::vela::log)},
      {"vela.gelu", plain(fn::vela::gelu)},
      {"vela.gelu_tanh", plain(fn::vela::gelu_tanh)},
  };
}

// A name of the registry, or an aten op name through fn::torch::by_name.
real_function resolve(const std::string& name, const function_options& o) {
  if (name.starts_with("aten.") || name.starts_with("aten::")) {
    const qfold::fn::torch::op_attributes attrs{o.alpha, o.negative_slope, o.approximate};
    return wrap(value_or_raise(qfold::fn::torch::by_name(name, attrs)));
  }
  for (const auto& [n, make] : registry())
    if (n == name) return make(o);
  raise(qfold::errc::illegal_attributes,
        "table: unknown function '" + name + "' (see qfold.functions(), or an aten op name)");
}

enum class convention_id { executorch, tflite, vela, vela_8bit_op };
convention_id parse_convention(std::string_view s) {
  return parse_option<convention_id>(s,
                                     {{"executorch", convention_id::executorch},
                                      {"tflite", convention_id::tflite},
                                      {"vela", convention_id::vela},
                                      {"vela_8bit_op", convention_id::vela_8bit_op}},
                                     "table: convention");
}

template <class F>
decltype(auto) with_int8_type(qfold::dtype t, std::string_view what, F&& f) {
  if (t == qfold::dtype::int8) return f.template operator()<std::int8_t>();
  if (t == qfold::dtype::uint8) return f.template operator()<std::uint8_t>();
  raise(qfold::errc::illegal_type, std::string(what) + ": the dtype must be int8 or uint8");
}

template <class T, std::size_t N>
py::array_t<T> to_array(const std::array<T, N>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(N));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::array table8(const std::string& function, py::handle in_q, py::handle out_q,
                 const std::string& convention, double alpha, double negative_slope,
                 const std::string& approximate) {
  const qfold::qparams in = to_qparams(in_q, "table8: in_qparams");
  const qfold::qparams out = to_qparams(out_q, "table8: out_qparams");
  const real_function f = resolve(function, {alpha, negative_slope, approximate});
  const convention_id c = parse_convention(convention);
  return with_int8_type(in.type, "table8: in_qparams", [&]<class In>() -> py::array {
    return with_int8_type(out.type, "table8: out_qparams", [&]<class Out>() -> py::array {
      const auto make = [&](const auto& conv, const auto& g) {
        return value_or_raise(qfold::checked::make_table8<In, Out>(conv, g, in, out));
      };
      switch (c) {
        case convention_id::executorch:
          return to_array(make(qfold::conventions::executorch, f.f32).values);
        case convention_id::tflite:
          return to_array(make(qfold::conventions::tflite, f.f32).values);
        case convention_id::vela:
          return to_array(make(qfold::conventions::vela, f.f64).values);
        case convention_id::vela_8bit_op:
          break;
      }
      return to_array(make(qfold::conventions::vela_8bit_op, f.f64).values);
    });
  });
}

qfold::int16_table int16_table_of(py::handle values, std::string_view what) {
  const auto a = int_array_as<std::int16_t>(values, what);
  return value_or_raise(qfold::int16_table_from({a.data(), static_cast<std::size_t>(a.size())}));
}

// lookup: the table's own dtype out, the codes' int8/uint8 (or input_dtype) in.
py::object lookup(py::handle table, py::handle codes, py::object input_dtype) {
  std::string in_name = "int8";
  if (!input_dtype.is_none()) {
    in_name = dtype_string(input_dtype, "lookup: input_dtype");
  } else if (!is_int_scalar(codes)) {
    const py::array c = as_array(codes, "lookup: codes");
    if (c.dtype().kind() == 'u' && c.dtype().itemsize() == 1) in_name = "uint8";
  }
  const qfold::dtype in_type = parse_dtype(in_name, "lookup: input_dtype");
  const py::array t = as_array(table, "lookup: table");
  return with_int8_type(in_type, "lookup: input_dtype", [&]<class In>() -> py::object {
    return visit_int(t, "lookup: table", [&](auto values) -> py::object {
      using Out = typename decltype(values)::value_type;
      const auto tab = value_or_raise(qfold::table8_from<In, Out>(
          std::span<const Out>(values.data(), static_cast<std::size_t>(values.size()))));
      return elementwise<In, Out>(codes, "lookup: codes",
                                  [&](In code) -> qfold::result<Out> { return tab(code); });
    });
  });
}

}  // namespace

std::vector<qfold::chain::step> steps_from(py::handle steps) {
  std::vector<qfold::chain::step> r;
  for (const py::handle s : py::reinterpret_borrow<py::iterable>(steps)) {
    if (py::isinstance<py_rescale>(s)) {
      const auto& x = s.cast<const py_rescale&>();
      r.emplace_back(qfold::chain::rescale{x.attributes, single_scale(x, "chain: Rescale step")});
    } else if (py::isinstance<qfold::chain::mul>(s)) {
      r.emplace_back(s.cast<qfold::chain::mul>());
    } else if (py::isinstance<qfold::chain::add>(s)) {
      r.emplace_back(s.cast<qfold::chain::add>());
    } else if (py::isinstance<qfold::chain::clamp>(s)) {
      r.emplace_back(s.cast<qfold::chain::clamp>());
    } else if (py::isinstance<qfold::chain::table>(s)) {
      r.emplace_back(s.cast<qfold::chain::table>());
    } else if (py::isinstance<qfold::chain::table16>(s)) {
      r.emplace_back(s.cast<qfold::chain::table16>());
    } else if (py::isinstance<qfold::chain::requantize>(s)) {
      r.emplace_back(s.cast<qfold::chain::requantize>());
    } else {
      throw py::type_error(
          "chain: a step is a qfold.Rescale or a "
          "qfold.chain.Mul/Add/Clamp/Table/Table16/Requantize");
    }
  }
  return r;
}

namespace {
void bind_chain(py::module_& c) {
  namespace ch = qfold::chain;
  py::class_<ch::mul>(c, "Mul", "TOSA MUL (int32) by a constant; wrap=False refuses overflow.")
      .def(py::init([](std::int32_t constant, int shift, bool wrap_) {
             return ch::mul{constant, shift, wrap_};
           }),
           py::arg("constant"), py::arg("shift") = 0, py::arg("wrap").noconvert() = true)
      .def_readonly("constant", &ch::mul::constant)
      .def_readonly("shift", &ch::mul::shift)
      .def_readonly("wrap", &ch::mul::wrap);
  py::class_<ch::add>(c, "Add", "TOSA ADD (int32) of a constant; overflow is an error.")
      .def(py::init([](std::int32_t constant) { return ch::add{constant}; }), py::arg("constant"))
      .def_readonly("constant", &ch::add::constant);
  py::class_<ch::clamp>(c, "Clamp", "TOSA CLAMP to [lo, hi].")
      .def(py::init([](std::int64_t lo, std::int64_t hi) {
             return ch::clamp{lo, hi};
           }),
           py::arg("lo"), py::arg("hi"))
      .def_readonly("lo", &ch::clamp::lo)
      .def_readonly("hi", &ch::clamp::hi);
  py::class_<ch::table>(c, "Table", "A 256-entry TABLE indexed by value - first_code.")
      .def(py::init([](py::handle values, std::int32_t first_code) {
             const auto v = int_array_as<std::int32_t>(values, "chain.Table: values");
             if (v.size() != 256) raise(qfold::errc::size_mismatch, "chain.Table: not 256 entries");
             ch::table t;
             t.first_code = first_code;
             std::copy(v.data(), v.data() + 256, t.values.begin());
             return t;
           }),
           py::arg("values"), py::arg("first_code") = -128)
      .def_property_readonly("values", [](const ch::table& t) { return to_array(t.values); })
      .def_readonly("first_code", &ch::table::first_code);
  py::class_<ch::table16>(c, "Table16", "TOSA int16 TABLE (513 knots), unrounded 16.7 result.")
      .def(py::init([](py::handle values) {
             return ch::table16{int16_table_of(values, "chain.Table16: values")};
           }),
           py::arg("values"))
      .def_property_readonly("values",
                             [](const ch::table16& t) { return to_array(t.values.values); });
  using kind = ch::requantize::flavour;
  py::class_<ch::requantize>(c, "Requantize",
                             "MultiplyByQuantizedMultiplier / arm_nn_requantize (left shift).")
      .def(py::init([](std::int32_t multiplier, int shift, const std::string& k) {
             return ch::requantize{multiplier, shift,
                                   parse_option<kind>(k,
                                                      {{"tflite_double", kind::tflite_double},
                                                       {"tflite_single", kind::tflite_single},
                                                       {"cmsis_double", kind::cmsis_double},
                                                       {"cmsis_single", kind::cmsis_single}},
                                                      "chain.Requantize: kind")};
           }),
           py::arg("multiplier"), py::arg("shift"), py::arg("kind") = "tflite_double")
      .def_readonly("multiplier", &ch::requantize::multiplier)
      .def_readonly("shift", &ch::requantize::shift);

  c.def(
      "evaluate",
      [](py::handle steps, py::handle x) {
        const auto s = steps_from(steps);
        return elementwise<std::int64_t, std::int64_t>(
            x, "chain.evaluate: x", [&](std::int64_t v) { return ch::evaluate(s, v); });
      },
      py::arg("steps"), py::arg("x"),
      "The chain's value for each x (int or array, int64 out). A failing step raises "
      "qfold.Error; for arrays .index is the element (the C++ step index is in the message's "
      "source, chain.evaluate on that element alone).");
  c.def(
      "collapse",
      [](py::handle steps, py::handle input_dtype, py::handle output_dtype) -> py::array {
        const auto s = steps_from(steps);
        const qfold::dtype in = parse_dtype(dtype_string(input_dtype, "collapse: input_dtype"),
                                            "collapse: input_dtype");
        const qfold::dtype out = parse_dtype(dtype_string(output_dtype, "collapse: output_dtype"),
                                             "collapse: output_dtype");
        return with_int8_type(in, "collapse: input_dtype", [&]<class In>() -> py::array {
          const auto go = [&]<class Out>() -> py::array {
            return to_array(value_or_raise(ch::collapse<In, Out>(s)).values);
          };
          switch (out) {
            case qfold::dtype::int8:
              return go.template operator()<std::int8_t>();
            case qfold::dtype::uint8:
              return go.template operator()<std::uint8_t>();
            case qfold::dtype::int16:
              return go.template operator()<std::int16_t>();
            case qfold::dtype::uint16:
              return go.template operator()<std::uint16_t>();
            case qfold::dtype::int32:
              break;
          }
          return go.template operator()<std::int32_t>();
        });
      },
      py::arg("steps"), py::arg("input_dtype") = "int8", py::arg("output_dtype") = "int8",
      "The 256-entry table equal to the chain on every 8-bit code (entry i for code min + i). "
      "Raises qfold.Error at the first code (index = entry) where a step fails or the result "
      "leaves output_dtype.");
  py::class_<ch::int16_fit>(c, "Int16Fit", "An int16 chain as a TOSA 513-knot table.")
      .def_property_readonly("table",
                             [](const ch::int16_fit& f) { return to_array(f.table.values); })
      .def_readonly("max_error", &ch::int16_fit::max_error)
      .def_readonly("worst_code", &ch::int16_fit::worst_code)
      .def_readonly("first_mismatch", &ch::int16_fit::first_mismatch)
      .def_property_readonly("exact", &ch::int16_fit::exact);
  c.def(
      "collapse_int16",
      [](py::handle steps, bool require_exact) {
        return value_or_raise(ch::collapse_int16(steps_from(steps), require_exact));
      },
      py::arg("steps"), py::arg("require_exact").noconvert() = false,
      "An int16 chain as a 513-knot table checked on all 65,536 codes (require_exact: "
      "qfold.Error not_exact at the first differing code + 32768).");
}
}  // namespace

void bind_tables(py::module_& m) {
  m.def(
      "functions",
      [] {
        std::vector<std::string> names;
        for (const auto& e : registry()) names.emplace_back(e.first);
        return names;
      },
      "The function names table8 takes (plus aten op names: 'aten.tanh.default', 'aten::gelu').");
  m.def("table8", &table8, py::arg("function"), py::arg("in_qparams"), py::arg("out_qparams"),
        py::arg("convention") = "executorch", py::kw_only(), py::arg("alpha") = 1.0,
        py::arg("negative_slope") = 0.01, py::arg("approximate") = "none",
        "make_table8: the 256-entry table (entry i for input code qmin_of_dtype + i, TOSA order) "
        "of function between the int8/uint8 qparams, as the convention ('executorch', 'tflite', "
        "'vela', 'vela_8bit_op') computes it. function: a name of qfold.functions() ('tanh' is "
        "qfold::fn::tanh, 'torch.silu' fn::torch::silu, 'tflite.gelu', 'vela.sigmoid', ...) or "
        "an aten op name (fn::torch::by_name; alpha, negative_slope, approximate as torch's).");
  py::class_<qfold::executorch_int16_table>(m, "ExecutorchInt16Table",
                                            "ExecuTorch's int16 TABLE and the RESCALE after it.")
      .def_property_readonly(
          "table", [](const qfold::executorch_int16_table& t) { return to_array(t.table.values); })
      .def_readonly("rshift", &qfold::executorch_int16_table::rshift)
      .def_readonly("rescale", &qfold::executorch_int16_table::rescale);
  m.def(
      "executorch_int16_table",
      [](const std::string& function, py::handle in_q, py::handle out_q, double alpha,
         double negative_slope, const std::string& approximate) {
        const real_function f = resolve(function, {alpha, negative_slope, approximate});
        return value_or_raise(qfold::checked::make_executorch_int16_table(
            f.f32, to_qparams(in_q, "in_qparams"), to_qparams(out_q, "out_qparams")));
      },
      py::arg("function"), py::arg("in_qparams"), py::arg("out_qparams"), py::kw_only(),
      py::arg("alpha") = 1.0, py::arg("negative_slope") = 0.01, py::arg("approximate") = "none",
      "ExecuTorch's int16 TABLE (513 knots), its rshift and the RESCALE by 2**(rshift - 7).");
  m.def(
      "tflite_int16_table",
      [](const std::string& function, py::handle in_q, py::handle out_q, double alpha,
         double negative_slope, const std::string& approximate) {
        const real_function f = resolve(function, {alpha, negative_slope, approximate});
        return to_array(value_or_raise(qfold::checked::make_tflite_int16_table<float>(
                                           f.f32, to_qparams(in_q, "in_qparams"),
                                           to_qparams(out_q, "out_qparams")))
                            .values);
      },
      py::arg("function"), py::arg("in_qparams"), py::arg("out_qparams"), py::kw_only(),
      py::arg("alpha") = 1.0, py::arg("negative_slope") = 0.01, py::arg("approximate") = "none",
      "TFLite LUTPopulate<int16_t>: the 513-entry int16 table.");
  m.def(
      "validate_int16_table",
      [](py::handle table) { check(qfold::validate(int16_table_of(table, "table"))); },
      py::arg("table"), "Raise qfold.Error if a slope between knots leaves int16 (TOSA REQUIRE).");
  m.def("lookup", &lookup, py::arg("table"), py::arg("codes"), py::arg("input_dtype") = py::none(),
        "TOSA TABLE (8-bit): out[i] = table[codes[i] - min]; the codes' dtype (int8 or uint8, or "
        "input_dtype) picks the input type, the table's dtype is the output's.");
  m.def(
      "lookup16",
      [](py::handle table, py::handle codes, const std::string& rounding) -> py::object {
        const qfold::int16_table t = int16_table_of(table, "lookup16: table");
        if (rounding == "tflite")
          return elementwise<std::int16_t, std::int16_t>(
              codes, "lookup16: codes", [&](std::int16_t x) -> qfold::result<std::int16_t> {
                return qfold::tflite_lookup(t, x);
              });
        if (rounding != "tosa")
          raise(qfold::errc::illegal_attributes, "lookup16: rounding is 'tosa' or 'tflite'");
        return elementwise<std::int16_t, std::int32_t>(
            codes, "lookup16: codes",
            [&](std::int16_t x) { return qfold::checked::tosa_lookup(t, x); });
      },
      py::arg("table"), py::arg("codes"), py::arg("rounding") = "tosa",
      "int16 TABLE lookup: 'tosa' gives the unrounded 16.7 int32, 'tflite' LUTLookup's int16.");
  m.def(
      "to_tflite_order",
      [](py::handle table) {
        const auto t = int_array_as<std::int8_t>(table, "to_tflite_order: table");
        const auto tab = value_or_raise(qfold::table8_from<std::int8_t, std::int8_t>(
            std::span<const std::int8_t>(t.data(), static_cast<std::size_t>(t.size()))));
        return to_array(qfold::to_tflite_order(tab));
      },
      py::arg("table"), "An int8 table in TFLite's uint8-cast order [0..127, -128..-1].");
  m.def(
      "from_tflite_order",
      [](py::handle values) {
        const auto v = int_array_as<std::int8_t>(values, "from_tflite_order: values");
        if (v.size() != 256)
          raise(qfold::errc::size_mismatch, "from_tflite_order: not 256 entries");
        std::array<std::int8_t, 256> a{};
        std::copy(v.data(), v.data() + 256, a.begin());
        return to_array(qfold::from_tflite_order(a).values);
      },
      py::arg("values"), "An int8 table back from TFLite's order to TOSA order.");
  py::module_ c = m.def_submodule("chain", "Elementwise integer chains (table/chain.hpp).");
  bind_chain(c);
}

}  // namespace qfold_py
