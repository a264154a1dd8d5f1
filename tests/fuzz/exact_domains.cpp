// libFuzzer target: qfold's exact/ layer (classify, synthesize_rescale, rescale_shifts,
// merge_rescales, fit_line, domain sizes and checked::tabulate) on arbitrary domains, maps and
// RESCALE parameters. No input may crash or reach undefined behaviour, and every answer that
// claims something is re-checked here without qfold's own arithmetic: lines and clamps in 128
// bits, RESCALE certificates and chains with the independent reference
// (tests/reference/spec_reference.hpp via tests/exact_support.hpp) on every input of the domain.
//
// Input format (little endian; reads past the end give 0, so every input is valid):
//   byte 0          what to run: % 5 -> 0 classify, 1 synthesize + rescale_shifts, 2 merge,
//                   3 fit_line, 4 domain sizes + checked::tabulate
//   domain          1 byte mode (bits 0-1: lo = small int16 / raw int64 / near an int64 end /
//                   an 8- or 16-bit type's range; bits 2-3: hi = lo + (u16 % 300) / raw int64 /
//                   below lo (inverted) / INT64_MAX), then the int64s the modes read
//   space           input type, output type (1 byte each: < 240 picks i8/i16/i32/i48 by % 4,
//                   else the raw byte: an unknown int_type), flags byte (bit 0 input unsigned,
//                   1 output unsigned, 2 scale16, 3 no double round), count of input zero
//                   points (% 4) and that many int16s
//   map y           1 byte mode (% 4: raw int64s, a line a x + b, a reference RESCALE, a clamped
//                   line) and its parameters; then 1 byte: odd -> one entry changed by an int8
//   merge chain     count (% 4), then per step 1 byte kind (% 5: rescale, mul, add, clamp,
//                   table) and its fields
// Seeds: tests/fuzz/corpus/exact_domains/ (made by tests/fuzz/corpus/make_exact_fold_seeds.py).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <qfold/exact/classify.hpp>
#include <qfold/exact/domain.hpp>
#include <qfold/exact/merge.hpp>
#include <qfold/exact/synthesize.hpp>
#include <span>
#include <vector>

#include "exact_support.hpp"
#include "fuzz/fuzz_input.hpp"

namespace {
using qfold::rescale_attributes;
using qfold::rescale_space;
__extension__ typedef __int128 i128;
constexpr i64 i64_min = std::numeric_limits<i64>::min(), i64_max = std::numeric_limits<i64>::max();
constexpr std::size_t max_checked = 4096;  // maps up to this size are built and checked in full

i64 saturate(i128 v) { return v < i64_min ? i64_min : v > i64_max ? i64_max : static_cast<i64>(v); }

domain read_domain(fuzz::input& in) {
  const std::uint8_t mode = in.byte();
  i64 lo = 0;
  switch (mode & 3) {
    case 0:
      lo = in.i16();
      break;
    case 1:
      lo = in.i64();
      break;
    case 2:  // within 255 of an int64 end
      lo = in.flag() ? i64_min + (in.i8() + 128) : i64_max - (in.i8() + 128);
      break;
    default: {
      const std::array<domain, 4> types{qfold::int8_domain, qfold::uint8_domain,
                                        qfold::int16_domain, qfold::uint16_domain};
      const domain t = types[in.byte() % 4];
      lo = t.lo + static_cast<i64>(in.bits(2) % static_cast<std::uint64_t>(t.hi - t.lo + 1));
      const i64 hi = std::min(t.hi, lo + static_cast<i64>(in.bits(2) % 300));
      return in.flag() ? t : domain{lo, hi};
    }
  }
  i64 hi = 0;
  switch ((mode >> 2) & 3) {
    case 0:
      hi = saturate(i128{lo} + static_cast<i64>(in.bits(2) % 300));
      break;
    case 1:
      hi = in.i64();
      break;
    case 2:
      hi = saturate(i128{lo} - 1 - in.byte());
      break;
    default:
      hi = i64_max;
      break;
  }
  return {lo, hi};
}

int_type read_type(fuzz::input& in) {
  const std::uint8_t b = in.byte();
  if (b >= 240) return static_cast<int_type>(b);  // not an enumerator: must be refused, no UB
  return std::array<int_type, 4>{int_type::i8, int_type::i16, int_type::i32, int_type::i48}[b % 4];
}

struct space_data {
  std::vector<i64> izps;
  rescale_space space;
};
space_data read_space(fuzz::input& in) {
  space_data s;
  s.space.input_type = read_type(in);
  s.space.output_type = read_type(in);
  const std::uint8_t f = in.byte();
  s.space.input_unsigned = (f & 1) != 0;
  s.space.output_unsigned = (f & 2) != 0;
  s.space.scale32 = (f & 4) == 0;
  s.space.allow_double_round = (f & 8) == 0;
  const std::size_t n = in.count(3);
  for (std::size_t i = 0; i < n; ++i) s.izps.push_back(in.i16());
  return s;
}
void bind(space_data& s) { s.space.input_zero_points = s.izps; }

qfold::rounding_mode read_rounding(fuzz::input& in) {
  const std::uint8_t b = in.byte();
  return b < 250 ? std::array<qfold::rounding_mode, 3>{qfold::rounding_mode::single_round,
                                                       qfold::rounding_mode::double_round,
                                                       qfold::rounding_mode::inexact_round}[b % 3]
                 : static_cast<qfold::rounding_mode>(b);
}

rescale_attributes read_attributes(fuzz::input& in) {
  rescale_attributes a;
  a.input_type = read_type(in);
  a.output_type = read_type(in);
  const std::uint8_t f = in.byte();
  a.scale32 = (f & 1) == 0;
  a.input_unsigned = (f & 2) != 0;
  a.output_unsigned = (f & 4) != 0;
  a.rounding = read_rounding(in);
  a.input_zp = (f & 8) != 0 ? in.i64() : in.i8();
  a.output_zp = (f & 16) != 0 ? in.i64() : in.i8();
  return a;
}
qfold::scale_factor read_scale(fuzz::input& in) {
  const std::int32_t m = in.i32();
  const int shift = static_cast<int>(in.byte()) % 70 - 3;  // around 2..62, some illegal
  return {m, shift};
}

// The map: y[i] for input d.lo + i; `from` says which RESCALE made it (mode 2, unperturbed).
struct map_data {
  std::vector<i64> y;
  std::optional<qfold::rescale_certificate> from;
};
map_data read_map(fuzz::input& in, domain d, std::size_t n) {
  map_data m;
  const std::uint8_t mode = in.byte() % 4;
  if (mode == 0) {
    for (std::size_t i = 0; i < n; ++i) m.y.push_back(in.flag() ? in.i64() : in.i8());
  } else if (mode == 1 || mode == 3) {
    const i64 a = in.flag() ? in.i64() : in.i8(), b = in.flag() ? in.i64() : in.i16();
    i64 clo = i64_min, chi = i64_max;
    if (mode == 3) {
      clo = in.i16();
      chi = clo + static_cast<i64>(in.bits(2));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const i64 x = d.lo + static_cast<i64>(i);
      m.y.push_back(std::clamp(saturate(i128{a} * x + b), clo, chi));
    }
  } else {
    // A RESCALE that is usually legal: i8 / i16 input, i8 / i16 / i32 output, zero points
    // where the type allows them, a shift 2..62 and a multiplier of any magnitude.
    rescale_attributes a;
    const std::uint8_t f = in.byte();
    a.input_type = (f & 1) != 0 ? int_type::i8 : int_type::i16;
    a.output_type =
        std::array<int_type, 3>{int_type::i8, int_type::i16, int_type::i32}[(f >> 1) % 3];
    a.scale32 = (f & 8) == 0;
    a.rounding = (f & 16) != 0 && a.scale32 ? qfold::rounding_mode::double_round
                                            : qfold::rounding_mode::single_round;
    a.input_unsigned = (f & 32) != 0 && a.input_type == int_type::i8;
    a.output_unsigned = (f & 64) != 0 && !a.input_unsigned && a.output_type == int_type::i8;
    if (a.input_type == int_type::i8) a.input_zp = a.input_unsigned ? in.byte() : in.i8();
    if (a.output_type == int_type::i8) a.output_zp = a.output_unsigned ? in.byte() : in.i8();
    const auto mult = static_cast<std::int32_t>(
        a.scale32 ? (in.bits(4) & 0x7fffffff) >> in.count(31) : in.bits(2) & 0x7fff);
    const qfold::scale_factor s{mult, 2 + static_cast<int>(in.byte() % 61)};
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = ref_rescale(a, s.multiplier, s.shift, d.lo + static_cast<i64>(i));
      ok = ok && v.has_value();
      m.y.push_back(v.value_or(0));
    }
    if (ok && n > 0 && qfold::detail::known_type(a.output_type) && a.output_type != int_type::i48 &&
        a.rounding != qfold::rounding_mode::inexact_round)
      m.from = qfold::rescale_certificate{a, s};
  }
  if (in.flag() && !m.y.empty()) {
    const std::size_t k = static_cast<std::size_t>(in.bits(2)) % m.y.size();
    const i64 delta = in.i8();
    m.y[k] = saturate(i128{m.y[k]} + delta);
    if (delta != 0) m.from.reset();
  }
  return m;
}

i64 at(domain d, std::span<const i64> y, i64 x) {
  return y[static_cast<std::size_t>(static_cast<std::uint64_t>(x) -
                                    static_cast<std::uint64_t>(d.lo))];
}

void check_witness(domain d, std::span<const i64> y, const std::optional<qfold::witness>& w) {
  if (!w) return;
  fuzz::check(d.contains(w->input), "witness outside the domain");
  fuzz::check(at(d, y, w->input) == w->expected, "witness: expected is not the map's value");
  fuzz::check(w->actual != w->expected, "witness: the candidate agrees there");
}

void check_certificate(domain d, std::span<const i64> y, const qfold::rescale_certificate& c,
                       const rescale_space& space) {
  const auto& a = c.attributes;
  fuzz::check(a.input_type == space.input_type && a.output_type == space.output_type &&
                  a.input_unsigned == space.input_unsigned &&
                  a.output_unsigned == space.output_unsigned && a.scale32 == space.scale32,
              "certificate outside its space");
  fuzz::check(space.allow_double_round || a.rounding != qfold::rounding_mode::double_round,
              "certificate uses DOUBLE_ROUND without permission");
  const bool izp_ok =
      space.input_zero_points.empty()
          ? a.input_zp == 0
          : std::find(space.input_zero_points.begin(), space.input_zero_points.end(), a.input_zp) !=
                space.input_zero_points.end();
  fuzz::check(izp_ok, "certificate input zero point not offered");
  fuzz::check(ref_reproduces(d, y, c), "certificate does not reproduce the map (reference)");
}

bool is_line(domain d, std::span<const i64> y, const qfold::affine_map& l) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (i128{l.slope} * (d.lo + static_cast<i64>(i)) + l.offset != y[i]) return false;
  return true;
}

// Is the RESCALE that made the map one that `space` offers?
bool in_space(const qfold::rescale_certificate& c, const rescale_space& space) {
  const auto& a = c.attributes;
  const bool izp_ok =
      space.input_zero_points.empty()
          ? a.input_zp == 0
          : std::find(space.input_zero_points.begin(), space.input_zero_points.end(), a.input_zp) !=
                space.input_zero_points.end();
  return izp_ok && a.input_type == space.input_type && a.output_type == space.output_type &&
         a.input_unsigned == space.input_unsigned && a.output_unsigned == space.output_unsigned &&
         a.scale32 == space.scale32 &&
         (a.rounding == qfold::rounding_mode::single_round ||
          (a.rounding == qfold::rounding_mode::double_round && space.allow_double_round));
}

void run_classify(fuzz::input& in) {
  const domain d = read_domain(in);
  space_data s = read_space(in);
  bind(s);
  const bool with_space = in.flag();
  if (d.count() > max_checked) {  // no map of that size: a map of the wrong size is refused
    const std::vector<i64> y(3, 1);
    const auto c = qfold::classify(d, y, with_space ? &s.space : nullptr);
    fuzz::check(c.kind == qfold::map_kind::none && !c.rescale, "classify: wrong-size map");
    return;
  }
  const map_data m = read_map(in, d, d.size());
  const auto c = qfold::classify(d, m.y, with_space ? &s.space : nullptr);
  if (m.y.empty()) {
    fuzz::check(c.kind == qfold::map_kind::none, "classify: empty map");
    return;
  }
  using k = qfold::map_kind;
  if (c.kind == k::identity || c.kind == k::constant || c.kind == k::affine) {
    fuzz::check(is_line(d, m.y, c.affine), "classify: the line misses a point");
    fuzz::check(c.kind != k::identity || c.affine == qfold::affine_map{1, 0}, "identity");
    fuzz::check(c.kind != k::constant || c.affine.slope == 0, "constant");
  }
  if (c.kind == k::rescale) fuzz::check(c.rescale.has_value(), "rescale kind without certificate");
  if (c.rescale) check_certificate(d, m.y, *c.rescale, s.space);
  if (c.kind == k::saturated_affine) {
    const auto& sat = c.saturated;
    for (std::size_t i = 0; i < m.y.size(); ++i) {
      const i128 v = i128{sat.line.slope} * (d.lo + static_cast<i64>(i)) + sat.line.offset;
      const i128 clamped = v < sat.lo ? sat.lo : v > sat.hi ? sat.hi : v;
      fuzz::check(clamped == m.y[i], "classify: the clamped line misses a point");
    }
  }
  check_witness(d, m.y, c.affine_miss);
  check_witness(d, m.y, c.saturated_miss);
  check_witness(d, m.y, c.rescale_miss);
  // Completeness for lines: the line through the first two points, when it fits int64 and goes
  // through every point, must be found.
  if (m.y.size() >= 2) {
    const i128 slope = i128{m.y[1]} - m.y[0], offset = m.y[0] - slope * d.lo;
    if (slope >= i64_min && slope <= i64_max && offset >= i64_min && offset <= i64_max &&
        is_line(d, m.y, {static_cast<i64>(slope), static_cast<i64>(offset)}))
      fuzz::check(c.kind == k::identity || c.kind == k::constant || c.kind == k::affine,
                  "classify: an exact line was not recognised");
  }
  if (with_space && m.from && in_space(*m.from, s.space))
    fuzz::check(c.rescale.has_value(), "classify: a RESCALE of the space was not found");
}

void run_synthesize(fuzz::input& in) {
  const domain d = read_domain(in);
  space_data s = read_space(in);
  if (in.flag() && d.count() <= max_checked) {  // steer toward the map's own RESCALE's space
    s.space.input_type = int_type::i8;
  }
  const std::size_t n = d.count() <= max_checked ? d.size() : 0;
  map_data m = read_map(in, d, n);
  if (m.from && in.flag()) {  // offer exactly the making RESCALE's space
    const auto& a = m.from->attributes;
    s.space.input_type = a.input_type;
    s.space.output_type = a.output_type;
    s.space.input_unsigned = a.input_unsigned;
    s.space.output_unsigned = a.output_unsigned;
    s.space.scale32 = a.scale32;
    s.izps.push_back(a.input_zp);
  }
  bind(s);
  const auto c = qfold::synthesize_rescale(d, m.y, s.space);
  if (n == 0) {
    fuzz::check(!c.has_value(), "synthesize: a certificate for no map");
    return;
  }
  if (c) check_certificate(d, m.y, *c, s.space);
  if (m.from && in_space(*m.from, s.space)) {
    // The making RESCALE is one answer, so the smallest exists and is no larger.
    fuzz::check(c.has_value(), "synthesize: missed a RESCALE of the space");
    const auto& f = m.from->scale;
    fuzz::check(c->scale.shift < f.shift ||
                    (c->scale.shift == f.shift && c->scale.multiplier <= f.multiplier),
                "synthesize: not the smallest");
  }
  // rescale_shifts: both ends of every non-empty interval reproduce the map.
  const i64 izp = s.izps.empty() ? 0 : s.izps.front();
  const i64 ozp = in.i8();
  const bool dr = in.flag();
  const auto shifts = qfold::rescale_shifts(d, m.y, s.space, izp, ozp, dr);
  const rescale_attributes a{
      s.space.input_type,
      s.space.output_type,
      s.space.scale32,
      dr ? qfold::rounding_mode::double_round : qfold::rounding_mode::single_round,
      false,
      s.space.input_unsigned,
      s.space.output_unsigned,
      izp,
      ozp};
  for (int sh = 0; sh <= 62; ++sh) {
    const auto& r = shifts[static_cast<std::size_t>(sh)];
    if (r.empty()) continue;
    fuzz::check(sh >= 2 && r.lo >= 0, "rescale_shifts: an interval at an illegal shift");
    for (const i64 mult : {r.lo, r.hi})
      fuzz::check(ref_reproduces(d, m.y, {a, {static_cast<std::int32_t>(mult), sh}}),
                  "rescale_shifts: an interval end does not reproduce the map");
  }
}

std::vector<qfold::chain::step> read_chain(fuzz::input& in) {
  namespace chain = qfold::chain;
  std::vector<chain::step> steps;
  const std::size_t n = in.count(3);
  for (std::size_t k = 0; k < n; ++k) {
    switch (in.byte() % 5) {
      case 0: {
        const rescale_attributes a = read_attributes(in);
        steps.emplace_back(chain::rescale{a, read_scale(in)});
        break;
      }
      case 1: {
        const std::int32_t c = in.flag() ? in.i32() : static_cast<std::int32_t>(in.i8());
        const int shift = static_cast<int>(in.i8());
        steps.emplace_back(chain::mul{c, shift, in.flag()});
        break;
      }
      case 2:
        steps.emplace_back(chain::add{in.flag() ? in.i32() : static_cast<std::int32_t>(in.i8())});
        break;
      case 3: {
        const i64 lo = in.flag() ? in.i64() : in.i16();
        steps.emplace_back(chain::clamp{lo, in.flag() ? in.i64() : in.i16()});
        break;
      }
      default: {
        chain::table t{};
        for (auto& v : t.values) v = static_cast<std::int32_t>(in.i8());
        t.first_code = static_cast<std::int32_t>(in.i16());
        steps.emplace_back(t);
        break;
      }
    }
  }
  return steps;
}

// The chain by the reference (rescale, MUL) and plain 128-bit arithmetic (add, clamp, table).
std::optional<i64> ref_chain(std::span<const qfold::chain::step> steps, i64 x) {
  namespace chain = qfold::chain;
  for (const auto& s : steps) {
    if (const auto* r = std::get_if<chain::rescale>(&s)) {
      const auto v = ref_rescale(r->attributes, r->scale.multiplier, r->scale.shift, x);
      if (!v) return std::nullopt;  // INEXACT_ROUND: evaluated as SINGLE_ROUND, as qfold does
      x = *v;
    } else if (const auto* m = std::get_if<chain::mul>(&s)) {
      if (x < std::numeric_limits<std::int32_t>::min() ||
          x > std::numeric_limits<std::int32_t>::max())
        return std::nullopt;
      if (m->shift == 0 && !m->wrap && !qref::fits_int32(i128{x} * m->constant))
        return std::nullopt;
      const auto v = qref::tosa_mul(qref::DType::i32, x, m->constant, m->shift);
      if (!v.ok) return std::nullopt;
      x = v.value;
    } else if (const auto* a = std::get_if<chain::add>(&s)) {
      const i128 v = i128{x} + a->constant;
      if (!qref::fits_int32(x) || !qref::fits_int32(v)) return std::nullopt;
      x = static_cast<i64>(v);
    } else if (const auto* c = std::get_if<chain::clamp>(&s)) {
      x = x < c->lo ? c->lo : x > c->hi ? c->hi : x;  // lo first, as qfold::clamp (any lo, hi)
    } else if (const auto* t = std::get_if<chain::table>(&s)) {
      const i128 i = i128{x} - t->first_code;
      if (i < 0 || i > 255) return std::nullopt;
      x = t->values[static_cast<std::size_t>(i)];
    }
  }
  return x;
}

void run_merge(fuzz::input& in) {
  const domain d = read_domain(in);
  space_data s = read_space(in);
  bind(s);
  const auto steps = read_chain(in);
  if (d.count() > max_checked && d.count() <= qfold::max_enumerated_codes) return;  // slow only
  const auto r = qfold::merge_rescales(d, steps, s.space);
  if (d.empty()) {
    fuzz::check(!r && r.error().code == qfold::errc::empty_range, "merge: empty domain");
    return;
  }
  if (d.count() > qfold::max_enumerated_codes) {
    fuzz::check(!r && r.error().code == qfold::errc::size_overflow, "merge: huge domain");
    return;
  }
  if (!r) {
    fuzz::check(r.error().code != qfold::errc::size_overflow,
                "merge: size_overflow on a small domain");
    return;
  }
  std::vector<i64> y;
  for (i64 x = d.lo;; ++x) {
    const auto v = ref_chain(steps, x);
    fuzz::check(v.has_value(), "merge: accepted a chain the reference fails on");
    y.push_back(*v);
    if (x == d.hi) break;
  }
  if (r->merged) check_certificate(d, y, *r->merged, s.space);
  // The reported deviation bounds the naive merge's real one, and the first difference is real.
  bool naive_fails = false;
  i128 worst = 0;
  std::optional<i64> first;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const i64 x = d.lo + static_cast<i64>(i);
    const auto n =
        ref_rescale(r->naive.attributes, r->naive.scale.multiplier, r->naive.scale.shift, x);
    if (!n) {
      naive_fails = true;
      if (!first) first = x;
      continue;
    }
    const i128 dev = *n > y[i] ? i128{*n} - y[i] : i128{y[i]} - *n;
    if (dev != 0 && !first) first = x;
    worst = std::max(worst, dev);
  }
  if (naive_fails) {
    fuzz::check(r->max_deviation == i64_max, "merge: a failing naive merge has a finite deviation");
  } else {
    fuzz::check(i128{r->max_deviation} == std::min<i128>(worst, i64_max), "merge: wrong deviation");
  }
  fuzz::check(first.has_value() == r->first_difference.has_value() &&
                  (!first || r->first_difference->input == *first),
              "merge: wrong first difference");
}

void run_fit_line(fuzz::input& in) {
  const std::size_t n = in.count(40);
  const std::uint8_t mode = in.byte();
  std::vector<i64> x, y;
  i64 next = mode & 1 ? in.i64() : in.i16();
  const i64 a = mode & 2 ? in.i64() : in.i8(), b = mode & 4 ? in.i64() : in.i16();
  for (std::size_t i = 0; i < n; ++i) {
    x.push_back(next);
    const i64 step = mode & 8 ? in.i64() : static_cast<i64>(in.byte());  // may repeat or fall
    next = saturate(i128{next} + step);
    y.push_back(mode & 16 ? in.i64() : saturate(i128{a} * x.back() + b));
  }
  const auto f = qfold::fit_line(x, y);
  bool increasing = !x.empty();
  for (std::size_t i = 1; i < x.size(); ++i) increasing = increasing && x[i] > x[i - 1];
  if (f.line) {
    fuzz::check(increasing && x.size() == y.size(), "fit_line: a line for a bad point set");
    for (std::size_t i = 0; i < x.size(); ++i)
      fuzz::check(i128{f.line->slope} * x[i] + f.line->offset == y[i], "fit_line: misses a point");
  }
  if (f.miss) {
    const auto it = std::find(x.begin(), x.end(), f.miss->input);
    fuzz::check(it != x.end() && y[static_cast<std::size_t>(it - x.begin())] == f.miss->expected,
                "fit_line: the miss is not a point of the set");
    fuzz::check(f.miss->actual != f.miss->expected, "fit_line: the miss agrees with the set");
  }
  // No refusal of a set that an int64 line fits: that line is the one through the first two.
  if (!f.line && increasing && x.size() >= 2) {
    const i128 dx = i128{x[1]} - x[0], dy = i128{y[1]} - y[0];
    if (dy % dx == 0) {
      const i128 slope = dy / dx, offset = y[0] - slope * x[0];
      bool fits = slope >= i64_min && slope <= i64_max && offset >= i64_min && offset <= i64_max;
      for (std::size_t i = 0; fits && i < x.size(); ++i) fits = slope * x[i] + offset == y[i];
      fuzz::check(!fits, "fit_line: refused a set on an int64 line");
    }
  }
}

void run_domain(fuzz::input& in) {
  const domain d{in.i64(), in.i64()};
  const i128 count = d.hi < d.lo ? 0 : i128{d.hi} - d.lo + 1;
  fuzz::check(static_cast<i128>(d.count()) == count, "domain: wrong count");
  fuzz::check(d.empty() == (count == 0), "domain: wrong empty");
  const i128 most = static_cast<i128>(std::numeric_limits<std::size_t>::max());
  fuzz::check(static_cast<i128>(d.size()) == std::min(count, most), "domain: size not saturated");
  fuzz::check(d.enumerable() == (count >= 1 && count <= 65536), "domain: wrong enumerable");
  if (count > max_checked && count <= 65536) return;
  const auto t = qfold::checked::tabulate(d, [](i64 v) { return v; });
  if (count == 0) {
    fuzz::check(!t && t.error().code == qfold::errc::empty_range, "tabulate: empty domain");
  } else if (count > 65536) {
    fuzz::check(!t && t.error().code == qfold::errc::size_overflow, "tabulate: huge domain");
  } else {
    fuzz::check(
        t && static_cast<i128>(t->size()) == count && t->front() == d.lo && t->back() == d.hi,
        "tabulate: wrong table");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  switch (in.byte() % 5) {
    case 0:
      run_classify(in);
      break;
    case 1:
      run_synthesize(in);
      break;
    case 2:
      run_merge(in);
      break;
    case 3:
      run_fit_line(in);
      break;
    default:
      run_domain(in);
      break;
  }
  return 0;
}
