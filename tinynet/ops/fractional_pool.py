"""Fractional max pooling (Graham, 2014, "Fractional Max-Pooling", arXiv:1412.6071):
``fractional_max_pool2d`` / ``fractional_max_pool3d`` and their ``*_with_indices`` forms.

Each (sample, channel) plane draws one number ``u`` in [0, 1) per spatial axis (or takes it
from ``_random_samples``, shape (N, C, 2) or (N, C, 3)); along an axis of ``n`` inputs pooled
to ``m`` outputs with windows of ``k``, output ``i`` starts at
``int((i + u) * a) - int(u * a)`` with ``a = (n - k) / (m - 1)``, computed in the input's
dtype, and the last one at ``n - k`` (PyTorch's intervals, so the same samples give the
same result). For a 2-D plane ``u[0]`` is the width's and ``u[1]`` the height's; for a
volume ``u[0], u[1], u[2]`` are depth's, height's and width's.

The maximum of each window is its first in row-major order (a NaN wins), as PyTorch's
kernel; the indices are flat positions in the input plane (``h * W + w``, or
``(d * H + h) * W + w``), and the values are gathered at them with :func:`tinynet.gather`,
whose backward sends each gradient to its index.
"""
import itertools
import math
import numbers

import numpy

from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .functional_support import reproducibility_notes
from .gather import gather
from .sampling import rand
from .shape import flatten, reshape, squeeze, unsqueeze
from .util import check_flag, check_tensor
from .window_nd import check_volume, ntuple


def _starts(u, n, m, k, dtype):
    """(..., m) window starts along one axis for the samples ``u`` (...,), in ``dtype``."""
    starts = numpy.empty(u.shape + (m,), dtype=numpy.int64)
    if m > 1:
        alpha = dtype.type(n - k) / dtype.type(m - 1)
        i = numpy.arange(m - 1, dtype=dtype)
        starts[..., :-1] = ((i + u[..., None]) * alpha).astype(numpy.int64) - (u * alpha).astype(numpy.int64)[..., None]
    starts[..., -1] = n - k
    return starts


def fractional_argmax(xp, x, kernel, out, samples):
    """int64 flat positions (N, C, *out) of each fractional window's first maximum in the
    array ``x`` (N, C, *S); ``samples`` is a host array (N, C, nd) in the axes' sample order."""
    nd = len(kernel)
    spatial = x.shape[2:]
    order = [1, 0] if nd == 2 else list(range(nd))          # which sample drives each axis (D, H, W order)
    starts = [xp.asarray(_starts(samples[..., order[a]], spatial[a], out[a], kernel[a], samples.dtype))
              for a in range(nd)]
    strides = [math.prod(spatial[a + 1:]) for a in range(nd)]
    flat_x = x.reshape(x.shape[:2] + (math.prod(spatial),))
    best = best_at = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        at = 0
        for a in range(nd):                                   # broadcast (N, C, *out) positions
            shape = list(x.shape[:2]) + [1] * nd
            shape[2 + a] = out[a]
            at = at + ((starts[a] + offset[a]) * strides[a]).reshape(shape)
        at = xp.broadcast_to(at, x.shape[:2] + tuple(out))
        v = xp.take_along_axis(flat_x, at.reshape(x.shape[:2] + (math.prod(out),)), 2).reshape(at.shape)
        if best is None:
            best, best_at = v, at
        else:
            take = (v > best) | xp.isnan(v)
            best, best_at = xp.where(take, v, best), xp.where(take, at, best_at)
    return best_at.astype(numpy.int64)


def _fractional(op, nd, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    unbatched = check_volume(op, "input", input, nd)
    x = unsqueeze(input, 0) if unbatched else input
    if min(x.shape[1:]) < 1:  # (an empty batch is fine)
        raise ShapeError(f"{op}: expected non-empty channels and spatial dims, got input of shape "
                         f"{tuple(input.shape)}")
    kernel = ntuple(op, "kernel_size", kernel_size, nd)
    if min(kernel) < 1:
        raise ArgumentError(f"{op}: kernel_size must be >= 1, got {kernel}")
    spatial = tuple(x.shape[2:])
    if output_size is None and output_ratio is None:
        raise ArgumentError(f"{op}: requires specifying either an output_size or an output_ratio")
    if output_size is not None and output_ratio is not None:
        raise ArgumentError(f"{op}: only one of output_size and output_ratio may be specified")
    if output_size is not None:
        out = ntuple(op, "output_size", output_size, nd)
    else:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        if len(ratio) != nd or any(isinstance(r, bool) or not isinstance(r, numbers.Real) for r in ratio):
            raise ArgumentTypeError(f"{op}: output_ratio must be a number or a tuple of {nd} numbers, got "
                                    f"{output_ratio!r}")
        if not all(0 < r < 1 for r in ratio):
            raise ArgumentError(f"{op}: output_ratio must be between 0 and 1 (got {output_ratio})")
        out = tuple(int(n * r) for n, r in zip(spatial, ratio))
    names = ("time", "height", "width")[3 - nd:]
    for name, n, m, k in zip(names, spatial, out, kernel):
        if m < 1:
            raise ShapeError(f"{op}(): output_size must be positive, got {out}")
        if m + k - 1 > n:
            raise ShapeError(f"{op}(): pool {name} {k} too large relative to input {name} {n}")
    n_batch, channels = x.shape[:2]
    if _random_samples is None:
        samples = rand(n_batch, channels, nd, dtype=x.dtype, device=x.device)
    else:
        samples = check_tensor(op, "_random_samples", _random_samples)
        if tuple(samples.shape) != (n_batch, channels, nd):
            raise ShapeError(f"{op}: expected _random_samples of shape ({n_batch}, {channels}, {nd}), got "
                             f"{tuple(samples.shape)}")
        if samples.dtype != x.dtype:
            raise DTypeError(f"{op}: expected _random_samples of the input's dtype {x.dtype}, got {samples.dtype}")
    u = samples.array.get() if backend.is_gpu_array(samples.array) else numpy.asarray(samples.array)
    idx = Tensor._wrap(fractional_argmax(backend.array_module(x.array), x.array, kernel, out, u))
    y = reshape(gather(flatten(x, 2), 2, reshape(idx, (n_batch, channels, math.prod(out)))), (n_batch, channels) + out)
    if unbatched:
        y, idx = squeeze(y, 0), squeeze(idx, 0)
    return (y, idx) if check_flag(op, "return_indices", return_indices) else y


@autocast_op
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-D fractional max pooling of (N, C, H, W) or (C, H, W) input.

    Args:
        kernel_size (int or (kh, kw)): the window.
        output_size (int or (oh, ow)): the output size, or
        output_ratio (float or pair, in (0, 1)): the output size as a fraction of the input's.
        return_indices (bool): also return the int64 flat positions ``h * W + w`` of the maxima.
        _random_samples (Tensor, optional): (N, C, 2) numbers in [0, 1), the input's dtype
            (default drawn from tinynet's generator).

    {backward_reproducibility_note}

    Returns:
        Tensor (N, C, oh, ow) (or unbatched); with ``return_indices`` a pair (values, indices).

    Raises:
        ArgumentError: neither or both of output_size/output_ratio, a ratio outside (0, 1),
            a kernel below 1. ShapeError: input not 3-D/4-D, a window too large for the
            input, samples of another shape. ArgumentTypeError / DTypeError: bad types.
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


@autocast_op
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D fractional max pooling of (N, C, D, H, W) or (C, D, H, W) input; arguments and
    errors as :func:`fractional_max_pool2d` with triples and ``_random_samples`` (N, C, 3);
    indices ``(d * H + h) * W + w``."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """:func:`fractional_max_pool2d` returning ``(values, indices)`` whatever ``return_indices`` says."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """:func:`fractional_max_pool3d` returning ``(values, indices)`` whatever ``return_indices`` says."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


fractional_max_pool2d.__doc__ = (fractional_max_pool2d.__doc__ or "").format(**reproducibility_notes)
