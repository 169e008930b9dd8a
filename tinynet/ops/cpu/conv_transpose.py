"""The CPU's backward of ``conv_transpose2d`` (one group) in the batch-last layout.

The transposed convolution's gradients are a convolution of its output gradient ``gy`` by
the same filter ``w`` (:mod:`tinynet.ops.conv_transpose`): ``gx = conv2d(gy, w)`` (stride,
padding and dilation of the transposed one; cropped to the input size) and ``gw`` that
convolution's filter gradient for output gradient ``x``. Here both come from one set of
batch-last columns of ``gy`` (:func:`tinynet.ops.cpu.conv.batch_last_columns`: (C_out*kH*kW,
rows*W'*N) for a block of the convolution's output rows), built once a block and used while
in cache by both products: ``gx``'s rows ``W (C_in, C_out*kH*kW) @ cols`` and ``gw``'s share
``x_rows (C_in, rows*W'*N) @ cols^T``; the blocks are split over :mod:`tinynet.parallel`'s
threads and their filter-gradient shares summed. Run as a ``Conv2dBatchLast`` forward and
backward, the columns were built twice, and copying the batch-last gradient back to NCHW in
NumPy's order took 7-14 ms of dcgan's 40-60 ms layers (now :func:`tinynet.ops.cpu.conv.to_nchw`).
"""
from ... import parallel
from .conv import _filter_grad_batch_last, _row_blocks, batch_last_columns, to_batch_last, to_nchw


def conv_transpose2d_backward(xp, x, w, gy, stride, padding, dilation, conv_out, need_x, need_w):
    """Input and filter gradients of ``conv_transpose2d(x, w)`` (groups 1) on NumPy.

    Args:
        x: (N, C_in, H, W) input. w: (C_in, C_out, kH, kW) filter. gy: (N, C_out, H_out, W_out)
            output gradient. stride, padding, dilation: (h, w) int pairs of the op.
        conv_out: (H', W'), the size of ``conv2d(gy, w)`` with those arguments (>= (H, W):
            output_padding adds rows the convolution reaches past the input).
        need_x, need_w: which gradients to compute.

    Returns:
        ``(gx, gw)``: (N, C_in, H, W) and (C_in, C_out, kH, kW) arrays of x's dtype, None
        where not asked for.
    """
    n, ci, h, wd = x.shape
    _, co, kh, kw = w.shape
    (ph, pw) = padding
    ho, wo = conv_out
    gyt = to_batch_last(xp, gy, (ph, pw), (ph, pw))                      # gy padded, (C, Hp, Wp, N)
    k = co * kh * kw
    row = wo * n
    wmat = w.reshape(ci, k)
    gxt = xp.empty((ci, ho * row), dtype=x.dtype) if need_x else None
    # x batch-last, with zero rows where the convolution reaches past it
    xt = to_batch_last(xp, x, (0, 0), (ho - h, wo - wd)).reshape(ci, ho * row) if need_w else None
    blocks = _row_blocks(xp, ho, k * row * gy.dtype.itemsize, 0)          # never whole: nothing is kept

    def block(i):
        lo, hi = blocks[i]
        cols = batch_last_columns(xp, gyt, (ci, co, kh, kw), stride, dilation, False, wo, lo, hi)
        if need_x:
            xp.matmul(wmat, cols, out=gxt[:, lo * row:hi * row])
        return _filter_grad_batch_last(cols, xt[:, lo * row:hi * row]) if need_w else None

    parts = parallel.parallel_for(len(blocks), block, xp)
    gw = sum(parts).reshape(w.shape) if need_w else None
    gx = to_nchw(xp, gxt.reshape(ci, ho, wo, n)[:, :h, :wd].transpose(3, 0, 1, 2)) if need_x else None
    return gx, gw

