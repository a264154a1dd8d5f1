"""The package's surface: every public function and class has a docstring and a typed stub, every
errc has its exception class, and the stubs parse."""
import ast
import os

import qfold

MODULES = {"_qfold": qfold._qfold, "tflite": qfold.tflite, "gemmlowp": qfold.gemmlowp,
           "cmsis_nn": qfold.cmsis_nn, "executorch": qfold.executorch, "chain": qfold.chain}


def stub_names(module):
    path = os.path.join(os.path.dirname(qfold.__file__), f"{module}.pyi")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def public(module):
    return [n for n in dir(module) if not n.startswith("_")
            and not isinstance(getattr(module, n), type(qfold))]


def test_every_public_name_has_a_docstring_and_a_stub():
    checked = 0
    for name, module in MODULES.items():
        stubs = stub_names(name)
        for n in public(module):
            obj = getattr(module, n)
            assert n in stubs, f"{name}.{n} has no stub"
            if not (isinstance(obj, type) and issubclass(obj, qfold.Error) and obj is not qfold.Error):
                assert (obj.__doc__ or "").strip(), f"{name}.{n} has no docstring"
            checked += 1
    assert checked > 90


def test_error_classes():
    names = [n for n in public(qfold) if isinstance(getattr(qfold, n), type)
             and issubclass(getattr(qfold, n), qfold.Error)]
    assert len(names) == 23  # Error + one per qfold::errc
    assert issubclass(qfold.Error, ValueError)
    try:
        qfold.rescale([1, 2], 1, 70)
    except qfold.ShiftOutOfRange as e:
        assert e.code == "shift_out_of_range" and e.index == 0  # the channel
        assert str(e).startswith("shift_out_of_range: ")
    from qfold.tflite import quantize_multiplier  # the submodules import as modules
    assert quantize_multiplier(0.5).multiplier == 1 << 30


def test_fx_stub_covers_fx():
    import pytest
    pytest.importorskip("torch")
    import qfold.fx
    stubs = stub_names("fx")
    for n in qfold.fx.__all__:
        assert n in stubs, f"fx.{n} has no stub"
    for n in ("nodes", "apply", "set_qparams"):
        assert n in stubs
