"""cross, diag_embed, diagflat, trapezoid/trapz, cumulative_trapezoid, cov, corrcoef and
vander against PyTorch on every backend: values, dtypes, gradients (gradcheck), the
argument forms and errors."""
import warnings

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(131)


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


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, -2, -1), (-2, -2, -1), (1, 0, 2), (-1, 2, 0)])
def test_diag_embed_and_diagflat_match_torch(offset, dim1, dim2, device):
    x = R.standard_normal((2, 3))
    check_op(device, lambda t: tinynet.diag_embed(t, offset, dim1, dim2), lambda t: torch.diag_embed(t, offset, dim1,
                                                                                                      dim2), [x])
    check_op(device, lambda t: t.diagflat(offset), lambda t: t.diagflat(offset), [x])
    with pytest.raises(errors.ArgumentError, match="cannot be identical"):
        tinynet.diag_embed(tinynet.zeros(2, 3, device=device), 0, 1, 1)


def test_trapezoid_matches_torch(device):
    y, x1, xs = R.standard_normal((3, 5)), numpy.sort(R.standard_normal(5)), numpy.sort(R.standard_normal((3, 5)), 1)
    check_op(device, tinynet.trapezoid, torch.trapezoid, [y])
    check_op(device, lambda t: tinynet.trapz(t, dx=0.5, dim=0), lambda t: torch.trapz(t, dx=0.5, dim=0), [y])
    check_op(device, tinynet.trapezoid, torch.trapezoid, [y, x1])
    check_op(device, lambda t, s: tinynet.trapezoid(t, s, dim=1), lambda t, s: torch.trapezoid(t, s, dim=1), [y, xs])
    check_op(device, tinynet.cumulative_trapezoid, torch.cumulative_trapezoid, [y, x1])
    check_op(device, lambda t: tinynet.cumulative_trapezoid(t, dx=2.0, dim=0),
             lambda t: torch.cumulative_trapezoid(t, dx=2.0, dim=0), [y])
    one = tinynet.trapezoid(tinynet.tensor([3.0], device=device))
    assert_close(one, torch.trapezoid(torch.tensor([3.0])), rtol=0, atol=0, what="one sample")
    with pytest.raises(errors.ArgumentError, match="either x or dx"):
        tinynet.trapezoid(tinynet.tensor(y, device=device), tinynet.tensor(x1, device=device), dx=1.0)
    with pytest.raises(errors.ShapeError, match="points"):
        tinynet.trapezoid(tinynet.tensor(y, device=device), tinynet.tensor(x1[:3], device=device))


@pytest.mark.parametrize("correction", [1, 0, 2])
def test_cov_and_corrcoef_match_torch(correction, device):
    x = R.standard_normal((3, 8))
    check_op(device, lambda t: tinynet.cov(t, correction=correction), lambda t: torch.cov(t, correction=correction),
             [x])
    f, a = R.integers(1, 4, 8), R.uniform(0.2, 2.0, 8)
    check_op(device, lambda t, w: t.cov(correction=correction, fweights=tinynet.tensor(f, device=device),
                                          aweights=w),
             lambda t, w: t.cov(correction=correction, fweights=torch.tensor(f), aweights=w), [x, a])
    check_op(device, lambda t: tinynet.cov(t, correction=correction), lambda t: torch.cov(t, correction=correction),
             [x[0]])  # one variable: a 0-d result
    check_op(device, tinynet.corrcoef, torch.corrcoef, [x])
    ints = numpy.arange(12).reshape(3, 4) % 5
    assert_close(tinynet.cov(tinynet.tensor(ints, device=device)), torch.cov(torch.tensor(ints)), rtol=1e-6, atol=0,
                 what="cov of ints")
    with pytest.raises(errors.DTypeError, match="fweights to have an integral dtype"):
        tinynet.cov(tinynet.tensor(x, device=device), fweights=tinynet.tensor(a, device=device))
    with pytest.raises(errors.ShapeError, match="two or fewer dimensions"):
        tinynet.cov(tinynet.zeros(2, 2, 2, device=device))


@pytest.mark.parametrize("n,increasing", [(None, False), (4, True), (2, False), (0, True)])
def test_vander_matches_torch(n, increasing, device):
    x = R.standard_normal(4)
    # PyTorch's own vander cannot be differentiated (its result is built in place): values
    # against PyTorch, the gradient against finite differences
    check_op(device, lambda t: tinynet.vander(t, n, increasing), lambda t: torch.vander(t, n, increasing), [x],
             grad=False)
    if n != 0:
        t = tinynet.tensor(x, device=device, requires_grad=True)
        assert tinynet.autograd.gradcheck(lambda v: tinynet.vander(v, n, increasing), (t,))
    assert_close(tinynet.vander(tinynet.tensor([1, 2, 3], device=device), n, increasing),
                 torch.vander(torch.tensor([1, 2, 3]), n, increasing), rtol=0, atol=0, what="ints")
    with pytest.raises(errors.ShapeError, match="one-dimensional"):
        tinynet.vander(tinynet.zeros(2, 2, device=device))
