"""Differences and integrals along a dim (ops/calculus.py): diff, trapezoid/trapz and
cumulative_trapezoid against PyTorch on every backend: values, gradients (gradcheck), the
argument forms and errors."""

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(131)


def test_trapezoid_matches_torch(device):
    y, x1, xs = R.standard_normal((3, 5)), numpy.sort(R.standard_normal(5)), numpy.sort(R.standard_normal((3, 5)), 1)
    check_op(device, tinynet.trapezoid, torch.trapezoid, [y])
    check_op(device, lambda t: tinynet.trapz(t, dx=0.5, dim=0), lambda t: torch.trapz(t, dx=0.5, dim=0), [y])
    check_op(device, tinynet.trapezoid, torch.trapezoid, [y, x1])
    check_op(device, lambda t, s: tinynet.trapezoid(t, s, dim=1), lambda t, s: torch.trapezoid(t, s, dim=1), [y, xs])
    check_op(device, tinynet.cumulative_trapezoid, torch.cumulative_trapezoid, [y, x1])
    check_op(device, lambda t: tinynet.cumulative_trapezoid(t, dx=2.0, dim=0),
             lambda t: torch.cumulative_trapezoid(t, dx=2.0, dim=0), [y])
    one = tinynet.trapezoid(tinynet.tensor([3.0], device=device))
    assert_close(one, torch.trapezoid(torch.tensor([3.0])), rtol=0, atol=0, what="one sample")
    with pytest.raises(errors.ArgumentError, match="either x or dx"):
        tinynet.trapezoid(tinynet.tensor(y, device=device), tinynet.tensor(x1, device=device), dx=1.0)
    with pytest.raises(errors.ShapeError, match="points"):
        tinynet.trapezoid(tinynet.tensor(y, device=device), tinynet.tensor(x1[:3], device=device))


def test_diff_matches_torch(device):
    X = R.standard_normal((3, 4))
    check_op(device, lambda x: tinynet.diff(x), lambda x: torch.diff(x), [X])
    check_op(device, lambda x, p: tinynet.diff(x, n=2, dim=0, prepend=p), lambda x, p: torch.diff(x, 2, 0, p),
             [X, R.standard_normal((1, 4))])
    check_op(device, lambda x: x.diff(n=3, append=x), lambda x: x.diff(n=3, append=x), [X])
    with pytest.raises(errors.ArgumentError, match="diff: n must be >= 0"):
        tinynet.diff(tinynet.tensor(X, device=device), n=-1)
