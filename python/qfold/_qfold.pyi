"""Typed stubs of qfold._qfold (the pybind11 module; re-exported by ``qfold``)."""
from typing import (Any, Dict, Iterator, List, Optional, Protocol, Sequence, Tuple, Union,
                    overload)

import numpy as np
import numpy.typing as npt

from . import chain as chain
from . import cmsis_nn as cmsis_nn
from . import executorch as executorch
from . import gemmlowp as gemmlowp
from . import tflite as tflite

__version__: str

ArrayLike = npt.ArrayLike  # ndarrays, lists, anything with __array__ or numpy() (torch tensors)
IntArray = npt.NDArray[np.integer]
DType = Union[str, np.dtype, type]

# --- errors ------------------------------------------------------------------------------------
class Error(ValueError):
    """A qfold::error: .code is the errc name, .message names the input, .index the element."""
    code: str
    message: str
    index: Optional[int]

class NegativeMultiplier(Error): ...
class MultiplierOutOfRange(Error): ...
class ShiftOutOfRange(Error): ...
class ValueOutOfRange(Error): ...
class ResultOutOfRange(Error): ...
class DivisorZero(Error): ...
class ScaleNegative(Error): ...
class ScaleNan(Error): ...
class ScaleInfinite(Error): ...
class ScaleTooLarge(Error): ...
class ScaleZero(Error): ...
class IllegalType(Error): ...
class IllegalZeroPoint(Error): ...
class IllegalAttributes(Error): ...
class SizeMismatch(Error): ...
class ZeroPointOutOfRange(Error): ...
class EmptyRange(Error): ...
class NotFinite(Error): ...
class NotExact(Error): ...
class SizeOverflow(Error): ...
class InvalidShape(Error): ...
class ScaleSubnormal(Error): ...

# --- shared value types ------------------------------------------------------------------------
class ScaleFactor:
    """A TOSA multiplier/shift pair: multiplier * 2**-shift."""
    multiplier: int
    shift: int
    def __init__(self, multiplier: int, shift: int) -> None: ...
    def to_float(self) -> float: ...
    def __iter__(self) -> Iterator[int]: ...

class QParams:
    """real = scale * (code - zero_point), codes in [qmin, qmax] within dtype."""
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    dtype: str
    def __init__(self, scale: float, zero_point: int = 0, dtype: DType = "int8",
                 qmin: Optional[int] = None, qmax: Optional[int] = None) -> None: ...
    def validate(self) -> None: ...

class Rejection:
    """A refused fold (falsy): reason, message, index of the first failing element or None."""
    @property
    def reason(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def index(self) -> Optional[int]: ...
    def __bool__(self) -> bool: ...

class Rescale:
    """One TOSA RESCALE; call it on an int or an array."""
    def __init__(self, multiplier: Union[int, ScaleFactor, Sequence[int], Sequence[ScaleFactor]],
                 shift: Union[None, int, Sequence[int]] = None, *, input_type: str = "i8",
                 output_type: str = "i8", input_zp: int = 0, output_zp: int = 0,
                 scale32: bool = True, rounding: str = "single_round",
                 per_channel: Optional[bool] = None, input_unsigned: bool = False,
                 output_unsigned: bool = False) -> None: ...
    input_type: str
    output_type: str
    input_zp: int
    output_zp: int
    scale32: bool
    rounding: str
    per_channel: bool
    input_unsigned: bool
    output_unsigned: bool
    scales: list[ScaleFactor]
    multiplier: int
    shift: int
    def validate(self) -> None: ...
    @overload
    def __call__(self, values: int) -> int: ...
    @overload
    def __call__(self, values: ArrayLike) -> IntArray: ...

# --- arith ---------------------------------------------------------------------------------------
def multiplier_shift(scale: float, bits: int = 32, tie: str = "half_even") -> ScaleFactor: ...
def reciprocal_scale(divisor: int) -> ScaleFactor: ...
@overload
def apply_scale_32(value: int, multiplier: int, shift: int, double_round: bool = False) -> int: ...
@overload
def apply_scale_32(value: ArrayLike, multiplier: int, shift: int,
                   double_round: bool = False) -> npt.NDArray[np.int32]: ...
@overload
def apply_scale_16(value: int, multiplier: int, shift: int) -> int: ...
@overload
def apply_scale_16(value: ArrayLike, multiplier: int, shift: int) -> npt.NDArray[np.int32]: ...
def rescale(values: Union[int, ArrayLike],
            multiplier: Union[int, ScaleFactor, Sequence[int], Sequence[ScaleFactor]],
            shift: Union[None, int, Sequence[int]] = None, *, output_dtype: DType = "int8",
            input_zp: int = 0, output_zp: int = 0, scale32: Optional[bool] = None,
            rounding: str = "single_round", per_channel: Optional[bool] = None,
            input_type: Optional[str] = None) -> Union[int, IntArray]: ...
@overload
def mul(a: int, b: int, shift: int = 0) -> int: ...
@overload
def mul(a: ArrayLike, b: Union[int, ArrayLike], shift: int = 0) -> npt.NDArray[np.int32]: ...
def requantize(flavour: str, x: Union[int, ArrayLike], multiplier: int,
               shift: int) -> Union[int, npt.NDArray[np.int32]]: ...

# --- tables --------------------------------------------------------------------------------------
def functions() -> list[str]: ...
def table8(function: str, in_qparams: QParams, out_qparams: QParams,
           convention: str = "executorch", *, alpha: float = 1.0, negative_slope: float = 0.01,
           approximate: str = "none") -> IntArray: ...

class ExecutorchInt16Table:
    @property
    def table(self) -> npt.NDArray[np.int16]: ...
    rshift: int
    rescale: ScaleFactor

def executorch_int16_table(function: str, in_qparams: QParams, out_qparams: QParams, *,
                           alpha: float = 1.0, negative_slope: float = 0.01,
                           approximate: str = "none") -> ExecutorchInt16Table: ...
def tflite_int16_table(function: str, in_qparams: QParams, out_qparams: QParams, *,
                       alpha: float = 1.0, negative_slope: float = 0.01,
                       approximate: str = "none") -> npt.NDArray[np.int16]: ...
def validate_int16_table(table: ArrayLike) -> None: ...
def lookup(table: ArrayLike, codes: Union[int, ArrayLike],
           input_dtype: Optional[DType] = None) -> Union[int, IntArray]: ...
def lookup16(table: ArrayLike, codes: Union[int, ArrayLike],
             rounding: str = "tosa") -> Union[int, IntArray]: ...
def to_tflite_order(table: ArrayLike) -> npt.NDArray[np.int8]: ...
def from_tflite_order(values: ArrayLike) -> npt.NDArray[np.int8]: ...

# --- exact ---------------------------------------------------------------------------------------
class RescaleSpace:
    def __init__(self, *, input_type: str = "i8", output_type: str = "i8",
                 input_unsigned: bool = False, output_unsigned: bool = False,
                 scale32: bool = True, allow_double_round: bool = True,
                 input_zero_points: Sequence[int] = ()) -> None: ...
    input_type: str
    output_type: str
    input_zero_points: list[int]

class Witness:
    input: int
    expected: int
    actual: int

class AffineMap:
    slope: int
    offset: int
    def __call__(self, x: int) -> int: ...

class SaturatedAffineMap:
    line: AffineMap
    lo: int
    hi: int
    first: int
    last: int
    def __call__(self, x: int) -> int: ...

class Classification:
    kind: str  # identity, constant, affine, rescale, saturated_affine, none
    affine: Optional[AffineMap]
    saturated: Optional[SaturatedAffineMap]
    rescale: Optional[Rescale]
    affine_miss: Optional[Witness]
    saturated_miss: Optional[Witness]
    rescale_miss: Optional[Witness]

class LineFit:
    line: Optional[AffineMap]
    miss: Optional[Witness]

class MergeReport:
    merged: Optional[Rescale]
    naive: Rescale
    max_deviation: int
    first_difference: Optional[Witness]
    exact: bool

def classify(values: ArrayLike, lo: int = -128,
             space: Optional[RescaleSpace] = None) -> Classification: ...
def classify_channels(values: ArrayLike, lo: int = -128,
                      space: Optional[RescaleSpace] = None) -> list[Classification]: ...
def synthesize_rescale(values: ArrayLike, lo: int = -128,
                       space: Optional[RescaleSpace] = None) -> Optional[Rescale]: ...
def fit_line(x: ArrayLike, y: ArrayLike) -> LineFit: ...
def merge_rescales(steps: Sequence[object], lo: int = -128, hi: int = 127,
                   space: Optional[RescaleSpace] = None) -> MergeReport: ...
def domain_of(qparams: QParams) -> Tuple[int, int]: ...

# --- folds ---------------------------------------------------------------------------------------
def fold_batch_norm(weight: ArrayLike, bias: Optional[ArrayLike], mean: ArrayLike,
                    var: ArrayLike, gamma: ArrayLike, beta: ArrayLike, eps: float = 1e-5, *,
                    kind: str = "conv", layout: str = "o_i_s", groups: int = 1,
                    training: bool = False
                    ) -> Union[Tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]],
                               Rejection]: ...
def fold_dyt_alpha(*, activation: Tuple[int, int], activation_rescale: Rescale,
                   alpha_rescale: Rescale, alpha: int, mul_shift: int, output_rescale: Rescale,
                   tanh_input: Tuple[int, int],
                   tanh_table: ArrayLike) -> Union[npt.NDArray[np.int8], Rejection]: ...
def dyt_alpha_qparams_line_up(activation: QParams, activation_rescale: Rescale,
                              tanh_input: QParams,
                              output_rescale: Rescale) -> Optional[Rejection]: ...

class DytAffinePlan:
    action: str  # fold, bypass_affine, bypass_gamma
    weights: Optional[npt.NDArray[np.int64]]
    bias: Optional[npt.NDArray[np.int64]]
    input_zero_point: int

def fold_dyt_affine(*, table: ArrayLike, table_zero_point: int, table_rescale: Rescale,
                    gamma_rescale: Rescale, gamma: ArrayLike, mul_shift: int,
                    product_rescale: Rescale, scaled_rescale: Rescale, beta_rescale: Rescale,
                    beta: ArrayLike, sum_rescale: Rescale, weights: ArrayLike,
                    weight_layout: str = "o_i_s", groups: int = 1,
                    weight_zero_points: ArrayLike = ..., weight_dtype: DType = "int8",
                    bias: Optional[ArrayLike] = None, input_zero_point: int = 0,
                    padded: bool = False) -> Union[DytAffinePlan, Rejection]: ...
def fold_scale_into_quantize(op: str, c: float, qparams: QParams, exactness: str = "bit_exact",
                             real: str = "float32") -> Union[QParams, Rejection]: ...
def prove_requantize_identity(op: str, c: float, in_qparams: QParams, out_qparams: QParams,
                              convention: str = "executorch") -> Optional[Rejection]: ...

# --- graph passes over a Python IR (docs/python.md, "Adapting a Python IR") ---------------------
class OpKind:
    """qfold's op vocabulary; kind(n) may return one of these or its name."""
    name: str
    value: int
    constant: "OpKind"
    input: "OpKind"
    convolution: "OpKind"
    linear: "OpKind"
    batch_norm: "OpKind"
    rescale: "OpKind"
    table: "OpKind"
    mul: "OpKind"
    add: "OpKind"
    div: "OpKind"
    quantize: "OpKind"
    dequantize: "OpKind"
    view: "OpKind"
    sub: "OpKind"
    clamp: "OpKind"
    cast: "OpKind"
    other: "OpKind"

class Site:
    """One site a graph pass looked at: the pattern's nodes (the IR's own objects), folded or not."""
    @property
    def pass_name(self) -> str: ...
    @property
    def nodes(self) -> List[Any]: ...
    @property
    def folded(self) -> bool: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def index(self) -> Optional[int]: ...
    @property
    def bytes_removed(self) -> int: ...
    @property
    def cleanup_failed(self) -> bool: ...
    @property
    def rollback_failed(self) -> bool:
        """The site's apply failed and so did its undo (an inverse raised, or a node an add_*
        made under a wrong answer could not be found and erased): reason adapter_failure, and the
        IR may differ from what it was."""
    @property
    def adapter_error(self) -> Optional[str]:
        """The text of the adapter error that broke this site (its adapter_failure, or a folded
        site's cleanup), e.g. "use_count(n) returned -1, expected an int >= 0"; None if none
        or not known. An adapter_failure's message ends with it too."""

class GraphReport:
    """What run_passes did: every site in order, and the text of each adapter exception."""
    @property
    def sites(self) -> List[Site]: ...
    @property
    def adapter_errors(self) -> List[str]: ...
    @property
    def folded(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def rollback_failed(self) -> int:
        """Sites whose rollback failed (Site.rollback_failed): the IR may differ."""
    @property
    def ir_changed(self) -> bool:
        """Whether the IR may differ from what it was: a site folded, or a rollback failed."""
    @property
    def bytes_removed(self) -> int: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Site]: ...

def graph_pass_names() -> List[str]:
    """Every pass run_passes can run, in pipeline order: fold_batch_norm,
    fold_scale_into_quantize, fold_dyt_alpha, fold_dyt_affine, fold_merge_rescales,
    fold_compose_tables, fold_collapse_to_table."""
def run_passes(ir: Any, passes: Optional[Sequence[str]] = None,
               exactness: str = "bit_exact") -> GraphReport:
    """Runs qfold's graph passes over ir, an object whose methods are the customization points
    (FloatIR, IntegerIR below; docs/python.md). passes=None runs every pass whose methods ir's
    class or instance __dict__ has; a pass named here without them is a qfold.Error naming the
    missing methods. A method's exception, or an answer of the wrong type or range (named:
    "use_count(n) returned -1, expected an int >= 0"; a node listed twice; an add_* returning
    None or an existing id), is that site's adapter_failure, rolled back; a rollback that could
    not be completed is Site.rollback_failed (GraphReport.rollback_failed, ir_changed).
    Batch-norm statistics that are not 1-D are refused, invalid_shape."""

# --- the Python IR protocols (documentation only: run_passes takes any object) -----------------
Node = Any  # any hashable object the IR hands out
RescaleAttributes = Dict[str, Any]  # input_type / output_type ("i8", "i16", "i32", "i48"),
# scale32, rounding ("single_round", "double_round", "inexact_round"), per_channel,
# input_unsigned, output_unsigned, input_zp, output_zp

class FloatIR(Protocol):
    """What fold_batch_norm and fold_scale_into_quantize call (docs/python.md)."""
    def nodes(self) -> Sequence[Node]: ...
    def kind(self, n: Node) -> Union[str, OpKind]: ...
    def operands(self, n: Node) -> Sequence[Node]: ...
    def use_count(self, n: Node) -> int: ...
    def constant(self, n: Node) -> Optional[npt.NDArray[np.float32]]: ...
    def conv_attributes(self, n: Node) -> Dict[str, Any]: ...
    def batch_norm_attributes(self, n: Node) -> Dict[str, Any]: ...
    def output_rank(self, n: Node) -> int: ...
    def qparams(self, n: Node) -> Optional[QParams]: ...
    def set_qparams(self, n: Node, q: QParams) -> None: ...
    def add_constant(self, data: npt.NDArray[np.float32], shape: Tuple[int, ...]) -> Node: ...
    def set_operand(self, n: Node, i: int, v: Node) -> None: ...
    def remove_last_operand(self, n: Node) -> None: ...
    def replace_uses(self, old: Node, v: Node) -> None: ...
    def erase(self, n: Node) -> None: ...

class IntegerIR(Protocol):
    """What the integer passes call, besides nodes / kind / operands / use_count / set_operand /
    remove_last_operand / replace_uses / erase. A TABLE's entries are its operand 1 (an int8
    int_constant of 256 entries, TOSA's form). Integers may come as numpy int8..int64 / uint
    arrays or lists; they are copied out range checked."""
    def int_constant(self, n: Node) -> Optional[Union[IntArray, Sequence[int], Any]]:
        """None unless n is an integer constant; an array (its own shape) or an object / dict
        with data and shape."""
    def output_shape(self, n: Node) -> Sequence[int]: ...
    def rescale(self, n: Node) -> Union[Dict[str, Any], Any]:
        """RescaleAttributes (flat, or under "attributes") with multipliers and shifts."""
    def mul_shift(self, n: Node) -> int: ...
    def clamp_attributes(self, n: Node) -> Union[Dict[str, int], Tuple[int, int]]: ...
    def element_type(self, n: Node) -> Optional[str]:
        """int8, uint8, int16, uint16 or int32 (or a numpy dtype); None (or any other name) for
        float, int48, ..."""
    def view_axis(self, n: Node, axis: int) -> Optional[int]: ...
    def quantized_conv(self, n: Node) -> Optional[Dict[str, Any]]:
        """None (a float conv) or input_zero_point, weight_zero_points, weight_type."""
    def qparams(self, n: Node) -> Optional[QParams]:
        """Optional but for DyT: without it every node's quantization is None."""
    def set_qparams(self, n: Node, q: QParams) -> None: ...
    def add_int_constant(self, data: IntArray, shape: Tuple[int, ...], dtype: str) -> Node: ...
    def add_table(self, input: Node, values: npt.NDArray[np.int8]) -> Node:
        """A new TABLE reading input; the IR makes its 256-entry table constant (operand 1)."""
    def add_table16(self, input: Node, values: npt.NDArray[np.int16]) -> Node:
        """Optional: a new int16 TABLE (int16 in, int32 out) reading input; the IR makes its
        513-entry table constant (operand 1). With add_rescale, int16 chains collapse too."""
    def add_rescale(self, input: Node, attributes: RescaleAttributes,
                    multipliers: npt.NDArray[np.int32], shifts: npt.NDArray[np.int32]) -> Node: ...
    def set_conv_input_zero_point(self, n: Node, zero_point: int) -> None: ...
