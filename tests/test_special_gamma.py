"""The ops under tinynet.distributions: the gamma-function family and erfinv
(tinynet/ops/special_gamma.py), the Gamma sampler's implicit gradient, and the Cholesky
factor and triangular solve (tinynet/ops/triangular.py): values and gradients against
PyTorch, float64 finite differences, and bad inputs."""
import numpy
import pytest

import tinynet
from tinynet.errors import ArgumentError, ArgumentTypeError, ShapeError
from tinynet.ops import special_gamma as sg
from tinynet.ops.triangular import cholesky, solve_triangular

from helpers import as_numpy, assert_close, gradcheck

torch = pytest.importorskip("torch")

X = numpy.array([0.05, 0.3, 1.0, 1.5, 2.5, 7.0, 30.0, -0.5, -2.3])
UNARY = {
    "lgamma": (sg.lgamma, torch.lgamma, X),
    "digamma": (sg.digamma, torch.digamma, X),
    "polygamma(1)": (lambda x: sg.polygamma(1, x), lambda x: torch.polygamma(1, x), X),
    "polygamma(2)": (lambda x: sg.polygamma(2, x), lambda x: torch.polygamma(2, x), X),
    "erfinv": (sg.erfinv, torch.erfinv, numpy.array([-0.99, -0.5, 0.0, 0.3, 0.9, 0.999])),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_values_and_gradients_match_torch(name, dtype, device):
    mine_fn, ref_fn, x = UNARY[name]
    xm = tinynet.tensor(x.astype(dtype), device=device, requires_grad=True)
    xr = torch.tensor(x.astype(dtype), requires_grad=True)
    ym, yr = mine_fn(xm), ref_fn(xr)
    assert str(ym.dtype) == dtype
    # PyTorch's trigamma is good to ~1e-9 relative (SciPy's to ~1e-15: test_values_match_mpmath)
    tol = (1e-5, 1e-5) if dtype == "float32" else (1e-8, 1e-10)
    assert_close(ym, yr, *tol, what=name)
    ym.sum().backward()
    yr.sum().backward()
    assert_close(xm.grad, xr.grad, *tol, what=f"{name} gradient")


def test_unary_finite_differences_and_second_derivatives(device):
    x = numpy.array([0.4, 1.3, 3.0])
    for fn in (sg.lgamma, sg.digamma, lambda t: sg.polygamma(1, t), sg.erfinv):
        gradcheck(fn, [x if fn is not sg.erfinv else x / 4], device=device, rtol=1e-6)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    (g,) = tinynet.autograd.grad(sg.lgamma(t).sum(), t, create_graph=True)
    (h,) = tinynet.autograd.grad(g.sum(), t)
    assert_close(h, torch.polygamma(1, torch.tensor(x)), rtol=1e-8, atol=1e-12, what="lgamma''")


def test_values_match_mpmath(device):
    mpmath = pytest.importorskip("mpmath")
    x = X[X != -0.5]
    t = tinynet.tensor(x, device=device)
    exact = {"lgamma": lambda v: mpmath.log(abs(mpmath.gamma(v))), "digamma": lambda v: mpmath.psi(0, v),
             "polygamma(1)": lambda v: mpmath.psi(1, v), "polygamma(2)": lambda v: mpmath.psi(2, v)}
    for name, f in exact.items():
        want = numpy.array([float(f(v)) for v in x])
        assert_close(UNARY[name][0](t), want, rtol=1e-13, atol=1e-14, what=name)


def test_edge_values_match_torch(device):
    x = numpy.array([0.0, -1.0, numpy.inf, -numpy.inf, numpy.nan])
    for name in ("lgamma", "digamma"):
        assert_close(UNARY[name][0](tinynet.tensor(x, device=device)), UNARY[name][1](torch.tensor(x)),
                     what=name)
    assert_close(sg.erfinv(tinynet.tensor([-1.0, 1.0, 2.0], device=device)),
                 torch.erfinv(torch.tensor([-1.0, 1.0, 2.0])))
    ints = tinynet.tensor([1, 2, 3], device=device)
    assert sg.lgamma(ints).dtype == tinynet.float32 and sg.erfinv(tinynet.tensor([0])).dtype == tinynet.float32


@pytest.mark.parametrize("upper", [False, True])
def test_incomplete_gamma_matches_torch(upper, device):
    a = numpy.array([[0.3], [1.0], [4.5], [20.0]])
    x = numpy.array([0.1, 1.0, 3.0, 25.0])
    fn, ref = (sg.igammac, torch.igammac) if upper else (sg.igamma, torch.igamma)
    am, xm = tinynet.tensor(a, device=device), tinynet.tensor(x, device=device, requires_grad=True)
    xr = torch.tensor(x, requires_grad=True)
    ym, yr = fn(am, xm), ref(torch.tensor(a), xr)
    assert_close(ym, yr, rtol=1e-12, atol=1e-14)
    ym.sum().backward()
    yr.sum().backward()
    assert_close(xm.grad, xr.grad, rtol=1e-10, atol=1e-14, what="d/dx")
    # PyTorch has no derivative in a: finite differences check tinynet's
    gradcheck(lambda a_, x_: fn(a_, x_), [a, x], device=device, rtol=1e-6, atol=1e-9)


def test_standard_gamma_grad_matches_torch_and_mpmath(device):
    rng = numpy.random.default_rng(0)
    alphas = numpy.repeat([0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 200.0, 1000.0], 200)
    x = numpy.maximum(rng.gamma(alphas), numpy.finfo(numpy.float64).tiny)
    mine = as_numpy(sg._standard_gamma_grad(tinynet.tensor(alphas, device=device), tinynet.tensor(x, device=device)))
    ref = torch._standard_gamma_grad(torch.tensor(alphas), torch.tensor(x)).numpy()
    # PyTorch's series and rational approximations are good to ~1e-4 relative
    numpy.testing.assert_allclose(mine, ref, rtol=1e-3)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for i in range(0, len(alphas), 97):  # the exact -dP/da / density with 30 digits
        a, v = alphas[i], x[i]
        dp = mpmath.diff(lambda s: mpmath.gammainc(s, 0, v, regularized=True), a)
        exact = float(-dp / (mpmath.mpf(v) ** (a - 1) * mpmath.exp(-v) / mpmath.gamma(a)))
        assert abs(mine[i] - exact) <= 1e-7 * abs(exact), (a, v, mine[i], exact)


def test_standard_gamma_samples_and_gradient(device):
    alpha = tinynet.tensor(numpy.full(5, 2.5), device=device, requires_grad=True)
    tinynet.manual_seed(4)
    x = sg._standard_gamma(alpha)
    tinynet.manual_seed(4)
    assert numpy.array_equal(as_numpy(x), as_numpy(sg._standard_gamma(alpha)))
    x.sum().backward()
    expected = torch._standard_gamma_grad(torch.full((5,), 2.5, dtype=torch.float64), torch.tensor(as_numpy(x)))
    assert_close(alpha.grad, expected, rtol=1e-3)
    small = sg._standard_gamma(tinynet.tensor(numpy.full(100, 1e-3, numpy.float32), device=device))
    assert float(small.min()) >= numpy.finfo(numpy.float32).tiny  # clamped as PyTorch's
    with pytest.raises(ArgumentError):
        sg._standard_gamma(tinynet.tensor([1.0, 0.0], device=device))
    with pytest.raises(tinynet.errors.DTypeError):
        sg._standard_gamma(tinynet.tensor([1, 2], device=device))


def test_cholesky_and_solve_triangular_match_torch(device):
    rng = numpy.random.default_rng(1)
    m = rng.standard_normal((2, 4, 4))
    a = m @ m.transpose(0, 2, 1) + numpy.eye(4)
    b = rng.standard_normal((3, 1, 4, 2))
    w = rng.standard_normal((2, 4, 4))
    am, ar = tinynet.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    lm, lr = cholesky(am), torch.linalg.cholesky(ar)
    assert_close(lm, lr, rtol=1e-12, atol=1e-12)
    (lm * tinynet.tensor(w, device=device)).sum().backward()
    (lr * torch.tensor(w)).sum().backward()
    assert_close(am.grad, ar.grad, rtol=1e-10, atol=1e-12, what="cholesky gradient")
    for upper in (False, True):
        t = numpy.triu(a) if upper else numpy.tril(a)
        tm, tr = tinynet.tensor(t, device=device, requires_grad=True), torch.tensor(t, requires_grad=True)
        bm, br = tinynet.tensor(b, device=device, requires_grad=True), torch.tensor(b, requires_grad=True)
        xm, xr = solve_triangular(tm, bm, upper=upper), torch.linalg.solve_triangular(tr, br, upper=upper)
        assert_close(xm, xr, rtol=1e-10, atol=1e-12)
        xm.sum().backward()
        xr.sum().backward()
        assert_close(tm.grad, tr.grad, rtol=1e-10, atol=1e-12, what="solve_triangular d/dA")
        assert_close(bm.grad, br.grad, rtol=1e-10, atol=1e-12, what="solve_triangular d/dB")
    gradcheck(lambda x: cholesky(x @ x.mT + tinynet.eye(3, dtype=tinynet.float64, device=device)),
              [rng.standard_normal((3, 3))], device=device, rtol=1e-6)


def test_bad_inputs_raise_typed_errors(device):
    with pytest.raises(ArgumentTypeError):
        sg.lgamma([1.0])
    with pytest.raises(ArgumentError):
        sg.polygamma(-1, tinynet.tensor([1.0], device=device))
    with pytest.raises(ArgumentTypeError):
        sg.polygamma(1.5, tinynet.tensor([1.0], device=device))
    with pytest.raises(ArgumentError):
        sg.igamma(tinynet.tensor([1.0, 2.0], device=device), tinynet.tensor([1.0, 2.0, 3.0], device=device))
    with pytest.raises(ShapeError):
        cholesky(tinynet.zeros(3, 4, dtype=tinynet.float64, device=device))
    with pytest.raises(ShapeError):
        cholesky(tinynet.zeros(3, device=device))
    with pytest.raises(ArgumentError, match="positive-definite"):
        cholesky(tinynet.tensor([[1.0, 2.0], [2.0, 1.0]], device=device))
    with pytest.raises(ShapeError):
        solve_triangular(tinynet.eye(3, device=device), tinynet.zeros(2, 1, device=device), upper=False)
    with pytest.raises(tinynet.errors.DTypeError):
        solve_triangular(tinynet.eye(2, device=device), tinynet.zeros(2, 1, dtype=tinynet.float64, device=device),
                         upper=False)
