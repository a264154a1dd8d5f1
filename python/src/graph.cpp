// qfold.run_passes: qfold's graph passes over an IR written in Python. A C++ adapter
// (ir_traits<py_graph>) calls the Python object's methods, one per customization point; node ids
// are the Python objects the IR hands out, interned into indices (a dict keeps them alive, the
// GIL is held throughout). A Python exception in any method is an ordinary C++ exception to the
// pass, which reports the site as adapter_failure (rolled back when it was being applied); its
// text is kept in the report's adapter_errors. Nothing thrown escapes.
//
// Supported passes: fold_batch_norm and fold_scale_into_quantize (the float read points, the
// mutation points, qparams / qparams_shared / set_qparams). The integer passes (DyT, rescale
// merging, tables) need the integer read points and are not bound.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
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
  [[nodiscard]] bool has(const char* name) const { return py::hasattr(ir, name); }
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
      if (g.has("batch_norm_operands")) {
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
  static void erase(G& g, std::size_t n) {
    return g.guard("erase", [&]() -> void {
      g.changed();
      g.call("erase", g.object(n));
    });
  }
  // ir.constant_bytes(n), or the nbytes of constant(n) without that method.
  static std::size_t constant_bytes(const G& g, std::size_t n) {
    return g.guard("constant_bytes", [&]() -> std::size_t {
      if (g.has("constant_bytes")) return g.call("constant_bytes", g.object(n)).cast<std::size_t>();
      const auto c = constant(g, n);
      return c ? 4 * c->data.size() : 0;
    });
  }

  // --- Scale into quantize ----------------------------------------------------------------------
  static std::optional<qfold::qparams> qparams(const G& g, std::size_t n) {
    return g.guard("qparams", [&]() -> std::optional<qfold::qparams> {
      const py_object q = g.call("qparams", g.object(n));
      if (q.is_none()) return std::nullopt;
      return qfold_py::to_qparams(q, "qparams(n)");
    });
  }
  static bool qparams_shared(const G& g, std::size_t n) {
    return g.guard("qparams_shared", [&]() -> bool {
      if (!g.has("qparams_shared")) return false;
      return g.call("qparams_shared", g.object(n)).cast<bool>();
    });
  }
  static void set_qparams(G& g, std::size_t n, const qfold::qparams& q) {
    g.changed();
    g.call("set_qparams", g.object(n), py::cast(q));
  }
};

namespace qfold_py {
namespace {

static_assert(qfold::batch_norm_foldable_graph<py_graph>);
static_assert(qfold::quantize_foldable_graph<py_graph>);

// One site of a report, as Python sees it.
struct py_site {
  std::string pass;
  py::list nodes;
  bool folded = false;
  std::optional<std::string> reason, message;
  std::optional<std::size_t> index;
  std::size_t bytes_removed = 0;
  bool cleanup_failed = false;
};
struct py_report {
  std::vector<py_site> sites;
  std::vector<std::string> adapter_errors;
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
};

constexpr std::string_view all_passes[] = {qfold::batch_norm_pass_name,
                                           qfold::scale_into_quantize_pass_name};

py_report run_passes(py::object ir, std::optional<std::vector<std::string>> names,
                     const std::string& exactness) {
  qfold::scale_into_quantize_options options;
  options.exactness = parse_option<qfold::float_exactness>(
      exactness,
      {{"bit_exact", qfold::float_exactness::bit_exact}, {"real", qfold::float_exactness::real}},
      "run_passes: exactness");
  py_graph g{std::move(ir), py::dict(), {}, {}, {}};
  if (!names) {
    names.emplace();
    names->emplace_back(qfold::batch_norm_pass_name);
    if (g.has("qparams")) names->emplace_back(qfold::scale_into_quantize_pass_name);
  }
  qfold::pipeline<py_graph> p;
  for (const std::string& name : *names) {
    if (name == qfold::batch_norm_pass_name) {
      p.add(qfold::passes::batch_norm);
    } else if (name == qfold::scale_into_quantize_pass_name) {
      p.add(qfold::passes::scale_into_quantize_t{options});
    } else {
      raise(qfold::errc::illegal_attributes,
            "run_passes: unknown pass '" + name +
                "' (fold_batch_norm or fold_scale_into_quantize; the integer passes are not "
                "bound for Python IRs)");
    }
  }
  const auto r = p.run(g);
  py_report out;
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
    ps.cleanup_failed = s.cleanup_failed;
    out.sites.push_back(std::move(ps));
  }
  out.adapter_errors = std::move(g.errors);
  return out;
}

std::string site_repr(const py_site& s) {
  std::string r = "Site(pass='" + s.pass + "', nodes=" + std::string(py::repr(s.nodes));
  if (s.folded) {
    r += ", folded, bytes_removed=" + std::to_string(s.bytes_removed);
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
      .def("__len__", [](const py_report& r) { return r.sites.size(); })
      .def(
          "__iter__",
          [](const py_report& r) { return py::make_iterator(r.sites.begin(), r.sites.end()); },
          py::keep_alive<0, 1>())
      .def("__repr__", [](const py_report& r) {
        return "GraphReport(" + std::to_string(r.folded()) + " folded, " +
               std::to_string(r.sites.size() - r.folded()) + " rejected, " +
               std::to_string(r.bytes_removed()) + " bytes removed)";
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
        "Runs qfold's graph passes (default: fold_batch_norm, and fold_scale_into_quantize when "
        "ir has qparams) over a Python IR whose methods are the customization points "
        "(docs/python.md, 'Adapting a Python IR'). Returns a GraphReport; an exception raised by "
        "a method makes its site an adapter_failure rejection, the site rolled back.");
}

}  // namespace qfold_py
