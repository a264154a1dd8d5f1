"""qfold.cmsis_nn: CMSIS-NN's requantization (arith/cmsis_nn.hpp)."""
from typing import Union

import numpy as np
import numpy.typing as npt

from .tflite import QuantizedMultiplier

_Out = Union[int, npt.NDArray[np.int32]]

def requantize(val: Union[int, npt.ArrayLike], multiplier: int, shift: int,
               rounding: str = "double_round", version: str = "current") -> _Out: ...
def requantize_s64(val: Union[int, npt.ArrayLike], reduced_multiplier: int, shift: int) -> _Out: ...
def requantize_mve(val: Union[int, npt.ArrayLike], multiplier: int, shift: int,
                   rounding: str = "double_round", overflow: str = "wrap") -> _Out: ...
def requantize_mve_pred(val: Union[int, npt.ArrayLike], multiplier: int, shift: int,
                        rounding: str = "double_round", overflow: str = "wrap") -> _Out: ...
def accepts(multiplier: QuantizedMultiplier, rounding: str = "double_round") -> bool: ...
