"""The GRU layer as one op on the CPU (tinynet.ops.rnn_sequence_gru.GRUSequence): forward and
backward against PyTorch's GRU math written step by step, float64 finite differences, second
derivatives, the per-step path (GRUGates), and nn.GRU taking it and matching torch.nn.GRU."""
import numpy
import pytest
from helpers import TOLERANCE, assert_close, check_rnn_module, check_sequence_op, gradcheck, recurrence_arrays, rng

import tinynet
from tinynet import nn
from tinynet.ops import rnn as R
from tinynet.ops.rnn_sequence_gru import GRUSequence

torch = pytest.importorskip("torch")

# (the CPU default: nn.RNN/nn.GRU on the GPU record per-step ops; these ops run on NumPy arrays)
pytestmark = pytest.mark.usefixtures("own_rnn_path", "cpu_default_device")


T, N, H = 5, 3, 4


def _arrays(seed, bias=True, T=T, N=N, H=H):
    return recurrence_arrays(seed, 3, bias=bias, T=T, N=N, H=H)


def _torch_gru(xg, h, w, b, reverse):
    """PyTorch's GRU recurrence on the input projection, one step at a time."""
    outs = [None] * xg.shape[0]
    order = range(xg.shape[0] - 1, -1, -1) if reverse else range(xg.shape[0])
    for t in order:
        a = h @ w.T + (b if b is not None else 0)
        x_r, x_z, x_n = xg[t].chunk(3, dim=-1)
        a_r, a_z, a_n = a.chunk(3, dim=-1)
        r, z = torch.sigmoid(x_r + a_r), torch.sigmoid(x_z + a_z)
        n = torch.tanh(x_n + r * a_n)
        h = (1 - z) * n + z * h
        outs[t] = h
    return torch.stack(outs), h


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("grads", ["all", "out only", "h_n only"])
def test_matches_pytorch_forward_and_backward(dtype, reverse, bias, grads):
    arrays = [a.astype(dtype) for a in _arrays(1, bias)]
    ours = [tinynet.tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    got = GRUSequence(reverse).apply(*ours, *([None] if not bias else []))
    want = _torch_gru(*ref, *([None] if not bias else []), reverse)
    used = {"all": (0, 1), "out only": (0,), "h_n only": (1,)}[grads]
    check_sequence_op(got, want, ours, ref, used, dtype, *TOLERANCE[dtype])


def test_some_inputs_without_gradient():
    """Only the inputs that need one get a gradient (h0 and the bias left out here)."""
    x, h0, w, b = _arrays(7)
    ours = [tinynet.tensor(x, requires_grad=True), tinynet.tensor(h0), tinynet.tensor(w, requires_grad=True),
            tinynet.tensor(b)]
    ref = [torch.tensor(x, requires_grad=True), torch.tensor(h0), torch.tensor(w, requires_grad=True),
           torch.tensor(b)]
    out, hn = GRUSequence().apply(*ours)
    (out.sum() + (hn * hn).sum()).backward()
    o, h = _torch_gru(*ref, False)
    (o.sum() + (h * h).sum()).backward()
    assert ours[1].grad is None and ours[3].grad is None
    assert_close(ours[0].grad, ref[0].grad, 1e-12, 1e-12)
    assert_close(ours[2].grad, ref[2].grad, 1e-12, 1e-12)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gradcheck_float64(reverse, bias):
    """Central finite differences in float64 for every input, through both outputs."""
    inputs = tuple(tinynet.tensor(a, requires_grad=True) for a in _arrays(3, bias))
    fn = (lambda *ts: GRUSequence(reverse).apply(*ts)) if bias else \
        (lambda *ts: GRUSequence(reverse).apply(*ts, None))
    tinynet.autograd.gradcheck(fn, inputs)


def test_helpers_gradcheck_of_the_output():
    """The same with the suite's helper (finite differences of sum(out * r), float64)."""
    gradcheck(lambda *ts: GRUSequence().apply(*ts)[0], _arrays(8, T=4, N=2, H=3))


@pytest.mark.parametrize("reverse", [False, True])
def test_second_order(reverse):
    """Twice differentiable: the create_graph backward recomputes the recurrence with tinynet's ops."""
    inputs = tuple(tinynet.tensor(a, requires_grad=True) for a in _arrays(4, T=3, N=2, H=2))
    fn = lambda *ts: GRUSequence(reverse).apply(*ts)  # noqa: E731
    tinynet.autograd.gradcheck(fn, inputs)
    tinynet.autograd.gradgradcheck(fn, inputs)


def test_same_as_the_per_step_path():
    """The one-op recurrence gives the values and gradients of the per-step ops (GRUGates)."""
    arrays = _arrays(5)

    def per_step(xg, h, w_hh, b_hh):
        outs = []
        for t in range(xg.shape[0]):
            h = R.GRUGates().apply(xg[t], R._linear(h, w_hh, b_hh), h)
            outs.append(h)
        return tinynet.stack(outs), h

    results = []
    for fn in (lambda *ts: GRUSequence().apply(*ts), per_step):
        ts = [tinynet.tensor(a, requires_grad=True) for a in arrays]
        out, hn = fn(*ts)
        (out.sum() * 0.5 + (hn * hn).sum()).backward()
        results.append([out, hn] + [t.grad for t in ts])
    for a, b in zip(*results):
        assert_close(a, b, 1e-12, 1e-12)


def test_long_sequence_weight_gradient_blocks():
    """More steps than weight-gradient blocks, both directions: dW_hh summed over every block."""
    for reverse in (False, True):
        arrays = _arrays(9, T=13, N=2, H=3)
        ours = [tinynet.tensor(a, requires_grad=True) for a in arrays]
        ref = [torch.tensor(a, requires_grad=True) for a in arrays]
        out, hn = GRUSequence(reverse).apply(*ours)
        (out * out).sum().backward()
        o, _ = _torch_gru(*ref, reverse)
        (o * o).sum().backward()
        for a, b in zip(ours, ref):
            assert_close(a.grad, b.grad, 1e-12, 1e-12)


@pytest.mark.parametrize("num_layers,bidirectional,batch_first,bias,given_h0", [
    (1, False, False, True, False),
    (2, False, False, True, True),
    (2, True, True, True, True),
    (3, True, False, False, False),
    (2, True, True, False, True),
])
def test_nn_gru_matches_torch(num_layers, bidirectional, batch_first, bias, given_h0):
    ref = torch.nn.GRU(3, 4, num_layers=num_layers, bias=bias, bidirectional=bidirectional,
                       batch_first=batch_first).double()
    ours = nn.GRU(3, 4, num_layers=num_layers, bias=bias, bidirectional=bidirectional,
                  batch_first=batch_first).double()
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    check_rnn_module(ours, ref, batch_first, given_h0, "GRUSequence", ("GRUGates",))


def test_nn_gru_float32_and_unbatched():
    ref = torch.nn.GRU(3, 5, num_layers=2)
    ours = nn.GRU(3, 5, num_layers=2)
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    x = rng(10).standard_normal((6, 3)).astype("float32")  # unbatched (L, H_in)
    tx, rx = tinynet.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (a, ha), (b, hb) = ours(tx), ref(rx)
    assert a.dtype == numpy.float32 and tuple(a.shape) == (6, 5) and tuple(ha.shape) == (2, 5)
    assert_close(a, b, *TOLERANCE["float32"])
    assert_close(ha, hb, *TOLERANCE["float32"])
    (a.sum() + ha.sum()).backward()
    (b.sum() + hb.sum()).backward()
    assert_close(tx.grad, rx.grad, *TOLERANCE["float32"])
    for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, *TOLERANCE["float32"], what=name)


def test_no_grad_saves_nothing():
    with tinynet.no_grad():
        out, hn = GRUSequence().apply(*[tinynet.tensor(a) for a in _arrays(11)])
    assert out.grad_fn is None and not out.requires_grad
    want, _ = _torch_gru(*[torch.tensor(a) for a in _arrays(11)], False)
    assert_close(out, want, 1e-12, 1e-12)
