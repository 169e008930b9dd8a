"""logaddexp2 and float_power (ops/pointwise_binary.py; the other functions of two tensors are
in test_ops_elementwise.py) against PyTorch on every backend: values with NaN and signed zeros,
Python numbers, integers, dtypes, gradients (gradcheck in float64), the in-place float_power_
and errors."""
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


@pytest.mark.parametrize("name", ["logaddexp2", "float_power"])
def test_binary_functions_match_torch(name, device):
    ours, theirs = getattr(tinynet, name), getattr(torch, name)
    b = numpy.abs(B) + 0.5 if name == "float_power" else B  # real powers of positive bases
    a = numpy.abs(A) + 0.5 if name == "float_power" else A
    check_op(device, ours, theirs, [a, b])                              # gradients, gradcheck
    check_op(device, ours, theirs, [EDGE_A, EDGE_B], grad=False)        # NaN, -0.0, ties
    check_op(device, lambda x, y: getattr(x, name)(y), lambda x, y: getattr(x, name)(y), [a, b[:1]])  # broadcast


def test_numbers_and_integers_as_torch(device):
    ints = numpy.array([-3, 0, 2, 5])
    check_op(device, lambda x: tinynet.float_power(x, 3), lambda x: torch.float_power(x, 3), [A])
    check_op(device, lambda x: tinynet.float_power(2, x), lambda x: torch.float_power(2, x), [A])
    check_op(device, lambda x: tinynet.float_power(x, 2), lambda x: torch.float_power(x, 2), [ints], grad=False)
    check_op(device, lambda x: tinynet.logaddexp2(x, 1.5), lambda x: torch.logaddexp2(x, torch.tensor(1.5)), [A])


def test_float_power_in_place_as_torch(device):
    ours = tinynet.tensor(A, device=device)
    theirs = torch.tensor(A)
    assert ours.float_power_(2.0) is ours
    theirs.float_power_(2.0)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6, what="float_power_")
    with pytest.raises(RuntimeError):
        torch.zeros(2).float_power_(2)
    with pytest.raises(errors.DTypeError, match="float_power_: the base has dtype float32"):
        tinynet.zeros(2, device=device).float_power_(2)


def test_errors_as_torch(device):
    x = tinynet.zeros(3, device=device)
    with pytest.raises(errors.DTypeError, match="logaddexp2: not implemented for int64"):
        tinynet.logaddexp2(tinynet.tensor([1, 2], device=device), x[:2])
    with pytest.raises(errors.ArgumentTypeError, match="float_power: expected at least one Tensor"):
        tinynet.float_power(2, 3)
