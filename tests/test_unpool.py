"""max_pool1d/2d(return_indices=True), F.max_pool*_with_indices and max_unpool1d/2d (functions
and nn.MaxUnpool1d/2d) against PyTorch on every backend: the indices (ties, padding,
ceil_mode, dilation), the unpooled values and gradients, output_size, reprs and errors."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors, nn

R = rng(83)
X = numpy.round(R.standard_normal((2, 3, 7, 6)) * 2) / 2   # ties inside windows
CASES = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, ceil_mode=True),
         dict(kernel_size=(2, 3), stride=1, dilation=2)]


@pytest.mark.parametrize("kw", CASES)
def test_max_pool2d_indices_match_torch(kw, device):
    y, i = F.max_pool2d(tinynet.tensor(X, device=device), return_indices=True, **kw)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(X), return_indices=True, **kw)
    assert_close(y, ty, rtol=0, atol=0, what="values")
    assert i.dtype == tinynet.int64 and not i.requires_grad
    numpy.testing.assert_array_equal(i.numpy(), ti.numpy())
    layer_y, layer_i = nn.MaxPool2d(return_indices=True, **kw).to(device)(tinynet.tensor(X, device=device))
    numpy.testing.assert_array_equal(layer_i.numpy(), ti.numpy())
    wi = F.max_pool2d_with_indices(tinynet.tensor(X, device=device), **kw)[1]
    numpy.testing.assert_array_equal(wi.numpy(), ti.numpy())


def test_max_pool1d_indices_and_nan_match_torch(device):
    x = X[0].copy()
    x[1, 2, 3] = numpy.nan
    for args in ((3, 2, 1), (2,), (3, 1, 0, 2)):
        y, i = F.max_pool1d(tinynet.tensor(x, device=device), *args, return_indices=True)
        ty, ti = torch.nn.functional.max_pool1d(torch.tensor(x), *args, return_indices=True)
        numpy.testing.assert_array_equal(i.numpy(), ti.numpy())
        assert_close(y, ty, rtol=0, atol=0, what="values")
    y, i = F.max_pool2d(tinynet.tensor(X[:1, :1], device=device), 2, return_indices=True)
    assert F.max_pool1d_with_indices(tinynet.tensor(x, device=device), 2)[1].shape == (3, 7, 3)


@pytest.mark.parametrize("kw", CASES[:3])
def test_max_unpool2d_matches_torch(kw, device):
    _, ti = torch.nn.functional.max_pool2d(torch.tensor(X), return_indices=True, **kw)
    idx = ti.numpy()
    y = R.standard_normal(idx.shape)
    ukw = {k: v for k, v in kw.items() if k in ("kernel_size", "stride", "padding")}
    size = (X.shape[2], X.shape[3])
    # overlapping windows can name one input twice: which value lands there is unspecified (as
    # in PyTorch) and the function is not differentiable there, so gradients only without overlap
    overlap = kw.get("stride", kw["kernel_size"]) != kw["kernel_size"]
    if overlap:  # give every input position's duplicates one value, so either choice gives the same output
        planes, rows = idx.reshape(-1, idx.shape[2] * idx.shape[3]), y.reshape(-1, idx.shape[2] * idx.shape[3])
        for r in range(len(planes)):
            _, first, inverse = numpy.unique(planes[r], return_index=True, return_inverse=True)
            rows[r] = rows[r][first][inverse]
    check_op(device, lambda t, i: F.max_unpool2d(t, i, output_size=size, **ukw),
             lambda t, i: torch.nn.functional.max_unpool2d(t, i, output_size=size, **ukw), [y, idx],
             grad=not overlap)
    layer = nn.MaxUnpool2d(**ukw)
    assert repr(layer) == repr(torch.nn.MaxUnpool2d(**ukw))
    got = layer(tinynet.tensor(y, device=device), tinynet.tensor(idx, device=device), output_size=X.shape)
    ref = torch.nn.MaxUnpool2d(**ukw)(torch.tensor(y), ti, output_size=X.shape)
    assert_close(got, ref, rtol=0, atol=0, what="layer")


def test_pool_then_unpool_round_trip_and_1d(device):
    x = tinynet.tensor(X, device=device)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    back = F.max_unpool2d(y, i, 2, output_size=x.shape[2:])
    kept = back.numpy() != 0
    numpy.testing.assert_array_equal(back.numpy()[kept], X[kept])
    x1 = R.standard_normal((2, 3, 9))
    _, ti = torch.nn.functional.max_pool1d(torch.tensor(x1), 3, 3, return_indices=True)
    v = R.standard_normal(ti.shape)
    check_op(device, lambda t, i: F.max_unpool1d(t, i, 3), lambda t, i: torch.nn.functional.max_unpool1d(t, i, 3),
             [v, ti.numpy()])
    check_op(device, lambda t, i: nn.MaxUnpool1d(3)(t, i), lambda t, i: torch.nn.MaxUnpool1d(3)(t, i),
             [v[0], ti.numpy()[0]])  # unbatched
    assert repr(nn.MaxUnpool1d(3, 2)) == repr(torch.nn.MaxUnpool1d(3, 2))


def test_unpool_errors(device):
    y = tinynet.zeros(1, 1, 2, 2, device=device)
    i = tinynet.zeros(1, 1, 2, 2, dtype=tinynet.int64, device=device)
    with pytest.raises(errors.DTypeError, match="max_unpool2d: expected integer"):
        F.max_unpool2d(y, y, 2)
    with pytest.raises(errors.ShapeError, match="expected indices of the input's shape"):
        F.max_unpool2d(y, i[..., :1], 2)
    with pytest.raises(errors.ShapeError, match="not within one stride of the default"):
        F.max_unpool2d(y, i, 2, output_size=(9, 9))
    with pytest.raises(errors.ShapeError, match="expected a 3-D or 4-D input"):
        F.max_unpool2d(y[0, 0], i[0, 0], 2)
    with pytest.raises(errors.ArgumentTypeError):
        F.max_unpool2d(y, i, "a")
    if device == "cpu":  # index values are checked on the CPU only (docs/pytorch.md)
        with pytest.raises(errors.IndexOutOfRangeError, match="index 16 is outside the output plane"):
            F.max_unpool2d(y, i + 16, 2)
