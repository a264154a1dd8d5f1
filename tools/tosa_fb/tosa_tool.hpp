// The pieces of qfold-tosa, shared with its tests and fuzzers: the input's bytes (mapped, or
// standard input), the checks that make a file bad input, folding, the self-check of the output
// (it must read back and break no rule) and the reports.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <ostream>
#include <qfold_tosa_fb/graph.hpp>
#include <qfold_tosa_fb/passes.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/write.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../common/tool_support.hpp"

namespace qfold_tosa_fb_tool {

using qfold_tool::exit_bad_input;
using qfold_tool::exit_ok;
using qfold_tool::exit_usage;
using qfold_tool::exit_write;
using qfold_tool::tool_error;

// The bytes of the input: a file mapped read-only (page-aligned, no copy), or standard input
// ("-") read whole.
class input_bytes {
 public:
  explicit input_bytes(const std::string& path) {
    if (path == "-") {
      char buf[1 << 16];
      for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
          throw tool_error(exit_bad_input, std::string("cannot read standard input: ") +
                                               std::strerror(errno));
        if (n == 0) break;
        owned_.insert(owned_.end(), buf, buf + n);
      }
      bytes_ = owned_;
      return;
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
      throw tool_error(exit_bad_input, "cannot read '" + path + "': no such file");
    if (fs::is_directory(status))
      throw tool_error(exit_bad_input, "'" + path + "' is a directory, not a .tosa file");
    if (!fs::is_regular_file(status))
      throw tool_error(exit_bad_input, "'" + path + "' is not a regular file");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      throw tool_error(exit_bad_input, "cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      throw tool_error(exit_bad_input, "cannot read '" + path + "': " + std::strerror(errno));
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED)
      throw tool_error(exit_bad_input, "cannot map '" + path + "': " + std::strerror(errno));
    mapped_ = static_cast<const std::uint8_t*>(p);
    bytes_ = {mapped_, size_};
  }
  input_bytes(const input_bytes&) = delete;
  input_bytes& operator=(const input_bytes&) = delete;
  ~input_bytes() {
    if (mapped_ != nullptr) ::munmap(const_cast<std::uint8_t*>(mapped_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

 private:
  int fd_ = -1;
  const std::uint8_t* mapped_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> bytes_;
};

// Reads and checks a file; throws tool_error(exit_bad_input) naming the first problem (all of
// the graph's problems go to `errors`, one line each).
inline qfold_tosa_fb::model read_checked(std::span<const std::uint8_t> bytes,
                                         const std::string& name, std::ostream& errors) {
  qfold_tosa_fb::model m;
  try {
    m = qfold_tosa_fb::read_model(bytes);
  } catch (const qfold_tosa_fb::bad_file& e) {
    throw tool_error(exit_bad_input, "'" + name + "' is not a TOSA 1.0 file qfold can read (" +
                                         std::string(qfold_tosa_fb::to_string(e.code())) +
                                         "): " + e.what());
  }
  const qfold_tosa_fb::graph g(m);
  const auto problems = qfold_tosa_fb::check_graph(g);
  if (!problems.empty()) {
    for (const auto& p : problems) errors << "qfold-tosa: error: " << p << "\n";
    throw tool_error(exit_bad_input, "'" + name + "' breaks TOSA 1.0's rules or has ops qfold "
                                                  "cannot read (" +
                                         std::to_string(problems.size()) + ", listed above)");
  }
  return m;
}

// What a fold of one file gives: the sites, and the output bytes (the input's own when nothing
// changed).
struct result {
  std::vector<qfold::named_site> sites;
  bool changed = false;
  std::optional<flatbuffers::DetachedBuffer> built;  // when changed
  std::span<const std::uint8_t> output;              // the bytes to write
};

// Folds a checked model. The output is checked as the input was (it reads back, breaks no
// rule); a failure there is qfold's, reported as exit_write with nothing written.
inline result fold_model(const qfold_tosa_fb::model& m, const std::vector<std::string>& passes,
                         std::ostream& errors) {
  qfold_tosa_fb::graph g(m);
  result r;
  r.sites = qfold_tosa_fb::fold(g, passes);
  r.changed = g.changed();
  if (!r.changed) {
    r.output = m.bytes;
    return r;
  }
  try {
    r.built = qfold_tosa_fb::build_file(g);
  } catch (const qfold_tosa_fb::write_error& e) {
    throw tool_error(exit_bad_input, std::string("cannot write the folded file: ") + e.what());
  }
  r.output = {r.built->data(), r.built->size()};
  try {
    (void)read_checked(r.output, "the folded file", errors);
  } catch (const tool_error& e) {
    throw tool_error(exit_write,
                     std::string("internal error: the folded file fails qfold's own checks (") +
                         e.what() + "); nothing written");
  }
  return r;
}

}  // namespace qfold_tosa_fb_tool
