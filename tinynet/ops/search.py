"""Searching and sets, and a few array utilities PyTorch scripts reach for: ``unique``,
``isin``, ``searchsorted``, ``bucketize`` (not differentiable: their results are indices or
masks), and ``meshgrid``, ``tile``, ``diff``, ``nan_to_num`` (differentiable, composed of
tinynet's ops or with their own derivative).

``nan_to_num``'s derivative is 1 where the input is finite and 0 where it was replaced
(NaN or +-inf), as PyTorch's.
"""
import numbers

import numpy

from .. import backend, dtypes
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import sub
from .join import cat
from .rearrange import repeat
from .shape import expand, reshape
from .util import check_int, check_real, check_tensor, dim_index


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


def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along dimension ``i``; with fewer ``dims`` than
    dimensions, leading 1s are assumed (NumPy's ``tile``; ``Tensor.repeat`` with more
    leading dims otherwise). Differentiable.

    Raises:
        ArgumentTypeError: not a Tensor, or dims that are not ints.
        ArgumentError: a negative size.
    """
    check_tensor("tile", "input", input)
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        dims = (dims,)
    elif not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError(f"tile: dims must be a tuple of ints, got {type(dims).__name__}")
    dims = (1,) * (input.ndim - len(dims)) + tuple(check_int("tile", "dims", d) for d in dims)
    if not dims:  # a 0-d input and no dims: the input itself, copied
        return input.clone()
    return repeat(input, dims)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``: ``x[i+1] - x[i]``, after joining
    ``prepend`` and ``append`` to ``input``. Differentiable.

    Raises:
        ArgumentTypeError: not a Tensor.
        ArgumentError: ``n < 0``.
        ShapeError: a 0-d input.
        IndexOutOfRangeError: ``dim`` outside the input.
    """
    check_tensor("diff", "input", input)
    if input.ndim == 0:
        raise ShapeError("diff: expects input to be at least one-dimensional, got a 0-d tensor")
    n = check_int("diff", "n", n, 0)
    d = dim_index("diff", dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        x = sub(x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1))
    return x


class NanToNum(Op):
    name = "nan_to_num"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, nan, posinf, neginf):
        self.values = (nan, posinf, neginf)

    def forward(self, xp, x):
        nan, posinf, neginf = self.values
        if self.needs_input_grad[0]:
            self.save_for_backward(xp.isfinite(x))
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, xp, gy):
        (finite,) = self.saved
        return (gy * finite,)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (default: the dtype's largest and lowest finite values). Integer inputs come back
    unchanged. The gradient is 1 where the input was finite, 0 where it was replaced.

    Raises:
        ArgumentTypeError: not a Tensor, or a replacement that is not a number.
    """
    check_tensor("nan_to_num", "input", input)
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (not isinstance(v, (numbers.Real, numpy.number)) or isinstance(v, bool)):
            raise ArgumentTypeError(f"nan_to_num: {name} must be a number, got {type(v).__name__}")
    if not dtypes.is_floating(input.dtype):  # integers and bools hold no NaN or inf
        return input.clone()
    info = numpy.finfo(input.dtype) if input.dtype.kind == "f" else dtypes.finfo(input.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    return NanToNum(nan, posinf, neginf).apply(input)
