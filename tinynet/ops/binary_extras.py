"""Elementwise functions composed of other ops, so their gradients follow from those ops':
``fmax``/``fmin`` (maximum/minimum that ignore NaN), ``copysign``, ``logaddexp2``,
``float_power``, ``heaviside``; and ``signbit``, ``sgn``, ``fix``, with their Tensor methods.

Math (PyTorch's definitions): ``fmax(a, b) = b if a is NaN or b > a else a`` (``fmin``
alike); the gradient goes to ``a`` where ``a >= b`` or ``b`` is NaN (ties to ``a``), else to
``b``, as PyTorch's. ``copysign(a, b) = |a|`` with the sign bit of ``b`` (``d/da = +-sign(a)``,
0 at ``a = 0``; ``d/db = 0``). ``logaddexp2(a, b) = log2(2^a + 2^b) = logaddexp(a ln 2, b ln 2)
/ ln 2``. ``float_power(a, b) = a^b`` computed in float64. ``heaviside(x, v)`` is 0 for
``x < 0``, ``v`` at ``x = 0``, 1 for ``x > 0`` (0 for NaN, as PyTorch's kernel).
"""
import math

from .. import backend, dtypes
from ..dtypes import is_floating
from ..errors import ArgumentTypeError, DTypeError
from ..tensor import Tensor
from .arith import _Binary, _reduce, mul, pow as _pow
from .binary_math import _float_binary, logaddexp
from .compare import isnan
from .division import div
from .inplace import composed_method
from .select import where
from .unary import sign, trunc
from .util import check_real, check_tensor

_LN2 = math.log(2.0)


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


def signbit(input):
    """True where the sign bit is set (negative numbers, ``-0.0``, negative NaNs): a bool
    tensor, no gradient.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_real("signbit", "input", check_tensor("signbit", "input", input))
    a = input.array
    xp = backend.array_module(a)
    return Tensor._wrap(xp.signbit(a) if a.dtype.kind != "b" else xp.zeros(a.shape, dtype=bool))


class CopySign(_Binary):
    name = "copysign"
    twice_differentiable = False

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        y = xp.copysign(a, b)
        self.save_for_backward(a, y)
        return y

    def backward(self, xp, gy):
        a, y = self.saved
        sa, sb = self.shapes()
        ga = gb = None
        if self.needs_input_grad[0]:  # +-1 where a != 0 (the sign a keeps or flips), 0 at a = 0
            nonzero = a != 0
            ga = _reduce(xp, gy * xp.where(nonzero, y / xp.where(nonzero, a, 1), 0), sa)
        if self.needs_input_grad[1]:
            gb = xp.zeros(sb, dtype=gy.dtype)
        return ga, gb


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (its sign bit, so ``-0.0`` counts as negative);
    either may be a Python number; they broadcast; integers give the default float.

    Raises:
        ArgumentTypeError: neither is a Tensor, or one is neither a Tensor nor a number.
        ShapeError: the shapes do not broadcast.
    """
    return _float_binary("copysign", CopySign, input, other)


def logaddexp2(input, other):
    """Elementwise ``log2(2**input + 2**other)``, computed without overflow.

    Raises:
        ArgumentTypeError: neither operand is a Tensor, or one is neither a Tensor nor a number.
        DTypeError: integer or bool operands (as PyTorch).
        ShapeError: the shapes do not broadcast.
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise ArgumentTypeError(f"logaddexp2: expected at least one Tensor, got {type(input).__name__} and "
                                f"{type(other).__name__}")
    for name, v in (("input", input), ("other", other)):
        if isinstance(v, Tensor):
            if not is_floating(v.array.dtype):
                raise DTypeError(f"logaddexp2: not implemented for {v.dtype} operands; cast them to a floating dtype")
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ArgumentTypeError(f"logaddexp2: {name} must be a Tensor or a number, got {type(v).__name__}")
    a = mul(input, _LN2) if isinstance(input, Tensor) else input * _LN2
    b = mul(other, _LN2) if isinstance(other, Tensor) else other * _LN2
    return div(logaddexp(a, b), _LN2)


def float_power(input, exponent):
    """``input ** exponent`` in double precision: the result is float64 whatever the
    operands' dtypes (PyTorch's ``float_power``). Either may be a Python number.

    Raises:
        ArgumentTypeError: neither is a Tensor, or one is neither a Tensor nor a number.
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise ArgumentTypeError(f"float_power: expected at least one Tensor, got {type(input).__name__} and "
                                f"{type(exponent).__name__}")
    args = []
    for name, v in (("input", input), ("exponent", exponent)):
        if isinstance(v, Tensor):
            args.append(v.to(dtypes.complex128 if v.is_complex() else dtypes.float64))  # (pow refuses complex)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            args.append(float(v))
        else:
            raise ArgumentTypeError(f"float_power: {name} must be a Tensor or a number, got {type(v).__name__}")
    return _pow(*args)


def heaviside(input, values):
    """The Heaviside step: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where
    ``input > 0`` (0 for NaN). ``values`` broadcasts against ``input``. PyTorch has no
    derivative for it (backward raises there); here the result carries no gradient.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        DTypeError: ``input`` and ``values`` have different dtypes (as PyTorch).
        ShapeError: the shapes do not broadcast.
    """
    check_tensor("heaviside", "input", input)
    check_tensor("heaviside", "values", values)
    if input.dtype != values.dtype:
        raise DTypeError(f"heaviside: input and values must have the same dtype, got {input.dtype} and "
                         f"{values.dtype}")
    x, v = input.detach(), values.detach()
    return where(x == 0, v, (x > 0).to(x.dtype))


def sgn(input):
    """The sign of each element (-1, 0 or 1; NaN stays NaN): :func:`tinynet.sign` for real
    tensors (PyTorch's ``sgn`` differs only on complex ones, which tinynet does not have).

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return sign(input)


def fix(input):
    """Rounds toward zero: :func:`tinynet.trunc` under NumPy's name.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return trunc(input)


_float_power_composed = composed_method("float_power_", float_power)


def _float_power_(self, exponent):
    """In-place :func:`float_power`; the tensor must be float64 already (PyTorch refuses to
    write the float64 result into another dtype)."""
    if self.array.dtype != dtypes.float64:
        raise DTypeError(f"float_power_: the base has dtype {self.dtype}, but the result is float64; call "
                         "float_power_ on a float64 tensor (as PyTorch)")
    return _float_power_composed(self, exponent)


METHODS = {"fmax": fmax, "fmin": fmin, "signbit": signbit, "copysign": copysign, "logaddexp2": logaddexp2,
           "float_power": float_power, "heaviside": heaviside, "sgn": sgn, "fix": fix,
           "float_power_": _float_power_,
           **{f"{n}_": composed_method(f"{n}_", f) for n, f in (("copysign", copysign), ("heaviside", heaviside),
                                                                 ("sgn", sgn), ("fix", fix))}}
