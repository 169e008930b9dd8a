"""The LSTM layer as one op (tinynet.ops.rnn_sequence.LSTMSequence), on every backend (NumPy,
and CuPy with the fused cell kernels): forward and backward against PyTorch's LSTM math
written step by step, float64 finite differences, second derivatives, the per-step path, and
nn.LSTM taking it."""
import pytest
from helpers import TOLERANCE, assert_close, check_sequence_op, graph_ops, recurrence_arrays, rng

import tinynet
from tinynet import nn
from tinynet.ops import rnn as R
from tinynet.ops.rnn_sequence import LSTMSequence

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("own_rnn_path")


T, N, H = 5, 3, 4


def _arrays(seed, bias=True):
    return recurrence_arrays(seed, 4, states=2, bias=bias, T=T, N=N, H=H)


def _torch_lstm(xg, h, c, w, b, reverse):
    """PyTorch's LSTM recurrence on the input projection, one step at a time."""
    outs = [None] * xg.shape[0]
    order = range(xg.shape[0] - 1, -1, -1) if reverse else range(xg.shape[0])
    for t in order:
        a = xg[t] + h @ w.T + (b if b is not None else 0)
        i, f, g, o = a.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs[t] = h
    return torch.stack(outs), h, c


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("grads", ["all", "out only", "states only"])
def test_matches_pytorch_forward_and_backward(dtype, reverse, bias, grads, device):
    arrays = [a.astype(dtype) for a in _arrays(1, bias)]
    ours = [tinynet.tensor(a, requires_grad=True, device=device) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    op = LSTMSequence(reverse)
    got = op.apply(*ours, *([None] if not bias else []))
    assert op.gpu_path == (tinynet.device(device).type == "cuda")  # the fused kernels on the GPU
    want = _torch_lstm(*ref, *([None] if not bias else []), reverse)
    used = {"all": (0, 1, 2), "out only": (0,), "states only": (1, 2)}[grads]
    check_sequence_op(got, want, ours, ref, used, dtype, *TOLERANCE[dtype], names=("out", "h_n", "c_n"))


@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_float64(reverse, device):
    """Central finite differences in float64 for every input, through all three outputs."""
    inputs = tuple(tinynet.tensor(a, requires_grad=True, device=device) for a in _arrays(3))
    tinynet.autograd.gradcheck(lambda *ts: LSTMSequence(reverse).apply(*ts), inputs)


@pytest.mark.parametrize("reverse", [False, True])
def test_second_order(reverse, device):
    """Twice differentiable: the create_graph backward recomputes the recurrence with tinynet's ops."""
    g = rng(4)
    arrays = [g.standard_normal((3, 2, 8)), g.standard_normal((2, 2)), g.standard_normal((2, 2)),
              g.standard_normal((8, 2)) * 0.5, g.standard_normal(8)]
    inputs = tuple(tinynet.tensor(a, requires_grad=True, device=device) for a in arrays)
    fn = lambda *ts: LSTMSequence(reverse).apply(*ts)  # noqa: E731
    tinynet.autograd.gradcheck(fn, inputs)
    tinynet.autograd.gradgradcheck(fn, inputs)


def test_same_as_the_per_step_path(device):
    """The one-op recurrence gives the values and gradients of the per-step ops (LSTMGates)."""
    x, h0, c0, w, b = _arrays(5)

    def per_step(xg, h, c, w_hh, b_hh):
        outs = []
        for t in range(xg.shape[0]):
            h, c = R.LSTMGates().apply(xg[t], R._linear(h, w_hh, b_hh), c)
            outs.append(h)
        return tinynet.stack(outs), h, c

    results = []
    for fn in (lambda *ts: LSTMSequence().apply(*ts), per_step):
        ts = [tinynet.tensor(a, requires_grad=True, device=device) for a in (x, h0, c0, w, b)]
        out, hn, cn = fn(*ts)
        (out.sum() * 0.5 + (hn * cn).sum()).backward()
        results.append([out, hn, cn] + [t.grad for t in ts])
    for a, b in zip(*results):
        assert_close(a, b, 1e-12, 1e-12)


def test_nn_lstm_records_one_op_per_layer(device):
    lstm = nn.LSTM(3, 4, num_layers=2).to(device)
    out, (hn, cn) = lstm(tinynet.randn(6, 2, 3, device=device))
    names = [type(op).__name__ for op in graph_ops(out)]
    assert names.count("LSTMSequence") == 2 and "LSTMGates" not in names
    ref = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    ours.to(device)
    x = rng(6).standard_normal((2, 5, 3))
    tx, rx = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    (a, (ha, ca)), (b, (hb, cb)) = ours(tx), ref(rx)
    for u, v in ((a, b), (ha, hb), (ca, cb)):
        assert_close(u, v, 1e-10, 1e-12)
    ((a * a).sum() + ha.sum() + 2 * ca.sum()).backward()
    ((b * b).sum() + hb.sum() + 2 * cb.sum()).backward()
    assert_close(tx.grad, rx.grad, 1e-10, 1e-12)
    for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, 1e-10, 1e-12, what=name)


@pytest.mark.gpu
def test_lstm_under_bfloat16_autocast_takes_the_one_op_path():
    """autocast gives the layer a bfloat16 input projection: the op widens it to float32 and
    runs the fused kernels, close to the float32 layer."""
    lstm = nn.LSTM(8, 16, num_layers=2).to("cuda")
    x = tinynet.tensor(rng(8).standard_normal((7, 3, 8)), dtype=tinynet.float32, device="cuda")
    ref, _ = lstm(x)
    with tinynet.autocast("cuda", dtype=tinynet.bfloat16):
        out, (hn, cn) = lstm(x)
    assert [type(op).__name__ for op in graph_ops(out)].count("LSTMSequence") == 2
    assert_close(out.float(), ref, 3e-2, 3e-2)
    out.float().sum().backward()
    assert all(p.grad is not None and bool(tinynet.isfinite(p.grad).all()) for p in lstm.parameters())
