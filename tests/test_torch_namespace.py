"""The torch-level spellings of functional ops (torch.conv2d, torch.max_pool2d, ...: the same
functions as tinynet.nn.functional's) and the constants pi, e, inf, nan, newaxis, against
PyTorch on every backend."""
import numpy
import pytest

import tinynet
from helpers import check_op, rng, torch

R = rng(79)


@pytest.mark.parametrize("name,args", [
    ("conv2d", lambda: (R.standard_normal((2, 3, 6, 6)), R.standard_normal((4, 3, 3, 3)))),
    ("conv1d", lambda: (R.standard_normal((2, 3, 7)), R.standard_normal((4, 3, 2)))),
    ("max_pool2d", lambda: (R.standard_normal((2, 3, 6, 6)),)),
    ("max_pool1d", lambda: (R.standard_normal((2, 3, 6)),)),
    ("avg_pool1d", lambda: (R.standard_normal((2, 3, 6)),)),
    ("cosine_similarity", lambda: (R.standard_normal((3, 4)), R.standard_normal((3, 4)))),
    ("pairwise_distance", lambda: (R.standard_normal((3, 4)), R.standard_normal((3, 4)))),
    ("hardshrink", lambda: (R.standard_normal((3, 4)),)),
    ("pixel_shuffle", lambda: (R.standard_normal((1, 8, 2, 2)),)),
])
def test_torch_level_functional_spellings(name, args, device):
    """torch.conv2d, torch.max_pool2d, ... are the functional ops under torch's namespace:
    the same function, called as PyTorch users call torch.<name>."""
    import tinynet.nn.functional as F
    assert getattr(tinynet, name) is getattr(F, name)
    extra = {"max_pool2d": (2,), "max_pool1d": (2,), "avg_pool1d": (3,), "pixel_shuffle": (2,)}.get(name, ())
    check_op(device, lambda *t: getattr(tinynet, name)(*t, *extra), lambda *t: getattr(torch, name)(*t, *extra),
             list(args()))


def test_constants_as_torch():
    assert (tinynet.pi, tinynet.e, tinynet.inf) == (torch.pi, torch.e, torch.inf)
    assert numpy.isnan(tinynet.nan) and tinynet.newaxis is None is torch.newaxis
    assert tinynet.zeros(2, 3)[tinynet.newaxis, :, None].shape == (1, 2, 1, 3)
