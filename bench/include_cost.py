#!/usr/bin/python3
"""What `#include` of qfold costs a translation unit (issue 15); bench/README.md, "Include cost".

Compiles `#include <...>` lines + an empty `main` with `CXX -std=c++20 -O2 -c` (best of --reps,
wall time, and the user + system CPU time of that best run) and prints a Markdown table:
  - the baseline, a TU with <vector> and <cmath> only (the issue's yardstick);
  - each layer, cumulative (the layer's headers and every header of the layers before it);
  - the umbrella <qfold/qfold.hpp>, and the headers it leaves out;
  - the standard headers the umbrella pulls in, alone, and the heavy ones one at a time on top of
    <vector> + <cmath>;
  - with --per-header, every public header alone.
Usage: bench/include_cost.py [--cxx g++] [--reps 3] [--per-header] [--include DIR]
Only the Python standard library; run it on a quiet machine (figures are ratios to the baseline
measured in the same run).
"""

import argparse
import datetime
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERS = ["arith", "math", "quant", "table", "exact", "fold", "graph"]
BASELINE = ["vector", "cmath"]
# Standard headers known to be heavy on libstdc++ 12 (each ~0.1-0.3 s alone), measured on top of
# the baseline to show what each would add.
HEAVY = ["algorithm", "iterator", "ranges", "functional", "string", "stdexcept", "ostream", "memory"]


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compile_cost(cxx, include_dir, headers, reps, tmp):
    src = pathlib.Path(tmp) / "tu.cpp"
    src.write_text("".join(f"#include <{h}>\n" for h in headers) + "int main() {}\n")
    cmd = [cxx, "-std=c++20", "-O2", f"-I{include_dir}", "-c", str(src), "-o", os.devnull]
    best = None
    for _ in range(reps):
        c0, t0 = cpu_children(), time.perf_counter()
        subprocess.run(cmd, check=True)
        t1, c1 = time.perf_counter(), cpu_children()
        if best is None or t1 - t0 < best[0]:
            best = (t1 - t0, c1 - c0)
    pre = subprocess.run(
        [cxx, "-std=c++20", f"-I{include_dir}", "-E", str(src)],
        check=True, capture_output=True, text=True).stdout
    return best[0], best[1], pre.count("\n")


def closure(cxx, include_dir, headers, tmp):
    """(qfold files reached, standard headers that a qfold file includes), from g++/clang -H."""
    src = pathlib.Path(tmp) / "h.cpp"
    src.write_text("".join(f"#include <{h}>\n" for h in headers))
    err = subprocess.run([cxx, "-std=c++20", f"-I{include_dir}", "-E", "-H", str(src)],
                         capture_output=True, text=True).stderr
    ours, std, stack = set(headers), set(), []  # stack[d-1]: the file at depth d
    for line in err.splitlines():
        m = re.match(r"^(\.+) (.*)$", line)
        if not m:
            continue
        depth, path = len(m.group(1)), os.path.normpath(m.group(2))
        del stack[depth - 1:]
        stack.append(path)
        parent_is_ours = depth == 1 or stack[depth - 2].startswith(include_dir)
        if path.startswith(include_dir):
            ours.add(os.path.relpath(path, include_dir))
        elif parent_is_ours:
            std.add(re.sub(r"^.*/c\+\+/(v1/)?[0-9.]*/?", "", path))
    return ours, sorted(std)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--per-header", action="store_true")
    ap.add_argument("--include", default=str(ROOT / "include"))
    a = ap.parse_args()
    inc = os.path.abspath(a.include)
    public = sorted(str(p.relative_to(inc)) for p in pathlib.Path(inc, "qfold").rglob("*.hpp")
                    if "detail" not in p.parts)

    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    version = subprocess.run([a.cxx, "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{version}, -std=c++20 -O2 -c, best of {a.reps}; {model}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}; {now}\n")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        in_umbrella, std = closure(a.cxx, inc, ["qfold/qfold.hpp"], tmp)
        def row(label, headers):
            wall, cpu, lines = compile_cost(a.cxx, inc, headers, a.reps, tmp)
            rows.append((label, wall, cpu, lines))
            return wall

        base = row("`<vector>`, `<cmath>` (baseline)", BASELINE)
        acc = []
        for layer in LAYERS:
            acc += [h for h in public if h.startswith(f"qfold/{layer}/") and h in in_umbrella]
            row(f"`qfold/{layer}/*` and the layers before it", acc)
        row("`qfold/qfold.hpp` (the umbrella)", ["qfold/qfold.hpp"])
        outside = [h for h in public if h not in in_umbrella and h != "qfold/qfold.hpp"]
        if outside:
            row("umbrella + " + ", ".join(f"`{h}`" for h in outside),
                ["qfold/qfold.hpp"] + outside)
        row("the standard headers the umbrella's files include, alone", std)
        for h in HEAVY:
            row(f"baseline + `<{h}>`", BASELINE + [h])
        if a.per_header:
            for h in public:
                row(f"`{h}` alone", [h])

    print("| included | wall | CPU | vs baseline (wall) | preprocessed lines |")
    print("|---|---|---|---|---|")
    for label, wall, cpu, lines in rows:
        print(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {wall / base:.1f}x | {lines:,} |")
    print(f"\nstandard headers the umbrella's files include: {' '.join(std)}")
    umb = next(w for l, w, _, _ in rows if l.startswith("`qfold/qfold.hpp`"))
    print(f"umbrella / baseline = {umb / base:.2f}x (target: at most 2x): "
          f"{'met' if umb <= 2 * base else 'NOT met'}")
    if outside:
        print("public headers outside the umbrella: " + " ".join(outside))
    return 0


if __name__ == "__main__":
    sys.exit(main())
