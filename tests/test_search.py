"""Searching and sets (ops/search.py): unique, isin, searchsorted and bucketize against PyTorch
on every backend: values, dtypes, the optional outputs, and bad arguments."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng, torch
from tinynet import errors

R = rng(21)
INTS = R.integers(0, 5, (3, 4))
SEQ = numpy.sort(R.uniform(-2, 2, 7))
ROWS = numpy.sort(R.uniform(-2, 2, (2, 7)), axis=1)
VALS = R.uniform(-3, 3, (2, 5))
X = R.standard_normal((3, 4))


def _pair(a, device):
    return tinynet.tensor(a, device=device), torch.tensor(a)


@pytest.mark.parametrize("kw", [{}, {"return_inverse": True}, {"return_counts": True},
                                {"return_inverse": True, "return_counts": True, "dim": 0},
                                {"return_counts": True, "dim": 1}])
def test_unique_matches_torch(kw, device):
    x, tx = _pair(INTS, device)
    out, ref = tinynet.unique(x, **kw), torch.unique(tx, **kw)
    out = out if isinstance(out, tuple) else (out,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert_close(o, r, rtol=0, atol=0, what=f"unique{kw}")


def test_isin_matches_torch(device):
    x, tx = _pair(INTS, device)
    t, tt = _pair(numpy.array([1, 3]), device)
    assert_close(tinynet.isin(x, t), torch.isin(tx, tt), rtol=0, atol=0, what="isin")
    assert_close(tinynet.isin(x, t, invert=True), torch.isin(tx, tt, invert=True), rtol=0, atol=0,
                 what="isin invert")
    assert_close(tinynet.isin(x, 2), torch.isin(tx, 2), rtol=0, atol=0, what="isin of a number")


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize_match_torch(right, device):
    s, ts = _pair(SEQ, device)
    v, tv = _pair(numpy.concatenate([VALS, SEQ[None, :5]]), device)  # equal values exercise right=
    assert_close(tinynet.searchsorted(s, v, right=right), torch.searchsorted(ts, tv, right=right), rtol=0, atol=0,
                 what="searchsorted 1-D")
    rows, trows = _pair(ROWS, device)
    vv, tvv = _pair(VALS, device)
    side = "right" if right else "left"
    assert_close(tinynet.searchsorted(rows, vv, side=side), torch.searchsorted(trows, tvv, side=side), rtol=0,
                 atol=0, what="searchsorted row by row")
    out = tinynet.bucketize(v, s, right=right, out_int32=True)
    ref = torch.bucketize(tv, ts, right=right, out_int32=True)
    assert_close(out, ref, rtol=0, atol=0, what="bucketize")
    assert out.dtype == tinynet.int32
    assert tinynet.searchsorted(s, 0.5).item() == torch.searchsorted(ts, 0.5).item()


def test_bad_arguments_raise_typed_errors(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(errors.ArgumentError, match="bucketize: boundaries tensor must be 1 dimension"):
        tinynet.bucketize(x, x)
    with pytest.raises(errors.ArgumentError, match="side and right can't be set to opposites"):
        tinynet.searchsorted(x[0], x, right=True, side="left")
    with pytest.raises(errors.ArgumentTypeError, match="isin: test_elements must be a Tensor or a number"):
        tinynet.isin(x, "a")
