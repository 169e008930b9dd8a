"""Binary arithmetic with broadcasting: add, sub, mul, div, pow, remainder, floor_divide,
maximum, minimum, where, and neg.

Operands broadcast as in NumPy; the result dtype follows PyTorch's promotion
(:func:`tinynet.dtypes.result_type`): Python numbers do not widen a tensor of their kind,
integer tensors meeting a float number become the default float dtype, and true division
of integers is a float. Each backward sums the gradient back to its input's shape
(:func:`~tinynet.ops.util.unbroadcast`); the engine casts it to the input's dtype.

Derivatives: ``d(a*b) = b da + a db``, ``d(a/b) = da/b - a/b^2 db``,
``d(a^b) = b a^(b-1) da + a^b ln(a) db``, ``d rem(a, b) = da - floor(a/b) db``.
"""
import numbers

import numpy

from .. import backend, dtypes
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError
from ..tensor import Tensor
from .util import array_of, operand


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
            a = a.astype(dt)
        if hasattr(b, "dtype") and b.dtype != dt:
            b = b.astype(dt)
        return a, b

    def shapes(self):
        """The shapes of the two inputs (None for a Python number), for unbroadcasting."""
        a, b = self.inputs
        return getattr(a, "shape", None), getattr(b, "shape", None)


class Add(_Binary):
    name = "add"

    def __init__(self, dtype, cast=True, alpha=1):
        self.dtype, self.cast, self.alpha = dtype, cast, alpha

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        return a + b if self.alpha == 1 else a + b * self.alpha

    def backward(self, xp, gy):
        sa, sb = self.shapes()
        ga = _reduce(xp, gy, sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, gy if self.alpha == 1 else gy * self.alpha, sb) if self.needs_input_grad[1] else None
        return ga, gb


class Sub(Add):
    name = "sub"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        return a - b if self.alpha == 1 else a - b * self.alpha

    def backward(self, xp, gy):
        sa, sb = self.shapes()
        ga = _reduce(xp, gy, sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, -gy if self.alpha == 1 else gy * -self.alpha, sb) if self.needs_input_grad[1] else None
        return ga, gb


def _reduce(xp, g, shape):
    """The gradient summed to ``shape`` (None for a Python-number operand)."""
    if shape is None:
        return None
    from .util import unbroadcast
    return unbroadcast(xp, g, shape)


class Mul(_Binary):
    name = "mul"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        need_a, need_b = self.needs_input_grad
        self.saved = (a if need_b else None, b if need_a else None)
        return a * b

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        ga = _reduce(xp, gy * b, sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, gy * a, sb) if self.needs_input_grad[1] else None
        return ga, gb


class Div(_Binary):
    name = "div"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        self.saved = (a if self.needs_input_grad[1] else None, b)
        return a / b

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes()
        ga = _reduce(xp, gy / b, sa) if self.needs_input_grad[0] else None
        gb = _reduce(xp, -gy * a / (b * b), sb) if self.needs_input_grad[1] else None
        return ga, gb


class Pow(_Binary):
    name = "pow"

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        y = a ** b
        self.save_for_backward(a, b, y if self.needs_input_grad[1] else None)
        return y

    def backward(self, xp, gy):
        a, b, y = self.saved
        sa, sb = self.shapes()
        ga = gb = None
        if self.needs_input_grad[0]:
            ga = _reduce(xp, gy * b * a ** (b - 1), sa)
        if self.needs_input_grad[1]:
            # d/db a^b = a^b ln a; PyTorch takes 0 where a == 0 (and b >= 0) instead of nan
            ga_log = xp.where(a == 0, xp.zeros_like(a), xp.log(xp.where(a == 0, xp.ones_like(a), a)))
            gb = _reduce(xp, gy * y * ga_log, sb)
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


class Neg(Op):
    name = "neg"
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
            if b.array.dtype == da:
                return a, b, da, False
        elif type(b) is float and da.kind == "f" or type(b) is int and da.kind in "fiu":
            return a, b, da, False  # a Python number of a kind NumPy keeps weak, like PyTorch
    a, b = operand(op, a), operand(op, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise ArgumentTypeError(f"{op}: expected at least one Tensor operand, got {type(a).__name__} and "
                                f"{type(b).__name__}")
    dt = dtypes.result_type(array_of(a), array_of(b))
    cast = any(hasattr(v, "dtype") and v.dtype != dt for v in (array_of(a), array_of(b)))
    return a, b, dt, cast


def _check_alpha(op, alpha, dtype):
    if isinstance(alpha, float) and dtype.kind in "biu" and not float(alpha).is_integer():
        raise DTypeError(f"{op}: a float alpha ({alpha}) needs a floating-point result, got {dtype}")


def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting and PyTorch's type promotion.

    Args:
        input, other: tensors or Python numbers.
        alpha (number): multiplier of ``other``. Default 1.

    Returns:
        Tensor of the broadcast shape.

    Raises:
        ShapeError: the shapes do not broadcast. DeviceMismatchError: cpu and cuda mixed.
    """
    a, b, dt, cast = _promote("add", input, other)
    _check_alpha("add", alpha, dt)
    if dt.kind == "b" and alpha != 1:
        dt, cast = dtypes.int64, True
    return _run("add", Add(dt, cast, alpha), a, b)


def sub(input, other, *, alpha=1):
    """``input - alpha * other`` with broadcasting (bool tensors cannot be subtracted).

    Raises:
        DTypeError: both operands are bool. ShapeError: shapes do not broadcast.
    """
    a, b, dt, cast = _promote("sub", input, other)
    if dt.kind == "b":
        raise DTypeError("sub: subtracting bool tensors is not supported; use logical_xor or ~")
    _check_alpha("sub", alpha, dt)
    return _run("sub", Sub(dt, cast, alpha), a, b)


def mul(input, other):
    """``input * other`` with broadcasting."""
    a, b, dt, cast = _promote("mul", input, other)
    return _run("mul", Mul(dt, cast), a, b)


def div(input, other, *, rounding_mode=None):
    """``input / other`` with broadcasting.

    Args:
        rounding_mode: ``None`` (true division: integers give the default float dtype),
            ``"trunc"`` (round toward zero) or ``"floor"`` (round down, ``floor_divide``).

    Raises:
        ArgumentError: unknown rounding_mode. ShapeError: shapes do not broadcast.
    """
    if rounding_mode not in (None, "trunc", "floor"):
        raise ArgumentError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b, dt, cast = _promote("div", input, other)
    if rounding_mode is None:
        fdt = dtypes.float_for(dt)
        return _run("div", Div(fdt, cast or fdt != dt), a, b)
    _check_shapes("div", a, b)
    return _rounded_div(a, b, dt, rounding_mode)


true_divide = div


def _rounded_div(a, b, dt, mode):
    """Division rounded toward zero or down; not differentiable (its gradient is zero
    almost everywhere), so the result does not require grad."""
    av, bv = array_of(a), array_of(b)
    xp = backend.common_module("div", [v for v in (av, bv) if hasattr(v, "shape")])
    av = av.astype(dt, copy=False) if hasattr(av, "astype") else av
    bv = bv.astype(dt, copy=False) if hasattr(bv, "astype") else bv
    if dt.kind in "iu":
        q = xp.floor_divide(av, bv)
        if mode == "trunc":  # floor and trunc differ where the signs differ and it does not divide
            q = q + ((q < 0) & (xp.remainder(av, bv) != 0))
    else:
        q = xp.floor(av / bv) if mode == "floor" else xp.trunc(av / bv)
    return Tensor._wrap(xp.asarray(q).astype(dt, copy=False))


def floor_divide(input, other):
    """``floor(input / other)`` elementwise (``//``); not differentiable."""
    return div(input, other, rounding_mode="floor")


def pow(input, exponent):
    """``input ** exponent``; ``d/da = b a^(b-1)``, ``d/db = a^b ln a`` (0 where a == 0).

    Raises:
        ShapeError: shapes do not broadcast.
    """
    a, b, dt, _ = _promote("pow", input, exponent)
    if isinstance(b, numbers.Integral) and b < 0 and dt.kind in "iu":
        raise ArgumentError(f"pow: integers to negative integer powers are not allowed, got exponent {b}")
    return _run("pow", Pow(dt), a, b)


def remainder(input, other):
    """Elementwise ``input mod other`` with the divisor's sign (Python's ``%``)."""
    a, b, dt, _ = _promote("remainder", input, other)
    return _run("remainder", Remainder(dt), a, b)


def neg(input):
    """``-input``."""
    if isinstance(input, Tensor) and input.array.dtype.kind == "b":
        raise DTypeError("neg: negation of a bool tensor is not supported; use logical_not or ~")
    return Neg().apply(operand("neg", input))


negative = neg


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
