"""``select_scatter``, ``slice_scatter`` and ``diagonal_scatter``: a copy of ``input`` with
``src`` written into the view that ``select``, slicing or ``diagonal`` would give. Each is the
``IndexPut`` op (the one behind ``x[index] = v``), so the gradient of ``input`` is the output
gradient with that view zeroed and the gradient of ``src`` is the output gradient's view.
"""
import numbers

from .. import backend
from ..errors import ArgumentTypeError, IndexOutOfRangeError, ShapeError
from .indexing import IndexPut
from .shape import movedim
from .util import check_int, check_tensor, dim_index


def _dim(op, input, dim):
    if input.ndim == 0:  # dim_index accepts 0 and -1 for a 0-d tensor, which has nothing to select
        raise IndexOutOfRangeError(f"{op}: dimension specified as {dim} but tensor has no dimensions")
    return dim_index(op, dim, input.ndim)


def _write(op, input, src, index, view_shape):
    check_tensor(op, "src", src)
    if tuple(src.shape) != tuple(view_shape):
        raise ShapeError(f"{op}: src must have the shape of the embedded view {tuple(view_shape)}, got "
                         f"{tuple(src.shape)}")
    return IndexPut(index).apply(input, src.to(input.dtype))


def select_scatter(input, src, dim, index):
    """``input`` with ``src`` written at ``input.select(dim, index)``.

    Raises:
        ArgumentTypeError: not tensors, or dim/index not ints.
        ShapeError: ``src`` not of the selected view's shape.
        IndexOutOfRangeError: ``dim`` or ``index`` out of range.
    """
    check_tensor("select_scatter", "input", input)
    d = _dim("select_scatter", input, dim)
    i = check_int("select_scatter", "index", index)
    size = input.shape[d]
    if not -size <= i < size:
        raise IndexOutOfRangeError(f"select_scatter: index {i} out of range for dimension {d} of size {size}")
    shape = tuple(s for k, s in enumerate(input.shape) if k != d)
    return _write("select_scatter", input, src, (slice(None),) * d + (i % size,), shape)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``src`` written at ``input[..., start:end:step, ...]`` along ``dim``.

    Raises:
        ArgumentTypeError: not tensors, or bounds that are not ints (or None).
        ArgumentError: ``step`` below 1.
        ShapeError: ``src`` not of the slice's shape.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("slice_scatter", "input", input)
    d = _dim("slice_scatter", input, dim)
    for name, v in (("start", start), ("end", end)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
            raise ArgumentTypeError(f"slice_scatter: {name} must be an int or None, got {type(v).__name__}")
    step = check_int("slice_scatter", "step", step, 1)
    sl = slice(start, end, step)
    shape = list(input.shape)
    shape[d] = len(range(*sl.indices(input.shape[d])))
    return _write("slice_scatter", input, src, (slice(None),) * d + (sl,), shape)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``src`` written at ``input.diagonal(offset, dim1, dim2)`` (``src`` has the
    diagonal's shape: the other dims, then the diagonal's length).

    Raises:
        ArgumentTypeError: not tensors, or offset not an int.
        ShapeError: ``src`` not of the diagonal's shape, or ``dim1 == dim2``.
        IndexOutOfRangeError: a dim out of range.
    """
    check_tensor("diagonal_scatter", "input", input)
    d1 = dim_index("diagonal_scatter", dim1, input.ndim)
    d2 = dim_index("diagonal_scatter", dim2, input.ndim)
    if d1 == d2:
        raise ShapeError(f"diagonal_scatter: dim1 and dim2 cannot be identical, got {dim1} and {dim2}")
    offset = check_int("diagonal_scatter", "offset", offset)
    rows0, cols0 = max(-offset, 0), max(offset, 0)
    length = max(0, min(input.shape[d1] - rows0, input.shape[d2] - cols0))
    shape = tuple(s for k, s in enumerate(input.shape) if k not in (d1, d2)) + (length,)
    xp = backend.array_module(input.array)
    steps = xp.arange(length)
    index = [slice(None)] * input.ndim
    index[d1], index[d2] = steps + rows0, steps + cols0
    check_tensor("diagonal_scatter", "src", src)
    if tuple(src.shape) != shape:
        raise ShapeError(f"diagonal_scatter: src must have the shape of the embedded view {shape}, got "
                         f"{tuple(src.shape)}")
    # NumPy puts the diagonal's axis where the two index arrays were when they are adjacent,
    # and first otherwise: move src's last axis there
    where = min(d1, d2) if abs(d1 - d2) == 1 else 0
    return IndexPut(tuple(index)).apply(input, movedim(src, -1, where).to(input.dtype))


METHODS = {"select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter}
