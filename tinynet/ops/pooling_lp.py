"""Power-average pooling, composed of tinynet's ops: ``lp_pool1d``, ``lp_pool2d`` and
``lp_pool3d``.

LP pooling (as PyTorch computes it) is ``(sum over the window of x^p)^(1/p)``: an average
pooling of ``x^p`` times the window's size, with ``sign(s) * relu(|s|)`` taken of the sum
``s`` before the root (so a negative sum, possible for odd ``p``, gives 0).
"""
import numbers

from ..errors import ArgumentTypeError
from .activation import relu
from .arith import mul, pow
from .pooling import avg_pool2d
from .pooling1d import avg_pool1d
from .pooling3d import avg_pool3d
from .unary import abs, sign
from .util import check_float


def _norm(op, norm_type):
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise ArgumentTypeError(f"{op}: norm_type must be a number, got {type(norm_type).__name__}")
    return norm_type


def _root(pooled, norm_type, window):
    return pow(mul(mul(sign(pooled), relu(abs(pooled))), window), 1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """LP pooling of (N, C, H, W) or (C, H, W) input: ``(sum_window x^p)^(1/p)`` with
    ``p = norm_type`` (1 is sum pooling; large ``p`` tends to max pooling).

    Args:
        norm_type (float): the power ``p``.
        kernel_size (int or (kh, kw)): the window. stride: default the window.
        ceil_mode (bool): round the output size up. Default False.

    Raises:
        ArgumentTypeError: a non-number ``norm_type``, a non-int size, a non-float input.
        ShapeError / ArgumentError: as :func:`~tinynet.nn.functional.avg_pool2d`.
    """
    p = _norm("lp_pool2d", norm_type)
    check_float("lp_pool2d", "input", input)
    kh, kw = kernel_size if isinstance(kernel_size, (tuple, list)) and len(kernel_size) == 2 else (
        kernel_size, kernel_size)
    pooled = avg_pool2d(pow(input, p), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, p, kh * kw)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """LP pooling of (N, C, L) or (C, L) input; see :func:`lp_pool2d`.

    Raises:
        ArgumentTypeError: a non-number ``norm_type``, a non-int size, a non-float input.
        ShapeError / ArgumentError: as :func:`~tinynet.nn.functional.avg_pool1d`.
    """
    p = _norm("lp_pool1d", norm_type)
    check_float("lp_pool1d", "input", input)
    pooled = avg_pool1d(pow(input, p), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, p, kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """LP pooling of (N, C, D, H, W) or (C, D, H, W) input: ``(sum_window x^p)^(1/p)``;
    see :func:`lp_pool2d`.

    Args:
        norm_type (float): the power ``p``.
        kernel_size (int or (kd, kh, kw)): the window. stride: default the window.
        ceil_mode (bool): round the output size up. Default False.

    Raises:
        ArgumentTypeError: a non-number ``norm_type``, a non-int size, a non-float input.
        ShapeError / ArgumentError: as :func:`~tinynet.nn.functional.avg_pool3d`.
    """
    p = _norm("lp_pool3d", norm_type)
    check_float("lp_pool3d", "input", input)
    k = kernel_size if isinstance(kernel_size, (tuple, list)) and len(kernel_size) == 3 else (kernel_size,) * 3
    pooled = avg_pool3d(pow(input, p), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, p, k[0] * k[1] * k[2])
