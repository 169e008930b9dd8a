"""``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` on the GPU through cuDNN's RNN API.

On by default, as in PyTorch (``tinynet.backends.cudnn.rnn_enabled = False`` or
``TINYNET_CUDNN_RNN=0`` in the environment turns it off): a stack of recurrent layers on CuPy
arrays goes to :class:`CudnnRNN`, one op for the whole stack (PyTorch's ``_cudnn_rnn``): the
weights are packed into cuDNN's weight space by one gather (indices cached per network
shape, :mod:`tinynet.kernels.cudnn_rnn_layout`), ``cudnnRNNForward`` runs every layer,
direction and step, and backward is ``cudnnRNNBackwardData_v8`` +
``cudnnRNNBackwardWeights_v8`` with the weight-space gradient gathered back into one
gradient per parameter. The math is cuDNN's (NVIDIA cuDNN API reference, the RNN cell
formulas of ``cudnnRNNMode_t``), the same cells as :mod:`tinynet.ops.rnn`: Elman RNN with
tanh or ReLU, LSTM (gates i, f, g, o), GRU (r, z, n, the recurrent bias of n inside
``r * (.)``).

Taken: float32, float64 or float16 CuPy arrays of one dtype, tinynet's GPU kernels enabled
(``TINYNET_KERNELS``), a non-empty batch, every layer with biases or none, no LSTM
projection (``proj_size``), and a configuration cuDNN accepts. Anything else -- and every
CPU call -- keeps tinynet's own path (:func:`tinynet.ops.rnn.recurrent`), with the same
results. Dropout between layers (``dropout > 0`` while training) is tinynet's: the stack
then runs as one cuDNN call per layer with :func:`tinynet.ops.dropout.dropout` between.
float32 uses TF32 tensor cores when ``tinynet.backends.cudnn.allow_tf32`` is True (the
default, as PyTorch's cuDNN RNNs do); set it False for full float32 products.

Not twice differentiable: a ``create_graph`` backward gives first derivatives, and
differentiating those again raises :class:`~tinynet.errors.AutogradError`, as PyTorch's
cuDNN RNN backward does.
"""
from .. import backend
from ..autograd import Op
from ..backends import cudnn as settings
from ..errors import BackendError
from ..kernels import cudnn_rnn
from .dropout import dropout as _dropout
from .join import cat

_DTYPES = ("float32", "float64", "float16")


class CudnnRNN(Op):
    """A stack of recurrent layers as one cuDNN call: ``(y, h_n[, c_n])`` from ``x``
    (T, N, I), ``hx`` (num_layers * D, N, H) or None (zeros), ``cx`` (same, LSTM only, or
    None) and the parameters in PyTorch's flat order (per layer and direction ``w_ih``
    (G*H, I_l), ``w_hh`` (G*H, H), then ``b_ih``, ``b_hh`` (G*H,) when biased). y is
    (T, N, D*H); h_n and c_n have hx's shape. CuPy arrays only (float32/float64/float16)."""
    name = "cudnn_rnn"
    twice_differentiable = False
    materialize_grads = False  # an output that got no gradient arrives as None

    def __init__(self, net, shape):
        self.net, self.shape = net, shape

    def forward(self, xp, *args):
        raise BackendError("cudnn_rnn: runs on CuPy arrays with tinynet's GPU kernels enabled only")

    def forward_gpu(self, xp, x, hx, cx, *params):
        x = xp.ascontiguousarray(x)
        hx = None if hx is None else xp.ascontiguousarray(hx)
        cx = None if cx is None else xp.ascontiguousarray(cx)
        space = self.net.pack_weights(xp, params)
        training = True in self.needs_input_grad
        y, hy, cy, reserve = cudnn_rnn.forward(self.net, self.shape, x, hx, cx, space, training)
        if training:
            self.save_for_backward(x, hx, cx, space, y, reserve)
        return (y, hy, cy) if cy is not None else (y, hy)

    def backward_gpu(self, xp, gy, ghy, gcy=None):
        x, hx, cx, space, y, reserve = self.saved
        need = self.needs_input_grad
        dy = xp.zeros(y.shape, dtype=y.dtype) if gy is None else xp.ascontiguousarray(gy, dtype=y.dtype)
        dhy = None if ghy is None else xp.ascontiguousarray(ghy, dtype=y.dtype)
        dcy = None if gcy is None else xp.ascontiguousarray(gcy, dtype=y.dtype)
        need_w = True in need[3:]
        # cuDNN's backward writes into the reserve space: a second backward through the same
        # graph (retain_graph=True, gradcheck's one Jacobian row per call) read the first one's
        # leftovers and got wrong dx (zeros, seen on an H200), so each backward works on a copy
        reserve = reserve.copy()
        dx, dhx, dcx, dspace = cudnn_rnn.backward(self.net, self.shape, x, hx, cx, space, y, reserve, dy, dhy, dcy,
                                                  need[0], need[1], need[2], need_w)
        grads = self.net.unpack_grads(xp, dspace) if need_w else [None] * (len(need) - 3)
        return (dx, dhx, dcx, *(g if n else None for g, n in zip(grads, need[3:])))


def enabled():
    """True when the switch sends RNN stacks to cuDNN (``tinynet.backends.cudnn.rnn_enabled``
    and cuDNN not switched off by ``enabled = False`` or ``TINYNET_CUDNN=never``)."""
    return bool(settings.rnn_enabled) and settings.enabled and settings.mode != "never"


def _params(weights, bias):
    out = []
    for w_ih, w_hh, b_ih, b_hh, _ in weights:
        out += [w_ih, w_hh] + ([b_ih, b_hh] if bias else [])
    return out


def _takes(input, hx, cx, weights):
    """``(dtype name, bias)`` when :class:`CudnnRNN` can take these tensors, else None."""
    if not backend.kernels_enabled or input.shape[1] == 0:
        return None
    if any(w[4] is not None for w in weights):  # LSTM projection: tinynet's path
        return None
    biased = {w[2] is not None and w[3] is not None for w in weights}
    mixed = {(w[2] is None) != (w[3] is None) for w in weights}
    if len(biased) != 1 or True in mixed:
        return None
    tensors = [input] + [t for t in (hx, cx) if t is not None] + _params(weights, biased == {True})
    if not all(type(t.array) is backend._CUPY_NDARRAY for t in tensors):
        return None
    kinds = {str(t.array.dtype) for t in tensors}
    if len(kinds) != 1 or next(iter(kinds)) not in _DTYPES:
        return None
    return next(iter(kinds)), biased == {True}


def cudnn_recurrent(mode, input, hx, cx, weights, num_layers, dropout, training, bidirectional):
    """:func:`tinynet.ops.rnn.recurrent` through cuDNN (same arguments and results), or None
    when the switch is off or cuDNN does not take the call (the caller then runs its own path)."""
    if not enabled():
        return None
    took = _takes(input, hx, cx, weights)
    if took is None or not cudnn_rnn.available()[0]:
        return None
    dtype, bias = took
    D = 2 if bidirectional else 1
    T, N, I = input.shape
    H = weights[0][1].shape[1]
    per_layer = dropout > 0 and training and num_layers > 1
    groups = [(layer, 1) for layer in range(num_layers)] if per_layer else [(0, num_layers)]
    plans = []
    for first, count in groups:
        size = I if first == 0 else D * H
        p = cudnn_rnn.plan(mode, dtype, size, H, count, bidirectional, bias, bool(settings.allow_tf32), T, N)
        if p is None:
            return None
        plans.append(p)
    params = _params(weights, bias)
    per = 4 if bias else 2
    x, h_n, c_n = input, [], []
    for (first, count), (net, shape) in zip(groups, plans):
        if first:
            x = _dropout(x, dropout, training)
        lo, hi = first * D, (first + count) * D
        h0 = hx if count == num_layers or hx is None else hx[lo:hi]
        c0 = cx if count == num_layers or cx is None else cx[lo:hi]
        outs = CudnnRNN(net, shape).apply(x, h0, c0, *params[lo * per:hi * per])
        x = outs[0]
        h_n.append(outs[1])
        if mode == "LSTM":
            c_n.append(outs[2])
    h = h_n[0] if len(h_n) == 1 else cat(h_n, 0)
    c = (c_n[0] if len(c_n) == 1 else cat(c_n, 0)) if mode == "LSTM" else None
    return x, h, c
