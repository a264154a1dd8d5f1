// Bindings of include/qfold/arith/: multiplier/shift derivation, apply_scale_32/16, RESCALE over
// whole arrays (rescale_array), MUL, reciprocal_scale, the requantize flavours, and the TFLite,
// gemmlowp, CMSIS-NN and ExecuTorch submodules. Scalars give ints, arrays give arrays.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/cmsis_nn.hpp>
#include <qfold/arith/executorch.hpp>
#include <qfold/arith/flavours.hpp>
#include <qfold/arith/gemmlowp.hpp>
#include <qfold/arith/mul.hpp>
#include <qfold/arith/reciprocal_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/arith/rescale_array.hpp>
#include <qfold/arith/scale_derivation.hpp>
#include <qfold/arith/tflite.hpp>
#include <string>
#include <string_view>

#include "common.hpp"  // first: see there

namespace qfold_py {

namespace {
// An int argument that must fit T; otherwise `code` naming `what`.
template <class T>
T narrow_arg(py::handle obj, std::string_view what, qfold::errc code) {
  const std::int64_t v = int_arg(obj, what);
  if (!std::in_range<T>(v)) raise(code, std::string(what) + ": does not fit its C++ type");
  return static_cast<T>(v);
}

qfold::tie_rule parse_tie(std::string_view s) {
  return parse_option<qfold::tie_rule>(
      s,
      {{"half_even", qfold::tie_rule::half_to_even},
       {"half_to_even", qfold::tie_rule::half_to_even},
       {"half_away", qfold::tie_rule::half_away_from_zero},
       {"half_away_from_zero", qfold::tie_rule::half_away_from_zero}},
      "tie");
}
qfold::scale_width parse_bits(int bits) {
  if (bits == 32) return qfold::scale_width::bits32;
  if (bits == 16) return qfold::scale_width::bits16;
  raise(qfold::errc::illegal_attributes, "bits: a RESCALE multiplier has 32 or 16 bits");
}

// Calls f.template operator()<T>() with T the storage type of a RESCALE element type.
template <class F>
decltype(auto) with_storage(qfold::int_type t, bool is_unsigned, F&& f) {
  switch (t) {
    case qfold::int_type::i8:
      return is_unsigned ? f.template operator()<std::uint8_t>()
                         : f.template operator()<std::int8_t>();
    case qfold::int_type::i16:
      return is_unsigned ? f.template operator()<std::uint16_t>()
                         : f.template operator()<std::int16_t>();
    case qfold::int_type::i32:
      return f.template operator()<std::int32_t>();
    case qfold::int_type::i48:
      break;
  }
  return f.template operator()<std::int64_t>();
}

std::size_t channels_of(const py_rescale& r) {
  return r.attributes.per_channel ? r.scales.size() : 1;
}

// Validated attributes and, per channel, a last dimension equal to the channel count.
void check_rescale_call(const py_rescale& r, const py::array& values) {
  check(qfold::validate(r.attributes, r.scales, channels_of(r)));
  if (r.attributes.per_channel &&
      (values.ndim() == 0 ||
       values.shape(values.ndim() - 1) != static_cast<py::ssize_t>(r.scales.size())))
    raise(qfold::errc::size_mismatch,
          "rescale: per channel, the values' last dimension must equal the number of scales");
}
}  // namespace

py::object apply_rescale(const py_rescale& r, py::handle values) {
  const auto& a = r.attributes;
  if (is_int_scalar(values)) {
    check(qfold::validate(a, r.scales, channels_of(r)));
    if (a.per_channel && r.scales.size() != 1)
      raise(qfold::errc::size_mismatch, "rescale: a single value needs a per-tensor Rescale");
    return py::int_(value_or_raise(
        qfold::checked::rescale_value(a, r.scales[0], int_arg(values, "rescale: value"))));
  }
  const py::array given = as_array(values, "rescale: values");
  check_rescale_call(r, given);
  return with_storage(a.input_type, a.input_unsigned, [&]<class In>() -> py::object {
    // Read once into qfold's own memory: the GIL is released while it is checked and used.
    const auto in = int_array_as<In>(given, "rescale: values", true);
    return with_storage(a.output_type, a.output_unsigned, [&]<class Out>() -> py::object {
      if constexpr (std::is_same_v<Out, std::int64_t>) {
        raise(qfold::errc::illegal_type, "rescale: output type i48 is not allowed");
      } else {
        auto out = new_array<Out>(shape_of(in), "rescale: values");
        const auto n = static_cast<std::size_t>(in.size());
        qfold::result<void> ok;
        {
          py::gil_scoped_release unlocked;
          ok = qfold::rescale_array<In, Out>(a, r.scales, {in.data(), n}, {out.mutable_data(), n});
        }
        check(ok);
        return out;
      }
    });
  });
}

namespace {
// Storage-to-type: the RESCALE input type an array's dtype stands for.
void input_type_from(const py::array& a, bool scale32, qfold::rescale_attributes& attrs) {
  const char kind = a.dtype().kind();
  const auto size = a.dtype().itemsize();
  attrs.input_unsigned = kind == 'u' && size <= 2;
  attrs.input_type = size == 1   ? qfold::int_type::i8
                     : size == 2 ? qfold::int_type::i16
                     : size == 4 ? qfold::int_type::i32
                                 : (scale32 ? qfold::int_type::i32 : qfold::int_type::i48);
}

py::object rescale(py::handle values, py::handle multiplier, py::handle shift,
                   py::handle output_dtype, std::int64_t input_zp, std::int64_t output_zp,
                   py::object scale32, const std::string& rounding, py::object per_channel,
                   py::object input_type) {
  py_rescale r;
  r.scales = scales_from(multiplier, shift);
  r.attributes.input_zp = input_zp;
  r.attributes.output_zp = output_zp;
  r.attributes.rounding = parse_rounding(rounding);
  r.attributes.per_channel = per_channel.is_none() ? per_channel_default(multiplier)
                                                   : bool_arg(per_channel, "rescale: per_channel");
  auto& a = r.attributes;
  const std::string out = dtype_string(output_dtype, "rescale: output_dtype");
  const qfold::dtype od = parse_dtype(out, "rescale: output_dtype");
  a.output_unsigned = od == qfold::dtype::uint8 || od == qfold::dtype::uint16;
  a.output_type = od == qfold::dtype::int8 || od == qfold::dtype::uint8     ? qfold::int_type::i8
                  : od == qfold::dtype::int16 || od == qfold::dtype::uint16 ? qfold::int_type::i16
                                                                            : qfold::int_type::i32;
  const bool is_scalar = is_int_scalar(values);
  if (!input_type.is_none()) {
    a.input_type =
        parse_int_type(str_arg(input_type, "rescale: input_type"), "rescale: input_type");
    a.scale32 = scale32.is_none() ? a.input_type != qfold::int_type::i48
                                  : bool_arg(scale32, "rescale: scale32");
  } else if (is_scalar) {
    a.scale32 = scale32.is_none() || bool_arg(scale32, "rescale: scale32");
    a.input_type = a.scale32 ? qfold::int_type::i32 : qfold::int_type::i48;
  } else {
    const py::array arr = as_array(values, "rescale: values");
    const bool wide = arr.dtype().itemsize() == 8;
    a.scale32 = scale32.is_none() ? !wide : bool_arg(scale32, "rescale: scale32");
    visit_int(arr, "rescale: values", [](auto) { return 0; });  // a TypeError for float arrays
    input_type_from(arr, a.scale32, a);
    return apply_rescale(r, arr);
  }
  return apply_rescale(r, values);
}

// Two operands of one type T: arrays of the same shape, or one of them a scalar.
template <class T, class R, class F>
py::object elementwise2(py::handle x, py::handle y, std::string_view what, F&& f) {
  if (is_int_scalar(x) && is_int_scalar(y)) {
    const std::int64_t u = int_arg(x, what), v = int_arg(y, what);
    if (!std::in_range<T>(u) || !std::in_range<T>(v))
      raise(qfold::errc::value_out_of_range, std::string(what) + ": an operand does not fit");
    return py::int_(value_or_raise(f(static_cast<T>(u), static_cast<T>(v))));
  }
  const bool x_scalar = is_int_scalar(x), y_scalar = is_int_scalar(y);
  const auto a = int_array_as<T>(x_scalar ? py::handle(y) : x, what);
  const auto b = int_array_as<T>(x_scalar ? x : (y_scalar ? py::handle(y) : y), what);
  if (!(x_scalar || y_scalar) && shape_of(a) != shape_of(b))
    raise(qfold::errc::size_mismatch, std::string(what) + ": the operands' shapes differ");
  auto out = new_array<R>(shape_of(a), what);
  const T* p = a.data();
  const T* q = b.data();
  R* o = out.mutable_data();
  const bool broadcast = x_scalar || y_scalar;
  const auto n = static_cast<std::size_t>(a.size());
  for (std::size_t i = 0; i < n; ++i) {
    const T u = p[i], v = broadcast ? q[0] : q[i];
    const qfold::result<R> r = x_scalar ? f(v, u) : f(u, v);
    if (!r) raise(r.error().code, std::string(r.error().message), i);
    o[i] = *r;
  }
  return out;
}

// The operand type of an array call: the array's own int8/int16/int32, else int32 (checked).
template <class F>
py::object by_operand_type(py::handle x, py::handle y, F&& f) {
  const py::handle first = is_int_scalar(x) ? y : x;
  if (!is_int_scalar(first)) {
    const py::array a = as_array(first, "operand");
    if (a.dtype().kind() == 'i' && a.dtype().itemsize() == 1)
      return f.template operator()<std::int8_t>();
    if (a.dtype().kind() == 'i' && a.dtype().itemsize() == 2)
      return f.template operator()<std::int16_t>();
  }
  return f.template operator()<std::int32_t>();
}

qfold::tflite::rounding parse_tflite_rounding(std::string_view s) {
  return parse_option<qfold::tflite::rounding>(
      s,
      {{"double_round", qfold::tflite::rounding::double_round},
       {"single_round", qfold::tflite::rounding::single_round}},
      "rounding");
}
qfold::lane_overflow parse_overflow(std::string_view s) {
  return parse_option<qfold::lane_overflow>(
      s, {{"wrap", qfold::lane_overflow::wrap}, {"refuse", qfold::lane_overflow::refuse}},
      "overflow");
}
qfold::requantize_flavour parse_flavour(std::string_view s) {
  using F = qfold::requantize_flavour;
  return parse_option<F>(
      s,
      {{"tosa_single_round", F::tosa_single_round},
       {"tosa_double_round", F::tosa_double_round},
       {"tflite_double_round", F::tflite_double_round},
       {"tflite_single_round", F::tflite_single_round},
       {"tflite_neon_double_round", F::tflite_neon_double_round},
       {"tflite_neon_single_round", F::tflite_neon_single_round},
       {"cmsis_nn_double_round", F::cmsis_nn_double_round},
       {"cmsis_nn_single_round", F::cmsis_nn_single_round},
       {"cmsis_nn_single_round_before_ece5a38a", F::cmsis_nn_single_round_before_ece5a38a},
       {"cmsis_nn_mve_double_round", F::cmsis_nn_mve_double_round},
       {"cmsis_nn_mve_single_round", F::cmsis_nn_mve_single_round},
       {"cmsis_nn_mve_pred_single_round", F::cmsis_nn_mve_pred_single_round}},
      "requantize: flavour");
}

using qm = qfold::tflite::quantized_multiplier;
constexpr auto m32 = qfold::errc::multiplier_out_of_range;
constexpr auto s32 = qfold::errc::shift_out_of_range;

void bind_tflite(py::module_& t) {
  py::class_<qm>(t, "QuantizedMultiplier",
                 "TFLite's (multiplier, shift): multiplier * 2**(shift - 31), shift a left shift.")
      .def(py::init([](std::int32_t m, int s) {
             return qm{m, s};
           }),
           py::arg("multiplier"), py::arg("shift"))
      .def_readwrite("multiplier", &qm::multiplier)
      .def_readwrite("shift", &qm::shift)
      .def("__iter__", [](const qm& q) { return py::iter(py::make_tuple(q.multiplier, q.shift)); })
      .def("__eq__", [](const qm& a, const qm& b) { return a == b; })
      .def("__repr__", [](const qm& q) {
        return "QuantizedMultiplier(multiplier=" + std::to_string(q.multiplier) +
               ", shift=" + std::to_string(q.shift) + ")";
      });
  t.def(
      "quantize_multiplier",
      [](double scale, const std::string& rounding, const std::string& float_impl) {
        const auto impl = parse_option<qfold::tflite::float_impl>(
            float_impl,
            {{"native", qfold::tflite::float_impl::native},
             {"emulated", qfold::tflite::float_impl::emulated}},
            "float_impl");
        return value_or_raise(
            qfold::tflite::quantize_multiplier(scale, parse_tflite_rounding(rounding), impl));
      },
      py::arg("scale"), py::arg("rounding") = "double_round", py::arg("float_impl") = "native",
      "TFLite QuantizeMultiplier: the QuantizedMultiplier of a real scale (rounding: "
      "'double_round' default build, 'single_round' TFLITE_SINGLE_ROUNDING; float_impl "
      "'emulated' for TFLITE_EMULATE_FLOAT).");
  t.def(
      "multiply_by_quantized_multiplier",
      [](py::handle x, py::handle multiplier, py::handle shift, const std::string& rounding) {
        const auto q = narrow_arg<std::int32_t>(multiplier, "multiplier", m32);
        const auto s = narrow_arg<int>(shift, "shift", s32);
        const auto b = parse_tflite_rounding(rounding);
        return elementwise<std::int32_t, std::int32_t>(x, "x", [&](std::int32_t v) {
          return qfold::tflite::checked::multiply_by_quantized_multiplier(v, q, s, b);
        });
      },
      py::arg("x"), py::arg("multiplier"), py::arg("shift"), py::arg("rounding") = "double_round",
      "TFLite MultiplyByQuantizedMultiplier(int32 x) on an int or an array (int32 out).");
  t.def(
      "multiply_by_quantized_multiplier_int64",
      [](py::handle x, py::handle multiplier, py::handle shift) {
        const auto q = narrow_arg<std::int32_t>(multiplier, "multiplier", m32);
        const auto s = narrow_arg<int>(shift, "shift", s32);
        return elementwise<std::int64_t, std::int32_t>(x, "x", [&](std::int64_t v) {
          return qfold::tflite::checked::multiply_by_quantized_multiplier(v, q, s);
        });
      },
      py::arg("x"), py::arg("multiplier"), py::arg("shift"),
      "TFLite MultiplyByQuantizedMultiplier(int64 x) (int16 kernels): x an int48, shift <= 7.");
  t.def(
      "multiply_by_quantized_multiplier_4rows",
      [](py::handle x, py::handle multiplier, py::handle shift, const std::string& rounding,
         const std::string& overflow) {
        const auto q = narrow_arg<std::int32_t>(multiplier, "multiplier", m32);
        const auto s = narrow_arg<int>(shift, "shift", s32);
        const auto b = parse_tflite_rounding(rounding);
        const auto o = parse_overflow(overflow);
        return elementwise<std::int32_t, std::int32_t>(x, "x", [&](std::int32_t v) {
          return qfold::tflite::checked::multiply_by_quantized_multiplier_4rows(v, q, s, b, o);
        });
      },
      py::arg("x"), py::arg("multiplier"), py::arg("shift"), py::arg("rounding") = "double_round",
      py::arg("overflow") = "wrap",
      "TFLite MultiplyByQuantizedMultiplier4Rows (the NEON lanes) per element.");
  t.def(
      "downscale_int32_to_int16_multiplier",
      [](py::handle q) {
        return value_or_raise(qfold::tflite::checked::downscale_int32_to_int16_multiplier(
            narrow_arg<std::int32_t>(q, "multiplier", m32)));
      },
      py::arg("multiplier"), "TFLite DownScaleInt32ToInt16Multiplier.");
  t.def(
      "to_tosa", [](const qm& m) { return value_or_raise(qfold::tflite::to_tosa(m)); },
      py::arg("multiplier"), "The TOSA ScaleFactor of a QuantizedMultiplier (shift 31 - shift).");
  t.def(
      "from_tosa",
      [](const qfold::scale_factor& s) { return value_or_raise(qfold::tflite::from_tosa(s)); },
      py::arg("scale"), "The QuantizedMultiplier of a TOSA ScaleFactor.");
  t.def(
      "same_function",
      [](const std::string& rounding, bool tosa_double_round, int tflite_shift) {
        return qfold::tflite::same_function(parse_tflite_rounding(rounding), tosa_double_round,
                                            tflite_shift);
      },
      py::arg("rounding"), py::arg("tosa_double_round").noconvert(), py::arg("tflite_shift"),
      "Whether TFLite's build and TOSA's rounding compute the same function at this shift.");
}

void bind_gemmlowp(py::module_& g) {
  g.def(
      "saturating_rounding_doubling_high_mul",
      [](py::handle a, py::handle b) {
        return by_operand_type(a, b, [&]<class T>() -> py::object {
          if constexpr (std::is_same_v<T, std::int16_t>) {
            return elementwise2<T, T>(a, b, "srdhm", [](T u, T v) -> qfold::result<T> {
              return qfold::gemmlowp::saturating_rounding_doubling_high_mul(u, v);
            });
          } else {
            return elementwise2<std::int32_t, std::int32_t>(
                a, b, "srdhm", [](std::int32_t u, std::int32_t v) -> qfold::result<std::int32_t> {
                  return qfold::gemmlowp::saturating_rounding_doubling_high_mul(u, v);
                });
          }
        });
      },
      py::arg("a"), py::arg("b"),
      "gemmlowp SaturatingRoundingDoublingHighMul on int32 (or int16 arrays), elementwise.");
  const auto pot = [&g](const char* name, auto fn32, auto fn16, const char* doc) {
    g.def(
        name,
        [fn32, fn16](py::handle x, py::handle exponent) -> py::object {
          const auto e = narrow_arg<int>(exponent, "exponent", s32);
          if (!is_int_scalar(x)) {
            const py::array a = as_array(x, "x");
            if (a.dtype().kind() == 'i' && a.dtype().itemsize() == 2)
              return elementwise<std::int16_t, std::int16_t>(
                  a, "x", [&](std::int16_t v) { return fn16(v, e); });
          }
          return elementwise<std::int32_t, std::int32_t>(
              x, "x", [&](std::int32_t v) { return fn32(v, e); });
        },
        py::arg("x"), py::arg("exponent"), doc);
  };
  pot(
      "rounding_divide_by_pot",
      [](std::int32_t v, int e) { return qfold::gemmlowp::checked::rounding_divide_by_pot(v, e); },
      [](std::int16_t v, int e) { return qfold::gemmlowp::checked::rounding_divide_by_pot(v, e); },
      "gemmlowp RoundingDivideByPOT (int32, or int16 arrays): round half away from zero.");
  pot(
      "saturating_rounding_multiply_by_pot",
      [](std::int32_t v, int e) {
        return qfold::gemmlowp::checked::saturating_rounding_multiply_by_pot(v, e);
      },
      [](std::int16_t v, int e) {
        return qfold::gemmlowp::checked::saturating_rounding_multiply_by_pot(v, e);
      },
      "gemmlowp SaturatingRoundingMultiplyByPOT with a run-time exponent.");
}

qfold::cmsis_nn::rounding parse_cmsis_rounding(std::string_view s) {
  return parse_option<qfold::cmsis_nn::rounding>(
      s,
      {{"double_round", qfold::cmsis_nn::rounding::double_round},
       {"single_round", qfold::cmsis_nn::rounding::single_round}},
      "rounding");
}

void bind_cmsis_nn(py::module_& c) {
  c.def(
      "requantize",
      [](py::handle x, py::handle multiplier, py::handle shift, const std::string& rounding,
         const std::string& version) {
        const auto q = narrow_arg<std::int32_t>(multiplier, "multiplier", m32);
        const auto s = narrow_arg<std::int32_t>(shift, "shift", s32);
        const auto b = parse_cmsis_rounding(rounding);
        const auto v = parse_option<qfold::cmsis_nn::version>(
            version,
            {{"current", qfold::cmsis_nn::version::current},
             {"before_ece5a38a", qfold::cmsis_nn::version::before_ece5a38a}},
            "version");
        return elementwise<std::int32_t, std::int32_t>(x, "val", [&](std::int32_t e) {
          return qfold::cmsis_nn::checked::requantize(e, q, s, b, v);
        });
      },
      py::arg("val"), py::arg("multiplier"), py::arg("shift"), py::arg("rounding") = "double_round",
      py::arg("version") = "current", "CMSIS-NN arm_nn_requantize, elementwise.");
  c.def(
      "requantize_s64",
      [](py::handle x, py::handle multiplier, py::handle shift) {
        const auto q = narrow_arg<std::int32_t>(multiplier, "reduced_multiplier", m32);
        const auto s = narrow_arg<std::int32_t>(shift, "shift", s32);
        return elementwise<std::int64_t, std::int32_t>(x, "val", [&](std::int64_t e) {
          return qfold::cmsis_nn::checked::requantize_s64(e, q, s);
        });
      },
      py::arg("val"), py::arg("reduced_multiplier"), py::arg("shift"),
      "CMSIS-NN arm_nn_requantize_s64, elementwise.");
  const auto mve = [&c](const char* name, auto fn, const char* doc) {
    c.def(
        name,
        [fn](py::handle x, py::handle multiplier, py::handle shift, const std::string& rounding,
             const std::string& overflow) {
          const auto q = narrow_arg<std::int32_t>(multiplier, "multiplier", m32);
          const auto s = narrow_arg<std::int32_t>(shift, "shift", s32);
          const auto b = parse_cmsis_rounding(rounding);
          const auto o = parse_overflow(overflow);
          return elementwise<std::int32_t, std::int32_t>(
              x, "val", [&](std::int32_t e) { return fn(e, q, s, b, o); });
        },
        py::arg("val"), py::arg("multiplier"), py::arg("shift"),
        py::arg("rounding") = "double_round", py::arg("overflow") = "wrap", doc);
  };
  mve("requantize_mve", &qfold::cmsis_nn::checked::requantize_mve,
      "CMSIS-NN arm_requantize_mve (MVE lanes), elementwise.");
  mve("requantize_mve_pred", &qfold::cmsis_nn::checked::requantize_mve_pred,
      "CMSIS-NN arm_requantize_mve_pred, elementwise.");
  c.def(
      "accepts",
      [](const qm& m, const std::string& rounding) {
        return qfold::cmsis_nn::accepts(m, parse_cmsis_rounding(rounding));
      },
      py::arg("multiplier"), py::arg("rounding") = "double_round",
      "Whether CMSIS-NN's kernels define this QuantizedMultiplier.");
}

void bind_executorch(py::module_& e) {
  e.def(
      "arm_multiplier_and_shift",
      [](double scale, int bits) {
        return value_or_raise(
            qfold::executorch::checked::arm_multiplier_and_shift(scale, parse_bits(bits)));
      },
      py::arg("scale"), py::arg("bits") = 32,
      "ExecuTorch Arm backend's multiplier/shift (half to even).");
  e.def(
      "cortex_m_quantize_multiplier",
      [](double scale) {
        return value_or_raise(qfold::executorch::checked::cortex_m_quantize_multiplier(scale));
      },
      py::arg("scale"), "ExecuTorch Cortex-M backend's QuantizedMultiplier of a scale.");
  e.def(
      "cortex_m_quantize_multiplier_for_cmsis_nn",
      [](double scale, const std::string& rounding) {
        return value_or_raise(qfold::executorch::checked::cortex_m_quantize_multiplier_for_cmsis_nn(
            scale, parse_cmsis_rounding(rounding)));
      },
      py::arg("scale"), py::arg("rounding") = "double_round",
      "The same, refused (qfold.Error) where CMSIS-NN does not define the result.");
}

// Best wall time of the C++ batch call alone, on buffers prepared before the clock starts.
double time_rescale(const py_rescale& r, py::handle values, int repeats) {
  const py::array given = as_array(values, "values");
  check_rescale_call(r, given);
  const auto& a = r.attributes;
  return with_storage(a.input_type, a.input_unsigned, [&]<class In>() -> double {
    const auto in = int_array_as<In>(given, "values");
    return with_storage(a.output_type, a.output_unsigned, [&]<class Out>() -> double {
      if constexpr (std::is_same_v<Out, std::int64_t>) {
        raise(qfold::errc::illegal_type, "rescale: output type i48 is not allowed");
      } else {
        py::array_t<Out> out(shape_of(in));
        const auto n = static_cast<std::size_t>(in.size());
        double best = std::numeric_limits<double>::infinity();
        py::gil_scoped_release unlocked;
        for (int k = 0; k < repeats; ++k) {
          const auto t0 = std::chrono::steady_clock::now();
          const auto ok =
              qfold::rescale_array<In, Out>(a, r.scales, {in.data(), n}, {out.mutable_data(), n});
          const auto t1 = std::chrono::steady_clock::now();
          if (!ok) return std::numeric_limits<double>::quiet_NaN();
          best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
        }
        return best;
      }
    });
  });
}
}  // namespace

void bind_arith(py::module_& m) {
  m.def(
      "multiplier_shift",
      [](double scale, int bits, const std::string& tie) {
        return value_or_raise(
            qfold::compute_multiplier_and_shift(scale, parse_bits(bits), parse_tie(tie)));
      },
      py::arg("scale"), py::arg("bits") = 32, py::arg("tie") = "half_even",
      "compute_multiplier_and_shift: the TOSA ScaleFactor of a real scale, as ExecuTorch "
      "(tie='half_even') or MLIR (tie='half_away') derive it; bits 32 or 16. Scale 0 gives "
      "multiplier 0. Raises qfold.Error for NaN, infinite, negative or too large scales.");
  m.def(
      "reciprocal_scale",
      [](py::handle divisor) {
        return value_or_raise(qfold::checked::reciprocal_scale(narrow_arg<std::uint32_t>(
            divisor, "reciprocal_scale: divisor", qfold::errc::value_out_of_range)));
      },
      py::arg("divisor"), "TOSA reciprocal_scale(divisor) (AVG_POOL2D) as a ScaleFactor.");
  m.def(
      "apply_scale_32",
      [](py::handle value, py::handle multiplier, py::handle shift, bool double_round) {
        const auto q = narrow_arg<std::int32_t>(multiplier, "apply_scale_32: multiplier", m32);
        const auto s = narrow_arg<int>(shift, "apply_scale_32: shift", s32);
        // The parameters' errors first, with apply_scale_32's own messages (0 is always in range).
        if (const auto p = qfold::checked::apply_scale_32(0, q, s, double_round); !p)
          raise(p.error());
        if (is_int_scalar(value)) {
          const auto v = narrow_arg<std::int32_t>(value, "apply_scale_32: value",
                                                  qfold::errc::value_out_of_range);
          return py::object(
              py::int_(value_or_raise(qfold::checked::apply_scale_32(v, q, s, double_round))));
        }
        py_rescale r;  // RESCALE i32 -> i32 with zero points 0 is apply_scale_32 itself
        r.attributes.input_type = r.attributes.output_type = qfold::int_type::i32;
        r.attributes.rounding =
            double_round ? qfold::rounding_mode::double_round : qfold::rounding_mode::single_round;
        r.scales = {{q, s}};
        return apply_rescale(r, int_array_as<std::int32_t>(value, "apply_scale_32: value"));
      },
      py::arg("value"), py::arg("multiplier"), py::arg("shift"),
      py::arg("double_round").noconvert() = false,
      "TOSA apply_scale_32 on an int or an array (int32 out; other integer dtypes are converted, "
      "checked). Raises qfold.Error for every broken REQUIRE (index = the element).");
  m.def(
      "apply_scale_16",
      [](py::handle value, py::handle multiplier, py::handle shift) {
        const auto q = narrow_arg<std::int16_t>(multiplier, "apply_scale_16: multiplier", m32);
        const auto s = narrow_arg<int>(shift, "apply_scale_16: shift", s32);
        return elementwise<std::int64_t, std::int32_t>(
            value, "apply_scale_16: value",
            [&](std::int64_t v) { return qfold::checked::apply_scale_16(v, q, s); });
      },
      py::arg("value"), py::arg("multiplier"), py::arg("shift"),
      "TOSA apply_scale_16 (int48 value, int16 multiplier) on an int or an array (int32 out).");
  m.def("rescale", &rescale, py::arg("values"), py::arg("multiplier"),
        py::arg("shift") = py::none(), py::kw_only(), py::arg("output_dtype") = "int8",
        py::arg("input_zp") = 0, py::arg("output_zp") = 0, py::arg("scale32") = py::none(),
        py::arg("rounding") = "single_round", py::arg("per_channel") = py::none(),
        py::arg("input_type") = py::none(),
        "TOSA RESCALE over a whole array (rescale_array): the input type from the dtype (int8, "
        "uint8, int16, uint16, int32; int64 is i32 when scale32 else i48) or input_type; the "
        "output dtype int8/uint8/int16/uint16/int32. multiplier/shift: ints (per tensor), 1-D "
        "sequences (per channel = last dimension), or ScaleFactor(s) with shift=None.");
  m.def(
      "mul",
      [](py::handle a, py::handle b, py::handle shift) {
        const auto s = narrow_arg<int>(shift, "mul: shift", s32);
        return by_operand_type(a, b, [&]<class T>() {
          return elementwise2<T, std::int32_t>(
              a, b, "mul", [&](T u, T v) { return qfold::checked::mul<T>(u, v, s); });
        });
      },
      py::arg("a"), py::arg("b"), py::arg("shift") = 0,
      "TOSA MUL: int8 x int8, int16 x int16 (arrays of those dtypes) or int32 x int32 into int32; "
      "shift (int32 only) rounds half up, shift 0 wraps. b (or a) may be a scalar.");
  m.def(
      "requantize",
      [](const std::string& flavour, py::handle x, py::handle multiplier, py::handle shift) {
        const auto f = parse_flavour(flavour);
        const qm q{narrow_arg<std::int32_t>(multiplier, "requantize: multiplier", m32),
                   narrow_arg<int>(shift, "requantize: shift", s32)};
        return elementwise<std::int32_t, std::int32_t>(x, "requantize: x", [&](std::int32_t v) {
          return qfold::checked::requantize(f, v, q);
        });
      },
      py::arg("flavour"), py::arg("x"), py::arg("multiplier"), py::arg("shift"),
      "One of the 12 requantize flavours (TOSA, TFLite, CMSIS-NN, ...) with a TFLite-style "
      "(multiplier, left shift), elementwise.");
  m.def("_time_rescale", &time_rescale, py::arg("rescale"), py::arg("values"),
        py::arg("repeats") = 5,
        "Benchmark hook: the best time in seconds of the C++ rescale_array call alone.");

  py::module_ t = m.def_submodule("tflite", "TFLite's requantization (arith/tflite.hpp).");
  bind_tflite(t);
  py::module_ g = m.def_submodule("gemmlowp", "gemmlowp fixed-point helpers (arith/gemmlowp.hpp).");
  bind_gemmlowp(g);
  py::module_ c = m.def_submodule("cmsis_nn", "CMSIS-NN requantization (arith/cmsis_nn.hpp).");
  bind_cmsis_nn(c);
  py::module_ e = m.def_submodule("executorch", "ExecuTorch's scale derivations.");
  bind_executorch(e);
}

}  // namespace qfold_py
