"""Hostile arguments: every public function called with a seeded sweep of wrong types, huge and
negative values, NaN, empty, 0-d, 3-D, object and non-contiguous arrays. Each call returns or
raises an ordinary exception (TypeError, qfold.Error, ...); none may crash the interpreter."""
import random

import numpy as np
import pytest

import qfold

q = qfold.QParams(0.05, 0)
r8 = qfold.Rescale(1 << 30, 31)
HOSTILE = [
    None, 0, -1, 1, 2 ** 31, -(2 ** 63), 2 ** 64, 2 ** 200, 1.5, float("nan"), float("inf"), "x",
    "int8", "i8", b"\x00", [], [1, 2, 3], [[1], [2, 3]], (1, 2), {}, object(), True,
    np.array(5), np.zeros((0,), np.int8), np.zeros((2, 0, 3), np.int32),
    np.arange(256, dtype=np.int8), np.arange(513, dtype=np.int16), np.ones((4, 2, 3, 3), np.float32),
    np.arange(100, dtype=np.int64)[::7], np.array([object()]), np.array(["a", "b"]),
    np.full(8, np.nan, np.float32), np.arange(24, dtype=np.uint64).reshape(2, 3, 4),
    np.iinfo(np.int64).max * np.ones(3, np.int64), q, r8, qfold.ScaleFactor(1, 31),
    qfold.RescaleSpace(), qfold.chain.Add(1), [r8, qfold.chain.Mul(3)],
]
MODULES = [qfold, qfold.tflite, qfold.gemmlowp, qfold.cmsis_nn, qfold.executorch, qfold.chain]


def callables():
    for m in MODULES:
        for name in dir(m):
            obj = getattr(m, name)
            if name.startswith("_") or not callable(obj):
                continue
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            yield f"{m.__name__}.{name}", obj


# numpy's own warning when pybind11 asks an empty array for its truth value (a bool argument)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_no_call_crashes():
    rng = random.Random(14)
    calls = raised = 0
    for name, f in callables():
        for _ in range(120):
            args = [rng.choice(HOSTILE) for _ in range(rng.randint(0, 5))]
            try:
                f(*args)
            except (TypeError, ValueError, OverflowError, RuntimeError, AttributeError):
                raised += 1  # qfold.Error is a ValueError
            calls += 1
    assert calls > 8000 and raised > calls // 2
