"""Classification, rescale synthesis and rescale merging: every certificate is re-checked in
Python with reference.py on every input, every witness is checked to be a real counterexample."""
import random

import numpy as np
import pytest

import qfold
import reference as ref

CODES = list(range(-128, 128))


def python_rescale(r, x):
    return ref.rescale(x, r.multiplier, r.shift, r.input_type, r.output_type, r.input_zp,
                       r.output_zp, r.scale32, r.rounding == "double_round", r.input_unsigned,
                       r.output_unsigned)


def test_classify_kinds_and_witnesses():
    assert qfold.classify(CODES).kind == "identity"
    assert qfold.classify([7] * 256).kind == "constant"
    c = qfold.classify([3 * x - 5 for x in CODES])
    assert c.kind == "affine" and (c.affine.slope, c.affine.offset) == (3, -5)
    assert c.affine(10) == 25 and c.affine_miss is None
    sat = [min(max(2 * x + 1, -50), 60) for x in CODES]
    s = qfold.classify(sat)
    assert s.kind == "saturated_affine"
    assert (s.saturated.lo, s.saturated.hi, s.saturated.line.slope) == (-50, 60, 2)
    assert [s.saturated(x) for x in CODES] == sat
    w = s.affine_miss  # the line through the first two points misses somewhere: a real miss
    assert sat[w.input + 128] == w.expected and w.actual != w.expected
    square = [x * x for x in CODES]
    n = qfold.classify(square, space=qfold.RescaleSpace(output_type="i32"))
    assert n.kind == "none" and n.rescale is None
    w = n.affine_miss
    assert square[w.input + 128] == w.expected != w.actual
    assert n.rescale_miss is not None and square[n.rescale_miss.input + 128] == n.rescale_miss.expected


def test_synthesize_recovers_random_rescales():
    r = random.Random(11)
    found = 0
    for k in range(80):
        s = qfold.multiplier_shift(2.0 ** r.uniform(-7, 2))
        izp, ozp = r.randint(-20, 20), r.randint(-20, 20)
        original = qfold.Rescale(s, input_type="i8", output_type="i8", input_zp=izp, output_zp=ozp)
        y = [python_rescale(original, x) for x in CODES]
        space = qfold.RescaleSpace(input_zero_points=[izp], allow_double_round=k % 2 == 0)
        got = qfold.synthesize_rescale(y, -128, space)
        assert got is not None  # the original itself is in the space
        assert [python_rescale(got, x) for x in CODES] == y  # checked independently
        assert got.shift <= original.shift
        found += 1
        c = qfold.classify(y, space=space)
        assert c.rescale is not None or c.kind in ("identity", "constant", "affine")
    assert found == 80
    assert qfold.synthesize_rescale([x * x for x in CODES]) is None  # not monotone


def test_classify_channels():
    rows = [[x for x in CODES], [2 * x for x in CODES], [x * x for x in CODES]]
    kinds = [c.kind for c in qfold.classify_channels(np.array(rows))]
    assert kinds == ["identity", "affine", "none"]
    with pytest.raises(qfold.InvalidShape):
        qfold.classify_channels(np.zeros(256, np.int64))
    with pytest.raises(qfold.InvalidShape):
        qfold.classify([])
    with pytest.raises(qfold.SizeOverflow):
        qfold.classify(np.zeros(10, np.int64), lo=2 ** 63 - 5)
    with pytest.raises(qfold.SizeOverflow):
        qfold.classify(np.zeros(65537, np.int64))


def test_fit_line():
    f = qfold.fit_line([1, 4, 9], [5, 14, 29])
    assert (f.line.slope, f.line.offset) == (3, 2) and f.miss is None
    g = qfold.fit_line([1, 4, 9], [5, 14, 30])
    assert g.line is None and (g.miss.input, g.miss.expected, g.miss.actual) == (9, 30, 29)
    with pytest.raises(qfold.SizeMismatch):
        qfold.fit_line([1, 2], [3])


def test_merge_rescales_exact_and_refused():
    r = random.Random(12)
    exact = refused = 0
    for _ in range(40):
        a = qfold.Rescale(qfold.multiplier_shift(2.0 ** r.uniform(-2, 4)), input_type="i8",
                          output_type="i32", input_zp=r.randint(-5, 5))
        b = qfold.Rescale(qfold.multiplier_shift(2.0 ** r.uniform(-6, -1)), input_type="i32",
                          output_type="i8", output_zp=r.randint(-5, 5))
        chain = [python_rescale(b, python_rescale(a, x)) for x in CODES]
        space = qfold.RescaleSpace(input_zero_points=[a.input_zp])
        report = qfold.merge_rescales([a, b], -128, 127, space)
        naive = [python_rescale(report.naive, x) for x in CODES]
        assert report.max_deviation == max(abs(p - q) for p, q in zip(naive, chain))
        if report.first_difference is not None:
            w = report.first_difference
            assert chain[w.input + 128] == w.expected and naive[w.input + 128] == w.actual
            assert w.expected != w.actual
        if report.exact:
            assert [python_rescale(report.merged, x) for x in CODES] == chain
            exact += 1
        else:
            refused += 1
    assert exact > 0 and refused + exact == 40
    with pytest.raises(qfold.EmptyRange):
        qfold.merge_rescales([], 5, 4)
    with pytest.raises(qfold.SizeOverflow):
        qfold.merge_rescales([], 0, 1 << 20)


def test_domain_of():
    assert qfold.domain_of(qfold.QParams(0.1, 0, "uint8", 3, 200)) == (3, 200)
    with pytest.raises(qfold.IllegalType):
        qfold.domain_of(qfold.QParams(0.1, 0, "int32"))
