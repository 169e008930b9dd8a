"""Index-based updates (ops/index_update.py): index_add, index_copy, index_fill (and their
in-place methods) and masked_scatter against PyTorch on every backend: values, gradients of
input and source (gradcheck), repeated and negative indices, 0-d inputs, and errors
(index_put: test_index_put.py; take: test_ops_index.py)."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(141)
X = R.standard_normal((4, 5))


@pytest.mark.parametrize("dim,index", [(0, [2, 0]), (1, [4, 1, 1]), (-1, [0])])
def test_index_add_copy_fill_match_torch(dim, index, device):
    idx = numpy.array(index)
    shape = list(X.shape)
    shape[dim] = len(idx)
    src = R.standard_normal(shape)
    ti = lambda: tinynet.tensor(idx, device=device)  # noqa: E731
    check_op(device, lambda x, s: tinynet.index_add(x, dim, ti(), s), lambda x, s: torch.index_add(
        x, dim, torch.tensor(idx), s), [X, src])
    check_op(device, lambda x, s: x.index_add(dim, ti(), s, alpha=-2.5), lambda x, s: x.index_add(
        dim, torch.tensor(idx), s, alpha=-2.5), [X, src])
    if len(set(index)) == len(index):  # repeated indices: which write wins is unspecified in both
        check_op(device, lambda x, s: tinynet.index_copy(x, dim, ti(), s), lambda x, s: torch.index_copy(
            x, dim, torch.tensor(idx), s), [X, src])
    check_op(device, lambda x: x.index_fill(dim, ti(), -3.0), lambda x: x.index_fill(dim, torch.tensor(idx), -3.0),
             [X])


def test_in_place_versions_match_torch(device):
    idx, src = numpy.array([3, 1]), R.standard_normal((2, 5))
    for name, args in (("index_add_", (0, idx, src)), ("index_copy_", (0, idx, src)), ("index_fill_", (1, idx, 7.0))):
        ours = tinynet.tensor(X, device=device)
        theirs = torch.tensor(X)
        conv = [tinynet.tensor(a, device=device) if isinstance(a, numpy.ndarray) else a for a in args]
        assert getattr(ours, name)(*conv) is ours
        getattr(theirs, name)(*[torch.tensor(a) if isinstance(a, numpy.ndarray) else a for a in args])
        assert_close(ours, theirs, rtol=0, atol=0, what=name)
    t = tinynet.tensor(X, device=device, requires_grad=True)
    s = tinynet.tensor(src, device=device, requires_grad=True)
    p, q = torch.tensor(X, requires_grad=True), torch.tensor(src, requires_grad=True)
    a, b = t * 1.0, p * 1.0
    a.index_add_(0, tinynet.tensor(idx, device=device), s)
    b.index_add_(0, torch.tensor(idx), q)
    g = R.standard_normal(X.shape)
    (a * tinynet.tensor(g, device=device)).sum().backward()
    (b * torch.tensor(g)).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-12, atol=0, what="index_add_ input gradient")
    assert_close(s.grad, q.grad, rtol=1e-12, atol=0, what="index_add_ source gradient")


def test_masked_scatter_matches_torch(device):
    mask = R.random((4, 5)) < 0.4
    src = R.standard_normal((4, 5))
    check_op(device, lambda x, s: x.masked_scatter(tinynet.tensor(mask, device=device), s),
             lambda x, s: x.masked_scatter(torch.tensor(mask), s), [X, src])
    row = numpy.array([True, False, True, False, True])  # broadcast over the rows
    check_op(device, lambda x, s: tinynet.masked_scatter(x, tinynet.tensor(row, device=device), s),
             lambda x, s: torch.masked_scatter(x, torch.tensor(row), s), [X, src])
    ours = tinynet.tensor(X, device=device)
    ours.masked_scatter_(tinynet.tensor(mask, device=device), tinynet.tensor(src, device=device))
    assert_close(ours, torch.tensor(X).masked_scatter_(torch.tensor(mask), torch.tensor(src)), rtol=0, atol=0,
                 what="masked_scatter_")


def test_bad_input(device):
    x = tinynet.tensor(X, device=device)
    i = tinynet.tensor([0, 1], device=device)
    with pytest.raises(errors.ShapeError, match="source must have shape"):
        tinynet.index_add(x, 0, i, tinynet.zeros(3, 5, dtype=x.dtype, device=device))
    with pytest.raises(errors.DTypeError, match="index must be an integer tensor"):
        tinynet.index_copy(x, 0, i.float(), tinynet.zeros(2, 5, dtype=x.dtype, device=device))
    with pytest.raises(errors.DTypeError, match="same dtype"):
        tinynet.index_add(x, 0, i, tinynet.zeros(2, 5, dtype=tinynet.float32, device=device))
    with pytest.raises(errors.ArgumentTypeError, match="value must be a number"):
        tinynet.index_fill(x, 0, i, "a")
    with pytest.raises(errors.DTypeError, match="mask must be a bool tensor"):
        tinynet.masked_scatter(x, tinynet.zeros(4, 5, device=device), x)
    with pytest.raises(errors.ShapeError, match="selects 20 elements but source has only 3"):
        tinynet.masked_scatter(x, tinynet.ones(4, 5, dtype=tinynet.bool, device=device), x[0, :3])
