"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``: a :class:`Categorical`
whose draws are one-hot vectors of length K (PyTorch's
``torch.distributions.OneHotCategorical``). The straight-through variant's ``rsample`` is
``sample + probs - probs.detach()`` (Bengio et al., 2013): the values of a sample, the
gradient of the probabilities.
"""
from . import constraints
from ._ops import eye, no_grad, one_hot
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """One-hot draws from ``Categorical(probs, logits)``; event shape (K,).

    Args:
        probs (Tensor): non-negative weights (..., K). logits (Tensor): log-weights (..., K).
        validate_args (bool, optional): check the parameter and the values given to ``log_prob``.

    Raises:
        ArgumentError / ShapeError: as :class:`Categorical`.
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        # the inner Categorical checks its parameter under the default setting, whatever validate_args says
        # (as PyTorch's, which refuses NaN logits also with validate_args=False)
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        with no_grad():
            indices = self._categorical.sample(sample_shape)
            return one_hot(indices, self._event_shape[0]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + self._batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """:class:`OneHotCategorical` with a straight-through ``rsample``: one-hot values whose
    gradient is that of ``probs``."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        return draws + (probs - probs.detach())


__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
