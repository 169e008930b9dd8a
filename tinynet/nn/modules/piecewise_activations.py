"""Piecewise activation layers: ``Hardtanh``, ``ReLU6``, ``Hardswish``, ``Hardsigmoid`` and
``PReLU`` (formulas and the gradients at the kinks: :mod:`tinynet.ops.piecewise_activations`).
Shape: any, output = input.
"""
import numbers
import warnings

from ... import ops
from ...errors import ArgumentError, ArgumentTypeError
from .. import functional as F, init as _init
from .module import Module, Parameter
from .smooth_activations import _Inplace, _real


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` with gradient 1 strictly inside the bounds, else 0.

    Args:
        min_val (float): default -1.0. max_val (float): default 1.0.
        inplace (bool): default False.
        min_value, max_value: PyTorch's deprecated names of the bounds (a warning, then used).

    Raises:
        ArgumentError: ``max_val <= min_val`` (PyTorch asserts it).
        ArgumentTypeError: a bound that is not a number.
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        name = type(self).__name__
        self.min_val, self.max_val = _real(name, "min_val", min_val), _real(name, "max_val", max_val)
        self.inplace = bool(inplace)
        if not self.max_val > self.min_val:
            raise ArgumentError(f"{name}: max_val must be greater than min_val, got min_val={self.min_val}, "
                                f"max_val={self.max_val}")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` (gradient 0 at 0 and 6). Args: inplace (bool, default False)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardswish(_Inplace):
    """``x * relu6(x + 3) / 6`` (MobileNetV3). Args: inplace (bool, default False; not in
    the repr, as in PyTorch)."""
    _fn = staticmethod(F.hardswish)

    def extra_repr(self):
        return ""


class Hardsigmoid(Hardswish):
    """``relu6(x + 3) / 6``. Args: inplace (bool, default False; not in the repr, as in PyTorch)."""
    _fn = staticmethod(F.hardsigmoid)


class PReLU(Module):
    """``x`` for ``x > 0`` else ``a * x`` with learnt slopes ``a``.

    Args:
        num_parameters (int): 1 (one slope shared by all channels, default) or the number
            of channels C (dim 1 of the input).
        init (float): the slopes' initial value. Default 0.25.
        device, dtype: where and in which float dtype the weight is made.

    Attributes:
        weight (Parameter): (num_parameters,).

    Raises:
        ArgumentError: ``num_parameters < 1``. ArgumentTypeError: not an int / a number.
        ShapeError (at call): ``num_parameters`` is neither 1 nor the input's C.
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, numbers.Integral):
            raise ArgumentTypeError(f"PReLU: num_parameters must be an int, got {type(num_parameters).__name__}")
        if num_parameters < 1:
            raise ArgumentError(f"PReLU: num_parameters must be >= 1, got {num_parameters}")
        self.num_parameters, self.init = int(num_parameters), _real("PReLU", "init", init)
        self.weight = Parameter(ops.creation.full((self.num_parameters,), float(init), device=device, dtype=dtype))

    def reset_parameters(self):
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU (see ``F.rrelu``): a slope from U(lower, upper) per negative
    element in training mode, ``(lower + upper) / 2`` in evaluation. Args: lower (1/8),
    upper (1/3), inplace (False). Shape: any.

    Raises:
        ArgumentError: ``lower > upper`` (at forward, as PyTorch).
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")

