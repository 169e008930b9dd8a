"""The host-side parts of the cuDNN RNN path, on the CPU: the descriptor arguments against
the cuDNN API reference's enum values, the weight-space packing against cuDNN's documented
linear-layer IDs (a NumPy RNN that reads its weights from a packed space *by ID*, as cuDNN
defines them, must give torch.nn.LSTM/GRU/RNN's outputs), the pack/unpack round trip, and
that the switch is off by default and leaves CPU layers on tinynet's own path."""
import os
import subprocess
import sys

import numpy
import pytest
from helpers import assert_close, rng

import tinynet
from tinynet import errors, nn
from tinynet.kernels import cudnn_rnn_layout as L
from tinynet.ops import rnn_cudnn

torch = pytest.importorskip("torch")


def test_descriptor_arguments_follow_the_api_reference():
    args, aux = L.rnn_descriptor_args("LSTM", "float32", 10, 20, 2, True, True, allow_tf32=False)
    # algo STANDARD=0, cellMode LSTM=2, biasMode DOUBLE=2, dirMode BIDIRECTIONAL=1, inputMode LINEAR=0,
    # dataType FLOAT=0, mathPrec FLOAT=0, mathType FMA=3, inputSize, hiddenSize, projSize=hidden, numLayers
    assert args == (0, 2, 2, 1, 0, 0, 0, 3, 10, 20, 20, 2)
    assert aux == (L.PADDED_IO_DISABLED if L.PACKED else L.PADDED_IO_ENABLED)
    args, _ = L.rnn_descriptor_args("GRU", "float64", 3, 4, 1, False, False, allow_tf32=True)
    assert args == (0, 3, 0, 0, 0, 1, 1, 0, 3, 4, 4, 1)  # DOUBLE data and math, default math
    args, _ = L.rnn_descriptor_args("RNN_RELU", "float16", 3, 4, 1, False, True, allow_tf32=False)
    assert args[1] == 0 and args[5:8] == (2, 0, 1)  # HALF data, FLOAT accumulation, tensor-op math
    assert L.rnn_descriptor_args("RNN_TANH", "float32", 3, 4, 1, False, True, True)[0][1] == 1
    assert L.math_type("float32", True) == L.DEFAULT_MATH  # TF32 allowed, as torch.backends.cudnn.allow_tf32
    assert L.data_layout() == (L.SEQ_MAJOR_PACKED if L.PACKED else L.SEQ_MAJOR_UNPACKED)


def test_state_dims_are_pytorch_h0_layout():
    assert L.state_dims(3, True, 5, 7) == ((6, 5, 7), (35, 7, 1))
    assert L.state_dims(1, False, 2, 4) == ((1, 2, 4), (8, 4, 1))


def test_param_names_and_shapes_match_pytorch_modules():
    for mode, cls, kw in (("LSTM", torch.nn.LSTM, {}), ("GRU", torch.nn.GRU, {}),
                          ("RNN_TANH", torch.nn.RNN, {}), ("RNN_RELU", torch.nn.RNN, {"nonlinearity": "relu"})):
        for layers, bidi, bias in ((1, False, True), (3, True, False), (2, True, True)):
            m = cls(5, 6, num_layers=layers, bidirectional=bidi, bias=bias, **kw)
            names = [n for n, _ in m.named_parameters()]
            assert L.param_names(layers, bidi, bias) == names
            assert L.param_shapes(mode, 5, 6, layers, bidi, bias) == [tuple(p.shape) for p in m.parameters()]


def _simulated_cudnn(mode, layers, bidi, bias, input_size, hidden):
    """A weight space laid out as cuDNN could (per pseudo-layer: the matrices by ID, then the
    biases by ID, then 3 elements of alignment padding; pseudo-layers in reverse order to be
    sure nothing relies on the order), as ``cudnnGetRNNWeightParams`` would report it."""
    g, d = L.GATES[mode], 2 if bidi else 1
    located, off = {}, 0
    for p in reversed(range(layers * d)):
        cols = input_size if p < d else d * hidden
        for lin in range(2 * g):
            n = hidden * (hidden if lin >= g else cols)
            located[(p, lin, "matrix")] = (off, n)
            off += n
        if bias:
            for lin in range(2 * g):
                located[(p, lin, "bias")] = (off, hidden)
                off += hidden
        off += 3
    return located, off


def _gate(space, located, p, lin, kind, hidden):
    off, n = located[(p, lin, kind)]
    run = space[off:off + n]
    return run.reshape(hidden, -1) if kind == "matrix" else run


def _reference(mode, space, located, layers, bidi, bias, x, h0, c0, hidden):
    """cuDNN's cell formulas (cudnnRNNMode_t), reading each matrix/bias by linLayerID:
    IDs 0..G-1 multiply the input, G..2G-1 the recurrent state; LSTM IDs (0,4) input gate,
    (1,5) forget, (2,6) new memory, (3,7) output; GRU (0,3) reset, (1,4) update, (2,5) new memory."""
    g, d = L.GATES[mode], 2 if bidi else 1
    sig = lambda a: 1 / (1 + numpy.exp(-a))  # noqa: E731
    T = x.shape[0]
    hn, cn = [], []
    for layer in range(layers):
        outs = []
        for dr in range(d):
            p = layer * d + dr
            W = [_gate(space, located, p, k, "matrix", hidden) for k in range(2 * g)]
            B = [_gate(space, located, p, k, "bias", hidden) if bias else 0 for k in range(2 * g)]
            lin = lambda k, v: v @ W[k].T + B[k]  # noqa: E731
            h, c = h0[p], c0[p] if c0 is not None else None
            ys = [None] * T
            for t in (range(T - 1, -1, -1) if dr else range(T)):
                xt = x[t]
                if mode == "LSTM":
                    i, f = sig(lin(0, xt) + lin(4, h)), sig(lin(1, xt) + lin(5, h))
                    gg, o = numpy.tanh(lin(2, xt) + lin(6, h)), sig(lin(3, xt) + lin(7, h))
                    c = f * c + i * gg
                    h = o * numpy.tanh(c)
                elif mode == "GRU":
                    r, z = sig(lin(0, xt) + lin(3, h)), sig(lin(1, xt) + lin(4, h))
                    n = numpy.tanh(lin(2, xt) + r * lin(5, h))
                    h = (1 - z) * n + z * h
                else:
                    a = lin(0, xt) + lin(1, h)
                    h = numpy.tanh(a) if mode == "RNN_TANH" else numpy.maximum(a, 0)
                ys[t] = h
            outs.append(numpy.stack(ys))
            hn.append(h)
            cn.append(c)
        x = numpy.concatenate(outs, axis=-1)
    return x, numpy.stack(hn), (numpy.stack(cn) if mode == "LSTM" else None)


CASES = [("LSTM", 1, False, True), ("LSTM", 2, True, False), ("GRU", 2, True, True), ("GRU", 1, False, False),
         ("RNN_TANH", 2, False, True), ("RNN_RELU", 1, True, True)]


@pytest.mark.parametrize("mode,layers,bidi,bias", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_packed_space_by_cudnn_ids_gives_pytorch_results(mode, layers, bidi, bias):
    I, H, T, N = 3, 4, 5, 2
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}.get(mode, torch.nn.RNN)
    kw = {"nonlinearity": "relu"} if mode == "RNN_RELU" else {}
    m = cls(I, H, num_layers=layers, bidirectional=bidi, bias=bias, **kw).double()
    params = [p.detach().numpy() for p in m.parameters()]
    located, size = _simulated_cudnn(mode, layers, bidi, bias, I, H)
    pack, unpack = L.pack_indices(L.weight_slots(mode, I, H, layers, bidi, bias), located,
                                  [p.size for p in params], size)
    flat = numpy.concatenate([p.ravel() for p in params] + [numpy.zeros(1)])
    space = flat[pack]
    g = rng(3)
    d = 2 if bidi else 1
    x = g.standard_normal((T, N, I))
    h0 = g.standard_normal((layers * d, N, H))
    c0 = g.standard_normal((layers * d, N, H)) if mode == "LSTM" else None
    y, hn, cn = _reference(mode, space, located, layers, bidi, bias, x, h0, c0, H)
    tx, th0 = torch.tensor(x), torch.tensor(h0)
    ry, rstate = m(tx, (th0, torch.tensor(c0)) if mode == "LSTM" else th0)
    assert_close(y, ry.detach().numpy(), 1e-12, 1e-12)
    if mode == "LSTM":
        assert_close(hn, rstate[0].detach().numpy(), 1e-12, 1e-12)
        assert_close(cn, rstate[1].detach().numpy(), 1e-12, 1e-12)
    else:
        assert_close(hn, rstate.detach().numpy(), 1e-12, 1e-12)
    # unpack is pack's inverse on the parameters; the padding reads the trailing zero
    assert numpy.array_equal(space[unpack], flat[:-1])
    pad = numpy.ones(size, dtype=bool)
    pad[unpack] = False
    assert pad.sum() == 3 * layers * d and (space[pad] == 0).all()


def test_pack_indices_refuses_answers_that_do_not_fit():
    slots = L.weight_slots("RNN_TANH", 2, 3, 1, False, True)
    numels = [9 - 3, 9, 3, 3]  # w_ih (3, 2), w_hh (3, 3), b_ih, b_hh
    good, size = _simulated_cudnn("RNN_TANH", 1, False, True, 2, 3)
    L.pack_indices(slots, good, numels, size)
    for bad in ({k: v for k, v in good.items() if k != (0, 1, "bias")},  # missing
                {**good, (0, 0, "matrix"): (good[(0, 0, "matrix")][0], 5)},  # wrong size
                {**good, (0, 1, "matrix"): good[(0, 0, "matrix")]},  # wrong size and overlapping
                {**good, (0, 1, "bias"): good[(0, 0, "bias")]},  # overlapping
                {**good, (0, 1, "bias"): (size - 1, 3)}):  # outside the space
        with pytest.raises(ValueError, match="cuDNN weight space"):
            L.pack_indices(slots, bad, numels, size)


@pytest.mark.parametrize("value,want", [(None, "True"), ("1", "True"), ("0", "False"), ("false", "False")])
def test_switch_is_on_by_default_and_read_from_the_environment(value, want):
    code = "import tinynet; print(tinynet.backends.cudnn.rnn_enabled)"
    env = {k: v for k, v in os.environ.items() if k != "TINYNET_CUDNN_RNN"}
    if value is not None:
        env["TINYNET_CUDNN_RNN"] = value
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(tinynet.__file__)))
    assert out.stdout.strip() == want


def test_switch_on_cpu_layers_keep_tinynets_path(monkeypatch, cpu_default_device):
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", True)
    assert rnn_cudnn.enabled()
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = tinynet.tensor(rng(4).standard_normal((5, 2, 3)), dtype=tinynet.float32)
    out, _ = lstm(x)
    seen, stack = set(), [out.grad_fn]
    while stack:
        op = stack.pop()
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        assert not isinstance(op, rnn_cudnn.CudnnRNN)
        stack.extend(i.grad_fn for i in op.inputs if isinstance(i, tinynet.Tensor))
    monkeypatch.setattr(tinynet.backends.cudnn, "enabled", False)
    assert not rnn_cudnn.enabled()


def test_op_refuses_numpy_arrays(cpu_default_device):
    with pytest.raises(errors.BackendError, match="cudnn_rnn"):
        rnn_cudnn.CudnnRNN(None, None).apply(tinynet.zeros(2, 1, 3), None, None, tinynet.zeros(4, 3))


# --- the ctypes wiring of tinynet.kernels.cudnn_rnn, against a stand-in library -------------
# Every call is checked against the argument types the module declares (count and ctypes
# conversion); cudnnGetRNNWeightParams answers with _simulated_cudnn's layout, so the Net's
# pack/unpack indices come out of the module's own code path. The arrays are NumPy ones
# dressed as CuPy's (``.data.ptr``).

class _Arr(numpy.ndarray):
    @property
    def data(self):
        return type("Mem", (), {"ptr": self.ctypes.data})()


class _FakeCupy:
    uint8, int32 = numpy.uint8, numpy.int32

    class cuda:  # noqa: N801
        class runtime:  # noqa: N801
            getDevice = staticmethod(lambda: 0)  # noqa: N815

        get_current_stream = staticmethod(lambda: type("S", (), {"ptr": 1234})())

    def __getattr__(self, name):
        fn = getattr(numpy, name)
        return lambda *a, **k: _wrap(fn(*a, **k))


def _wrap(v):
    if isinstance(v, numpy.ndarray):
        return v.view(_Arr)
    return [_wrap(x) for x in v] if isinstance(v, list) else v


class _FakeLib:
    def __init__(self, K, mode, layers, bidi, bias, I, H, item):
        self.K, self.calls, self.item = K, [], item
        self.located, self.size = _simulated_cudnn(mode, layers, bidi, bias, I, H)
        self.numel = {}

    def __getattr__(self, name):
        import ctypes
        argtypes = self.K._SIGNATURES[name]

        def call(*args):
            assert len(args) == len(argtypes), (name, len(args), len(argtypes))
            for a, t in zip(args, argtypes):
                t.from_param(a)  # raises on an argument ctypes would refuse
            self.calls.append((name, args))
            if name.startswith("cudnnCreate"):
                args[0]._obj.value = 1000 + len(self.calls)
            elif name == "cudnnGetRNNWeightSpaceSize":
                args[2]._obj.value = self.size * self.item
            elif name == "cudnnGetRNNWeightParams":
                base, lin, p = args[4].value, args[5], args[2]
                for kind, desc, out in (("matrix", args[6], args[7]), ("bias", args[8], args[9])):
                    where = self.located.get((p, lin, kind))
                    out._obj.value = None if where is None else base + where[0] * self.item
                    self.numel[desc.value] = 0 if where is None else where[1]
            elif name == "cudnnGetTensorNdDescriptor":
                args[3]._obj.value = 1
                args[4][0] = self.numel[args[0].value]
            elif name == "cudnnGetRNNTempSpaceSizes":
                args[4]._obj.value, args[5]._obj.value = 256, 512 if args[2] == L.FWD_TRAINING else 0
            return 0
        call.__name__ = name
        return call if name in self.K._SIGNATURES else ctypes.CDLL(None).__getattr__(name)


@pytest.mark.parametrize("mode,layers,bidi,bias", CASES[:3], ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES[:3]])
def test_ctypes_wiring_against_a_stand_in_library(monkeypatch, mode, layers, bidi, bias):
    from tinynet import backend
    from tinynet.kernels import cudnn_rnn as K
    I, H, T, N = 3, 4, 5, 2
    fake = _FakeLib(K, mode, layers, bidi, bias, I, H, 8)
    monkeypatch.setattr(backend, "cupy", _FakeCupy())
    monkeypatch.setattr(K, "_state", {"lib": fake, "why": None, "handles": {}})
    monkeypatch.setattr(K, "_nets", {})
    monkeypatch.setattr(K, "_shapes", {})
    net, shape = K.plan(mode, "float64", I, H, layers, bidi, bias, False, T, N)
    assert K.plan(mode, "float64", I, H, layers, bidi, bias, False, T, N) == (net, shape)  # cached
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}.get(mode, torch.nn.RNN)
    params = [_wrap(p.detach().double().numpy()) for p in cls(I, H, num_layers=layers, bidirectional=bidi,
                                                              bias=bias).parameters()]
    space = net.pack_weights(_FakeCupy(), params)
    assert space.shape == (fake.size,)
    back = net.unpack_grads(_FakeCupy(), space)
    assert all(numpy.array_equal(a, b) for a, b in zip(back, params))
    d = 2 if bidi else 1
    x = _wrap(numpy.zeros((T, N, I)))
    hx = _wrap(numpy.zeros((layers * d, N, H)))
    cx = hx if mode == "LSTM" else None
    y, hy, cy, reserve = K.forward(net, shape, x, hx, cx, space, training=True)
    assert y.shape == (T, N, d * H) and hy.shape == hx.shape and (cy is not None) == (mode == "LSTM")
    name, args = fake.calls[-1]
    assert name == "cudnnRNNForward" and args[2] == L.FWD_TRAINING and args[5].value == x.data.ptr
    assert args[14] == fake.size * 8 and args[18] == 512 and args[19].value == reserve.data.ptr
    dx, dhx, dcx, dspace = K.backward(net, shape, x, hx, cx, space, y, reserve, y, None, None,
                                      True, True, True, True)
    assert [c[0] for c in fake.calls[-2:]] == ["cudnnRNNBackwardData_v8", "cudnnRNNBackwardWeights_v8"]
    assert fake.calls[-1][1][2] == L.WGRAD_ADD and dspace.shape == (fake.size,) and dx.shape == x.shape
    assert (dcx is not None) == (mode == "LSTM") and dhx.shape == hx.shape
    sets = [c for c in fake.calls if c[0] == "cudnnSetRNNDescriptor_v8"]
    assert len(sets) == 1 and tuple(sets[0][1][1:13]) == L.rnn_descriptor_args(mode, "float64", I, H, layers, bidi,
                                                                                 bias, False)[0]
