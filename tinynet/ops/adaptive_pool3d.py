"""Adaptive pooling of volumes: ``adaptive_avg_pool3d`` and ``adaptive_max_pool3d`` (with
``adaptive_max_pool3d_with_indices``), pooling (N, C, D, H, W) or unbatched (C, D, H, W)
input to a fixed output size.

Output cell ``i`` of an axis of length ``n`` pooled to ``m`` covers the positions
``[floor(i * n / m), ceil((i + 1) * n / m))`` (PyTorch's windows). Both poolings are
separable over the axes, because every window is a box:

- average: ``y = x x_D A_D x_H A_H x_W A_W``, one averaging matrix per axis
  (:class:`AdaptiveAvgPoolNd`, backward the transposed products);
- max: the arg-max is found one axis at a time, last axis first (a first maximum along W
  per row, then the first row along H, then along D: together the first maximum of the
  box in row-major order, PyTorch's tie rule), as flat indices ``(d * H + h) * W + w``;
  the values are gathered at them with :func:`tinynet.gather`, whose backward sends each
  gradient to its index.
"""
import math
import numbers

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .functional_support import reproducibility_notes
from .gather import gather
from .shape import flatten, reshape, squeeze, unsqueeze
from .util import check_flag
from .window_nd import check_volume


def adaptive_windows(n, m):
    """The ``m`` windows ``[lo, hi)`` of an axis of length ``n``."""
    return [(i * n // m, -(-(i + 1) * n // m)) for i in range(m)]


def output_size3(op, input_shape, output_size, nd=3):
    """``output_size`` (an int, or ``nd`` ints or Nones, a None keeping the input's size) as
    a tuple of ints >= 1.

    Raises:
        ArgumentTypeError: not ints. ArgumentError: a size below 1.
    """
    wanted = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(wanted) != nd or any(v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral))
                                for v in wanted):
        raise ArgumentTypeError(f"{op}: output_size must be an int or a tuple of {nd} ints (or None), got "
                                f"{output_size!r}")
    out = tuple(int(input_shape[i] if v is None else v) for i, v in enumerate(wanted))
    if min(out) < 1:
        raise ArgumentError(f"{op}: output_size must be >= 1, got {output_size}")
    return out


def _averaging(n, m):
    a = numpy.zeros((m, n))
    for i, (lo, hi) in enumerate(adaptive_windows(n, m)):
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


class AdaptiveAvgPoolNd(Op):
    """The averaging matrices applied along each trailing axis of (N, C, *S)."""
    name = "adaptive_avg_pool3d"

    def __init__(self, out):
        self.out = out

    @staticmethod
    def _along(xp, x, mats, transpose):
        nd = len(mats)
        for axis, a in enumerate(mats):
            x = xp.moveaxis(xp.moveaxis(x, x.ndim - nd + axis, -1) @ (a if transpose else a.T), -1,
                            x.ndim - nd + axis)
        return x

    def forward(self, xp, x):
        self.mats = [xp.asarray(_averaging(n, m), dtype=x.dtype) for n, m in zip(x.shape[2:], self.out)]
        return xp.ascontiguousarray(self._along(xp, x, self.mats, False))

    def backward(self, xp, gy):
        return (xp.ascontiguousarray(self._along(xp, gy, self.mats, True)),)


def adaptive_argmax(xp, x, out):
    """int64 flat positions (N, C, *out) of the first maximum of each adaptive window of the
    array ``x`` (N, C, *S), in the row-major order of the window."""
    nd = len(out)
    spatial = x.shape[2:]
    vals, picks = x, {}                       # picks[axis]: the chosen position along that axis
    for axis in reversed(range(nd)):
        dim = 2 + axis
        best, where = [], []
        for lo, hi in adaptive_windows(spatial[axis], out[axis]):
            seg = vals[(slice(None),) * dim + (slice(lo, hi),)]
            k = xp.argmax(seg, axis=dim)      # first maximum (a NaN counts as one)
            best.append(xp.take_along_axis(seg, xp.expand_dims(k, dim), dim))
            where.append(xp.expand_dims(k, dim) + lo)
        choice = xp.concatenate(where, axis=dim)
        for later in picks:                   # the positions found for later axes, at the chosen rows
            picks[later] = xp.take_along_axis(picks[later], choice, dim)
        picks[axis] = choice
        vals = xp.concatenate(best, axis=dim)
    flat = xp.zeros(x.shape[:2] + tuple(out), dtype=numpy.int64)
    for axis in range(nd):
        flat += picks[axis].astype(numpy.int64) * math.prod(spatial[axis + 1:])
    return flat


def _prepare(op, input):
    unbatched = check_volume(op, "input", input, 3)
    x = unsqueeze(input, 0) if unbatched else input
    if min(x.shape[1:]) < 1:
        raise ShapeError(f"{op}: expected non-empty channels and spatial dims, got shape {tuple(input.shape)}")
    return x, unbatched


@autocast_op
def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to ``output_size``.

    Args:
        input: float tensor.
        output_size: int or (d, h, w); a None keeps that input size.

    Returns:
        Tensor (N, C, d, h, w) (or unbatched), the input's dtype.

    Raises:
        ShapeError: input not 4-D/5-D or with an empty dim. ArgumentError: a size below 1.
        ArgumentTypeError: sizes that are not ints. DTypeError: a non-float input.
    """
    x, unbatched = _prepare("adaptive_avg_pool3d", input)
    out = output_size3("adaptive_avg_pool3d", x.shape[2:], output_size)
    y = AdaptiveAvgPoolNd(out).apply(x)
    return squeeze(y, 0) if unbatched else y


@autocast_op
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to ``output_size``.

    Args:
        input: float tensor.
        output_size: int or (d, h, w); a None keeps that input size.
        return_indices (bool): also return the int64 flat position ``(d * H + h) * W + w``
            of each maximum in its input volume. Default False.

    {backward_reproducibility_note}

    Returns:
        Tensor (N, C, d, h, w) (or unbatched); with ``return_indices`` a pair (values, indices).

    Raises:
        as :func:`adaptive_avg_pool3d`.
    """
    op = "adaptive_max_pool3d"
    x, unbatched = _prepare(op, input)
    out = output_size3(op, x.shape[2:], output_size)
    want = check_flag(op, "return_indices", return_indices)
    idx = Tensor._wrap(adaptive_argmax(backend.array_module(x.array), x.array, out))
    n, c = x.shape[:2]
    y = reshape(gather(flatten(x, 2), 2, reshape(idx, (n, c, math.prod(out)))), (n, c) + out)
    if unbatched:
        y, idx = squeeze(y, 0), squeeze(idx, 0)
    return (y, idx) if want else y


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool3d` returning ``(values, indices)`` whatever ``return_indices``
    says (PyTorch's ``F.adaptive_max_pool3d_with_indices``)."""
    return adaptive_max_pool3d(input, output_size, True)


adaptive_max_pool3d.__doc__ = (adaptive_max_pool3d.__doc__ or "").format(**reproducibility_notes)
