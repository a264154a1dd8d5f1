#!/usr/bin/env python3
"""Whole-process timing of qfold-onnx against the Python fold and cp, alternating, same run.

Usage:
  /usr/bin/python3 bench/onnx_process_bench.py MODEL.onnx [--rounds 9] \
      [--tool NAME=PATH ...] [--python bench/onnx_fold_numpy.py] [--pause SECONDS] [--fresh]
      [--each]

Each round runs every command once (the order reversed every other round, so that neither side
always follows the other), each writing over its own output file as a user would (with --fresh:
a new file every run, none removed before the end, so that every run needs fresh page-cache
pages). Prints, per command: wall time median [min, max], the median of user + system time
(os.wait4's rusage) and the ratios against the Python script, and the CPU model. Outputs are written to the temporary
directory, compared (every qfold-onnx output must be byte-identical to the first one) and removed.
"""
import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tool", action="append", default=[],
                    help="NAME=PATH of a qfold-onnx binary (repeatable)")
    ap.add_argument("--python", default=os.path.join(here, "onnx_fold_numpy.py"))
    ap.add_argument("--each", action="store_true",
                    help="also print every run: wall, user, system, minor faults, context switches")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds of idle before each command: a run as a user starts it, not "
                         "straight after another (on virtual machines whose host takes back "
                         "idle memory, fresh pages then cost more)")
    ap.add_argument("--fresh", action="store_true",
                    help="every run writes a new file, none removed before the end")
    args = ap.parse_args()
    tools = [t.split("=", 1) for t in args.tool] or [["qfold-onnx", "qfold-onnx"]]
    out = tempfile.mkdtemp(prefix="qfold-bench-")
    cmds = {}
    for name, path in tools:
        cmds[name] = [path, args.model, name.replace(" ", "_")]
    cmds["onnx_fold_numpy.py"] = ["/usr/bin/python3", args.python, args.model, "python"]
    cmds["cp"] = ["cp", args.model, "cp"]

    def output(k, r):
        return os.path.join(out, cmds[k][-1] + (f"-{r}" if args.fresh else "") + ".onnx")

    res = {k: [] for k in cmds}
    for r in range(args.rounds):
        order = list(cmds) if r % 2 == 0 else list(reversed(cmds))
        for k in order:
            time.sleep(args.pause)
            t0 = time.perf_counter()
            p = subprocess.Popen(cmds[k][:-1] + [output(k, r)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            if status != 0:
                sys.exit(f"{k} failed: status {status}")
            res[k].append((wall, ru.ru_utime + ru.ru_stime))
            if args.each:
                print(f"round {r} {k}: wall {wall * 1000:.0f} ms, user {ru.ru_utime * 1000:.0f}, "
                      f"sys {ru.ru_stime * 1000:.0f}, minflt {ru.ru_minflt}, "
                      f"csw {ru.ru_nvcsw}+{ru.ru_nivcsw}", flush=True)
    first = output(tools[0][0], 0)
    for name, _ in tools:
        for r in range(args.rounds if args.fresh else 1):
            if not filecmp.cmp(first, output(name, r), shallow=False):
                sys.exit(f"{name} wrote other bytes than {tools[0][0]}")
    shutil.rmtree(out)
    py_wall = statistics.median(w for w, _ in res["onnx_fold_numpy.py"])
    py_cpu = statistics.median(c for _, c in res["onnx_fold_numpy.py"])
    print(f"CPU: {cpu_model()}; {args.rounds} rounds, alternating, pause {args.pause:g} s"
          f"{', fresh files' if args.fresh else ''}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| what | wall median [min, max] | user + sys | Python / this, wall | CPU |")
    print("|---|---|---|---|---|")
    for k, v in res.items():
        w = [x for x, _ in v]
        c = [y for _, y in v]
        mw, mc = statistics.median(w), statistics.median(c)
        print(f"| {k} | {mw * 1000:.0f} ms [{min(w) * 1000:.0f}, {max(w) * 1000:.0f}] "
              f"| {mc * 1000:.0f} ms | {py_wall / mw:.2f}x | {py_cpu / mc:.2f}x |")


if __name__ == "__main__":
    main()
