"""3-D convolution (``conv3d``) over (N, C, D, H, W) volumes, as the N-d generalisation of
the readable im2col convolution of :mod:`tinynet.ops.conv`.

PyTorch's cross-correlation: for output channel ``o`` of group ``g``,
``y[n, o, i, j, l] = b[o] + sum_{c, p, q, r} w[o, c, p, q, r] *
x_pad[n, g*Cg + c, i*sD + p*dD, j*sH + q*dH, l*sW + r*dW]``, output size per axis
``out = floor((size + 2*pad - dilation*(k - 1) - 1) / stride) + 1``.

:class:`ConvNdIm2col` gathers every receptive field through a strided view of the padded
input (:func:`tinynet.ops.window_nd.windows`, no loop over positions) into one column
matrix ``(N, G, Cg*kD*kH*kW, D_out*H_out*W_out)`` and multiplies it by the flattened
filters; the filter gradient reuses the columns, the input gradient scatters ``W^T gy``
back with one strided add per kernel offset (col2im). The same ``xp`` code runs on NumPy
and on CuPy (cuBLAS through CuPy's ``matmul``); there is no cuDNN path for 3-D (the 2-D
op's cuDNN plans are not generalised here).
"""
import math

from ..autograd import Op
from ..errors import ArgumentError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .shape import squeeze, unsqueeze
from .util import check_tensor
from .window_nd import check_volume, col2im_add, conv_padding, ntuple, out_sizes, pad_to, windows


class ConvNdIm2col(Op):
    """N-d convolution of ``x`` (N, C, *S) by ``w`` (C_out, C/G, *K) and an optional bias
    (C_out,), with (lo, hi) ``pads`` per spatial axis: im2col + one batched GEMM."""
    name = "conv3d"

    def __init__(self, stride, pads, dilation, groups):
        self.stride, self.pads, self.dilation, self.groups = stride, pads, dilation, groups

    def forward(self, xp, x, w, b):
        g, nd = self.groups, w.ndim - 2
        n, co, cg, kernel = x.shape[0], w.shape[0], w.shape[1], w.shape[2:]
        xpad = pad_to(xp, x, self.pads)
        out = out_sizes(self.name, x.shape[2:], self.pads, kernel, self.stride, self.dilation)
        win = windows(xp, xpad, kernel, self.stride, self.dilation, out)         # (N, C, *out, *K) view
        k, positions = cg * math.prod(kernel), math.prod(out)
        order = (0, 1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + tuple(range(3, 3 + nd))
        cols = xp.ascontiguousarray(win.reshape((n, g, cg) + out + kernel).transpose(order)).reshape(
            n, g, k, positions)                                                   # the one copy
        y = xp.matmul(w.reshape(g, co // g, k), cols).reshape((n, co) + out)
        if b is not None:
            y += b.reshape((1, co) + (1,) * nd)
        self.save_for_backward(cols if self.needs_input_grad[1] else None, w)
        self.xshape, self.pshape, self.out = x.shape, xpad.shape, out
        return y

    def backward(self, xp, gy):
        cols, w = self.saved
        g, nd = self.groups, w.ndim - 2
        n, c = self.xshape[:2]
        co, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
        k = cg * math.prod(kernel)
        gy2 = gy.reshape(n, g, co // g, math.prod(self.out))
        gx = gw = gb = None
        if self.needs_input_grad[1]:
            gw = (gy2 @ cols.swapaxes(2, 3)).sum(axis=0).reshape(w.shape)
        if self.needs_input_grad[2]:
            gb = gy.sum(axis=(0,) + tuple(range(2, 2 + nd)))
        if self.needs_input_grad[0]:
            gcols = xp.matmul(w.reshape(g, co // g, k).swapaxes(1, 2), gy2)         # (N, G, K, P)
            gpad = xp.zeros(self.pshape, dtype=gy.dtype)
            col2im_add(gpad, gcols.reshape((n, c) + kernel + self.out), self.stride, self.dilation)
            gx = gpad[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for (lo, _), s in
                                                         zip(self.pads, self.xshape[2:]))]
        return gx, gw, gb


def check_conv_operands(op, input, weight, bias, groups, nd, weight_layout, channels_dim=1, transposed=False):
    """The checks conv3d and conv_transpose3d share: tensors, ranks, float dtypes that agree,
    groups, channel counts and the bias's shape; returns whether ``input`` is unbatched."""
    unbatched = check_volume(op, "input", input, nd)
    check_tensor(op, "weight", weight)
    if weight.ndim != nd + 2:
        raise ShapeError(f"{op}: expected weight of shape {weight_layout}, got {tuple(weight.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            check_tensor(op, name, t)
        if t is not None and t.dtype != input.dtype:  # PyTorch refuses mixed dtypes too
            raise DTypeError(f"{op}: expected input and {name} to have the same dtype, got {input.dtype} and "
                             f"{t.dtype}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ArgumentError(f"{op}: groups must be a positive int, got {groups!r}")
    channels = input.shape[0 if unbatched else 1]
    if transposed:
        ci, co = weight.shape[0], weight.shape[1] * groups
        if ci % groups:
            raise ShapeError(f"{op}: weight's in_channels (dim 0) {ci} is not divisible by groups {groups}")
        expected = ci
    else:
        co = weight.shape[0]
        if co % groups:
            raise ShapeError(f"{op}: out_channels {co} is not divisible by groups {groups}")
        expected = weight.shape[1] * groups
    if channels != expected:
        raise ShapeError(f"{op}: expected input with {expected} channels for weight {tuple(weight.shape)} and "
                         f"groups={groups}, got input of shape {tuple(input.shape)}")
    if bias is not None and tuple(bias.shape) != (co,):
        raise ShapeError(f"{op}: expected bias of shape ({co},), got {tuple(bias.shape)}")
    return unbatched


@autocast_op
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over an (N, C, D, H, W) batch.

    Args:
        input: float (N, C_in, D, H, W), or unbatched (C_in, D, H, W).
        weight: float (C_out, C_in / groups, kD, kH, kW), the input's dtype.
        bias: optional (C_out,), the input's dtype.
        stride, dilation: int or (d, h, w), >= 1. Default 1.
        padding: int, (d, h, w), ``'valid'`` (0) or ``'same'`` (stride 1 only; an odd total
            is padded one more at the end, as PyTorch does). Default 0.
        groups (int): input and output channels split into this many groups. Default 1.

    Returns:
        Tensor (N, C_out, D_out, H_out, W_out) (or unbatched (C_out, D_out, H_out, W_out)),
        ``D_out = floor((D + 2*pD - dD*(kD-1) - 1) / sD) + 1`` (likewise H, W).

    Raises:
        ShapeError: input not 4-D/5-D, weight not 5-D, channel counts inconsistent with the
            weight and groups, a bias not (C_out,), an empty output.
        ArgumentError: stride/dilation/groups < 1, negative padding, an unknown padding
            string, 'same' with a stride.
        ArgumentTypeError: non-tensor operands, non-int sizes. DTypeError: a non-float input
            or mixed dtypes.
    """
    op = "conv3d"
    unbatched = check_conv_operands(op, input, weight, bias, groups, 3, "(C_out, C_in/groups, kD, kH, kW)")
    stride, dilation = ntuple(op, "stride", stride, 3), ntuple(op, "dilation", dilation, 3)
    if min(stride) < 1 or min(dilation) < 1:
        raise ArgumentError(f"{op}: stride and dilation must be >= 1, got {stride} and {dilation}")
    pads = conv_padding(op, padding, tuple(weight.shape[2:]), dilation, stride)
    x = unsqueeze(input, 0) if unbatched else input
    out_sizes(op, x.shape[2:], pads, weight.shape[2:], stride, dilation)  # an empty output raises here
    op_ = ConvNdIm2col(stride, pads, dilation, groups)
    y = op_.apply(x, weight, bias)
    return squeeze(y, 0) if unbatched else y
