"""Reductions: sum, mean, prod, var, std, max/min (with and without ``dim``), amax/amin,
argmax/argmin, logsumexp, norm, all, any.

Backward broadcasts the gradient back over the reduced dims. ``max``/``min``/``amax``/``amin``
over several elements share the gradient evenly among ties (PyTorch's rule);
``max(dim)``/``min(dim)`` send it to the returned index. Formulas:
``d var = 2 (x - mean) / (N - correction)``, ``d logsumexp = softmax(x)``,
``d prod = prod / x`` (computed without dividing where x has zeros),
``d ||x||_p = sign(x) |x|^(p-1) / ||x||_p^(p-1)`` (0 where the norm is 0).
"""
import collections

import numpy

from .. import backend, dtypes
from ..autograd import Op
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from .util import check_tensor, dim_index, dims_tuple


def _expand(xp, g, shape, axes, keepdim):
    """Broadcast gradient ``g`` of a reduction over ``axes`` back to the input ``shape``."""
    if not keepdim and axes and shape:
        g = xp.expand_dims(g, axes)
    return xp.broadcast_to(g, shape)


class _Reduction(Op):
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axes, keepdim):
        self.axes, self.keepdim = axes, keepdim


class Sum(_Reduction):
    name = "sum"

    def __init__(self, axes, keepdim, dtype=None):
        self.axes, self.keepdim, self.dtype = axes, keepdim, dtype

    def forward(self, xp, x):
        self.shape = x.shape
        return xp.asarray(x.sum(axis=self.axes, keepdims=self.keepdim, dtype=self.dtype))

    def backward(self, xp, gy):
        return (_expand(xp, gy, self.shape, self.axes, self.keepdim),)


class Mean(Sum):
    name = "mean"

    def forward(self, xp, x):
        self.shape = x.shape
        return xp.asarray(x.mean(axis=self.axes, keepdims=self.keepdim, dtype=self.dtype))

    def backward(self, xp, gy):
        n = 1
        for a in self.axes:
            n *= self.shape[a]
        return (_expand(xp, gy / (n if n > 0 else 1), self.shape, self.axes, self.keepdim),)


class Prod(_Reduction):
    """Product over axes. Backward (PyTorch's rule): ``prod / x`` where the slice has no
    zero; with exactly one zero only that element gets ``prod(others)``; with more, zero."""
    name = "prod"

    def __init__(self, axes, keepdim, dtype=None):
        self.axes, self.keepdim, self.dtype = axes, keepdim, dtype

    def forward(self, xp, x):
        self.save_for_backward(x)
        return xp.asarray(x.prod(axis=self.axes, keepdims=self.keepdim, dtype=self.dtype))

    def backward(self, xp, gy):
        (x,) = self.saved
        axes = self.axes
        g = _expand(xp, gy, x.shape, axes, self.keepdim)
        zero = x == 0
        zeros = xp.sum(xp.where(zero, xp.ones_like(x), xp.zeros_like(x)), axis=axes, keepdims=True)
        safe = xp.where(zero, xp.ones_like(x), x)
        nonzero_prod = xp.prod(safe, axis=axes, keepdims=True)  # product of the nonzero entries
        d = xp.where(zeros == 0, nonzero_prod / safe,
                     xp.where((zeros == 1) & zero, nonzero_prod, xp.zeros_like(x)))
        return (g * d,)


class AMax(_Reduction):
    """max/min over axes; ties share the gradient evenly (PyTorch's amax/amin rule)."""
    name = "amax"

    def __init__(self, axes, keepdim, largest):
        self.axes, self.keepdim, self.largest = axes, keepdim, largest

    def forward(self, xp, x):
        y = (x.max if self.largest else x.min)(axis=self.axes, keepdims=True)
        self.save_for_backward(x, y)
        return xp.asarray(y if self.keepdim else y.reshape([n for i, n in enumerate(x.shape) if i not in self.axes]))

    def backward(self, xp, gy):
        x, y = self.saved
        mask = x == y
        count = xp.sum(xp.where(mask, xp.ones_like(x), xp.zeros_like(x)), axis=self.axes, keepdims=True)
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (xp.where(mask, g, xp.zeros_like(g)) / count,)


class MaxDim(_Reduction):
    """max/min along one dim; the gradient goes to the returned (first) arg-extremum."""
    name = "max_dim"

    def __init__(self, axis, keepdim, largest):
        self.axis, self.keepdim, self.largest = axis, keepdim, largest

    def forward(self, xp, x):
        idx = xp.expand_dims((x.argmax if self.largest else x.argmin)(axis=self.axis), self.axis)
        y = xp.take_along_axis(x, idx, axis=self.axis)
        self.save_for_backward(idx)
        self.shape = x.shape
        self.indices = idx if self.keepdim else idx.squeeze(self.axis)
        return y if self.keepdim else y.squeeze(self.axis)

    def backward(self, xp, gy):
        (idx,) = self.saved
        from .gather import ScatterAddInto
        gk = gy if self.keepdim else xp.expand_dims(gy, self.axis)
        return (ScatterAddInto(self.shape, self.axis).call(xp, gk, idx),)


MaxResult = collections.namedtuple("MaxResult", ["values", "indices"])  # torch.return_types.max


# ---- public functions -----------------------------------------------------------------
def _check(op, input):
    check_tensor(op, "input", input)
    return input


def _sum_dtype(x, dtype, op):
    if dtype is not None:
        return dtypes.as_dtype(dtype, op)
    return dtypes.int64 if x.array.dtype.kind in "biu" else None


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (an int, a tuple, or None for all); bool and integer tensors sum as int64.

    Raises:
        IndexOutOfRangeError: a dim out of range.
    """
    _check("sum", input)
    dt = _sum_dtype(input, dtype, "sum")
    return Sum(dims_tuple("sum", dim, input.ndim), keepdim, dt).apply(input)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim``.

    Raises:
        DTypeError: an integer or bool input without a float ``dtype``.
    """
    _check("mean", input)
    dt = dtypes.as_dtype(dtype, "mean")
    if (dt or input.dtype).kind != "f":
        raise DTypeError(f"mean: could not infer the output dtype: input must be floating-point or a float "
                         f"dtype= given, got {input.dtype}")
    return Mean(dims_tuple("mean", dim, input.ndim), keepdim, dt).apply(input)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over ``dim`` (one int, or None for all); integers multiply as int64."""
    _check("prod", input)
    dt = _sum_dtype(input, dtype, "prod")
    axes = dims_tuple("prod", dim, input.ndim)
    return Prod(axes, keepdim, dt).apply(input)


def _extreme(op, input, dim, keepdim, largest):
    if input.array.size == 0:
        raise ShapeError(f"{op}: cannot reduce an empty tensor")
    if dim is None:
        return AMax(dims_tuple(op, None, input.ndim), keepdim, largest).apply(input)
    fn = MaxDim(dim_index(op, dim, input.ndim), keepdim, largest)
    values = fn.apply(input)
    return MaxResult(values, Tensor._wrap(fn.indices.astype(numpy.int64, copy=False)))


def max(input, dim=None, keepdim=False):
    """The largest value; with ``dim`` a ``(values, indices)`` named tuple; with a tensor
    in ``dim``'s place, the elementwise :func:`maximum`.

    Raises:
        ShapeError: an empty input.
    """
    _check("max", input)
    if isinstance(dim, Tensor):
        from .select import maximum
        return maximum(input, dim)
    return _extreme("max", input, dim, keepdim, True)


def min(input, dim=None, keepdim=False):
    """The smallest value; with ``dim`` a ``(values, indices)`` named tuple; with a tensor
    in ``dim``'s place, the elementwise :func:`minimum`."""
    _check("min", input)
    if isinstance(dim, Tensor):
        from .select import minimum
        return minimum(input, dim)
    return _extreme("min", input, dim, keepdim, False)


def amax(input, dim=(), keepdim=False):
    """The largest value over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    _check("amax", input)
    return AMax(dims_tuple("amax", dim if dim != () else None, input.ndim), keepdim, True).apply(input)


def amin(input, dim=(), keepdim=False):
    """The smallest value over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    _check("amin", input)
    return AMax(dims_tuple("amin", dim if dim != () else None, input.ndim), keepdim, False).apply(input)


def _arg(op, input, dim, keepdim, largest):
    _check(op, input)
    if input.array.size == 0:
        raise ShapeError(f"{op}: cannot reduce an empty tensor")
    a = input.array
    fn = a.argmax if largest else a.argmin
    if dim is None:
        out = fn()
        if keepdim:
            out = out.reshape((1,) * a.ndim)
    else:
        out = fn(axis=dim_index(op, dim, a.ndim), keepdims=keepdim)
    return Tensor._wrap(backend.array_module(a).asarray(out).astype(numpy.int64, copy=False))


def argmax(input, dim=None, keepdim=False):
    """Index of the (first) largest value, over all elements or along ``dim`` (int64)."""
    return _arg("argmax", input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False):
    """Index of the (first) smallest value, over all elements or along ``dim`` (int64)."""
    return _arg("argmin", input, dim, keepdim, False)


def _truth(op, input, dim, keepdim, how):
    _check(op, input)
    a = input.array
    axes = None if dim is None else dims_tuple(op, dim, a.ndim)
    xp = backend.array_module(a)
    return Tensor._wrap(xp.asarray(getattr(a.astype(bool, copy=False), how)(axis=axes, keepdims=keepdim)))


def all(input, dim=None, keepdim=False):
    """True when every element (along ``dim``) is nonzero; a bool tensor."""
    return _truth("all", input, dim, keepdim, "all")


def any(input, dim=None, keepdim=False):
    """True when some element (along ``dim``) is nonzero; a bool tensor."""
    return _truth("any", input, dim, keepdim, "any")


def count_nonzero(input, dim=None):
    """Number of nonzero elements (along ``dim``), int64."""
    _check("count_nonzero", input)
    a = input.array
    axes = None if dim is None else dims_tuple("count_nonzero", dim, a.ndim)
    xp = backend.array_module(a)
    return Tensor._wrap(xp.asarray((a != 0).sum(axis=axes)).astype(numpy.int64))
