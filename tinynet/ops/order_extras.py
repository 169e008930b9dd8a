"""``nanmedian`` and ``combinations``, composed of :func:`sort`, :func:`gather` and indexing.

``nanmedian`` is the lower median of the non-NaN values: with ``k`` of them sorted
ascending, the ``(k - 1) // 2``-th (NaN when ``k = 0``). Along a ``dim`` it returns
``(values, indices)``, the index of the chosen element in the input, and the gradient goes
to it; over all elements it returns a 0-d tensor whose gradient ties share evenly (as
PyTorch's). ``combinations(x, r)`` lists the ``r``-element combinations of a 1-D tensor's
entries in lexicographic order of positions (``itertools.combinations``), with
``with_replacement`` those of ``itertools.combinations_with_replacement``.
"""
import collections
import itertools
import numbers

import numpy

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from .creation import tensor as _tensor
from .division import div
from .gather import gather
from .select import where
from .shape import flatten, squeeze
from .sorting import _nonempty_dim, _no_bool, sort
from .util import check_tensor, dim_index

NanmedianResult = collections.namedtuple("NanmedianResult", ["values", "indices"])  # torch.return_types.nanmedian


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


def combinations(input, r=2, with_replacement=False):
    """The ``r``-element combinations of the 1-D ``input``'s entries, as rows of a (C, r)
    tensor (an empty (0,) tensor for ``r = 0``, (0, r) when ``r`` exceeds the length).

    Raises:
        ArgumentTypeError: not a Tensor, r not an int.
        ShapeError: ``input`` not 1-D.
        ArgumentError: ``r`` negative.
    """
    check_tensor("combinations", "input", input)
    if input.ndim != 1:
        raise ShapeError(f"combinations: expect a 1-D vector, got shape {tuple(input.shape)}")
    if isinstance(r, bool) or not isinstance(r, numbers.Integral):
        raise ArgumentTypeError(f"combinations: r must be an int, got {type(r).__name__}")
    if r < 0:
        raise ArgumentError(f"combinations: r must be non-negative, got {r}")
    if r == 0:
        return input[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = numpy.array(list(pick(range(input.shape[0]), r)), dtype=numpy.int64).reshape(-1, r)
    return input[_tensor(rows, device=input.device)]



def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of the flat (row-major) ``indices``: a tuple
    of int64 tensors of the indices' shape, one per dim. As PyTorch, indices outside
    ``[0, prod(shape))`` wrap around (taken modulo the size).

    Raises:
        ArgumentTypeError: not a Tensor, or ``shape`` not an int or ints.
        DTypeError: non-integer indices.
        ArgumentError: a negative size.
    """
    from ..errors import DTypeError
    from .division import floor_divide, remainder
    check_tensor("unravel_index", "indices", indices)
    if indices.array.dtype.kind not in "iu":
        raise DTypeError(f"unravel_index: expected 'indices' to be integer dtype, got {indices.dtype}")
    sizes = (shape,) if isinstance(shape, numbers.Integral) and not isinstance(shape, bool) else shape
    if not isinstance(sizes, (tuple, list)) or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                                    for v in sizes):
        raise ArgumentTypeError(f"unravel_index: shape must be an int or a sequence of ints, got {shape!r}")
    if any(v < 0 for v in sizes):
        raise ArgumentError(f"unravel_index: 'shape' cannot have negative values, got {list(sizes)}")
    total = int(numpy.prod(sizes, dtype=numpy.int64))
    rest = remainder(indices.long(), total) if total else indices.long()
    coords = []
    for size in reversed(sizes):
        coords.append(remainder(rest, size) if size else rest * 0)
        rest = floor_divide(rest, size) if size else rest * 0
    return tuple(reversed(coords))
