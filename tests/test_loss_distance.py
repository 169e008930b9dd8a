"""F.hinge_embedding_loss, F.triplet_margin_loss (and their layers) and the margin losses against
PyTorch on every backend: values, gradients in float32/float64, gradcheck, every
reduction, swap, p-norms, batch dims, and bad arguments."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet.errors import ArgumentError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(41)
A, P, N = (R.standard_normal((5, 4)) for _ in range(3))
D = R.uniform(-1, 2, (3, 4))
Y = R.choice([-1, 1], (3, 4)).astype(numpy.int64)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_hinge_embedding_loss_matches_torch(reduction, device):
    check_op(device, lambda x, y: F.hinge_embedding_loss(x, y, margin=0.7, reduction=reduction),
             lambda x, y: TF.hinge_embedding_loss(x, y, margin=0.7, reduction=reduction), [D, Y])


@pytest.mark.parametrize("kw", [{}, {"swap": True}, {"p": 1.0, "margin": 0.3}, {"p": 3.0, "reduction": "sum"},
                                {"reduction": "none", "eps": 1e-3}])
def test_triplet_margin_loss_matches_torch(kw, device):
    check_op(device, lambda a, p, n: F.triplet_margin_loss(a, p, n, **kw),
             lambda a, p, n: TF.triplet_margin_loss(a, p, n, **kw), [A, P, N])
    check_op(device, lambda a, p, n: F.triplet_margin_loss(a, p, n, **kw),
             lambda a, p, n: TF.triplet_margin_loss(a, p, n, **kw), [A[0], P[0], N[0]])


def test_layers_match_functions_and_print_like_pytorch(device):
    a, p, n = (tinynet.tensor(v, device=device) for v in (A, P, N))
    pairs = [(nn.TripletMarginLoss(margin=0.5, swap=True), torch.nn.TripletMarginLoss(margin=0.5, swap=True)),
             (nn.HingeEmbeddingLoss(margin=2.0, reduction="sum"), torch.nn.HingeEmbeddingLoss(margin=2.0,
                                                                                              reduction="sum"))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
    assert_close(pairs[0][0](a, p, n), pairs[0][1](*(torch.tensor(v) for v in (A, P, N))), rtol=1e-12, atol=1e-12,
                 what="TripletMarginLoss")
    d, y = tinynet.tensor(D, device=device), tinynet.tensor(Y, device=device)
    assert_close(pairs[1][0](d, y), pairs[1][1](torch.tensor(D), torch.tensor(Y)), rtol=1e-12, atol=1e-12,
                 what="HingeEmbeddingLoss")


def test_bad_arguments_raise_typed_errors(device):
    a = tinynet.tensor(A, device=device)
    with pytest.raises(ShapeError, match="triplet_margin_loss: the anchor, positive and negative must all be"):
        F.triplet_margin_loss(a, a, a[0])
    with pytest.raises(ShapeError, match=r"hinge_embedding_loss: input shape \(5, 4\) and target shape \(2,\) differ"):
        F.hinge_embedding_loss(a, tinynet.ones(2, device=device))
    with pytest.raises(ShapeError, match="cdist: x1 and x2 must have the same number of columns"):
        tinynet.cdist(a, tinynet.ones(2, 3, device=device))
    with pytest.raises(ShapeError, match="cdist: x1 and x2 must be at least 2-D"):
        tinynet.cdist(a[0], a)
    with pytest.raises(ArgumentError):
        tinynet.cdist(a, a, -1.0)
    with pytest.raises(ArgumentError):
        F.hinge_embedding_loss(a, a, reduction="avg")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss_matches_torch(reduction, weighted, device):
    y = R.integers(0, 2, (5, 4)).astype(numpy.float64)
    w = R.uniform(0.5, 2, 4)
    if weighted:
        check_op(device, lambda x, t, w: F.multilabel_soft_margin_loss(x, t, w, reduction=reduction),
                 lambda x, t, w: TF.multilabel_soft_margin_loss(x, t, w, reduction=reduction), [A * 3, y, w],
                 diff=[0])
    else:
        check_op(device, lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction=reduction),
                 lambda x, t: TF.multilabel_soft_margin_loss(x, t, reduction=reduction), [A * 3, y], diff=[0])
    layer, ref = nn.MultiLabelSoftMarginLoss(reduction=reduction), torch.nn.MultiLabelSoftMarginLoss(
        reduction=reduction)
    assert repr(layer) == repr(ref)
    assert_close(layer(tinynet.tensor(A, device=device), tinynet.tensor(y, device=device)),
                 ref(torch.tensor(A), torch.tensor(y)), rtol=1e-12, atol=1e-12, what="MultiLabelSoftMarginLoss")
