#!/usr/bin/python3
"""Runs a TOSA 1.0 flatbuffer file (.tosa) on the tests' model of TOSA's integer semantics.

    run_model.py [--verifier EXE] FILE.tosa          print the outputs of its main block
    run_model.py [--verifier EXE] --check FILE.tosa  only read and check it ("ok" or the rule)

The file is read with the Python code flatc generates from qfold's schema
(integrations/tosa_flatbuffers/schema/tosa.fbs), checked against the format's and the
specification's rules (tosa_fb.check), and its main block evaluated by
tests/tosa/make_modules.py's model on every int8 code of every channel of its graph input, the
input make_modules.py's @main builds: element [.., j, c] holds the int8 whose bits are
(j + 97 c) mod 256. The outputs are printed as @main prints them (and as NAME.expected holds
them): per output its index, then one line `( v0, v1, ... )` per row of the last dimension,
uint8 outputs zero-extended. So a file and its fold print the same text exactly when they
compute the same on every code.

--verifier EXE runs the flatbuffers verifier first (verify_tosa.cpp, built by check_files.py);
without it the reader only guards against vectors that run past the end of the file.

Exit codes: 0 printed; 1 the file is bad (the message names the rule and the tensor or
operator) or the model cannot run it; 2 usage.
"""

import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tosa_fb as fb  # noqa: E402


def main(argv):
    args = argv[1:]
    verifier, check_only = None, False
    while args and args[0].startswith("--"):
        if args[0] == "--verifier" and len(args) > 1:
            verifier, args = args[1], args[2:]
        elif args[0] == "--check":
            check_only, args = True, args[1:]
        else:
            break
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    path = args[0]
    prog = "run_model.py"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.stderr.write("%s: %s: %s\n" % (prog, path, e.strerror))
        return 1
    if verifier:
        p = subprocess.run([verifier, path], stdout=subprocess.PIPE, text=True)
        if p.returncode != 0 or not p.stdout.startswith("ok "):
            sys.stderr.write("%s: %s: bad file: verifier: the flatbuffers verifier rejects it\n"
                             % (prog, path))
            return 1
    try:
        graph = fb.read(data)
        order = fb.check(graph)
        if check_only:
            print("ok")
            return 0
        outputs = fb.evaluate(graph, order)
    except fb.BadFile as e:
        sys.stderr.write("%s: %s: bad file: %s: %s\n" % (prog, path, e.code, e.message))
        return 1
    except fb.ModelError as e:
        sys.stderr.write("%s: %s: the model cannot run it: %s\n" % (prog, path, e))
        return 1
    sys.stdout.write(fb.format_outputs(outputs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
