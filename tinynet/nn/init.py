"""Parameter initialisation, in place, with PyTorch's formulas and names.

* ``kaiming_uniform_``/``kaiming_normal_``: He et al. 2015 (arXiv:1502.01852),
  ``std = gain / sqrt(fan)``, uniform bound ``sqrt(3) * std``.
* ``xavier_uniform_``: Glorot & Bengio 2010, bound ``gain * sqrt(6 / (fan_in + fan_out))``.
* ``calculate_gain``: ``sqrt(2 / (1 + a^2))`` for leaky_relu, ``sqrt(2)`` for relu, 1 for linear.

Values are drawn from tinynet's host generator (repeatable under ``manual_seed``), so
the same seed gives the same weights on the CPU and the GPU.
"""
import math

import numpy

from .. import backend
from ..autograd.node import bump_version
from ..random import host_generator
from ..errors import ArgumentError, ArgumentTypeError
from ..tensor import Tensor


def _fill(tensor, values):
    if not isinstance(tensor, Tensor):
        raise ArgumentTypeError(f"init: expected a Tensor, got {type(tensor).__name__}")
    tensor.array[...] = backend.to_device(numpy.asarray(values), tensor.device).astype(tensor.dtype)
    bump_version(tensor)
    return tensor


def _fans(tensor):
    if tensor.ndim < 2:
        raise ArgumentError(f"init: fan in/out need a tensor with at least 2 dims, got shape {tensor.shape}")
    receptive = int(numpy.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    """Recommended gain for ``nonlinearity`` (linear, conv*, sigmoid: 1; tanh: 5/3;
    relu: sqrt 2; leaky_relu: sqrt(2 / (1 + slope^2)), slope default 0.01; selu: 3/4).

    Raises:
        ArgumentError: unknown nonlinearity.
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ArgumentError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with values drawn from U(a, b)."""
    return _fill(tensor, host_generator().uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with values drawn from N(mean, std^2)."""
    return _fill(tensor, host_generator().normal(mean, std, tensor.shape))


def constant_(tensor, val):
    """Fill with ``val``."""
    return _fill(tensor, numpy.full(tensor.shape, val))


def zeros_(tensor):
    """Fill with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fill with 1."""
    return constant_(tensor, 1.0)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ArgumentError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """He-uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """He-normal: N(0, std^2) with ``std = gain / sqrt(fan)``."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))


def xavier_uniform_(tensor, gain=1.0):
    """Glorot-uniform: U(-b, b) with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """Glorot-normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def default_layer_init_(weight, bias):
    """PyTorch's Linear/Conv default: kaiming_uniform_(a=sqrt 5) for the weight, and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _fans(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
