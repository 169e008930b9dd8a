"""Recurrent cells, one time step each: ``RNNCell``, ``LSTMCell``, ``GRUCell``.

PyTorch's parameters ``weight_ih`` (G*H, H_in), ``weight_hh`` (G*H, H), ``bias_ih``,
``bias_hh`` (G*H,) with G = 1, 4 (i, f, g, o), 3 (r, z, n), initialised from
``U(-1/sqrt(H), 1/sqrt(H))``; the math is :mod:`tinynet.ops.rnn`'s cells.

Differences from PyTorch: ``RNNCell`` checks ``nonlinearity`` at construction
(``ArgumentError``; PyTorch raises ``RuntimeError`` at the first call); shape errors are
``ShapeError`` (a ``ValueError``, PyTorch: ``RuntimeError``) and an unbatched (1-D) input
needs 1-D states; an input or state whose dtype differs from the weights' raises
``DTypeError``.
"""
from ... import dtypes, ops
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops import rnn as R
from .module import Module
from .rnn import check_bool, check_input_tensor, check_size, check_state, new_parameter, reset_uniform


class RNNCellBase(Module):
    """The parameters and checks shared by the cells.

    Args:
        input_size (int): H_in. hidden_size (int): H. bias (bool): use the biases.
        num_chunks (int): G, gates per cell. device, dtype: of the parameters.

    Raises:
        ArgumentTypeError: non-int sizes or a non-bool ``bias``. ArgumentError: sizes < 1.
    """

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        self.input_size = check_size(name, "input_size", input_size)
        self.hidden_size = check_size(name, "hidden_size", hidden_size)
        self.bias = check_bool(name, "bias", bias)
        dt = dtypes.as_dtype(dtype, name)
        G = num_chunks * self.hidden_size
        self.weight_ih = new_parameter((G, self.input_size), device, dt)
        self.weight_hh = new_parameter((G, self.hidden_size), device, dt)
        if bias:
            self.bias_ih = new_parameter((G,), device, dt)
            self.bias_hh = new_parameter((G,), device, dt)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        reset_uniform(self)

    def _prepare(self, input, states):
        """Check the input and the given states (None: zeros); return them with a batch dim
        and whether the input was batched."""
        name = repr(self)
        check_input_tensor(name, input, (1, 2), "(N, H_in) or (H_in)", self.weight_ih)
        if input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: input has inconsistent input_size: got {input.shape[-1]}, "
                             f"expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        shape = (x.shape[0], self.hidden_size) if batched else (self.hidden_size,)
        out = []
        for what, h in states:
            if h is None:
                h = ops.creation.zeros(*shape, dtype=x.dtype, device=x.device)
            else:
                check_state(name, what, h, shape, x.dtype)
            out.append(h if batched else h.unsqueeze(0))
        return x, out, batched

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """An Elman RNN cell: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ``relu``).

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        bias (bool): default True.
        nonlinearity (str): ``'tanh'`` (default) or ``'relu'``.
        device: the parameters' device.
        dtype: the parameters' dtype.

    Shape:
        input (N, H_in) or (H_in); hx (N, H) or (H), zeros when None -> h' like hx.

    Raises:
        ArgumentError: an unknown nonlinearity (at construction). ShapeError, DTypeError,
        ArgumentTypeError: a bad input or hx.
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(f"RNNCell: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, [("hx", hx)])
        cell = R.rnn_tanh_cell if self.nonlinearity == "tanh" else R.rnn_relu_cell
        out = cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell (gates i, f, g, o, PyTorch's order)::

        i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (x W_ih^T + b_ih + h W_hh^T + b_hh)
        c' = f * c + i * g        h' = o * tanh(c')

    Args: input_size (int), hidden_size (int), bias (bool, default True); device, dtype.

    Shape:
        input (N, H_in) or (H_in); hx a tuple (h, c) of (N, H) or (H), zeros when None
        -> ``(h', c')`` of the same shapes.

    Raises:
        ArgumentTypeError: hx not a pair of tensors. ShapeError, DTypeError: a bad input or state.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise ArgumentTypeError(f"{self!r}: expected hx to be a tuple (h, c), got {type(hx).__name__}")
        h, c = hx if hx is not None else (None, None)
        x, (h, c), batched = self._prepare(input, [("hx[0]", h), ("hx[1]", c)])
        h, c = R.lstm_cell(x, (h, c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell (PyTorch's formulation, gates r, z, n)::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)    z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))  h' = (1 - z) * n + z * h

    Args: input_size (int), hidden_size (int), bias (bool, default True); device, dtype.

    Shape: input (N, H_in) or (H_in); hx (N, H) or (H), zeros when None -> h' like hx.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, [("hx", hx)])
        out = R.gru_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)
