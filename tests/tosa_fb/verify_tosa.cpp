// Runs the flatbuffers verifier (the code flatc generates from qfold's TOSA 1.0 schema) over
// .tosa files: prints "ok FILE" or "fail FILE" per file; exit 0 when it could read every file.
// Built by check_files.py (flatc --cpp, then the C++ compiler) into a scratch directory.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "tosa_generated.h"

int main(int argc, char** argv) {
  int unreadable = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::printf("unreadable %s\n", argv[i]);
      ++unreadable;
      continue;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    // the verifier checks alignment against the buffer's address: give it an 8-aligned copy,
    // as a reader that maps or allocates the file would
    std::vector<std::uint64_t> aligned((bytes.size() + 7) / 8 + 1);
    if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
    flatbuffers::Verifier verifier(reinterpret_cast<const std::uint8_t*>(aligned.data()),
                                   bytes.size());
    std::printf("%s %s\n", tosa::VerifyTosaGraphBuffer(verifier) ? "ok" : "fail", argv[i]);
  }
  return unreadable == 0 ? 0 : 1;
}
