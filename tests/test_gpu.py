"""GPU backend: tinynet's CUDA kernels against the generic xp code on the same GPU
(TINYNET_KERNELS switched per test), and the GPU against the CPU, at float32 tolerances."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet import backend

pytestmark = pytest.mark.gpu

R = numpy.random.default_rng(0)


@pytest.fixture
def kernels(monkeypatch):
    """Run a callable with tinynet's kernels on, then off; return both results."""
    def both(fn):
        out = []
        for enabled in (True, False):
            monkeypatch.setattr(backend, "kernels_enabled", enabled)
            out.append(fn())
        return out
    return both


@pytest.fixture
def launched(monkeypatch):
    """``(kernel name, dtype name)`` of every tinynet kernel looked up while the test runs
    (``cuda.kernel``, which every launcher calls per launch): which typed kernel ran."""
    from tinynet.kernels import cuda
    seen, real = [], cuda.kernel
    monkeypatch.setattr(cuda, "kernel", lambda filename, op, dtype: (seen.append((op, numpy.dtype(dtype).name)),
                                                                     real(filename, op, dtype))[1])
    return seen


def _run(fn, arrays, device="cuda", grad=True):
    """Forward ``fn`` on float32 tensors, backward with a fixed cotangent; host arrays back."""
    ts = [tinynet.tensor(a, dtype="float32", device=device, requires_grad=grad) for a in arrays]
    y = fn(*ts)
    if grad:
        r = numpy.random.default_rng(5).standard_normal(y.shape).astype(numpy.float32)
        (y * tinynet.tensor(r, device=device)).sum().backward()
    return [y.detach().numpy()] + ([t.grad.numpy() for t in ts] if grad else [])


def _close(a, b, rtol=2e-4, atol=2e-5):
    for x, y in zip(a, b):
        numpy.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


IMG = R.standard_normal((4, 3, 9, 8))
ROWS = R.standard_normal((16, 10))
T16 = numpy.arange(16) % 10
OPS = {
    "relu": (lambda x: F.relu(x), [ROWS]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), [ROWS]),
    "gelu": (lambda x: F.gelu(x), [ROWS]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [ROWS]),
    "bias_relu_2d": (lambda x, b: F.bias_relu(x, b), [ROWS, R.standard_normal(10)]),
    "bias_relu_4d": (lambda x, b: F.bias_relu(x, b), [IMG, R.standard_normal(3)]),
    "max_pool": (lambda x: F.max_pool2d(x, 2), [IMG]),
    "max_pool_overlap": (lambda x: F.max_pool2d(x, 3, 1, 1, 2, True), [IMG]),
    "max_pool_gaps": (lambda x: F.max_pool2d(x, (2, 1), (3, 2), (1, 0)), [IMG]),  # inputs no window reads
    "max_pool_disjoint_pad_ceil": (lambda x: F.max_pool2d(x, (3, 2), None, (1, 1), 1, True), [IMG]),
    "max_pool_ties": (lambda x: F.max_pool2d(x, 3, 1, 1), [numpy.round(IMG)]),  # overlapping windows share maxima
    "linear": (lambda x, w, b: F.linear(x, w, b), [ROWS, R.standard_normal((7, 10)), R.standard_normal(7)]),
    "linear_3d_no_bias": (lambda x, w: F.linear(x, w), [R.standard_normal((2, 3, 10)), R.standard_normal((4, 10))]),
    "linear_1d": (lambda x, w, b: F.linear(x, w, b), [R.standard_normal(10), R.standard_normal((3, 10)),
                                                       R.standard_normal(3)]),
    "avg_pool": (lambda x: F.avg_pool2d(x, 2), [IMG]),
    "avg_pool_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1, True, False), [IMG]),
    "log_softmax": (lambda x: F.log_softmax(x, 1), [ROWS]),
    "nll_mean": (lambda x: F.nll_loss(F.log_softmax(x, 1), tinynet.tensor(T16, device="cuda")), [ROWS]),
    "nll_sum_ignore": (lambda x: F.nll_loss(x, tinynet.tensor(numpy.where(T16 == 3, -100, T16), device="cuda"),
                                            reduction="sum"), [ROWS]),
    "nll_none_weight": (lambda x, w: F.nll_loss(x, tinynet.tensor(T16, device="cuda"), weight=w.detach(),
                                                reduction="none"), [ROWS, R.uniform(0.5, 2, 10)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, tinynet.tensor(T16, device="cuda")), [ROWS]),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, tinynet.tensor(T16, device="cuda"), reduction="none"), [ROWS]),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         [IMG, R.uniform(0.5, 2, 3), R.standard_normal(3)]),
    "batch_norm_1d": (lambda x: F.batch_norm(x, None, None, training=True), [ROWS]),
    "conv": (lambda x, w, b: F.conv2d(x, w, b), [IMG, R.standard_normal((5, 3, 3, 3)), R.standard_normal(5)]),
    "conv_strided_padded": (lambda x, w: F.conv2d(x, w, stride=2, padding=(1, 2), dilation=(2, 1)),
                            [IMG, R.standard_normal((4, 3, 3, 2))]),
    "conv_groups": (lambda x, w: F.conv2d(x, w, padding="same", groups=3), [IMG, R.standard_normal((6, 1, 3, 3))]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_kernel_matches_generic_on_gpu(name, kernels):
    fn, arrays = OPS[name]
    with_k, without_k = kernels(lambda: _run(fn, arrays, grad=name != "nll_none_weight"))
    _close(with_k, without_k)


@pytest.mark.parametrize("name", sorted(n for n in OPS if not n.startswith(("nll", "cross"))))
def test_gpu_matches_cpu(name):  # the loss cases build GPU targets: see test_losses_gpu_match_cpu
    fn, arrays = OPS[name]
    _close(_run(fn, arrays, "cuda"), _run(fn, arrays, "cpu"))


def test_losses_gpu_match_cpu():
    for reduction in ("mean", "sum", "none"):
        out = {}
        for dev in ("cpu", "cuda"):
            x = tinynet.tensor(ROWS, dtype="float32", device=dev, requires_grad=True)
            loss = F.cross_entropy(x, tinynet.tensor(T16, device=dev), reduction=reduction)
            loss.sum().backward()
            out[dev] = (loss.detach().numpy(), x.grad.numpy())
        _close(out["cuda"], out["cpu"])


@pytest.mark.parametrize("fn", [F.dropout, F.dropout2d])
def test_dropout_kernel_statistics_and_repeatability(fn):
    x = tinynet.ones(64, 32, 8, 8, device="cuda", requires_grad=True)
    tinynet.manual_seed(11)
    y = fn(x, p=0.3)
    tinynet.manual_seed(11)
    y2 = fn(x, p=0.3)
    y3 = fn(x, p=0.3)
    a = y.detach().numpy()
    assert (a == y2.detach().numpy()).all() and not (a == y3.detach().numpy()).all()
    kept = a != 0
    units = kept.size if fn is F.dropout else 64 * 32
    assert abs((1 - kept.mean()) - 0.3) < 5 * numpy.sqrt(0.21 / units)
    numpy.testing.assert_allclose(a[kept], 1 / 0.7, rtol=1e-6)
    if fn is F.dropout2d:
        assert (kept.all(axis=(2, 3)) | (~kept).all(axis=(2, 3))).all()
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), kept / 0.7, rtol=1e-6)


def _round_half(a, dtype):
    """float32 array ``a`` rounded once to ``dtype`` (float16 or bfloat16), back as float32."""
    return a.astype(numpy.float16 if dtype == "float16" else tinynet.bfloat16).astype(numpy.float32)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn", [F.dropout, F.dropout2d])
def test_half_dropout_kernel_draws_the_float32_masks(fn, half, launched):
    """float16 and bfloat16 dropout run the Philox kernel of their own type (same masks as
    float32 for one seed), the kept values are x / (1 - p) rounded once to the half type, and
    the gradient uses the same mask."""
    x = R.standard_normal((16, 8, 6, 6))
    out = {}
    for dtype in (half, "float32"):
        t = tinynet.tensor(x, dtype=dtype, device="cuda", requires_grad=True)
        tinynet.manual_seed(5)
        y = fn(t, p=0.4)
        assert y.dtype == t.dtype and y.grad_fn.gpu_path
        y.backward(tinynet.ones_like(y))
        out[dtype] = (y.detach().float().numpy(), t.grad.float().numpy())
    assert ("tinynet_dropout_fwd", half) in launched and ("tinynet_dropout_bwd", half) in launched
    numpy.testing.assert_array_equal(out[half][0] != 0, out["float32"][0] != 0)
    want = _round_half(_round_half(x.astype(numpy.float32), half) * numpy.float32(1 / 0.6), half)
    kept = out["float32"][0] != 0
    numpy.testing.assert_array_equal(out[half][0][kept], want[kept])
    numpy.testing.assert_allclose(out[half][1], out["float32"][1], rtol=1e-2 if half == "bfloat16" else 1e-3)


def test_dropout_off_is_identical(kernels):
    x = R.standard_normal((8, 4, 5, 5))
    with_k, without_k = kernels(lambda: _run(lambda t: F.dropout2d(F.dropout(t, 0.0), 0.0) * 2, [x]))
    _close(with_k, without_k, rtol=0, atol=0)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
                                     ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                     ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.2)),
                                     ("Adam", dict(lr=0.01, weight_decay=0.1)), ("AdamW", dict(lr=0.01))])
def test_fused_optimizer_matches_generic(name, kw, kernels):
    def train():
        p = tinynet.tensor(numpy.arange(12.0).reshape(3, 4) / 7, dtype="float32", device="cuda", requires_grad=True)
        opt = getattr(tinynet.optim, name)([p], **kw)
        rng = numpy.random.default_rng(1)
        for _ in range(5):
            p.grad = tinynet.tensor(rng.standard_normal((3, 4)), dtype="float32", device="cuda")
            opt.step()
        return [p.detach().numpy()]
    with_k, without_k = kernels(train)
    _close(with_k, without_k, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("kernel,stride,padding,dilation", [(2, 2, 0, 1), (3, 2, 1, 1), (3, 1, 1, 2)])
def test_half_max_pool_kernel_matches_float32(kernel, stride, padding, dilation, half, kernels, launched):
    """Max pooling of float16 or bfloat16 input takes the kernel (not the generic code) and
    picks the same maxima as float32 (exact: the maximum is one of the inputs); the gradient
    lands on the same elements, with ties (repeated values) as in the generic code."""
    x = numpy.round(R.standard_normal((4, 3, 11, 9)) * 4) / 4  # ties within windows (exact in both types)

    def run(dtype):
        t = tinynet.tensor(x, dtype=dtype, device="cuda", requires_grad=True)
        y = F.max_pool2d(t, kernel, stride, padding, dilation)
        assert y.dtype == t.dtype and y.grad_fn.gpu_path == backend.kernels_enabled
        g = numpy.random.default_rng(3).standard_normal(y.shape)
        (y * tinynet.tensor(g, dtype=dtype, device="cuda")).sum().backward()
        return [y.detach().float().numpy(), t.grad.float().numpy()]

    (half_k, half_generic) = kernels(lambda: run(half))
    assert ("tinynet_max_pool2d_fwd", half) in launched  # the half type's own kernel, not float32's
    assert any(name.startswith("tinynet_max_pool2d_bwd") and dt == half for name, dt in launched)
    single = run("float32")
    numpy.testing.assert_array_equal(half_k[0], half_generic[0])
    numpy.testing.assert_array_equal(half_k[0], single[0])
    # overlapping windows: the kernel adds a position's gradients in float32, the generic code in the half type
    tol = 2e-2 if half == "bfloat16" else 2e-3
    numpy.testing.assert_allclose(half_k[1], half_generic[1], rtol=tol, atol=tol)
    numpy.testing.assert_allclose(half_k[1], single[1], rtol=tol, atol=tol)  # gradients rounded to the half type


@pytest.mark.parametrize("bad", [None, float("inf"), float("nan")])
def test_fused_grad_scaler_unscale_matches_generic(bad, kernels):
    """GradScaler.unscale_ through the one fused kernel equals the per-gradient generic code:
    the unscaled gradients and the inf/NaN flag."""
    def run():
        params = [tinynet.tensor(R.standard_normal(s), dtype="float32", device="cuda", requires_grad=True)
                  for s in ((3, 4), (5,), (2, 3, 2))]
        rng = numpy.random.default_rng(7)
        for p in params:
            p.grad = tinynet.tensor(rng.standard_normal(p.shape) * 1024, dtype="float32", device="cuda")
        if bad is not None:
            params[1].grad.array[2] = bad
        opt = tinynet.optim.SGD(params, lr=0.1)
        scaler = tinynet.amp.GradScaler("cuda", init_scale=1024.0)
        scaler.scale(params[0].sum())
        scaler.unscale_(opt)
        found = scaler._per_optimizer_states[id(opt)]["found_inf_per_device"]
        return [p.grad.numpy() for p in params] + [numpy.array([float(v) for v in found.values()])]
    with_k, without_k = kernels(run)
    _close(with_k, without_k, rtol=0, atol=0)
    assert with_k[-1].tolist() == [0.0 if bad is None else 1.0]


def _net():
    tinynet.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 10, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(10, 20, 5), nn.Dropout2d(),
                         nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(320, 50), nn.ReLU(), nn.Dropout(),
                         nn.Linear(50, 10), nn.LogSoftmax(dim=1))


def test_reference_convnet_step_gpu_matches_cpu(monkeypatch):
    # cuDNN's float32 convolutions use TF32 by default (PyTorch's cudnn.allow_tf32): off here, so
    # both devices do float32 maths (with TF32 one filter-gradient element of a cancelling sum
    # differed by 1.5 % on an H200, 2026-11-29)
    monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", False)
    x = R.standard_normal((32, 1, 28, 28)).astype(numpy.float32)
    y = R.integers(0, 10, 32)
    grads = {}
    for dev in ("cpu", "cuda"):
        net = _net().to(dev).eval()  # dropout off: identical maths
        loss = F.nll_loss(net(tinynet.tensor(x, device=dev)), tinynet.tensor(y, device=dev))
        loss.backward()
        grads[dev] = [loss.detach().numpy()] + [p.grad.numpy() for p in net.parameters()]
    _close(grads["cuda"], grads["cpu"], rtol=1e-3, atol=1e-5)


def test_memory_does_not_grow_over_steps():
    net = _net().to("cuda")
    opt = tinynet.optim.SGD(net.parameters(), lr=0.01, momentum=0.5)
    x = tinynet.randn(64, 1, 28, 28, device="cuda")
    y = tinynet.tensor(numpy.arange(64) % 10, device="cuda")
    pool = backend.cupy.get_default_memory_pool()
    used = []
    for _ in range(30):
        opt.zero_grad()
        F.nll_loss(net(x), y).backward()
        opt.step()
        used.append(pool.used_bytes())
    assert max(used[10:]) <= max(used[:10])


@pytest.mark.parametrize("resident", [True, False])
def test_dataloader_on_gpu_matches_cpu(resident):
    from tinynet.data import DataLoader, TensorDataset
    xs, ys = R.standard_normal((100, 3)).astype(numpy.float32), numpy.arange(100)
    ds = TensorDataset(xs, ys)
    tinynet.manual_seed(2)
    cpu = [(a.detach().numpy(), b.detach().numpy()) for a, b in DataLoader(ds, 16, shuffle=True, device="cpu")]
    tinynet.manual_seed(2)
    dl = DataLoader(ds, 16, shuffle=True, device="cuda", resident=resident)
    assert (dl._resident is not None) == resident
    gpu = [(a, b) for a, b in dl]
    assert all(a.device == "cuda" for a, _ in gpu)
    for (a, b), (c, d) in zip(cpu, gpu):
        assert (a == c.detach().numpy()).all() and (b == d.detach().numpy()).all()


def test_mnist_resident_transform_on_device():
    import os
    from tinynet.data import DataLoader, datasets, transforms
    root = os.environ.get("TINYNET_DATA")
    if not root:
        pytest.skip("TINYNET_DATA not set")
    ds = datasets.MNIST(root, train=False, transform=transforms.mnist_normalize())
    x, y = next(iter(DataLoader(ds, 8, device="cuda")))
    assert x.device == "cuda" and x.shape == (8, 1, 28, 28) and y.tolist()[:3] == [7, 2, 1]
    ref = transforms.mnist_normalize()(ds.data[:8])
    numpy.testing.assert_allclose(x.detach().numpy(), ref, rtol=1e-6)


CONV_CASES = {k: v for k, v in OPS.items() if k.startswith("conv")}


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_im2col_kernels_match_generic_without_cudnn(name, kernels, monkeypatch):
    monkeypatch.setattr(tinynet.backends.cudnn, "enabled", False)  # the im2col path, not cuDNN
    fn, arrays = CONV_CASES[name]
    with_k, without_k = kernels(lambda: _run(fn, arrays))
    _close(with_k, without_k)


def test_batchnorm_running_stats_on_gpu_match_cpu():
    x = R.standard_normal((8, 3, 5, 5)) * 2 + 1
    stats = {}
    for dev in ("cpu", "cuda"):
        bn = nn.BatchNorm2d(3).to(dev)
        for _ in range(3):
            bn(tinynet.tensor(x, dtype="float32", device=dev)).sum().backward()
        bn.eval()
        stats[dev] = [bn.running_mean.detach().numpy(), bn.running_var.detach().numpy(),
                      bn.num_batches_tracked.detach().numpy(),
                      bn(tinynet.tensor(x, dtype="float32", device=dev)).detach().numpy()]
    _close(stats["cuda"], stats["cpu"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("data,params", [("float32", "float32"), ("float64", "float64"), ("float16", "float16"),
                                         ("float16", "float32")])
def test_batchnorm_eval_statistics_kernel(data, params):
    """Eval mode takes (mean, invstd) from the running statistics in one launch: the bits of
    ``1 / sqrt(var + eps)`` computed elementwise by CuPy in the accumulation dtype, and the
    output and input gradient of PyTorch's eval-mode batch norm."""
    import cupy
    import torch
    from tinynet.kernels import batchnorm
    r = numpy.random.default_rng(12)
    x = r.standard_normal((4, 6, 5, 7)) * 2 + 1
    rm, rv = r.standard_normal(6), r.uniform(0.1, 3.0, 6)
    w, b = r.standard_normal(6), r.standard_normal(6)
    acc = numpy.float64 if data == "float64" else numpy.float32
    arr = {k: cupy.asarray(v.astype(params)) for k, v in (("rm", rm), ("rv", rv), ("w", w), ("b", b))}
    _, mean, invstd = batchnorm.batch_norm_fwd(cupy.asarray(x.astype(data)), arr["w"], arr["b"], arr["rm"], arr["rv"],
                                               False, 0.1, 1e-5)
    expect = 1 / cupy.sqrt(arr["rv"].astype(acc) + 1e-5)
    assert mean.dtype == acc and bytes(invstd.get()) == bytes(expect.get())
    assert bytes(mean.get()) == bytes(arr["rm"].astype(acc).get())
    bn = nn.BatchNorm2d(6).to("cuda").to(getattr(tinynet, params)).eval()
    bn.load_state_dict({"weight": tinynet.tensor(w), "bias": tinynet.tensor(b), "running_mean": tinynet.tensor(rm),
                        "running_var": tinynet.tensor(rv), "num_batches_tracked": tinynet.tensor(3)})
    xt = tinynet.tensor(x, dtype=getattr(tinynet, data), device="cuda", requires_grad=True)
    y = bn(xt)
    y.backward(tinynet.ones_like(y))
    tb = torch.nn.BatchNorm2d(6).double().eval()
    tb.load_state_dict({"weight": torch.tensor(w), "bias": torch.tensor(b), "running_mean": torch.tensor(rm),
                        "running_var": torch.tensor(rv), "num_batches_tracked": torch.tensor(3)})
    xr = torch.tensor(xt.double().numpy(force=True), requires_grad=True)
    yr = tb(xr)
    yr.backward(torch.ones_like(yr))
    tol = 1e-12 if data == "float64" else 1e-5 if data == "float32" else 5e-3
    numpy.testing.assert_allclose(y.double().numpy(force=True), yr.detach().numpy(), rtol=tol, atol=tol * 4)
    numpy.testing.assert_allclose(xt.grad.double().numpy(force=True), xr.grad.numpy(), rtol=tol, atol=tol * 4)


@pytest.mark.parametrize("shape", [(1024, 10, 24, 24), (64, 20, 8, 8), (3, 7, 5, 9), (1, 4, 33, 1), (200, 50),
                                   (2, 3, 100)])
def test_bias_grad_kernel_matches_float64_sum(shape):
    """The bias-gradient reduction (row stage + per-channel stage, or one block per
    channel for short rows) against a float64 sum over every dim but 1."""
    import cupy
    from tinynet.kernels import gpu_ops
    g = numpy.random.default_rng(4).standard_normal(shape).astype(numpy.float32)
    out = cupy.asnumpy(gpu_ops.bias_grad(cupy.asarray(g)))
    ref = g.astype(numpy.float64).sum(axis=tuple(i for i in range(g.ndim) if i != 1))
    numpy.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype,rtol", [("float32", 1e-5), ("float64", 1e-12)])
def test_direct_gemm_matches_float64_matmul(trans_a, trans_b, dtype, rtol):
    """gemm.matmul (one cuBLAS call on row-major operands) against NumPy in float64,
    for every transpose combination and non-square shapes."""
    import cupy
    from tinynet.kernels import gemm
    rng = numpy.random.default_rng(6)
    a = rng.standard_normal((13, 5) if trans_a else (5, 13))
    b = rng.standard_normal((7, 13) if trans_b else (13, 7))
    out = gemm.matmul(cupy.asarray(a, dtype=dtype), cupy.asarray(b, dtype=dtype), trans_a, trans_b)
    assert out.shape == (5, 7) and out.dtype == dtype and out.flags.c_contiguous
    ref = (a.T if trans_a else a) @ (b.T if trans_b else b)
    numpy.testing.assert_allclose(cupy.asnumpy(out), ref, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("mnk", [(64, 256, 784), (10, 256, 1024), (64, 10, 256), (5, 7, 200), (33, 17, 3000)])
def test_split_k_gemm_matches_float64_and_repeats_bit_for_bit(mnk, trans_a, trans_b, dtype, rtol):
    """Tiled products split along K (few output tiles, long K: the MLP's layers) against
    NumPy in float64, with and without bias, and the same bits at every call (the splits'
    partial sums are added in a fixed order, whichever block finishes last)."""
    import cupy
    from tinynet.kernels import gemm
    m, n, k = mnk
    rng = numpy.random.default_rng(7)
    a = rng.standard_normal((k, m) if trans_a else (m, k))
    b = rng.standard_normal((n, k) if trans_b else (k, n))
    bias = rng.standard_normal(n)
    da, db, dbias = (cupy.asarray(v, dtype=dtype) for v in (a, b, bias))
    splits = gemm.plan(m, n, k, gemm._split_workspace(cupy)[2])[2]
    if mnk != (64, 10, 256):
        assert splits > 1, (mnk, splits)
    ref = (a.T if trans_a else a) @ (b.T if trans_b else b)
    for with_bias in (False, True):
        outs = [cupy.asnumpy(gemm.matmul(da, db, trans_a, trans_b, bias=dbias if with_bias else None))
                for _ in range(3)]
        numpy.testing.assert_allclose(outs[0], ref + (bias if with_bias else 0), rtol=rtol, atol=rtol * numpy.sqrt(k))
        for o in outs[1:]:
            numpy.testing.assert_array_equal(o, outs[0])


@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("sa,sb,ta,tb", [
    ((4, 5), (5, 3), False, False), ((2, 4, 5), (2, 5, 3), False, True), ((2, 4, 5), (5, 3), True, False),
    ((7, 1, 4, 5), (3, 5, 6), False, False), ((1, 1, 4, 5), (2, 3, 5, 6), True, True), ((3, 0, 5), (3, 5, 2), False,
                                                                                       False),
    ((2, 4, 0), (2, 0, 3), False, False), ((4, 5), (5, 3), True, True), ((4, 5), (5, 3), True, False),
    ((4, 0), (0, 3), True, False), ((6, 5), (5, 0), False, True)])
def test_strided_batched_matmul_matches_numpy(sa, sb, ta, tb, dtype, rtol):
    """kernels.cublas.matmul (cublas{S,D}gemmStridedBatched on tinynet's handle) against
    NumPy's @ in float64: batch broadcasting (stride 0, or expanded), transposed views read
    in place (ta/tb: the operand is the swapaxes view of a contiguous array), empty dims."""
    import cupy
    from tinynet.kernels import cublas
    rng = numpy.random.default_rng(8)

    def make(shape, trans):
        base = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2]) if trans else shape)
        dev = cupy.asarray(base, dtype=dtype)
        return (base.swapaxes(-1, -2), dev.swapaxes(-1, -2)) if trans else (base, dev)

    (a, da), (b, db) = make(sa, ta), make(sb, tb)
    out = cublas.matmul(da, db)
    ref = a @ b
    assert out.shape == ref.shape and out.dtype == dtype and out.flags.c_contiguous
    numpy.testing.assert_allclose(cupy.asnumpy(out), ref, rtol=rtol, atol=rtol * 10)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_two_dim_matmul_takes_plain_gemm_with_strided_operands(dtype):
    """Two 2-D operands go through the plain GEMM call: a column slice (neither layout: copied)
    and a transposed slice of rows (read transposed) give NumPy's product."""
    import cupy
    from tinynet.kernels import cublas
    r = numpy.random.default_rng(4)
    a = cupy.asarray(r.standard_normal((9, 12)), dtype=dtype)[:, ::2]    # (9, 6), strided columns
    b = cupy.asarray(r.standard_normal((5, 6)), dtype=dtype)[1:4].T      # (6, 3), a transposed view
    out = cublas.matmul(a, b)
    ref = cupy.asnumpy(a).astype(numpy.float64) @ cupy.asnumpy(b).astype(numpy.float64)
    assert out.shape == (9, 3) and out.dtype == dtype and out.flags.c_contiguous
    numpy.testing.assert_allclose(cupy.asnumpy(out).astype(numpy.float64), ref, rtol=2e-3 if dtype == "float16"
                                  else 2e-5, atol=2e-3 if dtype == "float16" else 1e-5)


def test_linear_takes_the_direct_gemm_path_and_falls_back_for_empty_input():
    x = tinynet.randn(6, 4, device="cuda", requires_grad=True)
    lin = nn.Linear(4, 3).to("cuda")
    y = lin(x)
    assert y.grad_fn.direct
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.tile(lin.weight.detach().numpy().sum(0), (6, 1)), rtol=1e-5)
    empty = lin(tinynet.zeros(0, 4, device="cuda", requires_grad=True))
    assert not empty.grad_fn.direct and empty.shape == (0, 3)


def _host_float64(a, dtype):
    """CuPy array ``a`` of ``dtype`` as float64 on the host, half types read through their bits."""
    if dtype == "bfloat16":
        return (a.view("uint16").get().astype(numpy.uint32) << 16).view(numpy.float32).astype(numpy.float64)
    return (a.view("uint16").get().view(numpy.float16) if dtype == "float16" else a.get()).astype(numpy.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 5, 3, 4), (64, 70, 33, 35)])
def test_channel_sum_nhwc_kernel_matches_float64(dtype, shape):
    """The NHWC bias-gradient kernel (column sums of the (NHW, C) rows, two deterministic
    stages) equals a float64 sum, rounded once to the dtype; repeated calls give the same bits."""
    from tinynet.kernels import gpu_ops
    t = tinynet.tensor(R.standard_normal(shape), dtype=dtype, device="cuda")
    t = t.contiguous(memory_format=tinynet.channels_last)
    exact = t.double().numpy().sum(axis=(0, 2, 3))  # the rounded inputs, summed in float64
    got = gpu_ops.channel_sum_nhwc(t.array)
    assert got.dtype == t.array.dtype and got.shape == (shape[1],)

    def host(a):
        return _host_float64(a, dtype)

    tol = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}[dtype]
    numpy.testing.assert_allclose(host(got), exact, rtol=tol, atol=tol * numpy.sqrt(t.numel() / shape[1]))
    assert (host(gpu_ops.channel_sum_nhwc(t.array)) == host(got)).all()


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_half_relu_and_conv_bias_kernels_match_the_generic_code(half, kernels, monkeypatch, launched):
    """ReLU, the convolution's bias add and its bias gradient on float16/bfloat16 run through
    tinynet's kernels of the half type itself (float32 arithmetic, one rounding) and agree with
    the generic CuPy code: ReLU exactly (it keeps or zeroes values), the bias terms within the
    half type's rounding. Rows of >= 32 values take the two-stage gradient (float32 partials)."""
    from tinynet.kernels import gpu_ops
    x = R.standard_normal((6, 5, 9, 8))
    w = R.standard_normal((4, 5, 3, 3)) * 0.2
    b = R.standard_normal(4)
    calls = []
    for name in ("relu_fwd", "relu_bwd", "bias_add", "bias_grad"):  # count the kernel launchers' calls
        def counted(*args, _fn=getattr(gpu_ops, name), _name=name):
            calls.append(_name)
            return _fn(*args)
        monkeypatch.setattr(gpu_ops, name, counted)

    def run():
        ts = [tinynet.tensor(a, dtype=half, device="cuda", requires_grad=True) for a in (x, w, b)]
        y = F.relu(F.conv2d(*ts, padding=1))
        g = tinynet.tensor(numpy.random.default_rng(2).standard_normal(y.shape), dtype=half, device="cuda")
        y.backward(g)
        return [y.detach().float().numpy()] + [t.grad.float().numpy() for t in ts]

    with_k, without_k = kernels(run)
    assert sorted(calls) == ["bias_add", "bias_grad", "relu_bwd", "relu_fwd"]  # each once, with the kernels on
    for name in ("tinynet_relu_fwd", "tinynet_relu_bwd", "tinynet_bias_add_fwd"):
        assert (name, half) in launched, f"{name} did not run in {half}"
    tol = 2e-2 if half == "bfloat16" else 2e-3
    numpy.testing.assert_allclose(with_k[0], without_k[0], rtol=tol, atol=tol)  # the bias add rounds once in both
    for ours, generic in zip(with_k[1:], without_k[1:]):
        scale = max(1.0, float(numpy.abs(generic).max()))
        numpy.testing.assert_allclose(ours / scale, generic / scale, rtol=tol, atol=tol)
    # ReLU alone on the same values: kept values bit for bit, zeros elsewhere
    t = tinynet.tensor(x, dtype=half, device="cuda")
    numpy.testing.assert_array_equal(F.relu(t).float().numpy(), numpy.maximum(t.float().numpy(), 0))


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(3, 7, 5), (64, 12, 40, 40)])
def test_half_bias_grad_kernel_sums_in_float32(half, shape):
    """gpu_ops.bias_grad on float16/bfloat16 (the one-block path for short rows, the two-stage
    path with float32 partials for long ones) equals a float64 sum of the same values,
    rounded once."""
    from tinynet.kernels import gpu_ops
    t = tinynet.tensor(R.standard_normal(shape), dtype=half, device="cuda")
    exact = t.double().numpy().sum(axis=tuple(i for i in range(len(shape)) if i != 1))
    got = gpu_ops.bias_grad(t.array)
    assert got.dtype == t.array.dtype
    rel = 8e-3 if half == "bfloat16" else 1e-3  # one rounding of the float32 sum to the half type
    numpy.testing.assert_allclose(_host_float64(got, half), exact, rtol=rel, atol=rel * numpy.sqrt(t.numel()))
