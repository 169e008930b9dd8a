"""F.adaptive_max_pool1d/2d, nn.AdaptiveMaxPool1d/2d and torch.adaptive_max_pool1d against
PyTorch on every backend: values, indices, gradients (the first maximum of each window),
tiling and overlapping windows, unbatched input, printed layers and errors."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(71)


@pytest.mark.parametrize("shape,size", [((2, 3, 8, 6), (4, 3)), ((2, 3, 7, 5), (3, 2)), ((2, 3, 7, 5), 1),
                                        ((3, 9, 4), (4, None)), ((1, 2, 5, 5), (5, 5)), ((2, 1, 3, 3), (4, 2))])
def test_adaptive_max_pool2d_matches_torch(shape, size, device):
    x = R.standard_normal(shape)
    check_op(device, lambda t: F.adaptive_max_pool2d(t, size), lambda t: torch.nn.functional.adaptive_max_pool2d(
        t, size), [x])
    v, i = F.adaptive_max_pool2d(tinynet.tensor(x, device=device), size, return_indices=True)
    rv, ri = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), size, return_indices=True)
    assert_close(v, rv, rtol=0, atol=0, what="values")
    assert_close(i, ri, rtol=0, atol=0, what="indices")
    assert i.dtype == tinynet.int64


@pytest.mark.parametrize("shape,size", [((2, 3, 10), 4), ((3, 9), 3), ((2, 2, 5), 7)])
def test_adaptive_max_pool1d_matches_torch(shape, size, device):
    x = R.standard_normal(shape)
    check_op(device, lambda t: F.adaptive_max_pool1d(t, size), lambda t: torch.nn.functional.adaptive_max_pool1d(
        t, size), [x])
    ours = tinynet.adaptive_max_pool1d(tinynet.tensor(x, device=device), size)
    theirs = torch.adaptive_max_pool1d(torch.tensor(x), size)
    assert isinstance(ours, tuple) and len(ours) == 2
    assert_close(ours[0], theirs[0], rtol=0, atol=0, what="values")
    assert_close(ours[1], theirs[1], rtol=0, atol=0, what="indices")


def test_ties_send_the_gradient_to_the_first_maximum(device):
    x = numpy.zeros((1, 1, 5, 5))
    for size in ((2, 2), (5, 1), 1):
        t, p = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
        F.adaptive_max_pool2d(t, size).sum().backward()
        torch.nn.functional.adaptive_max_pool2d(p, size).sum().backward()
        assert_close(t.grad, p.grad, rtol=0, atol=0, what=f"tie gradient {size}")


def test_layers_print_and_run_as_torch(device):
    for ours, theirs in ((nn.AdaptiveMaxPool2d((3, None)), torch.nn.AdaptiveMaxPool2d((3, None))),
                         (nn.AdaptiveMaxPool1d(2, True), torch.nn.AdaptiveMaxPool1d(2, True))):
        assert repr(ours) == repr(theirs)
    x = R.standard_normal((2, 3, 7, 5))
    assert_close(nn.AdaptiveMaxPool2d((3, None))(tinynet.tensor(x, device=device)),
                 torch.nn.AdaptiveMaxPool2d((3, None))(torch.tensor(x)), rtol=0, atol=0, what="layer")
    v, i = nn.AdaptiveMaxPool1d(2, True)(tinynet.tensor(x[0], device=device))
    rv, ri = torch.nn.AdaptiveMaxPool1d(2, True)(torch.tensor(x[0]))
    assert_close(i, ri, rtol=0, atol=0, what="layer indices")


def test_bad_input(device):
    with pytest.raises(errors.ShapeError, match="adaptive_max_pool2d: expected non-empty"):
        F.adaptive_max_pool2d(tinynet.zeros(2, 3, 0, 5, device=device), 2)
    with pytest.raises(errors.ShapeError, match="expected a 3-D or 4-D input"):
        F.adaptive_max_pool2d(tinynet.zeros(5, 5, device=device), 2)
    with pytest.raises(errors.ArgumentError, match="output_size must be >= 1"):
        F.adaptive_max_pool2d(tinynet.zeros(1, 2, 5, 5, device=device), (0, 2))
    with pytest.raises(errors.ArgumentTypeError, match="output_size must be an int or a tuple of 2"):
        F.adaptive_max_pool2d(tinynet.zeros(1, 2, 5, 5, device=device), (1, 2, 3))
    with pytest.raises(errors.DTypeError):
        F.adaptive_max_pool1d(tinynet.zeros(2, 5, dtype=tinynet.int64, device=device), 2)
