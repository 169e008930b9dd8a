"""Invertible transforms y = f(x) with log |det J_f(x)| (PyTorch's
``torch.distributions.transforms``): what :class:`TransformedDistribution` pushes a base
distribution through.

``ExpTransform`` (y = e^x, log|J| = x), ``AffineTransform(loc, scale, event_dim=0)``
(y = loc + scale x, log|J| = log|scale| summed over ``event_dim`` dims), ``SigmoidTransform``
(log|J| = -softplus(-x) - softplus(x)), ``TanhTransform`` (log|J| = 2 (log 2 - x -
softplus(-2x)), the stable form of log(1 - tanh^2 x)), ``PowerTransform(exponent)``
(y = x^p on x > 0, log|J| = log|p y / x|), ``ComposeTransform(parts)`` (applied in order;
the log-Jacobians add up, each summed over the event dims it does not see), ``identity_transform``
and ``t.inv`` (the inverse of any transform). ``cache_size=1`` remembers the last (x, y) pair,
so ``t.inv(t(x))`` returns ``x`` itself.
"""
import math
import numbers

from .. import dtypes
from ..errors import ArgumentError, ArgumentTypeError
from ..tensor import Tensor
from . import constraints
from ._ops import abs, broadcast_shapes, clamp, exp, full, log, log1p, sigmoid, tanh
from .transform_base import ComposeTransform, Transform, identity_transform
from .utils import _softplus, _sum_rightmost


class _IncreasingBijection(Transform):
    """A parameter-free increasing bijection (exp, sigmoid, tanh): every instance of one such
    class is the same map, so instances compare equal."""
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_IncreasingBijection):
    """y = exp(x): real to positive."""
    codomain = constraints.positive

    def _call(self, x):
        return exp(x)

    def _inverse(self, y):
        return log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on positive x."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = object.__hash__

    @property
    def sign(self):
        return self.exponent.sign() if isinstance(self.exponent, Tensor) else (1 if self.exponent > 0 else -1)

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return log(abs(self.exponent * y / x))

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ())))

    inverse_shape = forward_shape


class SigmoidTransform(_IncreasingBijection):
    """y = sigmoid(x): real to the unit interval (clipped to [tiny, 1 - eps] so the inverse
    stays finite)."""
    codomain = constraints.unit_interval

    def _call(self, x):
        fi = dtypes.finfo(x.dtype)
        return clamp(sigmoid(x), min=fi.tiny, max=1 - fi.eps)

    def _inverse(self, y):
        fi = dtypes.finfo(y.dtype)
        y = y.clamp(min=fi.tiny, max=1 - fi.eps)
        return log(y) - log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class TanhTransform(_IncreasingBijection):
    """y = tanh(x): real to (-1, 1)."""
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return tanh(x)

    def _inverse(self, y):
        return 0.5 * (log1p(y) - log1p(-y))

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


def _same(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())
    return False


class AffineTransform(Transform):
    """y = loc + scale * x (numbers or tensors); ``event_dim`` rightmost dims form one event.

    Raises:
        ArgumentTypeError: loc or scale neither a number nor a Tensor.
    """
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        for name, v in (("loc", loc), ("scale", scale)):
            if isinstance(v, bool) or not isinstance(v, (numbers.Number, Tensor)):
                raise ArgumentTypeError(f"AffineTransform: {name} must be a number or a Tensor, got "
                                        f"{type(v).__name__}")
        if isinstance(event_dim, bool) or not isinstance(event_dim, int) or event_dim < 0:
            raise ArgumentError(f"AffineTransform: event_dim must be an int >= 0, got {event_dim!r}")
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return isinstance(other, AffineTransform) and _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            value = math.log(math.fabs(self.scale)) if self.scale != 0 else -math.inf
            result = full(shape, value, dtype=x.dtype, device=x.device)
        else:  # a tensor scale broadcasts with x: every element of an event counts
            result = log(abs(self.scale))
            result = result.expand(broadcast_shapes(shape, tuple(result.shape)))
        return _sum_rightmost(result, self._event_dim)

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


__all__ = ["AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
           "TanhTransform", "Transform", "identity_transform"]
