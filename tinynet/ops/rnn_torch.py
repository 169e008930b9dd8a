"""The torch-level recurrent functions with ATen's signatures: the cells ``torch.rnn_tanh_cell``,
``rnn_relu_cell``, ``lstm_cell``, ``gru_cell`` and the whole-sequence ``torch.rnn_tanh``,
``rnn_relu``, ``lstm``, ``gru`` (a flat list of parameters, per layer and direction
``w_ih, w_hh[, b_ih, b_hh][, w_hr]``). The math is :mod:`.rnn`'s (the one ``nn.RNN``,
``nn.LSTM`` and ``nn.GRU`` run); here the arguments are checked and converted.
"""
from ..errors import ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from . import rnn
from .util import check_flag, check_int, check_number, check_tensor

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _matrix(op, name, t, rows, cols, dtype):
    check_tensor(op, name, t)
    if t.ndim != 2 or t.shape[0] != rows or (cols is not None and t.shape[1] != cols):
        want = f"({rows}, {cols if cols is not None else 'input_size'})"
        raise ShapeError(f"{op}: {name} must have shape {want}, got {tuple(t.shape)}")
    if t.dtype != dtype:
        raise DTypeError(f"{op}: {name} has dtype {t.dtype}, expected {dtype} (the input's)")


def _bias(op, name, t, rows, dtype):
    if t is None:
        return
    check_tensor(op, name, t)
    if tuple(t.shape) != (rows,):
        raise ShapeError(f"{op}: {name} must have shape ({rows},), got {tuple(t.shape)}")
    if t.dtype != dtype:
        raise DTypeError(f"{op}: {name} has dtype {t.dtype}, expected {dtype} (the input's)")


def _check_cell(op, mode, input, states, w_ih, w_hh, b_ih, b_hh):
    check_tensor(op, "input", input)
    if input.ndim != 2:
        raise ShapeError(f"{op}: input must be 2-D (N, input_size), got shape {tuple(input.shape)}")
    for name, h in states:
        check_tensor(op, name, h)
        if h.ndim != 2 or h.shape[0] != input.shape[0]:
            raise ShapeError(f"{op}: {name} must be 2-D (N, hidden_size) with N = {input.shape[0]}, got shape "
                             f"{tuple(h.shape)}")
    hidden = states[0][1].shape[1]
    rows = _GATES[mode] * hidden
    _matrix(op, "w_ih", w_ih, rows, input.shape[1], input.dtype)
    _matrix(op, "w_hh", w_hh, rows, hidden, input.dtype)
    _bias(op, "b_ih", b_ih, rows, input.dtype)
    _bias(op, "b_hh", b_hh, rows, input.dtype)
    for name, h in states:
        if tuple(h.shape) != tuple(states[0][1].shape) or h.dtype != input.dtype:
            raise ShapeError(f"{op}: {name} must have shape {tuple(states[0][1].shape)} and dtype {input.dtype}, got "
                             f"{tuple(h.shape)} {h.dtype}")


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_tanh_cell``: one Elman step ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``; input (N, I),
    hx (N, H), weights (H, I) and (H, H), biases (H,) or None; returns (N, H).

    Raises:
        ArgumentTypeError: a non-Tensor. ShapeError / DTypeError: shapes or dtypes that do not fit.
    """
    _check_cell("rnn_tanh_cell", "RNN_TANH", input, [("hx", hx)], w_ih, w_hh, b_ih, b_hh)
    return rnn.rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_relu_cell``: one Elman step with ReLU (shapes as :func:`rnn_tanh_cell`)."""
    _check_cell("rnn_relu_cell", "RNN_RELU", input, [("hx", hx)], w_ih, w_hh, b_ih, b_hh)
    return rnn.rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.gru_cell``: one GRU step (gates r, z, n; weights (3H, I) and (3H, H)); returns (N, H)."""
    _check_cell("gru_cell", "GRU", input, [("hx", hx)], w_ih, w_hh, b_ih, b_hh)
    return rnn.gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.lstm_cell``: one LSTM step; ``hx`` is a list or tuple ``(h, c)``, each (N, H), the
    weights (4H, I) and (4H, H) (gates i, f, g, o); returns ``(h', c')``.

    Raises:
        ArgumentTypeError: ``hx`` is not a pair of Tensors.
    """
    if not isinstance(hx, (list, tuple)) or len(hx) != 2:
        raise ArgumentTypeError(f"lstm_cell: hx must be a list or tuple (h, c), got {type(hx).__name__}")
    _check_cell("lstm_cell", "LSTM", input, [("hx[0]", hx[0]), ("hx[1]", hx[1])], w_ih, w_hh, b_ih, b_hh)
    return rnn.lstm_cell(input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def _layers(op, mode, input, h0, c0, params, has_biases, num_layers, bidirectional):
    """The per-layer-and-direction weight tuples of ``rnn.recurrent`` from ATen's flat list,
    after checking every shape against the input and the initial state."""
    if not isinstance(params, (list, tuple)) or not all(isinstance(p, Tensor) for p in params):
        raise ArgumentTypeError(f"{op}: params must be a list of Tensors, got {type(params).__name__}")
    d = 2 if bidirectional else 1
    hidden, real = (c0.shape[2] if c0 is not None else h0.shape[2]), h0.shape[2]
    per = 2 + 2 * has_biases + (1 if c0 is not None and real != hidden else 0)
    if len(params) != num_layers * d * per:
        raise ShapeError(f"{op}: expected {num_layers * d * per} parameters ({num_layers} layers x {d} directions x "
                         f"{per}), got {len(params)}")
    rows, out = _GATES[mode] * hidden, []
    for k in range(num_layers * d):
        group = list(params[k * per:(k + 1) * per])
        w_ih, w_hh = group[0], group[1]
        b_ih, b_hh = (group[2], group[3]) if has_biases else (None, None)
        w_hr = group[-1] if per in (3, 5) else None
        layer_in = input.shape[2] if k < d else real * d
        _matrix(op, f"params[{k * per}] (w_ih)", w_ih, rows, layer_in, input.dtype)
        _matrix(op, f"params[{k * per + 1}] (w_hh)", w_hh, rows, real, input.dtype)
        _bias(op, "b_ih", b_ih, rows, input.dtype)
        _bias(op, "b_hh", b_hh, rows, input.dtype)
        if w_hr is not None:
            _matrix(op, "w_hr", w_hr, real, hidden, input.dtype)
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def _sequence(op, mode, input, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    check_tensor(op, "input", input)
    has_biases, train = check_flag(op, "has_biases", has_biases), check_flag(op, "train", train)
    bidirectional, batch_first = check_flag(op, "bidirectional", bidirectional), check_flag(op, "batch_first",
                                                                                             batch_first)
    num_layers = check_int(op, "num_layers", num_layers, 1)
    dropout = check_number(op, "dropout", dropout, 0.0, 1.0)
    if input.ndim != 3 or input.shape[0] == 0 and not batch_first or input.shape[1] == 0 and batch_first:
        raise ShapeError(f"{op}: input must be 3-D (L, N, H_in) (N, L, H_in with batch_first) with L >= 1, got "
                         f"shape {tuple(input.shape)}")
    x = input.transpose(0, 1) if batch_first else input
    d = 2 if bidirectional else 1
    for name, h in (("hx", h0), ("cx", c0)):
        if h is None and name == "cx":
            continue
        check_tensor(op, name, h)
        if h.ndim != 3 or h.shape[:2] != (num_layers * d, x.shape[1]) or h.dtype != input.dtype:
            raise ShapeError(f"{op}: {name} must be ({num_layers * d}, {x.shape[1]}, H) of dtype {input.dtype}, got "
                             f"{tuple(h.shape)} {h.dtype}")
    weights = _layers(op, mode, x, h0, c0, params, has_biases, num_layers, bidirectional)
    out, h_n, c_n = rnn.recurrent(mode, x, h0, c0, weights, num_layers, dropout, train, bidirectional)
    return (out.transpose(0, 1) if batch_first else out), h_n, c_n


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """``torch.rnn_tanh``: a stack of Elman (tanh) layers over (L, N, H_in) (``batch_first``: (N, L, H_in));
    ``hx`` (num_layers * D, N, H); returns ``(output, h_n)``.

    Raises:
        ShapeError: an input that is not 3-D, or shapes that do not fit; ArgumentError: dropout outside [0, 1].
    """
    out, h, _ = _sequence("rnn_tanh", "RNN_TANH", input, hx, None, params, has_biases, num_layers, dropout, train,
                          bidirectional, batch_first)
    return out, h


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """``torch.rnn_relu``: :func:`rnn_tanh` with ReLU cells."""
    out, h, _ = _sequence("rnn_relu", "RNN_RELU", input, hx, None, params, has_biases, num_layers, dropout, train,
                          bidirectional, batch_first)
    return out, h


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """``torch.gru``: a stack of GRU layers (arguments as :func:`rnn_tanh`); returns ``(output, h_n)``."""
    out, h, _ = _sequence("gru", "GRU", input, hx, None, params, has_biases, num_layers, dropout, train,
                          bidirectional, batch_first)
    return out, h


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """``torch.lstm``: a stack of LSTM layers; ``hx`` is ``[h_0, c_0]`` (with a projection, h_0's
    last dim is the projection size and each layer has a fifth parameter ``w_hr``); returns
    ``(output, h_n, c_n)``.

    Raises:
        ArgumentTypeError: ``hx`` is not a pair of Tensors.
    """
    if not isinstance(hx, (list, tuple)) or len(hx) != 2:
        raise ArgumentTypeError(f"lstm: hx must be a list or tuple (h_0, c_0), got {type(hx).__name__}")
    check_tensor("lstm", "hx[0]", hx[0])
    check_tensor("lstm", "hx[1]", hx[1])
    return _sequence("lstm", "LSTM", input, hx[0], hx[1], params, has_biases, num_layers, dropout, train,
                     bidirectional, batch_first)
