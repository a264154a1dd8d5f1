"""qfold: exact integer arithmetic and graph folds for quantized ML compilers.

The C++ library qfold (header-only, C++20) bound with pybind11. Every function takes Python
ints or array-likes (numpy arrays, torch tensors through ``.numpy()``, lists) and returns ints
or numpy arrays. Bad input raises :class:`qfold.Error` (a ``ValueError``; one subclass per
``qfold::errc`` code, with ``.code``, ``.message`` and ``.index``); a fold that cannot be proven
exact returns a :class:`qfold.Rejection` value (falsy) instead of its result.

See docs/python.md.
"""

import sys as _sys

from . import _qfold
from ._qfold import *  # noqa: F401,F403  (the bound API)
from ._qfold import __version__  # noqa: F401

# The submodules as importable modules: ``from qfold.tflite import quantize_multiplier``.
for _name in ("tflite", "gemmlowp", "cmsis_nn", "executorch", "chain"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(_qfold, _name)
del _name, _sys
