"""Binary arithmetic with broadcasting: add, sub, mul, pow, and neg (with PyTorch's aliases
``multiply``, ``subtract``, ``negative`` and ``positive``); the shared machinery of the binary
ops (``_Binary``, ``_promote``, ``_run``). Division (div, floor_divide, remainder) is in
:mod:`tinynet.ops.division`, maximum/minimum in :mod:`tinynet.ops.compare_extrema`, where in
:mod:`tinynet.ops.select`.

Operands broadcast as in NumPy; the result dtype follows PyTorch's promotion
(:func:`tinynet.dtypes.result_type`): Python numbers do not widen a tensor of their kind,
integer tensors meeting a float number become the default float dtype, and true division
of integers is a float. Each backward sums the gradient back to its input's shape
(:func:`~tinynet.ops.util.unbroadcast`); the engine casts it to the input's dtype.

Derivatives: ``d(a*b) = b da + a db``, ``d(a/b) = da/b - a/b^2 db``,
``d(a^b) = b a^(b-1) da + a^b ln(a) db``, ``d rem(a, b) = da - floor(a/b) db``.
``add``, ``sub``, ``mul`` and ``neg`` take complex operands (``complex_ok``); their gradients
follow PyTorch's convention (``d(a*b)/da`` is taken as ``conj(b)``, docs/complex.md).

Differences from PyTorch: ``floor_divide`` has a zero gradient (PyTorch records it but
raises in backward); a uint8 tensor meeting an out-of-range Python int follows NumPy
(PyTorch wraps the int around).
"""
import math
import numbers

import numpy

from ..dtypes import is_floating
from .. import backend, dtypes
from ..autograd import Op
from ..autograd.order import recorded_inputs
from ..errors import ArgumentError, ArgumentTypeError, DTypeError
from ..kernels import add as add_kernel
from ..tensor import Tensor
from .autocast import autocast_op
from .util import array_of, check_tensor, operand, unbroadcast


_F32 = numpy.dtype(numpy.float32)


class _Binary(Op):
    """``a (op) b`` computed in ``dtype`` (the promoted result dtype); ``cast`` says
    whether an operand must be converted to it first."""
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, dtype, cast=True):
        self.dtype, self.cast = dtype, cast

    def _operands(self, a, b):
        if not self.cast:
            return a, b
        dt = self.dtype
        if hasattr(a, "dtype") and a.dtype != dt:
            a = backend.astype(a, dt)
        if hasattr(b, "dtype") and b.dtype != dt:
            b = backend.astype(b, dt)
        return a, b

    def shapes(self):
        """The shapes of the two inputs (None for a Python number), for unbroadcasting."""
        a, b = recorded_inputs(self)  # (a tensor's array shape: Tensor.shape would make a Size)
        return (a.array.shape if isinstance(a, Tensor) else getattr(a, "shape", None),
                b.array.shape if isinstance(b, Tensor) else getattr(b, "shape", None))


class Add(_Binary):
    name = "add"
    complex_ok = True  # linear: the gradient passes unchanged (conj(alpha) for a complex alpha)
    # a float32 tensor plus a bfloat16 one (autocast's residual adds) in one kernel on the GPU
    bf16_mixed_gpu = True
    edges_only = True  # backward reads only the inputs' shapes: their arrays are not kept (autograd.edges)

    def __init__(self, dtype, cast=True, alpha=1):
        self.dtype, self.cast, self.alpha = dtype, cast, alpha

    def forward(self, xp, a, b):
        if xp is not numpy and self.alpha == 1 and self.dtype == _F32 and backend.kernels_enabled:
            y = add_kernel.float32_sum(a, b)  # same shape and contiguous; a half operand widened inside
            if y is not None:
                return y
        a, b = self._operands(a, b)
        return a + b if self.alpha == 1 else a + b * self.alpha

    def backward(self, xp, gy):
        sa, sb = self.shapes()
        ga = _reduce(xp, gy, sa) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            gb = _reduce(xp, gy if self.alpha == 1 else gy * _conj(xp, self.alpha), sb)
        return ga, gb


class Sub(Add):
    name = "sub"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        return a - b if self.alpha == 1 else a - b * self.alpha

    def backward(self, xp, gy):
        sa, sb = self.shapes()
        ga = _reduce(xp, gy, sa) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            gb = _reduce(xp, -gy if self.alpha == 1 else gy * -_conj(xp, self.alpha), sb)
        return ga, gb


def _conj(xp, v):
    """``v``'s complex conjugate when it is complex (an array, tensor or number), else ``v``:
    the factor of a complex gradient (PyTorch takes ``d(a*b)/da`` as ``conj(b)``)."""
    if isinstance(v, complex):
        return v.conjugate()
    dt = getattr(v, "dtype", None)
    return xp.conj(v) if dt is not None and dt.kind == "c" else v


def _reduce(xp, g, shape):
    """The gradient summed to ``shape`` (None for a Python-number operand)."""
    if shape is None:
        return None
    return unbroadcast(xp, g, shape)


class Mul(_Binary):
    name = "mul"
    complex_ok = True

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        need_a, need_b = self.needs_input_grad
        self.saved = (a if need_b else None, b if need_a else None)
        return a * b

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        ga = _reduce(xp, gy * _conj(xp, b), sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, gy * _conj(xp, a), sb) if self.needs_input_grad[1] else None
        return ga, gb


class Pow(_Binary):
    name = "pow"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        if self.dtype.kind in "iu" and hasattr(b, "dtype"):
            y = _int_pow(xp, a, b).astype(self.dtype, copy=False)
        else:
            y = xp.asarray(a ** b).astype(self.dtype, copy=False)  # bool ** bool is int8 in NumPy
        self.save_for_backward(a, b, y if self.needs_input_grad[1] else None)
        return y

    def backward(self, xp, gy):
        a, b, y = self.saved
        sa, sb = self.shapes()
        ga = gb = None
        if self.needs_input_grad[0]:  # b a^(b-1), and 0 where b == 0 (PyTorch's rule: no 0 * inf)
            if hasattr(b, "shape"):
                ga = _reduce(xp, xp.where(b == 0, xp.zeros_like(gy), gy * b * a ** (b - 1)), sa)
            else:
                # NumPy's real a ** 1 is a, bit for bit: the square's gradient skips that pass
                same = b == 2 and xp is numpy and getattr(a, "dtype", None) is not None and a.dtype.kind in "fiu"
                ga = _reduce(xp, xp.zeros_like(gy) if b == 0 else gy * b * (a if same else a ** (b - 1)), sa)
        if self.needs_input_grad[1]:
            gb = _reduce(xp, _exponent_grad(xp, gy, a, b, y), sb)
        return ga, gb


def _int_pow(xp, a, b):
    """Integer ``a ** b`` for an exponent tensor as PyTorch (NumPy raises on negative exponents):
    ``b < 0`` gives 1 for base 1, +-1 for base -1, else 0 (``1 // a ** -b``)."""
    a, b = xp.asarray(a), xp.asarray(b)
    y = a ** xp.abs(b)
    return xp.where(b < 0, xp.where(xp.abs(a) == 1, y, xp.zeros_like(y)), y)


def _exponent_grad(xp, gy, a, b, y):
    """``gy a^b ln a``, 0 where ``a == 0`` and ``b >= 0`` (PyTorch's rule)."""
    if not hasattr(a, "shape"):  # a Python number as the base
        if a == 0:
            return xp.where(b >= 0, xp.zeros_like(gy), gy * y * -math.inf)
        return gy * y * (math.log(a) if a > 0 else math.nan)
    zero = (a == 0) & (b >= 0)
    log_a = xp.log(xp.where(zero, xp.ones_like(a), a))
    return xp.where(zero, xp.zeros_like(gy), gy * y * log_a)


class Neg(Op):
    name = "neg"
    complex_ok = True
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x):
        return -x

    def backward(self, xp, gy):
        return (-gy,)


# ---- public functions -----------------------------------------------------------------
def _promote(op, a, b):
    """Checked operands, PyTorch's result dtype of ``a (op) b``, and whether an operand
    must be cast to it (NumPy's own promotion would differ)."""
    if type(a) is Tensor:
        da = a.array.dtype
        if type(b) is Tensor:
            db = b.array.dtype
            if db == da:
                return a, b, da, False
            if a.array.ndim and b.array.ndim:  # two dimensioned tensors: PyTorch's promote_types of the two
                return a, b, dtypes.promote_types(da, db), True
        elif type(b) is float and is_floating(da) or type(b) is int and da.kind in "fiu":
            return a, b, da, False  # a Python number of a kind NumPy keeps weak, like PyTorch
    a, b = operand(op, a), operand(op, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise ArgumentTypeError(f"{op}: expected at least one Tensor operand, got {type(a).__name__} and "
                                f"{type(b).__name__}")
    dt = dtypes.result_type(array_of(a), array_of(b))
    cast = any(hasattr(v, "dtype") and v.dtype != dt for v in (array_of(a), array_of(b)))
    return a, b, dt, cast


def _check_alpha(op, alpha, dtype):
    """PyTorch's rules for ``alpha``: a number; no float alpha for an integer or bool result,
    a bool alpha only for a bool result. Returns alpha (a bool for a bool result)."""
    if type(alpha) is int and dtype.kind != "b":  # the default alpha=1: nothing to check
        return alpha
    if isinstance(alpha, Tensor) and alpha.array.size == 1:
        alpha = alpha.item()
    if not isinstance(alpha, (numbers.Number, numpy.number, numpy.bool_)):
        raise ArgumentTypeError(f"{op}: alpha must be a number, got {type(alpha).__name__}")
    if isinstance(alpha, (complex, numpy.complexfloating)) and dtype.kind != "c":
        raise DTypeError(f"{op}: for non-complex input tensors, alpha must not be a complex number, got {alpha}")
    is_bool = isinstance(alpha, (bool, numpy.bool_))
    if dtype.kind in "biu" and isinstance(alpha, (float, numpy.floating)):
        raise DTypeError(f"{op}: for integral input tensors, alpha must not be a float, got {alpha}")
    if is_bool and dtype.kind != "b":
        raise DTypeError(f"{op}: a bool alpha ({alpha}) is only supported for bool results, got {dtype}")
    return bool(alpha) if dtype.kind == "b" else alpha


def _is_bool(x):
    return isinstance(x, (bool, numpy.bool_)) or getattr(array_of(x), "dtype", None) == numpy.bool_


def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting and PyTorch's type promotion.

    Args:
        input, other: tensors or Python numbers.
        alpha (number): multiplier of ``other``. Default 1. Must not be a float when the
            result is an integer or bool tensor, nor a bool when it is not bool.

    Returns:
        Tensor of the broadcast shape (two bool tensors add to their logical OR).

    Raises:
        ShapeError: the shapes do not broadcast. DeviceMismatchError: cpu and cuda mixed.
        DTypeError: an alpha of the wrong kind. ArgumentTypeError: alpha is not a number.
    """
    a, b, dt, cast = _promote("add", input, other)
    alpha = _check_alpha("add", alpha, dt)
    return _run("add", Add(dt, cast, alpha), a, b)


def sub(input, other, *, alpha=1):
    """``input - alpha * other`` with broadcasting.

    Raises:
        DTypeError: an operand is bool (as PyTorch: use ``~`` or ``logical_not``), or an
            alpha of the wrong kind. ShapeError: shapes do not broadcast.
    """
    a, b, dt, cast = _promote("sub", input, other)
    if _is_bool(a) or _is_bool(b):
        raise DTypeError("sub: subtraction with a bool operand is not supported; to invert a mask use ~ or "
                         "logical_not")
    alpha = _check_alpha("sub", alpha, dt)
    return _run("sub", Sub(dt, cast, alpha), a, b)


def mul(input, other):
    """``input * other`` with broadcasting (two bool tensors multiply to their logical AND)."""
    a, b, dt, cast = _promote("mul", input, other)
    return _run("mul", Mul(dt, cast), a, b)


@autocast_op
def pow(input, exponent):
    """``input ** exponent``; ``d/da = b a^(b-1)`` (0 where b == 0), ``d/db = a^b ln a``
    (0 where a == 0 and b >= 0), as PyTorch.

    Raises:
        ArgumentError: an integer tensor to a negative integer power.
        DTypeError: bool base and bool exponent tensors (a bool tensor to a Python bool
            power is a bool tensor). ShapeError: shapes do not broadcast.
    """
    a, b, dt, _ = _promote("pow", input, exponent)
    if isinstance(b, numbers.Integral) and b < 0 and dt.kind in "iu":
        raise ArgumentError(f"pow: integers to negative integer powers are not allowed, got exponent {b}")
    if dt.kind == "b" and not (isinstance(a, Tensor) and isinstance(b, (bool, numpy.bool_))):
        raise DTypeError("pow: not implemented for a bool base with a bool exponent tensor")
    return _run("pow", Pow(dt), a, b)


def neg(input):
    """``-input``.

    Raises:
        DTypeError: a bool tensor (use ``~`` or ``logical_not``).
    """
    if isinstance(input, Tensor) and input.array.dtype.kind == "b":
        raise DTypeError("neg: negation of a bool tensor is not supported; use logical_not or ~")
    return Neg().apply(operand("neg", input))


negative = neg


def multiply(input, other):
    """An alias of :func:`tinynet.mul`."""
    return mul(input, other)


def subtract(input, other, *, alpha=1):
    """An alias of :func:`tinynet.sub`."""
    return sub(input, other, alpha=alpha)


def positive(input):
    """``input`` itself (PyTorch's unary plus); bool tensors are refused, as PyTorch does.

    Raises:
        ArgumentTypeError: not a Tensor, or a bool tensor.
    """
    check_tensor("positive", "input", input)
    if input.array.dtype.kind == "b":
        raise ArgumentTypeError("positive: the unary + operator does not support bool tensors")
    return input


def _run(op, fn, *args):
    """``fn.apply(*args)``; a broadcasting failure becomes a ShapeError naming ``op``."""
    try:
        return fn.apply(*args)
    except ValueError:
        _check_shapes(op, *args)
        raise


def _check_shapes(op, *xs):
    shapes = [x.shape for x in xs if isinstance(x, Tensor)]
    if len(shapes) > 1:
        try:
            numpy.broadcast_shapes(*shapes)
        except ValueError:
            from ..errors import ShapeError
            raise ShapeError(f"{op}: shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                             "broadcast together") from None
