"""``Exponential(rate)``: density rate e^(-rate x) on x >= 0 (PyTorch's
``torch.distributions.Exponential``).

log p(x) = log(rate) - rate x; cdf = 1 - e^(-rate x); icdf(p) = -log(1 - p) / rate;
entropy = 1 - log(rate). ``rsample`` is -log(1 - u) / rate with u from ``tinynet.rand``
(inverse-CDF sampling), so the gradient reaches ``rate``.
"""
from . import constraints
from ._ops import exp, log, log1p, rand, zeros_like
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Exponential(ExponentialFamily):
    """A batch of exponential distributions.

    Args:
        rate (float or Tensor): the rate (> 0), 1 / mean.
        validate_args (bool, optional): check the parameter and the values given to
            ``log_prob``/``cdf``.

    Raises:
        ArgumentError: a rate that is not > 0 (with validation on).
    """
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.rate.dtype, device=self.rate.device)
        return -log1p(-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value):
        value = self._icdf_value(value)
        return -log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -log(-x)


__all__ = ["Exponential"]
