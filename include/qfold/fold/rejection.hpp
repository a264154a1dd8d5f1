// A fold that cannot be proven exact (or is not applicable) is a rejection, not an error: a reason
// code, a message naming what failed, and where one exists the first element where it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace qfold {

enum class reason : std::uint8_t {
  training_mode = 1,    // batch norm in training mode: statistics are not constants
  not_constant,         // a parameter the fold needs is computed at run time
  shared_output,        // the producer's output has another consumer
  channel_mismatch,     // parameter lengths differ from the channel count
  ambiguous_axis,       // the channel axis cannot be determined (rank, layout, groups)
  non_finite,           // the folded values would contain NaN or infinity
  not_exact,            // the rewrite would change some output code
  unsupported,          // a pattern the fold does not handle (named in the message)
  not_scalar,           // a constant that must be one value (DyT alpha, a scale) is not
  unsupported_rescale,  // a RESCALE that is per channel, unsigned, of the wrong types or invalid
  layout_view,          // a layout view where the pattern allows none (the activation side)
  qparams_mismatch,     // quantization parameters that do not line up (zero point, type, range)
  shared_qparams,       // the quantization to rewrite is shared with other nodes
  out_of_range,         // a folded value leaves its type, or a code leaves a table's input range
  overflow,             // an int32 step of the pattern overflows (the original would too)
  invalid_constant,     // a constant that is zero or not finite where the fold divides by it
  padding,              // a padded convolution: the fold would change the border
  invalid_shape,        // dims that wrap, are negative or empty, or disagree with the data
  adapter_failure,      // an adapter call threw: the site was left (or rolled back) untouched
  allocation_failure,   // memory for the fold's evaluation or plan could not be allocated
  cyclic_graph,         // the graph's operands form a cycle: no pass folds through one
  unsupported_type,     // a constant of an element type the fold does not compute in (named)
};

[[nodiscard]] constexpr std::string_view to_string(reason r) noexcept {
  constexpr std::string_view names[] = {
      "training_mode",  "not_constant",        "shared_output",   "channel_mismatch",
      "ambiguous_axis", "non_finite",          "not_exact",       "unsupported",
      "not_scalar",     "unsupported_rescale", "layout_view",     "qparams_mismatch",
      "shared_qparams", "out_of_range",        "overflow",        "invalid_constant",
      "padding",        "invalid_shape",       "adapter_failure", "allocation_failure",
      "cyclic_graph",   "unsupported_type"};
  const auto i = static_cast<std::size_t>(r) - 1;
  return i < std::size(names) ? names[i] : "unknown";  // std::size: from <string_view>
}

struct rejection {
  static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
  qfold::reason code{};
  std::string_view message{};
  // The first element that fails: a channel, a weight, or an input code's table entry (code - first
  // code of the type, e.g. code + 128 for int8).
  std::size_t index = no_index;
};

}  // namespace qfold
