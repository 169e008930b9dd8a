"""``Gamma(concentration, rate)``: density rate^a x^(a-1) e^(-rate x) / Gamma(a) on x >= 0,
a = concentration (PyTorch's ``torch.distributions.Gamma``).

log p(x) = a log(rate) + (a - 1) log(x) - rate x - lgamma(a);
entropy = a - log(rate) + lgamma(a) + (1 - a) digamma(a); cdf(x) = P(a, rate x), the
regularised lower incomplete gamma function. ``rsample`` is ``_standard_gamma(a) / rate``:
the Gamma(a, 1) draw carries the implicit reparameterisation gradient of Figurnov et al.
(2018) (:mod:`tinynet.ops.special_gamma`), the division the gradient in ``rate``.
"""
from .. import dtypes
from . import constraints
from ._ops import _standard_gamma, digamma, igamma, lgamma, log, xlogy
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Gamma(ExponentialFamily):
    """A batch of Gamma distributions.

    Args:
        concentration (float or Tensor): the shape a (> 0). rate (float or Tensor): the rate
            (> 0), 1 / scale. The two broadcast.
        validate_args (bool, optional): check the parameters and the values given to
            ``log_prob``/``cdf``.

    Raises:
        ArgumentError: a parameter that is not > 0 (with validation on). ShapeError: the
            shapes do not broadcast.
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # no draw below the smallest normal number (as PyTorch's), the gradient left as it is
        return x + (x.detach().clamp(min=dtypes.finfo(x.dtype).tiny) - x.detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, r = self.concentration, self.rate
        return xlogy(a, r) + xlogy(a - 1, value) - r * value - lgamma(a)

    def entropy(self):
        a = self.concentration
        return a - log(self.rate) + lgamma(a) + (1.0 - a) * digamma(a)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, x = broadcast_all(self.concentration, self.rate * value)
        return igamma(a, x)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * log(-y.reciprocal())


__all__ = ["Gamma"]
