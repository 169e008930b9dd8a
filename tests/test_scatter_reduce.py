"""scatter_reduce, index_reduce and put (and their in-place methods) against PyTorch on every
backend: values for every reduction with and without the input's own values, gradients
(ties of amax/amin and zeros of prod included), and the refusals."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng, torch
from tinynet import errors
from tinynet.ops.scatter_reduce import reduce_at

R = rng(41)
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def _case(shape=(4, 5), src_shape=(6, 5), index_shape=(6, 3), dim=0, ties=False):
    x = R.integers(-2, 3, shape).astype(numpy.float64) if ties else R.standard_normal(shape)
    src = R.integers(-2, 3, src_shape).astype(numpy.float64) if ties else R.standard_normal(src_shape)
    index = R.integers(0, shape[dim], index_shape)
    return x, src, index


def _compare(device, x, src, index, dim, reduce, include_self, dtype="float64"):
    tol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 1e-5)
    a = tinynet.tensor(x.astype(dtype), device=device, requires_grad=True)
    s = tinynet.tensor(src.astype(dtype), device=device, requires_grad=True)
    ta, ts = torch.tensor(x.astype(dtype), requires_grad=True), torch.tensor(src.astype(dtype), requires_grad=True)
    out = tinynet.scatter_reduce(a, dim, tinynet.tensor(index, device=device), s, reduce, include_self=include_self)
    ref = torch.scatter_reduce(ta, dim, torch.tensor(index), ts, reduce, include_self=include_self)
    assert_close(out, ref, *tol, what=f"{reduce} include_self={include_self}")
    g = R.standard_normal(x.shape).astype(dtype)
    (out * tinynet.tensor(g, device=device)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    assert_close(a.grad, ta.grad, *tol, what=f"{reduce} input gradient")
    assert_close(s.grad, ts.grad, *tol, what=f"{reduce} src gradient")


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_torch(reduce, include_self, device):
    # src as large as index: PyTorch 2.13's backward refuses a src larger than index (its gradient
    # has index's shape); that case is compared forward only, below
    for dim, shapes in ((0, ((4, 5), (6, 3), (6, 3))), (1, ((3, 4), (2, 7), (2, 7))), (-1, ((2, 3, 4), (2, 2, 6),
                                                                                             (2, 2, 6)))):
        x, src, index = _case(*shapes, dim=dim)
        _compare(device, x, src, index, dim, reduce, include_self)
        _compare(device, x, src, index, dim, reduce, include_self, "float32")
    x, src, index = _case(src_shape=(6, 3), ties=True)  # ties (amax/amin) and zeros (prod)
    if include_self or reduce not in ("amax", "amin"):
        _compare(device, x, src, index, 0, reduce, include_self)
    else:  # PyTorch also counts the left-out input value among the tied members (its shares then sum to
        # less than the gradient); tinynet splits the gradient among the members only
        a, s = tinynet.tensor(x, device=device), tinynet.tensor(src, device=device, requires_grad=True)
        out = tinynet.scatter_reduce(a, 0, tinynet.tensor(index, device=device), s, reduce, include_self=False)
        out.sum().backward()
        hit = {(int(index[i, j]), j) for i in range(index.shape[0]) for j in range(index.shape[1])}
        assert abs(float(s.grad.sum()) - len(hit)) < 1e-9  # each receiving position's gradient, whole
    x, src, index = _case()  # src larger than index: forward against PyTorch, gradients by finite differences
    out = tinynet.scatter_reduce(tinynet.tensor(x, device=device), 0, tinynet.tensor(index, device=device),
                                 tinynet.tensor(src, device=device), reduce, include_self=include_self)
    assert_close(out, torch.scatter_reduce(torch.tensor(x), 0, torch.tensor(index), torch.tensor(src), reduce,
                                           include_self=include_self), 1e-10, 1e-12)
    ti = tinynet.tensor(index, device=device)
    tinynet.autograd.gradcheck(lambda a, b: tinynet.scatter_reduce(a, 0, ti, b, reduce, include_self=include_self),
                               (tinynet.tensor(x, device=device, requires_grad=True),
                                tinynet.tensor(src, device=device, requires_grad=True)))


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_integers_and_inplace(reduce, device):
    x, src, index = (R.integers(-9, 10, (4, 3)), R.integers(-9, 10, (5, 3)), R.integers(0, 4, (5, 3)))
    for include_self in (True, False):
        out = tinynet.scatter_reduce(tinynet.tensor(x, device=device), 0, tinynet.tensor(index, device=device),
                                     tinynet.tensor(src, device=device), reduce, include_self=include_self)
        ref = torch.scatter_reduce(torch.tensor(x), 0, torch.tensor(index), torch.tensor(src), reduce,
                                   include_self=include_self)
        assert out.dtype == tinynet.int64 and out.tolist() == ref.tolist()
    t = tinynet.tensor(x, device=device)
    assert t.scatter_reduce_(0, tinynet.tensor(index, device=device), tinynet.tensor(src, device=device),
                             reduce) is t
    assert t.tolist() == torch.tensor(x).scatter_reduce_(0, torch.tensor(index), torch.tensor(src),
                                                          reduce).tolist()


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(reduce, include_self, device):
    import warnings
    x, source = R.standard_normal((4, 3)), R.standard_normal((6, 3))
    index = numpy.array([0, 2, 0, 3, 2, 2])
    for dim, (xx, ss) in ((0, (x, source)), (1, (x.T.copy(), source.T.copy()))):
        a = tinynet.tensor(xx, device=device, requires_grad=True)
        s = tinynet.tensor(ss, device=device, requires_grad=True)
        ta, ts = torch.tensor(xx, requires_grad=True), torch.tensor(ss, requires_grad=True)
        out = tinynet.index_reduce(a, dim, tinynet.tensor(index, device=device), s, reduce, include_self=include_self)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = torch.index_reduce(ta, dim, torch.tensor(index), ts, reduce, include_self=include_self)
        assert_close(out, ref, 1e-10, 1e-12, what=f"index_reduce {reduce}")
        g = R.standard_normal(xx.shape)
        (out * tinynet.tensor(g, device=device)).sum().backward()
        (ref * torch.tensor(g)).sum().backward()
        assert_close(a.grad, ta.grad, 1e-10, 1e-12)
        assert_close(s.grad, ts.grad, 1e-10, 1e-12)
    t = tinynet.tensor(x, device=device)
    assert t.index_reduce_(0, tinynet.tensor(index, device=device), tinynet.tensor(source, device=device),
                           reduce) is t


def test_put_matches_torch(device):
    x, idx, src = R.standard_normal((3, 4)), numpy.array([[0, -1], [5, 7]]), R.standard_normal(4)
    for accumulate in (False, True):
        a = tinynet.tensor(x, device=device, requires_grad=True)
        s = tinynet.tensor(src, device=device, requires_grad=True)
        ta, ts = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
        out = tinynet.put(a, tinynet.tensor(idx, device=device), s, accumulate)
        ref = torch.put(ta, torch.tensor(idx), ts, accumulate)
        assert_close(out, ref, 0, 0)
        (out * tinynet.tensor(x, device=device)).sum().backward()
        (ref * torch.tensor(x)).sum().backward()
        assert_close(a.grad, ta.grad, 0, 0) or assert_close(s.grad, ts.grad, 0, 0)
    t = tinynet.tensor(x, device=device)
    assert t.put_(tinynet.tensor(idx, device=device), tinynet.tensor(src, device=device), accumulate=True) is t
    assert_close(t, torch.tensor(x).put_(torch.tensor(idx), torch.tensor(src), accumulate=True), 1e-12, 1e-12)


def test_refusals(device):
    x, i = tinynet.zeros(4, device=device), tinynet.tensor([0, 1], device=device)
    with pytest.raises(errors.ArgumentError, match="reduce"):
        tinynet.scatter_reduce(x, 0, i, tinynet.ones(2, device=device), "max")
    with pytest.raises(errors.DTypeError, match="src"):
        tinynet.scatter_reduce(x, 0, i, tinynet.ones(2, dtype=tinynet.float64, device=device), "sum")
    with pytest.raises(RuntimeError):
        torch.scatter_reduce(torch.zeros(4), 0, torch.tensor([0, 1]), torch.ones(2, dtype=torch.float64), "sum")
    with pytest.raises(errors.IndexOutOfRangeError, match="out of bounds"):
        tinynet.scatter_reduce(x, 0, tinynet.tensor([9], device=device), tinynet.ones(1, device=device), "sum")
    with pytest.raises(RuntimeError):
        torch.scatter_reduce(torch.zeros(4), 0, torch.tensor([9]), torch.ones(1), "sum")
    with pytest.raises(errors.ArgumentError, match="index_reduce"):
        tinynet.index_reduce(tinynet.ones(3, 2, device=device), 0, i, tinynet.ones(2, 2, device=device), "sum")
    with pytest.raises(errors.ShapeError, match="index_reduce"):
        tinynet.index_reduce(tinynet.ones(3, 2, device=device), 0, i, tinynet.ones(3, 2, device=device), "prod")
    with pytest.raises(errors.IndexOutOfRangeError, match="put"):
        tinynet.put(tinynet.zeros(2, 3, device=device), tinynet.tensor([6], device=device),
                    tinynet.ones(1, device=device))
    with pytest.raises(IndexError):
        torch.put(torch.zeros(2, 3), torch.tensor([6]), torch.ones(1))
    with pytest.raises(errors.ShapeError, match="put"):
        tinynet.put(tinynet.zeros(2, 3, device=device), tinynet.tensor([1, 2], device=device),
                    tinynet.ones(1, device=device))


@pytest.mark.parametrize("ufunc", ["add", "multiply", "maximum", "minimum"])
def test_rank_pass_reduction_equals_ufunc_at(ufunc):
    """The GPU path of reduce_at (one pass per rank within a group), run on NumPy arrays."""
    ids, vals = R.integers(0, 7, 50), R.standard_normal(50)
    ours, ref = numpy.ones(9), numpy.ones(9)
    reduce_at(numpy, ours, ids, vals, ufunc, loop=True)
    getattr(numpy, ufunc).at(ref, ids, vals)
    numpy.testing.assert_allclose(ours, ref, rtol=1e-12)
