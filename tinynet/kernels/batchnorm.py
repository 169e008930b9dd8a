"""Launchers of ``batchnorm.cu``: batch normalisation's statistics, apply and backward on
C-contiguous (N, C, *) CuPy arrays of float32, float64 or float16, called by
``tinynet.ops.normalization.BatchNorm`` from its ``forward_gpu``/``backward_gpu``. The
parameters (weight, bias, running statistics) have the data's dtype, or float32 for float16
data (autocast's case, as PyTorch allows). float16 is read and written in its own width and
computed in float32: the batch statistics and the backward's sums are float32 arrays.

The two per-channel reductions (the batch statistics; the backward's sums of ``gy`` and
``gy * xhat``) of rows of at least 32 values run on a (C, parts) grid in one launch, the last
block of each channel merging the parts in a fixed order (deterministic); they need a few
per-channel counters of their own, kept per GPU outside every memory pool and zeroed once (the
kernels leave them at zero), as the split-K GEMM's (:mod:`tinynet.kernels.gemm`). Short rows,
more than ``COUNTERS`` channels, or a capture that starts before any counters exist take the
one-block-per-channel kernels.
"""
import numpy

from .. import backend, capture
from . import cuda

COUNTERS = 8192    # channels the (C, parts) kernels can count
_counters: dict = {}  # device -> its zeroed counters (a cupy.cuda.Memory)


def _channel_counters(cp):
    """The current GPU's counters, or None while a capture is in progress and none exist yet
    (the zeroing would be recorded into the graph, not run)."""
    dev = cp.cuda.runtime.getDevice()
    mem = _counters.get(dev)
    if mem is None:
        if capture.current() is not None:
            return None
        mem = _counters[dev] = cp.cuda.Memory(COUNTERS * 4)
        cp.cuda.runtime.memset(mem.ptr, 0, COUNTERS * 4)
    return mem


def _grid(cp, n, c, length):
    """``(parts, threads, counters)`` of the (C, parts) kernels (``cuda.row_grid``), or None for
    one block per channel."""
    grid = cuda.row_grid(n, c, length)
    if grid is None or c > COUNTERS:
        return None
    counters = _channel_counters(cp)
    if counters is None:
        return None
    return grid + (numpy.uint64(counters.ptr),)  # the counters go by address (a kernel argument)


def _ncl(x):
    n, c = x.shape[:2]
    length = x.size // (n * c) if n * c else 0
    return n, c, length


def _types(x, params):
    """``(dtype of the statistics and sums, kernel-name infix)``: float32 and "_pf32" for
    float16 data with float32 parameters, float32 and "" for float16 parameters, else the
    data's dtype and ""."""
    if x.dtype.itemsize != 2:
        return x.dtype, ""
    mixed = any(p is not None and p.dtype == numpy.float32 for p in params)
    return numpy.dtype(numpy.float32), "_pf32" if mixed else ""


def batch_norm_fwd(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(y, mean, invstd)`` of batch normalisation over every dim but 1 of ``x``; in training
    the batch statistics (biased variance for ``invstd``; the running variance gets the
    unbiased one) and the running statistics updated in place, else the running ones.
    ``y`` has ``x``'s dtype; ``mean`` and ``invstd`` are float32 for float16 ``x``."""
    cp = backend.cupy
    x = cp.ascontiguousarray(x)
    n, c, length = _ncl(x)
    acc, pf = _types(x, (weight, bias, running_mean, running_var))
    if training:
        mean, invstd = cp.empty(c, dtype=acc), cp.empty(c, dtype=acc)
        tail = (running_mean, running_var, cp.int32(n), cp.int32(c), cp.int32(length), cuda.scalar(acc, eps),
                cuda.scalar(acc, momentum))
        grid = _grid(cp, n, c, length)
        if grid is None:
            cuda.kernel("batchnorm.cu", "tinynet_batch_norm_stats_fwd" + pf, x.dtype)(
                (c,), (256,), (x, mean, invstd) + tail)
        else:
            parts, threads, counters = grid
            part = cp.empty(2 * c * parts, dtype=acc)
            cuda.kernel("batchnorm.cu", "tinynet_batch_norm_stats_rows_fwd" + pf, x.dtype)(
                (c, parts), (threads,), (x, part, counters, mean, invstd) + tail)
    else:  # the running statistics, invstd = 1 / sqrt(var + eps): one launch (were up to five CuPy calls)
        mean, invstd = cp.empty(c, dtype=acc), cp.empty(c, dtype=acc)
        cuda.launch(cuda.kernel("batchnorm.cu", "tinynet_batch_norm_eval_stats_fwd" + pf, x.dtype), c,
                    (running_mean, running_var, mean, invstd, cuda.i32(c), cuda.scalar(acc, eps)))
    y = cp.empty(x.shape, dtype=x.dtype)
    cuda.launch(cuda.kernel("batchnorm.cu", "tinynet_batch_norm_fwd" + pf, x.dtype), x.size,
                (x, mean, invstd, weight, bias, y, cp.int64(x.size), cp.int32(c), cp.int32(length)))
    return y, mean, invstd


def batch_norm_bwd(x, gy, mean, invstd, weight, training, need_params):
    """``(gx, grad of weight, grad of bias)``: the per-channel sums of ``gy * xhat`` and ``gy``
    (when training or the parameters need them) and the input gradient. ``gx`` has ``x``'s
    dtype, the parameter gradients the weight's (summed in float32 for float16 data)."""
    cp = backend.cupy
    gy = cp.ascontiguousarray(gy)
    n, c, length = _ncl(x)
    acc, pf = _types(x, (weight,))
    sum_gy, sum_gy_xhat = cp.empty(c, dtype=acc), cp.empty(c, dtype=acc)
    if training or need_params:
        grid = _grid(cp, n, c, length)
        tail = (sum_gy, sum_gy_xhat, cp.int32(n), cp.int32(c), cp.int32(length))
        if grid is None:
            cuda.kernel("batchnorm.cu", "tinynet_batch_norm_sums_bwd", x.dtype)(
                (c,), (256,), (x, gy, mean, invstd) + tail)
        else:
            parts, threads, counters = grid
            part = cp.empty(2 * c * parts, dtype=acc)
            cuda.kernel("batchnorm.cu", "tinynet_batch_norm_sums_rows_bwd", x.dtype)(
                (c, parts), (threads,), (x, gy, mean, invstd, part, counters) + tail)
    gx = cp.empty(gy.shape, dtype=gy.dtype)
    cuda.launch(cuda.kernel("batchnorm.cu", "tinynet_batch_norm_bwd" + pf, x.dtype), x.size,
                (x, gy, mean, invstd, weight, sum_gy, sum_gy_xhat, gx, cp.int64(x.size), cp.int32(c),
                 cp.int32(length), cp.int64(n * length), cp.int32(int(training))))
    pdtype = weight.dtype if weight is not None else x.dtype
    return gx, sum_gy_xhat.astype(pdtype, copy=False), sum_gy.astype(pdtype, copy=False)
