"""``Bernoulli(probs=None, logits=None)``: 0/1 outcomes with P(1) = probs = sigmoid(logits)
(PyTorch's ``torch.distributions.Bernoulli``).

log p(x) = -softplus(-logits) - (1 - x) logits (the negative binary cross-entropy with logits);
entropy = softplus(logits) - probs logits. Samples come from ``tinynet.bernoulli``.
"""
from ..errors import ArgumentError
from . import constraints
from ._ops import arange, bernoulli, no_grad, sigmoid
from .exp_family import ExponentialFamily
from .utils import _softplus, broadcast_all, lazy_property, probs_to_logits


def _one_of(name, probs, logits):
    """Raise unless exactly one of probs and logits is given."""
    if (probs is None) == (logits is None):
        raise ArgumentError(f"{name}: either `probs` or `logits` must be specified, but not both")


class Bernoulli(ExponentialFamily):
    """A batch of Bernoulli distributions, given by ``probs`` in [0, 1] or ``logits``.

    Args:
        probs (float or Tensor): P(x = 1). logits (float or Tensor): log-odds of it.
        validate_args (bool, optional): check the parameter and the values given to ``log_prob``.

    Raises:
        ArgumentError: both or neither of probs and logits, or a probability outside [0, 1]
            (with validation on).
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of("Bernoulli", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return sigmoid(self.logits)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        p = self.probs
        mode = (p >= 0.5).to(p.dtype)
        return mode.masked_fill(p == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log sigmoid(logits) - (1 - value) logits, PyTorch's arrangement of the binary cross-entropy:
        # the same value where logits is infinite (-inf for an impossible outcome, NaN for 0 * inf)
        return -_softplus(-logits) - (1 - value) * logits

    def entropy(self):
        return _softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return _softplus(x)


__all__ = ["Bernoulli"]
