// A fold that cannot be proven exact (or is not applicable) is a rejection, not an error: a reason
// code, a message naming what failed, and where one exists the first element where it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace qfold {

enum class reason : std::uint8_t {
  training_mode = 1,  // batch norm in training mode: statistics are not constants
  not_constant,       // a parameter the fold needs is computed at run time
  shared_output,      // the producer's output has another consumer
  channel_mismatch,   // parameter lengths differ from the channel count
  ambiguous_axis,     // the channel axis cannot be determined (rank, layout, groups)
  non_finite,         // the folded values would contain NaN or infinity
  not_exact,          // the rewrite would change some output code
  unsupported,        // a pattern the fold does not handle (named in the message)
};

[[nodiscard]] constexpr std::string_view to_string(reason r) noexcept {
  constexpr std::string_view names[] = {"training_mode",    "not_constant",   "shared_output",
                                        "channel_mismatch", "ambiguous_axis", "non_finite",
                                        "not_exact",        "unsupported"};
  const auto i = static_cast<std::size_t>(r) - 1;
  return i < std::size(names) ? names[i] : "unknown";
}

struct rejection {
  static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
  qfold::reason code{};
  std::string_view message{};
  std::size_t index = no_index;  // the first element (channel, weight, input code) that fails
};

}  // namespace qfold
