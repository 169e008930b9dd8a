"""Batch normalisation (Ioffe & Szegedy, 2015, arXiv:1502.03167), RMS normalisation and
``normalize`` (layer, group and instance norm: :mod:`.layer_norm`; local response norm:
:mod:`.local_response_norm`).

Training: ``y = gamma * (x - mean_B) / sqrt(var_B + eps) + beta`` with batch statistics
over every dim but the channel dim 1 (biased variance), and running statistics updated
in place as ``running = (1 - momentum) * running + momentum * stat`` (unbiased variance
for ``running_var``; ``momentum=None`` gives a cumulative average). Evaluation uses the
running statistics. Backward (for ``M`` values per channel, ``xh`` the normalised input):
``dx = (1/sqrt(var+eps)) * (dxh - mean(dxh) - xh * mean(dxh * xh))``, ``dxh = dy * gamma``.

``rms_norm`` (Zhang & Sennrich, 2019, "Root Mean Square Layer Normalization",
arXiv:1910.07467): ``x / sqrt(mean(x^2) + eps) * weight`` over the trailing
``normalized_shape``; ``eps`` defaults to the machine epsilon of the input's dtype, as
PyTorch's. ``normalize``: ``x / max(||x||_p, eps)`` along ``dim``. Both are composed of
differentiable ops.
"""
import numbers

import numpy

from ..autograd import Op, no_grad
from ..dtypes import bfloat16, finfo
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..kernels import batchnorm, cuda
from ..tensor import Tensor
from .arith import add, mul
from .autocast import autocast_op
from .inplace import copy_
from .reduction import mean
from .stats import norm
from .unary import clamp, rsqrt
from .util import check_flag, check_float, check_int, check_number, check_tensor, dim_index


class BatchNorm(Op):
    """Batch normalisation of (N, C, *) input over every dim but 1. Its backward uses the
    normalised input saved by forward, so it is differentiable once (a ``create_graph``
    backward through it gives gradients that raise when differentiated again)."""
    name = "batch_norm"

    def __init__(self, running_mean, running_var, training, momentum, eps, num_batches):
        self.running_mean, self.running_var = running_mean, running_var
        self.training, self.momentum, self.eps, self.num_batches = training, momentum, eps, num_batches

    def forward(self, xp, x, weight, bias):
        dtype = x.dtype
        if dtype == numpy.float16:  # statistics and normalisation in float32, the output in float16
            x = x.astype(numpy.float32)
        c = x.shape[1]
        axes = (0,) + tuple(range(2, x.ndim))
        bshape = (1, c) + (1,) * (x.ndim - 2)
        if self.training:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)
            m = x.size // c
            if self.running_mean is not None:
                mom = self.momentum if self.momentum is not None else 1.0 / self.num_batches
                self.running_mean *= 1 - mom
                self.running_mean += mom * mean
                self.running_var *= 1 - mom
                self.running_var += (mom * m / max(m - 1, 1)) * var
        else:
            mean, var = self.running_mean, self.running_var
        invstd = 1.0 / xp.sqrt(var + self.eps)
        if not self.training and True not in self.needs_input_grad:  # eval, no tape: x * a + b, per
            a = invstd if weight is None else invstd * weight          # channel a and b (C-vectors), two
            b = -mean * a if bias is None else bias - mean * a       # passes over x instead of four
            self.axes, self.bshape = axes, bshape
            return (x * a.reshape(bshape) + b.reshape(bshape)).astype(dtype, copy=False)
        xhat = (x - mean.reshape(bshape)) * invstd.reshape(bshape)
        y = xhat
        if weight is not None:
            y = y * weight.reshape(bshape)
        if bias is not None:
            y = y + bias.reshape(bshape)
        self.save_for_backward(xhat, invstd, weight)
        self.axes, self.bshape = axes, bshape
        return y.astype(dtype, copy=False)

    def forward_gpu(self, xp, x, weight, bias):
        # the kernels: float32/float64 data with parameters of its dtype; float16 data (bfloat16
        # is widened before, by Op.apply) with float16 or float32 parameters, one dtype for all
        params = [a for a in (weight, bias, self.running_mean, self.running_var) if a is not None]
        pdtype = params[0].dtype if params else x.dtype
        if not cuda.supported(x, *params, half=True) or x.dtype == bfloat16 or \
                any(a.dtype != pdtype for a in params) or \
                not (pdtype == x.dtype or (x.dtype == numpy.float16 and pdtype == numpy.float32)) or \
                (self.training and self.momentum is None):
            return self.forward(xp, x, weight, bias)
        y, mean, invstd = batchnorm.batch_norm_fwd(x, weight, bias, self.running_mean, self.running_var,
                                                 self.training, self.momentum, self.eps)
        self.save_for_backward(x, mean, invstd, weight)
        self.kernel = True
        return y

    def backward_gpu(self, xp, gy):
        if not getattr(self, "kernel", False):
            return self.backward(xp, gy)
        x, mean, invstd, weight = self.saved
        need = self.needs_input_grad[1] or self.needs_input_grad[2]
        gx, gw, gb = batchnorm.batch_norm_bwd(x, gy.astype(x.dtype, copy=False), mean, invstd, weight,
                                              self.training, need)
        return (gx if self.needs_input_grad[0] else None, gw if self.needs_input_grad[1] else None,
                gb if self.needs_input_grad[2] else None)

    def backward(self, xp, gy):
        xhat, invstd, weight = self.saved
        axes, bshape = self.axes, self.bshape
        gw = (gy * xhat).sum(axis=axes) if self.needs_input_grad[1] else None
        gb = gy.sum(axis=axes) if self.needs_input_grad[2] else None
        gx = None
        if self.needs_input_grad[0]:
            gxhat = gy * weight.reshape(bshape) if weight is not None else gy
            if self.training:
                gx = (gxhat - gxhat.mean(axis=axes, keepdims=True)
                      - xhat * (gxhat * xhat).mean(axis=axes, keepdims=True)) * invstd.reshape(bshape)
            else:
                gx = gxhat * invstd.reshape(bshape)
        return gx, gw, gb


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5, num_batches_tracked=1):
    """Batch normalisation over dim 1 of a (N, C), (N, C, L) or (N, C, H, W) input.

    Args:
        input: float (N, C, *).
        running_mean, running_var: float (C,) tensors updated in place when ``training``;
            may be ``None`` in training mode (batch statistics only).
        weight, bias: optional float (C,) affine parameters (gamma, beta).
        training (bool): use batch statistics. Default False.
        momentum (float or None): running-average factor, default 0.1; ``None`` averages
            cumulatively over ``num_batches_tracked`` batches.
        eps (float): added to the variance. Default 1e-5.

    Returns:
        Tensor of the input's shape.

    Raises:
        ShapeError: input has fewer than 2 dims, a statistic or parameter is not (C,), or
            training with a single value per channel.
    """
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise ShapeError(f"batch_norm: expected input of shape (N, C, *), got "
                         f"{getattr(input, 'shape', type(input).__name__)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise ArgumentTypeError(f"batch_norm: {name} must be a Tensor or None, got {type(t).__name__}")
        if t is not None and tuple(t.shape) != (c,):
            raise ShapeError(f"batch_norm: expected {name} of shape ({c},), got {tuple(t.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise ArgumentError("batch_norm: running_mean and running_var are required when training=False")
    training, eps = check_flag("batch_norm", "training", training), check_number("batch_norm", "eps", eps)
    if momentum is not None:
        check_number("batch_norm", "momentum", momentum)
    if training and input.array.size // max(c, 1) <= 1:
        raise ShapeError(f"batch_norm: expected more than 1 value per channel when training, "
                         f"got input of shape {input.shape}")
    rm = running_mean.array if isinstance(running_mean, Tensor) else running_mean
    rv = running_var.array if isinstance(running_var, Tensor) else running_var
    fn = BatchNorm(rm, rv, training, momentum, eps, num_batches_tracked)
    return fn.apply(input, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalisation over the trailing ``normalized_shape``:
    ``input / sqrt(mean(input^2) + eps) [* weight]``.

    Args:
        input (Tensor): float (*, *normalized_shape).
        normalized_shape (int or sequence of ints): the trailing shape normalised over.
        weight (Tensor, optional): of ``normalized_shape``, multiplied in.
        eps (float, optional): added to the mean square; default the machine epsilon of
            the input's dtype (``finfo(input.dtype).eps``), as PyTorch.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        ArgumentTypeError: not a Tensor, or ``normalized_shape`` not an int or ints.
        DTypeError: not floating point.
        ShapeError: the trailing shape or the weight's shape differs from
            ``normalized_shape``.
    """
    check_float("rms_norm", "input", input)
    if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
        normalized_shape = (int(normalized_shape),)
    if not isinstance(normalized_shape, (tuple, list)):
        raise ArgumentTypeError(f"rms_norm: normalized_shape must be an int or a sequence of ints, got "
                                f"{type(normalized_shape).__name__}")
    shape = tuple(check_int("rms_norm", "normalized_shape", s, 0) for s in normalized_shape)
    k = len(shape)
    if k == 0 or k > input.ndim or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"rms_norm: expected input with trailing shape {list(shape)}, got {tuple(input.shape)}")
    if weight is not None and (not isinstance(weight, Tensor) or tuple(weight.shape) != shape):
        raise ShapeError(f"rms_norm: expected weight of shape {list(shape)}, got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if eps is None:
        eps = float(finfo(input.dtype).eps)
    check_number("rms_norm", "eps", eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    y = mul(input, rsqrt(add(mean(mul(input, input), dim=dims, keepdim=True), eps)))
    return mul(y, weight) if weight is not None else y


@autocast_op
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` with the p-norm taken along ``dim``.

    Args:
        input (Tensor): float, any shape with ``dim``.
        p (float): the norm's exponent (``inf`` allowed). Default 2.
        dim (int): the dimension normalised. Default 1.
        eps (float): the smallest denominator. Default 1e-12.
        out (Tensor, optional): receives the result (no gradient flows through it).

    Returns:
        Tensor of the input's shape (``out`` when given).

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
        IndexOutOfRangeError: ``dim`` outside the input's dims.
    """
    check_float("normalize", "input", input)
    d = dim_index("normalize", dim, input.ndim)
    denom = clamp(norm(input, p, d, keepdim=True), min=eps)
    result = input / denom
    if out is not None:
        with no_grad():
            copy_(check_tensor("normalize", "out", out), result)
        return out
    return result
