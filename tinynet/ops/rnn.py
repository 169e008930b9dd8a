"""Recurrent cells and the time loop of ``nn.RNN``/``nn.LSTM``/``nn.GRU``.

Per layer and direction the input projection of the whole sequence is one product,
``X W_ih^T + b_ih`` of shape (L, N, G*H) (G = 1, 4, 3 gates); each time step then adds
the recurrent product ``h W_hh^T + b_hh`` and applies the cell's pointwise math:

* Elman RNN: ``h' = tanh(x_g + h_g)`` (or ``relu``), composed of tinynet's ops.
* LSTM (Hochreiter & Schmidhuber, 1997), gates in PyTorch's order i, f, g, o::

      i, f, o = sigmoid(.)   g = tanh(.)   c' = f * c + i * g   h' = o * tanh(c')

  with an optional projection ``h' <- h' W_hr^T`` (Sak et al., 2014, arXiv:1402.1128).
* GRU (Cho et al., 2014, arXiv:1406.1078) in PyTorch's formulation, gates r, z, n::

      r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)   n = tanh(x_n + r * h_n)
      h' = (1 - z) * n + z * h

  where ``h_n = W_hn h + b_hn`` keeps its bias inside ``r * (.)``.

The LSTM and GRU pointwise math is one op each (:class:`LSTMGates`, :class:`GRUGates`,
PyTorch's ``_thnn_fused_lstm_cell``/``_thnn_fused_gru_cell``): forward takes the two
pre-activations and the state and saves the activations; backward is closed-form. On the
CPU (2 cores, L=20, forward + backward of one layer) it is 1.8x (LSTM) and 2.7x (GRU)
faster than composing the ~12 elementwise ops per step at N=8, H=32, 1.4x/2.0x at
N=32, H=64 and 1.1x/1.2x at N=64, H=256, where the products dominate; it records one
op per step instead of ~12. On the GPU (float32/float64 CuPy arrays, kernels enabled)
each runs as one fused kernel for forward and one for backward (``kernels/rnn_cell.cu``,
one thread per (sample, unit)), saving what the generic forward saves.
Both are twice differentiable: a ``create_graph`` backward recomputes the activations
from the inputs with tinynet's ops. An LSTM layer without projection runs its whole
recurrence as one op instead, on the CPU and (float32/float64) on the GPU
(:class:`tinynet.ops.rnn_sequence.LSTMSequence`: one record per layer and direction, the
recurrent weight gradient as one product); so does a GRU layer on the CPU
(:class:`tinynet.ops.rnn_sequence_gru.GRUSequence`) and an Elman layer on the CPU
(:class:`tinynet.ops.rnn_sequence_elman.RNNSequence`, float32/float64, the generic path's bits).
"""

from ..autograd import Op
from ..kernels import cuda
from .activation import relu, sigmoid, tanh
from .dropout import dropout as _dropout
from .join import cat, stack
from .linear import Linear
from .rnn_cudnn import cudnn_recurrent  # cuDNN RNN hook (issue 33)
from .rnn_sequence import LSTMSequence
from .rnn_sequence_elman import RNNSequence
from .rnn_sequence_gru import GRUSequence
from .split import unbind
from .util import is_graph


def _sigmoid_(xp, a):
    """Logistic function in place on array ``a`` (``(tanh(a/2) + 1) / 2``, tinynet's formula)."""
    a *= 0.5
    xp.tanh(a, out=a)
    a += 1
    a *= 0.5


def _fits(gates, xg, hg, state):
    """True when the fused kernels take these arrays: float32/float64 CuPy arrays of one
    dtype, ``xg`` and ``hg`` of shape (*, gates * H) and the state (*, H), not empty."""
    if not cuda.supported(xg, hg, state) or state.ndim == 0 or state.size == 0:
        return False
    H = state.shape[-1]
    return (xg.dtype == hg.dtype == state.dtype and xg.shape == hg.shape
            and xg.shape == state.shape[:-1] + (gates * H,))


def _launch(xp, name, state, inputs, outputs):
    """One thread per element of the (*, H) state: ``name``'s kernel reads ``inputs`` (copied
    only when not C-contiguous) and writes ``outputs`` (new C-contiguous arrays, or None
    for those not wanted)."""
    inputs = [xp.ascontiguousarray(a) for a in inputs]
    cuda.launch(cuda.kernel("rnn_cell.cu", name, state.dtype), state.size,
                (*inputs, *outputs, xp.int64(state.size), xp.int32(state.shape[-1])))


class LSTMGates(Op):
    """``(h', c')`` from the gate pre-activations ``xg``, ``hg`` (N, 4H) and the cell ``c`` (N, H)."""
    name = "lstm_cell"
    twice_differentiable = True
    gpu_saves_generic = True
    n_outputs = 2

    def forward(self, xp, xg, hg, c):
        H = c.shape[-1]
        acts = xg + hg
        _sigmoid_(xp, acts[..., :2 * H])
        xp.tanh(acts[..., 2 * H:3 * H], out=acts[..., 2 * H:3 * H])
        _sigmoid_(xp, acts[..., 3 * H:])
        c_next = acts[..., H:2 * H] * c
        c_next += acts[..., :H] * acts[..., 2 * H:3 * H]
        tc = xp.tanh(c_next)
        self.save_for_backward(acts, tc, c)
        return acts[..., 3 * H:] * tc, c_next

    def backward(self, xp, gh, gc):
        if is_graph(xp):  # recompute the activations as tensors, so this backward is differentiable
            xg, hg, c = self.inputs
            H = c.shape[-1]
            pre = xg + hg
            i, f = sigmoid(pre[..., :H]), sigmoid(pre[..., H:2 * H])
            g, o = tanh(pre[..., 2 * H:3 * H]), sigmoid(pre[..., 3 * H:])
            tc = tanh(f * c + i * g)
        else:
            acts, tc, c = self.saved
            H = c.shape[-1]
            i, f, g, o = acts[..., :H], acts[..., H:2 * H], acts[..., 2 * H:3 * H], acts[..., 3 * H:]
        gc = gc + gh * o * (1 - tc * tc)
        dgates = xp.concatenate([gc * g * i * (1 - i), gc * c * f * (1 - f), gc * i * (1 - g * g),
                                 gh * tc * o * (1 - o)], axis=-1)
        need = self.needs_input_grad
        return (dgates if need[0] else None, dgates if need[1] else None, gc * f if need[2] else None)

    def forward_gpu(self, xp, xg, hg, c):
        if not _fits(4, xg, hg, c):
            self.gpu_path = False
            return self.forward(xp, xg, hg, c)
        acts = xp.empty(xg.shape, dtype=c.dtype)
        tc, h, c_next = (xp.empty(c.shape, dtype=c.dtype) for _ in range(3))
        _launch(xp, "tinynet_lstm_cell_fwd", c, (xg, hg, c), (acts, tc, h, c_next))
        self.save_for_backward(acts, tc, c)  # c as given, so the in-place checks see it
        return h, c_next

    def backward_gpu(self, xp, gh, gc):
        acts, tc, c = self.saved
        if not cuda.supported(gh, gc) or not gh.dtype == gc.dtype == c.dtype:
            return self.backward(xp, gh, gc)
        need = self.needs_input_grad
        dgates = xp.empty(acts.shape, dtype=c.dtype) if need[0] or need[1] else None
        dc = xp.empty(c.shape, dtype=c.dtype) if need[2] else None
        _launch(xp, "tinynet_lstm_cell_bwd", c, (gh, gc, acts, tc, c), (dgates, dc))
        return (dgates if need[0] else None, dgates if need[1] else None, dc)


class GRUGates(Op):
    """``h'`` from the gate pre-activations ``xg``, ``hg`` (N, 3H) and the state ``h`` (N, H)."""
    name = "gru_cell"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, xg, hg, h):
        H = h.shape[-1]
        rz = xg[..., :2 * H] + hg[..., :2 * H]
        _sigmoid_(xp, rz)
        n = rz[..., :H] * hg[..., 2 * H:]
        n += xg[..., 2 * H:]
        xp.tanh(n, out=n)
        self.save_for_backward(rz, n, hg, h)
        out = h - n
        out *= rz[..., H:]
        out += n
        return out

    def backward(self, xp, gy):
        if is_graph(xp):
            xg, hg, h = self.inputs
            H = h.shape[-1]
            r = sigmoid(xg[..., :H] + hg[..., :H])
            z = sigmoid(xg[..., H:2 * H] + hg[..., H:2 * H])
            hn = hg[..., 2 * H:]
            n = tanh(xg[..., 2 * H:] + r * hn)
        else:
            rz, n, hg, h = self.saved
            H = h.shape[-1]
            r, z, hn = rz[..., :H], rz[..., H:], hg[..., 2 * H:]
        dn = gy * (1 - z) * (1 - n * n)
        dr = dn * hn * r * (1 - r)
        dz = gy * (h - n) * z * (1 - z)
        need = self.needs_input_grad
        dxg = xp.concatenate([dr, dz, dn], axis=-1) if need[0] else None
        dhg = xp.concatenate([dr, dz, dn * r], axis=-1) if need[1] else None
        return dxg, dhg, gy * z if need[2] else None

    def forward_gpu(self, xp, xg, hg, h):
        if not _fits(3, xg, hg, h):
            self.gpu_path = False
            return self.forward(xp, xg, hg, h)
        H = h.shape[-1]
        rz = xp.empty(h.shape[:-1] + (2 * H,), dtype=h.dtype)
        n, out = xp.empty(h.shape, dtype=h.dtype), xp.empty(h.shape, dtype=h.dtype)
        _launch(xp, "tinynet_gru_cell_fwd", h, (xg, hg, h), (rz, n, out))
        self.save_for_backward(rz, n, hg, h)  # hg and h as given
        return out

    def backward_gpu(self, xp, gy):
        rz, n, hg, h = self.saved
        if not cuda.supported(gy) or gy.dtype != h.dtype:
            return self.backward(xp, gy)
        need = self.needs_input_grad
        dxg = xp.empty(hg.shape, dtype=h.dtype) if need[0] else None
        dhg = xp.empty(hg.shape, dtype=h.dtype) if need[1] else None
        dh = xp.empty(h.shape, dtype=h.dtype) if need[2] else None
        _launch(xp, "tinynet_gru_cell_bwd", h, (gy, rz, n, hg, h), (dxg, dhg, dh))
        return dxg, dhg, dh


def lstm_gates(input_gates, hidden_gates, cx):
    """The LSTM cell's pointwise math: ``(hy, cy)`` from ``input_gates = x W_ih^T + b_ih``,
    ``hidden_gates = h W_hh^T + b_hh`` (both (N, 4H), gates i, f, g, o) and ``cx`` (N, H)."""
    return LSTMGates().apply(input_gates, hidden_gates, cx)


def gru_gates(input_gates, hidden_gates, hx):
    """The GRU cell's pointwise math: ``hy`` from ``input_gates = x W_ih^T + b_ih``,
    ``hidden_gates = h W_hh^T + b_hh`` (both (N, 3H), gates r, z, n) and ``hx`` (N, H)."""
    return GRUGates().apply(input_gates, hidden_gates, hx)


def _linear(x, w, b):
    return Linear().apply(x, w, b)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``; x (N, H_in), hx (N, H).
    Arguments are not checked (``nn.RNNCell`` checks them)."""
    return tanh(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with ReLU: ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return relu(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: ``(h', c')`` for x (N, H_in) and ``hx = (h, c)``, each (N, H)."""
    return lstm_gates(_linear(input, w_ih, b_ih), _linear(hx[0], w_hh, b_hh), hx[1])


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: ``h'`` for x (N, H_in) and hx (N, H)."""
    return gru_gates(_linear(input, w_ih, b_ih), _linear(hx, w_hh, b_hh), hx)


def _direction(mode, x, h, c, weights, reverse):
    """One layer in one direction over x (L, N, H_in): the outputs (L, N, H_out), h_n and c_n."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xg = _linear(x, w_ih, b_ih)  # the input projection of the whole sequence
    if mode == "LSTM" and w_hr is None and LSTMSequence.runs_on(xg.array, h.array, c.array, w_hh.array,
                                                               None if b_hh is None else b_hh.array):
        return LSTMSequence(reverse).apply(xg, h, c, w_hh, b_hh)  # the whole recurrence as one op
    if mode == "GRU" and GRUSequence.runs_on(xg.array, h.array, w_hh.array, None if b_hh is None else b_hh.array):
        out, h = GRUSequence(reverse).apply(xg, h, w_hh, b_hh)  # the whole recurrence as one op, on the CPU
        return out, h, c
    if mode in ("RNN_TANH", "RNN_RELU") and RNNSequence.runs_on(xg.array, h.array, w_hh.array,
                                                                None if b_hh is None else b_hh.array):
        nonlinearity = "tanh" if mode == "RNN_TANH" else "relu"
        out, h = RNNSequence(nonlinearity, reverse).apply(xg, h, w_hh, b_hh)  # one op, on the CPU
        return out, h, c
    steps = unbind(xg, 0)
    if reverse:
        steps = steps[::-1]
    outs = []
    for xg in steps:
        hg = _linear(h, w_hh, b_hh)
        if mode == "LSTM":
            h, c = LSTMGates().apply(xg, hg, c)
            if w_hr is not None:
                h = _linear(h, w_hr, None)
        elif mode == "GRU":
            h = GRUGates().apply(xg, hg, h)
        elif mode == "RNN_TANH":
            h = tanh(xg + hg)
        else:
            h = relu(xg + hg)
        outs.append(h)
    if reverse:
        outs.reverse()
    return stack(outs, 0), h, c


def recurrent(mode, input, hx, cx, weights, num_layers, dropout, training, bidirectional):
    """A stack of recurrent layers over a time-major sequence (the math of ``nn.RNN``,
    ``nn.LSTM`` and ``nn.GRU``; they check the arguments).

    Args:
        mode (str): ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        input (Tensor): (L, N, H_in), L >= 1.
        hx (Tensor): (num_layers * D, N, H_out) initial hidden states.
        cx (Tensor or None): (num_layers * D, N, H) initial cell states (LSTM only).
        weights (list): per layer and direction (layer-major), ``(w_ih, w_hh, b_ih, b_hh, w_hr)``
            with ``None`` for absent biases or projection.
        dropout (float): probability of zeroing each output element of every layer but the
            last, when ``training``.

    Returns:
        ``(output (L, N, D * H_out), h_n, c_n)``; ``c_n`` is None unless ``mode == "LSTM"``.
    """
    # --- cuDNN RNN hook (issue 33): the whole stack as one cuDNN op when
    # tinynet.backends.cudnn.rnn_enabled is on and cuDNN takes the call (tinynet.ops.rnn_cudnn) ---
    done = cudnn_recurrent(mode, input, hx, cx, weights, num_layers, dropout, training, bidirectional)
    if done is not None:
        return done
    # --- end of the cuDNN RNN hook ---
    D = 2 if bidirectional else 1
    hs = unbind(hx, 0)
    cs = unbind(cx, 0) if cx is not None else [None] * len(hs)
    h_n, c_n = [], []
    x = input
    for layer in range(num_layers):
        if layer and dropout > 0:
            x = _dropout(x, dropout, training)
        outs = []
        for d in range(D):
            k = layer * D + d
            out, h, c = _direction(mode, x, hs[k], cs[k], weights[k], reverse=d == 1)
            outs.append(out)
            h_n.append(h)
            c_n.append(c)
        x = cat(outs, 2) if D == 2 else outs[0]
    return x, stack(h_n, 0), stack(c_n, 0) if cx is not None else None
