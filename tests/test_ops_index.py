"""Shape, joining and indexing ops against PyTorch: forward values, dtypes, gradients
(float32/float64, gradcheck, gradgradcheck), views sharing memory, and the errors for bad
shapes and indices. One body per op, run on every backend."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(11)
X = R.standard_normal((2, 3, 4))
M = R.standard_normal((3, 4))
COL = R.standard_normal((3, 1))
V = R.standard_normal((4,))

# name: (ours, theirs, inputs), with tinynet's and PyTorch's spelling of the same call
SHAPE = {
    "reshape": (lambda a: a.reshape(4, 6), lambda a: a.reshape(4, 6), [X]),
    "reshape_tuple_infer": (lambda a: tinynet.reshape(a, (6, -1)), lambda a: torch.reshape(a, (6, -1)), [X]),
    "view_flat": (lambda a: a.view(-1), lambda a: a.view(-1), [X]),
    "view_infer": (lambda a: a.view(2, -1, 2), lambda a: a.view(2, -1, 2), [X]),
    "view_of_slice": (lambda a: a[:, 1].view(2, 2, 2), lambda a: a[:, 1].view(2, 2, 2), [X]),
    "view_as": (lambda a, b: a.view_as(b), lambda a, b: a.view_as(b), [M, R.standard_normal((2, 6))]),
    "reshape_as": (lambda a, b: a.t().reshape_as(b), lambda a, b: a.t().reshape_as(b), [M, R.standard_normal((12,))]),
    "reshape_transposed": (lambda a: a.transpose(0, 2).reshape(-1), lambda a: a.transpose(0, 2).reshape(-1), [X]),
    "permute": (lambda a: a.permute(2, 0, 1), lambda a: a.permute(2, 0, 1), [X]),
    "permute_tuple_neg": (lambda a: tinynet.permute(a, (-1, 0, 1)), lambda a: torch.permute(a, (-1, 0, 1)), [X]),
    "transpose": (lambda a: a.transpose(0, -1), lambda a: a.transpose(0, -1), [X]),
    "swapaxes": (lambda a: tinynet.swapaxes(a, 1, 2), lambda a: torch.swapaxes(a, 1, 2), [X]),
    "t": (lambda a: a.t(), lambda a: a.t(), [M]),
    "t_1d": (lambda a: tinynet.t(a), lambda a: torch.t(a), [V]),
    "T": (lambda a: a.T, lambda a: a.permute(1, 0), [M]),
    "mT": (lambda a: a.mT, lambda a: a.mT, [X]),
    "movedim": (lambda a: a.movedim(0, -1), lambda a: a.movedim(0, -1), [X]),
    "movedim_tuple": (lambda a: tinynet.movedim(a, (0, 1), (2, 0)), lambda a: torch.movedim(a, (0, 1), (2, 0)), [X]),
    "moveaxis": (lambda a: a.moveaxis(-1, 0), lambda a: a.moveaxis(-1, 0), [X]),
    "flatten": (lambda a: a.flatten(), lambda a: a.flatten(), [X]),
    "flatten_range": (lambda a: tinynet.flatten(a, 0, 1), lambda a: torch.flatten(a, 0, 1), [X]),
    "flatten_neg": (lambda a: a.flatten(-2, -1), lambda a: a.flatten(-2, -1), [X]),
    "flatten_0d": (lambda a: a.sum().flatten(), lambda a: a.sum().flatten(), [M]),
    "unflatten": (lambda a: a.unflatten(2, (2, 2)), lambda a: a.unflatten(2, (2, 2)), [X]),
    "unflatten_infer": (lambda a: tinynet.unflatten(a, -1, (-1, 2)), lambda a: torch.unflatten(a, -1, (-1, 2)), [X]),
    "squeeze_all": (lambda a: a.squeeze(), lambda a: a.squeeze(), [R.standard_normal((1, 3, 1, 2))]),
    "squeeze_dim": (lambda a: a.squeeze(2), lambda a: a.squeeze(2), [R.standard_normal((1, 3, 1, 2))]),
    "squeeze_non1": (lambda a: a.squeeze(1), lambda a: a.squeeze(1), [R.standard_normal((1, 3, 1, 2))]),
    "squeeze_tuple": (lambda a: tinynet.squeeze(a, (0, -2, 1)), lambda a: torch.squeeze(a, (0, -2, 1)),
                      [R.standard_normal((1, 3, 1, 2))]),
    "unsqueeze": (lambda a: a.unsqueeze(0), lambda a: a.unsqueeze(0), [M]),
    "unsqueeze_end": (lambda a: tinynet.unsqueeze(a, -1), lambda a: torch.unsqueeze(a, -1), [M]),
    "unsqueeze_mid": (lambda a: a.unsqueeze(-2), lambda a: a.unsqueeze(-2), [M]),
    "expand": (lambda a: a.expand(3, 4), lambda a: a.expand(3, 4), [COL]),
    "expand_keep_new": (lambda a: a.expand(2, -1, 5), lambda a: a.expand(2, -1, 5), [COL]),
    "expand_as": (lambda a, b: a.expand_as(b), lambda a, b: a.expand_as(b), [COL, M]),
    "broadcast_to": (lambda a: tinynet.broadcast_to(a, (2, 3, 4)), lambda a: torch.broadcast_to(a, (2, 3, 4)), [V]),
    "expand_0d": (lambda a: a.sum().expand(2, 2), lambda a: a.sum().expand(2, 2), [V]),
    "cat": (lambda a, b: tinynet.cat([a, b, a], 1), lambda a, b: torch.cat([a, b, a], 1), [M, COL]),
    "cat_neg_dim": (lambda a, b: tinynet.concat((a, b), -1), lambda a, b: torch.concat((a, b), -1), [M, COL]),
    "cat_skips_empty": (lambda a: tinynet.cat([a, tinynet.zeros(0, dtype=a.dtype, device=a.device)]),
                        lambda a: torch.cat([a, torch.zeros(0, dtype=a.dtype)]), [M]),
    "stack": (lambda a, b: tinynet.stack([a, b]), lambda a, b: torch.stack([a, b]), [M, M + 1]),
    "stack_last": (lambda a, b: tinynet.stack((a, b), -1), lambda a, b: torch.stack((a, b), -1), [M, M * 2]),
    "stack_0d": (lambda a: tinynet.stack([a.sum(), a.max()]), lambda a: torch.stack([a.sum(), a.max()]), [V]),
    "hstack": (lambda a, b: tinynet.hstack([a, b]), lambda a, b: torch.hstack([a, b]), [M, COL]),
    "hstack_1d": (lambda a: tinynet.hstack([a, a * 2]), lambda a: torch.hstack([a, a * 2]), [V]),
    "vstack": (lambda a, b: tinynet.vstack([a, b]), lambda a, b: torch.vstack([a, b]), [M, V]),
    "pad": (lambda a: F.pad(a, (1, 2, 0, 1), value=0.5), lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1), value=0.5),
            [X]),
    "pad_last": (lambda a: F.pad(a, (2, 0)), lambda a: torch.nn.functional.pad(a, (2, 0)), [M]),
    "pad_crop": (lambda a: F.pad(a, (-1, 2, 1, -2)), lambda a: torch.nn.functional.pad(a, (-1, 2, 1, -2)), [M]),
}


@pytest.mark.parametrize("name", sorted(SHAPE))
def test_shape_op_matches_torch(name, device):
    ours, theirs, inputs = SHAPE[name]
    # view_as, reshape_as, expand_as: the second input only gives a shape
    check_op(device, ours, theirs, inputs, diff=[0] if name.endswith("_as") else None, second_order=True)


def test_view_follows_torch_on_strided_inputs(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(errors.ShapeError, match="view"):
        x.transpose(0, 1).view(-1)
    with pytest.raises(errors.ShapeError, match="view"):
        x.mT.view(2, 12)
    assert x.transpose(0, 1).view(3, 2, 4).shape == (3, 2, 4)  # a size-compatible view works
    assert x[:, :, ::2].view(2, 3, 2).shape == (2, 3, 2) and x[0, 1, 2].view(-1).shape == (1,)
    assert x.transpose(0, 1).reshape(-1).tolist() == torch.tensor(X).transpose(0, 1).reshape(-1).tolist()


def test_views_share_memory(device):
    x = tinynet.tensor(X, device=device)
    views = [x.view(-1), x.reshape(6, 4), x.permute(2, 0, 1), x.t() if x.ndim == 2 else x.mT, x.unsqueeze(1),
             x[1], x[:, 1:, ::2], x[0, 1, 2], x[None, ..., 0], x.flatten(0, 1), x[:1].squeeze(0),
             x[:, :1].expand(2, 3, 4), x.movedim(0, 2), x.unflatten(2, (2, 2))]
    before = [v.tolist() for v in views]
    with tinynet.no_grad():
        x.add_(1.0)
    for v, b in zip(views, before):
        assert_close(v, numpy.asarray(b) + 1.0)
    copies = [x[numpy.array([0, 1])] if device == "cpu" else x[tinynet.tensor([0, 1], device=device)], x.clone(),
              x[x > 0]]
    before = [c.tolist() for c in copies]
    with tinynet.no_grad():
        x.mul_(0.0)
    assert [c.tolist() for c in copies] == before


def test_cat_and_stack_promote_dtypes(device):
    f32 = tinynet.ones(2, device=device)
    i64 = tinynet.tensor([1, 2], device=device)
    f64 = tinynet.ones(2, dtype=tinynet.float64, device=device)
    b = tinynet.tensor([True, False], device=device)
    h = tinynet.ones(2, dtype=tinynet.float16, device=device)
    for ts in ([f32, i64], [f64, f32], [b, i64], [i64, h], [b, b], [b, h, f64]):
        rt = [torch.tensor(t.tolist(), dtype=getattr(torch, str(t.dtype))) for t in ts]
        for ours, theirs in ((tinynet.cat, torch.cat), (tinynet.stack, torch.stack), (tinynet.hstack, torch.hstack),
                             (tinynet.vstack, torch.vstack)):
            out, ref = ours(ts), theirs(rt)
            assert str(out.dtype) == str(ref.dtype)[6:] and out.tolist() == ref.tolist()
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = tinynet.cat([x, x.double()])
    y.sum().backward()
    assert y.dtype == tinynet.float64 and x.grad.dtype == tinynet.float32 and x.grad.tolist() == [2.0, 2.0]


# ---- indexing --------------------------------------------------------------------------
def _idx(values, device, dtype=None):
    """An index tensor: tinynet's on ``device`` (or PyTorch's when device is None)."""
    if device is None:
        return torch.tensor(values) if dtype is None else torch.tensor(values, dtype=getattr(torch, dtype))
    return tinynet.tensor(values, device=device) if dtype is None else tinynet.tensor(values, device=device,
                                                                                        dtype=dtype)


# name: (index builder taking a device (None: PyTorch's), input); the op is ``x[index]``
MASK = X[0] > 0
GETITEM = {
    "int": (lambda d: 1, X),
    "neg_int": (lambda d: (-1, 2), X),
    "scalar": (lambda d: (0, 1, 2), X),
    "slices": (lambda d: (slice(None), slice(1, 3)), X),
    "steps": (lambda d: (Ellipsis, slice(None, None, 2)), X),
    "step_start": (lambda d: (slice(None), slice(2, None, -2)) if d is not None else (slice(None), [2, 0]), X),
    "none": (lambda d: (None, slice(None), None, Ellipsis, 1), X),
    "ellipsis_int": (lambda d: (1, Ellipsis, 2), X),
    "bool_mask": (lambda d: _idx(MASK, d), X[1]),
    "bool_mask_partial": (lambda d: _idx(X[:, 0, 0] > -10, d), X),
    "bool_mask_after_slice": (lambda d: (slice(None), _idx([True, False, True], d)), X),
    "int_list": (lambda d: [2, 0, 2], M),
    "nested_list": (lambda d: [[0, 1], [3, 0]], M),
    "int_tensor": (lambda d: _idx([1, 0, 1], d), X),
    "int_tensor_2d": (lambda d: _idx([[0, 2], [1, 1]], d), M),
    "int32_tensor": (lambda d: _idx([2, -1], d, "int32"), M),
    "zero_d_tensor": (lambda d: _idx(1, d), X),
    "pair": (lambda d: (_idx([0, 1, 1], d), _idx([3, 0, 0], d)), M),
    "adjacent_advanced": (lambda d: (slice(None), _idx([0, 2], d), _idx([1, 3], d)), X),
    "separated_advanced": (lambda d: (_idx([1, 0], d), slice(1, None), _idx([[0], [3]], d)), X),
    "broadcast_advanced": (lambda d: (_idx([[0], [1]], d), Ellipsis, _idx([1, 2, 3], d)), X),
    "advanced_and_int": (lambda d: (1, _idx([2, 0], d)), X),
    "repeated": (lambda d: _idx([0, 0, 2, 0], d), M),
    "empty": (lambda d: _idx(numpy.zeros(0, dtype=numpy.int64), d), M),
}


@pytest.mark.parametrize("name", sorted(GETITEM))
def test_getitem_matches_torch(name, device):
    index, x = GETITEM[name]
    check_op(device, lambda a: a[index(device)], lambda a: a[index(None)], [x], second_order=True)


def test_getitem_on_transposed_view(device):
    def ours(a):
        return a.mT[_idx([1, 0], device), ::2]
    check_op(device, ours, lambda a: a.mT[torch.tensor([1, 0]), ::2], [X], second_order=True)
    check_op(device, lambda a: a.t()[1:, 0], lambda a: a.t()[1:, 0], [M], second_order=True)


# name: (ours, theirs, inputs); index tensors are built inside, on the input's device
GATHER = {
    "index_select": (lambda a: a.index_select(1, _idx([2, 0, 2], a.device)),
                     lambda a: a.index_select(1, torch.tensor([2, 0, 2])), [X]),
    "index_select_neg_dim_0d": (lambda a: tinynet.index_select(a, -1, _idx(3, a.device)),
                                lambda a: torch.index_select(a, -1, torch.tensor(3)), [X]),
    "masked_select": (lambda a: a.masked_select(_idx(X > 0.3, a.device)),
                      lambda a: a.masked_select(torch.tensor(X > 0.3)), [X]),
    "masked_select_broadcast": (lambda a: tinynet.masked_select(a, _idx([True, False, False, True], a.device)),
                                lambda a: torch.masked_select(a, torch.tensor([True, False, False, True])), [X]),
    "gather": (lambda a: a.gather(1, _idx([[[0, 1, 2, 0]], [[2, 2, 1, 0]]], a.device)),
               lambda a: a.gather(1, torch.tensor([[[0, 1, 2, 0]], [[2, 2, 1, 0]]])), [X]),
    "gather_last_smaller": (lambda a: tinynet.gather(a, -1, _idx([[3, 3, 0], [1, 2, 1]], a.device)),
                            lambda a: torch.gather(a, -1, torch.tensor([[3, 3, 0], [1, 2, 1]])), [M]),
    "scatter_src": (lambda a, s: a.scatter(1, _idx([[0, 1, 3, 2], [2, 1, 0, 3]], a.device), s),
                    lambda a, s: a.scatter(1, torch.tensor([[0, 1, 3, 2], [2, 1, 0, 3]]), s),
                    [R.standard_normal((2, 3, 4))[:, 0], R.standard_normal((2, 4))]),
    "scatter_src_larger": (lambda a, s: tinynet.scatter(a, 0, _idx([[2, 0, 1]], a.device), s),
                           lambda a, s: torch.scatter(a, 0, torch.tensor([[2, 0, 1]]), s),
                           [M, R.standard_normal((2, 4))]),
    "scatter_value": (lambda a: a.scatter(0, _idx([[2, 0, 1, 1]], a.device), -1.5),
                      lambda a: a.scatter(0, torch.tensor([[2, 0, 1, 1]]), -1.5), [M]),
    "scatter_value_kw": (lambda a: a.scatter(0, _idx([[2, 0]], a.device), value=2.0),
                         lambda a: a.scatter(0, torch.tensor([[2, 0]]), value=2.0), [M]),
    "scatter_add": (lambda a, s: a.scatter_add(1, _idx([[0, 0, 3], [1, 1, 1], [2, 3, 2]], a.device), s),
                    lambda a, s: a.scatter_add(1, torch.tensor([[0, 0, 3], [1, 1, 1], [2, 3, 2]]), s),
                    [M, R.standard_normal((3, 3))]),
    "take_along_dim": (lambda a: tinynet.take_along_dim(a, _idx([[[0], [1], [3]], [[3], [2], [-1]]], a.device), 2),
                       lambda a: torch.take_along_dim(a, torch.tensor([[[0], [1], [3]], [[3], [2], [-1]]]), 2), [X]),
    "take_along_dim_flat": (lambda a: a.take_along_dim(_idx([5, 0, 23, 5, 2], a.device)),
                            lambda a: a.take_along_dim(torch.tensor([5, 0, 23, 5, 2])), [X]),
    "take_along_dim_broadcast": (lambda a: tinynet.take_along_dim(a, _idx([[[1, 0]]], a.device), 2),
                                 lambda a: torch.take_along_dim(a, torch.tensor([[[1, 0]]]), 2), [X]),
}


# PyTorch's backward fails here ("ScatterBackward0 returned an invalid gradient"): forward
# against PyTorch, gradients against finite differences
TORCH_BACKWARD_FAILS = {"scatter_src_larger"}


@pytest.mark.parametrize("name", sorted(GATHER))
def test_gather_scatter_match_torch(name, device):
    ours, theirs, inputs = GATHER[name]
    if name in TORCH_BACKWARD_FAILS:
        check_op(device, ours, theirs, inputs, grad=False)
        xs = tuple(tinynet.tensor(a, device=device, requires_grad=True) for a in inputs)
        tinynet.autograd.gradcheck(ours, xs)
        tinynet.autograd.gradgradcheck(ours, xs)
        return
    check_op(device, ours, theirs, inputs, second_order=True)


def test_scatter_with_repeated_indices_follows_torch(device):
    """The last write wins; like PyTorch every src element still gets gather(grad)."""
    x, src = R.standard_normal((2, 4)), R.standard_normal((2, 4))
    index = [[0, 1, 2, 0], [3, 3, 1, 1]]
    t, s = (tinynet.tensor(v, device=device, requires_grad=True) for v in (x, src))
    rt, rs = (torch.tensor(v, requires_grad=True) for v in (x, src))
    out, ref = t.scatter(1, _idx(index, device), s), rt.scatter(1, torch.tensor(index), rs)
    if out.device.type == "cpu":
        assert_close(out, ref)
    else:  # on the GPU which of the repeated writes lands is unspecified (as in PyTorch on CUDA)
        got, rows = out.detach().numpy(), numpy.asarray(index)
        for r in range(2):
            for col in range(4):
                writers = src[r][rows[r] == col]
                assert (got[r, col] in writers) if len(writers) else got[r, col] == x[r, col]
    g = R.standard_normal((2, 4))
    out.backward(tinynet.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert_close(t.grad, rt.grad) and assert_close(s.grad, rs.grad)


def test_nonzero_and_argwhere(device):
    a = numpy.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    for x in (a, a > 0, a.astype(numpy.int32), numpy.array(0.0), numpy.array(3), numpy.zeros((0, 2))):
        t, r = tinynet.tensor(x, device=device), torch.tensor(x)
        for out, ref in ((t.nonzero(), r.nonzero()), (tinynet.argwhere(t), torch.argwhere(r)),
                         (tinynet.nonzero(t), torch.nonzero(r))):
            assert out.dtype == tinynet.int64 and out.shape == tuple(ref.shape) and out.tolist() == ref.tolist()
        parts, refs = tinynet.nonzero(t, as_tuple=True), torch.nonzero(r, as_tuple=True)
        assert len(parts) == len(refs) and all(p.tolist() == q.tolist() for p, q in zip(parts, refs))
        assert [p.tolist() for p in tinynet.where(t != 0)] == [q.tolist() for q in torch.where(r != 0)]
    y = tinynet.tensor(a, device=device, requires_grad=True)
    assert not y.nonzero().requires_grad


@pytest.mark.usefixtures("cpu_default_device")
def test_index_errors(device):
    x = tinynet.tensor(M, device=device)
    cases = [(lambda: x[3], errors.IndexOutOfRangeError, "getitem"),
             (lambda: x[:, -5], errors.IndexOutOfRangeError, "getitem"),
             (lambda: x[0, 0, 0], errors.IndexOutOfRangeError, "getitem"),
             (lambda: x[_idx([0.0, 1.0], device)], errors.DTypeError, "getitem: tensors used as indices"),
             (lambda: x.index_select(0, _idx([0.0], device)), errors.DTypeError, "index_select: index"),
             (lambda: x.gather(1, _idx([[0.5]], device)), errors.DTypeError, "gather: index"),
             (lambda: x.index_select(0, _idx([[0]], device)), errors.ShapeError, "index_select"),
             (lambda: x.gather(1, _idx([0], device)), errors.ShapeError, "gather: index must have"),
             (lambda: x.gather(1, _idx([[0]] * 4, device)), errors.ShapeError, "gather: index size"),
             (lambda: x.scatter(1, _idx([[0]], device)), errors.ArgumentError, "scatter"),
             (lambda: x.scatter(1, _idx([[0]], device), x, value=1.0), errors.ArgumentError, "scatter"),
             (lambda: x.scatter_add(0, _idx([[0, 1]], device), x[:, :1]), errors.ShapeError, "scatter_add: src"),
             (lambda: x.masked_select(_idx([1, 0], device)), errors.DTypeError, "masked_select"),
             (lambda: tinynet.take_along_dim(x, _idx([[0]], device).unsqueeze(0), 0), errors.ShapeError,
              "take_along_dim"),
             (lambda: x.gather(2, _idx([[0]], device)), errors.IndexOutOfRangeError, "gather: dimension out")]
    for call, exc, pattern in cases:
        with pytest.raises(exc, match=pattern):
            call()


def test_index_values_out_of_range_raise_on_every_device(device):
    """Index values outside the dimension: IndexOutOfRangeError naming the index, the dimension and
    the size. On the CPU the op raises; on the GPU the indices are checked on the device and the
    error comes at the next GPU gather/check or ``tinynet.cuda.synchronize()`` (as PyTorch's
    device-side assert is reported later; CuPy's fancy indexing alone wraps the index around)."""
    x = tinynet.tensor(M, device=device)

    def idx(v):
        return tinynet.tensor(v, device=device)
    cases = [(lambda: x[idx([0, 3])], "index 3.*(axis|dimension) 0 with size 3"),
             (lambda: x.index_select(0, idx([3])), "index 3.*dimension 0 with size 3"),
             (lambda: x.index_select(1, idx([-1])), "index -1.*dimension 1 with size 4"),
             (lambda: x.gather(1, idx([[4]])), "index 4.*dimension 1 with size 4"),
             (lambda: x.gather(1, idx([[-1]])), "index -1.*dimension 1"),
             (lambda: x.gather(0, idx([[0, 1], [5, 0]]).int()), "index 5.*dimension 0 with size 3"),
             (lambda: x.scatter(0, idx([[3]]), 1.0), "index 3.*dimension 0"),
             (lambda: x.scatter_add(1, idx([[-1]]), x), "index -1.*dimension 1"),
             (lambda: x.index_add(0, idx([7]), x[:1]), "index 7"),
             (lambda: tinynet.take_along_dim(x, idx([12])), "index 12"),
             (lambda: tinynet.take_along_dim(x, idx([[-5]]), 1), "index -5.*dimension 1 with size 4")]
    for call, pattern in cases:
        with pytest.raises(errors.IndexOutOfRangeError, match=pattern):
            call()
            if device == "cuda":
                tinynet.cuda.synchronize()
        if device == "cuda":  # raised once, then clear: the next in-range gather and synchronize pass
            assert x.gather(1, idx([[0]] * 3)).numpy().ravel().tolist() == M[:, 0].tolist()
            tinynet.cuda.synchronize()
    # PyTorch refuses each of them too (on the CPU at once)
    t = torch.tensor(M)
    for call in (lambda: t.index_select(0, torch.tensor([3])), lambda: t.gather(1, torch.tensor([[4]])),
                 lambda: t.scatter(0, torch.tensor([[3]]), 1.0), lambda: torch.take_along_dim(t, torch.tensor([12]))):
        with pytest.raises((IndexError, RuntimeError)):
            call()


SHAPE_BAD = [
    ("reshape size", lambda: tinynet.ones(2, 3).reshape(4, 2), errors.ShapeError,
     r"reshape: shape \(4, 2\) is invalid"),
    ("reshape two -1", lambda: tinynet.ones(6).view(-1, -1), errors.ShapeError, "view"),
    ("reshape float", lambda: tinynet.ones(6).reshape(2.0, 3), errors.ArgumentTypeError, "reshape"),
    ("permute dup", lambda: tinynet.ones(2, 3).permute(0, 0), errors.ShapeError, "permute"),
    ("permute dim", lambda: tinynet.ones(2, 3).permute(0, 2), errors.IndexOutOfRangeError, "permute"),
    ("transpose dim", lambda: tinynet.ones(2, 3).transpose(0, 2), errors.IndexOutOfRangeError, "transpose"),
    ("t 3-D", lambda: tinynet.ones(2, 3, 4).t(), errors.ShapeError, "t: expects"),
    ("mT 1-D", lambda: tinynet.ones(2).mT, errors.ShapeError, "mT"),
    ("movedim dup", lambda: tinynet.ones(2, 3).movedim((0, 0), (0, 1)), errors.ArgumentError, "movedim: repeated"),
    ("movedim len", lambda: tinynet.ones(2, 3).movedim((0, 1), 0), errors.ArgumentError, "movedim"),
    ("unflatten", lambda: tinynet.ones(2, 6).unflatten(1, (4, -1)), errors.ShapeError, "unflatten"),
    ("unsqueeze dim", lambda: tinynet.ones(2, 3).unsqueeze(3), errors.IndexOutOfRangeError, "unsqueeze"),
    ("squeeze dim", lambda: tinynet.ones(2, 1).squeeze(2), errors.IndexOutOfRangeError, "squeeze"),
    ("expand fewer", lambda: tinynet.ones(2, 3).expand(3), errors.ShapeError, "expand"),
    ("cat 0-d", lambda: tinynet.cat([tinynet.tensor(1.0), tinynet.tensor(2.0)]), errors.ShapeError, "cat: zero-dim"),
    ("cat ranks", lambda: tinynet.cat([tinynet.ones(2, 2), tinynet.ones(2)]), errors.ShapeError, "cat"),
    ("cat tensor", lambda: tinynet.cat(tinynet.ones(2, 2)), errors.ArgumentError, "cat: expected a sequence"),
    ("cat empty", lambda: tinynet.cat([]), errors.ArgumentError, "cat"),
    ("cat list of lists", lambda: tinynet.cat([[1.0]]), errors.ArgumentTypeError, "cat"),
    ("stack shapes", lambda: tinynet.stack([tinynet.ones(2), tinynet.ones(3)]), errors.ShapeError, "stack"),
    ("stack dim", lambda: tinynet.stack([tinynet.ones(2)], 2), errors.IndexOutOfRangeError, "stack"),
    ("pad crop", lambda: F.pad(tinynet.ones(2), (-3, 1)), errors.ArgumentError, "pad"),
    ("pad reflect crop", lambda: F.pad(tinynet.ones(1, 3), (-1, 1), mode="reflect"), errors.ArgumentError, "pad"),
]


@pytest.mark.parametrize("name,call,exc,pattern", SHAPE_BAD, ids=[b[0] for b in SHAPE_BAD])
def test_bad_shape_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_take_matches_torch(device):
    x = rng(141).standard_normal((4, 5))
    idx = numpy.array([[0, 19], [-1, 7]])
    check_op(device, lambda x: tinynet.take(x, tinynet.tensor(idx, device=device)),
             lambda x: torch.take(x, torch.tensor(idx)), [x])
    if device == "cpu":
        with pytest.raises(errors.IndexOutOfRangeError):
            tinynet.take(tinynet.tensor(x, device="cpu"), tinynet.tensor([20], device="cpu"))
