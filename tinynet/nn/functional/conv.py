"""Linear and 2-D convolution (NCHW), vectorised as im2col + one matrix product.

Convolution is PyTorch's cross-correlation: for output channel ``o`` of group ``g``,
``y[n, o, i, j] = b[o] + sum_{c, p, q} w[o, c, p, q] * x_pad[n, g*Cg + c, i*sH + p*dH, j*sW + q*dW]``,
with output size ``H_out = floor((H + pad_top + pad_bottom - dH*(kH-1) - 1) / sH) + 1``
(likewise W). The forward gathers every receptive field into a column matrix through a
strided view (no Python loop over pixels or batch items) and multiplies it by the
flattened filters; the filter gradient reuses those columns, and the input gradient
scatters ``gy @ W`` back with one strided add per kernel offset (col2im).
"""
import numpy

from ... import backend, parallel
from ...autograd import Function
from ...kernels import cuda, cudnn, gpu_ops
from ...errors import DTypeError, ShapeError
from ...tensor import Tensor


def _pair(op, name, v):
    if isinstance(v, (int, numpy.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(i, (int, numpy.integer)) for i in v):
        return int(v[0]), int(v[1])
    raise TypeError(f"{op}: {name} must be an int or a pair of ints, got {v!r}")


def windows(xp, x, kh, kw, sh, sw, dh, dw, ho, wo):
    """Strided view (N, C, ho, wo, kh, kw) of every receptive field of padded ``x``."""
    n, c, h, w = x.shape
    s = x.strides
    shape = (n, c, ho, wo, kh, kw)
    strides = (s[0], s[1], s[2] * sh, s[3] * sw, s[2] * dh, s[3] * dw)
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def out_size(op, size, pad_lo, pad_hi, k, stride, dilation):
    out = (size + pad_lo + pad_hi - dilation * (k - 1) - 1) // stride + 1
    if out < 1:
        raise ShapeError(f"{op}: input size {size} (padding {pad_lo}+{pad_hi}) is too small for "
                         f"kernel {k} with dilation {dilation}; output size would be {out}")
    return out


def col2im_add(dst, cols, sh, sw, dh, dw):
    """Scatter-add ``cols`` (N, C, kh, kw, ho, wo) into ``dst`` (N, C, Hp, Wp), in place:
    one strided add per kernel offset."""
    kh, kw, ho, wo = cols.shape[2:]
    for p in range(kh):
        for q in range(kw):
            dst[:, :, p * dh:p * dh + sh * (ho - 1) + 1:sh, q * dw:q * dw + sw * (wo - 1) + 1:sw] += cols[:, :, p, q]


def _with_bias(xp, wmat, bias_column):
    """``[W | b]``: the filter matrix with the bias appended as one more input column.

    The forward's column matrix then carries a row of ones, so ``[W | b] @ [cols; 1]``
    adds the bias inside the GEMM (no separate pass over the output), and the filter
    gradient ``gy @ [cols; 1]^T`` yields the bias gradient ``sum(gy)`` as its last column.
    """
    return xp.concatenate([wmat, bias_column.astype(wmat.dtype, copy=False)], axis=-1)


def _split_bias_grad(gwb, wshape, needs):
    """Split the (C_out, K [+ 1]) filter-gradient product into the filter gradient and,
    when the forward carried the bias as a ones row, the bias gradient (its last column)."""
    k = wshape[1] * wshape[2] * wshape[3]
    gw = gwb[:, :k].reshape(wshape) if needs[1] else None
    gb = gwb[:, k] if needs[2] else None  # a bias needing grad always has its ones row
    return gw, gb


def _input_grad_stride1(xp, gy, w, pshape, dilation):
    """Input gradient of a stride-1 convolution in batch-last layout.

    ``gy`` is (C_out, H_out, W_out, N); returns the gradient of the padded input,
    (C, Hp, Wp, N), where ``gx[c, y, x, n] = sum_{o, p, q} w[o, c, p, q] *
    gy[o, y - p*dH, x - q*dW, n]``. Plain col2im multiplies out all C*kH*kW taps
    (a GEMM with only C_out = K) and then adds kH*kW shifted slabs. Here the kW width
    taps go into the GEMM instead: ``E[(o, q'), (i, x, n)] = gy[o, i, x - (kW-1-q')*dW, n]``
    (a strided view of gy padded in width, copied once), ``T = W' @ E`` with
    ``W'[(c, p), (o, q')] = w[o, c, p, kW-1-q']`` and K = C_out*kW, and only the kH
    height taps remain as adds: ``gx[c, y] = sum_p T[c, p, y - p*dH]``. That is kW times
    fewer adds for 1 + (kW-1)/W_out more FLOPs; for the reference net's conv2 at batch
    64 it took 0.98 ms -> 0.63 ms on the 2-core CPU.

    Two parallel passes (:func:`tinynet.parallel.parallel_for`): blocks of output rows
    build their part of E and multiply it into their columns of T, then groups of input
    channels add their rows of T into the gradient (the row blocks' adds would overlap).
    """
    co, ho, wo, n = gy.shape
    _, c, kh, kw = w.shape
    dh, dw = dilation
    wp = pshape[2]
    span = (kw - 1) * dw
    widened = xp.empty((co, ho, wo + 2 * span, n), dtype=gy.dtype)
    s = widened.strides
    wmat = xp.ascontiguousarray(w[:, :, :, ::-1].transpose(1, 2, 0, 3)).reshape(c * kh, co * kw)
    t = xp.empty((c * kh, ho * wp * n), dtype=gy.dtype)
    rows = _row_blocks(xp, ho, co * kw * wp * n * gy.dtype.itemsize, TAPS_WHOLE_BYTES)

    def taps_product(i):
        lo, hi = rows[i]
        widened[:, lo:hi, :span] = 0
        widened[:, lo:hi, span + wo:] = 0
        widened[:, lo:hi, span:span + wo] = gy[:, lo:hi]
        taps = xp.lib.stride_tricks.as_strided(widened[:, lo:], shape=(co, kw, hi - lo, wp, n),
                                               strides=(s[0], s[2] * dw, s[1], s[2], s[3]))
        xp.matmul(wmat, taps.reshape(co * kw, (hi - lo) * wp * n), out=t[:, lo * wp * n:hi * wp * n])

    parallel.parallel_for(len(rows), taps_product, xp)
    t = t.reshape(c, kh, ho, wp, n)
    gpad = xp.empty(pshape, dtype=gy.dtype)
    groups = parallel.ranges(c, gpad.nbytes + t.nbytes, xp)  # input-channel groups

    def add_taps(i):
        lo, hi = groups[i]
        g = gpad[lo:hi]
        g[...] = 0
        for p in range(kh):
            g[:, p * dh:p * dh + ho] += t[lo:hi, p]

    parallel.parallel_for(len(groups), add_taps, xp)
    return gpad


def is_batch_last(x):
    """True when NCHW array ``x`` is a view of a C-ordered (C, H, W, N) buffer (N > 1),
    the layout the batch-last convolution produces."""
    return x.ndim == 4 and x.shape[0] > 1 and x.transpose(1, 2, 3, 0).flags.c_contiguous


def _filter_grad_batch_last(cols, gyt):
    """``(cols @ gyt.T).T`` = (C_out, K): the filter gradient from batch-last columns
    (K, P) and output gradient (C_out, P). When both K and C_out are small (a first layer:
    K = 26, C_out = 10) one GEMM with a huge inner dimension runs poorly in OpenBLAS, so
    P is cut into blocks of about 2,048 columns, one small GEMM each, summed."""
    k, p = cols.shape
    co = gyt.shape[0]
    blocks = p // 2048
    if k > 64 or co > 64 or blocks < 2:
        return (cols @ gyt.T).T  # long axis as the GEMM's rows: 1.7x faster than gyt @ cols.T
    while p % blocks:
        blocks -= 1
    span = p // blocks
    per_block = gyt.reshape(co, blocks, span).transpose(1, 0, 2) @ cols.reshape(k, blocks, span).transpose(1, 2, 0)
    return per_block.sum(axis=0)


def _row_blocks(xp, ho, bytes_per_row, whole_bytes):
    """Output-row ranges [lo, hi) that the batch-last passes work on, one item each.

    Rows taking more than ``whole_bytes`` in all go in blocks of about
    ``COLUMN_BLOCK_BYTES`` (at least one row), so a GEMM reads each block straight after
    it is written, while it is still in the cache. With more than one thread
    (:mod:`tinynet.parallel`) the rows are cut into up to two blocks per thread (see
    ``parallel.pieces``), so a slow core takes fewer of them.
    """
    rows = ho if ho * bytes_per_row <= whole_bytes else max(1, COLUMN_BLOCK_BYTES // bytes_per_row)
    if xp is numpy:  # CuPy passes are not split (see parallel.ranges)
        rows = max(1, min(rows, -(-ho // parallel.pieces(ho, ho * bytes_per_row))))
    return [(lo, min(ho, lo + rows)) for lo in range(0, ho, rows)]


COLUMNS_WHOLE_BYTES = 8 * 2**20  # e.g. the reference net at batch 64: kept whole, saved for backward
COLUMN_BLOCK_BYTES = 2 * 2**20   # one core's L2 cache on the 2-core CPU (1 MiB measured 3-5% slower at batch 200)
TAPS_WHOLE_BYTES = 4 * 2**20     # input-gradient taps (see _input_grad_stride1): blocked above this


BATCH_LAST_MAX_POSITIONS = 100  # see Conv2dIm2col: below this, per-sample GEMMs are too thin
BATCH_LAST_MAX_K = 32  # and for few filter taps (a first layer), where pooling then gains most


class Conv2dIm2col(Function):
    """conv2d via im2col + GEMM (the NumPy path, and CuPy's generic path), in one of two
    layouts chosen per call from measurements on the 2-core CPU:

    * NCHW: columns (N, G, Cg*kH*kW, H_out*W_out); ``W @ cols`` batched over N lands
      directly in NCHW order. Best for large output planes (e.g. 24x24).
    * batch-last (groups == 1 and at most ``BATCH_LAST_MAX_POSITIONS`` output positions):
      the input transposed to (C, H, W, N) and columns (C*kH*kW, H_out*W_out*N), so
      forward, filter gradient and input gradient are each ONE 2-D GEMM and col2im adds
      contiguous runs of W_out*N values. For the reference net's conv2 (8x8 outputs) this
      is 1.5-2.2x faster than NCHW; it costs four activation-sized transposes.
    """
    name = "conv2d"

    def __init__(self, stride, padding, dilation, groups):
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups

    def forward(self, xp, x, w, b):
        (sh, sw), (dh, dw), g = self.stride, self.dilation, self.groups
        (pt, pb), (pl, pr) = self.padding
        n, c, h, wd = x.shape
        co, cg, kh, kw = w.shape
        ho = out_size("conv2d", h, pt, pb, kh, sh, dh)
        wo = out_size("conv2d", wd, pl, pr, kw, sw, dw)
        self.input_batch_last = is_batch_last(x)
        if g == 1 and (ho * wo <= BATCH_LAST_MAX_POSITIONS or self.input_batch_last
                       or c * kh * kw <= BATCH_LAST_MAX_K):
            return self._forward_batch_last(xp, x, w, b, ho, wo)
        xpad = xp.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr))) if pt or pb or pl or pr else x
        win = windows(xp, xpad, kh, kw, sh, sw, dh, dw, ho, wo)           # (N, C, ho, wo, kh, kw) view
        k = cg * kh * kw
        cols = xp.empty((n, g, k + (b is not None), ho * wo), dtype=x.dtype)
        wmat = w.reshape(g, co // g, k)
        if b is not None:  # the bias as a ones row of the columns: see _with_bias
            wmat = _with_bias(xp, wmat, b.reshape(g, co // g, 1))
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
        self.saved = (cols, w, x.shape, xpad.shape, ho, wo)
        return y

    def _forward_batch_last(self, xp, x, w, b, ho, wo):
        (pt, pb), (pl, pr) = self.padding
        n, c = x.shape[:2]
        co, _, kh, kw = w.shape
        xt = xp.ascontiguousarray(x.transpose(1, 2, 3, 0))                 # (C, H, W, N), free if it is
        if pt or pb or pl or pr:
            xt = xp.pad(xt, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
        k = c * kh * kw
        wmat = w.reshape(co, k)
        ones_row = b is not None
        if ones_row:
            wmat = _with_bias(xp, wmat, b.reshape(co, 1))
        bytes_per_row = (k + ones_row) * wo * n * x.dtype.itemsize
        whole = ho * bytes_per_row <= COLUMNS_WHOLE_BYTES  # else built a block at a time, rebuilt in backward
        self.blocks = _row_blocks(xp, ho, bytes_per_row, COLUMNS_WHOLE_BYTES)
        row = wo * n
        cols = xp.empty((k + ones_row, ho * row), dtype=x.dtype) if whole else None
        y = xp.empty((co, ho * row), dtype=x.dtype)

        def block(i):  # columns of output rows [lo, hi) and their product
            lo, hi = self.blocks[i]
            part = self._columns(xp, xt, w.shape, ones_row, wo, lo, hi,
                                 None if cols is None else cols[:, lo * row:hi * row])
            xp.matmul(wmat, part, out=y[:, lo * row:hi * row])

        parallel.parallel_for(len(self.blocks), block, xp)
        y = y.reshape(co, ho, wo, n).transpose(3, 0, 1, 2)                 # an NCHW view of (C, H, W, N)
        if xp is not numpy:
            y = xp.ascontiguousarray(y)  # CuPy's kernels expect C order
        self.saved = (cols, w, x.shape, xt, ho, wo)
        self.batch_last = True
        return y

    def _columns(self, xp, xt, wshape, ones_row, wo, lo, hi, out=None):
        """Batch-last columns of output rows [lo, hi): (C*kH*kW [+1], (hi-lo)*W_out*N),
        from the padded (C, Hp, Wp, N) input; with a ones row for the bias when asked.
        Written into ``out`` when given (a column slice of the whole matrix)."""
        (sh, sw), (dh, dw) = self.stride, self.dilation
        c, n = xt.shape[0], xt.shape[3]
        kh, kw = wshape[2:]
        s = xt.strides
        view = xp.lib.stride_tricks.as_strided(                             # (C, kh, kw, rows, wo, N)
            xt[:, lo * sh:], shape=(c, kh, kw, hi - lo, wo, n),
            strides=(s[0], s[1] * dh, s[2] * dw, s[1] * sh, s[2] * sw, s[3]))
        k = c * kh * kw
        cols = xp.empty((k + ones_row, (hi - lo) * wo * n), dtype=xt.dtype) if out is None else out
        cols[:k].reshape(c, kh, kw, hi - lo, wo, n)[...] = view              # the one copy
        if ones_row:
            cols[k] = 1
        return cols

    def _backward_batch_last(self, xp, gy):
        cols, w, xshape, xt, ho, wo = self.saved
        pshape = xt.shape
        (sh, sw), (dh, dw) = self.stride, self.dilation
        (pt, _), (pl, _) = self.padding
        n, c, h, wd = xshape
        co, _, kh, kw = w.shape
        gyt = xp.ascontiguousarray(gy.transpose(1, 2, 3, 0)).reshape(co, ho * wo * n)
        gx = gw = gb = None
        if self.needs_input_grad[1] or self.needs_input_grad[2]:
            row, ones_row = wo * n, self.inputs[2] is not None  # inputs: (x, w, bias or None)

            def block(i):  # this block's share of the (Co, K [+1]) product
                lo, hi = self.blocks[i]
                part = (cols[:, lo * row:hi * row] if cols is not None  # else rebuilt: see forward
                        else self._columns(xp, xt, w.shape, ones_row, wo, lo, hi))
                return _filter_grad_batch_last(part, gyt[:, lo * row:hi * row])

            gwb = sum(parallel.parallel_for(len(self.blocks), block, xp))
            gw, gb = _split_bias_grad(gwb, w.shape, self.needs_input_grad)
        if self.needs_input_grad[0]:
            if (sh, sw) == (1, 1):
                gpad = _input_grad_stride1(xp, gyt.reshape(co, ho, wo, n), w, pshape, (dh, dw))
            else:
                gcols = (w.reshape(co, -1).T @ gyt).reshape(c, kh, kw, ho, wo, n)
                gpad = xp.zeros(pshape, dtype=gy.dtype)                      # (C, Hp, Wp, N)
                # col2im_add on (N, C, ...) views of the batch-last buffers (writes through)
                col2im_add(gpad.transpose(3, 0, 1, 2), gcols.transpose(5, 0, 1, 2, 3, 4), sh, sw, dh, dw)
            gx = gpad[:, pt:pt + h, pl:pl + wd].transpose(3, 0, 1, 2)
            if not self.input_batch_last or xp is not numpy:  # the gradient in the input's layout
                gx = xp.ascontiguousarray(gx)
        return gx, gw, gb

    def backward(self, xp, gy):
        if getattr(self, "batch_last", False):
            return self._backward_batch_last(xp, gy)
        cols, w, xshape, pshape, ho, wo = self.saved
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
            gw, gb = _split_bias_grad(gwb, w.shape, self.needs_input_grad)
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
        self.saved = (cols, w, x.shape, None, ho, wo)
        return xp.ascontiguousarray(y)

    def backward(self, xp, gy):
        cols, w, xshape, pshape, ho, wo = self.saved
        if pshape is not None:  # forward took the generic path
            return super().backward(xp, gy)
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

    def __init__(self, stride, padding, dilation, groups, out):
        super().__init__(stride, padding, dilation, groups)
        self.out = out

    def forward(self, xp, x, w, b):
        n, co, (ho, wo) = x.shape[0], w.shape[0], self.out
        plans = cudnn.plans(x.dtype, x.shape, w.shape, (n, co, ho, wo), self.stride, self.padding,
                            self.dilation) if w.dtype == x.dtype else None
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
        self.saved = (x, w)
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


class Linear(Function):
    """``y = x W^T + b`` with x (..., in), W (out, in), b (out,).

    On the CPU a large product is split over tinynet's threads (``parallel.matmul``).
    On the GPU the products go through ``gpu_ops.matmul`` (tinynet's tiled kernel with
    the bias fused for small layers, cuBLAS for large ones) and the bias gradient through
    the per-channel reduction kernel.
    """
    name = "linear"

    def forward(self, xp, x, w, b):
        self.saved = (x, w)
        y = parallel.matmul(x, w.T)  # split over tinynet's CPU threads when 2-D and large
        if b is not None:
            y += b
        return y

    def backward(self, xp, gy):
        x, w = self.saved
        gx = gw = gb = None
        if self.needs_input_grad[0]:
            gx = parallel.matmul(gy, w)
        g2 = gy.reshape(-1, gy.shape[-1])
        if self.needs_input_grad[1]:
            gw = parallel.matmul(g2.T, x.reshape(-1, x.shape[-1]))
        if self.needs_input_grad[2]:
            gb = g2.sum(axis=0)
        return gx, gw, gb

    def forward_gpu(self, xp, x, w, b):
        # gpu_ops.matmul: one launch with the bias for small layers; anything the kernels
        # do not cover (dtypes, empty arrays) takes the generic forward
        self.direct = (cuda.supported(x, w) and x.dtype == w.dtype and x.size > 0 and w.size > 0
                       and (b is None or (cuda.supported(b) and b.dtype == x.dtype)))
        if not self.direct:
            return self.forward(xp, x, w, b)
        x, w = xp.ascontiguousarray(x), xp.ascontiguousarray(w)
        self.saved = (x, w)
        b = None if b is None else xp.ascontiguousarray(b)
        y = gpu_ops.matmul(x.reshape(-1, x.shape[-1]), w, trans_b=True, bias=b)
        return y.reshape(x.shape[:-1] + (w.shape[0],))

    def backward_gpu(self, xp, gy):
        if not self.direct:
            return self.backward(xp, gy)
        x, w = self.saved
        g2 = xp.ascontiguousarray(gy).reshape(-1, w.shape[0])
        gx = gpu_ops.matmul(g2, w).reshape(x.shape) if self.needs_input_grad[0] else None
        gw = gpu_ops.matmul(g2, x.reshape(-1, x.shape[-1]), trans_a=True) if self.needs_input_grad[1] else None
        gb = gpu_ops.bias_grad(g2) if self.needs_input_grad[2] else None
        return gx, gw, gb


def _check_tensor(op, name, t, ndim, layout):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if t.ndim != ndim:
        raise ShapeError(f"{op}: expected {name} of shape {layout}, got {t.shape}")
    if t.dtype.kind != "f":
        raise DTypeError(f"{op}: expected a floating-point {name}, got {t.dtype}")


def linear(input, weight, bias=None):
    """Affine map ``input @ weight.T + bias``.

    Args:
        input: float (*, in_features).
        weight: float (out_features, in_features).
        bias: optional float (out_features,).

    Returns:
        Tensor of shape (*, out_features).

    Raises:
        ShapeError: ``input.shape[-1] != in_features`` or a malformed weight/bias.
    """
    if not isinstance(input, Tensor) or input.ndim < 1:
        raise ShapeError(f"linear: expected input of shape (*, in_features), got "
                         f"{getattr(input, 'shape', type(input).__name__)}")
    _check_tensor("linear", "weight", weight, 2, "(out_features, in_features)")
    out_f, in_f = weight.shape
    if input.shape[-1] != in_f:
        raise ShapeError(f"linear: expected input with {in_f} features (last dim) for weight "
                         f"{weight.shape}, got input of shape {input.shape}")
    if bias is not None and bias.shape != (out_f,):
        raise ShapeError(f"linear: expected bias of shape ({out_f},), got {bias.shape}")
    return Linear().apply(input, weight, bias)


def conv_padding(op, padding, kernel, dilation, stride):
    """Resolve int/pair/'same'/'valid' padding to ((top, bottom), (left, right))."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0), (0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' requires stride 1, got stride {stride}")
            out = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise ValueError(f"{op}: padding must be an int, a pair, 'same' or 'valid', got {padding!r}")
    ph, pw = _pair(op, "padding", padding)
    if ph < 0 or pw < 0:
        raise ValueError(f"{op}: padding must be >= 0, got {padding}")
    return (ph, ph), (pw, pw)


_CONV_SPECS = {}  # validated (stride, padding, dilation, groups, out size) per argument set


def _dispatch():
    global _DISPATCH
    if _DISPATCH is None:
        from ...kernels import dispatch
        _DISPATCH = dispatch
    return _DISPATCH


_DISPATCH = None


def _conv_spec(input, weight, bias, stride, padding, dilation, groups):
    """Validate conv2d's arguments once per argument set; return the resolved
    (stride, padding pairs, dilation, groups, (H_out, W_out))."""
    _check_tensor("conv2d", "input", input, 4, "(N, C, H, W)")
    _check_tensor("conv2d", "weight", weight, 4, "(C_out, C_in/groups, kH, kW)")
    stride, dilation = _pair("conv2d", "stride", stride), _pair("conv2d", "dilation", dilation)
    if min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"conv2d: stride and dilation must be >= 1, got {stride} and {dilation}")
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
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
        ValueError: non-positive stride/dilation/groups, negative padding.
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
    fn = _dispatch().conv2d_function(input, *spec)
    return fn.apply(input, weight, bias)
