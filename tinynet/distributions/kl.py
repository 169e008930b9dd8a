"""``kl_divergence(p, q)`` = E_p[log p(x) - log q(x)] and its registry ``register_kl``
(PyTorch's ``torch.distributions.kl``).

The implementation for a pair of types is looked up among the registered pairs whose types
are base classes of (type(p), type(q)): the most specific one by method resolution order,
p's type first (a ``RuntimeWarning`` names the pairs when the q-first order would pick
another, as PyTorch's). No match raises ``NotImplementedError``.

Closed forms registered here (batch shapes broadcast; +inf where q has no mass where p has):
Normal, Bernoulli, Categorical, OneHotCategorical, Uniform, Beta, Gamma, Dirichlet,
Exponential, Laplace, Poisson, MultivariateNormal, Independent (the bases' KL summed over the
reinterpreted dims) and TransformedDistribution (the bases' KL, for equal transforms), each
with itself. The formulas are the textbook ones (e.g. Gil, Alajaji & Linder, "Renyi
divergence measures for commonly used univariate continuous distributions", Information
Sciences 2013, for the continuous families; the Gaussian one from the Cholesky factors).
"""
import math
import warnings

from ..errors import ArgumentTypeError, ShapeError
from ._ops import broadcast_shapes, digamma, lgamma, log, solve_triangular, where
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _softplus, _sum_rightmost

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> function(p, q)
_KL_MEMOIZE: dict = {}   # the dispatch's answers, cleared by register_kl


def register_kl(type_p, type_q):
    """A decorator registering ``fn(p, q)`` as the KL divergence of a pair of types::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q): ...

    Raises:
        ArgumentTypeError: a type that is not a Distribution subclass.
    """
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(t, type) or not issubclass(t, Distribution):
            raise ArgumentTypeError(f"register_kl: expected {name} to be a subclass of Distribution, got {t!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    left = min(matches, key=lambda m: (mro_p.index(m[0]), mro_q.index(m[1])))
    right = min(matches, key=lambda m: (mro_q.index(m[1]), mro_p.index(m[0])))
    if left != right:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
                      f"({left[0].__name__}, {right[1].__name__})", RuntimeWarning)
    return _KL_REGISTRY[left]


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the broadcast batch shapes.

    Raises:
        ArgumentTypeError: p or q is not a Distribution.
        NotImplementedError: no implementation for the pair of types (as PyTorch's).
    """
    for name, d in (("p", p), ("q", q)):
        if not isinstance(d, Distribution):
            raise ArgumentTypeError(f"kl_divergence: {name} must be a Distribution, got {type(d).__name__}")
    key = type(p), type(q)
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fn = _KL_MEMOIZE[key]
    if fn is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    return fn(p, q)


def _inf_where(mask, value):
    return where(mask, math.inf, value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, 0.0, _inf_where(q.probs == 0, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = log((q.high - q.low) / (p.high - p.low))
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    t1 = lgamma(a2) + lgamma(b2) + lgamma(s1)
    t2 = lgamma(a1) + lgamma(b1) + lgamma(s2)
    return t1 - t2 + (a1 - a2) * digamma(a1) + (b1 - b2) * digamma(b1) + (s2 - s1) * digamma(s1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a1, r1, a2, r2 = p.concentration, p.rate, q.concentration, q.rate
    return a2 * log(r1 / r2) + lgamma(a2) - lgamma(a1) + (a1 - a2) * digamma(a1) + (r2 - r1) * (a1 / r1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    sa, sb = a.sum(-1), b.sum(-1)
    t1 = lgamma(sa) - lgamma(sb)
    t2 = (lgamma(a) - lgamma(b)).sum(-1)
    return t1 - t2 + ((a - b) * (digamma(a) - digamma(sa).unsqueeze(-1))).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - log(ratio)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -log(scale_ratio) + diff / q.scale + scale_ratio * (-diff / p.scale).exp() - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (log(p.rate) - log(q.rate)) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ShapeError("kl_divergence: KL-divergence between two Multivariate Normals with different event "
                         f"shapes cannot be computed, got {p.event_shape} and {q.event_shape}")
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = log(lq.diagonal(dim1=-2, dim2=-1)).sum(-1) - log(lp.diagonal(dim1=-2, dim2=-1)).sum(-1)
    n = p.event_shape[0]
    batch = broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2]))
    # trace(Sigma_q^-1 Sigma_p) = |L_q^-1 L_p|_F^2
    term2 = solve_triangular(lq.expand(batch + (n, n)), lp.expand(batch + (n, n)), upper=False)
    term2 = term2.pow(2).reshape(batch + (-1,)).sum(-1)
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence: Independent distributions with different "
                                  "reinterpreted_batch_ndims")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different event shapes")
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


__all__ = ["kl_divergence", "register_kl"]
