"""mode, histogram, histogramdd, gradient, nonzero_static and binomial against PyTorch on every
backend: values, index choices, dtypes, gradients (mode, gradient) and the refusals."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(8)


@pytest.mark.parametrize("shape, dim", [((4, 7), 1), ((4, 7), 0), ((3, 4, 5), 1), ((6,), 0), ((5, 9), -1)])
def test_mode_matches_torch(shape, dim, device):
    a = R.integers(0, 4, shape).astype(numpy.float64)
    for keepdim in (False, True):
        out = tinynet.mode(tinynet.tensor(a, device=device), dim, keepdim)
        ref = torch.mode(torch.tensor(a), dim, keepdim)
        assert out.values.tolist() == ref.values.tolist() and out.indices.tolist() == ref.indices.tolist()
        assert out.indices.dtype == tinynet.int64
    # the gradient goes to the chosen index (finite differences would break the ties that make the mode)
    t, p = tinynet.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    g = R.standard_normal(tuple(torch.mode(p, dim).values.shape))
    (tinynet.mode(t, dim).values * tinynet.tensor(g, device=device)).sum().backward()
    (torch.mode(p, dim).values * torch.tensor(g)).sum().backward()
    assert_close(t.grad, p.grad, 0, 0)
    ints = R.integers(-3, 3, shape)
    assert tinynet.tensor(ints, device=device).mode(dim).indices.tolist() == torch.tensor(ints).mode(
        dim).indices.tolist()
    with pytest.raises(errors.IndexOutOfRangeError, match="mode"):
        tinynet.mode(tinynet.zeros(2, 0, device=device), 1)


def test_histogram_matches_torch(device):
    x = R.standard_normal(50)
    for bins, kwargs in ((5, {}), (4, {"range": (-1.0, 1.0)}), (3, {"density": True}),
                         (6, {"weight": R.uniform(0, 2, 50)}), (numpy.array([-3.0, -0.5, 0.0, 2.0]), {})):
        ours_kwargs = {k: tinynet.tensor(v, device=device) if isinstance(v, numpy.ndarray) else v
                       for k, v in kwargs.items()}
        theirs_kwargs = {k: torch.tensor(v) if isinstance(v, numpy.ndarray) else v for k, v in kwargs.items()}
        for dt in ("float32", "float64"):
            tb = tinynet.tensor(bins.astype(dt), device=device) if isinstance(bins, numpy.ndarray) else bins
            pb = torch.tensor(bins.astype(dt)) if isinstance(bins, numpy.ndarray) else bins
            ok = {k: v.to(getattr(tinynet, dt)) if isinstance(v, tinynet.Tensor) else v for k, v in ours_kwargs.items()}
            tk = {k: v.to(getattr(torch, dt)) if isinstance(v, torch.Tensor) else v for k, v in theirs_kwargs.items()}
            h, e = tinynet.histogram(tinynet.tensor(x.astype(dt), device=device), tb, **ok)
            rh, re = torch.histogram(torch.tensor(x.astype(dt)), pb, **tk)
            assert_close(h, rh, 1e-5, 1e-6) or assert_close(e, re, 1e-6, 1e-6)
            assert str(h.dtype) == dt
    same = tinynet.histogram(tinynet.tensor([1.0, 1.0], device=device), 2)
    assert same.hist.tolist() == [0.0, 2.0] and same.bin_edges.tolist() == [0.5, 1.0, 1.5]
    assert tinynet.tensor(x, device=device).histogram(3).hist.tolist() == torch.tensor(x).histogram(3).hist.tolist()
    with pytest.raises(errors.DTypeError, match="histogram"):
        tinynet.histogram(tinynet.tensor([1, 2], device=device), 3)
    with pytest.raises(errors.ArgumentError, match="range"):
        tinynet.histogram(tinynet.tensor([1.0], device=device), 3, range=(1.0, 0.0))


def test_histogramdd_matches_torch(device):
    pts = R.standard_normal((40, 2))
    for bins, kwargs in (([3, 4], {}), (2, {"range": [-1.0, 1.0, -2.0, 2.0]}), ([2, 3], {"density": True})):
        h, edges = tinynet.histogramdd(tinynet.tensor(pts, device=device), bins, **kwargs)
        rh, redges = torch.histogramdd(torch.tensor(pts), bins, **kwargs)
        assert_close(h, rh, 1e-10, 1e-12)
        for a, b in zip(edges, redges):
            assert_close(a, b, 1e-10, 1e-12)
    edges = [torch.tensor([-3.0, 0.0, 3.0], dtype=torch.float64), torch.tensor([-3.0, 3.0], dtype=torch.float64)]
    h, _ = tinynet.histogramdd(tinynet.tensor(pts, device=device),
                               [tinynet.tensor(e.numpy(), device=device) for e in edges])
    assert_close(h, torch.histogramdd(torch.tensor(pts), edges).hist, 0, 0)


@pytest.mark.parametrize("kwargs", [{}, {"spacing": 2.0}, {"edge_order": 2}, {"dim": 1}, {"dim": [0, 1],
                                                                                          "spacing": [0.5, 3.0]}])
def test_gradient_matches_torch(kwargs, device):
    x = R.standard_normal((4, 5))
    n = len(kwargs.get("dim", [0, 1])) if isinstance(kwargs.get("dim", [0, 1]), list) else 1
    for k in range(n):
        check_op(device, lambda t: tinynet.gradient(t, **kwargs)[k], lambda t: torch.gradient(t, **kwargs)[k], [x])


def test_gradient_with_coordinates_and_refusals(device):
    f, xs = R.standard_normal(6), numpy.array([0.0, 0.5, 1.5, 1.7, 3.0, 4.0])
    for order in (1, 2):
        check_op(device, lambda t: tinynet.gradient(t, spacing=(tinynet.tensor(xs, device=device),),
                                                    edge_order=order)[0],
                 lambda t: torch.gradient(t, spacing=(torch.tensor(xs),), edge_order=order)[0], [f])
    ints = tinynet.gradient(tinynet.tensor([1, 4, 9, 16], device=device))[0]
    assert ints.dtype == tinynet.float32 and ints.tolist() == torch.gradient(torch.tensor([1, 4, 9, 16]))[0].tolist()
    with pytest.raises(errors.ArgumentError, match="edge_order"):
        tinynet.gradient(tinynet.ones(2, device=device), edge_order=2)
    with pytest.raises(errors.ArgumentError, match="edge_order"):
        tinynet.gradient(tinynet.ones(5, device=device), edge_order=3)
    with pytest.raises(errors.ArgumentError, match="length 2"):
        tinynet.gradient(tinynet.ones(3, 4, device=device), spacing=[1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError):
        torch.gradient(torch.ones(3, 4), spacing=[1.0, 2.0, 3.0])


def test_nonzero_static(device):
    for a, size, fill in ((numpy.array([[0, 1], [1, 1]]), 4, -1), (numpy.array([0, 1, 1]), 1, 9),
                          (numpy.zeros((2, 2)), 2, 0)):
        ours = tinynet.nonzero_static(tinynet.tensor(a, device=device), size=size, fill_value=fill)
        assert ours.tolist() == torch.nonzero_static(torch.tensor(a), size=size, fill_value=fill).tolist()
        assert ours.dtype == tinynet.int64
    assert tinynet.tensor([1, 0], device=device).nonzero_static(size=1).tolist() == [[0]]
    with pytest.raises(errors.ArgumentError, match="size"):
        tinynet.nonzero_static(tinynet.ones(2, device=device), size=-1)


def test_binomial(device):
    count = tinynet.full((20000,), 10.0, device=device)
    draws = tinynet.binomial(count, tinynet.full((20000,), 0.3, device=device)).numpy(force=True)
    assert draws.dtype == numpy.float32 and draws.min() >= 0 and draws.max() <= 10
    assert abs(draws.mean() - 3.0) < 0.05 and abs(draws.var() - 2.1) < 0.1
    edge = tinynet.binomial(tinynet.tensor([5.0, 5.0], device=device), tinynet.tensor([0.0, 1.0], device=device))
    assert edge.tolist() == [0.0, 5.0]
    with pytest.raises(errors.DTypeError, match="binomial"):
        tinynet.binomial(tinynet.tensor([10, 5], device=device), tinynet.tensor([0.5, 0.9], device=device))
    with pytest.raises(ValueError):
        torch.binomial(torch.tensor([10, 5]), torch.tensor([0.5, 0.9]))
    with pytest.raises(errors.ArgumentError, match="binomial"):
        tinynet.binomial(tinynet.tensor([1.0], device=device), tinynet.tensor([1.5], device=device))
