"""Signs and steps (ops/pointwise_sign.py): copysign, heaviside, signbit, sgn and fix
(functions, methods and in-place methods) against PyTorch on every backend: values with NaN
and signed zeros, dtypes, gradients (gradcheck in float64) and errors."""
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


@pytest.mark.parametrize("name", ["copysign"])
def test_binary_functions_match_torch(name, device):
    ours, theirs = getattr(tinynet, name), getattr(torch, name)
    check_op(device, ours, theirs, [A, B])                              # gradients, gradcheck
    check_op(device, ours, theirs, [EDGE_A, EDGE_B], grad=False)        # NaN, -0.0, ties
    check_op(device, lambda x, y: getattr(x, name)(y), lambda x, y: getattr(x, name)(y), [A, B[:1]])  # broadcast


def test_numbers_and_integers_as_torch(device):
    ints = numpy.array([-3, 0, 2, 5])
    check_op(device, lambda x: tinynet.copysign(x, -1), lambda x: torch.copysign(x, -1), [ints], grad=False)
    check_op(device, lambda x: tinynet.copysign(x, -0.0), lambda x: torch.copysign(x, -0.0), [A])


def test_unary_signs(device):
    check_op(device, tinynet.signbit, torch.signbit, [EDGE_A], grad=False)
    check_op(device, tinynet.signbit, torch.signbit, [numpy.array([-1, 0, 3])], grad=False)
    check_op(device, tinynet.sgn, torch.sgn, [A])
    check_op(device, tinynet.fix, torch.fix, [A * 3])
    check_op(device, lambda x: x.fix(), lambda x: x.fix(), [EDGE_A], grad=False)
    assert tinynet.signbit(tinynet.tensor([True, False], device=device)).tolist() == [False, False]


def test_heaviside_matches_torch_and_has_no_gradient(device):
    x = numpy.array([-1.5, 0.0, 2.0, numpy.nan, -0.0])
    check_op(device, tinynet.heaviside, torch.heaviside, [x, numpy.array([0.25])], grad=False)
    check_op(device, tinynet.heaviside, torch.heaviside, [x, numpy.array([0.5, 1.0, 2.0, 3.0, 4.0])], grad=False)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    assert not tinynet.heaviside(t, tinynet.tensor([0.5], dtype=t.dtype, device=device)).requires_grad
    with pytest.raises(errors.DTypeError, match="heaviside: input and values must have the same dtype"):
        tinynet.heaviside(t, tinynet.tensor([0.5], dtype="float32", device=device))


def test_in_place_methods_as_torch(device):
    for name, args in (("copysign_", (-1.0,)), ("sgn_", ()), ("fix_", ())):
        ours = tinynet.tensor(A, device=device)
        theirs = torch.tensor(A)
        assert getattr(ours, name)(*args) is ours
        getattr(theirs, name)(*args)
        assert_close(ours, theirs, rtol=1e-6, atol=1e-6, what=name)
    x = tinynet.tensor(numpy.array([-1.0, 0.0, 2.0]), device=device)
    assert x.heaviside_(tinynet.tensor([0.5], dtype=x.dtype, device=device)) is x
    assert x.tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(errors.ArgumentTypeError, match="copysign_"):
        tinynet.zeros(2, device=device).copysign_()


def test_errors_as_torch(device):
    x = tinynet.zeros(3, device=device)
    with pytest.raises(errors.ArgumentTypeError, match="copysign: unsupported operand type str"):
        tinynet.copysign(x, "a")
