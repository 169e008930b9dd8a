"""index_put and Tensor.index_put(_) against PyTorch on every backend: integer index tuples
(with repeats when accumulating), bool masks, broadcast values, gradients of the input and
the values, and errors."""
import numpy
import pytest

import tinynet
from helpers import check_op, rng, torch
from tinynet import errors

R = rng(101)
X = R.standard_normal((3, 4))
ROWS, COLS = numpy.array([0, 2, 1]), numpy.array([1, 3, 0])
REPEATS = numpy.array([0, 2, 0]), numpy.array([1, 3, 1])


def _ours(accumulate):
    return lambda x, i, j, v: tinynet.index_put(x, (i, j), v, accumulate=accumulate)


def _theirs(accumulate):
    return lambda x, i, j, v: torch.index_put(x, (i, j), v, accumulate=accumulate)


def test_integer_indices_match_torch(device):
    v = R.standard_normal(3)
    check_op(device, _ours(False), _theirs(False), [X, ROWS, COLS, v])
    check_op(device, _ours(True), _theirs(True), [X, *REPEATS, v])            # repeats add up
    check_op(device, lambda x, i, v: x.index_put((i,), v), lambda x, i, v: x.index_put((i,), v),
             [X, numpy.array([2, 0]), R.standard_normal(4)])                   # whole rows, broadcast
    check_op(device, lambda x, i, v: x.index_put((i,), v, accumulate=True),
             lambda x, i, v: x.index_put((i,), v, accumulate=True), [X, numpy.array([1, 1]), R.standard_normal((2, 4))])


def test_bool_mask_and_in_place_match_torch(device):
    mask = X > 0.2
    check_op(device, lambda x, m, v: x.index_put((m,), v), lambda x, m, v: x.index_put((m,), v),
             [X, mask, numpy.array(-1.5)])
    ours, theirs = tinynet.tensor(X, device=device), torch.tensor(X)
    assert ours.index_put_((tinynet.tensor(ROWS, device=device), tinynet.tensor(COLS, device=device)),
                           tinynet.tensor([1.0, 2.0, 3.0], dtype=ours.dtype, device=device), accumulate=True) is ours
    theirs.index_put_((torch.tensor(ROWS), torch.tensor(COLS)), torch.tensor([1.0, 2.0, 3.0], dtype=theirs.dtype),
                      accumulate=True)
    numpy.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_errors(device):
    x = tinynet.tensor(X, device=device)
    i = tinynet.tensor(ROWS, device=device)
    with pytest.raises(errors.ArgumentTypeError, match="index_put: indices must be a tuple of tensors"):
        tinynet.index_put(x, i, tinynet.ones(3, device=device))
    with pytest.raises(errors.ShapeError, match="index_put: cannot assign values of shape \\(5,\\) to the indices"):
        tinynet.index_put(x, (i, i), tinynet.ones(5, dtype=x.dtype, device=device), accumulate=True)
    with pytest.raises(errors.DTypeError):
        tinynet.index_put(x, (tinynet.tensor([0.5], device=device),), tinynet.ones(1, device=device))
    if device == "cpu":
        with pytest.raises(errors.IndexOutOfRangeError):
            tinynet.index_put(x, (tinynet.tensor([7], device=device),), tinynet.ones(4, dtype=x.dtype, device=device),
                              accumulate=True)
