"""Statistics and norms: ``var``, ``std``, ``var_mean``, ``std_mean``, ``logsumexp``,
``norm``, ``cov`` and ``corrcoef``.

``d var = 2 (x - mean) / (N - correction)`` (``std = sqrt(var)`` is composed),
``d logsumexp = softmax(x)``, ``d ||x||_p = sign(x) |x|^(p-1) / ||x||_p^(p-1)`` (0 where
the norm is 0; max/min of ``|x|`` for ``p = +-inf`` share the gradient among ties).

* ``cov`` (NumPy's and PyTorch's definition), composed of differentiable ops: rows are
  variables, columns observations; with frequency weights ``f`` and observation weights
  ``a``, ``w = f a``, ``mean = sum(x w) / sum(w)`` and
  ``cov = (x - mean) diag(w) (x - mean)^T / norm`` with ``norm = sum(w) - correction``
  (no ``a``) or ``sum(w) - correction sum(w a) / sum(w)``.
* ``corrcoef``: ``cov`` divided by the outer product of the standard deviations, clipped to
  [-1, 1].
"""
import math

import numpy

from ..dtypes import is_floating
from .. import dtypes
from ..errors import ArgumentError, DTypeError, ShapeError
from .arith import mul, sub
from .autocast import autocast_op
from .division import div
from .reduction import _all_dims, _check, _expand, _Reduction, mean, sum as _sum
from .shape import unsqueeze
from .unary import clamp, sqrt
from .util import check_flag, check_int, check_number, check_tensor, dims_tuple


class Var(_Reduction):
    name = "var"

    def __init__(self, axes, keepdim, correction):
        self.axes, self.keepdim, self.correction = axes, keepdim, correction

    def forward(self, xp, x):
        self.save_for_backward(x)
        n = 1
        for a in self.axes:
            n *= x.shape[a]
        if self.correction < n:
            return xp.asarray(x.var(axis=self.axes, keepdims=self.keepdim, ddof=self.correction))
        # no degrees of freedom left: PyTorch divides by max(0, N - correction), giving inf (nan
        # where all values are equal); CuPy's var would give nan throughout
        squares = x.var(axis=self.axes, keepdims=self.keepdim) * n
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return xp.asarray(squares / xp.asarray(0.0, dtype=squares.dtype))

    def backward(self, xp, gy):
        (x,) = self.saved
        n = 1
        for a in self.axes:
            n *= x.shape[a]
        centred = x - xp.mean(x, axis=self.axes, keepdims=True)
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        if n - self.correction > 0:
            return (g * centred * (2.0 / (n - self.correction)),)
        with numpy.errstate(divide="ignore", invalid="ignore"):  # no degrees of freedom: inf/nan, no crash
            return (g * centred * 2.0 / xp.asarray(0.0, dtype=centred.dtype),)


def _kept(xp, y, axes, keepdim):
    """Output ``y`` with the reduced dims back as size 1."""
    return xp.expand_dims(y, axes) if not keepdim and axes else y


class _SavesOutput(_Reduction):
    def _output(self, xp, x, y):
        """Save ``x`` and the output itself (so a create_graph backward differentiates
        through it) and return the output, ``y`` (reduced with keepdims) in the op's shape."""
        if not self.keepdim:
            y = y.reshape([n for i, n in enumerate(x.shape) if i not in self.axes])
        self.save_for_backward(x, y)
        return y


class LogSumExp(_SavesOutput):
    name = "logsumexp"

    def forward(self, xp, x):
        if x.size:
            m = x.max(axis=self.axes, keepdims=True)
            m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        else:  # log(0) = -inf over no elements
            m = xp.zeros([1 if i in self.axes else n for i, n in enumerate(x.shape)], dtype=x.dtype)
        y = xp.log(xp.exp(x - m).sum(axis=self.axes, keepdims=True)) + m
        return self._output(xp, x, y)

    def backward(self, xp, gy):
        x, y = self.saved
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (g * xp.exp(x - _kept(xp, y, self.axes, self.keepdim)),)


class Norm(_SavesOutput):
    """Vector p-norm over axes: ``(sum |x|^p)^(1/p)``; ``inf``/``-inf`` give max/min ``|x|``."""
    name = "norm"

    def __init__(self, axes, keepdim, p):
        self.axes, self.keepdim, self.p = axes, keepdim, p

    def forward(self, xp, x):
        p = self.p
        if p == 2:  # no |x| pass: x * x is the same
            y = xp.sqrt((x * x).sum(axis=self.axes, keepdims=True))
        elif p == 0:
            y = (x != 0).sum(axis=self.axes, keepdims=True).astype(x.dtype)
        elif p == math.inf:
            y = xp.abs(x).max(axis=self.axes, keepdims=True)
        elif p == -math.inf:
            y = xp.abs(x).min(axis=self.axes, keepdims=True)
        elif p == 1:
            y = xp.abs(x).sum(axis=self.axes, keepdims=True)
        else:
            y = (xp.abs(x) ** p).sum(axis=self.axes, keepdims=True) ** (1.0 / p)
        return self._output(xp, x, xp.asarray(y).astype(x.dtype, copy=False))

    def backward(self, xp, gy):
        x, y = self.saved
        y = _kept(xp, y, self.axes, self.keepdim)
        p = self.p
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        zero = xp.zeros_like(x)
        if p == 0:
            return (zero,)
        if p in (math.inf, -math.inf):
            a = xp.abs(x)
            mask = a == y
            count = xp.sum(xp.where(mask, xp.ones_like(x), zero), axis=self.axes, keepdims=True)
            return (xp.where(mask, g * xp.sign(x), zero) / count,)
        if p == 1:
            return (g * xp.sign(x),)
        safe = xp.where(y == 0, xp.ones_like(y), y)
        if p == 2:
            return (xp.where(y == 0, zero, g * x / safe),)
        d = xp.sign(x) * xp.abs(x) ** (p - 1) / safe ** (p - 1)
        if p < 1:  # |x|^(p-1) is infinite at x = 0: PyTorch takes 0 there
            d = xp.where(x == 0, zero, d)
        return (xp.where(y == 0, zero, g * d),)


def _correction(op, unbiased, correction):
    if correction is not None and unbiased is not None:
        raise ArgumentError(f"{op}: give either unbiased or correction, not both")
    if correction is not None:
        return check_number(op, "correction", correction)
    return 1 if unbiased is None or check_flag(op, "unbiased", unbiased) else 0


def _float_input(op, input):
    _check(op, input)
    if not is_floating(input.array.dtype):
        raise DTypeError(f"{op}: only floating-point tensors are supported (as in PyTorch), got {input.dtype}")
    return input


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance ``sum((x - mean)^2) / (N - correction)`` over ``dim`` (an int, a tuple, or
    None/() for all); Bessel's correction 1 by default, ``unbiased=False`` means 0. The
    legacy forms ``var(x, unbiased)`` and ``var(x, dim, unbiased, keepdim)`` work too.

    Raises:
        DTypeError: a non-float input. ArgumentError: both unbiased and correction.
    """
    _float_input("var", input)
    if isinstance(dim, bool):  # var(x, False): the legacy unbiased flag in dim's place
        dim, unbiased = None, dim
    dims = dims_tuple("var", _all_dims(dim), input.ndim)
    keepdim = check_flag("var", "keepdim", keepdim)
    return Var(dims, keepdim, _correction("var", unbiased, correction)).apply(input)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))`` with :func:`var`'s arguments."""
    _float_input("std", input)
    return sqrt(var(input, dim, unbiased, keepdim, correction=correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(...), mean(...))`` over ``dim`` with :func:`~tinynet.var`'s arguments (a plain tuple)."""
    if isinstance(dim, bool):  # var_mean(x, False): the legacy unbiased flag
        dim, unbiased = None, dim
    return (var(input, dim, unbiased, keepdim, correction=correction),
            mean(input, () if dim is None else dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(...), mean(...))`` over ``dim`` with :func:`~tinynet.std`'s arguments (a plain tuple)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return (std(input, dim, unbiased, keepdim, correction=correction),
            mean(input, () if dim is None else dim, keepdim))


@autocast_op
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (the max is taken out first);
    integer inputs give the default float dtype.

    Raises:
        IndexOutOfRangeError: a dim out of range.
    """
    _check("logsumexp", input)
    if not is_floating(input.array.dtype) and input.array.dtype.kind != "c":  # (complex: the op refuses it)
        input = input.to(dtypes.get_default_dtype())
    keepdim = check_flag("logsumexp", "keepdim", keepdim)
    return LogSumExp(dims_tuple("logsumexp", dim, input.ndim), keepdim).apply(input)


@autocast_op
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (all elements by default): ``(sum |x|^p)^(1/p)``.

    Args:
        p: a number, ``inf``/``-inf`` (max/min of ``|x|``), 0 (count of nonzeros) or
            ``"fro"`` (2, over the given dims). Default ``"fro"``.
        dim: int, tuple or None. keepdim (bool). dtype: cast the input to it first.

    Raises:
        DTypeError: a non-float input (without a float ``dtype``).
        ArgumentError: ``p="nuc"`` or another string (matrix norms beyond Frobenius are
            not implemented).
    """
    _check("norm", input)
    if isinstance(p, str):
        if p != "fro":
            raise ArgumentError(f"norm: p={p!r} is not supported (numbers, inf, -inf and 'fro' are)")
        p = 2
    p = check_number("norm", "p", p)
    keepdim = check_flag("norm", "keepdim", keepdim)
    if dtype is not None:
        input = input.to(dtypes.as_dtype(dtype, "norm"))
    _float_input("norm", input)
    return Norm(dims_tuple("norm", _all_dims(dim), input.ndim), keepdim, p).apply(input)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (a 1-D input is one
    variable: a 0-d result), observations in the columns, with optional integer frequency
    weights and float observation weights (both (N,)); see the module's formula.

    Raises:
        ArgumentTypeError / DTypeError: non-Tensors, integer fweights expected.
        ShapeError: ``input`` with more than 2 dims, or weights of the wrong shape.
    """
    check_tensor("cov", "input", input)
    correction = check_int("cov", "correction", correction)
    if input.ndim > 2:
        raise ShapeError(f"cov: expected input with two or fewer dimensions, got {input.ndim}")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if not x.is_floating_point() and not x.is_complex():  # (complex reaches matmul, which refuses it)
        x = x.float()
    n = x.shape[1]
    w = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        check_tensor("cov", name, v)
        if v.ndim != 1 or v.shape[0] != n:
            raise ShapeError(f"cov: expected {name} to have one element per observation ({n}), got shape "
                             f"{tuple(v.shape)}")
        if name == "fweights" and v.array.dtype.kind not in "iu":
            raise DTypeError(f"cov: expected fweights to have an integral dtype, got {v.dtype}")
        w = v if w is None else mul(w, v)
    if w is None:
        centre = _sum(x, 1, keepdim=True) / n
        centred = sub(x, centre)
        c = div(centred @ centred.t(), n - correction)
    else:
        w = w.to(x.dtype)
        w_sum = _sum(w)
        centre = div(_sum(mul(x, w), 1, keepdim=True), w_sum)
        scale = sub(w_sum, correction) if aweights is None else sub(
            w_sum, div(mul(_sum(mul(w, aweights.to(x.dtype))), correction), w_sum))
        centred = sub(x, centre)
        c = div(centred @ mul(centred, w).t(), scale)
    return c.reshape(()) if input.ndim < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (see :func:`cov`), clipped
    to [-1, 1].

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: more than 2 dims.
    """
    c = cov(input)
    if c.ndim == 0:
        return div(c, c)
    sd = sqrt(c.diagonal())
    return clamp(div(div(c, unsqueeze(sd, 1)), unsqueeze(sd, 0)), -1, 1)
