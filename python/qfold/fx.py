"""qfold's folds for torch.fx GraphModules, on top of :func:`qfold.run_passes`.

``fold(gm)`` folds every eval-mode BatchNorm1d/2d/3d (a ``call_module`` node) into the
Conv1d/2d/3d, ConvTranspose1d/2d/3d (grouped too) or Linear module whose output it alone reads,
with qfold's fold_batch_norm (float32 results bit-identical to ``torch.nn.utils.fusion``'s
``fuse_conv_bn_eval`` / ``fuse_linear_bn_eval``, correct for grouped transposed convolutions).
Refused sites (a BN in training mode, a conv output read twice, a Linear whose output rank is not
known to be 2, float64 weights, ...) are left exactly as they were and listed in the report.
On torch's reference-quantized graphs it folds constant scales into ``quantize_per_tensor`` and
removes requantize sandwiches (around shared-qparams ops such as max pool and flatten, which
then run on the codes) where qfold proves every code comes back unchanged.

The adapter below (:class:`FxIR`) is the Python IR protocol of docs/python.md over an fx graph:
parameters and buffers are constant nodes (:class:`Param`), the pass's new weights are
:class:`Const` nodes, and the pass's mutations are recorded on operand lists; only once the pass
has returned are they written into the GraphModule (new modules, rewired nodes, erased BNs).
"""

import copy
import operator

import numpy as np
import torch
from torch import nn

from . import _qfold

__all__ = ["fold", "FxIR", "Param", "Const"]

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
          nn.ConvTranspose3d)
_TRANSPOSED = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
_BNS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
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


class FxIR:
    """The qfold Python IR protocol over ``gm`` (read during run_passes, written by apply())."""

    def __init__(self, gm):
        self.gm = gm
        self.fx_nodes = list(gm.graph.nodes)
        self.ops = {}
        self.kinds = {}
        for n in self.fx_nodes:
            self.kinds[n] = k = self._fx_kind(n)
            if k in ("convolution", "linear"):
                m = gm.get_submodule(n.target)
                self.ops[n] = [n.args[0], Param(n.target, "weight")] + (
                    [Param(n.target, "bias")] if m.bias is not None else [])
            elif k == "batch_norm":
                m = gm.get_submodule(n.target)
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
            m = self.gm.get_submodule(n.target)
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
        m = self.gm.get_submodule(n.target)
        if isinstance(m, _CONVS):
            return "convolution"
        if isinstance(m, nn.Linear):
            return "linear"
        if isinstance(m, _BNS) and m.running_mean is not None and m.running_var is not None:
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
            t = getattr(self.gm.get_submodule(n.target), n.attr)
            if t is None or t.dtype != torch.float32:
                return None  # float64 weights: refused (not_constant), never rounded
            return t.detach().cpu().contiguous().numpy()
        return None

    def constant_bytes(self, n):
        c = self.constant(n)
        return 0 if c is None else int(c.nbytes)

    def conv_attributes(self, n):
        m = self.gm.get_submodule(n.target)
        transposed = isinstance(m, _TRANSPOSED)
        padding = m.padding
        padded = padding != "valid" if isinstance(padding, str) else any(p != 0 for p in padding)
        return {"groups": m.groups, "transposed": transposed,
                "layout": "i_o_s" if transposed else "o_i_s", "padded": padded,
                "input_channel_axis": 1}

    def batch_norm_attributes(self, n):
        m = self.gm.get_submodule(n.target)
        return {"epsilon": float(m.eps), "training": bool(m.training)}

    def batch_norm_operands(self, n):
        m = self.gm.get_submodule(n.target)
        p = lambda a: Param(n.target, a)  # noqa: E731
        return (self.ops[n][0], p("weight") if m.affine else None,
                p("bias") if m.affine else None, p("running_mean"), p("running_var"))

    def output_rank(self, n):
        meta = n.meta.get("tensor_meta") if isinstance(n, torch.fx.Node) else None
        return len(meta.shape) if meta is not None and hasattr(meta, "shape") else 0

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
        gm = self.gm
        read_attrs = [n for n in self.fx_nodes if n.op == "get_attr" and n.users]
        calls = {}
        for n in self.fx_nodes:
            if n.op == "call_module":
                calls[n.target] = calls.get(n.target, 0) + 1
        for n in self.fx_nodes:
            if n in self.erased or self.kinds[n] not in ("convolution", "linear"):
                continue
            ops = self.ops[n]
            if not any(isinstance(v, Const) for v in ops[1:]):
                continue
            old = gm.get_submodule(n.target)
            new = copy.deepcopy(old)
            for attr, v in zip(("weight", "bias"), ops[1:]):
                if isinstance(v, Const):
                    grad = old.weight.requires_grad
                    setattr(new, attr, nn.Parameter(torch.from_numpy(v.data.copy()).to(
                        old.weight.device), requires_grad=grad))
            if calls[n.target] == 1:  # this node alone calls the module: replace it in place
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
        still_called = {n.target for n in gm.graph.nodes if n.op == "call_module"}
        for t in bn_targets - still_called:
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


def fold(gm, *, inplace=False, example_inputs=None,
         passes=("fold_batch_norm", "fold_scale_into_quantize")):
    """Folds every foldable BatchNorm of ``gm`` into its conv / linear, and every constant
    ``div``/``mul`` feeding a ``torch.quantize_per_tensor`` into its scale: ``(folded_gm, report)``.

    ``inplace=False`` (the default) folds a ``copy.deepcopy`` of ``gm`` and leaves ``gm`` as it
    was; ``inplace=True`` changes ``gm`` itself (and returns it). ``example_inputs`` (a tuple)
    runs ``torch.fx.passes.shape_prop.ShapeProp`` first, which a Linear -> BatchNorm1d needs
    (without a known output rank of 2 it is refused, ``ambiguous_axis``). Nodes in the report
    are the folded module's nodes (and :class:`Param` / :class:`Const` constants); a graph where
    nothing folds is not touched (``gm.code`` unchanged).

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
    if not isinstance(gm, torch.fx.GraphModule):
        raise TypeError("qfold.fx.fold: expected a torch.fx.GraphModule")
    target = gm if inplace else copy.deepcopy(gm)
    if example_inputs is not None:
        from torch.fx.passes.shape_prop import ShapeProp
        ShapeProp(target).propagate(*example_inputs)
    ir = FxIR(target)
    report = _qfold.run_passes(ir, list(passes))
    if report.folded:
        ir.apply()
    return target, report
