"""The NaN-ignoring maxima and minima (ops/compare_extrema.py): fmax and fmin (functions and
methods) against PyTorch on every backend: values with NaN, signed zeros and ties, the
gradient at ties, integers and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(73)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))
EDGE_A = numpy.array([1.0, numpy.nan, -2.0, 3.0, 0.0, -0.0, numpy.nan, 4.0])
EDGE_B = numpy.array([numpy.nan, numpy.nan, 5.0, 3.0, -1.0, 2.0, 1.0, -0.0])


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_binary_functions_match_torch(name, device):
    ours, theirs = getattr(tinynet, name), getattr(torch, name)
    check_op(device, ours, theirs, [A, B])                              # gradients, gradcheck
    check_op(device, ours, theirs, [EDGE_A, EDGE_B], grad=False)        # NaN, -0.0, ties
    check_op(device, lambda x, y: getattr(x, name)(y), lambda x, y: getattr(x, name)(y), [A, B[:1]])  # broadcast


def test_ties_send_the_gradient_to_input_as_torch(device):
    a = numpy.array([1.0, 2.0, numpy.nan, 3.0])
    b = numpy.array([1.0, numpy.nan, 1.0, 3.0])
    for name in ("fmax", "fmin"):  # not differentiable at the ties: no gradcheck, PyTorch's convention
        x, y = (tinynet.tensor(v, device=device, requires_grad=True) for v in (a, b))
        tx, ty = (torch.tensor(v, requires_grad=True) for v in (a, b))
        getattr(tinynet, name)(x, y).sum().backward()
        getattr(torch, name)(tx, ty).sum().backward()
        assert_close(x.grad, tx.grad, rtol=0, atol=0, what=f"{name} d/dinput")
        assert_close(y.grad, ty.grad, rtol=0, atol=0, what=f"{name} d/dother")


def test_integers_as_torch(device):
    ints = numpy.array([-3, 0, 2, 5])
    check_op(device, lambda x, y: tinynet.fmax(x, y), lambda x, y: torch.fmax(x, y), [ints, ints[::-1].copy()],
             grad=False)


def test_errors_as_torch(device):
    x = tinynet.zeros(3, device=device)
    with pytest.raises(errors.ArgumentTypeError, match="fmax: other must be a Tensor"):
        tinynet.fmax(x, 1.0)
    with pytest.raises(errors.ShapeError):
        tinynet.fmin(x, tinynet.zeros(4, device=device))
