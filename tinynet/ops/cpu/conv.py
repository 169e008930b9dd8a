"""The CPU's fast convolution: the batch-last layout with blocked columns and thread splits.

The readable im2col convolution is :class:`tinynet.ops.conv.Conv2dIm2col` (NCHW columns,
one batched GEMM). This module is its faster twin for the cases measured to gain on the
2-core CPU (``docs/design.md``, "Convolution on the CPU"): the input transposed to
(C, H, W, N), columns (C*kH*kW [+1], H_out*W_out*N), so forward, filter gradient and
input gradient are each one 2-D GEMM, and col2im adds contiguous runs of W_out*N values.
The output is handed on as an NCHW *view* of its (C, H, W, N) buffer, which pooling, ReLU
and dropout keep (their outputs are allocated like their inputs). Columns above
``COLUMNS_WHOLE_BYTES`` are built and multiplied a block of output rows at a time and
rebuilt in backward, and every pass is split over :mod:`tinynet.parallel`'s threads.
The layout helpers (:func:`to_batch_last`, :func:`to_nchw`), the columns
(:func:`batch_last_columns`) and the taps' scatter (:func:`scatter_taps`) also serve
``conv_transpose2d`` (:mod:`tinynet.ops.cpu.conv_transpose`).
"""
import numpy

from ... import parallel
from ...autograd import Op
from ..window import col2im_add, is_batch_last

COLUMNS_WHOLE_BYTES = 8 * 2**20  # e.g. the reference net at batch 64: kept whole, saved for backward
COLUMN_BLOCK_BYTES = 2 * 2**20   # one core's L2 cache on the 2-core CPU (1 MiB measured 3-5% slower at batch 200)
TAPS_WHOLE_BYTES = 4 * 2**20     # input-gradient taps (see _input_grad_stride1): blocked above this


BATCH_LAST_MAX_POSITIONS = 100  # below this many output positions, per-sample GEMMs are too thin
BATCH_LAST_MAX_K = 32  # and for few filter taps (a first layer), where pooling then gains most


def prefers_batch_last(x, wshape, groups, out):
    """True when the batch-last path is the faster one for NumPy input ``x``: groups 1 and
    any of at most ``BATCH_LAST_MAX_POSITIONS`` output positions, at most
    ``BATCH_LAST_MAX_K`` filter taps (a first layer), or an input that is batch-last already."""
    c, kh, kw = wshape[1], wshape[2], wshape[3]
    return groups == 1 and (out[0] * out[1] <= BATCH_LAST_MAX_POSITIONS or c * kh * kw <= BATCH_LAST_MAX_K
                            or is_batch_last(x))


def with_bias(xp, wmat, bias_column):
    """``[W | b]``: the filter matrix with the bias appended as one more input column.

    The forward's column matrix then carries a row of ones, so ``[W | b] @ [cols; 1]``
    adds the bias inside the GEMM (no separate pass over the output), and the filter
    gradient ``gy @ [cols; 1]^T`` yields the bias gradient ``sum(gy)`` as its last column.
    """
    return xp.concatenate([wmat, bias_column.astype(wmat.dtype, copy=False)], axis=-1)


def split_bias_grad(gwb, wshape, needs):
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

    def add_taps(lo, hi, g):
        for p in range(kh):
            g[:, p * dh:p * dh + ho] += t[lo:hi, p]

    return zeroed_sums(xp, xp.empty(pshape, dtype=gy.dtype), t.nbytes, add_taps)


def zeroed_sums(xp, out, read_bytes, add):
    """``out`` (C, ...) zeroed and summed into by channel groups on tinynet's threads: each
    group's slice ``out[lo:hi]`` is zeroed, then ``add(lo, hi, slice)`` adds its terms (the
    groups are disjoint, so no two threads write one value). ``read_bytes``: what ``add``
    reads besides ``out``, for :func:`tinynet.parallel.ranges`' cost. Returns ``out``."""
    groups = parallel.ranges(out.shape[0], out.nbytes + read_bytes, xp)

    def run(i):
        lo, hi = groups[i]
        part = out[lo:hi]
        part[...] = 0
        add(lo, hi, part)

    parallel.parallel_for(len(groups), run, xp)
    return out


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


def batch_last_columns(xp, xt, wshape, stride, dilation, ones_row, wo, lo, hi, out=None):
    """Batch-last columns of output rows [lo, hi): (C*kH*kW [+1], (hi-lo)*W_out*N), from
    the padded (C, Hp, Wp, N) input ``xt`` and a filter of shape ``wshape`` (C_out, C, kH,
    kW); with a ones row for the bias when asked. Written into ``out`` when given (a column
    slice of the whole matrix)."""
    (sh, sw), (dh, dw) = stride, dilation
    c, n = xt.shape[0], xt.shape[3]
    kh, kw = wshape[2:]
    s = xt.strides
    view = xp.lib.stride_tricks.as_strided(                                 # (C, kh, kw, rows, wo, N)
        xt[:, lo * sh:], shape=(c, kh, kw, hi - lo, wo, n),
        strides=(s[0], s[1] * dh, s[2] * dw, s[1] * sh, s[2] * sw, s[3]))
    k = c * kh * kw
    cols = xp.empty((k + ones_row, (hi - lo) * wo * n), dtype=xt.dtype) if out is None else out
    cols[:k].reshape(c, kh, kw, hi - lo, wo, n)[...] = view                  # the one copy
    if ones_row:
        cols[k] = 1
    return cols


def scatter_taps(xp, w, xt, in_hw, stride, dilation, shape):
    """The batch-last transposed convolution: a zeroed (C_out, Hf, Wf, N) buffer of ``shape``
    plus, for every tap, ``y[o, i*sH + p*dH, j*sW + q*dW, n] += sum_c w[c, o, p, q] *
    xt[c, (i, j, n)]``, where ``w`` is (C_in, C_out, kH, kW) and ``xt`` (C_in, H*W*N) for
    ``in_hw`` = (H, W). ``W^T xt`` is one product split over the threads
    (:func:`tinynet.parallel.matmul`), then the kH*kW strided adds go over output-channel
    groups on the threads, in row-major tap order, each adding runs of N contiguous values.
    conv_transpose2d's forward and a strided batch-last conv2d's input gradient."""
    ci, co, kh, kw = w.shape
    (h, wd), (sh, sw), (dh, dw), n = in_hw, stride, dilation, shape[3]
    cols = parallel.matmul(w.reshape(ci, co * kh * kw).T, xt).reshape(co, kh, kw, h, wd, n)
    def scatter(lo, hi, part):  # col2im_add on (N, C, ...) views of the batch-last buffers (writes through)
        col2im_add(part.transpose(3, 0, 1, 2), cols[lo:hi].transpose(5, 0, 1, 2, 3, 4), sh, sw, dh, dw)

    return zeroed_sums(xp, xp.empty(shape, dtype=cols.dtype), cols.nbytes, scatter)


def to_batch_last(xp, a, before=(0, 0), after=(0, 0)):
    """``a`` (N, C, H, W) copied to batch-last (C, H + bh + ah, W + bw + aw, N) with ``before``
    = (bh, bw) zero rows/columns above/left and ``after`` = (ah, aw) below/right: the padded
    input of a batch-last convolution in one pass (not a transposed copy, then a padded one),
    split into channel groups over the threads (:func:`tinynet.parallel.ranges`)."""
    n, c, h, w = a.shape
    (bh, bw), (ah, aw) = before, after
    out = xp.empty((c, h + bh + ah, w + bw + aw, n), dtype=a.dtype)
    groups = parallel.ranges(c, 2 * out.nbytes, xp)

    def copy(i):
        lo, hi = groups[i]
        part = out[lo:hi]
        part[:, :bh] = 0
        part[:, bh + h:] = 0
        part[:, bh:bh + h, :bw] = 0
        part[:, bh:bh + h, bw + w:] = 0
        part[:, bh:bh + h, bw:bw + w] = a[:, lo:hi].transpose(1, 2, 3, 0)

    parallel.parallel_for(len(groups), copy, xp)
    return out


NCHW_BLOCK_ELEMENTS = 8192  # values a block of to_nchw reads: 32 KiB of float32, in L1/L2


def to_nchw(xp, a, out=None):
    """A C-contiguous copy of ``a``, an (N, C, H, W) view of batch-last (C, H, W, N) memory
    (or any array: others are copied by ``ascontiguousarray``), written into ``out`` (an
    array or view of ``a``'s shape) when given.

    NumPy copies such a view in the destination's order, reading one value from each
    cache line of the source in turn, and the lines are evicted before their other values
    are read: a (64, 256, 8, 8) float32 copy took 6.8 ms on the 2-core CPU. Here it goes
    in blocks of (C, H, W) positions whose N values (about ``NCHW_BLOCK_ELEMENTS`` in all)
    stay in the cache while they are written out: 0.6 ms. Same values (a copy)."""
    if xp is not numpy or a.ndim != 4 or a.flags.c_contiguous or a.strides[0] > min(a.strides[1:]):
        if out is None:
            return xp.ascontiguousarray(a)
        out[...] = a
        return out
    n, c, h, w = a.shape
    out = xp.empty(a.shape, dtype=a.dtype) if out is None else out
    positions = max(1, NCHW_BLOCK_ELEMENTS // max(n, 1))
    if h * w <= positions:  # whole planes, several channels a block
        step = positions // (h * w)
        for lo in range(0, c, step):
            out[:, lo:lo + step] = a[:, lo:lo + step]
    else:  # rows of one channel a block
        step = max(1, positions // w)
        for ch in range(c):
            for lo in range(0, h, step):
                out[:, ch, lo:lo + step] = a[:, ch, lo:lo + step]
    return out


class Conv2dBatchLast(Op):
    """conv2d in the batch-last layout (see the module docstring); NumPy only."""
    name = "conv2d"

    def __init__(self, stride, padding, dilation, groups, out):
        self.stride, self.padding, self.dilation, self.groups, self.out = stride, padding, dilation, groups, out

    def forward(self, xp, x, w, b):
        self.input_batch_last = is_batch_last(x)
        ho, wo = self.out
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
            wmat = with_bias(xp, wmat, b.reshape(co, 1))
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
        self.save_for_backward(cols, w, xt)
        self.xshape, self.ho, self.wo = x.shape, ho, wo
        return y

    def _columns(self, xp, xt, wshape, ones_row, wo, lo, hi, out=None):
        return batch_last_columns(xp, xt, wshape, self.stride, self.dilation, ones_row, wo, lo, hi, out)

    def backward(self, xp, gy):
        cols, w, xt = self.saved
        xshape, ho, wo = self.xshape, self.ho, self.wo
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
            gw, gb = split_bias_grad(gwb, w.shape, self.needs_input_grad)
        if self.needs_input_grad[0]:
            if (sh, sw) == (1, 1):
                gpad = _input_grad_stride1(xp, gyt.reshape(co, ho, wo, n), w, pshape, (dh, dw))
            else:
                gpad = scatter_taps(xp, w, gyt, (ho, wo), (sh, sw), (dh, dw), pshape)  # (C, Hp, Wp, N)
            gx = gpad[:, pt:pt + h, pl:pl + wd].transpose(3, 0, 1, 2)
            if not self.input_batch_last:  # the gradient in the input's layout
                gx = to_nchw(xp, gx)
        return gx, gw, gb

