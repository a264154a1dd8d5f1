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
