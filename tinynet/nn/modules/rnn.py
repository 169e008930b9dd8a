"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` (the cells are in :mod:`.rnn_cell`).

PyTorch's parameters (names, shapes, order, ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``
init), so state dicts load across both ways. The math is :func:`tinynet.ops.rnn.recurrent`:
per layer and direction one product projects the whole input sequence, then a loop over
time adds the recurrent product and applies the cell (Elman's ``tanh``/``relu``, or the
LSTM/GRU gate ops).

Differences from PyTorch: a ``PackedSequence`` input raises ``ArgumentTypeError`` (pad
the batch instead, :func:`tinynet.nn.utils.rnn.pad_sequence`); shape errors are
``ShapeError`` (a ``ValueError``) where PyTorch raises ``RuntimeError`` (an empty sequence
included), and an input or
state whose dtype differs from the weights' raises ``DTypeError`` (a ``TypeError``) where
PyTorch raises ``ValueError``. ``flatten_parameters()`` does nothing (no cuDNN weight
buffer). Dropout masks come from tinynet's generator, so they differ from PyTorch's.
"""
import numbers
import warnings

from ... import dtypes, ops
from ...errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ...ops.rnn import recurrent
from ...tensor import Tensor
from .. import init
from .module import Module, Parameter


def check_size(layer, name, v, minimum=1):
    """``v`` as an int >= ``minimum`` (ArgumentTypeError for a non-int, ArgumentError below)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"{layer}: {name} should be of type int, got: {type(v).__name__}")
    if v < minimum:
        raise ArgumentError(f"{layer}: {name} must be {'greater than zero' if minimum == 1 else '>= 0'}, got {v}")
    return int(v)


def check_bool(layer, name, v):
    if not isinstance(v, bool):
        raise ArgumentTypeError(f"{layer}: {name} should be of type bool, got: {type(v).__name__}")
    return v


def new_parameter(shape, device, dtype):
    return Parameter(ops.creation.empty(*shape, dtype=dtype, device=device))


def reset_uniform(module):
    """PyTorch's init of recurrent layers and cells: every parameter from U(-k, k), k = 1/sqrt(hidden_size)."""
    stdv = 1.0 / module.hidden_size ** 0.5
    for w in module.parameters():
        init.uniform_(w, -stdv, stdv)


def check_state(layer, name, h, shape, dtype):
    """Raise unless ``h`` is a Tensor of ``shape`` and ``dtype`` (an initial state)."""
    if not isinstance(h, Tensor):
        raise ArgumentTypeError(f"{layer}: expected {name} to be a Tensor, got {type(h).__name__}")
    if tuple(h.shape) != tuple(shape):
        raise ShapeError(f"{layer}: expected {name} of shape {tuple(shape)}, got {tuple(h.shape)}")
    if h.dtype != dtype:
        raise DTypeError(f"{layer}: expected {name} of dtype {dtype} (the input's), got {h.dtype}")


def check_input_tensor(layer, input, ndims, layout, weight):
    """The input checks shared by layers and cells: a Tensor (not a PackedSequence) with a
    rank in ``ndims`` and the weights' dtype."""
    if not isinstance(input, Tensor):
        if hasattr(input, "batch_sizes"):
            raise ArgumentTypeError(f"{layer}: PackedSequence input is not supported by tinynet; pad the "
                                    "sequences (nn.utils.rnn.pad_sequence) and pass the padded Tensor")
        raise ArgumentTypeError(f"{layer}: expected a Tensor input, got {type(input).__name__}")
    if input.ndim not in ndims:
        raise ShapeError(f"{layer}: expected input of shape {layout}, got {tuple(input.shape)}")
    if input.dtype != weight.dtype:
        raise DTypeError(f"{layer}: input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}); "
                         f"convert the input (input.to({weight.dtype})) or the model (model.to({input.dtype}))")


_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}  # gates per cell


class RNNBase(Module):
    """The shared part of :class:`RNN`, :class:`LSTM` and :class:`GRU` (PyTorch's ``RNNBase``).

    Args:
        mode (str): ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        input_size (int): features of the input, H_in.
        hidden_size (int): features of the hidden state, H.
        num_layers (int): stacked layers, each reading the previous one's output. Default 1.
        bias (bool): use ``bias_ih``/``bias_hh``. Default True.
        batch_first (bool): input and output as (N, L, *) instead of (L, N, *); the states
            stay (num_layers * D, N, *). Default False.
        dropout (float): probability of zeroing elements of each layer's output except the
            last layer's, in training mode only. Default 0.
        bidirectional (bool): a second pass backwards in time per layer (D = 2). Default False.
        proj_size (int): LSTM only: project h to this size, ``h <- h W_hr^T``. Default 0 (none).
        device, dtype: of the parameters (default: the default device, float32).

    Parameters, per layer ``k`` and direction (suffix ``_reverse`` for the backward one),
    with G = 1 (RNN), 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n) and H_out = proj_size or H:
    ``weight_ih_l{k}`` (G*H, H_in for k = 0 else D * H_out), ``weight_hh_l{k}`` (G*H, H_out),
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (G*H,), ``weight_hr_l{k}`` (proj_size, H).

    Raises:
        ArgumentTypeError: a size that is not an int, ``bias``/``batch_first`` not bools.
        ArgumentError: sizes < 1, ``dropout`` outside [0, 1], ``proj_size`` < 0 or >= hidden_size.
    """
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if not isinstance(mode, str) or mode not in _GATES:
            raise ArgumentError(f"{name}: unrecognized RNN mode {mode!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout <= 1:
            raise ArgumentError(f"{name}: dropout should be a number in range [0, 1] representing the "
                                f"probability of an element being zeroed, got {dropout!r}")
        self.mode = mode
        self.input_size = check_size(name, "input_size", input_size)
        self.hidden_size = check_size(name, "hidden_size", hidden_size)
        self.num_layers = check_size(name, "num_layers", num_layers)
        self.proj_size = check_size(name, "proj_size", proj_size, minimum=0)
        if self.proj_size >= self.hidden_size:
            raise ArgumentError(f"{name}: proj_size has to be smaller than hidden_size, got proj_size="
                                f"{proj_size} and hidden_size={hidden_size}")
        self.bias = check_bool(name, "bias", bias)
        self.batch_first = check_bool(name, "batch_first", batch_first)
        self.bidirectional = bool(bidirectional)
        self.dropout = float(dropout)
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        gate_size = _GATES[mode] * self.hidden_size
        real_hidden = self.proj_size or self.hidden_size
        D = 2 if self.bidirectional else 1
        dt = dtypes.as_dtype(dtype, name)
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(self.num_layers):
            for direction in range(D):
                sfx = f"_l{layer}" + ("_reverse" if direction else "")
                layer_in = self.input_size if layer == 0 else real_hidden * D
                shapes = {"weight_ih": (gate_size, layer_in), "weight_hh": (gate_size, real_hidden)}
                if self.bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if self.proj_size:
                    shapes["weight_hr"] = (self.proj_size, self.hidden_size)
                names = [k + sfx for k in shapes]
                for k, shape in zip(names, shapes.values()):
                    setattr(self, k, new_parameter(shape, device, dt))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        reset_uniform(self)

    def flatten_parameters(self):
        """Nothing to do in tinynet (PyTorch packs the weights into one cuDNN buffer)."""

    @property
    def all_weights(self):
        """The parameters per layer and direction: ``[[weight_ih, weight_hh, bias_ih, bias_hh(, weight_hr)], ...]``."""
        return [[getattr(self, k) for k in names] for names in self._all_weights]

    def _weights(self):
        """Per layer and direction: ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` with None for what is absent."""
        out = []
        for names in self._all_weights:
            sfx = names[0][len("weight_ih"):]
            out.append(tuple(getattr(self, k + sfx) if (k + sfx) in self._parameters else None
                             for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")))
        return out

    def forward(self, input, hx=None):
        """Run the layers over a sequence.

        Args:
            input (Tensor): (L, N, H_in), (N, L, H_in) with ``batch_first``, or unbatched
                (L, H_in); the weights' dtype; L >= 1.
            hx: initial state(s), zeros when None: for RNN/GRU a Tensor h_0
                (num_layers * D, N, H_out); for LSTM a tuple ``(h_0, c_0)`` with c_0
                (num_layers * D, N, H). Unbatched input takes them without the N dim.

        Returns:
            ``(output, h_n)`` (RNN, GRU) or ``(output, (h_n, c_n))`` (LSTM): output
            (L, N, D * H_out) (batch_first: (N, L, D * H_out); unbatched: (L, D * H_out))
            holds the last layer's h_t for every t (both directions concatenated); h_n and
            c_n hold every layer's and direction's final states, index ``layer * D + direction``.

        Raises:
            ArgumentTypeError: a PackedSequence or non-Tensor input, states of the wrong type.
            ShapeError: an input that is not 2-D/3-D, whose last dim is not input_size or whose
                sequence is empty; states of the wrong shape. DTypeError: input or states of
                another dtype than the weights.
        """
        name = repr(self)
        w0 = getattr(self, self._flat_weights_names[0])
        check_input_tensor(name, input, (2, 3), "(L, N, H_in), (N, L, H_in) with batch_first, or (L, H_in)", w0)
        if input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: expected input with input_size={self.input_size} features in its last "
                             f"dim, got shape {tuple(input.shape)}")
        batched = input.ndim == 3
        x = input.unsqueeze(1) if not batched else input.transpose(0, 1) if self.batch_first else input
        L, N = x.shape[0], x.shape[1]
        if L == 0:
            raise ShapeError(f"{name}: expected a sequence length larger than 0, got input of shape "
                             f"{tuple(input.shape)}")
        D = 2 if self.bidirectional else 1
        h_shape = (self.num_layers * D, N, self.proj_size or self.hidden_size)
        c_shape = (self.num_layers * D, N, self.hidden_size)
        is_lstm = self.mode == "LSTM"
        if hx is None:
            h0 = ops.creation.zeros(*h_shape, dtype=x.dtype, device=x.device)
            c0 = ops.creation.zeros(*c_shape, dtype=x.dtype, device=x.device) if is_lstm else None
        else:
            h0, c0 = self._states(name, hx, batched, h_shape, c_shape, x.dtype)
        out, h_n, c_n = recurrent(self.mode, x, h0, c0, self._weights(), self.num_layers, self.dropout,
                                  self.training, self.bidirectional)
        if not batched:
            out, h_n = out.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if is_lstm else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return (out, (h_n, c_n)) if is_lstm else (out, h_n)

    def _states(self, name, hx, batched, h_shape, c_shape, dtype):
        """The initial states given to forward, checked, with the batch dim."""
        rank = 3 if batched else 2
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ArgumentTypeError(f"{name}: expected hx to be a tuple (h_0, c_0), got {type(hx).__name__}")
            pairs = (("h_0 (hx[0])", hx[0], h_shape), ("c_0 (hx[1])", hx[1], c_shape))
        else:
            pairs = (("h_0 (hx)", hx, h_shape),)
        states = []
        for what, h, shape in pairs:
            full = shape if batched else shape[:1] + shape[2:]
            if isinstance(h, Tensor) and h.ndim != rank:
                raise ShapeError(f"{name}: for {'batched 3-D' if batched else 'unbatched 2-D'} input, expected "
                                 f"{what} to be {rank}-D of shape {full}, got shape {tuple(h.shape)}")
            check_state(name, what, h, full, dtype)
            states.append(h if batched else h.unsqueeze(1))
        return states[0], (states[1] if len(states) > 1 else None)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _no_proj(name, kwargs):
    if "proj_size" in kwargs:
        raise ArgumentError(f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise ArgumentTypeError(f"{name}: unexpected keyword argument(s) {sorted(kwargs)}")


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` per layer (or ``relu``).

    Args:
        *args: ``input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
            dropout=0.0, bidirectional=False, device=None, dtype=None``, as in :class:`RNNBase`.
        nonlinearity (str): ``'tanh'`` (default) or ``'relu'``.

    Shape: see :meth:`RNNBase.forward`; returns ``(output, h_n)``.

    Raises:
        ArgumentError: an unknown nonlinearity, ``proj_size`` given, or as :class:`RNNBase`.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj("RNN", kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory (Hochreiter & Schmidhuber, 1997), PyTorch's gates per layer::

        i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)
        c_t = f * c_{t-1} + i * g        h_t = o * tanh(c_t)   (then h_t W_hr^T with proj_size)

    Args: as :class:`RNNBase`, plus ``proj_size=0`` (Sak et al., 2014, arXiv:1402.1128).

    Shape: see :meth:`RNNBase.forward`; ``hx`` is ``(h_0, c_0)``, returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit (Cho et al., 2014, arXiv:1406.1078), PyTorch's formulation per layer::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)    z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))  h' = (1 - z) * n + z * h

    Args: as :class:`RNNBase` (no ``proj_size``). Shape: see :meth:`RNNBase.forward`;
    returns ``(output, h_n)``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)
