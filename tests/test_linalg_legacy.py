"""triangular_solve, cholesky_solve, cholesky_inverse, lu, lu_unpack, lu_solve, svd_lowrank and
pca_lowrank against PyTorch on every backend: values, gradients, and the refusals."""
import warnings

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(31)


def _spd_factor(batch, n, upper=False):
    a = R.standard_normal(batch + (n, n))
    spd = a @ numpy.swapaxes(a, -1, -2) + n * numpy.eye(n)
    low = numpy.linalg.cholesky(spd)
    return numpy.swapaxes(low, -1, -2).copy() if upper else low


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper, device):
    """Values against PyTorch; gradients end to end from A through its Cholesky factor (PyTorch
    also hands the unread triangle of L a gradient, which finite differences do not confirm:
    tinynet's lies in the triangle read, as linalg.solve_triangular's), and by finite differences."""
    a = R.standard_normal((2, 4, 4))
    B = R.standard_normal((2, 4, 3))

    def ours(b, x):
        f = tinynet.linalg.cholesky(x @ x.mT + 4 * tinynet.eye(4, dtype=x.dtype, device=x.device), upper=upper)
        return tinynet.cholesky_solve(b, f, upper) + tinynet.cholesky_inverse(f, upper)[..., :3]

    def theirs(b, x):
        f = torch.linalg.cholesky(x @ x.mT + 4 * torch.eye(4, dtype=x.dtype), upper=upper)
        return torch.cholesky_solve(b, f, upper) + torch.cholesky_inverse(f, upper)[..., :3]
    check_op(device, ours, theirs, [B, a], dtypes=("float64",))
    L = _spd_factor((), 4, upper)
    check_op(device, lambda b, l_: b.cholesky_solve(l_, upper), lambda b, l_: b.cholesky_solve(l_, upper), [B[0], L],
             dtypes=("float64",), diff=[0])
    check_op(device, lambda l_: tinynet.cholesky_inverse(l_, upper), lambda l_: torch.cholesky_inverse(l_, upper),
             [L], grad=False)
    with pytest.raises(errors.ShapeError, match="cholesky_solve"):
        tinynet.cholesky_solve(tinynet.ones(3, 2, device=device), tinynet.ones(3, 4, device=device))


@pytest.mark.parametrize("upper, transpose, unit", [(True, False, False), (False, True, False), (True, True, True)])
def test_triangular_solve(upper, transpose, unit, device):
    A = numpy.triu(R.standard_normal((3, 3))) + 3 * numpy.eye(3) if upper else \
        numpy.tril(R.standard_normal((3, 3))) + 3 * numpy.eye(3)
    b = R.standard_normal((2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in (0, 1):
            check_op(device, lambda b_, a: tinynet.triangular_solve(b_, a, upper, transpose, unit)[k],
                     lambda b_, a: torch.triangular_solve(b_, a, upper, transpose, unit)[k], [b, A],
                     dtypes=("float64",), diff=[0, 1] if k == 0 else [1], grad=k == 0)
        sol, clone = tinynet.tensor(b, device=device).triangular_solve(tinynet.tensor(A, device=device), upper)
        assert clone.shape == (2, 3, 3) and sol.shape == (2, 3, 4)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (3, 5), (5, 3)])
def test_lu_family_matches_torch(shape, device):
    a = R.standard_normal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LU, piv, info = tinynet.lu(tinynet.tensor(a, device=device), get_infos=True)
        tLU, tpiv, tinfo = torch.lu(torch.tensor(a), get_infos=True)
    assert_close(LU, tLU, 1e-10, 1e-12) or assert_close(piv, tpiv, 0, 0) or assert_close(info, tinfo, 0, 0)
    assert piv.dtype == tinynet.int32 and info.dtype == tinynet.int32
    for ours, theirs in zip(tinynet.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv)):
        assert_close(ours, theirs, 1e-10, 1e-12)
    P, L, U = tinynet.lu_unpack(LU, piv)
    assert_close(P @ L @ U, a, 1e-10, 1e-12)
    if shape[-1] == shape[-2]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_op(device, lambda t: tinynet.lu(t)[0], lambda t: torch.lu(t)[0], [a + 2 * numpy.eye(shape[-1])],
                     dtypes=("float64",))
        b = R.standard_normal(shape[:-1] + (2,))
        check_op(device, lambda b_, lu_: tinynet.lu_solve(b_, lu_, piv), lambda b_, lu_: torch.lu_solve(b_, lu_, tpiv),
                 [b, LU.numpy(force=True)], dtypes=("float64",))
        check_op(device, lambda lu_: tinynet.lu_unpack(lu_, piv).L, lambda lu_: torch.lu_unpack(lu_, tpiv).L,
                 [LU.numpy(force=True)], dtypes=("float64",))


def test_lu_refusals(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(errors.ArgumentError, match="pivot"):
            tinynet.lu(tinynet.eye(2, device=device), pivot=False)
        with pytest.raises(RuntimeError):
            torch.lu(torch.eye(2), pivot=False)
        singular = tinynet.lu(tinynet.zeros(2, 2, device=device), get_infos=True)[2]
        assert singular.item() == torch.lu(torch.zeros(2, 2), get_infos=True)[2].item() == 1
    with pytest.raises(errors.DTypeError, match="lu_unpack"):
        tinynet.lu_unpack(tinynet.eye(2, device=device), tinynet.tensor([1, 2], device=device))
    with pytest.raises(errors.ShapeError, match="lu_unpack"):
        tinynet.lu_unpack(tinynet.eye(2, device=device), tinynet.tensor([1], dtype=tinynet.int32, device=device))


def test_svd_and_pca_lowrank(device):
    a = R.standard_normal((30, 4)) @ R.standard_normal((4, 20))  # rank 4
    U, S, V = tinynet.svd_lowrank(tinynet.tensor(a, device=device), q=4)
    assert U.shape == (30, 4) and S.shape == (4,) and V.shape == (20, 4)
    assert_close(S, torch.linalg.svdvals(torch.tensor(a))[:4], 1e-8, 1e-8)
    assert_close(U @ tinynet.diag(S) @ V.mT, a, 1e-8, 1e-8)
    tU, tS, tV = torch.svd_lowrank(torch.tensor(a), q=4)
    assert_close(S, tS, 1e-8, 1e-8)
    x = tinynet.tensor(a, device=device, requires_grad=True)
    tinynet.svd_lowrank(x, q=4)[1].sum().backward()  # the nuclear norm's gradient: U V^T
    assert_close(x.grad, (tU @ tV.mT).numpy(), 1e-6, 1e-6)
    centered = a - a.mean(0)
    U, S, V = tinynet.pca_lowrank(tinynet.tensor(a, device=device), q=4)
    assert_close(S, torch.pca_lowrank(torch.tensor(a), q=4)[1], 1e-8, 1e-8)
    assert_close(U @ tinynet.diag(S) @ V.mT, centered, 1e-8, 1e-8)
    with pytest.raises(errors.ArgumentError, match="svd_lowrank"):
        tinynet.svd_lowrank(tinynet.tensor(a, device=device), q=50)
