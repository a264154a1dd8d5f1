// Internal: the few algorithms qfold uses (std::min / max, a find, an equality of two ranges, a
// sort and a binary search by key), without what <algorithm> costs a translation unit.
#pragma once

// <algorithm> on libstdc++ 12 is about 0.05-0.1 s a TU on g++ (its range algorithms, parallel
// overloads and the rest of <bits/stl_algo.h>; bench/README.md, "Include cost"). std::min and
// std::max are declared in <bits/stl_algobase.h>, which <vector>, <array> and <string_view>
// include anyway, and the heap algorithms in <bits/stl_heap.h>. Other standard libraries get
// <algorithm>.
#if defined(__GLIBCXX__)
#include <bits/stl_algobase.h>
#include <bits/stl_heap.h>
#endif
#if !defined(__GLIBCXX__)
#include <algorithm>
#endif

namespace qfold::detail {

// The first element equal to v, or last (std::find).
template <class It, class S, class T>
[[nodiscard]] constexpr It find(It first, S last, const T& v) {
  for (; first != last; ++first)
    if (*first == v) break;
  return first;
}

// Whether the range r holds an element equal to v.
// (A range-for, not std::ranges::begin / end: their concept checks cost each new range type.)
template <class R, class T>
[[nodiscard]] constexpr bool contains(const R& r, const T& v) {
  for (const auto& e : r)
    if (e == v) return true;
  return false;
}

// The first element for which pred holds, or last (std::find_if).
template <class It, class S, class Pred>
[[nodiscard]] constexpr It find_if(It first, S last, Pred pred) {
  for (; first != last; ++first)
    if (pred(*first)) break;
  return first;
}

// Two ranges with size() of the same length and equal elements (std::ranges::equal).
template <class A, class B>
[[nodiscard]] constexpr bool equal(const A& a, const B& b) {
  if (a.size() != b.size()) return false;
  auto j = b.begin();
  for (const auto& e : a)
    if (!(e == *j++)) return false;
  return true;
}

// Sorts [first, last) by key(element) < key(element), in O(n log n) and not stably (as std::sort;
// a heap sort, since std::sort lives in <bits/stl_algo.h>).
template <class It, class Key>
constexpr void sort_by(It first, It last, Key key) {
  const auto less = [&](const auto& a, const auto& b) { return key(a) < key(b); };
  std::make_heap(first, last, less);
  std::sort_heap(first, last, less);
}

// The first element of [first, last), sorted by key, whose key is not less than v
// (std::lower_bound with a projection).
template <class It, class T, class Key>
[[nodiscard]] constexpr It lower_bound_by(It first, It last, const T& v, Key key) {
  auto n = last - first;
  while (n > 0) {
    const auto half = n / 2;
    const It mid = first + half;
    if (key(*mid) < v) {
      first = mid + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return first;
}

}  // namespace qfold::detail
