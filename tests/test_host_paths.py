"""The cheaper host paths of a training step (issues 33, 35): the module walks behind
``parameters()``, autocast's argument casts, the shape checks read from the arrays, the CPU
path of ``clip_grad_norm_`` and the backward of views. Each gives what PyTorch gives (or, for
the clipping, the same bits as the formula it replaces)."""
import numpy
import pytest

import tinynet
from tinynet.errors import DTypeError, ShapeError

torch = pytest.importorskip("torch")
LIBS = [pytest.param(torch, id="torch"), pytest.param(tinynet, id="tinynet")]


def _tree(lib):
    """Nested containers, a module shared by two parents, a tied weight and a None child."""
    nn = lib.nn
    shared = nn.Linear(3, 3)
    head = nn.Linear(3, 5, bias=False)
    model = nn.Module()
    model.body = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), shared)
    model.blocks = nn.ModuleList([nn.Sequential(shared, nn.LayerNorm(3)), nn.Linear(3, 3)])
    model.empty = None
    model.head = head
    model.tied = nn.Linear(5, 3, bias=False)
    model.tied.weight = nn.Parameter(head.weight.detach().T.clone())
    model.tied2 = nn.Linear(3, 5, bias=False)
    model.tied2.weight = head.weight  # the same parameter twice
    return model


def test_named_modules_and_parameters_match_torch():
    got = {}
    for lib in (torch, tinynet):
        m = _tree(lib)
        names = {p: n for n, p in m.named_parameters()}
        got[lib.__name__] = dict(
            modules=[n for n, _ in m.named_modules()],
            all_modules=[n for n, _ in m.named_modules(remove_duplicate=False)],
            prefixed=[n for n, _ in m.named_modules(prefix="root")],
            params=[n for n, _ in m.named_parameters()],
            via_parameters=[names[p] for p in m.parameters()],  # same objects, same order
            children=[n for n, _ in m.named_children()])
        assert len(list(m.parameters())) == len(names)
        assert [id(p) for p in m.parameters()] == [id(p) for _, p in m.named_parameters()]
    assert got["torch"] == got["tinynet"]


@pytest.mark.parametrize("lib", LIBS)
def test_overridden_walks_are_followed(lib):
    nn = lib.nn

    class Extra(nn.Module):  # a child with its own walk: the parent's walk uses it
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(2, 2)

        def named_modules(self, memo=None, prefix="", remove_duplicate=True):
            yield prefix + ".custom", self

    class Renamed(nn.Module):  # its own naming: parameters() follows it
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

        def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
            yield "only", self.b.weight

    root = nn.Sequential(nn.Linear(2, 2), Extra())
    names = [n for n, _ in root.named_modules()]
    assert names == ["", "0", "1.custom"]
    r = Renamed()
    assert [id(p) for p in r.parameters()] == [id(r.b.weight)]


def test_named_modules_of_a_cycle_ends():
    nn = tinynet.nn
    a = nn.Sequential(nn.Linear(2, 2))
    a.add_module("again", a)  # a module inside itself: visited once
    assert [n for n, _ in a.named_modules()] == ["", "0"]


@pytest.mark.parametrize("lib", LIBS)
def test_autocast_casts_keyword_and_list_arguments(lib, cpu_default_device):
    F = lib.nn.functional
    lib.manual_seed(0)
    x, w, b = lib.randn(4, 3), lib.randn(5, 3, requires_grad=True), lib.randn(5, requires_grad=True)
    a, c = lib.randn(3, 4), lib.randn(4, 2)
    with lib.autocast("cpu", dtype=lib.bfloat16):
        by_keyword = F.linear(input=x, weight=w, bias=b)  # only keyword tensors: the device comes from them
        listed = lib.einsum("ij,jk->ik", [a, c])  # tensors inside a list argument
        normed = F.layer_norm(x, [3])  # a list without tensors goes through as it is
    assert by_keyword.dtype == lib.bfloat16 and listed.dtype == lib.bfloat16 and normed.dtype == lib.float32
    by_keyword.float().sum().backward()
    assert w.grad.dtype == lib.float32 and b.grad.dtype == lib.float32


def test_autocast_weight_cast_made_once_per_region(cpu_default_device):
    lin = tinynet.nn.Linear(3, 3)
    x = tinynet.randn(2, 3)
    with tinynet.autocast("cpu", dtype=tinynet.bfloat16):
        y1, y2 = lin(x), lin(x)
    # the weight's and bias's bfloat16 copies are one op each, shared by both products
    w1, w2 = y1.grad_fn.inputs[1], y2.grad_fn.inputs[1]
    assert w1 is w2 and y1.grad_fn.inputs[2] is y2.grad_fn.inputs[2]
    assert y1.grad_fn.inputs[0] is not y2.grad_fn.inputs[0]  # activations are cast per use


@pytest.mark.parametrize("lib", LIBS)
def test_view_shapes_and_errors(lib):
    x = lib.arange(24.0).reshape(2, 3, 4)
    assert tuple(x.view(6, -1).shape) == (6, 4) and tuple(x.view(-1).shape) == (24,)
    assert tuple(x.view(2, 12).shape) == (2, 12) and tuple(lib.zeros(0, 3).view(-1, 3).shape) == (0, 3)
    for bad in ((5, -1), (-1, -1), (2, -2), (7, 4)):
        with pytest.raises(Exception) as info:
            x.view(*bad)
        if lib is tinynet:
            assert isinstance(info.value, ShapeError) and "view: " in str(info.value)


def test_view_messages():
    x = tinynet.zeros(2, 3)
    with pytest.raises(ShapeError, match=r"view: shape \(4, -1\) is invalid for input of size 6"):
        x.view(4, -1)
    with pytest.raises(ShapeError, match=r"view: invalid shape \(-1, -1\)"):
        x.view(-1, -1)
    with pytest.raises(ShapeError, match=r"view: shape \(5,\) is invalid for input of size 6"):
        x.view(5)


@pytest.mark.parametrize("dims", [(0, 1, 2, 3), (3, 2, 1, 0), (1, 3, 0, 2), (2, 0, 3, 1)])
def test_permute_backward_matches_torch(dims):
    a = numpy.random.default_rng(0).standard_normal((2, 3, 4, 5))
    g = numpy.random.default_rng(1).standard_normal(tuple(a.shape[d] for d in dims))
    grads = []
    for lib in (torch, tinynet):
        x = lib.tensor(a, requires_grad=True)
        x.permute(*dims).backward(lib.tensor(g))
        grads.append(x.grad.detach().numpy())
    numpy.testing.assert_array_equal(grads[0], grads[1])


def test_clip_grad_norm_cpu_bits_and_versions():
    rng = numpy.random.default_rng(0)
    params = [tinynet.nn.Parameter(tinynet.zeros(*s)) for s in ((3, 4), (4,), (2, 2, 2))]
    grads = [rng.standard_normal(p.shape).astype(numpy.float32) for p in params]
    for p, g in zip(params, grads):
        p.grad = tinynet.tensor(g.copy())
    versions = [p.grad._version for p in params]
    total = tinynet.nn.utils.clip_grad_norm_(params, 0.5)
    # the formula, spelled out: per-gradient 2-norms, their 2-norm, one factor for all
    norms = numpy.stack([numpy.asarray(numpy.sqrt(numpy.sum(g.ravel() * g.ravel())), dtype=numpy.float32)
                         for g in grads])
    expect = numpy.asarray(numpy.sqrt(numpy.sum(norms * norms)), dtype=numpy.float32)
    coef = numpy.minimum(0.5 / (expect + 1e-6), 1.0)
    assert total.numpy().tobytes() == expect.tobytes()
    for p, g, v in zip(params, grads, versions):
        assert p.grad.numpy().tobytes() == (g * coef).tobytes()
        assert p.grad._version == v + 1


@pytest.mark.parametrize("lib", LIBS)
def test_mixed_float_add_promotes_as_torch(lib):
    a = lib.ones(2, 3)
    for other in (lib.ones(2, 3, dtype=lib.bfloat16), lib.ones(3, dtype=lib.float16), lib.ones(2, 3, dtype=lib.float64),
                  lib.tensor(2.0, dtype=lib.float64), lib.ones(2, 3, dtype=lib.int64)):
        got = (a + other, other + a)
        assert [str(t.dtype).split(".")[-1] for t in got] == [str(got[0].dtype).split(".")[-1]] * 2
    assert (lib.ones(2, 3) + lib.ones(2, 3, dtype=lib.bfloat16)).dtype == lib.float32
    assert (lib.ones(2, 3) + lib.tensor(2.0, dtype=lib.float64)).dtype == lib.float32


@pytest.mark.parametrize("lib", LIBS)
def test_split_pieces_of_bfloat16_take_gradients(lib):
    x = lib.randn(2, 6).to(lib.bfloat16).requires_grad_()
    pieces = x.split(2, dim=1)
    assert all(p.requires_grad and p.dtype == lib.bfloat16 for p in pieces)
    assert not x.argmax().requires_grad


def test_embedding_index_dtypes():
    w = tinynet.randn(5, 2)
    for dt in (tinynet.int64, tinynet.int32):
        assert tuple(tinynet.nn.functional.embedding(tinynet.tensor([1, 4], dtype=dt), w).shape) == (2, 2)
    with pytest.raises(DTypeError, match="embedding: expected indices of dtype int64 or int32, got"):
        tinynet.nn.functional.embedding(tinynet.tensor([1, 4], dtype=tinynet.int16), w)
    with pytest.raises(DTypeError, match="one_hot: expected indices of dtype int64, got"):
        tinynet.nn.functional.one_hot(tinynet.tensor([1, 4], dtype=tinynet.int32))


@pytest.mark.parametrize("lib", LIBS)
def test_arange_dtypes(lib):
    got = [lib.arange(0, 4).dtype, lib.arange(0, 4, 0.5).dtype, lib.arange(numpy.int64(3)).dtype,
           lib.arange(0.0, 3).dtype, lib.arange(lib.tensor(3)).dtype]
    assert [str(d).split(".")[-1] for d in got] == ["int64", "float32", "int64", "float32", "int64"]
