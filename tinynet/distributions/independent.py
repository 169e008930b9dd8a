"""``Independent(base_distribution, reinterpreted_batch_ndims)``: reinterprets the rightmost
batch dims of a distribution as event dims (PyTorch's ``torch.distributions.Independent``):
``Independent(Normal(zeros(3), 1), 1)`` is one 3-dimensional diagonal Gaussian, whose
``log_prob`` sums the three coordinates' log-densities (and ``entropy`` their entropies).
"""
from ..errors import ArgumentError, ArgumentTypeError
from . import constraints
from .distribution import Distribution, _shape
from .utils import _sum_rightmost


class Independent(Distribution):
    """``base_distribution`` with ``reinterpreted_batch_ndims`` batch dims moved to the event.

    Args:
        base_distribution (Distribution): the distribution to wrap.
        reinterpreted_batch_ndims (int): how many rightmost batch dims become event dims.
        validate_args (bool, optional): check the values given to ``log_prob``.

    Raises:
        ArgumentTypeError: the base is not a Distribution or the count not an int.
        ArgumentError: more dims than the base's batch has (ValueError, as PyTorch's).
    """
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if not isinstance(base_distribution, Distribution):
            raise ArgumentTypeError(f"Independent: base_distribution must be a Distribution, got "
                                    f"{type(base_distribution).__name__}")
        n = reinterpreted_batch_ndims
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ArgumentTypeError(f"Independent: reinterpreted_batch_ndims must be an int >= 0, got {n!r}")
        if n > len(base_distribution.batch_shape):
            raise ArgumentError("Independent: expected reinterpreted_batch_ndims <= len(base_distribution."
                                f"batch_shape), actual {n} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        cut = len(shape) - (n + len(base_distribution.event_shape))
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = _shape(f"{type(self).__name__}.expand: batch_shape", batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape + self._event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        support = self.base_dist.support
        n = self.reinterpreted_batch_ndims
        return constraints.independent(support, n) if n else support

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


__all__ = ["Independent"]
