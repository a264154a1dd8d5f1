#!/usr/bin/python3
"""The committed test files (files/: *.tosa, manifest.json) are what make_files.py writes.

    check_generated.py [--files DIR] [--work DIR]

make_files.py is run again into a scratch directory (WORK, else a temporary one) and every file
it writes must equal the committed one byte for byte, with none missing and none extra (the
generator is deterministic: fixed seeds, no network). Exit 0 when they are equal, 1 otherwise
(run make_files.py and commit what it writes), 2 usage.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    files, work = os.path.join(HERE, "files"), None
    args = argv[1:]
    while args:
        if args[0] in ("--files", "--work") and len(args) > 1:
            files, work = (args[1], work) if args[0] == "--files" else (files, args[1])
            args = args[2:]
        else:
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
    own = work is None
    work = work or tempfile.mkdtemp(prefix="qfold_tosa_fb_gen_")
    try:
        out = os.path.join(work, "files")
        shutil.rmtree(out, True)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.run([sys.executable, os.path.join(HERE, "make_files.py"), out], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            print("make_files.py failed (%d):\n%s" % (p.returncode, p.stdout))
            return 1
        written, committed = sorted(os.listdir(out)), sorted(os.listdir(files))
        bad = []
        if written != committed:
            bad.append("the generator writes %s that %s lacks, and %s holds %s it does not write"
                       % (sorted(set(written) - set(committed)), files,
                          files, sorted(set(committed) - set(written))))
        for name in sorted(set(written) & set(committed)):
            with open(os.path.join(out, name), "rb") as a, \
                    open(os.path.join(files, name), "rb") as b:
                if a.read() != b.read():
                    bad.append("%s differs from what make_files.py writes now" % name)
        for line in bad:
            print("FAIL " + line)
        print("%d files %s" % (len(written), "up to date" if not bad else
                               "NOT up to date: run tests/tosa_fb/make_files.py and commit"))
        return 1 if bad else 0
    finally:
        if own:
            shutil.rmtree(work, True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
