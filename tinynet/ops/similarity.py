"""Distances, similarities, shrinkage and RMS normalisation, written with tinynet's
differentiable ops (so forward and backward come from those ops, on both devices):

* ``cosine_similarity(x1, x2, dim, eps)``: ``sum(x1/n1 * x2/n2)`` with ``n = max(||x||_2, eps)``
  along ``dim``, each input divided by its own norm first as PyTorch does (the result stays in
  [-1, 1]); the clamp to ``eps`` changes the value but not the gradient, as PyTorch's (it
  clamps the norms in place under no_grad).
* ``pairwise_distance(x1, x2, p, eps, keepdim)``: ``||x1 - x2 + eps||_p`` over the last dim.
* ``threshold``, ``hardshrink``, ``softshrink``: piecewise maps whose gradient is 1 where the
  input passes through and 0 elsewhere (also at the thresholds, as PyTorch).
* ``rms_norm`` (Zhang & Sennrich, 2019, "Root Mean Square Layer Normalization",
  arXiv:1910.07467): ``x / sqrt(mean(x^2) + eps) * weight`` over the trailing
  ``normalized_shape``; ``eps`` defaults to the machine epsilon of the input's dtype, as
  PyTorch's.
"""
import numbers

import numpy

from ..autograd import no_grad
from ..dtypes import finfo
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .arith import _check_shapes, add, mul, sub
from .autocast import autocast_op
from .division import div
from .inplace import inplace_apply
from .reduction import mean, sum as _sum
from .select import where
from .stats import norm
from .unary import abs as _abs, clamp, rsqrt
from .util import check_float, check_int, check_number, check_tensor, dim_index


@autocast_op
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity of ``x1`` and ``x2`` (broadcast together) along ``dim``.

    Args:
        x1, x2 (Tensor): float, broadcastable shapes.
        dim (int): the dimension of the vectors. Default 1.
        eps (float): the smallest norm divided by. Default 1e-8.

    Returns:
        Tensor of the broadcast shape without ``dim``; values in [-1, 1].

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: not floating point.
        ShapeError: shapes that do not broadcast.
        IndexOutOfRangeError: ``dim`` outside the broadcast shape.
    """
    check_float("cosine_similarity", "x1", x1)
    check_float("cosine_similarity", "x2", x2)
    check_number("cosine_similarity", "eps", eps)
    _check_shapes("cosine_similarity", x1, x2)
    shape = numpy.broadcast_shapes(x1.shape, x2.shape)  # both broadcast first, as PyTorch's expand_outplace
    d = dim_index("cosine_similarity", dim, len(shape))
    x1 = x1 if x1.shape == shape else x1.expand(*shape)
    x2 = x2 if x2.shape == shape else x2.expand(*shape)
    return _sum(mul(div(x1, _clamped_norm(x1, d, eps)), div(x2, _clamped_norm(x2, d, eps))), dim=d)


def _clamped_norm(x, dim, eps):
    """``||x||_2`` along ``dim`` (kept) with its value raised to ``eps`` but its gradient the
    norm's own (PyTorch clamps in place under no_grad)."""
    n = norm(x, 2, dim, keepdim=True)
    with no_grad():
        lift = clamp(n, min=eps) - n
    return add(n, lift)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension (inputs broadcast together).

    Args:
        x1, x2 (Tensor): float, broadcastable, at least 1-D.
        p (float): the norm's exponent (``inf`` allowed). Default 2.
        eps (float): added to the difference, as PyTorch (avoids the norm's kink at 0).
            Default 1e-6.
        keepdim (bool): keep the last dimension as size 1. Default False.

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: not floating point.
        ShapeError: shapes that do not broadcast, or 0-d inputs.
    """
    check_float("pairwise_distance", "x1", x1)
    check_float("pairwise_distance", "x2", x2)
    check_number("pairwise_distance", "p", p)
    check_number("pairwise_distance", "eps", eps)
    if max(x1.ndim, x2.ndim) == 0:
        raise ShapeError("pairwise_distance: expected inputs with at least one dimension, got two 0-d tensors")
    _check_shapes("pairwise_distance", x1, x2)
    return norm(add(sub(x1, x2), eps), p, -1, keepdim=bool(keepdim))


def threshold(input, threshold, value, inplace=False):
    """``input`` where it is greater than ``threshold``, else ``value``.

    Raises:
        ArgumentTypeError: not a Tensor, or non-number ``threshold``/``value``.
    """
    check_tensor("threshold", "input", input)
    check_number("threshold", "threshold", threshold)
    check_number("threshold", "value", value)
    def compute(x):
        return where(x > threshold, x, value)
    return inplace_apply("threshold", input, compute) if inplace else compute(input)


_threshold = threshold  # threshold_'s parameter of that name (PyTorch's) hides the function


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return _threshold(input, threshold, value, inplace=True)


def _lambd(op, lambd):
    check_number(op, "lambd", lambd)
    if lambd < 0:
        raise ArgumentError(f"{op}: lambda must be greater or equal to 0, but found to be {lambd}")
    return lambd


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd``, else 0.

    Raises:
        ArgumentTypeError: not a Tensor. ArgumentError: ``lambd < 0``.
    """
    check_tensor("hardshrink", "input", input)
    lambd = _lambd("hardshrink", lambd)
    return where(_abs(input) > lambd, input, 0.0)


def softshrink(input, lambd=0.5):
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0.

    Raises:
        ArgumentTypeError: not a Tensor. ArgumentError: ``lambd < 0``.
    """
    check_tensor("softshrink", "input", input)
    lambd = _lambd("softshrink", lambd)
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalisation over the trailing ``normalized_shape``:
    ``input / sqrt(mean(input^2) + eps) [* weight]``.

    Args:
        input (Tensor): float (*, *normalized_shape).
        normalized_shape (int or sequence of ints): the trailing shape normalised over.
        weight (Tensor, optional): of ``normalized_shape``, multiplied in.
        eps (float, optional): added to the mean square; default the machine epsilon of
            the input's dtype (``finfo(input.dtype).eps``), as PyTorch.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        ArgumentTypeError: not a Tensor, or ``normalized_shape`` not an int or ints.
        DTypeError: not floating point.
        ShapeError: the trailing shape or the weight's shape differs from
            ``normalized_shape``.
    """
    check_float("rms_norm", "input", input)
    if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
        normalized_shape = (int(normalized_shape),)
    if not isinstance(normalized_shape, (tuple, list)):
        raise ArgumentTypeError(f"rms_norm: normalized_shape must be an int or a sequence of ints, got "
                                f"{type(normalized_shape).__name__}")
    shape = tuple(check_int("rms_norm", "normalized_shape", s, 0) for s in normalized_shape)
    k = len(shape)
    if k == 0 or k > input.ndim or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"rms_norm: expected input with trailing shape {list(shape)}, got {tuple(input.shape)}")
    if weight is not None and (not isinstance(weight, Tensor) or tuple(weight.shape) != shape):
        raise ShapeError(f"rms_norm: expected weight of shape {list(shape)}, got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if eps is None:
        eps = float(finfo(input.dtype).eps)
    check_number("rms_norm", "eps", eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    y = mul(input, rsqrt(add(mean(mul(input, input), dim=dims, keepdim=True), eps)))
    return mul(y, weight) if weight is not None else y
