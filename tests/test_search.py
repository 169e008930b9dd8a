"""unique, isin, searchsorted, bucketize, meshgrid, tile, diff and nan_to_num against PyTorch
on every backend: values, dtypes, the optional outputs, gradients where the op has them, and
bad arguments."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
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


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_torch_and_passes_gradients(indexing, device):
    a, b, c = R.standard_normal(3), R.standard_normal(2), R.standard_normal(4)
    check_op(device, lambda x, y, z: tinynet.stack(tinynet.meshgrid(x, y, z, indexing=indexing)),
             lambda x, y, z: torch.stack(torch.meshgrid(x, y, z, indexing=indexing)), [a, b, c])


def test_tile_and_diff_match_torch(device):
    check_op(device, lambda x: tinynet.tile(x, (2,)), lambda x: torch.tile(x, (2,)), [X])
    check_op(device, lambda x: x.tile((2, 1, 3)), lambda x: x.tile((2, 1, 3)), [X])
    check_op(device, lambda x: tinynet.diff(x), lambda x: torch.diff(x), [X])
    check_op(device, lambda x, p: tinynet.diff(x, n=2, dim=0, prepend=p), lambda x, p: torch.diff(x, 2, 0, p),
             [X, R.standard_normal((1, 4))])
    check_op(device, lambda x: x.diff(n=3, append=x), lambda x: x.diff(n=3, append=x), [X])


def test_nan_to_num_matches_torch(device):
    a = X.copy()
    a[0, 0], a[1, 1], a[2, 2] = numpy.nan, numpy.inf, -numpy.inf
    check_op(device, tinynet.nan_to_num, torch.nan_to_num, [a], grad=False)  # the dtype's extremes
    check_op(device, lambda x: tinynet.nan_to_num(x, posinf=1e3, neginf=-1e3),
             lambda x: torch.nan_to_num(x, posinf=1e3, neginf=-1e3), [a], second_order=True)
    check_op(device, lambda x: x.nan_to_num(nan=1.5, posinf=9.0, neginf=-9.0),
             lambda x: x.nan_to_num(nan=1.5, posinf=9.0, neginf=-9.0), [a])
    i, ti = _pair(INTS, device)
    assert_close(tinynet.nan_to_num(i), torch.nan_to_num(ti), rtol=0, atol=0, what="nan_to_num of ints")


def test_bad_arguments_raise_typed_errors(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(errors.ArgumentError, match="meshgrid: indexing must be 'ij' or 'xy'"):
        tinynet.meshgrid(x[0], indexing="yx")
    with pytest.raises(errors.ArgumentError, match="meshgrid: expected 0D or 1D tensors"):
        tinynet.meshgrid(x)
    with pytest.raises(errors.ArgumentError, match="bucketize: boundaries tensor must be 1 dimension"):
        tinynet.bucketize(x, x)
    with pytest.raises(errors.ArgumentError, match="side and right can't be set to opposites"):
        tinynet.searchsorted(x[0], x, right=True, side="left")
    with pytest.raises(errors.ArgumentTypeError, match="isin: test_elements must be a Tensor or a number"):
        tinynet.isin(x, "a")
    with pytest.raises(errors.ArgumentError, match="diff: n must be >= 0"):
        tinynet.diff(x, n=-1)
    with pytest.raises(errors.ArgumentTypeError, match="nan_to_num: nan must be a number"):
        tinynet.nan_to_num(x, nan="zero")
