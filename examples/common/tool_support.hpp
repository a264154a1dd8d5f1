// What qfold's command-line tools (qfold-onnx, qfold-tosa-opt) share: exit codes, the error that
// carries one, the report's sites with names, their text and JSON forms, and atomic output files.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
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

// One site of a report, with names (so that it outlives the graph).
struct site {
  std::string pass;
  std::vector<std::string> nodes;  // producer first
  bool folded = false;
  std::string reason, message, note;
  std::optional<std::size_t> index;
  std::size_t bytes_removed = 0;
};

struct totals {
  std::size_t folded = 0, rejected = 0, bytes_removed = 0;
};
inline totals count(const std::vector<site>& sites) {
  totals t;
  for (const auto& s : sites) {
    (s.folded ? t.folded : t.rejected) += 1;
    t.bytes_removed += s.bytes_removed;
  }
  return t;
}

// One line per site: "pass: a -> b: folded, N bytes removed" or "...: rejected (reason) message
// [at index] (note)".
inline void print_site_lines(std::ostream& os, const std::vector<site>& sites) {
  for (const auto& s : sites) {
    os << s.pass << ": ";
    for (std::size_t i = 0; i < s.nodes.size(); ++i) os << (i != 0 ? " -> " : "") << s.nodes[i];
    if (s.folded) {
      os << ": folded, " << s.bytes_removed << " bytes removed\n";
      continue;
    }
    os << ": rejected (" << s.reason << ") " << s.message;
    if (s.index) os << " [at " << *s.index << "]";
    if (!s.note.empty()) os << " (" << s.note << ")";
    os << "\n";
  }
}
// "F folded, R rejected, B bytes removed" (no newline: tools append their own counts).
inline void print_totals(std::ostream& os, const std::vector<site>& sites) {
  const totals t = count(sites);
  os << t.folded << " folded, " << t.rejected << " rejected, " << t.bytes_removed
     << " bytes removed";
}

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
      os << ", \"bytes_removed\": " << s.bytes_removed;
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

// The whole of `bytes` at `path`, atomically.
inline void write_file_atomically(const std::string& path, std::string_view bytes) {
  atomic_output out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace qfold_tool
