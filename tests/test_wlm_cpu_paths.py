"""The CPU paths behind the official word-language model's speed (issue 34): products of gradients
full of subnormal numbers (ops/cpu/subnormal.py), the saturated log-softmax, a linear layer's bias
per block and its gradient in halves, gradient clipping over threads, tensors from lists."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import as_numpy, assert_close, torch
from tinynet.ops.cpu import subnormal

TINY32 = numpy.finfo(numpy.float32).tiny


def saturated_nll_gradient(rows, classes, spread, seed=0):
    """The gradient of ``nll_loss(log_softmax(z))`` for logits spread over ``spread``: the
    softmax of the far-off classes is subnormal in float32 (see the module under test)."""
    r = numpy.random.default_rng(seed)
    z = r.standard_normal((rows, classes)) * spread
    z -= z.max(axis=1, keepdims=True)
    p = numpy.exp(z - numpy.log(numpy.exp(z).sum(axis=1, keepdims=True)))
    p[numpy.arange(rows), r.integers(0, classes, rows)] -= 1.0
    return (p / rows).astype(numpy.float32)


def _subnormal_share(a):
    return numpy.count_nonzero((numpy.abs(a) < TINY32) & (a != 0)) / a.size


def test_lift_scales_only_a_subnormal_gradient():
    r = numpy.random.default_rng(1)
    w = r.uniform(-0.1, 0.1, (512, 64)).astype(numpy.float32)
    g = saturated_nll_gradient(256, 512, 25)
    assert _subnormal_share(g) > 0.15
    k = subnormal.lift(g, 512, w)
    assert numpy.finfo(numpy.float32).nmant + 1 < k <= 125
    normal = r.standard_normal((256, 512)).astype(numpy.float32)
    assert subnormal.lift(normal, 512, w) == 0
    assert subnormal.lift(g.astype(numpy.float16), 512, w.astype(numpy.float16)) == 0  # float32/float64 only
    assert subnormal.lift(g[:, :0], 512, w) == 0
    bad = g.copy()
    bad[0, 0] = numpy.inf
    assert subnormal.lift(bad, 512, w) == 0  # not finite: left alone


def test_lift_leaves_no_room_for_overflow():
    """``k`` keeps ``inner * max|g| * max|other| * 2^k`` below the largest float; with a
    huge value in the gradient no useful ``k`` is left and nothing is scaled."""
    g = saturated_nll_gradient(128, 512, 30)
    w = numpy.full((512, 32), 0.5, numpy.float32)
    k = subnormal.lift(g, 512, w)
    top = float(numpy.abs(g).max()) * 512 * 0.5 * 2.0 ** k
    assert numpy.isfinite(numpy.float32(top)) and top < numpy.finfo(numpy.float32).max / 2
    huge = g.copy()
    huge[3, 3] = 1e30
    assert subnormal.lift(huge, 512, w) == 0


def test_lifted_products_equal_the_plain_ones_where_normal():
    """Scaled by 2^k, multiplied, scaled back: bit for bit the plain product wherever that
    one's result is far from the subnormal range; elsewhere no farther from the float64
    product than the plain one."""
    r = numpy.random.default_rng(2)
    g = saturated_nll_gradient(300, 1000, 25)
    assert _subnormal_share(g) > 0.15
    w = r.uniform(-0.1, 0.1, (1000, 48)).astype(numpy.float32)
    x = r.standard_normal((300, 48)).astype(numpy.float32)
    k = subnormal.lift(g, 1000, w, x)
    assert k > 0
    gs = subnormal.scaled(g, k)
    for plain, lifted, exact in ((g @ w, subnormal.unscale_(gs @ w, k), g.astype(float) @ w.astype(float)),
                                 (g.T @ x, subnormal.unscale_(gs.T @ x, k), g.T.astype(float) @ x.astype(float))):
        far = numpy.abs(exact) > 2.0 ** -100
        assert far.any()
        numpy.testing.assert_array_equal(lifted[far], plain[far])
        err_plain, err_lifted = numpy.abs(plain - exact), numpy.abs(lifted - exact)
        assert (err_lifted <= err_plain + 2.0 ** -149).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaling_by_powers_of_two_equals_the_plain_multiply(dtype):
    """scaled/unscale_ (float32 multiplied through float64) give the plain multiply's bits,
    subnormal, normal, overflowing, infinite and nan entries alike."""
    r = numpy.random.default_rng(10)
    info = numpy.finfo(dtype)
    a = (r.standard_normal(4000) * numpy.float64(info.tiny) * 10.0 ** r.uniform(-6, 0, 4000)).astype(dtype)
    a[:1000] = r.standard_normal(1000).astype(dtype) * 10.0 ** r.integers(-30, 30, 1000)
    a[1000:1004] = [numpy.inf, -numpy.inf, numpy.nan, 0.0]
    a[1004] = info.max / 4
    for k in (1, 24, 60, 125):
        numpy.testing.assert_array_equal(subnormal.scaled(a, k), a * a.dtype.type(2.0 ** k))
        numpy.testing.assert_array_equal(subnormal.unscale_(a.copy(), k), a * a.dtype.type(2.0 ** -k))


@pytest.mark.parametrize("lead,needs", [((256,), (True, True, True)), ((16, 16), (True, True, True)),
                                        ((256,), (False, True, True)), ((16, 16), (True, False, False))])
def test_linear_backward_of_a_subnormal_gradient_matches_torch(lead, needs, device, monkeypatch):
    """The decoder layer of a language model whose log-softmax saturated: tinynet's gradients
    (taken through the scaled products on the CPU) equal PyTorch's."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    r = numpy.random.default_rng(3)
    out_f, in_f = 2048, 64
    x = r.standard_normal(lead + (in_f,)).astype(numpy.float32)
    w = r.uniform(-0.1, 0.1, (out_f, in_f)).astype(numpy.float32)
    b = r.uniform(-0.1, 0.1, out_f).astype(numpy.float32)
    gy = saturated_nll_gradient(256, out_f, 25, seed=4).reshape(lead + (out_f,))
    assert _subnormal_share(gy) > 0.15
    chosen = []
    lift = subnormal.lift
    monkeypatch.setattr(subnormal, "lift", lambda *a: chosen.append(lift(*a)) or chosen[-1])
    ts = [tinynet.tensor(a, device=device, requires_grad=n) for a, n in zip((x, w, b), needs)]
    tt = [torch.tensor(a, requires_grad=n) for a, n in zip((x, w, b), needs)]
    F.linear(*ts).backward(tinynet.tensor(gy, device=device))
    torch.nn.functional.linear(*tt).backward(torch.tensor(gy))
    if device == "cpu":  # the scaled products were taken
        assert len(chosen) == 1 and chosen[0] > 0
    for name, ours, theirs, n in zip(("input", "weight", "bias"), ts, tt, needs):
        if not n:
            assert ours.grad is None
            continue
        assert_close(ours.grad, theirs.grad, rtol=1e-5, atol=1e-9, what=name)
        # the entries made of subnormal terms only: PyTorch's subnormal arithmetic against the
        # scaled product, within a subnormal step per term
        mine, ref = as_numpy(ours.grad), as_numpy(theirs.grad)
        tiny_part = numpy.abs(ref) < 1e-30
        assert_close(mine[tiny_part], ref[tiny_part], rtol=1e-2, atol=256 * 2.0 ** -149, what=f"{name}, tiny part")


@pytest.mark.parametrize("dtype,spread", [("float32", 20.0), ("float64", 160.0)])
def test_saturated_log_softmax_sums_the_subnormal_terms_as_zero(dtype, spread, device, monkeypatch):
    """Rows spread over more than exp's normal range: the CPU forward sums the subnormal
    exp terms as zeros (ops/cpu/softmax.py) and backward multiplies them through float64,
    with the same outputs and gradients as the plain float32 code, bit for bit, and PyTorch's
    values; -inf and nan entries behave as before."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet.ops.cpu import softmax as cpu_softmax
    r = numpy.random.default_rng(5)
    x = (r.standard_normal((300, 2000)) * spread).astype(dtype)
    x[3, 7] = -numpy.inf
    x[4, :] = -numpy.inf
    x[4, 9] = 1.0
    x[5, 11] = numpy.nan
    floor = cpu_softmax.FLOOR[numpy.dtype(dtype)]
    ys = x - x.max(axis=1, keepdims=True)
    assert numpy.count_nonzero(ys < floor) > 0.1 * x.size  # most blocks take the zeros
    assert numpy.exp(floor) >= numpy.finfo(dtype).tiny > numpy.exp(numpy.nextafter(floor, -numpy.inf))
    gy = r.standard_normal(x.shape).astype(dtype)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    y = F.log_softmax(t, -1)
    y.backward(tinynet.tensor(gy, device=device))
    if device == "cpu":
        monkeypatch.setattr(cpu_softmax, "BAND_SHARE", 2.0)  # never: every exp term summed, float32 products
        plain = cpu_softmax.log_softmax(x)
        numpy.testing.assert_array_equal(as_numpy(y), plain)
        numpy.testing.assert_array_equal(as_numpy(t.grad), cpu_softmax.log_softmax_backward(plain, gy))
    p = torch.tensor(x, requires_grad=True)
    ref = torch.log_softmax(p, -1)
    ref.backward(torch.tensor(gy))
    tol = (1e-5, 1e-4) if dtype == "float32" else (1e-12, 1e-9)
    assert_close(y, ref, *tol, what="forward")
    assert_close(t.grad, p.grad, tol[0], 1e-3 if dtype == "float32" else 1e-9, what="gradient")


def test_linear_bias_added_per_block_and_bias_gradient_in_halves_keep_the_bits(device):
    """A large linear layer: forward adds the bias inside each block of the split product
    (parallel.matmul's ``bias``), backward sums the bias gradient's two column halves beside
    the two products; both equal the plain sums bit for bit on the CPU, and PyTorch's values."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet import parallel
    r = numpy.random.default_rng(6)
    x = r.standard_normal((35, 20, 200)).astype(numpy.float32)
    w = r.uniform(-0.1, 0.1, (2001, 200)).astype(numpy.float32)
    b = r.standard_normal(2001).astype(numpy.float32)
    gy = r.standard_normal((35, 20, 2001)).astype(numpy.float32)
    ts = [tinynet.tensor(a, device=device, requires_grad=True) for a in (x, w, b)]
    y = F.linear(*ts)
    y.backward(tinynet.tensor(gy, device=device))
    if device == "cpu":
        ref = parallel.matmul(x.reshape(700, 200), w.T)
        ref += b
        numpy.testing.assert_array_equal(as_numpy(y).reshape(700, 2001), ref)
        numpy.testing.assert_array_equal(as_numpy(ts[2].grad), gy.reshape(700, 2001).sum(axis=0))
    tt = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = torch.nn.functional.linear(*tt)
    out.backward(torch.tensor(gy))
    assert_close(y, out, 1e-5, 1e-5)
    for ours, theirs in zip(ts, tt):
        assert_close(ours.grad, theirs.grad, 1e-5, 1e-4)


def test_clip_grad_norm_spreads_large_gradients_with_the_same_bits(device, monkeypatch):
    """clip_grad_norm_ squares and scales gradients of at least SPREAD_BYTES on tinynet's
    threads: the same total norm and clipped gradients, bit for bit, as one thread, and
    PyTorch's values."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet import parallel
    from tinynet.nn.utils import clip_grad
    r = numpy.random.default_rng(8)
    shapes = [(700, 600), (3,), (600, 500), (200,), (2, 2), (400, 700)]  # three of at least 1 MiB
    grads = [r.standard_normal(s).astype(numpy.float32) for s in shapes]
    results = []
    for threads in (1, parallel.get_num_threads()):
        monkeypatch.setattr(parallel, "_num_threads", threads)
        params = [tinynet.zeros(*s, device=device, requires_grad=True) for s in shapes]
        for p, g in zip(params, grads):
            p.grad = tinynet.tensor(g, device=device)
        total = tinynet.nn.utils.clip_grad_norm_(params, 0.5)
        results.append((as_numpy(total), [as_numpy(p.grad) for p in params]))
    assert sum(g.nbytes >= clip_grad.SPREAD_BYTES for g in grads) == 3
    numpy.testing.assert_array_equal(results[0][0], results[1][0])
    for a, b in zip(results[0][1], results[1][1]):
        numpy.testing.assert_array_equal(a, b)
    tp = [torch.zeros(s, requires_grad=True) for s in shapes]
    for p, g in zip(tp, grads):
        p.grad = torch.tensor(g)
    ref = torch.nn.utils.clip_grad_norm_(tp, 0.5)
    assert_close(results[1][0], ref, 1e-5, 1e-6)
    for ours, p in zip(results[1][1], tp):
        assert_close(ours, p.grad, 1e-5, 1e-7)


@pytest.mark.parametrize("data", [[1, 2, 3], [1, 2.5], [True, False], [True, 2], [1 + 2j, 1], (3, 4), [0.5],
                                  [2 ** 62, -1]])
def test_tensor_from_a_flat_list_of_python_numbers_matches_torch(data, device):
    """The flat-list fast path of ``tensor`` (one pass over the element types) gives PyTorch's
    dtype and values; NumPy scalars and nested lists still take the general walk."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet.ops import creation
    assert creation._plain_kinds(data) is not None
    ours, ref = tinynet.tensor(data, device=device), torch.tensor(data)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    assert as_numpy(ours).tolist() == ref.tolist()
    assert creation._plain_kinds([numpy.float64(1.5), 2.0]) is None
    assert creation._plain_kinds([[1, 2], [3, 4]]) is None
    assert creation._plain_kinds([]) is None
    assert tinynet.tensor([numpy.float64(1.5), 2.0]).dtype == tinynet.float64  # the walk: NumPy's dtype kept
    with pytest.raises(tinynet.errors.ArgumentError):  # as before: too large for int64
        tinynet.tensor([2 ** 70])


@pytest.mark.parametrize("method", ["add_", "sub_"])
@pytest.mark.parametrize("shape", [(7, 5), (700, 2001)])  # the second in pieces over the threads on the CPU
def test_add_with_alpha_in_pieces_matches_the_product_first(method, shape, device):
    """``p.data.add_(g, alpha=-lr)`` (an optimizer loop written by hand): the product and the
    update per piece equal ``g * alpha`` made first, bit for bit, and PyTorch's result; an
    overlapping operand, a bool alpha and mixed dtypes keep the general path."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    r = numpy.random.default_rng(9)
    p0, g0 = r.standard_normal(shape).astype(numpy.float32), r.standard_normal(shape).astype(numpy.float32)
    p, g = tinynet.tensor(p0, device=device), tinynet.tensor(g0, device=device)
    d = p.data
    before = d._version
    assert getattr(d, method)(g, alpha=-20) is d
    assert d._version > before
    expected = tinynet.tensor(p0, device=device)
    other = g * -20
    expected = expected + other if method == "add_" else expected - other
    numpy.testing.assert_array_equal(as_numpy(p), as_numpy(expected))
    tp = torch.tensor(p0)
    getattr(tp, method)(torch.tensor(g0), alpha=-20)
    assert_close(p, tp, 1e-6, 1e-5)
    q = tinynet.tensor(numpy.arange(12.0, dtype=numpy.float32), device=device)
    q[1:].add_(q[:-1], alpha=2.0)  # overlapping: the general path, as PyTorch's result
    tq = torch.arange(12.0)
    tq[1:].add_(tq[:-1].clone(), alpha=2.0)
    assert_close(q, tq)
    h = tinynet.tensor(p0.astype(numpy.float64), device=device)
    h.add_(g, alpha=0.5)  # float32 into float64: the general path
    assert_close(h, torch.tensor(p0.astype(numpy.float64)).add_(torch.tensor(g0), alpha=0.5), 1e-6, 1e-6)
