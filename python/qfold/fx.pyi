"""Typed stubs of qfold.fx: qfold's batch-norm and scale-into-quantize folds for torch.fx
GraphModules (needs torch), on top of :func:`qfold.run_passes`."""
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

import numpy as np
import numpy.typing as npt
import torch

from ._qfold import GraphReport, QParams

__all__: List[str]

class Param:
    """A parameter or buffer ``attr`` of the submodule ``target``: a constant node of FxIR."""
    target: str
    attr: str
    def __init__(self, target: str, attr: str) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Const:
    """A constant the pass created (a folded weight or bias), until apply() makes it a buffer."""
    data: npt.NDArray[np.float32]
    def __init__(self, data: npt.NDArray[np.float32]) -> None: ...

Node = Any  # a torch.fx.Node, a Param or a Const

class FxIR:
    """The Python IR protocol of docs/python.md over a GraphModule: read during run_passes, its
    recorded mutations written into the module by apply(). Float points only (no integer ones:
    fold_batch_norm and fold_scale_into_quantize)."""
    gm: torch.fx.GraphModule
    erased: Set[Any]
    modules: Dict[str, torch.nn.Module]
    """The call_module targets' modules as __init__ found them (apply() raises if one changed)."""
    ranks: Dict[Any, int]
    """fx node -> output rank (fold's example_inputs); else a node's tensor_meta is read."""
    def __init__(self, gm: torch.fx.GraphModule) -> None: ...
    def nodes(self) -> List[Node]:
        """Every live node, producers first (fx nodes, then the Param / Const they read)."""
    def kind(self, n: Node) -> str:
        """The qfold.OpKind name of n."""
    def operands(self, n: Node) -> List[Node]: ...
    def use_count(self, n: Node) -> int: ...
    def constant(self, n: Node) -> Optional[npt.NDArray[np.float32]]: ...
    def constant_bytes(self, n: Node) -> int: ...
    def conv_attributes(self, n: Node) -> Dict[str, Any]: ...
    def batch_norm_attributes(self, n: Node) -> Dict[str, Any]: ...
    def batch_norm_operands(self, n: Node) -> Tuple[Node, Optional[Node], Optional[Node],
                                                     Node, Node]: ...
    def output_rank(self, n: Node) -> int: ...
    def qparams(self, n: Node) -> Optional[QParams]: ...
    def qparams_shared(self, n: Node) -> bool: ...
    def set_qparams(self, n: Node, q: QParams) -> None: ...
    def add_constant(self, data: npt.NDArray[np.float32], shape: Tuple[int, ...]) -> Const: ...
    def set_operand(self, n: Node, i: int, v: Node) -> None: ...
    def remove_last_operand(self, n: Node) -> None: ...
    def replace_uses(self, old: Node, v: Node) -> None: ...
    def erase(self, n: Node) -> None: ...
    def apply(self) -> None:
        """Writes the recorded folds into gm: new modules and buffers, rewired and erased nodes;
        all or nothing (an exception puts gm back as it was). RuntimeError, writing nothing, if
        gm's submodules or graph changed since __init__."""

def fold(gm: torch.fx.GraphModule, *, inplace: bool = False,
         example_inputs: Optional[Union[Tuple[Any, ...], List[Any]]] = None,
         passes: Sequence[str] = ("fold_batch_norm", "fold_scale_into_quantize"),
         ) -> Tuple[torch.fx.GraphModule, GraphReport]:
    """Folds every foldable BatchNorm of gm into its conv / linear and every exact constant
    div / mul before a torch.quantize_per_tensor into its scale, and removes every requantize
    sandwich that gives back every code (shared-qparams ops then run on the codes):
    (folded_gm, report). A copy unless inplace (all or nothing); example_inputs runs ShapeProp on
    a copy (a Linear or Conv1d -> BatchNorm1d needs it). TypeError for an argument of a wrong
    type."""
