"""Sorting and order statistics along one dim: ``sort``, ``argsort``, ``msort``, ``topk``,
``kthvalue``, ``median``.

Each op that returns values picks elements of its input at indices it computes
(:class:`Pick`): the values are differentiable and their gradient is added back at the
source positions with :class:`~tinynet.ops.gather.ScatterAddInto`, so they can be
differentiated twice; the indices are int64 tensors that never require grad.
``median()`` of all elements shares its gradient evenly among the elements equal to the
median, as PyTorch does.

Order rules (PyTorch's): NaN sorts above every number (last ascending, first descending;
``topk`` counts NaN as the largest, ``kthvalue`` and ``median`` see it last), and
``median``/``median(dim)`` of a slice holding a NaN is NaN, at the first NaN's index. The
lower median is taken for even counts. Every order here comes from one stable sort, so
tied elements keep their input order; PyTorch guarantees that only with ``stable=True``,
and with ``stable=False``, in ``topk``, ``kthvalue`` and ``median(dim)`` the index it
reports among tied values may differ (the values never do). ``topk(sorted=False)``
returns sorted values.
"""
import collections

import numpy

from ..dtypes import is_floating
from .. import backend
from ..autograd import Op
from ..errors import ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .gather import ScatterAddInto
from .util import check_int, check_real, check_tensor, dim_index

# torch.return_types.<name>: (values, indices)
SortResult = collections.namedtuple("sort", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)
TopKResult = collections.namedtuple("topk", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)
KthValueResult = collections.namedtuple("kthvalue", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)
MedianResult = collections.namedtuple("median", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)
ModeResult = collections.namedtuple("mode", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)


def stable_order(xp, x, axis, descending=False):
    """Stable argsort of ``x`` along ``axis``, NaN above every number. Descending flips
    the input, sorts ascending and flips back, so ties keep their input order."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    idx = xp.argsort(xp.flip(x, axis), axis=axis, kind="stable")
    return xp.flip(n - 1 - idx, axis)


def _first(idx, axis, start, stop):
    """``idx[start:stop]`` along ``axis``."""
    return idx[(slice(None),) * axis + (slice(start, stop),)]


class Pick(Op):
    """Values of ``x`` at indices that ``choose(xp, x)`` computes along ``axis`` (an index
    array of x's number of dims); the gradient is added back at those indices. With
    ``keepdim=False`` the axis (of size 1 then) is dropped. A 0-d input is handled as
    one element. ``self.indices`` holds the indices (shaped like the values) after forward."""
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis, keepdim=True):
        self.axis, self.keepdim = axis, keepdim

    def choose(self, xp, x):
        raise NotImplementedError

    def forward(self, xp, x):
        self.scalar = x.ndim == 0
        if self.scalar:
            x = x.reshape(1)
        self.shape = x.shape
        idx = self.choose(xp, x)
        y = xp.take_along_axis(x, idx, axis=self.axis)
        self.save_for_backward(idx)
        if not self.keepdim:
            idx, y = idx.squeeze(self.axis), y.squeeze(self.axis)
        if self.scalar:
            idx, y = idx.reshape(()), y.reshape(())
        self.indices = idx
        return y

    def backward(self, xp, gy):
        (idx,) = self.saved
        if self.scalar:
            gy = xp.reshape(gy, (1,))
        elif not self.keepdim:
            gy = xp.expand_dims(gy, self.axis)
        gx = ScatterAddInto(self.shape, self.axis).call(xp, gy, idx)
        return (xp.reshape(gx, ()) if self.scalar else gx,)


class Sort(Pick):
    name = "sort"

    def __init__(self, axis, descending):
        super().__init__(axis)
        self.descending = descending

    def choose(self, xp, x):
        return stable_order(xp, x, self.axis, self.descending)


class TopK(Pick):
    name = "topk"

    def __init__(self, axis, k, largest):
        super().__init__(axis)
        self.k, self.largest = k, largest

    def choose(self, xp, x):
        return _first(stable_order(xp, x, self.axis, self.largest), self.axis, 0, self.k)


class KthValue(Pick):
    """The ``k``-th smallest (1-based) along ``axis``; ``median(dim)`` with ``median=True``
    (the lower median, or the first NaN of a slice that has one)."""
    name = "kthvalue"

    def __init__(self, axis, k, keepdim, median=False):
        super().__init__(axis, keepdim)
        self.k, self.median = k, median

    def choose(self, xp, x):
        idx = _first(stable_order(xp, x, self.axis), self.axis, self.k - 1, self.k)
        if self.median and is_floating(x.dtype) and x.size:
            nan = xp.isnan(x)
            first_nan = xp.expand_dims(xp.argmax(nan, axis=self.axis), self.axis)
            idx = xp.where(xp.any(nan, axis=self.axis, keepdims=True), first_nan, idx)
        return idx


class Median(Op):
    """The lower median of all elements (NaN if any element is NaN, NaN for an empty
    input). Backward: the gradient shared evenly among the elements equal to the median
    (the NaNs when it is NaN), PyTorch's rule."""
    name = "median"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x):
        flat = x.reshape(-1)
        n = flat.size
        if n == 0:
            y = xp.asarray(numpy.nan, dtype=x.dtype)
        else:
            y = xp.partition(flat, (n - 1) // 2)[(n - 1) // 2]
            if is_floating(x.dtype):
                y = xp.where(xp.any(xp.isnan(flat)), xp.asarray(numpy.nan, dtype=x.dtype), y)
        y = xp.asarray(y, dtype=x.dtype).reshape(())
        if self.needs_input_grad[0]:
            mask = (x == y) | (xp.isnan(x) & xp.isnan(y))
            self.count = max(int(mask.sum()), 1)
            self.save_for_backward(mask)
        return y

    def backward(self, xp, gy):
        (mask,) = self.saved
        g = xp.broadcast_to(gy, mask.shape)
        return (xp.where(mask, g, xp.zeros_like(g)) / self.count,)


# ---- public functions -----------------------------------------------------------------
def _flag(op, name, v, none_ok=False):
    if v is None and none_ok:
        return False
    if not isinstance(v, (bool, numpy.bool_)):
        raise ArgumentTypeError(f"{op}: {name} must be a bool, got {type(v).__name__}")
    return bool(v)


def _dim_size(input, d):
    return input.shape[d] if input.ndim else 1


def _nonempty_dim(op, input, d):
    if _dim_size(input, d) == 0:
        raise IndexOutOfRangeError(f"{op}: expected reduction dim {d} to have non-zero size, "
                                   f"got input of shape {tuple(input.shape)}")


def _no_bool(op, input):
    if input.dtype.kind == "b":
        raise DTypeError(f"{op}: bool tensors are not supported (as in PyTorch on the CPU), got {input.dtype}")


def _with_indices(result_type, fn, input):
    values = fn.apply(input)
    return result_type(values, Tensor._wrap(fn.indices.astype(numpy.int64, copy=False)))


def sort(input, dim=-1, descending=False, *, stable=False):
    """Sort ``input`` along ``dim``: a ``(values, indices)`` named tuple with
    ``values == input.gather(dim, indices)``.

    Args:
        input: a tensor of any dtype. dim (int): default -1. descending (bool): default
            False. stable (bool or None, keyword-only as in PyTorch): ties keep their input
            order. tinynet always sorts stably, so ``stable=False`` gives the same order
            (PyTorch may order ties differently then).

    Returns:
        values (input's dtype and shape, differentiable), indices (int64). NaN sorts last
        (first when descending).

    Raises:
        ArgumentTypeError: input not a Tensor, dim not an int, a flag not a bool.
        IndexOutOfRangeError: dim out of range.
    """
    check_tensor("sort", "input", input)
    d = dim_index("sort", dim, input.ndim)
    desc = _flag("sort", "descending", descending)
    _flag("sort", "stable", stable, none_ok=True)
    return _with_indices(SortResult, Sort(d, desc), input)


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The int64 indices that sort ``input`` along ``dim`` (``sort(...).indices``); stable
    always (see :func:`sort`). ``stable`` is keyword-only, as in PyTorch.

    Raises:
        ArgumentTypeError, IndexOutOfRangeError: as :func:`sort`.
    """
    check_real("argsort", "input", check_tensor("argsort", "input", input))
    d = dim_index("argsort", dim, input.ndim)
    desc = _flag("argsort", "descending", descending)
    _flag("argsort", "stable", stable, none_ok=True)
    a = input.array
    xp = backend.array_module(a)
    if a.ndim == 0:
        return Tensor._wrap(xp.zeros((), dtype=numpy.int64))
    idx = stable_order(xp, a, d, desc)
    return Tensor._wrap(idx.astype(numpy.int64, copy=False))


def msort(input):
    """``input`` sorted along its first dim (``sort(input, dim=0).values``), differentiable.

    Raises:
        ArgumentTypeError: input not a Tensor.
    """
    check_tensor("msort", "input", input)
    return Sort(0, False).apply(input)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim``, as a
    ``(values, indices)`` named tuple, in descending (ascending) order. NaN counts as the
    largest value. ``sorted=False`` is accepted and still returns them sorted.

    Args:
        input: a non-bool tensor. k (int): ``0 <= k <= input.size(dim)`` (a 0-d input
            takes 0 or 1 and returns itself). dim (int): default -1.

    Returns:
        values (differentiable) and int64 indices, input's shape with ``k`` in ``dim``.

    Raises:
        ArgumentTypeError: k or dim not an int (a float, a bool), a flag not a bool.
        IndexOutOfRangeError: dim out of range; k out of range.
        DTypeError: a bool input (as PyTorch on the CPU).
    """
    check_tensor("topk", "input", input)
    k = check_int("topk", "k", k)
    d = dim_index("topk", dim, input.ndim)
    largest = _flag("topk", "largest", largest)
    _flag("topk", "sorted", sorted)
    _no_bool("topk", input)
    n = _dim_size(input, d)
    if not 0 <= k <= n:
        raise IndexOutOfRangeError(f"topk: selected index k out of range: k must be in [0, {n}] "
                                   f"(the size of dim {dim}), got {k}")
    if input.ndim == 0:
        k = 1  # PyTorch returns the 0-d input for k = 0 and k = 1
    return _with_indices(TopKResult, TopK(d, k, largest), input)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index, as a
    ``(values, indices)`` named tuple. NaN counts as larger than every number.

    Args:
        input: a non-bool tensor. k (int): ``1 <= k <= input.size(dim)``. dim (int):
            default -1. keepdim (bool): keep ``dim`` with size 1.

    Raises:
        ArgumentTypeError: k or dim not an int, keepdim not a bool.
        IndexOutOfRangeError: dim out of range, k out of range, an empty ``dim``.
        DTypeError: a bool input.
    """
    check_tensor("kthvalue", "input", input)
    k = check_int("kthvalue", "k", k)
    d = dim_index("kthvalue", dim, input.ndim)
    keepdim = _flag("kthvalue", "keepdim", keepdim)
    _no_bool("kthvalue", input)
    _nonempty_dim("kthvalue", input, d)
    n = _dim_size(input, d)
    if not 1 <= k <= n:
        raise IndexOutOfRangeError(f"kthvalue: selected number k out of range for dimension {dim}: "
                                   f"k must be in [1, {n}], got {k}")
    return _with_indices(KthValueResult, KthValue(d, k, keepdim), input)


def median(input, dim=None, keepdim=False):
    """``median(input)``: the lower median of all elements (the ``(n - 1) // 2``-th
    smallest; NaN when an element is NaN or the input is empty), a 0-d tensor whose
    gradient ties share evenly. ``median(input, dim, keepdim=False)``: the lower median
    along ``dim`` as a ``(values, indices)`` named tuple (NaN at the first NaN's index
    where a slice has one); the gradient goes to the returned index.

    Raises:
        ArgumentTypeError: dim not an int, keepdim not a bool, keepdim without dim.
        IndexOutOfRangeError: dim out of range; an empty ``dim``.
        DTypeError: a bool input.
        ShapeError: the median of all elements of an empty integer tensor (PyTorch
            returns an arbitrary number there).
    """
    check_tensor("median", "input", input)
    keepdim = _flag("median", "keepdim", keepdim)
    _no_bool("median", input)
    if dim is None:
        if keepdim:
            raise ArgumentTypeError("median: keepdim=True needs a dim (median(input, dim, keepdim=True))")
        if input.numel() == 0 and not is_floating(input.dtype):
            raise ShapeError(f"median: cannot take the median of an empty {input.dtype} tensor")
        return Median().apply(input)
    d = dim_index("median", dim, input.ndim)
    _nonempty_dim("median", input, d)
    n = _dim_size(input, d)
    return _with_indices(MedianResult, KthValue(d, (n + 1) // 2, keepdim, median=True), input)


def _mode_indices(xp, rows):
    """The index of the last occurrence of each row's most frequent value (the smallest one of
    equal counts), as PyTorch's ``mode`` picks them: runs of the sorted row, counted by bincount."""
    m, n = rows.shape
    s = xp.sort(rows, axis=1)
    start = xp.concatenate([xp.ones((m, 1), dtype=bool), s[:, 1:] != s[:, :-1]], axis=1)
    run = xp.cumsum(start, axis=1) - 1 + xp.arange(m).reshape(-1, 1) * n  # a run id unique over the rows
    lengths = xp.bincount(run.reshape(-1), minlength=m * n).reshape(m, n)
    best = xp.argmax(lengths, axis=1) + xp.arange(m) * n  # the first longest run: the smallest value
    value = s.reshape(-1)[xp.argmax(run == best.reshape(-1, 1), axis=1) + xp.arange(m) * n]
    hit = rows == value.reshape(-1, 1)
    return n - 1 - xp.argmax(hit[:, ::-1], axis=1)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence, as a ``(values, indices)`` named tuple; the gradient goes to
    that index.

    Raises:
        IndexOutOfRangeError: ``dim`` out of range or an empty ``dim``. ArgumentTypeError: keepdim not a bool.
    """
    from .gather import gather
    check_tensor("mode", "input", input)
    d = dim_index("mode", dim, input.ndim)
    keepdim = _flag("mode", "keepdim", keepdim)
    _nonempty_dim("mode", input, d)
    xp = backend.array_module(input.array)
    if input.ndim == 0:
        return ModeResult(input.clone(), Tensor._wrap(xp.zeros((), dtype=numpy.int64)))
    a = xp.moveaxis(input.array, d, -1)
    idx = _mode_indices(xp, a.reshape(-1, a.shape[-1])).astype(numpy.int64).reshape(a.shape[:-1])
    idx = Tensor._wrap(xp.expand_dims(idx, d))
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return ModeResult(values, idx)
