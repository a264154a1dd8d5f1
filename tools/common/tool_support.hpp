// What qfold's command-line tools (qfold-onnx, qfold-tosa-opt) share: exit codes, the error that
// carries one, the report's sites with names, their text and JSON forms, and atomic output files.
#pragma once

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <ostream>
#include <qfold/graph/named_sites.hpp>
#include <qfold/graph/report.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace qfold_tool {

// Exit codes of every qfold tool.
enum exit_code : int {
  exit_ok = 0,
  exit_bad_input = 1,  // unreadable, unparsable or invalid input; anything thrown before writing
                       // starts (allocation failures included)
  exit_usage = 2,
  exit_write = 3,  // the output could not be written (nothing is left at OUT)
};

class tool_error : public std::runtime_error {
 public:
  tool_error(exit_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  [[nodiscard]] exit_code code() const noexcept { return code_; }

 private:
  exit_code code_;
};

// Sites with names, counted and printed (qfold/graph/named_sites.hpp, shared with the
// integrations' MLIR passes).
using site = qfold::named_site;
using totals = qfold::site_totals;
template <class Site, class NameOf>
site named_site(const Site& s, NameOf&& name_of) {
  return qfold::with_names(s, std::forward<NameOf>(name_of));
}
inline totals count(const std::vector<site>& sites) { return qfold::count_sites(sites); }
using qfold::print_site_lines;
using qfold::print_totals;

inline std::string json_string(std::string_view s) {
  std::string r = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        r += "\\\"";
        break;
      case '\\':
        r += "\\\\";
        break;
      case '\n':
        r += "\\n";
        break;
      case '\r':
        r += "\\r";
        break;
      case '\t':
        r += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          r += buf;
        } else {
          r += c;
        }
    }
  }
  return r + "\"";
}

// The sites as a JSON array, one object a line, indented for a member of a top-level object.
inline void print_sites_json(std::ostream& os, const std::vector<site>& sites) {
  os << "[";
  for (std::size_t k = 0; k < sites.size(); ++k) {
    const site& s = sites[k];
    os << (k != 0 ? "," : "") << "\n    {\"pass\": " << json_string(s.pass) << ", \"nodes\": [";
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      os << (i != 0 ? ", " : "") << json_string(s.nodes[i]);
    os << "], \"folded\": " << (s.folded ? "true" : "false");
    if (s.folded) {
      os << ", \"bytes_removed\": " << s.bytes_removed << ", \"bytes_added\": " << s.bytes_added;
    } else {
      os << ", \"reason\": " << json_string(s.reason)
         << ", \"message\": " << json_string(s.message);
      if (s.index) os << ", \"index\": " << *s.index;
      if (!s.note.empty()) os << ", \"note\": " << json_string(s.note);
    }
    os << "}";
  }
  os << (sites.empty() ? "]" : "\n  ]");
}

// Where a write to `path` goes: a symbolic link stays a link and its target (followed to the end)
// gets the new contents.
inline std::filesystem::path resolve_output(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw tool_error(exit_usage, "the output path is empty");
  fs::path target(path);
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40)
      throw tool_error(exit_write, "'" + path + "': too many levels of symbolic links");
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) throw tool_error(exit_write, "cannot read the link '" + target.string() + "'");
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

// A file written through a temporary next to its target and a rename: a failure never leaves a
// partial file at `path`. Write to fd(), then commit(); without a commit the temporary goes. The
// file it replaces is removed on a second thread, done by the time this object is destroyed:
// freeing a large file's pages takes as long as writing them (ResNet-50's 102 MB: 25-30 ms on an
// AMD EPYC Zen 5), and a tool can meanwhile free its own memory (qfold-onnx owns its output for
// that reason).
class atomic_output {
 public:
  explicit atomic_output(const std::string& path) : path_(path) {
    namespace fs = std::filesystem;
    target_ = resolve_output(path);
    fs::path dir = target_.parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    const auto st = fs::status(target_, ec);
    if (fs::is_directory(st)) throw tool_error(exit_write, "'" + path + "' is a directory");
    if (fs::exists(st) && !fs::is_regular_file(st))
      throw tool_error(exit_write, "'" + path + "' exists and is not a regular file");
    std::random_device rd;
    tmp_ = dir / ("." + target_.filename().string() + ".qfold-" + std::to_string(rd()) + ".tmp");
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw tool_error(exit_write,
                       "cannot write in '" + dir.string() + "': " + std::strerror(errno));
  }
  atomic_output(const atomic_output&) = delete;
  atomic_output& operator=(const atomic_output&) = delete;
  ~atomic_output() {
    if (remover_.joinable()) remover_.join();
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) {
      std::error_code ignored;
      std::filesystem::remove(tmp_, ignored);
    }
  }
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::filesystem::path& temporary() const noexcept { return tmp_; }

  // Writes all of `bytes` (retrying short writes); throws tool_error(exit_write) on failure.
  void write(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t w = ::write(fd_, bytes.data(), bytes.size());
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail(w < 0 ? errno : EIO);
      bytes.remove_prefix(static_cast<std::size_t>(w));
    }
  }
  // `error`: an errno the caller met while writing to fd() (0: none). Throws tool_error.
  [[noreturn]] void fail(int error) {
    throw tool_error(exit_write, "cannot write '" + tmp_.string() + "': " + std::strerror(error));
  }
  // Closes the temporary and renames it over the target.
  void commit() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(errno);
    // Over an existing target: exchange the two names (atomic, like a rename), then remove the
    // old file, now at the temporary's name. ext4 starts the write-back of the whole new file
    // inside a rename over an existing file (auto_da_alloc), not inside an exchange (docs/onnx.md).
    // No target (ENOENT) or no exchange on this file system (EINVAL): a plain rename.
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
      committed_ = true;
      // On failure the old file stays at the temporary's name, harmless.
      const auto remove_old = [old = tmp_] { ::unlink(old.c_str()); };
      try {
        remover_ = std::thread(remove_old);
      } catch (...) {  // no thread: here and now
        remove_old();
      }
      return;
    }
    std::error_code ec;
    std::filesystem::rename(tmp_, target_, ec);
    if (ec)
      throw tool_error(exit_write, "cannot rename the output to '" + path_ + "': " + ec.message());
    committed_ = true;
  }

 private:
  std::string path_;
  std::filesystem::path target_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  std::thread remover_;  // removes the replaced file (commit), joined by the destructor
};

// A file written front to back, from memory and from other files, at the speed of whichever of
// the page cache and the device is faster. On virtual machines whose host takes back the guest's
// free memory (free page reporting, in blocks of 2 MiB) a fresh page-cache page can cost a fault
// in the host: 100 MB took 0.02-0.05 s to write while recently freed pages lasted, 0.15-0.45 s
// once they ran out, and 0.26-0.41 s every time in writes of 2 MiB (whose 2 MiB folios come from
// exactly the blocks the host took back); through O_DIRECT, 0.05-0.07 s (AMD EPYC Zen 5,
// Firecracker; docs/onnx.md). So buffered writes are at most `slice` bytes, timed over each
// `window` bytes; once a window runs slower than `fast` bytes a second, the rest goes through
// O_DIRECT from two aligned buffers, one written on a second thread while the other fills. Where
// the file system refuses O_DIRECT (tmpfs, ...) or a direct write, the rest is written buffered.
// After finish(), error() is the first errno a write met (0: none); nothing throws.
class file_writer {
 public:
  static constexpr std::size_t align = 4096;                     // O_DIRECT's unit
  static constexpr std::size_t slice = std::size_t{256} << 10;   // the largest buffered write
  static constexpr std::size_t window = std::size_t{4} << 20;    // bytes per speed check
  static constexpr std::size_t capacity = std::size_t{2} << 20;  // each direct buffer
  // adaptive: as above; buffered: never direct; direct: direct from the first byte.
  enum class mode { adaptive, buffered, direct };
  // `fast`: the page cache's own speed there was 2-4e9 bytes a second, O_DIRECT's 1.5-2e9.
  explicit file_writer(int fd, mode m = mode::adaptive, double fast = 1.0e9) noexcept
      : fd_(fd), fast_(fast), may_go_direct_(m == mode::adaptive) {
    if (m == mode::direct) go_direct();
  }
  file_writer(const file_writer&) = delete;
  file_writer& operator=(const file_writer&) = delete;
  ~file_writer() {
    wait();
    (void)set_direct(false);
    std::free(filling_);
    std::free(writing_);
  }
  [[nodiscard]] int error() const noexcept { return error_; }
  // Bytes written through O_DIRECT (after finish()).
  [[nodiscard]] std::uint64_t direct_bytes() const noexcept { return direct_bytes_; }

  // `lasting`: the bytes stay valid until finish() (small ones are then gathered and written
  // with what follows); else they are written, or copied, before this returns.
  void put(std::string_view bytes, bool lasting = true) noexcept {
    if (bytes.empty()) return;  // (an empty piece would make writev return 0)
    if (filling_ != nullptr) return stage(bytes);
    if (lasting && bytes.size() <= slice / 8) {
      if (iov_.size() == IOV_MAX || gathered_ + bytes.size() > slice) flush();
      if (filling_ != nullptr) return stage(bytes);
      try {
        iov_.push_back({const_cast<char*>(bytes.data()), bytes.size()});
        gathered_ += bytes.size();
        return;
      } catch (const std::bad_alloc&) {  // written at once, then
      }
    }
    flush();
    while (!bytes.empty() && error_ == 0 && filling_ == nullptr) {
      const std::size_t n = std::min(bytes.size(), slice);
      const ssize_t w = timed([&] { return ::write(fd_, bytes.data(), n); });
      if (w <= 0)
        error_ = w < 0 ? errno : EIO;
      else
        bytes.remove_prefix(static_cast<std::size_t>(w));
    }
    if (filling_ != nullptr) stage(bytes);
  }
  // `bytes` as they are in file `from` at `offset`: copied by the kernel (buffered: sendfile;
  // direct: pread; no page of them is mapped for this); from `bytes` what the file cannot give.
  void put_from(int from, std::uint64_t offset, std::string_view bytes) noexcept {
    flush();
    auto in = static_cast<off_t>(offset);
    while (!bytes.empty() && error_ == 0 && filling_ == nullptr) {
      const std::size_t n = std::min(bytes.size(), slice);
      const ssize_t w = timed([&] { return ::sendfile(fd_, from, &in, n); });
      if (w <= 0) break;
      bytes.remove_prefix(static_cast<std::size_t>(w));
    }
    while (!bytes.empty() && error_ == 0 && filling_ != nullptr) {
      const ssize_t r =
          ::pread(from, filling_ + used_, std::min(bytes.size(), capacity - used_), in);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      used_ += static_cast<std::size_t>(r);
      in += r;
      bytes.remove_prefix(static_cast<std::size_t>(r));
      if (used_ == capacity) submit();
    }
    put(bytes);
  }
  void finish() noexcept {
    flush();
    wait();
    if (filling_ != nullptr && error_ == 0) write_all(filling_ + start_, used_ - start_, error_);
    used_ = start_ = 0;
    if (error_ == 0 && !set_direct(false)) error_ = errno;
  }

 private:
  // One buffered call f (write, writev or sendfile), timed: a window slower than fast_ sends
  // the rest direct. What f returned (-1: errno says why).
  template <class F>
  ssize_t timed(F&& f) noexcept {
    ssize_t w = 0;
    std::chrono::duration<double> t{};
    do {
      const auto t0 = std::chrono::steady_clock::now();
      w = f();
      t = std::chrono::steady_clock::now() - t0;
    } while (w < 0 && errno == EINTR);
    if (w <= 0) return w;
    offset_ += static_cast<std::uint64_t>(w);
    window_bytes_ += static_cast<std::size_t>(w);
    window_time_ += t.count();
    if (window_bytes_ >= window) {
      if (may_go_direct_ && static_cast<double>(window_bytes_) < fast_ * window_time_) go_direct();
      window_bytes_ = 0;
      window_time_ = 0;
    }
    return w;
  }
  void go_direct() noexcept {
    may_go_direct_ = false;
    // Blocks are aligned to the file, not to the bytes put: the descriptor may not start at 0.
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (at < 0 || !set_direct(true)) return;  // (no offset: a pipe, ...)
    offset_ = static_cast<std::uint64_t>(at);
    filling_ = static_cast<char*>(std::aligned_alloc(align, capacity));
    writing_ = static_cast<char*>(std::aligned_alloc(align, capacity));
    if (filling_ == nullptr || writing_ == nullptr) {
      std::free(filling_);
      std::free(writing_);
      filling_ = writing_ = nullptr;
      (void)set_direct(false);
      return;
    }
    // The bytes sit in the buffer at their file offset's place in a block, so that where the
    // file reaches a block boundary the memory does too (O_DIRECT wants both aligned).
    used_ = start_ = static_cast<std::size_t>(offset_ % align);
  }
  // The gathered pieces, a slice at most per call; what is left after going direct is staged.
  void flush() noexcept {
    std::size_t i = 0;
    while (i < iov_.size() && error_ == 0 && filling_ == nullptr) {
      std::size_t n = 0, bytes = 0;
      while (i + n < iov_.size() && n < IOV_MAX && (n == 0 || bytes + iov_[i + n].iov_len <= slice))
        bytes += iov_[i + n++].iov_len;
      const ssize_t w = timed([&] { return ::writev(fd_, iov_.data() + i, static_cast<int>(n)); });
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        break;
      }
      auto left = static_cast<std::size_t>(w);
      while (i < iov_.size() && left >= iov_[i].iov_len) left -= iov_[i++].iov_len;
      if (left != 0) {
        iov_[i].iov_base = static_cast<char*>(iov_[i].iov_base) + left;
        iov_[i].iov_len -= left;
      }
    }
    for (; i < iov_.size() && filling_ != nullptr; ++i)
      stage({static_cast<const char*>(iov_[i].iov_base), iov_[i].iov_len});
    iov_.clear();
    gathered_ = 0;
  }
  void stage(std::string_view bytes) noexcept {
    while (!bytes.empty() && error_ == 0) {
      const std::size_t n = std::min(bytes.size(), capacity - used_);
      std::memcpy(filling_ + used_, bytes.data(), n);
      used_ += n;
      bytes.remove_prefix(n);
      if (used_ == capacity) submit();
    }
  }
  // The full buffer goes to the second thread (or is written here if no thread can be had).
  void submit() noexcept {
    wait();
    std::swap(filling_, writing_);
    const std::size_t start = start_;
    used_ = start_ = 0;
    if (error_ != 0) return;
    try {
      writer_ = std::thread(
          [this, start] { write_all(writing_ + start, capacity - start, writer_error_); });
    } catch (...) {
      write_all(writing_ + start, capacity - start, error_);
    }
  }
  void wait() noexcept {
    if (writer_.joinable()) writer_.join();
    if (error_ == 0) error_ = writer_error_;
  }
  // Direct where the file offset and the length allow whole blocks; buffered up to the next
  // block boundary before that, for a partial last block, and for all once a direct write is
  // refused. Runs on the writer thread, which alone touches offset_ and the flags meanwhile.
  void write_all(const char* p, std::size_t n, int& error) noexcept {
    while (n != 0 && error == 0) {
      const std::size_t head = (align - offset_ % align) % align;
      const bool whole = direct_ok_ && head == 0 && n >= align;
      const std::size_t len = whole ? n / align * align : std::min(n, head != 0 ? head : slice);
      if (!set_direct(whole)) {
        if (whole) {
          direct_ok_ = false;
          continue;
        }
        error = errno;
        return;
      }
      const ssize_t w = ::write(fd_, p, len);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EINVAL && whole) {  // a device that wants a larger alignment
        direct_ok_ = false;
        continue;
      }
      if (w <= 0) {
        error = w < 0 ? errno : EIO;
        return;
      }
      if (whole) direct_bytes_ += static_cast<std::uint64_t>(w);
      p += w;
      n -= static_cast<std::size_t>(w);
      offset_ += static_cast<std::uint64_t>(w);
    }
  }
  bool set_direct(bool on) noexcept {
    if (on == direct_) return true;
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) != 0)
      return false;
    direct_ = on;
    return true;
  }
  int fd_;
  double fast_;
  bool may_go_direct_;
  std::vector<iovec> iov_;    // small pieces gathered, not yet written (buffered)
  std::size_t gathered_ = 0;  // their bytes
  std::size_t window_bytes_ = 0;
  double window_time_ = 0;   // seconds the window's bytes took
  char* filling_ = nullptr;  // direct: the buffer put() fills
  char* writing_ = nullptr;  // direct: the buffer writer_ writes
  std::size_t used_ = 0;     // bytes in filling_, from its start
  std::size_t start_ = 0;    // where the first of them is (not 0 in the first buffer only)
  std::thread writer_;
  int error_ = 0;
  // Touched by writer_ only while it runs (the caller waits for it before it touches them).
  int writer_error_ = 0;
  std::uint64_t offset_ = 0;  // bytes written so far; once direct, the descriptor's offset
  std::uint64_t direct_bytes_ = 0;
  bool direct_ = false;    // O_DIRECT is set on fd_
  bool direct_ok_ = true;  // no direct write was refused
};

// The whole of `bytes` at `path`, atomically.
inline void write_file_atomically(const std::string& path, std::string_view bytes) {
  atomic_output out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace qfold_tool
