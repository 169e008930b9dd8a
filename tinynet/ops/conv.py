"""2-D convolution (NCHW; unbatched (C, H, W) too), vectorised as im2col + one matrix
product, and the choice of the implementation that runs it; 1-D convolution (``conv1d``)
as the 2-D one on an (N, C, 1, L) view, so every path below serves it as well.

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
import numpy

from .. import backend, layouts, parallel
from ..autograd import Op
from ..backends import cudnn as settings
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..kernels import cuda, cudnn, gemm, gpu_ops
from ..tensor import Tensor
from .autocast import autocast_op
from .cpu import conv as cpu_conv
from .cpu.conv import split_bias_grad, with_bias
from .shape import squeeze, unsqueeze
from .util import check_tensor
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



def _group_gemm(xp, a, b, trans_a=False, trans_b=False):
    """``op(a[i]) @ op(b[i])`` for each group ``i`` of the C-contiguous 3-D arrays, through
    ``gemm.matmul`` (tinynet's GEMM kernel or cuBLAS called directly): capturable in a
    CUDA graph, unlike CuPy's batched ``@``."""
    a, b = xp.ascontiguousarray(a), xp.ascontiguousarray(b)
    if a.shape[0] == 1:
        return gemm.matmul(a[0], b[0], trans_a, trans_b)[None]
    return xp.stack([gemm.matmul(a[i], b[i], trans_a, trans_b) for i in range(a.shape[0])])


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
        y = _group_gemm(xp, cols, xp.ascontiguousarray(w).reshape(g, co // g, cg * kh * kw), trans_b=True)
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
        wmat = xp.ascontiguousarray(w).reshape(g, co // g, cg * kh * kw)
        if self.needs_input_grad[1]:
            gw = _group_gemm(xp, gy2, cols, trans_a=True).reshape(w.shape)
        if self.needs_input_grad[2]:
            gb = gpu_ops.bias_grad(gy)
        if self.needs_input_grad[0]:
            gcols = _group_gemm(xp, gy2, wmat)
            gx = gpu_ops.col2im(gcols, xshape, g, (ho, wo), (kh, kw), self.stride, self.padding, self.dilation)
        return gx, gw, gb


class Conv2dCudnn(Conv2dIm2colGPU):
    """conv2d through cuDNN (fprop, dgrad, wgrad graphs cached per configuration).

    Forward decides once which path this call takes: cuDNN when all three directions
    are supported for the configuration, else the im2col path (with tinynet's kernels
    when they are enabled); backward takes the same path.

    A channels-last input or weight (``tinynet.channels_last``, not also C-contiguous) runs
    cuDNN's NHWC kernels: the operands are given to cuDNN stored NHWC (the other one copied
    if it is not), and the output and input gradient come back channels-last, as PyTorch's
    do; the weight gradient takes the weight's own layout. A configuration with no NHWC
    engine runs in NCHW.

    float16 and bfloat16 run in cuDNN with half-width io and float32 accumulation;
    bfloat16 arrays reach it as they are (``bf16_native_gpu``), not widened first. Their
    bias add and bias gradient run in tinynet's half-width kernels, summing in float32.
    """
    bf16_native_gpu = True

    def forward(self, xp, x, w, b):
        n, co, (ho, wo) = x.shape[0], w.shape[0], self.out
        plain = x._c_contiguous and w._c_contiguous  # (CuPy's flag) the common case: C order, nothing to copy
        nhwc = not plain and (layouts.nhwc_only(x) or layouts.nhwc_only(w))
        plans, layout = None, "nhwc" if nhwc else "nchw"
        if w.dtype == x.dtype:
            plans = cudnn.plans(x.dtype, x.shape, w.shape, (n, co, ho, wo), self.stride, self.padding,
                                self.dilation, settings, layout)
            if plans is None and layout == "nhwc":  # no NHWC engine for this configuration
                layout = "nchw"
                plans = cudnn.plans(x.dtype, x.shape, w.shape, (n, co, ho, wo), self.stride, self.padding,
                                    self.dilation, settings, layout)
        if plans is None:
            self.cudnn = None
            x, w = layouts.stored(xp, x, "nchw"), layouts.stored(xp, w, "nchw")  # im2col reads C order
            return super().forward(xp, x, w, b) if backend.kernels_enabled else Conv2dIm2col.forward(self, xp, x, w, b)
        self.layout, self.w_nhwc = layout, layout == "nhwc" and layouts.is_laid_out(w, layouts.channels_last)
        if not plain:
            x, w = layouts.stored(xp, x, layout), layouts.stored(xp, w, layout)
        y = cudnn.run(plans, "fprop", x, w, (n, co, ho, wo), x.dtype, layout)
        if b is not None and backend.kernels_enabled and b.dtype == y.dtype and cuda.supported(y, b, half=True):
            # one RawKernel launch: 4-6% less host time than CuPy's broadcast add; NHWC memory
            # is (NHW, C) rows with the channel last
            rows = y if layout == "nchw" else y.transpose(0, 2, 3, 1).reshape(-1, co)
            gpu_ops.bias_add(rows, xp.ascontiguousarray(b))
        elif b is not None:
            y += b.reshape(1, co, 1, 1)
        self.cudnn = plans
        self.save_for_backward(x, w)
        return y

    def backward(self, xp, gy):
        if self.cudnn is None:  # the im2col forward's own backward (kernel or generic)
            return super().backward(xp, gy)
        x, w = self.saved
        layout = self.layout
        gy = layouts.stored(xp, gy, layout)
        gx = cudnn.run(self.cudnn, "dgrad", gy, w, x.shape, x.dtype, layout) if self.needs_input_grad[0] else None
        gw = None
        if self.needs_input_grad[1]:
            gw = cudnn.run(self.cudnn, "wgrad", x, gy, w.shape, x.dtype, layout)
            if layout == "nhwc" and not self.w_nhwc:  # the gradient takes the weight's own layout
                gw = xp.ascontiguousarray(gw)
        gb = None
        if self.needs_input_grad[2]:
            if layout == "nhwc":  # channels fastest: column sums of the (NHW, C) rows
                gb = gpu_ops.channel_sum_nhwc(gy)
            else:
                gb = gpu_ops.bias_grad(gy) if backend.kernels_enabled and cuda.supported(gy, half=True) else \
                    gy.sum(axis=(0, 2, 3), dtype=numpy.float64 if gy.dtype == numpy.float64 else numpy.float32
                           ).astype(gy.dtype)  # the generic code sums in float32 (float64 for float64)
        return gx, gw, gb


_CONV_SPECS: dict = {}  # validated (stride, padding, dilation, groups, out size) per argument set


def _conv_spec(input, weight, bias, stride, padding, dilation, groups, op="conv2d"):
    """Validate conv2d's arguments once per argument set; return the resolved
    (stride, padding pairs, dilation, groups, (H_out, W_out)). ``op`` names the public
    function in the messages (conv1d runs through here on its (N, C, 1, L) view)."""
    check_4d(op, "input", input, "(C, H, W) or (N, C, H, W)")
    check_4d(op, "weight", weight, "(C_out, C_in/groups, kH, kW)")
    stride, dilation = pair(op, "stride", stride), pair(op, "dilation", dilation)
    if min(stride) < 1 or min(dilation) < 1:
        raise ArgumentError(f"{op}: stride and dilation must be >= 1, got {stride} and {dilation}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ArgumentError(f"{op}: groups must be a positive int, got {groups!r}")
    co, cg = weight.shape[:2]
    if co % groups:
        raise ShapeError(f"{op}: out_channels {co} is not divisible by groups {groups}")
    if input.shape[1] != cg * groups:
        raise ShapeError(f"{op}: expected input with {cg * groups} channels for weight {weight.shape} "
                         f"and groups={groups}, got input of shape {input.shape}")
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (co,)):
        raise ShapeError(f"{op}: expected bias of shape ({co},), got {getattr(bias, 'shape', type(bias).__name__)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype != input.dtype:  # PyTorch refuses mixed dtypes too
            raise DTypeError(f"{op}: expected input and {name} to have the same dtype, got {input.dtype} and "
                             f"{t.dtype}")
    pad = conv_padding(op, padding, weight.shape[2:], dilation, stride)
    kh, kw = weight.shape[2:]
    out = (out_size(op, input.shape[2], pad[0][0], pad[0][1], kh, stride[0], dilation[0]),
           out_size(op, input.shape[3], pad[1][0], pad[1][1], kw, stride[1], dilation[1]))
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


@autocast_op
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over an NCHW batch.

    Args:
        input: float (N, C_in, H, W), or unbatched (C_in, H, W) (the output then has no batch dim).
        weight: float (C_out, C_in / groups, kH, kW).
        bias: optional float (C_out,).
        stride, dilation: int or (h, w) pair, >= 1. Default 1.
        padding: int, (h, w) pair, ``'valid'`` (0) or ``'same'`` (stride 1 only; an odd
            total is padded one more at the bottom/right, as PyTorch does). Default 0.
        groups (int): input and output channels split into this many groups. Default 1.

    Returns:
        Tensor (N, C_out, H_out, W_out) (or (C_out, H_out, W_out)),
        ``H_out = floor((H + 2*pH - dH*(kH-1) - 1) / sH) + 1``.

    Raises:
        ShapeError: input not 3-D/4-D, channel counts inconsistent with weight and groups,
            or the output would be empty.
        ArgumentError: non-positive stride/dilation/groups, negative padding.
    """
    if isinstance(input, Tensor) and input.ndim == 3:  # unbatched (C, H, W), as PyTorch 2.x
        return squeeze(_conv2d(unsqueeze(input, 0), weight, bias, stride, padding, dilation, groups), 0)
    return _conv2d(input, weight, bias, stride, padding, dilation, groups)


def _conv2d(input, weight, bias, stride, padding, dilation, groups, op="conv2d"):
    key = spec = None
    if isinstance(input, Tensor) and isinstance(weight, Tensor):
        try:
            key = (input.shape, weight.shape, stride, padding, dilation, groups,
                   bias.shape if isinstance(bias, Tensor) else bias, input.dtype, weight.dtype)
            spec = _CONV_SPECS.get(key)
        except TypeError:  # unhashable arguments (lists): the full checks below
            key = None
    if spec is None:
        spec = _conv_spec(input, weight, bias, stride, padding, dilation, groups, op)
        if key is not None and len(_CONV_SPECS) < 4096:
            _CONV_SPECS[key] = spec
    fn = _conv_op(input, *spec, weight.shape)
    return fn.apply(input, weight, bias)


def single(op, name, v):
    """An int or a 1-tuple of an int as an int (the 1-D arguments of conv1d and friends).

    Raises:
        ArgumentTypeError: anything else.
    """
    if isinstance(v, (tuple, list)) and len(v) == 1:
        v = v[0]
    if isinstance(v, (int, numpy.integer)) and not isinstance(v, bool):
        return int(v)
    raise ArgumentTypeError(f"{op}: {name} must be an int or a tuple of one int, got {v!r}")


@autocast_op
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over an (N, C, L) batch, run as :func:`conv2d` on
    the (N, C, 1, L) view (so cuDNN and the CPU's fast paths apply).

    ``y[n, o, i] = b[o] + sum_{c, p} w[o, c, p] * x_pad[n, g*Cg + c, i*s + p*d]``.

    Args:
        input: float (N, C_in, L), or unbatched (C_in, L).
        weight: float (C_out, C_in / groups, k).
        bias: optional float (C_out,).
        stride, dilation: int or 1-tuple, >= 1. Default 1.
        padding: int, 1-tuple, ``'valid'`` or ``'same'`` (stride 1 only; an odd total is
            padded one more on the right). Default 0.
        groups (int): default 1.

    Returns:
        Tensor (N, C_out, L_out) (or (C_out, L_out)),
        ``L_out = floor((L + 2*padding - dilation*(k-1) - 1) / stride) + 1``.

    Raises:
        ShapeError: input not 2-D/3-D, weight not 3-D, channel counts inconsistent with
            weight and groups, bias not (C_out,), or the output would be empty.
        ArgumentError: non-positive stride/dilation/groups, negative padding, an unknown
            padding string, 'same' with a stride.
        ArgumentTypeError: non-int arguments. DTypeError: a non-float input.
    """
    op = "conv1d"
    check_tensor(op, "input", input)
    check_tensor(op, "weight", weight)
    if input.ndim == 2:
        return squeeze(conv1d(unsqueeze(input, 0), weight, bias, stride, padding, dilation, groups), 0)
    if input.ndim != 3:
        raise ShapeError(f"{op}: expected input of shape (C, L) or (N, C, L), got {input.shape}")
    if weight.ndim != 3:
        raise ShapeError(f"{op}: expected weight of shape (C_out, C_in/groups, k), got {weight.shape}")
    s, d = single(op, "stride", stride), single(op, "dilation", dilation)
    if s < 1 or d < 1:
        raise ArgumentError(f"{op}: stride and dilation must be >= 1, got {s} and {d}")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ArgumentError(f"{op}: padding must be an int, a 1-tuple, 'same' or 'valid', got {padding!r}")
        if padding == "same" and s != 1:
            raise ArgumentError(f"{op}: padding='same' requires stride 1, got stride {s}")
        pad2 = padding
    else:
        pad2 = (0, single(op, "padding", padding))
    co, cg = weight.shape[:2]
    valid_groups = isinstance(groups, int) and not isinstance(groups, bool) and groups >= 1  # else _conv_spec raises
    if valid_groups and input.shape[1] != cg * groups:
        raise ShapeError(f"{op}: expected input with {cg * groups} channels for weight {weight.shape} "
                         f"and groups={groups}, got input of shape {input.shape}")
    if isinstance(bias, Tensor) and bias.shape != (co,):
        raise ShapeError(f"{op}: expected bias of shape ({co},), got {bias.shape}")
    y = _conv2d(unsqueeze(input, 2), unsqueeze(weight, 2), bias, (1, s), pad2, (1, d), groups, op)
    return squeeze(y, 2)
