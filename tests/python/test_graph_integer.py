"""qfold.run_passes' integer passes over an IR written in Python (IntIR, TOSA-like dict nodes):
DyT alpha, DyT affine, a RESCALE pair, a TABLE pair and an elementwise chain folded, each folded graph run
against the original on every int8 input code with an interpreter written from the TOSA spec
(reference.py); refusals leave the IR unchanged; an exception at each method call of one fold
leaves it untouched or folded, never half."""

import numpy as np
import pytest

import qfold
import reference as ref
from dict_ir import DictIR

CODES = list(range(-128, 128))


class IntIR(DictIR):
    """node: {"op", "in", "dtype", "shape", "attrs", "data" (constants), "q" (QParams)}; the table
    of a TABLE is its operand 1 (an int8 constant of 256 entries)."""

    def _new(self, d):
        self.n.append(d)
        return len(self.n) - 1

    # integer reads
    def int_constant(self, i):
        d = self.n[i]
        return d["data"] if d["op"] == "constant" else None  # a numpy array, its own shape

    def output_shape(self, i):
        return self.n[i]["shape"]

    def rescale(self, i):
        return self.n[i]["attrs"]  # flat: the attributes, "multipliers", "shifts"

    def mul_shift(self, i):
        return self.n[i]["attrs"].get("shift", 0)

    def clamp_attributes(self, i):
        a = self.n[i]["attrs"]
        return {"min": a["min"], "max": a["max"]}

    def element_type(self, i):
        return self.n[i].get("dtype")

    def qparams(self, i):
        return self.n[i].get("q")

    def set_qparams(self, i, q):
        self.n[i]["q"] = q

    # integer mutations
    def add_int_constant(self, data, shape, dtype):
        return self._new({"op": "constant", "in": [], "dtype": dtype, "shape": list(shape),
                          "data": np.asarray(data).reshape(shape)})

    def add_table(self, x, values):
        assert values.dtype == np.int8 and values.shape == (256,)
        t = self.add_int_constant(values, (256,), "int8")
        return self._new({"op": "table", "in": [x, t], "dtype": "int8",
                          "shape": list(self.n[x]["shape"])})

    def add_rescale(self, x, attributes, multipliers, shifts):
        attrs = dict(attributes, multipliers=np.asarray(multipliers),
                     shifts=np.asarray(shifts))
        out = {"i8": "int8", "i16": "int16", "i32": "int32"}[attributes["output_type"]]
        return self._new({"op": "rescale", "in": [x], "dtype": out,
                          "shape": list(self.n[x]["shape"]), "attrs": attrs})


# --- building -------------------------------------------------------------------------------------
class Builder:
    def __init__(self):
        self.nodes = [{"op": "input", "in": [], "dtype": "int8", "shape": [256],
                       "q": qfold.QParams(0.05, 3)}]

    def add(self, op, ins, dtype="int8", shape=None, **d):
        self.nodes.append({"op": op, "in": list(ins), "dtype": dtype,
                           "shape": shape or [256], **d})
        return len(self.nodes) - 1

    def const(self, values, dtype="int8", q=None):
        data = np.array(values, dtype=dtype).reshape(-1)
        return self.add("constant", [], dtype, [data.size], data=data, q=q)

    def rescale(self, x, scale, in_t="i8", out_t="i8", izp=0, ozp=0, **extra):
        f = qfold.multiplier_shift(scale)
        out = {"i8": "int8", "i16": "int16", "i32": "int32"}[out_t]
        attrs = {"input_type": in_t, "output_type": out_t, "input_zp": izp, "output_zp": ozp,
                 "scale32": True, "rounding": "single_round", "per_channel": False,
                 "multipliers": np.array([f.multiplier], np.int32),
                 "shifts": np.array([f.shift], np.int8), **extra}
        return self.add("rescale", [x], out, list(self.nodes[x]["shape"]), attrs=attrs)

    def table(self, x, values, q=None):
        t = self.const(values, "int8")
        return self.add("table", [x, t], q=q)

    def ir(self, out):
        return IntIR(self.nodes, [out])


def tanh_table(q_in, q_out):
    return qfold.table8("tanh", q_in, q_out)


def dyt_alpha_ir(alpha=0.7, tanh_in_zp=0):
    b = Builder()
    act = b.nodes[0]["q"]
    tanh_in, tanh_out = qfold.QParams(0.02, tanh_in_zp), qfold.QParams(1 / 128, 0)
    alpha_scale = abs(alpha) / 127
    a = b.const([-127 if alpha < 0 else 127], q=qfold.QParams(alpha_scale, 0))
    x32 = b.rescale(0, 1.0, "i8", "i32", izp=act.zero_point)
    a32 = b.rescale(a, 1.0, "i8", "i32")
    prod = b.add("mul", [x32, a32], "int32", attrs={"shift": 0})
    to_tanh = b.rescale(prod, act.scale * alpha_scale / tanh_in.scale, "i32", "i8",
                        ozp=tanh_in.zero_point)
    b.nodes[to_tanh]["q"] = tanh_in
    t = b.table(to_tanh, tanh_table(tanh_in, tanh_out), q=tanh_out)
    return b.ir(t)


def rescale_pair_ir(s1=3.0, s2=0.125, zp=(1, 0, 3)):
    b = Builder()
    r1 = b.rescale(0, s1, "i8", "i32", izp=zp[0])
    r2 = b.rescale(r1, s2, "i32", "i8", ozp=zp[2])
    b.nodes[r2]["q"] = qfold.QParams(0.1, zp[2])
    return b.ir(r2)


def table_pair_ir(seed=1):
    rs = np.random.default_rng(seed)
    b = Builder()
    t1 = b.table(0, rs.integers(-128, 128, 256))
    t2 = b.table(t1, rs.integers(-128, 128, 256), q=qfold.QParams(0.1, 1))
    return b.ir(t2)


def chain_ir(seed=2):
    """RESCALE i8->i32, MUL by 3 (shift 0), ADD 1000, CLAMP, RESCALE i32->i8, TABLE, CAST i8."""
    rs = np.random.default_rng(seed)
    b = Builder()
    r = b.rescale(0, 1.0, "i8", "i32", izp=3)
    m = b.add("mul", [r, b.const([3], "int32")], "int32", attrs={"shift": 0})
    a = b.add("add", [m, b.const([1000], "int32")], "int32")
    c = b.add("clamp", [a], "int32", attrs={"min": 700, "max": 1200})
    r2 = b.rescale(c, 0.3, "i32", "i8", ozp=-100)
    t = b.table(r2, rs.integers(-128, 128, 256))
    out = b.add("cast", [t], "int8")
    return b.ir(out)


# --- the interpreter (TOSA spec semantics, reference.py) -----------------------------------------
def run(ir, codes=CODES):
    vals = {}

    def value(i):
        if i not in vals:
            vals[i] = compute(i)
        return vals[i]

    def bcast(v, n):
        return v * n if len(v) == 1 else v

    def compute(i):
        d = ir.n[i]
        op = d["op"]
        if op == "input":
            return list(codes)
        if op == "constant":
            return [int(v) for v in d["data"].reshape(-1)]
        x = value(d["in"][0])
        if op == "rescale":
            a = d["attrs"]
            (m,), (s,) = [int(v) for v in a["multipliers"]], [int(v) for v in a["shifts"]]
            return [ref.rescale(v, m, s, a["input_type"], a["output_type"], a["input_zp"],
                                a["output_zp"], a.get("scale32", True),
                                a.get("rounding") == "double_round") for v in x]
        if op == "table":
            table = value(d["in"][1])
            if len(table) == 513:  # int16 in, int32 out (TABLE.tosac, unscaled)
                return [ref.tosa_table16(table, v) for v in x]
            assert len(table) == 256
            return [table[v + 128] for v in x]
        if op == "clamp":
            return [min(max(v, d["attrs"]["min"]), d["attrs"]["max"]) for v in x]
        if op == "cast":  # CAST.tosac: truncate to the target's bits
            bits = {"int8": 8, "int16": 16, "int32": 32}[d["dtype"]]
            return [((v + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1)) for v in x]
        y = bcast(value(d["in"][1]), len(x))
        x = bcast(x, len(y))
        if op == "mul":
            return [ref.mul(p, q, d["attrs"].get("shift", 0)) for p, q in zip(x, y)]
        if op in ("add", "sub"):
            r = [p + q if op == "add" else p - q for p, q in zip(x, y)]
            ref.require(all(ref.INT32_MIN <= v <= ref.INT32_MAX for v in r))
            return r
        raise AssertionError(op)

    return value(ir.outputs[0])


def state(ir):
    def q(x):
        return None if x is None else (x.scale, x.zero_point, x.dtype)

    def attrs(a):
        return None if a is None else sorted(
            (k, v.tolist() if isinstance(v, np.ndarray) else v) for k, v in a.items())

    return ([(i, d["op"], tuple(d["in"]), d.get("dtype"), tuple(d["shape"]), attrs(d.get("attrs")),
              None if "data" not in d else d["data"].tolist(), q(d.get("q")),
              repr(d.get("qconv")))
             for i, d in enumerate(ir.n) if not d.get("dead")], tuple(ir.outputs))


def live_ops(ir):
    return [ir.n[i]["op"] for i in ir.nodes()]


# --- folds ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.7, -1.9, 0.02, 4.5])
def test_dyt_alpha_folds_into_one_table(alpha):
    ir = dyt_alpha_ir(alpha)
    before = run(ir)
    report = qfold.run_passes(ir, ["fold_dyt_alpha"])
    (site,) = report.sites
    assert site.folded, site
    assert live_ops(ir) == ["input", "constant", "table"]
    assert run(ir) == before
    (t,) = [i for i in ir.nodes() if ir.n[i]["op"] == "table"]
    assert ir.n[t]["in"][0] == 0 and ir.n[t]["q"].scale == 1 / 128


@pytest.mark.parametrize("s1,s2,zp", [(0.37, 2.1, (3, 0, 7)), (1.0, 1.0, (0, 0, 0)),
                                      (0.25, 4.0, (-128, 0, 127)), (3.0, 0.125, (1, 0, 3))])
def test_rescale_pair_merges(s1, s2, zp):
    ir = rescale_pair_ir(s1, s2, zp)
    before = run(ir)
    report = qfold.run_passes(ir, ["fold_merge_rescales"])
    (site,) = report.sites
    if site.folded:
        assert live_ops(ir) == ["input", "rescale"] and run(ir) == before
        (r,) = [i for i in ir.nodes() if ir.n[i]["op"] == "rescale"]
        assert ir.n[r]["q"].zero_point == zp[2] and ir.n[r]["in"] == [0]
    else:
        assert site.reason == "not_exact"


def test_some_rescale_pair_merges_and_one_does_not():
    ir = rescale_pair_ir()
    assert qfold.run_passes(ir, ["fold_merge_rescales"]).folded == 1
    # int8 x16 -> int8 x1/16 clamps in between: no single RESCALE equals it
    b = Builder()
    r1 = b.rescale(0, 16.0)
    r2 = b.rescale(r1, 1 / 16)
    ir = b.ir(r2)
    s = state(ir)
    (site,) = qfold.run_passes(ir, ["fold_merge_rescales"]).sites
    assert not site.folded and site.reason == "not_exact" and state(ir) == s


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_table_pair_composes(seed):
    ir = table_pair_ir(seed)
    before = run(ir)
    (site,) = qfold.run_passes(ir, ["fold_compose_tables"]).sites
    assert site.folded
    assert live_ops(ir) == ["input", "constant", "table"] and run(ir) == before


def test_chain_collapses_to_one_table():
    ir = chain_ir()
    before = run(ir)
    report = qfold.run_passes(ir, ["fold_collapse_to_table"])
    assert report.folded == 1, report.sites
    assert live_ops(ir) == ["input", "constant", "table"] and run(ir) == before


def test_default_passes_run_what_the_object_supports():
    # IntIR has no conv_attributes / quantized_conv / view_axis: DyT affine is not selected, and
    # asked for by name it is an error naming what is missing
    ir = table_pair_ir()
    before = run(ir)
    report = qfold.run_passes(ir)
    assert report.folded == 1 and run(ir) == before
    with pytest.raises(qfold.Error, match="fold_dyt_affine needs.*quantized_conv"):
        qfold.run_passes(table_pair_ir(), ["fold_dyt_affine"])

    # an IR class without add_rescale: merge_rescales is not selected (collapse_to_table takes
    # the pair instead), by name an error
    NoRescale = type("NoRescale", (DictIR,), {k: v for k, v in IntIR.__dict__.items()
                                               if k not in ("add_rescale", "__dict__",
                                                            "__weakref__")})
    ir = NoRescale(rescale_pair_ir().n, [2])
    before = run(ir)
    report = qfold.run_passes(ir)
    assert [s.pass_name for s in report.sites] == ["fold_collapse_to_table"] and report.folded
    assert live_ops(ir) == ["input", "constant", "table"] and run(ir) == before
    ir = NoRescale(rescale_pair_ir().n, [2])
    with pytest.raises(qfold.Error, match="fold_merge_rescales needs the IR method.*add_rescale"):
        qfold.run_passes(ir, ["fold_merge_rescales"])


class Int16IR(IntIR):
    """IntIR that can make int16 TABLEs too: collapse_to_table then folds int16 chains."""

    def add_table16(self, x, values):
        assert values.dtype == np.int16 and values.shape == (513,)
        t = self.add_int_constant(values, (513,), "int16")
        return self._new({"op": "table", "in": [x, t], "dtype": "int32",
                          "shape": list(self.n[x]["shape"])})


INT16_CODES = list(range(-32768, 32768))


def int16_chain_ir(cls, factor=None, scale=1 / 128):
    """int16 input -> RESCALE to i32 -> [MUL by factor] -> RESCALE to i8 by scale -> CLAMP."""
    b = Builder()
    b.nodes[0].update(dtype="int16", shape=[65536])
    r = b.rescale(0, 1.0, "i16", "i32")
    if factor is not None:
        r = b.add("mul", [r, b.const([factor], "int32")], "int32", [65536], attrs={"shift": 0})
    r2 = b.rescale(r, scale, "i32", "i8")
    out = b.add("clamp", [r2], "int8", [65536], attrs={"min": -100, "max": 100})
    return cls(b.nodes, [out])


@pytest.mark.parametrize("factor,scale", [(None, 1 / 128), (2, 1 / 256)])
def test_int16_chain_collapses_to_an_int16_table(factor, scale):
    """round(x / 128) clamped is linear on every 128-code segment: the 513 knots are exact, and
    the folded TABLE + RESCALE gives the chain's code on all 65,536 inputs."""
    ir = int16_chain_ir(Int16IR, factor, scale)
    before = run(ir, INT16_CODES)
    report = qfold.run_passes(ir, ["fold_collapse_to_table"])
    assert report.folded == 1, report.sites
    assert live_ops(ir) == ["input", "constant", "table", "rescale"]
    assert run(ir, INT16_CODES) == before
    assert len(set(before)) == 201  # every clamped code occurs


def test_int16_chains_need_add_table16_and_exactness():
    ir = int16_chain_ir(IntIR)  # no add_table16: refused, the IR unchanged
    s = state(ir)
    (site,) = qfold.run_passes(ir, ["fold_collapse_to_table"]).sites
    assert site.reason == "unsupported" and "add_table(int16)" in site.message
    assert state(ir) == s
    ir = int16_chain_ir(Int16IR, 3, 1 / 512)  # 3x/512: a staircase no 513-knot table gives
    s, before = state(ir), run(ir, INT16_CODES)
    (site,) = qfold.run_passes(ir, ["fold_collapse_to_table"]).sites
    assert site.reason == "not_exact" and site.index is not None
    assert state(ir) == s and run(ir, INT16_CODES) == before


# --- refusals -------------------------------------------------------------------------------------
def refuses(ir, passes, reason):
    s = state(ir)
    report = qfold.run_passes(ir, passes)
    assert report.folded == 0 and [x.reason for x in report.sites] == [reason], report.sites
    assert state(ir) == s


def test_refusals_leave_the_ir_unchanged():
    ir = dyt_alpha_ir()
    ir.outputs.append(4)  # the MUL read twice
    refuses(ir, ["fold_dyt_alpha"], "shared_output")
    ir = dyt_alpha_ir()
    ir.n[1]["data"] = np.array([5, 6], np.int8)  # alpha of two elements
    ir.n[1]["shape"] = [2]
    refuses(ir, ["fold_dyt_alpha"], "not_scalar")
    ir = dyt_alpha_ir()
    ir.n[5]["attrs"]["output_zp"] = 9  # tanh input zero point 0, RESCALE output zp 9
    refuses(ir, ["fold_dyt_alpha"], "qparams_mismatch")
    ir = rescale_pair_ir()
    ir.n[1]["attrs"]["rounding"] = "inexact_round"
    refuses(ir, ["fold_merge_rescales"], "unsupported_rescale")
    ir = table_pair_ir()
    ir.outputs.append(2)
    refuses(ir, ["fold_compose_tables"], "shared_output")
    ir = table_pair_ir()
    ir.n[1]["data"] = ir.n[1]["data"][:100]  # a table of 100 entries
    ir.n[1]["shape"] = [100]
    refuses(ir, ["fold_compose_tables"], "invalid_shape")


def test_bad_values_are_adapter_failures():
    # a multiplier that does not fit int32 is read as int64 and refused by qfold; a uint64 value
    # beyond int64, or a float array, is an adapter failure: never a wrapped value
    ir = rescale_pair_ir()
    ir.n[1]["attrs"]["multipliers"] = np.array([1 << 63], np.uint64)
    s = state(ir)
    report = qfold.run_passes(ir, ["fold_merge_rescales"])
    assert [x.reason for x in report.sites] == ["adapter_failure"] and state(ir) == s
    assert any("multipliers" in e for e in report.adapter_errors)
    ir = rescale_pair_ir()
    ir.n[1]["attrs"]["multipliers"] = np.array([1 << 40], np.int64)
    refuses(ir, ["fold_merge_rescales"], "unsupported_rescale")
    ir = table_pair_ir()
    ir.n[1]["data"] = ir.n[1]["data"].astype(np.int16)
    ir.n[1]["data"][0] = 300  # a table entry outside int8
    refuses(ir, ["fold_compose_tables"], "invalid_shape")
    ir = table_pair_ir()
    ir.n[1]["data"] = ir.n[1]["data"].astype(np.float32)
    s = state(ir)
    report = qfold.run_passes(ir, ["fold_compose_tables"])
    assert [x.reason for x in report.sites] == ["adapter_failure"] and state(ir) == s
    ir = table_pair_ir()
    ir.n[2]["dtype"] = "bfloat16"  # unknown element types are None
    assert qfold.run_passes(ir, ["fold_collapse_to_table"]).folded == 0


# --- an exception at each method call of one fold ------------------------------------------------
METHODS = {"nodes", "kind", "operands", "use_count", "int_constant", "output_shape", "rescale",
           "mul_shift", "clamp_attributes", "element_type", "qparams", "set_qparams",
           "add_int_constant", "add_table", "add_rescale", "set_operand", "remove_last_operand",
           "replace_uses", "erase"}


class Failing(IntIR):
    def __init__(self, base, k):
        super().__init__(base.n, base.outputs)
        self.k, self.calls = k, 0

    def __getattribute__(self, name):
        if name in METHODS:
            self.calls += 1
            if self.calls == self.k:
                raise RuntimeError(f"injected at call {self.k} ({name})")
        return object.__getattribute__(self, name)


@pytest.mark.parametrize("make,passes", [(rescale_pair_ir, ["fold_merge_rescales"]),
                                         (dyt_alpha_ir, ["fold_dyt_alpha"]),
                                         (table_pair_ir, ["fold_compose_tables"])])
def test_an_exception_at_each_method_call(make, passes):
    counter = Failing(make(), 0)
    assert qfold.run_passes(counter, passes).folded == 1
    total, folded = counter.calls, state(counter)
    before = run(make())
    assert total > 10
    outcomes = set()
    for k in range(1, total + 1):
        base = make()
        untouched = state(base)
        f = Failing(base, k)
        report = qfold.run_passes(f, passes)
        assert any("injected" in e for e in report.adapter_errors), k
        after = state(f)
        if after == untouched:
            assert report.folded == 0, k
            outcomes.add("untouched")
        elif after == folded:
            outcomes.add("folded")
        else:  # an erase failed after the commit: folded, unused nodes left, same results
            assert report.sites[0].folded and report.sites[0].cleanup_failed, k
            outcomes.add("cleanup_failed")
        assert run(f) == before, k
    assert "untouched" in outcomes and len(outcomes) >= 2


# --- DyT affine: the affine after a TABLE into the next integer convolution ----------------------

class AffIR(IntIR):
    def conv_attributes(self, i):
        return self.n[i]["attrs"]
    def quantized_conv(self, i):
        return self.n[i].get("qconv")
    def view_axis(self, i, a):
        perm = self.n[i]["attrs"]["perm"]
        return perm.index(a)
    def set_conv_input_zero_point(self, i, zp):
        self.n[i]["qconv"] = dict(self.n[i]["qconv"], input_zero_point=zp)

def affine_ir(gamma=(1, -1, 2, 1), beta=(10, -7, 0, 4), tzp=0, ozp=0, seed=1):
    rs = np.random.default_rng(seed)
    C = len(gamma)
    b = Builder()
    b.nodes[0]["shape"] = [1, 3, 3, C]
    tab = b.table(0, rs.integers(-50, 51, 256), q=qfold.QParams(1 / 128, tzp))
    b.nodes[tab]["shape"] = [1, 3, 3, C]
    def const(vals, shape, dtype="int8"):
        return b.add("constant", [], dtype, list(shape), data=np.array(vals, dtype).reshape(shape))
    g = const(gamma, (1, 1, 1, C)); be = const(beta, (1, 1, 1, C))
    t32 = b.rescale(tab, 256.0, "i8", "i32", izp=tzp)
    g32 = b.rescale(g, 1.0, "i8", "i32")
    m = b.add("mul", [t32, g32], "int32", [1, 3, 3, C], attrs={"shift": 0})
    sc = b.rescale(m, 1 / 256, "i32", "i8")
    s32 = b.rescale(sc, 16.0, "i8", "i32")
    b32 = b.rescale(be, 16.0, "i8", "i32")
    a = b.add("add", [s32, b32], "int32", [1, 3, 3, C])
    s = b.rescale(a, 1 / 16, "i32", "i8", ozp=ozp)
    v = b.add("view", [s], "int8", [1, C, 3, 3], attrs={"perm": [0, 3, 1, 2]})
    w = const(rs.integers(-20, 21, 4 * C * 9), (4, C, 3, 3))
    bias = const(rs.integers(-1000, 1001, 4), (4,), "int32")
    conv = b.add("convolution", [v, w, bias], "int32", [1, 4, 1, 1],
                 attrs={"groups": 1, "padded": False, "input_channel_axis": 1},
                 qconv={"input_zero_point": ozp, "weight_zero_points": [0], "weight_type": "int8"})
    return AffIR(b.nodes, [conv])



def run_nd(ir, x):
    """ir's output for one input tensor, numpy broadcasting, the TOSA spec references per element."""
    vals = {}

    def value(i):
        if i not in vals:
            vals[i] = compute(i)
        return vals[i]

    def compute(i):
        d = ir.n[i]
        op = d["op"]
        if op == "input":
            return x
        if op == "constant":
            return d["data"].astype(np.int64)
        a = [value(j) for j in d["in"]]
        if op == "table":
            return a[1][a[0] + 128]
        if op == "rescale":
            r = d["attrs"]
            m, s = int(r["multipliers"][0]), int(r["shifts"][0])
            return np.vectorize(lambda v: ref.rescale(int(v), m, s, r["input_type"],
                                                      r["output_type"], r["input_zp"],
                                                      r["output_zp"]))(a[0])
        if op == "mul":
            return np.vectorize(lambda p, q: ref.mul(int(p), int(q), d["attrs"]["shift"]))(*a)
        if op == "add":
            r = a[0] + a[1]
            ref.require(((r >= ref.INT32_MIN) & (r <= ref.INT32_MAX)).all())
            return r
        if op == "view":
            return np.transpose(a[0], d["attrs"]["perm"])
        assert op == "convolution", op
        q = d["qconv"]
        xin, w, bias = a[0] - q["input_zero_point"], a[1] - q["weight_zero_points"][0], a[2]
        assert not d["attrs"]["padded"] and d["attrs"]["groups"] == 1
        o, _, kh, kw = w.shape
        hh, ww = xin.shape[2] - kh + 1, xin.shape[3] - kw + 1
        out = np.zeros((1, o, hh, ww), np.int64)
        for y in range(hh):
            for z in range(ww):
                out[0, :, y, z] = np.einsum("ochw,chw->o", w, xin[0, :, y:y + kh, z:z + kw])
        return out + bias.reshape(1, o, 1, 1)

    return value(ir.outputs[0])


def affine_inputs(ir, seed=0):
    """Inputs covering every int8 code at every position (cyclic), then random ones."""
    shape = ir.n[0]["shape"]
    size = int(np.prod(shape))
    xs = [((np.arange(size) * 37 + k) % 256 - 128).reshape(shape) for k in range(256)]
    rs = np.random.default_rng(seed)
    return xs + [rs.integers(-128, 128, shape) for _ in range(20)]


@pytest.mark.parametrize("tzp,ozp", [(0, 0), (5, -3)])
def test_dyt_affine_folds_into_the_convolution(tzp, ozp):
    ir = affine_ir(tzp=tzp, ozp=ozp)
    xs = affine_inputs(ir)
    before = [run_nd(ir, x) for x in xs]
    report = qfold.run_passes(ir, ["fold_dyt_affine"])
    (site,) = report.sites
    assert site.folded and not report.adapter_errors, (site, report.adapter_errors)
    assert live_ops(ir) == ["input", "constant", "table", "view", "convolution", "constant",
                            "constant"]
    for x, y in zip(xs, before):
        np.testing.assert_array_equal(run_nd(ir, x), y)


def test_dyt_affine_refusal_leaves_the_ir_unchanged():
    ir = affine_ir(gamma=(3, -2, 5, 1))  # gamma * table saturates int8: not an integer line
    s = state(ir)
    (site,) = qfold.run_passes(ir, ["fold_dyt_affine"]).sites
    assert not site.folded and site.reason == "not_exact" and state(ir) == s
