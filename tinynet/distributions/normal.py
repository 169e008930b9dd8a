"""``Normal(loc, scale)``: the Gaussian N(loc, scale^2) (PyTorch's ``torch.distributions.Normal``).

log p(x) = -(x - loc)^2 / (2 scale^2) - log(scale) - log(2 pi) / 2;
cdf(x) = (1 + erf((x - loc) / (scale sqrt 2))) / 2; icdf(p) = loc + scale sqrt(2) erfinv(2p - 1);
entropy = 1/2 + log(2 pi)/2 + log(scale). ``rsample`` is loc + scale * eps with eps from
``tinynet.randn``, so gradients reach ``loc`` and ``scale``.
"""
import math

from ._ops import erf, erfinv, log, randn
from .distribution import _SymmetricLocScale
from .exp_family import ExponentialFamily

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(_SymmetricLocScale, ExponentialFamily):
    """A batch of normal distributions.

    The constructor, ``expand``, the constraints and mean = mode = loc are the symmetric
    location-scale families' (``distribution._SymmetricLocScale``).

    Args:
        loc (float or Tensor): the mean. scale (float or Tensor): the standard deviation (> 0).
            The two broadcast to the batch shape; numbers become tensors of the default dtype.
        validate_args (bool, optional): check the parameters and the values given to
            ``log_prob``/``cdf``/``icdf``.

    Raises:
        ArgumentError: a parameter outside its constraint (with validation on), or not a
            number/Tensor. ShapeError: loc and scale do not broadcast.

    Example:
        >>> d = tinynet.distributions.Normal(tinynet.tensor([0.0, 1.0]), 2.0)
        >>> tuple(d.batch_shape), tuple(d.sample((5,)).shape)
        ((2,), (5, 2))
        >>> [round(v, 4) for v in d.log_prob(tinynet.tensor([0.0, 0.0])).tolist()]
        [-1.6121, -1.7371]
    """
    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # PyTorch's arrangement (times the reciprocal): the same gradient, NaN included, at scale 0
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * self._icdf_value(value) - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * log(-math.pi / y)


__all__ = ["Normal"]
