"""A hostile-IR fuzzer for qfold.run_passes: every pass, over the valid IRs of test_graph.py and
test_graph_integer.py, wrapped so that random methods raise at random calls (once, or from that
call on: an IR that breaks) or answer wrong (wrong types, out-of-range ints, duplicate or None
ids, add_* returning None or an existing id...). Each run must leave the IR whole or untouched:
its state (a deep snapshot) equals the state before, or the report says the site folded and the
state equals what an honest run gives (with cleanup_failed: the same graph, unused nodes left);
anything else must be reported as a failed rollback (Site.rollback_failed). The process must
never crash.

Bounded in time: QFOLD_FUZZ_SECONDS (default 8) of runs; seeded: QFOLD_FUZZ_SEED (default 34),
iteration i drawing from random.Random(f"{seed}/{i}"), so a failure names the seed and iteration
that reproduce it (QFOLD_FUZZ_ONLY=i runs that iteration alone)."""
import os
import random
import time

import numpy as np
import pytest

import qfold
import test_graph as tg
import test_graph_integer as ti

SEED = int(os.environ.get("QFOLD_FUZZ_SEED", "34"))
SECONDS = float(os.environ.get("QFOLD_FUZZ_SECONDS", "8"))
ONLY = os.environ.get("QFOLD_FUZZ_ONLY")


def conv_bn_ir():
    """x -> conv(W 4x3x1x1, b) -> batch_norm: the conv path of fold_batch_norm."""
    ir = tg.linear_bn_ir(np.random.default_rng(7))
    ir.n[1]["data"] = ir.n[1]["data"].reshape(4, 3, 1, 1)
    ir.n[3] = {"op": "convolution", "in": [0, 1, 2], "attrs": {"groups": 1, "padded": False}}
    return ir


# (name, builder, passes): each IR has one site for its pass (folded or refused by an honest run)
BASES = [
    ("linear_bn", lambda: tg.linear_bn_ir(np.random.default_rng(1)), ["fold_batch_norm"]),
    ("linear_bn_no_bias", lambda: tg.linear_bn_ir(np.random.default_rng(2), with_bias=False),
     ["fold_batch_norm"]),
    ("conv_bn", conv_bn_ir, ["fold_batch_norm"]),
    ("bn_shared", lambda: tg.linear_bn_ir(np.random.default_rng(3), shared=True),
     ["fold_batch_norm"]),
    ("scale_into_quantize", lambda: tg.QuantIR(2.0), ["fold_scale_into_quantize"]),
    ("scale_refused", lambda: tg.QuantIR(3.0), ["fold_scale_into_quantize"]),
    ("dyt_alpha", lambda: ti.dyt_alpha_ir(0.7), ["fold_dyt_alpha"]),
    ("merge_rescales", ti.rescale_pair_ir, ["fold_merge_rescales"]),
    ("compose_tables", ti.table_pair_ir, ["fold_compose_tables"]),
    ("collapse_chain", ti.chain_ir, ["fold_collapse_to_table"]),
    ("collapse_int16", lambda: ti.int16_chain_ir(ti.Int16IR), ["fold_collapse_to_table"]),
    ("dyt_affine", ti.affine_ir, ["fold_dyt_affine"]),
]

PROTOCOL = ["nodes", "kind", "operands", "use_count", "constant", "conv_attributes",
            "batch_norm_attributes", "output_rank", "add_constant", "set_operand",
            "remove_last_operand", "replace_uses", "erase", "qparams", "set_qparams",
            "int_constant", "output_shape", "rescale", "mul_shift", "clamp_attributes",
            "element_type", "add_int_constant", "add_table", "add_table16", "add_rescale",
            "quantized_conv", "view_axis", "set_conv_input_zero_point"]
MUTATIONS = {"set_operand", "remove_last_operand", "replace_uses", "erase", "set_qparams",
             "set_conv_input_zero_point"}
ADDS = {"add_constant", "add_int_constant", "add_table", "add_table16", "add_rescale"}


class Unhashable:
    __hash__ = None


def wrong_answers(method, real):
    """Answers of the wrong type or range for `method`, given its honest answer `real`: none of
    them a plausible value (an in-range count, another valid kind), which no adapter can tell."""
    common = [Unhashable(), b"\x00", 2 ** 70]
    if method == "nodes":
        return [real + real[-1:], real + [None], tuple(real) + (Unhashable(),), None,
                "".join(map(str, real)), 7, iter(real)]
    if method == "operands":
        return [None, 7, [None] + real, real + [Unhashable()], iter(real), {"a": 1}]
    if method == "kind":
        return ["no_such_kind", 5, None, "", b"linear", 1.5]
    if method in ("use_count", "output_rank"):
        return [-1, 1.0, "1", None, 2 ** 70, -(2 ** 70), True, np.float64(1.0), [1]]
    if method == "constant":
        if real is None:
            return ["x", 5, object()]
        return [real.astype(np.float64), real.astype(np.int32), real[None], "x",
                np.array([object()] * 2), real.reshape(-1, 1)]
    if method == "conv_attributes":
        return [[], "x", {"groups": 0}, {"groups": "1"}, {"transposed": 1},
                {"layout": 3}, {"padded": None}, {"groups": 2 ** 70}]
    if method == "batch_norm_attributes":
        return [{"epsilon": "1e-5"}, {"training": 0}, [], {"epsilon": None},
                {"epsilon": [1e-5]}, 5]
    if method == "qparams":
        return ["q", 1.0, (0.05, 3), object()]
    if method == "int_constant":
        if real is None:
            return ["x", 1.5]
        a = np.asarray(real)
        return [a.astype(np.float32), {"data": a.reshape(-1)[:1], "shape": [a.size + 1]},
                {"data": a}, "x", [2 ** 70] * max(a.size, 1),
                np.array([2 ** 64 - 1] * max(a.size, 1), np.uint64)]
    if method == "output_shape":
        return [None, ["a"], 1.5, [2 ** 70], {"x": 1}]
    if method == "rescale":
        return [None, {}, 5, dict(real, input_type=8), dict(real, scale32="yes"),
                dict(real, multipliers=np.array([1.5])), dict(real, rounding=None),
                dict(real, shifts="x"), dict(real, per_channel=2)]
    if method == "mul_shift":
        return [1.5, None, 2 ** 40, "0", -(2 ** 70)]
    if method == "clamp_attributes":
        return [(1,), None, {"min": "a", "max": 1}, [1, 2, 3], {"min": 1.5, "max": 2}]
    if method == "element_type":
        return [5, object(), 1.5, ["int8"]]
    if method == "quantized_conv":
        return [5, {"weight_zero_points": "x"}, {"input_zero_point": 2 ** 70,
                                                 "weight_zero_points": [0]},
                dict(real or {}, weight_type=5)]
    if method == "view_axis":
        return ["0", 1.5, 2 ** 70, [0]]
    if method in ADDS:
        return [None, 0, 10 ** 9, "new", Unhashable(), [1]]
    return common


class Fuzz:
    """The plan of one run: per method, what happens at its k-th call."""

    def __init__(self, rng, counts):
        self.rng, self.calls, self.faults = rng, {}, {}
        methods = [m for m in counts if counts[m] > 0]
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            m = rng.choice(methods)
            k = rng.randint(1, counts[m])
            action = rng.choice(["raise", "wrong", "wrong", "break"])
            if m in MUTATIONS and action == "wrong":
                action = "raise"
            self.faults[m] = (k, action)
        self.broken = set()  # methods broken from some call on
        self.done = []       # what was injected

    def call(self, method, real, args):
        k = self.calls[method] = self.calls.get(method, 0) + 1
        fault = self.faults.get(method)
        if method in self.broken or (fault and fault[0] == k and fault[1] in ("raise", "break")):
            if fault and fault[1] == "break":
                self.broken.add(method)
            self.done.append((method, k, "raise"))
            raise RuntimeError(f"fuzz: {method} call {k} raises")
        answer = real(*args)  # a mutation is done whole before any wrong answer is returned
        if fault and fault[0] == k and fault[1] == "wrong":
            choices = wrong_answers(method, answer)
            answer = choices[self.rng.randrange(len(choices))]
            self.done.append((method, k, "wrong", type(answer).__name__))
        return answer


def hostile(base, fuzz):
    """base's IR as an instance of a subclass whose protocol methods go through fuzz (same nodes,
    same outputs list: snapshots read base's own state)."""
    cls = type(base)

    def make(name):
        def method(self, *args):
            return fuzz.call(name, getattr(super(sub, self), name), args)
        method.__name__ = name
        return method

    names = [m for m in PROTOCOL if hasattr(cls, m)]
    sub = type("Hostile" + cls.__name__, (cls,), {m: make(m) for m in names})
    h = object.__new__(sub)
    h.__dict__ = base.__dict__  # shares n and outputs with base
    return h


def norm(v):
    if isinstance(v, np.ndarray):
        return ("array", str(v.dtype), v.shape, v.tobytes())
    if isinstance(v, dict):
        return ("dict", tuple(sorted((k, norm(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return tuple(norm(x) for x in v)
    if isinstance(v, qfold.QParams):
        return ("q", v.scale, v.zero_point, str(v.dtype))
    if isinstance(v, (np.generic,)):
        return v.item()
    return v


def snapshot(ir, reachable=False):
    """The IR's state with node ids renumbered over its live nodes (an add that the adapter
    erased leaves a dead entry behind): every field of every live node, and the outputs.
    reachable: only the nodes the outputs read (a cleanup that failed leaves unused nodes)."""
    live = [i for i, d in enumerate(ir.n) if not d.get("dead")]
    if reachable:
        seen, todo = set(), list(ir.outputs)
        while todo:
            i = todo.pop()
            if i in seen or not isinstance(i, int) or not 0 <= i < len(ir.n):
                continue
            seen.add(i)
            todo.extend(ir.n[i]["in"])
        live = [i for i in live if i in seen]
    rank = {i: r for r, i in enumerate(live)}

    def ref(j):
        try:
            return rank[j]
        except (KeyError, TypeError):  # TypeError: an unhashable "id" in a broken IR
            return ("not live", repr(j))

    nodes = tuple((ref(i), tuple(ref(j) for j in ir.n[i]["in"]),
                   norm({k: v for k, v in ir.n[i].items() if k != "in"})) for i in live)
    return nodes, tuple(ref(o) for o in ir.outputs)


class Counter:
    def __init__(self):
        self.calls = {}

    def call(self, method, real, args):
        self.calls[method] = self.calls.get(method, 0) + 1
        return real(*args)


_honest = {}


def honest(name, build, passes):
    """Per base: the state before, the state after an honest run, whether it folded, and how
    often the run calls each method."""
    if name not in _honest:
        ir = build()
        before, counter = snapshot(ir), Counter()
        report = qfold.run_passes(hostile(ir, counter), passes)
        assert not report.adapter_errors and report.rollback_failed == 0, (name, report)
        _honest[name] = (before, snapshot(ir), snapshot(ir, True), report.folded, counter.calls)
    return _honest[name]


def run_one(i):
    rng = random.Random(f"{SEED}/{i}")
    name, build, passes = rng.choice(BASES)
    before, folded_state, folded_reachable, folds, counts = honest(name, build, passes)
    ir = build()
    fuzz = Fuzz(rng, counts)
    where = f"seed {SEED}, iteration {i} (QFOLD_FUZZ_SEED={SEED} QFOLD_FUZZ_ONLY={i}): {name}"
    report = qfold.run_passes(hostile(ir, fuzz), passes)
    after = snapshot(ir)
    what = f"{where}, injected {fuzz.done}, report {report!r} {report.sites}"
    for s in report.sites:
        assert s.folded or s.reason, what
        if s.reason == "adapter_failure":
            assert s.message and "Unable to cast" not in s.message, what
    assert not any("Unable to cast" in e for e in report.adapter_errors), what
    assert report.ir_changed == (report.folded > 0 or report.rollback_failed > 0), what
    if after == before:
        assert report.folded == 0, what
        return "untouched" if report.rollback_failed == 0 else "rollback_failed"
    if folds and after == folded_state:
        assert report.folded == 1 and report.rollback_failed == 0, what
        return "folded"
    if report.rollback_failed:
        assert report.ir_changed and not report.folded, what
        return "rollback_failed"
    assert folds and report.folded == 1 and report.sites[-1].cleanup_failed, what
    assert snapshot(ir, True) == folded_reachable, what
    return "cleanup_failed"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_hostile_irs_leave_the_ir_whole_or_untouched():
    if ONLY is not None:
        print(run_one(int(ONLY)))
        return
    outcomes, i, start = {}, 0, time.monotonic()
    while time.monotonic() - start < SECONDS:
        try:
            outcome = run_one(i)
        except AssertionError:
            print(f"qfold fuzz: failed at seed {SEED}, iteration {i}")
            raise
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        i += 1
    elapsed = time.monotonic() - start
    print(f"qfold fuzz: seed {SEED}, {i} runs in {elapsed:.1f} s ({i / elapsed:.0f}/s): "
          f"{outcomes}")
    assert i >= 50 and {"untouched", "folded"} <= set(outcomes), outcomes
