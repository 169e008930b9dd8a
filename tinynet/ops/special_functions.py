"""Special functions of one tensor (PyTorch's ``torch.special`` and the torch-level name
``i0``): ``erfcx``, the normal distribution (``ndtr``, ``ndtri``, ``log_ndtr``), the
modified Bessel functions (``i0``,
``i0e``, ``i1``, ``i1e``), the entropy term ``entr``, and the Bessel functions that have no
gradient in PyTorch (``bessel_j0``, ``bessel_j1``, ``bessel_y0``, ``bessel_y1``,
``modified_bessel_i0``/``i1``/``k0``/``k1``, ``scaled_modified_bessel_k0``/``k1``).

The values come from ``scipy.special`` on the CPU and ``cupyx.scipy.special`` on a GPU
(:func:`tinynet.backend.special`, chosen by the array's module), computed in the input's
dtype (float16 through float32); integer and bool inputs are computed in the default float
dtype, as PyTorch does. The gradients are PyTorch's formulas:

* ``erfcx' = 2 x erfcx(x) - 2 / sqrt(pi)``;
* ``ndtr' = exp(-x^2 / 2) / sqrt(2 pi)``, ``ndtri' = sqrt(2 pi) exp(ndtri(x)^2 / 2)``,
  ``log_ndtr' = exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi)``;
* ``i0' = i1``, ``i0e' = i1e - sign(x) i0e``, ``i1' = i0 - i1 / x`` (1/2 at 0),
  ``i1e' = i0e - i1e (sign(x) + 1 / x)`` (1/2 at 0);
* ``entr(x) = -x ln x`` (0 at 0, -inf below), ``entr' = -(1 + ln x)``.

Each backward is written with ops (the derivatives' own special functions through their
ops), so second derivatives work. Complex inputs are refused (DTypeError), as by PyTorch.
"""
import math

import numpy

from .. import backend, dtypes
from ..autograd import Op, no_grad
from ..errors import DTypeError
from .activation import log_softmax as _log_softmax, sigmoid, softmax as _softmax
from .util import check_tensor

_SQRT_PI, _SQRT_2PI = math.sqrt(math.pi), math.sqrt(2 * math.pi)


# The Bessel functions' values at +inf and -inf (NaN at NaN) in SciPy and PyTorch (CPU); cupyx.scipy.special
# gives the mathematical limits or other values there (j0(inf) = 0, i0(inf) = inf, k0e(inf) = NaN, ...), so
# CuPy's results take these from this table (SciPy's already are these values)
_AT_INF = {"j0": (math.nan, math.nan), "j1": (math.nan, math.nan), "y0": (math.nan, math.nan),
           "y1": (math.nan, math.nan), "i0": (math.nan, math.nan), "i1": (math.nan, math.nan),
           "i0e": (0.0, 0.0), "i1e": (0.0, -0.0), "k0": (0.0, math.nan), "k1": (0.0, math.nan),
           "k0e": (0.0, math.nan), "k1e": (0.0, math.nan)}
# the odd ones' signed zeros as SciPy's and PyTorch's: i1e(-inf) = -0, j1(-0) = -0, i1(-0) = i1e(-0) = +0
_ODD = {"j1", "i1", "i1e"}


def scipy_call(xp, name, *args):
    """``scipy.special.<name>`` (``cupyx.scipy.special`` for CuPy arrays) of ``args``, in the
    dtype of the first array argument, without NumPy's warnings for values outside the
    domain (the result is NaN or inf there, as PyTorch's). On the GPU the Bessel functions take
    their values at +-inf and NaN from ``_AT_INF`` (SciPy's and PyTorch's, which the CPU gets
    from SciPy itself)."""
    fn = getattr(backend.special(xp), name)
    dt = next(a.dtype for a in args if hasattr(a, "dtype"))
    if xp is numpy:
        with numpy.errstate(all="ignore"):
            return xp.asarray(fn(*args)).astype(dt, copy=False)
    y = xp.asarray(fn(*args)).astype(dt, copy=False)
    at_inf = _AT_INF.get(name)
    if at_inf is not None:
        x = args[0]
        y = xp.where(xp.isnan(x), xp.asarray(math.nan, dt),
                     xp.where(x == math.inf, xp.asarray(at_inf[0], dt),
                              xp.where(x == -math.inf, xp.asarray(at_inf[1], dt), y)))
        if name in _ODD:
            y = xp.where(xp.isinf(x), xp.copysign(y, x), y)
            y = xp.where(x == 0, x if name == "j1" else xp.zeros_like(y), y)
    return y


class Special(Op):
    """``y = scipy.special.<fn>(x)`` elementwise; ``dx = gy * df(x, y)``."""
    twice_differentiable = True
    gpu_saves_generic = True
    fn = ""

    def forward(self, xp, x):
        y = scipy_call(xp, self.fn, x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, y)
        return y

    def backward(self, xp, gy):
        x, y = self.saved
        return (gy * self.df(xp, x, y),)

    def df(self, xp, x, y):
        raise NotImplementedError


class Erfcx(Special):
    name, fn = "special.erfcx", "erfcx"

    def df(self, xp, x, y):
        return 2 * x * y - 2 / _SQRT_PI


class Ndtr(Special):
    name, fn = "special.ndtr", "ndtr"

    def df(self, xp, x, y):
        return xp.exp(x * x * -0.5) / _SQRT_2PI


class Ndtri(Special):
    name, fn = "special.ndtri", "ndtri"

    def df(self, xp, x, y):
        return xp.exp(y * y * 0.5) * _SQRT_2PI


class LogNdtr(Special):
    name, fn = "special.log_ndtr", "log_ndtr"

    def df(self, xp, x, y):
        return xp.exp(x * x * -0.5 - y) / _SQRT_2PI


class I0(Special):
    name, fn = "i0", "i0"

    def df(self, xp, x, y):
        return I1().call(xp, x)


class I0e(Special):
    name, fn = "special.i0e", "i0e"

    def df(self, xp, x, y):
        return I1e().call(xp, x) - xp.sign(x) * y


def _over_x(xp, x, a, y, b):
    """``a - y * b / x`` elementwise, 1/2 where ``x == 0`` (the limit of the i1/i1e derivatives)."""
    zero = x == 0
    safe = xp.where(zero, xp.ones_like(x), x)
    return xp.where(zero, xp.ones_like(x) * 0.5, a - y * b / safe)


class I1(Special):
    name, fn = "special.i1", "i1"

    def df(self, xp, x, y):
        return _over_x(xp, x, I0().call(xp, x), y, 1)


class I1e(Special):
    name, fn = "special.i1e", "i1e"

    def df(self, xp, x, y):
        return _over_x(xp, x, I0e().call(xp, x) - xp.sign(x) * y, y, 1)


class Entr(Special):
    name, fn = "special.entr", "entr"

    def df(self, xp, x, y):
        if xp is numpy:
            with numpy.errstate(all="ignore"):
                return -(1 + xp.log(x))
        return -(1 + xp.log(x))


class _NoGrad(Special):
    """A special function PyTorch gives no gradient: computed outside autograd."""
    twice_differentiable = False


def _op_class(name, fn):
    return type(fn.capitalize(), (_NoGrad,), {"name": name, "fn": fn})


# ---- public functions -----------------------------------------------------------------
def floating(op, input):
    """``input`` checked (a real Tensor), integers and bool in the default float dtype."""
    check_tensor(op, "input", input)
    dt = input.array.dtype
    if dt.kind == "c":
        raise DTypeError(f"{op}: not implemented for complex tensors, got {dt}")
    return input if dtypes.is_floating(dt) else input.to(dtypes.get_default_dtype())


def _unary(cls, op, doc):
    def f(input):
        return cls().apply(floating(op, input))
    f.__name__ = f.__qualname__ = op.rsplit(".", 1)[-1]
    f.__doc__ = (f"{doc}\n\n    Args:\n        input (Tensor): any shape; integers and bool are computed in the "
                 f"default float dtype.\n\n    Returns:\n        Tensor of the input's shape and float dtype.\n\n"
                 f"    Raises:\n"
                 f"        ArgumentTypeError: ``input`` is not a Tensor. DTypeError: a complex tensor.\n\n"
                 f"    Source: ``scipy.special.{cls.fn}`` / ``cupyx.scipy.special.{cls.fn}``; the gradient is in the "
                 f"module docstring.\n")
    return f


erfcx = _unary(Erfcx, "special.erfcx", "The scaled complementary error function ``exp(x^2) * erfc(x)``.")
ndtr = _unary(Ndtr, "special.ndtr", "The standard normal distribution function ``(1 + erf(x / sqrt(2))) / 2``.")
ndtri = _unary(Ndtri, "special.ndtri", "The inverse of :func:`ndtr` (the normal quantile function) on (0, 1); "
               "-inf at 0, inf at 1, NaN outside.")
log_ndtr = _unary(LogNdtr, "special.log_ndtr", "``log(ndtr(x))``, accurate far into the lower tail.")
i0 = _unary(I0, "i0", "The modified Bessel function of the first kind of order 0, ``I_0(x)``.")
i0e = _unary(I0e, "special.i0e", "The exponentially scaled ``I_0``: ``exp(-|x|) I_0(x)``.")
i1 = _unary(I1, "special.i1", "The modified Bessel function of the first kind of order 1, ``I_1(x)``.")
i1e = _unary(I1e, "special.i1e", "The exponentially scaled ``I_1``: ``exp(-|x|) I_1(x)``.")
entr = _unary(Entr, "special.entr", "The entropy term ``-x ln x`` for ``x > 0``, 0 at 0 and -inf for ``x < 0``.")


def _no_grad_unary(op, fn, doc):
    cls = _op_class(op, fn)

    def f(input):
        x = floating(op, input)
        with no_grad():  # PyTorch records no gradient for these: the result does not require grad
            return cls().apply(x)
    f.__name__ = f.__qualname__ = op.rsplit(".", 1)[-1]
    f.__doc__ = (f"{doc} Not differentiable (as in PyTorch: the result does not require grad).\n\n"
                 f"    Raises:\n        ArgumentTypeError: ``input`` is not a Tensor. DTypeError: a complex tensor.\n\n"
                 f"    Source: ``scipy.special.{fn}`` / ``cupyx.scipy.special.{fn}``, in the input's float dtype "
                 f"(integers: the default float dtype).\n")
    return f


bessel_j0 = _no_grad_unary("special.bessel_j0", "j0", "The Bessel function of the first kind of order 0.")
bessel_j1 = _no_grad_unary("special.bessel_j1", "j1", "The Bessel function of the first kind of order 1.")
bessel_y0 = _no_grad_unary("special.bessel_y0", "y0", "The Bessel function of the second kind of order 0.")
bessel_y1 = _no_grad_unary("special.bessel_y1", "y1", "The Bessel function of the second kind of order 1.")
modified_bessel_i0 = _no_grad_unary("special.modified_bessel_i0", "i0",
                                    "The modified Bessel function of the first kind of order 0.")
modified_bessel_i1 = _no_grad_unary("special.modified_bessel_i1", "i1",
                                    "The modified Bessel function of the first kind of order 1.")
modified_bessel_k0 = _no_grad_unary("special.modified_bessel_k0", "k0",
                                    "The modified Bessel function of the second kind of order 0.")
modified_bessel_k1 = _no_grad_unary("special.modified_bessel_k1", "k1",
                                    "The modified Bessel function of the second kind of order 1.")
scaled_modified_bessel_k0 = _no_grad_unary("special.scaled_modified_bessel_k0", "k0e",
                                           "The exponentially scaled ``K_0``: ``exp(x) K_0(x)``.")
scaled_modified_bessel_k1 = _no_grad_unary("special.scaled_modified_bessel_k1", "k1e",
                                           "The exponentially scaled ``K_1``: ``exp(x) K_1(x)``.")


# ---- torch.special's spellings of functions tinynet has elsewhere -------------------------------
def expit(input):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` (:func:`tinynet.sigmoid`)."""
    return sigmoid(floating("special.expit", input))


def softmax(input, dim, *, dtype=None):
    """:func:`tinynet.softmax` with PyTorch's ``torch.special.softmax`` signature (``dim``
    required, ``dtype`` keyword-only: the input is cast to it first)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """:func:`tinynet.log_softmax` with ``torch.special.log_softmax``'s signature."""
    return _log_softmax(input, dim, dtype=dtype)
