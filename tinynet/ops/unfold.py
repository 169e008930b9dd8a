"""``F.unfold`` (im2col: sliding local blocks as columns) and ``F.fold`` (col2im: the blocks
summed back into an image), as convolutions with a fixed 0/1 kernel, so that forward,
backward and the GPU path (cuDNN) are those of ``conv2d`` and ``conv_transpose2d``
(which, like them, are not differentiable twice).

``unfold``: a grouped convolution (one group per input channel) whose ``kh * kw`` output
channels per group each pick one kernel offset: output channel ``c * kh * kw + i * kw + j``
holds ``x[c, i * dh + s_h * oh - p_h, j * dw + s_w * ow - p_w]``, PyTorch's row order.
``fold`` is its adjoint: the transposed convolution with the same kernel, which adds
overlapping blocks, sized to ``output_size`` with the output padding that reaches it.
"""
import functools

import numpy

from .. import backend, devices
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .conv import conv2d
from .conv_transpose import conv_transpose2d
from .shape import reshape, squeeze, unsqueeze
from .util import check_float
from .window import pair


def _picking_kernel(channels, kh, kw, like):
    """(channels * kh * kw, 1, kh, kw): a one at each output channel's own offset, in
    ``like``'s dtype and on its device (built and copied once per configuration)."""
    return Tensor._wrap(_kernel_array(channels, kh, kw, like.dtype, str(like.device)))


@functools.lru_cache(maxsize=32)
def _kernel_array(channels, kh, kw, dtype, device):
    per = kh * kw
    w = numpy.zeros((channels, per, kh, kw), dtype=dtype)
    w[:, numpy.arange(per), numpy.arange(per) // kw, numpy.arange(per) % kw] = 1
    return backend.to_device(w.reshape(channels * per, 1, kh, kw), devices.resolve(device, "unfold"))


def _window(op, kernel_size, dilation, padding, stride):
    k, d, p, s = (pair(op, name, v) for name, v in (("kernel_size", kernel_size), ("dilation", dilation),
                                                      ("padding", padding), ("stride", stride)))
    if min(k) < 1 or min(d) < 1 or min(s) < 1 or min(p) < 0:
        raise ArgumentError(f"{op}: kernel_size, dilation and stride must be >= 1 and padding >= 0, got "
                            f"kernel_size={k}, dilation={d}, padding={p}, stride={s}")
    return k, d, p, s


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of a batched (N, C, H, W) or unbatched (C, H, W) input as
    columns: (N, C * kh * kw, L), L the number of block positions.

    Args:
        input (Tensor): float, 3-D or 4-D.
        kernel_size, dilation, padding, stride (int or pair): as for ``conv2d``.

    Raises:
        ShapeError: input not 3-D or 4-D, or smaller than one block.
        ArgumentError: a size below 1 (padding below 0).
    """
    check_float("unfold", "input", input)
    if input.ndim not in (3, 4):
        raise ShapeError(f"unfold: expected 3-D (unbatched) or 4-D (batched) input, got shape {tuple(input.shape)}")
    (kh, kw), d, p, s = _window("unfold", kernel_size, dilation, padding, stride)
    x = unsqueeze(input, 0) if input.ndim == 3 else input
    n, c = x.shape[:2]
    for size, k, dd, pp, name in ((x.shape[2], kh, d[0], p[0], "height"), (x.shape[3], kw, d[1], p[1], "width")):
        if size + 2 * pp < dd * (k - 1) + 1:
            raise ShapeError(f"unfold: the padded input {name} {size + 2 * pp} is smaller than the dilated kernel "
                             f"{dd * (k - 1) + 1}")
    cols = conv2d(x, _picking_kernel(c, kh, kw, x), None, s, p, d, groups=c)
    cols = reshape(cols, (n, c * kh * kw, -1))
    return squeeze(cols, 0) if input.ndim == 3 else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns of blocks (N, C * kh * kw, L) back into images (N, C, H, W), the adjoint
    of :func:`unfold` (overlapping entries add up). Unbatched (C * kh * kw, L) gives
    (C, H, W).

    Args:
        input (Tensor): float, 2-D or 3-D.
        output_size (int or pair): (H, W).
        kernel_size, dilation, padding, stride (int or pair): as for :func:`unfold`.

    Raises:
        ShapeError: input not 2-D or 3-D, a row count not divisible by ``kh * kw``, or a
            column count that does not match the number of blocks of ``output_size``.
        ArgumentError: a size below 1 (padding below 0).
    """
    check_float("fold", "input", input)
    if input.ndim not in (2, 3):
        raise ShapeError(f"fold: expected 2-D (unbatched) or 3-D (batched) input, got shape {tuple(input.shape)}")
    (kh, kw), d, p, s = _window("fold", kernel_size, dilation, padding, stride)
    oh_w = pair("fold", "output_size", output_size)
    x = unsqueeze(input, 0) if input.ndim == 2 else input
    n, rows, length = x.shape
    if rows % (kh * kw):
        raise ShapeError(f"fold: expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                         f"but got input.size(1)={rows} and kernel_size=({kh}, {kw})")
    blocks = [(oh_w[i] + 2 * p[i] - d[i] * ((kh, kw)[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if min(blocks) < 1 or blocks[0] * blocks[1] != length:
        raise ShapeError(f"fold: given output_size={tuple(oh_w)}, kernel_size=({kh}, {kw}), dilation={d}, "
                         f"padding={p}, stride={s}, expected size of input's dimension 2 to match the calculated "
                         f"number of sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                         f"input.size(2)={length}")
    c = rows // (kh * kw)
    grid = reshape(x, (n, rows, blocks[0], blocks[1]))
    extra = [oh_w[i] - ((blocks[i] - 1) * s[i] - 2 * p[i] + d[i] * ((kh, kw)[i] - 1) + 1) for i in range(2)]
    img = conv_transpose2d(grid, _picking_kernel(c, kh, kw, x), None, s, p, tuple(extra), c, d)
    return squeeze(img, 0) if input.ndim == 2 else img
