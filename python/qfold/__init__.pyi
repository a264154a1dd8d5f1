from ._qfold import *  # noqa: F401,F403
from ._qfold import __version__ as __version__
from . import chain as chain, cmsis_nn as cmsis_nn, executorch as executorch
from . import gemmlowp as gemmlowp, tflite as tflite
