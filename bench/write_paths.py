#!/usr/bin/env python3
"""What writing a model's bytes to a new file costs, by the way it is written.

Usage:
  /usr/bin/python3 bench/write_paths.py MODEL.onnx [--rounds 4] [--dir DIR]

Each round writes the file's bytes to new files in DIR (default: the temporary directory) five
ways: write() in 64 KiB, 1 MiB and 2 MiB calls, sendfile from the file, and O_DIRECT writes of
2 MiB from an aligned buffer (whole blocks only). No file is removed before the end, so that
every write needs fresh page-cache pages: on virtual machines whose host takes back free guest
memory, those can cost a host fault each (see docs/onnx.md). Prints wall and system time in ms
per way and round, and the CPU model.
"""
import argparse
import mmap
import os
import shutil
import tempfile
import time

from onnx_process_bench import cpu_model  # this directory


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    with open(args.model, "rb") as f:
        data = f.read()
    n = len(data)
    out = tempfile.mkdtemp(prefix="qfold-write-", dir=args.dir)

    def by_write(path, chunk):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        view = memoryview(data)
        for o in range(0, n, chunk):
            os.write(fd, view[o:o + chunk])
        os.close(fd)

    def by_sendfile(path, _):
        src = os.open(args.model, os.O_RDONLY)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        o = 0
        while o < n:
            o += os.sendfile(fd, src, o, n - o)
        os.close(fd)
        os.close(src)

    def by_direct(path, chunk):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
        buf = mmap.mmap(-1, chunk)  # page-aligned
        whole = n // 4096 * 4096
        for o in range(0, whole, chunk):
            k = min(chunk, whole - o)
            buf[:k] = data[o:o + k]
            os.write(fd, memoryview(buf)[:k])
        os.close(fd)

    ways = [("write, 64 KiB calls", by_write, 64 << 10), ("write, 1 MiB calls", by_write, 1 << 20),
            ("write, 2 MiB calls", by_write, 2 << 20), ("sendfile", by_sendfile, 0),
            ("O_DIRECT, 2 MiB calls", by_direct, 2 << 20)]
    res = {name: [] for name, _, _ in ways}
    k = 0
    for _ in range(args.rounds):
        for name, f, chunk in ways:
            k += 1
            t0, c0 = time.perf_counter(), os.times()
            f(os.path.join(out, f"{k}.bin"), chunk)
            t, c1 = time.perf_counter() - t0, os.times()
            res[name].append((t * 1000, (c1.system - c0.system) * 1000))
    shutil.rmtree(out)
    print(f"CPU: {cpu_model()}; {n} bytes to new files, {args.rounds} rounds")
    print("| way | wall (system) ms, each round |")
    print("|---|---|")
    for name, v in res.items():
        print(f"| {name} | " + ", ".join(f"{w:.0f} ({s:.0f})" for w, s in v) + " |")


if __name__ == "__main__":
    main()
