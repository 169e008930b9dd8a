"""Softmax and log-softmax along one dim, forward and backward: softmax with the
max-subtraction trick, ``exp(x - max) / sum(exp(x - max))``, and log-softmax
``x - max - log(sum(exp(x - max)))``; on the CPU the row-blocked kernels of
``ops/cpu/softmax.py`` (log-softmax), on the GPU tinynet's fused kernels (``kernels/gpu_ops.py``,
one warp a row, float32/float64) along the last dim of any shape: one launch forward and one
backward, where the generic code launches a max, a subtraction, an exponential, a sum and a
division through CuPy (host cost of F.softmax on an H200, 2026-11-29: 107 us a call against
PyTorch's 13, `benchmarks/op_overhead.py --device cuda`).
"""
import numpy

from ..autograd import Op
from ..kernels import cuda, gpu_ops
from .autocast import autocast_op
from .cpu.softmax import log_softmax as cpu_log_softmax
from .cpu.softmax import log_softmax_backward as cpu_log_softmax_backward
from .util import check_float, check_tensor, dim_index, sum_kept


class _RowKernels:
    """``forward_gpu``/``backward_gpu`` of a row-wise op whose GPU kernels are ``gpu_fwd(x)``
    and ``gpu_bwd(y, gy)`` (``kernels/gpu_ops.py``) and whose backward reads its output."""

    def forward_gpu(self, xp, x):
        if not _gpu_rows(self, x):
            return self.forward(xp, x)
        y = _like(self.gpu_fwd(_as_rows(x)), x)
        self.save_for_backward(y)
        return y

    def backward_gpu(self, xp, gy):
        (y,) = self.saved
        if not (_gpu_rows(self, y) and cuda.supported(gy) and gy.dtype == y.dtype):
            return self.backward(xp, gy)
        return (_like(self.gpu_bwd(_as_rows(y), _as_rows(gy)), y),)


class Softmax(_RowKernels, Op):
    name = "softmax"
    gpu_fwd, gpu_bwd = staticmethod(gpu_ops.softmax_fwd), staticmethod(gpu_ops.softmax_bwd)
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        if x.size == 0:  # nothing to normalise (and no max to take out)
            y = x.copy()
        else:
            ax = self.axis if x.ndim else None  # a 0-d input: CuPy refuses axis 0 there
            e = xp.exp(x - x.max(axis=ax, keepdims=True))
            y = e / e.sum(axis=ax, keepdims=True)
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        return (y * (gy - sum_kept(xp, gy * y, self.axis if y.ndim else None)),)



_CPU_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


class LogSoftmax(_RowKernels, Op):
    name = "log_softmax"
    gpu_fwd, gpu_bwd = staticmethod(gpu_ops.log_softmax_fwd), staticmethod(gpu_ops.log_softmax_bwd)
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis):
        self.axis = axis

    def _blocked(self, xp, a):  # the CPU's row-blocked kernels (ops/cpu/softmax.py) take it
        return bool(xp is numpy and a.ndim and a.size and self.axis == a.ndim - 1 and a.dtype in _CPU_FLOATS)

    def forward(self, xp, x):
        if x.size == 0:  # nothing to normalise (and no max to take out)
            y = x.copy()
        elif self._blocked(xp, x):
            y = cpu_log_softmax(x)
        else:
            ax = self.axis if x.ndim else None  # a 0-d input: CuPy refuses axis 0 there
            shifted = x - x.max(axis=ax, keepdims=True)
            y = shifted - xp.log(xp.exp(shifted).sum(axis=ax, keepdims=True))
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        if self._blocked(xp, y):
            return (cpu_log_softmax_backward(y, gy),)
        return (gy - xp.exp(y) * sum_kept(xp, gy, self.axis if y.ndim else None),)




def _gpu_rows(op, a):
    """True when the fused row kernels take ``a``: the op's dim is its last, a float32/float64
    CuPy array with elements, under 2^31 of them and 2^27 rows (a warp a row, 32-bit thread
    indices)."""
    n = a.ndim
    return bool(n and op.axis == n - 1 and cuda.supported(a) and 0 < a.size < 2 ** 31
                and (a.shape[0] if n == 2 else a.size // a.shape[-1]) < 2 ** 27)


def _as_rows(a):
    return a if a.ndim == 2 else a.reshape(-1, a.shape[-1])


def _like(y, x):
    """The kernel's (rows, C) result ``y`` in ``x``'s shape (no reshape for a 2-D ``x``: host time)."""
    return y if x.ndim == 2 else y.reshape(x.shape)


def _axis(op, dim, ndim):
    if dim is None:  # PyTorch's implicit choice (deprecated there): dim 0 for 0-, 1- and 3-D, else 1
        return 0 if ndim in (0, 1, 3) else 1
    return dim_index(op, dim, ndim)


@autocast_op
def softmax(input, dim=None, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``; output has the input's shape.

    Args:
        dim (int): the dimension summing to 1 (PyTorch's deprecated implicit choice when None).
        dtype: cast the input to it first.
    """
    check_tensor("softmax", "input", input)
    if dtype is not None:
        input = input.to(dtype)
    check_float("softmax", "input", input)
    return Softmax(_axis("softmax", dim, input.ndim)).apply(input)


@autocast_op
def log_softmax(input, dim=None, dtype=None):
    """``log(softmax(x))`` along ``dim``, computed stably; output has the input's shape."""
    check_tensor("log_softmax", "input", input)
    if dtype is not None:
        input = input.to(dtype)
    check_float("log_softmax", "input", input)
    return LogSoftmax(_axis("log_softmax", dim, input.ndim)).apply(input)
