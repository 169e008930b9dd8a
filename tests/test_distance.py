"""Distances (ops/distance.py: F.cosine_similarity, F.pairwise_distance, torch.cdist,
F.pdist) and the other functions whose layers live in nn/modules/distance.py
(F.threshold/hardshrink/softshrink, F.rms_norm), with those layers, against PyTorch: forward
and gradients in float32/float64, gradcheck (and gradgradcheck where PyTorch's formula is
smooth), values and gradients exactly at the thresholds, reprs, the eps clamp, and bad
arguments."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet.errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError

from conftest import DEVICES

TF = torch.nn.functional if torch is not None else None
R = rng(11)
A, B = R.standard_normal((4, 5)), R.standard_normal((4, 5))
IMG = R.standard_normal((2, 3, 4, 4))
EDGE = numpy.array([[-1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0, 0.1]])  # at and around lambd and the threshold

CASES = {
    "cosine_similarity": (F.cosine_similarity, lambda a, b: TF.cosine_similarity(a, b), [A, B]),
    "cosine_similarity_dim_last": (lambda a, b: F.cosine_similarity(a, b, dim=-1),
                                   lambda a, b: TF.cosine_similarity(a, b, dim=-1), [A, B]),
    "cosine_similarity_broadcast": (lambda a, b: F.cosine_similarity(a, b, dim=-1),
                                    lambda a, b: TF.cosine_similarity(a, b, dim=-1), [A[:1], B]),
    "cosine_similarity_rank": (lambda a, b: F.cosine_similarity(a, b, dim=1),
                               lambda a, b: TF.cosine_similarity(a, b, dim=1), [IMG, IMG[0, :, :1] * 2]),
    "pairwise_distance": (F.pairwise_distance, lambda a, b: TF.pairwise_distance(a, b), [A, B]),
    "pairwise_distance_p1_keepdim": (lambda a, b: F.pairwise_distance(a, b, 1.0, keepdim=True),
                                     lambda a, b: TF.pairwise_distance(a, b, 1.0, keepdim=True), [A, B]),
    "pairwise_distance_p3": (lambda a, b: F.pairwise_distance(a, b, 3.0),
                             lambda a, b: TF.pairwise_distance(a, b, 3.0), [A, B]),
    "threshold": (lambda x: F.threshold(x, 0.1, 20.0), lambda x: TF.threshold(x, 0.1, 20.0), [A]),
    "hardshrink": (F.hardshrink, lambda x: TF.hardshrink(x), [A]),
    "softshrink": (lambda x: F.softshrink(x, 0.3), lambda x: TF.softshrink(x, 0.3), [A]),
    "rms_norm": (lambda x: F.rms_norm(x, (5,)), lambda x: TF.rms_norm(x, (5,)), [A]),
    "rms_norm_weight_eps": (lambda x, w: F.rms_norm(x, (4, 4), w, eps=1e-3),
                            lambda x, w: TF.rms_norm(x, (4, 4), w, eps=1e-3), [IMG, R.standard_normal((4, 4))]),
}
SMOOTH = {"cosine_similarity", "cosine_similarity_dim_last", "pairwise_distance", "rms_norm", "rms_norm_weight_eps"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", CASES)
def test_matches_pytorch(name, device):
    ours, theirs, inputs = CASES[name]
    check_op(device, ours, theirs, inputs, second_order=name in SMOOTH)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,ours,theirs", [
    ("hardshrink", lambda x: F.hardshrink(x, 0.5), lambda x: TF.hardshrink(x, 0.5)),
    ("softshrink", lambda x: F.softshrink(x, 0.5), lambda x: TF.softshrink(x, 0.5)),
    ("threshold", lambda x: F.threshold(x, 0.2, -3.0), lambda x: TF.threshold(x, 0.2, -3.0))])
def test_values_and_gradients_exactly_at_the_thresholds(name, ours, theirs, device):
    x = tinynet.tensor(EDGE, device=device, requires_grad=True)
    tx = torch.tensor(EDGE, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    assert_close(y, ty, rtol=0, atol=0, what=f"{name} at the thresholds")
    y.sum().backward()
    ty.sum().backward()
    assert_close(x.grad, tx.grad, rtol=0, atol=0, what=f"{name} gradient at the thresholds")


@pytest.mark.parametrize("device", DEVICES)
def test_cosine_similarity_clamps_tiny_norms_like_pytorch(device):
    a = numpy.zeros((2, 3))
    a[1] = 1e-10
    b = R.standard_normal((2, 3))
    x = tinynet.tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = F.cosine_similarity(x, tinynet.tensor(b, device=device)), TF.cosine_similarity(tx, torch.tensor(b))
    assert_close(y, ty, rtol=1e-12, atol=1e-12, what="cosine_similarity with zero and tiny vectors")
    y.sum().backward()
    ty.sum().backward()
    assert_close(x.grad, tx.grad, rtol=1e-9, atol=1e-9, what="its gradient")


@pytest.mark.parametrize("device", DEVICES)
def test_layers_match_pytorch_and_print_alike(device):
    x = tinynet.tensor(IMG, device=device)
    tx = torch.tensor(IMG)
    pairs = [(nn.CosineSimilarity(dim=2), torch.nn.CosineSimilarity(dim=2), 2),
             (nn.PairwiseDistance(p=1.5, keepdim=True), torch.nn.PairwiseDistance(p=1.5, keepdim=True), 2),
             (nn.Threshold(0.1, 20.0), torch.nn.Threshold(0.1, 20.0), 1),
             (nn.Hardshrink(0.3), torch.nn.Hardshrink(0.3), 1), (nn.Softshrink(), torch.nn.Softshrink(), 1),
             (nn.RMSNorm([4, 4]).double().to(device), torch.nn.RMSNorm([4, 4]).double(), 1),
             (nn.RMSNorm(4, eps=1e-2, elementwise_affine=False), torch.nn.RMSNorm(4, eps=1e-2,
                                                                                  elementwise_affine=False), 1)]
    for ours, theirs, n in pairs:
        assert repr(ours) == repr(theirs)
        args, targs = (x, x.flip(0)) if n == 2 else (x,), (tx, tx.flip(0)) if n == 2 else (tx,)
        assert_close(ours(*args), theirs(*targs), rtol=1e-12, atol=1e-12, what=repr(ours))
    assert [n for n, _ in nn.RMSNorm(4).named_parameters()] == [n for n, _ in torch.nn.RMSNorm(4).named_parameters()]
    t = tinynet.tensor(A, device=device)
    assert F.threshold(t, 0.0, 0.0, inplace=True) is t and float(t.min()) >= 0.0


def test_bad_arguments_raise_typed_errors():
    a = tinynet.tensor(A)
    with pytest.raises(ShapeError, match="cosine_similarity: shapes"):
        F.cosine_similarity(a, tinynet.ones(3, 5))
    with pytest.raises(DTypeError):
        F.cosine_similarity(tinynet.tensor([[1, 2]]), tinynet.tensor([[1, 2]]))
    with pytest.raises(ArgumentError, match="softshrink: lambda must be greater or equal to 0"):
        F.softshrink(a, -0.1)
    with pytest.raises(ArgumentError, match="Hardshrink: lambda must be greater or equal to 0"):
        nn.Hardshrink(-1)
    with pytest.raises(ArgumentTypeError, match="threshold: value must be a number"):
        F.threshold(a, 0.1, "x")
    with pytest.raises(ShapeError, match=r"rms_norm: expected input with trailing shape \[4\]"):
        F.rms_norm(a, 4)
    with pytest.raises(ShapeError, match="rms_norm: expected weight of shape"):
        F.rms_norm(a, 5, tinynet.ones(4))
    with pytest.raises(ShapeError, match="pairwise_distance: expected inputs with at least one dimension"):
        F.pairwise_distance(tinynet.tensor(1.0), tinynet.tensor(2.0))
    with pytest.raises(ArgumentError, match="RMSNorm: normalized_shape"):
        nn.RMSNorm([])


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_cdist_matches_torch(p, device):
    check_op(device, lambda a, b: tinynet.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p),
             [R.standard_normal((5, 4)), R.standard_normal((3, 4))])
    check_op(device, lambda a, b: tinynet.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p),
             [R.standard_normal((2, 3, 4)), R.standard_normal((1, 5, 4))])


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf")])
def test_pdist_matches_torch(p, device):
    x = R.standard_normal((5, 3))
    check_op(device, lambda t: F.pdist(t, p), lambda t: TF.pdist(t, p), [x])
    assert_close(tinynet.pdist(tinynet.tensor(x, device=device), p), torch.pdist(torch.tensor(x), p), rtol=1e-12,
                 atol=0, what="torch.pdist")
    assert tuple(F.pdist(tinynet.zeros(1, 3, device=device)).shape) == tuple(TF.pdist(torch.zeros(1, 3)).shape)


def test_pdist_bad_input(device):
    with pytest.raises(ShapeError, match="pdist: only supports 2-D"):
        F.pdist(tinynet.zeros(2, 3, 4, device=device))
    with pytest.raises(ArgumentError):
        F.pdist(tinynet.zeros(2, 3, device=device), -1)
