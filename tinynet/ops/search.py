"""Searching and sets: ``unique``, ``isin``, ``searchsorted`` and ``bucketize`` (not
differentiable: their results are indices or masks).
"""
import numbers

import numpy

from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .util import check_real, check_tensor, dim_index


def _array(op, name, t):
    return check_real(op, name, check_tensor(op, name, t)).array


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of ``input`` (flattened, or the distinct slices along ``dim``),
    in ascending order; optionally the inverse indices (``input`` rebuilt as
    ``output[inverse]``) and the counts. Not differentiable.

    Returns:
        Tensor, or a tuple ``(output, inverse, counts)`` with the requested extras
        (int64).

    Raises:
        ArgumentTypeError: not a Tensor.
        IndexOutOfRangeError: ``dim`` outside the input.
    """
    a = _array("unique", "input", input)
    xp = backend.array_module(a)
    axis = None if dim is None else dim_index("unique", dim, a.ndim)
    out = xp.unique(a, return_inverse=True, return_counts=True, axis=axis)
    values, inverse, counts = out
    if axis is None:
        inverse = inverse.reshape(a.shape)
    results = [Tensor._wrap(values)]
    if return_inverse:
        results.append(Tensor._wrap(inverse.astype(numpy.int64, copy=False)))
    if return_counts:
        results.append(Tensor._wrap(counts.astype(numpy.int64, copy=False)))
    return results[0] if len(results) == 1 else tuple(results)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of ``elements``' shape: whether each element occurs in
    ``test_elements`` (a tensor or a number). Not differentiable.

    Raises:
        ArgumentTypeError: ``elements`` is not a Tensor, or ``test_elements`` neither a
            Tensor nor a number.
    """
    a = _array("isin", "elements", elements)
    xp = backend.array_module(a)
    if isinstance(test_elements, Tensor):
        b = test_elements.array
    elif isinstance(test_elements, (numbers.Number, numpy.number)) and not isinstance(test_elements, bool):
        b = xp.asarray([test_elements])
    else:
        raise ArgumentTypeError(f"isin: test_elements must be a Tensor or a number, got "
                                f"{type(test_elements).__name__}")
    return Tensor._wrap(xp.isin(a, b, assume_unique=bool(assume_unique), invert=bool(invert)))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices at which the values of ``input`` would be inserted into the innermost
    dimension of ``sorted_sequence`` to keep it sorted (``right``/``side="right"``: after
    equal values). A 1-D sequence serves every value; an N-D one pairs its rows with the
    rows of ``input``. Not differentiable.

    Raises:
        ArgumentTypeError: a non-Tensor sequence, or ``input`` neither a Tensor nor a number.
        ShapeError: a 0-d sequence.
        ArgumentError: ``side`` and ``right`` disagree, a malformed ``sorter``, or the
            leading dimensions of the two differ.
    """
    seq = _array("searchsorted", "sorted_sequence", sorted_sequence)
    xp = backend.array_module(seq)
    if seq.ndim == 0:
        raise ShapeError("searchsorted: boundaries tensor should have positive dimension, but got 0 dimension")
    if side is not None:
        if not isinstance(side, str) or side not in ("left", "right"):
            raise ArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ArgumentError("searchsorted: side and right can't be set to opposites, got side of left while "
                                "right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    check_real("searchsorted", "input", input)
    if isinstance(input, complex):
        raise DTypeError(f"searchsorted: not implemented for complex numbers, got {input}")
    if scalar and not isinstance(input, numbers.Number):
        raise ArgumentTypeError(f"searchsorted: input must be a tensor or a number, got {type(input).__name__}")
    values = xp.asarray([input]) if scalar else input.array
    if sorter is not None:
        order = check_tensor("searchsorted", "sorter", sorter).array
        if order.dtype != numpy.int64 or order.shape != seq.shape:
            raise ArgumentError(f"searchsorted: sorter must be an int64 tensor of the sequence's shape "
                                f"{tuple(seq.shape)}, got {order.dtype} {tuple(order.shape)}")
        seq = xp.take_along_axis(seq, order, axis=-1)
    how = "right" if right else "left"
    if seq.ndim == 1:
        idx = xp.searchsorted(seq, values, side=how)
    else:
        if values.ndim != seq.ndim or seq.shape[:-1] != values.shape[:-1]:
            raise ArgumentError(f"searchsorted: boundaries and input must have the same leading dimensions, got "
                                f"{tuple(seq.shape)} and {tuple(values.shape)}")
        rows_s, rows_v = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        idx = xp.stack([xp.searchsorted(s, v, side=how) for s, v in zip(rows_s, rows_v)]).reshape(values.shape)
    idx = idx.astype(numpy.int32 if out_int32 else numpy.int64, copy=False)
    return Tensor._wrap(idx.reshape(()) if scalar else idx)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of ``input`` for the 1-D sorted ``boundaries``:
    ``searchsorted(boundaries, input, right=right)`` (PyTorch's ``right`` convention).

    Raises:
        ArgumentTypeError: ``boundaries`` is not a Tensor.
        ArgumentError: ``boundaries`` is not 1-D.
    """
    b = _array("bucketize", "boundaries", boundaries)
    if b.ndim != 1:
        raise ArgumentError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
