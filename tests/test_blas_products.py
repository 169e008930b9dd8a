"""The products beside the matrix products (ops/blas_products.py): trace, cross, kron,
inner and tensordot, and ravel, against PyTorch on every backend: values, dtypes, gradients
(gradcheck), the argument forms and errors."""
import warnings

import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(131)
M = R.standard_normal((3, 4))


def test_trace_matches_torch(device):
    check_op(device, tinynet.trace, torch.trace, [M])
    with pytest.raises(errors.ShapeError, match="trace: expected a matrix"):
        tinynet.trace(tinynet.tensor(M[0], device=device))


def test_cross_matches_torch(device):
    a, b = R.standard_normal((4, 3)), R.standard_normal((4, 3))
    check_op(device, lambda x, y: tinynet.cross(x, y, dim=1), lambda x, y: torch.cross(x, y, dim=1), [a, b])
    check_op(device, lambda x, y: x.cross(y, dim=-1), lambda x, y: torch.linalg.cross(x, y), [a, b[:1]])  # broadcast
    c, d = R.standard_normal((3, 5)), R.standard_normal((3, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.cross(torch.tensor(c), torch.tensor(d))
    with pytest.warns(UserWarning, match="first dimension of size 3"):
        ours = tinynet.cross(tinynet.tensor(c, device=device), tinynet.tensor(d, device=device))
    assert_close(ours, ref, rtol=1e-12, atol=1e-12, what="cross without dim")
    with pytest.raises(errors.ShapeError, match="does not have size 3"):
        tinynet.cross(tinynet.zeros(4, 3, device=device), tinynet.zeros(4, 3, device=device), dim=0)


def test_ravel_kron_inner_match_torch(device):
    check_op(device, lambda x: x.t().ravel(), lambda x: x.t().ravel(), [M])
    check_op(device, tinynet.kron, torch.kron, [R.standard_normal((2, 3)), R.standard_normal((4, 2))])
    check_op(device, tinynet.kron, torch.kron, [R.standard_normal((2, 3)), R.standard_normal((2, 1, 2))])
    check_op(device, tinynet.kron, torch.kron, [R.standard_normal(3), R.standard_normal(())])
    ints = tinynet.kron(tinynet.tensor([[1, 2]], device=device), tinynet.tensor([[1], [10]], device=device))
    assert_close(ints, torch.kron(torch.tensor([[1, 2]]), torch.tensor([[1], [10]])), rtol=0, atol=0, what="kron ints")
    check_op(device, tinynet.inner, torch.inner, [R.standard_normal((2, 3)), R.standard_normal((4, 3))])
    check_op(device, lambda x, y: x.inner(y), lambda x, y: x.inner(y), [R.standard_normal((2, 5, 3)),
                                                                         R.standard_normal(3)])
    check_op(device, tinynet.inner, torch.inner, [R.standard_normal(()), R.standard_normal((4, 3))])
    with pytest.raises(errors.ShapeError, match="inner: the last dims must match"):
        tinynet.inner(tinynet.zeros(2, 3, device=device), tinynet.zeros(3, 2, device=device))


@pytest.mark.parametrize("dims", [2, 1, 0, ([1, 2], [1, 0]), ([0], [2])])
def test_tensordot_matches_torch(dims, device):
    a, b = R.standard_normal((2, 3, 4)), R.standard_normal((4, 3, 5)) if dims != ([0], [2]) else None
    if dims == 2:
        b = R.standard_normal((3, 4, 5))
    elif dims == 1:
        b = R.standard_normal((4, 5))
    elif dims == 0:
        b = R.standard_normal((2, 3))
    elif dims == ([0], [2]):
        b = R.standard_normal((3, 5, 2))
    check_op(device, lambda x, y: tinynet.tensordot(x, y, dims=dims), lambda x, y: torch.tensordot(x, y, dims=dims),
             [a, b])


def test_tensordot_errors(device):
    x = tinynet.tensor(R.standard_normal((4, 6, 2)), device=device)
    with pytest.raises(errors.ShapeError, match="tensordot: contracted dimensions must match"):
        tinynet.tensordot(x, tinynet.zeros(3, 3, device=device), dims=1)
    with pytest.raises(errors.ShapeError, match="both dimension lists must have the same length"):
        tinynet.tensordot(x, x, dims=([0, 1], [0]))
    with pytest.raises(errors.ArgumentTypeError, match="tensordot: dims must be"):
        tinynet.tensordot(x, x, dims="a")
