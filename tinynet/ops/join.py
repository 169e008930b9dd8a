"""Joining: ``cat``, ``stack``, ``hstack``, ``vstack`` and NumPy's ``column_stack``,
``row_stack`` and ``dstack`` (composed of ``cat`` and reshapes). ``pad`` and its op ``Pad``
live in :mod:`.pad` and are re-exported here under their old names.

Backwards split the gradient back into the pieces.
"""
import itertools

from .. import capture
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .broadcast import atleast_3d
from .pad import Pad, pad  # noqa: F401  (moved to ops/pad.py; importable from here as before)
from .shape import reshape
from .util import check_tensor, dim_index


class Concat(Op):
    name = "cat"
    complex_ok = True  # moves data only (Stack too)
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis, dtype):
        self.axis, self.dtype = axis, dtype

    def forward(self, xp, *xs):
        self.bounds = list(itertools.accumulate(x.shape[self.axis] for x in xs))[:-1]
        dt = self.dtype
        return capture.concatenate(xp, [x if x.dtype == dt else x.astype(dt) for x in xs], axis=self.axis)

    def backward(self, xp, gy):
        return tuple(xp.split(gy, self.bounds, axis=self.axis))


class Stack(Op):
    name = "stack"
    complex_ok = True
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis, dtype):
        self.axis, self.dtype = axis, dtype

    def forward(self, xp, *xs):
        self.count = len(xs)
        return xp.stack([x.astype(self.dtype, copy=False) for x in xs], axis=self.axis)

    def backward(self, xp, gy):
        return tuple(xp.take(gy, i, axis=self.axis) for i in range(self.count))


def _seq(op, tensors):
    if isinstance(tensors, Tensor):
        raise ArgumentError(f"{op}: expected a sequence of tensors, got a single Tensor")
    if not isinstance(tensors, (list, tuple)):
        raise ArgumentTypeError(f"{op}: expected a sequence of tensors, got {type(tensors).__name__}")
    tensors = list(tensors)
    if not tensors:
        raise ArgumentError(f"{op}: expected a non-empty sequence of tensors")
    for t in tensors:
        check_tensor(op, "each element of tensors", t)
    return tensors


def _common_dtype(ts):
    from .. import dtypes
    dt = ts[0].array.dtype
    for t in ts[1:]:
        if t.array.dtype != dt:
            dt = dtypes.promote_types(dt, t.array.dtype)
    return dt


def cat(tensors, dim=0):
    """Concatenate tensors along an existing dimension (dtypes promote; 1-D empty tensors
    are skipped, as in PyTorch).

    Raises:
        ShapeError: a 0-d tensor, or ranks or sizes off ``dim`` differ.
        ArgumentError: an empty sequence. IndexOutOfRangeError: ``dim`` out of range.
    """
    ts = _seq("cat", tensors)
    shapes = [t.array.shape for t in ts]  # plain tuples: the checks below run on every call
    for i, sh in enumerate(shapes):
        if not sh:
            raise ShapeError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = _common_dtype(ts)
    ref = next((t for t, sh in zip(ts, shapes) if sh != (0,)), ts[0])
    rs = ref.array.shape
    d = dim_index("cat", dim, len(rs))
    if (0,) in shapes and rs != (0,):  # PyTorch skips 1-D empties (they still get a grad)
        ts = [t.reshape(rs[:d] + (0,) + rs[d + 1:]) if sh == (0,) else t for t, sh in zip(ts, shapes)]
        shapes = [t.array.shape for t in ts]
    off = rs[:d] + rs[d + 1:]
    for t, sh in zip(ts, shapes):
        if len(sh) != len(rs) or sh[:d] + sh[d + 1:] != off:
            raise ShapeError(f"cat: tensors must match except in dim {dim}, got {ref.shape} and {t.shape}")
    return Concat(d, dtype).apply(*ts)


concat = concatenate = cat


def stack(tensors, dim=0):
    """Stack equal-shaped tensors along a new dimension.

    Raises:
        ShapeError: shapes differ.
    """
    ts = _seq("stack", tensors)
    for t in ts[1:]:
        if t.shape != ts[0].shape:
            raise ShapeError(f"stack: expected all shapes equal to {ts[0].shape}, got {t.shape}")
    return Stack(dim_index("stack", dim, ts[0].ndim + 1), _common_dtype(ts)).apply(*ts)


def hstack(tensors):
    """Concatenate along dim 1 (dim 0 for 1-D tensors; 0-d tensors count as 1-D)."""
    ts = [t.reshape(1) if t.ndim == 0 else t for t in _seq("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenate along dim 0 (0-d and 1-D tensors become rows)."""
    ts = _seq("vstack", tensors)
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in ts], 0)


def column_stack(tensors):
    """Stack as columns: 0-d and 1-D tensors become (n, 1) columns, then :func:`hstack`.

    Raises:
        ArgumentTypeError: not a sequence of tensors.
        ShapeError: the row counts differ.
    """
    ts = _seq("column_stack", tensors)
    return hstack([reshape(t, (t.numel(), 1)) if t.ndim < 2 else t for t in ts])


def row_stack(tensors):
    """:func:`vstack` under NumPy's older name."""
    return vstack(tensors)


def dstack(tensors):
    """Concatenate along dim 2 after :func:`atleast_3d` ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)).

    Raises:
        ArgumentTypeError: not a sequence of tensors.
        ShapeError: the other dims differ.
    """
    ts = _seq("dstack", tensors)
    return cat([atleast_3d(t) for t in ts], 2)
