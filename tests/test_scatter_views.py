"""select_scatter, slice_scatter and diagonal_scatter (functions and methods) against PyTorch
on every backend: values, gradients of input and src (gradcheck), dims and offsets, errors."""
import pytest

import tinynet
from helpers import check_op, rng, torch
from tinynet import errors

R = rng(109)
X = R.standard_normal((3, 4, 5))


@pytest.mark.parametrize("dim,index", [(0, 1), (1, -1), (2, 4)])
def test_select_scatter_matches_torch(dim, index, device):
    src = R.standard_normal(torch.tensor(X).select(dim, index).shape)
    check_op(device, lambda x, s: tinynet.select_scatter(x, s, dim, index),
             lambda x, s: torch.select_scatter(x, s, dim, index), [X, src])


@pytest.mark.parametrize("dim,start,end,step", [(0, None, None, 1), (1, 1, None, 2), (2, -3, 4, 1), (1, 3, 1, 1)])
def test_slice_scatter_matches_torch(dim, start, end, step, device):
    view = torch.tensor(X)[(slice(None),) * dim + (slice(start, end, step),)]
    src = R.standard_normal(tuple(view.shape))
    check_op(device, lambda x, s: x.slice_scatter(s, dim, start, end, step),
             lambda x, s: x.slice_scatter(s, dim, start, end, step), [X, src])


@pytest.mark.parametrize("offset,dim1,dim2", [(0, 0, 1), (1, 1, 2), (-1, 0, 2), (2, 2, 0), (-2, 2, 1)])
def test_diagonal_scatter_matches_torch(offset, dim1, dim2, device):
    src = R.standard_normal(tuple(torch.tensor(X).diagonal(offset, dim1, dim2).shape))
    check_op(device, lambda x, s: tinynet.diagonal_scatter(x, s, offset, dim1, dim2),
             lambda x, s: torch.diagonal_scatter(x, s, offset, dim1, dim2), [X, src])


def test_errors(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(RuntimeError):
        torch.select_scatter(torch.tensor(X), torch.zeros(3, 4), 1, 0)
    with pytest.raises(errors.ShapeError, match="select_scatter: src must have the shape of the embedded view"):
        tinynet.select_scatter(x, tinynet.zeros(3, 4, device=device), 1, 0)
    with pytest.raises(errors.IndexOutOfRangeError, match="select_scatter: index 4 out of range"):
        tinynet.select_scatter(x, tinynet.zeros(3, 5, device=device), 1, 4)
    with pytest.raises(errors.ArgumentError):
        tinynet.slice_scatter(x, x, 0, step=0)
    with pytest.raises(errors.ShapeError, match="dim1 and dim2 cannot be identical"):
        tinynet.diagonal_scatter(x, x, 0, 1, 1)
    with pytest.raises(errors.ShapeError, match="diagonal_scatter: src must have the shape"):
        tinynet.diagonal_scatter(x, tinynet.zeros(2, device=device))
    with pytest.raises(errors.ArgumentTypeError, match="slice_scatter: start must be an int or None"):
        tinynet.slice_scatter(x, x, 0, start=1.5)
