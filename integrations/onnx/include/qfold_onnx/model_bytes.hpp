// Tensor bytes of an ONNX model: checked sizes, the memfd spill, raw_data aliased to the input
// file, batch-norm folds made while the model is written, and float views of all of them.
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
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <qfold/graph/vocabulary.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qfold_onnx {

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
// raw_data (tools/onnx/onnx_tool.hpp, parse_bytes_aliased), and add_constant keeps large folded
// tensors in the spill: such a tensor holds a one-byte placeholder in raw_data (so that the ONNX
// checker sees a data field) and its real bytes are the view here. A view whose data() is null
// means "not aliased (any more)": raw_data holds the bytes. Writing the model (write_model) splices
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

// Bytes per element; 0 for an unknown type (and for strings, which have no fixed size).
inline std::size_t element_size(std::int32_t type) {
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
inline const char* typed_field(std::int32_t type) {
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

// Why a tensor's contents cannot be read as they claim (empty: they can): a negative dim, a
// product that overflows, data of another length than the dims say, several or no data
// fields where data is due, external or segmented data, an unknown type.
inline std::string tensor_problem(const onnx::TensorProto& t,
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

// The bytes a tensor's data takes (0 when its data is not what its dims say).
inline std::size_t tensor_bytes(const onnx::TensorProto& t, const raw_aliases* aliases) {
  if (!tensor_problem(t, aliases).empty()) return 0;
  if (t.has_raw_data()) return raw_size(t, aliases);
  const std::span<const std::int64_t> dims(t.dims().data(),
                                           static_cast<std::size_t>(t.dims_size()));
  return checked::bytes(*checked::element_count(dims), element_size(t.data_type())).value_or(0);
}

inline void byteswap_floats(std::string& raw) {
  for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
    std::swap(raw[i], raw[i + 3]);
    std::swap(raw[i + 1], raw[i + 2]);
  }
}

// A float32 tensor's data in place (raw_data or float_data); nullopt for other types, external
// data, dims that disagree with the data (checked without wrap), or no element at all.
inline std::optional<qfold::tensor_view<float>> float_tensor(const onnx::TensorProto& t,
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

// Whether the n bytes at p lie in `in` (addresses compared as integers).
inline bool within(std::string_view in, const std::byte* p, std::size_t n) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p),
             s = reinterpret_cast<std::uintptr_t>(in.data());
  return in.data() != nullptr && a >= s && a - s <= in.size() && n <= in.size() - (a - s);
}

// A fold deferred by add_scaled_constant is made in full the first time its values are read:
// in the spill (then aliased), else in its own raw_data. Never throws: where it cannot be made,
// it stays deferred (and float_tensor refuses its placeholder).
inline void make_deferred(raw_aliases* aliases, const onnx::TensorProto& t) noexcept {
  if (aliases == nullptr) return;
  const auto it = aliases->deferred.find(&t);
  if (it == aliases->deferred.end()) return;
  const raw_aliases::scaled& d = it->second;
  const std::size_t bytes = d.count * sizeof(float);
  try {
    if (const auto room = aliases->spill.lend(bytes); room.data() != nullptr) {
      if (d.recipe().values(0, {reinterpret_cast<float*>(room.data()), d.count})) return;
      const std::string_view kept = aliases->spill.keep({room.data(), bytes});
      if (kept.data() == nullptr) return;
      aliases->emplace(&t, kept);  // may throw: the space is only lost
    } else {
      std::string raw(bytes, '\0');
      if (d.recipe().values(0, {reinterpret_cast<float*>(raw.data()), d.count})) return;
      const_cast<onnx::TensorProto&>(t).mutable_raw_data()->swap(raw);  // the adapter's own
    }
    aliases->deferred.erase(it);
  } catch (...) {
  }
}

// A tensor aliased to bytes not aligned for a float (the input file's, read in place) is given
// an aligned copy the first time it is read as floats: in the spill (the alias then views it),
// else in its own raw_data. Never throws: where no copy can be had, it stays as it is (and
// float_tensor refuses it, as for any misaligned data).
inline void align_alias(raw_aliases* aliases, const onnx::TensorProto& t) noexcept {
  if (aliases == nullptr) return;
  const auto it = aliases->find(&t);
  if (it == aliases->end() || it->second.data() == nullptr ||
      reinterpret_cast<std::uintptr_t>(it->second.data()) % alignof(float) == 0)
    return;
  const std::string_view raw = it->second;
  int fd = -1;
  std::uint64_t offset = 0;
  const std::string_view copy = aliases->locate(raw, fd, offset)
                                    ? aliases->spill.keep(raw, fd, offset)
                                    : aliases->spill.keep(raw);
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

}  // namespace qfold_onnx
