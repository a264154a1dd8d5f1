#!/usr/bin/python3
"""Proves the committed .tosa test files (files/, manifest.json) are what the manifest says.

    check_files.py [--files DIR] [--work DIR] [--cxx COMPILER]

  1. The flatbuffers verifier: verify_tosa.cpp is built in the work directory (flatc --cpp from
     qfold's schema, then the C++ compiler: $CXX, else c++) and run on every file. (flatc
     --json is no verifier: flatc 2.0.8 turns files the verifier rejects into JSON.)
  2. Every good file: the verifier accepts it; the Python reader reads it and writing what it
     read gives the file back byte for byte; it breaks no rule (tosa_fb.check); every site of
     its entries owns tensors in it; every tensor's data and CLAMP bound starts 8-aligned
     (force_align: 8). An executed file prints (run_model.py's text) exactly what
     tests/tosa/make_modules.py's model says its site or module prints (computed here from the
     same site definitions), a whole module also exactly tests/tosa/modules/NAME.expected (what
     mlir-runner must print), a model-folded file the same as its original; with the tamper
     entry's table entry changed, a file prints something else. A whole module's entries equal
     tests/tosa/modules/manifest.json's for it.
  3. Every bad file: the verifier says what the manifest says; when it accepts the file, the
     reader and tosa_fb.check() raise exactly the manifest's rule, with a message containing
     every name the manifest lists; the file it was made from is a good file. At least 40.

Exit 0 when everything holds, 1 otherwise (each failure printed), 2 usage.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tosa_fb as fb  # noqa: E402
import make_files  # noqa: E402


def build_verifier(work, cxx):
    gen = os.path.join(work, "cpp")
    os.makedirs(gen, exist_ok=True)
    subprocess.run([fb.FLATC, "--cpp", "-o", gen, fb.SCHEMA], check=True)
    exe = os.path.join(work, "verify_tosa")
    subprocess.run([cxx, "-std=c++17", "-O1", "-I" + gen, "-o", exe,
                    os.path.join(HERE, "verify_tosa.cpp")], check=True)
    return exe


def run_verifier(exe, paths):
    p = subprocess.run([exe] + paths, stdout=subprocess.PIPE, text=True, check=True)
    out = {}
    for line in p.stdout.splitlines():
        verdict, path = line.split(" ", 1)
        out[path] = "passes" if verdict == "ok" else "fails"
    return out


def main(argv):
    files, work, cxx = os.path.join(HERE, "files"), None, os.environ.get("CXX", "c++")
    args = argv[1:]
    while args:
        if args[0] in ("--files", "--work", "--cxx") and len(args) > 1:
            if args[0] == "--files":
                files = args[1]
            elif args[0] == "--work":
                work = args[1]
            else:
                cxx = args[1]
            args = args[2:]
        else:
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
    t0 = time.time()
    own = work is None
    work = work or tempfile.mkdtemp(prefix="qfold_tosa_fb_check_")
    os.makedirs(work, exist_ok=True)
    failures = []

    def fail(what):
        failures.append(what)
        print("FAIL " + what)

    try:
        manifest = json.load(open(os.path.join(files, "manifest.json")))
        listed = [e["file"] for e in manifest["good"]] + [b["file"] for b in manifest["bad"]]
        present = sorted(n for n in os.listdir(files) if n != "manifest.json")
        if sorted(listed) != present:
            fail("files/ holds %s, the manifest lists %s" % (
                sorted(set(present) - set(listed)), sorted(set(listed) - set(present))))
        verifier = build_verifier(work, cxx)
        t1 = time.time()
        verdict = run_verifier(verifier, [os.path.join(files, n) for n in listed])
        built = make_files.build()  # the model's outputs, from the site definitions
        t2 = time.time()
        mlir = json.load(open(os.path.join(fb.ROOT, "tests", "tosa", "modules", "manifest.json")))
        mlir_entries = {e["id"]: e for e in mlir["modules"]}
        good = {e["file"]: e for e in manifest["good"]}
        printed = {}
        for e in manifest["good"]:
            name = e["file"]
            path = os.path.join(files, name)
            data = open(path, "rb").read()
            if verdict[path] != "passes":
                fail("%s: the flatbuffers verifier rejects a good file" % name)
                continue
            try:
                graph = fb.read(data)
                order = fb.check(graph)
            except fb.BadFile as x:
                fail("%s: a good file breaks a rule: %s" % (name, x))
                continue
            if fb.write(graph) != data:
                fail("%s: writing what the reader read does not give the file back" % name)
            if fb.misaligned(data):
                fail("%s: data not 8-aligned (force_align): %s" % (name, fb.misaligned(data)))
            tensors = {t.name for t in graph.main.tensors}
            for entry in e.get("entries", []):
                for s in entry["sites"]:
                    if not any(t.startswith(s["site"] + "_") for t in tensors):
                        fail("%s: site %s owns no tensor" % (name, s["site"]))
                mod = e["source"][len("module "):]
                if e["source"].startswith("module ") and "," not in mod and " " not in mod:
                    ref = mlir_entries.get(entry["id"], {})
                    keys = ("id", "passes", "unchanged", "sites")
                    if {k: ref.get(k) for k in keys} != {k: entry.get(k) for k in keys}:
                        fail("%s: entry %s differs from tests/tosa/modules/manifest.json's"
                             % (name, entry["id"]))
            if not e["executed"]:
                continue
            try:
                text = fb.format_outputs(fb.evaluate(graph, order))
            except fb.ModelError as x:
                fail("%s: %s" % (name, x))
                continue
            printed[name] = text
            if text != built.expected.get(name):
                fail("%s: run_model prints something else than make_modules.py's model" % name)
            src = e["source"]
            if src.startswith("module ") and " " not in src[7:] and "," not in src:
                ref = os.path.join(fb.ROOT, "tests", "tosa", "modules", src[7:] + ".expected")
                if text != open(ref).read():
                    fail("%s: run_model prints something else than %s" % (name, ref))
            if "tamper" in e:
                g2 = fb.read(data)
                t = next(t for t in g2.main.tensors if t.name == e["tamper"]["tensor"])
                d = bytearray(t.data)
                d[e["tamper"]["index"]] = (d[e["tamper"]["index"]] + 1) % 256
                t.data = bytes(d)
                if fb.format_outputs(fb.evaluate(g2)) == text:
                    fail("%s: changing %s[%d] changes nothing printed" % (
                        name, e["tamper"]["tensor"], e["tamper"]["index"]))
        for e in manifest["good"]:
            if "model_folded_of" in e and printed.get(e["file"]) != \
                    printed.get(e["model_folded_of"]):
                fail("%s prints something else than %s" % (e["file"], e["model_folded_of"]))
            if "model_folded" in e and e["model_folded"] not in good:
                fail("%s: its model_folded file %s is no good file" % (e["file"],
                                                                       e["model_folded"]))
        if len(manifest["bad"]) < 40:
            fail("%d bad files, fewer than 40" % len(manifest["bad"]))
        codes = {}
        for b in manifest["bad"]:
            name = b["file"]
            path = os.path.join(files, name)
            if b["base"] not in good and not b["base"].startswith("params.mlir"):
                fail("%s: made from %s, no good file" % (name, b["base"]))
            if verdict[path] != b["verifier"]:
                fail("%s: the verifier %s it, the manifest says it %s" % (
                    name, verdict[path], b["verifier"]))
            codes[b["check"]] = codes.get(b["check"], 0) + 1
            if b["verifier"] == "fails":
                continue
            try:
                fb.check(fb.read(open(path, "rb").read()))
                fail("%s: the checker accepts it (the manifest: %s)" % (name, b["check"]))
            except fb.BadFile as x:
                if x.code != b["check"]:
                    fail("%s: broken rule %s, the manifest says %s (%s)" % (name, x.code,
                                                                         b["check"], x))
                missing = [n for n in b["names"] if n not in x.message]
                if missing:
                    fail("%s: the message %r does not name %s" % (name, x.message, missing))
        t3 = time.time()
        print("%d good files (%d run on the model), %d bad files (%d rules; %d rejected by the "
              "verifier): %s" % (len(manifest["good"]), len(printed), len(manifest["bad"]),
                                 len(codes), sum(1 for b in manifest["bad"]
                                                 if b["verifier"] == "fails"),
                                 "all hold" if not failures else "%d FAILURES" % len(failures)))
        print("time: verifier built in %.1f s; generator %.1f s; checks %.1f s; total %.1f s"
              % (t1 - t0, t2 - t1, t3 - t2, t3 - t0))
    finally:
        if own:
            shutil.rmtree(work, True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
