"""bincount, histc and unique_consecutive against PyTorch on every backend: values, dtypes,
weights, minlength, the automatic range of histc, the runs along a dim, and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng, torch
from tinynet import errors

R = rng(171)


def _both(fn, *arrays, **kw):
    return fn(tinynet, *arrays, **kw), fn(torch, *arrays, **kw)


def test_bincount_matches_torch(device):
    v = R.integers(0, 7, 40)
    w32, w64 = R.random(40).astype("float32"), R.random(40)
    t = lambda a: tinynet.tensor(a, device=device)  # noqa: E731
    for ours, theirs in ((tinynet.bincount(t(v)), torch.bincount(torch.tensor(v))),
                         (t(v).bincount(minlength=10), torch.tensor(v).bincount(minlength=10)),
                         (tinynet.bincount(t(v), t(w32)), torch.bincount(torch.tensor(v), torch.tensor(w32))),
                         (tinynet.bincount(t(v), t(w64), 3), torch.bincount(torch.tensor(v), torch.tensor(w64), 3)),
                         (tinynet.bincount(t(numpy.zeros(0, "int64")), minlength=2),
                          torch.bincount(torch.zeros(0, dtype=torch.int64), minlength=2))):
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        assert_close(ours, theirs, rtol=1e-6, atol=0, what="bincount")
    with pytest.raises(errors.DTypeError, match="integral inputs"):
        tinynet.bincount(t(numpy.array([1.0])))
    with pytest.raises(errors.ShapeError, match="1-d"):
        tinynet.bincount(t(numpy.array([[1]])))
    if device == "cpu":
        with pytest.raises(errors.ArgumentError, match="non-negative"):
            tinynet.bincount(t(numpy.array([-1, 1])))


@pytest.mark.parametrize("bins,lo,hi", [(4, 0, 4), (3, 0, 0), (10, -1.5, 2.5), (1, 0, 0)])
def test_histc_matches_torch(bins, lo, hi, device):
    x = numpy.concatenate([R.standard_normal(200), [0.0, 4.0, -1.5, 2.5]]).astype("float32")
    ours = tinynet.histc(tinynet.tensor(x, device=device), bins, lo, hi)
    theirs = torch.histc(torch.tensor(x), bins, lo, hi)
    assert ours.dtype == tinynet.float32
    assert_close(ours, theirs, rtol=0, atol=0, what="histc")
    same = tinynet.histc(tinynet.tensor([2.0, 2.0], device=device), 4)
    assert_close(same, torch.histc(torch.tensor([2.0, 2.0]), 4), rtol=0, atol=0, what="one value")
    with pytest.raises(errors.DTypeError):
        tinynet.histc(tinynet.tensor([1, 2], device=device))
    with pytest.raises(errors.ArgumentError, match="max must be larger than min"):
        tinynet.histc(tinynet.tensor([1.0], device=device), 3, 2, 1)


def test_unique_consecutive_matches_torch(device):
    v = numpy.array([1, 1, 2, 2, 3, 1, 1, 2])
    for kw in ({}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True}):
        ours = tinynet.unique_consecutive(tinynet.tensor(v, device=device), **kw)
        theirs = torch.unique_consecutive(torch.tensor(v), **kw)
        ours, theirs = (ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,))
        for a, b in zip(ours, theirs):
            assert_close(a, b, rtol=0, atol=0, what=f"unique_consecutive {kw}")
    m = numpy.array([[1, 1, 0], [1, 1, 0], [2, 3, 0], [2, 3, 0], [1, 1, 0]])
    for dim in (0, 1, -1):
        ours = tinynet.tensor(m, device=device).unique_consecutive(return_inverse=True, return_counts=True, dim=dim)
        theirs = torch.tensor(m).unique_consecutive(return_inverse=True, return_counts=True, dim=dim)
        for a, b in zip(ours, theirs):
            assert_close(a, b, rtol=0, atol=0, what=f"dim {dim}")
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.unique_consecutive(tinynet.tensor(v, device=device), return_counts="yes")
