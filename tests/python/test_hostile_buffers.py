"""Issue 34: buffers and arguments from a hostile or careless caller.

- an array whose contiguous copy cannot be allocated (a huge broadcast view) is a MemoryError
  naming the argument, never a crash or pybind11's "cannot create an array_t from a nullptr";
- a call that releases the GIL works on its own copy of the caller's buffer, read once: a second
  thread writing the buffer meanwhile can make the call fail, never return values it did not check;
- an argument of the wrong Python type is a TypeError naming the argument and the type expected.
"""
import threading

import numpy as np
import pytest

import qfold

HUGE = 1 << 42  # elements: a contiguous copy of 4-8 TiB cannot be had


def huge_view(dtype):
    return np.broadcast_to(np.zeros((), dtype=dtype), (HUGE,))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])  # without and with a conversion
def test_huge_view_apply_scale_32_is_memory_error(dtype):
    with pytest.raises(MemoryError, match="apply_scale_32: value"):
        qfold.apply_scale_32(huge_view(dtype), 1 << 30, 31)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_huge_view_mul_is_memory_error(dtype):
    with pytest.raises(MemoryError, match="mul"):
        qfold.mul(huge_view(dtype), 3)


def test_huge_view_lookup_is_memory_error():
    table = np.arange(-128, 128, dtype=np.int8)
    with pytest.raises(MemoryError, match="lookup"):
        qfold.lookup(table, huge_view(np.int8).view(np.int8)[::1])
    with pytest.raises(MemoryError, match="lookup"):
        qfold.lookup(table, huge_view(np.int16))  # converted to int8 codes


def test_huge_view_rescale_is_memory_error():
    with pytest.raises(MemoryError, match="rescale: values"):
        qfold.rescale(huge_view(np.int8), 1 << 30, 31, output_dtype="int8")


def test_huge_view_fold_batch_norm_is_memory_error():
    w = np.broadcast_to(np.float32(1), (1 << 20, 1 << 20))
    one = np.ones(1 << 20, np.float32)
    with pytest.raises(MemoryError, match="fold_batch_norm: weight"):
        qfold.fold_batch_norm(w, None, one, one, one, one, kind="linear")


def run_with_writer(buffer, a, b, call, rounds=200):
    """call() while a second thread copies a, then b, into buffer without the GIL (numpy's
    copyto releases it for large arrays); returns every outcome."""
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            np.copyto(buffer, a)
            np.copyto(buffer, b)

    t = threading.Thread(target=writer)
    t.start()
    outcomes = []
    try:
        for _ in range(rounds):
            try:
                outcomes.append(call())
            except qfold.Error as e:
                outcomes.append(e)
    finally:
        stop.set()
        t.join()
    return outcomes


def test_apply_scale_32_reads_the_callers_buffer_once():
    # int32 values, no conversion: the call used to check the caller's buffer, release the GIL,
    # then read it again. With shift 10, 5 is a legal input and 2^20 is not (ValueOutOfRange).
    n = 1 << 20
    good, bad = np.full(n, 5, np.int32), np.full(n, 1 << 20, np.int32)
    buffer = good.copy()
    expected = qfold.apply_scale_32(good, 1 << 30, 10)

    def call():
        return qfold.apply_scale_32(buffer, 1 << 30, 10)

    for r in run_with_writer(buffer, good, bad, call, rounds=400):
        # Failing is allowed (the copy saw a bad value); returning unchecked values is not.
        assert isinstance(r, qfold.Error) or np.array_equal(r, expected)


def test_fold_batch_norm_reads_the_callers_buffer_once():
    c = 1 << 18
    w = np.ones((c, 1), np.float32)
    mean, gamma, beta = (np.zeros(c, np.float32), np.ones(c, np.float32), np.zeros(c, np.float32))
    good, bad = np.ones(c, np.float32), np.full(c, np.inf, np.float32)
    var = good.copy()
    expected = qfold.fold_batch_norm(w, None, mean, good, gamma, beta, kind="linear")

    def call():
        return qfold.fold_batch_norm(w, None, mean, var, gamma, beta, kind="linear")

    for r in run_with_writer(var, good, bad, call, rounds=60):
        if isinstance(r, tuple):
            assert np.array_equal(r[0], expected[0]) and np.array_equal(r[1], expected[1])
        else:  # refused: an infinite variance was read (once)
            assert isinstance(r, (qfold.Rejection, qfold.Error))


@pytest.mark.parametrize("kwargs, name, expected", [
    ({"per_channel": "yes"}, "per_channel", "bool"),
    ({"scale32": 1}, "scale32", "bool"),
    ({"input_type": 5}, "input_type", "str"),
    ({"output_dtype": object()}, "output_dtype", "dtype"),
])
def test_rescale_wrong_argument_type_names_it(kwargs, name, expected):
    with pytest.raises(TypeError, match=f"{name}: expected .*{expected}"):
        qfold.rescale(np.zeros(4, np.int8), 1 << 30, 31, **kwargs)


def test_rescale_class_wrong_argument_type_names_it():
    with pytest.raises(TypeError, match="per_channel: expected a bool, got str"):
        qfold.Rescale(1 << 30, 31, per_channel="yes")


def test_numpy_bool_is_a_bool():
    r = qfold.rescale(np.array([4], np.int8), 1 << 30, 31, per_channel=np.bool_(False))
    assert r.tolist() == [2]


def test_lookup_wrong_dtype_argument_names_it():
    with pytest.raises(TypeError, match="lookup: input_dtype: expected a dtype"):
        qfold.lookup(np.arange(-128, 128, dtype=np.int8), np.zeros(2, np.int8), input_dtype=3.5)


# --- fold_dyt_affine's argument edges ----------------------------------------------------------

def dyt_affine_args():
    from test_folds import affine_site
    small = np.clip(np.arange(-128, 128), -40, 40).astype(np.int8)
    return dict(affine_site(2, small), weights=np.ones((2, 3, 3, 3), np.int64), bias=[1, 2])


def test_dyt_affine_baseline_folds():
    assert qfold.fold_dyt_affine(**dyt_affine_args()).action == "fold"


@pytest.mark.parametrize("key, value", [
    ("gamma", np.full((3, 1), 2)),   # 3 values, but not one per channel
    ("beta", np.zeros((1, 3), np.int64)),
    ("bias", np.zeros((2, 1), np.int64)),
    ("bias", []),                    # given, but empty: the fold would read it as no bias
    ("table", np.zeros((16, 16), np.int8)),
    ("weight_zero_points", np.zeros((1, 1), np.int64)),
])
def test_dyt_affine_per_channel_values_are_1d(key, value):
    r = qfold.fold_dyt_affine(**{**dyt_affine_args(), key: value})
    assert isinstance(r, qfold.Rejection) and r.reason == "invalid_shape"


@pytest.mark.parametrize("value", [0, None, "yes"])
def test_dyt_affine_padded_is_a_bool(value):
    with pytest.raises(TypeError, match="padded: expected a bool"):
        qfold.fold_dyt_affine(**{**dyt_affine_args(), "padded": value})


HOSTILE_VALUES = [None, 0, -1, 2**70, 1.5, "x", [], [[1, 2], [3, 4]], np.zeros((2, 2), np.int64),
                  np.zeros(0, np.int8), np.zeros(300, np.int8), np.full(256, 3000, np.int16),
                  np.broadcast_to(np.int64(1), (HUGE,)), np.zeros((2, 3, 3, 3, 1), np.int64),
                  np.array(5), object(), [1] * 3, np.array([2**62, -2**62]),
                  np.full(3, -2**40, np.int64), qfold.Rescale(1 << 30, 31)]


def test_dyt_affine_hostile_arguments_are_refused_or_named():
    """Every argument, every hostile value: a plan, a Rejection, or a named exception."""
    base = dyt_affine_args()
    for key in list(base) + ["weight_layout", "groups", "weight_zero_points", "weight_dtype",
                             "input_zero_point", "padded"]:
        for value in HOSTILE_VALUES:
            try:
                r = qfold.fold_dyt_affine(**{**base, key: value})
            except (TypeError, MemoryError, qfold.Error):
                continue
            assert isinstance(r, (qfold.Rejection, qfold.DytAffinePlan)), (key, value)
            if isinstance(r, qfold.DytAffinePlan) and r.action == "fold":
                assert r.weights.shape == np.shape(base["weights"]) or key == "weights"


@pytest.mark.parametrize("call", [
    lambda v: qfold.fold_batch_norm(np.ones((1, 1), np.float32), None, [0.0], [1.0], [1.0],
                                    [0.0], kind="linear", training=v),
    lambda v: qfold.apply_scale_32(5, 1 << 30, 31, double_round=v),
    lambda v: qfold.Rescale(1 << 30, 31, scale32=v),
])
@pytest.mark.parametrize("value", [None, 0, 1, 2.5])
def test_flags_take_bools_only(call, value):
    """A flag given None or a number is a TypeError, never its truth value (training=None would
    otherwise fold a training-mode batch norm)."""
    with pytest.raises(TypeError):
        call(value)
    call(np.bool_(True))
    call(False)
