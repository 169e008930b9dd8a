"""Launches of the fused scaled dot-product attention kernels (``attention.cu``), the GPU
path of :class:`tinynet.ops.attention.ScaledDotProductAttention`.

The kernels learn every size and stride from one struct passed by value (``Sdpa`` in
``attention.cu``, :data:`ARGS` here: the same fields in the same order, each 8 bytes):
the device pointers, the broadcast batch shape (all dims but the last two, heads
included), each input's batch strides in elements (0 along a broadcast dim), its row
stride, the sizes, the grouped-query group sizes, the mask kind, the causal flag and the
scale. So inputs broadcast over batch dims, masks broadcast over rows or batches, and
the transposed ``(N, L, H, E) -> (N, H, L, E)`` view of multi-head attention are read
where they are; only an input whose last dim is not contiguous is copied. Nothing is
copied to the device besides the arrays: the struct travels with the launch. Dropout on
the weights is the struct's last fields (:func:`dropout_draw`): the kernels draw each
weight's keep decision from Philox (``philox.cuh``) in the forward and again in backward.

The kernels write their outputs for every entry of the broadcast batch: ``out``
``(*batch, L, Ev)``, the float32 row log-sum-exp ``(*batch, L, 1)`` and, in backward,
``dq (*batch, L, E)``, ``dk (*batch, S, E)``, ``dv (*batch, S, Ev)``; the op sums the
gradients back to the inputs' shapes. When both dq and dk/dv are wanted and a float32 scratch of
``batch x L x S`` (each rounded up to 64) is at most :data:`DS_LIMIT` bytes, the dK/dV kernel
leaves its ``dS^T`` tiles there and dQ is one tile product per key tile (``..._dqs_bwd``) rather
than three with the exponentials (``..._dq_bwd``, which recomputes ``dS``).
Where q, k and v are views of one array (a fused q/k/v
projection split in three, no broadcasting), the gradients are views of one new array at the
same offsets and strides (:func:`tinynet.kernels.grad_buffers.like_base`), so the split's
backward joins them without copies, as after cuDNN's backward (in float32 the GPT's step made
70 copies, 1.36 ms of its 37 ms on an H200, most of them these).
"""
import numpy

from .. import backend
from .. import random as _random
from . import cuda, grad_buffers

TILE = 64       # query rows and keys per block tile (attention.cu)
THREADS = 256   # threads per block
MAXD = 128      # largest head dim E or Ev
NARROW = 64     # largest head dims of the ..._d64 kernels
MAXB = 6        # largest number of batch dims
_GRID_Y = 65535  # CUDA's limit on gridDim.y: more batch entries spill into gridDim.z
DS_LIMIT = 1 << 29  # largest float32 dS^T scratch (bytes) that the backward stores rather than recomputes

MASK_NONE, MASK_BOOL, MASK_ADD = 0, 1, 2
_POINTERS = ("q", "k", "v", "mask", "out", "lse", "gout", "delta", "gq", "gk", "gv", "ds")
_SIZES = ("q_row", "k_row", "v_row", "m_row", "m_col", "g_row", "L", "S", "E", "Ev", "kgroup", "vgroup",
          "mask_kind", "causal", "gstrided", "d_row")
ARGS = numpy.dtype([(n, "<u8") for n in _POINTERS]
                   + [(n, "<i8", (MAXB,)) for n in ("batch", "qb", "kb", "vb", "mb", "gb", "db")]
                   + [(n, "<i8") for n in _SIZES]
                   + [("scale", "<f8"), ("cells", "<u8"), ("seed", "<u8"), ("offset", "<u8"),
                      ("drop_p", "<f8"), ("drop_scale", "<f8")])
_DTYPES = (numpy.dtype(numpy.float16), numpy.dtype(numpy.float32))


def pointer(a):
    """The device address of ``a``'s first element."""
    return a.data.ptr


def batch_shape(q, k, v, groups):
    """The broadcast batch shape of q, k and v, each key/value head standing for
    ``groups`` consecutive query heads."""
    kb, vb = k.shape[:-2], v.shape[:-2]
    if groups != (1, 1):
        kb, vb = kb[:-1] + (kb[-1] * groups[0],), vb[:-1] + (vb[-1] * groups[1],)
    return tuple(numpy.broadcast_shapes(q.shape[:-2], kb, vb))


def usable(q, k, v, mask, groups):
    """True when the kernels take these inputs: CuPy arrays of one dtype, float16 or
    float32; head dims 1..128; no empty dim; at most MAXB batch dims; the mask None, bool or
    of q's dtype."""
    gpu_array = backend._CUPY_NDARRAY
    if not (type(q) is type(k) is type(v) is gpu_array and q.dtype in _DTYPES and q.dtype == k.dtype == v.dtype):
        return False
    if mask is not None and (type(mask) is not gpu_array or mask.dtype not in (numpy.bool_, q.dtype)):
        return False
    batch = batch_shape(q, k, v, groups)
    return (1 <= q.shape[-1] <= MAXD and 1 <= v.shape[-1] <= MAXD and len(batch) <= MAXB
            and q.shape[-2] > 0 and k.shape[-2] > 0 and all(batch))


def _strides(a, ndim):
    """``a``'s strides in elements, left-padded with 0s to ``ndim`` dims; 0 along a dim of
    size 1, which broadcasting repeats."""
    own = [0 if n == 1 else s // a.itemsize for n, s in zip(a.shape, a.strides)]
    return [0] * (ndim - a.ndim) + own


def _last_contiguous(xp, a):
    return a if a.shape[-1] == 1 or a.strides[-1] == a.itemsize else xp.ascontiguousarray(a)


def dropout_draw(p):
    """The kernels' dropout on the weights for probability ``p``: None for ``p == 0``, else
    ``(p, 1 / (1 - p), seed, offset, cells)`` of the next draw of tinynet's GPU Philox generator
    (:func:`tinynet.random.philox_draw`, the one GPU dropout draws from; ``cells`` the device
    pointer of a CUDA-graph capture's [seed, base], else 0). Forward and backward take the same
    draw: the kernels draw each weight's mask again from it."""
    if not p > 0:
        return None
    seed, offset, cells = _random.philox_draw()
    return (p, 0.0 if p >= 1 else 1.0 / (1.0 - p), seed % 2 ** 64, offset, 0 if cells is None else cells.data.ptr)


def _describe(xp, q, k, v, mask, gout, scale, causal, groups, drop=None):
    """The kernels' argument struct for these inputs (output pointers left 0), the batch
    shape, and the arrays it points at: a copy made here must stay alive until the launches
    are queued, or its memory could be handed out again before the kernel reads it."""
    batch = batch_shape(q, k, v, groups)
    ndim = len(batch) + 2
    args = numpy.zeros((), dtype=ARGS)
    args["batch"] = (1,) * (MAXB - len(batch)) + batch
    held = []
    for name, a in (("q", q), ("k", k), ("v", v), ("g", gout)):
        if a is None:
            continue
        a = _last_contiguous(xp, a)
        held.append(a)
        st = _strides(a, ndim)
        args[name + "b"] = [0] * (MAXB - len(batch)) + st[:-2]
        args[name + "_row"] = st[-2]
        args["gout" if name == "g" else name] = pointer(a)
    if mask is not None:
        st = _strides(mask, ndim)
        args["mb"] = [0] * (MAXB - len(batch)) + st[:-2]
        args["m_row"], args["m_col"] = st[-2], st[-1]
        args["mask"] = pointer(mask)
        args["mask_kind"] = MASK_BOOL if mask.dtype == numpy.bool_ else MASK_ADD
    args["L"], args["S"], args["E"], args["Ev"] = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    args["kgroup"], args["vgroup"] = groups
    args["causal"], args["scale"] = int(causal), scale
    if drop is not None:
        args["drop_p"], args["drop_scale"], args["seed"], args["offset"], args["cells"] = drop
    return args, batch, held


def _launch(kernel, rows, batch, args):
    """``kernel`` on a grid of (row tiles, batch entries): one block per TILE rows of ``rows``
    and batch entry."""
    n = int(numpy.prod(batch))
    y = min(n, _GRID_Y)
    grid = ((rows + TILE - 1) // TILE, y, (n + y - 1) // y)
    kernel(grid, (THREADS,), (args[()],))


def _narrow(args):
    """True when both head dims are at most NARROW: the kernels named ``..._d64`` then hold
    accumulators of 64 columns instead of 128 (fewer registers: two blocks per SM for dK/dV)."""
    return max(int(args["E"]), int(args["Ev"])) <= NARROW


def forward(xp, q, k, v, mask, scale, causal, groups, drop=None):
    """``(out, lse)``: the attention output ``(*batch, L, Ev)`` in q's dtype and the float32
    row log-sum-exp ``(*batch, L, 1)`` (+inf for a row that sees no key, and of the weights
    before dropout); ``drop``: :func:`dropout_draw`'s value, or None."""
    args, batch, held = _describe(xp, q, k, v, mask, None, scale, causal, groups, drop)
    L, Ev = q.shape[-2], v.shape[-1]
    out = xp.empty(batch + (L, Ev), dtype=q.dtype)
    lse = xp.empty(batch + (L, 1), dtype=numpy.float32)
    args["out"], args["lse"] = pointer(out), pointer(lse)
    narrow = _narrow(args)
    kernel = cuda.kernel("attention.cu", "tinynet_sdpa_fwd_d64", q.dtype) if narrow else \
        cuda.kernel("attention.cu", "tinynet_sdpa_fwd", q.dtype)
    _launch(kernel, L, batch, args)
    del held  # queued: CuPy's memory pool orders reuse after the launch on the stream
    return out, lse


def backward(xp, q, k, v, mask, out, lse, gout, scale, causal, groups, need_q, need_kv, drop=None):
    """``(dq, dk, dv)`` of the broadcast batch (see the module docstring); ``dq`` is None
    unless ``need_q``, ``dk`` and ``dv`` None unless ``need_kv``. ``out``, ``lse`` and ``drop``
    are what :func:`forward` returned and took."""
    args, batch, held = _describe(xp, q, k, v, mask, gout, scale, causal, groups, drop)
    L, S, E, Ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    rows = int(numpy.prod(batch)) * L  # delta = rowsum(dO * O): one warp per row
    tiles = int(numpy.prod(batch)) * -(-L // TILE) * -(-S // TILE) * TILE * TILE  # of the dS^T scratch
    stored = need_q and need_kv and tiles * 4 <= DS_LIMIT
    scratch = xp.empty((tiles if stored else 0) + rows, dtype=numpy.float32)  # [dS^T tiles, delta]: one allocation
    held.append(scratch)
    args["out"], args["lse"] = pointer(out), pointer(lse)
    args["delta"] = pointer(scratch) + 4 * (tiles if stored else 0)
    args["ds"] = pointer(scratch) if stored else 0  # every tile dQ reads, dK/dV writes
    cuda.launch(cuda.kernel("attention.cu", "tinynet_sdpa_delta_bwd", q.dtype), rows * 32, (args[()],),
                threads=THREADS)
    dq = dk = dv = None
    shared, narrow = None, _narrow(args)
    if need_q and need_kv and groups == (1, 1) and q.shape == k.shape == v.shape and batch == q.shape[:-2]:
        shared = grad_buffers.like_base(xp, (q, k, v))  # q, k, v split from one projection: one buffer
    if shared is not None:
        dq, dk, dv = shared
        st = _strides(dq, len(batch) + 2)
        args["db"] = [0] * (MAXB - len(batch)) + st[:-2]
        args["d_row"], args["gstrided"] = st[-2], 1
    if need_kv:
        if shared is None:
            dk = xp.empty(batch + (S, E), dtype=q.dtype)
            dv = xp.empty(batch + (S, Ev), dtype=q.dtype)
        args["gk"], args["gv"] = pointer(dk), pointer(dv)
        kernel = cuda.kernel("attention.cu", "tinynet_sdpa_dkv_bwd_d64", q.dtype) if narrow else \
            cuda.kernel("attention.cu", "tinynet_sdpa_dkv_bwd", q.dtype)
        _launch(kernel, S, batch, args)
    if need_q:
        if shared is None:
            dq = xp.empty(batch + (L, E), dtype=q.dtype)
        args["gq"] = pointer(dq)
        if args["ds"]:  # dK/dV left dS^T: dQ is one product per key tile
            kernel = cuda.kernel("attention.cu", "tinynet_sdpa_dqs_bwd_d64", q.dtype) if narrow else \
                cuda.kernel("attention.cu", "tinynet_sdpa_dqs_bwd", q.dtype)
        else:
            kernel = cuda.kernel("attention.cu", "tinynet_sdpa_dq_bwd_d64", q.dtype) if narrow else \
                cuda.kernel("attention.cu", "tinynet_sdpa_dq_bwd", q.dtype)
        _launch(kernel, L, batch, args)
    del held  # queued: CuPy's memory pool orders reuse after the launch on the stream
    return dq, dk, dv
