"""Batch normalisation (Ioffe & Szegedy, 2015, arXiv:1502.03167).

Training: ``y = gamma * (x - mean_B) / sqrt(var_B + eps) + beta`` with batch statistics
over every dim but the channel dim 1 (biased variance), and running statistics updated
in place as ``running = (1 - momentum) * running + momentum * stat`` (unbiased variance
for ``running_var``; ``momentum=None`` gives a cumulative average). Evaluation uses the
running statistics. Backward (for ``M`` values per channel, ``xh`` the normalised input):
``dx = (1/sqrt(var+eps)) * (dxh - mean(dxh) - xh * mean(dxh * xh))``, ``dxh = dy * gamma``.
"""
import numpy

from ..autograd import Op
from ..dtypes import bfloat16
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..kernels import batchnorm, cuda
from ..tensor import Tensor
from .util import check_flag, check_number


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
