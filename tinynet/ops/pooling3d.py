"""3-D max and average pooling (``max_pool3d``, ``max_pool3d_with_indices``,
``avg_pool3d``) over (N, C, D, H, W) volumes or unbatched (C, D, H, W) ones: the N-d
generalisation of :mod:`tinynet.ops.pooling`, generic ``xp`` code on both backends.

Output length per axis: ``floor((size + 2p - d(k-1) - 1) / s) + 1`` (``ceil`` with
``ceil_mode``, dropping a last window that would start in the right padding, PyTorch's
rule). :class:`MaxPoolNd` folds the kernel offsets (one strided slice of the padded input
each) into a running maximum and its tap; a NaN wins, and among equal values the first tap
does (PyTorch's CPU kernel). Taps in the padding are never chosen. Backward sends each
output's gradient to the chosen input, walking the offsets again. :class:`AvgPoolNd` sums
the offsets' slices and divides by the window's count (the padding counted or not, or the
``divisor_override``).
"""
import itertools
import math

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .shape import squeeze, unsqueeze
from .util import check_flag, check_int
from .window_nd import check_volume, ntuple, offset_slices, pool_out


def _tail(out, size, p, k, s, d):
    """Positions to pad after the input so that ``out`` windows fit (ceil mode's last one)."""
    return max(0, (out - 1) * s + d * (k - 1) + 1 - (size + p))


class MaxPoolNd(Op):
    """Max pooling over the trailing spatial axes of (N, C, *S); saves the chosen tap."""
    name = "max_pool3d"

    def __init__(self, kernel, stride, padding, dilation, out):
        self.kernel, self.stride, self.padding, self.dilation, self.out = kernel, stride, padding, dilation, out

    def forward(self, xp, x):
        spatial = x.shape[2:]
        pads = tuple((p, _tail(o, n, p, k, s, d)) for n, p, k, s, d, o in
                     zip(spatial, self.padding, self.kernel, self.stride, self.dilation, self.out))
        xpad = xp.pad(x, ((0, 0), (0, 0)) + pads, constant_values=-numpy.inf)
        slices = offset_slices(self.kernel, self.stride, self.dilation, self.out)
        best = xp.full(x.shape[:2] + self.out, -numpy.inf, dtype=x.dtype)
        tap = xp.zeros(x.shape[:2] + self.out, dtype=numpy.int64)
        found = xp.zeros(x.shape[:2] + self.out, dtype=bool)
        for t, (offset, sl) in enumerate(zip(itertools.product(*(range(k) for k in self.kernel)), slices)):
            v = xpad[sl]
            better = (v > best) | xp.isnan(v) | ~found
            valid = self._valid(xp, offset, spatial)
            if valid is not None:
                better &= valid
                found |= valid
            else:
                found[...] = True
            best = xp.where(better, v, best)
            tap = xp.where(better, t, tap)
        self.save_for_backward(tap)
        self.pshape, self.in_shape, self.pads = xpad.shape, x.shape, pads
        return best

    def _valid(self, xp, offset, spatial):
        """Which outputs' tap ``offset`` lies inside the input (None: all of them)."""
        mask = None
        for axis, (q, n, p, s, d, o) in enumerate(zip(offset, spatial, self.padding, self.stride, self.dilation,
                                                      self.out)):
            pos = numpy.arange(o) * s - p + q * d
            ok = (pos >= 0) & (pos < n)
            if ok.all():
                continue
            shape = [1] * (len(spatial) + 2)
            shape[2 + axis] = o
            m = xp.asarray(ok.reshape(shape))
            mask = m if mask is None else mask & m
        return mask

    def backward(self, xp, gy):
        (tap,) = self.saved
        g = xp.zeros(self.pshape, dtype=gy.dtype)
        zero = xp.zeros((), dtype=gy.dtype)
        for t, sl in enumerate(offset_slices(self.kernel, self.stride, self.dilation, self.out)):
            g[sl] += xp.where(tap == t, gy, zero)
        return (g[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for (lo, _), n in
                                                     zip(self.pads, self.in_shape[2:]))],)

    def indices(self, xp):
        """int64 flat positions ``(d * H + h) * W + w`` of the chosen inputs (PyTorch's)."""
        (tap,) = self.saved
        spatial = self.in_shape[2:]
        flat = xp.zeros(tap.shape, dtype=numpy.int64)
        rest = tap
        for axis in reversed(range(len(spatial))):  # the tap's offset along each axis
            k = self.kernel[axis]
            q, rest = rest % k, rest // k
            shape = [1] * tap.ndim
            shape[2 + axis] = self.out[axis]
            base = xp.asarray((numpy.arange(self.out[axis]) * self.stride[axis] - self.padding[axis]).reshape(shape))
            flat += (base + q * self.dilation[axis]) * math.prod(spatial[axis + 1:])
        return flat


class AvgPoolNd(Op):
    """Average pooling over the trailing spatial axes of (N, C, *S); ``divisor`` is an array
    of the output's spatial shape."""
    name = "avg_pool3d"

    def __init__(self, kernel, stride, padding, out, divisor):
        self.kernel, self.stride, self.padding, self.out, self.divisor = kernel, stride, padding, out, divisor

    def forward(self, xp, x):
        spatial = x.shape[2:]
        pads = tuple((p, _tail(o, n, p, k, s, 1)) for n, p, k, s, o in
                     zip(spatial, self.padding, self.kernel, self.stride, self.out))
        xpad = xp.pad(x, ((0, 0), (0, 0)) + pads)
        ones = (1,) * len(spatial)
        total = xp.zeros(x.shape[:2] + self.out, dtype=x.dtype)
        for sl in offset_slices(self.kernel, self.stride, ones, self.out):
            total += xpad[sl]
        self.div = xp.asarray(self.divisor, dtype=x.dtype)
        self.pshape, self.in_shape, self.pads = xpad.shape, x.shape, pads
        return total / self.div

    def backward(self, xp, gy):
        g = xp.zeros(self.pshape, dtype=gy.dtype)
        share = gy / self.div
        for sl in offset_slices(self.kernel, self.stride, (1,) * len(self.kernel), self.out):
            g[sl] += share
        return (g[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for (lo, _), n in
                                                     zip(self.pads, self.in_shape[2:]))],)


def _window(op, kernel_size, stride, padding, dilation, nd):
    k = ntuple(op, "kernel_size", kernel_size, nd)
    s = k if stride is None or isinstance(stride, (tuple, list)) and not stride else ntuple(op, "stride", stride, nd)
    p, d = ntuple(op, "padding", padding, nd), ntuple(op, "dilation", dilation, nd)
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise ArgumentError(f"{op}: kernel_size, stride and dilation must be >= 1, got {k}, {s}, {d}")
    if min(p) < 0 or any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise ArgumentError(f"{op}: pad should be at most half of effective kernel size, but got pad={p} and "
                            f"kernel_size={k}")
    return k, s, p, d


def _pool(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    unbatched = check_volume(op, "input", input, 3)
    k, s, p, d = _window(op, kernel_size, stride, padding, dilation, 3)
    ceil_mode = check_flag(op, "ceil_mode", ceil_mode)
    x = unsqueeze(input, 0) if unbatched else input
    out = tuple(pool_out(op, x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))
    return x, unbatched, (k, s, p, d, out)


@autocast_op
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling.

    Args:
        input: float (N, C, D, H, W) or unbatched (C, D, H, W).
        kernel_size: int or (kD, kH, kW). stride: int or triple, default ``kernel_size``.
        padding: int or triple, implicit -inf padding, at most half the kernel. Default 0.
        dilation: int or triple, default 1. ceil_mode (bool): round the output size up.
        return_indices (bool): also return the int64 flat index ``(d * H + h) * W + w`` of
            each window's maximum in its input volume (``nn.MaxUnpool3d``'s input). Default False.

    Returns:
        Tensor (N, C, D_out, H_out, W_out) (or unbatched); with ``return_indices`` a pair
        (values, indices).

    Raises:
        ShapeError: input not 4-D/5-D or too small. ArgumentError: a kernel, stride or
        dilation below 1, padding over half the kernel. ArgumentTypeError: non-int sizes.
        DTypeError: a non-float input.
    """
    x, unbatched, (k, s, p, d, out) = _pool("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode)
    op = MaxPoolNd(k, s, p, d, out)
    y = op.apply(x)
    if not check_flag("max_pool3d", "return_indices", return_indices):
        return squeeze(y, 0) if unbatched else y
    idx = Tensor._wrap(op.indices(backend.array_module(x.array)))
    return (squeeze(y, 0), squeeze(idx, 0)) if unbatched else (y, idx)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool3d` returning ``(values, indices)`` whatever ``return_indices`` says
    (PyTorch's ``F.max_pool3d_with_indices``)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@autocast_op
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling.

    Args:
        input: float (N, C, D, H, W) or unbatched (C, D, H, W).
        kernel_size, stride (default ``kernel_size``), padding: int or triple; padding at
            most half the kernel.
        ceil_mode (bool): round the output size up. Default False.
        count_include_pad (bool): the zero padding counts in the divisor. Default True.
        divisor_override (int, optional): divide every window's sum by this instead.

    Returns:
        Tensor (N, C, D_out, H_out, W_out) (or unbatched).

    Raises:
        ShapeError: as :func:`max_pool3d`, or an input smaller than the kernel along an axis
            before padding (PyTorch's check).
        ArgumentError: as :func:`max_pool3d`, or ``divisor_override == 0``.
        ArgumentTypeError: as :func:`max_pool3d`.
    """
    op = "avg_pool3d"
    x, unbatched, (k, s, p, _, out) = _pool(op, input, kernel_size, stride, padding, 1, ceil_mode)
    if any(n < kk for n, kk in zip(x.shape[2:], k)):  # PyTorch's avg_pool3d checks the unpadded size
        raise ShapeError(f"{op}: input image (T: {x.shape[2]} H: {x.shape[3]} W: {x.shape[4]}) smaller than kernel "
                         f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    include = check_flag(op, "count_include_pad", count_include_pad)
    if divisor_override is not None and check_int(op, "divisor_override", divisor_override) == 0:
        raise ArgumentError(f"{op}: divisor_override must not be zero")
    counts = []
    for i, size in enumerate(x.shape[2:]):
        start = numpy.arange(out[i]) * s[i] - p[i]
        end = numpy.minimum(start + k[i], size + p[i])
        if not include:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, size)
        counts.append(end - start)
    divisor = (numpy.full(out, float(divisor_override)) if divisor_override is not None else
               counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :])
    y = AvgPoolNd(k, s, p, out, divisor).apply(x)
    return squeeze(y, 0) if unbatched else y
