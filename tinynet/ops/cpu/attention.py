"""Scaled dot-product attention on the CPU, its batch cut into slices over tinynet's threads.

The math is the op's own (:class:`tinynet.ops.attention.ScaledDotProductAttention`'s
``_forward``/``_backward``: scores, in-place softmax, products batched over the leading
dims); here the first batch dim is cut into :func:`tinynet.parallel.ranges` slices, each one
item of :func:`tinynet.parallel.parallel_for`, writing its rows of the outputs. Each slice
makes its own (slice, ..., L, S) buffers, which for a GPT layer (16 x 4 heads x 64 x 64)
stay in a core's cache. Taken when the op runs on NumPy arrays without dropout or
grouped-query heads, query, key and value share their batch dims, the first of which is at
least 2, the mask (if any) is shared by every batch entry, and no mask gradient is wanted;
anything else runs the op's code on the whole batch.
"""
import numpy

from ... import parallel
from ..util import is_graph


def parts(op, xp, q, k, v, mask):
    """The (lo, hi) batch slices for ``op``'s arrays, or None when the batch is not split."""
    if (xp is not numpy or op.p != 0 or op.groups != (1, 1) or q.ndim < 3 or q.shape[0] < 2
            or not q.shape[:-2] == k.shape[:-2] == v.shape[:-2] or op.needs_input_grad[3]
            or (mask is not None and mask.ndim >= q.ndim and mask.shape[0] != 1)):
        return None
    rows = q.shape[0]
    # the work of a slice: its (..., L, S) scores pass through ~8 NumPy passes and two products
    scores = q.size // q.shape[-1] * k.shape[-2] * q.itemsize
    got = parallel.ranges(rows, 8 * scores)
    return got if len(got) > 1 else None


def _shared(mask, q):
    """The mask as every slice reads it: without its leading size-1 batch dim when it has q's rank."""
    return mask[0] if mask is not None and mask.ndim == q.ndim else mask


def forward(op, xp, q, k, v, mask, tri):
    """``(out, lse, keep)`` of ``op``'s forward: ``op._forward``, slice by slice where :func:`parts` cuts."""
    cut = parts(op, xp, q, k, v, mask)
    if cut is None:
        return op._forward(xp, q, k, v, mask, tri)
    out = numpy.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    lse = numpy.empty(q.shape[:-1] + (1,), dtype=q.dtype)
    mask = _shared(mask, q)

    def item(i):
        lo, hi = cut[i]
        o, s, _ = op._forward(numpy, q[lo:hi], k[lo:hi], v[lo:hi], mask, tri)
        out[lo:hi], lse[lo:hi] = o, s

    parallel.parallel_for(len(cut), item)
    return out, lse, None


def backward(op, xp, q, k, v, mask, out, lse, keep, tri, gy):
    """``(dq, dk, dv, dmask)`` of ``op``'s backward: ``op._backward``, slice by slice where :func:`parts`
    cuts (never in a ``create_graph`` backward)."""
    cut = None if is_graph(xp) else parts(op, xp, q, k, v, mask)
    if cut is None:
        return op._backward(xp, q, k, v, mask, out, lse, keep, tri, gy)
    need = op.needs_input_grad[:3]
    grads = [numpy.empty(a.shape, dtype=a.dtype) if n else None for a, n in zip((q, k, v), need)]
    mask = _shared(mask, q)

    def item(i):
        lo, hi = cut[i]
        got = op._backward(numpy, q[lo:hi], k[lo:hi], v[lo:hi], mask, out[lo:hi], lse[lo:hi], None, tri,
                           gy[lo:hi])
        for g, a in zip(grads, got):
            if g is not None:
                g[lo:hi] = a

    parallel.parallel_for(len(cut), item)
    return tuple(grads) + (None,)


# a row whose exponentials, shifted by its (L, S) block's maximum, sum to less than this lost
# precision to underflow (its own maximum lies more than ~60 below the block's): softmax_ declines
TINY_TOTAL = 1e-26


def softmax_(p):
    """The scores ``p`` (NumPy, (..., L, S)) turned into the softmax weights in place along the
    last dim, and the row log-sum-exp ``lse`` (..., L, 1); or None, when declined (S == 0, or a
    row with no key or far below its block, see ``TINY_TOTAL``): then ``p`` is spent and the
    caller starts again from the scores.

    Softmax is unchanged by any shift of a row; the usual shift is the row's maximum, which
    NumPy takes at ~1.3 ns an element over rows of 64 (a reduction along a short last axis:
    0.35 ms of a GPT layer's 262k scores). Here each (L, S) block is shifted by its own
    maximum (17 us), and the row sums come from ``einsum`` (20 us, against NumPy's 87 us)."""
    if p.shape[-1] == 0 or p.shape[-2] == 0:
        return None
    lead = p.shape[:-2]
    c = p.reshape(lead + (-1,)).max(axis=-1).reshape(lead + (1, 1))
    if not numpy.isfinite(c).all():  # a block with no key at all
        return None
    p -= c
    numpy.exp(p, out=p)
    total = numpy.einsum("...j->...", p)[..., None]
    if not (total >= TINY_TOTAL).all():
        return None
    p /= total
    lse = numpy.log(total)
    lse += c
    return p, lse
