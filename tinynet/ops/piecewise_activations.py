"""Piecewise activation functions: Hardtanh, ReLU6, Hardswish, Hardsigmoid, PReLU,
Threshold, Hardshrink and Softshrink, with PyTorch's formulas and its gradients at the kinks.

* Hardtanh ``clamp(x, min_val, max_val)``; derivative 1 strictly inside, 0 elsewhere, so
  0 *at* ``min_val`` and ``max_val`` (unlike :func:`tinynet.clamp`, which passes the
  gradient at the bounds). ReLU6 is ``hardtanh(x, 0, 6)`` (derivative 0 at 0 and at 6).
* Hardswish (Howard et al., 2019, "Searching for MobileNetV3", arXiv:1905.02244):
  ``x * relu6(x + 3) / 6``; derivative 0 for ``x <= -3``, ``x/3 + 1/2`` strictly
  inside ``(-3, 3)``, 1 for ``x >= 3`` (so 0 at -3 and 1 at 3, as PyTorch).
* Hardsigmoid ``relu6(x + 3) / 6``; derivative 1/6 strictly inside ``(-3, 3)``, else 0
  (PyTorch's float64 kernel multiplies by 1/6 rounded to float32, a relative difference
  of 3e-8 from tinynet's exact 1/6).
* PReLU (He et al., 2015, arXiv:1502.01852): ``x`` for ``x > 0`` else ``a * x`` with a
  learnt slope ``a`` per channel (dim 1) or one shared; at ``x = 0`` the input's gradient
  is ``a`` and the slope's contribution is 0 (PyTorch's convention).

* ``threshold``, ``hardshrink``, ``softshrink`` (composed of :func:`~tinynet.where`):
  piecewise maps whose gradient is 1 where the input passes through and 0 elsewhere (also
  at the thresholds, as PyTorch).

Every op here is twice differentiable (the second derivative is 0 almost everywhere,
1/3 for Hardswish in ``[-3, 3]``).
"""
import math

import numpy

from ..autograd import Op
from ..errors import ArgumentError, DTypeError, ShapeError
from .autocast import autocast_op
from .inplace import inplace_apply
from .select import where
from .shape import reshape
from .smooth_activations import _number
from .unary import abs as _abs
from .util import check_float, check_number, check_tensor


class _Piecewise(Op):
    """An elementwise op whose gradient is ``gy * slope(x)`` on the pieces: subclasses give
    ``f(xp, x)`` and ``grad(xp, x, gy)`` (written with ``where``, so it records)."""
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x):
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return self.f(xp, x)

    def backward(self, xp, gy):
        return (self.grad(xp, self.saved[0], gy),)


class Hardtanh(_Piecewise):
    name = "hardtanh"

    def __init__(self, min_val, max_val, name=None):
        self.min_val, self.max_val = min_val, max_val
        if name is not None:
            self.name = name

    def f(self, xp, x):
        if x.dtype.kind in "iu":  # integer tensors: the bounds converted to integers (as PyTorch), no float pass
            return xp.clip(x.astype(numpy.int64), int(self.min_val), int(self.max_val)).astype(x.dtype)
        return xp.clip(x, self.min_val, self.max_val).astype(x.dtype, copy=False)

    def grad(self, xp, x, gy):
        inside = (x > self.min_val) & (x < self.max_val)
        return xp.where(inside, gy, xp.zeros_like(gy))


class Hardswish(_Piecewise):
    name = "hardswish"

    def f(self, xp, x):
        return x * xp.clip(x + 3, 0, 6) / 6

    def grad(self, xp, x, gy):
        zero = xp.zeros_like(gy)
        return xp.where(x <= -3, zero, xp.where(x < 3, gy * (x / 3 + 0.5), gy))


class Hardsigmoid(_Piecewise):
    name = "hardsigmoid"

    def f(self, xp, x):
        return xp.clip(x + 3, 0, 6) / 6

    def grad(self, xp, x, gy):
        return xp.where((x > -3) & (x < 3), gy / 6, xp.zeros_like(gy))


# ---- public functions -----------------------------------------------------------------
def _check_clampable(op, input):
    check_tensor(op, "input", input)
    if input.array.dtype.kind == "b":
        raise DTypeError(f"{op}: not implemented for bool tensors")


def _run(op, input, inplace, make):
    def compute(t):
        return make().apply(t)
    return inplace_apply(op + "_", input, compute) if inplace else compute(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(x, min_val, max_val)`` with gradient 1 strictly between the bounds, else 0.

    Args:
        input (Tensor): float or integer (an integer result carries no gradient), any shape.
        min_val (float): default -1. max_val (float): default 1.
        inplace (bool): write the result into ``input``. Default False.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        ArgumentError: ``min_val > max_val``, or a negative ``min_val`` for an unsigned
        tensor. ArgumentTypeError: not a Tensor, or a bound
        that is not a number. DTypeError: a bool tensor.
    """
    _check_clampable("hardtanh", input)
    lo, hi = _number("hardtanh", "min_val", min_val), _number("hardtanh", "max_val", max_val)
    if lo > hi:
        raise ArgumentError(f"hardtanh: min_val cannot be greater than max_val, got min_val={lo}, max_val={hi}")
    if input.array.dtype.kind == "u" and lo < 0:
        raise ArgumentError(f"hardtanh: cannot do hardtanh on an unsigned type ({input.dtype}) with negative "
                            f"limits (min_val={lo})")
    if input.array.dtype.kind in "iu" and not all(math.isfinite(v) for v in (lo, hi)):
        raise ArgumentError(f"hardtanh: the limits of an integer tensor must be finite, got min_val={lo}, "
                            f"max_val={hi}")
    return _run("hardtanh", input, inplace, lambda: Hardtanh(lo, hi))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`; returns ``input``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``: :func:`hardtanh` with bounds 0 and 6 (gradient 0 at 0 and 6).

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: a bool tensor.
    """
    _check_clampable("relu6", input)
    return _run("relu6", input, inplace, lambda: Hardtanh(0.0, 6.0, "relu6"))


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` elementwise (MobileNetV3).

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
    """
    check_float("hardswish", "input", input)
    return _run("hardswish", input, inplace, Hardswish)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6`` elementwise.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
    """
    check_float("hardsigmoid", "input", input)
    return _run("hardsigmoid", input, inplace, Hardsigmoid)


@autocast_op
def prelu(input, weight):
    """``x`` for ``x > 0``, else ``weight * x``, with one slope per channel (dim 1 of the
    input; an input of fewer than 2 dims has one channel) or one slope for all.

    Args:
        input (Tensor): float, any shape.
        weight (Tensor): float slopes, 0-d or 1-D with 1 or C elements.

    Returns:
        Tensor of the input's shape.

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: not floating point, or the weight's dtype differs from the input's
            (PyTorch does not promote either).
        ShapeError: weight has more than 1 dim, or a number of elements other than 1 or C.
    """
    check_float("prelu", "input", input)
    check_float("prelu", "weight", weight)
    if weight.ndim > 1:
        raise ShapeError(f"prelu: expected weight to be a scalar or 1-D tensor, got shape {weight.shape}")
    if weight.dtype != input.dtype:
        raise DTypeError(f"prelu: expected weight of the input's dtype {input.dtype}, got {weight.dtype}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    n = weight.numel()
    if n not in (1, channels):
        raise ShapeError(f"prelu: mismatch of parameter numbers and input channel size: weight has {n} "
                         f"elements, the input {tuple(input.shape)} has {channels} channel(s)")
    if n == 1:
        slope = reshape(weight, ())
    else:
        slope = reshape(weight, (channels,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, slope * input)


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
