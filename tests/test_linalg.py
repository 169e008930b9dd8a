"""tinynet.linalg against torch.linalg on the same inputs: values, dtypes, shapes, batching,
gradients (against PyTorch's in float32 and float64, and against float64 finite
differences through tinynet.autograd.gradcheck), the torch-level aliases and Tensor
methods, and the typed errors of bad input.

Singular vectors and eigenvectors are unique only up to sign (and the GPU's library may
pick other signs than PyTorch's CPU), so their tests compare functions that do not depend
on the signs (squared entries, products such as ``Q R``) and differentiate only those.
"""
import math
import warnings

import numpy
import pytest

import tinynet
from tinynet.errors import ArgumentError, AutogradError, DTypeError, LinAlgError, ShapeError, TinynetError

from helpers import as_numpy, rng

torch = pytest.importorskip("torch")

F32, F64 = (2e-4, 2e-5), (1e-9, 1e-10)


def _tuple(x):
    return tuple(x) if isinstance(x, tuple) else (x,)


def compare(device, fn, arrays, tol32=F32, tol64=F64, grad=True, fd=True):
    """``fn(m, *tensors)`` with ``m`` tinynet or torch (one or a tuple of tensors): values,
    dtypes and shapes agree with PyTorch in float32 and float64, and so do the gradients of
    ``sum(out_i * r_i)``; then tinynet's gradients against float64 finite differences."""
    arrays = [numpy.asarray(a, dtype=numpy.float64) for a in arrays]
    for dt, (rtol, atol) in (("float32", tol32), ("float64", tol64)):
        ts = [tinynet.tensor(a.astype(dt), device=device, requires_grad=grad) for a in arrays]
        tt = [torch.tensor(a.astype(dt), requires_grad=grad) for a in arrays]
        outs, refs = _tuple(fn(tinynet, *ts)), _tuple(fn(torch, *tt))
        assert len(outs) == len(refs)
        for k, (o, r) in enumerate(zip(outs, refs)):
            assert o.device.type == tinynet.device(device).type, f"output {k} on {o.device}"
            assert numpy.dtype(o.dtype).name == str(r.dtype).split(".")[-1], f"output {k}: {o.dtype} vs {r.dtype}"
            scale = max(1.0, float(numpy.abs(as_numpy(r)).max())) if r.numel() else 1.0
            numpy.testing.assert_allclose(as_numpy(o), as_numpy(r), rtol=rtol, atol=atol * scale,
                                          err_msg=f"output {k} ({dt})")
        if not grad:
            continue
        pairs = [(o, r) for o, r in zip(outs, refs) if r.requires_grad and r.numel()]
        weights = [rng(7 + k).standard_normal(tuple(r.shape)).astype(dt) for k, (_, r) in enumerate(pairs)]
        sum((o * tinynet.tensor(w, device=device)).sum() for (o, _), w in zip(pairs, weights)).backward()
        sum((r * torch.tensor(w)).sum() for (_, r), w in zip(pairs, weights)).backward()
        for i, (t, r) in enumerate(zip(ts, tt)):
            expected = r.grad if r.grad is not None else torch.zeros_like(r)
            assert t.grad is not None, f"input {i} got no gradient ({dt})"
            scale = max(1.0, float(expected.abs().max())) if expected.numel() else 1.0
            numpy.testing.assert_allclose(as_numpy(t.grad), as_numpy(expected), rtol=rtol, atol=atol * scale,
                                          err_msg=f"gradient of input {i} ({dt})")
    if grad and fd:  # the differentiable outputs (not a rank, not lstsq's singular values)
        x64 = tuple(tinynet.tensor(a, device=device, requires_grad=True) for a in arrays)
        keep = [k for k, o in enumerate(_tuple(fn(tinynet, *x64))) if o.requires_grad]
        tinynet.autograd.gradcheck(lambda *ts: tuple(_tuple(fn(tinynet, *ts))[k] for k in keep), x64)


def well_conditioned(shape, seed=0):
    n = shape[-1]
    return rng(seed).standard_normal(shape) + n * numpy.eye(n)


def spd(shape, seed=0):
    a = rng(seed).standard_normal(shape)
    return a @ numpy.swapaxes(a, -1, -2) + shape[-1] * numpy.eye(shape[-1])


def raises(exc, fn, *words):
    """``fn()`` raises ``exc`` (a TinynetError) whose message holds each of ``words``."""
    with pytest.raises(exc) as info:
        fn()
    assert isinstance(info.value, TinynetError)
    for w in words:
        assert w in str(info.value), f"{w!r} not in {info.value}"


# ---- linear systems ---------------------------------------------------------------------------
def test_solve(device):
    A = well_conditioned((2, 3, 3))
    compare(device, lambda m, a, b: m.linalg.solve(a, b), [A, rng(1).standard_normal((2, 3, 2))])
    compare(device, lambda m, a, b: m.linalg.solve(a, b), [A, rng(2).standard_normal((2, 3))])  # batch of vectors
    compare(device, lambda m, a, b: m.linalg.solve(a, b), [A[0], rng(3).standard_normal(3)])
    compare(device, lambda m, a, b: m.linalg.solve(a, b), [A[:1], rng(4).standard_normal((4, 1, 3, 2))])  # broadcast
    compare(device, lambda m, a, b: m.linalg.solve(a, b, left=False), [A, rng(5).standard_normal((2, 4, 3))])
    z = tinynet.zeros(0, 3, 3, device=device)
    assert tinynet.linalg.solve(z + tinynet.eye(3, device=device), tinynet.zeros(0, 3, device=device)).shape == (0, 3)


def test_solve_bad_input(device):
    a, b = tinynet.randn(3, 3, device=device), tinynet.randn(3, device=device)
    raises(ShapeError, lambda: tinynet.linalg.solve(tinynet.randn(3, 4, device=device), b), "linalg.solve", "A",
           "square")
    raises(ShapeError, lambda: tinynet.linalg.solve(a, tinynet.randn(2, 3, device=device)), "linalg.solve",
           "Incompatible")
    raises(ShapeError, lambda: tinynet.linalg.solve(a, tinynet.randn((), device=device)), "linalg.solve", "B")
    raises(ShapeError, lambda: tinynet.linalg.solve(a, b, left=False), "linalg.solve", "B")
    raises(DTypeError, lambda: tinynet.linalg.solve(a, b.double()), "linalg.solve", "same dtype")
    raises(DTypeError, lambda: tinynet.linalg.solve(a.long(), b.long()), "linalg.solve", "A")
    raises(DTypeError, lambda: tinynet.linalg.solve(a.half(), b.half()), "linalg.solve", "Low precision")
    singular = tinynet.tensor([[1.0, 2.0], [2.0, 4.0]], device=device)
    raises(LinAlgError, lambda: tinynet.linalg.solve(singular, tinynet.ones(2, device=device)), "linalg.solve",
           "singular")
    with pytest.raises(RuntimeError):  # LinAlgError is a RuntimeError, as torch.linalg.LinAlgError
        tinynet.linalg.solve(singular, tinynet.ones(2, device=device))
    with pytest.raises(torch.linalg.LinAlgError):  # PyTorch refuses the same matrix
        torch.linalg.solve(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), torch.ones(2))
    # found by tests/test_fuzz_namespaces.py: PyTorch factors A also when B has no elements (no columns, or an
    # empty batch that A broadcasts to), so a singular A is refused there too
    for shape in [(2, 0), (0, 2, 3)]:
        with pytest.raises(torch.linalg.LinAlgError):
            torch.linalg.solve(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), torch.zeros(shape))
        raises(LinAlgError, lambda: tinynet.linalg.solve(singular, tinynet.zeros(shape, device=device)),
               "linalg.solve", "singular")
    assert tinynet.linalg.solve(tinynet.eye(2, device=device), tinynet.zeros(0, 2, 3, device=device)).shape == (0, 2, 3)


def test_inv(device):
    A = well_conditioned((2, 3, 3))
    compare(device, lambda m, a: m.linalg.inv(a), [A])
    compare(device, lambda m, a: m.inverse(a), [A[0]], fd=False)
    compare(device, lambda m, a: a.inverse(), [A[0]], fd=False)
    compare(device, lambda m, a: m.linalg.inv_ex(a).inverse, [A], fd=False)
    batch = numpy.stack([numpy.diag([1.0, 0.0, 1.0]), numpy.eye(3)])
    ours, ref = tinynet.linalg.inv_ex(tinynet.tensor(batch, device=device)), torch.linalg.inv_ex(torch.tensor(batch))
    assert ours.info.dtype == tinynet.int32 and ours.info.device.type == tinynet.device(device).type
    numpy.testing.assert_array_equal(as_numpy(ours.info), ref.info.numpy())
    numpy.testing.assert_allclose(as_numpy(ours.inverse)[1], numpy.eye(3))
    assert numpy.isnan(as_numpy(ours.inverse)[0]).all()  # unspecified in PyTorch; NaN here (documented)
    raises(LinAlgError, lambda: tinynet.linalg.inv(tinynet.tensor(batch, device=device)), "linalg.inv",
           "Batch element 0", "diagonal element 2")
    raises(LinAlgError, lambda: tinynet.linalg.inv_ex(tinynet.tensor(batch, device=device), check_errors=True),
           "linalg.inv_ex")
    raises(ShapeError, lambda: tinynet.linalg.inv(tinynet.ones(3, device=device)), "linalg.inv", "2 dimensions")
    raises(DTypeError, lambda: tinynet.linalg.inv(tinynet.ones(3, 3, dtype=tinynet.int64, device=device)),
           "linalg.inv", "floating point")
    assert tinynet.linalg.inv(tinynet.zeros(0, 0, device=device)).shape == (0, 0)


def test_solve_triangular(device):
    A = well_conditioned((2, 3, 3))
    for upper in (True, False):
        for unit in (True, False):
            compare(device, lambda m, a, b: m.linalg.solve_triangular(a, b, upper=upper, unitriangular=unit),
                    [A, rng(1).standard_normal((2, 3, 2))])
            compare(device, lambda m, a, b: m.linalg.solve_triangular(a, b, upper=upper, left=False,
                                                                      unitriangular=unit),
                    [A[0], rng(2).standard_normal((2, 4, 3))])
    # no singularity check: a zero on the diagonal gives inf/NaN, as PyTorch's trsm
    ours = tinynet.linalg.solve_triangular(tinynet.zeros(3, 3, device=device), tinynet.ones(3, 2, device=device),
                                           upper=True)
    ref = torch.linalg.solve_triangular(torch.zeros(3, 3), torch.ones(3, 2), upper=True)
    numpy.testing.assert_array_equal(numpy.isfinite(as_numpy(ours)), numpy.isfinite(ref.numpy()))
    raises(ShapeError, lambda: tinynet.linalg.solve_triangular(tinynet.eye(3, device=device),
                                                               tinynet.ones(3, device=device), upper=True),
           "linalg.solve_triangular", "B", "2 dimensions")
    raises(ShapeError, lambda: tinynet.linalg.solve_triangular(tinynet.eye(3, device=device),
                                                               tinynet.ones(4, 2, device=device), upper=False),
           "linalg.solve_triangular", "Incompatible")
    with pytest.raises(TypeError, match="upper"):  # a required keyword, as in PyTorch (Python's own error)
        tinynet.linalg.solve_triangular(tinynet.eye(3, device=device), tinynet.ones(3, 2, device=device))


# ---- determinants and Cholesky ------------------------------------------------------------------
def test_det_slogdet_logdet(device):
    A = rng(0).standard_normal((2, 3, 3))
    compare(device, lambda m, a: m.linalg.det(a), [A])
    compare(device, lambda m, a: m.det(a), [A[0]], fd=False)
    compare(device, lambda m, a: a.det(), [A[0]], fd=False)
    compare(device, lambda m, a: m.linalg.slogdet(a), [A])
    compare(device, lambda m, a: m.slogdet(a).logabsdet, [A[0]], fd=False)
    compare(device, lambda m, a: a.slogdet()[0], [A[0]], grad=False)
    compare(device, lambda m, a: m.logdet(a), [spd((2, 3, 3))])
    compare(device, lambda m, a: a.logdet(), [-numpy.eye(3)], grad=False)  # a negative determinant: NaN
    compare(device, lambda m, a: m.linalg.det(a), [numpy.zeros((0, 0))], grad=False)
    compare(device, lambda m, a: m.linalg.slogdet(a), [numpy.zeros((3, 3))], grad=False)  # (0, -inf)


def test_det_gradient_at_a_singular_matrix(device):
    """The cofactor matrix through the SVD is the derivative even where A^{-1} does not exist
    (PyTorch 2.13 returns 0 there; finite differences agree with tinynet)."""
    A = rng(0).standard_normal((3, 3))
    A[:, 2] = A[:, 1]
    tinynet.autograd.gradcheck(tinynet.linalg.det, (tinynet.tensor(A, device=device, requires_grad=True),))
    t = tinynet.tensor(A, device=device, requires_grad=True)
    tinynet.linalg.det(t).backward()
    assert numpy.abs(as_numpy(t.grad)).max() > 0.1


def test_cholesky(device):
    P = spd((2, 3, 3))
    P_skew = P + numpy.triu(rng(5).standard_normal((3, 3)), 1)  # only the lower triangle is read
    for upper in (False, True):
        data = P_skew if not upper else numpy.swapaxes(P_skew, -1, -2)
        compare(device, lambda m, a: m.linalg.cholesky(a, upper=upper), [data], fd=False)
        # finite differences through a symmetric parametrisation (the gradient is symmetric)
        compare(device, lambda m, x: m.linalg.cholesky(
            x @ x.mT + 3 * m.eye(3, dtype=x.dtype, device=x.device), upper=upper),
                [rng(1).standard_normal((2, 3, 3))])
        compare(device, lambda m, a: m.linalg.cholesky_ex(a, upper=upper).L, [P], fd=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(device, lambda m, a: m.cholesky(a, True), [P[0]], fd=False)
        compare(device, lambda m, a: a.cholesky(), [P[0]], fd=False)
    bad = numpy.stack([numpy.eye(3), numpy.diag([1.0, -1.0, 1.0])])
    raises(LinAlgError, lambda: tinynet.linalg.cholesky(tinynet.tensor(bad, device=device)), "linalg.cholesky",
           "Batch element 1", "leading minor of order 2", "positive-definite")
    ours, ref = tinynet.linalg.cholesky_ex(tinynet.tensor(bad, device=device)), torch.linalg.cholesky_ex(
        torch.tensor(bad))
    numpy.testing.assert_array_equal(as_numpy(ours.info), ref.info.numpy())
    assert ours.info.dtype == tinynet.int32
    numpy.testing.assert_allclose(as_numpy(ours.L)[0], numpy.eye(3))
    raises(LinAlgError, lambda: tinynet.linalg.cholesky_ex(tinynet.tensor(bad, device=device), check_errors=True),
           "linalg.cholesky_ex")
    with pytest.warns(UserWarning, match="deprecated"):
        tinynet.cholesky(tinynet.tensor(P[0], device=device))


# ---- decompositions ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 3, 3), (2, 3, 5)], ids=["tall", "square", "wide"])
def test_qr(device, shape):
    A = rng(0).standard_normal(shape)
    for mode in ("reduced", "complete"):
        grad = mode == "reduced" or shape[-2] <= shape[-1]

        def sign_free(m, a):  # Q R, and squared entries of Q and R (a column of Q flips with R's row)
            q, r = m.linalg.qr(a, mode)
            return q @ r, q * q, r * r
        compare(device, sign_free, [A], grad=grad)
        if device == "cpu":  # the same LAPACK routine as PyTorch's CPU: the same signs
            compare(device, lambda m, a: tuple(m.linalg.qr(a, mode)), [A], grad=grad, fd=False)
    q, r = tinynet.linalg.qr(tinynet.tensor(A, device=device), mode="r")
    assert q.shape == (0,) and r.shape == torch.linalg.qr(torch.tensor(A), mode="r").R.shape
    x = tinynet.tensor(A, device=device, requires_grad=True)
    with pytest.raises(AutogradError, match="mode='r'"):
        tinynet.linalg.qr(x, mode="r").R.sum().backward()
    if shape[-2] > shape[-1]:
        with pytest.raises(AutogradError, match="complete"):
            tinynet.linalg.qr(x, mode="complete").Q.sum().backward()
    raises(ArgumentError, lambda: tinynet.linalg.qr(x, mode="raw"), "linalg.qr", "mode")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(device, lambda m, a: tuple(t * t for t in m.qr(a, some=False)), [A[0]], fd=False,
                grad=shape[-2] <= shape[-1])
        compare(device, lambda m, a: tuple(t * t for t in a.qr()), [A[0]], fd=False)


@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 3, 3), (2, 3, 5)], ids=["tall", "square", "wide"])
def test_svd(device, shape):
    A = rng(0).standard_normal(shape)
    k = min(shape[-2:])
    for full in (True, False):
        def sign_free(m, a):
            u, s, vh = m.linalg.svd(a, full_matrices=full)
            return s, u[..., :k] ** 2, vh[..., :k, :] ** 2, (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
        compare(device, sign_free, [A])
        u, s, vh = tinynet.linalg.svd(tinynet.tensor(A, device=device), full_matrices=full)
        assert u.shape == (2, shape[1], shape[1] if full else k) and vh.shape == (2, shape[2] if full else k, shape[2])
    compare(device, lambda m, a: m.linalg.svdvals(a), [A])
    compare(device, lambda m, a: (lambda r: (r.S, r.U ** 2, r.V ** 2))(m.svd(a)), [A[0]], fd=False)
    compare(device, lambda m, a: (lambda r: (r.S, r.U[..., :k] ** 2, r.V[..., :k] ** 2))(a.svd(some=False)), [A[0]],
            fd=False)
    compare(device, lambda m, a: m.svd(a, compute_uv=False), [A[0]], fd=False)  # zero U and V, as PyTorch's
    raises(ArgumentError, lambda: tinynet.linalg.svd(tinynet.tensor(A, device=device), driver="gesvd"),
           "linalg.svd", "driver")


def test_svd_repeated_singular_values_give_finite_value_gradients(device):
    x = tinynet.eye(3, dtype=tinynet.float64, device=device, requires_grad=True)
    tinynet.linalg.svd(x).S.sum().backward()
    numpy.testing.assert_allclose(as_numpy(x.grad), numpy.eye(3))
    y = tinynet.eye(3, dtype=tinynet.float64, device=device, requires_grad=True)
    tinynet.linalg.svdvals(y).sum().backward()
    numpy.testing.assert_allclose(as_numpy(y.grad), numpy.eye(3))


def test_eigh(device):
    A = rng(0).standard_normal((2, 4, 4))
    for uplo in ("L", "U", "l"):
        compare(device, lambda m, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(m.linalg.eigh(a, uplo)), [A],
                fd=False)
        compare(device, lambda m, a: m.linalg.eigvalsh(a, UPLO=uplo), [A], fd=False)
    # finite differences through a symmetric parametrisation (the gradient is symmetric)
    compare(device, lambda m, x: (lambda r: (r[0], r[1] ** 2))(m.linalg.eigh(x + x.mT)), [A])
    compare(device, lambda m, x: m.linalg.eigvalsh(x + x.mT), [A])
    raises(ArgumentError, lambda: tinynet.linalg.eigh(tinynet.tensor(A, device=device), "X"), "linalg.eigh", "UPLO")
    raises(ShapeError, lambda: tinynet.linalg.eigvalsh(tinynet.ones(3, 4, device=device)), "linalg.eigvalsh",
           "square")


# ---- least squares, pseudo-inverse, rank ---------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 3, 3), (2, 3, 5)], ids=["tall", "square", "wide"])
def test_lstsq(device, shape):
    A = rng(0).standard_normal(shape)
    B, b = rng(1).standard_normal(shape[:-1] + (2,)), rng(2).standard_normal(shape[:-1])
    drivers = ("gels", "gelsy", "gelsd", "gelss") if device == "cpu" else ("gels",)
    for driver in drivers:
        if device != "cpu" and shape[-2] < shape[-1]:
            continue
        for rhs in (B, b):
            compare(device, lambda m, a, y: (lambda r: (r.solution, r.residuals, r.rank, r.singular_values))(
                m.linalg.lstsq(a, y, driver=driver)), [A, rhs], tol32=(2e-3, 2e-4))
    if device == "cpu":  # the default driver (gelsy on the CPU) and a rank-deficient system
        compare(device, lambda m, a, y: tuple(m.linalg.lstsq(a, y)), [A, B], fd=False)
        D = rng(3).standard_normal((5, 3))
        D[:, 2] = D[:, 1]
        for driver in ("gelsy", "gelsd", "gelss"):
            compare(device, lambda m, a, y: tuple(m.linalg.lstsq(a, y, driver=driver)),
                    [D, rng(4).standard_normal((5, 2))], grad=False)
    else:
        raises(ArgumentError, lambda: tinynet.linalg.lstsq(tinynet.tensor(A, device=device),
                                                           tinynet.tensor(B, device=device), driver="gelsd"),
               "linalg.lstsq", "gels")
    At, Bt = tinynet.tensor(A, device="cpu"), tinynet.tensor(B, device="cpu")  # the argument checks (CPU rules)
    raises(ArgumentError, lambda: tinynet.linalg.lstsq(At, Bt, driver="x"),
           "linalg.lstsq", "driver")
    raises(ShapeError, lambda: tinynet.linalg.lstsq(At, Bt[:, :1]), "linalg.lstsq",
           "rows")
    raises(DTypeError, lambda: tinynet.linalg.lstsq(At.float(), Bt), "linalg.lstsq",
           "same dtype")


def test_pinv_and_matrix_rank(device):
    for shape in ((2, 4, 3), (2, 3, 5)):
        A = rng(0).standard_normal(shape)
        compare(device, lambda m, a: m.linalg.pinv(a), [A])
        # a cut-off that drops singular values: PyTorch's gradient (Golub & Pereyra's, which
        # assumes P = A^+ exactly) is matched, finite differences of the truncated inverse are not
        compare(device, lambda m, a: m.linalg.pinv(a, atol=1.0), [A], fd=False)
        compare(device, lambda m, a: m.linalg.pinv(a, rtol=0.5), [A], fd=False)
        compare(device, lambda m, a: m.pinverse(a, rcond=0.5), [A[0]], fd=False)
        compare(device, lambda m, a: a.pinverse(), [A[0]], fd=False)
        compare(device, lambda m, a: m.linalg.matrix_rank(a, atol=1.0), [A], grad=False)
        compare(device, lambda m, a: m.linalg.matrix_rank(a), [A], grad=False)
        atol = [0.1, 10.0]  # per batch element, as a tensor
        compare(device, lambda m, a: m.linalg.pinv(a, atol=m.tensor(atol, dtype=a.dtype)), [A], fd=False)
        compare(device, lambda m, a: m.linalg.matrix_rank(a, atol=m.tensor(atol, dtype=a.dtype)), [A], grad=False)
    S = rng(1).standard_normal((4, 4))
    compare(device, lambda m, a: m.linalg.pinv(a + a.mT, hermitian=True), [S])
    compare(device, lambda m, a: m.linalg.matrix_rank(a + a.mT, hermitian=True), [S], grad=False)
    compare(device, lambda m, a: m.linalg.matrix_rank(a, tol=0.5), [S], grad=False)
    raises(ShapeError, lambda: tinynet.linalg.pinv(tinynet.ones(3, 4, device=device), hermitian=True), "linalg.pinv",
           "square")
    raises(DTypeError, lambda: tinynet.linalg.pinv(tinynet.ones(3, 4, dtype=tinynet.int64, device=device)),
           "linalg.pinv")


# ---- matrix functions -----------------------------------------------------------------------------
def test_matrix_exp(device):
    A = rng(0).standard_normal((2, 3, 3))
    compare(device, lambda m, a: m.linalg.matrix_exp(a), [A])
    compare(device, lambda m, a: m.matrix_exp(a), [A[0]], fd=False)
    compare(device, lambda m, a: a.matrix_exp(), [A[0]], fd=False)
    compare(device, lambda m, a: m.linalg.matrix_exp(a), [numpy.zeros((0, 0))], grad=False)
    half = tinynet.linalg.matrix_exp(tinynet.tensor(A[0], dtype=tinynet.float16, device=device))
    assert half.dtype == tinynet.float16
    raises(DTypeError, lambda: tinynet.linalg.matrix_exp(tinynet.ones(3, 3, dtype=tinynet.int64, device=device)),
           "linalg.matrix_exp")


@pytest.mark.parametrize("n", [-2, -1, 0, 1, 2, 3, 5])
def test_matrix_power(device, n):
    A = well_conditioned((2, 3, 3)) / 3
    compare(device, lambda m, a: m.linalg.matrix_power(a, n), [A])
    compare(device, lambda m, a: m.matrix_power(a, n), [A[0]], fd=False)
    compare(device, lambda m, a: a.matrix_power(n), [A[0]], fd=False)
    if n >= 0:
        ints = numpy.arange(4).reshape(2, 2)
        ours = tinynet.linalg.matrix_power(tinynet.tensor(ints, device=device), n)
        ref = torch.linalg.matrix_power(torch.tensor(ints), n)
        assert ours.dtype == tinynet.int64
        numpy.testing.assert_array_equal(as_numpy(ours), ref.numpy())
    raises(TypeError, lambda: tinynet.linalg.matrix_power(tinynet.eye(2, device=device), 2.0), "linalg.matrix_power",
           "n")
    raises(ShapeError, lambda: tinynet.linalg.matrix_power(tinynet.ones(2, 3, device=device), n),
           "linalg.matrix_power", "square")


def test_multi_dot(device):
    shapes = [(3,), (3, 5), (5, 2), (2, 4), (4,)]
    arrays = [rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    compare(device, lambda m, *ts: m.linalg.multi_dot(list(ts)), arrays)
    compare(device, lambda m, *ts: m.linalg.multi_dot(ts), arrays[1:4])
    compare(device, lambda m, a, b: m.linalg.multi_dot([a, b]), [arrays[0], arrays[0]])
    t = [tinynet.ones(3, 3, device=device), tinynet.ones(3, 3, dtype=tinynet.float64, device=device)]
    raises(DTypeError, lambda: tinynet.linalg.multi_dot(t), "linalg.multi_dot", "dtype")
    raises(ArgumentError, lambda: tinynet.linalg.multi_dot(t[:1]), "linalg.multi_dot", "at least 2")
    raises(ShapeError, lambda: tinynet.linalg.multi_dot([tinynet.ones(3, 2, device=device), t[0]]),
           "linalg.multi_dot", "cannot be multiplied")


def test_vander_vecdot_cross_diagonal(device):
    x = rng(0).standard_normal((2, 3))
    compare(device, lambda m, a: m.linalg.vander(a), [x])
    compare(device, lambda m, a: m.linalg.vander(a, N=5), [x])
    ints = tinynet.linalg.vander(tinynet.tensor([1, 2, 3], device=device))
    numpy.testing.assert_array_equal(as_numpy(ints), torch.linalg.vander(torch.tensor([1, 2, 3])).numpy())
    raises(ArgumentError, lambda: tinynet.linalg.vander(tinynet.ones(2, device=device), N=1), "linalg.vander", "N")
    compare(device, lambda m, a: m.linalg.vander(a, N=3), [numpy.array(0.7)])  # a 0-d x is one element: (1, 3)
    compare(device, lambda m, a, b: m.linalg.vecdot(a, b), [rng(1).standard_normal((2, 1, 3)),
                                                            rng(2).standard_normal((4, 3))])
    compare(device, lambda m, a, b: m.linalg.vecdot(a, b, dim=0), [x, rng(3).standard_normal((2, 3))])
    raises(DTypeError, lambda: tinynet.linalg.vecdot(tinynet.ones(3, device=device),
                                                     tinynet.ones(3, dtype=tinynet.float64, device=device)),
           "linalg.vecdot", "same dtype")
    raises(DTypeError, lambda: tinynet.linalg.vecdot(tinynet.ones(3, dtype=tinynet.int64, device=device),
                                                     tinynet.ones(3, dtype=tinynet.int64, device=device)),
           "linalg.vecdot")
    compare(device, lambda m, a, b: m.linalg.cross(a, b), [rng(4).standard_normal((2, 1, 3)),
                                                           rng(5).standard_normal((1, 4, 3))])
    compare(device, lambda m, a, b: m.linalg.cross(a, b, dim=0), [rng(6).standard_normal((3, 2)),
                                                                  rng(7).standard_normal((3, 2))])
    raises(ShapeError, lambda: tinynet.linalg.cross(tinynet.ones(3, device=device), tinynet.ones(2, 3, device=device)),
           "linalg.cross", "same number of dimensions")
    raises(ShapeError, lambda: tinynet.linalg.cross(tinynet.ones(2, 4, device=device),
                                                    tinynet.ones(2, 4, device=device)), "linalg.cross", "length 3")
    compare(device, lambda m, a: m.linalg.diagonal(a, offset=1), [rng(8).standard_normal((2, 3, 4))])
    compare(device, lambda m, a: m.linalg.diagonal(a, dim1=0, dim2=2), [rng(8).standard_normal((2, 3, 4))])


# ---- norms ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [2, 1, 0.5, 3, -1, -2.5, 0, math.inf, -math.inf])
def test_vector_norm(device, ord):
    x = rng(0).standard_normal((2, 3, 4))
    compare(device, lambda m, a: m.linalg.vector_norm(a, ord), [x], fd=ord != 0)
    compare(device, lambda m, a: m.linalg.vector_norm(a, ord, dim=(0, 2), keepdim=True), [x], fd=False)
    compare(device, lambda m, a: m.linalg.vector_norm(a, ord, dim=-1), [x], fd=False)
    compare(device, lambda m, a: m.linalg.vector_norm(a, ord, dtype=m.float64), [x[0]], fd=False)


def test_vector_norm_bad_input(device):
    raises(DTypeError, lambda: tinynet.linalg.vector_norm(tinynet.ones(3, dtype=tinynet.int64, device=device)),
           "linalg.vector_norm", "floating point")
    raises(DTypeError, lambda: tinynet.linalg.vector_norm(tinynet.ones(3, dtype=tinynet.float64, device=device),
                                                          dtype=tinynet.float32), "linalg.vector_norm", "narrowing")
    raises(ArgumentError, lambda: tinynet.linalg.vector_norm(tinynet.ones(0, device=device), math.inf),
           "linalg.vector_norm", "empty")
    raises(TypeError, lambda: tinynet.linalg.vector_norm(tinynet.ones(3, device=device), "fro"), "linalg.vector_norm",
           "ord")


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norm(device, ord):
    A = rng(0).standard_normal((2, 3, 4))
    compare(device, lambda m, a: m.linalg.matrix_norm(a, ord), [A])
    compare(device, lambda m, a: m.linalg.matrix_norm(a, ord, dim=(0, 2), keepdim=True), [A], fd=False)
    compare(device, lambda m, a: m.linalg.norm(a, ord), [A[0]], fd=False)
    compare(device, lambda m, a: m.linalg.norm(a, ord, dim=(2, 1)), [A], fd=False)
    for shape in ((2, 0, 3), (3, 0), (0, 0)):  # empty matrices: 0, or refused where PyTorch's amin refuses
        try:
            torch.linalg.matrix_norm(torch.zeros(shape), ord)
        except IndexError:
            with pytest.raises(TinynetError):
                tinynet.linalg.matrix_norm(tinynet.zeros(shape, device=device), ord)
            continue
        compare(device, lambda m, a: m.linalg.matrix_norm(a, ord), [numpy.zeros(shape)], grad=False)


def test_norm_dispatch_and_bad_input(device):
    A = rng(0).standard_normal((2, 3, 4))
    compare(device, lambda m, a: m.linalg.norm(a), [A])
    compare(device, lambda m, a: m.linalg.norm(a, keepdim=True), [A], fd=False)
    compare(device, lambda m, a: m.linalg.norm(a, 3, dim=1), [A], fd=False)
    compare(device, lambda m, a: m.linalg.norm(a[0, 0], -1), [A], fd=False)
    t = tinynet.tensor(A, device=device)
    raises(ShapeError, lambda: tinynet.linalg.norm(t, 2), "linalg.norm", "1D or 2D")
    raises(ArgumentError, lambda: tinynet.linalg.norm(t, dim=(0, 1, 2)), "linalg.norm", "length 1 or 2")
    raises(ArgumentError, lambda: tinynet.linalg.matrix_norm(t, 3), "linalg.matrix_norm", "Order 3")
    raises(ArgumentError, lambda: tinynet.linalg.matrix_norm(t, dim=(1, 1)), "linalg.matrix_norm", "different")
    raises(ShapeError, lambda: tinynet.linalg.matrix_norm(t[0, 0]), "linalg.matrix_norm", "2 dimensions")
    raises(DTypeError, lambda: tinynet.linalg.matrix_norm(t.half(), "nuc"), "linalg.matrix_norm", "Low precision")


# ---- the namespace ------------------------------------------------------------------------------------
def test_namespace_matches_pytorch():
    assert tinynet.linalg.LinAlgError is LinAlgError and issubclass(LinAlgError, RuntimeError)
    for name in tinynet.linalg.__all__:
        assert hasattr(torch.linalg, name), name
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "pinverse", "matrix_exp", "matrix_power", "svd",
                 "qr"):
        assert callable(getattr(tinynet, name)) and callable(getattr(tinynet.Tensor, name)), name


@pytest.mark.parametrize("fn", ["det", "slogdet", "inv", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh",
                                "pinv", "matrix_rank", "matrix_exp"])
def test_integer_and_vector_inputs_are_refused(device, fn):
    f = getattr(tinynet.linalg, fn)
    raises(DTypeError, lambda: f(tinynet.ones(3, 3, dtype=tinynet.int64, device=device)), f"linalg.{fn}")
    raises(ShapeError, lambda: f(tinynet.ones(3, device=device)), f"linalg.{fn}", "2 dimensions")
    with pytest.raises(Exception):  # PyTorch refuses both too
        getattr(torch.linalg, fn)(torch.ones(3, 3, dtype=torch.int64))


SECOND_ORDER = {  # the ops whose backward is recorded (create_graph=True), and compositions of them
    "solve": lambda a, b: tinynet.linalg.solve(a, b),
    "solve_vector_left_false": lambda a, b: tinynet.linalg.solve(a, b[..., 0].unsqueeze(-2), left=False),
    "inv": lambda a, b: tinynet.linalg.inv(a),
    "slogdet": lambda a, b: tinynet.linalg.slogdet(a).logabsdet,
    "logdet": lambda a, b: tinynet.logdet(a @ a.mT),
    "matrix_exp": lambda a, b: tinynet.linalg.matrix_exp(a / 3),
    "matrix_power": lambda a, b: tinynet.linalg.matrix_power(a, -2),
    "multi_dot": lambda a, b: tinynet.linalg.multi_dot([a[0], a[1], b[0]]),
    "vector_norm": lambda a, b: tinynet.linalg.vector_norm(b, 3, dim=-1),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives(device, name):
    a = tinynet.tensor(well_conditioned((2, 3, 3)), device=device, requires_grad=True)
    b = tinynet.tensor(rng(1).standard_normal((2, 3, 2)), device=device, requires_grad=True)
    tinynet.autograd.gradgradcheck(SECOND_ORDER[name], (a, b))


def test_second_derivatives_of_a_factorisation_raise(device):
    a = tinynet.tensor(spd((3, 3)), device=device, requires_grad=True)
    (g,) = tinynet.autograd.grad(tinynet.linalg.cholesky(a).sum(), a, create_graph=True)
    with pytest.raises(AutogradError, match="linalg.cholesky"):
        g.sum().backward()
