"""``TransformedDistribution(base_distribution, transforms)``: the distribution of
y = f_n(...f_1(x)) for x from the base (PyTorch's
``torch.distributions.TransformedDistribution``).

log p(y) = log p_base(x) - sum_i log |det J_{f_i}(x_{i-1})|, the inverse transforms applied
from the last to the first (change of variables). ``cdf``/``icdf`` go through the
transforms' inverses with the CDF reflected where a transform decreases (``sign`` -1).
"""
from ..errors import ArgumentError, ArgumentTypeError
from . import constraints
from ._ops import no_grad
from .distribution import Distribution, _shape
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import _sum_rightmost


class TransformedDistribution(Distribution):
    """``base_distribution`` pushed through ``transforms`` (one Transform or a list).

    Args:
        base_distribution (Distribution): the distribution of x.
        transforms (Transform or list of Transform): applied in order.
        validate_args (bool, optional): check the values given to ``log_prob``/``cdf``.

    Raises:
        ArgumentTypeError: not a Distribution, or transforms that are not Transforms.
        ArgumentError: a base of fewer dims than the transforms' domain needs.
    """
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if not isinstance(base_distribution, Distribution):
            raise ArgumentTypeError(f"{type(self).__name__}: base_distribution must be a Distribution, got "
                                    f"{type(base_distribution).__name__}")
        if isinstance(transforms, Transform):
            transforms = [transforms]
        if not isinstance(transforms, (list, tuple)) or not all(isinstance(t, Transform) for t in transforms):
            raise ArgumentTypeError(f"{type(self).__name__}: transforms must be a Transform or a list of them, "
                                    f"got {transforms!r}")
        self.transforms = list(transforms)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ArgumentError(f"{type(self).__name__}: base_distribution needs at least {chain.domain.event_dim} "
                                f"dimensions, but got {len(base_shape)}")
        forward_shape = chain.forward_shape(base_shape)
        expanded = chain.inverse_shape(forward_shape)
        if base_shape != expanded:  # the transforms' parameters widen the batch
            base_distribution = base_distribution.expand(expanded[:len(expanded) - base_event_dim])
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = _shape(f"{type(self).__name__}.expand: batch_shape", batch_shape)
        shape = batch_shape + self._event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self._event_shape) > support.event_dim:
            support = constraints.independent(support, len(self._event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self._event_shape)
        total, y = 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            total = total - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return total + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(self.base_dist._icdf_value(value)))
        for t in self.transforms:
            value = t(value)
        return value


__all__ = ["TransformedDistribution"]
