"""qfold.gemmlowp: gemmlowp's fixed-point helpers (arith/gemmlowp.hpp)."""
from typing import Union

import numpy as np
import numpy.typing as npt

def saturating_rounding_doubling_high_mul(a: Union[int, npt.ArrayLike], b: Union[int, npt.ArrayLike]
                                          ) -> Union[int, npt.NDArray[np.integer]]: ...
def rounding_divide_by_pot(x: Union[int, npt.ArrayLike],
                           exponent: int) -> Union[int, npt.NDArray[np.integer]]: ...
def saturating_rounding_multiply_by_pot(x: Union[int, npt.ArrayLike],
                                        exponent: int) -> Union[int, npt.NDArray[np.integer]]: ...
