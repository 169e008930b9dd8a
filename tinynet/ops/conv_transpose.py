"""Transposed convolution (``conv_transpose2d``, ``conv_transpose1d``): the gradient of a
convolution with respect to its input, used as a layer ("fractionally strided" or
"deconvolution"; Dumoulin & Visin 2016, "A guide to convolution arithmetic for deep
learning", arXiv:1603.07285).

With weight ``w`` (C_in, C_out/groups, kH, kW), ``conv_transpose2d(x, w)`` is the input
gradient of ``conv2d(z, w)`` for a z of C_out channels: every input pixel scatters
``w[c_in, :, :, :] * x[n, c_in, i, j]`` onto the output window at ``(i*sH - pH, j*sW - pW)``
(taps ``dH`` apart), that is

    ``y[n, o, i*sH + p*dH - pH, j*sW + q*dW - pW] += w[c, o', p, q] * x[n, c, i, j]``

(``o = g*C_out/G + o'`` for input channel ``c`` of group ``g``), with output size
``H_out = (H - 1)*sH - 2*pH + dH*(kH - 1) + output_padding_h + 1``. ``output_padding``
(< max(stride, dilation) per dim, as PyTorch requires) adds rows and columns at the
bottom/right, choosing among the input sizes a strided convolution maps to the same size.

:class:`ConvTranspose2dOp` computes forward as col2im of ``W^T x`` (one batched GEMM and one
strided add per kernel offset, :func:`tinynet.ops.window.col2im_add`; on NumPy with one group
and at least ``BATCH_LAST_MIN_TAPS`` output taps the same sums batch-last, or on a 1x1 input
one (N, C_in) product); its backward is the convolution itself: ``gx = conv2d(gy, w)``
(cropped to the input size) and ``gw`` the convolution's filter gradient for input ``gy`` and
output gradient ``x``, through :class:`tinynet.ops.conv.Conv2dIm2col`, or on NumPy with one
group, for at least ``BATCH_LAST_MIN_TAPS`` taps or where ``conv2d`` would go batch-last (few
positions or taps: ``tinynet.ops.cpu.conv.prefers_batch_last``), through
:func:`tinynet.ops.cpu.conv_transpose.conv_transpose2d_backward` (batch-last columns of ``gy``
built once a row block for both products, the blocks over the threads). On the GPU
(``forward_gpu``) cuDNN's backward-data ("dgrad") plan of that convolution runs forward and
its fprop/wgrad plans backward, when
:mod:`tinynet.kernels.cudnn` can build them; else tinynet's col2im kernel (cuBLAS GEMM),
else the generic code. Not twice differentiable (as conv2d).

Differences from PyTorch: ``padding`` must be ints (PyTorch's TypeError for a string is an
``ArgumentTypeError``, also a TypeError); the ``RuntimeError``s of bad shapes and
output_padding are ``ShapeError``/``ArgumentError`` (ValueErrors).
"""
import numpy

from .. import parallel
from ..dtypes import is_floating
from ..autograd import Op
from ..backends import cudnn as settings
from ..errors import ArgumentError, DTypeError, ShapeError
from ..kernels import cuda, cudnn, gpu_ops
from ..tensor import Tensor
from .autocast import autocast_op
from .conv import Conv2dIm2col, single
from .cpu.conv import prefers_batch_last, scatter_taps, to_batch_last, to_nchw
from .cpu.conv_transpose import conv_transpose2d_backward
from .shape import squeeze, unsqueeze
from .util import check_tensor
from .window import col2im_add, out_size, pair

# the CPU forward goes batch-last (_forward_batch_last) from this many output taps C_out*kH*kW on:
# below, its two layout copies cost more than its product saves (dcgan's last layer, 3*4*4 taps:
# 16.7 ms against 14.0 ms a call; its 1024-4096-tap layers 1.6-3.2x faster). The NumPy backward
# goes batch-last from the same count (its 64->3 layer: 14-16 ms batch-last, 7 ms on im2col)
BATCH_LAST_MIN_TAPS = 256


class ConvTranspose2dOp(Op):
    """conv_transpose2d of NCHW ``x`` (N, C_in, H, W) with ``w`` (C_in, C_out/G, kH, kW)
    and an optional bias; see the module docstring."""
    name = "conv_transpose2d"
    gpu_saves_generic = True

    def __init__(self, stride, padding, dilation, groups, out):
        self.stride, self.padding, self.dilation, self.groups, self.out = stride, padding, dilation, groups, out
        self.cudnn = None

    def forward(self, xp, x, w, b):
        if (xp is numpy and self.groups == 1 and x.dtype == w.dtype
                and w.shape[1] * w.shape[2] * w.shape[3] >= BATCH_LAST_MIN_TAPS):
            if x.shape[2] * x.shape[3] == 1:
                return self._forward_one_pixel(xp, x, w, b)
            return self._forward_batch_last(xp, x, w, b)
        (sh, sw), (ph, pw), (dh, dw), g = self.stride, self.padding, self.dilation, self.groups
        n, ci, h, wd = x.shape
        _, cog, kh, kw = w.shape
        ho, wo = self.out
        wmat = w.reshape(g, ci // g, cog * kh * kw).transpose(0, 2, 1)        # (G, C_out/G*kH*kW, C_in/G)
        cols = xp.matmul(wmat, x.reshape(n, g, ci // g, h * wd))               # (N, G, C_out/G*kH*kW, H*W)
        span_h, span_w = sh * (h - 1) + dh * (kh - 1) + 1, sw * (wd - 1) + dw * (kw - 1) + 1
        full = xp.zeros((n, g * cog, max(span_h, ph + ho), max(span_w, pw + wo)), dtype=cols.dtype)
        col2im_add(full, cols.reshape(n, g * cog, kh, kw, h, wd), sh, sw, dh, dw)
        y = xp.ascontiguousarray(full[:, :, ph:ph + ho, pw:pw + wo])
        if b is not None:
            y += b.reshape(1, -1, 1, 1)
        self.save_for_backward(x, w)
        return y

    def _forward_one_pixel(self, xp, x, w, b):
        """NumPy, one group, a 1x1 input (dcgan's first layer): each tap lands on its own
        output pixel, so the output is one product ``x`` (N, C_in) @ ``w`` (C_in,
        C_out*kH*kW) split over the threads (:func:`tinynet.parallel.matmul`), its taps placed
        ``dilation`` apart and cropped by ``padding``. The general path's N matrix-vector
        products and kH*kW strided adds took 9.8 ms for dcgan's (64, 100, 1, 1) -> (64, 512,
        4, 4) on the 2-core CPU."""
        (ph, pw), (dh, dw) = self.padding, self.dilation
        n, ci = x.shape[:2]
        _, co, kh, kw = w.shape
        ho, wo = self.out
        taps = parallel.matmul(x.reshape(n, ci), w.reshape(ci, co * kh * kw)).reshape(n, co, kh, kw)
        span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
        if (ph, pw, dh, dw, ho, wo) == (0, 0, 1, 1, kh, kw):
            y = taps
        else:
            full = xp.zeros((n, co, max(span_h, ph + ho), max(span_w, pw + wo)), dtype=taps.dtype)
            full[:, :, :span_h:dh, :span_w:dw] = taps
            y = xp.ascontiguousarray(full[:, :, ph:ph + ho, pw:pw + wo])
        if b is not None:
            y += b.reshape(1, -1, 1, 1)
        self.save_for_backward(x, w)
        return y

    def _forward_batch_last(self, xp, x, w, b):
        """NumPy, one group: the same sums as :meth:`forward` in the batch-last layout of
        :mod:`tinynet.ops.cpu.conv`: ``W^T`` (C_out*kH*kW, C_in) times ``x`` as (C_in, H*W*N) in
        one product split over the threads (:func:`tinynet.parallel.matmul`; per sample it was
        N thin (.., H*W) products on one core), then the kH*kW strided adds into a zeroed
        (C_out, H', W', N) buffer, runs of N contiguous values, over channel groups on the
        threads, in the same offset order; the output is copied back to NCHW. dcgan's generator
        layers of 1024-4096 taps at batch 64 on the 2-core CPU: 93-119 ms -> 36-74 ms (and
        19-35 ms with the NCHW copy of :func:`tinynet.ops.cpu.conv.to_nchw`). Taken for inputs
        of more than one pixel and at least ``BATCH_LAST_MIN_TAPS`` output taps."""
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        n, ci, h, wd = x.shape
        _, co, kh, kw = w.shape
        ho, wo = self.out
        xt = to_batch_last(xp, x).reshape(ci, h * wd * n)
        span_h, span_w = sh * (h - 1) + dh * (kh - 1) + 1, sw * (wd - 1) + dw * (kw - 1) + 1
        full = scatter_taps(xp, w, xt, (h, wd), (sh, sw), (dh, dw),
                            (co, max(span_h, ph + ho), max(span_w, pw + wo), n))
        y = to_nchw(xp, full[:, ph:ph + ho, pw:pw + wo].transpose(3, 0, 1, 2))
        if b is not None:
            y += b.reshape(1, -1, 1, 1)
        self.save_for_backward(x, w)
        return y

    def backward(self, xp, gy):
        x, w = self.saved
        need_x, need_w, need_b = self.needs_input_grad
        gx = gw = gb = None
        h, wd = x.shape[2:]
        if need_x or need_w:  # the convolution of gy by w: gx is its output, gw its filter gradient
            out = tuple(out_size("conv_transpose2d", gy.shape[2 + i], self.padding[i], self.padding[i], w.shape[2 + i],
                                 self.stride[i], self.dilation[i]) for i in range(2))  # conv2d(gy, w)'s size
            if xp is numpy and self.groups == 1 and (w.shape[1] * w.shape[2] * w.shape[3] >= BATCH_LAST_MIN_TAPS
                                                      or prefers_batch_last(gy, w.shape, 1, out)):
                gx, gw = conv_transpose2d_backward(xp, x, w, gy, self.stride, self.padding, self.dilation, out,
                                                   need_x, need_w)
            else:
                conv = Conv2dIm2col(self.stride, self._pairs(), self.dilation, self.groups, None)
                conv.needs_input_grad = (False, need_w, False)
                z = conv.forward(xp, gy, w, None)                              # (N, C_in, >= H, >= W)
                if need_x:
                    gx = xp.ascontiguousarray(z[:, :, :h, :wd])
                if need_w:
                    extra = (z.shape[2] - h, z.shape[3] - wd)  # rows the convolution sees past the input
                    gz = xp.pad(x, ((0, 0), (0, 0), (0, extra[0]), (0, extra[1]))) if any(extra) else x
                    gw = conv.backward(xp, gz)[1]
        if need_b:
            gb = gy.sum(axis=(0, 2, 3))
        return gx, gw, gb

    def _pairs(self):
        (ph, pw) = self.padding
        return (ph, ph), (pw, pw)

    # ---- GPU: cuDNN's dgrad/fprop/wgrad of the equivalent convolution ----------------------
    def _plans(self, x, w):
        """The cuDNN plans of the convolution whose input gradient this is, or None."""
        if w.dtype != x.dtype or not cudnn.usable_for(x, settings):
            return None
        n, _, h, wd = x.shape
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        ho, wo = self.out
        kh, kw = w.shape[2:]
        if ((ho + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (wo + 2 * pw - dw * (kw - 1) - 1) // sw + 1) != (h, wd):
            return None  # output_padding >= stride (dilated): the convolution would see more than x
        return cudnn.plans(x.dtype, (n, w.shape[1] * self.groups, ho, wo), w.shape, x.shape, self.stride,
                           self._pairs(), self.dilation, settings)

    def forward_gpu(self, xp, x, w, b):
        plans = self._plans(x, w)
        if plans is None:
            self.cudnn = None
            return self._forward_col2im(xp, x, w, b) if cuda.supported(x, w) else self.forward(xp, x, w, b)
        if not x.flags.c_contiguous:
            x = xp.ascontiguousarray(x)
        if not w.flags.c_contiguous:
            w = xp.ascontiguousarray(w)
        co = w.shape[1] * self.groups
        y = cudnn.run(plans, "dgrad", x, w, (x.shape[0], co) + tuple(self.out), x.dtype)
        if b is not None and cuda.supported(y, b):
            gpu_ops.bias_add(y, xp.ascontiguousarray(b))
        elif b is not None:
            y += b.reshape(1, co, 1, 1)
        self.cudnn = plans
        self.save_for_backward(x, w)
        return y

    def _forward_col2im(self, xp, x, w, b):
        """tinynet's col2im kernel on ``x^T W`` columns (G, N*H*W, C_out/G*kH*kW): the
        input-gradient half of Conv2dIm2colGPU."""
        g = self.groups
        n, ci, h, wd = x.shape
        _, cog, kh, kw = w.shape
        x2 = x.reshape(n, g, ci // g, h, wd).transpose(1, 0, 3, 4, 2).reshape(g, n * h * wd, ci // g)
        cols = x2 @ w.reshape(g, ci // g, cog * kh * kw)
        y = gpu_ops.col2im(cols, (n, g * cog) + tuple(self.out), g, (h, wd), (kh, kw), self.stride,
                           self._pairs(), self.dilation)
        if b is not None:
            y += b.reshape(1, -1, 1, 1)
        self.save_for_backward(x, w)
        return y

    def backward_gpu(self, xp, gy):
        if self.cudnn is None:  # forward took the col2im kernel or the generic code
            return self.backward(xp, gy)
        x, w = self.saved
        if not gy.flags.c_contiguous:
            gy = xp.ascontiguousarray(gy)
        need_x, need_w, need_b = self.needs_input_grad
        gx = cudnn.run(self.cudnn, "fprop", gy, w, x.shape, x.dtype) if need_x else None
        gw = cudnn.run(self.cudnn, "wgrad", gy, x, w.shape, x.dtype) if need_w else None
        gb = None
        if need_b:
            gb = gpu_ops.bias_grad(gy) if cuda.supported(gy) else gy.sum(axis=(0, 2, 3))
        return gx, gw, gb


def _check(op, input, weight, bias, groups, spatial):
    """Tensor, dtype, rank and channel checks shared by the 1-D and 2-D functions; returns
    whether the input is unbatched."""
    check_tensor(op, "input", input)
    check_tensor(op, "weight", weight)
    names = "(C_in, H, W) or (N, C_in, H, W)" if spatial == 2 else "(C_in, L) or (N, C_in, L)"
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ShapeError(f"{op}: expected input of shape {names}, got {input.shape}")
    if weight.ndim != spatial + 2:
        kernel = "kH, kW" if spatial == 2 else "k"
        raise ShapeError(f"{op}: expected weight of shape (C_in, C_out/groups, {kernel}), got {weight.shape}")
    for name, t in (("input", input), ("weight", weight), ("bias", bias)):
        if isinstance(t, Tensor) and not is_floating(t.dtype):
            raise DTypeError(f"{op}: expected a floating-point {name}, got {t.dtype}")
        if isinstance(t, Tensor) and t.dtype != input.dtype:
            raise DTypeError(f"{op}: input ({input.dtype}) and {name} ({t.dtype}) must have the same dtype")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ArgumentError(f"{op}: groups must be a positive int, got {groups!r}")
    ci = weight.shape[0]
    if ci % groups:
        raise ShapeError(f"{op}: weight's in_channels (dim 0) {ci} is not divisible by groups {groups}, "
                         f"got weight of shape {weight.shape}")
    unbatched = input.ndim == spatial + 1
    channels = input.shape[0 if unbatched else 1]
    if channels != ci:
        raise ShapeError(f"{op}: expected input with {ci} channels for weight {weight.shape}, got input of "
                         f"shape {input.shape}")
    if bias is not None:
        check_tensor(op, "bias", bias)
        if bias.shape != (weight.shape[1] * groups,):
            raise ShapeError(f"{op}: expected bias of shape ({weight.shape[1] * groups},), got {bias.shape}")
    return unbatched


def _run(op, x, w, bias, stride, padding, output_padding, groups, dilation, nd):
    """Checks of the (h, w) arguments (messages show the last ``nd``), the output size, and
    the op on 4-D x and w."""
    def shown(v):
        return v[-nd:] if nd == 2 else v[-1]

    for name, v, low in (("stride", stride, 1), ("dilation", dilation, 1), ("padding", padding, 0),
                         ("output_padding", output_padding, 0)):
        if min(v) < low:
            raise ArgumentError(f"{op}: {name} must be >= {low}, got {shown(v)}")
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        raise ArgumentError(f"{op}: output padding must be smaller than either stride or dilation, got "
                            f"output_padding={shown(output_padding)}, stride={shown(stride)}, "
                            f"dilation={shown(dilation)}")
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1
                for n, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding))
    if min(out) < 1:
        raise ShapeError(f"{op}: input of spatial size {shown(x.shape[2:])} gives an output size {shown(out)} that "
                         f"is too small (stride {shown(stride)}, padding {shown(padding)}, dilation "
                         f"{shown(dilation)}, kernel {shown(w.shape[2:])})")
    return ConvTranspose2dOp(stride, padding, dilation, groups, out).apply(x, w, bias)


@autocast_op
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution"): the input gradient of conv2d, as a layer.

    Args:
        input: float (N, C_in, H, W), or unbatched (C_in, H, W).
        weight: float (C_in, C_out / groups, kH, kW) (note: C_in first, as in PyTorch).
        bias: optional float (C_out,).
        stride, dilation: int or (h, w) pair, >= 1. Default 1.
        padding: int or pair, >= 0: ``dilation * (k - 1) - padding`` zeros are (implicitly)
            added to both sides of the input. Default 0.
        output_padding: int or pair, added to the bottom/right of the output; each must be
            smaller than its stride or its dilation. Default 0.
        groups (int): default 1.

    Returns:
        Tensor (N, C_out, H_out, W_out) (or (C_out, H_out, W_out)),
        ``H_out = (H - 1)*sH - 2*pH + dH*(kH - 1) + output_padding_h + 1``.

    Raises:
        ShapeError: input not 3-D/4-D, weight not 4-D, C_in not matching weight's dim 0 or
            not divisible by groups, bias not (C_out,), an empty output.
        ArgumentError: stride/dilation < 1, negative padding, output_padding not below
            stride or dilation, groups < 1.
        ArgumentTypeError: non-int arguments. DTypeError: non-float or mixed dtypes.
    """
    op = "conv_transpose2d"
    unbatched = _check(op, input, weight, bias, groups, 2)
    x = unsqueeze(input, 0) if unbatched else input
    args = [pair(op, name, v) for name, v in (("stride", stride), ("padding", padding),
                                              ("output_padding", output_padding), ("dilation", dilation))]
    y = _run(op, x, weight, bias, args[0], args[1], args[2], groups, args[3], 2)
    return squeeze(y, 0) if unbatched else y


@autocast_op
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution, run as :func:`conv_transpose2d` on the (N, C, 1, L) view.

    Args:
        input: float (N, C_in, L), or unbatched (C_in, L).
        weight: float (C_in, C_out / groups, k).
        bias: optional float (C_out,).
        stride, padding, output_padding, dilation: int or 1-tuple (see conv_transpose2d);
            defaults 1, 0, 0, 1. groups (int): default 1.

    Returns:
        Tensor (N, C_out, L_out) (or (C_out, L_out)),
        ``L_out = (L - 1)*stride - 2*padding + dilation*(k - 1) + output_padding + 1``.

    Raises:
        as :func:`conv_transpose2d`.
    """
    op = "conv_transpose1d"
    unbatched = _check(op, input, weight, bias, groups, 1)
    x = unsqueeze(input, 0) if unbatched else input
    s, p, o, d = (single(op, name, v) for name, v in (("stride", stride), ("padding", padding),
                                                       ("output_padding", output_padding), ("dilation", dilation)))
    y = _run(op, unsqueeze(x, 2), unsqueeze(weight, 2), bias, (1, s), (0, p), (0, o), groups, (1, d), 1)
    y = squeeze(y, 2)
    return squeeze(y, 0) if unbatched else y
