"""One Elman RNN layer (``tanh`` or ``relu``) over a whole sequence as one op, on the CPU.

The counterpart of :class:`tinynet.ops.rnn_sequence.LSTMSequence` for ``nn.RNN``. The generic
path (:func:`tinynet.ops.rnn._direction`) records three ops a time step (the recurrent
``Linear``, the add of the input projection and the nonlinearity) and its backward runs three
op backwards a step through the autograd engine; on the 2-core CPU that bookkeeping costs more
than the step's (20, 200) x (200, 200) product. Here the recurrence of one layer and direction
is one op, with the same arithmetic in the same order, so the results are the generic path's
bit for bit (``tests/test_rnn_sequence_elman.py`` compares them byte for byte).

Forward, with ``x_g = x W_ih^T + b_ih`` the input projection of the whole sequence (T, N, H)::

    a_t = h_{t-1} W_hh^T      a_t += b_hh      h_t = act(x_g[t] + a_t)      act = tanh or relu

Backward, with ``dh`` the gradient reaching ``h_t`` (from the output and from step ``t + 1``)::

    dG_t = dh * (1 - h_t^2)  (tanh)   or   dh * (h_t > 0)  (relu)
    dh_{t-1} = dG_t W_hh     dx_g[t] = dG_t
    dW_hh = sum_t dG_t^T h_{t-1}      db_hh = sum_t (sum over the batch of dG_t)

The weight and bias gradients are summed step by step, last step first, as the autograd
engine sums the per-step ``Linear`` gradients on the generic path (one (H, N) x (N, H)
product a step, not one product over all the steps, whose sums would round differently),
after the backward walk on the calling thread (on the pool's worker during the walk they
were slower: the two threads' small NumPy calls wait for each other's GIL).
The gradient-free factor ``1 - h_t^2`` (or the mask) is one pass over the sequence.

Saved: the outputs (the hidden states) and ``h0``. Twice differentiable: a ``create_graph``
backward recomputes the recurrence from the inputs with tinynet's ops
(:meth:`RNNSequence._graph_backward`). CuPy arrays keep the per-step ops (their ``runs_on``
is False).
"""
import numpy

from .. import parallel
from ..autograd import Op
from .util import is_graph


class RNNSequence(Op):
    """One Elman layer and direction over a sequence: ``(out, h_n)`` from the input projection
    ``xg`` (T, N, H) (``x W_ih^T + b_ih``, the whole sequence), the initial state ``h0`` (N, H),
    ``w_hh`` (H, H) and ``b_hh`` (H,) or None, NumPy arrays of one floating dtype.
    ``nonlinearity`` is ``"tanh"`` or ``"relu"``; ``reverse`` runs the steps from last to first
    (the backward direction of a bidirectional layer); ``out[t]`` is always the state after
    the input at position ``t``. Arguments are not checked (``nn.RNN`` checks them)."""
    name = "rnn"
    twice_differentiable = True
    materialize_grads = False  # an output that got no gradient arrives as None

    def __init__(self, nonlinearity="tanh", reverse=False):
        self.nonlinearity = nonlinearity
        self.reverse = reverse

    @staticmethod
    def runs_on(xg, h0, w_hh, b_hh):
        """True when this op takes these arrays: NumPy ones of one float32/float64 dtype (on the
        GPU, and for other dtypes, ``nn.RNN`` records its per-step ops)."""
        arrays = [a for a in (xg, h0, w_hh, b_hh) if a is not None]
        return (all(type(a) is numpy.ndarray for a in arrays) and xg.dtype.kind == "f"
                and xg.dtype.itemsize >= 4 and all(a.dtype == xg.dtype for a in arrays))

    def _order(self, steps):
        return range(steps - 1, -1, -1) if self.reverse else range(steps)

    def forward(self, xp, xg, h0, w_hh, b_hh):
        T, N, H = xg.shape
        out = numpy.empty((T, N, H), dtype=xg.dtype)
        hw = numpy.empty((N, H), dtype=xg.dtype)
        w_t = w_hh.T  # the transposed view, as Linear multiplies (the same BLAS call, so the same bits)
        tanh = self.nonlinearity == "tanh"
        h = h0
        for t in self._order(T):
            parallel.matmul(h, w_t, out=hw)  # split over the threads when large (row blocks: the same bits)
            if b_hh is not None:
                hw += b_hh
            h = out[t]
            numpy.add(xg[t], hw, out=h)
            if tanh:
                numpy.tanh(h, out=h)
            else:
                numpy.maximum(h, 0, out=h)
        if True in self.needs_input_grad:
            self.save_for_backward(out, h0, w_hh)
        return out, h.copy()

    def backward(self, xp, g_out, g_hn):
        if is_graph(xp):
            return self._graph_backward(g_out, g_hn)
        out, h0, w_hh = self.saved
        T, N, H = out.shape
        dt = out.dtype
        order = list(self._order(T))
        need_x, need_h, need_w, need_b = self.needs_input_grad
        # the factor of dG that does not depend on the gradient, for every step at once
        if self.nonlinearity == "tanh":
            fac = numpy.multiply(out, out)
            numpy.subtract(1, fac, out=fac)
        else:
            fac = out > 0
        dgates = numpy.empty((T, N, H), dtype=dt)
        dh = None if g_hn is None else numpy.asarray(g_hn, dtype=dt)
        for j, t in enumerate(reversed(order)):
            d = dgates[t]
            if g_out is not None and dh is not None:
                numpy.add(g_out[t], dh, out=d)
            elif g_out is not None:
                d[...] = g_out[t]
            elif dh is not None:
                d[...] = dh
            else:
                d[...] = 0
            d *= fac[t]
            if j < T - 1 or need_h:
                dh = parallel.matmul(d, w_hh)
        # the per-step weight and bias gradients summed last step first (the engine's order on the
        # generic path), after the walk on this thread: handed to the pool's worker block by block
        # during the walk, they took longer (one (35, 20, 200) layer: 2.0-2.2 against 1.5-1.6 ms),
        # the worker's NumPy calls and the walk's small ones waiting for each other's GIL
        gw = gb = None
        for t in reversed(order):
            d = dgates[t]
            if need_w:
                p = d.T @ (out[t + 1 if self.reverse else t - 1] if t != order[0] else h0)
                gw = p if gw is None else numpy.add(gw, p, out=gw)
            if need_b:
                s = d.sum(axis=0)
                gb = s if gb is None else numpy.add(gb, s, out=gb)
        return dgates if need_x else None, dh if need_h else None, gw, gb

    def _graph_backward(self, g_out, g_hn):
        """The backward on tensors (``create_graph``): the forward recomputed from the inputs
        and the recurrence above, both with tinynet's differentiable ops."""
        from .activation import relu, tanh
        from .creation import zeros_like
        from .join import stack
        xg, h0, w_hh, b_hh = self.inputs
        T = xg.shape[0]
        order = list(self._order(T))
        act = tanh if self.nonlinearity == "tanh" else relu
        h, steps = h0, {}
        for t in order:
            a = h @ w_hh.T
            a = a + b_hh if b_hh is not None else a
            y = act(xg[t] + a)
            steps[t] = (y, h)
            h = y
        dh = zeros_like(h0) if g_hn is None else g_hn
        dxs, gw, gb = {}, None, None
        for t in reversed(order):
            y, hp = steps[t]
            if g_out is not None:
                dh = dh + g_out[t]
            d = dh * (1 - y * y) if self.nonlinearity == "tanh" else dh * (y > 0)
            dxs[t] = d
            gw = d.T @ hp if gw is None else gw + d.T @ hp
            gb = d.sum(0) if gb is None else gb + d.sum(0)
            dh = d @ w_hh
        need_x, need_h, need_w, need_b = self.needs_input_grad
        gx = stack([dxs[t] for t in range(T)], 0) if need_x else None
        return gx, dh if need_h else None, gw if need_w else None, gb if need_b and b_hh is not None else None
