"""``Laplace(loc, scale)``: density exp(-|x - loc| / scale) / (2 scale) (PyTorch's
``torch.distributions.Laplace``).

cdf(x) = 1/2 - sign(x - loc) expm1(-|x - loc| / scale) / 2;
icdf(p) = loc - scale sign(p - 1/2) log(1 - 2 |p - 1/2|); entropy = 1 + log(2 scale).
``rsample`` is the inverse CDF at u uniform on [eps - 1, 1) (eps: the dtype's machine
epsilon, so log(0) cannot occur), u from ``tinynet.rand``.
"""
from .. import dtypes
from ._ops import abs, expm1, log, log1p, rand, sign
from .distribution import _SymmetricLocScale


class Laplace(_SymmetricLocScale):
    """A batch of Laplace distributions.

    The constructor, ``expand``, the constraints and mean = mode = loc are the symmetric
    location-scale families' (``distribution._SymmetricLocScale``).

    Args:
        loc (float or Tensor): the location (mean). scale (float or Tensor): the scale (> 0).
        validate_args (bool, optional): check the parameters and the values given to
            ``log_prob``/``cdf``.

    Raises:
        ArgumentError: a scale that is not > 0 (with validation on). ShapeError: the shapes
            do not broadcast.
    """

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = dtypes.finfo(self.loc.dtype).eps
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * sign(u) * log1p(-abs(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * sign(z) * expm1(-abs(z) / self.scale)

    def icdf(self, value):
        term = self._icdf_value(value) - 0.5
        return self.loc - self.scale * sign(term) * log1p(-2 * abs(term))

    def entropy(self):
        return 1 + log(2 * self.scale)


__all__ = ["Laplace"]
