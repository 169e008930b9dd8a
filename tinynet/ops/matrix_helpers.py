"""Small matrix and arrangement helpers PyTorch scripts use, composed of tinynet's ops (so
they are differentiable where PyTorch's are): ``trace``, ``fliplr``, ``flipud``, ``rot90``,
``cartesian_prod``, ``block_diag``, ``clamp_min``, ``clamp_max``, and the index tensors
``tril_indices`` / ``triu_indices``.
"""
import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .join import cat, stack
from .pad import pad
from .rearrange import diagonal, flip
from .reduction import sum as _sum
from .search import meshgrid
from .shape import reshape, transpose
from .unary import clamp
from .util import check_int, check_tensor


def trace(input):
    """The sum of the main diagonal of a 2-D ``input`` (differentiable).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: ``input`` is not 2-D.
    """
    check_tensor("trace", "input", input)
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _sum(diagonal(input))


def fliplr(input):
    """``input`` with its columns (dim 1) reversed.

    Raises:
        ShapeError: fewer than 2 dims.
    """
    check_tensor("fliplr", "input", input)
    if input.ndim < 2:
        raise ShapeError(f"fliplr: input tensor must be >= 2-d, got {input.ndim}-d")
    return flip(input, (1,))


def flipud(input):
    """``input`` with its rows (dim 0) reversed.

    Raises:
        ShapeError: a 0-d input.
    """
    check_tensor("flipud", "input", input)
    if input.ndim < 1:
        raise ShapeError("flipud: input tensor must be >= 1-d, got 0-d")
    return flip(input, (0,))


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first
    towards the second (counter-clockwise for ``dims=(0, 1)``).

    Raises:
        ArgumentTypeError: ``dims`` is not a sequence. ArgumentError: ``dims`` is not two
        different dims. ShapeError: fewer than 2 dims.
    """
    check_tensor("rot90", "input", input)
    k = check_int("rot90", "k", k)
    if isinstance(dims, Tensor) or not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError(f"rot90: dims must be a sequence of two ints, got {type(dims).__name__}")
    dims = tuple(dims)
    if len(dims) != 2:
        raise ArgumentError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise ShapeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = (check_int("rot90", "dims", d) % input.ndim for d in dims)
    if a == b:
        raise ArgumentError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
                            f"dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (b,)), a, b)
    if k == 2:
        return flip(input, (a, b))
    if k == 3:
        return flip(transpose(input, a, b), (b,))
    return input.clone()


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


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d, 1-D or 2-D; a 1-D input is one row),
    the promoted dtype of all, zeros elsewhere; differentiable.

    Raises:
        ShapeError: an input with more than 2 dims.
    """
    blocks = []
    for i, t in enumerate(tensors):
        check_tensor("block_diag", f"tensors[{i}]", t)
        if t.ndim > 2:
            raise ShapeError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} "
                             "dimensions")
        blocks.append(reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not blocks:
        return Tensor._wrap(numpy.zeros((1, 0), dtype=dtypes.get_default_dtype()))
    dt = dtypes.result_type(*(b.array for b in blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b.to(dt) if b.dtype != dt else b
        rows.append(pad(b, (left, width - left - b.shape[1])))
        left += b.shape[1]
    return cat(rows, 0)


def clamp_min(input, min):
    """``clamp(input, min=min)``."""
    return clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)``."""
    return clamp(input, max=max)


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

