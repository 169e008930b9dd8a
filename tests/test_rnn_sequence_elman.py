"""The Elman RNN layer as one op on the CPU (tinynet.ops.rnn_sequence_elman.RNNSequence): forward
and backward against PyTorch's RNN math written step by step, float64 finite differences, second
derivatives, the per-step ops' bits (byte for byte), and nn.RNN taking it and matching torch.nn.RNN."""
import numpy
import pytest
from helpers import TOLERANCE, assert_close, check_rnn_module, check_sequence_op, gradcheck, recurrence_arrays, rng

import tinynet
from tinynet import nn
from tinynet.ops import rnn as R
from tinynet.ops.activation import relu, tanh
from tinynet.ops.rnn_sequence_elman import RNNSequence
from tinynet.ops.split import unbind

torch = pytest.importorskip("torch")

# (the CPU default: nn.RNN/nn.GRU on the GPU record per-step ops; these ops run on NumPy arrays)
pytestmark = pytest.mark.usefixtures("own_rnn_path", "cpu_default_device")


T, N, H = 5, 3, 4


def _arrays(seed, bias=True, T=T, N=N, H=H):
    return recurrence_arrays(seed, 1, bias=bias, T=T, N=N, H=H)


def _torch_rnn(xg, h, w, b, nonlinearity, reverse):
    """PyTorch's Elman recurrence on the input projection, one step at a time."""
    act = torch.tanh if nonlinearity == "tanh" else torch.relu
    outs = [None] * xg.shape[0]
    order = range(xg.shape[0] - 1, -1, -1) if reverse else range(xg.shape[0])
    for t in order:
        h = act(xg[t] + h @ w.T + (b if b is not None else 0))
        outs[t] = h
    return torch.stack(outs), h


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("grads", ["all", "out only", "h_n only"])
def test_matches_pytorch_forward_and_backward(dtype, nonlinearity, reverse, bias, grads):
    arrays = [a.astype(dtype) for a in _arrays(1, bias)]
    ours = [tinynet.tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    got = RNNSequence(nonlinearity, reverse).apply(*ours, *([None] if not bias else []))
    want = _torch_rnn(*ref, *([None] if not bias else []), nonlinearity, reverse)
    used = {"all": (0, 1), "out only": (0,), "h_n only": (1,)}[grads]
    check_sequence_op(got, want, ours, ref, used, dtype, *TOLERANCE[dtype])


def test_some_inputs_without_gradient():
    """Only the inputs that need one get a gradient (h0 and the bias left out here)."""
    x, h0, w, b = _arrays(7)
    ours = [tinynet.tensor(x, requires_grad=True), tinynet.tensor(h0), tinynet.tensor(w, requires_grad=True),
            tinynet.tensor(b)]
    ref = [torch.tensor(x, requires_grad=True), torch.tensor(h0), torch.tensor(w, requires_grad=True),
           torch.tensor(b)]
    out, hn = RNNSequence().apply(*ours)
    (out.sum() + (hn * hn).sum()).backward()
    o, h = _torch_rnn(*ref, "tanh", False)
    (o.sum() + (h * h).sum()).backward()
    assert ours[1].grad is None and ours[3].grad is None
    assert_close(ours[0].grad, ref[0].grad, 1e-12, 1e-12)
    assert_close(ours[2].grad, ref[2].grad, 1e-12, 1e-12)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gradcheck_float64(nonlinearity, reverse, bias):
    """Central finite differences in float64 for every input, through both outputs."""
    inputs = tuple(tinynet.tensor(a, requires_grad=True) for a in _arrays(3, bias))
    fn = (lambda *ts: RNNSequence(nonlinearity, reverse).apply(*ts)) if bias else \
        (lambda *ts: RNNSequence(nonlinearity, reverse).apply(*ts, None))
    tinynet.autograd.gradcheck(fn, inputs)


def test_helpers_gradcheck_of_the_output():
    """The same with the suite's helper (finite differences of sum(out * r), float64)."""
    gradcheck(lambda *ts: RNNSequence().apply(*ts)[0], _arrays(8, T=4, N=2, H=3))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("reverse", [False, True])
def test_second_order(nonlinearity, reverse):
    """Twice differentiable: the create_graph backward recomputes the recurrence with tinynet's ops."""
    inputs = tuple(tinynet.tensor(a, requires_grad=True) for a in _arrays(4, T=3, N=2, H=2))
    fn = lambda *ts: RNNSequence(nonlinearity, reverse).apply(*ts)  # noqa: E731
    tinynet.autograd.gradcheck(fn, inputs)
    tinynet.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("T,N,H,bias", [(35, 20, 200, True), (13, 3, 7, False), (4, 1, 650, True)])
def test_same_bits_as_the_per_step_ops(dtype, nonlinearity, reverse, T, N, H, bias):
    """Values and gradients byte for byte those of the per-step ops the layer recorded before
    (Linear of the state, add of the input projection, tanh/relu; the engine summing the
    per-step weight and bias gradients, last step first)."""
    g = rng(5)
    arrays = [g.standard_normal((T, N, H)), g.standard_normal((N, H)), g.standard_normal((H, H)) / H ** 0.5,
              g.standard_normal(H)]
    arrays = [a.astype(dtype) for a in arrays]
    r_out, r_hn = g.standard_normal((T, N, H)).astype(dtype), g.standard_normal((N, H)).astype(dtype)
    act = tanh if nonlinearity == "tanh" else relu

    def per_step(xg, h, w_hh, b_hh):  # as tinynet.ops.rnn._direction recorded it (unbind keeps -0.0)
        steps, outs = unbind(xg, 0), [None] * T
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            h = act(steps[t] + R._linear(h, w_hh, b_hh))
            outs[t] = h
        return tinynet.stack(outs), h

    results = []
    for fn in (lambda *ts: RNNSequence(nonlinearity, reverse).apply(*ts), per_step):
        ts = [tinynet.tensor(a, requires_grad=True) for a in arrays]
        if not bias:
            ts[3] = None
        out, hn = fn(*ts)
        ((out * tinynet.tensor(r_out)).sum() + (hn * tinynet.tensor(r_hn)).sum()).backward()
        results.append([out.detach().numpy(), hn.detach().numpy()] + [t.grad.numpy() for t in ts if t is not None])
    for k, (a, b) in enumerate(zip(*results)):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), f"array {k} differs: max {numpy.abs(a - b).max()}"


def test_long_sequence_weight_gradient_blocks():
    """More steps than weight-gradient blocks, both directions: dW_hh summed over every block."""
    for reverse in (False, True):
        arrays = _arrays(9, T=13, N=2, H=3)
        ours = [tinynet.tensor(a, requires_grad=True) for a in arrays]
        ref = [torch.tensor(a, requires_grad=True) for a in arrays]
        out, hn = RNNSequence("tanh", reverse).apply(*ours)
        (out * out).sum().backward()
        o, _ = _torch_rnn(*ref, "tanh", reverse)
        (o * o).sum().backward()
        for a, b in zip(ours, ref):
            assert_close(a.grad, b.grad, 1e-12, 1e-12)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("num_layers,bidirectional,batch_first,bias,given_h0", [
    (1, False, False, True, False),
    (2, False, False, True, True),
    (2, True, True, True, True),
    (3, True, False, False, False),
])
def test_nn_rnn_matches_torch(nonlinearity, num_layers, bidirectional, batch_first, bias, given_h0):
    kw = dict(num_layers=num_layers, nonlinearity=nonlinearity, bias=bias, bidirectional=bidirectional,
              batch_first=batch_first)
    ref = torch.nn.RNN(3, 4, **kw).double()
    ours = nn.RNN(3, 4, **kw).double()
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    check_rnn_module(ours, ref, batch_first, given_h0, "RNNSequence", ("Tanh", "ReLU"))


def test_float16_keeps_the_per_step_ops():
    """Only float32/float64 NumPy arrays take the op; other dtypes keep the per-step path."""
    xg = numpy.zeros((2, 1, 3), numpy.float16)
    assert not RNNSequence.runs_on(xg, xg[0], numpy.zeros((3, 3), numpy.float16), None)
    assert RNNSequence.runs_on(xg.astype("float32"), xg[0].astype("float32"), numpy.zeros((3, 3), "float32"), None)
    assert not RNNSequence.runs_on(xg.astype("float32"), xg[0].astype("float64"), numpy.zeros((3, 3), "float32"),
                                   None)


def test_no_grad_saves_nothing():
    with tinynet.no_grad():
        out, hn = RNNSequence().apply(*[tinynet.tensor(a) for a in _arrays(11)])
    assert out.grad_fn is None and not out.requires_grad
    want, _ = _torch_rnn(*[torch.tensor(a) for a in _arrays(11)], "tanh", False)
    assert_close(out, want, 1e-12, 1e-12)
