"""qfold.chain: elementwise integer chains (table/chain.hpp, table/compose.hpp)."""
from typing import Sequence, Union

import numpy as np
import numpy.typing as npt

from ._qfold import Rescale

class Mul:
    constant: int
    shift: int
    wrap: bool
    def __init__(self, constant: int, shift: int = 0, wrap: bool = True) -> None: ...

class Add:
    constant: int
    def __init__(self, constant: int) -> None: ...

class Clamp:
    lo: int
    hi: int
    def __init__(self, lo: int, hi: int) -> None: ...

class Table:
    values: npt.NDArray[np.int32]
    first_code: int
    def __init__(self, values: npt.ArrayLike, first_code: int = -128) -> None: ...

class Table16:
    values: npt.NDArray[np.int16]
    def __init__(self, values: npt.ArrayLike) -> None: ...

class Requantize:
    multiplier: int
    shift: int
    def __init__(self, multiplier: int, shift: int, kind: str = "tflite_double") -> None: ...

Step = Union[Rescale, Mul, Add, Clamp, Table, Table16, Requantize]

class Int16Fit:
    table: npt.NDArray[np.int16]
    max_error: int
    worst_code: int
    first_mismatch: int
    exact: bool

def evaluate(steps: Sequence[Step], x: Union[int, npt.ArrayLike]
             ) -> Union[int, npt.NDArray[np.int64]]: ...
def collapse(steps: Sequence[Step], input_dtype: str = "int8",
             output_dtype: str = "int8") -> npt.NDArray[np.integer]: ...
def collapse_int16(steps: Sequence[Step], require_exact: bool = False) -> Int16Fit: ...
