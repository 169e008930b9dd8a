"""F.bilinear / torch.bilinear and nn.Bilinear against PyTorch on every backend: values and
gradients of every argument (gradcheck, gradgradcheck), batch shapes, no bias, the layer's
init range, printed form, factory kwargs and errors."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(91)


@pytest.mark.parametrize("lead", [(5,), (2, 3), ()])
def test_bilinear_matches_torch(lead, device):
    x1, x2 = R.standard_normal(lead + (3,)), R.standard_normal(lead + (4,))
    w, b = R.standard_normal((2, 3, 4)), R.standard_normal(2)
    check_op(device, F.bilinear, torch.nn.functional.bilinear, [x1, x2, w, b], second_order=True)
    check_op(device, lambda a, c, d: tinynet.bilinear(a, c, d), lambda a, c, d: torch.bilinear(a, c, d, None),
             [x1, x2, w])


def test_layer_matches_torch(device):
    ours, theirs = nn.Bilinear(3, 4, 5, device=device), torch.nn.Bilinear(3, 4, 5)
    assert repr(ours) == repr(theirs) and repr(nn.Bilinear(3, 4, 5, bias=False)) == repr(
        torch.nn.Bilinear(3, 4, 5, bias=False))
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    bound = 1 / numpy.sqrt(3)
    for p in ours.parameters():
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound and a.std() > bound / 4
    ours.load_state_dict({k: tinynet.tensor(v.detach().numpy(), device=device) for k, v in theirs.state_dict().items()})
    x1, x2 = R.standard_normal((6, 3)).astype("float32"), R.standard_normal((6, 4)).astype("float32")
    assert_close(ours(tinynet.tensor(x1, device=device), tinynet.tensor(x2, device=device)),
                 theirs(torch.tensor(x1), torch.tensor(x2)), rtol=1e-5, atol=1e-6, what="layer forward")
    assert nn.Bilinear(2, 2, 2, dtype=tinynet.float64).weight.dtype == tinynet.float64


def test_bad_input(device):
    w = tinynet.zeros(2, 3, 4, device=device)
    with pytest.raises(errors.ShapeError, match="input batch dimensions do not match"):
        F.bilinear(tinynet.zeros(5, 3, device=device), tinynet.zeros(4, 4, device=device), w)
    with pytest.raises(errors.ShapeError, match="expected inputs with 3 and 4 features"):
        F.bilinear(tinynet.zeros(5, 2, device=device), tinynet.zeros(5, 4, device=device), w)
    with pytest.raises(errors.ShapeError, match="expected weight of shape"):
        F.bilinear(tinynet.zeros(5, 3, device=device), tinynet.zeros(5, 4, device=device), tinynet.zeros(3, 4))
    with pytest.raises(errors.DTypeError, match="same dtype"):
        F.bilinear(tinynet.zeros(5, 3, dtype=tinynet.float64, device=device), tinynet.zeros(5, 4, device=device), w)
    with pytest.raises(errors.ArgumentError):
        nn.Bilinear(-1, 2, 3)
