// DyT's alpha folded into the tanh table that follows it: TABLE_tanh(RESCALE_i8(MUL(
// RESCALE_i32(act), RESCALE_i32(alpha)))) becomes one int8 TABLE indexed by the activation code,
// built by replaying the exact integer RESCALE and MUL arithmetic over every activation code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "qfold/arith/mul.hpp"
#include "qfold/arith/rescale.hpp"
#include "qfold/arith/rescale_array.hpp"
#include "qfold/exact/domain.hpp"
#include "qfold/fold/rejection.hpp"
#include "qfold/quant/qparams.hpp"

namespace qfold {

struct dyt_alpha_site {
  domain activation;                        // the activation's codes [qmin, qmax] (int8)
  rescale_view activation_rescale;          // int8 activation -> int32
  rescale_view alpha_rescale;               // int8 alpha -> int32
  std::int64_t alpha = 0;                   // alpha's int8 code
  int mul_shift = 0;                        // TOSA MUL shift (0: the product wraps)
  rescale_view output_rescale;              // int32 -> int8 (the tanh table's input)
  domain tanh_input;                        // the tanh table's declared input codes [qmin, qmax]
  std::span<const std::int8_t> tanh_table;  // 256 entries, entry i for code i - 128
};

namespace detail {
// The DyT patterns accept only per-tensor, signed RESCALEs of the given types, valid as TOSA
// defines them (the ExecuTorch passes' guard, plus the spec's ERROR_IF list).
[[nodiscard]] constexpr std::optional<rejection> check_rescale(const rescale_view& r, int_type in,
                                                               int_type out,
                                                               std::string_view what) {
  const rescale_attributes& a = r.attributes;
  if (a.per_channel || r.scales.size() != 1)
    return rejection{reason::unsupported_rescale, "a RESCALE of the pattern is per channel"};
  if (a.input_unsigned || a.output_unsigned)
    return rejection{reason::unsupported_rescale, "a RESCALE of the pattern is unsigned"};
  if (a.input_type != in || a.output_type != out || !is_bit_exact(a) || !validate(a) ||
      !validate(a, r.scales[0]))
    return rejection{reason::unsupported_rescale, what};
  return std::nullopt;
}

// A site's int8 code range: inside int8 and not empty.
[[nodiscard]] constexpr bool is_int8_range(domain d) noexcept {
  return d.lo <= d.hi && int8_domain.contains(d.lo) && int8_domain.contains(d.hi);
}
}  // namespace detail

// The zero points and types on both ends of the alpha pattern line up: the activation (its
// qparams) is what the first RESCALE reads, and the tanh table reads what the last one writes.
// The rewrite gives the new table the activation's input and the tanh's output quantization, so a
// mismatch there would make that metadata lie even when the codes are right.
[[nodiscard]] constexpr std::optional<rejection> dyt_alpha_qparams_line_up(
    const qparams& activation, const rescale_view& activation_rescale, const qparams& tanh_input,
    const rescale_view& output_rescale) {
  if (activation.type != dtype::int8 || tanh_input.type != dtype::int8)
    return rejection{reason::qparams_mismatch, "the activation or the tanh input is not int8"};
  if (activation.zero_point != activation_rescale.attributes.input_zp)
    return rejection{reason::qparams_mismatch,
                     "the activation's zero point differs from its RESCALE's input_zp"};
  if (tanh_input.zero_point != output_rescale.attributes.output_zp)
    return rejection{reason::qparams_mismatch,
                     "the tanh input's zero point differs from the RESCALE's output_zp"};
  return std::nullopt;
}

// The folded table (entry i for activation code i - 128; codes outside `activation` copy the
// nearest edge entry, as ExecuTorch's tables do), or why not. Exact by construction: each entry
// is the original pattern evaluated on that code. Rejections: a RESCALE that is per channel,
// unsigned, of the wrong types or invalid; an alpha or a range outside int8; a MUL whose shifted
// product leaves int32 (the original is then in error); a code the output RESCALE produces that
// lies outside the tanh table's declared input range (its entries there are not defined by its
// quantization, so the fold would bake arbitrary values in).
[[nodiscard]] constexpr std::optional<rejection> fold_dyt_alpha(const dyt_alpha_site& s,
                                                                std::span<std::int8_t, 256> out) {
  if (s.tanh_table.size() != 256)
    return rejection{reason::invalid_shape, "the tanh table does not have 256 int8 entries"};
  if (auto r = detail::check_rescale(s.activation_rescale, int_type::i8, int_type::i32,
                                     "the activation RESCALE is not a valid int8 -> int32 one"))
    return r;
  if (auto r = detail::check_rescale(s.alpha_rescale, int_type::i8, int_type::i32,
                                     "the alpha RESCALE is not a valid int8 -> int32 one"))
    return r;
  if (auto r = detail::check_rescale(s.output_rescale, int_type::i32, int_type::i8,
                                     "the output RESCALE is not a valid int32 -> int8 one"))
    return r;
  if (!detail::is_int8_range(s.activation) || !detail::is_int8_range(s.tanh_input))
    return rejection{reason::qparams_mismatch,
                     "the activation or tanh input range is empty or not inside int8"};
  if (!int8_domain.contains(s.alpha))
    return rejection{reason::out_of_range, "alpha's code is not an int8"};
  if (s.mul_shift < 0 || s.mul_shift > 63)
    return rejection{reason::unsupported, "MUL shift outside 0..63"};

  // Each RESCALE passed check_rescale (validated): each is evaluated by its kernel.
  const auto alpha32 = detail::rescale_validated(
      s.alpha_rescale.attributes, s.alpha_rescale.scales[0], s.alpha, zero_point_add::checked);
  if (!alpha32) return rejection{reason::unsupported_rescale, "the alpha RESCALE fails on alpha"};
  const detail::rescale_evaluator activation_r(s.activation_rescale.attributes,
                                               s.activation_rescale.scales[0]);
  const detail::rescale_evaluator output_r(s.output_rescale.attributes, s.output_rescale.scales[0]);
  for (std::int64_t c = s.activation.lo; c <= s.activation.hi; ++c) {
    const auto entry = static_cast<std::size_t>(c + 128);
    const auto a32 = activation_r(c);
    if (!a32)
      return rejection{reason::unsupported_rescale, "the activation RESCALE fails on a code",
                       entry};
    const auto p = checked::mul<std::int32_t>(*a32, *alpha32, s.mul_shift);
    if (!p) return rejection{reason::overflow, "the MUL's shifted product leaves int32", entry};
    const auto q = output_r(*p);
    if (!q) return rejection{reason::unsupported_rescale, "the output RESCALE fails", entry};
    if (!s.tanh_input.contains(*q))
      return rejection{reason::out_of_range,
                       "a rescaled code leaves the tanh table's declared input range", entry};
    out[entry] = s.tanh_table[static_cast<std::size_t>(*q + 128)];
  }
  const auto first = static_cast<std::size_t>(s.activation.lo + 128);
  const auto last = static_cast<std::size_t>(s.activation.hi + 128);
  for (std::size_t i = 0; i < first; ++i) out[i] = out[first];
  for (std::size_t i = last + 1; i < 256; ++i) out[i] = out[last];
  return std::nullopt;
}

}  // namespace qfold
