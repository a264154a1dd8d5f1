// qfold_tool::file_writer (tools/common/tool_support.hpp), the tools' output writer: every
// mode writes exactly the bytes put, in order, whatever their sizes, sources and alignments; the
// direct modes really write through O_DIRECT where the file system has it; errors are reported,
// never thrown.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include "catch_compat.hpp"
#include "common/tool_support.hpp"

namespace {

using qfold_tool::file_writer;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::string bytes(fs::file_size(p), '\0');
  std::ifstream f(p, std::ios::binary);
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return f ? bytes : std::string();
}

// A file in the temporary directory, named for this process (test runs may overlap).
fs::path temporary(const std::string& name) {
  return fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}

// Where two byte strings first differ (npos: nowhere); a check on this prints a number, not
// megabytes.
std::size_t first_difference(std::string_view a, std::string_view b) {
  const auto [i, j] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return i == a.end() && j == b.end() ? std::string::npos : static_cast<std::size_t>(i - a.begin());
}

// Does the temporary directory's file system take O_DIRECT writes of whole blocks?
bool direct_supported() {
  const fs::path probe = temporary("qfold_file_writer_probe");
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
  bool ok = false;
  if (fd >= 0) {
    void* block = std::aligned_alloc(file_writer::align, file_writer::align);
    ok = block != nullptr &&
         ::write(fd, block, file_writer::align) == static_cast<ssize_t>(file_writer::align);
    std::free(block);
    ::close(fd);
  }
  fs::remove(probe);
  return ok;
}

struct writer_case {
  const char* name;
  file_writer::mode mode;
  double fast;  // adaptive: 1e30 makes every window "slow", 0 none
  bool direct;  // expected to write most bytes through O_DIRECT where the file system can
};

}  // namespace

TEST_CASE("file_writer: the bytes put, in order, in every mode") {
  const bool can_direct = direct_supported();
  // A source file for put_from: 3 MiB + 777 random bytes.
  std::mt19937_64 rng(15);
  std::string source(std::size_t{3} << 20 | 777, '\0');
  for (char& c : source) c = static_cast<char>(rng());
  const fs::path source_path = temporary("qfold_file_writer_source");
  { std::ofstream(source_path, std::ios::binary) << source; }
  const int from = ::open(source_path.c_str(), O_RDONLY);
  REQUIRE(from >= 0);

  const writer_case cases[] = {
      {"buffered", file_writer::mode::buffered, 1.0e9, false},
      {"direct from the first byte", file_writer::mode::direct, 1.0e9, true},
      {"adaptive, never slow", file_writer::mode::adaptive, 0.0, false},
      {"adaptive, slow at the first window (an unaligned offset)", file_writer::mode::adaptive,
       1.0e30, true},
  };
  for (const writer_case& c : cases) {
    for (int seed = 0; seed < 3; ++seed) {
      INFO(c.name << ", seed " << seed);
      std::mt19937_64 pick(static_cast<std::uint64_t>(seed) * 7 + 1);
      const auto below = [&](std::size_t n) { return static_cast<std::size_t>(pick() % n); };
      const fs::path out = temporary("qfold_file_writer_out");
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      REQUIRE(fd >= 0);
      std::string want;
      // Kept until finish(), as put(…, true) requires; a deque never moves its strings (a
      // moved short string's bytes would move with it).
      std::deque<std::string> lasting;
      std::string reused;  // overwritten after each put(…, false)
      {
        file_writer w(fd, c.mode, c.fast);
        // About 12 MiB in pieces of every kind: one byte to 3 MiB, from memory that lasts,
        // from memory reused at once, from a file (with what the file lacks from memory).
        while (want.size() < (std::size_t{12} << 20)) {
          const std::size_t kind = below(4);
          const std::size_t size = kind == 0 ? 1 + below(64) : 1 + below(std::size_t{3} << 20);
          if (kind <= 1) {
            lasting.emplace_back(size, '\0');
            for (char& ch : lasting.back()) ch = static_cast<char>(pick());
            w.put(lasting.back());
            want += lasting.back();
          } else if (kind == 2) {
            reused.assign(size, '\0');
            for (char& ch : reused) ch = static_cast<char>(pick());
            w.put(reused, false);
            want += reused;
            reused.assign(size, '#');
          } else {
            // From the file at any offset; past its end, the rest from the view of the bytes.
            const std::size_t offset = below(source.size());
            lasting.emplace_back(source.substr(offset, size));
            if (lasting.back().size() < size && below(2) == 0)
              lasting.back().append(size - lasting.back().size(), 'z');
            w.put_from(from, offset, lasting.back());
            want += lasting.back();
          }
        }
        w.finish();
        CHECK(w.error() == 0);
        if (c.direct && can_direct) {
          CHECK(w.direct_bytes() >=
                want.size() - file_writer::window - file_writer::slice - 2 * file_writer::align);
        } else if (!c.direct) {
          CHECK(w.direct_bytes() == 0);
        }
        // Buffered again once finished: the descriptor takes an unaligned write.
        CHECK(::write(fd, "!", 1) == 1);
        want += '!';
      }
      ::close(fd);
      const std::string got = slurp(out);
      CHECK(got.size() == want.size());
      CHECK(first_difference(got, want) == std::string::npos);
      fs::remove(out);
    }
  }
  ::close(from);
  fs::remove(source_path);
}

TEST_CASE("file_writer: write errors are reported, not thrown") {
  // A descriptor that cannot be written: EBADF on the first write, in every mode.
  const fs::path path = temporary("qfold_file_writer_readonly");
  { std::ofstream(path) << "x"; }
  for (const auto mode :
       {file_writer::mode::buffered, file_writer::mode::direct, file_writer::mode::adaptive}) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    const std::string big(std::size_t{5} << 20, 'b');
    {
      file_writer w(fd, mode, 1.0e30);
      w.put("small");
      w.put(big);
      w.put(big, false);
      w.finish();
      CHECK(w.error() == EBADF);
    }
    ::close(fd);
  }
  fs::remove(path);
  // A full device: ENOSPC (where /dev/full exists).
  const int full = ::open("/dev/full", O_WRONLY);
  if (full >= 0) {
    file_writer w(full);
    const std::string big(std::size_t{1} << 20, 'f');
    w.put(big);
    w.finish();
    CHECK(w.error() == ENOSPC);
    ::close(full);
  }
}

TEST_CASE("file_writer: a descriptor that does not start at 0 still goes direct") {
  // O_DIRECT's blocks are the file's: after 5000 bytes already there (appended or not), the
  // first 3192 bytes put go buffered and the rest direct, right after those 5000.
  const std::string prefix(5000, 'p');
  std::mt19937_64 rng(77);
  std::string body(std::size_t{9} << 20 | 123, '\0');
  for (char& ch : body) ch = static_cast<char>(rng());
  const bool can_direct = direct_supported();
  for (const int append : {0, O_APPEND}) {
    for (const auto mode : {file_writer::mode::direct, file_writer::mode::adaptive}) {
      INFO((append != 0 ? "O_APPEND, " : "")
           << (mode == file_writer::mode::direct ? "direct" : "adaptive"));
      const fs::path out = temporary("qfold_file_writer_offset");
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | append, 0600);
      REQUIRE(fd >= 0);
      REQUIRE(::write(fd, prefix.data(), prefix.size()) == static_cast<ssize_t>(prefix.size()));
      {
        file_writer w(fd, mode, 1.0e30);
        w.put(body);
        w.finish();
        CHECK(w.error() == 0);
        if (can_direct)
          CHECK(w.direct_bytes() >=
                body.size() - file_writer::window - file_writer::slice - 2 * file_writer::align);
        CHECK(::write(fd, "!", 1) == 1);
      }
      ::close(fd);
      const std::string want = prefix + body + '!';
      const std::string got = slurp(out);
      CHECK(got.size() == want.size());
      CHECK(first_difference(got, want) == std::string::npos);
      fs::remove(out);
    }
  }
}
