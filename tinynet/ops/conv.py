"""2-D convolution (NCHW), vectorised as im2col + one matrix product, and the choice of
the implementation that runs it.

Convolution is PyTorch's cross-correlation: for output channel ``o`` of group ``g``,
``y[n, o, i, j] = b[o] + sum_{c, p, q} w[o, c, p, q] * x_pad[n, g*Cg + c, i*sH + p*dH, j*sW + q*dW]``,
with output size ``H_out = floor((H + pad_top + pad_bottom - dH*(kH-1) - 1) / sH) + 1``
(likewise W). :class:`Conv2dIm2col` is the readable version: it gathers every receptive
field into a column matrix through a strided view (no Python loop over pixels or batch
items) and multiplies it by the flattened filters; the filter gradient reuses those
columns, and the input gradient scatters ``gy @ W`` back with one strided add per kernel
offset (col2im).

:func:`conv2d` picks the implementation: cuDNN on the GPU where usable
(:class:`Conv2dCudnn`), tinynet's im2col/col2im kernels with cuBLAS on the GPU otherwise
(:class:`Conv2dIm2colGPU`), the batch-last fast path on the CPU where it was measured to
win (:mod:`tinynet.ops.cpu.conv`), else :class:`Conv2dIm2col`.
"""
from .. import backend, parallel
from ..autograd import Op
from ..backends import cudnn as settings
from ..errors import ArgumentError, ShapeError
from ..kernels import cuda, cudnn, gpu_ops
from ..tensor import Tensor
from .cpu import conv as cpu_conv
from .cpu.conv import split_bias_grad, with_bias
from .window import check_4d, col2im_add, conv_padding, out_size, pair, windows


class Conv2dIm2col(Op):
    """conv2d via im2col + GEMM with NCHW columns (N, G, Cg*kH*kW [+1], H_out*W_out):
    ``W @ cols`` batched over N lands directly in NCHW order. The NumPy path (where the
    batch-last one does not win) and CuPy's generic path."""
    name = "conv2d"

    def __init__(self, stride, padding, dilation, groups, out):
        self.stride, self.padding, self.dilation, self.groups, self.out = stride, padding, dilation, groups, out

    def forward(self, xp, x, w, b):
        (sh, sw), (dh, dw), g = self.stride, self.dilation, self.groups
        (pt, pb), (pl, pr) = self.padding
        n, c, h, wd = x.shape
        co, cg, kh, kw = w.shape
        ho = out_size("conv2d", h, pt, pb, kh, sh, dh)
        wo = out_size("conv2d", wd, pl, pr, kw, sw, dw)
        xpad = xp.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr))) if pt or pb or pl or pr else x
        win = windows(xp, xpad, kh, kw, sh, sw, dh, dw, ho, wo)           # (N, C, ho, wo, kh, kw) view
        k = cg * kh * kw
        cols = xp.empty((n, g, k + (b is not None), ho * wo), dtype=x.dtype)
        wmat = w.reshape(g, co // g, k)
        if b is not None:  # the bias as a ones row of the columns: see with_bias
            wmat = with_bias(xp, wmat, b.reshape(g, co // g, 1))
        y = xp.empty((n, g, co // g, ho * wo), dtype=x.dtype)
        self.spans = parallel.ranges(n, cols.nbytes, xp)                   # sample ranges

        def chunk(i):  # the columns of samples [lo, hi) and their products
            lo, hi = self.spans[i]
            cols[lo:hi, :, :k].reshape(hi - lo, g, cg, kh, kw, ho, wo)[...] = (   # the one copy
                win[lo:hi].reshape(hi - lo, g, cg, ho, wo, kh, kw).transpose(0, 1, 2, 5, 6, 3, 4))
            if b is not None:
                cols[lo:hi, :, k] = 1
            xp.matmul(wmat, cols[lo:hi], out=y[lo:hi])

        parallel.parallel_for(len(self.spans), chunk, xp)
        y = y.reshape(n, co, ho, wo)
        self.save_for_backward(cols, w)
        self.xshape, self.pshape, self.ho, self.wo = x.shape, xpad.shape, ho, wo
        return y

    def backward(self, xp, gy):
        cols, w = self.saved
        xshape, pshape, ho, wo = self.xshape, self.pshape, self.ho, self.wo
        (sh, sw), (dh, dw), g = self.stride, self.dilation, self.groups
        (pt, _), (pl, _) = self.padding
        n, c, h, wd = xshape
        co, cg, kh, kw = w.shape
        gy2 = gy.reshape(n, g, co // g, ho * wo)
        gx = gw = gb = None
        spans = self.spans
        if self.needs_input_grad[1] or self.needs_input_grad[2]:
            def filter_grad(i):  # samples [lo, hi): their small GEMMs, summed
                lo, hi = spans[i]
                return (gy2[lo:hi] @ cols[lo:hi].transpose(0, 1, 3, 2)).sum(axis=0)

            gwb = sum(parallel.parallel_for(len(spans), filter_grad, xp)).reshape(co, -1)
            gw, gb = split_bias_grad(gwb, w.shape, self.needs_input_grad)
        if self.needs_input_grad[0]:
            wmat = xp.ascontiguousarray(w.reshape(g, co // g, cg * kh * kw).transpose(0, 2, 1))  # (G, K, Co/G)
            gpad = xp.empty(pshape, dtype=gy.dtype)

            def input_grad(i):  # samples [lo, hi): their columns' gradient, scattered back
                lo, hi = spans[i]
                gcols = (wmat @ gy2[lo:hi]).reshape(hi - lo, c, kh, kw, ho, wo)
                gpad[lo:hi] = 0
                col2im_add(gpad[lo:hi], gcols, sh, sw, dh, dw)

            parallel.parallel_for(len(spans), input_grad, xp)
            gx = gpad[:, :, pt:pt + h, pl:pl + wd]
        return gx, gw, gb



class Conv2dIm2colGPU(Conv2dIm2col):
    """The same im2col + GEMM convolution with im2col/col2im as CUDA kernels (cuBLAS GEMMs)."""

    def forward(self, xp, x, w, b):
        if not cuda.supported(x, w):
            return super().forward(xp, x, w, b)
        g = self.groups
        n, c, h, wd = x.shape
        co, cg, kh, kw = w.shape
        (pt, pb), (pl, pr) = self.padding
        ho = out_size("conv2d", h, pt, pb, kh, self.stride[0], self.dilation[0])
        wo = out_size("conv2d", wd, pl, pr, kw, self.stride[1], self.dilation[1])
        cols = gpu_ops.im2col(x, g, (ho, wo), (kh, kw), self.stride, self.padding, self.dilation)
        y = cols @ w.reshape(g, co // g, cg * kh * kw).transpose(0, 2, 1)
        y = y.reshape(g, n, ho, wo, co // g).transpose(1, 0, 4, 2, 3).reshape(n, co, ho, wo)
        if b is not None:
            y = y + b.reshape(1, co, 1, 1)
        self.save_for_backward(cols, w)
        self.xshape, self.pshape, self.ho, self.wo = x.shape, None, ho, wo
        return xp.ascontiguousarray(y)

    def backward(self, xp, gy):
        if self.pshape is not None:  # forward took the generic path
            return super().backward(xp, gy)
        cols, w = self.saved
        xshape, ho, wo = self.xshape, self.ho, self.wo
        g = self.groups
        n = xshape[0]
        co, cg, kh, kw = w.shape
        gy2 = gy.reshape(n, g, co // g, ho, wo).transpose(1, 0, 3, 4, 2).reshape(g, n * ho * wo, co // g)
        gx = gw = gb = None
        if self.needs_input_grad[1]:
            gw = (gy2.transpose(0, 2, 1) @ cols).reshape(w.shape)
        if self.needs_input_grad[2]:
            gb = gpu_ops.bias_grad(gy)
        if self.needs_input_grad[0]:
            gcols = gy2 @ w.reshape(g, co // g, cg * kh * kw)
            gx = gpu_ops.col2im(gcols, xshape, g, (ho, wo), (kh, kw), self.stride, self.padding, self.dilation)
        return gx, gw, gb


class Conv2dCudnn(Conv2dIm2colGPU):
    """conv2d through cuDNN (fprop, dgrad, wgrad graphs cached per configuration).

    Forward decides once which path this call takes: cuDNN when all three directions
    are supported for the configuration, else the im2col path (with tinynet's kernels
    when they are enabled); backward takes the same path.
    """

    def forward(self, xp, x, w, b):
        n, co, (ho, wo) = x.shape[0], w.shape[0], self.out
        plans = cudnn.plans(x.dtype, x.shape, w.shape, (n, co, ho, wo), self.stride, self.padding,
                            self.dilation, settings) if w.dtype == x.dtype else None
        if plans is None:
            self.cudnn = None
            return super().forward(xp, x, w, b) if backend.kernels_enabled else Conv2dIm2col.forward(self, xp, x, w, b)
        if not x.flags.c_contiguous:
            x = xp.ascontiguousarray(x)
        if not w.flags.c_contiguous:
            w = xp.ascontiguousarray(w)
        y = cudnn.run(plans, "fprop", x, w, (n, co, ho, wo), x.dtype)
        if b is not None and backend.kernels_enabled and b.dtype == y.dtype:
            gpu_ops.bias_add(y, xp.ascontiguousarray(b))  # one RawKernel launch: 4-6% less host time than CuPy's broadcast add
        elif b is not None:
            y += b.reshape(1, co, 1, 1)
        self.cudnn = plans
        self.save_for_backward(x, w)
        return y

    def backward(self, xp, gy):
        if self.cudnn is None:  # the im2col forward's own backward (kernel or generic)
            return super().backward(xp, gy)
        x, w = self.saved
        if not gy.flags.c_contiguous:
            gy = xp.ascontiguousarray(gy)
        gx = cudnn.run(self.cudnn, "dgrad", gy, w, x.shape, x.dtype) if self.needs_input_grad[0] else None
        gw = cudnn.run(self.cudnn, "wgrad", x, gy, w.shape, x.dtype) if self.needs_input_grad[1] else None
        gb = gpu_ops.bias_grad(gy) if self.needs_input_grad[2] else None
        return gx, gw, gb


_CONV_SPECS = {}  # validated (stride, padding, dilation, groups, out size) per argument set


def _conv_spec(input, weight, bias, stride, padding, dilation, groups):
    """Validate conv2d's arguments once per argument set; return the resolved
    (stride, padding pairs, dilation, groups, (H_out, W_out))."""
    check_4d("conv2d", "input", input, "(N, C, H, W)")
    check_4d("conv2d", "weight", weight, "(C_out, C_in/groups, kH, kW)")
    stride, dilation = pair("conv2d", "stride", stride), pair("conv2d", "dilation", dilation)
    if min(stride) < 1 or min(dilation) < 1:
        raise ArgumentError(f"conv2d: stride and dilation must be >= 1, got {stride} and {dilation}")
    if not isinstance(groups, int) or groups < 1:
        raise ArgumentError(f"conv2d: groups must be a positive int, got {groups!r}")
    co, cg = weight.shape[:2]
    if co % groups:
        raise ShapeError(f"conv2d: out_channels {co} is not divisible by groups {groups}")
    if input.shape[1] != cg * groups:
        raise ShapeError(f"conv2d: expected input with {cg * groups} channels for weight {weight.shape} "
                         f"and groups={groups}, got input of shape {input.shape}")
    if bias is not None and bias.shape != (co,):
        raise ShapeError(f"conv2d: expected bias of shape ({co},), got {bias.shape}")
    pad = conv_padding("conv2d", padding, weight.shape[2:], dilation, stride)
    kh, kw = weight.shape[2:]
    out = (out_size("conv2d", input.shape[2], pad[0][0], pad[0][1], kh, stride[0], dilation[0]),
           out_size("conv2d", input.shape[3], pad[1][0], pad[1][1], kw, stride[1], dilation[1]))
    return stride, pad, dilation, groups, out


def _conv_op(input, stride, padding, dilation, groups, out, wshape):
    """The op object that runs conv2d for ``input`` (output size ``out``)."""
    x = input.array
    if cudnn.usable_for(x, settings):
        return Conv2dCudnn(stride, padding, dilation, groups, out)
    if backend.is_gpu_array(x):
        if backend.kernels_enabled:
            return Conv2dIm2colGPU(stride, padding, dilation, groups, out)
    elif cpu_conv.prefers_batch_last(x, wshape, groups, out):
        return cpu_conv.Conv2dBatchLast(stride, padding, dilation, groups, out)
    return Conv2dIm2col(stride, padding, dilation, groups, out)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over an NCHW batch.

    Args:
        input: float (N, C_in, H, W).
        weight: float (C_out, C_in / groups, kH, kW).
        bias: optional float (C_out,).
        stride, dilation: int or (h, w) pair, >= 1. Default 1.
        padding: int, (h, w) pair, ``'valid'`` (0) or ``'same'`` (stride 1 only; an odd
            total is padded one more at the bottom/right, as PyTorch does). Default 0.
        groups (int): input and output channels split into this many groups. Default 1.

    Returns:
        Tensor (N, C_out, H_out, W_out),
        ``H_out = floor((H + 2*pH - dH*(kH-1) - 1) / sH) + 1``.

    Raises:
        ShapeError: input not 4-D, channel counts inconsistent with weight and groups,
            or the output would be empty.
        ArgumentError: non-positive stride/dilation/groups, negative padding.
    """
    key = spec = None
    if isinstance(input, Tensor) and isinstance(weight, Tensor):
        try:
            key = (input.shape, weight.shape, stride, padding, dilation, groups,
                   bias.shape if isinstance(bias, Tensor) else bias, input.dtype, weight.dtype)
            spec = _CONV_SPECS.get(key)
        except TypeError:  # unhashable arguments (lists): the full checks below
            key = None
    if spec is None:
        spec = _conv_spec(input, weight, bias, stride, padding, dilation, groups)
        if key is not None and len(_CONV_SPECS) < 4096:
            _CONV_SPECS[key] = spec
    fn = _conv_op(input, *spec, weight.shape)
    return fn.apply(input, weight, bias)
