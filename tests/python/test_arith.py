"""apply_scale_32/16, RESCALE over arrays, MUL and the TFLite / gemmlowp flavours against the
Python reference models (reference.py), golden values, and every kind of bad argument."""
import math
import random
from fractions import Fraction

import numpy as np
import pytest

import qfold
import reference as ref

INT8 = np.arange(-128, 128, dtype=np.int8)
UINT8 = np.arange(0, 256, dtype=np.uint8)
INT16 = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)
UINT16 = np.arange(0, 65536, dtype=np.int32).astype(np.uint16)


def rng(seed):
    return random.Random(seed)


# --- golden values (README quick start) --------------------------------------------------------

def test_golden_values():
    s = qfold.multiplier_shift(0.0123, bits=32, tie="half_even")
    assert (s.multiplier, s.shift) == (1690499128, 37)
    assert tuple(s) == (1690499128, 37)
    assert qfold.rescale(np.array([41], np.int32), s, output_zp=-5).tolist() == [-4]
    assert qfold.rescale(41, s.multiplier, s.shift, output_zp=-5) == -4
    assert qfold.apply_scale_32(-3, 1 << 30, 31) == -1
    with pytest.raises(qfold.ValueOutOfRange):
        qfold.apply_scale_32(1 << 30, 1 << 30, 31)
    assert qfold.multiplier_shift(0.0) == qfold.ScaleFactor(0, 31)
    assert qfold.multiplier_shift(0.0, bits=16) == qfold.ScaleFactor(0, 15)
    assert qfold.reciprocal_scale(9) == qfold.ScaleFactor(1908874355, 34)


# --- multiplier/shift derivation ---------------------------------------------------------------

def ref_multiplier_shift(scale, bits, half_even):
    if scale == 0:
        return (0, bits - 1)
    mantissa, exponent = math.frexp(scale)
    v = Fraction(mantissa) * (1 << (bits - 1))  # exact
    floor = math.floor(v)
    rest = v - floor
    m = floor + (1 if rest > Fraction(1, 2) else 0)
    if rest == Fraction(1, 2):
        m = floor + (floor & 1) if half_even else floor + 1
    if m == 1 << (bits - 1):
        m //= 2
        exponent += 1
    shift = bits - 1 - exponent
    if shift > 62:
        m >>= min(shift - 62, 31)
        shift = 62
    return (m, shift)


@pytest.mark.parametrize("bits", [32, 16])
@pytest.mark.parametrize("tie", ["half_even", "half_away"])
def test_multiplier_shift_vs_reference(bits, tie):
    r = rng(1)
    top = 28 if bits == 32 else 12
    scales = [2.0 ** r.uniform(-70, top) for _ in range(3000)]
    # constructed ties: mantissas with exactly one bit below the kept ones
    scales += [(((1 << (bits - 2)) + k) * 2 + 1) * 2.0 ** -(bits + e)
               for k in range(0, 40) for e in range(-5, 20)]
    for s in scales:
        got = tuple(qfold.multiplier_shift(s, bits=bits, tie=tie))
        assert got == ref_multiplier_shift(s, bits, tie == "half_even"), s


@pytest.mark.parametrize("bad, error", [
    (float("nan"), qfold.ScaleNan), (float("inf"), qfold.ScaleInfinite),
    (-1.0, qfold.ScaleNegative), (2.0 ** 29, qfold.ScaleTooLarge)])
def test_multiplier_shift_errors(bad, error):
    with pytest.raises(error) as e:
        qfold.multiplier_shift(bad)
    assert e.value.code == error.__name__[0].lower() + "".join(
        "_" + c.lower() if c.isupper() else c for c in error.__name__[1:])
    assert "compute_multiplier_and_shift" in e.value.message
    assert isinstance(e.value, qfold.Error) and isinstance(e.value, ValueError)


def test_option_errors():
    with pytest.raises(qfold.IllegalAttributes, match="half_even"):
        qfold.multiplier_shift(0.5, tie="nearest")
    with pytest.raises(qfold.IllegalAttributes):
        qfold.multiplier_shift(0.5, bits=8)
    with pytest.raises(qfold.DivisorZero):
        qfold.reciprocal_scale(0)
    with pytest.raises(qfold.ValueOutOfRange):
        qfold.reciprocal_scale(-1)


# --- apply_scale_32 / apply_scale_16 ------------------------------------------------------------

def check_array_against(f_ref, got_call, values):
    """Either both fail at the same first element, or the values agree."""
    index, expected = ref.first_failure(f_ref, [int(v) for v in values])
    if index is None:
        got = got_call()
        assert got.dtype == np.int32
        assert got.tolist() == expected
        return 1
    with pytest.raises(qfold.Error) as e:
        got_call()
    assert e.value.index == index
    return 0


def scale_configs(seed, count):
    r = rng(seed)
    configs = []
    for shift in range(2, 63):
        for _ in range(count):
            configs.append((r.randrange(0, 1 << 31), shift, r.random() < 0.5))
    configs += [(0, 31, False), ((1 << 31) - 1, 62, True), (1 << 30, 31, False), (1, 2, False)]
    return configs


def test_apply_scale_32_every_int16_input():
    values = INT16.astype(np.int32)
    ok = 0
    for m, s, dr in scale_configs(2, 1)[::3]:
        if s < 17:
            continue  # every int16 input is in range only from shift 17; smaller below
        ok += check_array_against(lambda v: ref.apply_scale_32(v, m, s, dr),
                                  lambda: qfold.apply_scale_32(values, m, s, dr), values)
    assert ok > 10


def test_apply_scale_32_random_int32_every_shift():
    r = rng(3)
    for m, s, dr in scale_configs(4, 2):
        half = 1 << (s - 1)
        lo, hi = max(-half, ref.INT32_MIN), min(half - 1, ref.INT32_MAX)
        values = np.array([r.randint(lo, hi) for _ in range(400)] + [lo, hi, 0, -1], np.int32)
        check_array_against(lambda v: ref.apply_scale_32(v, m, s, dr),
                            lambda: qfold.apply_scale_32(values, m, s, dr), values)
        # scalars agree with the reference too
        for v in values[:5].tolist():
            assert qfold.apply_scale_32(v, m, s, dr) == ref.apply_scale_32(v, m, s, dr)


def test_apply_scale_32_out_of_range_element_is_named():
    values = np.array([0, 5, 1 << 20, 7], np.int32)
    with pytest.raises(qfold.ValueOutOfRange) as e:
        qfold.apply_scale_32(values, 1 << 30, 20)
    assert e.value.index == 2
    assert "apply_scale_32" in e.value.message


def test_apply_scale_32_parameter_errors():
    with pytest.raises(qfold.NegativeMultiplier):
        qfold.apply_scale_32(np.zeros(3, np.int32), -1, 31)
    with pytest.raises(qfold.ShiftOutOfRange):
        qfold.apply_scale_32(1, 1, 63)
    with pytest.raises(qfold.MultiplierOutOfRange):
        qfold.apply_scale_32(1, 1 << 40, 31)
    with pytest.raises(qfold.ValueOutOfRange):
        qfold.apply_scale_32(1 << 70, 1, 31)


def test_apply_scale_16_random():
    r = rng(5)
    for _ in range(300):
        m, s = r.randrange(0, 1 << 15), r.randint(2, 62)
        values = np.array([r.randint(ref.INT48_MIN, ref.INT48_MAX) for _ in range(50)], np.int64)
        check_array_against(lambda v: ref.apply_scale_16(v, m, s),
                            lambda: qfold.apply_scale_16(values, m, s), values)
    with pytest.raises(qfold.MultiplierOutOfRange):
        qfold.apply_scale_16(1, 1 << 15, 20)
    with pytest.raises(qfold.ValueOutOfRange):
        qfold.apply_scale_16(1 << 47, 1, 20)


# --- RESCALE over arrays -------------------------------------------------------------------------

PAIRS = [  # (input dtype, values, input_type, input_unsigned, output dtype, type, unsigned)
    ("int8", INT8, "i8", False, "int8", "i8", False),
    ("int8", INT8, "i8", False, "int16", "i16", False),
    ("int8", INT8, "i8", False, "int32", "i32", False),
    ("int8", INT8, "i8", False, "uint8", "i8", True),
    ("uint8", UINT8, "i8", True, "int8", "i8", False),
    ("uint8", UINT8, "i8", True, "int16", "i16", False),
    ("int16", INT16, "i16", False, "int16", "i16", False),
    ("int16", INT16, "i16", False, "int8", "i8", False),
    ("int16", INT16, "i16", False, "int32", "i32", False),
    ("int16", INT16, "i16", False, "uint16", "i16", True),
    ("uint16", UINT16, "i16", True, "int16", "i16", False),
]
SCALES = [1e-4, 0.0123, 0.25, 0.5, 1.0, 1.5, 3.0, 127.5, 1000.0]


def zero_points(t, unsigned):
    if t == "i8":
        return [0, 128, 255] if unsigned else [0, -128, 5, 127]
    return [0, 32768] if (t == "i16" and unsigned) else [0]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}->{p[4]}")
def test_rescale_every_input(pair):
    _, values, it, iu, odt, ot, ou = pair
    cases = 0
    for scale in SCALES:
        s = qfold.multiplier_shift(scale)
        for izp in zero_points(it, iu)[:3]:
            for ozp in zero_points(ot, ou)[:3]:
                for dr in (False, True):
                    got = qfold.rescale(values, s.multiplier, s.shift, output_dtype=odt,
                                        input_zp=izp, output_zp=ozp,
                                        rounding="double_round" if dr else "single_round")
                    assert got.dtype == np.dtype(odt)
                    expected = [ref.rescale(int(v), s.multiplier, s.shift, it, ot, izp, ozp,
                                            True, dr, iu, ou) for v in values.tolist()]
                    assert got.tolist() == expected
                    cases += 1
    assert cases >= len(SCALES) * 2


def test_rescale_int32_and_int48_random():
    r = rng(6)
    for _ in range(60):
        s = qfold.multiplier_shift(2.0 ** r.uniform(-20, 3))
        v = np.array([r.randint(-(1 << 20), 1 << 20) for _ in range(500)], np.int32)
        for odt, ot in (("int8", "i8"), ("int16", "i16"), ("int32", "i32")):
            got = qfold.rescale(v, s, output_dtype=odt)
            assert got.tolist() == [ref.rescale(int(x), s.multiplier, s.shift, "i32", ot)
                                    for x in v.tolist()]
        s16 = qfold.multiplier_shift(2.0 ** r.uniform(-40, -10), bits=16)
        w = np.array([r.randint(ref.INT48_MIN, ref.INT48_MAX) >> 12 for _ in range(500)], np.int64)
        index, expected = ref.first_failure(
            lambda x: ref.rescale(x, s16.multiplier, s16.shift, "i48", "i32", scale32=False),
            w.tolist())
        if index is None:
            got = qfold.rescale(w, s16, output_dtype="int32", scale32=False)
            assert got.tolist() == expected


def test_rescale_per_channel():
    r = rng(7)
    scales = [qfold.multiplier_shift(2.0 ** r.uniform(-8, 2)) for _ in range(16)]
    x = np.tile(INT8, 16).reshape(256, 16)  # every int8 code on every channel
    got = qfold.rescale(x, scales, output_dtype="int8", input_zp=3, output_zp=-2)
    assert got.shape == (256, 16)
    for c, s in enumerate(scales):
        assert got[:, c].tolist() == [ref.rescale(int(v), s.multiplier, s.shift, "i8", "i8", 3, -2)
                                      for v in x[:, c].tolist()]
    same = qfold.rescale(x, [s.multiplier for s in scales], [s.shift for s in scales],
                         input_zp=3, output_zp=-2)
    assert (same == got).all()
    with pytest.raises(qfold.SizeMismatch):
        qfold.rescale(x[:, :15], scales)
    bad = list(scales)
    bad[5] = qfold.ScaleFactor(1, 63)
    with pytest.raises(qfold.ShiftOutOfRange) as e:
        qfold.rescale(x, bad)
    assert e.value.index == 5


def test_rescale_error_if_list():
    v = np.zeros(4, np.int8)
    with pytest.raises(qfold.IllegalZeroPoint):
        qfold.rescale(np.zeros(4, np.int32), 1 << 30, 31, input_zp=1)
    with pytest.raises(qfold.IllegalAttributes):  # DOUBLE_ROUND needs scale32
        qfold.rescale(np.zeros(4, np.int64), 1, 31, scale32=False, rounding="double_round",
                      output_dtype="int32")
    with pytest.raises(qfold.IllegalAttributes):  # unsigned in and out
        qfold.rescale(np.zeros(4, np.uint8), 1 << 30, 31, output_dtype="uint8")
    with pytest.raises(qfold.IllegalType):
        qfold.rescale(v, 1 << 30, 31, output_dtype="int64")
    with pytest.raises(qfold.IllegalAttributes):
        qfold.rescale(v, 1 << 30, 31, rounding="stochastic")


def test_rescale_object_round_trip():
    s = qfold.multiplier_shift(0.5)
    r = qfold.Rescale(s, input_type="i16", output_type="i8", output_zp=3)
    assert r.multiplier == s.multiplier and r.shift == s.shift and r.output_zp == 3
    assert r(INT16).tolist() == [ref.rescale(int(v), s.multiplier, s.shift, "i16", "i8", 0, 3)
                                 for v in INT16.tolist()]
    assert r(100) == ref.rescale(100, s.multiplier, s.shift, "i16", "i8", 0, 3)
    with pytest.raises(qfold.ValueOutOfRange) as e:
        r(np.array([0, 1, 40000], np.int32))  # 40000 is no int16
    assert e.value.index == 2
    assert "Rescale(" in repr(r)


# --- MUL -------------------------------------------------------------------------------------------

def test_mul_every_int8_pair():
    a = np.repeat(INT8, 256)
    b = np.tile(INT8, 256)
    got = qfold.mul(a, b)
    assert got.dtype == np.int32
    assert got.tolist() == [x * y for x, y in zip(a.tolist(), b.tolist())]
    with pytest.raises(qfold.ShiftOutOfRange):
        qfold.mul(a, b, 1)  # shift only for int32


def test_mul_int16_and_int32():
    r = rng(8)
    a = np.array([r.randint(-32768, 32767) for _ in range(20000)], np.int16)
    b = np.array([r.randint(-32768, 32767) for _ in range(20000)], np.int16)
    assert qfold.mul(a, b).tolist() == [x * y for x, y in zip(a.tolist(), b.tolist())]
    for shift in range(0, 64):
        a32 = np.array([r.randint(ref.INT32_MIN, ref.INT32_MAX) >> r.randint(0, 31)
                        for _ in range(200)], np.int32)
        b32 = np.array([r.randint(ref.INT32_MIN, ref.INT32_MAX) >> r.randint(0, 31)
                        for _ in range(200)], np.int32)
        pairs = list(zip(a32.tolist(), b32.tolist()))
        index, expected = ref.first_failure(lambda p: ref.mul(p[0], p[1], shift), pairs)
        if index is None:
            assert qfold.mul(a32, b32, shift).tolist() == expected
        else:
            with pytest.raises(qfold.ResultOutOfRange) as e:
                qfold.mul(a32, b32, shift)
            assert e.value.index == index
    assert qfold.mul(46341, 46341) == -2147479015  # shift 0 wraps
    assert qfold.mul(np.array([1, 2, 3], np.int32), 5).tolist() == [5, 10, 15]
    with pytest.raises(qfold.SizeMismatch):
        qfold.mul(np.zeros(3, np.int32), np.zeros(4, np.int32))


# --- TFLite, gemmlowp, CMSIS-NN -------------------------------------------------------------------

def test_tflite_requantize_vs_reference():
    r = rng(9)
    for _ in range(400):
        q = r.randrange(1 << 30, 1 << 31)
        shift = r.randint(-31, 30)
        x = np.array([r.randint(ref.INT32_MIN, ref.INT32_MAX) >> r.randint(0, 31)
                      for _ in range(50)], np.int32)
        for single in (False, True):
            rounding = "single_round" if single else "double_round"
            index, expected = ref.first_failure(
                lambda v: ref.tflite_mbqm(v, q, shift, single), x.tolist())
            call = lambda: qfold.tflite.multiply_by_quantized_multiplier(x, q, shift, rounding)
            if index is None:
                assert call().tolist() == expected
            else:
                with pytest.raises(qfold.Error) as e:
                    call()
                assert e.value.index == index


def test_gemmlowp_vs_reference():
    r = rng(10)
    a = np.array([r.randint(ref.INT32_MIN, ref.INT32_MAX) for _ in range(20000)] + [ref.INT32_MIN],
                 np.int32)
    b = np.array([r.randint(ref.INT32_MIN, ref.INT32_MAX) for _ in range(20000)] + [ref.INT32_MIN],
                 np.int32)
    got = qfold.gemmlowp.saturating_rounding_doubling_high_mul(a, b)
    assert got.tolist() == [ref.srdhm(x, y) for x, y in zip(a.tolist(), b.tolist())]
    for e in (0, 1, 5, 17, 31):
        assert qfold.gemmlowp.rounding_divide_by_pot(a, e).tolist() == [
            ref.rounding_divide_by_pot(x, e) for x in a.tolist()]
    with pytest.raises(qfold.ShiftOutOfRange):
        qfold.gemmlowp.rounding_divide_by_pot(a, 32)


def test_tflite_tosa_conversions_and_flavours():
    m = qfold.tflite.quantize_multiplier(0.0123)
    t = qfold.tflite.to_tosa(m)
    assert t.shift == 31 - m.shift and t.multiplier == m.multiplier
    assert qfold.tflite.from_tosa(t) == m
    with pytest.raises(qfold.ShiftOutOfRange):
        qfold.tflite.to_tosa(qfold.tflite.QuantizedMultiplier(1 << 30, 30))
    x = np.arange(-100000, 100000, 7, dtype=np.int32)
    # TFLite's default build is TOSA DOUBLE_ROUND, its single-rounding build SINGLE_ROUND
    a = qfold.requantize("tflite_double_round", x, m.multiplier, m.shift)
    b = qfold.requantize("tosa_double_round", x, m.multiplier, m.shift)
    assert (a == b).all()
    c = qfold.requantize("tflite_single_round", x, m.multiplier, m.shift)
    d = qfold.requantize("tosa_single_round", x, m.multiplier, m.shift)
    assert (c == d).all()
    e = qfold.cmsis_nn.requantize(x, m.multiplier, m.shift)
    assert (e == a).all()
    with pytest.raises(qfold.IllegalAttributes):
        qfold.requantize("nearest", x, m.multiplier, m.shift)
    assert qfold.cmsis_nn.accepts(m)
    em = qfold.executorch.arm_multiplier_and_shift(0.0123)
    assert em == qfold.multiplier_shift(0.0123)


# --- hostile arguments ------------------------------------------------------------------------------

def test_hostile_arguments():
    with pytest.raises(TypeError, match="integer array"):
        qfold.apply_scale_32(np.zeros(3, np.float32), 1, 31)
    with pytest.raises(TypeError):
        qfold.apply_scale_32(np.array(["a"]), 1, 31)
    with pytest.raises(TypeError):
        qfold.apply_scale_32([object()], 1, 31)
    with pytest.raises(TypeError):
        qfold.apply_scale_32(1, 1.5, 31)
    with pytest.raises(TypeError):
        qfold.apply_scale_32(1, 1, "31")
    with pytest.raises(qfold.ShiftOutOfRange):
        qfold.apply_scale_32(1, 1, 1 << 40)
    with pytest.raises(qfold.ValueOutOfRange) as e:  # int64 values that do not fit int32
        qfold.apply_scale_32(np.array([1, 1 << 40], np.int64), 1, 31)
    assert e.value.index == 1
    with pytest.raises(qfold.ValueOutOfRange):
        qfold.rescale(np.array([2 ** 63 - 1], np.uint64), 1 << 30, 31, scale32=True)
    with pytest.raises(qfold.ValueOutOfRange):
        qfold.rescale(np.array([300], np.int32), 1 << 30, 31, input_type="i8")
    # non-contiguous, reversed and big-endian arrays are read as what they hold
    base = np.arange(-100, 100, dtype=np.int32)
    for v in (base[::3], base[::-1], base.astype(">i4"), base.reshape(20, 10).T):
        assert qfold.apply_scale_32(v, 1 << 30, 31).tolist() == \
            qfold.apply_scale_32(np.ascontiguousarray(v, np.int32), 1 << 30, 31).tolist()
    assert qfold.apply_scale_32([1, 2, 3], 1 << 30, 31).tolist() == [1, 1, 2]
    assert qfold.apply_scale_32(np.zeros((0,), np.int32), 1, 31).shape == (0,)
    assert qfold.rescale(np.zeros((2, 0, 3), np.int8), 1 << 30, 31).shape == (2, 0, 3)
    with pytest.raises(qfold.SizeMismatch):
        qfold.Rescale([1, 2], [31])
    with pytest.raises(TypeError):
        qfold.Rescale(qfold.ScaleFactor(1, 31), 31)
    with pytest.raises(qfold.IllegalType):
        qfold.Rescale(1, 31, input_type="i7")


def test_torch_tensors():
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    t = torch.arange(-128, 128, dtype=torch.int8)
    assert qfold.rescale(t, 1 << 30, 31).tolist() == qfold.rescale(t.numpy(), 1 << 30, 31).tolist()
    assert qfold.mul(t, t).tolist() == [x * x for x in range(-128, 128)]
