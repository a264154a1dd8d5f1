"""Folds on plain parameters: batch norm against a float32 replay of torch's formulas (numpy) and,
when python3-torch is installed, bit for bit against torch.nn.utils.fusion; DyT alpha against a
replay of the integer pattern with reference.py; DyT affine, scale into quantize; refusals with
their reason and witness index."""
import random

import numpy as np
import pytest

import qfold
import reference as ref

F32 = np.float32


def numpy_fold(w, b, mean, var, gamma, beta, eps, kind, transpose=False, groups=1):
    rsqrt = F32(1) / np.sqrt(var + F32(eps))
    if b is None:
        b = np.zeros_like(mean)
    if kind == "linear":
        scale = gamma * rsqrt
        return w * scale[:, None], (b - mean) * scale + beta
    scale = (gamma * rsqrt).astype(F32)
    if transpose:  # (in, out/groups, k...): output channel (i // per_in) * per_out + j
        per_in, per_out = w.shape[0] // groups, w.shape[1]
        s = scale.reshape(groups, 1, per_out)
        s = np.repeat(s, per_in, axis=1).reshape(w.shape[0], per_out)
        fw = w * s.reshape(s.shape + (1,) * (w.ndim - 2))
    else:
        fw = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
    return fw, ((b - mean) * rsqrt) * gamma + beta


def random_params(rs, channels):
    return (rs.standard_normal(channels).astype(F32), rs.uniform(0.1, 3, channels).astype(F32),
            rs.standard_normal(channels).astype(F32), rs.standard_normal(channels).astype(F32))


CONV_CASES = [  # (weight shape, groups, transposed)
    ((8, 3, 3, 3), 1, False), ((6, 4), 1, False), ((5, 2, 7), 1, False), ((4, 2, 3, 3, 3), 1, False),
    ((8, 2, 3, 3), 4, False), ((8, 1, 3, 3), 8, False),  # grouped, depthwise
    ((3, 8, 3, 3), 1, True), ((6, 2, 3, 3), 3, True),     # transposed, grouped transposed
]


@pytest.mark.parametrize("shape, groups, transposed", CONV_CASES)
def test_batch_norm_vs_numpy_replay(shape, groups, transposed):
    rs = np.random.default_rng(sum(shape) + groups)
    w = rs.standard_normal(shape).astype(F32)
    channels = shape[1] * groups if transposed else shape[0]
    b = rs.standard_normal(channels).astype(F32)
    mean, var, gamma, beta = random_params(rs, channels)
    kind = "linear" if len(shape) == 2 else "conv"
    layout = "i_o_s" if transposed else "o_i_s"
    fw, fb = qfold.fold_batch_norm(w, b, mean, var, gamma, beta, 1e-5, kind=kind, layout=layout,
                                   groups=groups)
    ew, eb = numpy_fold(w, b, mean, var, gamma, beta, 1e-5, kind, transposed, groups)
    assert fw.dtype == F32 and fw.shape == w.shape
    assert fw.tobytes() == ew.astype(F32).tobytes()
    assert fb.tobytes() == eb.astype(F32).tobytes()
    # float64 goes through in float64
    d = qfold.fold_batch_norm(w.astype(np.float64), None, mean.astype(np.float64),
                              var.astype(np.float64), gamma.astype(np.float64),
                              beta.astype(np.float64), kind=kind, layout=layout, groups=groups)
    assert d[0].dtype == np.float64


def test_batch_norm_bit_identical_to_torch():
    torch = pytest.importorskip(
        "torch", reason="python3-torch is not installed (apt-get install -y python3-torch)")
    from torch.nn.utils import fusion
    compared = 0
    for shape, groups, transposed in CONV_CASES:
        if len(shape) == 2 or (transposed and groups > 1):
            continue  # linear below; torch folds grouped transposed convolutions wrongly
        rs = np.random.default_rng(100 + sum(shape))
        for trial in range(5):
            w = rs.standard_normal(shape).astype(F32)
            channels = shape[1] * groups if transposed else shape[0]
            b = rs.standard_normal(channels).astype(F32) if trial % 2 else None
            mean, var, gamma, beta = random_params(rs, channels)
            tw, tb = fusion.fuse_conv_bn_weights(
                torch.from_numpy(w), None if b is None else torch.from_numpy(b),
                torch.from_numpy(mean), torch.from_numpy(var), 1e-5, torch.from_numpy(gamma),
                torch.from_numpy(beta), transpose=transposed)
            fw, fb = qfold.fold_batch_norm(w, b, mean, var, gamma, beta, 1e-5,
                                           layout="i_o_s" if transposed else "o_i_s",
                                           groups=groups)
            assert fw.tobytes() == tw.detach().numpy().tobytes()
            assert fb.tobytes() == tb.detach().numpy().tobytes()
            compared += 1
            # torch tensors go in directly (through .numpy())
            again = qfold.fold_batch_norm(torch.from_numpy(w), b, mean, var, gamma, beta,
                                          layout="i_o_s" if transposed else "o_i_s", groups=groups)
            assert (again[0] == fw).all()
    if hasattr(fusion, "fuse_linear_bn_weights"):
        rs = np.random.default_rng(7)
        for _ in range(5):
            w = rs.standard_normal((16, 9)).astype(F32)
            b = rs.standard_normal(16).astype(F32)
            mean, var, gamma, beta = random_params(rs, 16)
            tw, tb = fusion.fuse_linear_bn_weights(
                torch.from_numpy(w), torch.from_numpy(b), torch.from_numpy(mean),
                torch.from_numpy(var), 1e-5, torch.from_numpy(gamma), torch.from_numpy(beta))
            fw, fb = qfold.fold_batch_norm(w, b, mean, var, gamma, beta, kind="linear")
            assert fw.tobytes() == tw.detach().numpy().tobytes()
            assert fb.tobytes() == tb.detach().numpy().tobytes()
            compared += 1
    assert compared >= 25


def test_batch_norm_refusals():
    w = np.ones((4, 2, 3, 3), F32)
    p = [np.ones(4, F32)] * 4
    r = qfold.fold_batch_norm(w, None, *p, training=True)
    assert isinstance(r, qfold.Rejection) and not r and r.reason == "training_mode"
    r = qfold.fold_batch_norm(w, None, np.ones(3, F32), *p[1:])
    assert r.reason == "channel_mismatch"
    var = np.ones(4, F32)
    var[2] = np.nan
    r = qfold.fold_batch_norm(w, None, p[0], var, p[2], p[3])
    assert (r.reason, r.index) == ("invalid_constant", 2)
    big = np.ones((4, 2, 3, 3), F32)
    big[1, 0, 0, 0] = 3e38
    gamma = np.full(4, 10, F32)
    r = qfold.fold_batch_norm(big, None, p[0], p[1], gamma, p[3])
    assert (r.reason, r.index) == ("non_finite", 18)
    assert qfold.fold_batch_norm(np.ones(4, F32), None, *p).reason == "ambiguous_axis"
    assert qfold.fold_batch_norm(w, None, *p, eps=-1.0).reason == "invalid_constant"
    assert qfold.fold_batch_norm(w, None, *p, groups=3).reason == "ambiguous_axis"
    assert qfold.fold_batch_norm(w, None, np.ones(0, F32), *p[1:]).reason == "invalid_shape"
    assert "Rejection(reason='training_mode'" in repr(qfold.fold_batch_norm(w, None, *p,
                                                                            training=True))
    with pytest.raises(TypeError, match="float32"):
        qfold.fold_batch_norm(w, None, np.ones(4, np.float64), *p[1:])
    with pytest.raises(TypeError):
        qfold.fold_batch_norm(np.ones((4, 2), np.int32), None, *p)
    with pytest.raises(qfold.IllegalAttributes):
        qfold.fold_batch_norm(w, None, *p, layout="nchw")
    with pytest.raises(qfold.InvalidShape):
        qfold.fold_batch_norm(w, None, np.ones((2, 2), F32), *p[1:])
    # lists are converted to the weights' dtype
    fw, fb = qfold.fold_batch_norm(w, None, [0.0] * 4, [1.0] * 4, [1.0] * 4, [0.0] * 4)
    assert fw.dtype == F32


# --- DyT alpha -------------------------------------------------------------------------------

def dyt_site(alpha=40, shift=0, out_scale=0.004):
    act = qfold.Rescale(qfold.multiplier_shift(1.0), input_type="i8", output_type="i32",
                        input_zp=-3)
    al = qfold.Rescale(qfold.multiplier_shift(1.0), input_type="i8", output_type="i32")
    out = qfold.Rescale(qfold.multiplier_shift(out_scale), input_type="i32", output_type="i8",
                        output_zp=2)
    tanh = qfold.table8("tanh", qfold.QParams(0.05, 2), qfold.QParams(1 / 128, 0))
    return dict(activation=(-128, 127), activation_rescale=act, alpha_rescale=al, alpha=alpha,
                mul_shift=shift, output_rescale=out, tanh_input=(-128, 127), tanh_table=tanh)


def python_dyt(site):
    def rs(r, x):
        return ref.rescale(x, r.multiplier, r.shift, r.input_type, r.output_type, r.input_zp,
                           r.output_zp)
    a32 = rs(site["alpha_rescale"], site["alpha"])
    t = site["tanh_table"].tolist()
    return [t[rs(site["output_rescale"], ref.mul(rs(site["activation_rescale"], c), a32,
                                                  site["mul_shift"])) + 128]
            for c in range(-128, 128)]


def test_dyt_alpha_fold_matches_the_pattern():
    for alpha in (-128, -40, 0, 1, 40, 127):
        for out_scale in (0.004, 0.01, 0.03):
            site = dyt_site(alpha, 0, out_scale)
            got = qfold.fold_dyt_alpha(**site)
            assert got.dtype == np.int8 and got.tolist() == python_dyt(site)


def test_dyt_alpha_refusals():
    site = dyt_site()
    site["tanh_table"] = site["tanh_table"][:255]
    assert qfold.fold_dyt_alpha(**site).reason == "invalid_shape"
    site = dyt_site()
    site["tanh_input"] = (-10, 10)
    r = qfold.fold_dyt_alpha(**site)
    assert r.reason == "out_of_range" and r.index is not None
    site = dyt_site()
    site["output_rescale"] = qfold.Rescale(1 << 30, 31, input_type="i32", output_type="i16")
    assert qfold.fold_dyt_alpha(**site).reason == "unsupported_rescale"
    site = dyt_site()
    site["alpha_rescale"] = qfold.Rescale([1 << 30, 1 << 30], [31, 31], input_type="i8",
                                          output_type="i32")
    assert qfold.fold_dyt_alpha(**site).reason == "unsupported_rescale"
    site = dyt_site(alpha=200)
    assert qfold.fold_dyt_alpha(**site).reason == "out_of_range"
    site = dyt_site()
    with pytest.raises(TypeError):
        qfold.fold_dyt_alpha(**{**site, "activation_rescale": 3})
    q = qfold.QParams(0.05, -3)
    assert qfold.dyt_alpha_qparams_line_up(q, site["activation_rescale"], qfold.QParams(0.05, 2),
                                           site["output_rescale"]) is None
    r = qfold.dyt_alpha_qparams_line_up(qfold.QParams(0.05, 0), site["activation_rescale"],
                                        qfold.QParams(0.05, 2), site["output_rescale"])
    assert r.reason == "qparams_mismatch"


# --- DyT affine --------------------------------------------------------------------------------

def affine_site(gamma_code, table):
    one = qfold.multiplier_shift(1.0)
    i8_32 = lambda: qfold.Rescale(one, input_type="i8", output_type="i32")
    i32_8 = lambda: qfold.Rescale(one, input_type="i32", output_type="i8")
    return dict(table=table, table_zero_point=0, table_rescale=i8_32(), gamma_rescale=i8_32(),
                gamma=[gamma_code] * 3, mul_shift=0, product_rescale=i32_8(),
                scaled_rescale=i8_32(), beta_rescale=i8_32(), beta=[0] * 3, sum_rescale=i32_8())


def test_dyt_affine():
    w = np.array(random.Random(3).choices(range(-20, 21), k=2 * 3 * 3 * 3), np.int64).reshape(2, 3, 3, 3)
    bias = [100, -7]
    identity = np.arange(-128, 128, dtype=np.int8)
    plan = qfold.fold_dyt_affine(**affine_site(1, identity), weights=w, bias=bias)
    assert plan.action == "bypass_affine"
    small = np.clip(np.arange(-128, 128), -40, 40).astype(np.int8)  # 2t stays in int8
    plan = qfold.fold_dyt_affine(**affine_site(2, small), weights=w, bias=bias)
    assert plan.action == "fold"
    assert (plan.weights == 2 * w).all() and plan.bias.tolist() == bias
    r = qfold.fold_dyt_affine(**affine_site(2, identity), weights=w, bias=bias)
    assert (r.reason, r.index) == ("not_exact", 0)  # 2t saturates: channel 0 is no line
    r = qfold.fold_dyt_affine(**affine_site(2, small), weights=w, bias=bias, padded=True)
    assert r.reason == "padding"
    r = qfold.fold_dyt_affine(**{**affine_site(2, small), "gamma": [], "beta": []}, weights=w)
    assert r.reason == "invalid_shape"
    r = qfold.fold_dyt_affine(**affine_site(2, small), weights=w[:, :2], bias=bias)
    assert r.reason == "channel_mismatch"


# --- scale into quantize -----------------------------------------------------------------------

def test_scale_into_quantize():
    q = qfold.QParams(0.1, 3)
    assert qfold.fold_scale_into_quantize("div", 2.0, q).scale == 0.2
    assert qfold.fold_scale_into_quantize("mul", 4.0, q).scale == 0.025
    r = qfold.fold_scale_into_quantize("div", 3.0, q)
    assert r.reason == "not_exact"
    assert qfold.fold_scale_into_quantize("div", 3.0, q, exactness="real").scale == 0.1 * 3.0
    assert qfold.fold_scale_into_quantize("div", 0.0, q).reason == "invalid_constant"
    assert qfold.fold_scale_into_quantize("div", -2.0, q).reason == "invalid_constant"
    assert qfold.fold_scale_into_quantize("div", 2.0, qfold.QParams(float("nan"))).reason == \
        "qparams_mismatch"
    with pytest.raises(qfold.IllegalAttributes):
        qfold.fold_scale_into_quantize("add", 2.0, q)


def test_prove_requantize_identity():
    q = qfold.QParams(0.1, 3)
    assert qfold.prove_requantize_identity("mul", 1.0, q, q) is None
    r = qfold.prove_requantize_identity("mul", 2.0, q, q)
    # ExecuTorch's arithmetic replayed in numpy float32 finds the same first code
    codes = np.arange(-128, 128)
    y = (codes - 3).astype(F32) * F32(0.1) * F32(2.0)
    back = np.clip(np.round(y * F32(1.0 / 0.1)) + 3, -128, 127).astype(int)
    first = int(np.nonzero(back != codes)[0][0])
    assert (r.reason, r.index) == ("not_exact", first)
    r = qfold.prove_requantize_identity("mul", 1.0, q, qfold.QParams(0.1, 3, "uint8"))
    assert r.reason == "qparams_mismatch"
    assert qfold.prove_requantize_identity("div", 1.0, q, q, convention="vela") is None
