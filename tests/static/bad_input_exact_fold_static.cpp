// Hostile input to exact/ and fold/ in constant evaluation (issue 11): sizes that would wrap are
// refused with the same codes at compile time as at run time, on g++ and clang++.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <qfold/exact/domain.hpp>
#include <qfold/exact/merge.hpp>
#include <qfold/fold/batch_norm.hpp>
#include <span>

namespace {
using i64 = std::int64_t;
constexpr i64 i64_min = std::numeric_limits<i64>::min(), i64_max = std::numeric_limits<i64>::max();
constexpr qfold::domain whole{i64_min, i64_max};

// The whole int64 range has 2^64 codes: never size 0, never enumerated.
static_assert(whole.count() == static_cast<qfold::detail::wide_uint>(1) << 64);
static_assert(whole.size() == std::numeric_limits<std::size_t>::max() && !whole.enumerable());
static_assert(qfold::domain{i64_max, i64_min}.count() == 0);
static_assert(qfold::uint16_domain.enumerable() && !qfold::domain{0, 65536}.enumerable());

constexpr auto identity = [](i64 x) { return x; };
static_assert(qfold::checked::tabulate(whole, identity).error().code == qfold::errc::size_overflow);
static_assert(qfold::checked::tabulate(qfold::domain{1, 0}, identity).error().code ==
              qfold::errc::empty_range);
static_assert(qfold::checked::tabulate(qfold::domain{i64_max - 1, i64_max}, identity)->back() ==
              i64_max);

constexpr qfold::rescale_space i32_space{.input_type = qfold::int_type::i32,
                                         .output_type = qfold::int_type::i32};
static_assert(qfold::merge_rescales(whole, {}, i32_space).error().code ==
              qfold::errc::size_overflow);
static_assert(qfold::merge_rescales(qfold::domain{0, -1}, {}, i32_space).error().code ==
              qfold::errc::empty_range);

// fit_line: slope 2^64 - 1 fits no int64 line; the miss is the second point.
constexpr std::array<i64, 2> fx{0, 1}, fy{i64_min, i64_max};
static_assert(!qfold::fit_line(fx, fy).line && qfold::fit_line(fx, fy).miss->input == 1);

// Batch norm over ConvTranspose dims (2^62 + 1, 4) and 4 floats: 4 (2^62 + 1) wraps to 4 in 64
// bits; the checked product refuses it. The same data with dims (1, 4) folds.
constexpr std::optional<qfold::reason> batch_norm(i64 dim0, i64 dim1) {
  const std::array<float, 4> w{1, 2, 3, 4}, ones{1, 1, 1, 1}, zeros{};
  const std::array<i64, 2> shape{dim0, dim1};
  std::array<float, 4> fw{}, fb{};
  const auto r = qfold::fold_batch_norm(qfold::conv_weights(w, shape, qfold::weight_layout::i_o_s),
                                        {}, {zeros, ones, ones, zeros, 1e-5f, false}, fw, fb);
  return r ? std::optional<qfold::reason>(r->code) : std::nullopt;
}
static_assert(batch_norm((i64{1} << 62) + 1, 4) == qfold::reason::invalid_shape);
static_assert(batch_norm(-1, 4) == qfold::reason::invalid_shape);
static_assert(!batch_norm(1, 4));

// An empty gamma is refused, never folded as ones.
constexpr qfold::reason empty_gamma() {
  const std::array<float, 2> w{1, 2}, ones{1, 1}, zeros{};
  const std::array<i64, 2> shape{2, 1};
  std::array<float, 2> fw{}, fb{};
  return qfold::fold_batch_norm(qfold::conv_weights(w, shape), {},
                                {zeros, ones, {}, zeros, 1e-5f, false}, fw, fb)
      ->code;
}
static_assert(empty_gamma() == qfold::reason::invalid_shape);
}  // namespace
