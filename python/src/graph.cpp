// qfold.run_passes: qfold's graph passes over an IR written in Python. A C++ adapter
// (ir_traits<py_graph>) calls the Python object's methods, one per customization point; node ids
// are the Python objects the IR hands out, interned into indices (a dict keeps them alive, the
// GIL is held throughout). A Python exception in any method is an ordinary C++ exception to the
// pass, which reports the site as adapter_failure (rolled back when it was being applied); its
// text is kept in the report's adapter_errors and, where the site it broke is known, in the
// site's adapter_error and message. Nothing thrown escapes.
//
// The IR is distrusted as qfold distrusts file data: every answer is checked before it is used,
// and one of the wrong type or range is a named adapter error (adapter_error below: the method,
// what it returned, what was expected), never pybind11's "Unable to cast". Node ids must be
// hashable and not None; nodes() must list each node once; an add_* must return the id of a node
// it just made (not None, not a node that exists, one of the kind it makes). Where an add_*
// answered wrong, the node it made is found by its listing and erased; where that fails, the
// site is reported with rollback_failed (the IR may differ), never as untouched.
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
//
// Each pass runs through qfold's two-phase driver; its transaction is qfold's own, wrapped
// (transaction<py_graph> below) so that the adapter knows where each site's apply starts and
// ends: that is how an adapter error is given to its site, and how a site whose undo the adapter
// could not complete is reported as a failed rollback.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <optional>
#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/fold/scale_into_quantize.hpp>
#include <qfold/graph/batch_norm_pass.hpp>
#include <qfold/graph/passes.hpp>
#include <qfold/graph/report.hpp>
#include <qfold/graph/scale_into_quantize_pass.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/transaction.hpp>
#include <qfold/graph/two_phase.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common.hpp"  // first: see there

namespace qfold_py {
namespace {

// A wrong answer of the IR, named: "use_count(n) returned -1, expected an int >= 0". Its text is
// complete (recorded as it is, without the point's name in front).
struct adapter_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value for a message, without running the IR's own code (no __repr__ of its objects): builtin
// numbers and strings by value, numpy scalars by value and type, anything else by type.
std::string shown(py::handle v) {
  PyObject* p = v.ptr();
  const std::string type = Py_TYPE(p)->tp_name;
  const std::string a =
      std::string_view("aeiouAEIOU").find(type[0]) == std::string_view::npos ? "a " : "an ";
  const auto cut = [](std::string s) { return s.size() > 40 ? s.substr(0, 37) + "..." : s; };
  try {
    if (p == Py_None) return "None";
    if (PyBool_Check(p)) return std::string(p == Py_True ? "True" : "False") + " (a bool)";
    if (PyLong_CheckExact(p)) return cut(py::str(v));
    if (PyFloat_CheckExact(p) || PyUnicode_CheckExact(p) || PyBytes_CheckExact(p))
      return cut(py::repr(v)) + " (" + a + type + ")";
    if (PyList_CheckExact(p) || PyTuple_CheckExact(p) || PyDict_CheckExact(p))
      return a + type + " of " + std::to_string(PyObject_Length(p));
    if (type.rfind("numpy.", 0) == 0 && !py::isinstance<py::array>(v))
      return cut(py::str(v)) + " (" + a + type + ")";
  } catch (...) {  // a value that cannot be shown: its type says enough
  }
  return a + type;
}

[[noreturn]] void bad_answer(std::string_view call, py::handle v, std::string_view expected) {
  throw adapter_error(std::string(call) + " returned " + shown(v) + ", expected " +
                      std::string(expected));
}

bool is_numpy_bool(py::handle v) {
  const std::string_view t = Py_TYPE(v.ptr())->tp_name;
  return t == "numpy.bool_" || t == "numpy.bool";
}

// An integer answer (a Python int or a numpy integer; never a bool or a float) in [lo, hi].
std::int64_t checked_int(py::handle v, std::string_view call, std::int64_t lo, std::int64_t hi,
                         std::string_view expected) {
  PyObject* p = v.ptr();
  if (!PyBool_Check(p) && !PyFloat_Check(p) && !is_numpy_bool(v) &&
      (PyLong_Check(p) || PyIndex_Check(p))) {
    const auto i = py::reinterpret_steal<py::object>(PyNumber_Index(p));
    if (!i) {
      PyErr_Clear();
    } else {
      int overflow = 0;
      const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
      if (x == -1 && PyErr_Occurred())
        PyErr_Clear();
      else if (overflow == 0 && x >= lo && x <= hi)
        return x;
    }
  }
  bad_answer(call, v, expected);
}
std::size_t checked_count(py::handle v, std::string_view call) {
  return static_cast<std::size_t>(checked_int(v, call, 0, INT64_MAX, "an int >= 0"));
}
// A real answer: a Python float or int, or a numpy number (never a bool, a str or an array).
double checked_real(py::handle v, std::string_view call, std::string_view expected) {
  PyObject* p = v.ptr();
  if (PyFloat_Check(p)) return PyFloat_AsDouble(p);
  const bool numpy_number = std::string_view(Py_TYPE(p)->tp_name).rfind("numpy.", 0) == 0 &&
                            !py::isinstance<py::array>(v) && !is_numpy_bool(v) &&
                            Py_TYPE(p)->tp_as_number != nullptr &&
                            Py_TYPE(p)->tp_as_number->nb_float != nullptr;
  if ((PyLong_Check(p) && !PyBool_Check(p)) || numpy_number) {
    const auto f = py::reinterpret_steal<py::object>(PyNumber_Float(p));
    if (f) return PyFloat_AsDouble(f.ptr());
    PyErr_Clear();
  }
  bad_answer(call, v, expected);
}
bool checked_flag(py::handle v, std::string_view call) {
  if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
  if (is_numpy_bool(v)) {
    const int t = PyObject_IsTrue(v.ptr());
    if (t >= 0) return t != 0;
    PyErr_Clear();
  }
  bad_answer(call, v, "a bool");
}
// A list or tuple answer, as a tuple of its own (a list cannot change under the caller).
py::tuple checked_ids(py::handle v, std::string_view call) {
  if (!PyList_Check(v.ptr()) && !PyTuple_Check(v.ptr())) bad_answer(call, v, "a list of node ids");
  return py::reinterpret_steal<py::tuple>(PySequence_Tuple(v.ptr()));
}
// A dict answer (or None: every key at its default).
py::object checked_dict(py::handle v, std::string_view call) {
  if (!v.is_none() && !PyDict_Check(v.ptr())) bad_answer(call, v, "a dict (or None)");
  return py::reinterpret_borrow<py::object>(v);
}
std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// What the adapter knows of one node id.
struct node_info {
  py::object obj;
  std::uint32_t listed = 0;         // the nodes() call that last listed it
  std::size_t position = SIZE_MAX;  // where that call listed it
  bool erased = false;              // erased through the adapter (an id the IR may reuse)
};

// One site's apply, as the adapter saw it (transaction<py_graph> below marks its start and end).
struct apply_segment {
  std::size_t first_error = 0;  // index into py_graph::errors
  enum end_t : std::uint8_t { open, committed, rejected, threw } end = open;
  bool rollback_ok = true;
  bool dirty = false;  // the adapter could not undo what a wrong answer of the IR did
  std::string cause;   // what the apply threw, when it was no adapter call
};

// A batch norm refused before the pass saw it (statistics that are not 1-D).
struct veto {
  std::size_t producer, batch_norm;
  std::string message;
};

// The Python IR and what the adapter keeps for it: the interned node ids and the arrays the read
// points returned since the last mutation (their spans must stay valid until then), the text of
// every error, and what the current pass's sites did.
struct py_graph {
  explicit py_graph(py::object o) : ir(std::move(o)) {}

  py::object ir;
  py::dict index_of;  // node object -> index
  std::vector<node_info> node_objects;
  std::uint32_t listing = 0;  // nodes() calls so far
  struct held {
    py::array_t<float, py::array::c_style> data;
    std::vector<std::int64_t> shape;
  };
  std::unordered_map<std::size_t, held> constants;
  // Weight zero points quantized_conv returned: kept for the whole run (its spans never dangle).
  std::deque<std::vector<std::int64_t>> zero_points;

  std::vector<std::string> errors;  // the text of every error an adapter call raised
  int depth = 0;                    // adapter calls in progress (a point may call another)
  bool recorded = false;            // the error on its way out was recorded already

  // The current pass: where its errors start, where its apply phase starts, each site's apply.
  std::size_t pass_first_error = 0;
  std::optional<std::size_t> apply_first_error;
  std::vector<apply_segment> segments;
  bool segments_lost = false;  // bookkeeping failed (memory): no error is given to a site

  // fold_batch_norm only: batch norms checked, refused for their statistics' shapes, and the
  // statistics of the others (1-D when checked: a later answer of another rank is an error).
  bool batch_norm_pass = false, checking_batch_norm = false;
  std::unordered_set<std::size_t> checked, vetoed, statistics;
  std::vector<veto> vetoes;

  // The index of a node id the IR handed out; None and unhashable ids are named errors.
  std::optional<std::size_t> find(py::handle obj) const {
    PyObject* r = PyDict_GetItemWithError(index_of.ptr(), obj.ptr());  // borrowed
    if (r == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return std::nullopt;
    }
    return PyLong_AsSize_t(r);
  }
  std::size_t intern(py::handle obj, std::string_view call) {
    if (obj.is_none())
      throw adapter_error(std::string(call) + " gave None as a node id, expected a hashable id");
    if (PyObject_Hash(obj.ptr()) == -1) {
      PyErr_Clear();
      throw adapter_error(std::string(call) + " gave " + shown(obj) +
                          " as a node id, expected a hashable id");
    }
    if (const auto k = find(obj)) return *k;
    const std::size_t i = node_objects.size();
    node_info info;
    info.obj = py::reinterpret_borrow<py::object>(obj);
    node_objects.push_back(std::move(info));
    index_of[obj] = i;
    return i;
  }
  [[nodiscard]] py::object object(std::size_t n) const { return node_objects.at(n).obj; }
  void changed() { constants.clear(); }

  // ir.<name>(args...).
  template <class... A>
  py::object call(const char* name, A&&... args) const {
    return ir.attr(name)(std::forward<A>(args)...);
  }
  // f() for the customization point `name`, with the text of what it throws (a Python exception,
  // a named adapter_error) recorded before it propagates to the pass: once, by the innermost
  // point (constant_bytes calls constant, kind checks a batch norm's statistics).
  template <class F>
  decltype(auto) guard(const char* name, F&& f) const {
    auto& self = const_cast<py_graph&>(*this);
    if (self.depth == 0) self.recorded = false;
    struct level {
      int& d;
      explicit level(int& x) : d(++x) {}
      ~level() { --d; }
      level(const level&) = delete;
      level& operator=(const level&) = delete;
    } in(self.depth);
    try {
      return f();
    } catch (const std::exception& e) {
      if (!self.recorded) {
        self.recorded = true;
        try {
          if (dynamic_cast<const adapter_error*>(&e) != nullptr)
            self.errors.emplace_back(e.what());
          else
            self.errors.push_back(std::string(name) + ": " + e.what());
        } catch (...) {  // no room to record it: the site is an adapter_failure all the same
        }
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

  // The nodes the current site's apply made, as checked when they were made (accept_added):
  // while it is rolled back, their kind and operands are these, the IR not asked (undoing an
  // add needs no read that could fail).
  std::unordered_map<std::size_t, std::pair<qfold::op_kind, std::vector<std::size_t>>> made_here;
  bool rolling_back = false;

  // The current site's apply could not be undone by the adapter (see accept_added).
  void mark_dirty() noexcept {
    if (!segments.empty()) segments.back().dirty = true;
  }

  // The id an add_* point returned, checked: hashable, not None, no node that exists, a node of
  // the kind it makes (reading `input`, when given). A wrong answer is a named error; the node
  // the IR made is then looked for in its listing and erased (at most `made` new nodes, none
  // read by another), and where that cannot be done the site is marked: its rollback fails.
  std::size_t accept_added(const char* point, const py::object& id, qfold::op_kind expected,
                           std::optional<std::size_t> input, std::size_t operand_count,
                           std::size_t made);
  bool erase_unnamed(std::size_t made);
};

qfold::op_kind kind_from(py::handle k, std::string_view call = "kind(n)") {
  if (py::isinstance<qfold::op_kind>(k)) return k.cast<qfold::op_kind>();
  const char* text = nullptr;
  Py_ssize_t size = 0;
  if (PyUnicode_Check(k.ptr())) {
    text = PyUnicode_AsUTF8AndSize(k.ptr(), &size);
    if (text == nullptr) PyErr_Clear();  // a str without UTF-8 (lone surrogates): no kind
  }
  if (text != nullptr) {
    const std::string_view s(text, static_cast<std::size_t>(size));
    for (std::uint8_t i = 0; i <= static_cast<std::uint8_t>(qfold::op_kind::other); ++i) {
      const auto e = static_cast<qfold::op_kind>(i);
      if (qfold::to_string(e) == s) return e;
    }
  }
  std::string names;
  for (std::uint8_t i = 0; i <= static_cast<std::uint8_t>(qfold::op_kind::other); ++i)
    names += (i ? ", " : "") + std::string(qfold::to_string(static_cast<qfold::op_kind>(i)));
  bad_answer(call, k, "a qfold.OpKind or its name (" + names + ")");
}

std::size_t py_graph::accept_added(const char* point, const py::object& id, qfold::op_kind expected,
                                   std::optional<std::size_t> input, std::size_t operand_count,
                                   std::size_t made) {
  std::string problem;
  std::vector<std::size_t> ops_ids;  // its operands, where it has some
  if (id.is_none() || PyObject_Hash(id.ptr()) == -1) {
    PyErr_Clear();
    problem = shown(id) + ", expected the hashable id of the node it made";
  } else if (const auto known = find(id); known && !node_objects[*known].erased) {
    problem = "node " + shown(id) + ", which exists already, expected the id of a new node";
  } else {
    try {
      const qfold::op_kind k = kind_from(call("kind", id));
      if (k != expected)
        problem = shown(id) + ", a " + std::string(qfold::to_string(k)) + " node, expected a new " +
                  std::string(qfold::to_string(expected)) + " node";
      if (problem.empty() && input) {
        const py::tuple ops = checked_ids(call("operands", id), "operands(n)");
        std::optional<std::size_t> first;
        if (ops.size() == operand_count) first = find(ops[0]);
        if (first != input)
          problem = shown(id) + ", a node that does not read the input it was given (operands " +
                    "of another count or order)";
        else if (expected == qfold::op_kind::table &&
                 kind_from(call("kind", ops[1]), "kind(n) of the new table's operand 1") !=
                     qfold::op_kind::constant)
          problem = shown(id) + ", a table whose operand 1 is not its table constant";
        if (problem.empty())
          for (const auto v : ops) ops_ids.push_back(intern(v, "operands(n)"));
      }
    } catch (const std::exception& e) {
      const std::string_view text = e.what();  // its first line (a Python error has its traceback)
      problem = shown(id) + ", which the IR cannot read back (" +
                std::string(text.substr(0, text.find('\n'))) + ")";
    }
  }
  if (problem.empty()) {
    const std::size_t k = intern(id, point);
    node_objects[k].erased = false;
    made_here[k] = {expected, std::move(ops_ids)};
    return k;
  }
  const bool undone = erase_unnamed(made);
  if (!undone) mark_dirty();
  throw adapter_error(std::string(point) + " returned " + problem +
                      (undone ? ""
                              : "; the node it made could not be found and erased: the IR "
                                "may differ"));
}

bool py_graph::erase_unnamed(std::size_t made) {
  try {
    const auto unnamed = [&] {  // listed nodes the adapter has not seen (or saw erased)
      std::vector<py::object> r;
      for (const auto v : checked_ids(call("nodes"), "nodes()")) {
        const auto k = find(v);
        if (!k || node_objects[*k].erased) r.push_back(py::reinterpret_borrow<py::object>(v));
      }
      return r;
    };
    const auto made_now = unnamed();
    if (made_now.size() > made) return false;  // more than the add made: not the adapter's to erase
    for (auto it = made_now.rbegin(); it != made_now.rend(); ++it) {  // readers first
      if (checked_count(call("use_count", *it), "use_count(n)") != 0) return false;
      call("erase", *it);
    }
    return unnamed().empty();
  } catch (...) {
    return false;
  }
}

// d.get(key, default) for a dict (or None: every default).
py::object field(py::handle d, const char* key, py::object fallback) {
  if (d.is_none()) return fallback;
  return d.attr("get")(key, fallback);
}

qfold::weight_layout layout_from(py::handle v) {
  if (py::isinstance<qfold::weight_layout>(v)) return v.cast<qfold::weight_layout>();
  if (!PyUnicode_Check(v.ptr()))
    bad_answer("conv_attributes(n)['layout']", v,
               "\"o_i_s\", \"o_s_i\", \"s_i_o\", \"i_o_s\" or \"s_c_m\"");
  return parse_option<qfold::weight_layout>(std::string(py::str(v)),
                                            {{"o_i_s", qfold::weight_layout::o_i_s},
                                             {"o_s_i", qfold::weight_layout::o_s_i},
                                             {"s_i_o", qfold::weight_layout::s_i_o},
                                             {"i_o_s", qfold::weight_layout::i_o_s},
                                             {"s_c_m", qfold::weight_layout::s_c_m}},
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
// A str answer, or a named error.
std::string checked_str(py::handle v, std::string_view call, std::string_view expected) {
  if (!PyUnicode_Check(v.ptr())) bad_answer(call, v, expected);
  return std::string(py::str(v));
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
  constexpr std::string_view types = "\"i8\", \"i16\", \"i32\" or \"i48\"";
  a.input_type = parse_int_type(
      checked_str(required_member(d, "input_type", what), "rescale(n)['input_type']", types),
      "rescale(n): input_type");
  a.output_type = parse_int_type(
      checked_str(required_member(d, "output_type", what), "rescale(n)['output_type']", types),
      "rescale(n): output_type");
  a.scale32 = checked_flag(member(d, "scale32", py::bool_(true)), "rescale(n)['scale32']");
  a.rounding = parse_option<qfold::rounding_mode>(
      checked_str(member(d, "rounding", py::str("single_round")), "rescale(n)['rounding']",
                  "\"single_round\", \"inexact_round\" or \"double_round\""),
      {rounding_names[0], rounding_names[1], rounding_names[2]}, "rescale(n): rounding");
  a.per_channel =
      checked_flag(member(d, "per_channel", py::bool_(false)), "rescale(n)['per_channel']");
  a.input_unsigned =
      checked_flag(member(d, "input_unsigned", py::bool_(false)), "rescale(n)['input_unsigned']");
  a.output_unsigned =
      checked_flag(member(d, "output_unsigned", py::bool_(false)), "rescale(n)['output_unsigned']");
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

std::optional<std::size_t> optional_node(py_graph& g, py::handle obj, std::string_view call) {
  if (obj.is_none()) return std::nullopt;
  return g.intern(obj, call);
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

  // Each id once: a node listed twice would be planned, and applied, twice.
  static std::vector<std::size_t> nodes(const G& cg) {
    return cg.guard("nodes", [&]() -> std::vector<std::size_t> {
      G& g = const_cast<G&>(cg);  // interning is the adapter's own state, not the graph's
      const py::tuple listed = qfold_py::checked_ids(g.call("nodes"), "nodes()");
      const std::uint32_t stamp = ++g.listing;
      std::vector<std::size_t> r;
      r.reserve(listed.size());
      for (const auto v : listed) {
        const std::size_t k = g.intern(v, "nodes()");
        auto& info = g.node_objects[k];
        if (info.listed == stamp)
          throw qfold_py::adapter_error("nodes() listed node " + qfold_py::shown(v) +
                                        " twice, expected each live node once");
        info.listed = stamp;
        info.position = r.size();
        info.erased = false;
        r.push_back(k);
      }
      return r;
    });
  }
  static op_kind kind(const G& cg, std::size_t n) {
    return cg.guard("kind", [&]() -> op_kind {
      G& g = const_cast<G&>(cg);
      if (g.rolling_back)
        if (const auto it = g.made_here.find(n); it != g.made_here.end()) return it->second.first;
      if (g.batch_norm_pass && g.vetoed.contains(n)) return op_kind::other;  // refused already
      const op_kind k = qfold_py::kind_from(g.call("kind", g.object(n)));
      if (k == op_kind::batch_norm && g.batch_norm_pass && !g.checking_batch_norm &&
          g.checked.insert(n).second && vetoed_batch_norm(g, n))
        return op_kind::other;
      return k;
    });
  }
  // fold_batch_norm refuses statistics that are not 1-D (qfold.fold_batch_norm does): the pass
  // reads only their values, so a (2, 2) gamma would be read as 4 channels. Checked when the
  // pass first asks a batch norm's kind; a batch norm of a convolution or linear with such a
  // statistic is then a batch norm no more to the pass (kind other), and its site is reported
  // refused, invalid_shape.
  static bool vetoed_batch_norm(G& g, std::size_t n) {
    struct checking {
      bool& b;
      explicit checking(bool& x) : b(x) { b = true; }
      ~checking() { b = false; }
      checking(const checking&) = delete;
      checking& operator=(const checking&) = delete;
    } scope(g.checking_batch_norm);
    const auto roles = batch_norm_operands(g, n);
    const op_kind producer = kind(g, roles.input);
    if (producer != op_kind::convolution && producer != op_kind::linear) return false;
    const std::pair<const char*, std::optional<std::size_t>> stats[] = {
        {"gamma", roles.gamma},
        {"beta", roles.beta},
        {"mean", roles.mean},
        {"variance", roles.variance}};
    for (const auto& [name, id] : stats) {
      if (!id) continue;
      const auto c = constant(g, *id);
      if (c && c->shape.size() != 1) {
        g.vetoes.push_back({roles.input, n,
                            std::string("the batch norm's ") + name + " has shape " +
                                qfold_py::shape_text(c->shape) +
                                ": statistics are 1-D, one value per channel"});
        g.vetoed.insert(n);
        return true;
      }
    }
    return false;
  }
  static std::vector<std::size_t> operands(const G& cg, std::size_t n) {
    return cg.guard("operands", [&]() -> std::vector<std::size_t> {
      G& g = const_cast<G&>(cg);
      if (g.rolling_back)
        if (const auto it = g.made_here.find(n); it != g.made_here.end()) return it->second.second;
      std::vector<std::size_t> r;
      for (const auto v : qfold_py::checked_ids(g.call("operands", g.object(n)), "operands(n)"))
        r.push_back(g.intern(v, "operands(n)"));
      return r;
    });
  }
  static std::size_t use_count(const G& g, std::size_t n) {
    return g.guard("use_count", [&]() -> std::size_t {
      return qfold_py::checked_count(g.call("use_count", g.object(n)), "use_count(n)");
    });
  }
  static std::optional<tensor_view<float>> constant(const G& cg, std::size_t n) {
    return cg.guard("constant", [&]() -> std::optional<tensor_view<float>> {
      G& g = const_cast<G&>(cg);
      auto it = g.constants.find(n);
      if (it == g.constants.end()) {
        const py_object c = g.call("constant", g.object(n));
        if (c.is_none()) return std::nullopt;
        G::held h{qfold_py::float_array_as<float>(c, "constant(n)"), {}};
        for (py::ssize_t d = 0; d < h.data.ndim(); ++d) h.shape.push_back(h.data.shape(d));
        it = g.constants.emplace(n, std::move(h)).first;
      }
      const auto& stored = it->second;
      if (g.batch_norm_pass && !g.checking_batch_norm && stored.shape.size() != 1 &&
          g.statistics.contains(n))
        throw qfold_py::adapter_error("constant(n) returned shape " +
                                      qfold_py::shape_text(stored.shape) +
                                      " for a batch norm's statistic, expected 1-D (one value "
                                      "per channel)");
      return tensor_view<float>{{stored.data.data(), static_cast<std::size_t>(stored.data.size())},
                                stored.shape};
    });
  }
  static qfold::conv_attributes conv_attributes(const G& g, std::size_t n) {
    return g.guard("conv_attributes", [&]() -> qfold::conv_attributes {
      const py_object d =
          qfold_py::checked_dict(g.call("conv_attributes", g.object(n)), "conv_attributes(n)");
      qfold::conv_attributes a;
      // Any int: the fold refuses groups that do not divide the channels, and 0 (qfold.fx's
      // refusal of a conv whose output may be unbatched) as ambiguous_axis.
      a.groups =
          qfold_py::checked_int(qfold_py::field(d, "groups", py::int_(1)),
                                "conv_attributes(n)['groups']", INT64_MIN, INT64_MAX, "an int");
      a.transposed = qfold_py::checked_flag(qfold_py::field(d, "transposed", py::bool_(false)),
                                            "conv_attributes(n)['transposed']");
      a.layout = qfold_py::layout_from(
          qfold_py::field(d, "layout", py::str(a.transposed ? "i_o_s" : "o_i_s")));
      a.padded = qfold_py::checked_flag(qfold_py::field(d, "padded", py::bool_(false)),
                                        "conv_attributes(n)['padded']");
      a.input_channel_axis = qfold_py::checked_int(
          qfold_py::field(d, "input_channel_axis", py::int_(1)),
          "conv_attributes(n)['input_channel_axis']", INT64_MIN, INT64_MAX, "an int");
      return a;
    });
  }
  static qfold::batch_norm_attributes batch_norm_attributes(const G& g, std::size_t n) {
    return g.guard("batch_norm_attributes", [&]() -> qfold::batch_norm_attributes {
      const py_object d = qfold_py::checked_dict(g.call("batch_norm_attributes", g.object(n)),
                                                 "batch_norm_attributes(n)");
      return {qfold_py::checked_real(qfold_py::field(d, "epsilon", py::float_(1e-5)),
                                     "batch_norm_attributes(n)['epsilon']", "a float"),
              qfold_py::checked_flag(qfold_py::field(d, "training", py::bool_(false)),
                                     "batch_norm_attributes(n)['training']")};
    });
  }
  // ir.batch_norm_operands(n) -> (input, gamma, beta, mean, variance), None for an absent gamma
  // or beta; without that method, operands(n) in ONNX order.
  static qfold::batch_norm_operands<std::size_t> batch_norm_operands(const G& cg, std::size_t n) {
    return cg.guard("batch_norm_operands", [&]() -> qfold::batch_norm_operands<std::size_t> {
      G& g = const_cast<G&>(cg);
      const bool own = g.provides("batch_norm_operands");
      const char* call = own ? "batch_norm_operands(n)" : "operands(n)";
      const py::tuple ops = qfold_py::checked_ids(
          g.call(own ? "batch_norm_operands" : "operands", g.object(n)), call);
      if (ops.size() != 5)
        throw qfold_py::adapter_error(std::string(call) + " of a batch norm returned " +
                                      std::to_string(ops.size()) +
                                      " ids, expected 5 (input, gamma, beta, mean, variance)");
      if (ops[0].is_none() || ops[3].is_none() || ops[4].is_none())
        throw qfold_py::adapter_error(std::string(call) +
                                      " of a batch norm gave None for its input, mean or "
                                      "variance (only gamma and beta may be absent)");
      const qfold::batch_norm_operands<std::size_t> r{
          g.intern(ops[0], call), qfold_py::optional_node(g, ops[1], call),
          qfold_py::optional_node(g, ops[2], call), g.intern(ops[3], call), g.intern(ops[4], call)};
      if (g.batch_norm_pass)
        for (const auto& s : {r.gamma, r.beta, std::optional<std::size_t>(r.mean),
                              std::optional<std::size_t>(r.variance)})
          if (s) g.statistics.insert(*s);
      return r;
    });
  }
  static std::size_t output_rank(const G& g, std::size_t n) {
    return g.guard("output_rank", [&]() -> std::size_t {
      return qfold_py::checked_count(g.call("output_rank", g.object(n)), "output_rank(n)");
    });
  }

  // --- Mutation -------------------------------------------------------------------------------
  // Every argument is made before the IR is called: nothing fallible between its mutation and
  // the return but the check of the id it returns (accept_added, which undoes what it can).
  static std::size_t add_constant(G& g, std::span<const float> data,
                                  std::span<const std::int64_t> shape) {
    return g.guard("add_constant", [&]() -> std::size_t {
      std::vector<py::ssize_t> dims(shape.begin(), shape.end());
      py::array_t<float> a(dims);
      std::copy(data.begin(), data.end(), a.mutable_data());
      const py::tuple s = py::cast(std::vector<std::int64_t>(shape.begin(), shape.end()));
      g.changed();
      const py_object id = g.call("add_constant", a, s);
      return g.accept_added("add_constant", id, op_kind::constant, std::nullopt, 0, 1);
    });
  }
  static void set_operand(G& g, std::size_t n, std::size_t i, std::size_t v) {
    return g.guard("set_operand", [&]() -> void {
      const py_object node = g.object(n), value = g.object(v);
      g.changed();
      g.call("set_operand", node, i, value);
    });
  }
  static void remove_last_operand(G& g, std::size_t n) {
    return g.guard("remove_last_operand", [&]() -> void {
      const py_object node = g.object(n);
      g.changed();
      g.call("remove_last_operand", node);
    });
  }
  static void replace_uses(G& g, std::size_t old, std::size_t v) {
    return g.guard("replace_uses", [&]() -> void {
      const py_object from = g.object(old), to = g.object(v);
      g.changed();
      g.call("replace_uses", from, to);
    });
  }
  // noexcept, as qfold asks of erase: an exception from the IR's erase is recorded (errors) and
  // reported as false, so the site stays applied with cleanup_failed set.
  static bool erase(G& g, std::size_t n) noexcept {
    try {
      g.guard("erase", [&]() -> void {
        const py_object node = g.object(n);
        g.changed();
        g.call("erase", node);
        g.node_objects[n].erased = true;  // an id the IR may hand out again
        g.statistics.erase(n);
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
        const py_object from = g.object(old), to = g.object(v);
        g.changed();
        g.call("take_name", from, to);
      });
    return v;
  }
  // ir.constant_bytes(n); without that method, the nbytes of int_constant(n) as the IR returned
  // it, or (int_constant missing or None) of constant(n).
  static std::size_t constant_bytes(const G& g, std::size_t n) {
    return g.guard("constant_bytes", [&]() -> std::size_t {
      if (g.provides("constant_bytes"))
        return qfold_py::checked_count(g.call("constant_bytes", g.object(n)), "constant_bytes(n)");
      if (g.provides("int_constant")) {
        const py_object c = g.call("int_constant", g.object(n));
        if (!c.is_none()) {
          const py_object data = py::isinstance<py::array>(c)  // an array's .data is its buffer
                                     ? py::none()
                                     : qfold_py::member(c, "data", py::none());
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
      if (!py::isinstance<qfold::qparams>(q))
        qfold_py::bad_answer("qparams(n)", q, "a qfold.QParams or None");
      return q.cast<qfold::qparams>();
    });
  }
  static bool qparams_shared(const G& g, std::size_t n) {
    return g.guard("qparams_shared", [&]() -> bool {
      if (!g.provides("qparams_shared")) return false;
      return qfold_py::checked_flag(g.call("qparams_shared", g.object(n)), "qparams_shared(n)");
    });
  }
  static void set_qparams(G& g, std::size_t n, const qfold::qparams& q) {
    return g.guard("set_qparams", [&]() -> void {
      const py_object node = g.object(n), value = py::cast(q);
      g.changed();
      g.call("set_qparams", node, value);
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
      const py_object data = py::isinstance<py::array>(c)  // an array's .data is its buffer
                                 ? py::none()
                                 : qfold_py::member(c, "data", py::none());
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
      const std::string s = qfold_py::dtype_string(t, "element_type(n)");
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
          qfold_py::dtype_string(qfold_py::member(q, "weight_type", py::str("int8")),
                                 "quantized_conv(n): weight_type"),
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
      const py_object values = a.attr("astype")(name);
      const py::tuple s = py::cast(std::vector<std::int64_t>(shape.begin(), shape.end()));
      g.changed();
      const py_object id = g.call("add_int_constant", values, s, name);
      return g.accept_added("add_int_constant", id, op_kind::constant, std::nullopt, 0, 1);
    });
  }
  // ir.add_table(input, values): a new TABLE reading input, values a 256-entry int8 array (the
  // IR makes the table constant, operand 1, itself).
  static std::size_t add_table(G& g, std::size_t input, std::span<const std::int8_t> values) {
    return g.guard("add_table", [&]() -> std::size_t {
      py::array_t<std::int8_t> a(static_cast<py::ssize_t>(values.size()));
      std::copy(values.begin(), values.end(), a.mutable_data());
      const py_object x = g.object(input);
      g.changed();
      const py_object id = g.call("add_table", x, a);
      return g.accept_added("add_table", id, op_kind::table, input, 2, 2);
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
      const py_object x = g.object(input);
      const py::dict attributes = qfold_py::rescale_attributes_to(attr);
      g.changed();
      const py_object id = g.call("add_rescale", x, attributes, m, s);
      return g.accept_added("add_rescale", id, op_kind::rescale, input, 1, 1);
    });
  }
  static void set_conv_input_zero_point(G& g, std::size_t n, std::int64_t zp) {
    return g.guard("set_conv_input_zero_point", [&]() -> void {
      const py_object node = g.object(n);
      g.changed();
      g.call("set_conv_input_zero_point", node, zp);
    });
  }
};

namespace qfold_py {
namespace {
// The same object, for a pass that may create int16 tables: the IR has add_table16.
struct py_graph16 : py_graph {
  using py_graph::py_graph;
};
// The object run_passes makes: the graph qfold's own transaction works on, inside the wrapper
// below (the passes see it as a py_graph or a py_graph16).
struct py_graph_tx : py_graph16 {
  using py_graph16::py_graph16;
};
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
      const pybind11::object x = g.object(input);
      g.changed();
      const pybind11::object id = g.call("add_table16", x, a);
      return g.accept_added("add_table16", id, op_kind::table, input, 2, 2);
    });
  }
};
template <>
struct qfold::ir_traits<qfold_py::py_graph_tx> : qfold::ir_traits<qfold_py::py_graph16> {};

namespace qfold_py {
namespace {

// qfold's transaction for a pass over the Python IR, wrapped: the apply of each site is one
// segment of the adapter's record (begin to commit or rollback), so that run_passes can give a
// site the adapter error that broke it, and a rollback is reported failed (the C++ driver's
// rollback_threw) when the adapter could not undo a wrong answer of the IR (apply_segment::dirty)
// even where every inverse qfold recorded succeeded.
template <class G>
class py_transaction {
 public:
  using id = std::size_t;

  explicit py_transaction(G& g) : g_(g), inner_(static_cast<py_graph_tx&>(g)) {
    g_.apply_first_error = g_.errors.size();  // the analysis is over
  }
  py_transaction(const py_transaction&) = delete;
  py_transaction& operator=(const py_transaction&) = delete;

  void begin() noexcept {
    inner_.begin();
    g_.made_here.clear();
    try {
      apply_segment s;
      s.first_error = g_.errors.size();
      g_.segments.push_back(std::move(s));
    } catch (...) {
      g_.segments_lost = true;
    }
  }
  [[nodiscard]] G& graph() noexcept { return g_; }
  [[nodiscard]] const G& graph() const noexcept { return g_; }

  template <class V>
  id add_constant(std::span<const V> data, std::span<const std::int64_t> shape) {
    return inner_.add_constant(data, shape);
  }
  id add_int_constant(std::span<const std::int64_t> data, std::span<const std::int64_t> shape,
                      qfold::dtype type) {
    return inner_.add_int_constant(data, shape, type);
  }
  id add_table(id input, std::span<const std::int8_t> values) {
    return inner_.add_table(input, values);
  }
  id add_table(id input, std::span<const std::int16_t> values) {
    return inner_.add_table(input, values);
  }
  id add_rescale(id input, const qfold::rescale_attributes& a,
                 std::span<const qfold::scale_factor> scales) {
    return inner_.add_rescale(input, a, scales);
  }
  void set_operand(id n, std::size_t i, id v) { inner_.set_operand(n, i, v); }
  void set_qparams(id n, const qfold::qparams& q) { inner_.set_qparams(n, q); }
  void set_conv_input_zero_point(id n, std::int64_t zp) { inner_.set_conv_input_zero_point(n, zp); }
  void replace_uses(id old, id v) { inner_.replace_uses(old, v); }
  void erase_dead(id n) { inner_.erase_dead(n); }

  auto commit() {
    auto r = inner_.commit();
    if (!g_.segments.empty()) g_.segments.back().end = apply_segment::committed;
    return r;
  }
  [[nodiscard]] bool cleanup_failed() const noexcept { return inner_.cleanup_failed(); }
  [[nodiscard]] const std::optional<id>& replaced() const noexcept { return inner_.replaced(); }
  [[nodiscard]] const std::optional<id>& replacement() const noexcept {
    return inner_.replacement();
  }
  [[nodiscard]] const std::vector<id>& added() const noexcept { return inner_.added(); }

  // The driver rolls a site back in its handler (the apply threw) or after a rejection.
  bool rollback() noexcept {
    g_.rolling_back = true;
    const bool undone = inner_.rollback();
    g_.rolling_back = false;
    if (g_.segments.empty()) return undone;
    apply_segment& s = g_.segments.back();
    const std::exception_ptr e = std::current_exception();
    s.end = e ? apply_segment::threw : apply_segment::rejected;
    s.rollback_ok = undone && !s.dirty;
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        try {
          s.cause = x.what();
        } catch (...) {
        }
      } catch (...) {
      }
    }
    return s.rollback_ok;
  }

 private:
  G& g_;
  qfold::transaction<py_graph_tx> inner_;
};

}  // namespace
}  // namespace qfold_py

template <>
class qfold::transaction<qfold_py::py_graph> : public qfold_py::py_transaction<qfold_py::py_graph> {
 public:
  using py_transaction::py_transaction;
};
template <>
class qfold::transaction<qfold_py::py_graph16>
    : public qfold_py::py_transaction<qfold_py::py_graph16> {
 public:
  using py_transaction::py_transaction;
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
  // The site's apply threw and its undo could not be completed: the IR may differ from what it
  // was (reason adapter_failure, never "left as it was").
  bool rollback_failed = false;
  std::optional<std::string> adapter_error;  // the error that broke the site, when known
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
  [[nodiscard]] std::size_t rollback_failed() const {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.rollback_failed ? 1u : 0u;
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

bool is_adapter_failure(const qfold::site_report<std::size_t>& s, std::string_view message) {
  return s.rejected && s.rejected->code == qfold::reason::adapter_failure &&
         s.rejected->message == message;
}

// One pass's sites as Python sees them, each with the adapter error that broke it where the
// adapter's record says which: analysis errors in the order of the sites whose analysis threw
// (one error each: nothing inside a pass catches an adapter call's exception), and each site's
// apply segment in the order of the sites that were applied (folded, or an apply that threw or
// could not be undone). Where the counts disagree (an exception not from the adapter), no error
// is given to a site. The batch norms refused for their statistics join in node order.
void add_sites(py_graph& g, std::string_view pass, const qfold::report<std::size_t>& r,
               std::vector<py_site>& out) {
  using qfold::detail::analysis_threw, qfold::detail::apply_threw, qfold::detail::rollback_threw;
  const std::size_t analysis_end = g.apply_first_error.value_or(g.errors.size());
  std::vector<std::optional<std::string>> error_of(r.sites.size());

  std::vector<std::size_t> analysis_sites, applied_sites, applied_segments;
  for (std::size_t i = 0; i < r.sites.size(); ++i) {
    const auto& s = r.sites[i];
    if (is_adapter_failure(s, analysis_threw)) analysis_sites.push_back(i);
    if (s.folded() || is_adapter_failure(s, apply_threw) || is_adapter_failure(s, rollback_threw))
      applied_sites.push_back(i);
  }
  if (analysis_sites.size() == analysis_end - g.pass_first_error)
    for (std::size_t k = 0; k < analysis_sites.size(); ++k)
      error_of[analysis_sites[k]] = g.errors[g.pass_first_error + k];
  for (std::size_t k = 0; k < g.segments.size(); ++k) {
    const auto& s = g.segments[k];
    if (s.end == apply_segment::committed || s.end == apply_segment::threw ||
        (s.end == apply_segment::rejected && !s.rollback_ok))
      applied_segments.push_back(k);
  }
  if (!g.segments_lost && applied_sites.size() == applied_segments.size()) {
    for (std::size_t k = 0; k < applied_sites.size(); ++k) {
      const std::size_t seg = applied_segments[k];
      const std::size_t first = g.segments[seg].first_error;
      const std::size_t end =
          seg + 1 < g.segments.size() ? g.segments[seg + 1].first_error : g.errors.size();
      if (first < end)
        error_of[applied_sites[k]] = g.errors[first];
      else if (!g.segments[seg].cause.empty() && !r.sites[applied_sites[k]].folded())
        error_of[applied_sites[k]] = g.segments[seg].cause;
    }
  }

  std::vector<std::pair<std::size_t, py_site>> sites;  // (the position of its node, the site)
  const auto position = [&](std::size_t n) { return g.node_objects.at(n).position; };
  for (std::size_t i = 0; i < r.sites.size(); ++i) {
    const auto& s = r.sites[i];
    py_site ps;
    ps.pass = std::string(pass);
    for (const std::size_t n : s.nodes) ps.nodes.append(g.object(n));
    ps.folded = s.folded();
    ps.adapter_error = error_of[i];
    if (s.rejected) {
      ps.reason = std::string(qfold::to_string(s.rejected->code));
      ps.message = std::string(s.rejected->message);
      if (s.rejected->code == qfold::reason::adapter_failure && ps.adapter_error)
        *ps.message += ": " + *ps.adapter_error;
      if (s.rejected->index != qfold::rejection::no_index) ps.index = s.rejected->index;
    }
    ps.rollback_failed = is_adapter_failure(s, rollback_threw);
    ps.bytes_removed = s.bytes_removed;
    ps.bytes_added = s.bytes_added;
    if (s.replaced) ps.replaced = g.object(*s.replaced);
    if (s.replacement) ps.replacement = g.object(*s.replacement);
    ps.cleanup_failed = s.cleanup_failed;
    sites.emplace_back(s.nodes.empty() ? SIZE_MAX : position(s.nodes.back()), std::move(ps));
  }
  for (const auto& v : g.vetoes) {
    py_site ps;
    ps.pass = std::string(pass);
    ps.nodes.append(g.object(v.producer));
    ps.nodes.append(g.object(v.batch_norm));
    ps.reason = std::string(qfold::to_string(qfold::reason::invalid_shape));
    ps.message = v.message;
    sites.emplace_back(position(v.batch_norm), std::move(ps));
  }
  if (!g.vetoes.empty())
    std::stable_sort(sites.begin(), sites.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, s] : sites) out.push_back(std::move(s));
}

qfold::report<std::size_t> run_pass(py_graph_tx& g, const std::string& name,
                                    const qfold::scale_into_quantize_options& options) {
  if (name == qfold::batch_norm_pass_name) return qfold::passes::batch_norm.run<py_graph>(g);
  if (name == qfold::scale_into_quantize_pass_name)
    return qfold::passes::scale_into_quantize_t{options}.run<py_graph>(g);
  if (name == qfold::dyt_alpha_pass_name) return qfold::passes::dyt_alpha.run<py_graph>(g);
  if (name == qfold::dyt_affine_pass_name) return qfold::passes::dyt_affine.run<py_graph>(g);
  if (name == qfold::merge_rescales_pass_name)
    return qfold::passes::merge_rescales.run<py_graph>(g);
  if (name == qfold::compose_tables_pass_name)
    return qfold::passes::compose_tables.run<py_graph>(g);
  if (g.provides("add_table16") && g.provides("add_rescale"))
    return qfold::fold_collapse_to_tables<py_graph16>(g);
  return qfold::passes::collapse_to_table.run<py_graph>(g);
}

py_report run_passes(py::object ir, std::optional<std::vector<std::string>> names,
                     const std::string& exactness) {
  qfold::scale_into_quantize_options options;
  options.exactness = parse_option<qfold::float_exactness>(
      exactness,
      {{"bit_exact", qfold::float_exactness::bit_exact}, {"real", qfold::float_exactness::real}},
      "run_passes: exactness");
  py_graph_tx g(std::move(ir));
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
  }
  for (const std::string& name : *names) {
    g.pass_first_error = g.errors.size();
    g.apply_first_error.reset();
    g.segments.clear();
    g.segments_lost = false;
    g.batch_norm_pass = name == qfold::batch_norm_pass_name;
    g.checked.clear();
    g.vetoed.clear();
    g.statistics.clear();
    g.vetoes.clear();
    const auto r = run_pass(g, name, options);
    g.batch_norm_pass = false;
    add_sites(g, name, r, out.sites);
  }
  out.adapter_errors = std::move(g.errors);
  return out;
}

std::string site_repr(const py_site& s) {
  std::string r = "Site(pass='" + s.pass + "', nodes=" + std::string(py::repr(s.nodes));
  if (s.folded) {
    r += ", folded, bytes_removed=" + std::to_string(s.bytes_removed) +
         ", bytes_added=" + std::to_string(s.bytes_added);
    if (s.cleanup_failed) r += ", cleanup_failed";
  } else {
    r += ", rejected, reason='" + *s.reason + "', message='" + *s.message + "'";
    if (s.rollback_failed) r += ", rollback_failed (the IR may differ)";
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
      .def_readonly("rollback_failed", &py_site::rollback_failed,
                    "the site's apply failed and so did its undo: the IR may differ from what "
                    "it was (reason adapter_failure)")
      .def_readonly("adapter_error", &py_site::adapter_error,
                    "the text of the adapter error that broke this site (its adapter_failure, or "
                    "a folded site's cleanup), None if none or not known")
      .def("__repr__", &site_repr);
  py::class_<py_report>(m, "GraphReport", "What run_passes did: every site, in order.")
      .def_readonly("sites", &py_report::sites)
      .def_readonly("adapter_errors", &py_report::adapter_errors,
                    "the text of each Python exception an adapter method raised")
      .def_property_readonly("folded", &py_report::folded)
      .def_property_readonly("rollback_failed", &py_report::rollback_failed,
                             "sites whose undo failed: the IR may differ from what it was")
      .def_property_readonly(
          "ir_changed",
          [](const py_report& r) { return r.folded() != 0 || r.rollback_failed() != 0; },
          "whether the IR may differ from what it was: a site folded, or a rollback failed")
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
               (r.rollback_failed() == 0 ? ""
                                         : ", " + std::to_string(r.rollback_failed()) +
                                               " rollback failed (the IR may differ)") +
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
        "by a method, or an answer of the wrong type or range (named in the error), makes its site "
        "an "
        "adapter_failure rejection, the site rolled back; a site whose rollback could not be "
        "completed has rollback_failed set (GraphReport.rollback_failed, ir_changed).");
}

}  // namespace qfold_py
