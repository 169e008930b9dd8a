"""``Uniform(low, high)``: the uniform distribution on [low, high) (PyTorch's
``torch.distributions.Uniform``).

log p(x) = -log(high - low) inside, -inf outside; cdf(x) = clamp((x - low)/(high - low), 0, 1);
entropy = log(high - low). ``rsample`` is low + u (high - low), u from ``tinynet.rand``.
"""
import math

from ..errors import ArgumentError
from . import constraints
from ._ops import log, rand, where
from .distribution import Distribution
from .utils import broadcast_all


class Uniform(Distribution):
    """A batch of uniform distributions on ``[low, high)``.

    Args:
        low (float or Tensor): lower bound (inclusive). high (float or Tensor): upper bound
            (exclusive); the two broadcast.
        validate_args (bool, optional): check ``low < high`` and the values given to
            ``log_prob``/``cdf``.

    Raises:
        ArgumentError: ``low >= high`` somewhere (with validation on). ShapeError: the shapes
            do not broadcast.
    """
    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ArgumentError(f"Uniform: expected low < high everywhere (Uniform is not defined when "
                                f"low >= high), got low={self.low} and high={self.high}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        # log(1 or 0) - log(width), PyTorch's arrangement: NaN (not -inf) where the width is NaN or <= 0
        return where(inside, 0.0, -math.inf).to(self.low.dtype) - log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return self._icdf_value(value) * (self.high - self.low) + self.low

    def entropy(self):
        return log(self.high - self.low)


__all__ = ["Uniform"]
