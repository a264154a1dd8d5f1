"""qfold.fx.fold under hostile input (issue 34): a fold that raises half way leaves the GraphModule
exactly as it was, a refusal writes nothing (not even running statistics), an unbatched conv
before a BatchNorm is refused, bad argument types are TypeErrors, and the fx edge cases an
attacker would try (shared modules, aliased weights, hooks, subclasses, a submodule replaced
during the call) either fold correctly or are refused."""
import copy
import types
import warnings

import pytest

torch = pytest.importorskip("torch", reason="qfold.fx needs torch (apt-get install python3-torch)")
import torch.fx  # noqa: E402
from torch import nn  # noqa: E402
from torch.fx.experimental.optimization import fuse as torch_fuse  # noqa: E402
from torch.nn.utils.fusion import fuse_conv_bn_eval  # noqa: E402

import qfold  # noqa: E402
import qfold.fx  # noqa: E402


def randomize_bns(model, seed):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=g))
            m.running_var.copy_(torch.rand(c, generator=g) + 0.25)
            if m.affine:
                m.weight.data.copy_(torch.randn(c, generator=g))
                m.bias.data.copy_(torch.randn(c, generator=g))
    return model


def snapshot(gm):
    """Everything a fold may change: code, graph, module objects, tensor objects and values."""
    return {"code": gm.code, "graph": str(gm.graph),
            "modules": list(gm.named_modules()),
            "tensors": [(k, v, v.detach().clone()) for k, v in
                        list(gm.named_parameters()) + list(gm.named_buffers())],
            "training": [m.training for m in gm.modules()]}


def assert_same(gm, before):
    after = snapshot(gm)
    assert after["code"] == before["code"]
    assert after["graph"] == before["graph"]
    assert [k for k, _ in after["modules"]] == [k for k, _ in before["modules"]]
    assert all(a is b for (_, a), (_, b) in zip(after["modules"], before["modules"]))
    assert [k for k, *_ in after["tensors"]] == [k for k, *_ in before["tensors"]]
    for (k, t, _), (_, t0, v0) in zip(after["tensors"], before["tensors"]):
        assert t is t0, k
        assert t.dtype == v0.dtype and torch.equal(t, v0), k
    assert after["training"] == before["training"]
    gm.graph.lint()


def outputs_equal(a, b):
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if not isinstance(a, tuple):
        return type(a) == type(b) and a == b
    return type(a) == type(b) and len(a) == len(b) and all(outputs_equal(x, y)
                                                           for x, y in zip(a, b))


# --- 1. a fold that raises half way leaves gm as it was ------------------------------------------

class Boom(Exception):
    pass


class Countdown:
    """Wraps torch.fx / nn.Module functions to raise Boom at their k-th call (all counted
    together) while FxIR.apply runs."""

    def __init__(self, monkeypatch, k):
        self.k, self.calls, self.armed = k, 0, False
        for owner, name in [(torch.fx.Graph, "erase_node"), (torch.fx.Graph, "create_node"),
                            (torch.fx.Graph, "lint"), (torch.fx.Node, "replace_all_uses_with"),
                            (torch.fx.Node, "replace_input_with"),
                            (torch.fx.Node, "_Node__update_args_kwargs"),
                            (torch.fx.GraphModule, "recompile"),
                            (torch.fx.GraphModule, "add_submodule"),
                            (torch.fx.GraphModule, "delete_submodule"),
                            (nn.Module, "__setattr__"), (nn.Module, "__delattr__"),
                            (nn.Module, "register_buffer"), (torch, "from_numpy"),
                            (torch, "tensor")]:
            monkeypatch.setattr(owner, name, self.wrap(getattr(owner, name)))
        # fx.py's copy.deepcopy (of modules and of the graph), not copy's own recursion
        fake_copy = types.SimpleNamespace(deepcopy=self.wrap(copy.deepcopy), copy=copy.copy)
        monkeypatch.setattr(qfold.fx, "copy", fake_copy)
        apply = qfold.fx.FxIR.apply

        def armed_apply(ir):
            self.armed = True
            try:
                return apply(ir)
            finally:
                self.armed = False
        monkeypatch.setattr(qfold.fx.FxIR, "apply", armed_apply)

    def wrap(self, f):
        def counted(*args, **kwargs):
            if self.armed:
                self.calls += 1
                if self.calls == self.k:
                    self.armed = False
                    raise Boom(f"call {self.k}: {getattr(f, '__name__', f)}")
            return f(*args, **kwargs)
        return counted


class Mixed(nn.Module):
    """A bias-free conv -> BN, a conv module called twice (each call with its own BN: the folded
    copies get names of their own), and a Linear -> BatchNorm1d (needs example_inputs)."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
        self.shared, self.bn2, self.bn3 = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4), nn.BatchNorm2d(4)
        self.fc, self.bn4 = nn.Linear(4, 5), nn.BatchNorm1d(5)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn3(self.shared(self.bn2(self.shared(y))))
        return self.bn4(self.fc(y.mean((2, 3))))


class Quant(nn.Module):
    """The quantized writes: x / 8 before a quantize (its scale into a new buffer, the readers
    reinterpreted) and a dequantize -> flatten -> quantize sandwich whose scale is 1 ulp off (the
    flatten then runs on the codes, reinterpreted with the removed quantize's scale)."""

    def __init__(self):
        super().__init__()
        for name, v in [("s_a", 0.0173), ("s_b", 0.0041), ("s_c", 0.02),
                        ("s_d", float(torch.tensor(0.02, dtype=torch.float64).nextafter(
                            torch.tensor(1.0, dtype=torch.float64))))]:
            self.register_buffer(name, torch.tensor(v, dtype=torch.float64))
        self.register_buffer("z", torch.tensor(-3))

    def forward(self, x):
        d = torch.quantize_per_tensor(x, self.s_a, self.z, torch.qint8).dequantize()
        q1 = torch.quantize_per_tensor(d / 8.0, self.s_b, self.z, torch.qint8)
        e = torch.quantize_per_tensor(x, self.s_c, self.z, torch.qint8).dequantize()
        q2 = torch.quantize_per_tensor(torch.flatten(e.reshape(4, 2, 32), 1), self.s_d, self.z,
                                       torch.qint8)
        return q1.int_repr(), q1.dequantize(), q2.int_repr(), q2.q_scale(), q2.dequantize()


def _mixed():
    torch.manual_seed(11)
    return torch.fx.symbolic_trace(randomize_bns(Mixed(), 12).eval()), torch.randn(3, 3, 6, 6)


def _quant():
    torch.manual_seed(13)
    return torch.fx.symbolic_trace(Quant()), torch.randn(256) * 2


@pytest.mark.parametrize("make,sites", [(_mixed, 4), (_quant, 2)], ids=["batch_norm", "quant"])
def test_apply_raising_at_every_step_leaves_gm_as_it_was(monkeypatch, make, sites):
    k = 0
    while True:
        k += 1
        gm, x = make()
        with torch.no_grad():
            expected = gm(x)
        before = snapshot(gm)
        with monkeypatch.context() as m:
            countdown = Countdown(m, k)
            try:
                folded, report = qfold.fx.fold(gm, inplace=True, example_inputs=(x,))
            except Boom:
                raised = True
            else:
                raised = False
        if not raised:
            break
        assert_same(gm, before)
        with torch.no_grad():
            assert outputs_equal(gm(x), expected), k
        # the restored module is a working GraphModule: it folds, and computes what it did
        folded, report = qfold.fx.fold(gm, inplace=True, example_inputs=(x,))
        assert folded is gm and report.folded == sites
        with torch.no_grad():
            if make is _quant:
                assert outputs_equal(gm(x), expected)
            else:
                torch.testing.assert_close(gm(x), expected, rtol=1e-4, atol=1e-4)
    assert countdown.calls < k and k > 30, k  # every counted call was made to fail once
    assert folded is gm and report.folded == sites


class Locked(nn.Module):
    """A container whose attribute writes (or deletes) raise once locked, as a hostile user
    module may."""

    def __init__(self, conv, bn, lock):
        super().__init__()
        self.conv, self.bn = conv, bn
        vars(self)["lock"] = lock

    def __setattr__(self, name, value):
        if vars(self).get("lock") == "setattr":
            raise RuntimeError("locked")
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if vars(self).get("lock") == "delattr":
            raise RuntimeError("locked")
        super().__delattr__(name)


class TwoSites(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.block = nn.Module()
        self.block.conv, self.block.bn = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)

    def forward(self, x):
        return self.block.bn(self.block.conv(self.bn(self.conv(x))))


@pytest.mark.parametrize("lock", ["setattr", "delattr"])
def test_a_submodule_whose_setattr_raises_leaves_gm_as_it_was(lock):
    """The first site (at the root) is written, the second's submodule refuses the write: the
    first is undone too."""
    gm = torch.fx.symbolic_trace(randomize_bns(TwoSites(), 14).eval())
    gm.block = Locked(gm.block.conv, gm.block.bn, lock)
    x = torch.randn(2, 3, 7, 7)
    with torch.no_grad():
        expected = gm(x)
    before = snapshot(gm)
    with pytest.raises(RuntimeError, match="locked"):
        qfold.fx.fold(gm, inplace=True)
    assert_same(gm, before)
    with torch.no_grad():
        assert torch.equal(gm(x), expected)


# --- 2. a refusal writes nothing -----------------------------------------------------------------

class TrainingModel(nn.Module):
    """conv -> BN -> dropout, and a forward that writes into its input."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.drop = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Dropout(0.5)

    def forward(self, x):
        x.mul_(1.5)
        return self.drop(self.bn(self.conv(x)))


@pytest.mark.parametrize("inplace", [True, False])
def test_a_training_mode_refusal_writes_no_statistics(inplace):
    gm = torch.fx.symbolic_trace(randomize_bns(TrainingModel(), 15))  # training mode
    gm.conv.eval()  # mixed modes, to see that each flag stays as it was
    before = snapshot(gm)
    state = {k: v.clone() for k, v in gm.state_dict().items()}
    x = torch.randn(2, 3, 6, 6)
    x0, rng = x.clone(), torch.get_rng_state()
    folded, report = qfold.fx.fold(gm, inplace=inplace, example_inputs=(x,))
    assert [s.reason for s in report.sites] == ["training_mode"]
    assert_same(gm, before)
    for k, v in folded.state_dict().items():  # the returned module (gm or its copy) too
        assert v.dtype == state[k].dtype and torch.equal(v, state[k]), k
    assert [m.training for m in folded.modules()] == before["training"]
    assert gm.bn.num_batches_tracked.item() == 0
    assert torch.equal(x, x0)  # the example input is not written into
    assert torch.equal(torch.get_rng_state(), rng)  # dropout drew no random numbers
    assert all("tensor_meta" not in n.meta for n in gm.graph.nodes)


# --- 3. unbatched convs before a BatchNorm -------------------------------------------------------

class ConvBN(nn.Module):
    def __init__(self, conv, bn):
        super().__init__()
        self.conv, self.bn = conv, bn

    def forward(self, x):
        return self.bn(self.conv(x))


# conv, BN, an unbatched input whose output's axis 1 has the BN's length (torch runs it, on the
# wrong axis for a fold), a batched input where there is one
UNBATCHED = {
    "conv1d_bn1d": (lambda: nn.Conv1d(3, 6, 3), lambda: nn.BatchNorm1d(6), (3, 8), (2, 3, 8)),
    "convT1d_bn1d": (lambda: nn.ConvTranspose1d(3, 6, 3), lambda: nn.BatchNorm1d(6), (3, 4),
                     (2, 3, 4)),
    "conv2d_bn1d": (lambda: nn.Conv2d(3, 5, 3), lambda: nn.BatchNorm1d(5), (3, 7, 9), None),
    "conv3d_bn2d": (lambda: nn.Conv3d(2, 4, 3), lambda: nn.BatchNorm2d(4), (2, 6, 5, 5), None),
}


@pytest.mark.parametrize("case", sorted(UNBATCHED))
def test_an_unbatched_conv_before_a_batch_norm_is_refused(case):
    make_conv, make_bn, unbatched, batched = UNBATCHED[case]
    torch.manual_seed(sorted(UNBATCHED).index(case))
    model = randomize_bns(ConvBN(make_conv(), make_bn()), 16).eval()
    gm = torch.fx.symbolic_trace(model)
    code = gm.code
    u = torch.randn(unbatched)
    with torch.no_grad():
        expected = model(u)
    for example in (None, (u,)):  # the rank unknown, or known to be unbatched
        folded, report = qfold.fx.fold(gm, example_inputs=example)
        assert [s.reason for s in report.sites] == ["ambiguous_axis"], (example, list(report))
        assert folded.code == code
        with torch.no_grad():
            assert torch.equal(folded(u), expected)
    if case == "conv1d_bn1d":  # torch's own fusion folds it, on the wrong axis
        with torch.no_grad():
            assert not torch.allclose(torch_fuse(gm)(u), expected, rtol=1e-3, atol=1e-3)
    if batched is None:  # torch runs this BatchNorm on the unbatched output only
        return
    b = torch.randn(batched)
    folded, report = qfold.fx.fold(gm, example_inputs=(b,))  # known to be batched: folds
    assert report.folded == 1
    fused = fuse_conv_bn_eval(copy.deepcopy(model.conv), copy.deepcopy(model.bn),
                              transpose=case.startswith("convT"))
    assert torch.equal(folded.conv.weight, fused.weight)
    assert torch.equal(folded.conv.bias, fused.bias)
    with torch.no_grad():
        assert torch.equal(folded(b), fused(b))
        torch.testing.assert_close(folded(b), model(b), rtol=1e-4, atol=1e-4)


def test_a_conv2d_before_a_batchnorm2d_needs_no_shapes():
    """BatchNorm2d takes 4-D input only: the Conv2d's output is batched, whatever the shapes."""
    model = randomize_bns(ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)), 17).eval()
    folded, report = qfold.fx.fold(torch.fx.symbolic_trace(model))
    assert report.folded == 1


# --- 4. bad argument types ----------------------------------------------------------------------

@pytest.mark.parametrize("call,argument,expected", [
    (lambda gm, x: qfold.fx.fold(object()), "gm", "torch.fx.GraphModule"),
    (lambda gm, x: qfold.fx.fold(nn.Sequential(nn.Conv2d(3, 4, 3))), "gm",
     "torch.fx.GraphModule"),
    (lambda gm, x: qfold.fx.fold(gm, inplace="yes"), "inplace", "a bool"),
    (lambda gm, x: qfold.fx.fold(gm, inplace=None), "inplace", "a bool"),
    (lambda gm, x: qfold.fx.fold(gm, example_inputs=x), "example_inputs", "a tuple"),
    (lambda gm, x: qfold.fx.fold(gm, example_inputs=3), "example_inputs", "a tuple"),
    (lambda gm, x: qfold.fx.fold(gm, passes="fold_batch_norm"), "passes", "a sequence"),
    (lambda gm, x: qfold.fx.fold(gm, passes=None), "passes", "a sequence"),
    (lambda gm, x: qfold.fx.fold(gm, passes=[qfold.fx.fold]), "passes", "(str)"),
], ids=["object", "module", "inplace_str", "inplace_none", "example_tensor", "example_int",
        "passes_str", "passes_none", "passes_function"])
def test_bad_argument_types_are_type_errors(call, argument, expected):
    gm = torch.fx.symbolic_trace(randomize_bns(ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)),
                                               18).eval())
    before = snapshot(gm)
    with pytest.raises(TypeError, match=f"qfold.fx.fold: {argument} must be .*{expected}"):
        call(gm, torch.randn(2, 3, 5, 5))
    assert_same(gm, before)
    with pytest.raises(qfold.Error, match="unknown pass"):  # a str that names no pass
        qfold.fx.fold(gm, passes=["fold_everything"])
    assert_same(gm, before)


# --- attacker's fx edge cases -------------------------------------------------------------------

class SharedBN(nn.Module):
    """One BN module called after two convs."""

    def __init__(self, read_twice=False):
        super().__init__()
        self.c1, self.c2, self.bn = nn.Conv2d(3, 4, 3), nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.read_twice = read_twice

    def forward(self, x):
        y = self.c2(x)
        out = self.bn(self.c1(x)) + self.bn(y)
        return out + y if self.read_twice else out


@pytest.mark.parametrize("read_twice", [False, True])
def test_a_batch_norm_module_called_twice(read_twice):
    model = randomize_bns(SharedBN(read_twice), 19).eval()
    gm = torch.fx.symbolic_trace(model)
    folded, report = qfold.fx.fold(gm)
    x = torch.randn(2, 3, 6, 6)
    if read_twice:  # the second call stays, and with it the module
        assert [s.reason for s in report.sites] == [None, "shared_output"]
        assert hasattr(folded, "bn") and "self.bn(c2)" in folded.code
    else:
        assert report.folded == 2 and not hasattr(folded, "bn")
    with torch.no_grad():
        torch.testing.assert_close(folded(x), model(x), rtol=1e-4, atol=1e-4)
        fused = fuse_conv_bn_eval(copy.deepcopy(model.c1), copy.deepcopy(model.bn))
        assert torch.equal(folded.c1.weight, fused.weight)


class ConvAlsoOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y), y


def test_a_conv_output_that_is_a_graph_output_is_refused():
    gm = torch.fx.symbolic_trace(randomize_bns(ConvAlsoOutput(), 20).eval())
    before = snapshot(gm)
    folded, report = qfold.fx.fold(gm, inplace=True)
    assert [s.reason for s in report.sites] == ["shared_output"]
    assert_same(folded, before)


def test_batch_norms_without_statistics_or_affine():
    """track_running_stats=False normalizes with the batch's statistics even in eval: no site;
    affine=False folds."""
    x = torch.randn(2, 3, 6, 6)
    model = ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, track_running_stats=False)).eval()
    gm = torch.fx.symbolic_trace(model)
    folded, report = qfold.fx.fold(gm)
    assert len(report.sites) == 0 and folded.code == gm.code
    model = randomize_bns(ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, affine=False)), 21).eval()
    folded, report = qfold.fx.fold(torch.fx.symbolic_trace(model))
    assert report.folded == 1
    with torch.no_grad():
        fused = fuse_conv_bn_eval(copy.deepcopy(model.conv), copy.deepcopy(model.bn))
        assert torch.equal(folded(x), fused(x))


class WeightRead(nn.Module):
    """The conv's weight is also read by a get_attr node."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x)), self.conv.weight.sum(), self.bn.weight * 1


def test_a_get_attr_of_the_conv_weight_still_reads_the_old_weight():
    model = randomize_bns(WeightRead(), 22).eval()
    gm = torch.fx.symbolic_trace(model)
    folded, report = qfold.fx.fold(gm)
    assert report.folded == 1
    x = torch.randn(2, 3, 5, 5)
    with torch.no_grad():
        a, b = folded(x), model(x)
        torch.testing.assert_close(a[0], b[0], rtol=1e-4, atol=1e-4)
        assert torch.equal(a[1], b[1]) and torch.equal(a[2], b[2])
    # the folded conv is a copy of its own; conv and bn stay for the get_attr nodes
    assert folded.conv.weight is not None and torch.equal(folded.conv.weight, model.conv.weight)
    assert hasattr(folded, "bn") and "self.bn(" not in folded.code


class ScaledConv(nn.Conv2d):
    def forward(self, x):
        return super().forward(x) * 2


def test_hooked_and_subclassed_modules_are_not_folded():
    """A subclass or a parametrization may compute something else than its class, a hook sees
    or rewrites what the fold changes (weight_norm recomputes the weight before each call)."""
    import torch.nn.utils.parametrize as parametrize

    class Negate(nn.Module):
        def forward(self, w):
            return -w

    x = torch.randn(2, 3, 6, 6)
    scaled = ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    gm_scaled = torch.fx.symbolic_trace(randomize_bns(scaled, 23).eval())
    gm_scaled.conv = ScaledConv(3, 4, 3)  # a subclass put in after tracing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        normed = ConvBN(nn.utils.weight_norm(nn.Conv2d(3, 4, 3)), nn.BatchNorm2d(4))
    param = ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    parametrize.register_parametrization(param.conv, "weight", Negate())
    hooked = ConvBN(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    seen = []
    hooked.bn.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    for gm, reasons in [(gm_scaled, ["unsupported"]),
                        (torch.fx.symbolic_trace(randomize_bns(normed, 24).eval()),
                         ["unsupported"]),
                        (torch.fx.symbolic_trace(randomize_bns(param, 25).eval()),
                         ["unsupported"]),
                        (torch.fx.symbolic_trace(randomize_bns(hooked, 26).eval()), [])]:
        with torch.no_grad():
            expected = gm(x)
        before = snapshot(gm)
        folded, report = qfold.fx.fold(gm, inplace=True)  # weight_norm'd modules cannot be copied
        assert [s.reason for s in report.sites] == reasons, list(report)
        assert_same(gm, before)
        with torch.no_grad():
            assert torch.equal(gm(x), expected)
    assert len(seen) == 2  # the hook still runs


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.act = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def test_a_submodule_replaced_during_the_fold_raises():
    """A hook run by the shape propagation (on a copy) replaces a submodule of gm itself: the
    pass read the old one, so nothing is written and fold raises."""
    gm = torch.fx.symbolic_trace(randomize_bns(Hooked(), 27).eval())
    gm.act.register_forward_hook(lambda m, i, o: setattr(gm, "bn", nn.Identity()))
    conv, weight, code = gm.conv, gm.conv.weight.detach().clone(), gm.code
    with pytest.raises(RuntimeError, match=r"submodule 'bn' replaced\); nothing was written"):
        qfold.fx.fold(gm, inplace=True, example_inputs=(torch.randn(2, 3, 6, 6),))
    assert isinstance(gm.bn, nn.Identity)  # the hook's doing, not the fold's
    assert gm.conv is conv and torch.equal(gm.conv.weight, weight) and gm.code == code
