"""The GPU kernels of a transformer training step beside attention, on the GPU: half-precision
batched products through cuBLAS, the TF32 switch, the multi-tensor clip_grad_norm_, the
float32 <-> float16/bfloat16 casts, the float32 add of a float32 and a half tensor,
GELU's half kernels and the bias gradient's column sums,
each against the generic code or a float64 reference on the same inputs."""
import numpy
import pytest

import tinynet
from tinynet import backend

pytestmark = pytest.mark.gpu


def _rel(a, b):
    a, b = numpy.asarray(a, numpy.float64), numpy.asarray(b, numpy.float64)
    assert a.shape == b.shape
    return float(numpy.abs(a - b).max(initial=0) / max(numpy.abs(b).max(initial=0), 1e-30))


def test_half_bmm_is_one_cublas_call_and_matches_float32():
    r = numpy.random.default_rng(2)
    for dtype, tol in ((tinynet.bfloat16, 1e-2), (tinynet.float16, 2e-3)):
        a = tinynet.tensor(r.standard_normal((6, 64, 48)), dtype=dtype, device="cuda")
        b = tinynet.tensor(r.standard_normal((6, 48, 80)), dtype=dtype, device="cuda")
        got = tinynet.bmm(a, b).float().numpy(force=True)
        ref = (a.float().numpy(force=True) @ b.float().numpy(force=True))
        assert _rel(got, ref) < tol
        at = a.transpose(1, 2).contiguous().transpose(1, 2)  # a transposed view, read in place
        assert _rel(tinynet.matmul(at, b).float().numpy(force=True), ref) < tol


def test_tf32_switch_changes_float32_products():
    r = numpy.random.default_rng(3)
    a = tinynet.tensor(r.standard_normal((512, 512)), dtype=tinynet.float32, device="cuda")
    exact = (a.double() @ a.double()).numpy(force=True)
    full = _rel((a @ a).numpy(force=True), exact)
    try:
        tinynet.set_float32_matmul_precision("high")
        tf32 = _rel((a @ a).numpy(force=True), exact)
        assert tinynet.backends.cuda.matmul.allow_tf32
    finally:
        tinynet.set_float32_matmul_precision("highest")
    assert full < 1e-5 and 1e-5 < tf32 < 1e-2, (full, tf32)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_clip_grad_norm_multi_tensor_matches_generic(dtype, monkeypatch):
    r = numpy.random.default_rng(4)
    shapes = [(300, 40), (40,), (7,), (1000,)] + [(3, 3)] * 40  # more than one launch of 32
    grads = [r.standard_normal(s) for s in shapes]
    dt = getattr(tinynet, dtype)
    results = []
    for kernels in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ps = [tinynet.zeros(s, dtype=dt, device="cuda", requires_grad=True) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = tinynet.tensor(g, dtype=dt, device="cuda")
        before = [p.grad.double().numpy(force=True) for p in ps]
        total = tinynet.nn.utils.clip_grad_norm_(ps, 1.0)
        results.append((float(total.double().item()), [p.grad.double().numpy(force=True) for p in ps], before))
    monkeypatch.setattr(backend, "kernels_enabled", True)
    (n1, g1, b1), (n2, g2, _) = results
    tol = {"float32": 1e-5, "bfloat16": 1e-2, "float64": 1e-12}[dtype]
    expect = numpy.sqrt(sum(float((b ** 2).sum()) for b in b1))
    assert abs(n1 - n2) <= tol * n2 and abs(n1 - expect) <= tol * expect
    for a, b in zip(g1, g2):
        assert numpy.abs(a - b).max() <= tol * numpy.abs(b).max()


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_cast_kernels_round_to_nearest_even(target):
    """The casts give NumPy's (ml_dtypes') round-to-nearest-even bits, as PyTorch's casts do."""
    host = (numpy.random.default_rng(5).standard_normal(1001) * 100).astype(numpy.float32)
    host[:3] = [numpy.inf, -numpy.inf, numpy.nan]
    x = tinynet.tensor(host, device="cuda", requires_grad=True)
    dt = getattr(tinynet, target)
    y = x.to(dt)
    assert y.dtype == dt
    expect = tinynet.tensor(host, dtype=dt).numpy()  # the CPU cast
    got = y.numpy(force=True)
    nan = numpy.isnan(expect.astype(numpy.float32))
    assert (numpy.isnan(got.astype(numpy.float32)) == nan).all()
    assert (got.view(numpy.uint16)[~nan] == expect.view(numpy.uint16)[~nan]).all()
    y.backward(tinynet.ones_like(y))
    assert x.grad.dtype == tinynet.float32 and float(x.grad.sum().item()) == 1001
    back = y.float().numpy(force=True)
    same = ~numpy.isnan(back)
    assert (back[same] == got.astype(numpy.float32)[same]).all()


@pytest.mark.parametrize("pair", [("float32", "bfloat16"), ("bfloat16", "float32"), ("float32", "float16"),
                                  ("float16", "float32"), ("float32", "float64")])
def test_backend_astype_takes_the_cast_kernel_with_astypes_bits(pair):
    """backend.astype (the autograd engine's and the bfloat16 widening's cast) gives CuPy's
    astype bits, through tinynet's one-launch cast for float32 <-> half of a contiguous array
    and through astype otherwise (a non-contiguous view, float64)."""
    src, dst = (numpy.dtype(getattr(tinynet, n)) for n in pair)
    host = (numpy.random.default_rng(8).standard_normal((33, 65)) * 50).astype(numpy.float32)
    x = tinynet.tensor(host, dtype=getattr(tinynet, pair[0]), device="cuda").array
    for a in (x, x[:, ::2]):
        got, want = backend.astype(a, dst), a.astype(dst)
        assert got.dtype == dst and got.shape == want.shape
        assert backend.cupy.asnumpy(got).tobytes() == backend.cupy.asnumpy(want).tobytes()


@pytest.mark.parametrize("second", ["float32", "bfloat16", "float16"])
def test_float32_add_kernel_has_the_widened_sums_bits_and_gradients(second, monkeypatch):
    """A float32 tensor plus a float32/bfloat16/float16 tensor (autocast's residual add) in one
    kernel (kernels/add.cu): the bits of widening the second to float32 and adding, in either
    order, odd sizes and views (which take the generic path) included; the gradients reach each
    input in its own dtype, and the engine's float32 gradient sums use the same kernel."""
    from tinynet.kernels import add as add_kernel
    r = numpy.random.default_rng(9)
    launches = []
    real = add_kernel.add
    monkeypatch.setattr(add_kernel, "add", lambda a, b: launches.append(b.dtype) or real(a, b))
    for shape in ((64, 384), (7, 13), (5,)):
        a = tinynet.tensor(r.standard_normal(shape) * 30, dtype=tinynet.float32, device="cuda", requires_grad=True)
        b = tinynet.tensor(r.standard_normal(shape) * 30, dtype=getattr(tinynet, second), device="cuda",
                           requires_grad=True)
        want = backend.cupy.asnumpy(a.array + b.array.astype(numpy.float32))
        for y in (a + b, b + a, tinynet.add(a, b)):
            assert y.dtype == tinynet.float32
            assert backend.cupy.asnumpy(y.array).tobytes() == want.tobytes()
        (a + b).sum().backward()
        assert a.grad.dtype == tinynet.float32 and b.grad.dtype == b.dtype
        assert (a.grad.numpy(force=True) == 1).all() and (b.grad.float().numpy(force=True) == 1).all()
    assert len(launches) >= 9
    view = tinynet.tensor(r.standard_normal((8, 16)), dtype=tinynet.float32, device="cuda")[:, ::2]
    other = tinynet.tensor(r.standard_normal((8, 8)), dtype=getattr(tinynet, second), device="cuda")
    before = len(launches)
    got = (view + other).numpy(force=True)
    assert len(launches) == before  # a strided view: CuPy's add on the widened operand
    numpy.testing.assert_array_equal(got, view.numpy(force=True) + other.float().numpy(force=True))
    # the engine: x feeds two products, so its gradient is a sum of two float32 arrays
    x = tinynet.tensor(r.standard_normal((32, 32)), dtype=tinynet.float32, device="cuda", requires_grad=True)
    before = len(launches)
    ((x * 2).sum() + (x * 3).sum()).backward()
    assert len(launches) > before and (x.grad.numpy(force=True) == 5).all()


# (7, 131): no dtype's vector width divides it; () and (0, 5): a 0-d and an empty array keep their shapes
@pytest.mark.parametrize("shape", [(64, 300), (7, 131), (), (0, 5)])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_gelu_kernels_match_float64(dtype, approximate, shape):
    """gelu.cu's vector kernels (every float dtype) against PyTorch's float64 GELU."""
    import torch
    r = numpy.random.default_rng(6)
    dt = getattr(tinynet, dtype)
    x = tinynet.tensor(r.standard_normal(shape) * 3, dtype=dt, device="cuda", requires_grad=True)
    y = tinynet.nn.functional.gelu(x, approximate=approximate)
    gy = tinynet.tensor(r.standard_normal(shape), dtype=dt, device="cuda")
    y.backward(gy)
    xt = torch.tensor(x.double().numpy(force=True), requires_grad=True)
    yt = torch.nn.functional.gelu(xt, approximate=approximate)
    yt.backward(torch.tensor(gy.double().numpy(force=True)))
    tol = {"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-6, "float64": 1e-13}[dtype]
    assert y.dtype == dt and x.grad.dtype == dt
    assert _rel(y.double().numpy(force=True), yt.detach().numpy()) < tol
    assert _rel(x.grad.double().numpy(force=True), xt.grad.numpy()) < tol


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_linear_bias_gradient_column_sums(dtype):
    r = numpy.random.default_rng(7)
    dt = getattr(tinynet, dtype)
    x = tinynet.tensor(r.standard_normal((4096, 96)), dtype=dt, device="cuda")
    w = tinynet.tensor(r.standard_normal((200, 96)) * 0.1, dtype=dt, device="cuda", requires_grad=True)
    b = tinynet.zeros(200, dtype=dt, device="cuda", requires_grad=True)
    gy = tinynet.tensor(r.standard_normal((4096, 200)), dtype=dt, device="cuda")
    tinynet.nn.functional.linear(x, w, b).backward(gy)
    expect = gy.double().numpy(force=True).sum(axis=0)
    assert _rel(b.grad.double().numpy(force=True), expect) < (1e-5 if dtype == "float32" else 1e-2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(16384, 384), (3000, 1540), (700, 12)])
def test_column_sum_vector_kernel_gives_the_scalar_kernels_bits(dtype, shape):
    """Four columns a thread (one vector read) sum each column in the scalar kernel's order:
    the same bits, for C a multiple of 4; other widths keep the scalar kernel."""
    from tinynet.kernels import cuda, gpu_ops
    cp = backend.cupy
    values = numpy.random.default_rng(9).standard_normal(shape)
    rows = tinynet.tensor(values, dtype=getattr(tinynet, dtype), device="cuda").array
    m, c = shape
    parts = max(1, min(512, (m + 255) // 256))
    partial = cp.empty((parts, c), dtype=cp.float64 if dtype == "float64" else cp.float32)
    expect = cp.empty(c, dtype=rows.dtype)
    cuda.kernel("channel_sum.cu", "tinynet_channel_sum_rows", rows.dtype)(
        ((c + 31) // 32, parts), (32, 8), (rows, partial, cuda.i64(m), cuda.i32(c)))
    cuda.launch(cuda.kernel("channel_sum.cu", "tinynet_channel_sum_parts", rows.dtype), c,
                (partial, expect, cuda.i32(parts), cuda.i32(c)))
    got = gpu_ops.column_sum(rows)
    assert got.dtype == rows.dtype and got.shape == (c,)
    assert bytes(got.view(cp.uint8).get()) == bytes(expect.view(cp.uint8).get())
    odd = tinynet.tensor(values[:, 1:], dtype=getattr(tinynet, dtype), device="cuda")  # C not a multiple of 4
    exact = odd.double().numpy(force=True).sum(axis=0)
    got = tinynet.Tensor._wrap(gpu_ops.column_sum(odd.array)).double().numpy(force=True)
    assert _rel(got, exact) < {"float64": 1e-12, "float32": 1e-5}.get(dtype, 1e-2)


def test_cublas_bias_is_added_inside_the_product():
    """A large linear layer's bias rides in cuBLAS's beta = 1 term: float32 gives the bits of a
    separate addition; bfloat16 is rounded once (within half an ulp of the float64 result plus
    the product's own error)."""
    from tinynet.kernels import gemm
    r = numpy.random.default_rng(8)
    m, k, n = 1024, 256, 384
    assert m * n * k > gemm.SMALL_GEMM
    x, w, b = r.standard_normal((m, k)), r.standard_normal((n, k)) * 0.05, r.standard_normal(n) * 3
    t = [tinynet.tensor(a, dtype=tinynet.float32, device="cuda") for a in (x, w, b)]
    fused = tinynet.nn.functional.linear(*t).numpy(force=True)
    apart = (tinynet.nn.functional.linear(t[0], t[1]) + t[2]).numpy(force=True)
    assert (fused.view(numpy.uint32) == apart.view(numpy.uint32)).all()
    h = [tinynet.tensor(a, dtype=tinynet.bfloat16, device="cuda") for a in (x, w, b)]
    got = tinynet.nn.functional.linear(*h).double().numpy(force=True)
    hx, hw, hb = (a.double().numpy(force=True) for a in h)
    assert _rel(got, hx @ hw.T + hb) < 8e-3


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("trans", [(False, True), (False, False), (True, False)])
def test_cublaslt_bias_epilogue_matches_the_filled_product(dtype, trans, monkeypatch):
    """The half types' bias rides in cuBLASLt's epilogue (one call, no fill): within one
    rounding of the fill + beta = 1 product, for each transpose layout, eager and under capture."""
    from tinynet.kernels import cublaslt, gemm
    r = numpy.random.default_rng(9)
    m, k, n = 1024, 256, 384
    dt = getattr(tinynet, dtype)
    a = r.standard_normal((k, m) if trans[0] else (m, k))
    b = r.standard_normal((n, k) if trans[1] else (k, n)) * 0.05
    bias = r.standard_normal(n) * 3
    ta, tb, tbias = (tinynet.tensor(v, dtype=dt, device="cuda").array for v in (a, b, bias))
    before = cublaslt.stats["calls"]
    assert m * n * k > gemm.SMALL_GEMM  # the cuBLAS side of gemm.matmul
    fused = gemm.matmul(ta, tb, *trans, bias=tbias)
    assert cublaslt.stats["calls"] == before + 1
    monkeypatch.setitem(cublaslt._state, "off", True)
    filled = gemm.matmul(ta, tb, *trans, bias=tbias)
    f64 = lambda v: tinynet.Tensor._wrap(v).double().numpy(force=True)  # noqa: E731
    assert _rel(f64(fused), f64(filled)) < (8e-3 if dtype == "bfloat16" else 1e-3)
    monkeypatch.setitem(cublaslt._state, "off", False)
    import cupy
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:  # captured in a CUDA graph: the same bits as eager
        stream.begin_capture()
        out = gemm.matmul(ta, tb, *trans, bias=tbias)
        graph = stream.end_capture()
        graph.launch()
    stream.synchronize()
    assert (out.view(numpy.uint16) == fused.view(numpy.uint16)).all()


def test_compiled_gpt_step_gives_eager_losses_bit_for_bit():
    """A whole GPT training step (forward, backward, clip_grad_norm_, AdamW; the scheduler's lr
    outside) captured by tinynet.compile gives the eager step's losses and weights bit for bit
    in float32 (same kernels, same order)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "char_transformer.py")
    spec = importlib.util.spec_from_file_location("char_transformer_example", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    r = numpy.random.default_rng(9)
    data = r.integers(0, 40, (8, 4, 33))
    runs = []
    for compiled in (False, True):
        tinynet.manual_seed(0)
        model = ex.CharGPT(40, 32, n_layer=2, n_head=4, n_embd=64, dropout=0.0).to("cuda")
        opt = ex.configure_optimizer(model, 1e-3, 0.1)
        sched = tinynet.optim.lr_scheduler.LambdaLR(opt, ex.warmup_cosine(3, 8))

        def step(x, y):
            _, loss = model(x, y)
            opt.zero_grad()
            loss.backward()
            tinynet.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss.detach()

        run = tinynet.compile(step, fullgraph=True) if compiled else step
        losses = []
        for batch in data:
            b = tinynet.tensor(batch, device="cuda")
            losses.append(run(b[:, :-1].contiguous(), b[:, 1:].contiguous()).clone())
            sched.step()
        runs.append(([float(v.item()) for v in losses], [p.numpy(force=True) for p in model.parameters()]))
    (l1, p1), (l2, p2) = runs
    assert l1 == l2
    for a, b in zip(p1, p2):
        assert (a.view(numpy.uint32) == b.view(numpy.uint32)).all()


@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_backward_is_deterministic_and_matches_add_at(padding_idx, monkeypatch):
    r = numpy.random.default_rng(10)
    idx = r.integers(0, 65, (64, 256))
    gy = r.standard_normal((64, 256, 48))
    grads = []
    for kernels in (True, True, False):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        w = tinynet.zeros(65, 48, device="cuda", requires_grad=True)
        y = tinynet.nn.functional.embedding(tinynet.tensor(idx, device="cuda"), w, padding_idx=padding_idx)
        y.backward(tinynet.tensor(gy, dtype=tinynet.float32, device="cuda"))
        grads.append(w.grad.numpy(force=True))
    monkeypatch.setattr(backend, "kernels_enabled", True)
    assert (grads[0].view(numpy.uint32) == grads[1].view(numpy.uint32)).all()  # the same bits run to run
    assert _rel(grads[0], grads[2]) < 1e-5
