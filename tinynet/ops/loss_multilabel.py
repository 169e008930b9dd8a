"""The multi-label margin loss, ``multilabel_margin_loss`` (PyTorch's formula), composed of
differentiable ops.

For a sample ``x`` (C scores) and its target row ``y`` (class indices, ended by the first
negative entry), with ``T`` the set of target classes:
``loss = sum_{j in y} sum_{i not in T} max(0, 1 - (x[y_j] - x[i])) / C``
(a class listed twice in ``y`` counts twice, as in PyTorch's kernel). The hinge matrix
``max(0, 1 - x[:, j] + x[:, i])`` (N, C, C) is weighted by how often ``j`` is listed and
whether ``i`` is outside ``T``; its gradient is the ReLU's (0 where the hinge is exactly 0,
as PyTorch's ``z > 0``).
"""
import numpy

from .. import backend
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .activation import relu
from .autocast import autocast_op
from .loss import reduce_loss, reduction_of
from .reduction import sum as _sum
from .util import check_float, check_tensor


@autocast_op
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-class multi-label hinge loss.

    Args:
        input (Tensor): float scores (N, C), or (C,) for one sample.
        target (Tensor): integer class indices of the input's shape; each row's targets come
            first and end at the first negative entry (``-1``), the rest is ignored.
        size_average, reduce: PyTorch's deprecated switches. reduction (str): ``'mean'``
            (default), ``'sum'`` or ``'none'`` ((N,), or 0-d for one sample).

    Returns:
        Tensor: the loss, in the input's dtype.

    Raises:
        ArgumentTypeError / DTypeError: non-tensors, a non-float input, a non-integer target.
        ShapeError: input not 1-D/2-D or the target of another shape.
        ArgumentError: an unknown reduction.
        IndexOutOfRangeError: a target class >= C (checked on the CPU).
    """
    op = "multilabel_margin_loss"
    reduction = reduction_of(op, reduction, size_average, reduce)
    check_float(op, "input", input)
    check_tensor(op, "target", target)
    if target.array.dtype.kind not in "iu":
        raise DTypeError(f"{op}: expected an integer target (class indices), got {target.dtype}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ShapeError(f"{op}: expected a non-empty (C,) or (N, C) input, got shape {tuple(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected a target of the input's shape {tuple(input.shape)}, got "
                         f"{tuple(target.shape)}")
    backend.common_module(op, (input.array, target.array))
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n, c = x.shape
    xp = backend.array_module(x.array)
    t = target.array.reshape(n, c).astype(numpy.int64)
    listed = xp.cumprod(t >= 0, axis=1).astype(bool)                   # before the first negative entry
    if isinstance(t, numpy.ndarray) and listed.any() and t[listed].max() >= c:
        raise IndexOutOfRangeError(f"{op}: target class {int(t[listed].max())} is outside [0, {c})")
    hits = (t[:, :, None] == xp.arange(c)[None, None, :]) & listed[:, :, None]   # (N, slot, class)
    count = hits.sum(axis=1)                                          # (N, C): times each class is listed
    weights = count[:, :, None] * (count == 0)[:, None, :]            # (N, j, i): j listed, i not a target
    hinge = relu(1.0 - x.reshape(n, c, 1) + x.reshape(n, 1, c))       # 1 - x[j] + x[i]
    w = Tensor._wrap(weights.astype(x.array.dtype))
    per_sample = _sum(hinge * w, (1, 2)) / c
    if input.ndim == 1:
        per_sample = per_sample.reshape(())
    return reduce_loss(per_sample, reduction)
