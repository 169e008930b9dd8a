"""vdot, addr, chain_matmul, dist, renorm, frobenius_norm, nuclear_norm and norm_except_dim
against PyTorch on every backend: values and gradients, in-place forms, and the refusals."""
import warnings

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(17)


def test_vdot(device):
    check_op(device, tinynet.vdot, torch.vdot, [R.standard_normal(5), R.standard_normal(5)])
    check_op(device, lambda a, b: a.vdot(b), lambda a, b: a.vdot(b), [R.standard_normal(3), R.standard_normal(3)])
    z1, z2 = R.standard_normal(4) + 1j * R.standard_normal(4), R.standard_normal(4) - 2j
    assert_close(tinynet.vdot(tinynet.tensor(z1, device=device), tinynet.tensor(z2, device=device)),
                 torch.vdot(torch.tensor(z1), torch.tensor(z2)), rtol=1e-12, atol=1e-12)
    i = numpy.array([1, 2, 3])
    assert tinynet.vdot(tinynet.tensor(i, device=device), tinynet.tensor(i, device=device)).item() == 14
    with pytest.raises(errors.DTypeError, match="vdot"):
        tinynet.vdot(tinynet.ones(2, device=device), tinynet.ones(2, dtype=tinynet.float64, device=device))
    with pytest.raises(errors.ShapeError, match="vdot"):
        tinynet.vdot(tinynet.ones(2, device=device), tinynet.ones(3, device=device))
    with pytest.raises(RuntimeError):
        torch.vdot(torch.ones(2), torch.ones(3))


def test_addr(device):
    c, u, v = R.standard_normal((3, 4)), R.standard_normal(3), R.standard_normal(4)
    check_op(device, lambda c, u, v: tinynet.addr(c, u, v, beta=0.5, alpha=2.0),
             lambda c, u, v: torch.addr(c, u, v, beta=0.5, alpha=2.0), [c, u, v])
    check_op(device, lambda c, u, v: c.addr(u, v), lambda c, u, v: c.addr(u, v), [R.standard_normal(4), u, v])
    nan = tinynet.full((3, 4), float("nan"), dtype=tinynet.float64, device=device)
    out = tinynet.addr(nan, tinynet.tensor(u, device=device), tinynet.tensor(v, device=device), beta=0)
    assert_close(out, numpy.outer(u, v), rtol=1e-6, atol=1e-6)
    x = tinynet.tensor(c, device=device)
    assert x.addr_(tinynet.tensor(u, device=device), tinynet.tensor(v, device=device), alpha=3) is x
    assert_close(x, torch.tensor(c).addr_(torch.tensor(u), torch.tensor(v), alpha=3), rtol=1e-12, atol=1e-12)
    ints = [numpy.ones((2, 3), dtype=numpy.int64), numpy.arange(2), numpy.arange(3)]
    assert tinynet.addr(*(tinynet.tensor(a, device=device) for a in ints), alpha=2).tolist() == \
        torch.addr(*(torch.tensor(a) for a in ints), alpha=2).tolist()
    with pytest.raises(errors.ShapeError, match="addr"):
        tinynet.addr(tinynet.ones(3, 4, device=device), tinynet.ones(3, 1, device=device),
                     tinynet.ones(4, device=device))
    with pytest.raises(errors.ShapeError, match="addr"):
        tinynet.addr(tinynet.ones(5, 4, device=device), tinynet.ones(3, device=device), tinynet.ones(4, device=device))


def test_chain_matmul(device):
    arrays = [R.standard_normal((2, 3)), R.standard_normal((3, 5)), R.standard_normal((5, 1))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(device, tinynet.chain_matmul, torch.chain_matmul, arrays)
        check_op(device, tinynet.chain_matmul, torch.chain_matmul, arrays[:1])
        with pytest.raises(errors.ArgumentError, match="chain_matmul"):
            tinynet.chain_matmul()
        with pytest.raises(errors.ShapeError, match="chain_matmul"):
            tinynet.chain_matmul(tinynet.ones(3, device=device))
    with pytest.warns(UserWarning, match="deprecated"):
        tinynet.chain_matmul(tinynet.ones(2, 2, device=device))


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, float("inf"), -float("inf")])
def test_dist(p, device):
    a, b = R.standard_normal((3, 4)), R.standard_normal(4)
    check_op(device, lambda x, y: tinynet.dist(x, y, p), lambda x, y: torch.dist(x, y, p), [a, b],
             grad=p != 0, dtypes=("float64",))
    assert_close(tinynet.tensor(a, device=device).dist(tinynet.tensor(b, device=device), p),
                 torch.tensor(a).dist(torch.tensor(b), p), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p, dim", [(2, 0), (1, 1), (3, -1), (float("inf"), 0)])
def test_renorm(p, dim, device):
    x = R.standard_normal((3, 4, 2)) * 2
    check_op(device, lambda t: tinynet.renorm(t, p, dim, 1.5), lambda t: torch.renorm(t, p, dim, 1.5), [x])
    t = tinynet.tensor(x, device=device)
    assert t.renorm_(p, dim, 1.5) is t
    assert_close(t, torch.tensor(x).renorm_(p, dim, 1.5), rtol=1e-12, atol=1e-12)


def test_renorm_refusals(device):
    x = tinynet.ones(2, 3, device=device)
    with pytest.raises(errors.ArgumentError, match="renorm"):
        tinynet.renorm(x, 0, 0, 1.0)
    with pytest.raises(RuntimeError):
        torch.renorm(torch.ones(2, 3), 0, 0, 1.0)
    with pytest.raises(errors.ArgumentError, match="maxnorm"):
        tinynet.renorm(x, 2, 0, -1.0)
    with pytest.raises(errors.IndexOutOfRangeError, match="renorm"):
        tinynet.renorm(x, 2, 5, 1.0)
    with pytest.raises(errors.DTypeError, match="renorm"):
        tinynet.renorm(tinynet.ones(2, 2, dtype=tinynet.int64, device=device), 2, 0, 1.0)


def test_deprecated_norms(device):
    x = R.standard_normal((2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(device, lambda t: tinynet.frobenius_norm(t, [0, 2], True),
                 lambda t: torch.frobenius_norm(t, [0, 2], True), [x])
        check_op(device, lambda t: tinynet.frobenius_norm(t, [1]), lambda t: torch.frobenius_norm(t, [1]), [x])
        check_op(device, lambda t: tinynet.nuclear_norm(t[0]), lambda t: torch.nuclear_norm(t[0]), [x],
                 dtypes=("float64",))
        check_op(device, lambda t: tinynet.nuclear_norm(t, [0, 2], True),
                 lambda t: torch.nuclear_norm(t, [0, 2], True), [x], dtypes=("float64",))
        with pytest.raises(errors.ArgumentError, match="frobenius_norm"):
            tinynet.frobenius_norm(tinynet.tensor(x, device=device), [0, 1, 2])
    with pytest.warns(UserWarning, match="deprecated"):
        tinynet.frobenius_norm(tinynet.tensor(x, device=device), [0])


@pytest.mark.parametrize("dim", [-1, 0, 1, 2, -2])
def test_norm_except_dim(dim, device):
    x = R.standard_normal((3, 4, 2))
    check_op(device, lambda t: tinynet.norm_except_dim(t, 2, dim), lambda t: torch.norm_except_dim(t, 2, dim), [x])
    check_op(device, lambda t: tinynet.norm_except_dim(t, 1, dim), lambda t: torch.norm_except_dim(t, 1, dim), [x],
             dtypes=("float64",))
