"""Smooth activation functions: SiLU, Softplus, ELU, SELU, CELU, Mish, LogSigmoid,
Softsign, Tanhshrink, GLU and Softmin, with PyTorch's formulas and gradient conventions.

Formulas (``s(x) = 1 / (1 + e^-x)`` the logistic sigmoid, computed as ``(tanh(x/2) + 1)/2``):

* SiLU / swish (Elfwing et al., 2017, arXiv:1702.03118; Ramachandran et al., 2017):
  ``x * s(x)``; derivative ``s(x) * (1 + x * (1 - s(x)))``.
* Softplus: ``log(1 + e^(beta x)) / beta``, and ``x`` where ``beta x > threshold``;
  derivative ``e^(beta x) / (e^(beta x) + 1)``, and 1 where ``beta x > threshold``.
* ELU (Clevert et al., 2015, arXiv:1511.07289): ``x`` for ``x > 0`` else
  ``alpha (e^x - 1)``; SELU (Klambauer et al., 2017, arXiv:1706.02515) is
  ``scale * elu(x, alpha)`` with PyTorch's fixed alpha 1.6732632423543772 and scale
  1.0507009873554805; CELU (Barron, 2017, arXiv:1704.07483) is ``x`` for ``x > 0`` else
  ``alpha (e^(x/alpha) - 1)``. At ``x = 0`` the derivative is the left one, as in PyTorch:
  ``alpha`` for ELU, ``scale * alpha`` for SELU, 1 for CELU.
* Mish (Misra, 2019, arXiv:1908.08681): ``x tanh(softplus(x))``; derivative
  ``t + x s(x) (1 - t^2)`` with ``t = tanh(softplus(x))``.
* LogSigmoid ``log s(x) = min(x, 0) - log(1 + e^-|x|)``, derivative ``s(-x)``.
* Softsign ``x / (1 + |x|)``, Tanhshrink ``x - tanh(x)`` (composed of other ops).
* GLU (Dauphin et al., 2016, arXiv:1612.08083): ``a * s(b)`` for the halves ``a, b`` of
  ``input`` along ``dim``. Softmin: ``softmax(-x)``.

Every op here is twice differentiable: each derivative is written with functions the
graph namespace has (:mod:`tinynet.ops.graph_xp`) or the function is a composition.
"""
import numbers

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from .autocast import autocast_op
from .activation import sigmoid, softmax, tanh
from .arith import neg
from .inplace import inplace_apply
from .split import chunk
from .unary import Pointwise, abs as _abs
from .util import check_float, check_tensor, dim_index

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(xp, x):
    """The logistic function on arrays or tensors, without overflow."""
    return (xp.tanh(x * 0.5) + 1) * 0.5


def _number(op, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {type(v).__name__}")
    return float(v)


class SiLU(Pointwise):
    name = "silu"

    def f(self, xp, x):
        return x * _sigmoid(xp, x)

    def df(self, xp, x):
        s = _sigmoid(xp, x)
        return s * (1 + x * (1 - s))


class Softplus(Pointwise):
    name = "softplus"

    def __init__(self, beta, threshold):
        self.beta, self.threshold = beta, threshold

    def _bx(self, xp, x):
        """``beta * x`` and the mask where the linear branch applies; the exponent is capped at
        the threshold so the unused branch cannot overflow."""
        bx = x * self.beta
        linear = bx > self.threshold
        return xp.where(linear, xp.zeros_like(bx) + self.threshold, bx), linear

    def f(self, xp, x):
        capped, linear = self._bx(xp, x)
        return xp.where(linear, x, xp.log1p(xp.exp(capped)) / self.beta)

    def df(self, xp, x):
        capped, linear = self._bx(xp, x)
        z = xp.exp(capped)
        return xp.where(linear, xp.ones_like(x), z / (z + 1))


class ELU(Pointwise):
    """``scale * x`` for ``x > 0``, else ``scale * alpha * (exp(input_scale * x) - 1)``:
    ELU, SELU and CELU (PyTorch's ``elu`` kernel)."""
    name = "elu"

    def __init__(self, alpha, scale=1.0, input_scale=1.0, name=None):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        if name is not None:
            self.name = name

    def f(self, xp, x):
        neg_part = xp.where(x > 0, xp.zeros_like(x), x)
        return xp.where(x > 0, x * self.scale,
                        xp.expm1(neg_part * self.input_scale) * (self.scale * self.alpha))

    def df(self, xp, x):
        neg_part = xp.where(x > 0, xp.zeros_like(x), x)
        c = self.scale * self.alpha * self.input_scale
        return xp.where(x > 0, xp.ones_like(x) * self.scale, xp.exp(neg_part * self.input_scale) * c)


def _softplus_stable(xp, x):
    """``log(1 + e^x)`` without overflow: ``max(x, 0) + log1p(e^-|x|)``."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class Mish(Pointwise):
    name = "mish"

    def f(self, xp, x):
        return x * xp.tanh(_softplus_stable(xp, x))

    def df(self, xp, x):
        t = xp.tanh(_softplus_stable(xp, x))
        return t + x * _sigmoid(xp, x) * (1 - t * t)


class LogSigmoid(Pointwise):
    name = "log_sigmoid"

    def f(self, xp, x):
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))

    def df(self, xp, x):
        return _sigmoid(xp, -x)


# ---- public functions -----------------------------------------------------------------
def _inplace_or(op, input, inplace, compute):
    """``compute(input)``, or written into ``input`` (autograd's in-place rules) with ``inplace``."""
    if inplace:
        return inplace_apply(op + "_", input, compute)
    return compute(input)


def silu(input, inplace=False):
    """SiLU (swish): ``x * sigmoid(x)`` elementwise.

    Args:
        input (Tensor): float, any shape.
        inplace (bool): write the result into ``input``. Default False.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
    """
    check_float("silu", "input", input)
    return _inplace_or("silu", input, inplace, lambda t: SiLU().apply(t))


@autocast_op
def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    Args:
        input (Tensor): float, any shape.
        beta (float): default 1. threshold (float): default 20.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        ArgumentTypeError: not a Tensor, or beta/threshold not numbers.
        DTypeError: not floating point.
    """
    check_float("softplus", "input", input)
    return Softplus(_number("softplus", "beta", beta), _number("softplus", "threshold", threshold)).apply(input)


def _elu(op, input, alpha, scale, input_scale, inplace):
    check_float(op, "input", input)
    return _inplace_or(op, input, inplace, lambda t: ELU(alpha, scale, input_scale, op).apply(t))


def elu(input, alpha=1.0, inplace=False):
    """ELU: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``; derivative ``alpha`` at 0.

    Args:
        input (Tensor): float, any shape. alpha (float): default 1.0.
        inplace (bool): write the result into ``input``. Default False.

    Raises:
        ArgumentTypeError: not a Tensor, or alpha not a number. DTypeError: not floating point.
    """
    return _elu("elu", input, _number("elu", "alpha", alpha), 1.0, 1.0, inplace)


def selu(input, inplace=False):
    """SELU: ``scale * elu(x, alpha)`` with alpha = 1.6732632423543772 and
    scale = 1.0507009873554805 (self-normalising networks).

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
    """
    return _elu("selu", input, SELU_ALPHA, SELU_SCALE, 1.0, inplace)


def celu(input, alpha=1.0, inplace=False):
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; derivative 1 at 0.

    Args:
        input (Tensor): float, any shape. alpha (float): nonzero, default 1.0.
        inplace (bool): write the result into ``input``. Default False.

    Raises:
        ArgumentError: ``alpha == 0``. ArgumentTypeError / DTypeError: as :func:`elu`.
    """
    alpha = _number("celu", "alpha", alpha)
    if alpha == 0:
        raise ArgumentError("celu: alpha cannot be 0 (the input is divided by it)")
    return _elu("celu", input, alpha, 1.0, 1.0 / alpha, inplace)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`; returns ``input``."""
    return elu(input, alpha, inplace=True)


def selu_(input):
    """In-place :func:`selu`; returns ``input``."""
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`; returns ``input``."""
    return celu(input, alpha, inplace=True)


def mish(input, inplace=False):
    """Mish: ``x * tanh(softplus(x))`` elementwise.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
    """
    check_float("mish", "input", input)
    return _inplace_or("mish", input, inplace, lambda t: Mish().apply(t))


def logsigmoid(input):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, computed without overflow.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
    """
    check_float("logsigmoid", "input", input)
    return LogSigmoid().apply(input)


def softsign(input):
    """``x / (1 + |x|)`` elementwise (integer inputs give the default float dtype).

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("softsign", "input", input)
    return input / (_abs(input) + 1)


def tanhshrink(input):
    """``x - tanh(x)`` elementwise (integer inputs give the default float dtype).

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("tanhshrink", "input", input)
    return input - tanh(input)


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` where ``a`` and ``b`` are the first and second
    halves of ``input`` along ``dim``.

    Args:
        input (Tensor): float, at least 1-D, with an even size along ``dim``.
        dim (int): the dimension halved. Default -1.

    Returns:
        Tensor of the input's shape with ``dim`` halved.

    Raises:
        ShapeError: a 0-d input or an odd size along ``dim``. IndexOutOfRangeError: bad dim.
        DTypeError: not floating point.
    """
    check_float("glu", "input", input)
    if input.ndim == 0:
        raise ShapeError("glu: does not support scalars (0-d tensors) because halving size must be even")
    d = dim_index("glu", dim, input.ndim)
    if input.shape[d] % 2:
        raise ShapeError(f"glu: halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    a, b = chunk(input, 2, d)
    return a * sigmoid(b)


@autocast_op
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)`` along ``dim``: the elements along it are positive and sum to 1.

    Args:
        input (Tensor): float. dim (int): the dimension (PyTorch's deprecated implicit
            choice when None). dtype: cast the input to it first.

    Raises:
        ArgumentTypeError: not a Tensor. IndexOutOfRangeError: bad dim.
    """
    check_tensor("softmin", "input", input)
    if dtype is not None:
        input = input.to(dtype)
    return softmax(neg(input), dim)

