"""1-D pooling (F.max_pool1d, F.avg_pool1d, F.adaptive_avg_pool1d and their layers) against
PyTorch on every backend: values, gradients (float32/float64, gradcheck), unbatched input,
windows with padding, dilation and ceil mode, the layers' signatures and reprs (MaxPool2d's
too), and bad arguments."""
import inspect

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import check_op, rng, torch
from tinynet.errors import ArgumentError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(31)
SIG = R.standard_normal((2, 3, 11))
CASES = {
    "max": (lambda x: F.max_pool1d(x, 2), lambda x: TF.max_pool1d(x, 2)),
    "max_pad_dil_ceil": (lambda x: F.max_pool1d(x, 3, 2, 1, 2, True), lambda x: TF.max_pool1d(x, 3, 2, 1, 2, True)),
    "avg": (lambda x: F.avg_pool1d(x, 3), lambda x: TF.avg_pool1d(x, 3)),
    "avg_pad_exclude": (lambda x: F.avg_pool1d(x, 3, 2, 1, True, False),
                        lambda x: TF.avg_pool1d(x, 3, 2, 1, True, False)),
    "adaptive": (lambda x: F.adaptive_avg_pool1d(x, 4), lambda x: TF.adaptive_avg_pool1d(x, 4)),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_matches_pytorch(name, batched, device):
    ours, theirs = CASES[name]
    check_op(device, ours, theirs, [SIG if batched else SIG[0]])


def test_layers_signatures_and_reprs_match_pytorch(device):
    x = tinynet.tensor(SIG, device=device)
    tx = torch.tensor(SIG)
    for name, args in (("MaxPool1d", (3, 2, 1)), ("AvgPool1d", (3,)), ("AdaptiveAvgPool1d", (4,)),
                       ("MaxPool2d", (2,))):
        ours, theirs = getattr(nn, name), getattr(torch.nn, name)
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name
        assert repr(ours(*args)) == repr(theirs(*args)), name
        if name != "MaxPool2d":
            numpy.testing.assert_allclose(ours(*args)(x).numpy(), theirs(*args)(tx).numpy(), rtol=1e-12)
    # PyTorch's positional order: (kernel, stride, padding, dilation, return_indices, ceil_mode)
    img = tinynet.tensor(R.standard_normal((1, 1, 5, 5)), device=device)
    assert nn.MaxPool2d(2, 2, 0, 1, False, True)(img).shape == (1, 1, 3, 3)


def test_bad_arguments_raise_typed_errors(device):
    x = tinynet.tensor(SIG, device=device)
    with pytest.raises(ShapeError, match="max_pool1d: expected 2-D"):
        F.max_pool1d(x[0, 0], 2)
    with pytest.raises(ArgumentError, match="avg_pool1d: pad should be at most half"):
        F.avg_pool1d(x, 2, padding=2)
    with pytest.raises(ArgumentError, match="max_pool1d: kernel_size, stride and dilation must be >= 1"):
        F.max_pool1d(x, 0)
    values, indices = nn.MaxPool1d(2, return_indices=True)(x)  # supported now (tests/test_unpool.py)
    assert indices.dtype == tinynet.int64 and indices.shape == values.shape
