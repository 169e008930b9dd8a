"""Special functions, elementwise (PyTorch's ``torch.special`` family; ``tinynet.special``
will re-export from here): ``xlogy``, ``logit`` and ``sinc``, composed of tinynet's
differentiable ops (so their gradients come from those ops).

Integer inputs are computed in the default float dtype, as PyTorch does.

* ``xlogy(x, y) = x log(y)``, and 0 where ``x = 0`` unless ``y`` is NaN (``scipy.special.xlogy``).
* ``logit(p) = log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` first when ``eps`` is given.
* ``sinc(x) = sin(pi x) / (pi x)``, the normalised sinc, 1 at ``x = 0``.
"""
import math

from ..errors import ArgumentTypeError
from ..tensor import Tensor
from .arith import mul, sub
from .compare import isinf, isnan
from .creation import full_like
from .division import div
from .select import where
from .unary import clamp, log, sin
from .util import check_operands, float_tensor


def xlogy(input, other):
    """Elementwise ``input * log(other)``, and 0 where ``input`` is 0 unless ``other`` is NaN
    (as ``scipy.special.xlogy``; the gradients are PyTorch's). Either may be a Python
    number; the two broadcast; integers give the default float.

    Raises:
        ArgumentTypeError: neither is a Tensor, or the other is neither a Tensor nor a number.
        ShapeError: the shapes do not broadcast.
    """
    check_operands("xlogy", input, other)
    x = (float_tensor("xlogy", input, real=True) if isinstance(input, Tensor)
         else full_like(float_tensor("xlogy", other, real=True), input))
    y = float_tensor("xlogy", other, real=True) if isinstance(other, Tensor) else full_like(x, other)
    # where input is 0, a log(other) that is not finite (other <= 0 or inf) would make 0 * log
    # NaN: there log(1) stands in, so the value is 0 and d/d input is log(other) elsewhere, as PyTorch's
    bad = (x == 0) & ~isnan(y) & ((y <= 0) | isinf(y))
    return mul(x, log(where(bad, 1.0, y)))


def logit(input, eps=None):
    """Elementwise ``log(p / (1 - p))`` of ``p = input``, clamped to ``[eps, 1 - eps]`` first
    when ``eps`` is given (gradient 0 outside); integers give the default float.

    Raises:
        ArgumentTypeError: not a Tensor, or ``eps`` not a number.
    """
    p = float_tensor("logit", input, real=True)
    if eps is not None:
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise ArgumentTypeError(f"logit: eps must be a number or None, got {type(eps).__name__}")
        p = clamp(p, eps, 1 - eps)
    return log(div(p, sub(1, p)))


def sinc(input):
    """Elementwise normalised sinc: ``sin(pi x) / (pi x)``, and 1 at ``x = 0`` (gradient 0
    there); integers give the default float.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    x = float_tensor("sinc", input, real=True)
    zero = x == 0
    safe = where(zero, 1.0, mul(x, math.pi))
    return where(zero, 1.0, div(sin(safe), safe))
