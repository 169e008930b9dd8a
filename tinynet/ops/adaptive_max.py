"""Adaptive max pooling, ``adaptive_max_pool2d`` and ``adaptive_max_pool1d``: max pooling
to a fixed output size, composed of tinynet's ops.

Output cell ``i`` of a dimension of size ``n`` pooled to ``m`` covers the input positions
``[floor(i * n / m), ceil((i + 1) * n / m))`` (PyTorch's windows; neighbours may overlap
by one). When ``m`` divides ``n`` in both dims the windows tile the input and the op is
:func:`~tinynet.nn.functional.max_pool2d` with kernel = stride = ``n / m`` (tinynet's
kernels on the GPU); otherwise each output cell is a ``max`` over its flattened window
(one small op per cell: fine for the usual small outputs, slow for large ones). Either
way the gradient goes to the first maximum of each window, as in PyTorch.
"""
import numbers

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from .join import stack
from .pooling import max_pool2d
from .reduction import max as _max
from .shape import flatten, squeeze, unsqueeze
from .util import check_float


def _sizes(op, output_size, n_dims):
    wanted = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * n_dims
    if len(wanted) != n_dims or any(v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral))
                                    for v in wanted):
        raise ArgumentTypeError(f"{op}: output_size must be an int or a tuple of {n_dims} ints (or None), got "
                                f"{output_size!r}")
    return wanted


def _windows(n, m):
    return [(i * n // m, -(-(i + 1) * n // m)) for i in range(m)]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) input to ``output_size``.

    Args:
        input: float (N, C, H, W) or (C, H, W).
        output_size: int or (h, w); ``None`` in a pair keeps that input size.
        return_indices (bool): also return, per output cell, the flat position (``row * W +
            col``) of its maximum in the input plane (int64). Default False.

    Returns:
        Tensor (N, C, h, w) (or (C, h, w)); with ``return_indices`` a pair (values, indices).

    Raises:
        ShapeError: input not 3-D or 4-D, or with an empty plane.
        ArgumentError: an output size below 1.
        ArgumentTypeError: a size that is not an int, or a non-float input.
    """
    check_float("adaptive_max_pool2d", "input", input)
    if input.ndim not in (3, 4):
        raise ShapeError(f"adaptive_max_pool2d: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    unbatched = input.ndim == 3
    x = unsqueeze(input, 0) if unbatched else input
    h, w = x.shape[2:]
    oh, ow = (x.shape[2 + i] if v is None else v for i, v in enumerate(_sizes("adaptive_max_pool2d",
                                                                                output_size, 2)))
    if oh < 1 or ow < 1:
        raise ArgumentError(f"adaptive_max_pool2d: output_size must be >= 1, got {output_size}")
    if h < 1 or w < 1 or x.shape[1] < 1:
        raise ShapeError(f"adaptive_max_pool2d: expected non-empty channels, height and width, got shape "
                         f"{tuple(input.shape)}")
    if not return_indices and h % oh == 0 and w % ow == 0:  # windows that tile the input
        y = max_pool2d(x, (h // oh, w // ow))
        return squeeze(y, 0) if unbatched else y
    values, where = [], []
    for r0, r1 in _windows(h, oh):
        for c0, c1 in _windows(w, ow):
            best = _max(flatten(x[:, :, r0:r1, c0:c1], 2), 2)
            values.append(best.values)
            if return_indices:  # window-local k -> (r0 + k // width) * W + c0 + k % width
                k, width = best.indices, c1 - c0
                where.append((k // width + r0) * w + k % width + c0)
    shape = (x.shape[0], x.shape[1], oh, ow)
    y = stack(values, 2).reshape(shape)
    if unbatched:
        y = squeeze(y, 0)
    if not return_indices:
        return y
    idx = stack(where, 2).reshape(shape)
    return y, (squeeze(idx, 0) if unbatched else idx)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) input to ``output_size`` (an int; see
    :func:`adaptive_max_pool2d`; indices are positions along L).

    Raises:
        ShapeError: input not 2-D or 3-D, or empty.
        ArgumentError: an output size below 1.
        ArgumentTypeError: a size that is not an int, or a non-float input.
    """
    check_float("adaptive_max_pool1d", "input", input)
    if input.ndim not in (2, 3):
        raise ShapeError(f"adaptive_max_pool1d: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    (out,) = _sizes("adaptive_max_pool1d", output_size, 1)
    if out is None:
        raise ArgumentTypeError("adaptive_max_pool1d: output_size must be an int, got None")
    r = adaptive_max_pool2d(unsqueeze(input, -2), (1, out), return_indices)
    return (squeeze(r[0], -2), squeeze(r[1], -2)) if return_indices else squeeze(r, -2)


def torch_adaptive_max_pool1d(input, output_size):
    """``tinynet.adaptive_max_pool1d`` (PyTorch's ``torch.adaptive_max_pool1d``): always the
    pair (values, indices) of :func:`adaptive_max_pool1d` with ``return_indices=True``."""
    return adaptive_max_pool1d(input, output_size, True)



def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` returning ``(values, indices)`` whatever ``return_indices``
    says (PyTorch's ``F.adaptive_max_pool2d_with_indices``)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool1d` returning ``(values, indices)`` whatever ``return_indices``
    says (PyTorch's ``F.adaptive_max_pool1d_with_indices``)."""
    return adaptive_max_pool1d(input, output_size, True)
