"""Scaled dot-product attention (Vaswani et al., 2017, "Attention Is All You Need",
arXiv:1706.03762) as one op, with the closed-form backward of FlashAttention (Dao et al.,
2022, arXiv:2205.14135).

Forward, per batch entry and head (``Q`` is ``(L, E)``, ``K`` ``(S, E)``, ``V`` ``(S, Ev)``)::

    S = (Q * scale) K^T + M          M: the float mask, or -inf where a bool/causal mask is False
    P = softmax(S)                   row-wise, max-subtracted; a row with no allowed key gives 0s
    O = (P * D) V                    D: the dropout mask, 0 or 1/(1 - p) (D = 1 without dropout)

Backward, with ``Pd = P * D``::

    dV = Pd^T dO        dP = (dO V^T) * D        delta = rowsum(dO * O) = rowsum(dP * P)
    dS = P * (dP - delta)        dQ = dS K * scale        dK = dS^T Q * scale        dM = dS

What is saved: ``Q``, ``K``, ``V`` and the float mask (the op's inputs, alive anyway), the
output ``O`` and the row log-sum-exp ``lse = log(sum(exp(S)))`` -- one number per query row --
plus the bool dropout mask when ``dropout_p > 0`` and the ``(L, S)`` bool causal triangle
with ``is_causal``. Backward recomputes ``P = exp(S - lse)``
with one more ``Q K^T`` product instead of keeping the ``(..., L, S)`` probability matrix:
the extra memory is O(L) per head rather than O(L * S), and it is the state the fused
GPU kernels save too. The dropout mask is kept (1 byte per weight) rather than
regenerated from the random state, which keeps the generic path simple. On arrays one
``(..., L, S)`` buffer holds the scores and then the weights (masks, exp and the
normalisation are applied in place), in backward likewise ``P`` and then ``dS``.
Grouped-query attention repeats the key/value heads inside the op (a temporary) and sums
the gradient back over each group.

Second derivatives (``create_graph=True``) work: the backward is written with NumPy names
that exist on tensors, and on tensors it renormalises ``P`` (``softmax`` with the saved
``lse`` as a constant shift) and uses ``rowsum(dP * P)``, so every saved value it reads is
an input of the op or a constant.

On the GPU (CuPy arrays, tinynet's kernels on) the op runs fused FlashAttention-style
kernels (``tinynet/kernels/attention.cu``, launched by :mod:`tinynet.kernels.attention`):
the forward streams key/value tiles through shared memory with an online softmax and
writes ``O`` and a float32 ``lse``; the backward recomputes ``P`` tile by tile from them,
one pass for ``dK``/``dV`` and one for ``dQ``, never holding an ``(L, S)`` matrix. They take
float32 and float16 (float32 arithmetic inside), head dims ``E`` and ``Ev`` up to 128, any
``L`` and ``S``, ``scale``, ``is_causal``, bool and float masks broadcast over batch dims or
rows (read through their strides), broadcast batch dims, grouped-query heads and dropout
(``D`` drawn from tinynet's GPU Philox generator, as ``F.dropout`` on the GPU, in each kernel
again from the saved draw, so no mask is stored; such an op has no double backward, as
PyTorch's memory-efficient attention). The generic code runs instead for float64, head dims
over 128, empty inputs and more than six batch dims, and for dropout with a float mask that
needs its gradient; and a backward that needs the float mask's
gradient (``dM = dS``, itself ``(..., L, S)``) runs the generic backward from the fused
forward's saved state. The fused forward saves the same values as the generic one except
the causal triangle (O(L * S) bytes); so with ``is_causal`` a ``create_graph`` backward
reruns the generic forward first (``gpu_saves_generic``).
"""
import math
import numbers

import numpy

from ..kernels.cublas import product
from ..autograd import Op
from ..backends import cuda as cuda_settings
from ..dtypes import bfloat16, float32
from ..errors import ArgumentError, ArgumentTypeError, BackendError, DTypeError, IndexOutOfRangeError, ShapeError
from ..kernels import attention as fused
from ..kernels import cudnn_attention as cudnn_sdpa
from ..random import generator_for
from .autocast import autocast_op
from .cpu import attention as cpu_attention
from .util import cast, check_float, check_tensor, is_graph, unbroadcast


def _swap(xp, a):
    return a.swapaxes(-1, -2) if xp is numpy else xp.swapaxes(a, -1, -2)


def _expand_heads(xp, a, g):
    """Each head of ``a`` (heads in dim -3) repeated ``g`` times consecutively, as
    ``repeat_interleave(g, dim=-3)``: grouped-query attention's key/value heads."""
    if g == 1:
        return a
    shp = a.shape
    b = xp.broadcast_to(xp.expand_dims(a, -3), shp[:-3] + (shp[-3], g) + shp[-2:])
    return xp.reshape(b, shp[:-3] + (shp[-3] * g,) + shp[-2:])


def _fold_heads(xp, ga, g):
    """The gradient of :func:`_expand_heads`: each group of ``g`` heads summed."""
    if g == 1:
        return ga
    shp = ga.shape
    return xp.sum(xp.reshape(ga, shp[:-3] + (shp[-3] // g, g) + shp[-2:]), axis=-3)


class ScaledDotProductAttention(Op):
    """``softmax((Q * scale) K^T + mask) V`` with dropout on the weights; see the module
    docstring for the formulas and what is saved.

    Inputs: ``q, k, v`` and ``mask`` (a float array added to the scores, a bool array with
    True where a key takes part, or None). Settings: ``scale``, ``causal`` (top-left
    aligned lower triangle), ``p`` (dropout on the weights), ``groups`` (the grouped-query
    repeat factors of k and v).
    """
    name = "scaled_dot_product_attention"
    twice_differentiable = True

    def __init__(self, scale, causal=False, p=0.0, groups=(1, 1)):
        self.scale, self.causal, self.p, self.groups, self.drop = scale, causal, p, groups, None
        self.backends = cuda_settings.SDP_ENABLED  # the switches, read when the op runs

    @property
    def gpu_saves_generic(self):
        """The fused forward saves all the generic backward reads but the causal triangle."""
        return not self.causal

    def _scores(self, xp, q, k, mask, tri):
        """``(q * scale) k^T`` with the mask and the causal triangle ``tri`` applied; on arrays
        the masks are applied in place (one ``(..., L, S)`` buffer), on tensors out of place."""
        s = product(xp, q * self.scale, _swap(xp, _expand_heads(xp, k, self.groups[0])))
        graph = is_graph(xp)
        for m in (mask, tri):
            if m is None:
                continue
            in_place = not graph and numpy.broadcast_shapes(s.shape, m.shape) == s.shape
            if m.dtype == numpy.bool_:
                if in_place:
                    xp.copyto(s, s.dtype.type(-numpy.inf), where=~m)
                else:
                    s = xp.where(m, s, -numpy.inf if graph else s.dtype.type(-numpy.inf))  # float on tensors
            elif in_place:
                s += m
            else:
                s = s + m
        return s

    def _dropout_keep(self, xp, shape):
        if self.p >= 1.0:
            return xp.zeros(shape, dtype=numpy.bool_)
        return generator_for(xp).random(shape, dtype="float32") >= self.p

    def _drop_scale(self):
        return 0.0 if self.p >= 1.0 else 1.0 / (1.0 - self.p)

    def forward(self, xp, q, k, v, mask):
        if not (self.backends["math"] or (self.backends["flash"] and not is_graph(xp) and xp is numpy)):
            raise BackendError("scaled_dot_product_attention: no available kernel: the math backend is disabled "
                               "and no other backend runs here (the CPU runs the math code under the math or "
                               f"flash switch); enabled: {', '.join(k for k, on in self.backends.items() if on)}")
        tri = None
        if self.causal:  # top-left aligned, as tril(ones(L, S)); saved, a constant for backward
            L, S = q.shape[-2], k.shape[-2]
            tri = xp.arange(S)[None, :] <= xp.arange(L)[:, None]
        out, lse, keep = cpu_attention.forward(self, xp, q, k, v, mask, tri)  # self._forward, maybe in slices
        self.save_for_backward(q, k, v, mask, out, lse, keep, tri)
        return out

    def _forward(self, xp, q, k, v, mask, tri):
        """``(out, lse, keep)`` by the formulas of the module docstring."""
        p = self._scores(xp, q, k, mask, tri)  # the scores, turned into the weights in place
        got = cpu_attention.softmax_(p) if xp is numpy else None
        if got is None and xp is numpy:  # declined after using p: the scores anew for the generic softmax
            p = self._scores(xp, q, k, mask, tri)
        p, lse = got if got is not None else self._softmax(xp, p)
        keep = self._drop(xp, p)
        return product(xp, p, _expand_heads(xp, v, self.groups[1])), lse, keep

    @staticmethod
    def _softmax(xp, p):
        """``p`` (the scores) turned into the weights in place, and the row log-sum-exp."""
        m = xp.max(p, axis=-1, keepdims=True) if p.shape[-1] else xp.zeros(p.shape[:-1] + (1,), p.dtype)
        m = xp.where(xp.isfinite(m), m, p.dtype.type(0))  # a row with no allowed key: no shift
        p -= m
        xp.exp(p, out=p)
        total = xp.sum(p, axis=-1, keepdims=True)
        empty = total == 0
        p /= xp.where(empty, p.dtype.type(1), total)  # an empty row gives zeros (PyTorch's choice)
        # log-sum-exp per row; +inf for an empty row so that exp(S - lse) is 0 there in backward
        return p, xp.where(empty, p.dtype.type(numpy.inf), m + xp.log(total))

    def _drop(self, xp, p):
        """Dropout on the weights ``p`` in place; the keep mask (None without dropout)."""
        if not self.p > 0:
            return None
        keep = self._dropout_keep(xp, p.shape)
        p *= keep
        p *= p.dtype.type(self._drop_scale())
        return keep

    def backward(self, xp, gy):
        q, k, v, mask, out, lse, keep, tri = self.saved
        lse = cast(xp, lse, q.dtype)  # the fused GPU forward keeps it in float32
        return cpu_attention.backward(self, xp, q, k, v, mask, out, lse, keep, tri, gy)  # self._backward, maybe sliced

    def _backward(self, xp, q, k, v, mask, out, lse, keep, tri, gy):
        """``(dq, dk, dv, dmask)`` by the formulas of the module docstring."""
        graph = is_graph(xp)
        gq_, gk_ = self.groups
        s = self._scores(xp, q, k, mask, tri)
        if graph:  # a softmax whose shift (lse) is a constant: exact derivatives of P
            p = xp.exp(s - lse)
            total = xp.sum(p, axis=-1, keepdims=True)
            p = p / xp.where(total == 0, 1.0, total)
        else:
            s -= lse
            p = xp.exp(s, out=s)
        pd = p
        dp = product(xp, gy, _swap(xp, _expand_heads(xp, v, gk_)))
        if keep is not None:
            drop = (xp.astype(keep, p.dtype) if graph else keep.astype(p.dtype)) * self._drop_scale()
            pd, dp = p * drop, dp * drop
        need_q, need_k, need_v, need_m = self.needs_input_grad
        gv = None
        if need_v:
            gv = unbroadcast(xp, _fold_heads(xp, product(xp, _swap(xp, pd), gy), gk_), v.shape)
        if not (need_q or need_k or need_m):
            return None, None, gv, None
        del pd
        if graph:
            ds = p * (dp - xp.sum(dp * p, axis=-1, keepdims=True))
        else:  # rowsum(dO * O) equals rowsum(dP * P), with an (..., L, Ev) product instead of (..., L, S)
            dp -= (numpy.einsum("...j,...j->...", gy, out)[..., None] if xp is numpy  # (einsum: 5x NumPy's sum)
                   else xp.sum(gy * out, axis=-1, keepdims=True))
            dp *= p
            ds = dp
        gq = gk = gm = None
        if need_q:
            gq = unbroadcast(xp, product(xp, ds, _expand_heads(xp, k, gq_)) * self.scale, q.shape)
        if need_k:
            gk = unbroadcast(xp, _fold_heads(xp, product(xp, _swap(xp, ds), q * self.scale), gq_), k.shape)
        if need_m:
            gm = unbroadcast(xp, ds, mask.shape)
        return gq, gk, gv, gm

    bf16_kernel_gpu = True  # cuDNN takes bfloat16; the other paths widen it themselves (forward_gpu)

    def forward_gpu(self, xp, q, k, v, mask):
        """The first enabled backend that takes the call (``tinynet.backends.cuda``): cuDNN's
        flash attention (half types), tinynet's fused kernels, then the generic code; bfloat16
        inputs that cuDNN does not take run in float32 and the output is rounded back."""
        sdp, self.path, self.widened = self.backends, None, False
        if (sdp["cudnn"] or sdp["flash"]) and self.p == 0 and not self.needs_input_grad[3] \
                and cudnn_sdpa.usable(q, k, v, mask):
            self.bias, self.rows = (None, None) if mask is None else cudnn_sdpa.mask_bias(xp, mask, q, k.shape[2])
            got = cudnn_sdpa.forward(q, k, v, self.bias, self.scale, self.causal)
            if got is not None:
                self.path = "cudnn"
                if self.rows is not None:  # rows with no key left: zeros, as the math path
                    got = ((got[0].astype(float32) * self.rows).astype(q.dtype), got[1])
                self.save_for_backward(q, k, v, mask, got[0], got[1], None, None)
                return got[0]
        if q.dtype == bfloat16:
            self.widened = True
            q, k, v = (a.astype(float32) for a in (q, k, v))
            mask = mask.astype(float32) if mask is not None and mask.dtype == bfloat16 else mask
        if sdp["mem_efficient"] and (self.p == 0 or not self.needs_input_grad[3]) \
                and fused.usable(q, k, v, mask, self.groups):
            self.path, self.drop = "fused", fused.dropout_draw(self.p)  # the mask drawn again in backward
            if self.drop is not None:  # no mask is kept for the generic backward a double backward runs
                self.twice_differentiable = False
            out, lse = fused.forward(xp, q, k, v, mask, self.scale, self.causal, self.groups, self.drop)
            self.save_for_backward(q, k, v, mask, out, lse, None, None)
        elif not sdp["math"]:
            on = [name for name, flag in sdp.items() if flag]
            raise BackendError(f"scaled_dot_product_attention: no available kernel: the enabled backends "
                               f"({', '.join(on) or 'none'}) do not take {q.dtype} inputs of shapes {q.shape}, "
                               f"{k.shape}, {v.shape} with dropout_p={self.p} and mask "
                               f"{None if mask is None else (mask.dtype, mask.shape)}")
        else:
            out = self.forward(xp, q, k, v, mask)
        return out.astype(bfloat16) if self.widened else out

    def backward_gpu(self, xp, gy):
        need_q, need_k, need_v, need_m = self.needs_input_grad
        q, k, v, mask, out, lse, _, _ = self.saved
        if self.path == "cudnn":
            gy = gy if gy.dtype == q.dtype else gy.astype(q.dtype)
            if self.rows is not None:  # a row with no key passes no gradient
                gy = (gy.astype(float32) * self.rows).astype(q.dtype)
            got = cudnn_sdpa.backward(q, k, v, out, gy, lse, self.bias, self.scale, self.causal)
            if got is not None:
                return got[0] if need_q else None, got[1] if need_k else None, got[2] if need_v else None, None
            # a backward graph cuDNN refuses: the generic backward from the saved lse (bfloat16 widened)
            self.path, self.widened = None, q.dtype == bfloat16
            if self.widened:
                self.saved = tuple(a.astype(float32) if a is not None and a.dtype == bfloat16 else a
                                   for a in self.saved)
        gy = gy.astype(float32) if self.widened else gy
        if self.path is None or need_m:  # the generic code (dM = dS is an (..., L, S) array: no kernel makes it)
            grads = self.backward(xp, gy)
        else:
            gq, gk, gv = fused.backward(xp, q, k, v, mask, out, lse, gy, self.scale, self.causal, self.groups,
                                        need_q, need_k or need_v, self.drop)
            # the kernels give one gradient per entry of the broadcast batch: summed back to the inputs
            grads = (unbroadcast(xp, gq, q.shape) if need_q else None,
                     unbroadcast(xp, _fold_heads(xp, gk, self.groups[0]), k.shape) if need_k else None,
                     unbroadcast(xp, _fold_heads(xp, gv, self.groups[1]), v.shape) if need_v else None, None)
        if self.widened:
            grads = tuple(g.astype(bfloat16) if g is not None and g.dtype == float32 else g for g in grads)
        return grads


def _check_number(op, name, v):
    if type(v) is not float and type(v) is not int and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
        raise ArgumentTypeError(f"{op}: {name} must be a float, got {type(v).__name__}")
    return float(v)


@autocast_op
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """Attention weights ``softmax(query key^T * scale + mask)`` applied to ``value``.

    ``O = dropout(softmax(Q K^T * scale + M), dropout_p) V`` (Vaswani et al., 2017), computed
    by one op with a closed-form backward that recomputes the weights from the saved row
    log-sum-exp (see :mod:`tinynet.ops.attention`); on the GPU, for float32 and float16
    (bfloat16 widened) with head dims up to 128, by fused FlashAttention-style kernels, dropout
    included; without dropout, for float16 and bfloat16, by cuDNN's flash attention first.

    Args:
        query (Tensor): ``(N, ..., Hq, L, E)``, any number (0 or more) of leading batch dims;
            floating point.
        key (Tensor): ``(N, ..., H, S, E)``, query's dtype.
        value (Tensor): ``(N, ..., H, S, Ev)``, query's dtype. The batch dims of the three
            broadcast against each other.
        attn_mask (Tensor, optional): broadcastable to ``(N, ..., Hq, L, S)``. A bool mask
            marks with True the keys that take part (False: excluded); a float mask (query's
            dtype or float32) is added to the scores. A query row with no key left gives
            zeros. Default None.
        dropout_p (float): probability of zeroing each attention weight (the rest scaled by
            ``1 / (1 - p)``), drawn from tinynet's generator; applied whenever > 0, as in
            PyTorch (pass ``dropout_p=0`` in evaluation). Default 0.0.
        is_causal (bool): query ``i`` sees keys ``j <= i``, the lower triangle of an
            ``(L, S)`` matrix aligned at the top left (PyTorch's choice when ``L != S``).
            Default False.
        scale (float, optional): factor of the scores; default ``1 / sqrt(E)``.
        enable_gqa (bool): grouped-query attention: ``Hq`` a multiple of the key and value
            heads, each of which serves ``Hq / H`` consecutive query heads
            (``repeat_interleave`` along dim -3). Default False.

    Returns:
        Tensor ``(N, ..., Hq, L, Ev)``, query's dtype.

    Raises:
        ArgumentTypeError: a non-Tensor input, or a non-number ``dropout_p``/``scale``.
        DTypeError: non-float inputs, different dtypes, a mask that is neither bool, float32
            nor query's dtype.
        ShapeError: inputs below 2-D, ``E`` or ``S`` differing between the inputs, batch dims
            or a mask that do not broadcast, key/value heads that do not divide ``Hq``.
        ArgumentError: ``dropout_p`` outside [0, 1]; ``attn_mask`` together with ``is_causal``.
        IndexOutOfRangeError: ``enable_gqa`` with 2-D inputs (no head dim), as PyTorch.

    Differences from PyTorch: tinynet raises its typed errors (``ValueError``/``TypeError``
    subclasses) where PyTorch raises ``RuntimeError``; dropout masks come from tinynet's
    generators (on the GPU's fused kernels, the Philox generator of ``F.dropout``), so they
    differ from PyTorch's for the same seed; with dropout on the fused kernels there is no
    double backward, as with PyTorch's memory-efficient kernel.
    """
    op = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_float(op, name, t)
        if t.array.ndim < 2:
            raise ShapeError(f"{op}: expected query, key and value to be at least 2-D, got {name} of shape {t.shape}")
    qs, ks, vs = query.array.shape, key.array.shape, value.array.shape
    if not query.array.dtype == key.array.dtype == value.array.dtype:
        raise DTypeError(f"{op}: expected query, key and value to have the same dtype, got {query.dtype}, "
                         f"{key.dtype} and {value.dtype}")
    if ks[-1] != qs[-1]:
        raise ShapeError(f"{op}: key's last dim must equal query's ({qs[-1]}), got key of shape {key.shape}")
    if vs[-2] != ks[-2]:
        raise ShapeError(f"{op}: value must have key's sequence length S={ks[-2]} in dim -2, "
                         f"got value of shape {value.shape}")
    p = _check_number(op, "dropout_p", dropout_p)
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"{op}: dropout_p must be in [0, 1], got {dropout_p}")
    scale = 1.0 / math.sqrt(qs[-1]) if scale is None else _check_number(op, "scale", scale)
    groups = (1, 1)
    if enable_gqa:
        if min(query.ndim, key.ndim, value.ndim) < 3:
            raise IndexOutOfRangeError(f"{op}: enable_gqa needs a heads dim (-3), got shapes {query.shape}, "
                                       f"{key.shape} and {value.shape}")
        hq = query.shape[-3]
        for name, t in (("key", key), ("value", value)):
            if t.shape[-3] == 0 or hq % t.shape[-3]:
                raise ShapeError(f"{op}: with enable_gqa the number of {name} heads must divide the number of query "
                                 f"heads {hq}, got {t.shape[-3]}")
        groups = (hq // key.shape[-3], hq // value.shape[-3])
    kb, vb = ks[:-2], vs[:-2]
    if enable_gqa:  # the batch shapes once the key/value heads are repeated
        kb, vb = kb[:-1] + (qs[-3],), vb[:-1] + (qs[-3],)
    try:
        batch = kb if qs[:-2] == kb == vb else numpy.broadcast_shapes(qs[:-2], kb, vb)
    except ValueError:
        raise ShapeError(f"{op}: the batch dims of query {query.shape}, key {key.shape} and value {value.shape} "
                         "do not broadcast") from None
    scores = tuple(batch) + (qs[-2], ks[-2])
    if attn_mask is not None:
        check_tensor(op, "attn_mask", attn_mask)
        if is_causal:
            raise ArgumentError(f"{op}: explicit attn_mask should not be set when is_causal=True")
        if attn_mask.dtype not in (numpy.bool_, numpy.float32, query.dtype):
            raise DTypeError(f"{op}: expected attn_mask dtype to be bool or float32 or to match query dtype "
                             f"{query.dtype}, got {attn_mask.dtype}")
        try:
            ok = numpy.broadcast_shapes(attn_mask.shape, scores) == scores
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(f"{op}: attn_mask of shape {attn_mask.shape} does not broadcast to the attention "
                             f"scores' shape {scores}")
        if attn_mask.dtype != numpy.bool_ and attn_mask.dtype != query.dtype:
            attn_mask = attn_mask.to(query.dtype)  # a float32 mask with float64 inputs, as PyTorch allows
    return ScaledDotProductAttention(scale, bool(is_causal), p, groups).apply(query, key, value, attn_mask)
