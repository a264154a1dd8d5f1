#!/usr/bin/env python3
"""Speed of qfold's batch calls from Python, on 1M elements, against the same C++ call timed
in-process (qfold._qfold._time_rescale: rescale_array alone, buffers prepared before the clock starts)
and against the numpy expression a Python author writes today (no REQUIRE checks, int64
intermediates). Best of N runs each; ratios are within one run of this script.

    PYTHONPATH=build/<preset>/python /usr/bin/python3 python/bench_qfold.py [--repeats N]
"""
import argparse
import os
import platform
import sys
import time

# python/ itself holds the package's sources without the compiled module: import the built or
# installed package (PYTHONPATH, site-packages), not the directory this script sits in.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import numpy as np  # noqa: E402

import qfold  # noqa: E402

N = 1 << 20


def best(f, repeats):
    f()  # warm up (page faults, caches)
    t = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def numpy_rescale(x, m, s, izp, ozp, lo, hi, out_dtype):
    v = x.astype(np.int64) - izp
    r = (v * m + (1 << (s - 1))) >> s
    return np.clip(r + ozp, lo, hi).astype(out_dtype)


def numpy_rescale_per_channel(x, m, s, lo, hi, out_dtype):
    v = x.astype(np.int64)
    r = (v * m + (np.int64(1) << (s - 1))) >> s
    return np.clip(r, lo, hi).astype(out_dtype)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    s = qfold.multiplier_shift(0.0123)
    m, sh = s.multiplier, s.shift
    x32 = rng.integers(-(1 << 20), 1 << 20, N, dtype=np.int32)
    x8 = rng.integers(-128, 128, N, dtype=np.int8)
    x16 = rng.integers(-32768, 32768, N, dtype=np.int16)
    channels = 64
    scales = [qfold.multiplier_shift(float(v)) for v in rng.uniform(0.001, 0.1, channels)]
    xc = x32.reshape(-1, channels)
    ms = np.array([c.multiplier for c in scales], np.int64)
    ss = np.array([c.shift for c in scales], np.int64)

    cases = [
        ("RESCALE int32 -> int8, per tensor",
         qfold.Rescale(s, input_type="i32", output_type="i8", output_zp=-5), x32,
         lambda: qfold.rescale(x32, m, sh, output_zp=-5),
         lambda: numpy_rescale(x32, m, sh, 0, -5, -128, 127, np.int8)),
        ("RESCALE int32 -> int8, 64 channels",
         qfold.Rescale(scales, input_type="i32", output_type="i8"), xc,
         lambda: qfold.rescale(xc, scales),
         lambda: numpy_rescale_per_channel(xc, ms, ss, -128, 127, np.int8)),
        ("RESCALE int8 -> int8, per tensor",
         qfold.Rescale(qfold.multiplier_shift(0.7), input_type="i8", output_type="i8",
                       input_zp=3, output_zp=-2), x8,
         lambda: qfold.rescale(x8, qfold.multiplier_shift(0.7), input_zp=3, output_zp=-2),
         lambda: numpy_rescale(x8, qfold.multiplier_shift(0.7).multiplier,
                               qfold.multiplier_shift(0.7).shift, 3, -2, -128, 127, np.int8)),
        ("RESCALE int16 -> int16, per tensor",
         qfold.Rescale(qfold.multiplier_shift(0.7), input_type="i16", output_type="i16"), x16,
         lambda: qfold.rescale(x16, qfold.multiplier_shift(0.7), output_dtype="int16"),
         lambda: numpy_rescale(x16, qfold.multiplier_shift(0.7).multiplier,
                               qfold.multiplier_shift(0.7).shift, 0, 0, -32768, 32767, np.int16)),
        ("apply_scale_32 on int32",
         qfold.Rescale(s, input_type="i32", output_type="i32"), x32,
         lambda: qfold.apply_scale_32(x32, m, sh),
         lambda: ((x32.astype(np.int64) * m + (1 << (sh - 1))) >> sh).astype(np.int32)),
    ]
    print(f"CPU: {cpu_model()}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"qfold {qfold.__version__}; {N} elements, best of {args.repeats}")
    print()
    print("| call | C++ rescale_array | qfold from Python | numpy expression | Python / C++ | "
          "numpy / Python |")
    print("|---|---|---|---|---|---|")
    for name, r, values, py_call, np_call in cases:
        assert (py_call() == np_call()).all(), name  # the same answer, or the figures mean nothing
        cpp = qfold._qfold._time_rescale(r, values, args.repeats)
        py = best(py_call, args.repeats)
        nump = best(np_call, args.repeats)
        print(f"| {name} | {cpp * 1e3:.2f} ms | {py * 1e3:.2f} ms | {nump * 1e3:.2f} ms | "
              f"{py / cpp:.2f}x | {nump / py:.1f}x |")


if __name__ == "__main__":
    main()
