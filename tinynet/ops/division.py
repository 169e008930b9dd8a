"""Division with broadcasting: ``div`` (true division, or rounded with ``rounding_mode``;
``divide`` and ``true_divide`` are aliases), ``floor_divide`` and ``remainder``, on the binary-op machinery of
:mod:`tinynet.ops.arith` (PyTorch's type promotion, gradients summed back to each input's
shape).

Derivatives: ``d(a/b) = da/b - a/b^2 db``, ``d rem(a, b) = da - floor(a/b) db``; the rounded
divisions have a zero gradient. True division takes complex operands, its gradients
conjugated as PyTorch's (``gy / conj(b)``, ``-gy conj(a / b^2)``).

Differences from PyTorch: ``floor_divide`` has a zero gradient (PyTorch records it but
raises in backward).
"""
import numpy

from .. import dtypes
from ..errors import ArgumentError, DTypeError
from .arith import _Binary, _conj, _promote, _reduce, _run
from .util import array_of


class Div(_Binary):
    name = "div"
    complex_ok = True

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.saved = (a if self.needs_input_grad[1] else None, b)
        return a / b

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        ga = _reduce(xp, gy / _conj(xp, b), sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, -gy * _conj(xp, a / (b * b)), sb) if self.needs_input_grad[1] else None
        return ga, gb


class Remainder(_Binary):
    """``a - floor(a / b) * b``: the result has the divisor's sign (Python's ``%``)."""
    name = "remainder"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.save_for_backward(a if self.needs_input_grad[1] else None, b if self.needs_input_grad[1] else None)
        return xp.remainder(a, b)

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        ga = _reduce(xp, gy, sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, -gy * xp.floor(a / b), sb) if self.needs_input_grad[1] else None
        return ga, gb


class RoundedDiv(_Binary):
    """Division rounded toward zero (``"trunc"``) or down (``"floor"``). Its derivative is
    zero almost everywhere; like PyTorch the result requires grad and gets zeros."""
    name = "div"

    def __init__(self, dtype, mode):
        self.dtype, self.cast, self.mode = dtype, True, mode

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        if self.dtype.kind in "iu":
            q = xp.floor_divide(a, b)
            if self.mode == "trunc":  # floor and trunc differ where the signs differ and it does not divide
                q = q + ((q < 0) & (xp.remainder(a, b) != 0))
        else:
            q = xp.floor(a / b) if self.mode == "floor" else xp.trunc(a / b)
        return xp.asarray(q).astype(self.dtype, copy=False)

    def backward(self, xp, gy):
        sa, sb = self.shapes()
        zero = xp.zeros_like(gy)
        return (_reduce(xp, zero, sa) if self.needs_input_grad[0] else None,
                _reduce(xp, zero, sb) if self.needs_input_grad[1] else None)


def div(input, other, *, rounding_mode=None):
    """``input / other`` with broadcasting.

    Args:
        rounding_mode: ``None`` (true division: integers give the default float dtype),
            ``"trunc"`` (round toward zero) or ``"floor"`` (round down, ``floor_divide``);
            the rounded forms keep the promoted dtype and have a zero gradient.

    Raises:
        ArgumentError: unknown rounding_mode; an integer division by zero (checked on the CPU).
        DTypeError: a rounded division of bools. ShapeError: shapes do not broadcast.
    """
    if rounding_mode not in (None, "trunc", "floor"):
        raise ArgumentError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b, dt, cast = _promote("div", input, other)
    if rounding_mode is None:
        fdt = dtypes.float_for(dt)
        return _run("div", Div(fdt, cast or fdt != dt), a, b)
    _integer_checks(f"div (rounding_mode={rounding_mode!r})", dt, b)
    return _run("div", RoundedDiv(dt, rounding_mode), a, b)


true_divide = div


def divide(input, other, *, rounding_mode=None):
    """An alias of :func:`tinynet.div`."""
    return div(input, other, rounding_mode=rounding_mode)


def _integer_checks(op, dt, divisor):
    """Bools cannot be divided (PyTorch raises too); integer division by zero raises
    (checked for CPU tensors only: on the GPU the check would wait for the device)."""
    if dt.kind == "b":
        raise DTypeError(f"{op}: not implemented for bool operands")
    if dt.kind in "iu":
        d = array_of(divisor)
        if (d == 0 if not hasattr(d, "shape") else isinstance(d, numpy.ndarray) and not d.all()):
            raise ArgumentError(f"{op}: integer division by zero")


def floor_divide(input, other):
    """``floor(input / other)`` elementwise (``//``); its gradient is zero (PyTorch's raises).

    Raises:
        As :func:`div` with ``rounding_mode="floor"``.
    """
    return div(input, other, rounding_mode="floor")


def remainder(input, other):
    """Elementwise ``input mod other`` with the divisor's sign (Python's ``%``);
    ``d/dinput = 1``, ``d/dother = -floor(input / other)``.

    Raises:
        DTypeError: bool operands. ArgumentError: integer division by zero (on the CPU).
        ShapeError: shapes do not broadcast.
    """
    a, b, dt, _ = _promote("remainder", input, other)
    _integer_checks("remainder", dt, b)
    return _run("remainder", Remainder(dt), a, b)
