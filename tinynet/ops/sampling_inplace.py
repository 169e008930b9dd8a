"""The Tensor's in-place samplers: ``bernoulli_``, ``random_``, ``exponential_``, ``cauchy_``,
``geometric_`` and ``log_normal_`` (with ``uniform_``/``normal_`` of :mod:`.inplace`, PyTorch's
"in-place random sampling"), and the ``bernoulli``/``multinomial`` methods.

Each draws on the host from a :class:`tinynet.Generator` (as :mod:`.sampling` does: one seed,
the same values on every device) by inverting the distribution's CDF at uniform draws
``u`` in [0, 1): exponential ``-log(1 - u) / lambd``, Cauchy ``median + sigma tan(pi (u -
1/2))``, geometric ``ceil(log(1 - u) / log(1 - p))`` (trials up to the first success, >= 1),
log-normal ``exp(mean + std z)`` for a standard normal ``z``. The old values get no
gradient (the tensor is overwritten, as :func:`~tinynet.Tensor.fill_`).
"""
import numpy

from .. import dtypes
from ..errors import ArgumentError, DTypeError
from ..random import host_generator
from ..tensor import Tensor
from . import sampling
from .inplace import _fill, check_inplace
from .sampling import _host
from .util import check_int, check_number, check_tensor

_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _draw(op, self, generator, values):
    """Overwrite ``self`` with ``values(g)`` (host float64 draws from generator ``g``) in its dtype."""
    check_inplace(op, self)
    g = host_generator(generator, op)
    return _fill(op, self, lambda: _host(self.device, numpy.asarray(values(g)).astype(self.array.dtype)))


def _floating(op, self):
    check_tensor(op, "self", self)
    if not dtypes.is_floating(self.array.dtype):
        raise DTypeError(f"{op}: a continuous distribution needs a floating-point tensor, got {self.dtype}")


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number, or a tensor of probabilities
    broadcasting to ``self``); returns self.

    Raises:
        ArgumentError: a probability outside [0, 1].
    """
    check_tensor("bernoulli_", "self", self)
    if isinstance(p, Tensor):
        probs = numpy.broadcast_to(p.numpy(force=True).astype(numpy.float64), self.shape)
    else:
        probs = check_number("bernoulli_", "p", p)
    if numpy.any((numpy.asarray(probs) < 0) | (numpy.asarray(probs) > 1) | numpy.isnan(probs)):
        raise ArgumentError(f"bernoulli_: expects p to be in [0, 1], got "
                            f"{p if not isinstance(p, Tensor) else 'a tensor with values outside'}")
    return _draw("bernoulli_", self, generator, lambda g: g.random(self.shape) < probs)


def random_(self, from_=None, to=None, *, generator=None):
    """Fill with integers drawn uniformly from ``[from_, to - 1]``; ``random_(to)`` draws from
    ``[0, to - 1]``, and without ``to`` the top is the largest integer the dtype holds exactly
    (``2**24`` for float32, the type's maximum for integers). Returns self.

    Raises:
        ArgumentError: ``from_ >= to``.
    """
    check_tensor("random_", "self", self)
    if to is None and from_ is not None:  # random_(to), PyTorch's one-argument form
        from_, to = 0, from_
    lo = check_int("random_", "from", 0 if from_ is None else from_)
    dt = self.array.dtype
    if to is None:
        top = (2 ** _MANTISSA[dt.name] if dt.name in _MANTISSA else 1 if dt.kind == "b" else
               int(numpy.iinfo(dt).max))
        hi = top + 1
    else:
        hi = check_int("random_", "to", to)
    if lo >= hi:
        raise ArgumentError(f"random_: expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    return _draw("random_", self, generator, lambda g: g.integers(lo, hi, self.shape))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of the exponential distribution of rate ``lambd``; returns self.

    Raises:
        ArgumentError: ``lambd`` <= 0. DTypeError: an integer tensor.
    """
    _floating("exponential_", self)
    rate = check_number("exponential_", "lambd", lambd)
    if not rate > 0:
        raise ArgumentError(f"exponential_: expects lambda > 0.0, but found lambda={rate:g}")
    return _draw("exponential_", self, generator, lambda g: -numpy.log1p(-g.random(self.shape)) / rate)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy samples of location ``median`` and scale ``sigma``; returns self.

    Raises:
        ArgumentError: ``sigma`` <= 0. DTypeError: an integer tensor.
    """
    _floating("cauchy_", self)
    m, s = check_number("cauchy_", "median", median), check_number("cauchy_", "sigma", sigma)
    if not s > 0:
        raise ArgumentError(f"cauchy_: expects sigma > 0.0, but found sigma={s:g}")
    return _draw("cauchy_", self, generator, lambda g: m + s * numpy.tan(numpy.pi * (g.random(self.shape) - 0.5)))


def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(``p``) trials up to and including the first success
    (1, 2, ...); integer tensors too. Returns self.

    Raises:
        ArgumentError: ``p`` outside (0, 1).
    """
    check_tensor("geometric_", "self", self)
    q = check_number("geometric_", "p", p)
    if not 0 < q < 1:
        raise ArgumentError(f"geometric_: expects p to be in (0, 1), but got p={q:g}")
    return _draw("geometric_", self, generator,
                 lambda g: numpy.maximum(numpy.ceil(numpy.log1p(-g.random(self.shape)) / numpy.log1p(-q)), 1))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with ``exp(X)``, ``X`` normal of ``mean`` and ``std``; returns self.

    Raises:
        ArgumentError: ``std`` <= 0. DTypeError: an integer tensor.
    """
    _floating("log_normal_", self)
    m, s = check_number("log_normal_", "mean", mean), check_number("log_normal_", "std", std)
    if not s > 0:
        raise ArgumentError(f"log_normal_: expects std > 0.0, but found std={s:g}")
    return _draw("log_normal_", self, generator, lambda g: numpy.exp(m + s * g.standard_normal(self.shape)))


METHODS = {"bernoulli_": bernoulli_, "random_": random_, "exponential_": exponential_, "cauchy_": cauchy_,
           "geometric_": geometric_, "log_normal_": log_normal_, "bernoulli": sampling.bernoulli,
           "multinomial": sampling.multinomial}
