"""Fused flash attention through cuDNN's graph API (the cuDNN Frontend's ``sdpa`` and
``sdpa_backward`` operations), for float16 and bfloat16 on the GPU.

cuDNN computes ``O = softmax(Q K^T * scale + bias) V`` tile by tile on the tensor cores
(FlashAttention-2's scheme: Dao, 2023, arXiv:2307.08691) and writes the row statistics
``Stats = max + log(sum(exp))`` in float32 -- the natural-log log-sum-exp that tinynet's
attention op saves for its backward anyway. The backward graph takes ``Q, K, V, O, dO,
Stats`` and gives ``dQ, dK, dV``. Every operand is (B, H, S, D) with any strides whose last
one is 1, so the heads-transposed views a transformer makes are read in place, and ``O`` is
written into (B, S, H, D) storage (returned as its (B, H, S, D) view): the usual
``y.transpose(1, 2).contiguous()`` that follows is then free.

Graphs are built once per configuration (dtype, shapes, strides, scale, causal, bias
layout, determinism, device) and cached with their plan; a configuration cuDNN refuses
(head dim, sequence lengths, layout, cuDNN version) is cached as None and the caller takes
its next backend. Execution shares :mod:`tinynet.kernels.cudnn`'s handle, plan runner and
workspace handling, so it is capturable in CUDA graphs like the convolutions.
"""
import logging

import numpy

from .. import backend, determinism
from ..dtypes import bfloat16
from . import cudnn as _conv
from . import grad_buffers

log = logging.getLogger("tinynet.cudnn")
stats = {"fwd": 0, "bwd": 0, "unsupported": 0}
_cache: dict = {}
_MISSING = object()
_DTYPES = {numpy.dtype(numpy.float16): "HALF", bfloat16: "BFLOAT16"}


def available():
    """True when the cuDNN Frontend loads here (a GPU backend and the wheel)."""
    return _conv._load() is not None


def usable(q, k, v, mask):
    """True when a call may try cuDNN: 4-D half-precision GPU arrays of one batch size with a
    unit last stride, key/value heads dividing the query heads, and a mask of at most 4 dims."""
    if not (backend.is_gpu_array(q) and q.dtype in _DTYPES and q.dtype == k.dtype == v.dtype):
        return False
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    b, hq = q.shape[0], q.shape[1]
    if k.shape[0] != b or v.shape[0] != b or k.shape[1] != v.shape[1] or hq % k.shape[1]:
        return False
    if any(a.strides[-1] != a.itemsize or a.size == 0 for a in (q, k, v)):
        return False
    if mask is not None and mask.ndim > 4:
        return False
    return available()


def _elem_strides(a):
    return [s // a.itemsize for s in a.strides]


def _bshd(cp, shape, dtype):
    """A new (B, H, S, D) array stored as (B, S, H, D)."""
    b, h, s, d = shape
    return cp.empty((b, s, h, d), dtype=dtype).transpose(0, 2, 1, 3)


def _key(kind, dtype, arrays, scale, causal):
    return (kind, dtype, tuple((a.shape, a.strides) if a is not None else None for a in arrays), scale, causal,
            determinism.are_deterministic_algorithms_enabled(), backend.cupy.cuda.runtime.getDevice())


def _graph(cudnn, cp, dtype):
    dt = getattr(cudnn.data_type, _DTYPES[dtype])
    g = cudnn.pygraph(io_data_type=dt, intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT, handle=_conv._handle(cudnn, cp))
    return g, dt


def _tensor(g, name, a, dt):
    return g.tensor(name=name, dim=list(a.shape), stride=_elem_strides(a), data_type=dt)


def _finish(cudnn, g, uids):
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    plan = _conv._Plan()
    plan.graph, plan.uids = g, uids
    plan.index = g._plan_index if hasattr(g, "_plan_index") else 0
    plan.workspace = int(g.get_workspace_size_plan_at_index(plan.index))
    plan.name = g.get_plan_name_at_index(plan.index)
    plan.prepare_fast_path(cudnn)
    return plan


def _cached(key, build):
    hit = _cache.get(key, _MISSING)
    if hit is not _MISSING:
        return hit
    try:
        plan = build()
        log.debug("cudnn sdpa %s: engine %s", key[0], plan.name)
    except Exception as exc:  # cudnnGraphNotSupportedError and friends: the caller takes the next backend
        log.debug("cudnn sdpa %s unsupported (%s: %s)", key[0], type(exc).__name__, exc)
        stats["unsupported"] += 1
        plan = None
    _cache[key] = plan
    return plan


def forward(q, k, v, bias, scale, causal):
    """``(O, Stats)`` of ``softmax(q k^T * scale + bias) v`` (causal: top-left lower triangle),
    or None when cuDNN refuses the configuration. ``bias`` is None or an additive (B|1, H|1,
    L, S) array of ``q``'s dtype. ``O`` is (B, H, L, Dv) in (B, L, H, Dv) storage, ``Stats``
    (B, H, L, 1) float32 (the natural-log log-sum-exp of each score row)."""
    cp, cudnn = backend.cupy, _conv._load()
    b, h, L, _ = q.shape
    o = _bshd(cp, (b, h, L, v.shape[-1]), q.dtype)
    lse = cp.empty((b, h, L, 1), dtype=numpy.float32)

    def build():
        g, dt = _graph(cudnn, cp, q.dtype)
        tq, tk, tv = _tensor(g, "q", q, dt), _tensor(g, "k", k, dt), _tensor(g, "v", v, dt)
        extra = {}
        tb = None
        if bias is not None:
            tb = extra["bias"] = _tensor(g, "bias", bias, dt)
        to, ts = g.sdpa(name="sdpa", q=tq, k=tk, v=tv, generate_stats=True, attn_scale=scale,
                        use_causal_mask=causal, **extra)
        to.set_output(True).set_dim(list(o.shape)).set_stride(_elem_strides(o)).set_data_type(dt)
        ts.set_output(True).set_dim(list(lse.shape)).set_stride(_elem_strides(lse)).set_data_type(
            cudnn.data_type.FLOAT)
        uids = (tq.uid, tk.uid, tv.uid) + ((tb.uid,) if tb is not None else ()) + (to.uid, ts.uid)
        return _finish(cudnn, g, uids)

    plan = _cached(_key("fwd", q.dtype, (q, k, v, bias, o), scale, causal), build)
    if plan is None:
        return None
    ptrs = (q.data.ptr, k.data.ptr, v.data.ptr) + ((bias.data.ptr,) if bias is not None else ()) + \
        (o.data.ptr, lse.data.ptr)
    plan.run(cudnn, cp, ptrs)
    stats["fwd"] += 1
    return o, lse


def backward(q, k, v, o, do, lse, bias, scale, causal):
    """``(dQ, dK, dV)`` of :func:`forward`'s call, or None when cuDNN refuses the configuration.
    Where ``q``, ``k``, ``v`` are views of one array (a fused projection split in three) the
    gradients are views of one new array at the same offsets and strides
    (:func:`tinynet.kernels.grad_buffers.like_base`: the split's backward then joins them
    without a copy); else stored like ``q``, ``k``, ``v`` where those are dense (else
    C-contiguous). ``do`` may have any strides with a unit last one (else it is copied
    contiguous)."""
    cp = backend.cupy
    if do.strides[-1] != do.itemsize:
        do = cp.ascontiguousarray(do)
    shared = grad_buffers.like_base(cp, (q, k, v))
    if shared is not None:
        got = _backward(q, k, v, o, do, lse, bias, scale, causal, shared)
        if got is not None:
            return got
    return _backward(q, k, v, o, do, lse, bias, scale, causal,
                     [cp.empty_like(a) for a in (q, k, v)])  # empty_like keeps a dense permuted layout


def _backward(q, k, v, o, do, lse, bias, scale, causal, grads):
    cp, cudnn = backend.cupy, _conv._load()

    def build():
        g, dt = _graph(cudnn, cp, q.dtype)
        tq, tk, tv = _tensor(g, "q", q, dt), _tensor(g, "k", k, dt), _tensor(g, "v", v, dt)
        to, tdo = _tensor(g, "o", o, dt), _tensor(g, "dO", do, dt)
        ts = g.tensor(name="stats", dim=list(lse.shape), stride=_elem_strides(lse), data_type=cudnn.data_type.FLOAT)
        extra = {}
        tb = None
        if bias is not None:
            tb = extra["bias"] = _tensor(g, "bias", bias, dt)
        if determinism.are_deterministic_algorithms_enabled():
            extra["use_deterministic_algorithm"] = True
        tdq, tdk, tdv = g.sdpa_backward(name="sdpa_backward", q=tq, k=tk, v=tv, o=to, dO=tdo, stats=ts,
                                        attn_scale=scale, use_causal_mask=causal, **extra)
        for t, a in zip((tdq, tdk, tdv), grads):
            t.set_output(True).set_dim(list(a.shape)).set_stride(_elem_strides(a)).set_data_type(dt)
        uids = (tq.uid, tk.uid, tv.uid, to.uid, tdo.uid, ts.uid) + ((tb.uid,) if tb is not None else ()) + \
            (tdq.uid, tdk.uid, tdv.uid)
        return _finish(cudnn, g, uids)

    plan = _cached(_key("bwd", q.dtype, (q, k, v, o, do, lse, bias, grads[0], grads[1], grads[2]), scale, causal),
                   build)
    if plan is None:
        return None
    ptrs = (q.data.ptr, k.data.ptr, v.data.ptr, o.data.ptr, do.data.ptr, lse.data.ptr) + \
        ((bias.data.ptr,) if bias is not None else ()) + tuple(a.data.ptr for a in grads)
    plan.run(cudnn, cp, ptrs)
    stats["bwd"] += 1
    return tuple(grads)


def mask_bias(xp, mask, q, keys):
    """``(bias, rows)``: ``mask`` as cuDNN's additive bias, (B|1, H|1, L, S) in ``q``'s dtype,
    made whole along L and S (cuDNN broadcasts only batch and heads); for a bool mask its False
    entries -inf, and ``rows`` the (B|1, H|1, L, 1) bool array of rows with a key left (None for
    a float mask). A row with no key gets a zero bias (cuDNN then computes a finite row) and
    its output and gradient are zeroed by the caller, as the math path gives zeros there."""
    m = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
    full = (m.shape[0], m.shape[1], q.shape[2], keys)
    rows = None
    if m.dtype == numpy.bool_:
        rows = xp.any(m, axis=-1, keepdims=True)
        m = xp.where(m | ~rows, numpy.float32(0), numpy.float32(-numpy.inf)).astype(q.dtype)
        rows = xp.broadcast_to(rows, full[:3] + (1,))
    elif m.dtype != q.dtype:
        m = m.astype(q.dtype)
    if m.shape != full or not m.flags.c_contiguous:
        m = xp.ascontiguousarray(xp.broadcast_to(m, full))
    return m, rows
