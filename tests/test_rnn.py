"""Recurrent layers and cells (nn.RNN/LSTM/GRU, nn.RNNCell/LSTMCell/GRUCell) and
nn.utils.rnn.pad_sequence against PyTorch, with state dicts copied both ways."""
import numpy
import pytest
from helpers import TOLERANCE, assert_close, rng

import tinynet
from tinynet import errors, nn
from tinynet.ops import rnn as R

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("own_rnn_path")


L, N, H_IN, H = 4, 3, 5, 4
DTYPES = ("float32", "float64")
TOL = TOLERANCE
TORCH_DT = {"float32": torch.float32, "float64": torch.float64}


def _pair(name, device, dtype, *args, **kwargs):
    """A PyTorch layer and a tinynet one with its state_dict, both in ``dtype``."""
    ref = getattr(torch.nn, name)(*args, **kwargs).to(TORCH_DT[dtype])
    ours = getattr(nn, name)(*args, **kwargs)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    return ours.to(device=device, dtype=dtype), ref


def _leaves(arrays, device, dtype):
    ours = [tinynet.tensor(a.astype(dtype), device=device, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    return ours, ref


def _backward_both(outs, refs, dtype):
    """``sum(out * r)`` over every output, backward in both libraries."""
    g = rng(7)
    total_o, total_r = 0, 0
    for o, t in zip(outs, refs):
        r = g.standard_normal(tuple(t.shape)).astype(dtype)
        total_o = total_o + (o * tinynet.tensor(r, device=o.device)).sum()
        total_r = total_r + (t * torch.tensor(r)).sum()
    total_o.backward()
    total_r.backward()


def _compare_grads(ours_mod, ref_mod, ours_in, ref_in, dtype):
    rtol, atol = TOL[dtype]
    for i, (a, b) in enumerate(zip(ours_in, ref_in)):
        assert a.grad is not None, f"input {i} got no gradient"
        assert a.grad.dtype == a.dtype
        assert_close(a.grad, b.grad, rtol, atol, what=f"gradient of input {i} ({dtype})")
    named = dict(ref_mod.named_parameters())
    for k, p in ours_mod.named_parameters():
        assert p.grad is not None, f"{k} got no gradient"
        assert_close(p.grad, named[k].grad, rtol, atol, what=f"gradient of {k} ({dtype})")


LAYER_CASES = [
    ("RNN", {}, "batched", False),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, "batched", True),
    ("RNN", {"bidirectional": True, "batch_first": True}, "batched", True),
    ("RNN", {"bias": False}, "unbatched", True),
    ("LSTM", {}, "batched", False),
    ("LSTM", {"num_layers": 2}, "batched", True),
    ("LSTM", {"bidirectional": True}, "batched", True),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, "batched", True),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, "unbatched", False),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}, "batched", True),
    ("LSTM", {"bias": False, "proj_size": 3}, "unbatched", True),
    ("GRU", {}, "batched", False),
    ("GRU", {"num_layers": 2, "bidirectional": True}, "batched", True),
    ("GRU", {"batch_first": True, "bias": False}, "batched", True),
    ("GRU", {"num_layers": 2}, "unbatched", True),
]


@pytest.mark.parametrize("name,kwargs,batch,with_state", LAYER_CASES,
                         ids=[f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[1].items()) or 'default'}-{c[2]}"
                              f"-{'h0' if c[3] else 'noh0'}" for c in LAYER_CASES])
def test_layer_matches_pytorch(device, name, kwargs, batch, with_state):
    g = rng(1)
    D = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    h_out = kwargs.get("proj_size") or H
    batched = batch == "batched"
    x_shape = ((N, L, H_IN) if kwargs.get("batch_first") else (L, N, H_IN)) if batched else (L, H_IN)
    lead = (layers * D, N) if batched else (layers * D,)
    arrays = [g.standard_normal(x_shape)]
    if with_state:
        arrays.append(g.standard_normal(lead + (h_out,)))
        if name == "LSTM":
            arrays.append(g.standard_normal(lead + (H,)))
    for dt in DTYPES:
        ours, ref = _pair(name, device, dt, H_IN, H, **kwargs)
        xs, ts = _leaves(arrays, device, dt)
        state = lambda s: None if len(s) == 1 else (tuple(s[1:]) if name == "LSTM" else s[1])
        out, hid = ours(xs[0], state(xs))
        ref_out, ref_hid = ref(ts[0], state(ts))
        hid, ref_hid = (hid, ref_hid) if name == "LSTM" else ((hid,), (ref_hid,))
        rtol, atol = TOL[dt]
        for a, b, what in zip((out,) + tuple(hid), (ref_out,) + tuple(ref_hid), ("output", "h_n", "c_n")):
            assert a.dtype == numpy.dtype(dt) and a.device == device
            assert_close(a, b, rtol, atol, what=f"{what} ({dt})")
        _backward_both((out,) + tuple(hid), (ref_out,) + tuple(ref_hid), dt)
        _compare_grads(ours, ref, xs, ts, dt)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_parameters_and_state_dict_both_ways(device, name):
    kwargs = {"num_layers": 2, "bidirectional": True}
    if name == "LSTM":
        kwargs["proj_size"] = 2
    ref = getattr(torch.nn, name)(H_IN, H, **kwargs).double()
    ours = getattr(nn, name)(H_IN, H, **kwargs).to(device)
    # PyTorch's names, shapes and order; init within U(-1/sqrt(H), 1/sqrt(H)), float32 by default
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    bound = 1 / H ** 0.5
    for k, p in ours.named_parameters():
        assert p.dtype == tinynet.float32 and p.requires_grad
        arr = p.detach().numpy(force=True)
        assert arr.min() >= -bound and arr.max() <= bound and arr.std() > 0, k
    assert [len(w) for w in ours.all_weights] == [len(w) for w in ref.all_weights]
    assert repr(ours) == repr(ref)
    # tinynet -> PyTorch: the same outputs
    ours.double()
    ref.load_state_dict({k: torch.tensor(v.detach().numpy(force=True)) for k, v in ours.state_dict().items()})
    x = rng(2).standard_normal((L, N, H_IN))
    out = ours(tinynet.tensor(x, device=device))[0]
    assert_close(out, ref(torch.tensor(x))[0], *TOLERANCE["float64"], what="output after tinynet -> torch")


CELL_CASES = [
    ("RNNCell", {}, True, True), ("RNNCell", {"nonlinearity": "relu"}, True, False),
    ("RNNCell", {"bias": False}, False, True),
    ("LSTMCell", {}, True, True), ("LSTMCell", {}, True, False), ("LSTMCell", {"bias": False}, False, True),
    ("GRUCell", {}, True, True), ("GRUCell", {}, False, False), ("GRUCell", {"bias": False}, True, True),
]


@pytest.mark.parametrize("name,kwargs,batched,with_state", CELL_CASES)
def test_cell_matches_pytorch(device, name, kwargs, batched, with_state):
    g = rng(3)
    lead = (N,) if batched else ()
    arrays = [g.standard_normal(lead + (H_IN,))]
    if with_state:
        arrays += [g.standard_normal(lead + (H,)) for _ in range(2 if name == "LSTMCell" else 1)]
    for dt in DTYPES:
        ours, ref = _pair(name, device, dt, H_IN, H, **kwargs)
        assert repr(ours) == repr(ref)
        xs, ts = _leaves(arrays, device, dt)
        state = lambda s: None if len(s) == 1 else (tuple(s[1:]) if name == "LSTMCell" else s[1])
        out, ref_out = ours(xs[0], state(xs)), ref(ts[0], state(ts))
        out, ref_out = (out, ref_out) if name == "LSTMCell" else ((out,), (ref_out,))
        for a, b in zip(out, ref_out):
            assert_close(a, b, *TOL[dt], what=f"{name} output ({dt})")
        _backward_both(out, ref_out, dt)
        _compare_grads(ours, ref, xs, ts, dt)


def _weights(g, mode, layers, D, h_in, h, proj=0):
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    arrays = []
    for layer in range(layers):
        for _ in range(D):
            size_in = h_in if layer == 0 else (proj or h) * D
            shapes = [(gates * h, size_in), (gates * h, proj or h), (gates * h,), (gates * h,)]
            shapes += [(proj, h)] if proj else []
            arrays += [g.standard_normal(s) * 0.5 for s in shapes]
    return arrays


@pytest.mark.parametrize("mode,proj", [("RNN_TANH", 0), ("RNN_RELU", 0), ("LSTM", 0), ("LSTM", 1), ("GRU", 0)])
def test_gradcheck_tiny(device, mode, proj):
    """Finite differences in float64 through two bidirectional layers: input, states, every weight."""
    g = rng(4)
    layers, D, h_in, h, n, steps = 2, 2, 2, 2, 2, 3
    x = g.standard_normal((steps, n, h_in))
    h0 = g.standard_normal((layers * D, n, proj or h))
    c0 = g.standard_normal((layers * D, n, h)) if mode == "LSTM" else None
    ws = _weights(g, mode, layers, D, h_in, h, proj)
    per = 5 if proj else 4
    inputs = [tinynet.tensor(a, device=device, requires_grad=True) for a in [x, h0] + ([c0] if c0 is not None else [])
              + ws]
    first = 3 if c0 is not None else 2

    def fn(*ts):
        w = ts[first:]
        weights = [tuple(w[k * per:(k + 1) * per]) + ((None,) if not proj else ()) for k in range(layers * D)]
        out, hn, cn = R.recurrent(mode, ts[0], ts[1], ts[2] if c0 is not None else None, weights, layers, 0.0,
                                  True, True)
        return (out, hn) if cn is None else (out, hn, cn)

    tinynet.autograd.gradcheck(fn, tuple(inputs))


@pytest.mark.parametrize("which", ["lstm", "gru"])
def test_gate_ops_second_order(device, which):
    """The fused gate ops are twice differentiable (their create_graph backward recomputes
    the activations with tinynet's ops)."""
    g = rng(5)
    G = 4 if which == "lstm" else 3
    arrays = [g.standard_normal((2, G * 2)), g.standard_normal((2, G * 2)), g.standard_normal((2, 2))]
    inputs = tuple(tinynet.tensor(a, device=device, requires_grad=True) for a in arrays)
    fn = R.lstm_gates if which == "lstm" else R.gru_gates
    tinynet.autograd.gradcheck(fn, inputs)
    tinynet.autograd.gradgradcheck(fn, inputs)


def test_dropout_between_layers_only_in_training(device):
    x = rng(6).standard_normal((L, N, H_IN))
    ours, ref = _pair("LSTM", device, "float64", H_IN, H, num_layers=2, dropout=0.5)
    xt = tinynet.tensor(x, device=device)
    ours.eval()
    ref.eval()
    out = ours(xt)[0]
    assert_close(out, ref(torch.tensor(x))[0], *TOLERANCE["float64"], what="eval: dropout off")
    assert_close(ours(xt)[0], out, 0, 0, what="eval is deterministic")
    ours.train()
    tinynet.manual_seed(0)
    a = ours(xt)[0]
    b = ours(xt)[0]
    tinynet.manual_seed(0)
    c = ours(xt)[0]
    assert not numpy.allclose(a.detach().numpy(force=True), out.detach().numpy(force=True))
    assert not numpy.allclose(a.detach().numpy(force=True), b.detach().numpy(force=True))
    assert_close(a, c, 0, 0, what="the same seed gives the same masks")
    # p = 1 zeroes the second layer's whole input, deterministically: PyTorch agrees
    ours, ref = _pair("GRU", device, "float64", H_IN, H, num_layers=2, dropout=1.0)
    out, h_n = ours(xt)
    ref_out, ref_h = ref(torch.tensor(x))
    assert_close(out, ref_out, *TOLERANCE["float64"], what="dropout=1 output")
    assert_close(h_n, ref_h, *TOLERANCE["float64"], what="dropout=1 h_n")
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.RNN(2, 3, dropout=0.2)


def test_pad_sequence_matches_pytorch(device):
    from torch.nn.utils.rnn import pad_sequence as torch_pad
    g = rng(8)
    arrays = [g.standard_normal((n, 2, 3)) for n in (3, 1, 4)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            for dt in DTYPES:
                xs, ts = _leaves(arrays, device, dt)
                out = nn.utils.rnn.pad_sequence(xs, batch_first, -1.5, side)
                ref = torch_pad(ts, batch_first, -1.5, side)
                assert out.dtype == numpy.dtype(dt) and out.device == device
                assert_close(out, ref, 0, 0, what=f"pad_sequence {batch_first} {side}")
                _backward_both((out,), (ref,), dt)
                for a, b in zip(xs, ts):
                    assert_close(a.grad, b.grad, 0, 0, what="pad_sequence gradient")
    ints = [tinynet.tensor([1, 2, 3], device=device), tinynet.tensor([4], device=device)]
    out = nn.utils.rnn.pad_sequence(ints, batch_first=True)
    assert out.dtype == tinynet.int64
    assert out.tolist() == [[1, 2, 3], [4, 0, 0]]
    rows = nn.utils.rnn.pad_sequence(tinynet.ones(2, 3, device=device))  # a Tensor: the sequence of its rows
    assert rows.shape == (3, 2)


def test_packed_sequence_is_refused():
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(3, 2, H_IN), [3, 2])
    with pytest.raises(errors.ArgumentTypeError, match="PackedSequence"):
        nn.LSTM(H_IN, H)(packed)


def _raises(exc, builtin, fn, match=None):
    with pytest.raises(exc, match=match) as info:
        fn()
    assert isinstance(info.value, builtin)


BAD_CONFIG = [
    (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), errors.ArgumentError, ValueError, "nonlinearity"),
    (lambda: nn.RNNCell(3, 4, nonlinearity="gelu"), errors.ArgumentError, ValueError, "nonlinearity"),
    (lambda: nn.LSTM(3, 4, dropout=1.5), errors.ArgumentError, ValueError, "dropout"),
    (lambda: nn.GRU(3, 4, dropout=-0.1), errors.ArgumentError, ValueError, "dropout"),
    (lambda: nn.GRU(3, 4, dropout=True), errors.ArgumentError, ValueError, "dropout"),
    (lambda: nn.LSTM(3, 0), errors.ArgumentError, ValueError, "hidden_size"),
    (lambda: nn.LSTM(0, 4), errors.ArgumentError, ValueError, "input_size"),
    (lambda: nn.LSTM(3, 4.0), errors.ArgumentTypeError, TypeError, "hidden_size"),
    (lambda: nn.GRU(3, 4, num_layers=0), errors.ArgumentError, ValueError, "num_layers"),
    (lambda: nn.LSTM(3, 4, proj_size=4), errors.ArgumentError, ValueError, "proj_size"),
    (lambda: nn.LSTM(3, 4, proj_size=-1), errors.ArgumentError, ValueError, "proj_size"),
    (lambda: nn.RNN(3, 4, proj_size=2), errors.ArgumentError, ValueError, "proj_size"),
    (lambda: nn.GRU(3, 4, proj_size=2), errors.ArgumentError, ValueError, "proj_size"),
    (lambda: nn.LSTM(3, 4, bias=1), errors.ArgumentTypeError, TypeError, "bias"),
    (lambda: nn.LSTM(3, 4, batch_first="yes"), errors.ArgumentTypeError, TypeError, "batch_first"),
    (lambda: nn.GRUCell(3, -2), errors.ArgumentError, ValueError, "hidden_size"),
]


@pytest.mark.parametrize("make,exc,builtin,match", BAD_CONFIG)
def test_bad_configuration_raises(make, exc, builtin, match):
    _raises(exc, builtin, make, match)


def test_bad_inputs_raise(device):
    z = lambda *s, dtype=None: tinynet.zeros(*s, dtype=dtype, device=device)
    lstm = nn.LSTM(H_IN, H, num_layers=2).to(device)
    gru = nn.GRU(H_IN, H, bidirectional=True).to(device)
    cell = nn.LSTMCell(H_IN, H).to(device)
    gcell = nn.GRUCell(H_IN, H).to(device)
    cases = [
        (lambda: lstm(z(L, N, H_IN + 1)), errors.ShapeError, ValueError, "input_size"),
        (lambda: lstm(z(N, H_IN)[0]), errors.ShapeError, ValueError, "input of shape"),
        (lambda: lstm(z(1, L, N, H_IN)), errors.ShapeError, ValueError, "input of shape"),
        (lambda: lstm(z(0, N, H_IN)), errors.ShapeError, ValueError, "sequence length"),
        (lambda: lstm(z(L, N, H_IN, dtype=tinynet.float64)), errors.DTypeError, TypeError, "dtype"),
        (lambda: lstm(numpy.zeros((L, N, H_IN))), errors.ArgumentTypeError, TypeError, "Tensor"),
        (lambda: lstm(z(L, N, H_IN), z(2, N, H)), errors.ArgumentTypeError, TypeError, r"\(h_0, c_0\)"),
        (lambda: lstm(z(L, N, H_IN), (z(2, N, H), z(1, N, H))), errors.ShapeError, ValueError, "c_0"),
        (lambda: lstm(z(L, N, H_IN), (z(2, N + 1, H), z(2, N, H))), errors.ShapeError, ValueError, "h_0"),
        (lambda: lstm(z(L, N, H_IN), (z(2, H), z(2, H))), errors.ShapeError, ValueError, "3-D"),
        (lambda: lstm(z(L, H_IN), (z(2, N, H), z(2, N, H))), errors.ShapeError, ValueError, "2-D"),
        (lambda: lstm(z(L, N, H_IN), (z(2, N, H, dtype=tinynet.float64), z(2, N, H))), errors.DTypeError,
         TypeError, "dtype"),
        (lambda: gru(z(L, N, H_IN), z(1, N, H)), errors.ShapeError, ValueError, "h_0"),
        (lambda: gru(z(L, N, H_IN), z(2, N, H + 1)), errors.ShapeError, ValueError, "h_0"),
        (lambda: gru(z(L, N, H_IN), [z(2, N, H)]), errors.ArgumentTypeError, TypeError, "Tensor"),
        (lambda: cell(z(N, H_IN + 1)), errors.ShapeError, ValueError, "input_size"),
        (lambda: cell(z(N, H_IN), (z(N + 1, H), z(N, H))), errors.ShapeError, ValueError, r"hx\[0\]"),
        (lambda: cell(z(N, H_IN), z(N, H)), errors.ArgumentTypeError, TypeError, r"\(h, c\)"),
        (lambda: cell(z(H_IN), (z(1, H), z(1, H))), errors.ShapeError, ValueError, r"hx\[0\]"),
        (lambda: gcell(z(2, N, H_IN)), errors.ShapeError, ValueError, "input of shape"),
        (lambda: gcell(z(N, H_IN), z(N, 2 * H)), errors.ShapeError, ValueError, "hx"),
    ]
    for fn, exc, builtin, match in cases:
        _raises(exc, builtin, fn, match)
