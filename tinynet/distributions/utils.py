"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils``):
``broadcast_all``, ``logits_to_probs``, ``probs_to_logits``, ``clamp_probs`` and
``lazy_property``, plus the internal ``_sum_rightmost`` and ``_softplus``."""
import numbers

import numpy

from .. import dtypes
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from ._ops import broadcast_shapes, broadcast_tensors, enable_grad, log, log1p, sigmoid, softmax, softplus, tensor


def broadcast_all(*values):
    """The arguments as tensors of one broadcast shape: numbers become tensors of the first
    tensor's dtype and device (the default float dtype when all are numbers).

    Raises:
        ArgumentError: an argument is neither a number nor a Tensor (ValueError, as PyTorch's).
        ShapeError: the shapes do not broadcast.
    """
    ref = None
    for v in values:
        if isinstance(v, Tensor):
            ref = v if ref is None else ref
        elif isinstance(v, bool) or not isinstance(v, (numbers.Number, numpy.number)) or isinstance(v, complex):
            raise ArgumentError("broadcast_all: input arguments must all be numbers or Tensors, got "
                                f"{type(v).__name__}")
    dtype = ref.dtype if ref is not None and dtypes.is_floating(ref.dtype) else dtypes.get_default_dtype()
    device = ref.device if ref is not None else None
    ts = [v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype, device=device) for v in values]
    try:
        broadcast_shapes(*(tuple(t.shape) for t in ts))
    except ShapeError:
        raise ShapeError(f"broadcast_all: shapes {', '.join(str(tuple(t.shape)) for t in ts)} do not "
                         "broadcast") from None
    return broadcast_tensors(*ts)


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dimensions (none when ``dim <= 0``)."""
    if dim <= 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def _softplus(x):
    """log(1 + e^x) to float64 accuracy everywhere (the linear branch only past 40, where
    the correction e^-40 is below a float64 ulp of x)."""
    return softplus(x, threshold=40.0)


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` of its dtype (finite logits)."""
    eps = dtypes.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Sigmoid of the logits (``is_binary``) or softmax over the last dimension."""
    return sigmoid(logits) if is_binary else softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """log(p) - log(1 - p) of the clamped probabilities (``is_binary``), else log(p)."""
    p = clamp_probs(probs)
    return log(p) - log1p(-p) if is_binary else log(p)


class lazy_property:
    """A property computed on first access (with gradients enabled) and then stored on the
    instance, as PyTorch's ``lazy_property``: Bernoulli's ``logits`` from ``probs``, ..."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


__all__ = ["broadcast_all", "clamp_probs", "logits_to_probs", "probs_to_logits", "lazy_property"]
