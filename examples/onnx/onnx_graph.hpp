// qfold_onnx::graph: the qfold adapter over an ONNX model (onnx::ModelProto, the protobuf classes
// of the ONNX C++ library), as member functions that qfold::ir_traits forwards to.
#pragma once

#include <onnx/onnx_pb.h>
#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <qfold/fold/rejection.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace qfold_onnx {

// The attributes of a Conv or ConvTranspose node with ONNX's defaults filled in.
struct conv_geometry {
  std::int64_t group = 1;
  std::string auto_pad = "NOTSET";                // NOTSET, SAME_UPPER, SAME_LOWER, VALID
  std::vector<std::int64_t> kernel_shape;         // from the attribute, else the weight's dims
  std::vector<std::int64_t> strides, dilations;   // default 1 per spatial axis
  std::optional<std::vector<std::int64_t>> pads;  // begin..., end...; nullopt for SAME_*
  std::vector<std::int64_t> output_padding;       // ConvTranspose only; default 0
};

// Checked size arithmetic on counts that come from a file: nothing from the model is trusted.
namespace checked {
// The product of dims; nullopt (with `why`) for a negative dim or a product beyond SIZE_MAX.
inline std::optional<std::size_t> element_count(std::span<const std::int64_t> dims,
                                                std::string* why = nullptr) {
  std::size_t count = 1;
  for (const std::int64_t d : dims) {
    if (d < 0) {
      if (why != nullptr) *why = "negative dimension " + std::to_string(d);
      return std::nullopt;
    }
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count)) {
      if (why != nullptr) *why = "the product of the dims overflows";
      return std::nullopt;
    }
  }
  return count;
}
inline std::optional<std::size_t> bytes(std::size_t count, std::size_t element) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(count, element, &r)) return std::nullopt;
  return r;
}
}  // namespace checked

// Bytes kept for the life of the process outside the heap: a memory file (memfd) filled with
// write(), read through one shared mapping. The kernel fills the file's pages with the bytes
// themselves, where fresh heap memory would first be zeroed page by page and then copied into;
// for hundreds of megabytes of tensors that zeroing was the largest cost of qfold-onnx. A pass
// that can write its results in place gets room in the mapping instead (lend()), which keep()
// then keeps without copying.
// Every copy is 64-byte aligned. keep() returns a view with data() null when the spill cannot
// be had (not Linux, no memfd, out of space): the caller then stores the bytes itself.
class raw_spill {
 public:
  raw_spill() = default;
  raw_spill(const raw_spill&) = delete;
  raw_spill& operator=(const raw_spill&) = delete;
  ~raw_spill() {
#if defined(__linux__)
    if (base_ != nullptr) ::munmap(base_, reserve);
    if (fd_ >= 0) ::close(fd_);
#endif
  }
  // A copy of `bytes`: in the space of a released copy when one fits (its pages exist: no fresh
  // memory), else at the end. Bytes that are the room lend() gave last are kept where they are.
  std::string_view keep(std::string_view bytes) noexcept {
#if defined(__linux__)
    if (bytes.size() != 0 && lent_size_ == bytes.size() && bytes.data() == base_ + lent_at_) {
      lent_size_ = 0;
      claim(lent_at_, bytes.size());
      return {base_ + lent_at_, bytes.size()};
    }
    std::uint64_t at = 0;
    if (!place(bytes.size(), at)) return {};
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t w =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(at + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return {};
      done += static_cast<std::size_t>(w);
    }
    lent_size_ = 0;  // the room lent may overlap these bytes
    claim(at, bytes.size());
    return {base_ + at, bytes.size()};
#else
    (void)bytes;
    return {};
#endif
  }
  // Writable room for n bytes where keep() would put them, to be filled in place and then given
  // to keep(), which keeps them there (no copy); empty when there is none. Only the last room
  // lent can be kept so, and any other keep() or release() takes it back.
  std::span<char> lend(std::size_t n) noexcept {
#if defined(__linux__)
    lent_size_ = 0;
    std::uint64_t at = 0;
    if (n == 0 || !place(n, at)) return {};
    if (at + n > file_size_) {  // writing through the mapping past the file's end would fault
      if (::ftruncate(fd_, static_cast<off_t>(at + n)) != 0) return {};
      file_size_ = at + n;
    }
    populate(at / 4096 * 4096, at + n);
    lent_at_ = at;
    lent_size_ = n;
    return {base_ + at, n};
#else
    (void)n;
    return {};
#endif
  }
  // Where bytes viewed here are in the memory file (false: not a view of the spill).
  bool locate(std::string_view v, int& fd, std::uint64_t& offset) const noexcept {
#if defined(__linux__)
    if (base_ == nullptr || v.data() < base_ || v.data() + v.size() > base_ + size_) return false;
    fd = fd_;
    offset = static_cast<std::uint64_t>(v.data() - base_);
    return true;
#else
    (void)v, (void)fd, (void)offset;
    return false;
#endif
  }
  // A copy made here is no longer read: its space serves a later keep() (never throws; space
  // that cannot be recorded is only lost).
  void release(std::string_view copy) noexcept {
#if defined(__linux__)
    lent_size_ = 0;
    if (base_ == nullptr || copy.data() < base_ || copy.data() >= base_ + size_ ||
        copy.size() < raw_min_piece)
      return;
    // Kept sorted by offset, neighbours merged (so that a larger copy fits in their space).
    std::uint64_t at = static_cast<std::uint64_t>(copy.data() - base_), len = copy.size();
    auto it = std::lower_bound(free_.begin(), free_.end(), std::make_pair(at, std::uint64_t{0}));
    if (it != free_.begin()) {
      const auto prev = it - 1;
      if ((prev->first + prev->second + 63) / 64 * 64 >= at) {
        len = at + len - prev->first;
        at = prev->first;
        it = free_.erase(prev);
      }
    }
    while (it != free_.end() && it->first <= (at + len + 63) / 64 * 64) {
      len = std::max(at + len, it->first + it->second) - at;
      it = free_.erase(it);
    }
    try {
      free_.insert(it, {at, len});
    } catch (...) {
    }
#else
    (void)copy;
#endif
  }
  // A copy of `bytes`, which are the n bytes of file `from` at `offset`: copied by the kernel
  // from file to file (sendfile) when it can, else as keep(bytes).
  std::string_view keep(std::string_view bytes, int from, std::uint64_t offset) noexcept {
#if defined(__linux__)
    lent_size_ = 0;
    std::uint64_t at = 0;
    if (from >= 0 && room(bytes.size(), at) &&
        ::lseek(fd_, static_cast<off_t>(at), SEEK_SET) == static_cast<off_t>(at)) {
      auto in = static_cast<off_t>(offset);
      std::size_t done = 0;
      while (done < bytes.size()) {
        const ssize_t w = ::sendfile(fd_, from, &in, bytes.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += static_cast<std::size_t>(w);
      }
      if (done == bytes.size()) {
        claim(at, bytes.size());
        return {base_ + at, bytes.size()};
      }
    }
#else
    (void)from;
    (void)offset;
#endif
    return keep(bytes);
  }

 private:
#if defined(__linux__)
  static constexpr std::size_t reserve = sizeof(void*) >= 8 ? std::size_t{1} << 34 : 0;
  static constexpr int populate_write = 23;  // MADV_POPULATE_WRITE (Linux 5.14); older: ignored
  // Maps the pages of [from, to) now, in one call, instead of one fault per page while they are
  // filled. A fresh page costs the kernel more than filling it does (allocation, zeroing, the
  // page cache's locks), and that work scales with cores: a large range is split with a second
  // thread (94 MB: 63 ms alone, 34 ms on two cores of an AMD EPYC Zen 5). Where no thread can be
  // had, one does it all.
  void populate(std::uint64_t from, std::uint64_t to) noexcept {
    constexpr std::uint64_t split_bytes = std::uint64_t{1} << 21;
    const auto range = [this](std::uint64_t a, std::uint64_t b) {
      (void)::madvise(base_ + a, b - a, populate_write);
    };
    std::uint64_t mid = to;
    std::thread other;
    if (to - from >= split_bytes && std::thread::hardware_concurrency() > 1) {
      mid = from + (to - from) / 2 / 4096 * 4096;
      try {
        other = std::thread(range, mid, to);
      } catch (...) {
        mid = to;
      }
    }
    range(from, mid);
    if (other.joinable()) other.join();
  }
  // Where n bytes go: the smallest released space they fit in, else the end (nothing is claimed).
  bool place(std::size_t n, std::uint64_t& at) noexcept {
    if (fd_ >= 0) {
      std::size_t best = free_.size();
      for (std::size_t i = 0; i < free_.size(); ++i)
        if (free_[i].second >= n && (best == free_.size() || free_[i].second < free_[best].second))
          best = i;
      if (best != free_.size()) {
        at = free_[best].first;
        return true;
      }
    }
    return room(n, at);
  }
  // n bytes at `at`, where place() put them, are now in use.
  void claim(std::uint64_t at, std::size_t n) noexcept {
    for (std::size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].first != at) continue;
      const std::uint64_t end = at + free_[i].second;
      const std::uint64_t rest = (at + n + 63) / 64 * 64;
      if (rest + raw_min_piece <= end) {
        free_[i] = {rest, end - rest};
      } else {
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      }
      return;
    }
    size_ = std::max(size_, at + n);
    file_size_ = std::max(file_size_, size_);
  }
  bool room(std::size_t n, std::uint64_t& at) noexcept {
    if (reserve == 0 || failed_) return false;
    if (fd_ < 0) {
      fd_ = ::memfd_create("qfold-onnx-tensors", MFD_CLOEXEC);
      if (fd_ < 0) {
        failed_ = true;
        return false;
      }
      void* p =
          ::mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
      if (p == MAP_FAILED) {
        ::close(fd_);
        fd_ = -1;
        failed_ = true;
        return false;
      }
      base_ = static_cast<char*>(p);
    }
    at = (size_ + 63) / 64 * 64;
    return n <= reserve && at <= reserve - n;
  }
  int fd_ = -1;
  char* base_ = nullptr;
  std::uint64_t size_ = 0, file_size_ = 0;
  std::uint64_t lent_at_ = 0, lent_size_ = 0;  // lend()'s room, while keep() can take it
  bool failed_ = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> free_;  // released (offset, length)
  static constexpr std::size_t raw_min_piece = 4096;
#endif
};

// Tensor bytes kept outside the model. qfold-onnx parses its mapped input without copying large
// raw_data (onnx_tool.hpp, parse_bytes_aliased), and add_constant keeps large folded tensors in
// the spill: such a tensor holds a one-byte placeholder in raw_data (so that the ONNX checker
// sees a data field) and its real bytes are the view here. A view whose data() is null means
// "not aliased (any more)": raw_data holds the bytes. Writing the model (write_model) splices
// the views back in place of the placeholders. Views must stay valid as long as the model.
// A tensor added by add_scaled_constant is not in the map: its raw_data is the placeholder and
// its values are `deferred`, a batch-norm fold made piece by piece as the model is written, or in
// full (then aliased as any other) the first time the adapter reads it.
struct raw_aliases : std::unordered_map<const onnx::TensorProto*, std::string_view> {
  raw_spill spill;
  std::string_view source;  // the mapped file the views may point into, and its descriptor
  int source_fd = -1;
  static constexpr std::size_t min_bytes = 4096;  // smaller data is stored in the model
  // The weights a fold scales (in `source`, which outlives the model, at any alignment) and a
  // copy of everything else it needs.
  struct scaled {
    const std::byte* bytes = nullptr;
    std::size_t count = 0;
    std::vector<std::int64_t> shape;
    qfold::weight_layout layout{};
    std::int64_t groups = 1;
    qfold::weights_kind kind{};
    std::vector<float> scales;
    [[nodiscard]] qfold::scaled_weights recipe() const noexcept {
      return {{qfold::unaligned_values<float>{bytes, count}, shape, layout, groups, kind}, scales};
    }
  };
  std::unordered_map<const onnx::TensorProto*, scaled> deferred;
  // Which file bytes viewed here are in, and where (false: in memory only): the spill or the
  // mapped input.
  bool locate(std::string_view v, int& fd, std::uint64_t& offset) const noexcept {
    if (spill.locate(v, fd, offset)) return true;
    if (source_fd < 0 || v.data() < source.data() ||
        v.data() + v.size() > source.data() + source.size())
      return false;
    fd = source_fd;
    offset = static_cast<std::uint64_t>(v.data() - source.data());
    return true;
  }
};

// A tensor's raw_data bytes, through the aliases when there are any.
inline std::string_view raw_bytes(const onnx::TensorProto& t, const raw_aliases* aliases) {
  if (aliases != nullptr)
    if (const auto it = aliases->find(&t); it != aliases->end() && it->second.data() != nullptr)
      return it->second;
  return t.raw_data();
}
// The size of a tensor's raw_data bytes, made or not.
inline std::size_t raw_size(const onnx::TensorProto& t, const raw_aliases* aliases) {
  if (aliases != nullptr)
    if (const auto d = aliases->deferred.find(&t); d != aliases->deferred.end())
      return d->second.count * sizeof(float);
  return raw_bytes(t, aliases).size();
}

// "(4, 2)" for error messages.
inline std::string dims_string(std::span<const std::int64_t> dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

// Adapts one ONNX model for qfold's passes. How ONNX maps onto qfold's vocabulary:
// - every float32 initializer (not also a graph input, which makes it overridable at run time,
//   and not stored externally) is a constant; so is a Constant node, and an Identity node
//   whose input is a constant: PyTorch exports deduplicated parameters as Identity(initializer),
//   and qfold sees through them (erasing the Identity frees the initializer when nothing else
//   reads it);
// - Conv and ConvTranspose are convolutions (weights OIHW / IOHW, `group`);
// - Gemm is linear when alpha = 1 and its C (if any, then with beta = 1) is one value per output
//   column; with transB = 0 its weight is seen through a transposed view (K, N) -> (N, K);
// - MatMul with a constant rank-2 weight is linear (weight seen transposed); MatMul + Add, when
//   the Add is the MatMul's only reader and adds a constant of shape (N) or (1, N), is one linear
//   node with a bias (reported under the Add's name);
// - BatchNormalization is batch_norm (training when training_mode = 1 or when it has the
//   training outputs); with spatial = 0 (opset 7-8) it is `other`, with a note.
// Anything else maps onto the rest of the vocabulary or `other`. note(n) says why a node that
// looks foldable is not in the vocabulary as such, and refusal(n) gives the reason code when the
// node is invalid (bad dims, empty parameters, impossible attributes).
//
// Trust: nothing read from the model is trusted. Every count, product and offset is checked
// against the data actually present; constant() never hands out a view whose dims disagree with
// its data, nor an empty one. Declared shapes (value_info, graph outputs) are ignored: ranks are
// propagated by this adapter from the graph inputs' types and the constants' own dims through
// the ops whose rank rules it implements (unknown otherwise, and a fold that needs one refuses).
//
// Mutations: each mutation point either does all it says or throws having changed nothing
// (model and adapter); erase() never throws. Node ids index a table built once; commit() removes
// what was erased and places inserted nodes (call it before writing the model; the tool does).
class graph {
 public:
  using node_id = std::int32_t;
  static constexpr node_id none = -1;

  // aliases: the bytes of tensors parsed without their raw_data (see raw_aliases); the adapter
  // reads them and forgets the entries of tensors it erases. They must outlive the adapter.
  explicit graph(onnx::ModelProto& model, raw_aliases* aliases = nullptr)
      : model_(&model), graph_(model.mutable_graph()), aliases_(aliases) {
    build();
  }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;

  // --- Inspection ------------------------------------------------------------------------------
  [[nodiscard]] const std::string& name(node_id n) const { return at(n).name; }
  [[nodiscard]] const std::string& note(node_id n) const { return at(n).note; }
  // Why the node is invalid as this adapter reads it (nullopt: it is not).
  [[nodiscard]] std::optional<qfold::reason> refusal(node_id n) const { return at(n).refusal; }
  [[nodiscard]] const onnx::NodeProto* onnx_node(node_id n) const { return at(n).node; }
  [[nodiscard]] const std::string& op_type(node_id n) const { return at(n).op; }
  [[nodiscard]] bool alive(node_id n) const { return at(n).alive; }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  // A model-level problem (a name defined twice, a read before the definition): nothing is
  // classified as foldable then. Empty when there is none.
  [[nodiscard]] const std::string& model_problem() const noexcept { return malformed_; }
  // BatchNormalization nodes that are not batch_norm in qfold's vocabulary (with a note why).
  [[nodiscard]] std::vector<node_id> unrecognised_batch_norms() const {
    std::vector<node_id> r;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].alive && entries_[i].op == "BatchNormalization" &&
          entries_[i].kind != qfold::op_kind::batch_norm)
        r.push_back(static_cast<node_id>(i));
    return r;
  }
  // Conv / ConvTranspose attributes with ONNX defaults; nullopt for any other node.
  [[nodiscard]] std::optional<conv_geometry> geometry(node_id n) const {
    const entry& e = at(n);
    if (e.node == nullptr || (e.op != "Conv" && e.op != "ConvTranspose")) return std::nullopt;
    return geometry_of(*e.node, weight_dims(*e.node));
  }
  // The rank this adapter derived for a value name (nullopt: unknown).
  [[nodiscard]] std::optional<std::size_t> rank_of(const std::string& name) const {
    const auto it = ranks_.find(name);
    return it == ranks_.end() ? std::nullopt : std::optional<std::size_t>(it->second);
  }

  // Why a tensor's contents cannot be read as they claim (empty: they can): a negative dim, a
  // product that overflows, data of another length than the dims say, several or no data
  // fields where data is due, external or segmented data, an unknown type.
  static std::string tensor_problem(const onnx::TensorProto& t,
                                    const raw_aliases* aliases = nullptr) {
    const std::span<const std::int64_t> dims(t.dims().data(),
                                             static_cast<std::size_t>(t.dims_size()));
    std::string why;
    const auto count = checked::element_count(dims, &why);
    if (!count) return "dims " + dims_string(dims) + ": " + why;
    if (t.has_segment()) return "segmented tensor data is not supported";
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return "external data";
    const std::size_t element = element_size(t.data_type());
    if (element == 0) return "unknown data type " + std::to_string(t.data_type());
    const auto bytes = checked::bytes(*count, element);
    if (!bytes) return "dims " + dims_string(dims) + ": the byte size overflows";
    // (field name, values present, values per element)
    const std::pair<const char*, std::size_t> fields[] = {
        {"float_data", static_cast<std::size_t>(t.float_data_size())},
        {"int32_data", static_cast<std::size_t>(t.int32_data_size())},
        {"int64_data", static_cast<std::size_t>(t.int64_data_size())},
        {"double_data", static_cast<std::size_t>(t.double_data_size())},
        {"uint64_data", static_cast<std::size_t>(t.uint64_data_size())},
        {"string_data", static_cast<std::size_t>(t.string_data_size())},
    };
    int present = t.has_raw_data() ? 1 : 0;
    for (const auto& f : fields) present += f.second != 0 ? 1 : 0;
    if (present > 1) return "more than one data field";
    if (t.has_raw_data()) {
      if (t.data_type() == onnx::TensorProto::STRING) return "raw_data in a string tensor";
      const std::size_t raw = raw_size(t, aliases);
      if (raw != *bytes)
        return "raw_data holds " + std::to_string(raw) + " bytes, dims " + dims_string(dims) +
               " need " + std::to_string(*bytes);
      return {};
    }
    const char* field = typed_field(t.data_type());
    std::size_t have = 0;
    for (const auto& f : fields)
      if (std::string_view(f.first) == field) have = f.second;
    const std::size_t per = t.data_type() == onnx::TensorProto::COMPLEX64 ||
                                    t.data_type() == onnx::TensorProto::COMPLEX128
                                ? 2
                                : 1;
    const auto want = checked::bytes(*count, per);
    if (!want) return "dims " + dims_string(dims) + ": the element count overflows";
    if (present == 1 && have == 0) return "data in a field that does not match its type";
    if (have != *want)
      return std::string(field) + " holds " + std::to_string(have) + " values, dims " +
             dims_string(dims) + " need " + std::to_string(*want);
    return {};
  }

  // Why a Conv / ConvTranspose cannot be what it says (empty: it can). `weight` is its weight's
  // dims when known. ONNX requires positive strides, dilations, kernel sizes and group, pads >= 0,
  // a weight of rank >= 3 whose channels the group divides, and one value per spatial axis.
  static std::string conv_problem(const onnx::NodeProto& n,
                                  const std::optional<std::vector<std::int64_t>>& weight) {
    const bool t = n.op_type() == "ConvTranspose";
    if (n.input_size() < 2 || n.input(0).empty() || n.input(1).empty())
      return "without its input and weight";
    if (n.output_size() < 1 || n.output(0).empty()) return "without an output";
    const std::int64_t group = attr_int(n, "group", 1);
    if (group < 1) return "group " + std::to_string(group) + " is not positive";
    std::optional<std::size_t> spatial;
    if (weight) {
      if (weight->size() < 3)
        return "weight of rank " + std::to_string(weight->size()) + " (needs 3 or more)";
      for (const std::int64_t d : *weight)
        if (d < 1) return "weight dims " + dims_string(*weight) + " are not all positive";
      if (!t && (*weight)[0] % group != 0)
        return "group " + std::to_string(group) + " does not divide the " +
               std::to_string((*weight)[0]) + " output channels";
      if (t && (*weight)[0] % group != 0)
        return "group " + std::to_string(group) + " does not divide the " +
               std::to_string((*weight)[0]) + " input channels";
      spatial = weight->size() - 2;
    }
    const auto check = [&](const char* key, std::size_t per_axis, std::int64_t min) -> std::string {
      const auto* a = attr(n, key);
      if (a == nullptr) return {};
      if (a->type() != onnx::AttributeProto::INTS) return std::string(key) + " is not a list";
      for (const std::int64_t v : a->ints())
        if (v < min)
          return std::string(key) + " value " + std::to_string(v) + " is below " +
                 std::to_string(min);
      if (spatial && static_cast<std::size_t>(a->ints_size()) != per_axis)
        return std::string(key) + " has " + std::to_string(a->ints_size()) + " values for " +
               std::to_string(*spatial) + " spatial axes";
      return {};
    };
    const std::size_t s = spatial.value_or(0);
    for (const auto& [key, per, min] :
         {std::tuple<const char*, std::size_t, std::int64_t>{"strides", s, 1},
          {"dilations", s, 1},
          {"kernel_shape", s, 1},
          {"pads", 2 * s, 0},
          {"output_padding", s, 0},
          {"output_shape", s, 1}})
      if (auto why = check(key, per, min); !why.empty()) return why;
    if (weight) {
      const auto k = attr_ints(n, "kernel_shape");
      if (!k.empty() && !std::equal(k.begin(), k.end(), weight->begin() + 2))
        return "kernel_shape " + dims_string(k) + " differs from the weight's " +
               dims_string(std::span(*weight).subspan(2));
    }
    const std::string pad = attr_string(n, "auto_pad", "NOTSET");
    if (pad != "NOTSET" && pad != "VALID" && pad != "SAME_UPPER" && pad != "SAME_LOWER")
      return "auto_pad '" + pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER";
    return {};
  }

  // Removes what was erased from the ONNX model and places inserted nodes; idempotent. The
  // value_info of values that went away goes too, and nothing else: a model nothing was done to
  // stays byte for byte as it was.
  void commit() {
    auto* nodes = graph_->mutable_node();
    std::unordered_set<const onnx::NodeProto*> dead;
    for (const entry& e : entries_)
      if (!e.alive &&
          (e.src == source::node || e.src == source::identity || e.src == source::constant_node))
        for (const onnx::NodeProto* p : {e.node, e.matmul})
          if (p != nullptr) dead.insert(p);
    std::unordered_map<const onnx::NodeProto*, std::vector<onnx::NodeProto*>> after;
    for (auto& [anchor, n] : pending_) after[anchor].push_back(n.get());
    std::vector<onnx::NodeProto*> old(static_cast<std::size_t>(nodes->size()));
    nodes->Reserve(nodes->size() + static_cast<int>(pending_.size()));
    // From here on nothing allocates but the order vector, built before the model changes.
    std::vector<onnx::NodeProto*> order;
    order.reserve(old.size() + pending_.size());
    for (int i = 0; i < nodes->size(); ++i) old[static_cast<std::size_t>(i)] = nodes->Mutable(i);
    std::vector<onnx::NodeProto*> stack;
    for (onnx::NodeProto* n : old) {
      stack.push_back(n);
      while (!stack.empty()) {
        onnx::NodeProto* m = stack.back();
        stack.pop_back();
        order.push_back(m);
        if (const auto more = after.find(m); more != after.end())
          for (auto it = more->second.rbegin(); it != more->second.rend(); ++it)
            stack.push_back(*it);
      }
    }
    {  // a node whose anchor went (never expected) still goes into the graph, at the end
      std::unordered_set<const onnx::NodeProto*> placed(order.begin(), order.end());
      for (auto& [anchor, n] : pending_)
        if (!placed.contains(n.get())) order.push_back(n.get());
    }
    std::vector<onnx::NodeProto*> released(old.size());
    nodes->ExtractSubrange(0, nodes->size(), released.data());
    for (auto& [anchor, n] : pending_) (void)n.release();  // owned by `order` now
    pending_.clear();
    for (onnx::NodeProto* n : order) {
      if (dead.contains(n)) {
        delete n;
      } else {
        nodes->AddAllocated(n);
      }
    }
    for (entry& e : entries_)
      if (!e.alive && e.node != nullptr && dead.contains(e.node)) e.node = e.matmul = nullptr;
    auto* infos = graph_->mutable_value_info();
    int keep = 0;
    for (int i = 0; i < infos->size(); ++i)
      if (!gone_.contains(infos->Get(i).name()) || values_.contains(infos->Get(i).name()))
        infos->SwapElements(i, keep++);
    infos->DeleteSubrange(keep, infos->size() - keep);
    gone_.clear();
  }

  // --- The qfold adapter (see qfold/graph/traits.hpp) -------------------------------------------
  [[nodiscard]] std::vector<node_id> nodes() const {
    std::vector<node_id> r;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].alive && !entries_[i].hidden) r.push_back(static_cast<node_id>(i));
    std::ranges::stable_sort(r, {}, [&](node_id n) { return at(n).order; });
    return r;
  }
  [[nodiscard]] qfold::op_kind kind(node_id n) const { return at(n).kind; }
  [[nodiscard]] std::span<const node_id> operands(node_id n) const { return at(n).operands; }
  [[nodiscard]] std::size_t use_count(node_id n) const {  // allocates nothing (erase uses it)
    const entry& e = at(n);
    if (e.src == source::view) return use_count(e.base);
    const auto of = [&](const std::string& v) -> std::size_t {
      const auto it = values_.find(v);
      return it == values_.end() ? 0 : it->second.readers + it->second.outputs;
    };
    if (e.src == source::initializer || e.src == source::input) return of(e.name);
    if (e.node == nullptr) return 0;
    std::size_t count = 0;
    for (const std::string& v : e.node->output()) count += of(v);
    return count;
  }
  // A float32 constant's data and dims; nullopt unless n is a constant whose dims match its
  // data exactly and which holds at least one element (qfold's folds read an empty span as
  // "ones" or "zeros": an empty tensor must never reach them).
  [[nodiscard]] std::optional<qfold::tensor_view<float>> constant(node_id n) const {
    const entry& e = at(n);
    if (!e.alive || e.kind != qfold::op_kind::constant) return std::nullopt;
    switch (e.src) {
      case source::identity:
        return constant(e.base);
      case source::view: {
        if (!e.view_ready) {
          const auto base = constant(e.base);
          if (!base || base->shape.size() != 2) return std::nullopt;
          // constant() checked rows * cols == data.size() without wrap.
          const auto rows = static_cast<std::size_t>(base->shape[0]),
                     cols = static_cast<std::size_t>(base->shape[1]);
          std::vector<float> t(rows * cols);
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = base->data[r * cols + c];
          e.view_data = std::move(t);
          e.view_shape = {base->shape[1], base->shape[0]};
          e.view_ready = true;
        }
        return qfold::tensor_view<float>{e.view_data, e.view_shape};
      }
      default:
        return float_view(e);
    }
  }
  // A float32 initializer's values where they lie, at any alignment: a tensor parsed as an alias
  // of the input file (parse_bytes_aliased) is read in place, without the aligned copy constant()
  // makes of misaligned bytes (the batch-norm pass reads a weight once, as it folds it). nullopt
  // for anything else: the pass then reads constant().
  [[nodiscard]] std::optional<qfold::unaligned_tensor_view> unaligned_constant(node_id n) const {
    const entry& e = at(n);
    if (!e.alive || e.kind != qfold::op_kind::constant) return std::nullopt;
    if (e.src == source::identity) return unaligned_constant(e.base);
    if constexpr (std::endian::native != std::endian::little) return std::nullopt;
    if (e.src != source::initializer || e.tensor == nullptr || aliases_ == nullptr)
      return std::nullopt;
    const onnx::TensorProto& t = *e.tensor;
    const auto it = aliases_->find(&t);
    if (it == aliases_->end() || it->second.data() == nullptr ||
        t.data_type() != onnx::TensorProto::FLOAT || !tensor_problem(t, aliases_).empty())
      return std::nullopt;
    // tensor_problem checked that the bytes are exactly the dims' count of floats.
    return qfold::unaligned_tensor_view{
        {reinterpret_cast<const std::byte*>(it->second.data()), it->second.size() / sizeof(float)},
        {t.dims().data(), static_cast<std::size_t>(t.dims_size())}};
  }
  [[nodiscard]] qfold::conv_attributes conv_attributes(node_id n) const { return at(n).conv; }
  [[nodiscard]] qfold::batch_norm_attributes batch_norm_attributes(node_id n) const {
    return at(n).bn;
  }
  // Rank of the node's (first) output as this adapter derives it; 0 when unknown. Gemm is rank
  // 2 by definition; MatMul (+ Add) from the propagated rank of its input, never from declared
  // shapes.
  [[nodiscard]] std::size_t output_rank(node_id n) const {
    const entry& e = at(n);
    if (e.linear == linear_form::gemm) return 2;
    if (e.linear == linear_form::matmul || e.linear == linear_form::matmul_add) {
      // MatMul (A, B) with B of rank 2 has A's rank (rank 1 A: rank 1); + a bias of rank <= 2.
      if (e.matmul == nullptr || e.matmul->input_size() < 1) return 0;
      const auto a = rank_of(e.matmul->input(0));
      if (!a || *a == 0) return 0;
      std::size_t rank = *a;
      if (e.linear == linear_form::matmul_add && e.bias_slot >= 0 &&
          e.bias_slot < e.node->input_size()) {
        const auto b = rank_of(e.node->input(e.bias_slot));
        if (!b) return 0;
        rank = std::max(rank, *b);
      }
      return rank;
    }
    const auto outs = outputs_of(e);
    if (outs.empty()) return 0;
    return rank_of(outs.front()).value_or(0);
  }

  // Test hook: the k-th journalled step from now on throws std::bad_alloc (every mutation point
  // must then leave the model and the adapter exactly as they were). nullopt: off.
  void inject_failure_after(std::optional<std::size_t> steps) noexcept { inject_ = steps; }

  // Room for the values of the next add_constant of `count` floats (qfold's optional point): in
  // the spill, where add_constant would keep them, so that a pass folding into it is not followed
  // by a copy of its results. Empty where add_constant would not use the spill (small tensors, no
  // spill, big-endian hosts): the pass then folds into its own buffer.
  std::span<float> constant_storage(std::size_t count) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      const auto bytes = checked::bytes(count, sizeof(float));
      if (aliases_ != nullptr && bytes && *bytes >= raw_aliases::min_bytes)
        if (const auto room = aliases_->spill.lend(*bytes); room.data() != nullptr)
          return {reinterpret_cast<float*>(room.data()), count};
    }
    return {};
  }

  node_id add_constant(std::span<const float> data, std::span<const std::int64_t> shape) {
    std::string why;
    const auto count = checked::element_count(shape, &why);
    if (!count) throw std::invalid_argument("qfold_onnx: add_constant: " + why);
    if (*count != data.size())
      throw std::invalid_argument("qfold_onnx: add_constant: dims " + dims_string(shape) +
                                  " do not match " + std::to_string(data.size()) + " values");
    journal j(*this);
    auto t = float_initializer(shape);
    const std::size_t bytes = data.size_bytes();
    // Large data goes to the aliases' spill when there is one (no fresh heap memory).
    std::string_view kept;
    if constexpr (std::endian::native == std::endian::little)
      if (aliases_ != nullptr && bytes >= raw_aliases::min_bytes)
        kept = aliases_->spill.keep(
            std::string_view(reinterpret_cast<const char*>(data.data()), bytes));
    if (kept.data() != nullptr) {
      t->set_raw_data(std::string(1, '\0'));  // the placeholder
    } else {
      // Reuse the storage of an erased initializer when one fits (the pass erases a site's old
      // weights right after adding its new ones): fresh memory is costly (a page fault per 4 KiB).
      std::size_t best = pool_.size();
      for (std::size_t i = 0; i < pool_.size(); ++i)
        if (pool_[i].capacity() >= bytes && pool_[i].capacity() <= 2 * bytes &&
            (best == pool_.size() || pool_[i].capacity() < pool_[best].capacity()))
          best = i;
      if (best != pool_.size()) {
        std::string storage = std::move(pool_[best]);
        pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(best));
        storage.resize(bytes);  // within capacity: no allocation
        if (bytes != 0) std::memcpy(storage.data(), data.data(), bytes);
        t->mutable_raw_data()->swap(storage);
      } else {
        t->set_raw_data(data.data(), bytes);
      }
      if constexpr (std::endian::native == std::endian::big)
        byteswap_floats(*t->mutable_raw_data());
    }
    if (kept.data() != nullptr) {
      const onnx::TensorProto* key = t.get();
      j.step([&] { aliases_->emplace(key, kept); }, [this, key] { aliases_->erase(key); });
    }
    return add_initializer(j, std::move(t), shape.size());
  }

  // A constant of the values a batch-norm fold gives, made when the model is written (qfold's
  // optional point; write_model folds it piece by piece as it writes it, constant() makes it in
  // full). Only for weights in the mapped input, which outlives the model: any other storage may
  // be freed or reused once the pass erases the weights it replaces; and only for a fold that is
  // whole (values() of no value checks the shape and the scales). nullopt otherwise: the pass
  // then folds into storage.
  std::optional<node_id> add_scaled_constant(const qfold::scaled_weights& w) {
    if constexpr (std::endian::native != std::endian::little) return std::nullopt;
    const qfold::weights_view<float>& v = w.weights;
    const auto* at =
        v.values.empty() ? v.unaligned.bytes : reinterpret_cast<const std::byte*>(v.values.data());
    const auto bytes = checked::bytes(v.size(), sizeof(float));
    if (aliases_ == nullptr || at == nullptr || !bytes || *bytes < raw_aliases::min_bytes ||
        !within(aliases_->source, at, *bytes) || w.values(0, {}))
      return std::nullopt;
    raw_aliases::scaled d{at,       v.size(), {v.shape.begin(), v.shape.end()},  v.layout,
                          v.groups, v.kind,   {w.scales.begin(), w.scales.end()}};
    journal j(*this);
    auto t = float_initializer(d.shape);
    t->set_raw_data(std::string(1, '\0'));  // the placeholder
    const onnx::TensorProto* key = t.get();
    const std::size_t rank = d.shape.size();
    j.step([&] { aliases_->deferred.emplace(key, std::move(d)); },
           [this, key] { aliases_->deferred.erase(key); });
    return add_initializer(j, std::move(t), rank);
  }

  // Operand i of n becomes v (i == operand count appends). For a Gemm with transB = 0 or a
  // MatMul, operand 1 is the weight seen as (N, K): a new (N, K) constant is stored as the IR
  // wants it, and the transposed view the adapter made of the original weight restores it.
  void set_operand(node_id n, std::size_t i, node_id v) {
    valid(n);
    valid(v);
    entry& e = mut(n);
    if (!e.alive || e.node == nullptr)
      throw std::logic_error("qfold_onnx: set_operand on a non-node");
    if (i > e.operands.size()) throw std::out_of_range("qfold_onnx: operand index");
    const entry& ve = at(v);
    if (!ve.alive) throw std::logic_error("qfold_onnx: set_operand to an erased node");
    const bool matmul = e.linear == linear_form::matmul || e.linear == linear_form::matmul_add;
    const bool gemm_view = e.linear == linear_form::gemm && i == 1 && e.gemm_view != none;
    const bool to_view = ve.src == source::view;
    if (to_view && !((matmul && i == 1 && v == e.weight_view) || (gemm_view && v == e.gemm_view)))
      throw std::logic_error("qfold_onnx: a transposed view can only restore its own weight");
    // The physical (node, input) slot; -1: appended.
    onnx::NodeProto* target = e.node;
    int slot = -1;
    if (matmul && i < 2) {
      target = e.matmul;
      slot = static_cast<int>(i);
    } else if (matmul && i == 2) {
      slot = e.bias_slot;  // -1 for a MatMul without Add
    } else {
      slot = physical_slot(*e.node, i);
    }
    const bool appended = i == e.operands.size();
    if (!appended && (slot < 0 || slot >= target->input_size()))
      throw std::logic_error("qfold_onnx: operand without an input slot");
    if (matmul && i == 1 && !to_view) {  // the new (N, K) weight must be a rank-2 constant
      const auto view = constant(v);
      if (!view || view->shape.size() != 2)
        throw std::invalid_argument("qfold_onnx: a MatMul weight must be a rank-2 float constant");
    }
    journal j(*this);
    node_id operand = v;
    std::string name;
    if (to_view) {
      name = output_name(ve.base);
    } else {
      const std::string role = i == 1 ? "weight" : i == 2 ? "bias" : "operand";
      rename_fresh(j, v, appended || slot < 0 ? e.name + "." + role : target->input(slot));
      if (matmul && i == 1) operand = transposed_copy(j, v);
      name = output_name(operand);
    }
    if (e.linear == linear_form::gemm && i == 1) {
      if (to_view) {
        restore_attr(j, *e.node, "transB", e.gemm_trans_b);
      } else if (gemm_view) {
        set_attr(j, *e.node, "transB", int_attr("transB", 1));  // the new weight is (N, K)
      }
    }
    append_record rec;
    rec.operand = i;
    if (matmul && i == 2 && appended) {
      append_matmul_bias(j, n, name);
      rec.made_add = true;
    } else if (appended) {
      int k = target->input_size();  // fill trailing empty (absent) optional inputs first
      while (k > 0 && target->input(k - 1).empty()) --k;
      rec.slot = k;
      std::string in = name;
      if (k < target->input_size()) {
        rec.filled = true;
        j.step([&] { target->mutable_input(k)->swap(in); },
               [target, k] { target->mutable_input(k)->clear(); });
      } else {
        j.step([&] { target->add_input()->swap(in); },
               [target] { target->mutable_input()->RemoveLast(); });
      }
      if (e.linear == linear_form::gemm) {  // C was absent: beta becomes 1
        rec.beta = snapshot(*e.node, "beta");
        rec.has_beta = true;
        set_attr(j, *e.node, "beta", float_attr("beta", 1.0f));
      }
    } else {
      const std::string old = target->input(slot);
      std::string in = name;
      j.step([&] { target->mutable_input(slot)->swap(in); },
             [target, slot, keep = std::string(old)]() mutable {
               target->mutable_input(slot)->swap(keep);
             });
      drop_reader(j, old);
    }
    add_reader(j, name);
    if (appended) {
      auto shared = std::make_shared<const append_record>(std::move(rec));
      j.step([&] { e.appends.push_back(shared); }, [&e] { e.appends.pop_back(); });
      j.step([&] { e.operands.push_back(operand); }, [&e] { e.operands.pop_back(); });
    } else {
      const node_id previous = e.operands[i];
      j.step([&] { e.operands[i] = operand; }, [&e, i, previous] { e.operands[i] = previous; });
    }
    j.done();
  }

  // n loses its last operand: the undo of an append by set_operand(n, operand count, v) (the
  // input slot becomes absent again, a bias Add made for a MatMul goes, Gemm's beta is as it
  // was). An operand the ONNX node needs (a MatMul + Add's bias) cannot be removed.
  void remove_last_operand(node_id n) {
    valid(n);
    entry& e = mut(n);
    if (!e.alive || e.node == nullptr)
      throw std::logic_error("qfold_onnx: remove_last_operand on a non-node");
    if (e.operands.empty()) throw std::logic_error("qfold_onnx: no operand to remove");
    const std::size_t i = e.operands.size() - 1;
    const bool matmul = e.linear == linear_form::matmul || e.linear == linear_form::matmul_add;
    const bool ours = !e.appends.empty() && e.appends.back()->operand == i;
    const auto held = ours ? e.appends.back() : std::make_shared<const append_record>();
    const append_record& rec = *held;
    if (matmul && i < 2) throw std::logic_error("qfold_onnx: a MatMul keeps both its inputs");
    if (matmul && !(ours && rec.made_add))
      throw std::logic_error("qfold_onnx: the bias of a MatMul + Add cannot be removed");
    int slot = ours ? rec.slot : physical_slot(*e.node, i);
    if (!rec.made_add && (slot < 0 || slot >= e.node->input_size()))
      throw std::logic_error("qfold_onnx: operand without an input slot");
    journal j(*this);
    if (rec.made_add) {
      remove_matmul_bias(j, n);
    } else {
      onnx::NodeProto* target = e.node;
      const std::string old = target->input(slot);
      const bool last = slot == target->input_size() - 1 && !(ours && rec.filled);
      if (last) {
        std::string keep = old;
        j.step([&] { target->mutable_input()->RemoveLast(); },
               [target, keep]() mutable { target->add_input()->swap(keep); });
      } else {
        std::string keep = old;
        j.step([&] { target->mutable_input(slot)->clear(); },
               [target, slot, keep]() mutable { target->mutable_input(slot)->swap(keep); });
      }
      drop_reader(j, old);
      if (ours && rec.has_beta) restore_attr(j, *e.node, "beta", rec.beta);
    }
    if (ours) j.step([&] { e.appends.pop_back(); }, [&e, held] { e.appends.push_back(held); });
    const node_id last_operand = e.operands.back();
    j.step([&] { e.operands.pop_back(); },
           [&e, last_operand] { e.operands.push_back(last_operand); });
    j.done();
  }

  // Every reader of old's output (graph outputs included) reads v's output instead. When old is
  // v's only reader, v's output takes old's name (so graph outputs and value_info stay as they
  // were); otherwise an Identity forwards it. Refused (thrown, nothing changed) for a node
  // without an output, or a v that is not a node with an output.
  void replace_uses(node_id old, node_id v) {
    valid(old);
    valid(v);
    if (old == v) return;
    entry& o = mut(old);
    if (!o.alive || o.node == nullptr || o.node->output_size() == 0 || o.node->output(0).empty())
      throw std::logic_error("qfold_onnx: replace_uses of a node without outputs");
    if (!at(v).alive) throw std::logic_error("qfold_onnx: replace_uses by an erased node");
    const std::string target = o.node->output(0);
    const std::string from = output_name(v);  // throws for a node without an output
    if (!values_.contains(from) || !values_.contains(target))
      throw std::logic_error("qfold_onnx: replace_uses of an unknown value");
    const std::size_t reads_by_old =
        static_cast<std::size_t>(std::ranges::count(o.node->input(), from));
    journal j(*this);
    const std::string dead = fresh_name(target + "_qfold_replaced");
    j.step([&] { names_.insert(dead); }, [this, dead] { names_.erase(dead); });
    {
      std::string out = dead;
      onnx::NodeProto* node = o.node;
      j.step([&] { node->mutable_output(0)->swap(out); },
             [node, keep = target]() mutable { node->mutable_output(0)->swap(keep); });
    }
    const value moved = values_.at(target);
    j.step([&] { values_.emplace(dead, value{old, 0, 0}); }, [this, dead] { values_.erase(dead); });
    const auto retarget = [&](node_id producer) {  // target's readers stay; its producer changes
      j.step([&] { values_.at(target).producer = producer; },
             [this, target, moved] { values_.at(target) = moved; });
    };
    const value fv = values_.at(from);
    if (fv.readers == reads_by_old && fv.outputs == 0 && at(v).src == source::node) {
      entry& ve = mut(v);
      {
        std::string out = target;
        onnx::NodeProto* node = ve.node;
        j.step([&] { node->mutable_output(0)->swap(out); },
               [node, keep = from]() mutable { node->mutable_output(0)->swap(keep); });
      }
      retarget(v);
      // `from` stays as an alias with old's reads so that erase(old) balances; it has no producer
      // left in the model and goes away with old.
      j.step([&] { values_.at(from).producer = none; },
             [this, from, fv] { values_.at(from) = fv; });
      move_rank(j, from, target);
      j.done();
      return;
    }
    const std::string id_name = fresh_name(target + "_qfold_identity");
    j.step([&] { names_.insert(id_name); }, [this, id_name] { names_.erase(id_name); });
    auto id = std::make_unique<onnx::NodeProto>();
    id->set_op_type("Identity");
    id->set_name(id_name);
    id->add_input(from);
    id->add_output(target);
    entry e;
    e.kind = qfold::op_kind::view;
    e.src = source::node;
    e.node = id.get();
    e.op = "Identity";
    e.name = id_name;
    e.order = o.order + 1;
    e.operands = {v};
    j.step([&] { entries_.push_back(std::move(e)); }, [this] { entries_.pop_back(); });
    const auto nid = static_cast<node_id>(entries_.size() - 1);
    add_reader(j, from);
    retarget(nid);
    move_rank(j, from, target);
    const onnx::NodeProto* anchor = o.node;
    j.step([&] { pending_.emplace_back(anchor, std::move(id)); }, [this] { pending_.pop_back(); });
    j.done();
  }

  // Erases n when nothing reads it; never throws: a node it cannot erase (read, a graph input,
  // already erased, an unknown id) is left alone.
  void erase(node_id n) noexcept {
    if (n < 0 || static_cast<std::size_t>(n) >= entries_.size()) return;
    entry& e = entries_[static_cast<std::size_t>(n)];
    if (!e.alive || e.src == source::input || use_count(n) != 0) return;
    e.alive = false;
    switch (e.src) {
      case source::initializer: {
        forget(e.name);
        auto* inits = graph_->mutable_initializer();
        for (int k = 0; k < inits->size(); ++k)
          if (inits->Mutable(k) == e.tensor) {
            // Storage for add_constant; keeping it is an optimisation only.
            if (aliases_ != nullptr) {  // no throw (pointer hash)
              if (const auto a = aliases_->find(e.tensor); a != aliases_->end()) {
                aliases_->spill.release(a->second);
                aliases_->erase(a);
              }
              aliases_->deferred.erase(e.tensor);
            }
            if (e.tensor->raw_data().size() >= pool_min_bytes && pool_.size() < pool_.capacity()) {
              pool_.emplace_back();  // within capacity: no allocation
              pool_.back().swap(*e.tensor->mutable_raw_data());
            }
            inits->DeleteSubrange(k, 1);
            break;
          }
        e.tensor = nullptr;
        return;
      }
      case source::input:
        return;
      case source::view:
        if (at(e.base).alive && use_count(e.base) == 0 && is_constant_like(e.base)) erase(e.base);
        return;
      case source::node:
      case source::identity:
      case source::constant_node:
        break;
    }
    if (e.inner != none) entries_[static_cast<std::size_t>(e.inner)].alive = false;
    onnx::NodeProto* const parts[2] = {e.node, e.matmul == e.node ? nullptr : e.matmul};
    for (onnx::NodeProto* node : parts) {
      if (node == nullptr) continue;
      const bool add_of_matmul = node == e.node && parts[1] != nullptr;
      for (const std::string& in : node->input())
        if (!in.empty() && !(add_of_matmul && parts[1]->output_size() > 0 &&
                             in == parts[1]->output(0)))  // the product is internal
          drop_reader_noexcept(in);
      for (const std::string& out : node->output()) {
        const auto it = values_.find(out);
        if (it != values_.end() && it->second.producer == n && it->second.readers == 0 &&
            it->second.outputs == 0)
          forget(out);
      }
    }
    for (onnx::NodeProto* node : parts)  // a node the adapter added is gone at once
      if (node != nullptr && kill_pending(node)) {
        if (e.node == node) e.node = nullptr;
        if (e.matmul == node) e.matmul = nullptr;
      }
    for (const std::string& in : e.implicit) drop_reader_noexcept(in);
    if (e.src == source::identity && at(e.base).alive && use_count(e.base) == 0 &&
        is_constant_like(e.base))
      erase(e.base);
  }

  // Bytes that erasing n frees (an Identity or a view frees its initializer when they are its
  // only reader).
  [[nodiscard]] std::size_t constant_bytes(node_id n) const {
    const entry& e = at(n);
    switch (e.src) {
      case source::initializer:
        return e.tensor != nullptr ? tensor_bytes(*e.tensor, aliases_) : 0;
      case source::constant_node:
        return e.tensor != nullptr ? tensor_bytes(*e.tensor, aliases_)
                                   : e.scalar.size() * sizeof(float);
      case source::identity: {
        if (e.node == nullptr || e.node->input_size() < 1) return 0;
        const auto it = values_.find(e.node->input(0));
        const bool sole = it != values_.end() && it->second.readers == 1 && it->second.outputs == 0;
        return sole ? constant_bytes(e.base) : 0;
      }
      case source::view:
        return use_count(e.base) == 0 ? constant_bytes(e.base) : 0;
      default:
        return 0;
    }
  }

 private:
  enum class source : std::uint8_t { initializer, input, node, identity, constant_node, view };
  enum class linear_form : std::uint8_t { none, gemm, matmul, matmul_add };

  // An attribute as it was: nullopt when absent.
  using attr_snapshot = std::optional<onnx::AttributeProto>;
  // What set_operand did when it appended an operand, for remove_last_operand.
  struct append_record {
    std::size_t operand = 0;
    int slot = -1;
    bool filled = false;    // an empty (absent) input slot was filled, not added
    bool made_add = false;  // a MatMul got a bias Add
    bool has_beta = false;
    attr_snapshot beta;
  };

  struct entry {
    qfold::op_kind kind = qfold::op_kind::other;
    source src = source::node;
    std::string op;                        // ONNX op type (nodes)
    std::string name;                      // for reports
    std::string note;                      // why a foldable-looking node is not in the vocabulary
    std::optional<qfold::reason> refusal;  // the node is invalid (note says how)
    onnx::TensorProto* tensor = nullptr;   // initializer, or a Constant node's `value`
    onnx::NodeProto* node = nullptr;       // the node (the Add of a MatMul + Add)
    onnx::NodeProto* matmul = nullptr;     // linear_form::matmul / matmul_add
    linear_form linear = linear_form::none;
    int bias_slot = -1;          // matmul_add: the Add's input holding the bias
    node_id base = none;         // identity, view: what they look through
    node_id inner = none;        // matmul_add: the hidden MatMul entry
    node_id weight_view = none;  // matmul: the view of the original B
    node_id gemm_view = none;    // gemm with transB = 0: the view of the original B
    attr_snapshot gemm_trans_b;  // gemm: transB as the model had it
    std::vector<node_id> operands;
    std::vector<std::shared_ptr<const append_record>> appends;
    std::vector<std::string> implicit;  // outer names read inside subgraphs
    qfold::conv_attributes conv{};
    qfold::batch_norm_attributes bn{};
    std::vector<std::int64_t> shape;  // Constant value_float(s)
    std::vector<float> scalar;        // Constant value_float(s)
    std::int64_t order = 0;           // producers first
    bool alive = true;
    bool hidden = false;  // a MatMul inside a MatMul + Add linear node
    mutable bool view_ready = false;
    mutable std::vector<float> view_data;
    mutable std::vector<std::int64_t> view_shape;
  };
  struct value {
    node_id producer = none;
    std::size_t readers = 0;  // input slots of live nodes (and reads inside subgraphs)
    std::size_t outputs = 0;  // graph outputs naming it
  };

  // Undo journal of one mutation point: each step registers its inverse (which must not throw)
  // before it runs; a step that throws has changed nothing itself; leaving the scope without
  // done() runs the inverses newest first.
  class journal {
   public:
    explicit journal(graph& g) : g_(g) { undo_.reserve(16); }
    journal(const journal&) = delete;
    journal& operator=(const journal&) = delete;
    ~journal() {
      if (!done_)
        for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)->run();
    }
    template <class Do, class Undo>
    void step(Do&& d, Undo&& u) {
      auto inverse = std::make_unique<undo_fn<std::decay_t<Undo>>>(std::forward<Undo>(u));
      undo_.push_back(std::move(inverse));
      try {
        if (g_.inject_ && (*g_.inject_)-- == 0) {
          g_.inject_.reset();
          throw std::bad_alloc();
        }
        d();
      } catch (...) {
        undo_.pop_back();
        throw;
      }
    }
    void done() noexcept { done_ = true; }

   private:
    struct undo_base {
      virtual ~undo_base() = default;
      virtual void run() noexcept = 0;
    };
    template <class F>
    struct undo_fn final : undo_base {
      F f;
      explicit undo_fn(F&& x) : f(std::move(x)) {}
      void run() noexcept override { f(); }
    };
    graph& g_;
    std::vector<std::unique_ptr<undo_base>> undo_;
    bool done_ = false;
  };

  // Whether the n bytes at p lie in `in` (addresses compared as integers).
  static bool within(std::string_view in, const std::byte* p, std::size_t n) noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p),
               s = reinterpret_cast<std::uintptr_t>(in.data());
    return in.data() != nullptr && a >= s && a - s <= in.size() && n <= in.size() - (a - s);
  }
  // A new float initializer of these dims, with a fresh name and no data yet.
  std::unique_ptr<onnx::TensorProto> float_initializer(std::span<const std::int64_t> dims) {
    auto t = std::make_unique<onnx::TensorProto>();
    t->set_name(fresh_name("qfold_folded"));
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (const std::int64_t d : dims) t->add_dims(d);
    return t;
  }
  // Adds t, its data in place, as a constant (the steps after the data's own, in j).
  node_id add_initializer(journal& j, std::unique_ptr<onnx::TensorProto> t, std::size_t rank) {
    const std::string name = t->name();
    entry e;
    e.kind = qfold::op_kind::constant;
    e.src = source::initializer;
    e.tensor = t.get();
    e.name = name;
    auto* inits = graph_->mutable_initializer();
    j.step([&] { inits->Reserve(inits->size() + 1); }, [] {});
    j.step([&] { names_.insert(name); }, [this, name] { names_.erase(name); });
    j.step([&] { entries_.push_back(std::move(e)); }, [this] { entries_.pop_back(); });
    const auto id = static_cast<node_id>(entries_.size() - 1);
    j.step([&] { values_.emplace(name, value{id, 0, 0}); }, [this, name] { values_.erase(name); });
    j.step([&] { ranks_.emplace(name, rank); }, [this, name] { ranks_.erase(name); });
    j.step([&] { inits->AddAllocated(t.release()); }, [inits] { inits->RemoveLast(); });
    j.done();
    return id;
  }
  void valid(node_id n) const {
    if (n < 0 || static_cast<std::size_t>(n) >= entries_.size())
      throw std::out_of_range("qfold_onnx: unknown node id " + std::to_string(n));
  }
  [[nodiscard]] const entry& at(node_id n) const {
    valid(n);
    return entries_[static_cast<std::size_t>(n)];
  }
  entry& mut(node_id n) {
    valid(n);
    return entries_[static_cast<std::size_t>(n)];
  }
  node_id push(entry e) {
    entries_.push_back(std::move(e));
    return static_cast<node_id>(entries_.size() - 1);
  }

  // --- Attributes ------------------------------------------------------------------------------
  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, std::string_view key) {
    for (const auto& a : n.attribute())
      if (a.name() == key) return &a;
    return nullptr;
  }
  static std::int64_t attr_int(const onnx::NodeProto& n, std::string_view key, std::int64_t d) {
    const auto* a = attr(n, key);
    return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : d;
  }
  static float attr_float(const onnx::NodeProto& n, std::string_view key, float d) {
    const auto* a = attr(n, key);
    return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : d;
  }
  static std::string attr_string(const onnx::NodeProto& n, std::string_view key, std::string d) {
    const auto* a = attr(n, key);
    return a != nullptr && a->type() == onnx::AttributeProto::STRING ? a->s() : d;
  }
  static std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, std::string_view key) {
    const auto* a = attr(n, key);
    if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return {};
    return {a->ints().begin(), a->ints().end()};
  }
  static attr_snapshot snapshot(const onnx::NodeProto& n, std::string_view key) {
    const auto* a = attr(n, key);
    return a == nullptr ? attr_snapshot{} : attr_snapshot{*a};
  }
  static onnx::AttributeProto int_attr(const char* key, std::int64_t v) {
    onnx::AttributeProto a;
    a.set_name(key);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
  }
  static onnx::AttributeProto float_attr(const char* key, float v) {
    onnx::AttributeProto a;
    a.set_name(key);
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(v);
    return a;
  }
  // The attribute `key` of n becomes `value` (replaced in place, or appended), journalled.
  void set_attr(journal& j, onnx::NodeProto& n, std::string_view key, onnx::AttributeProto to) {
    auto* attrs = n.mutable_attribute();
    for (int k = 0; k < attrs->size(); ++k)
      if (attrs->Get(k).name() == key) {
        auto* a = attrs->Mutable(k);
        auto keep = std::make_shared<onnx::AttributeProto>(std::move(to));
        j.step([&] { a->Swap(keep.get()); }, [a, keep] { a->Swap(keep.get()); });
        return;
      }
    auto fresh = std::make_unique<onnx::AttributeProto>(std::move(to));
    j.step([&] { attrs->Reserve(attrs->size() + 1); }, [] {});
    j.step([&] { attrs->AddAllocated(fresh.release()); }, [attrs] { attrs->RemoveLast(); });
  }
  // The attribute `key` of n as the snapshot had it (removed when it was absent), journalled.
  void restore_attr(journal& j, onnx::NodeProto& n, std::string_view key,
                    const attr_snapshot& was) {
    if (was) {
      set_attr(j, n, key, *was);
      return;
    }
    auto* attrs = n.mutable_attribute();
    for (int k = 0; k < attrs->size(); ++k)
      if (attrs->Get(k).name() == key) {
        // Move it to the end, then release it: undo puts it back where it was.
        auto held = std::make_shared<std::unique_ptr<onnx::AttributeProto>>();
        j.step([&] { attrs->Reserve(attrs->size() + 1); }, [] {});
        const int last = attrs->size() - 1;
        j.step(
            [&] {
              for (int m = k; m < last; ++m) attrs->SwapElements(m, m + 1);
              held->reset(attrs->ReleaseLast());
            },
            [attrs, held, k, last] {
              attrs->AddAllocated(held->release());
              for (int m = last; m > k; --m) attrs->SwapElements(m, m - 1);
            });
        return;
      }
  }

  // --- Tensors ---------------------------------------------------------------------------------
  // Bytes per element; 0 for an unknown type (and for strings, which have no fixed size).
  static std::size_t element_size(std::int32_t type) {
    using T = onnx::TensorProto;
    switch (type) {
      case T::FLOAT:
      case T::INT32:
      case T::UINT32:
        return 4;
      case T::DOUBLE:
      case T::INT64:
      case T::UINT64:
      case T::COMPLEX64:
        return 8;
      case T::COMPLEX128:
        return 16;
      case T::FLOAT16:
      case T::BFLOAT16:
      case T::INT16:
      case T::UINT16:
        return 2;
      case T::INT8:
      case T::UINT8:
      case T::BOOL:
        return 1;
      case T::STRING:
        return 1;  // raw_data is refused for strings; string_data counts elements
      default:
        return 0;
    }
  }
  // The typed field that holds a type's values when raw_data is not used.
  static const char* typed_field(std::int32_t type) {
    using T = onnx::TensorProto;
    switch (type) {
      case T::FLOAT:
      case T::COMPLEX64:
        return "float_data";
      case T::DOUBLE:
      case T::COMPLEX128:
        return "double_data";
      case T::INT64:
        return "int64_data";
      case T::UINT32:
      case T::UINT64:
        return "uint64_data";
      case T::STRING:
        return "string_data";
      default:
        return "int32_data";
    }
  }
  static std::size_t tensor_bytes(const onnx::TensorProto& t, const raw_aliases* aliases) {
    if (!tensor_problem(t, aliases).empty()) return 0;
    if (t.has_raw_data()) return raw_size(t, aliases);
    const std::span<const std::int64_t> dims(t.dims().data(),
                                             static_cast<std::size_t>(t.dims_size()));
    return checked::bytes(*checked::element_count(dims), element_size(t.data_type())).value_or(0);
  }
  static void byteswap_floats(std::string& raw) {
    for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
      std::swap(raw[i], raw[i + 3]);
      std::swap(raw[i + 1], raw[i + 2]);
    }
  }
  // A float32 tensor's data in place (raw_data or float_data); nullopt for other types, external
  // data, dims that disagree with the data (checked without wrap), or no element at all.
  static std::optional<qfold::tensor_view<float>> float_tensor(const onnx::TensorProto& t,
                                                               const raw_aliases* aliases) {
    if (t.data_type() != onnx::TensorProto::FLOAT || !tensor_problem(t, aliases).empty())
      return std::nullopt;
    const std::span<const std::int64_t> shape(t.dims().data(),
                                              static_cast<std::size_t>(t.dims_size()));
    const std::size_t count = *checked::element_count(shape);
    if (count == 0) return std::nullopt;
    if (t.has_raw_data()) {
      if constexpr (std::endian::native != std::endian::little) return std::nullopt;
      const std::string_view raw = raw_bytes(t, aliases);
      if (raw.size() != count * sizeof(float) ||  // a fold not made yet: only its placeholder
          reinterpret_cast<std::uintptr_t>(raw.data()) % alignof(float) != 0)
        return std::nullopt;
      // The string's storage holds float objects: memcpy into it created them implicitly
      // (C++20 implicit object creation), so this reads them without a copy.
      return qfold::tensor_view<float>{
          std::span<const float>(reinterpret_cast<const float*>(raw.data()), count), shape};
    }
    return qfold::tensor_view<float>{std::span<const float>(t.float_data().data(), count), shape};
  }
  [[nodiscard]] std::optional<qfold::tensor_view<float>> float_view(const entry& e) const {
    if (e.tensor != nullptr) {
      make_deferred(*e.tensor);
      align_alias(*e.tensor);
      return float_tensor(*e.tensor, aliases_);
    }
    if (e.src == source::constant_node && !e.scalar.empty())
      return qfold::tensor_view<float>{e.scalar, e.shape};
    return std::nullopt;
  }
  // A fold deferred by add_scaled_constant is made in full the first time its values are read:
  // in the spill (then aliased), else in its own raw_data. Never throws: where it cannot be made,
  // it stays deferred (and float_tensor refuses its placeholder).
  void make_deferred(const onnx::TensorProto& t) const noexcept {
    if (aliases_ == nullptr) return;
    const auto it = aliases_->deferred.find(&t);
    if (it == aliases_->deferred.end()) return;
    const raw_aliases::scaled& d = it->second;
    const std::size_t bytes = d.count * sizeof(float);
    try {
      if (const auto room = aliases_->spill.lend(bytes); room.data() != nullptr) {
        if (d.recipe().values(0, {reinterpret_cast<float*>(room.data()), d.count})) return;
        const std::string_view kept = aliases_->spill.keep({room.data(), bytes});
        if (kept.data() == nullptr) return;
        aliases_->emplace(&t, kept);  // may throw: the space is only lost
      } else {
        std::string raw(bytes, '\0');
        if (d.recipe().values(0, {reinterpret_cast<float*>(raw.data()), d.count})) return;
        const_cast<onnx::TensorProto&>(t).mutable_raw_data()->swap(raw);  // the adapter's own
      }
      aliases_->deferred.erase(it);
    } catch (...) {
    }
  }
  // A tensor aliased to bytes not aligned for a float (the input file's, read in place) is given
  // an aligned copy the first time it is read as floats: in the spill (the alias then views it),
  // else in its own raw_data. Never throws: where no copy can be had, it stays as it is (and
  // float_tensor refuses it, as for any misaligned data).
  void align_alias(const onnx::TensorProto& t) const noexcept {
    if (aliases_ == nullptr) return;
    const auto it = aliases_->find(&t);
    if (it == aliases_->end() || it->second.data() == nullptr ||
        reinterpret_cast<std::uintptr_t>(it->second.data()) % alignof(float) == 0)
      return;
    const std::string_view raw = it->second;
    int fd = -1;
    std::uint64_t offset = 0;
    const std::string_view copy = aliases_->locate(raw, fd, offset)
                                      ? aliases_->spill.keep(raw, fd, offset)
                                      : aliases_->spill.keep(raw);
    if (copy.data() != nullptr) {
      it->second = copy;
      return;
    }
    try {  // the adapter's own tensor (constant() is const only towards passes)
      const_cast<onnx::TensorProto&>(t).set_raw_data(raw.data(), raw.size());
      it->second = {};
    } catch (...) {
    }
  }
  // The TensorProto behind a constant-like entry (initializer, Constant, Identity of those).
  [[nodiscard]] const onnx::TensorProto* tensor_of(node_id n) const {
    if (n == none) return nullptr;
    const entry& e = at(n);
    if (e.src == source::identity) return tensor_of(e.base);
    return e.src == source::initializer || e.src == source::constant_node ? e.tensor : nullptr;
  }
  // A constant's dims, only when they agree with its data.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> constant_shape(node_id n) const {
    if (n == none) return std::nullopt;
    const entry& e = at(n);
    if (e.kind != qfold::op_kind::constant) return std::nullopt;
    if (e.src == source::identity) return constant_shape(e.base);
    if (e.tensor != nullptr) {
      if (!tensor_problem(*e.tensor, aliases_).empty()) return std::nullopt;
      return std::vector<std::int64_t>(e.tensor->dims().begin(), e.tensor->dims().end());
    }
    if (e.src == source::constant_node) return e.shape;
    return std::nullopt;
  }
  [[nodiscard]] bool is_constant_like(node_id n) const {
    const source s = at(n).src;
    return s == source::initializer || s == source::identity || s == source::constant_node;
  }
  // The dims of a Conv's weight when it is a constant with consistent data.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> weight_dims(
      const onnx::NodeProto& n) const {
    if (n.input_size() < 2 || n.input(1).empty()) return std::nullopt;
    const onnx::TensorProto* t = tensor_of(value_producer(n.input(1)));
    if (t == nullptr || !tensor_problem(*t, aliases_).empty()) return std::nullopt;
    return std::vector<std::int64_t>(t->dims().begin(), t->dims().end());
  }
  static conv_geometry geometry_of(const onnx::NodeProto& node,
                                   const std::optional<std::vector<std::int64_t>>& weight) {
    conv_geometry c;
    c.group = attr_int(node, "group", 1);
    c.auto_pad = attr_string(node, "auto_pad", "NOTSET");
    c.kernel_shape = attr_ints(node, "kernel_shape");
    std::size_t spatial = c.kernel_shape.size();
    if (c.kernel_shape.empty() && weight && weight->size() > 2) {
      c.kernel_shape.assign(weight->begin() + 2, weight->end());
      spatial = c.kernel_shape.size();
    }
    const auto fill = [&](const char* key, std::int64_t dflt, std::size_t count) {
      auto v = attr_ints(node, key);
      if (v.empty()) v.assign(count, dflt);
      return v;
    };
    c.strides = fill("strides", 1, spatial);
    c.dilations = fill("dilations", 1, spatial);
    if (node.op_type() == "ConvTranspose") c.output_padding = fill("output_padding", 0, spatial);
    if (c.auto_pad == "VALID") {
      c.pads = std::vector<std::int64_t>(2 * spatial, 0);
    } else if (c.auto_pad == "NOTSET") {
      c.pads = fill("pads", 0, 2 * spatial);
    }  // SAME_UPPER / SAME_LOWER: pads depend on the input's shape
    return c;
  }

  // --- Values ----------------------------------------------------------------------------------
  [[nodiscard]] node_id value_producer(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? none : it->second.producer;
  }
  [[nodiscard]] std::vector<std::string> outputs_of(const entry& e) const {
    switch (e.src) {
      case source::initializer:
      case source::input:
        return {e.name};
      case source::view:
        return {};
      default:
        if (e.node == nullptr) return {};
        return {e.node->output().begin(), e.node->output().end()};
    }
  }
  [[nodiscard]] std::string output_name(node_id v) const {
    const entry& e = at(v);
    if (e.src == source::initializer || e.src == source::input) return e.name;
    if (e.node == nullptr || e.node->output_size() == 0 || e.node->output(0).empty())
      throw std::logic_error("qfold_onnx: node without an output");
    return e.node->output(0);
  }
  // A name no value, node or initializer of the model has (not reserved: see names_).
  [[nodiscard]] std::string fresh_name(const std::string& base) const {
    std::string name = base;
    for (std::size_t k = 1; names_.contains(name); ++k) name = base + "_" + std::to_string(k);
    return name;
  }
  void forget(const std::string& name) noexcept {
    values_.erase(name);
    try {
      gone_.insert(name);
    } catch (...) {  // only value_info cleanup is lost: a stale entry, never a wrong graph
    }
  }
  // Removes key from a map or set, journalled: the undo puts the same node back (no allocation,
  // and no rehash: the container held it before, with the same buckets).
  template <class C>
  void take(journal& j, C& c, const std::string& key) {
    if (!c.contains(key)) return;
    auto held = std::make_shared<typename C::node_type>();
    j.step([&] { *held = c.extract(key); }, [&c, held] { c.insert(std::move(*held)); });
  }
  void add_reader(journal& j, const std::string& name) {
    j.step([&] { ++values_.at(name).readers; }, [this, name] { --values_.at(name).readers; });
  }
  void drop_reader(journal& j, const std::string& name) {
    const auto it = values_.find(name);
    if (it == values_.end() || it->second.readers == 0) return;
    const value was = it->second;
    if (was.readers == 1 && was.outputs == 0 && was.producer == none) {
      take(j, values_, name);
    } else {
      j.step([&] { --values_.at(name).readers; }, [this, name] { ++values_.at(name).readers; });
    }
  }
  void drop_reader_noexcept(const std::string& name) noexcept {
    const auto it = values_.find(name);
    if (it == values_.end() || it->second.readers == 0) return;
    if (--it->second.readers == 0 && it->second.outputs == 0 && it->second.producer == none)
      forget(name);
  }
  // `to` gets from's rank (or none), journalled.
  void move_rank(journal& j, const std::string& from, const std::string& to) {
    const auto r = rank_of(from);
    if (!r) return take(j, ranks_, to);
    if (const auto was = rank_of(to)) {
      j.step([&] { ranks_.at(to) = *r; }, [this, to, w = *was] { ranks_.at(to) = w; });
    } else {
      j.step([&] { ranks_.emplace(to, *r); }, [this, to] { ranks_.erase(to); });
    }
  }
  // A constant the pass just made (no reader yet) takes a readable name after what it replaces.
  void rename_fresh(journal& j, node_id v, const std::string& base) {
    entry& c = mut(v);
    if (c.src != source::initializer || c.tensor == nullptr || !c.name.starts_with("qfold_folded"))
      return;
    const auto it = values_.find(c.name);
    if (it == values_.end() || it->second.readers != 0) return;
    const std::string old = c.name;
    const std::string name = fresh_name((base.empty() ? std::string("qfold") : base) + "_bnfold");
    const value moved = it->second;
    j.step([&] { names_.insert(name); }, [this, name] { names_.erase(name); });
    j.step([&] { values_.emplace(name, moved); }, [this, name] { values_.erase(name); });
    std::string n1 = name, n2 = name;
    onnx::TensorProto* t = c.tensor;
    j.step([&] { t->mutable_name()->swap(n1); },
           [t, keep = old]() mutable { t->mutable_name()->swap(keep); });
    j.step([&] { c.name.swap(n2); }, [&c, keep = old]() mutable { c.name.swap(keep); });
    take(j, values_, old);
    const auto r = rank_of(old);
    if (r) j.step([&] { ranks_[name] = *r; }, [this, name] { ranks_.erase(name); });
  }
  // Constant v (N, K) stored transposed as (K, N) for a MatMul: v itself, rewritten, when it has
  // no reader yet (made by the pass for this), else a new constant.
  node_id transposed_copy(journal& j, node_id v) {
    const auto view = constant(v);  // checked by the caller: rank 2, dims match the data
    const auto rows = static_cast<std::size_t>(view->shape[0]),
               cols = static_cast<std::size_t>(view->shape[1]);
    std::string t(rows * cols * sizeof(float), '\0');
    std::vector<float> tv(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) tv[c * rows + r] = view->data[r * cols + c];
    std::memcpy(t.data(), tv.data(), t.size());
    if constexpr (std::endian::native == std::endian::big) byteswap_floats(t);
    const std::int64_t shape[2] = {view->shape[1], view->shape[0]};
    entry& e = mut(v);
    const auto it = values_.find(e.name);
    if (e.src == source::initializer && e.tensor != nullptr && it != values_.end() &&
        it->second.readers == 0 && e.tensor->has_raw_data()) {
      onnx::TensorProto* tensor = e.tensor;
      const std::int64_t d0 = tensor->dims(0), d1 = tensor->dims(1);
      auto keep = std::make_shared<std::string>(std::move(t));
      // An aliased tensor's view is switched off (raw_data then holds the bytes) and back: the
      // entry exists already, so neither direction allocates.
      std::string_view* alias = nullptr;
      if (aliases_ != nullptr)
        if (const auto a = aliases_->find(tensor); a != aliases_->end()) alias = &a->second;
      const std::string_view old_alias = alias != nullptr ? *alias : std::string_view();
      j.step(
          [&] {
            tensor->mutable_raw_data()->swap(*keep);
            tensor->set_dims(0, shape[0]);
            tensor->set_dims(1, shape[1]);
            if (alias != nullptr) *alias = std::string_view();
          },
          [tensor, keep, d0, d1, alias, old_alias] {
            tensor->mutable_raw_data()->swap(*keep);
            tensor->set_dims(0, d0);
            tensor->set_dims(1, d1);
            if (alias != nullptr) *alias = old_alias;
          });
      return v;
    }
    // add_constant is all or nothing itself; its undo is registered before it runs.
    auto copy = std::make_shared<node_id>(none);
    j.step([&] { *copy = add_constant(tv, shape); }, [this, copy] { erase(*copy); });
    return *copy;
  }
  node_id make_view(node_id base) {
    entry e;
    e.kind = qfold::op_kind::constant;
    e.src = source::view;
    e.base = base;
    e.name = at(base).name + " (transposed)";
    e.order = at(base).order;
    return push(std::move(e));
  }
  bool kill_pending(onnx::NodeProto* node) noexcept {
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->second.get() == node) {
        pending_.erase(it);  // moves unique_ptrs: no throw
        return true;
      }
    return false;
  }
  // MatMul without a bias gets an Add after it, and becomes MatMul + Add.
  void append_matmul_bias(journal& j, node_id n, const std::string& bias) {
    entry& e = mut(n);
    if (e.matmul->output_size() < 1) throw std::logic_error("qfold_onnx: MatMul without output");
    const std::string out = e.matmul->output(0);
    const std::string product = fresh_name(out + "_qfold_matmul");
    j.step([&] { names_.insert(product); }, [this, product] { names_.erase(product); });
    const std::string add_name = fresh_name(e.name + "_bias");
    j.step([&] { names_.insert(add_name); }, [this, add_name] { names_.erase(add_name); });
    auto add = std::make_unique<onnx::NodeProto>();
    add->set_op_type("Add");
    add->set_name(add_name);
    add->add_input(product);
    add->add_input(bias);
    add->add_output(out);
    const value v = values_.at(out);
    j.step(
        [&] {
          values_.emplace(product, value{v.producer, 1, 0});
        },
        [this, product] { values_.erase(product); });
    move_rank(j, out, product);
    onnx::NodeProto* mm = e.matmul;
    std::string p = product;
    j.step([&] { mm->mutable_output(0)->swap(p); },
           [mm, keep = out]() mutable { mm->mutable_output(0)->swap(keep); });
    onnx::NodeProto* raw = add.get();
    j.step([&] { pending_.emplace_back(mm, std::move(add)); }, [this] { pending_.pop_back(); });
    switch_matmul_form(j, e, mm, raw, true);
  }
  // The undo of append_matmul_bias.
  void remove_matmul_bias(journal& j, node_id n) {
    entry& e = mut(n);
    onnx::NodeProto* add = e.node;
    onnx::NodeProto* mm = e.matmul;
    if (add == mm || add->output_size() < 1 || add->input_size() < 2 || mm->output_size() < 1)
      throw std::logic_error("qfold_onnx: no bias Add to remove");
    const std::string out = add->output(0), product = mm->output(0), bias = add->input(1);
    std::unique_ptr<onnx::NodeProto>* owned = nullptr;
    std::size_t index = 0;
    for (std::size_t k = 0; k < pending_.size(); ++k)
      if (pending_[k].second.get() == add) {
        owned = &pending_[k].second;
        index = k;
      }
    if (owned == nullptr) throw std::logic_error("qfold_onnx: the bias Add is not the adapter's");
    drop_reader(j, bias);
    {
      std::string o = out;
      j.step([&] { mm->mutable_output(0)->swap(o); },
             [mm, keep = product]() mutable { mm->mutable_output(0)->swap(keep); });
    }
    take(j, values_, product);
    move_rank(j, product, out);
    take(j, names_, product);
    auto held =
        std::make_shared<std::pair<const onnx::NodeProto*, std::unique_ptr<onnx::NodeProto>>>();
    j.step(
        [&] {
          *held = std::move(pending_[index]);
          pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
        },
        [this, held, index] {
          pending_.insert(pending_.begin() + static_cast<std::ptrdiff_t>(index), std::move(*held));
        });
    switch_matmul_form(j, e, mm, add, false);
  }
  // The last journalled step of append_matmul_bias (to_add) and of its undo remove_matmul_bias:
  // e becomes the MatMul + Add form (node add, op "Add", bias operand 1) when to_add, else the
  // MatMul form (node mm, op "MatMul", no bias slot); the inverse switches back. Both strings are
  // made before the step, so neither the step nor its inverse allocates.
  static void switch_matmul_form(journal& j, entry& e, onnx::NodeProto* mm, onnx::NodeProto* add,
                                 bool to_add) {
    const auto set = [&e, mm, add](bool with_add, std::string& op) noexcept {
      e.node = with_add ? add : mm;
      e.op.swap(op);
      e.linear = with_add ? linear_form::matmul_add : linear_form::matmul;
      e.bias_slot = with_add ? 1 : -1;
    };
    std::string op = to_add ? "Add" : "MatMul";
    j.step([&] { set(to_add, op); },
           [set, to_add, keep = std::string(to_add ? "MatMul" : "Add")]() mutable {
             set(!to_add, keep);
           });
  }
  // Operand i of a plain node is its i-th non-empty input.
  static int physical_slot(const onnx::NodeProto& n, std::size_t i) {
    std::size_t seen = 0;
    for (int k = 0; k < n.input_size(); ++k) {
      if (n.input(k).empty()) continue;
      if (seen++ == i) return k;
    }
    return -1;  // append
  }

  // Names read inside a subgraph that it does not define (reads of the outer scope).
  static void outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string> defined,
                          std::vector<std::string>& reads, int depth = 0) {
    if (depth > 64) return;  // protobuf's own nesting limit is lower
    for (const auto& i : g.input()) defined.insert(i.name());
    for (const auto& i : g.initializer()) defined.insert(i.name());
    for (const auto& n : g.node()) {
      for (const auto& in : n.input())
        if (!in.empty() && !defined.contains(in)) reads.push_back(in);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) outer_reads(a.g(), defined, reads, depth + 1);
        for (const auto& sub : a.graphs()) outer_reads(sub, defined, reads, depth + 1);
      }
      for (const auto& out : n.output()) defined.insert(out);
    }
    for (const auto& o : g.output())
      if (!defined.contains(o.name())) reads.push_back(o.name());
  }
  static void collect_names(const onnx::GraphProto& g, std::unordered_set<std::string>& names,
                            int depth = 0) {
    if (depth > 64) return;
    for (const auto& i : g.input()) names.insert(i.name());
    for (const auto& i : g.initializer()) names.insert(i.name());
    for (const auto& n : g.node()) {
      names.insert(n.name());
      for (const auto& o : n.output()) names.insert(o);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_names(a.g(), names, depth + 1);
        for (const auto& sub : a.graphs()) collect_names(sub, names, depth + 1);
      }
    }
  }

  // --- Building --------------------------------------------------------------------------------
  static bool default_domain(const onnx::NodeProto& n) {
    return n.domain().empty() || n.domain() == "ai.onnx";
  }
  void malformed(const std::string& why) {
    if (malformed_.empty()) malformed_ = why;
  }

  void build() {
    pool_.reserve(64);
    collect_names(*graph_, names_);
    std::unordered_set<std::string> defined;
    const auto define = [&](const std::string& name) {
      if (name.empty()) return;
      if (!defined.insert(name).second) malformed("the graph defines '" + name + "' twice");
    };
    std::unordered_set<std::string> inputs;
    for (const auto& v : graph_->input()) {
      if (!inputs.insert(v.name()).second) malformed("the graph defines '" + v.name() + "' twice");
    }
    for (auto& t : *graph_->mutable_initializer()) {
      define(t.name());
      entry e;
      e.tensor = &t;
      e.name = t.name();
      if (inputs.contains(t.name())) {
        e.kind = qfold::op_kind::input;
        e.src = source::input;
        e.note = "initializer is also a graph input (overridable at run time)";
        inputs.erase(t.name());
      } else {
        e.kind = qfold::op_kind::constant;
        e.src = source::initializer;
      }
      values_[t.name()] = value{push(std::move(e)), 0, 0};
    }
    for (const auto& v : graph_->input()) {
      if (!inputs.contains(v.name())) continue;
      define(v.name());
      entry e;
      e.kind = qfold::op_kind::input;
      e.src = source::input;
      e.name = v.name();
      values_[v.name()] = value{push(std::move(e)), 0, 0};
    }
    std::unordered_set<std::string> read_early;  // read before any definition (outer scope?)
    const auto producer_of = [&](const std::string& name) {
      if (auto it = values_.find(name); it != values_.end()) return it->second.producer;
      entry e;  // read but never defined here (an outer scope): a run-time input
      e.kind = qfold::op_kind::input;
      e.src = source::input;
      e.name = name;
      const node_id id = push(std::move(e));
      values_[name] = value{id, 0, 0};
      read_early.insert(name);
      return id;
    };
    std::int64_t position = 0;
    for (auto& node : *graph_->mutable_node()) {
      entry e;
      e.node = &node;
      e.op = node.op_type();
      e.name = node.name().empty()
                   ? (node.output_size() > 0 && !node.output(0).empty() ? node.output(0)
                                                                        : node.op_type())
                   : node.name();
      e.order = 2 * ++position;
      for (const auto& in : node.input())
        if (!in.empty()) {
          e.operands.push_back(producer_of(in));
          ++values_.at(in).readers;
        }
      for (const auto& a : node.attribute()) {
        if (a.has_g()) outer_reads(a.g(), {}, e.implicit);
        for (const auto& sub : a.graphs()) outer_reads(sub, {}, e.implicit);
      }
      for (const auto& in : e.implicit) {
        producer_of(in);
        ++values_.at(in).readers;
      }
      const node_id id = push(std::move(e));
      for (const auto& out : node.output()) {
        if (out.empty()) continue;
        if (read_early.contains(out)) malformed("'" + out + "' is read before it is defined");
        define(out);
        if (const auto it = values_.find(out); it != values_.end()) {
          it->second.producer = id;  // malformed anyway; keep the counts
        } else {
          values_[out] = value{id, 0, 0};
        }
      }
    }
    for (const auto& o : graph_->output()) {
      producer_of(o.name());
      ++values_.at(o.name()).outputs;
    }
    propagate_ranks();
    if (!malformed_.empty()) {  // fail closed: nothing is foldable
      for (entry& e : entries_)
        if (e.op == "BatchNormalization") {
          e.note = malformed_;
          e.refusal = qfold::reason::invalid_shape;
        }
      return;
    }
    // Classify in graph order (an Identity's input is classified before it).
    const std::size_t count = entries_.size();
    for (std::size_t i = 0; i < count; ++i)
      if (entries_[i].src == source::node) classify(static_cast<node_id>(i));
  }

  // Ranks from what can be checked: graph inputs' declared types (the model's interface, which
  // runtimes enforce), the constants' own dims, and the rank rules of the ops below. value_info
  // and graph output types are never read. A value defined twice has no rank.
  void propagate_ranks() {
    std::int64_t opset = 0;
    for (const auto& o : model_->opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    for (const auto& v : graph_->input())
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
        ranks_[v.name()] = static_cast<std::size_t>(v.type().tensor_type().shape().dim_size());
    for (const auto& t : graph_->initializer()) {
      const auto it = ranks_.find(t.name());
      if (!tensor_problem(t, aliases_).empty() ||
          (it != ranks_.end() && it->second != static_cast<std::size_t>(t.dims_size()))) {
        ranks_.erase(t.name());
        continue;
      }
      ranks_[t.name()] = static_cast<std::size_t>(t.dims_size());
    }
    static const std::unordered_set<std::string_view> same = {"Abs",
                                                              "Acos",
                                                              "Asin",
                                                              "Atan",
                                                              "AveragePool",
                                                              "BatchNormalization",
                                                              "Cast",
                                                              "CastLike",
                                                              "Ceil",
                                                              "Celu",
                                                              "Clip",
                                                              "Conv",
                                                              "ConvTranspose",
                                                              "Cos",
                                                              "Cosh",
                                                              "DequantizeLinear",
                                                              "Dropout",
                                                              "Elu",
                                                              "Erf",
                                                              "Exp",
                                                              "Floor",
                                                              "GlobalAveragePool",
                                                              "GlobalLpPool",
                                                              "GlobalMaxPool",
                                                              "HardSigmoid",
                                                              "HardSwish",
                                                              "Hardmax",
                                                              "Identity",
                                                              "InstanceNormalization",
                                                              "IsInf",
                                                              "IsNaN",
                                                              "LRN",
                                                              "LayerNormalization",
                                                              "LeakyRelu",
                                                              "Log",
                                                              "LogSoftmax",
                                                              "LpNormalization",
                                                              "LpPool",
                                                              "MaxPool",
                                                              "MeanVarianceNormalization",
                                                              "Mish",
                                                              "Neg",
                                                              "Not",
                                                              "PRelu",
                                                              "QuantizeLinear",
                                                              "Reciprocal",
                                                              "Relu",
                                                              "Round",
                                                              "Selu",
                                                              "Shrink",
                                                              "Sigmoid",
                                                              "Sign",
                                                              "Sin",
                                                              "Sinh",
                                                              "Softmax",
                                                              "Softplus",
                                                              "Softsign",
                                                              "Sqrt",
                                                              "Tan",
                                                              "Tanh",
                                                              "ThresholdedRelu",
                                                              "Transpose",
                                                              "Concat"};
    static const std::unordered_set<std::string_view> broadcast = {
        "Add",  "And",         "BitShift", "Div",  "Equal", "Greater", "GreaterOrEqual",
        "Less", "LessOrEqual", "Max",      "Mean", "Min",   "Mod",     "Mul",
        "Or",   "Pow",         "Sub",      "Sum",  "Where", "Xor"};
    const auto known = [&](const std::string& name) { return rank_of(name); };
    const auto const_len = [&](const std::string& name) -> std::optional<std::size_t> {
      // A constant int64 vector's length (its own dims, checked against its data).
      // Nodes are not classified yet: an initializer, or a Constant node's `value`.
      const onnx::TensorProto* t = nullptr;
      const node_id p = value_producer(name);
      if (p == none) return std::nullopt;
      const entry& pe = at(p);
      if (pe.src == source::initializer) {
        t = pe.tensor;
      } else if (pe.src == source::node && pe.node != nullptr && pe.op == "Constant" &&
                 default_domain(*pe.node)) {
        for (const auto& a : pe.node->attribute())
          if (a.name() == "value" && a.has_t()) t = &a.t();
      }
      if (t == nullptr || !tensor_problem(*t, aliases_).empty() || t->dims_size() != 1 ||
          t->data_type() != onnx::TensorProto::INT64)
        return std::nullopt;
      return static_cast<std::size_t>(t->dims(0));
    };
    std::unordered_set<std::string> seen, outside;
    for (const auto& v : graph_->input()) outside.insert(v.name());
    for (const auto& t : graph_->initializer()) outside.insert(t.name());
    for (const auto& node : graph_->node()) {
      std::optional<std::size_t> r;
      const std::string& op = node.op_type();
      const auto in = [&](int k) -> std::optional<std::size_t> {
        if (k >= node.input_size() || node.input(k).empty()) return std::nullopt;
        return known(node.input(k));
      };
      if (!default_domain(node)) {
      } else if (same.contains(op)) {
        r = in(0);
      } else if (broadcast.contains(op)) {
        std::size_t m = 0;
        bool all = node.input_size() > 0;
        for (int k = 0; k < node.input_size(); ++k) {
          const auto x = in(k);
          if (!x)
            all = false;
          else
            m = std::max(m, *x);
        }
        if (all) r = m;
      } else if (op == "Gemm" || op == "Flatten") {
        r = 2;
      } else if (op == "Shape") {
        r = 1;
      } else if (op == "MatMul") {
        const auto a = in(0), b = in(1);
        if (a && b && *a >= 1 && *b >= 1) {
          if (*a == 1 && *b == 1)
            r = 0;
          else if (*a == 1)
            r = *b - 1;
          else if (*b == 1)
            r = *a - 1;
          else
            r = std::max(*a, *b);
        }
      } else if (op == "Reshape" && node.input_size() > 1) {
        r = const_len(node.input(1));
      } else if (op == "Unsqueeze" || op == "Squeeze") {
        std::optional<std::size_t> axes;
        if (opset < 13) {
          if (const auto* a = attr(node, "axes");
              a != nullptr && a->type() == onnx::AttributeProto::INTS)
            axes = static_cast<std::size_t>(a->ints_size());
        } else if (node.input_size() > 1 && !node.input(1).empty()) {
          axes = const_len(node.input(1));
        }
        const auto x = in(0);
        if (x && axes) {
          if (op == "Unsqueeze")
            r = *x + *axes;
          else if (*axes <= *x)
            r = *x - *axes;
        }
      } else if (op == "Constant") {
        for (const auto& a : node.attribute()) {
          if (a.name() == "value" && a.has_t() && tensor_problem(a.t(), aliases_).empty())
            r = static_cast<std::size_t>(a.t().dims_size());
          else if (a.name() == "value_float" || a.name() == "value_int")
            r = 0;
          else if (a.name() == "value_floats" || a.name() == "value_ints")
            r = 1;
        }
      }
      for (int k = 0; k < node.output_size(); ++k) {
        const std::string& out = node.output(k);
        if (out.empty()) continue;
        // Defined twice (or shadowing an input): no rank. Only output 0 follows the rules above.
        if (!seen.insert(out).second || outside.contains(out) || k > 0 || !r) {
          ranks_.erase(out);
          continue;
        }
        ranks_[out] = *r;
      }
    }
  }

  // Marks node id invalid: `other` with a note and a reason.
  void refuse(entry& e, qfold::reason why, std::string note) {
    e.kind = qfold::op_kind::other;
    e.refusal = why;
    e.note = std::move(note);
    e.linear = linear_form::none;
  }

  void classify(node_id id) {
    entry& e = mut(id);
    const onnx::NodeProto& n = *e.node;
    using qfold::op_kind;
    if (!default_domain(n)) return;
    const std::string& op = e.op;
    const auto input_entry = [&](int k) -> node_id {
      return k < n.input_size() && !n.input(k).empty() ? value_producer(n.input(k)) : none;
    };
    const auto constant_like = [&](node_id p) {
      return p != none && at(p).kind == op_kind::constant;
    };
    const bool has_output = n.output_size() > 0 && !n.output(0).empty();
    if (op == "Conv" || op == "ConvTranspose") {
      // A weight that is a constant must have consistent data to be read at all.
      const node_id w = input_entry(1);
      if (const auto* t = tensor_of(w); t != nullptr && !tensor_problem(*t, aliases_).empty())
        return refuse(e, qfold::reason::invalid_shape,
                      op + " weight: " + tensor_problem(*t, aliases_));
      const auto dims = weight_dims(n);
      if (auto why = conv_problem(n, dims); !why.empty())
        return refuse(e, qfold::reason::invalid_shape, op + " " + why);
      e.kind = op_kind::convolution;
      const bool t = op == "ConvTranspose";
      e.conv.groups = attr_int(n, "group", 1);
      e.conv.transposed = t;
      e.conv.layout = t ? qfold::weight_layout::i_o_s : qfold::weight_layout::o_i_s;
      const auto geo = geometry_of(n, dims);  // unknown geometry counts as padded (fail closed)
      e.conv.padded =
          !geo.pads || std::ranges::any_of(*geo.pads, [](std::int64_t p) { return p != 0; });
    } else if (op == "BatchNormalization") {
      if (n.input_size() != 5 || n.input(0).empty() || !has_output) {
        e.note = "BatchNormalization without its five inputs and an output";
        e.refusal = qfold::reason::unsupported;
      } else if (attr_int(n, "spatial", 1) != 1) {
        e.note = "BatchNormalization with spatial = 0 (statistics per element, not per channel)";
      } else if (auto why = bn_problem(n); !why.first.empty()) {
        refuse(e, why.second, why.first);
      } else {
        e.kind = op_kind::batch_norm;
        std::size_t outputs = 0;
        for (const auto& o : n.output()) outputs += o.empty() ? 0u : 1u;
        e.bn.epsilon = static_cast<double>(attr_float(n, "epsilon", 1e-5f));
        e.bn.training =
            attr_int(n, "training_mode", 0) != 0 || outputs > 1 || attr_int(n, "is_test", 1) == 0;
      }
    } else if (op == "Gemm") {
      const float alpha = attr_float(n, "alpha", 1.0f), beta = attr_float(n, "beta", 1.0f);
      const node_id c = input_entry(2);
      const auto c_shape = constant_shape(c);
      if (!has_output || n.input_size() < 2 || n.input(0).empty() || n.input(1).empty()) {
        e.note = "Gemm without its inputs and an output";
      } else if (alpha != 1.0f) {
        e.note = "Gemm with alpha != 1";
      } else if (c != none && beta != 1.0f) {
        e.note = "Gemm with beta != 1";
      } else if (c_shape && (c_shape->size() > 2 || (c_shape->size() == 2 && (*c_shape)[0] != 1))) {
        e.note = "Gemm's C is not one value per output column";
      } else if (attr_int(n, "transA", 0) != 0) {
        e.note = "Gemm with transA = 1";
      } else {
        e.kind = op_kind::linear;
        e.linear = linear_form::gemm;
        e.gemm_trans_b = snapshot(n, "transB");
        if (attr_int(n, "transB", 0) == 0 && e.operands.size() > 1 &&
            constant_like(e.operands[1])) {
          e.operands[1] = make_view(e.operands[1]);
          mut(id).gemm_view = e.operands[1];
        }
      }
    } else if (op == "MatMul") {
      const node_id b = input_entry(1);
      const auto b_shape = constant_shape(b);
      if (!b_shape || b_shape->size() != 2 || !has_output || n.input_size() != 2 ||
          n.input(0).empty() || e.operands.size() != 2) {
        e.note = "MatMul whose second input is not a constant matrix";
        return;
      }
      e.kind = op_kind::linear;
      e.linear = linear_form::matmul;
      e.matmul = e.node;
      const node_id view = make_view(b);
      entry& again = mut(id);  // make_view may grow the table; deque references stay valid
      again.operands[1] = view;
      again.weight_view = view;
    } else if (op == "Add") {
      e.kind = op_kind::add;
      absorb_matmul(id);
    } else if (op == "Identity") {
      const node_id base = input_entry(0);
      if (constant_like(base)) {
        e.kind = op_kind::constant;
        e.src = source::identity;
        e.base = base;
      } else {
        e.kind = op_kind::view;
      }
    } else if (op == "Constant") {
      classify_constant(e);
    } else if (op == "Mul") {
      e.kind = op_kind::mul;
    } else if (op == "Div") {
      e.kind = op_kind::div;
    } else if (op == "QuantizeLinear") {
      e.kind = op_kind::quantize;
    } else if (op == "DequantizeLinear") {
      e.kind = op_kind::dequantize;
    } else if (op == "Reshape" || op == "Transpose" || op == "Flatten" || op == "Squeeze" ||
               op == "Unsqueeze" || op == "Slice") {
      e.kind = op_kind::view;
    }
  }

  // Why a BatchNormalization's constant parameters cannot be folded (empty: they can): a
  // tensor whose dims disagree with its data, a parameter that is not one value per channel or
  // has no value at all (qfold's fold would read it as ones / zeros), lengths that differ.
  std::pair<std::string, qfold::reason> bn_problem(const onnx::NodeProto& n) const {
    static constexpr const char* names[] = {"scale", "B", "input_mean", "input_var"};
    std::optional<std::int64_t> length;
    for (int k = 1; k < 5; ++k) {
      const char* what = names[k - 1];
      if (n.input(k).empty())
        return {std::string("BatchNormalization without its ") + what,
                qfold::reason::invalid_shape};
      const node_id p = value_producer(n.input(k));
      if (p == none || at(p).kind != qfold::op_kind::constant) continue;  // not_constant later
      const onnx::TensorProto* t = tensor_of(p);
      if (t != nullptr && !tensor_problem(*t, aliases_).empty())
        return {std::string("BatchNormalization ") + what + ": " + tensor_problem(*t, aliases_),
                qfold::reason::invalid_shape};
      const auto shape = constant_shape(p);
      if (!shape) continue;
      if (shape->size() != 1)
        return {std::string("BatchNormalization ") + what + " has dims " + dims_string(*shape) +
                    " (one value per channel needed)",
                qfold::reason::invalid_shape};
      if ((*shape)[0] == 0)
        return {std::string("BatchNormalization ") + what + " is empty (dims (0))",
                qfold::reason::invalid_shape};
      if (length && *length != (*shape)[0])
        return {std::string("BatchNormalization ") + what + " has " + std::to_string((*shape)[0]) +
                    " values, the parameters before it " + std::to_string(*length),
                qfold::reason::channel_mismatch};
      length = (*shape)[0];
    }
    return {};
  }

  void classify_constant(entry& e) {
    const onnx::NodeProto& n = *e.node;
    if (n.output_size() < 1 || n.output(0).empty()) return;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        e.tensor = const_cast<onnx::TensorProto*>(&a.t());
      } else if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
        e.scalar = {a.f()};
        e.shape.clear();
      } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
        e.scalar.assign(a.floats().begin(), a.floats().end());
        e.shape = {static_cast<std::int64_t>(e.scalar.size())};
      } else {
        return;  // integer / string / sparse constants: `other`
      }
    }
    if (e.tensor == nullptr && e.scalar.empty() && n.attribute_size() == 0) return;
    e.kind = qfold::op_kind::constant;
    e.src = source::constant_node;
  }

  // Add(MatMul(x, B), c) with B a constant matrix, c a constant of shape (N) or (1, N), and the
  // Add the MatMul's only reader: one linear node, named after the Add.
  void absorb_matmul(node_id id) {
    entry& e = mut(id);
    const onnx::NodeProto& n = *e.node;
    if (n.input_size() != 2 || n.output_size() < 1 || n.output(0).empty() || e.operands.size() != 2)
      return;
    for (int side = 0; side < 2; ++side) {
      const node_id mm = value_producer(n.input(side));
      const node_id bias = value_producer(n.input(1 - side));
      if (mm == none || bias == none || mm == bias) continue;
      entry& m = mut(mm);
      if (m.linear != linear_form::matmul || !m.alive || m.hidden || m.node->output_size() < 1 ||
          m.node->output(0) != n.input(side) || m.operands.size() != 2)
        continue;
      const value& product = values_.at(n.input(side));
      if (product.readers != 1 || product.outputs != 0) {
        e.note = "the MatMul's output has another reader";
        return;
      }
      const auto shape = constant_shape(bias);
      if (!shape || shape->size() > 2 || (shape->size() == 2 && (*shape)[0] != 1)) {
        e.note = "Add after MatMul does not add a constant of shape (N) or (1, N)";
        return;
      }
      e.kind = qfold::op_kind::linear;
      e.linear = linear_form::matmul_add;
      e.matmul = m.node;
      e.bias_slot = 1 - side;
      e.operands = {m.operands[0], m.operands[1], bias};
      e.weight_view = m.weight_view;
      e.inner = mm;
      m.hidden = true;
      values_.at(n.input(side)).producer = id;
      return;
    }
  }

  onnx::ModelProto* model_;
  onnx::GraphProto* graph_;
  std::deque<entry> entries_;  // stable references while new entries are added
  std::unordered_map<std::string, value> values_;
  std::unordered_set<std::string> names_;  // every name in the model, subgraphs included
  std::unordered_set<std::string> gone_;   // values that went away (their value_info goes)
  std::vector<std::pair<const onnx::NodeProto*, std::unique_ptr<onnx::NodeProto>>> pending_;
  static constexpr std::size_t pool_min_bytes = 64 * 1024;
  std::vector<std::string> pool_;  // raw_data storage of erased initializers
  raw_aliases* aliases_ = nullptr;
  std::unordered_map<std::string, std::size_t> ranks_;
  std::string malformed_;
  std::optional<std::size_t> inject_;
};

static_assert(qfold::batch_norm_foldable_graph<graph>);

}  // namespace qfold_onnx
