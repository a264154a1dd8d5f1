// libFuzzer target: the bytes as a .tosa file through everything qfold-tosa runs, twice:
//  1. the tool's path: read_model, the checks (problems, non-constant parameters), every pass,
//     the writer, and the output read back and checked;
//  2. an embedding compiler's path: every pass on any file read_model accepts, checks skipped;
//     the adapter alone must keep this safe, and whatever it writes must read back.
// Findings: any crash or sanitizer report; an exception other than std::bad_alloc out of the
// passes (the driver catches the adapter's; a throw means a broken contract); a written file
// that does not read back, or (path 1) breaks a rule its input kept; a graph that did not change
// written as anything but the input's bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <qfold_tosa_fb/graph.hpp>
#include <qfold_tosa_fb/passes.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/write.hpp>
#include <span>
#include <string>
#include <vector>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tosa_fb_fold finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

void fold_and_write(const qfold_tosa_fb::model& m, bool checked) {
  qfold_tosa_fb::graph g(m);
  try {
    (void)qfold_tosa_fb::fold(g);
  } catch (const std::bad_alloc&) {
    return;
  } catch (const std::exception& e) {
    finding(checked ? "fold threw (checked file)" : "fold threw (unchecked file)", e.what());
  }
  if (!g.changed()) {
    if (qfold_tosa_fb::write_bytes(g) !=
        std::vector<std::uint8_t>(m.bytes.begin(), m.bytes.end()))
      finding("an unchanged graph was written as other bytes", "");
    return;
  }
  std::vector<std::uint8_t> out;
  try {
    out = qfold_tosa_fb::write_bytes(g);
  } catch (const qfold_tosa_fb::write_error&) {
    return;  // an attribute table the schema does not know: refused, nothing written
  } catch (const std::bad_alloc&) {
    return;
  }
  try {
    const auto back = qfold_tosa_fb::read_model(out);
    if (checked) {
      const qfold_tosa_fb::graph h(back);
      const auto problems = qfold_tosa_fb::check_graph(h);
      if (!problems.empty()) finding("the folded file breaks a rule", problems.front());
    }
  } catch (const qfold_tosa_fb::bad_file& e) {
    finding("the folded file does not read back", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy at an 8-aligned address, as a mapped file is: the verifier checks alignment.
  std::vector<std::uint64_t> words((size + 7) / 8 + 1);
  auto* bytes = reinterpret_cast<std::uint8_t*>(words.data());
  if (size != 0) std::memcpy(bytes, data, size);
  qfold_tosa_fb::model m;
  try {
    m = qfold_tosa_fb::read_model(std::span<const std::uint8_t>(bytes, size));
  } catch (const qfold_tosa_fb::bad_file&) {
    return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  bool clean = false;
  try {
    const qfold_tosa_fb::graph g(m);
    clean = qfold_tosa_fb::check_graph(g).empty();
  } catch (const std::bad_alloc&) {
    return 0;
  }
  if (clean) fold_and_write(m, true);
  fold_and_write(m, false);
  return 0;
}
