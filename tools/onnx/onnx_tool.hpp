// The pieces of qfold-onnx, shared with its tests and benchmark: read an ONNX file with clear
// errors, fold its batch norms through the adapter, write it atomically, print the report.
#pragma once

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <new>
#include <optional>
#include <ostream>
#include <qfold/graph/batch_norm_pass.hpp>
#include <qfold/graph/report.hpp>
#include <qfold_onnx/graph.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../common/tool_support.hpp"

namespace qfold_onnx {

// Exit codes and the error that carries one: shared with qfold-tosa-opt (tools/common).
// 1: not a file, not ONNX, truncated, invalid (dims, data, attributes, external data),
// unsupported opset, fails the checker; anything thrown before writing starts.
using qfold_tool::exit_bad_input;
using qfold_tool::exit_code;
using qfold_tool::exit_ok;
using qfold_tool::exit_usage;
using qfold_tool::exit_write;
using qfold_tool::tool_error;

// Default-domain opsets this tool understands: BatchNormalization's semantics are fixed from
// opset 7 on (spatial, is_test before), and the ONNX library knows up to its own newest.
inline constexpr std::int64_t min_opset = 7;
inline std::int64_t max_opset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at(onnx::ONNX_DOMAIN)
      .second;
}

// The bytes of an input file, mapped read-only (no copy; the page cache backs them).
class input_file {
 public:
  explicit input_file(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
      throw tool_error(exit_bad_input, "cannot read '" + path + "': no such file");
    if (fs::is_directory(status))
      throw tool_error(exit_bad_input, "'" + path + "' is a directory, not an ONNX file");
    if (!fs::is_regular_file(status))
      throw tool_error(exit_bad_input, "'" + path + "' is not a regular file");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      throw tool_error(exit_bad_input, "cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      throw tool_error(exit_bad_input, "cannot read '" + path + "': " + std::strerror(errno));
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > static_cast<std::size_t>(INT_MAX))
      throw tool_error(exit_bad_input, "'" + path +
                                           "' is larger than 2 GiB, protobuf's limit (models "
                                           "with external data are not supported)");
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED)
      throw tool_error(exit_bad_input, "cannot map '" + path + "': " + std::strerror(errno));
    data_ = static_cast<const char*>(p);
  }
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;
  ~input_file() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] std::string_view bytes() const noexcept { return {data_, size_}; }
  [[nodiscard]] int fd() const noexcept { return fd_; }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Parses and validates a model: an ONNX protobuf with a graph, an IR version and a
// default-domain opset this tool understands, accepted by the ONNX checker.
// The bytes as a ModelProto, nothing checked; false when protobuf cannot parse them. Running out
// of memory is std::bad_alloc (the model is left empty).
inline bool parse_bytes(std::string_view bytes, onnx::ModelProto& model) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return false;
  try {
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const std::uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
    stream.SetTotalBytesLimit(INT_MAX);
    return model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
  } catch (const std::bad_alloc&) {
    model.Clear();
    throw;
  } catch (const std::exception&) {
    model.Clear();
    return false;
  }
}

// --- The wire format, for splicing large raw_data in and out -----------------------------------
// qfold-onnx neither copies a tensor's raw_data out of its mapped input when parsing nor copies it
// into a buffer when writing: it parses a "skeleton" of the input, where every large raw_data of
// a main-graph initializer is a one-byte placeholder (the real bytes stay in the mapping, as
// raw_aliases), and writes the serialized skeleton with the placeholders replaced by the
// tensors' bytes (gathered by writev). Only ModelProto.graph (7), GraphProto.initializer (5) and
// TensorProto.raw_data (9) are rewritten, as protobuf itself encodes them (tag, varint length,
// bytes), so the output is byte for byte what SerializeToZeroCopyStream wrote.
namespace wire {

inline bool read_varint(const char*& p, const char* end, std::uint64_t& v) noexcept {
  v = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const auto b = static_cast<std::uint8_t>(*p++);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}
inline std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

// One field: its number, wire type, the bytes of its tag and length (`head`), and for a
// length-delimited field its payload. A group (wire types 3 and 4: ONNX has none, but protobuf
// keeps one in a message's unknown fields and writes it back) is one field from its start tag to
// its end tag. False on bytes protobuf would not parse as such: the caller then does without
// splicing.
struct field {
  std::uint32_t number = 0;
  int type = 0;
  std::string_view head, payload, whole;
};
// Protobuf's default recursion limit: deeper groups do not parse.
inline constexpr int max_group_depth = 100;
inline bool next_field(const char*& p, const char* end, field& f, int depth = 0) noexcept {
  const char* start = p;
  std::uint64_t tag = 0;
  if (!read_varint(p, end, tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
  f.number = static_cast<std::uint32_t>(tag >> 3);
  f.type = static_cast<int>(tag & 7);
  std::uint64_t v = 0;
  switch (f.type) {
    case 0:
      if (!read_varint(p, end, v)) return false;
      break;
    case 1:
    case 5: {
      const std::size_t n = f.type == 1 ? 8 : 4;
      if (static_cast<std::size_t>(end - p) < n) return false;
      p += n;
      break;
    }
    case 2: {
      if (!read_varint(p, end, v) || v > static_cast<std::uint64_t>(end - p)) return false;
      f.head = {start, static_cast<std::size_t>(p - start)};
      f.payload = {p, static_cast<std::size_t>(v)};
      p += v;
      f.whole = {start, static_cast<std::size_t>(p - start)};
      return true;
    }
    case 3: {  // fields up to the end tag of the same number
      if (depth >= max_group_depth) return false;
      for (field inner;;) {
        if (p >= end || !next_field(p, end, inner, depth + 1)) return false;
        if (inner.type == 4) {
          if (inner.number != f.number) return false;
          break;
        }
      }
      break;
    }
    case 4:  // an end tag: only inside a group (the loop above consumes it)
      if (depth == 0) return false;
      break;
    default:
      return false;
  }
  f.head = {start, static_cast<std::size_t>(p - start)};
  f.payload = {};
  f.whole = f.head;
  return true;
}

// One piece of a rewritten message: bytes, or (made > 0) `made` bytes that its writer makes
// when it writes them, the caller's item `key` (a tensor folded while it is written).
struct part {
  std::string_view bytes;
  std::size_t made = 0, key = 0;
  [[nodiscard]] std::size_t size() const noexcept { return made != 0 ? made : bytes.size(); }
};
// The pieces of a rewritten message, in order: views of the original bytes, of the
// replacements, and of new tag + length varints (kept in *heads, shared by a message and its
// sub-messages, whose strings never move), and parts made at write time. Views contiguous in
// memory are merged.
struct pieces {
  std::deque<std::string>* heads;
  std::vector<part> parts;
  std::size_t size = 0;
  explicit pieces(std::deque<std::string>& h) : heads(&h) {}
  void add(std::string_view v) {
    if (v.empty()) return;
    if (!parts.empty() && parts.back().made == 0 &&
        parts.back().bytes.data() + parts.back().bytes.size() == v.data()) {
      parts.back().bytes = {parts.back().bytes.data(), parts.back().bytes.size() + v.size()};
    } else {
      parts.push_back({v});
    }
    size += v.size();
  }
  void add(const part& p) {
    if (p.made == 0) return add(p.bytes);
    parts.push_back(p);
    size += p.made;
  }
  void add(const pieces& sub) {
    for (const part& p : sub.parts) add(p);
  }
  void add_head(std::uint32_t number, std::size_t length) {
    std::string h;
    const auto put = [&h](std::uint64_t v) {
      for (; v >= 0x80; v >>= 7) h += static_cast<char>((v & 0x7f) | 0x80);
      h += static_cast<char>(v);
    };
    put((static_cast<std::uint64_t>(number) << 3) | 2);
    put(length);
    heads->push_back(std::move(h));
    add(heads->back());
  }
};

// Rewrites a serialized ModelProto: the raw_data (9) of the k-th initializer (5) of its graph (7)
// becomes replace(k, raw_data) when that returns a part with bytes or a size. False when the
// bytes are not a model this can rewrite without changing its meaning (several graph fields,
// several raw_data fields in a rewritten tensor, bytes that do not parse); `out` is then unusable.
template <class Replace>
bool rewrite_model(std::string_view model, Replace&& replace, pieces& out) {
  std::size_t k = 0;
  const auto tensor = [&](std::string_view bytes, pieces& to, bool& changed) {
    // First pass: find raw_data; rewrite only when exactly one is there.
    const char* p = bytes.data();
    const char* end = p + bytes.size();
    field f;
    int raws = 0;
    std::string_view raw;
    while (p < end) {
      if (!next_field(p, end, f)) return false;
      if (f.number == 9 && f.type == 2) {
        ++raws;
        raw = f.payload;
      }
    }
    const part r = raws == 1 ? replace(k, raw) : part{};
    ++k;
    if (r.bytes.data() == nullptr && r.made == 0) {
      changed = false;
      return true;
    }
    changed = true;
    p = bytes.data();
    while (p < end) {
      (void)next_field(p, end, f);
      if (f.number == 9 && f.type == 2) {
        to.add_head(9, r.size());
        to.add(r);
      } else {
        to.add(f.whole);
      }
    }
    return true;
  };
  const auto graph = [&](std::string_view bytes, pieces& to) {
    const char* p = bytes.data();
    const char* end = p + bytes.size();
    field f;
    while (p < end) {
      if (!next_field(p, end, f)) return false;
      if (f.number == 5 && f.type == 2) {
        pieces t(*to.heads);
        bool changed = false;
        if (!tensor(f.payload, t, changed)) return false;
        if (!changed) {
          to.add(f.whole);
          continue;
        }
        to.add_head(5, t.size);
        to.add(t);
      } else {
        to.add(f.whole);
      }
    }
    return true;
  };
  const char* p = model.data();
  const char* end = p + model.size();
  field f;
  int graphs = 0;
  while (p < end) {
    if (!next_field(p, end, f)) return false;
    // A field 7 of another wire type is no graph: protobuf keeps it as an unknown field (and
    // writes it back), so it is copied through like any other field.
    if (f.number == 7 && f.type == 2) {
      if (++graphs > 1) return false;
      pieces g(*out.heads);
      if (!graph(f.payload, g)) return false;
      out.add_head(7, g.size);
      out.add(g);
    } else {
      out.add(f.whole);
    }
  }
  return true;
}

}  // namespace wire

// raw_data of at least this many bytes is aliased when parsing and spliced when writing.
inline constexpr std::size_t splice_min_bytes = raw_aliases::min_bytes;

// As parse_bytes, without copying the large raw_data of the main graph's initializers out of
// `bytes` (which must then outlive the model) into fresh memory: each holds a one-byte
// placeholder, and `aliases` gets its real bytes (see raw_aliases in qfold_onnx/model_bytes.hpp): a
// view of `bytes`, at whatever alignment they have (the adapter reads misaligned ones in place
// through unaligned_constant, and copies them into the spill, from `fd`, the file `bytes` maps,
// only when read as aligned floats). A model this cannot parse so (bytes protobuf would read
// differently, e.g. two graph fields, which protobuf merges) is parsed whole, without aliases: the
// result is always the model parse_bytes gives, with the same bytes.
inline bool parse_bytes_aliased(std::string_view bytes, onnx::ModelProto& model,
                                raw_aliases& aliases, int fd = -1) {
  aliases.clear();
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return false;
  static constexpr char placeholder[1] = {'\0'};
  std::vector<std::pair<std::size_t, std::string_view>> found;
  std::deque<std::string> heads;
  wire::pieces skeleton(heads);
  const bool rewritten = wire::rewrite_model(
      bytes,
      [&](std::size_t k, std::string_view raw) {
        if (raw.size() < splice_min_bytes) return wire::part{};
        if constexpr (std::endian::native != std::endian::little) return wire::part{};
        found.emplace_back(k, raw);
        return wire::part{std::string_view(placeholder, 1)};
      },
      skeleton);
  if (!rewritten || found.empty()) return parse_bytes(bytes, model);
  std::string small;
  small.reserve(skeleton.size);
  for (const wire::part& v : skeleton.parts) small.append(v.bytes);  // no part is made here
  bool ok = parse_bytes(small, model);
  const auto& inits = model.graph().initializer();
  for (std::size_t i = 0; ok && i < found.size(); ++i)
    ok = found[i].first < static_cast<std::size_t>(inits.size()) &&
         inits[static_cast<int>(found[i].first)].raw_data().size() == 1;
  if (!ok) {
    model.Clear();
    return parse_bytes(bytes, model);
  }
  aliases.source = bytes;
  aliases.source_fd = fd;
  aliases.reserve(found.size());
  for (const auto& [k, raw] : found) aliases.emplace(&inits[static_cast<int>(k)], raw);
  return true;
}

// External data is refused (qfold-onnx reads and writes self-contained models only), with the
// most specific reason: a location that is absolute or leaves the model's directory is refused
// before the file system is even asked.
inline std::string external_data_problem(const onnx::TensorProto& t, const std::string& path) {
  namespace fs = std::filesystem;
  std::string location;
  for (const auto& kv : t.external_data())
    if (kv.key() == "location") location = kv.value();
  if (location.empty()) return "external data without a location";
  const fs::path loc(location);
  if (loc.is_absolute() || location.front() == '/' || location.front() == '\\')
    return "external data location '" + location + "' is absolute (refused)";
  for (const auto& part : loc)
    if (part == "..")
      return "external data location '" + location + "' leaves the model's directory (refused)";
  if (location.find('\\') != std::string::npos || location.find(':') != std::string::npos)
    return "external data location '" + location + "' is not a plain relative path (refused)";
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_regular_file(dir / loc, ec))
    return "external data file '" + location + "' not found next to the model";
  return "external data ('" + location +
         "') is not supported: qfold-onnx reads and writes self-contained models only";
}

// Every tensor of a graph (initializers, sparse initializers, tensor attributes, subgraphs):
// dims and data must agree, checked without wrap; no external data.
inline void check_tensors(const onnx::GraphProto& g, const std::string& path,
                          const raw_aliases* aliases = nullptr, int depth = 0) {
  if (depth > 64) throw tool_error(exit_bad_input, "'" + path + "': subgraphs nested too deep");
  const auto check = [&](const onnx::TensorProto& t, const std::string& what) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      throw tool_error(exit_bad_input,
                       "'" + path + "': " + what + ": " + external_data_problem(t, path));
    if (auto why = qfold_onnx::tensor_problem(t, aliases); !why.empty())
      throw tool_error(exit_bad_input, "'" + path + "': " + what + ": " + why);
  };
  for (const auto& t : g.initializer()) check(t, "initializer '" + t.name() + "'");
  for (const auto& s : g.sparse_initializer()) {
    check(s.values(), "sparse initializer '" + s.values().name() + "' values");
    check(s.indices(), "sparse initializer '" + s.values().name() + "' indices");
  }
  for (const auto& n : g.node()) {
    const std::string where = "node '" + n.name() + "' (" + n.op_type() + ")";
    for (const auto& a : n.attribute()) {
      if (a.has_t()) check(a.t(), where + " attribute '" + a.name() + "'");
      for (const auto& t : a.tensors()) check(t, where + " attribute '" + a.name() + "'");
      if (a.has_sparse_tensor()) {
        check(a.sparse_tensor().values(), where + " attribute '" + a.name() + "' values");
        check(a.sparse_tensor().indices(), where + " attribute '" + a.name() + "' indices");
      }
      if (a.has_g()) check_tensors(a.g(), path, aliases, depth + 1);
      for (const auto& sub : a.graphs()) check_tensors(sub, path, aliases, depth + 1);
    }
  }
}

// The main graph's Conv and ConvTranspose attributes against ONNX's rules (the checker does not
// look at them, and ONNX's shape inference crashes on some).
inline void check_convolutions(const onnx::GraphProto& g, const std::string& path) {
  std::unordered_map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : g.initializer()) constants.emplace(t.name(), &t);
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) constants.emplace(n.output(0), &a.t());
  for (const auto& n : g.node()) {
    if ((n.op_type() != "Conv" && n.op_type() != "ConvTranspose") ||
        !(n.domain().empty() || n.domain() == "ai.onnx"))
      continue;
    std::optional<std::vector<std::int64_t>> dims;
    if (n.input_size() > 1)
      if (const auto it = constants.find(n.input(1)); it != constants.end())
        dims.emplace(it->second->dims().begin(), it->second->dims().end());
    if (auto why = qfold_onnx::conv_problem(n, dims); !why.empty())
      throw tool_error(exit_bad_input,
                       "'" + path + "': node '" + n.name() + "' (" + n.op_type() + "): " + why);
  }
}

// Parses and validates a model: an ONNX protobuf with a graph, an IR version and a
// default-domain opset this tool understands, consistent tensors and convolution attributes
// (checked before the ONNX checker runs, so that nothing the checker could trip on reaches it),
// accepted by the ONNX checker.
// With `aliases`, large raw_data stays in `bytes` (parse_bytes_aliased), which must then outlive
// the model, and the aliases must be given to fold_model and write_model.
inline onnx::ModelProto parse_model(std::string_view bytes, const std::string& path,
                                    raw_aliases* aliases = nullptr, int fd = -1) {
  onnx::ModelProto model;
  bool parsed = false;
  try {
    parsed = aliases != nullptr ? parse_bytes_aliased(bytes, model, *aliases, fd)
                                : parse_bytes(bytes, model);
  } catch (const std::bad_alloc&) {
    throw tool_error(exit_bad_input, "'" + path + "': out of memory while parsing the model");
  }
  // Every ONNX file written by a conforming tool starts with field 1 (ir_version), tag 0x08.
  const bool looks_onnx = !bytes.empty() && bytes[0] == '\x08';
  if (!parsed) {
    throw tool_error(exit_bad_input,
                     looks_onnx ? "'" + path + "' is truncated or corrupt (protobuf parse failed)"
                                : "'" + path + "' is not an ONNX model (protobuf parse failed)");
  }
  if (!model.has_graph() || model.ir_version() <= 0)
    throw tool_error(exit_bad_input, "'" + path +
                                         (looks_onnx ? "' is truncated or not an ONNX model"
                                                     : "' is not an ONNX model") +
                                         " (no graph or no IR version)");
  if (model.ir_version() > onnx::IR_VERSION)
    throw tool_error(exit_bad_input, "'" + path + "': unsupported IR version " +
                                         std::to_string(model.ir_version()) +
                                         " (this ONNX library reads up to " +
                                         std::to_string(onnx::IR_VERSION) + ")");
  std::optional<std::int64_t> opset;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (!opset)
    throw tool_error(exit_bad_input, "'" + path + "' imports no default-domain (ai.onnx) opset");
  if (*opset < min_opset || *opset > max_opset())
    throw tool_error(exit_bad_input, "'" + path + "': unsupported opset " + std::to_string(*opset) +
                                         " (supported: " + std::to_string(min_opset) + " to " +
                                         std::to_string(max_opset()) + ")");
  check_tensors(model.graph(), path, aliases);
  check_convolutions(model.graph(), path);
  try {
    onnx::checker::check_model(model);
  } catch (const std::bad_alloc&) {
    throw tool_error(exit_bad_input, "'" + path + "': out of memory while checking the model");
  } catch (const std::exception& e) {
    throw tool_error(exit_bad_input,
                     "'" + path + "' is not a valid ONNX model (checker: " + e.what() + ")");
  }
  return model;
}

inline onnx::ModelProto load_model(const std::string& path) {
  const input_file in(path);
  return parse_model(in.bytes(), path);
}

// One site of the report, with names (so it outlives the graph).
using qfold_tool::site;

struct fold_result {
  std::vector<site> sites;
  std::size_t batch_norms_before = 0, batch_norms_after = 0;
  [[nodiscard]] std::size_t folded() const {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.folded ? 1u : 0u;
    return n;
  }
  [[nodiscard]] std::size_t rejected() const { return sites.size() - folded(); }
  [[nodiscard]] std::size_t bytes_removed() const {
    std::size_t n = 0;
    for (const auto& s : sites) n += s.bytes_removed;
    return n;
  }
};

inline std::size_t count_batch_norms(const onnx::ModelProto& model) {
  std::size_t n = 0;
  for (const auto& node : model.graph().node())
    n += node.op_type() == "BatchNormalization" &&
                 (node.domain().empty() || node.domain() == "ai.onnx")
             ? 1u
             : 0u;
  return n;
}

// Folds every batch norm qfold can fold exactly; the model is changed in place (committed).
// aliases: those of parse_model, if it made any.
inline fold_result fold_model(onnx::ModelProto& model, raw_aliases* aliases = nullptr) {
  fold_result r;
  r.batch_norms_before = count_batch_norms(model);
  graph g(model, aliases);
  const auto report = qfold::fold_batch_norms(g);
  for (const auto& s : report.sites) {
    site out = qfold_tool::named_site(s, [&](graph::node_id n) { return g.name(n); });
    if (s.rejected) {
      const auto producer = s.nodes.front();
      if (const auto why = g.refusal(producer); why && s.nodes.size() > 1) {
        // The producer is invalid as the adapter reads it: its reason, not "unsupported".
        out.reason = std::string(qfold::to_string(*why));
        out.message = "batch norm input is invalid";
        out.note = g.note(producer);
      } else if (s.rejected->code == qfold::reason::unsupported && s.nodes.size() > 1) {
        out.note = g.note(producer).empty()
                       ? "input is " + (g.op_type(producer).empty() ? std::string("a graph input")
                                                                    : g.op_type(producer))
                       : g.note(producer);
      } else {
        out.note = g.note(producer);
      }
    }
    r.sites.push_back(std::move(out));
  }
  for (const auto n : g.unrecognised_batch_norms()) {
    const auto why = g.refusal(n);
    r.sites.push_back({std::string(qfold::batch_norm_pass_name),
                       {g.name(n)},
                       false,
                       std::string(qfold::to_string(why.value_or(qfold::reason::unsupported))),
                       why ? "batch norm is invalid" : "batch norm not foldable",
                       g.note(n),
                       std::nullopt,
                       0});
  }
  g.commit();
  r.batch_norms_after = count_batch_norms(model);
  return r;
}

// Writes the model to a temporary file next to `path`, then renames it: a failure never leaves
// a partial file at `path`. Serializes straight into the file (no copy of the whole model in
// memory). Returns the bytes written.
// A symbolic link at `path` stays a link: its target (followed to the end) gets the new contents.
using qfold_tool::resolve_output;

// Serializes the model with its large raw_data replaced by placeholders (the bytes themselves
// are never copied in memory) and returns the pieces of the file: the small serialization
// (`skeleton`), cut around the placeholders, and the tensors' bytes in their place. The model is
// unchanged on return (the raw_data strings it owns are lent by swapping, and given back).
struct spliced_model {
  std::string skeleton;
  std::deque<std::string> heads;
  wire::pieces file{heads};
  std::vector<const raw_aliases::scaled*> made;  // the tensors folded as they are written (key)
};
inline void splice_model(onnx::ModelProto& model, const raw_aliases* aliases, spliced_model& out) {
  static constexpr char placeholder[1] = {'\0'};
  auto& inits = *model.mutable_graph()->mutable_initializer();
  std::vector<wire::part> data(static_cast<std::size_t>(inits.size()));
  std::vector<std::string> lent;  // the owned raw_data, while placeholders stand in
  std::vector<onnx::TensorProto*> lenders;
  lent.reserve(data.size());
  lenders.reserve(data.size());
  struct give_back {
    std::vector<std::string>& lent;
    std::vector<onnx::TensorProto*>& lenders;
    ~give_back() {
      for (std::size_t i = 0; i < lenders.size(); ++i)
        lenders[i]->mutable_raw_data()->swap(lent[i]);
    }
  } guard{lent, lenders};
  for (int k = 0; k < inits.size(); ++k) {
    onnx::TensorProto* t = inits.Mutable(k);
    if (!t->has_raw_data()) continue;
    auto& part = data[static_cast<std::size_t>(k)];
    if (aliases != nullptr)  // folded as it is written: the placeholder is there already
      if (const auto d = aliases->deferred.find(t); d != aliases->deferred.end()) {
        part = {{}, d->second.count * sizeof(float), out.made.size()};
        out.made.push_back(&d->second);
        continue;
      }
    const std::string_view raw = raw_bytes(*t, aliases);
    if (raw.size() < splice_min_bytes) continue;
    if (raw.data() != t->raw_data().data()) {  // aliased: the placeholder is there already
      part = {raw};
      continue;
    }
    lent.emplace_back(placeholder, 1);  // short: no allocation
    lenders.push_back(t);
    t->mutable_raw_data()->swap(lent.back());
    part = {lent.back()};
  }
  if (!model.SerializeToString(&out.skeleton))
    throw tool_error(exit_write, "internal error: the folded model does not serialize");
  const bool ok = wire::rewrite_model(
      out.skeleton,
      [&](std::size_t k, std::string_view) { return k < data.size() ? data[k] : wire::part{}; },
      out.file);
  if (!ok) throw tool_error(exit_write, "internal error: the serialized model does not re-read");
  // The views of lent bytes stay valid after the guard gives them back: each holds at least
  // splice_min_bytes, on the heap, and swapping std::strings exchanges such buffers, never moves
  // them. So the pieces view the model's own strings (and the aliased input) until it changes.
}

// Gives f the bytes of a part made at write time, piece by piece through `buffer` (reused from
// part to part, so that it stays in the cache). False if the fold fails now: it was checked
// when the pass applied it, so only input bytes that changed under a running tool can do that.
template <class F>
bool make_part(const spliced_model& s, const wire::part& p, std::vector<float>& buffer, F&& f) {
  constexpr std::size_t piece = std::size_t{1} << 16;  // 256 KiB of floats
  if (buffer.size() < piece) buffer.assign(piece, 0.0f);
  const raw_aliases::scaled& d = *s.made[p.key];
  const qfold::scaled_weights w = d.recipe();
  for (std::size_t first = 0; first < d.count; first += piece) {
    const std::size_t n = std::min(piece, d.count - first);
    if (w.values(first, std::span<float>(buffer.data(), n))) return false;
    f(std::string_view(reinterpret_cast<const char*>(buffer.data()), n * sizeof(float)));
  }
  return true;
}
// The file's bytes, in order, to f (what write_model writes).
template <class F>
bool for_each_bytes(const spliced_model& s, F&& f) {
  std::vector<float> buffer;
  for (const wire::part& p : s.file.parts) {
    if (p.made == 0) {
      f(p.bytes);
    } else if (!make_part(s, p, buffer, f)) {
      return false;
    }
  }
  return true;
}

// Writes the model through `out` (a temporary next to the target, renamed over it at the end:
// tools/common/tool_support.hpp) and commits it.
inline std::size_t write_model(
    onnx::ModelProto& model, qfold_tool::atomic_output& out, const raw_aliases* aliases = nullptr,
    qfold_tool::file_writer::mode how = qfold_tool::file_writer::mode::adaptive) {
  spliced_model spliced;
  splice_model(model, aliases, spliced);
  const std::size_t size = spliced.file.size;
  if (size > static_cast<std::size_t>(INT_MAX))
    throw tool_error(exit_write, "the folded model is larger than 2 GiB, protobuf's limit");
  int error = 0;
  bool refold_failed = false;
  {
    // Tensor bytes that are in a file (the input, the spill) are copied by the kernel, never
    // mapped for this; the folded ones are made into a buffer and written from there. Writing
    // the spill's bytes from its mapping instead was faster back to back (ResNet-50 on an AMD
    // EPYC Zen 5: 130 ms against 144) and twice as slow after a pause of seconds (350-400 ms
    // against 175-190). file_writer (tool_support.hpp) goes on through O_DIRECT where the
    // page cache turns out slower than the device.
    qfold_tool::file_writer w(out.fd(), how);
    std::vector<float> buffer;
    for (const wire::part& p : spliced.file.parts) {
      if (w.error() != 0) break;
      if (p.made != 0) {
        if (!make_part(spliced, p, buffer, [&](std::string_view b) { w.put(b, false); })) {
          refold_failed = true;
          break;
        }
        continue;
      }
      int from = -1;
      std::uint64_t offset = 0;
      if (aliases != nullptr && p.bytes.size() >= splice_min_bytes &&
          aliases->locate(p.bytes, from, offset))
        w.put_from(from, offset, p.bytes);
      else
        w.put(p.bytes);
    }
    if (!refold_failed) w.finish();
    error = w.error();
  }
  if (refold_failed)  // the temporary goes with `out`: no partial file
    throw tool_error(exit_write,
                     "a folded tensor no longer folds as it did when it was checked (was the "
                     "input changed while qfold-onnx ran?); nothing written");
  if (error != 0) out.fail(error);
  out.commit();
  return size;
}
inline std::size_t write_model(
    onnx::ModelProto& model, const std::string& path, const raw_aliases* aliases = nullptr,
    qfold_tool::file_writer::mode how = qfold_tool::file_writer::mode::adaptive) {
  qfold_tool::atomic_output out(path);  // checked first: a directory or a device is refused
  return write_model(model, out, aliases, how);
}

inline void check_output(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, not a bad fold: qfold-onnx reports it as such (exit 3)
  } catch (const std::exception& e) {
    throw tool_error(exit_write,
                     std::string("internal error: the folded model fails the ONNX checker (") +
                         e.what() + "); nothing written");
  }
}

// --- Reports ---------------------------------------------------------------------------------
struct run_info {
  std::string input, output;  // output empty for --dry-run
  std::size_t input_bytes = 0;
  std::optional<std::size_t> output_bytes;
};

inline void print_text(std::ostream& os, const fold_result& r, const run_info& info) {
  qfold_tool::print_site_lines(os, r.sites);
  qfold_tool::print_totals(os, r.sites);
  os << "; " << r.batch_norms_after << " of " << r.batch_norms_before
     << " BatchNormalization left\n";
  os << info.input << ": " << info.input_bytes << " bytes";
  if (info.output_bytes) {
    os << " -> " << info.output << ": " << *info.output_bytes << " bytes\n";
  } else {
    os << " (dry run, nothing written)\n";
  }
}

using qfold_tool::json_string;

inline void print_json(std::ostream& os, const fold_result& r, const run_info& info) {
  os << "{\n  \"input\": " << json_string(info.input)
     << ",\n  \"output\": " << (info.output_bytes ? json_string(info.output) : "null")
     << ",\n  \"dry_run\": " << (info.output_bytes ? "false" : "true")
     << ",\n  \"input_bytes\": " << info.input_bytes << ",\n  \"output_bytes\": "
     << (info.output_bytes ? std::to_string(*info.output_bytes) : "null")
     << ",\n  \"folded\": " << r.folded() << ",\n  \"rejected\": " << r.rejected()
     << ",\n  \"bytes_removed\": " << r.bytes_removed()
     << ",\n  \"bytes_added\": " << qfold_tool::count(r.sites).bytes_added
     << ",\n  \"batch_norms_before\": " << r.batch_norms_before
     << ",\n  \"batch_norms_after\": " << r.batch_norms_after << ",\n  \"sites\": ";
  qfold_tool::print_sites_json(os, r.sites);
  os << "\n}\n";
}

}  // namespace qfold_onnx
