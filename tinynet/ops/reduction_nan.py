"""Reductions that skip NaN: ``nansum``, ``nanmean`` and ``nanmedian`` (``nanquantile``:
:mod:`.quantile`), composed of tinynet's differentiable ops.

``nansum`` counts NaNs as 0 (gradient ``grad * (not NaN)``: NaN where an infinite gradient
meets a NaN, as PyTorch's); ``nanmean`` is ``nansum / count`` of the
non-NaN values. ``nanmedian`` is the lower median of the non-NaN values: with ``k`` of them
sorted ascending, the ``(k - 1) // 2``-th (NaN when ``k = 0``), composed of :func:`sort`,
:func:`gather` and indexing. Along a ``dim`` it returns ``(values, indices)``, the index of
the chosen element in the input, and the gradient goes to it; over all elements it returns
a 0-d tensor whose gradient ties share evenly (as PyTorch's).
"""
import collections

from .. import dtypes
from ..autograd.node import Op
from ..dtypes import is_floating
from ..errors import ArgumentTypeError, DTypeError
from .compare import isnan
from .creation import tensor as _tensor
from .division import div
from .gather import gather
from .reduction import sum as _sum
from .select import where
from .shape import flatten, squeeze
from .sorting import _nonempty_dim, _no_bool, sort
from .util import check_real, check_tensor, dim_index

NanmedianResult = collections.namedtuple("NanmedianResult", ["values", "indices"])  # torch.return_types.nanmedian


class _NanToZero(Op):
    """``input`` with its NaNs replaced by 0; the gradient is ``grad * (input is not NaN)``, a
    product (as PyTorch's nansum backward), so an infinite incoming gradient (nanmean of an
    all-NaN row divides by a count of 0) gives NaN at the NaNs, not the 0 a select would give."""
    name = "nansum"
    twice_differentiable = True

    def forward(self, xp, a):
        keep = ~xp.isnan(a)
        self.save_for_backward(keep.astype(a.dtype))
        return xp.where(keep, a, xp.zeros((), a.dtype))

    def backward(self, xp, gy):
        return (gy * self.saved[0],)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """:func:`~tinynet.sum` with NaNs counted as 0 (gradient ``grad * (input is not NaN)``: 0 at
    them for a finite incoming gradient, NaN for an infinite one, as PyTorch).

    Raises:
        ArgumentTypeError: not a Tensor. IndexOutOfRangeError: a dim out of range.
        DTypeError: a complex tensor (as PyTorch).
    """
    check_real("nansum", "input", check_tensor("nansum", "input", input))
    x = _NanToZero().apply(input) if is_floating(input.array.dtype) else input
    return _sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values over ``dim`` (NaN where all are NaN).

    Raises:
        ArgumentTypeError: not a Tensor.
        DTypeError: a non-float tensor (as PyTorch).
    """
    check_tensor("nanmean", "input", input)
    if not is_floating(input.array.dtype):
        raise DTypeError(f"nanmean: expected input to have floating point dtype but got {input.dtype}")
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype, "nanmean")
    count = _sum(~isnan(input), dim, keepdim, dtype=input.dtype if dtype is None else dtype)
    return div(nansum(input, dim, keepdim, dtype=dtype), count)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values (NaN only where every value is NaN):
    ``nanmedian(input)`` a 0-d tensor, ``nanmedian(input, dim, keepdim=False)`` a
    ``(values, indices)`` named tuple along ``dim``.

    Raises:
        ArgumentTypeError: not a Tensor, keepdim without dim.
        DTypeError: a bool input.
        IndexOutOfRangeError: dim out of range, or an empty ``dim``.
    """
    check_tensor("nanmedian", "input", input)
    _no_bool("nanmedian", input)
    if dim is None:
        if keepdim:
            raise ArgumentTypeError("nanmedian: keepdim=True needs a dim (nanmedian(input, dim, keepdim=True))")
        x = flatten(input)
        if x.numel() == 0:
            return _tensor(float("nan"), dtype=input.dtype, device=input.device)
        picked = _pick(x, 0).detach()
        if not input.is_floating_point():
            return picked
        same = x == picked                       # the gradient is shared by the tied elements
        count = same.sum()
        share = div(where(same, x, 0).sum(), count.clamp(min=1))
        return where(count == 0, picked, share)
    d = dim_index("nanmedian", dim, input.ndim)
    _nonempty_dim("nanmedian", input, d)
    values, indices = _pick(input, d, with_indices=True)
    if not keepdim:
        values, indices = squeeze(values, d), squeeze(indices, d)
    return NanmedianResult(values, indices)


def _pick(input, d, with_indices=False):
    """The lower median of the non-NaN values along ``d`` (kept as a size-1 dim)."""
    ordered = sort(input, d)                                   # NaNs last
    valid = (~input.isnan()).sum(d, keepdim=True) if input.is_floating_point() else None
    n = input.shape[d] if input.ndim else 1
    at = ((valid - 1).clamp(min=0) // 2) if valid is not None else None
    if at is None:
        at = _tensor((n - 1) // 2, device=input.device).reshape((1,) * max(input.ndim, 1))
        shape = list(input.shape)
        shape[d] = 1
        at = at.expand(*shape)
    values = gather(ordered.values, d, at)
    if valid is not None:  # an all-NaN slice: NaN (its index: the slice's first position)
        values = where(valid == 0, float("nan"), values)
    if not with_indices:
        return values.reshape(()) if input.ndim <= 1 else values
    return values, gather(ordered.indices, d, at)
