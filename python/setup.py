"""Builds qfold._qfold with Debian's setuptools and pybind11 (no downloads):

    pip install --no-build-isolation ./python        # from the repository root
    python3 setup.py build_ext --inplace             # or in place, from python/

The C++ headers are the repository's include/ (or QFOLD_INCLUDE_DIR); the version comes from
include/qfold/version.hpp, as in CMake and the Conan recipe.
"""
import os
import re
from pathlib import Path

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

HERE = Path(__file__).resolve().parent
INCLUDE = Path(os.environ.get("QFOLD_INCLUDE_DIR", HERE.parent / "include"))
if not (INCLUDE / "qfold" / "qfold.hpp").exists():
    raise SystemExit(f"qfold headers not found in {INCLUDE}; set QFOLD_INCLUDE_DIR")


def version():
    text = (INCLUDE / "qfold" / "version.hpp").read_text()
    parts = [re.search(rf"#define QFOLD_VERSION_{p} +(\d+)", text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


SOURCES = ["module.cpp", "arith.cpp", "tables.cpp", "exact.cpp", "folds.cpp", "graph.cpp"]
extension = Pybind11Extension(
    "qfold._qfold",
    [str(Path("src") / s) for s in SOURCES],
    include_dirs=[str(INCLUDE)],
    cxx_std=20,
    extra_compile_args=["-O2"],
)

os.chdir(HERE)  # sources are relative to python/, whatever directory pip runs from
setup(version=version(), ext_modules=[extension], cmdclass={"build_ext": build_ext})
