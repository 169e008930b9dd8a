"""Linear layer math: ``y = x W^T + b``.

``dx = gy W``, ``dW = gy^T x`` (summed over leading dims), ``db = sum(gy)``. On the CPU a
large product is split over tinynet's threads (:func:`tinynet.parallel.matmul`); on the
GPU the products go through :func:`tinynet.kernels.gemm.matmul` (tinynet's tiled
kernel with the bias fused for small layers, cuBLAS for large ones) and the bias
gradient through the per-channel reduction kernel, in float32, float64, float16 and
bfloat16 (the half types accumulated in float32 and rounded once, as PyTorch's CUDA
``linear``).
"""
import math

import numpy

from .. import parallel
from ..autograd import Op
from ..errors import DTypeError, ShapeError
from ..kernels import cuda, gemm, gpu_ops
from ..tensor import Tensor
from .autocast import autocast_op
from .cpu import subnormal
from .util import check_float, check_tensor, is_graph


def _rows(a):
    """``a``'s shape as a matrix: leading dims flattened (explicit, so that zero-size ones work)."""
    return (math.prod(a.shape[:-1]), a.shape[-1])


class Linear(Op):
    """``y = x W^T + b`` with x (..., in), W (out, in), b (out,).

    On the CPU a large product is split over tinynet's threads (``parallel.matmul``).
    On the GPU the products go through ``gemm.matmul`` (tinynet's tiled kernel with
    the bias fused for small layers, cuBLAS for large ones) and the bias gradient through
    the per-channel reduction kernel, for float32/float64 and for float16/bfloat16 (which
    autocast makes), the latter accumulated in float32; both paths are capturable in CUDA
    graphs. Other dtypes and empty arrays take the generic code (CuPy's ``@``).
    """
    name = "linear"
    bf16_native_gpu = True  # gemm.matmul multiplies bfloat16 with float32 accumulation (CuPy with bfloat16)
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x, w, b):
        need = self.needs_input_grad
        self.save_for_backward(x if need[1] else None, w if need[0] else None)
        # split over tinynet's CPU threads when large, each block adding its part of the bias
        if x.ndim == 2:
            return parallel.matmul(x, w.T, bias=b)
        # one (rows, in) product, not a batch of per-sample ones (NumPy's N-D @ 2-D loops)
        return parallel.matmul(x.reshape(_rows(x)), w.T, bias=b).reshape(x.shape[:-1] + (w.shape[0],))

    def backward(self, xp, gy):
        x, w = self.saved
        need_x, need_w, need_b = self.needs_input_grad
        gx = gw = gb = None
        if is_graph(xp):  # a create_graph backward: the same products, recorded
            g2 = xp.reshape(gy, _rows(gy))
            if need_x:
                gx = xp.matmul(gy, w)
            if need_w:
                gw = xp.matmul(xp.swapaxes(g2, 0, 1), xp.reshape(x, _rows(x)))
            if need_b:
                gb = xp.sum(g2, axis=0)
            return gx, gw, gb
        g2 = gy.reshape(_rows(gy))
        x2 = x.reshape(_rows(x)) if need_w else None
        k = 0  # a gradient full of subnormal numbers is multiplied scaled by 2^k (ops/cpu/subnormal.py)
        in_f = w.shape[1] if w is not None else (x2.shape[1] if x2 is not None else 0)  # (None: not needed)
        # (sampled only for large gradients: 13 us a call, 1.3 % of the reference MLP's batch-64 step)
        if type(g2) is numpy.ndarray and g2.size >= subnormal.MIN_SIZE and g2.size * in_f >= parallel.ITEM_MIN_MACS:
            k = subnormal.lift(g2, max(g2.shape), *[a for a, n in ((w, need_x), (x2, need_w)) if n])
        gp = subnormal.scaled(g2, k) if k else g2
        if need_x and need_w and parallel.pair_worth(gp, w):
            # the two products side by side, one per thread (on the 2-core machine the GPT's pair
            # took 0.80 ms so against 1.29 ms one after the other, each split over both threads),
            # each thread then summing half of the bias gradient's columns (NumPy sums a column
            # block row after row, as the whole: the same bits; (700, 7141): 1.5 ms on one thread)
            cut = g2.shape[1] // 2 if need_b and g2.dtype.itemsize > 2 and g2.shape[1] >= 4 else 0
            gb = numpy.empty(g2.shape[1], g2.dtype) if cut else None

            def item(i):
                product = gp @ w if i == 0 else gp.T @ x2
                if cut:
                    cols = slice(0, cut) if i == 0 else slice(cut, None)
                    g2[:, cols].sum(axis=0, out=gb[cols])
                return product

            gx, gw = parallel.parallel_for(2, item)
        else:
            gx = parallel.matmul(gp, w) if need_x else None
            gw = parallel.matmul(gp.T, x2) if need_w else None
        if k:
            gx = None if gx is None else subnormal.unscale_(gx, k)
            gw = None if gw is None else subnormal.unscale_(gw, k)
        if need_x and gy.ndim != 2:
            gx = gx.reshape(gy.shape[:-1] + (w.shape[1],))
        if need_b and gb is None:  # half types (float16, bfloat16) summed in float32, as PyTorch accumulates
            gb = g2.sum(axis=0) if g2.dtype.itemsize > 2 else g2.sum(axis=0, dtype=numpy.float32).astype(g2.dtype)
        return gx, gw, gb

    def forward_gpu(self, xp, x, w, b):
        # gemm.matmul: one launch with the bias for small layers, float32/64 and the half
        # types; anything the kernels do not cover (other dtypes, empty arrays) takes the
        # generic forward
        self.direct = (cuda.supported(x, w, half=True) and x.dtype == w.dtype and x.size > 0 and w.size > 0
                       and (b is None or (cuda.supported(b, half=True) and b.dtype == x.dtype)))
        if not self.direct:
            return self.forward(xp, x, w, b)
        need_x, need_w = self.needs_input_grad[:2]
        self.save_for_backward(x if need_w else None, w if need_x else None)  # the originals
        self.in_shape = x.shape
        x, w = xp.ascontiguousarray(x), xp.ascontiguousarray(w)
        b = None if b is None else xp.ascontiguousarray(b)
        if x.ndim == 2:  # (a CuPy reshape costs most of a microsecond of host time, even to the same shape)
            return gemm.matmul(x, w, trans_b=True, bias=b)
        y = gemm.matmul(x.reshape(-1, x.shape[-1]), w, trans_b=True, bias=b)
        return y.reshape(x.shape[:-1] + (w.shape[0],))

    def backward_gpu(self, xp, gy):
        if not self.direct:
            return self.backward(xp, gy)
        x, w = self.saved
        flat = gy.ndim != 2  # 2-D (the common case) needs no reshape
        g2 = xp.ascontiguousarray(gy)
        g2 = g2.reshape(-1, gy.shape[-1]) if flat else g2
        gx = gw = None
        if self.needs_input_grad[0]:
            gx = gemm.matmul(g2, xp.ascontiguousarray(w))
            gx = gx.reshape(self.in_shape) if flat else gx
        if self.needs_input_grad[1]:
            x = xp.ascontiguousarray(x)
            gw = gemm.matmul(g2, x.reshape(-1, x.shape[-1]) if flat else x, trans_a=True)
        gb = gpu_ops.bias_grad(g2) if self.needs_input_grad[2] else None
        return gx, gw, gb



@autocast_op
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
    # runs for every Linear layer of every step: the checks read the arrays once
    x = check_tensor("linear", "input", input).array
    if x.ndim < 1:
        raise ShapeError(f"linear: expected input of shape (*, in_features), got {input.shape}")
    w = check_float("linear", "weight", weight).array
    if w.ndim != 2:
        raise ShapeError(f"linear: expected weight of shape (out_features, in_features), got {weight.shape}")
    out_f, in_f = w.shape
    if x.shape[-1] != in_f:
        raise ShapeError(f"linear: expected input with {in_f} features (last dim) for weight "
                         f"{weight.shape}, got input of shape {input.shape}")
    if bias is not None and (not isinstance(bias, Tensor) or bias.array.shape != (out_f,)):
        raise ShapeError(f"linear: expected bias of shape ({out_f},), got "
                         f"{getattr(bias, 'shape', type(bias).__name__)}")
    if w.dtype != x.dtype or (bias is not None and bias.array.dtype != x.dtype):
        # PyTorch refuses mixed dtypes too (as matmul does)
        name, t = ("weight", weight) if w.dtype != x.dtype else ("bias", bias)
        raise DTypeError(f"linear: expected input and {name} to have the same dtype, got {input.dtype} and "
                         f"{t.dtype}")
    return Linear().apply(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """Bilinear map ``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``
    (composed of :func:`~tinynet.einsum`, so differentiable in every argument).

    Args:
        input1: float (*, in1_features).
        input2: float (*, in2_features), the same leading dims as ``input1``.
        weight: float (out_features, in1_features, in2_features).
        bias: optional float (out_features,).

    Returns:
        Tensor of shape (*, out_features).

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        ShapeError: mismatched feature sizes, leading dims or a malformed weight/bias.
        DTypeError: mixed dtypes (as PyTorch).
    """
    from .arith import add
    from .einsum import einsum
    x1 = check_tensor("bilinear", "input1", input1).array
    x2 = check_tensor("bilinear", "input2", input2).array
    w = check_float("bilinear", "weight", weight).array
    if w.ndim != 3:
        raise ShapeError(f"bilinear: expected weight of shape (out_features, in1_features, in2_features), got "
                         f"{weight.shape}")
    if x1.ndim < 1 or x2.ndim < 1 or x1.shape[:-1] != x2.shape[:-1]:
        raise ShapeError(f"bilinear: input batch dimensions do not match: got {input1.shape} and {input2.shape}")
    if x1.shape[-1] != w.shape[1] or x2.shape[-1] != w.shape[2]:
        raise ShapeError(f"bilinear: expected inputs with {w.shape[1]} and {w.shape[2]} features for weight "
                         f"{weight.shape}, got {input1.shape} and {input2.shape}")
    if bias is not None and (not isinstance(bias, Tensor) or bias.array.shape != (w.shape[0],)):
        raise ShapeError(f"bilinear: expected bias of shape ({w.shape[0]},), got "
                         f"{getattr(bias, 'shape', type(bias).__name__)}")
    for name, t in (("input1", input1), ("input2", input2), ("bias", bias)):
        if t is not None and t.array.dtype != w.dtype:
            raise DTypeError(f"bilinear: expected {name} and weight to have the same dtype, got {t.dtype} and "
                             f"{weight.dtype}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else add(y, bias)

