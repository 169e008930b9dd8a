"""The reductions that skip NaN (ops/reduction_nan.py): nansum, nanmean, and nanmedian (over all
values, and along a dim with indices) against PyTorch on every backend: NaN slices, ties,
integers, gradients, shapes and errors."""
import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, check_op, rng, torch
from tinynet import errors

R = rng(103)
X = R.standard_normal((4, 6))
WITH_NAN = X.copy()
WITH_NAN[0, 2] = WITH_NAN[2, :3] = numpy.nan
M = R.standard_normal((3, 4))


def test_nanmedian_matches_torch(device):
    check_op(device, tinynet.nanmedian, torch.nanmedian, [WITH_NAN])
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        check_op(device, lambda t: tinynet.nanmedian(t, dim, keepdim).values,
                 lambda t: torch.nanmedian(t, dim, keepdim).values, [WITH_NAN])
        ours = tinynet.nanmedian(tinynet.tensor(WITH_NAN, device=device), dim, keepdim).indices
        theirs = torch.nanmedian(torch.tensor(WITH_NAN), dim, keepdim).indices
        numpy.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ties = numpy.array([2.0, 1.0, 2.0, numpy.nan, 2.0])
    check_op(device, tinynet.nanmedian, torch.nanmedian, [ties], dtypes=("float64",), grad=False)
    t, tt = tinynet.tensor(ties, device=device, requires_grad=True), torch.tensor(ties, requires_grad=True)
    tinynet.nanmedian(t).backward()
    torch.nanmedian(tt).backward()
    assert_close(t.grad, tt.grad, rtol=0, atol=0, what="tie gradient shared evenly")
    ints = numpy.array([[3, 1, 2], [9, 7, 8]])
    check_op(device, lambda t: t.nanmedian(), lambda t: t.nanmedian(), [ints], grad=False)
    check_op(device, lambda t: t.nanmedian(1).values, lambda t: t.nanmedian(1).values, [ints], grad=False)
    all_nan = tinynet.nanmedian(tinynet.tensor([[numpy.nan, numpy.nan]], device=device), 1)
    assert numpy.isnan(all_nan.values.numpy()).all()  # its index is unspecified (PyTorch's differs by size)
    assert numpy.isnan(tinynet.nanmedian(tinynet.tensor([numpy.nan], device=device)).item())


def test_nanmedian_errors(device):
    x = tinynet.zeros(2, 2, device=device)
    with pytest.raises(errors.ArgumentTypeError, match="keepdim=True needs a dim"):
        tinynet.nanmedian(x, keepdim=True)
    with pytest.raises(errors.IndexOutOfRangeError):
        tinynet.nanmedian(x, 2)
    with pytest.raises(errors.DTypeError):
        tinynet.nanmedian(tinynet.tensor([True, False], device=device))


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), ((0, 1), False)])
def test_nan_reductions_match_torch(dim, keepdim, device):
    x = numpy.where(R.random((3, 4)) < 0.3, numpy.nan, M)
    x[2] = numpy.nan  # a row of NaNs: nanmean gives NaN there
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    check_op(device, lambda t: tinynet.nansum(t, **kw), lambda t: torch.nansum(t, **kw), [x])
    check_op(device, lambda t: t.nanmean(**kw), lambda t: t.nanmean(**kw), [x], grad=False)
    assert_close(tinynet.nansum(tinynet.tensor([1, 2, 3], device=device)), torch.nansum(torch.tensor([1, 2, 3])),
                 rtol=0, atol=0, what="nansum of ints")
    with pytest.raises(errors.DTypeError, match="nanmean: expected input to have floating point"):
        tinynet.nanmean(tinynet.tensor([1, 2], device=device))


def test_nanmean_gradient_matches_torch(device):
    x = numpy.where(R.random((3, 4)) < 0.3, numpy.nan, M)
    t, p = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    tinynet.nanmean(t, 1).sum().backward()
    torch.nanmean(p, 1).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-12, atol=0, what="nanmean gradient")


def test_nanmean_gradient_of_an_all_nan_row_is_nan(device):
    # PyTorch: grad / count (inf for a count of 0) times the not-NaN mask: NaN on an all-NaN row;
    # the rows with some numbers keep 0 at their NaNs. Also through create_graph (the backward's backward).
    x = numpy.array([[numpy.nan, numpy.nan, numpy.nan], [1.0, numpy.nan, 2.0], [3.0, 4.0, 5.0]])
    t, p = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        tinynet.nanmean(t, 1).sum().backward()
        (g,) = tinynet.autograd.grad(tinynet.nansum(t * t), t, create_graph=True)
    torch.nanmean(p, 1).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-12, atol=0, what="nanmean gradient")
    assert numpy.isnan(as_numpy(t.grad)[0]).all()  # assert_allclose matches NaNs by default
    (q,) = torch.autograd.grad(torch.nansum(p * p), p, create_graph=True)
    assert_close(g, q, rtol=1e-12, atol=0, what="nansum gradient (create_graph)")
