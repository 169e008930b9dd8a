"""nn.LSTM / nn.GRU / nn.RNN through cuDNN's RNN API (tinynet.ops.rnn_cudnn), on the GPU:
against tinynet's own GPU path and against torch.nn (CPU torch, same weights), float32
(TF32 off) and float64, forward outputs, h_n / c_n and every gradient; multi-layer,
bidirectional, batch_first, with and without bias, h0 given or not; the switch routes
through cuDNN (kernels.cudnn_rnn.stats), dropout between layers, no_grad, float16 and
the refusal of a second derivative. Skipped without a GPU.

Run: TINYNET_BACKEND=cupy python -m pytest tests/test_cudnn_rnn_gpu.py -q
"""
import numpy
import pytest
from helpers import graph_ops, rng

import tinynet
from tinynet import errors, nn
from tinynet.kernels import cudnn_rnn
from tinynet.ops import rnn_cudnn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

TORCH_DT = {"float32": torch.float32, "float64": torch.float64}
TOL = {"float32": 2e-5, "float64": 1e-10}
I, H, T, N = 5, 6, 7, 3


def _rel(a, b):
    a, b = numpy.asarray(a, numpy.float64), numpy.asarray(b, numpy.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(numpy.abs(a - b).max(initial=0) / max(numpy.abs(b).max(initial=0), 1e-30))


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.double().numpy(force=True)


@pytest.fixture
def cudnn_on(monkeypatch):
    """The switch on, float32 without TF32 (exact products, for tight comparisons)."""
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", True)
    monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", False)
    ok, why = cudnn_rnn.available()
    assert ok, f"cuDNN RNN API not loadable on this GPU machine: {why}"


def _modules(name, dtype, **kw):
    ref = getattr(torch.nn, name)(I, H, **kw).to(TORCH_DT[dtype])
    ours = getattr(nn, name)(I, H, **kw)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    return ours.to(device="cuda", dtype=getattr(tinynet, dtype)), ref


def _run_ours(mod, x, state, weights, lstm):
    xs = tinynet.tensor(x, device="cuda", requires_grad=True)
    st = None if state is None else [tinynet.tensor(s, device="cuda", requires_grad=True) for s in state]
    out, hn = mod(xs, None if st is None else (tuple(st) if lstm else st[0]))
    outs = [out] + (list(hn) if lstm else [hn])
    total = None
    for o, w in zip(outs, weights):
        term = (o * tinynet.tensor(w, device="cuda")).sum()
        total = term if total is None else total + term
    total.backward()
    grads = [xs.grad] + ([s.grad for s in st] if st is not None else []) + [p.grad for p in mod.parameters()]
    return [_np(o) for o in outs], [_np(g) for g in grads], out


def _run_torch(mod, x, state, weights, lstm):
    xs = torch.tensor(x, requires_grad=True)
    st = None if state is None else [torch.tensor(s, requires_grad=True) for s in state]
    out, hn = mod(xs, None if st is None else (tuple(st) if lstm else st[0]))
    outs = [out] + (list(hn) if lstm else [hn])
    sum((o * torch.tensor(w)).sum() for o, w in zip(outs, weights)).backward()
    grads = [xs.grad] + ([s.grad for s in st] if st is not None else []) + [p.grad for p in mod.parameters()]
    return [_np(o) for o in outs], [_np(g) for g in grads]


CASES = [  # (layer, kwargs, h0 given)
    ("LSTM", {}, False),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, True),
    ("LSTM", {"num_layers": 3, "bias": False}, True),
    ("LSTM", {"bidirectional": True, "bias": False, "batch_first": True}, False),
    ("GRU", {}, True),
    ("GRU", {"num_layers": 2, "bidirectional": True}, False),
    ("GRU", {"bias": False, "batch_first": True, "num_layers": 2}, True),
    ("RNN", {}, True),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}, True),
    ("RNN", {"bias": False, "batch_first": True}, False),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw,with_h0", CASES,
                         ids=[f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[1].items()) or 'default'}-"
                              f"{'h0' if c[2] else 'noh0'}" for c in CASES])
def test_matches_pytorch_and_tinynets_own_path(cudnn_on, monkeypatch, name, kw, with_h0, dtype):
    g = rng(11)
    lstm = name == "LSTM"
    ours, ref = _modules(name, dtype, **kw)
    D = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    x = g.standard_normal((N, T, I) if kw.get("batch_first") else (T, N, I)).astype(dtype)
    state = [g.standard_normal((layers * D, N, H)).astype(dtype) for _ in range(2 if lstm else 1)] if with_h0 else None
    out_shape = (N, T, D * H) if kw.get("batch_first") else (T, N, D * H)
    weights = [g.standard_normal(out_shape).astype(dtype)] + \
        [g.standard_normal((layers * D, N, H)).astype(dtype) for _ in range(2 if lstm else 1)]
    before = dict(cudnn_rnn.stats)
    got_outs, got_grads, out = _run_ours(ours, x, state, weights, lstm)
    assert cudnn_rnn.stats["fwd"] == before["fwd"] + 1, "the cuDNN path did not run"
    assert cudnn_rnn.stats["bwd_data"] == before["bwd_data"] + 1
    assert cudnn_rnn.stats["bwd_weights"] == before["bwd_weights"] + 1
    assert out.dtype == getattr(tinynet, dtype)
    ref_outs, ref_grads = _run_torch(ref, x, state, weights, lstm)
    for p in ours.parameters():
        p.grad = None
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", False)
    own_outs, own_grads, _ = _run_ours(ours, x, state, weights, lstm)
    assert cudnn_rnn.stats["fwd"] == before["fwd"] + 1, "switch off, yet cuDNN ran"
    names = ["output", "h_n"] + (["c_n"] if lstm else [])
    gnames = ["x"] + (["h0", "c0"][:len(state)] if state else []) + [n for n, _ in ours.named_parameters()]
    for what, a, b, c in zip(names + [f"grad {n}" for n in gnames], got_outs + got_grads, ref_outs + ref_grads,
                             own_outs + own_grads):
        assert _rel(a, b) < TOL[dtype], f"{what}: cuDNN vs torch {_rel(a, b):.3g}"
        assert _rel(a, c) < TOL[dtype], f"{what}: cuDNN vs tinynet's own path {_rel(a, c):.3g}"


def _op_types(t):
    return [type(op).__name__ for op in graph_ops(t)]


def test_switch_routes_through_cudnn(cudnn_on, monkeypatch):
    lstm = nn.LSTM(I, H, num_layers=2).to("cuda")
    x = tinynet.tensor(rng(1).standard_normal((T, N, I)), dtype=tinynet.float32, device="cuda")
    before = dict(cudnn_rnn.stats)
    out, _ = lstm(x)
    assert cudnn_rnn.stats["fwd"] == before["fwd"] + 1
    assert isinstance(out.grad_fn, rnn_cudnn.CudnnRNN)  # time-major output: the op's own
    assert _op_types(out).count("CudnnRNN") == 1 and "LSTMSequence" not in _op_types(out)
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", False)
    out, _ = lstm(x)
    assert "CudnnRNN" not in _op_types(out) and cudnn_rnn.stats["fwd"] == before["fwd"] + 1


def test_projection_and_bfloat16_keep_tinynets_path(cudnn_on):
    before = dict(cudnn_rnn.stats)
    lstm = nn.LSTM(I, H, proj_size=3).to("cuda")
    x = tinynet.tensor(rng(2).standard_normal((T, N, I)), dtype=tinynet.float32, device="cuda")
    out, _ = lstm(x)
    assert "CudnnRNN" not in _op_types(out)
    gru = nn.GRU(I, H).to(device="cuda", dtype=tinynet.bfloat16)
    out, _ = gru(x.to(tinynet.bfloat16))
    assert "CudnnRNN" not in _op_types(out)
    assert cudnn_rnn.stats["fwd"] == before["fwd"]


def test_dropout_between_layers_runs_layer_by_layer(cudnn_on):
    gru = nn.GRU(I, H, num_layers=3, dropout=0.5).to("cuda")
    x = tinynet.tensor(rng(3).standard_normal((T, N, I)), dtype=tinynet.float32, device="cuda", requires_grad=True)
    before = dict(cudnn_rnn.stats)
    out, hn = gru(x)
    assert cudnn_rnn.stats["fwd"] == before["fwd"] + 3 and hn.shape == (3, N, H)
    (out.sum() + hn.sum()).backward()
    assert cudnn_rnn.stats["bwd_data"] == before["bwd_data"] + 3
    assert all(p.grad is not None for p in gru.parameters()) and x.grad is not None
    gru.eval()  # no dropout: one call for the stack, and torch's result
    ref = torch.nn.GRU(I, H, num_layers=3)
    ref.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in gru.state_dict().items()})
    out, hn = gru(x)
    assert cudnn_rnn.stats["fwd"] == before["fwd"] + 4
    r_out, r_hn = ref(torch.tensor(x.numpy(force=True)))
    assert _rel(_np(out), _np(r_out)) < 2e-5 and _rel(_np(hn), _np(r_hn)) < 2e-5


def test_no_grad_forward_uses_inference_mode(cudnn_on):
    lstm, ref = _modules("LSTM", "float32", num_layers=2, bidirectional=True)
    x = rng(4).standard_normal((T, N, I)).astype("float32")
    with tinynet.no_grad():
        out, (hn, cn) = lstm(tinynet.tensor(x, device="cuda"))
    assert out.grad_fn is None
    r_out, (r_hn, r_cn) = ref(torch.tensor(x))
    for a, b in ((out, r_out), (hn, r_hn), (cn, r_cn)):
        assert _rel(_np(a), _np(b)) < 2e-5


def test_float16_and_tf32_stay_close_to_float64(monkeypatch):
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", True)
    x = rng(5).standard_normal((T, N, I))
    for dtype, tf32, tol in (("float16", False, 5e-3), ("float32", True, 5e-3)):
        monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", tf32)
        ours, ref = _modules("LSTM", "float64", num_layers=2)
        r_out, _ = ref(torch.tensor(x))
        ours = ours.to(dtype=getattr(tinynet, dtype))
        before = cudnn_rnn.stats["fwd"]
        out, _ = ours(tinynet.tensor(x, device="cuda", dtype=getattr(tinynet, dtype)))
        assert cudnn_rnn.stats["fwd"] == before + 1, dtype
        assert out.dtype == getattr(tinynet, dtype)
        assert _rel(_np(out), _np(r_out)) < tol, dtype


def test_second_derivative_raises(cudnn_on):
    gru = nn.GRU(I, H).to("cuda")
    x = tinynet.tensor(rng(6).standard_normal((T, N, I)), dtype=tinynet.float32, device="cuda", requires_grad=True)
    out, _ = gru(x)
    (gx,) = tinynet.autograd.grad(out.sum(), [x], create_graph=True)
    assert "CudnnRNN" in _op_types(out)
    with pytest.raises(errors.AutogradError):
        gx.sum().backward()


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_repeated_backward_through_one_graph_gives_the_same_gradients(cudnn_on, name):
    """cuDNN's backward writes into the reserve space; a second backward through the same graph
    (retain_graph=True, as gradcheck does once per Jacobian row) gave zeros in dx before each
    backward got its own copy (tests/test_functional_torch.py on an H200, 2026-11-28)."""
    rnn = getattr(nn, name)(I, H, num_layers=2).to("cuda").double()
    x = tinynet.tensor(rng(7).standard_normal((T, N, I)), dtype=tinynet.float64, device="cuda", requires_grad=True)
    out, _ = rnn(x)
    assert "CudnnRNN" in _op_types(out)
    w = tinynet.tensor(rng(8).standard_normal(out.shape), dtype=tinynet.float64, device="cuda")
    grads = [tinynet.autograd.grad((out * w).sum(), [x], retain_graph=True)[0].numpy(force=True) for _ in range(3)]
    assert numpy.abs(grads[0]).max() > 0
    numpy.testing.assert_array_equal(grads[1], grads[0])
    numpy.testing.assert_array_equal(grads[2], grads[0])


@pytest.mark.parametrize("use_cudnn", [True, False])
def test_language_model_step_is_captured_in_a_cuda_graph(monkeypatch, use_cudnn):
    """A whole training step of an Embedding -> 2-layer LSTM -> Linear model, compiled with
    ``tinynet.compile(fullgraph=True)`` (which raises if the step cannot be captured), through
    cuDNN and through tinynet's one-op path, gives the eager step's parameters."""
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", use_cudnn)
    monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", False)
    V, W = 11, 16
    g = rng(3)
    xs = [tinynet.tensor(g.integers(0, V, (T, N)), device="cuda") for _ in range(5)]
    ys = [tinynet.tensor(g.integers(0, V, (T, N)), device="cuda") for _ in range(5)]
    runs = []
    for compiled in (False, True):
        tinynet.manual_seed(0)
        model = nn.ModuleList([nn.Embedding(V, W), nn.LSTM(W, W, 2), nn.Linear(W, V)]).to("cuda")
        opt = tinynet.optim.SGD(model.parameters(), lr=0.5)

        def step(x, y, model=model, opt=opt):
            out, _ = model[1](model[0](x))
            loss = nn.functional.cross_entropy(model[2](out).reshape(-1, V), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()

        run = tinynet.compile(step, fullgraph=True) if compiled else step
        before = cudnn_rnn.stats["fwd"]
        losses = [float(run(x, y).item()) for x, y in zip(xs, ys)]
        assert (cudnn_rnn.stats["fwd"] > before) == use_cudnn
        runs.append((losses, [p.detach().cpu().numpy() for p in model.parameters()]))
    (eager_losses, eager_params), (graph_losses, graph_params) = runs
    numpy.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-6)
    for a, b in zip(graph_params, eager_params):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
