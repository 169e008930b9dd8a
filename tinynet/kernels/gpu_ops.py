"""Launch wrappers for the RawKernels: pooling, dropout, log-softmax/NLL, batch norm,
im2col/col2im, bias add/gradient, ReLU (the GEMMs: :mod:`tinynet.kernels.gemm`). Each
takes and returns CuPy arrays; the Functions in :mod:`tinynet.nn.functional` call them
from their ``forward_gpu``/``backward_gpu``.

Outputs are made with ``cp.empty(shape, dtype)``, not ``cp.empty_like``: the inputs are
C-contiguous by then (so the layout is the same), and on the H100 machine ``empty_like``
took 6.3 us of host time per call against 3.9 us (``benchmarks/host_costs.py``).
"""
import functools

import numpy

from .. import backend, random as _random
from . import cuda


def _cp():
    return backend.cupy


# ---- pooling ---------------------------------------------------------------------------
def _max_args(in_shape, out, kernel, stride, padding, dilation):
    """(H, W, H_out, W_out, kh, kw, sh, sw, ph, pw, dh, dw) as the int32s both max-pool kernels take."""
    return cuda.i32s((*in_shape[2:], *out, *kernel, *stride, *padding, *dilation))


def max_pool2d_fwd(x, kernel, stride, padding, dilation, out):
    cp = _cp()
    x = cp.ascontiguousarray(x)
    y = cp.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
    argmax = cp.empty(y.shape, dtype=cp.int32)
    cuda.launch(cuda.kernel("pool.cu", "tinynet_max_pool2d_fwd", x.dtype), y.size,
                (x, y, argmax, cuda.i64(y.size), *_max_args(x.shape, out, kernel, stride, padding, dilation)))
    return y, argmax


def max_pool2d_bwd(gy, argmax, in_shape, kernel, stride, padding, dilation):
    """Input gradient of max pooling, gathered per input element (no zero-fill, no atomics);
    windows that do not overlap (stride == kernel, dilation 1) take a one-window kernel."""
    cp = _cp()
    gy = cp.ascontiguousarray(gy)
    gx = cp.empty(in_shape, dtype=gy.dtype)
    if tuple(stride) == tuple(kernel) and tuple(dilation) == (1, 1) and gx.size < 2 ** 31:
        cuda.launch(cuda.kernel("pool.cu", "tinynet_max_pool2d_bwd_disjoint", gy.dtype), gx.size,
                    (gy, argmax, gx, *cuda.i32s((gx.size, *in_shape[2:], *gy.shape[2:], *kernel, *padding))))
        return gx
    cuda.launch(cuda.kernel("pool.cu", "tinynet_max_pool2d_bwd", gy.dtype), gx.size,
                (gy, argmax, gx, cuda.i64(gx.size),
                 *_max_args(in_shape, gy.shape[2:], kernel, stride, padding, dilation)))
    return gx


def _avg_args(shape_in, out, kernel, stride, padding, cip, dov):
    return cuda.i32s((*shape_in[2:4], *out, *kernel, *stride, *padding, int(cip), dov or 0))


def avg_pool2d_fwd(x, kernel, stride, padding, out, count_include_pad, divisor_override):
    cp = _cp()
    x = cp.ascontiguousarray(x)
    y = cp.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
    cuda.launch(cuda.kernel("pool.cu", "tinynet_avg_pool2d_fwd", x.dtype), y.size,
                (x, y, cuda.i64(y.size),
                 *_avg_args(x.shape, out, kernel, stride, padding, count_include_pad, divisor_override)))
    return y


def avg_pool2d_bwd(gy, in_shape, kernel, stride, padding, count_include_pad, divisor_override):
    cp = _cp()
    gy = cp.ascontiguousarray(gy)
    gx = cp.zeros(in_shape, dtype=gy.dtype)
    cuda.launch(cuda.kernel("pool.cu", "tinynet_avg_pool2d_bwd", gy.dtype), gy.size,
                (gy, gx, cuda.i64(gy.size),
                 *_avg_args(in_shape, gy.shape[2:], kernel, stride, padding, count_include_pad,
                            divisor_override)))
    return gx


# ---- dropout (Philox) --------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _seed_arg(seed):
    """The seed as a ``uint64`` kernel argument (made once per seed: every dropout call passes it)."""
    return numpy.uint64(seed % 2**64)


def dropout_fwd(x, p, mask_shape):
    """Dropout with the mask drawn per element (mask_shape == x.shape) or per leading
    (N, C) unit (dropout2d); float32, float64, float16 or bfloat16 ``x``. Returns (y, uint8 mask, scale)."""
    cp = _cp()
    x = x if x._c_contiguous else cp.ascontiguousarray(x)  # (ascontiguousarray makes a 0-d array 1-d)
    group = 1
    for a, b in zip(x.shape, mask_shape):
        if b == 1 and a != 1:
            group *= a
    kind = cp.float32 if x.dtype.itemsize == 2 else x.dtype  # the float16/bfloat16 kernels scale in float32
    scale = cuda.scalar(kind, 1.0 / (1.0 - p)) if p < 1 else cuda.scalar(kind, 0.0)
    y = cp.empty(x.shape, dtype=x.dtype)
    mask = cp.empty(x.shape, dtype=cp.uint8)
    seed, offset, cells = _random.philox_draw()  # the generator's state; cells: [seed, base] inside a capture
    cells = cuda.NULL if cells is None else numpy.uint64(cells.data.ptr)  # a null pointer outside a capture
    cuda.launch(cuda.kernel("dropout.cu", "tinynet_dropout_fwd", x.dtype), -(-x.size // 4),  # 4 per thread
                (x, y, mask, cuda.i64(x.size), cuda.i64(group), cp.float32(p), scale, _seed_arg(seed),
                 numpy.uint64(offset), cells))
    return y, mask, scale


def dropout_bwd(gy, mask, scale):
    cp = _cp()
    gy = gy if gy._c_contiguous else cp.ascontiguousarray(gy)
    gx = cp.empty(gy.shape, dtype=gy.dtype)
    cuda.launch(cuda.kernel("dropout.cu", "tinynet_dropout_bwd", gy.dtype), gy.size,
                (gy, mask, gx, cuda.i64(gy.size), scale))
    return gx


# ---- log-softmax / NLL / cross-entropy -------------------------------------------------
def _rows(x):
    return x.shape[0], x.shape[1]


def _row_pass(kernel, first, gy=None, with_lse=False):
    """One launch of ``softmax_nll.cu``'s row kernel ``kernel``, one warp a row of the 2-D
    ``first``: a forward (``first`` the input, copied contiguous if needed; ``with_lse``: the
    kernel also writes the rows' log-sum-exp to a scratch array) or, given ``gy``, a backward
    (``first`` the saved output, ``gy`` its gradient, of its dtype). Returns the new output."""
    cp = _cp()
    if gy is None:
        first = cp.ascontiguousarray(first)
        ins = (first,)
    else:
        ins = (first, cp.ascontiguousarray(gy))
    m, c = _rows(first)
    out = cp.empty(first.shape, dtype=first.dtype)
    extra = (cp.empty(m, dtype=first.dtype),) if with_lse else ()
    cuda.launch(cuda.kernel("softmax_nll.cu", kernel, first.dtype), m * 32,
                (*ins, out, *extra, cuda.i32(m), cuda.i32(c)))
    return out


def softmax_fwd(x):
    """Softmax of each row of the 2-D float32/float64 array ``x``."""
    return _row_pass("tinynet_softmax_fwd", x)


def softmax_bwd(y, gy):
    """``y * (gy - rowsum(gy * y))``: softmax's input gradient from its output ``y``."""
    return _row_pass("tinynet_softmax_bwd", y, gy)


def log_softmax_fwd(x):
    """Log-softmax of each row of the 2-D float32/float64 array ``x``."""
    return _row_pass("tinynet_log_softmax_fwd", x, with_lse=True)


def log_softmax_bwd(y, gy):
    """``gy - exp(y) * rowsum(gy)``: log-softmax's input gradient from its output ``y``."""
    return _row_pass("tinynet_log_softmax_bwd", y, gy)


def logsumexp_rows(x):
    cp = _cp()
    m, c = _rows(x)
    lse = cp.empty(m, dtype=x.dtype)
    cuda.launch(cuda.kernel("softmax_nll.cu", "tinynet_log_softmax_fwd", x.dtype), m * 32,
                (x, None, lse, cuda.i32(m), cuda.i32(c)))
    return lse


_MODES = {"mean": 0, "sum": 1, "none": 2}


def nll_fwd(x, target, weight, ignore_index, reduction, lse=None):
    """Loss and [sum, weight-sum, reduced loss]; with ``lse`` the input is logits (cross-entropy).
    The reduced loss ("mean" or "sum") is a 0-d view of the kernel's third output."""
    cp = _cp()
    x = cp.ascontiguousarray(x)
    m, c = _rows(x)
    out = cp.empty(3, dtype=x.dtype)
    per_row = cp.empty(m, dtype=x.dtype) if reduction == "none" else None
    t = cp.ascontiguousarray(target, dtype=cp.int64)
    mode = cuda.i32(_MODES[reduction])
    if lse is None:
        args = (x, t, weight, out, per_row, cuda.i32(m), cuda.i32(c), cuda.i64(ignore_index), mode)
        cuda.kernel("softmax_nll.cu", "tinynet_nll_loss_fwd", x.dtype)((1,), (256,), args)
    else:
        args = (x, lse, t, weight, out, per_row, cuda.i32(m), cuda.i32(c), cuda.i64(ignore_index), mode)
        cuda.kernel("softmax_nll.cu", "tinynet_cross_entropy_fwd", x.dtype)((1,), (256,), args)
    return (per_row if reduction == "none" else out[2]), out


def nll_bwd(gy, x_shape, dtype, target, weight, out, ignore_index, reduction, x=None, lse=None):
    cp = _cp()
    m, c = x_shape
    gx = cp.empty(x_shape, dtype=dtype)
    gy = cp.ascontiguousarray(gy)  # 0-d ("mean", "sum") or (M,) ("none"); the kernel reads the pointer
    t = cp.ascontiguousarray(target, dtype=cp.int64)
    mode = cuda.i32(_MODES[reduction])
    if lse is None:
        args = (t, weight, gy, out, gx, cuda.i32(m), cuda.i32(c), cuda.i64(ignore_index), mode)
        cuda.launch(cuda.kernel("softmax_nll.cu", "tinynet_nll_loss_bwd", dtype), m * c, args)
    else:
        args = (x, lse, t, weight, gy, out, gx, cuda.i32(m), cuda.i32(c), cuda.i64(ignore_index), mode)
        cuda.launch(cuda.kernel("softmax_nll.cu", "tinynet_cross_entropy_bwd", dtype), m * c, args)
    return gx


# ---- im2col / col2im ---------------------------------------------------------------------
def _conv_args(xshape, groups, out, kernel, stride, padding, dilation):
    n, c, h, w = xshape
    (pt, _), (pl, _) = padding
    return cuda.i32s((n, c, h, w, groups, *out[:2], *kernel[:2], *stride[:2], pt, pl, *dilation[:2]))


def im2col(x, groups, out, kernel, stride, padding, dilation):
    """Columns (G, N*Ho*Wo, C/G*kh*kw) of NCHW ``x``."""
    cp = _cp()
    x = cp.ascontiguousarray(x)
    n, c = x.shape[:2]
    cols = cp.empty((groups, n * out[0] * out[1], c // groups * kernel[0] * kernel[1]), dtype=x.dtype)
    cuda.launch(cuda.kernel("im2col.cu", "tinynet_im2col_fwd", x.dtype), cols.size,
                (x, cols, cuda.i64(cols.size), *_conv_args(x.shape, groups, out, kernel, stride, padding, dilation)))
    return cols


def col2im(cols, xshape, groups, out, kernel, stride, padding, dilation):
    """Sum column entries back into an NCHW gradient of shape ``xshape``."""
    cp = _cp()
    cols = cp.ascontiguousarray(cols)
    gx = cp.empty(xshape, dtype=cols.dtype)
    cuda.launch(cuda.kernel("im2col.cu", "tinynet_col2im_bwd", cols.dtype), gx.size,
                (cols, gx, cuda.i64(gx.size), *_conv_args(xshape, groups, out, kernel, stride, padding, dilation)))
    return gx


# ---- small fused kernels (fused.cu) -----------------------------------------------------
def bias_grad(gy):
    """Sum of ``gy`` (N, C, *) over every dim but 1: the bias gradient.

    Rows of at least ``cuda.MIN_ROW`` values (convolution outputs) are summed in two deterministic
    stages: a (C, parts) grid of blocks (``cuda.row_grid``) reads contiguous rows, then one block per channel
    adds the parts. One block per channel alone left all but C of the GPU's SMs idle:
    1.2 ms of a 1.85 ms training step at batch 1024. Short rows (linear layers) take the
    one-block-per-channel kernel directly. float16 and bfloat16 sum in float32 (float32
    partials, added by ``tinynet_bias_grad_parts_bwd``) and round once.
    """
    cp = _cp()
    gy = cp.ascontiguousarray(gy)
    n, c = gy.shape[:2]
    length = gy.size // (n * c) if n * c else 0
    if length == 1 and n >= COLUMN_SUM_ROWS:  # a linear layer's (M, C) rows: coalesced column sums
        return column_sum(gy.reshape(n, c))
    out = cp.empty(c, dtype=gy.dtype)
    one_block = cuda.kernel("fused.cu", "tinynet_bias_grad_bwd", gy.dtype)
    grid = cuda.row_grid(n, c, length)
    if grid is None:
        one_block((c,), (256,), (gy, out, cuda.i32(n), cuda.i32(c), cuda.i64(length)))
        return out
    parts, threads = grid
    half = gy.dtype.itemsize == 2
    partial = cp.empty((c, parts), dtype=cp.float32 if half else gy.dtype)
    cuda.kernel("fused.cu", "tinynet_bias_grad_rows_bwd", gy.dtype)(
        (c, parts), (threads,), (gy, partial, cuda.i32(n), cuda.i32(c), cuda.i64(length)))
    add_parts = cuda.kernel("fused.cu", "tinynet_bias_grad_parts_bwd", gy.dtype) if half else one_block
    add_parts((c,), (256,), (partial, out, cuda.i32(1), cuda.i32(c), cuda.i64(parts)))
    return out


# Rows from which a 2-D bias gradient takes the column-sum kernels: the one-block-per-channel
# kernel reads a (M, C) matrix down its columns (a stride of C per read); for the GPT's (16384,
# 1536) gradients in bfloat16 it took 100 us a launch (H100, benchmarks/transformer.py profile,
# 2026-11-28, PyTorch's column reduction about 30 us). Below this many rows (the reference
# nets' batches of 64 to 1024) the one-block kernel stays, with its bits.
COLUMN_SUM_ROWS = 2048


def channel_sum_nhwc(gy):
    """Sum of channels-last ``gy`` (N, C, H, W stored NHWC; float32/64, float16 or bfloat16)
    over N, H and W: the bias gradient of an NHWC convolution (see :func:`column_sum`)."""
    return column_sum(gy.transpose(0, 2, 3, 1).reshape(-1, gy.shape[1]))  # the (NHW, C) rows, no copy


def column_sum(rows):
    """Column sums of a row-major (M, C) CuPy array in two deterministic launches
    (``channel_sum.cu``), summed in float32 (float64 for float64). Returns (C,) of its dtype.
    With C a multiple of 4 (and the rows aligned) a thread reads four adjacent columns as one
    vector (``tinynet_channel_sum_rows4``): the same sums in the same order, so the same bits."""
    cp = _cp()
    m, c = rows.shape
    parts = max(1, min(512, (m + 255) // 256))
    partial = cp.empty((parts, c), dtype=cp.float64 if rows.dtype == cp.float64 else cp.float32)
    out = cp.empty(c, dtype=rows.dtype)
    if c % 4 == 0 and rows.data.ptr % (4 * rows.dtype.itemsize) == 0:  # 4 columns a thread, one vector read
        cuda.kernel("channel_sum.cu", "tinynet_channel_sum_rows4", rows.dtype)(
            ((c // 4 + 31) // 32, parts), (32, 8), (rows, partial, cuda.i64(m), cuda.i32(c)))
    else:
        cuda.kernel("channel_sum.cu", "tinynet_channel_sum_rows", rows.dtype)(
            ((c + 31) // 32, parts), (32, 8), (rows, partial, cuda.i64(m), cuda.i32(c)))
    cuda.launch(cuda.kernel("channel_sum.cu", "tinynet_channel_sum_parts", rows.dtype), c,
                (partial, out, cuda.i32(parts), cuda.i32(c)))
    return out


def bias_add(y, b):
    """Add ``b`` (C,) in place to channel dim 1 of C-contiguous ``y`` (N, C, *); returns ``y``.
    float32/64, float16 and bfloat16 (added in float32, rounded once)."""
    c = y.shape[1]
    length = y.size // (y.shape[0] * c) if y.size else 1
    cuda.launch(cuda.kernel("fused.cu", "tinynet_bias_add_fwd", y.dtype), -(-y.size // 4),  # 4 per thread
                (y, b, cuda.i64(y.size), cuda.i32(c), cuda.i64(length)))
    return y


def bias_fill(y, b):
    """Fill C-contiguous ``y`` (N, C, *) with ``b`` (C,) along channel dim 1 (any float dtype,
    the values copied exactly); returns ``y``. One launch of ``tinynet_bias_fill_fwd``, 4
    elements a thread."""
    c = y.shape[1]
    length = y.size // (y.shape[0] * c) if y.size else 1
    cuda.launch(cuda.kernel("fused.cu", "tinynet_bias_fill_fwd", y.dtype), -(-y.size // 4),
                (y, b, cuda.i64(y.size), cuda.i32(c), cuda.i64(length)))
    return y


def relu_fwd(x):
    cp = _cp()
    # CuPy's own flag (x.flags builds an object: 0.53 against 0.09 us, benchmarks/host_costs.py);
    # ascontiguousarray would make a 0-d array 1-d
    x = x if x._c_contiguous else cp.ascontiguousarray(x)
    y = cp.empty(x.shape, dtype=x.dtype)
    cuda.launch(cuda.kernel("fused.cu", "tinynet_relu_fwd", x.dtype), x.size, (x, y, cuda.i64(x.size)))
    return y


def relu_bwd(y, gy):
    cp = _cp()
    gy = gy if gy._c_contiguous else cp.ascontiguousarray(gy)
    gx = cp.empty(gy.shape, dtype=gy.dtype)
    cuda.launch(cuda.kernel("fused.cu", "tinynet_relu_bwd", gy.dtype), gy.size, (y, gy, gx, cuda.i64(gy.size)))
    return gx
