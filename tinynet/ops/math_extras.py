"""Math helpers PyTorch scripts use, composed of tinynet's differentiable ops (so their
gradients come from those ops): ``deg2rad``, ``rad2deg``, ``xlogy``, ``logit``, ``sinc``,
``frac``, ``nansum``, ``nanmean``, ``aminmax``, ``var_mean`` and ``std_mean``.

Integer inputs of the elementwise functions are computed in the default float dtype, as
PyTorch does (``frac`` refuses them, as PyTorch does).
"""
import collections
import math

from .. import dtypes
from ..dtypes import is_floating
from ..autograd.node import Op
from ..errors import ArgumentTypeError, DTypeError
from ..tensor import Tensor
from .arith import mul, sub
from .compare import isinf, isnan
from .creation import full_like
from .division import div
from .reduction import amax, amin, sum as _sum
from .select import where
from .stats import std, var
from .unary import clamp, log, sin, trunc
from .util import check_tensor

AminmaxResult = collections.namedtuple("AminmaxResult", ["min", "max"])  # torch.return_types.aminmax


def _floating(op, input):
    """``input`` (a Tensor), in the default float dtype's family when it is an integer or bool tensor."""
    check_tensor(op, "input", input)
    return input if is_floating(input.array.dtype) else input.to(dtypes.float_for(input.array.dtype))


def deg2rad(input):
    """Elementwise ``input * pi / 180`` (degrees to radians); integers give the default float.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return mul(_floating("deg2rad", input), math.pi / 180)


def rad2deg(input):
    """Elementwise ``input * 180 / pi`` (radians to degrees); integers give the default float.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return mul(_floating("rad2deg", input), 180 / math.pi)


def xlogy(input, other):
    """Elementwise ``input * log(other)``, and 0 where ``input`` is 0 unless ``other`` is NaN
    (as ``scipy.special.xlogy``; the gradients are PyTorch's). Either may be a Python
    number; the two broadcast; integers give the default float.

    Raises:
        ArgumentTypeError: neither is a Tensor, or the other is neither a Tensor nor a number.
        ShapeError: the shapes do not broadcast.
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise ArgumentTypeError(f"xlogy: expected at least one Tensor, got {type(input).__name__} and "
                                f"{type(other).__name__}")
    for name, v in (("input", input), ("other", other)):
        if not isinstance(v, (Tensor, int, float)) or isinstance(v, bool):
            raise ArgumentTypeError(f"xlogy: {name} must be a Tensor or a number, got {type(v).__name__}")
    x = _floating("xlogy", input) if isinstance(input, Tensor) else full_like(_floating("xlogy", other), input)
    y = _floating("xlogy", other) if isinstance(other, Tensor) else full_like(x, other)
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
    p = _floating("logit", input)
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
    x = _floating("sinc", input)
    zero = x == 0
    safe = where(zero, 1.0, mul(x, math.pi))
    return where(zero, 1.0, div(sin(safe), safe))


def frac(input):
    """Elementwise fractional part ``input - trunc(input)`` (sign of ``input``; gradient 1).

    Raises:
        ArgumentTypeError: not a Tensor.
        DTypeError: an integer or bool tensor (PyTorch: not implemented for them).
    """
    check_tensor("frac", "input", input)
    if not is_floating(input.array.dtype):
        raise DTypeError(f"frac: not implemented for {input.dtype} tensors")
    return sub(input, trunc(input))


class _NanToZero(Op):
    """``input`` with its NaNs replaced by 0; the gradient is ``grad * (input is not NaN)``, a
    product (as PyTorch's nansum backward), so an infinite incoming gradient (nanmean of an
    all-NaN row divides by a count of 0) gives NaN at the NaNs, not the 0 a select would give."""
    name = "nansum"
    twice_differentiable = True

    def forward(self, xp, a):
        keep = ~xp.isnan(a)
        self.save_for_backward(keep.astype(a.dtype))
        return xp.where(keep, a, xp.zeros((), a.dtype))

    def backward(self, xp, gy):
        return (gy * self.saved[0],)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """:func:`~tinynet.sum` with NaNs counted as 0 (gradient ``grad * (input is not NaN)``: 0 at
    them for a finite incoming gradient, NaN for an infinite one, as PyTorch).

    Raises:
        ArgumentTypeError: not a Tensor. IndexOutOfRangeError: a dim out of range.
    """
    check_tensor("nansum", "input", input)
    x = _NanToZero().apply(input) if is_floating(input.array.dtype) else input
    return _sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values over ``dim`` (NaN where all are NaN).

    Raises:
        ArgumentTypeError: not a Tensor.
        DTypeError: a non-float tensor (as PyTorch).
    """
    check_tensor("nanmean", "input", input)
    if not is_floating(input.array.dtype):
        raise DTypeError(f"nanmean: expected input to have floating point dtype but got {input.dtype}")
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype, "nanmean")
    count = _sum(~isnan(input), dim, keepdim, dtype=input.dtype if dtype is None else dtype)
    return div(nansum(input, dim, keepdim, dtype=dtype), count)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of ``input`` over ``dim`` (all elements when None), as a named tuple
    with fields ``min`` and ``max`` (PyTorch's ``torch.return_types.aminmax``).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: an empty input or dimension (no identity, as PyTorch).
    """
    check_tensor("aminmax", "input", input)
    how = () if dim is None else dim
    return AminmaxResult(amin(input, how, keepdim), amax(input, how, keepdim))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(...), mean(...))`` over ``dim`` with :func:`~tinynet.var`'s arguments (a plain tuple)."""
    from .reduction import mean
    if isinstance(dim, bool):  # var_mean(x, False): the legacy unbiased flag
        dim, unbiased = None, dim
    return (var(input, dim, unbiased, keepdim, correction=correction),
            mean(input, () if dim is None else dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(...), mean(...))`` over ``dim`` with :func:`~tinynet.std`'s arguments (a plain tuple)."""
    from .reduction import mean
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return (std(input, dim, unbiased, keepdim, correction=correction),
            mean(input, () if dim is None else dim, keepdim))
