"""Grids, index sets and combinations (the rest of PyTorch's "other operations" that build
coordinates): ``meshgrid``, ``cartesian_prod``, ``combinations``, ``unravel_index``,
``tril_indices``/``triu_indices`` and ``vander``.

``meshgrid`` expands views of its 1-D inputs (differentiable); ``cartesian_prod`` stacks the
flattened ``"ij"`` grids. ``combinations(x, r)`` lists the ``r``-element combinations of a
1-D tensor's entries in lexicographic order of positions (``itertools.combinations``; with
``with_replacement`` those of ``itertools.combinations_with_replacement``), read by
indexing (so differentiable). ``unravel_index`` and the triangle indices are integer
tensors; ``vander`` stacks the powers of ``x`` (differentiable).
"""
import itertools
import numbers

import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .creation import tensor as _tensor
from .arith import mul
from .division import floor_divide, remainder
from .join import stack
from .shape import expand, reshape
from .util import check_int, check_tensor


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors (PyTorch's default ``indexing="ij"``: the first
    tensor varies along dim 0; ``"xy"`` swaps the first two, as NumPy's default).
    Differentiable (each grid is an expanded view of its input).

    Raises:
        ArgumentTypeError: a non-Tensor input.
        ArgumentError: an unknown ``indexing``, or an input that is not 0-D or 1-D.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = "ij" if indexing is None else indexing
    if not isinstance(indexing, str) or indexing not in ("ij", "xy"):
        raise ArgumentError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for i, t in enumerate(tensors):
        check_tensor("meshgrid", f"tensors[{i}]", t)
        if t.ndim > 1:
            raise ArgumentError(f"meshgrid: expected 0D or 1D tensors, got a {t.ndim}-D tensor at position {i}")
    vectors = [reshape(t, (-1,)) for t in tensors]
    shape = tuple(v.shape[0] for v in vectors)
    grids = []
    for i, v in enumerate(vectors):
        view = [1] * len(vectors)
        view[i] = shape[i]
        grids.append(expand(reshape(v, tuple(view)), shape))
    if indexing == "xy" and len(grids) >= 2:  # the "ij" grids with their first two dims swapped
        grids = [g.transpose(0, 1) for g in grids]
    return tuple(grids)


def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors: a (prod of sizes, number of tensors) tensor
    (a 1-D copy for one tensor), rows in lexicographic order.

    Raises:
        ArgumentError: an input that is not 1-D.
    """
    for i, t in enumerate(tensors):
        check_tensor("cartesian_prod", f"tensors[{i}]", t)
        if t.ndim != 1:
            raise ArgumentError(f"cartesian_prod: expect a 1D vector, but got shape {tuple(t.shape)} at position {i}")
    if len(tensors) == 1:
        return tensors[0].clone()
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


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


def _triangle_indices(op, row, col, offset, dtype, device, lower):
    row, col = check_int(op, "row", row, 0), check_int(op, "col", col, 0)
    offset = check_int(op, "offset", offset)
    dt = dtypes.as_dtype(dtype, op) if dtype is not None else dtypes.int64
    if dt.kind not in "iu":
        raise ArgumentError(f"{op}: dtype must be an integer dtype, got {dt}")
    r, c = (numpy.tril_indices if lower else numpy.triu_indices)(row, offset, col)
    dev = devices.resolve(device, op)
    return Tensor._wrap(backend.to_device(numpy.stack([r, c]).astype(dt), dev))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a ``row`` x ``col`` matrix (entries
    with ``c - r <= offset``), row by row; int64 by default.

    Raises:
        ArgumentError: negative sizes or a non-integer dtype.
    """
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a ``row`` x ``col`` matrix (entries
    with ``c - r >= offset``), row by row; int64 by default.

    Raises:
        ArgumentError: negative sizes or a non-integer dtype.
    """
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x``: column ``j`` is ``x ** (N - 1 - j)`` (or
    ``x ** j`` with ``increasing``); ``N`` defaults to ``len(x)``.

    Raises:
        ArgumentTypeError: not a Tensor, or a non-int N.
        ShapeError: ``x`` not 1-D.
        ArgumentError: a negative N.
    """
    check_tensor("vander", "x", x)
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be a one-dimensional tensor, got shape {tuple(x.shape)}")
    n = x.shape[0] if N is None else check_int("vander", "N", N, 0)
    powers = range(n) if increasing else range(n - 1, -1, -1)
    if n == 0:
        return mul(x.reshape(-1, 1)[:, :0], 1)
    return stack([x ** p if p else x ** 0 for p in powers], 1)
