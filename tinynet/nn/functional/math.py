"""Elementwise arithmetic, reductions and comparisons, with their gradients.

Binary ops follow NumPy broadcasting; each backward sums the incoming gradient back to
the shape of its input (:func:`tinynet.autograd.unbroadcast`). Python scalars stay
"weak": ``x * 2.0`` keeps ``x``'s dtype, as in NumPy 2 and PyTorch.
"""
import numbers

import numpy

from ...autograd import Function, unbroadcast
from ...errors import DTypeError, ShapeError
from ...creation import tensor as _tensor
from ...tensor import Tensor


def _shape(a):
    return a.shape if hasattr(a, "shape") else ()


def _grad_for(xp, g, a):
    """Reduce ``g`` to ``a``'s shape and dtype (None when ``a`` is a Python scalar)."""
    if not hasattr(a, "shape"):
        return None
    g = unbroadcast(xp, g, a.shape)
    return g.astype(a.dtype, copy=False) if g.dtype != a.dtype else g


def _operand(op, x):
    if isinstance(x, Tensor) or isinstance(x, numbers.Number):
        return x
    if hasattr(x, "shape"):
        return _tensor(x, device=None)
    raise TypeError(f"{op}: unsupported operand type {type(x).__name__}")


class _Binary(Function):
    __slots__ = ()

    def forward(self, xp, a, b):
        self.saved = (a, b)
        return self.compute(xp, a, b)


class Add(_Binary):
    name = "add"
    compute = staticmethod(lambda xp, a, b: a + b)

    def backward(self, xp, gy):
        a, b = self.saved
        return _grad_for(xp, gy, a), _grad_for(xp, gy, b)


class Sub(_Binary):
    name = "sub"
    compute = staticmethod(lambda xp, a, b: a - b)

    def backward(self, xp, gy):
        a, b = self.saved
        gb = _grad_for(xp, -gy, b) if self.needs_input_grad[1] else None
        return _grad_for(xp, gy, a), gb


class Mul(_Binary):
    name = "mul"
    compute = staticmethod(lambda xp, a, b: a * b)

    def backward(self, xp, gy):
        a, b = self.saved
        ga = _grad_for(xp, gy * b, a) if self.needs_input_grad[0] else None
        gb = _grad_for(xp, gy * a, b) if self.needs_input_grad[1] else None
        return ga, gb


class Div(_Binary):
    name = "div"
    compute = staticmethod(lambda xp, a, b: a / b)

    def backward(self, xp, gy):
        a, b = self.saved
        ga = _grad_for(xp, gy / b, a) if self.needs_input_grad[0] else None
        gb = _grad_for(xp, -gy * a / (b * b), b) if self.needs_input_grad[1] else None
        return ga, gb


class Pow(_Binary):
    name = "pow"

    def forward(self, xp, a, b):
        y = a ** b
        self.saved = (a, b, y)
        return y

    def backward(self, xp, gy):
        a, b, y = self.saved
        ga = _grad_for(xp, gy * b * a ** (b - 1), a) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            gb = _grad_for(xp, gy * y * xp.log(a), b)
        return ga, gb


class Remainder(_Binary):
    """``a - floor(a / b) * b`` (Python's/PyTorch's sign convention: the result has b's sign)."""
    name = "remainder"
    compute = staticmethod(lambda xp, a, b: xp.remainder(a, b))

    def backward(self, xp, gy):
        a, b = self.saved
        ga = _grad_for(xp, gy, a) if self.needs_input_grad[0] else None
        gb = _grad_for(xp, -gy * xp.floor(a / b), b) if self.needs_input_grad[1] else None
        return ga, gb


class MatMul(Function):
    name = "matmul"

    def forward(self, xp, a, b):
        self.saved = (a, b)
        return a @ b

    def backward(self, xp, gy):
        a, b = self.saved
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        g = gy
        if a.ndim == 1:
            g = xp.expand_dims(g, -2)
        if b.ndim == 1:
            g = xp.expand_dims(g, -1)
        ga = gb = None
        if self.needs_input_grad[0]:
            ga = unbroadcast(xp, g @ xp.swapaxes(b2, -1, -2), a2.shape).reshape(a.shape)
        if self.needs_input_grad[1]:
            gb = unbroadcast(xp, xp.swapaxes(a2, -1, -2) @ g, b2.shape).reshape(b.shape)
        return ga, gb


class _Unary(Function):
    __slots__ = ()


class Neg(_Unary):
    name = "neg"

    def forward(self, xp, x):
        return -x

    def backward(self, xp, gy):
        return (-gy,)


class Exp(_Unary):
    name = "exp"

    def forward(self, xp, x):
        y = xp.exp(x)
        self.saved = y
        return y

    def backward(self, xp, gy):
        return (gy * self.saved,)


class Log(_Unary):
    name = "log"

    def forward(self, xp, x):
        self.saved = x
        return xp.log(x)

    def backward(self, xp, gy):
        return (gy / self.saved,)


class Sqrt(_Unary):
    name = "sqrt"

    def forward(self, xp, x):
        y = xp.sqrt(x)
        self.saved = y
        return y

    def backward(self, xp, gy):
        return (gy / (2 * self.saved),)


class Abs(_Unary):
    name = "abs"

    def forward(self, xp, x):
        self.saved = x
        return xp.abs(x)

    def backward(self, xp, gy):
        return (gy * xp.sign(self.saved),)


class Clamp(_Unary):
    name = "clamp"

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def forward(self, xp, x):
        self.saved = x
        return xp.clip(x, self.lo, self.hi)

    def backward(self, xp, gy):
        x = self.saved
        keep = xp.ones(x.shape, dtype=bool)
        if self.lo is not None:
            keep &= x >= self.lo
        if self.hi is not None:
            keep &= x <= self.hi
        return (gy * keep,)


class _Extremum(_Binary):
    """maximum/minimum; on ties the gradient is split evenly (as PyTorch does)."""

    def backward(self, xp, gy):
        a, b = self.saved
        win = (a > b) if self.name == "maximum" else (a < b)
        tie = (a == b) * 0.5
        wa = win + tie
        ga = _grad_for(xp, gy * wa, a) if self.needs_input_grad[0] else None
        gb = _grad_for(xp, gy * (1 - wa), b) if self.needs_input_grad[1] else None
        return ga, gb


class Maximum(_Extremum):
    name = "maximum"
    compute = staticmethod(lambda xp, a, b: xp.maximum(a, b))


class Minimum(_Extremum):
    name = "minimum"
    compute = staticmethod(lambda xp, a, b: xp.minimum(a, b))


class Where(Function):
    name = "where"

    def forward(self, xp, cond, a, b):
        self.saved = (cond, a, b)
        return xp.where(cond, a, b)

    def backward(self, xp, gy):
        cond, a, b = self.saved
        ga = _grad_for(xp, gy * cond, a) if self.needs_input_grad[1] else None
        gb = _grad_for(xp, gy * ~cond, b) if self.needs_input_grad[2] else None
        return None, ga, gb


class Cast(_Unary):
    name = "cast"

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, x):
        self.saved = x.dtype
        return x.astype(self.dtype)

    def backward(self, xp, gy):
        return (gy.astype(self.saved),)


class ToDevice(_Unary):
    name = "to_device"

    def __init__(self, device):
        self.device = device

    def forward(self, xp, x):
        from ... import backend
        self.saved = backend.device_of(x)
        return backend.to_device(x, self.device)

    def backward(self, xp, gy):
        from ... import backend
        return (backend.to_device(gy, self.saved),)




# ---- public functions -----------------------------------------------------------------
def add(a, b):
    """``a + b`` with broadcasting."""
    return Add().apply(_operand("add", a), _operand("add", b))


def sub(a, b):
    """``a - b`` with broadcasting."""
    return Sub().apply(_operand("sub", a), _operand("sub", b))


def mul(a, b):
    """``a * b`` with broadcasting."""
    return Mul().apply(_operand("mul", a), _operand("mul", b))


def div(a, b):
    """``a / b`` with broadcasting (true division)."""
    return Div().apply(_operand("div", a), _operand("div", b))


def pow(a, b):
    """``a ** b``; d/da = b a^(b-1), d/db = a^b log a."""
    return Pow().apply(_operand("pow", a), _operand("pow", b))


def remainder(a, b):
    """Elementwise ``a mod b`` with the divisor's sign (PyTorch's ``remainder``, Python's ``%``);
    d/da = 1, d/db = -floor(a / b)."""
    return Remainder().apply(_operand("remainder", a), _operand("remainder", b))


def floor_divide(a, b):
    """Elementwise ``floor(a / b)`` (not differentiable: its gradient is zero almost everywhere)."""
    from ... import backend
    a, b = _operand("floor_divide", a), _operand("floor_divide", b)
    av, bv = (a.data if isinstance(a, Tensor) else a), (b.data if isinstance(b, Tensor) else b)
    xp = backend.common_module("floor_divide", [v for v in (av, bv) if hasattr(v, "shape")])
    return Tensor._wrap(xp.floor_divide(av, bv))


def matmul(a, b):
    """Matrix product with NumPy's ``@`` rules (1-D operands, batched broadcasting).

    Raises:
        ShapeError: inner dimensions differ, e.g. ``(64, 784) @ (320, 50)``.
    """
    a, b = _operand("matmul", a), _operand("matmul", b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul: both operands must be tensors or arrays")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must be at least 1-D, got shapes {a.shape} and {b.shape}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ShapeError(f"matmul: inner dimensions must match, got shapes {a.shape} and {b.shape}")
    return MatMul().apply(a, b)


def neg(x):
    return Neg().apply(x)


def exp(x):
    """Elementwise ``e**x``."""
    return Exp().apply(x)


def log(x):
    """Elementwise natural logarithm."""
    return Log().apply(x)


def sqrt(x):
    """Elementwise square root."""
    return Sqrt().apply(x)


def abs(x):
    """Elementwise absolute value (gradient ``sign(x)``, 0 at 0)."""
    return Abs().apply(x)


def clamp(x, min=None, max=None):
    """Clip ``x`` to ``[min, max]``; the gradient passes where ``min <= x <= max``.

    Raises:
        ValueError: both bounds are None.
    """
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    return Clamp(min, max).apply(x)


def maximum(a, b):
    """Elementwise maximum of two tensors (gradient split evenly on ties)."""
    return Maximum().apply(_operand("maximum", a), _operand("maximum", b))


def minimum(a, b):
    """Elementwise minimum of two tensors (gradient split evenly on ties)."""
    return Minimum().apply(_operand("minimum", a), _operand("minimum", b))


def where(condition, a, b):
    """Pick ``a`` where ``condition`` is true, else ``b`` (broadcasting all three)."""
    cond = condition.data if isinstance(condition, Tensor) else condition
    if getattr(cond, "dtype", None) != numpy.bool_:
        raise DTypeError(f"where: condition must be a bool tensor, got {getattr(cond, 'dtype', type(cond))}")
    return Where().apply(cond, _operand("where", a), _operand("where", b))


_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def compare(kind, a, b):
    """Elementwise comparison returning a bool tensor (never differentiable)."""
    from ... import backend
    av = a.data if isinstance(a, Tensor) else a
    bv = b.data if isinstance(b, Tensor) else b
    arrays = [v for v in (av, bv) if hasattr(v, "shape")]
    xp = backend.common_module(kind, arrays)
    return Tensor._wrap(getattr(xp, _COMPARE[kind])(av, bv))
