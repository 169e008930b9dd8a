"""Max pooling's indices (``return_indices=True``) and their inverse, max unpooling.

Indices are PyTorch's: for each output element, the flat position ``h * W + w`` of its
window's maximum within the input plane (the first maximum on ties, a NaN if there is one).
They are computed from the input array (no gradient), from a strided view of every window
of the ``-inf``-padded input, by ``argmax`` over the window's taps; the values themselves
come from the max-pooling op, whose backward sends each gradient to that same element.

``max_unpool2d(y, indices, ...)`` writes each ``y`` value at its index in a zero plane of
the output size (default ``(H_in - 1) * stride - 2 * padding + kernel``), by
:func:`tinynet.scatter` along the flattened plane, so its gradient is the output gradient
gathered at the indices.
"""
import numpy

from .. import backend
from ..errors import ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from .autocast import autocast_op
from .creation import zeros
from .gather import scatter
from .shape import reshape, squeeze, unsqueeze
from .util import check_float, check_int, check_tensor
from .window import pair, windows
from .window_nd import ntuple


def max_pool2d_indices(x, kernel, stride, padding, dilation, out):
    """int64 indices (N, C, H_out, W_out) of each window's maximum in the (N, C, H, W) array ``x``."""
    xp = backend.array_module(x)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ho, wo) = kernel, stride, padding, dilation, out
    n, c, h, w = x.shape
    right = max(0, (ho - 1) * sh + dh * (kh - 1) + 1 - (h + ph))   # ceil_mode's partial windows
    bottom = max(0, (wo - 1) * sw + dw * (kw - 1) + 1 - (w + pw))
    padded = xp.pad(x, ((0, 0), (0, 0), (ph, right), (pw, bottom)), constant_values=-numpy.inf)
    taps = windows(xp, padded, kh, kw, sh, sw, dh, dw, ho, wo).reshape(n, c, ho, wo, kh * kw)
    k = xp.argmax(taps, axis=-1)                                    # first maximum; NaN wins
    rows = xp.arange(ho).reshape(ho, 1) * sh - ph + (k // kw) * dh
    cols = xp.arange(wo) * sw - pw + (k % kw) * dw
    return (rows * w + cols).astype(numpy.int64)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of :func:`max_pool2d` with ``return_indices=True``: each value of ``input``
    (N, C, H_in, W_in) or (C, H_in, W_in) is written at its flat index ``h * W_out + w`` of
    a zero output plane; every other output element is 0.

    Args:
        input (Tensor): float, the pooled values.
        indices (Tensor): int64, the same shape, from ``max_pool2d(..., return_indices=True)``.
        kernel_size, stride (default ``kernel_size``), padding: int or pair, the pooling's.
        output_size (sequence of ints, optional): (H_out, W_out), or the whole output shape;
            default ``(H_in - 1) * stride - 2 * padding + kernel_size`` per dim.

    Returns:
        Tensor (N, C, H_out, W_out) (or (C, H_out, W_out)) of the input's dtype.

    Raises:
        ArgumentTypeError: not tensors, or sizes that are not ints.
        DTypeError: a non-float input or non-integer indices.
        ShapeError: input not 3-D or 4-D, indices of another shape, a bad output_size.
        IndexOutOfRangeError: an index outside the output plane (checked on the CPU).
    """
    return _unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of :func:`max_pool1d` with ``return_indices=True`` on (N, C, L_in) or
    (C, L_in) input: output length ``(L_in - 1) * stride - 2 * padding + kernel_size`` unless
    ``output_size`` is given. Arguments and errors as :func:`max_unpool2d`."""
    return _unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


@autocast_op
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of :func:`~tinynet.nn.functional.max_pool3d` with ``return_indices=True`` on
    (N, C, D_in, H_in, W_in) or (C, D_in, H_in, W_in) input: each value is written at its
    flat index ``(d * H_out + h) * W_out + w`` of a zero output volume, of size
    ``(D_in - 1) * stride - 2 * padding + kernel_size`` per axis unless ``output_size`` is
    given. Arguments (int or triple sizes) and errors as :func:`max_unpool2d`."""
    return _unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size, 3)


def _unpool(op, input, indices, kernel_size, stride, padding, output_size, spatial):
    check_float(op, "input", input)
    check_tensor(op, "indices", indices)
    if indices.array.dtype.kind not in "iu":
        raise DTypeError(f"{op}: expected integer (int64) indices, got {indices.dtype}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ShapeError(f"{op}: expected a {spatial + 1}-D or {spatial + 2}-D input, got shape {tuple(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected indices of the input's shape {tuple(input.shape)}, got "
                         f"{tuple(indices.shape)}")
    backend.common_module(op, (input.array, indices.array))
    def size(v, name):  # an int, or a sequence with one int per spatial dim
        if spatial == 2:
            return pair(op, name, v)
        if spatial == 3:
            return ntuple(op, name, v, 3)
        if isinstance(v, (tuple, list)) and len(v) == 1:
            v = v[0]
        return (check_int(op, name, v),)
    k = size(kernel_size, "kernel_size")
    s = k if stride is None else size(stride, "stride")
    p = size(padding, "padding")
    sizes_in = tuple(input.shape[-spatial:])
    default = tuple((sizes_in[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(spatial))
    if output_size is None:
        out = default
    else:
        if not isinstance(output_size, (tuple, list)) and not hasattr(output_size, "__len__"):
            raise ArgumentTypeError(f"{op}: output_size must be a sequence of ints, got {type(output_size).__name__}")
        given = [check_int(op, "output_size", v) for v in output_size]
        if len(given) == input.ndim:
            given = given[-spatial:]
        if len(given) != spatial:
            raise ShapeError(f"{op}: output_size must have {spatial} or {input.ndim} elements, got {len(given)}")
        for i in range(spatial):
            if not default[i] - s[i] < given[i] < default[i] + s[i]:
                raise ShapeError(f"{op}: output_size {given} is not within one stride of the default {list(default)}")
        out = tuple(given)
    x = input if input.ndim == spatial + 2 else unsqueeze(input, 0)
    idx = indices if indices.ndim == spatial + 2 else unsqueeze(indices, 0)
    plane = int(numpy.prod(out))
    a = idx.array
    if isinstance(a, numpy.ndarray) and a.size and (int(a.min()) < 0 or int(a.max()) >= plane):
        bad = int(a.min()) if int(a.min()) < 0 else int(a.max())
        raise IndexOutOfRangeError(f"{op}: index {bad} is outside the output plane of {plane} elements {out}")
    n, c = x.shape[:2]
    flat = scatter(zeros(n, c, plane, dtype=x.dtype, device=x.device), 2, reshape(idx, (n, c, -1)).long(),
                   reshape(x, (n, c, -1)))
    y = reshape(flat, (n, c) + out)
    return y if input.ndim == spatial + 2 else squeeze(y, 0)

