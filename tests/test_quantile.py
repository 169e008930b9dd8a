"""quantile and nanquantile (functions and methods) against PyTorch on every backend: every
interpolation, scalar and 1-D q, dim/keepdim, NaN slices, gradients (gradcheck) and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(89)
X = R.standard_normal((4, 7))
WITH_NAN = X.copy()
WITH_NAN[1, 2] = numpy.nan
WITH_NAN[3, :] = numpy.nan
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", MODES)
def test_values_match_torch_with_nans(name, interpolation, device):
    qs = numpy.array([0.0, 0.25, 0.5, 0.9, 1.0])
    for q in (0.3, qs):
        for dim, keepdim in ((None, False), (1, False), (0, True), (-1, True)):
            def ours(t, q=q, dim=dim, keepdim=keepdim):
                qq = tinynet.tensor(q, dtype=t.dtype, device=t.device) if isinstance(q, numpy.ndarray) else q
                return getattr(tinynet, name)(t, qq, dim=dim, keepdim=keepdim, interpolation=interpolation)

            def theirs(t, q=q, dim=dim, keepdim=keepdim):
                qq = torch.tensor(q, dtype=t.dtype) if isinstance(q, numpy.ndarray) else q
                return getattr(torch, name)(t, qq, dim=dim, keepdim=keepdim, interpolation=interpolation)
            check_op(device, ours, theirs, [WITH_NAN], grad=False)


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "lower"])
def test_gradients_match_torch(interpolation, device):
    check_op(device, lambda t: t.quantile(0.37, dim=1, interpolation=interpolation),
             lambda t: t.quantile(0.37, dim=1, interpolation=interpolation), [X])
    check_op(device, lambda t: tinynet.nanquantile(t, 0.8, interpolation=interpolation),
             lambda t: torch.nanquantile(t, 0.8, interpolation=interpolation), [X])


def test_errors_as_torch(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(RuntimeError):
        torch.quantile(torch.tensor(X), 1.5)
    with pytest.raises(errors.ArgumentError, match=r"quantile: q values must be in the range \[0, 1\]"):
        tinynet.quantile(x, 1.5)
    with pytest.raises(errors.DTypeError, match="input tensor must be either float or double"):
        tinynet.quantile(tinynet.tensor([1, 2, 3], device=device), 0.5)
    with pytest.raises(errors.DTypeError, match="q tensor must be of the input's dtype"):
        tinynet.quantile(x, tinynet.tensor([0.5], dtype="float32", device=device))
    with pytest.raises(errors.ShapeError, match="q must be a scalar or 1-D"):
        tinynet.quantile(x, tinynet.zeros(1, 1, dtype=x.dtype, device=device))
    with pytest.raises(errors.ArgumentError, match="interpolation must be one of"):
        tinynet.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(errors.ShapeError, match="input tensor must be non-empty"):
        tinynet.quantile(tinynet.zeros(0, device=device), 0.5)
    with pytest.raises(errors.ArgumentTypeError, match="q must be a float or a tensor"):
        tinynet.quantile(x, "a")
    with pytest.raises(errors.IndexOutOfRangeError):
        tinynet.quantile(x, 0.5, dim=2)
    assert_close(tinynet.quantile(x, 0.5), torch.quantile(torch.tensor(X), 0.5), rtol=1e-12, atol=0, what="median")
