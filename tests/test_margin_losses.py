"""F.multi_margin_loss / nn.MultiMarginLoss and F.triplet_margin_with_distance_loss /
nn.TripletMarginWithDistanceLoss against PyTorch on every backend: values and gradients
(gradcheck) for p, margin, class weights, reductions, one-sample input, custom distances and
swap; printed layers, state_dict and errors."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(111)
TF = torch.nn.functional if torch is not None else None
X = R.standard_normal((4, 5))
T = numpy.array([1, 0, 4, 2])
W = R.uniform(0.2, 2.0, 5)


@pytest.mark.parametrize("p,margin", [(1, 1.0), (2, 0.5), (1, 2.5)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multi_margin_loss_matches_torch(p, margin, reduction, device):
    check_op(device, lambda x: F.multi_margin_loss(x, tinynet.tensor(T, device=device), p, margin,
                                                   reduction=reduction),
             lambda x: TF.multi_margin_loss(x, torch.tensor(T), p, margin, reduction=reduction), [X])
    check_op(device, lambda x, w: F.multi_margin_loss(x, tinynet.tensor(T, device=device), p, margin, w,
                                                      reduction=reduction),
             lambda x, w: TF.multi_margin_loss(x, torch.tensor(T), p, margin, w, reduction=reduction), [X, W],
             diff=[0])  # PyTorch has no gradient for the class weights
    one = F.multi_margin_loss(tinynet.tensor(X[0], device=device), tinynet.tensor(3, device=device), p, margin,
                              reduction=reduction)
    assert_close(one, TF.multi_margin_loss(torch.tensor(X[0]), torch.tensor(3), p, margin, reduction=reduction),
                 rtol=1e-12, atol=0, what="one sample")


def test_multi_margin_layer_and_errors(device):
    assert repr(nn.MultiMarginLoss(p=2, margin=0.5)) == repr(torch.nn.MultiMarginLoss(p=2, margin=0.5))
    layer = nn.MultiMarginLoss(weight=tinynet.tensor(W))
    assert list(layer.state_dict()) == list(torch.nn.MultiMarginLoss(weight=torch.tensor(W)).state_dict())
    layer.to(device)
    assert_close(layer(tinynet.tensor(X, device=device), tinynet.tensor(T, device=device)),
                 torch.nn.MultiMarginLoss(weight=torch.tensor(W))(torch.tensor(X), torch.tensor(T)), rtol=1e-12,
                 atol=0, what="layer")
    x, t = tinynet.tensor(X, device=device), tinynet.tensor(T, device=device)
    with pytest.raises(ValueError):
        TF.multi_margin_loss(torch.tensor(X), torch.tensor(T), p=3)
    with pytest.raises(errors.ArgumentError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(x, t, p=3)
    with pytest.raises(errors.ArgumentError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(errors.ShapeError, match="one class index per sample"):
        F.multi_margin_loss(x, t[:2])
    with pytest.raises(errors.DTypeError, match="integer target"):
        F.multi_margin_loss(x, t.float())
    if device == "cpu":  # value checks run on the CPU only (docs/pytorch.md)
        with pytest.raises(errors.IndexOutOfRangeError, match="target out of range"):
            F.multi_margin_loss(x, tinynet.tensor([1, 2, 7, 0], device=device))
    other = "cuda" if device == "cpu" else "cpu"
    if tinynet.cuda.is_available():
        with pytest.raises(errors.DeviceMismatchError, match="multi_margin_loss"):
            F.multi_margin_loss(x, tinynet.tensor(T, device=other))


def _l1(a, b):
    return (a - b).abs().sum(-1)


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("custom", [False, True])
def test_triplet_margin_with_distance_loss_matches_torch(swap, reduction, custom, device):
    a, p, n = (R.standard_normal((6, 3)) for _ in range(3))
    kw = dict(margin=0.7, swap=swap, reduction=reduction)
    check_op(device, lambda x, y, z: F.triplet_margin_with_distance_loss(
        x, y, z, distance_function=_l1 if custom else None, **kw),
        lambda x, y, z: TF.triplet_margin_with_distance_loss(x, y, z, distance_function=_l1 if custom else None,
                                                             **kw), [a, p, n])


def test_triplet_layer_and_errors(device):
    assert repr(nn.TripletMarginWithDistanceLoss()) == repr(torch.nn.TripletMarginWithDistanceLoss())
    a = tinynet.zeros(3, 4, device=device)
    with pytest.raises(ValueError):
        TF.triplet_margin_with_distance_loss(torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(3, 4), margin=0)
    with pytest.raises(errors.ArgumentError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a, a, a, margin=0)
    with pytest.raises(errors.ArgumentError, match="margin must be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(errors.ArgumentTypeError, match="distance_function must be callable"):
        nn.TripletMarginWithDistanceLoss(distance_function=3)
    with pytest.raises(errors.ShapeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(a, a, tinynet.zeros(4, device=device))
