"""``Distribution``: the base class of every distribution (PyTorch's
``torch.distributions.Distribution``).

Shapes: a distribution has a ``batch_shape`` (independent, not identically distributed
copies: ``Normal(zeros(3), 1)`` has batch shape (3,)) and an ``event_shape`` (the shape of
one draw: (n,) for an n-dimensional ``MultivariateNormal``). ``sample(sample_shape)``
returns ``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` returns the
broadcast of ``value``'s leading dims with ``batch_shape`` (the event dims consumed).
Shapes are plain tuples (``torch.Size`` is a tuple subclass, so they compare equal).

Validation: with ``validate_args`` on (the default, as PyTorch's under ``__debug__``;
``Distribution.set_default_validate_args(False)`` turns it off everywhere, the
``validate_args`` argument per instance), the constructor checks each parameter against its
``arg_constraints`` entry and ``log_prob``/``cdf``/... check that the value has the event
shape, broadcasts and lies in the ``support``. Failures raise :class:`ArgumentError` (a
``ValueError``, as PyTorch's) or :class:`ShapeError` (also a ``ValueError``) naming the
distribution, the parameter and the constraint.

Randomness: samples are drawn through tinynet's generators (``tinynet.randn``, ``rand``,
``bernoulli``, ``multinomial``, ``poisson``, ``_standard_gamma``), so ``tinynet.manual_seed``
makes them repeatable and one seed gives the same draws on the CPU and the GPU.
"""
import numbers
import warnings

import numpy

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from . import constraints
from ._ops import broadcast_shapes, no_grad, tensor
from .utils import broadcast_all, lazy_property


def _shape(name, shape):
    """``shape`` (a tuple, list or torch.Size-like) as a tuple of ints."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        return (shape,)
    if not isinstance(shape, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                       for s in shape):
        raise ArgumentTypeError(f"{name} must be a tuple of non-negative ints, got {shape!r}")
    return tuple(shape)


class Distribution:
    """The base class of probability distributions.

    Args:
        batch_shape (tuple): the shape of the batch of distributions. Default ().
        event_shape (tuple): the shape of one sample. Default ().
        validate_args (bool or None): check parameters and values (None: the class default,
            True unless :meth:`set_default_validate_args` changed it).

    Subclasses define ``arg_constraints`` (parameter name -> :class:`Constraint`),
    ``support``, and what they can compute of ``sample``/``rsample``, ``log_prob``,
    ``entropy``, ``mean``, ``mode``, ``variance``, ``cdf``, ``icdf`` and ``expand``; the rest
    raise ``NotImplementedError`` as PyTorch's.
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for every distribution made afterwards without an
        explicit ``validate_args``.

        Raises:
            ArgumentError: ``value`` is not True or False (ValueError, as PyTorch's).
        """
        if value not in (True, False):
            raise ArgumentError(f"Distribution.set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = bool(value)

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _shape(f"{type(self).__name__}: batch_shape", batch_shape)
        self._event_shape = _shape(f"{type(self).__name__}: event_shape", event_shape)
        if validate_args is not None:
            if not isinstance(validate_args, (bool, numbers.Integral, numpy.bool_)):
                raise ArgumentTypeError(f"{type(self).__name__}: validate_args must be a bool or None, got "
                                        f"{type(validate_args).__name__}")
            self._validate_args = bool(validate_args)
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{type(self).__name__} does not define arg_constraints: its parameters go unchecked")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # a lazily derived parameter (probs from logits): its source was checked
            value = getattr(self, param)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ArgumentError(
                    f"{type(self).__name__}: expected parameter {param} (Tensor of shape {tuple(value.shape)}) "
                    f"to satisfy the constraint {constraint!r}, but found invalid values: {value}")

    def expand(self, batch_shape, _instance=None):
        """A distribution of batch shape ``batch_shape`` whose parameters are expanded
        (views, no copies) from this one's; the validation setting is kept."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, names):
        """:meth:`expand` for a distribution whose parameters ``names`` have this batch shape
        followed by a per-parameter event part."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _shape(f"{type(self).__name__}.expand: batch_shape", batch_shape)
        n = len(self._batch_shape)
        for name in names:
            if name in self.__dict__:
                value = getattr(self, name)
                setattr(new, name, value.expand(batch_shape + tuple(value.shape[n:])))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> the :class:`Constraint` it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The :class:`Constraint` of this distribution's values."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self):
        """The standard deviation, ``variance.sqrt()``."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, no gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised sample: gradients flow to the parameters."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n):
        """``sample((n,))`` (deprecated in PyTorch)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample((n,))

    def log_prob(self, value):
        """The log of the probability density (or mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution's support, along a new leading dim."""
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def entropy(self):
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self):
        """``exp(entropy())``."""
        return self.entropy().exp()

    def _icdf_value(self, value):
        """``value`` of ``icdf`` as a Tensor (a number becomes one of the parameters' dtype).

        Raises:
            ArgumentTypeError: neither a Tensor nor a real number.
        """
        if isinstance(value, Tensor):
            return value
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, numpy.floating)):
            raise ArgumentTypeError(f"{type(self).__name__}.icdf: value must be a Tensor or a number, got "
                                    f"{type(value).__name__}")
        ref = next((v for v in self.__dict__.values() if isinstance(v, Tensor)), None)
        return tensor(float(value), dtype=getattr(ref, "dtype", None), device=getattr(ref, "device", None))

    def _extended_shape(self, sample_shape=()):
        """``sample_shape + batch_shape + event_shape``."""
        return _shape(f"{type(self).__name__}: sample_shape", sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        """Check that ``value`` is a Tensor of the event shape that broadcasts with the batch
        shape and lies in the support.

        Raises:
            ArgumentError: not a Tensor, or outside the support. ShapeError: wrong event
                shape, or not broadcastable.
        """
        name = type(self).__name__
        if not isinstance(value, Tensor):
            raise ArgumentError(f"{name}: the value argument must be a Tensor, got {type(value).__name__}")
        event_dim = len(self._event_shape)
        if tuple(value.shape[value.ndim - event_dim:]) != self._event_shape or value.ndim < event_dim:
            raise ShapeError(f"{name}: the right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {self._event_shape}")
        try:
            broadcast_shapes(tuple(value.shape), self._batch_shape + self._event_shape)
        except ShapeError:
            raise ShapeError(f"{name}: value of shape {tuple(value.shape)} is not broadcastable with "
                             f"batch_shape+event_shape {self._batch_shape + self._event_shape}") from None
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{name} does not define support: values go unchecked")
            return
        if not bool(support.check(value).all()):
            raise ArgumentError(f"{name}: expected value argument (Tensor of shape {tuple(value.shape)}) to be "
                                f"within the support ({support!r}) of the distribution, but found invalid "
                                f"values: {value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = {k: self.__dict__[k] for k in names}
        args = ", ".join(f"{k}: {v.item() if v.numel() == 1 else tuple(v.shape)}" for k, v in shown.items())
        return f"{type(self).__name__}({args})"


class _SymmetricAboutLoc(Distribution):
    """A distribution symmetric and unimodal about its ``loc`` (Normal, Laplace,
    MultivariateNormal): mean = mode = loc."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class _SymmetricLocScale(_SymmetricAboutLoc):
    """A location-scale family symmetric about ``loc`` (Normal, Laplace): real ``loc`` and
    positive ``scale`` broadcast to the batch shape (numbers become 0-d tensors, so numbers
    give batch shape ()), and ``expand`` views both."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(_SymmetricLocScale, batch_shape, _instance, ("loc", "scale"))


__all__ = ["Distribution"]
