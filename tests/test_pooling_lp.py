"""Power-average pooling (ops/pooling_lp.py): F.lp_pool1d/2d and nn.LPPool1d/2d against
PyTorch on every backend: values, gradients (gradcheck), printed layers and errors."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(101)
TF = torch.nn.functional if torch is not None else None


@pytest.mark.parametrize("p,kernel,stride,ceil", [(2, 2, None, False), (3, (2, 3), 1, False), (1.5, 3, 2, True),
                                                  (1, (3, 2), (1, 2), False)])
def test_lp_pool2d_matches_torch(p, kernel, stride, ceil, device):
    x = R.uniform(0.1, 2.0, (2, 3, 7, 6))  # positive: PyTorch's x^p for fractional p
    check_op(device, lambda t: F.lp_pool2d(t, p, kernel, stride, ceil), lambda t: TF.lp_pool2d(t, p, kernel, stride,
                                                                                                ceil), [x])
    ours, theirs = nn.LPPool2d(p, kernel, stride, ceil), torch.nn.LPPool2d(p, kernel, stride, ceil)
    assert repr(ours) == repr(theirs)
    assert_close(ours(tinynet.tensor(x, device=device)), theirs(torch.tensor(x)), rtol=1e-12, atol=0, what="layer")


@pytest.mark.parametrize("p,kernel,stride,ceil", [(2, 2, None, False), (3, 3, 1, True), (1.5, 2, 2, False)])
def test_lp_pool1d_matches_torch(p, kernel, stride, ceil, device):
    x = R.uniform(0.1, 2.0, (2, 3, 9))
    check_op(device, lambda t: F.lp_pool1d(t, p, kernel, stride, ceil), lambda t: TF.lp_pool1d(t, p, kernel, stride,
                                                                                                ceil), [x])
    assert repr(nn.LPPool1d(p, kernel, stride, ceil)) == repr(torch.nn.LPPool1d(p, kernel, stride, ceil))
    check_op(device, lambda t: nn.LPPool1d(p, kernel, stride, ceil)(t),
             lambda t: torch.nn.LPPool1d(p, kernel, stride, ceil)(t), [x[0]])  # unbatched


def test_odd_power_of_a_negative_sum_gives_zero_as_torch(device):
    x = -R.uniform(0.1, 2.0, (1, 1, 4, 4))
    assert_close(F.lp_pool2d(tinynet.tensor(x, device=device), 3, 2), TF.lp_pool2d(torch.tensor(x), 3, 2), rtol=0,
                 atol=0, what="negative sums")


def test_bad_input(device):
    with pytest.raises(errors.ArgumentTypeError, match="lp_pool2d: norm_type must be a number"):
        F.lp_pool2d(tinynet.zeros(1, 1, 4, 4, device=device), "a", 2)
    x = numpy.zeros((1, 1, 4, 4))
    with pytest.raises(RuntimeError):
        TF.lp_pool2d(torch.tensor(x), 2, 0)
    with pytest.raises(errors.TinynetError):
        F.lp_pool2d(tinynet.tensor(x, device=device), 2, 0)
