"""tinynet: a readable NumPy/CuPy deep-learning framework with PyTorch's API.

The array backend is chosen once at import by ``TINYNET_BACKEND`` (``auto``, ``numpy``,
``cupy``); see :mod:`tinynet.backend`.
"""
from . import backend, errors
from .autograd import enable_grad, is_grad_enabled, no_grad
from .random import manual_seed
from .parallel import get_num_threads, set_num_threads
from .tensor import Tensor, bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from .creation import (arange, as_tensor, empty, empty_like, from_dlpack, full, full_like, ones, ones_like, rand,
                       rand_like, randn, randn_like, tensor, zeros, zeros_like)
from . import backends, nn, optim  # noqa: E402  (nn needs Tensor)
from .kernels import cudnn as _cudnn_impl

_cudnn_impl.check_always()  # TINYNET_CUDNN=always must fail loudly at import
from .nn.functional import (abs, amax, amin, argmax, argmin, cat, clamp, exp, flatten, log, matmul,
                            max, maximum, mean, min, minimum, permute, reshape, sqrt, squeeze, stack,
                            sum, transpose, unsqueeze, var, where)
from .serialization import load, save

__version__ = "0.1.0"


def __getattr__(name):
    if name == "data":  # imported lazily: it pulls in rich and the dataset code
        import importlib
        return importlib.import_module(".data", __name__)
    raise AttributeError(f"module 'tinynet' has no attribute {name!r}")


__all__ = ["Tensor", "tensor", "as_tensor", "zeros", "ones", "full", "empty", "arange", "rand", "randn",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "from_dlpack",
           "no_grad", "enable_grad", "is_grad_enabled", "manual_seed", "get_num_threads", "set_num_threads", "save", "load", "nn", "optim",
           "data", "backend", "backends", "errors", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "bool_", "abs", "amax", "amin", "argmax", "argmin", "cat", "clamp", "exp", "flatten",
           "log", "matmul", "max", "maximum", "mean", "min", "minimum", "permute", "reshape", "sqrt",
           "squeeze", "stack", "sum", "transpose", "unsqueeze", "var", "where"]
