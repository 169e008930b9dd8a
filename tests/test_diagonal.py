"""Diagonals and triangles (ops/diagonal.py beyond tril/triu/diag/diagonal, which
test_ops_rearrange.py covers): diag_embed, diagflat and block_diag against PyTorch on every
backend: values, dtypes, gradients (gradcheck) and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(131)
M = R.standard_normal((3, 4))


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, -2, -1), (-2, -2, -1), (1, 0, 2), (-1, 2, 0)])
def test_diag_embed_and_diagflat_match_torch(offset, dim1, dim2, device):
    x = R.standard_normal((2, 3))
    check_op(device, lambda t: tinynet.diag_embed(t, offset, dim1, dim2), lambda t: torch.diag_embed(t, offset, dim1,
                                                                                                      dim2), [x])
    check_op(device, lambda t: t.diagflat(offset), lambda t: t.diagflat(offset), [x])
    with pytest.raises(errors.ArgumentError, match="cannot be identical"):
        tinynet.diag_embed(tinynet.zeros(2, 3, device=device), 0, 1, 1)


def test_block_diag_matches_torch(device):
    check_op(device, lambda a, b, c: tinynet.block_diag(a, b, c), lambda a, b, c: torch.block_diag(a, b, c),
             [M, R.standard_normal(3), numpy.array(1.5)])
    i = tinynet.tensor([[1, 2]], device=device)
    f = tinynet.tensor([0.5], device=device)
    assert_close(tinynet.block_diag(i, f), torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([0.5])), rtol=0,
                 atol=0, what="block_diag dtype promotion")
    with pytest.raises(errors.ShapeError, match="block_diag: Input tensors must have 2 or fewer dimensions"):
        tinynet.block_diag(tinynet.ones(1, 1, 1, device=device))
