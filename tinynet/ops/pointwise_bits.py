"""Pointwise ops on the integer and floating-point representations: ``gcd``, ``lcm``,
``bitwise_left_shift``/``bitwise_right_shift``, ``ldexp``, ``frexp``, ``nextafter``, ``isreal``
and ``rsub``, with their in-place methods.

``gcd``/``lcm`` and the shifts take integer tensors (the shifts also Python ints as either
operand) and promote as PyTorch; a shift by a negative amount or by the type's width or more
gives 0 (a right shift of a negative value -1), as PyTorch defines it. ``nextafter`` is not
differentiable (PyTorch has no derivative for it): its output never requires grad.
``ldexp(x, e) = x * 2**e`` and ``frexp``'s mantissa ``x * 2**-exponent`` are compositions of
differentiable ops, so gradients come for free. The numerics are NumPy's/CuPy's (``gcd``,
``lcm``, ``frexp``, ``nextafter``, the shifts).
"""
import numbers

import numpy

from .. import backend, dtypes
from ..errors import ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul, sub
from .inplace import composed_method
from .unary import exp2
from .util import array_of, check_tensor, float_tensor, named


def _int_operands(op, input, other, scalars):
    """The arrays of two integer operands (Python ints too when ``scalars``), their array module
    and PyTorch's promoted dtype; typed errors for anything else."""
    for name, v in (("input", input), ("other", other)):
        if isinstance(v, Tensor):
            if v.array.dtype.kind not in "iu":
                raise DTypeError(f"{op}: expected integer tensors, got {name} of dtype {v.dtype}")
        elif not scalars or isinstance(v, bool) or not isinstance(v, (numbers.Integral, numpy.integer)):
            raise ArgumentTypeError(f"{op}: {name} must be an integer Tensor{' or an int' if scalars else ''}, got "
                                    f"{type(v).__name__}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise ArgumentTypeError(f"{op}: expected at least one Tensor, got two ints")
    a, b = array_of(input), array_of(other)
    xp = backend.common_module(op, [v for v in (a, b) if hasattr(v, "shape")])
    dt = dtypes.result_type(a, b)
    try:
        shape = numpy.broadcast_shapes(getattr(a, "shape", ()), getattr(b, "shape", ()))
    except ValueError:
        raise ShapeError(f"{op}: shapes {tuple(getattr(a, 'shape', ()))} and {tuple(getattr(b, 'shape', ()))} cannot "
                         "be broadcast together") from None
    a = xp.broadcast_to(xp.asarray(a, dtype=dt), shape)
    b = xp.broadcast_to(xp.asarray(b, dtype=dt), shape)
    return xp, a, b, dt


def gcd(input, other):
    """The greatest common divisor of each pair of integers (non-negative; ``gcd(0, 0) = 0``),
    broadcasting, in the promoted integer dtype (``numpy.gcd``/``cupy.gcd``).

    Raises:
        DTypeError: a float, complex or bool tensor. ArgumentTypeError: a non-Tensor.
        ShapeError: shapes that do not broadcast.
    """
    xp, a, b, dt = _int_operands("gcd", input, other, False)
    return Tensor._wrap(xp.gcd(a, b).astype(dt, copy=False))


def lcm(input, other):
    """The least common multiple of each pair of integers (non-negative; 0 when either is 0),
    as :func:`gcd` (``numpy.lcm``/``cupy.lcm``)."""
    xp, a, b, dt = _int_operands("lcm", input, other, False)
    # |a / gcd * b| in 64 bits, then wrapped into the dtype as PyTorch's kernel does for the
    # narrow types (int8 lcm(-15, 17) is 255 -> -1); numpy.lcm and cupy.lcm differ on overflow
    wide = "uint64" if dt == numpy.uint64 else "int64"
    a, b = a.astype(wide, copy=False), b.astype(wide, copy=False)
    g = xp.gcd(a, b)
    out = xp.abs((a // xp.where(g == 0, 1, g)) * b)
    return Tensor._wrap(xp.where(g == 0, 0, out).astype(dt, copy=False))


def _shift(op, input, other, left):
    xp, a, b, dt = _int_operands(op, input, other, True)
    bits = dt.itemsize * 8
    inside = (b >= 0) & (b < bits)
    safe = xp.where(inside, b, 0)
    shifted = xp.left_shift(a, safe) if left else xp.right_shift(a, safe)
    outside = xp.zeros((), dt) if left else xp.where(a < 0, -1, 0).astype(dt)
    return Tensor._wrap(xp.where(inside, shifted, outside).astype(dt, copy=False))


def bitwise_left_shift(input, other):
    """``input << other`` elementwise for integer tensors (either may be a Python int), in the
    promoted dtype; a negative shift or one of the type's width or more gives 0.

    Raises:
        DTypeError: a float, complex or bool tensor. ArgumentTypeError: neither is a Tensor.
    """
    return _shift("bitwise_left_shift", input, other, True)


def bitwise_right_shift(input, other):
    """``input >> other`` elementwise (arithmetic: the sign is kept); a negative shift or one of
    the type's width or more gives 0, or -1 for a negative value. Errors as :func:`bitwise_left_shift`."""
    return _shift("bitwise_right_shift", input, other, False)


def ldexp(input, other):
    """``input * 2**other`` (integer inputs give the default float dtype), differentiable in both
    (PyTorch composes it the same way).

    Raises:
        ArgumentTypeError: ``input`` or ``other`` is not a Tensor.
    """
    check_tensor("ldexp", "input", input)
    check_tensor("ldexp", "other", other)
    return mul(input, exp2(float_tensor("ldexp", other, "other", real=True)))


def frexp(input):
    """The mantissa and exponent of each element: ``input = mantissa * 2**exponent`` with
    ``0.5 <= |mantissa| < 1`` (0 for 0; inf and NaN keep themselves, exponent 0). Returns
    ``(mantissa, exponent)``, the exponent int32; the mantissa's gradient is ``grad * 2**-exponent``.

    Raises:
        DTypeError: a tensor that is not floating-point (as PyTorch).
    """
    check_tensor("frexp", "input", input)
    if not dtypes.is_floating(input.array.dtype):
        raise DTypeError(f"frexp: only supports floating-point dtypes, got {input.dtype}")
    xp = backend.array_module(input.array)
    a = input.array.astype(numpy.float32) if input.array.dtype == dtypes.bfloat16 else input.array
    _, exponent = xp.frexp(a)
    scale = Tensor._wrap(xp.ldexp(xp.ones((), a.dtype), -exponent).astype(input.array.dtype, copy=False))
    return mul(input, scale), Tensor._wrap(exponent.astype(numpy.int32))


def nextafter(input, other):
    """The next representable float after ``input`` towards ``other``, elementwise
    (``numpy.nextafter``/``cupy.nextafter``), in the promoted float dtype; not differentiable.

    Raises:
        DTypeError: an integer, bool or complex tensor. ArgumentTypeError: a non-Tensor.
        ShapeError: shapes that do not broadcast.
    """
    for name, v in (("input", input), ("other", other)):
        check_tensor("nextafter", name, v)
        if v.array.dtype.kind != "f":
            raise DTypeError(f"nextafter: expected float32, float64 or float16 tensors, got {name} of dtype {v.dtype}")
    xp = backend.common_module("nextafter", [input.array, other.array])
    dt = dtypes.result_type(input.array, other.array)
    try:
        return Tensor._wrap(xp.nextafter(input.array.astype(dt, copy=False), other.array.astype(dt, copy=False)))
    except ValueError:
        raise ShapeError(f"nextafter: shapes {tuple(input.shape)} and {tuple(other.shape)} cannot be broadcast "
                         "together") from None


def isreal(input):
    """A bool tensor: True where the element is real (every element of a real tensor; a complex
    element whose imaginary part is 0)."""
    check_tensor("isreal", "input", input)
    xp = backend.array_module(input.array)
    if input.array.dtype.kind != "c":
        return Tensor._wrap(xp.ones(input.shape, dtype=bool))
    return Tensor._wrap(input.array.imag == 0)


def rsub(input, other, alpha=1):
    """``other - alpha * input`` (``sub`` with the operands swapped); ``other`` a Tensor or a number.

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
    """
    check_tensor("rsub", "input", input)
    return sub(other, input, alpha=alpha)


METHODS = {"gcd": gcd, "lcm": lcm, "bitwise_left_shift": bitwise_left_shift,
           "bitwise_right_shift": bitwise_right_shift, "ldexp": ldexp, "frexp": frexp, "nextafter": nextafter,
           "isreal": isreal,
           **{f"{f.__name__}_": composed_method(f"{f.__name__}_", f)
              for f in (gcd, lcm, bitwise_left_shift, bitwise_right_shift, ldexp, nextafter)},
           "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
           "__rlshift__": lambda self, other: bitwise_left_shift(other, self),
           "__rrshift__": lambda self, other: bitwise_right_shift(other, self)}
METHODS["__ilshift__"], METHODS["__irshift__"] = METHODS["bitwise_left_shift_"], METHODS["bitwise_right_shift_"]


def _torch_inplace(name):
    method = METHODS[name]

    def fn(input, other):
        check_tensor(name, "input", input)
        return method(input, other)
    return named(fn, name, f"``torch.{name}``: ``input.{name}(other)``; returns ``input``.")


gcd_, lcm_, ldexp_ = (_torch_inplace(n) for n in ("gcd_", "lcm_", "ldexp_"))
