"""Grids, index sets and combinations (ops/grids.py): meshgrid, cartesian_prod, combinations,
unravel_index, tril_indices/triu_indices and vander against PyTorch on every backend: values,
dtypes, gradients where PyTorch has them, and bad arguments."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(51)
M = R.standard_normal((3, 4))
T3 = R.standard_normal((2, 3, 4))


@pytest.mark.parametrize("args", [(3, 4), (4, 3, 1), (4, 3, -2), (0, 3), (5, 5, 10)])
def test_triangle_indices_match_torch(args, device):
    for ours, theirs in ((tinynet.tril_indices, torch.tril_indices), (tinynet.triu_indices, torch.triu_indices)):
        out = ours(*args, device=device)
        assert out.device.type == tinynet.device(device).type  # 'cuda' lands on 'cuda:0', as in PyTorch
        assert_close(out, theirs(*args), rtol=0, atol=0, what=f"{ours.__name__}{args}")
    assert tinynet.tril_indices(3, 3, dtype=tinynet.int32).dtype == tinynet.int32


def test_cartesian_prod_matches_torch(device):
    check_op(device, lambda a, b, c: tinynet.cartesian_prod(a, b, c), lambda a, b, c: torch.cartesian_prod(a, b, c),
             [R.standard_normal(2), R.standard_normal(3), R.standard_normal(2)])


def test_bad_arguments_raise_typed_errors(device):
    m = tinynet.tensor(M, device=device)
    with pytest.raises(errors.ArgumentError, match="cartesian_prod: expect a 1D vector"):
        tinynet.cartesian_prod(m, m[0])
    with pytest.raises(errors.ArgumentError, match="tril_indices: row must be >= 0"):
        tinynet.tril_indices(-1, 3)
    with pytest.raises(errors.ArgumentError, match="dtype must be an integer dtype"):
        tinynet.triu_indices(3, 3, dtype=tinynet.float32)


@pytest.mark.parametrize("r,with_replacement", [(2, False), (3, False), (1, False), (2, True), (3, True), (5, False)])
def test_combinations_match_torch(r, with_replacement, device):
    x = R.standard_normal(4)
    check_op(device, lambda t: tinynet.combinations(t, r, with_replacement),
             lambda t: torch.combinations(t, r, with_replacement), [x])


def test_combinations_errors(device):
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


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_torch_and_passes_gradients(indexing, device):
    a, b, c = R.standard_normal(3), R.standard_normal(2), R.standard_normal(4)
    check_op(device, lambda x, y, z: tinynet.stack(tinynet.meshgrid(x, y, z, indexing=indexing)),
             lambda x, y, z: torch.stack(torch.meshgrid(x, y, z, indexing=indexing)), [a, b, c])


def test_meshgrid_errors(device):
    x = tinynet.tensor(M, device=device)
    with pytest.raises(errors.ArgumentError, match="meshgrid: indexing must be 'ij' or 'xy'"):
        tinynet.meshgrid(x[0], indexing="yx")
    with pytest.raises(errors.ArgumentError, match="meshgrid: expected 0D or 1D tensors"):
        tinynet.meshgrid(x)


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
