"""Sliding-window helpers shared by convolution and pooling: argument parsing, output
sizes, the strided window view, col2im and the batch-last layout test.

Output size along one axis (PyTorch's convention):
``out = floor((size + pad_lo + pad_hi - dilation * (k - 1) - 1) / stride) + 1``.
"""
import numpy

from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor


def pair(op, name, v):
    """An int or a pair of ints as an (h, w) pair.

    Raises:
        ArgumentTypeError: anything else.
    """
    if isinstance(v, (int, numpy.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(i, (int, numpy.integer)) for i in v):
        return int(v[0]), int(v[1])
    raise ArgumentTypeError(f"{op}: {name} must be an int or a pair of ints, got {v!r}")


def check_4d(op, name, t, layout):
    """Raise unless ``t`` is a 4-D floating-point Tensor (``layout`` names its dims)."""
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if t.ndim != 4:
        raise ShapeError(f"{op}: expected {name} of shape {layout}, got {t.shape}")
    if not is_floating(t.dtype):
        raise DTypeError(f"{op}: expected a floating-point {name}, got {t.dtype}")


def out_size(op, size, pad_lo, pad_hi, k, stride, dilation):
    """Output length of a window of ``k`` taps sliding over ``size`` (+ padding).

    Raises:
        ShapeError: the output would be empty.
    """
    out = (size + pad_lo + pad_hi - dilation * (k - 1) - 1) // stride + 1
    if out < 1:
        raise ShapeError(f"{op}: input size {size} (padding {pad_lo}+{pad_hi}) is too small for "
                         f"kernel {k} with dilation {dilation}; output size would be {out}")
    return out


def pool_out(op, size, k, s, p, d, ceil_mode):
    """Pooling output length; with ``ceil_mode`` rounded up, dropping a last window that
    would start in the right padding (as PyTorch does)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out < 1:
        raise ShapeError(f"{op}: input size {size} is too small for kernel {k} (padding {p}, "
                         f"dilation {d}); output size would be {out}")
    return out


def conv_padding(op, padding, kernel, dilation, stride):
    """Resolve int/pair/'same'/'valid' padding to ((top, bottom), (left, right)).

    Raises:
        ArgumentError: an unknown string, 'same' with a stride, or negative padding.
    """
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0), (0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise ArgumentError(f"{op}: padding='same' requires stride 1, got stride {stride}")
            out = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise ArgumentError(f"{op}: padding must be an int, a pair, 'same' or 'valid', got {padding!r}")
    ph, pw = pair(op, "padding", padding)
    if ph < 0 or pw < 0:
        raise ArgumentError(f"{op}: padding must be >= 0, got {padding}")
    return (ph, ph), (pw, pw)


def windows(xp, x, kh, kw, sh, sw, dh, dw, ho, wo):
    """Strided view (N, C, ho, wo, kh, kw) of every receptive field of padded ``x``."""
    s = x.strides
    shape = (x.shape[0], x.shape[1], ho, wo, kh, kw)
    strides = (s[0], s[1], s[2] * sh, s[3] * sw, s[2] * dh, s[3] * dw)
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def col2im_add(dst, cols, sh, sw, dh, dw):
    """Scatter-add ``cols`` (N, C, kh, kw, ho, wo) into ``dst`` (N, C, Hp, Wp), in place:
    one strided add per kernel offset."""
    kh, kw, ho, wo = cols.shape[2:]
    for p in range(kh):
        for q in range(kw):
            dst[:, :, p * dh:p * dh + sh * (ho - 1) + 1:sh, q * dw:q * dw + sw * (wo - 1) + 1:sw] += cols[:, :, p, q]


def is_batch_last(x):
    """True when NCHW array ``x`` is a view of a C-ordered (C, H, W, N) buffer (N > 1),
    the layout the CPU's batch-last convolution produces (see :mod:`tinynet.ops.cpu.conv`)."""
    return x.ndim == 4 and x.shape[0] > 1 and x.transpose(1, 2, 3, 0).flags.c_contiguous


def window_slices(kernel, stride, dilation, out):
    """One (N, C, H_out, W_out) strided slice of the padded input per kernel offset (p, q),
    in row-major offset order."""
    (kh, kw), (sh, sw), (dh, dw), (ho, wo) = kernel, stride, dilation, out
    return [(slice(None), slice(None), slice(p * dh, p * dh + sh * (ho - 1) + 1, sh),
             slice(q * dw, q * dw + sw * (wo - 1) + 1, sw)) for p in range(kh) for q in range(kw)]


def running_max(xp, x, y, slices):
    """``y = max over the offsets of x[offset slice]``, folded one offset at a time into ``y``."""
    if len(slices) > 1:
        xp.maximum(x[slices[0]], x[slices[1]], out=y)
    else:
        y[...] = x[slices[0]]
    for sl in slices[2:]:
        xp.maximum(y, x[sl], out=y)
