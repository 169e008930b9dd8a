"""``Categorical(probs=None, logits=None)``: one of K categories, with probabilities
``probs`` (normalised over the last dim) or ``softmax(logits)`` (PyTorch's
``torch.distributions.Categorical``).

log p(k) = logits[k] - logsumexp(logits); entropy = -sum p log p (logits clamped at the
dtype's most negative finite value, so 0 log 0 counts 0). Samples come from
``tinynet.multinomial`` with replacement.
"""
import math

from .. import dtypes
from ..errors import ShapeError
from ..tensor import Tensor
from . import constraints
from ._ops import arange, full, multinomial, no_grad, softmax
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, probs_to_logits


def _param(name, what, value):
    if not isinstance(value, Tensor):
        (value,) = broadcast_all(value)
    if value.ndim < 1:
        raise ShapeError(f"{name}: `{what}` parameter must be at least one-dimensional, got shape {tuple(value.shape)}")
    return value


class Categorical(Distribution):
    """A batch of categorical distributions over ``{0, ..., K-1}``, K = the size of the
    last dimension of ``probs`` or ``logits``.

    Args:
        probs (Tensor): non-negative weights (..., K), normalised to sum to 1.
        logits (Tensor): unnormalised log-probabilities (..., K).
        validate_args (bool, optional): check the parameter and the values given to ``log_prob``.

    Raises:
        ArgumentError: both or neither given, or weights that are negative / rows that do not
            normalise (with validation on). ShapeError: a 0-d parameter.
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name = type(self).__name__
        _one_of(name, probs, logits)
        if probs is not None:
            probs = _param(name, "probs", probs)
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = _param(name, "logits", logits)
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Categorical, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return softmax(self.logits, dim=-1)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self._param.dtype, device=self._param.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = math.prod(shape[:len(shape) - len(self._batch_shape)])
        with no_grad():
            if n == 0 or 0 in self._batch_shape:
                return full(shape, 0, dtype=dtypes.int64, device=self._param.device)
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = multinomial(probs_2d, n, True).T
            return draws.reshape(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_all(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=dtypes.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=dtypes.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values


__all__ = ["Categorical"]
