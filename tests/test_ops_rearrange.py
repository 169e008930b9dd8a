"""Splitting and rearranging ops (tinynet/ops/split.py, tinynet/ops/rearrange.py) against
PyTorch: chunk, split, tensor_split, unbind, narrow, Tensor.unfold, repeat,
repeat_interleave, flip, roll, tril, triu, diag, diagonal.

Each case is one function of the library (``tinynet`` or ``torch``, same API) and the
inputs, so a body serves both: forward, dtype, gradients in float32/float64, gradcheck and
gradgradcheck (every op here declares twice_differentiable; cases whose output is empty
skip gradgradcheck, which cannot take an empty grad_output for a non-empty input: its
numerical Jacobian of such an input comes out (0, 0) instead of (n, 0))."""
import numpy
import pytest

import tinynet
from tinynet import errors
from tinynet.errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, IndexOutOfRangeError, ShapeError

from helpers import check_op, rng, torch

R = rng(3)
A23 = R.standard_normal((2, 3))
A36 = R.standard_normal((3, 6))
A234 = R.standard_normal((2, 3, 4))
A5 = R.standard_normal(5)
A0 = numpy.array(1.5)
E04 = numpy.zeros((0, 4))


def wcat(L, pieces, dim=0):
    """The pieces joined again, each scaled differently (so a mix-up shows)."""
    return L.cat([p * (k + 1) for k, p in enumerate(pieces)], dim)


def wstack(L, pieces, dim=0):
    return L.stack([p * (k + 1) for k, p in enumerate(pieces)], dim)


CASES = [
    # ---- split.py ----
    ("chunk 6 in 4 -> 3", lambda L, x: wcat(L, L.chunk(x, 4, 1), 1), [A36]),
    ("chunk method dim -1 transposed", lambda L, x: wcat(L, x.t().chunk(2, -1), -1), [A36]),
    ("chunk one piece used", lambda L, x: x.chunk(3)[1].exp(), [A36]),
    ("chunk empty dim", lambda L, x: wcat(L, L.chunk(x, 3), 0), [E04]),
    ("split int", lambda L, x: wcat(L, L.split(x, 4, 1), 1), [A36]),
    ("split sizes with 0", lambda L, x: wcat(L, x.split([1, 0, 5], dim=-1), -1), [A36]),
    ("split squared", lambda L, x: wcat(L, L.split(x ** 2, [2, 1], 0), 0), [A36]),
    ("split empty", lambda L, x: wcat(L, x.split(3, 1), 1), [E04]),
    ("tensor_split sections", lambda L, x: wcat(L, L.tensor_split(x, 4, 1), 1), [A36]),
    ("tensor_split overlapping", lambda L, x: wcat(L, L.tensor_split(x, [4, 1], 1), 1), [A36]),
    ("tensor_split negative", lambda L, x: wcat(L, x.tensor_split([-2, 10], dim=1), 1), [A36]),
    ("tensor_split tensor", lambda L, x, i: wcat(L, L.tensor_split(x, i, 0), 0), [A36, numpy.array([1, 2])]),
    ("unbind", lambda L, x: wstack(L, L.unbind(x, 1), 0), [A234]),
    ("unbind -1 transposed", lambda L, x: wstack(L, x.transpose(0, 2).unbind(-1), 1), [A234]),
    ("unbind some used", lambda L, x: x.unbind()[1].sin(), [A23]),
    ("narrow", lambda L, x: L.narrow(x, 1, 1, 3) ** 2, [A36]),
    ("narrow negative start, dim", lambda L, x: x.narrow(-1, -3, 2), [A234]),
    ("narrow tensor start", lambda L, x, s: L.narrow(x, 0, s, 2), [A5, numpy.array(2)]),
    ("narrow empty", lambda L, x: L.narrow(x, 0, 5, 0), [A5], False),
    ("narrow transposed", lambda L, x: x.t().narrow(0, 2, 3), [A36]),
    ("unfold overlapping", lambda L, x: x.unfold(0, 2, 1) ** 2, [A5]),
    ("unfold with gaps", lambda L, x: x.unfold(1, 2, 3), [A36]),
    ("unfold 3-D dim -1", lambda L, x: x.unfold(-1, 3, 1), [A234]),
    ("unfold whole dim", lambda L, x: x.unfold(0, 5, 2), [A5]),
    ("unfold size 0", lambda L, x: x.unfold(0, 0, 1), [A5], False),
    ("unfold 0-d", lambda L, x: x.unfold(0, 1, 1), [A0]),
    ("unfold transposed", lambda L, x: x.t().unfold(0, 4, 1), [A36]),
    ("unfold empty", lambda L, x: x.unfold(0, 0, 1), [E04]),
    # ---- rearrange.py ----
    ("repeat", lambda L, x: x.repeat(2, 1, 3), [A23]),
    ("repeat tuple transposed", lambda L, x: x.t().repeat((2, 2)) ** 2, [A23]),
    ("repeat zero", lambda L, x: x.repeat(0, 2), [A23], False),
    ("repeat 0-d", lambda L, x: x.repeat(3), [A0]),
    ("repeat empty", lambda L, x: x.repeat(2, 1), [E04]),
    ("repeat_interleave int dim 0", lambda L, x: L.repeat_interleave(x, 2, dim=0), [A23]),
    ("repeat_interleave flat", lambda L, x: L.repeat_interleave(x, 3) ** 2, [A23]),
    ("repeat_interleave -1 transposed", lambda L, x: x.t().repeat_interleave(2, -1), [A23]),
    ("repeat_interleave tensor", lambda L, x, r: L.repeat_interleave(x, r, 1), [A23, numpy.array([1, 0, 3])]),
    ("repeat_interleave 0-d tensor", lambda L, x, r: x.repeat_interleave(r, dim=0), [A23, numpy.array(2)]),
    ("repeat_interleave output_size", lambda L, x: L.repeat_interleave(x, 2, 0, output_size=4), [A23]),
    ("repeat_interleave 0-d input", lambda L, x: L.repeat_interleave(x, 3), [A0]),
    ("repeat_interleave zero", lambda L, x: L.repeat_interleave(x, 0, 1), [A23], False),
    ("flip", lambda L, x: L.flip(x, [0]), [A23]),
    ("flip two dims", lambda L, x: L.flip(x, (0, -1)) ** 2, [A234]),
    ("flip method varargs transposed", lambda L, x: x.t().flip(0, 1), [A23]),
    ("flip no dims", lambda L, x: L.flip(x, ()), [A23]),
    ("flip 0-d", lambda L, x: L.flip(x, (0,)), [A0]),
    ("flip empty", lambda L, x: L.flip(x, [1]), [E04]),
    ("roll flat", lambda L, x: L.roll(x, 1), [A23]),
    ("roll flat transposed", lambda L, x: L.roll(x.t(), 2), [A23]),
    ("roll dims", lambda L, x: L.roll(x, (1, -2), (0, -1)) ** 2, [A234]),
    ("roll repeated dim", lambda L, x: x.roll((1, 2), (1, 1)), [A234]),
    ("roll big shift", lambda L, x: L.roll(x, -7, 1), [A23]),
    ("roll 0-d", lambda L, x: L.roll(x, 1), [A0]),
    ("roll empty", lambda L, x: L.roll(x, 1, 0), [E04]),
    ("tril", lambda L, x: L.tril(x), [A36]),
    ("tril +1 batch", lambda L, x: x.tril(1) ** 2, [A234]),
    ("tril -5", lambda L, x: L.tril(x, -5), [A36]),
    ("triu", lambda L, x: L.triu(x), [A36]),
    ("triu -1 transposed", lambda L, x: x.t().triu(-1), [A36]),
    ("triu empty", lambda L, x: L.triu(x, 1), [numpy.zeros((2, 0, 3))]),
    ("diag of vector", lambda L, x: L.diag(x), [A5]),
    ("diag of vector +1", lambda L, x: x.diag(1) ** 2, [A5]),
    ("diag of vector -2", lambda L, x: L.diag(x, -2), [A5]),
    ("diag of matrix", lambda L, x: L.diag(x), [A36]),
    ("diag of matrix +2 transposed", lambda L, x: x.t().diag(2), [A36]),
    ("diag of matrix -1", lambda L, x: L.diag(x, -1) ** 2, [A36]),
    ("diag of matrix past the edge", lambda L, x: L.diag(x, 6), [A36], False),
    ("diag of empty vector", lambda L, x: L.diag(x, 1), [numpy.zeros(0)]),
    ("diagonal", lambda L, x: L.diagonal(x), [A234]),
    ("diagonal offset dims", lambda L, x: x.diagonal(1, 1, 2) ** 2, [A234]),
    ("diagonal negative", lambda L, x: L.diagonal(x, -1, -1, -2), [A234]),
    ("diagonal dims reversed", lambda L, x: L.diagonal(x, 0, 2, 0), [A234]),
    ("diagonal past the edge", lambda L, x: L.diagonal(x, 10), [A234], False),
    ("diagonal transposed", lambda L, x: x.t().diagonal(-1), [A36]),
]


@pytest.mark.parametrize("fn,inputs,second", [(c[1], c[2], c[3] if len(c) > 3 else True) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_matches_torch(fn, inputs, second, device):
    check_op(device, lambda *a: fn(tinynet, *a), lambda *a: fn(torch, *a), inputs, second_order=second)


# ---- forward rules (piece counts and sizes) -------------------------------------------------
def _pieces(ps):
    return [tuple(p.shape) for p in ps]


def test_piece_sizes_match_torch():
    if torch is None:
        pytest.skip("PyTorch not installed")
    for n in range(8):
        x, xt = tinynet.arange(float(n)), torch.arange(float(n))
        for k in range(1, 6):
            assert _pieces(tinynet.chunk(x, k)) == _pieces(torch.chunk(xt, k)), ("chunk", n, k)
            assert _pieces(tinynet.tensor_split(x, k)) == _pieces(torch.tensor_split(xt, k)), ("tensor_split", n, k)
            if n or k:
                assert _pieces(x.split(k)) == _pieces(xt.split(k)), ("split", n, k)
        for idx in ([1, 3], [3, 1], [-2, 10], [0], [], [5, 5, 2]):
            ours, theirs = tinynet.tensor_split(x, idx), torch.tensor_split(xt, idx)
            assert _pieces(ours) == _pieces(theirs), ("tensor_split", n, idx)
            for a, b in zip(ours, theirs):
                numpy.testing.assert_array_equal(a.numpy(), b.numpy())
    assert _pieces(tinynet.unbind(tinynet.zeros(0, 3))) == []
    assert _pieces(tinynet.unbind(tinynet.zeros(0, 3), 1)) == [(0,)] * 3


def test_integer_and_bool_dtypes_kept(device):
    if torch is None:
        pytest.skip("PyTorch not installed")
    a = numpy.arange(12).reshape(3, 4)
    for L_fn in (lambda L, x: L.tril(x, 1), lambda L, x: L.flip(x, [1]), lambda L, x: L.roll(x, 1, 0),
                 lambda L, x: x.repeat(2, 1), lambda L, x: L.repeat_interleave(x, 2), lambda L, x: L.diag(x),
                 lambda L, x: x.unfold(1, 2, 2), lambda L, x: L.narrow(x, 0, 1, 1), lambda L, x: L.diagonal(x, 1),
                 lambda L, x: L.chunk(x, 2)[1], lambda L, x: L.triu(x > 4)):
        ours, theirs = L_fn(tinynet, tinynet.tensor(a, device=device)), L_fn(torch, torch.tensor(a))
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), L_fn
        numpy.testing.assert_array_equal(ours.numpy(force=True), theirs.numpy())
        assert not ours.requires_grad


def test_repeat_interleave_counts_only(device):
    out = tinynet.repeat_interleave(tinynet.tensor([1, 0, 2], device=device))
    assert out.dtype == tinynet.int64 and out.device == device
    assert out.tolist() == [0, 2, 2]
    assert tinynet.repeat_interleave(tinynet.tensor([2, 1]), output_size=3).tolist() == [0, 0, 1]


def test_torch_level_names():
    for name in ("chunk", "split", "unbind", "tensor_split", "repeat_interleave", "flip", "roll", "tril", "triu",
                 "diag", "diagonal", "narrow"):
        assert callable(getattr(tinynet, name)), name
        assert hasattr(tinynet.Tensor, name), name
    for name in ("repeat", "unfold"):  # Tensor methods only, as in PyTorch
        assert not hasattr(tinynet, name) and hasattr(tinynet.Tensor, name), name
    x = tinynet.arange(4.)
    assert x.repeat(repeats=(2,)).tolist() == [0, 1, 2, 3] * 2
    assert x.unfold(dimension=0, size=2, step=2).tolist() == [[0, 1], [2, 3]]


# ---- views and version counters -------------------------------------------------------------
def test_views_share_memory(device):
    x = tinynet.tensor(numpy.arange(12.).reshape(3, 4), device=device)
    v = x.narrow(1, 1, 2)
    assert v._base is x
    v.add_(100)
    assert x[:, 1:3].tolist() == [[101, 102], [105, 106], [109, 110]]
    assert x._version == v._version == 1
    a, b = x.split([1, 2])
    assert a._base is x and b._base is x
    b.mul_(0)
    assert x[1:].tolist() == [[0] * 4] * 2 and x._version == a._version == 2
    d = x.diagonal()
    d.fill_(-1)
    assert x.tolist()[0] == [-1, 101, 102, 3] and x[2, 2].item() == -1
    w = x.unfold(1, 2, 2)  # windows that do not overlap can be written through
    w[..., 0] = 7
    assert x[:, 0::2].tolist() == [[7, 7]] * 3
    rows = x.unbind()
    rows[2].zero_()
    assert x[2].tolist() == [0] * 4
    assert x._version == rows[0]._version == d._version


def test_copies_do_not_share_memory(device):
    x = tinynet.arange(6., device=device).reshape(2, 3)
    for y in (x.flip(0), x.roll(1), x.tril(5), x.repeat(1, 1), x.repeat_interleave(1, 0), x.diag(),
              tinynet.flip(x, ())):
        y.add_(1)
        assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
        assert y._base is None


def test_overlapping_windows_are_read_only():
    w = tinynet.arange(5., device="cpu").unfold(0, 3, 1)  # NumPy only: CuPy arrays have no read-only flag
    with pytest.raises(ArgumentError, match="read-only"):
        w.zero_()


@pytest.mark.parametrize("make_view", [
    lambda y: y.narrow(0, 0, 1), lambda y: y.split(1)[0], lambda y: y.chunk(2)[1], lambda y: y.unbind()[0],
    lambda y: y.tensor_split(2)[0], lambda y: y.diagonal(), lambda y: y.unfold(1, 1, 1)])
def test_change_through_a_view_is_caught_by_backward(make_view, device):
    x = tinynet.tensor(R.standard_normal((2, 3)), device=device, requires_grad=True)
    y = x.exp()  # exp saves its output
    v = make_view(y)
    assert v._version == y._version == 0
    with tinynet.no_grad():
        v.mul_(2)
    assert y._version == 1
    with pytest.raises(AutogradError, match="exp"):
        y.sum().backward()


def test_in_place_on_a_view_of_a_graph_tensor_raises(device):
    x = tinynet.tensor(R.standard_normal((2, 3)), device=device, requires_grad=True)
    with pytest.raises(AutogradError, match="view"):
        x.exp().narrow(0, 0, 1).mul_(2)


def test_second_derivative_through_split(device):
    x = tinynet.tensor(R.standard_normal(6), device=device, requires_grad=True)
    a, b = x.chunk(2)
    (g,) = tinynet.autograd.grad((a ** 3).sum() + (b ** 2).sum(), [x], create_graph=True)
    (h,) = tinynet.autograd.grad(g.sum(), [x])
    expected = numpy.concatenate([6 * x.numpy(force=True)[:3], [2.0] * 3])
    numpy.testing.assert_allclose(h.numpy(force=True), expected)


# ---- bad inputs --------------------------------------------------------------------------------
X = tinynet.zeros(2, 3)
V = tinynet.zeros(5)
S = tinynet.tensor(1.)

BAD = [
    ("chunk 0", lambda: tinynet.chunk(X, 0), ArgumentError, "chunk: chunks must be greater than 0, got 0"),
    ("chunk negative", lambda: X.chunk(-1), ArgumentError, "chunk: chunks"),
    ("chunk float", lambda: X.chunk(2.0), ArgumentTypeError, "chunk: chunks must be an int"),
    ("chunk 0-d", lambda: tinynet.chunk(S, 1), ShapeError, "chunk: .*1-dimensional"),
    ("chunk dim", lambda: X.chunk(2, 2), IndexOutOfRangeError, r"chunk: dimension out of range.*\[-2, 1\].*got 2"),
    ("chunk list", lambda: tinynet.chunk([1, 2], 1), ArgumentTypeError, "chunk: input must be a Tensor"),
    ("split sum", lambda: X.split([1, 1], 1), ShapeError, r"split: split sizes must sum exactly to 3.*\[1, 1\]"),
    ("split negative size", lambda: X.split(-1), ArgumentError, "split: split_size must be non-negative, got -1"),
    ("split negative sizes", lambda: X.split([4, -1], 1), ArgumentError, "split: split sizes must be non-negative"),
    ("split 0", lambda: X.split(0), ArgumentError, "split: split_size can only be 0"),
    ("split float", lambda: X.split(1.5), ArgumentTypeError, "split: split_size_or_sections must be an int"),
    ("split float in list", lambda: X.split([1.0, 2], 1), ArgumentTypeError, "split: split_size_or_sections"),
    ("split dim", lambda: tinynet.split(X, 1, -3), IndexOutOfRangeError, "split: dimension out of range"),
    ("split 0-d", lambda: tinynet.split(S, 1), ShapeError, "split: .*1-dimensional"),
    ("tensor_split 0", lambda: X.tensor_split(0), ArgumentError, "tensor_split: the number of sections"),
    ("tensor_split float", lambda: X.tensor_split(2.0), ArgumentTypeError, "tensor_split: indices_or_sections"),
    ("tensor_split float tensor", lambda: X.tensor_split(tinynet.tensor([1.0])), DTypeError,
     "tensor_split: indices_or_sections must be an integer"),
    ("tensor_split 2-D tensor", lambda: X.tensor_split(tinynet.tensor([[1]])), ShapeError,
     "tensor_split: .*0-d or 1-d tensor, got 2 dims"),
    ("tensor_split 0-d", lambda: tinynet.tensor_split(S, 2), ShapeError, "tensor_split: .*1-dimensional"),
    ("tensor_split dim", lambda: X.tensor_split(2, 5), IndexOutOfRangeError, "tensor_split: dimension out of range"),
    ("unbind 0-d", lambda: tinynet.unbind(S), IndexOutOfRangeError, "unbind: .*no dimensions"),
    ("unbind dim", lambda: X.unbind(2), IndexOutOfRangeError, "unbind: dimension out of range"),
    ("narrow 0-d", lambda: tinynet.narrow(S, 0, 0, 1), ShapeError, "narrow: cannot be applied to a 0-dim"),
    ("narrow start", lambda: V.narrow(0, 6, 0), IndexOutOfRangeError,
     r"narrow: start out of range \(expected to be in range of \[-5, 5\], but got 6\)"),
    ("narrow start negative", lambda: V.narrow(0, -6, 1), IndexOutOfRangeError, "narrow: start out of range"),
    ("narrow too long", lambda: V.narrow(0, 2, 4), ArgumentError,
     r"narrow: start \(2\) \+ length \(4\) exceeds dimension size \(5\)"),
    ("narrow negative length", lambda: V.narrow(0, 0, -1), ArgumentError, "narrow: length must be non-negative"),
    ("narrow float start", lambda: V.narrow(0, 1.0, 1), ArgumentTypeError, "narrow: start must be an int"),
    ("narrow 1-d start", lambda: V.narrow(0, tinynet.tensor([1]), 1), ArgumentTypeError,
     "narrow: start must be an int or a 0-dim integer tensor"),
    ("narrow float tensor start", lambda: V.narrow(0, tinynet.tensor(1.), 1), ArgumentTypeError, "narrow: start"),
    ("narrow dim", lambda: V.narrow(1, 0, 1), IndexOutOfRangeError, "narrow: dimension out of range"),
    ("unfold too big", lambda: V.unfold(0, 6, 1), ShapeError,
     "unfold: maximum size for tensor at dimension 0 is 5 but size is 6"),
    ("unfold 0-d too big", lambda: S.unfold(0, 2, 1), ShapeError, "unfold: maximum size"),
    ("unfold negative size", lambda: V.unfold(0, -1, 1), ArgumentError, "unfold: size is -1 but must be >= 0"),
    ("unfold step 0", lambda: V.unfold(0, 2, 0), ArgumentError, "unfold: step is 0 but must be > 0"),
    ("unfold float size", lambda: V.unfold(0, 2.0, 1), ArgumentTypeError, "unfold: size must be an int"),
    ("unfold dim", lambda: V.unfold(1, 2, 1), IndexOutOfRangeError, "unfold: dimension out of range"),
    ("repeat too few", lambda: X.repeat(2), ShapeError, r"repeat: the number of repeats \(1\).*dimensions.*\(2\)"),
    ("repeat negative", lambda: X.repeat(-1, 2), ArgumentError, "repeat: repeats must be non-negative"),
    ("repeat none", lambda: X.repeat(), ArgumentTypeError, "repeat: missing the repeats"),
    ("repeat float", lambda: X.repeat(2.0, 1), ArgumentTypeError, "repeat: repeats must be ints"),
    ("repeat_interleave negative", lambda: tinynet.repeat_interleave(X, -1), ArgumentError,
     "repeat_interleave: repeats must be non-negative"),
    ("repeat_interleave negative tensor", lambda: X.repeat_interleave(tinynet.tensor([1, -2]), 0), ArgumentError,
     "repeat_interleave: repeats can not be negative"),
    ("repeat_interleave float tensor", lambda: X.repeat_interleave(tinynet.tensor([1., 2.]), 0), DTypeError,
     "repeat_interleave: repeats must be an integer"),
    ("repeat_interleave float", lambda: X.repeat_interleave(2.0, 0), ArgumentTypeError,
     "repeat_interleave: repeats must be an int"),
    ("repeat_interleave 2-D repeats", lambda: X.repeat_interleave(tinynet.tensor([[1, 2]]), 0), ShapeError,
     "repeat_interleave: repeats must be a 0-dim or 1-dim tensor"),
    ("repeat_interleave size", lambda: X.repeat_interleave(tinynet.tensor([1, 2]), 1), ShapeError,
     r"repeat_interleave: repeats must have the same size as input along dim.*= 2 and input.size\(1\) = 3"),
    ("repeat_interleave dim", lambda: X.repeat_interleave(2, 2), IndexOutOfRangeError,
     "repeat_interleave: dimension out of range"),
    ("repeat_interleave output_size", lambda: X.repeat_interleave(2, 0, output_size=5), ArgumentError,
     "repeat_interleave: invalid output_size, expected 4 but got 5"),
    ("repeat_interleave float counts", lambda: tinynet.repeat_interleave(tinynet.tensor([1., 2.])), DTypeError,
     "repeat_interleave: repeats must be an integer"),
    ("flip duplicate", lambda: tinynet.flip(X, (0, -2)), ArgumentError, "flip: dim 0 appears multiple times"),
    ("flip dim", lambda: tinynet.flip(X, [2]), IndexOutOfRangeError, "flip: dimension out of range"),
    ("flip float", lambda: tinynet.flip(X, [0.0]), ArgumentTypeError, "flip: dims must be an int"),
    ("flip none", lambda: tinynet.flip(X, None), ArgumentTypeError, "flip: dims must be an int or a sequence"),
    ("roll align", lambda: tinynet.roll(X, (1, 2), 0), ArgumentError,
     "roll: shifts and dimensions must align, got 2 shifts and 1 dims"),
    ("roll align no dims", lambda: tinynet.roll(X, (1, 2)), ArgumentError, "roll: shifts and dimensions must align"),
    ("roll no shifts", lambda: tinynet.roll(X, (), ()), ArgumentError, "roll: shifts required"),
    ("roll dim", lambda: tinynet.roll(X, 1, 2), IndexOutOfRangeError, "roll: dimension out of range"),
    ("roll 0-d dim", lambda: tinynet.roll(S, 1, 0), IndexOutOfRangeError, "roll: .*no dimensions"),
    ("roll float", lambda: tinynet.roll(X, 1.5, 1), ArgumentTypeError, "roll: shifts must be an int"),
    ("tril 1-D", lambda: tinynet.tril(V), ShapeError, "tril: input tensor must have at least 2 dimensions, got 1"),
    ("triu 0-d", lambda: S.triu(), ShapeError, "triu: input tensor must have at least 2 dimensions"),
    ("tril float diagonal", lambda: X.tril(1.0), ArgumentTypeError, "tril: diagonal must be an int"),
    ("diag 3-D", lambda: tinynet.diag(tinynet.zeros(2, 2, 2)), ShapeError,
     "diag: supports 1-D or 2-D tensors, got 3-D"),
    ("diag 0-d", lambda: S.diag(), ShapeError, "diag: .*got 0-D"),
    ("diag float", lambda: V.diag(1.0), ArgumentTypeError, "diag: diagonal must be an int"),
    ("diagonal same dims", lambda: X.diagonal(0, 1, -1), ArgumentError,
     "diagonal: diagonal dimensions cannot be identical"),
    ("diagonal dim", lambda: X.diagonal(0, 0, 2), IndexOutOfRangeError, "diagonal: dimension out of range"),
    ("diagonal 1-D", lambda: V.diagonal(), IndexOutOfRangeError, r"diagonal: dimension out of range.*got 1"),
    ("diagonal float", lambda: X.diagonal(1.0), ArgumentTypeError, "diagonal: offset must be an int"),
]


@pytest.mark.parametrize("call,exc,pattern", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert isinstance(info.value, errors.TinynetError)


# fliplr, flipud, rot90 and tile (ops/rearrange.py), on data of their own
R51 = rng(51)
M = R51.standard_normal((3, 4))
T3 = R51.standard_normal((2, 3, 4))


def test_fliplr_flipud_match_torch(device):
    check_op(device, lambda x: x.fliplr(), lambda x: x.fliplr(), [T3])
    check_op(device, tinynet.flipud, torch.flipud, [M[0]])
    m = tinynet.tensor(M, device=device)
    with pytest.raises(errors.ShapeError, match="fliplr: input tensor must be >= 2-d"):
        tinynet.fliplr(m[0])
    with pytest.raises(errors.ArgumentError, match="rot90: expected rotation dims to be different"):
        tinynet.rot90(m, 1, (1, 1))
    with pytest.raises(TypeError):
        torch.rot90(torch.tensor(M), 1, 0)
    with pytest.raises(errors.ArgumentTypeError, match="rot90: dims must be a tuple of two ints"):
        tinynet.rot90(m, 1, 0)


@pytest.mark.parametrize("k,dims", [(1, (0, 1)), (2, (0, 1)), (3, (0, 1)), (-1, (0, 1)), (5, (1, 0)),
                                    (1, (2, 0)), (0, (1, 2))])
def test_rot90_matches_torch(k, dims, device):
    check_op(device, lambda x: tinynet.rot90(x, k, dims), lambda x: torch.rot90(x, k, dims), [T3])


def test_tile_matches_torch(device):
    x = R51.standard_normal((3, 4))
    check_op(device, lambda x: tinynet.tile(x, (2,)), lambda x: torch.tile(x, (2,)), [x])
    check_op(device, lambda x: x.tile((2, 1, 3)), lambda x: x.tile((2, 1, 3)), [x])
