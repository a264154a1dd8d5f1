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
  - with --pch, the umbrella force-included from a precompiled header made once beforehand (what
    CMake's target_precompile_headers does for every TU of a target).
  - with --adapter, an adapter's TU: the umbrella and examples/string_ir's adapter, then the same
    with a function that runs qfold::standard_pipeline over that IR (every pass instantiated and
    compiled: what the one TU of a project that runs the passes costs).
Usage: bench/include_cost.py [--cxx g++] [--reps 3] [--per-header] [--pch] [--adapter]
                             [--include [LABEL=]DIR]...
(several --include: the same rows for each tree, e.g. before and after a change, in one run)
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
PCH = "the umbrella from a precompiled header (`target_precompile_headers`)"
ADAPTER_ROWS = [
    ("the umbrella + the string-IR adapter (`examples/string_ir/qfold_adapter.hpp`)", ""),
    ("the same + a function running `qfold::standard_pipeline` over that IR",
     "qfold::report<int> run(strir::Graph& g) {\n"
     "  return qfold::standard_pipeline<strir::Graph>().run(g);\n}\n"),
]
# Standard headers known to be heavy on libstdc++ 12 (each ~0.1-0.3 s alone), measured on top of
# the baseline to show what each would add.
HEAVY = ["algorithm", "iterator", "ranges", "functional", "string", "stdexcept", "ostream", "memory"]


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compile_cost(cxx, include_dir, headers, reps, tmp, flags=(), body=""):
    src = pathlib.Path(tmp) / "tu.cpp"
    src.write_text("".join(f"#include <{h}>\n" for h in headers) + body + "int main() {}\n")
    cmd = [cxx, "-std=c++20", "-O2", f"-I{include_dir}", *flags, "-c", str(src), "-o", os.devnull]
    best = None
    for _ in range(reps):
        c0, t0 = cpu_children(), time.perf_counter()
        subprocess.run(cmd, check=True)
        t1, c1 = time.perf_counter(), cpu_children()
        if best is None or t1 - t0 < best[0]:
            best = (t1 - t0, c1 - c0)
    pre = subprocess.run(
        [cxx, "-std=c++20", f"-I{include_dir}", *flags, "-E", str(src)],
        check=True, capture_output=True, text=True).stdout
    return best[0], best[1], pre.count("\n")


def precompiled(cxx, include_dir, tmp):
    """Flags that force-include the umbrella from a precompiled header, as CMake's
    target_precompile_headers does (built here once, not counted): g++ reads pch.hpp.gch and
    clang++ pch.hpp.pch in place of pch.hpp; -Winvalid-pch as an error, so that a header that
    would be parsed after all fails the run instead of being measured."""
    hdr = pathlib.Path(tmp) / "pch.hpp"
    hdr.write_text("#include <qfold/qfold.hpp>\n")
    ext = ".pch" if "clang" in pathlib.Path(cxx).name else ".gch"
    subprocess.run([cxx, "-std=c++20", "-O2", f"-I{include_dir}", "-x", "c++-header", str(hdr),
                    "-o", f"{hdr}{ext}"], check=True)
    return ["-include", str(hdr), "-Werror=invalid-pch"]


def closure(cxx, include_dir, headers, tmp):
    """(qfold files reached, standard headers that those files include), for these headers."""
    src = pathlib.Path(tmp) / "h.cpp"
    src.write_text("".join(f"#include <{h}>\n" for h in headers))
    err = subprocess.run([cxx, "-std=c++20", f"-I{include_dir}", "-E", "-H", str(src)],
                         capture_output=True, text=True).stderr
    ours = set(headers)
    for line in err.splitlines():
        m = re.match(r"^\.+ (.*)$", line)
        if m and os.path.normpath(m.group(1)).startswith(include_dir):
            ours.add(os.path.relpath(os.path.normpath(m.group(1)), include_dir))
    # -H lists a header only where it is first opened, so the standard headers are read from the
    # qfold files themselves (skipping what qfold/detail/ranges.hpp includes for other libraries
    # than libstdc++, the only one measured here).
    std = set()
    for h in ours:
        skipping = False
        for line in (pathlib.Path(include_dir) / h).read_text().splitlines():
            if line.startswith("#if !defined(__GLIBCXX__)"):
                skipping = True
            elif skipping and line.startswith("#endif"):
                skipping = False
            m = re.match(r"^#include <([^>]+)>", line)
            if m and not skipping and not m.group(1).startswith("qfold/"):
                std.add(m.group(1))
    return ours, sorted(std)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--per-header", action="store_true")
    ap.add_argument("--pch", action="store_true",
                    help="also the umbrella through a precompiled header (built once, not counted)")
    ap.add_argument("--adapter", action="store_true",
                    help="also an adapter's TU (examples/string_ir), with and without running "
                         "standard_pipeline")
    ap.add_argument("--include", action="append", metavar="[LABEL=]DIR",
                    help="include directory to measure (repeat to compare trees, e.g. "
                         "before=/tmp/old/include); default: this repository's")
    a = ap.parse_args()
    trees = []
    for spec in a.include or [f"qfold={ROOT / 'include'}"]:
        label, _, path = spec.rpartition("=")
        trees.append((label or path, os.path.abspath(path)))

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
    print(f"{version}, -std=c++20 -O2 -c, best of {a.reps} (wall; CPU = user + system of that "
          f"run); {model}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {now}\n")

    with tempfile.TemporaryDirectory() as tmp:
        base_inc = trees[0][1]
        base = compile_cost(a.cxx, base_inc, BASELINE, a.reps, tmp)
        rows = {}  # label -> [(wall, cpu, lines) per tree]
        order = []
        notes = []
        for name, inc in trees:
            public = sorted(str(p.relative_to(inc)) for p in pathlib.Path(inc, "qfold").rglob(
                "*.hpp") if "detail" not in p.parts)
            in_umbrella, std = closure(a.cxx, inc, ["qfold/qfold.hpp"], tmp)

            def row(label, headers, flags=(), body=""):
                if label not in rows:
                    rows[label] = {}
                    order.append(label)
                rows[label][name] = compile_cost(a.cxx, inc, headers, a.reps, tmp, flags, body)

            acc = []
            for layer in LAYERS:
                acc += [h for h in public if h.startswith(f"qfold/{layer}/") and h in in_umbrella]
                row(f"`qfold/{layer}/*` and the layers before it", acc)
            row("**`qfold/qfold.hpp` (the umbrella)**", ["qfold/qfold.hpp"])
            if a.pch:
                row(PCH, [], precompiled(a.cxx, inc, tmp))
            if a.adapter:
                for label, body in ADAPTER_ROWS:
                    row(label, ["qfold/qfold.hpp", "string_ir/qfold_adapter.hpp"],
                        [f"-I{ROOT / 'examples'}"], body)
            outside = [h for h in public if h not in in_umbrella and h != "qfold/qfold.hpp"]
            if outside:
                row("umbrella + the public headers it leaves out", ["qfold/qfold.hpp"] + outside)
            row("the standard headers qfold's files include, alone", std)
            if a.per_header:
                for h in public:
                    row(f"`{h}` alone", [h])
            notes.append(f"{name}: standard headers qfold's files include: {' '.join(std)}"
                         + (f"; public headers outside the umbrella: {' '.join(outside)}"
                            if outside else "; the umbrella includes every public header"))
        for h in HEAVY:
            order.append(f"baseline + `<{h}>`")
            rows[order[-1]] = {trees[0][0]: compile_cost(a.cxx, base_inc, BASELINE + [h], a.reps,
                                                         tmp)}

    names = [n for n, _ in trees]
    print("| included | " + " | ".join(f"{n}: wall, CPU, vs baseline" for n in names)
          + " | preprocessed lines |")
    print("|---|" + "---|" * len(names) + "---|")
    print(f"| `<vector>`, `<cmath>` (baseline) | "
          + " | ".join(f"{base[0]:.2f} s, {base[1]:.2f} s, 1x" for _ in names)
          + f" | {base[2]:,} |")
    for label in order:
        cells, lines = [], []
        for n in names:
            if n in rows[label]:
                w, c, l = rows[label][n]
                cells.append(f"{w:.2f} s, {c:.2f} s, {w / base[0]:.1f}x")
                lines.append(f"{l:,}")
            else:
                cells.append("")
        print(f"| {label} | " + " | ".join(cells) + f" | {' / '.join(lines)} |")
    print()
    for note in notes:
        print(note)
    for n in names:
        w = rows["**`qfold/qfold.hpp` (the umbrella)**"][n][0]
        print(f"{n}: umbrella / baseline = {w / base[0]:.2f}x wall (target: at most 2x): "
              f"{'met' if w <= 2 * base[0] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
