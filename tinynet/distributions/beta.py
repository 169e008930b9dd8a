"""``Beta(concentration1, concentration0)``: density x^(a-1) (1-x)^(b-1) / B(a, b) on [0, 1],
a = concentration1, b = concentration0 (PyTorch's ``torch.distributions.Beta``).

Built, as PyTorch's, on a two-category :class:`Dirichlet` over (x, 1 - x): ``log_prob``,
``entropy``, ``mode`` and ``rsample`` (g1 / (g1 + g0) of two implicitly reparameterised Gamma
draws) come from it. mean = a / (a + b), variance = ab / ((a + b)^2 (a + b + 1)).
"""
from . import constraints
from ._ops import lgamma, stack
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Beta(ExponentialFamily):
    """A batch of Beta distributions.

    Args:
        concentration1 (float or Tensor): a (> 0). concentration0 (float or Tensor): b (> 0).
        validate_args (bool, optional): check the parameters and the values given to ``log_prob``.

    Raises:
        ArgumentError: a parameter that is not > 0 (with validation on). ShapeError: the
            shapes do not broadcast.
    """
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)


__all__ = ["Beta"]
