"""CPU-only fast paths of the sequence models' ops (issue 33, CPU): each against the generic
NumPy code it replaces and against PyTorch, including the cases that must fall back."""
import numpy
import pytest
from helpers import assert_close, rng

import tinynet
import tinynet.nn.functional as F
from tinynet.ops import indexing

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(65, 128), (7, 4, 5), (300, 16)])
def test_rows_add_equals_add_at(dtype, shape):
    g = rng(0)
    idx = g.integers(0, shape[0], (8, 40))
    values = g.standard_normal(idx.shape + shape[1:]).astype(dtype)
    want = numpy.zeros(shape, dtype)
    numpy.add.at(want, idx, values)
    got = numpy.zeros(shape, dtype)
    assert indexing._rows_add(got, (idx,), values)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert_close(got, want, tol, tol)
    again = numpy.zeros(shape, dtype)
    indexing._rows_add(again, idx, values)
    assert (again == got).all()  # the same bits run to run


def test_rows_add_leaves_deterministic_mode_to_add_at():
    g = rng(1)
    dst = numpy.zeros((10, 32))
    idx = g.integers(0, 10, 100)
    before = tinynet.are_deterministic_algorithms_enabled()
    tinynet.use_deterministic_algorithms(True)
    try:
        assert not indexing._rows_add(dst, (idx,), g.standard_normal((100, 32)))  # NumPy's order promised
    finally:
        tinynet.use_deterministic_algorithms(before)
    assert not dst.any()


@pytest.mark.parametrize("case", ["negative", "narrow rows", "few", "two arrays", "ints"])
def test_rows_add_refuses(case):
    g = rng(2)
    dst = numpy.zeros((10, 32))
    idx = g.integers(0, 10, 100)
    vals = g.standard_normal((100, 32))
    if case == "negative":
        idx[3] = -1
    elif case == "narrow rows":
        dst, vals = numpy.zeros((10, 4)), vals[:, :4]
    elif case == "few":
        idx, vals = idx[:10], vals[:10]
    elif case == "ints":
        dst, vals = dst.astype(numpy.int64), vals.astype(numpy.int64)
    index = (idx, idx % 4) if case == "two arrays" else (idx,)
    assert not indexing._rows_add(dst, index, vals)
    assert not dst.any()


@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_backward_against_pytorch(padding_idx):
    g = rng(3)
    idx = g.integers(0, 65, (16, 64))
    w = g.standard_normal((65, 128)).astype(numpy.float32)
    gy = g.standard_normal((16, 64, 128)).astype(numpy.float32)
    ours = tinynet.tensor(w, requires_grad=True)
    F.embedding(tinynet.tensor(idx), ours, padding_idx=padding_idx).backward(tinynet.tensor(gy))
    ref = torch.tensor(w, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), ref, padding_idx=padding_idx).backward(torch.tensor(gy))
    assert_close(ours.grad, ref.grad, 1e-5, 1e-5)


@pytest.fixture
def split_items(monkeypatch):
    """Two threads, and the CPU passes cut into several items (and blocks) on test-sized inputs."""
    from tinynet import parallel
    from tinynet.ops.cpu import gelu
    before = parallel.get_num_threads()
    parallel.set_num_threads(2)
    monkeypatch.setattr(parallel, "ITEM_MIN_BYTES", 64)
    monkeypatch.setattr(gelu, "BLOCK", 37)
    monkeypatch.setattr(gelu, "BLOCK_F32", 41)
    yield
    parallel.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 5), (16, 64, 40), (2000,)])
@pytest.mark.parametrize("split", [False, True])
def test_gelu_against_pytorch(dtype, shape, split, request):
    if split:
        request.getfixturevalue("split_items")
    x = (rng(4).standard_normal(shape) * 3).astype(dtype)
    gy = rng(5).standard_normal(shape).astype(dtype)
    ours = tinynet.tensor(x, requires_grad=True)
    y = F.gelu(ours)
    y.backward(tinynet.tensor(gy))
    ref = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.gelu(ref)
    want.backward(torch.tensor(gy))
    tol = 2e-6 if dtype == "float32" else 1e-12
    assert y.dtype == numpy.dtype(dtype)
    assert_close(y, want, tol, tol)
    assert_close(ours.grad, ref.grad, tol, tol)


def test_gelu_gradients_float64():
    x = tinynet.tensor(rng(6).standard_normal((4, 7)) * 2, requires_grad=True)
    tinynet.autograd.gradcheck(F.gelu, (x,))
    tinynet.autograd.gradgradcheck(F.gelu, (x,))


def test_gelu_without_gradient_saves_nothing():
    y = F.gelu(tinynet.randn(5, 6))
    assert y.grad_fn is None
    with tinynet.no_grad():
        assert F.gelu(tinynet.randn(5, 6, requires_grad=True)).grad_fn is None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,norm", [((16, 64, 128), (128,)), ((4, 6, 5), (6, 5)), ((7,), (7,)),
                                        ((3, 5000), (5000,))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_against_pytorch(dtype, shape, norm, affine):
    g = rng(7)
    x = (g.standard_normal(shape) * 2 + 1).astype(dtype)
    gy = g.standard_normal(shape).astype(dtype)
    w = (g.standard_normal(norm) + 1).astype(dtype) if affine else None
    b = g.standard_normal(norm).astype(dtype) if affine else None
    ours = [tinynet.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    ref = [torch.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    y = F.layer_norm(ours[0], norm, ours[1], ours[2], eps=1e-5)
    want = torch.nn.functional.layer_norm(ref[0], norm, ref[1], ref[2], eps=1e-5)
    y.backward(tinynet.tensor(gy))
    want.backward(torch.tensor(gy))
    tol = 3e-5 if dtype == "float32" else 1e-10
    assert y.dtype == numpy.dtype(dtype)
    assert_close(y, want, tol, tol, what="output")
    for a, r, what in zip(ours, ref, ("input", "weight", "bias")):
        if a is not None:
            assert_close(a.grad, r.grad, tol, tol, what=f"gradient of {what}")


def test_layer_norm_gradients_float64():
    g = rng(8)
    inputs = tuple(tinynet.tensor(a, requires_grad=True) for a in
                   (g.standard_normal((3, 4, 5)), g.standard_normal(5) + 1, g.standard_normal(5)))
    fn = lambda x, w, b: F.layer_norm(x, (5,), w, b)  # noqa: E731
    tinynet.autograd.gradcheck(fn, inputs)
    tinynet.autograd.gradgradcheck(fn, inputs)


def _sdpa_both(q, k, v, gy, mask=None, causal=False):
    ours = [tinynet.tensor(a, requires_grad=True) for a in (q, k, v)]
    ref = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    tm = None if mask is None else tinynet.tensor(mask)
    rm = None if mask is None else torch.tensor(mask)
    y = F.scaled_dot_product_attention(*ours, attn_mask=tm, is_causal=causal)
    want = torch.nn.functional.scaled_dot_product_attention(*ref, attn_mask=rm, is_causal=causal)
    y.backward(tinynet.tensor(gy))
    want.backward(torch.tensor(gy))
    return [y] + [t.grad for t in ours], [want] + [t.grad for t in ref]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["causal", "none", "bool", "float", "bool per batch"])
@pytest.mark.parametrize("split", [False, True])
def test_attention_against_pytorch(dtype, mask, split, request):
    if split:
        request.getfixturevalue("split_items")
    g = rng(9)
    B, H, L, S, E = 6, 3, 9, 11, 5
    q, k, v = (g.standard_normal(s).astype(dtype) for s in ((B, H, L, E), (B, H, S, E), (B, H, S, E)))
    gy = g.standard_normal((B, H, L, E)).astype(dtype)
    m, causal = None, mask == "causal"
    if mask == "bool":
        m = g.random((H, L, S)) > 0.3
        m[:, :, 0] = True
    elif mask == "float":
        m = g.standard_normal((1, 1, L, S)).astype(dtype)
    elif mask == "bool per batch":
        m = g.random((B, 1, L, S)) > 0.3
    got, want = _sdpa_both(q, k, v, gy, m, causal)
    tol = 2e-5 if dtype == "float32" else 1e-10
    for a, b, what in zip(got, want, ("output", "dq", "dk", "dv")):
        assert_close(a, b, tol, tol, what=what)


def test_attention_softmax_declines_rows_far_below_their_block():
    """A row whose scores all lie far below its (L, S) block's maximum, and a row with no key:
    the block shift would underflow them, so the row-maximum softmax runs (same results as PyTorch)."""
    g = rng(10)
    q, k, v = (g.standard_normal((2, 1, 4, 3)) for _ in range(3))
    q[0, 0, 0] *= 200  # row 0: huge scores; row 1 scaled down to ~-300 below them
    q[0, 0, 1] = -q[0, 0, 0]
    gy = g.standard_normal((2, 1, 4, 3))
    p = numpy.abs(q[0, 0] @ k[0, 0].T)
    assert p.max() > 100
    got, want = _sdpa_both(q, k, v, gy)
    for a, b in zip(got, want):
        assert_close(a, b, 1e-9, 1e-9)
    mask = numpy.ones((4, 4), bool)
    mask[2] = False  # a query row with no key: zeros, as PyTorch's math path gives
    ours = F.scaled_dot_product_attention(*(tinynet.tensor(a) for a in (q, k, v)), attn_mask=tinynet.tensor(mask))
    assert (ours.numpy()[:, :, 2] == 0).all() and numpy.isfinite(ours.numpy()).all()


def test_float32_erf_approximation_refits_and_meets_its_bound():
    """The float32 GELU's erf (ops/cpu/gelu.py): the stored coefficients are what the
    documented fit gives, and the error against the float64 erf stays within 3.3e-7 over
    the whole float32 line (dense near 0..4, the tails, signs, zeros and infinities)."""
    import scipy.special
    from tinynet.ops.cpu import gelu
    z = numpy.linspace(1e-4, 4.0, 40001)
    u, f = z * z / 16, scipy.special.erf(z) / z
    prev = numpy.ones_like(u)
    for _ in range(12):  # Loeb: f Q(u) = P(u), weighted for the relative error
        cols = [u ** i for i in range(8)] + [-f * u ** j for j in range(1, 5)]
        w = 1 / (f * prev)
        c = numpy.linalg.lstsq(numpy.stack(cols, 1) * w[:, None], f * w, rcond=None)[0]
        prev = numpy.polyval(numpy.concatenate([[1.0], c[8:]])[::-1], u)
    numpy.testing.assert_allclose(c[:8], gelu.ERF_P, rtol=1e-7)  # (LAPACK builds differ in the last digits)
    numpy.testing.assert_allclose(c[8:], gelu.ERF_Q[1:], rtol=1e-7)
    x = numpy.concatenate([numpy.linspace(-6, 6, 600001), [0.0, -0.0, 1e-30, -1e-30, 1e-3, 50.0, -50.0,
                                                               numpy.inf, -numpy.inf]]).astype(numpy.float32)
    out = numpy.empty_like(x)
    got = gelu.erf_float32(x, out, (numpy.empty_like(x), numpy.empty_like(x)))
    want = scipy.special.erf(x.astype(numpy.float64))
    assert got is out and got.dtype == numpy.float32
    assert numpy.abs(got - want).max() <= 3.3e-7
    assert 1 - got[-2] <= 6e-8 and got[-1] == -got[-2]  # +-inf: within one ulp of +-1, odd
    assert got[600001] == 0 and numpy.signbit(got[600002])  # erf(-0) = -0
    in_place = x.copy()
    gelu.erf_float32(in_place, in_place, (numpy.empty_like(x), numpy.empty_like(x)))
    assert numpy.array_equal(in_place, got)
