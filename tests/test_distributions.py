"""tinynet.distributions against torch.distributions on the same float64 parameters: log_prob
(and its gradients in the parameters), entropy, mean, mode, variance, stddev, cdf, icdf
(where PyTorch raises NotImplementedError, tinynet must too), shapes of samples, expand, KL
divergences, transforms, constraints and argument validation. One body per backend (the
``device`` fixture). Sampling statistics and reparameterised gradients:
tests/test_distributions_sampling.py."""
import numpy
import pytest

import tinynet
import tinynet.distributions as D
from tinynet.errors import ArgumentError, ShapeError, TinynetError

from helpers import as_numpy, assert_close

torch = pytest.importorskip("torch")
TD = torch.distributions

R = numpy.random.default_rng(7)
POS = R.uniform(0.5, 2.5, (2, 3))
POS2 = R.uniform(0.5, 2.5, (2, 3))
REAL = R.standard_normal((2, 3))
PROBS = R.uniform(0.05, 0.95, (2, 3))
WEIGHTS = R.uniform(0.1, 1.0, (2, 4))
A = R.standard_normal((2, 3, 3))
COV = A @ A.transpose(0, 2, 1) + numpy.eye(3)
TRIL = numpy.linalg.cholesky(COV)
PREC = numpy.linalg.inv(COV)


def _lib(lib, device):
    """(distributions module, array -> float64 tensor requiring grad) of tinynet or torch."""
    if lib is torch:
        return TD, lambda a: torch.tensor(numpy.array(a, numpy.float64), requires_grad=True)
    return D, lambda a: tinynet.tensor(numpy.asarray(a, numpy.float64), device=device, requires_grad=True)


# name -> (build(distributions, tensor) -> distribution, values(rng, sample_shape + batch + event) in the support)
CASES = {
    "Normal": (lambda d, t: d.Normal(t(REAL), t(POS)), lambda r, s: r.standard_normal(s) * 2),
    "Bernoulli(probs)": (lambda d, t: d.Bernoulli(probs=t(PROBS)), lambda r, s: r.integers(0, 2, s) * 1.0),
    "Bernoulli(logits)": (lambda d, t: d.Bernoulli(logits=t(REAL * 3)), lambda r, s: r.integers(0, 2, s) * 1.0),
    "Categorical(probs)": (lambda d, t: d.Categorical(probs=t(WEIGHTS)), lambda r, s: r.integers(0, 4, s)),
    "Categorical(logits)": (lambda d, t: d.Categorical(logits=t(WEIGHTS * 4)), lambda r, s: r.integers(0, 4, s)),
    "OneHotCategorical": (lambda d, t: d.OneHotCategorical(probs=t(WEIGHTS)),
                          lambda r, s: numpy.eye(4)[r.integers(0, 4, s[:-1])]),
    "Uniform": (lambda d, t: d.Uniform(t(REAL), t(REAL + POS)), lambda r, s: REAL + POS * r.uniform(0, 1, s)),
    "Beta": (lambda d, t: d.Beta(t(POS), t(POS2)), lambda r, s: r.uniform(0.01, 0.99, s)),
    "Gamma": (lambda d, t: d.Gamma(t(POS), t(POS2)), lambda r, s: r.gamma(2.0, 1.0, s)),
    "Dirichlet": (lambda d, t: d.Dirichlet(t(WEIGHTS * 3)), lambda r, s: r.dirichlet(numpy.ones(s[-1]), s[:-1])),
    "Exponential": (lambda d, t: d.Exponential(t(POS)), lambda r, s: r.exponential(1.0, s)),
    "Laplace": (lambda d, t: d.Laplace(t(REAL), t(POS)), lambda r, s: r.standard_normal(s) * 2),
    "Poisson": (lambda d, t: d.Poisson(t(POS * 3)), lambda r, s: r.poisson(3.0, s) * 1.0),
    "MultivariateNormal(cov)": (lambda d, t: d.MultivariateNormal(t(REAL), covariance_matrix=t(COV)),
                                lambda r, s: r.standard_normal(s)),
    "MultivariateNormal(prec)": (lambda d, t: d.MultivariateNormal(t(REAL), precision_matrix=t(PREC)),
                                 lambda r, s: r.standard_normal(s)),
    "MultivariateNormal(tril)": (lambda d, t: d.MultivariateNormal(t(REAL[0]), scale_tril=t(TRIL)),
                                 lambda r, s: r.standard_normal(s)),
    "Independent(Normal)": (lambda d, t: d.Independent(d.Normal(t(REAL), t(POS)), 1),
                            lambda r, s: r.standard_normal(s)),
    "LogNormal": (lambda d, t: d.LogNormal(t(REAL * 0.3), t(POS * 0.3)), lambda r, s: r.lognormal(0, 0.5, s)),
    "Transformed(Normal, Affine, Sigmoid)": (
        lambda d, t: d.TransformedDistribution(d.Normal(t(REAL), t(POS)), [
            d.AffineTransform(t(REAL[0]), t(-POS2[0])), d.transforms.SigmoidTransform()]),
        lambda r, s: r.uniform(0.02, 0.98, s)),
    "Transformed(Normal, Tanh)": (
        lambda d, t: d.TransformedDistribution(d.Normal(t(REAL), t(POS)), d.transforms.TanhTransform()),
        lambda r, s: r.uniform(-0.95, 0.95, s)),
    "Transformed(Gamma, Power)": (
        lambda d, t: d.TransformedDistribution(d.Gamma(t(POS), t(POS2)), d.transforms.PowerTransform(2.0)),
        lambda r, s: r.gamma(2.0, 1.0, s)),
}
METHODS = ("mean", "mode", "variance", "stddev", "entropy")


def _both(name, device):
    build, values = CASES[name]
    return build(*_lib(tinynet, device)), build(*_lib(torch, device)), values


def _same_or_both_raise(get_mine, get_ref, what, rtol=1e-9, atol=1e-10):
    try:
        ref = get_ref()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            get_mine()
        return None
    mine = get_mine()
    assert_close(mine, ref, rtol=rtol, atol=atol, what=what)
    return mine, ref


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(name, device):
    mine, ref, values = _both(name, device)
    assert mine.batch_shape == tuple(ref.batch_shape), name
    assert mine.event_shape == tuple(ref.event_shape), name
    assert mine.has_rsample == ref.has_rsample and mine.support.is_discrete == ref.support.is_discrete
    for m in METHODS:
        _same_or_both_raise(lambda: getattr(mine, m) if m != "entropy" else mine.entropy(),
                            lambda: getattr(ref, m) if m != "entropy" else ref.entropy(), f"{name}.{m}")
    v = values(numpy.random.default_rng(3), (5,) + tuple(ref.batch_shape) + tuple(ref.event_shape))
    tv = torch.tensor(v) if v.dtype.kind == "f" else torch.tensor(v)
    xv = tinynet.tensor(v, device=device)
    _same_or_both_raise(lambda: mine.log_prob(xv), lambda: ref.log_prob(tv), f"{name}.log_prob")
    _same_or_both_raise(lambda: mine.cdf(xv), lambda: ref.cdf(tv), f"{name}.cdf")
    u = numpy.random.default_rng(4).uniform(0.02, 0.98, v.shape)
    _same_or_both_raise(lambda: mine.icdf(tinynet.tensor(u, device=device)), lambda: ref.icdf(torch.tensor(u)),
                        f"{name}.icdf", rtol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_gradients_match_torch(name, device):
    build, values = CASES[name]
    leaves = {}

    def recording(lib):
        d, t = _lib(lib, device)

        def make(a):
            x = t(a)
            leaves.setdefault(lib, []).append(x)
            return x
        return build(d, make)

    mine, ref = recording(tinynet), recording(torch)
    v = values(numpy.random.default_rng(5), (3,) + tuple(ref.batch_shape) + tuple(ref.event_shape))
    lp_ref = ref.log_prob(torch.tensor(v))
    r = numpy.random.default_rng(6).standard_normal(tuple(lp_ref.shape))
    (lp_ref * torch.tensor(r)).sum().backward()
    (mine.log_prob(tinynet.tensor(v, device=device)) * tinynet.tensor(r, device=device)).sum().backward()
    for i, (a, b) in enumerate(zip(leaves[tinynet], leaves[torch])):
        if b.grad is None:
            assert a.grad is None or numpy.allclose(as_numpy(a.grad), 0), f"{name}: parameter {i}"
            continue
        assert_close(a.grad, b.grad, rtol=1e-8, atol=1e-10, what=f"{name}: gradient of parameter {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shapes_and_dtypes(name, device):
    mine, ref, _ = _both(name, device)
    for shape in ((), (4,), (2, 3)):
        s, rs = mine.sample(shape), ref.sample(shape)
        assert tuple(s.shape) == tuple(rs.shape), f"{name}.sample({shape})"
        assert str(s.dtype) == str(rs.dtype).split(".")[-1], f"{name}: dtype {s.dtype} vs {rs.dtype}"
        assert s.device.type == tinynet.device(device).type, name
        assert bool(mine.support.check(s).all()), f"{name}: a sample outside the support"
        if ref.has_rsample:
            x = mine.rsample(shape)
            assert tuple(x.shape) == tuple(rs.shape) and (x.requires_grad or x.numel() == 0), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_expand_matches_torch(name, device):
    mine, ref, values = _both(name, device)
    shape = (4,) + tuple(ref.batch_shape)
    em, er = mine.expand(shape), ref.expand(shape)
    assert em.batch_shape == tuple(er.batch_shape) and type(em) is type(mine)
    v = values(numpy.random.default_rng(8), shape + tuple(ref.event_shape))
    assert_close(em.log_prob(tinynet.tensor(v, device=device)), er.log_prob(torch.tensor(v)), rtol=1e-9,
                 atol=1e-10, what=f"{name}.expand.log_prob")
    assert tuple(em.sample((2,)).shape) == (2,) + shape + tuple(ref.event_shape)


def test_manual_seed_repeats_samples(device):
    for name in ("Normal", "Gamma", "Dirichlet", "Categorical(probs)", "Poisson", "MultivariateNormal(cov)"):
        d = CASES[name][0](*_lib(tinynet, device))
        tinynet.manual_seed(11)
        a = as_numpy(d.sample((3,)))
        tinynet.manual_seed(11)
        assert numpy.array_equal(a, as_numpy(d.sample((3,)))), name


def test_enumerate_support_matches_torch(device):
    for name in ("Bernoulli(probs)", "Categorical(logits)", "OneHotCategorical"):
        mine, ref, _ = _both(name, device)
        for expand in (True, False):
            assert_close(mine.enumerate_support(expand), ref.enumerate_support(expand), what=name)


# ---- KL divergences -------------------------------------------------------------------------------
KL_PAIRS = {
    "Normal": (lambda d, t: d.Normal(t(REAL), t(POS)), lambda d, t: d.Normal(t(REAL[::-1]), t(POS2))),
    "Bernoulli": (lambda d, t: d.Bernoulli(t(PROBS)), lambda d, t: d.Bernoulli(t(PROBS[::-1]))),
    "Bernoulli with 0 and 1": (lambda d, t: d.Bernoulli(t([0.0, 1.0, 0.3, 0.5])),
                               lambda d, t: d.Bernoulli(t([0.2, 1.0, 0.0, 1.0]))),
    "Categorical": (lambda d, t: d.Categorical(t(WEIGHTS)), lambda d, t: d.Categorical(logits=t(WEIGHTS[::-1]))),
    "Categorical with zeros": (lambda d, t: d.Categorical(t([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]])),
                               lambda d, t: d.Categorical(t([[0.3, 0.7, 0.0], [0.2, 0.3, 0.5]]))),
    "OneHotCategorical": (lambda d, t: d.OneHotCategorical(t(WEIGHTS)),
                          lambda d, t: d.OneHotCategorical(t(WEIGHTS[::-1]))),
    "Uniform": (lambda d, t: d.Uniform(t(REAL), t(REAL + POS)), lambda d, t: d.Uniform(t(REAL - 1), t(REAL + 3))),
    "Uniform not covered": (lambda d, t: d.Uniform(t(REAL), t(REAL + POS)),
                            lambda d, t: d.Uniform(t(REAL + 0.1), t(REAL + 5))),
    "Beta": (lambda d, t: d.Beta(t(POS), t(POS2)), lambda d, t: d.Beta(t(POS2), t(POS[::-1]))),
    "Gamma": (lambda d, t: d.Gamma(t(POS), t(POS2)), lambda d, t: d.Gamma(t(POS2), t(POS))),
    "Dirichlet": (lambda d, t: d.Dirichlet(t(WEIGHTS * 3)), lambda d, t: d.Dirichlet(t(WEIGHTS[::-1] * 2))),
    "Exponential": (lambda d, t: d.Exponential(t(POS)), lambda d, t: d.Exponential(t(POS2))),
    "Laplace": (lambda d, t: d.Laplace(t(REAL), t(POS)), lambda d, t: d.Laplace(t(REAL[::-1]), t(POS2))),
    "Poisson": (lambda d, t: d.Poisson(t(POS)), lambda d, t: d.Poisson(t(POS2))),
    "MultivariateNormal": (lambda d, t: d.MultivariateNormal(t(REAL), covariance_matrix=t(COV)),
                           lambda d, t: d.MultivariateNormal(t(REAL[0]), scale_tril=t(TRIL[::-1]))),
    "Independent": (lambda d, t: d.Independent(d.Normal(t(REAL), t(POS)), 1),
                    lambda d, t: d.Independent(d.Normal(t(REAL[::-1]), t(POS2)), 1)),
    "LogNormal": (lambda d, t: d.LogNormal(t(REAL), t(POS)), lambda d, t: d.LogNormal(t(REAL[::-1]), t(POS2))),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_divergence_matches_torch(name, device):
    make_p, make_q = KL_PAIRS[name]
    (dm, tm), (dr, tr) = _lib(tinynet, device), _lib(torch, device)
    mine = D.kl_divergence(make_p(dm, tm), make_q(dm, tm))
    ref = TD.kl_divergence(make_p(dr, tr), make_q(dr, tr))
    assert_close(mine, ref, rtol=1e-9, atol=1e-10, what=f"KL {name}")


def test_kl_gradients_match_torch(device):
    for name in ("Normal", "Gamma", "Beta", "Dirichlet", "MultivariateNormal", "Laplace"):
        make_p, make_q = KL_PAIRS[name]
        got = {}
        for lib in (tinynet, torch):
            d, t = _lib(lib, device)
            leaves = []

            def rec(a, t=t, leaves=leaves):
                x = t(a)
                leaves.append(x)
                return x
            kl = (D if lib is tinynet else TD).kl_divergence(make_p(d, rec), make_q(d, rec))
            kl.sum().backward()
            got[lib] = [as_numpy(x.grad) for x in leaves]
        for a, b in zip(got[tinynet], got[torch]):
            assert_close(a, b, rtol=1e-8, atol=1e-10, what=f"KL {name} gradient")


def test_kl_unknown_pair_raises_not_implemented(device):
    p, q = D.Normal(0.0, 1.0), D.Poisson(1.0)
    with pytest.raises(NotImplementedError, match="Normal"):
        D.kl_divergence(p, q)
    with pytest.raises(NotImplementedError):
        TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Poisson(1.0))


def test_register_kl_picks_the_most_specific_pair(device):
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return p.loc * 0 + 42.0

    p, q = MyNormal(tinynet.tensor(0.5, device=device), 1.0), D.Normal(tinynet.tensor(0.0, device=device), 2.0)
    assert float(D.kl_divergence(p, q)) == 42.0
    assert float(D.kl_divergence(q, p)) != 42.0  # (Normal, MyNormal) falls back to (Normal, Normal)
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# ---- validation --------------------------------------------------------------------------------------
def test_invalid_parameters_raise_typed_errors_naming_distribution_and_parameter(device):
    t = lambda v: tinynet.tensor(v, device=device)  # noqa: E731
    with pytest.raises(ArgumentError, match=r"Normal.*scale"):
        D.Normal(0.0, -1.0)
    assert issubclass(ArgumentError, ValueError)
    cases = [
        (lambda: D.Normal(t([0.0, 1.0]), t([1.0, 0.0])), "Normal", "scale"),
        (lambda: D.Bernoulli(probs=t([0.5, 1.5])), "Bernoulli", "probs"),
        (lambda: D.Categorical(probs=t([-1.0, 2.0])), "Categorical", "probs"),
        (lambda: D.Gamma(t([1.0]), t([-2.0])), "Gamma", "rate"),
        (lambda: D.Beta(t([0.0]), t([1.0])), "Dirichlet", "concentration"),
        (lambda: D.Dirichlet(t([1.0, -1.0])), "Dirichlet", "concentration"),
        (lambda: D.Exponential(t([0.0])), "Exponential", "rate"),
        (lambda: D.Laplace(0.0, t([-1.0])), "Laplace", "scale"),
        (lambda: D.Poisson(t([-1.0])), "Poisson", "rate"),
        (lambda: D.Uniform(t([1.0]), t([0.0])), "Uniform", "low < high"),
        (lambda: D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])),
         "MultivariateNormal", "covariance_matrix"),
        (lambda: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[-1.0, 0.0], [0.0, 1.0]])),
         "MultivariateNormal", "scale_tril"),
        (lambda: D.LogNormal(0.0, t([-1.0])), "Normal", "scale"),
        (lambda: D.Bernoulli(probs=0.5, logits=0.0), "Bernoulli", "probs"),
        (lambda: D.MultivariateNormal(t([0.0, 0.0])), "MultivariateNormal", "exactly one"),
    ]
    for make, dist, param in cases:
        with pytest.raises(TinynetError, match=f"{dist}.*{param}"):
            make()


def test_values_outside_the_support_raise(device):
    t = lambda v: tinynet.tensor(v, device=device)  # noqa: E731
    cases = [(D.Normal(0.0, 1.0), t(float("nan"))), (D.Exponential(t([1.0])), t([-0.5])),
             (D.Poisson(t([2.0])), t([1.5])), (D.Beta(t([2.0]), t([2.0])), t([1.5])),
             (D.Bernoulli(t([0.3])), t([0.5])), (D.Categorical(t([0.2, 0.8])), t(2)),
             (D.Dirichlet(t([1.0, 2.0])), t([0.3, 0.3])), (D.Uniform(t([0.0]), t([1.0])), t([1.5])),
             (D.Gamma(t([2.0]), t([1.0])), t([-1.0])), (D.LogNormal(0.0, 1.0), t(-1.0)),
             (D.OneHotCategorical(t([0.5, 0.5])), t([1.0, 1.0]))]
    for d, v in cases:
        with pytest.raises(ArgumentError, match=type(d).__name__ + ".*support"):
            d.log_prob(v)
    with pytest.raises(ShapeError, match="event_shape"):
        D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t(numpy.eye(2))).log_prob(t([1.0, 2.0, 3.0]))
    with pytest.raises(ShapeError, match="broadcast"):
        D.Normal(t([0.0, 1.0]), 1.0).log_prob(t([1.0, 2.0, 3.0]))
    with pytest.raises(ArgumentError, match="Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)


def test_validation_can_be_turned_off(device):
    d = D.Normal(0.0, -1.0, validate_args=False)
    assert d.scale.item() == -1.0
    assert numpy.isnan(D.Exponential(tinynet.tensor([1.0]), validate_args=False).log_prob(
        tinynet.tensor([float("nan")])).item())
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
        D.Poisson(tinynet.tensor([2.0])).log_prob(tinynet.tensor([1.5]))
        with pytest.raises(ArgumentError):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ArgumentError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ArgumentError):
        D.Distribution.set_default_validate_args("yes")


def test_edge_values_found_by_the_fuzz_suite_match_torch(device):
    """tests/test_fuzz_distributions.py found these; each against PyTorch on the same input."""
    inf, nan = float("inf"), float("nan")

    def same(call, *arrays):
        ours = call(D, *(tinynet.tensor(numpy.asarray(a, numpy.float64), device=device) for a in arrays))
        theirs = call(TD, *(torch.tensor(numpy.asarray(a, numpy.float64)) for a in arrays))
        assert ours.dtype == tinynet.float64 and tuple(ours.shape) == tuple(theirs.shape)
        numpy.testing.assert_allclose(as_numpy(ours), theirs.numpy(), rtol=1e-12)

    # Bernoulli at infinite logits: -inf for an impossible outcome, NaN for 0 * inf (not NaN / -inf swapped)
    same(lambda d, lg, v: d.Bernoulli(logits=lg, validate_args=False).log_prob(v),
         [inf, inf, -inf, -inf, 50.0, -50.0, 0.3], [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 2.0])
    # Uniform: NaN (not -inf) where the width is NaN or 0, with validation off; the parameters' dtype when empty
    same(lambda d, lo, hi, v: d.Uniform(lo, hi, validate_args=False).log_prob(v), [nan, 0.0, 0.0, 0.0],
         [nan, 0.0, 1.0, 1.0], [0.5, 0.0, 2.0, nan])
    same(lambda d, lo, hi, v: d.Uniform(lo, hi).log_prob(v), 0.0, 1.0, numpy.zeros(0))
    # Dirichlet's (and so Beta's) mode: NaN where (a - 1)^+ sums to 0 without every a_i < 1, or to NaN
    same(lambda d, a: d.Dirichlet(a, validate_args=False).mode, [[1.0, 0.5], [1.0, 1.0], [0.5, 0.5], [2.0, 3.0],
                                                                  [0.0, nan]])
    same(lambda d, a, b: d.Beta(a, b).mode, [1.0, 0.5, 2.0], [1.0, 0.5, 3.0])
    # MultivariateNormal: an infinite coordinate is an infinite Mahalanobis distance (was NaN)
    same(lambda d, loc, cov, v: d.MultivariateNormal(loc, covariance_matrix=cov).log_prob(v), [0.1, 0.2, 0.3], COV[0],
         [[0.5, -inf, 0.5], [0.5, 0.1, inf]])
    # a covariance that is not positive-definite, validation off: PyTorch's LinAlgError, a RuntimeError
    for lib, d in ((torch, TD), (tinynet, D)):
        with pytest.raises(RuntimeError, match="positive-definite"):
            d.MultivariateNormal(lib.zeros(2), covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]]),
                                 validate_args=False)
    # Normal.cdf at scale 0 (validation off) over an empty value: PyTorch's gradient in scale is 0 * (-1/0) = NaN
    for lib, d in ((torch, TD), (tinynet, D)):
        s = lib.tensor(0.0, dtype=lib.float64, requires_grad=True)
        d.Normal(lib.tensor(0.1, dtype=lib.float64), s, validate_args=False).cdf(lib.zeros(0, dtype=lib.float64)).sum(
            ).backward()
        assert numpy.isnan(float(s.grad)), lib.__name__
    # OneHotCategorical checks its logits under the default setting, whatever validate_args says (as PyTorch's)
    for lib, d in ((torch, TD), (tinynet, D)):
        with pytest.raises(ValueError, match="logits"):
            d.OneHotCategorical(logits=lib.tensor([nan, 0.0]), validate_args=False)
    with pytest.raises(ArgumentError):
        D.OneHotCategorical(logits=tinynet.tensor([nan, 0.0], device=device), validate_args=False)


def test_constraints_match_torch(device):
    C, TC = D.constraints, TD.constraints
    vals = numpy.array([[-1.0, 0.0, 0.5, 1.0, 2.0, numpy.nan], [0.2, 0.3, 0.5, 0.0, 0.0, 0.0]])
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean", "nonnegative_integer",
                 "positive_integer", "simplex", "real_vector", "one_hot"):
        assert_close(getattr(C, name).check(tinynet.tensor(vals, device=device)),
                     getattr(TC, name).check(torch.tensor(vals)), what=name)
        assert repr(getattr(C, name)) == repr(getattr(TC, name)), name
        assert getattr(C, name).event_dim == getattr(TC, name).event_dim, name
    for make in (lambda c: c.interval(0.0, 1.0), lambda c: c.half_open_interval(0.0, 1.0),
                 lambda c: c.greater_than(0.5), lambda c: c.greater_than_eq(0.5), lambda c: c.less_than(0.5),
                 lambda c: c.integer_interval(0, 2), lambda c: c.independent(c.positive, 1)):
        assert_close(make(C).check(tinynet.tensor(vals, device=device)), make(TC).check(torch.tensor(vals)))
        assert repr(make(C)) == repr(make(TC))
    # PyTorch's positive_definite answers only the symmetry check when a batch holds a non-symmetric
    # matrix; the symmetric batch is compared with it, and a non-symmetric matrix is never positive-definite
    sym = numpy.stack([COV[0], -COV[1], numpy.array([[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]]), numpy.zeros((3, 3))])
    mats = numpy.concatenate([sym, TRIL[:1]])
    for name in ("positive_definite", "lower_cholesky", "lower_triangular", "symmetric", "positive_semidefinite"):
        batch = sym if name.startswith("positive") else mats
        assert_close(getattr(C, name).check(tinynet.tensor(batch, device=device)),
                     getattr(TC, name).check(torch.tensor(batch)), what=name)
    assert not C.positive_definite.check(tinynet.tensor(TRIL[0], device=device)).item()
    assert C.is_dependent(D.Uniform(0.0, 1.0).arg_constraints["low"])
    with pytest.raises(ValueError):
        C.dependent.check(tinynet.tensor([1.0]))


# ---- transforms ----------------------------------------------------------------------------------------
TRANSFORMS = {
    "Exp": lambda d, t: d.transforms.ExpTransform(),
    "Affine": lambda d, t: d.transforms.AffineTransform(t(REAL[0]), t(-POS[0])),
    "Affine(event_dim=1)": lambda d, t: d.transforms.AffineTransform(0.5, t(POS[0]), event_dim=1),
    "Sigmoid": lambda d, t: d.transforms.SigmoidTransform(),
    "Tanh": lambda d, t: d.transforms.TanhTransform(),
    "Power": lambda d, t: d.transforms.PowerTransform(t(1.5)),
    "Compose": lambda d, t: d.transforms.ComposeTransform([d.transforms.AffineTransform(1.0, 2.0),
                                                           d.transforms.TanhTransform()]),
    "Exp.inv": lambda d, t: d.transforms.ExpTransform().inv,
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_match_torch(name, device):
    mine, ref = TRANSFORMS[name](*_lib(tinynet, device)), TRANSFORMS[name](*_lib(torch, device))
    x = numpy.random.default_rng(2).uniform(0.1, 0.9, (4, 3))
    xm, xr = tinynet.tensor(x, device=device), torch.tensor(x)
    ym, yr = mine(xm), ref(xr)
    assert_close(ym, yr, rtol=1e-10, atol=1e-12, what=f"{name} forward")
    assert_close(mine.inv(ym), ref.inv(yr), rtol=1e-8, atol=1e-10, what=f"{name} inverse")
    assert_close(mine.log_abs_det_jacobian(xm, ym), ref.log_abs_det_jacobian(xr, yr), rtol=1e-9, atol=1e-10,
                 what=f"{name} log_abs_det_jacobian")
    assert mine.domain.event_dim == ref.domain.event_dim and mine.codomain.event_dim == ref.codomain.event_dim
    assert mine.bijective == ref.bijective


def test_transform_cache_and_equality(device):
    T = D.transforms
    t = T.AffineTransform(1.0, 2.0, cache_size=1)
    x = tinynet.tensor([0.5, 1.0], device=device)
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    with pytest.raises(ArgumentError):
        T.ExpTransform(cache_size=2)


def test_exponential_family_generic_entropy_matches_the_closed_forms(device):
    t = lambda a: tinynet.tensor(numpy.asarray(a, numpy.float64), device=device)  # noqa: E731
    for d in (D.Normal(t(REAL), t(POS)), D.Exponential(t(POS)), D.Gamma(t(POS), t(POS2)), D.Bernoulli(t(PROBS))):
        assert_close(D.ExponentialFamily.entropy(d), d.entropy(), rtol=1e-10, atol=1e-12, what=type(d).__name__)
    for d in (D.Poisson(t(POS)), D.Dirichlet(t(WEIGHTS)), D.Beta(t(POS), t(POS2))):  # no carrier measure, as PyTorch's
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(d)
