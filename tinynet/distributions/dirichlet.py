"""``Dirichlet(concentration)``: density Gamma(a0) / prod Gamma(a_i) * prod x_i^(a_i - 1) on
the simplex, a0 = sum a_i (PyTorch's ``torch.distributions.Dirichlet``).

entropy = sum lgamma(a_i) - lgamma(a0) - (K - a0) digamma(a0) - sum (a_i - 1) digamma(a_i).
``rsample`` normalises independent Gamma(a_i, 1) draws, g / sum(g), each with the implicit
reparameterisation gradient (Figurnov et al. 2018): the gradient of the composition is the
reparameterisation gradient of the Dirichlet draw.
"""
import math

from .. import dtypes
from ..errors import ShapeError
from ..tensor import Tensor
from . import constraints
from ._ops import _standard_gamma, digamma, lgamma, one_hot, where, xlogy, zeros
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Dirichlet(ExponentialFamily):
    """A batch of Dirichlet distributions over K categories (event shape (K,)).

    Args:
        concentration (Tensor): (..., K), every entry > 0.
        validate_args (bool, optional): check the parameter and the values given to ``log_prob``.

    Raises:
        ShapeError: a 0-d concentration. ArgumentError: an entry that is not > 0 (with
            validation on).
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, Tensor):
            (concentration,) = broadcast_all(concentration)
        if concentration.ndim < 1:
            raise ShapeError(f"Dirichlet: `concentration` parameter must be at least one-dimensional, got shape "
                             f"{tuple(concentration.shape)}")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = _standard_gamma(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(a - 1)^+ normalised; where every a_i < 1 the first vertex e_0; NaN where the
        normalisation is 0/0 (every a_i <= 1, not all < 1: no single mode) or NaN (as PyTorch's)."""
        a = self.concentration
        am1 = (a - 1).clamp(min=0)
        total = am1.sum(-1, keepdim=True)
        corner = (a < 1).all(-1, keepdim=True)
        safe = where(total > 0, total, 1.0)
        first = one_hot(zeros(tuple(a.shape[:-1]), dtype=dtypes.int64, device=a.device), a.shape[-1]).to(a.dtype)
        return where(corner, first, where(total > 0, am1 / safe, math.nan))

    @property
    def variance(self):
        a = self.concentration
        a0 = a.sum(-1, keepdim=True)
        return a * (a0 - a) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return lgamma(a).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((a - 1.0) * digamma(a)).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))


__all__ = ["Dirichlet"]
