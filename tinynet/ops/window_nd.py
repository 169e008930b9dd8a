"""Sliding windows over any number of spatial dims: the N-d generalisation of
:mod:`tinynet.ops.window`, for the 3-D convolutions and poolings (volumes
(N, C, D, H, W)).

Per spatial axis the output length is PyTorch's
``out = floor((size + pad_lo + pad_hi - dilation * (k - 1) - 1) / stride) + 1``.
:func:`windows` is a strided view of every receptive field (no copy), :func:`col2im_add`
its adjoint (one strided add per kernel offset), :func:`offset_slices` one strided slice
of the padded input per kernel offset (the running max/sum of pooling).
"""
import itertools
import numbers

import numpy

from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor


def ntuple(op, name, v, n):
    """An int, or a sequence of ``n`` ints, as a tuple of ``n`` ints.

    Raises:
        ArgumentTypeError: anything else (bools, floats, a sequence of another length).
    """
    if isinstance(v, (numbers.Integral, numpy.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    if (isinstance(v, (tuple, list)) and len(v) == n
            and all(isinstance(i, (numbers.Integral, numpy.integer)) and not isinstance(i, bool) for i in v)):
        return tuple(int(i) for i in v)
    raise ArgumentTypeError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v!r}")


def check_volume(op, name, t, nd, unbatched=True):
    """Raise unless ``t`` is a floating-point Tensor of ``nd + 2`` dims (or ``nd + 1``, an
    unbatched sample, when ``unbatched``); returns whether it is unbatched."""
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    dims = "D, H, W" if nd == 3 else ", ".join(f"S{i}" for i in range(nd))
    ranks = (nd + 1, nd + 2) if unbatched else (nd + 2,)
    if t.ndim not in ranks:
        layout = f"(C, {dims}) or (N, C, {dims})" if unbatched else f"(N, C, {dims})"
        raise ShapeError(f"{op}: expected {name} of shape {layout}, got {tuple(t.shape)}")
    if not is_floating(t.dtype):
        raise DTypeError(f"{op}: expected a floating-point {name}, got {t.dtype}")
    return t.ndim == nd + 1


def out_sizes(op, sizes, pads, kernel, stride, dilation):
    """Output length per axis; ``pads`` holds (lo, hi) pairs.

    Raises:
        ShapeError: an output would be empty.
    """
    out = []
    for size, (lo, hi), k, s, d in zip(sizes, pads, kernel, stride, dilation):
        o = (size + lo + hi - d * (k - 1) - 1) // s + 1
        if o < 1:
            raise ShapeError(f"{op}: input size {size} (padding {lo}+{hi}) is too small for kernel {k} with "
                             f"dilation {d}; output size would be {o}")
        out.append(o)
    return tuple(out)


def pool_out(op, size, k, s, p, d, ceil_mode):
    """Pooling output length along one axis; with ``ceil_mode`` rounded up, dropping a last
    window that would start in the right padding (PyTorch's rule).

    Raises:
        ShapeError: the output would be empty.
    """
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out < 1:
        raise ShapeError(f"{op}: input size {size} is too small for kernel {k} (padding {p}, dilation {d}); "
                         f"output size would be {out}")
    return out


def conv_padding(op, padding, kernel, dilation, stride):
    """int / tuple / 'same' / 'valid' padding as one (lo, hi) pair per axis ('same' pads an
    odd total one more at the end, as PyTorch).

    Raises:
        ArgumentError: an unknown string, 'same' with a stride, negative padding.
        ArgumentTypeError: a padding that is neither a string nor ints.
    """
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ArgumentError(f"{op}: padding='same' requires stride 1, got stride {stride}")
            return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))
        raise ArgumentError(f"{op}: padding must be an int, a tuple, 'same' or 'valid', got {padding!r}")
    p = ntuple(op, "padding", padding, nd)
    if min(p) < 0:
        raise ArgumentError(f"{op}: padding must be >= 0, got {padding}")
    return tuple((i, i) for i in p)


def windows(xp, x, kernel, stride, dilation, out):
    """Strided view (N, C, *out, *kernel) of every receptive field of the padded ``x``
    (N, C, *spatial)."""
    s = x.strides[2:]
    shape = x.shape[:2] + tuple(out) + tuple(kernel)
    strides = x.strides[:2] + tuple(a * b for a, b in zip(s, stride)) + tuple(a * b for a, b in zip(s, dilation))
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def offset_slices(kernel, stride, dilation, out):
    """One (N, C, *out) strided slice of the padded input per kernel offset, in row-major
    offset order (the order ``windows(...).reshape(..., -1)`` flattens the taps in)."""
    slices = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        slices.append((slice(None), slice(None)) + tuple(
            slice(p * d, p * d + s * (o - 1) + 1, s) for p, d, s, o in zip(offset, dilation, stride, out)))
    return slices


def col2im_add(dst, cols, stride, dilation):
    """Scatter-add ``cols`` (N, C, *kernel, *out) into ``dst`` (N, C, *padded), in place: one
    strided add per kernel offset."""
    nd = (cols.ndim - 2) // 2
    kernel, out = cols.shape[2:2 + nd], cols.shape[2 + nd:]
    for offset, sl in zip(itertools.product(*(range(k) for k in kernel)),
                          offset_slices(kernel, stride, dilation, out)):
        dst[sl] += cols[(slice(None), slice(None)) + offset]


def pad_to(xp, x, pads, value=0.0):
    """``x`` (N, C, *spatial) with (lo, hi) ``pads`` per spatial axis of ``value`` (no copy
    when nothing is padded)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=value)
