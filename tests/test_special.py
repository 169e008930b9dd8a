"""tinynet.special (and the torch-level erfinv, lgamma, digamma, polygamma, i0, mvlgamma,
igamma, igammac with their Tensor methods) against torch.special: values and dtypes in
float32 and float64, gradients against PyTorch's and against float64 finite differences,
second derivatives, and the typed errors of bad arguments. One body per case for every
device."""
import numpy
import pytest

import tinynet
from tinynet import errors

from helpers import as_numpy, assert_close, gradcheck, rng

torch = pytest.importorskip("torch")


def normal(scale=1.0):
    return lambda g, shape: g.standard_normal(shape) * scale


def uniform(low, high):
    return lambda g, shape: g.uniform(low, high, shape)


SHAPE = (3, 4)
# name -> (call(lib, *tensors), one sampler per input, which inputs PyTorch differentiates, tolerance scale)
CASES = {
    "erf": (lambda m, x: m.special.erf(x), [normal()], [0], 1),
    "erfc": (lambda m, x: m.special.erfc(x), [normal()], [0], 1),
    "erfcx": (lambda m, x: m.special.erfcx(x), [normal(2)], [0], 1),
    "erfinv": (lambda m, x: m.special.erfinv(x), [uniform(-0.95, 0.95)], [0], 1),
    "expit": (lambda m, x: m.special.expit(x), [normal(2)], [0], 1),
    "logit": (lambda m, x: m.special.logit(x), [uniform(0.05, 0.95)], [0], 1),
    "logit eps": (lambda m, x: m.special.logit(x, eps=0.2), [uniform(-0.3, 1.3)], [0], 1),
    "xlogy": (lambda m, x, y: m.special.xlogy(x, y), [normal(), uniform(0.1, 3)], [0, 1], 1),
    "xlog1py": (lambda m, x, y: m.special.xlog1py(x, y), [normal(), uniform(-0.6, 3)], [0, 1], 1),
    "xlog1py number": (lambda m, x: m.special.xlog1py(x, 0.5), [normal()], [0], 1),
    "gammaln": (lambda m, x: m.special.gammaln(x), [uniform(0.1, 6)], [0], 1),
    "gammaln negative": (lambda m, x: m.special.gammaln(x), [uniform(-3.9, -3.1)], [0], 10),
    "digamma": (lambda m, x: m.special.digamma(x), [uniform(0.2, 6)], [0], 10),
    "psi": (lambda m, x: m.special.psi(x), [uniform(-0.9, -0.1)], [0], 10),
    "polygamma 0": (lambda m, x: m.special.polygamma(0, x), [uniform(0.3, 4)], [0], 10),
    "polygamma 1": (lambda m, x: m.special.polygamma(1, x), [uniform(0.3, 4)], [0], 10),
    "polygamma 3": (lambda m, x: m.special.polygamma(3, x), [uniform(0.5, 4)], [0], 100),
    "multigammaln": (lambda m, x: m.special.multigammaln(x, 3), [uniform(1.2, 4)], [0], 1),
    "i0": (lambda m, x: m.special.i0(x), [normal(2)], [0], 1),
    "i0e": (lambda m, x: m.special.i0e(x), [normal(2)], [0], 1),
    "i1": (lambda m, x: m.special.i1(x), [normal(2)], [0], 1),
    "i1e": (lambda m, x: m.special.i1e(x), [normal(2)], [0], 1),
    "ndtr": (lambda m, x: m.special.ndtr(x), [normal(2)], [0], 1),
    "ndtri": (lambda m, x: m.special.ndtri(x), [uniform(0.02, 0.98)], [0], 10),
    "log_ndtr": (lambda m, x: m.special.log_ndtr(x), [normal(3)], [0], 1),
    "log1p": (lambda m, x: m.special.log1p(x), [uniform(-0.5, 2)], [0], 1),
    "expm1": (lambda m, x: m.special.expm1(x), [normal()], [0], 1),
    "exp2": (lambda m, x: m.special.exp2(x), [normal()], [0], 1),
    "sinc": (lambda m, x: m.special.sinc(x), [normal()], [0], 1),
    "round": (lambda m, x: m.special.round(x), [normal(3)], [0], 1),
    "softmax": (lambda m, x: m.special.softmax(x, 1), [normal()], [0], 1),
    "log_softmax": (lambda m, x: m.special.log_softmax(x, 0, dtype=m.float64), [normal()], [0], 1),
    "logsumexp": (lambda m, x: m.special.logsumexp(x, 1, keepdim=True), [normal()], [0], 1),
    "entr": (lambda m, x: m.special.entr(x), [uniform(0.1, 2)], [0], 1),
    "zeta": (lambda m, x, q: m.special.zeta(x, q), [uniform(1.5, 4), uniform(0.5, 3)], [1], 10),
    "zeta number": (lambda m, q: m.special.zeta(3.0, q), [uniform(0.5, 3)], [0], 10),
    "gammainc": (lambda m, a, x: m.special.gammainc(a, x), [uniform(0.5, 3), uniform(0.2, 4)], [1], 10),
    "gammaincc": (lambda m, a, x: m.special.gammaincc(a, x), [uniform(0.5, 3), uniform(0.2, 4)], [1], 10),
    "torch.erfinv": (lambda m, x: m.erfinv(x), [uniform(-0.9, 0.9)], [0], 1),
    "torch.lgamma": (lambda m, x: m.lgamma(x), [uniform(0.1, 5)], [0], 1),
    "torch.digamma": (lambda m, x: m.digamma(x), [uniform(0.2, 5)], [0], 10),
    "torch.polygamma": (lambda m, x: m.polygamma(2, x), [uniform(0.5, 4)], [0], 10),
    "torch.i0": (lambda m, x: m.i0(x), [normal(2)], [0], 1),
    "torch.mvlgamma": (lambda m, x: m.mvlgamma(x, 2), [uniform(0.6, 4)], [0], 1),
    "torch.igamma": (lambda m, a, x: m.igamma(a, x), [uniform(0.5, 3), uniform(0.2, 4)], [1], 10),
    "torch.igammac": (lambda m, a, x: m.igammac(a, x), [uniform(0.5, 3), uniform(0.2, 4)], [1], 10),
    "Tensor methods": (lambda m, x, a: x.erfinv() + x.lgamma() + x.digamma() + x.polygamma(1) + x.i0()
                       + x.mvlgamma(1) + a.igamma(x) + a.igammac(x * 2), [uniform(0.2, 0.9), uniform(0.5, 2)],
                       [0], 100),
}
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


def _inputs(samplers, dt, seed=0):
    g = rng(seed)
    return [s(g, SHAPE).astype(dt) for s in samplers]


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_matches_torch(name, device):
    call, samplers, diff, scale = CASES[name]
    for dt in ("float32", "float64"):
        rtol, atol = (t * scale for t in TOL[dt])
        arrays = _inputs(samplers, dt)
        ours = [tinynet.tensor(a, device=device, requires_grad=i in diff) for i, a in enumerate(arrays)]
        theirs = [torch.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrays)]
        out, ref = call(tinynet, *ours), call(torch, *theirs)
        assert out.device == device
        assert out.dtype.name == str(ref.dtype).split(".")[-1], f"{name}: dtype {out.dtype} vs {ref.dtype}"
        assert_close(out, ref, rtol=rtol, atol=atol, what=f"{name} forward ({dt})")
        r = rng(5).standard_normal(tuple(ref.shape)).astype(out.dtype.name)
        (out * tinynet.tensor(r, device=device)).sum().backward()
        (ref * torch.tensor(r)).sum().backward()
        for i in diff:
            assert ours[i].grad is not None and ours[i].grad.dtype == ours[i].dtype, f"{name}: input {i}"
            assert_close(ours[i].grad, theirs[i].grad, rtol=rtol, atol=atol, what=f"{name} gradient {i} ({dt})")


@pytest.mark.parametrize("name", sorted(n for n in CASES if n != "round"))
def test_special_gradients_match_finite_differences(name, device):
    call, samplers, diff, scale = CASES[name]
    arrays = _inputs(samplers, "float64", seed=1)
    gradcheck(lambda *ts: call(tinynet, *ts), arrays, device=device, which=diff, rtol=1e-5 * scale, atol=1e-7 * scale)


SECOND_ORDER = ["erfinv", "erfcx", "gammaln", "digamma", "polygamma 1", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri",
                "log_ndtr", "entr", "xlog1py", "zeta", "multigammaln"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_special_second_derivatives(name, device):
    call, samplers, diff, _ = CASES[name]
    arrays = _inputs(samplers, "float64", seed=2)
    ts = tuple(tinynet.tensor(a, device=device, requires_grad=i in diff) for i, a in enumerate(arrays))
    assert tinynet.autograd.gradgradcheck(lambda *xs: call(tinynet, *xs), ts)


NO_GRAD = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]


@pytest.mark.parametrize("name", NO_GRAD)
def test_bessel_functions_without_gradients_match_torch(name, device):
    """Up to 1e-7 relative in float64: PyTorch's CPU bessel_j0/j1/y0/y1 are accurate to about
    3e-8 there (against mpmath), SciPy's to about 1e-14."""
    for dt, (rtol, atol) in (("float32", (1e-5, 1e-6)), ("float64", (1e-7, 1e-9))):
        a = rng(3).uniform(0.1, 6, SHAPE).astype(dt)
        out = getattr(tinynet.special, name)(tinynet.tensor(a, device=device, requires_grad=True))
        ref = getattr(torch.special, name)(torch.tensor(a, requires_grad=True))
        assert not out.requires_grad and not ref.requires_grad
        assert out.dtype.name == str(ref.dtype).split(".")[-1]
        assert_close(out, ref, rtol=rtol, atol=atol, what=name)


EDGES = [0.0, -0.0, 1.0, -1.0, -2.0, 0.5, numpy.inf, -numpy.inf, numpy.nan]


@pytest.mark.parametrize("name", NO_GRAD + ["i0", "i0e", "i1", "i1e"])
def test_bessel_functions_at_the_domain_edges_match_torch(name, device):
    """Zero, negative arguments, +-inf and NaN: cupyx.scipy.special gives other values than SciPy
    and PyTorch at +-inf and NaN (j0(inf) = 0, i0(inf) = inf, k0e(inf) = NaN), found by the
    fuzz suite on the GPU; both backends give PyTorch's."""
    for dt in ("float32", "float64"):
        a = numpy.array(EDGES, dtype=dt)
        out = getattr(tinynet.special, name)(tinynet.tensor(a, device=device))
        ref = getattr(torch.special, name)(torch.tensor(a))
        numpy.testing.assert_allclose(as_numpy(out), ref.numpy(), rtol=1e-6, atol=0, err_msg=f"{name} ({dt})")
        number = ~numpy.isnan(ref.numpy())  # zeros keep their sign (i1e(-inf) = -0); NaN's sign bit is no value
        assert (numpy.signbit(as_numpy(out)) == numpy.signbit(ref.numpy()))[number].all(), name


def test_integer_inputs_give_the_default_float(device):
    x = tinynet.arange(1, 5, device=device)
    for name in ("erfinv", "gammaln", "digamma", "i0", "i1e", "ndtr", "log_ndtr", "entr", "erfcx", "expit"):
        ours, ref = getattr(tinynet.special, name)(x), getattr(torch.special, name)(torch.arange(1, 5))
        assert ours.dtype.name == str(ref.dtype).split(".")[-1], name
        numpy.testing.assert_allclose(as_numpy(ours), ref.numpy(), rtol=1e-5, err_msg=name)


def test_in_place_methods_match_torch(device):
    a = rng(4).uniform(0.6, 0.9, SHAPE)
    for name, args in (("erfinv_", ()), ("lgamma_", ()), ("digamma_", ()), ("polygamma_", (2,)), ("i0_", ()),
                       ("mvlgamma_", (1,)), ("igamma_", "other"), ("igammac_", "other")):
        x, t = tinynet.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
        if args == "other":  # differentiable in other only: the tensor written to is a constant
            y, u = tinynet.tensor(a + 0.5, device=device), torch.tensor(a + 0.5)
            ours, ref = getattr(y, name)(x * 2), getattr(u, name)(t * 2)
        else:
            y, u = x * 1.0, t * 1.0
            ours, ref = getattr(y, name)(*args), getattr(u, name)(*args)
        assert ours is y and ours.requires_grad
        assert_close(ours, ref, rtol=1e-9, atol=1e-10, what=name)
        ours.sum().backward()
        ref.sum().backward()
        assert_close(x.grad, t.grad, rtol=1e-8, atol=1e-10, what=f"{name} gradient")


def test_zeta_refuses_the_gradient_pytorch_lacks(device):
    x = tinynet.tensor([2.0, 3.0], device=device, requires_grad=True)
    with pytest.raises(errors.AutogradError, match="not implemented"):
        tinynet.special.zeta(x, 1.5).sum().backward()
    with pytest.raises(NotImplementedError):  # PyTorch's refusal
        torch.special.zeta(torch.tensor([2.0], requires_grad=True), 1.5).sum().backward()


def test_gammainc_differentiates_its_first_argument_where_pytorch_does_not(device):
    """tinynet.special.gammainc is tinynet.igamma (ops/special_gamma.py, from the distributions
    work): d/da by a central difference of the library's P(a, x), checked here against finite
    differences of the forward; PyTorch raises NotImplementedError there."""
    a = rng(6).uniform(0.5, 3, SHAPE)
    x = rng(7).uniform(0.2, 4, SHAPE)
    gradcheck(lambda a_: tinynet.special.gammainc(a_, tinynet.tensor(x, device=device)), [a], device=device,
              rtol=1e-5, atol=1e-8)
    with pytest.raises(NotImplementedError):
        torch.special.gammainc(torch.tensor(a, requires_grad=True), torch.tensor(x)).sum().backward()


BAD = [
    ("polygamma negative n", lambda m, d: m.special.polygamma(-1, m.ones(2, device=d)), errors.ArgumentError,
     "polygamma: n"),
    ("polygamma float n", lambda m, d: m.special.polygamma(1.5, m.ones(2, device=d)), errors.ArgumentTypeError,
     "polygamma: n"),
    ("multigammaln p=0", lambda m, d: m.special.multigammaln(m.ones(2, device=d) * 3, 0), errors.ArgumentError,
     "special.multigammaln: p"),
    ("mvlgamma p float", lambda m, d: m.mvlgamma(m.ones(2, device=d) * 3, 1.5), errors.ArgumentTypeError,
     "mvlgamma: p"),
    ("erfinv of a list", lambda m, d: m.special.erfinv([0.5]), errors.ArgumentTypeError, "erfinv: input"),
    ("erfcx of complex", lambda m, d: m.special.erfcx(m.ones(2, device=d) * 1j), errors.DTypeError,
     "special.erfcx"),
    ("gammaln of complex", lambda m, d: m.special.gammaln(m.ones(2, device=d) * 1j), errors.DTypeError, "lgamma"),
    ("xlog1py of two numbers", lambda m, d: m.special.xlog1py(1.0, 2.0), errors.ArgumentTypeError,
     "special.xlog1py"),
    ("zeta shapes", lambda m, d: m.special.zeta(m.ones(2, device=d), m.ones(3, device=d)), errors.ShapeError,
     "special.zeta"),
    ("gammainc of a string", lambda m, d: m.special.gammainc(m.ones(2, device=d), "a"), errors.ArgumentTypeError,
     "igamma"),
    ("bessel_j0 of a list", lambda m, d: m.special.bessel_j0([1.0]), errors.ArgumentTypeError, "bessel_j0"),
]


@pytest.mark.parametrize("name", [b[0] for b in BAD])
def test_bad_arguments_raise_typed_errors_like_torch(name, device):
    _, call, exc, text = next(b for b in BAD if b[0] == name)
    with pytest.raises(Exception):  # PyTorch refuses it too
        call(torch, "cpu")
    with pytest.raises(exc) as info:
        call(tinynet, device)
    assert text in str(info.value)
