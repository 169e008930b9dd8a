"""Resampling: ``interpolate`` (``upsample``, ``upsample_nearest``, ``upsample_bilinear``)
and the channel rearrangements ``pixel_shuffle`` / ``pixel_unshuffle`` and ``channel_shuffle``.

``interpolate`` is separable: each spatial axis whose size changes is one
:class:`~tinynet.ops.axis_map.AxisMap` (a weighted gather whose backward is the transposed
gather, so the result is differentiable any number of times). The source coordinates are
PyTorch's (``aten/src/ATen/native/UpSample.h``, the CPU kernels), computed on the host in
the input's precision (float32 for float32 input, float64 for float64) for output
position ``j`` of an axis resized from ``n_in`` to ``n_out``:

* the scale ``s``: ``1 / scale_factor`` when a scale factor was given (and
  ``recompute_scale_factor`` is not True), else ``n_in / n_out``; with
  ``align_corners=True`` (linear modes) ``(n_in - 1) / (n_out - 1)`` (0 when ``n_out == 1``).
* ``'nearest'``: ``src = min(floor(s * j), n_in - 1)`` (OpenCV's INTER_NEAREST; the floor
  rule of the legacy mode, which shifts the image for non-integer scales).
* ``'nearest-exact'``: ``src = min(floor(s * (j + 0.5)), n_in - 1)`` (Pillow, scikit-image).
* ``'linear'``/``'bilinear'``: ``x = s * j`` with ``align_corners``, else the half-pixel
  ``x = max(s * (j + 0.5) - 0.5, 0)``; ``i0 = min(floor(x), n_in - 1)``,
  ``i1 = min(i0 + 1, n_in - 1)``, ``l1 = clamp(x - i0, 0, 1)``, and
  ``y = (1 - l1) * in[i0] + l1 * in[i1]``; an axis that keeps its size is copied.

``pixel_shuffle`` (Shi et al. 2016, "Real-Time Single Image and Video Super-Resolution
Using an Efficient Sub-Pixel Convolutional Neural Network", arXiv:1609.05158) and its
inverse are a reshape, a permute and a reshape; so is ``channel_shuffle`` (ShuffleNet,
Zhang et al. 2018, arXiv:1707.01083).

Differences from PyTorch: no 5-D input (``'trilinear'``, 3-D nearest) and no ``'bicubic'``,
``'area'`` or ``antialias=True`` (each raises ``ArgumentError``/``ShapeError``); nearest
modes take floating-point or uint8 input. Where PyTorch raises ``NotImplementedError``
(a mode that does not fit the input's rank) or ``RuntimeError`` (an empty output),
tinynet raises ``ShapeError`` (a ``ValueError``).
"""
import functools
import math
import numbers
import warnings

import numpy

from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from .autocast import autocast_op
from . import shape as S
from .axis_map import AxisMap, is_identity, transpose_table
from .util import check_int, check_tensor

_LINEAR = {"linear": 3, "bilinear": 4}
_UNSUPPORTED = ("bicubic", "trilinear", "area", "lanczos")


def _f32_floor(v):
    """``floorf`` as the CPU kernels call it: on the value rounded to float32 first."""
    return numpy.floor(v.astype(numpy.float32)).astype(numpy.int64)


def _fma(a, b, c):
    """``a * b + c`` rounded once, as the CPU kernels' fused multiply-add computes it: exact
    for float32 through float64 (a float32 product fits in a double); float64 as is."""
    if b.dtype == numpy.float32:
        return (numpy.float64(a) * b.astype(numpy.float64) + numpy.float64(c)).astype(numpy.float32)
    return a * b + c


@functools.lru_cache(maxsize=1024)
def _tables(mode, n_in, n_out, align_corners, scale, dtype):
    """The (forward, transposed) AxisMap tables of one axis; None for an unchanged axis."""
    dt = numpy.dtype(dtype)
    j = numpy.arange(n_out).astype(dt)
    if align_corners:
        s = dt.type(n_in - 1) / dt.type(n_out - 1) if n_out > 1 else dt.type(0)
    elif scale is not None and scale > 0:
        s = dt.type(1.0 / scale)
    else:
        s = dt.type(n_in) / dt.type(n_out)
    if mode in ("nearest", "nearest-exact"):
        x = s * j if mode == "nearest" else s * (j + dt.type(0.5))
        table = (numpy.minimum(_f32_floor(x), n_in - 1)[None], None)
    else:
        if n_in == n_out:
            return None
        x = s * j if align_corners else numpy.maximum(_fma(s, j + dt.type(0.5), dt.type(-0.5)), dt.type(0))
        i0 = numpy.minimum(_f32_floor(x), n_in - 1)
        l1 = numpy.clip(x - i0.astype(dt), dt.type(0), dt.type(1))
        i1 = i0 + (i0 < n_in - 1)
        table = (numpy.stack([i0, i1]), numpy.stack([dt.type(1) - l1, l1]))
    if is_identity(table, n_in):
        return None
    return table, transpose_table(table[0], table[1], n_in, dt)


def _spatial(op, name, value, dim, input, kind):
    """``size``/``scale_factor`` as a tuple of ``dim`` values."""
    if isinstance(value, (tuple, list)):
        if len(value) != dim:
            raise ArgumentError(f"{op}: input and {name} must have the same number of spatial dimensions, got "
                                f"input of shape {input.shape} ({dim} spatial) and {name}={tuple(value)}")
        values = tuple(value)
    else:
        values = (value,) * dim
    for v in values:
        if kind is int and (isinstance(v, bool) or not isinstance(v, (numbers.Integral, numpy.integer))):
            raise ArgumentTypeError(f"{op}: size must be an int or a tuple of ints, got {value!r}")
        if kind is float and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
            raise ArgumentTypeError(f"{op}: scale_factor must be a number or a tuple of numbers, got {value!r}")
        if kind is float and not math.isfinite(v):
            raise ArgumentError(f"{op}: scale_factor must be finite, got {value!r}")
    return tuple(kind(v) for v in values)


@autocast_op
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of a batch: 1-D (N, C, L) or 2-D (N, C, H, W).

    Args:
        input (Tensor): (N, C, L) for ``'nearest'``, ``'nearest-exact'``, ``'linear'``;
            (N, C, H, W) for ``'nearest'``, ``'nearest-exact'``, ``'bilinear'``. Float
            (nearest modes: float or uint8).
        size (int or tuple of ints): the output's spatial size. Exactly one of ``size`` and
            ``scale_factor`` must be given.
        scale_factor (float or tuple of floats): output size ``floor(in * scale_factor)``;
            the coordinates use ``1 / scale_factor`` unless ``recompute_scale_factor``.
        mode (str): ``'nearest'`` (default), ``'nearest-exact'``, ``'linear'``, ``'bilinear'``.
        align_corners (bool): linear modes only: map the corner pixels' centres onto each
            other (True) or use half-pixel coordinates (False, the default when None).
        recompute_scale_factor (bool): compute the coordinate scale from the output size
            instead of the given ``scale_factor``. Default None (= False).
        antialias (bool): must be False (not supported).

    Returns:
        Tensor (N, C, *size) of ``input``'s dtype. Formulas: see the module docstring.

    Raises:
        ArgumentTypeError: ``input`` not a Tensor, size/scale_factor of the wrong type.
        DTypeError: a non-float input (uint8 is allowed in nearest modes).
        ArgumentError: both or neither of size/scale_factor, a length that does not match
            the spatial dims, ``align_corners`` with a nearest mode, ``recompute_scale_factor``
            with ``size``, an unknown or unsupported mode, ``antialias=True``.
        ShapeError: a rank other than 3 or 4, a mode that does not fit the rank
            (``'linear'`` needs 3-D, ``'bilinear'`` 4-D), an empty output size.
    """
    op = "interpolate"
    check_tensor(op, "input", input)
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ArgumentError(f"{op}: only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ArgumentError(f"{op}: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ArgumentError(f"{op}: recompute_scale_factor is not meaningful with an explicit size")
    if not isinstance(mode, str) or mode not in ("nearest", "nearest-exact") + tuple(_LINEAR) + _UNSUPPORTED:
        raise ArgumentError(f"{op}: mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear', "
                            f"got {mode!r}")
    if mode in _UNSUPPORTED:
        raise ArgumentError(f"{op}: mode={mode!r} is not supported by tinynet (supported: 'nearest', "
                            "'nearest-exact', 'linear', 'bilinear')")
    nearest = mode in ("nearest", "nearest-exact")
    if align_corners is not None and nearest:
        raise ArgumentError(f"{op}: align_corners option can only be set with the interpolating modes: "
                            f"linear | bilinear, got mode={mode!r}")
    if antialias:
        raise ArgumentError(f"{op}: antialias=True is not supported by tinynet")
    if input.ndim not in (3, 4):
        raise ShapeError(f"{op}: expected a 3-D (N, C, L) or 4-D (N, C, H, W) input, got shape {input.shape}")
    if mode in _LINEAR and input.ndim != _LINEAR[mode]:
        raise ShapeError(f"{op}: got {input.ndim}-D input of shape {input.shape}, but {mode} mode needs "
                         f"{_LINEAR[mode]}-D input")
    if not is_floating(input.dtype) and not (nearest and input.dtype == numpy.uint8):
        raise DTypeError(f"{op}: mode={mode!r} expects a floating-point input, got {input.dtype}")
    in_sizes = input.shape[2:]
    if size is not None:
        out_sizes, scales = _spatial(op, "size", size, dim, input, int), (None,) * dim
    else:
        scales = _spatial(op, "scale_factor", scale_factor, dim, input, float)
        out_sizes = tuple(math.floor(float(n) * s) for n, s in zip(in_sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * dim
    if min(out_sizes) < 1 or min(in_sizes) < 1:
        raise ShapeError(f"{op}: input and output sizes should be greater than 0, got input {in_sizes} and "
                         f"output {out_sizes}")
    dtype = str(numpy.dtype(numpy.float64 if input.dtype == numpy.float64 else numpy.float32))
    out = input
    for axis in range(input.ndim - 1, 1, -1):  # the last axis first
        k = axis - 2
        tables = _tables(mode, in_sizes[k], out_sizes[k], bool(align_corners), scales[k], dtype)
        if tables is not None:
            out = AxisMap(op, axis, *tables).apply(out)
    return out if out is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (warns, as PyTorch does)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')`` (warns)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)`` (warns)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _shuffle_args(op, input, factor, name):
    check_tensor(op, "input", input)
    factor = check_int(op, name, factor)
    if factor < 1:
        raise ArgumentError(f"{op}: expects a positive {name}, but got {factor}")
    if input.ndim < 3:
        raise ShapeError(f"{op}: expects input to have at least 3 dimensions (*, C, H, W), got shape {input.shape}")
    return factor


def pixel_shuffle(input, upscale_factor):
    """Rearrange (*, C*r^2, H, W) into (*, C, H*r, W*r) (sub-pixel convolution, Shi et al. 2016):
    ``out[..., c, h*r + i, w*r + j] = in[..., c*r^2 + i*r + j, h, w]``.

    Args:
        input (Tensor): at least 3-D, (*, C*r^2, H, W). upscale_factor (int): r >= 1.

    Returns:
        Tensor (*, C, H*r, W*r), differentiable (a reshape/permute/reshape).

    Raises:
        ShapeError: fewer than 3 dims, or channels not divisible by r^2.
        ArgumentError: r < 1. ArgumentTypeError: r not an int.
    """
    r = _shuffle_args("pixel_shuffle", input, upscale_factor, "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle: expects its input's 'channel' dimension (-3) to be divisible by the "
                         f"square of upscale_factor {r * r}, got input of shape {input.shape}")
    b = len(batch)
    x = S.reshape(input, (*batch, c // (r * r), r, r, h, w))
    x = S.permute(x, (*range(b), b, b + 3, b + 1, b + 4, b + 2))
    return S.reshape(x, (*batch, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """The inverse of :func:`pixel_shuffle`: (*, C, H*r, W*r) -> (*, C*r^2, H, W).

    Raises:
        ShapeError: fewer than 3 dims, or height/width not divisible by r.
        ArgumentError: r < 1. ArgumentTypeError: r not an int.
    """
    r = _shuffle_args("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle: expects height and width (dims -2, -1) to be divisible by "
                         f"downscale_factor {r}, got input of shape {input.shape}")
    b = len(batch)
    x = S.reshape(input, (*batch, c, h // r, r, w // r, r))
    x = S.permute(x, (*range(b), b, b + 2, b + 4, b + 1, b + 3))
    return S.reshape(x, (*batch, c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    """Interleave the channels of (N, C, *) input across ``groups`` (ShuffleNet, Zhang et al.
    2018): channel ``g * (C / groups) + k`` moves to ``k * groups + g``.

    Raises:
        ArgumentTypeError: not a Tensor, or ``groups`` not an int.
        ArgumentError: ``groups`` below 1.
        ShapeError: fewer than 3 dims, or channels not divisible by ``groups``.
    """
    check_tensor("channel_shuffle", "input", input)
    g = check_int("channel_shuffle", "groups", groups, 1)
    if input.ndim < 3:
        raise ShapeError(f"channel_shuffle: expects input with > 2 dims, got shape {tuple(input.shape)}")
    n, c, *rest = input.shape
    if c % g:
        raise ShapeError(f"channel_shuffle: the number of channels must be divisible by groups, got {c} channels "
                         f"and {g} groups")
    x = S.reshape(input, (n, g, c // g, *rest))
    return S.reshape(S.transpose(x, 1, 2), (n, c, *rest))


def native_channel_shuffle(input, groups):
    """PyTorch's ``native_channel_shuffle``: the same shuffle as :func:`channel_shuffle` (PyTorch's
    kernel-level spelling of it); arguments and errors as there."""
    return channel_shuffle(input, groups)
