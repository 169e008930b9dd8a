"""One LSTM layer over a whole sequence as one op, for the CPU (NumPy arrays) and the GPU
(float32/float64 CuPy arrays, with tinynet's fused cell kernels).

``nn.LSTM``'s generic path (:func:`tinynet.ops.rnn._direction`) records two ops per time
step (the recurrent product and the fused gate op) and its backward runs, per step, a
product for the input gradient, another for the weight gradient and the gate formulas.
Here the whole recurrence of one layer and direction is one op: forward loops over the
steps writing into preallocated buffers; backward loops back over them with only what the
recurrence needs per step (``dh_{t-1} = dG_t W_hh``) and, after the loop, takes the weight
gradient of every step in one product,

    dW_hh = sum_t dG_t^T h_{t-1} = dG^T H_prev       ((4H, T*N) x (T*N, H)),
    db_hh = sum over steps and samples of dG,

where ``dG_t`` (N, 4H) is the gradient of the gate pre-activations of step ``t``. The
formulas are the LSTM's (Hochreiter & Schmidhuber, 1997; gates i, f, g, o in PyTorch's
order), as :class:`tinynet.ops.rnn.LSTMGates`::

    a = x_g + h W_hh^T + b_hh    i, f, o = sigmoid(a_i, a_f, a_o)    g = tanh(a_g)
    c' = f * c + i * g           h' = o * tanh(c')

and backward, with ``dh`` the gradient reaching ``h'`` (from the output and from step
``t + 1``) and ``dc`` the one reaching ``c'``::

    dc += dh * o * (1 - tanh(c')^2)
    dG = [dc * g * i (1 - i),  dc * c * f (1 - f),  dc * i * (1 - g^2),  dh * tanh(c') * o (1 - o)]
    dc_prev = dc * f           dh_prev = dG W_hh

The per-step factors that do not depend on the gradient (``g i (1 - i)``, ``c f (1 - f)``,
``i (1 - g^2)``, ``tanh(c') o (1 - o)`` and ``o (1 - tanh(c')^2)``) are computed outside the
backward loop, in ``WEIGHT_BLOCKS`` blocks of steps: the caller computes the first block the
loop walks, the pool's worker the others ahead of the loop (elementwise, so the same bits as
one pass), and the loop itself is a few small NumPy calls and one product per step. Forward
likewise adds ``b_hh`` to the input gates block by block on the worker ahead of the steps.

On the GPU each step is two launches forward (the recurrent product through cuBLAS into a
preallocated buffer, then ``rnn_cell.cu``'s LSTM cell kernel writing the step's slices of the
saved arrays) and three backward (the arriving output gradient added, the cell's backward
kernel, the product ``dG_t W_hh``), against about a dozen launches and two autograd nodes a step
on the generic path; the weight gradient is one product after the loop, as on the CPU.

Saved: the gate activations (T, N, 4H), ``tanh(c_t)`` and ``c_t`` (T, N, H) and the outputs
(the hidden states). Twice differentiable: a ``create_graph`` backward recomputes the
recurrence from the inputs with tinynet's ops (:meth:`LSTMSequence._graph_backward`).
"""
import numpy

from .. import backend, parallel
from ..autograd import Op
from ..kernels import cuda
from ..kernels import gemm as gpu_gemm
from .util import is_graph

WEIGHT_BLOCKS = 5  # blocks of steps whose weight gradient a worker adds while the recurrence goes on


def _sigmoid_(a):
    """Logistic function in place (``(tanh(a/2) + 1) / 2``, tinynet's formula)."""
    a *= 0.5
    numpy.tanh(a, out=a)
    a += 1
    a *= 0.5


class LSTMSequence(Op):
    """One LSTM layer and direction over a sequence: ``(out, h_n, c_n)`` from the input
    projection ``xg`` (T, N, 4H) (``x W_ih^T + b_ih``, the whole sequence), the initial state
    ``h0``, ``c0`` (N, H), ``w_hh`` (4H, H) and ``b_hh`` (4H,) or None. ``reverse`` runs the
    steps from last to first (the backward direction of a bidirectional layer); ``out[t]`` is
    always the state after the input at position ``t``. NumPy arrays, or CuPy arrays all
    float64 or float32/bfloat16 (bfloat16 computed in float32, as ``Op.apply`` widens it;
    :meth:`runs_on`)."""
    name = "lstm"
    twice_differentiable = True
    materialize_grads = False  # an output that got no gradient arrives as None
    gpu_saves_generic = True  # forward_gpu saves what forward does (a create_graph backward needs only the inputs)

    def __init__(self, reverse=False):
        self.reverse = reverse

    @staticmethod
    def runs_on(xg, h0, c0, w_hh, b_hh):
        """True when this op takes these arrays: NumPy ones, or CuPy arrays of one float32/float64
        dtype with tinynet's kernels enabled (else ``nn.LSTM`` records its per-step ops)."""
        arrays = [a for a in (xg, h0, c0, w_hh, b_hh) if a is not None]
        if all(type(a) is numpy.ndarray for a in arrays):
            return True
        if not backend.kernels_enabled or h0.size == 0 or not all(isinstance(a, backend._CUPY_NDARRAY) for a in arrays):
            return False
        kinds = {str(a.dtype) for a in arrays}  # bfloat16 (autocast's) is widened to float32 by Op.apply
        return kinds <= {"float32", "bfloat16"} or kinds == {"float64"}

    def _previous_states(self, xp, out, cs, h0, c0):
        """The states before each step, in position order (T, N, H): h0/c0 at the first step
        taken, then the saved outputs and cells shifted by one step in the run's direction."""
        T = out.shape[0]
        h_prev, c_prev = xp.empty_like(out), xp.empty_like(cs)
        first, rest = (T - 1, slice(0, T - 1)) if self.reverse else (0, slice(1, T))
        src = slice(1, T) if self.reverse else slice(0, T - 1)
        h_prev[first], c_prev[first] = h0, c0
        h_prev[rest], c_prev[rest] = out[src], cs[src]
        return h_prev, c_prev

    def _order(self, steps):
        return range(steps - 1, -1, -1) if self.reverse else range(steps)

    def _blocks(self, steps):
        """``WEIGHT_BLOCKS`` ranges ``(lo, hi)`` of positions, in the forward walk's order."""
        every = max(1, -(-steps // WEIGHT_BLOCKS))
        blocks = [(lo, min(steps, lo + every)) for lo in range(0, steps, every)]
        return blocks[::-1] if self.reverse else blocks

    def forward(self, xp, xg, h0, c0, w_hh, b_hh):
        T, N, G = xg.shape
        H = G // 4
        acts = numpy.empty((T, N, G), dtype=xg.dtype)  # the pre-activations, then the gates in place
        out = numpy.empty((T, N, H), dtype=xg.dtype)
        cs = numpy.empty((T, N, H), dtype=xg.dtype)
        tcs = numpy.empty((T, N, H), dtype=xg.dtype)
        tg = numpy.empty((N, H), dtype=xg.dtype)
        hw = numpy.empty((N, G), dtype=xg.dtype)
        w_t = numpy.ascontiguousarray(w_hh.T)  # OpenBLAS: (N, H) x (H, 4H) 1.8x faster than through the transposed view
        def with_bias(lo, hi):  # one pass over the sequence instead of an add per step
            if b_hh is not None:
                numpy.add(xg[lo:hi], b_hh, out=acts[lo:hi])
            else:
                acts[lo:hi] = xg[lo:hi]

        # the caller takes the first block of steps, a worker the next ones ahead of the walk
        blocks = self._blocks(T) if parallel.get_num_threads() > 1 else [(0, T)]
        with_bias(*blocks[0])
        ready = {hi - 1 if self.reverse else lo: parallel.submit(lambda lo=lo, hi=hi: with_bias(lo, hi))
                 for lo, hi in blocks[1:]}  # keyed by the block's first position in the walk
        h, c = h0, c0
        for t in self._order(T):
            if t in ready:
                ready.pop(t).wait()
            a = acts[t]
            a += parallel.matmul(h, w_t, out=hw)  # split over the threads when large (H ~ 650)
            numpy.tanh(a[:, 2 * H:3 * H], out=tg)  # g, before the sigmoid pass over all four gates
            _sigmoid_(a)
            a[:, 2 * H:3 * H] = tg
            c_next, tc, h_next = cs[t], tcs[t], out[t]
            numpy.multiply(a[:, H:2 * H], c, out=c_next)
            numpy.multiply(a[:, :H], tg, out=tg)
            c_next += tg
            numpy.tanh(c_next, out=tc)
            numpy.multiply(a[:, 3 * H:], tc, out=h_next)
            h, c = h_next, c_next
        if True in self.needs_input_grad:
            self.save_for_backward(acts, tcs, cs, out, h0, c0, w_hh)
        return out, h.copy(), c.copy()

    def backward(self, xp, g_out, g_hn, g_cn):
        if is_graph(xp):
            return self._graph_backward(g_out, g_hn, g_cn)
        acts, tcs, cs, out, h0, c0, w_hh = self.saved
        T, N, G = acts.shape
        H = G // 4
        order = list(self._order(T))
        h_prev, c_prev = self._previous_states(numpy, out, cs, h0, c0)
        i, f, g, o = (acts[..., k * H:(k + 1) * H] for k in range(4))
        # factors of dG that do not depend on the gradient: dG = [dc, dc, dc, dh] * fac, and k_c
        fac = numpy.empty_like(acts)
        k_c = numpy.empty_like(tcs)
        every = max(1, -(-T // WEIGHT_BLOCKS))
        blocks = self._blocks(T)[::-1]  # in the backward walk's order

        def factors(lo, hi):  # elementwise, so a block gives the bits of the whole
            s = slice(lo, hi)
            ib, fb, gg, ob, fc = i[s], f[s], g[s], o[s], fac[s]
            numpy.multiply(ib, 1 - ib, out=fc[..., :H])
            fc[..., :H] *= gg
            numpy.multiply(fb, 1 - fb, out=fc[..., H:2 * H])
            fc[..., H:2 * H] *= c_prev[s]
            numpy.multiply(gg, gg, out=fc[..., 2 * H:3 * H])
            numpy.subtract(1, fc[..., 2 * H:3 * H], out=fc[..., 2 * H:3 * H])
            fc[..., 2 * H:3 * H] *= ib
            numpy.multiply(ob, 1 - ob, out=fc[..., 3 * H:])
            fc[..., 3 * H:] *= tcs[s]
            kc = k_c[s]
            numpy.multiply(tcs[s], tcs[s], out=kc)  # o (1 - tanh(c)^2): how dh reaches dc
            numpy.subtract(1, kc, out=kc)
            kc *= ob

        # the caller takes the first block; a worker the next ones, ahead of the walk
        factors(*blocks[0])
        ready = {lo if self.reverse else hi - 1: parallel.submit(lambda lo=lo, hi=hi: factors(lo, hi))
                 for lo, hi in blocks[1:]}  # keyed by the block's first position in the walk
        dgates = fac  # overwritten step by step with dG
        dc = numpy.zeros((N, H), dtype=acts.dtype) if g_cn is None else g_cn.copy()
        dh = numpy.zeros((N, H), dtype=acts.dtype) if g_hn is None else g_hn.copy()
        tmp = numpy.empty((N, H), dtype=acts.dtype)
        need_x, need_h, need_c, need_w, need_b = self.needs_input_grad
        gw = numpy.zeros((G, H), dtype=acts.dtype) if need_w else None
        tasks, done = [], order[-1]  # done: the last position whose dG is not yet in gw

        def add_weight_grad(lo, hi):  # gw += dG^T H_prev over positions [lo, hi), on a worker
            gw[...] += dgates[lo:hi].reshape(-1, G).T @ h_prev[lo:hi].reshape(-1, H)

        for j, t in enumerate(reversed(order)):
            if t in ready:  # the first position of a block a worker prepares
                ready.pop(t).wait()
            if g_out is not None:
                dh += g_out[t]
            numpy.multiply(dh, k_c[t], out=tmp)
            dc += tmp
            d = dgates[t]
            d.reshape(N, 4, H)[:, :3] *= dc[:, None, :]  # (a view: d is a C-contiguous (N, 4H) row block)
            d[:, 3 * H:] *= dh
            dc *= f[t]
            parallel.matmul(d, w_hh, out=dh)
            if need_w and ((j + 1) % every == 0 or j == T - 1):  # off the recurrence's path, in a fixed order
                lo, hi = (done, t + 1) if self.reverse else (t, done + 1)
                tasks.append(parallel.submit(lambda lo=lo, hi=hi: add_weight_grad(lo, hi)))
                done = t + 1 if self.reverse else t - 1
        gb = dgates.reshape(T * N, G).sum(axis=0) if need_b else None
        for task in tasks:
            task.wait()
        return (dgates if need_x else None, dh if need_h else None, dc if need_c else None, gw, gb)

    def forward_gpu(self, xp, xg, h0, c0, w_hh, b_hh):
        T, N, G = xg.shape
        H = G // 4
        dt = xg.dtype
        xb = xp.ascontiguousarray(xg + b_hh if b_hh is not None else xg)  # b_hh added once, not per step
        acts = xp.empty((T, N, G), dtype=dt)
        out, cs, tcs = (xp.empty((T, N, H), dtype=dt) for _ in range(3))
        w_hh = xp.ascontiguousarray(w_hh)
        fn, n = cuda.kernel("rnn_cell.cu", "tinynet_lstm_cell_fwd", dt), N * H
        h, c = xp.ascontiguousarray(h0), xp.ascontiguousarray(c0)
        for t in self._order(T):  # tinynet's products (capturable in a CUDA graph, unlike CuPy's @)
            hw = gpu_gemm.matmul(h, w_hh, trans_b=True)
            cuda.launch(fn, n, (xb[t], hw, c, acts[t], tcs[t], out[t], cs[t], xp.int64(n), xp.int32(H)))
            h, c = out[t], cs[t]
        if True in self.needs_input_grad:
            self.save_for_backward(acts, tcs, cs, out, h0, c0, w_hh)
        return out, h.copy(), c.copy()

    def backward_gpu(self, xp, g_out, g_hn, g_cn):
        if is_graph(xp):
            return self._graph_backward(g_out, g_hn, g_cn)
        acts, tcs, cs, out, h0, c0, w_hh = self.saved
        T, N, G = acts.shape
        H = G // 4
        dt = acts.dtype
        order = list(self._order(T))
        h_prev, c_prev = self._previous_states(xp, out, cs, h0, c0)
        dgates = xp.empty_like(acts)
        dc = xp.zeros((N, H), dtype=dt) if g_cn is None else xp.array(g_cn, dtype=dt, order="C")
        dh = xp.zeros((N, H), dtype=dt) if g_hn is None else xp.array(g_hn, dtype=dt, order="C")
        g_out = None if g_out is None else xp.ascontiguousarray(g_out, dtype=dt)
        gh = xp.empty((N, H), dtype=dt)
        fn, n = cuda.kernel("rnn_cell.cu", "tinynet_lstm_cell_bwd", dt), N * H
        for t in reversed(order):
            if g_out is not None:
                xp.add(dh, g_out[t], out=gh)
            # the kernel reads dc's element before writing dc_prev into the same place
            cuda.launch(fn, n, (gh if g_out is not None else dh, dc, acts[t], tcs[t], c_prev[t], dgates[t], dc,
                                xp.int64(n), xp.int32(H)))
            dh = gpu_gemm.matmul(dgates[t], w_hh)
        need_x, need_h, need_c, need_w, need_b = self.needs_input_grad
        flat = dgates.reshape(T * N, G)
        gw = gpu_gemm.matmul(flat, xp.ascontiguousarray(h_prev).reshape(T * N, H), trans_a=True) if need_w else None
        gb = flat.sum(axis=0) if need_b else None
        return (dgates if need_x else None, dh if need_h else None, dc if need_c else None, gw, gb)

    def _graph_backward(self, g_out, g_hn, g_cn):
        """The backward on tensors (``create_graph``): the forward recomputed from the inputs
        and the recurrence above, both with tinynet's differentiable ops."""
        from .activation import sigmoid, tanh
        from .creation import zeros_like
        from .join import cat, stack
        xg, h0, c0, w_hh, b_hh = self.inputs
        T, H = xg.shape[0], h0.shape[-1]
        order = list(self._order(T))
        h, c, steps = h0, c0, {}
        for t in order:
            a = xg[t] + h @ w_hh.T
            a = a + b_hh if b_hh is not None else a
            i, f = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H])
            g, o = tanh(a[:, 2 * H:3 * H]), sigmoid(a[:, 3 * H:])
            c_next = f * c + i * g
            tc = tanh(c_next)
            steps[t] = (i, f, g, o, tc, h, c)
            h, c = o * tc, c_next
        dh = zeros_like(h0) if g_hn is None else g_hn
        dc = zeros_like(c0) if g_cn is None else g_cn
        dgs, gw, gb = {}, None, None
        for t in reversed(order):
            i, f, g, o, tc, hp, cp = steps[t]
            if g_out is not None:
                dh = dh + g_out[t]
            dc = dc + dh * o * (1 - tc * tc)
            d = cat([dc * g * i * (1 - i), dc * cp * f * (1 - f), dc * i * (1 - g * g), dh * tc * o * (1 - o)], -1)
            dgs[t] = d
            gw = d.T @ hp if gw is None else gw + d.T @ hp
            gb = d.sum(0) if gb is None else gb + d.sum(0)
            dc = dc * f
            dh = d @ w_hh
        need_x, need_h, need_c, need_w, need_b = self.needs_input_grad
        gx = stack([dgs[t] for t in range(T)], 0) if need_x else None
        return gx, dh if need_h else None, dc if need_c else None, gw if need_w else None, \
            gb if need_b and b_hh is not None else None
