"""Elementwise maxima and minima, PyTorch's comparison family: ``maximum``, ``minimum``
(with broadcasting and PyTorch's type promotion, see :mod:`tinynet.ops.arith`) and
``fmax``, ``fmin``, which ignore NaN.

Gradients: ``maximum`` and ``minimum`` send ``gy`` to the larger/smaller input, split evenly
on ties (as PyTorch does). ``fmax(a, b) = b if a is NaN or b > a else a`` (``fmin`` alike),
composed of :func:`~tinynet.where`: the gradient goes to ``a`` where ``a >= b`` or ``b`` is
NaN (ties to ``a``), else to ``b``, as PyTorch's.

Difference from PyTorch: ``maximum``/``minimum`` also take a Python number for either
operand (PyTorch's take tensors only).
"""
from .arith import _Binary, _promote, _run
from .compare import isnan
from .select import where
from .util import check_tensor, grad_for


class _Extremum(_Binary):
    """maximum/minimum; on ties the gradient is split evenly (as PyTorch does)."""

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.save_for_backward(a, b)
        return self.compute(xp, a, b)

    def backward(self, xp, gy):
        a, b = self.saved
        win = (a > b) if self.name == "maximum" else (a < b)
        share = xp.where(win, xp.ones_like(gy), xp.where(a == b, xp.ones_like(gy) * 0.5, xp.zeros_like(gy)))
        ga = grad_for(xp, gy * share, a) if self.needs_input_grad[0] else None
        gb = grad_for(xp, gy * (1 - share), b) if self.needs_input_grad[1] else None
        return ga, gb


class Maximum(_Extremum):
    name = "maximum"
    compute = staticmethod(lambda xp, a, b: xp.maximum(a, b))


class Minimum(_Extremum):
    name = "minimum"
    compute = staticmethod(lambda xp, a, b: xp.minimum(a, b))


def maximum(input, other):
    """Elementwise maximum (gradient split evenly on ties)."""
    a, b, dt, _ = _promote("maximum", input, other)
    return _run("maximum", Maximum(dt), a, b)


def minimum(input, other):
    """Elementwise minimum (gradient split evenly on ties)."""
    a, b, dt, _ = _promote("minimum", input, other)
    return _run("minimum", Minimum(dt), a, b)


def _tensors(op, input, other):
    check_tensor(op, "input", input)
    check_tensor(op, "other", other)


def fmax(input, other):
    """Elementwise maximum that ignores NaN: NaN only where both are NaN. The two broadcast
    and promote as in :func:`tinynet.maximum`.

    Raises:
        ArgumentTypeError: an argument is not a Tensor (PyTorch takes tensors only).
        ShapeError: the shapes do not broadcast.
    """
    _tensors("fmax", input, other)
    return where((input >= other) | isnan(other), input, other)


def fmin(input, other):
    """Elementwise minimum that ignores NaN: NaN only where both are NaN.

    Raises:
        ArgumentTypeError: an argument is not a Tensor (PyTorch takes tensors only).
        ShapeError: the shapes do not broadcast.
    """
    _tensors("fmin", input, other)
    return where((input <= other) | isnan(other), input, other)
