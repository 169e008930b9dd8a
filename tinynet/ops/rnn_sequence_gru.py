"""One GRU layer over a whole sequence as one op, on the CPU (NumPy arrays).

The counterpart of :class:`tinynet.ops.rnn_sequence.LSTMSequence` for ``nn.GRU``: instead of
two ops per time step (the recurrent product and :class:`tinynet.ops.rnn.GRUGates`), the
recurrence of one layer and direction is one op whose forward loops over the steps writing
into preallocated buffers and whose backward loops back with only what the recurrence needs
per step, the recurrent weight gradient taken as one product per block of steps, on a worker
thread while the recurrence goes on (:func:`tinynet.parallel.submit`).

The formulas are the GRU's (Cho et al., 2014, arXiv:1406.1078) in PyTorch's formulation,
gates r, z, n in the order of ``weight_hh_l*``'s rows, with ``x_g = x W_ih^T + b_ih`` (the
input projection of the whole sequence, (T, N, 3H)) and ``a = h W_hh^T + b_hh``::

    r = sigmoid(x_r + a_r)    z = sigmoid(x_z + a_z)    n = tanh(x_n + r * a_n)
    h' = (1 - z) * n + z * h

(``a_n = W_hn h + b_hn`` keeps its bias inside ``r * (.)``). Backward, with ``dh`` the
gradient reaching ``h'`` (from the output and from step ``t + 1``)::

    dn = dh (1 - z)(1 - n^2)    dz = dh (h - n) z (1 - z)    dr = dn a_n r (1 - r)
    dx_g = [dr, dz, dn]         da = [dr, dz, dn * r]        dh_prev = dh * z + da W_hh
    dW_hh = sum_t da_t^T h_{t-1}                             db_hh = sum over steps and samples of da

Every gate gradient is ``dh`` times a factor that does not depend on the gradient
(``k_r = (1 - z)(1 - n^2) a_n r (1 - r)``, ``k_z = (h - n) z (1 - z)``, ``k_n = (1 - z)(1 - n^2)``
and ``k_n r`` for ``da``'s third block): those are computed for all the steps at once before
the backward loop, so a step is one broadcast product ``da_t = dh * [k_r, k_z, k_n r]``, the
recurrent product ``da_t W_hh`` and two small passes; ``dx_g``'s third block, ``dh k_n``, is one
pass over the sequence after the loop, from the ``dh`` of every step kept on the way.

Saved: ``r`` and ``z`` (T, N, 2H), ``n`` and ``a_n`` (T, N, H) and the outputs (the hidden
states). Twice differentiable: a ``create_graph`` backward recomputes the recurrence from the
inputs with tinynet's ops (:meth:`GRUSequence._graph_backward`).
"""
import numpy

from .. import parallel
from ..autograd import Op
from .util import is_graph

WEIGHT_BLOCKS = 5  # blocks of steps whose weight gradient a worker adds while the recurrence goes on


def _sigmoid_(a):
    """Logistic function in place (``(tanh(a/2) + 1) / 2``, tinynet's formula)."""
    a *= 0.5
    numpy.tanh(a, out=a)
    a += 1
    a *= 0.5


class GRUSequence(Op):
    """One GRU layer and direction over a sequence: ``(out, h_n)`` from the input projection
    ``xg`` (T, N, 3H) (``x W_ih^T + b_ih``, the whole sequence), the initial state ``h0`` (N, H),
    ``w_hh`` (3H, H) and ``b_hh`` (3H,) or None, all NumPy arrays of one floating dtype.
    ``reverse`` runs the steps from last to first (the backward direction of a bidirectional
    layer); ``out[t]`` is always the state after the input at position ``t``. Arguments are not
    checked (``nn.GRU`` checks them)."""
    name = "gru"
    twice_differentiable = True
    materialize_grads = False  # an output that got no gradient arrives as None

    def __init__(self, reverse=False):
        self.reverse = reverse

    @staticmethod
    def runs_on(xg, h0, w_hh, b_hh):
        """True when this op takes these arrays: NumPy ones (on the GPU ``nn.GRU`` records its
        per-step ops, whose cell runs as one fused kernel)."""
        return all(type(a) is numpy.ndarray for a in (xg, h0, w_hh, b_hh) if a is not None)

    def _order(self, steps):
        return range(steps - 1, -1, -1) if self.reverse else range(steps)

    def forward(self, xp, xg, h0, w_hh, b_hh):
        T, N, G = xg.shape
        H = G // 3
        dt = xg.dtype
        rz = numpy.empty((T, N, 2 * H), dtype=dt)  # the r, z pre-activations, then the gates in place
        an = numpy.empty((T, N, H), dtype=dt)  # W_hn h + b_hn of every step
        ns = numpy.empty((T, N, H), dtype=dt)
        out = numpy.empty((T, N, H), dtype=dt)
        hw = numpy.empty((N, G), dtype=dt)
        w_t = numpy.ascontiguousarray(w_hh.T)  # OpenBLAS is faster on (N, H) x (H, 3H) than through the view
        if b_hh is not None:  # b_hr, b_hz added in one pass over the sequence, b_hn per step
            numpy.add(xg[..., :2 * H], b_hh[:2 * H], out=rz)
        else:
            rz[...] = xg[..., :2 * H]
        xn = xg[..., 2 * H:]
        h = h0
        for t in self._order(T):
            parallel.matmul(h, w_t, out=hw)  # split over the threads when large
            a, n, h_next = rz[t], ns[t], out[t]
            a += hw[:, :2 * H]
            _sigmoid_(a)
            if b_hh is not None:
                numpy.add(hw[:, 2 * H:], b_hh[2 * H:], out=an[t])
            else:
                an[t] = hw[:, 2 * H:]
            numpy.multiply(a[:, :H], an[t], out=n)
            n += xn[t]
            numpy.tanh(n, out=n)
            numpy.subtract(h, n, out=h_next)
            h_next *= a[:, H:]
            h_next += n
            h = h_next
        if True in self.needs_input_grad:
            self.save_for_backward(rz, ns, an, out, h0, w_hh)
        return out, h.copy()

    def backward(self, xp, g_out, g_hn):
        if is_graph(xp):
            return self._graph_backward(g_out, g_hn)
        rz, ns, an, out, h0, w_hh = self.saved
        T, N, H = out.shape
        G = 3 * H
        dt = out.dtype
        order = list(self._order(T))
        h_prev = numpy.empty_like(out)  # the state before each step, in position order
        first, rest = (T - 1, slice(0, T - 1)) if self.reverse else (0, slice(1, T))
        h_prev[first] = h0
        h_prev[rest] = out[slice(1, T) if self.reverse else slice(0, T - 1)]
        r, z = rz[..., :H], rz[..., H:]
        # the factors of the gate gradients: da = dh * [k_r, k_z, k_n r], dx_g = dh * [k_r, k_z, k_n]
        k_n = numpy.subtract(1, z)
        tmp_t = numpy.multiply(ns, ns)
        numpy.subtract(1, tmp_t, out=tmp_t)
        k_n *= tmp_t
        fac = numpy.empty((T, N, G), dtype=dt)
        numpy.subtract(1, r, out=tmp_t)
        tmp_t *= r
        tmp_t *= an
        numpy.multiply(k_n, tmp_t, out=fac[..., :H])
        numpy.subtract(1, z, out=tmp_t)
        tmp_t *= z
        numpy.subtract(h_prev, ns, out=fac[..., H:2 * H])
        fac[..., H:2 * H] *= tmp_t
        numpy.multiply(k_n, r, out=fac[..., 2 * H:])
        da = fac  # overwritten step by step with da
        dhs = tmp_t  # the gradient reaching each step's output (for dx_g's n block)
        dh = numpy.zeros((N, H), dtype=dt) if g_hn is None else numpy.array(g_hn, dtype=dt, order="C")
        tmp = numpy.empty((N, H), dtype=dt)
        need_x, need_h, need_w, need_b = self.needs_input_grad
        gw = numpy.zeros((G, H), dtype=dt) if need_w else None
        tasks, done = [], order[-1]  # done: the last position whose da is not yet in gw
        every = max(1, -(-T // WEIGHT_BLOCKS))
        # while the worker adds the weight gradient, the step's product stays on this thread: split
        # over the pool it would wait for the worker (one (35, 20, 650) layer's backward on the
        # 2-core machine: 31.0-32.4 ms split, 29.7-30.9 ms whole; benchmarks/NOTES.md)
        product = numpy.matmul if need_w else parallel.matmul

        def add_weight_grad(lo, hi):  # gw += da^T H_prev over positions [lo, hi), on a worker
            gw[...] += da[lo:hi].reshape(-1, G).T @ h_prev[lo:hi].reshape(-1, H)

        for j, t in enumerate(reversed(order)):
            d = dhs[t]
            if g_out is not None:
                numpy.add(dh, g_out[t], out=d)
            else:
                d[...] = dh
            a = da[t]
            a.reshape(N, 3, H)[...] *= d[:, None, :]  # (a view: a is a C-contiguous (N, 3H) row block)
            if j < T - 1 or need_h:
                numpy.multiply(d, z[t], out=tmp)
                product(a, w_hh, out=dh)
                dh += tmp
            if need_w and ((j + 1) % every == 0 or j == T - 1):  # off the recurrence's path, in a fixed order
                lo, hi = (done, t + 1) if self.reverse else (t, done + 1)
                tasks.append(parallel.submit(lambda lo=lo, hi=hi: add_weight_grad(lo, hi)))
                done = t + 1 if self.reverse else t - 1
        gb = da.reshape(T * N, G).sum(axis=0) if need_b else None
        gx = None
        if need_x:
            gx = numpy.empty((T, N, G), dtype=dt)
            gx[..., :2 * H] = da[..., :2 * H]
            numpy.multiply(dhs, k_n, out=gx[..., 2 * H:])
        for task in tasks:
            task.wait()
        return gx, dh if need_h else None, gw, gb

    def _graph_backward(self, g_out, g_hn):
        """The backward on tensors (``create_graph``): the forward recomputed from the inputs
        and the recurrence above, both with tinynet's differentiable ops."""
        from .activation import sigmoid, tanh
        from .creation import zeros_like
        from .join import cat, stack
        xg, h0, w_hh, b_hh = self.inputs
        T, H = xg.shape[0], h0.shape[-1]
        order = list(self._order(T))
        h, steps = h0, {}
        for t in order:
            a = h @ w_hh.T
            a = a + b_hh if b_hh is not None else a
            r = sigmoid(xg[t][:, :H] + a[:, :H])
            z = sigmoid(xg[t][:, H:2 * H] + a[:, H:2 * H])
            an = a[:, 2 * H:]
            n = tanh(xg[t][:, 2 * H:] + r * an)
            steps[t] = (r, z, n, an, h)
            h = (1 - z) * n + z * h
        dh = zeros_like(h0) if g_hn is None else g_hn
        dxs, gw, gb = {}, None, None
        for t in reversed(order):
            r, z, n, an, hp = steps[t]
            if g_out is not None:
                dh = dh + g_out[t]
            dn = dh * (1 - z) * (1 - n * n)
            dr = dn * an * r * (1 - r)
            dz = dh * (hp - n) * z * (1 - z)
            dxs[t] = cat([dr, dz, dn], -1)
            d = cat([dr, dz, dn * r], -1)
            gw = d.T @ hp if gw is None else gw + d.T @ hp
            gb = d.sum(0) if gb is None else gb + d.sum(0)
            dh = dh * z + d @ w_hh
        need_x, need_h, need_w, need_b = self.needs_input_grad
        gx = stack([dxs[t] for t in range(T)], 0) if need_x else None
        return gx, dh if need_h else None, gw if need_w else None, gb if need_b and b_hh is not None else None
