"""qfold.run_passes over hostile Python IRs (issue 34): the IR is distrusted as qfold distrusts file
data. A node listed twice, an add_* that returns None or an existing id, statistics that are not
1-D, answers of the wrong type or range: each is a named refusal before anything changes, or is
undone; a rollback that cannot complete is reported as such (Site.rollback_failed,
GraphReport.rollback_failed / ir_changed), never as "folded 0" on a changed IR."""
import numpy as np
import pytest

import qfold
import test_graph_integer as ti
from dict_ir import DictIR
from test_graph import QuantIR, linear_bn_ir, live_state


def with_methods(ir, **methods):
    """ir as an instance of a subclass of its class with `methods` replaced (same nodes, same
    outputs: live_state / ti.state read ir's own)."""
    sub = type("Hostile" + type(ir).__name__, (type(ir),), methods)
    h = object.__new__(sub)
    h.__dict__ = ir.__dict__
    return h


def conv_bn_ir():
    ir = linear_bn_ir(np.random.default_rng(7))
    ir.n[1]["data"] = ir.n[1]["data"].reshape(4, 3, 1, 1)
    ir.n[3] = {"op": "convolution", "in": [0, 1, 2], "attrs": {"groups": 1}}
    return ir


def refused(ir, passes, reason, fragment, state=live_state):
    """run_passes refuses every site (reason), one of them with `fragment` in its message and
    adapter_error (if an adapter failure), and leaves the IR as it was."""
    before = state(ir)
    report = qfold.run_passes(ir, passes)
    assert report.folded == 0 and report.rollback_failed == 0 and not report.ir_changed, report
    assert report.sites and all(s.reason == reason for s in report.sites), report.sites
    assert any(fragment in s.message for s in report.sites), report.sites
    if reason == "adapter_failure":
        assert any(s.adapter_error and fragment in s.adapter_error for s in report.sites)
        assert any(fragment in e for e in report.adapter_errors)
    assert not any("Unable to cast" in e for e in report.adapter_errors)
    assert state(ir) == before
    return report


# --- duplicate nodes -------------------------------------------------------------------------
def test_a_node_listed_twice_is_an_adapter_failure():
    """Was: the batch norm planned and applied twice, "2 folded" into one linear."""
    ir = linear_bn_ir(np.random.default_rng(1))
    dup = with_methods(ir, nodes=lambda self: DictIR.nodes(self) + [8])
    report = refused(dup, ["fold_batch_norm"], "adapter_failure",
                     "nodes() listed node 8 twice, expected each live node once")
    assert [s.nodes for s in report.sites] == [[]]


# --- add_* returning a bad id -------------------------------------------------------------------
@pytest.mark.parametrize("answer,fragment", [
    (lambda made: None, "add_constant returned None, expected the hashable id"),
    (lambda made: 1, "add_constant returned node 1, which exists already"),
    (lambda made: 8, "add_constant returned node 8, which exists already"),
    (lambda made: 10 ** 6, "add_constant returned 1000000, which the IR cannot read back"),
    (lambda made: "w", "add_constant returned 'w' (a str), which the IR cannot read back"),
    (lambda made: [made], "add_constant returned a list of 1, expected the hashable id"),
], ids=["none", "existing-weight", "existing-batch-norm", "no-node", "str", "unhashable"])
def test_add_constant_returning_a_bad_id_is_undone(answer, fragment):
    """Was: the id used as given and the site reported folded with a broken IR. Now a named
    adapter_failure; the node the IR made is found by its listing and erased."""
    ir = linear_bn_ir(np.random.default_rng(2))
    bad = with_methods(ir, add_constant=lambda self, d, s: answer(DictIR.add_constant(self, d, s)))
    report = refused(bad, ["fold_batch_norm"], "adapter_failure", fragment)
    assert not report.sites[0].rollback_failed


def test_a_bad_add_id_that_cannot_be_undone_is_a_failed_rollback():
    """add_constant answers None and erase fails: the node it made stays. The site is reported
    with rollback_failed (the IR may differ), not as left as it was."""
    ir = linear_bn_ir(np.random.default_rng(3))
    before = live_state(ir)

    def erase(self, i):
        raise RuntimeError("erase is broken")

    bad = with_methods(ir, add_constant=lambda self, d, s: DictIR.add_constant(self, d, s) and None,
                       erase=erase)
    report = qfold.run_passes(bad, ["fold_batch_norm"])
    (site,) = report.sites
    assert site.reason == "adapter_failure" and site.rollback_failed and not site.folded
    assert "add_constant returned None" in site.adapter_error and "may differ" in site.message
    assert report.rollback_failed == 1 and report.ir_changed and report.folded == 0
    assert "1 rollback failed (the IR may differ)" in repr(report)
    assert "rollback_failed" in repr(site)
    assert live_state(ir) != before  # the constant add_constant made, unnamed, is still there


# --- batch-norm statistics that are not 1-D ---------------------------------------------------
@pytest.mark.parametrize("make", [lambda: linear_bn_ir(np.random.default_rng(4)), conv_bn_ir],
                         ids=["linear", "conv"])
@pytest.mark.parametrize("node,role,shape", [(4, "gamma", (2, 2)), (5, "beta", (1, 4)),
                                             (6, "mean", (4, 1)), (7, "variance", (2, 2))])
def test_statistics_that_are_not_1d_are_invalid_shape(make, node, role, shape):
    """Was: a (2, 2) gamma read as 4 channels and folded, where qfold.fold_batch_norm refuses
    statistics that are not 1-D. Now the site is refused, invalid_shape, naming the statistic."""
    ir = make()
    ir.n[node]["data"] = ir.n[node]["data"].reshape(shape)
    report = refused(ir, ["fold_batch_norm"], "invalid_shape",
                     f"the batch norm's {role} has shape {shape}: statistics are 1-D")
    assert [s.nodes for s in report.sites] == [[3, 8]]


def test_a_statistic_that_changes_between_reads_is_an_adapter_failure():
    """batch_norm_operands gives a 1-D gamma when the batch norm is checked, then a (2, 2)
    constant as its gamma: the pass's read of it is a named adapter error, nothing folded."""
    ir = linear_bn_ir(np.random.default_rng(5))
    ir.n.append({"op": "constant", "in": [], "data": ir.n[4]["data"].reshape(2, 2)})  # node 9
    calls = []

    def batch_norm_operands(self, i):
        calls.append(i)
        ops = DictIR.operands(self, i)
        return ops if len(calls) == 1 else [ops[0], 9] + ops[2:]

    refused(with_methods(ir, batch_norm_operands=batch_norm_operands), ["fold_batch_norm"],
            "adapter_failure",
            "constant(n) returned shape (2, 2) for a batch norm's statistic, expected 1-D")


# --- a rollback that cannot complete ----------------------------------------------------------
class BrokenFrom(DictIR):
    """Every mutation raises from the k-th mutation call on (an IR whose storage went away)."""
    MUTATIONS = ("add_constant", "set_operand", "remove_last_operand", "replace_uses", "erase")

    def __init__(self, base, k):
        super().__init__(base.n, base.outputs)
        self.k, self.calls = k, 0

    def __getattribute__(self, name):
        if name in BrokenFrom.MUTATIONS:
            self.calls += 1
            if self.calls >= self.k:
                raise RuntimeError(f"mutations broken from call {self.k} ({name})")
        return object.__getattribute__(self, name)


def test_a_rollback_that_cannot_complete_is_reported():
    """Was: the IR kept the new weight, the old bias and the batch norm, and the report said
    adapter_failure, "0 folded" (only a message said the graph may differ). Now the site has
    rollback_failed and the report ir_changed; at every k, a changed IR is reported changed."""
    ir = linear_bn_ir(np.random.default_rng(6))
    before = live_state(ir)
    broken = BrokenFrom(ir, 4)  # add, add, set_operand(weight), then set_operand(bias) fails
    report = qfold.run_passes(broken, ["fold_batch_norm"])
    (site,) = report.sites
    assert site.reason == "adapter_failure" and site.rollback_failed
    assert "set_operand" in site.adapter_error and "may differ" in site.message
    assert report.folded == 0 and report.rollback_failed == 1 and report.ir_changed
    assert ir.n[3]["in"][1] != 1 and ir.n[3]["in"][2] == 2  # new weight, old bias, as reported
    assert live_state(broken) != before

    outcomes = set()
    for k in range(1, 12):
        ir = linear_bn_ir(np.random.default_rng(6))
        broken = BrokenFrom(ir, k)
        report = qfold.run_passes(broken, ["fold_batch_norm"])
        changed = live_state(broken) != before
        assert report.ir_changed == changed or (report.folded and changed), k
        if not changed:
            outcomes.add("untouched")
            assert report.folded == 0 and report.rollback_failed == 0, k
        elif report.folded:  # an erase after the commit failed
            outcomes.add("cleanup_failed")
            assert report.sites[0].cleanup_failed, k
        else:
            outcomes.add("rollback_failed")
            assert report.sites[0].rollback_failed, k
    assert outcomes == {"untouched", "rollback_failed", "cleanup_failed"}


def test_undoing_an_add_reads_nothing_from_the_ir():
    """Reads that break once the apply has begun: the constants the site added are erased by
    what the adapter checked when they were made (their kind, their operands), not by asking the
    IR again, so the site is rolled back whole."""
    ir = linear_bn_ir(np.random.default_rng(8))
    before = live_state(ir)
    state = {"adding": False}

    def add_constant(self, data, shape):
        state["adding"] = True
        return DictIR.add_constant(self, data, shape)

    def operands(self, i):
        if state["adding"]:
            raise RuntimeError("operands is broken")
        return DictIR.operands(self, i)

    def kind(self, i):
        if state["adding"] and i > 8:
            raise RuntimeError("kind is broken for new nodes")
        return DictIR.kind(self, i)

    bad = with_methods(ir, add_constant=add_constant, operands=operands, kind=kind)
    report = qfold.run_passes(bad, ["fold_batch_norm"])
    (site,) = report.sites
    assert site.reason == "adapter_failure" and not site.rollback_failed, site
    assert live_state(ir) == before and not report.ir_changed


# --- answers of the wrong type or range -------------------------------------------------------
def answer_all(value):
    return lambda self, *args: value


FLOAT_CASES = [
    ("use_count", answer_all(-1), "use_count(n) returned -1, expected an int >= 0"),
    ("use_count", answer_all(1.0), "use_count(n) returned 1.0 (a float), expected an int >= 0"),
    ("use_count", answer_all("1"), "use_count(n) returned '1' (a str), expected an int >= 0"),
    ("use_count", answer_all(None), "use_count(n) returned None, expected an int >= 0"),
    ("use_count", answer_all(2 ** 70),
     "use_count(n) returned 1180591620717411303424, expected an int >= 0"),
    ("use_count", answer_all(True), "use_count(n) returned True (a bool), expected an int >= 0"),
    ("output_rank", answer_all(2.0), "output_rank(n) returned 2.0 (a float), expected an int"),
    ("output_rank", answer_all(-2), "output_rank(n) returned -2, expected an int >= 0"),
    ("batch_norm_attributes", answer_all({"epsilon": "1e-5"}),
     "batch_norm_attributes(n)['epsilon'] returned '1e-5' (a str), expected a float"),
    ("batch_norm_attributes", answer_all({"training": 0}),
     "batch_norm_attributes(n)['training'] returned 0, expected a bool"),
    ("batch_norm_attributes", answer_all([]),
     "batch_norm_attributes(n) returned a list of 0, expected a dict (or None)"),
    ("kind", answer_all("no_such_kind"),
     "kind(n) returned 'no_such_kind' (a str), expected a qfold.OpKind or its name"),
    ("kind", answer_all(5), "kind(n) returned 5, expected a qfold.OpKind or its name"),
    ("kind", answer_all(None), "kind(n) returned None, expected a qfold.OpKind"),
    ("operands", answer_all(None), "operands(n) returned None, expected a list of node ids"),
    ("operands", answer_all("0123"),
     "operands(n) returned '0123' (a str), expected a list of node ids"),
    ("operands", lambda self, i: iter(DictIR.operands(self, i)),
     "operands(n) returned a list_iterator, expected a list of node ids"),
    ("operands", lambda self, i: DictIR.operands(self, i) + [None],
     "operands(n) gave None as a node id"),
    ("nodes", lambda self: tuple(DictIR.nodes(self)) + ([],),
     "nodes() gave a list of 0 as a node id, expected a hashable id"),
    ("nodes", answer_all(9), "nodes() returned 9, expected a list of node ids"),
    ("constant", lambda self, i: None if DictIR.constant(self, i) is None else
     DictIR.constant(self, i).astype(np.float64), "constant(n): expected float32"),
    ("constant", lambda self, i: None if DictIR.constant(self, i) is None else "x",
     "constant(n): expected numbers"),
    ("batch_norm_operands", lambda self, i: DictIR.operands(self, i)[:4],
     "batch_norm_operands(n) of a batch norm returned 4 ids, expected 5"),
    ("batch_norm_operands", lambda self, i: [None] + DictIR.operands(self, i)[1:],
     "gave None for its input, mean or variance"),
]


@pytest.mark.parametrize("method,impl,fragment", FLOAT_CASES,
                         ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(FLOAT_CASES)])
def test_wrong_types_are_named_adapter_errors(method, impl, fragment):
    """Was: pybind11's "Unable to cast Python instance to C++ type", naming neither the method
    nor the type. Now the site is adapter_failure, its message naming both, nothing changed."""
    ir = linear_bn_ir(np.random.default_rng(9))
    refused(with_methods(ir, **{method: impl}), ["fold_batch_norm"], "adapter_failure", fragment,
            state=lambda _: live_state(ir))  # ir's own nodes(), not the hostile one


@pytest.mark.parametrize("attrs,fragment", [
    ({"groups": 2 ** 64}, "conv_attributes(n)['groups'] returned 18446744073709551616, "
     "expected an int"),
    ({"groups": "1"}, "conv_attributes(n)['groups'] returned '1' (a str), expected an int"),
    ({"transposed": 1}, "conv_attributes(n)['transposed'] returned 1, expected a bool"),
    ({"layout": 3}, "conv_attributes(n)['layout'] returned 3, expected \"o_i_s\""),
    ({"input_channel_axis": 1.0}, "conv_attributes(n)['input_channel_axis'] returned 1.0"),
    ("o_i_s", "conv_attributes(n) returned 'o_i_s' (a str), expected a dict (or None)"),
])
def test_wrong_conv_attributes_are_named_adapter_errors(attrs, fragment):
    ir = conv_bn_ir()
    refused(with_methods(ir, conv_attributes=answer_all(attrs)), ["fold_batch_norm"],
            "adapter_failure", fragment)


@pytest.mark.parametrize("groups,fragment", [(0, "groups below 1"), (-2 ** 63, "groups below 1"),
                                             (2 ** 62, "not divisible by groups")])
def test_conv_groups_out_of_range_are_the_folds_refusal(groups, fragment):
    """Any int64 groups is read; the fold refuses what does not divide the channels
    (ambiguous_axis): qfold.fx answers groups 0 for a conv whose output may be unbatched."""
    ir = conv_bn_ir()
    refused(with_methods(ir, conv_attributes=answer_all({"groups": groups})), ["fold_batch_norm"],
            "ambiguous_axis", fragment)


@pytest.mark.parametrize("answer,fragment", [
    ("q", "qparams(n) returned 'q' (a str), expected a qfold.QParams or None"),
    ((0.05, 3), "qparams(n) returned a tuple of 2, expected a qfold.QParams or None"),
])
def test_wrong_qparams_are_named_adapter_errors(answer, fragment):
    ir = QuantIR(2.0)
    refused(with_methods(ir, qparams=answer_all(answer)), ["fold_scale_into_quantize"],
            "adapter_failure", fragment)


def test_qparams_shared_must_be_a_bool():
    ir = QuantIR(2.0)
    refused(with_methods(ir, qparams_shared=answer_all("no")), ["fold_scale_into_quantize"],
            "adapter_failure", "qparams_shared(n) returned 'no' (a str), expected a bool")


# --- the integer passes ----------------------------------------------------------------------
def for_node(op, value, base):
    """A method answering `value` for nodes whose op is `op`, base's answer for the others."""
    def method(self, i, *args):
        return value if self.n[i]["op"] == op else getattr(ti.AffIR, base)(self, i, *args)
    return method


INTEGER_CASES = [
    (ti.rescale_pair_ir, "fold_merge_rescales", "rescale",
     lambda self, i: dict(self.n[i]["attrs"], scale32="yes"),
     "rescale(n)['scale32'] returned 'yes' (a str), expected a bool"),
    (ti.rescale_pair_ir, "fold_merge_rescales", "rescale",
     lambda self, i: dict(self.n[i]["attrs"], input_type=8),
     "rescale(n)['input_type'] returned 8, expected \"i8\""),
    (ti.rescale_pair_ir, "fold_merge_rescales", "rescale",
     lambda self, i: dict(self.n[i]["attrs"], multipliers=np.array([1.5])),
     "rescale(n).multipliers: expected an integer array"),
    (ti.rescale_pair_ir, "fold_merge_rescales", "rescale", answer_all(None),
     "rescale(n): 'input_type' is missing"),
    (ti.dyt_alpha_ir, "fold_dyt_alpha", "mul_shift", answer_all(1.5),
     "mul_shift(n): expected an int, got float"),
    (ti.dyt_alpha_ir, "fold_dyt_alpha", "qparams", answer_all(1.0),
     "qparams(n) returned 1.0 (a float), expected a qfold.QParams or None"),
    (ti.chain_ir, "fold_collapse_to_table", "clamp_attributes", answer_all((1,)),
     "clamp_attributes(n): expected (min, max)"),
    (ti.chain_ir, "fold_collapse_to_table", "element_type", answer_all(5),
     "element_type(n): expected a dtype"),
    (ti.chain_ir, "fold_collapse_to_table", "output_shape", answer_all(None),
     "output_shape(n)"),
    (ti.table_pair_ir, "fold_compose_tables", "int_constant",
     for_node("constant", np.zeros(256, np.float32), "int_constant"),
     "int_constant(n): expected an integer array"),
    (ti.table_pair_ir, "fold_compose_tables", "int_constant",
     for_node("constant", {"data": [1, 2], "shape": [3]}, "int_constant"),
     "int_constant(n): data size does not match shape"),
    (ti.table_pair_ir, "fold_compose_tables", "use_count", answer_all(-1),
     "use_count(n) returned -1, expected an int >= 0"),
    (ti.affine_ir, "fold_dyt_affine", "view_axis", answer_all("0"),
     "view_axis(n, axis): expected an int, got str"),
    (ti.affine_ir, "fold_dyt_affine", "quantized_conv",
     for_node("convolution", {"input_zero_point": 0}, "quantized_conv"),
     "quantized_conv(n): 'weight_zero_points' is missing"),
    (ti.affine_ir, "fold_dyt_affine", "conv_attributes",
     for_node("convolution", {"groups": 1.0}, "conv_attributes"),
     "conv_attributes(n)['groups'] returned 1.0 (a float), expected an int"),
]


@pytest.mark.parametrize("make,pass_name,method,impl,fragment", INTEGER_CASES,
                         ids=[f"{c[1]}-{c[2]}-{i}" for i, c in enumerate(INTEGER_CASES)])
def test_integer_wrong_answers_are_named_adapter_errors(make, pass_name, method, impl, fragment):
    ir = make()
    refused(with_methods(ir, **{method: impl}), [pass_name], "adapter_failure", fragment,
            state=ti.state)


def existing_input(self, x, *args):
    return x  # the node the add was asked to read: an existing id


INTEGER_ADDS = [
    (ti.rescale_pair_ir, "fold_merge_rescales", "add_rescale"),
    (ti.table_pair_ir, "fold_compose_tables", "add_table"),
    (ti.dyt_alpha_ir, "fold_dyt_alpha", "add_table"),
    (ti.chain_ir, "fold_collapse_to_table", "add_table"),
    (lambda: ti.int16_chain_ir(ti.Int16IR), "fold_collapse_to_table", "add_table16"),
    (lambda: ti.int16_chain_ir(ti.Int16IR), "fold_collapse_to_table", "add_rescale"),
    (ti.affine_ir, "fold_dyt_affine", "add_int_constant"),
]


@pytest.mark.parametrize("answer", ["none", "existing", "input"])
@pytest.mark.parametrize("make,pass_name,method", INTEGER_ADDS,
                         ids=[f"{c[1]}-{c[2]}-{i}" for i, c in enumerate(INTEGER_ADDS)])
def test_integer_adds_returning_bad_ids_are_undone(make, pass_name, method, answer):
    """add_table / add_table16 / add_rescale / add_int_constant making their node(s), then
    answering None, an existing node, or the input they were given: a named adapter_failure, the
    nodes they made (a TABLE and its table constant: two) found and erased, the IR untouched."""
    ir = make()

    def bad(self, *args):
        made = getattr(super(type(h), self), method)(*args)
        if answer == "none":
            return None
        return 0 if answer == "existing" or method == "add_int_constant" else args[0]

    h = with_methods(ir, **{method: bad})
    report = refused(h, [pass_name], "adapter_failure", f"{method} returned ", state=ti.state)
    assert not any(s.rollback_failed for s in report.sites)


def test_a_table_whose_constant_names_no_node_is_refused():
    """add_table answers a TABLE whose operand 1 is no node of the IR (here its own
    add_int_constant answered "new"): refused, the table and its constant erased."""
    ir = ti.table_pair_ir()
    h = with_methods(ir, add_int_constant=lambda self, *a: ti.IntIR.add_int_constant(self, *a)
                     and "new")
    refused(h, ["fold_compose_tables"], "adapter_failure",
            "add_table returned 6, which the IR cannot read back", state=ti.state)


def test_integer_rollback_that_cannot_complete_is_reported():
    """merge_rescales: replace_uses (the commit) fails, then so does erasing the added RESCALE:
    rollback_failed, the report says the IR may differ."""
    ir = ti.rescale_pair_ir()
    before = ti.state(ir)

    def fail(self, *args):
        raise RuntimeError("broken")

    report = qfold.run_passes(with_methods(ir, replace_uses=fail, erase=fail),
                              ["fold_merge_rescales"])
    (site,) = report.sites
    assert site.rollback_failed and report.ir_changed and report.folded == 0
    assert "replace_uses" in site.adapter_error
    assert ti.state(ir) != before  # the merged RESCALE the pass added is still there


def test_dyt_affine_rewires_before_it_adds():
    """fold_dyt_affine sets the reader's operand before it adds the folded weights: an
    add_int_constant that fails, with a set_operand that cannot be undone, leaves the rewiring
    (reported: rollback_failed). The order is the C++ pass's (include/qfold/graph/
    dyt_affine_pass.hpp), not the adapter's."""
    ir = ti.affine_ir()
    calls = []

    def add_int_constant(self, *args):
        raise RuntimeError("no room")

    def set_operand(self, i, k, v):
        calls.append((i, k, v))
        if len(calls) > 1:
            raise RuntimeError("set_operand broken")
        return ti.AffIR.set_operand(self, i, k, v)

    report = qfold.run_passes(with_methods(ir, add_int_constant=add_int_constant,
                                           set_operand=set_operand), ["fold_dyt_affine"])
    (site,) = report.sites
    assert site.rollback_failed and report.ir_changed and "add_int_constant" in site.adapter_error
