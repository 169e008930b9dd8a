"""Statistics and norms: ``var``, ``std``, ``logsumexp``, ``norm``.

``d var = 2 (x - mean) / (N - correction)`` (``std = sqrt(var)`` is composed),
``d logsumexp = softmax(x)``, ``d ||x||_p = sign(x) |x|^(p-1) / ||x||_p^(p-1)`` (0 where
the norm is 0; max/min of ``|x|`` for ``p = +-inf`` share the gradient among ties).
"""
import math

from .. import dtypes
from ..errors import ArgumentError
from .reduction import _check, _expand, _Reduction
from .util import dims_tuple


class Var(_Reduction):
    name = "var"

    def __init__(self, axes, keepdim, correction):
        self.axes, self.keepdim, self.correction = axes, keepdim, correction

    def forward(self, xp, x):
        self.save_for_backward(x)
        return xp.asarray(x.var(axis=self.axes, keepdims=self.keepdim, ddof=self.correction))

    def backward(self, xp, gy):
        (x,) = self.saved
        n = 1
        for a in self.axes:
            n *= x.shape[a]
        centred = x - xp.mean(x, axis=self.axes, keepdims=True)
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (g * centred * (2.0 / (n - self.correction)),)


class LogSumExp(_Reduction):
    name = "logsumexp"

    def forward(self, xp, x):
        m = x.max(axis=self.axes, keepdims=True)
        m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        y = xp.log(xp.exp(x - m).sum(axis=self.axes, keepdims=True)) + m
        self.save_for_backward(x, y)
        return y if self.keepdim else y.reshape([n for i, n in enumerate(x.shape) if i not in self.axes])

    def backward(self, xp, gy):
        x, y = self.saved
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (g * xp.exp(x - y),)


class Norm(_Reduction):
    """Vector p-norm over axes: ``(sum |x|^p)^(1/p)``; ``inf``/``-inf`` give max/min ``|x|``."""
    name = "norm"

    def __init__(self, axes, keepdim, p):
        self.axes, self.keepdim, self.p = axes, keepdim, p

    def forward(self, xp, x):
        a, p = xp.abs(x), self.p
        if p == math.inf:
            y = a.max(axis=self.axes, keepdims=True)
        elif p == -math.inf:
            y = a.min(axis=self.axes, keepdims=True)
        elif p == 0:
            y = (x != 0).sum(axis=self.axes, keepdims=True).astype(x.dtype)
        elif p == 1:
            y = a.sum(axis=self.axes, keepdims=True)
        elif p == 2:
            y = xp.sqrt((x * x).sum(axis=self.axes, keepdims=True))
        else:
            y = (a ** p).sum(axis=self.axes, keepdims=True) ** (1.0 / p)
        self.save_for_backward(x, y)
        y = xp.asarray(y).astype(x.dtype, copy=False)
        return y if self.keepdim else y.reshape([n for i, n in enumerate(x.shape) if i not in self.axes])

    def backward(self, xp, gy):
        x, y = self.saved
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
        return (xp.where(y == 0, zero, g * d),)


def _correction(op, unbiased, correction):
    if correction is not None and unbiased is not None:
        raise ArgumentError(f"{op}: give either unbiased or correction, not both")
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance ``sum((x - mean)^2) / (N - correction)`` over ``dim`` (Bessel's, correction 1,
    by default; ``unbiased=False`` means correction 0)."""
    _check("var", input)
    if isinstance(dim, bool):  # var(x, False): the legacy unbiased flag in dim's place
        dim, unbiased = None, dim
    return Var(dims_tuple("var", dim, input.ndim), keepdim, _correction("var", unbiased, correction)).apply(input)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))`` with :func:`var`'s arguments."""
    from .unary import sqrt
    return sqrt(var(input, dim, unbiased, keepdim, correction=correction))


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (the max is taken out first).

    Raises:
        IndexOutOfRangeError: a dim out of range.
    """
    _check("logsumexp", input)
    if input.array.dtype.kind != "f":
        input = input.to(dtypes.get_default_dtype())
    return LogSumExp(dims_tuple("logsumexp", dim, input.ndim), keepdim).apply(input)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (all elements by default): ``(sum |x|^p)^(1/p)``.

    Args:
        p: a number, ``inf``/``-inf`` (max/min of ``|x|``), 0 (count of nonzeros) or
            ``"fro"`` (2, over the given dims). Default ``"fro"``.
        dim: int, tuple or None. keepdim (bool). dtype: cast the input to it first.

    Raises:
        ArgumentError: ``p="nuc"`` or another string (matrix norms beyond Frobenius are
            not implemented).
    """
    _check("norm", input)
    if isinstance(p, str):
        if p != "fro":
            raise ArgumentError(f"norm: p={p!r} is not supported (numbers, inf, -inf and 'fro' are)")
        p = 2
    if dtype is not None:
        input = input.to(dtypes.as_dtype(dtype, "norm"))
    elif input.array.dtype.kind != "f":
        input = input.to(dtypes.get_default_dtype())
    return Norm(dims_tuple("norm", dim, input.ndim), keepdim, float(p)).apply(input)


