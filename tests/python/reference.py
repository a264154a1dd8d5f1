"""Independent reference models, written from the TOSA spec pseudocode and the TFLite / gemmlowp
sources with Python's unbounded ints. They share no code with qfold: a requirement the spec
states (REQUIRE) is an exception here (RequireError)."""

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT48_MIN, INT48_MAX = -(1 << 47), (1 << 47) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class RequireError(Exception):
    pass


def require(ok):
    if not ok:
        raise RequireError()


def apply_scale_32(value, multiplier, shift, double_round=False):
    # scale_helpers.tosac
    require(multiplier >= 0)
    require(2 <= shift <= 62)
    require(-(1 << (shift - 1)) <= value < (1 << (shift - 1)))
    round_ = 1 << (shift - 1)
    if double_round and shift > 31:
        round_ += (1 << 30) if value >= 0 else -(1 << 30)
    result = (value * multiplier + round_) >> shift
    require(INT32_MIN <= result <= INT32_MAX)
    return result


def apply_scale_16(value, multiplier, shift):
    require(INT48_MIN <= value <= INT48_MAX)
    require(multiplier >= 0)
    require(2 <= shift <= 62)
    result = (value * multiplier + (1 << (shift - 1))) >> shift
    require(INT32_MIN <= result <= INT32_MAX)
    return result


RANGES = {
    ("i8", False): (-128, 127), ("i8", True): (0, 255),
    ("i16", False): (-32768, 32767), ("i16", True): (0, 65535),
    ("i32", False): (INT32_MIN, INT32_MAX), ("i48", False): (INT48_MIN, INT48_MAX),
}


def rescale(value, multiplier, shift, input_type="i8", output_type="i8", input_zp=0,
            output_zp=0, scale32=True, double_round=False, input_unsigned=False,
            output_unsigned=False):
    # RESCALE.tosac for one element (attributes assumed valid, as the tests choose them)
    lo, hi = RANGES[(input_type, input_unsigned)]
    require(lo <= value <= hi)
    v = value - input_zp
    if scale32:
        r = apply_scale_32(v, multiplier, shift, double_round)
    else:
        r = apply_scale_16(v, multiplier, shift)
    r = r + output_zp  # apply_add_s<int32_t>
    require(INT32_MIN <= r <= INT32_MAX)
    olo, ohi = RANGES[(output_type, output_unsigned)]
    return min(max(r, olo), ohi)


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


def mul(a, b, shift=0):
    # MUL.tosac: shift > 0 only for int32; the int64 sum must not overflow (qfold refuses)
    product = a * b
    if shift == 0:
        return wrap32(product)
    require(product + (1 << (shift - 1)) <= INT64_MAX)
    r = (product + (1 << (shift - 1))) >> shift
    require(INT32_MIN <= r <= INT32_MAX)
    return r


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def srdhm(a, b):
    # gemmlowp SaturatingRoundingDoublingHighMul (int32)
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return trunc_div(ab + nudge, 1 << 31)


def rounding_divide_by_pot(x, exponent):
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def tflite_mbqm(x, q, shift, single_round=False):
    # TFLite MultiplyByQuantizedMultiplier (int32), both builds
    require(-31 <= shift <= 30)
    if single_round:
        require(q >= 0)
        total = 31 - shift
        r = (x * q + (1 << (total - 1))) >> total
        require(INT32_MIN <= r <= INT32_MAX)
        return r
    left, right = max(shift, 0), max(-shift, 0)
    shifted = x * (1 << left)
    require(INT32_MIN <= shifted <= INT32_MAX)  # x * (1 << left) is signed overflow otherwise
    return rounding_divide_by_pot(srdhm(shifted, q), right)


def int16_segment(table, x):
    index = (x + 32768) >> 7
    frac = x & 0x7F
    base = table[index]
    return base, table[index + 1] - base, frac


def tosa_table16(table, x):
    base, slope, frac = int16_segment(table, x)
    require(-32768 <= slope <= 32767)
    return base * 128 + slope * frac


def tflite_lookup16(table, x):
    base, slope, frac = int16_segment(table, x)
    return base + ((slope * frac + 64) >> 7)


def first_failure(f, values):
    """(index of the first value where f raises RequireError, or None), and the results."""
    out = []
    for i, v in enumerate(values):
        try:
            out.append(f(v))
        except RequireError:
            return i, out
    return None, out
