// expect: no matching (function|constructor) for [a-z ]* .*qfold::weights_view<float>
// A weights_view has no default weights_kind: conv and linear folds round the bias differently
// (1 ulp apart), so leaving the kind out does not compile.
#include <cstdint>
#include <qfold/fold/batch_norm.hpp>

constexpr float w[2] = {1.0f, 2.0f};
constexpr std::int64_t shape[2] = {2, 1};
constexpr qfold::weights_view<float> view{w, shape, qfold::weight_layout::o_i_s, 1};
