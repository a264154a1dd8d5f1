// expect: rescale_element<In>|satisfy .rescale_element
// rescale_array works on the integer storage types of RESCALE; a float span fails the concept.
#include <array>
#include <qfold/arith/rescale_array.hpp>

std::array<float, 4> in{};
std::array<std::int8_t, 4> out{};
const std::array<qfold::scale_factor, 1> s{{{1 << 30, 30}}};
auto bad = qfold::rescale_array<float, std::int8_t>({}, s, in, out);
