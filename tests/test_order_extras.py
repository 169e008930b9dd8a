"""nanmedian (over all values, and along a dim with indices) and combinations against
PyTorch on every backend: NaN slices, ties, integers, gradients, shapes and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(103)
X = R.standard_normal((4, 6))
WITH_NAN = X.copy()
WITH_NAN[0, 2] = WITH_NAN[2, :3] = numpy.nan


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


@pytest.mark.parametrize("r,with_replacement", [(2, False), (3, False), (1, False), (2, True), (3, True), (5, False)])
def test_combinations_match_torch(r, with_replacement, device):
    x = R.standard_normal(4)
    check_op(device, lambda t: tinynet.combinations(t, r, with_replacement),
             lambda t: torch.combinations(t, r, with_replacement), [x])


def test_errors(device):
    x = tinynet.zeros(2, 2, device=device)
    with pytest.raises(RuntimeError):
        torch.combinations(torch.zeros(2, 2))
    with pytest.raises(errors.ShapeError, match="combinations: expect a 1-D vector"):
        tinynet.combinations(x)
    with pytest.raises(errors.ArgumentError, match="r must be non-negative"):
        tinynet.combinations(x[0], r=-1)
    with pytest.raises(errors.ArgumentTypeError, match="r must be an int"):
        tinynet.combinations(x[0], r=1.5)
    assert tinynet.combinations(x[0], r=0).shape == (0,)
    with pytest.raises(errors.ArgumentTypeError, match="keepdim=True needs a dim"):
        tinynet.nanmedian(x, keepdim=True)
    with pytest.raises(errors.IndexOutOfRangeError):
        tinynet.nanmedian(x, 2)
    with pytest.raises(errors.DTypeError):
        tinynet.nanmedian(tinynet.tensor([True, False], device=device))


@pytest.mark.parametrize("indices,shape", [([4, 7], (2, 4)), ([9, -1], (2, 4)), (5, (2, 4)),
                                           ([[0, 5], [3, 23]], (2, 3, 4)), ([4], 8)])
def test_unravel_index_matches_torch(indices, shape, device):
    ours = tinynet.unravel_index(tinynet.tensor(indices, device=device), shape)
    theirs = torch.unravel_index(torch.tensor(indices), shape)
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == tinynet.int64 and tuple(a.shape) == tuple(b.shape)
        numpy.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(errors.DTypeError, match="expected 'indices' to be integer dtype"):
        tinynet.unravel_index(tinynet.tensor([1.5], device=device), (2, 4))
    with pytest.raises(errors.ArgumentError, match="'shape' cannot have negative values"):
        tinynet.unravel_index(tinynet.tensor([1], device=device), (2, -4))


def test_iinfo_and_can_cast_as_torch():
    for ours, theirs in ((tinynet.int32, torch.int32), (tinynet.uint8, torch.uint8), (tinynet.int64, torch.int64),
                         (tinynet.int8, torch.int8), (tinynet.int16, torch.int16)):
        a, b = tinynet.iinfo(ours), torch.iinfo(theirs)
        assert (a.bits, a.max, a.min) == (b.bits, b.max, b.min)
    with pytest.raises(TypeError):
        torch.iinfo(torch.float32)
    with pytest.raises(errors.DTypeError, match="iinfo: requires an integer dtype"):
        tinynet.iinfo(tinynet.float32)
    pairs = [("float32", "int32"), ("int32", "float16"), ("int64", "bool"), ("bool", "int8"), ("float64", "float16"),
             ("uint8", "int8")]
    for a, b in pairs:
        assert tinynet.can_cast(getattr(tinynet, a), getattr(tinynet, b)) == torch.can_cast(getattr(torch, a),
                                                                                            getattr(torch, b)), (a, b)
