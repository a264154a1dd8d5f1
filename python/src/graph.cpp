// qfold.run_passes: qfold's graph passes over an IR written in Python. A C++ adapter
// (ir_traits<py_graph>) calls the Python object's methods, one per customization point; node ids
// are the Python objects the IR hands out, interned into indices (a dict keeps them alive, the
// GIL is held throughout). A Python exception in any method is an ordinary C++ exception to the
// pass, which reports the site as adapter_failure (rolled back when it was being applied); its
// text is kept in the report's adapter_errors. Nothing thrown escapes.
//
// Supported passes: fold_batch_norm and fold_scale_into_quantize (the float read points, the
// mutation points, qparams / qparams_shared / set_qparams), and the integer passes fold_dyt_alpha,
// fold_dyt_affine, fold_merge_rescales, fold_compose_tables, fold_collapse_to_table (the integer
// read points; values are copied out of whatever the methods return, every value range checked).
// The adapter models every point at compile time; which passes a given object can run is decided
// at call time by the methods it has (required_methods below). A TABLE's entries are its operand
// 1, an int_constant (TOSA's form): there is no table_values point. An object with add_table16
// (and add_rescale) gets int16 chains collapsed too, through a second traits type (py_graph16);
// without it they are refused by collapse_to_table.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/fold/scale_into_quantize.hpp>
#include <qfold/graph/batch_norm_pass.hpp>
#include <qfold/graph/passes.hpp>
#include <qfold/graph/pipeline.hpp>
#include <qfold/graph/report.hpp>
#include <qfold/graph/scale_into_quantize_pass.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common.hpp"  // first: see there

namespace qfold_py {
namespace {

// The Python IR and what the adapter keeps for it: the interned node ids and the arrays the read
// points returned since the last mutation (their spans must stay valid until then).
struct py_graph {
  py::object ir;
  py::dict index_of;  // node object -> index
  std::vector<py::object> node_objects;
  struct held {
    py::array_t<float, py::array::c_style> data;
    std::vector<std::int64_t> shape;
  };
  std::unordered_map<std::size_t, held> constants;
  // Weight zero points quantized_conv returned: kept for the whole run (its spans never dangle).
  std::deque<std::vector<std::int64_t>> zero_points;
  std::vector<std::string> errors;  // the text of every Python exception an adapter call raised

  std::size_t intern(py::handle obj) {
    py::object key = py::reinterpret_borrow<py::object>(obj);
    if (index_of.contains(key)) return index_of[key].cast<std::size_t>();
    const std::size_t i = node_objects.size();
    node_objects.push_back(key);
    index_of[key] = i;
    return i;
  }
  [[nodiscard]] py::object object(std::size_t n) const { return node_objects.at(n); }
  void changed() { constants.clear(); }

  // ir.<name>(args...).
  template <class... A>
  py::object call(const char* name, A&&... args) const {
    return ir.attr(name)(std::forward<A>(args)...);
  }
  // f() for the customization point `name`, with the text of what it throws (a Python exception,
  // a conversion's TypeError) recorded before it propagates to the pass.
  template <class F>
  decltype(auto) guard(const char* name, F&& f) const {
    try {
      return f();
    } catch (const std::exception& e) {
      try {
        const_cast<py_graph*>(this)->errors.push_back(std::string(name) + ": " + e.what());
      } catch (...) {  // no room to record it: the site is an adapter_failure all the same
      }
      throw;
    }
  }
  // Whether the object provides `name`: its class has it, or its instance __dict__ does (pass
  // selection and the optional methods; unlike hasattr on the object, it runs none of the
  // object's own attribute lookup code, so an exception there is never swallowed).
  [[nodiscard]] bool provides(const char* name) const {
    if (py::hasattr(py::type::of(ir), name)) return true;
    const py::object d = py::getattr(ir, "__dict__", py::none());
    return !d.is_none() && py::isinstance<py::dict>(d) && d.contains(name);
  }
};

qfold::op_kind kind_from(py::handle k) {
  if (py::isinstance<qfold::op_kind>(k)) return k.cast<qfold::op_kind>();
  const std::string s = py::str(k);
  for (std::uint8_t i = 0; i <= static_cast<std::uint8_t>(qfold::op_kind::other); ++i) {
    const auto e = static_cast<qfold::op_kind>(i);
    if (qfold::to_string(e) == s) return e;
  }
  throw py::value_error("kind(n): unknown op kind '" + s + "'");
}

// d.get(key, default) for a dict (or None: every default).
py::object field(py::handle d, const char* key, py::object fallback) {
  if (d.is_none()) return fallback;
  return d.attr("get")(key, fallback);
}

qfold::weight_layout layout_from(py::handle v) {
  if (py::isinstance<qfold::weight_layout>(v)) return v.cast<qfold::weight_layout>();
  return parse_option<qfold::weight_layout>(std::string(py::str(v)),
                                            {{"o_i_s", qfold::weight_layout::o_i_s},
                                             {"o_s_i", qfold::weight_layout::o_s_i},
                                             {"s_i_o", qfold::weight_layout::s_i_o},
                                             {"i_o_s", qfold::weight_layout::i_o_s}},
                                            "conv_attributes: layout");
}

// obj[key] of a dict, obj.key of any other object; fallback when absent.
py::object member(py::handle obj, const char* key, py::object fallback) {
  if (py::isinstance<py::dict>(obj)) return obj.attr("get")(key, fallback);
  return py::getattr(obj, key, fallback);
}
py::object required_member(py::handle obj, const char* key, const char* what) {
  py::object v = member(obj, key, py::none());
  if (v.is_none()) throw py::value_error(std::string(what) + ": '" + key + "' is missing");
  return v;
}

// An integer of a method's answer, range checked into T (a TypeError or value_out_of_range,
// never a wrapped value).
template <class T>
T int_as(py::handle v, const char* what) {
  const std::int64_t i = int_arg(v, what);
  if (!std::in_range<T>(i))
    raise(qfold::errc::value_out_of_range, std::string(what) + ": value does not fit");
  return static_cast<T>(i);
}

// Any integer array-like (numpy int8..int64, a list) as int64 values, with its shape.
std::vector<std::int64_t> int64_values(py::handle obj, const char* what,
                                       std::vector<std::int64_t>* shape = nullptr) {
  const auto a = int_array_as<std::int64_t>(obj, what);  // uint64 beyond int64: out of range
  if (shape) {
    shape->clear();
    for (py::ssize_t d = 0; d < a.ndim(); ++d) shape->push_back(a.shape(d));
  }
  return {a.data(), a.data() + a.size()};
}

constexpr std::pair<std::string_view, qfold::rounding_mode> rounding_names[] = {
    {"single_round", qfold::rounding_mode::single_round},
    {"inexact_round", qfold::rounding_mode::inexact_round},
    {"double_round", qfold::rounding_mode::double_round}};

qfold::rescale_attributes rescale_attributes_from(py::handle d) {
  qfold::rescale_attributes a;
  const char* what = "rescale(n)";
  a.input_type = parse_int_type(std::string(py::str(required_member(d, "input_type", what))),
                                "rescale(n): input_type");
  a.output_type = parse_int_type(std::string(py::str(required_member(d, "output_type", what))),
                                 "rescale(n): output_type");
  a.scale32 = member(d, "scale32", py::bool_(true)).cast<bool>();
  a.rounding = parse_option<qfold::rounding_mode>(
      std::string(py::str(member(d, "rounding", py::str("single_round")))),
      {rounding_names[0], rounding_names[1], rounding_names[2]}, "rescale(n): rounding");
  a.per_channel = member(d, "per_channel", py::bool_(false)).cast<bool>();
  a.input_unsigned = member(d, "input_unsigned", py::bool_(false)).cast<bool>();
  a.output_unsigned = member(d, "output_unsigned", py::bool_(false)).cast<bool>();
  a.input_zp = int_arg(member(d, "input_zp", py::int_(0)), "rescale(n): input_zp");
  a.output_zp = int_arg(member(d, "output_zp", py::int_(0)), "rescale(n): output_zp");
  return a;
}

py::dict rescale_attributes_to(const qfold::rescale_attributes& a) {
  py::dict d;
  d["input_type"] = py::str(std::string(int_type_name(a.input_type)));
  d["output_type"] = py::str(std::string(int_type_name(a.output_type)));
  d["scale32"] = a.scale32;
  for (const auto& [name, mode] : rounding_names)
    if (mode == a.rounding) d["rounding"] = py::str(std::string(name));
  d["per_channel"] = a.per_channel;
  d["input_unsigned"] = a.input_unsigned;
  d["output_unsigned"] = a.output_unsigned;
  d["input_zp"] = a.input_zp;
  d["output_zp"] = a.output_zp;
  return d;
}

// The methods each pass calls on the Python object (mutation points included): a pass runs only
// when the object has them all. qparams is optional for the integer passes but DyT (None
// everywhere without it); an object with qparams needs set_qparams too.
std::vector<const char*> required_methods(std::string_view pass, bool has_qparams) {
  std::vector<const char*> r = {"nodes", "kind", "operands", "use_count", "replace_uses", "erase"};
  const auto add = [&](std::initializer_list<const char*> more) {
    r.insert(r.end(), more.begin(), more.end());
  };
  if (pass == qfold::batch_norm_pass_name) {
    add({"constant", "conv_attributes", "batch_norm_attributes", "output_rank", "add_constant",
         "set_operand", "remove_last_operand"});
    return r;
  }
  if (pass == qfold::scale_into_quantize_pass_name) {
    add({"constant", "qparams", "set_qparams", "set_operand", "remove_last_operand"});
    return r;
  }
  add({"int_constant", "output_shape", "rescale", "mul_shift"});
  if (has_qparams) add({"set_qparams"});
  if (pass == qfold::merge_rescales_pass_name) add({"add_rescale"});
  if (pass == qfold::compose_tables_pass_name) add({"add_table"});
  if (pass == qfold::collapse_to_table_pass_name)
    add({"add_table", "clamp_attributes", "element_type"});
  if (pass == qfold::dyt_alpha_pass_name) add({"qparams", "set_qparams", "add_table"});
  if (pass == qfold::dyt_affine_pass_name)
    add({"qparams", "set_qparams", "conv_attributes", "quantized_conv", "view_axis",
         "add_int_constant", "set_operand", "set_conv_input_zero_point"});
  return r;
}

std::optional<std::size_t> optional_node(py_graph& g, py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return g.intern(obj);
}

}  // namespace
}  // namespace qfold_py

namespace qfold {
namespace py = pybind11;
}

template <>
struct qfold::ir_traits<qfold_py::py_graph> {
  using G = qfold_py::py_graph;
  using node_id = std::size_t;
  using py_object = pybind11::object;

  static std::vector<std::size_t> nodes(const G& cg) {
    return cg.guard("nodes", [&]() -> std::vector<std::size_t> {
      G& g = const_cast<G&>(cg);  // interning is the adapter's own state, not the graph's
      std::vector<std::size_t> r;
      for (const auto n : g.call("nodes")) r.push_back(g.intern(n));
      return r;
    });
  }
  static op_kind kind(const G& g, std::size_t n) {
    return g.guard("kind",
                   [&]() -> op_kind { return qfold_py::kind_from(g.call("kind", g.object(n))); });
  }
  static std::vector<std::size_t> operands(const G& cg, std::size_t n) {
    return cg.guard("operands", [&]() -> std::vector<std::size_t> {
      G& g = const_cast<G&>(cg);
      std::vector<std::size_t> r;
      for (const auto v : g.call("operands", g.object(n))) r.push_back(g.intern(v));
      return r;
    });
  }
  static std::size_t use_count(const G& g, std::size_t n) {
    return g.guard("use_count", [&]() -> std::size_t {
      return g.call("use_count", g.object(n)).cast<std::size_t>();
    });
  }
  static std::optional<tensor_view<float>> constant(const G& cg, std::size_t n) {
    return cg.guard("constant", [&]() -> std::optional<tensor_view<float>> {
      G& g = const_cast<G&>(cg);
      if (const auto it = g.constants.find(n); it != g.constants.end())
        return tensor_view<float>{
            {it->second.data.data(), static_cast<std::size_t>(it->second.data.size())},
            it->second.shape};
      const py_object c = g.call("constant", g.object(n));
      if (c.is_none()) return std::nullopt;
      G::held h{qfold_py::float_array_as<float>(c, "constant(n)"), {}};
      for (py::ssize_t d = 0; d < h.data.ndim(); ++d) h.shape.push_back(h.data.shape(d));
      const auto& stored = g.constants.emplace(n, std::move(h)).first->second;
      return tensor_view<float>{{stored.data.data(), static_cast<std::size_t>(stored.data.size())},
                                stored.shape};
    });
  }
  static qfold::conv_attributes conv_attributes(const G& g, std::size_t n) {
    return g.guard("conv_attributes", [&]() -> qfold::conv_attributes {
      const py_object d = g.call("conv_attributes", g.object(n));
      qfold::conv_attributes a;
      a.groups = qfold_py::field(d, "groups", py::int_(1)).cast<std::int64_t>();
      a.transposed = qfold_py::field(d, "transposed", py::bool_(false)).cast<bool>();
      a.layout = qfold_py::layout_from(
          qfold_py::field(d, "layout", py::str(a.transposed ? "i_o_s" : "o_i_s")));
      a.padded = qfold_py::field(d, "padded", py::bool_(false)).cast<bool>();
      a.input_channel_axis =
          qfold_py::field(d, "input_channel_axis", py::int_(1)).cast<std::int64_t>();
      return a;
    });
  }
  static qfold::batch_norm_attributes batch_norm_attributes(const G& g, std::size_t n) {
    return g.guard("batch_norm_attributes", [&]() -> qfold::batch_norm_attributes {
      const py_object d = g.call("batch_norm_attributes", g.object(n));
      return {qfold_py::field(d, "epsilon", py::float_(1e-5)).cast<double>(),
              qfold_py::field(d, "training", py::bool_(false)).cast<bool>()};
    });
  }
  // ir.batch_norm_operands(n) -> (input, gamma, beta, mean, variance), None for an absent gamma
  // or beta; without that method, operands(n) in ONNX order.
  static qfold::batch_norm_operands<std::size_t> batch_norm_operands(const G& cg, std::size_t n) {
    return cg.guard("batch_norm_operands", [&]() -> qfold::batch_norm_operands<std::size_t> {
      G& g = const_cast<G&>(cg);
      std::vector<py_object> ops;
      if (g.provides("batch_norm_operands")) {
        for (const auto v : g.call("batch_norm_operands", g.object(n)))
          ops.push_back(py::reinterpret_borrow<py_object>(v));
      } else {
        for (const auto v : g.call("operands", g.object(n)))
          ops.push_back(py::reinterpret_borrow<py_object>(v));
      }
      if (ops.size() != 5)
        throw py::value_error(
            "batch norm: expected 5 operands (input, gamma, beta, mean, variance)");
      if (ops[0].is_none() || ops[3].is_none() || ops[4].is_none())
        throw py::value_error("batch norm: input, mean and variance cannot be None");
      return {g.intern(ops[0]), qfold_py::optional_node(g, ops[1]),
              qfold_py::optional_node(g, ops[2]), g.intern(ops[3]), g.intern(ops[4])};
    });
  }
  static std::size_t output_rank(const G& g, std::size_t n) {
    return g.guard("output_rank", [&]() -> std::size_t {
      return g.call("output_rank", g.object(n)).cast<std::size_t>();
    });
  }

  // --- Mutation -------------------------------------------------------------------------------
  static std::size_t add_constant(G& g, std::span<const float> data,
                                  std::span<const std::int64_t> shape) {
    return g.guard("add_constant", [&]() -> std::size_t {
      std::vector<py::ssize_t> dims(shape.begin(), shape.end());
      py::array_t<float> a(dims);
      std::copy(data.begin(), data.end(), a.mutable_data());
      const py_object id =
          g.call("add_constant", a,
                 py::tuple(py::cast(std::vector<std::int64_t>(shape.begin(), shape.end()))));
      g.changed();
      return g.intern(id);
    });
  }
  static void set_operand(G& g, std::size_t n, std::size_t i, std::size_t v) {
    return g.guard("set_operand", [&]() -> void {
      g.changed();
      g.call("set_operand", g.object(n), i, g.object(v));
    });
  }
  static void remove_last_operand(G& g, std::size_t n) {
    return g.guard("remove_last_operand", [&]() -> void {
      g.changed();
      g.call("remove_last_operand", g.object(n));
    });
  }
  static void replace_uses(G& g, std::size_t old, std::size_t v) {
    return g.guard("replace_uses", [&]() -> void {
      g.changed();
      g.call("replace_uses", g.object(old), g.object(v));
    });
  }
  // noexcept, as qfold asks of erase: an exception from the IR's erase is recorded (errors) and
  // reported as false, so the site stays applied with cleanup_failed set.
  static bool erase(G& g, std::size_t n) noexcept {
    try {
      g.guard("erase", [&]() -> void {
        g.changed();
        g.call("erase", g.object(n));
      });
      return true;
    } catch (...) {
      return false;
    }
  }
  // ir.take_name(old, new) where the IR has it: the node that replaced `old` takes its name (a
  // graph output keeps its name); the node objects stay what they were.
  static std::size_t take_name(G& g, std::size_t old, std::size_t v) {
    if (g.provides("take_name"))
      g.guard("take_name", [&]() -> void {
        g.changed();
        g.call("take_name", g.object(old), g.object(v));
      });
    return v;
  }
  // ir.constant_bytes(n); without that method, the nbytes of int_constant(n) as the IR returned
  // it, or (int_constant missing or None) of constant(n).
  static std::size_t constant_bytes(const G& g, std::size_t n) {
    return g.guard("constant_bytes", [&]() -> std::size_t {
      if (g.provides("constant_bytes"))
        return g.call("constant_bytes", g.object(n)).cast<std::size_t>();
      if (g.provides("int_constant")) {
        const py_object c = g.call("int_constant", g.object(n));
        if (!c.is_none()) {
          const py_object data = qfold_py::member(c, "data", py::none());
          return static_cast<std::size_t>(
              qfold_py::as_array(data.is_none() ? c : data, "int_constant(n)").nbytes());
        }
      }
      if (g.provides("constant"))
        if (const auto c = constant(g, n)) return 4 * c->data.size();
      return 0;
    });
  }

  // --- Scale into quantize ----------------------------------------------------------------------
  static std::optional<qfold::qparams> qparams(const G& g, std::size_t n) {
    return g.guard("qparams", [&]() -> std::optional<qfold::qparams> {
      if (!g.provides("qparams")) return std::nullopt;  // an integer IR without quantization
      const py_object q = g.call("qparams", g.object(n));
      if (q.is_none()) return std::nullopt;
      return qfold_py::to_qparams(q, "qparams(n)");
    });
  }
  static bool qparams_shared(const G& g, std::size_t n) {
    return g.guard("qparams_shared", [&]() -> bool {
      if (!g.provides("qparams_shared")) return false;
      return g.call("qparams_shared", g.object(n)).cast<bool>();
    });
  }
  static void set_qparams(G& g, std::size_t n, const qfold::qparams& q) {
    return g.guard("set_qparams", [&]() -> void {
      g.changed();
      g.call("set_qparams", g.object(n), py::cast(q));
    });
  }

  // --- Integer read points ----------------------------------------------------------------------
  // Values are copied (int64) out of what the methods return, into std::deque by value: qfold's
  // read_integers aliases a contiguous int64 range instead of copying it, which for a vector
  // returned by value would leave a span into a destroyed temporary; a deque is always copied.
  using int64s = std::deque<std::int64_t>;
  struct int_tensor {
    int64s data, shape;
  };
  // ir.int_constant(n) -> None, an integer array (its own shape), or an object / dict with data
  // and shape.
  static std::optional<int_tensor> int_constant(const G& g, std::size_t n) {
    return g.guard("int_constant", [&]() -> std::optional<int_tensor> {
      const py_object c = g.call("int_constant", g.object(n));
      if (c.is_none()) return std::nullopt;
      std::vector<std::int64_t> values, shape;
      const py_object data = qfold_py::member(c, "data", py::none());
      if (data.is_none()) {
        values = qfold_py::int64_values(c, "int_constant(n)", &shape);
      } else {
        values = qfold_py::int64_values(data, "int_constant(n).data");
        shape = qfold_py::int64_values(qfold_py::required_member(c, "shape", "int_constant(n)"),
                                       "int_constant(n).shape");
      }
      int_tensor t{{values.begin(), values.end()}, {shape.begin(), shape.end()}};
      std::int64_t count = 1;
      for (const std::int64_t d : t.shape) {
        if (d < 0 || (d > 0 && count > INT64_MAX / d))
          throw py::value_error("int_constant(n): bad shape");
        count *= d;
      }
      if (static_cast<std::uint64_t>(count) != t.data.size())
        throw py::value_error("int_constant(n): data size does not match shape");
      return t;
    });
  }
  static int64s output_shape(const G& g, std::size_t n) {
    return g.guard("output_shape", [&]() -> int64s {
      const auto v = qfold_py::int64_values(g.call("output_shape", g.object(n)), "output_shape(n)");
      return {v.begin(), v.end()};
    });
  }
  struct rescale_data {
    qfold::rescale_attributes attributes;
    std::vector<std::int64_t> multipliers, shifts;
  };
  // ir.rescale(n) -> a dict / object: input_type, output_type ("i8", "i16", "i32", "i48"),
  // scale32, rounding, per_channel, input_unsigned, output_unsigned, input_zp, output_zp (flat,
  // or under "attributes"), multipliers, shifts.
  static rescale_data rescale(const G& g, std::size_t n) {
    return g.guard("rescale", [&]() -> rescale_data {
      const py_object r = g.call("rescale", g.object(n));
      const py_object nested = qfold_py::member(r, "attributes", py::none());
      rescale_data d{qfold_py::rescale_attributes_from(nested.is_none() ? r : nested), {}, {}};
      d.multipliers = qfold_py::int64_values(
          qfold_py::required_member(r, "multipliers", "rescale(n)"), "rescale(n).multipliers");
      d.shifts = qfold_py::int64_values(qfold_py::required_member(r, "shifts", "rescale(n)"),
                                        "rescale(n).shifts");
      return d;
    });
  }
  static int mul_shift(const G& g, std::size_t n) {
    return g.guard("mul_shift", [&]() -> int {
      return qfold_py::int_as<int>(g.call("mul_shift", g.object(n)), "mul_shift(n)");
    });
  }
  // ir.clamp_attributes(n) -> a dict / object with min and max, or a (min, max) pair.
  static qfold::clamp_attributes clamp_attributes(const G& g, std::size_t n) {
    return g.guard("clamp_attributes", [&]() -> qfold::clamp_attributes {
      const py_object c = g.call("clamp_attributes", g.object(n));
      if (py::isinstance<py::tuple>(c) || py::isinstance<py::list>(c)) {
        const auto seq = py::reinterpret_borrow<py::sequence>(c);
        if (seq.size() != 2) throw py::value_error("clamp_attributes(n): expected (min, max)");
        return {qfold_py::int_arg(seq[0], "clamp_attributes(n): min"),
                qfold_py::int_arg(seq[1], "clamp_attributes(n): max")};
      }
      return {qfold_py::int_arg(qfold_py::required_member(c, "min", "clamp_attributes(n)"),
                                "clamp_attributes(n): min"),
              qfold_py::int_arg(qfold_py::required_member(c, "max", "clamp_attributes(n)"),
                                "clamp_attributes(n): max")};
    });
  }
  // ir.element_type(n) -> "int8", "uint8", "int16", "uint16", "int32" (or a numpy dtype), or
  // None for anything else (float, int48, bool, ...; any other name is None too).
  static std::optional<qfold::dtype> element_type(const G& g, std::size_t n) {
    return g.guard("element_type", [&]() -> std::optional<qfold::dtype> {
      const py_object t = g.call("element_type", g.object(n));
      if (t.is_none()) return std::nullopt;
      const std::string s = qfold_py::dtype_string(t);
      for (const auto d : {qfold::dtype::int8, qfold::dtype::uint8, qfold::dtype::int16,
                           qfold::dtype::uint16, qfold::dtype::int32})
        if (qfold_py::dtype_name(d) == s) return d;
      return std::nullopt;
    });
  }
  static std::optional<std::int64_t> view_axis(const G& g, std::size_t n, std::int64_t axis) {
    return g.guard("view_axis", [&]() -> std::optional<std::int64_t> {
      const py_object a = g.call("view_axis", g.object(n), axis);
      if (a.is_none()) return std::nullopt;
      return qfold_py::int_arg(a, "view_axis(n, axis)");
    });
  }
  // ir.quantized_conv(n) -> None (a float conv) or a dict / object: input_zero_point,
  // weight_zero_points (one, or one per output channel), weight_type (default "int8").
  static std::optional<qfold::quantized_conv_attributes> quantized_conv(const G& cg,
                                                                        std::size_t n) {
    return cg.guard("quantized_conv", [&]() -> std::optional<qfold::quantized_conv_attributes> {
      G& g = const_cast<G&>(cg);
      const py_object q = g.call("quantized_conv", g.object(n));
      if (q.is_none()) return std::nullopt;
      qfold::quantized_conv_attributes a;
      a.input_zero_point = qfold_py::int_arg(qfold_py::member(q, "input_zero_point", py::int_(0)),
                                             "quantized_conv(n): input_zero_point");
      g.zero_points.push_back(qfold_py::int64_values(
          qfold_py::required_member(q, "weight_zero_points", "quantized_conv(n)"),
          "quantized_conv(n).weight_zero_points"));
      a.weight_zero_points = g.zero_points.back();
      a.weight_type = qfold_py::parse_dtype(
          qfold_py::dtype_string(qfold_py::member(q, "weight_type", py::str("int8"))),
          "quantized_conv(n): weight_type");
      return a;
    });
  }

  // --- Integer mutation points ------------------------------------------------------------------
  // ir.add_int_constant(data, shape, dtype): data a numpy array of dtype (values in its range),
  // shape a tuple, dtype its name.
  static std::size_t add_int_constant(G& g, std::span<const std::int64_t> data,
                                      std::span<const std::int64_t> shape, qfold::dtype type) {
    return g.guard("add_int_constant", [&]() -> std::size_t {
      const auto range = qfold::range_of(type);
      std::vector<py::ssize_t> dims(shape.begin(), shape.end());
      py::array_t<std::int64_t> a(dims);
      if (static_cast<std::size_t>(a.size()) != data.size())
        throw py::value_error("add_int_constant: data size does not match shape");
      for (std::size_t i = 0; i < data.size(); ++i)
        if (data[i] < range.lo || data[i] > range.hi)
          throw py::value_error("add_int_constant: a value does not fit its dtype");
      std::copy(data.begin(), data.end(), a.mutable_data());
      const std::string name(qfold_py::dtype_name(type));
      const py_object id =
          g.call("add_int_constant", a.attr("astype")(name),
                 py::tuple(py::cast(std::vector<std::int64_t>(shape.begin(), shape.end()))), name);
      g.changed();
      return g.intern(id);
    });
  }
  // ir.add_table(input, values): a new TABLE reading input, values a 256-entry int8 array (the
  // IR makes the table constant, operand 1, itself).
  static std::size_t add_table(G& g, std::size_t input, std::span<const std::int8_t> values) {
    return g.guard("add_table", [&]() -> std::size_t {
      py::array_t<std::int8_t> a(static_cast<py::ssize_t>(values.size()));
      std::copy(values.begin(), values.end(), a.mutable_data());
      const py_object id = g.call("add_table", g.object(input), a);
      g.changed();
      return g.intern(id);
    });
  }
  // ir.add_rescale(input, attributes, multipliers, shifts): attributes a dict as rescale(n)
  // reads it, multipliers and shifts int32 arrays.
  static std::size_t add_rescale(G& g, std::size_t input, const qfold::rescale_attributes& attr,
                                 std::span<const qfold::scale_factor> scales) {
    return g.guard("add_rescale", [&]() -> std::size_t {
      const auto count = static_cast<py::ssize_t>(scales.size());
      py::array_t<std::int32_t> m(count), s(count);
      for (std::size_t i = 0; i < scales.size(); ++i) {
        m.mutable_data()[i] = scales[i].multiplier;
        s.mutable_data()[i] = static_cast<std::int32_t>(scales[i].shift);
      }
      const py_object id =
          g.call("add_rescale", g.object(input), qfold_py::rescale_attributes_to(attr), m, s);
      g.changed();
      return g.intern(id);
    });
  }
  static void set_conv_input_zero_point(G& g, std::size_t n, std::int64_t zp) {
    return g.guard("set_conv_input_zero_point", [&]() -> void {
      g.changed();
      g.call("set_conv_input_zero_point", g.object(n), zp);
    });
  }
};

namespace qfold_py {
namespace {
// The same object, for a pass that may create int16 tables: the IR has add_table16.
struct py_graph16 : py_graph {};
}  // namespace
}  // namespace qfold_py

template <>
struct qfold::ir_traits<qfold_py::py_graph16> : qfold::ir_traits<qfold_py::py_graph> {
  using ir_traits<qfold_py::py_graph>::add_table;
  // ir.add_table16(input, values): a new int16 TABLE reading input (i16 in, i32 out), values a
  // 513-entry int16 array (the IR makes the table constant, operand 1).
  static std::size_t add_table(qfold_py::py_graph& g, std::size_t input,
                               std::span<const std::int16_t> values) {
    return g.guard("add_table16", [&]() -> std::size_t {
      pybind11::array_t<std::int16_t> a(static_cast<pybind11::ssize_t>(values.size()));
      std::copy(values.begin(), values.end(), a.mutable_data());
      const pybind11::object id = g.call("add_table16", g.object(input), a);
      g.changed();
      return g.intern(id);
    });
  }
};

namespace qfold_py {
namespace {

static_assert(qfold::batch_norm_foldable_graph<py_graph>);
static_assert(qfold::quantize_foldable_graph<py_graph>);
static_assert(qfold::quantized_graph<py_graph>);
static_assert(qfold::rescale_mergeable_graph<py_graph>);
static_assert(qfold::table_collapsible_graph<py_graph>);
static_assert(!qfold::detail::calls_table_values<py_graph>);  // the table is operand 1

// One site of a report, as Python sees it.
struct py_site {
  std::string pass;
  py::list nodes;
  bool folded = false;
  std::optional<std::string> reason, message;
  std::optional<std::size_t> index;
  std::size_t bytes_removed = 0, bytes_added = 0;
  py::object replaced = py::none(), replacement = py::none();
  bool cleanup_failed = false;
};
struct py_report {
  std::vector<py_site> sites;
  std::vector<std::string> adapter_errors;
  std::vector<std::pair<std::string, std::vector<std::string>>> skipped;  // pass, methods lacked
  [[nodiscard]] std::size_t folded() const {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.folded ? 1u : 0u;
    return n;
  }
  [[nodiscard]] std::size_t bytes_removed() const {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.bytes_removed;
    return n;
  }
  [[nodiscard]] std::size_t bytes_added() const {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.bytes_added;
    return n;
  }
};

// Pipeline order (qfold's standard pipeline).
constexpr std::string_view all_passes[] = {
    qfold::batch_norm_pass_name,       qfold::scale_into_quantize_pass_name,
    qfold::dyt_alpha_pass_name,        qfold::dyt_affine_pass_name,
    qfold::merge_rescales_pass_name,   qfold::compose_tables_pass_name,
    qfold::collapse_to_table_pass_name};

std::vector<std::string> missing_methods(const py_graph& g, std::string_view pass) {
  std::vector<std::string> r;
  for (const char* m : required_methods(pass, g.provides("qparams")))
    if (!g.provides(m)) r.emplace_back(m);
  return r;
}

py_report run_passes(py::object ir, std::optional<std::vector<std::string>> names,
                     const std::string& exactness) {
  qfold::scale_into_quantize_options options;
  options.exactness = parse_option<qfold::float_exactness>(
      exactness,
      {{"bit_exact", qfold::float_exactness::bit_exact}, {"real", qfold::float_exactness::real}},
      "run_passes: exactness");
  py_graph16 g{{std::move(ir), py::dict(), {}, {}, {}, {}}};
  py_report out;
  if (!names) {  // every pass whose methods the object has; the others noted as skipped
    names.emplace();
    for (const auto pass : all_passes) {
      if (auto missing = missing_methods(g, pass); missing.empty())
        names->emplace_back(pass);
      else
        out.skipped.emplace_back(std::string(pass), std::move(missing));
    }
  }
  qfold::pipeline<py_graph> p;
  for (const std::string& name : *names) {
    if (std::find(std::begin(all_passes), std::end(all_passes), name) == std::end(all_passes)) {
      std::string known;
      for (const auto n : all_passes) known += (known.empty() ? "" : ", ") + std::string(n);
      raise(qfold::errc::illegal_attributes,
            "run_passes: unknown pass '" + name + "' (one of " + known + ")");
    }
    if (const auto missing = missing_methods(g, name); !missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      raise(qfold::errc::illegal_attributes,
            "run_passes: " + name + " needs the IR method(s) " + list + ", which it lacks");
    }
    if (name == qfold::batch_norm_pass_name) {
      p.add(qfold::passes::batch_norm);
    } else if (name == qfold::scale_into_quantize_pass_name) {
      p.add(qfold::passes::scale_into_quantize_t{options});
    } else if (name == qfold::dyt_alpha_pass_name) {
      p.add(qfold::passes::dyt_alpha);
    } else if (name == qfold::dyt_affine_pass_name) {
      p.add(qfold::passes::dyt_affine);
    } else if (name == qfold::merge_rescales_pass_name) {
      p.add(qfold::passes::merge_rescales);
    } else if (name == qfold::compose_tables_pass_name) {
      p.add(qfold::passes::compose_tables);
    } else if (g.provides("add_table16") && g.provides("add_rescale")) {
      p.add(std::string(qfold::collapse_to_table_pass_name), [](py_graph& pg) {
        return qfold::fold_collapse_to_tables(static_cast<py_graph16&>(pg));  // g is a py_graph16
      });
    } else {
      p.add(qfold::passes::collapse_to_table);
    }
  }
  const auto r = p.run(g);
  for (const auto& s : r.sites) {
    py_site ps;
    ps.pass = std::string(s.pass);
    for (const std::size_t n : s.nodes) ps.nodes.append(g.object(n));
    ps.folded = s.folded();
    if (s.rejected) {
      ps.reason = std::string(qfold::to_string(s.rejected->code));
      ps.message = std::string(s.rejected->message);
      if (s.rejected->index != qfold::rejection::no_index) ps.index = s.rejected->index;
    }
    ps.bytes_removed = s.bytes_removed;
    ps.bytes_added = s.bytes_added;
    if (s.replaced) ps.replaced = g.object(*s.replaced);
    if (s.replacement) ps.replacement = g.object(*s.replacement);
    ps.cleanup_failed = s.cleanup_failed;
    out.sites.push_back(std::move(ps));
  }
  out.adapter_errors = std::move(g.errors);
  return out;
}

std::string site_repr(const py_site& s) {
  std::string r = "Site(pass='" + s.pass + "', nodes=" + std::string(py::repr(s.nodes));
  if (s.folded) {
    r += ", folded, bytes_removed=" + std::to_string(s.bytes_removed) +
         ", bytes_added=" + std::to_string(s.bytes_added);
  } else {
    r += ", rejected, reason='" + *s.reason + "', message='" + *s.message + "'";
  }
  return r + ")";
}

}  // namespace

void bind_graph(py::module_& m) {
  py::enum_<qfold::op_kind>(m, "OpKind", "qfold's op vocabulary (kind(n) may return its name)")
      .value("constant", qfold::op_kind::constant)
      .value("input", qfold::op_kind::input)
      .value("convolution", qfold::op_kind::convolution)
      .value("linear", qfold::op_kind::linear)
      .value("batch_norm", qfold::op_kind::batch_norm)
      .value("rescale", qfold::op_kind::rescale)
      .value("table", qfold::op_kind::table)
      .value("mul", qfold::op_kind::mul)
      .value("add", qfold::op_kind::add)
      .value("div", qfold::op_kind::div)
      .value("quantize", qfold::op_kind::quantize)
      .value("dequantize", qfold::op_kind::dequantize)
      .value("view", qfold::op_kind::view)
      .value("sub", qfold::op_kind::sub)
      .value("clamp", qfold::op_kind::clamp)
      .value("cast", qfold::op_kind::cast)
      .value("other", qfold::op_kind::other);

  py::class_<py_site>(m, "Site", "One site a graph pass looked at, folded or rejected.")
      .def_readonly("pass_name", &py_site::pass)
      .def_readonly("nodes", &py_site::nodes, "the pattern's node objects, producer first")
      .def_readonly("folded", &py_site::folded)
      .def_readonly("reason", &py_site::reason, "the rejection's reason code, None if folded")
      .def_readonly("message", &py_site::message)
      .def_readonly("index", &py_site::index)
      .def_readonly("bytes_removed", &py_site::bytes_removed)
      .def_readonly("bytes_added", &py_site::bytes_added, "bytes of the constants the fold added")
      .def_readonly("replaced", &py_site::replaced, "the node the fold replaced, None if none")
      .def_readonly("replacement", &py_site::replacement, "the node that replaced it")
      .def_readonly("cleanup_failed", &py_site::cleanup_failed)
      .def("__repr__", &site_repr);
  py::class_<py_report>(m, "GraphReport", "What run_passes did: every site, in order.")
      .def_readonly("sites", &py_report::sites)
      .def_readonly("adapter_errors", &py_report::adapter_errors,
                    "the text of each Python exception an adapter method raised")
      .def_property_readonly("folded", &py_report::folded)
      .def_property_readonly("rejected",
                             [](const py_report& r) { return r.sites.size() - r.folded(); })
      .def_property_readonly("bytes_removed", &py_report::bytes_removed)
      .def_property_readonly("bytes_added", &py_report::bytes_added)
      .def_readonly("skipped", &py_report::skipped,
                    "passes=None: each pass left out, as (name, the IR methods it lacks)")
      .def("__len__", [](const py_report& r) { return r.sites.size(); })
      .def(
          "__iter__",
          [](const py_report& r) { return py::make_iterator(r.sites.begin(), r.sites.end()); },
          py::keep_alive<0, 1>())
      .def("__repr__", [](const py_report& r) {
        return "GraphReport(" + std::to_string(r.folded()) + " folded, " +
               std::to_string(r.sites.size() - r.folded()) + " rejected, " +
               std::to_string(r.bytes_removed()) + " bytes removed, " +
               std::to_string(r.bytes_added()) + " added" +
               (r.skipped.empty() ? "" : ", " + std::to_string(r.skipped.size()) + " skipped") +
               ")";
      });

  m.def(
      "graph_pass_names",
      [] {
        std::vector<std::string> r;
        for (const auto n : all_passes) r.emplace_back(n);
        return r;
      },
      "The passes run_passes runs over a Python IR, in pipeline order.");
  m.def("run_passes", &run_passes, py::arg("ir"), py::arg("passes") = py::none(),
        py::arg("exactness") = "bit_exact",
        "Runs qfold's graph passes over a Python IR whose methods are the customization points "
        "(docs/python.md, 'Adapting a Python IR'). passes=None: every pass of graph_pass_names() "
        "whose methods ir has (hasattr, at call time); a pass asked for by name that needs a "
        "missing method is a qfold.Error naming it. Returns a GraphReport; an exception raised "
        "by a method makes its site an adapter_failure rejection, the site rolled back.");
}

}  // namespace qfold_py
