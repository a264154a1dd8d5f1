// Bindings of include/qfold/fold/: the IR-free folds on plain parameters (batch norm into conv /
// linear weights, DyT alpha into the tanh table, DyT gamma/beta into the next conv, a constant
// scale into a quantize). Each returns its result, or a qfold.Rejection value.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <qfold/fold/batch_norm.hpp>
#include <qfold/fold/dyt_affine.hpp>
#include <qfold/fold/dyt_alpha.hpp>
#include <qfold/fold/rejection.hpp>
#include <qfold/fold/scale_into_quantize.hpp>
#include <qfold/quant/conventions.hpp>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"  // first: see there

namespace qfold_py {

namespace {
template <class T>
std::span<const T> span_of(const py::array_t<T, py::array::c_style>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

qfold::weight_layout parse_layout(std::string_view s) {
  return parse_option<qfold::weight_layout>(s,
                                            {{"o_i_s", qfold::weight_layout::o_i_s},
                                             {"o_s_i", qfold::weight_layout::o_s_i},
                                             {"s_i_o", qfold::weight_layout::s_i_o},
                                             {"i_o_s", qfold::weight_layout::i_o_s},
                                             {"s_c_m", qfold::weight_layout::s_c_m}},
                                            "weight layout");
}

template <class T>
py::object batch_norm(const py::array& weight, py::handle bias, py::handle mean, py::handle var,
                      py::handle gamma, py::handle beta, double eps, qfold::weights_kind kind,
                      qfold::weight_layout layout, std::int64_t groups, bool training) {
  // Every input read once into qfold's own memory: the GIL is released while the fold checks
  // them (finite variances, ...) and uses them, and another thread may write the caller's arrays.
  const auto w = float_array_as<T>(weight, "fold_batch_norm: weight", true);
  const std::vector<std::int64_t> shape(w.shape(), w.shape() + w.ndim());
  py::array_t<T, py::array::c_style> b;
  if (!bias.is_none()) b = float_array_as<T>(bias, "fold_batch_norm: bias", true);
  const auto mu = float_array_as<T>(mean, "fold_batch_norm: mean", true);
  const auto v = float_array_as<T>(var, "fold_batch_norm: var", true);
  const auto g = float_array_as<T>(gamma, "fold_batch_norm: gamma", true);
  const auto be = float_array_as<T>(beta, "fold_batch_norm: beta", true);
  for (const auto* p : {&mu, &v, &g, &be})
    if (p->ndim() != 1) raise(qfold::errc::invalid_shape, "fold_batch_norm: statistics are 1-D");
  auto folded_w = new_array<T>(shape_of(w), "fold_batch_norm: weight");
  auto folded_b = new_array<T>({mu.size()}, "fold_batch_norm: mean");
  const qfold::weights_view<T> view(span_of(w), shape, layout, groups, kind);
  const qfold::batch_norm_params<T> bn{span_of(mu), span_of(v),          span_of(g),
                                       span_of(be), static_cast<T>(eps), training};
  std::optional<qfold::rejection> r;
  {
    py::gil_scoped_release unlocked;
    r = qfold::fold_batch_norm<T>(
        view, bias.is_none() ? std::span<const T>{} : span_of(b), bn,
        {folded_w.mutable_data(), static_cast<std::size_t>(folded_w.size())},
        {folded_b.mutable_data(), static_cast<std::size_t>(folded_b.size())});
  }
  if (r) return to_python(*r);
  return py::make_tuple(folded_w, folded_b);
}

qfold::domain range_arg(py::handle t, std::string_view what) {
  if (!py::isinstance<py::tuple>(t) || py::len(t) != 2) raise_type(t, what, "a tuple (lo, hi)");
  const auto p = py::reinterpret_borrow<py::tuple>(t);
  return {int_arg(p[0], what), int_arg(p[1], what)};
}
const py_rescale& rescale_arg(py::handle r, std::string_view what) {
  if (!py::isinstance<py_rescale>(r))
    throw py::type_error(std::string(what) + ": expected a qfold.Rescale");
  return r.cast<const py_rescale&>();
}

qfold::scale_op parse_op(std::string_view s) {
  return parse_option<qfold::scale_op>(
      s, {{"div", qfold::scale_op::div}, {"mul", qfold::scale_op::mul}}, "op");
}

struct py_dyt_affine_plan {
  std::string action;
  py::array weights, bias;
  std::int64_t input_zero_point = 0;
};
}  // namespace

void bind_folds(py::module_& m) {
  m.def(
      "fold_batch_norm",
      [](py::handle weight, py::handle bias, py::handle mean, py::handle var, py::handle gamma,
         py::handle beta, double eps, const std::string& kind, const std::string& layout,
         std::int64_t groups, bool training) -> py::object {
        const auto k = parse_option<qfold::weights_kind>(
            kind, {{"conv", qfold::weights_kind::conv}, {"linear", qfold::weights_kind::linear}},
            "fold_batch_norm: kind");
        const auto l = parse_layout(layout);
        const py::array w = as_array(weight, "fold_batch_norm: weight");
        if (w.dtype().kind() == 'f' && w.dtype().itemsize() == 4)
          return batch_norm<float>(w, bias, mean, var, gamma, beta, eps, k, l, groups, training);
        if (w.dtype().kind() == 'f' && w.dtype().itemsize() == 8)
          return batch_norm<double>(w, bias, mean, var, gamma, beta, eps, k, l, groups, training);
        throw py::type_error("fold_batch_norm: weight must be float32 or float64, got dtype " +
                             std::string(py::str(w.dtype())));
      },
      py::arg("weight"), py::arg("bias"), py::arg("mean"), py::arg("var"), py::arg("gamma"),
      py::arg("beta"), py::arg("eps") = 1e-5, py::kw_only(), py::arg("kind") = "conv",
      py::arg("layout") = "o_i_s", py::arg("groups") = 1, py::arg("training").noconvert() = false,
      "Inference batch norm folded into the preceding conv (kind='conv', layout o_i_s for "
      "Conv1d/2d/3d, i_o_s for ConvTranspose, o_s_i / s_i_o for TFLite / TF, s_c_m for TOSA "
      "depthwise (HWCM, groups = C); groups) or linear "
      "(kind='linear') in the weight's dtype, in torch.nn.utils.fusion's operation order. bias "
      "may be None. Returns (weight, bias) arrays or a qfold.Rejection; the inputs are never "
      "written. All arrays share the weight's float dtype (lists are converted).");

  m.def(
      "fold_dyt_alpha",
      [](py::handle activation, py::handle activation_rescale, py::handle alpha_rescale,
         std::int64_t alpha, int mul_shift, py::handle output_rescale, py::handle tanh_input,
         py::handle tanh_table) -> py::object {
        const auto table = int_array_as<std::int8_t>(tanh_table, "fold_dyt_alpha: tanh_table");
        const qfold::dyt_alpha_site site{
            range_arg(activation, "fold_dyt_alpha: activation"),
            rescale_arg(activation_rescale, "activation_rescale").view(),
            rescale_arg(alpha_rescale, "alpha_rescale").view(),
            alpha,
            mul_shift,
            rescale_arg(output_rescale, "output_rescale").view(),
            range_arg(tanh_input, "fold_dyt_alpha: tanh_input"),
            span_of(table)};
        py::array_t<std::int8_t> out(256);
        if (auto r =
                qfold::fold_dyt_alpha(site, std::span<std::int8_t, 256>(out.mutable_data(), 256)))
          return to_python(*r);
        return out;
      },
      py::kw_only(), py::arg("activation"), py::arg("activation_rescale"), py::arg("alpha_rescale"),
      py::arg("alpha"), py::arg("mul_shift"), py::arg("output_rescale"), py::arg("tanh_input"),
      py::arg("tanh_table"),
      "DyT's alpha folded into the tanh table: TABLE(RESCALE_i8(MUL(RESCALE_i32(act), "
      "RESCALE_i32(alpha)))) as one int8 table (256 entries, entry i for code i - 128), built by "
      "replaying the integer arithmetic on every activation code, or a qfold.Rejection. "
      "activation / tanh_input are (qmin, qmax) code ranges.");
  m.def(
      "dyt_alpha_qparams_line_up",
      [](py::handle activation, py::handle activation_rescale, py::handle tanh_input,
         py::handle output_rescale) -> py::object {
        if (auto r = qfold::dyt_alpha_qparams_line_up(
                to_qparams(activation, "activation"),
                rescale_arg(activation_rescale, "activation_rescale").view(),
                to_qparams(tanh_input, "tanh_input"),
                rescale_arg(output_rescale, "output_rescale").view()))
          return to_python(*r);
        return py::none();
      },
      py::arg("activation"), py::arg("activation_rescale"), py::arg("tanh_input"),
      py::arg("output_rescale"),
      "None when the DyT alpha pattern's zero points and types line up, else a Rejection.");

  py::class_<py_dyt_affine_plan>(m, "DytAffinePlan",
                                 "fold_dyt_affine's plan: action 'fold' (new weights, bias and "
                                 "input zero point), 'bypass_affine' or 'bypass_gamma'.")
      .def_readonly("action", &py_dyt_affine_plan::action)
      .def_readonly("weights", &py_dyt_affine_plan::weights)
      .def_readonly("bias", &py_dyt_affine_plan::bias)
      .def_readonly("input_zero_point", &py_dyt_affine_plan::input_zero_point)
      .def("__repr__",
           [](const py_dyt_affine_plan& p) { return "DytAffinePlan(action='" + p.action + "')"; });
  m.def(
      "fold_dyt_affine",
      [](py::handle table, std::int64_t table_zero_point, py::handle table_rescale,
         py::handle gamma_rescale, py::handle gamma, int mul_shift, py::handle product_rescale,
         py::handle scaled_rescale, py::handle beta_rescale, py::handle beta,
         py::handle sum_rescale, py::handle weights, const std::string& weight_layout,
         std::int64_t groups, py::handle weight_zero_points, py::handle weight_dtype,
         py::handle bias, std::int64_t input_zero_point, py::handle padded_arg) -> py::object {
        const bool padded = bool_arg(padded_arg, "fold_dyt_affine: padded");
        const auto t = int_array_as<std::int8_t>(table, "fold_dyt_affine: table");
        const auto g = int_array_as<std::int64_t>(gamma, "fold_dyt_affine: gamma");
        const auto b = int_array_as<std::int64_t>(beta, "fold_dyt_affine: beta");
        const auto w = int_array_as<std::int64_t>(weights, "fold_dyt_affine: weights");
        const auto wzp =
            int_array_as<std::int64_t>(weight_zero_points, "fold_dyt_affine: weight_zero_points");
        py::array_t<std::int64_t, py::array::c_style> cb;
        if (!bias.is_none()) cb = int_array_as<std::int64_t>(bias, "fold_dyt_affine: bias");
        // Per-channel values are 1-D (a (2, 2) gamma is not 4 channels), and a bias given is not
        // empty: the fold reads an empty span as "no bias".
        if (t.ndim() > 1 || g.ndim() > 1 || b.ndim() > 1 || cb.ndim() > 1 ||
            (!bias.is_none() && cb.size() == 0))
          return to_python(qfold::rejection{
              qfold::reason::invalid_shape,
              "fold_dyt_affine: table, gamma, beta and bias are 1-D, a bias not empty"});
        if (wzp.ndim() > 1)
          return to_python(qfold::rejection{qfold::reason::invalid_shape,
                                            "fold_dyt_affine: weight_zero_points are 1-D"});
        const std::vector<std::int64_t> shape(w.shape(), w.shape() + w.ndim());
        const qfold::dyt_affine_site site{span_of(t),
                                          table_zero_point,
                                          rescale_arg(table_rescale, "table_rescale").view(),
                                          rescale_arg(gamma_rescale, "gamma_rescale").view(),
                                          span_of(g),
                                          mul_shift,
                                          rescale_arg(product_rescale, "product_rescale").view(),
                                          rescale_arg(scaled_rescale, "scaled_rescale").view(),
                                          rescale_arg(beta_rescale, "beta_rescale").view(),
                                          span_of(b),
                                          rescale_arg(sum_rescale, "sum_rescale").view()};
        const qfold::dyt_affine_conv conv{
            span_of(w),
            shape,
            parse_layout(weight_layout),
            groups,
            span_of(wzp),
            parse_dtype(dtype_string(weight_dtype, "fold_dyt_affine: weight_dtype"),
                        "fold_dyt_affine: weight_dtype"),
            bias.is_none() ? std::span<const std::int64_t>{} : span_of(cb),
            input_zero_point,
            padded};
        qfold::dyt_affine_plan plan;
        if (auto r = qfold::fold_dyt_affine(site, conv, plan)) return to_python(*r);
        py_dyt_affine_plan p;
        p.action = plan.action == qfold::dyt_affine_action::fold            ? "fold"
                   : plan.action == qfold::dyt_affine_action::bypass_affine ? "bypass_affine"
                                                                            : "bypass_gamma";
        p.input_zero_point = plan.input_zero_point;
        if (plan.action == qfold::dyt_affine_action::fold) {
          py::array_t<std::int64_t> nw(shape_of(w));
          std::copy(plan.weights.begin(), plan.weights.end(), nw.mutable_data());
          py::array_t<std::int64_t> nb(static_cast<py::ssize_t>(plan.bias.size()));
          std::copy(plan.bias.begin(), plan.bias.end(), nb.mutable_data());
          p.weights = nw;
          p.bias = nb;
        }
        return py::cast(std::move(p));
      },
      py::kw_only(), py::arg("table"), py::arg("table_zero_point"), py::arg("table_rescale"),
      py::arg("gamma_rescale"), py::arg("gamma"), py::arg("mul_shift"), py::arg("product_rescale"),
      py::arg("scaled_rescale"), py::arg("beta_rescale"), py::arg("beta"), py::arg("sum_rescale"),
      py::arg("weights"), py::arg("weight_layout") = "o_i_s", py::arg("groups") = 1,
      py::arg("weight_zero_points") = std::vector<std::int64_t>{0},
      py::arg("weight_dtype") = "int8", py::arg("bias") = py::none(),
      py::arg("input_zero_point") = 0, py::arg("padded") = py::bool_(false),
      "DyT's per-channel gamma/beta folded into the next conv's integer weights and bias, only "
      "where each channel's map is exactly integer-affine on the table's codes; a DytAffinePlan "
      "or a qfold.Rejection (witness index: the channel, weight or bias).");

  m.def(
      "fold_scale_into_quantize",
      [](const std::string& op, double c, py::handle q, const std::string& exactness,
         const std::string& real) -> py::object {
        const auto o = parse_op(op);
        const auto e =
            parse_option<qfold::float_exactness>(exactness,
                                                 {{"bit_exact", qfold::float_exactness::bit_exact},
                                                  {"real", qfold::float_exactness::real}},
                                                 "exactness");
        const qfold::qparams in = to_qparams(q, "qparams");
        qfold::qparams folded;
        const auto r =
            real == "float64" ? qfold::fold_scale_into_quantize<double>(o, c, in, e, folded)
            : real == "float32"
                ? qfold::fold_scale_into_quantize<float>(o, static_cast<float>(c), in, e, folded)
                : (raise(qfold::errc::illegal_attributes,
                         "fold_scale_into_quantize: real is 'float32' or 'float64'"),
                   std::optional<qfold::rejection>{});
        if (r) return to_python(*r);
        return py::cast(folded);
      },
      py::arg("op"), py::arg("c"), py::arg("qparams"), py::arg("exactness") = "bit_exact",
      py::arg("real") = "float32",
      "quantize(x / c) (op='div') or quantize(x * c) (op='mul') as one quantize: the folded "
      "QParams, or a Rejection (bit_exact folds only powers of two; 'real' also folds others). "
      "c is rounded to `real` first.");
  m.def(
      "prove_requantize_identity",
      [](const std::string& op, double c, py::handle in_q, py::handle out_q,
         const std::string& convention) -> py::object {
        const auto o = parse_op(op);
        const qfold::qparams in = to_qparams(in_q, "in_qparams"),
                             out = to_qparams(out_q, "out_qparams");
        std::optional<qfold::rejection> r;
        if (convention == "executorch")
          r = qfold::prove_requantize_identity<float>(o, static_cast<float>(c), in, out,
                                                      qfold::conventions::executorch);
        else if (convention == "tflite")
          r = qfold::prove_requantize_identity<float>(o, static_cast<float>(c), in, out,
                                                      qfold::conventions::tflite);
        else if (convention == "vela")
          r = qfold::prove_requantize_identity<double>(o, c, in, out, qfold::conventions::vela);
        else if (convention == "vela_8bit_op")
          r = qfold::prove_requantize_identity<double>(o, c, in, out,
                                                       qfold::conventions::vela_8bit_op);
        else
          raise(
              qfold::errc::illegal_attributes,
              "prove_requantize_identity: convention is executorch, tflite, vela or vela_8bit_op");
        if (r) return to_python(*r);
        return py::none();
      },
      py::arg("op"), py::arg("c"), py::arg("in_qparams"), py::arg("out_qparams"),
      py::arg("convention") = "executorch",
      "None when dequantize -> op(c) -> quantize gives back every code unchanged (the sandwich "
      "can go), else a Rejection with the first code that changes (index = code - qmin).");
}

}  // namespace qfold_py
