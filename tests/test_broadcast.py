"""Ranks and broadcasting (ops/broadcast.py): atleast_1d/2d/3d, broadcast_shapes and
broadcast_tensors against PyTorch on every backend: shapes, the calling forms, gradients and
errors."""
import pytest

import tinynet
from helpers import check_op, rng, torch
from tinynet import errors

R = rng(61)


def test_atleast_and_broadcasting_as_torch(device):
    shapes = [(), (3,), (2, 3), (2, 3, 4)]
    arrays = [R.standard_normal(s) for s in shapes]
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        ours, theirs = getattr(tinynet, name), getattr(torch, name)
        for a in arrays:
            check_op(device, ours, theirs, [a])
        many = ours(*[tinynet.tensor(a, device=device) for a in arrays])
        ref = theirs(*[torch.tensor(a) for a in arrays])
        assert isinstance(many, tuple) and [tuple(t.shape) for t in many] == [tuple(t.shape) for t in ref]
        listed = ours([tinynet.tensor(a, device=device) for a in arrays[:1]])
        assert isinstance(listed, tuple) and len(listed) == 1
        with pytest.raises(errors.ArgumentTypeError, match=f"{name}: tensors\\[1\\] must be a Tensor"):
            ours(tinynet.zeros(2, device=device), [1, 2])
    for shapes_ in [((2, 1), (3,)), ((5, 1, 4), (3, 1), 1), ((0, 1), (3,)), ()]:
        assert tinynet.broadcast_shapes(*shapes_) == tuple(torch.broadcast_shapes(*shapes_))
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2, 3), (4,))
    with pytest.raises(errors.ShapeError, match="broadcast_shapes: shapes"):
        tinynet.broadcast_shapes((2, 3), (4,))
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.broadcast_shapes(("a",))
    a, b = R.standard_normal((2, 1)), R.standard_normal((3,))
    check_op(device, lambda x, y: tinynet.broadcast_tensors(x, y)[0] * 2 + tinynet.broadcast_tensors(x, y)[1],
             lambda x, y: torch.broadcast_tensors(x, y)[0] * 2 + torch.broadcast_tensors(x, y)[1], [a, b])
