"""Reductions: sum, mean, var, max/min (with and without ``dim``), argmax/argmin.

Backward broadcasts the incoming gradient back over the reduced axes; ``max``/``min``
over all elements share the gradient evenly among ties (PyTorch's ``amax`` rule), while
``max(dim)``/``min(dim)`` send it to the returned index.
"""
import collections

import numpy

from ...autograd import Function
from ...errors import DTypeError, ShapeError
from ...tensor import Tensor


class _Unary(Function):
    __slots__ = ()


def _axes(op, dim, ndim):
    """Normalise ``dim`` (None, int or tuple) to a tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, numpy.integer)) else tuple(dim)
    out = []
    for d in dims:
        n = ndim if ndim > 0 else 1
        if not -n <= d < n:
            raise ShapeError(f"{op}: dim {d} out of range for a tensor of {ndim} dimensions")
        out.append(int(d) % n)
    return tuple(out)


def _expand(xp, g, shape, axes, keepdim):
    if not keepdim and shape:
        g = xp.expand_dims(g, axes) if axes else g
    return xp.broadcast_to(g, shape)


class Sum(_Unary):
    name = "sum"

    def __init__(self, axes, keepdim):
        self.axes, self.keepdim = axes, keepdim

    def forward(self, xp, x):
        self.saved = x.shape
        return x.sum(axis=self.axes, keepdims=self.keepdim)

    def backward(self, xp, gy):
        return (_expand(xp, gy, self.saved, self.axes, self.keepdim),)


class Mean(Sum):
    name = "mean"

    def forward(self, xp, x):
        self.saved = x.shape
        return x.mean(axis=self.axes, keepdims=self.keepdim)

    def backward(self, xp, gy):
        n = 1
        for a in self.axes:
            n *= self.saved[a]
        return (_expand(xp, gy / n, self.saved, self.axes, self.keepdim),)


class Var(_Unary):
    name = "var"

    def __init__(self, axes, keepdim, correction):
        self.axes, self.keepdim, self.correction = axes, keepdim, correction

    def forward(self, xp, x):
        self.saved = x
        return x.var(axis=self.axes, keepdims=self.keepdim, ddof=self.correction)

    def backward(self, xp, gy):
        x = self.saved
        n = 1
        for a in self.axes:
            n *= x.shape[a]
        centred = x - x.mean(axis=self.axes, keepdims=True)
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (g * centred * (2.0 / (n - self.correction)),)


class AMax(_Unary):
    """max/min over axes; ties share the gradient evenly (PyTorch's amax/amin rule)."""
    name = "amax"

    def __init__(self, axes, keepdim, largest):
        self.axes, self.keepdim, self.largest = axes, keepdim, largest

    def forward(self, xp, x):
        y = (x.max if self.largest else x.min)(axis=self.axes, keepdims=True)
        self.saved = (x, y)
        return y if self.keepdim else y.reshape([n for i, n in enumerate(x.shape) if i not in self.axes])

    def backward(self, xp, gy):
        x, y = self.saved
        mask = (x == y)
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (g * mask / mask.sum(axis=self.axes, keepdims=True),)


class MaxDim(_Unary):
    """max/min along one dim returning values; gradient goes to the arg-extremum index."""
    name = "max_dim"

    def __init__(self, axis, keepdim, largest):
        self.axis, self.keepdim, self.largest = axis, keepdim, largest

    def forward(self, xp, x):
        idx = (x.argmax if self.largest else x.argmin)(axis=self.axis)
        idx = xp.expand_dims(idx, self.axis)
        y = xp.take_along_axis(x, idx, axis=self.axis)
        self.saved = (x.shape, idx)
        self.indices = idx if self.keepdim else idx.squeeze(self.axis)
        return y if self.keepdim else y.squeeze(self.axis)

    def backward(self, xp, gy):
        shape, idx = self.saved
        gk = gy if self.keepdim else xp.expand_dims(gy, self.axis)
        pos = xp.arange(shape[self.axis]).reshape([-1 if i == self.axis else 1 for i in range(len(shape))])
        return ((pos == idx) * gk,)


MaxResult = collections.namedtuple("MaxResult", ["values", "indices"])


def sum(x, dim=None, keepdim=False):
    """Sum over ``dim`` (int, tuple or None for all)."""
    return Sum(_axes("sum", dim, x.ndim), keepdim).apply(x)


def mean(x, dim=None, keepdim=False):
    """Arithmetic mean over ``dim``."""
    if x.dtype.kind not in "fc":
        raise DTypeError(f"mean: expected a floating-point tensor, got {x.dtype}")
    return Mean(_axes("mean", dim, x.ndim), keepdim).apply(x)


def var(x, dim=None, keepdim=False, correction=1):
    """Variance ``sum((x - mean)^2) / (N - correction)`` over ``dim`` (Bessel by default)."""
    return Var(_axes("var", dim, x.ndim), keepdim, correction).apply(x)


def _extreme(op, x, dim, keepdim, largest):
    if x.data.size == 0:
        raise ShapeError(f"{op}: cannot reduce an empty tensor")
    if dim is None:
        return AMax(_axes(op, None, x.ndim), keepdim, largest).apply(x)
    fn = MaxDim(_axes(op, dim, x.ndim)[0], keepdim, largest)
    values = fn.apply(x)
    return MaxResult(values, Tensor._wrap(fn.indices))


def max(x, dim=None, keepdim=False):
    """Largest value; with ``dim`` returns ``(values, indices)`` like PyTorch."""
    return _extreme("max", x, dim, keepdim, True)


def min(x, dim=None, keepdim=False):
    """Smallest value; with ``dim`` returns ``(values, indices)`` like PyTorch."""
    return _extreme("min", x, dim, keepdim, False)


def amax(x, dim=None, keepdim=False):
    """Largest value over ``dim`` (int or tuple); ties share the gradient."""
    return AMax(_axes("amax", dim, x.ndim), keepdim, True).apply(x)


def amin(x, dim=None, keepdim=False):
    """Smallest value over ``dim`` (int or tuple); ties share the gradient."""
    return AMax(_axes("amin", dim, x.ndim), keepdim, False).apply(x)


def argmax(x, dim=None, keepdim=False):
    """Index of the largest value (int64, not differentiable)."""
    if dim is None:
        return Tensor._wrap(x.data.argmax().astype(numpy.int64))
    ax = _axes("argmax", dim, x.ndim)[0]
    return Tensor._wrap(x.data.argmax(axis=ax, keepdims=keepdim).astype(numpy.int64))


def argmin(x, dim=None, keepdim=False):
    """Index of the smallest value (int64, not differentiable)."""
    if dim is None:
        return Tensor._wrap(x.data.argmin().astype(numpy.int64))
    ax = _axes("argmin", dim, x.ndim)[0]
    return Tensor._wrap(x.data.argmin(axis=ax, keepdims=keepdim).astype(numpy.int64))
