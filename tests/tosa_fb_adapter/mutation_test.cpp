// Hostile bytes: thousands of deterministic mutations (bit flips, bytes set to edge values,
// truncations, spliced copies) of valid files go through what qfold-tosa does (read, check,
// fold, write, read the output back and check it). Each either is refused as bad input or folds
// to a file that reads back clean; none may crash or reach undefined behaviour (the sanitizer
// build runs this under ASan and UBSan). A quick stand-in for the libFuzzer target.
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "tosa_fb/tosa_tool.hpp"
#include "tosa_fb_adapter/tosa_fb_test_support.hpp"

namespace {
using tosa_fb_test::bytes;

// 0: refused as bad input; 1: read, folded, written and read back.
int one(const bytes& b) {
  std::ostringstream errors;
  try {
    const auto m = qfold_tosa_fb_tool::read_checked(b, "mutant", errors);
    const auto r = qfold_tosa_fb_tool::fold_model(m, {}, errors);
    const bytes out(r.output.begin(), r.output.end());
    (void)qfold_tosa_fb_tool::read_checked(out, "output", errors);
    return 1;
  } catch (const qfold_tool::tool_error& e) {
    if (e.code() != qfold_tool::exit_bad_input) throw;  // a write failure here is qfold's bug
    return 0;
  }
}
}  // namespace

TEST_CASE("mutated files are refused or fold cleanly, never anything else") {
  std::mt19937_64 rng(20261206);
  const std::vector<bytes> seeds = {tosa_fb_test::dyt_alpha().build(),
                                    tosa_fb_test::rescale_pair().build(),
                                    tosa_fb_test::dyt_affine().build()};
  int accepted = 0, total = 0;
  for (const bytes& seed : seeds) {
    CHECK(one(seed) == 1);
    for (int k = 0; k < 1500; ++k) {
      bytes b = seed;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % b.size();
        switch (rng() % 5) {
          case 0:
            b[at] = static_cast<std::uint8_t>(b[at] ^ (1u << (rng() % 8)));
            break;
          case 1: {
            constexpr std::uint8_t edge[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe};
            b[at] = edge[rng() % std::size(edge)];
            break;
          }
          case 2:
            b.resize(std::max<std::size_t>(at, 1));
            break;
          case 3: {  // a little-endian int32 set to an edge value
            constexpr std::uint32_t edge[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 256};
            const std::uint32_t v = edge[rng() % std::size(edge)];
            for (std::size_t i = 0; i < 4 && at + i < b.size(); ++i)
              b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
            break;
          }
          default: {  // a run of bytes copied from elsewhere in the file
            const std::size_t from = rng() % b.size(), n = 1 + rng() % 16;
            for (std::size_t i = 0; i < n && at + i < b.size() && from + i < b.size(); ++i)
              b[at + i] = b[from + i];
            break;
          }
        }
      }
      INFO("seed " << &seed - seeds.data() << ", mutant " << k);
      accepted += one(b);
      ++total;
    }
  }
  INFO(accepted << " of " << total << " mutants accepted");
  CHECK(accepted > 0);        // some mutants stay valid (data bytes, names)
  CHECK(accepted < total);    // and most are refused
}
