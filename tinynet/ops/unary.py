"""Elementwise math functions of one tensor, each with its derivative formula.

Every op here is a :class:`Pointwise`: ``f`` computes ``y = f(x)`` and ``df`` gives
``dy/dx`` from ``x`` or from ``y`` (``uses``), so the backward is ``gy * df``. Written with
``xp`` functions only, each backward can be recorded for second derivatives.

Functions with a float result (``exp``, ``log``, ``sqrt``, ``sin``, ...) turn integer
inputs into the default float dtype first, as PyTorch does; ``abs``, ``neg``, ``sign``,
``square`` and the rounding functions keep integer dtypes.

Derivatives: exp' = exp, log' = 1/x, log2' = 1/(x ln 2), log10' = 1/(x ln 10),
log1p' = 1/(1+x), expm1' = y + 1, sqrt' = 1/(2y), rsqrt' = -y^3/2, reciprocal' = -y^2,
square' = 2x, abs' = sign(x), sin' = cos, cos' = -sin, tan' = 1 + y^2,
erf' = 2/sqrt(pi) e^{-x^2}, erfc' = -erf', asin' = 1/sqrt(1-x^2), acos' = -asin',
atan' = 1/(1+x^2), sinh' = cosh, cosh' = sinh, asinh' = 1/sqrt(x^2+1),
acosh' = 1/sqrt(x^2-1), atanh' = 1/(1-x^2), exp2' = y ln 2; sign, floor, ceil, round and
trunc have derivative 0.

Composed of those and of arithmetic: ``deg2rad``/``rad2deg`` (a product by ``pi / 180`` or
its inverse), ``frac`` (``x - trunc(x)``, gradient 1), ``clamp_min``/``clamp_max``.
``nan_to_num``'s derivative is 1 where the input is finite and 0 where it was replaced
(NaN or +-inf), as PyTorch's.
"""
import math
import numbers

import numpy

from ..dtypes import is_floating
from .. import backend, dtypes, parallel
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul, sub
from .autocast import autocast_op
from .complex import complex_abs
from .util import array_of, check_int, check_tensor, float_tensor, is_graph, unbroadcast


def _erf(xp, x):
    """The error function on arrays (SciPy/CuPy special) or tensors (graph namespace), in
    ``x``'s dtype (SciPy computes float16 in float64). Large NumPy arrays are split over
    tinynet's CPU threads (SciPy's ufunc evaluates erf in float64 at ~8 ns an element)."""
    if is_graph(xp):
        return xp.erf(x)
    erf = backend.special(xp).erf
    if xp is not numpy or x.dtype == numpy.float16:
        return erf(x).astype(x.dtype, copy=False)
    flat = numpy.ascontiguousarray(x).reshape(-1)
    out = numpy.empty_like(flat)
    parts = parallel.ranges(flat.size, 16 * flat.nbytes)  # compute-bound: ~16x a copy's cost per byte

    def piece(i):
        lo, hi = parts[i]
        erf(flat[lo:hi], out=out[lo:hi])

    parallel.parallel_for(len(parts), piece)
    return out.reshape(x.shape)


class Pointwise(Op):
    """``y = f(x)`` elementwise, ``dx = gy * df(x or y)``."""
    twice_differentiable = True
    gpu_saves_generic = True
    uses = "x"  # what df reads: "x", "y", or "" (a constant derivative)

    def forward(self, xp, x):
        y = self.f(xp, x)
        if self.needs_input_grad[0] and self.uses:
            self.save_for_backward(x if self.uses == "x" else y)
        return y

    def backward(self, xp, gy):
        v = self.saved[0] if self.uses else gy
        return (gy * self.df(xp, v),)


def _pointwise(name, f, df, uses="x"):
    return type(name.capitalize(), (Pointwise,), {"name": name, "f": staticmethod(f), "df": staticmethod(df),
                                                  "uses": uses})


_LN2, _LN10 = math.log(2.0), math.log(10.0)
# exp takes complex tensors (complex_ok below): its derivative is conjugated for them (PyTorch's convention)
Exp = _pointwise("exp", lambda xp, x: xp.exp(x), lambda xp, y: xp.conj(y) if y.dtype.kind == "c" else y, "y")
Exp.complex_ok = True
Log = _pointwise("log", lambda xp, x: xp.log(x), lambda xp, x: 1 / x)
Log2 = _pointwise("log2", lambda xp, x: xp.log2(x), lambda xp, x: 1 / (x * _LN2))
Log10 = _pointwise("log10", lambda xp, x: xp.log10(x), lambda xp, x: 1 / (x * _LN10))
Log1p = _pointwise("log1p", lambda xp, x: xp.log1p(x), lambda xp, x: 1 / (x + 1))
Expm1 = _pointwise("expm1", lambda xp, x: xp.expm1(x), lambda xp, y: y + 1, "y")
Sqrt = _pointwise("sqrt", lambda xp, x: xp.sqrt(x), lambda xp, y: 0.5 / y, "y")
Rsqrt = _pointwise("rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda xp, y: -0.5 * y * y * y, "y")
Reciprocal = _pointwise("reciprocal", lambda xp, x: 1 / x, lambda xp, y: -(y * y), "y")
Square = _pointwise("square", lambda xp, x: x * x, lambda xp, x: 2 * x)
def _sign(xp, x):
    """PyTorch's sign of a real array: -1, 0 or 1, and 0 for NaN (NumPy's ``sign`` gives NaN).
    In a create_graph backward ``xp`` is the graph namespace, whose ``sign`` is this op."""
    y = xp.sign(x)
    return y if is_graph(xp) or y.dtype.kind != "f" else xp.nan_to_num(y, nan=0.0)


Abs = _pointwise("abs", lambda xp, x: xp.abs(x), lambda xp, x: _sign(xp, x))
Sin = _pointwise("sin", lambda xp, x: xp.sin(x), lambda xp, x: xp.cos(x))
Cos = _pointwise("cos", lambda xp, x: xp.cos(x), lambda xp, x: -xp.sin(x))
Tan = _pointwise("tan", lambda xp, x: xp.tan(x), lambda xp, y: 1 + y * y, "y")
Erf = _pointwise("erf", lambda xp, x: _erf(xp, x),
                 lambda xp, x: xp.exp(-(x * x)) * (2 / math.sqrt(math.pi)))


def _quiet(fn):
    """``fn(xp, x)`` without NumPy's warnings for values outside the domain: the result is
    NaN or inf there, silently, as PyTorch's."""
    def run(xp, x):
        if xp is not numpy:
            return fn(xp, x)
        with numpy.errstate(invalid="ignore", divide="ignore"):
            return fn(xp, x)
    return run


Asin = _pointwise("asin", _quiet(lambda xp, x: xp.arcsin(x)), lambda xp, x: 1 / xp.sqrt(1 - x * x))
Acos = _pointwise("acos", _quiet(lambda xp, x: xp.arccos(x)), lambda xp, x: -1 / xp.sqrt(1 - x * x))
Atan = _pointwise("atan", lambda xp, x: xp.arctan(x), lambda xp, x: 1 / (1 + x * x))
# the derivatives through exp, which the graph namespace of create_graph backwards has
Sinh = _pointwise("sinh", lambda xp, x: xp.sinh(x), lambda xp, x: (xp.exp(x) + xp.exp(-x)) / 2)
Cosh = _pointwise("cosh", lambda xp, x: xp.cosh(x), lambda xp, x: (xp.exp(x) - xp.exp(-x)) / 2)
Asinh = _pointwise("asinh", lambda xp, x: xp.arcsinh(x), lambda xp, x: 1 / xp.sqrt(x * x + 1))
Acosh = _pointwise("acosh", _quiet(lambda xp, x: xp.arccosh(x)), lambda xp, x: 1 / xp.sqrt(x * x - 1))
Atanh = _pointwise("atanh", _quiet(lambda xp, x: xp.arctanh(x)), lambda xp, x: 1 / (1 - x * x))
Exp2 = _pointwise("exp2", lambda xp, x: xp.exp2(x), lambda xp, y: y * _LN2, "y")
Erfc = _pointwise("erfc", lambda xp, x: backend.special(xp).erfc(x).astype(x.dtype, copy=False),
                  lambda xp, x: xp.exp(-(x * x)) * (-2 / math.sqrt(math.pi)))


class _ZeroGrad(Pointwise):
    """Step functions (sign, floor, ...): the derivative is zero almost everywhere."""
    uses = ""

    def backward(self, xp, gy):
        return (xp.zeros_like(gy),)


def _step(name, f):
    return type(name.capitalize(), (_ZeroGrad,), {"name": name, "f": staticmethod(f)})


Sign = _step("sign", lambda xp, x: x.copy() if x.dtype.kind == "b" else _sign(xp, x))
Floor = _step("floor", lambda xp, x: xp.floor(x))
Ceil = _step("ceil", lambda xp, x: xp.ceil(x))
Trunc = _step("trunc", lambda xp, x: xp.trunc(x))


class Round(_ZeroGrad):
    name = "round"

    def __init__(self, decimals):
        self.decimals = decimals

    def f(self, xp, x):  # NumPy and CuPy round half to even, as PyTorch does
        return xp.round(x, self.decimals) if self.decimals else xp.round(x)


class Clamp(Op):
    """``min(max(x, lo), hi)`` in the promoted dtype; ``lo``/``hi`` are numbers, tensors or
    None. Gradients as PyTorch's: ``x`` where ``lo <= x <= hi``; ``lo`` where ``x < lo``
    and ``lo < hi``; ``hi`` where ``x > hi`` or ``lo > hi`` (the output is ``hi`` then)."""
    name = "clamp"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, x, lo, hi):
        x, lo, hi = (v.astype(self.dtype, copy=False) if hasattr(v, "dtype") else v for v in (x, lo, hi))
        if True in self.needs_input_grad:
            self.save_for_backward(x, lo, hi)
        y = x if lo is None else xp.maximum(x, lo)
        y = y if hi is None else xp.minimum(y, hi)
        return xp.asarray(y).astype(self.dtype, copy=False)

    def backward(self, xp, gy):
        x, lo, hi = self.saved
        zero = xp.zeros_like(gy)
        grads = [None, None, None]
        if self.needs_input_grad[0]:
            keep = x >= lo if lo is not None else None
            if hi is not None:
                keep = x <= hi if keep is None else keep & (x <= hi)
            grads[0] = unbroadcast(xp, xp.where(keep, gy, zero), x.shape)
        if self.needs_input_grad[1]:
            low = x < lo if hi is None else (x < lo) & (lo < hi)
            grads[1] = unbroadcast(xp, xp.where(low, gy, zero), lo.shape)
        if self.needs_input_grad[2]:
            high = x > hi if lo is None else (x > hi) | (lo > hi)
            grads[2] = unbroadcast(xp, xp.where(high, gy, zero), hi.shape)
        return tuple(grads)


# ---- public functions -----------------------------------------------------------------
def _float_op(cls, op, input):
    return cls().apply(float_tensor(op, input))


def _same_dtype_op(cls, op, input):
    check_tensor(op, "input", input)
    if cls is Abs and input.array.dtype.kind == "c":  # |z|: a real tensor (ops/complex.py)
        return complex_abs(input)
    if input.array.dtype.kind == "b":
        if op == "square":  # PyTorch squares bools as int64
            input = input.to(dtypes.int64)
        elif op != "sign":
            raise DTypeError(f"{op}: not implemented for bool tensors")
    return cls().apply(input)


def _doc(f, text):
    f.__doc__ = text + "\n\n    Raises:\n        ArgumentTypeError: ``input`` is not a Tensor.\n"
    return f


exp = _doc(lambda input: _float_op(Exp, "exp", input), "Elementwise ``e ** input``.")
log = _doc(lambda input: _float_op(Log, "log", input), "Elementwise natural logarithm.")
log2 = _doc(lambda input: _float_op(Log2, "log2", input), "Elementwise base-2 logarithm.")
log10 = _doc(lambda input: _float_op(Log10, "log10", input), "Elementwise base-10 logarithm.")
log1p = _doc(lambda input: _float_op(Log1p, "log1p", input), "Elementwise ``log(1 + input)``, exact near 0.")
expm1 = _doc(lambda input: _float_op(Expm1, "expm1", input), "Elementwise ``exp(input) - 1``, exact near 0.")
sqrt = _doc(lambda input: _float_op(Sqrt, "sqrt", input), "Elementwise square root.")
rsqrt = _doc(lambda input: _float_op(Rsqrt, "rsqrt", input), "Elementwise ``1 / sqrt(input)``.")
reciprocal = _doc(lambda input: _float_op(Reciprocal, "reciprocal", input), "Elementwise ``1 / input``.")
sin = _doc(lambda input: _float_op(Sin, "sin", input), "Elementwise sine (radians).")
cos = _doc(lambda input: _float_op(Cos, "cos", input), "Elementwise cosine (radians).")
tan = _doc(lambda input: _float_op(Tan, "tan", input), "Elementwise tangent (radians).")
erf = _doc(lambda input: _float_op(Erf, "erf", input),
           "Elementwise error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.")
asin = _doc(lambda input: _float_op(Asin, "asin", input), "Elementwise arcsine (NaN outside [-1, 1]).")
acos = _doc(lambda input: _float_op(Acos, "acos", input), "Elementwise arccosine (NaN outside [-1, 1]).")
atan = _doc(lambda input: _float_op(Atan, "atan", input), "Elementwise arctangent.")
sinh = _doc(lambda input: _float_op(Sinh, "sinh", input), "Elementwise hyperbolic sine.")
cosh = _doc(lambda input: _float_op(Cosh, "cosh", input), "Elementwise hyperbolic cosine.")
asinh = _doc(lambda input: _float_op(Asinh, "asinh", input), "Elementwise inverse hyperbolic sine.")
acosh = _doc(lambda input: _float_op(Acosh, "acosh", input), "Elementwise inverse hyperbolic cosine (NaN below 1).")
atanh = _doc(lambda input: _float_op(Atanh, "atanh", input), "Elementwise inverse hyperbolic tangent.")
exp2 = _doc(lambda input: _float_op(Exp2, "exp2", input), "Elementwise ``2 ** input``.")
erfc = _doc(lambda input: _float_op(Erfc, "erfc", input), "Elementwise complementary error function ``1 - erf``.")
square = _doc(lambda input: _same_dtype_op(Square, "square", input), "Elementwise ``input * input``.")
abs = _doc(lambda input: _same_dtype_op(Abs, "abs", input), "Elementwise absolute value (gradient sign(x), 0 at 0).")
sign = _doc(lambda input: _same_dtype_op(Sign, "sign", input), "Elementwise sign: -1, 0 or 1 (gradient 0).")
floor = _doc(lambda input: _same_dtype_op(Floor, "floor", input), "Round down elementwise (gradient 0).")
ceil = _doc(lambda input: _same_dtype_op(Ceil, "ceil", input), "Round up elementwise (gradient 0).")
trunc = _doc(lambda input: _same_dtype_op(Trunc, "trunc", input), "Round toward zero elementwise (gradient 0).")
for _name, _f in (("exp", exp), ("log", log), ("log2", log2), ("log10", log10), ("log1p", log1p),
                  ("expm1", expm1), ("sqrt", sqrt), ("rsqrt", rsqrt), ("reciprocal", reciprocal), ("sin", sin),
                  ("cos", cos), ("tan", tan), ("erf", erf), ("square", square), ("abs", abs), ("sign", sign),
                  ("floor", floor), ("ceil", ceil), ("trunc", trunc), ("asin", asin), ("acos", acos), ("atan", atan),
                  ("sinh", sinh), ("cosh", cosh), ("asinh", asinh), ("acosh", acosh), ("atanh", atanh), ("exp2", exp2),
                  ("erfc", erfc)):
    _f.__name__ = _f.__qualname__ = _name
# the ones autocast runs in float32 on CUDA (ops/autocast_lists.py)
exp, log, log2, log10, log1p, expm1, rsqrt, reciprocal, tan, asin, acos, sinh, cosh = (
    autocast_op(f) for f in (exp, log, log2, log10, log1p, expm1, rsqrt, reciprocal, tan, asin, acos, sinh, cosh))
absolute = abs
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


def round(input, *, decimals=0):
    """Round to ``decimals`` decimal places, halves to even (as PyTorch); gradient 0.

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor or ``decimals`` is not an int.
        DTypeError: a bool tensor.
    """
    check_tensor("round", "input", input)
    if input.array.dtype.kind == "b":
        raise DTypeError("round: not implemented for bool tensors")
    return Round(check_int("round", "decimals", decimals)).apply(input)


def clamp(input, min=None, max=None):
    """Clip ``input`` to ``[min, max]``; the bounds are numbers or tensors that broadcast.
    The result dtype is the promotion of all three (``clamp(int tensor, 0.5)`` is float);
    with ``min > max`` every value becomes ``max``. Gradients as :class:`Clamp`.

    Raises:
        ArgumentError: both bounds are None. ArgumentTypeError: a bound that is neither a
        number nor a Tensor. ShapeError: the shapes do not broadcast.
    """
    check_tensor("clamp", "input", input)
    if min is None and max is None:
        raise ArgumentError("clamp: at least one of min and max must be given")
    for name, v in (("min", min), ("max", max)):
        if v is not None and not isinstance(v, (Tensor, numbers.Number, numpy.number, numpy.bool_)):
            raise ArgumentTypeError(f"clamp: {name} must be a number or a Tensor, got {type(v).__name__}")
    dt = dtypes.result_type(input.array, *(array_of(v) for v in (min, max)))
    try:
        return Clamp(dt).apply(input, min, max)
    except ValueError:
        shapes = [v.shape for v in (input, min, max) if isinstance(v, Tensor)]
        raise ShapeError(f"clamp: shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                         "broadcast together") from None


clip = clamp


def clamp_min(input, min):
    """``clamp(input, min=min)``."""
    return clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)``."""
    return clamp(input, max=max)


def deg2rad(input):
    """Elementwise ``input * pi / 180`` (degrees to radians); integers give the default float.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return mul(float_tensor("deg2rad", input, real=True), math.pi / 180)


def rad2deg(input):
    """Elementwise ``input * 180 / pi`` (radians to degrees); integers give the default float.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return mul(float_tensor("rad2deg", input, real=True), 180 / math.pi)


def frac(input):
    """Elementwise fractional part ``input - trunc(input)`` (sign of ``input``; gradient 1).

    Raises:
        ArgumentTypeError: not a Tensor.
        DTypeError: an integer or bool tensor (PyTorch: not implemented for them).
    """
    check_tensor("frac", "input", input)
    if not is_floating(input.array.dtype):
        raise DTypeError(f"frac: not implemented for {input.dtype} tensors")
    return sub(input, trunc(input))


class NanToNum(Op):
    name = "nan_to_num"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, nan, posinf, neginf):
        self.values = (nan, posinf, neginf)

    def forward(self, xp, x):
        nan, posinf, neginf = self.values
        if self.needs_input_grad[0]:
            self.save_for_backward(xp.isfinite(x))
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, xp, gy):
        (finite,) = self.saved
        return (gy * finite,)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (default: the dtype's largest and lowest finite values). Integer inputs come back
    unchanged. The gradient is 1 where the input was finite, 0 where it was replaced.

    Raises:
        ArgumentTypeError: not a Tensor, or a replacement that is not a number.
    """
    check_tensor("nan_to_num", "input", input)
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (not isinstance(v, (numbers.Real, numpy.number)) or isinstance(v, bool)):
            raise ArgumentTypeError(f"nan_to_num: {name} must be a number, got {type(v).__name__}")
    if not dtypes.is_floating(input.dtype):  # integers and bools hold no NaN or inf
        return input.clone()
    info = numpy.finfo(input.dtype) if input.dtype.kind == "f" else dtypes.finfo(input.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    return NanToNum(nan, posinf, neginf).apply(input)
