"""Ranks and broadcasting, by NumPy's and PyTorch's rules (sizes aligned from the right,
leading dims of size 1 added, size 1 stretched): ``broadcast_shapes``, ``broadcast_tensors``
(views, as :func:`~tinynet.expand`) and ``atleast_1d``, ``atleast_2d``, ``atleast_3d``
(reshapes that add the missing dims).
"""
import numbers

import numpy

from ..errors import ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .shape import broadcast_to, reshape
from .util import check_tensor


def _atleast(op, ndim, tensors, grow):
    """PyTorch's calling forms: one Tensor gives a Tensor; several, or one list/tuple, a tuple."""
    items = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    for i, t in enumerate(items):
        check_tensor(op, f"tensors[{i}]", t)
    out = tuple(t if t.ndim >= ndim else grow(t) for t in items)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_1d(*tensors):
    """Each tensor with at least one dim: a 0-d tensor becomes shape (1,), others are
    returned as they are. One Tensor in, one out; several (or a list) in, a tuple out.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
    """
    return _atleast("atleast_1d", 1, tensors, lambda t: reshape(t, (1,)))


def atleast_2d(*tensors):
    """Each tensor with at least two dims: () -> (1, 1), (n,) -> (1, n). Calling forms as
    :func:`atleast_1d`.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
    """
    return _atleast("atleast_2d", 2, tensors, lambda t: reshape(t, (1, t.numel())))


def atleast_3d(*tensors):
    """Each tensor with at least three dims: () -> (1, 1, 1), (n,) -> (1, n, 1),
    (m, n) -> (m, n, 1) (NumPy's and PyTorch's convention). Calling forms as :func:`atleast_1d`.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
    """
    def grow(t):
        return reshape(t, (1, t.numel(), 1) if t.ndim < 2 else tuple(t.shape) + (1,))
    return _atleast("atleast_3d", 3, tensors, grow)


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` (ints or sequences of ints) broadcast to, by NumPy's and
    PyTorch's rule (sizes aligned from the right; 1 stretches), as a tuple.

    Raises:
        ArgumentTypeError: a shape holds something other than ints.
        ShapeError: the shapes do not broadcast (names both sizes).
    """
    dims = []
    for s in shapes:
        s = (s,) if isinstance(s, numbers.Integral) and not isinstance(s, bool) else s
        if not isinstance(s, (tuple, list)) or not all(isinstance(v, (int, numpy.integer)) and
                                                       not isinstance(v, bool) for v in s):
            raise ArgumentTypeError(f"broadcast_shapes: shapes must be ints or sequences of ints, got {s!r}")
        if any(v < 0 for v in s):
            raise ShapeError(f"broadcast_shapes: negative size in shape {tuple(s)}")
        dims.append(tuple(int(v) for v in s))
    out = []
    for sizes in zip(*(((1,) * (max(map(len, dims), default=0) - len(d))) + d for d in dims)):
        grown = {v for v in sizes if v != 1}
        if len(grown) > 1:
            raise ShapeError(f"broadcast_shapes: shapes {', '.join(map(str, dims))} cannot be broadcast (sizes "
                             f"{sorted(grown)} meet in one dimension)")
        out.append(grown.pop() if grown else 1)
    return tuple(out)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views, as :func:`~tinynet.expand`).

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        ShapeError: the shapes do not broadcast.
    """
    for i, t in enumerate(tensors):
        check_tensor("broadcast_tensors", f"tensors[{i}]", t)
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else broadcast_to(t, shape) for t in tensors)

