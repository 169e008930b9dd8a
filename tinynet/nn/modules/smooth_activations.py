"""Smooth activation layers: ``SiLU``, ``Softplus``, ``ELU``, ``SELU``, ``CELU``, ``Mish``,
``LogSigmoid``, ``Softsign``, ``Tanhshrink``, ``GLU``, ``Softmin`` and ``Softmax2d``.

Each is the function of the same name in :mod:`tinynet.nn.functional` (formulas and
gradient conventions: :mod:`tinynet.ops.smooth_activations`). Shape: any, output = input
(GLU halves ``dim``).
"""
from typing import Any
import numbers

from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...tensor import Tensor
from .. import functional as F
from .module import Module


def _real(layer, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{layer}: {name} must be a number, got {type(v).__name__}")
    return v


class _Inplace(Module):
    """An activation with PyTorch's ``inplace`` flag (the result is written into the input)."""
    _fn: Any = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = bool(inplace)

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class SiLU(_Inplace):
    """SiLU (swish): ``x * sigmoid(x)``. Args: inplace (bool, default False)."""
    _fn = staticmethod(F.silu)


class SELU(_Inplace):
    """SELU: ``scale * elu(x, alpha)`` with PyTorch's fixed alpha and scale (1.6733, 1.0507).
    Args: inplace (bool, default False)."""
    _fn = staticmethod(F.selu)


class Mish(_Inplace):
    """Mish: ``x * tanh(softplus(x))``. Args: inplace (bool, default False)."""
    _fn = staticmethod(F.mish)


class ELU(Module):
    """ELU: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha (float): default 1.0. inplace (bool): default False.

    Raises:
        ArgumentTypeError: ``alpha`` is not a number.
    """
    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = _real(type(self).__name__, "alpha", alpha), bool(inplace)

    def forward(self, input):
        return type(self)._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha (float): nonzero, default 1.0. inplace (bool): default False.

    Raises:
        ArgumentError: ``alpha == 0``. ArgumentTypeError: ``alpha`` is not a number.
    """
    _fn = staticmethod(F.celu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha, inplace)
        if alpha == 0:
            raise ArgumentError("CELU: alpha cannot be 0")


class Softplus(Module):
    """Softplus: ``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    Args:
        beta (float): default 1.0. threshold (float): default 20.0.

    Raises:
        ArgumentTypeError: a setting that is not a number.
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = _real("Softplus", "beta", beta)
        self.threshold = _real("Softplus", "threshold", threshold)

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed without overflow."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


class GLU(Module):
    """Gated linear unit ``a * sigmoid(b)``, ``a`` and ``b`` the halves of the input along ``dim``.

    Args:
        dim (int): the dimension halved. Default -1.

    Shape:
        ``(*, 2M, *)`` -> ``(*, M, *)``.

    Raises:
        ArgumentTypeError: ``dim`` is not an int (at construction).
        ShapeError: an odd size along ``dim`` (at call).
    """

    def __init__(self, dim=-1):
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
            raise ArgumentTypeError(f"GLU: dim must be an int, got {type(dim).__name__}")
        self.dim = int(dim)

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``.

    Args:
        dim (int, optional): the dimension summing to 1 (PyTorch's deprecated implicit
            choice when None).
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels at every spatial position.

    Shape:
        (N, C, H, W) or (C, H, W) -> the same; softmax along dim -3.

    Raises:
        ShapeError: an input that is not 3-D or 4-D.
    """

    def forward(self, input):
        if not isinstance(input, Tensor):
            raise ArgumentTypeError(f"Softmax2d: expected a Tensor input, got {type(input).__name__}")
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: expected input to be 3-D or 4-D, got {input.ndim}-D "
                             f"(shape {tuple(input.shape)})")
        return F.softmax(input, -3)
