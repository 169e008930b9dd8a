"""Reductions: sum, mean, prod, max/min (with and without ``dim``), amax/amin, aminmax,
argmax/argmin, all, any, count_nonzero (var, std, logsumexp, norm: :mod:`.stats`; the NaN-skipping
ones: :mod:`.reduction_nan`).

Backward broadcasts the gradient back over the reduced dims. ``max``/``min``/``amax``/``amin``
over several elements share the gradient evenly among ties (PyTorch's rule);
``max(dim)``/``min(dim)`` send it to the returned index.
``d prod = prod / x`` (computed without dividing where x has zeros).

Differences from PyTorch: ``prod`` also takes a tuple of dims; the second derivative of
``prod`` is exact except for slices holding a zero whose (elements x slice length) exceeds
2**24 (then the backward is exact but not differentiated further); float16 inputs reduce
in float16 (PyTorch accumulates some in float32).
"""
import collections

import numpy

from ..dtypes import is_floating
from .. import backend, dtypes
from ..autograd import Op
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .util import check_flag, check_real, check_tensor, dim_index, dims_tuple, is_graph


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
    complex_ok = True  # linear (Mean too)

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
    """Product over axes. Backward: ``prod_{j != i} x_j`` for each element, computed as
    ``prod / x`` where the slice has no zero; when a slice has zeros, by multiplying the
    other elements explicitly (:func:`_others_product`), so the backward is exact and can be
    differentiated again (PyTorch's results: with one zero only that element gets a
    gradient, with two or more none does)."""
    name = "prod"

    def __init__(self, axes, keepdim, dtype=None):
        self.axes, self.keepdim, self.dtype = axes, keepdim, dtype

    def forward(self, xp, x):
        self.save_for_backward(x)
        return xp.asarray(x.prod(axis=self.axes, keepdims=self.keepdim, dtype=self.dtype))

    def backward(self, xp, gy):
        (x,) = self.saved
        g = _expand(xp, gy, x.shape, self.axes, self.keepdim)
        return (g * _others_product(xp, x, self.axes),)


_PAIRWISE_LIMIT = 1 << 24  # elements of the (slice x slice) products built for slices with zeros


def _others_product(xp, x, axes):
    """``prod_{j != i} x_j`` over the slices along ``axes``, for every element ``i``."""
    zero = x == 0
    safe = xp.where(zero, xp.ones_like(x), x)
    total = xp.prod(safe, axis=axes, keepdims=True)
    n, size = 1, 1
    for a in axes:
        n *= x.shape[a]
    for s in x.shape:
        size *= s
    if not size or not bool((zero.array if is_graph(xp) else zero).any()):
        return total / safe
    if size * n > _PAIRWISE_LIMIT:  # too large to multiply out: exact values, first order only
        zeros = xp.sum(xp.where(zero, xp.ones_like(x), xp.zeros_like(x)), axis=axes, keepdims=True)
        return xp.where(zeros == 0, total / safe, xp.where((zeros == 1) & zero, total, xp.zeros_like(x)))
    keep = tuple(d for d in range(x.ndim) if d not in axes)
    order = keep + tuple(axes)
    rows = xp.reshape(xp.transpose(x, order), tuple(x.shape[d] for d in keep) + (n,))
    mod = backend.array_module(rows.array if is_graph(xp) else rows)
    eye = mod.eye(n, dtype=bool)
    if is_graph(xp):
        eye = Tensor._wrap(eye)
    grid = xp.broadcast_to(xp.expand_dims(rows, rows.ndim - 1), rows.shape[:-1] + (n, n))
    others = xp.prod(xp.where(eye, xp.ones_like(grid), grid), axis=grid.ndim - 1)  # row i skips element i
    back = xp.reshape(others, tuple(x.shape[d] for d in order))
    return xp.transpose(back, tuple(int(i) for i in numpy.argsort(order)))


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
        self.shape = x.shape
        scalar = x.ndim == 0
        if scalar:
            x = x.reshape(1)
        idx = xp.expand_dims((x.argmax if self.largest else x.argmin)(axis=self.axis), self.axis)
        y = xp.take_along_axis(x, idx, axis=self.axis)
        self.save_for_backward(idx)
        if scalar:
            self.indices = idx.reshape(())
            return y.reshape(())
        self.indices = idx if self.keepdim else idx.squeeze(self.axis)
        return y if self.keepdim else y.squeeze(self.axis)

    def backward(self, xp, gy):
        (idx,) = self.saved
        from .gather import ScatterAddInto
        if not self.shape:
            return (gy,)
        gk = gy if self.keepdim else xp.expand_dims(gy, self.axis)
        return (ScatterAddInto(self.shape, self.axis).call(xp, gk, idx),)


MaxResult = collections.namedtuple("MaxResult", ["values", "indices"])  # torch.return_types.max
AminmaxResult = collections.namedtuple("AminmaxResult", ["min", "max"])  # torch.return_types.aminmax


# ---- public functions -----------------------------------------------------------------
def _check(op, input):
    check_tensor(op, "input", input)
    return input


def _sum_dtype(x, dtype, op):
    if dtype is not None:
        return dtypes.as_dtype(dtype, op)
    return dtypes.int64 if x.array.dtype.kind in "biu" else None


def _all_dims(dim):
    """PyTorch reads an empty ``dim`` (``()`` or ``[]``) of sum, mean, var, amax, ... as all dims."""
    return None if isinstance(dim, (tuple, list)) and not dim else dim


@autocast_op
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (an int, a tuple, or None/() for all); bool and integer tensors sum
    as int64 unless ``dtype`` says otherwise (the input is cast to it first).

    Raises:
        IndexOutOfRangeError: a dim out of range. ArgumentError: a repeated dim.
    """
    _check("sum", input)
    keepdim = check_flag("sum", "keepdim", keepdim)
    dt = _sum_dtype(input, dtype, "sum")
    if dt is not None and input.array.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(f"sum: a complex input cannot be summed as {dt}")
    return Sum(dims_tuple("sum", _all_dims(dim), input.ndim), keepdim, dt).apply(input)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim`` (an int, a tuple, or None/() for all); NaN over no elements.

    Raises:
        DTypeError: an integer or bool input without a float ``dtype``.
    """
    _check("mean", input)
    keepdim = check_flag("mean", "keepdim", keepdim)
    dt = dtypes.as_dtype(dtype, "mean")
    if not is_floating(dt or input.dtype) and (dt or input.dtype).kind != "c":
        raise DTypeError(f"mean: could not infer the output dtype: input must be floating-point or complex, or a "
                         f"float dtype= given, got {input.dtype}")
    if dt is not None and input.array.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(f"mean: a complex input cannot be averaged as {dt}")
    return Mean(dims_tuple("mean", _all_dims(dim), input.ndim), keepdim, dt).apply(input)


@autocast_op
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over ``dim`` (an int; tinynet also takes a tuple; None for all); bool and
    integer tensors multiply as int64."""
    _check("prod", input)
    keepdim = check_flag("prod", "keepdim", keepdim)
    dt = _sum_dtype(input, dtype, "prod")
    axes = dims_tuple("prod", dim, input.ndim)
    return Prod(axes, keepdim, dt).apply(input)


def _nonempty(op, input, axes):
    """Raise when a max/min/argmax reduction would reduce over no elements (PyTorch raises too)."""
    if input.array.size == 0:
        if axes is None:
            raise ShapeError(f"{op}: cannot reduce an empty tensor (shape {input.shape}) without a dim")
        for a in axes:
            if input.shape[a] == 0:
                raise IndexOutOfRangeError(f"{op}: expected reduction dim {a} to have non-zero size, got "
                                           f"shape {input.shape}")


def _extreme(op, input, dim, keepdim, largest):
    keepdim = check_flag(op, "keepdim", keepdim)
    if dim is None:
        _nonempty(op, input, None)
        return AMax(dims_tuple(op, None, input.ndim), keepdim, largest).apply(input)
    d = dim_index(op, dim, input.ndim)
    _nonempty(op, input, (d,) if input.ndim else ())
    fn = MaxDim(d, keepdim, largest)
    values = fn.apply(input)
    return MaxResult(values, Tensor._wrap(fn.indices.astype(numpy.int64, copy=False)))


def max(input, dim=None, keepdim=False):
    """The largest value (ties share the gradient); with ``dim`` a ``(values, indices)``
    named tuple (the gradient goes to the index); with a tensor in ``dim``'s place, the
    elementwise :func:`maximum`.

    Raises:
        ShapeError: an empty input without dim.
        IndexOutOfRangeError: ``dim`` out of range or of size 0.
    """
    _check("max", input)
    if isinstance(dim, Tensor):
        from .compare_extrema import maximum
        return maximum(input, dim)
    return _extreme("max", input, dim, keepdim, True)


def min(input, dim=None, keepdim=False):
    """The smallest value; with ``dim`` a ``(values, indices)`` named tuple; with a tensor
    in ``dim``'s place, the elementwise :func:`minimum`. Raises as :func:`max`."""
    _check("min", input)
    if isinstance(dim, Tensor):
        from .compare_extrema import minimum
        return minimum(input, dim)
    return _extreme("min", input, dim, keepdim, False)


def _amax(op, input, dim, keepdim, largest):
    _check(op, input)
    keepdim = check_flag(op, "keepdim", keepdim)
    axes = dims_tuple(op, _all_dims(dim), input.ndim)
    _nonempty(op, input, axes if dim not in (None, ()) else None)
    return AMax(axes, keepdim, largest).apply(input)


def amax(input, dim=(), keepdim=False):
    """The largest value over ``dim`` (int or tuple; all dims by default); ties share the gradient.

    Raises:
        IndexOutOfRangeError: a dim out of range or of size 0. ShapeError: an empty input.
    """
    return _amax("amax", input, dim, keepdim, True)


def amin(input, dim=(), keepdim=False):
    """The smallest value over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    return _amax("amin", input, dim, keepdim, False)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of ``input`` over ``dim`` (all elements when None), as a named tuple
    with fields ``min`` and ``max`` (PyTorch's ``torch.return_types.aminmax``).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: an empty input or dimension (no identity, as PyTorch).
    """
    _check("aminmax", input)
    how = () if dim is None else dim
    return AminmaxResult(amin(input, how, keepdim), amax(input, how, keepdim))


def _arg(op, input, dim, keepdim, largest):
    check_real(op, "input", _check(op, input))
    keepdim = check_flag(op, "keepdim", keepdim)
    a = input.array
    if a.dtype.kind == "b":
        raise DTypeError(f"{op}: bool tensors are not supported (as in PyTorch); convert with .int() first")
    fn = a.argmax if largest else a.argmin
    if dim is None:
        _nonempty(op, input, None)
        out = fn()
        if keepdim:
            out = out.reshape((1,) * a.ndim)
    else:
        d = dim_index(op, dim, a.ndim)
        _nonempty(op, input, (d,) if a.ndim else ())
        out = fn(axis=d, keepdims=keepdim) if a.ndim else fn()
    return Tensor._wrap(backend.array_module(a).asarray(out).astype(numpy.int64, copy=False))


def argmax(input, dim=None, keepdim=False):
    """Index of the (first) largest value, over all elements (of the flattened input) or
    along ``dim`` (int64).

    Raises:
        DTypeError: a bool input. IndexOutOfRangeError / ShapeError: as :func:`max`.
    """
    return _arg("argmax", input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False):
    """Index of the (first) smallest value, over all elements or along ``dim`` (int64)."""
    return _arg("argmin", input, dim, keepdim, False)


def _truth(op, input, dim, keepdim, how):
    _check(op, input)
    keepdim = check_flag(op, "keepdim", keepdim)
    a = input.array
    if isinstance(dim, (tuple, list)) and not dim:  # PyTorch: no dims, no reduction
        axes = ()
    else:
        axes = None if dim is None else dims_tuple(op, dim, a.ndim)
    xp = backend.array_module(a)
    out = xp.asarray(getattr(a.astype(bool, copy=False), how)(axis=axes, keepdims=keepdim))
    return Tensor._wrap(out.astype(a.dtype) if a.dtype == numpy.uint8 else out)  # uint8 stays uint8


def all(input, dim=None, keepdim=False):
    """True when every element (along ``dim``, an int or tuple) is nonzero; a bool tensor
    (uint8 for a uint8 input, as PyTorch)."""
    return _truth("all", input, dim, keepdim, "all")


def any(input, dim=None, keepdim=False):
    """True when some element (along ``dim``, an int or tuple) is nonzero; a bool tensor
    (uint8 for a uint8 input, as PyTorch)."""
    return _truth("any", input, dim, keepdim, "any")


def count_nonzero(input, dim=None):
    """Number of nonzero elements (along ``dim``, an int or tuple), int64."""
    _check("count_nonzero", input)
    a = input.array
    axes = dims_tuple("count_nonzero", _all_dims(dim), a.ndim)
    xp = backend.array_module(a)
    return Tensor._wrap(xp.asarray((a != 0).sum(axis=axes)).astype(numpy.int64))
