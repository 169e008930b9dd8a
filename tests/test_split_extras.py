"""hsplit/vsplit/dsplit, column_stack/row_stack/dstack and tensordot against PyTorch on every
backend: pieces (views of the input), values, gradients, the calling forms and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(79)
X = R.standard_normal((4, 6, 2))


@pytest.mark.parametrize("name,arg", [("hsplit", 3), ("hsplit", [1, 4]), ("vsplit", 2), ("vsplit", [3]),
                                      ("dsplit", 2), ("dsplit", [1])])
def test_splits_match_torch(name, arg, device):
    pieces = getattr(tinynet, name)(tinynet.tensor(X, device=device), arg)
    ref = getattr(torch, name)(torch.tensor(X), arg)
    assert len(pieces) == len(ref)
    for k, (p, r) in enumerate(zip(pieces, ref)):
        assert_close(p, r, rtol=0, atol=0, what=f"{name} piece {k}")
        # each piece feeds its own gradient slice, as PyTorch's views do
        check_op(device, lambda t: getattr(t, name)(arg)[k] * 2, lambda t: getattr(t, name)(arg)[k] * 2, [X])
    one_d = numpy.arange(6.0)
    check_op(device, lambda t: tinynet.hsplit(t, 3)[1], lambda t: torch.hsplit(t, 3)[1], [one_d])


def test_stacks_match_torch(device):
    a, b, s = R.standard_normal(3), R.standard_normal((3, 2)), R.standard_normal(())
    check_op(device, lambda x, y: tinynet.column_stack([x, y]), lambda x, y: torch.column_stack([x, y]), [a, b])
    c, d = R.standard_normal(3), R.standard_normal((3, 2, 4))
    check_op(device, lambda x, y: tinynet.row_stack([x, y]), lambda x, y: torch.vstack([x, y]), [a, c])
    check_op(device, lambda x, y: tinynet.dstack((x, y)), lambda x, y: torch.dstack((x, y)), [a, c])
    check_op(device, lambda x, y: tinynet.dstack([x, y]), lambda x, y: torch.dstack([x, y]), [b, d])
    check_op(device, lambda x: tinynet.column_stack([x, x]), lambda x: torch.column_stack([x, x]),
             [numpy.asarray(s)], grad=False)


@pytest.mark.parametrize("dims", [2, 1, 0, ([1, 2], [1, 0]), ([0], [2])])
def test_tensordot_matches_torch(dims, device):
    a, b = R.standard_normal((2, 3, 4)), R.standard_normal((4, 3, 5)) if dims != ([0], [2]) else None
    if dims == 2:
        b = R.standard_normal((3, 4, 5))
    elif dims == 1:
        b = R.standard_normal((4, 5))
    elif dims == 0:
        b = R.standard_normal((2, 3))
    elif dims == ([0], [2]):
        b = R.standard_normal((3, 5, 2))
    check_op(device, lambda x, y: tinynet.tensordot(x, y, dims=dims), lambda x, y: torch.tensordot(x, y, dims=dims),
             [a, b])


def test_errors_as_torch(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(RuntimeError):
        torch.hsplit(torch.tensor(X), 4)
    with pytest.raises(errors.ArgumentError, match="hsplit: dimension 1 of size 6 is not divisible"):
        tinynet.hsplit(x, 4)
    with pytest.raises(errors.ShapeError, match="vsplit: requires a tensor with at least 2"):
        tinynet.vsplit(tinynet.zeros(3, device=device), 1)
    with pytest.raises(errors.ShapeError, match="dsplit: requires a tensor with at least 3"):
        tinynet.dsplit(tinynet.zeros(3, 2, device=device), 1)
    with pytest.raises(errors.ArgumentTypeError, match="hsplit: indices_or_sections must be an int"):
        tinynet.hsplit(x, 2.0)
    with pytest.raises(errors.ShapeError, match="tensordot: contracted dimensions must match"):
        tinynet.tensordot(x, tinynet.zeros(3, 3, device=device), dims=1)
    with pytest.raises(errors.ShapeError, match="both dimension lists must have the same length"):
        tinynet.tensordot(x, x, dims=([0, 1], [0]))
    with pytest.raises(errors.ArgumentTypeError, match="tensordot: dims must be"):
        tinynet.tensordot(x, x, dims="a")
    with pytest.raises(errors.ArgumentError, match="expected a sequence of tensors, got a single Tensor"):
        tinynet.dstack(x)


@pytest.mark.parametrize("name,args", [
    ("conv2d", lambda: (R.standard_normal((2, 3, 6, 6)), R.standard_normal((4, 3, 3, 3)))),
    ("conv1d", lambda: (R.standard_normal((2, 3, 7)), R.standard_normal((4, 3, 2)))),
    ("max_pool2d", lambda: (R.standard_normal((2, 3, 6, 6)),)),
    ("max_pool1d", lambda: (R.standard_normal((2, 3, 6)),)),
    ("avg_pool1d", lambda: (R.standard_normal((2, 3, 6)),)),
    ("cosine_similarity", lambda: (R.standard_normal((3, 4)), R.standard_normal((3, 4)))),
    ("pairwise_distance", lambda: (R.standard_normal((3, 4)), R.standard_normal((3, 4)))),
    ("hardshrink", lambda: (R.standard_normal((3, 4)),)),
    ("pixel_shuffle", lambda: (R.standard_normal((1, 8, 2, 2)),)),
])
def test_torch_level_functional_spellings(name, args, device):
    """torch.conv2d, torch.max_pool2d, ... are the functional ops under torch's namespace:
    the same function, called as PyTorch users call torch.<name>."""
    import tinynet.nn.functional as F
    assert getattr(tinynet, name) is getattr(F, name)
    extra = {"max_pool2d": (2,), "max_pool1d": (2,), "avg_pool1d": (3,), "pixel_shuffle": (2,)}.get(name, ())
    check_op(device, lambda *t: getattr(tinynet, name)(*t, *extra), lambda *t: getattr(torch, name)(*t, *extra),
             list(args()))


def test_constants_as_torch():
    assert (tinynet.pi, tinynet.e, tinynet.inf) == (torch.pi, torch.e, torch.inf)
    assert numpy.isnan(tinynet.nan) and tinynet.newaxis is None is torch.newaxis
    assert tinynet.zeros(2, 3)[tinynet.newaxis, :, None].shape == (1, 2, 1, 3)
