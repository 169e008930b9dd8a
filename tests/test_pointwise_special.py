"""The special functions xlogy, logit, sinc (ops/pointwise_special.py) and the composed
elementwise deg2rad, rad2deg, frac (ops/unary.py) against PyTorch on every backend: values,
dtypes, gradients (and gradcheck), the calling forms and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(61)
M = R.standard_normal((3, 4))
P = R.uniform(0.05, 0.95, (3, 4))          # probabilities for logit
POS = R.uniform(0.2, 3.0, (3, 4))           # positive values for xlogy's other
X0 = numpy.where(R.random((3, 4)) < 0.3, 0.0, M)  # xlogy's input with zeros


def test_elementwise_match_torch(device):
    check_op(device, tinynet.deg2rad, torch.deg2rad, [M * 90])
    check_op(device, lambda x: x.rad2deg(), lambda x: x.rad2deg(), [M])
    check_op(device, tinynet.xlogy, torch.xlogy, [X0, POS], second_order=True)
    check_op(device, lambda x: tinynet.xlogy(x, 2.5), lambda x: torch.xlogy(x, 2.5), [X0])
    check_op(device, lambda y: tinynet.xlogy(0.5, y), lambda y: torch.xlogy(0.5, y), [POS])
    check_op(device, tinynet.logit, torch.logit, [P])
    check_op(device, lambda x: x.logit(eps=0.1), lambda x: x.logit(eps=0.1), [R.uniform(-0.2, 1.2, (3, 4))])
    check_op(device, tinynet.sinc, torch.sinc, [numpy.concatenate([M.ravel(), [0.0]])])
    check_op(device, lambda x: x.frac(), lambda x: x.frac(), [M * 3])


def test_integers_and_edges_as_torch(device):
    i = numpy.array([0, 1, 2, 7])
    for name in ("deg2rad", "rad2deg", "logit", "sinc"):
        assert_close(getattr(tinynet, name)(tinynet.tensor(i, device=device)), getattr(torch, name)(torch.tensor(i)),
                     rtol=1e-6, atol=1e-7, what=name)
    a, b = numpy.array([0.0, 0.0, 2.0, 1.0, 0.0]), numpy.array([0.0, numpy.nan, 3.0, 0.0, -1.0])
    assert_close(tinynet.xlogy(tinynet.tensor(a, device=device), tinynet.tensor(b, device=device)),
                 torch.xlogy(torch.tensor(a), torch.tensor(b)), rtol=1e-12, atol=0, what="xlogy at 0, NaN, -1")
    assert_close(tinynet.xlogy(tinynet.tensor([1, 2], device=device), 3), torch.xlogy(torch.tensor([1, 2]), 3),
                 rtol=1e-6, atol=0, what="xlogy of ints")
    with pytest.raises(NotImplementedError):
        torch.frac(torch.tensor(i))
    with pytest.raises(errors.DTypeError, match="frac: not implemented for int64"):
        tinynet.frac(tinynet.tensor(i, device=device))
    with pytest.raises(errors.ArgumentTypeError, match="xlogy: expected at least one Tensor"):
        tinynet.xlogy(1.0, 2.0)
    with pytest.raises(errors.ArgumentTypeError, match="logit: eps must be a number"):
        tinynet.logit(tinynet.tensor(P, device=device), eps="a")
