"""Sampling statistics and reparameterised gradients of tinynet.distributions.

* Moments: with a fixed seed, the sample mean of N draws lies within 5 standard errors
  (sqrt(var / N), the analytic variance) of the analytic mean, and the sample variance within
  5 standard errors of the analytic variance (its standard error sqrt(Var[(x - mu)^2] / N)
  estimated from the same draws); by the central limit theorem a correct sampler fails one such
  check with probability ~6e-7.
* Location-scale ``rsample`` (Normal, Uniform, Laplace, Exponential, MultivariateNormal,
  LogNormal): the noise is recovered from tinynet's draw, PyTorch computes the same draw from it
  with its own formula, and the gradients of one loss agree with PyTorch's to float64 accuracy.
* Implicit reparameterisation (Gamma, Beta, Dirichlet): the Monte Carlo gradient of E[f(x)]
  (the mean of N per-sample gradients) lies within 5 standard errors (their sample standard
  deviation / sqrt(N)) of the analytic gradient of E[f(x)].
"""
import numpy
import pytest

import tinynet
import tinynet.distributions as D

from helpers import as_numpy, assert_close

torch = pytest.importorskip("torch")
TD = torch.distributions
N = 20000
K_SE = 5.0


def _t(a, device, grad=False):
    return tinynet.tensor(numpy.asarray(a, numpy.float64), device=device, requires_grad=grad)


MOMENT_CASES = {
    "Normal": lambda t: D.Normal(t([0.5, -1.0]), t([1.0, 2.5])),
    "Bernoulli": lambda t: D.Bernoulli(t([0.05, 0.5, 0.9])),
    "OneHotCategorical": lambda t: D.OneHotCategorical(t([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])),
    "Uniform": lambda t: D.Uniform(t([0.0, -2.0]), t([1.0, 5.0])),
    "Beta": lambda t: D.Beta(t([0.5, 2.0, 5.0]), t([0.5, 3.0, 1.0])),
    "Gamma": lambda t: D.Gamma(t([0.2, 1.0, 7.5]), t([1.0, 2.0, 0.5])),
    "Dirichlet": lambda t: D.Dirichlet(t([[0.3, 1.0, 2.0], [5.0, 5.0, 0.5]])),
    "Exponential": lambda t: D.Exponential(t([0.5, 3.0])),
    "Laplace": lambda t: D.Laplace(t([0.0, 2.0]), t([1.0, 0.3])),
    "Poisson": lambda t: D.Poisson(t([0.5, 4.0, 30.0])),
    "MultivariateNormal": lambda t: D.MultivariateNormal(t([1.0, -1.0, 0.0]), covariance_matrix=t(
        [[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.5]])),
    "LogNormal": lambda t: D.LogNormal(t([0.0, 1.0]), t([0.25, 0.5])),
    "Independent(Laplace)": lambda t: D.Independent(D.Laplace(t([[0.0, 1.0]]), t([[1.0, 2.0]])), 1),
}


@pytest.mark.parametrize("name", sorted(MOMENT_CASES))
def test_sample_moments_match_the_analytic_ones(name, device):
    tinynet.manual_seed(2024)
    d = MOMENT_CASES[name](lambda a: _t(a, device))
    x = as_numpy(d.sample((N,)))
    mean, var = as_numpy(d.mean), as_numpy(d.variance)
    se_mean = numpy.sqrt(var / N)
    assert numpy.all(numpy.abs(x.mean(0) - mean) <= K_SE * se_mean), f"{name}: mean {x.mean(0)} vs {mean}"
    dev2 = (x - x.mean(0)) ** 2
    se_var = numpy.sqrt(dev2.var(0) / N)
    assert numpy.all(numpy.abs(x.var(0) - var) <= K_SE * se_var + 1e-12), f"{name}: variance {x.var(0)} vs {var}"


def test_multivariate_normal_sample_covariance(device):
    tinynet.manual_seed(3)
    cov = numpy.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.5]])
    for kw in ("covariance_matrix", "precision_matrix", "scale_tril"):
        value = {"covariance_matrix": cov, "precision_matrix": numpy.linalg.inv(cov),
                 "scale_tril": numpy.linalg.cholesky(cov)}[kw]
        x = as_numpy(D.MultivariateNormal(_t([0.0, 0.0, 0.0], device), **{kw: _t(value, device)}).sample((N,)))
        prods = x[:, :, None] * x[:, None, :]  # loc 0: E[x x^T] = cov
        se = numpy.sqrt(prods.var(0) / N)
        assert numpy.all(numpy.abs(prods.mean(0) - cov) <= K_SE * se), kw


def test_categorical_frequencies(device):
    tinynet.manual_seed(5)
    p = numpy.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    x = as_numpy(D.Categorical(_t(p, device)).sample((N,)))
    freq = numpy.stack([(x == k).mean(0) for k in range(3)], -1)
    assert numpy.all(numpy.abs(freq - p) <= K_SE * numpy.sqrt(p * (1 - p) / N))


# ---- location-scale rsample against PyTorch's formula on the same noise -------------------------------
def _loss_weights(shape):
    return numpy.random.default_rng(9).standard_normal(shape)


LOCATION_SCALE = {
    # name: (params, tinynet build, noise from (draw, params), torch build of the draw from (noise, params))
    "Normal": ([[0.5, -1.0], [1.0, 2.5]], lambda D_, p: D_.Normal(*p),
               lambda x, p: (x - p[0]) / p[1], lambda z, p: p[0] + z * p[1]),
    "Uniform": ([[0.0, -2.0], [1.0, 5.0]], lambda D_, p: D_.Uniform(*p),
                lambda x, p: (x - p[0]) / (p[1] - p[0]), lambda z, p: p[0] + z * (p[1] - p[0])),
    "Laplace": ([[0.0, 2.0], [1.0, 0.3]], lambda D_, p: D_.Laplace(*p),
                lambda x, p: (x - p[0]) / p[1], lambda z, p: p[0] + z * p[1]),
    "Exponential": ([[0.5, 3.0]], lambda D_, p: D_.Exponential(*p),
                    lambda x, p: x * p[0], lambda z, p: z / p[0]),
    "LogNormal": ([[0.0, 1.0], [0.25, 0.5]], lambda D_, p: D_.LogNormal(*p),
                  lambda x, p: ((x.log() if hasattr(x, "log") else numpy.log(x)) - p[0]) / p[1],
                  lambda z, p: (p[0] + z * p[1]).exp()),
}


@pytest.mark.parametrize("name", sorted(LOCATION_SCALE))
def test_location_scale_rsample_gradients_match_torch(name, device):
    params, build, noise, torch_draw = LOCATION_SCALE[name]
    mine = [_t(p, device, grad=True) for p in params]
    ref = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    x = build(D, mine).rsample((7,))
    z = noise(x.detach(), [p.detach() for p in mine])
    xr = torch_draw(torch.tensor(as_numpy(z)), ref)
    assert_close(x, xr, rtol=1e-10, atol=1e-12, what=f"{name}: the same draw")
    w = _loss_weights(tuple(xr.shape))
    (torch.sin(xr) * torch.tensor(w)).sum().backward()
    (x.sin() * _t(w, device)).sum().backward()
    for a, b in zip(mine, ref):
        assert_close(a.grad, b.grad, rtol=1e-9, atol=1e-11, what=f"{name}: rsample gradient")


def test_multivariate_normal_rsample_gradients_match_torch(device):
    loc = numpy.array([1.0, -1.0, 0.0])
    cov = numpy.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.5]])
    ml, mc = _t(loc, device, True), _t(cov, device, True)
    tl, tc = (torch.tensor(a, requires_grad=True) for a in (loc, cov))
    x = D.MultivariateNormal(ml, covariance_matrix=mc).rsample((6,))
    L = numpy.linalg.cholesky(cov)
    eps = numpy.linalg.solve(L, (as_numpy(x) - loc).T).T
    xr = tl + (torch.linalg.cholesky(tc) @ torch.tensor(eps).unsqueeze(-1)).squeeze(-1)
    assert_close(x, xr, rtol=1e-10, atol=1e-12)
    w = _loss_weights(tuple(xr.shape))
    (torch.sin(xr) * torch.tensor(w)).sum().backward()
    (x.sin() * _t(w, device)).sum().backward()
    assert_close(ml.grad, tl.grad, rtol=1e-9, atol=1e-11)
    assert_close(mc.grad, tc.grad, rtol=1e-8, atol=1e-10)


# ---- implicit reparameterisation: Monte Carlo gradient of E[f(x)] vs the analytic one ------------------
def _mc_check(per_sample, expected, what):
    g = as_numpy(per_sample)
    se = g.std(0) / numpy.sqrt(g.shape[0])
    assert numpy.all(numpy.abs(g.mean(0) - expected) <= K_SE * se), f"{what}: {g.mean(0)} vs {expected} (se {se})"
    assert numpy.all(se < 0.05 * numpy.abs(expected) + 1e-3), f"{what}: too few samples to tell ({se})"


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_gamma_implicit_gradient_by_monte_carlo(alpha, device):
    tinynet.manual_seed(17)
    rate = 2.0
    a = _t(numpy.full(N, alpha), device, True)  # one distribution per draw: per-draw gradients
    r = _t(numpy.full(N, rate), device, True)
    x = D.Gamma(a, r).rsample()
    x.sum().backward()
    _mc_check(a.grad, 1 / rate, f"d/dalpha E[x], alpha={alpha}")            # E[x] = alpha / rate
    _mc_check(r.grad, -alpha / rate ** 2, f"d/drate E[x], alpha={alpha}")
    a.grad = None
    x = D.Gamma(a, r).rsample()
    (x * x).sum().backward()
    _mc_check(a.grad, (2 * alpha + 1) / rate ** 2, f"d/dalpha E[x^2], alpha={alpha}")  # alpha(alpha+1)/rate^2


def test_beta_implicit_gradient_by_monte_carlo(device):
    tinynet.manual_seed(19)
    a0, b0 = 0.7, 2.5
    a, b = _t(numpy.full(N, a0), device, True), _t(numpy.full(N, b0), device, True)
    D.Beta(a, b).rsample().sum().backward()  # E[x] = a / (a + b)
    _mc_check(a.grad, b0 / (a0 + b0) ** 2, "d/da E[x]")
    _mc_check(b.grad, -a0 / (a0 + b0) ** 2, "d/db E[x]")


def test_dirichlet_implicit_gradient_by_monte_carlo(device):
    tinynet.manual_seed(23)
    conc = numpy.array([0.5, 1.5, 3.0])
    w = numpy.array([1.0, -2.0, 0.5])
    c = _t(numpy.tile(conc, (N, 1)), device, True)
    (D.Dirichlet(c).rsample() * _t(w, device)).sum().backward()
    s = conc.sum()  # E[w.x] = w.conc / s: d/dc_j = (w_j s - w.conc) / s^2
    _mc_check(c.grad, (w * s - w @ conc) / s ** 2, "d/dc E[w.x]")


def test_rsample_without_implementation_raises(device):
    with pytest.raises(NotImplementedError):
        D.Poisson(_t([1.0], device)).rsample()
    with pytest.raises(NotImplementedError):
        D.Categorical(_t([0.5, 0.5], device)).rsample()
    x = D.OneHotCategoricalStraightThrough(_t([0.2, 0.8], device, True)).rsample((3,))
    assert tuple(x.shape) == (3, 2) and x.requires_grad
