"""deg2rad, rad2deg, xlogy, logit, sinc, frac, nansum, nanmean, aminmax, var_mean, std_mean,
atleast_1d/2d/3d, broadcast_shapes, broadcast_tensors, ravel, kron and inner against PyTorch
on every backend: values, dtypes, gradients (and gradcheck), the calling forms and errors."""
import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, check_op, rng, torch
from tinynet import errors

R = rng(61)
M = R.standard_normal((3, 4))
P = R.uniform(0.05, 0.95, (3, 4))          # probabilities for logit
POS = R.uniform(0.2, 3.0, (3, 4))           # positive values for xlogy's other
X0 = numpy.where(R.random((3, 4)) < 0.3, 0.0, M)  # xlogy's input with zeros


def test_elementwise_match_torch(device):
    check_op(device, tinynet.deg2rad, torch.deg2rad, [M * 90])
    check_op(device, lambda x: x.rad2deg(), lambda x: x.rad2deg(), [M])
    check_op(device, tinynet.xlogy, torch.xlogy, [X0, POS], second_order=True)
    check_op(device, lambda x: tinynet.xlogy(x, 2.5), lambda x: torch.xlogy(x, 2.5), [X0])
    check_op(device, lambda y: tinynet.xlogy(0.5, y), lambda y: torch.xlogy(0.5, y), [POS])
    check_op(device, tinynet.logit, torch.logit, [P])
    check_op(device, lambda x: x.logit(eps=0.1), lambda x: x.logit(eps=0.1), [R.uniform(-0.2, 1.2, (3, 4))])
    check_op(device, tinynet.sinc, torch.sinc, [numpy.concatenate([M.ravel(), [0.0]])])
    check_op(device, lambda x: x.frac(), lambda x: x.frac(), [M * 3])


def test_integers_and_edges_as_torch(device):
    i = numpy.array([0, 1, 2, 7])
    for name in ("deg2rad", "rad2deg", "logit", "sinc"):
        assert_close(getattr(tinynet, name)(tinynet.tensor(i, device=device)), getattr(torch, name)(torch.tensor(i)),
                     rtol=1e-6, atol=1e-7, what=name)
    a, b = numpy.array([0.0, 0.0, 2.0, 1.0, 0.0]), numpy.array([0.0, numpy.nan, 3.0, 0.0, -1.0])
    assert_close(tinynet.xlogy(tinynet.tensor(a, device=device), tinynet.tensor(b, device=device)),
                 torch.xlogy(torch.tensor(a), torch.tensor(b)), rtol=1e-12, atol=0, what="xlogy at 0, NaN, -1")
    assert_close(tinynet.xlogy(tinynet.tensor([1, 2], device=device), 3), torch.xlogy(torch.tensor([1, 2]), 3),
                 rtol=1e-6, atol=0, what="xlogy of ints")
    with pytest.raises(NotImplementedError):
        torch.frac(torch.tensor(i))
    with pytest.raises(errors.DTypeError, match="frac: not implemented for int64"):
        tinynet.frac(tinynet.tensor(i, device=device))
    with pytest.raises(errors.ArgumentTypeError, match="xlogy: expected at least one Tensor"):
        tinynet.xlogy(1.0, 2.0)
    with pytest.raises(errors.ArgumentTypeError, match="logit: eps must be a number"):
        tinynet.logit(tinynet.tensor(P, device=device), eps="a")


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), ((0, 1), False)])
def test_nan_reductions_match_torch(dim, keepdim, device):
    x = numpy.where(R.random((3, 4)) < 0.3, numpy.nan, M)
    x[2] = numpy.nan  # a row of NaNs: nanmean gives NaN there
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    check_op(device, lambda t: tinynet.nansum(t, **kw), lambda t: torch.nansum(t, **kw), [x])
    check_op(device, lambda t: t.nanmean(**kw), lambda t: t.nanmean(**kw), [x], grad=False)
    assert_close(tinynet.nansum(tinynet.tensor([1, 2, 3], device=device)), torch.nansum(torch.tensor([1, 2, 3])),
                 rtol=0, atol=0, what="nansum of ints")
    with pytest.raises(errors.DTypeError, match="nanmean: expected input to have floating point"):
        tinynet.nanmean(tinynet.tensor([1, 2], device=device))


def test_nanmean_gradient_matches_torch(device):
    x = numpy.where(R.random((3, 4)) < 0.3, numpy.nan, M)
    t, p = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    tinynet.nanmean(t, 1).sum().backward()
    torch.nanmean(p, 1).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-12, atol=0, what="nanmean gradient")


def test_nanmean_gradient_of_an_all_nan_row_is_nan(device):
    # PyTorch: grad / count (inf for a count of 0) times the not-NaN mask: NaN on an all-NaN row;
    # the rows with some numbers keep 0 at their NaNs. Also through create_graph (the backward's backward).
    x = numpy.array([[numpy.nan, numpy.nan, numpy.nan], [1.0, numpy.nan, 2.0], [3.0, 4.0, 5.0]])
    t, p = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        tinynet.nanmean(t, 1).sum().backward()
        (g,) = tinynet.autograd.grad(tinynet.nansum(t * t), t, create_graph=True)
    torch.nanmean(p, 1).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-12, atol=0, what="nanmean gradient")
    assert numpy.isnan(as_numpy(t.grad)[0]).all()  # assert_allclose matches NaNs by default
    (q,) = torch.autograd.grad(torch.nansum(p * p), p, create_graph=True)
    assert_close(g, q, rtol=1e-12, atol=0, what="nansum gradient (create_graph)")


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True)])
def test_aminmax_var_mean_std_mean_match_torch(dim, keepdim, device):
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    for k, field in enumerate(("min", "max")):
        # gradients against amin/amax (older PyTorch has no derivative for aminmax; 2.13's is theirs)
        check_op(device, lambda t: tinynet.aminmax(t, **kw)[k], lambda t: getattr(torch, "a" + field)(t, **kw), [M])
        assert_close(getattr(tinynet.tensor(M, device=device).aminmax(**kw), field),
                     getattr(torch.aminmax(torch.tensor(M), **kw), field), rtol=0, atol=0, what=field)
    args = () if dim is None else (dim,)
    for name in ("var_mean", "std_mean"):
        for k in (0, 1):
            check_op(device, lambda t: getattr(tinynet, name)(t, *args, keepdim=keepdim, correction=0)[k],
                     lambda t: getattr(torch, name)(t, *args, keepdim=keepdim, correction=0)[k], [M])
            check_op(device, lambda t: getattr(tinynet, name)(t, *args, keepdim=keepdim)[k],
                     lambda t: getattr(torch, name)(t, *args, keepdim=keepdim)[k], [M])
    with pytest.raises(errors.ShapeError):
        tinynet.aminmax(tinynet.zeros(0, device=device))


def test_atleast_and_broadcasting_as_torch(device):
    shapes = [(), (3,), (2, 3), (2, 3, 4)]
    arrays = [R.standard_normal(s) for s in shapes]
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        ours, theirs = getattr(tinynet, name), getattr(torch, name)
        for a in arrays:
            check_op(device, ours, theirs, [a])
        many = ours(*[tinynet.tensor(a, device=device) for a in arrays])
        ref = theirs(*[torch.tensor(a) for a in arrays])
        assert isinstance(many, tuple) and [tuple(t.shape) for t in many] == [tuple(t.shape) for t in ref]
        listed = ours([tinynet.tensor(a, device=device) for a in arrays[:1]])
        assert isinstance(listed, tuple) and len(listed) == 1
        with pytest.raises(errors.ArgumentTypeError, match=f"{name}: tensors\\[1\\] must be a Tensor"):
            ours(tinynet.zeros(2, device=device), [1, 2])
    for shapes_ in [((2, 1), (3,)), ((5, 1, 4), (3, 1), 1), ((0, 1), (3,)), ()]:
        assert tinynet.broadcast_shapes(*shapes_) == tuple(torch.broadcast_shapes(*shapes_))
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2, 3), (4,))
    with pytest.raises(errors.ShapeError, match="broadcast_shapes: shapes"):
        tinynet.broadcast_shapes((2, 3), (4,))
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.broadcast_shapes(("a",))
    a, b = R.standard_normal((2, 1)), R.standard_normal((3,))
    check_op(device, lambda x, y: tinynet.broadcast_tensors(x, y)[0] * 2 + tinynet.broadcast_tensors(x, y)[1],
             lambda x, y: torch.broadcast_tensors(x, y)[0] * 2 + torch.broadcast_tensors(x, y)[1], [a, b])


def test_ravel_kron_inner_match_torch(device):
    check_op(device, lambda x: x.t().ravel(), lambda x: x.t().ravel(), [M])
    check_op(device, tinynet.kron, torch.kron, [R.standard_normal((2, 3)), R.standard_normal((4, 2))])
    check_op(device, tinynet.kron, torch.kron, [R.standard_normal((2, 3)), R.standard_normal((2, 1, 2))])
    check_op(device, tinynet.kron, torch.kron, [R.standard_normal(3), R.standard_normal(())])
    ints = tinynet.kron(tinynet.tensor([[1, 2]], device=device), tinynet.tensor([[1], [10]], device=device))
    assert_close(ints, torch.kron(torch.tensor([[1, 2]]), torch.tensor([[1], [10]])), rtol=0, atol=0, what="kron ints")
    check_op(device, tinynet.inner, torch.inner, [R.standard_normal((2, 3)), R.standard_normal((4, 3))])
    check_op(device, lambda x, y: x.inner(y), lambda x, y: x.inner(y), [R.standard_normal((2, 5, 3)),
                                                                         R.standard_normal(3)])
    check_op(device, tinynet.inner, torch.inner, [R.standard_normal(()), R.standard_normal((4, 3))])
    with pytest.raises(errors.ShapeError, match="inner: the last dims must match"):
        tinynet.inner(tinynet.zeros(2, 3, device=device), tinynet.zeros(3, 2, device=device))
