"""qfold.run_passes over IRs written in Python (dict_ir.DictIR, the docs' example): folds, refusals,
and a Python exception injected at every adapter call (adapter_failure, rolled back, no crash)."""
import numpy as np
import pytest

import qfold
from dict_ir import DictIR


def linear_bn_ir(rs, *, training=False, shared=False, with_bias=True):
    """x -> linear(W, b) -> batch_norm -> output (shared: the linear output is an output too)."""
    c = 4
    f32 = lambda *s: rs.standard_normal(s).astype(np.float32)  # noqa: E731
    nodes = [
        {"op": "input", "in": []},  # 2: the bias (a constant nobody reads without with_bias)
        {"op": "constant", "in": [], "data": f32(c, 3)},
        {"op": "constant", "in": [], "data": f32(c)},
        {"op": "linear", "in": [0, 1, 2] if with_bias else [0, 1], "attrs": {"rank": 2}},
        {"op": "constant", "in": [], "data": f32(c)},  # gamma
        {"op": "constant", "in": [], "data": f32(c)},  # beta
        {"op": "constant", "in": [], "data": f32(c)},  # mean
        {"op": "constant", "in": [], "data": np.abs(f32(c)) + 0.5},  # variance
        {"op": "batch_norm", "in": [3, 4, 5, 6, 7],
         "attrs": {"epsilon": 1e-5, "training": training}},
    ]
    return DictIR(nodes, [8, 3] if shared else [8])


def evaluate(ir, x):
    """The IR's first output, in float64."""
    vals = {}

    def value(i):
        if i not in vals:
            vals[i] = compute(i)
        return vals[i]

    def compute(i):
        d = ir.n[i]
        a = [value(j) for j in d["in"]]
        if d["op"] == "input":
            return x
        if d["op"] == "constant":
            return d["data"].astype(np.float64)
        if d["op"] == "linear":
            return a[0] @ a[1].T + (a[2] if len(a) > 2 else 0)
        assert d["op"] == "batch_norm", d["op"]
        return (a[0] - a[3]) / np.sqrt(a[4] + d["attrs"]["epsilon"]) * a[1] + a[2]

    return value(ir.outputs[0])


def live_state(ir):
    return ([(i, ir.n[i]["op"], tuple(ir.n[i]["in"]),
              None if "data" not in ir.n[i] else ir.n[i]["data"].tobytes()) for i in ir.nodes()],
            tuple(ir.outputs))


@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_batch_norm_folds(with_bias):
    rs = np.random.default_rng(1)
    ir = linear_bn_ir(rs, with_bias=with_bias)
    x = rs.standard_normal((5, 3))
    before = evaluate(ir, x)
    report = qfold.run_passes(ir)
    assert report.folded == 1 and report.rejected == 0 and not report.adapter_errors
    (site,) = report.sites
    assert site.pass_name == "fold_batch_norm" and site.folded and site.reason is None
    assert site.nodes == [3, 8]
    assert site.bytes_removed == 4 * (4 * 3 + 4 * 4 + (4 if with_bias else 0))
    left = sorted(ir.n[i]["op"] for i in ir.nodes())
    assert left == ["constant"] * (2 if with_bias else 3) + ["input", "linear"]
    assert ir.outputs == [3]
    np.testing.assert_allclose(evaluate(ir, x), before, rtol=1e-5, atol=1e-5)
    assert "1 folded" in repr(report) and "folded" in repr(site)


def test_report_names_what_replaced_what_and_the_passes_left_out():
    ir = linear_bn_ir(np.random.default_rng(3))
    report = qfold.run_passes(ir)
    (site,) = report.sites
    assert site.replaced == 8 and site.replacement == 3
    assert site.bytes_added == 4 * (4 * 3 + 4)  # the folded weights and bias
    assert report.bytes_added == site.bytes_added
    assert "bytes_added=64" in repr(site) and "64 added" in repr(report)
    # DictIR has batch-norm folding's methods only: every other pass is noted, with what it lacks.
    skipped = dict(report.skipped)
    assert list(skipped) == qfold.graph_pass_names()[1:]
    assert "qparams" in skipped["fold_scale_into_quantize"]
    assert "6 skipped" in repr(report)
    assert qfold.run_passes(linear_bn_ir(np.random.default_rng(3)), ["fold_batch_norm"]).skipped == []


def test_take_name_keeps_a_graph_outputs_name():
    class Named(DictIR):
        def __init__(self, *a):
            super().__init__(*a)
            self.names = {i: "v%d" % i for i in range(len(self.n))}
            self.taken = []

        def take_name(self, old, new):
            self.taken.append((old, new))
            self.names[new] = self.names.pop(old)

    ir = Named(linear_bn_ir(np.random.default_rng(4)).n, [8])
    assert qfold.run_passes(ir).folded == 1
    assert ir.taken == [(8, 3)] and ir.names[3] == "v8" and ir.outputs == [3]

    class Failing(Named):
        def take_name(self, old, new):
            raise RuntimeError("no names here")

    bad = Failing(linear_bn_ir(np.random.default_rng(4)).n, [8])
    report = qfold.run_passes(bad)
    assert report.folded == 1 and report.sites[0].cleanup_failed
    assert any("no names here" in e for e in report.adapter_errors)


def test_folded_values_are_torchs_formula():
    rs = np.random.default_rng(2)
    ir = linear_bn_ir(rs)
    w, b, g, beta, m, v = (ir.n[i]["data"] for i in (1, 2, 4, 5, 6, 7))
    qfold.run_passes(ir)
    w2, b2 = (ir.n[i]["data"] for i in ir.n[3]["in"][1:])
    r = np.float32(1) / np.sqrt(v + np.float32(1e-5))
    assert np.array_equal(w2, w * (g * r)[:, None])
    assert np.array_equal(b2, (b - m) * (g * r) + beta)


@pytest.mark.parametrize("case,reason", [("training", "training_mode"),
                                         ("shared", "shared_output"),
                                         ("rank", "ambiguous_axis")])
def test_refusals_leave_the_ir(case, reason):
    rs = np.random.default_rng(3)
    ir = linear_bn_ir(rs, training=case == "training", shared=case == "shared")
    if case == "rank":
        ir.n[3]["attrs"]["rank"] = 3
    state = live_state(ir)
    report = qfold.run_passes(ir)
    (site,) = report.sites
    assert not site.folded and site.reason == reason and site.message
    assert live_state(ir) == state


class Failing(DictIR):
    """Raises RuntimeError at the k-th call of a protocol method."""
    METHODS = {"nodes", "kind", "operands", "use_count", "constant", "conv_attributes",
               "batch_norm_attributes", "output_rank", "add_constant", "set_operand",
               "remove_last_operand", "replace_uses", "erase"}

    def __init__(self, base, k):
        super().__init__(base.n, base.outputs)
        self.k, self.calls = k, 0

    def __getattribute__(self, name):
        if name in Failing.METHODS:
            self.calls += 1
            if self.calls == self.k:
                raise RuntimeError(f"injected at call {self.k} ({name})")
        return object.__getattribute__(self, name)


def test_an_exception_at_every_adapter_call():
    rs = np.random.default_rng(4)
    folded = linear_bn_ir(rs)
    counter = Failing(folded, 0)
    qfold.run_passes(counter)
    total = counter.calls
    folded_state = live_state(counter)
    assert total > 20
    x = rs.standard_normal((5, 3))
    outcomes = set()
    for k in range(1, total + 1):
        ir = linear_bn_ir(np.random.default_rng(4))
        state, before = live_state(ir), evaluate(ir, x)
        f = Failing(ir, k)
        report = qfold.run_passes(f)
        assert any("injected" in e for e in report.adapter_errors), k
        after = live_state(f)  # f shares ir's nodes; its outputs are its own
        if after == state:
            assert report.folded == 0
            assert [s.reason for s in report.sites] in ([], ["adapter_failure"])
            outcomes.add("untouched")
        elif after == folded_state:
            outcomes.add("folded")
        else:  # an erase failed after the commit: folded, unused nodes left
            assert report.sites[0].folded and report.sites[0].cleanup_failed, k
            np.testing.assert_allclose(evaluate(f, x), before, rtol=1e-5, atol=1e-5)
            outcomes.add("cleanup_failed")
    assert outcomes == {"untouched", "folded", "cleanup_failed"}


def test_bad_adapter_values_are_adapter_failures():
    rs = np.random.default_rng(5)
    ir = linear_bn_ir(rs)
    ir.n[8]["op"] = "no_such_kind"
    state = live_state(ir)
    report = qfold.run_passes(ir)
    assert report.folded == 0 and live_state(ir) == state
    assert [s.reason for s in report.sites] == ["adapter_failure"] * len(report.sites)
    assert any("no_such_kind" in e for e in report.adapter_errors)
    # float64 weights are refused as a type error inside constant(): an adapter failure too
    ir = linear_bn_ir(rs)
    ir.n[1]["data"] = ir.n[1]["data"].astype(np.float64)
    report = qfold.run_passes(ir)
    assert report.sites[0].reason == "adapter_failure" and not report.sites[0].folded
    # an object without the methods: no pass is selected; asked for by name, an error naming them
    assert len(qfold.run_passes(object())) == 0
    with pytest.raises(qfold.Error, match="needs the IR method.*nodes"):
        qfold.run_passes(object(), ["fold_batch_norm"])


def test_pass_names_and_errors():
    assert qfold.graph_pass_names() == [
        "fold_batch_norm", "fold_scale_into_quantize", "fold_dyt_alpha", "fold_dyt_affine",
        "fold_merge_rescales", "fold_compose_tables", "fold_collapse_to_table"]
    with pytest.raises(qfold.Error, match="unknown pass"):
        qfold.run_passes(linear_bn_ir(np.random.default_rng(6)), ["fold_everything"])
    # an integer pass over a float-only IR: an error naming the methods it lacks
    with pytest.raises(qfold.Error, match="fold_dyt_alpha needs the IR method.*int_constant"):
        qfold.run_passes(linear_bn_ir(np.random.default_rng(6)), ["fold_dyt_alpha"])
    with pytest.raises(qfold.Error):
        qfold.run_passes(linear_bn_ir(np.random.default_rng(6)), exactness="close")
    assert qfold.OpKind.batch_norm.name == "batch_norm"
    # kind(n) may return a qfold.OpKind
    ir = linear_bn_ir(np.random.default_rng(6))
    for d in ir.n:
        d["op"] = getattr(qfold.OpKind, d["op"])
    assert qfold.run_passes(ir).folded == 1


class QuantIR(DictIR):
    """x -> div(x, c) -> quantize: the scale-into-quantize points on the dict IR."""

    def __init__(self, c, scale=0.05):
        super().__init__([{"op": "input", "in": []},
                          {"op": "constant", "in": [], "data": np.array([c], np.float32)},
                          {"op": "div", "in": [0, 1]},
                          {"op": "quantize", "in": [2], "q": qfold.QParams(scale, 3)}], [3])

    def qparams(self, i):
        return self.n[i].get("q")

    def set_qparams(self, i, q):
        self.n[i]["q"] = q


@pytest.mark.parametrize("c,folds", [(2.0, True), (0.5, True), (3.0, False)])
def test_scale_into_quantize(c, folds):
    ir = QuantIR(c)
    state = live_state(ir)
    report = qfold.run_passes(ir)
    (site,) = report.sites
    assert site.pass_name == "fold_scale_into_quantize" and site.nodes == [2, 3]
    if folds:
        assert site.folded and ir.n[3]["in"] == [0] and ir.nodes() == [0, 3]
        assert ir.n[3]["q"].scale == 0.05 * c and ir.n[3]["q"].zero_point == 3
    else:
        assert not site.folded and site.reason == "not_exact" and live_state(ir) == state
        assert ir.n[3]["q"].scale == 0.05
