"""trace, fliplr, flipud, rot90, cartesian_prod, block_diag, clamp_min/clamp_max and
tril_indices/triu_indices against PyTorch on every backend: values, dtypes, gradients
where PyTorch has them, and bad arguments."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(51)
M = R.standard_normal((3, 4))
T3 = R.standard_normal((2, 3, 4))


def test_trace_flips_and_clamps_match_torch(device):
    check_op(device, tinynet.trace, torch.trace, [M])
    check_op(device, lambda x: x.fliplr(), lambda x: x.fliplr(), [T3])
    check_op(device, tinynet.flipud, torch.flipud, [M[0]])
    check_op(device, lambda x: x.clamp_min(0.2), lambda x: x.clamp_min(0.2), [M])
    check_op(device, lambda x: tinynet.clamp_max(x, -0.1), lambda x: torch.clamp_max(x, -0.1), [M])


@pytest.mark.parametrize("k,dims", [(1, (0, 1)), (2, (0, 1)), (3, (0, 1)), (-1, (0, 1)), (5, (1, 0)),
                                    (1, (2, 0)), (0, (1, 2))])
def test_rot90_matches_torch(k, dims, device):
    check_op(device, lambda x: tinynet.rot90(x, k, dims), lambda x: torch.rot90(x, k, dims), [T3])


def test_cartesian_prod_and_block_diag_match_torch(device):
    check_op(device, lambda a, b, c: tinynet.cartesian_prod(a, b, c), lambda a, b, c: torch.cartesian_prod(a, b, c),
             [R.standard_normal(2), R.standard_normal(3), R.standard_normal(2)])
    check_op(device, lambda a, b, c: tinynet.block_diag(a, b, c), lambda a, b, c: torch.block_diag(a, b, c),
             [M, R.standard_normal(3), numpy.array(1.5)])
    i = tinynet.tensor([[1, 2]], device=device)
    f = tinynet.tensor([0.5], device=device)
    assert_close(tinynet.block_diag(i, f), torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([0.5])), rtol=0,
                 atol=0, what="block_diag dtype promotion")


@pytest.mark.parametrize("args", [(3, 4), (4, 3, 1), (4, 3, -2), (0, 3), (5, 5, 10)])
def test_triangle_indices_match_torch(args, device):
    for ours, theirs in ((tinynet.tril_indices, torch.tril_indices), (tinynet.triu_indices, torch.triu_indices)):
        out = ours(*args, device=device)
        assert out.device.type == tinynet.device(device).type  # 'cuda' lands on 'cuda:0', as in PyTorch
        assert_close(out, theirs(*args), rtol=0, atol=0, what=f"{ours.__name__}{args}")
    assert tinynet.tril_indices(3, 3, dtype=tinynet.int32).dtype == tinynet.int32


def test_bad_arguments_raise_typed_errors(device):
    m = tinynet.tensor(M, device=device)
    with pytest.raises(errors.ShapeError, match="trace: expected a matrix"):
        tinynet.trace(m[0])
    with pytest.raises(errors.ShapeError, match="fliplr: input tensor must be >= 2-d"):
        tinynet.fliplr(m[0])
    with pytest.raises(errors.ArgumentError, match="rot90: expected rotation dims to be different"):
        tinynet.rot90(m, 1, (1, 1))
    with pytest.raises(errors.ArgumentError, match="cartesian_prod: expect a 1D vector"):
        tinynet.cartesian_prod(m, m[0])
    with pytest.raises(errors.ShapeError, match="block_diag: Input tensors must have 2 or fewer dimensions"):
        tinynet.block_diag(tinynet.ones(1, 1, 1, device=device))
    with pytest.raises(errors.ArgumentError, match="tril_indices: row must be >= 0"):
        tinynet.tril_indices(-1, 3)
    with pytest.raises(errors.ArgumentError, match="dtype must be an integer dtype"):
        tinynet.triu_indices(3, 3, dtype=tinynet.float32)
