// Internal: the part of <ranges> qfold uses (range concepts, range_value_t, ranges::begin / end /
// size / data / next), without what <ranges> costs a translation unit on libstdc++.
#pragma once

// libstdc++ (GCC 10 and later) declares all of it in <bits/ranges_base.h>, which <span> includes;
// <ranges> adds views and, through <iterator>'s stream iterators, <streambuf> and <string>: about
// 0.14 s a TU on g++ 12 (bench/README.md, "Include cost"). Other standard libraries get <ranges>.
// The few algorithms qfold needs are in qfold/detail/algorithm.hpp (not <algorithm>, likewise).
#include <span>
#if !defined(__GLIBCXX__)
#include <ranges>
#endif
