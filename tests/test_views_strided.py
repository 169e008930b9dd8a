"""select, adjoint/H/mH, split_with_sizes and the unsafe_* spellings, the *_copy forms of the
views, as_strided (and its copy, scatter, in-place forms), the in-place shape changes
(unsqueeze_, t_, transpose_, ...), resize_, and apply_/map_/map2_, against PyTorch on every
backend: values, memory sharing, gradients and the refusals."""
import warnings

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch, torch_is_reference
from tinynet import errors

R = rng(23)
X = R.standard_normal((3, 4, 5))


@pytest.mark.parametrize("dim, index", [(0, 1), (1, -1), (2, 4), (-1, 0)])
def test_select(dim, index, device):
    check_op(device, lambda t: tinynet.select(t, dim, index), lambda t: torch.select(t, dim, index), [X])
    check_op(device, lambda t: t.select(dim, index), lambda t: t.select(dim, index), [X], dtypes=("float64",))
    t = tinynet.tensor(X, device=device)
    assert tinynet.select(t, dim, index).data_ptr() != 0 and tinynet.select(t, dim, index)._base is t


def test_select_refusals(device):
    with pytest.raises(errors.IndexOutOfRangeError, match="select: index 5"):
        tinynet.select(tinynet.ones(3, device=device), 0, 5)
    with pytest.raises(IndexError):
        torch.select(torch.ones(3), 0, 5)
    with pytest.raises(errors.IndexOutOfRangeError, match="0-dim"):
        tinynet.select(tinynet.tensor(1.0, device=device), 0, 0)


def test_adjoint_H_mH(device):
    check_op(device, tinynet.adjoint, torch.adjoint, [X])
    check_op(device, lambda t: t.mH, lambda t: t.mH, [X])
    check_op(device, lambda t: t[0].H, lambda t: t[0].H, [X])
    z = X[0] + 1j * X[1]
    assert_close(tinynet.tensor(z, device=device).H, torch.tensor(z).H, rtol=0, atol=0)
    assert_close(tinynet.adjoint(tinynet.tensor(z, device=device)), torch.adjoint(torch.tensor(z)), rtol=0, atol=0)
    with pytest.raises(errors.ShapeError, match="adjoint"):
        tinynet.adjoint(tinynet.ones(3, device=device))
    with pytest.raises(errors.ShapeError, match="H"):
        tinynet.ones(2, 2, 2, device=device).H
    with pytest.raises(RuntimeError):
        torch.ones(2, 2, 2).H


def test_splits(device):
    for f in (lambda m, t: m.split_with_sizes(t, [1, 3], 1), lambda m, t: m.unsafe_split(t, 2, 2),
              lambda m, t: m.unsafe_chunk(t, 2, 0), lambda m, t: m.unsafe_split_with_sizes(t, [2, 3], -1),
              lambda m, t: t.split_with_sizes([2, 1], 0), lambda m, t: t.unsafe_chunk(3, 1)):
        ours, theirs = f(tinynet, tinynet.tensor(X, device=device)), f(torch, torch.tensor(X))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_close(a, b, rtol=0, atol=0)
    with pytest.raises(errors.ShapeError, match="sum exactly"):
        tinynet.split_with_sizes(tinynet.arange(10, device=device), [3, 3])
    with pytest.raises(RuntimeError):
        torch.split_with_sizes(torch.arange(10), [3, 3])


COPIES = [("view_copy", ([20, 3],)), ("permute_copy", ([2, 0, 1],)), ("transpose_copy", (0, 2)),
          ("expand_copy", ([2, 3, 4, 5],)), ("squeeze_copy", ()), ("unsqueeze_copy", (1,)),
          ("diagonal_copy", (1, 1, 2)), ("select_copy", (1, 2)), ("slice_copy", (2, 1, None, 2)),
          ("slice_copy", (0, -2)), ("narrow_copy", (1, 1, 2)), ("unfold_copy", (2, 3, 1)), ("alias_copy", ()),
          ("detach_copy", ())]


@pytest.mark.parametrize("name, args", COPIES, ids=[f"{n}{a}" for n, a in COPIES])
def test_view_copies_match_torch(name, args, device):
    x = X if name != "squeeze_copy" else X[:, :1]
    # PyTorch 2.11 has no derivative for narrow_copy (2.13 has): compare its gradient only there
    grad = name != "detach_copy" and (name != "narrow_copy" or torch_is_reference())
    check_op(device, lambda t: getattr(tinynet, name)(t, *args), lambda t: getattr(torch, name)(t, *args), [x],
             grad=grad)
    t = tinynet.tensor(x, device=device)
    out = getattr(tinynet, name)(t, *args)
    assert out._base is None and (out.numel() == 0 or out.data_ptr() != t.data_ptr())


def test_list_copies_and_complex_copies(device):
    for name, args in (("split_copy", (2, 1)), ("split_with_sizes_copy", ([1, 4], 2)), ("unbind_copy", (0,))):
        ours = getattr(tinynet, name)(tinynet.tensor(X, device=device), *args)
        theirs = getattr(torch, name)(torch.tensor(X), *args)
        assert len(ours) == len(theirs) and all(o._base is None for o in ours)
        for a, b in zip(ours, theirs):
            assert_close(a, b, rtol=0, atol=0)
    check_op(device, lambda t: tinynet.t_copy(t[0]), lambda t: torch.t_copy(t[0]), [X])
    z = X[..., :2].copy()
    c = tinynet.view_as_complex_copy(tinynet.tensor(z, device=device))
    assert_close(c, torch.view_as_complex_copy(torch.tensor(z)), rtol=0, atol=0)
    assert_close(tinynet.view_as_real_copy(c), torch.view_as_real_copy(torch.view_as_complex(torch.tensor(z))),
                 rtol=0, atol=0)
    with pytest.raises(errors.ArgumentError, match="step must be positive"):
        tinynet.slice_copy(tinynet.arange(5, device=device), 0, 0, 5, -1)


@pytest.mark.parametrize("size, stride, offset", [((2, 2), (1, 2), None), ((3, 2), (1, 1), 2), ((2, 3), (0, 1), 1),
                                                  ((4,), (2,), 1), ((0, 3), (3, 1), None)])
def test_as_strided_matches_torch(size, stride, offset, device):
    x = R.standard_normal(12)
    check_op(device, lambda t: tinynet.as_strided(t, size, stride, offset),
             lambda t: torch.as_strided(t, size, stride, offset), [x])
    check_op(device, lambda t: t[2:].as_strided(size, stride), lambda t: t[2:].as_strided(size, stride), [x],
             dtypes=("float64",))
    check_op(device, lambda t: tinynet.as_strided_copy(t, size, stride, offset),
             lambda t: torch.as_strided_copy(t, size, stride, offset), [x], dtypes=("float64",))
    t = tinynet.tensor(x, device=device)
    v = tinynet.as_strided(t, size, stride, offset)
    if v.numel() and 0 not in stride:
        v.fill_(7.0)  # a view: the storage changes
        assert (t.numpy(force=True) == 7.0).sum() > 0


def test_as_strided_scatter_and_inplace(device):
    # PyTorch's gradient for input is that of the overwritten positions (its formula was flagged
    # as wrong when the op was added, pytorch/pytorch#77128): the forward and src's gradient are
    # compared with PyTorch's, input's with finite differences (check_op's gradcheck)
    for shape in ((6,), (2, 3)):
        z, src = R.standard_normal(shape), R.standard_normal((2, 2))
        check_op(device, lambda a, s: tinynet.as_strided_scatter(a, s, (2, 2), (1, 2)),
                 lambda a, s: torch.as_strided_scatter(a, s, (2, 2), (1, 2)), [z, src], diff=[1])
        check_op(device, lambda a, s: tinynet.as_strided_scatter(a, s, (2, 2), (1, 2)),
                 lambda a, s: torch.as_strided_scatter(a, s, (2, 2), (1, 2)), [z, src], grad=False)
        a = tinynet.tensor(z, device=device, requires_grad=True)
        out = tinynet.as_strided_scatter(a, tinynet.tensor(src, device=device), (2, 2), (1, 2))
        out.sum().backward()
        assert a.grad.reshape(-1).tolist() == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]  # the positions kept
        tinynet.autograd.gradcheck(lambda a, s: tinynet.as_strided_scatter(a, s, (2, 2), (1, 2)),
                                   (tinynet.tensor(z, device=device, requires_grad=True),
                                    tinynet.tensor(src, device=device, requires_grad=True)))
    t = tinynet.zeros(6, device=device)
    assert t.as_strided_((2, 2), (1, 2)) is t and t.shape == (2, 2)
    assert torch.zeros(6).as_strided_((2, 2), (1, 2)).stride() == t.stride()
    with pytest.raises(errors.ArgumentError, match="out of bounds"):
        tinynet.as_strided(tinynet.arange(10, device=device), (2, 2), (30, 1))
    with pytest.raises(RuntimeError):
        torch.as_strided(torch.arange(10), (2, 2), (30, 1))
    with pytest.raises(errors.ShapeError, match="mismatch"):
        tinynet.as_strided(tinynet.arange(10, device=device), (2, 2), (1,))
    e = tinynet.ones(2, device=device).new_empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.dtype == tinynet.float32


@pytest.mark.parametrize("name, args", [("unsqueeze_", (0,)), ("squeeze_", ()), ("t_", ()), ("transpose_", (0, 1)),
                                        ("swapaxes_", (1, 0)), ("swapdims_", (0, 1))])
def test_inplace_shape_changes(name, args, device):
    x = R.standard_normal((1, 3)) if name == "squeeze_" else R.standard_normal((2, 3))
    a, b = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = a * 2, b * 2
    qa, qb = ya * 3, yb * 3  # consumers of the tensor before its shape changes
    assert getattr(ya, name)(*args) is ya
    getattr(yb, name)(*args)
    assert ya.shape == yb.shape and ya.stride() == yb.stride()
    w = R.standard_normal(tuple(yb.shape))
    ((ya * tinynet.tensor(w, device=device)).sum() + qa.sum()).backward()
    ((yb * torch.tensor(w)).sum() + qb.sum()).backward()
    assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-12)
    plain = tinynet.tensor(x, device=device)
    assert getattr(plain, name)(*args).shape == yb.shape
    with pytest.raises(errors.AutogradError, match=name):
        getattr(tinynet.tensor(x, device=device, requires_grad=True), name)(*args)


def test_resize(device):
    a, b = tinynet.arange(6.0, device=device), torch.arange(6.0)
    a.resize_(2, 2), b.resize_(2, 2)
    assert a.tolist() == b.tolist()
    a.resize_(3, 3), b.resize_(3, 3)
    assert a.shape == b.shape == (3, 3) and a.reshape(-1)[:4].tolist() == b.reshape(-1)[:4].tolist()
    c = tinynet.zeros(5, device=device)
    assert tinynet.resize_as_(c, tinynet.ones(2, 2)) is c and c.shape == (2, 2)
    with pytest.raises(errors.AutogradError, match="require grad"):
        tinynet.ones(3, requires_grad=True).resize_(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(device, lambda t: t.resize(4, 3), lambda t: t.resize(4, 3), [R.standard_normal((2, 6))])
        check_op(device, lambda t, u: t.resize_as(u), lambda t, u: t.resize_as(u), [R.standard_normal(6),
                                                                                    R.standard_normal((3, 2))],
                 gradcheck_inputs=None, diff=[0])
        with pytest.raises(errors.ShapeError, match="resize"):
            tinynet.ones(3, device=device).resize(2)


def test_python_maps(cpu_default_device):  # PyTorch's apply_/map_ are CPU-only, as ours
    a, b = tinynet.arange(4.0), torch.arange(4.0)
    assert a.apply_(lambda v: v * v + 1) is a
    b.apply_(lambda v: v * v + 1)
    assert a.tolist() == b.tolist()
    o = numpy.array([1.0, 2.0, 3.0, 4.0], dtype=numpy.float32)
    a.map_(tinynet.tensor(o), lambda p, q: p - q), b.map_(torch.tensor(o), lambda p, q: p - q)
    assert a.tolist() == b.tolist()
    with pytest.raises(errors.DTypeError, match="map_"):
        a.map_(tinynet.tensor(o, dtype=tinynet.float64), lambda p, q: p)
    a.map2_(tinynet.tensor(o), tinynet.tensor(2.0), lambda s, p, q: s + p * q)
    b.map2_(torch.tensor(o), torch.tensor(2.0), lambda s, p, q: s + p * q)
    assert a.tolist() == b.tolist()
    with pytest.raises(errors.ArgumentTypeError, match="apply_"):
        a.apply_(3)
    with pytest.raises(errors.AutogradError, match="apply_"):
        tinynet.ones(2, requires_grad=True).apply_(abs)
