"""1-D pooling, ``max_pool1d``, ``avg_pool1d`` and ``adaptive_avg_pool1d``, as the 2-D
poolings of :mod:`tinynet.ops.pooling` over a height-1 view: (N, C, L) becomes
(N, C, 1, L), the window ``(1, k)``. Forward, backward and the GPU kernels are those of
the 2-D ops, and the results equal PyTorch's 1-D ones. Unbatched (C, L) input is
accepted, as PyTorch's.
"""
import numbers

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .shape import squeeze, unsqueeze
from .util import check_float, check_tensor


def _single(op, name, v):
    """An int from an int or a one-element tuple/list."""
    if isinstance(v, (tuple, list)) and len(v) == 1:
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"{op}: {name} must be an int or a tuple of one int, got {v!r}")
    return int(v)


def _as_4d(op, input):
    """(N, C, 1, L) of a (N, C, L) or (C, L) input, and whether it was unbatched."""
    check_tensor(op, "input", input)
    if input.ndim not in (2, 3):
        raise ShapeError(f"{op}: expected 2-D (C, L) or 3-D (N, C, L) input, got shape {tuple(input.shape)}")
    unbatched = input.ndim == 2
    x = unsqueeze(input, 0) if unbatched else input
    return unsqueeze(x, 2), unbatched


def _back(y, unbatched):
    y = squeeze(y, 2)
    return squeeze(y, 0) if unbatched else y


def _window(op, kernel_size, stride, padding, dilation=1):
    k = _single(op, "kernel_size", kernel_size)
    s = k if stride is None or isinstance(stride, (tuple, list)) and not stride else _single(op, "stride", stride)
    p, d = _single(op, "padding", padding), _single(op, "dilation", dilation)
    if k < 1 or s < 1 or d < 1:
        raise ArgumentError(f"{op}: kernel_size, stride and dilation must be >= 1, got {k}, {s}, {d}")
    if p < 0 or p > k // 2:
        raise ArgumentError(f"{op}: pad should be at most half of effective kernel size, but got pad={p} and "
                            f"kernel_size={k}")
    return k, s, p, d


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling of (N, C, L) or (C, L) input.

    Args:
        kernel_size (int): the window.
        stride (int): default ``kernel_size``.
        padding (int): implicit -inf padding, at most half the kernel. Default 0.
        dilation (int): default 1.
        ceil_mode (bool): round the output length up. Default False.
        return_indices (bool): also return each window's int64 argmax position in the
            input (``nn.MaxUnpool1d``'s input). Default False.

    Returns:
        Tensor (N, C, L_out) (or (C, L_out)); with ``return_indices`` a pair (values, indices).

    Raises:
        ShapeError: input not 2-D or 3-D, or too short.
        ArgumentError: a bad window.
        ArgumentTypeError: a size that is not an int.
    """
    k, s, p, d = _window("max_pool1d", kernel_size, stride, padding, dilation)
    x, unbatched = _as_4d("max_pool1d", input)
    r = max_pool2d(x, (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    return (_back(r[0], unbatched), _back(r[1], unbatched)) if return_indices else _back(r, unbatched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling of (N, C, L) or (C, L) input.

    Args:
        kernel_size (int): the window.
        stride (int): default ``kernel_size``.
        padding (int): at most half the kernel. Default 0.
        ceil_mode (bool): round the output length up. Default False.
        count_include_pad (bool): zero padding counts in the divisor. Default True.

    Raises:
        ShapeError: input not 2-D or 3-D, or too short.
        ArgumentError: a bad window.
        ArgumentTypeError: a size that is not an int.
    """
    k, s, p, _ = _window("avg_pool1d", kernel_size, stride, padding)
    check_float("avg_pool1d", "input", input)
    x, unbatched = _as_4d("avg_pool1d", input)
    return _back(avg_pool2d(x, (1, k), (1, s), (0, p), ceil_mode, count_include_pad), unbatched)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    Raises:
        ShapeError: input not 2-D or 3-D.
        ArgumentError: ``output_size < 1``.
        ArgumentTypeError: ``output_size`` is not an int.
    """
    out = _single("adaptive_avg_pool1d", "output_size", output_size)
    x, unbatched = _as_4d("adaptive_avg_pool1d", input)
    return _back(adaptive_avg_pool2d(x, (1, out)), unbatched)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool2d` returning ``(values, indices)`` whatever ``return_indices`` says
    (PyTorch's ``F.max_pool2d_with_indices``)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool1d` returning ``(values, indices)`` (PyTorch's ``F.max_pool1d_with_indices``)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
