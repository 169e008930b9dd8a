"""Elementwise functions of two tensors beyond arithmetic, on the binary-op machinery of
:mod:`tinynet.ops.arith` (PyTorch's type promotion, broadcasting, gradients summed back to
each input's shape): ``atan2``, ``hypot``, ``logaddexp``, ``fmod``; and ``logaddexp2``,
``float_power``, ``lerp``, ``addcmul``, ``addcdiv``, composed of other ops.

Derivatives (``r = a^2 + b^2``): ``atan2(a, b)``: ``da = b / r``, ``db = -a / r``;
``hypot``: ``da = a / h``, ``db = b / h``; ``logaddexp``: ``da = 1 / (1 + e^(b - a))``,
``db = 1 / (1 + e^(a - b))``; ``fmod(a, b) = a - trunc(a / b) b`` (the dividend's sign):
``da = 1``, ``db = -trunc(a / b)``. ``lerp(s, e, w) = s + w (e - s)``.
``logaddexp2(a, b) = log2(2^a + 2^b) = logaddexp(a ln 2, b ln 2) / ln 2``;
``float_power(a, b) = a^b`` computed in float64.
"""
import math
import numbers

import numpy

from .. import dtypes
from ..errors import ArgumentTypeError, DTypeError
from ..tensor import Tensor
from .arith import _Binary, _promote, _reduce, _run, add, mul, pow as _pow, sub
from .division import _integer_checks, div
from .util import check_operands, check_tensor

_LN2 = math.log(2.0)


class Atan2(_Binary):
    name = "atan2"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.save_for_backward(a, b)
        return xp.arctan2(a, b)

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        r = a * a + b * b
        return (_reduce(xp, gy * b / r, sa) if self.needs_input_grad[0] else None,
                _reduce(xp, -gy * a / r, sb) if self.needs_input_grad[1] else None)


class Hypot(_Binary):
    name = "hypot"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        h = xp.hypot(a, b)
        self.save_for_backward(a, b, h)
        return h

    def backward(self, xp, gy):
        a, b, h = self.saved
        sa, sb = self.shapes()
        return (_reduce(xp, gy * a / h, sa) if self.needs_input_grad[0] else None,
                _reduce(xp, gy * b / h, sb) if self.needs_input_grad[1] else None)


class LogAddExp(_Binary):
    name = "logaddexp"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.save_for_backward(a, b)
        return xp.logaddexp(a, b)

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        return (_reduce(xp, gy / (1 + xp.exp(b - a)), sa) if self.needs_input_grad[0] else None,
                _reduce(xp, gy / (1 + xp.exp(a - b)), sb) if self.needs_input_grad[1] else None)


class Fmod(_Binary):
    """``a - trunc(a / b) * b``: the result has the dividend's sign (C's ``fmod``)."""
    name = "fmod"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.save_for_backward(a if self.needs_input_grad[1] else None, b if self.needs_input_grad[1] else None)
        return xp.fmod(a, b)

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        ga = _reduce(xp, gy, sa) if self.needs_input_grad[0] else None
        if not self.needs_input_grad[1]:
            return ga, None
        q = a / b
        return ga, _reduce(xp, -gy * (xp.floor(xp.abs(q)) * xp.sign(q)), sb)


def _float_binary(op, cls, input, other, floats_only=False):
    a, b, dt, cast = _promote(op, input, other)
    if floats_only and dt.kind != "f":  # PyTorch's kernels have no integer version either
        raise DTypeError(f"{op}: not implemented for {dt} operands; cast them to a floating dtype first")
    fdt = dtypes.float_for(dt)
    return _run(op, cls(fdt, cast or fdt != dt), a, b)


def atan2(input, other):
    """Elementwise ``atan(input / other)`` in the right quadrant (radians, in [-pi, pi]);
    integers give the default float dtype. ``arctan2`` is the same function.

    Raises:
        ArgumentTypeError: neither operand is a Tensor.
        ShapeError: shapes do not broadcast.
    """
    return _float_binary("atan2", Atan2, input, other)


arctan2 = atan2


def hypot(input, other):
    """Elementwise ``sqrt(input^2 + other^2)`` without overflow in the squares.

    Raises:
        ArgumentTypeError: neither operand is a Tensor.
        DTypeError: integer or bool operands (as PyTorch).
        ShapeError: shapes do not broadcast.
    """
    return _float_binary("hypot", Hypot, input, other, floats_only=True)


def logaddexp(input, other):
    """Elementwise ``log(exp(input) + exp(other))``, computed without overflow.

    Raises:
        ArgumentTypeError: neither operand is a Tensor.
        DTypeError: integer or bool operands (as PyTorch).
        ShapeError: shapes do not broadcast.
    """
    return _float_binary("logaddexp", LogAddExp, input, other, floats_only=True)


def logaddexp2(input, other):
    """Elementwise ``log2(2**input + 2**other)``, computed without overflow.

    Raises:
        ArgumentTypeError: neither operand is a Tensor, or one is neither a Tensor nor a number.
        DTypeError: integer or bool operands (as PyTorch).
        ShapeError: the shapes do not broadcast.
    """
    check_operands("logaddexp2", input, other)
    for v in (input, other):
        if isinstance(v, Tensor) and not dtypes.is_floating(v.array.dtype):
            raise DTypeError(f"logaddexp2: not implemented for {v.dtype} operands; cast them to a floating dtype")
    a = mul(input, _LN2) if isinstance(input, Tensor) else input * _LN2
    b = mul(other, _LN2) if isinstance(other, Tensor) else other * _LN2
    return div(logaddexp(a, b), _LN2)


def float_power(input, exponent):
    """``input ** exponent`` in double precision: the result is float64 whatever the
    operands' dtypes (PyTorch's ``float_power``). Either may be a Python number.

    Raises:
        ArgumentTypeError: neither is a Tensor, or one is neither a Tensor nor a number.
    """
    check_operands("float_power", input, exponent, ("input", "exponent"))
    return _pow(*(v.to(dtypes.complex128 if v.is_complex() else dtypes.float64) if isinstance(v, Tensor) else float(v)
                  for v in (input, exponent)))  # (pow refuses complex tensors)


def fmod(input, other):
    """Elementwise remainder with the dividend's sign (C's ``fmod``; :func:`remainder` takes
    the divisor's). ``d/dinput = 1``, ``d/dother = -trunc(input / other)``.

    Raises:
        DTypeError: bool operands.
        ArgumentError: integer division by zero (checked on the CPU).
        ShapeError: shapes do not broadcast.
    """
    a, b, dt, _ = _promote("fmod", input, other)
    _integer_checks("fmod", dt, b)
    return _run("fmod", Fmod(dt), a, b)


def _number_or_tensor(op, name, v):
    if not isinstance(v, (Tensor, numbers.Number, numpy.number)) or isinstance(v, bool):
        raise ArgumentTypeError(f"{op}: {name} must be a number or a Tensor, got {type(v).__name__}")
    return v


def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)`` (all three broadcast).

    Args:
        input, end (Tensor): the start and end points.
        weight (float or Tensor): 0 gives ``input``, 1 gives ``end``.

    Raises:
        ArgumentTypeError: ``input``/``end`` not Tensors, or a weight that is neither a
            number nor a Tensor.
        ShapeError: shapes do not broadcast.
    """
    check_tensor("lerp", "input", input)
    check_tensor("lerp", "end", end)
    return add(input, mul(_number_or_tensor("lerp", "weight", weight), sub(end, input)))


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (broadcast).

    Raises:
        ArgumentTypeError: a non-Tensor operand or a non-number ``value``.
        ShapeError: shapes do not broadcast.
    """
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_tensor("addcmul", name, t)
    _number_or_tensor("addcmul", "value", value)
    return add(input, mul(mul(tensor1, tensor2), value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (broadcast; true division).

    Raises:
        ArgumentTypeError: a non-Tensor operand or a non-number ``value``.
        ShapeError: shapes do not broadcast.
    """
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_tensor("addcdiv", name, t)
    _number_or_tensor("addcdiv", "value", value)
    return add(input, mul(div(tensor1, tensor2), value))
