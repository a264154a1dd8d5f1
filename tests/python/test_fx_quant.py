"""qfold.fx.fold on torch's reference-quantized FX graphs: a constant div/mul between a dequantize
and a torch.quantize_per_tensor (attention's scores / sqrt(d)) folded into the quantize's scale
(fold_scale_into_quantize, bit_exact), run by torch on every input code, bit for bit."""
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="qfold.fx needs torch (apt-get install python3-torch)")
import torch.fx  # noqa: E402
from torch import nn  # noqa: E402

import qfold.fx  # noqa: E402


class RefQ(nn.Module):
    """quantize -> dequantize -> (x / c or x * c) -> quantize, in int8, written as the reference
    form is; returns the last quantize's codes and their dequantized values."""

    def __init__(self, c, op, shared=False):
        super().__init__()
        self.c, self.op, self.shared = c, op, shared
        self.register_buffer("s_in", torch.tensor(0.0173))
        self.register_buffer("z_in", torch.tensor(-3))
        self.register_buffer("s_out", torch.tensor(0.0041))
        self.register_buffer("z_out", torch.tensor(5))

    def forward(self, x):
        d = torch.quantize_per_tensor(x, self.s_in, self.z_in, torch.qint8).dequantize()
        y = d / self.c if self.op == "div" else d * self.c
        q = torch.quantize_per_tensor(y, self.s_out, self.z_out, torch.qint8)
        out = q.dequantize()
        return (out + y if self.shared else out), q.int_repr()


def every_code_input(s, z, lo=-128, hi=127):
    return (torch.arange(lo, hi + 1, dtype=torch.float32) - float(z)) * float(s)


@pytest.mark.parametrize("c,op", [(8.0, "div"), (2.0, "div"), (0.125, "div"), (0.125, "mul"),
                                  (4.0, "mul"), (1.0, "div")])
def test_power_of_two_folds_bit_exact(c, op):
    gm = torch.fx.symbolic_trace(RefQ(c, op))
    code = gm.code
    folded, report = qfold.fx.fold(gm)
    (site,) = report.sites
    assert site.pass_name == "fold_scale_into_quantize" and site.folded, site
    assert gm.code == code and ("truediv" if op == "div" else "mul") not in folded.code
    new_scale = 0.0041 * c if op == "div" else 0.0041 / c
    scales = [b for n, b in folded.named_buffers() if "qfold_scale" in n]
    if c == 1.0:  # the scale is unchanged: no new buffer
        assert scales == [] and "qfold" not in folded.code
    else:
        assert len(scales) == 1 and scales[0].item() == torch.tensor(new_scale).item()
    x = every_code_input(gm.s_in, gm.z_in)
    rs = torch.Generator().manual_seed(1)
    xs = [x, torch.randn(100_000, generator=rs) * 3, torch.randn(10_000, generator=rs) * 1e3]
    for v in xs:
        (a, ca), (b, cb) = gm(v), folded(v)
        assert torch.equal(ca, cb) and torch.equal(a, b)
    # every int8 code really comes in
    codes = torch.quantize_per_tensor(x, gm.s_in, gm.z_in, torch.qint8).int_repr()
    assert sorted(codes.tolist()) == list(range(-128, 128))


@pytest.mark.parametrize("c,op,reason", [(3.0, "div", "not_exact"), (0.75, "mul", "not_exact"),
                                         (8.0, "div", "shared_output")])
def test_refusals_leave_gm_code(c, op, reason):
    gm = torch.fx.symbolic_trace(RefQ(c, op, shared=reason == "shared_output"))
    code = gm.code
    folded, report = qfold.fx.fold(gm, inplace=True)
    assert [s.reason for s in report.sites] == [reason]
    assert folded is gm and gm.code == code


def test_a_scalar_not_exact_in_float32_is_not_matched():
    gm = torch.fx.symbolic_trace(RefQ(math.sqrt(48), "div"))
    code = gm.code
    folded, report = qfold.fx.fold(gm)
    assert len(report.sites) == 0 and folded.code == code


class AllCodes(torch.fx.Interpreter):
    """Runs a GraphModule with the output of one quantize node replaced by a tensor holding
    every quint8 code (with that node's scale and zero point)."""

    def __init__(self, gm, node_name, shape):
        super().__init__(gm)
        self.node_name, self.shape, self.codes = node_name, shape, {}

    def run_node(self, n):
        out = super().run_node(n)
        if n.name == self.node_name:
            codes = torch.arange(256, dtype=torch.uint8).reshape(self.shape)
            out = torch._make_per_tensor_quantized_tensor(codes, out.q_scale(),
                                                          out.q_zero_point())
        if isinstance(out, torch.Tensor) and out.is_quantized:
            self.codes[n.name] = out.int_repr()
        return out


def test_convert_to_reference_fx_every_uint8_code():
    """linear -> scores / sqrt(64) -> linear, quantized by torch's own flow (fbgemm, quint8): the
    div sits between the first linear's dequantize and the second's input quantize."""
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_to_reference_fx, prepare_fx

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = nn.Linear(8, 8), nn.Linear(8, 4)

        def forward(self, x):
            return self.l2(self.l1(x) / math.sqrt(64.0))

    torch.manual_seed(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(M().eval(), get_default_qconfig_mapping("fbgemm"),
                              (torch.randn(8, 8),))
        for _ in range(4):
            prepared(torch.randn(64, 8) * 2)
        ref = convert_to_reference_fx(prepared)
    code = ref.code
    assert "dequantize_1 / 8.0" in code
    folded, report = qfold.fx.fold(ref)
    assert [(s.pass_name, s.folded) for s in report.sites] == [("fold_scale_into_quantize", True)]
    assert ref.code == code and "truediv" not in folded.code
    with torch.no_grad():
        # every quint8 code into the div (the output of l1's quantize), both graphs
        ia = AllCodes(ref, "quantize_per_tensor_1", (32, 8))
        ib = AllCodes(folded, "quantize_per_tensor_1", (32, 8))
        a, b = ia.run(torch.zeros(32, 8)), ib.run(torch.zeros(32, 8))
        assert torch.equal(a, b)
        # the folded quantize's codes, for all 256 input codes, bit for bit
        assert torch.equal(ia.codes["quantize_per_tensor_2"], ib.codes["quantize_per_tensor_2"])
        assert ia.codes["quantize_per_tensor_2"].unique().numel() > 16
        rs = torch.Generator().manual_seed(3)
        v = torch.randn(5_000, 8, generator=rs) * 4
        assert torch.equal(folded(v), ref(v))


# --- requantize sandwiches and shared quantization parameters ---------------------------------

def _reference_fx(model, example, calibration):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_to_reference_fx, prepare_fx
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(model.eval(), get_default_qconfig_mapping("fbgemm"), example)
        for x in calibration:
            prepared(x)
        return convert_to_reference_fx(prepared)


class SharedQParams(nn.Module):
    """conv -> relu -> max pool -> flatten -> linear -> / 8 -> reshape -> softmax. torch's flow
    gives the max pool, the flatten and the reshape their input's qparams (shared qparams ops): in
    the reference graph each sits in a dequantize -> op -> quantize with the same scale and zero
    point; the div's quantize comes after the reshape."""

    def __init__(self):
        super().__init__()
        self.conv, self.pool, self.lin = nn.Conv2d(3, 4, 3), nn.MaxPool2d(2), nn.Linear(64, 8)

    def forward(self, x):
        y = torch.flatten(self.pool(torch.relu(self.conv(x))), 1)
        return torch.softmax((self.lin(y) / 8.0).reshape(2, -1), -1)


def _quantize_calls(gm):
    return [n.name for n in gm.graph.nodes if n.target is torch.quantize_per_tensor]


def test_shared_qparams_ops_run_on_codes_every_uint8_code():
    torch.manual_seed(4)
    ref = _reference_fx(SharedQParams(), (torch.randn(1, 3, 10, 10),),
                        [torch.randn(1, 3, 10, 10) * 2 for _ in range(4)])
    code, quantizes = ref.code, _quantize_calls(ref)
    # the shared qparams the test is about: pool and flatten repeat their input's scale
    assert ref._scale_0.item() == ref.pool_scale_0.item() == ref._scale_1.item()
    folded, report = qfold.fx.fold(ref)
    assert [(s.pass_name, s.folded) for s in report.sites] == [("fold_scale_into_quantize", True)] * 3
    assert ref.code == code
    after = _quantize_calls(folded)
    assert set(quantizes) - set(after) == {"quantize_per_tensor_3", "quantize_per_tensor_4"}
    assert "self.pool(quantize_per_tensor_2)" in folded.code  # the max pool reads the codes
    assert "truediv" not in folded.code and "_scale_1 = " not in folded.code
    with torch.no_grad():
        # every quint8 code at the conv's output (4 x 8 x 8 = 256 values) in both graphs
        ia = AllCodes(ref, "quantize_per_tensor_1", (1, 4, 8, 8))
        ib = AllCodes(folded, "quantize_per_tensor_1", (1, 4, 8, 8))
        a, b = ia.run(torch.zeros(1, 3, 10, 10)), ib.run(torch.zeros(1, 3, 10, 10))
        assert torch.equal(a, b)
        for name in ("quantize_per_tensor_2", "quantize_per_tensor_5", "quantize_per_tensor_6"):
            assert torch.equal(ia.codes[name], ib.codes[name]), name
        assert ia.codes["quantize_per_tensor_2"].unique().numel() > 100
        # the pooled and flattened codes: the removed quantizes' codes, now the pool's and flatten's
        assert torch.equal(ia.codes["quantize_per_tensor_4"], ib.codes["flatten"])
        rs = torch.Generator().manual_seed(5)
        for _ in range(20):
            v = torch.randn(1, 3, 10, 10, generator=rs) * 3
            assert torch.equal(folded(v), ref(v))


class Requantize(nn.Module):
    """quantize(s_in, z_in) -> dequantize -> [op] -> quantize(s_out, z_out), op one of the
    element-moving ops (or none, or x * c); returns the codes, their scale and zero point, and
    the dequantized values."""

    def __init__(self, s_in, z_in, s_out, z_out, op="flatten", c=None, other_reader=False):
        super().__init__()
        self.op, self.c, self.other_reader = op, c, other_reader
        self.register_buffer("s_in", torch.tensor(s_in, dtype=torch.float64))
        self.register_buffer("z_in", torch.tensor(z_in))
        self.register_buffer("s_out", torch.tensor(s_out, dtype=torch.float64))
        self.register_buffer("z_out", torch.tensor(z_out))
        self.pool = nn.MaxPool1d(2, padding=1)

    def forward(self, x):
        d = torch.quantize_per_tensor(x, self.s_in, self.z_in, torch.qint8).dequantize()
        y = d
        if self.c is not None:
            y = y * self.c
        if self.op == "flatten":
            y = torch.flatten(y.reshape(4, 8, 8), 1).permute(1, 0).contiguous()
        elif self.op == "pool":
            y = self.pool(y.reshape(1, 4, 64))
        q = torch.quantize_per_tensor(y, self.s_out, self.z_out, torch.qint8)
        extra = torch.relu(d).sum() if self.other_reader else 0
        return q.int_repr(), q.q_scale(), q.q_zero_point(), q.dequantize() + extra


def _same_on_every_code(gm, folded, s, z):
    x = every_code_input(s, z).reshape(256)
    rs = torch.Generator().manual_seed(6)
    for v in (x, x.flip(0), torch.randn(256, generator=rs) * 3):
        a, b = gm(v), folded(v)
        assert torch.equal(a[0], b[0]) and a[1:3] == b[1:3] and torch.equal(a[3], b[3])


@pytest.mark.parametrize("op", ["flatten", "pool", None])
@pytest.mark.parametrize("other_reader", [False, True])
def test_a_requantize_with_the_same_qparams_goes(op, other_reader):
    gm = torch.fx.symbolic_trace(Requantize(0.0173, -3, 0.0173, -3, op,
                                            other_reader=other_reader))
    code = gm.code
    folded, report = qfold.fx.fold(gm)
    assert [(s.pass_name, s.folded) for s in report.sites] == [("fold_scale_into_quantize", True)]
    assert gm.code == code and len(_quantize_calls(folded)) == 1
    kept = any(n.name == "dequantize" for n in folded.graph.nodes)
    assert kept == other_reader  # the other reader keeps the dequantize
    assert "_make_per_tensor_quantized_tensor" not in folded.code  # same qparams: nothing to redo
    _same_on_every_code(gm, folded, 0.0173, -3)


def test_qparams_that_give_every_code_back_are_carried_over():
    """A scale 1 ulp off in float64 still gives every code back: the sandwich goes, and the
    readers get the codes with the removed quantize's own scale (torch tensors carry it)."""
    s_in = 0.0173
    s_out = math.nextafter(s_in, 1.0)
    assert qfold.prove_requantize_identity(
        "mul", 1.0, qfold.QParams(s_in, -3, "int8"), qfold.QParams(s_out, -3, "int8")) is None
    gm = torch.fx.symbolic_trace(Requantize(s_in, -3, s_out, -3, "flatten"))
    folded, report = qfold.fx.fold(gm)
    assert report.sites[0].folded and "_make_per_tensor_quantized_tensor" in folded.code
    _same_on_every_code(gm, folded, s_in, -3)


def test_a_multiply_sandwich_that_gives_every_code_back_goes():
    """dequantize -> * 2 -> quantize with twice the scale: the codes come back, the sandwich goes
    (not only the 2 into the scale)."""
    gm = torch.fx.symbolic_trace(Requantize(0.0173, -3, 0.0346, -3, None, c=2.0))
    folded, report = qfold.fx.fold(gm)
    assert report.sites[0].folded and len(_quantize_calls(folded)) == 1
    assert "mul" not in folded.code
    _same_on_every_code(gm, folded, 0.0173, -3)


@pytest.mark.parametrize("s_out,z_out", [(0.019, -3), (0.0173, -2)])
def test_a_requantize_that_moves_a_code_is_refused(s_out, z_out):
    gm = torch.fx.symbolic_trace(Requantize(0.0173, -3, s_out, z_out, "pool"))
    code = gm.code
    folded, report = qfold.fx.fold(gm, inplace=True)
    assert [s.reason for s in report.sites] == ["not_exact"]
    assert folded.code == code


def test_an_op_that_computes_is_not_looked_through():
    class AvgPool(nn.Module):
        def forward(self, x):
            d = torch.quantize_per_tensor(x, 0.02, 0, torch.qint8).dequantize()
            q = torch.quantize_per_tensor(nn.functional.avg_pool1d(d.reshape(1, 1, 256), 2), 0.02,
                                          0, torch.qint8)
            return q.int_repr()

    gm = torch.fx.symbolic_trace(AvgPool())
    code = gm.code
    folded, report = qfold.fx.fold(gm)
    assert len(report.sites) == 0 and folded.code == code
