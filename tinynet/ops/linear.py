"""Linear layer math: ``y = x W^T + b``.

``dx = gy W``, ``dW = gy^T x`` (summed over leading dims), ``db = sum(gy)``. On the CPU a
large product is split over tinynet's threads (:func:`tinynet.parallel.matmul`); on the
GPU the products go through :func:`tinynet.kernels.gpu_ops.matmul` (tinynet's tiled
kernel with the bias fused for small layers, cuBLAS for large ones) and the bias
gradient through the per-channel reduction kernel.
"""
import math

import numpy

from .. import parallel
from ..autograd import Op
from ..errors import DTypeError, ShapeError
from ..kernels import cuda, gpu_ops
from ..tensor import Tensor
from .autocast import autocast_op
from .util import check_float, check_tensor, is_graph


def _rows(a):
    """``a``'s shape as a matrix: leading dims flattened (explicit, so that zero-size ones work)."""
    return (math.prod(a.shape[:-1]), a.shape[-1])


class Linear(Op):
    """``y = x W^T + b`` with x (..., in), W (out, in), b (out,).

    On the CPU a large product is split over tinynet's threads (``parallel.matmul``).
    On the GPU the products go through ``gpu_ops.matmul`` (tinynet's tiled kernel with
    the bias fused for small layers, cuBLAS for large ones) and the bias gradient through
    the per-channel reduction kernel.
    """
    name = "linear"
    bf16_native_gpu = True  # cuBLAS multiplies bfloat16 with float32 accumulation (CuPy with bfloat16)
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x, w, b):
        need = self.needs_input_grad
        self.save_for_backward(x if need[1] else None, w if need[0] else None)
        y = parallel.matmul(x, w.T)  # split over tinynet's CPU threads when 2-D and large
        if b is not None:
            y += b
        return y

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
        if need_x:
            gx = parallel.matmul(gy, w)
        g2 = gy.reshape(_rows(gy))
        if need_w:
            gw = parallel.matmul(g2.T, x.reshape(_rows(x)))
        if need_b:  # half types (float16, bfloat16) summed in float32, as PyTorch accumulates
            gb = g2.sum(axis=0) if g2.dtype.itemsize > 2 else g2.sum(axis=0, dtype=numpy.float32).astype(g2.dtype)
        return gx, gw, gb

    def forward_gpu(self, xp, x, w, b):
        # gpu_ops.matmul: one launch with the bias for small layers; anything the kernels
        # do not cover (dtypes, empty arrays) takes the generic forward
        self.direct = (cuda.supported(x, w) and x.dtype == w.dtype and x.size > 0 and w.size > 0
                       and (b is None or (cuda.supported(b) and b.dtype == x.dtype)))
        if not self.direct:
            return self.forward(xp, x, w, b)
        need_x, need_w = self.needs_input_grad[:2]
        self.save_for_backward(x if need_w else None, w if need_x else None)  # the originals
        self.in_shape = x.shape
        x, w = xp.ascontiguousarray(x), xp.ascontiguousarray(w)
        b = None if b is None else xp.ascontiguousarray(b)
        y = gpu_ops.matmul(x.reshape(-1, x.shape[-1]), w, trans_b=True, bias=b)
        return y.reshape(x.shape[:-1] + (w.shape[0],))

    def backward_gpu(self, xp, gy):
        if not self.direct:
            return self.backward(xp, gy)
        x, w = self.saved
        out_f = gy.shape[-1]
        g2 = xp.ascontiguousarray(gy).reshape(-1, out_f)
        gx = gpu_ops.matmul(g2, xp.ascontiguousarray(w)).reshape(self.in_shape) if self.needs_input_grad[0] else None
        gw = (gpu_ops.matmul(g2, xp.ascontiguousarray(x).reshape(-1, x.shape[-1]), trans_a=True)
              if self.needs_input_grad[1] else None)
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


