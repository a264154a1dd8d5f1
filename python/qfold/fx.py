"""qfold's folds for torch.fx GraphModules, on top of :func:`qfold.run_passes`.

``fold(gm)`` folds every eval-mode BatchNorm1d/2d/3d (a ``call_module`` node) into the
Conv1d/2d/3d, ConvTranspose1d/2d/3d (grouped too) or Linear module whose output it alone reads,
with qfold's fold_batch_norm (float32 results bit-identical to ``torch.nn.utils.fusion``'s
``fuse_conv_bn_eval`` / ``fuse_linear_bn_eval``, correct for grouped transposed convolutions).
Refused sites (a BN in training mode, a conv output read twice, a Linear whose output rank is not
known to be 2, a Conv1d whose input may be unbatched, float64 weights, ...) are left exactly as
they were and listed in the report.
On torch's reference-quantized graphs it folds constant scales into ``quantize_per_tensor`` and
removes requantize sandwiches (around shared-qparams ops such as max pool and flatten, which
then run on the codes) where qfold proves every code comes back unchanged.

The adapter below (:class:`FxIR`) is the Python IR protocol of docs/python.md over an fx graph:
parameters and buffers are constant nodes (:class:`Param`), the pass's new weights are
:class:`Const` nodes, and the pass's mutations are recorded on operand lists; only once the pass
has returned are they written into the GraphModule (new modules, rewired nodes, erased BNs), all
or nothing: if writing raises half way, the GraphModule is put back as it was.
"""

import copy
import operator
from itertools import chain

import numpy as np
import torch
from torch import nn

from . import _qfold

__all__ = ["fold", "FxIR", "Param", "Const"]

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
          nn.ConvTranspose3d)
_TRANSPOSED = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
_BNS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
# The input rank a BatchNorm accepts, when only one: a conv of that many dims minus 2 reading into
# it is batched (torch's convs also take unbatched input, whose channels are axis 0, not 1).
_BN_RANK = {nn.BatchNorm2d: 4, nn.BatchNorm3d: 5}
_QDTYPES = {torch.qint8: "int8", torch.quint8: "uint8", torch.qint32: "int32"}
_DIVS = (operator.truediv, torch.div, torch.true_divide)
_MULS = (operator.mul, torch.mul)
# Ops that only move or select elements (and run on quantized tensors too): between a dequantize
# and a quantize with the same qparams (torch's "shared qparams" ops) they commute with both, so
# the adapter looks through them (see FxIR._movement).
_MOVE_METHODS = {"flatten", "reshape", "view", "permute", "transpose", "squeeze", "unsqueeze",
                 "contiguous"}
_MOVE_FUNCTIONS = (torch.flatten, torch.reshape, torch.permute, torch.transpose, torch.squeeze,
                   torch.unsqueeze, torch.nn.functional.max_pool1d,
                   torch.nn.functional.max_pool2d)
_MOVE_MODULES = (nn.Flatten, nn.Unflatten, nn.Identity, nn.MaxPool1d, nn.MaxPool2d)


class Param:
    """A parameter or buffer ``attr`` of the submodule ``target``: a constant node."""

    __slots__ = ("target", "attr")

    def __init__(self, target, attr):
        self.target, self.attr = target, attr

    def __eq__(self, other):
        return isinstance(other, Param) and (self.target, self.attr) == (other.target, other.attr)

    def __hash__(self):
        return hash((Param, self.target, self.attr))

    def __repr__(self):
        return f"{self.target}.{self.attr}"


class Const:
    """A constant the pass created (a folded weight or bias), until it becomes a parameter."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data

    def __repr__(self):
        return f"Const{tuple(self.data.shape)}"


def _node_operands(node):
    out = []
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)  # every slot, repeats included
    return out


def _plain(m, types):
    """Whether m is exactly one of types, without forward hooks: a subclass may compute something
    else (torch's parametrized and QAT convs do), and a hook would see, or undo, the fold (the old
    weight_norm recomputes the weight before every call)."""
    return type(m) in types and not m._forward_hooks and not m._forward_pre_hooks


def _referenced(target, refs):
    """Whether a submodule path in refs (call_module and get_attr targets) reaches target's
    module or something in it, or is a module that holds it."""
    return any(r == target or r.startswith(target + ".") or target.startswith(r + ".")
               for r in refs)


class FxIR:
    """The qfold Python IR protocol over ``gm`` (read during run_passes, written by apply())."""

    def __init__(self, gm):
        self.gm = gm
        self.fx_nodes = list(gm.graph.nodes)
        # What the pass reads, kept to check that apply() writes into the same GraphModule (a
        # hook run by ShapeProp could replace a submodule or edit the graph in the meantime).
        self.modules = {n.target: gm.get_submodule(n.target) for n in self.fx_nodes
                        if n.op == "call_module"}
        self.graph_text = str(gm.graph)
        self.ranks = {}  # fx node -> output rank, from fold's example_inputs (see _rank)
        self.batched = {}  # conv node -> whether its output is known to be batched (_batched)
        self.ops = {}
        self.kinds = {}
        for n in self.fx_nodes:
            self.kinds[n] = k = self._fx_kind(n)
            if k in ("convolution", "linear"):
                m = self.modules[n.target]
                self.ops[n] = [n.args[0], Param(n.target, "weight")] + (
                    [Param(n.target, "bias")] if m.bias is not None else [])
            elif k == "batch_norm":
                m = self.modules[n.target]
                self.ops[n] = [n.args[0]] + [Param(n.target, a) for a in
                                             (("weight", "bias") if m.affine else ())] + [
                    Param(n.target, "running_mean"), Param(n.target, "running_var")]
            elif k == "quantize":
                self.ops[n] = [n.args[0]]  # scale and zero point are its qparams
            elif k in ("div", "mul"):
                self.ops[n] = [a if isinstance(a, torch.fx.Node) else
                               Const(np.array([a], dtype=np.float32)) for a in n.args]
            else:
                self.ops[n] = _node_operands(n)
        # A quantize's movement chain (nearest first), hidden: qfold sees the quantize read the
        # chain's input, and apply() keeps the chain in front of whatever the quantize reads.
        self.dequantized = {n: n.args[0] for n in self.fx_nodes if self.kinds[n] == "dequantize"}
        self.chains, self.hidden = {}, set()
        for n in self.fx_nodes:
            if self.kinds[n] == "quantize":
                chain, x = [], n.args[0]
                while self._movement(x) and len(x.users) == 1:
                    chain.append(x)
                    x = x.args[0]
                if chain:
                    self.chains[n] = chain
                    self.hidden.update(chain)
                    self.ops[n] = [x]
        self.erased = set()
        self.new_qparams = {}
        self.consts = []
        self.replaced = []  # (old fx node, new fx node), in order

    def _movement(self, n):
        """Whether n only moves or selects the elements of its tensor input n.args[0]."""
        if not isinstance(n, torch.fx.Node) or not n.args or \
                not isinstance(n.args[0], torch.fx.Node):
            return False
        if _node_operands(n)[1:]:  # every other argument a literal (dims, kernel sizes)
            return False
        if n.op == "call_method":
            return n.target in _MOVE_METHODS
        if n.op == "call_function":
            return n.target in _MOVE_FUNCTIONS and not n.kwargs.get("return_indices", False)
        if n.op == "call_module" and len(n.args) == 1 and not n.kwargs:
            m = self.modules[n.target]
            return isinstance(m, _MOVE_MODULES) and not getattr(m, "return_indices", False)
        return False

    def _fx_kind(self, n):
        if n.op == "placeholder":
            return "input"
        if n.op == "call_method" and n.target == "dequantize" and len(n.args) == 1 and \
                not n.kwargs and isinstance(n.args[0], torch.fx.Node):
            return "dequantize"
        if n.op == "call_function" and not n.kwargs:
            if n.target is torch.quantize_per_tensor and len(n.args) == 4 and \
                    isinstance(n.args[0], torch.fx.Node):
                return "quantize"
            if (n.target in _DIVS or n.target in _MULS) and len(n.args) == 2:
                nodes = [a for a in n.args if isinstance(a, torch.fx.Node)]
                scalars = [a for a in n.args if isinstance(a, (int, float)) and
                           not isinstance(a, bool) and float(np.float32(a)) == float(a)]
                if len(nodes) == 1 and len(scalars) == 1:  # a float32-exact Python scalar
                    return "div" if n.target in _DIVS else "mul"
            return "other"
        if n.op != "call_module" or len(n.args) != 1 or n.kwargs or \
                not isinstance(n.args[0], torch.fx.Node):
            return "other"
        m = self.modules[n.target]
        if _plain(m, _CONVS):
            return "convolution"
        if _plain(m, (nn.Linear,)):
            return "linear"
        if _plain(m, _BNS) and m.running_mean is not None and m.running_var is not None:
            return "batch_norm"
        return "other"

    # --- reads ---------------------------------------------------------------------------------
    def nodes(self):
        seen, out = set(), []
        for n in self.fx_nodes:
            if n in self.erased or n in self.hidden:
                continue
            for v in self.ops[n]:
                if not isinstance(v, torch.fx.Node) and v not in self.erased and v not in seen:
                    seen.add(v)
                    out.append(v)
            out.append(n)
        return out

    def kind(self, n):
        if isinstance(n, (Param, Const)):
            return "constant"
        if self.kinds[n] == "convolution" and not self._batched(n):
            # qfold's batch norm pass asks a convolution nothing of its rank, and a linear for
            # an output rank of 2 (its channels on axis 1): a conv whose output may be unbatched
            # is shown as a linear of no known rank, which it refuses (ambiguous_axis).
            return "linear"
        return self.kinds[n]

    def operands(self, n):
        return self.ops.get(n, []) if isinstance(n, torch.fx.Node) else []

    def use_count(self, n):
        return sum(ops.count(n) for m, ops in self.ops.items()
                   if m not in self.erased and m not in self.hidden)

    def constant(self, n):
        if isinstance(n, Const):
            return n.data
        if isinstance(n, Param):
            t = getattr(self.modules[n.target], n.attr)
            if t is None or t.dtype != torch.float32:
                return None  # float64 weights: refused (not_constant), never rounded
            return t.detach().cpu().contiguous().numpy()
        return None

    def constant_bytes(self, n):
        c = self.constant(n)
        return 0 if c is None else int(c.nbytes)

    def conv_attributes(self, n):
        m = self.modules[n.target]
        transposed = isinstance(m, _TRANSPOSED)
        padding = m.padding
        padded = padding != "valid" if isinstance(padding, str) else any(p != 0 for p in padding)
        return {"groups": m.groups, "transposed": transposed,
                "layout": "i_o_s" if transposed else "o_i_s", "padded": padded,
                "input_channel_axis": 1}

    def _batched(self, n):
        """Whether conv node n's output is known to be batched, (N, C, ...): a BatchNorm
        normalizes axis 1, which for an unbatched output ((C, L) from a Conv1d) is not the
        channels. Known from the rank, else from the one BatchNorm2d/3d reading it (which takes
        4-D/5-D input only); a BatchNorm1d takes both (N, C) and (N, C, L). Found once, before
        the pass changes anything, so that a node's kind stays what it was."""
        if n not in self.batched:
            batched = len(self.modules[n.target].kernel_size) + 2
            rank = self._rank(n)
            readers = list(n.users)  # the graph's, which only apply() changes
            self.batched[n] = rank == batched if rank is not None else \
                len(readers) == 1 and self.kinds[readers[0]] == "batch_norm" and \
                _BN_RANK.get(type(self.modules[readers[0].target])) == batched
        return self.batched[n]

    def batch_norm_attributes(self, n):
        m = self.modules[n.target]
        return {"epsilon": float(m.eps), "training": bool(m.training)}

    def batch_norm_operands(self, n):
        m = self.modules[n.target]
        p = lambda a: Param(n.target, a)  # noqa: E731
        return (self.ops[n][0], p("weight") if m.affine else None,
                p("bias") if m.affine else None, p("running_mean"), p("running_var"))

    def _rank(self, n):
        """n's output rank: from fold's example_inputs, else from a ShapeProp run on gm (its
        tensor_meta); None when unknown."""
        if n in self.ranks:
            return self.ranks[n]
        meta = n.meta.get("tensor_meta")
        return len(meta.shape) if meta is not None and hasattr(meta, "shape") else None

    def output_rank(self, n):
        rank = self._rank(n) if isinstance(n, torch.fx.Node) else None
        if rank is None or (self.kinds[n] == "convolution" and not self._batched(n)):
            return 0  # unknown (see kind: a conv that may be unbatched)
        return rank

    def _value(self, a):
        if isinstance(a, torch.fx.Node):
            if a.op != "get_attr":
                return None
            t = self.gm
            for part in a.target.split("."):
                t = getattr(t, part)
            return t
        return a

    def qparams(self, n):
        """A torch.quantize_per_tensor's (scale, zero point, dtype), a dequantize's those of the
        quantize it reads (which its readers always see: see _write_qparams); else None."""
        if n in self.new_qparams:
            return self.new_qparams[n]
        if isinstance(n, torch.fx.Node) and self.kinds.get(n) == "dequantize":
            n = self.dequantized[n]
        if not isinstance(n, torch.fx.Node) or self.kinds.get(n) != "quantize":
            return None
        return self._declared_qparams(n)

    def _declared_qparams(self, n):
        """A quantize's qparams as the graph states them."""
        scale, zp, dtype = (self._value(a) for a in n.args[1:])
        if scale is None or zp is None or dtype not in _QDTYPES:
            return None
        if isinstance(scale, torch.Tensor):
            if scale.numel() != 1:
                return None
            scale = scale.item()
        if isinstance(zp, torch.Tensor):
            if zp.numel() != 1:
                return None
            zp = zp.item()
        return _qfold.QParams(float(scale), int(zp), _QDTYPES[dtype])

    def qparams_shared(self, n):
        return False  # a folded scale is always a new buffer of its own

    def set_qparams(self, n, q):
        self.new_qparams[n] = q

    # --- mutations (recorded; apply() writes them into the GraphModule) --------------------------
    def add_constant(self, data, shape):
        c = Const(np.ascontiguousarray(data, dtype=np.float32).reshape(shape))
        self.consts.append(c)
        return c

    def set_operand(self, n, i, v):
        ops = self.ops[n]
        if i == len(ops):
            ops.append(v)
        else:
            ops[i] = v

    def remove_last_operand(self, n):
        self.ops[n].pop()

    def replace_uses(self, old, v):
        for m, ops in self.ops.items():
            if m not in self.erased and m not in self.hidden:
                ops[:] = [v if x is old or x == old else x for x in ops]
        self.replaced.append((old, v))

    def erase(self, n):
        self.erased.add(n)

    # --- writing the folds into the GraphModule --------------------------------------------------
    def apply(self):
        """Writes the recorded folds into gm, all or nothing: an exception on the way puts gm back
        as it was (modules, parameters, buffers, graph and code) before it propagates."""
        gm = self.gm
        changed = [t for t, m in self.modules.items() if not _has_submodule(gm, t, m)]
        if changed or list(gm.graph.nodes) != self.fx_nodes or str(gm.graph) != self.graph_text:
            raise RuntimeError("qfold.fx: the GraphModule changed after the pass read it ("
                               + (f"submodule {changed[0]!r} replaced" if changed else
                                  "its graph edited") + "); nothing was written")
        saved = _Snapshot(gm)
        try:
            self._write()
        except BaseException:
            saved.restore()
            raise

    def _write(self):
        gm = self.gm
        read_attrs = [n for n in self.fx_nodes if n.op == "get_attr" and n.users]
        targets = {n: n.target for n in self.fx_nodes if n.op in ("call_module", "get_attr")}
        for n in self.fx_nodes:
            if n in self.erased or self.kinds[n] not in ("convolution", "linear"):
                continue
            ops = self.ops[n]
            if not any(isinstance(v, Const) for v in ops[1:]):
                continue
            old = self.modules[n.target]
            new = copy.deepcopy(old)
            for attr, v in zip(("weight", "bias"), ops[1:]):
                if isinstance(v, Const):
                    grad = old.weight.requires_grad
                    setattr(new, attr, nn.Parameter(torch.from_numpy(v.data.copy()).to(
                        old.weight.device), requires_grad=grad))
            # Replaced in place only when no other node reaches the module (another call, a
            # get_attr of its weight): those must still see the old one.
            if not _referenced(n.target, [t for m, t in targets.items() if m is not n]):
                _set_submodule(gm, n.target, new)
            else:  # a shared module: the folded copy gets a name of its own
                base = n.target.replace(".", "_") + "_bn_folded"
                name, i = base, 1
                while hasattr(gm, name):
                    name, i = f"{base}_{i}", i + 1
                gm.add_submodule(name, new)
                n.target = name
        for n, q in list(self.new_qparams.items()):
            old = self._declared_qparams(n)
            if n not in self.erased and (q.scale, q.zero_point) != (old.scale, old.zero_point):
                self._write_qparams(n, q)
        for n in self.fx_nodes:
            if n in self.erased or self.kinds[n] != "quantize":
                continue
            head = self.chains[n][-1] if n in self.chains else n  # reads what qfold saw n read
            if self.ops[n][0] is not head.args[0]:
                head.args = (self.ops[n][0],) + tuple(head.args[1:])
        for old, v in self.replaced:
            if not (isinstance(old, torch.fx.Node) and isinstance(v, torch.fx.Node)):
                continue
            if self.kinds.get(old) == "quantize":  # a sandwich that gives every code back
                v = self._requantized(old)
            old.replace_all_uses_with(v)
        bn_targets = set()
        for n in reversed(self.fx_nodes):
            if n in self.erased:
                if n.op == "call_module":
                    bn_targets.add(n.target)
                gm.graph.erase_node(n)
        for n in read_attrs:  # a removed quantize's scale and zero point (the buffers stay)
            if not n.users:
                gm.graph.erase_node(n)
        refs = [n.target for n in gm.graph.nodes if n.op in ("call_module", "get_attr")]
        for t in bn_targets:
            if not _referenced(t, refs):  # not called nor read elsewhere
                gm.delete_submodule(t)
        gm.graph.lint()
        gm.recompile()


    def _requantized(self, quantize):
        """What the readers of a removed sandwich (dequantize -> [div/mul] -> quantize, giving
        back every code) read instead: what the dequantize reads now (an earlier site may have
        rewired it), through the quantize's movement chain, with the quantize's qparams."""
        x = self.ops[quantize][0]
        if self.kinds.get(x) in ("div", "mul"):
            x = next(a for a in self.ops[x] if isinstance(a, torch.fx.Node))
        carried, out = self.qparams(x), x.args[0]  # x: the dequantize
        for m in reversed(self.chains.get(quantize, [])):  # the chain now moves codes
            m.args = (out,) + tuple(m.args[1:])
            out = m
        q = self._declared_qparams(quantize)
        if (q.scale, q.zero_point) != (carried.scale, carried.zero_point):
            out = self._reinterpret(out, q)
        return out

    def _reinterpret(self, n, q):
        """A node giving n's codes as a quantized tensor with q's scale and zero point."""
        g = self.gm.graph
        with g.inserting_after(n):
            codes = g.call_method("int_repr", (n,))
        with g.inserting_after(codes):
            return g.call_function(torch._make_per_tensor_quantized_tensor,
                                   (codes, float(q.scale), int(q.zero_point)))

    def _write_qparams(self, n, q):
        """The new scale (and zero point) as new buffers read by new get_attr nodes. A torch
        quantized tensor carries its qparams, which its readers' dequantize uses: the readers get
        the folded codes reinterpreted with the original ones (int_repr, then
        torch._make_per_tensor_quantized_tensor), so they compute exactly what they did."""
        gm, args = self.gm, list(n.args)
        before = self._declared_qparams(n)
        for i, value in ((1, q.scale), (2, q.zero_point)):
            old = self._value(args[i])
            if isinstance(old, torch.Tensor):
                new = torch.tensor(value, dtype=old.dtype, device=old.device)
                if new.item() != value:
                    raise ValueError(f"qfold.fx: the folded {value!r} does not fit {old.dtype}")
                if torch.equal(new, old):
                    continue
                name, k = f"{n.name}_qfold_{'scale' if i == 1 else 'zero_point'}", 1
                while hasattr(gm, name):
                    name, k = f"{name}_{k}", k + 1
                gm.register_buffer(name, new)
                with gm.graph.inserting_before(n):
                    args[i] = gm.graph.get_attr(name)
            else:
                args[i] = float(value) if i == 1 else int(value)
        n.args = tuple(args)
        users = list(n.users)
        same = self._reinterpret(n, before)
        for u in users:
            u.replace_input_with(n, same)


def _set_submodule(gm, target, module):
    parent, _, name = target.rpartition(".")
    setattr(gm.get_submodule(parent) if parent else gm, name, module)


def _has_submodule(gm, target, module):
    try:
        return gm.get_submodule(target) is module
    except AttributeError:
        return False


class _Snapshot:
    """What FxIR.apply may change in gm, to put back if it raises half way: each module's
    attributes and the dicts and sets in them (submodules, parameters, buffers), the graph (as a
    copy: apply edits the nodes themselves) and the generated forward. Restoring uses plain dict
    and set operations only, which a hostile module or a patched torch.fx cannot make fail."""

    _CLASS_ATTRS = ("forward", "__call__", "_wrapped_call")  # what recompile() sets

    def __init__(self, gm):
        self.gm, self.graph = gm, gm.graph
        self.copy = copy.deepcopy(gm.graph)
        self.modules = [(m, dict(vars(m)), {k: v.copy() for k, v in vars(m).items()
                                            if isinstance(v, (dict, set))})
                        for m in gm.modules()]
        self.cls = {k: vars(type(gm))[k] for k in self._CLASS_ATTRS if k in vars(type(gm))}

    def restore(self):
        for m, attrs, containers in self.modules:
            vars(m).clear()
            vars(m).update(attrs)
            for k, v in containers.items():
                attrs[k].clear()
                attrs[k].update(v)
        # The copy's nodes replace the edited ones; the graph reads as it did.
        g, old = self.copy, self.graph
        g._owning_module, g._owners = old._owning_module, old._owners
        g._tracer_extras = getattr(old, "_tracer_extras", None)
        vars(self.gm)["_graph"] = g
        cls = type(self.gm)
        for k in self._CLASS_ATTRS:
            if k in self.cls:
                setattr(cls, k, self.cls[k])
            elif k in vars(cls):
                delattr(cls, k)


def fold(gm, *, inplace=False, example_inputs=None,
         passes=("fold_batch_norm", "fold_scale_into_quantize")):
    """Folds every foldable BatchNorm of ``gm`` into its conv / linear, and every constant
    ``div``/``mul`` feeding a ``torch.quantize_per_tensor`` into its scale: ``(folded_gm, report)``.

    ``inplace=False`` (the default) folds a ``copy.deepcopy`` of ``gm`` and leaves ``gm`` as it
    was; ``inplace=True`` changes ``gm`` itself (and returns it), all or nothing: if writing the
    folds raises, ``gm`` is put back as it was before the exception propagates.
    ``example_inputs`` (a tuple or list of forward's arguments) runs
    ``torch.fx.passes.shape_prop.ShapeProp`` on a copy of ``gm`` (a training-mode forward pass
    would update running statistics), for the output ranks a Linear -> BatchNorm1d and a
    Conv1d / ConvTranspose1d -> BatchNorm1d need: without a known output rank of 2 (Linear) or 3
    (Conv1d: not an unbatched (C, L)) they are refused, ``ambiguous_axis``. Nodes in the report
    are the folded module's nodes (and :class:`Param` / :class:`Const` constants); a graph where
    nothing folds is not touched (``gm.code``, parameters and buffers unchanged).

    The scale fold (``fold_scale_into_quantize``, bit_exact) takes ``x / c`` or ``x * c``, c a
    Python scalar exact in float32, read by a ``torch.quantize_per_tensor(x, scale, zero_point,
    dtype)`` only (the reference-quantized form of ``convert_to_reference_fx``); the quantize's
    scale becomes ``scale * c`` (``scale / c``) in a new buffer. Only a c that leaves every code
    unchanged for every float input folds (a power of two); other constants are refused,
    ``not_exact``.

    Sandwiches: ``dequantize -> [x / c or x * c] -> quantize``, with element-moving ops
    (flatten, reshape, view, permute, transpose, squeeze, unsqueeze, contiguous, max pool 1d/2d,
    nn.Flatten/Unflatten/Identity) looked through, are removed where every code comes back
    unchanged (proved on all 256 codes): the moving ops then run on the quantized tensor, with
    the removed quantize's scale and zero point. Otherwise c still folds into the scale; a
    requantize without c that moves a code is refused (``not_exact``).
    """
    passes = _checked_arguments(gm, inplace, example_inputs, passes)
    target = gm if inplace else copy.deepcopy(gm)
    ir = FxIR(target)
    if example_inputs is not None:
        ir.ranks = _probed_ranks(target, example_inputs)
    report = _qfold.run_passes(ir, passes)
    if report.folded:
        ir.apply()
    return target, report


def _checked_arguments(gm, inplace, example_inputs, passes):
    """fold's arguments checked before anything runs (a str of passes would otherwise be read
    as one pass per letter, a tensor of example inputs as one input per row): the pass names as
    a list."""
    def bad(what, expected, value):
        return TypeError(f"qfold.fx.fold: {what} must be {expected}, not {type(value).__name__}")
    if not isinstance(gm, torch.fx.GraphModule):
        raise bad("gm", "a torch.fx.GraphModule (torch.fx.symbolic_trace(model))", gm)
    if not isinstance(inplace, (bool, np.bool_)):
        raise bad("inplace", "a bool", inplace)
    if example_inputs is not None and not isinstance(example_inputs, (tuple, list)):
        raise bad("example_inputs", "a tuple of forward's arguments, e.g. (x,), or None",
                  example_inputs)
    if isinstance(passes, (str, bytes)) or not hasattr(passes, "__iter__"):
        raise bad("passes", "a sequence of pass names, e.g. (\"fold_batch_norm\",)", passes)
    passes = list(passes)
    for p in passes:
        if not isinstance(p, str):
            raise bad("passes", "a sequence of pass names (str)", p)
    return passes


def _probed_ranks(gm, example_inputs):
    """Each node's output rank (fx node -> int), from ShapeProp run on a copy of gm and of the
    inputs: a forward pass in training mode updates running statistics, dropout draws random
    numbers and a forward may write into its inputs, none of which a fold may do to gm."""
    from torch.fx.passes.shape_prop import ShapeProp
    probe, inputs = copy.deepcopy((gm, tuple(example_inputs)))
    cuda = sorted({t.device.index for t in chain(probe.parameters(), probe.buffers(), inputs)
                   if isinstance(t, torch.Tensor) and t.is_cuda})
    with torch.random.fork_rng(devices=cuda):
        ShapeProp(probe).propagate(*inputs)
    metas = {n.name: n.meta.get("tensor_meta") for n in probe.graph.nodes}
    return {n: len(metas[n.name].shape) for n in gm.graph.nodes
            if hasattr(metas.get(n.name), "shape")}
