"""Property-based fuzzing of ``tinynet.distributions`` against ``torch.distributions`` (hypothesis).

The rows of :data:`DISTS` go through tests/test_fuzz_ops.py's two checks (each input in a
random memory layout, float32 and float64): where PyTorch accepts the inputs the values agree
and so do the gradients of ``sum(out * r)``; where PyTorch refuses them tinynet raises a typed
error; float64 gradients agree with finite differences. Each family's ``log_prob`` gets values
inside its support and, in some cases, outside it (NaN, inf, negatives, fractions where
integers belong), and parameters that are sometimes outside their constraint, with
``validate_args`` on (PyTorch's ``ValueError`` becomes a typed tinynet error) and off (the
formula's value, NaN or -inf included, must be PyTorch's). The ``.moments`` rows stack mean,
mode, variance and entropy; ``kl.*`` rows are registered ``kl_divergence`` pairs.

Sampling is not compared: tinynet draws from NumPy's PCG64 and PyTorch from its own
generator (docs/distributions.md), so no seed gives both the same draw. Instead
``test_rsample_gradients_match_pytorch`` takes tinynet's reparameterised draw ``x`` and checks
that its gradient is PyTorch's reparameterisation gradient *at that draw*: for a univariate
family dx/dtheta = -(dF(x; theta)/dtheta) / f(x; theta) (implicit reparameterisation, Figurnov
et al. 2018), computed with PyTorch's ``cdf`` and ``log_prob``; for Gamma, PyTorch's own
``_standard_gamma_grad``; for MultivariateNormal, loc + L eps with eps = L^-1 (x - loc).
"""
import math

import numpy
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tinynet

from helpers import as_numpy
from test_fuzz_ops import FUZZ, Case, check_finite_differences, check_forward_and_gradients

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.fuzz

NAN, INF = math.nan, math.inf
# values that break each kind of parameter or value, swapped in for a random part of an array
SPOILERS = {"real": [NAN, INF, -INF], "positive": [0.0, -1.0, NAN], "unit": [-0.5, 1.5, NAN],
            "nonnegative": [-1.0, -0.1, NAN], "boolean": [0.5, 2.0, -1.0], "count": [1.5, -1.0, 0.5],
            "simplex": [-0.2, 0.7, NAN], "interval": [-INF, INF, NAN]}
DISCRETE = ("boolean", "count")  # supports whose values are held fixed, not differentiated


def _fill(rng, shape, kind):
    """Random values of ``kind``, float64: a parameter's domain or a distribution's support."""
    if kind == "real":
        return rng.standard_normal(shape) * 1.5
    if kind == "positive":
        return rng.uniform(0.4, 2.5, shape)
    if kind == "unit":
        return rng.uniform(0.02, 0.98, shape)
    if kind == "nonnegative":  # exact zeros too: the support's edge
        return numpy.where(rng.random(shape) < 0.15, 0.0, rng.uniform(0.0, 3.0, shape))
    if kind == "boolean":
        return rng.integers(0, 2, shape).astype(numpy.float64)
    if kind == "count":
        return rng.integers(0, 6, shape).astype(numpy.float64)
    raise AssertionError(kind)


def _inside(a, kind):
    """Whether every entry of ``a`` lies strictly inside ``kind`` (where finite differences work)."""
    a = numpy.asarray(a, dtype=numpy.float64)
    inside = {"real": numpy.isfinite(a), "positive": (a > 0) & (a < INF), "nonnegative": (a > 0) & (a < INF),
              "unit": (a > 0) & (a < 1), "boolean": (a == 0) | (a == 1), "count": (a >= 0) & (a % 1 == 0),
              "simplex": (a > 0) & (numpy.abs(a.sum(-1, keepdims=True) - 1) < 1e-9)}[kind]
    return bool(inside.all())


@st.composite
def arrays_of(draw, shape, kind, spoil_chance=4, salt=0, nan=True):
    """An array of ``kind``; one case in ``spoil_chance`` has some entries swapped for values
    outside the kind (out of support, or an invalid parameter; NaN among them with ``nan``).
    ``salt`` (the input's number) keeps two inputs drawn with one seed apart (a value equal to
    Uniform's low is a kink)."""
    rng = numpy.random.default_rng((draw(st.integers(0, 2**16)), salt))
    a = _fill(rng, shape, kind)
    if a.size and spoil_chance and draw(st.integers(0, spoil_chance - 1)) == 0:
        mask = rng.random(shape) < 0.4
        a = numpy.where(mask, rng.choice([v for v in SPOILERS[kind] if nan or v == v], shape), a)
    return a


def _batch_shapes(draw, n, max_dims=2, min_side=0):
    return draw(hnp.mutually_broadcastable_shapes(num_shapes=n, max_dims=max_dims, min_side=min_side,
                                                  max_side=3)).input_shapes


@st.composite
def dist_case(draw, params, value=None, extra=None, spoil=True, nan=True):
    """Parameters of the kinds ``params`` (with ``spoil``, sometimes outside them) and (unless
    None) a value of the support ``value``, sometimes outside it (NaN among the bad values with
    ``nan``), shapes broadcasting; ``validate_args`` on or off; ``extra`` more keyword strategies."""
    kinds = list(params) + ([value] if value else [])
    shapes = _batch_shapes(draw, len(kinds))
    arrays = [draw(arrays_of(s, k, spoil_chance=(6 if spoil else None) if i < len(params) else 3, salt=i, nan=nan))
              for i, (s, k) in enumerate(zip(shapes, kinds))]
    kwargs = {"validate_args": draw(st.booleans())}
    kwargs.update({k: draw(v) for k, v in (extra or {}).items()})
    return Case(arrays, kwargs, fixed=[len(params)] if value in DISCRETE else (),
                smooth=all(_inside(a, k) for a, k in zip(arrays, kinds)))


@st.composite
def event_case(draw, value=None, n_params=1, k_min=1, spoil=True, min_side=0):
    """Parameters with a trailing event dim K (Categorical, Dirichlet, MultivariateNormal's loc)
    and a value: ``"index"`` (int64 category numbers, K and -1 out of range), ``"one_hot"``,
    ``"simplex"`` or ``"real"`` vectors (..., K)."""
    # PyTorch's OneHotCategorical raises on an empty batch (its constraint check reshapes 0 elements to
    # (0, -1)): empty batches are left out there
    shapes = _batch_shapes(draw, n_params + (value is not None), min_side=max(min_side, int(value == "one_hot")))
    k = draw(st.integers(k_min, 4))
    rng = numpy.random.default_rng(draw(st.integers(0, 2**16)))
    arrays = [draw(arrays_of(s + (k,), "positive", spoil_chance=6 if spoil else None, salt=i))
              for i, s in enumerate(shapes[:n_params])]
    spoil = spoil and draw(st.integers(0, 3)) == 0
    if value == "index":
        v = rng.integers(0, k, shapes[-1])
        arrays.append(numpy.where(rng.random(v.shape) < 0.3, rng.choice([k, -1], v.shape), v) if spoil else v)
    elif value == "one_hot":
        v = numpy.eye(k)[rng.integers(0, k, shapes[-1])]
        arrays.append(v + (rng.random(v.shape) < 0.3) * 0.5 if spoil else v)
    elif value == "simplex":
        v = rng.uniform(0.05, 1.0, shapes[-1] + (k,))
        v = v / v.sum(-1, keepdims=True)
        arrays.append(numpy.where(rng.random(v.shape) < 0.3, rng.choice(SPOILERS["simplex"], v.shape), v) if spoil
                      else v)
    elif value == "real":
        arrays.append(draw(arrays_of(shapes[-1] + (k,), "real", spoil_chance=5)))
    smooth = all(_inside(a, "positive") for a in arrays[:n_params]) and not (spoil and value in ("simplex", "real"))
    return Case(arrays, {"validate_args": draw(st.booleans())}, fixed=[n_params] if value == "one_hot" else (),
                smooth=smooth)


@st.composite
def mvn_case(draw, value=True, pair=False):
    """MultivariateNormal: loc (..., n), a raw matrix A (..., n, n) made into the parameter in
    the call, and a value; the parameter kind and whether A is made positive-definite drawn."""
    n = draw(st.integers(1, 3))
    # PyTorch's _batch_mahalanobis divides by the batch size (ZeroDivisionError on an empty batch);
    # tinynet returns the empty result: empty batches are left out
    shapes = _batch_shapes(draw, 4 if pair else 3, min_side=1)
    rng = numpy.random.default_rng(draw(st.integers(0, 2**16)))
    arrays = [rng.standard_normal(shapes[0] + (n,)), rng.standard_normal(shapes[1] + (n, n))]
    if pair:
        arrays += [rng.standard_normal(shapes[2] + (n,)), rng.standard_normal(shapes[3] + (n, n))]
    elif value:
        arrays.append(draw(arrays_of(shapes[2] + (n,), "real", spoil_chance=5)))
    valid = draw(st.sampled_from([True, True, True, False]))
    return Case(arrays, {"param": draw(st.sampled_from(["covariance_matrix", "precision_matrix", "scale_tril"])),
                         "valid": valid, "validate_args": draw(st.booleans())},
                smooth=valid and _inside(arrays[-1], "real"))


def _matrix(m, a, param, valid):
    """The MultivariateNormal parameter made of a raw matrix ``a``: a positive-definite
    ``a a^T + n I`` (or, not ``valid``, the indefinite ``a + a^T``), or a lower-triangular factor
    with a positive diagonal (not ``valid``: a diagonal of any sign)."""
    n = a.shape[-1]
    eye = m.eye(n, dtype=a.dtype, device=a.device)
    if param == "scale_tril":
        return a.tril(-1) + eye * (a.exp() if valid else a)
    return a @ a.mT + n * eye if valid else a + a.mT


def _mvn(m, loc, a, param, valid, validate_args=None):
    return m.distributions.MultivariateNormal(loc, **{param: _matrix(m, a, param, valid)},
                                              validate_args=validate_args)


def _dist(m, name, *params, **kwargs):
    if name == "Uniform":  # low and a width: high = low + width
        return m.distributions.Uniform(params[0], params[0] + params[1], **kwargs)
    return getattr(m.distributions, name)(*params, **kwargs)


def _moments(m, d, entropy=True):
    """mean, mode (not Uniform's: NaN, as PyTorch's), variance and (``entropy``) entropy, stacked."""
    mode = [] if isinstance(d, (tinynet.distributions.Uniform, torch.distributions.Uniform)) else [d.mode]
    return m.stack([d.mean] + mode + [d.variance] + ([d.entropy()] if entropy else []))


# name -> (parameter kinds, support kind, has entropy, cdf, icdf)
UNIVARIATE = {
    "Normal": (("real", "positive"), "real", True, True, True),
    "Laplace": (("real", "positive"), "real", True, True, True),
    "Uniform": (("real", "positive"), "real", True, True, True),
    "Exponential": (("positive",), "nonnegative", True, True, True),
    "Gamma": (("positive", "positive"), "nonnegative", True, True, False),
    "Beta": (("positive", "positive"), "unit", True, False, False),
    "LogNormal": (("real", "positive"), "positive", True, True, True),
    "Poisson": (("positive",), "count", False, False, False),  # no entropy in either library
    "Bernoulli": (("unit",), "boolean", True, False, False),
}
_TRANSFORMS = {"exp": ("positive", lambda m: [m.distributions.ExpTransform()]),
               "affine_sigmoid": ("unit", lambda m: [m.distributions.AffineTransform(0.5, 2.0),
                                                     m.distributions.SigmoidTransform()]),
               "tanh": ("unit", lambda m: [m.distributions.TanhTransform()]),
               "affine": ("real", lambda m: [m.distributions.AffineTransform(-1.0, 0.5)])}

DISTS = {}
for _name, (_params, _support, _entropy, _cdf, _icdf) in UNIVARIATE.items():
    _n = len(_params)
    DISTS[f"{_name}.log_prob"] = (dist_case(_params, _support), lambda m, *a, _name=_name, _n=_n, **k: _dist(
        m, _name, *a[:_n], **k).log_prob(a[_n]), False)
    if _cdf:  # Gamma's is gammainc, whose NaN handling differs (docs/fft_special.md): no NaN there
        DISTS[f"{_name}.cdf"] = (dist_case(_params, _support, nan=_name != "Gamma"),
                                 lambda m, *a, _name=_name, _n=_n, **k: _dist(
                                     m, _name, *(a[:_n] if _name != "Gamma" else (a[0].detach(), a[1])), **k).cdf(
                                     a[_n]), False)
    if _icdf:
        DISTS[f"{_name}.icdf"] = (dist_case(_params, "unit"), lambda m, *a, _name=_name, _n=_n, **k: _dist(
            m, _name, *a[:_n], **k).icdf(a[_n]), False)
    DISTS[f"{_name}.moments"] = (dist_case(_params), lambda m, *a, _name=_name, _e=_entropy, **k: _moments(
        m, _dist(m, _name, *a, **k), _e), False)
# Gamma's cdf: the concentration is detached above, for PyTorch has no gradient of igamma in it (tinynet has
# one, docs/fft_special.md "Where tinynet differs"); the rate and the value are differentiated.

DISTS.update({
    "Bernoulli.logits.log_prob": (dist_case(("real",), "boolean"), lambda m, p, v, **k: m.distributions.Bernoulli(
        logits=p, **k).log_prob(v), False),
    "Categorical.log_prob": (event_case("index"), lambda m, p, v, **k: m.distributions.Categorical(
        p, **k).log_prob(v), False),
    "Categorical.logits.entropy": (event_case(), lambda m, p, **k: m.distributions.Categorical(
        logits=p.log() * 3, **k).entropy(), False),
    "OneHotCategorical.log_prob": (event_case("one_hot"), lambda m, p, v, **k: m.distributions.OneHotCategorical(
        logits=p, **k).log_prob(v), False),
    "Dirichlet.log_prob": (event_case("simplex", k_min=2), lambda m, a, v, **k: m.distributions.Dirichlet(
        a, **k).log_prob(v), False),
    "Dirichlet.moments": (event_case(), lambda m, a, **k: (lambda d: m.cat(
        [d.mean, d.variance, d.entropy().unsqueeze(-1)], -1))(m.distributions.Dirichlet(a, **k)), False),
    "MultivariateNormal.log_prob": (mvn_case(), lambda m, loc, a, v, **k: _mvn(m, loc, a, **k).log_prob(v), False),
    "MultivariateNormal.moments": (mvn_case(value=False), lambda m, loc, a, **k: (lambda d: m.cat(
        [d.variance, d.entropy().unsqueeze(-1)], -1))(_mvn(m, loc, a, **k)), False),
    "Independent.log_prob": (dist_case(("real", "positive"), "real", {"n": st.integers(0, 2)}),
                             lambda m, loc, s, v, n, **k: (lambda d: m.distributions.Independent(
                                 d, min(n, len(d.batch_shape)), **k).log_prob(v))(m.distributions.Normal(loc, s)),
                             False),
    "TransformedDistribution.log_prob": (
        dist_case(("real", "positive"), "unit", {"t": st.sampled_from(sorted(_TRANSFORMS))}),
        lambda m, loc, s, v, t, **k: m.distributions.TransformedDistribution(
            m.distributions.Normal(loc, s), _TRANSFORMS[t][1](m), **k).log_prob(
            v if _TRANSFORMS[t][0] != "real" else v * 4 - 2), False),
})


# ---- kl_divergence of registered pairs: both distributions' parameters valid, batches broadcasting ----
@st.composite
def kl_case(draw, kinds, event=False, same=False):
    """Valid parameters of two distributions of ``kinds``; with ``event`` one more trailing dim of
    one size for all (an Independent's reinterpreted dim); with ``same`` one batch shape for all."""
    shapes = _batch_shapes(draw, 1 if same else 2 * len(kinds))
    shapes = shapes * (2 * len(kinds)) if same else shapes
    k = (draw(st.integers(1, 3)),) if event else ()
    return Case([draw(arrays_of(s + k, kind, spoil_chance=None, salt=i))
                 for i, (s, kind) in enumerate(zip(shapes, list(kinds) * 2))])


@st.composite
def kl_event_case(draw):
    shapes, k = _batch_shapes(draw, 2), draw(st.integers(1, 4))
    return Case([draw(arrays_of(s + (k,), "positive", spoil_chance=None, salt=i)) for i, s in enumerate(shapes)])


def _kl(m, name, *a):
    half = len(a) // 2
    return m.distributions.kl_divergence(_dist(m, name, *a[:half]), _dist(m, name, *a[half:]))


for _name in ("Normal", "Gamma", "Beta", "Exponential", "Laplace", "Poisson", "Uniform", "Bernoulli"):
    # PyTorch's Bernoulli KL masks with unbroadcast tensors and raises IndexError for batch shapes that differ
    # but broadcast (tinynet broadcasts them): one shape there
    DISTS[f"kl.{_name}"] = (kl_case(UNIVARIATE[_name][0], same=_name == "Bernoulli"),
                            lambda m, *a, _name=_name: _kl(m, _name, *a), False)
DISTS.update({
    "kl.Dirichlet": (kl_event_case(), lambda m, a, b: m.distributions.kl_divergence(
        m.distributions.Dirichlet(a), m.distributions.Dirichlet(b)), False),
    "kl.Categorical": (kl_event_case(), lambda m, a, b: m.distributions.kl_divergence(
        m.distributions.Categorical(a), m.distributions.Categorical(logits=b)), False),
    "kl.MultivariateNormal": (mvn_case(pair=True), lambda m, l1, a1, l2, a2, param, **k: m.distributions.kl_divergence(
        _mvn(m, l1, a1, param, True), _mvn(m, l2, a2, "scale_tril", True)), False),
    "kl.Independent": (kl_case(("real", "positive"), event=True), lambda m, l1, s1, l2, s2: m.distributions.
                       kl_divergence(*(m.distributions.Independent(m.distributions.Normal(loc, s), 1)
                                       for loc, s in ((l1, s1), (l2, s2)))), False),
})


@pytest.mark.parametrize("name", sorted(DISTS))
@FUZZ
@given(data=st.data())
def test_distribution_matches_pytorch(name, device, data):
    check_forward_and_gradients(DISTS, name, device, data)


@pytest.mark.parametrize("name", sorted(DISTS))
@FUZZ
@given(data=st.data())
def test_distribution_gradients_match_finite_differences(name, device, data):
    check_finite_differences(DISTS, name, device, data, validate_args=False)  # a nudged value may leave the support


# ---- rsample: tinynet's draw, and PyTorch's reparameterisation gradient at that draw ----------
def _implicit(d, x):
    """``x`` with the gradient -(dF/dtheta) / f of a univariate draw (value unchanged)."""
    cdf = d.cdf(x)
    return x - (cdf - cdf.detach()) / d.log_prob(x).exp().detach()


def _gamma_reference(d, x):
    """PyTorch's Gamma gradient: _standard_gamma_grad of the standard draw, divided by the rate."""
    a, rate = d.concentration, d.rate
    std = (x * rate).detach()
    return (std + (a - a.detach()) * torch._standard_gamma_grad(a.detach().expand_as(std), std)) / rate


def _mvn_reference(d, x):
    L = d._unbroadcasted_scale_tril
    eps = torch.linalg.solve_triangular(L.detach(), (x - d.loc.detach()).unsqueeze(-1), upper=False)
    return d.loc + (L @ eps).squeeze(-1)


# name -> (parameter cases, the distribution of (lib, *params), PyTorch's reference at a draw)
RSAMPLE = {name: (dist_case(UNIVARIATE[name][0], spoil=False), lambda m, *a, name=name, **k: _dist(m, name, *a),
                  _implicit) for name in ("Normal", "Laplace", "Uniform", "Exponential", "LogNormal")}
RSAMPLE.update({
    "Gamma": (dist_case(("positive", "positive"), spoil=False), lambda m, a, r, **k: m.distributions.Gamma(a, r),
              _gamma_reference),
    "MultivariateNormal": (mvn_case(value=False), lambda m, loc, a, param, **k: _mvn(m, loc, a, param, True),
                           _mvn_reference),
    # the straight-through draw's gradient is that of the probabilities, whatever the draw
    "OneHotCategoricalStraightThrough": (
        event_case(spoil=False, min_side=1), lambda m, p, **k: m.distributions.OneHotCategoricalStraightThrough(p),
        lambda d, x: x + (d.probs - d.probs.detach())),
    "Independent": (dist_case(("real", "positive"), spoil=False), lambda m, loc, s, **k: m.distributions.Independent(
        m.distributions.Normal(loc, s), min(1, loc.ndim, s.ndim)), lambda d, x: _implicit(d.base_dist, x)),
    # Beta and Dirichlet are left out: tinynet differentiates normalised Gamma draws and PyTorch uses
    # _dirichlet_grad, two unbiased gradients that differ draw by draw (docs/distributions.md, "Where
    # tinynet differs"); Beta's and Dirichlet's gradients come from the Gamma one checked here.
})
RSAMPLE_TOL = {"float32": (2e-3, 2e-4), "float64": (1e-7, 1e-9)}  # float32: the reference divides by a density


@pytest.mark.parametrize("name", sorted(RSAMPLE))
@FUZZ
@given(data=st.data())
def test_rsample_gradients_match_pytorch(name, device, data):
    cases, build, reference = RSAMPLE[name]
    case = data.draw(cases, label="case")
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    sample_shape = data.draw(st.sampled_from([(), (2,), (3, 1)]), label="sample_shape")
    params = [a.astype(dtype) for a in case.arrays]
    ours = [tinynet.tensor(a, device=device, requires_grad=True) for a in params]
    theirs = [torch.tensor(a, requires_grad=True) for a in params]
    tinynet.manual_seed(data.draw(st.integers(0, 2**16), label="seed"))
    x = build(tinynet, *ours, **case.kwargs).rsample(sample_shape)
    d = build(torch, *theirs, **case.kwargs)
    assert tuple(x.shape) == tuple(d.rsample(sample_shape).shape) and x.dtype == numpy.dtype(dtype)
    assert x.device == device
    if not x.numel():
        return
    xt = torch.tensor(as_numpy(x))
    assert bool(d.support.check(xt).all()), f"{name}: draws outside the support"
    ref = reference(d, xt)
    rtol, atol = RSAMPLE_TOL[dtype]
    numpy.testing.assert_allclose(ref.detach().numpy(), xt.numpy(), rtol=rtol, atol=atol)  # the reference's value
    r = numpy.random.default_rng(0).standard_normal(tuple(x.shape)).astype(dtype)
    (x * tinynet.tensor(r, device=device)).sum().backward()
    (ref * torch.tensor(r)).sum().backward()
    for i, (a, b) in enumerate(zip(ours, theirs)):
        scale = max(1.0, float(b.grad.abs().max())) if b.grad.numel() else 1.0
        numpy.testing.assert_allclose(as_numpy(a.grad), b.grad.numpy(), rtol=rtol if name != "Gamma" else 1e-3,
                                      atol=atol * scale, err_msg=f"{name}.rsample gradient of parameter {i}")
