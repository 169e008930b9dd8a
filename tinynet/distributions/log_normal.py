"""``LogNormal(loc, scale)``: exp(X) for X ~ Normal(loc, scale), a
:class:`TransformedDistribution` of a :class:`Normal` through :class:`ExpTransform`
(PyTorch's ``torch.distributions.LogNormal``).

mean = exp(loc + scale^2/2), mode = exp(loc - scale^2), variance = expm1(scale^2)
exp(2 loc + scale^2), entropy = H(Normal) + loc.
"""
from . import constraints
from ._ops import exp, expm1
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform


class LogNormal(TransformedDistribution):
    """A batch of log-normal distributions.

    Args:
        loc (float or Tensor): mean of log(x). scale (float or Tensor): standard deviation
            of log(x) (> 0).
        validate_args (bool, optional): check the parameters and the values given to ``log_prob``.

    Raises:
        ArgumentError: a scale that is not > 0 (with validation on).
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return exp(self.loc + self.scale.pow(2) / 2)

    @property
    def mode(self):
        return exp(self.loc - self.scale.square())

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return expm1(s2) * exp(2 * self.loc + s2)

    def entropy(self):
        return self.base_dist.entropy() + self.loc


__all__ = ["LogNormal"]
