"""The fused GPU kernels of layer normalisation (kernels/layer_norm.cu) and of the LSTM and
GRU cells' pointwise math (kernels/rnn_cell.cu): the kernel path against the generic xp
code on the same GPU (``backend.kernels_enabled`` switched per run) and against PyTorch's
CUDA ops, in float32 and float64, forward and every gradient; double backward through
the kernel path; what falls back to the generic code."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import backend, nn
from tinynet.ops import rnn as R

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped without it
    torch = None

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("own_rnn_path")]


DEV = "cuda"
DTYPES = ("float32", "float64")
TOL = {"float32": (2e-4, 5e-5), "float64": (1e-9, 1e-11)}
torch_cuda = pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="needs PyTorch with CUDA")


def _close(got, want, dtype, what=""):
    rtol, atol = TOL[dtype]
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), f"{what}: result {k}"
        if a is not None:
            numpy.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{what}: result {k}")


def _host(t):
    return None if t is None else t.detach().numpy()


# ---- layer normalisation -----------------------------------------------------------------
LN_CASES = [  # (input shape, normalized_shape): rows of 1, 7, 64, 768, 4096 and 10000 values
    ((5, 1), (1,)), ((6, 7), (7,)), ((3, 5, 64), (64,)), ((16, 768), (768,)), ((4, 4096), (4096,)),
    ((3, 10000), (10000,)), ((7,), (7,)), ((9, 300), (300,)), ((4, 8, 8), (8, 8)),
    ((2, 3, 24, 32), (24, 32)), ((3, 100, 100), (100, 100)),
]
AFFINE = [(True, True), (False, False), (True, False), (False, True)]


def _ln_arrays(shape, normalized, affine, dtype, seed=0):
    r = numpy.random.default_rng(seed)
    x = (r.standard_normal(shape) * 3 + 1).astype(dtype)
    w = r.uniform(0.5, 1.5, normalized).astype(dtype) if affine[0] else None
    b = r.standard_normal(normalized).astype(dtype) if affine[1] else None
    return x, w, b, r.standard_normal(shape).astype(dtype)


def _tinynet_ln(arrays, normalized, monkeypatch, kernels):
    """Forward and backward (cotangent ``arrays[3]``); y and the gradients of x, w, b."""
    monkeypatch.setattr(backend, "kernels_enabled", kernels)
    ts = [None if a is None else tinynet.tensor(a, device=DEV, requires_grad=True) for a in arrays[:3]]
    y = F.layer_norm(ts[0], normalized, ts[1], ts[2])
    assert y.grad_fn.gpu_path == kernels  # the path asked for is the one taken
    (y * tinynet.tensor(arrays[3], device=DEV)).sum().backward()
    return [_host(y)] + [None if t is None else _host(t.grad) for t in ts]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", AFFINE, ids=["affine", "plain", "weight", "bias"])
@pytest.mark.parametrize("shape,normalized", LN_CASES, ids=[str(s) for s, _ in LN_CASES])
def test_layer_norm_kernel_matches_generic(shape, normalized, affine, dtype, monkeypatch):
    arrays = _ln_arrays(shape, normalized, affine, dtype)
    _close(_tinynet_ln(arrays, normalized, monkeypatch, True),
           _tinynet_ln(arrays, normalized, monkeypatch, False), dtype, "layer_norm")


@torch_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", AFFINE, ids=["affine", "plain", "weight", "bias"])
@pytest.mark.parametrize("shape,normalized", LN_CASES, ids=[str(s) for s, _ in LN_CASES])
def test_layer_norm_kernel_matches_pytorch_cuda(shape, normalized, affine, dtype, monkeypatch):
    arrays = _ln_arrays(shape, normalized, affine, dtype)
    ts = [None if a is None else torch.tensor(a, device="cuda", requires_grad=True) for a in arrays[:3]]
    y = torch.nn.functional.layer_norm(ts[0], normalized, ts[1], ts[2])
    (y * torch.tensor(arrays[3], device="cuda")).sum().backward()
    want = [y.detach().cpu().numpy()] + [None if t is None else t.grad.cpu().numpy() for t in ts]
    _close(_tinynet_ln(arrays, normalized, monkeypatch, True), want, dtype, "layer_norm vs PyTorch")


def test_layer_norm_strided_input_and_broadcast_gradient(monkeypatch):
    """A transposed input is copied for the kernel (the saved input stays the original, for
    create_graph); the ones gradient of sum() may be a broadcast view."""
    x = numpy.random.default_rng(1).standard_normal((32, 48))

    def run(kernels):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        base = tinynet.tensor(x, device=DEV, requires_grad=True)
        xt = base.t()
        y = F.layer_norm(xt, (32,))
        assert y.grad_fn.gpu_path == kernels and y.grad_fn.saved[0] is xt.array
        y.sum().backward(retain_graph=True)
        (y * y).sum().backward()
        return [_host(y), _host(base.grad)]
    _close(run(True), run(False), "float64", "transposed input")


def test_layer_norm_parameter_gradients_are_deterministic():
    x, w, b, gy = _ln_arrays((1024, 768), (768,), (True, True), "float32", seed=2)
    runs = []
    for _ in range(2):
        ts = [tinynet.tensor(a, device=DEV, requires_grad=True) for a in (x, w, b)]
        (F.layer_norm(ts[0], (768,), ts[1], ts[2]) * tinynet.tensor(gy, device=DEV)).sum().backward()
        runs.append([_host(t.grad) for t in ts])
    for a, c in zip(*runs):
        assert (a == c).all()  # no atomics: bit-identical


def test_layer_norm_double_backward_through_the_kernel_path(monkeypatch):
    """create_graph backward of the kernel path: second derivatives as the generic path's
    and the CPU's (float64)."""
    x, w, b, _ = _ln_arrays((6, 10), (10,), (True, True), "float64", seed=3)

    def run(device, kernels):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, device=device, requires_grad=True) for a in (x, w, b)]
        y = F.layer_norm(ts[0], (10,), ts[1], ts[2])
        gx, gw = tinynet.autograd.grad((y * y * y).sum(), ts[:2], create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        return [_host(gx), _host(gw)] + [_host(t.grad) for t in ts]
    want = run("cpu", False)
    _close(run(DEV, True), want, "float64", "kernel path")
    _close(run(DEV, False), want, "float64", "generic path")
    monkeypatch.setattr(backend, "kernels_enabled", True)
    inputs = tuple(tinynet.tensor(a, device=DEV, requires_grad=True) for a in (x[:2, :4], w[:4], b[:4]))
    fn = lambda t, u, v: F.layer_norm(t, (4,), u, v)  # noqa: E731
    assert tinynet.autograd.gradcheck(fn, inputs)
    assert tinynet.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("which", ["group_norm", "instance_norm"])
def test_group_and_instance_norm_take_the_kernels(which, monkeypatch):
    r = numpy.random.default_rng(4)
    x, w, b = r.standard_normal((4, 6, 5, 3)), r.uniform(0.5, 1.5, 6), r.standard_normal(6)
    fn = (lambda t, u, v: F.group_norm(t, 3, u, v)) if which == "group_norm" else \
        (lambda t, u, v: F.instance_norm(t, weight=u, bias=v))

    def run(kernels):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, dtype="float32", device=DEV, requires_grad=True) for a in (x, w, b)]
        y = fn(*ts)
        (y * y).sum().backward()
        return [_host(y)] + [_host(t.grad) for t in ts]
    _close(run(True), run(False), "float32", which)


def test_layer_norm_float16_uses_the_generic_code():
    x = numpy.random.default_rng(5).standard_normal((8, 64))
    x16 = tinynet.tensor(x, dtype="float16", device=DEV, requires_grad=True)
    y16 = F.layer_norm(x16, (64,))
    y32 = F.layer_norm(tinynet.tensor(x, dtype="float32", device=DEV), (64,))
    assert y16.dtype == tinynet.float16 and not y16.grad_fn.gpu_path
    y16.sum().backward()
    assert x16.grad.dtype == tinynet.float16
    numpy.testing.assert_allclose(_host(y16).astype(numpy.float32), _host(y32), atol=1e-2)


# ---- LSTM and GRU cells ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["lstm", "gru"])
@pytest.mark.parametrize("need", [(True, True, True), (True, False, False), (False, True, False),
                                  (False, False, True)], ids=["all", "xg", "hg", "state"])
def test_gate_ops_kernel_matches_generic(mode, dtype, need, monkeypatch):
    r = numpy.random.default_rng(6)
    N, H, G = 5, 33, 4 if mode == "lstm" else 3
    arrays = [r.standard_normal((N, G * H)) * 2, r.standard_normal((N, G * H)), r.standard_normal((N, H))]
    cot = [r.standard_normal((N, H)) for _ in range(2)]
    fn = R.lstm_gates if mode == "lstm" else R.gru_gates

    def run(kernels):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, dtype=dtype, device=DEV, requires_grad=g) for a, g in zip(arrays, need)]
        out = fn(*ts)
        out = out if isinstance(out, tuple) else (out,)
        assert out[0].grad_fn.gpu_path == kernels
        sum((o * tinynet.tensor(c, dtype=dtype, device=DEV)).sum() for o, c in zip(out, cot)).backward()
        return [_host(o) for o in out] + [_host(t.grad) for t in ts]
    _close(run(True), run(False), dtype, mode)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_gate_ops_double_backward_through_the_kernel_path(mode, monkeypatch):
    monkeypatch.setattr(backend, "kernels_enabled", True)
    r = numpy.random.default_rng(7)
    G = 4 if mode == "lstm" else 3
    arrays = [r.standard_normal((2, G * 3)), r.standard_normal((2, G * 3)), r.standard_normal((2, 3))]
    inputs = tuple(tinynet.tensor(a, device=DEV, requires_grad=True) for a in arrays)
    fn = R.lstm_gates if mode == "lstm" else R.gru_gates
    assert tinynet.autograd.gradcheck(fn, inputs)
    assert tinynet.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell"])
def test_cells_kernel_matches_generic(name, dtype, monkeypatch):
    r = numpy.random.default_rng(8)
    tinynet.manual_seed(0)
    cell = getattr(nn, name)(10, 16).to(device=DEV, dtype=dtype)
    x, h, c = r.standard_normal((4, 10)), r.standard_normal((4, 16)), r.standard_normal((4, 16))

    def run(kernels):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        cell.zero_grad()
        ts = [tinynet.tensor(a, dtype=dtype, device=DEV, requires_grad=True) for a in (x, h, c)]
        out = cell(ts[0], (ts[1], ts[2])) if name == "LSTMCell" else (cell(ts[0], ts[1]),)
        sum((o * o).sum() for o in out).backward()
        grads = [_host(t.grad) for t in ts[:2 if name == "GRUCell" else 3]]
        return [_host(o) for o in out] + grads + [_host(p.grad) for p in cell.parameters()]
    _close(run(True), run(False), dtype, name)


LAYER = dict(input_size=5, hidden_size=24, num_layers=2, bidirectional=True, batch_first=True)


def _tinynet_layer(mode, layer, x, h0, c0, monkeypatch, kernels):
    """Output, final states and every gradient of a batch_first layer, on the GPU."""
    monkeypatch.setattr(backend, "kernels_enabled", kernels)
    layer.zero_grad()
    dtype = layer.weight_ih_l0.dtype
    ts = [tinynet.tensor(a, dtype=dtype, device=DEV, requires_grad=True) for a in (x, h0, c0)]
    out, hn = layer(ts[0], (ts[1], ts[2]) if mode == "LSTM" else ts[1])
    states = hn if mode == "LSTM" else (hn,)
    ((out * out).sum() + sum((s * s).sum() for s in states)).backward()
    grads = [_host(t.grad) for t in ts[:3 if mode == "LSTM" else 2]]
    return [_host(out)] + [_host(s) for s in states] + grads + [_host(p.grad) for _, p in layer.named_parameters()]


def _layer_inputs(seed=9):
    r = numpy.random.default_rng(seed)
    return r.standard_normal((3, 7, 5)), r.standard_normal((4, 3, 24)), r.standard_normal((4, 3, 24))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_layers_kernel_matches_generic(mode, dtype, monkeypatch):
    tinynet.manual_seed(1)
    layer = getattr(nn, mode)(**LAYER).to(device=DEV, dtype=dtype)
    x, h0, c0 = _layer_inputs()
    _close(_tinynet_layer(mode, layer, x, h0, c0, monkeypatch, True),
           _tinynet_layer(mode, layer, x, h0, c0, monkeypatch, False), dtype, mode)


@torch_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_layers_match_pytorch_cuda(mode, dtype, monkeypatch):
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # cuDNN's RNNs would round float32 products to TF32
    try:
        _compare_layer_with_pytorch(mode, dtype, monkeypatch)
    finally:
        torch.backends.cudnn.allow_tf32 = tf32


def _compare_layer_with_pytorch(mode, dtype, monkeypatch):
    torch_dtype = getattr(torch, dtype)
    ref = getattr(torch.nn, mode)(**LAYER).to(torch_dtype)
    ours = getattr(nn, mode)(**LAYER)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    ours, ref = ours.to(device=DEV, dtype=dtype), ref.cuda()
    x, h0, c0 = _layer_inputs()
    ts = [torch.tensor(a, dtype=torch_dtype, device="cuda", requires_grad=True) for a in (x, h0, c0)]
    out, hn = ref(ts[0], (ts[1], ts[2]) if mode == "LSTM" else ts[1])
    states = hn if mode == "LSTM" else (hn,)
    ((out * out).sum() + sum((s * s).sum() for s in states)).backward()
    want = [out.detach().cpu().numpy()] + [s.detach().cpu().numpy() for s in states]
    want += [t.grad.cpu().numpy() for t in ts[:3 if mode == "LSTM" else 2]]
    named = dict(ref.named_parameters())  # tinynet's order of the parameters
    want += [named[k].grad.cpu().numpy() for k, _ in ours.named_parameters()]
    _close(_tinynet_layer(mode, ours, x, h0, c0, monkeypatch, True), want, dtype, f"{mode} vs PyTorch")


# ---- local response normalisation (kernels/local_response_norm.cu) -----------------------
def _lrn64(x, gy, size, alpha, beta, k):
    """float64 NumPy reference of y and dx: window sums by explicit loops over the channels."""
    x = x.astype(numpy.float64).reshape(x.shape[0], x.shape[1], -1)
    g = gy.astype(numpy.float64).reshape(x.shape)
    c = x.shape[1]
    d = numpy.empty_like(x)
    for i in range(c):
        d[:, i] = (x[:, max(i - size // 2, 0):i - size // 2 + size] ** 2).sum(1) / size * alpha + k
    t = g * x / d ** (beta + 1)
    gx = g / d ** beta
    for i in range(c):
        gx[:, i] -= 2 * alpha * beta / size * x[:, i] * t[:, max(i - (size - 1) // 2, 0):i + size // 2 + 1].sum(1)
    return x / d ** beta, gx


LRN_CASES = [((8, 64, 12, 12), 9, 1e-3, 0.75, 1.0), ((2, 5, 7), 2, 0.3, 0.6, 2.0),
             ((3, 4, 2, 2, 2), 9, 0.5, 0.75, 1.0), ((4, 6, 5, 5), 1, 1e-2, 0.5, 0.5)]
LRN_TOL = {"float32": 2e-6, "float64": 1e-13, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", LRN_CASES, ids=[str(c[:2]) for c in LRN_CASES])
def test_local_response_norm_kernels_match_float64(case, dtype):
    """Forward and input gradient of the kernel path against float64 NumPy on the same
    (rounded) values; float16/bfloat16 compute in float32 and round once, so within one
    rounding of their precision. The kernels, not the generic code, ran (``gpu_path``)."""
    shape, size, alpha, beta, k = case
    rng = numpy.random.default_rng(7)
    x = tinynet.tensor(rng.standard_normal(shape) * 2, device=DEV).to(getattr(tinynet, dtype)).requires_grad_()
    gy = tinynet.tensor(rng.standard_normal(shape), device=DEV).to(getattr(tinynet, dtype))
    y = F.local_response_norm(x, size, alpha, beta, k)
    assert y.dtype == x.dtype and y.grad_fn.gpu_path
    y.backward(gy)
    xs, gs = (t.detach().double().numpy() for t in (x, gy))
    want_y, want_gx = _lrn64(xs, gs, size, alpha, beta, k)
    tol = LRN_TOL[dtype]
    for got, want in ((y, want_y), (x.grad, want_gx)):
        got = got.detach().double().numpy().reshape(want.shape)
        numpy.testing.assert_allclose(got, want, rtol=tol, atol=tol * numpy.abs(want).max())


def test_local_response_norm_is_float32_under_cuda_autocast():
    """As PyTorch's (its decomposition ends in pow, a float32 op): float16 in, float32 out,
    through the float32 kernel."""
    x = tinynet.randn(2, 8, 4, 4, device=DEV).half()
    with tinynet.autocast("cuda", dtype=tinynet.float16):
        y = F.local_response_norm(x, 3)
    assert y.dtype == tinynet.float32
    if torch is not None and torch.cuda.is_available():
        with torch.autocast("cuda", dtype=torch.float16):
            ty = torch.nn.functional.local_response_norm(torch.randn(2, 8, 4, 4, device="cuda").half(), 3)
        assert ty.dtype == torch.float32
