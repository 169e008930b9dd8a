"""rrelu, alpha_dropout, feature_alpha_dropout, dropout3d and gumbel_softmax (functions and
layers) on every backend. Their draws come from tinynet's generator, so the random parts are
checked by their distributions and structure, and the deterministic parts (evaluation mode,
p = 0 and 1, the constants, printed layers, errors) against PyTorch."""
import math

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, rng, torch
from tinynet import errors

R = rng(121)
TF = torch.nn.functional if torch is not None else None


def test_rrelu(device):
    x = R.standard_normal((4, 500))
    t = tinynet.tensor(x, device=device)
    assert_close(F.rrelu(t), TF.rrelu(torch.tensor(x)), rtol=1e-12, atol=0, what="evaluation mode")
    tinynet.manual_seed(3)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    y = F.rrelu(t, 0.1, 0.3, training=True)
    y.sum().backward()
    a, g = y.detach().numpy(), t.grad.numpy()
    assert (a[x >= 0] == x[x >= 0]).all() and (g[x >= 0] == 1).all()
    slope = a[x < 0] / x[x < 0]
    assert slope.min() >= 0.1 - 1e-9 and slope.max() <= 0.3 + 1e-9 and abs(slope.mean() - 0.2) < 0.01
    numpy.testing.assert_allclose(g[x < 0], slope, rtol=1e-9)  # the gradient is the drawn slope
    u = tinynet.tensor(x.copy(), device=device)
    assert F.rrelu_(u) is u
    assert_close(u, TF.rrelu(torch.tensor(x)), rtol=1e-12, atol=0, what="rrelu_")
    with pytest.raises(RuntimeError):
        TF.rrelu(torch.tensor(x), 0.5, 0.2, True)
    with pytest.raises(errors.ArgumentError, match="lower bound should be less than or equal"):
        F.rrelu(t, 0.5, 0.2, True)
    assert repr(nn.RReLU()) == repr(torch.nn.RReLU()) and repr(nn.RReLU(0.1, 0.2)) == repr(torch.nn.RReLU(0.1, 0.2))
    layer = nn.RReLU().eval()
    assert_close(layer(tinynet.tensor(x, device=device)), torch.nn.RReLU().eval()(torch.tensor(x)), rtol=1e-12, atol=0,
                 what="layer in evaluation")


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout(p, device):
    x = R.standard_normal(200_000)
    t = tinynet.tensor(x, device=device)
    assert F.alpha_dropout(t, p) is t and F.alpha_dropout(t, 0.0, True) is t  # training=False by default
    assert_close(F.alpha_dropout(t, 1.0, True), TF.alpha_dropout(torch.tensor(x), 1.0, True), rtol=0, atol=0,
                 what="p = 1")
    tinynet.manual_seed(5)
    y = F.alpha_dropout(t, p, True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01  # self-normalising: mean 0, variance 1 kept
    # two kinds of output, with PyTorch's constants: dropped = alpha' a (p - 1), kept = a x + alpha' a p
    zeros = torch.zeros(1000, dtype=torch.float64)
    theirs = set(numpy.round(TF.alpha_dropout(zeros, p, True).numpy(), 12))
    ours = set(numpy.round(F.alpha_dropout(tinynet.zeros(1000, dtype=tinynet.float64, device=device), p,
                                           True).numpy(), 12))
    assert ours == theirs and len(ours) == 2
    a = 1 / math.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    dropped = numpy.isclose(y, 1.7580993408473766 * a * (p - 1))
    assert abs(dropped.mean() - p) < 0.01
    numpy.testing.assert_allclose(y[~dropped], a * x[~dropped] + 1.7580993408473766 * a * p, rtol=1e-5, atol=1e-6)


def test_feature_alpha_dropout_and_dropout3d(device):
    x = R.standard_normal((8, 6, 3, 4, 5)).astype("float32")
    t = tinynet.tensor(x, device=device)
    tinynet.manual_seed(7)
    y = F.feature_alpha_dropout(t, 0.5, True).numpy()
    a = 1 / math.sqrt((1.7580993408473766 ** 2 * 0.5 + 1) * 0.5)
    dropped = numpy.isclose(y, 1.7580993408473766 * a * -0.5)
    per_channel = dropped.reshape(8, 6, -1)
    assert (per_channel.all(-1) | ~per_channel.any(-1)).all() and 0.2 < per_channel.all(-1).mean() < 0.8
    with pytest.raises(errors.ShapeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(tinynet.zeros(3, device=device), 0.5, True)
    y3 = F.dropout3d(t, 0.5).numpy()
    kept = (y3 != 0).reshape(8, 6, -1)
    assert (kept.all(-1) | ~kept.any(-1)).all()
    numpy.testing.assert_allclose(y3[y3 != 0], 2 * x[y3 != 0], rtol=1e-6)
    assert F.dropout3d(t[0], 0.5).shape == t[0].shape  # unbatched (C, D, H, W)
    with pytest.raises(errors.ShapeError, match="dropout3d: expected input of shape"):
        F.dropout3d(tinynet.zeros(2, 3, device=device))
    for name in ("AlphaDropout", "FeatureAlphaDropout", "Dropout3d"):
        assert repr(getattr(nn, name)(0.2)) == repr(getattr(torch.nn, name)(0.2))
        layer = getattr(nn, name)(0.3).eval()
        assert layer(t) is t


def test_gumbel_softmax(device):
    logits = numpy.log(numpy.array([0.1, 0.2, 0.3, 0.4]))
    t = tinynet.tensor(numpy.tile(logits, (20_000, 1)), device=device, requires_grad=True)
    tinynet.manual_seed(11)
    soft = F.gumbel_softmax(t, tau=0.5)
    s = soft.detach().numpy()
    numpy.testing.assert_allclose(s.sum(1), 1, rtol=1e-9)
    freq = numpy.bincount(s.argmax(1), minlength=4) / len(s)
    numpy.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.015)  # argmax of the sample ~ softmax(logits)
    w = tinynet.tensor(R.standard_normal((20_000, 4)), device=device)
    (soft * w).sum().backward()
    g_soft = t.grad.numpy().copy()
    t.grad = None
    tinynet.manual_seed(11)
    hard = F.gumbel_softmax(t, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert set(numpy.unique(h)) == {0.0, 1.0} and (h.sum(1) == 1).all() and (h.argmax(1) == s.argmax(1)).all()
    (hard * w).sum().backward()
    numpy.testing.assert_allclose(t.grad.numpy(), g_soft, rtol=1e-9, atol=1e-12)  # straight-through
    assert F.gumbel_softmax(tinynet.zeros(3, 5, device=device), dim=0).shape == (3, 5)
    with pytest.raises(errors.ArgumentError, match="tau must be > 0"):
        F.gumbel_softmax(t, tau=0)
