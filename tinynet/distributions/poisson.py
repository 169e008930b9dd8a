"""``Poisson(rate)``: counts k = 0, 1, ... with P(k) = rate^k e^-rate / k! (PyTorch's
``torch.distributions.Poisson``).

log p(k) = k log(rate) - rate - lgamma(k + 1) (``xlogy``, so rate 0 gives log p(0) = 0).
Samples come from ``tinynet.poisson`` (NumPy's generator). No entropy, as PyTorch's.
"""
from . import constraints
from ._ops import exp, lgamma, log, no_grad, poisson, xlogy
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Poisson(ExponentialFamily):
    """A batch of Poisson distributions.

    Args:
        rate (float or Tensor): the rate (>= 0), the mean.
        validate_args (bool, optional): check the parameter and the values given to ``log_prob``.

    Raises:
        ArgumentError: a negative rate (with validation on).
    """
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)

    def entropy(self):
        raise NotImplementedError("Poisson does not implement entropy (as PyTorch's)")

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)


__all__ = ["Poisson"]
