"""Activation functions, forward and backward ((log-)softmax: ops/softmax.py).

Formulas: ReLU ``max(x, 0)``; LeakyReLU ``max(x, 0) + slope * min(x, 0)``; sigmoid
``1 / (1 + e^-x)``, SciPy's (CuPy's) ``special.expit`` (no overflow); GELU (Hendrycks &
Gimpel, 2016, arXiv:1606.08415) exact ``x * Phi(x)`` with the normal CDF
``Phi(x) = (1 + erf(x / sqrt 2)) / 2``, or its tanh approximation.
"""
from typing import Any
import math

import numpy

from ..dtypes import is_floating
from .. import backend
from .. import dtypes
from ..autograd import Op
from ..errors import DTypeError, ShapeError
from ..kernels import cuda, elementwise as ew, gpu_ops
from ..tensor import Tensor
from .cpu.gelu import gelu as cpu_gelu
from .inplace import inplace_apply
from .unary import _erf
from .softmax import LogSoftmax, Softmax, log_softmax, softmax  # noqa: F401  (moved to ops/softmax.py; importable here as before)
from .util import check_choice, check_float, check_number, check_tensor, is_graph


def _check(op, x):
    check_float(op, "input", x)


class _Activation(Op):
    twice_differentiable = True
    gpu_saves_generic = True


class ReLU(_Activation):
    name = "relu"
    bf16_kernel_gpu = True  # tinynet_relu_fwd/bwd_bf16 (fused.cu)

    def forward(self, xp, x):
        y = xp.maximum(x, 0)
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        return (gy * (y > 0),)

    def forward_gpu(self, xp, x):
        if not cuda.supported(x, half=True):  # float16 and bfloat16 too (the activations of autocast)
            return self.forward(xp, x)
        y = gpu_ops.relu_fwd(x)
        self.save_for_backward(y)
        return y

    def backward_gpu(self, xp, gy):
        (y,) = self.saved
        if not cuda.supported(gy, y, half=True):
            return self.backward(xp, gy)
        return (gpu_ops.relu_bwd(y, gy if gy.dtype is y.dtype else gy.astype(y.dtype)),)


class BiasReLU(_Activation):
    """``relu(x + b)`` with ``b`` broadcast along dim 1, one pass on the GPU."""
    name = "bias_relu"

    def forward(self, xp, x, b):
        y = xp.maximum(x + b.reshape((1, -1) + (1,) * (x.ndim - 2)), 0)
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        g = gy * (y > 0)
        return g, xp.sum(g, axis=(0,) + tuple(range(2, g.ndim)))

    def forward_gpu(self, xp, x, b):
        if not cuda.supported(x, b):
            return self.forward(xp, x, b)
        y = ew.bias_relu_fwd(xp.ascontiguousarray(x), b)
        self.save_for_backward(y)
        return y

    def backward_gpu(self, xp, gy):
        if not cuda.supported(gy):
            return self.backward(xp, gy)
        return ew.bias_relu_bwd(self.saved[0], gy)


class _ParamPointwise(_Activation):
    """An elementwise op of the input and one parameter (``self.param``) with a GPU
    kernel pair ``gpu_kernels = (fwd(x, param), bwd(x, gy, param))`` from
    ``kernels.elementwise``; the input is saved for backward on either path."""
    gpu_kernels: Any = None

    def __init__(self, param):
        self.param = param

    def forward_gpu(self, xp, x):
        if not cuda.supported(x):
            return self.forward(xp, x)
        self.save_for_backward(x)
        return self.gpu_kernels[0](x, self.param)

    def backward_gpu(self, xp, gy):
        return (self.gpu_kernels[1](self.saved[0], gy, self.param) if cuda.supported(gy)
                else self.backward(xp, gy)[0],)


class LeakyReLU(_ParamPointwise):
    name = "leaky_relu"
    gpu_kernels = (ew.leaky_relu_fwd, ew.leaky_relu_bwd)

    @property
    def slope(self):
        return self.param

    def _blend(self, a):
        """True when the where-free forms below give where's bits: a slope in (0, 1] (0 would
        make inf * 0 = NaN win the maximum) and float32/float64 (NumPy's float16 passes are
        each slower than its where)."""
        return (isinstance(a, numpy.ndarray) and a.ndim > 0 and a.dtype.itemsize >= 4  # NumPy arrays (not a
                and isinstance(self.slope, float) and 0 < self.slope <= 1)  # recorded double backward's tensors)

    def forward(self, xp, x):
        self.save_for_backward(x)
        if self._blend(x):        # then max(x, slope x) is it: two passes, one array (same bits,
            y = x * self.slope    # NaN and -0.0 included) instead of a mask, a product and a where
            return xp.maximum(x, y, out=y)
        return xp.where(x > 0, x, x * self.slope)

    def backward(self, xp, gy):
        (x,) = self.saved
        if self._blend(gy):       # gy times max(x > 0, slope): 1 or slope, so the same bits as the
            f = (x > 0).astype(gy.dtype)  # where below; NumPy's where on a random mask is ~4 ns an
            xp.maximum(f, self.slope, out=f)  # element, these four passes ~1 ns
            return (xp.multiply(gy, f, out=f),)
        return (xp.where(x > 0, gy, gy * self.slope),)



class Sigmoid(_Activation):
    name = "sigmoid"

    def forward(self, xp, x):
        if is_graph(xp):
            y = (xp.tanh(x * 0.5) + 1) * 0.5
        else:  # one ufunc pass (scipy.special / cupyx.scipy.special) instead of four
            y = backend.special(xp).expit(x)
        y = y.astype(x.dtype, copy=False)
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        return (gy * y * (1 - y),)


class Tanh(_Activation):
    name = "tanh"

    def forward(self, xp, x):
        y = xp.tanh(x)
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        return (gy * (1 - y * y),)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class GELU(_ParamPointwise):
    name = "gelu"
    gpu_kernels = (ew.gelu_fwd, ew.gelu_bwd)
    bf16_kernel_gpu = True  # tinynet_gelu_fwd/bwd_bf16 (gelu.cu; float32/float64 there too)

    def forward_gpu(self, xp, x):
        if not cuda.supported(x, half=True):
            return self.forward(xp, x)
        self.save_for_backward(x)
        return ew.gelu_fwd(x, self.param)

    def backward_gpu(self, xp, gy):
        x = self.saved[0]
        if not cuda.supported(gy, half=True):
            return self.backward(xp, gy)
        return (ew.gelu_bwd(x, gy if gy.dtype == x.dtype else gy.astype(x.dtype), self.param),)

    @property
    def approximate(self):
        return self.param

    def forward(self, xp, x):
        # the inner value (tanh or the normal CDF) is saved too: backward then needs no
        # second erf pass, the costly part on the CPU
        if self.approximate == "tanh":
            inner = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3))
            y = 0.5 * x * (1 + inner)
        elif xp is numpy and x.dtype in (numpy.float32, numpy.float64):  # one blocked pass, the derivative too
            y, deriv = cpu_gelu(x, self.needs_input_grad[0])
            if self.needs_input_grad[0]:
                self.save_for_backward(x, None, deriv)
            return y
        else:
            inner = 0.5 * (1 + _erf(xp, x * (1 / math.sqrt(2))))
            y = (x * inner).astype(x.dtype, copy=False)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, inner)
        return y

    def backward(self, xp, gy):
        x, inner, deriv = (self.saved + (None, None))[:3]  # the GPU kernel path saves x only
        if deriv is not None and not is_graph(xp):  # the CPU pass saved dy/dx
            return (gy * deriv,)
        if is_graph(xp) or inner is None:  # recompute: a create_graph backward differentiates it
            inner = (xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)) if self.approximate == "tanh"
                     else 0.5 * (1 + _erf(xp, x * (1 / math.sqrt(2)))))
        if self.approximate == "tanh":
            dinner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
            return (gy * (0.5 * (1 + inner) + 0.5 * x * (1 - inner * inner) * dinner),)
        pdf = xp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return (gy * (inner + x * pdf),)



def bias_relu(input, bias):
    """Fused ``relu(input + bias)`` with ``bias`` (C,) broadcast along dim 1 of a
    (N, C, *) input: one kernel forward, one mask kernel + one reduction backward on the GPU.

    Raises:
        ShapeError: ``bias`` is not (C,).
    """
    _check("bias_relu", input)
    if input.ndim < 2 or not isinstance(bias, Tensor) or bias.shape != (input.shape[1],):
        raise ShapeError(f"bias_relu: expected bias of shape ({input.shape[1] if input.ndim > 1 else '?'},) "
                         f"for input {input.shape}, got {getattr(bias, 'shape', type(bias).__name__)}")
    return BiasReLU().apply(input, bias)


def relu(input, inplace=False):
    """Rectified linear unit ``max(x, 0)``; any shape; float and integer tensors (an
    integer result, like PyTorch's, carries no gradient).

    Args:
        inplace (bool): write the result into ``input`` (see :func:`tinynet.ops.inplace`
            for autograd's rules on in-place ops). Default False.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: a bool tensor.
    """
    check_tensor("relu", "input", input)
    if input.array.dtype.kind == "b":
        raise DTypeError("relu: not implemented for bool tensors")
    if inplace:
        return relu_(input)
    return ReLU().apply(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0`` else ``negative_slope * x`` (default slope 0.01); ``inplace``
    writes the result into ``input``."""
    _check("leaky_relu", input)
    slope = check_number("leaky_relu", "negative_slope", negative_slope)
    if inplace:
        return inplace_apply("leaky_relu_", input, lambda x: LeakyReLU(slope).apply(x))
    return LeakyReLU(slope).apply(input)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`; returns ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)


def _to_float(op, input):
    """Integer and bool tensors become the default float dtype (PyTorch's rule for ops
    with a float result)."""
    check_tensor(op, "input", input)
    return input if is_floating(input.array.dtype) or input.array.dtype.kind == "c" else input.to(
        dtypes.get_default_dtype())  # (complex input reaches the op, which refuses it)


def sigmoid(input):
    """Logistic function ``1 / (1 + exp(-x))`` (integer inputs give the default float dtype)."""
    return Sigmoid().apply(_to_float("sigmoid", input))


def tanh(input):
    """Hyperbolic tangent (integer inputs give the default float dtype)."""
    return Tanh().apply(_to_float("tanh", input))


def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``.

    Args:
        approximate: ``"none"`` (exact, erf) or ``"tanh"``
            (``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``).

    Raises:
        ArgumentError: unknown ``approximate``.
    """
    _check("gelu", input)
    check_choice("gelu", "approximate", approximate, ("none", "tanh"))
    return GELU(approximate).apply(input)


def relu_(input):
    """In-place :func:`relu` (autograd's in-place rules: see :mod:`tinynet.ops.inplace`); returns ``input``."""
    return inplace_apply("relu_", input, relu)


def sigmoid_(input):
    """In-place :func:`sigmoid`; returns ``input``."""
    return inplace_apply("sigmoid_", input, sigmoid)


def tanh_(input):
    """In-place :func:`tanh`; returns ``input``."""
    return inplace_apply("tanh_", input, tanh)
