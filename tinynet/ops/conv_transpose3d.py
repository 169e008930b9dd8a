"""3-D transposed convolution (``conv_transpose3d``): the input gradient of
:func:`~tinynet.nn.functional.conv3d`, used as a layer (Dumoulin & Visin 2016, "A guide to
convolution arithmetic for deep learning", arXiv:1603.07285); the N-d generalisation of
:mod:`tinynet.ops.conv_transpose`.

With weight ``w`` (C_in, C_out/groups, kD, kH, kW), every input voxel scatters
``w[c, :, ...] * x[n, c, i, j, l]`` onto the output window at ``(i*sD - pD, j*sH - pH,
l*sW - pW)`` (taps ``dilation`` apart); output size per axis
``out = (size - 1)*stride - 2*padding + dilation*(k - 1) + output_padding + 1``.

:class:`ConvTransposeNdOp` computes forward as col2im of ``W^T x`` (one batched GEMM, one
strided add per kernel offset); backward is the convolution itself: ``gx = conv3d(gy, w)``
(cropped to the input) and ``gw`` the convolution's filter gradient for input ``gy`` and
output gradient ``x``, both through :class:`tinynet.ops.conv3d.ConvNdIm2col`. Generic
``xp`` code on both backends (no cuDNN path for 3-D).
"""
import math

from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from .autocast import autocast_op
from .conv3d import ConvNdIm2col, check_conv_operands
from .shape import squeeze, unsqueeze
from .window_nd import col2im_add, ntuple


class ConvTransposeNdOp(Op):
    """Transposed N-d convolution of ``x`` (N, C_in, *S) by ``w`` (C_in, C_out/G, *K) and an
    optional bias (C_out,); ``out`` is the output's spatial size."""
    name = "conv_transpose3d"

    def __init__(self, stride, padding, dilation, groups, out):
        self.stride, self.padding, self.dilation, self.groups, self.out = stride, padding, dilation, groups, out

    def forward(self, xp, x, w, b):
        g, nd = self.groups, w.ndim - 2
        n, ci, spatial = x.shape[0], x.shape[1], x.shape[2:]
        cog, kernel = w.shape[1], w.shape[2:]
        wmat = w.reshape(g, ci // g, cog * math.prod(kernel)).swapaxes(1, 2)          # (G, Co/G*K, Ci/G)
        cols = xp.matmul(wmat, x.reshape(n, g, ci // g, math.prod(spatial)))          # (N, G, Co/G*K, P_in)
        full = tuple(max(s * (i - 1) + d * (k - 1) + 1, p + o) for i, s, d, k, p, o in
                     zip(spatial, self.stride, self.dilation, kernel, self.padding, self.out))
        buf = xp.zeros((n, g * cog) + full, dtype=cols.dtype)
        col2im_add(buf, cols.reshape((n, g * cog) + kernel + spatial), self.stride, self.dilation)
        y = xp.ascontiguousarray(buf[(slice(None), slice(None)) + tuple(
            slice(p, p + o) for p, o in zip(self.padding, self.out))])
        if b is not None:
            y += b.reshape((1, -1) + (1,) * nd)
        self.save_for_backward(x, w)
        return y

    def backward(self, xp, gy):
        x, w = self.saved
        need_x, need_w, need_b = self.needs_input_grad
        nd, spatial = w.ndim - 2, x.shape[2:]
        gx = gw = gb = None
        if need_x or need_w:  # the convolution of gy by w: gx is its output, gw its filter gradient
            conv = ConvNdIm2col(self.stride, tuple((p, p) for p in self.padding), self.dilation, self.groups)
            conv.needs_input_grad = (False, need_w, False)
            z = conv.forward(xp, gy, w, None)                                          # (N, C_in, >= S)
            if need_x:
                gx = xp.ascontiguousarray(z[(slice(None), slice(None)) + tuple(slice(0, s) for s in spatial)])
            if need_w:
                extra = tuple(zs - s for zs, s in zip(z.shape[2:], spatial))  # positions past the input
                gz = xp.pad(x, ((0, 0), (0, 0)) + tuple((0, e) for e in extra)) if any(extra) else x
                gw = conv.backward(xp, gz)[1]
        if need_b:
            gb = gy.sum(axis=(0,) + tuple(range(2, 2 + nd)))
        return gx, gw, gb


@autocast_op
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution ("deconvolution"): the input gradient of conv3d, as a layer.

    Args:
        input: float (N, C_in, D, H, W), or unbatched (C_in, D, H, W).
        weight: float (C_in, C_out / groups, kD, kH, kW) (C_in first, as in PyTorch).
        bias: optional float (C_out,).
        stride, dilation: int or (d, h, w), >= 1. Default 1.
        padding: int or (d, h, w), >= 0: ``dilation * (k - 1) - padding`` zeros are
            (implicitly) added to both sides of the input. Default 0.
        output_padding: int or (d, h, w), added at the end of each output axis; each must
            be smaller than its stride or its dilation. Default 0.
        groups (int): default 1.

    Returns:
        Tensor (N, C_out, D_out, H_out, W_out) (or unbatched),
        ``D_out = (D - 1)*sD - 2*pD + dD*(kD - 1) + output_padding_d + 1`` (likewise H, W).

    Raises:
        ShapeError: input not 4-D/5-D, weight not 5-D, C_in not matching the weight's dim 0
            or not divisible by groups, a bias not (C_out,), an empty output.
        ArgumentError: stride/dilation < 1, negative padding, output_padding not below the
            stride or the dilation, groups < 1.
        ArgumentTypeError: non-int sizes. DTypeError: non-float or mixed dtypes.
    """
    op = "conv_transpose3d"
    unbatched = check_conv_operands(op, input, weight, bias, groups, 3, "(C_in, C_out/groups, kD, kH, kW)",
                                    transposed=True)
    stride, padding, output_padding, dilation = (
        ntuple(op, name, v, 3) for name, v in (("stride", stride), ("padding", padding),
                                                ("output_padding", output_padding), ("dilation", dilation)))
    for name, v, low in (("stride", stride, 1), ("dilation", dilation, 1), ("padding", padding, 0),
                         ("output_padding", output_padding, 0)):
        if min(v) < low:
            raise ArgumentError(f"{op}: {name} must be >= {low}, got {v}")
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        raise ArgumentError(f"{op}: output padding must be smaller than either stride or dilation, got "
                            f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
    x = unsqueeze(input, 0) if unbatched else input
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
                zip(x.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding))
    if min(out) < (0 if x.shape[0] == 0 else 1):  # an empty batch may have an empty output (PyTorch's rule)
        raise ShapeError(f"{op}: input of spatial size {tuple(x.shape[2:])} gives an output size {out} that is "
                         f"too small (stride {stride}, padding {padding}, dilation {dilation}, kernel "
                         f"{tuple(weight.shape[2:])})")
    y = ConvTransposeNdOp(stride, padding, dilation, groups, out).apply(x, weight, bias)
    return squeeze(y, 0) if unbatched else y
