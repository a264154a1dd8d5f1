"""qfold.fx.fold on torch.fx GraphModules: folded parameters bit-identical to torch's own fusion
(torch.nn.utils.fusion.fuse_conv_bn_eval / fuse_linear_bn_eval, torch.fx.experimental.optimization
.fuse), outputs identical under torch, refusals that leave gm.code unchanged, and torchvision's
ResNet-18 and MobileNetV2 with random weights."""
import copy

import pytest

torch = pytest.importorskip("torch", reason="qfold.fx needs torch (apt-get install python3-torch)")
import torch.fx  # noqa: E402
from torch import nn  # noqa: E402
from torch.fx.experimental.optimization import fuse as torch_fuse  # noqa: E402
from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval  # noqa: E402

import qfold.fx  # noqa: E402


def randomize_bns(model, seed):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=g))
            m.running_var.copy_(torch.rand(c, generator=g) + 0.25)
            if m.affine:
                m.weight.data.copy_(torch.randn(c, generator=g))
                m.bias.data.copy_(torch.randn(c, generator=g))
    return model


class ConvBN(nn.Module):
    def __init__(self, conv, bn):
        super().__init__()
        self.conv, self.bn = conv, bn

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


CASES = {
    "conv1d": (lambda: nn.Conv1d(3, 6, 3), lambda: nn.BatchNorm1d(6), (2, 3, 11)),
    "conv2d": (lambda: nn.Conv2d(3, 8, 3, padding=1), lambda: nn.BatchNorm2d(8), (2, 3, 9, 9)),
    "conv3d": (lambda: nn.Conv3d(2, 4, 3), lambda: nn.BatchNorm3d(4), (1, 2, 6, 6, 6)),
    "conv2d_nobias": (lambda: nn.Conv2d(4, 8, 3, bias=False), lambda: nn.BatchNorm2d(8),
                      (2, 4, 7, 7)),
    "grouped": (lambda: nn.Conv2d(4, 8, 3, groups=2), lambda: nn.BatchNorm2d(8), (2, 4, 7, 7)),
    "depthwise": (lambda: nn.Conv2d(6, 6, 3, groups=6), lambda: nn.BatchNorm2d(6),
                  (2, 6, 7, 7)),
    "bn_not_affine": (lambda: nn.Conv2d(3, 5, 1), lambda: nn.BatchNorm2d(5, affine=False),
                      (2, 3, 5, 5)),
    "convT1d": (lambda: nn.ConvTranspose1d(3, 6, 3), lambda: nn.BatchNorm1d(6), (2, 3, 8)),
    "convT2d": (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2), lambda: nn.BatchNorm2d(6),
                (2, 4, 5, 5)),
    "convT3d": (lambda: nn.ConvTranspose3d(2, 4, 2), lambda: nn.BatchNorm3d(4),
                (1, 2, 4, 4, 4)),
    "convT2d_grouped": (lambda: nn.ConvTranspose2d(4, 6, 3, groups=2), lambda: nn.BatchNorm2d(6),
                        (2, 4, 5, 5)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_bn_bit_identical_to_torch(case):
    make_conv, make_bn, shape = CASES[case]
    torch.manual_seed(sorted(CASES).index(case))
    model = randomize_bns(ConvBN(make_conv(), make_bn()), 1).eval()
    gm = torch.fx.symbolic_trace(model)
    code, state = gm.code, copy.deepcopy(gm.state_dict())
    # a Conv1d's output may be unbatched, (C, L), where a BatchNorm1d normalizes L: its rank
    # must be known (qfold refuses it otherwise, ambiguous_axis)
    folded, report = qfold.fx.fold(gm, example_inputs=(torch.randn(shape),))
    assert report.folded == 1 and report.rejected == 0, list(report)
    (site,) = report.sites
    assert [n.name for n in site.nodes] == ["conv", "bn"] and site.bytes_removed > 0
    # the original is untouched (fold copies by default)
    assert gm.code == code
    assert all(torch.equal(v, gm.state_dict()[k]) for k, v in state.items())
    assert "bn" not in folded.code and not hasattr(folded, "bn")
    x = torch.randn(shape)
    transposed = isinstance(model.conv, nn.modules.conv._ConvTransposeNd)
    if transposed and model.conv.groups > 1:
        # torch's fuse_conv_bn_eval cannot fold a grouped ConvTranspose (its weight has out/groups
        # columns; torch reshapes the scale over all out channels and raises); qfold folds it,
        # and the folded module computes the original function
        with pytest.raises(RuntimeError):
            fuse_conv_bn_eval(copy.deepcopy(model.conv), copy.deepcopy(model.bn), transpose=True)
        with torch.no_grad():
            torch.testing.assert_close(folded(x), gm(x), rtol=1e-4, atol=1e-4)
        return
    fused = fuse_conv_bn_eval(copy.deepcopy(model.conv), copy.deepcopy(model.bn),
                              transpose=transposed)
    assert torch.equal(folded.conv.weight, fused.weight)
    assert torch.equal(folded.conv.bias, fused.bias)
    with torch.no_grad():
        assert torch.equal(folded(x), torch.relu(fused(x)))
        torch.testing.assert_close(folded(x), gm(x), rtol=1e-4, atol=1e-4)


class LinearBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.bn = nn.Linear(5, 7), nn.BatchNorm1d(7)

    def forward(self, x):
        return self.bn(self.fc(x))


def test_linear_bn_needs_the_rank():
    model = randomize_bns(LinearBN(), 2).eval()
    gm = torch.fx.symbolic_trace(model)
    code = gm.code
    folded, report = qfold.fx.fold(gm)  # no shapes: the rank of fc's output is unknown
    assert [s.reason for s in report.sites] == ["ambiguous_axis"] and folded.code == code
    x = torch.randn(4, 5)
    folded, report = qfold.fx.fold(gm, example_inputs=(x,))
    assert report.folded == 1
    fused = fuse_linear_bn_eval(copy.deepcopy(model.fc), copy.deepcopy(model.bn))
    assert torch.equal(folded.fc.weight, fused.weight) and torch.equal(folded.fc.bias, fused.bias)
    with torch.no_grad():
        assert torch.equal(folded(x), fused(x))


class ReadTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y


class Chain(nn.Module):
    """conv1 -> bn1 (training mode) -> conv2 -> bn2 (foldable)."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.conv2, self.bn2 = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn2(self.conv2(self.bn1(self.conv1(x))))


def test_refusals_leave_gm_code():
    gm = torch.fx.symbolic_trace(randomize_bns(ReadTwice(), 3).eval())
    for inplace in (False, True):
        code = gm.code
        folded, report = qfold.fx.fold(gm, inplace=inplace)
        assert [s.reason for s in report.sites] == ["shared_output"]
        assert folded.code == code and gm.code == code
    model = randomize_bns(Chain(), 4).eval()
    model.bn1.train()
    gm = torch.fx.symbolic_trace(model)
    gm.bn1.train()
    code = gm.code
    only_training = torch.fx.symbolic_trace(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)))
    only_code = only_training.code
    _, report = qfold.fx.fold(only_training, inplace=True)  # a module in training mode
    assert [s.reason for s in report.sites] == ["training_mode"]
    assert only_training.code == only_code
    folded, report = qfold.fx.fold(gm)
    assert [(s.reason, s.folded) for s in report.sites] == [("training_mode", False),
                                                            (None, True)]
    assert gm.code == code and "bn1" in folded.code and "bn2" not in folded.code


class SharedConv(nn.Module):
    """One conv module called twice, each call followed by its own BN."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.bn1, self.bn2 = nn.BatchNorm2d(3), nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn2(self.conv(self.bn1(self.conv(x))))


def test_a_module_called_twice_gets_folded_copies():
    model = randomize_bns(SharedConv(), 5).eval()
    gm = torch.fx.symbolic_trace(model)
    folded, report = qfold.fx.fold(gm)
    assert report.folded == 2
    names = [n.target for n in folded.graph.nodes if n.op == "call_module"]
    assert len(set(names)) == 2 and "conv" not in names
    x = torch.randn(2, 3, 6, 6)
    with torch.no_grad():
        torch.testing.assert_close(folded(x), gm(x), rtol=1e-4, atol=1e-4)
    for target, bn in zip(names, (model.bn1, model.bn2)):
        fused = fuse_conv_bn_eval(copy.deepcopy(model.conv), copy.deepcopy(bn))
        assert torch.equal(folded.get_submodule(target).weight, fused.weight)
        assert torch.equal(folded.get_submodule(target).bias, fused.bias)


def test_float64_weights_are_refused():
    model = randomize_bns(ConvBN(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4)), 6).double().eval()
    gm = torch.fx.symbolic_trace(model)
    code = gm.code
    folded, report = qfold.fx.fold(gm)
    assert [s.reason for s in report.sites] == ["not_constant"] and folded.code == code
    with pytest.raises(TypeError):
        qfold.fx.fold(model)


torchvision = None
try:
    import torchvision  # noqa: F811
except ImportError:  # pragma: no cover
    pass


@pytest.mark.skipif(torchvision is None,
                    reason="torchvision is missing (apt-get install -y python3-torchvision)")
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_models_match_torch_fuse(name):
    torch.manual_seed(7)
    model = randomize_bns(getattr(torchvision.models, name)(), 8).eval()
    gm = torch.fx.symbolic_trace(model)
    code = gm.code
    bns = sum(isinstance(m, nn.BatchNorm2d) for m in model.modules())
    folded, report = qfold.fx.fold(gm)
    assert report.folded == bns and report.rejected == 0
    assert gm.code == code
    assert not any(isinstance(m, nn.BatchNorm2d) for m in folded.modules())
    fused = torch_fuse(gm)  # torch.fx.experimental.optimization.fuse (a copy)
    ours, theirs = dict(folded.named_modules()), dict(fused.named_modules())
    convs = [k for k, m in theirs.items() if isinstance(m, nn.Conv2d)]
    assert len(convs) == bns
    for k in convs:
        assert torch.equal(ours[k].weight, theirs[k].weight), k
        assert torch.equal(ours[k].bias, theirs[k].bias), k
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        assert torch.equal(folded(x), fused(x))
        torch.testing.assert_close(folded(x), gm(x), rtol=1e-3, atol=1e-3)
