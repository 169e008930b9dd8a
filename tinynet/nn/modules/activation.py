"""Activation layers: ``ReLU``, ``Sigmoid``, ``Tanh``, ``LeakyReLU``, ``GELU``, ``Softmax``, ``LogSoftmax``."""
from typing import Any
from .. import functional as F
from .module import Module


class _Activation(Module):
    _fn: Any = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Activation):
    """``max(x, 0)`` elementwise. Shape: any."""
    _fn = staticmethod(F.relu)


class Sigmoid(_Activation):
    """Logistic sigmoid elementwise. Shape: any."""
    _fn = staticmethod(F.sigmoid)


class Tanh(_Activation):
    """Hyperbolic tangent elementwise. Shape: any."""
    _fn = staticmethod(F.tanh)


class LeakyReLU(Module):
    """``x`` if ``x > 0`` else ``negative_slope * x`` (default 0.01). Shape: any."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """Gaussian error linear unit; ``approximate='none'`` (erf) or ``'tanh'``. Shape: any."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """Softmax along ``dim`` (PyTorch's deprecated implicit choice when None). Shape: any; output = input."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log-softmax along ``dim``. Shape: any; output = input."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


# PyTorch's torch.nn.modules.activation holds these too: programs and safe_globals lists name them there
from .attention import MultiheadAttention  # noqa: E402,F401
from .distance import Hardshrink, Softshrink, Threshold  # noqa: E402,F401
from .piecewise_activations import Hardsigmoid, Hardswish, Hardtanh, PReLU, ReLU6, RReLU  # noqa: E402,F401
from .smooth_activations import (CELU, ELU, GLU, SELU, LogSigmoid, Mish, SiLU, Softmax2d, Softmin,  # noqa: E402,F401
                                 Softplus, Softsign, Tanhshrink)
