"""F.unfold / F.fold (and nn.Unfold / nn.Fold) against PyTorch on every backend: values and
gradients in float32/float64, gradcheck, unbatched inputs, stride,
padding and dilation per axis, fold as unfold's adjoint, reprs and bad arguments."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import check_op, rng, torch
from tinynet.errors import ArgumentError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(61)
IMG = R.standard_normal((2, 3, 7, 6))
WINDOWS = [dict(kernel_size=2), dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1)),
           dict(kernel_size=3, stride=2, padding=(0, 1))]


@pytest.mark.parametrize("kw", WINDOWS, ids=["k2", "mixed", "strided"])
def test_unfold_and_fold_match_torch(kw, device):
    check_op(device, lambda x: F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [IMG])
    check_op(device, lambda x: F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [IMG[0]])  # unbatched
    cols = TF.unfold(torch.tensor(IMG), **kw).numpy()
    check_op(device, lambda c: F.fold(c, (7, 6), **kw), lambda c: TF.fold(c, (7, 6), **kw), [cols])
    check_op(device, lambda c: F.fold(c, (7, 6), **kw), lambda c: TF.fold(c, (7, 6), **kw), [cols[0]])


def test_fold_is_the_adjoint_of_unfold(device):
    """<unfold(x), y> == <x, fold(y)> for any x, y."""
    x = tinynet.tensor(IMG, device=device)
    cols = F.unfold(x, 3, padding=1)
    y = tinynet.tensor(R.standard_normal(cols.shape), device=device)
    lhs = float((cols * y).sum())
    rhs = float((x * F.fold(y, (7, 6), 3, padding=1)).sum())
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs))


def test_layers_and_bad_arguments(device):
    x = tinynet.tensor(IMG, device=device)
    assert repr(nn.Unfold((2, 3), stride=2)) == repr(torch.nn.Unfold((2, 3), stride=2))
    assert repr(nn.Fold((7, 6), 2)) == repr(torch.nn.Fold((7, 6), 2))
    numpy.testing.assert_array_equal(nn.Fold((7, 6), 2)(nn.Unfold(2)(x)).numpy(),
                                     TF.fold(TF.unfold(torch.tensor(IMG), 2), (7, 6), 2).numpy())
    with pytest.raises(ShapeError, match="unfold: expected 3-D"):
        F.unfold(x[0, 0], 2)
    with pytest.raises(ShapeError, match="unfold: the padded input height"):
        F.unfold(x, (9, 2))
    with pytest.raises(ArgumentError, match="unfold: kernel_size, dilation and stride must be >= 1"):
        F.unfold(x, 0)
    with pytest.raises(ShapeError, match="fold: expected size of input's dimension 1 to be divisible"):
        F.fold(tinynet.ones(1, 5, 30, device=device), (7, 6), 2)
    with pytest.raises(ShapeError, match="calculated number of sliding blocks"):
        F.fold(tinynet.ones(1, 12, 29, device=device), (7, 6), 2)
